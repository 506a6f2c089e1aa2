//! Automatic tagging: every generator (contacts, airborne, locomotion, turns, and two custom rules)
//! on the nine shared takes, against forward kinematics alone; and re-thresholding the prepared
//! takes (what an editor does while a threshold is dragged). Falls back to the ten demo takes when
//! `../shared/mocap` is missing.
//!
//! `cargo bench --no-default-features --bench autotag -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use taglane::core::anim::{Clip, ImportOptions, load_animation};
use taglane::core::autotag::{CMU_CM_PER_UNIT, Motion, Prepared, ThresholdKey, parse_settings};

const TAKES: [(&str, f32); 9] = [
    ("cmu_01_01_hops_turn.bvh", CMU_CM_PER_UNIT),
    ("cmu_01_03_climb_hang.bvh", CMU_CM_PER_UNIT),
    ("cmu_131_03_hop_start_stop.bvh", CMU_CM_PER_UNIT),
    ("bandai_dataset-1_walk_normal_001.bvh", 1.0),
    ("bandai_dataset-1_respond_normal_001.bvh", 1.0),
    ("bandai_dataset-1_kick_normal_001.bvh", 1.0),
    ("bandai_dataset-1_dance-short_normal_001.bvh", 1.0),
    ("bandai_dataset-2_walk_normal_001.bvh", 1.0),
    ("bandai_dataset-2_walk-turn-left_normal_001.bvh", 1.0),
];

/// Two rules that work on both conventions (CMU `LeftHand`, Bandai `Hand_L`: the missing one is
/// skipped with a warning, as in real use).
const RULES: &str = r#"{"version": 1, "rules": [
  {"tag": "HandsUp", "when": [
    {"signal": "y", "joint": "LeftHand", "relative_to": "Head", "above": 5, "leave": 0},
    {"signal": "y", "joint": "RightHand", "relative_to": "Head", "above": 5, "leave": 0}]},
  {"tag": "KneeBent", "when": [{"signal": "angle", "joint": "LowerLeg_L", "above": 60, "leave": 50}]}
]}"#;

/// The shared takes, or the demo takes when they are missing; and which it is.
fn clips() -> (Vec<Clip>, &'static str) {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/mocap"));
    let mut clips = Vec::new();
    for (file, unit_cm) in TAKES {
        let Ok(imported) = load_animation(&dir.join(file), &ImportOptions::default()) else {
            eprintln!("../shared/mocap/{file} is not available: benchmarking the demo takes");
            return (taglane::core::demo::demo_project().0, "ten_demo_takes");
        };
        let mut clip = imported.clips.into_iter().next().expect("one clip");
        clip.unit_cm = unit_cm;
        clips.push(clip);
    }
    (clips, "nine_shared_takes")
}

fn bench(c: &mut Criterion) {
    let (clips, name) = clips();
    let settings = parse_settings(RULES).unwrap();
    let frames: usize = clips.iter().map(|c| c.frame_count).sum();
    let mut group = c.benchmark_group("autotag");
    group.throughput(Throughput::Elements(frames as u64));
    group.sample_size(20);
    group.bench_function(format!("all_generators/{name}"), |b| {
        b.iter(|| {
            for clip in &clips {
                let out = Prepared::new(black_box(clip))
                    .unwrap()
                    .autotag(&settings, None)
                    .unwrap();
                black_box(out);
            }
        })
    });
    // Baseline: the forward kinematics every generator needs, alone.
    group.bench_function(format!("baseline_fk_only/{name}"), |b| {
        b.iter(|| {
            for clip in &clips {
                black_box(Motion::new(black_box(clip)).unwrap());
            }
        })
    });
    // Re-thresholding: the contact speed threshold alternates between two values; the measured
    // signals stay cached.
    let prepared: Vec<Prepared> = clips.iter().map(|c| Prepared::new(c).unwrap()).collect();
    let mut toggled = [settings.clone(), settings.clone()];
    toggled[1]
        .set_threshold(ThresholdKey::ContactSpeed, 25.0, 40.0)
        .unwrap();
    let mut k = 0;
    group.bench_function(format!("rethreshold/{name}"), |b| {
        b.iter(|| {
            k ^= 1;
            for p in &prepared {
                black_box(p.autotag(&toggled[k], None).unwrap());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
