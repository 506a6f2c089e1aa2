//! [`TaglaneApp::apply`]: the one place where commands change the app's state. It hands each
//! command to the room that owns it (playback in [`crate::ui::transport`], files in
//! [`crate::ui::files`], range and tag editing in [`crate::ui::editing`]) and handles the rest:
//! the history, the view, the query and compression panels' requests. Every document edit goes
//! through [`TaglaneApp::apply_edit`] (one undo step and one status message).

use crate::core::doc::Edit;
use crate::ui::app::{Level, TaglaneApp};
use crate::ui::command::AppCommand;
use crate::ui::dialogs::{Dialog, ReplaceWhat};
use crate::ui::file_dialog::{PathKind, PathRequest};
use crate::ui::query::CutStartError;

impl TaglaneApp {
    /// Applies one command. Every change of state goes through here.
    pub fn apply(&mut self, cmd: AppCommand, ctx: &egui::Context) {
        let Some(cmd) = self.playback_command(cmd) else {
            return;
        };
        let Some(cmd) = self.editing_command(cmd) else {
            // What a copy put on the system clipboard (see `AppCommand::Copy`).
            if let Some(text) = self.system_copy.take() {
                ctx.copy_text(text);
            }
            return;
        };
        let Some(cmd) = self.library_command(cmd, ctx) else {
            return;
        };
        let Some(cmd) = self.file_command(cmd, ctx) else {
            return;
        };
        match cmd {
            AppCommand::Edit {
                edit,
                label,
                select,
            } => {
                if self.apply_edit(edit, &label) {
                    self.selection = select.unwrap_or_default();
                    self.select_as_stored();
                    self.marker_selection.clear();
                }
            }
            AppCommand::EditKeyed { edit, label, key } => {
                match self.project.apply_keyed(edit, &label, key) {
                    Ok(()) => self.after_structure_change(),
                    Err(e) => self.message(Level::Error, format!("{label}: {e}")),
                }
            }
            AppCommand::Undo => {
                let lanes = self.lanes_before();
                let names = self.tag_names();
                let clip = self.project.history.undo_clip();
                // An edit of one clip's ranges: what it brings back is selected.
                let ranges = clip.map(|c| self.ranges_before(c));
                match self.project.history.undo(&mut self.project.doc) {
                    Some(l) => {
                        let on = self.show_clip_of_undo(clip);
                        self.message(Level::Info, format!("undid {l}{on}"));
                    }
                    None => match self.project.history.take_failure() {
                        Some(why) => self.message(Level::Error, history_failed(&why)),
                        None => self.message(Level::Info, "nothing to undo"),
                    },
                }
                self.after_structure_change();
                self.follow_lanes(lanes);
                self.follow_renames(&names);
                if let Some(r) = ranges {
                    self.select_restored(r);
                }
            }
            AppCommand::Redo => {
                let lanes = self.lanes_before();
                let names = self.tag_names();
                let clip = self.project.history.redo_clip();
                // An edit of one clip's ranges: what it brings back is selected.
                let ranges = clip.map(|c| self.ranges_before(c));
                match self.project.history.redo(&mut self.project.doc) {
                    Some(l) => {
                        let on = self.show_clip_of_undo(clip);
                        self.message(Level::Info, format!("redid {l}{on}"));
                    }
                    None => match self.project.history.take_failure() {
                        Some(why) => self.message(Level::Error, history_failed(&why)),
                        None => self.message(Level::Info, "nothing to redo"),
                    },
                }
                self.after_structure_change();
                self.follow_lanes(lanes);
                self.follow_renames(&names);
                if let Some(r) = ranges {
                    self.select_restored(r);
                }
            }
            AppCommand::SelectClip(c) => {
                if (c as usize) < self.project.doc.clips.len() && c != self.current_clip {
                    self.show_clip(c);
                }
            }
            AppCommand::ToggleHidden(n) => toggle(&mut self.timeline.hidden, n),
            AppCommand::ToggleSolo(n) => toggle(&mut self.timeline.solo, n),
            AppCommand::ToggleGroup(n) => toggle(&mut self.timeline.collapsed, n),
            AppCommand::FitView => self.timeline.fit_pending = true,
            AppCommand::Zoom(f) => {
                let centre = self.playback.playhead;
                self.timeline.zoom_around(f64::from(f), centre);
            }
            AppCommand::SetDarkMode(d) => self.prefs.dark = d,
            AppCommand::SetAnimBudget(mib) => {
                self.prefs.anim_budget_mib = mib.clamp(64, 65_536);
                self.side.anim.set_budget(self.prefs.anim_budget_mib << 20);
            }
            AppCommand::ShowHelp(s) => self.show_help = s,
            AppCommand::ExtraRangeClicked { lane, range }
                if lane.starts_with(crate::ui::similar::LANE_PREFIX) =>
            {
                let clip = self.current_clip;
                let c = crate::ui::command::SimilarCommand::SelectAt {
                    clip,
                    frame: range.start,
                };
                self.apply(AppCommand::Similar(c), ctx);
            }
            AppCommand::Similar(c) => {
                if c.shows_panel() {
                    self.bottom_tab = crate::ui::bottom_panel::BottomTab::Similar;
                }
                let view = crate::ui::similar::model::AppView {
                    clip: self.current_clip,
                    selection: &self.selection,
                    mark_in: self.playback.mark_in,
                    playhead: self.playback.playhead,
                    active_tag: self.active_tag,
                };
                let find = matches!(c, crate::ui::command::SimilarCommand::Find);
                let follow = self.similar.command(c, &self.project, &view, Some(ctx));
                // The mark in's instruction ("then Ctrl+F ...") is done with once it searched.
                if find
                    && self.similar.is_searching()
                    && self
                        .status
                        .as_ref()
                        .is_some_and(|s| s.1.starts_with(crate::ui::editing::MARK_IN_STATUS))
                {
                    self.status = None;
                }
                for f in follow {
                    self.apply(f, ctx);
                }
            }
            AppCommand::SetLoopRange(r) => {
                // Only frames of the clip: a match of results older than the clip (it was
                // shortened, relinked) asked for a range past its end, or an empty one.
                let frames = self.frames();
                self.playback.loop_range = r
                    .map(|r| crate::core::tags::Range::new(r.start, r.stop.min(frames)))
                    .filter(|r| r.start < r.stop);
            }
            AppCommand::ExtraRangeClicked { range, .. } => {
                self.playback.playing = false;
                self.playback.playhead = f64::from(range.start);
            }
            AppCommand::QueryJump { clip, range } => {
                self.apply(AppCommand::SelectClip(clip), ctx);
                self.playback.playing = false;
                self.playback.playhead = f64::from(range.start);
                self.timeline.reveal = Some(range);
                self.query.selected_result = Some((clip, range));
            }
            AppCommand::QueryExport { kind, path: None } => {
                let (name, filter, ext) = match kind {
                    crate::ui::query::QueryExportKind::Json => ("query.json", "JSON", "json"),
                    crate::ui::query::QueryExportKind::Csv => ("query.csv", "CSV", "csv"),
                };
                self.ask_path(
                    PathRequest::new(
                        "Export query result",
                        PathKind::Save,
                        AppCommand::QueryExport { kind, path: None },
                    )
                    .filter(filter, &[ext])
                    .file_name(name),
                );
            }
            AppCommand::QueryExport {
                kind,
                path: Some(p),
            } => match self.query.export(&self.project.doc, kind, &p) {
                Ok(m) => self.message(Level::Info, m),
                Err(e) => self.message(Level::Error, e),
            },
            AppCommand::QueryCut { dir: None, replace } => self.ask_path(PathRequest::new(
                "Folder for the cut BVH files",
                PathKind::Folder,
                AppCommand::QueryCut { dir: None, replace },
            )),
            AppCommand::QueryCut {
                dir: Some(d),
                replace,
            } => {
                let base = self.project.base_dir();
                let demo = self.project.is_demo;
                let doc = &self.project.doc;
                match self
                    .query
                    .start_cut(doc, d.clone(), base, demo, replace, Some(ctx))
                {
                    Ok(()) => self.message(Level::Info, "cutting query result into BVH files"),
                    Err(CutStartError::Exists { count }) => {
                        self.dialog = Some(Dialog::ReplaceFiles {
                            what: ReplaceWhat::Cut,
                            dir: d,
                            count,
                        });
                    }
                    Err(CutStartError::Other(e)) => self.message(Level::Error, e),
                }
            }
            AppCommand::SetCompressionExportDir(None) => self.ask_path(PathRequest::new(
                "Export compressed clips to",
                PathKind::Folder,
                AppCommand::SetCompressionExportDir(None),
            )),
            AppCommand::SetCompressionExportDir(Some(d)) => {
                self.side.compression.export_dir = Some(d);
            }
            AppCommand::CompressionExport {
                only,
                dir: None,
                replace,
            } => self.ask_path(PathRequest::new(
                "Export compressed clips to",
                PathKind::Folder,
                AppCommand::CompressionExport {
                    only,
                    dir: None,
                    replace,
                },
            )),
            AppCommand::CompressionExport {
                only,
                dir: Some(d),
                replace,
            } => {
                let comp = &mut self.side.compression;
                comp.export_dir = Some(d.clone());
                match comp.start_export(only, replace) {
                    Ok(()) => comp.status = Some("exporting...".into()),
                    Err(crate::core::io::ExportFilesError::Exists { count, .. }) => {
                        self.dialog = Some(Dialog::ReplaceFiles {
                            what: ReplaceWhat::Compressed { only },
                            dir: d,
                            count,
                        });
                    }
                    Err(e) => comp.status = Some(format!("export failed: {e}")),
                }
            }
            other => self.message(
                Level::Error,
                format!("internal: command not handled: {other:?}"),
            ),
        }
    }

    /// Applies `edit` as one undo step named `label` and says so in the status bar (or why it was
    /// refused). Returns whether it was applied. The one way the app edits the document.
    pub(crate) fn apply_edit(&mut self, edit: Edit, label: &str) -> bool {
        match self.project.apply(edit, label) {
            Ok(()) => {
                self.message(Level::Info, label.to_owned());
                self.after_structure_change();
                true
            }
            Err(e) => {
                self.message(Level::Error, format!("{label}: {e}"));
                false
            }
        }
    }
}

/// The status line of an undo or redo that could not be applied.
fn history_failed(why: &str) -> String {
    format!("{why}; the undo history was cleared (the project keeps its changes, unsaved)")
}

fn toggle(set: &mut std::collections::BTreeSet<String>, name: String) {
    if !set.remove(&name) {
        set.insert(name);
    }
}
