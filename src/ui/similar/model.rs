//! The logic of the "Find similar" tool, without egui: where the query range comes from, the
//! background search (the features of every clip, kept in memory between searches and cached on
//! disk by the core; the index; the search; the thumbnail poses), the ranked matches (checks, the
//! threshold, stepping, the timeline lanes, the one accepting edit), the time map from a match to
//! its query, and the poses drawn: side views for thumbnails and the query's pose aligned at the
//! root on a match for the viewport.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use glam::{Quat, Vec3};

use crate::core::anim::{
    Clip, RotationInterp, SampleSettings, Transform, local_to_model, sample_clip,
};
use crate::core::doc::Edit;
use crate::core::project::{Project, load};
use crate::core::similar::{
    CacheOutcome, ClipFeatures, FeatureJob, FeatureJoints, FeatureOptions, JointOverrides, Match,
    Query, SearchError, SearchIndex, SearchSettings, Weights, accept_matches, build_features_par,
    par_map_with_progress,
};
use crate::core::tags::{ClipId, Range, Tag, TagDocument};

/// Poses per thumbnail strip.
pub const THUMBNAIL_POSES: usize = 5;

/// Where the query range was taken from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryFrom {
    /// The selected ranges (their hull on the current clip).
    Selection,
    /// From the mark-in frame to the playhead.
    MarkIn,
}

impl QueryFrom {
    pub fn describe(self) -> &'static str {
        match self {
            QueryFrom::Selection => "the selection",
            QueryFrom::MarkIn => "mark in to the playhead",
        }
    }
}

/// A query: frames `range` of document clip `clip`.
#[derive(Debug, Clone, PartialEq)]
pub struct QuerySpec {
    pub clip: ClipId,
    pub range: Range,
    /// The tag of the selected range it was taken from: the default tag matches are accepted as.
    pub tag: Option<String>,
    pub from: QueryFrom,
}

impl QuerySpec {
    /// What the query is, for lane labels: the tag (or the clip) and the range,
    /// `Walking [120, 150)`.
    pub fn short(&self, doc: &TagDocument) -> String {
        let what = self
            .tag
            .clone()
            .unwrap_or_else(|| clip_name(doc, self.clip));
        format!("{what} [{}, {})", self.range.start, self.range.stop)
    }

    /// The query in full: `Walking [120, 150) of walk_male_01 (30 frames, 1.00 s, from the
    /// selection)`.
    pub fn describe(&self, doc: &TagDocument) -> String {
        let frames = self.range.stop - self.range.start;
        let fps = doc.clips.get(self.clip as usize).map_or(30.0, |c| c.fps);
        let what = match &self.tag {
            Some(t) => format!("{t} [{}, {}) of ", self.range.start, self.range.stop),
            None => format!("[{}, {}) of ", self.range.start, self.range.stop),
        };
        format!(
            "{what}{} ({frames} frames, {:.2} s, from {})",
            clip_name(doc, self.clip),
            f64::from(frames) / f64::from(fps.max(1e-3)),
            self.from.describe()
        )
    }
}

/// The clip's name, or `clip N` when the document has no such clip.
pub fn clip_name(doc: &TagDocument, clip: ClipId) -> String {
    doc.clips
        .get(clip as usize)
        .map_or_else(|| format!("clip {clip}"), |c| c.name.clone())
}

/// What of the app a query is taken from.
#[derive(Debug, Clone, Copy)]
pub struct AppView<'a> {
    /// The clip on the timeline.
    pub clip: ClipId,
    /// Selected ranges (tag index, range) on that clip.
    pub selection: &'a [(usize, Range)],
    pub mark_in: Option<u32>,
    /// Playhead, frames.
    pub playhead: f64,
    pub active_tag: Option<usize>,
}

/// Why a query cannot be taken from the app now.
pub const NO_QUERY: &str = "select a range on the timeline first (click a range, or drag on a lane \
     to make one), or mark in (I) and move the playhead";

/// The query range: the selected ranges (their hull, the tag of the first one), else mark in to
/// the playhead (either order, both frames included).
pub fn query_from(doc: &TagDocument, view: &AppView<'_>) -> Result<QuerySpec, String> {
    let info = doc
        .clips
        .get(view.clip as usize)
        .ok_or_else(|| "the project has no clip: import animation first".to_owned())?;
    let first = view
        .selection
        .iter()
        .min_by_key(|(_, r)| (r.start, r.stop))
        .copied();
    let hull = view
        .selection
        .iter()
        .map(|(_, r)| *r)
        .reduce(|a, b| Range::new(a.start.min(b.start), a.stop.max(b.stop)));
    let (range, tag, from) = match (first, hull, view.mark_in) {
        (Some((t, _)), Some(h), _) => (
            h,
            doc.tags.get(t).map(|t| t.name.clone()),
            QueryFrom::Selection,
        ),
        (_, _, Some(m)) => {
            let p = view.playhead.floor().max(0.0) as u32;
            (Range::new(m.min(p), m.max(p) + 1), None, QueryFrom::MarkIn)
        }
        _ => return Err(NO_QUERY.to_owned()),
    };
    let range = Range::new(range.start, range.stop.min(info.frames));
    if range.start >= range.stop {
        return Err(format!(
            "the query range [{}, {}) is empty or outside `{}` ({} frames)",
            range.start, range.stop, info.name, info.frames
        ));
    }
    Ok(QuerySpec {
        clip: view.clip,
        range,
        tag,
        from,
    })
}

/// A number that changes whenever what features are built from changes: the project's folder,
/// the clips' data (its version, which every edit of a clip's source, unit or length renews, and
/// not a rename: the results show names as they are now) and the joint overrides. Called every
/// frame the results show, so it hashes no clip.
pub fn features_key(project: &Project, joints: &JointOverrides) -> u64 {
    let mut h = DefaultHasher::new();
    project.base_dir().hash(&mut h);
    project.is_demo.hash(&mut h);
    joints.key().hash(&mut h);
    project.doc.clip_data_version.hash(&mut h);
    project.doc.clips.len().hash(&mut h);
    h.finish()
}

