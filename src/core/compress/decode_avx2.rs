//! The drop-W rotation groups of a pose decoded with AVX2, chosen at run time on x86-64 CPUs
//! that have it: the same operations in the same order as the portable group decoder in
//! `decode.rs` (and so as the scalar [`slot_params`], [`rotation_from_slots`] and
//! `anim::nlerp`), so the same bits.
//!
//! Both keys of a sample ride in one 8-lane vector: lanes 0-3 are key A's four tracks, lanes 4-7
//! key B's (the same key again when only one key is read). So every step up to the nlerp runs once
//! for both keys:
//! - the segment constants: the eight code words widened into lanes; a width is `code + 2` (0 for
//!   code 0), `1 / (2^w - 1)` is looked up in the table held in two registers, the mask
//!   `2^w - 1` is a shift; the `qmin`/`qext` bytes of both headers are shuffled into place and
//!   widened with two instructions;
//! - where each lane's bits start: a prefix sum within each half;
//! - the reads: one gather of four 64-bit words per key, each shifted by its lane's own amounts
//!   (`vpsrlvq`) to cut the three slots, the low halves packed back into 8 lanes;
//! - the dequantisation on 8 lanes.
//!
//! The dequantised groups (up to eight) are kept in a [`Batch`], then rebuilt (the dropped
//! component placed with blends) and nlerped two groups at a time on 8 lanes, so the square roots
//! and divisions of several groups overlap instead of ending each group with a wait.
//!
//! A group whose slots include a raw float32, or whose key reads would reach past the end of the
//! file, is handed to the portable decoder.
//!
//! [`slot_params`]: super::format::slot_params
//! [`rotation_from_slots`]: super::format::rotation_from_slots
#![allow(unsafe_code)]

use std::arch::x86_64::*;
use std::sync::atomic::{AtomicU8, Ordering};

use glam::{Quat, Vec4};

use super::decode::{
    GROUP3_HEADER, GROUP3_HEADER_NO_RANGES, GROUP3_TABLE, Keys, ONE_KEY, PAIR_ACROSS,
    decode_group3, normalise_lanes, raw_codes,
};
use super::format::CODE_SCALE;
use crate::core::anim::Transform;

