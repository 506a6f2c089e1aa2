//! Edits of a [`TagDocument`]. Applying an edit returns its inverse, so undo is "apply the inverse".

use std::collections::{BTreeMap, HashSet};

use crate::core::settings::AutotagSettings;
use crate::core::tags::document::next_version;
use crate::core::tags::parse::rename_tag_in_expr;
use crate::core::tags::{Anchor, ClipId, ClipInfo, Note, Range, SavedQuery, Tag, TagDocument};

/// One change to a tag document. Every variant is checked before anything changes: an invalid
/// edit returns an error and leaves the document as it was.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Replace the ranges of `tag` on `clip`. The list is made canonical (sorted; overlapping or
    /// adjacent ranges merged; clamped to `[0, frames)`; empty ranges dropped).
    SetRanges {
        tag: usize,
        clip: ClipId,
        ranges: Vec<Range>,
    },
    /// Replace the markers of `tag` on `clip`: sorted, duplicates dropped, frames past the clip's
    /// end clamped to its last frame. Notes on markers that are gone are dropped (undo restores
    /// them).
    SetMarkers {
        tag: usize,
        clip: ClipId,
        frames: Vec<u32>,
    },
    /// Replace the notes of `tag` on `clip`. Each anchor must be a range or marker the tag has on
    /// that clip; empty notes are dropped.
    SetNotes {
        tag: usize,
        clip: ClipId,
        notes: Vec<(Anchor, Note)>,
    },
    /// Insert a tag at `index` (its ranges must name existing clips).
    InsertTag { index: usize, tag: Tag },
    /// Remove the tag at `index`.
    RemoveTag { index: usize },
    /// Rename a tag and rewrite the saved queries that use the old name (queries that do not
    /// tokenize are left alone). Undo restores the queries exactly as they were.
    RenameTag { index: usize, name: String },
    /// Rename a clip.
    RenameClip { clip: ClipId, name: String },
    /// Set or clear a tag's colour.
    SetTagColor {
        index: usize,
        color: Option<[u8; 3]>,
    },
    /// Move a tag from one position to another (lane order).
    MoveTag { from: usize, to: usize },
    /// Insert a clip at `index`, with the ranges each tag (by index) has on it.
    InsertClip {
        index: usize,
        clip: ClipInfo,
        ranges: Vec<(usize, Vec<Range>)>,
    },
    /// Remove the clip at `index` and every range on it.
    RemoveClip { index: usize },
    /// Change a clip's length (its animation file was re-imported with another frame count).
    /// Ranges past the new end are clipped; undo restores them.
    SetClipFrames { clip: ClipId, frames: u32 },
    /// Change where a clip's animation file is (re-linking a moved source).
    SetClipSource {
        clip: ClipId,
        source: Option<String>,
    },
    /// Set or clear a clip's unit (centimetres per file unit; `None`: the format's convention).
    SetClipUnit { clip: ClipId, unit_cm: Option<f32> },
    /// Replace the saved queries.
    SetQueries(Vec<SavedQuery>),
    /// Replace the autotag settings (generator parameters and custom rules); `None` removes them.
    /// Refused when they do not pass `AutotagSettings::validate`.
    SetAutotag(Option<Box<AutotagSettings>>),
    /// Several edits as one step (applied in order, undone in reverse).
    Batch(Vec<Edit>),
}

impl Edit {
    /// The one clip whose ranges, markers or notes this edit changes, if it changes those of
    /// exactly one clip and nothing else (batches too): the app shows that clip when the edit is
    /// undone or redone, so an undo never changes a clip out of sight.
    pub fn only_clip(&self) -> Option<ClipId> {
        fn walk(e: &Edit, one: &mut Option<ClipId>) -> bool {
            match e {
                Edit::SetRanges { clip, .. }
                | Edit::SetMarkers { clip, .. }
                | Edit::SetNotes { clip, .. } => {
                    if one.is_some_and(|c| c != *clip) {
                        return false;
                    }
                    *one = Some(*clip);
                    true
                }
                Edit::Batch(list) => list.iter().all(|e| walk(e, one)),
                _ => false,
            }
        }
        let mut one = None;
        walk(self, &mut one).then_some(one).flatten()
    }

    /// Calls `f` on every clip source this edit would set (`SetClipSource`, `InsertClip`, in
    /// batches too), so that it can be rewritten: a project saved into another folder rewrites its
    /// relative sources in its undo history as in the document.
    pub fn sources_mut(&mut self, f: &mut dyn FnMut(&mut Option<String>)) {
        match self {
            Edit::SetClipSource { source, .. } => f(source),
            Edit::InsertClip { clip, .. } => f(&mut clip.source),
            Edit::Batch(list) => {
                for e in list {
                    e.sources_mut(f);
                }
            }
            _ => {}
        }
    }
}

/// Why an edit was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("no tag at index {0}")]
    NoTag(usize),
    #[error("no clip at index {0}")]
    NoClip(usize),
    #[error("a tag named '{0}' already exists")]
    DuplicateTag(String),
    #[error("a clip named '{0}' already exists")]
    DuplicateClip(String),
    #[error("a tag name cannot be empty")]
    EmptyName,
    #[error("a note is on {0:?}, which tag {1} does not have on that clip")]
    NoAnchor(Anchor, usize),
    #[error("invalid autotag settings: {0}")]
    InvalidAutotag(String),
    #[error(
        "centimetres per unit must be from {min} to {max}, found {0}",
        min = crate::core::limits::MIN_UNIT_CM,
        max = crate::core::limits::MAX_UNIT_CM
    )]
    InvalidUnit(String),
}

/// Makes a range list canonical for a clip of `frames` frames: clamps to `[0, frames)`, then sorts,
/// merges overlapping or adjacent ranges and drops empty ones.
pub fn canonicalize(ranges: &mut Vec<Range>, frames: u32) {
    for r in ranges.iter_mut() {
        r.start = r.start.min(frames);
        r.stop = r.stop.min(frames);
    }
    crate::core::tags::range::canonicalize(ranges);
}

impl Edit {
    /// Applies the edit and returns its inverse. On error the document is unchanged.
    pub fn apply(self, doc: &mut TagDocument) -> Result<Edit, EditError> {
        self.check(doc)?;
        Ok(self.apply_checked(doc))
    }