/// The features of every clip of a project, kept between searches.
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureSet {
    /// [`features_key`] of the project they were built for.
    pub key: u64,
    /// One entry per document clip; `None` for a clip without features.
    pub clips: Vec<Option<ClipFeatures>>,
    /// The clips without features, and why.
    pub failed: Vec<(ClipId, String)>,
    /// Clips read from the on-disk cache, and built.
    pub from_cache: usize,
    pub built: usize,
    /// Cache files that could not be written (the features are good).
    pub cache_warnings: Vec<String>,
}

/// A search to run in the background: everything it needs, owned.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub query: QuerySpec,
    /// How to load each document clip (clip ids are positions).
    pub jobs: Vec<Result<FeatureJob, String>>,
    pub options: FeatureOptions,
    pub weights: Weights,
    pub settings: SearchSettings,
    /// Features of an earlier search on the same clips (their key is `features_key`).
    pub features: Option<Arc<FeatureSet>>,
    pub features_key: u64,
    /// Poses per thumbnail strip.
    pub thumbnail_poses: usize,
}

impl SearchRequest {
    /// A search of `query` over every clip of `project`, reusing `features` when they were built
    /// for the same clips.
    pub fn new(
        project: &Project,
        query: QuerySpec,
        weights: Weights,
        joints: &JointOverrides,
        settings: SearchSettings,
        features: Option<Arc<FeatureSet>>,
    ) -> Self {
        let key = features_key(project, joints);
        Self {
            query,
            jobs: FeatureJob::for_project(project),
            options: FeatureOptions::for_project(project, joints.clone()),
            weights,
            settings,
            features: features.filter(|f| f.key == key),
            features_key: key,
            thumbnail_poses: THUMBNAIL_POSES,
        }
    }
}

/// The steps of a search, for its progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Motion features of every clip (on all cores; from the disk cache when valid).
    Features,
    /// The search over every clip.
    Search,
    /// Loading the matched clips for their thumbnails.
    Thumbnails,
}

impl Phase {
    pub fn describe(self) -> &'static str {
        match self {
            Phase::Features => "step 1 of 3: motion features of every clip",
            Phase::Search => "step 2 of 3: searching every clip",
            Phase::Thumbnails => "step 3 of 3: thumbnails of the matches",
        }
    }
}

/// Why a search ended without matches.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    Cancelled,
    Failed(String),
}

