//! Range and tag editing commands: selection, copy/paste, delete, split, mark in/out, new,
//! rename, reorder and delete tags. Each builds an [`Edit`] (with the timeline's model) and applies
//! it through [`TaglaneApp::apply_edit`].

use crate::core::doc::Edit;
use crate::core::tags::Tag;
use crate::ui::app::{Dialog, Level, TaglaneApp};
use crate::ui::command::AppCommand;
use crate::ui::timeline::model::{self, Clipboard};

/// How mark in's status line begins (a search that takes the mark clears it).
pub(crate) const MARK_IN_STATUS: &str = "mark in at frame ";

impl TaglaneApp {
    /// Applies an editing command; returns it back when it is not one.
    pub(crate) fn editing_command(&mut self, cmd: AppCommand) -> Option<AppCommand> {
        match cmd {
            AppCommand::Select(s) => {
                self.selection = s;
                self.marker_selection.clear();
            }
            AppCommand::SelectItems { ranges, markers } => {
                self.selection = ranges;
                // Ranges asked for that an edit merged: the merged ones.
                self.select_as_stored();
                self.marker_selection = markers;
            }
            AppCommand::ToggleSelected(item) => {
                if let Some(i) = self.selection.iter().position(|s| *s == item) {
                    self.selection.remove(i);
                } else {
                    self.selection.push(item);
                }
            }
            AppCommand::ToggleMarkerSelected(item) => {
                if let Some(i) = self.marker_selection.iter().position(|s| *s == item) {
                    self.marker_selection.remove(i);
                } else {
                    self.marker_selection.push(item);
                }
            }
            AppCommand::SelectAll => {
                let clip = self.current_clip;
                let tags = &self.project.doc.tags;
                self.selection = tags
                    .iter()
                    .enumerate()
                    .flat_map(|(t, tag)| tag.ranges_on(clip).iter().map(move |r| (t, *r)))
                    .collect();
                self.marker_selection = tags
                    .iter()
                    .enumerate()
                    .flat_map(|(t, tag)| tag.markers_on(clip).iter().map(move |f| (t, *f)))
                    .collect();
            }
            AppCommand::AddMarker(at) => {
                let at = at.or_else(|| {
                    self.active_tag
                        .map(|t| (t, self.playback.playhead.floor() as u32))
                });
                let Some((tag, frame)) = at else {
                    self.message(Level::Warning, "pick a lane first (click its name)");
                    return None;
                };
                match model::add_marker(&self.project.doc, self.current_clip, tag, frame) {
                    Some(edit) => {
                        if self.apply_edit(edit, "add marker") {
                            self.selection.clear();
                            self.marker_selection = vec![(tag, frame)];
                        }
                    }
                    None => self.message(
                        Level::Info,
                        format!("a marker is already at frame {frame} on that lane"),
                    ),
                }
            }
            AppCommand::SetActiveTag(t) => {
                // A lane that is gone (a click on the last lane in the frame whose Ctrl+Z took
                // that tag away) picks none: a later O or paste indexed past the tags.
                let t = t.filter(|&t| t < self.project.doc.tags.len());
                // A mark made on one lane is not carried to another; one made with no lane is
                // kept for the lane picked now.
                if self.active_tag.is_some() && t != self.active_tag {
                    self.playback.mark_in = None;
                }
                self.active_tag = t;
                // Known by name at once: a command queued behind this one that moves tags
                // keeps this lane active, not the one before it.
                self.active_name = t
                    .and_then(|t| self.project.doc.tags.get(t))
                    .map(|t| t.name.clone());
            }
            AppCommand::Copy => {
                if self.selection.is_empty() && self.marker_selection.is_empty() {
                    self.message(Level::Info, "select ranges or markers to copy");
                } else {
                    self.clipboard = Clipboard::copy(
                        &self.project.doc,
                        self.current_clip,
                        &self.selection,
                        &self.marker_selection,
                    );
                    // Also on the system clipboard as text: a paste elsewhere gets a table, and
                    // Ctrl+V here works (egui makes Ctrl+V a paste only when the system clipboard
                    // holds text). A copy of nothing leaves it alone.
                    let clip = self.project.doc.clips.get(self.current_clip as usize);
                    self.system_copy =
                        Some(self.clipboard.as_text(clip.map_or("", |c| c.name.as_str())));
                    self.message(
                        Level::Info,
                        format!(
                            "copied {} range(s) and marker(s)",
                            self.clipboard.items.len()
                        ),
                    );
                }
            }
            AppCommand::Paste { into_active } => {
                if into_active && self.active_tag.is_none() {
                    // Not a paste by tag name instead (what Ctrl+V does): the menu's item is
                    // off without a lane, and so is its key.
                    self.message(
                        Level::Warning,
                        "pick a lane to paste into (click its name), then press Ctrl+Shift+V",
                    );
                    return None;
                }
                let into = if into_active { self.active_tag } else { None };
                let at = self.playback.playhead.floor() as u32;
                let pasted = self
                    .clipboard
                    .paste(&self.project.doc, self.current_clip, at, into);
                if let Some(edit) = pasted.edit {
                    self.apply_edit(edit, "paste ranges");
                }
                let mut problems = Vec::new();
                if pasted.outside > 0 {
                    problems.push(format!(
                        "{} range(s) or marker(s) past the clip's end left out",
                        pasted.outside
                    ));
                }
                if pasted.cut > 0 {
                    problems.push(format!("{} range(s) cut at the clip's end", pasted.cut));
                }
                if !pasted.missing.is_empty() {
                    problems.push(format!(
                        "not pasted: this project has no tag named {} (use Ctrl+Shift+V to paste into the active lane)",
                        pasted.missing.join(", ")
                    ));
                }
                if !problems.is_empty() {
                    self.message(Level::Warning, format!("paste: {}", problems.join("; ")));
                }
            }
            AppCommand::DeleteSelection => {
                if let Some(edit) = model::delete_selected(
                    &self.project.doc,
                    self.current_clip,
                    &self.selection,
                    &self.marker_selection,
                ) {
                    let label = if self.selection.is_empty() {
                        "delete markers"
                    } else {
                        "delete ranges"
                    };
                    self.apply_edit(edit, label);
                    self.selection.clear();
                    self.marker_selection.clear();
                }
            }
            AppCommand::SplitAtPlayhead => {
                let p = self.playback.playhead.floor() as u32;
                match model::split_at(
                    &self.project.doc,
                    self.current_clip,
                    p,
                    &self.selection,
                    self.active_tag,
                ) {
                    Some(edit) => {
                        self.apply_edit(edit, "split range");
                        self.selection.clear();
                    }
                    None => self.message(
                        Level::Info,
                        "no range of two frames or more under the playhead to split (select one, \
                         or pick its lane)",
                    ),
                }
            }
            AppCommand::MarkIn => {
                // No lane needed: mark in to the playhead is also the query of "Find similar"
                // (a library just imported has no tags yet); O then marks it on the lane picked.
                let f = self.playback.playhead.floor() as u32;
                self.playback.mark_in = Some(f);
                self.playback.wrapped = None;
                let then = if self.active_tag.is_some() {
                    "press O to mark out"
                } else {
                    "move the playhead, then Ctrl+F to find similar moments, or pick a lane and \
                     press O to mark a range on it"
                };
                self.message(Level::Info, format!("{MARK_IN_STATUS}{f}; {then}"));
            }
            AppCommand::MarkOut => {
                let Some(start) = self.playback.mark_in else {
                    self.message(Level::Warning, "mark in first (I)");
                    return None;
                };
                let Some(tag) = self.active_tag else {
                    self.message(
                        Level::Warning,
                        "pick a lane to mark the range on (click its name), then press O",
                    );
                    return None;
                };
                let f = self.playback.playhead.floor() as u32;
                let Some(active) = self.project.doc.tags.get(tag) else {
                    self.active_tag = None;
                    return None;
                };
                let mut list = active
                    .ranges
                    .get(&self.current_clip)
                    .map(<[_]>::to_vec)
                    .unwrap_or_default();
                use crate::core::tags::Range;
                match self.playback.wrapped {
                    // Played from mark in to the end, wrapped, and on to here: the frames that
                    // played, in two ranges (not the ones between out and in, which did not).
                    Some((lo, end)) if f < start && start < end && lo <= f => {
                        list.push(Range::new(start, end));
                        list.push(Range::new(lo, f + 1));
                    }
                    _ => list.push(Range::new(start.min(f), start.max(f) + 1)),
                }
                crate::core::doc::canonicalize(&mut list, self.frames());
                let tag_data = &self.project.doc.tags[tag];
                if list.as_slice() == tag_data.ranges_on(self.current_clip) {
                    // Marked inside what the lane already holds: no change, no undo step.
                    let said = format!("{} already covers the marked frames", tag_data.name);
                    self.message(Level::Info, said);
                } else {
                    let edit = Edit::SetRanges {
                        tag,
                        clip: self.current_clip,
                        ranges: list,
                    };
                    self.apply_edit(edit, "mark range");
                }
                self.playback.mark_in = None;
                self.playback.wrapped = None;
            }
            AppCommand::NewTag => {
                let name = self.project.doc.unique_tag_name("NewTag");
                let index = self
                    .active_tag
                    .map_or(self.project.doc.tags.len(), |t| t + 1)
                    .min(self.project.doc.tags.len());
                let edit = Edit::InsertTag {
                    index,
                    tag: Tag {
                        color: Some(self.project.doc.new_tag_color()),
                        ..Tag::new(name.clone())
                    },
                };
                if self.apply_edit(edit, "new tag") {
                    self.active_tag = Some(index);
                    self.selection.clear();
                    self.dialog = Some(Dialog::Rename {
                        index,
                        name: String::new(),
                        new: true,
                    });
                }
            }
            AppCommand::StartRename(index) => {
                if let Some(t) = self.project.doc.tags.get(index) {
                    self.dialog = Some(Dialog::Rename {
                        index,
                        name: t.name.clone(),
                        new: false,
                    });
                }
            }
            AppCommand::RenameTag { index, name, new } => {
                let name = name.trim().to_owned();
                // No such tag: the command is handled (nothing to do), hence `None`.
                let old = self.project.doc.tags.get(index).map(|t| t.name.clone())?;
                if name == old {
                    return None;
                }
                let queries_before = self.project.doc.queries.clone();
                match self.project.apply(
                    Edit::RenameTag {
                        index,
                        name: name.clone(),
                    },
                    if new {
                        format!("name new tag {name}")
                    } else {
                        format!("rename {old} to {name}")
                    },
                ) {
                    Ok(()) => {
                        self.view_follows_rename(&old, &name);
                        let q = if self.project.doc.queries != queries_before {
                            " (saved queries updated)"
                        } else {
                            ""
                        };
                        let said = if new {
                            format!("new tag {name}")
                        } else {
                            format!("renamed {old} to {name}{q}")
                        };
                        self.message(Level::Info, said);
                    }
                    Err(e) => {
                        self.message(Level::Error, format!("cannot rename: {e}"));
                        self.dialog = Some(Dialog::Rename { index, name, new });
                    }
                }
            }
            AppCommand::MoveTag { index, up } => {
                let to = if up {
                    index.checked_sub(1)
                } else {
                    Some(index + 1)
                };
                if let Some(to) = to.filter(|&t| t < self.project.doc.tags.len()) {
                    // The active tag follows by name (`after_structure_change`).
                    self.apply_edit(Edit::MoveTag { from: index, to }, "reorder tags");
                }
            }
            AppCommand::AskDeleteTag(index) => self.dialog = Some(Dialog::ConfirmDeleteTag(index)),
            AppCommand::DeleteTag(index) => {
                let name = self
                    .project
                    .doc
                    .tags
                    .get(index)
                    .map(|t| t.name.clone())
                    .unwrap_or_default();
                if self.active_tag == Some(index) && !self.deleted_active.contains(&name) {
                    self.deleted_active.push(name.clone());
                }
                self.apply_edit(Edit::RemoveTag { index }, &format!("delete tag {name}"));
                self.after_structure_change();
            }
            other => return Some(other),
        }
        None
    }
}
