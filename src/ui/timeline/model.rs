//! Timeline model: which rows are shown, and the range edits a gesture produces. No egui here, so
//! every editing rule is tested on its own.

use std::collections::BTreeSet;

use crate::core::doc::{Edit, canonicalize, canonicalize_markers, reanchored};
use crate::core::tags::{Anchor, ClipId, Note, Range, TagDocument};

/// A row of the timeline: a namespace group header or a tag lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Row {
    /// Header of the tags named `namespace:...`.
    Group {
        namespace: String,
        collapsed: bool,
        count: usize,
    },
    /// The lane of tag `tag` (index into the document's tags).
    Lane { tag: usize, indent: bool },
    /// Read-only lane `i` of [`crate::ui::timeline::TimelineInput::extra_lanes`] (query results),
    /// after the tag lanes.
    Extra(usize),
}

/// The namespace of a tag name: everything before the last `:`.
pub fn namespace(name: &str) -> Option<&str> {
    name.rsplit_once(':').map(|(ns, _)| ns)
}

/// The name shown in a lane: without the namespace when the lane sits under its group header.
pub fn short_name(name: &str) -> &str {
    name.rsplit_once(':').map_or(name, |(_, n)| n)
}

/// Builds the rows: tags in document order; tags sharing a namespace are grouped under one header
/// placed where the first of them is. Hidden tags keep their row (they are drawn dimmed).
pub fn rows(doc: &TagDocument, collapsed: &BTreeSet<String>) -> Vec<Row> {
    let mut out = Vec::with_capacity(doc.tags.len() + 4);
    let mut done = vec![false; doc.tags.len()];
    for (i, tag) in doc.tags.iter().enumerate() {
        if done[i] {
            continue;
        }
        match namespace(&tag.name) {
            None => {
                done[i] = true;
                out.push(Row::Lane {
                    tag: i,
                    indent: false,
                });
            }
            Some(ns) => {
                let members: Vec<usize> = (i..doc.tags.len())
                    .filter(|&j| namespace(&doc.tags[j].name) == Some(ns))
                    .collect();
                let is_collapsed = collapsed.contains(ns);
                out.push(Row::Group {
                    namespace: ns.to_owned(),
                    collapsed: is_collapsed,
                    count: members.len(),
                });
                for j in members {
                    done[j] = true;
                    if !is_collapsed {
                        out.push(Row::Lane {
                            tag: j,
                            indent: true,
                        });
                    }
                }
            }
        }
    }
    out
}

/// Which end of a range a resize drags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    Start,
    Stop,
}

/// A selected range or marker: the tag and the range (frame) as it is in the document.
pub use crate::ui::command::{MarkerSel, Selected};

/// An editing gesture in progress on the current clip. The document is not touched until the
/// gesture ends; meanwhile [`Gesture::preview`] gives the lanes as they would become.
#[derive(Debug, Clone, PartialEq)]
pub enum Gesture {
    /// Dragging on an empty part of a lane: a new range from `anchor` to `current` (inclusive).
    Create {
        tag: usize,
        anchor: u32,
        current: u32,
    },
    /// Dragging an edge of `original`.
    Resize {
        tag: usize,
        original: Range,
        edge: Edge,
        frame: u32,
    },
    /// Dragging the bodies of the selected ranges by `delta` frames, with the selected markers
    /// (`markers`) when ranges and markers are selected together.
    Move {
        items: Vec<Selected>,
        markers: Vec<MarkerSel>,
        delta: i64,
    },
    /// Dragging the selected markers by `delta` frames.
    MoveMarkers { items: Vec<MarkerSel>, delta: i64 },
}

impl Gesture {
    /// The lanes this gesture changes, with their would-be ranges, for a clip of `frames` frames.
    pub fn preview(
        &self,
        doc: &TagDocument,
        clip: ClipId,
        frames: u32,
    ) -> Vec<(usize, Vec<Range>)> {
        let current = |tag: usize| -> Vec<Range> {
            doc.tags
                .get(tag)
                .and_then(|t| t.ranges.get(&clip))
                .map(<[_]>::to_vec)
                .unwrap_or_default()
        };
        match self {
            Gesture::Create {
                tag,
                anchor,
                current: cur,
            } => {
                let mut list = current(*tag);
                let (a, b) = (*anchor.min(cur), *anchor.max(cur));
                list.push(Range::new(a, b.saturating_add(1)));
                canonicalize(&mut list, frames);
                vec![(*tag, list)]
            }
            Gesture::Resize {
                tag,
                original,
                edge,
                frame,
            } => {
                let mut list = current(*tag);
                list.retain(|r| r != original);
                let r = match edge {
                    // The start can move up to the last frame of the range; the stop down to one
                    // past its first frame, so a resize never empties a range.
                    Edge::Start => Range::new((*frame).min(original.stop - 1), original.stop),
                    Edge::Stop => Range::new(original.start, (*frame).max(original.start + 1)),
                };
                list.push(r);
                canonicalize(&mut list, frames);
                vec![(*tag, list)]
            }
            Gesture::Move {
                items,
                markers,
                delta,
            } => {
                let delta = clamp_items(items, markers, *delta, frames);
                moved(
                    items,
                    current,
                    |r| shift(r, delta),
                    |l| canonicalize(l, frames),
                )
            }
            Gesture::MoveMarkers { .. } => Vec::new(),
        }
    }

