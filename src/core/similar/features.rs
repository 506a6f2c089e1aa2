//! Per-frame motion features (see `docs/SIMILAR.md`).
//!
//! Every frame of a clip becomes [`DIMS`] numbers, computed from model-space poses converted to
//! centimetres through the clip's `unit_cm`:
//!
//! | dims | what | unit |
//! |---|---|---|
//! | 0..12 | left foot, right foot, left hand, right hand: position relative to the travelling root, in the root's heading frame | cm |
//! | 12..24 | the same four joints: velocity in the heading frame | cm/s |
//! | 24..27 | root velocity in the heading frame | cm/s |
//! | 27 | root turn rate about +Y | rad/s |
//! | 28..32 | root position [`TRAJECTORY_SECS`] behind and ahead (x, z), in the heading frame | cm |
//!
//! The heading frame: `y` is up, `x` points to the character's left (from the right thigh to the
//! left thigh, projected on the ground) and `z` forward (`x` cross up), so a skeleton moved or turned
//! on the ground gives the same features, whatever its rig's axis conventions.

use glam::{Quat, Vec3};

use crate::core::anim::{Clip, Skeleton, Transform, compose};

/// Numbers per frame.
pub const DIMS: usize = 32;

/// Bumped whenever the features change meaning; cached feature files of another version are rebuilt.
pub const FEATURE_VERSION: u32 = 1;

/// How far behind and ahead the trajectory dims look.
pub const TRAJECTORY_SECS: f32 = 0.4;

/// Feature groups, each with its own weight in [`Weights`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    FootPosition,
    FootVelocity,
    HandPosition,
    HandVelocity,
    RootVelocity,
    RootTurn,
    Trajectory,
}

/// The group of each dimension.
pub fn group_of(dim: usize) -> Group {
    match dim {
        0..6 => Group::FootPosition,
        6..12 => Group::HandPosition,
        12..18 => Group::FootVelocity,
        18..24 => Group::HandVelocity,
        24..27 => Group::RootVelocity,
        27 => Group::RootTurn,
        _ => Group::Trajectory,
    }
}

/// Weight of each feature group; a dimension's normalised value (zero mean, unit standard deviation
/// over the clips searched) is multiplied by its group's weight. 0 ignores a group.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// Feet relative to the root. Default 1.0.
    pub foot_position: f32,
    /// Feet velocities. Default 1.0.
    pub foot_velocity: f32,
    /// Hands relative to the root. Default 0.5 (arms vary more between performers than legs).
    pub hand_position: f32,
    /// Hands velocities. Default 0.5.
    pub hand_velocity: f32,
    /// Root velocity. Default 1.5 (what separates idle, walk and run most).
    pub root_velocity: f32,
    /// Root turn rate. Default 0.5.
    pub root_turn: f32,
    /// Root trajectory behind and ahead. Default 0.75.
    pub trajectory: f32,
}

impl Default for Weights {
    fn default() -> Self {
        Self {
            foot_position: 1.0,
            foot_velocity: 1.0,
            hand_position: 0.5,
            hand_velocity: 0.5,
            root_velocity: 1.5,
            root_turn: 0.5,
            trajectory: 0.75,
        }
    }
}

impl Weights {
    pub fn of(&self, g: Group) -> f32 {
        match g {
            Group::FootPosition => self.foot_position,
            Group::FootVelocity => self.foot_velocity,
            Group::HandPosition => self.hand_position,
            Group::HandVelocity => self.hand_velocity,
            Group::RootVelocity => self.root_velocity,
            Group::RootTurn => self.root_turn,
            Group::Trajectory => self.trajectory,
        }
    }
}

/// Joint names that replace the name conventions; `None` keeps the convention.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JointOverrides {
    /// The joint carrying the translation. Default: the lowest common ancestor of the feet
    /// (`Hips` on CMU, Bandai and Mixamo rigs, not Bandai's fixed `joint_Root`).
    pub root: Option<String>,
    pub left_foot: Option<String>,
    pub right_foot: Option<String>,
    pub left_hand: Option<String>,
    pub right_hand: Option<String>,
}

impl JointOverrides {
    /// A stable text of the overrides, for cache keys.
    pub fn key(&self) -> String {
        let f = |o: &Option<String>| o.clone().unwrap_or_default();
        format!(
            "{}|{}|{}|{}|{}",
            f(&self.root),
            f(&self.left_foot),
            f(&self.right_foot),
            f(&self.left_hand),
            f(&self.right_hand)
        )
    }
}

