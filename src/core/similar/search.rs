//! Searching a query segment against every window of every clip (see `docs/SIMILAR.md`).
//!
//! The query's features are sampled at [`SearchSettings::samples`] evenly spaced times; each window
//! of a clip is sampled at the same relative times, for each time-stretch factor (the window is
//! that factor times the query's duration, in the target clip's own frame rate). The distance is the
//! root mean square over the samples of the Euclidean distance between normalised, weighted
//! feature vectors. Window starts are first visited on a coarse grid (every
//! `fps / coarse_hz` frames) with early abandoning against the current worst kept match, then the
//! kept matches are refined frame by frame around their start.

use super::features::{ClipFeatures, DIMS, Weights, group_of};

/// How a search runs. Defaults are stated on each field.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSettings {
    /// Number of matches returned. Default 10.
    pub top: usize,
    /// Window length as a multiple of the query's duration. Default 0.75, 0.875, 1.0, 1.125, 1.25
    /// (time stretch of +-25%).
    pub stretches: Vec<f32>,
    /// Feature samples compared per window. Default 16 (fewer if the query is shorter).
    pub samples: usize,
    /// Rate, in window starts per second, of the coarse pass. Default 30.
    pub coarse_hz: f32,
}

impl Default for SearchSettings {
    fn default() -> Self {
        Self {
            top: 10,
            stretches: vec![0.75, 0.875, 1.0, 1.125, 1.25],
            samples: 16,
            coarse_hz: 30.0,
        }
    }
}

/// Per-dimension normalisation fitted over the clips searched: `(x - mean) * scale`, where
/// `scale = weight of the dimension's group / standard deviation` (the deviation floored at 1 cm,
/// 1 cm/s or 0.05 rad/s so a nearly constant dimension is not blown up).
#[derive(Debug, Clone, PartialEq)]
pub struct Normaliser {
    pub mean: [f32; DIMS],
    pub std: [f32; DIMS],
    pub scale: [f32; DIMS],
}

impl Normaliser {
    pub fn fit(clips: &[&ClipFeatures], weights: &Weights) -> Self {
        let mut sum = [0f64; DIMS];
        let mut sum2 = [0f64; DIMS];
        let mut n = 0usize;
        for c in clips {
            for fr in c.values.chunks_exact(DIMS) {
                for d in 0..DIMS {
                    let x = f64::from(fr[d]);
                    sum[d] += x;
                    sum2[d] += x * x;
                }
                n += 1;
            }
        }
        let mut mean = [0f32; DIMS];
        let mut std = [1f32; DIMS];
        let mut scale = [0f32; DIMS];
        for d in 0..DIMS {
            let floor = if d == 27 { 0.05 } else { 1.0 };
            if n > 0 {
                let m = sum[d] / n as f64;
                mean[d] = m as f32;
                std[d] = ((sum2[d] / n as f64 - m * m).max(0.0).sqrt() as f32).max(floor);
            }
            scale[d] = weights.of(group_of(d)) / std[d];
        }
        Self { mean, std, scale }
    }

    #[inline]
    pub fn apply(&self, frame: &[f32], out: &mut [f32]) {
        for d in 0..DIMS {
            out[d] = (frame[d] - self.mean[d]) * self.scale[d];
        }
    }
}

/// Normalised features of every clip searched, ready for queries.
#[derive(Debug, Clone)]
pub struct SearchIndex {
    pub normaliser: Normaliser,
    clips: Vec<IndexedClip>,
}

#[derive(Debug, Clone)]
struct IndexedClip {
    fps: f32,
    frames: usize,
    values: Vec<f32>,
}

/// A query: frames `[start, stop)` of clip `clip` (an index into the clips of the index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Query {
    pub clip: usize,
    pub start: usize,
    pub stop: usize,
}

/// One match: frames `[start, stop)` of clip `clip`, and its distance (lower is more similar; 0 is
/// identical features).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Match {
    pub clip: usize,
    pub start: usize,
    pub stop: usize,
    pub score: f32,
}

impl Match {
    fn overlaps(&self, o: &Match) -> bool {
        self.clip == o.clip && self.start < o.stop && o.start < self.stop
    }
}

/// Why a search cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    #[error("no clip {clip} (the search has {clips} clips)")]
    NoSuchClip { clip: usize, clips: usize },
    #[error(
        "the query range {start}:{stop} is empty or outside the clip, which has {frames} frames (valid ranges lie in 0:{frames})"
    )]
    BadRange {
        start: usize,
        stop: usize,
        frames: usize,
    },
    #[error("invalid search settings: {0}")]
    BadSettings(String),
}

