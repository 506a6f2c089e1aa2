//! Layout of the "Find similar" tab: the query and the search settings, the search's progress,
//! stepping, the threshold and accepting, the query's poses and the live comparison, and the
//! ranked matches (a virtual list, one row per match) with their thumbnail strips. What is drawn
//! inside a widget's rectangle is [`super::paint`]'s.

use egui::{Align, Layout, RichText, Sense, Stroke, Ui, Vec2};

use super::model::{AppView, Results, clip_name, query_from};
use super::paint::{paint_pair, paint_score_bar, paint_strip};
use super::{LivePair, MAX_TOP, SimilarCommand, SimilarPanel};
use crate::core::similar::{Group, SUGGESTED_MAX_SCORE, Weights};
use crate::core::tags::TagDocument;
use crate::ui::command::AppCommand;
use crate::ui::jobs::progress_ui;
use crate::ui::keymap::{Action, action_button, tooltip};
use crate::ui::project::Project;
use crate::ui::theme::{self, SimilarColors, similar_colors};

/// Width of the column with the query's poses.
const LEFT_WIDTH: f32 = 160.0;
/// Height of a row of the list (its thumbnail strip).
const ROW_HEIGHT: f32 = 42.0;
/// Rows of the list seen at least: the list fills the rest of the bottom panel, and the panel
/// grows past the height the user gave it only when that leaves less than this (at the default
/// height it shows four rows, and the panel keeps the height of the other tabs).
const LIST_ROWS: f32 = 2.0;
/// Width of one pose of a thumbnail strip.
const POSE_WIDTH: f32 = 30.0;
/// The list's columns: check (rank), score, poses, clip, start, stop, seconds; then "in TAG" when
/// the match already lies in the tag.
const COLUMNS: [(&str, f32); 7] = [
    ("#", 46.0),
    ("score", 84.0),
    (
        "poses",
        POSE_WIDTH * super::model::THUMBNAIL_POSES as f32 + 4.0,
    ),
    ("clip", CLIP_WIDTH),
    ("start", 34.0),
    ("stop", 34.0),
    ("seconds", 52.0),
];
/// The clip column's width at least; it takes the room the list has beyond the other columns
/// (and the "in TAG" note), up to [`CLIP_WIDTH_MAX`], so that long names are not cut while there is
/// room for them.
const CLIP_WIDTH: f32 = 116.0;
const CLIP_WIDTH_MAX: f32 = 420.0;
/// Room kept after the last column for the "in TAG" note at least, when some match has it.
const IN_TAG_WIDTH: f32 = 50.0;

/// The columns' widths in a list `width` points wide, and the room after them: the "in TAG"
/// note's width where some match lies in the tag already (`note`), else none.
fn column_widths(ui: &Ui, width: f32, note: Option<f32>) -> ([f32; 7], f32) {
    let mut w = COLUMNS.map(|c| c.1);
    let gaps = ui.spacing().item_spacing.x * (w.len() as f32 + 1.0);
    let others: f32 = w.iter().sum::<f32>() - w[3];
    let after = note.unwrap_or(0.0);
    w[3] = (width - others - gaps - after).clamp(CLIP_WIDTH, CLIP_WIDTH_MAX);
    (w, after)
}

/// Scores drawn as bars up to this (about two unrelated frames).
const SCORE_SCALE: f32 = 1.4;

fn push(queue: &mut Vec<AppCommand>, c: SimilarCommand) {
    queue.push(AppCommand::Similar(c));
}

