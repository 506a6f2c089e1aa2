//! Key reduction with an error bound, stored in the BitSquid layout: every kept key of every track
//! goes into one stream sorted by the time it is *needed* (a track's key `i + 1` is needed as soon
//! as playback passes its key `i`), a playing instance keeps an active array (the two keys around
//! the play head for each track) and consumes the stream forward, and jump frames every `K`
//! frames store a full active array so seeking only replays the stream from the previous jump.
//! See `docs/COMPRESSION.md` ("Key reduction and the time-sorted stream").
// Parallel per-joint / per-component arrays are indexed together; index loops read clearer.
#![allow(clippy::needless_range_loop)]

use glam::Vec3;
use serde::{Deserialize, Serialize};

use super::metric::{ErrorReport, clip_pose, measure};
use super::quat_pack::{from_drop_w, positive_w};
use crate::core::anim::nlerp;
use crate::core::anim::{Clip, Transform};

/// Settings of the key-reduced stream.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StreamSettings {
    /// Error bound of the key reduction, cm at the shell distance (default 0.01). Each track's
    /// tolerance is derived from it and the track's reach (see the docs); the real error is then
    /// measured with the metric and reported.
    pub error_cm: f32,
    /// A jump frame every `jump_frames` frames (default 60). 0 = no jump frame (seek replays from 0).
    pub jump_frames: u32,
    /// Virtual vertex distance, cm (default 3).
    pub shell_cm: f32,
}

impl Default for StreamSettings {
    fn default() -> Self {
        Self {
            error_cm: 0.01,
            jump_frames: 60,
            shell_cm: 3.0,
        }
    }
}

/// Bytes of one stream entry: track (u16), key frame (u32), three u16 components.
pub const ENTRY_BYTES: usize = 12;
/// Bytes of one key inside a jump frame: frame (u32) and three u16 components.
pub const JUMP_KEY_BYTES: usize = 10;
/// Bytes of a track descriptor: joint u16, kind u8, pad u8, min and extent per component 6 x f32.
pub const TRACK_BYTES: usize = 28;

#[derive(Debug, Clone, Copy, PartialEq)]
struct StreamTrack {
    joint: usize,
    /// 0 rotation (drop-W over [-1, 1]), 1 translation, 2 scale (over the track range).
    kind: u8,
    min: [f32; 3],
    ext: [f32; 3],
}

/// One kept key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Key {
    pub frame: u32,
    pub q: [u16; 3],
}

/// One stream entry: a key of a track, placed at the frame it is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub need_frame: u32,
    pub track: u32,
    pub key: Key,
}

#[derive(Debug, Clone, PartialEq)]
struct Jump {
    /// First entry not yet consumed at the jump frame.
    next_entry: u32,
    active: Vec<[Key; 2]>,
}

/// A key-reduced clip in the time-sorted stream layout.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyStream {
    joints: usize,
    frame_count: u32,
    fps: f32,
    rest: Vec<Transform>,
    tracks: Vec<StreamTrack>,
    entries: Vec<Entry>,
    jump_frames: u32,
    jumps: Vec<Jump>,
}

/// Sizes and costs of a stream, for comparisons.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamReport {
    pub keys_kept: usize,
    pub keys_total: usize,
    pub stream_bytes: usize,
    pub jump_bytes: usize,
    /// Header (32) + track descriptors + stream + jump frames.
    pub total_bytes: usize,
    pub ratio: f64,
    /// Mean number of stream entries replayed by a seek to a random frame.
    pub mean_seek_entries: f64,
    pub error: ErrorReport,
}

fn q16(x: f32, min: f32, ext: f32) -> u16 {
    if ext <= 0.0 {
        return 0;
    }
    (((x - min) / ext).clamp(0.0, 1.0) * 65535.0).round() as u16
}

fn dq16(q: u16, min: f32, ext: f32) -> f32 {
    min + ext * (f32::from(q) / 65535.0)
}

