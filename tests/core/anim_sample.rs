//! Sampling, mixing and forward kinematics against hand-computed values and slow f64 models.

use glam::{DQuat, DVec3, Quat, Vec3};
use proptest::prelude::*;
use taglane::core::anim::{
    Clip, Extrapolation, JobError, MixSettings, RotationInterp, SampleBuffer, SampleSettings,
    Skeleton, Transform, chain_to_model, frame_position, joint_to_model, local_to_model, mix,
    mix_in_place, nlerp, sample_clip, slerp, subtree_mask,
};

/// A two-joint clip: the root translates along X (0, 10, 20, ...) and turns about Y by
/// `step_deg` per frame; the child is 10 units up.
fn clip(frames: usize, fps: f32, step_deg: f32) -> Clip {
    let skeleton = Skeleton::new(
        vec!["root".into(), "child".into()],
        vec![None, Some(0)],
        vec![
            Transform::IDENTITY,
            Transform {
                translation: Vec3::new(0.0, 10.0, 0.0),
                ..Transform::IDENTITY
            },
        ],
    );
    let mut rotations = Vec::new();
    let mut translations = Vec::new();
    for f in 0..frames {
        rotations.push(Quat::from_rotation_y((step_deg * f as f32).to_radians()));
        rotations.push(Quat::IDENTITY);
        translations.push(Vec3::new(10.0 * f as f32, 0.0, 0.0));
        translations.push(Vec3::new(0.0, 10.0, 0.0));
    }
    Clip {
        name: "c".into(),
        skeleton,
        fps,
        frame_count: frames,
        unit_cm: 1.0,
        scales: vec![Vec3::ONE; rotations.len()],
        rotations,
        translations,
    }
}

fn sample(c: &Clip, t: f64, s: SampleSettings) -> Vec<Transform> {
    let mut out = vec![Transform::IDENTITY; c.joint_count()];
    sample_clip(c, t, &s, &mut out).unwrap();
    out
}

fn yaw_deg(q: Quat) -> f32 {
    let (axis, angle) = q.to_axis_angle();
    (if axis.y < 0.0 { -angle } else { angle }).to_degrees()
}

#[test]
fn validate_reports_non_finite_values_with_joint_and_frame() {
    let mut c = clip(3, 1.0, 10.0);
    c.validate().unwrap();
    c.translations[5] = Vec3::new(f32::NAN, 0.0, 0.0);
    let e = c.validate().unwrap_err();
    assert!(e.contains("translation of joint 1 at frame 2"), "{e}");
}

#[test]
fn duration_is_frames_minus_one_over_fps() {
    assert_eq!(clip(5, 2.0, 0.0).duration_s(), 2.0);
    assert_eq!(clip(1, 2.0, 0.0).duration_s(), 0.0);
    assert_eq!(clip(0, 2.0, 0.0).duration_s(), 0.0);
}

#[test]
fn sampling_at_frame_times_returns_the_frames() {
    let c = clip(5, 3.0, 20.0);
    for f in 0..5 {
        for s in [
            SampleSettings::clamped(RotationInterp::Nlerp),
            SampleSettings::looped(RotationInterp::Slerp),
        ] {
            let p = sample(&c, f as f64 / 3.0, s);
            assert_eq!(p[0].translation, c.translations[f * 2]);
            assert_eq!(p[0].rotation, c.rotations[f * 2]);
        }
    }
}

#[test]
fn between_frames_translation_lerps_and_rotation_interpolates() {
    let c = clip(3, 1.0, 60.0);
    for how in [RotationInterp::Nlerp, RotationInterp::Slerp] {
        let p = sample(&c, 0.5, SampleSettings::clamped(how));
        assert!(p[0].translation.abs_diff_eq(Vec3::new(5.0, 0.0, 0.0), 1e-5));
        assert!((yaw_deg(p[0].rotation) - 30.0).abs() < 1e-3, "{how:?}");
    }
    // A quarter of the way: slerp is exactly at 15 degrees, nlerp is not.
    let s = sample(&c, 0.25, SampleSettings::clamped(RotationInterp::Slerp));
    assert!((yaw_deg(s[0].rotation) - 15.0).abs() < 1e-3);
    let n = sample(&c, 0.25, SampleSettings::clamped(RotationInterp::Nlerp));
    assert!((yaw_deg(n[0].rotation) - 15.0).abs() > 0.05);
}

