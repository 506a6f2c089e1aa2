//! Features of many clips at once, for a project or for loose clips: built on every core (rayon),
//! with a progress callback and a cancel flag, cached per clip for project files; and the edit that
//! accepts matches as ranges of a tag.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

use super::cache::{CACHE_DIR, CacheOutcome, cached_features};
use super::features::{ClipFeatures, JointOverrides, clip_features_by_name};
use super::search::Match;
use crate::core::anim::{AnimFormat, Clip};
use crate::core::doc::{Edit, canonicalize};
use crate::core::project::{ClipRequest, ClipSource, Project, load, resolve};
use crate::core::tags::{ClipId, Range, Tag, TagDocument};

/// The work was cancelled through the cancel flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cancelled")]
pub struct Cancelled;

/// Centimetres per file unit by the format's convention: BVH 1 (centimetres), glTF 100 (metres).
pub fn convention_unit_cm(path: &Path) -> f32 {
    match AnimFormat::from_path(path) {
        Some(AnimFormat::Glb | AnimFormat::Gltf) => 100.0,
        _ => 1.0,
    }
}

/// One project clip whose features are wanted.
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureJob {
    /// How to load its animation.
    pub request: ClipRequest,
    /// Centimetres per file unit (the clip's `unit_cm` in the project); `None`: the format's
    /// convention.
    pub unit_cm: Option<f32>,
    /// The clip as the project has it (its length and rate): a take that no longer matches is
    /// refused (`core::cut::take_changed`), as `cut` refuses it, instead of searching other
    /// motion. `None` checks nothing.
    pub tagged_on: Option<crate::core::tags::ClipInfo>,
}

impl FeatureJob {
    /// One job per clip of `project`, in document order (an `Err` for a clip without a usable
    /// source).
    pub fn for_project(project: &Project) -> Vec<Result<FeatureJob, String>> {
        (0..project.doc.clips.len())
            .map(|c| {
                Ok(FeatureJob {
                    request: resolve(project, c as ClipId)?,
                    unit_cm: project.doc.clips[c].unit_cm,
                    tagged_on: Some(project.doc.clips[c].clone()),
                })
            })
            .collect()
    }

    /// The unit the clip's features are built with.
    pub fn effective_unit_cm(&self) -> f32 {
        match (&self.unit_cm, &self.request.source) {
            (Some(u), _) => *u,
            (None, ClipSource::FileWithUnit { unit_cm, .. }) => *unit_cm,
            (None, ClipSource::File(p)) => convention_unit_cm(p),
            (None, ClipSource::Embedded { unit_cm, .. }) => unit_cm.unwrap_or(1.0),
        }
    }
}

/// How features are built.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeatureOptions {
    pub joints: JointOverrides,
    /// Folder of the per-clip cache files; `None` builds without a cache.
    pub cache_dir: Option<PathBuf>,
}

impl FeatureOptions {
    /// Options caching in `project`'s folder ([`CACHE_DIR`] beside the project file); no cache for
    /// a project that was never saved.
    pub fn for_project(project: &Project, joints: JointOverrides) -> Self {
        Self {
            joints,
            cache_dir: project.base_dir().map(|d| d.join(CACHE_DIR)),
        }
    }
}

/// The features of one clip, or why there are none.
pub type FeatureResult = Result<(ClipFeatures, CacheOutcome), String>;

/// Builds (or reads from the cache) the features of one project clip. Its animation is loaded by
/// `core::project::load` and given the job's unit.
pub fn job_features(job: &FeatureJob, options: &FeatureOptions) -> FeatureResult {
    let (f, outcome) = job_features_unchecked(job, options)?;
    // Values that cannot be compared (a position past float range at a huge unit) make this
    // clip a hole in the index, not the whole search a failure.
    f.validate()
        .map_err(|e| format!("its motion gives features that cannot be compared: {e}"))?;
    if let Some(info) = &job.tagged_on
        && let Some(e) = crate::core::cut::take_changed(info, f.frames, f.fps)
    {
        return Err(e);
    }
    Ok((f, outcome))
}

