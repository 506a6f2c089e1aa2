//! Finding the takes under the folders of an import: a recursive walk, in a stable order.
//!
//! - Take files are `.bvh`, `.glb` and `.gltf`, in any letter case. A root may also be a take file.
//! - Hidden entries (a name starting with `.`: `.git`, the temporary files of atomic saves) and the
//!   sidecar tag files (`*.tags.json`) are skipped silently; any other file is listed as ignored.
//! - Symbolic links are followed; a folder reached twice (a link loop, overlapping roots) is
//!   walked once, at its own path when it is also reached through a link (folders reached through
//!   a link are walked after the others), and a file reached twice by one path is listed once. A
//!   take reached by two paths (a link to it, a hard link) is listed at each, with its [`FileId`]:
//!   the import adds it once (`plan_import`), and a sidecar project keeps the clips it has at
//!   either.
//! - A folder that cannot be read is reported and the walk goes on.
//! - Paths are made absolute and normalised lexically (`.` and `..` folded), never resolved through
//!   links, so the sources written into a project stay as the user sees them.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::core::anim::AnimFormat;

/// The suffix of sidecar tag files (see `sidecar.rs`).
pub const SIDECAR_SUFFIX: &str = ".tags.json";

/// A take found by the walk.
#[derive(Debug, Clone, PartialEq)]
pub struct TakeFile {
    /// Absolute, normalised path.
    pub path: PathBuf,
    /// Index of the root it was found under.
    pub root: usize,
    /// Folders from the root's own folder name down to the file's folder (`["mocap", "day1"]` for
    /// `mocap/day1/walk.bvh` under the root `mocap`). Used to tell apart takes with the same name.
    pub folders: Vec<String>,
    pub format: AnimFormat,
    /// Size in bytes.
    pub bytes: u64,
    /// The file itself, however it is reached (`None` where the system cannot say).
    pub id: Option<FileId>,
}

/// What identifies a file however it is reached (through a symbolic link, or by another spelling
/// of its path): its device and inode on Unix, its resolved path elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FileId {
    Inode(u64, u64),
    Resolved(PathBuf),
}

/// The [`FileId`] of the file at `path` (links followed), whose metadata is `meta`.
pub fn file_id(path: &Path, meta: &std::fs::Metadata) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let _ = path;
        Some(FileId::Inode(meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        std::fs::canonicalize(path).ok().map(FileId::Resolved)
    }
}

/// The [`FileId`] of the file at `path`, read from the file system.
pub fn file_id_of(path: &Path) -> Option<FileId> {
    std::fs::metadata(path)
        .ok()
        .and_then(|meta| file_id(path, &meta))
}

impl TakeFile {
    /// The file name without its extension.
    pub fn stem(&self) -> String {
        self.path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// What the walk found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Walk {
    /// Absolute, normalised roots.
    pub roots: Vec<PathBuf>,
    /// Takes, sorted by root, then path.
    pub files: Vec<TakeFile>,
    /// Files that are not takes (not hidden, not sidecars).
    pub ignored: Vec<PathBuf>,
    /// Sidecar tag files (`*.tags.json`) found beside the takes.
    pub sidecars: Vec<PathBuf>,
    /// Folders or roots that could not be read, with the reason.
    pub problems: Vec<String>,
}

impl Walk {
    /// Total size of the takes in bytes.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes).sum()
    }
}

/// `path` made absolute (against the current folder) and normalised lexically.
pub fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    normalize(&joined)
}

/// Folds `.` and `..` components without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn is_hidden(name: &str) -> bool {
    name.starts_with('.')
}

/// Walks `roots` (folders or take files).
pub fn find_takes(roots: &[PathBuf]) -> Walk {
    find_takes_until(roots, &AtomicBool::new(false))
}

/// A folder to walk: the index of its root, its path, and the folders from the root's own name
/// down to it.
type Pending = (usize, PathBuf, Vec<String>);

/// What the walk keeps while it goes.
struct Walker {
    walk: Walk,
    seen_dirs: HashSet<PathBuf>,
    seen_files: HashSet<PathBuf>,
    /// Folders to walk, depth-first (an explicit stack: deep trees cannot overflow).
    stack: Vec<Pending>,
    /// Folders reached through a symbolic link, walked after every other folder of every root
    /// (first found, first walked).
    linked: Vec<Pending>,
}

/// [`find_takes`] that stops early (with what it found so far) once `cancel` is set.
pub fn find_takes_until(roots: &[PathBuf], cancel: &AtomicBool) -> Walk {
    let mut w = Walker {
        walk: Walk {
            roots: roots.iter().map(|r| absolute(r)).collect(),
            ..Walk::default()
        },
        seen_dirs: HashSet::new(),
        seen_files: HashSet::new(),
        stack: Vec::new(),
        linked: Vec::new(),
    };
    // Depth-first, entries sorted by name. Folders reached through a symbolic link wait until
    // every other folder of every root is walked: a folder reached both ways (under one root or
    // two) is walked once, at its own path, which then names its takes in the project.
    for (index, root) in w.walk.roots.clone().iter().enumerate() {
        let meta = match std::fs::metadata(root) {
            Ok(m) => m,
            Err(e) => {
                w.walk
                    .problems
                    .push(format!("{}: cannot read: {e}", root.display()));
                continue;
            }
        };
        let root_name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if meta.is_file() {
            match AnimFormat::from_path(root) {
                Some(format) if w.seen_files.insert(root.clone()) => w.walk.files.push(TakeFile {
                    path: root.clone(),
                    root: index,
                    folders: root
                        .parent()
                        .and_then(Path::file_name)
                        .map(|n| vec![n.to_string_lossy().into_owned()])
                        .unwrap_or_default(),
                    format,
                    bytes: meta.len(),
                    id: file_id(root, &meta),
                }),
                Some(_) => {}
                None => w.walk.problems.push(format!(
                    "{}: not a take: expected a folder or a .bvh, .glb or .gltf file",
                    root.display()
                )),
            }
            continue;
        }
        w.stack.push((index, root.clone(), vec![root_name]));
        while let Some(next) = w.stack.pop() {
            if cancel.load(Ordering::Relaxed) {
                return w.walk;
            }
            w.folder(next);
        }
    }
    while let Some(next) = w.stack.pop().or_else(|| w.linked.pop()) {
        if cancel.load(Ordering::Relaxed) {
            return w.walk;
        }
        w.folder(next);
    }
    let mut walk = w.walk;
    // In walk order as if no folder waited for its links: in each folder its takes by name, then
    // each subfolder's by name (the folders reached through a link were walked last).
    walk.files.sort_by_cached_key(|f| {
        let mut k: Vec<(u8, String)> = f.folders.iter().skip(1).map(|d| (1, d.clone())).collect();
        let name = f.path.file_name().map(|n| n.to_string_lossy().into_owned());
        k.push((0, name.unwrap_or_default()));
        (f.root, k)
    });
    walk
}

