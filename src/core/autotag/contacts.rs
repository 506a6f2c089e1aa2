//! Foot contacts (`contact:LeftFoot`, `contact:RightFoot`) and `contact:Airborne`.
//!
//! **Feet.** Each foot is an ankle joint and, when the rig has one, a toe joint, found by name
//! across conventions (see [`find_feet`]) or named by the user.
//!
//! **Ground.** Each foot joint gets its own ground level: the `ground_percentile` quantile (5% by
//! default) of its height over the clip. A low quantile rather than the minimum: a take that starts
//! in the air, on a step, with a T-pose frame or with a glitch frame below the floor still finds the
//! level the foot stands on for most of its stance frames. The ankle and the toe rest at different
//! heights, hence one level per joint. One level per clip: a foot planted on a step higher than
//! `leave_height_cm` above the floor is not a contact (see `docs/AUTOTAG.md`, limits).
//!
//! **Signals.** Per frame, the foot's **height** is the lowest of its joints above their own ground
//! levels, and its **speed** is the stillness speed of that joint (3D; the smaller of its speeds over
//! `speed_window_s` before and after the frame, [`still_speed`]): the landing frame and the last
//! frame before lift-off count as still, so a foot that stops for exactly `k` frames is still on
//! exactly those frames.
//!
//! **States.** A foot becomes planted on the frame where its height is under `enter_height_cm` and
//! its speed under `enter_speed_cm_s`, and stays planted until the height rises over
//! `leave_height_cm` or the speed over `leave_speed_cm_s` (hysteresis: noise between the two
//! thresholds does not chatter). Then gaps shorter than `min_gap_s` between two contacts are closed
//! and contacts shorter than `min_contact_s` dropped.
//!
//! **Airborne** frames are those where neither foot is planted and both feet are more than
//! `min_height_cm` above their ground; flights shorter than `min_duration_s` are dropped.

use glam::Vec3;

use crate::core::anim::Skeleton;

use super::AutotagError;
use super::motion::Motion;
use super::signal::{drop_short, fill_gaps, frames_for, percentile, still_speed};

pub use crate::core::settings::params::{AirborneParams, ContactParams};