/// What a search found, and what it cost.
#[derive(Debug, Clone)]
pub struct SearchOutcome {
    pub query: QuerySpec,
    /// Best first.
    pub matches: Vec<Match>,
    /// One per match (`None`: its clip could not be drawn).
    pub thumbs: Vec<Option<Thumbnail>>,
    pub query_thumb: Option<Thumbnail>,
    pub features: Arc<FeatureSet>,
    /// Frames searched (clips with features).
    pub searched_frames: usize,
    pub features_ms: f64,
    pub search_ms: f64,
    pub thumbs_ms: f64,
    /// Features came from the previous search (nothing was built or read).
    pub reused_features: bool,
    /// Why some thumbnails are missing.
    pub thumb_errors: Vec<String>,
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// Runs a search: the features of every clip (unless `req.features` has them), the index, the
/// search, then the thumbnails of the matches (each matched clip loaded once, on all cores).
/// `progress(phase, done, total)` is called as it goes; setting `cancel` stops it with
/// [`Failure::Cancelled`] (also when it is set after the last step).
pub fn run_search(
    req: &SearchRequest,
    progress: &(dyn Fn(Phase, usize, usize) + Sync),
    cancel: &AtomicBool,
) -> Result<SearchOutcome, Failure> {
    let n = req.jobs.len();
    let t = Instant::now();
    let reused = req.features.is_some();
    let features = match &req.features {
        Some(f) => {
            progress(Phase::Features, n, n);
            Arc::clone(f)
        }
        None => {
            progress(Phase::Features, 0, n);
            let built = build_features_par(
                &req.jobs,
                &req.options,
                &|d, total| progress(Phase::Features, d, total),
                cancel,
            )
            .map_err(|_| Failure::Cancelled)?;
            Arc::new(feature_set(req.features_key, built))
        }
    };
    let features_ms = ms(t);
    let q = &req.query;
    let qc = q.clip as usize;
    if qc >= features.clips.len() {
        return Err(Failure::Failed(format!(
            "the query clip {qc} is not in the project ({n} clips)"
        )));
    }
    if features.clips[qc].is_none() {
        let why = features
            .failed
            .iter()
            .find(|(c, _)| *c as usize == qc)
            .map_or("no features", |(_, e)| e.as_str());
        return Err(Failure::Failed(format!(
            "the query's clip has no motion features: {why}"
        )));
    }
    let t = Instant::now();
    let refs: Vec<Option<&ClipFeatures>> = features.clips.iter().map(Option::as_ref).collect();
    let index = SearchIndex::build_sparse(&refs, &req.weights)
        .map_err(|e| Failure::Failed(e.to_string()))?;
    let query = Query {
        clip: qc,
        start: q.range.start as usize,
        stop: q.range.stop as usize,
    };
    let matches = index
        .search_with(&query, &req.settings, cancel, &mut |d, total| {
            progress(Phase::Search, d, total)
        })
        .map_err(|e| match e {
            SearchError::Cancelled => Failure::Cancelled,
            other => Failure::Failed(other.to_string()),
        })?;
    let search_ms = ms(t);
    let t = Instant::now();
    let (thumbs, query_thumb, thumb_errors) = thumbnails(req, &matches, progress, cancel)?;
    let thumbs_ms = ms(t);
    if cancel.load(Ordering::Relaxed) {
        return Err(Failure::Cancelled);
    }
    Ok(SearchOutcome {
        query: q.clone(),
        matches,
        thumbs,
        query_thumb,
        searched_frames: index.total_frames(),
        features,
        features_ms,
        search_ms,
        thumbs_ms,
        reused_features: reused,
        thumb_errors,
    })
}

fn feature_set(key: u64, built: Vec<crate::core::similar::FeatureResult>) -> FeatureSet {
    let mut set = FeatureSet {
        key,
        clips: Vec::with_capacity(built.len()),
        failed: Vec::new(),
        from_cache: 0,
        built: 0,
        cache_warnings: Vec::new(),
    };
    for (c, r) in built.into_iter().enumerate() {
        match r {
            Ok((f, outcome)) => {
                match outcome {
                    CacheOutcome::Hit => set.from_cache += 1,
                    CacheOutcome::Built { write_error, .. } => {
                        set.built += 1;
                        set.cache_warnings.extend(write_error);
                    }
                    CacheOutcome::Uncached => set.built += 1,
                }
                set.clips.push(Some(f));
            }
            Err(e) => {
                set.failed.push((c as ClipId, e));
                set.clips.push(None);
            }
        }
    }
    set
}

type Thumbs = (Vec<Option<Thumbnail>>, Option<Thumbnail>, Vec<String>);

/// Loads each clip with a match (and the query's) once, on all cores, and draws the thumbnails.
fn thumbnails(
    req: &SearchRequest,
    matches: &[Match],
    progress: &(dyn Fn(Phase, usize, usize) + Sync),
    cancel: &AtomicBool,
) -> Result<Thumbs, Failure> {
    let q = &req.query;
    let mut clips: Vec<usize> = matches.iter().map(|m| m.clip).collect();
    clips.push(q.clip as usize);
    clips.sort_unstable();
    clips.dedup();
    let count = req.thumbnail_poses.max(1);
    progress(Phase::Thumbnails, 0, clips.len());
    let per_clip = par_map_with_progress(
        &clips,
        |&c| -> Result<Vec<(usize, Thumbnail)>, String> {
            let job = req
                .jobs
                .get(c)
                .ok_or_else(|| format!("no clip {c}"))?
                .as_ref()
                .map_err(Clone::clone)?;
            let mut clip = load(&job.request)?;
            clip.unit_cm = job.effective_unit_cm();
            let rig = PoseRig::new(&clip, &req.options.joints)?;
            let mut out = Vec::new();
            // The query is slot `matches.len()`.
            let ranges = matches
                .iter()
                .enumerate()
                .filter(|(_, m)| m.clip == c)
                .map(|(i, m)| (i, m.start as f64, m.stop as f64))
                .chain((q.clip as usize == c).then(|| {
                    (
                        matches.len(),
                        f64::from(q.range.start),
                        f64::from(q.range.stop),
                    )
                }));
            let mut buffers = Buffers::default();
            for (i, start, stop) in ranges {
                out.push((i, thumbnail(&clip, &rig, start, stop, count, &mut buffers)?));
            }
            Ok(out)
        },
        &|d, total| progress(Phase::Thumbnails, d, total),
        cancel,
    )
    .map_err(|_| Failure::Cancelled)?;
    let mut thumbs: Vec<Option<Thumbnail>> = vec![None; matches.len()];
    let mut query_thumb = None;
    let mut errors = Vec::new();
    for (c, r) in clips.iter().zip(per_clip) {
        match r {
            Ok(list) => {
                for (i, t) in list {
                    if i == matches.len() {
                        query_thumb = Some(t);
                    } else {
                        thumbs[i] = Some(t);
                    }
                }
            }
            Err(e) => errors.push(format!("clip {c}: {e}")),
        }
    }
    Ok((thumbs, query_thumb, errors))
}

/// The ranked matches of the last search and what the user did with them.
#[derive(Debug, Clone)]
pub struct Results {
    pub query: QuerySpec,
    pub matches: Vec<Match>,
    /// Checked for "Accept checked", one per match.
    pub checked: Vec<bool>,
    pub thumbs: Vec<Option<Thumbnail>>,
    pub query_thumb: Option<Thumbnail>,
    /// The match shown (stepped to, clicked).
    pub current: Option<usize>,
    /// [`features_key`] of the project searched: when it changes, the results are stale.
    pub key: u64,
    /// A few words on what was found (`20 matches on 6 clips`).
    pub headline: String,
    /// What was searched and what it cost.
    pub summary: String,
    /// Clips that could not be searched or drawn, and why.
    pub problems: Vec<String>,
}

impl Results {
    /// The results of a finished search.
    pub fn from_outcome(out: SearchOutcome, doc: &TagDocument) -> Self {
        let f = &out.features;
        let clips: std::collections::BTreeSet<usize> = out.matches.iter().map(|m| m.clip).collect();
        let features = if out.reused_features {
            "features kept from the last search".to_owned()
        } else {
            format!(
                "features {:.0} ms ({} built, {} from the cache)",
                out.features_ms, f.built, f.from_cache
            )
        };
        let headline = format!(
            "{} matches on {} clips, {} clips searched",
            out.matches.len(),
            clips.len(),
            f.clips.iter().flatten().count(),
        );
        let summary = format!(
            "{} frames searched; {features}, search {:.0} ms, thumbnails {:.0} ms",
            out.searched_frames, out.search_ms, out.thumbs_ms
        );
        let mut problems: Vec<String> = f
            .failed
            .iter()
            .map(|(c, e)| format!("{} not searched: {e}", clip_name(doc, *c)))
            .collect();
        problems.extend(
            f.cache_warnings
                .iter()
                .map(|w| format!("feature cache: {w}")),
        );
        problems.extend(out.thumb_errors.iter().map(|e| format!("thumbnails: {e}")));
        Self {
            checked: vec![false; out.matches.len()],
            query: out.query,
            matches: out.matches,
            thumbs: out.thumbs,
            query_thumb: out.query_thumb,
            current: None,
            key: f.key,
            headline,
            summary,
            problems,
        }
    }

    /// The matches scoring at most `threshold`, best first.
    pub fn under(&self, threshold: f32) -> Vec<usize> {
        (0..self.matches.len())
            .filter(|&i| self.matches[i].score <= threshold)
            .collect()
    }

    /// The best (lowest) score; `None` without matches.
    pub fn best_score(&self) -> Option<f32> {
        self.matches.iter().map(|m| m.score).min_by(f32::total_cmp)
    }

