//! Sampling a compressed clip straight from its `.tlc` bytes (layout: `docs/TLC_FORMAT.md`).
//!
//! A pose is: the rest pose and the constant tracks (read from their sections), then every
//! animated track decoded from the segment(s) holding the two keys around the sampled time. Each
//! key is decoded completely (every slot dequantised, each rotation rebuilt), then the two keys are
//! interpolated exactly as the animation core interpolates two frames of an uncompressed clip
//! (`anim::nlerp` on the shortest path for rotations, lerp for translations and scales), so the
//! decoder adds no interpolation error of its own between keys.
//!
//! Nothing is read but the bytes and the fixed-size [`Layout`]: the per-segment decoding constants
//! (`offset + scale * q` per slot) are recomputed from each segment's header at every sample.
//! Drop-W rotations, stored in groups of four tracks, are decoded four at a time, one track per
//! lane: dequantisation, the rebuild of the dropped component and the nlerp run on four lanes with
//! the same operations, in the same order, as the scalar functions ([`slot_params`],
//! [`rotation_from_slots`], `anim::nlerp`), so the results are the same bits. On x86-64 CPUs with
//! AVX2 the groups go to `decode_avx2.rs` instead (both keys on eight lanes; the same bits).
//!
//! [`Layout`]: super::format::Layout
// Lanes and slots index several parallel arrays together; index loops read clearer.
#![allow(clippy::needless_range_loop)]

use glam::{Quat, Vec3, Vec4};

use super::bits::read_bits;
use super::format::{
    CODE_MASK, CODE_MID, CODE_SCALE, CompressedClip, FLAG_SEGMENT_RANGES, NO_DROP, RAW_CODE,
    SEGMENT_ENTRY_BYTES, STATIC_REST_ROTATIONS, STATIC_REST_SCALES, STATIC_ROTATIONS,
    STATIC_SCALES, STATIC_TRANSLATIONS, TrackKind, dequantize_slot, f32_at, key_frame,
    rotation_from_slots, slot_params, u16_at, u64_at,
};
use super::prefetch::prefetch;
use super::quat_pack::unpack_smallest_three;
use super::settings::{RotationFormat, WIDTHS};
use crate::core::anim::{Clip, Transform, nlerp};

/// Where one segment's headers and keys are.
#[derive(Debug, Clone, Copy)]
struct SegmentRef {
    /// Byte offset of the first track header.
    headers: usize,
    /// Bit offset (from the start of the file) of the segment's first key.
    data_bit: usize,
    /// Bits of one key.
    key_bits: usize,
}

/// The decoding constants of one translation or scale in one segment: `value = offset + scale * q`
/// per slot, the width code of each slot, and its bits in one key.
#[derive(Debug, Clone, Copy)]
struct Slots {
    offset: Vec4,
    scale: Vec4,
    codes: [u8; 4],
    bits: usize,
}

/// How a walk over the animated tracks reads keys.
pub(super) const ONE_KEY: u8 = 0;
const PAIR_IN_SEGMENT: u8 = 1;
pub(super) const PAIR_ACROSS: u8 = 2;

/// Which decoder of rotation groups a pose uses: the fastest the CPU has outside the vector
/// samples (SSE2 stores of the rest pose, the portable groups), the portable one (for tests and
/// fuzzing), or the AVX2 one from inside [`decode_avx2::sample`](super::decode_avx2::sample),
/// in a function compiled for AVX2 that the whole sample is inlined into (every drop-W sample of
/// a CPU with AVX2), or in one compiled for AVX-512 that uses its instructions on 256-bit vectors
/// (every drop-W sample of a CPU with AVX-512 F, VL and VBMI2).
const BEST: u8 = 0;
const PORTABLE: u8 = 1;
pub(super) const AVX2_INSIDE: u8 = 2;
pub(super) const EVEX_INSIDE: u8 = 3;

/// The decoder of the animated tracks this CPU runs
/// ([`Layout::decoder`](super::format::Layout::decoder)), asked of the CPU. Only asking the CPU
/// makes one (`Decoder::detect`), so a `Decoder` that says AVX2 proves the CPU has it: the
/// vector decoders take it instead of loading a global flag per sample (a cold pose waits for
/// each line it reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoder(u8);

// Asked only by the x86-64 decoders.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
impl Decoder {
    const PORTABLE: u8 = 0;
    const AVX2: u8 = 1;
    const EVEX: u8 = 2;

    /// The fastest decoder this CPU runs: the AVX2 decoder where the CPU has AVX2, compiled with
    /// some AVX-512 instructions on 256-bit vectors where it also has AVX-512 F, VL and VBMI2
    /// (a decoder of four groups on sixteen lanes ran there until 2026-11-28: its larger code made
    /// a cold pose 1.5-2.0x slower than the AVX2 one's; docs/PERFORMANCE.md).
    pub(super) fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            use super::decode_avx2 as v;
            if v::available_evex() {
                return Self(Self::EVEX);
            }
            if v::available() {
                return Self(Self::AVX2);
            }
        }
        Self(Self::PORTABLE)
    }

    /// The CPU has AVX2.
    #[inline(always)]
    pub(super) fn avx2(self) -> bool {
        self.0 >= Self::AVX2
    }

    /// The CPU has AVX2 and AVX-512 F, VL and VBMI2.
    #[inline(always)]
    pub(super) fn evex(self) -> bool {
        self.0 == Self::EVEX
    }

    /// This decoder without the AVX-512 instructions (the AVX2 decoder where the CPU has AVX2),
    /// so that tests check both on a CPU that has AVX-512.
    #[cfg(any(test, fuzzing))]
    pub(super) fn without_evex(self) -> Self {
        Self(self.0.min(Self::AVX2))
    }
}

/// Bytes of a group of four drop-W rotations in the track table and in a segment header (with
/// and without segment ranges).
pub(super) const GROUP3_TABLE: usize = 8 + 32 * 3;
pub(super) const GROUP3_HEADER: usize = 8 + 8 * 3;
pub(super) const GROUP3_HEADER_NO_RANGES: usize = 8;
/// Bytes of a translation or scale in the track table and in a segment header.
pub(super) const VEC_TABLE: usize = 2 + 8 * 3;
pub(super) const VEC_HEADER: usize = 2 + 2 * 3;
pub(super) const VEC_HEADER_NO_RANGES: usize = 2;

impl CompressedClip {
    /// Samples the local pose at time `time_s` (clamped to `[0, duration]`), interpolating the two
    /// neighbouring keys (translation and scale lerp, rotation nlerp on the shortest path).
    /// `out` must hold one transform per joint; extra entries are left alone.
    #[inline]
    pub fn sample_pose(&self, time_s: f32, out: &mut [Transform]) {
        self.sample_pose_at_frame(time_s * self.layout.fps, out);
    }

    /// Samples the local pose at a (fractional) frame position of the original clip.
    #[inline]
    pub fn sample_pose_at_frame(&self, frame: f32, out: &mut [Transform]) {
        // A CPU with AVX2 takes a sample compiled for AVX2 as one function: one body of code (a
        // cold pose waits for each line of code it runs, and each page of it), with nothing
        // passed through memory between its parts, called straight from here.
        #[cfg(target_arch = "x86_64")]
        if super::decode_avx2::sample(self.layout.decoder, self, frame, out) {
            return;
        }
        self.sample_best(frame, out);
    }

    /// [`Self::sample_pose_at_frame`] on other CPUs and for other rotation packings (out of line:
    /// the AVX2 path above stays small).
    #[inline(never)]
    fn sample_best(&self, frame: f32, out: &mut [Transform]) {
        self.sample_at_frame::<BEST>(frame, out);
    }

    /// [`Self::sample_pose_at_frame`] through the portable decoder only, so tests and the `tlc`
    /// fuzz target check both decoders on machines with AVX2.
    #[cfg(any(test, fuzzing))]
    #[doc(hidden)]
    pub fn sample_pose_portable(&self, frame: f32, out: &mut [Transform]) {
        self.sample_at_frame::<PORTABLE>(frame, out);
    }

    /// [`Self::sample_pose_at_frame`] through the AVX2 decoder where the CPU has AVX2, without
    /// AVX-512 instructions also where it has them (the portable one otherwise), for the rotation
    /// packings the AVX2 sample takes.
    #[cfg(any(test, fuzzing))]
    #[doc(hidden)]
    pub fn sample_pose_avx2(&self, frame: f32, out: &mut [Transform]) {
        #[cfg(target_arch = "x86_64")]
        if super::decode_avx2::sample(self.layout.decoder.without_evex(), self, frame, out) {
            return;
        }
        self.sample_at_frame::<PORTABLE>(frame, out);
    }

