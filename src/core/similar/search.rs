//! Searching a query segment against every window of every clip (see `docs/SIMILAR.md`).
//!
//! **Distance.** The query's normalised features are sampled at [`SearchSettings::samples`] evenly
//! spaced times (the centres of equal slices of the query). A window of a clip is sampled at the
//! same relative times; its length is the query's duration times a time-stretch factor
//! ([`SearchSettings::stretches`]), in the clip's own frame rate, so clips of different rates and
//! slower or faster performances compare. The score of a window is the root mean square, over the
//! samples and the dimensions, of the weighted normalised differences, divided by the root mean
//! square of the weights: 0 for identical features, about 1.4 for two unrelated frames (two
//! independent draws from the same distribution).
//!
//! **Pruned scan.** Window starts are visited on a coarse grid (every `fps / coarse_hz` frames);
//! at each start the best stretch is kept. Every distance is abandoned as soon as its running sum
//! passes the current bound: the worst of the `M` best candidates so far, where `M` is large enough
//! that the final selection can never need a candidate beyond them (see [`SearchIndex::search`]), or
//! [`SearchSettings::max_score`]. The best non-overlapping candidates are then picked greedily, best
//! first, and each is refined frame by frame (and stretch by stretch) around its coarse start.

use std::collections::BinaryHeap;

use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

use super::features::{ClipFeatures, DIMS, Weights, group_of};

/// How a search runs. Defaults are stated on each field.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSettings {
    /// Most matches returned. Default 10.
    pub top: usize,
    /// Only matches scoring at most this are returned (see the module documentation for the
    /// scale). Default `None`: the `top` best, however far.
    pub max_score: Option<f32>,
    /// Window lengths as multiples of the query's duration. Default 0.75, 0.875, 1.0, 1.125, 1.25
    /// (a time stretch of +-25%).
    pub stretches: Vec<f32>,
    /// Feature samples compared per window. Default 16 (fewer when the query is shorter).
    pub samples: usize,
    /// Window starts per second visited by the coarse pass. Default 30: every frame of a 30 fps
    /// clip, every 4th of a 120 fps clip.
    pub coarse_hz: f32,
}

impl Default for SearchSettings {
    fn default() -> Self {
        Self {
            top: 10,
            max_score: None,
            stretches: vec![0.75, 0.875, 1.0, 1.125, 1.25],
            samples: 16,
            coarse_hz: 30.0,
        }
    }
}

impl SearchSettings {
    fn validate(&self) -> Result<(), SearchError> {
        let bad = |m: String| Err(SearchError::BadSettings(m));
        if self.stretches.is_empty() {
            return bad("no time-stretch factor".to_owned());
        }
        if let Some(s) = self
            .stretches
            .iter()
            .find(|s| !(s.is_finite() && **s > 0.0 && **s <= 16.0))
        {
            return bad(format!(
                "time-stretch factors must lie in (0, 16], found {s}"
            ));
        }
        if self.samples == 0 {
            return bad("samples must be at least 1".to_owned());
        }
        if !(self.coarse_hz.is_finite() && self.coarse_hz > 0.0) {
            return bad(format!(
                "coarse_hz must be positive, found {}",
                self.coarse_hz
            ));
        }
        if let Some(s) = self.max_score
            && !(s.is_finite() && s >= 0.0)
        {
            return bad(format!("max_score must be a number >= 0, found {s}"));
        }
        Ok(())
    }
}

/// Per-dimension normalisation fitted over the clips searched: `(x - mean) * scale`, where
/// `scale = weight of the dimension's group / standard deviation`. The deviation is floored at the
/// group's [`Group::min_deviation`](super::features::Group::min_deviation) (a difference that
/// hardly matters to the eye), so a dimension that barely varies over the project (the turn rate
/// in a library with one turning take) does not turn small differences into large distances.
#[derive(Debug, Clone, PartialEq)]
pub struct Normaliser {
    pub mean: [f32; DIMS],
    pub std: [f32; DIMS],
    pub scale: [f32; DIMS],
}