impl SearchIndex {
    /// Fits the normaliser over `clips` and stores their normalised features.
    pub fn build(clips: &[&ClipFeatures], weights: &Weights) -> Self {
        let normaliser = Normaliser::fit(clips, weights);
        let clips = clips
            .iter()
            .map(|c| {
                let mut values = vec![0f32; c.values.len()];
                for (o, i) in values
                    .chunks_exact_mut(DIMS)
                    .zip(c.values.chunks_exact(DIMS))
                {
                    normaliser.apply(i, o);
                }
                IndexedClip {
                    fps: c.fps,
                    frames: c.frames,
                    values,
                }
            })
            .collect();
        Self { normaliser, clips }
    }

    pub fn clip_count(&self) -> usize {
        self.clips.len()
    }

    pub fn frames(&self, clip: usize) -> Option<usize> {
        self.clips.get(clip).map(|c| c.frames)
    }

    /// Checks a query against the clips of the index.
    pub fn check(&self, q: &Query) -> Result<(), SearchError> {
        let c = self.clips.get(q.clip).ok_or(SearchError::NoSuchClip {
            clip: q.clip,
            clips: self.clips.len(),
        })?;
        if q.start >= q.stop || q.stop > c.frames {
            return Err(SearchError::BadRange {
                start: q.start,
                stop: q.stop,
                frames: c.frames,
            });
        }
        Ok(())
    }

    /// The best non-overlapping matches of `q`, best first. No match overlaps the query's own range.
    pub fn search(&self, q: &Query, settings: &SearchSettings) -> Result<Vec<Match>, SearchError> {
        self.check(q)?;
        if settings.top == 0 || settings.samples == 0 {
            return Ok(Vec::new());
        }
        if settings.stretches.is_empty()
            || settings
                .stretches
                .iter()
                .any(|s| !(s.is_finite() && *s > 0.0))
            || !(settings.coarse_hz.is_finite() && settings.coarse_hz > 0.0)
        {
            return Err(SearchError::BadSettings(
                "stretches and coarse_hz must be positive".to_owned(),
            ));
        }
        let qc = &self.clips[q.clip];
        let lq = q.stop - q.start;
        let k = settings.samples.min(lq);
        let mut qs = Vec::with_capacity(k * DIMS);
        for i in 0..k {
            let f = q.start + (2 * i + 1) * lq / (2 * k);
            qs.extend_from_slice(&qc.values[f * DIMS..(f + 1) * DIMS]);
        }
        // Stretch 1 first: it usually gives the tightest early bound.
        let mut stretches = settings.stretches.clone();
        stretches.sort_by(|a, b| (a - 1.0).abs().total_cmp(&(b - 1.0).abs()));
        let mut top = TopSet::new(settings.top.saturating_mul(2));
        let mut windows: Vec<(usize, Vec<usize>)> = Vec::new();
        for (ci, c) in self.clips.iter().enumerate() {
            window_shapes(lq, qc.fps, c.fps, &stretches, k, &mut windows);
            let Some(min_w) = windows.iter().map(|w| w.0).min() else {
                continue;
            };
            if min_w > c.frames {
                continue;
            }
            let step = ((c.fps / settings.coarse_hz).round() as usize).max(1);
            let own = (ci == q.clip).then_some((q.start, q.stop));
            let mut start = 0;
            while start + min_w <= c.frames {
                let bound = top.bound(k);
                if let Some(m) = best_at(&qs, c, ci, start, &windows, own, bound) {
                    top.insert(m);
                }
                start += step;
            }
        }
        // Refine each kept match frame by frame around its coarse start.
        let mut refined: Vec<Match> = Vec::with_capacity(top.items.len());
        for m in &top.items {
            let c = &self.clips[m.clip];
            window_shapes(lq, qc.fps, c.fps, &stretches, k, &mut windows);
            let step = ((c.fps / settings.coarse_hz).round() as usize).max(1);
            let own = (m.clip == q.clip).then_some((q.start, q.stop));
            let mut best = *m;
            for s in m.start.saturating_sub(step - 1)..=m.start + step - 1 {
                if let Some(r) = best_at(&qs, c, m.clip, s, &windows, own, best.score) {
                    best = r;
                }
            }
            refined.push(best);
        }
        refined.sort_by(|a, b| a.score.total_cmp(&b.score));
        let mut out: Vec<Match> = Vec::with_capacity(settings.top);
        for m in refined {
            if out.len() == settings.top {
                break;
            }
            if !out.iter().any(|o| o.overlaps(&m)) {
                out.push(m);
            }
        }
        for m in &mut out {
            m.score = (m.score / k as f32).sqrt();
        }
        Ok(out)
    }
}