fn job_features_unchecked(job: &FeatureJob, options: &FeatureOptions) -> FeatureResult {
    let unit_cm = job.effective_unit_cm();
    let load_with_unit = || -> Result<Clip, String> {
        let mut clip = load(&job.request)?;
        clip.unit_cm = unit_cm;
        Ok(clip)
    };
    match (&job.request.source, &options.cache_dir) {
        (ClipSource::File(path) | ClipSource::FileWithUnit { path, .. }, Some(dir)) => {
            cached_features(
                path,
                &job.request.name,
                dir,
                unit_cm,
                &options.joints,
                load_with_unit,
            )
        }
        _ => {
            let clip = load_with_unit()?;
            let f = clip_features_by_name(&clip, &options.joints).map_err(|e| {
                let file = match &job.request.source {
                    ClipSource::File(p) | ClipSource::FileWithUnit { path: p, .. } => {
                        p.display().to_string()
                    }
                    ClipSource::Embedded { file, .. } => (*file).to_owned(),
                };
                format!("{file}: {e}")
            })?;
            Ok((f, CacheOutcome::Uncached))
        }
    }
}

/// Runs `work` on every item on all cores, calling `progress(done, total)` after each item (from
/// whichever thread finished it). Items not started when `cancel` is set are skipped and the whole
/// call returns [`Cancelled`].
pub fn par_map_with_progress<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &AtomicBool,
) -> Result<Vec<R>, Cancelled> {
    let total = items.len();
    let done = AtomicUsize::new(0);
    let out: Vec<Option<R>> = items
        .par_iter()
        .map(|item| {
            if cancel.load(Ordering::Relaxed) {
                return None;
            }
            let r = work(item);
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            Some(r)
        })
        .collect();
    if cancel.load(Ordering::Relaxed) {
        return Err(Cancelled);
    }
    out.into_iter().map(|r| r.ok_or(Cancelled)).collect()
}

/// The features of every job (one result per job, in order), built on all cores.
pub fn build_features_par(
    jobs: &[Result<FeatureJob, String>],
    options: &FeatureOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &AtomicBool,
) -> Result<Vec<FeatureResult>, Cancelled> {
    par_map_with_progress(
        jobs,
        |job| match job {
            Ok(job) => job_features(job, options),
            Err(e) => Err(e.clone()),
        },
        progress,
        cancel,
    )
}

/// The features of every clip of `project` (one result per document clip, in order), cached in
/// the project's folder.
pub fn project_features(
    project: &Project,
    joints: &JointOverrides,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &AtomicBool,
) -> Result<Vec<FeatureResult>, Cancelled> {
    let options = FeatureOptions::for_project(project, joints.clone());
    build_features_par(
        &FeatureJob::for_project(project),
        &options,
        progress,
        cancel,
    )
}

/// The features of clips already loaded (loose files), built on all cores.
pub fn clips_features_par(
    clips: &[Clip],
    joints: &JointOverrides,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &AtomicBool,
) -> Result<Vec<Result<ClipFeatures, String>>, Cancelled> {
    par_map_with_progress(
        clips,
        |c| clip_features_by_name(c, joints),
        progress,
        cancel,
    )
}

