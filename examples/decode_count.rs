//! Repeatable decode-cost measurement for instruction counters (callgrind), next to the criterion
//! bench `benches/compress.rs`.
//!
//! ```text
//! cargo build --release --no-default-features --example decode_count
//! B=target/release/examples/decode_count
//! $B prepare /tmp/tlc                       # compress the shared takes as the bench does
//! valgrind --tool=callgrind $B compressed /tmp/tlc cmu_01_01 0      # fixed cost (loading)
//! valgrind --tool=callgrind $B compressed /tmp/tlc cmu_01_01 10000  # + 10000 decodes
//! valgrind --tool=callgrind $B uncompressed /tmp/tlc cmu_01_01 10000
//! ```
//! (difference of the two totals) / 10000 = instructions per pose. The times are the bench's: 256
//! golden-ratio times over the clip, never on a frame, cycled. More modes:
//! `$B time /tmp/tlc CLIP ROUNDS` (paired wall-clock timing, medians) and
//! `$B cold /tmp/tlc CLIP N` (the bench's cold paired timing, N poses a side, twice the
//! last-level cache streamed before each pose as the bench does; with `WARM_CODE=OTHER` a pose of
//! clip OTHER is decoded after the eviction, so only the data is cold),
//! `$B parts /tmp/tlc CLIP N` (where a cold pose's time goes: N rounds of cold poses, each with
//! one thing the pose reads warmed first, in one process; the sample's code and constants from
//! `eval $(tools/acl_side_by_side/pf_syms.sh $B)`),
//! `$B checksum /tmp/tlc CLIP N` (a hash of the decoded poses, to check that two builds decode
//! the same bits), `$B info /tmp/tlc CLIP 0` (joints, tracks, segments of the file), and, in a
//! build of `scripts/decode_ab_inprocess.sh` only, `$B ab /tmp/tlc CLIP ROUNDS` and
//! `$B abcold /tmp/tlc CLIP N` (this revision's AVX2 decoder against another's in one
//! process: rounds of the 256 times, or single cold poses, alternating; medians of the ratios).
//! A take other than the nine shared ones: `$B prepare DIR FILE@UNIT_CM@ERROR_CM...` compresses
//! those takes instead (automatic mode at that error), and a CLIP of `FILE@UNIT_CM` names one
//! (its `.tlc` is `DIR/STEM.tlc`).

use std::hint::black_box;
use std::path::Path;

use taglane::core::anim::{
    Clip, ImportOptions, SampleSettings, Transform, load_animation, sample_clip,
};
use taglane::core::compress::metric::golden_times;
use taglane::core::compress::{CompressSettings, CompressedClip, compress};

#[path = "../benches/common/cold_cache.rs"]
mod cold_cache;
#[path = "../benches/common/paired.rs"]
mod paired;

