//! Per-frame motion features (see `docs/SIMILAR.md`).
//!
//! Every frame of a clip becomes [`DIMS`] numbers, computed from model-space poses converted to
//! centimetres through the clip's `unit_cm`:
//!
//! | dims | what | unit |
//! |---|---|---|
//! | 0..6 | left foot, right foot: position relative to the root joint, in the heading frame | cm |
//! | 6..12 | left hand, right hand: the same | cm |
//! | 12..18 | left foot, right foot: velocity in the heading frame | cm/s |
//! | 18..24 | left hand, right hand: the same | cm/s |
//! | 24..27 | root velocity in the heading frame | cm/s |
//! | 27 | heading turn rate about +Y (positive: turning left) | rad/s |
//! | 28..32 | root position [`TRAJECTORY_SECS`] behind (x, z) and ahead (x, z), in the heading frame | cm |
//!
//! The **root joint** is the pelvis: the lowest common ancestor of the two feet (`Hips` on CMU,
//! Bandai and Mixamo rigs; Bandai's fixed `joint_Root` above it is skipped). Positions are model
//! space, so it does not matter which joint carries the translation. The **heading frame** has `y`
//! up, `x` towards the character's left (from the right thigh to the left thigh, projected on the
//! ground, averaged over [`HEADING_SMOOTH_SECS`] either side so the pelvis's sway within a stride
//! does not rock it) and `z` forward. It depends on no rig's axis conventions, so a skeleton moved or
//! turned on the ground gives the same features, and so do two skeletons whose bones point different
//! ways. Velocities are central differences over [`VELOCITY_HALF_SECS`] either side (the same time
//! span at any frame rate).

use glam::{Quat, Vec3};
use serde::{Deserialize, Serialize};

use crate::core::anim::{Clip, Skeleton, Transform, compose};
use crate::core::autotag::AutotagError;
use crate::core::autotag::contacts::{
    ContactParams, find_by_patterns, find_feet, normalize_joint_name, patterns,
};

/// Numbers per frame.
pub const DIMS: usize = 32;

/// Bumped whenever the features change meaning; cached feature files of another version are rebuilt.
pub const FEATURE_VERSION: u32 = 2;

/// How far behind and ahead the trajectory dims look, seconds.
pub const TRAJECTORY_SECS: f32 = 0.4;

/// Half width of the central difference behind every velocity, seconds (1 frame at 30 fps, 4 at 120).
pub const VELOCITY_HALF_SECS: f32 = 1.0 / 30.0;

/// Half width of the window the heading is averaged over, seconds (a whole walking stride in all).
pub const HEADING_SMOOTH_SECS: f32 = 0.5;

/// Feature groups, each with its own weight in [`Weights`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    FootPosition,
    HandPosition,
    FootVelocity,
    HandVelocity,
    RootVelocity,
    RootTurn,
    Trajectory,
}

impl Group {
    /// Every group, in dimension order.
    pub const ALL: [Group; 7] = [
        Group::FootPosition,
        Group::HandPosition,
        Group::FootVelocity,
        Group::HandVelocity,
        Group::RootVelocity,
        Group::RootTurn,
        Group::Trajectory,
    ];

    /// The name used in settings and on the command line (`foot_position`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Group::FootPosition => "foot_position",
            Group::HandPosition => "hand_position",
            Group::FootVelocity => "foot_velocity",
            Group::HandVelocity => "hand_velocity",
            Group::RootVelocity => "root_velocity",
            Group::RootTurn => "root_turn",
            Group::Trajectory => "trajectory",
        }
    }

    /// The smallest standard deviation a dimension of the group is normalised by, in its unit:
    /// 5 cm for positions, 20 cm/s for foot and hand velocities, 10 cm/s for the root's (velocities
    /// as compared, after `search::shape`'s compression, which keeps slow speeds in cm/s), 0.5 rad/s
    /// (29 deg/s) for the turn rate.
    pub fn min_deviation(self) -> f32 {
        match self {
            Group::FootPosition | Group::HandPosition | Group::Trajectory => 5.0,
            Group::FootVelocity | Group::HandVelocity => 20.0,
            Group::RootVelocity => 10.0,
            Group::RootTurn => 0.5,
        }
    }

    /// The dimensions of the group.
    pub fn dims(self) -> std::ops::Range<usize> {
        match self {
            Group::FootPosition => 0..6,
            Group::HandPosition => 6..12,
            Group::FootVelocity => 12..18,
            Group::HandVelocity => 18..24,
            Group::RootVelocity => 24..27,
            Group::RootTurn => 27..28,
            Group::Trajectory => 28..32,
        }
    }
}