impl Normaliser {
    /// Fits the mean and deviation of every dimension over every frame of `clips`.
    pub fn fit<'a>(clips: impl IntoIterator<Item = &'a ClipFeatures>, weights: &Weights) -> Self {
        let mut shaped = [0f32; DIMS];
        Self::fit_shaped(
            clips
                .into_iter()
                .flat_map(|c| c.values.chunks_exact(DIMS))
                .map(|fr| {
                    for d in 0..DIMS {
                        shaped[d] = shape(d, fr[d]);
                    }
                    shaped
                }),
            weights,
        )
    }

    /// [`Normaliser::fit`] over frames already passed through [`shape`].
    fn fit_shaped(frames: impl Iterator<Item = [f32; DIMS]>, weights: &Weights) -> Self {
        let mut sum = [0f64; DIMS];
        let mut sum2 = [0f64; DIMS];
        let mut n = 0usize;
        for fr in frames {
            for d in 0..DIMS {
                let x = f64::from(fr[d]);
                sum[d] += x;
                sum2[d] += x * x;
            }
            n += 1;
        }
        let mut mean = [0f32; DIMS];
        let mut std = [1f32; DIMS];
        let mut scale = [0f32; DIMS];
        for d in 0..DIMS {
            let floor = group_of(d).min_deviation();
            if n > 0 {
                let m = sum[d] / n as f64;
                mean[d] = m as f32;
                std[d] = ((sum2[d] / n as f64 - m * m).max(0.0).sqrt() as f32).max(floor);
            } else {
                std[d] = floor;
            }
            scale[d] = weights.of(group_of(d)) / std[d];
        }
        Self { mean, std, scale }
    }

    /// Normalises one frame of features into `out`.
    #[inline]
    pub fn apply(&self, frame: &[f32], out: &mut [f32]) {
        for d in 0..DIMS {
            out[d] = (shape(d, frame[d]) - self.mean[d]) * self.scale[d];
        }
    }
}

/// A starting threshold for accepting matches: on the demo takes, every score from 0.62 to 0.76
/// returns the query's gait (walking, running, idling, in every style) with precision and recall
/// of at least 0.9, and on the Bandai takes every walk window but the clips' last partial strides
/// scores under it (see `docs/SIMILAR.md`).
pub const SUGGESTED_MAX_SCORE: f32 = 0.7;

/// Speed scale of the velocity compression, cm/s.
pub const SPEED_SCALE_CM_S: f32 = 50.0;

/// The value a dimension is compared by: velocities are compressed,
/// `v -> sign(v) * S * ln(1 + |v| / S)` with `S` = [`SPEED_SCALE_CM_S`], so a difference of speed
/// counts relative to the speed (standing still against walking slowly weighs more than a fast run
/// against a slightly slower one); everything else as it is.
#[inline]
pub fn shape(dim: usize, x: f32) -> f32 {
    if (12..27).contains(&dim) {
        SPEED_SCALE_CM_S.copysign(x) * (x.abs() / SPEED_SCALE_CM_S).ln_1p()
    } else {
        x
    }
}

/// A query: frames `[start, stop)` of clip `clip` (an index into the clips of the index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Query {
    pub clip: usize,
    pub start: usize,
    pub stop: usize,
}

/// One match: frames `[start, stop)` of clip `clip`, and its score (lower is more similar; 0 is
/// identical features).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Match {
    pub clip: usize,
    pub start: usize,
    pub stop: usize,
    pub score: f32,
}

impl Match {
    /// True when both are on the same clip and share a frame.
    pub fn overlaps(&self, o: &Match) -> bool {
        self.clip == o.clip && self.start < o.stop && o.start < self.stop
    }
}

/// Why a search cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SearchError {
    #[error("no clip {clip} in the search (it has {clips} clips)")]
    NoSuchClip { clip: usize, clips: usize },
    #[error("clip {clip} has no features (its animation did not load)")]
    NoFeatures { clip: usize },
    #[error(
        "the query range {start}:{stop} is {}; the clip has {frames} frames (a range lies within 0:{frames})",
        if start >= stop { "empty" } else { "outside the clip" }
    )]
    BadRange {
        start: usize,
        stop: usize,
        frames: usize,
    },
    #[error("clip {clip}: {message}")]
    BadFeatures { clip: usize, message: String },
    #[error("invalid search settings: {0}")]
    BadSettings(String),
    #[error("the search was cancelled")]
    Cancelled,
}

/// Normalised, weighted features of every clip searched, ready for queries. Clips are numbered by
/// their position in the list the index was built from; a `None` there (a clip whose animation
/// did not load) keeps its number and is never matched.
#[derive(Debug, Clone)]
pub struct SearchIndex {
    pub normaliser: Normaliser,
    /// Sum of the squared weights of the dimensions (the score's scale).
    norm2: f32,
    clips: Vec<Option<IndexedClip>>,
}