#[test]
fn interpolation_takes_the_shortest_path_even_across_hemispheres() {
    // Frame 1 stored on the opposite hemisphere (-q): still a 20 degree step, not 340.
    let mut c = clip(2, 1.0, 20.0);
    c.rotations[2] = -c.rotations[2];
    for how in [RotationInterp::Nlerp, RotationInterp::Slerp] {
        let p = sample(&c, 0.5, SampleSettings::clamped(how));
        assert!((yaw_deg(p[0].rotation) - 10.0).abs() < 1e-3, "{how:?}");
    }
}

#[test]
fn pre_and_post_infinity_clamp_and_loop() {
    let c = clip(5, 1.0, 0.0); // duration 4 s, root x = 10 * t
    let clamp = SampleSettings::clamped(RotationInterp::Nlerp);
    let looped = SampleSettings::looped(RotationInterp::Nlerp);
    let x = |t: f64, s: SampleSettings| sample(&c, t, s)[0].translation.x;
    assert_eq!(x(-3.0, clamp), 0.0);
    assert_eq!(x(100.0, clamp), 40.0);
    assert!((x(5.5, looped) - 15.0).abs() < 1e-4);
    assert!((x(-0.5, looped) - 35.0).abs() < 1e-4);
    // Whole cycles after the start show the last frame, before the start the first.
    assert_eq!(x(8.0, looped), 40.0);
    assert_eq!(x(-8.0, looped), 0.0);
    assert!((x(8.5, looped) - 5.0).abs() < 1e-4);
    // Mixed: clamp before, loop after.
    let mixed = SampleSettings {
        pre: Extrapolation::Clamp,
        post: Extrapolation::Loop,
        rotation: RotationInterp::Nlerp,
    };
    assert_eq!(x(-1.0, mixed), 0.0);
    assert!((x(4.25, mixed) - 2.5).abs() < 1e-4);
    let p = frame_position(5, 1.0, 2.5, &clamp).unwrap();
    assert_eq!((p.frame0, p.frame1, p.alpha), (2, 3, 0.5));
    assert!(frame_position(0, 1.0, 0.0, &clamp).is_none());
    // A one-frame clip is that frame at any time.
    let one = clip(1, 30.0, 0.0);
    assert_eq!(sample(&one, 12.0, looped)[0].translation, Vec3::ZERO);
}

#[test]
fn bad_buffers_and_times_are_errors_not_panics() {
    let c = clip(3, 1.0, 10.0);
    let mut short = vec![Transform::IDENTITY; 1];
    let s = SampleSettings::default();
    assert!(matches!(
        sample_clip(&c, 0.0, &s, &mut short),
        Err(JobError::BufferLength { .. })
    ));
    let mut out = vec![Transform::IDENTITY; 2];
    assert!(sample_clip(&c, f64::NAN, &s, &mut out).is_err());
    let mut broken = c.clone();
    broken.rotations.pop();
    assert!(sample_clip(&broken, 0.0, &s, &mut out).is_err());
    let mut bad = c.skeleton.clone();
    bad.parents[1] = Some(1);
    let mut model = vec![Transform::IDENTITY; 2];
    assert_eq!(
        local_to_model(&bad, &out, &mut model),
        Err(JobError::BadParent { joint: 1 })
    );
    assert!(joint_to_model(&c.skeleton, &out, 7).is_err());
}