    #[inline(always)]
    pub(super) fn sample_at_frame<const WAY: u8>(&self, frame: f32, out: &mut [Transform]) {
        let n = self.layout.joint_count as usize;
        let out = &mut out[..n];
        let (k0, alpha) = self.key_position(frame);
        let l = &self.layout;
        let sf = l.segment_frames.max(1);
        // A shift for the usual power-of-two segments: a division would sit on the path to
        // every read of the pose (segment table entry, headers, keys).
        let (s, i) = if sf.is_power_of_two() {
            (k0 >> sf.trailing_zeros(), k0 & (sf - 1))
        } else {
            (k0 / sf, k0 % sf)
        };
        let (s, i) = (s as usize, i as usize);
        // The reads of a cold pose wait on each other: the segment table entry (the block's
        // offset and key bits), then the segment's headers and keys. Asking for them (and for the
        // static block, read in order) as soon as their places are known lets those misses
        // overlap.
        let b = &self.bytes[..];
        let entry = l.segment_table_at as usize + SEGMENT_ENTRY_BYTES * s;
        // Two lines: this segment's entry and the next one's (keys in two segments).
        prefetch::<2>(b, entry);
        // Twenty lines from the rest translations: the static block every pose reads in order
        // (rest translations, the static lists, the track tables; the segment table follows).
        // That is the whole block for rigs of up to about 32 joints (the nine shared takes:
        // 924-1,136 bytes) and the first 1,280 bytes of a larger one's. With its first line
        // and the track table's alone, the rest waited for the hardware's prefetcher; the
        // twenty took 2-13 % off a cold pose of each of the nine (docs/PERFORMANCE.md, "The
        // static block prefetched").
        prefetch::<20>(b, l.rest_translations_at as usize);
        let a = (l.segment_count > 0).then(|| {
            let a = self.segment_ref(s);
            // Six lines: the headers of a 31-joint take (most of those of bigger skeletons), and
            // two keys of it.
            prefetch::<6>(b, a.headers);
            prefetch::<6>(b, (a.data_bit + i * a.key_bits) / 8);
            a
        });
        // One call (inlined): a clip without segments is its static pose.
        self.write_static::<WAY>(out);
        let Some(a) = a else {
            return;
        };
        let (mode, b, ib) = if alpha <= 0.0 {
            (ONE_KEY, a, i)
        } else if i + 1 < sf as usize {
            (PAIR_IN_SEGMENT, a, i + 1)
        } else {
            (PAIR_ACROSS, self.segment_ref(s + 1), 0)
        };
        self.walk::<WAY>(mode, &a, i, &b, ib, alpha, out);
    }

    /// Key and interpolation weight towards the next key for a frame position.
    #[inline]
    pub(crate) fn key_position(&self, frame: f32) -> (u32, f32) {
        let l = &self.layout;
        let last = (l.frame_count - 1) as f32;
        let p = if frame.is_nan() {
            0.0
        } else {
            frame.clamp(0.0, last)
        };
        if l.frame_step == 1 {
            let k0 = (p as u32).min(l.frame_count - 1);
            if k0 + 1 >= l.key_count {
                return (k0, 0.0);
            }
            return (k0, p - k0 as f32);
        }
        let step = l.frame_step as f32;
        let k0 = ((p / step) as u32).min(l.key_count - 1);
        if k0 + 1 >= l.key_count {
            return (k0, 0.0);
        }
        let f0 = key_frame(k0, l.frame_step, l.frame_count) as f32;
        let f1 = key_frame(k0 + 1, l.frame_step, l.frame_count) as f32;
        (k0, ((p - f0) / (f1 - f0)).clamp(0.0, 1.0))
    }

    #[inline(always)]
    fn segment_ref(&self, s: usize) -> SegmentRef {
        let (headers, key_bits) = self.segment_entry(s);
        SegmentRef {
            headers,
            data_bit: (headers + self.layout.segment_header_bytes as usize) * 8,
            key_bits,
        }
    }

    /// The rest pose, then the constant tracks.
    #[inline(always)]
    fn write_static<const WAY: u8>(&self, out: &mut [Transform]) {
        let b = &self.bytes[..];
        let l = &self.layout;
        let at = l.rest_translations_at as usize;
        // Three stores a joint where the layout allows (not for the portable decoder, so that
        // the tests also run the field-by-field writes).
        #[cfg(target_arch = "x86_64")]
        let wide =
            WAY != PORTABLE && super::rest_sse::write_rest(b.get(at..).unwrap_or_default(), out);
        #[cfg(not(target_arch = "x86_64"))]
        let wide = false;
        let rest = if wide {
            &[]
        } else {
            b.get(at..at + 12 * out.len()).unwrap_or_default()
        };
        for (o, c) in out.iter_mut().zip(rest.chunks_exact(12)) {
            *o = Transform {
                translation: vec3_le(c),
                rotation: Quat::IDENTITY,
                scale: Vec3::ONE,
            };
        }
        let list = |at: u32, each: usize| {
            let at = at as usize;
            let count = usize::from(u16_at(b, at));
            b.get(at + 2..at + 2 + count * (2 + each))
                .unwrap_or_default()
                .chunks_exact(2 + each)
        };
        // Only the lists that hold entries (most takes have one or two): a pose whose code is not
        // cached waits for each line of code it runs.
        let lists = l.static_lists;
        if lists & (STATIC_REST_ROTATIONS | STATIC_ROTATIONS) != 0 {
            for e in list(l.rest_rotations_at, 16).chain(list(l.constants_at[0], 16)) {
                if let Some(o) = out.get_mut(usize::from(u16::from_le_bytes([e[0], e[1]]))) {
                    o.rotation = quat_le(&e[2..]);
                }
            }
        }
        if lists & STATIC_TRANSLATIONS != 0 {
            for e in list(l.constants_at[1], 12) {
                if let Some(o) = out.get_mut(usize::from(u16::from_le_bytes([e[0], e[1]]))) {
                    o.translation = vec3_le(&e[2..]);
                }
            }
        }
        if lists & (STATIC_REST_SCALES | STATIC_SCALES) != 0 {
            for e in list(l.rest_scales_at, 12).chain(list(l.constants_at[2], 12)) {
                if let Some(o) = out.get_mut(usize::from(u16::from_le_bytes([e[0], e[1]]))) {
                    o.scale = vec3_le(&e[2..]);
                }
            }
        }
    }

