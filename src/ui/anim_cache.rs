//! The animation of the project's clips for the app, loaded lazily in the background within a
//! memory budget (the core's [`AnimStore`]: least recently used clips are evicted above it).
//!
//! A clip's `source` is a path relative to the project file's folder (or absolute); the embedded
//! demo's sources name entries of `core::project::DEMO_CLIP_FILES` and load at once (they are tiny).
//! A file holding several animations (glTF) yields the one named like the project clip. Loading
//! never panics: a missing or broken source becomes an error message naming the file, shown with a
//! "Re-link" button. Views key what they derive from a clip by `(clip id, load version)`.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use crate::core::anim::Clip;
use crate::core::library::{AnimStore, ClipStatus, StoreSettings, StoreSnapshot};
use crate::core::project::Project;
pub use crate::core::project::{ClipRequest, ClipSource, load, resolve};
use crate::core::tags::ClipId;

/// A loaded clip and the version of this load: views key their caches by `(id, version)`, which
/// changes whenever the clip is loaded again (its source or unit changed, or it was evicted and
/// reloaded), never by pointer address.
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

/// Where a clip's animation is.
#[derive(Debug, Clone)]
pub enum AnimState {
    Ready(Loaded),
    /// Queued or loading in the background.
    Pending,
    /// The load failed: why (naming the file).
    Failed(String),
}

impl AnimState {
    pub fn ready(&self) -> Option<&Loaded> {
        match self {
            AnimState::Ready(l) => Some(l),
            _ => None,
        }
    }
}

/// The app's loaded animations.
pub struct AnimCache {
    store: AnimStore,
    /// The last clip handed out for each id, and its version. Weak: a clip the store evicts is
    /// freed (a strong copy here kept every clip ever shown in memory, past the budget).
    versions: HashMap<ClipId, (Weak<Clip>, u64)>,
    /// The clips asked for with [`AnimCache::fetch`] since [`AnimCache::begin_frame`]: the clips
    /// on screen, which the store keeps at the next frame's start.
    shown: Vec<ClipId>,
    repaint_set: bool,
}

impl Default for AnimCache {
    fn default() -> Self {
        Self::with_budget(crate::core::library::DEFAULT_BUDGET_BYTES)
    }
}

impl AnimCache {
    /// A cache keeping at most `budget_bytes` of animation loaded.
    pub fn with_budget(budget_bytes: u64) -> Self {
        Self {
            store: AnimStore::new(StoreSettings {
                budget_bytes,
                ..StoreSettings::default()
            }),
            versions: HashMap::new(),
            shown: Vec::new(),
            repaint_set: false,
        }
    }

    /// Wakes the UI whenever a load finishes (set once).
    pub fn repaint_on_load(&mut self, ctx: &egui::Context) {
        if !self.repaint_set {
            let ctx = ctx.clone();
            self.store.set_on_change(move |_| ctx.request_repaint());
            self.repaint_set = true;
        }
    }

    /// Starts a frame: the clips fetched during the last one are the clips on screen, and the
    /// store keeps them even when together they do not fit its budget (two shown side by side,
    /// the blend's clip B with the clip, were otherwise loaded in turn, each evicting the other,
    /// every frame). Call once a frame, before any [`AnimCache::fetch`].
    pub fn begin_frame(&mut self) {
        self.store.set_in_use(&self.shown);
        self.shown.clear();
    }

    /// The animation of clip `clip`: ready, or queued for loading in the background (embedded demo
    /// clips load at once). A clip fetched is on screen until the next frame's
    /// [`AnimCache::begin_frame`].
    pub fn fetch(&mut self, project: &Project, clip: ClipId) -> AnimState {
        if !self.shown.contains(&clip) {
            self.shown.push(clip);
        }
        let request = match resolve(project, clip) {
            Ok(r) => r,
            Err(e) => return AnimState::Failed(e),
        };
        let status = if matches!(request.source, ClipSource::Embedded { .. }) {
            match self.store.load_blocking(&request) {
                Ok(c) => ClipStatus::Ready(c),
                Err(e) => ClipStatus::Failed(e),
            }
        } else {
            self.store.request(&request)
        };
        match status {
            ClipStatus::Ready(c) => AnimState::Ready(self.versioned(clip, c)),
            ClipStatus::Failed(e) => AnimState::Failed(e),
            ClipStatus::NotLoaded | ClipStatus::Queued | ClipStatus::Loading => AnimState::Pending,
        }
    }

    /// The animation of clip `clip`, waiting for it (tests, exports).
    pub fn get(&mut self, project: &Project, clip: ClipId) -> Result<Loaded, String> {
        let request = resolve(project, clip)?;
        let c = self.store.load_blocking(&request)?;
        Ok(self.versioned(clip, c))
    }

    fn versioned(&mut self, id: ClipId, clip: Arc<Clip>) -> Loaded {
        // While this map holds a `Weak` of a clip, its allocation is not reused, so a freed
        // clip's address never matches a new one.
        let version = match self.versions.get(&id) {
            Some((last, v)) if std::ptr::eq(last.as_ptr(), Arc::as_ptr(&clip)) => *v,
            _ => {
                let v = crate::core::tags::query::next_version();
                self.versions.insert(id, (Arc::downgrade(&clip), v));
                v
            }
        };
        Loaded { id, version, clip }
    }

    /// Where clip `clip` is, without asking for it (the clip browser's indicator).
    pub fn status(&self, clip: ClipId) -> ClipStatus {
        self.store.status(clip)
    }

