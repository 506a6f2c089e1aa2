//! The open project: a tag document, its undo history and where it lives (single file or sidecar
//! mode). Shared by the app, the command line and the cut export; no UI in it. Where a clip's
//! animation comes from and how it loads is `core::source` (re-exported here).

use std::path::{Path, PathBuf};

use crate::core::anim::Clip;
use crate::core::doc::{Edit, EditError, History};
use crate::core::tags::{ClipId, TagDocument};

pub use crate::core::source::{
    ClipRequest, ClipSource, DEMO_CLIP_FILES, DEMO_PROJECT_JSON, animation_of, load,
};

/// A project: a document, its history and its file.
#[derive(Debug, Clone, Default)]
pub struct Project {
    pub doc: TagDocument,
    pub history: History,
    /// The file it was loaded from or saved to; `None` for a new or demo project.
    pub path: Option<PathBuf>,
    /// True for the embedded demo (saving asks for a path).
    pub is_demo: bool,
}

impl Project {
    /// The embedded demo project.
    pub fn demo() -> Self {
        let (doc, _warnings) = TagDocument::from_json_str(DEMO_PROJECT_JSON, "demo.taglane.json")
            .expect("the embedded demo project is valid (tested)");
        Self {
            doc,
            history: History::new(),
            path: None,
            is_demo: true,
        }
    }

    /// Loads a project file, single-file or sidecar mode (see `core::library::sidecar`); warnings
    /// (merged ranges, sidecars that could not be read) are returned for the status bar.
    pub fn load(path: &Path) -> Result<(Self, Vec<String>), String> {
        let (doc, warnings) = crate::core::library::load_any(path).map_err(|e| e.to_string())?;
        Ok((
            Self {
                doc,
                history: History::new(),
                path: Some(path.to_path_buf()),
                is_demo: false,
            },
            warnings.into_iter().map(|w| w.to_string()).collect(),
        ))
    }

    /// Applies `edit` as one undoable step named `label`: the one way the document changes.
    pub fn apply(&mut self, edit: Edit, label: impl Into<String>) -> Result<(), EditError> {
        self.history.apply(&mut self.doc, edit, label)
    }

    /// Applies `edit` merged with the previous step when that one had the same `key` (a colour
    /// drag, typing in a field): one undo step for the whole gesture.
    pub fn apply_keyed(&mut self, edit: Edit, label: &str, key: u64) -> Result<(), EditError> {
        self.history
            .apply_keyed(&mut self.doc, edit, label, Some(key))
    }

    /// Saves atomically (temp file + rename, one `.bak` backup kept) and marks the history saved.
    /// A sidecar-mode project file stays one: each clip's tags go to its sidecar. Returns the
    /// stale sidecars a sidecar-mode save left in place (clips that come back on the next open;
    /// see [`SidecarSave::stale`](crate::core::library::SidecarSave::stale)); none otherwise.
    pub fn save_to(&mut self, path: &Path) -> Result<Vec<PathBuf>, String> {
        let stale = if crate::core::library::is_sidecar_project(path) {
            crate::core::library::save_sidecar_project(path, &self.doc, None)
                .map_err(|e| e.to_string())?
                .stale
        } else {
            self.doc.save(path, true).map_err(|e| e.to_string())?;
            Vec::new()
        };
        self.path = Some(path.to_path_buf());
        self.is_demo = false;
        self.history.mark_saved();
        Ok(stale)
    }

    /// The name shown in the title bar.
    pub fn title(&self) -> String {
        match (&self.path, self.is_demo) {
            (Some(p), _) => p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            (None, true) => "demo project".to_owned(),
            (None, false) => "untitled".to_owned(),
        }
    }

    /// Folder that clip `source` paths are relative to.
    pub fn base_dir(&self) -> Option<PathBuf> {
        self.path
            .as_ref()
            .and_then(|p| p.parent().map(Path::to_path_buf))
    }

    /// Loads the animation of clip `clip` (see [`resolve`] and [`load`]).
    pub fn load_clip(&self, clip: ClipId) -> Result<Clip, String> {
        load(&resolve(self, clip)?)
    }
}

/// Resolves where clip `clip` of `project` comes from.
pub fn resolve(project: &Project, clip: ClipId) -> Result<ClipRequest, String> {
    let info = project
        .doc
        .clips
        .get(clip as usize)
        .ok_or_else(|| format!("no clip {clip} in the project"))?;
    ClipRequest::new(clip, info, project.base_dir().as_deref(), project.is_demo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_demo_clip_is_embedded_and_loads() {
        let project = Project::demo();
        for (i, clip) in project.doc.clips.iter().enumerate() {
            let source = clip.source.as_deref().unwrap();
            assert!(
                DEMO_CLIP_FILES.iter().any(|(name, _)| *name == source),
                "{source} is not embedded"
            );
            let anim = project.load_clip(i as ClipId).unwrap();
            assert_eq!(anim.frame_count as u32, clip.frames, "{}", clip.name);
        }
        assert_eq!(DEMO_CLIP_FILES.len(), project.doc.clips.len());
    }
}
