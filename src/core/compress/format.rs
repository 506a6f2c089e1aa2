//! The `.tlc` compressed clip, version 3: writer, validating reader (which also loads version 2,
//! converting it as it goes) and the fixed-size layout the decoder (`decode.rs`) samples from.
//!
//! The byte layout is documented field by field in `docs/TLC_FORMAT.md`. The encoder builds a
//! [`Plan`], serialises it with [`write_plan`], and reads the bytes back with
//! [`CompressedClip::from_bytes`]: every decoded value the encoder reports comes from the same
//! reader and decoder the user runs.
//!
//! At run time a [`CompressedClip`] is the file's bytes plus a [`Layout`] of fixed size (section
//! offsets and counts found while validating): sampling reads the rest pose, constants, track
//! ranges, segment headers and keys straight from the bytes. Nothing proportional to the clip is
//! built at load.
// Parallel per-slot arrays are indexed together; index loops read clearer.
#![allow(clippy::needless_range_loop)]

use glam::{Quat, Vec3};

use super::bits::crc32;
use super::settings::{RotationFormat, WIDTHS};
use crate::core::anim::skeleton::EndSite;
use crate::core::anim::{Skeleton, Transform};

/// File magic: the first 8 bytes of every `.tlc` file.
pub const MAGIC: [u8; 8] = *b"TAGLNTLC";
/// Format version written by this build. The reader also loads [`OLDEST_VERSION`] files, whose
/// bytes it converts to this version (see [`CompressedClip::from_bytes`]).
pub const VERSION: u16 = 3;
/// The oldest version the reader loads: version 2 differs from 3 only in where a segment's
/// `key_bits` is stored (first in its block instead of next to its offset in the segment table).
pub const OLDEST_VERSION: u16 = 2;
/// Bytes of one segment table entry: the block's offset and its `key_bits` (u32 each), so that
/// a sample finds a segment's keys from one read of the table.
pub const SEGMENT_ENTRY_BYTES: usize = 8;
/// Size of the fixed header in bytes.
pub const HEADER_BYTES: usize = 64;
/// Zero bytes between the last segment and the checksum, so that every 8-byte read that starts
/// inside the key data stays inside the file.
pub const PADDING_BYTES: usize = 4;
/// Header flag: per-segment ranges are present.
pub const FLAG_SEGMENT_RANGES: u16 = 1;
/// Header flag: some scale in the clip differs from 1 (information for tools).
pub const FLAG_HAS_SCALE: u16 = 2;
const KNOWN_FLAGS: u16 = FLAG_SEGMENT_RANGES | FLAG_HAS_SCALE;
/// `parent` value of a root joint.
pub const NO_PARENT: u16 = 0xFFFF;
/// Width code of raw float32 slots (`WIDTHS[15] == 32`).
pub const RAW_CODE: u8 = 15;

/// Rotation, translation, scale: the three tracks of a joint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TrackKind {
    Rotation = 0,
    Translation = 1,
    Scale = 2,
}

impl TrackKind {
    pub const ALL: [TrackKind; 3] = [
        TrackKind::Rotation,
        TrackKind::Translation,
        TrackKind::Scale,
    ];
}

/// How one track is stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TrackStore {
    /// Equal to the rest pose: not stored.
    Default,
    /// One value for the whole clip (rotation x, y, z, w; translation/scale x, y, z).
    Constant([f32; 4]),
    /// Stored per key in the segments.
    Animated,
}

/// An animated track as the file describes it: joint, kind, and per stored slot the clip range
/// `[min, min + 255 * step]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnimatedTrack {
    pub joint: u16,
    pub kind: TrackKind,
    /// Range-reduced slots per key: 3 (drop-W rotation, translation, scale), 4 (full rotation) or
    /// 0 (smallest-three rotation).
    pub slots: u8,
    /// Bits per key of a smallest-three rotation (32 or 48), else 0.
    pub packed_bits: u8,
    /// Per slot: the clip range's minimum.
    pub min: [f32; 4],
    /// Per slot: the clip range's extent divided by 255 (the unit of the 8-bit segment ranges).
    pub step: [f32; 4],
}

impl AnimatedTrack {
    /// True for a drop-W rotation: 3 stored slots, the dropped component chosen per segment.
    #[inline]
    pub fn drops_component(&self) -> bool {
        self.kind == TrackKind::Rotation && self.slots == 3
    }
}

/// Where track `i` of a kind keeps its fields, in bytes from the start of the kind's part of the
/// track table (`joint`, `min`, `step`) and of a segment header (`code`, `qmin`, `qext`); slot `s`
/// of a field is at `field + s * stride` (`qstride` for the ranges).
///
/// Range-reduced rotations are stored in groups of four tracks, field by field, so the decoder
/// loads each field of four tracks at once; translations, scales and smallest-three rotations one
/// track after the other. See `docs/TLC_FORMAT.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    pub joint: usize,
    pub min: usize,
    pub step: usize,
    pub stride: usize,
    pub code: usize,
    pub qmin: usize,
    pub qext: usize,
    pub qstride: usize,
}

/// Layout of one kind's tracks: `slots` per track, grouped in fours or not, with or without
/// segment ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindLayout {
    pub slots: usize,
    pub grouped: bool,
    pub ranges: bool,
}

impl KindLayout {
    pub fn new(kind: TrackKind, format: RotationFormat, ranges: bool) -> Self {
        let (slots, _) = track_shape(kind, format);
        Self {
            slots: usize::from(slots),
            grouped: kind == TrackKind::Rotation && slots > 0,
            ranges,
        }
    }
    /// Bytes of a group of four tracks (grouped) or of one track in the track table.
    pub fn entry_bytes(&self) -> usize {
        if self.grouped {
            8 + 32 * self.slots
        } else {
            2 + 8 * self.slots
        }
    }
    /// Bytes of a group of four tracks (grouped) or of one track in a segment header.
    pub fn header_bytes(&self) -> usize {
        if self.slots == 0 {
            return 0;
        }
        let per = if self.grouped { 4 } else { 1 };
        2 * per + if self.ranges { 2 * per * self.slots } else { 0 }
    }
    /// Entries (groups or tracks) for `count` tracks.
    pub fn entries(&self, count: usize) -> usize {
        if self.grouped {
            count.div_ceil(4)
        } else {
            count
        }
    }
    /// Bytes of `count` tracks in the track table.
    pub fn table_bytes(&self, count: usize) -> usize {
        self.entries(count) * self.entry_bytes()
    }
    /// Bytes of `count` tracks in a segment header.
    pub fn segment_bytes(&self, count: usize) -> usize {
        self.entries(count) * self.header_bytes()
    }
    /// Where track `i` keeps its fields.
    pub fn fields(&self, i: usize) -> Fields {
        let (e, h) = (self.entry_bytes(), self.header_bytes());
        if self.grouped {
            let (g, lane) = (i / 4, i % 4);
            Fields {
                joint: g * e + 2 * lane,
                min: g * e + 8 + 4 * lane,
                step: g * e + 8 + 16 * self.slots + 4 * lane,
                stride: 16,
                code: g * h + 2 * lane,
                qmin: g * h + 8 + lane,
                qext: g * h + 12 + lane,
                qstride: 8,
            }
        } else {
            Fields {
                joint: i * e,
                min: i * e + 2,
                step: i * e + 2 + 4 * self.slots,
                stride: 4,
                code: i * h,
                qmin: i * h + 2,
                qext: i * h + 3,
                qstride: 2,
            }
        }
    }
}

/// `drop` value of a track that drops no component.
pub const NO_DROP: u8 = 4;

/// The quaternion components stored in the slots (in order) when component `drop` is dropped; for
/// tracks that drop nothing, the identity mapping.
#[inline(always)]
pub fn kept_components(drop: u8) -> [usize; 4] {
    match drop {
        0 => [1, 2, 3, 0],
        1 => [0, 2, 3, 1],
        2 => [0, 1, 3, 2],
        _ => [0, 1, 2, 3],
    }
}

/// Per width code: `1 / (2^w - 1)` (0 for widths 0 and 32).
pub const CODE_SCALE: [f32; 16] = code_scale();
/// Per width code: 0.5 for width 0 (the value is the middle of the segment range), else 0.
pub const CODE_MID: [f32; 16] = {
    let mut t = [0.0f32; 16];
    t[0] = 0.5;
    t
};
/// Per width code: `2^w - 1` as a bit mask (`u32::MAX` for width 32).
pub const CODE_MASK: [u64; 16] = {
    let mut t = [0u64; 16];
    let mut c = 0;
    while c < 16 {
        t[c] = (1u64 << WIDTHS[c]) - 1;
        c += 1;
    }
    t
};