    /// What is loaded, and the memory used against the budget.
    pub fn snapshot(&self) -> StoreSnapshot {
        self.store.snapshot()
    }

    /// Sets the memory budget, evicting least recently used clips to fit.
    pub fn set_budget(&mut self, bytes: u64) {
        self.store.set_budget(bytes);
    }

    pub fn budget(&self) -> u64 {
        self.store.budget()
    }

    /// A number that changes whenever the store does.
    pub fn generation(&self) -> u64 {
        self.store.generation()
    }

    /// Forgets every loaded clip (a project was closed, or files changed on disk).
    pub fn clear(&mut self) {
        self.shown.clear();
        self.store.set_in_use(&[]);
        self.store.clear();
        self.versions.clear();
    }

    /// Forgets clip `clip`: the next fetch loads it again (a re-link to the same file, once
    /// the file is back, retries instead of showing the failure kept for that file).
    pub fn forget(&mut self, clip: ClipId) {
        self.store.forget(clip);
        self.versions.remove(&clip);
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
            // The demo loads at once, and the same load keeps its version.
            let again = cache.fetch(&project, i as ClipId);
            assert_eq!(again.ready().map(|l| l.version), Some(clip.version));
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
    fn files_load_in_the_background_and_a_broken_one_is_an_error() {
        let dir = std::env::temp_dir().join(format!("taglane-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("walk_male_01.bvh"), "HIERARCHY\nROOT x {\n").unwrap();
        std::fs::write(
            dir.join("run_male_01.bvh"),
            crate::core::project::DEMO_CLIP_FILES[1].1,
        )
        .unwrap();
        let mut project = Project::demo();
        project.is_demo = false;
        project.path = Some(dir.join("p.taglane.json"));
        let mut cache = AnimCache::default();
        let e = cache.get(&project, 0).unwrap_err();
        assert!(e.contains("walk_male_01.bvh"), "{e}");
        // The first fetch of a file queues it; it is ready once the worker is done.
        let first = cache.fetch(&project, 1);
        assert!(matches!(first, AnimState::Pending | AnimState::Ready(_)));
        let loaded = cache.get(&project, 1).unwrap();
        assert!(matches!(cache.fetch(&project, 1), AnimState::Ready(_)));
        assert!(cache.snapshot().used_bytes > 0);
        // A new unit is a new load, with a new version.
        project.doc.clips[1].unit_cm = Some(5.644);
        let again = cache.get(&project, 1).unwrap();
        assert_ne!(again.version, loaded.version);
        assert_eq!(again.unit_cm, 5.644);
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A take that failed keeps failing for that file until the clip is forgotten (a re-link to
    /// the same path does so): then the file, put back meanwhile, loads.
    #[test]
    fn a_forgotten_clip_loads_again() {
        let dir = std::env::temp_dir().join(format!("taglane-cache-forget-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut project = Project::demo();
        project.is_demo = false;
        project.path = Some(dir.join("p.taglane.json"));
        let mut cache = AnimCache::default();
        assert!(cache.get(&project, 0).is_err(), "the take is not there yet");
        std::fs::write(
            dir.join("walk_male_01.bvh"),
            crate::core::project::DEMO_CLIP_FILES[0].1,
        )
        .unwrap();
        assert!(cache.get(&project, 0).is_err(), "the failure is kept");
        cache.forget(0);
        assert!(cache.get(&project, 0).is_ok());
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Two clips on screen that do not fit the budget together stay loaded from frame to frame
    /// (each was evicted by the other's load, and loaded again every frame); once one leaves the
    /// screen it is unloaded.
    #[test]
    fn clips_on_screen_stay_loaded_past_the_budget() {
        let project = Project::demo();
        let mut cache = AnimCache::default();
        cache.set_budget(0);
        let version = |cache: &mut AnimCache, clip| match cache.fetch(&project, clip) {
            AnimState::Ready(l) => l.version,
            other => panic!("clip {clip}: {other:?}"),
        };
        // The first frame loads both (the second load evicts the first: nothing was on screen
        // yet); from the second on, both are on screen.
        cache.begin_frame();
        let _ = (version(&mut cache, 0), version(&mut cache, 1));
        cache.begin_frame();
        let first = (version(&mut cache, 0), version(&mut cache, 1));
        for _ in 0..3 {
            cache.begin_frame();
            assert_eq!((version(&mut cache, 0), version(&mut cache, 1)), first);
        }
        // Clip 1 left the screen: gone at the next frame, clip 0 kept.
        cache.begin_frame();
        assert_eq!(version(&mut cache, 0), first.0);
        cache.begin_frame();
        let loaded: Vec<ClipId> = cache.snapshot().loaded.iter().map(|l| l.clip).collect();
        assert_eq!(loaded, [0]);
    }

    /// A clip the store evicted is freed: the cache's note of its version does not keep it.
    #[test]
    fn an_evicted_clip_is_freed() {
        let project = Project::demo();
        let mut cache = AnimCache::default();
        let loaded = cache.get(&project, 0).unwrap();
        let weak = Arc::downgrade(&loaded.clip);
        let version = loaded.version;
        drop(loaded);
        // The same clip handed out again keeps its version.
        assert_eq!(cache.get(&project, 0).unwrap().version, version);
        cache.set_budget(0);
        cache.get(&project, 1).unwrap();
        assert!(
            weak.upgrade().is_none(),
            "the evicted clip is still in memory"
        );
        // Loaded again: a new version.
        assert_ne!(cache.get(&project, 0).unwrap().version, version);
    }
}
