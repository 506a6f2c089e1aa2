//! Locomotion states (`locomotion:Idle`, `Walk`, `Run`) from the horizontal speed of the travelling
//! root, and turns (`locomotion:TurnLeft`, `TurnRight`) from its yaw rate.
//!
//! **Travelling root.** The joint that carries the translation: the shallowest joint whose local
//! translation moves more than 1 cm horizontally over the clip (the one that moves most on a tie).
//! In the CMU takes that is the root `Hips`; in the Bandai takes `Hips` under a `joint_Root` that
//! stays at the origin; with root motion baked into a root bone, that bone. A clip where nothing
//! moves uses its first joint.
//!
//! **Speed** is the horizontal distance the travelling root covers over a window of `smooth_s`
//! (0.3 s) centred on the frame, divided by the window's duration: the average velocity, which
//! cancels the sideways sway of the hips within a step. Each frame gets the state of its speed band
//! (Idle below `idle_max_m_s`, Walk up to `walk_max_m_s`, Run above), with hysteresis: a state is
//! left only once the speed is `hysteresis_m_s` past the boundary. Then the shortest segment under
//! `min_segment_s` is merged into its longer neighbour, again and again until none is left. The
//! three states partition the clip: every frame has exactly one.
//!
//! **Yaw rate** is the rate of change of the travelling root's heading (the angle about +Y of its
//! most horizontal local axis, unwrapped frame to frame), measured over `window_s` (1 s: one stride,
//! so the hips' yaw sway within a stride cancels), in degrees per second. Positive turns from +Z
//! towards +X: to the left of a character facing +Z with its left towards +X, as in the CMU and
//! Bandai takes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use glam::Vec3;

use crate::core::anim::Clip;

use super::motion::Motion;
use super::signal::{Side, drop_short, frames_for, hysteresis, windowed_rate, windowed_speed};
use super::{AutotagError, Signal, Threshold, ThresholdKey};

pub use crate::core::settings::params::{LocomotionParams, TurnParams};

/// The automatic travelling root of a clip (see the module documentation).
pub fn auto_travelling_root(clip: &Clip) -> usize {
    let n = clip.joint_count();
    if n == 0 || clip.frame_count < 2 {
        return 0;
    }
    // Moves when its local translation spans more than 1 cm horizontally.
    let eps_units = 1.0 / clip.unit_cm.max(1e-6);
    let mut best: Option<(usize, f32, usize)> = None;
    let mut depth = vec![0usize; n];
    for j in 0..n {
        if let Some(p) = clip.skeleton.parents[j] {
            depth[j] = depth[p] + 1;
        }
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for f in 0..clip.frame_count {
            let t = clip.translations[f * n + j];
            lo = lo.min(t);
            hi = hi.max(t);
        }
        let span = (hi.x - lo.x).max(hi.z - lo.z);
        if span > eps_units {
            let better = match best {
                None => true,
                Some((d, s, _)) => depth[j] < d || (depth[j] == d && span > s),
            };
            if better {
                best = Some((depth[j], span, j));
            }
        }
    }
    best.map_or(0, |(_, _, j)| j)
}

/// The travelling root: the override when given (exact name), else [`auto_travelling_root`].
pub fn travelling_root(
    clip_name: &str,
    names: &[String],
    auto: usize,
    root_joint: Option<&str>,
) -> Result<usize, AutotagError> {
    match root_joint {
        None => Ok(auto),
        Some(name) => {
            names
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| AutotagError::NoSuchJoint {
                    clip: clip_name.to_owned(),
                    joint: name.to_owned(),
                    what: "locomotion.root_joint".to_owned(),
                })
        }
    }
}

/// Locomotion state of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gait {
    Idle = 0,
    Walk = 1,
    Run = 2,
}