const fn code_scale() -> [f32; 16] {
    let mut t = [0.0f32; 16];
    let mut c = 1;
    while c < 15 {
        t[c] = 1.0 / ((1u64 << WIDTHS[c]) - 1) as f32;
        c += 1;
    }
    t
}

/// Decoding constants of one slot in one segment: `value = offset + scale * q`. `min` and `step`
/// are the slot's clip range, `(qmin, qext)` its segment range in steps (`(0, 255)` without
/// segment ranges), `code` its width code. The encoder and the decoder share this arithmetic, so
/// the encoder measures exactly what the decoder returns.
#[inline(always)]
pub fn slot_params(min: f32, step: f32, qmin: u8, qext: u8, code: u8) -> (f32, f32) {
    let c = usize::from(code & 15);
    let (qmin, qext) = (f32::from(qmin), f32::from(qext));
    let offset = min + step * (qmin + qext * CODE_MID[c]);
    let scale = step * qext * CODE_SCALE[c];
    (offset, scale)
}

/// Quantises `v` for the constants of [`slot_params`] (the raw bits for width 32).
#[inline]
pub fn quantize_slot(v: f32, offset: f32, scale: f32, code: u8) -> u32 {
    match WIDTHS[usize::from(code & 15)] {
        0 => 0,
        32 => v.to_bits(),
        w => {
            if scale <= 0.0 {
                return 0;
            }
            let q = ((v - offset) / scale).round();
            q.clamp(0.0, ((1u64 << w) - 1) as f32) as u32
        }
    }
}

/// The value a quantised slot decodes to.
#[inline(always)]
pub fn dequantize_slot(q: u32, offset: f32, scale: f32, code: u8) -> f32 {
    if code == RAW_CODE {
        f32::from_bits(q)
    } else {
        offset + scale * q as f32
    }
}

/// The rotation a set of decoded slots stands for: 3 slots with a dropped component (rebuilt as
/// `sqrt(1 - sum of squares)`, non-negative), or 4 slots x, y, z, w (normalised).
#[inline(always)]
pub fn rotation_from_slots(slots: u8, drop: u8, c: [f32; 4]) -> Quat {
    if slots == 3 {
        let w2 = 1.0 - (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
        let d = w2.max(0.0).sqrt();
        // W is by far the most often dropped: test it first, out of the jump table.
        let q = if drop == 3 {
            Quat::from_xyzw(c[0], c[1], c[2], d)
        } else {
            match drop {
                0 => Quat::from_xyzw(d, c[0], c[1], c[2]),
                1 => Quat::from_xyzw(c[0], d, c[1], c[2]),
                2 => Quat::from_xyzw(c[0], c[1], d, c[2]),
                _ => Quat::from_xyzw(c[0], c[1], c[2], d),
            }
        };
        if w2 >= 0.0 { q } else { q.normalize() }
    } else {
        let q = Quat::from_xyzw(c[0], c[1], c[2], c[3]);
        let len2 = q.length_squared();
        if len2 > 1e-12 {
            q * len2.sqrt().recip()
        } else {
            Quat::IDENTITY
        }
    }
}

/// One segment of a [`Plan`]: per track (in track order), the width code of each slot, the
/// dropped component and the segment range of each slot; then the packed keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SegmentPlan {
    pub codes: Vec<[u8; 4]>,
    pub drops: Vec<u8>,
    pub ranges: Vec<[(u8, u8); 4]>,
    /// Bits of one key (every track's slots).
    pub key_bits: u32,
    /// The keys, back to back, bits packed LSB first, padded to a byte.
    pub data: Vec<u8>,
}

/// Everything the writer needs: the encoder's output.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub skeleton: Skeleton,
    pub frame_count: u32,
    pub fps: f32,
    pub unit_cm: f32,
    pub frame_step: u16,
    pub segment_frames: u32,
    pub key_count: u32,
    pub rotation_format: RotationFormat,
    pub has_scale: bool,
    pub segment_ranges: bool,
    /// Per joint: rotation, translation, scale.
    pub stores: Vec<[TrackStore; 3]>,
    /// Animated tracks: rotations, then translations, then scales, each by increasing joint.
    pub tracks: Vec<AnimatedTrack>,
    pub segments: Vec<SegmentPlan>,
}

/// Key count for a frame count and a frame step: keys at frames 0, step, 2 step, ... and the last frame.
pub fn key_count_for(frame_count: u32, frame_step: u32) -> u32 {
    if frame_count == 0 {
        return 0;
    }
    let last = frame_count - 1;
    last / frame_step + 1 + u32::from(!last.is_multiple_of(frame_step))
}

/// Original frame of key `k`.
#[inline]
pub fn key_frame(k: u32, frame_step: u32, frame_count: u32) -> u32 {
    (k.saturating_mul(frame_step)).min(frame_count.saturating_sub(1))
}

fn push_f32s(b: &mut Vec<u8>, v: &[f32]) {
    for x in v {
        b.extend_from_slice(&x.to_le_bytes());
    }
}

fn push_u16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn push_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}

