//! ACL, taglane and the uncompressed clip decoded alternately in one process, on the nine shared
//! takes: warm (rounds of the bench's 256 scattered times) and cold (twice the last-level cache
//! streamed before each pose, only the pose timed), as `benches/compress.rs` and
//! `examples/decode_count.rs` time them. Run through `run.sh`; see README.md.
//!
//! ```text
//! acl-side-by-side (info|check|warm|cold|datacold|l2cold|tlbcold|hugecold) TLC_DIR ACL_DIR CLIP [N]
//! ```
#![allow(unsafe_code)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use taglane::core::anim::{
    Clip, ImportOptions, SampleSettings, Transform, load_animation, sample_clip,
};
use taglane::core::compress::CompressedClip;
use taglane::core::compress::metric::golden_times;

/// The bench's eviction (twice the last-level cache streamed before a cold pose).
#[path = "../../../benches/common/cold_cache.rs"]
mod cold_cache;

unsafe extern "C" {
    fn tl_acl_open(bytes: *const u8, len: usize, bind: *const f32, joints: usize) -> *mut u8;
    fn tl_acl_close(h: *mut u8);
    fn tl_acl_size(h: *mut u8) -> usize;
    fn tl_acl_context_bytes() -> usize;
    fn tl_acl_sample(h: *mut u8, t: f32, out: *mut Qvv);
}

/// One joint of an ACL pose (`Qvv` in acl_ffi.cpp).
#[repr(C, align(16))]
#[derive(Clone, Copy, Default)]
struct Qvv {
    rotation: [f32; 4],
    translation: [f32; 4],
    scale: [f32; 4],
}

/// (short name, file, cm per unit): as in `benches/compress.rs`.
const CLIPS: [(&str, &str, f32); 9] = [
    ("dance", "bandai_dataset-1_dance-short_normal_001.bvh", 1.0),
    ("kick", "bandai_dataset-1_kick_normal_001.bvh", 1.0),
    ("walk1", "bandai_dataset-1_walk_normal_001.bvh", 1.0),
    ("respond", "bandai_dataset-1_respond_normal_001.bvh", 1.0),
    (
        "walk-turn-left",
        "bandai_dataset-2_walk-turn-left_normal_001.bvh",
        1.0,
    ),
    ("walk2", "bandai_dataset-2_walk_normal_001.bvh", 1.0),
    ("cmu_01_01", "cmu_01_01_hops_turn.bvh", 5.644),
    ("cmu_01_03", "cmu_01_03_climb_hang.bvh", 5.644),
    ("cmu_131_03", "cmu_131_03_hop_start_stop.bvh", 5.644),
];

unsafe extern "C" {
    fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
}

/// A buffer of `len` bytes on 2 MiB pages where the kernel gives them (`MADV_HUGEPAGE`), leaked.
fn huge_buffer(len: usize) -> &'static mut [u8] {
    const HUGE: usize = 2 << 20;
    let layout = std::alloc::Layout::from_size_align(len, HUGE).expect("layout");
    // SAFETY: a non-zero size; the memory is written (so initialised) before it is read.
    unsafe {
        let p = std::alloc::alloc(layout);
        assert!(!p.is_null());
        madvise(p, len, 14);
        std::ptr::write_bytes(p, 0, len);
        std::slice::from_raw_parts_mut(p, len)
    }
}

/// A cold mode's result: the medians of each side's poses (`ns`: uncompressed, taglane, ACL)
/// and their ratios.
fn cold_line(name: &str, mode: &str, ns: &mut [Vec<f64>; 3]) -> String {
    let m: Vec<f64> = ns.iter_mut().map(|v| median(v)).collect();
    format!(
        "{name} {mode}: uncompressed {:.0} ns, taglane {:.0} ns (x {:.2}), ACL {:.0} ns (x {:.2}); ACL / taglane {:.2}",
        m[0],
        m[1],
        m[1] / m[0],
        m[2],
        m[2] / m[0],
        m[2] / m[1]
    )
}

/// What `pfcold` prefetches before a side's pose, from the environment: `TL_SYM`, `UN_SYM`
/// (`OFFSET:SIZE` in hex, from `nm -S`): every line of the code of taglane's and the uncompressed
/// clip's sample; `TL_RO`, `UN_RO` (offsets in hex, comma-separated, from `objdump -d`): the
/// read-only data lines that code reads; `PF_STACK`: bytes of the stack below the caller's frame
/// (for writing), on every side. `tools/acl_side_by_side/pf_syms.sh` prints the first four.
struct Prefetch {
    /// Per side (uncompressed, taglane, ACL): the code's first byte and length.
    code: [(usize, usize); 3],
    rodata: [Vec<usize>; 3],
    stack: usize,
}

