//! The drop-W rotation groups of a pose decoded with AVX2, chosen at run time on x86-64 CPUs
//! that have it: the same operations in the same order as the portable group decoder in
//! `decode.rs` (and so as the scalar [`slot_params`], [`rotation_from_slots`] and
//! `anim::nlerp`), so the same bits.
//!
//! Two groups ride in one 8-lane vector: lanes 0-3 are one group's four tracks, lanes 4-7 the
//! next group's (the same group again for a lone last group). Their segment constants are worked
//! out once for the eight tracks and serve both keys of a sample when the keys share a segment
//! (15 samples in 16 with 16-key segments); across two segments they are worked out for each:
//! - the constants: the eight code words widened into lanes; a width is `code + 2` (0 for code 0),
//!   `1 / (2^w - 1)` is looked up in the table held in two registers, the mask `2^w - 1` is a
//!   shift; the `qmin`/`qext` bytes of the two headers are widened and their halves put in place;
//! - where each lane's bits start within its group: a prefix sum within each half;
//! - the reads, per key ([`read_pair`]): four 16-byte loads (each group's first bytes and those
//!   from its lane 2 on), from which a byte shuffle takes each lane's 8 bytes into 64 bits of a
//!   vector, shifted to the lane's first bit, then by each slot's offset (`vpsrlvq`) to cut the
//!   three slots, the low halves put back into 8 lanes by one shuffle;
//! - the dequantisation, the rebuild of the dropped component (placed with blends) and the nlerp
//!   on 8 lanes; the rotations written to their joints.
//!
//! Sixteen vector registers do not hold a segment's constants: the AVX2 decoder works them out
//! slot by slot and dequantises that slot of both keys at once, so that none is written out and
//! read back (2026-11-29: 7-9 % off a warm pose).
//!
//! A pair of groups whose slots include a raw float32, whose key reads would reach past the end
//! of the file, or with a rebuilt rotation whose stored part is past unit length (which the format
//! normalises), is handed to the portable decoder group by group.
//!
//! Where the CPU also has AVX-512 F, VL and VBMI2, the same sample is compiled a second time for
//! them ([`sample_evex`]), with the [`evex`] module's instructions on 256-bit vectors in a few
//! places (the code-word lookup, the cutting of the slots, the placing of the rebuilt component,
//! the nlerp's sign flip) and 32 vector registers, which hold a pair's constants ([`Constants`]):
//! its reads cut each slot of the eight lanes straight from two 32-byte loads. The same bits.
//!
//! The translation and scale tracks are decoded here too ([`VectorRun`]), one track at a time on
//! SSE lanes (x, y, z), with the same operations in the same order as the portable walk, in less
//! code: a pose whose code is not cached waits for each line of code it runs.
//!
//! The track table entries and segment headers of every group are checked against the file's
//! length once per pose, and each pair's key reads before they are made; the loads inside use raw
//! pointers on those checks (each `unsafe` block names the check it rests on).
//!
//! [`slot_params`]: super::format::slot_params
//! [`rotation_from_slots`]: super::format::rotation_from_slots
#![allow(unsafe_code)]

use std::arch::x86_64::*;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU8, Ordering};

use glam::{Quat, Vec3, Vec4};

use super::decode::{
    AVX2_INSIDE, Decoder, EVEX_INSIDE, GROUP3_TABLE, GroupRun, Keys, ONE_KEY, PAIR_ACROSS,
    VEC_HEADER, VEC_HEADER_NO_RANGES, VEC_TABLE, decode_group3, vector_track_cold,
};
use super::format::{CODE_SCALE, CompressedClip};
use super::prefetch::prefetch_code;
use super::settings::RotationFormat;
use crate::core::anim::Transform;

