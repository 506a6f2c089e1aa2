//! The tag timeline: a ruler, one lane of ranges per tag (grouped by namespace), a playhead, and
//! every range gesture (create, resize, move, select, box select). Split into a pure
//! [`model`], [`layout`] (frames <-> points, hit tests) and [`paint`]; this file wires input.

pub mod layout;
pub mod model;
pub mod paint;

use std::collections::BTreeSet;

use egui::{Align, Color32, CursorIcon, Layout, Pos2, Rect, Sense, Ui, UiBuilder, pos2};

use self::layout::{
    LaneHit, RowLayout, TimeAxis, hit_lane, hit_marker, markers_in_span, ranges_in_span,
};
use self::model::{Gesture, MarkerSel, Row, Selected, rows, short_name};
use crate::core::tags::{ClipId, Range, TagDocument};
use crate::ui::command::AppCommand;
use crate::ui::theme::{self, HEADER_WIDTH, RULER_HEIGHT};

/// How near (in points) a dragged boundary must come to a target to snap to it.
const SNAP_PX: f64 = 8.0;

/// Zoom limits, in points per frame.
/// Small enough to fit the longest clip a document holds (2^28 frames) in a few hundred points.
const MIN_PX_PER_FRAME: f64 = 1e-6;
const MAX_PX_PER_FRAME: f64 = 60.0;

/// View state of the timeline (not part of the document, not undoable).
#[derive(Debug, Clone)]
pub struct TimelineView {
    /// Frame at the left edge of the track area.
    pub first_frame: f64,
    pub px_per_frame: f64,
    pub scroll_y: f32,
    /// Collapsed namespace groups.
    pub collapsed: BTreeSet<String>,
    /// Hidden tags (by name): drawn dimmed, ignored by edge jumps.
    pub hidden: BTreeSet<String>,
    /// Soloed tags (by name): when any, only they are shown at full strength.
    pub solo: BTreeSet<String>,
    /// The gesture in progress.
    pub gesture: Option<Gesture>,
    /// The frame (fractional) under the press that started the gesture: a move counts from it,
    /// so that it follows the pointer while the view auto-scrolls.
    pub gesture_from: f64,
    /// The clip and document state the gesture started on ([`gesture_ground`]): when either
    /// changes under it (another clip shown, an undo, an import, an apply), the gesture is dropped
    /// instead of landing on what it was not made for.
    pub gesture_on: Option<(ClipId, u64)>,
    /// Box selection in progress: press point and current point.
    pub box_select: Option<(Pos2, Pos2, bool)>,
    /// Fit the clip on the next frame.
    pub fit_pending: bool,
    /// Bring this range on screen on the next frame ([`TimelineView::reveal_range`]): a jump
    /// to a query result, say.
    pub reveal: Option<Range>,
    /// The width of the lanes when the view last fitted the clip, while nothing has zoomed or
    /// panned it since: a resized window (or panel) then fits the clip again.
    fitted_width: Option<f32>,
    /// The boundary the gesture snapped to (drawn as the snap line), if it did.
    pub snap_line: Option<u32>,
    /// Layout of the last frame (for tests and for following the playhead).
    pub last_axis: Option<TimeAxis>,
    pub last_rows: Vec<Row>,
    pub last_row_layout: Option<RowLayout>,
    scrubbing: bool,
}

impl Default for TimelineView {
    fn default() -> Self {
        Self {
            first_frame: 0.0,
            px_per_frame: 4.0,
            scroll_y: 0.0,
            collapsed: BTreeSet::new(),
            hidden: BTreeSet::new(),
            solo: BTreeSet::new(),
            gesture: None,
            gesture_from: 0.0,
            gesture_on: None,
            box_select: None,
            fit_pending: true,
            reveal: None,
            fitted_width: None,
            snap_line: None,
            last_axis: None,
            last_rows: Vec::new(),
            last_row_layout: None,
            scrubbing: false,
        }
    }
}

impl TimelineView {
    /// True when a tag is drawn dimmed (hidden, or others are soloed).
    pub fn is_dimmed(&self, name: &str) -> bool {
        self.hidden.contains(name) || (!self.solo.is_empty() && !self.solo.contains(name))
    }

    /// Zooms by `factor` keeping frame `anchor` under the same x.
    pub fn zoom_around(&mut self, factor: f64, anchor: f64) {
        let new = (self.px_per_frame * factor).clamp(MIN_PX_PER_FRAME, MAX_PX_PER_FRAME);
        let ratio = self.px_per_frame / new;
        self.first_frame = anchor - (anchor - self.first_frame) * ratio;
        self.px_per_frame = new;
        self.fitted_width = None;
    }

    /// Scrolls the view so that `r` is on screen in a track area `width` points wide (centred when
    /// it fits, its start near the left edge otherwise), and zooms in first when it would be
    /// drawn under 4 points wide, so that it spans a third of the view. A range already on
    /// screen at a visible size leaves the view as it is.
    pub fn reveal_range(&mut self, r: Range, width: f64) {
        let len = f64::from(r.stop.saturating_sub(r.start).max(1));
        if len * self.px_per_frame < 4.0 {
            self.px_per_frame = (width / 3.0 / len).clamp(MIN_PX_PER_FRAME, MAX_PX_PER_FRAME);
            self.fitted_width = None;
        }
        let visible = width / self.px_per_frame;
        let (start, stop) = (f64::from(r.start), f64::from(r.start) + len);
        if start < self.first_frame || stop > self.first_frame + visible {
            self.first_frame = if len <= visible * 0.8 {
                (start + stop) / 2.0 - visible / 2.0
            } else {
                start - visible * 0.1
            };
            self.fitted_width = None;
        }
    }

