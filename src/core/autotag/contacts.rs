//! Foot contacts (`contact:LeftFoot`, `contact:RightFoot`) and `contact:Airborne`.
//!
//! Per foot, each of its joints (ankle, toe) gets a ground level: a low percentile of that joint's
//! height over the clip (not the minimum, so a take starting in the air, on a step, or with one
//! glitch frame still finds the floor the foot stands on most). Per frame, the foot's **height** is
//! the lowest of its joints above their ground levels, and its **speed** is the 3D stillness speed
//! of that lowest joint (the smaller of its speeds just before and just after the frame, so the
//! landing frame and the last frame before lift-off count as still). The foot is planted from the frame both are under their `enter` thresholds
//! until one of them rises over its `leave` threshold; gaps shorter than `min_gap_s` are closed and
//! contacts shorter than `min_contact_s` dropped.

use glam::Vec3;
use serde::{Deserialize, Serialize};

use crate::core::anim::Skeleton;

use super::motion::Motion;
use super::signal::{drop_short, fill_gaps, frames_for, percentile, still_speed};
use super::{AutotagError, Signal, Threshold};

/// Parameters of the foot-contact generator. Heights in centimetres, speeds in centimetres per
/// second, durations in seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContactParams {
    /// Quantile (0..1) of each foot joint's height over the clip taken as its ground level. 0.05.
    pub ground_percentile: f32,
    /// A foot enters contact when its lowest joint is less than this above its ground level. 4.0 cm.
    pub enter_height_cm: f32,
    /// ... and leaves contact when it rises more than this above it. 7.0 cm.
    pub leave_height_cm: f32,
    /// A foot enters contact when that joint moves slower than this. 20.0 cm/s.
    pub enter_speed_cm_s: f32,
    /// ... and leaves contact when it moves faster than this. 30.0 cm/s.
    pub leave_speed_cm_s: f32,
    /// Window over which speeds are measured: the smaller of the speeds over this long before and
    /// after the frame (see `signal::still_speed`). 0.03 s.
    pub speed_window_s: f32,
    /// Contacts shorter than this are dropped. 0.05 s.
    pub min_contact_s: f32,
    /// Gaps between two contacts of one foot shorter than this are closed. 0.05 s.
    pub min_gap_s: f32,
    /// Joint names overriding the automatic search (exact names). `None`: search by convention.
    pub left_ankle: Option<String>,
    pub left_toe: Option<String>,
    pub right_ankle: Option<String>,
    pub right_toe: Option<String>,
}

impl Default for ContactParams {
    fn default() -> Self {
        Self {
            ground_percentile: 0.05,
            enter_height_cm: 4.0,
            leave_height_cm: 7.0,
            enter_speed_cm_s: 20.0,
            leave_speed_cm_s: 30.0,
            speed_window_s: 0.03,
            min_contact_s: 0.05,
            min_gap_s: 0.05,
            left_ankle: None,
            left_toe: None,
            right_ankle: None,
            right_toe: None,
        }
    }
}

/// Parameters of the airborne generator (`contact:Airborne`: neither foot planted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AirborneParams {
    /// Both feet must also be at least this far above their ground levels. 3.0 cm.
    pub min_height_cm: f32,
    /// Shorter flights are dropped. 0.05 s.
    pub min_duration_s: f32,
}

impl Default for AirborneParams {
    fn default() -> Self {
        Self {
            min_height_cm: 3.0,
            min_duration_s: 0.05,
        }
    }
}

