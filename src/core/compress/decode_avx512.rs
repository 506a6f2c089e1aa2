//! The drop-W rotation groups of a pose decoded with AVX-512 (F, VL, BW, DQ), chosen at run time
//! on x86-64 CPUs that have it: the same operations in the same order as the AVX2 decoder
//! (`decode_avx2.rs`) and the portable group decoder in `decode.rs`, so the same bits, on sixteen
//! lanes instead of eight.
//!
//! Four groups ride in one 16-lane vector (a *quad*): lanes `4k..4k + 4` are group `g + k`'s
//! four tracks. A quad short of four groups (the last one of most clips) fills its missing
//! groups with code words of zero: zero-width slots, which take no bits and are not written. A
//! quad of at most two groups whose keys share a segment holds key A in lanes 0-7 and key B in
//! lanes 8-15 instead (one read and one rebuild for both keys).
//! What changes from the AVX2 decoder:
//! - the constants: the 16-entry `1 / (2^w - 1)` table is one register and one permute;
//! - where each lane's bits start: a prefix sum over all sixteen lanes (within each group, then
//!   each group's total carried into the next), so one quad's bits in one key are read with two
//!   64-byte loads from its first byte, each lane's 64 bits put in place by two-source dword
//!   permutes (`vpermt2d`) and two variable shifts;
//! - blends on mask registers; 32 vector registers.
//!
//! A quad whose slots include a raw float32 or whose key reads would reach past the end of the
//! file is handed to the AVX2 decoder (pair by pair: its reads reach less far, and only a pair
//! holding the raw slot goes on to the portable decoder); a quad with a rebuilt rotation whose
//! stored part is past unit length (which the format normalises) to the portable decoder, group
//! by group.
//!
//! The track table entries and segment headers of every group are checked against the file's
//! length once per pose, and each quad's key reads before they are made; the loads inside use raw
//! pointers on those checks (each `unsafe` block names the check it rests on).
#![allow(unsafe_code)]

use std::arch::x86_64::*;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU8, Ordering};

use super::decode::{Decoder, GROUP3_TABLE, GroupRun, Keys, ONE_KEY, PAIR_ACROSS, decode_group3};
use super::decode_avx2::{self, nlerp8, scatter};
#[cfg(test)]
use super::decode_avx2::{FAST_GROUPS, NORMALISED_PAIRS};
use super::format::CODE_SCALE;
use crate::core::anim::Transform;

#[cfg(test)]
thread_local! {
    /// Quads this thread decoded here, for tests.
    pub(super) static FAST_QUADS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Quads handed to the AVX2 decoder (a raw float32 slot, or reads near the end), for tests.
    pub(super) static AVX2_QUADS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Quads of at most two groups read with both keys at once, for tests.
    pub(super) static HALVES_QUADS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether the CPU has the AVX-512 subsets used here (and AVX2): 0 not asked yet, 1 no, 2 yes.
static HAS_AVX512: AtomicU8 = AtomicU8::new(0);

/// True when this CPU can run [`decode_groups`].
#[inline]
pub(super) fn available() -> bool {
    match HAS_AVX512.load(Ordering::Relaxed) {
        0 => detect(),
        level => level == 2,
    }
}

#[cold]
fn detect() -> bool {
    let yes = is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512vl")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512dq");
    HAS_AVX512.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
    yes
}

/// As `decode_avx2::decode_groups`, on quads of four groups. Call only when [`available`].
pub(super) fn decode_groups(
    run: GroupRun<'_>,
    out: &mut [Transform],
    then: impl FnOnce(&mut [Transform], [usize; 2]),
) {
    if !available() {
        return;
    }
    // SAFETY: the CPU has AVX-512 F, VL, BW, DQ and AVX2 (checked above).
    unsafe { quads(run, out, then) }
}