#[cfg(test)]
thread_local! {
    /// Groups this thread decoded here (not handed to the portable decoder), for tests.
    pub(super) static FAST_GROUPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether the CPU has AVX2: 0 not asked yet, 1 no, 2 yes.
static HAS_AVX2: AtomicU8 = AtomicU8::new(0);

/// True when this CPU can run [`decode_groups`].
#[inline]
pub(super) fn available() -> bool {
    match HAS_AVX2.load(Ordering::Relaxed) {
        0 => detect(),
        level => level == 2,
    }
}

#[cold]
fn detect() -> bool {
    let yes = is_x86_feature_detected!("avx2");
    HAS_AVX2.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
    yes
}

/// Decodes `count` drop-W rotation tracks (groups of four, track table at `table`) of the keys
/// whose bits start at `bits` and whose headers are described by `keys` (those of the first
/// group) into `out`. `then` is called with `out` and where the rotations' bits end in each key,
/// after the keys are read and before the last groups are interpolated, so that its own reads
/// overlap that work. Call only when [`available`].
pub(super) fn decode_groups(
    bytes: &[u8],
    table: usize,
    count: usize,
    keys: Keys,
    bits: [usize; 2],
    out: &mut [Transform],
    then: impl FnOnce(&mut [Transform], [usize; 2]),
) {
    if !available() {
        return;
    }
    // SAFETY: the CPU has AVX2 (checked above).
    unsafe { groups(bytes, table, count, keys, bits, out, then) }
}

/// Bytes a key's reads may touch from the byte of its first bit: lane 3 starts at most
/// `(7 + 3 * 48) / 8 = 18` bytes in and reads 8.
const REACH: usize = 26;

#[target_feature(enable = "avx2")]
fn groups(
    bytes: &[u8],
    mut table: usize,
    count: usize,
    mut keys: Keys,
    [mut bit_a, mut bit_b]: [usize; 2],
    out: &mut [Transform],
    then: impl FnOnce(&mut [Transform], [usize; 2]),
) {
    let header = if keys.ranges {
        GROUP3_HEADER
    } else {
        GROUP3_HEADER_NO_RANGES
    };
    let pair = keys.mode != ONE_KEY;
    let across = keys.mode == PAIR_ACROSS;
    // Gathers index bytes with 32-bit offsets.
    let small = bytes.len() < i32::MAX as usize;
    let mut batch = Batch {
        slots: [[_mm256_setzero_ps(); 4]; BATCH],
        joints: [0; BATCH],
        lanes: [0; BATCH],
        len: 0,
    };
    for g in 0..count.div_ceil(4) {
        let lanes = (count - 4 * g).min(4);
        let [ha, hb] = keys.headers;
        let a = read_header(bytes, ha, keys.ranges);
        let b = if across {
            read_header(bytes, hb, keys.ranges)
        } else {
            a
        };
        let fast = small
            && match (
                bytes
                    .get(table..)
                    .and_then(|t| t.first_chunk::<GROUP3_TABLE>()),
                a,
                b,
            ) {
                (Some(t), Some(a), Some(b)) => {
                    let (ka, kb) = (bit_a, if pair { bit_b } else { bit_a });
                    let reach = |bit: usize| (bit >> 3) + REACH <= bytes.len();
                    let raw = raw_codes(a.0) || (across && raw_codes(b.0));
                    if raw || !reach(ka.max(kb)) {
                        false
                    } else {
                        #[cfg(test)]
                        FAST_GROUPS.set(FAST_GROUPS.get() + 1);
                        let (r, [na, nb]) = group(bytes, t, a, b, [ka, kb]);
                        let k = batch.len;
                        batch.slots[k] = r;
                        batch.joints[k] =
                            u64::from_le_bytes(*t.first_chunk::<8>().unwrap_or(&[0xFF; 8]));
                        batch.lanes[k] = lanes as u8;
                        batch.len += 1;
                        if batch.len == BATCH {
                            batch.flush(pair, keys.alpha, out);
                        }
                        bit_a += na;
                        if pair {
                            bit_b += nb;
                        }
                        true
                    }
                }
                _ => false,
            };
        if !fast {
            decode_group3(bytes, table, &keys, [&mut bit_a, &mut bit_b], lanes, out);
        }
        table += GROUP3_TABLE;
        keys.headers = [ha + header, hb + header];
    }
    then(out, [bit_a, bit_b]);
    batch.flush(pair, keys.alpha, out);
}

/// A group's code words and its three slots' range bytes (`qmin` of the four lanes, then
/// `qext`); without segment ranges `qmin = 0` and `qext = 255`.
#[inline(always)]
fn read_header(bytes: &[u8], at: usize, ranges: bool) -> Option<(u64, [u64; 3])> {
    const NO_RANGES: u64 = 0xFFFF_FFFF_0000_0000;
    let word = |h: &[u8], k: usize| {
        h.get(k..)
            .and_then(|w| w.first_chunk::<8>())
            .map(|w| u64::from_le_bytes(*w))
    };
    let h = bytes.get(at..)?;
    if ranges {
        Some((
            word(h, 0)?,
            [word(h, 8)?, word(h, 16)?, word(h, GROUP3_HEADER - 8)?],
        ))
    } else {
        Some((word(h, 0)?, [NO_RANGES; 3]))
    }
}

/// Decodes one group: key A at bit `bits[0]` with header `a`, key B at `bits[1]` with header `b`
/// (the same as A's within one segment); returns the dequantised slots and the dropped component
/// of each lane (key A in lanes 0-3, key B in 4-7) for [`rebuild`], and the bits of the group in
/// each key.
#[target_feature(enable = "avx2")]
#[inline]
fn group(
    bytes: &[u8],
    table: &[u8; GROUP3_TABLE],
    (codes_a, ranges_a): (u64, [u64; 3]),
    (codes_b, ranges_b): (u64, [u64; 3]),
    bits: [usize; 2],
) -> ([__m256; 4], [usize; 2]) {
    let zero = _mm256_setzero_si256();
    // The eight code words: key A's four lanes, then key B's.
    let words = _mm256_cvtepu16_epi32(_mm_set_epi64x(codes_b as i64, codes_a as i64));
    let fifteen = _mm256_set1_epi32(15);
    let mut offset = [_mm256_setzero_ps(); 3];
    let mut scale = [_mm256_setzero_ps(); 3];
    let mut mask = [zero; 3];
    let mut width = [zero; 3];
    let t = CODE_SCALE;
    let scale_lo = _mm256_setr_ps(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]);
    let scale_hi = _mm256_setr_ps(t[8], t[9], t[10], t[11], t[12], t[13], t[14], t[15]);
    // qmin of A, qmin of B, qext of A, qext of B.
    let order = _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15);
    for s in 0..3 {
        let code = _mm256_and_si256(
            _mm256_srl_epi32(words, _mm_cvtsi32_si128(4 * s as i32)),
            fifteen,
        );
        let none = _mm256_cmpeq_epi32(code, zero);
        let w = _mm256_andnot_si256(none, _mm256_add_epi32(code, _mm256_set1_epi32(2)));
        // CODE_SCALE[code]: two in-register table lookups (the low three bits of the code pick
        // an entry of each half) and a blend on the fourth bit.
        let inv = _mm256_blendv_ps(
            _mm256_permutevar8x32_ps(scale_lo, code),
            _mm256_permutevar8x32_ps(scale_hi, code),
            _mm256_castsi256_ps(_mm256_cmpgt_epi32(code, _mm256_set1_epi32(7))),
        );
        let mid = _mm256_and_ps(_mm256_castsi256_ps(none), _mm256_set1_ps(0.5));
        mask[s] = _mm256_sub_epi32(
            _mm256_sllv_epi32(_mm256_set1_epi32(1), w),
            _mm256_set1_epi32(1),
        );
        width[s] = w;
        let r = _mm_shuffle_epi8(
            _mm_set_epi64x(ranges_b[s] as i64, ranges_a[s] as i64),
            order,
        );
        let qmin = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(r));
        let qext = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128::<8>(r)));
        let min = _mm256_broadcast_ps(&f32x4(table, 8 + 16 * s));
        let step = _mm256_broadcast_ps(&f32x4(table, 56 + 16 * s));
        // offset = min + step * (qmin + qext * mid); scale = step * qext * inv (`slot_params`).
        offset[s] = _mm256_add_ps(
            min,
            _mm256_mul_ps(step, _mm256_add_ps(qmin, _mm256_mul_ps(qext, mid))),
        );
        scale[s] = _mm256_mul_ps(_mm256_mul_ps(step, qext), inv);
    }
    // Where each lane starts within its key: an exclusive prefix sum within each half.
    let s2 = _mm256_add_epi32(width[0], width[1]);
    let lane_bits = _mm256_add_epi32(s2, width[2]);
    let inc = _mm256_add_epi32(lane_bits, _mm256_slli_si256::<4>(lane_bits));
    let inc = _mm256_add_epi32(inc, _mm256_slli_si256::<8>(inc));
    let start = _mm256_slli_si256::<4>(inc);
    let totals = [
        _mm256_extract_epi32::<3>(inc) as usize,
        _mm256_extract_epi32::<7>(inc) as usize,
    ];
    // Each lane's first bit from the byte of its key's first bit, split into a byte and a shift.
    let [ka, kb] = bits;
    let rel = _mm256_add_epi32(
        start,
        _mm256_setr_epi32(
            (ka & 7) as i32,
            (ka & 7) as i32,
            (ka & 7) as i32,
            (ka & 7) as i32,
            (kb & 7) as i32,
            (kb & 7) as i32,
            (kb & 7) as i32,
            (kb & 7) as i32,
        ),
    );
    let index = _mm256_add_epi32(
        _mm256_srli_epi32::<3>(rel),
        _mm256_setr_epi32(
            (ka >> 3) as i32,
            (ka >> 3) as i32,
            (ka >> 3) as i32,
            (ka >> 3) as i32,
            (kb >> 3) as i32,
            (kb >> 3) as i32,
            (kb >> 3) as i32,
            (kb >> 3) as i32,
        ),
    );
    let shift = _mm256_and_si256(rel, _mm256_set1_epi32(7));
    // Lane starts grow within each half: lanes 3 and 7 read furthest in their keys.
    debug_assert!(
        {
            let end = |k: usize, start: i32| (k >> 3) + ((k & 7) + start as usize) / 8 + 8;
            end(ka, _mm256_extract_epi32::<3>(start)) <= bytes.len()
                && end(kb, _mm256_extract_epi32::<7>(start)) <= bytes.len()
        },
        "a key read past the end of the bytes"
    );
    // SAFETY: every index is at most `REACH - 8` bytes past its key's first byte, and the caller
    // checked that `REACH` bytes from there are in `bytes` (whose length is below i32::MAX).
    let (wa, wb) = unsafe {
        let p = bytes.as_ptr().cast::<i64>();
        (
            _mm256_i32gather_epi64::<1>(p, _mm256_castsi256_si128(index)),
            _mm256_i32gather_epi64::<1>(p, _mm256_extracti128_si256::<1>(index)),
        )
    };
    // The three slots: each word shifted by its lane's shift plus the slot's offset in the lane,
    // then the low 32 bits of the eight words packed back in lane order and masked.
    let cut = |by: __m256i, m: __m256i| {
        let a = _mm256_srlv_epi64(wa, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(by)));
        let b = _mm256_srlv_epi64(wb, _mm256_cvtepu32_epi64(_mm256_extracti128_si256::<1>(by)));
        // Low dwords: a0 a1 b0 b1 | a2 a3 b2 b3, then the 64-bit pairs put in order.
        let lo = _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(
            _mm256_castsi256_ps(a),
            _mm256_castsi256_ps(b),
        ));
        _mm256_and_si256(_mm256_permute4x64_epi64::<0b11_01_10_00>(lo), m)
    };
    let q = [
        cut(shift, mask[0]),
        cut(_mm256_add_epi32(shift, width[0]), mask[1]),
        cut(_mm256_add_epi32(shift, s2), mask[2]),
    ];
    let v = |s: usize| _mm256_add_ps(offset[s], _mm256_mul_ps(scale[s], _mm256_cvtepi32_ps(q[s])));
    // The slots, and the dropped component of each lane (bits 12-13 of its code word); the
    // rebuild waits for the batch.
    let drops = _mm256_and_si256(_mm256_srli_epi32::<12>(words), _mm256_set1_epi32(3));
    ([v(0), v(1), v(2), _mm256_castsi256_ps(drops)], totals)
}