/// For each stretch: the window length in target frames and the sample offsets inside it.
fn window_shapes(
    lq: usize,
    q_fps: f32,
    t_fps: f32,
    stretches: &[f32],
    k: usize,
    out: &mut Vec<(usize, Vec<usize>)>,
) {
    out.clear();
    for &s in stretches {
        let w = ((lq as f32 * t_fps / q_fps * s).round() as usize).max(1);
        if out.iter().any(|o| o.0 == w) {
            continue;
        }
        let offsets = (0..k).map(|i| (2 * i + 1) * w / (2 * k)).collect();
        out.push((w, offsets));
    }
}

/// The best window starting at `start` over the stretches, if its summed squared distance is below
/// `bound` (the match's score is that sum; the caller turns it into the RMS distance).
#[inline]
fn best_at(
    qs: &[f32],
    c: &IndexedClip,
    ci: usize,
    start: usize,
    windows: &[(usize, Vec<usize>)],
    own: Option<(usize, usize)>,
    mut bound: f32,
) -> Option<Match> {
    let mut best: Option<Match> = None;
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
        let d = distance(qs, &c.values, start, offsets, bound);
        if d < bound {
            bound = d;
            best = Some(Match {
                clip: ci,
                start,
                stop,
                score: d,
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
        let b = &values[f..f + DIMS];
        let mut lanes = [0f32; 8];
        for (ca, cb) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
            for l in 0..8 {
                let d = ca[l] - cb[l];
                lanes[l] += d * d;
            }
        }
        acc += lanes.iter().sum::<f32>();
        if acc >= bound {
            return acc;
        }
    }
    acc
}

/// The best non-overlapping matches seen so far, sorted by score (summed squared distance).
struct TopSet {
    cap: usize,
    items: Vec<Match>,
}

impl TopSet {
    fn new(cap: usize) -> Self {
        Self {
            cap: cap.max(1),
            items: Vec::new(),
        }
    }

    /// A window must score below this to enter.
    fn bound(&self, _samples: usize) -> f32 {
        if self.items.len() < self.cap {
            f32::INFINITY
        } else {
            self.items[self.items.len() - 1].score
        }
    }

    fn insert(&mut self, m: Match) {
        if self
            .items
            .iter()
            .any(|o| o.overlaps(&m) && o.score <= m.score)
        {
            return;
        }
        self.items.retain(|o| !o.overlaps(&m));
        let at = self.items.partition_point(|o| o.score <= m.score);
        self.items.insert(at, m);
        self.items.truncate(self.cap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::anim::Clip;
    use crate::core::demo::{demo_scripts, generate_take};
    use crate::core::similar::features::{FeatureJoints, JointOverrides, clip_features};

    fn feats(clip: &Clip) -> ClipFeatures {
        let j = FeatureJoints::find(&clip.skeleton, &JointOverrides::default()).unwrap();
        clip_features(clip, &j).unwrap()
    }

    /// Resamples a clip's frames `[start, stop)` to `frames` frames (nearest source frame).
    fn stretched(clip: &Clip, start: usize, stop: usize, frames: usize) -> Clip {
        let n = clip.joint_count();
        let mut out = clip.sub_clip(start, start + 1, "s").unwrap();
        out.rotations.clear();
        out.translations.clear();
        out.scales.clear();
        for f in 0..frames {
            let src = start + (f * (stop - start) + frames / 2) / frames;
            let src = src.min(stop - 1);
            out.rotations
                .extend_from_slice(&clip.rotations[src * n..(src + 1) * n]);
            out.translations
                .extend_from_slice(&clip.translations[src * n..(src + 1) * n]);
            out.scales
                .extend_from_slice(&clip.scales[src * n..(src + 1) * n]);
        }
        out.frame_count = frames;
        out
    }

    /// `host` with `insert`'s frames put in place of frames `[at, at + insert.frame_count)`; the
    /// inserted root is moved so it continues from the host's root position.
    fn planted(host: &Clip, insert: &Clip, at: usize) -> Clip {
        let n = host.joint_count();
        let mut out = host.clone();
        let shift = host.translations[at * n] - insert.translations[0];
        for f in 0..insert.frame_count {
            let dst = (at + f) * n;
            let src = f * n;
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

    #[test]
    fn planted_copy_is_found_first_and_stretched_copy_second() {
        let scripts = demo_scripts();
        // Query: one walking cycle of the limping walk (30 frames at 1 cycle/s, 30 fps).
        let limp = generate_take(&scripts[5]).0;
        let (qs, qe) = (90, 120);
        // Host: the idle take (5 s), with an exact copy and a copy slowed by 20% planted in it. The
        // copies carry 15 source frames of margin on each side so the velocity and trajectory
        // features near the query's ends see the same motion as in the source (a real take has no
        // seam there).
        let idle = generate_take(&scripts[2]).0;
        let copy = limp.sub_clip(qs - 15, qe + 15, "copy").unwrap();
        let slow = stretched(&limp, qs - 15, qe + 15, 72);
        let host = planted(&planted(&idle, &copy, 5), &slow, 75);
        let others: Vec<Clip> = [0usize, 1, 3, 6]
            .iter()
            .map(|&i| generate_take(&scripts[i]).0)
            .collect();
        let mut all = vec![feats(&limp), feats(&host)];
        all.extend(others.iter().map(feats));
        let refs: Vec<&ClipFeatures> = all.iter().collect();
        let index = SearchIndex::build(&refs, &Weights::default());
        let q = Query {
            clip: 0,
            start: qs,
            stop: qe,
        };
        let m = index.search(&q, &SearchSettings::default()).unwrap();
        assert!(m.len() >= 2, "{m:?}");
        assert_eq!((m[0].clip, m[0].start, m[0].stop), (1, 20, 50), "{m:?}");
        assert!(m[0].score < 0.01, "{m:?}");
        // The slowed copy (query frames 90..120 land on 93..129 of the host) is found, stretched,
        // and ranks ahead of every match in the takes that hold no copy of the query.
        let slow_at = m
            .iter()
            .position(|a| a.clip == 1 && a.start.abs_diff(93) <= 2 && a.stop.abs_diff(129) <= 4)
            .unwrap_or_else(|| panic!("slowed copy not found: {m:?}"));
        assert!(m[slow_at].stop - m[slow_at].start > 32, "{m:?}");
        assert!(
            m.iter()
                .filter(|a| a.clip >= 2)
                .all(|a| a.score > m[slow_at].score),
            "{m:?}"
        );
        // Never the query itself, nor a window overlapping it; matches never overlap each other.
        for (i, a) in m.iter().enumerate() {
            assert!(!(a.clip == 0 && a.start < qe && qs < a.stop), "{a:?}");
            for b in &m[..i] {
                assert!(!a.overlaps(b), "{a:?} {b:?}");
            }
            if i > 0 {
                assert!(m[i - 1].score <= a.score);
            }
        }
    }

    #[test]
    fn pruned_search_equals_an_exhaustive_scan() {
        // With a coarse rate equal to the frame rate the search visits every start; compare its best
        // match to a brute-force minimum over every window and stretch.
        let scripts = demo_scripts();
        let clips: Vec<Clip> = [3usize, 7]
            .iter()
            .map(|&i| generate_take(&scripts[i]).0)
            .collect();
        let all: Vec<ClipFeatures> = clips.iter().map(feats).collect();
        let refs: Vec<&ClipFeatures> = all.iter().collect();
        let index = SearchIndex::build(&refs, &Weights::default());
        let q = Query {
            clip: 0,
            start: 40,
            stop: 70,
        };
        let settings = SearchSettings {
            top: 1,
            coarse_hz: 30.0,
            ..SearchSettings::default()
        };
        let got = index.search(&q, &settings).unwrap()[0];
        let k = 16;
        let qv: Vec<f32> = (0..k)
            .flat_map(|i| {
                let f = 40 + (2 * i + 1) * 30 / (2 * k);
                index.clips[0].values[f * DIMS..(f + 1) * DIMS].to_vec()
            })
            .collect();
        let mut best = f32::INFINITY;
        for (ci, c) in index.clips.iter().enumerate() {
            for s in &settings.stretches {
                let w = ((30.0 * s).round() as usize).max(1);
                for start in 0..=c.frames.saturating_sub(w) {
                    if ci == 0 && start < 70 && 40 < start + w {
                        continue;
                    }
                    let mut d = 0.0;
                    for i in 0..k {
                        let f = start + (2 * i + 1) * w / (2 * k);
                        for x in 0..DIMS {
                            let e = qv[i * DIMS + x] - c.values[f * DIMS + x];
                            d += e * e;
                        }
                    }
                    best = best.min(d);
                }
            }
        }
        let best = (best / k as f32).sqrt();
        assert!((got.score - best).abs() < 1e-4, "{got:?} vs {best}");
    }

    #[test]
    fn bad_ranges_name_the_frame_count() {
        let c = feats(&generate_take(&demo_scripts()[2]).0);
        let index = SearchIndex::build(&[&c], &Weights::default());
        for (a, b) in [(10, 10), (20, 10), (0, 100_000)] {
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
            assert!(e.to_string().contains("151 frames"), "{e}");
        }
        assert!(matches!(
            index.check(&Query {
                clip: 3,
                start: 0,
                stop: 1
            }),
            Err(SearchError::NoSuchClip { .. })
        ));
    }
}