    /// The lanes whose markers this gesture changes, with their would-be markers.
    pub fn preview_markers(
        &self,
        doc: &TagDocument,
        clip: ClipId,
        frames: u32,
    ) -> Vec<(usize, Vec<u32>)> {
        let (items, delta) = match self {
            Gesture::MoveMarkers { items, delta } => {
                (items, clamp_marker_move(items, *delta, frames))
            }
            Gesture::Move {
                items: ranges,
                markers,
                delta,
            } if !markers.is_empty() => (markers, clamp_items(ranges, markers, *delta, frames)),
            _ => return Vec::new(),
        };
        moved(
            items,
            |tag| {
                doc.tags
                    .get(tag)
                    .map_or(Vec::new(), |t| t.markers_on(clip).to_vec())
            },
            |f| (i64::from(f) + delta) as u32,
            |l| canonicalize_markers(l, frames),
        )
    }

    /// The edit that ends the gesture (`None` when nothing changes), and a label for the history.
    /// Notes travel with the ranges and markers they are on.
    pub fn finish(
        &self,
        doc: &TagDocument,
        clip: ClipId,
        frames: u32,
    ) -> Option<(Edit, &'static str)> {
        let label = match self {
            Gesture::Create { .. } => "create range",
            Gesture::Resize { .. } => "resize range",
            Gesture::Move { .. } => "move ranges",
            Gesture::MoveMarkers { .. } => "move markers",
        };
        let (moved, delta): (Vec<(usize, Anchor)>, i64) = match self {
            Gesture::Move {
                items,
                markers,
                delta,
            } => (
                items
                    .iter()
                    .map(|(t, r)| (*t, Anchor::Range(*r)))
                    .chain(markers.iter().map(|(t, f)| (*t, Anchor::Marker(*f))))
                    .collect(),
                clamp_items(items, markers, *delta, frames),
            ),
            Gesture::MoveMarkers { items, delta } => (
                items
                    .iter()
                    .map(|(t, f)| (*t, Anchor::Marker(*f)))
                    .collect(),
                clamp_marker_move(items, *delta, frames),
            ),
            _ => (Vec::new(), 0),
        };
        let lanes = self.preview(doc, clip, frames);
        let marker_lanes = self.preview_markers(doc, clip, frames);
        let edit = items_edit(doc, clip, lanes, marker_lanes, &moved, delta)?;
        Some((edit, label))
    }
}

/// One undoable edit setting the listed lanes' ranges and markers on `clip`, with the notes of the
/// `moved` ranges and markers shifted by `delta` and every note re-anchored to the new lists;
/// `None` if nothing changes.
pub fn items_edit(
    doc: &TagDocument,
    clip: ClipId,
    lanes: Vec<(usize, Vec<Range>)>,
    marker_lanes: Vec<(usize, Vec<u32>)>,
    moved: &[(usize, Anchor)],
    delta: i64,
) -> Option<Edit> {
    let mut tags: Vec<usize> = lanes
        .iter()
        .map(|(t, _)| *t)
        .chain(marker_lanes.iter().map(|(t, _)| *t))
        .collect();
    tags.sort_unstable();
    tags.dedup();
    let mut edits = Vec::new();
    for tag in tags {
        let Some(t) = doc.tags.get(tag) else { continue };
        let ranges = lanes
            .iter()
            .find(|(x, _)| *x == tag)
            .map_or_else(|| t.ranges_on(clip).to_vec(), |(_, l)| l.clone());
        let markers = marker_lanes
            .iter()
            .find(|(x, _)| *x == tag)
            .map_or_else(|| t.markers_on(clip).to_vec(), |(_, l)| l.clone());
        if ranges != t.ranges_on(clip) {
            edits.push(Edit::SetRanges {
                tag,
                clip,
                ranges: ranges.clone(),
            });
        }
        if markers != t.markers_on(clip) {
            edits.push(Edit::SetMarkers {
                tag,
                clip,
                frames: markers.clone(),
            });
        }
        let old = t.notes_on(clip);
        if !old.is_empty() {
            let shifted: Vec<(Anchor, Note)> = old
                .iter()
                .map(|(a, n)| {
                    let a = if moved.contains(&(tag, *a)) {
                        shift_anchor(*a, delta)
                    } else {
                        *a
                    };
                    (a, n.clone())
                })
                .collect();
            // Moved items first: where a moved range lands on a still one, its note is the first.
            let notes = reanchored(&shifted, &ranges, &markers);
            if notes != old {
                edits.push(Edit::SetNotes { tag, clip, notes });
            }
        }
    }
    match edits.len() {
        0 => None,
        1 => edits.pop(),
        _ => Some(Edit::Batch(edits)),
    }
}

