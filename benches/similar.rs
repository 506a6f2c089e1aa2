//! "Find similar" benchmarks (issue 14): feature building throughput on one core, and a one-second
//! query over one hour of 120 fps motion capture (432,000 frames) on one core.
//!
//! The hour is generated at bench time from the demo takes and, when `../shared/mocap` is present,
//! the real takes: each is resampled to 120 fps at paces 0.75x to 1.25x (so no two copies have the
//! same features) until 432,000 frames are reached.
//!
//! `cargo bench --no-default-features --bench similar -- --warm-up-time 1 --measurement-time 5`

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use taglane::core::anim::{Clip, ImportOptions, Transform, load_animation, local_to_model};
use taglane::core::autotag::CMU_CM_PER_UNIT;
use taglane::core::demo::{demo_scripts, generate_take};
use taglane::core::similar::{
    ClipFeatures, DIMS, FeatureJoints, FeatureScratch, JointOverrides, Query, SUGGESTED_MAX_SCORE,
    SearchIndex, SearchSettings, Weights, build_features, clip_features_by_name, features::retime,
};

#[path = "common/mode.rs"]
mod mode;
use mode::measuring;

/// Frames in the searched hour; ten seconds when the bench only checks that it works
/// (`cargo test --benches`, an unoptimised build).
fn hour_frames() -> usize {
    if measuring() { 432_000 } else { 1_200 }
}
const FPS: f32 = 120.0;

const SHARED: [(&str, f32); 9] = [
    ("bandai_dataset-1_walk_normal_001.bvh", 1.0),
    ("bandai_dataset-2_walk_normal_001.bvh", 1.0),
    ("bandai_dataset-2_walk-turn-left_normal_001.bvh", 1.0),
    ("bandai_dataset-1_respond_normal_001.bvh", 1.0),
    ("bandai_dataset-1_kick_normal_001.bvh", 1.0),
    ("bandai_dataset-1_dance-short_normal_001.bvh", 1.0),
    ("cmu_01_01_hops_turn.bvh", CMU_CM_PER_UNIT),
    ("cmu_01_03_climb_hang.bvh", CMU_CM_PER_UNIT),
    ("cmu_131_03_hop_start_stop.bvh", CMU_CM_PER_UNIT),
];

/// The demo takes, then the shared takes that load.
fn base_clips() -> Vec<Clip> {
    let mut clips: Vec<Clip> = demo_scripts().iter().map(|s| generate_take(s).0).collect();
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/mocap"));
    let mut shared = 0;
    for (file, unit) in SHARED {
        let options = ImportOptions {
            unit_cm: Some(unit),
            ..ImportOptions::default()
        };
        if let Ok(mut i) = load_animation(&dir.join(file), &options) {
            clips.push(i.clips.remove(0));
            shared += 1;
        }
    }
    eprintln!(
        "similar bench: {} demo takes, {shared} shared takes{}",
        clips.len() - shared,
        if shared == 0 {
            " (../shared/mocap not found)"
        } else {
            ""
        }
    );
    clips
}

/// One hour of 120 fps features, and the 120 fps copies at pace 1 (for the build benchmark).
fn hour() -> (Vec<ClipFeatures>, Vec<Clip>) {
    let base = base_clips();
    let at_pace_1: Vec<Clip> = base
        .iter()
        .map(|c| retime(c, 0, c.frame_count, FPS, 1.0).unwrap())
        .collect();
    let mut out: Vec<ClipFeatures> = at_pace_1
        .iter()
        .map(|c| clip_features_by_name(c, &JointOverrides::default()).unwrap())
        .collect();
    let hour_frames = hour_frames();
    let mut total: usize = out.iter().map(|f| f.frames).sum();
    let paces = [0.75f32, 1.25, 0.875, 1.125, 0.8, 1.2, 0.9, 1.1, 0.95, 1.05];
    'fill: for pace in paces.iter().cycle().take(200) {
        for c in &base {
            if total >= hour_frames {
                break 'fill;
            }
            let r = retime(c, 0, c.frame_count, FPS, *pace).unwrap();
            let mut f = clip_features_by_name(&r, &JointOverrides::default()).unwrap();
            let keep = f.frames.min(hour_frames - total);
            f.frames = keep;
            f.values.truncate(keep * DIMS);
            total += keep;
            out.push(f);
        }
    }
    assert!(total == hour_frames || (!measuring() && total > hour_frames));
    (out, at_pace_1)
}