/// A joint name reduced for matching conventions: the part after the last namespace separator
/// (`mixamorig:`, `Armature|`), lower case, without `_`, `.`, `-` and spaces.
pub fn normalize_joint_name(name: &str) -> String {
    let base = name.rsplit([':', '|']).next().unwrap_or(name);
    base.chars()
        .filter(|c| !matches!(c, '_' | '.' | '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Name patterns (normalised) of each kind of foot joint; `{s}` is `left`/`right`, `{c}` `l`/`r`.
/// Ankle: `LeftAnkle`, `AnkleLeft` (Kinect), `L_Ankle` (SMPL), `ankle.L`.
const ANKLE: [&str; 4] = ["{s}ankle", "ankle{s}", "{c}ankle", "ankle{c}"];
/// Foot: `LeftFoot` (CMU, Mixamo), `Foot_L` (Bandai), `foot_l` (Unreal), `foot.L` (Rigify), `lFoot`
/// (Daz), `FootLeft`.
const FOOT: [&str; 4] = ["{s}foot", "foot{s}", "{c}foot", "foot{c}"];
/// Toe: `LeftToeBase` (CMU, Mixamo), `LeftToe`, `LeftToes`, `Toes_L` (Bandai), `ball_l` (Unreal),
/// `toe.L` (Rigify), `lToe` (Daz).
const TOE: [&str; 16] = [
    "{s}toebase",
    "toebase{s}",
    "{c}toebase",
    "toebase{c}",
    "{s}toe",
    "toe{s}",
    "{c}toe",
    "toe{c}",
    "{s}toes",
    "toes{s}",
    "{c}toes",
    "toes{c}",
    "{s}ball",
    "ball{s}",
    "{c}ball",
    "ball{c}",
];

pub(crate) fn patterns(list: &[&str], left: bool) -> Vec<String> {
    let (s, c) = if left { ("left", "l") } else { ("right", "r") };
    list.iter()
        .map(|p| p.replace("{s}", s).replace("{c}", c))
        .collect()
}

/// The first joint (in pattern order, then joint order) whose normalised name is one of
/// `wanted`; failing that, whose name without trailing digits ends with one, after a character that
/// is not a letter (`Bip01 L Foot`, `Bip01 L Toe0`, `Character1_LeftFoot`).
pub(crate) fn find_by_patterns(normalized: &[String], wanted: &[String]) -> Option<usize> {
    if let Some(j) = wanted
        .iter()
        .find_map(|w| normalized.iter().position(|n| n == w))
    {
        return Some(j);
    }
    wanted.iter().find_map(|w| {
        normalized.iter().position(|n| {
            let n = n.trim_end_matches(|c: char| c.is_ascii_digit());
            n.len() > w.len()
                && n.ends_with(w.as_str())
                && !n[..n.len() - w.len()]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphabetic)
        })
    })
}

fn is_descendant(skeleton: &Skeleton, mut j: usize, ancestor: usize) -> bool {
    while let Some(p) = skeleton.parents[j] {
        if p == ancestor {
            return true;
        }
        j = p;
    }
    false
}

/// The joints of one foot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FootJoints {
    pub ankle: usize,
    pub toe: Option<usize>,
}

/// Finds both feet, `[left, right]`.
///
/// Overrides (`left_ankle`, ...) name joints exactly. Otherwise, per side: the ankle is the joint
/// named like an ankle (`LeftAnkle`, `AnkleLeft`, `L_Ankle`) or else like a foot (`LeftFoot`,
/// `Foot_L`, `foot_l`, `foot.L`, `mixamorig:LeftFoot`, `Bip01 L Foot`); the toe is the joint named
/// like a toe (`LeftToeBase`, `LeftToe(s)`, `Toes_L`, `ball_l`), or else the foot-named joint below an
/// ankle-named one (SMPL's `L_Ankle` / `L_Foot`, Kinect's `AnkleLeft` / `FootLeft`), or else the
/// ankle's first child. A foot without a toe uses its ankle alone.
pub fn find_feet(
    clip_name: &str,
    skeleton: &Skeleton,
    params: &ContactParams,
) -> Result<[FootJoints; 2], AutotagError> {
    let normalized: Vec<String> = skeleton
        .names
        .iter()
        .map(|n| normalize_joint_name(n))
        .collect();
    let mut out = [FootJoints {
        ankle: 0,
        toe: None,
    }; 2];
    for (side, left) in [(0, true), (1, false)] {
        let (ankle_override, toe_override, side_name) = if left {
            (&params.left_ankle, &params.left_toe, "left")
        } else {
            (&params.right_ankle, &params.right_toe, "right")
        };
        let by_name = |name: &str, param: &str| {
            skeleton
                .find(name)
                .ok_or_else(|| AutotagError::NoSuchJoint {
                    clip: clip_name.to_owned(),
                    joint: name.to_owned(),
                    what: format!("contacts.{param}"),
                })
        };
        let ankle_named = find_by_patterns(&normalized, &patterns(&ANKLE, left));
        let foot_named = find_by_patterns(&normalized, &patterns(&FOOT, left));
        let ankle = match ankle_override {
            Some(name) => by_name(name, &format!("{side_name}_ankle"))?,
            None => ankle_named
                .or(foot_named)
                .ok_or_else(|| AutotagError::NoFootJoints {
                    clip: clip_name.to_owned(),
                    side: side_name,
                    examples: if left {
                        "LeftAnkle, LeftFoot, Foot_L, foot_l, foot.L, L_Ankle"
                    } else {
                        "RightAnkle, RightFoot, Foot_R, foot_r, foot.R, R_Ankle"
                    },
                })?,
        };
        let toe = match toe_override {
            Some(name) => Some(by_name(name, &format!("{side_name}_toe"))?),
            None => find_by_patterns(&normalized, &patterns(&TOE, left))
                .filter(|&t| t != ankle)
                .or_else(|| foot_named.filter(|&f| f != ankle && is_descendant(skeleton, f, ankle)))
                .or_else(|| {
                    (ankle + 1..skeleton.len()).find(|&k| skeleton.parents[k] == Some(ankle))
                }),
        };
        out[side] = FootJoints { ankle, toe };
    }
    Ok(out)
}

/// The per-frame signals of one foot.
#[derive(Debug, Clone, PartialEq)]
pub struct FootSignals {
    /// Height of the lowest joint above its ground level, cm.
    pub height_cm: Vec<f32>,
    /// Stillness speed of that joint, cm/s.
    pub speed_cm_s: Vec<f32>,
    /// Ground level of each of the foot's joints (ankle, then toe), cm.
    pub ground_cm: Vec<f32>,
}

/// Computes the height and speed signals of one foot.
pub fn foot_signals(motion: &Motion, foot: FootJoints, params: &ContactParams) -> FootSignals {
    let half = frames_for(params.speed_window_s, motion.fps, 1);
    let mut tracks: Vec<Vec<Vec3>> = Vec::with_capacity(2);
    let mut speeds: Vec<Vec<f32>> = Vec::with_capacity(2);
    let mut ground_cm = Vec::with_capacity(2);
    let mut heights = Vec::with_capacity(motion.frames);
    for j in std::iter::once(foot.ankle).chain(foot.toe) {
        let mut t = Vec::new();
        motion.track(j, &mut t);
        heights.clear();
        heights.extend(t.iter().map(|p| p.y));
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
        for (k, t) in tracks.iter().enumerate() {
            let h = t[f].y - ground_cm[k];
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

/// Planted frames of one foot from its height (cm) and speed (cm/s) signals (see the module
/// documentation).
pub fn contact_states(
    height_cm: &[f32],
    speed_cm_s: &[f32],
    fps: f32,
    params: &ContactParams,
) -> Vec<bool> {
    let mut on = false;
    let mut states: Vec<bool> = height_cm
        .iter()
        .zip(speed_cm_s)
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

/// The lower of the two feet's heights per frame, cm (the airborne signal).
pub fn lower_foot_height(feet: [&FootSignals; 2]) -> Vec<f32> {
    feet[0]
        .height_cm
        .iter()
        .zip(&feet[1].height_cm)
        .map(|(a, b)| a.min(*b))
        .collect()
}

/// Airborne frames: neither foot planted and the lower foot more than `min_height_cm` up.
pub fn airborne_states(
    lower_height_cm: &[f32],
    planted: [&[bool]; 2],
    fps: f32,
    params: &AirborneParams,
) -> Vec<bool> {
    let mut states: Vec<bool> = lower_height_cm
        .iter()
        .enumerate()
        .map(|(f, &h)| !planted[0][f] && !planted[1][f] && h > params.min_height_cm)
        .collect();
    drop_short(&mut states, frames_for(params.min_duration_s, fps, 1));
    states
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::anim::Transform;

    fn skeleton(names: &[&str]) -> Skeleton {
        let n = names.len();
        Skeleton::new(
            names.iter().map(|s| (*s).to_owned()).collect(),
            (0..n).map(|i| i.checked_sub(1)).collect(),
            vec![Transform::IDENTITY; n],
        )
    }

    /// Left and right legs as two chains under a root: `root, l.., r..`.
    fn legs(root: &str, left: &[&str], right: &[&str]) -> Skeleton {
        let mut names = vec![root.to_owned()];
        let mut parents = vec![None];
        for side in [left, right] {
            for (k, n) in side.iter().enumerate() {
                parents.push(Some(if k == 0 { 0 } else { names.len() - 1 }));
                names.push((*n).to_owned());
            }
        }
        let n = names.len();
        Skeleton::new(names, parents, vec![Transform::IDENTITY; n])
    }

    fn found(sk: &Skeleton) -> [String; 4] {
        let [l, r] = find_feet("c", sk, &ContactParams::default()).unwrap();
        let name = |j: Option<usize>| j.map_or("-".to_owned(), |j| sk.names[j].clone());
        [
            name(Some(l.ankle)),
            name(l.toe),
            name(Some(r.ankle)),
            name(r.toe),
        ]
    }

    #[test]
    fn feet_are_found_across_naming_conventions() {
        type Case<'a> = (&'a str, &'a [&'a str], &'a [&'a str], [&'a str; 4]);
        let cases: [Case; 10] = [
            // CMU, Mixamo-like.
            (
                "Hips",
                &["LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"],
                &["RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"],
                ["LeftFoot", "LeftToeBase", "RightFoot", "RightToeBase"],
            ),
            (
                "Hips",
                &["LeftHip", "LeftKnee", "LeftAnkle", "LeftToe"],
                &["RightHip", "RightKnee", "RightAnkle", "RightToe"],
                ["LeftAnkle", "LeftToe", "RightAnkle", "RightToe"],
            ),
            // Bandai.
            (
                "joint_Root",
                &["UpperLeg_L", "LowerLeg_L", "Foot_L", "Toes_L"],
                &["UpperLeg_R", "LowerLeg_R", "Foot_R", "Toes_R"],
                ["Foot_L", "Toes_L", "Foot_R", "Toes_R"],
            ),
            (
                "Hips",
                &["LeftHip", "LeftKnee", "LeftAnkle", "LeftToes"],
                &["RightHip", "RightKnee", "RightAnkle", "RightToes"],
                ["LeftAnkle", "LeftToes", "RightAnkle", "RightToes"],
            ),
            (
                "mixamorig:Hips",
                &[
                    "mixamorig:LeftUpLeg",
                    "mixamorig:LeftFoot",
                    "mixamorig:LeftToeBase",
                ],
                &[
                    "mixamorig:RightUpLeg",
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
            // Unreal: the toe is the ball.
            (
                "pelvis",
                &["thigh_l", "calf_l", "foot_l", "ball_l"],
                &["thigh_r", "calf_r", "foot_r", "ball_r"],
                ["foot_l", "ball_l", "foot_r", "ball_r"],
            ),
            // SMPL: L_Foot is below L_Ankle, so it is the toe.
            (
                "Pelvis",
                &["L_Hip", "L_Knee", "L_Ankle", "L_Foot"],
                &["R_Hip", "R_Knee", "R_Ankle", "R_Foot"],
                ["L_Ankle", "L_Foot", "R_Ankle", "R_Foot"],
            ),
            // Rigify / Blender.
            (
                "hips",
                &["thigh.L", "shin.L", "foot.L", "toe.L"],
                &["thigh.R", "shin.R", "foot.R", "toe.R"],
                ["foot.L", "toe.L", "foot.R", "toe.R"],
            ),
            // 3ds Max Biped: matched on the end of the name.
            (
                "Bip01 Pelvis",
                &[
                    "Bip01 L Thigh",
                    "Bip01 L Calf",
                    "Bip01 L Foot",
                    "Bip01 L Toe0",
                ],
                &[
                    "Bip01 R Thigh",
                    "Bip01 R Calf",
                    "Bip01 R Foot",
                    "Bip01 R Toe0",
                ],
                [
                    "Bip01 L Foot",
                    "Bip01 L Toe0",
                    "Bip01 R Foot",
                    "Bip01 R Toe0",
                ],
            ),
            // No toe name: the ankle's child is the toe.
            (
                "Hips",
                &["LeftUpLeg", "LeftLeg", "LeftFoot", "LeftFootEnd"],
                &["RightUpLeg", "RightLeg", "RightFoot"],
                ["LeftFoot", "LeftFootEnd", "RightFoot", "-"],
            ),
        ];
        for (root, l, r, want) in cases {
            assert_eq!(found(&legs(root, l, r)), want, "{root}");
        }
    }

    #[test]
    fn missing_feet_name_the_clip_and_overrides_are_exact() {
        let sk = skeleton(&["Hips", "Spine", "Head"]);
        let err = find_feet("take_07", &sk, &ContactParams::default()).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("take_07") && msg.contains("left foot") && msg.contains("left_ankle"),
            "{msg}"
        );
        let params = ContactParams {
            left_ankle: Some("Spine".into()),
            right_ankle: Some("Head".into()),
            ..ContactParams::default()
        };
        let [l, r] = find_feet("take_07", &sk, &params).unwrap();
        assert_eq!((l.ankle, r.ankle), (1, 2));
        let params = ContactParams {
            left_ankle: Some("Nope".into()),
            ..ContactParams::default()
        };
        let msg = find_feet("take_07", &sk, &params).unwrap_err().to_string();
        assert!(
            msg.contains("take_07") && msg.contains("Nope") && msg.contains("contacts.left_ankle"),
            "{msg}"
        );
    }

    #[test]
    fn a_right_foot_is_never_taken_for_a_left_one() {
        let sk = skeleton(&["Hips", "RightFoot", "RightToeBase"]);
        let msg = find_feet("one_leg", &sk, &ContactParams::default())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("left foot"), "{msg}");
    }
}