    /// Decodes every animated track at key `ia` of segment `a` (and, for the pair modes, key `ib`
    /// of segment `b`, blended by `alpha`) into `out`. Inlined: each way of sampling calls it once.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn walk<const WAY: u8>(
        &self,
        mode: u8,
        a: &SegmentRef,
        ia: usize,
        b: &SegmentRef,
        ib: usize,
        alpha: f32,
        out: &mut [Transform],
    ) {
        let bytes = &self.bytes[..];
        let l = &self.layout;
        let ranges = l.flags & FLAG_SEGMENT_RANGES != 0;
        let (mut ha, mut hb) = (a.headers, b.headers);
        let (mut bit_a, mut bit_b) = (a.data_bit + ia * a.key_bits, b.data_bit + ib * b.key_bits);
        // Rotations, then translations and scales.
        let rot_count = l.track_counts[0] as usize;
        // (The vector samples are only entered for drop-W rotations: `decode_avx2::sample`.)
        if WAY >= AVX2_INSIDE || l.rotation_format == RotationFormat::DropW {
            let header = if ranges {
                GROUP3_HEADER
            } else {
                GROUP3_HEADER_NO_RANGES
            };
            let groups = rot_count.div_ceil(4);
            let vector_headers = [ha + groups * header, hb + groups * header];
            let keys = Keys {
                mode,
                alpha,
                ranges,
                headers: [ha, hb],
            };
            let table = l.tracks_at[0] as usize;
            // The translations and scales are decoded once the groups are read, before they are
            // interpolated, so their reads overlap that work.
            #[cfg(target_arch = "x86_64")]
            {
                use super::decode_avx2 as avx2;
                let run = GroupRun {
                    bytes,
                    table,
                    count: rot_count,
                    keys,
                    bits: [bit_a, bit_b],
                };
                // Only from inside the vector samples: `sample_pose_at_frame` sends every sample
                // of a CPU with AVX2 there.
                if WAY >= AVX2_INSIDE {
                    // The groups, then the translations and scales of module `$m` (this
                    // revision's AVX2 decoder, or the other revision's for the A/B switch, a
                    // revision since this one's `Decoder` argument).
                    macro_rules! avx2_groups {
                        ($m:ident) => {{
                            let vectors = $m::VectorRun {
                                bytes,
                                tables: [l.tracks_at[1] as usize, l.tracks_at[2] as usize],
                                counts: [l.track_counts[1] as usize, l.track_counts[2] as usize],
                                keys: Keys {
                                    headers: vector_headers,
                                    ..keys
                                },
                            };
                            let cpu = l.decoder;
                            let evex = WAY == EVEX_INSIDE;
                            return $m::decode_groups(cpu, evex, run, out, |out, bits| {
                                if !$m::decode_vectors(cpu, evex, &vectors, bits, out) {
                                    self.walk_vectors_cold(mode, vector_headers, bits, alpha, out);
                                }
                            });
                        }};
                    }
                    #[cfg(taglane_decoder_ab)]
                    if super::DECODE_WITH_BASE.load(std::sync::atomic::Ordering::Relaxed) {
                        use super::decode_avx2_base as base;
                        avx2_groups!(base);
                    }
                    avx2_groups!(avx2);
                }
            }
            decode_groups(bytes, table, rot_count, keys, [&mut bit_a, &mut bit_b], out);
            self.walk_vectors(mode, vector_headers, [bit_a, bit_b], alpha, out);
            return;
        }
        let kl = self.kind_layout(TrackKind::Rotation);
        for i in 0..rot_count {
            let qa = self.general_rotation(i, ha, &mut bit_a);
            let q = if mode == ONE_KEY {
                qa
            } else {
                nlerp(qa, self.general_rotation(i, hb, &mut bit_b), alpha)
            };
            let joint = self.track_entry(TrackKind::Rotation, i).joint;
            if let Some(o) = out.get_mut(usize::from(joint)) {
                o.rotation = q;
            }
        }
        ha += kl.segment_bytes(rot_count);
        hb += kl.segment_bytes(rot_count);
        self.walk_vectors(mode, [ha, hb], [bit_a, bit_b], alpha, out);
    }

    /// [`Self::walk_vectors`] out of line (the vector decoders' own walk takes every file that
    /// passed validation).
    #[cold]
    #[inline(never)]
    fn walk_vectors_cold(
        &self,
        mode: u8,
        headers: [usize; 2],
        bits: [usize; 2],
        alpha: f32,
        out: &mut [Transform],
    ) {
        self.walk_vectors(mode, headers, bits, alpha, out);
    }

    /// Decodes the translation and scale tracks whose headers start at `headers` (in key A's and
    /// key B's segments) and whose bits start at `bits`.
    #[inline(always)]
    fn walk_vectors(
        &self,
        mode: u8,
        [mut ha, mut hb]: [usize; 2],
        [mut bit_a, mut bit_b]: [usize; 2],
        alpha: f32,
        out: &mut [Transform],
    ) {
        let bytes = &self.bytes[..];
        let l = &self.layout;
        let ranges = l.flags & FLAG_SEGMENT_RANGES != 0;
        // Translations, then scales.
        let header = if ranges {
            VEC_HEADER
        } else {
            VEC_HEADER_NO_RANGES
        };
        for kind in 1..3 {
            let n = l.track_counts[kind] as usize;
            if n == 0 {
                continue;
            }
            let at = l.tracks_at[kind] as usize;
            // The kind's track table entries and both keys' headers, checked once (validation
            // put them in the file).
            let (Some(entries), Some(heads_a), Some(heads_b)) = (
                bytes.get(at..at + n * VEC_TABLE),
                bytes.get(ha..ha + n * header),
                bytes.get(hb..hb + n * header),
            ) else {
                return;
            };
            // Indexed (no `chunks_exact` by the header size known only at run time: a division).
            for i in 0..n {
                let (Some(entry), Some(head_a), Some(head_b)) = (
                    entries
                        .get(i * VEC_TABLE..)
                        .and_then(|e| e.first_chunk::<VEC_TABLE>()),
                    heads_a.get(i * header..(i + 1) * header),
                    heads_b.get(i * header..(i + 1) * header),
                ) else {
                    break;
                };
                let joint = usize::from(u16::from_le_bytes([entry[0], entry[1]]));
                let v = vector_track(
                    bytes,
                    mode,
                    kind,
                    entry,
                    [head_a, head_b],
                    [&mut bit_a, &mut bit_b],
                    alpha,
                );
                if let Some(o) = out.get_mut(joint) {
                    if kind == 1 {
                        o.translation = v;
                    } else {
                        o.scale = v;
                    }
                }
            }
            ha += n * header;
            hb += n * header;
        }
    }

    /// Rotation track `i` (full quaternion or smallest-three packing) at bit `bit` of a key whose
    /// rotation headers start at `headers`, decoded one slot at a time. Advances `bit`.
    fn general_rotation(&self, i: usize, headers: usize, bit: &mut usize) -> Quat {
        let bytes = &self.bytes[..];
        let t = self.track_entry(TrackKind::Rotation, i);
        if t.slots == 0 {
            let bits = u32::from(t.packed_bits);
            let lo = u64::from(read_bits(bytes, *bit, 32));
            let hi = if bits > 32 {
                u64::from(read_bits(bytes, *bit + 32, bits - 32))
            } else {
                0
            };
            *bit += bits as usize;
            return unpack_smallest_three(lo | (hi << 32), bits);
        }
        let kl = self.kind_layout(TrackKind::Rotation);
        let f = kl.fields(i);
        let word = u16_at(bytes, headers + f.code);
        let mut c = [0.0f32; 4];
        for (slot, v) in c.iter_mut().enumerate().take(usize::from(t.slots)) {
            let code = ((word >> (4 * slot)) & 15) as u8;
            let (qmin, qext) = if kl.ranges {
                (
                    bytes[headers + f.qmin + slot * f.qstride],
                    bytes[headers + f.qext + slot * f.qstride],
                )
            } else {
                (0, 255)
            };
            let (o, s) = slot_params(t.min[slot], t.step[slot], qmin, qext, code);
            let w = u32::from(WIDTHS[usize::from(code)]);
            *v = dequantize_slot(read_bits(bytes, *bit, w), o, s, code);
            *bit += w as usize;
        }
        let drop = if t.slots == 3 {
            ((word >> 12) & 3) as u8
        } else {
            NO_DROP
        };
        rotation_from_slots(t.slots, drop, c)
    }

    /// Samples one joint's local transform at `time_s` without decoding the rest of the pose.
    pub fn sample_joint(&self, time_s: f32, joint: usize) -> Option<Transform> {
        if joint >= self.joint_count() {
            return None;
        }
        let (k0, alpha) = self.key_position(time_s * self.layout.fps);
        let (mut a, animated) = self.decode_joint_key(k0, joint);
        if alpha > 0.0 {
            // Static tracks are written as they are, as `sample_pose` does.
            let (b, _) = self.decode_joint_key(k0 + 1, joint);
            if animated[0] {
                a.rotation = nlerp(a.rotation, b.rotation, alpha);
            }
            if animated[1] {
                a.translation = a.translation.lerp(b.translation, alpha);
            }
            if animated[2] {
                a.scale = lerp_scale(a.scale, b.scale, alpha);
            }
        }
        Some(a)
    }

    /// One joint at key `k`: its static value, then its animated tracks (found by walking the
    /// segment's headers and key layout up to them, one slot at a time); and which of its tracks
    /// are animated.
    fn decode_joint_key(&self, k: u32, joint: usize) -> (Transform, [bool; 3]) {
        let mut out = Transform::IDENTITY;
        self.write_static_joint(joint, &mut out);
        let mut animated = [false; 3];
        if self.layout.segment_count == 0 {
            return (out, animated);
        }
        let l = &self.layout;
        let s = (k / l.segment_frames) as usize;
        let seg = self.segment_ref(s);
        let mut bit = seg.data_bit + (k % l.segment_frames) as usize * seg.key_bits;
        for (kind, &tk) in TrackKind::ALL.iter().enumerate() {
            for i in 0..l.track_counts[kind] as usize {
                let t = self.track_entry(tk, i);
                if t.slots == 0 {
                    if usize::from(t.joint) == joint {
                        animated[kind] = true;
                        let headers = self.kind_header_at(s, tk);
                        out.rotation = self.general_rotation(i, headers, &mut bit);
                    } else {
                        bit += usize::from(t.packed_bits);
                    }
                    continue;
                }
                let (codes, drop, ranges) = self.segment_track(s, tk, i);
                let mut v = [0.0f32; 4];
                for slot in 0..usize::from(t.slots) {
                    let code = codes[slot];
                    let (qmin, qext) = ranges[slot];
                    let (o, sc) = slot_params(t.min[slot], t.step[slot], qmin, qext, code);
                    let w = u32::from(WIDTHS[usize::from(code)]);
                    v[slot] = dequantize_slot(read_bits(&self.bytes, bit, w), o, sc, code);
                    bit += w as usize;
                }
                if usize::from(t.joint) != joint {
                    continue;
                }
                animated[kind] = true;
                match tk {
                    TrackKind::Rotation => out.rotation = rotation_from_slots(t.slots, drop, v),
                    TrackKind::Translation => out.translation = Vec3::new(v[0], v[1], v[2]),
                    TrackKind::Scale => out.scale = Vec3::new(v[0], v[1], v[2]),
                }
            }
        }
        (out, animated)
    }

    /// The static (rest or constant) value of one joint.
    fn write_static_joint(&self, joint: usize, out: &mut Transform) {
        let b = &self.bytes[..];
        let l = &self.layout;
        let at = l.rest_translations_at as usize + 12 * joint;
        *out = Transform {
            translation: vec3_le(b.get(at..at + 12).unwrap_or(&[0; 12])),
            ..Transform::IDENTITY
        };
        let find = |at: u32, each: usize| -> Option<&[u8]> {
            let at = at as usize;
            let count = usize::from(u16_at(b, at));
            b.get(at + 2..at + 2 + count * (2 + each))?
                .chunks_exact(2 + each)
                .find(|e| usize::from(u16::from_le_bytes([e[0], e[1]])) == joint)
                .map(|e| &e[2..])
        };
        if let Some(e) = find(l.constants_at[0], 16).or_else(|| find(l.rest_rotations_at, 16)) {
            out.rotation = quat_le(e);
        }
        if let Some(e) = find(l.constants_at[1], 12) {
            out.translation = vec3_le(e);
        }
        if let Some(e) = find(l.constants_at[2], 12).or_else(|| find(l.rest_scales_at, 12)) {
            out.scale = vec3_le(e);
        }
    }

    /// Decodes every original frame into an ordinary clip (same joints, order, frame count, fps
    /// and unit). Frames dropped by decimation are interpolated.
    pub fn to_clip(&self) -> Clip {
        let fps = self.fps();
        self.resample(fps, self.frame_count())
    }

    /// The clip sampled through the decoder at `fps` frames per second: frame `k` is
    /// [`Self::sample_pose`] at `k / fps`, for `frames` frames (times past the end clamp). The
    /// position in the clip's frames, `k * own fps / fps`, is worked out in 64 bits (a time
    /// rounded to 32 bits, then multiplied by the rate, drifted by hundredths of a frame on long
    /// clips).
    pub fn resample(&self, fps: f32, frames: usize) -> Clip {
        let n = self.joint_count();
        let mut rotations = Vec::with_capacity(n * frames);
        let mut translations = Vec::with_capacity(n * frames);
        let mut scales = Vec::with_capacity(n * frames);
        let mut pose = vec![Transform::IDENTITY; n];
        let mut prev: Option<Vec<Quat>> = None;
        let step = f64::from(self.fps()) / f64::from(fps);
        for k in 0..frames {
            self.sample_pose_at_frame((k as f64 * step) as f32, &mut pose);
            let prev = prev.get_or_insert_with(|| pose.iter().map(|t| t.rotation).collect());
            for (j, t) in pose.iter().enumerate() {
                // Keep the clip's hemisphere continuity invariant.
                let q = if t.rotation.dot(prev[j]) < 0.0 {
                    -t.rotation
                } else {
                    t.rotation
                };
                prev[j] = q;
                rotations.push(q);
                translations.push(t.translation);
                scales.push(t.scale);
            }
        }
        Clip {
            name: self.name().to_owned(),
            skeleton: self.skeleton(),
            fps,
            frame_count: frames,
            unit_cm: self.unit_cm(),
            rotations,
            translations,
            scales,
        }
    }
}

