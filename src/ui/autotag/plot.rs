//! The signal plot of the auto-tag panel: the chosen signal with its thresholds, the proposed
//! ranges as bands and the playhead; threshold lines are dragged with the pointer (mapped to plot
//! values through the plot's transform) and written back through `AutotagSettings::set_threshold`.

use egui::{Color32, Ui};
use egui_plot::{HLine, Line, LineStyle, Plot, PlotPoints, Span, VLine};

use super::AutotagPanel;
use super::model::{Grab, ThresholdDrag, round_for_span, rules_text, threshold_shape};
use crate::core::autotag::{Autotagged, Threshold, ThresholdKey};
use crate::core::tags::Range;
use crate::ui::command::AppCommand;
use crate::ui::theme;
use crate::ui::view::ClipContext;

/// The plotted signal with its thresholds (drag a line to change it), the proposals as spans and
/// the playhead. Clicking elsewhere moves the playhead.
pub(super) fn plot_ui(
    ui: &mut Ui,
    panel: &mut AutotagPanel,
    input: &ClipContext<'_>,
    queue: &mut Vec<AppCommand>,
) {
    let doc = &input.project.doc;
    let Some(out) = panel.output_for(input.clip).cloned() else {
        // The whole reason, wrapped (the row above shows its start).
        match panel.output_error() {
            Some(e) => {
                // Wrapped at the column's visible edge (the row it sits in may reach past it).
                let visible = (ui.clip_rect().right() - ui.cursor().left() - 8.0).max(80.0);
                ui.scope(|ui| {
                    ui.set_max_width(visible);
                    ui.add(egui::Label::new(format!("no signal: {e}")).wrap());
                });
            }
            None => {
                ui.weak("no signal yet");
            }
        }
        return;
    };
    if out.signals.is_empty() {
        ui.weak("no signal: choose a generator");
        return;
    }
    let names: Vec<String> = out.signals.iter().map(|s| s.name.clone()).collect();
    let current = panel
        .signal
        .clone()
        .filter(|n| names.contains(n))
        .unwrap_or_else(|| names[0].clone());
    let mut chosen = current.clone();
    let width = ui.available_width();
    // Wrapped: in a narrow panel the "(?)" goes under the list instead of out of view.
    ui.horizontal_wrapped(|ui| {
        let label = ui.label("Signal");
        egui::ComboBox::from_id_salt("autotag_signal")
            .selected_text(&chosen)
            // Narrower in a narrow panel, so that the "(?)" after it stays in view.
            .width((width - 110.0).clamp(60.0, 260.0))
            // A long name is cut with "…" (its whole text in the list and the tooltip).
            .truncate()
            .show_ui(ui, |ui| {
                for n in &names {
                    ui.selectable_value(&mut chosen, n.clone(), n)
                        .on_hover_text(signal_unit_text(&out, n));
                }
            })
            .response
            .labelled_by(label.id)
            .on_hover_text(signal_unit_text(&out, &chosen));
        ui.weak("(?)").on_hover_text(
            "Drag a threshold line to change it (Shift: both lines of a pair). Click or drag \
             elsewhere: playhead. Wheel: pan, Ctrl+wheel: zoom, double click: reset.",
        );
    });
    if chosen != current || panel.signal.is_none() {
        panel.signal = Some(chosen.clone());
    }
    let Some(signal) = out.signal(&chosen) else {
        return;
    };
    let pal = theme::palette(input.dark);
    let frame = input.playhead;
    let held = panel.drag.map(|d| (d.key, d.grab));
    let points = decimated(&signal.values, 4000);
    let tag_colors: Vec<(Color32, Vec<Range>)> = signal
        .tags
        .iter()
        .filter_map(|t| {
            let ranges = out.ranges(t)?.to_vec();
            let color = doc.tag_index(t).and_then(|i| doc.tags[i].color);
            Some((theme::tag_color(color, t).gamma_multiply(0.22), ranges))
        })
        .collect();
    let thresholds = signal.thresholds.clone();
    let unit = signal.unit;
    let line_color = theme::PLOT_SERIES[0];
    let th_color = theme::PLOT_SERIES[3];
    let held_color = pal.selection;
    let height = ui.available_height().max(120.0);
    let text_color = ui.visuals().text_color();
    let response = Plot::new("autotag_signal_plot")
        .width(width)
        .height(height)
        .allow_drag(false)
        .allow_boxed_zoom(false)
        .allow_zoom(true)
        .allow_scroll([true, false])
        .include_y(0.0)
        .x_axis_label("frame")
        .y_axis_label(unit)
        .show(ui, |plot| {
            for (color, ranges) in &tag_colors {
                for r in ranges {
                    plot.span(
                        Span::new("", f64::from(r.start)..=f64::from(r.stop))
                            .fill(*color)
                            .border_width(0.0),
                    );
                }
            }
            plot.line(
                Line::new(signal.name.clone(), points)
                    .color(line_color)
                    .width(1.5),
            );
            // Each threshold: the "on" line solid, the "off" line dashed (labelled below).
            for t in &thresholds {
                let is_held = |g| held == Some((t.key, g));
                let color = |g| if is_held(g) { held_color } else { th_color };
                plot.hline(
                    HLine::new(threshold_text(t, Grab::Enter, unit), f64::from(t.enter))
                        .color(color(Grab::Enter))
                        .width(if is_held(Grab::Enter) { 2.5 } else { 1.5 }),
                );
                if t.leave != t.enter {
                    plot.hline(
                        HLine::new(threshold_text(t, Grab::Leave, unit), f64::from(t.leave))
                            .color(color(Grab::Leave))
                            .style(LineStyle::dashed_loose())
                            .width(if is_held(Grab::Leave) { 2.5 } else { 1.2 }),
                    );
                }
            }
            plot.vline(VLine::new("playhead", frame).color(pal.playhead));
        });
    let transform = response.transform;
    panel.plot = Some(transform);
    threshold_labels(ui, &transform, &thresholds, unit, text_color);
    let r = &response.response;
    let grab_at = |pos: egui::Pos2| -> Option<(ThresholdKey, Grab, f32, f32)> {
        if !transform.frame().contains(pos) {
            return None;
        }
        let mut best: Option<(f32, (ThresholdKey, Grab, f32, f32))> = None;
        for t in &thresholds {
            for (g, v) in [(Grab::Enter, t.enter), (Grab::Leave, t.leave)] {
                let d = (transform.position_from_point_y(f64::from(v)) - pos.y).abs();
                if d <= 6.0 && best.is_none_or(|(b, _)| d < b) {
                    best = Some((d, (t.key, g, t.enter, t.leave)));
                }
            }
        }
        best.map(|(_, x)| x)
    };
    let hover = r.hover_pos().and_then(grab_at);
    if r.drag_started_by(egui::PointerButton::Primary)
        && let Some(origin) = ui.input(|i| i.pointer.press_origin())
        && let Some((key, grab, enter, leave)) = grab_at(origin)
    {
        let shift = ui.input(|i| i.modifiers.shift);
        panel.drag = Some(ThresholdDrag {
            key,
            shape: threshold_shape(key, &panel.valid),
            grab,
            enter,
            leave,
            both: shift,
        });
    }
    if let Some(d) = panel.drag {
        if r.dragged()
            && let Some(pos) = r.interact_pointer_pos()
        {
            let span = transform.bounds().height() as f32;
            let v = round_for_span(transform.value_from_position(pos).y as f32, span);
            let (e, l) = d.values_at(v);
            let mut next = panel.valid.clone();
            match next.set_threshold(d.key, e, l) {
                Ok(()) => {
                    panel.settings = next.clone();
                    panel.valid = next;
                    panel.error = None;
                    if matches!(d.key, ThresholdKey::Rule { .. }) {
                        panel.rules_text = rules_text(&panel.valid.rules);
                        panel.rules_error = None;
                    }
                    panel.refresh();
                }
                Err(e) => {
                    panel.status = Some(format!("threshold not moved: {e}"));
                }
            }
        }
        if !r.dragged() || r.drag_stopped() {
            panel.drag = None;
        }
    } else if r.dragged_by(egui::PointerButton::Primary) || r.clicked() {
        // Scrubbing: the playhead follows the pointer.
        if let Some(pos) = r.interact_pointer_pos() {
            let f = transform.value_from_position(pos).x.round();
            let frames = doc.clips.get(input.clip as usize).map_or(0, |c| c.frames);
            queue.push(AppCommand::SetPlayhead(
                f.clamp(0.0, f64::from(frames.saturating_sub(1))),
            ));
        }
    }
    if hover.is_some() || panel.drag.is_some() {
        ui.ctx().set_cursor_icon(egui::CursorIcon::ResizeVertical);
    }
    if panel.drag.is_none()
        && let Some((key, grab, enter, leave)) = hover
        && let Some(t) = thresholds.iter().find(|t| t.key == key)
    {
        let (which, v) = match grab {
            Grab::Enter => ("on", enter),
            Grab::Leave => ("off", leave),
        };
        r.clone().on_hover_text(format!(
            "{} ({which}) {} {unit}: drag to change; Shift: both lines",
            t.label,
            short_number(v)
        ));
    }
}

