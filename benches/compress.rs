//! Compression benchmarks on the shared takes (skipped with a message when `../shared/mocap` is
//! missing): decoding one pose from the compressed form vs sampling the uncompressed clip (both
//! interpolating between two frames at the same scattered times, nlerp for the uncompressed clip),
//! per clip; a table of ratio and max error at ACL's error vs ACL's figures, and a paired timing
//! (rounds alternating between the two, median of the per-round ratios), printed before the
//! criterion timings.
//!
//! `cargo bench --no-default-features --bench compress -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use taglane::core::anim::{ImportOptions, SampleSettings, Transform, load_animation, sample_clip};
use taglane::core::compress::{CompressSettings, compress};

const CLIPS: [(&str, &str, f32, f32, f64); 9] = [
    (
        "dance",
        "bandai_dataset-1_dance-short_normal_001.bvh",
        1.0,
        0.0284,
        8.93,
    ),
    (
        "kick",
        "bandai_dataset-1_kick_normal_001.bvh",
        1.0,
        0.0130,
        9.55,
    ),
    (
        "walk1",
        "bandai_dataset-1_walk_normal_001.bvh",
        1.0,
        0.0146,
        8.56,
    ),
    (
        "respond",
        "bandai_dataset-1_respond_normal_001.bvh",
        1.0,
        0.0210,
        10.35,
    ),
    (
        "walk-turn-left",
        "bandai_dataset-2_walk-turn-left_normal_001.bvh",
        1.0,
        0.0145,
        8.31,
    ),
    (
        "walk2",
        "bandai_dataset-2_walk_normal_001.bvh",
        1.0,
        0.0150,
        8.90,
    ),
    ("cmu_01_01", "cmu_01_01_hops_turn.bvh", 5.644, 0.0177, 13.53),
    (
        "cmu_01_03",
        "cmu_01_03_climb_hang.bvh",
        5.644,
        0.0156,
        13.15,
    ),
    (
        "cmu_131_03",
        "cmu_131_03_hop_start_stop.bvh",
        5.644,
        0.0151,
        14.50,
    ),
];

/// Rounds of the paired timing (each 256 poses of each kind).
const PAIRED_ROUNDS: usize = 2000;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Scattered sample times over the clip (golden-ratio sequence), never exactly on a frame.
fn times(duration_s: f32, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| duration_s * ((i as f32 * 0.618_034 + 0.123).fract()))
        .collect()
}

fn bench(c: &mut Criterion) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/mocap");
    if !Path::new(dir).exists() {
        eprintln!("compress bench: {dir} not found, skipping");
        return;
    }
    let (mut raw, mut comp) = (0usize, 0usize);
    let mut loaded = Vec::new();
    eprintln!(
        "| clip | joints | frames | ratio | ACL ratio | max error cm | ACL max error cm | worst joint, frame | compress ms |"
    );
    eprintln!("|---|---:|---:|---:|---:|---:|---:|---|---:|");
    for (short, file, unit, acl_err, acl_ratio) in CLIPS {
        let opts = ImportOptions {
            unit_cm: Some(unit),
            ..Default::default()
        };
        let clip = load_animation(&Path::new(dir).join(file), &opts)
            .expect("shared clip loads")
            .clips
            .remove(0);
        let r = compress(&clip, &CompressSettings::auto(acl_err * 0.98)).expect("compresses");
        raw += r.raw_bytes;
        comp += r.compressed_bytes;
        eprintln!(
            "| {short} | {} | {} | {:.2} | {acl_ratio:.2} | {:.4} | {acl_err:.4} | {} f{} | {:.0} |",
            clip.joint_count(),
            clip.frame_count,
            r.ratio,
            r.error.max_error_cm,
            r.error.worst.joint_name,
            r.error.worst.frame,
            r.compress_ms
        );
        loaded.push((short, clip, r.clip));
    }
    eprintln!(
        "| total | | | {:.3} | 12.23 | | | | |",
        raw as f64 / comp as f64
    );

    // Paired timing, robust to load changing between criterion's separate runs on a shared
    // machine: rounds of 256 poses alternate between the two, and the median of the per-round
    // ratios is printed with each side's median time per pose.
    eprintln!(
        "| clip | sample uncompressed ns | decode compressed ns | x (median of paired rounds) |"
    );
    eprintln!("|---|---:|---:|---:|");
    for (short, clip, compressed) in &loaded {
        let ts = times(clip.duration_s(), 256);
        let mut pose = vec![Transform::IDENTITY; clip.joint_count()];
        let settings = SampleSettings::default();
        let (mut nu, mut nc, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..PAIRED_ROUNDS {
            let start = Instant::now();
            for &t in &ts {
                sample_clip(clip, f64::from(t), &settings, &mut pose).unwrap();
                black_box(&mut pose);
            }
            let u = start.elapsed().as_secs_f64();
            let start = Instant::now();
            for &t in &ts {
                compressed.sample_pose(t, &mut pose);
                black_box(&mut pose);
            }
            let d = start.elapsed().as_secs_f64();
            nu.push(u * 1e9 / 256.0);
            nc.push(d * 1e9 / 256.0);
            ratios.push(d / u);
        }
        eprintln!(
            "| {short} | {:.0} | {:.0} | {:.2} |",
            median(&mut nu),
            median(&mut nc),
            median(&mut ratios)
        );
    }

    let mut group = c.benchmark_group("pose");
    for (short, clip, compressed) in &loaded {
        let ts = times(clip.duration_s(), 256);
        let mut pose = vec![Transform::IDENTITY; clip.joint_count()];
        let settings = SampleSettings::default();
        let mut i = 0;
        group.bench_function(format!("{short}/sample_uncompressed"), |b| {
            b.iter(|| {
                i = (i + 1) & 255;
                sample_clip(clip, f64::from(ts[i]), &settings, &mut pose).unwrap();
                black_box(&pose);
            })
        });
        let mut i = 0;
        group.bench_function(format!("{short}/decode_compressed"), |b| {
            b.iter(|| {
                i = (i + 1) & 255;
                compressed.sample_pose(ts[i], &mut pose);
                black_box(&pose);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
