//! Round trips of the segmented codec on synthetic clips: every rotation format and bit width, the
//! automatic mode's guarantee, sampling, per-joint access.

#![allow(clippy::needless_range_loop)] // joints index the clip and the pose together

use taglane::core::anim::Transform;
use taglane::core::compress::synth::synthetic_clip;
use taglane::core::compress::{
    BitRate, CompressSettings, CompressedClip, Preset, RotationFormat, compress,
};

#[test]
fn auto_mode_stays_under_budget() {
    let clip = synthetic_clip(31, 200, 120.0, 7);
    for budget in [0.005f32, 0.01, 0.05] {
        let r = compress(&clip, &CompressSettings::auto(budget)).unwrap();
        println!(
            "budget {budget}: ratio {:.2} max {:.5} worst {:?}",
            r.ratio,
            r.error.max_error_cm,
            (r.error.worst.joint, r.error.worst.frame)
        );
        assert!(
            r.error.max_error_cm <= budget,
            "{} > {budget}",
            r.error.max_error_cm
        );
        assert!(r.ratio > 3.0, "ratio {}", r.ratio);
    }
}

#[test]
fn presets_round_trip() {
    let clip = synthetic_clip(22, 90, 30.0, 3);
    for p in Preset::ALL {
        let r = compress(&clip, &p.settings()).unwrap();
        println!(
            "{:>18}: ratio {:6.2} max {:.5} mean {:.6}",
            p.name(),
            r.ratio,
            r.error.max_error_cm,
            r.error.mean_error_cm
        );
        let back = CompressedClip::from_bytes(r.clip.bytes().to_vec()).unwrap();
        let mut a = vec![Transform::IDENTITY; 22];
        let mut b = vec![Transform::IDENTITY; 22];
        r.clip.sample_pose(0.37, &mut a);
        back.sample_pose(0.37, &mut b);
        assert_eq!(a, b);
    }
}

/// Every rotation format and every bit width, fixed, without elision: each decoded key against the
/// original. Tolerances, with `step = range / (2^w - 1)` the quantisation step of the widest range a
/// component can have (rotations: 2, the [-1, 1] range; translations: the track's clip range):
/// - full quaternion: each component within `step` (half a step of rounding, plus renormalisation);
/// - drop-W: stored components within `step / 2`; the rebuilt one within `4 step` (it is the largest
///   of the segment, so its derivative is bounded by 3 / 0.5 x half a step);
/// - translations: within `step / 2` (+ f32 rounding);
/// - width 32: within 1e-6 (raw float32, renormalised).
#[test]
fn every_encoding_and_width_round_trips_within_its_step() {
    use taglane::core::compress::settings::WIDTHS;
    let clip = synthetic_clip(8, 48, 30.0, 21);
    let n = clip.joint_count();
    // Clip range of every translation component (the root moves; others are constant).
    let mut t_range = 0.0f32;
    for j in 0..n {
        for c in 0..3 {
            let vals: Vec<f32> = (0..clip.frame_count)
                .map(|f| clip.translations[f * n + j][c])
                .collect();
            let (lo, hi) = vals
                .iter()
                .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
            t_range = t_range.max(hi - lo);
        }
    }
    for format in [RotationFormat::Full, RotationFormat::DropW] {
        for &w in WIDTHS.iter().filter(|&&w| w >= 3) {
            let settings = CompressSettings {
                rotation_format: format,
                bits: BitRate::Fixed {
                    rotation_bits: w,
                    translation_bits: w,
                    scale_bits: w,
                },
                constant_tracks: false,
                rest_pose_elision: false,
                ..CompressSettings::default()
            };
            let r = compress(&clip, &settings).unwrap();
            let step = |range: f32| {
                if w == 32 {
                    1e-6
                } else {
                    range / ((1u64 << w) - 1) as f32
                }
            };
            let rot_tol = match (format, w) {
                (_, 32) => 1e-6,
                (RotationFormat::Full, _) => step(2.0),
                _ => 4.0 * step(2.0),
            };
            let t_tol = if w == 32 {
                1e-5
            } else {
                0.5 * step(t_range) + 1e-4
            };
            let mut pose = vec![Transform::IDENTITY; n];
            for f in 0..clip.frame_count {
                r.clip.sample_pose_at_frame(f as f32, &mut pose);
                for j in 0..n {
                    let o = clip.rotations[f * n + j];
                    let d = pose[j].rotation;
                    let d = if d.dot(o) < 0.0 { -d } else { d };
                    let err = (d - o)
                        .to_array()
                        .iter()
                        .fold(0.0f32, |m, x| m.max(x.abs()));
                    assert!(
                        err <= rot_tol + 1e-6,
                        "{format:?} {w} bits: rotation {j} frame {f}: {err} > {rot_tol}"
                    );
                    let terr = (pose[j].translation - clip.translations[f * n + j])
                        .abs()
                        .max_element();
                    assert!(
                        terr <= t_tol,
                        "{format:?} {w} bits: translation {j} frame {f}: {terr} > {t_tol}"
                    );
                }
            }
        }
    }
    // The fixed smallest-three packings: 10 bits a component (32) and 15 bits (48).
    for (format, tol) in [
        (RotationFormat::SmallestThree32, 2.0e-3f32),
        (RotationFormat::SmallestThree48, 7.0e-5),
    ] {
        let settings = CompressSettings {
            rotation_format: format,
            constant_tracks: false,
            rest_pose_elision: false,
            ..CompressSettings::default()
        };
        let r = compress(&clip, &settings).unwrap();
        let mut pose = vec![Transform::IDENTITY; n];
        for f in 0..clip.frame_count {
            r.clip.sample_pose_at_frame(f as f32, &mut pose);
            for j in 0..n {
                let o = clip.rotations[f * n + j];
                let d = if pose[j].rotation.dot(o) < 0.0 {
                    -pose[j].rotation
                } else {
                    pose[j].rotation
                };
                let err = (d - o)
                    .to_array()
                    .iter()
                    .fold(0.0f32, |m, x| m.max(x.abs()));
                assert!(err <= tol, "{format:?}: joint {j} frame {f}: {err} > {tol}");
            }
        }
    }
}