/// The label of a threshold's line: `walk / run 2.25 m/s` for the "on" line, `off 2.15 m/s` for
/// the other.
fn threshold_text(t: &Threshold, grab: Grab, unit: &str) -> String {
    match grab {
        Grab::Enter => format!("{} {} {unit}", t.label, short_number(t.enter)),
        Grab::Leave => format!("off {} {unit}", short_number(t.leave)),
    }
}

/// Shorter forms of [`threshold_text`] for a narrow plot, longest first: without the unit, then
/// the value alone.
fn threshold_short_texts(t: &Threshold, grab: Grab) -> [String; 2] {
    let v = short_number(if grab == Grab::Enter {
        t.enter
    } else {
        t.leave
    });
    let named = match grab {
        Grab::Enter => format!("{} {v}", t.label),
        Grab::Leave => format!("off {v}"),
    };
    [named, v]
}

/// A label to place beside its line: the line's height on screen, the label's height, and the
/// side it goes on first (above the line, or below).
#[derive(Debug, Clone, Copy)]
struct Wanted {
    line_y: f32,
    height: f32,
    above: bool,
}

/// Gap between a label and its line, and between two labels.
const LABEL_GAP: f32 = 2.0;

/// The top of each label in a frame from `top` to `bottom`, in the order given (the first are
/// placed first): beside its line on its side, else on the other side, else moved away from its
/// line past the labels in the way, so that no two labels overlap and none covers its own line;
/// `None` for a label with no room left.
fn place_labels(top: f32, bottom: f32, wanted: &[Wanted]) -> Vec<Option<f32>> {
    let mut placed: Vec<(f32, f32)> = Vec::new();
    let free = |placed: &[(f32, f32)], t: f32, h: f32| {
        t >= top
            && t + h <= bottom
            && placed
                .iter()
                .all(|&(pt, pb)| t + h + LABEL_GAP <= pt || t >= pb + LABEL_GAP)
    };
    wanted
        .iter()
        .map(|w| {
            let over = w.line_y - LABEL_GAP - w.height;
            let under = w.line_y + LABEL_GAP;
            let sides = if w.above {
                [over, under]
            } else {
                [under, over]
            };
            let mut found = sides.into_iter().find(|&t| free(&placed, t, w.height));
            // Past the labels in the way, away from the line: upwards from above it, downwards
            // from below it, the preferred side first.
            for start in sides {
                if found.is_some() {
                    break;
                }
                let up = start < w.line_y;
                let mut t = start;
                while found.is_none() && t >= top && t + w.height <= bottom {
                    match placed
                        .iter()
                        .find(|&&(pt, pb)| !(t + w.height + LABEL_GAP <= pt || t >= pb + LABEL_GAP))
                    {
                        None => found = Some(t),
                        Some(&(pt, pb)) => {
                            t = if up {
                                pt - LABEL_GAP - w.height
                            } else {
                                pb + LABEL_GAP
                            }
                        }
                    }
                }
            }
            if let Some(t) = found {
                placed.push((t, t + w.height));
            }
            found
        })
        .collect()
}

