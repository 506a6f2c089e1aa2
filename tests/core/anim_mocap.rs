//! Tests on the real motion-capture files in `../shared/mocap` (see its SOURCES.md).
//! Run with `cargo test --no-default-features --test anim_mocap -- --include-ignored`.

use crate::common::mocap;

use glam::{DQuat, DVec3};
use taglane::core::anim::{
    Clip, ImportOptions, Transform, load_animation, local_to_model, parse_bvh, write_bvh,
};

/// (file, joints, end sites, frames, fps, channel values per row)
const BVH_FILES: &[(&str, usize, usize, usize, f32, usize)] = &[
    ("cmu_01_01_hops_turn.bvh", 31, 7, 2752, 120.0, 96),
    ("cmu_01_03_climb_hang.bvh", 31, 7, 4511, 120.0, 96),
    ("cmu_131_03_hop_start_stop.bvh", 31, 7, 1102, 120.0, 96),
    (
        "bandai_dataset-1_walk_normal_001.bvh",
        22,
        5,
        195,
        30.0,
        132,
    ),
    (
        "bandai_dataset-1_respond_normal_001.bvh",
        22,
        5,
        106,
        30.0,
        132,
    ),
    (
        "bandai_dataset-1_kick_normal_001.bvh",
        22,
        5,
        358,
        30.0,
        132,
    ),
    (
        "bandai_dataset-1_dance-short_normal_001.bvh",
        22,
        5,
        1901,
        30.0,
        132,
    ),
    (
        "bandai_dataset-2_walk_normal_001.bvh",
        22,
        5,
        273,
        30.0,
        132,
    ),
    (
        "bandai_dataset-2_walk-turn-left_normal_001.bvh",
        22,
        5,
        102,
        30.0,
        132,
    ),
];