    /// The screen centre of frame `frame`'s cell on tag `tag`'s lane, from the last drawn layout.
    pub fn lane_point(&self, tag: usize, frame: u32) -> Option<Pos2> {
        let axis = self.last_axis?;
        let rl = self.last_row_layout.as_ref()?;
        let i = self
            .last_rows
            .iter()
            .position(|r| matches!(r, Row::Lane { tag: t, .. } if *t == tag))?;
        let (y0, y1) = rl.row_y(i, &self.last_rows);
        Some(layout::frame_point(&axis, frame, y0, y1))
    }

    /// The screen position of the boundary before `frame` on tag `tag`'s lane (for edge drags).
    pub fn lane_boundary_point(&self, tag: usize, frame: u32) -> Option<Pos2> {
        let axis = self.last_axis?;
        let p = self.lane_point(tag, frame)?;
        Some(pos2(axis.x(frame as f64), p.y))
    }
}

/// What the timeline reads.
pub struct TimelineInput<'a> {
    pub doc: &'a TagDocument,
    pub clip: ClipId,
    pub playhead: f64,
    pub playing: bool,
    pub selection: &'a [Selected],
    pub marker_selection: &'a [MarkerSel],
    pub active_tag: Option<usize>,
    pub mark_in: Option<u32>,
    pub dark: bool,
    /// Read-only lanes drawn under the tag lanes (query results).
    pub extra_lanes: &'a [ExtraLane],
}

/// A read-only lane under the tag lanes, e.g. a query result from one engine. Clicking one of its
/// ranges queues [`AppCommand::ExtraRangeClicked`].
#[derive(Debug, Clone, PartialEq)]
pub struct ExtraLane {
    /// Identifies the lane in the click command.
    pub id: String,
    pub label: String,
    pub tooltip: String,
    pub color: Color32,
    pub ranges: Vec<Range>,
    /// Drawn in the error colour (e.g. the two engines disagree).
    pub alarm: bool,
}

/// What a gesture is made against: the clip list and every tag's content, as versions (a drag
/// changes nothing until it is released, so any change meanwhile is someone else's).
pub fn gesture_ground(doc: &TagDocument) -> u64 {
    doc.tags.iter().fold(
        doc.clips_version ^ (doc.tags.len() as u64).rotate_left(32),
        |h, t| h.rotate_left(7) ^ t.version,
    )
}

