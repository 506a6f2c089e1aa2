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

use glam::{Quat, Vec3, Vec4};

use super::bits::read_bits;
use super::format::{
    AnimatedTrack, CODE_MASK, CODE_MID, CODE_SCALE, CompressedClip, FLAG_SEGMENT_RANGES, NO_DROP,
    RAW_CODE, TrackKind, dequantize_slot, f32_at, key_frame, rotation_from_slots, u16_at, u32_at,
    u64_at,
};
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

/// The decoding constants of one ranged track in one segment: `value = offset + scale * q` per
/// slot, the width code of each slot and the dropped component.
#[derive(Debug, Clone, Copy)]
struct Slots {
    offset: Vec4,
    scale: Vec4,
    codes: [u8; 4],
    drop: u8,
    /// Bits of the track in one key.
    bits: usize,
}

/// How a walk over the animated tracks reads keys.
const ONE_KEY: u8 = 0;
const PAIR_IN_SEGMENT: u8 = 1;
const PAIR_ACROSS: u8 = 2;

impl CompressedClip {
    /// Samples the local pose at time `time_s` (clamped to `[0, duration]`), interpolating the two
    /// neighbouring keys (translation and scale lerp, rotation nlerp on the shortest path).
    /// `out` must hold one transform per joint; extra entries are left alone.
    pub fn sample_pose(&self, time_s: f32, out: &mut [Transform]) {
        self.sample_pose_at_frame(time_s * self.layout.fps, out);
    }

    /// Samples the local pose at a (fractional) frame position of the original clip.
    pub fn sample_pose_at_frame(&self, frame: f32, out: &mut [Transform]) {
        let n = self.layout.joint_count as usize;
        let out = &mut out[..n];
        let (k0, alpha) = self.key_position(frame);
        self.write_static(out);
        if self.layout.segment_count == 0 {
            return;
        }
        let sf = self.layout.segment_frames;
        let s = (k0 / sf) as usize;
        let i = (k0 % sf) as usize;
        let a = self.segment_ref(s);
        if alpha <= 0.0 {
            self.walk::<ONE_KEY>(&a, i, &a, i, 0.0, out);
        } else if i + 1 < sf as usize {
            self.walk::<PAIR_IN_SEGMENT>(&a, i, &a, i + 1, alpha, out);
        } else {
            let b = self.segment_ref(s + 1);
            self.walk::<PAIR_ACROSS>(&a, i, &b, 0, alpha, out);
        }
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
        let at = self.segment_at(s);
        let headers = at + 4;
        SegmentRef {
            headers,
            data_bit: (headers + self.layout.segment_header_bytes as usize) * 8,
            key_bits: u32_at(&self.bytes, at) as usize,
        }
    }

    /// The rest pose, then the constant tracks.
    fn write_static(&self, out: &mut [Transform]) {
        let b = &self.bytes[..];
        let l = &self.layout;
        let at = l.rest_translations_at as usize;
        let rest = b.get(at..at + 12 * out.len()).unwrap_or_default();
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
        for e in list(l.rest_rotations_at, 16).chain(list(l.constants_at[0], 16)) {
            if let Some(o) = out.get_mut(usize::from(u16::from_le_bytes([e[0], e[1]]))) {
                o.rotation = quat_le(&e[2..]);
            }
        }
        for e in list(l.constants_at[1], 12) {
            if let Some(o) = out.get_mut(usize::from(u16::from_le_bytes([e[0], e[1]]))) {
                o.translation = vec3_le(&e[2..]);
            }
        }
        for e in list(l.rest_scales_at, 12).chain(list(l.constants_at[2], 12)) {
            if let Some(o) = out.get_mut(usize::from(u16::from_le_bytes([e[0], e[1]]))) {
                o.scale = vec3_le(&e[2..]);
            }
        }
    }

