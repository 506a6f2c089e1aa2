//! File helpers shared by every format: atomic saves.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically: the data goes to a temporary file in the same folder, is
/// flushed to disk, then renamed over `path`. A reader (or a crash) sees either the old file or the
/// new one, never a mix. When `keep_backup` is set and `path` exists, the old file is first copied to
/// `path` + `.bak` (replacing an older backup). Temporary files of earlier saves of the same file
/// that were killed mid-write (`.NAME.PID.tmp` of a process that is gone) are deleted afterwards.
pub fn write_atomic(path: &Path, bytes: &[u8], keep_backup: bool) -> io::Result<()> {
    // Through a symbolic link: the file it names is replaced, and the link stays (as an editor
    // saves), instead of the link being replaced by a file.
    let target = link_target(path)?;
    let path = target.as_deref().unwrap_or(path);
    // The file it replaces keeps its permissions (a private project stays private, and so does
    // its backup), and a read-only one is not replaced: the user made it so.
    let (dir, file_name, perms) = save_place(path)?;
    if keep_backup && path.exists() {
        let backup = backup_path(path);
        // Copied in pieces, not read whole: a project of hundreds of megabytes is not held
        // twice in memory for its backup.
        write_via_temp(&dir, &file_name, &backup, perms.clone(), |f| {
            io::copy(&mut fs::File::open(path)?, f).map(|_| ())
        })?;
    }
    write_via_temp(&dir, &file_name, path, perms, |f| f.write_all(bytes))?;
    remove_stale_temps(&dir, &file_name);
    Ok(())
}

/// Where a save of `path` (links already followed) writes: its folder, its file name, and the
/// permissions of the file it replaces (none when there is none yet); an error when that file is
/// read-only.
fn save_place(path: &Path) -> io::Result<(PathBuf, String, Option<fs::Permissions>)> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?
        .to_string_lossy()
        .into_owned();
    let meta = fs::metadata(path).ok();
    // A folder, a pipe or a device is not replaced by a file (reading a pipe for the backup
    // waited forever for a writer).
    if meta.as_ref().is_some_and(|m| !m.is_file()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not a regular file (a folder, a pipe or a device); expected a file to replace or a new name",
                path.display()
            ),
        ));
    }
    let perms = meta.map(|m| m.permissions());
    if perms.as_ref().is_some_and(fs::Permissions::readonly) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is read-only; expected a writable file (make it writable to save over it)",
                path.display()
            ),
        ));
    }
    Ok((dir, file_name, perms))
}

/// Checks, without changing anything, that [`write_atomic`] could replace or create `path`: the
/// file (through links) is not read-only, and its folder exists and takes a new file (one is
/// created and removed). For a save of several files that writes this one last: the others are
/// not written when this one would fail.
pub fn check_writable(path: &Path) -> io::Result<()> {
    let target = link_target(path)?;
    let path = target.as_deref().unwrap_or(path);
    let (dir, name, _) = save_place(path)?;
    let probe = dir.join(format!(".{name}.{}.check.tmp", std::process::id()));
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(f) => {
            drop(f);
            let _ = fs::remove_file(&probe);
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!("{}: cannot write a file in this folder: {e}", dir.display()),
        )),
    }
}

/// The file `path` names through symbolic links (itself when it is none, or when the chain
/// cannot be followed): a project opened through a link has its sources relative to the folder
/// of the file the link names, where its saves go.
pub fn resolve_link(path: &Path) -> PathBuf {
    match link_target(path) {
        Ok(Some(target)) => target,
        _ => path.to_path_buf(),
    }
}

/// The file a symbolic link at `path` names, following links up to 40 deep (relative targets
/// from the link's folder); `None` when `path` is no link. A loop, or a longer chain, is an
/// error (nothing is written: replacing a link in the middle would save somewhere unexpected).
fn link_target(path: &Path) -> io::Result<Option<PathBuf>> {
    let is_link = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    let mut at = path.to_path_buf();
    for hop in 0..40 {
        if !is_link(&at) {
            return Ok((hop > 0).then_some(at));
        }
        let to = fs::read_link(&at)?;
        at = match at.parent() {
            Some(dir) if to.is_relative() => dir.join(to),
            _ => to,
        };
    }
    Err(io::Error::other(format!(
        "{}: too many levels of symbolic links (a loop?)",
        path.display()
    )))
}