#[cfg(test)]
thread_local! {
    /// Groups this thread read here (not handed to the portable decoder before their reads), for
    /// tests.
    pub(super) static FAST_GROUPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Of those, the groups read by the EVEX decoder, for tests.
    pub(super) static EVEX_GROUPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Translation and scale tracks this thread decoded here (not by the portable code), for tests.
    pub(super) static FAST_VECTORS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Pairs read here and decoded again by the portable decoder because a rebuilt rotation
    /// needed normalising, for tests.
    pub(super) static NORMALISED_PAIRS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// What the CPU has: 0 not asked yet, 1 no AVX2, 2 AVX2, 3 AVX2 and the AVX-512 extensions the
/// EVEX decoder uses ([`available_evex`]).
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// True when this CPU can run [`decode_groups`] (it has AVX2).
#[inline]
pub(super) fn available() -> bool {
    level() >= 2
}

/// True when this CPU can also run the EVEX decoder: AVX-512 F, VL and VBMI2 besides AVX2 (the
/// [`evex`] instructions, on 256-bit vectors).
pub(super) fn available_evex() -> bool {
    level() == 3
}

fn level() -> u8 {
    match LEVEL.load(Ordering::Relaxed) {
        0 => detect(),
        level => level,
    }
}

#[cold]
fn detect() -> u8 {
    let level = if !is_x86_feature_detected!("avx2") {
        1
    } else if is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512vl")
        && is_x86_feature_detected!("avx512vbmi2")
    {
        3
    } else {
        2
    };
    LEVEL.store(level, Ordering::Relaxed);
    level
}

/// Decodes `count` drop-W rotation tracks (groups of four, track table at `table`) of the keys
/// whose bits start at `bits` and whose headers are described by `keys` (those of the first
/// group) into `out`. `then` is called with `out` and where the rotations' bits end in each key,
/// after the keys are read and before the last groups are interpolated, so that its own reads
/// overlap that work. With `evex`, the EVEX decoder (from inside [`sample_evex`] only). Nothing
/// where `cpu` says the CPU has no AVX2, or, with `evex`, not the EVEX extensions.
#[inline(always)]
pub(super) fn decode_groups(
    cpu: Decoder,
    evex: bool,
    run: GroupRun<'_>,
    out: &mut [Transform],
    then: impl FnOnce(&mut [Transform], [usize; 2]),
) {
    if evex {
        if cpu.evex() {
            // SAFETY: the CPU has AVX2 and the EVEX extensions (a `Decoder` is only made by
            // asking the CPU).
            unsafe { groups::<true>(run, out, then) }
        }
    } else if cpu.avx2() {
        // SAFETY: the CPU has AVX2 (as above).
        unsafe { groups::<false>(run, out, then) }
    }
}

/// Samples `clip` at frame position `frame` into `out` as
/// [`CompressedClip::sample_pose_at_frame`] does, in one function compiled for AVX2, or for
/// AVX-512 where `cpu` says the CPU has the EVEX extensions (the rest pose, the rotation groups
/// and the translations inlined into it); false, with nothing written, where `cpu` says the CPU
/// has no AVX2 or the rotations are not drop-W groups (the generic sample takes those, so
/// nothing rare is laid out among this one's lines).
#[inline]
pub(super) fn sample(
    cpu: Decoder,
    clip: &CompressedClip,
    frame: f32,
    out: &mut [Transform],
) -> bool {
    if !cpu.avx2() || clip.layout.rotation_format != RotationFormat::DropW {
        return false;
    }
    if cpu.evex() {
        // SAFETY: the CPU has the EVEX extensions (checked here; a `Decoder` is only made by
        // asking the CPU).
        unsafe { sample_evex(clip, frame, out) };
    } else {
        // SAFETY: the CPU has AVX2 (checked above).
        unsafe { sample_avx2(clip, frame, out) };
    }
    true
}

#[target_feature(enable = "avx2")]
fn sample_avx2(clip: &CompressedClip, frame: f32, out: &mut [Transform]) {
    // Its own code's pages, first.
    prefetch_code();
    clip.sample_at_frame::<AVX2_INSIDE>(frame, out);
}

/// The AVX2 sample compiled for the EVEX extensions too: the same code, with the [`evex`]
/// instructions where they take fewer operations (and the compiler free to encode the rest as
/// EVEX, with 32 vector registers). The same bits.
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512vbmi2")]
fn sample_evex(clip: &CompressedClip, frame: f32, out: &mut [Transform]) {
    // Its own code's pages, first.
    prefetch_code();
    clip.sample_at_frame::<EVEX_INSIDE>(frame, out);
}

/// Bytes one key's read of one group takes from the byte of the group's first bit: 32, one
/// 256-bit load holding the four lanes (lane 3 starts at most `(7 + 3 * 48) / 8 = 18` bytes in
/// and needs 8).
const REACH: usize = 32;
/// Bytes the reads of two groups may take from the byte of the first group's first bit: the
/// second group starts at most `(7 + 4 * 48) / 8 = 24` bytes in.
const PAIR_REACH: usize = 24 + REACH;

/// Pairs of groups read before they are interpolated (32 tracks).
const PAIRS: usize = 4;

/// A pair of groups read and rebuilt but not yet interpolated and written: the rotations of key A
/// and key B (x, y, z, w on eight lanes) and the joints of the eight lanes (0xFFFF, past every
/// joint, for a lane that is not a track).
#[derive(Clone, Copy)]
struct Pending {
    keys: [[__m256; 4]; 2],
    joints: [u16; 8],
}

/// With `EVEX`, the [`evex`] instructions (only inside [`sample_evex`]).
#[target_feature(enable = "avx2")]
#[inline]
fn groups<const EVEX: bool>(
    run: GroupRun<'_>,
    out: &mut [Transform],
    then: impl FnOnce(&mut [Transform], [usize; 2]),
) {
    // Every track table entry and segment header of the groups, checked once here; the key
    // reads are checked per pair of groups.
    let (groups, all_inside) = (run.groups(), run.all_inside());
    let GroupRun {
        bytes,
        table,
        count,
        keys,
        bits: [mut bit_a, mut bit_b],
    } = run;
    let header = keys.group_header();
    let pair = keys.mode != ONE_KEY;
    let len = bytes.len();
    let reach = |bit: usize| (bit >> 3).saturating_add(PAIR_REACH) <= len;
    let [ha, hb] = keys.headers;
    let p = bytes.as_ptr();
    let mut then = Some(then);
    let mut g = 0;
    // Each phase is one body run for every pair of groups (a pose runs it two to four times), so
    // its code is fetched once: a cold pose waits for each line of code it runs.
    loop {
        // Read and rebuild every pair of a batch, then interpolate and write them: the square
        // roots and divisions of several pairs overlap instead of each pair ending in a wait.
        let mut pending = [const { MaybeUninit::<Pending>::uninit() }; PAIRS];
        let mut n = 0;
        while n < PAIRS && g < groups {
            // Two groups on the eight lanes: group g in lanes 0-3, group g + 1 in lanes 4-7
            // (group g again when g is the last: its second half is read but not written).
            let second = g + 1 < groups;
            let g2 = g + usize::from(second);
            let first = g;
            let at = |base: usize, size: usize| [base + g * size, base + g2 * size];
            let place = [at(table, GROUP3_TABLE), at(ha, header), at(hb, header)];
            g += 2;
            let fast = all_inside && reach(bit_a) && (!pair || reach(bit_b));
            let read = fast
                && 'pair: {
                    let [t, ga, gb] = place;
                    let ([qa, qb], over, used) = if EVEX {
                        // SAFETY: `all_inside`: the entries and headers are in `bytes`; inside
                        // `sample_evex`.
                        let ca = unsafe { Constants::new(p, t, ga, keys.ranges) };
                        if ca.raw {
                            break 'pair false;
                        }
                        // Keys of one segment share the constants; across two segments key B
                        // has its own.
                        let cb = if keys.mode == PAIR_ACROSS {
                            // SAFETY: as above.
                            match unsafe { constants_across(p, t, gb, keys.ranges) } {
                                Some(c) => c,
                                None => break 'pair false,
                            }
                        } else {
                            ca
                        };
                        // SAFETY: `reach` of key A's first bit.
                        let (read, used_a) = unsafe { ca.read_one(p, bit_a, second) };
                        let (qa, over_a) = rebuild::<EVEX>(read);
                        let (qb, over_b, used_b) = if pair {
                            // SAFETY: `reach` of key B's first bit.
                            let (read, used) = unsafe { cb.read_one(p, bit_b, second) };
                            let (q, over) = rebuild::<EVEX>(read);
                            (q, over, used)
                        } else {
                            (qa, false, 0)
                        };
                        ([qa, qb], over_a | over_b, [used_a, used_b])
                    } else {
                        // One key (on a frame) is read as a pair of the same key.
                        let bits = [bit_a, if pair { bit_b } else { bit_a }];
                        // SAFETY: `all_inside`, and `reach` of both keys' first bits.
                        let read = unsafe {
                            if keys.mode == PAIR_ACROSS {
                                read_pair_across(p, t, [ga, gb], keys.ranges, bits, second)
                            } else {
                                read_pair(p, t, ga, keys.ranges, bits, second)
                                    .map(|(r, u)| (r, [u; 2]))
                            }
                        };
                        let Some(([ra, rb], [used_a, used_b])) = read else {
                            break 'pair false;
                        };
                        let (qa, over_a) = rebuild::<EVEX>(ra);
                        if pair {
                            let (qb, over_b) = rebuild::<EVEX>(rb);
                            ([qa, qb], over_a | over_b, [used_a, used_b])
                        } else {
                            ([qa, qa], over_a, [used_a, 0])
                        }
                    };
                    let q = [qa, qb];
                    #[cfg(test)]
                    {
                        let read = 1 + usize::from(second);
                        FAST_GROUPS.set(FAST_GROUPS.get() + read);
                        if EVEX {
                            EVEX_GROUPS.set(EVEX_GROUPS.get() + read);
                        }
                    }
                    if over {
                        #[cfg(test)]
                        NORMALISED_PAIRS.set(NORMALISED_PAIRS.get() + 1);
                        break 'pair false;
                    }
                    bit_a += used[0];
                    bit_b += used[1];
                    // The table's lanes past the last track hold joint 0xFFFF (validation checks
                    // it), past every joint of a file (a joint count is 16 bits), so `scatter8`
                    // skips them; nor is the second half of a lone last group written.
                    // SAFETY: `all_inside`.
                    let joints = unsafe { t.map(|t| p.add(t).cast::<u64>().read_unaligned()) };
                    let second_joints = if second { joints[1] } else { u64::MAX };
                    let j = u128::from(joints[0]) | u128::from(second_joints) << 64;
                    pending[n].write(Pending {
                        keys: q,
                        joints: std::array::from_fn(|l| (j >> (16 * l)) as u16),
                    });
                    n += 1;
                    true
                };
            if !read {
                let groups = [first, usize::from(second)];
                let bits = [&mut bit_a, &mut bit_b];
                slow_pair(bytes, table, count, groups, &keys, bits, out);
            }
        }
        if g >= groups
            && let Some(then) = then.take()
        {
            // The translations and scales, read while the last batch's rotations finish.
            then(out, [bit_a, bit_b]);
        }
        for w in &pending[..n] {
            // SAFETY: the first `n` are written.
            let w = unsafe { w.assume_init_ref() };
            let q = if pair {
                nlerp8::<EVEX>(w.keys[0], w.keys[1], keys.alpha)
            } else {
                w.keys[0]
            };
            scatter8(q, &w.joints, out);
        }
        if g >= groups {
            break;
        }
    }
}