/// Shows the timeline in the available space; queues commands into `out`.
pub fn timeline_ui(
    ui: &mut Ui,
    input: &TimelineInput<'_>,
    view: &mut TimelineView,
    out: &mut Vec<AppCommand>,
) {
    let doc = input.doc;
    let ground = (input.clip, gesture_ground(doc));
    if view.gesture.is_some() && view.gesture_on != Some(ground) {
        view.gesture = None;
        view.snap_line = None;
    }
    view.gesture_on = Some(ground);
    let Some(clip) = doc.clips.get(input.clip as usize) else {
        ui.label("No clip in the project. Import a BVH or glTF file (File > Import animation) or drop one on the window.");
        return;
    };
    let frames = clip.frames;
    let pal = theme::palette(input.dark);
    let full = ui.available_rect_before_wrap();
    let mut row_list = rows(doc, &view.collapsed);
    row_list.extend((0..input.extra_lanes.len()).map(Row::Extra));
    let header_width = header_width(ui, &row_list, input, full.width());
    let header_rect = Rect::from_min_max(
        pos2(full.left(), full.top() + RULER_HEIGHT),
        pos2(full.left() + header_width, full.bottom()),
    );
    let ruler_rect = Rect::from_min_max(
        pos2(full.left() + header_width, full.top()),
        pos2(full.right(), full.top() + RULER_HEIGHT),
    );
    let tracks_rect = Rect::from_min_max(
        pos2(full.left() + header_width, full.top() + RULER_HEIGHT),
        full.max,
    );
    if tracks_rect.width() < 20.0 || tracks_rect.height() < 10.0 {
        return;
    }
    if view
        .fitted_width
        .is_some_and(|w| (w - tracks_rect.width()).abs() > 0.5)
    {
        view.fit_pending = true;
    }
    if view.fit_pending {
        view.px_per_frame = (tracks_rect.width() as f64 / frames.max(1) as f64 * 0.98)
            .clamp(MIN_PX_PER_FRAME, MAX_PX_PER_FRAME);
        view.first_frame = 0.0;
        view.fit_pending = false;
        view.fitted_width = Some(tracks_rect.width());
    }
    let row_layout = RowLayout::new(
        &row_list,
        tracks_rect.top(),
        tracks_rect.height(),
        view.scroll_y,
    );
    view.scroll_y = row_layout.scroll_y;

    // Input on the whole track + ruler area.
    let area = tracks_rect.union(ruler_rect);
    let id = ui.scope_id().with("timeline_tracks");
    let response = ui.interact(area, id, Sense::click_and_drag());
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, "Timeline tracks"));

    // Zoom (ctrl + wheel / pinch), pan and scroll.
    if response.hovered() || response.dragged() {
        let (zoom, scroll, pointer, shift) = ui.input(|i| {
            (
                i.zoom_delta(),
                i.smooth_scroll_delta(),
                i.pointer.hover_pos(),
                i.modifiers.shift,
            )
        });
        let axis0 = TimeAxis {
            left: tracks_rect.left(),
            width: tracks_rect.width(),
            first_frame: view.first_frame,
            px_per_frame: view.px_per_frame,
        };
        if zoom != 1.0 {
            let anchor = pointer.map_or(axis0.frame_at(tracks_rect.center().x), |p| {
                axis0.frame_at(p.x)
            });
            view.zoom_around(zoom as f64, anchor);
        }
        if scroll != egui::Vec2::ZERO {
            let (dx, dy) = if shift {
                (scroll.y + scroll.x, 0.0)
            } else {
                (scroll.x, scroll.y)
            };
            view.first_frame -= dx as f64 / view.px_per_frame;
            view.scroll_y -= dy;
            if dx != 0.0 {
                view.fitted_width = None;
            }
        }
    }
    // The wheel over the lane names scrolls the lanes, as over the lanes.
    if !response.hovered() && ui.rect_contains_pointer(header_rect) {
        let dy = ui.input(|i| i.smooth_scroll_delta().y);
        view.scroll_y -= dy;
    }
    // Zoomed out at most until the clip takes a tenth of the view (the zoom limit itself is
    // for the longest clips).
    let floor = (f64::from(tracks_rect.width()) / (frames.max(1) as f64 * 10.0))
        .clamp(MIN_PX_PER_FRAME, MAX_PX_PER_FRAME);
    view.px_per_frame = view.px_per_frame.max(floor);
    // Keep the view on the clip: at most half a screen of empty space either side.
    let visible = tracks_rect.width() as f64 / view.px_per_frame;
    view.first_frame = view.first_frame.clamp(
        -visible * 0.5,
        (frames as f64 - visible * 0.5).max(-visible * 0.5),
    );
    // Follow the playhead while playing.
    if input.playing
        && (input.playhead < view.first_frame || input.playhead > view.first_frame + visible)
    {
        view.first_frame = (input.playhead - visible * 0.1).max(0.0);
    }
    if let Some(r) = view.reveal.take() {
        view.reveal_range(r, f64::from(tracks_rect.width()));
    }
    let axis = TimeAxis {
        left: tracks_rect.left(),
        width: tracks_rect.width(),
        first_frame: view.first_frame,
        px_per_frame: view.px_per_frame,
    };
    let row_layout = RowLayout::new(
        &row_list,
        tracks_rect.top(),
        tracks_rect.height(),
        view.scroll_y,
    );
    view.scroll_y = row_layout.scroll_y;
    let lane_ranges = |tag: usize| -> &[Range] {
        doc.tags
            .get(tag)
            .map_or(&[][..], |t| t.ranges_on(input.clip))
    };
    let lane_markers = |tag: usize| -> &[u32] {
        doc.tags
            .get(tag)
            .map_or(&[][..], |t| t.markers_on(input.clip))
    };
    let (shift, ctrl) = ui.input(|i| (i.modifiers.shift, i.modifiers.command));

    // Hover feedback.
    if let Some(p) = response.hover_pos()
        && view.gesture.is_none()
        && let Some(i) = row_layout.row_at(p.y, &row_list)
        && let Row::Lane { tag, .. } = row_list[i]
    {
        if let Some(f) = hit_marker(&axis, lane_markers(tag), p.x) {
            ui.ctx().set_cursor_icon(CursorIcon::Grab);
            if let Some(n) = doc.tags[tag].note(input.clip, crate::core::tags::Anchor::Marker(f)) {
                response
                    .clone()
                    .on_hover_text(format!("marker at frame {f}: {}", note_text(n)));
            } else {
                response
                    .clone()
                    .on_hover_text(format!("{} marker at frame {f}", doc.tags[tag].name));
            }
        } else {
            match hit_lane(&axis, lane_ranges(tag), p.x) {
                LaneHit::Edge(..) => ui.ctx().set_cursor_icon(CursorIcon::ResizeHorizontal),
                LaneHit::Body(r) => {
                    ui.ctx().set_cursor_icon(CursorIcon::Grab);
                    if let Some(n) =
                        doc.tags[tag].note(input.clip, crate::core::tags::Anchor::Range(r))
                    {
                        response.clone().on_hover_text(format!(
                            "{} [{}, {}): {}",
                            doc.tags[tag].name,
                            r.start,
                            r.stop,
                            note_text(n)
                        ));
                    }
                }
                LaneHit::Empty => {}
            }
        }
    }

    // Gestures.
    let press = ui.input(|i| i.pointer.press_origin());
    let pointer = response.interact_pointer_pos();
    if response.drag_started()
        && let Some(origin) = press
    {
        view.gesture_from = axis.frame_at(origin.x);
        if ruler_rect.contains(origin) {
            view.scrubbing = true;
        } else if let Some(i) = row_layout.row_at(origin.y, &row_list)
            && let Row::Lane { tag, .. } = row_list[i]
        {
            out.push(AppCommand::SetActiveTag(Some(tag)));
            let marker = hit_marker(&axis, lane_markers(tag), origin.x);
            match hit_lane(&axis, lane_ranges(tag), origin.x) {
                _ if marker.is_some() => {
                    let f = marker.expect("checked");
                    let mut items: Vec<MarkerSel> = input.marker_selection.to_vec();
                    if !items.contains(&(tag, f)) {
                        items = if shift || ctrl {
                            [items, vec![(tag, f)]].concat()
                        } else {
                            vec![(tag, f)]
                        };
                        out.push(AppCommand::SelectItems {
                            ranges: if shift || ctrl {
                                input.selection.to_vec()
                            } else {
                                Vec::new()
                            },
                            markers: items.clone(),
                        });
                    }
                    // Ranges selected with the marker move with it.
                    let ranges: Vec<Selected> =
                        if input.marker_selection.contains(&(tag, f)) || shift || ctrl {
                            input.selection.to_vec()
                        } else {
                            Vec::new()
                        };
                    view.gesture = Some(if ranges.is_empty() {
                        Gesture::MoveMarkers { items, delta: 0 }
                    } else {
                        Gesture::Move {
                            items: ranges,
                            markers: items,
                            delta: 0,
                        }
                    });
                }
                LaneHit::Edge(r, edge) => {
                    view.gesture = Some(Gesture::Resize {
                        tag,
                        original: r,
                        edge,
                        frame: axis.boundary_at(origin.x, frames),
                    })
                }
                LaneHit::Body(r) => {
                    let mut items: Vec<Selected> = input.selection.to_vec();
                    // Markers selected with the range move with it.
                    let mut markers: Vec<MarkerSel> = input.marker_selection.to_vec();
                    if !items.contains(&(tag, r)) {
                        items = if shift || ctrl {
                            [items, vec![(tag, r)]].concat()
                        } else {
                            markers.clear();
                            vec![(tag, r)]
                        };
                        out.push(AppCommand::SelectItems {
                            ranges: items.clone(),
                            markers: markers.clone(),
                        });
                    }
                    view.gesture = Some(Gesture::Move {
                        items,
                        markers,
                        delta: 0,
                    });
                }
                LaneHit::Empty if shift || ctrl => {
                    view.box_select = Some((origin, origin, shift || ctrl))
                }
                LaneHit::Empty => {
                    let f = axis.cell_at(origin.x, frames);
                    view.gesture = Some(Gesture::Create {
                        tag,
                        anchor: f,
                        current: f,
                    });
                }
            }
        }
    }
    if response.dragged()
        && let Some(p) = pointer
    {
        if view.scrubbing {
            out.push(AppCommand::SetPlayhead(axis.boundary_at(p.x, frames) as f64));
        }
        match &mut view.gesture {
            Some(Gesture::Create { current, .. }) => *current = axis.cell_at(p.x, frames),
            Some(Gesture::Resize { frame, .. }) => *frame = axis.boundary_at(p.x, frames),
            Some(Gesture::Move { delta, .. } | Gesture::MoveMarkers { delta, .. }) => {
                *delta = (axis.frame_at(p.x) - view.gesture_from).round() as i64;
            }
            None => {}
        }
        // Snap to the playhead and to other ranges' edges on any lane (Alt: no snapping).
        view.snap_line = None;
        if let Some(g) = &mut view.gesture
            && !ui.input(|i| i.modifiers.alt)
        {
            let (exclude, exclude_markers): (Vec<Selected>, Vec<MarkerSel>) = match g {
                Gesture::Move { items, markers, .. } => (items.clone(), markers.clone()),
                Gesture::MoveMarkers { items, .. } => (Vec::new(), items.clone()),
                Gesture::Resize { tag, original, .. } => (vec![(*tag, *original)], Vec::new()),
                Gesture::Create { .. } => (Vec::new(), Vec::new()),
            };
            let targets = model::snap_targets(
                doc,
                input.clip,
                input.playhead.round() as u32,
                &exclude,
                &exclude_markers,
            );
            let tolerance = SNAP_PX / view.px_per_frame;
            view.snap_line = g.snap_to(&targets, tolerance);
        }
        if let Some((_, cur, _)) = &mut view.box_select {
            *cur = p;
        }
        // Auto-scroll horizontally when dragging past the edges.
        if view.gesture.is_some() {
            if p.x > tracks_rect.right() - 10.0 {
                view.first_frame += 4.0 / view.px_per_frame;
                view.fitted_width = None;
            } else if p.x < tracks_rect.left() + 10.0 {
                view.first_frame -= 4.0 / view.px_per_frame;
                view.fitted_width = None;
            }
        }
    }
    if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
        view.gesture = None;
        view.box_select = None;
        view.snap_line = None;
    }
    if response.drag_stopped() {
        view.scrubbing = false;
        view.snap_line = None;
        if let Some(g) = view.gesture.take()
            && let Some((edit, label)) = g.finish(doc, input.clip, frames)
        {
            let select = match &g {
                Gesture::Move {
                    items,
                    markers,
                    delta,
                } => {
                    let d = model::clamp_items(items, markers, *delta, frames);
                    Some(
                        items
                            .iter()
                            .map(|(t, r)| {
                                (
                                    *t,
                                    Range::new(
                                        (r.start as i64 + d) as u32,
                                        (r.stop as i64 + d) as u32,
                                    ),
                                )
                            })
                            .collect(),
                    )
                }
                // The range drawn, or the one resized (the app selects the range the lane
                // holds there after the edit, merged or trimmed): ready for exact frames.
                Gesture::Create {
                    tag,
                    anchor,
                    current,
                } => Some(vec![(
                    *tag,
                    Range::new(*anchor.min(current), anchor.max(current).saturating_add(1)),
                )]),
                Gesture::Resize { tag, original, .. } => Some(vec![(*tag, *original)]),
                Gesture::MoveMarkers { .. } => None,
            };
            out.push(AppCommand::Edit {
                edit,
                label: label.to_owned(),
                select,
            });
            if let Gesture::MoveMarkers { items, delta } = &g {
                let d = model::clamp_marker_move(items, *delta, frames);
                out.push(AppCommand::SelectItems {
                    ranges: Vec::new(),
                    markers: items
                        .iter()
                        .map(|(t, f)| (*t, (i64::from(*f) + d) as u32))
                        .collect(),
                });
            }
            // Ranges and markers moved together stay selected together.
            if let Gesture::Move {
                items,
                markers,
                delta,
            } = &g
                && !markers.is_empty()
            {
                let d = model::clamp_items(items, markers, *delta, frames);
                out.push(AppCommand::SelectItems {
                    ranges: items
                        .iter()
                        .map(|(t, r)| {
                            (
                                *t,
                                Range::new((r.start as i64 + d) as u32, (r.stop as i64 + d) as u32),
                            )
                        })
                        .collect(),
                    markers: markers
                        .iter()
                        .map(|(t, f)| (*t, (i64::from(*f) + d) as u32))
                        .collect(),
                });
            }
        }
        if let Some((a, b, add)) = view.box_select.take() {
            let (y0, y1) = (a.y.min(b.y), a.y.max(b.y));
            let (mut picked, mut picked_markers): (Vec<Selected>, Vec<MarkerSel>) = if add {
                (input.selection.to_vec(), input.marker_selection.to_vec())
            } else {
                (Vec::new(), Vec::new())
            };
            for i in row_layout.visible() {
                let (ry0, ry1) = row_layout.row_y(i, &row_list);
                if let Row::Lane { tag, .. } = row_list[i]
                    && ry1 > y0
                    && ry0 < y1
                {
                    for r in ranges_in_span(&axis, lane_ranges(tag), a.x, b.x) {
                        if !picked.contains(&(tag, r)) {
                            picked.push((tag, r));
                        }
                    }
                    for f in markers_in_span(&axis, lane_markers(tag), a.x, b.x) {
                        if !picked_markers.contains(&(tag, f)) {
                            picked_markers.push((tag, f));
                        }
                    }
                }
            }
            out.push(AppCommand::SelectItems {
                ranges: picked,
                markers: picked_markers,
            });
        }
    }
    if response.clicked()
        && let Some(p) = pointer
    {
        if ruler_rect.contains(p) {
            out.push(AppCommand::SetPlayhead(axis.boundary_at(p.x, frames) as f64));
        } else if let Some(i) = row_layout.row_at(p.y, &row_list) {
            match row_list[i] {
                Row::Lane { tag, .. } => {
                    out.push(AppCommand::SetActiveTag(Some(tag)));
                    let marker = hit_marker(&axis, lane_markers(tag), p.x);
                    match hit_lane(&axis, lane_ranges(tag), p.x) {
                        _ if marker.is_some() => {
                            let f = marker.expect("checked");
                            if shift || ctrl {
                                out.push(AppCommand::ToggleMarkerSelected((tag, f)));
                            } else {
                                out.push(AppCommand::SelectItems {
                                    ranges: Vec::new(),
                                    markers: vec![(tag, f)],
                                });
                            }
                        }
                        LaneHit::Body(r) | LaneHit::Edge(r, _) => {
                            if shift || ctrl {
                                out.push(AppCommand::ToggleSelected((tag, r)));
                            } else {
                                out.push(AppCommand::Select(vec![(tag, r)]));
                            }
                        }
                        LaneHit::Empty => {
                            out.push(AppCommand::Select(Vec::new()));
                            out.push(AppCommand::SetPlayhead(axis.boundary_at(p.x, frames) as f64));
                        }
                    }
                }
                Row::Extra(e) => {
                    let lane = &input.extra_lanes[e];
                    if let LaneHit::Body(r) | LaneHit::Edge(r, _) =
                        hit_lane(&axis, &lane.ranges, p.x)
                    {
                        out.push(AppCommand::ExtraRangeClicked {
                            lane: lane.id.clone(),
                            range: r,
                        });
                    } else {
                        out.push(AppCommand::SetPlayhead(axis.boundary_at(p.x, frames) as f64));
                    }
                }
                Row::Group { ref namespace, .. } => {
                    out.push(AppCommand::ToggleGroup(namespace.clone()))
                }
            }
        }
    }

    // Double-click on a lane: a marker on that frame.
    if response.double_clicked()
        && let Some(p) = pointer
        && let Some(i) = row_layout.row_at(p.y, &row_list)
        && let Row::Lane { tag, .. } = row_list[i]
        && hit_marker(&axis, lane_markers(tag), p.x).is_none()
    {
        // On the frame whose cell was clicked, and the playhead with it (the click before put
        // it on the nearest frame boundary, which is the next frame in the cell's right half).
        let f = axis.cell_at(p.x, frames);
        out.push(AppCommand::AddMarker(Some((tag, f))));
        out.push(AppCommand::SetPlayhead(f64::from(f)));
    }

    // Paint.
    let painter = ui.painter_at(full);
    paint::ruler(&painter, ruler_rect, &axis, frames, clip.fps, &pal);
    let preview = view
        .gesture
        .as_ref()
        .map(|g| g.preview(doc, input.clip, frames))
        .unwrap_or_default();
    let preview_markers = view
        .gesture
        .as_ref()
        .map(|g| g.preview_markers(doc, input.clip, frames))
        .unwrap_or_default();
    // Sorted: the painter looks each range up by binary search.
    let selected_in = |tag: usize| -> Vec<Range> {
        let mut v: Vec<Range> = input
            .selection
            .iter()
            .filter(|(t, _)| *t == tag)
            .map(|(_, r)| *r)
            .collect();
        v.sort_unstable();
        v
    };
    let lane_painter = ui.painter_at(tracks_rect);
    for i in row_layout.visible() {
        let (y0, y1) = row_layout.row_y(i, &row_list);
        let rect = Rect::from_min_max(pos2(tracks_rect.left(), y0), pos2(tracks_rect.right(), y1));
        match &row_list[i] {
            Row::Group { .. } => {
                lane_painter.rect_filled(rect, 0.0, pal.ruler_bg);
            }
            Row::Extra(e) => {
                let lane = &input.extra_lanes[*e];
                let color = if lane.alarm { pal.error } else { lane.color };
                paint::lane(
                    &lane_painter,
                    rect,
                    &axis,
                    frames,
                    &lane.ranges,
                    &[],
                    color,
                    pal.ruler_bg,
                    false,
                    &pal,
                );
            }
            Row::Lane { tag, .. } => {
                let t = &doc.tags[*tag];
                let ranges = preview
                    .iter()
                    .find(|(pt, _)| pt == tag)
                    .map_or(lane_ranges(*tag), |(_, l)| l.as_slice());
                let bg = if input.active_tag == Some(*tag) {
                    pal.track_bg_active
                } else if i % 2 == 0 {
                    pal.track_bg
                } else {
                    pal.track_bg_alt
                };
                let sel = if preview.is_empty() {
                    selected_in(*tag)
                } else {
                    Vec::new()
                };
                let color = theme::tag_color(t.color, &t.name);
                paint::lane(
                    &lane_painter,
                    rect,
                    &axis,
                    frames,
                    ranges,
                    &sel,
                    color,
                    bg,
                    view.is_dimmed(&t.name),
                    &pal,
                );
                let noted: Vec<Range> = t
                    .notes_on(input.clip)
                    .iter()
                    .filter_map(|(a, _)| match a {
                        crate::core::tags::Anchor::Range(r) => Some(*r),
                        crate::core::tags::Anchor::Marker(_) => None,
                    })
                    .collect();
                if preview.is_empty() {
                    paint::note_dots(&lane_painter, rect, &axis, &noted, pal.ruler_text);
                }
                let markers = preview_markers
                    .iter()
                    .find(|(pt, _)| pt == tag)
                    .map_or(lane_markers(*tag), |(_, l)| l.as_slice());
                // Both sorted: the painter looks each marker up by binary search.
                let mut marker_sel: Vec<u32> = if preview_markers.is_empty() {
                    input
                        .marker_selection
                        .iter()
                        .filter(|(x, _)| x == tag)
                        .map(|(_, f)| *f)
                        .collect()
                } else {
                    Vec::new()
                };
                marker_sel.sort_unstable();
                let mut marker_notes: Vec<u32> = t
                    .notes_on(input.clip)
                    .iter()
                    .filter_map(|(a, _)| match a {
                        crate::core::tags::Anchor::Marker(f) => Some(*f),
                        crate::core::tags::Anchor::Range(_) => None,
                    })
                    .collect();
                marker_notes.sort_unstable();
                paint::markers(
                    &lane_painter,
                    rect,
                    &axis,
                    markers,
                    &marker_sel,
                    &marker_notes,
                    color,
                    view.is_dimmed(&t.name),
                    &pal,
                );
                if input.active_tag == Some(*tag)
                    && let Some(m) = input.mark_in
                {
                    paint::marker(&lane_painter, rect, &axis, m as f64, pal.mark_in, 2.0);
                }
            }
        }
    }
    if let Some((a, b, _)) = view.box_select {
        lane_painter.rect_filled(Rect::from_two_pos(a, b), 0.0, pal.box_select);
    }
    if let Some(f) = view.snap_line.filter(|_| view.gesture.is_some()) {
        paint::marker(&painter, area, &axis, f as f64, pal.snap, 1.0);
    }
    // A mark in made with no lane picked (for "Find similar", or before picking the lane to
    // mark on): across the whole timeline.
    if input.active_tag.is_none()
        && let Some(m) = input.mark_in
    {
        paint::marker(&painter, area, &axis, m as f64, pal.mark_in, 2.0);
    }
    paint::marker(&painter, area, &axis, input.playhead, pal.playhead, 1.5);
    paint::playhead_handle(&painter, ruler_rect, &axis, input.playhead, pal.playhead);
    if row_list.is_empty() {
        let keys = crate::ui::keymap::shortcut_text(ui.ctx(), crate::ui::keymap::Action::NewTag);
        paint::empty_hint(&lane_painter, tracks_rect, &keys, &pal);
    }

    // Lane headers: real widgets (accessible, clickable) for the visible rows only.
    header_ui(ui, header_rect, &row_list, &row_layout, input, view, out);
    view.last_axis = Some(axis);
    view.last_rows = row_list;
    view.last_row_layout = Some(row_layout);
    ui.advance_cursor_after_rect(full);
}

