//! Loading and caching the animation of the project's clips, for the pose preview and the
//! compression view.
//!
//! A clip's `source` is a path relative to the project file's folder (or absolute); the embedded
//! demo's sources name entries of [`DEMO_CLIP_FILES`]. A file holding several animations (glTF)
//! yields the one named like the project clip. Loading never panics: a missing or broken source
//! becomes an error message naming the file, shown with a "Re-link" button.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::core::anim::{
    AnimFormat, Clip, ImportOptions, load_animation, load_animation_from_bytes,
};
use crate::core::tags::ClipId;
use crate::ui::project::{DEMO_CLIP_FILES, Project};

/// Where a clip's animation comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClipSource {
    /// An embedded demo BVH: `(file name, text)`.
    Embedded {
        file: &'static str,
        text: &'static str,
    },
    /// A file on disk.
    File(PathBuf),
}

impl ClipSource {
    /// A stable key (cache invalidation when the source changes).
    pub fn key(&self) -> String {
        match self {
            ClipSource::Embedded { file, .. } => format!("demo:{file}"),
            ClipSource::File(p) => format!("file:{}", p.display()),
        }
    }
}

/// Everything needed to load one project clip, independent of the project (for background threads).
#[derive(Debug, Clone, PartialEq)]
pub struct ClipRequest {
    pub clip: ClipId,
    /// The project's name for the clip (picks the animation in multi-animation files).
    pub name: String,
    /// Frames the project expects (a mismatch is reported).
    pub frames: u32,
    pub source: ClipSource,
}

/// Resolves where clip `clip` of `project` comes from.
pub fn resolve(project: &Project, clip: ClipId) -> Result<ClipRequest, String> {
    let info = project
        .doc
        .clips
        .get(clip as usize)
        .ok_or_else(|| format!("no clip {clip} in the project"))?;
    let source = info
        .source
        .as_deref()
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| format!("clip {} has no animation source file", info.name))?;
    let embedded = project
        .is_demo
        .then(|| DEMO_CLIP_FILES.iter().find(|(f, _)| *f == source))
        .flatten();
    let source = match embedded {
        Some((file, text)) => ClipSource::Embedded { file, text },
        None => {
            let p = PathBuf::from(source);
            let p = match project.base_dir() {
                Some(base) if p.is_relative() => base.join(p),
                _ => p,
            };
            ClipSource::File(p)
        }
    };
    Ok(ClipRequest {
        clip,
        name: info.name.clone(),
        frames: info.frames,
        source,
    })
}

/// Loads the animation of a request. Errors name the file and what went wrong.
pub fn load(request: &ClipRequest) -> Result<Clip, String> {
    let options = ImportOptions::default();
    let imported = match &request.source {
        ClipSource::Embedded { file, text } => {
            let stem = file.trim_end_matches(".bvh");
            load_animation_from_bytes(text.as_bytes(), AnimFormat::Bvh, stem, None, &options)
                .map_err(|e| format!("{file}: {e}"))?
        }
        ClipSource::File(path) => {
            if !path.exists() {
                return Err(format!("{}: the file does not exist", path.display()));
            }
            load_animation(path, &options).map_err(|e| e.to_string())?
        }
    };
    let file = match &request.source {
        ClipSource::Embedded { file, .. } => (*file).to_owned(),
        ClipSource::File(p) => p.display().to_string(),
    };
    let mut clips = imported.clips;
    let index = if clips.len() == 1 {
        Some(0)
    } else {
        clips
            .iter()
            .position(|c| c.name == request.name)
            .or_else(|| {
                // Imports rename duplicates `NAME_2`, `NAME_3`, ...: strip such a suffix.
                let base = request.name.rsplit_once('_').map(|(b, _)| b)?;
                clips.iter().position(|c| c.name == base)
            })
    };
    match index {
        Some(i) if i < clips.len() => Ok(clips.swap_remove(i)),
        _ => Err(format!(
            "{file}: no animation named {:?} (the file has {})",
            request.name,
            clips
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

struct Entry {
    key: String,
    clip: Result<Arc<Clip>, String>,
}

/// Loaded clips by project clip id, reloaded when a clip's source changes.
#[derive(Default)]
pub struct AnimCache {
    entries: HashMap<ClipId, Entry>,
}

impl AnimCache {
    /// The animation of clip `clip`, loading it on first use.
    pub fn get(&mut self, project: &Project, clip: ClipId) -> Result<Arc<Clip>, String> {
        let request = resolve(project, clip)?;
        let key = format!(
            "{}|{}|{}",
            request.source.key(),
            request.name,
            request.frames
        );
        if let Some(e) = self.entries.get(&clip)
            && e.key == key
        {
            return e.clip.clone();
        }
        let loaded = load(&request).map(Arc::new);
        self.entries.insert(
            clip,
            Entry {
                key,
                clip: loaded.clone(),
            },
        );
        loaded
    }

    /// Forgets every loaded clip (e.g. after a file changed on disk).
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_every_demo_clip() {
        let project = Project::demo();
        let mut cache = AnimCache::default();
        for (i, info) in project.doc.clips.iter().enumerate() {
            let clip = cache.get(&project, i as ClipId).unwrap();
            assert_eq!(clip.frame_count, info.frames as usize, "{}", info.name);
        }
    }

    #[test]
    fn a_missing_source_is_an_error_naming_the_file() {
        let mut project = Project::demo();
        project.is_demo = false;
        project.path = Some(PathBuf::from("/nonexistent/dir/p.taglane.json"));
        let mut cache = AnimCache::default();
        let e = cache.get(&project, 0).unwrap_err();
        assert!(e.contains("/nonexistent/dir/walk_male_01.bvh"), "{e}");
        project.doc.clips[0].source = None;
        assert!(
            cache
                .get(&project, 0)
                .unwrap_err()
                .contains("no animation source")
        );
        assert!(cache.get(&project, 999).is_err());
    }

    #[test]
    fn a_broken_file_is_an_error() {
        let dir = std::env::temp_dir().join(format!("taglane-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("walk_male_01.bvh"), "HIERARCHY\nROOT x {\n").unwrap();
        let mut project = Project::demo();
        project.is_demo = false;
        project.path = Some(dir.join("p.taglane.json"));
        let e = AnimCache::default().get(&project, 0).unwrap_err();
        assert!(e.contains("walk_male_01.bvh"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