/// A pair of groups decoded group by group by the portable decoder (which reads raw float32
/// slots, normalises stored parts past unit length and checks every read): group `first` and,
/// with `more` 1, the next, of the `count` tracks whose table is at `table` and whose first
/// group's headers are at `keys.headers`. Their places are worked out here, not on the path
/// every pair takes (a cold pose waits for each line of code it runs).
#[cold]
#[inline(never)]
fn slow_pair(
    bytes: &[u8],
    table: usize,
    count: usize,
    [first, more]: [usize; 2],
    keys: &Keys,
    [bit_a, bit_b]: [&mut usize; 2],
    out: &mut [Transform],
) {
    let header = keys.group_header();
    let [ha, hb] = keys.headers;
    for g in first..=first + more {
        let keys = Keys {
            headers: [ha + g * header, hb + g * header],
            ..*keys
        };
        decode_group3(
            bytes,
            table + g * GROUP3_TABLE,
            &keys,
            [&mut *bit_a, &mut *bit_b],
            (count - 4 * g).min(4),
            out,
        );
    }
}

/// One slot's decoding constants on eight lanes (two groups' four tracks):
/// `value = offset + scale * (q & mask)`.
#[derive(Clone, Copy)]
struct Slot {
    offset: __m256,
    scale: __m256,
    mask: __m256i,
}

impl Slot {
    /// [`slot_params`](super::format::slot_params) of slot `s` on eight lanes, the same operations
    /// in the same order, from the lanes' width codes `code`, the two groups' track table entries
    /// at `t` and segment headers at `h` (byte offsets from `p`); with `EVEX`, the [`evex`] code
    /// lookup.
    ///
    /// # Safety
    /// As for [`Constants::new`].
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn new<const EVEX: bool>(
        s: usize,
        code: __m256i,
        p: *const u8,
        [t, h]: [[usize; 2]; 2],
        ranges: bool,
    ) -> Self {
        let c = CODE_SCALE;
        let scale_lo = _mm256_setr_ps(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]);
        let scale_hi = _mm256_setr_ps(c[8], c[9], c[10], c[11], c[12], c[13], c[14], c[15]);
        let none = _mm256_cmpeq_epi32(code, _mm256_setzero_si256());
        // CODE_SCALE[code]: two in-register table lookups (the low three bits of the code pick an
        // entry of each half) and a blend on the fourth bit, or one lookup in both.
        let inv = if EVEX {
            // SAFETY: `EVEX` only inside `sample_evex`, run where the CPU has the EVEX
            // extensions.
            unsafe { evex::permute2_ps(scale_lo, code, scale_hi) }
        } else {
            _mm256_blendv_ps(
                _mm256_permutevar8x32_ps(scale_lo, code),
                _mm256_permutevar8x32_ps(scale_hi, code),
                _mm256_castsi256_ps(_mm256_cmpgt_epi32(code, _mm256_set1_epi32(7))),
            )
        };
        let mid = _mm256_and_ps(_mm256_castsi256_ps(none), _mm256_set1_ps(0.5));
        let mask = _mm256_sub_epi32(
            _mm256_sllv_epi32(_mm256_set1_epi32(1), width(code)),
            _mm256_set1_epi32(1),
        );
        // SAFETY (every read below): inside the entries and headers, as the caller guarantees.
        let (qmin, qext) = if ranges {
            // Each group's 8 bytes of this slot: qmin of its four lanes, then qext; widened to
            // [qmin | qext] and the halves of the two groups put in place.
            let r = unsafe {
                h.map(|h| _mm256_cvtepu8_epi32(_mm_loadl_epi64(p.add(h + 8 + 8 * s).cast())))
            };
            (
                _mm256_cvtepi32_ps(_mm256_permute2x128_si256::<0x20>(r[0], r[1])),
                _mm256_cvtepi32_ps(_mm256_permute2x128_si256::<0x31>(r[0], r[1])),
            )
        } else {
            (_mm256_setzero_ps(), _mm256_set1_ps(255.0))
        };
        let (min, step) = unsafe {
            let f = |k: usize, at: usize| _mm_loadu_ps(p.add(t[k] + at).cast());
            (
                _mm256_set_m128(f(1, 8 + 16 * s), f(0, 8 + 16 * s)),
                _mm256_set_m128(f(1, 56 + 16 * s), f(0, 56 + 16 * s)),
            )
        };
        // offset = min + step * (qmin + qext * mid); scale = step * qext * inv.
        Slot {
            offset: _mm256_add_ps(
                min,
                _mm256_mul_ps(step, _mm256_add_ps(qmin, _mm256_mul_ps(qext, mid))),
            ),
            scale: _mm256_mul_ps(_mm256_mul_ps(step, qext), inv),
            mask,
        }
    }

    /// The slot's values from the lanes' bits `q` (the slot's bits at the bottom of each lane).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn dequantize(&self, q: __m256i) -> __m256 {
        let q = _mm256_and_si256(q, self.mask);
        _mm256_add_ps(
            self.offset,
            _mm256_mul_ps(self.scale, _mm256_cvtepi32_ps(q)),
        )
    }
}

/// The width codes of slot `s` of eight lanes from their 16-bit code words `words`.
#[target_feature(enable = "avx2")]
#[inline]
fn slot_code(words: __m256i, s: usize) -> __m256i {
    _mm256_and_si256(
        _mm256_srl_epi32(words, _mm_cvtsi32_si128(4 * s as i32)),
        _mm256_set1_epi32(15),
    )
}

/// The widths of width codes: `code + 2`, 0 for code 0.
#[target_feature(enable = "avx2")]
#[inline]
fn width(code: __m256i) -> __m256i {
    let none = _mm256_cmpeq_epi32(code, _mm256_setzero_si256());
    _mm256_andnot_si256(none, _mm256_add_epi32(code, _mm256_set1_epi32(2)))
}

/// The eight lanes' 16-bit code words from the two groups' headers at `h` (byte offsets from
/// `p`), whether some slot is a raw float32, and the slots' widths.
///
/// # Safety
/// `h[k] + 8` bytes from `p` are readable.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn code_words(p: *const u8, h: [usize; 2]) -> (__m256i, bool, [__m256i; 3]) {
    // SAFETY: inside the headers, as the caller guarantees.
    let codes = unsafe { h.map(|h| p.add(h).cast::<u64>().read_unaligned()) };
    let words = _mm256_cvtepu16_epi32(_mm_set_epi64x(codes[1] as i64, codes[0] as i64));
    let fifteen = _mm256_set1_epi32(15);
    let mut raw = _mm256_setzero_si256();
    let mut widths = [raw; 3];
    for (s, w) in widths.iter_mut().enumerate() {
        let code = slot_code(words, s);
        raw = _mm256_or_si256(raw, _mm256_cmpeq_epi32(code, fifteen));
        *w = width(code);
    }
    (words, _mm256_movemask_epi8(raw) != 0, widths)
}