/// Bytes one key's read of a quad takes from the byte of its first bit: two 64-byte loads. The
/// sixteen lanes hold at most `16 * 48` bits from at most bit 7 of the first byte, so the last
/// lane's 64 bits end within the first `(7 + 15 * 48 + 64 + 31) / 32` dwords, 26 of 32.
const QUAD_REACH: usize = 128;

/// Quads read before they are interpolated (32 tracks).
const QUADS: usize = 2;

/// A quad read and rebuilt but not yet interpolated and written: the rotations of key A and key
/// B (x, y, z, w on sixteen lanes), whether some lane's stored part is past unit length, the
/// joints of each group's lanes (16 bits each) and how many lanes of each are tracks; and where
/// the quad was read from (its first group and the first bits of its keys), for the portable
/// decoder when a rotation needs normalising.
#[derive(Clone, Copy)]
struct Pending {
    keys: [[__m512; 4]; 2],
    /// Key A in lanes 0-7 of `keys[0]` and key B in lanes 8-15 (a quad of at most two groups,
    /// both keys in one segment); `keys[1]` unused.
    halves: bool,
    over: bool,
    joints: [u64; 4],
    lanes: [u8; 4],
    /// The quad's first group.
    group: u32,
    bits: [usize; 2],
}

#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512dq")]
fn quads(
    run: GroupRun<'_>,
    out: &mut [Transform],
    then: impl FnOnce(&mut [Transform], [usize; 2]),
) {
    // Every track table entry and segment header of the groups, checked once here; the key
    // reads are checked per quad.
    let (groups, all_inside) = (run.groups(), run.all_inside());
    let GroupRun {
        bytes,
        table,
        count,
        keys,
        bits: [mut bit_a, mut bit_b],
    } = run;
    let ranges = keys.ranges;
    let header = keys.group_header();
    let pair = keys.mode != ONE_KEY;
    let across = keys.mode == PAIR_ACROSS;
    let [ha, hb] = keys.headers;
    let len = bytes.len();
    let reach = |bit: usize| (bit >> 3).saturating_add(QUAD_REACH) <= len;
    // Where the groups of the quad starting at group `g` lie (a missing group at the last real
    // one's place): their track table entries, and their headers in key A's and key B's
    // segments; and how many are real.
    let place = |g: usize| {
        let real = (groups - g).min(4);
        let at = |base: usize, size: usize| {
            std::array::from_fn::<usize, 4, _>(|k| base + (g + k.min(real - 1)) * size)
        };
        (
            [at(table, GROUP3_TABLE), at(ha, header), at(hb, header)],
            real,
        )
    };
    let p = bytes.as_ptr();
    let mut then = Some(then);
    let quads = groups.div_ceil(4);
    let mut first = 0;
    // At least one round (none of the groups when there are none), so that `then` is called from
    // one place and can be inlined.
    loop {
        let end = (first + QUADS).min(quads);
        // Read and rebuild every quad of this batch, then interpolate and write them.
        let mut pending = [const { MaybeUninit::<Pending>::uninit() }; QUADS];
        let mut n = 0;
        for qi in first..end {
            let g = 4 * qi;
            let ([t, ga, gb], real) = place(g);
            let lanes: [usize; 4] = std::array::from_fn(|k| {
                if k < real {
                    (count - 4 * (g + k)).min(4)
                } else {
                    0
                }
            });
            let (start_a, start_b) = (bit_a, bit_b);
            let mut fast = all_inside && reach(bit_a) && (!pair || reach(bit_b));
            // At most two groups and both keys in one segment: key A in lanes 0-7, key B in
            // lanes 8-15, one read and one rebuild for both.
            let halves = fast && pair && !across && real <= 2;
            if halves {
                let both = |v: [usize; 4]| [v[0], v[1], v[0], v[1]];
                let live = [true, real > 1, true, real > 1];
                // SAFETY: `all_inside`: the entries and headers are in `bytes`.
                let c = unsafe { Constants::new(p, both(t), both(ga), live, true, ranges) };
                if c.raw {
                    fast = false;
                } else {
                    #[cfg(test)]
                    {
                        FAST_GROUPS.set(FAST_GROUPS.get() + real);
                        FAST_QUADS.set(FAST_QUADS.get() + 1);
                        HALVES_QUADS.set(HALVES_QUADS.get() + 1);
                    }
                    // SAFETY: `reach` of both keys' first bits.
                    let (ab, over) = rebuild(unsafe { c.read_halves(p, bit_a, bit_b) });
                    bit_a += c.bits;
                    bit_b += c.bits;
                    pending[n].write(Pending {
                        keys: [ab, ab],
                        halves: true,
                        over,
                        // SAFETY: `all_inside`.
                        joints: unsafe { t.map(|t| p.add(t).cast::<u64>().read_unaligned()) },
                        lanes: lanes.map(|l| l as u8),
                        group: g as u32,
                        bits: [start_a, start_b],
                    });
                    n += 1;
                    continue;
                }
            }
            if fast {
                let live = std::array::from_fn(|k| k < real);
                // SAFETY: `all_inside`: the entries and headers are in `bytes`.
                let c = unsafe { Constants::new(p, t, ga, live, false, ranges) };
                let read = if c.raw {
                    None
                } else if across {
                    // SAFETY: as above, and `reach` of both keys' first bits.
                    unsafe { read_across(p, t, gb, live, ranges, &c, [&mut bit_a, &mut bit_b]) }
                } else {
                    // SAFETY: `reach` of both keys' first bits. Keys of one segment have the
                    // same widths, so the same bits.
                    let a = unsafe { c.read(p, bit_a) };
                    let b = if pair { unsafe { c.read(p, bit_b) } } else { a };
                    bit_a += c.bits;
                    bit_b += if pair { c.bits } else { 0 };
                    Some([a, b])
                };
                match read {
                    Some(read) => {
                        #[cfg(test)]
                        {
                            FAST_GROUPS.set(FAST_GROUPS.get() + real);
                            FAST_QUADS.set(FAST_QUADS.get() + 1);
                        }
                        // Rebuilt here, so the square roots overlap the next quad's reads.
                        let (a, over_a) = rebuild(read[0]);
                        let (b, over_b) = if pair { rebuild(read[1]) } else { (a, false) };
                        pending[n].write(Pending {
                            keys: [a, b],
                            halves: false,
                            over: over_a | over_b,
                            // SAFETY: `all_inside`.
                            joints: unsafe { t.map(|t| p.add(t).cast::<u64>().read_unaligned()) },
                            lanes: lanes.map(|l| l as u8),
                            group: g as u32,
                            bits: [start_a, start_b],
                        });
                        n += 1;
                    }
                    None => fast = false,
                }
            }
            if !fast {
                #[cfg(test)]
                AVX2_QUADS.set(AVX2_QUADS.get() + 1);
                // Pair by pair with AVX2 (whose reads reach less far; a pair with a raw float32
                // goes on to the portable decoder).
                let run = GroupRun {
                    bytes,
                    table: t[0],
                    count: lanes.iter().sum(),
                    keys: Keys {
                        headers: [ga[0], gb[0]],
                        ..keys
                    },
                    bits: [start_a, start_b],
                };
                // The CPU has AVX-512, so AVX2: asked again here (a rare path).
                let cpu = Decoder::detect();
                decode_avx2::decode_groups(cpu, run, out, |_, end| [bit_a, bit_b] = end);
            }
        }
        if end == quads
            && let Some(then) = then.take()
        {
            // The translations and scales, read while the last batch's rotations finish.
            then(out, [bit_a, bit_b]);
        }
        if pair {
            for w in &mut pending[..n] {
                // SAFETY: the first `n` are written.
                let w = unsafe { w.assume_init_mut() };
                w.keys[0] = if w.halves {
                    let a = w.keys[0].map(|v| _mm512_castps512_ps256(v));
                    let b = w.keys[0].map(|v| _mm512_extractf32x8_ps::<1>(v));
                    nlerp8(a, b, keys.alpha).map(|v| _mm512_castps256_ps512(v))
                } else {
                    nlerp16(w.keys[0], w.keys[1], keys.alpha)
                };
            }
        }
        for w in &pending[..n] {
            // SAFETY: the first `n` are written.
            let w = unsafe { w.assume_init_ref() };
            if w.over {
                portable_quad(bytes, w, place(w.group as usize).0, &keys, out);
                continue;
            }
            let [x, y, z, w4] = w.keys[0];
            macro_rules! group {
                ($k:literal) => {
                    if w.lanes[$k] > 0 {
                        scatter(
                            [
                                _mm512_extractf32x4_ps::<$k>(x),
                                _mm512_extractf32x4_ps::<$k>(y),
                                _mm512_extractf32x4_ps::<$k>(z),
                                _mm512_extractf32x4_ps::<$k>(w4),
                            ],
                            w.joints[$k],
                            usize::from(w.lanes[$k]),
                            out,
                        )
                    }
                };
            }
            group!(0);
            group!(1);
            group!(2);
            group!(3);
        }
        first = end;
        if first >= quads {
            break;
        }
    }
}