/// Points of a lane header besides its name: the colour swatch, the H and S buttons, the name
/// button's padding and the gaps (and [`INDENT`] for a lane in a namespace).
const LANE_CHROME: f32 = 22.0 + 44.0 + 4.0 + 24.0;
/// Indent of a lane in a namespace.
const INDENT: f32 = 14.0;
/// Points of a read-only lane's header besides its label.
const EXTRA_CHROME: f32 = 12.0;
/// The widest the lane headers grow for long names, and at most this share of the timeline.
const HEADER_WIDTH_MAX: f32 = 380.0;
const HEADER_SHARE_MAX: f32 = 0.35;

/// The width of the lane headers: [`HEADER_WIDTH`], wider for names that would be cut (up to
/// [`HEADER_WIDTH_MAX`] and about a third of the timeline), narrower in a narrow timeline (a
/// laptop's window: the lanes keep most of it) unless names need more. Names still too long are
/// cut; their tooltip has them whole.
fn header_width(ui: &Ui, row_list: &[Row], input: &TimelineInput<'_>, full_width: f32) -> f32 {
    let least = if full_width < 600.0 {
        HEADER_WIDTH.min((full_width * 0.3).max(130.0))
    } else {
        HEADER_WIDTH
    };
    let font = egui::TextStyle::Button.resolve(ui.style());
    let color = ui.visuals().text_color();
    let needed = row_list
        .iter()
        .map(|row| {
            let (text, chrome) = match row {
                Row::Lane { tag, indent: true } => {
                    (short_name(&input.doc.tags[*tag].name), LANE_CHROME + INDENT)
                }
                Row::Lane { tag, .. } => (input.doc.tags[*tag].name.as_str(), LANE_CHROME),
                Row::Extra(e) => (input.extra_lanes[*e].label.as_str(), EXTRA_CHROME),
                Row::Group {
                    namespace, count, ..
                } => {
                    let text = format!("- {namespace}  ({count})");
                    let galley = ui.painter().layout_no_wrap(text, font.clone(), color);
                    return galley.size().x + EXTRA_CHROME;
                }
            };
            let galley = ui
                .painter()
                .layout_no_wrap(text.to_owned(), font.clone(), color);
            galley.size().x + chrome
        })
        .fold(0.0f32, f32::max);
    needed.clamp(
        least,
        least.max(HEADER_WIDTH_MAX.min(full_width * HEADER_SHARE_MAX)),
    )
}