/// Where each lane's bits start within its group (an exclusive prefix sum of the lanes' bits
/// within each half) and each group's bits in one key (its lane 3's inclusive sum), from the
/// lanes' slot widths.
#[target_feature(enable = "avx2")]
#[inline]
fn lane_starts(width: [__m256i; 3]) -> (__m256i, [usize; 2]) {
    let lane_bits = _mm256_add_epi32(_mm256_add_epi32(width[0], width[1]), width[2]);
    let inc = _mm256_add_epi32(lane_bits, _mm256_slli_si256::<4>(lane_bits));
    let inc = _mm256_add_epi32(inc, _mm256_slli_si256::<8>(inc));
    let totals = [
        _mm256_extract_epi32::<3>(inc) as usize,
        _mm256_extract_epi32::<7>(inc) as usize,
    ];
    (_mm256_slli_si256::<4>(inc), totals)
}

/// The EVEX decoder's constants of two groups in one segment (eight lanes: the first group's
/// four tracks, then the second's): each slot's, where each slot of each lane starts, and the
/// dropped components. Worked out once and used by both keys of a pair (32 registers hold
/// them).
#[derive(Clone, Copy)]
struct Constants {
    slots: [Slot; 3],
    /// The first bit of each slot of each lane within the two groups' reads taken as one
    /// 512-bit string (the first group's read, then the second's) when each group's key starts
    /// on a byte; a key's first bit within its byte is added per read.
    field: [__m256i; 3],
    /// Bits of each group in one key.
    totals: [usize; 2],
    drops: __m256,
    /// Some slot is a raw float32 (these groups go to the portable decoder).
    raw: bool,
}

impl Constants {
    /// The constants of the groups whose track table entries are at `t` and segment headers at
    /// `h` (byte offsets from `p`).
    ///
    /// # Safety
    /// `t[k] + GROUP3_TABLE` and `h[k] + 8` (`+ GROUP3_HEADER` with `ranges`) bytes from `p` are
    /// readable. Called from inside [`sample_evex`] only (it uses the [`evex`] instructions).
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn new(p: *const u8, t: [usize; 2], h: [usize; 2], ranges: bool) -> Self {
        // What [`code_words`] works out, in one loop with each slot's constants: the compiler
        // then keeps fewer values alive across the loop (33 instructions fewer a pose).
        // SAFETY: inside the headers, as the caller guarantees.
        let codes = unsafe { h.map(|h| p.add(h).cast::<u64>().read_unaligned()) };
        let words = _mm256_cvtepu16_epi32(_mm_set_epi64x(codes[1] as i64, codes[0] as i64));
        let fifteen = _mm256_set1_epi32(15);
        let zero = _mm256_setzero_si256();
        let mut raw = zero;
        let mut width = [zero; 3];
        let mut slots = [Slot {
            offset: _mm256_setzero_ps(),
            scale: _mm256_setzero_ps(),
            mask: zero,
        }; 3];
        for s in 0..3 {
            let code = slot_code(words, s);
            raw = _mm256_or_si256(raw, _mm256_cmpeq_epi32(code, fifteen));
            width[s] = self::width(code);
            // SAFETY: as the caller guarantees.
            slots[s] = unsafe { Slot::new::<true>(s, code, p, [t, h], ranges) };
        }
        let raw = _mm256_movemask_epi8(raw) != 0;
        let (start, totals) = lane_starts(width);
        let second = _mm256_setr_epi32(0, 0, 0, 0, 256, 256, 256, 256);
        let in_reads = _mm256_add_epi32(start, second);
        let field = [
            in_reads,
            _mm256_add_epi32(in_reads, width[0]),
            _mm256_add_epi32(in_reads, _mm256_add_epi32(width[0], width[1])),
        ];
        Constants {
            slots,
            field,
            totals,
            drops: drops(words),
            raw,
        }
    }

    /// The dequantised slots of the eight lanes in the key whose bits start at `bit`, and their
    /// dropped components (`[c0, c1, c2, drops]`, for [`rebuild`]), and the bits the groups take
    /// in one key (the first group's alone unless `second`).
    ///
    /// # Safety
    /// [`PAIR_REACH`] bytes from byte `bit / 8` of `p` are readable. Called from inside
    /// [`sample_evex`] only.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn read_one(&self, p: *const u8, bit: usize, second: bool) -> ([__m256; 4], usize) {
        // The second group starts where the first ends, at most 24 bytes in.
        let (ka, kb) = (bit, bit + self.totals[0]);
        let first = _mm256_setr_epi32(
            (ka & 7) as i32,
            (ka & 7) as i32,
            (ka & 7) as i32,
            (ka & 7) as i32,
            (kb & 7) as i32,
            (kb & 7) as i32,
            (kb & 7) as i32,
            (kb & 7) as i32,
        );
        // SAFETY: both 32-byte reads end within PAIR_REACH bytes of byte `bit / 8`.
        let (da, db) = unsafe {
            (
                _mm256_loadu_si256(p.add(ka >> 3).cast()),
                _mm256_loadu_si256(p.add(kb >> 3).cast()),
            )
        };
        let bits = self.totals[0] + if second { self.totals[1] } else { 0 };
        // Each slot of the eight lanes cut straight from the two reads: from the two 32-bit
        // words that hold it, by one funnel shift.
        let slot = |s: usize| {
            let at = _mm256_add_epi32(self.field[s], first);
            // SAFETY: inside `sample_evex`, run where the CPU has the EVEX extensions.
            self.slots[s].dequantize(unsafe { evex::field(da, db, at) })
        };
        ([slot(0), slot(1), slot(2), self.drops], bits)
    }
}

/// The dropped components of eight lanes from their code words.
#[target_feature(enable = "avx2")]
#[inline]
fn drops(words: __m256i) -> __m256 {
    let d = _mm256_and_si256(_mm256_srli_epi32::<12>(words), _mm256_set1_epi32(3));
    _mm256_castsi256_ps(d)
}

/// 32-bit values of eight lanes as 64-bit ones (each the value and a zero), lanes 0, 1 of both
/// groups (0, 1, 4, 5) in one vector, lanes 2, 3 (2, 3, 6, 7) in the other: the order of
/// [`Lanes::words`].
#[target_feature(enable = "avx2")]
#[inline]
fn halves(v: __m256i) -> [__m256i; 2] {
    let zero = _mm256_setzero_si256();
    [
        _mm256_unpacklo_epi32(v, zero),
        _mm256_unpackhi_epi32(v, zero),
    ]
}

/// Byte `A` of each 128-bit half of `v` spread over the half's first 8 bytes and byte `B` over
/// the other 8, counting up from it (`v + 0`, ..., `v + 7`).
#[target_feature(enable = "avx2")]
#[inline]
fn spread<const A: i8, const B: i8>(v: __m256i) -> __m256i {
    let (a, b) = (A, B);
    let at = _mm256_setr_epi8(
        a, a, a, a, a, a, a, a, b, b, b, b, b, b, b, b, a, a, a, a, a, a, a, a, b, b, b, b, b, b,
        b, b,
    );
    let count = _mm256_setr_epi8(
        0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5,
        6, 7,
    );
    _mm256_add_epi8(_mm256_shuffle_epi8(v, at), count)
}