/// The thresholds' labels, painted over the plot in the body font at the right edge of its frame
/// (inside it, so none is cut: a narrow plot shows the shorter forms of
/// [`threshold_short_texts`]), each on the outer side of its line (the higher line's above it,
/// the lower's below) so that close lines stay readable, on a backing of the plot's background;
/// labels that would overlap are moved apart ([`place_labels`]), the pairs' first lines placed
/// first.
fn threshold_labels(
    ui: &Ui,
    transform: &egui_plot::PlotTransform,
    thresholds: &[Threshold],
    unit: &str,
    color: Color32,
) {
    let frame = *transform.frame();
    let painter = ui.painter().with_clip_rect(frame);
    let font = egui::TextStyle::Body.resolve(ui.style());
    let backing = ui.visuals().extreme_bg_color.gamma_multiply(0.6);
    let room = frame.width() - 8.0;
    let mut labels = Vec::new();
    for grab in [Grab::Enter, Grab::Leave] {
        for t in thresholds {
            let (value, other) = match grab {
                Grab::Enter => (t.enter, t.leave),
                Grab::Leave if t.leave != t.enter => (t.leave, t.enter),
                Grab::Leave => continue,
            };
            let y = transform.position_from_point_y(f64::from(value));
            if !(frame.top()..=frame.bottom()).contains(&y) {
                continue;
            }
            // The longest form that fits the frame (a narrow plot drops the unit, then the name).
            let [short, shortest] = threshold_short_texts(t, grab);
            let mut galley =
                painter.layout_no_wrap(threshold_text(t, grab, unit), font.clone(), color);
            for text in [short, shortest] {
                if galley.size().x <= room {
                    break;
                }
                galley = painter.layout_no_wrap(text, font.clone(), color);
            }
            let wanted = Wanted {
                line_y: y,
                height: galley.size().y,
                above: value > other || (value == other && grab == Grab::Enter),
            };
            labels.push((wanted, galley));
        }
    }
    let wanted: Vec<Wanted> = labels.iter().map(|l| l.0).collect();
    let tops = place_labels(frame.top(), frame.bottom(), &wanted);
    for ((_, galley), top) in labels.into_iter().zip(tops) {
        let Some(top) = top else { continue };
        let size = galley.size();
        let x = (frame.right() - 6.0 - size.x).max(frame.left() + 2.0);
        let rect = egui::Rect::from_min_size(egui::pos2(x, top), size);
        painter.rect_filled(rect.expand(1.0), 2.0, backing);
        painter.galley(rect.min, galley, color);
    }
}