impl StreamTrack {
    fn encode(&self, t: &Transform) -> [u16; 3] {
        let v = self.raw(t);
        [
            q16(v[0], self.min[0], self.ext[0]),
            q16(v[1], self.min[1], self.ext[1]),
            q16(v[2], self.min[2], self.ext[2]),
        ]
    }
    fn raw(&self, t: &Transform) -> [f32; 3] {
        match self.kind {
            0 => {
                let q = positive_w(t.rotation);
                [q.x, q.y, q.z]
            }
            1 => t.translation.to_array(),
            _ => t.scale.to_array(),
        }
    }
    fn decode(&self, q: [u16; 3]) -> [f32; 3] {
        [
            dq16(q[0], self.min[0], self.ext[0]),
            dq16(q[1], self.min[1], self.ext[1]),
            dq16(q[2], self.min[2], self.ext[2]),
        ]
    }
    fn apply(&self, out: &mut Transform, a: &Key, b: &Key, frame: f32) {
        let va = self.decode(a.q);
        let alpha = if b.frame > a.frame {
            ((frame - a.frame as f32) / (b.frame - a.frame) as f32).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let vb = self.decode(b.q);
        match self.kind {
            0 => {
                let qa = from_drop_w(va[0], va[1], va[2]);
                let qb = from_drop_w(vb[0], vb[1], vb[2]);
                out.rotation = nlerp(qa, qb, alpha);
            }
            1 => out.translation = Vec3::from(va).lerp(Vec3::from(vb), alpha),
            _ => out.scale = Vec3::from(va).lerp(Vec3::from(vb), alpha),
        }
    }
}

/// Distance from each joint to its farthest descendant in the rest pose (file units).
fn reach(clip: &Clip) -> Vec<f32> {
    let n = clip.joint_count();
    let mut r = vec![0.0f32; n];
    for i in (0..n).rev() {
        if let Some(p) = clip.skeleton.parents[i] {
            let len = clip.skeleton.rest[i].translation.length();
            r[p] = r[p].max(r[i] + len);
        }
    }
    r
}

impl KeyStream {
    /// Key-reduces a clip and lays it out as a time-sorted stream with jump frames.
    pub fn encode(clip: &Clip, settings: &StreamSettings) -> Result<Self, String> {
        clip.validate()?;
        if clip.frame_count == 0 || clip.frame_count > u32::MAX as usize / 2 {
            return Err(format!("frame count {} out of range", clip.frame_count));
        }
        if !(settings.error_cm.is_finite() && settings.error_cm > 0.0) {
            return Err(format!(
                "error_cm must be positive, found {}",
                settings.error_cm
            ));
        }
        let n = clip.joint_count();
        let frames = clip.frame_count;
        let reach = reach(clip);
        let shell_units = settings.shell_cm / clip.unit_cm;
        let tol_units = settings.error_cm / clip.unit_cm;
        let mut tracks = Vec::new();
        let mut per_track_keys: Vec<Vec<Key>> = Vec::new();
        let mut pose = vec![Transform::IDENTITY; n];
        let mut poses = vec![Transform::IDENTITY; n * frames];
        for f in 0..frames {
            clip_pose(clip, f, &mut pose);
            poses[f * n..(f + 1) * n].copy_from_slice(&pose);
        }
        for j in 0..n {
            for kind in 0..3u8 {
                let mut t = StreamTrack {
                    joint: j,
                    kind,
                    min: [-1.0; 3],
                    ext: [2.0; 3],
                };
                if kind != 0 {
                    let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
                    for f in 0..frames {
                        let v = t.raw(&poses[f * n + j]);
                        for c in 0..3 {
                            lo[c] = lo[c].min(v[c]);
                            hi[c] = hi[c].max(v[c]);
                        }
                    }
                    t.min = lo;
                    t.ext = [hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]];
                }
                // Tolerance: a rotation error of `a` radians moves the farthest point of the
                // subtree (or the shell vertex) by about `a * (reach + shell)`.
                let tol = if kind == 0 {
                    tol_units * 0.5 / (reach[j] + shell_units)
                } else {
                    tol_units * 0.5
                };
                let quant: Vec<[u16; 3]> =
                    (0..frames).map(|f| t.encode(&poses[f * n + j])).collect();
                let dist = |a: &[u16; 3], b: &[u16; 3], fa: usize, fb: usize, f: usize| -> f32 {
                    let alpha = (f - fa) as f32 / (fb - fa) as f32;
                    let va = t.decode(*a);
                    let vb = t.decode(*b);
                    let orig = &poses[f * n + j];
                    if kind == 0 {
                        let q = nlerp(
                            from_drop_w(va[0], va[1], va[2]),
                            from_drop_w(vb[0], vb[1], vb[2]),
                            alpha,
                        );
                        let d = q.dot(orig.rotation).abs().min(1.0);
                        2.0 * d.acos()
                    } else {
                        let v = Vec3::from(va).lerp(Vec3::from(vb), alpha);
                        let o = Vec3::from(t.raw(orig));
                        (v - o).length()
                    }
                };
                // Greedy: from each kept key, reach as far as every in-between frame allows.
                // The end is found by doubling the span until a frame is out of tolerance,
                // then halving between the last good end and the first bad one: a span of L
                // frames costs O(L log L) checks, not the O(L^2) of trying every end in turn
                // (a still joint of a 40,000-frame take is one span).
                let mut keys = vec![Key {
                    frame: 0,
                    q: quant[0],
                }];
                let last = frames - 1;
                let mut a = 0usize;
                while a < last {
                    let reaches =
                        |e: usize| (a + 1..e).all(|f| dist(&quant[a], &quant[e], a, e, f) <= tol);
                    let (mut good, mut bad) = (a + 1, last + 1);
                    let mut span = 2;
                    while good < last {
                        let e = (a + span).min(last);
                        if reaches(e) {
                            good = e;
                            span *= 2;
                        } else {
                            bad = e;
                            break;
                        }
                    }
                    while bad - good > 1 {
                        let mid = good + (bad - good) / 2;
                        if reaches(mid) {
                            good = mid;
                        } else {
                            bad = mid;
                        }
                    }
                    let b = good;
                    keys.push(Key {
                        frame: b as u32,
                        q: quant[b],
                    });
                    a = b;
                }
                tracks.push(t);
                per_track_keys.push(keys);
            }
        }
        // Time-sorted stream: key i + 1 is needed at the frame of key i; the first two at 0.
        let mut entries = Vec::new();
        for (ti, keys) in per_track_keys.iter().enumerate() {
            for (i, k) in keys.iter().enumerate() {
                let need = if i == 0 { 0 } else { keys[i - 1].frame };
                entries.push(Entry {
                    need_frame: need,
                    track: ti as u32,
                    key: *k,
                });
            }
        }
        entries.sort_by_key(|e| (e.need_frame, e.track, e.key.frame));
        let mut s = Self {
            joints: n,
            frame_count: frames as u32,
            fps: clip.fps,
            rest: clip.skeleton.rest.clone(),
            tracks,
            entries,
            jump_frames: settings.jump_frames,
            jumps: Vec::new(),
        };
        if settings.jump_frames > 0 {
            let mut player = StreamPlayer::new(&s);
            let mut jumps = Vec::new();
            let mut f = 0;
            while f < s.frame_count {
                player.advance_to(&s, f);
                jumps.push(Jump {
                    next_entry: player.next_entry as u32,
                    active: player.active.clone(),
                });
                f += settings.jump_frames;
            }
            s.jumps = jumps;
        }
        Ok(s)
    }

