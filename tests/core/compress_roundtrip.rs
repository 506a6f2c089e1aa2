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
        assert!(
            r.error.between.max_error_cm <= budget,
            "between frames {} > {budget} at {:?}",
            r.error.between.max_error_cm,
            r.error.between.worst
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

/// A cancel during a whole-clip segment's choice (one segment: the choice is the whole
/// compression) stops it and writes nothing: it was checked between segments only, so the choice
/// ran to its end and the clip was compressed anyway.
#[test]
fn a_cancel_reaches_a_whole_clip_segment() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use taglane::core::compress::{CompressError, Control, Preset, compress_with};
    let clip = synthetic_clip(10, 400, 30.0, 2);
    let settings = Preset::AutoClipRange.settings();
    assert_eq!(settings.segment_frames, 0);
    let cancel = AtomicBool::new(false);
    let r = compress_with(
        &clip,
        &settings,
        Control {
            // Set once the segments' choice starts (the first progress report).
            progress: &mut |_| cancel.store(true, Ordering::Relaxed),
            cancel: &cancel,
        },
    );
    assert!(matches!(r, Err(CompressError::Cancelled)), "{r:?}");
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

/// A 30 fps chain whose joints turn by 30 degrees between frames (about an axis that changes
/// every frame), with a moving root: decoded between frames, every joint stays within the budget
/// (the report's fractions and scattered times, and 16 times per interval here). Interpolating
/// the stored components of drop-W keys and rebuilding W (the version 1 decoder) is measured on
/// the same decoded keys and misses the budget by far, so the check can fail.
#[test]
fn thirty_degree_steps_at_30_fps_decode_within_budget_between_frames() {
    use glam::{Quat, Vec3};
    use taglane::core::anim::{Clip, SampleSettings, Skeleton, local_to_model, sample_clip};
    use taglane::core::compress::metric::Shell;
    let joints = 6;
    let frames = 48;
    let names = (0..joints).map(|j| format!("j{j}")).collect();
    let parents = (0..joints).map(|j: usize| j.checked_sub(1)).collect();
    let rest = (0..joints)
        .map(|j| Transform {
            translation: Vec3::new(0.0, if j == 0 { 90.0 } else { 12.0 }, 0.0),
            ..Transform::IDENTITY
        })
        .collect();
    let skeleton = Skeleton::new(names, parents, rest);
    let step = 30f32.to_radians();
    let (mut rotations, mut translations, mut scales) = (Vec::new(), Vec::new(), Vec::new());
    let mut q = vec![Quat::IDENTITY; joints];
    for f in 0..frames {
        for (j, qj) in q.iter_mut().enumerate() {
            let a = (f * 7 + j * 3) as f32 * 0.9;
            let axis = Vec3::new(a.sin(), 0.6, a.cos()).normalize();
            if f > 0 {
                let next = (Quat::from_axis_angle(axis, step) * *qj).normalize();
                *qj = if next.dot(*qj) < 0.0 { -next } else { next };
            }
            rotations.push(*qj);
            translations.push(
                skeleton.rest[j].translation + Vec3::X * (f as f32 * 2.0 * (j == 0) as u8 as f32),
            );
            scales.push(Vec3::ONE);
        }
    }
    let clip = Clip {
        name: "thirty".into(),
        skeleton: skeleton.clone(),
        fps: 30.0,
        frame_count: frames,
        unit_cm: 1.0,
        rotations,
        translations,
        scales,
    };
    let budget = 0.01;
    let r = compress(&clip, &CompressSettings::auto(budget)).unwrap();
    println!(
        "ratio {:.2}, at frames {:.5}, between {:.5} (scattered {:.5})",
        r.ratio,
        r.error.max_error_cm,
        r.error.between.max_error_cm,
        r.error.between.golden_max_error_cm
    );
    assert!(r.error.max_error_cm <= budget);
    assert!(r.error.between.max_error_cm <= budget);
    // 16 times per interval, against the original sampled with nlerp.
    let shell = Shell::new(3.0, 1.0);
    let settings = SampleSettings::default();
    let n = joints;
    let mut pose = vec![Transform::IDENTITY; n];
    let (mut mo, mut md) = (vec![Transform::IDENTITY; n], vec![Transform::IDENTITY; n]);
    let (mut ka, mut kb) = (pose.clone(), pose.clone());
    let mut worst_exact = 0.0f32;
    let mut worst_v1 = 0.0f32;
    for f in 0..frames - 1 {
        r.clip.sample_pose_at_frame(f as f32, &mut ka);
        r.clip.sample_pose_at_frame(f as f32 + 1.0, &mut kb);
        for i in 1..16 {
            let alpha = i as f32 / 16.0;
            sample_clip(
                &clip,
                (f64::from(f as f32 + alpha)) / 30.0,
                &settings,
                &mut pose,
            )
            .unwrap();
            local_to_model(&skeleton, &pose, &mut mo).unwrap();
            r.clip.sample_pose_at_frame(f as f32 + alpha, &mut pose);
            local_to_model(&skeleton, &pose, &mut md).unwrap();
            for j in 0..n {
                worst_exact = worst_exact.max(shell.error_cm(&mo[j], &md[j]));
            }
            // The version 1 in-between on the same decoded keys: the component that stays
            // largest over both keys is dropped, each key signed so it is positive, the other
            // three lerped and the dropped one rebuilt (nlerp when the stored parts point apart).
            for j in 0..n {
                let (a, b) = (ka[j].rotation.to_array(), kb[j].rotation.to_array());
                let drop = (0..4)
                    .max_by(|&x, &y| {
                        a[x].abs()
                            .min(b[x].abs())
                            .total_cmp(&a[y].abs().min(b[y].abs()))
                    })
                    .unwrap();
                let signed = |q: [f32; 4]| {
                    let s = if q[drop] < 0.0 { -1.0 } else { 1.0 };
                    q.map(|c| c * s)
                };
                let (a, b) = (signed(a), signed(b));
                let kept: Vec<usize> = (0..4).filter(|&c| c != drop).collect();
                let dot: f32 = kept.iter().map(|&c| a[c] * b[c]).sum();
                pose[j].rotation = if dot < 0.0 {
                    taglane::core::anim::nlerp(ka[j].rotation, kb[j].rotation, alpha)
                } else {
                    let mut q = [0.0f32; 4];
                    for &c in &kept {
                        q[c] = a[c] + (b[c] - a[c]) * alpha;
                    }
                    q[drop] = (1.0 - kept.iter().map(|&c| q[c] * q[c]).sum::<f32>())
                        .max(0.0)
                        .sqrt();
                    Quat::from_array(q)
                };
            }
            local_to_model(&skeleton, &pose, &mut md).unwrap();
            for j in 0..n {
                worst_v1 = worst_v1.max(shell.error_cm(&mo[j], &md[j]));
            }
        }
    }
    println!("16 per interval: {worst_exact:.5} cm; lerped stored components: {worst_v1:.4} cm");
    assert!(worst_exact <= budget, "{worst_exact} > {budget}");
    assert!(worst_v1 > 5.0 * budget, "{worst_v1}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    /// Random clips (smooth or with large random steps, several segment lengths) compressed in
    /// automatic mode decode within the budget at random times, measured against the original
    /// sampled with nlerp through the hierarchy.
    #[test]
    fn random_clips_decode_within_budget_at_random_times(
        joints in 1usize..8,
        frames in 2usize..60,
        seed in proptest::prelude::any::<u64>(),
        segment_frames in 1u16..20,
        budget in 0.005f32..0.1,
        times in proptest::collection::vec(0.0f32..=1.0, 1..40),
    ) {
        use taglane::core::anim::{SampleSettings, local_to_model, sample_clip};
        use taglane::core::compress::metric::Shell;
        let clip = synthetic_clip(joints, frames, 30.0, seed);
        let settings = CompressSettings { segment_frames, ..CompressSettings::auto(budget) };
        let r = compress(&clip, &settings).unwrap();
        proptest::prop_assert!(r.error.overall_max_cm() <= budget, "{:?}", r.error.between.worst);
        let shell = Shell::new(3.0, clip.unit_cm);
        let n = clip.joint_count();
        let mut pose = vec![Transform::IDENTITY; n];
        let (mut mo, mut md) = (pose.clone(), pose.clone());
        for t in times {
            let t = t * clip.duration_s();
            sample_clip(&clip, f64::from(t), &SampleSettings::default(), &mut pose).unwrap();
            local_to_model(&clip.skeleton, &pose, &mut mo).unwrap();
            r.clip.sample_pose(t, &mut pose);
            local_to_model(&clip.skeleton, &pose, &mut md).unwrap();
            for j in 0..n {
                let e = shell.error_cm(&mo[j], &md[j]);
                proptest::prop_assert!(e <= budget, "time {t} joint {j}: {e} > {budget}");
            }
        }
    }
}