/// Per-frame horizontal speed of joint `root` (m/s), averaged over `smooth_s`.
pub fn root_speed_m_s(motion: &Motion, root: usize, smooth_s: f32) -> Vec<f32> {
    let half = frames_for(smooth_s / 2.0, motion.fps, 1);
    let mut track = Vec::new();
    motion.track(root, &mut track);
    let mut out = Vec::new();
    windowed_speed(&track, motion.fps, half, true, &mut out);
    for v in &mut out {
        *v /= 100.0;
    }
    out
}

/// Labels every frame from the speed with hysteresis, then merges short segments.
pub fn gait_states(speed_m_s: &[f32], fps: f32, params: &LocomotionParams) -> Vec<Gait> {
    let (a, b, h) = (
        params.idle_max_m_s,
        params.walk_max_m_s,
        params.hysteresis_m_s.max(0.0),
    );
    let band = |v: f32| {
        if v < a {
            Gait::Idle
        } else if v <= b {
            Gait::Walk
        } else {
            Gait::Run
        }
    };
    let mut labels = Vec::with_capacity(speed_m_s.len());
    let mut state: Option<Gait> = None;
    for &v in speed_m_s {
        let v = if v.is_finite() { v } else { 0.0 };
        let next = match state {
            None => band(v),
            Some(Gait::Idle) if v > b + h => Gait::Run,
            Some(Gait::Idle) if v > a + h => Gait::Walk,
            Some(Gait::Walk) if v > b + h => Gait::Run,
            Some(Gait::Walk) if v < a - h => Gait::Idle,
            Some(Gait::Run) if v < a - h => Gait::Idle,
            Some(Gait::Run) if v < b - h => Gait::Walk,
            Some(s) => s,
        };
        state = Some(next);
        labels.push(next);
    }
    merge_short_segments(&mut labels, frames_for(params.min_segment_s, fps, 1));
    labels
}

/// Relabels the shortest segment shorter than `min_frames` with the label of its longer neighbour
/// (the earlier one on a tie), merging them, until every segment is long enough or one is left.
/// O(s log s) for s segments: a heap of segment lengths over a linked list of segments.
pub fn merge_short_segments(labels: &mut [Gait], min_frames: usize) {
    #[derive(Clone, Copy)]
    struct Seg {
        start: usize,
        stop: usize,
        label: Gait,
        prev: Option<usize>,
        next: Option<usize>,
        alive: bool,
    }
    let mut segs: Vec<Seg> = Vec::new();
    for (f, &g) in labels.iter().enumerate() {
        match segs.last_mut() {
            Some(s) if s.label == g => s.stop = f + 1,
            _ => {
                let k = segs.len();
                segs.push(Seg {
                    start: f,
                    stop: f + 1,
                    label: g,
                    prev: k.checked_sub(1),
                    next: None,
                    alive: true,
                });
                if k > 0 {
                    segs[k - 1].next = Some(k);
                }
            }
        }
    }
    let len = |s: &Seg| s.stop - s.start;
    // (length, start, index): the shortest first, the earliest on a tie.
    let mut heap: BinaryHeap<Reverse<(usize, usize, usize)>> = segs
        .iter()
        .enumerate()
        .filter(|(_, s)| len(s) < min_frames)
        .map(|(k, s)| Reverse((len(s), s.start, k)))
        .collect();
    let mut alive = segs.len();
    while let Some(Reverse((l, start, k))) = heap.pop() {
        if alive < 2 {
            break;
        }
        let s = segs[k];
        if !s.alive || len(&s) != l || s.start != start {
            continue; // stale entry
        }
        let into = match (s.prev, s.next) {
            (Some(p), Some(n)) => {
                if len(&segs[p]) >= len(&segs[n]) {
                    p
                } else {
                    n
                }
            }
            (Some(p), None) => p,
            (None, Some(n)) => n,
            (None, None) => break,
        };
        // Absorb `k` into `into`; if the segment on k's other side has the same label, absorb it
        // too (three segments become one).
        let other = if into == s.prev.unwrap_or(usize::MAX) {
            s.next
        } else {
            s.prev
        };
        let mut absorb = vec![k];
        if let Some(o) = other
            && segs[o].label == segs[into].label
        {
            absorb.push(o);
        }
        for a in absorb {
            let seg = segs[a];
            segs[a].alive = false;
            alive -= 1;
            let t = &mut segs[into];
            t.start = t.start.min(seg.start);
            t.stop = t.stop.max(seg.stop);
            // Unlink `a`.
            if let Some(p) = seg.prev {
                segs[p].next = seg.next;
            }
            if let Some(n) = seg.next {
                segs[n].prev = seg.prev;
            }
        }
        let t = segs[into];
        labels[t.start..t.stop].fill(t.label);
        if len(&t) < min_frames {
            heap.push(Reverse((len(&t), t.start, into)));
        }
    }
}