#[derive(Debug, Clone)]
struct IndexedClip {
    fps: f32,
    frames: usize,
    values: Vec<f32>,
}

/// A window as found by the scan; `d` is the summed squared distance.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cand {
    d: f32,
    clip: usize,
    start: usize,
    stop: usize,
}

impl Eq for Cand {}

impl Ord for Cand {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.d
            .total_cmp(&o.d)
            .then(self.clip.cmp(&o.clip))
            .then(self.start.cmp(&o.start))
            .then(self.stop.cmp(&o.stop))
    }
}

impl PartialOrd for Cand {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// For each stretch: the window length in target frames and the sample offsets inside it.
struct Shapes {
    list: Vec<(usize, Vec<usize>)>,
    min_w: usize,
    max_w: usize,
}

impl Shapes {
    fn new(lq: usize, q_fps: f32, t_fps: f32, stretches: &[f32], k: usize) -> Self {
        let mut list: Vec<(usize, Vec<usize>)> = Vec::new();
        for &s in stretches {
            let w = ((lq as f64 * f64::from(t_fps) / f64::from(q_fps) * f64::from(s)).round()
                as usize)
                .max(1);
            if list.iter().any(|o| o.0 == w) {
                continue;
            }
            let offsets = (0..k).map(|i| (2 * i + 1) * w / (2 * k)).collect();
            list.push((w, offsets));
        }
        let min_w = list.iter().map(|x| x.0).min().unwrap_or(1);
        let max_w = list.iter().map(|x| x.0).max().unwrap_or(1);
        Self { list, min_w, max_w }
    }
}

/// Sorted, disjoint windows per clip: the matches chosen so far.
struct Taken(Vec<Vec<(usize, usize)>>);

impl Taken {
    fn new(clips: usize) -> Self {
        Self(vec![Vec::new(); clips])
    }

    fn overlaps(&self, clip: usize, start: usize, stop: usize) -> bool {
        let list = &self.0[clip];
        let i = list.partition_point(|w| w.0 < stop);
        i > 0 && list[i - 1].1 > start
    }

    fn insert(&mut self, clip: usize, start: usize, stop: usize) {
        let list = &mut self.0[clip];
        let i = list.partition_point(|w| w.0 < start);
        list.insert(i, (start, stop));
    }
}

impl SearchIndex {
    /// Fits the normaliser over `clips` and stores their normalised, weighted features.
    pub fn build(clips: &[&ClipFeatures], weights: &Weights) -> Result<Self, SearchError> {
        let sparse: Vec<Option<&ClipFeatures>> = clips.iter().map(|c| Some(*c)).collect();
        Self::build_sparse(&sparse, weights)
    }

    /// [`SearchIndex::build`] over a list with holes: `None` entries keep their clip number but
    /// hold nothing. Clips are normalised on all cores.
    pub fn build_sparse(
        clips: &[Option<&ClipFeatures>],
        weights: &Weights,
    ) -> Result<Self, SearchError> {
        weights.validate().map_err(SearchError::BadSettings)?;
        for (i, c) in clips.iter().enumerate() {
            if let Some(c) = c {
                c.validate()
                    .map_err(|message| SearchError::BadFeatures { clip: i, message })?;
            }
        }
        let norm2 = (0..DIMS).map(|d| weights.of(group_of(d)).powi(2)).sum();
        // Shape every value once (on all cores), fit over the shaped values, then normalise them in
        // place: an hour of 120 fps is 14 million values.
        let mut clips: Vec<Option<IndexedClip>> = clips
            .par_iter()
            .map(|c| {
                c.map(|c| IndexedClip {
                    fps: c.fps,
                    frames: c.frames,
                    values: c
                        .values
                        .chunks_exact(DIMS)
                        .flat_map(|fr| (0..DIMS).map(move |d| shape(d, fr[d])))
                        .collect(),
                })
            })
            .collect();
        let normaliser = Normaliser::fit_shaped(
            clips.iter().flatten().flat_map(|c| {
                c.values
                    .chunks_exact(DIMS)
                    .map(|fr| <[f32; DIMS]>::try_from(fr).unwrap_or([0.0; DIMS]))
            }),
            weights,
        );
        clips.par_iter_mut().flatten().for_each(|c| {
            for fr in c.values.chunks_exact_mut(DIMS) {
                for ((x, m), s) in fr.iter_mut().zip(&normaliser.mean).zip(&normaliser.scale) {
                    *x = (*x - m) * s;
                }
            }
        });
        Ok(Self {
            normaliser,
            norm2,
            clips,
        })
    }