/// Serialises a plan to `.tlc` bytes (see `docs/TLC_FORMAT.md`).
pub fn write_plan(p: &Plan) -> Vec<u8> {
    let j = p.skeleton.len();
    let count = |k: TrackKind| p.tracks.iter().filter(|t| t.kind == k).count();
    let data_len: usize = p.segments.iter().map(|s| s.data.len()).sum();
    let mut b = Vec::with_capacity(HEADER_BYTES + data_len + 64 * j);
    b.extend_from_slice(&MAGIC);
    push_u16(&mut b, VERSION);
    let mut flags = 0;
    if p.segment_ranges {
        flags |= FLAG_SEGMENT_RANGES;
    }
    if p.has_scale {
        flags |= FLAG_HAS_SCALE;
    }
    push_u16(&mut b, flags);
    push_u16(&mut b, j as u16);
    b.push(p.rotation_format.code());
    b.push(0);
    push_u32(&mut b, p.frame_count);
    push_f32s(&mut b, &[p.fps, p.unit_cm]);
    push_u16(&mut b, p.frame_step);
    push_u16(&mut b, 0);
    push_u32(&mut b, p.segment_frames);
    push_u32(&mut b, p.key_count);
    push_u32(&mut b, p.segments.len() as u32);
    push_u16(&mut b, p.tracks.len() as u16);
    let clip_name = name_prefix(&p.name);
    b.push(clip_name.len() as u8);
    b.push(0);
    let size_at = b.len();
    push_u32(&mut b, 0); // file size, patched below
    push_u16(&mut b, count(TrackKind::Rotation) as u16);
    push_u16(&mut b, count(TrackKind::Translation) as u16);
    let table_at = b.len();
    push_u32(&mut b, 0); // offset of the track table, patched below
    push_u32(&mut b, 0); // offset of the segment table, patched below
    debug_assert_eq!(b.len(), HEADER_BYTES);
    b.extend_from_slice(clip_name.as_bytes());
    for name in &p.skeleton.names {
        let name = name_prefix(name);
        b.push(name.len() as u8);
        b.extend_from_slice(name.as_bytes());
    }
    for parent in &p.skeleton.parents {
        push_u16(&mut b, parent.map_or(NO_PARENT, |x| x as u16));
    }
    push_u16(&mut b, p.skeleton.end_sites.len().min(0xFFFF) as u16);
    for e in p.skeleton.end_sites.iter().take(0xFFFF) {
        push_u16(&mut b, e.parent as u16);
        push_f32s(&mut b, &e.offset.to_array());
    }
    // Rest pose: every translation, then the rotations and scales that are not identity.
    for rest in &p.skeleton.rest {
        push_f32s(&mut b, &rest.translation.to_array());
    }
    let rest_rot: Vec<usize> = (0..j)
        .filter(|&i| p.skeleton.rest[i].rotation != Quat::IDENTITY)
        .collect();
    push_u16(&mut b, rest_rot.len() as u16);
    for &i in &rest_rot {
        push_u16(&mut b, i as u16);
        push_f32s(&mut b, &p.skeleton.rest[i].rotation.to_array());
    }
    let rest_scale: Vec<usize> = (0..j)
        .filter(|&i| p.skeleton.rest[i].scale != Vec3::ONE)
        .collect();
    push_u16(&mut b, rest_scale.len() as u16);
    for &i in &rest_scale {
        push_u16(&mut b, i as u16);
        push_f32s(&mut b, &p.skeleton.rest[i].scale.to_array());
    }
    // Constant tracks, per kind.
    for kind in 0..3 {
        let constants: Vec<(usize, [f32; 4])> = p
            .stores
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s[kind] {
                TrackStore::Constant(v) => Some((i, v)),
                _ => None,
            })
            .collect();
        push_u16(&mut b, constants.len() as u16);
        for (i, v) in constants {
            push_u16(&mut b, i as u16);
            push_f32s(&mut b, &v[..if kind == 0 { 4 } else { 3 }]);
        }
    }
    // Track table, kind by kind (see [`KindLayout`]).
    let table = b.len() as u32;
    b[table_at..table_at + 4].copy_from_slice(&table.to_le_bytes());
    let kinds: Vec<(KindLayout, Vec<usize>)> = TrackKind::ALL
        .iter()
        .map(|&k| {
            let idx = (0..p.tracks.len())
                .filter(|&i| p.tracks[i].kind == k)
                .collect();
            (KindLayout::new(k, p.rotation_format, p.segment_ranges), idx)
        })
        .collect();
    for (kl, idx) in &kinds {
        let start = b.len();
        b.resize(start + kl.table_bytes(idx.len()), 0);
        for (i, &t) in idx.iter().enumerate() {
            let f = kl.fields(i);
            let tr = &p.tracks[t];
            b[start + f.joint..start + f.joint + 2].copy_from_slice(&tr.joint.to_le_bytes());
            for s in 0..kl.slots {
                let (m, st) = (start + f.min + s * f.stride, start + f.step + s * f.stride);
                b[m..m + 4].copy_from_slice(&tr.min[s].to_le_bytes());
                b[st..st + 4].copy_from_slice(&tr.step[s].to_le_bytes());
            }
        }
        if kl.grouped {
            // Lanes past the last track: no joint.
            for i in idx.len()..kl.entries(idx.len()) * 4 {
                let f = kl.fields(i);
                b[start + f.joint..start + f.joint + 2].copy_from_slice(&NO_PARENT.to_le_bytes());
            }
        }
    }
    // Segment table, then the segments.
    let seg_table = b.len();
    b[table_at + 4..table_at + 8].copy_from_slice(&(seg_table as u32).to_le_bytes());
    let header_bytes: usize = kinds
        .iter()
        .map(|(kl, idx)| kl.segment_bytes(idx.len()))
        .sum();
    let mut at = seg_table + SEGMENT_ENTRY_BYTES * p.segments.len();
    for s in &p.segments {
        push_u32(&mut b, at as u32);
        push_u32(&mut b, s.key_bits);
        at += header_bytes + s.data.len();
    }
    for s in &p.segments {
        for (kl, idx) in &kinds {
            let start = b.len();
            b.resize(start + kl.segment_bytes(idx.len()), 0);
            if kl.slots == 0 {
                continue;
            }
            for (i, &t) in idx.iter().enumerate() {
                let f = kl.fields(i);
                let tr = &p.tracks[t];
                let c = s.codes[t];
                let fourth = if kl.slots == 4 {
                    c[3]
                } else if tr.drops_component() {
                    s.drops[t] & 3
                } else {
                    0
                };
                let word = u16::from(c[0])
                    | u16::from(c[1]) << 4
                    | u16::from(c[2]) << 8
                    | u16::from(fourth) << 12;
                b[start + f.code..start + f.code + 2].copy_from_slice(&word.to_le_bytes());
                if kl.ranges {
                    for slot in 0..kl.slots {
                        let (qmin, qext) = s.ranges[t][slot];
                        b[start + f.qmin + slot * f.qstride] = qmin;
                        b[start + f.qext + slot * f.qstride] = qext;
                    }
                }
            }
        }
        b.extend_from_slice(&s.data);
    }
    b.extend_from_slice(&[0; PADDING_BYTES]);
    let total = (b.len() + 4) as u32;
    b[size_at..size_at + 4].copy_from_slice(&total.to_le_bytes());
    let crc = crc32(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// Why a `.tlc` file was rejected. Offsets are byte offsets from the start of the file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TlcError {
    #[error("not a taglane compressed clip: expected magic \"TAGLNTLC\" at byte 0")]
    BadMagic,
    #[error("{}", version_message(*found))]
    UnsupportedVersion { found: u16 },
    /// A field or list that runs past the end of the data (`len`: the file's length while the
    /// header is read; once the size and the checksum matched, the end of the body): the file is
    /// cut short, or a count read before it says more than the file holds.
    #[error(
        "{what} at byte {offset} needs {needed} bytes, past the end of the data at byte {len}: expected the file to be that long (it is truncated) or the count before it to fit the file"
    )]
    Truncated {
        what: &'static str,
        offset: usize,
        needed: usize,
        len: usize,
    },
    #[error(
        "file size field (byte 48) says {expected} bytes but the file has {found}: expected the sizes to match (the file is truncated or padded)"
    )]
    SizeMismatch { expected: usize, found: usize },
    #[error(
        "checksum mismatch: the CRC-32 in the last 4 bytes is {stored:08x}, expected {computed:08x} computed over the rest (the file is corrupted)"
    )]
    Checksum { stored: u32, computed: u32 },
    #[error("invalid {what} at byte {offset}: {detail}")]
    Invalid {
        what: &'static str,
        offset: usize,
        detail: String,
    },
}

fn version_message(found: u16) -> String {
    let why = if found < OLDEST_VERSION {
        ": it was written by an older taglane, before the error metric and the in-between decoding changed; compress the source clip again"
    } else {
        ": it was written by a newer taglane"
    };
    format!(
        "format version {found} at byte 8 is not supported (this build reads versions {OLDEST_VERSION} to {VERSION}){why}"
    )
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], TlcError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end {
            Some(end) => {
                let s = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(TlcError::Truncated {
                what,
                offset: self.pos,
                needed: n,
                len: self.bytes.len(),
            }),
        }
    }
    fn u8(&mut self, what: &'static str) -> Result<u8, TlcError> {
        Ok(self.take(1, what)?[0])
    }
    fn u16(&mut self, what: &'static str) -> Result<u16, TlcError> {
        let s = self.take(2, what)?;
        Ok(u16::from_le_bytes([s[0], s[1]]))
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, TlcError> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn f32(&mut self, what: &'static str) -> Result<f32, TlcError> {
        let at = self.pos;
        let v = f32::from_bits(self.u32(what)?);
        if v.is_finite() {
            Ok(v)
        } else {
            Err(invalid(
                what,
                at,
                format!("expected a finite number, found {v}"),
            ))
        }
    }
    fn vec3(&mut self, what: &'static str) -> Result<Vec3, TlcError> {
        Ok(Vec3::new(self.f32(what)?, self.f32(what)?, self.f32(what)?))
    }
    fn quat(&mut self, what: &'static str) -> Result<Quat, TlcError> {
        let at = self.pos;
        let q = Quat::from_xyzw(
            self.f32(what)?,
            self.f32(what)?,
            self.f32(what)?,
            self.f32(what)?,
        );
        if (q.length() - 1.0).abs() > 1e-3 {
            return Err(invalid(
                what,
                at,
                format!("expected a unit quaternion, length is {}", q.length()),
            ));
        }
        Ok(q)
    }
    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }
    /// Checks that `count` entries of at least `each` bytes fit before reading them.
    fn room(&self, count: usize, each: usize, what: &'static str) -> Result<(), TlcError> {
        if count.saturating_mul(each) > self.remaining() {
            return Err(TlcError::Truncated {
                what,
                offset: self.pos,
                needed: count.saturating_mul(each),
                len: self.bytes.len(),
            });
        }
        Ok(())
    }
}

fn invalid(what: &'static str, offset: usize, detail: String) -> TlcError {
    TlcError::Invalid {
        what,
        offset,
        detail,
    }
}

/// [`Layout::static_lists`]: the rest rotations hold entries.
pub const STATIC_REST_ROTATIONS: u8 = 1;
/// [`Layout::static_lists`]: the constant rotations hold entries.
pub const STATIC_ROTATIONS: u8 = 2;
/// [`Layout::static_lists`]: the constant translations hold entries.
pub const STATIC_TRANSLATIONS: u8 = 4;
/// [`Layout::static_lists`]: the rest scales hold entries.
pub const STATIC_REST_SCALES: u8 = 8;
/// [`Layout::static_lists`]: the constant scales hold entries.
pub const STATIC_SCALES: u8 = 16;