fn shift_anchor(a: Anchor, delta: i64) -> Anchor {
    match a {
        Anchor::Range(r) => Anchor::Range(shift(r, delta)),
        Anchor::Marker(f) => Anchor::Marker((i64::from(f) + delta).max(0) as u32),
    }
}

/// The largest shift not above `delta` in size that keeps every moved marker inside the clip.
pub fn clamp_marker_move(items: &[MarkerSel], delta: i64, frames: u32) -> i64 {
    let min = items.iter().map(|(_, f)| i64::from(*f)).min().unwrap_or(0);
    let max = items.iter().map(|(_, f)| i64::from(*f)).max().unwrap_or(0);
    delta.clamp(-min, (i64::from(frames) - 1 - max).max(-min))
}

/// The edit adding a marker at `frame` on `tag` (`None` if one is already there or the frame is
/// outside the clip).
pub fn add_marker(doc: &TagDocument, clip: ClipId, tag: usize, frame: u32) -> Option<Edit> {
    let frames = doc.clips.get(clip as usize)?.frames;
    let t = doc.tags.get(tag)?;
    if frame >= frames || t.markers_on(clip).contains(&frame) {
        return None;
    }
    let mut list = t.markers_on(clip).to_vec();
    list.push(frame);
    list.sort_unstable();
    Some(Edit::SetMarkers {
        tag,
        clip,
        frames: list,
    })
}

