//! Sampling a clip at any time: two neighbouring frames, translation/scale lerp, rotation nlerp or
//! slerp on the shortest path, with pre- and post-infinity modes.

use glam::{Quat, Vec3};

use super::clip::Clip;
use super::fk::{JobError, check_len};
use super::skeleton::Transform;

/// What happens before the start (pre-infinity) or after the end (post-infinity) of a clip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Extrapolation {
    /// Hold the first (or last) frame.
    #[default]
    Clamp,
    /// Repeat the clip with period [`Clip::duration_s`]. After the end, time wraps into
    /// `(0, duration]` (so `k * duration` shows the last frame); before the start into
    /// `[0, duration)`. A looping clip's last frame should equal its first.
    Loop,
}

/// How rotations are interpolated. Both take the shortest path (the second quaternion is negated
/// when the dot product is negative).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RotationInterp {
    /// Normalised linear interpolation: cheap, slightly uneven angular speed.
    #[default]
    Nlerp,
    /// Spherical linear interpolation: constant angular speed.
    Slerp,
}

/// Settings of [`sample_clip`]. Default: clamp on both sides, nlerp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleSettings {
    /// Before time 0.
    pub pre: Extrapolation,
    /// After [`Clip::duration_s`].
    pub post: Extrapolation,
    pub rotation: RotationInterp,
}

impl SampleSettings {
    /// Clamp on both sides with the given rotation interpolation.
    pub const fn clamped(rotation: RotationInterp) -> Self {
        Self {
            pre: Extrapolation::Clamp,
            post: Extrapolation::Clamp,
            rotation,
        }
    }

    /// Loop on both sides with the given rotation interpolation.
    pub const fn looped(rotation: RotationInterp) -> Self {
        Self {
            pre: Extrapolation::Loop,
            post: Extrapolation::Loop,
            rotation,
        }
    }
}

/// Where a time falls in a clip: sample `frame0` and `frame1` and mix them by `alpha` in `[0, 1)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FramePosition {
    pub frame0: usize,
    pub frame1: usize,
    pub alpha: f32,
}

/// Maps `time_s` to two neighbouring frames of a clip of `frame_count` frames at `fps`, applying the
/// infinity modes. Returns `None` for a clip without frames or a non-finite time or rate.
///
/// Frame `f` is at `f / fps`; the duration is `(frame_count - 1) / fps`. A time within 1e-6 frames
/// of a frame time snaps to that frame, so sampling at a frame time returns that frame exactly.
pub fn frame_position(
    frame_count: usize,
    fps: f32,
    time_s: f64,
    settings: &SampleSettings,
) -> Option<FramePosition> {
    if frame_count == 0 || !time_s.is_finite() || !(fps.is_finite() && fps > 0.0) {
        return None;
    }
    let last = frame_count - 1;
    let fps = f64::from(fps);
    let mut x = time_s * fps; // position in frames
    let period = last as f64;
    if period == 0.0 {
        return Some(FramePosition {
            frame0: 0,
            frame1: 0,
            alpha: 0.0,
        });
    }
    let snap = |x: f64| {
        let r = x.round();
        if (x - r).abs() < 1e-6 { r } else { x }
    };
    x = snap(x);
    if x < 0.0 {
        x = match settings.pre {
            Extrapolation::Clamp => 0.0,
            Extrapolation::Loop => snap(x.rem_euclid(period)),
        };
    } else if x > period {
        x = match settings.post {
            Extrapolation::Clamp => period,
            Extrapolation::Loop => {
                // Wrap into (0, period]: the end of each cycle shows the last frame.
                let r = snap(x.rem_euclid(period));
                if r == 0.0 { period } else { r }
            }
        };
    }
    if x >= period {
        // Exactly the end (clamped or looped back onto it).
        return Some(FramePosition {
            frame0: last,
            frame1: last,
            alpha: 0.0,
        });
    }
    let f0 = (x.floor().max(0.0) as usize).min(last);
    let f1 = (f0 + 1).min(last);
    let alpha = ((x - f0 as f64) as f32).clamp(0.0, 1.0);
    Some(FramePosition {
        frame0: f0,
        frame1: f1,
        alpha,
    })
}

/// Normalised lerp on the shortest path.
#[inline]
pub fn nlerp(a: Quat, b: Quat, t: f32) -> Quat {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    let q = a * (1.0 - t) + b * t;
    let len2 = q.length_squared();
    if len2 > 0.0 {
        q * len2.sqrt().recip()
    } else {
        a
    }
}

/// Spherical lerp on the shortest path, constant angular speed.
///
/// With `w` the S3 angle between the inputs (`cos w = |a . b|`), the weights are
/// `sin((1 - t) w) / sin w` and `sin(t w) / sin w`. For `cos w >= 0.8` (rotations up to 73.7 degrees
/// apart, which covers neighbouring frames of any real clip) they are evaluated without
/// trigonometry by the series `sin(t w) / sin w = t * sum_i b_i (cos w - 1)^i`,
/// `b_i = b_(i-1) (t^2 - i^2) / (i (2 i + 1))`, truncated after 7 terms (error below 3e-8, under
/// f32 precision). Larger angles use `w = 2 atan2(|a - b|, |a + b|)` and `sin`.
#[inline]
pub fn slerp(a: Quat, b: Quat, t: f32) -> Quat {
    let mut d = a.dot(b);
    let b = if d < 0.0 {
        d = -d;
        -b
    } else {
        b
    };
    if d >= 0.8 {
        let wa = sin_ratio(1.0 - t, d);
        let wb = sin_ratio(t, d);
        return a * wa + b * wb;
    }
    // For unit quaternions at S3 angle w: |a - b| = 2 sin(w/2) and |a + b| = 2 cos(w/2).
    let angle = 2.0 * (a - b).length().atan2((a + b).length());
    let s = angle.sin();
    let wa = ((1.0 - t) * angle).sin() / s;
    let wb = (t * angle).sin() / s;
    (a * wa + b * wb).normalize()
}

