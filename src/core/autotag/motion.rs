//! Model-space joint positions and rotations of every frame of a clip, in centimetres, computed once
//! by the animation core's forward kinematics and shared by every generator.

use glam::{Quat, Vec3};

use crate::core::anim::{Clip, Transform, local_to_model};

use super::AutotagError;

/// Model-space transforms of every joint at every frame, frame-major like the clip: joint `j` at
/// frame `f` is index `f * joints + j`. Positions are in centimetres (file units times
/// [`Clip::unit_cm`]); Y is up.
#[derive(Debug, Clone, PartialEq)]
pub struct Motion {
    pub joints: usize,
    pub frames: usize,
    pub fps: f32,
    pub positions_cm: Vec<Vec3>,
    pub rotations: Vec<Quat>,
}

impl Motion {
    /// Runs forward kinematics on every frame. Fails (naming the clip) on an invalid clip: bad
    /// track lengths, a non-finite value, a non-positive rate or unit.
    pub fn new(clip: &Clip) -> Result<Self, AutotagError> {
        let bad = |message: String| AutotagError::InvalidClip {
            clip: clip.name.clone(),
            message,
        };
        clip.validate().map_err(bad)?;
        if !(clip.unit_cm.is_finite() && clip.unit_cm > 0.0) {
            return Err(bad(format!(
                "centimetres per unit must be positive, found {}",
                clip.unit_cm
            )));
        }
        let n = clip.joint_count();
        // Every signal reads a joint (the travelling root is joint 0 at least).
        if n == 0 {
            return Err(bad(
                "nothing to measure: expected at least one joint, found none".to_owned(),
            ));
        }
        let total = n * clip.frame_count;
        let mut local = vec![Transform::IDENTITY; n];
        let mut model = vec![Transform::IDENTITY; n];
        let mut positions_cm = Vec::with_capacity(total);
        let mut rotations = Vec::with_capacity(total);
        for f in 0..clip.frame_count {
            clip.copy_pose(f, &mut local);
            local_to_model(&clip.skeleton, &local, &mut model).map_err(|e| bad(e.to_string()))?;
            positions_cm.extend(model.iter().map(|m| m.translation * clip.unit_cm));
            rotations.extend(model.iter().map(|m| m.rotation));
        }
        Ok(Self {
            joints: n,
            frames: clip.frame_count,
            fps: clip.fps,
            positions_cm,
            rotations,
        })
    }

    /// Position of joint `j` at frame `f`, cm.
    #[inline]
    pub fn at(&self, f: usize, j: usize) -> Vec3 {
        self.positions_cm[f * self.joints + j]
    }

    /// Model-space rotation of joint `j` at frame `f`.
    #[inline]
    pub fn rotation(&self, f: usize, j: usize) -> Quat {
        self.rotations[f * self.joints + j]
    }

    /// The track of one joint (one position per frame, cm), written into `out`.
    pub fn track(&self, j: usize, out: &mut Vec<Vec3>) {
        out.clear();
        out.extend((0..self.frames).map(|f| self.at(f, j)));
    }
}