    /// Number of clips (including those without features).
    pub fn clip_count(&self) -> usize {
        self.clips.len()
    }

    /// Frames of clip `clip`, if it has features.
    pub fn frames(&self, clip: usize) -> Option<usize> {
        self.clips.get(clip)?.as_ref().map(|c| c.frames)
    }

    /// Total frames searched.
    pub fn total_frames(&self) -> usize {
        self.clips.iter().flatten().map(|c| c.frames).sum()
    }

    /// Checks a query against the clips of the index.
    pub fn check(&self, q: &Query) -> Result<(), SearchError> {
        let c = self
            .clips
            .get(q.clip)
            .ok_or(SearchError::NoSuchClip {
                clip: q.clip,
                clips: self.clips.len(),
            })?
            .as_ref()
            .ok_or(SearchError::NoFeatures { clip: q.clip })?;
        if q.start >= q.stop || q.stop > c.frames {
            return Err(SearchError::BadRange {
                start: q.start,
                stop: q.stop,
                frames: c.frames,
            });
        }
        Ok(())
    }

    /// The best non-overlapping matches of `q`, best first, on this thread. No match overlaps the
    /// query's own range.
    pub fn search(&self, q: &Query, settings: &SearchSettings) -> Result<Vec<Match>, SearchError> {
        self.search_with(q, settings, &AtomicBool::new(false), &mut |_, _| {})
    }