/// Where the eight lanes' bits lie in a key, for [`read_pair`]: the byte shuffles that take
/// each lane's 8 bytes from the 16 read for it (`[0]`: lanes 0, 1 of both groups; `[1]`: lanes
/// 2, 3), its first bit in them (64-bit shifts, in the same order) when the key starts on a
/// byte, the byte of each group's lane 2 (where its second 16 bytes are read from), and where
/// the second group starts (bits from the first's).
struct Lanes {
    pick: [__m256i; 2],
    sub: [__m256i; 2],
    skip: [usize; 2],
    second: usize,
}

impl Lanes {
    /// Each lane's bits of the key whose bits start at `bit`, from its first bit on (64 bits a
    /// lane: lanes 0, 1 of both groups in `[0]`, lanes 2, 3 in `[1]`).
    ///
    /// # Safety
    /// [`PAIR_REACH`] bytes from byte `bit / 8` of `p` are readable.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn words(&self, p: *const u8, bit: usize) -> [__m256i; 2] {
        // The second group starts where the first ends, at most 24 bytes in; its lane 2 at most
        // 12 bytes into it.
        let (ka, kb) = (bit, bit + self.second);
        let (ba, bb) = (ka >> 3, kb >> 3);
        let [sa, sb] = self.skip;
        // SAFETY: the four 16-byte reads end within PAIR_REACH bytes of byte `bit / 8`.
        let (lo, hi) = unsafe {
            (
                _mm256_loadu2_m128i(p.add(bb).cast(), p.add(ba).cast()),
                _mm256_loadu2_m128i(p.add(bb + sb).cast(), p.add(ba + sa).cast()),
            )
        };
        let first = _mm256_set_m128i(
            _mm_set1_epi64x((kb & 7) as i64),
            _mm_set1_epi64x((ka & 7) as i64),
        );
        [
            _mm256_srlv_epi64(
                _mm256_shuffle_epi8(lo, self.pick[0]),
                _mm256_add_epi64(self.sub[0], first),
            ),
            _mm256_srlv_epi64(
                _mm256_shuffle_epi8(hi, self.pick[1]),
                _mm256_add_epi64(self.sub[1], first),
            ),
        ]
    }
}

/// The AVX2 decoder's reads of a pair of groups (eight lanes: the first group's four tracks,
/// then the second's) in one segment, track table entries at `t`, headers at `h` (byte offsets
/// from `p`): both keys (their bits from `bits[0]` and `bits[1]`), slot by slot, each slot's
/// constants worked out and used by both keys at once. Sixteen registers do not hold a whole
/// segment's constants, as the EVEX decoder's [`Constants`] keeps them: they would be written
/// out and read back. Each key's `[c0, c1, c2, drops]` (for [`rebuild`]) and the bits the groups
/// take in one key (the first group's alone unless `second`); `None` with a raw float32 slot.
///
/// Each key's bits are read 16 bytes at a time: lanes 0 and 1 of both groups from each group's
/// first byte, lanes 2 and 3 from the byte of its lane 2. A byte shuffle takes each lane's 8
/// bytes, from the byte of its first bit when the key starts on a byte, into 64 bits of a vector
/// (lanes 0 and 1 of both groups in one, lanes 2 and 3 in the other); each is shifted to its
/// first bit (at most 7 + 7 bits in: the lane's own and the key's first bit in its byte, and a
/// lane takes at most 48 bits), then by each slot's offset in the lane.
///
/// # Safety
/// As for [`Constants::new`], and [`PAIR_REACH`] bytes from byte `bits[k] / 8` of `p` are
/// readable.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn read_pair(
    p: *const u8,
    t: [usize; 2],
    h: [usize; 2],
    ranges: bool,
    bits: [usize; 2],
    second: bool,
) -> Option<([[__m256; 4]; 2], usize)> {
    // SAFETY: as the caller guarantees.
    let (words, raw, width) = unsafe { code_words(p, h) };
    if raw {
        return None;
    }
    let (start, totals) = lane_starts(width);
    // The byte shuffles: each lane's first byte (from its group's lane 2's for lanes 2, 3),
    // spread over its 8 bytes and counted up from.
    let byte = _mm256_srli_epi32::<3>(start);
    let from_lane2 = _mm256_sub_epi32(byte, _mm256_shuffle_epi32::<0b10_10_10_10>(byte));
    let pick = [spread::<0, 4>(byte), spread::<8, 12>(from_lane2)];
    let sub = halves(_mm256_and_si256(start, _mm256_set1_epi32(7)));
    let skip = [
        _mm256_extract_epi32::<2>(byte) as usize,
        _mm256_extract_epi32::<6>(byte) as usize,
    ];
    let at = Lanes {
        pick,
        sub,
        skip,
        second: totals[0],
    };
    // SAFETY: as the caller guarantees.
    let keys = unsafe { [at.words(p, bits[0]), at.words(p, bits[1])] };
    // Slot by slot: its constants, then its values in both keys (each lane's word shifted by
    // the slot's offset in the lane, the low 32 bits of the eight words put back in lane order,
    // masked and dequantised).
    let mut values = [[_mm256_setzero_ps(); 2]; 3];
    for (s, values) in values.iter_mut().enumerate() {
        // SAFETY: as the caller guarantees.
        let slot = unsafe { Slot::new::<false>(s, slot_code(words, s), p, [t, h], ranges) };
        let shift = match s {
            0 => None,
            1 => Some(halves(width[0])),
            _ => Some(halves(_mm256_add_epi32(width[0], width[1]))),
        };
        for (value, [mut a, mut b]) in values.iter_mut().zip(keys) {
            if let Some([x, y]) = shift {
                a = _mm256_srlv_epi64(a, x);
                b = _mm256_srlv_epi64(b, y);
            }
            let q =
                _mm256_shuffle_ps::<0b10_00_10_00>(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b));
            *value = slot.dequantize(_mm256_castps_si256(q));
        }
    }
    let drops = drops(words);
    let [v0, v1, v2] = values;
    let out = [[v0[0], v1[0], v2[0], drops], [v0[1], v1[1], v2[1], drops]];
    Some((out, totals[0] + if second { totals[1] } else { 0 }))
}

/// The reads of [`read_pair`] for a pair across two segments (one pose in sixteen takes it):
/// key A with the first segment's constants (headers at `ha`), key B with the second's (`hb`),
/// and the bits each key's groups take. Cold: laid out after the lines every pose runs.
///
/// # Safety
/// As for [`read_pair`], for both headers.
#[target_feature(enable = "avx2")]
#[cold]
#[inline(never)]
unsafe fn read_pair_across(
    p: *const u8,
    t: [usize; 2],
    [ha, hb]: [[usize; 2]; 2],
    ranges: bool,
    [bit_a, bit_b]: [usize; 2],
    second: bool,
) -> Option<([[__m256; 4]; 2], [usize; 2])> {
    // SAFETY: as the caller guarantees.
    let (a, used_a) = unsafe { read_pair(p, t, ha, ranges, [bit_a, bit_a], second) }?;
    // SAFETY: as the caller guarantees.
    let (b, used_b) = unsafe { read_pair(p, t, hb, ranges, [bit_b, bit_b], second) }?;
    Some(([a[0], b[0]], [used_a, used_b]))
}