    /// Decodes every animated track at key `ia` of segment `a` (and, for the pair modes, key `ib`
    /// of segment `b`, blended by `alpha`) into `out`.
    #[inline(always)]
    fn walk<const MODE: u8>(
        &self,
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
        // Rotations.
        let mut entry = l.tracks_at[0] as usize;
        let rot_slots = l.rotation_format.ranged_components().unwrap_or(0);
        let rot_header = l.rotation_header_bytes as usize;
        let rot_entry = 2 + 8 * rot_slots;
        for _ in 0..l.track_counts[0] {
            let joint = usize::from(u16_at(bytes, entry));
            let q = match l.rotation_format {
                RotationFormat::DropW => {
                    let sa = slots3(bytes, ha, entry, ranges);
                    let qa = rotation_from_slots(3, sa.drop, read3(bytes, bit_a, &sa).to_array());
                    bit_a += sa.bits;
                    if MODE == ONE_KEY {
                        qa
                    } else {
                        let sb = if MODE == PAIR_IN_SEGMENT {
                            sa
                        } else {
                            slots3(bytes, hb, entry, ranges)
                        };
                        let qb =
                            rotation_from_slots(3, sb.drop, read3(bytes, bit_b, &sb).to_array());
                        bit_b += sb.bits;
                        nlerp(qa, qb, alpha)
                    }
                }
                _ => {
                    let t = self.track_entry(TrackKind::Rotation, entry);
                    let qa = self.general_rotation(&t, ha, &mut bit_a, ranges);
                    if MODE == ONE_KEY {
                        qa
                    } else {
                        let qb = self.general_rotation(&t, hb, &mut bit_b, ranges);
                        nlerp(qa, qb, alpha)
                    }
                }
            };
            if let Some(o) = out.get_mut(joint) {
                o.rotation = q;
            }
            ha += rot_header;
            hb += rot_header;
            entry += rot_entry;
        }
        // Translations, then scales.
        let vec_header = if ranges { 8 } else { 2 };
        for kind in 1..3 {
            entry = l.tracks_at[kind] as usize;
            for _ in 0..l.track_counts[kind] {
                let joint = usize::from(u16_at(bytes, entry));
                let sa = slots3(bytes, ha, entry, ranges);
                let va = read3(bytes, bit_a, &sa).truncate();
                bit_a += sa.bits;
                let v = if MODE == ONE_KEY {
                    va
                } else {
                    let sb = if MODE == PAIR_IN_SEGMENT {
                        sa
                    } else {
                        slots3(bytes, hb, entry, ranges)
                    };
                    let vb = read3(bytes, bit_b, &sb).truncate();
                    bit_b += sb.bits;
                    if kind == 1 {
                        va.lerp(vb, alpha)
                    } else {
                        lerp_scale(va, vb, alpha)
                    }
                };
                if let Some(o) = out.get_mut(joint) {
                    if kind == 1 {
                        o.translation = v;
                    } else {
                        o.scale = v;
                    }
                }
                ha += vec_header;
                hb += vec_header;
                entry += 26;
            }
        }
    }

