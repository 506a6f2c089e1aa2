//! Pure logic of the pose preview (no egui): the orbit camera, sampling a clip to model-space
//! joint positions, blend masks, clip synchronisation (normalised time, tag, best match) and the
//! root-motion blend trajectories.

use glam::{EulerRot, Vec2, Vec3};

use crate::core::anim::{
    Clip, JobError, MixSettings, RootMotionBlend, RootMotionTrack, SampleBuffer, SampleSettings,
    Transform, blend_vec, local_to_model, mix, subtree_mask,
};

/// An orbit camera around `target`, Y up, perspective projection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// The point looked at, model units.
    pub target: Vec3,
    /// Angle about +Y of the eye around the target, radians (0: the eye is on +Z, looking at -Z).
    pub yaw_rad: f32,
    /// Elevation of the eye, radians, in `(-pi/2, pi/2)`.
    pub pitch_rad: f32,
    /// Eye to target distance, model units.
    pub distance: f32,
    /// Vertical field of view, radians.
    pub fov_y_rad: f32,
}

impl Default for Camera {
    fn default() -> Self {
        Self {
            target: Vec3::new(0.0, 90.0, 0.0),
            yaw_rad: 0.6,
            pitch_rad: 0.25,
            distance: 400.0,
            fov_y_rad: 40f32.to_radians(),
        }
    }
}

/// Limit of the pitch so the view never flips over the pole.
const MAX_PITCH_RAD: f32 = 1.55;

impl Camera {
    /// The eye position.
    pub fn eye(&self) -> Vec3 {
        let (sy, cy) = self.yaw_rad.sin_cos();
        let (sp, cp) = self.pitch_rad.sin_cos();
        self.target + Vec3::new(sy * cp, sp, cy * cp) * self.distance
    }

    /// The view and perspective projection for a viewport of `aspect` (width / height).
    pub fn clip_from_model(&self, aspect: f32) -> ViewProjection {
        let eye = self.eye();
        let forward = (self.target - eye).normalize_or(-Vec3::Z);
        let right = forward.cross(Vec3::Y).normalize_or(Vec3::X);
        let up = right.cross(forward);
        ViewProjection {
            eye,
            right,
            up,
            forward,
            tan_half_fov: (self.fov_y_rad * 0.5).tan(),
            aspect: aspect.max(1e-3),
            near: (self.distance * 0.01).max(1e-3),
        }
    }

    /// Projects a model point into a viewport whose top-left corner is `origin` and size `size`
    /// (pixels, y down). `None` when the point is behind the near plane.
    pub fn project(&self, vp: &ViewProjection, p: Vec3, origin: Vec2, size: Vec2) -> Option<Vec2> {
        let d = p - vp.eye;
        let depth = d.dot(vp.forward);
        if depth < vp.near {
            return None;
        }
        let x = d.dot(vp.right) / (depth * vp.tan_half_fov * vp.aspect);
        let y = d.dot(vp.up) / (depth * vp.tan_half_fov);
        Some(Vec2::new(
            origin.x + (x * 0.5 + 0.5) * size.x,
            origin.y + (0.5 - y * 0.5) * size.y,
        ))
    }

    /// Orbits by a pointer drag of `delta` pixels.
    pub fn orbit(&mut self, delta: Vec2) {
        self.yaw_rad -= delta.x * 0.01;
        self.pitch_rad = (self.pitch_rad + delta.y * 0.01).clamp(-MAX_PITCH_RAD, MAX_PITCH_RAD);
    }

    /// Pans by a pointer drag of `delta` pixels in a viewport `height_px` tall: the target moves so
    /// the point under the pointer follows it.
    pub fn pan(&mut self, delta: Vec2, height_px: f32) {
        let units_per_px = 2.0 * self.distance * (self.fov_y_rad * 0.5).tan() / height_px.max(1.0);
        let forward = (self.target - self.eye()).normalize_or_zero();
        let right = forward.cross(Vec3::Y).normalize_or(Vec3::X);
        let up = right.cross(forward);
        self.target += (-right * delta.x + up * delta.y) * units_per_px;
    }

    /// Zooms by `factor` (> 1 moves closer).
    pub fn zoom(&mut self, factor: f32) {
        if factor.is_finite() && factor > 0.0 {
            self.distance = (self.distance / factor).clamp(1e-2, 1e6);
        }
    }