/// How long a save waits for another taglane process's save of a project in the same folder.
const SAVE_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Keeps other taglane processes from saving a project in the same folder while this one reads
/// what is on disk, merges it and writes (two imports into one project at once, an import while
/// the app saves): without it, both could read the same file and the second rename would drop
/// what the first wrote. An advisory lock (`flock`) of the folder on Unix, of a lock file
/// (`.NAME.lock`) beside the project elsewhere; released when dropped, or when the process ends.
/// Programs other than taglane ignore it.
#[derive(Debug)]
pub struct SaveLock {
    _held: Option<fs::File>,
}

/// Takes the [`SaveLock`] of the project file `path`, waiting up to 20 s for another taglane
/// process's save; an error when that save takes longer. A folder or file system where locks do
/// not work saves without one, as before (the merge on save still sees all but a save made in
/// the same instant).
pub fn lock_for_save(path: &Path) -> io::Result<SaveLock> {
    // The folder the save writes into: a project reached through a link is saved where the
    // link points (`write_atomic`), and every session must lock that one folder.
    let target = link_target(path).ok().flatten();
    let path = target.as_deref().unwrap_or(path);
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    #[cfg(unix)]
    let opened = fs::File::open(&dir);
    #[cfg(not(unix))]
    let opened = {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(format!(".{}.lock", name.unwrap_or_default())))
    };
    let Ok(file) = opened else {
        // No folder: the save itself reports it.
        return Ok(SaveLock { _held: None });
    };
    let start = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(SaveLock { _held: Some(file) }),
            Err(fs::TryLockError::WouldBlock) if start.elapsed() < SAVE_LOCK_WAIT => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!(
                        "another taglane process has been saving a project in {} for {} s; try again",
                        dir.display(),
                        SAVE_LOCK_WAIT.as_secs()
                    ),
                ));
            }
            // Locks not supported here: save without one.
            Err(fs::TryLockError::Error(_)) => return Ok(SaveLock { _held: None }),
        }
    }
}

/// The leftover temporaries of dead saves found in each folder, read once per folder and process:
/// a batch that saves thousands of files into one folder (exported clips, compressed files,
/// caches) read the whole folder after every file before.
fn leftovers(dir: &Path) -> std::sync::MutexGuard<'static, LeftoverCache> {
    static CACHE: std::sync::OnceLock<std::sync::Mutex<LeftoverCache>> = std::sync::OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if !cache.contains_key(dir) {
        let found = scan_leftovers(dir);
        cache.insert(dir.to_path_buf(), found);
    }
    cache
}

/// Folder -> (file name, temporary) of the dead saves found there.
type LeftoverCache = std::collections::HashMap<PathBuf, Vec<(String, PathBuf)>>;

/// The `.{NAME}.PID.tmp` files in `dir` whose process is gone (see [`remove_stale_temps`]).
fn scan_leftovers(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut out = Vec::new();
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name();
        let Some((file, pid)) = name
            .to_str()
            .and_then(|n| n.strip_prefix('.'))
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .and_then(|rest| rest.rsplit_once('.'))
        else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if pid != me && !process_may_be_running(pid, &e.path()) {
            out.push((file.to_owned(), e.path()));
        }
    }
    out
}

/// Deletes the `.{file_name}.PID.tmp` files in `dir` left by saves that did not finish: those of
/// processes that no longer run (on Linux, no `/proc/PID`), or, where that cannot be told, older
/// than an hour. A save in progress in another live process is never touched. The folder is read
/// once per process (the first save into it); a save that dies later is cleaned up by the next run.
fn remove_stale_temps(dir: &Path, file_name: &str) {
    let mut cache = leftovers(dir);
    let Some(found) = cache.get_mut(dir) else {
        return;
    };
    let stem = temp_stem(file_name);
    found.retain(|(file, temp)| {
        if *file == *stem {
            let _ = fs::remove_file(temp);
            false
        } else {
            true
        }
    });
}