/// Where everything is in a validated `.tlc` file: the fixed-size context the decoder keeps next
/// to the bytes (see [`CompressedClip::context_bytes`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    pub joint_count: u32,
    pub frame_count: u32,
    pub key_count: u32,
    pub segment_frames: u32,
    pub segment_count: u32,
    pub frame_step: u32,
    pub fps: f32,
    pub unit_cm: f32,
    pub rotation_format: RotationFormat,
    pub flags: u16,
    /// Which lists of the static pose hold entries ([`STATIC_REST_ROTATIONS`] and the other
    /// `STATIC_` bits), so that a sample runs no code for the empty ones.
    pub static_lists: u8,
    /// Which decoder of the animated tracks a sample takes on this CPU: asked of the CPU when
    /// the clip is loaded, never read from the file.
    pub decoder: super::decode::Decoder,
    /// The format version of the file as it was read: [`OLDEST_VERSION`] for a file converted at
    /// load (the bytes kept are then version [`VERSION`]'s), else [`VERSION`].
    pub file_version: u8,
    /// Animated rotation, translation and scale tracks.
    pub track_counts: [u32; 3],
    /// Bytes of every track's header in one segment (the same in every segment).
    pub segment_header_bytes: u32,
    /// Offsets (bytes from the start of the file).
    pub name_at: u32,
    pub joint_names_at: u32,
    pub parents_at: u32,
    pub end_sites_at: u32,
    pub rest_translations_at: u32,
    /// Count (u16) then entries.
    pub rest_rotations_at: u32,
    pub rest_scales_at: u32,
    /// Per kind: count (u16) then entries.
    pub constants_at: [u32; 3],
    /// Per kind: first entry in the track table.
    pub tracks_at: [u32; 3],
    pub segment_table_at: u32,
}

/// A compressed clip, ready to sample: the `.tlc` bytes and a [`Layout`]. See `decode.rs` for
/// sampling.
#[derive(Debug, Clone)]
pub struct CompressedClip {
    pub(crate) bytes: Vec<u8>,
    pub(crate) layout: Layout,
}

impl CompressedClip {
    /// Parses and validates a `.tlc` file. Never panics; every length is checked against the bytes
    /// present before anything is allocated from it, and everything the decoder will read is
    /// checked here, so sampling needs no check beyond the fixed [`Layout`].
    ///
    /// A version 2 file is validated as version 2 (so an error names its bytes), then rewritten
    /// as the version 3 file of the same size (each segment's `key_bits` moved from its block to
    /// the segment table; [`upgrade_v2`]) and checked again: the clip keeps version 3 bytes and
    /// decodes exactly as version 2's reader did.
    pub fn from_bytes(mut bytes: Vec<u8>) -> Result<Self, TlcError> {
        let (mut layout, version) = validate(&bytes)?;
        if version == OLDEST_VERSION {
            bytes = upgrade_v2(&bytes, &layout);
            layout = Layout {
                file_version: layout.file_version,
                ..validate(&bytes)?.0
            };
        }
        // The clip keeps exactly the file (resident bytes = file size + context).
        bytes.shrink_to_fit();
        Ok(Self { bytes, layout })
    }