/// Frame boundaries a drag on `clip` can snap to: the playhead, both edges of every range and
/// every marker of every lane, except the ranges and markers being dragged (`exclude`,
/// `exclude_markers`). Sorted, without duplicates.
pub fn snap_targets(
    doc: &TagDocument,
    clip: ClipId,
    playhead: u32,
    exclude: &[Selected],
    exclude_markers: &[MarkerSel],
) -> Vec<u32> {
    // Sorted once, searched for each range (a selection of every range of a dense clip was
    // compared with every range on each drag frame: 5,000 x 5,000).
    let mut exclude = exclude.to_vec();
    exclude.sort_unstable();
    let mut exclude_markers = exclude_markers.to_vec();
    exclude_markers.sort_unstable();
    let mut out = vec![playhead];
    for (t, tag) in doc.tags.iter().enumerate() {
        for r in tag.ranges_on(clip) {
            if exclude.binary_search(&(t, *r)).is_err() {
                out.push(r.start);
                out.push(r.stop);
            }
        }
        // A marker is the frame it is on: a range can start at it or stop after it.
        for &f in tag.markers_on(clip) {
            if exclude_markers.binary_search(&(t, f)).is_err() {
                out.push(f);
                out.push(f + 1);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The target nearest `frame`, if one lies within `tolerance` frames.
pub fn snap(frame: u32, targets: &[u32], tolerance: f64) -> Option<u32> {
    let i = targets.partition_point(|&t| t < frame);
    [i.checked_sub(1), Some(i)]
        .into_iter()
        .flatten()
        .filter_map(|i| targets.get(i).copied())
        .map(|t| (t, (t as f64 - frame as f64).abs()))
        .filter(|&(_, d)| d <= tolerance)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(t, _)| t)
}

impl Gesture {
    /// Snaps the gesture's moving boundary to the nearest target within `tolerance` frames (see
    /// [`snap_targets`]); returns the boundary it snapped to, for the snap line.
    pub fn snap_to(&mut self, targets: &[u32], tolerance: f64) -> Option<u32> {
        match self {
            Gesture::Resize { frame, .. } => {
                let t = snap(*frame, targets, tolerance)?;
                *frame = t;
                Some(t)
            }
            Gesture::Create {
                anchor, current, ..
            } => {
                if *current >= *anchor {
                    // The moving boundary is the stop, one past the current cell.
                    let t = snap(*current + 1, targets, tolerance)?;
                    (t > *anchor).then(|| {
                        *current = t - 1;
                        t
                    })
                } else {
                    let t = snap(*current, targets, tolerance)?;
                    (t <= *anchor).then(|| {
                        *current = t;
                        t
                    })
                }
            }
            Gesture::Move {
                items,
                markers,
                delta,
            } => {
                let mut best: Option<(i64, u32)> = None;
                // A marker is its frame's cell: either of the cell's boundaries snaps (to the
                // last frame of a range as well as the first after it).
                let edges = items
                    .iter()
                    .flat_map(|(_, r)| [r.start, r.stop])
                    .chain(markers.iter().flat_map(|(_, f)| [*f, f.saturating_add(1)]));
                for edge in edges {
                    let moved = edge as i64 + *delta;
                    if moved < 0 {
                        continue;
                    }
                    if let Some(t) = snap(moved as u32, targets, tolerance) {
                        let d = t as i64 - moved;
                        if best.is_none_or(|(b, _)| d.abs() < b.abs()) {
                            best = Some((d, t));
                        }
                    }
                }
                let (d, t) = best?;
                *delta += d;
                Some(t)
            }
            Gesture::MoveMarkers { items, delta } => {
                let mut best: Option<(i64, u32)> = None;
                // Either boundary of a marker's cell snaps, as in a move of ranges and markers.
                for f in items.iter().flat_map(|(_, f)| [*f, f.saturating_add(1)]) {
                    let moved = i64::from(f) + *delta;
                    if moved < 0 {
                        continue;
                    }
                    if let Some(t) = snap(moved as u32, targets, tolerance) {
                        let d = i64::from(t) - moved;
                        if best.is_none_or(|(b, _)| d.abs() < b.abs()) {
                            best = Some((d, t));
                        }
                    }
                }
                let (d, t) = best?;
                *delta += d;
                Some(t)
            }
        }
    }
}

/// The largest shift not above `delta` in size that keeps every moved range inside the clip.
/// [`clamp_move`] and [`clamp_marker_move`] together: the delta that keeps the ranges `items`
/// and the markers `markers` all inside the clip (either list may be empty).
pub fn clamp_items(items: &[Selected], markers: &[MarkerSel], delta: i64, frames: u32) -> i64 {
    let mut d = delta;
    if !items.is_empty() {
        d = clamp_move(items, d, frames);
    }
    if !markers.is_empty() {
        d = clamp_marker_move(markers, d, frames);
    }
    d
}

pub fn clamp_move(items: &[Selected], delta: i64, frames: u32) -> i64 {
    let min_start = items.iter().map(|(_, r)| r.start as i64).min().unwrap_or(0);
    let max_stop = items.iter().map(|(_, r)| r.stop as i64).max().unwrap_or(0);
    delta.clamp(-min_start, frames as i64 - max_stop)
}

fn shift(r: Range, delta: i64) -> Range {
    Range::new(
        (r.start as i64 + delta) as u32,
        (r.stop as i64 + delta) as u32,
    )
}

/// One undoable edit replacing the listed lanes' ranges on `clip`, or `None` if nothing changes.
pub fn lanes_edit(
    doc: &TagDocument,
    clip: ClipId,
    lanes: Vec<(usize, Vec<Range>)>,
) -> Option<Edit> {
    let edits: Vec<Edit> = lanes
        .into_iter()
        .filter(|(tag, list)| {
            let old = doc.tags.get(*tag).and_then(|t| t.ranges.get(&clip));
            old.map_or(!list.is_empty(), |o| o != list)
        })
        .map(|(tag, ranges)| Edit::SetRanges { tag, clip, ranges })
        .collect();
    match edits.len() {
        0 => None,
        1 => edits.into_iter().next(),
        _ => Some(Edit::Batch(edits)),
    }
}

/// Removes the selected ranges and markers (and their notes).
pub fn delete_selected(
    doc: &TagDocument,
    clip: ClipId,
    selected: &[Selected],
    markers: &[MarkerSel],
) -> Option<Edit> {
    let lanes = without(selected, |tag| Some(doc.tags.get(tag)?.ranges_on(clip)));
    let marker_lanes = without(markers, |tag| Some(doc.tags.get(tag)?.markers_on(clip)));
    items_edit(doc, clip, lanes, marker_lanes, &[], 0)
}

/// For each tag named in `items`, its list (from `list_of`) with those items moved by `shift`, made
/// canonical by `canonical`.
fn moved<T: Copy + Ord>(
    items: &[(usize, T)],
    list_of: impl Fn(usize) -> Vec<T>,
    shift: impl Fn(T) -> T,
    canonical: impl Fn(&mut Vec<T>),
) -> Vec<(usize, Vec<T>)> {
    let mut tags: Vec<usize> = items.iter().map(|(t, _)| *t).collect();
    tags.sort_unstable();
    tags.dedup();
    let mut sorted = items.to_vec();
    sorted.sort_unstable();
    tags.into_iter()
        .map(|tag| {
            let mut list: Vec<T> = list_of(tag)
                .into_iter()
                .filter(|x| sorted.binary_search(&(tag, *x)).is_err())
                .collect();
            list.extend(
                items
                    .iter()
                    .filter(|(t, _)| *t == tag)
                    .map(|(_, x)| shift(*x)),
            );
            canonical(&mut list);
            (tag, list)
        })
        .collect()
}

/// For each tag named in `removed`, its list (from `list_of`) without the removed items.
fn without<'a, T: Copy + Ord + 'a>(
    removed: &[(usize, T)],
    list_of: impl Fn(usize) -> Option<&'a [T]>,
) -> Vec<(usize, Vec<T>)> {
    let mut tags: Vec<usize> = removed.iter().map(|(t, _)| *t).collect();
    tags.sort_unstable();
    tags.dedup();
    let mut sorted = removed.to_vec();
    sorted.sort_unstable();
    tags.into_iter()
        .filter_map(|tag| {
            let kept = list_of(tag)?
                .iter()
                .filter(|x| sorted.binary_search(&(tag, **x)).is_err())
                .copied()
                .collect();
            Some((tag, kept))
        })
        .collect()
}

/// Splits ranges at the playhead frame. Touching ranges of one tag are the same frames and merge,
/// so a split cuts the frame under the playhead out: `[s, e)` becomes `[s, p)` and `[p + 1, e)`.
/// Applies to the selected ranges that contain `p`, or, with no selection, to the range of the
/// active lane under the playhead. A range of one frame is left as it is: cutting its frame out
/// would delete it.
pub fn split_at(
    doc: &TagDocument,
    clip: ClipId,
    p: u32,
    selected: &[Selected],
    active: Option<usize>,
) -> Option<Edit> {
    let targets: Vec<Selected> = if selected.is_empty() {
        active
            .and_then(|tag| {
                let r = doc
                    .tags
                    .get(tag)?
                    .ranges
                    .get(&clip)?
                    .iter()
                    .find(|r| r.contains(p))?;
                Some(vec![(tag, *r)])
            })
            .unwrap_or_default()
    } else {
        selected
            .iter()
            .filter(|(_, r)| r.contains(p))
            .copied()
            .collect()
    };
    let mut lanes: Vec<(usize, Vec<Range>)> = Vec::new();
    for (tag, r) in targets.into_iter().filter(|(_, r)| r.len() > 1) {
        let list = match lanes.iter_mut().find(|(t, _)| *t == tag) {
            Some((_, l)) => l,
            None => {
                let cur = doc.tags[tag]
                    .ranges
                    .get(&clip)
                    .map(<[_]>::to_vec)
                    .unwrap_or_default();
                lanes.push((tag, cur));
                &mut lanes.last_mut().expect("just pushed").1
            }
        };
        list.retain(|x| *x != r);
        list.push(Range::new(r.start, p));
        list.push(Range::new(p + 1, r.stop));
        list.retain(|x| !x.is_empty());
        list.sort_unstable();
    }
    lanes_edit(doc, clip, lanes)
}

/// One copied range or marker: its tag's name, where it is relative to the earliest copied frame,
/// and its note.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipItem {
    pub tag: String,
    pub anchor: Anchor,
    pub note: Option<Note>,
}

/// Copied ranges and markers with their notes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Clipboard {
    /// Anchors relative to the earliest copied frame, which is `base` on the clip copied from.
    pub items: Vec<ClipItem>,
    pub base: u32,
}

impl Clipboard {
    /// The copied items as text, one per line: clip, tag, start and stop frames on the clip
    /// copied from (stop exclusive; a marker's stop is empty), note, tab-separated.
    pub fn as_text(&self, clip: &str) -> String {
        let mut t = String::from("clip\ttag\tstart\tstop\tnote\n");
        for i in &self.items {
            let (start, stop) = match shift_anchor(i.anchor, i64::from(self.base)) {
                Anchor::Range(r) => (r.start.to_string(), r.stop.to_string()),
                Anchor::Marker(f) => (f.to_string(), String::new()),
            };
            let note = i.note.as_ref().map_or("", |n| n.text.as_str());
            let note: String = note
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            t.push_str(&format!("{clip}\t{}\t{start}\t{stop}\t{note}\n", i.tag));
        }
        t
    }

    pub fn copy(
        doc: &TagDocument,
        clip: ClipId,
        selected: &[Selected],
        markers: &[MarkerSel],
    ) -> Self {
        let all: Vec<(usize, Anchor)> = selected
            .iter()
            .map(|(t, r)| (*t, Anchor::Range(*r)))
            .chain(markers.iter().map(|(t, f)| (*t, Anchor::Marker(*f))))
            .collect();
        let base = all.iter().map(|(_, a)| a.range().start).min().unwrap_or(0);
        Self {
            base,
            items: all
                .iter()
                .filter_map(|(t, a)| {
                    let tag = doc.tags.get(*t)?;
                    Some(ClipItem {
                        tag: tag.name.clone(),
                        anchor: shift_anchor(*a, -i64::from(base)),
                        note: tag.note(clip, *a).cloned(),
                    })
                })
                .collect(),
        }
    }

    /// The edit pasting the ranges and markers at frame `at` on `clip`, with their notes: into the
    /// tags they were copied from (matched by name), or all into `into` when given. Ranges that
    /// run past the clip's end are cut there; ranges and markers that would start past it are left
    /// out. The result says what was left out, cut, and which copied tags this document does not
    /// have.
    pub fn paste(&self, doc: &TagDocument, clip: ClipId, at: u32, into: Option<usize>) -> Pasted {
        let frames = doc.clips.get(clip as usize).map_or(0, |c| c.frames);
        let mut lanes: Vec<(usize, Vec<Range>)> = Vec::new();
        let mut marker_lanes: Vec<(usize, Vec<u32>)> = Vec::new();
        let mut notes: Vec<(usize, Anchor, Note)> = Vec::new();
        let mut missing = Vec::new();
        let (mut outside, mut cut) = (0, 0);
        for item in &self.items {
            let tag = match into {
                Some(t) => t,
                None => match doc.tags.iter().position(|t| t.name == item.tag) {
                    Some(t) => t,
                    None => {
                        if !missing.contains(&item.tag) {
                            missing.push(item.tag.clone());
                        }
                        continue;
                    }
                },
            };
            let placed = shift_anchor(item.anchor, i64::from(at));
            match placed {
                Anchor::Range(r) if r.start >= frames => {
                    outside += 1;
                    continue;
                }
                Anchor::Marker(f) if f >= frames => {
                    outside += 1;
                    continue;
                }
                Anchor::Range(r) if r.stop > frames => cut += 1,
                _ => {}
            }
            match placed {
                Anchor::Range(r) => match lanes.iter_mut().find(|(t, _)| *t == tag) {
                    Some((_, l)) => l.push(r),
                    None => {
                        let mut l = doc.tags[tag].ranges_on(clip).to_vec();
                        l.push(r);
                        lanes.push((tag, l));
                    }
                },
                Anchor::Marker(f) => match marker_lanes.iter_mut().find(|(t, _)| *t == tag) {
                    Some((_, l)) => l.push(f),
                    None => {
                        let mut l = doc.tags[tag].markers_on(clip).to_vec();
                        l.push(f);
                        marker_lanes.push((tag, l));
                    }
                },
            }
            if let Some(n) = &item.note {
                notes.push((tag, placed, n.clone()));
            }
        }
        for (_, l) in &mut lanes {
            canonicalize(l, frames);
        }
        for (_, l) in &mut marker_lanes {
            canonicalize_markers(l, frames);
        }
        let done = |edit| Pasted {
            edit,
            missing,
            outside,
            cut,
        };
        let Some(edit) = items_edit(doc, clip, lanes.clone(), marker_lanes.clone(), &[], 0) else {
            return done(None);
        };
        if notes.is_empty() {
            return done(Some(edit));
        }
        // The pasted notes join the notes already there, on the ranges and markers they land on.
        let mut edits = match edit {
            Edit::Batch(b) => b,
            e => vec![e],
        };
        let mut tags: Vec<usize> = notes.iter().map(|(t, _, _)| *t).collect();
        tags.sort_unstable();
        tags.dedup();
        for tag in tags {
            let t = &doc.tags[tag];
            let ranges = lanes
                .iter()
                .find(|(x, _)| *x == tag)
                .map_or_else(|| t.ranges_on(clip).to_vec(), |(_, l)| l.clone());
            let markers = marker_lanes
                .iter()
                .find(|(x, _)| *x == tag)
                .map_or_else(|| t.markers_on(clip).to_vec(), |(_, l)| l.clone());
            let mut all: Vec<(Anchor, Note)> = t.notes_on(clip).to_vec();
            all.extend(
                notes
                    .iter()
                    .filter(|(x, _, _)| *x == tag)
                    .map(|(_, a, n)| (*a, n.clone())),
            );
            let list = reanchored(&all, &ranges, &markers);
            edits.retain(|e| !matches!(e, Edit::SetNotes { tag: x, .. } if *x == tag));
            edits.push(Edit::SetNotes {
                tag,
                clip,
                notes: list,
            });
        }
        done(Some(Edit::Batch(edits)))
    }
}

/// What a paste does: its edit (`None`: nothing changes), the copied tags this document does not
/// have, and the ranges and markers left out (they would start past the clip's end) or cut at it.
#[derive(Debug, Clone, PartialEq)]
pub struct Pasted {
    pub edit: Option<Edit>,
    pub missing: Vec<String>,
    pub outside: usize,
    pub cut: usize,
}

/// The range edges and markers of the visible lanes, sorted, for jumping the playhead to the next
/// or previous one.
pub fn edges(doc: &TagDocument, clip: ClipId, lanes: impl Iterator<Item = usize>) -> Vec<u32> {
    let mut e: Vec<u32> = Vec::new();
    for t in lanes.filter_map(|t| doc.tags.get(t)) {
        e.extend(t.ranges_on(clip).iter().flat_map(|r| [r.start, r.stop]));
        e.extend_from_slice(t.markers_on(clip));
    }
    e.sort_unstable();
    e.dedup();
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::tags::{ClipInfo, Tag};

    fn r(a: u32, b: u32) -> Range {
        Range::new(a, b)
    }

    fn doc() -> TagDocument {
        let tag = |name: &str, ranges: Vec<Range>| Tag {
            name: name.into(),
            color: None,
            ranges: if ranges.is_empty() {
                Default::default()
            } else {
                [(0, ranges)].into()
            },
            markers: Default::default(),
            notes: Default::default(),
            version: 0,
        };
        TagDocument {
            clips: vec![ClipInfo {
                name: "c".into(),
                frames: 100,
                fps: 30.0,
                source: None,
                unit_cm: None,
            }],
            tags: vec![
                tag("Walk", vec![r(10, 20), r(40, 50)]),
                tag("contact:Left", vec![r(0, 5)]),
                tag("Run", vec![]),
                tag("contact:Right", vec![]),
            ],
            queries: vec![],
            ..Default::default()
        }
    }

    #[test]
    fn rows_group_namespaces_where_the_first_member_is() {
        let d = doc();
        let rows = rows(&d, &BTreeSet::new());
        assert_eq!(
            rows,
            vec![
                Row::Lane {
                    tag: 0,
                    indent: false
                },
                Row::Group {
                    namespace: "contact".into(),
                    collapsed: false,
                    count: 2
                },
                Row::Lane {
                    tag: 1,
                    indent: true
                },
                Row::Lane {
                    tag: 3,
                    indent: true
                },
                Row::Lane {
                    tag: 2,
                    indent: false
                },
            ]
        );
        let collapsed = BTreeSet::from(["contact".to_owned()]);
        assert_eq!(super::rows(&d, &collapsed).len(), 3);
        assert_eq!(short_name("contact:Left"), "Left");
    }

    #[test]
    fn create_drag_either_direction_and_merge() {
        let d = doc();
        let g = Gesture::Create {
            tag: 0,
            anchor: 25,
            current: 21,
        };
        assert_eq!(
            g.preview(&d, 0, 100),
            vec![(0, vec![r(10, 20), r(21, 26), r(40, 50)])]
        );
        let g = Gesture::Create {
            tag: 0,
            anchor: 20,
            current: 39,
        };
        assert_eq!(
            g.preview(&d, 0, 100),
            vec![(0, vec![r(10, 50)])],
            "touching ranges merge"
        );
        let g = Gesture::Create {
            tag: 2,
            anchor: 90,
            current: 250,
        };
        let (edit, _) = g.finish(&d, 0, 100).unwrap();
        assert_eq!(
            edit,
            Edit::SetRanges {
                tag: 2,
                clip: 0,
                ranges: vec![r(90, 100)]
            },
            "clamped to the clip"
        );
    }

    #[test]
    fn resize_never_empties_and_clamps() {
        let d = doc();
        let g = Gesture::Resize {
            tag: 0,
            original: r(10, 20),
            edge: Edge::Start,
            frame: 30,
        };
        assert_eq!(g.preview(&d, 0, 100)[0].1[0], r(19, 20));
        let g = Gesture::Resize {
            tag: 0,
            original: r(40, 50),
            edge: Edge::Stop,
            frame: 500,
        };
        assert_eq!(g.preview(&d, 0, 100)[0].1[1], r(40, 100));
        let g = Gesture::Resize {
            tag: 0,
            original: r(40, 50),
            edge: Edge::Start,
            frame: 15,
        };
        assert_eq!(
            g.preview(&d, 0, 100)[0].1,
            vec![r(10, 50)],
            "overlap merges"
        );
        let g = Gesture::Resize {
            tag: 0,
            original: r(40, 50),
            edge: Edge::Stop,
            frame: 50,
        };
        assert!(g.finish(&d, 0, 100).is_none(), "no change, no edit");
    }

    #[test]
    fn ranges_and_markers_move_together_clamped_by_both() {
        let mut d = doc();
        d.tags[1].markers.insert(0, vec![95]);
        let g = Gesture::Move {
            items: vec![(0, r(40, 50))],
            markers: vec![(1, 95)],
            delta: 10,
        };
        // The marker at 95 may move 4 frames in a 100-frame clip: both move 4.
        let (edit, label) = g.finish(&d, 0, 100).unwrap();
        assert_eq!(label, "move ranges");
        let mut after = d.clone();
        edit.apply(&mut after).unwrap();
        assert!(
            after.tags[0].ranges_on(0).contains(&r(44, 54)),
            "{:?}",
            after.tags[0].ranges_on(0)
        );
        assert_eq!(after.tags[1].markers_on(0), [99]);
    }

    #[test]
    fn move_clamps_to_clip_and_spans_lanes() {
        let d = doc();
        let items = vec![(0, r(40, 50)), (1, r(0, 5))];
        let g = Gesture::Move {
            items: items.clone(),
            markers: Vec::new(),
            delta: -30,
        };
        // The left-most range starts at 0, so nothing can move left.
        assert!(g.finish(&d, 0, 100).is_none());
        let g = Gesture::Move {
            items,
            markers: Vec::new(),
            delta: 70,
        };
        let p = g.preview(&d, 0, 100);
        assert_eq!(
            p,
            vec![(0, vec![r(10, 20), r(90, 100)]), (1, vec![r(50, 55)])]
        );
        assert!(matches!(g.finish(&d, 0, 100), Some((Edit::Batch(b), _)) if b.len() == 2));
    }

    #[test]
    fn delete_split_copy_paste() {
        let d = doc();
        let e = delete_selected(&d, 0, &[(0, r(10, 20))], &[]).unwrap();
        assert_eq!(
            e,
            Edit::SetRanges {
                tag: 0,
                clip: 0,
                ranges: vec![r(40, 50)]
            }
        );
        let e = split_at(&d, 0, 45, &[], Some(0)).unwrap();
        assert_eq!(
            e,
            Edit::SetRanges {
                tag: 0,
                clip: 0,
                ranges: vec![r(10, 20), r(40, 45), r(46, 50)]
            }
        );
        assert!(split_at(&d, 0, 30, &[], Some(0)).is_none());
        let e = split_at(&d, 0, 40, &[(0, r(40, 50))], None).unwrap();
        assert_eq!(
            e,
            Edit::SetRanges {
                tag: 0,
                clip: 0,
                ranges: vec![r(10, 20), r(41, 50)]
            }
        );
        // A one-frame range is not split away (a contact frame, say).
        let mut one = d.clone();
        Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![r(10, 20), r(30, 31)],
        }
        .apply(&mut one)
        .unwrap();
        assert!(split_at(&one, 0, 30, &[], Some(0)).is_none());
        assert!(split_at(&one, 0, 30, &[(0, r(30, 31))], None).is_none());
        let cb = Clipboard::copy(&d, 0, &[(0, r(40, 50)), (1, r(0, 5))], &[]);
        let items: Vec<(String, Anchor)> =
            cb.items.iter().map(|i| (i.tag.clone(), i.anchor)).collect();
        assert_eq!(
            items,
            vec![
                ("Walk".into(), Anchor::Range(r(40, 50))),
                ("contact:Left".into(), Anchor::Range(r(0, 5)))
            ]
        );
        let p = cb.paste(&d, 0, 60, None);
        assert!(p.missing.is_empty());
        let mut d2 = d.clone();
        p.edit.unwrap().apply(&mut d2).unwrap();
        // Walk's copy would land at 100..110, past the end: left out, and said so.
        assert_eq!((p.outside, p.cut), (1, 0));
        assert_eq!(d2.tags[0].ranges[&0], vec![r(10, 20), r(40, 50)]);
        assert_eq!(d2.tags[1].ranges[&0], vec![r(0, 5), r(60, 65)]);
        // At 55 it runs past the end (95..105 on a 100-frame clip): cut there.
        let p = cb.paste(&d, 0, 55, None);
        assert_eq!((p.outside, p.cut), (0, 1));
        let p = cb.paste(&d, 0, 0, Some(2));
        let mut d3 = d.clone();
        p.edit.unwrap().apply(&mut d3).unwrap();
        assert_eq!(d3.tags[2].ranges[&0], vec![r(0, 5), r(40, 50)]);
        assert_eq!(
            edges(&d, 0, [0usize, 1].into_iter()),
            vec![0, 5, 10, 20, 40, 50]
        );
    }

    #[test]
    fn snapping_to_edges_and_the_playhead() {
        let d = doc();
        // Edges of every lane on clip 0, plus the playhead.
        let targets = snap_targets(&d, 0, 50, &[], &[]);
        assert!(targets.contains(&50));
        for t in &d.tags {
            for r in t.ranges.get(&0).into_iter().flatten() {
                assert!(targets.contains(&r.start) && targets.contains(&r.stop));
            }
        }
        assert_eq!(snap(48, &[10, 50, 90], 3.0), Some(50));
        assert_eq!(snap(46, &[10, 50, 90], 3.0), None);
        assert_eq!(
            snap(70, &[10, 50, 90], 30.0),
            Some(50),
            "nearest wins (ties: earlier)"
        );
        // Resize snaps its boundary.
        let mut g = Gesture::Resize {
            tag: 0,
            original: Range::new(0, 10),
            edge: Edge::Stop,
            frame: 48,
        };
        assert_eq!(g.snap_to(&[50], 3.0), Some(50));
        assert!(matches!(g, Gesture::Resize { frame: 50, .. }));
        // Create snaps the stop (one past the current cell) or the start.
        let mut g = Gesture::Create {
            tag: 0,
            anchor: 20,
            current: 47,
        };
        assert_eq!(g.snap_to(&[50], 3.0), Some(50));
        assert!(matches!(g, Gesture::Create { current: 49, .. }));
        let mut g = Gesture::Create {
            tag: 0,
            anchor: 20,
            current: 11,
        };
        assert_eq!(g.snap_to(&[10], 3.0), Some(10));
        assert!(matches!(g, Gesture::Create { current: 10, .. }));
        // Move snaps whichever edge is nearest a target.
        let mut g = Gesture::Move {
            items: vec![(0, Range::new(100, 120))],
            markers: Vec::new(),
            delta: 8,
        };
        assert_eq!(g.snap_to(&[130], 3.0), Some(130));
        assert!(matches!(g, Gesture::Move { delta: 10, .. }));
        // A marker snaps by either boundary of its cell: dragged to frame 48, near a range's
        // stop at 50, it lands on the range's last frame (49: its cell ends at 50); dragged to
        // 51, on the first frame after it (50).
        let mut g = Gesture::MoveMarkers {
            items: vec![(0, 40)],
            delta: 8,
        };
        assert_eq!(g.snap_to(&[50], 3.0), Some(50));
        assert!(matches!(g, Gesture::MoveMarkers { delta: 9, .. }));
        let mut g = Gesture::MoveMarkers {
            items: vec![(0, 40)],
            delta: 11,
        };
        assert_eq!(g.snap_to(&[50], 3.0), Some(50));
        assert!(matches!(g, Gesture::MoveMarkers { delta: 10, .. }));
        // The same for markers moved with ranges.
        let mut g = Gesture::Move {
            items: vec![(0, Range::new(0, 5))],
            markers: vec![(1, 40)],
            delta: 8,
        };
        assert_eq!(g.snap_to(&[50], 3.0), Some(50));
        assert!(matches!(g, Gesture::Move { delta: 9, .. }));
    }
}