impl Prefetch {
    fn from_env() -> Self {
        let base = exe_base();
        let hex = |x: &str| usize::from_str_radix(x.trim_start_matches("0x"), 16).ok();
        let var = |v: &str| std::env::var(v).unwrap_or_default();
        let sym = |v: &str| -> (usize, usize) {
            let text = var(v);
            let (o, l) = text.split_once(':').unwrap_or(("0", "0"));
            (base + hex(o).unwrap_or(0), hex(l).unwrap_or(0))
        };
        let lines = |v: &str| -> Vec<usize> {
            var(v)
                .split(',')
                .filter_map(hex)
                .map(|o| base + o)
                .collect()
        };
        Prefetch {
            code: [sym("UN_SYM"), sym("TL_SYM"), (0, 0)],
            rodata: [lines("UN_RO"), lines("TL_RO"), Vec::new()],
            stack: var("PF_STACK").parse().unwrap_or(0),
        }
    }

    /// The prefetches for `side`'s pose; `here`: an address in the caller's frame.
    fn run(&self, side: usize, here: usize) {
        use std::arch::x86_64::{_MM_HINT_ET0, _MM_HINT_T0, _MM_HINT_T1, _mm_prefetch};
        let (at, len) = self.code[side];
        for a in (at & !63..at + len).step_by(64) {
            // SAFETY: a prefetch never faults.
            unsafe { _mm_prefetch::<_MM_HINT_T1>(a as *const i8) };
        }
        for &a in &self.rodata[side] {
            // SAFETY: as above.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(a as *const i8) };
        }
        if self.stack > 0 {
            for a in ((here - self.stack) & !63..here).step_by(64) {
                // SAFETY: as above.
                unsafe { _mm_prefetch::<_MM_HINT_ET0>(a as *const i8) };
            }
        }
    }
}

/// Where this executable is loaded (its first mapping in /proc/self/maps).
fn exe_base() -> usize {
    let exe = std::fs::read_link("/proc/self/exe").unwrap_or_default();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.lines()
        .find(|l| l.ends_with(&*exe.to_string_lossy()))
        .and_then(|l| l.split('-').next())
        .and_then(|a| usize::from_str_radix(a, 16).ok())
        .unwrap_or(0)
}

/// A clip compressed by ACL, open for decoding.
struct Acl(*mut u8);

impl Acl {
    fn open(bytes: &[u8], clip: &Clip, unit_cm: f32) -> Result<Self, String> {
        // ACL's clips were written in centimetres (`taglane export-acl`).
        let bind: Vec<f32> = clip
            .skeleton
            .rest
            .iter()
            .flat_map(|r| (r.translation * unit_cm).to_array())
            .collect();
        // SAFETY: the pointers and lengths describe live slices; the buffer is copied.
        let h = unsafe {
            tl_acl_open(
                bytes.as_ptr(),
                bytes.len(),
                bind.as_ptr(),
                clip.joint_count(),
            )
        };
        if h.is_null() {
            Err("ACL refused the compressed clip (or its track count)".into())
        } else {
            Ok(Self(h))
        }
    }

    fn sample(&self, t: f32, out: &mut [Qvv]) {
        // SAFETY: `out` holds one Qvv per track (checked at open against the clip's joints).
        unsafe { tl_acl_sample(self.0, t, out.as_mut_ptr()) }
    }

    fn size(&self) -> usize {
        // SAFETY: an open handle.
        unsafe { tl_acl_size(self.0) }
    }
}