/// The group of each dimension.
pub fn group_of(dim: usize) -> Group {
    Group::ALL
        .into_iter()
        .find(|g| g.dims().contains(&dim))
        .unwrap_or(Group::Trajectory)
}

/// Weight of each feature group. Each dimension is first normalised (zero mean, unit standard
/// deviation over the clips searched), then multiplied by its group's weight; 0 ignores a group.
/// Weights are applied when a search index is built, so changing them needs no feature rebuild.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Weights {
    /// Feet relative to the root: the legs' pose, the stride's phase. Default 1.0.
    pub foot_position: f32,
    /// Hands relative to the root. Default 0.5: arms vary more between performers than legs, and
    /// carry gestures that rarely define the motion a tag names.
    pub hand_position: f32,
    /// Feet velocities: stepping, planting, kicking. Default 1.0.
    pub foot_velocity: f32,
    /// Hands velocities. Default 0.5.
    pub hand_velocity: f32,
    /// Root velocity: what separates idling, walking and running most. Default 1.5.
    pub root_velocity: f32,
    /// Heading turn rate: turning on the spot or while moving. Default 0.75.
    pub root_turn: f32,
    /// Root trajectory behind and ahead: where the body came from and is going. Default 0.75.
    pub trajectory: f32,
}

impl Default for Weights {
    fn default() -> Self {
        Self {
            foot_position: 1.0,
            hand_position: 0.5,
            foot_velocity: 1.0,
            hand_velocity: 0.5,
            root_velocity: 1.5,
            root_turn: 0.75,
            trajectory: 0.75,
        }
    }
}

impl Weights {
    /// The weight of a group.
    pub fn of(&self, g: Group) -> f32 {
        match g {
            Group::FootPosition => self.foot_position,
            Group::HandPosition => self.hand_position,
            Group::FootVelocity => self.foot_velocity,
            Group::HandVelocity => self.hand_velocity,
            Group::RootVelocity => self.root_velocity,
            Group::RootTurn => self.root_turn,
            Group::Trajectory => self.trajectory,
        }
    }

    /// Sets the weight of the group named `name` (see [`Group::name`]).
    pub fn set(&mut self, name: &str, value: f32) -> Result<(), String> {
        let g = Group::ALL
            .into_iter()
            .find(|g| g.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown feature group `{name}`; the groups are {}",
                    Group::ALL.map(Group::name).join(", ")
                )
            })?;
        if !(value.is_finite() && value >= 0.0) {
            return Err(format!(
                "the weight of `{name}` must be a finite number >= 0, found {value}"
            ));
        }
        *match g {
            Group::FootPosition => &mut self.foot_position,
            Group::HandPosition => &mut self.hand_position,
            Group::FootVelocity => &mut self.foot_velocity,
            Group::HandVelocity => &mut self.hand_velocity,
            Group::RootVelocity => &mut self.root_velocity,
            Group::RootTurn => &mut self.root_turn,
            Group::Trajectory => &mut self.trajectory,
        } = value;
        Ok(())
    }

    /// Every weight finite and >= 0, and at least one positive.
    pub fn validate(&self) -> Result<(), String> {
        for g in Group::ALL {
            let w = self.of(g);
            if !(w.is_finite() && w >= 0.0) {
                return Err(format!(
                    "the weight of `{}` must be a finite number >= 0, found {w}",
                    g.name()
                ));
            }
        }
        if Group::ALL.iter().all(|&g| self.of(g) == 0.0) {
            return Err("every feature weight is 0: nothing to compare".to_owned());
        }
        Ok(())
    }
}

