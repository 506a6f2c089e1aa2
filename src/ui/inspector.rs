//! The inspector: the selected range or marker, frame-exact. Its tag and clip, start and stop (in
//! frames, with seconds), length, and its note and key/value payload, each editable by typing:
//! Enter (or leaving the fields, by a click elsewhere) applies every field as one undo step, Esc
//! puts the fields back, and input that cannot be applied is explained under the fields instead.
//!
//! [`InspectorState::apply_edit`] (no egui) turns the typed fields into the edit; the panel only
//! draws and queues it.

use egui::{Key, Ui};

use crate::core::doc::{Edit, canonicalize, canonicalize_markers, reanchored};
use crate::core::tags::{Anchor, ClipId, Note, Range, TagDocument};
use crate::ui::command::{AppCommand, MarkerSel, Selected};

/// What the inspector shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subject {
    pub tag: usize,
    pub clip: ClipId,
    pub anchor: Anchor,
}

/// The typed fields, while the inspector shows one range or marker.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InspectorState {
    /// The range or marker the fields were filled from.
    pub subject: Option<Subject>,
    pub start: String,
    pub stop: String,
    pub note: String,
    pub data: String,
    /// Why the fields cannot be applied, shown under them.
    pub error: Option<String>,
    /// The subject's note in the document when the fields were filled: when the document's
    /// changes under the fields (undo, redo, another edit), they are filled again, so that Enter
    /// never puts back what an undo took away.
    pub filled_note: Option<Note>,
    /// The keyboard is in one of the fields (as of the inspector's last frame).
    pub typing: bool,
}

impl InspectorState {
    /// Shows `subject`: refills the fields when it changed since the last frame, when its note
    /// changed in the document since they were filled, or when `force`.
    pub fn follow(&mut self, doc: &TagDocument, subject: Option<Subject>, force: bool) {
        let note_now = |s: Subject| doc.tags.get(s.tag).and_then(|t| t.note(s.clip, s.anchor));
        let same_note = || subject.and_then(note_now) == self.filled_note.as_ref();
        if self.subject == subject && !force && same_note() {
            return;
        }
        *self = InspectorState {
            subject,
            ..InspectorState::default()
        };
        let Some(s) = subject else { return };
        let Some(tag) = doc.tags.get(s.tag) else {
            return;
        };
        let r = s.anchor.range();
        self.start = r.start.to_string();
        self.stop = r.stop.to_string();
        if let Some(n) = tag.note(s.clip, s.anchor) {
            self.note = n.text.clone();
            self.data = n.data_text();
            self.filled_note = Some(n.clone());
        }
    }

