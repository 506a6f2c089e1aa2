//! Tag events: which tags a playhead enters and leaves during a play interval `(t0, t1]`.
//!
//! A tag is a list of half-open frame ranges `[start, stop)`. At time `t` the playhead is on frame
//! `floor(t * fps)` (after clamping or looping, as in sampling), and a tag is active when that frame
//! lies in one of its ranges. An event is a change of a tag's state at a frame boundary: entering at
//! `start / fps`, leaving at `stop / fps`.
//!
//! Looping follows the duration convention `(frames - 1) / fps`: the last frame is the first frame
//! of the next cycle, so inside a cycle the playhead visits frames `0 ..= frames - 2`, and at the
//! wrap the state goes from frame `frames - 2` to frame 0 (a tag covering both sides of the wrap
//! raises no event). Without looping, times clamp to `[0, duration]` and frame `frames - 1` is
//! reached at the end.

use super::fk::JobError;
use crate::core::tags::{ClipId, Range, TagDocument};

/// The ranges of every tag of `doc` on one clip, indexed like `doc.tags` (empty for tags that do not
/// occur on the clip): the `tags` argument of [`tag_events`] and [`active_tags`].
pub fn clip_tag_ranges(doc: &TagDocument, clip: ClipId) -> Vec<&[Range]> {
    doc.tags
        .iter()
        .map(|t| t.ranges.get(&clip).unwrap_or(&[]))
        .collect()
}

/// Entering or leaving a tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TagEventKind {
    Leave,
    Enter,
}

/// One state change of one tag.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TagEvent {
    /// Index of the tag in the slice given to [`tag_events`].
    pub tag: usize,
    pub kind: TagEventKind,
    /// The frame the playhead moves onto when the event happens (the range start for an enter, the
    /// range stop, or frame 0 at a loop wrap, for a leave).
    pub frame: u32,
    /// Play time of the event in seconds (on the same timeline as `t0`, `t1`).
    pub time_s: f64,
    /// Loop cycle in which the event happens (0 without looping).
    pub cycle: i64,
}

/// Settings of [`tag_events`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EventSettings {
    /// Frames of the clip.
    pub frame_count: u32,
    /// Frames per second.
    pub fps: f32,
    /// Repeat the clip (see the module documentation); otherwise clamp.
    pub looping: bool,
}

/// At most this many loop cycles are scanned in one call (a bound against absurd intervals).
pub const MAX_CYCLES: i64 = 100_000;

fn is_canonical(ranges: &[Range]) -> bool {
    ranges.iter().all(|r| r.start < r.stop) && ranges.windows(2).all(|w| w[0].stop < w[1].start)
}

/// True when `frame` is in one of `ranges` (binary search on canonical lists, a scan otherwise).
fn member(ranges: &[Range], canonical: bool, frame: u32) -> bool {
    if canonical {
        let i = ranges.partition_point(|r| r.start <= frame);
        i > 0 && ranges[i - 1].contains(frame)
    } else {
        ranges.iter().any(|r| r.contains(frame))
    }
}

/// The frame the playhead is on at time `t`.
pub fn frame_at(settings: &EventSettings, t: f64) -> Option<u32> {
    let n = settings.frame_count;
    if n == 0 || !t.is_finite() || !(settings.fps.is_finite() && settings.fps > 0.0) {
        return None;
    }
    let fps = f64::from(settings.fps);
    let last = f64::from(n - 1);
    let x = t * fps;
    let x = if (x - x.round()).abs() < 1e-6 {
        x.round()
    } else {
        x
    };
    let x = if settings.looping && n > 1 {
        x.rem_euclid(last)
    } else {
        x.clamp(0.0, last)
    };
    Some((x.floor() as u32).min(n - 1))
}

/// The tags active at time `t` (indices into `tags`).
pub fn active_tags(tags: &[&[Range]], settings: &EventSettings, t: f64) -> Vec<usize> {
    let Some(f) = frame_at(settings, t) else {
        return Vec::new();
    };
    tags.iter()
        .enumerate()
        .filter(|(_, r)| member(r, is_canonical(r), f))
        .map(|(i, _)| i)
        .collect()
}

