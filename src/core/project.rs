//! The open project: a tag document, its undo history and where it lives (single file or sidecar
//! mode). Shared by the app, the command line and the cut export; no UI in it. Where a clip's
//! animation comes from and how it loads is `core::source` (re-exported here).

use std::path::{Path, PathBuf};

use crate::core::anim::Clip;
use crate::core::doc::{Edit, EditError, History};
use crate::core::library::Seen;
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
    /// In sidecar mode: what each sidecar held when this project read or last wrote it, so that a
    /// save never writes over changes made on disk meanwhile.
    pub sidecars: crate::core::library::SidecarBaseline,
    /// The sidecars the last save kept as they were on disk (changed there meanwhile, not edited
    /// here, and unreadable; see [`crate::core::library::save_sidecar_project_since`]).
    pub kept_on_disk: Vec<PathBuf>,
    /// The files (sidecars, the project file) changed on disk meanwhile that the last save merged
    /// into the document before saving (see [`crate::core::library::merge`]).
    pub merged_from_disk: Vec<PathBuf>,
    /// A single-file project: the hash of its file's bytes when this project read or last wrote
    /// it (`SidecarBaseline::hash`), so that a save can tell changes made on disk meanwhile.
    pub file_seen: Option<u64>,
    /// A project made for a file that did not exist yet (`taglane import` into a new project):
    /// a file found there at its first save was written meanwhile by another session, and is
    /// merged (with the empty document as the common ancestor) instead of written over.
    pub file_was_absent: bool,
}

/// The history and document from before a merge (put back when the save that follows fails).
type Before = (History, TagDocument);

/// The undo label of a merge of changes made on disk.
const MERGE_LABEL: &str = "changes made on disk";

/// The error of a save that found `file` changed on disk and could not merge it: why.
fn changed_on_disk(file: &Path, why: &str) -> String {
    format!(
        "{}: changed on disk since the project was opened or last saved (another session, a \
         version-control update), and here too: {why}. Nothing was saved, so that neither version \
         is lost. {}",
        file.display(),
        crate::core::library::sidecar::KEEP_BOTH_ADVICE
    )
}