    /// The `.tlc` file bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    /// The format version of the file this clip was read from: [`OLDEST_VERSION`] for a file
    /// converted at load (what [`Self::bytes`] holds is then the version [`VERSION`] file of the
    /// same size), else [`VERSION`].
    pub fn file_version(&self) -> u16 {
        u16::from(self.layout.file_version)
    }
    /// Compressed size in bytes (the whole file).
    pub fn size_bytes(&self) -> usize {
        self.bytes.len()
    }
    /// Bytes of the decoding context kept next to the file bytes: the [`Layout`] and the
    /// `Vec` that owns the bytes.
    pub const fn context_bytes() -> usize {
        std::mem::size_of::<Self>()
    }
    /// Memory a loaded clip holds: the file bytes (the allocation's capacity) plus the context.
    pub fn resident_bytes(&self) -> usize {
        self.bytes.capacity() + Self::context_bytes()
    }
    /// Where each section is.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    pub fn joint_count(&self) -> usize {
        self.layout.joint_count as usize
    }
    /// Frame count of the original clip.
    pub fn frame_count(&self) -> usize {
        self.layout.frame_count as usize
    }
    pub fn fps(&self) -> f32 {
        self.layout.fps
    }
    /// Centimetres per file unit.
    pub fn unit_cm(&self) -> f32 {
        self.layout.unit_cm
    }
    /// `(frame_count - 1) / fps`.
    pub fn duration_s(&self) -> f32 {
        (self.layout.frame_count - 1) as f32 / self.layout.fps
    }
    pub fn rotation_format(&self) -> RotationFormat {
        self.layout.rotation_format
    }
    pub fn has_scale(&self) -> bool {
        self.layout.flags & FLAG_HAS_SCALE != 0
    }
    pub fn frame_step(&self) -> u32 {
        self.layout.frame_step
    }
    pub fn segment_frames(&self) -> u32 {
        self.layout.segment_frames
    }
    pub fn segment_ranges(&self) -> bool {
        self.layout.flags & FLAG_SEGMENT_RANGES != 0
    }
    pub fn segment_count(&self) -> usize {
        self.layout.segment_count as usize
    }
    pub fn key_count(&self) -> usize {
        self.layout.key_count as usize
    }
    /// Number of animated tracks.
    pub fn animated_track_count(&self) -> usize {
        self.layout.track_counts.iter().sum::<u32>() as usize
    }

    /// The clip name.
    pub fn name(&self) -> &str {
        let at = self.layout.name_at as usize;
        let n = usize::from(self.bytes[46]);
        std::str::from_utf8(&self.bytes[at..at + n]).unwrap_or_default()
    }

    /// The skeleton (names, parents, rest pose, End Sites), parsed from the bytes (allocates; for
    /// tools, not needed to sample).
    pub fn skeleton(&self) -> Skeleton {
        let l = &self.layout;
        let n = self.joint_count();
        let mut c = Cursor {
            bytes: &self.bytes,
            pos: l.joint_names_at as usize,
        };
        // Validated at load: none of these reads can fail.
        let mut names = Vec::with_capacity(n);
        for _ in 0..n {
            let len = usize::from(c.u8("").unwrap_or(0));
            let s = c.take(len, "").unwrap_or_default();
            names.push(String::from_utf8_lossy(s).into_owned());
        }
        let parents = (0..n)
            .map(|_| match c.u16("").unwrap_or(NO_PARENT) {
                NO_PARENT => None,
                p => Some(usize::from(p)),
            })
            .collect();
        let ends = usize::from(c.u16("").unwrap_or(0));
        let end_sites = (0..ends)
            .map(|_| EndSite {
                parent: usize::from(c.u16("").unwrap_or(0)),
                offset: c.vec3("").unwrap_or_default(),
            })
            .collect();
        let mut rest: Vec<Transform> = (0..n)
            .map(|_| Transform {
                translation: c.vec3("").unwrap_or_default(),
                ..Transform::IDENTITY
            })
            .collect();
        for _ in 0..c.u16("").unwrap_or(0) {
            let j = usize::from(c.u16("").unwrap_or(0));
            let q = Quat::from_array(read4(&mut c));
            if let Some(r) = rest.get_mut(j) {
                r.rotation = q;
            }
        }
        for _ in 0..c.u16("").unwrap_or(0) {
            let j = usize::from(c.u16("").unwrap_or(0));
            let s = c.vec3("").unwrap_or(Vec3::ONE);
            if let Some(r) = rest.get_mut(j) {
                r.scale = s;
            }
        }
        Skeleton {
            names,
            parents,
            rest,
            end_sites,
        }
    }

    /// How each joint's rotation, translation and scale tracks are stored (allocates; for tools).
    pub fn track_stores(&self) -> Vec<[TrackStore; 3]> {
        let mut stores = vec![[TrackStore::Default; 3]; self.joint_count()];
        for (kind, &at) in self.layout.constants_at.iter().enumerate() {
            let mut c = Cursor {
                bytes: &self.bytes,
                pos: at as usize,
            };
            for _ in 0..c.u16("").unwrap_or(0) {
                let j = usize::from(c.u16("").unwrap_or(0));
                let v = if kind == 0 {
                    read4(&mut c)
                } else {
                    let v = c.vec3("").unwrap_or_default();
                    [v.x, v.y, v.z, 0.0]
                };
                if let Some(s) = stores.get_mut(j) {
                    s[kind] = TrackStore::Constant(v);
                }
            }
        }
        for t in self.animated_tracks() {
            if let Some(s) = stores.get_mut(usize::from(t.joint)) {
                s[t.kind as usize] = TrackStore::Animated;
            }
        }
        stores
    }

    /// The animated tracks in file order: rotations, translations, scales (allocates; for tools).
    pub fn animated_tracks(&self) -> Vec<AnimatedTrack> {
        let mut out = Vec::with_capacity(self.animated_track_count());
        for (kind, &k) in TrackKind::ALL.iter().enumerate() {
            for i in 0..self.layout.track_counts[kind] as usize {
                out.push(self.track_entry(k, i));
            }
        }
        out
    }

    /// How the tracks of `kind` are laid out.
    pub fn kind_layout(&self, kind: TrackKind) -> KindLayout {
        KindLayout::new(kind, self.layout.rotation_format, self.segment_ranges())
    }

    /// Track `i` of `kind` as the track table describes it.
    pub fn track_entry(&self, kind: TrackKind, i: usize) -> AnimatedTrack {
        let (slots, packed_bits) = track_shape(kind, self.layout.rotation_format);
        let kl = self.kind_layout(kind);
        let f = kl.fields(i);
        let at = self.layout.tracks_at[kind as usize] as usize;
        let (mut min, mut step) = ([0.0; 4], [0.0; 4]);
        for s in 0..kl.slots {
            min[s] = f32_at(&self.bytes, at + f.min + s * f.stride);
            step[s] = f32_at(&self.bytes, at + f.step + s * f.stride);
        }
        AnimatedTrack {
            joint: u16_at(&self.bytes, at + f.joint),
            kind,
            slots,
            packed_bits,
            min,
            step,
        }
    }

    /// Byte offset in segment `s`'s block of the headers of `kind`.
    pub(crate) fn kind_header_at(&self, s: usize, kind: TrackKind) -> usize {
        let mut at = self.segment_at(s);
        for (k, &tk) in TrackKind::ALL.iter().enumerate().take(kind as usize) {
            at += self
                .kind_layout(tk)
                .segment_bytes(self.layout.track_counts[k] as usize);
        }
        at
    }

    /// Track `i` of `kind` in segment `s`: width code of each slot, dropped component (or
    /// [`NO_DROP`]) and segment range of each slot.
    pub fn segment_track(
        &self,
        s: usize,
        kind: TrackKind,
        i: usize,
    ) -> ([u8; 4], u8, [(u8, u8); 4]) {
        let kl = self.kind_layout(kind);
        let f = kl.fields(i);
        let at = self.kind_header_at(s, kind);
        let mut ranges = [(0u8, 255u8); 4];
        if kl.slots == 0 {
            return ([0; 4], NO_DROP, ranges);
        }
        let word = u16_at(&self.bytes, at + f.code);
        let mut codes = [0u8; 4];
        for (i, c) in codes.iter_mut().enumerate().take(kl.slots) {
            *c = ((word >> (4 * i)) & 15) as u8;
        }
        let drop = if kind == TrackKind::Rotation && kl.slots == 3 {
            ((word >> 12) & 3) as u8
        } else {
            NO_DROP
        };
        if kl.ranges {
            for (slot, r) in ranges.iter_mut().enumerate().take(kl.slots) {
                let get = |o: usize| self.bytes.get(at + o + slot * f.qstride).copied();
                *r = (get(f.qmin).unwrap_or(0), get(f.qext).unwrap_or(0));
            }
        }
        (codes, drop, ranges)
    }

    /// Per animated track (file order) of segment `s`: the bit width of each slot (the packed
    /// bits of a smallest-three rotation) and the dropped component (allocates; for tools).
    pub fn segment_widths(&self, s: usize) -> Vec<([u8; 4], u8)> {
        let mut out = Vec::new();
        for (k, &kind) in TrackKind::ALL.iter().enumerate() {
            for i in 0..self.layout.track_counts[k] as usize {
                let t = self.track_entry(kind, i);
                if t.slots == 0 {
                    out.push(([t.packed_bits, 0, 0, 0], NO_DROP));
                    continue;
                }
                let (codes, drop, _) = self.segment_track(s, kind, i);
                let mut w = [0u8; 4];
                for slot in 0..usize::from(t.slots) {
                    w[slot] = WIDTHS[usize::from(codes[slot])];
                }
                out.push((w, drop));
            }
        }
        out
    }

    /// The segments with a slot stored as a raw float32 (width code 15), whose groups the vector
    /// decoders hand to the portable one (for tools and tests).
    pub fn segments_with_raw_slots(&self) -> Vec<usize> {
        (0..self.layout.segment_count as usize)
            .filter(|&s| {
                TrackKind::ALL.iter().enumerate().any(|(k, &kind)| {
                    (0..self.layout.track_counts[k] as usize).any(|i| {
                        let slots = usize::from(self.track_entry(kind, i).slots);
                        self.segment_track(s, kind, i).0[..slots].contains(&RAW_CODE)
                    })
                })
            })
            .collect()
    }

    /// Segment `s`'s table entry: the byte offset of its block (where its headers start) and its
    /// bits of one key, from one 8-byte read.
    #[inline(always)]
    pub(crate) fn segment_entry(&self, s: usize) -> (usize, usize) {
        let e = u64_at(
            &self.bytes,
            self.layout.segment_table_at as usize + SEGMENT_ENTRY_BYTES * s,
        );
        ((e & 0xFFFF_FFFF) as usize, (e >> 32) as usize)
    }

    /// Byte offset of segment `s`'s block (its first track header).
    #[inline(always)]
    pub(crate) fn segment_at(&self, s: usize) -> usize {
        self.segment_entry(s).0
    }
}

fn read4(c: &mut Cursor) -> [f32; 4] {
    [
        c.f32("").unwrap_or(0.0),
        c.f32("").unwrap_or(0.0),
        c.f32("").unwrap_or(0.0),
        c.f32("").unwrap_or(1.0),
    ]
}

/// Slots and packed bits of an animated track of `kind` in a file of rotation format `format`.
pub fn track_shape(kind: TrackKind, format: RotationFormat) -> (u8, u8) {
    match (kind, format.ranged_components()) {
        (TrackKind::Rotation, Some(n)) => (n as u8, 0),
        (TrackKind::Rotation, None) => (0, format.packed_bits().unwrap_or(32) as u8),
        _ => (3, 0),
    }
}

#[inline(always)]
pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
}

#[inline(always)]
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

#[inline(always)]
pub(crate) fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_bits(u32_at(b, at))
}

/// The 64 bits of `b` starting at byte `at`, little-endian (0 past the end; the padding before
/// the checksum keeps every read of valid key data inside the file).
#[inline(always)]
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    match b.get(at..at + 8) {
        Some(s) => u64::from_le_bytes(s.try_into().unwrap_or([0; 8])),
        None => 0,
    }
}