fn header_ui(
    ui: &mut Ui,
    header_rect: Rect,
    row_list: &[Row],
    row_layout: &RowLayout,
    input: &TimelineInput<'_>,
    view: &TimelineView,
    out: &mut Vec<AppCommand>,
) {
    let doc = input.doc;
    let clip_rect = ui.clip_rect().intersect(header_rect);
    for i in row_layout.visible() {
        let (y0, y1) = row_layout.row_y(i, row_list);
        let rect = Rect::from_min_max(
            pos2(header_rect.left(), y0),
            pos2(header_rect.right() - 4.0, y1),
        );
        // Each row's widgets (its colour picker's popup, its menus) keyed by what the row is,
        // not by its place among the rows on screen: a picker left open while the lanes scrolled
        // (or a tag was added above) went on to recolour the tag that took its place.
        let salt = match &row_list[i] {
            Row::Extra(e) => egui::Id::unique(("extra lane", input.extra_lanes[*e].label.as_str())),
            Row::Group { namespace, .. } => egui::Id::unique(("lane group", namespace.as_str())),
            Row::Lane { tag, .. } => {
                egui::Id::unique(("lane", doc.tags.get(*tag).map_or("", |t| t.name.as_str())))
            }
        };
        let mut child = ui.new_child(
            UiBuilder::new()
                .id_salt(salt)
                .max_rect(rect)
                .layout(Layout::left_to_right(Align::Center)),
        );
        child.set_clip_rect(clip_rect);
        match &row_list[i] {
            Row::Extra(e) => {
                let lane = &input.extra_lanes[*e];
                let text = egui::RichText::new(&lane.label).italics();
                let text = if lane.alarm {
                    text.color(crate::ui::theme::palette(input.dark).error)
                } else {
                    text
                };
                child
                    .add(egui::Label::new(text).truncate())
                    .on_hover_text(&lane.tooltip);
            }
            Row::Group {
                namespace,
                collapsed,
                count,
            } => {
                let arrow = if *collapsed { "+" } else { "-" };
                if child
                    .add(
                        egui::Button::new(format!("{arrow} {namespace}  ({count})"))
                            .frame(false)
                            .truncate(),
                    )
                    .on_hover_text(format!(
                        "{namespace}: show or hide the tags of this namespace"
                    ))
                    .clicked()
                {
                    out.push(AppCommand::ToggleGroup(namespace.clone()));
                }
            }
            Row::Lane { tag, indent } => {
                let t = &doc.tags[*tag];
                if *indent {
                    child.add_space(INDENT);
                }
                let mut rgb = crate::core::tags::color::shown_color(t.color, &t.name);
                let before = rgb;
                child.spacing_mut().interact_size.x = 22.0;
                let swatch = egui::color_picker::color_edit_button_srgb(&mut child, &mut rgb);
                swatch.widget_info(|| {
                    egui::WidgetInfo::labeled(
                        egui::Role::ColorWell,
                        true,
                        format!("Colour of {}", t.name),
                    )
                });
                // One undo step for each time the picker is opened (its drags join it); two
                // recolourings of a tag merged into one, and undo skipped the first colour. One
                // count for every swatch: a swatch's id follows its row on screen, so a count of
                // its own started again when the lanes scrolled or a group above collapsed.
                let session_id = egui::Id::unique("taglane colour session");
                if swatch.clicked() {
                    child.data_mut(|d| {
                        let n = d.get_temp_mut_or_default::<u32>(session_id);
                        *n = n.wrapping_add(1);
                    });
                }
                if rgb != before {
                    let session = child.data(|d| d.get_temp::<u32>(session_id).unwrap_or(0));
                    out.push(AppCommand::EditKeyed {
                        edit: crate::core::doc::Edit::SetTagColor {
                            index: *tag,
                            color: Some(rgb),
                        },
                        label: format!("recolour {}", t.name),
                        key: 0x_c010_0000 + *tag as u64 + (u64::from(session) << 32),
                    });
                }
                let shown = if *indent {
                    short_name(&t.name)
                } else {
                    &t.name
                };
                let count = t.ranges_on(input.clip).len();
                let marker_count = t.markers_on(input.clip).len();
                let name_color = if view.is_dimmed(&t.name) {
                    child.visuals().weak_text_color()
                } else {
                    child.visuals().strong_text_color()
                };
                // The name is cut short of the H and S buttons (laid out after it, at the right).
                // A gap of 6 points, so the H does not read as part of the name.
                let room = (child.available_width() - 44.0).max(24.0);
                let name = child
                    .scope(|ui| {
                        ui.set_max_width(room);
                        ui.add(egui::Button::selectable(input.active_tag == Some(*tag), egui::RichText::new(shown).color(name_color)).truncate())
                    })
                    .inner
                    .on_hover_text(format!("{}: {count} range(s) and {marker_count} marker(s) on this clip. Double-click to rename; right-click for more.", t.name));
                if name.clicked() {
                    out.push(AppCommand::SetActiveTag(Some(*tag)));
                }
                if name.double_clicked() {
                    out.push(AppCommand::StartRename(*tag));
                }
                name.context_menu(|ui| {
                    if ui.button("Rename…").clicked() {
                        out.push(AppCommand::StartRename(*tag));
                    }
                    if ui.button("Move up").clicked() {
                        out.push(AppCommand::MoveTag {
                            index: *tag,
                            up: true,
                        });
                    }
                    if ui.button("Move down").clicked() {
                        out.push(AppCommand::MoveTag {
                            index: *tag,
                            up: false,
                        });
                    }
                    if ui
                        .button(if view.hidden.contains(&t.name) {
                            "Show"
                        } else {
                            "Hide"
                        })
                        .clicked()
                    {
                        out.push(AppCommand::ToggleHidden(t.name.clone()));
                    }
                    if ui
                        .button(if view.solo.contains(&t.name) {
                            "Unsolo"
                        } else {
                            "Solo"
                        })
                        .clicked()
                    {
                        out.push(AppCommand::ToggleSolo(t.name.clone()));
                    }
                    ui.separator();
                    if ui.button("Delete tag…").clicked() {
                        out.push(AppCommand::AskDeleteTag(*tag));
                    }
                });
                child.with_layout(Layout::right_to_left(Align::Center), |ui| {
                    let solo = view.solo.contains(&t.name);
                    if ui
                        .add(egui::Button::selectable(solo, "S").small())
                        .on_hover_text(format!("Solo {}", t.name))
                        .clicked()
                    {
                        out.push(AppCommand::ToggleSolo(t.name.clone()));
                    }
                    let hidden = view.hidden.contains(&t.name);
                    if ui
                        .add(egui::Button::selectable(hidden, "H").small())
                        .on_hover_text(format!("Hide {}", t.name))
                        .clicked()
                    {
                        out.push(AppCommand::ToggleHidden(t.name.clone()));
                    }
                });
            }
        }
    }
    // A thin separator between headers and tracks.
    ui.painter().line_segment(
        [
            pos2(header_rect.right() - 1.0, header_rect.top() - RULER_HEIGHT),
            pos2(header_rect.right() - 1.0, header_rect.bottom()),
        ],
        egui::Stroke::new(1.0, theme::HEADER_SEPARATOR),
    );
}