/// The constants of key B's segment for a pair across two segments (one pose in sixteen takes
/// it), for the EVEX decoder; `None` with a raw float32 slot. Cold: the compiler inlines it all
/// the same (it is compiled for AVX2 like its caller), but lays it out after the lines every
/// pose runs.
///
/// # Safety
/// As for [`Constants::new`].
#[target_feature(enable = "avx2")]
#[cold]
#[inline(never)]
unsafe fn constants_across(
    p: *const u8,
    t: [usize; 2],
    hb: [usize; 2],
    ranges: bool,
) -> Option<Constants> {
    // SAFETY: as the caller guarantees.
    let c = unsafe { Constants::new(p, t, hb, ranges) };
    (!c.raw).then_some(c)
}

/// The rotations of decoded slots `[c0, c1, c2, drops]` (8 lanes): the dropped component rebuilt
/// as `sqrt(max(0, 1 - ((c0² + c1²) + c2²)))` and placed; x, y, z, w. The flag is set when some
/// lane's stored part is past unit length (quantisation pushed it there), which the format
/// normalises: the caller decodes such a pair again with the portable decoder.
#[target_feature(enable = "avx2")]
#[inline]
fn rebuild<const EVEX: bool>([c0, c1, c2, drops]: [__m256; 4]) -> ([__m256; 4], bool) {
    let sum = _mm256_add_ps(
        _mm256_add_ps(_mm256_mul_ps(c0, c0), _mm256_mul_ps(c1, c1)),
        _mm256_mul_ps(c2, c2),
    );
    let w2 = _mm256_sub_ps(_mm256_set1_ps(1.0), sum);
    let d = _mm256_sqrt_ps(_mm256_max_ps(w2, _mm256_setzero_ps()));
    if EVEX {
        // SAFETY: as for `permute2_ps` in `Constants::new`.
        return unsafe { evex::place([c0, c1, c2, d], drops, w2) };
    }
    let drops = _mm256_castps_si256(drops);
    let is = |k: i32| _mm256_castsi256_ps(_mm256_cmpeq_epi32(drops, _mm256_set1_epi32(k)));
    let (is0, is1, is2, is3) = (is(0), is(1), is(2), is(3));
    // blendv(a, b, m): b where m is set.
    let x = _mm256_blendv_ps(c0, d, is0);
    let y = _mm256_blendv_ps(_mm256_blendv_ps(c1, d, is1), c0, is0);
    let z = _mm256_blendv_ps(_mm256_blendv_ps(c1, d, is2), c2, is3);
    let w = _mm256_blendv_ps(c2, d, is3);
    let over = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(w2, _mm256_setzero_ps()));
    ([x, y, z, w], over != 0)
}

/// `anim::nlerp` on eight pairs of rotations (x, y, z, w lanes), the same operations in the
/// same order.
#[target_feature(enable = "avx2")]
#[inline]
fn nlerp8<const EVEX: bool>(a: [__m256; 4], b: [__m256; 4], t: f32) -> [__m256; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    let add = |x: __m256, y: __m256| _mm256_add_ps(x, y);
    let mul = |x: __m256, y: __m256| _mm256_mul_ps(x, y);
    // Quat::dot groups (x + z) + (y + w).
    let dot = add(add(mul(ax, bx), mul(az, bz)), add(mul(ay, by), mul(aw, bw)));
    // `-b` where the dot is negative: the sign bit flipped (the same bits as `b * -1.0` for
    // the finite values a file holds).
    let [bx, by, bz, bw] = if EVEX {
        // SAFETY: as for `permute2_ps` in `Constants::new`.
        unsafe { evex::negate_where_negative([bx, by, bz, bw], dot) }
    } else {
        let flip = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_LT_OQ>(dot, _mm256_setzero_ps()),
            _mm256_set1_ps(-0.0),
        );
        let neg = |v: __m256| _mm256_xor_ps(v, flip);
        [neg(bx), neg(by), neg(bz), neg(bw)]
    };
    let (s, t) = (_mm256_set1_ps(1.0 - t), _mm256_set1_ps(t));
    let lerp = |a: __m256, b: __m256| add(mul(a, s), mul(b, t));
    let (qx, qy, qz, qw) = (lerp(ax, bx), lerp(ay, by), lerp(az, bz), lerp(aw, bw));
    let len2 = add(add(mul(qx, qx), mul(qz, qz)), add(mul(qy, qy), mul(qw, qw)));
    let r = _mm256_div_ps(_mm256_set1_ps(1.0), _mm256_sqrt_ps(len2));
    let q = [mul(qx, r), mul(qy, r), mul(qz, r), mul(qw, r)];
    let ok = _mm256_cmp_ps::<_CMP_GT_OQ>(len2, _mm256_setzero_ps());
    if _mm256_movemask_ps(ok) == 0xFF {
        return q;
    }
    // Opposite rotations cancelled: `a` is kept, as `anim::nlerp` does.
    let keep = |a: __m256, q: __m256| _mm256_blendv_ps(a, q, ok);
    [
        keep(ax, q[0]),
        keep(ay, q[1]),
        keep(az, q[2]),
        keep(aw, q[3]),
    ]
}

/// The operations of the EVEX decoder that AVX-512 does in fewer instructions than AVX2, on
/// 256-bit vectors: never on 512-bit ones, which would take the CPU's 512-bit license and stop
/// one of its three vector ports for every vector instruction around them (a first build, where
/// the compiler had turned two of these into 512-bit operations, decoded 5 % slower than the AVX2
/// sample; without them the EVEX sample is 12-20 % faster than it: docs/PERFORMANCE.md, "The
/// EVEX sample").
mod evex {
    use std::arch::asm;
    use std::arch::x86_64::*;

    /// [`permute2_epi32`] on floats (their bits moved as they are): the compiler turns this
    /// lookup in two constant tables, written with the intrinsic, into one 512-bit permute.
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512vbmi2")]
    #[inline]
    pub(super) fn permute2_ps(a: __m256, idx: __m256i, b: __m256) -> __m256 {
        let (a, b) = (_mm256_castps_si256(a), _mm256_castps_si256(b));
        _mm256_castsi256_ps(permute2_epi32(a, idx, b))
    }