    /// Bytes of the stream entries (two more each when the track index needs four bytes).
    pub fn stream_bytes(&self) -> usize {
        let wide = if self.tracks.len() > 1 << 16 { 2 } else { 0 };
        self.entries.len() * (ENTRY_BYTES + wide)
    }
    /// Bytes of the jump frames: entry index (u32) + two keys per track each.
    pub fn jump_bytes(&self) -> usize {
        self.jumps.len() * (4 + self.tracks.len() * 2 * JUMP_KEY_BYTES)
    }
    pub fn total_bytes(&self) -> usize {
        32 + self.tracks.len() * TRACK_BYTES + self.stream_bytes() + self.jump_bytes()
    }
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Measures the stream against its original clip.
    pub fn report(&self, original: &Clip, shell_cm: f32) -> StreamReport {
        let mut player = StreamPlayer::new(self);
        let error = measure(original, shell_cm, |p, out| {
            // (advance_to seeks back for the scattered times)
            player.advance_to(self, p.max(0.0) as u32);
            player.sample(self, p, out);
        });
        let mut seeks = 0usize;
        let probes = self.frame_count.min(997);
        for i in 0..probes {
            let f = (u64::from(i) * 7919 % u64::from(self.frame_count)) as u32;
            seeks += player.seek(self, f);
        }
        let raw = super::encode::raw_size_bytes(original);
        StreamReport {
            keys_kept: self.entries.len(),
            keys_total: self.tracks.len() * self.frame_count as usize,
            stream_bytes: self.stream_bytes(),
            jump_bytes: self.jump_bytes(),
            total_bytes: self.total_bytes(),
            ratio: raw as f64 / self.total_bytes() as f64,
            mean_seek_entries: seeks as f64 / f64::from(probes.max(1)),
            error,
        }
    }
}

