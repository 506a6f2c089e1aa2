//! Per-frame signal helpers shared by the generators: windowed speeds, percentiles, hysteresis
//! thresholds, gap filling, minimum durations and the conversion of per-frame states to ranges.
//!
//! They take slices in and write into caller buffers or return new vectors; only [`percentile`]
//! allocates (a copy to select in).

use glam::Vec3;

use crate::core::tags::Range;

/// Number of frames in `secs` seconds at `fps`, rounded, at least `min`.
pub fn frames_for(secs: f32, fps: f32, min: usize) -> usize {
    let f = (secs.max(0.0) * fps).round();
    if f.is_nan() {
        min
    } else {
        // `as` saturates: a duration past every clip (1e37 s, whose product overflows to
        // infinity) is the most frames, not the fewest.
        (f as usize).max(min)
    }
}

/// Speed per frame of a point track (units per second): the distance between the positions `half`
/// frames before and after, divided by the time between them (a central difference averaged over
/// `2 * half` frames; one-sided at the ends). `horizontal` ignores Y. Writes `out` (resized).
pub fn windowed_speed(
    positions: &[Vec3],
    fps: f32,
    half: usize,
    horizontal: bool,
    out: &mut Vec<f32>,
) {
    let n = positions.len();
    out.clear();
    out.resize(n, 0.0);
    if n < 2 {
        return;
    }
    let half = half.max(1);
    for (f, o) in out.iter_mut().enumerate() {
        let lo = f.saturating_sub(half);
        let hi = f.saturating_add(half).min(n - 1);
        let mut d = positions[hi] - positions[lo];
        if horizontal {
            d.y = 0.0;
        }
        *o = d.length() * fps / (hi - lo) as f32;
    }
}

/// Stillness speed per frame of a point track (units per second, 3D): the smaller of the backward
/// and forward speeds over `half` frames, `min(|p[f] - p[f - half]|, |p[f + half] - p[f]|) / half`
/// (one side only at the ends). A point that has just arrived, or is about to leave, is still on one
/// side: a foot that stops for exactly `k` frames is still on exactly those `k` frames.
pub fn still_speed(positions: &[Vec3], fps: f32, half: usize, out: &mut Vec<f32>) {
    let n = positions.len();
    out.clear();
    out.resize(n, 0.0);
    if n < 2 {
        return;
    }
    let half = half.max(1);
    for (f, o) in out.iter_mut().enumerate() {
        let back = (f > 0).then(|| {
            let lo = f.saturating_sub(half);
            (positions[f] - positions[lo]).length() / (f - lo) as f32
        });
        let fwd = (f + 1 < n).then(|| {
            let hi = f.saturating_add(half).min(n - 1);
            (positions[hi] - positions[f]).length() / (hi - f) as f32
        });
        let per_frame = match (back, fwd) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => 0.0,
        };
        *o = per_frame * fps;
    }
}

/// Rate of change per second of a scalar track, by the same windowed central difference as
/// [`windowed_speed`] (signed).
pub fn windowed_rate(values: &[f32], fps: f32, half: usize, out: &mut Vec<f32>) {
    let n = values.len();
    out.clear();
    out.resize(n, 0.0);
    if n < 2 {
        return;
    }
    let half = half.max(1);
    for (f, o) in out.iter_mut().enumerate() {
        let lo = f.saturating_sub(half);
        let hi = f.saturating_add(half).min(n - 1);
        *o = (values[hi] - values[lo]) * fps / (hi - lo) as f32;
    }
}

/// The `q`-quantile (`0..=1`) of `values` (nearest rank on a copy; NaNs are ignored). `None` when
/// there is no finite value.
pub fn percentile(values: &[f32], q: f32) -> Option<f32> {
    let mut v: Vec<f32> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    let k = ((v.len() - 1) as f32 * q.clamp(0.0, 1.0)).round() as usize;
    let (_, x, _) = v.select_nth_unstable_by(k, f32::total_cmp);
    Some(*x)
}

pub use crate::core::settings::Side;

/// Hysteresis on one signal: the state turns on when the value passes `enter` and off when it
/// passes back over `leave`. Frames with a non-finite value are off. Writes `out` (resized).
pub fn hysteresis(values: &[f32], side: Side, enter: f32, leave: f32, out: &mut Vec<bool>) {
    out.clear();
    out.reserve(values.len());
    let mut on = false;
    for &v in values {
        on = if !v.is_finite() {
            false
        } else {
            match (side, on) {
                (Side::Below, false) => v < enter,
                (Side::Below, true) => v <= leave,
                (Side::Above, false) => v > enter,
                (Side::Above, true) => v >= leave,
            }
        };
        out.push(on);
    }
}

/// Turns off runs of `true` shorter than `min_frames`.
pub fn drop_short(states: &mut [bool], min_frames: usize) {
    let mut f = 0;
    while f < states.len() {
        if states[f] {
            let start = f;
            while f < states.len() && states[f] {
                f += 1;
            }
            if f - start < min_frames {
                states[start..f].fill(false);
            }
        } else {
            f += 1;
        }
    }
}

