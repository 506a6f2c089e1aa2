//! Autosave and crash recovery, one autosave per project.
//!
//! While a project has unsaved changes it is written every 30 s to an autosave file of its own in
//! the recovery folder (`autosave-KEY-SESSION.taglane.json`, with `autosave-KEY-SESSION.meta.json`
//! saying which project it belongs to, when, and how many edits were unsaved). KEY is `demo`,
//! `untitled` or a hash of the project's path; SESSION names the running app (process and start
//! time). A save, a clean quit or "Don't save" deletes that project's autosave of this session,
//! and only that one.
//!
//! An autosave left by another session (one that did not end cleanly) is offered only for its own
//! project: when that project is opened (at start-up or by Open), the app asks whether to recover it
//! into that project. Declined ("Later"), or of another project, it is kept for later and listed
//! under File > Recover autosave: this session never writes over it or deletes it, even while it
//! edits, saves or quits the same project. Only Recover (once this session's own autosave holds the
//! recovered work) and Discard delete it.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::core::tags::TagDocument;
use crate::ui::project::Project;

/// Which project an autosave belongs to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Origin {
    /// The embedded demo project.
    Demo,
    /// A project never saved.
    Untitled,
    /// A project file.
    File(PathBuf),
}

impl Origin {
    /// The origin of `project`.
    pub fn of(project: &Project) -> Self {
        match (&project.path, project.is_demo) {
            (Some(p), _) => Origin::File(p.canonicalize().unwrap_or_else(|_| p.clone())),
            (None, true) => Origin::Demo,
            (None, false) => Origin::Untitled,
        }
    }

    /// How the prompt names it.
    pub fn describe(&self) -> String {
        match self {
            Origin::Demo => "the demo project".to_owned(),
            Origin::Untitled => "an untitled project".to_owned(),
            Origin::File(p) => p.display().to_string(),
        }
    }

    /// The file-name key of its autosave.
    fn key(&self) -> String {
        match self {
            Origin::Demo => "demo".to_owned(),
            Origin::Untitled => "untitled".to_owned(),
            Origin::File(p) => {
                // FNV-1a of the path: stable across runs and platforms' hashers.
                let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                for b in p.to_string_lossy().bytes() {
                    h ^= u64::from(b);
                    h = h.wrapping_mul(0x0100_0000_01b3);
                }
                format!("{h:016x}")
            }
        }
    }
}

/// What the recovery folder knows about one autosave.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AutosaveInfo {
    pub origin: Origin,
    /// Seconds since the Unix epoch when it was written.
    pub saved_at_unix_secs: u64,
    /// Edits that were unsaved when it was written.
    pub unsaved_edits: usize,
    /// Process that wrote it.
    #[serde(default)]
    pub pid: u32,
    /// The session (one [`Recovery`]) that wrote it; empty for autosaves of earlier versions.
    #[serde(default)]
    pub session: String,
    /// The autosaved document (not stored: where the autosave was found).
    #[serde(skip)]
    pub file: PathBuf,
}

impl AutosaveInfo {
    /// "3 min ago" style age.
    pub fn age(&self) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let age = now.saturating_sub(self.saved_at_unix_secs);
        match age {
            0..=119 => format!("{age} s ago"),
            120..=7199 => format!("{} min ago", age / 60),
            7200..=172_799 => format!("{} h ago", age / 3600),
            _ => format!("{} days ago", age / 86_400),
        }
    }

    /// One line for the prompt and the menu: project, time, edits.
    /// True while the session that wrote this autosave is still running (a taglane process of
    /// its process id exists, on Linux): its work is not lost but open in that window, so it is
    /// not offered for recovery at start-up.
    pub fn in_use(&self) -> bool {
        // This process is not another session (the autosave is another session's: a process of
        // this id that crashed before, its id given to this one after a reboot).
        self.pid != 0 && self.pid != std::process::id() && process_named(self.pid, "taglane")
    }

    pub fn summary(&self) -> String {
        format!(
            "{}, autosaved {} with {} unsaved edit{}",
            self.origin.describe(),
            self.age(),
            self.unsaved_edits,
            if self.unsaved_edits == 1 { "" } else { "s" }
        )
    }
}

/// The recovery folder (`None`: autosave off, e.g. in tests) and this session's name in it.
///
/// Each session writes and deletes only its own autosaves (`autosave-KEY-SESSION.*`): an autosave
/// left by a session that did not end cleanly stays until it is recovered or discarded, whatever
/// this session does with the same project (edit it for minutes, save it, quit cleanly).
#[derive(Debug, Clone)]
pub struct Recovery {
    dir: Option<PathBuf>,
    session: String,
}

/// A name no other session has: this process and the time and order of the [`Recovery`]'s making.
fn new_session() -> String {
    static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{nanos:x}-{n}", std::process::id())
}