    /// The lowest threshold of two decimals (as the slider sets it) that takes in the best
    /// match; `None` without matches. Offered when the threshold leaves every match out.
    pub fn threshold_for_best(&self) -> Option<f32> {
        let best = self.best_score()?;
        Some(((best * 100.0).ceil() / 100.0).max(best))
    }

    /// Checks exactly the matches scoring at most `threshold`.
    pub fn check_under(&mut self, threshold: f32) {
        for (c, m) in self.checked.iter_mut().zip(&self.matches) {
            *c = m.score <= threshold;
        }
    }

    pub fn checked_indices(&self) -> Vec<usize> {
        (0..self.matches.len())
            .filter(|&i| self.checked[i])
            .collect()
    }

    /// The next (or previous) match after the current one, wrapping around; the first (or the
    /// last) when none is current.
    pub fn step(&mut self, forward: bool) -> Option<usize> {
        let n = self.matches.len();
        if n == 0 {
            return None;
        }
        let next = match (self.current, forward) {
            (None, true) => 0,
            (None, false) => n - 1,
            (Some(i), true) => (i + 1) % n,
            (Some(i), false) => (i + n - 1) % n,
        };
        self.current = Some(next);
        Some(next)
    }

    /// The ranges of the matches on `clip`, sorted.
    pub fn ranges_on(&self, clip: ClipId) -> Vec<Range> {
        let mut r: Vec<Range> = self
            .matches
            .iter()
            .filter(|m| m.clip == clip as usize)
            .map(|m| Range::new(m.start as u32, m.stop as u32))
            .collect();
        r.sort_by_key(|r| (r.start, r.stop));
        r
    }

    /// The match on `clip` under `frame`: the current one when it is there, else any.
    pub fn at(&self, clip: ClipId, frame: f64) -> Option<usize> {
        let inside =
            |m: &Match| m.clip == clip as usize && frame >= m.start as f64 && frame < m.stop as f64;
        self.current
            .filter(|&i| self.matches.get(i).is_some_and(inside))
            .or_else(|| self.matches.iter().position(inside))
    }

    /// The one edit that adds the matches `indices` to the tag `tag` (created when missing), and
    /// its undo label.
    pub fn accept_edit(
        &self,
        doc: &TagDocument,
        tag: &str,
        indices: &[usize],
    ) -> Result<(Edit, String), String> {
        let tag = tag.trim();
        let chosen: Vec<Match> = indices
            .iter()
            .filter_map(|&i| self.matches.get(i).copied())
            .collect();
        if chosen.is_empty() {
            return Err("no match chosen: check some, or lower the threshold".to_owned());
        }
        let edit = accept_matches(doc, tag, &chosen)?;
        let label = format!(
            "accept {} similar match{} as {tag}",
            chosen.len(),
            if chosen.len() == 1 { "" } else { "es" }
        );
        Ok((edit, label))
    }

    /// True when some match lies in `tag` already (see [`Results::is_in_tag`]).
    pub fn any_in_tag(&self, doc: &TagDocument, tag: &str) -> bool {
        doc.tags
            .iter()
            .find(|t| t.name == tag)
            .is_some_and(|t| self.matches.iter().any(|m| lies_in(t, m)))
    }

    /// True when the range of match `i` already lies in `tag`'s ranges.
    pub fn is_in_tag(&self, doc: &TagDocument, tag: &str, i: usize) -> bool {
        let Some(m) = self.matches.get(i) else {
            return false;
        };
        doc.tags
            .iter()
            .find(|t| t.name == tag)
            .is_some_and(|t| lies_in(t, m))
    }
}

/// True when match `m`'s frames lie in one range of `tag` on its clip.
fn lies_in(tag: &Tag, m: &Match) -> bool {
    tag.ranges.get(&(m.clip as ClipId)).is_some_and(|list| {
        list.iter()
            .any(|r| r.start as usize <= m.start && r.stop as usize >= m.stop)
    })
}

/// The query time, in seconds, at `frame` of a match: the match's range maps linearly onto the
/// query's (a stretched match plays the query slower or faster). `None` outside the match.
pub fn query_time_s(m: &Match, query: &QuerySpec, query_fps: f32, frame: f64) -> Option<f64> {
    let (start, stop) = (m.start as f64, m.stop as f64);
    if !(frame >= start && frame < stop) || stop <= start {
        return None;
    }
    let u = (frame - start) / (stop - start);
    let (qs, qe) = (f64::from(query.range.start), f64::from(query.range.stop));
    Some((qs + u * (qe - qs)) / f64::from(query_fps.max(1e-3)))
}

/// The joints a drawn pose is built from: the feature joints (root, feet, hands, thighs) and the
/// body below the root (the pelvis), so a fixed joint above it (Bandai's `joint_Root`, an
/// Unreal-style `root`) is left out.
#[derive(Debug, Clone, PartialEq)]
pub struct PoseRig {
    pub joints: FeatureJoints,
    /// Joints drawn: the root and its descendants, in skeleton order.
    pub kept: Vec<usize>,
    /// Bones as (child, parent) positions in `kept`.
    pub bones: Vec<(usize, usize)>,
    /// Centimetres per file unit of the clip.
    pub unit_cm: f32,
}

impl PoseRig {
    /// The rig of `clip` (joints found by name, or by `over`).
    pub fn new(clip: &Clip, over: &JointOverrides) -> Result<Self, String> {
        let joints = FeatureJoints::find(&clip.skeleton, over)
            .map_err(|e| format!("clip `{}`: {e}", clip.name))?;
        let parents = &clip.skeleton.parents;
        let n = parents.len();
        let mut inside = vec![false; n];
        let mut slot = vec![usize::MAX; n];
        let mut kept = Vec::new();
        let mut bones = Vec::new();
        for j in 0..n {
            let parent_inside = parents[j].is_some_and(|p| p < n && inside[p]);
            inside[j] = j == joints.root || parent_inside;
            if inside[j] {
                slot[j] = kept.len();
                kept.push(j);
                if j != joints.root
                    && let Some(p) = parents[j]
                {
                    bones.push((slot[j], slot[p]));
                }
            }
        }
        let unit_cm = if clip.unit_cm.is_finite() && clip.unit_cm > 0.0 {
            clip.unit_cm
        } else {
            1.0
        };
        Ok(Self {
            joints,
            kept,
            bones,
            unit_cm,
        })
    }