/// What a walk reads: one key, or two keys (of one segment, or across two) blended by `alpha`;
/// the rotation headers of the current group in key A's and key B's segments.
#[derive(Debug, Clone, Copy)]
pub(super) struct Keys {
    pub(super) mode: u8,
    pub(super) alpha: f32,
    pub(super) ranges: bool,
    pub(super) headers: [usize; 2],
}

/// The drop-W rotation groups of a pose, for a vector decoder: the file, where the groups' track
/// table entries start, how many tracks, the keys, and where the groups' bits start in each key.
#[derive(Clone, Copy)]
pub(super) struct GroupRun<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) table: usize,
    pub(super) count: usize,
    pub(super) keys: Keys,
    pub(super) bits: [usize; 2],
}

impl Keys {
    /// Bytes of one group's segment header.
    #[inline(always)]
    pub(super) fn group_header(&self) -> usize {
        if self.ranges {
            GROUP3_HEADER
        } else {
            GROUP3_HEADER_NO_RANGES
        }
    }
}

impl GroupRun<'_> {
    /// Groups of four tracks (the last one possibly short).
    #[inline(always)]
    pub(super) fn groups(&self) -> usize {
        self.count.div_ceil(4)
    }

    /// Whether every group's track table entry and its headers in both keys' segments lie inside
    /// the file (a file that passed validation always passes; its offsets and counts are far
    /// below `usize::MAX`).
    #[inline(always)]
    pub(super) fn all_inside(&self) -> bool {
        let groups = self.groups();
        let inside = |at: usize, size: usize| at.saturating_add(groups * size) <= self.bytes.len();
        let [ha, hb] = self.keys.headers;
        let header = self.keys.group_header();
        inside(self.table, GROUP3_TABLE) && inside(ha, header) && inside(hb, header)
    }
}

/// An integer below 2^31 as f32 (one signed conversion; a `u64` conversion costs several
/// instructions on x86-64).
#[inline(always)]
fn small_f32(v: u64) -> f32 {
    v as u32 as i32 as f32
}

/// Decodes `count` drop-W rotation tracks in groups of four with [`decode_group3`] (the
/// decoder without AVX2, and the reference the AVX2 one is tested against).
fn decode_groups(
    bytes: &[u8],
    mut table: usize,
    count: usize,
    mut keys: Keys,
    [bit_a, bit_b]: [&mut usize; 2],
    out: &mut [Transform],
) {
    let header = if keys.ranges {
        GROUP3_HEADER
    } else {
        GROUP3_HEADER_NO_RANGES
    };
    for g in 0..count.div_ceil(4) {
        let lanes = (count - 4 * g).min(4);
        decode_group3(bytes, table, &keys, [&mut *bit_a, &mut *bit_b], lanes, out);
        table += GROUP3_TABLE;
        keys.headers = keys.headers.map(|h| h + header);
    }
}

/// Decodes one group of four drop-W rotations (the first `lanes` are tracks) whose track table
/// entry is at `table`, from key A (and key B), into `out`; advances the key bit positions.
///
/// Each lane's key bits are read with one 64-bit load (three slots of at most 16 bits); the
/// segment constants, the dequantisation, the rebuild of the dropped component and the nlerp run
/// on four lanes.
#[inline(never)]
pub(super) fn decode_group3(
    bytes: &[u8],
    table: usize,
    keys: &Keys,
    [bit_a, bit_b]: [&mut usize; 2],
    lanes: usize,
    out: &mut [Transform],
) {
    let Some(t) = bytes
        .get(table..table + GROUP3_TABLE)
        .and_then(|t| <&[u8; GROUP3_TABLE]>::try_from(t).ok())
    else {
        return;
    };
    let joints = u64::from_le_bytes([t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]]);
    let [ha, hb] = keys.headers;
    let pair = keys.mode != ONE_KEY;
    let across = keys.mode == PAIR_ACROSS;
    let (codes_a, ranges_a) = group_header(bytes, ha, keys.ranges);
    let (codes_b, ranges_b) = if across {
        group_header(bytes, hb, keys.ranges)
    } else {
        (codes_a, ranges_a)
    };
    if raw_codes(codes_a) || (pair && raw_codes(codes_b)) {
        let q = group_raw(
            bytes,
            t,
            keys,
            [bit_a, bit_b],
            [(codes_a, &ranges_a), (codes_b, &ranges_b)],
        );
        scatter4(&q, joints, lanes, out);
        return;
    }
    // The quantised slots of every lane, key A (and B).
    let mut qa = [[0.0f32; 4]; 3];
    let mut qb = [[0.0f32; 4]; 3];
    for l in 0..4 {
        if keys.mode == PAIR_IN_SEGMENT {
            let (x, y) = lane_slots2(bytes, codes_a >> (16 * l), bit_a, bit_b);
            for s in 0..3 {
                qa[s][l] = x[s];
                qb[s][l] = y[s];
            }
        } else {
            let x = lane_slots(bytes, codes_a >> (16 * l), bit_a);
            for s in 0..3 {
                qa[s][l] = x[s];
            }
        }
    }
    if across {
        for l in 0..4 {
            let y = lane_slots(bytes, codes_b >> (16 * l), bit_b);
            for s in 0..3 {
                qb[s][l] = y[s];
            }
        }
    }
    // Dequantised slot by slot, so few values are live at once.
    let mut va = [Vec4::ZERO; 3];
    let mut vb = [Vec4::ZERO; 3];
    for s in 0..3 {
        let (o, sc) = slot_constants(t, &ranges_a, codes_a, s);
        va[s] = o + sc * Vec4::from_array(qa[s]);
        if across {
            let (o, sc) = slot_constants(t, &ranges_b, codes_b, s);
            vb[s] = o + sc * Vec4::from_array(qb[s]);
        } else if pair {
            vb[s] = o + sc * Vec4::from_array(qb[s]);
        }
    }
    let ra = rebuild4(va, group_drops(codes_a));
    let q = if pair {
        nlerp4(ra, rebuild4(vb, group_drops(codes_b)), keys.alpha)
    } else {
        ra
    };
    scatter4(&q, joints, lanes, out);
}

/// Writes the first `lanes` rotations of a group to their joints.
#[inline(always)]
fn scatter4(q: &[Vec4; 4], joints: u64, lanes: usize, out: &mut [Transform]) {
    for lane in 0..lanes {
        let j = ((joints >> (16 * lane)) & 0xFFFF) as usize;
        if let Some(o) = out.get_mut(j) {
            o.rotation = Quat::from_xyzw(q[0][lane], q[1][lane], q[2][lane], q[3][lane]);
        }
    }
}