    /// A rotation the drop-W fast path does not cover: full quaternions (4 slots, normalised) and
    /// smallest-three packings. Advances `bit` past it.
    fn general_rotation(
        &self,
        t: &AnimatedTrack,
        header: usize,
        bit: &mut usize,
        ranges: bool,
    ) -> Quat {
        let bytes = &self.bytes[..];
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
        let word = u16_at(bytes, header);
        let mut c = [0.0f32; 4];
        for (i, v) in c.iter_mut().enumerate().take(usize::from(t.slots)) {
            let code = ((word >> (4 * i)) & 15) as u8;
            let (qmin, qext) = slot_range(bytes, header, i, ranges);
            let (o, s) = super::format::slot_params(t.min[i], t.step[i], qmin, qext, code);
            let w = u32::from(WIDTHS[usize::from(code)]);
            *v = dequantize_slot(read_bits(bytes, *bit, w), o, s, code);
            *bit += w as usize;
        }
        rotation_from_slots(t.slots, NO_DROP, c)
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
    /// segment's headers and key layout up to them); and which of its tracks are animated.
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
        let ranges = self.segment_ranges();
        let mut header = seg.headers;
        let mut bit = seg.data_bit + (k % l.segment_frames) as usize * seg.key_bits;
        for (kind, &tk) in TrackKind::ALL.iter().enumerate() {
            let mut entry = l.tracks_at[kind] as usize;
            for _ in 0..l.track_counts[kind] {
                let t = self.track_entry(tk, entry);
                entry += t.entry_bytes();
                let hb = t.header_bytes(ranges);
                if usize::from(t.joint) != joint {
                    bit += track_key_bits(&self.bytes, header, &t);
                    header += hb;
                    continue;
                }
                animated[kind] = true;
                match (tk, l.rotation_format) {
                    (TrackKind::Rotation, RotationFormat::DropW) => {
                        let sl = slots3(&self.bytes, header, entry - t.entry_bytes(), ranges);
                        out.rotation = rotation_from_slots(
                            3,
                            sl.drop,
                            read3(&self.bytes, bit, &sl).to_array(),
                        );
                        bit += sl.bits;
                    }
                    (TrackKind::Rotation, _) => {
                        out.rotation = self.general_rotation(&t, header, &mut bit, ranges);
                    }
                    _ => {
                        let sl = slots3(&self.bytes, header, entry - t.entry_bytes(), ranges);
                        let v = read3(&self.bytes, bit, &sl).truncate();
                        bit += sl.bits;
                        if tk == TrackKind::Translation {
                            out.translation = v;
                        } else {
                            out.scale = v;
                        }
                    }
                }
                header += hb;
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
    /// [`Self::sample_pose`] at `k / fps`, for `frames` frames (times past the end clamp).
    pub fn resample(&self, fps: f32, frames: usize) -> Clip {
        let n = self.joint_count();
        let mut rotations = Vec::with_capacity(n * frames);
        let mut translations = Vec::with_capacity(n * frames);
        let mut scales = Vec::with_capacity(n * frames);
        let mut pose = vec![Transform::IDENTITY; n];
        let mut prev: Option<Vec<Quat>> = None;
        let same_rate = fps == self.fps();
        for k in 0..frames {
            if same_rate {
                self.sample_pose_at_frame(k as f32, &mut pose);
            } else {
                self.sample_pose((k as f64 / f64::from(fps)) as f32, &mut pose);
            }
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

/// Bits of one key of track `t` whose segment header is at `header`.
fn track_key_bits(bytes: &[u8], header: usize, t: &AnimatedTrack) -> usize {
    if t.slots == 0 {
        return usize::from(t.packed_bits);
    }
    let word = u16_at(bytes, header);
    (0..usize::from(t.slots))
        .map(|i| usize::from(WIDTHS[usize::from((word >> (4 * i)) & 15)]))
        .sum()
}

/// Segment range `(qmin, qext)` of slot `i` of the track whose header is at `header`.
#[inline(always)]
fn slot_range(bytes: &[u8], header: usize, i: usize, ranges: bool) -> (u8, u8) {
    if ranges {
        let at = header + 2 + 2 * i;
        match bytes.get(at..at + 2) {
            Some(r) => (r[0], r[1]),
            None => (0, 255),
        }
    } else {
        (0, 255)
    }
}

/// The decoding constants of a 3-slot track (drop-W rotation, translation, scale) from its
/// segment header at `header` and its track table entry at `entry`: [`format::slot_params`] on
/// four lanes at once (the same operations in the same order, so the same bits).
///
/// [`format::slot_params`]: super::format::slot_params
#[inline(always)]
fn slots3(bytes: &[u8], header: usize, entry: usize, ranges: bool) -> Slots {
    let word = u16_at(bytes, header);
    let codes = [
        (word & 15) as u8,
        ((word >> 4) & 15) as u8,
        ((word >> 8) & 15) as u8,
        0,
    ];
    let drop = ((word >> 12) & 3) as u8;
    let min = Vec4::new(
        f32_at(bytes, entry + 2),
        f32_at(bytes, entry + 6),
        f32_at(bytes, entry + 10),
        0.0,
    );
    let step = Vec4::new(
        f32_at(bytes, entry + 14),
        f32_at(bytes, entry + 18),
        f32_at(bytes, entry + 22),
        0.0,
    );
    let (qmin, qext) = if ranges {
        match bytes.get(header + 2..header + 8) {
            Some(r) => (
                Vec4::new(f32::from(r[0]), f32::from(r[2]), f32::from(r[4]), 0.0),
                Vec4::new(f32::from(r[1]), f32::from(r[3]), f32::from(r[5]), 0.0),
            ),
            None => (Vec4::ZERO, Vec4::splat(255.0)),
        }
    } else {
        (Vec4::ZERO, Vec4::splat(255.0))
    };
    let c = codes.map(usize::from);
    let mid = Vec4::new(CODE_MID[c[0]], CODE_MID[c[1]], CODE_MID[c[2]], 0.0);
    let inv = Vec4::new(CODE_SCALE[c[0]], CODE_SCALE[c[1]], CODE_SCALE[c[2]], 0.0);
    Slots {
        offset: min + step * (qmin + qext * mid),
        scale: step * qext * inv,
        codes,
        drop,
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
        (word & CODE_MASK[usize::from(c0)]) as f32,
        ((word >> w0) & CODE_MASK[usize::from(c1)]) as f32,
        ((word >> (w0 + w1)) & CODE_MASK[usize::from(c2)]) as f32,
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
    use crate::core::compress::format::{TrackStore, slot_params};
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
        let at = c.segment_at(s);
        let key_bits = u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize;
        let tracks = c.animated_tracks();
        let header_len: usize = tracks
            .iter()
            .map(|t| t.header_bytes(c.segment_ranges()))
            .sum();
        let mut h = at + 4;
        let mut pos = (at + 4 + header_len) * 8 + (k % c.segment_frames()) as usize * key_bits;
        for t in &tracks {
            let j = usize::from(t.joint);
            if t.slots == 0 {
                let packed = bits(b, &mut pos, u32::from(t.packed_bits));
                pose[j].rotation = unpack_smallest_three(packed, u32::from(t.packed_bits));
                continue;
            }
            let word = u16::from(b[h]) | u16::from(b[h + 1]) << 8;
            let mut v = [0.0f32; 4];
            for i in 0..usize::from(t.slots) {
                let code = ((word >> (4 * i)) & 15) as u8;
                let (qmin, qext) = if c.segment_ranges() {
                    (b[h + 2 + 2 * i], b[h + 3 + 2 * i])
                } else {
                    (0, 255)
                };
                let (o, sc) = slot_params(t.min[i], t.step[i], qmin, qext, code);
                let q = bits(b, &mut pos, u32::from(WIDTHS[usize::from(code)])) as u32;
                v[i] = dequantize_slot(q, o, sc, code);
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
            h += t.header_bytes(c.segment_ranges());
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
            c.sample_pose_at_frame(f, &mut pose);
            let model = model_pose(c, f);
            for (j, (got, want)) in pose.iter().zip(&model).enumerate() {
                prop_assert!(
                    got == want,
                    "frame {f} joint {j}: fast {got:?} vs model {want:?}"
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

    #[test]
    fn jumpy_clip_with_scales_decodes_like_the_model() {
        let clip = jumpy_clip(6, 70, 7, 0.9);
        let settings = CompressSettings {
            bits: BitRate::Fixed {
                rotation_bits: 8,
                translation_bits: 12,
                scale_bits: 6,
            },
            ..CompressSettings::default()
        };
        let c = compress(&clip, &settings).unwrap().clip;
        assert!(c.has_scale());
        check_against_model(&c, &all_frames(&c, &[])).unwrap();
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