    /// [`SearchIndex::search`] that stops with [`SearchError::Cancelled`] soon after `cancel` is
    /// set, and reports `progress(clips scanned, clips)` after each clip.
    ///
    /// Exactness of the pruning: the scan keeps the `M` best coarse candidates (one per window
    /// start: the best stretch there). A window blocks at most `B = ceil(2 * longest window / step)
    /// + 1` other starts of its clip from being chosen, so the greedy best-first choice of `n`
    /// non-overlapping windows only ever looks at the best `n * (B + 1)` candidates; with
    /// `M = (top + spare) * (B + 1)` the result equals an unpruned scan of the same grid.
    pub fn search_with(
        &self,
        q: &Query,
        settings: &SearchSettings,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Vec<Match>, SearchError> {
        self.check(q)?;
        settings.validate()?;
        if settings.top == 0 {
            return Ok(Vec::new());
        }
        let Some(qc) = &self.clips[q.clip] else {
            return Err(SearchError::NoFeatures { clip: q.clip });
        };
        let lq = q.stop - q.start;
        let k = settings.samples.min(lq);
        let mut qs = Vec::with_capacity(k * DIMS);
        for i in 0..k {
            let f = q.start + (2 * i + 1) * lq / (2 * k);
            qs.extend_from_slice(&qc.values[f * DIMS..(f + 1) * DIMS]);
        }
        // Scores are sqrt(d / wn); a bound on the score is a bound on d.
        let wn = k as f32 * self.norm2;
        let limit = settings
            .max_score
            .map_or(f32::INFINITY, |s| (s * s * wn).next_up());
        // Stretch 1 first: it usually gives the tightest early bound.
        let mut stretches = settings.stretches.clone();
        stretches.sort_by(|a, b| (a - 1.0).abs().total_cmp(&(b - 1.0).abs()));
        let step_of = |c: &IndexedClip| ((c.fps / settings.coarse_hz).round() as usize).max(1);
        let shapes: Vec<Option<Shapes>> = self
            .clips
            .iter()
            .map(|c| {
                c.as_ref()
                    .map(|c| Shapes::new(lq, qc.fps, c.fps, &stretches, k))
            })
            .collect();
        let blocked = self
            .clips
            .iter()
            .zip(&shapes)
            .filter_map(|(c, s)| Some((2 * s.as_ref()?.max_w).div_ceil(step_of(c.as_ref()?)) + 1))
            .max()
            .unwrap_or(1);
        let spare = 2 + settings.top / 4;
        let keep = settings
            .top
            .saturating_add(spare)
            .saturating_mul(blocked + 1);
        let mut heap: BinaryHeap<Cand> = BinaryHeap::new();
        let total = self.clips.len();
        for (ci, (c, shapes)) in self.clips.iter().zip(&shapes).enumerate() {
            if cancel.load(Ordering::Relaxed) {
                return Err(SearchError::Cancelled);
            }
            if let (Some(c), Some(shapes)) = (c, shapes) {
                let own = (ci == q.clip).then_some((q.start, q.stop));
                let step = step_of(c);
                let mut start = 0;
                let mut visited = 0usize;
                while start + shapes.min_w <= c.frames {
                    let bound = if heap.len() >= keep {
                        heap.peek().map_or(limit, |w| w.d.min(limit))
                    } else {
                        limit
                    };
                    if let Some(m) = best_at(&qs, c, ci, start, &shapes.list, own, None, bound) {
                        if heap.len() >= keep {
                            heap.pop();
                        }
                        heap.push(m);
                    }
                    start += step;
                    visited += 1;
                    if visited.is_multiple_of(8192) && cancel.load(Ordering::Relaxed) {
                        return Err(SearchError::Cancelled);
                    }
                }
            }
            progress(ci + 1, total);
        }
        // Greedy best-first choice of non-overlapping windows on the coarse grid.
        let cands = heap.into_sorted_vec();
        let want = settings.top.saturating_add(spare);
        let mut taken = Taken::new(total);
        let mut picks: Vec<Cand> = Vec::new();
        for m in cands {
            if picks.len() == want {
                break;
            }
            if !taken.overlaps(m.clip, m.start, m.stop) {
                taken.insert(m.clip, m.start, m.stop);
                picks.push(m);
            }
        }
        // Refine each pick, best first, frame by frame around its start, never onto a window
        // already final.
        let mut taken = Taken::new(total);
        let mut out: Vec<Cand> = Vec::with_capacity(picks.len());
        for m in picks {
            if out.len() == settings.top {
                break;
            }
            let (Some(c), Some(shapes)) = (&self.clips[m.clip], &shapes[m.clip]) else {
                continue;
            };
            let step = step_of(c);
            let own = (m.clip == q.clip).then_some((q.start, q.stop));
            let mut best = (!taken.overlaps(m.clip, m.start, m.stop)).then_some(m);
            let mut bound = best.map_or(limit, |b| b.d);
            for s in m.start.saturating_sub(step - 1)..=m.start + step - 1 {
                if s == m.start && best.is_some() {
                    continue;
                }
                if let Some(r) = best_at(&qs, c, m.clip, s, &shapes.list, own, Some(&taken), bound)
                {
                    bound = r.d;
                    best = Some(r);
                }
            }
            if let Some(b) = best {
                taken.insert(b.clip, b.start, b.stop);
                out.push(b);
            }
        }
        out.sort();
        Ok(out
            .into_iter()
            .map(|m| Match {
                clip: m.clip,
                start: m.start,
                stop: m.stop,
                score: if wn > 0.0 { (m.d / wn).sqrt() } else { 0.0 },
            })
            .collect())
    }
}

/// The best window starting at `start` over the stretches whose summed squared distance is below
/// `bound`, skipping windows that run past the clip, overlap `own` or a window in `taken`.
#[allow(
    clippy::too_many_arguments,
    reason = "the scan's innermost call: plain arguments, no struct to build per window"
)]
#[inline]
fn best_at(
    qs: &[f32],
    c: &IndexedClip,
    ci: usize,
    start: usize,
    windows: &[(usize, Vec<usize>)],
    own: Option<(usize, usize)>,
    taken: Option<&Taken>,
    mut bound: f32,
) -> Option<Cand> {
    let mut best: Option<Cand> = None;
    for (w, offsets) in windows {
        let stop = start + w;
        if stop > c.frames {
            continue;
        }
        if let Some((a, b)) = own
            && start < b
            && a < stop
        {
            continue;
        }
        if taken.is_some_and(|t| t.overlaps(ci, start, stop)) {
            continue;
        }
        let d = distance(qs, &c.values, start, offsets, bound);
        if d < bound {
            bound = d;
            best = Some(Cand {
                d,
                clip: ci,
                start,
                stop,
            });
        }
    }
    best
}

