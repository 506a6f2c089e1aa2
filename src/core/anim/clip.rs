//! Clips: sampled local joint transforms at a fixed frame rate, stored structure-of-arrays.

use glam::{Quat, Vec3};

use super::skeleton::{Skeleton, Transform};

/// An animation clip on a skeleton: `frame_count` poses sampled at `fps`.
///
/// Storage is structure-of-arrays and frame-major: the local rotation of joint `j` at frame `f` is
/// `rotations[f * joints + j]` (likewise translations and scales), so one pose is one contiguous slice.
/// Rotations are unit quaternions kept on the same hemisphere as the previous frame's
/// (`dot >= 0`), so interpolation never takes the long way round.
///
/// Duration is `(frame_count - 1) / fps` seconds: frame `f` is at time `f / fps`, and the last frame
/// is at the end of the clip. A one-frame clip has duration 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Clip {
    pub name: String,
    pub skeleton: Skeleton,
    /// Frames per second (`1 / frame_time`; need not be an integer).
    pub fps: f32,
    /// Number of frames; `rotations.len() == frame_count * skeleton.len()`.
    pub frame_count: usize,
    /// Centimetres per file unit (1.0 for centimetres, 5.644 for the CMU conversions).
    pub unit_cm: f32,
    pub rotations: Vec<Quat>,
    pub translations: Vec<Vec3>,
    pub scales: Vec<Vec3>,
}

impl Clip {
    /// Number of joints.
    #[inline]
    pub fn joint_count(&self) -> usize {
        self.skeleton.len()
    }

    /// The clip with its lengths (rest and animated translations, End Site offsets) in
    /// centimetres: scaled by `unit_cm`, which becomes 1. Rotations and scales do not change.
    pub fn in_centimetres(mut self) -> Clip {
        let k = self.unit_cm;
        if k == 1.0 || !(k.is_finite() && k > 0.0) {
            return self;
        }
        for r in &mut self.skeleton.rest {
            r.translation *= k;
        }
        for e in &mut self.skeleton.end_sites {
            e.offset *= k;
        }
        for t in &mut self.translations {
            *t *= k;
        }
        self.unit_cm = 1.0;
        self
    }

    /// Duration in seconds: `(frame_count - 1) / fps`, 0 for clips of zero or one frame.
    #[inline]
    pub fn duration_s(&self) -> f32 {
        if self.frame_count < 2 || self.fps <= 0.0 {
            0.0
        } else {
            (self.frame_count - 1) as f32 / self.fps
        }
    }

    /// Local rotations of every joint at `frame`.
    #[inline]
    pub fn pose_rotations(&self, frame: usize) -> &[Quat] {
        let n = self.joint_count();
        &self.rotations[frame * n..(frame + 1) * n]
    }

    /// Local translations of every joint at `frame`.
    #[inline]
    pub fn pose_translations(&self, frame: usize) -> &[Vec3] {
        let n = self.joint_count();
        &self.translations[frame * n..(frame + 1) * n]
    }

    /// Local scales of every joint at `frame`.
    #[inline]
    pub fn pose_scales(&self, frame: usize) -> &[Vec3] {
        let n = self.joint_count();
        &self.scales[frame * n..(frame + 1) * n]
    }

    /// Copies the local transforms of every joint at `frame` into `out` (one entry per joint).
    /// Returns `false` (leaving `out` untouched) when `frame` is out of range or `out` has the wrong
    /// length.
    pub fn copy_pose(&self, frame: usize, out: &mut [Transform]) -> bool {
        let n = self.joint_count();
        let end = (frame + 1).saturating_mul(n);
        if frame >= self.frame_count
            || out.len() != n
            || self.rotations.len() < end
            || self.translations.len() < end
            || self.scales.len() < end
        {
            return false;
        }
        let r = &self.rotations[frame * n..end];
        let t = &self.translations[frame * n..end];
        let s = &self.scales[frame * n..end];
        for (j, o) in out.iter_mut().enumerate() {
            *o = Transform {
                translation: t[j],
                rotation: r[j],
                scale: s[j],
            };
        }
        true
    }

    /// A new clip holding frames `[start, stop)` of this one (same skeleton, rate and unit), named
    /// `name`; `None` when the range is empty, runs past the last frame or the tracks are shorter
    /// than `frame_count` says. Used to cut clips by tag ranges before a BVH export.
    pub fn sub_clip(&self, start: usize, stop: usize, name: &str) -> Option<Clip> {
        let n = self.joint_count();
        if start >= stop || stop > self.frame_count {
            return None;
        }
        let (a, b) = (start.checked_mul(n)?, stop.checked_mul(n)?);
        Some(Clip {
            name: name.to_owned(),
            skeleton: self.skeleton.clone(),
            fps: self.fps,
            frame_count: stop - start,
            unit_cm: self.unit_cm,
            rotations: self.rotations.get(a..b)?.to_vec(),
            translations: self.translations.get(a..b)?.to_vec(),
            scales: self.scales.get(a..b)?.to_vec(),
        })
    }

    /// Checks array lengths, finiteness and the skeleton invariants.
    pub fn validate(&self) -> Result<(), String> {
        self.skeleton.validate()?;
        let n = self.frame_count * self.joint_count();
        if self.rotations.len() != n || self.translations.len() != n || self.scales.len() != n {
            return Err(format!(
                "clip '{}': expected {n} samples per track kind ({} frames x {} joints), found {} rotations, {} translations, {} scales",
                self.name,
                self.frame_count,
                self.joint_count(),
                self.rotations.len(),
                self.translations.len(),
                self.scales.len()
            ));
        }
        if !(self.fps.is_finite() && self.fps > 0.0) {
            return Err(format!(
                "clip '{}': fps must be positive, found {}",
                self.name, self.fps
            ));
        }
        let n = self.joint_count().max(1);
        let bad = |what: &str, i: usize| {
            format!(
                "clip '{}': {what} of joint {} at frame {} is not finite",
                self.name,
                i % n,
                i / n
            )
        };
        if let Some(i) = self.rotations.iter().position(|q| !q.is_finite()) {
            return Err(bad("rotation", i));
        }
        if let Some(i) = self.translations.iter().position(|v| !v.is_finite()) {
            return Err(bad("translation", i));
        }
        if let Some(i) = self.scales.iter().position(|v| !v.is_finite()) {
            return Err(bad("scale", i));
        }
        Ok(())
    }
}
