//! Autosave and crash recovery: while there are unsaved changes the project is written every 30 s
//! to a recovery file; a clean exit (or a save) deletes it; a recovery file found at start-up means
//! the last session did not end cleanly, and the app offers to restore it.

use std::path::{Path, PathBuf};

use crate::core::tags::format;
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

    /// Writes the project to the recovery file (atomically). The original path is kept inside, so
    /// the recovered project saves back to where it came from.
    pub fn save(&self, project: &Project) -> Result<(), String> {
        let Some(file) = &self.file else { return Ok(()) };
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let mut doc_json: serde_json::Value =
            serde_json::from_str(&format::to_json_string(&project.doc)).map_err(|e| e.to_string())?;
        if let Some(obj) = doc_json.as_object_mut() {
            obj.insert(
                "x-taglane-recovery".into(),
                serde_json::json!({ "path": project.path.as_ref().map(|p| p.display().to_string()) }),
            );
        }
        let text = serde_json::to_string(&doc_json).map_err(|e| e.to_string())?;
        crate::core::io::write_atomic(file, text.as_bytes(), false).map_err(|e| format!("{}: {e}", file.display()))
    }

    /// Loads the recovery file as a project (with its original path, if it had one).
    pub fn load(&self) -> Result<(Project, Vec<String>), String> {
        let file = self.file.as_ref().ok_or("autosave is off")?;
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let original = value
            .get("x-taglane-recovery")
            .and_then(|r| r.get("path"))
            .and_then(|p| p.as_str())
            .map(PathBuf::from);
        let (doc, warnings) = format::from_json_str(&text, &file.display().to_string()).map_err(|e| e.to_string())?;
        let project = Project {
            doc,
            history: Default::default(),
            is_demo: original.is_none(),
            path: original,
        };
        Ok((project, warnings.into_iter().map(|w| w.to_string()).collect()))
    }

    /// Deletes the recovery file.
    pub fn clear(&self) {
        if let Some(f) = &self.file {
            let _ = std::fs::remove_file(f);
        }
    }
}