/// `parts`: where a cold pose's time goes. Each of `n` rounds runs every variant in turn, in one
/// process (so the host's slow and fast minutes fall on all of them alike): the bench's eviction,
/// then one thing the pose reads warmed outside the timed part, then one timed compressed pose;
/// and one uncompressed cold pose as the reference. Prints the median of each and what warming it
/// saved; the last rows are controls (as many read-only lines as the constants that the pose
/// never reads, and a wait that reads no memory), which a variant's saving is read against. The
/// sample's code and constants come from `tools/acl_side_by_side/pf_syms.sh` run on this binary
/// (`eval $(tools/acl_side_by_side/pf_syms.sh target/release/examples/decode_count)`: `TL_SYM`
/// and `TL_RO`, addresses in the file, as `nm` and `objdump` give them).
#[allow(unsafe_code)]
fn parts(
    clip: &Clip,
    compressed: &CompressedClip,
    settings: &SampleSettings,
    ts: &[f32],
    pose: &mut [Transform],
    name: &str,
    n: usize,
) {
    // Where this binary is mapped: its first mapping (file offset 0) in /proc/self/maps.
    let exe = std::env::current_exe().expect("current_exe");
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    let line = maps
        .lines()
        .find(|l| l.ends_with(exe.to_str().expect("utf-8 path")))
        .expect("this binary in /proc/self/maps");
    let hex = |s: &str| usize::from_str_radix(s.trim().trim_start_matches("0x"), 16).expect("hex");
    let base = hex(line.split('-').next().expect("a mapping"));
    let env = |k: &str| std::env::var(k).unwrap_or_else(|_| panic!("{k}: from pf_syms.sh"));
    let sym = env("TL_SYM");
    let (at, size) = sym.split_once(':').expect("TL_SYM=OFFSET:SIZE");
    let code = base + hex(at)..base + hex(at) + hex(size);
    let constants: Vec<usize> = env("TL_RO").split(',').map(|a| base + hex(a)).collect();
    // As many lines of read-only data as the constants, over as many pages, that the pose
    // never reads: each constant's line 64 KiB on, where that is in the same mapping and not a
    // constant's. Warming these saves a cold pose about what warming its constants does (and a
    // wait that reads nothing does not), so a variant's saving is read against this control's,
    // not against nothing: 2026-11-29, warming four lines of constants on two pages "saved"
    // 430-480 ns, yet a build whose pose read no line on those pages was no faster cold.
    let mapping_of = |a: usize| {
        maps.lines().find_map(|l| {
            let (lo, hi) = l.split_whitespace().next()?.split_once('-')?;
            let (lo, hi) = (hex(lo), hex(hi));
            (lo..hi).contains(&a).then_some(lo..hi)
        })
    };
    let unused_ro: Vec<usize> = constants
        .iter()
        .map(|&a| a + (64 << 10))
        .filter(|&a| {
            let here = mapping_of(a);
            here.is_some() && here == mapping_of(a - (64 << 10)) && !constants.contains(&(a & !63))
        })
        .collect();
    // A page of code the pose never runs (this function's), and a heap page it never reads.
    let unused_code = parts as fn(_, _, _, _, _, _, _) as usize & !4095;
    let junk = vec![1u8; 8 << 20];
    let unused_heap = junk.as_ptr() as usize + (4 << 20);
    let read = |a: usize| {
        // SAFETY: every address read is in a mapping of this process: the binary's code and
        // read-only data (`nm`, `objdump`; the unused read-only lines checked to lie in the
        // mapping of a constant), or a live allocation.
        unsafe { std::ptr::read_volatile(a as *const u8) }
    };
    #[inline(never)]
    fn stack_below() {
        let mut a = [0u8; 8192];
        for i in (0..a.len()).step_by(64) {
            a[i] = i as u8;
        }
        black_box(&a);
    }
    // What each variant warms: any of these, together.
    const CODE: u16 = 1;
    const PAGES: u16 = 2;
    const CONSTANTS: u16 = 4;
    const STACK: u16 = 8;
    const POSE: u16 = 16;
    const BYTES: u16 = 32;
    const STRUCT: u16 = 64;
    const UNUSED_CODE: u16 = 128;
    const UNUSED_HEAP: u16 = 256;
    const UNUSED_RO: u16 = 512;
    const WAIT: u16 = 1024;
    const VARIANTS: [(&str, u16); 14] = [
        ("nothing", 0),
        ("the sample's code, every line read as data", CODE),
        ("the sample's code, one byte a page", PAGES),
        ("its constants (TL_RO)", CONSTANTS),
        ("8 KiB of stack below the caller", STACK),
        ("the pose written to", POSE),
        ("every line of the clip's bytes", BYTES),
        ("the CompressedClip", STRUCT),
        ("code lines and constants", CODE | CONSTANTS),
        (
            "all of the above",
            CODE | CONSTANTS | STACK | POSE | BYTES | STRUCT,
        ),
        ("a page of code the pose never runs", UNUSED_CODE),
        ("a heap page the pose never reads", UNUSED_HEAP),
        (
            "as many read-only lines the pose never reads (TL_RO + 64 KiB)",
            UNUSED_RO,
        ),
        (
            "no memory: 2,000 dependent multiplications (about 1 us)",
            WAIT,
        ),
    ];
    let mut buf = cold_cache::eviction_buffer();
    // One list of times per variant, then the uncompressed reference.
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len() + 1];
    for i in 0..n {
        let t = ts[(i * 97) & 255];
        for (v, times) in times.iter_mut().enumerate() {
            cold_cache::evict(&mut buf);
            let warm = VARIANTS.get(v).map_or(0, |&(_, w)| w);
            let mut acc = 0u8;
            if warm & CODE != 0 {
                for a in (code.start & !63..code.end).step_by(64) {
                    acc ^= read(a.max(code.start));
                }
            }
            if warm & PAGES != 0 {
                for a in (code.start & !4095..code.end).step_by(4096) {
                    acc ^= read(a.max(code.start));
                }
            }
            if warm & CONSTANTS != 0 {
                for &a in &constants {
                    acc ^= read(a);
                }
            }
            if warm & STACK != 0 {
                stack_below();
            }
            if warm & POSE != 0 {
                for p in pose.iter_mut() {
                    p.scale.x = 1.0;
                }
            }
            if warm & BYTES != 0 {
                for b in compressed.bytes().iter().step_by(64) {
                    acc ^= *b;
                }
            }
            if warm & STRUCT != 0 {
                let s = std::ptr::from_ref(compressed) as usize;
                for a in (s..s + std::mem::size_of::<CompressedClip>()).step_by(32) {
                    acc ^= read(a);
                }
            }
            if warm & UNUSED_CODE != 0 {
                acc ^= read(unused_code);
            }
            if warm & UNUSED_HEAP != 0 {
                acc ^= read(unused_heap);
            }
            if warm & WAIT != 0 {
                let mut x = black_box(3u64);
                for _ in 0..2000 {
                    x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                }
                acc ^= x as u8;
            }
            if warm & UNUSED_RO != 0 {
                for &a in &unused_ro {
                    acc ^= read(a);
                }
            }
            black_box(acc);
            let start = std::time::Instant::now();
            if v == VARIANTS.len() {
                sample_clip(clip, f64::from(t), settings, pose).unwrap();
            } else {
                compressed.sample_pose(t, pose);
            }
            black_box(&mut *pose);
            times.push(start.elapsed().as_secs_f64() * 1e9);
        }
    }
    let uncompressed = median(&mut times[VARIANTS.len()]);
    let nothing = median(&mut times[0]);
    println!("{name} parts: uncompressed cold {uncompressed:.0} ns ({n} rounds)");
    for (v, (what, _)) in VARIANTS.iter().enumerate() {
        let m = median(&mut times[v]);
        println!(
            "  {m:6.0} ns  x {:.2}  saves {:5.0} ns  warmed: {what}",
            m / uncompressed,
            nothing - m
        );
    }
}