/// The rotations of decoded slots `[c0, c1, c2, drops]` (8 lanes): the dropped component rebuilt
/// as `sqrt(max(0, 1 - ((c0² + c1²) + c2²)))` and placed; x, y, z, w.
#[target_feature(enable = "avx2")]
#[inline]
fn rebuild([c0, c1, c2, drops]: [__m256; 4]) -> [__m256; 4] {
    let sum = _mm256_add_ps(
        _mm256_add_ps(_mm256_mul_ps(c0, c0), _mm256_mul_ps(c1, c1)),
        _mm256_mul_ps(c2, c2),
    );
    let w2 = _mm256_sub_ps(_mm256_set1_ps(1.0), sum);
    let d = _mm256_sqrt_ps(_mm256_max_ps(w2, _mm256_setzero_ps()));
    let drops = _mm256_castps_si256(drops);
    let is = |k: i32| _mm256_castsi256_ps(_mm256_cmpeq_epi32(drops, _mm256_set1_epi32(k)));
    let (is0, is1, is2, is3) = (is(0), is(1), is(2), is(3));
    // blendv(a, b, m): b where m is set.
    let x = _mm256_blendv_ps(c0, d, is0);
    let y = _mm256_blendv_ps(_mm256_blendv_ps(c1, d, is1), c0, is0);
    let z = _mm256_blendv_ps(_mm256_blendv_ps(c1, d, is2), c2, is3);
    let w = _mm256_blendv_ps(c2, d, is3);
    let r = [x, y, z, w];
    let over = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(w2, _mm256_setzero_ps()));
    if over != 0 {
        return normalise_over(r, over);
    }
    r
}

