//! The `.tlc` compressed clip: writer, validating reader and decoder (random-access sampling).
//!
//! The byte layout is documented field by field in `docs/TLC_FORMAT.md`. The encoder builds a
//! [`Plan`], serialises it with [`write_plan`], and reads the bytes back with
//! [`CompressedClip::from_bytes`]: every decoded value the encoder measures comes from the same
//! reader and decoder the user runs.
// Parallel per-joint / per-component arrays are indexed together; index loops read clearer.
#![allow(clippy::needless_range_loop)]

use glam::{Quat, Vec3, Vec4};

use super::bits::{crc32, max_q, read_bits};
use super::quat_pack::unpack_smallest_three;
use super::settings::{RotationFormat, WIDTHS};
use crate::core::anim::skeleton::EndSite;
use crate::core::anim::{Skeleton, Transform};

/// File magic: the first 8 bytes of every `.tlc` file.
pub const MAGIC: [u8; 8] = *b"TAGLNTLC";
/// Format version written by this build; the reader accepts exactly this version.
pub const VERSION: u16 = 1;
/// Size of the fixed header in bytes.
pub const HEADER_BYTES: usize = 52;
/// Header flag: per-segment ranges are present.
pub const FLAG_SEGMENT_RANGES: u16 = 1;
/// Header flag: the clip has non-unit scale (the metric uses the Z vertex too).
pub const FLAG_HAS_SCALE: u16 = 2;
const KNOWN_FLAGS: u16 = FLAG_SEGMENT_RANGES | FLAG_HAS_SCALE;
/// `parent` value of a root joint.
pub const NO_PARENT: u16 = 0xFFFF;

/// Rotation, translation, scale: the three tracks of a joint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrackKind {
    Rotation = 0,
    Translation = 1,
    Scale = 2,
}

/// How one track is stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TrackStore {
    /// Equal to the rest pose: not stored.
    Default,
    /// One value for the whole clip (rotation x, y, z, w; translation/scale x, y, z).
    Constant([f32; 4]),
    /// Stored per key in the data block.
    Animated,
}

impl TrackStore {
    fn code(&self) -> u8 {
        match self {
            TrackStore::Default => 0,
            TrackStore::Constant(_) => 1,
            TrackStore::Animated => 2,
        }
    }
}

/// An animated track: its joint and kind, and its per-clip range per component.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnimatedTrack {
    pub joint: u16,
    pub kind: TrackKind,
    /// Range-reduced components per key (3 or 4), or 0 for a smallest-three rotation.
    pub comps: u8,
    /// Bits per key of a smallest-three rotation (32 or 48), else 0.
    pub packed_bits: u8,
    /// Per-clip range of each quaternion component x, y, z, w (drop-W and full rotations) or of
    /// x, y, z (translations, scales).
    pub clip_min: [f32; 4],
    pub clip_ext: [f32; 4],
}

impl AnimatedTrack {
    /// True for a drop-W rotation: 3 stored components, the dropped one chosen per segment.
    #[inline]
    pub fn drops_component(&self) -> bool {
        self.kind == TrackKind::Rotation && self.comps == 3
    }
    /// Number of per-clip ranges stored for the track.
    #[inline]
    pub fn range_comps(&self) -> usize {
        if self.drops_component() {
            4
        } else {
            usize::from(self.comps)
        }
    }
}

/// `drop` value of a track that drops no component.
pub const NO_DROP: u8 = 4;

/// The quaternion components kept (in order) when component `drop` is dropped; for tracks that
/// drop nothing, the identity mapping.
#[inline(always)]
pub fn kept_components(drop: u8) -> [usize; 4] {
    match drop {
        0 => [1, 2, 3, 0],
        1 => [0, 2, 3, 1],
        2 => [0, 1, 3, 2],
        _ => [0, 1, 2, 3],
    }
}

/// Decoding constants of one ranged track in one segment: `value = offset + scale * q`.
///
/// Built once at load for every (segment, track), so sampling does no header work: the decoder
/// walks one segment's slice of these in track order.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SegTrack {
    pub width: u8,
    /// Dropped quaternion component (0 x, 1 y, 2 z, 3 w) or [`NO_DROP`].
    pub drop: u8,
    /// How the decoder reads the track in this segment: one of the `OP_*` codes.
    pub op: u8,
    /// The track's joint (the output slot it writes).
    pub joint: u16,
    /// The track's number (index into the animated tracks).
    pub track: u16,
    /// `2^width - 1` for the fast paths (components of at most 16 bits), else 0.
    pub mask: u32,
    /// Per stored slot (kept components in order).
    pub offset: [f32; 4],
    pub scale: [f32; 4],
    /// Bit offset of this track inside one key of the segment (the per-bone offsets).
    pub bit_in_key: u32,
}

/// [`SegTrack::op`]: any track the fast paths do not cover (raw float32 components, full
/// quaternions, smallest-three packings); read component by component.
pub const OP_GENERAL: u8 = 0;
/// [`SegTrack::op`]: a drop-W rotation with components of at most 16 bits (one 64-bit read per
/// key), whose consecutive keys in the segment never have stored parts pointing apart (negative
/// dot), so in-segment interpolation needs no shortest-path test (checked at load).
pub const OP_ROTATION3: u8 = 1;
/// [`SegTrack::op`]: as [`OP_ROTATION3`], but some pair of consecutive keys of the segment has
/// stored parts pointing apart: in-segment interpolation tests the dot of each pair.
pub const OP_ROTATION3_CHECKED: u8 = 4;
/// [`SegTrack::op`]: a translation with components of at most 16 bits (one 64-bit read per key).
pub const OP_TRANSLATION3: u8 = 2;
/// [`SegTrack::op`]: a scale with components of at most 16 bits (one 64-bit read per key).
pub const OP_SCALE3: u8 = 3;