/// Shows the tab; queues commands into `queue`.
pub fn similar_ui(
    ui: &mut Ui,
    panel: &mut SimilarPanel,
    project: &Project,
    view: &AppView<'_>,
    dark: bool,
    queue: &mut Vec<AppCommand>,
) {
    let doc = &project.doc;
    let pal = theme::palette(dark);
    let colors = similar_colors(dark);
    ui.horizontal_wrapped(|ui| {
        if ui
            .button(RichText::new("Find similar").strong())
            .on_hover_text(tooltip(ui.ctx(), Action::FindSimilar))
            .clicked()
        {
            push(queue, SimilarCommand::Find);
        }
        settings_ui(ui, panel);
        ui.separator();
        query_line_ui(ui, panel, doc, view);
    });
    if let Some(job) = panel.job()
        && progress_ui(ui, job, "clips")
    {
        push(queue, SimilarCommand::Cancel);
    }
    // A "no query" message the query line above already shows (grey) is not said twice.
    if let Some(m) = &panel.message
        && query_from(doc, view).err().as_ref() != Some(m)
    {
        ui.colored_label(pal.warning, m);
    }
    let SimilarPanel {
        results,
        threshold,
        accept_tag,
        loop_match,
        live,
        scroll_to,
        stale,
        ..
    } = panel;
    let Some(r) = results.as_mut() else {
        ui.add_space(8.0);
        ui.weak(
            "Find similar searches every clip of the project for moments like the query (one \
             stride of Walking, say), in the background. Matches appear here, ranked, and as \
             lanes on each clip's timeline; step through them, then accept some or all as \
             ranges of a tag in one undoable step.",
        );
        return;
    };
    if *stale {
        ui.colored_label(
            pal.warning,
            "The clips changed since this search (import, re-link or unit): search again.",
        );
    }
    ui.horizontal_wrapped(|ui| {
        action_button(ui, "Prev", Action::PrevMatch, queue);
        action_button(ui, "Next", Action::NextMatch, queue);
        let n = r.matches.len();
        ui.label(match r.current {
            Some(i) => format!("match {} of {n}", i + 1),
            None => format!("{n} matches"),
        });
        ui.checkbox(loop_match, "Loop")
            .on_hover_text("Showing a match loops playback over it (press Space to play)");
        ui.separator();
        let l = ui.label("Threshold");
        // Up to the worst score found when that is past the usual top: a slider clamps what it
        // shows to its range every frame, and "Raise the threshold" to a best score of 1.62
        // was put back to 1.40 at once.
        let top = r
            .matches
            .iter()
            .map(|m| (m.score * 100.0).ceil() / 100.0)
            .filter(|s| s.is_finite())
            .fold(SCORE_SCALE, f32::max);
        ui.add(
            egui::Slider::new(threshold, 0.0..=top)
                .step_by(0.01)
                .fixed_decimals(2),
        )
        .labelled_by(l.id)
        .on_hover_text(format!(
            "Scores run from 0 (the same motion) to about 1.4 (unrelated); {SUGGESTED_MAX_SCORE} \
             is a good first threshold (docs/SIMILAR.md)"
        ));
        let under = r.under(*threshold).len();
        if ui
            .button(format!("Check the {under} under it"))
            .on_hover_text("Check exactly the matches scoring at most the threshold")
            .clicked()
        {
            r.check_under(*threshold);
        }
        if ui.button("Uncheck all").clicked() {
            r.checked.fill(false);
        }
    });
    // A threshold that leaves every match out (the suggested one can, on takes unlike the
    // demo's): say so, with the best score, and offer the threshold that takes it in.
    if r.under(*threshold).is_empty()
        && let (Some(score), Some(best)) = (r.best_score(), r.threshold_for_best())
    {
        ui.horizontal_wrapped(|ui| {
            ui.colored_label(
                pal.warning,
                format!(
                    "No match scores at most {:.2}: the best scores {score:.3}.",
                    *threshold
                ),
            );
            if ui
                .button(format!("Raise the threshold to {best:.2}"))
                .on_hover_text("Then raise it further to take in more matches (the list is ranked)")
                .clicked()
            {
                *threshold = best;
            }
        });
    }
    ui.horizontal_wrapped(|ui| {
        let l = ui.label("Accept as tag");
        let picked = egui::ComboBox::from_id_salt("similar_accept_tag")
            .selected_text(accept_tag.as_str())
            .show_ui(ui, |ui| {
                for t in &doc.tags {
                    if ui
                        .selectable_label(t.name == *accept_tag, &t.name)
                        .clicked()
                    {
                        *accept_tag = t.name.clone();
                    }
                }
            });
        picked.response.labelled_by(l.id);
        let l = ui.label("name");
        ui.add(
            egui::TextEdit::singleline(accept_tag)
                .desired_width(200.0)
                .hint_text("a tag, new or not"),
        )
        .labelled_by(l.id)
        .on_hover_text("A tag that does not exist yet is created");
        let checked = r.checked_indices();
        let tag = accept_tag.trim().to_owned();
        let ok = !*stale && !tag.is_empty();
        if ui
            .add_enabled(
                ok && !checked.is_empty(),
                egui::Button::new(format!("Accept checked ({})", checked.len())),
            )
            .on_hover_text(format!("Add the checked matches to {tag} (one undo step)"))
            .clicked()
        {
            push(
                queue,
                SimilarCommand::Accept {
                    indices: checked,
                    tag: tag.clone(),
                },
            );
        }
        let under = r.under(*threshold);
        if ui
            .add_enabled(
                ok && !under.is_empty(),
                egui::Button::new(format!("Accept all <= {:.2} ({})", *threshold, under.len())),
            )
            .on_hover_text(format!(
                "Add every match scoring at most the threshold to {tag} (one undo step)"
            ))
            .clicked()
        {
            push(
                queue,
                SimilarCommand::Accept {
                    indices: under,
                    tag,
                },
            );
        }
        ui.separator();
        if ui
            .button("Clear")
            .on_hover_text("Forget these matches and their lanes (the project does not change)")
            .clicked()
        {
            push(queue, SimilarCommand::Clear);
        }
    });
    ui.separator();
    ui.horizontal_top(|ui| {
        ui.vertical(|ui| {
            ui.set_width(LEFT_WIDTH);
            query_column_ui(ui, r, live.as_ref(), doc, &colors);
        });
        ui.separator();
        ui.vertical(|ui| {
            list_ui(
                ui, r, doc, accept_tag, *threshold, scroll_to, &colors, queue,
            );
        });
    });
}

