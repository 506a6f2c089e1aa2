//! The `.tlc` compressed clip: writer, validating reader and decoder (random-access sampling).
//!
//! The byte layout is documented field by field in `docs/TLC_FORMAT.md`. The encoder builds a
//! [`Plan`], serialises it with [`write_plan`], and reads the bytes back with
//! [`CompressedClip::from_bytes`]: every decoded value the encoder measures comes from the same
//! reader and decoder the user runs.
// Parallel per-joint / per-component arrays are indexed together; index loops read clearer.
#![allow(clippy::needless_range_loop)]

use glam::{Quat, Vec3};

use super::bits::{crc32, max_q, read_bits};
use super::quat_pack::{from_drop_w, unpack_smallest_three};
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
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SegTrack {
    pub width: u8,
    /// Dropped quaternion component (0 x, 1 y, 2 z, 3 w) or [`NO_DROP`].
    pub drop: u8,
    /// Per stored slot (kept components in order).
    pub offset: [f32; 4],
    pub scale: [f32; 4],
    /// Bit offset of this track inside one key of the segment (the per-bone offsets).
    pub bit_in_key: u32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct SegmentInfo {
    start_key: u32,
    /// Absolute bit position of the segment's first key in `data`.
    data_bit: usize,
    key_bits: u32,
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
        if drop == 3 {
            return from_drop_w(c[0], c[1], c[2]);
        }
        let kept = kept_components(drop);
        let mut a = [0.0f32; 4];
        a[kept[0]] = c[0];
        a[kept[1]] = c[1];
        a[kept[2]] = c[2];
        let w2 = 1.0 - (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
        a[usize::from(drop) & 3] = w2.max(0.0).sqrt();
        let q = Quat::from_array(a);
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
        let (segments, seg_tracks, data) = if tracks.is_empty() {
            (Vec::new(), Vec::new(), vec![0u8; 8])
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
                    if track.comps == 0 {
                        st[t].bit_in_key = bit;
                        bit += u32::from(track.packed_bits);
                        continue;
                    }
                    let code = (header[ri / 2] >> ((ri % 2) * 4)) & 0xF;
                    let width = WIDTHS[usize::from(code)];
                    ri += 1;
                    st[t].width = width;
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
            (segments, seg_tracks, data)
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
        let n = self.tracks.len();
        self.seg_tracks[s * n..(s + 1) * n]
            .iter()
            .zip(&self.tracks)
            .filter(|(_, t)| t.comps > 0)
            .map(|(st, _)| st.width)
    }

    /// Samples the local pose at time `time_s` (clamped to `[0, duration]`), interpolating the two
    /// neighbouring frames (translation and scale lerp, rotation nlerp on the shortest path).
    /// `out` must hold one transform per joint; extra entries are left alone.
    pub fn sample_pose(&self, time_s: f32, out: &mut [Transform]) {
        self.sample_pose_at_frame(time_s * self.fps, out);
    }

    /// Samples the local pose at a (fractional) frame position of the original clip.
    pub fn sample_pose_at_frame(&self, frame: f32, out: &mut [Transform]) {
        let (k0, alpha) = self.key_position(frame);
        let out = &mut out[..self.static_pose.len()];
        if alpha > 0.0 && !self.tracks.is_empty() && (k0 + 1) % self.segment_frames != 0 {
            self.decode_lerp_in_segment(k0, alpha, out);
            return;
        }
        self.decode_key(k0, out);
        if alpha > 0.0 {
            self.blend_key(k0 + 1, alpha, out);
        }
    }

    /// Keys `k0` and `k0 + 1` in the same segment: one pass that interpolates the stored
    /// components and rebuilds each rotation once. Both keys share the segment's dropped component
    /// and its sign, so this is nlerp for full quaternions and, for drop-W, the same path up to
    /// second order in the angle between the keys (exact at the keys).
    fn decode_lerp_in_segment(&self, k0: u32, alpha: f32, out: &mut [Transform]) {
        out.copy_from_slice(&self.static_pose);
        let s = (k0 / self.segment_frames) as usize;
        let seg = &self.segments[s];
        let mut pa = seg.data_bit + (k0 - seg.start_key) as usize * seg.key_bits as usize;
        let mut pb = pa + seg.key_bits as usize;
        let n = self.tracks.len();
        let st = &self.seg_tracks[s * n..(s + 1) * n];
        let data = &self.data[..];
        for (t, p) in self.tracks.iter().zip(st) {
            let slot = &mut out[usize::from(t.joint)];
            if t.comps == 0 {
                let a = self.read_rotation(t, p, &mut pa);
                let b = self.read_rotation(t, p, &mut pb);
                slot.rotation = nlerp(a, b, alpha);
                continue;
            }
            let w = p.width;
            let wb = u32::from(w);
            let mut va = [0.0f32; 4];
            let mut vb = [0.0f32; 4];
            let mut dot = 0.0f32;
            for i in 0..usize::from(t.comps) {
                let qa = read_bits(data, pa + wb as usize * i, wb);
                let qb = read_bits(data, pb + wb as usize * i, wb);
                va[i] = dequantize_component(qa, p.offset[i], p.scale[i], w);
                vb[i] = dequantize_component(qb, p.offset[i], p.scale[i], w);
                dot += va[i] * vb[i];
            }
            let used = wb as usize * usize::from(t.comps);
            pa += used;
            pb += used;
            if t.kind == TrackKind::Rotation && t.comps == 3 && dot < 0.0 {
                // Both keys have the dropped component >= 0; when the stored parts point apart the
                // 4D dot may be negative: rebuild both and take nlerp's shortest path instead.
                let a = rotation_from_components(3, p.drop, va);
                let b = rotation_from_components(3, p.drop, vb);
                slot.rotation = nlerp(a, b, alpha);
                continue;
            }
            let mut c = [0.0f32; 4];
            for i in 0..4 {
                c[i] = va[i] + (vb[i] - va[i]) * alpha;
            }

            match t.kind {
                TrackKind::Rotation => slot.rotation = rotation_from_components(t.comps, p.drop, c),
                TrackKind::Translation => slot.translation = Vec3::new(c[0], c[1], c[2]),
                TrackKind::Scale => slot.scale = Vec3::new(c[0], c[1], c[2]),
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

    /// Writes key `k` into `out` (exactly one transform per joint).
    fn decode_key(&self, k: u32, out: &mut [Transform]) {
        out.copy_from_slice(&self.static_pose);
        if self.tracks.is_empty() {
            return;
        }
        let (mut pos, st) = self.key_start(k);
        for (t, p) in self.tracks.iter().zip(st) {
            let slot = &mut out[usize::from(t.joint)];
            match t.kind {
                TrackKind::Rotation => slot.rotation = self.read_rotation(t, p, &mut pos),
                TrackKind::Translation => {
                    slot.translation = read_vec3_bits(&self.data, p, &mut pos)
                }
                TrackKind::Scale => slot.scale = read_vec3_bits(&self.data, p, &mut pos),
            }
        }
    }

    /// Blends key `k` into `out` with weight `alpha`.
    fn blend_key(&self, k: u32, alpha: f32, out: &mut [Transform]) {
        // A clip without animated tracks has no segments (found by fuzzing: sampling a static
        // clip between two frames indexed an empty segment table).
        if self.tracks.is_empty() {
            return;
        }
        let (mut pos, st) = self.key_start(k);
        for (t, p) in self.tracks.iter().zip(st) {
            let slot = &mut out[usize::from(t.joint)];
            match t.kind {
                TrackKind::Rotation => {
                    let b = self.read_rotation(t, p, &mut pos);
                    slot.rotation = nlerp(slot.rotation, b, alpha);
                }
                TrackKind::Translation => {
                    let b = read_vec3_bits(&self.data, p, &mut pos);
                    slot.translation = slot.translation.lerp(b, alpha);
                }
                TrackKind::Scale => {
                    let b = read_vec3_bits(&self.data, p, &mut pos);
                    slot.scale = slot.scale.lerp(b, alpha);
                }
            }
        }
    }

    #[inline]
    fn key_start(&self, k: u32) -> (usize, &[SegTrack]) {
        let s = (k / self.segment_frames) as usize;
        let seg = &self.segments[s];
        let pos = seg.data_bit + (k - seg.start_key) as usize * seg.key_bits as usize;
        let n = self.tracks.len();
        (pos, &self.seg_tracks[s * n..(s + 1) * n])
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
        let (base, st) = self.key_start(k);
        for t in first..end {
            let track = &self.tracks[t];
            let p = &st[t];
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