#[test]
fn sample_joint_matches_sample_pose_and_interpolates() {
    let clip = synthetic_clip(15, 70, 30.0, 9);
    let r = compress(&clip, &CompressSettings::auto(0.01)).unwrap();
    let mut pose = vec![Transform::IDENTITY; 15];
    for i in 0..200 {
        let t = clip.duration_s() * i as f32 / 199.0;
        r.clip.sample_pose(t, &mut pose);
        for (j, p) in pose.iter().enumerate() {
            let s = r.clip.sample_joint(t, j).unwrap();
            assert!((s.translation - p.translation).length() < 1e-4);
            assert!(
                s.rotation.dot(p.rotation).abs() > 1.0 - 1e-5,
                "t {t} joint {j}"
            );
        }
    }
    // Halfway between two keys lies between them.
    let (mut a, mut b, mut m) = (pose.clone(), pose.clone(), pose.clone());
    r.clip.sample_pose_at_frame(20.0, &mut a);
    r.clip.sample_pose_at_frame(21.0, &mut b);
    r.clip.sample_pose_at_frame(20.5, &mut m);
    let mid = (a[0].translation + b[0].translation) * 0.5;
    assert!((m[0].translation - mid).length() < 1e-3);
    // Out of range times clamp; the joint index is checked.
    r.clip.sample_pose(-5.0, &mut a);
    r.clip.sample_pose(0.0, &mut b);
    assert_eq!(a, b);
    assert!(r.clip.sample_joint(0.0, 15).is_none());
}

#[test]
fn cancel_and_progress() {
    use std::sync::atomic::AtomicBool;
    use taglane::core::compress::{CompressError, Control, compress_with};
    let clip = synthetic_clip(10, 100, 30.0, 2);
    let cancel = AtomicBool::new(true);
    let r = compress_with(
        &clip,
        &CompressSettings::default(),
        Control {
            progress: &mut |_| {},
            cancel: &cancel,
        },
    );
    assert!(matches!(r, Err(CompressError::Cancelled)));
    let cancel = AtomicBool::new(false);
    let mut seen = Vec::new();
    compress_with(
        &clip,
        &CompressSettings::default(),
        Control {
            progress: &mut |f| seen.push(f),
            cancel: &cancel,
        },
    )
    .unwrap();
    assert!(seen.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(seen.last(), Some(&1.0));
}
