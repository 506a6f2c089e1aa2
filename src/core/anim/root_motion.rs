//! Root motion: the displacement and heading change of a joint (the root, or `Hips` when the root
//! stays at zero) between two times, across loop boundaries; and blending two such deltas.
//!
//! Up is +Y (every supported file is Y-up). A heading is an angle about +Y: the angle of the joint's
//! forward axis projected on the ground plane, measured from +Z towards +X (a left turn for a
//! character facing +Z is positive). The forward axis is the joint's local axis (X, Y or Z) whose
//! model-space direction is the most horizontal on average over the clip, so it works for any rig
//! convention. Headings are unwrapped frame to frame, so turns of more than 180 degrees add up.

use glam::{Quat, Vec3};

use super::clip::Clip;
use super::fk::JobError;
use super::skeleton::Transform;

/// The motion of one joint between two times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RootMotion {
    /// Displacement in model space, in file units, as seen in the clip's own space at `t0`
    /// (within one cycle this is simply `position(t1) - position(t0)`).
    pub translation: Vec3,
    /// The same displacement with the turn since the clip's first frame taken out (rotated by minus
    /// the heading change from frame 0 to `t0`): the displacement as if the character still faced
    /// the way it faces at frame 0. A character controller rotates it by its own heading at the
    /// clip's start plus the turns applied so far.
    pub translation_local: Vec3,
    /// Heading change about +Y, in radians (positive = counter-clockwise seen from above).
    pub heading_rad: f32,
}

/// Per-frame model-space position and unwrapped heading of one joint of a clip, built once; root
/// motion queries on it cost O(log k) for k loop cycles.
#[derive(Debug, Clone, PartialEq)]
pub struct RootMotionTrack {
    /// The joint whose motion is tracked.
    pub joint: usize,
    /// Frames per second of the clip.
    pub fps: f32,
    /// Model-space position per frame (file units).
    pub positions: Vec<Vec3>,
    /// Unwrapped heading per frame, radians.
    pub headings: Vec<f32>,
}

fn heading_of(v: Vec3) -> Option<f32> {
    let h = Vec3::new(v.x, 0.0, v.z);
    (h.length_squared() > 1e-12).then(|| v.x.atan2(v.z))
}

fn wrap_pi(a: f32) -> f32 {
    let two_pi = std::f32::consts::TAU;
    let mut a = (a + std::f32::consts::PI).rem_euclid(two_pi) - std::f32::consts::PI;
    if a <= -std::f32::consts::PI {
        a += two_pi;
    }
    a
}

impl RootMotionTrack {
    /// Builds the track of `joint` by forward kinematics of its chain at every frame.
    pub fn new(clip: &Clip, joint: usize) -> Result<Self, JobError> {
        let n = clip.joint_count();
        if joint >= n {
            return Err(JobError::NoSuchJoint { joint, joints: n });
        }
        let chain = clip
            .skeleton
            .chain_to(joint)
            .ok_or(JobError::BadParent { joint })?;
        let total = clip.frame_count.saturating_mul(n);
        if clip.rotations.len() != total
            || clip.translations.len() != total
            || clip.scales.len() != total
        {
            return Err(JobError::BufferLength {
                what: "clip tracks",
                expected: total,
                found: clip.rotations.len(),
            });
        }
        if !(clip.fps.is_finite() && clip.fps > 0.0) {
            return Err(JobError::BadParameter(format!(
                "clip fps must be positive, found {}",
                clip.fps
            )));
        }
        let mut rotations: Vec<Quat> = Vec::with_capacity(clip.frame_count);
        let mut positions = Vec::with_capacity(clip.frame_count);
        for f in 0..clip.frame_count {
            let mut acc = Transform::IDENTITY;
            for &j in &chain {
                let k = f * n + j;
                acc = acc.mul_transform(&Transform {
                    translation: clip.translations[k],
                    rotation: clip.rotations[k],
                    scale: clip.scales[k],
                });
            }
            positions.push(acc.translation);
            rotations.push(acc.rotation);
        }
        // The most horizontal local axis on average is the forward axis.
        // Z first: on ties (e.g. an identity rotation) forward is +Z.
        let axes = [Vec3::Z, Vec3::X, Vec3::Y];
        let mut best = (Vec3::Z, -1.0f32);
        for axis in axes {
            let score: f32 = rotations
                .iter()
                .map(|q| {
                    let v = *q * axis;
                    (v.x * v.x + v.z * v.z).sqrt()
                })
                .sum();
            if score > best.1 * 1.000_1 + 1e-6 {
                best = (axis, score);
            }
        }
        let forward = best.0;
        let mut headings = Vec::with_capacity(rotations.len());
        let mut prev: Option<f32> = None;
        for q in &rotations {
            let h = match (heading_of(*q * forward), prev) {
                (Some(raw), Some(p)) => p + wrap_pi(raw - p),
                (Some(raw), None) => raw,
                (None, Some(p)) => p,
                (None, None) => 0.0,
            };
            headings.push(h);
            prev = Some(h);
        }
        Ok(Self {
            joint,
            fps: clip.fps,
            positions,
            headings,
        })
    }