#[test]
fn mixer_follows_the_valid_count_rules() {
    let a_t = Transform {
        translation: Vec3::new(0.0, 0.0, 0.0),
        ..Transform::IDENTITY
    };
    let b_t = Transform {
        translation: Vec3::new(10.0, 0.0, 0.0),
        rotation: Quat::from_rotation_y(90f32.to_radians()),
        scale: Vec3::ONE,
    };
    let mut a = SampleBuffer::new(4);
    let mut b = SampleBuffer::new(4);
    // bone 0: both valid; 1: only a; 2: only b; 3: neither.
    a.transforms = vec![a_t, a_t, a_t, a_t];
    a.counts = vec![1, 2, 0, 0];
    b.transforms = vec![b_t, b_t, b_t, b_t];
    b.counts = vec![1, 0, 3, 0];
    let mut out = SampleBuffer::new(4);
    let settings = MixSettings {
        weight: 0.5,
        mask: None,
        rotation: RotationInterp::Slerp,
    };
    mix(&a, &b, &settings, &mut out).unwrap();
    assert!(
        out.transforms[0]
            .translation
            .abs_diff_eq(Vec3::new(5.0, 0.0, 0.0), 1e-6)
    );
    assert!((yaw_deg(out.transforms[0].rotation) - 45.0).abs() < 1e-3);
    assert_eq!(out.transforms[1], a_t);
    assert_eq!(out.transforms[2], b_t);
    assert!(!out.is_valid(3));
    assert_eq!(out.counts, [2, 2, 3, 0]);
    // A mask keeps bone 0 on `a`.
    let mask = [0.0, 1.0, 1.0, 1.0];
    let masked = MixSettings {
        mask: Some(&mask),
        ..settings
    };
    mix(&a, &b, &masked, &mut out).unwrap();
    assert_eq!(out.transforms[0].translation, Vec3::ZERO);
    // Weights 0 and 1 give the inputs.
    for (w, expected) in [(0.0, a_t), (1.0, b_t)] {
        mix(
            &a,
            &b,
            &MixSettings {
                weight: w,
                ..settings
            },
            &mut out,
        )
        .unwrap();
        assert!(
            out.transforms[0]
                .translation
                .abs_diff_eq(expected.translation, 1e-6)
        );
        assert!(
            out.transforms[0]
                .rotation
                .abs_diff_eq(expected.rotation, 1e-6)
        );
    }
    // In place gives the same result.
    let mut in_place = a.clone();
    mix_in_place(&mut in_place, &b, &settings).unwrap();
    mix(&a, &b, &settings, &mut out).unwrap();
    assert_eq!(in_place, out);
    // Bad inputs are errors.
    let bad_mask = [0.0; 3];
    assert!(
        mix(
            &a,
            &b,
            &MixSettings {
                mask: Some(&bad_mask),
                ..settings
            },
            &mut out
        )
        .is_err()
    );
    assert!(
        mix(
            &a,
            &b,
            &MixSettings {
                weight: 1.5,
                ..settings
            },
            &mut out
        )
        .is_err()
    );
    assert!(mix(&a, &SampleBuffer::new(3), &settings, &mut out).is_err());
}

#[test]
fn subtree_mask_selects_a_joint_and_its_descendants() {
    let sk = Skeleton::new(
        vec!["hips".into(), "spine".into(), "head".into(), "leg".into()],
        vec![None, Some(0), Some(1), Some(0)],
        vec![Transform::IDENTITY; 4],
    );
    assert_eq!(subtree_mask(&sk, 1, 1.0, 0.0), [0.0, 1.0, 1.0, 0.0]);
}

#[test]
fn chain_fk_matches_whole_pose_fk() {
    let c = clip(3, 1.0, 30.0);
    let p = sample(&c, 1.3, SampleSettings::default());
    let mut model = vec![Transform::IDENTITY; 2];
    local_to_model(&c.skeleton, &p, &mut model).unwrap();
    let mut chain = vec![Transform::IDENTITY; 2];
    assert_eq!(chain_to_model(&c.skeleton, &p, 1, &mut chain).unwrap(), 2);
    assert!(chain[1].translation.abs_diff_eq(model[1].translation, 1e-5));
    assert_eq!(joint_to_model(&c.skeleton, &p, 1).unwrap(), model[1]);
}