/// A quad whose two keys lie in two segments: key A read with `ca`, key B with the constants of
/// its own segment's headers `hb`. Advances both bit positions; `None` when key B's segment holds
/// a raw float32 slot (the caller hands the quad to the portable decoder).
///
/// # Safety
/// As for [`Constants::new`] with `hb`, and [`QUAD_REACH`] bytes from both keys' first bytes.
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512dq")]
#[inline(never)]
unsafe fn read_across(
    p: *const u8,
    t: [usize; 4],
    hb: [usize; 4],
    live: [bool; 4],
    ranges: bool,
    ca: &Constants,
    [bit_a, bit_b]: [&mut usize; 2],
) -> Option<[[__m512; 4]; 2]> {
    // SAFETY: as the caller guarantees.
    let cb = unsafe { Constants::new(p, t, hb, live, false, ranges) };
    if cb.raw {
        return None;
    }
    // SAFETY: as the caller guarantees.
    let (a, b) = unsafe { (ca.read(p, *bit_a), cb.read(p, *bit_b)) };
    *bit_a += ca.bits;
    *bit_b += cb.bits;
    Some([a, b])
}

/// The decoding constants of a quad in one segment (sixteen lanes, four per group): per slot
/// `value = offset + scale * q` with `q` masked to its width, where each lane's bits start from
/// the quad's first bit, and the dropped components.
#[derive(Clone, Copy)]
struct Constants {
    offset: [__m512; 3],
    scale: [__m512; 3],
    mask: [__m512i; 3],
    /// The first bit of slots 1 and 2 within their lane, as 64-bit shifts of lanes 0-7
    /// (`[.., 0]`) and 8-15 (`[.., 1]`).
    shift: [[__m512i; 2]; 2],
    /// Each lane's first bit from the quad's first bit.
    start: __m512i,
    /// Bits of the quad in one key.
    bits: usize,
    drops: __m512i,
    /// Some slot is a raw float32 (this quad goes to the portable decoder).
    raw: bool,
}

