//! Loading and caching the animation of the project's clips, for the pose preview and the
//! compression view.
//!
//! A clip's `source` is a path relative to the project file's folder (or absolute); the embedded
//! demo's sources name entries of `core::project::DEMO_CLIP_FILES`. A file holding several animations (glTF)
//! yields the one named like the project clip. Loading never panics: a missing or broken source
//! becomes an error message naming the file, shown with a "Re-link" button.

use std::collections::HashMap;
use std::sync::Arc;

use crate::core::anim::Clip;
use crate::core::project::Project;
pub use crate::core::project::{ClipRequest, ClipSource, load, resolve};
use crate::core::tags::ClipId;

/// A loaded clip and the version of this load: views key their caches by `(id, version)`, which
/// changes whenever the clip is loaded again (its source changed), never by pointer address.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub id: ClipId,
    pub version: u64,
    pub clip: Arc<Clip>,
}

impl std::ops::Deref for Loaded {
    type Target = Arc<Clip>;

    fn deref(&self) -> &Arc<Clip> {
        &self.clip
    }
}

struct Entry {
    key: String,
    clip: Result<Loaded, String>,
}

/// Loaded clips by project clip id, reloaded when a clip's source changes.
#[derive(Default)]
pub struct AnimCache {
    entries: HashMap<ClipId, Entry>,
}

impl AnimCache {
    /// The animation of clip `clip`, loading it on first use.
    pub fn get(&mut self, project: &Project, clip: ClipId) -> Result<Loaded, String> {
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
        let loaded = load(&request).map(|c| Loaded {
            id: clip,
            version: crate::core::tags::query::next_version(),
            clip: Arc::new(c),
        });
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
    use std::path::PathBuf;

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
