//! Locomotion states (`locomotion:Idle`, `Walk`, `Run`) from the horizontal speed of the travelling
//! root, and turns (`locomotion:TurnLeft`, `TurnRight`) from its yaw rate.
//!
//! The **travelling root** is the joint that carries the translation: the shallowest joint whose
//! local translation changes over the clip (in the Bandai takes `Hips`, under a `joint_Root` that
//! stays at the origin; in CMU takes the root `Hips`), or the root when nothing moves.
//!
//! **Speed** is the horizontal distance the travelling root covers over a centred window
//! (`smooth_s`, 0.3 s by default) divided by the window's duration: the average velocity, which
//! cancels the sideways sway of the hips within a step. Each frame is labelled Idle, Walk or Run by
//! the speed bands with hysteresis (`hysteresis_m_s` on each side of a boundary); then the shortest
//! segment under `min_segment_s` is merged into its longer neighbour until none is left. The three
//! states partition the clip: they never overlap.
//!
//! **Yaw rate** is the windowed rate of the root's unwrapped heading (the angle about +Y of its
//! forward axis, from `RootMotionTrack`), in degrees per second; positive turns towards +X, which is
//! the left of a character facing +Z.

use serde::{Deserialize, Serialize};

use crate::core::anim::{Clip, RootMotionTrack};

use super::signal::{Side, drop_short, frames_for, hysteresis, windowed_rate};
use super::{AutotagError, Signal, Threshold};

/// Parameters of the locomotion-state generator. Speeds in metres per second, durations in seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LocomotionParams {
    /// Below this the character is idle. 0.3 m/s.
    pub idle_max_m_s: f32,
    /// Above this it runs; between the two it walks. 2.2 m/s.
    pub walk_max_m_s: f32,
    /// Half-width of the hysteresis band around each boundary. 0.05 m/s.
    pub hysteresis_m_s: f32,
    /// Window over which the speed is averaged. 0.3 s.
    pub smooth_s: f32,
    /// Segments shorter than this are merged into a neighbour. 0.3 s.
    pub min_segment_s: f32,
    /// Exact name of the travelling root, overriding the automatic choice.
    pub root_joint: Option<String>,
}

impl Default for LocomotionParams {
    fn default() -> Self {
        Self {
            idle_max_m_s: 0.3,
            walk_max_m_s: 2.2,
            hysteresis_m_s: 0.05,
            smooth_s: 0.3,
            min_segment_s: 0.3,
            root_joint: None,
        }
    }
}

/// Parameters of the turn generator. Rates in degrees per second, durations in seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TurnParams {
    /// A turn starts when the yaw rate exceeds this (either direction). 30 deg/s.
    pub enter_deg_s: f32,
    /// ... and ends when it falls below this. 20 deg/s.
    pub leave_deg_s: f32,
    /// Window over which the yaw rate is measured: long enough to average out the hips' yaw sway
    /// within a stride. 1.0 s.
    pub window_s: f32,
    /// Shorter turns are dropped. 0.3 s.
    pub min_duration_s: f32,
}

impl Default for TurnParams {
    fn default() -> Self {
        Self {
            enter_deg_s: 30.0,
            leave_deg_s: 20.0,
            window_s: 1.0,
            min_duration_s: 0.3,
        }
    }
}

/// The travelling root of a clip (see the module documentation), or the override.
pub fn find_travelling_root(clip: &Clip, root_joint: Option<&str>) -> Result<usize, AutotagError> {
    if let Some(name) = root_joint {
        return clip
            .skeleton
            .find(name)
            .ok_or_else(|| AutotagError::NoSuchJoint {
                clip: clip.name.clone(),
                joint: name.to_owned(),
                what: "travelling root override".to_owned(),
            });
    }
    let n = clip.joint_count();
    if n == 0 {
        return Err(AutotagError::InvalidClip {
            clip: clip.name.clone(),
            message: "the skeleton has no joint".to_owned(),
        });
    }
    let depth = |mut j: usize| {
        let mut d = 0;
        while let Some(p) = clip.skeleton.parents[j] {
            j = p;
            d += 1;
        }
        d
    };
    // Moves when its translation spans more than 1 cm over the clip.
    let eps = 1.0 / clip.unit_cm.max(1e-6);
    let mut best: Option<(usize, usize)> = None;
    for j in 0..n {
        let first = clip.translations[j];
        let moves = (1..clip.frame_count).any(|f| {
            let d = clip.translations[f * n + j] - first;
            d.x.abs().max(d.z.abs()) > eps
        });
        if moves {
            let d = depth(j);
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, j));
            }
        }
    }
    Ok(best.map_or(0, |(_, j)| j))
}

/// Locomotion state of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gait {
    Idle = 0,
    Walk = 1,
    Run = 2,
}

/// Per-frame horizontal speed of the travelling root (m/s), averaged over `smooth_s`.
pub fn root_speed_m_s(track: &RootMotionTrack, unit_cm: f32, smooth_s: f32) -> Vec<f32> {
    let half = frames_for(smooth_s / 2.0, track.fps, 1);
    let mut out = Vec::new();
    super::signal::windowed_speed(&track.positions, track.fps, half, true, &mut out);
    for v in &mut out {
        *v *= unit_cm / 100.0;
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

/// Repeatedly relabels the shortest segment shorter than `min_frames` with its longer neighbour's
/// label (merging them), until every segment is long enough or only one is left.
fn merge_short_segments(labels: &mut [Gait], min_frames: usize) {
    loop {
        // Segments as (start, stop, label).
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
            .min_by_key(|(_, s)| s.1 - s.0)
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
        let label = segs[to].2;
        labels[segs[i].0..segs[i].1].fill(label);
    }
}

/// Unwrapped heading of the root in degrees and its yaw rate (deg/s) over `window_s`.
pub fn yaw_rate_deg_s(track: &RootMotionTrack, window_s: f32) -> Vec<f32> {
    let degrees: Vec<f32> = track.headings.iter().map(|h| h.to_degrees()).collect();
    let mut out = Vec::new();
    windowed_rate(
        &degrees,
        track.fps,
        frames_for(window_s / 2.0, track.fps, 1),
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

/// Plot-ready speed signal.
pub fn speed_signal(speed: Vec<f32>, params: &LocomotionParams, tags: Vec<String>) -> Signal {
    let h = params.hysteresis_m_s;
    Signal {
        name: "root horizontal speed".to_owned(),
        tags,
        unit: "m/s".to_owned(),
        values: speed,
        thresholds: vec![
            Threshold {
                label: "idle / walk".to_owned(),
                enter: params.idle_max_m_s + h,
                leave: params.idle_max_m_s - h,
            },
            Threshold {
                label: "walk / run".to_owned(),
                enter: params.walk_max_m_s + h,
                leave: params.walk_max_m_s - h,
            },
        ],
    }
}

/// Plot-ready yaw-rate signal.
pub fn yaw_signal(rate: Vec<f32>, params: &TurnParams, tags: Vec<String>) -> Signal {
    Signal {
        name: "root yaw rate".to_owned(),
        tags,
        unit: "deg/s".to_owned(),
        values: rate,
        thresholds: vec![
            Threshold {
                label: "turn left above".to_owned(),
                enter: params.enter_deg_s,
                leave: params.leave_deg_s,
            },
            Threshold {
                label: "turn right below".to_owned(),
                enter: -params.enter_deg_s,
                leave: -params.leave_deg_s,
            },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