fn process_may_be_running(pid: u32, temp: &Path) -> bool {
    let proc_root = Path::new("/proc");
    if proc_root.join("self").exists() {
        return proc_root.join(pid.to_string()).exists();
    }
    let age = fs::metadata(temp)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok());
    age.is_none_or(|a| a.as_secs() < 3600)
}

/// A file name safe on every platform for a clip or tag name: letters, digits, `-`, `_` and `.`
/// kept, everything else replaced by `_`.
pub fn sanitize_file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The files `dir/NAME{suffix}` of one export file per name (`names` in order), each name
/// through [`sanitize_file_name`] and made unique ignoring case (`a b` and `a_b`, or `Walk` and
/// `walk` on a case-insensitive disk, never share a file: the later gets `_2`, ...).
pub fn export_files(dir: &Path, names: &[&str], suffix: &str) -> Vec<PathBuf> {
    let mut used = std::collections::HashSet::new();
    names
        .iter()
        .map(|name| {
            let stem = crate::core::names::unique_name(&sanitize_file_name(name), "_", |s| {
                used.contains(&s.to_lowercase())
            });
            used.insert(stem.to_lowercase());
            dir.join(format!("{stem}{suffix}"))
        })
        .collect()
}

/// Why an export of one file per clip into a folder did not write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportFilesError {
    /// `count` of its files exist already (for example `first`), and replacing was not asked for.
    Exists { count: usize, first: PathBuf },
    /// Any other failure, naming its file.
    Other(String),
}

impl std::fmt::Display for ExportFilesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exists { count, first } => write!(
                f,
                "{count} file(s) exist already, for example {}; expected a folder without them, \
                 or replacing allowed",
                first.display()
            ),
            Self::Other(e) => f.write_str(e),
        }
    }
}

/// [`ExportFilesError::Exists`] when any of `paths` exists (a folder, a pipe or a link counts).
pub fn existing_files<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Option<ExportFilesError> {
    let mut count = 0;
    let mut first = None;
    for p in paths {
        if fs::symlink_metadata(p).is_ok() {
            count += 1;
            first.get_or_insert_with(|| p.to_path_buf());
        }
    }
    first.map(|first| ExportFilesError::Exists { count, first })
}

/// Writes `files` (path and bytes) each atomically, into the folder of the first (created if
/// needed). Unless `replace`, nothing is written when any of them exists (a folder, a pipe or a
/// link to one counts as existing too). Returns the paths written.
pub fn write_export_files(
    files: &[(PathBuf, Vec<u8>)],
    replace: bool,
) -> Result<Vec<PathBuf>, ExportFilesError> {
    if let Some(dir) = files.first().and_then(|(p, _)| p.parent())
        && !dir.as_os_str().is_empty()
    {
        fs::create_dir_all(dir)
            .map_err(|e| ExportFilesError::Other(format!("{}: {e}", dir.display())))?;
    }
    if !replace && let Some(e) = existing_files(files.iter().map(|(p, _)| p.as_path())) {
        return Err(e);
    }
    let mut written = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        write_atomic(path, bytes, false)
            .map_err(|e| ExportFilesError::Other(format!("{}: {e}", path.display())))?;
        written.push(path.clone());
    }
    Ok(written)
}

/// How a project stores the path of a file it refers to: relative to the project's folder `base`
/// (with `/` separators) when the file is inside it, absolute otherwise.
pub fn project_relative(path: &Path, base: Option<&Path>) -> String {
    let abs = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if let Some(base) = base.and_then(|b| b.canonicalize().ok())
        && let Ok(rel) = abs.strip_prefix(&base)
    {
        return rel.to_string_lossy().replace('\\', "/");
    }
    abs.to_string_lossy().into_owned()
}