    /// Centres the view on the box `[min, max]` and sets the distance so it fills the view.
    pub fn frame(&mut self, min: Vec3, max: Vec3) {
        if !(min.is_finite() && max.is_finite()) {
            return;
        }
        self.target = (min + max) * 0.5;
        let radius = ((max - min).length() * 0.5).max(1e-2);
        self.distance = radius / (self.fov_y_rad * 0.5).sin() * 1.1;
    }

    /// Looks from the front (+Z), the side (+X) or from above.
    pub fn set_view(&mut self, view: ViewDir) {
        let (yaw, pitch) = match view {
            ViewDir::Front => (0.0, 0.0),
            ViewDir::Side => (std::f32::consts::FRAC_PI_2, 0.0),
            ViewDir::Top => (0.0, MAX_PITCH_RAD),
        };
        self.yaw_rad = yaw;
        self.pitch_rad = pitch;
    }
}

/// A camera's view frame and perspective (a right-handed look-at and a symmetric frustum).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewProjection {
    pub eye: Vec3,
    pub right: Vec3,
    pub up: Vec3,
    pub forward: Vec3,
    pub tan_half_fov: f32,
    pub aspect: f32,
    pub near: f32,
}

/// Preset view directions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewDir {
    Front,
    Side,
    Top,
}

/// Bounding box of points (`None` when empty or not finite).
pub fn bounds(points: &[Vec3]) -> Option<(Vec3, Vec3)> {
    let mut it = points.iter().filter(|p| p.is_finite());
    let first = *it.next()?;
    Some(it.fold((first, first), |(lo, hi), p| (lo.min(*p), hi.max(*p))))
}

/// Reusable buffers for sampling and forward kinematics.
#[derive(Debug, Clone, Default)]
pub struct PoseBuffers {
    pub local: Vec<Transform>,
    pub model: Vec<Transform>,
}

impl PoseBuffers {
    fn fit(&mut self, n: usize) {
        self.local.resize(n, Transform::IDENTITY);
        self.model.resize(n, Transform::IDENTITY);
    }
}

/// Samples `clip` at `time_s` and writes its model-space joint transforms into `buffers.model`.
pub fn sample_model(
    clip: &Clip,
    time_s: f64,
    settings: &SampleSettings,
    buffers: &mut PoseBuffers,
) -> Result<(), JobError> {
    buffers.fit(clip.joint_count());
    crate::core::anim::sample_clip(clip, time_s, settings, &mut buffers.local)?;
    local_to_model(&clip.skeleton, &buffers.local, &mut buffers.model)
}

/// Which bones a partial blend affects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MaskKind {
    /// Every bone.
    #[default]
    None,
    /// The spine and everything above it.
    UpperBody,
    /// Everything but the upper body.
    LowerBody,
    /// A chosen joint and its descendants.
    Subtree(usize),
}

/// The first joint of the upper body: the lowest-index joint named like a spine or back.
pub fn upper_body_root(clip: &Clip) -> Option<usize> {
    clip.skeleton.names.iter().position(|n| {
        let n = n.to_ascii_lowercase();
        n.contains("spine") || n.contains("back") || n.contains("chest") || n.contains("torso")
    })
}

/// Per-bone weight factors for `kind`, or `None` for a full blend. Errors say why a mask cannot be
/// built (no spine joint, joint out of range).
pub fn build_mask(clip: &Clip, kind: MaskKind) -> Result<Option<Vec<f32>>, String> {
    let sk = &clip.skeleton;
    match kind {
        MaskKind::None => Ok(None),
        MaskKind::UpperBody | MaskKind::LowerBody => {
            let spine = upper_body_root(clip).ok_or_else(|| {
                "no joint named like a spine or back: choose a subtree instead".to_owned()
            })?;
            Ok(Some(if kind == MaskKind::UpperBody {
                subtree_mask(sk, spine, 1.0, 0.0)
            } else {
                subtree_mask(sk, spine, 0.0, 1.0)
            }))
        }
        MaskKind::Subtree(j) if j < sk.len() => Ok(Some(subtree_mask(sk, j, 1.0, 0.0))),
        MaskKind::Subtree(j) => Err(format!("joint {j} is out of range ({} joints)", sk.len())),
    }
}