    /// The horizontal heading of a model-space pose: (left, forward), unit vectors, from the
    /// right thigh to the left one (as the features measure it).
    pub fn heading(&self, model: &[Transform]) -> (Vec3, Vec3) {
        let [l, r] = self.joints.thighs;
        let d = model[l].translation - model[r].translation;
        let left = Vec3::new(d.x, 0.0, d.z).normalize_or(Vec3::X);
        (left, left.cross(Vec3::Y))
    }
}

/// Reusable sampling buffers.
#[derive(Debug, Default, Clone)]
pub struct Buffers {
    local: Vec<Transform>,
    model: Vec<Transform>,
}

impl Buffers {
    /// Samples `clip` at `time_s` (clamped, slerp) into model space.
    pub fn sample(&mut self, clip: &Clip, time_s: f64) -> Result<&[Transform], String> {
        let n = clip.joint_count();
        self.local.resize(n, Transform::IDENTITY);
        self.model.resize(n, Transform::IDENTITY);
        let settings = SampleSettings::clamped(RotationInterp::Slerp);
        sample_clip(clip, time_s, &settings, &mut self.local).map_err(|e| e.to_string())?;
        local_to_model(&clip.skeleton, &self.local, &mut self.model).map_err(|e| e.to_string())?;
        Ok(&self.model)
    }
}

/// A pose seen from the character's right side: per kept joint `[forward, up, left]` in
/// centimetres, forward and left from the root in its heading frame, up from the ground (`y = 0`).
pub type SidePose = Vec<[f32; 3]>;

/// The side view of a model-space pose.
pub fn side_pose(rig: &PoseRig, model: &[Transform]) -> SidePose {
    let (left, forward) = rig.heading(model);
    let root = model[rig.joints.root].translation;
    rig.kept
        .iter()
        .map(|&j| {
            let p = model[j].translation;
            let d = (p - root) * rig.unit_cm;
            [d.dot(forward), p.y * rig.unit_cm, d.dot(left)]
        })
        .collect()
}

/// A strip of poses at evenly spaced times of a range, seen from the side.
#[derive(Debug, Clone, PartialEq)]
pub struct Thumbnail {
    /// Bones as (child, parent) indices into each pose.
    pub bones: Vec<(usize, usize)>,
    /// The poses, in time order; heights are from the lowest point of the strip.
    pub poses: Vec<SidePose>,
}

impl Thumbnail {
    /// The highest point of the strip, cm (at least 1).
    pub fn height_cm(&self) -> f32 {
        self.poses
            .iter()
            .flatten()
            .map(|p| p[1])
            .fold(1.0, f32::max)
    }
}

/// `count` poses of frames `[start, stop)` of `clip` (at the centres of equal slices of the
/// range, fractional frames interpolated), seen from the side.
pub fn thumbnail(
    clip: &Clip,
    rig: &PoseRig,
    start: f64,
    stop: f64,
    count: usize,
    buffers: &mut Buffers,
) -> Result<Thumbnail, String> {
    let fps = f64::from(clip.fps.max(1e-3));
    let count = count.max(1);
    let mut poses = Vec::with_capacity(count);
    for i in 0..count {
        let frame = start + (i as f64 + 0.5) * (stop - start) / count as f64;
        let model = buffers.sample(clip, frame / fps)?;
        poses.push(side_pose(rig, model));
    }
    let ground = poses
        .iter()
        .flatten()
        .map(|p| p[1])
        .fold(f32::INFINITY, f32::min);
    if ground.is_finite() {
        for p in poses.iter_mut().flatten() {
            p[1] -= ground;
        }
    }
    Ok(Thumbnail {
        bones: rig.bones.clone(),
        poses,
    })
}

/// The query's pose, in the target's model space and file units, with its own skeleton.
#[derive(Debug, Clone, PartialEq)]
pub struct AlignedPose {
    pub positions: Vec<Vec3>,
    /// The query skeleton's parents, without the joints above its root (they sit on the root).
    pub parents: Vec<Option<usize>>,
}

/// The pose of `query` at `query_time_s` moved onto the pose of `target` at `target_time_s`:
/// turned about +Y so both face the same way, its root put over the target's root on the ground
/// (heights kept: a crouch stays low), and scaled from the query's units to the target's.
pub fn aligned_pose(
    query: &Clip,
    q_rig: &PoseRig,
    query_time_s: f64,
    target: &Clip,
    t_rig: &PoseRig,
    target_time_s: f64,
    buffers: &mut Buffers,
) -> Result<AlignedPose, String> {
    let t_model = buffers.sample(target, target_time_s)?;
    let (_, t_forward) = t_rig.heading(t_model);
    let t_root = t_model[t_rig.joints.root].translation;
    let q_model = buffers.sample(query, query_time_s)?;
    let (_, q_forward) = q_rig.heading(q_model);
    let q_root = q_model[q_rig.joints.root].translation;
    let yaw = t_forward.x.atan2(t_forward.z) - q_forward.x.atan2(q_forward.z);
    let turn = Quat::from_rotation_y(yaw);
    let scale = q_rig.unit_cm / t_rig.unit_cm;
    let from = Vec3::new(q_root.x, 0.0, q_root.z);
    let to = Vec3::new(t_root.x, 0.0, t_root.z);
    let place = |p: Vec3| turn * ((p - from) * scale) + to;
    let n = query.joint_count();
    let mut inside = vec![false; n];
    for &j in &q_rig.kept {
        inside[j] = true;
    }
    let root_at = place(q_root);
    let positions = (0..n)
        .map(|j| {
            if inside[j] {
                place(q_model[j].translation)
            } else {
                root_at
            }
        })
        .collect();
    let parents = (0..n)
        .map(|j| query.skeleton.parents[j].filter(|&p| inside[j] && p < n && inside[p]))
        .collect();
    Ok(AlignedPose { positions, parents })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::similar::turn_and_move;

    fn demo() -> Project {
        Project::demo()
    }

    fn demo_clip(project: &Project, c: ClipId) -> Clip {
        let mut clip = load(&crate::core::project::resolve(project, c).unwrap()).unwrap();
        clip.unit_cm = 1.0;
        clip
    }

    fn view(selection: &[(usize, Range)]) -> AppView<'_> {
        AppView {
            clip: 0,
            selection,
            mark_in: None,
            playhead: 0.0,
            active_tag: None,
        }
    }