/// Before a replacement that keeps `path`'s old content as `path.bak` (a command's
/// `--overwrite`): a `path.bak` already there is moved to the first free `path.bak.N` (N from 2),
/// so that replacing a file twice does not lose the first backup (the original). Returns where it
/// went; `None` when there was none (or `path` does not exist, so no backup will be made).
/// Through a symbolic link, the backup is the one of the file it names, where [`write_atomic`]
/// keeps it.
pub fn shift_backup(path: &Path) -> io::Result<Option<PathBuf>> {
    let target = link_target(path)?;
    let path = target.as_deref().unwrap_or(path);
    let backup = backup_path(path);
    if !path.exists() || fs::symlink_metadata(&backup).is_err() {
        return Ok(None);
    }
    for n in 2u32..=100_000 {
        let mut s = backup.as_os_str().to_owned();
        s.push(format!(".{n}"));
        let to = PathBuf::from(s);
        if fs::symlink_metadata(&to).is_err() {
            fs::rename(&backup, &to)?;
            return Ok(Some(to));
        }
    }
    Err(io::Error::other(format!(
        "{}: no free backup name up to .bak.100000",
        path.display()
    )))
}

/// The backup path used by [`write_atomic`]: `name.ext.bak`.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".bak");
    PathBuf::from(s)
}

/// The name part of the temporary file of a save of `file_name`: the name itself, or, where
/// `.NAME.PID.tmp` would pass the 255 bytes a file name may have (a legal name of 250 bytes),
/// its first bytes and a hash of the whole.
fn temp_stem(file_name: &str) -> std::borrow::Cow<'_, str> {
    // '.' + name + '.' + a 10-digit process id + ".tmp"
    const ROOM: usize = 255 - 16;
    if file_name.len() <= ROOM {
        return file_name.into();
    }
    let mut cut = ROOM - 17;
    while !file_name.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in file_name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{}~{h:016x}", &file_name[..cut]).into()
}