/// Checks every field of a `.tlc` file (see `docs/TLC_FORMAT.md`, "What the reader checks") and
/// returns where everything is.
fn validate(bytes: &[u8]) -> Result<(Layout, u16), TlcError> {
    let len = bytes.len();
    let max = crate::core::limits::MAX_TLC_FILE_BYTES;
    if len as u64 > max {
        return Err(invalid(
            "file size",
            0,
            crate::core::limits::size_message(len as u64, max),
        ));
    }
    let mut c = Cursor { bytes, pos: 0 };
    if c.take(8, "magic")? != MAGIC {
        return Err(TlcError::BadMagic);
    }
    let version = c.u16("version")?;
    if !(OLDEST_VERSION..=VERSION).contains(&version) {
        return Err(TlcError::UnsupportedVersion { found: version });
    }
    let flags = c.u16("flags")?;
    let joint_count = usize::from(c.u16("joint count")?);
    let rot_code = c.u8("rotation format")?;
    let reserved = c.u8("reserved byte")?;
    let frame_count = c.u32("frame count")?;
    let fps_at = c.pos;
    let fps = c.f32("fps")?;
    let unit_at = c.pos;
    let unit_cm = c.f32("unit_cm")?;
    let step_at = c.pos;
    let frame_step = u32::from(c.u16("frame step")?);
    let reserved2 = c.u16("reserved")?;
    let segf_at = c.pos;
    let segment_frames = c.u32("segment frames")?;
    let keys_at = c.pos;
    let key_count = c.u32("key count")?;
    let segs_at = c.pos;
    let segment_count = c.u32("segment count")?;
    let animated_count = usize::from(c.u16("animated track count")?);
    let name_len = usize::from(c.u8("name length")?);
    let reserved3 = c.u8("reserved")?;
    let size_at = c.pos;
    let file_size = c.u32("file size")? as usize;
    if file_size != len {
        return Err(TlcError::SizeMismatch {
            expected: file_size,
            found: len,
        });
    }
    let rot_count = usize::from(c.u16("rotation track count")?);
    let trans_count = usize::from(c.u16("translation track count")?);
    let table_field_at = c.pos;
    let table_at = c.u32("track table offset")? as usize;
    let segment_table_field_at = c.pos;
    let segment_table_at = c.u32("segment table offset")? as usize;
    if len < HEADER_BYTES + PADDING_BYTES + 4 {
        return Err(invalid(
            "file size",
            size_at,
            format!("{len} bytes is smaller than a header, padding and checksum"),
        ));
    }
    let stored = u32::from_le_bytes([
        bytes[len - 4],
        bytes[len - 3],
        bytes[len - 2],
        bytes[len - 1],
    ]);
    let computed = crc32(&bytes[..len - 4]);
    if stored != computed {
        return Err(TlcError::Checksum { stored, computed });
    }
    // From here on the body is what a writer wrote, but it is still validated field by field.
    let body_end = len - 4 - PADDING_BYTES;
    if bytes[body_end..len - 4].iter().any(|&b| b != 0) {
        return Err(invalid(
            "padding",
            body_end,
            "the 4 bytes before the checksum must be zero".into(),
        ));
    }
    c.bytes = &bytes[..body_end];
    if flags & !KNOWN_FLAGS != 0 {
        return Err(invalid(
            "flags",
            10,
            format!("unknown flag bits {:#06x}", flags & !KNOWN_FLAGS),
        ));
    }
    for (at, v) in [(15usize, u32::from(reserved)), (30, u32::from(reserved2))] {
        if v != 0 {
            return Err(invalid(
                "reserved field",
                at,
                format!("expected 0, found {v}"),
            ));
        }
    }
    if reserved3 != 0 {
        return Err(invalid(
            "reserved field",
            47,
            format!("expected 0, found {reserved3}"),
        ));
    }
    if joint_count == 0 {
        return Err(invalid(
            "joint count",
            12,
            "expected at least one joint".into(),
        ));
    }
    let rotation_format = RotationFormat::from_code(rot_code).ok_or_else(|| {
        invalid(
            "rotation format",
            14,
            format!("unknown code {rot_code}, expected 0..=3"),
        )
    })?;
    if frame_count == 0 {
        return Err(invalid(
            "frame count",
            16,
            "expected at least one frame".into(),
        ));
    }
    // Decompressing allocates frames x joints samples: bound them like an imported clip.
    use crate::core::limits::{MAX_FRAMES, MAX_JOINT_SAMPLES, MAX_JOINTS};
    if joint_count > MAX_JOINTS {
        return Err(invalid(
            "joint count",
            12,
            format!("expected at most {MAX_JOINTS} joints, found {joint_count}"),
        ));
    }
    if frame_count as usize > MAX_FRAMES || frame_count as usize * joint_count > MAX_JOINT_SAMPLES {
        return Err(invalid(
            "frame count",
            16,
            format!(
                "expected at most {MAX_FRAMES} frames and {MAX_JOINT_SAMPLES} joint samples, found {frame_count} frames x {joint_count} joints"
            ),
        ));
    }
    // As a take's rate and unit are bounded on import: a clip decompressed from this file is one
    // that taglane reads back.
    use crate::core::limits::{MAX_FPS, MIN_FPS};
    if !(MIN_FPS..=MAX_FPS).contains(&f64::from(fps)) {
        return Err(invalid(
            "fps",
            fps_at,
            format!("expected {MIN_FPS} to {MAX_FPS} frames per second, found {fps}"),
        ));
    }
    if !crate::core::limits::unit_cm_ok(f64::from(unit_cm)) {
        return Err(invalid(
            "unit_cm",
            unit_at,
            crate::core::limits::unit_cm_message(f64::from(unit_cm)),
        ));
    }
    if frame_step == 0 {
        return Err(invalid("frame step", step_at, "expected at least 1".into()));
    }
    if segment_frames == 0 {
        return Err(invalid(
            "segment frames",
            segf_at,
            "expected at least 1".into(),
        ));
    }
    let expect_keys = key_count_for(frame_count, frame_step);
    if key_count != expect_keys {
        return Err(invalid(
            "key count",
            keys_at,
            format!(
                "expected {expect_keys} for {frame_count} frames at step {frame_step}, found {key_count}"
            ),
        ));
    }
    let expect_segs = if animated_count == 0 {
        0
    } else {
        key_count.div_ceil(segment_frames)
    };
    if segment_count != expect_segs {
        return Err(invalid(
            "segment count",
            segs_at,
            format!(
                "expected {expect_segs} ({key_count} keys, {segment_frames} per segment, {animated_count} animated tracks), found {segment_count}"
            ),
        ));
    }
    if rot_count + trans_count > animated_count {
        return Err(invalid(
            "rotation track count",
            52,
            format!(
                "{rot_count} rotation and {trans_count} translation tracks exceed the {animated_count} animated tracks"
            ),
        ));
    }
    let track_counts = [
        rot_count as u32,
        trans_count as u32,
        (animated_count - rot_count - trans_count) as u32,
    ];
    let name_at = c.pos;
    std::str::from_utf8(c.take(name_len, "clip name")?)
        .map_err(|e| invalid("clip name", name_at, format!("not UTF-8: {e}")))?;
    // Each joint needs at least 1 (name length) + 2 (parent) + 12 (rest translation) bytes: check
    // before reading them.
    c.room(joint_count, 15, "joint tables")?;
    let joint_names_at = c.pos;
    for _ in 0..joint_count {
        let n = usize::from(c.u8("joint name length")?);
        let at = c.pos;
        std::str::from_utf8(c.take(n, "joint name")?)
            .map_err(|e| invalid("joint name", at, format!("not UTF-8: {e}")))?;
    }
    let parents_at = c.pos;
    for i in 0..joint_count {
        let at = c.pos;
        let p = c.u16("parent index")?;
        if p != NO_PARENT && usize::from(p) >= i {
            return Err(invalid(
                "parent index",
                at,
                format!("joint {i} has parent {p}, expected a lower index or {NO_PARENT:#x}"),
            ));
        }
    }
    let end_sites_at = c.pos;
    let end_count = usize::from(c.u16("End Site count")?);
    c.room(end_count, 14, "End Sites")?;
    for _ in 0..end_count {
        let at = c.pos;
        let parent = usize::from(c.u16("End Site parent")?);
        if parent >= joint_count {
            return Err(invalid(
                "End Site parent",
                at,
                format!("joint {parent} does not exist ({joint_count} joints)"),
            ));
        }
        c.vec3("End Site offset")?;
    }
    let rest_translations_at = c.pos;
    for _ in 0..joint_count {
        c.vec3("rest translation")?;
    }
    // Every (joint, kind) has one store: rest, constant or animated. `seen` marks the non-rest
    // ones (3 bits per joint) so a track cannot be both.
    let mut seen = vec![0u8; joint_count];
    let rest_rotations_at = c.pos;
    joint_list(&mut c, joint_count, 16, "rest rotation", None, |c| {
        c.quat("rest rotation").map(|_| ())
    })?;
    let rest_scales_at = c.pos;
    joint_list(&mut c, joint_count, 12, "rest scale", None, |c| {
        c.vec3("rest scale").map(|_| ())
    })?;
    let mut constants_at = [0u32; 3];
    for kind in 0..3 {
        constants_at[kind] = c.pos as u32;
        let (each, what) = if kind == 0 {
            (16, "constant rotation")
        } else {
            (12, "constant value")
        };
        joint_list(
            &mut c,
            joint_count,
            each,
            what,
            Some((&mut seen, kind)),
            |c| {
                if kind == 0 {
                    c.quat(what).map(|_| ())
                } else {
                    c.vec3(what).map(|_| ())
                }
            },
        )?;
    }
    if c.pos != table_at {
        return Err(invalid(
            "track table offset",
            table_field_at,
            format!("expected {}, found {table_at}", c.pos),
        ));
    }
    let mut tracks_at_kind = [0u32; 3];
    let mut segment_header_bytes = 0usize;
    let segment_ranges = flags & FLAG_SEGMENT_RANGES != 0;
    for (kind, &k) in TrackKind::ALL.iter().enumerate() {
        let start = c.pos;
        tracks_at_kind[kind] = start as u32;
        let kl = KindLayout::new(k, rotation_format, segment_ranges);
        let count = track_counts[kind] as usize;
        let table = c.take(kl.table_bytes(count), "track table")?;
        let mut last: Option<usize> = None;
        for i in 0..kl.entries(count) * if kl.grouped { 4 } else { 1 } {
            let f = kl.fields(i);
            let j = usize::from(u16::from_le_bytes([table[f.joint], table[f.joint + 1]]));
            let f32_at = |at: usize| {
                f32::from_le_bytes([table[at], table[at + 1], table[at + 2], table[at + 3]])
            };
            if i >= count {
                // A lane past the last track of a group: no joint, zero ranges.
                let zero = (0..kl.slots).all(|s| {
                    f32_at(f.min + s * f.stride) == 0.0 && f32_at(f.step + s * f.stride) == 0.0
                });
                if j != usize::from(NO_PARENT) || !zero {
                    return Err(invalid(
                        "track table",
                        start + f.joint,
                        format!(
                            "unused lane {i} of the last group must have joint 0xffff and zero ranges"
                        ),
                    ));
                }
                continue;
            }
            if j >= joint_count || last.is_some_and(|l| j <= l) {
                return Err(invalid(
                    "track joint",
                    start + f.joint,
                    format!(
                        "joint {j}: expected increasing joints below {joint_count} within a kind"
                    ),
                ));
            }
            if seen[j] & (1 << kind) != 0 {
                return Err(invalid(
                    "track joint",
                    start + f.joint,
                    format!("joint {j}'s {k:?} track is both constant and animated"),
                ));
            }
            seen[j] |= 1 << kind;
            last = Some(j);
            for s in 0..kl.slots {
                for (what, at) in [
                    ("track range minimum", f.min + s * f.stride),
                    ("track range step", f.step + s * f.stride),
                ] {
                    let v = f32_at(at);
                    if !v.is_finite() || (what == "track range step" && v < 0.0) {
                        return Err(invalid(
                            what,
                            start + at,
                            format!("expected a finite number (a step >= 0), found {v}"),
                        ));
                    }
                }
                // Every value the range decodes to is finite: its top too (a step near
                // f32::MAX passes the check above and decodes to infinity).
                let (min, step) = (f32_at(f.min + s * f.stride), f32_at(f.step + s * f.stride));
                let top = min + step * 255.0;
                if !top.is_finite() {
                    return Err(invalid(
                        "track range step",
                        start + f.step + s * f.stride,
                        format!(
                            "expected a range with a finite top (minimum {min} + 255 x step {step}), found {top}"
                        ),
                    ));
                }
            }
        }
        segment_header_bytes += kl.segment_bytes(count);
    }
    drop(seen);
    if c.pos != segment_table_at {
        return Err(invalid(
            "segment table offset",
            segment_table_field_at,
            format!("expected {}, found {segment_table_at}", c.pos),
        ));
    }
    let listed = |at: usize, bit: u8| if u16_at(c.bytes, at) > 0 { bit } else { 0 };
    let static_lists = listed(rest_rotations_at, STATIC_REST_ROTATIONS)
        | listed(constants_at[0] as usize, STATIC_ROTATIONS)
        | listed(constants_at[1] as usize, STATIC_TRANSLATIONS)
        | listed(rest_scales_at, STATIC_REST_SCALES)
        | listed(constants_at[2] as usize, STATIC_SCALES);
    let layout = Layout {
        joint_count: joint_count as u32,
        frame_count,
        key_count,
        segment_frames,
        segment_count,
        frame_step,
        fps,
        unit_cm,
        rotation_format,
        flags,
        static_lists,
        decoder: super::decode::Decoder::detect(),
        // At most VERSION (checked above).
        file_version: version as u8,
        track_counts,
        segment_header_bytes: segment_header_bytes as u32,
        name_at: name_at as u32,
        joint_names_at: joint_names_at as u32,
        parents_at: parents_at as u32,
        end_sites_at: end_sites_at as u32,
        rest_translations_at: rest_translations_at as u32,
        rest_rotations_at: rest_rotations_at as u32,
        rest_scales_at: rest_scales_at as u32,
        constants_at,
        tracks_at: tracks_at_kind,
        segment_table_at: segment_table_at as u32,
    };
    validate_segments(&mut c, &layout, version)?;
    if c.remaining() != 0 {
        return Err(invalid(
            "segment data",
            c.pos,
            format!("{} unexpected bytes after the last segment", c.remaining()),
        ));
    }
    Ok((layout, version))
}

