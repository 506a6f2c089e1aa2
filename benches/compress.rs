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
//!    through the cache, then only the one pose is timed; alternating sides, medians. Each take is
//!    timed in several processes of this binary, run in turn with the other takes', and the table
//!    gives the mean over the processes and their range: one process is one placement of the
//!    code, the clip and the pose in memory, and a cold pose's time moves with it (the ratio of
//!    one process has a spread of about 0.05 that more poses in the same process do not shrink;
//!    docs/PERFORMANCE.md, "One process is one sample").
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
/// Poses of each kind in the cold paired timing of one take, over all its processes.
const COLD_POSES: usize = 150;
/// Processes the cold paired timing of each take is split over.
const COLD_PROCESSES: usize = 5;
/// Set in a process this binary starts for the cold timing of one take: the take's index in
/// [`CLIPS`], the number of poses of each kind, the index of the process (which picks its times)
/// and the `.tlc` file of the take's compressed clip, separated by `;` (the path last, whole).
const COLD_CHILD_ENV: &str = "TAGLANE_BENCH_COLD";

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

/// Loads take `k` of [`CLIPS`] from `dir` (its first [`CHECK_FRAMES`] frames when not measuring).
fn load_take(dir: &str, k: usize) -> Clip {
    let (_, file, unit, _, _) = CLIPS[k];
    let opts = ImportOptions {
        unit_cm: Some(unit),
        ..Default::default()
    };
    let clip = load_animation(&Path::new(dir).join(file), &opts)
        .expect("shared clip loads")
        .clips
        .remove(0);
    if measuring() {
        clip
    } else {
        clip.sub_clip(0, clip.frame_count.min(CHECK_FRAMES), &clip.name)
            .expect("an excerpt of the take")
    }
}

/// The medians of one process's cold paired timing: uncompressed ns, compressed ns, and the
/// median of the pairs' ratios.
struct ColdTimes {
    uncompressed: f64,
    compressed: f64,
    ratio: f64,
}