/// What "Find similar" searches for: the last query, and the one a new search would take.
fn query_line_ui(ui: &mut Ui, panel: &SimilarPanel, doc: &TagDocument, view: &AppView<'_>) {
    if let Some(q) = panel.searching_for() {
        ui.label(format!("Searching for {}", q.describe(doc)));
        return;
    }
    let next = query_from(doc, view);
    match (&panel.results, &next) {
        (Some(r), Ok(n)) if *n != r.query => {
            ui.label(format!("Query: {}", r.query.describe(doc)));
            ui.weak(format!("(Find similar now searches {})", n.short(doc)));
        }
        (Some(r), _) => {
            ui.label(format!("Query: {}", r.query.describe(doc)));
        }
        (None, Ok(n)) => {
            ui.label(format!("Query: {}", n.describe(doc)));
        }
        (None, Err(e)) => {
            let mut text = e.clone();
            if let Some(first) = text.get_mut(0..1) {
                first.make_ascii_uppercase();
            }
            ui.weak(text);
        }
    }
}

/// The settings of the next search.
fn settings_ui(ui: &mut Ui, panel: &mut SimilarPanel) {
    ui.menu_button("Settings", |ui| {
        ui.horizontal(|ui| {
            let l = ui.label("Matches at most");
            ui.add(egui::DragValue::new(&mut panel.top).range(1..=MAX_TOP))
                .labelled_by(l.id);
        });
        ui.checkbox(&mut panel.stretch, "Time stretch (+-25%)")
            .on_hover_text(
                "Windows 0.75 to 1.25 times the query's duration: a slower walk still matches",
            );
        ui.separator();
        ui.label("Feature weights (0 ignores a group)");
        egui::Grid::new("similar_weights").show(ui, |ui| {
            for g in Group::ALL {
                let l = ui.label(g.name());
                let mut w = panel.weights.of(g);
                if ui
                    .add(egui::DragValue::new(&mut w).range(0.0..=10.0).speed(0.05))
                    .labelled_by(l.id)
                    .changed()
                {
                    // `set` refuses only bad values, which the range excludes.
                    let _ = panel.weights.set(g.name(), w);
                }
                ui.end_row();
            }
        });
        if ui.button("Default weights").clicked() {
            panel.weights = Weights::default();
        }
        if panel.weights.validate().is_err() {
            ui.colored_label(
                theme::palette(ui.visuals().dark_mode).warning,
                "Every weight is 0: nothing would be compared",
            );
        }
        ui.weak("These apply to the next search (features are kept: no rebuild).");
    });
}