fn similar(c: &mut Criterion) {
    let (hour, clips) = hour();
    let frames: usize = clips.iter().map(|c| c.frame_count).sum();
    eprintln!(
        "similar bench: {} clips, {} frames in the hour; feature building on {} frames",
        hour.len(),
        hour.iter().map(|f| f.frames).sum::<usize>(),
        frames
    );

    let mut group = c.benchmark_group("similar_build");
    group.sample_size(10);
    group.throughput(Throughput::Elements(frames as u64));
    let joints: Vec<FeatureJoints> = clips
        .iter()
        .map(|c| FeatureJoints::find(&c.skeleton, &JointOverrides::default()).unwrap())
        .collect();
    group.bench_function("features_one_core", |b| {
        let mut scratch = FeatureScratch::default();
        let mut out = Vec::new();
        b.iter(|| {
            for (clip, j) in clips.iter().zip(&joints) {
                build_features(black_box(clip), j, &mut scratch, &mut out).unwrap();
            }
            out.len()
        })
    });
    // Baseline: forward kinematics of every joint of every frame (what a naive build starts with).
    group.bench_function("baseline_fk_every_joint", |b| {
        b.iter(|| {
            let mut sum = 0.0f32;
            for clip in &clips {
                let n = clip.joint_count();
                let mut local = vec![Transform::IDENTITY; n];
                let mut model = vec![Transform::IDENTITY; n];
                for f in 0..clip.frame_count {
                    clip.copy_pose(f, &mut local);
                    local_to_model(&clip.skeleton, &local, &mut model).unwrap();
                    sum += model[n - 1].translation.x;
                }
            }
            sum
        })
    });
    group.finish();

    let refs: Vec<&ClipFeatures> = hour.iter().collect();
    let mut group = c.benchmark_group("similar_search");
    group.sample_size(10);
    group.bench_function("index_build_hour", |b| {
        b.iter(|| SearchIndex::build(black_box(&refs), &Weights::default()).unwrap())
    });
    let index = SearchIndex::build(&refs, &Weights::default()).unwrap();
    // One second of walking in the first demo take (walk_male_01 at 120 fps: walking from 1 s).
    let q = Query {
        clip: 0,
        start: 600,
        stop: 720,
    };
    let top10 = SearchSettings::default();
    let m = index.search(&q, &top10).unwrap();
    eprintln!(
        "similar bench: top 10 of the walk query: {:?}",
        m.iter()
            .map(|m| (m.clip, m.start, m.stop, (m.score * 1000.0).round() / 1000.0))
            .collect::<Vec<_>>()
    );
    group.bench_function("query_1s_hour_top10", |b| {
        b.iter(|| index.search(black_box(&q), &top10).unwrap())
    });
    let threshold = SearchSettings {
        top: 1000,
        max_score: Some(SUGGESTED_MAX_SCORE),
        ..SearchSettings::default()
    };
    eprintln!(
        "similar bench: {} matches under {SUGGESTED_MAX_SCORE}",
        index.search(&q, &threshold).unwrap().len()
    );
    group.bench_function("query_1s_hour_max_score_0.7", |b| {
        b.iter(|| index.search(black_box(&q), &threshold).unwrap())
    });
    // A running query: one second of run_male_01.
    let run = Query {
        clip: 1,
        start: 240,
        stop: 360,
    };
    group.bench_function("query_1s_hour_top10_run", |b| {
        b.iter(|| index.search(black_box(&run), &top10).unwrap())
    });
    group.finish();
}

criterion_group!(benches, similar);
criterion_main!(benches);