/// Blends clip `a` at `time_a_s` with clip `b` at `time_b_s` (`weight` of `b`, optional mask) and
/// writes model-space transforms to `out.model`. The clips must share the skeleton's joint count.
///
/// With `align_joint` (the motion joint, see [`motion_joint`]), B's local translation of that
/// joint is moved onto A's on the ground plane (x, z) before mixing, so the blend shows the two
/// poses rather than halfway between two places; the root-motion view shows the trajectories.
#[allow(clippy::too_many_arguments)]
pub fn blend_model(
    a: &Clip,
    time_a_s: f64,
    b: &Clip,
    time_b_s: f64,
    settings: &SampleSettings,
    weight: f32,
    mask: Option<&[f32]>,
    align_joint: Option<usize>,
    out: &mut PoseBuffers,
) -> Result<(), JobError> {
    let n = a.joint_count();
    if b.joint_count() != n {
        return Err(JobError::SkeletonMismatch(format!(
            "{} has {n} joints, {} has {}",
            a.name,
            b.name,
            b.joint_count()
        )));
    }
    let mut sa = SampleBuffer::new(n);
    let mut sb = SampleBuffer::new(n);
    sa.sample(a, time_a_s, settings)?;
    sb.sample(b, time_b_s, settings)?;
    if let Some(m) = align_joint.filter(|m| *m < n) {
        let ta = sa.transforms[m].translation;
        let tb = &mut sb.transforms[m].translation;
        tb.x = ta.x;
        tb.z = ta.z;
    }
    let mut mixed = SampleBuffer::new(n);
    mix(
        &sa,
        &sb,
        &MixSettings {
            weight: weight.clamp(0.0, 1.0),
            mask,
            rotation: settings.rotation,
        },
        &mut mixed,
    )?;
    mixed.fill_invalid_with_rest(&a.skeleton)?;
    out.fit(n);
    out.local.copy_from_slice(&mixed.transforms);
    local_to_model(&a.skeleton, &out.local, &mut out.model)
}

/// A linear map from clip A's time to clip B's: `t_b = t_a * scale + offset_s`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeMap {
    pub scale: f64,
    pub offset_s: f64,
}

impl TimeMap {
    pub const IDENTITY: Self = Self {
        scale: 1.0,
        offset_s: 0.0,
    };

    pub fn apply(&self, t_a: f64) -> f64 {
        t_a * self.scale + self.offset_s
    }

    /// Normalised time: the same fraction of each clip's duration.
    pub fn normalized(duration_a_s: f64, duration_b_s: f64) -> Self {
        if duration_a_s > 0.0 {
            Self {
                scale: duration_b_s / duration_a_s,
                offset_s: 0.0,
            }
        } else {
            Self::IDENTITY
        }
    }

    /// Aligns time `start_a_s` of A with `start_b_s` of B, both playing at normal speed.
    pub fn aligned(start_a_s: f64, start_b_s: f64) -> Self {
        Self {
            scale: 1.0,
            offset_s: start_b_s - start_a_s,
        }
    }
}

/// Wraps an angle to `(-pi, pi]`.
fn wrap_pi(a: f32) -> f32 {
    let r = (a + std::f32::consts::PI).rem_euclid(std::f32::consts::TAU) - std::f32::consts::PI;
    if r <= -std::f32::consts::PI {
        r + std::f32::consts::TAU
    } else {
        r
    }
}