    /// Loop period in seconds, `(frames - 1) / fps`.
    pub fn duration_s(&self) -> f64 {
        if self.positions.len() < 2 {
            0.0
        } else {
            (self.positions.len() - 1) as f64 / f64::from(self.fps)
        }
    }

    /// Position and heading at a time inside `[0, duration]` (linear between frames).
    fn at_local(&self, u: f64) -> (Vec3, f32) {
        let last = self.positions.len() - 1;
        let x = (u * f64::from(self.fps)).clamp(0.0, last as f64);
        let f0 = (x.floor() as usize).min(last);
        let f1 = (f0 + 1).min(last);
        let a = (x - f0 as f64) as f32;
        (
            self.positions[f0].lerp(self.positions[f1], a),
            self.headings[f0] + (self.headings[f1] - self.headings[f0]) * a,
        )
    }

    /// Splits a time into a cycle index and a local time (loop) or clamps it (no loop).
    fn split(&self, t: f64, looping: bool) -> (i64, f64) {
        let d = self.duration_s();
        if d <= 0.0 {
            return (0, 0.0);
        }
        if !looping {
            return (0, t.clamp(0.0, d));
        }
        let k = (t / d).floor();
        let u = (t - k * d).clamp(0.0, d);
        (k as i64, u)
    }

    /// The motion between `t0` and `t1` (seconds; `t1 < t0` plays backwards). With `looping`, times
    /// outside `[0, duration]` continue through repeated cycles: each new cycle starts where the
    /// previous one ended, turned by the heading change of one cycle. Without it, times clamp.
    pub fn delta(&self, t0: f64, t1: f64, looping: bool) -> Result<RootMotion, JobError> {
        if !(t0.is_finite() && t1.is_finite()) {
            return Err(JobError::BadParameter(String::from("times must be finite")));
        }
        if self.positions.is_empty() {
            return Ok(RootMotion {
                translation: Vec3::ZERO,
                translation_local: Vec3::ZERO,
                heading_rad: 0.0,
            });
        }
        let (k0, u0) = self.split(t0, looping);
        let (k1, u1) = self.split(t1, looping);
        let (p0, h0) = self.at_local(u0);
        let (p1, h1) = self.at_local(u1);
        let last = self.positions.len() - 1;
        // One cycle maps the clip's start onto its end: p -> p_end + R(dh) (p - p_start).
        let dh = self.headings[last] - self.headings[0];
        let cycle = Planar {
            angle: dh,
            offset: self.positions[last] - Quat::from_rotation_y(dh) * self.positions[0],
        };
        // Position in the world of cycle k is cycle^k(p); express relative to cycle k0.
        let rel = cycle.pow(k1 - k0);
        let world1 = rel.apply(p1);
        let translation = world1 - p0;
        let heading_rad = (h1 + (k1 - k0) as f32 * dh) - h0;
        let translation_local = Quat::from_rotation_y(-(h0 - self.headings[0])) * translation;
        Ok(RootMotion {
            translation,
            translation_local,
            heading_rad,
        })
    }
}