impl Recovery {
    /// Recovery in `dir` (created when needed), as a new session.
    pub fn in_dir(dir: &Path) -> Self {
        let r = Self {
            dir: Some(dir.to_path_buf()),
            session: new_session(),
        };
        r.migrate_single_file();
        r
    }

    pub fn disabled() -> Self {
        Self {
            dir: None,
            session: new_session(),
        }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The document an autosave's unsaved edits were made on (the project as last saved or
    /// loaded), beside the autosave `file`.
    fn base_file(file: &Path) -> PathBuf {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let stem = name.strip_suffix(".taglane.json").unwrap_or(name);
        file.with_file_name(format!("{stem}.base.json"))
    }

    /// This session's autosave files of `origin`: the document and what it belongs to.
    fn own_files(&self, origin: &Origin) -> Option<(PathBuf, PathBuf)> {
        let dir = self.dir.as_ref()?;
        let stem = format!("autosave-{}-{}", origin.key(), self.session);
        Some((
            dir.join(format!("{stem}.taglane.json")),
            dir.join(format!("{stem}.meta.json")),
        ))
    }

    /// Every autosave in the folder that another session wrote (this session's own are its
    /// current work, not something to recover), newest first.
    fn others(&self) -> Vec<AutosaveInfo> {
        let Some(dir) = &self.dir else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut all: Vec<AutosaveInfo> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let stem = name
                    .strip_prefix("autosave-")?
                    .strip_suffix(".taglane.json")?;
                let file = e.path();
                let meta = dir.join(format!("autosave-{stem}.meta.json"));
                let mut info = match read_meta(&meta) {
                    Some(info) => info,
                    // Without its meta file only the demo's and an untitled project's autosave
                    // of earlier versions can be placed (a file's key is a hash of its path).
                    None => AutosaveInfo {
                        origin: match stem {
                            "demo" => Origin::Demo,
                            "untitled" => Origin::Untitled,
                            _ => return None,
                        },
                        saved_at_unix_secs: modified_secs(&file),
                        unsaved_edits: 1,
                        pid: 0,
                        session: String::new(),
                        file: PathBuf::new(),
                    },
                };
                info.file = file;
                (info.session != self.session).then_some(info)
            })
            .collect();
        all.sort_by_key(|info| std::cmp::Reverse(info.saved_at_unix_secs));
        all
    }

    /// The newest autosave of `origin` left by another session that is no longer running, if
    /// there is one.
    pub fn pending_for(&self, origin: &Origin) -> Option<AutosaveInfo> {
        self.others()
            .into_iter()
            .find(|i| i.origin == *origin && !i.in_use())
    }

    /// The newest autosave of any project left by a session that is no longer running.
    pub fn newest_left_behind(&self) -> Option<AutosaveInfo> {
        self.others().into_iter().find(|i| !i.in_use())
    }

    /// Every autosave left by other sessions, newest first.
    pub fn all(&self) -> Vec<AutosaveInfo> {
        self.others()
    }

    /// Writes this session's autosave of the project (atomically): the document, then what it
    /// belongs to.
    pub fn save(&self, project: &Project) -> Result<(), String> {
        self.save_doc(project, &project.doc)
    }

    /// As [`Recovery::save`], with `doc` as the project's document (the project's own with what
    /// the app holds outside it, the auto-tag panel's unsaved settings, put in).
    pub fn save_doc(&self, project: &Project, doc: &TagDocument) -> Result<(), String> {
        let origin = Origin::of(project);
        let Some((file, meta)) = self.own_files(&origin) else {
            return Ok(());
        };
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let text = doc.to_json_string().map_err(|e| e.to_string())?;
        let info = AutosaveInfo {
            origin,
            saved_at_unix_secs: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            unsaved_edits: project.history.unsaved_steps(),
            pid: std::process::id(),
            session: self.session.clone(),
            file: PathBuf::new(),
        };
        let meta_text = serde_json::to_string_pretty(&info).map_err(|e| e.to_string())?;
        let write_meta = || {
            crate::core::io::write_atomic(&meta, meta_text.as_bytes(), false)
                .map_err(|e| format!("{}: {e}", meta.display()))
        };
        // The first autosave of a project writes what it belongs to first: a document without
        // it cannot be placed (a file's key is a hash of its path), and a crash between the two
        // writes left work that was never offered. Later ones write it last, after the document
        // and the state its edits were made on, so that those two always belong together.
        if !meta.exists() {
            write_meta()?;
        }
        crate::core::io::write_atomic(&file, text.as_bytes(), false)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        // What the edits were made on, for a project file: a recovery after the file was saved
        // again merges the two instead of putting the autosave over the newer save.
        let base = Self::base_file(&file);
        match (&info.origin, project.history.saved_state(&project.doc)) {
            (Origin::File(_), Some(saved)) => {
                let text = saved.to_json_string().map_err(|e| e.to_string())?;
                crate::core::io::write_atomic(&base, text.as_bytes(), false)
                    .map_err(|e| format!("{}: {e}", base.display()))?;
            }
            _ => {
                let _ = std::fs::remove_file(&base);
            }
        }
        write_meta()
    }

    /// The document the unsaved edits of autosave `info` were made on, when it was kept (a
    /// project file's autosave since 2026-11-29 whose saved state was known).
    pub fn load_base(&self, info: &AutosaveInfo) -> Option<TagDocument> {
        self.dir.as_ref()?;
        TagDocument::load(&Self::base_file(&info.file))
            .ok()
            .map(|(doc, _)| doc)
    }

    /// Loads the autosaved document of `info`.
    pub fn load(&self, info: &AutosaveInfo) -> Result<(TagDocument, Vec<String>), String> {
        if self.dir.is_none() {
            return Err("autosave is off".to_owned());
        }
        let (doc, warnings) = TagDocument::load(&info.file).map_err(|e| e.to_string())?;
        Ok((doc, warnings.into_iter().map(|w| w.to_string()).collect()))
    }

    /// Deletes this session's autosave of `origin` (and nothing another session left).
    pub fn clear(&self, origin: &Origin) {
        if let Some((file, meta)) = self.own_files(origin) {
            let _ = std::fs::remove_file(Self::base_file(&file));
            let _ = std::fs::remove_file(file);
            let _ = std::fs::remove_file(meta);
        }
    }

    /// Deletes the autosave `info` (one another session left: discarded, or recovered into this
    /// session, whose own autosave then holds the work).
    pub fn discard(&self, info: &AutosaveInfo) {
        let Some(dir) = &self.dir else { return };
        if info.file.parent() != Some(dir.as_path()) {
            return;
        }
        let _ = std::fs::remove_file(Self::base_file(&info.file));
        let _ = std::fs::remove_file(&info.file);
        if let Some(stem) = info
            .file
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".taglane.json"))
        {
            let _ = std::fs::remove_file(dir.join(format!("{stem}.meta.json")));
        }
    }

    /// Earlier versions kept one `recovery.taglane.json` (and its project path in `.path`): give
    /// it a per-project name, so it is offered for its own project.
    fn migrate_single_file(&self) {
        let Some(dir) = &self.dir else { return };
        let old = dir.join("recovery.taglane.json");
        if !old.is_file() {
            return;
        }
        let old_path = dir.join("recovery.taglane.json.path");
        let origin = match std::fs::read_to_string(&old_path) {
            Ok(p) if !p.trim().is_empty() => Origin::File(PathBuf::from(p.trim())),
            _ => Origin::Demo,
        };
        let stem = format!("autosave-{}-migrated", origin.key());
        let (file, meta) = (
            dir.join(format!("{stem}.taglane.json")),
            dir.join(format!("{stem}.meta.json")),
        );
        if file.exists() {
            return;
        }
        let info = AutosaveInfo {
            origin,
            saved_at_unix_secs: modified_secs(&old),
            unsaved_edits: 1,
            pid: 0,
            session: "migrated".to_owned(),
            file: PathBuf::new(),
        };
        if std::fs::rename(&old, &file).is_ok()
            && let Ok(text) = serde_json::to_string_pretty(&info)
        {
            let _ = crate::core::io::write_atomic(&meta, text.as_bytes(), false);
            let _ = std::fs::remove_file(old_path);
        }
    }
}