/// Four little-endian f32 of a fixed-size array at a constant offset.
#[inline(always)]
fn vec4_le<const N: usize>(t: &[u8; N], at: usize) -> Vec4 {
    let f = |k: usize| f32::from_le_bytes([t[at + k], t[at + k + 1], t[at + k + 2], t[at + k + 3]]);
    Vec4::new(f(0), f(4), f(8), f(12))
}

/// A group's code words and segment ranges (`(0, 255)` for every slot without segment ranges).
#[inline(always)]
fn group_header(bytes: &[u8], at: usize, ranges: bool) -> (u64, [u8; 24]) {
    const NO_RANGES: [u8; 24] = {
        let mut r = [0u8; 24];
        let mut i = 0;
        while i < 24 {
            if i % 8 >= 4 {
                r[i] = 255;
            }
            i += 1;
        }
        r
    };
    if ranges {
        match bytes
            .get(at..at + GROUP3_HEADER)
            .and_then(|h| <&[u8; GROUP3_HEADER]>::try_from(h).ok())
        {
            Some(h) => {
                let mut r = [0u8; 24];
                r.copy_from_slice(&h[8..]);
                (
                    u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]),
                    r,
                )
            }
            None => (0, NO_RANGES),
        }
    } else {
        (u64_at(bytes, at), NO_RANGES)
    }
}

/// True when some slot of the group is a raw float32 (code 15: all four bits of its nibble set).
#[inline(always)]
fn raw_codes(codes: u64) -> bool {
    let nib = codes & 0x0FFF_0FFF_0FFF_0FFF;
    nib & (nib >> 1) & (nib >> 2) & (nib >> 3) & 0x0111_0111_0111_0111 != 0
}

/// The segment constants of slot `s` of a group (`offset` and `scale`, four lanes) from the
/// group's track table entry `t`, code words and ranges: [`slot_params`] on four lanes, the same
/// operations in the same order.
#[inline(always)]
fn slot_constants(t: &[u8; GROUP3_TABLE], ranges: &[u8; 24], codes: u64, s: usize) -> (Vec4, Vec4) {
    let code = |l: usize| ((codes >> (16 * l + 4 * s)) & 15) as usize;
    let r = |k: usize| f32::from(ranges[8 * s + k]);
    let qmin = Vec4::new(r(0), r(1), r(2), r(3));
    let qext = Vec4::new(r(4), r(5), r(6), r(7));
    let lanes = |t: &[f32; 16]| Vec4::new(t[code(0)], t[code(1)], t[code(2)], t[code(3)]);
    let (min, step) = (vec4_le(t, 8 + 16 * s), vec4_le(t, 56 + 16 * s));
    (
        min + step * (qmin + qext * lanes(&CODE_MID)),
        step * qext * lanes(&CODE_SCALE),
    )
}

/// [`decode_group3`] when some slot is a raw float32: lane by lane, slot by slot.
#[cold]
fn group_raw(
    bytes: &[u8],
    t: &[u8; GROUP3_TABLE],
    keys: &Keys,
    [bit_a, bit_b]: [&mut usize; 2],
    headers: [(u64, &[u8; 24]); 2],
) -> [Vec4; 4] {
    let key = |(codes, ranges): (u64, &[u8; 24]), bit: &mut usize| {
        // Each slot's constants for the four lanes, once.
        let [(o0, s0), (o1, s1), (o2, s2)]: [(Vec4, Vec4); 3] =
            std::array::from_fn(|s| slot_constants(t, ranges, codes, s));
        let (o, sc) = (
            [o0, o1, o2].map(|v| v.to_array()),
            [s0, s1, s2].map(|v| v.to_array()),
        );
        let mut v = [[0.0f32; 4]; 3];
        for l in 0..4 {
            let lane = codes >> (16 * l);
            let c: [usize; 3] = std::array::from_fn(|s| ((lane >> (4 * s)) & 15) as usize);
            // A lane holds at most 96 bits from bit 7 of its first byte: one 128-bit read, where
            // the file has 16 bytes there (then every slot's 8-byte read would succeed too).
            let window = bytes
                .get(*bit >> 3..)
                .and_then(|b| b.first_chunk::<16>())
                .map(|w| u128::from_le_bytes(*w) >> (*bit & 7));
            let mut at = 0;
            for s in 0..3 {
                let w = u32::from(WIDTHS[c[s]]);
                let q = match window {
                    Some(window) => ((window >> at) as u64 & CODE_MASK[c[s]]) as u32,
                    None => read_bits(bytes, *bit + at as usize, w),
                };
                v[s][l] = dequantize_slot(q, o[s][l], sc[s][l], c[s] as u8);
                at += w;
            }
            *bit += at as usize;
        }
        rebuild4(v.map(Vec4::from_array), group_drops(codes))
    };
    let qa = key(headers[0], bit_a);
    if keys.mode == ONE_KEY {
        qa
    } else {
        let qb = key(headers[1], bit_b);
        nlerp4(qa, qb, keys.alpha)
    }
}

/// The 64 bits of key data at bit `bit`, shifted so the lane's first slot is at bit 0.
#[inline(always)]
fn key_word(bytes: &[u8], bit: usize) -> u64 {
    let w = bytes
        .get(bit >> 3..)
        .and_then(|s| s.first_chunk::<8>())
        .map_or(0, |c| u64::from_le_bytes(*c));
    w >> (bit & 7)
}

/// The three quantised slots of one lane at bit `bit` (one 64-bit read); advances `bit`.
#[inline(always)]
fn lane_slots(bytes: &[u8], codes: u64, bit: &mut usize) -> [f32; 3] {
    let c = [
        (codes & 15) as usize,
        ((codes >> 4) & 15) as usize,
        ((codes >> 8) & 15) as usize,
    ];
    let (w0, w1, w2) = (
        u32::from(WIDTHS[c[0]]),
        u32::from(WIDTHS[c[1]]),
        u32::from(WIDTHS[c[2]]),
    );
    let word = key_word(bytes, *bit);
    *bit += (w0 + w1 + w2) as usize;
    [
        small_f32(word & CODE_MASK[c[0]]),
        small_f32((word >> w0) & CODE_MASK[c[1]]),
        small_f32((word >> (w0 + w1)) & CODE_MASK[c[2]]),
    ]
}

/// [`lane_slots`] of one lane in two keys of the same segment (same widths).
#[inline(always)]
fn lane_slots2(bytes: &[u8], codes: u64, a: &mut usize, b: &mut usize) -> ([f32; 3], [f32; 3]) {
    let c = [
        (codes & 15) as usize,
        ((codes >> 4) & 15) as usize,
        ((codes >> 8) & 15) as usize,
    ];
    let (w0, w1, w2) = (
        u32::from(WIDTHS[c[0]]),
        u32::from(WIDTHS[c[1]]),
        u32::from(WIDTHS[c[2]]),
    );
    let m = [CODE_MASK[c[0]], CODE_MASK[c[1]], CODE_MASK[c[2]]];
    let (s1, s2) = (w0, w0 + w1);
    let (wa, wb) = (key_word(bytes, *a), key_word(bytes, *b));
    let n = (s2 + w2) as usize;
    *a += n;
    *b += n;
    let slots = |w: u64| {
        [
            small_f32(w & m[0]),
            small_f32((w >> s1) & m[1]),
            small_f32((w >> s2) & m[2]),
        ]
    };
    (slots(wa), slots(wb))
}

/// The dropped component of each lane (bits 12-13 of its code word).
#[inline(always)]
fn group_drops(codes: u64) -> Vec4 {
    Vec4::new(
        small_f32((codes >> 12) & 3),
        small_f32((codes >> 28) & 3),
        small_f32((codes >> 44) & 3),
        small_f32((codes >> 60) & 3),
    )
}

/// [`rotation_from_slots`] of three slots on four lanes: the dropped component rebuilt as
/// `sqrt(1 - sum of squares)` and placed. Returns x, y, z, w lanes.
#[inline(always)]
fn rebuild4([c0, c1, c2]: [Vec4; 3], drop: Vec4) -> [Vec4; 4] {
    let w2 = Vec4::ONE - (c0 * c0 + c1 * c1 + c2 * c2);
    let d = w2.max(Vec4::ZERO).sqrt();
    let is = |k: f32| drop.cmpeq(Vec4::splat(k));
    let x = Vec4::select(is(0.0), d, c0);
    let y = Vec4::select(is(0.0), c0, Vec4::select(is(1.0), d, c1));
    let z = Vec4::select(is(3.0), c2, Vec4::select(is(2.0), d, c1));
    let w = Vec4::select(is(3.0), d, c2);
    let q = [x, y, z, w];
    let over = w2.cmplt(Vec4::ZERO);
    if over.any() {
        let mut lanes = q.map(|v| v.to_array());
        normalise_lanes(&mut lanes, over.bitmask());
        return lanes.map(Vec4::from_array);
    }
    q
}

