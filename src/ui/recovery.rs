//! Autosave and crash recovery: while there are unsaved changes the project is written every 30 s
//! to a recovery file; a clean exit (or a save) deletes it; a recovery file found at start-up means
//! the last session did not end cleanly, and the app offers to restore it.

use std::path::{Path, PathBuf};

use crate::core::tags::TagDocument;
use crate::ui::project::Project;

/// Where the recovery file lives (`None`: autosave off, e.g. in tests).
#[derive(Debug, Clone)]
pub struct Recovery {
    file: Option<PathBuf>,
}

impl Recovery {
    /// Recovery in `dir` (created when needed).
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            file: Some(dir.join("recovery.taglane.json")),
        }
    }

    pub fn disabled() -> Self {
        Self { file: None }
    }

    pub fn path(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// When a recovery file exists: its modification time, for the prompt.
    pub fn pending(&self) -> Option<String> {
        let meta = std::fs::metadata(self.file.as_ref()?).ok()?;
        let age = meta.modified().ok()?.elapsed().ok()?.as_secs();
        Some(match age {
            0..=119 => format!("{age} s ago"),
            120..=7199 => format!("{} min ago", age / 60),
            _ => format!("{} h ago", age / 3600),
        })
    }

    /// Writes the project to the recovery file (atomically), and the project's own path beside
    /// it (`.path`), so the recovered project saves back to where it came from.
    pub fn save(&self, project: &Project) -> Result<(), String> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let text = project.doc.to_json_string().map_err(|e| e.to_string())?;
        let origin = project
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        crate::core::io::write_atomic(&origin_file(file), origin.as_bytes(), false)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        crate::core::io::write_atomic(file, text.as_bytes(), false)
            .map_err(|e| format!("{}: {e}", file.display()))
    }

    /// Loads the recovery file as a project (with its original path, if it had one).
    pub fn load(&self) -> Result<(Project, Vec<String>), String> {
        let file = self.file.as_ref().ok_or("autosave is off")?;
        let (doc, warnings) = TagDocument::load(file).map_err(|e| e.to_string())?;
        let origin = std::fs::read_to_string(origin_file(file)).unwrap_or_default();
        let original = (!origin.trim().is_empty()).then(|| PathBuf::from(origin.trim()));
        let project = Project {
            doc,
            history: Default::default(),
            is_demo: original.is_none(),
            path: original,
        };
        Ok((
            project,
            warnings.into_iter().map(|w| w.to_string()).collect(),
        ))
    }

    /// Deletes the recovery file.
    pub fn clear(&self) {
        if let Some(f) = &self.file {
            let _ = std::fs::remove_file(f);
            let _ = std::fs::remove_file(origin_file(f));
        }
    }
}

fn origin_file(file: &Path) -> PathBuf {
    let mut s = file.as_os_str().to_owned();
    s.push(".path");
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_round_trip_and_clear() {
        let dir = std::env::temp_dir().join(format!("taglane-recovery-{}", std::process::id()));
        let r = Recovery::in_dir(&dir);
        r.clear();
        assert!(r.pending().is_none());
        let mut project = Project::demo();
        project.path = Some(PathBuf::from("/somewhere/p.taglane.json"));
        project.doc.tags.truncate(3);
        project.doc.queries.clear();
        r.save(&project).unwrap();
        assert!(r.pending().is_some());
        let (back, warnings) = r.load().unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(back.path, project.path);
        assert_eq!(back.doc.tags.len(), 3);
        assert_eq!(back.doc.clips, project.doc.clips);
        r.clear();
        assert!(r.pending().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