/// The version 3 file of a validated version 2 file (`l` its layout): the same bytes up to the
/// segment table; the table's entries widened to `(offset, key_bits)`, each `key_bits` taken from
/// the first 4 bytes of its block (which v3 blocks do not have); the blocks, padding and a new
/// checksum. The two versions have the same size (the table grows by 4 bytes a segment, each
/// block shrinks by 4), and every offset before the table is unchanged. Reads past the end give
/// zeros and short copies, which the second validation refuses, so a file the first validation
/// let through by mistake cannot panic here.
fn upgrade_v2(v2: &[u8], l: &Layout) -> Vec<u8> {
    let n = l.segment_count as usize;
    let table = l.segment_table_at as usize;
    let body_end = v2.len().saturating_sub(4);
    let mut b = Vec::with_capacity(v2.len());
    b.extend_from_slice(v2.get(..table).unwrap_or_default());
    if let Some(v) = b.get_mut(8..10) {
        v.copy_from_slice(&VERSION.to_le_bytes());
    }
    let block_v2 = |s: usize| u32_at(v2, table + 4 * s) as usize;
    // Block `s` starts 4 bytes a segment later for the wider table and 4 bytes a block earlier
    // without the key bits of the blocks before it and its own.
    for s in 0..n {
        push_u32(&mut b, (block_v2(s) + 4 * n - 4 * s) as u32);
        push_u32(&mut b, u32_at(v2, block_v2(s)));
    }
    for s in 0..n {
        let end = if s + 1 < n { block_v2(s + 1) } else { body_end };
        b.extend_from_slice(v2.get(block_v2(s) + 4..end).unwrap_or_default());
    }
    if n == 0 {
        b.extend_from_slice(v2.get(table..body_end).unwrap_or_default());
    }
    let crc = crc32(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// A list of `count (u16)` entries `(joint u16, value)` with strictly increasing joints. `each` is
/// the value's size. With `seen`, marks each joint's `kind` bit.
fn joint_list(
    c: &mut Cursor,
    joint_count: usize,
    each: usize,
    what: &'static str,
    mut seen: Option<(&mut [u8], usize)>,
    mut value: impl FnMut(&mut Cursor) -> Result<(), TlcError>,
) -> Result<(), TlcError> {
    let count = usize::from(c.u16(what)?);
    c.room(count, 2 + each, what)?;
    let mut last: Option<usize> = None;
    for _ in 0..count {
        let at = c.pos;
        let j = usize::from(c.u16(what)?);
        if j >= joint_count || last.is_some_and(|l| j <= l) {
            return Err(invalid(
                what,
                at,
                format!("joint {j}: expected increasing joints below {joint_count}"),
            ));
        }
        if let Some((seen, kind)) = seen.as_mut() {
            seen[j] |= 1 << *kind;
        }
        last = Some(j);
        value(c)?;
    }
    Ok(())
}

/// The segment table and every segment block: offsets, key bits, width codes, drops, ranges and
/// data lengths. In a `version` 2 file a table entry is the block's offset alone and the block
/// starts with its key bits; in version 3 the entry holds both.
fn validate_segments(c: &mut Cursor, l: &Layout, version: u16) -> Result<(), TlcError> {
    let segments = l.segment_count as usize;
    let table_at = c.pos;
    let entry_bytes = if version == OLDEST_VERSION {
        4
    } else {
        SEGMENT_ENTRY_BYTES
    };
    // Every segment takes at least 8 bytes (its offset and its key bits): bound the count by the
    // bytes present.
    c.room(segments, 8, "segment table")?;
    c.pos += entry_bytes * segments;
    let bytes = c.bytes;
    let ranges = l.flags & FLAG_SEGMENT_RANGES != 0;
    let kinds = TrackKind::ALL.map(|k| {
        let (_, packed_bits) = track_shape(k, l.rotation_format);
        (
            k,
            KindLayout::new(k, l.rotation_format, ranges),
            packed_bits,
        )
    });
    for s in 0..segments {
        let entry_at = table_at + entry_bytes * s;
        let at = u32_at(bytes, entry_at) as usize;
        if at != c.pos {
            return Err(invalid(
                "segment offset",
                entry_at,
                format!("segment {s}: expected {}, found {at}", c.pos),
            ));
        }
        let (key_bits_at, key_bits) = if version == OLDEST_VERSION {
            (c.pos, c.u32("segment key bits")?)
        } else {
            (entry_at + 4, u32_at(bytes, entry_at + 4))
        };
        let mut bits = 0u64;
        // A key's slots in the order of its bits: their widths, and whether each is a raw float32.
        let mut slots: Vec<(u32, bool)> = Vec::new();
        for (kind, (k, kl, packed_bits)) in kinds.iter().enumerate() {
            let count = l.track_counts[kind] as usize;
            let header_at = c.pos;
            let header = c.take(kl.segment_bytes(count), "segment header")?;
            if kl.slots == 0 {
                bits += u64::from(*packed_bits) * count as u64;
                slots.extend(std::iter::repeat_n((u32::from(*packed_bits), false), count));
                continue;
            }
            let lanes = kl.entries(count) * if kl.grouped { 4 } else { 1 };
            for i in 0..lanes {
                let f = kl.fields(i);
                let word = u16::from_le_bytes([header[f.code], header[f.code + 1]]);
                let range = |slot: usize| {
                    if ranges {
                        (
                            header[f.qmin + slot * f.qstride],
                            header[f.qext + slot * f.qstride],
                        )
                    } else {
                        (0, 255)
                    }
                };
                if i >= count {
                    if word != 0 || (0..kl.slots).any(|slot| ranges && range(slot) != (0, 0)) {
                        return Err(invalid(
                            "segment header",
                            header_at + f.code,
                            format!("segment {s}: unused lane {i} must be all zero"),
                        ));
                    }
                    continue;
                }
                for slot in 0..kl.slots {
                    let code = ((word >> (4 * slot)) & 15) as u8;
                    bits += u64::from(WIDTHS[usize::from(code)]);
                    slots.push((u32::from(WIDTHS[usize::from(code)]), code == RAW_CODE));
                    let (qmin, qext) = range(slot);
                    if u16::from(qmin) + u16::from(qext) > 255 {
                        return Err(invalid(
                            "segment range",
                            header_at + f.qmin + slot * f.qstride,
                            format!("segment {s}: min {qmin} + extent {qext} exceeds 255"),
                        ));
                    }
                }
                let drops = *k == TrackKind::Rotation && kl.slots == 3;
                if kl.slots == 3 && !drops && word >> 12 != 0 {
                    return Err(invalid(
                        "segment header",
                        header_at + f.code,
                        format!("segment {s}: reserved bits 12-15 are not zero"),
                    ));
                }
                if drops && word >> 14 != 0 {
                    return Err(invalid(
                        "segment header",
                        header_at + f.code,
                        format!("segment {s}: reserved bits 14-15 are not zero"),
                    ));
                }
            }
        }
        if bits != u64::from(key_bits) {
            return Err(invalid(
                "segment key bits",
                key_bits_at,
                format!("segment {s}: the widths add up to {bits} bits, found {key_bits}"),
            ));
        }
        let start_key = s as u64 * u64::from(l.segment_frames);
        let keys = (u64::from(l.key_count) - start_key).min(u64::from(l.segment_frames));
        let data_bytes = (bits * keys).div_ceil(8);
        c.room(1, data_bytes as usize, "segment data")?;
        if slots.iter().any(|&(_, raw)| raw) {
            check_raw_slots(bytes, c.pos, s, start_key, keys, bits, &slots)?;
        }
        c.pos += data_bytes as usize;
    }
    Ok(())
}

/// The largest magnitude a raw float32 slot may hold: half of `f32::MAX`, so that the difference
/// of two neighbouring keys (the in-between lerp) stays finite.
const RAW_LIMIT: f32 = f32::MAX / 2.0;

/// Every raw float32 slot of the `keys` keys of segment `s` (data at byte `data_at`, `bits` a key,
/// its slots `slots` in order) holds a finite value of at most [`RAW_LIMIT`]: the decoders pass
/// raw values through, so a NaN there decoded to NaN poses (and a BVH written with them).
fn check_raw_slots(
    bytes: &[u8],
    data_at: usize,
    s: usize,
    start_key: u64,
    keys: u64,
    bits: u64,
    slots: &[(u32, bool)],
) -> Result<(), TlcError> {
    for k in 0..keys as usize {
        let mut bit = data_at * 8 + k * bits as usize;
        for &(w, raw) in slots {
            if raw {
                // Five bytes at most (`read_bits` reads eight, past the end of the last key).
                let at = bit / 8;
                let word = (0..5).fold(0u64, |w, i| {
                    w | u64::from(bytes.get(at + i).copied().unwrap_or(0)) << (8 * i)
                });
                let v = f32::from_bits((word >> (bit % 8)) as u32);
                if !(v.is_finite() && v.abs() <= RAW_LIMIT) {
                    return Err(invalid(
                        "segment data",
                        bit / 8,
                        format!(
                            "segment {s}, key {}: a raw float32 slot holds {v}, expected a finite value of at most {RAW_LIMIT:e} in magnitude",
                            start_key + k as u64
                        ),
                    ));
                }
            }
            bit += w as usize;
        }
    }
    Ok(())
}

/// The longest start of `name` that fits a name's one length byte (255 bytes), cut between
/// characters so that it stays UTF-8.
fn name_prefix(name: &str) -> &str {
    let mut end = name.len().min(255);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed context a loaded clip keeps next to its bytes, as docs/COMPRESSION.md and
    /// docs/PERFORMANCE.md state it (64-bit targets).
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn the_context_is_136_bytes() {
        assert_eq!(CompressedClip::context_bytes(), 136);
    }

    #[test]
    fn width_tables() {
        for c in 0..16u8 {
            let w = WIDTHS[usize::from(c)];
            assert_eq!(CODE_MASK[usize::from(c)], (1u64 << w) - 1);
            if (1..32).contains(&w) {
                assert_eq!(CODE_SCALE[usize::from(c)], 1.0 / ((1u64 << w) - 1) as f32);
            }
        }
        // Width 0 decodes the middle of the segment range; the top of a width decodes its top.
        let (o, s) = slot_params(1.0, 0.5, 10, 20, 0);
        assert_eq!((o, s), (1.0 + 0.5 * (10.0 + 10.0), 0.0));
        let (o, s) = slot_params(1.0, 0.5, 10, 20, 6); // 8 bits
        assert!((dequantize_slot(255, o, s, 6) - (1.0 + 0.5 * 30.0)).abs() < 1e-5);
        assert_eq!(dequantize_slot(0, o, s, 6), 6.0);
        assert_eq!(quantize_slot(-3.0, o, s, 6), 0);
        assert_eq!(quantize_slot(100.0, o, s, 6), 255);
        assert_eq!(
            dequantize_slot(quantize_slot(1.25, 0.0, 0.0, RAW_CODE), 0.0, 0.0, RAW_CODE),
            1.25
        );
    }

    /// A clip name longer than its length byte is cut between characters, so the file stays
    /// readable (a joint name that long is refused by the encoder, naming it).
    #[test]
    fn long_names_are_cut_between_characters() {
        assert_eq!(name_prefix("walk"), "walk");
        let long = "é".repeat(200); // 400 bytes
        assert_eq!(name_prefix(&long), "é".repeat(127));
        let mut clip = crate::core::compress::synth::synthetic_clip(3, 10, 30.0, 7);
        clip.name = long.clone(); // byte 255 is inside a character
        let r = crate::core::compress::compress(
            &clip,
            &crate::core::compress::CompressSettings::auto(0.01),
        )
        .expect("compresses");
        let back = CompressedClip::from_bytes(r.clip.bytes().to_vec()).unwrap();
        assert_eq!(back.name(), "é".repeat(127));
    }

    #[test]
    fn older_and_newer_versions_are_named() {
        let older = TlcError::UnsupportedVersion { found: 1 }.to_string();
        assert!(
            older.contains("version 1 at byte 8 is not supported"),
            "{older}"
        );
        assert!(older.contains("reads versions 2 to 3"), "{older}");
        assert!(older.contains("compress the source clip again"), "{older}");
        let newer = TlcError::UnsupportedVersion { found: 4 }.to_string();
        assert!(newer.contains("newer"), "{newer}");
    }
}