    /// The edit the typed fields ask for (`Ok(None)`: nothing changes), with the range or marker
    /// it leaves selected; or why it cannot be applied.
    pub fn apply_edit(&self, doc: &TagDocument) -> Result<Option<(Edit, Anchor)>, String> {
        let s = self.subject.ok_or("nothing selected")?;
        let tag = doc.tags.get(s.tag).ok_or("the tag is gone")?;
        let frames = doc
            .clips
            .get(s.clip as usize)
            .ok_or("the clip is gone")?
            .frames;
        let frame = |text: &str, what: &str| -> Result<u32, String> {
            text.trim()
                .parse::<u32>()
                .map_err(|_| format!("{what}: `{}` is not a frame number", text.trim()))
        };
        let new_anchor = match s.anchor {
            Anchor::Range(_) => {
                let start = frame(&self.start, "Start")?;
                let stop = frame(&self.stop, "Stop")?;
                if start >= stop {
                    return Err(format!(
                        "Start ({start}) must be before stop ({stop}); stop is exclusive: [{start}, {}) is one frame",
                        u64::from(start) + 1
                    ));
                }
                if stop > frames {
                    return Err(format!(
                        "Stop ({stop}) is past the end of the clip: at most {frames} (the clip has frames 0 to {})",
                        frames.saturating_sub(1)
                    ));
                }
                Anchor::Range(Range::new(start, stop))
            }
            Anchor::Marker(_) => {
                let f = frame(&self.start, "Frame")?;
                if f >= frames {
                    return Err(format!(
                        "Frame {f} is past the end of the clip (frames 0 to {})",
                        frames.saturating_sub(1)
                    ));
                }
                Anchor::Marker(f)
            }
        };
        let note = Note {
            text: self.note.trim().to_owned(),
            data: Note::parse_data(&self.data).map_err(|e| format!("Data: {e}"))?,
        };
        let old_note = tag.note(s.clip, s.anchor).cloned().unwrap_or_default();
        if new_anchor == s.anchor && note == old_note {
            return Ok(None);
        }
        let mut ranges = tag.ranges_on(s.clip).to_vec();
        let mut markers = tag.markers_on(s.clip).to_vec();
        match (s.anchor, new_anchor) {
            (Anchor::Range(old), Anchor::Range(new)) => {
                ranges.retain(|r| *r != old);
                ranges.push(new);
                canonicalize(&mut ranges, frames);
            }
            (Anchor::Marker(old), Anchor::Marker(new)) => {
                markers.retain(|f| *f != old);
                markers.push(new);
                canonicalize_markers(&mut markers, frames);
            }
            _ => return Err("a range cannot become a marker".to_owned()),
        }
        // The edited item's note goes with it (replacing what it had); the others follow their
        // ranges as usual.
        let mut notes: Vec<(Anchor, Note)> = tag
            .notes_on(s.clip)
            .iter()
            .filter(|(a, _)| *a != s.anchor)
            .cloned()
            .collect();
        if !note.is_empty() {
            notes.insert(0, (new_anchor, note));
        }
        let notes = reanchored(&notes, &ranges, &markers);
        // Where the edited item ended up (a range may merge with a neighbour).
        let landed = match new_anchor {
            Anchor::Range(n) => Anchor::Range(
                ranges
                    .iter()
                    .copied()
                    .find(|r| r.start <= n.start && n.stop <= r.stop)
                    .unwrap_or(n),
            ),
            m => m,
        };
        let mut edits = Vec::new();
        if ranges != tag.ranges_on(s.clip) {
            edits.push(Edit::SetRanges {
                tag: s.tag,
                clip: s.clip,
                ranges,
            });
        }
        if markers != tag.markers_on(s.clip) {
            edits.push(Edit::SetMarkers {
                tag: s.tag,
                clip: s.clip,
                frames: markers,
            });
        }
        edits.push(Edit::SetNotes {
            tag: s.tag,
            clip: s.clip,
            notes,
        });
        Ok(Some((Edit::Batch(edits), landed)))
    }
}

/// The selection as the inspector sees it: one range or one marker, else `None`.
pub fn subject_of(clip: ClipId, ranges: &[Selected], markers: &[MarkerSel]) -> Option<Subject> {
    match (ranges, markers) {
        ([(tag, r)], []) => Some(Subject {
            tag: *tag,
            clip,
            anchor: Anchor::Range(*r),
        }),
        ([], [(tag, f)]) => Some(Subject {
            tag: *tag,
            clip,
            anchor: Anchor::Marker(*f),
        }),
        _ => None,
    }
}

/// What the inspector reads.
pub struct InspectorInput<'a> {
    pub doc: &'a TagDocument,
    pub clip: ClipId,
    pub selection: &'a [Selected],
    pub marker_selection: &'a [MarkerSel],
}