/// The middle value of `v` (sorted in place).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// (short name, file, cm per unit, ACL max error cm): as in `benches/compress.rs`.
const CLIPS: [(&str, &str, f32, f32); 9] = [
    (
        "dance",
        "bandai_dataset-1_dance-short_normal_001.bvh",
        1.0,
        0.0284,
    ),
    ("kick", "bandai_dataset-1_kick_normal_001.bvh", 1.0, 0.0130),
    ("walk1", "bandai_dataset-1_walk_normal_001.bvh", 1.0, 0.0146),
    (
        "respond",
        "bandai_dataset-1_respond_normal_001.bvh",
        1.0,
        0.0210,
    ),
    (
        "walk-turn-left",
        "bandai_dataset-2_walk-turn-left_normal_001.bvh",
        1.0,
        0.0145,
    ),
    ("walk2", "bandai_dataset-2_walk_normal_001.bvh", 1.0, 0.0150),
    ("cmu_01_01", "cmu_01_01_hops_turn.bvh", 5.644, 0.0177),
    ("cmu_01_03", "cmu_01_03_climb_hang.bvh", 5.644, 0.0156),
    ("cmu_131_03", "cmu_131_03_hop_start_stop.bvh", 5.644, 0.0151),
];

fn load(file: &str, unit_cm: f32) -> Clip {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/mocap")
        .join(file);
    load_path(&path, unit_cm)
}

fn load_path(path: &Path, unit_cm: f32) -> Clip {
    let opts = ImportOptions {
        unit_cm: Some(unit_cm),
        ..Default::default()
    };
    load_animation(path, &opts)
        .expect("clip loads")
        .clips
        .remove(0)
}

/// A take other than the nine: `FILE@UNIT_CM[@...]`, loaded at that unit, with the parts.
fn other_take(arg: &str) -> (Clip, Vec<&str>) {
    let parts: Vec<&str> = arg.split('@').collect();
    let unit: f32 = parts.get(1).expect("FILE@UNIT_CM").parse().expect("unit");
    (load_path(Path::new(parts[0]), unit), parts)
}