/// Quantisation pushed the stored part of these lanes (bits of `over`) past unit length: their
/// rotations (x, y, z, w lanes) normalised one by one, as [`rotation_from_slots`] does.
#[cold]
fn normalise_lanes<const N: usize>(q: &mut [[f32; N]; 4], over: u32) {
    for lane in (0..N).filter(|l| over & (1 << l) != 0) {
        let n = Quat::from_xyzw(q[0][lane], q[1][lane], q[2][lane], q[3][lane]).normalize();
        for (c, x) in q.iter_mut().zip(n.to_array()) {
            c[lane] = x;
        }
    }
}

/// `anim::nlerp` on four pairs of rotations at once (x, y, z, w lanes): the same operations in
/// the same order, so the same bits.
#[inline(always)]
fn nlerp4(a: [Vec4; 4], b: [Vec4; 4], t: f32) -> [Vec4; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    // Quat::dot groups (x + z) + (y + w).
    let dot = (ax * bx + az * bz) + (ay * by + aw * bw);
    let flip = dot.cmplt(Vec4::ZERO);
    let neg = |v: Vec4| Vec4::select(flip, v * -1.0, v);
    let (bx, by, bz, bw) = (neg(bx), neg(by), neg(bz), neg(bw));
    let (s, t) = (Vec4::splat(1.0 - t), Vec4::splat(t));
    let (qx, qy, qz, qw) = (
        ax * s + bx * t,
        ay * s + by * t,
        az * s + bz * t,
        aw * s + bw * t,
    );
    let len2 = (qx * qx + qz * qz) + (qy * qy + qw * qw);
    let r = Vec4::ONE / len2.sqrt();
    let ok = len2.cmpgt(Vec4::ZERO);
    [
        Vec4::select(ok, qx * r, ax),
        Vec4::select(ok, qy * r, ay),
        Vec4::select(ok, qz * r, az),
        Vec4::select(ok, qw * r, aw),
    ]
}

/// One translation (`kind` 1) or scale (`kind` 2) track of a sample: its track table entry
/// `entry`, its segment headers in key A's and key B's segments, the keys' bit positions (advanced).
#[inline(always)]
fn vector_track(
    bytes: &[u8],
    mode: u8,
    kind: usize,
    entry: &[u8; VEC_TABLE],
    [head_a, head_b]: [&[u8]; 2],
    [bit_a, bit_b]: [&mut usize; 2],
    alpha: f32,
) -> Vec3 {
    let sa = slots3(head_a, entry);
    let va = read3(bytes, *bit_a, &sa).truncate();
    *bit_a += sa.bits;
    if mode == ONE_KEY {
        return va;
    }
    // Keys of one segment share the constants (by reference: no copy).
    let own;
    let sb = if mode == PAIR_IN_SEGMENT {
        &sa
    } else {
        own = slots3(head_b, entry);
        &own
    };
    let vb = read3(bytes, *bit_b, sb).truncate();
    *bit_b += sb.bits;
    if kind == 1 {
        va.lerp(vb, alpha)
    } else {
        lerp_scale(va, vb, alpha)
    }
}

/// [`vector_track`] out of line, for the tracks the AVX2 decoder leaves to it (a raw float32
/// slot, a read near the end of the file, keys in two segments).
#[cold]
#[inline(never)]
pub(super) fn vector_track_cold(
    bytes: &[u8],
    mode: u8,
    kind: usize,
    entry: &[u8; VEC_TABLE],
    heads: [&[u8]; 2],
    bits: [&mut usize; 2],
    alpha: f32,
) -> Vec3 {
    vector_track(bytes, mode, kind, entry, heads, bits, alpha)
}

/// The decoding constants of a translation or scale from its segment header `head` (the code
/// word, then with segment ranges `qmin`, `qext` per slot) and its track table entry `entry`:
/// [`format::slot_params`] on four lanes at once (the same operations in the same order, so the
/// same bits).
///
/// [`format::slot_params`]: super::format::slot_params
#[inline(always)]
fn slots3(head: &[u8], entry: &[u8; VEC_TABLE]) -> Slots {
    let f =
        |at: usize| f32::from_le_bytes([entry[at], entry[at + 1], entry[at + 2], entry[at + 3]]);
    let word = match head {
        [a, b, ..] => u16::from_le_bytes([*a, *b]),
        _ => 0,
    };
    let codes = [
        (word & 15) as u8,
        ((word >> 4) & 15) as u8,
        ((word >> 8) & 15) as u8,
        0,
    ];
    let min = Vec4::new(f(2), f(6), f(10), 0.0);
    let step = Vec4::new(f(14), f(18), f(22), 0.0);
    let (qmin, qext) = match head.get(2..8) {
        Some(r) => (
            Vec4::new(f32::from(r[0]), f32::from(r[2]), f32::from(r[4]), 0.0),
            Vec4::new(f32::from(r[1]), f32::from(r[3]), f32::from(r[5]), 0.0),
        ),
        None => (Vec4::ZERO, Vec4::splat(255.0)),
    };
    let c = codes.map(usize::from);
    let mid = Vec4::new(CODE_MID[c[0]], CODE_MID[c[1]], CODE_MID[c[2]], 0.0);
    let inv = Vec4::new(CODE_SCALE[c[0]], CODE_SCALE[c[1]], CODE_SCALE[c[2]], 0.0);
    Slots {
        offset: min + step * (qmin + qext * mid),
        scale: step * qext * inv,
        codes,
        bits: usize::from(WIDTHS[c[0]]) + usize::from(WIDTHS[c[1]]) + usize::from(WIDTHS[c[2]]),
    }
}

/// The three slots of a key at bit `bit`, dequantised. Slots of at most 16 bits come from one
/// 64-bit read (`48 + 7 <= 64`); raw float32 slots are read one by one.
#[inline(always)]
fn read3(bytes: &[u8], bit: usize, s: &Slots) -> Vec4 {
    let [c0, c1, c2, _] = s.codes;
    if c0 == RAW_CODE || c1 == RAW_CODE || c2 == RAW_CODE {
        return read3_general(bytes, bit, s);
    }
    let word = u64_at(bytes, bit >> 3) >> (bit & 7);
    let w0 = u32::from(WIDTHS[usize::from(c0)]);
    let w1 = u32::from(WIDTHS[usize::from(c1)]);
    let q = Vec4::new(
        small_f32(word & CODE_MASK[usize::from(c0)]),
        small_f32((word >> w0) & CODE_MASK[usize::from(c1)]),
        small_f32((word >> (w0 + w1)) & CODE_MASK[usize::from(c2)]),
        0.0,
    );
    s.offset + s.scale * q
}

#[cold]
fn read3_general(bytes: &[u8], mut bit: usize, s: &Slots) -> Vec4 {
    let mut v = [0.0f32; 4];
    for (i, v) in v.iter_mut().enumerate().take(3) {
        let code = s.codes[i];
        let w = u32::from(WIDTHS[usize::from(code)]);
        *v = dequantize_slot(read_bits(bytes, bit, w), s.offset[i], s.scale[i], code);
        bit += w as usize;
    }
    Vec4::from_array(v)
}

/// The animation core's scale interpolation (equal scales stay exact).
#[inline(always)]
fn lerp_scale(a: Vec3, b: Vec3, t: f32) -> Vec3 {
    if a == b { a } else { a.lerp(b, t) }
}

#[inline(always)]
fn vec3_le(c: &[u8]) -> Vec3 {
    Vec3::new(f32_at(c, 0), f32_at(c, 4), f32_at(c, 8))
}

#[inline(always)]
fn quat_le(c: &[u8]) -> Quat {
    Quat::from_xyzw(f32_at(c, 0), f32_at(c, 4), f32_at(c, 8), f32_at(c, 12))
}

#[cfg(test)]
mod tests {
    //! The decoder against a slow, obvious model of `docs/TLC_FORMAT.md`: the static pose from the
    //! tool accessors, each key read with a sequential cursor (header fields byte by byte, key data
    //! bit by bit), decoded with the scalar [`slot_params`], and two keys interpolated as the
    //! animation core interpolates two frames. The fast decoder must give the same bits.
    use super::*;
    use crate::core::anim::{Clip, Skeleton};
    use crate::core::compress::format::TrackStore;
    use crate::core::compress::settings::{BitRate, CompressSettings};
    use crate::core::compress::{compress, synth::synthetic_clip};
    use proptest::prelude::*;

    fn bit(bytes: &[u8], pos: usize) -> u64 {
        u64::from(bytes[pos / 8] >> (pos % 8) & 1)
    }

    fn bits(bytes: &[u8], pos: &mut usize, n: u32) -> u64 {
        let mut v = 0u64;
        for i in 0..n {
            v |= bit(bytes, *pos + i as usize) << i;
        }
        *pos += n as usize;
        v
    }

    fn model_static(c: &CompressedClip) -> Vec<Transform> {
        let mut pose = c.skeleton().rest;
        for (j, stores) in c.track_stores().iter().enumerate() {
            for (kind, s) in stores.iter().enumerate() {
                if let TrackStore::Constant(v) = s {
                    match kind {
                        0 => pose[j].rotation = Quat::from_array(*v),
                        1 => pose[j].translation = Vec3::new(v[0], v[1], v[2]),
                        _ => pose[j].scale = Vec3::new(v[0], v[1], v[2]),
                    }
                }
            }
        }
        pose
    }