impl Drop for Acl {
    fn drop(&mut self) {
        // SAFETY: an open handle, closed once.
        unsafe { tl_acl_close(self.0) }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: acl-side-by-side (info|check|warm|cold|datacold|l2cold|tlbcold|hugecold) TLC_DIR ACL_DIR CLIP [N]";
    if args.len() < 5 {
        return Err(usage.into());
    }
    let (mode, tlc_dir, acl_dir, name) =
        (&args[1], Path::new(&args[2]), Path::new(&args[3]), &args[4]);
    let n: usize = match args.get(5) {
        Some(s) => s
            .parse()
            .map_err(|_| format!("N: expected a count, found {s:?}"))?,
        None => 100,
    };
    let &(_, file, unit) = CLIPS
        .iter()
        .find(|c| c.0 == name)
        .ok_or_else(|| format!("unknown clip {name:?}"))?;
    let mocap = std::env::var_os("TAGLANE_MOCAP")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/mocap"));
    let options = ImportOptions {
        unit_cm: Some(unit),
        ..Default::default()
    };
    let clip = load_animation(&mocap.join(file), &options)
        .map_err(|e| e.to_string())?
        .clips
        .remove(0);
    let tlc_path = tlc_dir.join(format!("{name}.tlc"));
    let ours = std::fs::read(&tlc_path)
        .map_err(|e| format!("{}: {e}", tlc_path.display()))
        .and_then(|b| {
            CompressedClip::from_bytes(b).map_err(|e| format!("{}: {e}", tlc_path.display()))
        })?;
    let acl_path = acl_dir.join(format!("{name}.acl"));
    let acl_bytes = std::fs::read(&acl_path).map_err(|e| format!("{}: {e}", acl_path.display()))?;
    let acl =
        Acl::open(&acl_bytes, &clip, unit).map_err(|e| format!("{}: {e}", acl_path.display()))?;
    let joints = clip.joint_count();
    let times = golden_times(clip.duration_s(), 256);
    let settings = SampleSettings::default();
    let mut pose = vec![Transform::IDENTITY; joints];
    let mut acl_pose = vec![Qvv::default(); joints];
    // Copies of the clip on every side (`datacold`: a pose of the copy warms the code but not
    // the data of the clip then timed).
    let clip_copy = clip.clone();
    let ours_copy = CompressedClip::from_bytes(ours.bytes().to_vec()).map_err(|e| e.to_string())?;
    let acl_copy = Acl::open(&acl_bytes, &clip, unit)?;
    // One side's pose at time t: 0 uncompressed, 1 taglane, 2 ACL; of the copy with `copy`.
    let mut decode = |side: usize, t: f32, copy: bool| match side {
        0 => {
            let c = if copy { &clip_copy } else { &clip };
            sample_clip(c, f64::from(t), &settings, &mut pose).expect("sample");
            black_box(&mut pose);
        }
        1 => {
            (if copy { &ours_copy } else { &ours }).sample_pose(t, &mut pose);
            black_box(&mut pose);
        }
        _ => {
            (if copy { &acl_copy } else { &acl }).sample(t, &mut acl_pose);
            black_box(&mut acl_pose);
        }
    };
    match mode.as_str() {
        "info" => {
            let raw = (joints * clip.frame_count * 40) as f64;
            // SAFETY: a plain size query.
            let context = unsafe { tl_acl_context_bytes() };
            println!(
                "{name}: {joints} joints; taglane {} B (ratio {:.3}), resident {} B; ACL {} B (ratio {:.3}), resident {} B (buffer + context {context} B, + bind pose from the host)",
                ours.size_bytes(),
                raw / ours.size_bytes() as f64,
                ours.resident_bytes(),
                acl.size(),
                raw / acl.size() as f64,
                acl.size() + context,
            );
        }
        "check" => {
            // Both decoders against the uncompressed clip at the 256 times: the largest
            // rotation component difference (same hemisphere) and translation difference in cm.
            let mut reference = vec![Transform::IDENTITY; joints];
            let mut ours_pose = vec![Transform::IDENTITY; joints];
            let (mut rot, mut tr) = ([0f32; 2], [0f32; 2]);
            for &t in &times {
                sample_clip(&clip, f64::from(t), &settings, &mut reference)
                    .map_err(|e| e.to_string())?;
                ours.sample_pose(t, &mut ours_pose);
                acl.sample(t, &mut acl_pose);
                for j in 0..joints {
                    let u = reference[j].rotation.to_array();
                    let ut = reference[j].translation.to_array().map(|x| x * unit);
                    let rotations = [ours_pose[j].rotation.to_array(), acl_pose[j].rotation];
                    let ot = ours_pose[j].translation.to_array().map(|x| x * unit);
                    let translations = [
                        ot,
                        [
                            acl_pose[j].translation[0],
                            acl_pose[j].translation[1],
                            acl_pose[j].translation[2],
                        ],
                    ];
                    for s in 0..2 {
                        let q = rotations[s];
                        let sign = if (0..4).map(|k| q[k] * u[k]).sum::<f32>() < 0.0 {
                            -1.0
                        } else {
                            1.0
                        };
                        for k in 0..4 {
                            rot[s] = rot[s].max((q[k] * sign - u[k]).abs());
                        }
                        for k in 0..3 {
                            tr[s] = tr[s].max((translations[s][k] - ut[k]).abs());
                        }
                    }
                }
            }
            println!(
                "{name}: largest difference from the uncompressed clip at the 256 times: rotation component taglane {:.5}, ACL {:.5}; translation taglane {:.4} cm, ACL {:.4} cm",
                rot[0], rot[1], tr[0], tr[1]
            );
            if rot.iter().chain(&tr).any(|d| d.is_nan() || *d >= 0.05) {
                return Err(format!(
                    "{name}: a decoder disagrees with the clip (is the ACL file of this take?)"
                ));
            }
        }
        "warm" => {
            // N rounds of the 256 times a side, the order of the sides rotating; medians of the
            // ns a pose and of the ratios to the uncompressed clip of the same round.
            let mut ns: [Vec<f64>; 3] = Default::default();
            let mut ratio: [Vec<f64>; 2] = Default::default();
            for r in 0..n {
                let mut x = [0.0; 3];
                for i in 0..3 {
                    let side = (r + i) % 3;
                    let start = Instant::now();
                    for &t in &times {
                        decode(side, t, false);
                    }
                    x[side] = start.elapsed().as_secs_f64() * 1e9 / times.len() as f64;
                }
                for s in 0..3 {
                    ns[s].push(x[s]);
                }
                ratio[0].push(x[1] / x[0]);
                ratio[1].push(x[2] / x[0]);
            }
            let m: Vec<f64> = ns.iter_mut().map(|v| median(v)).collect();
            println!(
                "{name} warm: uncompressed {:.0} ns, taglane {:.0} ns (x {:.2}), ACL {:.0} ns (x {:.2}); ACL / taglane {:.2}",
                m[0],
                m[1],
                median(&mut ratio[0]),
                m[2],
                median(&mut ratio[1]),
                m[2] / m[1]
            );
        }
        "cold" | "datacold" | "l2cold" | "tlbcold" | "hugecold" | "pfcold" => {
            // N poses a side at scattered times, the order of the sides rotating, only the pose
            // timed; medians. Before each pose:
            // - `cold`: a buffer of twice the last-level cache streamed (the bench's eviction);
            // - `datacold`: then a pose of the side's copy of the clip, so that its code is warm
            //   and only the data of the clip timed is cold;
            // - `l2cold`: the same pose decoded, then four times the L2 streamed (the L1 and L2
            //   lose the pose, the last-level cache keeps it, few TLB entries go);
            // - `tlbcold`: the same pose decoded, then one byte of each page of twice the
            //   last-level cache read (the TLB loses the pose's pages, the caches 1 MiB of lines);
            // - `hugecold`: `cold` with the buffer on 2 MiB pages (32 TLB entries instead of
            //   16,384: the pose's pages keep theirs);
            // - `pfcold`: `cold`, then inside the timed part the prefetches of [`Prefetch`].
            let llc = cold_cache::last_level_cache_bytes();
            let buf: &mut [u8] = if mode == "hugecold" {
                huge_buffer(2 * llc)
            } else {
                cold_cache::eviction_buffer().leak()
            };
            let prefetch = (mode == "pfcold").then(Prefetch::from_env);
            let mut ns: [Vec<f64>; 3] = Default::default();
            for i in 0..n {
                let t = times[(i * 97) % times.len()];
                for j in 0..3 {
                    let side = (i + j) % 3;
                    match mode.as_str() {
                        "l2cold" => {
                            decode(side, t, false);
                            cold_cache::evict(&mut buf[..4 << 20]);
                        }
                        "tlbcold" => {
                            decode(side, t, false);
                            for page in buf.chunks_exact_mut(4096) {
                                page[0] = page[0].wrapping_add(1);
                            }
                            black_box(&buf[..]);
                        }
                        "datacold" => {
                            cold_cache::evict(buf);
                            decode(side, times[(i * 97 + 128) % times.len()], true);
                        }
                        _ => cold_cache::evict(buf),
                    }
                    let start = Instant::now();
                    if let Some(p) = &prefetch {
                        p.run(side, black_box(&t) as *const f32 as usize);
                    }
                    decode(side, t, false);
                    ns[side].push(start.elapsed().as_secs_f64() * 1e9);
                }
            }
            let mut line = cold_line(&name, &mode, &mut ns);
            if mode == "hugecold" {
                let huge = std::fs::read_to_string("/proc/self/smaps_rollup")
                    .ok()
                    .and_then(|t| {
                        t.lines()
                            .find(|l| l.starts_with("AnonHugePages"))
                            .map(str::to_owned)
                    })
                    .unwrap_or_default();
                line += &format!("; huge pages {huge}");
            }
            println!("{line}");
        }
        _ => return Err(usage.into()),
    }
    Ok(())
}