/// Draws the inspector; queues the edit when Enter is pressed in a field.
pub fn inspector_ui(
    ui: &mut Ui,
    input: &InspectorInput<'_>,
    state: &mut InspectorState,
    out: &mut Vec<AppCommand>,
) {
    let doc = input.doc;
    // The panel's width as laid out, before any row: the note and data fields take it (a field
    // of unbounded width took a width a wide row had pushed past the panel's edge).
    let panel_width = ui.available_width();
    ui.heading("Selection");
    let subject = subject_of(input.clip, input.selection, input.marker_selection);
    state.typing = false;
    state.follow(doc, subject, false);
    let Some(s) = subject else {
        let n = input.selection.len();
        let m = input.marker_selection.len();
        if n + m == 0 {
            ui.weak("Select a range or a marker to see it here and edit it frame by frame.");
        } else {
            let frames: u64 = input
                .selection
                .iter()
                .map(|(_, r)| u64::from(r.len()))
                .sum();
            ui.label(format!(
                "{n} range(s) ({frames} frames) and {m} marker(s) selected"
            ));
            ui.weak("Select one to edit it here.");
        }
        return;
    };
    let (Some(tag), Some(clip)) = (doc.tags.get(s.tag), doc.clips.get(s.clip as usize)) else {
        return;
    };
    let fps = f64::from(clip.fps.max(1e-3));
    let secs = |f: &str| {
        f.trim()
            .parse::<u32>()
            .map_or(String::new(), |f| format!("{:.2} s", f64::from(f) / fps))
    };
    let mut enter = false;
    let mut esc = false;
    // A field left without Enter or Esc (a click elsewhere): applied once the focus is outside
    // the inspector's fields, as Blender and Unreal apply a field on leaving it. Tab to the next
    // field applies nothing yet, so start and stop can be typed together.
    let mut left = false;
    let mut ids: Vec<egui::Id> = Vec::new();
    let mut field = |ui: &mut Ui, label: &str, text: &mut String, hint: &str, width: f32| {
        let l = ui.label(label);
        let r = ui
            .add(
                egui::TextEdit::singleline(text)
                    .hint_text(hint)
                    .desired_width(width),
            )
            .labelled_by(l.id);
        ids.push(r.id);
        if r.lost_focus() {
            let (e, x) = ui.input(|i| (i.key_pressed(Key::Enter), i.key_pressed(Key::Escape)));
            enter |= e;
            esc |= x;
            left |= !e && !x;
        }
        r
    };
    egui::Grid::new("inspector")
        .num_columns(3)
        .spacing([6.0, 4.0])
        .show(ui, |ui| {
            // Names are cut (whole in their tooltips) so that they do not widen the fields'
            // column and push the seconds out of a narrow panel.
            let name = |ui: &mut Ui, text: egui::RichText, full: &str| {
                ui.scope(|ui| {
                    ui.set_max_width(NAME_WIDTH);
                    ui.add(egui::Label::new(text).truncate())
                        .on_hover_text(full);
                });
            };
            ui.label("Tag");
            name(ui, egui::RichText::new(&tag.name).strong(), &tag.name);
            ui.end_row();
            ui.label("Clip");
            name(ui, egui::RichText::new(&clip.name), &clip.name);
            ui.end_row();
            match s.anchor {
                Anchor::Range(_) => {
                    field(ui, "Start frame", &mut state.start, "frame", 56.0)
                        .on_hover_text("First frame of the range");
                    seconds(ui, secs(&state.start));
                    ui.end_row();
                    field(ui, "Stop frame", &mut state.stop, "frame", 56.0)
                        .on_hover_text("One past the last frame (exclusive)");
                    seconds(ui, secs(&state.stop));
                    ui.end_row();
                    ui.label("Length");
                    // Frames under the fields, seconds under the seconds: a long text in the
                    // fields' column would push the seconds out of a narrow panel.
                    match (
                        state.start.trim().parse::<u32>(),
                        state.stop.trim().parse::<u32>(),
                    ) {
                        (Ok(a), Ok(b)) if b > a => {
                            ui.label(format!("{} frames", b - a));
                            seconds(ui, format!("{:.3} s", f64::from(b - a) / fps));
                        }
                        _ => {
                            ui.label("-");
                        }
                    }
                    ui.end_row();
                }
                Anchor::Marker(_) => {
                    field(ui, "Marker frame", &mut state.start, "frame", 56.0)
                        .on_hover_text("The marker's frame");
                    seconds(ui, secs(&state.start));
                    ui.end_row();
                }
            }
        });
    field(ui, "Note", &mut state.note, "e.g. heel strike", panel_width);
    field(
        ui,
        "Data",
        &mut state.data,
        "key=value; key=value",
        panel_width,
    )
    .on_hover_text("A payload for game code: key=value pairs separated by ';'");
    if esc {
        state.follow(doc, subject, true);
    }
    let focus = ui.memory(|m| m.focused());
    state.typing = focus.is_some_and(|f| ids.contains(&f));
    if left && !state.typing {
        enter = true;
    }
    if enter {
        match state.apply_edit(doc) {
            Ok(None) => state.error = None,
            Ok(Some((edit, landed))) => {
                state.error = None;
                let label = match s.anchor {
                    Anchor::Range(_) => "edit range",
                    Anchor::Marker(_) => "edit marker",
                };
                out.push(AppCommand::Edit {
                    edit,
                    label: label.to_owned(),
                    select: None,
                });
                out.push(match landed {
                    Anchor::Range(r) => AppCommand::Select(vec![(s.tag, r)]),
                    Anchor::Marker(f) => AppCommand::SelectItems {
                        ranges: Vec::new(),
                        markers: vec![(s.tag, f)],
                    },
                });
                // Refill from the document next frame, even if the subject is the same.
                state.subject = None;
            }
            Err(e) => state.error = Some(e),
        }
    }
    if let Some(e) = &state.error {
        let color = ui.visuals().error_fg_color;
        ui.add(egui::Label::new(egui::RichText::new(e).color(color)).wrap());
    } else {
        ui.weak("Enter applies, Esc restores.");
    }
}