    fn model_key(c: &CompressedClip, k: u32) -> Vec<Transform> {
        let mut pose = model_static(c);
        if c.segment_count() == 0 {
            return pose;
        }
        let b = c.bytes();
        let s = (k / c.segment_frames()) as usize;
        let table = c.layout().segment_table_at as usize + 8 * s;
        let at = u32::from_le_bytes([b[table], b[table + 1], b[table + 2], b[table + 3]]) as usize;
        let key_bits =
            u32::from_le_bytes([b[table + 4], b[table + 5], b[table + 6], b[table + 7]]) as usize;
        let counts = c.layout().track_counts;
        let header_len: usize = TrackKind::ALL
            .iter()
            .zip(counts)
            .map(|(&k, n)| c.kind_layout(k).segment_bytes(n as usize))
            .sum();
        let mut h = at;
        let mut pos = (at + header_len) * 8 + (k % c.segment_frames()) as usize * key_bits;
        for (kind, &tk) in TrackKind::ALL.iter().enumerate() {
            let kl = c.kind_layout(tk);
            for i in 0..counts[kind] as usize {
                let t = c.track_entry(tk, i);
                let j = usize::from(t.joint);
                if t.slots == 0 {
                    let packed = bits(b, &mut pos, u32::from(t.packed_bits));
                    pose[j].rotation = unpack_smallest_three(packed, u32::from(t.packed_bits));
                    continue;
                }
                let f = kl.fields(i);
                let word = u16::from(b[h + f.code]) | u16::from(b[h + f.code + 1]) << 8;
                let mut v = [0.0f32; 4];
                for slot in 0..usize::from(t.slots) {
                    let code = ((word >> (4 * slot)) & 15) as u8;
                    let (qmin, qext) = if c.segment_ranges() {
                        (
                            b[h + f.qmin + slot * f.qstride],
                            b[h + f.qext + slot * f.qstride],
                        )
                    } else {
                        (0, 255)
                    };
                    let (o, sc) = slot_params(t.min[slot], t.step[slot], qmin, qext, code);
                    let q = bits(b, &mut pos, u32::from(WIDTHS[usize::from(code)])) as u32;
                    v[slot] = dequantize_slot(q, o, sc, code);
                }
                let drop = if t.drops_component() {
                    ((word >> 12) & 3) as u8
                } else {
                    NO_DROP
                };
                match t.kind {
                    TrackKind::Rotation => pose[j].rotation = rotation_from_slots(t.slots, drop, v),
                    TrackKind::Translation => pose[j].translation = Vec3::new(v[0], v[1], v[2]),
                    TrackKind::Scale => pose[j].scale = Vec3::new(v[0], v[1], v[2]),
                }
            }
            h += kl.segment_bytes(counts[kind] as usize);
        }
        pose
    }

    fn model_pose(c: &CompressedClip, frame: f32) -> Vec<Transform> {
        let (k0, alpha) = c.key_position(frame);
        let a = model_key(c, k0);
        if alpha <= 0.0 {
            return a;
        }
        // Static tracks are written as they are; animated ones interpolated.
        let b = model_key(c, k0 + 1);
        let stores = c.track_stores();
        let animated = |j: usize, k: usize| stores[j][k] == TrackStore::Animated;
        a.iter()
            .zip(&b)
            .enumerate()
            .map(|(j, (x, y))| Transform {
                translation: if animated(j, 1) {
                    x.translation.lerp(y.translation, alpha)
                } else {
                    x.translation
                },
                rotation: if animated(j, 0) {
                    nlerp(x.rotation, y.rotation, alpha)
                } else {
                    x.rotation
                },
                scale: if animated(j, 2) && x.scale != y.scale {
                    x.scale.lerp(y.scale, alpha)
                } else {
                    x.scale
                },
            })
            .collect()
    }