/// The best match in `b` for a root at `position` with `heading_rad`: for every frame of `b`, the
/// position error (distance) and the facing error (absolute heading difference) are each divided by
/// their largest value over the frames, so both lie in `[0, 1]`, then mixed as
/// `bias * position + (1 - bias) * facing`. Returns the frame with the lowest score and the score.
pub fn best_match_frame(
    position: Vec3,
    heading_rad: f32,
    b: &RootMotionTrack,
    bias: f32,
) -> Option<(usize, f32)> {
    let n = b.positions.len().min(b.headings.len());
    if n == 0 {
        return None;
    }
    let bias = if bias.is_finite() {
        bias.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let dist = |f: usize| (b.positions[f] - position).length();
    let facing = |f: usize| wrap_pi(b.headings[f] - heading_rad).abs();
    let (mut max_d, mut max_h) = (0.0f32, 0.0f32);
    for f in 0..n {
        max_d = max_d.max(dist(f));
        max_h = max_h.max(facing(f));
    }
    let norm = |v: f32, max: f32| if max > 0.0 { v / max } else { 0.0 };
    (0..n)
        .map(|f| {
            let s = bias * norm(dist(f), max_d) + (1.0 - bias) * norm(facing(f), max_h);
            (f, s)
        })
        .filter(|(_, s)| s.is_finite())
        .min_by(|x, y| x.1.total_cmp(&y.1))
}

/// Position and unwrapped heading of a track at time `t_s` (clamped, linear between frames).
pub fn track_at(track: &RootMotionTrack, t_s: f64) -> Option<(Vec3, f32)> {
    let n = track.positions.len().min(track.headings.len());
    if n == 0 {
        return None;
    }
    let x = (t_s * f64::from(track.fps)).clamp(0.0, (n - 1) as f64);
    let f0 = (x.floor() as usize).min(n - 1);
    let f1 = (f0 + 1).min(n - 1);
    let a = (x - f0 as f64) as f32;
    Some((
        track.positions[f0].lerp(track.positions[f1], a),
        track.headings[f0] + (track.headings[f1] - track.headings[f0]) * a,
    ))
}

/// The joint whose motion is the character's root motion: the root, or its first child when the
/// root does not move (the Bandai files keep `ROOT` at zero and move `Hips`).
pub fn motion_joint(clip: &Clip) -> usize {
    let n = clip.joint_count();
    if n == 0 || clip.frame_count == 0 || clip.translations.len() < clip.frame_count * n {
        return 0;
    }
    let first = clip.translations[0];
    let root_moves =
        (0..clip.frame_count).any(|f| (clip.translations[f * n] - first).length() > 1e-4);
    if root_moves {
        return 0;
    }
    clip.skeleton
        .parents
        .iter()
        .position(|p| *p == Some(0))
        .unwrap_or(0)
}

/// The root joint when it stands still while another joint carries the motion (Bandai takes:
/// `joint_Root` at the origin, the motion on `Hips`): the bone from it to the body is not drawn
/// and it is left out of the framing. A root of several joints in one place, each the only child
/// of the one before (the glTF Fox: `_rootJoint` and `b_Root_00` at the origin, then the hips), is
/// left out at its last joint, so that no bone is drawn from the ground to the body.
pub fn static_root(clip: &Clip) -> Option<usize> {
    if motion_joint(clip) == 0 || clip.joint_count() < 2 {
        return None;
    }
    let n = clip.joint_count();
    let parents = &clip.skeleton.parents;
    let mut at = 0;
    loop {
        let mut children = (0..n).filter(|&j| parents[j] == Some(at));
        let (Some(child), None) = (children.next(), children.next()) else {
            break;
        };
        // The child stands where its parent does (no offset at the first frame).
        let offset = clip
            .translations
            .get(child)
            .map_or(f32::MAX, |t| t.length());
        if offset > 1e-3 {
            break;
        }
        at = child;
    }
    Some(at)
}

/// Model-space joint positions of a clip at evenly spaced frames (every `stride` frames, at most
/// about [`ClipPositions::MAX_SAMPLES`] of them), file units: for framing the whole clip and for
/// joint trails.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClipPositions {
    pub joints: usize,
    pub stride: usize,
    /// Frame-major: sample `k` (frame `k * stride`), joint `j` at `k * joints + j`.
    pub positions: Vec<Vec3>,
    /// The skeleton's standing height in file units (`core::anim::units`), when measurable.
    pub height_units: Option<f32>,
}

impl ClipPositions {
    pub const MAX_SAMPLES: usize = 2048;

    /// Runs forward kinematics on the sampled frames. An invalid clip gives no samples.
    pub fn new(clip: &Clip) -> Self {
        let n = clip.joint_count();
        let stride = clip.frame_count.div_ceil(Self::MAX_SAMPLES).max(1);
        let mut out = Self {
            joints: n,
            stride,
            positions: Vec::new(),
            height_units: None,
        };
        if clip.validate().is_err() {
            return out;
        }
        out.height_units = crate::core::anim::units::standing_height_units(clip);
        let mut local = vec![Transform::IDENTITY; n];
        let mut model = vec![Transform::IDENTITY; n];
        for f in (0..clip.frame_count).step_by(stride) {
            clip.copy_pose(f, &mut local);
            if local_to_model(&clip.skeleton, &local, &mut model).is_err() {
                out.positions.clear();
                return out;
            }
            out.positions.extend(model.iter().map(|m| m.translation));
        }
        out
    }

    pub fn samples(&self) -> usize {
        self.positions.len() / self.joints.max(1)
    }

    /// The positions of joint `j` over the clip.
    pub fn track(&self, j: usize) -> Vec<Vec3> {
        (0..self.samples())
            .filter_map(|k| self.positions.get(k * self.joints + j).copied())
            .collect()
    }

