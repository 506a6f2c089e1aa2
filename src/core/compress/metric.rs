//! The error metric (ACL's): virtual vertices at `shell_cm` from each joint along its local X and Y
//! axes (and Z when the clip has scale), taken to model space by the original and by the decoded
//! pose; the error of a joint at a frame is the largest distance between the two, in centimetres.

use glam::Vec3;

use crate::core::anim::{Clip, Skeleton, Transform};

/// Local-to-model transforms of one pose (the animation core's forward kinematics). Buffers must
/// hold one transform per joint; they always do here.
pub fn local_to_model(skeleton: &Skeleton, local: &[Transform], model: &mut [Transform]) {
    let done = crate::core::anim::fk::local_to_model(skeleton, local, model);
    debug_assert!(done.is_ok(), "{done:?}");
}

/// Copies frame `f` of a clip into a transform buffer (one per joint).
pub fn clip_pose(clip: &Clip, f: usize, out: &mut [Transform]) {
    let copied = clip.copy_pose(f, out);
    debug_assert!(copied);
}

/// True when any scale in the clip differs from 1: the metric then adds the Z vertex.
pub fn clip_has_scale(clip: &Clip) -> bool {
    clip.scales
        .iter()
        .any(|s| (*s - Vec3::ONE).abs().max_element() > 1e-6)
}

/// The virtual vertices of the metric, in file units.
#[derive(Debug, Clone, Copy)]
pub struct Shell {
    pub vertices: [Vec3; 3],
    pub count: usize,
    /// Centimetres per file unit.
    pub unit_cm: f32,
}

impl Shell {
    pub fn new(shell_cm: f32, unit_cm: f32, has_scale: bool) -> Self {
        let d = shell_cm / unit_cm;
        Self {
            vertices: [Vec3::X * d, Vec3::Y * d, Vec3::Z * d],
            count: if has_scale { 3 } else { 2 },
            unit_cm,
        }
    }

    /// Error of one joint in cm: the largest vertex distance between the two model transforms.
    #[inline]
    pub fn error_cm(&self, original: &Transform, decoded: &Transform) -> f32 {
        let mut worst = 0.0f32;
        for v in &self.vertices[..self.count] {
            let d = original.transform_point(*v) - decoded.transform_point(*v);
            worst = worst.max(d.length_squared());
        }
        worst.sqrt() * self.unit_cm
    }
}

/// Errors of a decoded clip against its original: the report the app shows.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ErrorReport {
    /// Largest error over every joint and frame, cm.
    pub max_error_cm: f32,
    /// Mean over every (joint, frame) of the joint's error, cm.
    pub mean_error_cm: f32,
    /// 99th percentile over every (joint, frame), cm.
    pub p99_error_cm: f32,
    /// Where the largest error is.
    pub worst: WorstError,
    /// Largest error of each joint over all frames, cm (index = joint).
    pub joint_max_cm: Vec<f32>,
    /// Per-frame error of the joints with the largest errors (up to 4, worst first).
    pub worst_joints: Vec<JointFrameErrors>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorstError {
    pub joint: usize,
    pub joint_name: String,
    pub frame: usize,
    pub error_cm: f32,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct JointFrameErrors {
    pub joint: usize,
    pub joint_name: String,
    /// Error at each frame of the original clip, cm.
    pub frame_error_cm: Vec<f32>,
}

/// How many joints get a per-frame error curve in [`ErrorReport::worst_joints`].
pub const WORST_JOINT_CURVES: usize = 4;

/// Measures the metric between an original clip and a decoder that fills the local pose of any
/// original frame. `decode(frame, out)` must fill `out` (one transform per joint).
pub fn measure(
    original: &Clip,
    shell_cm: f32,
    mut decode: impl FnMut(usize, &mut [Transform]),
) -> ErrorReport {
    let n = original.joint_count();
    let frames = original.frame_count;
    let shell = Shell::new(shell_cm, original.unit_cm, clip_has_scale(original));
    let mut local = vec![Transform::IDENTITY; n];
    let mut model_o = vec![Transform::IDENTITY; n];
    let mut model_d = vec![Transform::IDENTITY; n];
    let mut all = vec![0.0f32; n * frames]; // joint-major: all[j * frames + f]
    for f in 0..frames {
        clip_pose(original, f, &mut local);
        local_to_model(&original.skeleton, &local, &mut model_o);
        decode(f, &mut local);
        local_to_model(&original.skeleton, &local, &mut model_d);
        for j in 0..n {
            all[j * frames + f] = shell.error_cm(&model_o[j], &model_d[j]);
        }
    }
    summarise(original, &all)
}

fn summarise(original: &Clip, all: &[f32]) -> ErrorReport {
    let n = original.joint_count();
    let frames = original.frame_count.max(1);
    let mut joint_max_cm = vec![0.0f32; n];
    let mut worst = WorstError {
        joint: 0,
        joint_name: original.skeleton.names.first().cloned().unwrap_or_default(),
        frame: 0,
        error_cm: 0.0,
    };
    let mut sum = 0.0f64;
    for j in 0..n {
        for f in 0..original.frame_count {
            let e = all[j * frames + f];
            sum += f64::from(e);
            if e > joint_max_cm[j] {
                joint_max_cm[j] = e;
            }
            if e > worst.error_cm {
                worst = WorstError {
                    joint: j,
                    joint_name: original.skeleton.names[j].clone(),
                    frame: f,
                    error_cm: e,
                };
            }
        }
    }
    let count = all.len().max(1);
    let mut sorted = all.to_vec();
    sorted.sort_by(f32::total_cmp);
    let p99 = if sorted.is_empty() {
        0.0
    } else {
        sorted[((sorted.len() - 1) as f64 * 0.99).round() as usize]
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| joint_max_cm[b].total_cmp(&joint_max_cm[a]));
    let worst_joints = order
        .iter()
        .take(WORST_JOINT_CURVES)
        .map(|&j| JointFrameErrors {
            joint: j,
            joint_name: original.skeleton.names[j].clone(),
            frame_error_cm: all[j * frames..j * frames + original.frame_count].to_vec(),
        })
        .collect();
    ErrorReport {
        max_error_cm: worst.error_cm,
        mean_error_cm: (sum / count as f64) as f32,
        p99_error_cm: p99,
        worst,
        joint_max_cm,
        worst_joints,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn rotation_error_at_shell_distance() {
        // A 1 milliradian error on a root rotation moves the vertex 3 cm away by 3e-3 cm.
        let shell = Shell::new(3.0, 1.0, false);
        let a = Transform::IDENTITY;
        let b = Transform {
            rotation: Quat::from_rotation_z(1e-3),
            ..a
        };
        let e = shell.error_cm(&a, &b);
        assert!((e - 3e-3).abs() < 1e-5, "{e}");
        // In a clip whose unit is 2 cm the same rotation is the same error in cm.
        let shell2 = Shell::new(3.0, 2.0, false);
        assert!((shell2.error_cm(&a, &b) - 3e-3).abs() < 1e-5);
        // A translation of 0.5 units = 1 cm.
        let c = Transform {
            translation: Vec3::new(0.5, 0.0, 0.0),
            ..a
        };
        assert!((shell2.error_cm(&a, &c) - 1.0).abs() < 1e-6);
    }
}