/// The query's poses, and the live comparison at the playhead.
fn query_column_ui(
    ui: &mut Ui,
    r: &Results,
    live: Option<&LivePair>,
    doc: &TagDocument,
    colors: &SimilarColors,
) {
    ui.strong("Query").on_hover_text(format!(
        "{} of {}",
        r.query.short(doc),
        clip_name(doc, r.query.clip)
    ));
    let (rect, response) =
        ui.allocate_exact_size(Vec2::new(LEFT_WIDTH, ROW_HEIGHT + 4.0), Sense::hover());
    response
        .widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, "poses of the query"));
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 3.0, colors.thumb_bg);
    if let Some(t) = &r.query_thumb {
        paint_strip(&painter, rect, t, colors.query, colors.query_far);
    }
    ui.add(egui::Label::new(RichText::new(&r.headline).weak()).wrap())
        .on_hover_text(&r.summary);
    if !r.problems.is_empty() {
        ui.colored_label(
            theme::palette(ui.visuals().dark_mode).warning,
            format!("{} problem(s)", r.problems.len()),
        )
        .on_hover_text(r.problems.join("\n"));
    }
    match live {
        Some(l) => {
            let size = Vec2::new(LEFT_WIDTH, (ui.available_height() - 4.0).clamp(56.0, 150.0));
            let (rect, response) = ui.allocate_exact_size(size, Sense::hover());
            response.widget_info(|| {
                egui::WidgetInfo::labeled(
                    egui::Role::Image,
                    true,
                    "the query's pose and the match's, side by side",
                )
            });
            let painter = ui.painter_at(rect);
            painter.rect_filled(rect, 3.0, colors.thumb_bg);
            paint_pair(&painter, rect, l, colors);
        }
        None => {
            ui.add(
                egui::Label::new(
                    RichText::new(
                        "Show a match (Next, or click one) to compare its pose with the \
                         query's here and in the viewport.",
                    )
                    .small()
                    .weak(),
                )
                .wrap(),
            );
        }
    }
}

/// The ranked matches, one row each, with only the visible rows drawn.
#[allow(clippy::too_many_arguments)]
fn list_ui(
    ui: &mut Ui,
    r: &mut Results,
    doc: &TagDocument,
    tag: &str,
    threshold: f32,
    scroll_to: &mut Option<usize>,
    colors: &SimilarColors,
    queue: &mut Vec<AppCommand>,
) {
    // The "in TAG" note's room: as wide as the note (a long tag name is not cut).
    let note_width = r.any_in_tag(doc, tag).then(|| {
        let font = egui::TextStyle::Body.resolve(ui.style());
        let galley =
            ui.painter()
                .layout_no_wrap(format!("in {tag}"), font, ui.visuals().text_color());
        galley.size().x.max(IN_TAG_WIDTH)
    });
    // The vertical scroll bar, at its widest (a floating one widens when hovered), is kept clear
    // of the last column.
    let bar = {
        let s = &ui.spacing().scroll;
        s.bar_inner_margin + s.bar_width + s.bar_outer_margin
    };
    let (widths, after) = column_widths(ui, ui.available_width() - bar, note_width);
    // In a narrow panel the columns scroll sideways, the headers with them; the rows scroll up
    // and down under the headers.
    let spacing = ui.spacing().item_spacing.x;
    let content_width = widths.iter().sum::<f32>() + spacing * widths.len() as f32 + after + bar;
    egui::ScrollArea::horizontal()
        .id_salt("similar_matches_columns")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            ui.set_min_width(content_width);
            ui.horizontal(|ui| {
                for (k, ((name, _), w)) in COLUMNS.iter().zip(widths).enumerate() {
                    cell(ui, w, 18.0, |ui| {
                        // "#" over the ranks, after the rows' check boxes.
                        if k == 0 {
                            let s = ui.spacing();
                            ui.add_space(s.icon_width + s.icon_spacing);
                        }
                        ui.strong(*name)
                    });
                }
                if after > 0.0 {
                    cell(ui, after, 18.0, |ui| ui.strong("tag"));
                }
            });
            if r.matches.is_empty() {
                ui.weak("No match.");
                return;
            }
            let row_step = ROW_HEIGHT + ui.spacing().item_spacing.y;
            let mut area = egui::ScrollArea::vertical()
                .id_salt("similar_matches")
                .auto_shrink([false, false])
                .min_scrolled_height(row_step * LIST_ROWS);
            if let Some(i) = scroll_to.take() {
                area = area.vertical_scroll_offset((i as f32 - 1.0).max(0.0) * row_step);
            }
            area.show_rows(ui, ROW_HEIGHT, r.matches.len(), |ui, rows| {
                for i in rows {
                    row_ui(ui, r, i, &widths, doc, tag, threshold, colors, queue);
                }
            });
        });
}