    /// The box holding every joint but `skip` over the whole clip.
    pub fn bounds(&self, skip: Option<usize>) -> Option<(Vec3, Vec3)> {
        let pts: Vec<Vec3> = self
            .positions
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(i % self.joints.max(1)) != skip)
            .map(|(_, p)| *p)
            .collect();
        bounds(&pts)
    }

    /// The box holding the body around joint `anchor` over the whole clip (each sample's joints
    /// relative to that sample's `anchor`), for framing a followed character; `skip` left out.
    pub fn body_extent(&self, anchor: usize, skip: Option<usize>) -> Option<(Vec3, Vec3)> {
        let n = self.joints.max(1);
        let pts: Vec<Vec3> = self
            .positions
            .chunks_exact(n)
            .flat_map(|pose| {
                let a = pose.get(anchor).copied().unwrap_or(Vec3::ZERO);
                let a = Vec3::new(a.x, 0.0, a.z);
                pose.iter()
                    .enumerate()
                    .filter(move |(j, _)| Some(*j) != skip)
                    .map(move |(_, p)| *p - a)
            })
            .collect();
        bounds(&pts)
    }
}

/// The trajectories of the root-motion view, on the ground plane (x, z), model units.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trajectories {
    /// Clip A alone, B alone, then the three blends.
    pub a: Vec<Vec3>,
    pub b: Vec<Vec3>,
    pub lerp: Vec<Vec3>,
    pub nlerp: Vec<Vec3>,
    pub slerp: Vec<Vec3>,
    /// Index of the point at the playhead.
    pub playhead_index: usize,
}

/// Integrates the root motion of A (over its duration, one step per frame) and of B (at the mapped
/// times, looping), blending the two per-step displacements by lerp, nlerp and slerp with `weight`
/// into three trajectories. Displacements are the model-space ones (`translation`, turns
/// included), flattened on the ground, so where the clips head in different directions lerp
/// shortens the step (the character slows down) while nlerp and slerp keep its length.
pub fn blended_trajectories(
    a: &RootMotionTrack,
    b: &RootMotionTrack,
    map: TimeMap,
    weight: f32,
    playhead_s: f64,
) -> Result<Trajectories, JobError> {
    let steps = a.positions.len().saturating_sub(1);
    let dt = 1.0 / f64::from(a.fps);
    let start = a.positions.first().copied().unwrap_or(Vec3::ZERO);
    let start = Vec3::new(start.x, 0.0, start.z);
    let mut out = Trajectories::default();
    let hows = [
        RootMotionBlend::Lerp,
        RootMotionBlend::Nlerp,
        RootMotionBlend::Slerp,
    ];
    // Positions of: a, b, lerp, nlerp, slerp.
    let mut state = [start; 5];
    let push = |out: &mut Trajectories, state: &[Vec3; 5]| {
        out.a.push(state[0]);
        out.b.push(state[1]);
        out.lerp.push(state[2]);
        out.nlerp.push(state[3]);
        out.slerp.push(state[4]);
    };
    push(&mut out, &state);
    for k in 0..steps {
        let t0 = k as f64 * dt;
        let t1 = t0 + dt;
        let da = a.delta(t0, t1, true)?;
        let db = b.delta(map.apply(t0), map.apply(t1), true)?;
        let flat = |v: Vec3| Vec3::new(v.x, 0.0, v.z);
        let (va, vb) = (flat(da.translation), flat(db.translation));
        let step = [
            va,
            vb,
            blend_vec(va, vb, weight, hows[0]),
            blend_vec(va, vb, weight, hows[1]),
            blend_vec(va, vb, weight, hows[2]),
        ];
        for (s, v) in state.iter_mut().zip(step) {
            *s += v;
        }
        push(&mut out, &state);
    }
    out.playhead_index =
        ((playhead_s / dt).round().max(0.0) as usize).min(out.a.len().saturating_sub(1));
    Ok(out)
}

/// Euler angles (degrees, X Y Z of an intrinsic Z-Y-X decomposition, unwrapped frame to frame) of
/// `joint`'s local rotation at every frame: the rotation curve plotted for a selected joint.
pub fn rotation_curve_deg(clip: &Clip, joint: usize) -> [Vec<f32>; 3] {
    let n = clip.joint_count();
    let mut out: [Vec<f32>; 3] = Default::default();
    if joint >= n || clip.rotations.len() < clip.frame_count * n {
        return out;
    }
    let mut prev: Option<[f32; 3]> = None;
    for f in 0..clip.frame_count {
        let (z, y, x) = clip.rotations[f * n + joint].to_euler(EulerRot::ZYX);
        let mut v = [x.to_degrees(), y.to_degrees(), z.to_degrees()];
        if let Some(p) = prev {
            for c in 0..3 {
                v[c] = p[c] + wrap_pi((v[c] - p[c]).to_radians()).to_degrees();
            }
        }
        for c in 0..3 {
            out[c].push(v[c]);
        }
        prev = Some(v);
    }
    out
}