impl Constants {
    /// `slot_params` on sixteen lanes, the same operations in the same order, from the track
    /// table entries at `t` and segment headers at `h` of the quad's groups (byte offsets from
    /// `p`); groups not `live` are missing (their code words taken as zero). With `halves`, lanes
    /// 8-15 are read from another key: each half's bits start at its own first bit, and `bits`
    /// counts one half.
    ///
    /// # Safety
    /// `t[k] + GROUP3_TABLE` and `h[k] + 8` (`+ GROUP3_HEADER` with `ranges`) bytes from `p` are
    /// readable.
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512dq")]
    #[inline]
    unsafe fn new(
        p: *const u8,
        t: [usize; 4],
        h: [usize; 4],
        live: [bool; 4],
        halves: bool,
        ranges: bool,
    ) -> Self {
        let zero = _mm512_setzero_si512();
        // SAFETY (every read below): inside the entries and headers, as the caller guarantees.
        let codes: [u64; 4] = std::array::from_fn(|k| {
            if live[k] {
                unsafe { p.add(h[k]).cast::<u64>().read_unaligned() }
            } else {
                0
            }
        });
        let words = _mm512_cvtepu16_epi32(_mm256_setr_epi64x(
            codes[0] as i64,
            codes[1] as i64,
            codes[2] as i64,
            codes[3] as i64,
        ));
        let fifteen = _mm512_set1_epi32(15);
        // SAFETY: CODE_SCALE holds 16 floats.
        let table = unsafe { _mm512_loadu_ps(CODE_SCALE.as_ptr()) };
        let mut offset = [_mm512_setzero_ps(); 3];
        let mut scale = [_mm512_setzero_ps(); 3];
        let mut mask = [zero; 3];
        let mut width = [zero; 3];
        let mut raw: __mmask16 = 0;
        // Each group's 8 bytes of a slot's ranges (qmin of its four lanes, then qext), the
        // qmins of the four groups put first, then the qexts.
        let order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
        for s in 0..3 {
            let code = _mm512_and_si512(
                _mm512_srl_epi32(words, _mm_cvtsi32_si128(4 * s as i32)),
                fifteen,
            );
            raw |= _mm512_cmpeq_epi32_mask(code, fifteen);
            let none = _mm512_cmpeq_epi32_mask(code, zero);
            let w = _mm512_maskz_add_epi32(!none, code, _mm512_set1_epi32(2));
            // CODE_SCALE[code]: one in-register table lookup.
            let inv = _mm512_permutexvar_ps(code, table);
            let mid = _mm512_maskz_mov_ps(none, _mm512_set1_ps(0.5));
            mask[s] = _mm512_sub_epi32(
                _mm512_sllv_epi32(_mm512_set1_epi32(1), w),
                _mm512_set1_epi32(1),
            );
            width[s] = w;
            let (qmin, qext) = if ranges {
                let r = unsafe {
                    _mm256_permutevar8x32_epi32(
                        _mm256_setr_epi64x(
                            p.add(h[0] + 8 + 8 * s).cast::<i64>().read_unaligned(),
                            p.add(h[1] + 8 + 8 * s).cast::<i64>().read_unaligned(),
                            p.add(h[2] + 8 + 8 * s).cast::<i64>().read_unaligned(),
                            p.add(h[3] + 8 + 8 * s).cast::<i64>().read_unaligned(),
                        ),
                        order,
                    )
                };
                (
                    _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_castsi256_si128(r))),
                    _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_extracti128_si256::<1>(r))),
                )
            } else {
                (_mm512_setzero_ps(), _mm512_set1_ps(255.0))
            };
            let (min, step) = unsafe {
                let f = |k: usize, at: usize| _mm_loadu_ps(p.add(t[k] + at).cast());
                let v = |at: usize| {
                    let lo = _mm256_set_m128(f(1, at), f(0, at));
                    let hi = _mm256_set_m128(f(3, at), f(2, at));
                    _mm512_insertf32x8::<1>(_mm512_castps256_ps512(lo), hi)
                };
                (v(8 + 16 * s), v(56 + 16 * s))
            };
            // offset = min + step * (qmin + qext * mid); scale = step * qext * inv.
            offset[s] = _mm512_add_ps(
                min,
                _mm512_mul_ps(step, _mm512_add_ps(qmin, _mm512_mul_ps(qext, mid))),
            );
            scale[s] = _mm512_mul_ps(_mm512_mul_ps(step, qext), inv);
        }
        // Where each lane starts from the quad's first bit: an exclusive prefix sum within each
        // group (128-bit lane), plus the totals of the groups before it.
        let s2 = _mm512_add_epi32(width[0], width[1]);
        let lane_bits = _mm512_add_epi32(s2, width[2]);
        let inc = _mm512_add_epi32(lane_bits, _mm512_bslli_epi128::<4>(lane_bits));
        let inc = _mm512_add_epi32(inc, _mm512_bslli_epi128::<8>(inc));
        // Each group's total in all its lanes, then the sum of the groups before each.
        let total = _mm512_shuffle_epi32::<0xFF>(inc);
        let up4 = |v: __m512i| _mm512_alignr_epi32::<12>(v, zero);
        let up8 = |v: __m512i| _mm512_alignr_epi32::<8>(v, zero);
        let carry = up4(total);
        let carry = if halves {
            // Group 0's total into group 1, group 2's into group 3.
            _mm512_maskz_mov_epi32(0xF0F0, carry)
        } else {
            let carry = _mm512_add_epi32(carry, up4(carry));
            _mm512_add_epi32(carry, up8(carry))
        };
        let start = _mm512_add_epi32(_mm512_bslli_epi128::<4>(inc), carry);
        let end = _mm512_add_epi32(inc, carry);
        let bits = if halves {
            _mm_extract_epi32::<3>(_mm512_extracti32x4_epi32::<1>(end))
        } else {
            _mm_extract_epi32::<3>(_mm512_extracti32x4_epi32::<3>(end))
        } as usize;
        // A slot's first bit within its lane, widened to 64-bit shifts per half.
        let halves = |v: __m512i| {
            [
                _mm512_cvtepu32_epi64(_mm512_castsi512_si256(v)),
                _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64::<1>(v)),
            ]
        };
        let drops = _mm512_and_si512(_mm512_srli_epi32::<12>(words), _mm512_set1_epi32(3));
        Constants {
            offset,
            scale,
            mask,
            shift: [halves(width[0]), halves(s2)],
            start,
            bits,
            drops,
            raw: raw != 0,
        }
    }

    /// The dequantised slots of the sixteen lanes in the key whose quad starts at bit `bit`, and
    /// their dropped components (`[c0, c1, c2, drops]`, for [`rebuild`]).
    ///
    /// # Safety
    /// [`QUAD_REACH`] bytes from byte `bit / 8` of `p` are readable.
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512dq")]
    #[inline]
    unsafe fn read(&self, p: *const u8, bit: usize) -> [__m512; 4] {
        let rel = _mm512_add_epi32(self.start, _mm512_set1_epi32((bit & 7) as i32));
        // SAFETY: both 64-byte reads end within QUAD_REACH bytes of byte `bit / 8`.
        let (d0, d1) = unsafe {
            let at = p.add(bit >> 3);
            (
                _mm512_loadu_si512(at.cast()),
                _mm512_loadu_si512(at.add(64).cast()),
            )
        };
        self.cut(rel, d0, d1)
    }

    /// [`Self::read`] of constants made with `halves`: lanes 0-7 from the key at bit `bit_a`,
    /// lanes 8-15 from the key at bit `bit_b` (64 bytes loaded from each key's first byte: a
    /// half holds at most `8 * 48` bits).
    ///
    /// # Safety
    /// 64 bytes from bytes `bit_a / 8` and `bit_b / 8` of `p` are readable.
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512dq")]
    #[inline]
    unsafe fn read_halves(&self, p: *const u8, bit_a: usize, bit_b: usize) -> [__m512; 4] {
        // Lanes 8-15 count from the second load: 512 bits on.
        let first = _mm512_mask_blend_epi32(
            0xFF00,
            _mm512_set1_epi32((bit_a & 7) as i32),
            _mm512_set1_epi32(512 + (bit_b & 7) as i32),
        );
        let rel = _mm512_add_epi32(self.start, first);
        // SAFETY: as the caller guarantees.
        let (d0, d1) = unsafe {
            (
                _mm512_loadu_si512(p.add(bit_a >> 3).cast()),
                _mm512_loadu_si512(p.add(bit_b >> 3).cast()),
            )
        };
        self.cut(rel, d0, d1)
    }

    /// The slots of the sixteen lanes whose first bits are `rel`, counted from bit 0 of the 128
    /// bytes `d0`, `d1` (each lane's 64 bits within them).
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512dq")]
    #[inline]
    fn cut(&self, rel: __m512i, d0: __m512i, d1: __m512i) -> [__m512; 4] {
        // Each lane's 64 bits from its first bit, in 64-bit lanes: with `d` the 32-bit word
        // holding the first bit and `r` the bit in it, `(words d, d+1) >> r | (words d+1, d+2)
        // << (32 - r)`, the words picked from the 32 loaded by two-source permutes.
        let dword = _mm512_srli_epi32::<5>(rel);
        let bit_in = _mm512_and_si512(rel, _mm512_set1_epi32(31));
        let word64 = |spread: __m512i| {
            let lo = _mm512_add_epi32(
                _mm512_permutexvar_epi32(spread, dword),
                _mm512_set1_epi64(1 << 32),
            );
            let hi = _mm512_add_epi32(lo, _mm512_set1_epi32(1));
            let r = _mm512_and_si512(
                _mm512_permutexvar_epi32(spread, bit_in),
                _mm512_set1_epi64(31),
            );
            _mm512_or_si512(
                _mm512_srlv_epi64(_mm512_permutex2var_epi32(d0, lo, d1), r),
                _mm512_sllv_epi64(
                    _mm512_permutex2var_epi32(d0, hi, d1),
                    _mm512_sub_epi64(_mm512_set1_epi64(32), r),
                ),
            )
        };
        let w0 = word64(_mm512_setr_epi32(
            0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7,
        ));
        let w1 = word64(_mm512_setr_epi32(
            8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15,
        ));
        // The three slots: each word shifted by the slot's offset in the lane, the low 32 bits of
        // the sixteen words packed back in lane order, masked and dequantised.
        let low = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        let slot = |s: usize, a: __m512i, b: __m512i| {
            let q = _mm512_and_si512(_mm512_permutex2var_epi32(a, low, b), self.mask[s]);
            _mm512_add_ps(
                self.offset[s],
                _mm512_mul_ps(self.scale[s], _mm512_cvtepi32_ps(q)),
            )
        };
        let shifted = |s: usize| {
            slot(
                s,
                _mm512_srlv_epi64(w0, self.shift[s - 1][0]),
                _mm512_srlv_epi64(w1, self.shift[s - 1][1]),
            )
        };
        [
            slot(0, w0, w1),
            shifted(1),
            shifted(2),
            _mm512_castsi512_ps(self.drops),
        ]
    }
}