/// A note as one line: its text, then its payload.
fn note_text(n: &crate::core::tags::Note) -> String {
    match (n.text.is_empty(), n.data.is_empty()) {
        (false, false) => format!("{} ({})", n.text, n.data_text()),
        (false, true) => n.text.clone(),
        (true, _) => n.data_text(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revealed_range_is_brought_on_screen_at_a_visible_size() {
        // The whole of a 2^28-frame clip in 1,000 points: a 10-frame range is far under a point.
        let mut v = TimelineView {
            px_per_frame: 1000.0 / f64::from(1u32 << 28),
            ..TimelineView::default()
        };
        let r = Range::new(200_000_000, 200_000_010);
        v.reveal_range(r, 1000.0);
        let axis = TimeAxis {
            left: 0.0,
            width: 1000.0,
            first_frame: v.first_frame,
            px_per_frame: v.px_per_frame,
        };
        let (x0, x1) = (axis.x(f64::from(r.start)), axis.x(f64::from(r.stop)));
        assert!(x0 >= 0.0 && x1 <= 1000.0, "{x0} {x1}");
        assert!(x1 - x0 > 300.0, "a third of the view: {}", x1 - x0);
        // On screen already at a visible size: nothing moves.
        let before = (v.first_frame, v.px_per_frame);
        v.reveal_range(Range::new(200_000_002, 200_000_004), 1000.0);
        assert_eq!((v.first_frame, v.px_per_frame), before);
        // Off screen: scrolled to, the zoom kept; wider than the view: its start near the left.
        v.reveal_range(Range::new(100, 105), 1000.0);
        assert_eq!(v.px_per_frame, before.1);
        assert!(v.first_frame < 100.0 && v.first_frame + 1000.0 / v.px_per_frame > 105.0);
        v.reveal_range(Range::new(5_000, 5_000_000), 1000.0);
        assert!(
            v.first_frame < 5_000.0 && v.first_frame > 4_000.0,
            "{}",
            v.first_frame
        );
    }
}