/// The fast-path op of a track with `comps` stored components of `width` bits, or [`OP_GENERAL`].
/// Three components of at most 16 bits plus a bit shift of at most 7 fit one 64-bit word.
fn track_op(track: &AnimatedTrack, width: u8) -> u8 {
    if track.comps != 3 || width > 16 {
        return OP_GENERAL;
    }
    match track.kind {
        TrackKind::Rotation => OP_ROTATION3,
        TrackKind::Translation => OP_TRANSLATION3,
        TrackKind::Scale => OP_SCALE3,
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct SegmentInfo {
    start_key: u32,
    /// Absolute bit position of the segment's first key in `data`.
    data_bit: usize,
    key_bits: u32,
    /// The segment's [`SegTrack`]s are grouped by op (see [`group_by_op`]): ends of the
    /// [`OP_ROTATION3`], [`OP_TRANSLATION3`], [`OP_SCALE3`] and [`OP_ROTATION3_CHECKED`] groups;
    /// the [`OP_GENERAL`] group runs to the end.
    group_ends: [u16; 4],
}

/// Decoding constants of one component: segment range `[min, min + ext]` (exact f32 arithmetic
/// shared by the encoder and the decoder).
#[inline]
pub fn component_params(
    clip_min: f32,
    clip_ext: f32,
    range: Option<(u8, u8)>,
    width: u8,
) -> (f32, f32) {
    let (min, ext) = match range {
        Some((qmin, qext)) => (
            clip_min + clip_ext * (f32::from(qmin) / 255.0),
            clip_ext * (f32::from(qext) / 255.0),
        ),
        None => (clip_min, clip_ext),
    };
    match width {
        0 => (min + ext * 0.5, 0.0),
        32 => (0.0, 0.0),
        w => (min, ext / max_q(u32::from(w))),
    }
}

/// Quantises `v` for the constants of [`component_params`] (the raw bits for width 32).
#[inline]
pub fn quantize_component(v: f32, offset: f32, scale: f32, width: u8) -> u32 {
    match width {
        0 => 0,
        32 => v.to_bits(),
        w => {
            if scale <= 0.0 {
                return 0;
            }
            let q = ((v - offset) / scale).round();
            q.clamp(0.0, max_q(u32::from(w))) as u32
        }
    }
}

/// The value a quantised component decodes to.
#[inline(always)]
pub fn dequantize_component(q: u32, offset: f32, scale: f32, width: u8) -> f32 {
    if width == 32 {
        f32::from_bits(q)
    } else {
        offset + scale * q as f32
    }
}

/// The rotation a decoded set of stored slots stands for: 3 slots with a dropped component
/// (rebuilt as `sqrt(1 - sum of squares)`, non-negative), or 4 slots x, y, z, w.
#[inline(always)]
pub fn rotation_from_components(comps: u8, drop: u8, c: [f32; 4]) -> Quat {
    if comps == 3 {
        // The same arithmetic as `from_drop_w` (and `kept_components` for the slot order).
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
    pub tracks: Vec<AnimatedTrack>,
    /// Segment-major, one per (segment, ranged track): width (bits, one of [`WIDTHS`]).
    pub widths: Vec<u8>,
    /// Segment-major, one per (segment, ranged track): (qmin, qext) per stored slot.
    pub ranges: Vec<[(u8, u8); 4]>,
    /// Segment-major, one per (segment, ranged track): dropped component or [`NO_DROP`].
    pub drops: Vec<u8>,
    /// The data block: each segment byte-aligned, keys back to back, tracks in order.
    pub data: Vec<u8>,
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

/// Serialises a plan to `.tlc` bytes (see `docs/TLC_FORMAT.md`).
pub fn write_plan(p: &Plan) -> Vec<u8> {
    let j = p.skeleton.len();
    let ranged: Vec<&AnimatedTrack> = p.tracks.iter().filter(|t| t.comps > 0).collect();
    let segment_count = p.key_count.div_ceil(p.segment_frames.max(1));
    let mut b = Vec::with_capacity(HEADER_BYTES + p.data.len() + 64 * j);
    b.extend_from_slice(&MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    let mut flags = 0;
    if p.segment_ranges {
        flags |= FLAG_SEGMENT_RANGES;
    }
    if p.has_scale {
        flags |= FLAG_HAS_SCALE;
    }
    b.extend_from_slice(&flags.to_le_bytes());
    b.extend_from_slice(&(j as u16).to_le_bytes());
    b.push(p.rotation_format.code());
    b.push(0);
    b.extend_from_slice(&p.frame_count.to_le_bytes());
    b.extend_from_slice(&p.fps.to_le_bytes());
    b.extend_from_slice(&p.unit_cm.to_le_bytes());
    b.extend_from_slice(&p.frame_step.to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&p.segment_frames.to_le_bytes());
    b.extend_from_slice(&p.key_count.to_le_bytes());
    b.extend_from_slice(&segment_count.to_le_bytes());
    b.extend_from_slice(&(p.tracks.len() as u16).to_le_bytes());
    b.extend_from_slice(&(p.name.len().min(255) as u8).to_le_bytes());
    b.push(0);
    let size_at = b.len();
    b.extend_from_slice(&0u32.to_le_bytes()); // file size, patched below
    debug_assert_eq!(b.len(), HEADER_BYTES);
    b.extend_from_slice(&p.name.as_bytes()[..p.name.len().min(255)]);
    // Skeleton.
    for name in &p.skeleton.names {
        let n = name.len().min(255);
        b.push(n as u8);
        b.extend_from_slice(&name.as_bytes()[..n]);
    }
    for parent in &p.skeleton.parents {
        b.extend_from_slice(&parent.map_or(NO_PARENT, |x| x as u16).to_le_bytes());
    }
    for rest in &p.skeleton.rest {
        let has_rot = rest.rotation != Quat::IDENTITY;
        let has_scale = rest.scale != Vec3::ONE;
        b.push(u8::from(has_rot) | (u8::from(has_scale) << 1));
        push_f32s(&mut b, &rest.translation.to_array());
        if has_rot {
            push_f32s(&mut b, &rest.rotation.to_array());
        }
        if has_scale {
            push_f32s(&mut b, &rest.scale.to_array());
        }
    }
    // End Sites.
    b.extend_from_slice(&(p.skeleton.end_sites.len().min(0xFFFF) as u16).to_le_bytes());
    for e in p.skeleton.end_sites.iter().take(0xFFFF) {
        b.extend_from_slice(&(e.parent as u16).to_le_bytes());
        push_f32s(&mut b, &e.offset.to_array());
    }
    // Track descriptors.
    let mut track_iter = p.tracks.iter();
    for stores in &p.stores {
        b.push(stores[0].code() | (stores[1].code() << 2) | (stores[2].code() << 4));
        for (kind, store) in stores.iter().enumerate() {
            match store {
                TrackStore::Default => {}
                TrackStore::Constant(v) => {
                    let n = if kind == 0 { 4 } else { 3 };
                    push_f32s(&mut b, &v[..n]);
                }
                TrackStore::Animated => {
                    let t = track_iter.next().expect("plan: a track per animated store");
                    for c in 0..t.range_comps() {
                        push_f32s(&mut b, &[t.clip_min[c], t.clip_ext[c]]);
                    }
                }
            }
        }
    }
    // Per-bone offsets: index of each joint's first animated track.
    let mut first = 0u16;
    for stores in &p.stores {
        b.extend_from_slice(&first.to_le_bytes());
        first += stores
            .iter()
            .filter(|s| **s == TrackStore::Animated)
            .count() as u16;
    }
    // Segment table.
    let nr = ranged.len();
    for s in 0..segment_count as usize {
        let widths = &p.widths[s * nr..(s + 1) * nr];
        for pair in widths.chunks(2) {
            let lo = super::settings::width_code(pair[0]).expect("plan: valid width");
            let hi = pair.get(1).map_or(0, |w| {
                super::settings::width_code(*w).expect("plan: valid width")
            });
            b.push(lo | (hi << 4));
        }
        let drops: Vec<u8> = ranged
            .iter()
            .zip(&p.drops[s * nr..(s + 1) * nr])
            .filter(|(t, _)| t.drops_component())
            .map(|(_, d)| *d)
            .collect();
        for quad in drops.chunks(4) {
            let mut byte = 0u8;
            for (i, d) in quad.iter().enumerate() {
                byte |= (d & 3) << (2 * i);
            }
            b.push(byte);
        }
        if p.segment_ranges {
            for (t, r) in ranged.iter().zip(&p.ranges[s * nr..(s + 1) * nr]) {
                for &(qmin, qext) in &r[..usize::from(t.comps)] {
                    b.push(qmin);
                    b.push(qext);
                }
            }
        }
    }
    b.extend_from_slice(&p.data);
    let total = (b.len() + 4) as u32;
    b[size_at..size_at + 4].copy_from_slice(&total.to_le_bytes());
    let crc = crc32(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

fn push_f32s(b: &mut Vec<u8>, v: &[f32]) {
    for x in v {
        b.extend_from_slice(&x.to_le_bytes());
    }
}

/// Why a `.tlc` file was rejected. Offsets are byte offsets from the start of the file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TlcError {
    #[error("not a taglane compressed clip: expected magic \"TAGLNTLC\" at byte 0")]
    BadMagic,
    #[error("format version {found} is not supported (this build reads version {VERSION})")]
    UnsupportedVersion { found: u16 },
    #[error("file is truncated: {what} needs {needed} bytes at byte {offset}, the file has {len}")]
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
    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }
}

fn invalid(what: &'static str, offset: usize, detail: String) -> TlcError {
    TlcError::Invalid {
        what,
        offset,
        detail,
    }
}

/// A compressed clip, ready to sample. Holds the file bytes and tables derived from them at load.
#[derive(Debug, Clone)]
pub struct CompressedClip {
    bytes: Vec<u8>,
    pub name: String,
    pub skeleton: Skeleton,
    frame_count: u32,
    fps: f32,
    unit_cm: f32,
    frame_step: u32,
    segment_frames: u32,
    key_count: u32,
    rotation_format: RotationFormat,
    has_scale: bool,
    segment_ranges: bool,
    stores: Vec<[TrackStore; 3]>,
    /// The pose of every default and constant track (animated slots are overwritten on decode).
    static_pose: Vec<Transform>,
    tracks: Vec<AnimatedTrack>,
    /// `joint_first_track[j]..joint_first_track[j + 1]`: the animated tracks of joint `j`.
    joint_first_track: Vec<u16>,
    segments: Vec<SegmentInfo>,
    /// Segment-major: `seg_tracks[s * tracks.len() + t]`.
    seg_tracks: Vec<SegTrack>,
    /// Segment-major: `slot_of[s * tracks.len() + t]` is where track `t` sits in segment `s`'s
    /// slice of `seg_tracks` (grouped by op, not in track order).
    slot_of: Vec<u16>,
    /// The data block plus 8 zero bytes so every bit read is in bounds.
    data: Vec<u8>,
}

impl CompressedClip {
    /// Parses and validates a `.tlc` file. Never panics; every length is checked against the bytes
    /// present before anything is allocated from it.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self, TlcError> {
        let len = bytes.len();
        let max = crate::core::limits::MAX_TLC_FILE_BYTES;
        if len as u64 > max {
            return Err(invalid(
                "file size",
                0,
                crate::core::limits::size_message(len as u64, max),
            ));
        }
        let mut c = Cursor {
            bytes: &bytes,
            pos: 0,
        };
        if c.take(8, "magic")? != MAGIC {
            return Err(TlcError::BadMagic);
        }
        let version = c.u16("version")?;
        if version != VERSION {
            return Err(TlcError::UnsupportedVersion { found: version });
        }
        let flags = c.u16("flags")?;
        let joint_count = usize::from(c.u16("joint count")?);
        let rot_code = c.u8("rotation format")?;
        let _reserved = c.u8("reserved byte")?;
        let frame_count = c.u32("frame count")?;
        let fps_at = c.pos;
        let fps = c.f32("fps")?;
        let unit_at = c.pos;
        let unit_cm = c.f32("unit_cm")?;
        let step_at = c.pos;
        let frame_step = u32::from(c.u16("frame step")?);
        let _reserved2 = c.u16("reserved")?;
        let segf_at = c.pos;
        let segment_frames = c.u32("segment frames")?;
        let keys_at = c.pos;
        let key_count = c.u32("key count")?;
        let segs_at = c.pos;
        let segment_count = c.u32("segment count")?;
        let tracks_at = c.pos;
        let animated_count = usize::from(c.u16("animated track count")?);
        let name_len = usize::from(c.u8("name length")?);
        let _reserved3 = c.u8("reserved")?;
        let size_at = c.pos;
        let file_size = c.u32("file size")? as usize;
        if file_size != len {
            return Err(TlcError::SizeMismatch {
                expected: file_size,
                found: len,
            });
        }
        if len < HEADER_BYTES + 4 {
            return Err(invalid(
                "file size",
                size_at,
                format!("{len} bytes is smaller than a header and checksum"),
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
        // From here on the body is what the writer wrote, but it is still validated field by field.
        c.bytes = &bytes[..len - 4];
        if flags & !KNOWN_FLAGS != 0 {
            return Err(invalid(
                "flags",
                10,
                format!("unknown flag bits {:#06x}", flags & !KNOWN_FLAGS),
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
        if frame_count as usize > MAX_FRAMES
            || frame_count as usize * joint_count > MAX_JOINT_SAMPLES
        {
            return Err(invalid(
                "frame count",
                16,
                format!(
                    "expected at most {MAX_FRAMES} frames and {MAX_JOINT_SAMPLES} joint samples, found {frame_count} frames x {joint_count} joints"
                ),
            ));
        }
        if fps <= 0.0 {
            return Err(invalid("fps", fps_at, format!("expected > 0, found {fps}")));
        }
        if unit_cm <= 0.0 {
            return Err(invalid(
                "unit_cm",
                unit_at,
                format!("expected > 0, found {unit_cm}"),
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
        let expect_segs = key_count.div_ceil(segment_frames);
        if segment_count != expect_segs {
            return Err(invalid(
                "segment count",
                segs_at,
                format!("expected {expect_segs}, found {segment_count}"),
            ));
        }
        let name_at = c.pos;
        let name = std::str::from_utf8(c.take(name_len, "clip name")?)
            .map_err(|e| invalid("clip name", name_at, format!("not UTF-8: {e}")))?
            .to_string();
        // Each joint needs at least 1 (name length) + 2 (parent) + 13 (rest) + 1 (descriptor) + 2
        // (offset) bytes: check before allocating.
        if joint_count.saturating_mul(19) > c.remaining() {
            return Err(TlcError::Truncated {
                what: "joint tables",
                offset: c.pos,
                needed: joint_count * 19,
                len,
            });
        }
        let mut names = Vec::with_capacity(joint_count);
        for _ in 0..joint_count {
            let n = usize::from(c.u8("joint name length")?);
            let at = c.pos;
            let s = std::str::from_utf8(c.take(n, "joint name")?)
                .map_err(|e| invalid("joint name", at, format!("not UTF-8: {e}")))?;
            names.push(s.to_string());
        }
        let mut parents = Vec::with_capacity(joint_count);
        for i in 0..joint_count {
            let at = c.pos;
            let p = c.u16("parent index")?;
            if p == NO_PARENT {
                parents.push(None);
            } else if usize::from(p) < i {
                parents.push(Some(usize::from(p)));
            } else {
                return Err(invalid(
                    "parent index",
                    at,
                    format!("joint {i} has parent {p}, expected a lower index or {NO_PARENT:#x}"),
                ));
            }
        }
        let mut rest = Vec::with_capacity(joint_count);
        for _ in 0..joint_count {
            let at = c.pos;
            let f = c.u8("rest flags")?;
            if f & !3 != 0 {
                return Err(invalid("rest flags", at, format!("unknown bits {f:#04x}")));
            }
            let translation = read_vec3(&mut c, "rest translation")?;
            let rotation = if f & 1 != 0 {
                read_quat(&mut c, "rest rotation")?
            } else {
                Quat::IDENTITY
            };
            let scale = if f & 2 != 0 {
                read_vec3(&mut c, "rest scale")?
            } else {
                Vec3::ONE
            };
            rest.push(Transform {
                translation,
                rotation,
                scale,
            });
        }
        let count_at = c.pos;
        let end_count = usize::from(c.u16("End Site count")?);
        if end_count * 14 > c.remaining() {
            return Err(TlcError::Truncated {
                what: "End Sites",
                offset: count_at + 2,
                needed: end_count * 14,
                len,
            });
        }
        let mut end_sites = Vec::with_capacity(end_count);
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
            let offset = read_vec3(&mut c, "End Site offset")?;
            end_sites.push(EndSite { parent, offset });
        }
        let skeleton = Skeleton {
            names,
            parents,
            rest,
            end_sites,
        };
        let mut stores = Vec::with_capacity(joint_count);
        let mut tracks: Vec<AnimatedTrack> = Vec::new();
        let mut static_pose = skeleton.rest.clone();
        for j in 0..joint_count {
            let at = c.pos;
            let d = c.u8("track descriptor")?;
            if d & 0xC0 != 0 {
                return Err(invalid(
                    "track descriptor",
                    at,
                    format!("unknown bits {d:#04x}"),
                ));
            }
            let mut js = [TrackStore::Default; 3];
            for (kind, slot) in js.iter_mut().enumerate() {
                let code = (d >> (kind * 2)) & 3;
                *slot = match code {
                    0 => TrackStore::Default,
                    1 => {
                        let v = if kind == 0 {
                            read_quat(&mut c, "constant rotation")?.to_array()
                        } else {
                            let t = read_vec3(&mut c, "constant value")?;
                            [t.x, t.y, t.z, 0.0]
                        };
                        let st = TrackStore::Constant(v);
                        apply_constant(&mut static_pose[j], kind, v);
                        st
                    }
                    2 => {
                        if tracks.len() >= animated_count {
                            return Err(invalid(
                                "track descriptor",
                                at,
                                format!(
                                    "more animated tracks than the {animated_count} the header declares"
                                ),
                            ));
                        }
                        let k = [
                            TrackKind::Rotation,
                            TrackKind::Translation,
                            TrackKind::Scale,
                        ][kind];
                        let (comps, packed_bits) = match (k, rotation_format.ranged_components()) {
                            (TrackKind::Rotation, Some(n)) => (n as u8, 0),
                            (TrackKind::Rotation, None) => {
                                (0, rotation_format.packed_bits().unwrap_or(0) as u8)
                            }
                            _ => (3, 0),
                        };
                        let mut clip_min = [0.0; 4];
                        let mut clip_ext = [0.0; 4];
                        let range_comps = if k == TrackKind::Rotation && comps == 3 {
                            4
                        } else {
                            usize::from(comps)
                        };
                        for i in 0..range_comps {
                            clip_min[i] = c.f32("clip range minimum")?;
                            let eat = c.pos;
                            clip_ext[i] = c.f32("clip range extent")?;
                            if clip_ext[i] < 0.0 {
                                return Err(invalid(
                                    "clip range extent",
                                    eat,
                                    format!("expected >= 0, found {}", clip_ext[i]),
                                ));
                            }
                        }
                        tracks.push(AnimatedTrack {
                            joint: j as u16,
                            kind: k,
                            comps,
                            packed_bits,
                            clip_min,
                            clip_ext,
                        });
                        TrackStore::Animated
                    }
                    _ => {
                        return Err(invalid(
                            "track descriptor",
                            at,
                            format!("unknown track store code 3 in {d:#04x}"),
                        ));
                    }
                };
            }
            stores.push(js);
        }
        if tracks.len() != animated_count {
            return Err(invalid(
                "animated track count",
                tracks_at,
                format!(
                    "header declares {animated_count}, descriptors give {}",
                    tracks.len()
                ),
            ));
        }
        let mut joint_first_track = Vec::with_capacity(joint_count + 1);
        let mut expect = 0u16;
        for j in 0..joint_count {
            let at = c.pos;
            let v = c.u16("per-bone track offset")?;
            if v != expect {
                return Err(invalid(
                    "per-bone track offset",
                    at,
                    format!("joint {j}: expected {expect}, found {v}"),
                ));
            }
            joint_first_track.push(v);
            expect += stores[j]
                .iter()
                .filter(|s| **s == TrackStore::Animated)
                .count() as u16;
        }
        joint_first_track.push(expect);
        let segment_ranges = flags & FLAG_SEGMENT_RANGES != 0;
        let ranged: Vec<usize> = (0..tracks.len()).filter(|&t| tracks[t].comps > 0).collect();
        let nr = ranged.len();
        let range_bytes: usize = if segment_ranges {
            ranged
                .iter()
                .map(|&t| 2 * usize::from(tracks[t].comps))
                .sum()
        } else {
            0
        };
        let nd = tracks.iter().filter(|t| t.drops_component()).count();
        let drop_bytes = nd.div_ceil(4);
        let seg_header_bytes = nr.div_ceil(2) + drop_bytes + range_bytes;
        let (segments, seg_tracks, slot_of, data) = if tracks.is_empty() {
            (Vec::new(), Vec::new(), Vec::new(), vec![0u8; 8])
        } else {
            // Every segment of a clip with animated tracks takes at least one byte (a width byte
            // or key data), so the segment count is bounded by the bytes present.
            if segment_count as usize > c.remaining() {
                return Err(TlcError::Truncated {
                    what: "segment table",
                    offset: c.pos,
                    needed: segment_count as usize,
                    len,
                });
            }
            let segment_count = segment_count as usize;
            let mut segments = Vec::with_capacity(segment_count);
            // (bounded: checked against the remaining bytes just above)
            // Grown as segments validate: each segment consumes bytes, so this stays proportional
            // to the file size.
            let mut seg_tracks = Vec::new();
            let mut data_bit = 0usize;
            for s in 0..segment_count {
                let header_at = c.pos;
                let header = c.take(seg_header_bytes, "segment header")?;
                let mut st = vec![SegTrack::default(); tracks.len()];
                let mut bit = 0u32;
                let mut ri = 0;
                let mut di = 0;
                let drop_at = nr.div_ceil(2);
                let mut rb = drop_at + drop_bytes;
                for (t, track) in tracks.iter().enumerate() {
                    st[t].joint = track.joint;
                    st[t].track = t as u16;
                    if track.comps == 0 {
                        st[t].op = OP_GENERAL;
                        st[t].bit_in_key = bit;
                        bit += u32::from(track.packed_bits);
                        continue;
                    }
                    let code = (header[ri / 2] >> ((ri % 2) * 4)) & 0xF;
                    let width = WIDTHS[usize::from(code)];
                    ri += 1;
                    st[t].width = width;
                    st[t].op = track_op(track, width);
                    if st[t].op != OP_GENERAL {
                        st[t].mask = (1u32 << width) - 1;
                    }
                    st[t].bit_in_key = bit;
                    st[t].drop = NO_DROP;
                    if track.drops_component() {
                        st[t].drop = (header[drop_at + di / 4] >> (2 * (di % 4))) & 3;
                        di += 1;
                    }
                    let kept = kept_components(st[t].drop);
                    bit += u32::from(width) * u32::from(track.comps);
                    for i in 0..usize::from(track.comps) {
                        let range = if segment_ranges {
                            let (qmin, qext) = (header[rb], header[rb + 1]);
                            if u16::from(qmin) + u16::from(qext) > 255 {
                                return Err(invalid(
                                    "segment range",
                                    header_at + rb,
                                    format!("segment {s}: min {qmin} + extent {qext} exceeds 255"),
                                ));
                            }
                            rb += 2;
                            Some((qmin, qext))
                        } else {
                            None
                        };
                        let comp = kept[i];
                        let (o, sc) = component_params(
                            track.clip_min[comp],
                            track.clip_ext[comp],
                            range,
                            width,
                        );
                        st[t].offset[i] = o;
                        st[t].scale[i] = sc;
                    }
                }
                if ri != nr {
                    return Err(invalid(
                        "segment header",
                        header_at,
                        "width count mismatch".into(),
                    ));
                }
                if nd % 4 != 0 && header[drop_at + nd / 4] >> (2 * (nd % 4)) != 0 {
                    return Err(invalid(
                        "segment header",
                        header_at + drop_at + nd / 4,
                        "padding bits are not zero".into(),
                    ));
                }
                if nr % 2 == 1 && header[nr / 2] >> 4 != 0 {
                    return Err(invalid(
                        "segment header",
                        header_at + nr / 2,
                        "padding nibble is not zero".into(),
                    ));
                }
                let start_key = s as u32 * segment_frames;
                let keys = (key_count - start_key).min(segment_frames);
                segments.push(SegmentInfo {
                    start_key,
                    data_bit,
                    key_bits: bit,
                    group_ends: [0; 4],
                });
                let seg_bits = u64::from(bit) * u64::from(keys);
                data_bit = data_bit
                    .checked_add(seg_bits.div_ceil(8) as usize * 8)
                    .filter(|&b| b / 8 <= len)
                    .ok_or_else(|| TlcError::Truncated {
                        what: "data block",
                        offset: header_at,
                        needed: seg_bits.div_ceil(8) as usize,
                        len,
                    })?;
                seg_tracks.extend_from_slice(&st);
            }
            let data_len = data_bit / 8;
            let data_at = c.pos;
            let body = c.take(data_len, "data block")?;
            if c.remaining() != 0 {
                return Err(invalid(
                    "data block",
                    data_at + data_len,
                    format!("{} unexpected bytes after the data block", c.remaining()),
                ));
            }
            let mut data = Vec::with_capacity(data_len + 8);
            data.extend_from_slice(body);
            data.extend_from_slice(&[0; 8]);
            mark_sign_changes(&segments, &mut seg_tracks, &data, segment_frames, key_count);
            let slot_of = group_by_op(&mut segments, &mut seg_tracks);
            (segments, seg_tracks, slot_of, data)
        };
        if tracks.is_empty() && c.remaining() != 0 {
            return Err(invalid(
                "data block",
                c.pos,
                format!(
                    "{} unexpected bytes: the clip has no animated track",
                    c.remaining()
                ),
            ));
        }
        Ok(Self {
            bytes,
            name,
            skeleton,
            frame_count,
            fps,
            unit_cm,
            frame_step,
            segment_frames,
            key_count,
            rotation_format,
            has_scale: flags & FLAG_HAS_SCALE != 0,
            segment_ranges,
            stores,
            static_pose,
            tracks,
            joint_first_track,
            segments,
            seg_tracks,
            slot_of,
            data,
        })
    }

    /// The `.tlc` file bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    /// Compressed size in bytes (the whole file).
    pub fn size_bytes(&self) -> usize {
        self.bytes.len()
    }
    pub fn joint_count(&self) -> usize {
        self.skeleton.len()
    }
    /// Frame count of the original clip.
    pub fn frame_count(&self) -> usize {
        self.frame_count as usize
    }
    pub fn fps(&self) -> f32 {
        self.fps
    }
    /// Centimetres per file unit.
    pub fn unit_cm(&self) -> f32 {
        self.unit_cm
    }
    /// `(frame_count - 1) / fps`.
    pub fn duration_s(&self) -> f32 {
        (self.frame_count - 1) as f32 / self.fps
    }
    pub fn rotation_format(&self) -> RotationFormat {
        self.rotation_format
    }
    pub fn has_scale(&self) -> bool {
        self.has_scale
    }
    pub fn frame_step(&self) -> u32 {
        self.frame_step
    }
    pub fn segment_frames(&self) -> u32 {
        self.segment_frames
    }
    pub fn segment_ranges(&self) -> bool {
        self.segment_ranges
    }
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }
    /// How each joint's rotation, translation and scale tracks are stored.
    pub fn track_stores(&self) -> &[[TrackStore; 3]] {
        &self.stores
    }
    pub fn animated_tracks(&self) -> &[AnimatedTrack] {
        &self.tracks
    }
    /// Widths of the ranged tracks of segment `s` (bits per component).
    pub fn segment_widths(&self, s: usize) -> impl Iterator<Item = u8> + '_ {
        self.tracks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.comps > 0)
            .map(move |(i, _)| self.seg_track(s, i).width)
    }

    /// Samples the local pose at time `time_s` (clamped to `[0, duration]`), interpolating the two
    /// neighbouring frames (translation and scale lerp, rotation nlerp on the shortest path).
    /// `out` must hold one transform per joint; extra entries are left alone.
    pub fn sample_pose(&self, time_s: f32, out: &mut [Transform]) {
        self.sample_pose_at_frame(time_s * self.fps, out);
    }

    /// Samples the local pose at a (fractional) frame position of the original clip.
    ///
    /// One pass over the animated tracks of the segment(s) involved, with the decoding constants
    /// built at load ([`SegTrack`]): exactly on a key, one decode; between two keys of one segment,
    /// the stored components of both keys are read (one 64-bit load per key for components of at
    /// most 16 bits) and interpolated before each rotation is rebuilt once; across a segment
    /// boundary, both keys are decoded with their own segment's constants and blended (nlerp on
    /// the shortest path, lerp).
    pub fn sample_pose_at_frame(&self, frame: f32, out: &mut [Transform]) {
        let (k0, alpha) = self.key_position(frame);
        let out = &mut out[..self.static_pose.len()];
        out.copy_from_slice(&self.static_pose);
        if self.tracks.is_empty() {
            return;
        }
        let s = k0 / self.segment_frames;
        let in_segment = k0 - s * self.segment_frames;
        let s = s as usize;
        if alpha <= 0.0 {
            self.decode_key_into(s, in_segment, out);
        } else if in_segment + 1 < self.segment_frames {
            self.decode_lerp_in_segment(s, in_segment, alpha, out);
        } else {
            self.decode_lerp_across(s, alpha, out);
        }
    }

    /// The decoding constants of segment `s`, in track order.
    #[inline(always)]
    fn segment_tracks(&self, s: usize) -> &[SegTrack] {
        let n = self.tracks.len();
        &self.seg_tracks[s * n..(s + 1) * n]
    }

    /// The decoding constants of track `t` in segment `s`.
    #[inline(always)]
    fn seg_track(&self, s: usize, t: usize) -> &SegTrack {
        let n = self.tracks.len();
        &self.seg_tracks[s * n + usize::from(self.slot_of[s * n + t])]
    }

    /// Absolute bit position of key `in_segment` of segment `s`.
    #[inline(always)]
    fn key_bit(&self, s: usize, in_segment: u32) -> usize {
        let seg = &self.segments[s];
        seg.data_bit + in_segment as usize * seg.key_bits as usize
    }

    /// Writes key `in_segment` of segment `s` into the animated slots of `out`.
    fn decode_key_into(&self, s: usize, in_segment: u32, out: &mut [Transform]) {
        let base = self.key_bit(s, in_segment);
        let data = &self.data[..];
        let st = self.segment_tracks(s);
        let [r, t, sc, rc] = self.segments[s].group_ends.map(usize::from);
        for p in &st[..r] {
            let pos = base + p.bit_in_key as usize;
            out[usize::from(p.joint)].rotation = rotation3(dequantize3(data, pos, p), p.drop);
        }
        for p in &st[r..t] {
            let pos = base + p.bit_in_key as usize;
            out[usize::from(p.joint)].translation = dequantize3(data, pos, p).truncate();
        }
        for p in &st[t..sc] {
            let pos = base + p.bit_in_key as usize;
            out[usize::from(p.joint)].scale = dequantize3(data, pos, p).truncate();
        }
        for p in &st[sc..rc] {
            let pos = base + p.bit_in_key as usize;
            out[usize::from(p.joint)].rotation = rotation3(dequantize3(data, pos, p), p.drop);
        }
        for p in &st[rc..] {
            let slot = &mut out[usize::from(p.joint)];
            let t = &self.tracks[usize::from(p.track)];
            let mut pos = base + p.bit_in_key as usize;
            match t.kind {
                TrackKind::Rotation => slot.rotation = self.read_rotation(t, p, &mut pos),
                TrackKind::Translation => slot.translation = read_vec3_bits(data, p, &mut pos),
                TrackKind::Scale => slot.scale = read_vec3_bits(data, p, &mut pos),
            }
        }
    }

    /// Keys `in_segment` and `in_segment + 1` of segment `s`: one pass that interpolates the
    /// stored components and rebuilds each rotation once. Both keys share the segment's dropped
    /// component and its sign, so this is nlerp for full quaternions and, for drop-W, the same path
    /// up to second order in the angle between the keys (exact at the keys).
    fn decode_lerp_in_segment(&self, s: usize, in_segment: u32, alpha: f32, out: &mut [Transform]) {
        let base_a = self.key_bit(s, in_segment);
        let base_b = base_a + self.segments[s].key_bits as usize;
        let data = &self.data[..];
        let st = self.segment_tracks(s);
        let [r, t, sc, rc] = self.segments[s].group_ends.map(usize::from);
        let pair = |p: &SegTrack| {
            let off = p.bit_in_key as usize;
            (
                dequantize3(data, base_a + off, p),
                dequantize3(data, base_b + off, p),
            )
        };
        for p in &st[..r] {
            let (va, vb) = pair(p);
            out[usize::from(p.joint)].rotation = rotation3(va + (vb - va) * alpha, p.drop);
        }
        for p in &st[r..t] {
            let (va, vb) = pair(p);
            out[usize::from(p.joint)].translation = (va + (vb - va) * alpha).truncate();
        }
        for p in &st[t..sc] {
            let (va, vb) = pair(p);
            out[usize::from(p.joint)].scale = (va + (vb - va) * alpha).truncate();
        }
        for p in &st[sc..rc] {
            let (va, vb) = pair(p);
            out[usize::from(p.joint)].rotation = lerp_rotation3(va, vb, p.drop, alpha);
        }
        for p in &st[rc..] {
            let off = p.bit_in_key as usize;
            let t = &self.tracks[usize::from(p.track)];
            let slot = &mut out[usize::from(p.joint)];
            self.lerp_general(t, p, base_a + off, base_b + off, alpha, slot);
        }
    }
    /// [`Self::decode_lerp_in_segment`] for one track the fast paths do not cover.
    fn lerp_general(
        &self,
        t: &AnimatedTrack,
        p: &SegTrack,
        mut pa: usize,
        mut pb: usize,
        alpha: f32,
        slot: &mut Transform,
    ) {
        if t.comps == 0 {
            let a = self.read_rotation(t, p, &mut pa);
            let b = self.read_rotation(t, p, &mut pb);
            slot.rotation = nlerp(a, b, alpha);
            return;
        }
        let data = &self.data[..];
        let w = p.width;
        let wb = u32::from(w);
        let mut va = [0.0f32; 4];
        let mut vb = [0.0f32; 4];
        for i in 0..usize::from(t.comps) {
            let qa = read_bits(data, pa + wb as usize * i, wb);
            let qb = read_bits(data, pb + wb as usize * i, wb);
            va[i] = dequantize_component(qa, p.offset[i], p.scale[i], w);
            vb[i] = dequantize_component(qb, p.offset[i], p.scale[i], w);
        }
        let (va, vb) = (Vec4::from_array(va), Vec4::from_array(vb));
        match t.kind {
            TrackKind::Rotation if t.comps == 3 => {
                slot.rotation = lerp_rotation3(va, vb, p.drop, alpha)
            }
            TrackKind::Rotation => {
                slot.rotation = rotation_from_components(4, p.drop, (va + (vb - va) * alpha).into())
            }
            TrackKind::Translation => slot.translation = (va + (vb - va) * alpha).truncate(),
            TrackKind::Scale => slot.scale = (va + (vb - va) * alpha).truncate(),
        }
    }

    /// The last key of segment `s` and the first key of segment `s + 1`: each decoded with its own
    /// segment's constants, then blended (rotation nlerp on the shortest path, lerp).
    fn decode_lerp_across(&self, s: usize, alpha: f32, out: &mut [Transform]) {
        let base_a = self.key_bit(s, self.segment_frames - 1);
        let base_b = self.key_bit(s + 1, 0);
        for (i, t) in self.tracks.iter().enumerate() {
            let (pa, pb) = (self.seg_track(s, i), self.seg_track(s + 1, i));
            let slot = &mut out[usize::from(pa.joint)];
            let (a, b) = (
                self.decode_track(t, pa, base_a + pa.bit_in_key as usize),
                self.decode_track(t, pb, base_b + pb.bit_in_key as usize),
            );
            match t.kind {
                TrackKind::Rotation => {
                    slot.rotation = nlerp(Quat::from_vec4(a), Quat::from_vec4(b), alpha)
                }
                TrackKind::Translation => slot.translation = a.truncate().lerp(b.truncate(), alpha),
                TrackKind::Scale => slot.scale = a.truncate().lerp(b.truncate(), alpha),
            }
        }
    }

    /// One track of one key: a rotation as x, y, z, w; a translation or scale as x, y, z, 0.
    #[inline(always)]
    fn decode_track(&self, t: &AnimatedTrack, p: &SegTrack, pos: usize) -> Vec4 {
        let data = &self.data[..];
        match p.op {
            OP_ROTATION3 | OP_ROTATION3_CHECKED => {
                Vec4::from(rotation3(dequantize3(data, pos, p), p.drop))
            }
            OP_TRANSLATION3 | OP_SCALE3 => dequantize3(data, pos, p),
            _ => {
                let mut pos = pos;
                match t.kind {
                    TrackKind::Rotation => Vec4::from(self.read_rotation(t, p, &mut pos)),
                    _ => read_vec3_bits(data, p, &mut pos).extend(0.0),
                }
            }
        }
    }
    /// Key and interpolation weight towards the next key for a frame position.
    #[inline]
    fn key_position(&self, frame: f32) -> (u32, f32) {
        let last = (self.frame_count - 1) as f32;
        let p = if frame.is_nan() {
            0.0
        } else {
            frame.clamp(0.0, last)
        };
        if self.frame_step == 1 {
            let k0 = (p as u32).min(self.frame_count - 1);
            if k0 + 1 >= self.key_count {
                return (k0, 0.0);
            }
            return (k0, p - k0 as f32);
        }
        let step = self.frame_step as f32;
        let k0 = ((p / step) as u32).min(self.key_count - 1);
        if k0 + 1 >= self.key_count {
            return (k0, 0.0);
        }
        let f0 = key_frame(k0, self.frame_step, self.frame_count) as f32;
        let f1 = key_frame(k0 + 1, self.frame_step, self.frame_count) as f32;
        (k0, ((p - f0) / (f1 - f0)).clamp(0.0, 1.0))
    }

    #[inline]
    fn key_start(&self, k: u32) -> (usize, usize) {
        let s = (k / self.segment_frames) as usize;
        let seg = &self.segments[s];
        let pos = seg.data_bit + (k - seg.start_key) as usize * seg.key_bits as usize;
        (pos, s)
    }

    #[inline(always)]
    fn read_rotation(&self, t: &AnimatedTrack, p: &SegTrack, pos: &mut usize) -> Quat {
        if t.comps == 0 {
            let bits = u32::from(t.packed_bits);
            let lo = u64::from(read_bits(&self.data, *pos, 32));
            let hi = if bits > 32 {
                u64::from(read_bits(&self.data, *pos + 32, bits - 32))
            } else {
                0
            };
            *pos += bits as usize;
            return unpack_smallest_three(lo | (hi << 32), bits);
        }
        let w = p.width;
        let wb = u32::from(w);
        let mut c = [0.0f32; 4];
        for i in 0..usize::from(t.comps) {
            c[i] =
                dequantize_component(read_bits(&self.data, *pos, wb), p.offset[i], p.scale[i], w);
            *pos += wb as usize;
        }
        rotation_from_components(t.comps, p.drop, c)
    }

    /// Decodes every original frame into an ordinary clip (same joints, order, frame count, fps
    /// and unit). Frames dropped by decimation are interpolated.
    pub fn to_clip(&self) -> crate::core::anim::Clip {
        let n = self.joint_count();
        let frames = self.frame_count();
        let mut rotations = Vec::with_capacity(n * frames);
        let mut translations = Vec::with_capacity(n * frames);
        let mut scales = Vec::with_capacity(n * frames);
        let mut pose = vec![Transform::IDENTITY; n];
        let mut prev: Vec<Quat> = self.static_pose.iter().map(|t| t.rotation).collect();
        for f in 0..frames {
            self.sample_pose_at_frame(f as f32, &mut pose);
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
        crate::core::anim::Clip {
            name: self.name.clone(),
            skeleton: self.skeleton.clone(),
            fps: self.fps,
            frame_count: frames,
            unit_cm: self.unit_cm,
            rotations,
            translations,
            scales,
        }
    }

    /// Samples one joint's local transform at `time_s` without decoding the rest of the pose,
    /// using the per-track bit offsets.
    pub fn sample_joint(&self, time_s: f32, joint: usize) -> Option<Transform> {
        if joint >= self.joint_count() {
            return None;
        }
        let (k0, alpha) = self.key_position(time_s * self.fps);
        let mut a = self.decode_joint_key(k0, joint);
        if alpha > 0.0 {
            let b = self.decode_joint_key(k0 + 1, joint);
            a.rotation = nlerp(a.rotation, b.rotation, alpha);
            a.translation = a.translation.lerp(b.translation, alpha);
            a.scale = a.scale.lerp(b.scale, alpha);
        }
        Some(a)
    }

    fn decode_joint_key(&self, k: u32, joint: usize) -> Transform {
        let mut out = self.static_pose[joint];
        let first = usize::from(self.joint_first_track[joint]);
        let end = usize::from(self.joint_first_track[joint + 1]);
        if first == end {
            return out;
        }
        let (base, s) = self.key_start(k);
        for t in first..end {
            let track = &self.tracks[t];
            let p = self.seg_track(s, t);
            let mut pos = base + p.bit_in_key as usize;
            match track.kind {
                TrackKind::Rotation => out.rotation = self.read_rotation(track, p, &mut pos),
                TrackKind::Translation => out.translation = read_vec3_bits(&self.data, p, &mut pos),
                TrackKind::Scale => out.scale = read_vec3_bits(&self.data, p, &mut pos),
            }
        }
        out
    }
}

/// The 64 bits of `data` starting at bit `pos` (LSB first); 0 past the end. The data block is
/// padded with 8 zero bytes, so every read of a valid key is in bounds.
#[inline(always)]
fn load_word(data: &[u8], pos: usize) -> u64 {
    let byte = pos >> 3;
    match data.get(byte..byte + 8) {
        Some(chunk) => u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])) >> (pos & 7),
        None => 0,
    }
}

/// The three stored components of a fast-path track ([`OP_ROTATION3`], [`OP_TRANSLATION3`],
/// [`OP_SCALE3`]) at bit `pos`, dequantised (`offset + scale * q`, the arithmetic of
/// [`dequantize_component`]); the fourth lane is 0. One 64-bit read: `3 * width + 7 <= 64`.
#[inline(always)]
fn dequantize3(data: &[u8], pos: usize, p: &SegTrack) -> Vec4 {
    let word = load_word(data, pos);
    let w = u32::from(p.width);
    // Integers below 2^23 to f32 without a conversion: their bits ORed into the mantissa of 2^23,
    // minus 2^23 (exact).
    const TWO_23: u32 = 0x4B00_0000;
    let q = Vec4::new(
        f32::from_bits(TWO_23 | (word as u32 & p.mask)),
        f32::from_bits(TWO_23 | ((word >> w) as u32 & p.mask)),
        f32::from_bits(TWO_23 | ((word >> (2 * w)) as u32 & p.mask)),
        8_388_608.0,
    ) - Vec4::splat(8_388_608.0);
    Vec4::from_array(p.offset) + Vec4::from_array(p.scale) * q
}

/// Sorts each segment's [`SegTrack`]s by op (stable, so track order within a group), records the
/// group ends in the segment, and returns where each track went (`slot_of`). Every track writes its
/// own output field, so the order of decoding is free: grouped, the decoder runs one tight loop
/// per op with no per-track dispatch to mispredict.
fn group_by_op(segments: &mut [SegmentInfo], seg_tracks: &mut [SegTrack]) -> Vec<u16> {
    let n = seg_tracks.len() / segments.len().max(1);
    let mut slot_of = vec![0u16; seg_tracks.len()];
    let rank = |op: u8| match op {
        OP_ROTATION3 => 0,
        OP_TRANSLATION3 => 1,
        OP_SCALE3 => 2,
        OP_ROTATION3_CHECKED => 3,
        _ => 4,
    };
    for (s, (seg, st)) in segments
        .iter_mut()
        .zip(seg_tracks.chunks_exact_mut(n.max(1)))
        .enumerate()
    {
        st.sort_by_key(|p| rank(p.op));
        for g in 0..4 {
            seg.group_ends[g] = st.iter().filter(|p| rank(p.op) <= g).count() as u16;
        }
        for (slot, p) in st.iter().enumerate() {
            slot_of[s * n + usize::from(p.track)] = slot as u16;
        }
    }
    slot_of
}

/// Sets [`OP_ROTATION3_CHECKED`] on the fast drop-W rotation tracks of the segments where some
/// pair of consecutive keys has stored parts with a negative dot (the test of
/// [`lerp_rotation3`]), so the other segments interpolate without it.
fn mark_sign_changes(
    segments: &[SegmentInfo],
    seg_tracks: &mut [SegTrack],
    data: &[u8],
    segment_frames: u32,
    key_count: u32,
) {
    let n = seg_tracks.len() / segments.len().max(1);
    for (seg, st) in segments.iter().zip(seg_tracks.chunks_exact_mut(n.max(1))) {
        let keys = (key_count - seg.start_key).min(segment_frames) as usize;
        for p in st.iter_mut().filter(|p| p.op == OP_ROTATION3) {
            let at = |k: usize| seg.data_bit + k * seg.key_bits as usize + p.bit_in_key as usize;
            let mut prev = dequantize3(data, at(0), p);
            for k in 1..keys {
                let next = dequantize3(data, at(k), p);
                if prev.x * next.x + prev.y * next.y + prev.z * next.z < 0.0 {
                    p.op = OP_ROTATION3_CHECKED;
                    break;
                }
                prev = next;
            }
        }
    }
}

/// [`rotation_from_components`] of three stored slots.
#[inline(always)]
fn rotation3(v: Vec4, drop: u8) -> Quat {
    rotation_from_components(3, drop, v.to_array())
}

/// Interpolates two keys of a drop-W rotation from their stored slots: the slots are lerped and
/// the rotation rebuilt once. Both keys have the dropped component >= 0; when the stored parts
/// point apart (negative dot) the 4D dot may be negative too, so both are rebuilt and nlerp takes
/// the shortest path instead.
#[inline(always)]
fn lerp_rotation3(va: Vec4, vb: Vec4, drop: u8, alpha: f32) -> Quat {
    let dot = va.x * vb.x + va.y * vb.y + va.z * vb.z;
    if dot < 0.0 {
        return nlerp(rotation3(va, drop), rotation3(vb, drop), alpha);
    }
    rotation3(va + (vb - va) * alpha, drop)
}

#[inline(always)]
fn read_vec3_bits(data: &[u8], p: &SegTrack, pos: &mut usize) -> Vec3 {
    let w = p.width;
    let wb = u32::from(w);
    let x = dequantize_component(read_bits(data, *pos, wb), p.offset[0], p.scale[0], w);
    let y = dequantize_component(
        read_bits(data, *pos + wb as usize, wb),
        p.offset[1],
        p.scale[1],
        w,
    );
    let z = dequantize_component(
        read_bits(data, *pos + 2 * wb as usize, wb),
        p.offset[2],
        p.scale[2],
        w,
    );
    *pos += 3 * wb as usize;
    Vec3::new(x, y, z)
}

/// Normalised lerp on the shortest path.
#[inline(always)]
pub fn nlerp(a: Quat, b: Quat, alpha: f32) -> Quat {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    let q = a.lerp(b, alpha);
    let l2 = q.length_squared();
    if l2 > 0.0 { q * l2.sqrt().recip() } else { a }
}

fn apply_constant(t: &mut Transform, kind: usize, v: [f32; 4]) {
    match kind {
        0 => t.rotation = Quat::from_array(v),
        1 => t.translation = Vec3::new(v[0], v[1], v[2]),
        _ => t.scale = Vec3::new(v[0], v[1], v[2]),
    }
}

fn read_vec3(c: &mut Cursor, what: &'static str) -> Result<Vec3, TlcError> {
    Ok(Vec3::new(c.f32(what)?, c.f32(what)?, c.f32(what)?))
}

fn read_quat(c: &mut Cursor, what: &'static str) -> Result<Quat, TlcError> {
    let at = c.pos;
    let q = Quat::from_xyzw(c.f32(what)?, c.f32(what)?, c.f32(what)?, c.f32(what)?);
    if (q.length() - 1.0).abs() > 1e-3 {
        return Err(invalid(
            what,
            at,
            format!("expected a unit quaternion, length is {}", q.length()),
        ));
    }
    Ok(q)
}

#[cfg(test)]
mod tests {
    //! The decoder against a slow, obvious model of the documented sampling: keys read with a
    //! sequential bit cursor, one component at a time, from the segment table, then interpolated
    //! as `docs/COMPRESSION.md` says. The fast paths (load-time ops, one 64-bit read per key,
    //! sign-change marks) must give the same bits.
    use super::*;
    use crate::core::anim::{Clip, Skeleton};
    use crate::core::compress::settings::{BitRate, CompressSettings};
    use crate::core::compress::{compress, synth::synthetic_clip};
    use proptest::prelude::*;

    /// The stored values of one track in one key: dequantised slots (ranged tracks) or the
    /// unpacked rotation (smallest three) as x, y, z, w.
    fn model_key(c: &CompressedClip, k: u32) -> Vec<[f32; 4]> {
        let s = (k / c.segment_frames) as usize;
        let seg = &c.segments[s];
        let n = c.tracks.len();
        let mut pos = seg.data_bit + (k - seg.start_key) as usize * seg.key_bits as usize;
        let mut values = Vec::with_capacity(n);
        for (i, t) in c.tracks.iter().enumerate() {
            let p = c.seg_track(s, i);
            if t.comps == 0 {
                let bits = u32::from(t.packed_bits);
                let mut packed = 0u64;
                for b in 0..bits {
                    packed |= u64::from(read_bits(&c.data, pos + b as usize, 1)) << b;
                }
                pos += bits as usize;
                values.push(unpack_smallest_three(packed, bits).to_array());
                continue;
            }
            let mut v = [0.0f32; 4];
            for i in 0..usize::from(t.comps) {
                let w = u32::from(p.width);
                let mut q = 0u32;
                for b in 0..w {
                    q |= read_bits(&c.data, pos + b as usize, 1) << b;
                }
                pos += w as usize;
                v[i] = dequantize_component(q, p.offset[i], p.scale[i], p.width);
            }
            values.push(v);
        }
        values
    }

    fn model_rotation(t: &AnimatedTrack, drop: u8, v: [f32; 4]) -> Quat {
        if t.comps == 0 {
            Quat::from_array(v)
        } else {
            rotation_from_components(t.comps, drop, v)
        }
    }

    fn model_pose(c: &CompressedClip, frame: f32) -> Vec<Transform> {
        let (k0, alpha) = c.key_position(frame);
        let mut out = c.static_pose.clone();
        if c.tracks.is_empty() {
            return out;
        }
        let seg_track = |k: u32, i: usize| *c.seg_track((k / c.segment_frames) as usize, i);
        let a = model_key(c, k0);
        let b = if alpha > 0.0 {
            model_key(c, k0 + 1)
        } else {
            a.clone()
        };
        let same_segment = k0 / c.segment_frames == (k0 + 1) / c.segment_frames;
        for (i, t) in c.tracks.iter().enumerate() {
            let slot = &mut out[usize::from(t.joint)];
            let (pa, pb) = (seg_track(k0, i), seg_track(k0 + u32::from(alpha > 0.0), i));
            let (va, vb) = (a[i], b[i]);
            if alpha <= 0.0 {
                match t.kind {
                    TrackKind::Rotation => slot.rotation = model_rotation(t, pa.drop, va),
                    TrackKind::Translation => slot.translation = Vec3::new(va[0], va[1], va[2]),
                    TrackKind::Scale => slot.scale = Vec3::new(va[0], va[1], va[2]),
                }
                continue;
            }
            let rotate_apart = t.kind == TrackKind::Rotation
                && t.comps == 3
                && va[0] * vb[0] + va[1] * vb[1] + va[2] * vb[2] < 0.0;
            if same_segment && t.comps > 0 && !rotate_apart {
                let mut m = [0.0f32; 4];
                for j in 0..4 {
                    m[j] = va[j] + (vb[j] - va[j]) * alpha;
                }
                match t.kind {
                    TrackKind::Rotation => {
                        slot.rotation = rotation_from_components(t.comps, pa.drop, m)
                    }
                    TrackKind::Translation => slot.translation = Vec3::new(m[0], m[1], m[2]),
                    TrackKind::Scale => slot.scale = Vec3::new(m[0], m[1], m[2]),
                }
                continue;
            }
            let (x, y) = (
                Vec3::new(va[0], va[1], va[2]),
                Vec3::new(vb[0], vb[1], vb[2]),
            );
            match t.kind {
                TrackKind::Rotation => {
                    slot.rotation = nlerp(
                        model_rotation(t, pa.drop, va),
                        model_rotation(t, pb.drop, vb),
                        alpha,
                    )
                }
                TrackKind::Translation => slot.translation = x.lerp(y, alpha),
                TrackKind::Scale => slot.scale = x.lerp(y, alpha),
            }
        }
        out
    }

    /// A clip with large random steps between frames (so drop-W keys point apart), animated
    /// translations and non-unit scales on every joint.
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
    fn rotations_pointing_apart_are_marked_and_sampled_like_the_model() {
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
        // The test exercises both fast rotation ops.
        assert!(c.seg_tracks.iter().any(|p| p.op == OP_ROTATION3_CHECKED));
        assert!(c.seg_tracks.iter().any(|p| p.op == OP_ROTATION3));
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