/// The joints features are computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureJoints {
    pub root: usize,
    /// Left foot, right foot, left hand, right hand.
    pub effectors: [usize; 4],
    /// Left and right thigh (the feet's grandparents), for the heading.
    pub thighs: [usize; 2],
}

/// Name conventions, compared after [`normalise_name`].
const LEFT_FOOT: &[&str] = &[
    "leftfoot",
    "footl",
    "lfoot",
    "leftankle",
    "anklel",
    "lankle",
];
const RIGHT_FOOT: &[&str] = &[
    "rightfoot",
    "footr",
    "rfoot",
    "rightankle",
    "ankler",
    "rankle",
];
const LEFT_HAND: &[&str] = &[
    "lefthand",
    "handl",
    "lhand",
    "leftwrist",
    "wristl",
    "lwrist",
];
const RIGHT_HAND: &[&str] = &[
    "righthand",
    "handr",
    "rhand",
    "rightwrist",
    "wristr",
    "rwrist",
];

/// Lower case, without a namespace prefix (`mixamorig:`) and without `_ . - ` separators.
pub fn normalise_name(name: &str) -> String {
    let base = name.rsplit(':').next().unwrap_or(name);
    base.chars()
        .filter(|c| !matches!(c, '_' | '.' | '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

fn find_joint(
    skeleton: &Skeleton,
    over: &Option<String>,
    conventions: &[&str],
    what: &str,
) -> Result<usize, String> {
    if let Some(name) = over {
        return skeleton
            .find(name)
            .ok_or_else(|| format!("no joint named `{name}` (given for the {what})"));
    }
    let norm: Vec<String> = skeleton.names.iter().map(|n| normalise_name(n)).collect();
    for c in conventions {
        if let Some(i) = norm.iter().position(|n| n == c) {
            return Ok(i);
        }
    }
    Err(format!(
        "no {what} joint found (looked for names like {}); name it explicitly",
        conventions[..2].join(", ")
    ))
}

impl FeatureJoints {
    /// Finds the joints by name conventions (CMU `LeftFoot`, Bandai `Foot_L`, Mixamo
    /// `mixamorig:LeftFoot`, `LeftAnkle`, `LeftWrist`, ...) or by the overrides.
    pub fn find(skeleton: &Skeleton, over: &JointOverrides) -> Result<Self, String> {
        skeleton.validate()?;
        let lf = find_joint(skeleton, &over.left_foot, LEFT_FOOT, "left foot")?;
        let rf = find_joint(skeleton, &over.right_foot, RIGHT_FOOT, "right foot")?;
        let lh = find_joint(skeleton, &over.left_hand, LEFT_HAND, "left hand")?;
        let rh = find_joint(skeleton, &over.right_hand, RIGHT_HAND, "right hand")?;
        let chain = |j: usize| skeleton.chain_to(j).unwrap_or_default();
        let (cl, cr) = (chain(lf), chain(rf));
        let root = match &over.root {
            Some(name) => skeleton
                .find(name)
                .ok_or_else(|| format!("no joint named `{name}` (given for the root)"))?,
            None => {
                let common = cl.iter().zip(&cr).take_while(|(a, b)| a == b).count();
                if common == 0 {
                    return Err(format!(
                        "the feet `{}` and `{}` have no common ancestor",
                        skeleton.names[lf], skeleton.names[rf]
                    ));
                }
                cl[common - 1]
            }
        };
        let thigh = |c: &[usize], foot: usize| -> Result<usize, String> {
            if c.len() >= 3 && c[c.len() - 3] != root {
                Ok(c[c.len() - 3])
            } else {
                Err(format!(
                    "the foot `{}` has no thigh joint between it and the root (foot, knee, thigh expected)",
                    skeleton.names[foot]
                ))
            }
        };
        let thighs = [thigh(&cl, lf)?, thigh(&cr, rf)?];
        if thighs[0] == thighs[1] {
            return Err("both feet hang from the same thigh joint".to_owned());
        }
        Ok(Self {
            root,
            effectors: [lf, rf, lh, rh],
            thighs,
        })
    }
}

/// The features of one clip: `frames x DIMS` numbers, frame-major, in centimetres and seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipFeatures {
    pub fps: f32,
    pub frames: usize,
    pub values: Vec<f32>,
}

impl ClipFeatures {
    #[inline]
    pub fn frame(&self, f: usize) -> &[f32] {
        &self.values[f * DIMS..(f + 1) * DIMS]
    }
}

/// Reusable buffers of [`build_features`].
#[derive(Debug, Default)]
pub struct FeatureScratch {
    model: Vec<Transform>,
    root_pos: Vec<Vec3>,
    left: Vec<Vec3>,
    effector_pos: Vec<[Vec3; 4]>,
}

/// Computes the features of every frame of `clip` (see the module documentation).
pub fn clip_features(clip: &Clip, joints: &FeatureJoints) -> Result<ClipFeatures, String> {
    let mut out = Vec::new();
    build_features(clip, joints, &mut FeatureScratch::default(), &mut out)?;
    Ok(ClipFeatures {
        fps: clip.fps,
        frames: clip.frame_count,
        values: out,
    })
}

/// The job behind [`clip_features`]: writes `frame_count * DIMS` numbers into `out` (cleared first).
pub fn build_features(
    clip: &Clip,
    joints: &FeatureJoints,
    scratch: &mut FeatureScratch,
    out: &mut Vec<f32>,
) -> Result<(), String> {
    clip.validate()?;
    let sk = &clip.skeleton;
    let n = sk.len();
    for &j in joints
        .effectors
        .iter()
        .chain(&joints.thighs)
        .chain([&joints.root])
    {
        if j >= n {
            return Err(format!("joint {j} is out of range ({n} joints)"));
        }
    }
    if !(clip.unit_cm.is_finite() && clip.unit_cm > 0.0) {
        return Err(format!(
            "clip '{}': unit_cm must be positive, found {}",
            clip.name, clip.unit_cm
        ));
    }
    // The joints to pose: every ancestor of the seven joints used, in index order (parents first).
    let mut needed = vec![false; n];
    for &j in joints
        .effectors
        .iter()
        .chain(&joints.thighs)
        .chain([&joints.root])
    {
        let mut k = Some(j);
        while let Some(i) = k {
            if needed[i] {
                break;
            }
            needed[i] = true;
            k = sk.parents[i];
        }
    }
    let order: Vec<usize> = (0..n).filter(|&i| needed[i]).collect();
    let mut slot = vec![usize::MAX; n];
    for (s, &j) in order.iter().enumerate() {
        slot[j] = s;
    }
    // (joint, parent slot or MAX) in pose order.
    let plan: Vec<(usize, usize)> = order
        .iter()
        .map(|&j| (j, sk.parents[j].map_or(usize::MAX, |p| slot[p])))
        .collect();
    let root_s = slot[joints.root];
    let thigh_s = [slot[joints.thighs[0]], slot[joints.thighs[1]]];
    let eff_s = joints.effectors.map(|j| slot[j]);

    let frames = clip.frame_count;
    let unit = clip.unit_cm;
    let FeatureScratch {
        model,
        root_pos,
        left,
        effector_pos,
    } = scratch;
    model.clear();
    model.resize(plan.len(), Transform::IDENTITY);
    root_pos.clear();
    left.clear();
    effector_pos.clear();
    root_pos.reserve(frames);
    left.reserve(frames);
    effector_pos.reserve(frames);
    let (rot, tra, sca) = (&clip.rotations, &clip.translations, &clip.scales);
    // Pass 1: forward kinematics of the needed joints only.
    let mut prev_left = Vec3::X;
    for f in 0..frames {
        let base = f * n;
        for (s, &(j, ps)) in plan.iter().enumerate() {
            let local = Transform {
                translation: tra[base + j],
                rotation: rot[base + j],
                scale: sca[base + j],
            };
            model[s] = if ps == usize::MAX {
                local
            } else {
                compose(&model[ps], &local)
            };
        }
        let r = model[root_s].translation * unit;
        let mut l = model[thigh_s[0]].translation - model[thigh_s[1]].translation;
        l.y = 0.0;
        let len2 = l.length_squared();
        let l = if len2 > 1e-12 {
            l * len2.sqrt().recip()
        } else {
            // Thighs on top of each other: keep the last heading (or the root's own +X).
            if f == 0 {
                let mut x = model[root_s].rotation * Vec3::X;
                x.y = 0.0;
                x.try_normalize().unwrap_or(Vec3::X)
            } else {
                prev_left
            }
        };
        prev_left = l;
        root_pos.push(r);
        left.push(l);
        effector_pos.push(eff_s.map(|s| model[s].translation * unit));
    }
    // Pass 2: express everything in each frame's heading frame.
    out.clear();
    out.resize(frames * DIMS, 0.0);
    if frames == 0 {
        return Ok(());
    }
    let fps = clip.fps;
    let last = frames - 1;
    let traj = ((TRAJECTORY_SECS * fps).round() as usize).max(1);
    // Angle of forward = (-l.z, 0, l.x), from +Z towards +X.
    let heading = |l: Vec3| (-l.z).atan2(l.x);
    for f in 0..frames {
        let l = left[f];
        let fwd = Vec3::new(-l.z, 0.0, l.x);
        let to_local = |v: Vec3| [v.dot(l), v.y, v.dot(fwd)];
        let (a, b) = (f.saturating_sub(1), (f + 1).min(last));
        let dt = if b > a { (b - a) as f32 / fps } else { 1.0 };
        let o = &mut out[f * DIMS..(f + 1) * DIMS];
        let r = root_pos[f];
        for e in 0..4 {
            let p = to_local(effector_pos[f][e] - r);
            o[3 * e..3 * e + 3].copy_from_slice(&p);
            let v = if b > a {
                (effector_pos[b][e] - effector_pos[a][e]) / dt
            } else {
                Vec3::ZERO
            };
            o[12 + 3 * e..15 + 3 * e].copy_from_slice(&to_local(v));
        }
        let v = if b > a {
            (root_pos[b] - root_pos[a]) / dt
        } else {
            Vec3::ZERO
        };
        o[24..27].copy_from_slice(&to_local(v));
        o[27] = if b > a {
            wrap_angle(heading(left[b]) - heading(left[a])) / dt
        } else {
            0.0
        };
        let behind = to_local(root_pos[f.saturating_sub(traj)] - r);
        let ahead = to_local(root_pos[(f + traj).min(last)] - r);
        o[28] = behind[0];
        o[29] = behind[2];
        o[30] = ahead[0];
        o[31] = ahead[2];
    }
    Ok(())
}

fn wrap_angle(a: f32) -> f32 {
    use std::f32::consts::{PI, TAU};
    let a = (a + PI).rem_euclid(TAU) - PI;
    if a < -PI { a + TAU } else { a }
}

/// Moves and turns a clip's root joints on the ground (for tests and examples): every root joint's
/// translation is turned by `yaw_rad` about +Y and offset by `offset` (file units), its rotation
/// turned by the same yaw.
pub fn turn_and_move(clip: &mut Clip, yaw_rad: f32, offset: Vec3) {
    let q = Quat::from_rotation_y(yaw_rad);
    let n = clip.joint_count();
    let roots: Vec<usize> = (0..n)
        .filter(|&j| clip.skeleton.parents[j].is_none())
        .collect();
    for f in 0..clip.frame_count {
        for &j in &roots {
            let i = f * n + j;
            clip.translations[i] = q * clip.translations[i] + offset;
            clip.rotations[i] = q * clip.rotations[i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::demo::{demo_scripts, generate_take};

    fn demo_clip(i: usize) -> Clip {
        generate_take(&demo_scripts()[i]).0
    }

    fn features(clip: &Clip) -> ClipFeatures {
        let j = FeatureJoints::find(&clip.skeleton, &JointOverrides::default()).unwrap();
        clip_features(clip, &j).unwrap()
    }

    fn max_diff(a: &[f32], b: &[f32]) -> f32 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    }

    #[test]
    fn finds_joints_by_convention_and_override() {
        let clip = demo_clip(0);
        let j = FeatureJoints::find(&clip.skeleton, &JointOverrides::default()).unwrap();
        let name = |i: usize| clip.skeleton.names[i].as_str();
        assert_eq!(name(j.root), "Hips");
        assert_eq!(
            j.effectors.map(name),
            ["LeftFoot", "RightFoot", "LeftHand", "RightHand"]
        );
        assert_eq!(j.thighs.map(name), ["LeftUpLeg", "RightUpLeg"]);
        let over = JointOverrides {
            left_hand: Some("LeftForeArm".into()),
            ..Default::default()
        };
        let j = FeatureJoints::find(&clip.skeleton, &over).unwrap();
        assert_eq!(name(j.effectors[2]), "LeftForeArm");
        let bad = JointOverrides {
            root: Some("Nope".into()),
            ..Default::default()
        };
        let err = FeatureJoints::find(&clip.skeleton, &bad).unwrap_err();
        assert!(err.contains("Nope"), "{err}");
    }

    #[test]
    fn bandai_and_mixamo_names_are_recognised() {
        // Bandai: a fixed joint_Root above Hips; Mixamo: a namespace prefix.
        for (names, root) in [
            (
                vec![
                    "joint_Root",
                    "Hips",
                    "UpperLeg_L",
                    "LowerLeg_L",
                    "Foot_L",
                    "UpperLeg_R",
                    "LowerLeg_R",
                    "Foot_R",
                    "Hand_L",
                    "Hand_R",
                ],
                "Hips",
            ),
            (
                vec![
                    "mixamorig:Root",
                    "mixamorig:Hips",
                    "mixamorig:LeftUpLeg",
                    "mixamorig:LeftLeg",
                    "mixamorig:LeftFoot",
                    "mixamorig:RightUpLeg",
                    "mixamorig:RightLeg",
                    "mixamorig:RightFoot",
                    "mixamorig:LeftHand",
                    "mixamorig:RightHand",
                ],
                "mixamorig:Hips",
            ),
        ] {
            let parents = vec![
                None,
                Some(0),
                Some(1),
                Some(2),
                Some(3),
                Some(1),
                Some(5),
                Some(6),
                Some(1),
                Some(1),
            ];
            let sk = Skeleton::new(
                names.iter().map(|s| s.to_string()).collect(),
                parents,
                vec![Transform::IDENTITY; 10],
            );
            let j = FeatureJoints::find(&sk, &JointOverrides::default()).unwrap();
            assert_eq!(sk.names[j.root], root);
            assert_eq!(j.effectors, [4, 7, 8, 9]);
            assert_eq!(j.thighs, [2, 5]);
        }
    }

    #[test]
    fn moved_or_turned_skeleton_gives_the_same_features() {
        // The turning walk: headings change along the clip, so every frame's frame differs.
        let clip = demo_clip(8);
        let base = features(&clip);
        for (yaw, offset) in [
            (0.0, Vec3::new(500.0, 0.0, -300.0)),
            (1.3, Vec3::ZERO),
            (-2.5, Vec3::new(-40.0, 0.0, 900.0)),
        ] {
            let mut moved = clip.clone();
            turn_and_move(&mut moved, yaw, offset);
            let f = features(&moved);
            let d = max_diff(&base.values, &f.values);
            assert!(d < 0.05, "yaw {yaw} offset {offset}: differs by {d}");
        }
        // A real change (a different take) differs by far more.
        let other = features(&demo_clip(1));
        let n = base.values.len().min(other.values.len());
        assert!(max_diff(&base.values[..n], &other.values[..n]) > 50.0);
    }

    #[test]
    fn units_scale_lengths_and_leave_turn_rates() {
        let clip = demo_clip(8);
        let base = features(&clip);
        // The same motion stored in metres with unit_cm = 100 gives the same centimetre features.
        let mut metres = clip.clone();
        for t in &mut metres.translations {
            *t /= 100.0;
        }
        for r in &mut metres.skeleton.rest {
            r.translation /= 100.0;
        }
        metres.unit_cm = 100.0;
        let f = features(&metres);
        assert!(max_diff(&base.values, &f.values) < 0.05);
        // Declaring the centimetre file as inches scales every length by 2.54, not the turn rate.
        let mut inches = clip.clone();
        inches.unit_cm = 2.54;
        let f = features(&inches);
        for (i, (a, b)) in base.values.iter().zip(&f.values).enumerate() {
            let want = if i % DIMS == 27 { *a } else { a * 2.54 };
            assert!(
                (b - want).abs() < 1e-3 * (1.0 + want.abs()),
                "dim {}",
                i % DIMS
            );
        }
    }

    #[test]
    fn walking_features_have_walking_speed_and_a_planted_foot() {
        let clip = demo_clip(0);
        let f = features(&clip);
        // Frames 60..: walking straight at 140 cm/s along the heading (z).
        let mid = 150;
        let fr = f.frame(mid);
        assert!((fr[26] - 140.0).abs() < 25.0, "forward speed {}", fr[26]);
        assert!(fr[24].abs() < 15.0, "sideways speed {}", fr[24]);
        // Feet are below the root, hands beside it, the left foot on the left.
        assert!(fr[1] < -60.0 && fr[4] < -60.0);
        // Some frame has a planted foot (near zero velocity).
        let planted = (60..clip.frame_count).any(|k| {
            let v = &f.frame(k)[12..15];
            (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() < 10.0
        });
        assert!(planted);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let mut clip = demo_clip(2);
        let j = FeatureJoints::find(&clip.skeleton, &JointOverrides::default()).unwrap();
        clip.unit_cm = 0.0;
        assert!(clip_features(&clip, &j).is_err());
        clip.unit_cm = 1.0;
        let bad = FeatureJoints { root: 99, ..j };
        assert!(clip_features(&clip, &bad).is_err());
        clip.translations.pop();
        assert!(clip_features(&clip, &j).is_err());
    }
}