/// The one edit that adds the ranges of `matches` to the tag named `tag` (created at the end of the
/// lane order when the document has none). `matches[i].clip` is the document's clip id (as with
/// indexes built from [`project_features`], whose clip numbers are document order). Ranges are
/// merged with the tag's existing ones and clamped to each clip's frames; an empty `matches` gives
/// an empty batch.
pub fn accept_matches(doc: &TagDocument, tag: &str, matches: &[Match]) -> Result<Edit, String> {
    if tag.trim().is_empty() {
        return Err("a tag name cannot be empty".to_owned());
    }
    if matches.is_empty() {
        return Ok(Edit::Batch(Vec::new()));
    }
    let mut per_clip: std::collections::BTreeMap<ClipId, Vec<Range>> = Default::default();
    for m in matches {
        let info = doc.clips.get(m.clip).ok_or_else(|| {
            format!(
                "match on clip {}, the document has {}",
                m.clip,
                doc.clips.len()
            )
        })?;
        if m.start >= m.stop || m.stop > info.frames as usize {
            return Err(format!(
                "match {}:{} lies outside clip `{}` ({} frames)",
                m.start, m.stop, info.name, info.frames
            ));
        }
        per_clip
            .entry(m.clip as ClipId)
            .or_default()
            .push(Range::new(m.start as u32, m.stop as u32));
    }
    match doc.tags.iter().position(|t| t.name == tag) {
        Some(index) => {
            let existing = &doc.tags[index].ranges;
            // Clips whose matches the tag holds already are left out: accepting them again is
            // no change, and no undo step (an empty batch when none is left).
            let edits = per_clip
                .into_iter()
                .filter_map(|(clip, mut ranges)| {
                    let before = existing.get(&clip).unwrap_or(&[]);
                    ranges.extend(before.iter().copied());
                    canonicalize(&mut ranges, doc.clips[clip as usize].frames);
                    (ranges.as_slice() != before).then_some(Edit::SetRanges {
                        tag: index,
                        clip,
                        ranges,
                    })
                })
                .collect();
            Ok(Edit::Batch(edits))
        }
        None => {
            let mut ranges = per_clip;
            for (clip, list) in ranges.iter_mut() {
                canonicalize(list, doc.clips[*clip as usize].frames);
            }
            Ok(Edit::Batch(vec![Edit::InsertTag {
                index: doc.tags.len(),
                tag: Tag {
                    ranges: ranges.into(),
                    color: Some(doc.new_tag_color()),
                    ..Tag::new(tag)
                },
            }]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::demo::demo_files;
    use std::sync::Mutex;

    fn demo_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("taglane-simlib-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in demo_files() {
            std::fs::write(dir.join(file), text).unwrap();
        }
        dir
    }

    /// A clip whose features are not finite (positions past float range) is a hole in the
    /// index, its error naming why; the other clips still have theirs (the whole search failed).
    #[test]
    fn a_clip_of_features_past_float_range_is_a_hole() {
        let dir = demo_dir("infinite");
        let (mut project, _) = Project::load(&dir.join("demo.taglane.json")).unwrap();
        project.doc.clips[5].unit_cm = Some(1e38);
        let joints = JointOverrides::default();
        let all = project_features(&project, &joints, &|_, _| {}, &AtomicBool::new(false)).unwrap();
        for (c, r) in all.iter().enumerate() {
            match r {
                Err(e) if c == 5 => assert!(e.contains("cannot be compared"), "{e}"),
                Err(e) => panic!("clip {c}: {e}"),
                Ok(_) => assert_ne!(c, 5, "non-finite features were kept"),
            }
        }
        // Refused again from the cache, without loading the take again.
        let options = FeatureOptions::for_project(&project, joints.clone());
        let jobs = FeatureJob::for_project(&project);
        let job = jobs[5].as_ref().unwrap();
        let (f, outcome) = job_features_unchecked(job, &options).unwrap();
        assert_eq!(outcome, CacheOutcome::Hit);
        assert!(f.validate().is_err());
        let e = job_features(job, &options).unwrap_err();
        assert!(e.contains("cannot be compared"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn project_features_report_progress_use_the_cache_and_can_be_cancelled() {
        let dir = demo_dir("project");
        let (mut project, _) = Project::load(&dir.join("demo.taglane.json")).unwrap();
        // One clip's source missing, one declared in inches.
        project.doc.clips[4].source = Some("gone.bvh".into());
        project.doc.clips[6].unit_cm = Some(2.54);
        let n = project.doc.clips.len();
        let calls = Mutex::new(Vec::new());
        let progress = |done: usize, total: usize| calls.lock().unwrap().push((done, total));
        let joints = JointOverrides::default();
        let first =
            project_features(&project, &joints, &progress, &AtomicBool::new(false)).unwrap();
        assert_eq!(first.len(), n);
        let mut seen = calls.lock().unwrap().clone();
        seen.sort();
        assert_eq!(seen, (1..=n).map(|d| (d, n)).collect::<Vec<_>>());
        for (c, r) in first.iter().enumerate() {
            if c == 4 {
                assert!(r.as_ref().unwrap_err().contains("gone.bvh"), "{r:?}");
                continue;
            }
            let (f, o) = r.as_ref().unwrap();
            assert_eq!(f.frames, project.doc.clips[c].frames as usize);
            assert!(matches!(o, CacheOutcome::Built { .. }), "{o:?}");
        }
        // The unit is the project's: the inches clip's lengths are 2.54 times the plain build.
        let plain = {
            let mut centimetres = project.clone();
            centimetres.doc.clips[6].unit_cm = None;
            let clip = load(&resolve(&centimetres, 6).unwrap()).unwrap();
            clip_features_by_name(&clip, &joints).unwrap()
        };
        let inches = &first[6].as_ref().unwrap().0;
        assert!((inches.values[1] - 2.54 * plain.values[1]).abs() < 1e-3);
        // Second run: every loadable clip from the cache, the same features.
        let again =
            project_features(&project, &joints, &|_, _| {}, &AtomicBool::new(false)).unwrap();
        for (a, b) in first.iter().zip(&again) {
            match (a, b) {
                (Ok((fa, _)), Ok((fb, ob))) => {
                    assert_eq!(fa, fb);
                    assert_eq!(*ob, CacheOutcome::Hit);
                }
                (Err(_), Err(_)) => {}
                _ => panic!("{a:?} vs {b:?}"),
            }
        }
        assert_eq!(
            project_features(&project, &joints, &|_, _| {}, &AtomicBool::new(true)),
            Err(Cancelled)
        );
        // The embedded demo builds without a cache.
        let demo = Project::demo();
        let built = project_features(&demo, &joints, &|_, _| {}, &AtomicBool::new(false)).unwrap();
        assert!(
            built
                .iter()
                .all(|r| matches!(r, Ok((_, CacheOutcome::Uncached))))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn accepted_matches_are_one_undoable_edit() {
        let mut project = Project::demo();
        let before = project.doc.clone();
        let m = |clip, start, stop| Match {
            clip,
            start,
            stop,
            score: 0.1,
        };
        // A new tag: inserted at the end, ranges per clip canonical.
        let edit = accept_matches(
            &project.doc,
            "Stride",
            &[m(0, 40, 70), m(0, 10, 30), m(3, 5, 35), m(0, 28, 35)],
        )
        .unwrap();
        project.apply(edit, "accept matches").unwrap();
        let tag = project.doc.tags.last().unwrap();
        assert_eq!(tag.name, "Stride");
        assert_eq!(tag.ranges[&0], [Range::new(10, 35), Range::new(40, 70)]);
        assert_eq!(tag.ranges[&3], [Range::new(5, 35)]);
        assert!(project.history.undo(&mut project.doc).is_some());
        assert_eq!(project.doc.tags, before.tags);
        // An existing tag: the matches are added to its ranges, in one step.
        let walking = project
            .doc
            .tags
            .iter()
            .position(|t| t.name == "Idle")
            .unwrap();
        let old = project.doc.tags[walking].ranges.clone();
        let edit = accept_matches(&project.doc, "Idle", &[m(1, 50, 80), m(2, 140, 151)]).unwrap();
        project.apply(edit, "accept matches").unwrap();
        let now = &project.doc.tags[walking].ranges;
        assert_eq!(now[&1], [Range::new(50, 80)]);
        assert_eq!(now[&2], old[&2]);
        // The same matches again: nothing to add, an empty edit (no undo step).
        assert!(
            accept_matches(&project.doc, "Idle", &[m(1, 50, 80), m(2, 140, 151)])
                .unwrap()
                .is_empty()
        );
        // A part of them new: only that clip's ranges change.
        let again = accept_matches(&project.doc, "Idle", &[m(1, 50, 80), m(1, 90, 95)]).unwrap();
        assert!(matches!(&again, Edit::Batch(b) if b.len() == 1));
        assert!(project.history.undo(&mut project.doc).is_some());
        assert_eq!(project.doc.tags[walking].ranges, old);
        // Bad matches and names are errors.
        assert!(accept_matches(&project.doc, "X", &[m(99, 0, 1)]).is_err());
        assert!(accept_matches(&project.doc, "X", &[m(0, 5, 100_000)]).is_err());
        assert!(accept_matches(&project.doc, " ", &[m(0, 5, 10)]).is_err());
        assert!(accept_matches(&project.doc, "X", &[]).unwrap().is_empty());
    }
}