fn load_bvh(name: &str) -> Clip {
    let imported =
        load_animation(&mocap(name), &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(imported.clips.len(), 1);
    assert!(
        imported.warnings.is_empty(),
        "{name}: {:?}",
        imported.warnings
    );
    imported.clips.into_iter().next().unwrap()
}

/// Global joint positions in f64 (the slow, obvious model used as a reference).
fn global_positions_f64(clip: &Clip, frame: usize) -> Vec<DVec3> {
    let n = clip.joint_count();
    let mut rot = vec![DQuat::IDENTITY; n];
    let mut pos = vec![DVec3::ZERO; n];
    for j in 0..n {
        let lr = clip.rotations[frame * n + j].as_dquat().normalize();
        let lt = clip.translations[frame * n + j].as_dvec3();
        match clip.skeleton.parents[j] {
            None => {
                rot[j] = lr;
                pos[j] = lt;
            }
            Some(p) => {
                rot[j] = rot[p] * lr;
                pos[j] = pos[p] + rot[p] * lt;
            }
        }
    }
    pos
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn bvh_counts_match_sources() {
    for &(name, joints, end_sites, frames, fps, width) in BVH_FILES {
        let clip = load_bvh(name);
        clip.validate().unwrap();
        assert_eq!(clip.joint_count(), joints, "{name}");
        assert_eq!(clip.skeleton.end_sites.len(), end_sites, "{name}");
        assert_eq!(clip.frame_count, frames, "{name}");
        assert!((clip.fps - fps).abs() < 0.01, "{name}: fps {}", clip.fps);
        assert_eq!(clip.unit_cm, 1.0);
        let expected_duration = (frames - 1) as f32 / clip.fps;
        assert!((clip.duration_s() - expected_duration).abs() < 1e-4);
        // The channel layout from SOURCES.md: Bandai has 6 channels on every joint, CMU on the root.
        let _ = width;
    }
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn bvh_bone_lengths_constant_in_every_frame() {
    for &(name, ..) in BVH_FILES {
        let clip = load_bvh(name);
        let n = clip.joint_count();
        let mut local = vec![Transform::IDENTITY; n];
        let mut model = vec![Transform::IDENTITY; n];
        // Joints whose local translation changes are driven by position channels: not bones.
        let moving: Vec<usize> = (0..n)
            .filter(|&j| {
                (1..clip.frame_count)
                    .any(|f| clip.translations[f * n + j].distance(clip.translations[j]) > 1e-3)
            })
            .collect();
        let moving_names: Vec<&str> = moving
            .iter()
            .map(|&j| clip.skeleton.names[j].as_str())
            .collect();
        assert_eq!(
            moving_names,
            ["Hips"],
            "{name}: joints with animated translation"
        );
        let mut first: Vec<f32> = Vec::new();
        for f in 0..clip.frame_count {
            assert!(clip.copy_pose(f, &mut local));
            local_to_model(&clip.skeleton, &local, &mut model).unwrap();
            let lengths: Vec<f32> = (0..n)
                .map(|j| match clip.skeleton.parents[j] {
                    Some(p) => model[j].translation.distance(model[p].translation),
                    None => 0.0,
                })
                .collect();
            if f == 0 {
                first = lengths;
            } else {
                for j in (0..n).filter(|j| !moving.contains(j)) {
                    assert!(
                        (lengths[j] - first[j]).abs() < 2e-3,
                        "{name}: frame {f} joint {} length {} vs {}",
                        clip.skeleton.names[j],
                        lengths[j],
                        first[j]
                    );
                }
            }
        }
    }
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn bvh_round_trip_reproduces_global_positions() {
    for &(name, ..) in BVH_FILES {
        let clip = load_bvh(name);
        let text = write_bvh(&clip);
        let (back, warnings) = parse_bvh(&text, name, &ImportOptions::default()).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(back.joint_count(), clip.joint_count());
        assert_eq!(back.frame_count, clip.frame_count);
        assert_eq!(back.skeleton.names, clip.skeleton.names);
        assert_eq!(back.skeleton.end_sites, clip.skeleton.end_sites);
        assert!((back.fps - clip.fps).abs() < 1e-3);
        let mut worst = (0.0f64, 0usize, 0usize);
        for f in 0..clip.frame_count {
            let a = global_positions_f64(&clip, f);
            let b = global_positions_f64(&back, f);
            for j in 0..a.len() {
                let d = a[j].distance(b[j]);
                if d > worst.0 {
                    worst = (d, f, j);
                }
            }
        }
        assert!(
            worst.0 < 2e-5,
            "{name}: worst {} cm at frame {} joint {}",
            worst.0,
            worst.1,
            worst.2
        );
        eprintln!(
            "{name}: round trip worst {:.3e} at frame {} joint {}",
            worst.0, worst.1, worst.2
        );
    }
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn sampling_at_a_frame_time_equals_that_frame() {
    use taglane::core::anim::{RotationInterp, SampleSettings, sample_clip};
    for &(name, ..) in BVH_FILES {
        let clip = load_bvh(name);
        let n = clip.joint_count();
        let mut out = vec![Transform::IDENTITY; n];
        let mut frame = vec![Transform::IDENTITY; n];
        for how in [RotationInterp::Nlerp, RotationInterp::Slerp] {
            let settings = SampleSettings::clamped(how);
            for f in 0..clip.frame_count {
                let t = f as f64 / f64::from(clip.fps);
                sample_clip(&clip, t, &settings, &mut out).unwrap();
                assert!(clip.copy_pose(f, &mut frame));
                assert_eq!(out, frame, "{name} frame {f}");
            }
        }
    }
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn root_motion_on_real_takes() {
    use taglane::core::anim::{RootMotionTrack, root_motion};
    // Bandai walk: ROOT stays at zero, Hips travels about 8.1 m along +Z.
    let walk = load_bvh("bandai_dataset-1_walk_normal_001.bvh");
    let end = f64::from(walk.duration_s());
    let root = root_motion(&walk, 0, 0.0, end, false).unwrap();
    assert!(root.translation.length() < 1e-4);
    let hips = walk.skeleton.find("Hips").unwrap();
    let m = root_motion(&walk, hips, 0.0, end, false).unwrap();
    assert!((m.translation.z - 810.0).abs() < 30.0, "{}", m.translation);
    assert!(m.translation.x.abs() < 50.0);
    // Looping it twice goes about twice as far.
    let track = RootMotionTrack::new(&walk, hips).unwrap();
    let twice = track.delta(0.0, 2.0 * end, true).unwrap();
    assert!(
        (twice.translation.length() - 2.0 * m.translation.length()).abs() < 60.0,
        "{}",
        twice.translation
    );
    // The left turn: a positive heading change (counter-clockwise seen from above), net 2.7 m.
    let turn = load_bvh("bandai_dataset-2_walk-turn-left_normal_001.bvh");
    let hips = turn.skeleton.find("Hips").unwrap();
    let t = root_motion(&turn, hips, 0.0, f64::from(turn.duration_s()), false).unwrap();
    assert!(t.heading_rad > 0.5, "heading change {}", t.heading_rad);
    let net = Vec3Len(t.translation.x, t.translation.z).len();
    assert!((net - 270.0).abs() < 30.0, "net {net}");
    // CMU 01_01: hips net horizontal displacement 56 units.
    let hops = load_bvh("cmu_01_01_hops_turn.bvh");
    let h = root_motion(&hops, 0, 0.0, f64::from(hops.duration_s()), false).unwrap();
    let net = Vec3Len(h.translation.x, h.translation.z).len();
    assert!((net - 56.0).abs() < 6.0, "net {net}");
}

struct Vec3Len(f32, f32);
impl Vec3Len {
    fn len(&self) -> f32 {
        (self.0 * self.0 + self.1 * self.1).sqrt()
    }
}
