//! Synthetic clips for tests, benchmarks and demos: a humanoid-like tree with smooth motion, a
//! moving root, constant and rest-pose tracks, and a little deterministic noise (like mocap).
// Parallel per-joint / per-component arrays are indexed together; index loops read clearer.
#![allow(clippy::needless_range_loop)]

use glam::{EulerRot, Quat, Vec3};

use crate::core::anim::{Clip, Skeleton, Transform};

use crate::core::rng::SplitMix64 as Rng;

/// A clip of `joints` joints (>= 1) and `frames` frames at `fps`, in centimetres.
///
/// Joint 0 is a root that translates and turns; the others form five chains (spine and four limbs)
/// with bone lengths of 5 to 15 cm. Every fifth joint keeps its rest rotation (a rest-pose track),
/// every seventh holds a constant non-rest rotation, the rest move with two sines of different
/// frequencies plus noise of about 0.02 degrees.
pub fn synthetic_clip(joints: usize, frames: usize, fps: f32, seed: u64) -> Clip {
    let joints = joints.max(1);
    let mut rng = Rng(seed);
    let mut names = Vec::with_capacity(joints);
    let mut parents = Vec::with_capacity(joints);
    let mut rest = Vec::with_capacity(joints);
    for j in 0..joints {
        names.push(format!("joint_{j}"));
        if j == 0 {
            parents.push(None);
            rest.push(Transform {
                translation: Vec3::new(0.0, 90.0, 0.0),
                ..Transform::IDENTITY
            });
            continue;
        }
        // Five chains hanging off the root: joint j continues the chain of j - 5 (or the root).
        let parent = j.saturating_sub(5);
        parents.push(Some(parent));
        let len = 5.0 + 10.0 * (0.5 + 0.5 * rng.signed());
        let dir = Vec3::new(rng.signed() * 0.3, -1.0, rng.signed() * 0.3).normalize();
        rest.push(Transform {
            translation: dir * len,
            ..Transform::IDENTITY
        });
    }
    let mut rotations = Vec::with_capacity(joints * frames);
    let mut translations = Vec::with_capacity(joints * frames);
    let mut scales = Vec::with_capacity(joints * frames);
    let params: Vec<[f32; 6]> = (0..joints)
        .map(|_| {
            [
                0.5 + 1.5 * (0.5 + 0.5 * rng.signed()),
                0.2 + 0.6 * (0.5 + 0.5 * rng.signed()),
                rng.signed() * 3.0,
                rng.signed() * 0.4,
                rng.signed() * 0.3,
                rng.signed() * 0.3,
            ]
        })
        .collect();
    let mut prev: Vec<Quat> = vec![Quat::IDENTITY; joints];
    for f in 0..frames {
        let t = f as f32 / fps;
        for j in 0..joints {
            let [freq, amp, phase, bx, by, bz] = params[j];
            let q = if j % 5 == 4 && j != 0 {
                Quat::IDENTITY
            } else if j % 7 == 6 {
                Quat::from_euler(EulerRot::ZYX, bx, by, bz)
            } else {
                let a = amp * (freq * std::f32::consts::TAU * t + phase).sin();
                let b = 0.3 * amp * (2.3 * freq * std::f32::consts::TAU * t).cos();
                let noise = 0.0004;
                Quat::from_euler(
                    EulerRot::ZYX,
                    bz + a + noise * rng.signed(),
                    by + b + noise * rng.signed(),
                    bx + 0.5 * a + noise * rng.signed(),
                )
            };
            let q = if q.dot(prev[j]) < 0.0 { -q } else { q };
            prev[j] = q;
            rotations.push(q);
            let tr = if j == 0 {
                Vec3::new(
                    30.0 * t,
                    90.0 + 3.0 * (4.0 * t).sin(),
                    5.0 * (1.3 * t).sin(),
                )
            } else {
                rest[j].translation
            };
            translations.push(tr);
            scales.push(Vec3::ONE);
        }
    }
    Clip {
        name: format!("synthetic_{joints}x{frames}"),
        skeleton: Skeleton::new(names, parents, rest),
        fps,
        frame_count: frames,
        unit_cm: 1.0,
        rotations,
        translations,
        scales,
    }
}
