//! Compression benchmarks on the shared takes (skipped with a message when `../shared/mocap` is
//! missing). Printed before the criterion timings, all from the same run:
//!
//! 1. per clip, compressed in automatic mode at ACL's max error on that clip: ratio, the error at
//!    frames and between frames (ACL's metric, `metric.rs`), compress time, resident bytes of the
//!    loaded clip next to the uncompressed clip and ACL's;
//! 2. a warm paired timing: rounds of 256 poses alternating between sampling the uncompressed clip
//!    (`sample_clip`, nlerp) and decoding the compressed one at the same 256 scattered times
//!    (golden-ratio sequence, never on a frame); medians of each side and of the per-round ratios;
//! 3. a cold paired timing: before each pose, a buffer of twice the last-level cache is streamed
//!    through the cache, then only the one pose is timed; alternating sides, medians.
//!
//! Then criterion groups `pose/<clip>/{sample_uncompressed,decode_compressed}` (warm).
//!
//! `cargo bench --no-default-features --bench compress -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "common/cold_cache.rs"]
mod cold_cache;
#[path = "common/mode.rs"]
mod mode;
#[path = "common/paired.rs"]
mod paired;
use cold_cache::{evict, eviction_buffer, last_level_cache_bytes};
use mode::measuring;
use taglane::core::anim::{
    Clip, ImportOptions, SampleSettings, Transform, load_animation, sample_clip,
};
use taglane::core::compress::metric::golden_times;
use taglane::core::compress::{CompressSettings, CompressedClip, compress};

/// (short name, file, cm per unit, ACL max error cm, ACL ratio): ACL's figures on these takes
/// (issue 4, reproduced by the study of issue 17).
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

/// The budget is this fraction of ACL's max error (the same for every clip): the encoder holds it
/// at frames and at a quarter, half and three quarters between frames; the margin covers the
/// scattered times, which the encoder does not see.
const BUDGET_OF_ACL: f32 = 0.98;

/// Bytes of ACL's decompression context, as the issue states it (ACL keeps no other per-clip
/// state: it decodes from its compressed buffer).
const ACL_CONTEXT_BYTES: usize = 128;

/// Rounds of the warm paired timing (each 256 poses of each kind).
const PAIRED_ROUNDS: usize = 2000;
/// Poses of each kind in the cold paired timing.
const COLD_POSES: usize = 150;

/// Frames of each take compressed when the bench only checks that it works (`cargo test --benches`,
/// an unoptimised build): the whole takes are the regression test's (`tests/core/compress_mocap.rs`).
/// In that mode the paired timings also run two rounds and two cold poses a side (a cold pose
/// streams twice the last-level cache, which takes long in an unoptimised build).
const CHECK_FRAMES: usize = 60;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