/// Widest a tag or clip name is shown in the inspector's grid, in points.
const NAME_WIDTH: f32 = 110.0;

/// A frame's time beside its field, never broken inside ("1.30 s", not "1" over ".30 s" in a
/// narrow panel).
fn seconds(ui: &mut Ui, text: String) {
    ui.add(egui::Label::new(egui::RichText::new(text).weak()).extend());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::tags::{ClipInfo, Tag};

    fn doc() -> TagDocument {
        let mut d = TagDocument::default();
        d.add_clip(ClipInfo {
            name: "c".into(),
            frames: 100,
            fps: 25.0,
            source: None,
            unit_cm: None,
        })
        .unwrap();
        d.add_tag("Walk", None).unwrap();
        Edit::Batch(vec![
            Edit::SetRanges {
                tag: 0,
                clip: 0,
                ranges: vec![Range::new(10, 20), Range::new(40, 50)],
            },
            Edit::SetMarkers {
                tag: 0,
                clip: 0,
                frames: vec![30],
            },
        ])
        .apply(&mut d)
        .unwrap();
        d
    }

    fn inspect(d: &TagDocument, anchor: Anchor) -> InspectorState {
        let mut s = InspectorState::default();
        s.follow(
            d,
            Some(Subject {
                tag: 0,
                clip: 0,
                anchor,
            }),
            false,
        );
        s
    }

    #[test]
    fn typed_start_stop_and_note_are_one_edit() {
        let mut d = doc();
        let mut s = inspect(&d, Anchor::Range(Range::new(10, 20)));
        assert_eq!((s.start.as_str(), s.stop.as_str()), ("10", "20"));
        s.start = "12".into();
        s.stop = "25".into();
        s.note = "on gravel".into();
        s.data = "surface=gravel".into();
        let (edit, landed) = s.apply_edit(&d).unwrap().unwrap();
        assert_eq!(landed, Anchor::Range(Range::new(12, 25)));
        let undo = edit.apply(&mut d).unwrap();
        let t: &Tag = &d.tags[0];
        assert_eq!(t.ranges[&0], vec![Range::new(12, 25), Range::new(40, 50)]);
        let n = t.note(0, landed).unwrap();
        assert_eq!(
            (n.text.as_str(), n.data["surface"].as_str()),
            ("on gravel", "gravel")
        );
        undo.apply(&mut d).unwrap();
        assert_eq!(d.tags[0].ranges[&0][0], Range::new(10, 20));
        assert!(d.tags[0].notes.is_empty());
    }

    #[test]
    fn bad_input_is_explained_and_changes_nothing() {
        let d = doc();
        let mut s = inspect(&d, Anchor::Range(Range::new(10, 20)));
        s.start = "30".into();
        assert!(
            s.apply_edit(&d)
                .unwrap_err()
                .contains("must be before stop")
        );
        // The largest frame number: explained, not an overflow.
        s.start = u32::MAX.to_string();
        s.stop = "5".into();
        assert!(
            s.apply_edit(&d)
                .unwrap_err()
                .contains(&format!("[{}, 4294967296)", u32::MAX))
        );
        s.stop = "20".into();
        s.start = "x".into();
        assert!(s.apply_edit(&d).unwrap_err().contains("not a frame number"));
        s.start = "10".into();
        s.stop = "101".into();
        assert!(s.apply_edit(&d).unwrap_err().contains("at most 100"));
        s.stop = "20".into();
        s.data = "oops".into();
        assert!(s.apply_edit(&d).unwrap_err().contains("Data"));
        s.data.clear();
        assert_eq!(s.apply_edit(&d).unwrap(), None, "unchanged fields: no edit");
    }

    #[test]
    fn a_marker_moves_with_its_note() {
        let mut d = doc();
        let mut s = inspect(&d, Anchor::Marker(30));
        s.note = "sync".into();
        let (edit, _) = s.apply_edit(&d).unwrap().unwrap();
        edit.apply(&mut d).unwrap();
        let mut s = inspect(&d, Anchor::Marker(30));
        assert_eq!(s.note, "sync");
        s.start = "33".into();
        let (edit, landed) = s.apply_edit(&d).unwrap().unwrap();
        edit.apply(&mut d).unwrap();
        assert_eq!(landed, Anchor::Marker(33));
        assert_eq!(d.tags[0].markers[&0], vec![33]);
        assert_eq!(d.tags[0].note(0, landed).unwrap().text, "sync");
    }

    /// Undo under the fields: the note the undo took away is not in them any more, so Enter after
    /// another change does not put it back.
    #[test]
    fn the_fields_follow_an_undo_of_their_note() {
        let mut d = doc();
        let subject = Subject {
            tag: 0,
            clip: 0,
            anchor: Anchor::Range(Range::new(10, 20)),
        };
        let mut s = inspect(&d, subject.anchor);
        s.note = "on gravel".into();
        let (edit, _) = s.apply_edit(&d).unwrap().unwrap();
        let undo = edit.apply(&mut d).unwrap();
        s.follow(&d, Some(subject), false);
        assert_eq!(s.note, "on gravel");
        undo.apply(&mut d).unwrap();
        s.follow(&d, Some(subject), false);
        assert_eq!(s.note, "", "refilled from the document");
        s.stop = "25".into();
        let (edit, landed) = s.apply_edit(&d).unwrap().unwrap();
        edit.apply(&mut d).unwrap();
        assert!(
            d.tags[0].note(0, landed).is_none(),
            "the undone note stays undone"
        );
        // Typing alone (the document unchanged) keeps the fields.
        let mut s = inspect(&d, landed);
        s.note = "typing".into();
        s.follow(
            &d,
            Some(Subject {
                anchor: landed,
                ..subject
            }),
            false,
        );
        assert_eq!(s.note, "typing");
    }
}