/// `sin(t w) / sin w` from `x = cos w` for `x` in `[0.8, 1]` (see [`slerp`]).
#[inline(always)]
fn sin_ratio(t: f32, x: f32) -> f32 {
    let xm1 = x - 1.0;
    let t2 = t * t;
    let mut acc = 1.0f32;
    // Coefficients u_i = 1 / (i (2i + 1)), v_i = i / (2i + 1), innermost term first.
    const U: [f32; 7] = [
        1.0 / 3.0,
        1.0 / 10.0,
        1.0 / 21.0,
        1.0 / 36.0,
        1.0 / 55.0,
        1.0 / 78.0,
        1.0 / 105.0,
    ];
    const V: [f32; 7] = [
        1.0 / 3.0,
        2.0 / 5.0,
        3.0 / 7.0,
        4.0 / 9.0,
        5.0 / 11.0,
        6.0 / 13.0,
        7.0 / 15.0,
    ];
    for i in (0..7).rev() {
        acc = 1.0 + (U[i] * t2 - V[i]) * xm1 * acc;
    }
    t * acc
}

/// Interpolates rotations with the chosen method.
#[inline]
pub fn interp_rotation(a: Quat, b: Quat, t: f32, how: RotationInterp) -> Quat {
    match how {
        RotationInterp::Nlerp => nlerp(a, b, t),
        RotationInterp::Slerp => slerp(a, b, t),
    }
}

/// Interpolates two local transforms: translation and scale lerp, rotation per `how`.
#[inline]
pub fn interp_transform(a: &Transform, b: &Transform, t: f32, how: RotationInterp) -> Transform {
    Transform {
        translation: a.translation.lerp(b.translation, t),
        rotation: interp_rotation(a.rotation, b.rotation, t, how),
        scale: a.scale.lerp(b.scale, t),
    }
}

/// Samples the local pose of `clip` at `time_s` into `out` (one transform per joint). A clip without
/// frames gives the skeleton's rest pose.
pub fn sample_clip(
    clip: &Clip,
    time_s: f64,
    settings: &SampleSettings,
    out: &mut [Transform],
) -> Result<(), JobError> {
    let n = clip.joint_count();
    check_len("output pose", n, out.len())?;
    let total = clip.frame_count.saturating_mul(n);
    check_len("clip rotations", total, clip.rotations.len())?;
    check_len("clip translations", total, clip.translations.len())?;
    check_len("clip scales", total, clip.scales.len())?;
    if !time_s.is_finite() {
        return Err(JobError::BadParameter(format!(
            "sample time must be finite, found {time_s}"
        )));
    }
    let Some(pos) = frame_position(clip.frame_count, clip.fps, time_s, settings) else {
        check_len("skeleton rest pose", n, clip.skeleton.rest.len())?;
        out.copy_from_slice(&clip.skeleton.rest);
        return Ok(());
    };
    let (o0, o1) = (pos.frame0 * n, pos.frame1 * n);
    let r0 = &clip.rotations[o0..o0 + n];
    let r1 = &clip.rotations[o1..o1 + n];
    let t0 = &clip.translations[o0..o0 + n];
    let t1 = &clip.translations[o1..o1 + n];
    let s0 = &clip.scales[o0..o0 + n];
    let s1 = &clip.scales[o1..o1 + n];
    let a = pos.alpha;
    if a == 0.0 {
        for (j, o) in out.iter_mut().enumerate() {
            *o = Transform {
                translation: t0[j],
                rotation: r0[j],
                scale: s0[j],
            };
        }
        return Ok(());
    }
    // One loop per rotation method (not a choice per joint), so that how fast the loop is does
    // not hang on whether the compiler inlines `slerp` into it: this loop is the uncompressed
    // clip that the compressed decoder's benchmarks are measured against.
    let (r, t, s) = ([r0, r1], [t0, t1], [s0, s1]);
    match settings.rotation {
        RotationInterp::Nlerp => blend_frames(r, t, s, a, out, nlerp),
        RotationInterp::Slerp => blend_frames(r, t, s, a, out, slerp),
    }
    Ok(())
}

/// Two frames' rotations, translations and scales blended by `a` into `out`, rotations by
/// `rotate` (one copy of the loop per method).
#[inline(always)]
fn blend_frames(
    [r0, r1]: [&[Quat]; 2],
    [t0, t1]: [&[Vec3]; 2],
    [s0, s1]: [&[Vec3]; 2],
    a: f32,
    out: &mut [Transform],
    rotate: impl Fn(Quat, Quat, f32) -> Quat,
) {
    for (j, o) in out.iter_mut().enumerate() {
        *o = Transform {
            translation: t0[j].lerp(t1[j], a),
            rotation: rotate(r0[j], r1[j], a),
            scale: lerp_scale(s0[j], s1[j], a),
        };
    }
}

#[inline]
fn lerp_scale(a: Vec3, b: Vec3, t: f32) -> Vec3 {
    if a == b { a } else { a.lerp(b, t) }
}