/// The rotations of decoded slots `[c0, c1, c2, drops]` (16 lanes): the dropped component
/// rebuilt as `sqrt(max(0, 1 - ((c0² + c1²) + c2²)))` and placed; x, y, z, w. The flag is set
/// when some lane's stored part is past unit length, which the format normalises: the caller
/// decodes such a quad again with the portable decoder.
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512dq")]
#[inline]
fn rebuild([c0, c1, c2, drops]: [__m512; 4]) -> ([__m512; 4], bool) {
    let sum = _mm512_add_ps(
        _mm512_add_ps(_mm512_mul_ps(c0, c0), _mm512_mul_ps(c1, c1)),
        _mm512_mul_ps(c2, c2),
    );
    let w2 = _mm512_sub_ps(_mm512_set1_ps(1.0), sum);
    let d = _mm512_sqrt_ps(_mm512_max_ps(w2, _mm512_setzero_ps()));
    let drops = _mm512_castps_si512(drops);
    let is = |k: i32| _mm512_cmpeq_epi32_mask(drops, _mm512_set1_epi32(k));
    let (is0, is1, is2, is3) = (is(0), is(1), is(2), is(3));
    // mask_blend(m, a, b): b where m is set.
    let x = _mm512_mask_blend_ps(is0, c0, d);
    let y = _mm512_mask_blend_ps(is0, _mm512_mask_blend_ps(is1, c1, d), c0);
    let z = _mm512_mask_blend_ps(is3, _mm512_mask_blend_ps(is2, c1, d), c2);
    let w = _mm512_mask_blend_ps(is3, c2, d);
    let over = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(w2, _mm512_setzero_ps());
    ([x, y, z, w], over != 0)
}

