//! Timeline layout: the mapping between frames and x, rows and y, and hit testing.

use egui::{Pos2, Rect, pos2};

use super::model::{Edge, Row};
use crate::core::tags::Range;
use crate::ui::theme::{EDGE_GRAB, GROUP_HEIGHT, LANE_HEIGHT};

/// Horizontal mapping of the track area: `x = left + (frame - first_frame) * px_per_frame`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeAxis {
    pub left: f32,
    pub width: f32,
    pub first_frame: f64,
    pub px_per_frame: f64,
}

impl TimeAxis {
    #[inline]
    pub fn x(&self, frame: f64) -> f32 {
        self.left + ((frame - self.first_frame) * self.px_per_frame) as f32
    }

    /// The (fractional) frame at `x`.
    #[inline]
    pub fn frame_at(&self, x: f32) -> f64 {
        self.first_frame + (x - self.left) as f64 / self.px_per_frame
    }

    /// The frame whose cell contains `x` (cell `f` spans `[x(f), x(f+1))`), clamped to `[0, frames)`.
    pub fn cell_at(&self, x: f32, frames: u32) -> u32 {
        let f = self.frame_at(x).floor();
        f.clamp(0.0, frames.saturating_sub(1) as f64) as u32
    }

    /// The frame boundary nearest `x`, clamped to `[0, frames]` (for playhead and edges).
    pub fn boundary_at(&self, x: f32, frames: u32) -> u32 {
        self.frame_at(x).round().clamp(0.0, frames as f64) as u32
    }

    /// Frames visible in the track area.
    pub fn visible_frames(&self) -> f64 {
        self.width as f64 / self.px_per_frame
    }

    /// A ruler tick step (in frames) giving at least `min_px` between ticks, snapped to 1-2-5 and to
    /// whole seconds when the step is a second or more.
    pub fn tick_step(&self, fps: f32, min_px: f32) -> u32 {
        let min_frames = (min_px as f64 / self.px_per_frame).max(1.0);
        let fps = fps.max(1.0).round() as u32;
        let mut candidates: Vec<u32> = vec![1, 2, 5, 10];
        for s in [1u32, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600] {
            candidates.push(s * fps);
        }
        candidates.sort_unstable();
        candidates
            .into_iter()
            .find(|&c| c as f64 >= min_frames)
            .unwrap_or_else(|| {
                // Past an hour a tick: 2, 5, 10, 20, ... hours.
                let hour = 3600.0 * f64::from(fps);
                let mut m = 1.0f64;
                loop {
                    for k in [2.0, 5.0, 10.0] {
                        if hour * m * k >= min_frames {
                            return (hour * m * k).min(f64::from(u32::MAX)) as u32;
                        }
                    }
                    m *= 10.0;
                }
            })
    }
}

/// Vertical layout of the rows below the ruler, scrolled by `scroll_y`.
#[derive(Debug, Clone, PartialEq)]
pub struct RowLayout {
    pub top: f32,
    pub height: f32,
    pub scroll_y: f32,
    /// Top of each row relative to the first row, and the total content height.
    offsets: Vec<f32>,
    pub content_height: f32,
}

impl RowLayout {
    pub fn new(rows: &[Row], top: f32, height: f32, scroll_y: f32) -> Self {
        let mut offsets = Vec::with_capacity(rows.len());
        let mut y = 0.0;
        for row in rows {
            offsets.push(y);
            y += match row {
                Row::Group { .. } => GROUP_HEIGHT,
                Row::Lane { .. } | Row::Extra(_) => LANE_HEIGHT,
            };
        }
        let max_scroll = (y - height).max(0.0);
        Self {
            top,
            height,
            scroll_y: scroll_y.clamp(0.0, max_scroll),
            offsets,
            content_height: y,
        }
    }

    /// Indices of the rows at least partly inside the visible band.
    pub fn visible(&self) -> std::ops::Range<usize> {
        let first = self
            .offsets
            .partition_point(|&o| o + LANE_HEIGHT <= self.scroll_y);
        let last = self
            .offsets
            .partition_point(|&o| o < self.scroll_y + self.height);
        first..last.max(first)
    }

    /// Screen y span of row `i`.
    pub fn row_y(&self, i: usize, rows: &[Row]) -> (f32, f32) {
        let top = self.top + self.offsets[i] - self.scroll_y;
        let h = match rows[i] {
            Row::Group { .. } => GROUP_HEIGHT,
            Row::Lane { .. } | Row::Extra(_) => LANE_HEIGHT,
        };
        (top, top + h)
    }