    #[test]
    fn the_query_comes_from_the_selection_then_the_loop_then_mark_in() {
        let p = demo();
        let doc = &p.doc;
        let walking = doc.tag_index("Walking").unwrap();
        let idle = doc.tag_index("Idle").unwrap();
        // The hull of the selection, the tag of its first range.
        let sel = [
            (idle, Range::new(200, 230)),
            (walking, Range::new(120, 150)),
        ];
        let q = query_from(doc, &view(&sel)).unwrap();
        assert_eq!(q.range, Range::new(120, 230));
        assert_eq!(q.tag.as_deref(), Some("Walking"));
        assert_eq!(q.from, QueryFrom::Selection);
        assert_eq!(q.short(doc), "Walking [120, 230)");
        assert!(
            q.describe(doc).contains("walk_male_01 (110 frames"),
            "{}",
            q.describe(doc)
        );
        // Without a selection: mark in to the playhead, either order, both frames included.
        let mut v = view(&[]);
        v.mark_in = Some(5);
        v.playhead = 44.6;
        let q = query_from(doc, &v).unwrap();
        assert_eq!(
            (q.range, q.tag.clone(), q.from),
            (Range::new(5, 45), None, QueryFrom::MarkIn)
        );
        assert_eq!(q.short(doc), "walk_male_01 [5, 45)");
        v.mark_in = Some(60);
        assert_eq!(query_from(doc, &v).unwrap().range, Range::new(44, 61));
        // Nothing: says what to do.
        let e = query_from(doc, &view(&[])).unwrap_err();
        assert!(e.contains("select a range"), "{e}");
        // A range past the clip's end is cut to it; wholly past it is an error.
        let frames = doc.clips[0].frames;
        let sel = [(walking, Range::new(frames - 5, frames + 10))];
        assert_eq!(
            query_from(doc, &view(&sel)).unwrap().range,
            Range::new(frames - 5, frames)
        );
        let sel = [(walking, Range::new(frames + 1, frames + 10))];
        assert!(
            query_from(doc, &view(&sel))
                .unwrap_err()
                .contains("frames)")
        );
    }

    #[test]
    fn the_features_key_follows_what_features_are_built_from() {
        let p = demo();
        let j = JointOverrides::default();
        let k = features_key(&p, &j);
        assert_eq!(k, features_key(&p.clone(), &j));
        // Every edit of a clip, through the one edit path.
        for edit in [
            Edit::SetClipUnit {
                clip: 3,
                unit_cm: Some(2.54),
            },
            Edit::SetClipSource {
                clip: 3,
                source: Some("other.bvh".into()),
            },
            Edit::SetClipFrames { clip: 3, frames: 5 },
        ] {
            let mut q = p.clone();
            edit.clone().apply(&mut q.doc).unwrap();
            assert_ne!(features_key(&q, &j), k, "{edit:?}");
        }
        // A rename and its undo: the same features (the results look names up as they show).
        let mut q = p.clone();
        let undo = Edit::RenameClip {
            clip: 3,
            name: "renamed".into(),
        }
        .apply(&mut q.doc)
        .unwrap();
        assert_eq!(features_key(&q, &j), k);
        undo.apply(&mut q.doc).unwrap();
        assert_eq!(features_key(&q, &j), k);
        assert_eq!(q.doc.clips[3].name, p.doc.clips[3].name);
        let mut over = JointOverrides::default();
        over.set("left_hand", "LeftForeArm").unwrap();
        assert_ne!(features_key(&p, &over), k);
        // Tags do not matter.
        let mut q = p.clone();
        q.doc.tags.push(Tag::new("Extra"));
        assert_eq!(features_key(&q, &j), k);
    }

    fn m(clip: usize, start: usize, stop: usize, score: f32) -> Match {
        Match {
            clip,
            start,
            stop,
            score,
        }
    }

    fn results(matches: Vec<Match>) -> Results {
        Results {
            query: QuerySpec {
                clip: 0,
                range: Range::new(120, 150),
                tag: Some("Walking".into()),
                from: QueryFrom::Selection,
            },
            checked: vec![false; matches.len()],
            thumbs: vec![None; matches.len()],
            matches,
            query_thumb: None,
            current: None,
            key: 0,
            headline: String::new(),
            summary: String::new(),
            problems: Vec::new(),
        }
    }

    #[test]
    fn matches_are_checked_by_threshold_stepped_and_laned() {
        let mut r = results(vec![
            m(1, 40, 70, 0.2),
            m(0, 10, 40, 0.5),
            m(1, 0, 30, 0.7),
            m(2, 5, 35, 0.9),
        ]);
        assert_eq!(r.under(0.7), [0, 1, 2]);
        assert_eq!(r.under(0.1), Vec::<usize>::new());
        // The threshold offered when none is under: the best score, to two decimals up.
        assert_eq!(r.best_score(), Some(0.2));
        assert_eq!(r.threshold_for_best(), Some(0.2));
        for best in [0.8312, 0.83, 0.830_000_04, 1.0] {
            let r = results(vec![m(0, 10, 40, 1.3), m(1, 0, 30, best)]);
            let t = r.threshold_for_best().unwrap();
            assert_eq!(r.under(t), [1], "{best} {t}");
            assert!(t - best < 0.01 + 1e-6, "{best} {t}");
        }
        assert_eq!(results(Vec::new()).threshold_for_best(), None);
        r.checked[3] = true;
        r.check_under(0.5);
        assert_eq!(r.checked_indices(), [0, 1]);
        // Stepping wraps both ways.
        assert_eq!(r.step(false), Some(3));
        assert_eq!(r.step(true), Some(0));
        assert_eq!(r.step(true), Some(1));
        r.current = Some(0);
        assert_eq!(r.step(false), Some(3));
        // Lanes: sorted per clip.
        assert_eq!(r.ranges_on(1), [Range::new(0, 30), Range::new(40, 70)]);
        assert!(r.ranges_on(5).is_empty());
        // Under a frame: the current match first, else any.
        r.current = Some(2);
        assert_eq!(r.at(1, 12.0), Some(2));
        assert_eq!(r.at(1, 69.5), Some(0));
        assert_eq!(r.at(1, 70.0), None);
        assert_eq!(r.at(0, 12.0), Some(1));
        assert!(results(Vec::new()).step(true).is_none());
    }