/// The cold paired timing of `poses` poses of each kind, at the times of process `process`.
fn cold_times(clip: &Clip, compressed: &CompressedClip, poses: usize, process: usize) -> ColdTimes {
    let settings = SampleSettings::default();
    // Every process's times are distinct: its share of `COLD_PROCESSES` times as many.
    let all = golden_times(clip.duration_s(), poses * COLD_PROCESSES);
    let ts: Vec<f32> = all
        .iter()
        .skip(process)
        .step_by(COLD_PROCESSES)
        .copied()
        .collect();
    let mut buf = eviction_buffer();
    let mut pose = vec![Transform::IDENTITY; clip.joint_count()];
    let (mut nu, mut nc, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for (i, &t) in ts.iter().enumerate() {
        let time_one = |side_compressed: bool| {
            evict(&mut buf);
            let start = Instant::now();
            if side_compressed {
                compressed.sample_pose(t, &mut pose);
            } else {
                sample_clip(clip, f64::from(t), &settings, &mut pose).unwrap();
            }
            black_box(&mut pose);
            start.elapsed().as_secs_f64() * 1e9
        };
        let (u, d) = paired::alternate(i, time_one);
        nu.push(u);
        nc.push(d);
        ratios.push(d / u);
    }
    ColdTimes {
        uncompressed: median(&mut nu),
        compressed: median(&mut nc),
        ratio: median(&mut ratios),
    }
}

/// A process started for the cold timing of one take ([`COLD_CHILD_ENV`]): prints its
/// [`ColdTimes`] on one line of stdout.
fn cold_child(dir: &str, spec: &str) {
    let f: Vec<&str> = spec.splitn(4, ';').collect();
    let [k, poses, process, tlc] = f[..] else {
        panic!("{COLD_CHILD_ENV}: expected 4 fields separated by ';', found {spec:?}");
    };
    let clip = load_take(dir, k.parse().expect("take index"));
    let compressed = CompressedClip::from_bytes(std::fs::read(tlc).expect("the take's .tlc"))
        .expect("a valid .tlc");
    let c = cold_times(
        &clip,
        &compressed,
        poses.parse().expect("poses"),
        process.parse().expect("process index"),
    );
    println!("{} {} {}", c.uncompressed, c.compressed, c.ratio);
}

/// Runs [`cold_child`] in a new process of this binary and reads its line.
fn cold_in_process(k: usize, tlc: &Path, poses: usize, process: usize) -> ColdTimes {
    let exe = std::env::current_exe().expect("the bench binary's path");
    let mut cmd = std::process::Command::new(exe);
    if measuring() {
        // Measuring in the child too (`measuring`); a filter no criterion group matches.
        cmd.args(["--bench", "cold-child-runs-no-group"]);
    }
    let out = cmd
        .env(
            COLD_CHILD_ENV,
            format!("{k};{poses};{process};{}", tlc.display()),
        )
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("the cold timing's process starts");
    assert!(out.status.success(), "the cold timing's process failed");
    let line = String::from_utf8_lossy(&out.stdout);
    let v: Vec<f64> = line
        .split_whitespace()
        .map(|x| x.parse().expect("a number"))
        .collect();
    let [uncompressed, compressed, ratio] = v[..] else {
        panic!("the cold timing's process printed {line:?}: expected three numbers");
    };
    ColdTimes {
        uncompressed,
        compressed,
        ratio,
    }
}

fn bench(c: &mut Criterion) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/mocap");
    if !Path::new(dir).exists() {
        eprintln!("compress bench: {dir} not found, skipping");
        return;
    }
    if let Ok(spec) = std::env::var(COLD_CHILD_ENV) {
        cold_child(dir, &spec);
        std::process::exit(0);
    }
    let (mut raw, mut comp) = (0usize, 0usize);
    let mut loaded = Vec::new();
    eprintln!(
        "| clip | frames | ratio | ACL ratio | at frames cm | between cm | of which scattered | ACL max cm | worst at frames | worst between | compress ms | resident B | uncompressed B | ACL B |"
    );
    eprintln!("|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|");
    for (k, (short, _, _, acl_err, acl_ratio)) in CLIPS.into_iter().enumerate() {
        let clip = load_take(dir, k);
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

    // Cold paired timing: each take in `COLD_PROCESSES` processes, the takes in turn.
    // Checking (not measuring): one take, one process of two poses a side, to run the code.
    let takes = if measuring() { loaded.len() } else { 1 };
    let (processes, poses) = if measuring() {
        (COLD_PROCESSES, COLD_POSES / COLD_PROCESSES)
    } else {
        (1, 2)
    };
    let llc = last_level_cache_bytes();
    eprintln!(
        "cold: {} bytes streamed before each pose (2 x the {llc} byte last-level cache); each take in {processes} processes of {poses} poses a side",
        2 * llc,
    );
    eprintln!(
        "| clip | cold: sample uncompressed ns | cold: decode compressed ns | cold x (mean of the processes' medians of pairs) | cold x, the processes' range |"
    );
    eprintln!("|---|---:|---:|---:|---|");
    let tmp = std::env::temp_dir().join(format!("taglane-bench-cold-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("a temporary folder");
    let files: Vec<_> = loaded[..takes]
        .iter()
        .map(|l| {
            let f = tmp.join(format!("{}.tlc", l.short));
            std::fs::write(&f, l.compressed.bytes()).expect("the take's .tlc written");
            f
        })
        .collect();
    let mut runs: Vec<Vec<ColdTimes>> = (0..takes).map(|_| Vec::new()).collect();
    for p in 0..processes {
        for (k, f) in files.iter().enumerate() {
            runs[k].push(cold_in_process(k, f, poses, p));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    for (l, r) in loaded.iter().zip(&runs) {
        let mean = |f: fn(&ColdTimes) -> f64| r.iter().map(f).sum::<f64>() / r.len() as f64;
        let (lo, hi) = r.iter().fold((f64::MAX, f64::MIN), |(lo, hi), c| {
            (lo.min(c.ratio), hi.max(c.ratio))
        });
        eprintln!(
            "| {} | {:.0} | {:.0} | {:.2} | {lo:.2}-{hi:.2} |",
            l.short,
            mean(|c| c.uncompressed),
            mean(|c| c.compressed),
            mean(|c| c.ratio),
        );
    }

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