/// Exact joint names that replace the name conventions; `None` keeps the convention.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JointOverrides {
    /// The joint positions are measured from. Default: the lowest common ancestor of the feet.
    pub root: Option<String>,
    pub left_foot: Option<String>,
    pub right_foot: Option<String>,
    pub left_hand: Option<String>,
    pub right_hand: Option<String>,
}

impl JointOverrides {
    /// The roles, as named in [`JointOverrides::set`].
    pub const ROLES: [&'static str; 5] =
        ["root", "left_foot", "right_foot", "left_hand", "right_hand"];

    /// Sets the joint of `role` (one of [`JointOverrides::ROLES`]).
    pub fn set(&mut self, role: &str, joint: &str) -> Result<(), String> {
        let slot = match role {
            "root" => &mut self.root,
            "left_foot" => &mut self.left_foot,
            "right_foot" => &mut self.right_foot,
            "left_hand" => &mut self.left_hand,
            "right_hand" => &mut self.right_hand,
            _ => {
                return Err(format!(
                    "unknown joint role `{role}`; the roles are {}",
                    Self::ROLES.join(", ")
                ));
            }
        };
        if joint.is_empty() {
            return Err(format!("the joint name for `{role}` is empty"));
        }
        *slot = Some(joint.to_owned());
        Ok(())
    }

    /// A stable text of the overrides, for cache keys: each role's joint name (empty for none)
    /// after its length in bytes, so that no two sets of overrides give one text whatever the
    /// names hold (joined by a separator, `a|` then nothing and `a` then `|` did).
    pub fn key(&self) -> String {
        [
            &self.root,
            &self.left_foot,
            &self.right_foot,
            &self.left_hand,
            &self.right_hand,
        ]
        .iter()
        .map(|o| {
            let name = o.as_deref().unwrap_or("");
            format!("{}:{name};", name.len())
        })
        .collect()
    }
}

/// In the error for a joint override that names no joint of the clip: what the user gave, not
/// what the clip holds ([`is_override_error`]).
const GIVEN_FOR: &str = "given for ";

/// True for an error of [`FeatureJoints::find`] about a joint override naming no joint (a bad
/// argument, where the command line exits 2), not about the clip.
pub fn is_override_error(message: &str) -> bool {
    message.contains(&format!("({GIVEN_FOR}"))
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

/// Hand names (normalised by `contacts::normalize_joint_name`), tried in order with the contact
/// generator's matcher (exact, then as a suffix: `Bip01 L Hand`); `{s}` is `left`/`right`, `{c}`
/// `l`/`r`. Feet are found by the contact generator itself.
const HAND_PATTERNS: [&str; 8] = [
    "{s}hand", "hand{c}", "{c}hand", "hand{s}", "{s}wrist", "wrist{c}", "{c}wrist", "wrist{s}",
];

fn find_hand(skeleton: &Skeleton, over: &Option<String>, left: bool) -> Result<usize, String> {
    let side = if left { "left" } else { "right" };
    if let Some(name) = over {
        return skeleton
            .find(name)
            .ok_or_else(|| format!("no joint named `{name}` ({GIVEN_FOR}the {side} hand)"));
    }
    let normalized: Vec<String> = skeleton
        .names
        .iter()
        .map(|n| normalize_joint_name(n))
        .collect();
    find_by_patterns(&normalized, &patterns(&HAND_PATTERNS, left)).ok_or_else(|| {
        format!(
            "no {side} hand joint found (looked for names like {0}Hand, Hand_{1}, \
             mixamorig:{0}Hand, {0}Wrist); name it with the {side}_hand joint override \
             (`taglane find --joint {side}_hand=NAME`)",
            if left { "Left" } else { "Right" },
            if left { "L" } else { "R" },
        )
    })
}

impl FeatureJoints {
    /// Finds the joints by the overrides or by name conventions: feet as the contact generator finds
    /// them (CMU `LeftFoot`, Bandai `Foot_L`, Mixamo `mixamorig:LeftFoot`, `LeftAnkle`, ...), hands
    /// likewise (`LeftHand`, `Hand_L`, `mixamorig:LeftHand`, `LeftWrist`, ...).
    pub fn find(skeleton: &Skeleton, over: &JointOverrides) -> Result<Self, String> {
        skeleton.validate()?;
        let params = ContactParams {
            left_ankle: over.left_foot.clone(),
            right_ankle: over.right_foot.clone(),
            ..ContactParams::default()
        };
        let [lf, rf] = find_feet("", skeleton, &params).map_err(|e| match e {
            AutotagError::NoSuchJoint { joint, .. } => {
                format!("no joint named `{joint}` ({GIVEN_FOR}a foot)")
            }
            AutotagError::NoFootJoints { side, .. } => format!(
                "no {side} foot joint found (looked for names like LeftFoot, Foot_L, \
                 mixamorig:LeftFoot, LeftAnkle); name it with the {side}_foot joint override \
                 (`taglane find --joint {side}_foot=NAME`)"
            ),
            other => other.to_string(),
        })?;
        let (lf, rf) = (lf.ankle, rf.ankle);
        let lh = find_hand(skeleton, &over.left_hand, true)?;
        let rh = find_hand(skeleton, &over.right_hand, false)?;
        let chain = |j: usize| skeleton.chain_to(j).unwrap_or_default();
        let (cl, cr) = (chain(lf), chain(rf));
        let root = match &over.root {
            Some(name) => skeleton
                .find(name)
                .ok_or_else(|| format!("no joint named `{name}` ({GIVEN_FOR}the root)"))?,
            None => {
                let common = cl.iter().zip(&cr).take_while(|(a, b)| a == b).count();
                if common == 0 {
                    return Err(format!(
                        "the feet `{}` and `{}` have no common ancestor; name the root joint",
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
                    "the foot `{}` has no thigh joint below the root `{}` (foot, knee and thigh \
                     joints expected)",
                    skeleton.names[foot], skeleton.names[root]
                ))
            }
        };
        let thighs = [thigh(&cl, lf)?, thigh(&cr, rf)?];
        if thighs[0] == thighs[1] {
            return Err(format!(
                "both feet hang from the same thigh joint `{}`",
                skeleton.names[thighs[0]]
            ));
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
    /// The features of frame `f`.
    #[inline]
    pub fn frame(&self, f: usize) -> &[f32] {
        &self.values[f * DIMS..(f + 1) * DIMS]
    }

    /// Checks the length, the rate and that every value is finite.
    pub fn validate(&self) -> Result<(), String> {
        if self.frames.checked_mul(DIMS) != Some(self.values.len()) {
            return Err(format!(
                "{} feature values for {} frames of {DIMS}",
                self.values.len(),
                self.frames
            ));
        }
        if !(self.fps.is_finite() && self.fps > 0.0) {
            return Err(format!("frame rate {} is not positive", self.fps));
        }
        if let Some(i) = self.values.iter().position(|v| !v.is_finite()) {
            return Err(format!(
                "feature {} of frame {} is not finite",
                i % DIMS,
                i / DIMS
            ));
        }
        Ok(())
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

/// Finds the joints of `clip` by `over` and computes its features; errors name the clip.
pub fn clip_features_by_name(clip: &Clip, over: &JointOverrides) -> Result<ClipFeatures, String> {
    let joints = FeatureJoints::find(&clip.skeleton, over)
        .map_err(|e| format!("clip `{}`: {e}", clip.name))?;
    clip_features(clip, &joints).map_err(|e| format!("clip `{}`: {e}", clip.name))
}

/// Frames in `secs` seconds at `fps`, rounded, at least 1.
fn frames_in(secs: f32, fps: f32) -> usize {
    let f = (secs * fps).round();
    if f.is_finite() && f >= 1.0 {
        f as usize
    } else {
        1
    }
}

/// The job behind [`clip_features`]: writes `frame_count * DIMS` numbers into `out` (cleared first).
/// Forward kinematics runs on the joints the features need and their ancestors only.
pub fn build_features(
    clip: &Clip,
    joints: &FeatureJoints,
    scratch: &mut FeatureScratch,
    out: &mut Vec<f32>,
) -> Result<(), String> {
    clip.validate()?;
    let sk = &clip.skeleton;
    let n = sk.len();
    let used = || {
        joints
            .effectors
            .iter()
            .chain(&joints.thighs)
            .chain([&joints.root])
            .copied()
    };
    if let Some(j) = used().find(|&j| j >= n) {
        return Err(format!("joint {j} is out of range ({n} joints)"));
    }
    if !(clip.unit_cm.is_finite() && clip.unit_cm > 0.0) {
        return Err(format!("unit_cm must be positive, found {}", clip.unit_cm));
    }
    // The joints to pose: every ancestor of the joints used, in index order (parents first).
    let mut needed = vec![false; n];
    for j in used() {
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
    // Pass 1: forward kinematics of the needed joints; raw heading (left) vectors.
    let mut prev_left: Option<Vec3> = None;
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
        let mut l = model[thigh_s[0]].translation - model[thigh_s[1]].translation;
        l.y = 0.0;
        let len2 = l.length_squared();
        let l = if len2 > 1e-12 {
            l * len2.sqrt().recip()
        } else {
            // Thighs above each other: keep the last heading (or the root's own +X at the start).
            prev_left.unwrap_or_else(|| {
                let mut x = model[root_s].rotation * Vec3::X;
                x.y = 0.0;
                x.try_normalize().unwrap_or(Vec3::X)
            })
        };
        prev_left = Some(l);
        root_pos.push(model[root_s].translation * unit);
        left.push(l);
        effector_pos.push(eff_s.map(|s| model[s].translation * unit));
    }
    out.clear();
    out.resize(frames * DIMS, 0.0);
    if frames == 0 {
        return Ok(());
    }
    // Pass 2: the heading averaged over a centred window (a running sum of the unit vectors).
    let h = frames_in(HEADING_SMOOTH_SECS, clip.fps);
    let mut sum = Vec3::ZERO;
    let (mut lo, mut hi) = (0usize, 0usize); // the window [lo, hi) summed
    let mut smooth = Vec::with_capacity(frames);
    for f in 0..frames {
        let (a, b) = (f.saturating_sub(h), (f + h + 1).min(frames));
        while hi < b {
            sum += left[hi];
            hi += 1;
        }
        while lo < a {
            sum -= left[lo];
            lo += 1;
        }
        smooth.push(sum.try_normalize().unwrap_or(left[f]));
    }
    left.copy_from_slice(&smooth);

    // Pass 3: everything in each frame's heading frame.
    let fps = clip.fps;
    let last = frames - 1;
    let traj = frames_in(TRAJECTORY_SECS, fps);
    let vh = frames_in(VELOCITY_HALF_SECS, fps);
    // The signed angle about +Y turning the heading `u` into `v` (positive: to the left).
    let turn = |u: Vec3, v: Vec3| (u.z * v.x - u.x * v.z).atan2(u.x * v.x + u.z * v.z);
    for f in 0..frames {
        let l = left[f];
        let fwd = Vec3::new(-l.z, 0.0, l.x);
        let to_local = |v: Vec3| [v.dot(l), v.y, v.dot(fwd)];
        let (a, b) = (f.saturating_sub(vh), (f + vh).min(last));
        let o = &mut out[f * DIMS..(f + 1) * DIMS];
        let r = root_pos[f];
        for e in 0..4 {
            o[3 * e..3 * e + 3].copy_from_slice(&to_local(effector_pos[f][e] - r));
        }
        if b > a {
            let inv_dt = fps / (b - a) as f32;
            for e in 0..4 {
                let v = (effector_pos[b][e] - effector_pos[a][e]) * inv_dt;
                o[12 + 3 * e..15 + 3 * e].copy_from_slice(&to_local(v));
            }
            o[24..27].copy_from_slice(&to_local((root_pos[b] - root_pos[a]) * inv_dt));
            o[27] = turn(left[a], left[b]) * inv_dt;
        }
        let behind = to_local(root_pos[f.saturating_sub(traj)] - r);
        let ahead = to_local(root_pos[(f + traj).min(last)] - r);
        o[28] = behind[0];
        o[29] = behind[2];
        o[30] = ahead[0];
        o[31] = ahead[2];
    }
    Ok(())
}

/// Moves and turns a clip on the ground (for tests and examples): every root joint's translation is
/// turned by `yaw_rad` about +Y and offset by `offset` (file units), its rotation turned by the same
/// yaw.
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

/// Frames `[start, stop)` of `clip` played at `speed` times their pace (0.8: 25% longer) and
/// sampled at `fps` (for tests and benchmarks: time-stretched copies, other frame rates). Rotations
/// are interpolated with nlerp, translations and scales linearly.
pub fn retime(
    clip: &Clip,
    start: usize,
    stop: usize,
    fps: f32,
    speed: f32,
) -> Result<Clip, String> {
    use crate::core::anim::{RotationInterp, SampleSettings, sample_clip};
    if start >= stop || stop > clip.frame_count {
        return Err(format!(
            "range {start}:{stop} is outside the clip's {} frames",
            clip.frame_count
        ));
    }
    if !(fps.is_finite() && fps > 0.0 && speed.is_finite() && speed > 0.0) {
        return Err(format!("fps {fps} and speed {speed} must be positive"));
    }
    let n = clip.joint_count();
    let source_s = f64::from((stop - start - 1) as f32 / clip.fps);
    let frames = (source_s / f64::from(speed) * f64::from(fps)).round() as usize + 1;
    let settings = SampleSettings::clamped(RotationInterp::Nlerp);
    let mut pose = vec![Transform::IDENTITY; n];
    let mut out = Clip {
        name: clip.name.clone(),
        skeleton: clip.skeleton.clone(),
        fps,
        frame_count: frames,
        unit_cm: clip.unit_cm,
        rotations: Vec::with_capacity(frames * n),
        translations: Vec::with_capacity(frames * n),
        scales: Vec::with_capacity(frames * n),
    };
    for f in 0..frames {
        let t = f64::from(start as f32 / clip.fps) + f as f64 / f64::from(fps) * f64::from(speed);
        sample_clip(clip, t, &settings, &mut pose).map_err(|e| e.to_string())?;
        for p in &pose {
            out.rotations.push(p.rotation);
            out.translations.push(p.translation);
            out.scales.push(p.scale);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::demo::{demo_scripts, generate_take};

    fn demo_clip(i: usize) -> Clip {
        generate_take(&demo_scripts()[i]).0
    }

    fn features(clip: &Clip) -> ClipFeatures {
        clip_features_by_name(clip, &JointOverrides::default()).unwrap()
    }

    fn max_diff(a: &[f32], b: &[f32]) -> f32 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    }

    fn skeleton(names: &[&str], parents: &[Option<usize>]) -> Skeleton {
        Skeleton::new(
            names.iter().map(|s| (*s).to_owned()).collect(),
            parents.to_vec(),
            vec![Transform::IDENTITY; names.len()],
        )
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
        let mut over = JointOverrides::default();
        over.set("left_hand", "LeftForeArm").unwrap();
        over.set("right_foot", "RightToeBase").unwrap();
        let j = FeatureJoints::find(&clip.skeleton, &over).unwrap();
        assert_eq!(name(j.effectors[2]), "LeftForeArm");
        assert_eq!(name(j.effectors[1]), "RightToeBase");
        assert_eq!(j.thighs.map(name), ["LeftUpLeg", "RightLeg"]);
        for (role, joint, want) in [
            ("root", "Nope", "Nope"),
            ("left_foot", "Nope", "Nope"),
            ("right_hand", "Nope", "right hand"),
        ] {
            let mut bad = JointOverrides::default();
            bad.set(role, joint).unwrap();
            let err = FeatureJoints::find(&clip.skeleton, &bad).unwrap_err();
            assert!(err.contains(want), "{err}");
        }
        assert!(over.set("elbow", "X").unwrap_err().contains("left_hand"));
    }

    #[test]
    fn cmu_bandai_and_mixamo_names_are_recognised() {
        // CMU: hip joints between Hips and the thighs; Bandai: a fixed joint_Root above Hips;
        // Mixamo: a namespace prefix; plus a wrist-named rig.
        let cmu = [
            "Hips",
            "LHipJoint",
            "LeftUpLeg",
            "LeftLeg",
            "LeftFoot",
            "LeftToeBase",
            "RHipJoint",
            "RightUpLeg",
            "RightLeg",
            "RightFoot",
            "RightToeBase",
            "LeftHand",
            "RightHand",
        ];
        let cmu_parents = [
            None,
            Some(0),
            Some(1),
            Some(2),
            Some(3),
            Some(4),
            Some(0),
            Some(6),
            Some(7),
            Some(8),
            Some(9),
            Some(0),
            Some(0),
        ];
        let sk = skeleton(&cmu, &cmu_parents);
        let j = FeatureJoints::find(&sk, &JointOverrides::default()).unwrap();
        assert_eq!((j.root, j.effectors, j.thighs), (0, [4, 9, 11, 12], [2, 7]));
        let parents = [
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
        for (names, root) in [
            (
                [
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
                [
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
            (
                [
                    "root", "pelvis", "thigh_l", "calf_l", "foot_l", "thigh_r", "calf_r", "foot_r",
                    "l_wrist", "r_wrist",
                ],
                "pelvis",
            ),
        ] {
            let sk = skeleton(&names, &parents);
            let j = FeatureJoints::find(&sk, &JointOverrides::default()).unwrap();
            assert_eq!(sk.names[j.root], root);
            assert_eq!(j.effectors, [4, 7, 8, 9]);
            assert_eq!(j.thighs, [2, 5]);
        }
        // Missing hands or feet: an error that says what to name.
        let sk = skeleton(&cmu[..11], &cmu_parents[..11]);
        let err = FeatureJoints::find(&sk, &JointOverrides::default()).unwrap_err();
        assert!(
            err.contains("left hand") && err.contains("left_hand"),
            "{err}"
        );
        let sk = skeleton(&["Hips", "Spine"], &[None, Some(0)]);
        let err = FeatureJoints::find(&sk, &JointOverrides::default()).unwrap_err();
        assert!(
            err.contains("foot") && err.contains("_foot joint override"),
            "{err}"
        );
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
            (std::f32::consts::PI, Vec3::new(1.0e4, 0.0, 2.0e4)),
        ] {
            let mut moved = clip.clone();
            turn_and_move(&mut moved, yaw, offset);
            let f = features(&moved);
            let d = max_diff(&base.values, &f.values);
            // f32 positions far from the origin lose precision: allow for it.
            let tol = 0.05 + 1e-5 * offset.length();
            assert!(d < tol, "yaw {yaw} offset {offset}: differs by {d}");
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
    fn frame_rate_does_not_change_speeds() {
        // Every second frame of a 30 fps take, at 15 fps: velocities and turn rates are per second,
        // so they stay close to the 30 fps values at the same instants.
        let clip = demo_clip(8);
        let base = features(&clip);
        let half = retime(&clip, 0, clip.frame_count, clip.fps / 2.0, 1.0).unwrap();
        let keep: Vec<usize> = (0..clip.frame_count).step_by(2).collect();
        assert_eq!(half.frame_count, keep.len());
        let f = features(&half);
        for (k, &src) in keep.iter().enumerate().skip(20).take(40) {
            let (a, b) = (base.frame(src), f.frame(k));
            assert!(
                (a[26] - b[26]).abs() < 10.0,
                "forward speed {} vs {}",
                a[26],
                b[26]
            );
            assert!(
                (a[27] - b[27]).abs() < 0.1,
                "turn rate {} vs {}",
                a[27],
                b[27]
            );
        }
    }

    #[test]
    fn walking_features_have_walking_speed_a_turn_rate_and_a_planted_foot() {
        let f = features(&demo_clip(0));
        // Frames 60..: walking straight at 140 cm/s along the heading (z), not turning.
        let fr = f.frame(150);
        assert!((fr[26] - 140.0).abs() < 25.0, "forward speed {}", fr[26]);
        assert!(fr[24].abs() < 15.0, "sideways speed {}", fr[24]);
        assert!(fr[27].abs() < 0.05, "turn rate {}", fr[27]);
        // Trajectory: 0.4 s behind is 56 cm back, 0.4 s ahead 56 cm forward.
        assert!(
            (fr[29] + 56.0).abs() < 8.0 && (fr[31] - 56.0).abs() < 8.0,
            "{fr:?}"
        );
        // Feet below the root, the left foot on the left, hands beside it.
        assert!(fr[1] < -60.0 && fr[4] < -60.0);
        assert!(fr[0] > 5.0 && fr[3] < -5.0, "{fr:?}");
        assert!(fr[6] > 10.0 && fr[9] < -10.0, "{fr:?}");
        // Some frame has a planted foot (near zero velocity).
        let planted = (60..f.frames).any(|k| {
            let v = &f.frame(k)[12..15];
            (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt() < 10.0
        });
        assert!(planted);
        // The turning walk turns left at 25 deg/s.
        let t = features(&demo_clip(8));
        let rate = t.frame(90)[27].to_degrees();
        assert!((rate - 25.0).abs() < 4.0, "turn rate {rate} deg/s");
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let mut clip = demo_clip(2);
        let j = FeatureJoints::find(&clip.skeleton, &JointOverrides::default()).unwrap();
        clip.unit_cm = 0.0;
        assert!(clip_features(&clip, &j).unwrap_err().contains("unit_cm"));
        clip.unit_cm = 1.0;
        let bad = FeatureJoints { root: 99, ..j };
        assert!(clip_features(&clip, &bad).is_err());
        let mut short = clip.clone();
        short.translations.pop();
        assert!(clip_features(&short, &j).is_err());
        // One frame and zero frames: no velocities, no panic.
        let one = clip.sub_clip(3, 4, "one").unwrap();
        let f = clip_features(&one, &j).unwrap();
        assert_eq!(f.values.len(), DIMS);
        assert!(f.frame(0)[12..28].iter().all(|&v| v == 0.0));
        let mut empty = one.clone();
        empty.frame_count = 0;
        empty.rotations.clear();
        empty.translations.clear();
        empty.scales.clear();
        assert!(clip_features(&empty, &j).unwrap().values.is_empty());
    }

    #[test]
    fn weights_are_set_by_name_and_validated() {
        let mut w = Weights::default();
        w.set("hand_velocity", 0.0).unwrap();
        assert_eq!(w.hand_velocity, 0.0);
        assert!(w.set("speed", 1.0).unwrap_err().contains("root_velocity"));
        assert!(w.set("trajectory", -1.0).is_err());
        assert!(w.set("trajectory", f32::NAN).is_err());
        for g in Group::ALL {
            w.set(g.name(), 0.0).unwrap();
            assert_eq!(w.of(g), 0.0);
            for d in g.dims() {
                assert_eq!(group_of(d), g);
            }
        }
        assert!(w.validate().is_err());
        assert_eq!(
            Group::ALL.iter().map(|g| g.dims().len()).sum::<usize>(),
            DIMS
        );
    }
}