/// Normalised joint name for matching conventions: lower case, without a namespace prefix
/// (`mixamorig:`) and without `_`, `.`, `-` and spaces.
pub fn normalize_joint_name(name: &str) -> String {
    let base = name.rsplit(':').next().unwrap_or(name);
    base.chars()
        .filter(|c| !matches!(c, '_' | '.' | '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Names (normalised, see [`normalize_joint_name`]) tried in order for each foot joint. `{s}` is
/// `left`/`right`, `{c}` `l`/`r`.
const ANKLE_PATTERNS: [&str; 8] = [
    "{s}foot", "{s}ankle", "foot{c}", "ankle{c}", "{c}foot", "{c}ankle", "foot{s}", "ankle{s}",
];
const TOE_PATTERNS: [&str; 10] = [
    "{s}toebase",
    "{s}toe",
    "{s}toes",
    "toes{c}",
    "toe{c}",
    "toebase{c}",
    "{c}toe",
    "{c}toes",
    "toe{s}",
    "toes{s}",
];

fn patterns(list: &[&str], left: bool) -> Vec<String> {
    let (s, c) = if left { ("left", "l") } else { ("right", "r") };
    list.iter()
        .map(|p| p.replace("{s}", s).replace("{c}", c))
        .collect()
}

/// Finds a joint by any of the normalised names in `wanted` (first pattern wins).
fn find_by_patterns(skeleton: &Skeleton, wanted: &[String]) -> Option<usize> {
    let normalized: Vec<String> = skeleton
        .names
        .iter()
        .map(|n| normalize_joint_name(n))
        .collect();
    wanted
        .iter()
        .find_map(|w| normalized.iter().position(|n| n == w))
}

/// The joints of one foot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FootJoints {
    pub ankle: usize,
    pub toe: Option<usize>,
}

/// Finds both feet: `[left, right]`. Overrides name joints exactly; otherwise conventions are
/// searched (`LeftFoot`/`LeftToeBase`, `LeftAnkle`/`LeftToe(s)`, `Foot_L`/`Toes_L`,
/// `mixamorig:LeftFoot`, `foot.L`, ...). A missing toe is allowed (the ankle alone is used).
pub fn find_feet(
    clip_name: &str,
    skeleton: &Skeleton,
    params: &ContactParams,
) -> Result<[FootJoints; 2], AutotagError> {
    let mut out = [FootJoints {
        ankle: 0,
        toe: None,
    }; 2];
    for (side, left) in [(0, true), (1, false)] {
        let (ankle_override, toe_override) = if left {
            (&params.left_ankle, &params.left_toe)
        } else {
            (&params.right_ankle, &params.right_toe)
        };
        let by_name = |name: &str| {
            skeleton
                .find(name)
                .ok_or_else(|| AutotagError::NoSuchJoint {
                    clip: clip_name.to_owned(),
                    joint: name.to_owned(),
                    what: "foot joint override".to_owned(),
                })
        };
        let ankle =
            match ankle_override {
                Some(name) => by_name(name)?,
                None => find_by_patterns(skeleton, &patterns(&ANKLE_PATTERNS, left)).ok_or_else(
                    || AutotagError::NoFootJoints {
                        clip: clip_name.to_owned(),
                        side: if left { "left" } else { "right" },
                    },
                )?,
            };
        let toe = match toe_override {
            Some(name) => Some(by_name(name)?),
            None => find_by_patterns(skeleton, &patterns(&TOE_PATTERNS, left)),
        };
        out[side] = FootJoints { ankle, toe };
    }
    Ok(out)
}

/// The per-frame signals of one foot: height above ground (cm) and speed (cm/s) of its lowest joint.
#[derive(Debug, Clone, PartialEq)]
pub struct FootSignals {
    pub height_cm: Vec<f32>,
    pub speed_cm_s: Vec<f32>,
    /// Ground level of each of the foot's joints (ankle, then toe), cm.
    pub ground_cm: Vec<f32>,
}

/// Computes the height and speed signals of one foot.
pub fn foot_signals(motion: &Motion, foot: FootJoints, params: &ContactParams) -> FootSignals {
    let joints: Vec<usize> = std::iter::once(foot.ankle).chain(foot.toe).collect();
    let half = frames_for(params.speed_window_s, motion.fps, 1);
    let mut tracks: Vec<Vec<Vec3>> = Vec::with_capacity(joints.len());
    let mut speeds: Vec<Vec<f32>> = Vec::with_capacity(joints.len());
    let mut ground_cm = Vec::with_capacity(joints.len());
    for &j in &joints {
        let mut t = Vec::new();
        motion.track(j, &mut t);
        let heights: Vec<f32> = t.iter().map(|p| p.y).collect();
        ground_cm.push(percentile(&heights, params.ground_percentile).unwrap_or(0.0));
        let mut s = Vec::new();
        still_speed(&t, motion.fps, half, &mut s);
        tracks.push(t);
        speeds.push(s);
    }
    let mut height_cm = Vec::with_capacity(motion.frames);
    let mut speed_cm_s = Vec::with_capacity(motion.frames);
    for f in 0..motion.frames {
        let mut best = (f32::INFINITY, 0.0);
        for k in 0..joints.len() {
            let h = tracks[k][f].y - ground_cm[k];
            if h < best.0 {
                best = (h, speeds[k][f]);
            }
        }
        height_cm.push(best.0);
        speed_cm_s.push(best.1);
    }
    FootSignals {
        height_cm,
        speed_cm_s,
        ground_cm,
    }
}

/// Planted frames of one foot from its signals.
pub fn contact_states(signals: &FootSignals, fps: f32, params: &ContactParams) -> Vec<bool> {
    let mut on = false;
    let mut states: Vec<bool> = signals
        .height_cm
        .iter()
        .zip(&signals.speed_cm_s)
        .map(|(&h, &v)| {
            on = if on {
                h <= params.leave_height_cm && v <= params.leave_speed_cm_s
            } else {
                h < params.enter_height_cm && v < params.enter_speed_cm_s
            };
            on
        })
        .collect();
    fill_gaps(&mut states, frames_for(params.min_gap_s, fps, 0));
    drop_short(&mut states, frames_for(params.min_contact_s, fps, 1));
    states
}

/// Airborne frames: neither foot planted and both above `min_height_cm`.
pub fn airborne_states(
    feet: &[(FootSignals, Vec<bool>); 2],
    fps: f32,
    params: &AirborneParams,
) -> Vec<bool> {
    let n = feet[0].1.len();
    let mut states: Vec<bool> = (0..n)
        .map(|f| {
            feet.iter()
                .all(|(s, c)| !c[f] && s.height_cm[f] > params.min_height_cm)
        })
        .collect();
    drop_short(&mut states, frames_for(params.min_duration_s, fps, 1));
    states
}

/// The plot-ready signals of one foot.
pub fn foot_plot_signals(
    side: &str,
    tag: &str,
    s: &FootSignals,
    params: &ContactParams,
) -> [Signal; 2] {
    [
        Signal {
            name: format!("{side} foot height"),
            tags: vec![tag.to_owned()],
            unit: "cm".to_owned(),
            values: s.height_cm.clone(),
            thresholds: vec![Threshold {
                label: "planted below".to_owned(),
                enter: params.enter_height_cm,
                leave: params.leave_height_cm,
            }],
        },
        Signal {
            name: format!("{side} foot speed"),
            tags: vec![tag.to_owned()],
            unit: "cm/s".to_owned(),
            values: s.speed_cm_s.clone(),
            thresholds: vec![Threshold {
                label: "planted below".to_owned(),
                enter: params.enter_speed_cm_s,
                leave: params.leave_speed_cm_s,
            }],
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skeleton(names: &[&str]) -> Skeleton {
        let n = names.len();
        Skeleton::new(
            names.iter().map(|s| (*s).to_owned()).collect(),
            (0..n).map(|i| i.checked_sub(1)).collect(),
            vec![crate::core::anim::Transform::IDENTITY; n],
        )
    }

    #[test]
    fn feet_are_found_across_naming_conventions() {
        let cases: [(&[&str], [&str; 4]); 5] = [
            (
                &[
                    "Hips",
                    "LeftFoot",
                    "LeftToeBase",
                    "RightFoot",
                    "RightToeBase",
                ],
                ["LeftFoot", "LeftToeBase", "RightFoot", "RightToeBase"],
            ),
            (
                &["Hips", "LeftAnkle", "LeftToe", "RightAnkle", "RightToe"],
                ["LeftAnkle", "LeftToe", "RightAnkle", "RightToe"],
            ),
            (
                &["joint_Root", "Hips", "Foot_L", "Toes_L", "Foot_R", "Toes_R"],
                ["Foot_L", "Toes_L", "Foot_R", "Toes_R"],
            ),
            (
                &["Hips", "LeftAnkle", "LeftToes", "RightAnkle", "RightToes"],
                ["LeftAnkle", "LeftToes", "RightAnkle", "RightToes"],
            ),
            (
                &[
                    "mixamorig:Hips",
                    "mixamorig:LeftFoot",
                    "mixamorig:LeftToeBase",
                    "mixamorig:RightFoot",
                    "mixamorig:RightToeBase",
                ],
                [
                    "mixamorig:LeftFoot",
                    "mixamorig:LeftToeBase",
                    "mixamorig:RightFoot",
                    "mixamorig:RightToeBase",
                ],
            ),
        ];
        for (names, want) in cases {
            let sk = skeleton(names);
            let [l, r] = find_feet("c", &sk, &ContactParams::default()).unwrap();
            let name = |j: usize| sk.names[j].as_str();
            assert_eq!(
                [
                    name(l.ankle),
                    name(l.toe.unwrap()),
                    name(r.ankle),
                    name(r.toe.unwrap())
                ],
                want
            );
        }
    }

    #[test]
    fn missing_feet_name_the_clip_and_overrides_are_exact() {
        let sk = skeleton(&["Hips", "Spine", "Head"]);
        let err = find_feet("take_07", &sk, &ContactParams::default()).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("take_07") && msg.contains("left foot"),
            "{msg}"
        );
        let params = ContactParams {
            left_ankle: Some("Spine".into()),
            right_ankle: Some("Head".into()),
            ..ContactParams::default()
        };
        let [l, r] = find_feet("take_07", &sk, &params).unwrap();
        assert_eq!((l.ankle, l.toe, r.ankle, r.toe), (1, None, 2, None));
        let params = ContactParams {
            left_ankle: Some("Nope".into()),
            ..ContactParams::default()
        };
        let msg = find_feet("take_07", &sk, &params).unwrap_err().to_string();
        assert!(msg.contains("take_07") && msg.contains("Nope"), "{msg}");
    }
}