/// The per-instance state of a playing stream: the active array (two keys per track) and the
/// position in the stream.
#[derive(Debug, Clone)]
pub struct StreamPlayer {
    active: Vec<[Key; 2]>,
    next_entry: usize,
    frame: u32,
}

impl StreamPlayer {
    pub fn new(s: &KeyStream) -> Self {
        let mut p = Self {
            active: vec![[Key::default(); 2]; s.tracks.len()],
            next_entry: 0,
            frame: 0,
        };
        p.consume(s, 0);
        p
    }

    fn consume(&mut self, s: &KeyStream, frame: u32) -> usize {
        let start = self.next_entry;
        while let Some(e) = s.entries.get(self.next_entry) {
            if e.need_frame > frame {
                break;
            }
            let a = &mut self.active[e.track as usize];
            // The first two entries of a track (both needed at frame 0) fill both slots.
            if e.key.frame == 0 {
                *a = [e.key, e.key];
            } else {
                *a = [a[1], e.key];
            }
            self.next_entry += 1;
        }
        self.frame = frame;
        self.next_entry - start
    }

    /// Moves the play head forward to `frame` (a backward move seeks). Returns the entries read.
    pub fn advance_to(&mut self, s: &KeyStream, frame: u32) -> usize {
        if frame < self.frame {
            return self.seek(s, frame);
        }
        self.consume(s, frame)
    }

    /// Jumps to `frame` from the closest jump frame before it. Returns the entries replayed.
    pub fn seek(&mut self, s: &KeyStream, frame: u32) -> usize {
        let frame = frame.min(s.frame_count - 1);
        if s.jump_frames > 0 && !s.jumps.is_empty() {
            let j = ((frame / s.jump_frames) as usize).min(s.jumps.len() - 1);
            let jump = &s.jumps[j];
            self.active.clone_from(&jump.active);
            self.next_entry = jump.next_entry as usize;
            self.frame = j as u32 * s.jump_frames;
        } else {
            *self = Self::new(s);
        }
        self.consume(s, frame)
    }

