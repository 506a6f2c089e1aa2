//! Timeline painting: ruler, lanes, ranges, playhead, marks. Reads layout and data, changes nothing.

use egui::{Color32, FontId, Painter, Rect, Stroke, StrokeKind, pos2};

use super::layout::{MARKER_HALF, TimeAxis, marker_x, range_rect};
use crate::core::tags::Range;
use crate::ui::theme::Palette;

/// Paints the frame ruler: ticks labelled with frames, and seconds on whole-second ticks.
pub fn ruler(painter: &Painter, rect: Rect, axis: &TimeAxis, frames: u32, fps: f32, pal: &Palette) {
    painter.rect_filled(rect, 0.0, pal.ruler_bg);
    let step = axis.tick_step(fps, 70.0);
    let minor = if step >= 10 { step / 5 } else { 1 };
    let first = (axis.first_frame.max(0.0) / minor as f64).floor() as u32 * minor;
    let last = (axis.frame_at(rect.right()).ceil().max(0.0) as u32).min(frames);
    let font = FontId::proportional(10.5);
    let mut f = first;
    while f <= last {
        let x = axis.x(f as f64);
        if x >= rect.left() - 1.0 {
            let major = f.is_multiple_of(step);
            let h = if major { 10.0 } else { 4.0 };
            painter.line_segment(
                [pos2(x, rect.bottom() - h), pos2(x, rect.bottom())],
                Stroke::new(1.0, pal.ruler_text),
            );
            if major {
                let secs = f as f64 / fps.max(1e-3) as f64;
                let label = if (secs - secs.round()).abs() < 1e-6 {
                    format!("{f}  {secs:.0}s")
                } else {
                    format!("{f}  {secs:.2}s")
                };
                // A label that would run past the ruler's end is left out (its tick stays), not
                // cut in the middle of its number.
                let galley = painter.layout_no_wrap(label, font.clone(), pal.ruler_text);
                if x + 3.0 + galley.size().x <= rect.right() {
                    painter.galley(pos2(x + 3.0, rect.top() + 2.0), galley, pal.ruler_text);
                }
            }
        }
        f += minor;
    }
    // The clip's end.
    let end = axis.x(frames as f64);
    if end < rect.right() {
        painter.rect_filled(
            Rect::from_min_max(pos2(end, rect.top()), rect.max),
            0.0,
            pal.outside_clip,
        );
    }
}

/// Paints one lane background and its ranges. `selected` ranges (sorted) get an outline.
#[allow(clippy::too_many_arguments)]
pub fn lane(
    painter: &Painter,
    rect: Rect,
    axis: &TimeAxis,
    frames: u32,
    ranges: &[Range],
    selected: &[Range],
    color: Color32,
    background: Color32,
    dimmed: bool,
    pal: &Palette,
) {
    painter.rect_filled(rect, 0.0, background);
    let end = axis.x(frames as f64);
    if end < rect.right() {
        painter.rect_filled(
            Rect::from_min_max(pos2(end.max(rect.left()), rect.top()), rect.max),
            0.0,
            pal.outside_clip,
        );
    }
    let fill = if dimmed {
        color.gamma_multiply(0.3)
    } else {
        color
    };
    let first_visible = axis.frame_at(rect.left());
    let start = ranges.partition_point(|r| (r.stop as f64) < first_visible);
    // Ranges narrower than a pixel are still drawn one pixel wide, so dense one-frame tags show.
    for r in &ranges[start..] {
        let mut rr = range_rect(axis, *r, rect.top(), rect.bottom());
        if rr.left() > rect.right() {
            break;
        }
        if rr.width() < 1.0 {
            rr.max.x = rr.min.x + 1.0;
        }
        let rr = rr.intersect(rect);
        painter.rect_filled(rr, 2.0, fill);
        if rr.width() > 3.0 {
            painter.rect_stroke(
                rr,
                2.0,
                Stroke::new(1.0, pal.range_outline),
                StrokeKind::Inside,
            );
        }
        if selected.binary_search(r).is_ok() {
            // Outside the range, above and below it, but not past the lanes' ends.
            let keep = Rect::from_x_y_ranges(rect.x_range(), rect.y_range().expand(3.0));
            painter
                .with_clip_rect(painter.clip_rect().intersect(keep))
                .rect_stroke(
                    rr.expand(1.0),
                    2.0,
                    Stroke::new(2.0, pal.selection),
                    StrokeKind::Outside,
                );
        }
    }
}