/// Index of the projected joint nearest to `pointer` within `radius_px`.
pub fn pick_joint(screen: &[Option<Vec2>], pointer: Vec2, radius_px: f32) -> Option<usize> {
    screen
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.map(|p| (i, p.distance(pointer))))
        .filter(|(_, d)| *d <= radius_px)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// A warning when a skeleton of `height_units` file units stands at a size no character has at
/// `unit_cm` centimetres per unit (`core::library::PLAUSIBLE_GLTF_HEIGHT_M`: 2 cm to 20 m): the
/// clip's unit is likely wrong (the shared Fox, authored in centimetres, stands 60 m tall in the
/// metres of the glTF specification).
pub fn unit_warning(height_units: Option<f32>, unit_cm: f32) -> Option<String> {
    let cm = height_units? * unit_cm;
    let (lo, hi) = crate::core::library::units::PLAUSIBLE_GLTF_HEIGHT_M;
    if (lo * 100.0..=hi * 100.0).contains(&cm) {
        return None;
    }
    let size = if cm >= 100.0 {
        format!("{:.1} m", cm / 100.0)
    } else {
        format!("{cm:.2} cm")
    };
    Some(format!(
        "The skeleton stands {size} tall at 1 unit = {unit_cm} cm: check the clip's unit \
         (right-click it in the clip list, then Units)"
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_skeleton_of_no_characters_size_is_flagged() {
        // The Fox: 59.8 units in metres; in centimetres 60 cm, a fox.
        let w = unit_warning(Some(59.8), 100.0).expect("60 m");
        assert!(w.contains("59.8 m tall"), "{w}");
        assert_eq!(unit_warning(Some(59.8), 1.0), None);
        assert_eq!(unit_warning(Some(1.75), 100.0), None);
        assert!(unit_warning(Some(1.75), 1.0).is_some_and(|w| w.contains("1.75 cm")));
        assert_eq!(unit_warning(None, 100.0), None);
    }

    use super::*;
    use crate::core::anim::{RotationInterp, Skeleton, sample_clip};
    use glam::Quat;

    /// A still root, then `chain` joints standing where it does, then hips that move, with two
    /// legs: `static_root` leaves out the last joint of the still chain.
    fn ground_root_clip(chain: usize) -> Clip {
        let mut names: Vec<String> = vec!["Root".into()];
        let mut parents = vec![None];
        let mut offsets = vec![Vec3::ZERO];
        for k in 0..chain {
            names.push(format!("Root{k}"));
            parents.push(Some(k));
            offsets.push(Vec3::ZERO);
        }
        let hips = names.len();
        names.extend(["Hips".into(), "LegL".into(), "LegR".into()]);
        parents.extend([Some(hips - 1), Some(hips), Some(hips)]);
        offsets.extend([
            Vec3::Y * 90.0,
            Vec3::new(10.0, -45.0, 0.0),
            Vec3::new(-10.0, -45.0, 0.0),
        ]);
        let rest: Vec<Transform> = offsets
            .iter()
            .map(|&translation| Transform {
                translation,
                ..Transform::IDENTITY
            })
            .collect();
        let n = names.len();
        let frames = 4;
        let mut translations = Vec::new();
        for f in 0..frames {
            for (j, o) in offsets.iter().enumerate() {
                let moved = if j == hips {
                    Vec3::Z * f as f32
                } else {
                    Vec3::ZERO
                };
                translations.push(*o + moved);
            }
        }
        Clip {
            name: "g".into(),
            skeleton: Skeleton::new(names, parents, rest),
            fps: 30.0,
            frame_count: frames,
            unit_cm: 1.0,
            rotations: vec![Quat::IDENTITY; n * frames],
            translations,
            scales: vec![Vec3::ONE; n * frames],
        }
    }

    #[test]
    fn a_still_root_chain_is_left_out_at_its_last_joint() {
        // Bandai: the root, then the hips above it.
        assert_eq!(static_root(&ground_root_clip(0)), Some(0));
        // The Fox: two root joints at the origin, then the hips.
        assert_eq!(static_root(&ground_root_clip(1)), Some(1));
        assert_eq!(static_root(&ground_root_clip(3)), Some(3));
        // A root that moves carries the motion itself: nothing left out.
        let mut c = ground_root_clip(1);
        let n = c.joint_count();
        c.translations[n] = Vec3::X;
        assert_eq!(static_root(&c), None);
    }

    fn chain_clip(frames: usize, step: Vec3, turn_rad: f32) -> Clip {
        let names = vec!["Root".into(), "Spine".into(), "Head".into(), "Leg".into()];
        let parents = vec![None, Some(0), Some(1), Some(0)];
        let rest = vec![
            Transform::IDENTITY,
            Transform {
                translation: Vec3::Y * 10.0,
                ..Transform::IDENTITY
            },
            Transform {
                translation: Vec3::Y * 10.0,
                ..Transform::IDENTITY
            },
            Transform {
                translation: -Vec3::Y * 10.0,
                ..Transform::IDENTITY
            },
        ];
        let skeleton = Skeleton::new(names, parents, rest.clone());
        let mut clip = Clip {
            name: "c".into(),
            skeleton,
            fps: 10.0,
            frame_count: frames,
            unit_cm: 1.0,
            rotations: vec![],
            translations: vec![],
            scales: vec![],
        };
        for f in 0..frames {
            for (j, r) in rest.iter().enumerate() {
                let (t, q) = if j == 0 {
                    (step * f as f32, Quat::from_rotation_y(turn_rad * f as f32))
                } else {
                    (r.translation, Quat::from_rotation_x(0.1 * f as f32))
                };
                clip.translations.push(t);
                clip.rotations.push(q);
                clip.scales.push(Vec3::ONE);
            }
        }
        clip
    }

    #[test]
    fn projection_puts_the_target_in_the_middle() {
        let cam = Camera::default();
        let m = cam.clip_from_model(2.0);
        let p = cam
            .project(
                &m,
                cam.target,
                Vec2::new(10.0, 20.0),
                Vec2::new(200.0, 100.0),
            )
            .unwrap();
        assert!((p - Vec2::new(110.0, 70.0)).length() < 1e-3, "{p}");
        // A point above the target is drawn higher (smaller y).
        let up = cam
            .project(
                &m,
                cam.target + Vec3::Y,
                Vec2::ZERO,
                Vec2::new(200.0, 100.0),
            )
            .unwrap();
        assert!(up.y < 50.0);
        // Behind the eye: not drawn.
        let behind = cam.eye() + (cam.eye() - cam.target);
        assert!(cam.project(&m, behind, Vec2::ZERO, Vec2::ONE).is_none());
    }

    #[test]
    fn camera_controls() {
        let mut cam = Camera::default();
        cam.orbit(Vec2::new(0.0, 1e6));
        assert!(cam.pitch_rad <= MAX_PITCH_RAD);
        let d = cam.distance;
        cam.zoom(2.0);
        assert!((cam.distance - d / 2.0).abs() < 1e-3);
        cam.zoom(f32::NAN);
        assert!(cam.distance.is_finite());
        let t = cam.target;
        cam.pan(Vec2::new(10.0, 0.0), 100.0);
        assert!((cam.target - t).length() > 0.0);
        cam.frame(Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, 1.0));
        assert_eq!(cam.target, Vec3::new(0.0, 1.0, 0.0));
        // The framed box's corners project inside the view.
        let m = cam.clip_from_model(1.0);
        for c in [Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, 1.0)] {
            let p = cam.project(&m, c, Vec2::ZERO, Vec2::splat(100.0)).unwrap();
            assert!(p.x > 0.0 && p.x < 100.0 && p.y > 0.0 && p.y < 100.0, "{p}");
        }
        cam.set_view(ViewDir::Top);
        assert!(cam.eye().y > cam.target.y);
    }

    #[test]
    fn blend_weight_zero_and_one_give_the_inputs() {
        let a = chain_clip(5, Vec3::X, 0.0);
        let b = chain_clip(5, Vec3::Z * 2.0, 0.3);
        let s = SampleSettings::clamped(RotationInterp::Slerp);
        let mut out = PoseBuffers::default();
        let mut ref_a = PoseBuffers::default();
        let mut ref_b = PoseBuffers::default();
        sample_model(&a, 0.25, &s, &mut ref_a).unwrap();
        sample_model(&b, 0.1, &s, &mut ref_b).unwrap();
        blend_model(&a, 0.25, &b, 0.1, &s, 0.0, None, None, &mut out).unwrap();
        for (x, y) in out.model.iter().zip(&ref_a.model) {
            assert!((x.translation - y.translation).length() < 1e-5);
        }
        blend_model(&a, 0.25, &b, 0.1, &s, 1.0, None, None, &mut out).unwrap();
        for (x, y) in out.model.iter().zip(&ref_b.model) {
            assert!((x.translation - y.translation).length() < 1e-5);
        }
        // Upper body mask: the leg follows A, the head follows B.
        let mask = build_mask(&a, MaskKind::UpperBody).unwrap().unwrap();
        assert_eq!(mask, vec![0.0, 1.0, 1.0, 0.0]);
        let lower = build_mask(&a, MaskKind::LowerBody).unwrap().unwrap();
        assert_eq!(lower, vec![1.0, 0.0, 0.0, 1.0]);
        assert!(build_mask(&a, MaskKind::Subtree(9)).is_err());
        blend_model(&a, 0.25, &b, 0.1, &s, 1.0, Some(&mask), None, &mut out).unwrap();
        let mut local = vec![Transform::IDENTITY; 4];
        sample_clip(&a, 0.25, &s, &mut local).unwrap();
        assert!((out.local[0].translation - local[0].translation).length() < 1e-6);
        assert!((out.local[3].rotation.dot(local[3].rotation)).abs() > 0.99999);
        // Aligned roots: B's root moves onto A's on the ground, keeps its height.
        blend_model(&a, 0.25, &b, 0.1, &s, 1.0, None, Some(0), &mut out).unwrap();
        let (ra, rb) = (ref_a.model[0].translation, ref_b.model[0].translation);
        assert!((out.model[0].translation - Vec3::new(ra.x, rb.y, ra.z)).length() < 1e-5);
    }

    #[test]
    fn best_match_finds_the_exact_frame() {
        let b = chain_clip(20, Vec3::X, 0.1);
        let track = RootMotionTrack::new(&b, 0).unwrap();
        let (pos, heading) = (track.positions[7], track.headings[7]);
        for bias in [0.0, 0.5, 1.0] {
            assert_eq!(best_match_frame(pos, heading, &track, bias).unwrap().0, 7);
        }
        // Facing only: any frame with the same heading would do; position only: nearest position.
        let p = track.positions[12] + Vec3::Y * 0.01;
        assert_eq!(best_match_frame(p, 99.0, &track, 1.0).unwrap().0, 12);
    }

    #[test]
    fn lerp_trajectory_is_shorter_for_perpendicular_motion() {
        let a = chain_clip(11, Vec3::X, 0.0);
        let b = chain_clip(11, Vec3::Z, 0.0);
        let ta = RootMotionTrack::new(&a, 0).unwrap();
        let tb = RootMotionTrack::new(&b, 0).unwrap();
        let tr = blended_trajectories(&ta, &tb, TimeMap::IDENTITY, 0.5, 0.5).unwrap();
        let len = |v: &[Vec3]| v.windows(2).map(|w| (w[1] - w[0]).length()).sum::<f32>();
        assert!((len(&tr.a) - 10.0).abs() < 1e-3);
        assert!((len(&tr.lerp) - 10.0 * std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-2);
        assert!((len(&tr.nlerp) - 10.0).abs() < 1e-2);
        assert!((len(&tr.slerp) - 10.0).abs() < 1e-2);
        assert_eq!(tr.playhead_index, 5);
    }

    #[test]
    fn time_maps_and_helpers() {
        assert_eq!(TimeMap::normalized(2.0, 4.0).apply(1.0), 2.0);
        assert_eq!(TimeMap::aligned(1.0, 3.0).apply(1.5), 3.5);
        let c = chain_clip(4, Vec3::ZERO, 0.0);
        assert_eq!(motion_joint(&c), 1);
        assert_eq!(motion_joint(&chain_clip(4, Vec3::X, 0.0)), 0);
        let curve = rotation_curve_deg(&c, 1);
        assert_eq!(curve[0].len(), 4);
        assert!((curve[0][3] - 0.3f32.to_degrees()).abs() < 1e-3);
        assert!(rotation_curve_deg(&c, 40)[0].is_empty());
        let pts = [Some(Vec2::ZERO), None, Some(Vec2::new(5.0, 0.0))];
        assert_eq!(pick_joint(&pts, Vec2::new(4.0, 0.0), 3.0), Some(2));
        assert_eq!(pick_joint(&pts, Vec2::new(40.0, 0.0), 3.0), None);
        assert_eq!(
            bounds(&[Vec3::ONE, -Vec3::ONE]),
            Some((-Vec3::ONE, Vec3::ONE))
        );
    }
}