fn random_unit_quat() -> impl Strategy<Value = Quat> {
    (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0).prop_filter_map(
        "non-zero",
        |(x, y, z, w)| {
            let q = Quat::from_xyzw(x, y, z, w);
            (q.length() > 0.1).then(|| q.normalize())
        },
    )
}

proptest! {
    /// Slerp against an f64 axis-angle model: the result turns `t` of the shortest-path angle.
    #[test]
    fn slerp_matches_axis_angle_model(a in random_unit_quat(), b in random_unit_quat(), t in 0.0f32..=1.0) {
        let (da, mut db) = (a.as_dquat(), b.as_dquat());
        if da.dot(db) < 0.0 { db = -db; }
        let rel = (da.conjugate() * db).normalize();
        let (axis, angle) = rel.to_axis_angle();
        let expected = if angle.abs() < 1e-9 { da } else { da * DQuat::from_axis_angle(axis, angle * f64::from(t)) };
        let got = slerp(a, b, t).as_dquat();
        prop_assert!(got.dot(expected).abs() > 1.0 - 1e-6, "{:?} vs {:?}", got, expected);
        let n = nlerp(a, b, t);
        prop_assert!((n.length() - 1.0).abs() < 1e-5);
    }

    /// Nearby rotations (the series path of slerp) against the same model, tightly.
    #[test]
    fn slerp_of_nearby_rotations_matches_model(a in random_unit_quat(), axis in random_unit_quat(), angle in 0.0f32..1.28, t in 0.0f32..=1.0) {
        let axis = Vec3::new(axis.x, axis.y, axis.z).try_normalize().unwrap_or(Vec3::X);
        let b = (a * Quat::from_axis_angle(axis, angle)).normalize();
        let expected = a.as_dquat() * DQuat::from_axis_angle(axis.as_dvec3(), f64::from(angle) * f64::from(t));
        let got = slerp(a, b, t);
        prop_assert!((got.length() - 1.0).abs() < 1e-6);
        let g = got.as_dquat();
        let e = if g.dot(expected) < 0.0 { -expected } else { expected };
        // Angle between rotations, well conditioned near zero.
        let err = 4.0 * (g - e).length().atan2((g + e).length());
        prop_assert!(err < 2e-6, "error {} rad", err);
    }

    /// Forward kinematics against an f64 model on random skeletons (parents before children).
    #[test]
    fn fk_matches_f64_model(
        parents in proptest::collection::vec(0.0f64..1.0, 1..20),
        rots in proptest::collection::vec(random_unit_quat(), 20),
        offs in proptest::collection::vec((-50.0f32..50.0, -50.0f32..50.0, -50.0f32..50.0), 20),
    ) {
        let n = parents.len();
        let parent: Vec<Option<usize>> = (0..n).map(|i| if i == 0 { None } else { Some((parents[i] * i as f64) as usize) }).collect();
        let local: Vec<Transform> = (0..n).map(|i| Transform {
            translation: Vec3::new(offs[i].0, offs[i].1, offs[i].2),
            rotation: rots[i],
            scale: Vec3::ONE,
        }).collect();
        let sk = Skeleton::new((0..n).map(|i| format!("j{i}")).collect(), parent.clone(), local.clone());
        let mut model = vec![Transform::IDENTITY; n];
        local_to_model(&sk, &local, &mut model).unwrap();
        let mut rot = vec![DQuat::IDENTITY; n];
        let mut pos = vec![DVec3::ZERO; n];
        for i in 0..n {
            let (lr, lt) = (local[i].rotation.as_dquat(), local[i].translation.as_dvec3());
            match parent[i] {
                None => { rot[i] = lr; pos[i] = lt; }
                Some(p) => { rot[i] = rot[p] * lr; pos[i] = pos[p] + rot[p] * lt; }
            }
            prop_assert!(model[i].translation.as_dvec3().distance(pos[i]) < 1e-3);
            let single = joint_to_model(&sk, &local, i).unwrap();
            prop_assert!(single.translation.as_dvec3().distance(pos[i]) < 1e-3);
        }
    }
}