    /// A clip with large random steps between frames, animated translations and non-unit scales
    /// on every joint.
    fn jumpy_clip(joints: usize, frames: usize, seed: u64, step: f32) -> Clip {
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 23) as f32) - 1.0
        };
        let parents = (0..joints).map(|j| j.checked_sub(1)).collect();
        let names = (0..joints).map(|j| format!("j{j}")).collect();
        let rest = vec![Transform::IDENTITY; joints];
        let mut prev = vec![Quat::IDENTITY; joints];
        let (mut rotations, mut translations, mut scales) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..frames {
            for p in prev.iter_mut() {
                let d = Quat::from_xyzw(next() * step, next() * step, next() * step, 1.0);
                let q = (*p * d).normalize();
                let q = if q.dot(*p) < 0.0 { -q } else { q };
                *p = q;
                rotations.push(q);
                translations.push(Vec3::new(next(), next(), next()) * 20.0);
                scales.push(Vec3::new(1.0 + 0.2 * next(), 1.0, 1.0 + 0.1 * next()));
            }
        }
        Clip {
            name: "jumpy".into(),
            skeleton: Skeleton::new(names, parents, rest),
            fps: 30.0,
            frame_count: frames,
            unit_cm: 1.0,
            rotations,
            translations,
            scales,
        }
    }

    fn check_against_model(c: &CompressedClip, frames: &[f32]) -> Result<(), TestCaseError> {
        let mut pose = vec![Transform::IDENTITY; c.joint_count()];
        for &f in frames {
            let model = model_pose(c, f);
            c.sample_pose_at_frame(f, &mut pose);
            for (j, (got, want)) in pose.iter().zip(&model).enumerate() {
                prop_assert!(
                    got == want,
                    "frame {f} joint {j}: fast {got:?} vs model {want:?}"
                );
            }
            c.sample_pose_portable(f, &mut pose);
            for (j, (got, want)) in pose.iter().zip(&model).enumerate() {
                prop_assert!(
                    got == want,
                    "frame {f} joint {j}: portable {got:?} vs model {want:?}"
                );
            }
            c.sample_pose_avx2(f, &mut pose);
            for (j, (got, want)) in pose.iter().zip(&model).enumerate() {
                prop_assert!(
                    got == want,
                    "frame {f} joint {j}: avx2 {got:?} vs model {want:?}"
                );
            }
            let t = f / c.fps();
            for j in 0..c.joint_count() {
                let one = c.sample_joint(t, j).unwrap();
                let mut full = vec![Transform::IDENTITY; c.joint_count()];
                c.sample_pose(t, &mut full);
                prop_assert!(
                    one == full[j],
                    "time {t} joint {j}: {one:?} vs {:?}",
                    full[j]
                );
            }
        }
        Ok(())
    }

    fn all_frames(c: &CompressedClip, extra: &[f32]) -> Vec<f32> {
        let last = (c.frame_count() - 1) as f32;
        let mut frames: Vec<f32> = (0..4 * c.frame_count()).map(|i| i as f32 * 0.25).collect();
        frames.extend(extra.iter().map(|x| x * last));
        frames.extend([-1.0, last + 3.0, f32::NAN]);
        frames
    }

    /// Default settings with fixed widths (rotation, translation, scale bits).
    fn fixed_bits(rotation_bits: u8, translation_bits: u8, scale_bits: u8) -> CompressSettings {
        CompressSettings {
            bits: BitRate::Fixed {
                rotation_bits,
                translation_bits,
                scale_bits,
            },
            ..CompressSettings::default()
        }
    }

    #[test]
    fn jumpy_clip_with_scales_decodes_like_the_model() {
        let clip = jumpy_clip(6, 70, 7, 0.9);
        let c = compress(&clip, &fixed_bits(8, 12, 6)).unwrap().clip;
        assert!(c.has_scale());
        check_against_model(&c, &all_frames(&c, &[])).unwrap();
    }

    /// No animated rotation (every rotation constant): the rotation decoders have no group to
    /// read and must still hand over to the translations and scales.
    #[test]
    fn clips_without_animated_rotations_decode_like_the_model() {
        let mut clip = jumpy_clip(5, 30, 9, 0.6);
        let n = clip.joint_count();
        let first: Vec<Quat> = clip.rotations[..n].to_vec();
        for (i, q) in clip.rotations.iter_mut().enumerate() {
            *q = first[i % n];
        }
        let c = compress(&clip, &fixed_bits(12, 10, 8)).unwrap().clip;
        let rotations = c
            .animated_tracks()
            .iter()
            .filter(|t| t.kind == TrackKind::Rotation)
            .count();
        assert_eq!(rotations, 0);
        assert!(c.animated_tracks().len() >= n, "translations animated");
        check_against_model(&c, &all_frames(&c, &[0.5])).unwrap();
    }

    /// On a CPU with AVX2 the groups of an ordinary clip go through the AVX2 decoder (not all
    /// handed back to the portable one), in one key, a pair in one segment and a pair across two:
    /// a sample through the EVEX decoder where the CPU has AVX-512 (F, VL, VBMI2), and the test
    /// hook `sample_pose_avx2` through the AVX2 one without AVX-512 instructions.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_vector_decoders_take_ordinary_groups() {
        use crate::core::compress::decode_avx2;
        use decode_avx2::{EVEX_GROUPS, FAST_GROUPS, FAST_VECTORS};
        if !decode_avx2::available() {
            return;
        }
        let clip = jumpy_clip(9, 40, 11, 0.6);
        let c = compress(&clip, &CompressSettings::auto(0.05)).unwrap().clip;
        assert_eq!(c.rotation_format(), RotationFormat::DropW);
        let mut pose = vec![Transform::IDENTITY; c.joint_count()];
        let sf = c.segment_frames() as f32;
        let counts = c.layout().track_counts;
        let tracks = (counts[1] + counts[2]) as usize;
        assert!(tracks > 0);
        let evex = if decode_avx2::available_evex() { 3 } else { 0 };
        assert_eq!(c.layout().decoder.evex(), evex > 0);
        for frame in [0.0, 1.5, sf - 0.5] {
            let (groups, vectors, evex_groups) =
                (FAST_GROUPS.get(), FAST_VECTORS.get(), EVEX_GROUPS.get());
            c.sample_pose_at_frame(frame, &mut pose);
            // Nine tracks: three groups.
            assert_eq!(FAST_GROUPS.get() - groups, 3, "frame {frame}");
            assert_eq!(EVEX_GROUPS.get() - evex_groups, evex, "frame {frame}");
            let fast = if frame == sf - 0.5 { 0 } else { tracks };
            assert_eq!(FAST_VECTORS.get() - vectors, fast, "frame {frame}");
            let (groups, vectors, evex_groups) =
                (FAST_GROUPS.get(), FAST_VECTORS.get(), EVEX_GROUPS.get());
            c.sample_pose_avx2(frame, &mut pose);
            assert_eq!(FAST_GROUPS.get() - groups, 3, "avx2, frame {frame}");
            assert_eq!(EVEX_GROUPS.get(), evex_groups, "avx2, frame {frame}");
            // The translations and scales too, but for keys in two segments (the portable
            // code's).
            let fast = if frame == sf - 0.5 { 0 } else { tracks };
            assert_eq!(FAST_VECTORS.get() - vectors, fast, "avx2, frame {frame}");
        }
        check_against_model(&c, &all_frames(&c, &[])).unwrap();
    }

    /// Groups that hold a raw float32 slot next to ordinary groups: the pair holding the raw slot
    /// goes on to the portable decoder, the others are read by the AVX2 one; the same bits.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn groups_with_raw_slots_decode_like_the_model() {
        use crate::core::compress::decode_avx2::{FAST_GROUPS, available};
        // A tight budget on long chains: some segments need more than 16 bits for some slots
        // (checked below), and their pairs go to the portable decoder.
        let clip = jumpy_clip(23, 48, 17, 0.9);
        let c = compress(&clip, &CompressSettings::auto(0.01)).unwrap().clip;
        assert_eq!(c.rotation_format(), RotationFormat::DropW);
        assert!(
            !c.segments_with_raw_slots().is_empty(),
            "no segment holds a raw float32 slot"
        );
        let fast = FAST_GROUPS.get();
        check_against_model(&c, &all_frames(&c, &[0.4])).unwrap();
        if available() {
            assert!(FAST_GROUPS.get() > fast, "no group decoded with AVX2");
        }
    }

    /// Three-bit rotations: quantisation pushes the stored part of some keys past unit length,
    /// which the format normalises; the AVX2 decoder hands those pairs to the portable one.
    #[test]
    fn rotations_pushed_past_unit_length_decode_like_the_model() {
        let clip = jumpy_clip(12, 60, 3, 0.9);
        let c = compress(&clip, &fixed_bits(3, 8, 8)).unwrap().clip;
        #[cfg(target_arch = "x86_64")]
        let before = crate::core::compress::decode_avx2::NORMALISED_PAIRS.get();
        check_against_model(&c, &all_frames(&c, &[0.5])).unwrap();
        #[cfg(target_arch = "x86_64")]
        if crate::core::compress::decode_avx2::available() {
            let after = crate::core::compress::decode_avx2::NORMALISED_PAIRS.get();
            assert!(after > before, "no pair needed normalising");
        }
    }

    #[test]
    fn many_groups_decode_in_pairs_and_batches_like_the_model() {
        // 41 rotations: 11 groups, five pairs and a lone group (three quads, the last short of a
        // group), more pairs and quads than one batch holds, with keys within a segment, across
        // two and exactly on a key.
        // Fixed widths, so no slot is a raw float32 (a pair holding one goes to the portable
        // decoder: `raw_slots_decode_like_the_model`).
        let clip = jumpy_clip(41, 40, 5, 0.6);
        let c = compress(&clip, &fixed_bits(12, 10, 8)).unwrap().clip;
        assert_eq!(c.rotation_format(), RotationFormat::DropW);
        check_against_model(&c, &all_frames(&c, &[0.3, 0.7])).unwrap();
        #[cfg(target_arch = "x86_64")]
        {
            use crate::core::compress::decode_avx2::{FAST_GROUPS, available};
            if !available() {
                return;
            }
            let rotations = c
                .animated_tracks()
                .iter()
                .filter(|t| t.kind == TrackKind::Rotation)
                .count();
            let mut pose = vec![Transform::IDENTITY; c.joint_count()];
            let sf = c.segment_frames() as f32;
            for frame in [0.0, 1.5, sf - 0.5] {
                let before = FAST_GROUPS.get();
                c.sample_pose_at_frame(frame, &mut pose);
                assert_eq!(
                    FAST_GROUPS.get() - before,
                    rotations.div_ceil(4),
                    "frame {frame}"
                );
                let before = FAST_GROUPS.get();
                c.sample_pose_avx2(frame, &mut pose);
                assert_eq!(
                    FAST_GROUPS.get() - before,
                    rotations.div_ceil(4),
                    "avx2, frame {frame}"
                );
            }
        }
    }

    /// 21 rotations (as the Bandai takes): six groups, three pairs, the last group with one track;
    /// 5 rotations: one pair, its second group with one track. Every group is read by the AVX2
    /// decoder where the CPU has it (the lanes past the last track are read and not written).
    #[test]
    fn pairs_with_a_short_last_group_decode_like_the_model() {
        for (rotations, seed) in [(21, 3), (5, 4)] {
            let clip = jumpy_clip(rotations, 40, seed, 0.6);
            let c = compress(&clip, &fixed_bits(11, 10, 8)).unwrap().clip;
            assert_eq!(c.rotation_format(), RotationFormat::DropW);
            #[cfg(target_arch = "x86_64")]
            let before = crate::core::compress::decode_avx2::FAST_GROUPS.get();
            let frames = all_frames(&c, &[0.2, 0.9]);
            check_against_model(&c, &frames).unwrap();
            #[cfg(target_arch = "x86_64")]
            if crate::core::compress::decode_avx2::available() {
                let after = crate::core::compress::decode_avx2::FAST_GROUPS.get();
                // At least every group of every frame's fast sample.
                assert!(
                    after - before >= frames.len() * rotations.div_ceil(4),
                    "{rotations} rotations: groups handed to the portable decoder"
                );
            }
        }
    }

    /// Every rotation format with raw float32 slots (one 64-bit read cannot hold them), on more
    /// tracks than one group of four lanes.
    #[test]
    fn raw_slots_decode_like_the_model() {
        let clip = jumpy_clip(7, 20, 3, 0.5);
        for format in 0..4 {
            let settings = CompressSettings {
                rotation_format: RotationFormat::from_code(format).unwrap(),
                bits: BitRate::Fixed {
                    rotation_bits: 32,
                    translation_bits: 32,
                    scale_bits: 32,
                },
                ..CompressSettings::default()
            };
            let c = compress(&clip, &settings).unwrap().clip;
            check_against_model(&c, &all_frames(&c, &[])).unwrap();
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn fast_decoder_matches_the_model(
            jumpy in any::<bool>(),
            joints in 1usize..9,
            frames in 1usize..50,
            seed in any::<u64>(),
            format in 0u8..4,
            widths in (0usize..16, 0usize..16, 0usize..16),
            auto in any::<bool>(),
            segment_frames in 0u16..20,
            segment_ranges in any::<bool>(),
            frame_step in 1u16..4,
            extra in proptest::collection::vec(0.0f32..=1.0, 0..20),
        ) {
            let clip = if jumpy {
                jumpy_clip(joints, frames, seed, 0.6)
            } else {
                synthetic_clip(joints, frames, 30.0, seed)
            };
            let bits = if auto {
                BitRate::Auto { error_cm: 0.05 }
            } else {
                BitRate::Fixed {
                    rotation_bits: WIDTHS[widths.0],
                    translation_bits: WIDTHS[widths.1],
                    scale_bits: WIDTHS[widths.2],
                }
            };
            let settings = CompressSettings {
                rotation_format: RotationFormat::from_code(format).unwrap(),
                bits,
                segment_frames,
                segment_ranges,
                frame_step,
                ..CompressSettings::default()
            };
            let c = compress(&clip, &settings).unwrap().clip;
            check_against_model(&c, &all_frames(&c, &extra))?;
        }
    }
}