/// Vertical line at a frame boundary across `rect` (playhead, mark in).
pub fn marker(
    painter: &Painter,
    rect: Rect,
    axis: &TimeAxis,
    frame: f64,
    color: Color32,
    width: f32,
) {
    let x = axis.x(frame);
    if x >= rect.left() && x <= rect.right() {
        painter.line_segment(
            [pos2(x, rect.top()), pos2(x, rect.bottom())],
            Stroke::new(width, color),
        );
    }
}

/// The playhead's handle on the ruler.
pub fn playhead_handle(
    painter: &Painter,
    ruler: Rect,
    axis: &TimeAxis,
    frame: f64,
    color: Color32,
) {
    let x = axis.x(frame);
    if x >= ruler.left() - 6.0 && x <= ruler.right() + 6.0 {
        let b = ruler.bottom();
        painter.add(egui::Shape::convex_polygon(
            vec![pos2(x - 6.0, b - 10.0), pos2(x + 6.0, b - 10.0), pos2(x, b)],
            color,
            Stroke::NONE,
        ));
    }
}

/// Paints a lane's markers as diamonds in the tag's colour; `selected` ones (sorted) get an
/// outline, and markers with a note (`with_note`, sorted) a dot.
#[allow(clippy::too_many_arguments)]
pub fn markers(
    painter: &Painter,
    rect: Rect,
    axis: &TimeAxis,
    markers: &[u32],
    selected: &[u32],
    with_note: &[u32],
    color: Color32,
    dimmed: bool,
    pal: &Palette,
) {
    // Lighter than the tag's ranges, so a marker stands out on a range of its own lane.
    let light = color.lerp_to_gamma(crate::ui::theme::MARKER_LIGHT, 0.55);
    let fill = if dimmed {
        light.gamma_multiply(0.3)
    } else {
        light
    };
    let cy = rect.center().y;
    let h = (rect.height() * 0.5 - 2.0).clamp(3.0, MARKER_HALF + 2.0);
    let first = axis.frame_at(rect.left() - MARKER_HALF);
    let start = markers.partition_point(|&f| (f as f64) < first.floor());
    for &f in &markers[start..] {
        let x = marker_x(axis, f);
        if x > rect.right() + MARKER_HALF {
            break;
        }
        let pts = vec![
            pos2(x, cy - h),
            pos2(x + MARKER_HALF, cy),
            pos2(x, cy + h),
            pos2(x - MARKER_HALF, cy),
        ];
        let stroke = if selected.binary_search(&f).is_ok() {
            Stroke::new(2.0, pal.selection)
        } else {
            Stroke::new(1.0, pal.range_outline)
        };
        painter.add(egui::Shape::convex_polygon(pts, fill, stroke));
        if with_note.binary_search(&f).is_ok() {
            painter.circle_filled(pos2(x, cy - h - 2.5), 1.8, pal.ruler_text);
        }
    }
}

/// A small dot at the top-left of ranges that carry a note.
pub fn note_dots(painter: &Painter, rect: Rect, axis: &TimeAxis, ranges: &[Range], color: Color32) {
    for r in ranges {
        let x = axis.x(r.start as f64) + 4.0;
        if x >= rect.left() && x <= rect.right() {
            painter.circle_filled(pos2(x, rect.top() + 5.0), 2.0, color);
        }
    }
}

/// What to do on a clip without lanes (`new_tag_keys`: the New tag shortcut), centred, in the
/// ruler's text colour.
pub fn empty_hint(painter: &Painter, rect: Rect, new_tag_keys: &str, pal: &Palette) {
    // Wrapped to the lanes' width (a narrow timeline cut the centred lines at both ends).
    let text = format!(
        "No tags yet. New tag ({new_tag_keys}) adds a lane to draw ranges in; the Auto-tag tab \
         below proposes tags from the motion."
    );
    let width = (rect.width() - 24.0).clamp(80.0, 560.0);
    let galley = painter.layout(text, FontId::proportional(14.0), pal.ruler_text, width);
    let size = galley.size();
    let at = rect.center() - size / 2.0;
    painter.galley(at, galley, pal.ruler_text);
}