/// Writes `target` through a temporary file in `dir` that `fill` fills: synced, given `perms`, then
/// renamed over `target` (the temporary file is removed on any failure).
fn write_via_temp(
    dir: &Path,
    file_name: &str,
    target: &Path,
    perms: Option<fs::Permissions>,
    fill: impl FnOnce(&mut fs::File) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        temp_stem(file_name),
        std::process::id()
    ));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        fill(&mut file)?;
        file.sync_all()?;
        drop(file);
        if let Some(p) = perms {
            fs::set_permissions(&tmp, p)?;
        }
        fs::rename(&tmp, target)?;
        // Make the rename itself durable where the platform allows opening a directory.
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_files_never_share_a_file() {
        let dir = Path::new("out");
        let files = export_files(dir, &["a b", "a_b", "Walk", "walk", "Fox.glb#Run"], ".tlc");
        let names: Vec<String> = files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "a_b.tlc",
                "a_b_2.tlc",
                "Walk.tlc",
                "walk_2.tlc",
                "Fox.glb_Run.tlc"
            ]
        );
        assert!(files.iter().all(|p| p.parent() == Some(dir)));
    }

    #[test]
    fn an_export_replaces_files_only_when_asked() {
        let dir = std::env::temp_dir().join(format!("taglane-io-export-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let files = vec![
            (dir.join("sub/a.tlc"), b"a1".to_vec()),
            (dir.join("sub/b.tlc"), b"b1".to_vec()),
        ];
        // The folder is made; both written.
        assert_eq!(write_export_files(&files, false).unwrap().len(), 2);
        // Again without replacing: refused, naming a file, nothing touched.
        let again = vec![
            (dir.join("sub/a.tlc"), b"a2".to_vec()),
            (dir.join("sub/b.tlc"), b"b2".to_vec()),
            (dir.join("sub/c.tlc"), b"c2".to_vec()),
        ];
        let e = write_export_files(&again, false).unwrap_err();
        assert_eq!(
            e,
            ExportFilesError::Exists {
                count: 2,
                first: dir.join("sub/a.tlc")
            }
        );
        assert!(e.to_string().contains("a.tlc"), "{e}");
        assert_eq!(fs::read(dir.join("sub/a.tlc")).unwrap(), b"a1");
        assert!(!dir.join("sub/c.tlc").exists());
        // Asked to replace: all three written.
        assert_eq!(write_export_files(&again, true).unwrap().len(), 3);
        assert_eq!(fs::read(dir.join("sub/b.tlc")).unwrap(), b"b2");
        // A folder where a file would go is an error naming it, even when replacing.
        fs::create_dir_all(dir.join("sub/d.tlc")).unwrap();
        let e = write_export_files(&[(dir.join("sub/d.tlc"), b"d".to_vec())], true).unwrap_err();
        assert!(e.to_string().contains("d.tlc"), "{e}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_save_through_a_link_replaces_the_file_it_names_and_keeps_the_link() {
        let dir = std::env::temp_dir().join(format!("taglane-io-link-{}", std::process::id()));
        fs::create_dir_all(dir.join("real")).unwrap();
        let file = dir.join("real/a.tlc");
        fs::write(&file, b"old").unwrap();
        let link = dir.join("link.tlc");
        std::os::unix::fs::symlink("real/a.tlc", &link).unwrap();
        write_atomic(&link, b"new", false).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&file).unwrap(), b"new");
        // A link to a file not there yet: the file is made where the link points.
        let dangling = dir.join("d.tlc");
        std::os::unix::fs::symlink(dir.join("real/b.tlc"), &dangling).unwrap();
        write_atomic(&dangling, b"b", false).unwrap();
        assert_eq!(fs::read(dir.join("real/b.tlc")).unwrap(), b"b");
        // The save lock of a project reached through the link is the lock of the folder the
        // save writes into: the target's.
        let held = lock_for_save(&link).unwrap();
        let target_dir = fs::File::open(dir.join("real")).unwrap();
        assert!(matches!(
            target_dir.try_lock(),
            Err(fs::TryLockError::WouldBlock)
        ));
        drop(held);
        target_dir.try_lock().unwrap();
        drop(target_dir);
        // A loop: an error, and both links left as they were.
        let (x, y) = (dir.join("x.tlc"), dir.join("y.tlc"));
        std::os::unix::fs::symlink("y.tlc", &x).unwrap();
        std::os::unix::fs::symlink("x.tlc", &y).unwrap();
        let e = write_atomic(&x, b"loop", false).unwrap_err();
        assert!(e.to_string().contains("too many levels"), "{e}");
        for l in [&x, &y] {
            assert!(fs::symlink_metadata(l).unwrap().file_type().is_symlink());
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn writes_replaces_and_keeps_one_backup() {
        let dir = std::env::temp_dir().join(format!("taglane-io-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.json");
        write_atomic(&path, b"one", true).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"one");
        assert!(!backup_path(&path).exists());
        write_atomic(&path, b"two", true).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(fs::read(backup_path(&path)).unwrap(), b"one");
        write_atomic(&path, b"three", false).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"three");
        assert_eq!(fs::read(backup_path(&path)).unwrap(), b"one");
        // No temporary files are left behind.
        let leftovers: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A file name of 250 bytes (legal: at most 255) saves, though `.NAME.PID.tmp` would be too
    /// long: the temporary name is cut, with a hash of the whole name.
    #[test]
    fn a_name_near_the_length_limit_saves() {
        let dir = std::env::temp_dir().join(format!("taglane-io-long-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let name = format!("{}.tlc", "é".repeat(123));
        assert_eq!(name.len(), 250);
        let path = dir.join(&name);
        write_atomic(&path, b"one", false).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"one");
        let stem = temp_stem(&name);
        assert!(stem.len() + 16 <= 255 && stem.len() > 200, "{}", stem.len());
        assert_ne!(temp_stem(&format!("{}x.tlc", "é".repeat(123))), stem);
        assert_eq!(temp_stem("a.json"), "a.json");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "no temporary left");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn leftover_temps_of_dead_saves_are_removed_by_the_next_save() {
        let dir = std::env::temp_dir().join(format!("taglane-io-stale-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.taglane.json");
        // A process that cannot exist (pid_max is at most 2^22 on Linux), and pid 1 (init), which
        // always runs.
        let dead = dir.join(".p.taglane.json.4194305.tmp");
        let live = dir.join(".p.taglane.json.1.tmp");
        let other = dir.join(".q.taglane.json.4194305.tmp");
        for f in [&dead, &live, &other] {
            fs::write(f, b"half").unwrap();
        }
        write_atomic(&path, b"whole", true).unwrap();
        assert!(!dead.exists(), "the dead save's temp is removed");
        if Path::new("/proc/1").exists() {
            assert!(live.exists(), "a live process's temp is kept");
        }
        assert!(other.exists(), "another file's temp is not ours to remove");
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A pipe, or a folder, where the file would go: refused at once (reading a pipe for the
    /// backup waited forever for a writer).
    #[cfg(unix)]
    #[test]
    fn a_save_over_a_pipe_or_a_folder_is_refused() {
        let dir = std::env::temp_dir().join(format!("taglane-io-fifo-{}", std::process::id()));
        fs::create_dir_all(dir.join("folder.json")).unwrap();
        let fifo = dir.join("p.bvh");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = write_atomic(&fifo, b"x", true).unwrap_err().to_string();
            assert!(e.contains("not a regular file"), "{e}");
            assert!(check_writable(&fifo).is_err());
        }
        let e = write_atomic(&dir.join("folder.json"), b"x", true).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(dir.join("folder.json").is_dir());
        fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn failure_leaves_the_old_file() {
        let dir = std::env::temp_dir().join(format!("taglane-io-missing-{}", std::process::id()));
        let path = dir.join("nested").join("a.json");
        assert!(write_atomic(&path, b"x", true).is_err());
        assert!(!path.exists());
    }

    #[test]
    fn a_second_replacement_keeps_the_first_backup() {
        let dir = std::env::temp_dir().join(format!("taglane-shift-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let f = dir.join("take.bvh");
        fs::write(&f, "original").unwrap();
        assert_eq!(shift_backup(&f).unwrap(), None);
        write_atomic(&f, b"first", true).unwrap();
        assert_eq!(shift_backup(&f).unwrap(), Some(dir.join("take.bvh.bak.2")));
        write_atomic(&f, b"second", true).unwrap();
        assert_eq!(
            fs::read_to_string(dir.join("take.bvh.bak.2")).unwrap(),
            "original"
        );
        assert_eq!(
            fs::read_to_string(dir.join("take.bvh.bak")).unwrap(),
            "first"
        );
        assert_eq!(shift_backup(&f).unwrap(), Some(dir.join("take.bvh.bak.3")));
        fs::remove_dir_all(&dir).ok();
    }

    /// `--overwrite` through a link: the backups are those of the file it names, where
    /// `write_atomic` keeps them, so a second replacement keeps the original too.
    #[cfg(unix)]
    #[test]
    fn a_second_replacement_through_a_link_keeps_the_first_backup() {
        let dir = std::env::temp_dir().join(format!("taglane-shift-link-{}", std::process::id()));
        fs::create_dir_all(dir.join("real")).unwrap();
        let f = dir.join("real/p.json");
        let link = dir.join("out.json");
        fs::write(&f, "original").unwrap();
        std::os::unix::fs::symlink("real/p.json", &link).unwrap();
        assert_eq!(shift_backup(&link).unwrap(), None);
        write_atomic(&link, b"first", true).unwrap();
        assert_eq!(
            shift_backup(&link).unwrap(),
            Some(dir.join("real/p.json.bak.2"))
        );
        write_atomic(&link, b"second", true).unwrap();
        let read = |p: &str| fs::read_to_string(dir.join(p)).unwrap();
        assert_eq!(read("real/p.json.bak.2"), "original");
        assert_eq!(read("real/p.json.bak"), "first");
        assert_eq!(read("out.json"), "second");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        fs::remove_dir_all(&dir).ok();
    }

    #[cfg(unix)]
    #[test]
    fn a_save_keeps_the_files_permissions_and_refuses_a_read_only_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("taglane-io-perm-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let f = dir.join("p.taglane.json");
        fs::write(&f, "old").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&f, b"new", true).unwrap();
        assert_eq!(
            fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            fs::metadata(backup_path(&f)).unwrap().permissions().mode() & 0o777,
            0o600
        );
        fs::set_permissions(&f, fs::Permissions::from_mode(0o444)).unwrap();
        let e = write_atomic(&f, b"newer", false).unwrap_err();
        assert!(e.to_string().contains("read-only"), "{e}");
        assert_eq!(fs::read_to_string(&f).unwrap(), "new");
        fs::remove_dir_all(&dir).ok();
    }
}