/// A pending quad decoded again, group by group, by the portable decoder (which normalises the
/// lanes whose stored part is past unit length), from where it was read: `place` holds its
/// groups' track table entries and their headers in key A's and key B's segments.
#[cold]
#[inline(never)]
fn portable_quad(
    bytes: &[u8],
    w: &Pending,
    [table, ha, hb]: [[usize; 4]; 3],
    keys: &Keys,
    out: &mut [Transform],
) {
    #[cfg(test)]
    NORMALISED_PAIRS.set(NORMALISED_PAIRS.get() + 1);
    let [mut bit_a, mut bit_b] = w.bits;
    for k in 0..4 {
        let lanes = usize::from(w.lanes[k]);
        if lanes == 0 {
            break;
        }
        let keys = Keys {
            headers: [ha[k], hb[k]],
            ..*keys
        };
        decode_group3(bytes, table[k], &keys, [&mut bit_a, &mut bit_b], lanes, out);
    }
}

/// `anim::nlerp` on sixteen pairs of rotations (x, y, z, w lanes), the same operations in the
/// same order.
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512dq")]
#[inline]
fn nlerp16(a: [__m512; 4], b: [__m512; 4], t: f32) -> [__m512; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    let add = |x: __m512, y: __m512| _mm512_add_ps(x, y);
    let mul = |x: __m512, y: __m512| _mm512_mul_ps(x, y);
    // Quat::dot groups (x + z) + (y + w).
    let dot = add(add(mul(ax, bx), mul(az, bz)), add(mul(ay, by), mul(aw, bw)));
    // `-b` where the dot is negative: the sign bit flipped (the same bits as `b * -1.0` for
    // the finite values a file holds).
    let flip = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(dot, _mm512_setzero_ps());
    let sign = _mm512_set1_ps(-0.0);
    let neg = |v: __m512| _mm512_mask_xor_ps(v, flip, v, sign);
    let (bx, by, bz, bw) = (neg(bx), neg(by), neg(bz), neg(bw));
    let (s, t) = (_mm512_set1_ps(1.0 - t), _mm512_set1_ps(t));
    let lerp = |a: __m512, b: __m512| add(mul(a, s), mul(b, t));
    let (qx, qy, qz, qw) = (lerp(ax, bx), lerp(ay, by), lerp(az, bz), lerp(aw, bw));
    let len2 = add(add(mul(qx, qx), mul(qz, qz)), add(mul(qy, qy), mul(qw, qw)));
    let r = _mm512_div_ps(_mm512_set1_ps(1.0), _mm512_sqrt_ps(len2));
    let q = [mul(qx, r), mul(qy, r), mul(qz, r), mul(qw, r)];
    let ok = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(len2, _mm512_setzero_ps());
    if ok == 0xFFFF {
        return q;
    }
    // Opposite rotations cancelled: `a` is kept, as `anim::nlerp` does.
    [
        _mm512_mask_blend_ps(ok, ax, q[0]),
        _mm512_mask_blend_ps(ok, ay, q[1]),
        _mm512_mask_blend_ps(ok, az, q[2]),
        _mm512_mask_blend_ps(ok, aw, q[3]),
    ]
}