    #[test]
    fn accepting_is_one_undoable_edit_into_any_tag() {
        let mut p = demo();
        let before = p.doc.clone();
        let r = results(vec![m(1, 40, 70, 0.2), m(2, 5, 35, 0.5), m(3, 0, 30, 0.9)]);
        let idle = p.doc.tag_index("Idle").unwrap();
        let (edit, label) = r.accept_edit(&p.doc, "Idle", &[0, 1]).unwrap();
        assert_eq!(label, "accept 2 similar matches as Idle");
        let third = results(vec![m(3, 0, 30, 0.9)]);
        let each = |r: &Results, d: &TagDocument| (0..3).any(|i| r.is_in_tag(d, "Idle", i));
        assert_eq!(r.any_in_tag(&p.doc, "Idle"), each(&r, &p.doc));
        assert!(!third.any_in_tag(&p.doc, "Idle"));
        p.apply(edit, label).unwrap();
        assert!(r.is_in_tag(&p.doc, "Idle", 0) && r.is_in_tag(&p.doc, "Idle", 1));
        assert!(!r.is_in_tag(&p.doc, "Idle", 2));
        assert!(r.any_in_tag(&p.doc, "Idle") && !third.any_in_tag(&p.doc, "Idle"));
        assert!(!r.any_in_tag(&p.doc, "No such tag"));
        assert!(p.doc.tags[idle].ranges[&1].contains(&Range::new(40, 70)));
        p.history.undo(&mut p.doc).unwrap();
        let ranges = |d: &TagDocument| -> Vec<_> {
            d.tags
                .iter()
                .map(|t| (t.name.clone(), t.ranges.clone()))
                .collect()
        };
        assert_eq!(ranges(&p.doc), ranges(&before));
        // A new tag name creates the tag; one match: singular label.
        let (edit, label) = r.accept_edit(&p.doc, " Stride ", &[2]).unwrap();
        assert_eq!(label, "accept 1 similar match as Stride");
        p.apply(edit, label).unwrap();
        assert_eq!(p.doc.tags.last().unwrap().name, "Stride");
        // Nothing chosen, or no name: errors.
        assert!(r.accept_edit(&p.doc, "Idle", &[]).is_err());
        assert!(r.accept_edit(&p.doc, "Idle", &[99]).is_err());
        assert!(r.accept_edit(&p.doc, "  ", &[0]).is_err());
    }

    #[test]
    fn match_time_maps_linearly_onto_the_query() {
        let q = QuerySpec {
            clip: 0,
            range: Range::new(120, 150),
            tag: None,
            from: QueryFrom::Selection,
        };
        // A match 1.5 times as long: its middle is the query's middle.
        let mt = m(3, 200, 245, 0.3);
        assert_eq!(query_time_s(&mt, &q, 30.0, 200.0), Some(4.0));
        assert_eq!(query_time_s(&mt, &q, 30.0, 222.5), Some(4.5));
        assert!(query_time_s(&mt, &q, 30.0, 245.0).is_none());
        assert!(query_time_s(&mt, &q, 30.0, 199.9).is_none());
        // Another frame rate: seconds of the query clip.
        assert_eq!(query_time_s(&mt, &q, 120.0, 200.0), Some(1.0));
    }

    #[test]
    fn a_moved_and_turned_copy_aligns_onto_the_original() {
        let p = demo();
        let clip = demo_clip(&p, 0);
        let rig = PoseRig::new(&clip, &JointOverrides::default()).unwrap();
        assert!(!rig.bones.is_empty());
        assert_eq!(rig.kept[0], rig.joints.root);
        let mut moved = clip.clone();
        turn_and_move(&mut moved, 2.1, Vec3::new(300.0, 0.0, -800.0));
        let mut b = Buffers::default();
        let t = 4.3;
        let a = aligned_pose(&moved, &rig, t, &clip, &rig, t, &mut b).unwrap();
        let own: Vec<Vec3> = b
            .sample(&clip, t)
            .unwrap()
            .iter()
            .map(|x| x.translation)
            .collect();
        for &j in &rig.kept {
            assert!(
                a.positions[j].distance(own[j]) < 1e-2,
                "joint {j}: {} vs {}",
                a.positions[j],
                own[j]
            );
        }
        // In inches the copy is drawn 2.54 times smaller in the target's centimetres... scaled
        // about the root on the ground.
        let mut inches = moved.clone();
        inches.unit_cm = 2.54;
        let irig = PoseRig::new(&inches, &JointOverrides::default()).unwrap();
        let a = aligned_pose(&inches, &irig, t, &clip, &rig, t, &mut b).unwrap();
        let root = rig.joints.root;
        let ground = Vec3::new(own[root].x, 0.0, own[root].z);
        let head = *rig.kept.last().unwrap();
        let want = (own[head] - ground) * 2.54 + ground;
        assert!(
            a.positions[head].distance(want) < 0.05,
            "{} vs {want}",
            a.positions[head]
        );
        // The parents are the query's own within the body.
        for &(child, parent) in &rig.bones {
            let (c, pj) = (rig.kept[child], rig.kept[parent]);
            assert_eq!(a.parents[c], Some(pj));
        }
    }