    /// Checks that the edit can be applied to `doc` as it is now. Batches are checked step by step
    /// on a scratch copy only when they contain structural edits; range edits are checked in place.
    fn check(&self, doc: &TagDocument) -> Result<(), EditError> {
        match self {
            Edit::SetRanges { tag, clip, .. } | Edit::SetMarkers { tag, clip, .. } => {
                check_tag_and_clip(doc, *tag, *clip)?;
            }
            Edit::SetNotes { tag, clip, notes } => {
                let t = doc.tags.get(*tag).ok_or(EditError::NoTag(*tag))?;
                doc.clips
                    .get(*clip as usize)
                    .ok_or(EditError::NoClip(*clip as usize))?;
                if let Some((a, _)) = notes.iter().find(|(a, _)| !has_anchor(t, *clip, *a)) {
                    return Err(EditError::NoAnchor(*a, *tag));
                }
            }
            Edit::InsertTag { index, tag } => {
                if *index > doc.tags.len() {
                    return Err(EditError::NoTag(*index));
                }
                check_tag_name(doc, &tag.name, None)?;
                // Ranges, markers and notes alike (applying indexes the clips of each).
                if let Some(c) = tag
                    .ranges
                    .iter()
                    .map(|(c, _)| c)
                    .chain(tag.markers.keys())
                    .chain(tag.notes.keys())
                    .find(|c| **c as usize >= doc.clips.len())
                {
                    return Err(EditError::NoClip(*c as usize));
                }
            }
            Edit::RemoveTag { index } | Edit::SetTagColor { index, .. } => {
                doc.tags.get(*index).ok_or(EditError::NoTag(*index))?;
            }
            Edit::RenameTag { index, name } => {
                doc.tags.get(*index).ok_or(EditError::NoTag(*index))?;
                check_tag_name(doc, name, Some(*index))?;
            }
            Edit::RenameClip { clip, name } => {
                doc.clips
                    .get(*clip as usize)
                    .ok_or(EditError::NoClip(*clip as usize))?;
                if name.trim().is_empty() {
                    return Err(EditError::EmptyName);
                }
                if doc
                    .clips
                    .iter()
                    .enumerate()
                    .any(|(i, c)| i != *clip as usize && c.name == *name)
                {
                    return Err(EditError::DuplicateClip(name.clone()));
                }
            }
            Edit::MoveTag { from, to } => {
                doc.tags.get(*from).ok_or(EditError::NoTag(*from))?;
                doc.tags.get(*to).ok_or(EditError::NoTag(*to))?;
            }
            Edit::InsertClip {
                index,
                clip,
                ranges,
            } => {
                if *index > doc.clips.len() {
                    return Err(EditError::NoClip(*index));
                }
                if clip.name.trim().is_empty() {
                    return Err(EditError::EmptyName);
                }
                if doc.clips.iter().any(|c| c.name == clip.name) {
                    return Err(EditError::DuplicateClip(clip.name.clone()));
                }
                if let Some(u) = clip.unit_cm
                    && !crate::core::limits::unit_cm_ok(f64::from(u))
                {
                    return Err(EditError::InvalidUnit(u.to_string()));
                }
                if let Some((t, _)) = ranges.iter().find(|(t, _)| *t >= doc.tags.len()) {
                    return Err(EditError::NoTag(*t));
                }
            }
            Edit::RemoveClip { index } => {
                doc.clips.get(*index).ok_or(EditError::NoClip(*index))?;
            }
            Edit::SetClipSource { clip, .. } | Edit::SetClipFrames { clip, .. } => {
                doc.clips
                    .get(*clip as usize)
                    .ok_or(EditError::NoClip(*clip as usize))?;
            }
            Edit::SetClipUnit { clip, unit_cm } => {
                doc.clips
                    .get(*clip as usize)
                    .ok_or(EditError::NoClip(*clip as usize))?;
                if let Some(u) = unit_cm
                    && !crate::core::limits::unit_cm_ok(f64::from(*u))
                {
                    return Err(EditError::InvalidUnit(u.to_string()));
                }
            }
            Edit::SetQueries(_) | Edit::SetAutotag(None) => {}
            Edit::SetAutotag(Some(settings)) => settings
                .validate()
                .map_err(|e| EditError::InvalidAutotag(e.to_string()))?,
            Edit::Batch(edits) => {
                if edits.iter().all(|e| {
                    matches!(
                        e,
                        Edit::SetRanges { .. } | Edit::SetMarkers { .. } | Edit::SetQueries(_)
                    )
                }) {
                    for e in edits {
                        e.check(doc)?;
                    }
                } else {
                    // Each edit is checked against the document as the edits before it left it.
                    let mut scratch = doc.clone();
                    for step in steps(edits.iter().cloned()) {
                        match step {
                            Step::One(e) => {
                                e.check(&scratch)?;
                                e.apply_checked(&mut scratch);
                            }
                            Step::Run(tag, run) => {
                                for (clip, _) in &run {
                                    check_tag_and_clip(&scratch, tag, *clip)?;
                                }
                                set_ranges_run(&mut scratch, tag, run);
                            }
                            Step::Frames(run) => {
                                for &(clip, _) in &run {
                                    scratch
                                        .clips
                                        .get(clip as usize)
                                        .ok_or(EditError::NoClip(clip as usize))?;
                                }
                                set_frames_run(&mut scratch, run);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn apply_checked(self, doc: &mut TagDocument) -> Edit {
        match self {
            Edit::SetRanges {
                tag,
                clip,
                mut ranges,
            } => {
                let frames = doc.clips[clip as usize].frames;
                canonicalize(&mut ranges, frames);
                let t = &mut doc.tags[tag];
                t.version = next_version();
                let old_notes = reanchor_notes(t, clip, Some(&ranges), None);
                let old = if ranges.is_empty() {
                    t.ranges.remove(&clip)
                } else {
                    t.ranges.insert(clip, ranges)
                };
                let undo = Edit::SetRanges {
                    tag,
                    clip,
                    ranges: old.unwrap_or_default(),
                };
                with_notes(undo, tag, clip, old_notes)
            }
            Edit::SetMarkers {
                tag,
                clip,
                mut frames,
            } => {
                canonicalize_markers(&mut frames, doc.clips[clip as usize].frames);
                let t = &mut doc.tags[tag];
                t.version = next_version();
                let old_notes = reanchor_notes(t, clip, None, Some(&frames));
                let old = if frames.is_empty() {
                    t.markers.remove(&clip)
                } else {
                    t.markers.insert(clip, frames)
                };
                let undo = Edit::SetMarkers {
                    tag,
                    clip,
                    frames: old.unwrap_or_default(),
                };
                with_notes(undo, tag, clip, old_notes)
            }
            Edit::SetNotes {
                tag,
                clip,
                mut notes,
            } => {
                notes.retain(|(_, n)| !n.is_empty());
                notes.sort_by_key(|(a, _)| *a);
                // Two notes on one range or marker are combined, as the readers combine them (the
                // second was dropped).
                let mut one_each: Vec<(Anchor, Note)> = Vec::with_capacity(notes.len());
                for (a, n) in notes {
                    match one_each.last_mut() {
                        Some((last, note)) if *last == a => *note = Note::combine([&*note, &n]),
                        _ => one_each.push((a, n)),
                    }
                }
                let notes = one_each;
                let t = &mut doc.tags[tag];
                let old = if notes.is_empty() {
                    t.notes.remove(&clip)
                } else {
                    t.notes.insert(clip, notes)
                };
                Edit::SetNotes {
                    tag,
                    clip,
                    notes: old.unwrap_or_default(),
                }
            }
            Edit::InsertTag { index, mut tag } => {
                tag.ranges
                    .rebuild(|c, list| canonicalize(list, doc.clips[c as usize].frames));
                for (&c, list) in tag.markers.iter_mut() {
                    canonicalize_markers(list, doc.clips[c as usize].frames);
                }
                tag.markers.retain(|_, l| !l.is_empty());
                let clips: Vec<ClipId> = tag.notes.keys().copied().collect();
                for c in clips {
                    let keep = tag.notes[&c]
                        .iter()
                        .filter(|(a, n)| has_anchor(&tag, c, *a) && !n.is_empty())
                        .cloned()
                        .collect::<Vec<_>>();
                    if keep.is_empty() {
                        tag.notes.remove(&c);
                    } else {
                        tag.notes.insert(c, keep);
                    }
                }
                doc.tags.insert(index, tag);
                Edit::RemoveTag { index }
            }
            Edit::RemoveTag { index } => {
                let tag = doc.tags.remove(index);
                Edit::InsertTag { index, tag }
            }
            Edit::RenameTag { index, name } => {
                let old_queries = doc.queries.clone();
                for q in &mut doc.queries {
                    if let Some(expr) = rename_tag_in_expr(&q.expr, &doc.tags[index].name, &name) {
                        q.expr = expr;
                    }
                }
                let queries_changed = doc.queries != old_queries;
                let old = std::mem::replace(&mut doc.tags[index].name, name);
                doc.tags[index].version = next_version();
                let rename_back = Edit::RenameTag { index, name: old };
                if queries_changed {
                    // Renaming back rewrites the queries again; restoring them afterwards makes the
                    // undo exact even when a query already used the new name.
                    Edit::Batch(vec![rename_back, Edit::SetQueries(old_queries)])
                } else {
                    rename_back
                }
            }
            Edit::RenameClip { clip, name } => {
                let old = std::mem::replace(&mut doc.clips[clip as usize].name, name);
                // The browser filters and sorts by name (what is loaded from the clip is the same).
                doc.touch_clip_names();
                Edit::RenameClip { clip, name: old }
            }
            Edit::SetClipFrames { clip, frames } => set_frames_run(doc, vec![(clip, frames)]),
            Edit::SetTagColor { index, color } => {
                let old = std::mem::replace(&mut doc.tags[index].color, color);
                Edit::SetTagColor { index, color: old }
            }
            Edit::MoveTag { from, to } => {
                let tag = doc.tags.remove(from);
                doc.tags.insert(to, tag);
                Edit::MoveTag { from: to, to: from }
            }
            Edit::InsertClip {
                index,
                clip,
                ranges,
            } => {
                let id = index as ClipId;
                for tag in &mut doc.tags {
                    let a = tag.ranges.shift_clips(id, true);
                    let b = shift_clip_ids(&mut tag.markers, id, true);
                    shift_clip_ids(&mut tag.notes, id, true);
                    if a || b {
                        tag.version = next_version();
                    }
                }
                for (t, mut list) in ranges {
                    canonicalize(&mut list, clip.frames);
                    let tag = &mut doc.tags[t];
                    tag.version = next_version();
                    if !list.is_empty() {
                        tag.ranges.insert(id, list);
                    }
                }
                doc.clips.insert(index, clip);
                doc.touch_clips();
                Edit::RemoveClip { index }
            }
            Edit::RemoveClip { index } => {
                let id = index as ClipId;
                let mut ranges = Vec::new();
                let mut extra = Vec::new();
                for (t, tag) in doc.tags.iter_mut().enumerate() {
                    let removed = tag.ranges.remove(&id);
                    let markers = tag.markers.remove(&id);
                    let notes = tag.notes.remove(&id);
                    let shifted = tag.ranges.shift_clips(id, false);
                    let shifted_markers = shift_clip_ids(&mut tag.markers, id, false);
                    shift_clip_ids(&mut tag.notes, id, false);
                    if removed.is_some() || markers.is_some() || shifted || shifted_markers {
                        tag.version = next_version();
                    }
                    if let Some(list) = removed {
                        ranges.push((t, list));
                    }
                    if let Some(frames) = markers {
                        extra.push(Edit::SetMarkers {
                            tag: t,
                            clip: id,
                            frames,
                        });
                    }
                    if let Some(notes) = notes {
                        extra.push(Edit::SetNotes {
                            tag: t,
                            clip: id,
                            notes,
                        });
                    }
                }
                let clip = doc.clips.remove(index);
                doc.touch_clips();
                let insert = Edit::InsertClip {
                    index,
                    clip,
                    ranges,
                };
                if extra.is_empty() {
                    insert
                } else {
                    // Markers first, then the notes on them.
                    extra.sort_by_key(|e| matches!(e, Edit::SetNotes { .. }));
                    extra.insert(0, insert);
                    Edit::Batch(extra)
                }
            }
            Edit::SetClipSource { clip, source } => {
                let old = std::mem::replace(&mut doc.clips[clip as usize].source, source);
                // The browser groups clips by their source's folder.
                doc.touch_clips();
                Edit::SetClipSource { clip, source: old }
            }
            Edit::SetClipUnit { clip, unit_cm } => {
                let old = std::mem::replace(&mut doc.clips[clip as usize].unit_cm, unit_cm);
                // Features (find similar) are built in centimetres through the unit.
                doc.touch_clips();
                Edit::SetClipUnit { clip, unit_cm: old }
            }
            Edit::SetQueries(queries) => {
                Edit::SetQueries(std::mem::replace(&mut doc.queries, queries))
            }
            Edit::SetAutotag(settings) => Edit::SetAutotag(
                std::mem::replace(&mut doc.autotag, settings.map(|s| *s)).map(Box::new),
            ),
            Edit::Batch(edits) => {
                let mut inverses: Vec<Edit> = Vec::with_capacity(edits.len());
                for step in steps(edits) {
                    match step {
                        Step::One(e) => inverses.push(e.apply_checked(doc)),
                        Step::Run(tag, run) => inverses.extend(set_ranges_run(doc, tag, run)),
                        Step::Frames(run) => inverses.push(set_frames_run(doc, run)),
                    }
                }
                inverses.reverse();
                Edit::Batch(inverses)
            }
        }
    }

    /// True for an edit that does nothing at all (an empty batch, or batches of them).
    pub fn is_empty(&self) -> bool {
        matches!(self, Edit::Batch(b) if b.iter().all(Edit::is_empty))
    }

    /// True when the edit changes nothing but ranges, markers and notes (used to keep drags
    /// cheap).
    pub fn is_range_edit(&self) -> bool {
        match self {
            Edit::SetRanges { .. } | Edit::SetMarkers { .. } | Edit::SetNotes { .. } => true,
            Edit::Batch(b) => b.iter().all(Edit::is_range_edit),
            _ => false,
        }
    }
}

fn check_tag_name(doc: &TagDocument, name: &str, except: Option<usize>) -> Result<(), EditError> {
    if name.trim().is_empty() {
        return Err(EditError::EmptyName);
    }
    if doc
        .tags
        .iter()
        .enumerate()
        .any(|(i, t)| Some(i) != except && t.name == name)
    {
        return Err(EditError::DuplicateTag(name.to_owned()));
    }
    Ok(())
}

/// Sorts markers, drops duplicates and clamps frames past the end of a clip of `frames` frames to
/// its last frame (a clip without frames has no markers).
pub fn canonicalize_markers(markers: &mut Vec<u32>, frames: u32) {
    if frames == 0 {
        markers.clear();
        return;
    }
    for m in markers.iter_mut() {
        *m = (*m).min(frames - 1);
    }
    markers.sort_unstable();
    markers.dedup();
}

fn set_or_remove<T>(map: &mut BTreeMap<ClipId, Vec<T>>, clip: ClipId, list: Vec<T>) {
    if list.is_empty() {
        map.remove(&clip);
    } else {
        map.insert(clip, list);
    }
}

/// True when `tag` has `anchor` (a range or marker) on `clip`.
fn has_anchor(tag: &Tag, clip: ClipId, anchor: Anchor) -> bool {
    match anchor {
        Anchor::Range(r) => tag.ranges_on(clip).binary_search(&r).is_ok(),
        Anchor::Marker(f) => tag.markers_on(clip).binary_search(&f).is_ok(),
    }
}

/// The notes `old` moved onto a tag's new ranges and markers on one clip. A range note follows the
/// new ranges its old range overlaps: a resized range keeps its note, both halves of a split keep
/// it, a merge combines the notes ([`Note::combine`]). A marker note stays while its frame is a
/// marker; several notes on one marker frame (two markers moved onto one) are combined the same
/// way. Notes whose anchor is gone are dropped.
pub fn reanchored(
    old: &[(Anchor, Note)],
    ranges: &[Range],
    markers: &[u32],
) -> Vec<(Anchor, Note)> {
    let mut on_markers: Vec<(u32, &Note)> = old
        .iter()
        .filter_map(|(a, n)| match a {
            Anchor::Marker(f) if markers.binary_search(f).is_ok() => Some((*f, n)),
            _ => None,
        })
        .collect();
    on_markers.sort_by_key(|(f, _)| *f);
    let mut out: Vec<(Anchor, Note)> = Vec::with_capacity(old.len());
    for same in on_markers.chunk_by(|a, b| a.0 == b.0) {
        let note = match same {
            [(_, n)] => (*n).clone(),
            _ => Note::combine(same.iter().map(|(_, n)| *n)),
        };
        out.push((Anchor::Marker(same[0].0), note));
    }
    let old_ranges: Vec<(Range, &Note)> = old
        .iter()
        .filter_map(|(a, n)| match a {
            Anchor::Range(r) => Some((*r, n)),
            Anchor::Marker(_) => None,
        })
        .collect();
    if !old_ranges.is_empty() {
        for &r in ranges {
            let hits: Vec<&Note> = old_ranges
                .iter()
                .filter(|(o, _)| o.start < r.stop && r.start < o.stop)
                .map(|(_, n)| *n)
                .collect();
            match hits.len() {
                0 => {}
                1 => out.push((Anchor::Range(r), hits[0].clone())),
                _ => out.push((Anchor::Range(r), Note::combine(hits))),
            }
        }
    }
    out.sort_by_key(|(a, _)| *a);
    out
}

/// Re-anchors the notes of `tag` on `clip` to new `ranges` (or, when `None`, the tag's current
/// ones) and new `markers` (likewise). Returns the notes as they were when they changed (for the
/// undo).
fn reanchor_notes(
    tag: &mut Tag,
    clip: ClipId,
    ranges: Option<&[Range]>,
    markers: Option<&[u32]>,
) -> Option<Vec<(Anchor, Note)>> {
    let old = tag.notes.get(&clip)?;
    let out = reanchored(
        old,
        ranges.unwrap_or(tag.ranges_on(clip)),
        markers.unwrap_or(tag.markers_on(clip)),
    );
    if &out == old {
        return None;
    }
    let before = old.clone();
    set_or_remove(&mut tag.notes, clip, out);
    Some(before)
}

fn check_tag_and_clip(doc: &TagDocument, tag: usize, clip: ClipId) -> Result<(), EditError> {
    doc.tags.get(tag).ok_or(EditError::NoTag(tag))?;
    doc.clips
        .get(clip as usize)
        .ok_or(EditError::NoClip(clip as usize))?;
    Ok(())
}

/// One step of a batch: an edit, or range edits of one tag on distinct clips back to back (an
/// auto-tag pass, a merge, their undo), which are written in one merge.
enum Step {
    One(Edit),
    Run(usize, Vec<(ClipId, Vec<Range>)>),
    /// Frame counts of distinct clips back to back (a re-import's update of changed clips, its
    /// undo), whose clipped ranges are written once a tag.
    Frames(Vec<(ClipId, u32)>),
}

/// The steps of a batch's edits, in order.
fn steps(edits: impl IntoIterator<Item = Edit>) -> Vec<Step> {
    let mut out = Vec::new();
    let mut rest = edits.into_iter().peekable();
    while let Some(e) = rest.next() {
        if let Edit::SetClipFrames { clip, frames } = e {
            let mut run = vec![(clip, frames)];
            let mut seen = HashSet::from([clip]);
            while let Some(&Edit::SetClipFrames { clip, frames }) = rest.peek() {
                if !seen.insert(clip) {
                    break;
                }
                rest.next();
                run.push((clip, frames));
            }
            out.push(Step::Frames(run));
            continue;
        }
        let Edit::SetRanges { tag, clip, ranges } = e else {
            out.push(Step::One(e));
            continue;
        };
        let mut run = vec![(clip, ranges)];
        let mut seen = HashSet::from([clip]);
        while let Some(Edit::SetRanges {
            tag: t, clip: c, ..
        }) = rest.peek()
        {
            let (t, c) = (*t, *c);
            if t != tag || !seen.insert(c) {
                break;
            }
            if let Some(Edit::SetRanges { clip, ranges, .. }) = rest.next() {
                run.push((clip, ranges));
            }
        }
        out.push(Step::Run(tag, run));
    }
    out
}

/// Applies `SetRanges` edits of tag `tag` on distinct clips; returns their inverses in order. Short
/// runs go one by one; longer ones write the tag's flat buffer once ([`ClipRanges::set_many`]),
/// with the same result. Their inverses are the notes to restore, then the range edits: undone in
/// reverse, the ranges come back first (as one run again) and each clip's notes after them.
///
/// [`ClipRanges::set_many`]: crate::core::tags::ClipRanges::set_many
fn set_ranges_run(doc: &mut TagDocument, tag: usize, run: Vec<(ClipId, Vec<Range>)>) -> Vec<Edit> {
    const ONE_BY_ONE: usize = 8;
    if run.len() < ONE_BY_ONE {
        return run
            .into_iter()
            .map(|(clip, ranges)| Edit::SetRanges { tag, clip, ranges }.apply_checked(doc))
            .collect();
    }
    let mut undo_notes = Vec::new();
    let mut undo_ranges = Vec::with_capacity(run.len());
    let mut updates = Vec::with_capacity(run.len());
    for (clip, mut ranges) in run {
        canonicalize(&mut ranges, doc.clips[clip as usize].frames);
        let t = &mut doc.tags[tag];
        if let Some(notes) = reanchor_notes(t, clip, Some(&ranges), None) {
            undo_notes.push(Edit::SetNotes { tag, clip, notes });
        }
        undo_ranges.push(Edit::SetRanges {
            tag,
            clip,
            ranges: t.ranges_on(clip).to_vec(),
        });
        updates.push((clip, ranges));
    }
    let t = &mut doc.tags[tag];
    t.version = next_version();
    t.ranges.set_many(updates);
    undo_notes.extend(undo_ranges);
    undo_notes
}

/// Applies `SetClipFrames` edits of distinct clips (one edit, or a run of them in a batch); returns
/// their inverse. A clip's ranges and markers past its new end are clipped and its notes follow
/// them; each tag's clipped lists are written in one merge ([`ClipRanges::set_many`]), where
/// edit by edit they moved the tag's tail once a clip (a re-import updating many changed takes).
/// The inverse restores every frame count first, then each tag's ranges (one run again, see
/// [`set_ranges_run`]), markers and notes; it is the frame count alone when nothing was clipped.
///
/// [`ClipRanges::set_many`]: crate::core::tags::ClipRanges::set_many
fn set_frames_run(doc: &mut TagDocument, run: Vec<(ClipId, u32)>) -> Edit {
    let mut restore: Vec<Edit> = run
        .iter()
        .map(|&(clip, frames)| Edit::SetClipFrames {
            clip,
            frames: std::mem::replace(&mut doc.clips[clip as usize].frames, frames),
        })
        .collect();
    doc.touch_clips();
    for (t, tag) in doc.tags.iter_mut().enumerate() {
        let (mut ranges, mut markers, mut notes) = (Vec::new(), Vec::new(), Vec::new());
        let mut updates = Vec::new();
        for &(clip, frames) in &run {
            let ranges_past = tag.ranges_on(clip).last().is_some_and(|r| r.stop > frames);
            let markers_past = tag.markers_on(clip).last().is_some_and(|&m| m >= frames);
            if !ranges_past && !markers_past {
                continue;
            }
            let notes_before = tag.notes.get(&clip).cloned();
            let markers_before = tag.markers.get(&clip).cloned().unwrap_or_default();
            let before = tag.ranges_on(clip).to_vec();
            let mut clipped = before.clone();
            canonicalize(&mut clipped, frames);
            let mut kept: Vec<u32> = markers_before
                .iter()
                .copied()
                .filter(|&m| m < frames)
                .collect();
            kept.dedup();
            reanchor_notes(tag, clip, Some(&clipped), Some(&kept));
            set_or_remove(&mut tag.markers, clip, kept);
            ranges.push(Edit::SetRanges {
                tag: t,
                clip,
                ranges: before,
            });
            updates.push((clip, clipped));
            if markers_past {
                markers.push(Edit::SetMarkers {
                    tag: t,
                    clip,
                    frames: markers_before,
                });
            }
            if let Some(old) = notes_before {
                notes.push(Edit::SetNotes {
                    tag: t,
                    clip,
                    notes: old,
                });
            }
        }
        if updates.is_empty() {
            continue;
        }
        tag.ranges.set_many(updates);
        tag.version = next_version();
        restore.extend(ranges);
        restore.extend(markers);
        restore.extend(notes);
    }
    if restore.len() == 1 {
        restore.pop().expect("one edit")
    } else {
        Edit::Batch(restore)
    }
}

/// `undo`, followed by restoring the notes `old_notes` when they changed.
fn with_notes(
    undo: Edit,
    tag: usize,
    clip: ClipId,
    old_notes: Option<Vec<(Anchor, Note)>>,
) -> Edit {
    match old_notes {
        None => undo,
        Some(notes) => Edit::Batch(vec![undo, Edit::SetNotes { tag, clip, notes }]),
    }
}

/// Renumbers clip ids at or after `at` by one: up for an insertion, down for a removal (the entry
/// for `at` itself must already be gone when removing). Returns true when any id moved.
fn shift_clip_ids<T>(ranges: &mut BTreeMap<ClipId, T>, at: ClipId, insert: bool) -> bool {
    if ranges.range(at..).next().is_none() {
        return false;
    }
    let moved = ranges.split_off(&at);
    for (c, list) in moved {
        let c = if insert { c + 1 } else { c - 1 };
        ranges.insert(c, list);
    }
    true
}

/// Conveniences for code that edits a document without a history (loaders, generators, tests,
/// benchmarks). Each one is a single [`Edit`], so the rules are the edit's: ranges are made
/// canonical and clamped to the clip, names are checked, versions are bumped.
impl TagDocument {
    /// Appends a clip without ranges; returns its id.
    pub fn add_clip(&mut self, clip: ClipInfo) -> Result<ClipId, EditError> {
        let index = self.clips.len();
        Edit::InsertClip {
            index,
            clip,
            ranges: vec![],
        }
        .apply(self)?;
        Ok(index as ClipId)
    }

    /// Renames a clip.
    pub fn rename_clip(&mut self, clip: ClipId, name: &str) -> Result<(), EditError> {
        Edit::RenameClip {
            clip,
            name: name.to_owned(),
        }
        .apply(self)
        .map(drop)
    }

    /// Removes a clip and every range on it; the clips after it move down one id.
    pub fn remove_clip(&mut self, clip: ClipId) -> Result<ClipInfo, EditError> {
        let info = self
            .clips
            .get(clip as usize)
            .cloned()
            .ok_or(EditError::NoClip(clip as usize))?;
        Edit::RemoveClip {
            index: clip as usize,
        }
        .apply(self)?;
        Ok(info)
    }

    /// Appends a tag without ranges; returns its index.
    pub fn add_tag(&mut self, name: &str, color: Option<[u8; 3]>) -> Result<usize, EditError> {
        let index = self.tags.len();
        Edit::InsertTag {
            index,
            tag: Tag {
                name: name.to_owned(),
                color,
                ranges: Default::default(),
                markers: Default::default(),
                notes: Default::default(),
                version: next_version(),
            },
        }
        .apply(self)?;
        Ok(index)
    }

    /// Renames a tag and rewrites the saved queries that use the old name; returns how many saved
    /// queries changed.
    pub fn rename_tag(&mut self, tag: usize, name: &str) -> Result<usize, EditError> {
        let before = self.queries.clone();
        Edit::RenameTag {
            index: tag,
            name: name.to_owned(),
        }
        .apply(self)?;
        Ok(before
            .iter()
            .zip(&self.queries)
            .filter(|(a, b)| a != b)
            .count())
    }

    /// Removes a tag (saved queries that use it are kept, and will report the unknown name).
    pub fn remove_tag(&mut self, tag: usize) -> Result<Tag, EditError> {
        let removed = self.tags.get(tag).cloned().ok_or(EditError::NoTag(tag))?;
        Edit::RemoveTag { index: tag }.apply(self)?;
        Ok(removed)
    }

    /// Replaces the ranges of `tag` on `clip` (see [`canonicalize`]; an empty list removes the
    /// clip from the tag). Returns how many ranges were merged into a neighbour or dropped.
    pub fn set_ranges(
        &mut self,
        tag: usize,
        clip: ClipId,
        ranges: Vec<Range>,
    ) -> Result<usize, EditError> {
        let given = ranges.len();
        Edit::SetRanges { tag, clip, ranges }.apply(self)?;
        let kept = self.tags[tag].ranges.get(&clip).map_or(0, <[_]>::len);
        Ok(given - kept)
    }

    /// Adds the frames of `range` to `tag` on `clip`.
    pub fn add_range(&mut self, tag: usize, clip: ClipId, range: Range) -> Result<(), EditError> {
        let mut list = self.ranges_of(tag, clip)?;
        list.push(range);
        Edit::SetRanges {
            tag,
            clip,
            ranges: list,
        }
        .apply(self)
        .map(drop)
    }

    /// Removes the frames of `range` from `tag` on `clip` (splitting a range if needed).
    pub fn remove_range(
        &mut self,
        tag: usize,
        clip: ClipId,
        range: Range,
    ) -> Result<(), EditError> {
        let list = self.ranges_of(tag, clip)?;
        let mut out = Vec::new();
        crate::core::tags::range::difference(&list, &[range], &mut out);
        Edit::SetRanges {
            tag,
            clip,
            ranges: out,
        }
        .apply(self)
        .map(drop)
    }

    fn ranges_of(&self, tag: usize, clip: ClipId) -> Result<Vec<Range>, EditError> {
        let t = self.tags.get(tag).ok_or(EditError::NoTag(tag))?;
        self.clips
            .get(clip as usize)
            .ok_or(EditError::NoClip(clip as usize))?;
        Ok(t.ranges.get(&clip).map(<[_]>::to_vec).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two markers moved onto one frame keep both notes, combined (as merged ranges do).
    #[test]
    fn notes_of_markers_moved_onto_one_frame_are_combined() {
        let note = |t: &str| Note {
            text: t.into(),
            ..Default::default()
        };
        let old = [
            (Anchor::Marker(40), note("heel strike")),
            (Anchor::Marker(40), note("sync")),
            (Anchor::Marker(70), note("apex")),
            (Anchor::Marker(90), note("gone")),
        ];
        let out = reanchored(&old, &[], &[40, 70]);
        assert_eq!(
            out,
            vec![
                (Anchor::Marker(40), note("heel strike; sync")),
                (Anchor::Marker(70), note("apex")),
            ]
        );
    }

    fn r(start: u32, stop: u32) -> Range {
        Range::new(start, stop)
    }

    fn doc() -> TagDocument {
        let clip = |name: &str, frames| ClipInfo {
            name: name.into(),
            frames,
            fps: 30.0,
            source: None,
            unit_cm: None,
        };
        let mut walk = Tag::new("Walk");
        walk.ranges.insert(0, vec![r(0, 10)]);
        walk.ranges.insert(1, vec![r(5, 8)]);
        TagDocument {
            clips: vec![clip("a", 100), clip("b", 50)],
            tags: vec![walk],
            queries: vec![],
            autotag: None,
            clips_version: 0,
            clip_data_version: 0,
        }
    }

    /// Two notes given for one range are combined, not the second dropped; undo gives back what
    /// was there.
    #[test]
    fn two_notes_on_one_range_are_combined() {
        use crate::core::tags::{Anchor, Note};
        let mut d = doc();
        let note = |t: &str| Note {
            text: t.into(),
            ..Note::default()
        };
        let at = Anchor::Range(r(0, 10));
        let undo = Edit::SetNotes {
            tag: 0,
            clip: 0,
            notes: vec![(at, note("heel")), (at, note("toe"))],
        }
        .apply(&mut d)
        .unwrap();
        assert_eq!(d.tags[0].notes[&0], vec![(at, note("heel; toe"))]);
        undo.apply(&mut d).unwrap();
        assert!(d.tags[0].notes.is_empty());
    }

    /// Edits that would index a clip or hold a unit the document cannot have are refused before
    /// anything changes (a tag inserted with markers on a clip not there panicked).
    #[test]
    fn inserted_tags_and_clips_are_checked_whole() {
        let mut d = doc();
        let before = d.clone();
        let mut t = Tag::new("Step");
        t.markers.insert(5, vec![3]);
        assert_eq!(
            Edit::InsertTag { index: 0, tag: t }.apply(&mut d),
            Err(EditError::NoClip(5))
        );
        let mut t = Tag::new("Step");
        t.notes.insert(
            2,
            vec![(
                crate::core::tags::Anchor::Marker(1),
                crate::core::tags::Note::default(),
            )],
        );
        assert_eq!(
            Edit::InsertTag { index: 0, tag: t }.apply(&mut d),
            Err(EditError::NoClip(2))
        );
        let clip = ClipInfo {
            name: "tiny".into(),
            frames: 10,
            fps: 30.0,
            source: None,
            unit_cm: Some(1e-5),
        };
        assert!(matches!(
            Edit::InsertClip {
                index: 0,
                clip,
                ranges: Vec::new(),
            }
            .apply(&mut d),
            Err(EditError::InvalidUnit(_))
        ));
        assert_eq!(d, before);
    }

    #[test]
    fn canonicalize_merges_clamps_and_drops() {
        let mut v = vec![r(20, 30), r(0, 5), r(5, 9), r(3, 4), r(40, 40), r(90, 200)];
        canonicalize(&mut v, 100);
        assert_eq!(v, vec![r(0, 9), r(20, 30), r(90, 100)]);
    }

    #[test]
    fn every_edit_round_trips_through_its_inverse() {
        let base = doc();
        let edits = vec![
            Edit::SetRanges {
                tag: 0,
                clip: 0,
                ranges: vec![r(1, 3), r(3, 7), r(95, 120)],
            },
            Edit::SetRanges {
                tag: 0,
                clip: 1,
                ranges: vec![],
            },
            Edit::InsertTag {
                index: 0,
                tag: Tag {
                    color: Some([1, 2, 3]),
                    ranges: [(1, vec![r(0, 2)])].into(),
                    ..Tag::new("Run")
                },
            },
            Edit::RemoveTag { index: 0 },
            Edit::RenameTag {
                index: 0,
                name: "locomotion:Walk".into(),
            },
            Edit::SetTagColor {
                index: 0,
                color: Some([9, 9, 9]),
            },
            Edit::InsertClip {
                index: 0,
                clip: ClipInfo {
                    name: "new".into(),
                    frames: 10,
                    fps: 24.0,
                    source: Some("x.bvh".into()),
                    unit_cm: None,
                },
                ranges: vec![(0, vec![r(2, 4)])],
            },
            Edit::RemoveClip { index: 0 },
            Edit::SetClipSource {
                clip: 1,
                source: Some("moved/b.bvh".into()),
            },
            Edit::SetClipFrames { clip: 0, frames: 5 },
            Edit::SetClipUnit {
                clip: 1,
                unit_cm: Some(5.644),
            },
            Edit::RenameClip {
                clip: 1,
                name: "b2".into(),
            },
            Edit::SetQueries(vec![SavedQuery {
                name: "q".into(),
                expr: "Walk".into(),
            }]),
        ];
        for edit in edits {
            let mut d = base.clone();
            let inverse = edit.clone().apply(&mut d).unwrap();
            assert_ne!(
                strip_versions(&d),
                strip_versions(&base),
                "{edit:?} changed nothing"
            );
            inverse.apply(&mut d).unwrap();
            assert_eq!(
                strip_versions(&d),
                strip_versions(&base),
                "{edit:?} did not undo"
            );
        }
    }

    fn strip_versions(d: &TagDocument) -> TagDocument {
        d.clone().unversioned()
    }

    /// Clip `c{i}`, 60 frames at 30 fps.
    fn numbered_clip(i: u32) -> ClipInfo {
        ClipInfo {
            name: format!("c{i}"),
            frames: 60,
            fps: 30.0,
            source: None,
            unit_cm: None,
        }
    }

    /// A batch of frame counts (a re-import updating its changed takes) gives the document that
    /// the edits one at a time give: ranges and markers past a clip's new end clipped, notes
    /// following them. Its undo restores every frame count first and each tag's ranges as one run,
    /// and gives the document back; redo gives the batch's result again.
    #[test]
    fn a_run_of_frame_counts_equals_the_edits_one_by_one() {
        let mut base = doc();
        base.tags.push(Tag::new("Run"));
        for i in 2..40u32 {
            base.add_clip(numbered_clip(i)).unwrap();
            base.tags[0].ranges.insert(i, vec![r(1, 4), r(20, 50)]);
            if i % 2 == 0 {
                base.tags[1].ranges.insert(i, vec![r(40, 60)]);
                base.tags[1].markers.insert(i, vec![5, 45]);
            }
        }
        let note = |text: &str| Note {
            text: text.into(),
            data: BTreeMap::new(),
        };
        // On clip 4: a note on a range that will be cut short, one on a range that will be gone,
        // one on a marker past the end (dropped), one on a marker that stays.
        base.tags[0]
            .notes
            .insert(4, vec![(Anchor::Range(r(20, 50)), note("stride"))]);
        let mut notes = vec![
            (Anchor::Marker(5), note("kept")),
            (Anchor::Range(r(40, 60)), note("gone")),
            (Anchor::Marker(45), note("past")),
        ];
        // In the document's order (by anchor), as loaders and edits leave it.
        notes.sort_by_key(|(a, _)| *a);
        base.tags[1].notes.insert(4, notes);
        // Shorter (30), longer (90), to nothing (0), unchanged; clip 1 stays as it is.
        let edits: Vec<Edit> = (2..40u32)
            .map(|clip| Edit::SetClipFrames {
                clip,
                frames: [30, 90, 0, 60][clip as usize % 4],
            })
            .chain([Edit::SetClipFrames { clip: 0, frames: 7 }])
            .collect();
        let mut one_by_one = base.clone();
        for e in &edits {
            e.clone().apply(&mut one_by_one).unwrap();
        }
        let mut batched = base.clone();
        let undo = Edit::Batch(edits.clone()).apply(&mut batched).unwrap();
        assert_eq!(strip_versions(&batched), strip_versions(&one_by_one));
        // What the edits do, written out for clip 4 (30 frames now) and clip 6 (none).
        assert_eq!(batched.clips[4].frames, 30);
        assert_eq!(batched.tags[0].ranges_on(4), &[r(1, 4), r(20, 30)][..]);
        assert_eq!(batched.tags[0].notes_on(4)[0].0, Anchor::Range(r(20, 30)));
        assert!(batched.tags[1].ranges_on(4).is_empty());
        assert_eq!(batched.tags[1].markers_on(4), &[5][..]);
        assert_eq!(
            batched.tags[1].notes_on(4),
            &[(Anchor::Marker(5), note("kept"))][..]
        );
        assert!(batched.tags[0].ranges_on(6).is_empty());
        assert!(batched.tags[1].markers_on(6).is_empty());
        assert_eq!(batched.tags[0].ranges_on(5), base.tags[0].ranges_on(5));
        assert_eq!(batched.tags[0].ranges_on(0), &[r(0, 7)][..]);
        assert_ne!(batched.tags[0].version, base.tags[0].version);
        // The undo: the frame counts, then Walk's ranges back to back (one run), then Run's.
        let Edit::Batch(steps) = &undo else {
            panic!("{undo:?}")
        };
        let [Edit::Batch(restore)] = steps.as_slice() else {
            panic!("{undo:?}")
        };
        assert!(
            restore[..edits.len()]
                .iter()
                .all(|e| matches!(e, Edit::SetClipFrames { .. }))
        );
        let tags_of_ranges: Vec<usize> = restore
            .iter()
            .filter_map(|e| match e {
                Edit::SetRanges { tag, .. } => Some(*tag),
                _ => None,
            })
            .collect();
        assert!(tags_of_ranges.len() > 20);
        assert!(
            tags_of_ranges.windows(2).all(|w| w[0] <= w[1]),
            "{tags_of_ranges:?}"
        );
        let redo = undo.apply(&mut batched).unwrap();
        assert_eq!(strip_versions(&batched), strip_versions(&base));
        redo.apply(&mut batched).unwrap();
        assert_eq!(strip_versions(&batched), strip_versions(&one_by_one));
    }

    /// A long batch of range edits on one tag (written in one merge) gives the document that
    /// applying them one at a time gives, notes re-anchored the same way, and its inverse undoes it.
    #[test]
    fn a_run_of_range_edits_equals_the_edits_one_by_one() {
        let mut base = doc();
        for i in 2..40u32 {
            base.add_clip(numbered_clip(i)).unwrap();
            if i % 3 == 0 {
                base.tags[0].ranges.insert(i, vec![r(1, 4), r(10, 20)]);
            }
        }
        // A note on a range that the batch shrinks: it must follow its range.
        base.tags[0].notes.insert(
            3,
            vec![(
                Anchor::Range(r(10, 20)),
                Note {
                    text: "step".into(),
                    data: BTreeMap::new(),
                },
            )],
        );
        let edits: Vec<Edit> = (0..40u32)
            .rev()
            .filter(|c| c % 4 != 1)
            .map(|clip| Edit::SetRanges {
                tag: 0,
                clip,
                // Overlapping and out of range: canonicalised like a single edit's.
                ranges: match clip % 3 {
                    0 => vec![r(12, 16), r(14, 18), r(50, 500)],
                    1 => vec![],
                    _ => vec![r(2, 3)],
                },
            })
            .collect();
        let mut one_by_one = base.clone();
        for e in &edits {
            e.clone().apply(&mut one_by_one).unwrap();
        }
        let mut batched = base.clone();
        let undo = Edit::Batch(edits).apply(&mut batched).unwrap();
        assert_eq!(strip_versions(&batched), strip_versions(&one_by_one));
        // The undo is flat: its range edits form one run again, the note to restore after them.
        let Edit::Batch(steps) = &undo else {
            panic!("{undo:?}")
        };
        assert!(
            steps.iter().all(|e| !matches!(e, Edit::Batch(_))),
            "{undo:?}"
        );
        assert!(matches!(steps.last(), Some(Edit::SetNotes { clip: 3, .. })));
        assert_ne!(batched.tags[0].version, base.tags[0].version);
        assert_eq!(batched.tags[0].notes_on(3)[0].0, Anchor::Range(r(12, 18)));
        undo.apply(&mut batched).unwrap();
        assert_eq!(strip_versions(&batched), strip_versions(&base));
    }

    #[test]
    fn removing_a_clip_renumbers_later_clips() {
        let mut d = doc();
        Edit::RemoveClip { index: 0 }.apply(&mut d).unwrap();
        assert_eq!(d.clips.len(), 1);
        assert_eq!(d.tags[0].ranges.get(&0), Some(&[r(5, 8)][..]));
        assert!(!d.tags[0].ranges.contains_key(&1));
    }

    #[test]
    fn invalid_edits_change_nothing() {
        let base = doc();
        let bad = vec![
            Edit::SetRanges {
                tag: 3,
                clip: 0,
                ranges: vec![],
            },
            Edit::SetRanges {
                tag: 0,
                clip: 7,
                ranges: vec![],
            },
            Edit::RenameTag {
                index: 0,
                name: " ".into(),
            },
            Edit::MoveTag { from: 0, to: 4 },
            Edit::Batch(vec![
                Edit::SetTagColor {
                    index: 0,
                    color: Some([1, 1, 1]),
                },
                Edit::RemoveTag { index: 0 },
                Edit::RemoveTag { index: 0 },
            ]),
        ];
        for edit in bad {
            let mut d = base.clone();
            assert!(edit.clone().apply(&mut d).is_err(), "{edit:?}");
            assert_eq!(d, base);
        }
    }

    #[test]
    fn duplicate_names_are_refused() {
        let mut d = doc();
        let run = Tag::new("Walk");
        assert_eq!(
            Edit::InsertTag { index: 1, tag: run }.apply(&mut d),
            Err(EditError::DuplicateTag("Walk".into()))
        );
    }

    #[test]
    fn range_edits_bump_the_tag_version() {
        let mut d = doc();
        let v = d.tags[0].version;
        Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![r(0, 1)],
        }
        .apply(&mut d)
        .unwrap();
        assert!(d.tags[0].version > v);
    }

    #[test]
    fn conveniences_go_through_edits() {
        let mut d = crate::core::tags::document::test_document(&[("a", 10), ("b", 20), ("c", 30)]);
        d.add_tag("Walk", None).unwrap();
        d.add_tag("Run", Some([1, 2, 3])).unwrap();
        let v = d.tags[0].version;
        assert_eq!(d.set_ranges(0, 1, vec![r(5, 9), r(0, 5)]).unwrap(), 1);
        assert_eq!(d.tags[0].ranges[&1], vec![r(0, 9)]);
        assert_ne!(d.tags[0].version, v);
        // One rule everywhere: ranges are clamped to the clip, as every edit does.
        d.set_ranges(0, 2, vec![r(25, 40)]).unwrap();
        assert_eq!(d.tags[0].ranges[&2], vec![r(25, 30)]);
        assert_eq!(d.set_ranges(0, 7, vec![]), Err(EditError::NoClip(7)));
        d.add_range(0, 1, r(12, 15)).unwrap();
        d.remove_range(0, 1, r(3, 13)).unwrap();
        assert_eq!(d.tags[0].ranges[&1], vec![r(0, 3), r(13, 15)]);
        assert_eq!(
            d.add_tag("Run", None),
            Err(EditError::DuplicateTag("Run".into()))
        );
        assert_eq!(
            d.rename_clip(0, "b"),
            Err(EditError::DuplicateClip("b".into()))
        );
        d.rename_clip(0, "a2").unwrap();
        let clips_version = d.clips_version;
        let run_version = d.tags[1].version;
        d.set_ranges(1, 2, vec![r(0, 2)]).unwrap();
        let run_version_after_set = d.tags[1].version;
        assert_ne!(run_version, run_version_after_set);
        d.remove_clip(1).unwrap();
        assert_ne!(d.clips_version, clips_version);
        assert_eq!(
            d.tags[0].ranges.keys().copied().collect::<Vec<_>>(),
            vec![1]
        );
        // Run's ranges moved from clip 2 to clip 1: its version changed although it had nothing
        // on the removed clip.
        assert_eq!(d.tags[1].ranges[&1], vec![r(0, 2)]);
        assert_ne!(d.tags[1].version, run_version_after_set);
    }

    #[test]
    fn renaming_a_tag_rewrites_saved_queries_and_undo_restores_them_exactly() {
        let mut d = doc();
        d.add_tag("Run", None).unwrap();
        d.queries = vec![
            SavedQuery {
                name: "q".into(),
                expr: "Walk - Run".into(),
            },
            // Uses the new name already (an unknown tag today): undo must not rename it.
            SavedQuery {
                name: "p".into(),
                expr: "loco:Walk | Walk".into(),
            },
        ];
        let before = d.clone();
        let inverse = Edit::RenameTag {
            index: 0,
            name: "loco:Walk".into(),
        }
        .apply(&mut d)
        .unwrap();
        assert_eq!(d.queries[0].expr, "loco:Walk - Run");
        assert_eq!(d.queries[1].expr, "loco:Walk | loco:Walk");
        assert_eq!(d.rename_tag(1, "run fast").unwrap(), 1);
        assert_eq!(d.queries[0].expr, "loco:Walk - \"run fast\"");
        d.rename_tag(1, "Run").unwrap();
        inverse.apply(&mut d).unwrap();
        assert_eq!(d.queries, before.queries);
        assert_eq!(d.tags[0].name, "Walk");
    }

    /// Relinking a clip to another file changes the clip list's version: the browser groups clips
    /// by their source's folder and keys its rows on it.
    #[test]
    fn relinking_a_clip_gives_the_clip_list_a_new_version() {
        let mut d = doc();
        let before = d.clips_version;
        let inverse = Edit::SetClipSource {
            clip: 1,
            source: Some("day2/b.bvh".into()),
        }
        .apply(&mut d)
        .unwrap();
        assert_ne!(d.clips_version, before);
        let relinked = d.clips_version;
        inverse.apply(&mut d).unwrap();
        assert_eq!(d.clips[1].source, None);
        assert_ne!(d.clips_version, relinked);
    }

    #[test]
    fn changing_a_clips_length_clips_ranges_and_undo_restores_them() {
        let mut d = doc();
        let clips_version = d.clips_version;
        let inverse = Edit::SetClipFrames { clip: 0, frames: 6 }
            .apply(&mut d)
            .unwrap();
        assert_eq!(d.clips[0].frames, 6);
        assert_eq!(d.tags[0].ranges[&0], vec![r(0, 6)]);
        assert_ne!(d.clips_version, clips_version);
        inverse.apply(&mut d).unwrap();
        assert_eq!(strip_versions(&d), strip_versions(&doc()));
    }

    fn note(text: &str) -> Note {
        Note {
            text: text.into(),
            data: BTreeMap::new(),
        }
    }

    fn notes_of(d: &TagDocument) -> Vec<(Anchor, String)> {
        d.tags[0]
            .notes_on(0)
            .iter()
            .map(|(a, n)| (*a, n.text.clone()))
            .collect()
    }

    #[test]
    fn markers_are_canonical_seen_by_queries_and_undone() {
        let mut d = doc();
        let before = strip_versions(&d);
        let v = d.tags[0].version;
        let inverse = Edit::SetMarkers {
            tag: 0,
            clip: 0,
            frames: vec![40, 12, 40, 500],
        }
        .apply(&mut d)
        .unwrap();
        assert_eq!(d.tags[0].markers[&0], vec![12, 40, 99]);
        assert_ne!(d.tags[0].version, v, "queries must see marker edits");
        let q = d.parse_query("Walk").unwrap();
        let idx = crate::core::tags::TagIndex::build(&d);
        for engine in [
            crate::core::tags::Engine::Ranges,
            crate::core::tags::Engine::Masks,
        ] {
            let mut out = crate::core::tags::RangeSet::new();
            crate::core::tags::Evaluator::new()
                .eval(&q, &idx, engine, &mut out)
                .unwrap();
            assert_eq!(
                out.clip_ranges(0),
                &[r(0, 10), r(12, 13), r(40, 41), r(99, 100)]
            );
        }
        inverse.apply(&mut d).unwrap();
        assert_eq!(strip_versions(&d), before);
    }

    #[test]
    fn notes_follow_resize_split_and_merge_and_undo_restores_them() {
        let mut d = doc();
        Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![r(0, 10), r(20, 30)],
        }
        .apply(&mut d)
        .unwrap();
        let mut gravel = note("gravel");
        gravel.data.insert("surface".into(), "gravel".into());
        Edit::SetNotes {
            tag: 0,
            clip: 0,
            notes: vec![
                (Anchor::Range(r(20, 30)), note("second")),
                (Anchor::Range(r(0, 10)), gravel.clone()),
            ],
        }
        .apply(&mut d)
        .unwrap();
        let start = strip_versions(&d);
        // Resize: the note stays on the resized range.
        let undo_resize = Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![r(0, 14), r(20, 30)],
        }
        .apply(&mut d)
        .unwrap();
        assert_eq!(
            notes_of(&d),
            vec![
                (Anchor::Range(r(0, 14)), "gravel".into()),
                (Anchor::Range(r(20, 30)), "second".into())
            ]
        );
        assert_eq!(d.tags[0].note(0, Anchor::Range(r(0, 14))), Some(&gravel));
        undo_resize.apply(&mut d).unwrap();
        assert_eq!(strip_versions(&d), start);
        // Split: both halves keep the note.
        Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![r(0, 4), r(5, 10), r(20, 30)],
        }
        .apply(&mut d)
        .unwrap();
        assert_eq!(notes_of(&d)[0], (Anchor::Range(r(0, 4)), "gravel".into()));
        assert_eq!(notes_of(&d)[1], (Anchor::Range(r(5, 10)), "gravel".into()));
        // Merge: the notes are combined.
        Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![r(0, 30)],
        }
        .apply(&mut d)
        .unwrap();
        assert_eq!(
            notes_of(&d),
            vec![(Anchor::Range(r(0, 30)), "gravel; second".into())]
        );
        // Delete: the note goes with the range; undo brings both back.
        let undo_delete = Edit::SetRanges {
            tag: 0,
            clip: 0,
            ranges: vec![],
        }
        .apply(&mut d)
        .unwrap();
        assert!(notes_of(&d).is_empty());
        undo_delete.apply(&mut d).unwrap();
        assert_eq!(notes_of(&d).len(), 1);
    }

    #[test]
    fn notes_need_their_anchor_and_survive_clip_removal_and_shortening() {
        let mut d = doc();
        let err = Edit::SetNotes {
            tag: 0,
            clip: 0,
            notes: vec![(Anchor::Marker(3), note("x"))],
        }
        .apply(&mut d)
        .unwrap_err();
        assert!(matches!(err, EditError::NoAnchor(Anchor::Marker(3), 0)));
        Edit::Batch(vec![
            Edit::SetMarkers {
                tag: 0,
                clip: 0,
                frames: vec![3, 80],
            },
            Edit::SetNotes {
                tag: 0,
                clip: 0,
                notes: vec![
                    (Anchor::Marker(80), note("late step")),
                    (Anchor::Range(r(0, 10)), note("walk")),
                ],
            },
        ])
        .apply(&mut d)
        .unwrap();
        let start = strip_versions(&d);
        // Shortening the clip drops the marker past the end and its note; undo restores them.
        let undo = Edit::SetClipFrames {
            clip: 0,
            frames: 50,
        }
        .apply(&mut d)
        .unwrap();
        assert_eq!(d.tags[0].markers[&0], vec![3]);
        assert_eq!(notes_of(&d), vec![(Anchor::Range(r(0, 10)), "walk".into())]);
        undo.apply(&mut d).unwrap();
        assert_eq!(strip_versions(&d), start);
        // Removing the clip takes its markers and notes; undo restores them; the clip after it
        // moves down with its own.
        Edit::SetMarkers {
            tag: 0,
            clip: 1,
            frames: vec![7],
        }
        .apply(&mut d)
        .unwrap();
        let with_b = strip_versions(&d);
        let undo = Edit::RemoveClip { index: 0 }.apply(&mut d).unwrap();
        assert_eq!(d.tags[0].markers.get(&0), Some(&vec![7]));
        assert!(d.tags[0].notes.is_empty());
        undo.apply(&mut d).unwrap();
        assert_eq!(strip_versions(&d), with_b);
    }

    #[test]
    fn note_payloads_parse_and_combine() {
        let data = Note::parse_data("surface=gravel; speed = fast\nside=left").unwrap();
        assert_eq!(data["speed"], "fast");
        assert_eq!(data.len(), 3);
        assert!(Note::parse_data("a=1;a=2").unwrap_err().contains("twice"));
        assert!(Note::parse_data("=1").unwrap_err().contains("no key"));
        assert!(Note::parse_data("oops").unwrap_err().contains("key=value"));
        let a = Note {
            text: "a".into(),
            data: Note::parse_data("k=1").unwrap(),
        };
        let b = Note {
            text: "b".into(),
            data: Note::parse_data("k=2;j=3").unwrap(),
        };
        let c = Note::combine([&a, &b, &a]);
        assert_eq!(c.text, "a; b");
        // Both values of `k` are kept (the first note's first), each once.
        assert_eq!(c.data["k"], "1; 2");
        assert_eq!(c.data_text(), "j=3;k=1\\; 2");
        assert_eq!(Note::parse_data(&c.data_text()).unwrap(), c.data);
        // A text already combined adds only its new parts, in either order.
        assert_eq!(Note::combine([&b, &c]).text, "b; a");
        assert_eq!(Note::combine([&c, &b]).text, "a; b");
        // White space at the ends of a key or value (a payload from a JSON file) is escaped, so
        // that it reads back; inside, it is plain. Typed white space around pairs is trimmed.
        let spaced = Note {
            text: String::new(),
            data: [
                (" k ".to_owned(), " gravel ".to_owned()),
                ("blank".to_owned(), "  ".to_owned()),
                ("tab".to_owned(), "a b\t".to_owned()),
            ]
            .into(),
        };
        let text = spaced.data_text();
        assert_eq!(text, "\\ k\\ =\\ gravel\\ ;blank=\\ \\ ;tab=a b\\\t");
        assert_eq!(Note::parse_data(&text).unwrap(), spaced.data);
        assert_eq!(
            Note::parse_data(" a = b ; c=\\ d").unwrap(),
            [
                ("a".to_owned(), "b".to_owned()),
                ("c".to_owned(), " d".to_owned())
            ]
            .into()
        );
        // Another escape keeps its backslash, as before.
        assert_eq!(Note::parse_data("p=C:\\x").unwrap()["p"], "C:\\x");
    }

    #[test]
    fn autotag_settings_are_one_undoable_edit_and_invalid_ones_are_refused() {
        let mut d = doc();
        let mut settings = AutotagSettings::default();
        settings.params.turning.enter_deg_s = 25.0;
        let inverse = Edit::SetAutotag(Some(Box::new(settings.clone())))
            .apply(&mut d)
            .unwrap();
        assert_eq!(d.autotag.as_ref(), Some(&settings));
        inverse.apply(&mut d).unwrap();
        assert_eq!(d.autotag, None);
        settings.params.turning.leave_deg_s = 99.0;
        let e = Edit::SetAutotag(Some(Box::new(settings)))
            .apply(&mut d)
            .unwrap_err();
        assert!(
            matches!(&e, EditError::InvalidAutotag(m) if m.contains("params.turning.leave_deg_s")),
            "{e}"
        );
        assert_eq!(d.autotag, None);
    }
}