impl Walker {
    /// Lists one folder: its takes, sidecars and other files, its subfolders pushed to be walked
    /// next and those reached through a link kept for the end.
    fn folder(&mut self, (index, dir, folders): Pending) {
        let key = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
        if !self.seen_dirs.insert(key) {
            return;
        }
        let walk = &mut self.walk;
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                walk.problems
                    .push(format!("{}: cannot read the folder: {e}", dir.display()));
                return;
            }
        };
        // With the kind of each entry as the folder listing gives it (no `stat` on most file
        // systems): a sidecar or another file that is not a take needs no `stat` of its own.
        let mut names: Vec<(String, PathBuf, Option<std::fs::FileType>)> = Vec::new();
        for entry in entries {
            match entry {
                Ok(e) => names.push((
                    e.file_name().to_string_lossy().into_owned(),
                    e.path(),
                    e.file_type().ok(),
                )),
                Err(e) => walk
                    .problems
                    .push(format!("{}: cannot list an entry: {e}", dir.display())),
            }
        }
        names.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        let mut subdirs = Vec::new();
        for (name, path, kind) in names {
            if is_hidden(&name) {
                continue;
            }
            let format = AnimFormat::from_path(&path);
            // A take needs its size, a symbolic link (or an entry of unknown kind) its target's
            // kind: those are read with `stat`.
            let plain_file = kind.is_some_and(|k| k.is_file());
            let meta = if plain_file && format.is_none() {
                None
            } else {
                match std::fs::metadata(&path) {
                    Ok(m) => Some(m),
                    Err(e) => {
                        walk.problems
                            .push(format!("{}: cannot read: {e}", path.display()));
                        continue;
                    }
                }
            };
            if meta.as_ref().is_some_and(std::fs::Metadata::is_dir) {
                let mut f = folders.clone();
                f.push(name);
                if kind.is_some_and(|k| k.is_symlink()) {
                    self.linked.insert(0, (index, path, f));
                } else {
                    subdirs.push((index, path, f));
                }
            } else if meta.as_ref().is_some_and(|m| !m.is_file())
                && (format.is_some() || name.to_ascii_lowercase().ends_with(SIDECAR_SUFFIX))
            {
                // A pipe, socket or device with a take's or a sidecar's name: reading it would
                // wait for a writer forever (the scan, the open of a sidecar project).
                walk.problems.push(format!(
                    "{}: not a regular file (a pipe, a socket or a device): skipped",
                    path.display()
                ));
            } else if let Some((format, meta)) = format.zip(meta) {
                if self.seen_files.insert(path.clone()) {
                    walk.files.push(TakeFile {
                        id: file_id(&path, &meta),
                        path,
                        root: index,
                        folders: folders.clone(),
                        format,
                        bytes: meta.len(),
                    });
                }
            } else if name.to_ascii_lowercase().ends_with(SIDECAR_SUFFIX) {
                walk.sidecars.push(path);
            } else {
                walk.ignored.push(path);
            }
        }
        // Pushed in reverse so the first folder is walked first.
        self.stack.extend(subdirs.into_iter().rev());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_folds_dots() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("a/../../b")), PathBuf::from("../b"));
        assert!(absolute(Path::new("x")).is_absolute());
    }

    /// A pipe named like a take or a sidecar is skipped and named, not read (reading it waited
    /// for a writer forever); other pipes are ignored as any other file.
    #[cfg(unix)]
    #[test]
    fn pipes_named_like_takes_are_skipped() {
        let dir = std::env::temp_dir().join(format!("taglane-walk-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["take.bvh", "take.bvh.tags.json", "other.txt"] {
            let status = std::process::Command::new("mkfifo")
                .arg(dir.join(name))
                .status()
                .unwrap();
            assert!(status.success());
        }
        std::fs::write(dir.join("real.bvh"), "HIERARCHY\n").unwrap();
        let walk = find_takes(std::slice::from_ref(&dir));
        let names: Vec<String> = walk
            .files
            .iter()
            .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["real.bvh"]);
        assert!(walk.sidecars.is_empty(), "{:?}", walk.sidecars);
        assert_eq!(walk.problems.len(), 2, "{:?}", walk.problems);
        assert!(
            walk.problems
                .iter()
                .all(|p| p.contains("not a regular file"))
        );
        assert_eq!(walk.ignored, [dir.join("other.txt")]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