/// The short name of a clip argument: one of the nine, or the file stem of `FILE@...`.
fn take_name(arg: &str) -> String {
    match arg.split_once('@') {
        Some((file, _)) => Path::new(file)
            .file_stem()
            .expect("a file name")
            .to_string_lossy()
            .into_owned(),
        None => arg.to_string(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: decode_count prepare DIR [FILE@UNIT_CM@ERROR_CM...] | (compressed|uncompressed|time|cold|parts|checksum) DIR CLIP N";
    let mode = args.get(1).expect(usage).as_str();
    let dir = Path::new(args.get(2).expect(usage));
    if mode == "prepare" {
        std::fs::create_dir_all(dir).expect("create DIR");
        // Takes named after DIR (`FILE@UNIT_CM@ERROR_CM`) instead of the nine shared ones.
        let extra: Vec<(String, Clip, f32)> = args[3..]
            .iter()
            .map(|a| {
                let (clip, parts) = other_take(a);
                let err: f32 = parts
                    .get(2)
                    .expect("FILE@UNIT_CM@ERROR_CM")
                    .parse()
                    .expect("error");
                (take_name(a), clip, err)
            })
            .collect();
        let takes: Vec<(String, Clip, f32)> = if extra.is_empty() {
            CLIPS
                .iter()
                .map(|&(short, file, unit, acl_err)| (short.to_string(), load(file, unit), acl_err))
                .collect()
        } else {
            extra
        };
        for (short, clip, acl_err) in takes {
            let r = compress(&clip, &CompressSettings::auto(acl_err * 0.98)).expect("compresses");
            std::fs::write(dir.join(format!("{short}.tlc")), r.clip.bytes()).expect("write");
            println!(
                "{short}: ratio {:.3}, max error {:.4} cm at frames, {:.4} cm between frames",
                r.ratio, r.error.max_error_cm, r.error.between.max_error_cm
            );
        }
        return;
    }
    let name = args.get(3).expect(usage);
    let n: usize = args.get(4).expect(usage).parse().expect("N");
    let clip = if name.contains('@') {
        other_take(name).0
    } else {
        let &(_, file, unit, _) = CLIPS.iter().find(|c| c.0 == name).expect("unknown clip");
        load(file, unit)
    };
    let name = &take_name(name);
    let compressed =
        CompressedClip::from_bytes(std::fs::read(dir.join(format!("{name}.tlc"))).expect("read"))
            .expect("valid .tlc");
    let ts = golden_times(clip.duration_s(), 256);
    let mut pose = vec![Transform::IDENTITY; clip.joint_count()];
    let settings = SampleSettings::default();
    match mode {
        "info" => {
            let l = compressed.layout();
            println!(
                "{name}: {} joints, {} bytes, tracks {:?}, {} segments of {} keys, step {}, header bytes {}, ranges {}, format {:?}",
                l.joint_count,
                compressed.size_bytes(),
                l.track_counts,
                l.segment_count,
                l.segment_frames,
                l.frame_step,
                l.segment_header_bytes,
                compressed.segment_ranges(),
                l.rotation_format
            );
            // Raw float32 slots send their group to the portable decoder.
            println!(
                "segments with a raw float32 slot: {:?}",
                compressed.segments_with_raw_slots()
            );
        }
        "compressed" => {
            for i in 0..n {
                compressed.sample_pose(ts[i & 255], &mut pose);
                black_box(&mut pose);
            }
        }
        "uncompressed" => {
            for i in 0..n {
                sample_clip(&clip, f64::from(ts[i & 255]), &settings, &mut pose).unwrap();
                black_box(&mut pose);
            }
        }
        "time" => {
            // Paired timing: n rounds of 256 poses alternating between the two; medians.
            let (mut nu, mut nc, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..n {
                let start = std::time::Instant::now();
                for &t in &ts {
                    sample_clip(&clip, f64::from(t), &settings, &mut pose).unwrap();
                    black_box(&mut pose);
                }
                let u = start.elapsed().as_secs_f64();
                let start = std::time::Instant::now();
                for &t in &ts {
                    compressed.sample_pose(t, &mut pose);
                    black_box(&mut pose);
                }
                let d = start.elapsed().as_secs_f64();
                nu.push(u * 1e9 / 256.0);
                nc.push(d * 1e9 / 256.0);
                ratios.push(d / u);
            }
            println!(
                "{name}: uncompressed {:.0} ns, compressed {:.0} ns, x {:.2}",
                median(&mut nu),
                median(&mut nc),
                median(&mut ratios)
            );
        }
        #[cfg(taglane_decoder_ab)]
        "ab" | "abcold" => {
            use std::sync::atomic::Ordering::Relaxed;
            use taglane::core::compress::DECODE_WITH_BASE;
            let cold = mode == "abcold";
            let mut buf = if cold {
                cold_cache::eviction_buffer()
            } else {
                Vec::new()
            };
            let (mut nb, mut nt, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
            for i in 0..n {
                let mut one = |base: bool| {
                    DECODE_WITH_BASE.store(base, Relaxed);
                    let start = if cold {
                        cold_cache::evict(&mut buf);
                        let start = std::time::Instant::now();
                        compressed.sample_pose(ts[(i * 97) & 255], &mut pose);
                        black_box(&mut pose);
                        start
                    } else {
                        let start = std::time::Instant::now();
                        for &t in &ts {
                            compressed.sample_pose(t, &mut pose);
                            black_box(&mut pose);
                        }
                        start
                    };
                    let per = if cold { 1.0 } else { 256.0 };
                    start.elapsed().as_secs_f64() * 1e9 / per
                };
                // Side `false`: the base's decoder.
                let (b, t) = paired::alternate(i, |this| one(!this));
                nb.push(b);
                nt.push(t);
                ratios.push(t / b);
            }
            println!(
                "{name} {mode}: base {:.0} ns, this {:.0} ns, this / base median {:.3} ({n} rounds)",
                median(&mut nb),
                median(&mut nt),
                median(&mut ratios)
            );
        }
        "cold" => {
            // The bench's cold timing: before each pose a buffer of twice the last-level cache is
            // streamed through the caches; only the pose is timed; n poses
            // of each kind at scattered times, alternating which goes first; medians.
            // With WARM_CODE=CLIP, a pose of another clip is decoded (and sampled) after the
            // buffer, so the code is warm and only this clip's data is cold.
            let other = std::env::var("WARM_CODE").ok().map(|o| {
                let &(_, file, unit, _) = CLIPS.iter().find(|c| c.0 == o).expect("unknown clip");
                let c = CompressedClip::from_bytes(
                    std::fs::read(dir.join(format!("{o}.tlc"))).expect("read"),
                )
                .expect("valid .tlc");
                (load(file, unit), c)
            });
            let mut buf = cold_cache::eviction_buffer();
            let (mut nu, mut nc) = (Vec::new(), Vec::new());
            for i in 0..n {
                let t = ts[(i * 97) & 255];
                let one = |compressed_side: bool| {
                    cold_cache::evict(&mut buf);
                    if let Some((oc, o)) = &other {
                        let mut p = vec![Transform::IDENTITY; oc.joint_count()];
                        o.sample_pose(o.duration_s() * 0.37, &mut p);
                        sample_clip(oc, f64::from(oc.duration_s() * 0.37), &settings, &mut p)
                            .unwrap();
                        black_box(&p);
                    }
                    let start = std::time::Instant::now();
                    if compressed_side {
                        compressed.sample_pose(t, &mut pose);
                    } else {
                        sample_clip(&clip, f64::from(t), &settings, &mut pose).unwrap();
                    }
                    black_box(&mut pose);
                    start.elapsed().as_secs_f64() * 1e9
                };
                let (u, c) = paired::alternate(i, one);
                nu.push(u);
                nc.push(c);
            }
            let (u, c) = (median(&mut nu), median(&mut nc));
            println!(
                "{name} cold: uncompressed {u:.0} ns, compressed {c:.0} ns, x {:.2}",
                c / u
            );
        }
        "parts" => parts(&clip, &compressed, &settings, &ts, &mut pose, name, n),
        "checksum" => {
            // Every frame, every half frame and n scattered times: a hash of the output bits,
            // to check that two builds decode identically.
            let mut h = 0xcbf2_9ce4_8422_2325u64;
            let mut eat = |pose: &[Transform]| {
                for t in pose {
                    for x in t
                        .rotation
                        .to_array()
                        .iter()
                        .chain(&t.translation.to_array())
                        .chain(&t.scale.to_array())
                    {
                        h = (h ^ u64::from(x.to_bits())).wrapping_mul(0x100_0000_01b3);
                    }
                }
            };
            for f in 0..2 * compressed.frame_count() {
                compressed.sample_pose_at_frame(f as f32 * 0.5, &mut pose);
                eat(&pose);
            }
            for i in 0..n {
                let t = clip.duration_s() * ((i as f32 * 0.618_034 + 0.123).fract());
                compressed.sample_pose(t, &mut pose);
                eat(&pose);
            }
            println!("{name}: {h:016x}");
        }
        _ => panic!("{usage}"),
    }
}