    /// Samples the local pose at a frame position at or after the play head's frame and before
    /// the next key of every track (call `advance_to(floor(frame))` first).
    pub fn sample(&self, s: &KeyStream, frame: f32, out: &mut [Transform]) {
        out[..s.joints].copy_from_slice(&s.rest);
        for (t, a) in s.tracks.iter().zip(&self.active) {
            t.apply(&mut out[t.joint], &a[0], &a[1], frame);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::compress::synth::synthetic_clip;

    #[test]
    fn stream_reduces_keys_and_seeks_agree_with_playback() {
        let clip = synthetic_clip(12, 240, 120.0, 4);
        let s = KeyStream::encode(&clip, &StreamSettings::default()).unwrap();
        let r = s.report(&clip, 3.0);
        assert!(
            r.keys_kept < r.keys_total / 2,
            "{} of {}",
            r.keys_kept,
            r.keys_total
        );
        // Entries are sorted by need time.
        assert!(
            s.entries
                .windows(2)
                .all(|w| w[0].need_frame <= w[1].need_frame)
        );
        // Seeking to any frame gives the same pose as playing up to it.
        let mut play = StreamPlayer::new(&s);
        let mut seek = StreamPlayer::new(&s);
        let mut a = vec![Transform::IDENTITY; 12];
        let mut b = vec![Transform::IDENTITY; 12];
        for f in 0..240u32 {
            play.advance_to(&s, f);
            seek.seek(&s, f);
            play.sample(&s, f as f32, &mut a);
            seek.sample(&s, f as f32, &mut b);
            assert_eq!(a, b, "frame {f}");
        }
        // A tighter bound keeps more keys and lowers the error.
        let tight = KeyStream::encode(
            &clip,
            &StreamSettings {
                error_cm: 0.002,
                ..Default::default()
            },
        )
        .unwrap();
        let rt = tight.report(&clip, 3.0);
        assert!(rt.keys_kept > r.keys_kept);
        assert!(rt.error.max_error_cm < r.error.max_error_cm);
        // More jump frames: more memory, shorter seeks.
        let dense = KeyStream::encode(
            &clip,
            &StreamSettings {
                jump_frames: 10,
                ..Default::default()
            },
        )
        .unwrap();
        let rd = dense.report(&clip, 3.0);
        assert!(rd.jump_bytes > r.jump_bytes);
        assert!(rd.mean_seek_entries < r.mean_seek_entries);
    }

    /// A still take keeps two keys a track (its first and last frame), however long: the span's
    /// end is searched, not walked (the walk checked 2 x 10^8 frames a track here).
    #[test]
    fn a_still_take_keeps_two_keys_a_track() {
        let mut clip = synthetic_clip(4, 20_000, 120.0, 1);
        let n = clip.joint_count();
        for f in 1..clip.frame_count {
            for j in 0..n {
                clip.rotations[f * n + j] = clip.rotations[j];
                clip.translations[f * n + j] = clip.translations[j];
                clip.scales[f * n + j] = clip.scales[j];
            }
        }
        let s = KeyStream::encode(&clip, &StreamSettings::default()).unwrap();
        assert_eq!(s.entries.len(), 2 * 3 * n);
        let last = (clip.frame_count - 1) as u32;
        assert!(
            s.entries
                .iter()
                .all(|e| e.key.frame == 0 || e.key.frame == last)
        );
        // A one-frame bump in the middle of a still track is kept exactly: the spans around it
        // end on it (every frame in between is checked).
        let mid = 12_345;
        clip.translations[mid * n] += Vec3::new(5.0, 0.0, 0.0);
        let s = KeyStream::encode(&clip, &StreamSettings::default()).unwrap();
        let mut play = StreamPlayer::new(&s);
        let mut pose = vec![Transform::IDENTITY; n];
        for f in [mid - 1, mid, mid + 1] {
            play.seek(&s, f as u32);
            play.sample(&s, f as f32, &mut pose);
            let want = clip.translations[f * n];
            assert!(
                (pose[0].translation - want).length() < 0.01,
                "frame {f}: {:?} against {want:?}",
                pose[0].translation
            );
        }
    }

    /// More than 65,536 tracks (three a joint): every track keeps its own keys.
    #[test]
    fn tracks_past_a_16_bit_index_keep_their_own_keys() {
        let joints = 21_846;
        let frames = 6;
        let clip = synthetic_clip(joints, frames, 30.0, 9);
        let s = KeyStream::encode(&clip, &StreamSettings::default()).unwrap();
        assert!(s.tracks.len() > 1 << 16);
        let mut player = StreamPlayer::new(&s);
        let mut out = vec![Transform::IDENTITY; joints];
        let mut want = vec![Transform::IDENTITY; joints];
        for f in 0..frames {
            player.advance_to(&s, f as u32);
            player.sample(&s, f as f32, &mut out);
            clip_pose(&clip, f, &mut want);
            for j in [0, 1, joints - 1] {
                let d = (out[j].translation - want[j].translation).length();
                assert!(d < 0.1, "frame {f}, joint {j}: {d}");
                let dot = out[j].rotation.dot(want[j].rotation).abs();
                assert!(dot > 0.999, "frame {f}, joint {j}: {dot}");
            }
        }
        assert_eq!(s.stream_bytes(), s.entries.len() * (ENTRY_BYTES + 2));
    }
}