/// Turns on interior runs of `false` shorter than `max_gap_frames` (gaps at the clip's ends stay).
pub fn fill_gaps(states: &mut [bool], max_gap_frames: usize) {
    if max_gap_frames == 0 {
        return;
    }
    let mut f = 0;
    while f < states.len() {
        if !states[f] {
            let start = f;
            while f < states.len() && !states[f] {
                f += 1;
            }
            if start > 0 && f < states.len() && f - start < max_gap_frames {
                states[start..f].fill(true);
            }
        } else {
            f += 1;
        }
    }
}

/// The runs of `true` as canonical half-open ranges (sorted, disjoint, non-adjacent).
pub fn ranges_of(states: &[bool]) -> Vec<Range> {
    let mut out = Vec::new();
    let mut open: Option<usize> = None;
    for (f, &s) in states.iter().enumerate() {
        match (s, open) {
            (true, None) => open = Some(f),
            (false, Some(start)) => {
                out.push(Range::new(start as u32, f as u32));
                open = None;
            }
            _ => {}
        }
    }
    if let Some(start) = open {
        out.push(Range::new(start as u32, states.len() as u32));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Durations become frames rounded, at least the minimum; one too long for any clip is the
    /// most frames (its product overflowed to infinity and became the fewest).
    #[test]
    fn durations_become_frames_and_huge_ones_saturate() {
        assert_eq!(frames_for(0.5, 30.0, 1), 15);
        assert_eq!(frames_for(0.0, 30.0, 1), 1);
        assert_eq!(frames_for(-1.0, 30.0, 3), 3);
        assert_eq!(frames_for(f32::NAN, 30.0, 2), 2);
        assert_eq!(frames_for(1e35, 120.0, 1), usize::MAX);
        assert_eq!(frames_for(1e37, 120.0, 1), usize::MAX);
        // Such a window spans the whole clip (its end was `frame + half`, an overflow).
        let mut out = Vec::new();
        windowed_rate(&[0.0, 1.0, 2.0], 30.0, usize::MAX, &mut out);
        assert_eq!(out, [30.0; 3]);
        let p = [Vec3::ZERO, Vec3::X, Vec3::X * 2.0];
        still_speed(&p, 30.0, usize::MAX, &mut out);
        assert!(out.iter().all(|v| v.is_finite()), "{out:?}");
        windowed_speed(&p, 30.0, usize::MAX, false, &mut out);
        assert!(out.iter().all(|v| v.is_finite()), "{out:?}");
    }

    #[test]
    fn hysteresis_needs_the_leave_threshold_to_switch_off() {
        let v = [5.0, 3.0, 1.9, 2.5, 3.5, 4.1, 2.5, 1.0];
        let mut s = Vec::new();
        hysteresis(&v, Side::Below, 2.0, 4.0, &mut s);
        assert_eq!(s, [false, false, true, true, true, false, false, true]);
        hysteresis(&v, Side::Above, 4.0, 3.0, &mut s);
        assert_eq!(s, [true, true, false, false, false, true, false, false]);
    }

    #[test]
    fn gaps_fill_and_short_runs_drop() {
        let mut s = [true, false, true, true, false, false, false, true, false];
        fill_gaps(&mut s, 2);
        assert_eq!(
            s,
            [true, true, true, true, false, false, false, true, false]
        );
        drop_short(&mut s, 2);
        assert_eq!(
            s,
            [true, true, true, true, false, false, false, false, false]
        );
        assert_eq!(ranges_of(&s), [Range::new(0, 4)]);
        assert_eq!(
            ranges_of(&[false, true, false, true]),
            [Range::new(1, 2), Range::new(3, 4)]
        );
    }

    #[test]
    fn windowed_speed_of_a_constant_velocity_is_exact_and_percentile_is_robust() {
        let p: Vec<Vec3> = (0..10)
            .map(|f| Vec3::new(f as f32 * 2.0, 1.0, 0.0))
            .collect();
        let mut s = Vec::new();
        windowed_speed(&p, 30.0, 2, true, &mut s);
        assert!(s.iter().all(|&x| (x - 60.0).abs() < 1e-4), "{s:?}");
        let mut v: Vec<f32> = (0..100).map(|x| x as f32).collect();
        v[0] = -1000.0;
        assert_eq!(percentile(&v, 0.05), Some(5.0));
        assert_eq!(percentile(&[], 0.5), None);
        // Still on the arrival and departure frames of a stop.
        let p: Vec<Vec3> = [0.0, 1.0, 2.0, 2.0, 2.0, 3.0]
            .iter()
            .map(|&x| Vec3::new(x, 0.0, 0.0))
            .collect();
        still_speed(&p, 10.0, 1, &mut s);
        assert_eq!(s, [10.0, 10.0, 0.0, 0.0, 0.0, 10.0]);
    }
}