#[allow(clippy::too_many_arguments)]
fn row_ui(
    ui: &mut Ui,
    r: &mut Results,
    i: usize,
    widths: &[f32; 7],
    doc: &TagDocument,
    tag: &str,
    threshold: f32,
    colors: &SimilarColors,
    queue: &mut Vec<AppCommand>,
) {
    let m = r.matches[i];
    let current = r.current == Some(i);
    let fps = doc.clips.get(m.clip).map_or(30.0, |c| c.fps);
    let frames = m.stop - m.start;
    let in_tag = r.is_in_tag(doc, tag, i);
    ui.horizontal(|ui| {
        let [c0, c1, c2, c3, c4, c5, c6] = *widths;
        cell(ui, c0, ROW_HEIGHT, |ui| {
            ui.checkbox(&mut r.checked[i], format!("#{}", i + 1))
                .on_hover_text("Check to accept it with the others checked");
        });
        cell(ui, c1, ROW_HEIGHT, |ui| {
            score_ui(ui, m.score, threshold, colors);
        });
        cell(ui, c2, ROW_HEIGHT, |ui| {
            thumbnail_ui(ui, r, i, current, colors, queue);
        });
        cell(ui, c3, ROW_HEIGHT, |ui| {
            let name = clip_name(doc, m.clip as u32);
            if ui
                .add(egui::Button::selectable(current, name.as_str()).truncate())
                .on_hover_text(format!(
                    "{name}: show this match (its clip, the playhead at its start)"
                ))
                .clicked()
            {
                push(queue, SimilarCommand::Select(i));
            }
        });
        cell(ui, c4, ROW_HEIGHT, |ui| ui.label(m.start.to_string()));
        cell(ui, c5, ROW_HEIGHT, |ui| ui.label(m.stop.to_string()));
        cell(ui, c6, ROW_HEIGHT, |ui| {
            ui.label(format!("{:.2}", frames as f64 / f64::from(fps.max(1e-3))))
                .on_hover_text(format!("{frames} frames at {fps} fps"))
        });
        if in_tag {
            ui.weak(format!("in {tag}"))
                .on_hover_text(format!("Its frames already lie in {tag}"));
        }
    });
}

/// The poses of match `i`; a click shows the match.
fn thumbnail_ui(
    ui: &mut Ui,
    r: &Results,
    i: usize,
    current: bool,
    colors: &SimilarColors,
    queue: &mut Vec<AppCommand>,
) {
    let width = POSE_WIDTH * super::model::THUMBNAIL_POSES as f32;
    let (rect, response) =
        ui.allocate_exact_size(Vec2::new(width, ROW_HEIGHT - 2.0), Sense::click());
    response.widget_info(|| {
        egui::WidgetInfo::labeled(egui::Role::Image, true, format!("poses of match {}", i + 1))
    });
    if response.on_hover_text("Click to show this match").clicked() {
        push(queue, SimilarCommand::Select(i));
    }
    if !ui.is_rect_visible(rect) {
        return;
    }
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 3.0, colors.thumb_bg);
    if current {
        painter.rect_stroke(
            rect.shrink(0.5),
            3.0,
            Stroke::new(1.5, colors.thumb_current),
            egui::StrokeKind::Inside,
        );
    }
    match r.thumbs.get(i).and_then(Option::as_ref) {
        Some(t) => paint_strip(&painter, rect, t, colors.pose, colors.pose_far),
        None => {
            painter.text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                "no poses",
                egui::FontId::proportional(11.0),
                colors.over,
            );
        }
    }
}

/// A cell of `w` by `h` points, contents left to right, centred vertically.
fn cell<R>(ui: &mut Ui, w: f32, h: f32, add: impl FnOnce(&mut Ui) -> R) -> R {
    ui.allocate_ui_with_layout(
        Vec2::new(w, h),
        Layout::left_to_right(Align::Center),
        |ui| {
            ui.set_min_size(Vec2::new(w, h));
            add(ui)
        },
    )
    .inner
}

/// The score as a number and a bar (green at most the threshold).
fn score_ui(ui: &mut Ui, score: f32, threshold: f32, colors: &SimilarColors) {
    let color = if score <= threshold {
        colors.under
    } else {
        colors.over
    };
    ui.label(
        RichText::new(format!("{score:.3}"))
            .monospace()
            .color(color),
    );
    let (rect, _) = ui.allocate_exact_size(Vec2::new(36.0, 8.0), Sense::hover());
    if ui.is_rect_visible(rect) {
        paint_score_bar(
            &ui.painter_at(rect),
            rect,
            score / SCORE_SCALE,
            colors.thumb_bg,
            color,
        );
    }
}