    #[test]
    fn thumbnails_see_the_pose_not_where_it_is() {
        let p = demo();
        let clip = demo_clip(&p, 0);
        let rig = PoseRig::new(&clip, &JointOverrides::default()).unwrap();
        let mut moved = clip.clone();
        turn_and_move(&mut moved, -1.3, Vec3::new(-500.0, 0.0, 120.0));
        let mut b = Buffers::default();
        let a = thumbnail(&clip, &rig, 120.0, 150.0, 5, &mut b).unwrap();
        let c = thumbnail(&moved, &rig, 120.0, 150.0, 5, &mut b).unwrap();
        assert_eq!(a.poses.len(), 5);
        assert_eq!(a.bones, rig.bones);
        for (pa, pc) in a.poses.iter().zip(&c.poses) {
            for (x, y) in pa.iter().zip(pc) {
                for k in 0..3 {
                    assert!((x[k] - y[k]).abs() < 1e-2, "{x:?} vs {y:?}");
                }
            }
        }
        // Heights from the strip's lowest point; a person is 100 to 250 cm tall.
        let low = a
            .poses
            .iter()
            .flatten()
            .map(|p| p[1])
            .fold(f32::INFINITY, f32::min);
        assert!(low.abs() < 1e-4);
        assert!((100.0..250.0).contains(&a.height_cm()), "{}", a.height_cm());
        // The poses differ along the stride (the feet swap).
        assert_ne!(a.poses[0], a.poses[2]);
        // Units: the same take in inches is 2.54 times taller.
        let mut inches = clip.clone();
        inches.unit_cm = 2.54;
        let irig = PoseRig::new(&inches, &JointOverrides::default()).unwrap();
        let i = thumbnail(&inches, &irig, 120.0, 150.0, 5, &mut b).unwrap();
        assert!((i.height_cm() / a.height_cm() - 2.54).abs() < 1e-3);
    }

    #[test]
    fn a_search_on_the_demo_finds_walks_and_can_be_cancelled() {
        let p = demo();
        let walking = p.doc.tag_index("Walking").unwrap();
        let sel = [(walking, Range::new(120, 150))];
        let q = query_from(&p.doc, &view(&sel)).unwrap();
        let settings = SearchSettings {
            top: 8,
            ..SearchSettings::default()
        };
        let joints = JointOverrides::default();
        let req = SearchRequest::new(
            &p,
            q.clone(),
            Weights::default(),
            &joints,
            settings.clone(),
            None,
        );
        let phases = std::sync::Mutex::new(Vec::new());
        let progress = |ph: Phase, d: usize, t: usize| phases.lock().unwrap().push((ph, d, t));
        let out = run_search(&req, &progress, &AtomicBool::new(false)).unwrap();
        assert_eq!(out.matches.len(), 8);
        let seen = phases.lock().unwrap().clone();
        for ph in [Phase::Features, Phase::Search, Phase::Thumbnails] {
            assert!(seen.iter().any(|s| s.0 == ph), "{ph:?} never reported");
        }
        // Best first; never the query itself; the best ones are walks.
        assert!(out.matches.windows(2).all(|w| w[0].score <= w[1].score));
        for mt in &out.matches {
            assert!(!(mt.clip == 0 && mt.start < 150 && mt.stop > 120), "{mt:?}");
        }
        let walk = &p.doc.tags[walking];
        let best = out.matches[0];
        assert!(
            walk.ranges[&(best.clip as ClipId)]
                .iter()
                .any(|r| (r.start as usize) < best.stop && r.stop as usize > best.start),
            "{best:?}"
        );
        // Thumbnails for every match and the query.
        assert!(
            out.thumbs
                .iter()
                .all(|t| t.as_ref().is_some_and(|t| t.poses.len() == THUMBNAIL_POSES))
        );
        assert!(out.query_thumb.is_some());
        assert!(!out.reused_features);
        assert_eq!(out.features.built, p.doc.clips.len());
        // Again with the features kept: the same matches, nothing built.
        let again = SearchRequest::new(
            &p,
            q.clone(),
            Weights::default(),
            &joints,
            settings.clone(),
            Some(Arc::clone(&out.features)),
        );
        assert!(again.features.is_some());
        let out2 = run_search(&again, &|_, _, _| {}, &AtomicBool::new(false)).unwrap();
        assert!(out2.reused_features);
        assert_eq!(out2.matches, out.matches);
        // Features of other clips are not reused.
        let mut other = p.clone();
        Edit::SetClipUnit {
            clip: 2,
            unit_cm: Some(2.0),
        }
        .apply(&mut other.doc)
        .unwrap();
        let req3 = SearchRequest::new(
            &other,
            q.clone(),
            Weights::default(),
            &joints,
            settings.clone(),
            Some(Arc::clone(&out.features)),
        );
        assert!(req3.features.is_none());
        // Cancelled: before, or with the features kept.
        assert_eq!(
            run_search(&req, &|_, _, _| {}, &AtomicBool::new(true)).unwrap_err(),
            Failure::Cancelled
        );
        assert_eq!(
            run_search(&again, &|_, _, _| {}, &AtomicBool::new(true)).unwrap_err(),
            Failure::Cancelled
        );
        // The results: summary and nothing checked.
        let r = Results::from_outcome(out, &p.doc);
        assert!(r.headline.starts_with("8 matches on"), "{}", r.headline);
        assert!(r.headline.ends_with("10 clips searched"), "{}", r.headline);
        assert!(r.checked.iter().all(|c| !c));
        assert!(r.problems.is_empty(), "{:?}", r.problems);
    }

    #[test]
    fn a_query_clip_without_features_is_a_clear_error() {
        let mut p = demo();
        p.is_demo = false;
        p.path = Some(std::path::PathBuf::from(
            "/nonexistent/taglane/p.taglane.json",
        ));
        let q = QuerySpec {
            clip: 0,
            range: Range::new(10, 40),
            tag: None,
            from: QueryFrom::MarkIn,
        };
        let req = SearchRequest::new(
            &p,
            q,
            Weights::default(),
            &JointOverrides::default(),
            SearchSettings::default(),
            None,
        );
        match run_search(&req, &|_, _, _| {}, &AtomicBool::new(false)) {
            Err(Failure::Failed(e)) => assert!(e.contains("walk_male_01.bvh"), "{e}"),
            other => panic!("{other:?}"),
        }
    }
}
