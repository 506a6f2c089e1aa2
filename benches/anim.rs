//! Animation benchmarks: BVH parse throughput on the largest shared mocap file, and sample + forward
//! kinematics of one 31-joint pose.
//!
//! `cargo bench --no-default-features --bench anim -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::{Quat, Vec3};
use taglane::core::anim::{
    Clip, ImportOptions, RotationInterp, SampleSettings, Skeleton, Transform, local_to_model,
    parse_bvh_bytes, sample_clip,
};

const LARGEST: &str = "cmu_01_03_climb_hang.bvh";

fn mocap(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/mocap/")).join(name)
}

fn bvh_parse(c: &mut Criterion) {
    let Ok(bytes) = std::fs::read(mocap(LARGEST)) else {
        eprintln!("skipping bvh_parse: ../shared/mocap/{LARGEST} is not available");
        return;
    };
    let options = ImportOptions::default();
    let mut group = c.benchmark_group("bvh_parse");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.sample_size(20);
    group.bench_function(LARGEST, |b| {
        b.iter(|| parse_bvh_bytes(black_box(&bytes), "b", &options).unwrap())
    });
    // Baseline: only split the text on whitespace and parse every number with the standard library
    // (no hierarchy, no rotations): what a naive parser spends before doing any real work.
    let text = std::str::from_utf8(&bytes).unwrap();
    group.bench_function("baseline_split_whitespace_std_parse", |b| {
        b.iter(|| {
            let mut sum = 0.0f64;
            for tok in black_box(text).split_ascii_whitespace() {
                if let Ok(v) = tok.parse::<f64>() {
                    sum += v;
                }
            }
            sum
        })
    });
    group.finish();
}

/// A 31-joint chain-and-branches skeleton like the CMU one, with 120 frames of varied rotations.
fn synthetic_clip() -> Clip {
    let n = 31;
    let parents: Vec<Option<usize>> = (0..n)
        .map(|i| {
            if i == 0 {
                None
            } else {
                Some((i - 1) / 2 * 2 % i)
            }
        })
        .collect();
    let rest: Vec<Transform> = (0..n)
        .map(|i| Transform {
            translation: Vec3::new(0.0, 5.0 + i as f32 * 0.1, 1.0),
            ..Transform::IDENTITY
        })
        .collect();
    let skeleton = Skeleton::new(
        (0..n).map(|i| format!("j{i}")).collect(),
        parents,
        rest.clone(),
    );
    let frames = 120;
    let mut rotations = Vec::with_capacity(frames * n);
    let mut translations = Vec::with_capacity(frames * n);
    for f in 0..frames {
        for (j, r) in rest.iter().enumerate() {
            let a = (f as f32 * 0.05 + j as f32 * 0.3).sin();
            rotations.push(Quat::from_euler(glam::EulerRot::ZYX, a, a * 0.5, -a * 0.7));
            translations.push(if j == 0 {
                Vec3::new(f as f32, 20.0, 0.0)
            } else {
                r.translation
            });
        }
    }
    Clip {
        name: "synthetic".into(),
        skeleton,
        fps: 120.0,
        frame_count: frames,
        unit_cm: 1.0,
        scales: vec![Vec3::ONE; rotations.len()],
        rotations,
        translations,
    }
}

fn sample_fk(c: &mut Criterion) {
    let mut clips = vec![("synthetic_31", synthetic_clip())];
    if let Ok(bytes) = std::fs::read(mocap("cmu_01_01_hops_turn.bvh")) {
        let (clip, _) = parse_bvh_bytes(&bytes, "cmu", &ImportOptions::default()).unwrap();
        clips.push(("cmu_01_01_31", clip));
    }
    let mut group = c.benchmark_group("sample_fk");
    for (name, clip) in &clips {
        let n = clip.joint_count();
        let mut local = vec![Transform::IDENTITY; n];
        let mut model = vec![Transform::IDENTITY; n];
        let duration = clip.duration_s() as f64;
        for (label, how) in [
            ("nlerp", RotationInterp::Nlerp),
            ("slerp", RotationInterp::Slerp),
        ] {
            let settings = SampleSettings::looped(how);
            let mut t = 0.0f64;
            group.bench_function(format!("{name}_{label}"), |b| {
                b.iter(|| {
                    t += 0.013_7;
                    if t > duration {
                        t -= duration;
                    }
                    sample_clip(clip, black_box(t), &settings, &mut local).unwrap();
                    local_to_model(&clip.skeleton, &local, &mut model).unwrap();
                    model[n - 1].translation
                })
            });
        }
        // Baseline: copy one stored frame and run FK (no interpolation).
        let mut f = 0usize;
        group.bench_function(format!("{name}_baseline_copy_frame_fk"), |b| {
            b.iter(|| {
                f = (f + 7) % clip.frame_count;
                clip.copy_pose(black_box(f), &mut local);
                local_to_model(&clip.skeleton, &local, &mut model).unwrap();
                model[n - 1].translation
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bvh_parse, sample_fk);
criterion_main!(benches);