/// Whether process `pid` runs a program named `name` (`/proc/PID/comm`, where the kernel keeps
/// the first 15 bytes of its name). Elsewhere than Linux, false: every autosave counts as left
/// behind.
fn process_named(pid: u32, name: &str) -> bool {
    if cfg!(target_os = "linux") {
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|comm| comm.trim_end() == name)
    } else {
        false
    }
}

fn read_meta(path: &Path) -> Option<AutosaveInfo> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn modified_secs(path: &Path) -> u64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::doc::Edit;
    use crate::core::tags::Range;

    fn edited_demo() -> Project {
        let mut demo = Project::demo();
        demo.apply(
            Edit::SetRanges {
                tag: 0,
                clip: 0,
                ranges: vec![Range::new(1, 2)],
            },
            "edit",
        )
        .unwrap();
        demo
    }

    /// A running process is found by its id and name; a name it does not have, or no process,
    /// is not.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_running_session_is_told_from_one_left_behind() {
        let own = std::fs::read_to_string("/proc/self/comm").unwrap();
        let pid = std::process::id();
        assert!(process_named(pid, own.trim_end()));
        assert!(!process_named(pid, "taglane-not-this"));
        // Process ids are at most 2^22 on Linux.
        assert!(!process_named(u32::MAX, own.trim_end()));
        // This test binary is not taglane: its autosaves count as left behind.
        let dir = std::env::temp_dir().join(format!("taglane-recovery-live-{pid}"));
        let _ = std::fs::remove_dir_all(&dir);
        Recovery::in_dir(&dir).save(&edited_demo()).unwrap();
        let info = Recovery::in_dir(&dir).newest_left_behind().unwrap();
        assert_eq!(info.pid, pid);
        assert!(!info.in_use());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn one_autosave_per_project_and_clear_touches_only_its_own() {
        let dir = std::env::temp_dir().join(format!("taglane-recovery-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // A session that dies with two projects autosaved.
        let r = Recovery::in_dir(&dir);
        let demo = edited_demo();
        let mut file = Project::demo();
        file.is_demo = false;
        file.path = Some(dir.join("real.taglane.json"));
        file.doc.tags.truncate(3);
        file.doc.queries.clear();
        r.save(&demo).unwrap();
        r.save(&file).unwrap();
        assert!(
            r.all().is_empty(),
            "a session's own autosaves are its current work"
        );
        // The next session finds both.
        let next = Recovery::in_dir(&dir);
        let demo_info = next.pending_for(&Origin::Demo).unwrap();
        assert_eq!(demo_info.unsaved_edits, 1);
        assert!(demo_info.summary().contains("the demo project"));
        let file_origin = Origin::of(&file);
        let file_info = next.pending_for(&file_origin).unwrap();
        assert_eq!(next.all().len(), 2);
        let (back, warnings) = next.load(&file_info).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(back.tags.len(), 3);
        // What the file's edits were made on is kept beside it (the demo's is not needed), and
        // goes with it.
        let bases = || {
            std::fs::read_dir(&dir)
                .unwrap()
                .filter(|e| {
                    let name = e.as_ref().unwrap().file_name();
                    name.to_string_lossy().ends_with(".base.json")
                })
                .count()
        };
        assert!(next.load_base(&file_info).unwrap().same_content(&file.doc));
        assert_eq!(next.load_base(&demo_info), None);
        assert_eq!(bases(), 1);
        next.discard(&file_info);
        assert_eq!(bases(), 0);
        assert!(next.pending_for(&file_origin).is_none());
        assert!(
            next.pending_for(&Origin::Demo).is_some(),
            "the demo's is kept"
        );
        next.discard(&demo_info);
        assert!(next.all().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// An autosave left by a session that died is never written over or deleted by the next
    /// session working on the same project: not by its own autosaves, its save, its clean quit.
    #[test]
    fn another_sessions_autosave_survives_this_session_on_the_same_project() {
        let dir =
            std::env::temp_dir().join(format!("taglane-recovery-keep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let crashed = Recovery::in_dir(&dir);
        crashed.save(&edited_demo()).unwrap();
        let left = Recovery::in_dir(&dir).pending_for(&Origin::Demo).unwrap();
        // This session declines to recover ("Later"), edits the demo and autosaves it.
        let now = Recovery::in_dir(&dir);
        let mut mine = Project::demo();
        mine.apply(
            Edit::SetRanges {
                tag: 1,
                clip: 1,
                ranges: vec![Range::new(5, 9)],
            },
            "mine",
        )
        .unwrap();
        now.save(&mine).unwrap();
        assert_eq!(now.pending_for(&Origin::Demo), Some(left.clone()));
        let (doc, _) = now.load(&left).unwrap();
        assert_eq!(doc.tags[0].ranges[&0], vec![Range::new(1, 2)]);
        // It saves or quits cleanly: only its own autosave goes.
        now.clear(&Origin::Demo);
        assert_eq!(now.pending_for(&Origin::Demo), Some(left.clone()));
        let later = Recovery::in_dir(&dir);
        assert_eq!(later.all(), vec![left.clone()]);
        // Discarded at last: gone, and nothing else was left behind.
        later.discard(&left);
        assert!(later.all().is_empty());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_old_single_recovery_file_is_offered_for_its_project() {
        let dir = std::env::temp_dir().join(format!("taglane-recovery-old-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let text = Project::demo().doc.to_json_string().unwrap();
        std::fs::write(dir.join("recovery.taglane.json"), text).unwrap();
        std::fs::write(dir.join("recovery.taglane.json.path"), "/p/x.taglane.json").unwrap();
        let r = Recovery::in_dir(&dir);
        let origin = Origin::File(PathBuf::from("/p/x.taglane.json"));
        assert!(r.pending_for(&origin).is_some());
        assert!(r.pending_for(&Origin::Demo).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