/// Appends to `out` the enter and leave events of every tag during `(t0, t1]`, ordered by time,
/// leaves before enters at the same time, then by tag index. `t1 < t0` is an error (play intervals
/// go forward); an empty interval gives no event.
pub fn tag_events(
    tags: &[&[Range]],
    settings: &EventSettings,
    t0: f64,
    t1: f64,
    out: &mut Vec<TagEvent>,
) -> Result<(), JobError> {
    if !(t0.is_finite() && t1.is_finite()) {
        return Err(JobError::BadParameter(String::from("times must be finite")));
    }
    if t1 < t0 {
        return Err(JobError::BadParameter(format!(
            "the play interval must go forward, found ({t0}, {t1}]"
        )));
    }
    let n = settings.frame_count;
    if !(settings.fps.is_finite() && settings.fps > 0.0) {
        return Err(JobError::BadParameter(format!(
            "fps must be positive, found {}",
            settings.fps
        )));
    }
    if n < 2 || t1 == t0 {
        return Ok(());
    }
    let fps = f64::from(settings.fps);
    let canon: Vec<bool> = tags.iter().map(|r| is_canonical(r)).collect();
    let first = out.len();
    // Boundary frames where some tag may change: every range start and stop.
    let mut boundaries: Vec<u32> = tags
        .iter()
        .flat_map(|r| r.iter().flat_map(|r| [r.start, r.stop]))
        .collect();
    boundaries.sort_unstable();
    boundaries.dedup();
    let last = n - 1;
    // Position in frames with the same snapping as sampling.
    let pos = |t: f64| {
        let x = t * fps;
        if (x - x.round()).abs() < 1e-6 {
            x.round()
        } else {
            x
        }
    };
    let (x0, x1) = (pos(t0), pos(t1));
    let mut emit =
        |b_frame_before: u32, b_frame_after: u32, time_s: f64, cycle: i64, frame: u32| {
            for (i, r) in tags.iter().enumerate() {
                let before = member(r, canon[i], b_frame_before);
                let after = member(r, canon[i], b_frame_after);
                if before != after {
                    out.push(TagEvent {
                        tag: i,
                        kind: if after {
                            TagEventKind::Enter
                        } else {
                            TagEventKind::Leave
                        },
                        frame,
                        time_s,
                        cycle,
                    });
                }
            }
        };
    if settings.looping {
        let period = f64::from(last);
        let k0 = (x0 / period).floor() as i64;
        let k1 = (x1 / period).floor() as i64;
        if k1.saturating_sub(k0) > MAX_CYCLES {
            return Err(JobError::BadParameter(format!(
                "the play interval spans more than {MAX_CYCLES} loop cycles"
            )));
        }
        for k in k0..=k1 {
            let base = k as f64 * period;
            // Boundaries inside the cycle: frames 1 ..= last - 1 (frame `last` is the wrap).
            for &b in boundaries.iter().filter(|&&b| b >= 1 && b < last) {
                let x = base + f64::from(b);
                if x > x0 && x <= x1 {
                    emit(b - 1, b, x / fps, k, b);
                }
            }
            // The wrap at the end of cycle k: frame last - 1 to frame 0.
            let x = base + period;
            if x > x0 && x <= x1 {
                emit(last - 1, 0, x / fps, k + 1, 0);
            }
        }
    } else {
        for &b in boundaries.iter().filter(|&&b| b >= 1 && b <= last) {
            let x = f64::from(b);
            if x > x0 && x <= x1 {
                emit(b - 1, b, x / fps, 0, b);
            }
        }
    }
    out[first..].sort_by(|a, b| {
        a.time_s
            .total_cmp(&b.time_s)
            .then(a.kind.cmp(&b.kind))
            .then(a.tag.cmp(&b.tag))
    });
    Ok(())
}