/// Unwrapped heading (radians about +Y) of joint `root` at every frame: the angle of its local axis
/// that is the most horizontal on average over the clip, projected on the ground plane, measured
/// from +Z towards +X.
pub fn headings(motion: &Motion, root: usize) -> Vec<f32> {
    let axes = [Vec3::Z, Vec3::X, Vec3::Y];
    let mut best = (Vec3::Z, -1.0f32);
    for axis in axes {
        let score: f32 = (0..motion.frames)
            .map(|f| {
                let v = motion.rotation(f, root) * axis;
                (v.x * v.x + v.z * v.z).sqrt()
            })
            .sum();
        if score > best.1 * 1.000_1 + 1e-6 {
            best = (axis, score);
        }
    }
    let mut out = Vec::with_capacity(motion.frames);
    let mut prev: Option<f32> = None;
    for f in 0..motion.frames {
        let v = motion.rotation(f, root) * best.0;
        let raw = (v.x * v.x + v.z * v.z > 1e-12).then(|| v.x.atan2(v.z));
        let h = match (raw, prev) {
            (Some(raw), Some(p)) => {
                let d = (raw - p + std::f32::consts::PI).rem_euclid(std::f32::consts::TAU)
                    - std::f32::consts::PI;
                p + d
            }
            (Some(raw), None) => raw,
            (None, Some(p)) => p,
            (None, None) => 0.0,
        };
        out.push(h);
        prev = Some(h);
    }
    out
}

/// Yaw rate (deg/s) of joint `root`, measured over `window_s`.
pub fn yaw_rate_deg_s(motion: &Motion, root: usize, window_s: f32) -> Vec<f32> {
    let degrees: Vec<f32> = headings(motion, root)
        .into_iter()
        .map(f32::to_degrees)
        .collect();
    let mut out = Vec::new();
    windowed_rate(
        &degrees,
        motion.fps,
        frames_for(window_s / 2.0, motion.fps, 1),
        &mut out,
    );
    out
}

/// Turn states `[left, right]` from the yaw rate.
pub fn turn_states(yaw_rate: &[f32], fps: f32, params: &TurnParams) -> [Vec<bool>; 2] {
    let min = frames_for(params.min_duration_s, fps, 1);
    let mut left = Vec::new();
    hysteresis(
        yaw_rate,
        Side::Above,
        params.enter_deg_s,
        params.leave_deg_s,
        &mut left,
    );
    let negated: Vec<f32> = yaw_rate.iter().map(|v| -v).collect();
    let mut right = Vec::new();
    hysteresis(
        &negated,
        Side::Above,
        params.enter_deg_s,
        params.leave_deg_s,
        &mut right,
    );
    drop_short(&mut left, min);
    drop_short(&mut right, min);
    [left, right]
}