/// Groups read but not yet rebuilt, interpolated and written: their 8-lane slots and drops (key A
/// in lanes 0-3, key B in 4-7), joints and track count. Rebuilding and interpolating a batch after
/// reading it lets the square roots and divisions of several groups overlap instead of ending each
/// group with a wait.
struct Batch {
    slots: [[__m256; 4]; BATCH],
    joints: [u64; BATCH],
    lanes: [u8; BATCH],
    len: usize,
}

/// Groups decoded before they are interpolated.
const BATCH: usize = 8;

impl Batch {
    /// Interpolates (when `pair`) and writes every pending group, two groups on the 8 lanes of
    /// one interpolation.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn flush(&mut self, pair: bool, alpha: f32, out: &mut [Transform]) {
        let mut k = 0;
        while k < self.len {
            let r0 = rebuild(self.slots[k]);
            let r1 = if k + 1 < self.len {
                rebuild(self.slots[k + 1])
            } else {
                r0
            };
            // Key A of both groups, key B of both groups.
            let a = [0, 1, 2, 3].map(|c| _mm256_permute2f128_ps::<0x20>(r0[c], r1[c]));
            let q = if pair {
                let b = [0, 1, 2, 3].map(|c| _mm256_permute2f128_ps::<0x31>(r0[c], r1[c]));
                nlerp8(a, b, alpha)
            } else {
                a
            };
            scatter(
                q.map(|v| _mm256_castps256_ps128(v)),
                self.joints[k],
                usize::from(self.lanes[k]),
                out,
            );
            if k + 1 < self.len {
                scatter(
                    q.map(|v| _mm256_extractf128_ps::<1>(v)),
                    self.joints[k + 1],
                    usize::from(self.lanes[k + 1]),
                    out,
                );
            }
            k += 2;
        }
        self.len = 0;
    }
}