    /// The row under screen `y`, if any.
    pub fn row_at(&self, y: f32, rows: &[Row]) -> Option<usize> {
        if y < self.top || y >= self.top + self.height {
            return None;
        }
        let rel = y - self.top + self.scroll_y;
        let i = self.offsets.partition_point(|&o| o <= rel).checked_sub(1)?;
        let (_, bottom) = self.row_y(i, rows);
        (y < bottom).then_some(i)
    }
}

/// What the pointer is over inside a lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneHit {
    Edge(Range, Edge),
    Body(Range),
    Empty,
}

/// Hit test of `x` against a lane's ranges: edges win within [`EDGE_GRAB`] points, the nearer edge
/// when a range is narrow; a range at most three grab widths wide (where the edges' grab areas
/// cover it all) keeps its middle third for its body, so that it can still be moved.
pub fn hit_lane(axis: &TimeAxis, ranges: &[Range], x: f32) -> LaneHit {
    let frame = axis.frame_at(x);
    // Candidates: the range containing the pointer and its neighbours (for edges just outside).
    let i = ranges.partition_point(|r| (r.stop as f64) < frame);
    let mut best: Option<(f32, Range, Edge)> = None;
    for r in ranges[i.saturating_sub(1)..(i + 2).min(ranges.len())].iter() {
        for (edge, f) in [(Edge::Start, r.start), (Edge::Stop, r.stop)] {
            let d = (axis.x(f as f64) - x).abs();
            if d <= EDGE_GRAB && best.is_none_or(|b| d < b.0) {
                best = Some((d, *r, edge));
            }
        }
    }
    if let Some((_, r, e)) = best {
        let (left, right) = (axis.x(r.start as f64), axis.x(r.stop as f64));
        let third = (right - left) / 3.0;
        let middle = right - left <= 3.0 * EDGE_GRAB && x > left + third && x < right - third;
        if !middle {
            return LaneHit::Edge(r, e);
        }
        return LaneHit::Body(r);
    }
    match ranges.get(i) {
        Some(r) if frame >= r.start as f64 && frame < r.stop as f64 => LaneHit::Body(*r),
        _ => LaneHit::Empty,
    }
}

/// Half the width, in points, of a marker's diamond (and of its grab area).
pub const MARKER_HALF: f32 = 5.0;

/// The x of marker `frame`: the middle of its frame's cell.
pub fn marker_x(axis: &TimeAxis, frame: u32) -> f32 {
    axis.x(frame as f64 + 0.5)
}

/// The marker under `x`, if one is within [`MARKER_HALF`] points (the nearest one).
pub fn hit_marker(axis: &TimeAxis, markers: &[u32], x: f32) -> Option<u32> {
    let frame = axis.frame_at(x);
    let i = markers.partition_point(|&f| (f as f64) < frame);
    markers[i.saturating_sub(1)..(i + 1).min(markers.len())]
        .iter()
        .map(|&f| (f, (marker_x(axis, f) - x).abs()))
        .filter(|&(_, d)| d <= MARKER_HALF + 1.0)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(f, _)| f)
}

/// The markers of a lane between two x positions.
pub fn markers_in_span(axis: &TimeAxis, markers: &[u32], x0: f32, x1: f32) -> Vec<u32> {
    let (a, b) = (x0.min(x1), x0.max(x1));
    markers
        .iter()
        .copied()
        .filter(|&f| {
            let x = marker_x(axis, f);
            x >= a - MARKER_HALF && x <= b + MARKER_HALF
        })
        .collect()
}

/// The ranges of a lane that intersect the frame span between two x positions.
pub fn ranges_in_span(axis: &TimeAxis, ranges: &[Range], x0: f32, x1: f32) -> Vec<Range> {
    let (a, b) = (axis.frame_at(x0.min(x1)), axis.frame_at(x0.max(x1)));
    ranges
        .iter()
        .filter(|r| (r.stop as f64) > a && (r.start as f64) < b)
        .copied()
        .collect()
}

/// Screen rectangle of a range in a lane spanning `y0..y1`.
pub fn range_rect(axis: &TimeAxis, r: Range, y0: f32, y1: f32) -> Rect {
    Rect::from_min_max(
        pos2(axis.x(r.start as f64), y0 + 2.0),
        pos2(axis.x(r.stop as f64), y1 - 2.0),
    )
}