fn read_project_file(path: &Path) -> std::io::Result<Vec<u8>> {
    crate::core::limits::read_limited(path, crate::core::limits::MAX_TAGS_FILE_BYTES)
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
            ..Self::default()
        }
    }

    /// Loads a project file, single-file or sidecar mode (see `core::library::sidecar`); warnings
    /// (merged ranges, sidecars that could not be read) are returned for the status bar.
    pub fn load(path: &Path) -> Result<(Self, Vec<String>), String> {
        Self::load_with_warnings(path)
            .map(|(p, warnings)| (p, warnings.iter().map(ToString::to_string).collect()))
    }

    /// [`Project::load`], with the warnings as the load gives them (to tell those about
    /// sidecars that could not be read: [`crate::core::library::is_unloaded_sidecar`]).
    pub fn load_with_warnings(
        path: &Path,
    ) -> Result<(Self, Vec<crate::core::tags::LoadWarning>), String> {
        let (doc, warnings, seen) =
            crate::core::library::load_any_with_baseline(path).map_err(|e| e.to_string())?;
        Ok((
            Self {
                doc,
                history: History::new(),
                path: Some(path.to_path_buf()),
                is_demo: false,
                file_seen: match &seen {
                    Seen::File(hash) => Some(*hash),
                    Seen::Sidecars(_) => None,
                },
                sidecars: match seen {
                    Seen::Sidecars(baseline) => baseline,
                    Seen::File(_) => Default::default(),
                },
                kept_on_disk: Vec::new(),
                merged_from_disk: Vec::new(),
                file_was_absent: false,
            },
            warnings,
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
    ///
    /// Saved into another folder, the clips keep their animation: sources relative to the old
    /// folder are written relative to the new one (the same files), and the demo's embedded takes
    /// are written beside the project (see `Rebase`); the undo history names them the same way.
    pub fn save_to(&mut self, path: &Path) -> Result<Vec<PathBuf>, String> {
        // No other taglane save of this project between the merge's read and the write.
        let _lock = crate::core::io::lock_for_save(path)
            .map_err(|e| format!("{}: cannot save: {e}", path.display()))?;
        let sidecar = crate::core::library::sidecar_layout(path).map_err(|e| {
            format!(
                "{}: cannot save: the file there cannot be read to tell its layout (a sidecar \
                 project or a single file: {e}); nothing was saved",
                path.display()
            )
        })?;
        let rebase = (!sidecar).then(|| Rebase::new(self, path)).flatten();
        let undo = match &rebase {
            Some(r) => self.rebase_sources(r)?,
            None => Edit::Batch(Vec::new()),
        };
        // A sidecar project saved to another project's file knows nothing of its sidecars: every
        // one there that differs is someone else's.
        let same_file = |a: &Path| {
            let c = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            c(a) == c(path)
        };
        let same_project = self.path.as_deref().is_some_and(same_file);
        if sidecar && !same_project {
            self.sidecars = Default::default();
        }
        self.kept_on_disk.clear();
        self.merged_from_disk.clear();
        let saved = if sidecar && same_project {
            self.save_merging(path).map(|s| {
                self.kept_on_disk = s.kept;
                s.stale
            })
        } else if sidecar {
            crate::core::library::save_sidecar_project_since(
                path,
                &self.doc,
                None,
                Some(&mut self.sidecars),
            )
            .map(|s| {
                self.kept_on_disk = s.kept;
                s.stale
            })
            .map_err(|e| e.to_string())
        } else {
            let merged = if same_project {
                self.merge_single_file(path).map(|(before, _)| before)
            } else {
                Ok(None)
            };
            merged.and_then(|before| {
                let saved = self.save_single_file(path);
                if saved.is_err()
                    && let Some(before) = before
                {
                    // Not saved: the merge is taken back (the next save merges again).
                    self.restore(*before);
                }
                saved.map(|()| Vec::new())
            })
        };
        let stale = match saved {
            Ok(stale) => stale,
            Err(e) => {
                // Not saved: the sources stay as they were (takes written out stay on disk).
                let _ = undo.apply(&mut self.doc);
                return Err(e);
            }
        };
        // The undo and redo steps name sources as the document did: the same rewrite, so that an
        // undo after the save names the same files (a take of the demo it names is written out
        // too; one that cannot be is left as it was).
        if let Some(r) = &rebase {
            self.history.sources_mut(&mut |source| {
                if let Some(s) = source.as_deref()
                    && let Ok(Some(new)) = r.source(s)
                {
                    *source = Some(new);
                }
            });
        }
        self.path = Some(path.to_path_buf());
        self.is_demo = false;
        self.history.mark_saved();
        if sidecar {
            self.file_seen = None;
        }
        Ok(stale)
    }

    /// Merges into the document what changed in this single-file project's own file since it was
    /// read or last saved (as a save to it does first; one undo step, "changes made on disk"),
    /// for a caller about to write the document in another form in its place: `taglane import
    /// --sidecar` turning the file into a sidecar project. Afterwards [`Project::file_seen`] is
    /// the hash of the bytes on disk the document now holds, and [`Project::merged_from_disk`]
    /// names the file when something was merged (true). Nothing for a sidecar project, a project
    /// without a file, or a file gone from disk. A conflict, or a file that no longer reads, is an
    /// error naming the file, and the document is left as it was.
    pub fn merge_file_changes(&mut self) -> Result<bool, String> {
        let Some(path) = self.path.clone() else {
            return Ok(false);
        };
        self.merged_from_disk.clear();
        let (before, hash) = self.merge_single_file(&path)?;
        if hash.is_some() {
            self.file_seen = hash;
        }
        Ok(before.is_some())
    }

    /// Writes the document to the single file `path` (atomically, with a backup) and records the
    /// hash of the bytes written.
    fn save_single_file(&mut self, path: &Path) -> Result<(), String> {
        let label = path.display().to_string();
        let text = crate::core::tags::format::tags_to_string(&self.doc, &label)
            .map_err(|e| e.to_string())?;
        crate::core::io::write_atomic(path, text.as_bytes(), true)
            .map_err(|e| format!("{label}: cannot save: {e}"))?;
        self.file_seen = Some(crate::core::library::SidecarBaseline::hash(text.as_bytes()));
        self.file_was_absent = false;
        Ok(())
    }

    /// Before a single-file project is saved to its own file (`path`): when the file changed on
    /// disk since this project read or last wrote it (another session saved it, a version-control
    /// update), or appeared there since a project made for a new file began (another session's
    /// save, merged with the empty document as the ancestor), merges it into the document (one
    /// undo step, "changes made on disk"; see
    /// [`crate::core::library::merge::merge_documents`]). Returns the history and document from
    /// before the merge when it made one (the caller puts them back if the save then fails). A
    /// conflict, or a file that cannot be read, is an error naming the file: nothing is merged or
    /// saved.
    fn merge_single_file(
        &mut self,
        path: &Path,
    ) -> Result<(Option<Box<Before>>, Option<u64>), String> {
        // `None`: the file did not exist when this project was made for it.
        let seen = match self.file_seen {
            Some(hash) => Some(hash),
            None if self.file_was_absent => None,
            None => return Ok((None, None)),
        };
        let refuse = |why: &str| changed_on_disk(path, why);
        let bytes = match read_project_file(path) {
            Ok(bytes) => bytes,
            // Gone: nothing to merge, the save writes it anew (or, where a folder of its path is
            // a file, fails saying so: nothing changed on disk there).
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok((None, None));
            }
            Err(e) => return Err(refuse(&format!("the version on disk cannot be read ({e})"))),
        };
        let hash = crate::core::library::SidecarBaseline::hash(&bytes);
        if Some(hash) == seen {
            return Ok((None, Some(hash)));
        }
        let label = path.display().to_string();
        let (theirs, _) = String::from_utf8(bytes)
            .map_err(|_| "expected UTF-8 text".to_owned())
            .and_then(|text| {
                crate::core::tags::load_tags_str(&text, &label).map_err(|e| e.to_string())
            })
            .map_err(|e| refuse(&format!("the version on disk cannot be read ({e})")))?;
        // A file that appeared since a project made for a new file began: the common ancestor
        // is the empty document (not what the project was made from, such as sidecars adopted
        // by an import, which would read as everything removed there).
        let base = if seen.is_none() {
            crate::core::tags::TagDocument::default()
        } else {
            self.history
                .saved_state(&self.doc)
                .ok_or_else(|| refuse(crate::core::library::merge::NO_ANCESTOR))?
        };
        let edit = crate::core::library::merge::merge_documents(&base, &self.doc, &theirs)
            .map_err(|why| refuse(&why))?;
        if edit.is_empty() {
            return Ok((None, Some(hash)));
        }
        let before = Box::new((self.history.clone(), self.doc.clone()));
        self.apply(edit, MERGE_LABEL)
            .map_err(|e| refuse(&format!("the merge cannot be made ({e})")))?;
        self.merged_from_disk = vec![path.to_path_buf()];
        Ok((Some(before), Some(hash)))
    }

    /// Puts back the history and document from before a merge whose save failed: the merge
    /// step, and what applying it did to the history (its redo steps, where the saved state
    /// lay), are gone, so the next save starts from the same ancestor.
    fn restore(&mut self, (history, doc): Before) {
        self.history = history;
        self.doc = doc;
        self.merged_from_disk.clear();
    }

    /// Saves this sidecar project to its own file (`path`). Files changed on disk since the
    /// project last opened or saved them are first merged into the document (one undo step,
    /// "changes made on disk"; see [`crate::core::library::merge`]), then everything is saved. A
    /// conflict (both sides changed one value differently) saves nothing and names the file; so
    /// does a file that changes again during the save. A save that fails after the merge puts the
    /// history and document back as they were and forgets what it recorded of the files, so that
    /// the document, the history's saved state and what the project knows of the files stay one
    /// consistent ancestor for the next save.
    fn save_merging(&mut self, path: &Path) -> Result<crate::core::library::SidecarSave, String> {
        use crate::core::library::merge::merge_on_disk;
        use crate::core::library::save_sidecar_project_or_changes as save;
        let on_disk = match save(path, &self.doc, &mut self.sidecars).map_err(|e| e.to_string())? {
            Ok(saved) => return Ok(saved),
            Err(on_disk) => on_disk,
        };
        // The common ancestor: what the project last saw (`None` when the history no longer has
        // it: then only files this session did not change merge).
        let base = self.history.saved_state(&self.doc);
        let edit = merge_on_disk(base.as_ref(), &self.doc, &on_disk)
            .map_err(|(i, why)| changed_on_disk(&on_disk[i].file, &why))?;
        let before = (!edit.is_empty()).then(|| (self.history.clone(), self.doc.clone()));
        if before.is_some() {
            self.apply(edit, MERGE_LABEL)
                .map_err(|e| format!("the changes made on disk cannot be merged: {e}"))?;
        }
        let baseline = self.sidecars.clone();
        for d in &on_disk {
            match d.theirs {
                crate::core::library::merge::Theirs::Gone(_) => self.sidecars.forget(&d.file),
                _ => self.sidecars.set(&d.file, &d.bytes),
            }
        }
        match save(path, &self.doc, &mut self.sidecars) {
            Ok(Ok(saved)) => {
                if before.is_some() {
                    self.merged_from_disk = on_disk.into_iter().map(|d| d.file).collect();
                }
                Ok(saved)
            }
            failed => {
                self.sidecars = baseline;
                if let Some(before) = before {
                    self.restore(before);
                }
                Err(match failed {
                    Err(e) => e.to_string(),
                    Ok(Err(again)) => changed_on_disk(
                        &again[0].file,
                        "it changed again during the save, so nothing was merged",
                    ),
                    Ok(Ok(_)) => unreachable!("matched above"),
                })
            }
        }
    }

    /// Makes the clips' sources right for the project file `rebase` was made for; returns the edit
    /// that puts them back (see [`Rebase`]). The changes are not an undo step: the files are the
    /// same, only how the project names them changes.
    fn rebase_sources(&mut self, rebase: &Rebase) -> Result<Edit, String> {
        let mut edits = Vec::new();
        for (i, info) in self.doc.clips.iter().enumerate() {
            if let Some(new) = info
                .source
                .as_deref()
                .map(|s| rebase.source(s))
                .transpose()?
                && let Some(new) = new
            {
                edits.push(Edit::SetClipSource {
                    clip: i as ClipId,
                    source: Some(new),
                });
            }
        }
        Edit::Batch(edits)
            .apply(&mut self.doc)
            .map_err(|e| e.to_string())
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
        // Through a link: the folder of the file it names (where the saves go).
        self.path.as_ref().and_then(|p| {
            crate::core::io::resolve_link(p)
                .parent()
                .map(Path::to_path_buf)
        })
    }

    /// Loads the animation of clip `clip` (see [`resolve`] and [`load`]).
    pub fn load_clip(&self, clip: ClipId) -> Result<Clip, String> {
        load(&resolve(self, clip)?)
    }
}

/// How a project's sources change when it is saved into another folder. Sources relative to the
/// project's current folder are made relative to the new one (the same files; a file on no common
/// folder gets its absolute path). The demo's embedded takes are written into the new folder
/// (`walk_male_01.bvh`, ...); a different file already there of that name is never replaced: the
/// take gets a free name (`walk_male_01-2.bvh`) instead. Absolute sources do not change.
struct Rebase {
    old_base: Option<PathBuf>,
    new_base: PathBuf,
    demo: bool,
}

impl Rebase {
    /// `None` when a save of `project` to `path` changes no source (the same folder).
    fn new(project: &Project, path: &Path) -> Option<Self> {
        let path = &crate::core::io::resolve_link(path);
        let new_base = crate::core::library::walk::absolute(
            path.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new(".")),
        );
        let old_base = project
            .base_dir()
            .map(|b| crate::core::library::walk::absolute(&b));
        if !project.is_demo && old_base.as_deref() == Some(new_base.as_path()) {
            return None;
        }
        Some(Rebase {
            old_base,
            new_base,
            demo: project.is_demo,
        })
    }

    /// The new text of `source`, when it changes.
    fn source(&self, source: &str) -> Result<Option<String>, String> {
        if source.trim().is_empty() {
            return Ok(None);
        }
        let embedded = self
            .demo
            .then(|| DEMO_CLIP_FILES.iter().find(|(f, _)| *f == source))
            .flatten();
        let new = if let Some((file, text)) = embedded {
            write_take_beside(&self.new_base, file, text)?
        } else if Path::new(source).is_relative()
            && let Some(old) = &self.old_base
        {
            crate::core::library::source_for(&old.join(source), Some(&self.new_base))
        } else {
            return Ok(None);
        };
        Ok((new != source).then_some(new))
    }
}