/// Four little-endian f32 at `at` of a group's track table entry.
#[inline(always)]
fn f32x4(t: &[u8; GROUP3_TABLE], at: usize) -> __m128 {
    let f = |k: usize| f32::from_le_bytes([t[at + k], t[at + k + 1], t[at + k + 2], t[at + k + 3]]);
    __m128::from(Vec4::new(f(0), f(4), f(8), f(12)))
}

/// Lanes whose stored part was pushed past unit length by quantisation (bits of `over`),
/// normalised by the portable decoder's [`normalise_lanes`].
#[cold]
#[target_feature(enable = "avx2")]
fn normalise_over(q: [__m256; 4], over: i32) -> [__m256; 4] {
    let mut lanes = q.map(|v| {
        let (lo, hi) = (_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let (lo, hi) = (Vec4::from(lo).to_array(), Vec4::from(hi).to_array());
        [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]]
    });
    normalise_lanes(&mut lanes, over as u32);
    lanes.map(|a| _mm256_setr_ps(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]))
}

/// `anim::nlerp` on eight pairs of rotations (x, y, z, w lanes), the same operations in the
/// same order.
#[target_feature(enable = "avx2")]
#[inline]
fn nlerp8(a: [__m256; 4], b: [__m256; 4], t: f32) -> [__m256; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    let add = |x: __m256, y: __m256| _mm256_add_ps(x, y);
    let mul = |x: __m256, y: __m256| _mm256_mul_ps(x, y);
    // Quat::dot groups (x + z) + (y + w).
    let dot = add(add(mul(ax, bx), mul(az, bz)), add(mul(ay, by), mul(aw, bw)));
    let flip = _mm256_cmp_ps::<_CMP_LT_OQ>(dot, _mm256_setzero_ps());
    let minus = _mm256_set1_ps(-1.0);
    let neg = |v: __m256| _mm256_blendv_ps(v, mul(v, minus), flip);
    let (bx, by, bz, bw) = (neg(bx), neg(by), neg(bz), neg(bw));
    let (s, t) = (_mm256_set1_ps(1.0 - t), _mm256_set1_ps(t));
    let lerp = |a: __m256, b: __m256| add(mul(a, s), mul(b, t));
    let (qx, qy, qz, qw) = (lerp(ax, bx), lerp(ay, by), lerp(az, bz), lerp(aw, bw));
    let len2 = add(add(mul(qx, qx), mul(qz, qz)), add(mul(qy, qy), mul(qw, qw)));
    let r = _mm256_div_ps(_mm256_set1_ps(1.0), _mm256_sqrt_ps(len2));
    let ok = _mm256_cmp_ps::<_CMP_GT_OQ>(len2, _mm256_setzero_ps());
    [
        _mm256_blendv_ps(ax, mul(qx, r), ok),
        _mm256_blendv_ps(ay, mul(qy, r), ok),
        _mm256_blendv_ps(az, mul(qz, r), ok),
        _mm256_blendv_ps(aw, mul(qw, r), ok),
    ]
}

/// The four rotations (x, y, z, w lanes) transposed into quaternions and written to the joints of
/// the first `lanes` lanes (16 bits each in `joints`).
#[target_feature(enable = "avx2")]
#[inline]
fn scatter([x, y, z, w]: [__m128; 4], joints: u64, lanes: usize, out: &mut [Transform]) {
    let xy_lo = _mm_unpacklo_ps(x, y); // x0 y0 x1 y1
    let xy_hi = _mm_unpackhi_ps(x, y); // x2 y2 x3 y3
    let zw_lo = _mm_unpacklo_ps(z, w);
    let zw_hi = _mm_unpackhi_ps(z, w);
    let q = [
        _mm_movelh_ps(xy_lo, zw_lo),
        _mm_movehl_ps(zw_lo, xy_lo),
        _mm_movelh_ps(xy_hi, zw_hi),
        _mm_movehl_ps(zw_hi, xy_hi),
    ];
    for (lane, q) in q.into_iter().enumerate().take(lanes) {
        let j = ((joints >> (16 * lane)) & 0xFFFF) as usize;
        if let Some(o) = out.get_mut(j) {
            o.rotation = Quat::from_vec4(Vec4::from(q));
        }
    }
}