struct Loaded {
    short: &'static str,
    clip: Clip,
    compressed: CompressedClip,
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
        "| clip | frames | ratio | ACL ratio | at frames cm | between cm | of which scattered | ACL max cm | worst at frames | worst between | compress ms | resident B | uncompressed B | ACL B |"
    );
    eprintln!("|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|");
    for (short, file, unit, acl_err, acl_ratio) in CLIPS {
        let opts = ImportOptions {
            unit_cm: Some(unit),
            ..Default::default()
        };
        let mut clip = load_animation(&Path::new(dir).join(file), &opts)
            .expect("shared clip loads")
            .clips
            .remove(0);
        if !measuring() {
            clip = clip
                .sub_clip(0, clip.frame_count.min(CHECK_FRAMES), &clip.name)
                .expect("an excerpt of the take");
        }
        let r =
            compress(&clip, &CompressSettings::auto(acl_err * BUDGET_OF_ACL)).expect("compresses");
        raw += r.raw_bytes;
        comp += r.compressed_bytes;
        let e = &r.error;
        let uncompressed = clip.frame_count * clip.joint_count() * 40;
        let acl_bytes = (r.raw_bytes as f64 / acl_ratio).round() as usize + ACL_CONTEXT_BYTES;
        eprintln!(
            "| {short} | {} | {:.2} | {acl_ratio:.2} | {:.4} | {:.4} | {:.4} | {acl_err:.4} | {} f{} | {} f{:.2} | {:.0} | {} | {uncompressed} | {acl_bytes} |",
            clip.frame_count,
            r.ratio,
            e.max_error_cm,
            e.between.max_error_cm,
            e.between.golden_max_error_cm,
            e.worst.joint_name,
            e.worst.frame,
            e.between.worst.joint_name,
            e.between.worst.position,
            r.compress_ms,
            r.clip.resident_bytes(),
        );
        loaded.push(Loaded {
            short,
            clip,
            compressed: r.clip,
        });
    }
    eprintln!(
        "| total | | {:.3} | 12.23 | | | | | | | | | | |",
        raw as f64 / comp as f64
    );
    eprintln!(
        "context per loaded clip: {} bytes (file bytes + context = resident)",
        CompressedClip::context_bytes()
    );

    // Warm paired timing, robust to load changing between criterion's separate runs on a shared
    // machine.
    eprintln!(
        "| clip | warm: sample uncompressed ns | warm: decode compressed ns | warm x (median of paired rounds) |"
    );
    eprintln!("|---|---:|---:|---:|");
    let settings = SampleSettings::default();
    for l in &loaded {
        let ts = golden_times(l.clip.duration_s(), 256);
        let mut pose = vec![Transform::IDENTITY; l.clip.joint_count()];
        let (mut nu, mut nc, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..if measuring() { PAIRED_ROUNDS } else { 2 } {
            let start = Instant::now();
            for &t in &ts {
                sample_clip(&l.clip, f64::from(t), &settings, &mut pose).unwrap();
                black_box(&mut pose);
            }
            let u = start.elapsed().as_secs_f64();
            let start = Instant::now();
            for &t in &ts {
                l.compressed.sample_pose(t, &mut pose);
                black_box(&mut pose);
            }
            let d = start.elapsed().as_secs_f64();
            nu.push(u * 1e9 / 256.0);
            nc.push(d * 1e9 / 256.0);
            ratios.push(d / u);
        }
        eprintln!(
            "| {} | {:.0} | {:.0} | {:.2} |",
            l.short,
            median(&mut nu),
            median(&mut nc),
            median(&mut ratios)
        );
    }

    // Cold paired timing.
    let llc = last_level_cache_bytes();
    let mut buf = eviction_buffer();
    eprintln!(
        "cold: {} bytes streamed before each pose (2 x the {} byte last-level cache)",
        buf.len(),
        llc
    );
    eprintln!(
        "| clip | cold: sample uncompressed ns | cold: decode compressed ns | cold x (ratio of medians) | cold x (median of pairs) |"
    );
    eprintln!("|---|---:|---:|---:|---:|");
    // Checking (not measuring): one take is enough to run the code.
    for l in loaded.iter().take(if measuring() { usize::MAX } else { 1 }) {
        let ts = golden_times(
            l.clip.duration_s(),
            if measuring() { COLD_POSES } else { 2 },
        );
        let mut pose = vec![Transform::IDENTITY; l.clip.joint_count()];
        let (mut nu, mut nc, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for (i, &t) in ts.iter().enumerate() {
            let time_one = |compressed: bool| {
                evict(&mut buf);
                let start = Instant::now();
                if compressed {
                    l.compressed.sample_pose(t, &mut pose);
                } else {
                    sample_clip(&l.clip, f64::from(t), &settings, &mut pose).unwrap();
                }
                black_box(&mut pose);
                start.elapsed().as_secs_f64() * 1e9
            };
            let (u, d) = paired::alternate(i, time_one);
            nu.push(u);
            nc.push(d);
            ratios.push(d / u);
        }
        let (mu, mc) = (median(&mut nu), median(&mut nc));
        eprintln!(
            "| {} | {mu:.0} | {mc:.0} | {:.2} | {:.2} |",
            l.short,
            mc / mu,
            median(&mut ratios)
        );
    }
    drop(buf);

    let mut group = c.benchmark_group("pose");
    for l in &loaded {
        let ts = golden_times(l.clip.duration_s(), 256);
        let mut pose = vec![Transform::IDENTITY; l.clip.joint_count()];
        let mut i = 0;
        group.bench_function(format!("{}/sample_uncompressed", l.short), |b| {
            b.iter(|| {
                i = (i + 1) & 255;
                sample_clip(&l.clip, f64::from(ts[i]), &settings, &mut pose).unwrap();
                black_box(&pose);
            })
        });
        let mut i = 0;
        group.bench_function(format!("{}/decode_compressed", l.short), |b| {
            b.iter(|| {
                i = (i + 1) & 255;
                l.compressed.sample_pose(ts[i], &mut pose);
                black_box(&pose);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