/// The point in the middle of frame `f`'s cell on a lane spanning `y0..y1` (used by tests to drag).
pub fn frame_point(axis: &TimeAxis, f: u32, y0: f32, y1: f32) -> Pos2 {
    pos2(axis.x(f as f64 + 0.5), (y0 + y1) / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis() -> TimeAxis {
        TimeAxis {
            left: 100.0,
            width: 500.0,
            first_frame: 10.0,
            px_per_frame: 4.0,
        }
    }

    #[test]
    fn frames_and_x_round_trip() {
        let a = axis();
        assert_eq!(a.x(10.0), 100.0);
        assert_eq!(a.frame_at(a.x(33.0)), 33.0);
        assert_eq!(a.cell_at(a.x(33.5), 100), 33);
        assert_eq!(a.cell_at(0.0, 100), 0);
        assert_eq!(a.boundary_at(a.x(33.6), 100), 34);
        assert_eq!(a.boundary_at(10_000.0, 100), 100);
    }

    #[test]
    fn ticks_are_round_numbers() {
        let a = axis();
        assert_eq!(a.tick_step(30.0, 40.0), 10);
        let zoomed_out = TimeAxis {
            px_per_frame: 0.1,
            ..a
        };
        // 600 frames needed: the next round step is 30 s at 30 fps.
        assert_eq!(zoomed_out.tick_step(30.0, 60.0), 900);
        // A 2^28-frame clip fitted in 1,000 points: ticks of whole hours (2, 5, 10, ...).
        let whole = TimeAxis {
            px_per_frame: 1000.0 / f64::from(1u32 << 28),
            ..a
        };
        assert_eq!(whole.tick_step(30.0, 60.0), 200 * 3600 * 30);
    }

    #[test]
    fn hit_testing_prefers_edges() {
        let a = axis();
        let ranges = [Range::new(20, 40), Range::new(41, 42)];
        assert_eq!(
            hit_lane(&a, &ranges, a.x(20.0) + 1.0),
            LaneHit::Edge(ranges[0], Edge::Start)
        );
        assert_eq!(
            hit_lane(&a, &ranges, a.x(40.0) - 2.0),
            LaneHit::Edge(ranges[0], Edge::Stop)
        );
        assert_eq!(hit_lane(&a, &ranges, a.x(30.0)), LaneHit::Body(ranges[0]));
        assert_eq!(hit_lane(&a, &ranges, a.x(15.0)), LaneHit::Empty);
        assert_eq!(
            hit_lane(&a, &ranges, a.x(42.0) + 1.0),
            LaneHit::Edge(ranges[1], Edge::Stop)
        );
        // A narrow range (here one frame, under three grab widths): edges in its outer thirds,
        // its body in the middle one, so that it can be moved, not only resized.
        let px = a.x(42.0) - a.x(41.0);
        assert!(px <= 3.0 * EDGE_GRAB, "{px}");
        assert_eq!(hit_lane(&a, &ranges, a.x(41.5)), LaneHit::Body(ranges[1]));
        assert_eq!(
            hit_lane(&a, &ranges, a.x(41.0) + px * 0.2),
            LaneHit::Edge(ranges[1], Edge::Start)
        );
        assert_eq!(
            hit_lane(&a, &ranges, a.x(42.0) - px * 0.2),
            LaneHit::Edge(ranges[1], Edge::Stop)
        );
        assert_eq!(
            ranges_in_span(&a, &ranges, a.x(39.5), a.x(45.0)),
            ranges.to_vec()
        );
    }

    #[test]
    fn rows_visible_and_hit() {
        let rows = vec![
            Row::Lane {
                tag: 0,
                indent: false,
            },
            Row::Group {
                namespace: "n".into(),
                collapsed: false,
                count: 1,
            },
            Row::Lane {
                tag: 1,
                indent: true,
            },
        ];
        let l = RowLayout::new(&rows, 50.0, 30.0, 0.0);
        assert_eq!(l.visible(), 0..2);
        assert_eq!(l.row_at(51.0, &rows), Some(0));
        assert_eq!(l.row_at(75.0, &rows), Some(1));
        assert_eq!(l.row_at(85.0, &rows), None);
        let scrolled = RowLayout::new(&rows, 50.0, 30.0, 1000.0);
        assert_eq!(
            scrolled.scroll_y,
            LANE_HEIGHT + GROUP_HEIGHT + LANE_HEIGHT - 30.0
        );
        assert_eq!(scrolled.visible(), 1..3);
    }
}
