//! Autosave and crash recovery, one autosave per project.
//!
//! While a project has unsaved changes it is written every 30 s to an autosave file of its own in
//! the recovery folder (`autosave-KEY.taglane.json`, with `autosave-KEY.meta.json` saying which
//! project it belongs to, when, and how many edits were unsaved). KEY is `demo`, `untitled` or a
//! hash of the project's path. A save, a clean quit or "Don't save" deletes that project's
//! autosave, and only that one.
//!
//! An autosave found later is offered only for its own project: when that project is opened (at
//! start-up or by Open), the app asks whether to recover it into that project. Autosaves of other
//! projects are kept for later and listed under File > Recover autosave; opening some other
//! project never deletes them.

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
    /// Process that wrote it (an autosave of a running session is not offered to another one).
    #[serde(default)]
    pub pid: u32,
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

/// The recovery folder (`None`: autosave off, e.g. in tests).
#[derive(Debug, Clone)]
pub struct Recovery {
    dir: Option<PathBuf>,
}

impl Recovery {
    /// Recovery in `dir` (created when needed).
    pub fn in_dir(dir: &Path) -> Self {
        let r = Self {
            dir: Some(dir.to_path_buf()),
        };
        r.migrate_single_file();
        r
    }

    pub fn disabled() -> Self {
        Self { dir: None }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn files(&self, origin: &Origin) -> Option<(PathBuf, PathBuf)> {
        let dir = self.dir.as_ref()?;
        let key = origin.key();
        Some((
            dir.join(format!("autosave-{key}.taglane.json")),
            dir.join(format!("autosave-{key}.meta.json")),
        ))
    }

    /// The autosave of `origin`, if there is one.
    pub fn pending_for(&self, origin: &Origin) -> Option<AutosaveInfo> {
        let (doc, meta) = self.files(origin)?;
        if !doc.is_file() {
            return None;
        }
        let info = read_meta(&meta).unwrap_or_else(|| AutosaveInfo {
            origin: origin.clone(),
            saved_at_unix_secs: modified_secs(&doc),
            unsaved_edits: 1,
            pid: 0,
        });
        (info.origin == *origin).then_some(info)
    }

    /// Every autosave in the folder, newest first.
    pub fn all(&self) -> Vec<AutosaveInfo> {
        let Some(dir) = &self.dir else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut all: Vec<AutosaveInfo> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("autosave-") && n.ends_with(".meta.json"))
            })
            .filter_map(|p| read_meta(&p))
            .filter(|info| self.pending_for(&info.origin).is_some())
            .collect();
        all.sort_by_key(|info| std::cmp::Reverse(info.saved_at_unix_secs));
        all
    }

    /// Writes the project's autosave (atomically): the document, then what it belongs to.
    pub fn save(&self, project: &Project) -> Result<(), String> {
        let origin = Origin::of(project);
        let Some((file, meta)) = self.files(&origin) else {
            return Ok(());
        };
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let text = project.doc.to_json_string().map_err(|e| e.to_string())?;
        let info = AutosaveInfo {
            origin,
            saved_at_unix_secs: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            unsaved_edits: project.history.unsaved_steps(),
            pid: std::process::id(),
        };
        let meta_text = serde_json::to_string_pretty(&info).map_err(|e| e.to_string())?;
        crate::core::io::write_atomic(&file, text.as_bytes(), false)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        crate::core::io::write_atomic(&meta, meta_text.as_bytes(), false)
            .map_err(|e| format!("{}: {e}", meta.display()))
    }

    /// Loads the autosaved document of `origin`.
    pub fn load(&self, origin: &Origin) -> Result<(TagDocument, Vec<String>), String> {
        let (file, _) = self.files(origin).ok_or("autosave is off")?;
        let (doc, warnings) = TagDocument::load(&file).map_err(|e| e.to_string())?;
        Ok((doc, warnings.into_iter().map(|w| w.to_string()).collect()))
    }

    /// Deletes the autosave of `origin` (and only that one).
    pub fn clear(&self, origin: &Origin) {
        if let Some((file, meta)) = self.files(origin) {
            let _ = std::fs::remove_file(file);
            let _ = std::fs::remove_file(meta);
        }
    }

    /// Earlier versions kept one `recovery.taglane.json` (and its project path in `.path`): give
    /// it the per-project name, so it is offered for its own project.
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
        let Some((file, meta)) = self.files(&origin) else {
            return;
        };
        if file.exists() {
            return;
        }
        let info = AutosaveInfo {
            origin,
            saved_at_unix_secs: modified_secs(&old),
            unsaved_edits: 1,
            pid: 0,
        };
        if std::fs::rename(&old, &file).is_ok()
            && let Ok(text) = serde_json::to_string_pretty(&info)
        {
            let _ = crate::core::io::write_atomic(&meta, text.as_bytes(), false);
            let _ = std::fs::remove_file(old_path);
        }
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

    #[test]
    fn one_autosave_per_project_and_clear_touches_only_its_own() {
        let dir = std::env::temp_dir().join(format!("taglane-recovery-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let r = Recovery::in_dir(&dir);
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
        let mut file = Project::demo();
        file.is_demo = false;
        file.path = Some(dir.join("real.taglane.json"));
        file.doc.tags.truncate(3);
        file.doc.queries.clear();
        r.save(&demo).unwrap();
        r.save(&file).unwrap();
        let demo_info = r.pending_for(&Origin::Demo).unwrap();
        assert_eq!(demo_info.unsaved_edits, 1);
        assert!(demo_info.summary().contains("the demo project"));
        let file_origin = Origin::of(&file);
        assert!(r.pending_for(&file_origin).is_some());
        assert_eq!(r.all().len(), 2);
        let (back, warnings) = r.load(&file_origin).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(back.tags.len(), 3);
        r.clear(&file_origin);
        assert!(r.pending_for(&file_origin).is_none());
        assert!(r.pending_for(&Origin::Demo).is_some(), "the demo's is kept");
        r.clear(&Origin::Demo);
        assert!(r.all().is_empty());
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