    /// Lane `i` of the result is lane `idx[i] & 15` of `a` then `b` (`vpermi2d`). Written as the
    /// instruction: the compiler turns it, with constant indices that pick every other lane, into
    /// a 512-bit insert and a narrowing move.
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512vbmi2")]
    #[inline]
    pub(super) fn permute2_epi32(a: __m256i, idx: __m256i, b: __m256i) -> __m256i {
        let mut r = idx;
        // SAFETY: a register-only instruction of AVX-512 VL, which this function is compiled for.
        unsafe {
            asm!(
                "vpermi2d {r}, {a}, {b}",
                r = inout(ymm_reg) r,
                a = in(ymm_reg) a,
                b = in(ymm_reg) b,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        r
    }

    /// Per lane, the 32 bits from bit `at` of the 512-bit string `a` then `b` (`at` below
    /// 480): the 32-bit words `at / 32` and the next picked by two two-table permutes, then one
    /// funnel shift by `at % 32`.
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512vbmi2")]
    #[inline]
    pub(super) fn field(a: __m256i, b: __m256i, at: __m256i) -> __m256i {
        let word = _mm256_srli_epi32::<5>(at);
        let lo = permute2_epi32(a, word, b);
        let hi = permute2_epi32(a, _mm256_add_epi32(word, _mm256_set1_epi32(1)), b);
        // (hi:lo) >> (at & 31), the low 32 bits.
        _mm256_shrdv_epi32(lo, hi, at)
    }

    /// `rebuild`'s placing of the rebuilt component `c[3]` among the stored ones by each lane's
    /// dropped component, with mask registers (one instruction a blend, where AVX2's take
    /// several), and whether some lane's `w2` is negative.
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512vbmi2")]
    #[inline]
    pub(super) fn place(
        [c0, c1, c2, d]: [__m256; 4],
        drops: __m256,
        w2: __m256,
    ) -> ([__m256; 4], bool) {
        let drops = _mm256_castps_si256(drops);
        let is = |k: i32| _mm256_cmpeq_epi32_mask(drops, _mm256_set1_epi32(k));
        let (is0, is1, is2, is3) = (is(0), is(1), is(2), is(3));
        // mask_blend(m, a, b): b where m is set.
        let x = _mm256_mask_blend_ps(is0, c0, d);
        let y = _mm256_mask_blend_ps(is0, _mm256_mask_blend_ps(is1, c1, d), c0);
        let z = _mm256_mask_blend_ps(is3, _mm256_mask_blend_ps(is2, c1, d), c2);
        let w = _mm256_mask_blend_ps(is3, c2, d);
        let over = _mm256_cmp_ps_mask::<_CMP_LT_OQ>(w2, _mm256_setzero_ps());
        ([x, y, z, w], over != 0)
    }

    /// `v` with its sign bits flipped in the lanes where `dot` is negative.
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512vbmi2")]
    #[inline]
    pub(super) fn negate_where_negative(v: [__m256; 4], dot: __m256) -> [__m256; 4] {
        let flip = _mm256_cmp_ps_mask::<_CMP_LT_OQ>(dot, _mm256_setzero_ps());
        let sign = _mm256_set1_epi32(i32::MIN);
        let neg = |v: __m256| {
            let v = _mm256_castps_si256(v);
            _mm256_castsi256_ps(_mm256_mask_xor_epi32(v, flip, v, sign))
        };
        [neg(v[0]), neg(v[1]), neg(v[2]), neg(v[3])]
    }
}

/// The eight rotations (x, y, z, w lanes) transposed into quaternions and written to the joints
/// of their lanes (a joint past `out`, such as 0xFFFF, is not written).
#[target_feature(enable = "avx2")]
#[inline]
fn scatter8([x, y, z, w]: [__m256; 4], joints: &[u16; 8], out: &mut [Transform]) {
    // Within each 128-bit half: x0 y0 x1 y1 and x2 y2 x3 y3, the same of z and w, then whole
    // quaternions: lane l of the first group in the low half of `q[l]`, of the second in its high.
    let (xy_lo, xy_hi) = (_mm256_unpacklo_ps(x, y), _mm256_unpackhi_ps(x, y));
    let (zw_lo, zw_hi) = (_mm256_unpacklo_ps(z, w), _mm256_unpackhi_ps(z, w));
    let q = [
        _mm256_shuffle_ps::<0b01_00_01_00>(xy_lo, zw_lo),
        _mm256_shuffle_ps::<0b11_10_11_10>(xy_lo, zw_lo),
        _mm256_shuffle_ps::<0b01_00_01_00>(xy_hi, zw_hi),
        _mm256_shuffle_ps::<0b11_10_11_10>(xy_hi, zw_hi),
    ];
    for (l, q) in q.into_iter().enumerate() {
        let halves = [_mm256_castps256_ps128(q), _mm256_extractf128_ps::<1>(q)];
        for (h, half) in halves.into_iter().enumerate() {
            if let Some(o) = out.get_mut(usize::from(joints[4 * h + l])) {
                o.rotation = Quat::from_vec4(Vec4::from(half));
            }
        }
    }
}

/// [`vectors`] where `cpu` says the CPU has AVX2 (false otherwise, with nothing written), with
/// `evex` the EVEX decoder's (from inside [`sample_evex`] only: false, with nothing written, where
/// `cpu` says the CPU has not the EVEX extensions). Each sample has its own copy of `vectors`
/// (one call each), which the compiler inlines into it.
#[inline(always)]
pub(super) fn decode_vectors(
    cpu: Decoder,
    evex: bool,
    run: &VectorRun<'_>,
    bits: [usize; 2],
    out: &mut [Transform],
) -> bool {
    if evex {
        // SAFETY: the CPU has AVX2 and the EVEX extensions (checked first; a `Decoder` is only
        // made by asking the CPU).
        cpu.evex() && unsafe { vectors::<true>(run, bits, out) }
    } else {
        // SAFETY: the CPU has AVX2 (as above).
        cpu.avx2() && unsafe { vectors::<false>(run, bits, out) }
    }
}

/// The translation and scale tracks of a sample for [`vectors`]: where their track table entries
/// start and how many of each kind, and the keys (their headers start at `headers`).
pub(super) struct VectorRun<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) tables: [usize; 2],
    pub(super) counts: [usize; 2],
    pub(super) keys: Keys,
}

/// The translation and scale tracks of a sample, on SSE lanes (x, y, z and a lane not used):
/// `CompressedClip::walk_vectors`, the same operations in the same order, so the same bits, in
/// less code (a pose whose code is not cached waits for each line of it). Reads the keys from
/// `bits`; false, with nothing written, when the track table entries or headers do not all lie
/// in the file (the caller then takes the portable walk). A track with a raw float32 slot or a
/// read within 8 bytes of the end of the file, and every track of keys in two segments, is decoded
/// by the portable code.
#[target_feature(enable = "avx2")]
#[inline]
fn vectors<const EVEX: bool>(
    run: &VectorRun<'_>,
    [mut bit_a, mut bit_b]: [usize; 2],
    out: &mut [Transform],
) -> bool {
    let VectorRun {
        bytes,
        tables,
        counts,
        keys,
    } = *run;
    let header = if keys.ranges {
        VEC_HEADER
    } else {
        VEC_HEADER_NO_RANGES
    };
    let len = bytes.len();
    let [ha, hb] = keys.headers;
    let inside = |at: usize, size: usize| at.saturating_add(size) <= len;
    // Both kinds' entries and headers, checked once: the reads below rest on it (a file that
    // passed validation always passes). The translations' headers come first, then the scales'.
    let n = counts[0] + counts[1];
    if !(inside(tables[0], counts[0] * VEC_TABLE)
        && inside(tables[1], counts[1] * VEC_TABLE)
        && inside(ha, n * header)
        && inside(hb, n * header))
    {
        return false;
    }
    let p = bytes.as_ptr();
    let pair = keys.mode != ONE_KEY;
    let c = CODE_SCALE;
    let scale_lo = _mm256_setr_ps(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]);
    let scale_hi = _mm256_setr_ps(c[8], c[9], c[10], c[11], c[12], c[13], c[14], c[15]);
    let (s, t) = (_mm_set1_ps(1.0 - keys.alpha), _mm_set1_ps(keys.alpha));
    let across = keys.mode == PAIR_ACROSS;
    // One body for every track of both kinds.
    for i in 0..n {
        let kind = usize::from(i >= counts[0]);
        let entry = tables[kind] + (i - kind * counts[0]) * VEC_TABLE;
        let heads = [ha + i * header, hb + i * header];
        // SAFETY: the entries and headers were checked above.
        let (sa, bits) =
            unsafe { slots::<EVEX>(p, entry, heads[0], keys.ranges, scale_lo, scale_hi) };
        let near_end = |bit: usize| (bit >> 3) + 8 > len;
        // Keys in two segments (one pose in sixteen), a raw float32 slot or a read near the end
        // of the file: the portable code, out of line.
        let v = if across || sa.raw || near_end(bit_a) || (pair && near_end(bit_b)) {
            // SAFETY: checked above.
            let (entry, heads) = unsafe {
                (
                    &*p.add(entry).cast::<[u8; VEC_TABLE]>(),
                    heads.map(|h| std::slice::from_raw_parts(p.add(h), header)),
                )
            };
            let bits = [&mut bit_a, &mut bit_b];
            let v = vector_track_cold(bytes, keys.mode, kind + 1, entry, heads, bits, keys.alpha);
            _mm_setr_ps(v.x, v.y, v.z, 0.0)
        } else {
            #[cfg(test)]
            FAST_VECTORS.set(FAST_VECTORS.get() + 1);
            // SAFETY: 8 bytes from byte `bit >> 3` (not `near_end`).
            let va = unsafe { read(p, bit_a, &sa) };
            bit_a += bits;
            if pair {
                // SAFETY: as above; key B's segment is key A's.
                let vb = unsafe { read(p, bit_b, &sa) };
                bit_b += bits;
                // `Vec3::lerp` (a * (1 - t) + b * t); a scale stays exact where both keys agree.
                let same = _mm_movemask_ps(_mm_cmpeq_ps(va, vb)) & 7 == 7;
                if kind == 1 && same {
                    va
                } else {
                    _mm_add_ps(_mm_mul_ps(va, s), _mm_mul_ps(vb, t))
                }
            } else {
                va
            }
        };
        // SAFETY: the entry was checked above.
        let joint = usize::from(unsafe { p.add(entry).cast::<u16>().read_unaligned() });
        if let Some(o) = out.get_mut(joint) {
            let mut xyz = [0.0f32; 4];
            // SAFETY: 16 bytes.
            unsafe { _mm_storeu_ps(xyz.as_mut_ptr(), v) };
            let v = Vec3::new(xyz[0], xyz[1], xyz[2]);
            if kind == 0 {
                o.translation = v;
            } else {
                o.scale = v;
            }
        }
    }
    true
}