/// A number with at most four significant digits (`0.35`, not `0.35000002`).
fn short_number(v: f32) -> String {
    if !v.is_finite() || v == 0.0 {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 6);
    let s = format!("{v:.*}", digits as usize);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// What the chosen signal measures and drives, for the line beside the signal list.
fn signal_unit_text(out: &Autotagged, name: &str) -> String {
    out.signal(name).map_or(String::new(), |s| {
        format!("{} per frame, drives {}", s.unit, s.tags.join(", "))
    })
}

/// At most about `max` points of `values` (frame, value): every frame when it fits, else the
/// minimum and maximum of each bucket of frames, so spikes stay visible.
fn decimated(values: &[f32], max: usize) -> PlotPoints<'static> {
    let n = values.len();
    if n <= max {
        return values
            .iter()
            .enumerate()
            .map(|(f, v)| [f as f64, f64::from(*v)])
            .collect();
    }
    let bucket = n.div_ceil(max / 2);
    let mut pts = Vec::with_capacity(max + 2);
    for (b, chunk) in values.chunks(bucket).enumerate() {
        let start = b * bucket;
        let (mut lo, mut hi) = (0, 0);
        for (k, v) in chunk.iter().enumerate() {
            if v < &chunk[lo] {
                lo = k;
            }
            if v > &chunk[hi] {
                hi = k;
            }
        }
        for k in if lo <= hi { [lo, hi] } else { [hi, lo] } {
            pts.push([(start + k) as f64, f64::from(chunk[k])]);
        }
    }
    PlotPoints::from(pts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Labels of height 14 in a frame from 0 to 200 (screen y grows downwards).
    fn place(lines: &[(f32, bool)]) -> Vec<Option<f32>> {
        let wanted: Vec<Wanted> = lines
            .iter()
            .map(|&(line_y, above)| Wanted {
                line_y,
                height: 14.0,
                above,
            })
            .collect();
        place_labels(0.0, 200.0, &wanted)
    }

    /// No two placed labels overlap, and none covers its own line.
    fn check(lines: &[(f32, bool)], tops: &[Option<f32>]) {
        let rects: Vec<(f32, f32, f32)> = lines
            .iter()
            .zip(tops)
            .filter_map(|(&(y, _), t)| t.map(|t| (y, t, t + 14.0)))
            .collect();
        for (i, &(y, t, b)) in rects.iter().enumerate() {
            assert!(t >= 0.0 && b <= 200.0, "{tops:?}");
            assert!(b <= y || t >= y, "label {i} covers its line: {tops:?}");
            for &(_, t2, b2) in &rects[i + 1..] {
                assert!(b + LABEL_GAP <= t2 || t >= b2 + LABEL_GAP, "{tops:?}");
            }
        }
    }

    #[test]
    fn labels_apart_stay_beside_their_lines() {
        let lines = [(100.0, true), (150.0, false)];
        let tops = place(&lines);
        assert_eq!(tops, [Some(84.0), Some(152.0)]);
        check(&lines, &tops);
    }

    #[test]
    fn close_lines_get_labels_that_do_not_overlap() {
        // Two pairs 8 points apart, as walk/run 2.25 and off 2.15 on a short plot: the second
        // label of each side goes past the first.
        let lines = [(60.0, true), (68.0, false), (64.0, true), (70.0, false)];
        let tops = place(&lines);
        assert!(tops.iter().all(Option::is_some), "{tops:?}");
        check(&lines, &tops);
        // The first keeps its place above its line.
        assert_eq!(tops[0], Some(44.0));
    }

    #[test]
    fn at_the_frame_edges_labels_flip_and_too_many_are_left_out() {
        // A line at the top edge: its label goes below it.
        let tops = place(&[(1.0, true)]);
        assert_eq!(tops, [Some(3.0)]);
        // Twenty labels for lines in 40 points: as many as fit, the rest left out.
        let lines: Vec<(f32, bool)> = (0..20)
            .map(|i| (80.0 + 2.0 * i as f32, i % 2 == 0))
            .collect();
        let tops = place(&lines);
        check(&lines, &tops);
        let shown = tops.iter().flatten().count();
        assert!((8..20).contains(&shown), "{shown}: {tops:?}");
    }
}