/// The plot signal of the locomotion states.
pub fn speed_signal(speed: Arc<[f32]>, params: &LocomotionParams, tags: Vec<String>) -> Signal {
    let h = params.hysteresis_m_s;
    Signal {
        name: "root horizontal speed".to_owned(),
        tags,
        unit: "m/s",
        values: speed,
        thresholds: vec![
            Threshold {
                label: "idle / walk".to_owned(),
                enter: params.idle_max_m_s + h,
                leave: params.idle_max_m_s - h,
                key: ThresholdKey::IdleWalk,
            },
            Threshold {
                label: "walk / run".to_owned(),
                enter: params.walk_max_m_s + h,
                leave: params.walk_max_m_s - h,
                key: ThresholdKey::WalkRun,
            },
        ],
    }
}

/// The plot signal of the turns.
pub fn yaw_signal(rate: Arc<[f32]>, params: &TurnParams, tags: Vec<String>) -> Signal {
    Signal {
        name: "root yaw rate".to_owned(),
        tags,
        unit: "deg/s",
        values: rate,
        thresholds: vec![
            Threshold {
                label: "turn left above".to_owned(),
                enter: params.enter_deg_s,
                leave: params.leave_deg_s,
                key: ThresholdKey::TurnLeft,
            },
            Threshold {
                label: "turn right below".to_owned(),
                enter: -params.enter_deg_s,
                leave: -params.leave_deg_s,
                key: ThresholdKey::TurnRight,
            },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The obvious quadratic model: merge the shortest short segment, rebuild, repeat.
    fn merge_model(labels: &mut [Gait], min_frames: usize) {
        loop {
            let mut segs: Vec<(usize, usize, Gait)> = Vec::new();
            for (f, &g) in labels.iter().enumerate() {
                match segs.last_mut() {
                    Some(s) if s.2 == g => s.1 = f + 1,
                    _ => segs.push((f, f + 1, g)),
                }
            }
            if segs.len() < 2 {
                return;
            }
            let Some((i, _)) = segs
                .iter()
                .enumerate()
                .filter(|(_, s)| s.1 - s.0 < min_frames)
                .min_by_key(|(_, s)| (s.1 - s.0, s.0))
            else {
                return;
            };
            let len = |k: usize| segs[k].1 - segs[k].0;
            let to = match (i.checked_sub(1), (i + 1 < segs.len()).then_some(i + 1)) {
                (Some(p), Some(n)) => {
                    if len(p) >= len(n) {
                        p
                    } else {
                        n
                    }
                }
                (Some(p), None) => p,
                (None, Some(n)) => n,
                (None, None) => return,
            };
            labels[segs[i].0..segs[i].1].fill(segs[to].2);
        }
    }

    #[test]
    fn short_segments_merge_into_the_longer_neighbour() {
        use Gait::*;
        let mut l = [Idle, Idle, Idle, Walk, Idle, Idle, Run, Run, Run, Run, Run];
        merge_short_segments(&mut l, 2);
        assert_eq!(
            l,
            [Idle, Idle, Idle, Idle, Idle, Idle, Run, Run, Run, Run, Run]
        );
        let mut l = [Walk, Run, Run];
        merge_short_segments(&mut l, 5);
        assert_eq!(l, [Run, Run, Run]);
    }

    #[test]
    fn merging_matches_the_quadratic_model_on_random_labels() {
        let mut rng = crate::core::rng::SplitMix64(11);
        for case in 0..2000 {
            let n = 1 + rng.below(60) as usize;
            let min = 1 + rng.below(8) as usize;
            let runs = 1 + rng.below(4) as usize;
            let mut labels = Vec::with_capacity(n);
            while labels.len() < n {
                let g = [Gait::Idle, Gait::Walk, Gait::Run][rng.below(3) as usize];
                for _ in 0..1 + rng.below(runs as u64) {
                    labels.push(g);
                }
            }
            labels.truncate(n);
            let mut fast = labels.clone();
            let mut model = labels.clone();
            merge_short_segments(&mut fast, min);
            merge_model(&mut model, min);
            assert_eq!(fast, model, "case {case}: {labels:?} min {min}");
        }
    }
}