/// Sum over the samples of squared distances, abandoned (returning a value >= `bound`) as soon as
/// it reaches `bound`.
#[inline]
fn distance(qs: &[f32], values: &[f32], start: usize, offsets: &[usize], bound: f32) -> f32 {
    let mut acc = 0.0f32;
    for (a, &o) in qs.chunks_exact(DIMS).zip(offsets) {
        let f = (start + o) * DIMS;
        acc += sq_dist(a, &values[f..f + DIMS]);
        if acc >= bound {
            return acc;
        }
    }
    acc
}

/// Squared Euclidean distance of two frames, in 8 independent lanes (which the compiler keeps in
/// vector registers).
#[inline(always)]
fn sq_dist(a: &[f32], b: &[f32]) -> f32 {
    let (a, b) = (&a[..DIMS], &b[..DIMS]);
    let mut lanes = [0f32; 8];
    for (ca, cb) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for l in 0..8 {
            let d = ca[l] - cb[l];
            lanes[l] += d * d;
        }
    }
    (lanes[0] + lanes[4]) + (lanes[1] + lanes[5]) + (lanes[2] + lanes[6]) + (lanes[3] + lanes[7])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::anim::Clip;
    use crate::core::demo::{demo_scripts, generate_take};
    use crate::core::similar::features::{JointOverrides, clip_features_by_name, retime};

    fn feats(clip: &Clip) -> ClipFeatures {
        clip_features_by_name(clip, &JointOverrides::default()).unwrap()
    }

    fn take(i: usize) -> Clip {
        generate_take(&demo_scripts()[i]).0
    }

    /// `host` with `insert`'s frames in place of frames `[at, at + insert.frame_count)`; the
    /// inserted root is moved on the ground so it continues from the host's root position.
    fn planted(host: &Clip, insert: &Clip, at: usize) -> Clip {
        let n = host.joint_count();
        let mut out = host.clone();
        let shift = host.translations[at * n] - insert.translations[0];
        for f in 0..insert.frame_count {
            let (dst, src) = ((at + f) * n, f * n);
            out.rotations[dst..dst + n].copy_from_slice(&insert.rotations[src..src + n]);
            for j in 0..n {
                let mut t = insert.translations[src + j];
                if j == 0 {
                    t += glam::Vec3::new(shift.x, 0.0, shift.z);
                }
                out.translations[dst + j] = t;
            }
        }
        out
    }

    fn check_invariants(m: &[Match], q: &Query) {
        for (i, a) in m.iter().enumerate() {
            assert!(
                !(a.clip == q.clip && a.start < q.stop && q.start < a.stop),
                "overlaps the query: {a:?}"
            );
            for b in &m[..i] {
                assert!(!a.overlaps(b), "{a:?} {b:?}");
                assert!(b.score <= a.score, "not ranked: {m:?}");
            }
        }
    }

    #[test]
    fn planted_copy_is_found_first_and_stretched_copy_second() {
        // Query: the walk-to-run transition of walk_to_run_female_01 (one second around 3.5 s),
        // a moment that occurs once in the library.
        let source = take(3);
        let (qs, qe) = (90, 120);
        // Host: the idle take (5 s) with an exact copy and a copy played 20% slower planted in it.
        // Each copy carries 15 source frames of margin on each side, so the velocity, heading and
        // trajectory features of the query's frames see the same motion as in the source.
        let copy = source.sub_clip(qs - 15, qe + 15, "copy").unwrap();
        let slow = retime(&source, qs - 15, qe + 15, source.fps, 1.0 / 1.2).unwrap();
        assert_eq!(slow.frame_count, 72);
        let host = planted(&planted(&take(2), &copy, 5), &slow, 75);
        // The rest of the library: walks, runs and the other transitions (run to walk, a limping
        // tired walk to run).
        let mut all = vec![feats(&source), feats(&host)];
        all.extend([0usize, 1, 4, 7, 9].iter().map(|&i| feats(&take(i))));
        let refs: Vec<&ClipFeatures> = all.iter().collect();
        let index = SearchIndex::build(&refs, &Weights::default()).unwrap();
        let q = Query {
            clip: 0,
            start: qs,
            stop: qe,
        };
        let m = index.search(&q, &SearchSettings::default()).unwrap();
        assert_eq!(m.len(), 10);
        check_invariants(&m, &q);
        assert_eq!((m[0].clip, m[0].start, m[0].stop), (1, 20, 50), "{m:?}");
        assert!(m[0].score < 0.01, "{m:?}");
        // The slowed copy: query frames 90..120 land on 93..129 of the host.
        let s = m[1];
        assert_eq!(s.clip, 1, "{m:?}");
        assert!(
            s.start.abs_diff(93) <= 2 && s.stop.abs_diff(129) <= 3,
            "{m:?}"
        );
        assert!(s.score < 0.6 * m[2].score, "{m:?}");
    }

    /// Every window of every clip at every start (the best stretch at each), chosen greedily best
    /// first without overlaps: the slow obvious model of the search on a grid of every frame.
    fn brute_force(
        index: &SearchIndex,
        q: &Query,
        s: &SearchSettings,
    ) -> Vec<(usize, usize, usize, f32)> {
        let qc = index.clips[q.clip].as_ref().unwrap();
        let lq = q.stop - q.start;
        let k = s.samples.min(lq);
        let mut cands = Vec::new();
        for (ci, c) in index.clips.iter().enumerate() {
            let Some(c) = c else { continue };
            for start in 0..c.frames {
                let mut best: Option<(f32, usize)> = None;
                for st in &s.stretches {
                    let w = ((lq as f64 * f64::from(c.fps) / f64::from(qc.fps) * f64::from(*st))
                        .round() as usize)
                        .max(1);
                    if start + w > c.frames
                        || (ci == q.clip && start < q.stop && q.start < start + w)
                    {
                        continue;
                    }
                    let mut d = 0.0f64;
                    for i in 0..k {
                        let fq = q.start + (2 * i + 1) * lq / (2 * k);
                        let fc = start + (2 * i + 1) * w / (2 * k);
                        for x in 0..DIMS {
                            let e = f64::from(qc.values[fq * DIMS + x] - c.values[fc * DIMS + x]);
                            d += e * e;
                        }
                    }
                    let d = (d / (k as f64 * f64::from(index.norm2))).sqrt() as f32;
                    if best.is_none_or(|b| d < b.0) {
                        best = Some((d, w));
                    }
                }
                if let Some((d, w)) = best
                    && s.max_score.is_none_or(|m| d <= m)
                {
                    cands.push((d, ci, start, start + w));
                }
            }
        }
        cands.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut out: Vec<(usize, usize, usize, f32)> = Vec::new();
        for (d, c, a, b) in cands {
            if out.len() == s.top {
                break;
            }
            if !out.iter().any(|o| o.0 == c && o.1 < b && a < o.2) {
                out.push((c, a, b, d));
            }
        }
        out
    }

    #[test]
    fn pruned_search_equals_an_exhaustive_scan() {
        // On 30 fps clips the coarse grid is every frame, so the pruned search must give exactly
        // the slow model's matches, for several queries, a top-K and a score threshold.
        let clips: Vec<Clip> = [3usize, 7, 2].iter().map(|&i| take(i)).collect();
        let all: Vec<ClipFeatures> = clips.iter().map(feats).collect();
        let refs: Vec<&ClipFeatures> = all.iter().collect();
        let index = SearchIndex::build(&refs, &Weights::default()).unwrap();
        assert_eq!(index.normaliser, Normaliser::fit(&all, &Weights::default()));
        for (q, top, max_score) in [
            (
                Query {
                    clip: 0,
                    start: 40,
                    stop: 70,
                },
                12,
                None,
            ),
            (
                Query {
                    clip: 1,
                    start: 100,
                    stop: 145,
                },
                5,
                None,
            ),
            (
                Query {
                    clip: 2,
                    start: 10,
                    stop: 17,
                },
                8,
                None,
            ),
            (
                Query {
                    clip: 0,
                    start: 150,
                    stop: 180,
                },
                1000,
                Some(0.6),
            ),
        ] {
            let settings = SearchSettings {
                top,
                max_score,
                ..SearchSettings::default()
            };
            let got = index.search(&q, &settings).unwrap();
            let want = brute_force(&index, &q, &settings);
            assert_eq!(got.len(), want.len(), "{q:?}: {got:?} vs {want:?}");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(
                    (g.clip, g.start, g.stop),
                    (w.0, w.1, w.2),
                    "{q:?}: {got:?} vs {want:?}"
                );
                assert!((g.score - w.3).abs() < 1e-4, "{g:?} vs {w:?}");
            }
            check_invariants(&got, &q);
            if let Some(limit) = max_score {
                assert!(got.len() >= 3, "{got:?}");
                assert!(got.iter().all(|m| m.score <= limit), "{got:?}");
            }
        }
    }

    #[test]
    fn coarse_grid_and_refinement_find_the_exact_window_at_120_fps() {
        // A 120 fps copy of a take, planted 1 frame off the coarse grid (every 4th frame): the
        // refinement lands on it exactly.
        let source = take(3);
        let fast = retime(&source, 0, source.frame_count, 120.0, 1.0).unwrap();
        let run = take(1);
        let run = retime(&run, 0, run.frame_count, 120.0, 1.0).unwrap();
        let host = planted(&run, &fast.sub_clip(300, 540, "c").unwrap(), 401);
        let all = [feats(&fast), feats(&host)];
        let index = SearchIndex::build(&[&all[0], &all[1]], &Weights::default()).unwrap();
        let q = Query {
            clip: 0,
            start: 360,
            stop: 480,
        };
        let m = index
            .search(
                &q,
                &SearchSettings {
                    top: 3,
                    ..SearchSettings::default()
                },
            )
            .unwrap();
        assert_eq!((m[0].clip, m[0].start, m[0].stop), (1, 461, 581), "{m:?}");
        assert!(m[0].score < 1e-3, "{m:?}");
        check_invariants(&m, &q);
    }

    #[test]
    fn bad_queries_settings_and_cancel_are_errors() {
        let c = feats(&take(2));
        let index = SearchIndex::build_sparse(&[Some(&c), None], &Weights::default()).unwrap();
        for (a, b, what) in [
            (10, 10, "empty"),
            (20, 10, "empty"),
            (0, 100_000, "outside"),
        ] {
            let e = index
                .search(
                    &Query {
                        clip: 0,
                        start: a,
                        stop: b,
                    },
                    &SearchSettings::default(),
                )
                .unwrap_err();
            let text = e.to_string();
            assert!(text.contains("151 frames") && text.contains(what), "{text}");
        }
        let e = index.check(&Query {
            clip: 3,
            start: 0,
            stop: 1,
        });
        assert!(matches!(e, Err(SearchError::NoSuchClip { .. })));
        let e = index.check(&Query {
            clip: 1,
            start: 0,
            stop: 1,
        });
        assert!(matches!(e, Err(SearchError::NoFeatures { clip: 1 })));
        let q = Query {
            clip: 0,
            start: 0,
            stop: 30,
        };
        for bad in [
            SearchSettings {
                stretches: vec![],
                ..Default::default()
            },
            SearchSettings {
                stretches: vec![f32::NAN],
                ..Default::default()
            },
            SearchSettings {
                samples: 0,
                ..Default::default()
            },
            SearchSettings {
                coarse_hz: 0.0,
                ..Default::default()
            },
            SearchSettings {
                max_score: Some(-1.0),
                ..Default::default()
            },
        ] {
            assert!(
                matches!(index.search(&q, &bad), Err(SearchError::BadSettings(_))),
                "{bad:?}"
            );
        }
        assert!(
            index
                .search(
                    &q,
                    &SearchSettings {
                        top: 0,
                        ..Default::default()
                    }
                )
                .unwrap()
                .is_empty()
        );
        let cancel = AtomicBool::new(true);
        let e = index.search_with(&q, &SearchSettings::default(), &cancel, &mut |_, _| {});
        assert_eq!(e, Err(SearchError::Cancelled));
        let mut calls = Vec::new();
        index
            .search_with(
                &q,
                &SearchSettings::default(),
                &AtomicBool::new(false),
                &mut |a, b| calls.push((a, b)),
            )
            .unwrap();
        assert_eq!(calls, [(1, 2), (2, 2)]);
        // Bad features and weights.
        let mut nan = c.clone();
        nan.values[40] = f32::NAN;
        assert!(matches!(
            SearchIndex::build(&[&nan], &Weights::default()),
            Err(SearchError::BadFeatures { clip: 0, .. })
        ));
        let zero = Weights {
            foot_position: 0.0,
            hand_position: 0.0,
            foot_velocity: 0.0,
            hand_velocity: 0.0,
            root_velocity: 0.0,
            root_turn: 0.0,
            trajectory: 0.0,
        };
        assert!(matches!(
            SearchIndex::build(&[&c], &zero),
            Err(SearchError::BadSettings(_))
        ));
    }
}