/// `p -> R_y(angle) p + offset`.
#[derive(Debug, Clone, Copy)]
struct Planar {
    angle: f32,
    offset: Vec3,
}

impl Planar {
    const IDENTITY: Self = Self {
        angle: 0.0,
        offset: Vec3::ZERO,
    };

    fn apply(&self, p: Vec3) -> Vec3 {
        Quat::from_rotation_y(self.angle) * p + self.offset
    }

    /// `self ∘ other` (apply `other` first).
    fn then_after(&self, other: &Self) -> Self {
        Self {
            angle: self.angle + other.angle,
            offset: Quat::from_rotation_y(self.angle) * other.offset + self.offset,
        }
    }

    fn inverse(&self) -> Self {
        Self {
            angle: -self.angle,
            offset: -(Quat::from_rotation_y(-self.angle) * self.offset),
        }
    }

    /// `self^k` by repeated squaring (negative `k` inverts).
    fn pow(&self, k: i64) -> Self {
        let mut base = if k < 0 { self.inverse() } else { *self };
        let mut e = k.unsigned_abs();
        let mut acc = Self::IDENTITY;
        while e > 0 {
            if e & 1 == 1 {
                acc = acc.then_after(&base);
            }
            base = base.then_after(&base);
            e >>= 1;
        }
        acc
    }
}

/// The motion of `joint` between `t0` and `t1`; see [`RootMotionTrack::delta`]. Builds the track
/// each call: keep a [`RootMotionTrack`] when querying every update.
pub fn root_motion(
    clip: &Clip,
    joint: usize,
    t0: f64,
    t1: f64,
    looping: bool,
) -> Result<RootMotion, JobError> {
    RootMotionTrack::new(clip, joint)?.delta(t0, t1, looping)
}

/// How [`blend_root_motion`] combines two displacement vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RootMotionBlend {
    /// Componentwise lerp: two equal-length deltas 90 degrees apart blend to `cos 45 = 0.707` of
    /// the length at weight 0.5 (the character slows down in the middle of a blend).
    Lerp,
    /// Lerp then rescale to the lerped length: keeps the speed, direction not at constant angular
    /// speed.
    Nlerp,
    /// Rotate from one direction to the other at constant angular speed, length lerped.
    #[default]
    Slerp,
}

/// Blends two root-motion deltas: weight 0 gives `a`, 1 gives `b`. Headings lerp; translations
/// (both `translation` and `translation_local`) use `how`.
pub fn blend_root_motion(
    a: &RootMotion,
    b: &RootMotion,
    weight: f32,
    how: RootMotionBlend,
) -> RootMotion {
    RootMotion {
        translation: blend_vec(a.translation, b.translation, weight, how),
        translation_local: blend_vec(a.translation_local, b.translation_local, weight, how),
        heading_rad: a.heading_rad + (b.heading_rad - a.heading_rad) * weight,
    }
}

/// Blends two displacement vectors (see [`RootMotionBlend`]).
pub fn blend_vec(a: Vec3, b: Vec3, w: f32, how: RootMotionBlend) -> Vec3 {
    let lerp = a.lerp(b, w);
    let (la, lb) = (a.length(), b.length());
    let length = la + (lb - la) * w;
    match how {
        RootMotionBlend::Lerp => lerp,
        RootMotionBlend::Nlerp => {
            if la < 1e-12 || lb < 1e-12 {
                return lerp;
            }
            match lerp.try_normalize() {
                Some(d) => d * length,
                // Opposite directions cancel: no direction to keep; fall back to slerp.
                None => blend_vec(a, b, w, RootMotionBlend::Slerp),
            }
        }
        RootMotionBlend::Slerp => {
            if la < 1e-12 || lb < 1e-12 {
                return lerp;
            }
            let (da, db) = (a / la, b / lb);
            let angle = da.cross(db).length().atan2(da.dot(db));
            let axis = da
                .cross(db)
                .try_normalize()
                .or_else(|| da.cross(Vec3::Y).try_normalize().map(|_| Vec3::Y))
                .unwrap_or_else(|| da.any_orthonormal_vector());
            Quat::from_axis_angle(axis, angle * w) * da * length
        }
    }
}