/// A vector track's decoding constants: `value = offset + scale * q` per slot, the three slots'
/// widths as shifts and masks, and whether a slot is a raw float32.
#[derive(Clone, Copy)]
struct Slots {
    offset: __m128,
    scale: __m128,
    /// Each slot's first bit within the key's bits of the track (64-bit lanes 0-2).
    shift: __m256i,
    mask: __m128i,
    raw: bool,
}

/// `decode::slots3` on SSE lanes, the same operations in the same order: the track table entry at
/// `entry` (joint, then min x, y, z, then step x, y, z) and the segment header at `head` (the
/// code word, then `qmin`, `qext` a slot with segment ranges). Also returns the track's bits in one
/// key.
///
/// # Safety
/// `VEC_TABLE` bytes from `entry` and the header's bytes from `head` are readable.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn slots<const EVEX: bool>(
    p: *const u8,
    entry: usize,
    head: usize,
    ranges: bool,
    scale_lo: __m256,
    scale_hi: __m256,
) -> (Slots, usize) {
    // SAFETY (every read): inside the entry and the header, as the caller guarantees.
    let word = i32::from(unsafe { p.add(head).cast::<u16>().read_unaligned() });
    let codes = _mm_and_si128(
        _mm_srlv_epi32(_mm_set1_epi32(word), _mm_setr_epi32(0, 4, 8, 16)),
        _mm_set1_epi32(15),
    );
    let raw = _mm_movemask_epi8(_mm_cmpeq_epi32(codes, _mm_set1_epi32(15))) != 0;
    let none = _mm_cmpeq_epi32(codes, _mm_setzero_si128());
    let width = _mm_andnot_si128(none, _mm_add_epi32(codes, _mm_set1_epi32(2)));
    // CODE_SCALE[code] (as `Constants::new`, written out again: one helper for both changed how
    // the compiler laid out the EVEX sample, and a cold pose measured 5-15 % slower;
    // docs/PERFORMANCE.md) and CODE_MID[code] (0.5 for code 0, else 0).
    let wide = _mm256_castsi128_si256(codes);
    let inv = _mm256_castps256_ps128(if EVEX {
        // SAFETY: `EVEX` only inside `sample_evex`, run where the CPU has the EVEX extensions.
        unsafe { evex::permute2_ps(scale_lo, wide, scale_hi) }
    } else {
        _mm256_blendv_ps(
            _mm256_permutevar8x32_ps(scale_lo, wide),
            _mm256_permutevar8x32_ps(scale_hi, wide),
            _mm256_castsi256_ps(_mm256_cmpgt_epi32(wide, _mm256_set1_epi32(7))),
        )
    });
    let mid = _mm_and_ps(_mm_castsi128_ps(none), _mm_set1_ps(0.5));
    let (qmin, qext) = if ranges {
        // The header's bytes 2-7: qmin, qext of each slot; lane 3 from a zero byte.
        let h = unsafe { _mm_loadl_epi64(p.add(head).cast()) };
        let pick = |a: i8, b: i8, c: i8| {
            _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_shuffle_epi8(
                h,
                _mm_setr_epi8(a, b, c, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1),
            )))
        };
        (pick(2, 4, 6), pick(3, 5, 7))
    } else {
        (_mm_setzero_ps(), _mm_set1_ps(255.0))
    };
    // min x, y, z (and step x, not used); step x, y, z from a load of bytes 10-25.
    let (min, step) = unsafe {
        let step = _mm_loadu_ps(p.add(entry + 10).cast());
        (
            _mm_loadu_ps(p.add(entry + 2).cast()),
            _mm_shuffle_ps::<0b00_11_10_01>(step, step),
        )
    };
    let offset = _mm_add_ps(
        min,
        _mm_mul_ps(step, _mm_add_ps(qmin, _mm_mul_ps(qext, mid))),
    );
    let scale = _mm_mul_ps(_mm_mul_ps(step, qext), inv);
    let mask = _mm_sub_epi32(_mm_sllv_epi32(_mm_set1_epi32(1), width), _mm_set1_epi32(1));
    // Each slot's first bit: 0, w0, w0 + w1 (and the track's bits, w0 + w1 + w2).
    let w01 = _mm_add_epi32(width, _mm_slli_si128::<4>(width));
    let inc = _mm_add_epi32(w01, _mm_slli_si128::<8>(w01));
    let start = _mm_slli_si128::<4>(inc);
    let bits = _mm_extract_epi32::<2>(inc) as usize;
    let slots = Slots {
        offset,
        scale,
        shift: _mm256_cvtepu32_epi64(start),
        mask,
        raw,
    };
    (slots, bits)
}

/// `decode::read3` of ordinary slots on SSE lanes: the three slots of the key at bit `bit`,
/// dequantised (lane 3 not used).
///
/// # Safety
/// 8 bytes from byte `bit >> 3` of `p` are readable.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn read(p: *const u8, bit: usize, s: &Slots) -> __m128 {
    // SAFETY: as the caller guarantees.
    let word = unsafe { p.add(bit >> 3).cast::<u64>().read_unaligned() } >> (bit & 7);
    let lanes = _mm256_srlv_epi64(_mm256_set1_epi64x(word as i64), s.shift);
    // The low 32 bits of the four 64-bit lanes, masked: each slot's bits as an integer.
    let q = _mm_and_si128(
        _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
            lanes,
            _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6),
        )),
        s.mask,
    );
    _mm_add_ps(s.offset, _mm_mul_ps(s.scale, _mm_cvtepi32_ps(q)))
}