/// Writes the embedded take `text` as `file` in `dir` unless that file already holds it; a
/// different file of that name is kept and the take goes to the first free `STEM-N.EXT`. Returns
/// the file name used.
fn write_take_beside(dir: &Path, file: &str, text: &str) -> Result<String, String> {
    let (stem, ext) = file
        .rsplit_once('.')
        .map_or((file, String::new()), |(s, e)| (s, format!(".{e}")));
    let path_of = |stem: &str| dir.join(format!("{stem}{ext}"));
    // A file of another length is another file (not read: it may be anything).
    let holds = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.len() == text.len() as u64)
            && std::fs::read(p).is_ok_and(|b| b == text.as_bytes())
    };
    let stem = crate::core::names::unique_name(stem, "-", |s| {
        let p = path_of(s);
        p.symlink_metadata().is_ok() && !holds(&p)
    });
    let target = path_of(&stem);
    if !holds(&target) {
        crate::core::io::write_atomic(&target, text.as_bytes(), false)
            .map_err(|e| format!("{}: cannot write the take: {e}", target.display()))?;
    }
    Ok(format!("{stem}{ext}"))
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

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("taglane-project-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The demo saved into a folder takes its embedded takes along: every clip loads from the
    /// saved project, there and after opening it again; a different file of a take's name is kept.
    #[test]
    fn the_demo_saved_into_a_folder_keeps_its_animation() {
        let dir = scratch("demo");
        let (first, _) = DEMO_CLIP_FILES[0];
        std::fs::write(dir.join(first), "not the take").unwrap();
        let mut project = Project::demo();
        let path = dir.join("mine.taglane.json");
        project.save_to(&path).unwrap();
        assert!(!project.is_demo && !project.history.is_dirty());
        let (reopened, warnings) = Project::load(&path).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        for p in [&project, &reopened] {
            for (i, info) in p.doc.clips.iter().enumerate() {
                let anim = p.load_clip(i as ClipId).unwrap();
                assert_eq!(anim.frame_count as u32, info.frames, "{}", info.name);
            }
        }
        assert_eq!(
            std::fs::read_to_string(dir.join(first)).unwrap(),
            "not the take"
        );
        let stem = first.strip_suffix(".bvh").unwrap();
        assert_eq!(
            reopened.doc.clips[0].source.as_deref(),
            Some(format!("{stem}-2.bvh").as_str())
        );
        // Saved again into the same folder: nothing is written twice, no source changes.
        let mut again = reopened.clone();
        again.save_to(&dir.join("again.taglane.json")).unwrap();
        assert_eq!(again.doc.clips, reopened.doc.clips);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A project saved into another folder names the same takes from there.
    #[test]
    fn save_as_into_another_folder_keeps_relative_sources_pointing_at_the_same_files() {
        let dir = scratch("move");
        std::fs::create_dir_all(dir.join("a/takes")).unwrap();
        std::fs::create_dir_all(dir.join("b/deeper")).unwrap();
        let (file, text) = DEMO_CLIP_FILES[1];
        std::fs::write(dir.join("a/takes").join(file), text).unwrap();
        let mut project = Project::demo();
        project.doc.clips.truncate(2);
        project.doc.clips[1].source = Some(format!("takes/{file}"));
        let elsewhere = dir.join("b/deeper/absolute.bvh");
        std::fs::write(&elsewhere, text).unwrap();
        project.doc.clips[0].source = Some(elsewhere.display().to_string());
        project.is_demo = false;
        project.doc.tags.clear();
        project.doc.queries.clear();
        project.save_to(&dir.join("a/p.taglane.json")).unwrap();
        assert_eq!(
            project.doc.clips[1].source.as_deref(),
            Some(format!("takes/{file}").as_str()),
            "same folder: unchanged"
        );
        // A relink before the move, undone after it: the undo names the file it named before.
        std::fs::write(dir.join("a/takes/other.bvh"), text).unwrap();
        project
            .apply(
                Edit::SetClipSource {
                    clip: 1,
                    source: Some("takes/other.bvh".to_owned()),
                },
                "relink",
            )
            .unwrap();
        project
            .save_to(&dir.join("b/deeper/p.taglane.json"))
            .unwrap();
        assert_eq!(
            project.doc.clips[1].source.as_deref(),
            Some("../../a/takes/other.bvh")
        );
        project.history.undo(&mut project.doc).unwrap();
        assert_eq!(
            project.doc.clips[1].source.as_deref(),
            Some(format!("../../a/takes/{file}").as_str())
        );
        assert_eq!(
            project.doc.clips[0].source.as_deref(),
            Some(elsewhere.display().to_string().as_str()),
            "absolute: unchanged"
        );
        let (reopened, _) = Project::load(&dir.join("b/deeper/p.taglane.json")).unwrap();
        for i in 0..2 {
            reopened.load_clip(i).unwrap();
        }
        // A save that fails leaves the sources as they were.
        let before = project.doc.clips.clone();
        assert!(
            project
                .save_to(&dir.join("missing/p.taglane.json"))
                .is_err()
        );
        assert_eq!(project.doc.clips, before);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
