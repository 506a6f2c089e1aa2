//! The application: its state and the frame loop. The rooms of the app live in their own files:
//! commands are applied in `crate::ui::apply` (the one place state changes), files and dialogs in
//! [`crate::ui::files`], the menu in `crate::ui::menu`, the transport and status bars in
//! [`crate::ui::transport`], keys in [`crate::ui::keymap`], the right panel in
//! [`crate::ui::side_panel`].

use std::path::PathBuf;

use egui::Ui;

use crate::core::tags::ClipId;
use crate::ui::bottom_panel::BottomTab;
use crate::ui::browser::{self, BrowserState};
use crate::ui::command::{AppCommand, Guarded};
use crate::ui::file_dialog::DialogBackend;
use crate::ui::files::Files;
use crate::ui::project::Project;
use crate::ui::recovery::{Origin, Recovery};
use crate::ui::side_panel::SidePanel;
use crate::ui::timeline::model::{Clipboard, MarkerSel, Selected};
use crate::ui::timeline::{self, TimelineInput, TimelineView};
use crate::ui::transport::{Playback, TransportBar};

pub use crate::ui::dialogs::Dialog;

/// Severity of a status message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

/// User preferences kept between runs (eframe persistence).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Prefs {
    pub dark: bool,
    pub recent: Vec<PathBuf>,
    /// The system's file dialogs (with the in-app browser as fallback), or always the in-app one.
    #[serde(default)]
    pub dialogs: DialogBackend,
    /// Memory the loaded animations may use, in MiB (least recently used clips are unloaded).
    #[serde(default = "default_budget_mib")]
    pub anim_budget_mib: u64,
}

fn default_budget_mib() -> u64 {
    crate::core::library::DEFAULT_BUDGET_BYTES >> 20
}

impl Default for Prefs {
    fn default() -> Self {
        Self {
            dark: true,
            recent: Vec::new(),
            dialogs: DialogBackend::System,
            anim_budget_mib: default_budget_mib(),
        }
    }
}

/// The ranges of one clip by tag name, and the number of clips, before an undo or redo
/// ([`TaglaneApp::ranges_before`]).
pub(crate) type RangesBefore = (
    usize,
    std::collections::HashMap<String, std::collections::HashSet<crate::core::tags::Range>>,
);

/// The whole application state.
pub struct TaglaneApp {
    pub project: Project,
    pub current_clip: ClipId,
    pub playback: Playback,
    pub selection: Vec<Selected>,
    /// Selected markers (tag, frame) on the current clip.
    pub marker_selection: Vec<MarkerSel>,
    pub active_tag: Option<usize>,
    /// The active tag's name at the end of the last frame: an edit, undo or redo that moves tags
    /// (a tag deleted or put back above it, a reorder) keeps the same tag active.
    pub(crate) active_name: Option<String>,
    /// The tags' names at the end of the last frame, or after the last change of the tag list
    /// ([`Self::after_structure_change`]): the selection (and the blend's sync tag) follows its
    /// tags by name.
    selection_tag_names: Vec<String>,
    /// Tags deleted while they were the active lane (by name): an undo that brings one back makes
    /// it the active lane again.
    pub(crate) deleted_active: Vec<String>,
    /// Text a copy puts on the system clipboard, handed to egui where the command is applied.
    pub(crate) system_copy: Option<String>,
    /// The current clip's name and take when it was chosen or at the end of the last frame: an
    /// edit, undo, redo or merge of changes made on disk that adds, removes or renames clips (their
    /// indices move) keeps the same clip current.
    pub(crate) current_key: Option<(String, Option<String>)>,
    pub clipboard: Clipboard,
    pub timeline: TimelineView,
    pub browser: BrowserState,
    /// The selected range or marker, frame-exact (under the clip browser).
    pub inspector: crate::ui::inspector::InspectorState,
    /// The tool shown in the bottom panel.
    pub bottom_tab: BottomTab,
    /// The query panel (bottom).
    pub query: crate::ui::query::QueryPanel,
    /// The auto-tag panel (bottom).
    pub autotag: crate::ui::autotag::AutotagPanel,
    /// The "Find similar" tool (bottom).
    pub similar: crate::ui::similar::SimilarPanel,
    /// The right panel: pose preview, compression, the loaded animations.
    pub side: SidePanel,
    /// File dialogs, the in-app file browser, autosave and recovery.
    pub files: Files,
    /// Library imports (background scan, report) and clip units.
    pub library: crate::ui::library::LibraryState,
    pub prefs: Prefs,
    pub status: Option<(Level, String)>,
    pub dialog: Option<Dialog>,
    pub show_help: bool,
    /// Commands queued this frame.
    pub queue: Vec<AppCommand>,
    /// Set when the app asked to close and may now do so.
    pub allow_close: bool,
    pub(crate) transport: TransportBar,
    last_title: Option<String>,
}

impl TaglaneApp {
    /// A new app on `project`, with `prefs` and the recovery store in `recovery`.
    pub fn new(project: Project, prefs: Prefs, recovery: Recovery) -> Self {
        let mut app = Self {
            project,
            current_clip: 0,
            playback: Playback::default(),
            selection: Vec::new(),
            marker_selection: Vec::new(),
            active_tag: None,
            active_name: None,
            selection_tag_names: Vec::new(),
            deleted_active: Vec::new(),
            system_copy: None,
            current_key: None,
            clipboard: Clipboard::default(),
            timeline: TimelineView::default(),
            browser: BrowserState::default(),
            inspector: Default::default(),
            bottom_tab: BottomTab::default(),
            query: crate::ui::query::QueryPanel::default(),
            autotag: Default::default(),
            similar: Default::default(),
            side: SidePanel::default(),
            files: Files::new(recovery),
            library: Default::default(),
            prefs,
            status: None,
            dialog: None,
            show_help: false,
            queue: Vec::new(),
            allow_close: false,
            transport: TransportBar::default(),
            last_title: None,
        };
        app.active_tag = (!app.project.doc.tags.is_empty()).then_some(0);
        app.side.anim.set_budget(app.prefs.anim_budget_mib << 20);
        app.offer_recovery();
        // Started on the demo (no project named), the newest work another session left behind
        // is offered whatever its project: after a crash, starting taglane again is how a user
        // gets back to it.
        if app.dialog.is_none()
            && app.project.is_demo
            && app.project.path.is_none()
            && let Some(info) = app.files.recovery.newest_left_behind()
        {
            app.dialog = Some(Dialog::Recover { info });
        }
        let others = app
            .files
            .recovery
            .all()
            .into_iter()
            .filter(|i| i.origin != Origin::of(&app.project))
            // The one the dialog offers is not mentioned twice.
            .filter(|i| !matches!(&app.dialog, Some(Dialog::Recover { info }) if info == i))
            .count();
        if others > 0 && app.status.is_none() {
            app.message(
                Level::Info,
                format!(
                    "unsaved work of {others} other project(s) is kept: File > Recover autosave"
                ),
            );
        }
        app
    }

    /// The app on the embedded demo, with default preferences, no recovery store and the in-app
    /// file browser (tests).
    pub fn demo_for_tests() -> Self {
        let prefs = Prefs {
            dialogs: DialogBackend::InApp,
            ..Prefs::default()
        };
        Self::new(Project::demo(), prefs, Recovery::disabled())
    }

    /// Offers the autosave of the open project, if there is one (never another project's).
    pub fn offer_recovery(&mut self) {
        if let Some(info) = self.files.recovery.pending_for(&Origin::of(&self.project)) {
            self.dialog = Some(Dialog::Recover { info });
        }
    }

    pub(crate) fn message(&mut self, level: Level, text: impl Into<String>) {
        self.status = Some((level, text.into()));
    }

    /// Frames of the current clip (0 when there is none).
    pub fn frames(&self) -> u32 {
        self.project
            .doc
            .clips
            .get(self.current_clip as usize)
            .map_or(0, |c| c.frames)
    }

    /// Frame rate of the current clip (30 when there is none).
    pub fn fps(&self) -> f32 {
        self.project
            .doc
            .clips
            .get(self.current_clip as usize)
            .map_or(30.0, |c| c.fps)
    }

    /// The title bar text: project name, a `●` when there are unsaved changes.
    pub fn window_title(&self) -> String {
        let dirty = if self.has_unsaved_work() { "● " } else { "" };
        format!("{dirty}{} — taglane", self.project.title())
    }

    /// Shows the whole UI for one frame and applies the queued commands.
    pub fn ui(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        ctx.set_theme(if self.prefs.dark {
            egui::Theme::Dark
        } else {
            egui::Theme::Light
        });
        // A press anywhere but in the field being typed in ends the typing, which applies it (as
        // Blender and Unreal confirm a field): egui's default waits for a click, and a drag on
        // the timeline kept the keyboard in an inspector field, whose text then landed on the
        // dragged range.
        if ctx.options(|o| o.input_options.surrender_focus_on) != egui::SurrenderFocusOn::Presses {
            ctx.options_mut(|o| {
                o.input_options.surrender_focus_on = egui::SurrenderFocusOn::Presses;
            });
        }
        // No shortcut runs under a modal window (a confirmation, the in-app file browser, the
        // autotag "Replace?" box): Delete deleted the selection behind "Delete tag?", Ctrl+Z
        // changed the tag it named, and edits made while the browser was open for an Open
        // after "Don't save" were dropped unasked. The window takes its own keys (Enter, Esc).
        let modal =
            self.dialog.is_some() || self.files.browser.is_some() || self.autotag.pending.is_some();
        if !modal {
            let keys = crate::ui::keymap::shortcuts(&ctx);
            self.queue.extend(keys);
        }
        // The clips fetched last frame are on screen: the store keeps them past its budget.
        self.side.anim.begin_frame();
        // Nor does an import land or a dropped file act under a modal window: the question it
        // asks (save your changes before opening another project?) would not cover them, and
        // its answer dropped them unasked. They wait for it to close.
        if !modal {
            self.poll_import();
        }
        self.advance_playback(&ctx);
        self.handle_dropped_files(&ctx, modal);

        egui::Panel::top("menu_bar").show(ui, |ui| self.menu_ui(ui));
        egui::Panel::bottom("status_bar").show(ui, |ui| self.status_ui(ui));
        // Panels start in proportion to the window and never take the timeline's room: on a
        // laptop's 1024 x 640 the lanes keep about half the width and height.
        let screen = ctx.content_rect();
        egui::Panel::left("clip_browser")
            .default_size((screen.width() * 0.2).clamp(180.0, 250.0))
            .max_size((screen.width() * 0.3).max(200.0))
            .resizable(true)
            .show(ui, |ui| {
                // Tall enough for a selected range's fields and the hint under them, but at most
                // a third of the window: on a laptop's 640 points the clip list keeps the rest.
                egui::Panel::bottom("inspector")
                    .resizable(true)
                    .default_size((screen.height() * 0.33).clamp(160.0, 330.0))
                    .min_size(120.0)
                    .show(ui, |ui| {
                        // Filling the panel: a scroll area shrunk to a short content (nothing
                        // selected) shrank the panel with it, to its minimum height, and a
                        // range's fields then ran past its bottom.
                        egui::ScrollArea::vertical()
                            .auto_shrink([false, false])
                            .show(ui, |ui| {
                                let input = crate::ui::inspector::InspectorInput {
                                    doc: &self.project.doc,
                                    clip: self.current_clip,
                                    selection: &self.selection,
                                    marker_selection: &self.marker_selection,
                                };
                                crate::ui::inspector::inspector_ui(
                                    ui,
                                    &input,
                                    &mut self.inspector,
                                    &mut self.queue,
                                );
                            });
                    });
                self.import_progress_ui(ui);
                let input = browser::BrowserInput {
                    doc: &self.project.doc,
                    base_dir: self.project.base_dir(),
                    is_demo: self.project.is_demo,
                    current: self.current_clip,
                    anim: &self.side.anim,
                };
                browser::browser_ui(ui, &input, &mut self.browser, &mut self.queue);
            });
        let autotag_open = self.bottom_tab == BottomTab::Autotag;
        let clip_input = crate::ui::view::ClipContext {
            project: &self.project,
            clip: self.current_clip,
            playhead: self.playback.playhead,
            dark: self.prefs.dark,
            planted: &[],
            overlay: None,
        };
        let planted = self.autotag.update(
            &ctx,
            &clip_input,
            autotag_open,
            &mut self.side.anim,
            &mut self.queue,
        );
        let similar_open = self.bottom_tab == BottomTab::Similar;
        let similar_overlay = self.similar.update(
            &self.project,
            self.current_clip,
            self.playback.playhead,
            similar_open,
            &mut self.side.anim,
            self.prefs.dark,
        );
        if let Some(done) = self.similar.take_finished()
            && !similar_open
        {
            self.status = Some((Level::Info, format!("{done} (the Similar tab shows them)")));
        }
        // A third of the window to start with (the user's width is kept from then on): room
        // for the compression table on a wide screen, and for the timeline on a laptop's. (The
        // id changed from "pose_panel" when the panel stopped widening itself to fit its camera
        // hint, so that a width it had grown to is not kept as if the user had chosen it.)
        let share = if screen.width() < 1300.0 { 0.28 } else { 0.33 };
        let side_width = (screen.width() * share).clamp(260.0, 600.0);
        egui::Panel::right("side_panel")
            .resizable(true)
            .default_size(side_width)
            .min_size(260.0)
            .max_size((screen.width() * 0.4).max(300.0))
            .show(ui, |ui| {
                // The panel keeps its width whatever it shows: a panel is as wide as its
                // content, and while a take loaded its one line ("Loading the animation of
                // ...") narrowed the panel for good.
                ui.set_min_width(ui.available_width());
                let input = crate::ui::view::ClipContext {
                    project: &self.project,
                    clip: self.current_clip,
                    playhead: self.playback.playhead,
                    dark: self.prefs.dark,
                    planted: &planted,
                    overlay: similar_overlay.as_ref(),
                };
                self.side.ui(ui, &input, &mut self.queue);
            });
        self.query.update(&self.project.doc);
        // A cut into BVH files ends whichever tab is shown: said in the status bar too.
        if let Some(line) = self.query.poll_cut() {
            let level = if line.starts_with("cut failed") {
                Level::Error
            } else {
                Level::Info
            };
            self.query.message = Some(line.clone());
            self.status = Some((level, line));
        }
        if self.query.cut.is_some() {
            ctx.request_repaint_after(std::time::Duration::from_millis(50));
        }
        egui::Panel::bottom("tools_panel")
            .resizable(true)
            // 300 points of tool under the tab bar (less in a low window), never more than
            // two thirds of the window.
            .default_size((screen.height() * 0.45).clamp(220.0, 335.0))
            .max_size((screen.height() * 0.66).max(240.0))
            .show(ui, |ui| {
                // The height the user gave the panel, whichever tab is in front: a panel is as
                // high as its content up to that height, and the tabs' contents differ.
                ui.set_min_height(ui.available_height());
                if BottomTab::ALL.len() > 1 {
                    crate::ui::bottom_panel::tab_bar(ui, &mut self.bottom_tab);
                    ui.separator();
                }
                match self.bottom_tab {
                    BottomTab::Query => crate::ui::query::query_ui(
                        ui,
                        &mut self.query,
                        &self.project.doc,
                        self.current_clip,
                        self.prefs.dark,
                        &mut self.queue,
                    ),
                    BottomTab::Autotag => crate::ui::autotag::autotag_ui(
                        ui,
                        &mut self.autotag,
                        &clip_input,
                        &mut self.queue,
                    ),
                    BottomTab::Similar => {
                        let view = crate::ui::similar::model::AppView {
                            clip: self.current_clip,
                            selection: &self.selection,
                            mark_in: self.playback.mark_in,
                            playhead: self.playback.playhead,
                            active_tag: self.active_tag,
                        };
                        crate::ui::similar::similar_ui(
                            ui,
                            &mut self.similar,
                            &self.project,
                            &view,
                            self.prefs.dark,
                            &mut self.queue,
                        );
                    }
                }
            });
        // Read-only lanes under the tags: the query's results, the auto-tag proposals, Find
        // similar's matches.
        let mut extra_lanes =
            self.query
                .extra_lanes(&self.project.doc, self.current_clip, self.prefs.dark);
        if autotag_open {
            extra_lanes.extend(
                self.autotag
                    .extra_lanes(&self.project.doc, self.current_clip),
            );
        }
        if similar_open {
            extra_lanes.extend(self.similar.extra_lanes(
                &self.project.doc,
                self.current_clip,
                self.prefs.dark,
            ));
        }
        egui::CentralPanel::default_margins().show(ui, |ui| {
            self.transport_ui(ui);
            ui.separator();
            let input = TimelineInput {
                doc: &self.project.doc,
                clip: self.current_clip,
                playhead: self.playback.playhead,
                playing: self.playback.playing,
                selection: &self.selection,
                marker_selection: &self.marker_selection,
                active_tag: self.active_tag,
                mark_in: self.playback.mark_in,
                dark: self.prefs.dark,
                extra_lanes: &extra_lanes,
            };
            timeline::timeline_ui(ui, &input, &mut self.timeline, &mut self.queue);
        });
        self.dialogs_ui(&ctx);
        self.import_report_ui(&ctx);
        self.file_browser_ui(&ctx);
        crate::ui::keymap::help_ui(&ctx, &mut self.show_help);

        let queue = std::mem::take(&mut self.queue);
        if !queue.is_empty() {
            // The commands change what this frame drew: draw again, without waiting for the next
            // input (a shortcut or a click with the pointer still would show the old state).
            ctx.request_repaint();
        }
        for cmd in queue {
            self.apply(cmd, &ctx);
        }
        let name = self.active_tag.and_then(|t| self.project.doc.tags.get(t));
        if self.active_name.as_deref() != name.map(|t| t.name.as_str()) {
            self.active_name = name.map(|t| t.name.clone());
        }
        let tags = &self.project.doc.tags;
        if self.selection_tag_names.len() != tags.len()
            || tags
                .iter()
                .zip(&self.selection_tag_names)
                .any(|(t, n)| t.name != *n)
        {
            self.selection_tag_names = tags.iter().map(|t| t.name.clone()).collect();
        }
        self.side.pose.follow_clip_b(&self.project.doc);
        self.note_current_key();
        let title = self.window_title();
        if self.last_title.as_deref() != Some(title.as_str()) {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.last_title = Some(title);
        }
        self.autosave_tick(&ctx);
    }

    /// Records the current clip's name and take (see [`TaglaneApp::current_key`]).
    pub(crate) fn note_current_key(&mut self) {
        let clip = self.project.doc.clips.get(self.current_clip as usize);
        let same = match (&self.current_key, clip) {
            (Some((name, source)), Some(c)) => *name == c.name && *source == c.source,
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.current_key = clip.map(|c| (c.name.clone(), c.source.clone()));
        }
    }

    /// The clip `current_key` names: of the same name and take; else the one clip of that take
    /// (renamed); else of the same name (relinked).
    fn find_current(&self) -> Option<ClipId> {
        let (name, source) = self.current_key.as_ref()?;
        let clips = &self.project.doc.clips;
        let at = |i: usize| i as ClipId;
        if let Some(i) = clips
            .iter()
            .position(|c| c.name == *name && c.source == *source)
        {
            return Some(at(i));
        }
        let mut same_take = clips
            .iter()
            .enumerate()
            .filter(|(_, c)| source.is_some() && c.source == *source);
        if let (Some((i, _)), None) = (same_take.next(), same_take.next()) {
            return Some(at(i));
        }
        clips.iter().position(|c| c.name == *name).map(at)
    }

    /// After an undo or redo that changed one clip's ranges, markers or notes: shows that clip
    /// when another was shown (an undo never changes a clip out of sight) and returns
    /// ` on CLIP` for the status line, or "" when it was already shown.
    pub(crate) fn show_clip_of_undo(&mut self, clip: Option<crate::core::tags::ClipId>) -> String {
        let Some(c) = clip.filter(|&c| c != self.current_clip) else {
            return String::new();
        };
        let Some(name) = self
            .project
            .doc
            .clips
            .get(c as usize)
            .map(|i| i.name.clone())
        else {
            return String::new();
        };
        self.show_clip(c);
        format!(" on {name} (now shown)")
    }

    /// Makes clip `c` the current one, as selecting it in the browser does: nothing selected,
    /// the playhead at its start, no mark or loop carried over, the timeline fitted to it.
    pub(crate) fn show_clip(&mut self, c: crate::core::tags::ClipId) {
        self.current_clip = c;
        self.note_current_key();
        self.selection.clear();
        self.marker_selection.clear();
        self.playback.playhead = 0.0;
        self.playback.mark_in = None;
        self.playback.loop_range = None;
        self.playback.wrapped = None;
        self.timeline.fit_pending = true;
    }

    /// The ranges of clip `clip` (by tag name) and the number of clips, before an undo or redo,
    /// for [`Self::select_restored`].
    pub(crate) fn ranges_before(&self, clip: ClipId) -> RangesBefore {
        let doc = &self.project.doc;
        let ranges = doc
            .tags
            .iter()
            .filter_map(|t| {
                let list = t.ranges.get(&clip)?;
                Some((t.name.clone(), list.iter().copied().collect()))
            })
            .collect();
        (doc.clips.len(), ranges)
    }

    /// After an undo or redo that brought ranges back on the clip shown (a deleted range, a
    /// range moved back): those ranges become the selection, as they were before the edit
    /// undone. Nothing changes where no range came back, or where clips were added or removed
    /// (the clip indices moved).
    pub(crate) fn select_restored(&mut self, (clips, before): RangesBefore) {
        let doc = &self.project.doc;
        if doc.clips.len() != clips {
            return;
        }
        let clip = self.current_clip;
        let mut back = Vec::new();
        for (i, t) in doc.tags.iter().enumerate() {
            let had = before.get(&t.name);
            for r in t.ranges.get(&clip).unwrap_or_default() {
                if !had.is_some_and(|h| h.contains(r)) {
                    back.push((i, *r));
                }
            }
        }
        if !back.is_empty() {
            self.selection = back;
            self.marker_selection.clear();
        }
    }

    /// What the view keeps by tag name follows a tag renamed from `old` to `new`: hidden and
    /// solo lanes, the clip browser's tag filter, and the query being composed (as the saved
    /// queries are rewritten: it named a tag no longer there, and its lanes froze on the last
    /// result that ran).
    pub(crate) fn view_follows_rename(&mut self, old: &str, new: &str) {
        if let Some(text) = crate::core::tags::parse::rename_tag_in_expr(&self.query.text, old, new)
        {
            self.query.text = text;
        }
        for set in [&mut self.timeline.hidden, &mut self.timeline.solo] {
            if set.remove(old) {
                set.insert(new.to_owned());
            }
        }
        let filter = &mut self.browser.filters.tag;
        if *filter == crate::ui::browser::TagFilter::Tag(old.to_owned()) {
            *filter = crate::ui::browser::TagFilter::Tag(new.to_owned());
        }
        // Find similar's "Accept as tag": accepting after a rename made the old name again.
        if self.similar.accept_tag == old {
            self.similar.accept_tag = new.to_owned();
        }
    }

    /// The tags' names in order, before an undo or redo, for [`Self::follow_renames`].
    pub(crate) fn tag_names(&self) -> Vec<String> {
        self.project
            .doc
            .tags
            .iter()
            .map(|t| t.name.clone())
            .collect()
    }

    /// After an undo or redo: a tag whose name it changed (the same place in the same list, a
    /// name not there before) takes the view's state by name with it, as the rename itself did
    /// (undoing a rename left a hidden lane shown and the browser's filter matching nothing).
    pub(crate) fn follow_renames(&mut self, before: &[String]) {
        let now = self.tag_names();
        if now.len() != before.len() {
            return;
        }
        let renamed: Vec<(String, String)> = before
            .iter()
            .zip(&now)
            .filter(|(b, n)| b != n && !now.contains(b) && !before.contains(n))
            .map(|(b, n)| (b.clone(), n.clone()))
            .collect();
        for (old, new) in renamed {
            self.view_follows_rename(&old, &new);
        }
    }

    /// The tag names and the active lane before an undo or redo, for [`Self::follow_lanes`].
    pub(crate) fn lanes_before(&self) -> (std::collections::HashSet<String>, Option<usize>) {
        let names = self
            .project
            .doc
            .tags
            .iter()
            .map(|t| t.name.clone())
            .collect();
        (names, self.active_tag)
    }

    /// After an undo or redo (and [`Self::after_structure_change`]): a tag it brought back that
    /// was the active lane when it was deleted becomes the active lane again; where it took the
    /// active lane's tag away (the undo of a new tag), the lane above it does, which is the one
    /// that was active when the tag was made (a new tag goes below the active lane).
    pub(crate) fn follow_lanes(
        &mut self,
        (before, active): (std::collections::HashSet<String>, Option<usize>),
    ) {
        let doc = &self.project.doc;
        let mut back = doc
            .tags
            .iter()
            .enumerate()
            .filter(|(_, t)| !before.contains(&t.name));
        if let (Some((i, t)), None) = (back.next(), back.next())
            && let Some(k) = self.deleted_active.iter().position(|n| *n == t.name)
        {
            self.deleted_active.remove(k);
            self.active_tag = Some(i);
        } else if let (Some(name), Some(old)) = (&self.active_name, active)
            && doc.tag_index(name).is_none()
        {
            self.active_tag =
                (!doc.tags.is_empty()).then(|| old.saturating_sub(1).min(doc.tags.len() - 1));
        } else {
            return;
        }
        self.active_name = self
            .active_tag
            .and_then(|t| doc.tags.get(t))
            .map(|t| t.name.clone());
    }

    /// Makes the selection the ranges the lanes hold now: an edit that asked to select a range
    /// which merged with a neighbour (a move onto it, a range drawn over another) selects the
    /// merged range, not the part that no longer exists on its own.
    pub(crate) fn select_as_stored(&mut self) {
        let doc = &self.project.doc;
        let clip = self.current_clip;
        let mut held: Vec<Selected> = Vec::new();
        for &(t, r) in &self.selection {
            let lane = doc.tags.get(t).map_or(&[][..], |tag| tag.ranges_on(clip));
            if let Some(l) = lane.iter().find(|l| l.start < r.stop && r.start < l.stop)
                && !held.contains(&(t, *l))
            {
                held.push((t, *l));
            }
        }
        self.selection = held;
    }

    /// Keeps indices valid after tags or clips were added, removed or reordered.
    pub(crate) fn after_structure_change(&mut self) {
        let tags = self.project.doc.tags.len();
        // The same clip stays current wherever it moved (by name and take).
        let found = self.find_current();
        if let Some(i) = found {
            self.current_clip = i;
        }
        let doc = &self.project.doc;
        let clip = self.current_clip;
        // The same tag stays active wherever it moved (by name: a renamed tag keeps its place).
        if let Some(i) = self.active_name.as_deref().and_then(|n| doc.tag_index(n)) {
            self.active_tag = Some(i);
        }
        // The selected ranges and markers follow their tags by name: by place, a tag moved up
        // (or one added or removed before it) left the selection on whichever tag took the
        // place, and Delete deleted that tag's range or marker at the same frames.
        let before = std::mem::take(&mut self.selection_tag_names);
        let follow = |t: usize| -> Option<usize> {
            match before.get(t) {
                Some(name) => doc.tag_index(name).or_else(|| {
                    // Renamed in place: the same list but for this name.
                    (before.len() == doc.tags.len()).then_some(t)
                }),
                None => Some(t),
            }
        };
        for (t, _) in &mut self.selection {
            *t = follow(*t).unwrap_or(usize::MAX);
        }
        for (t, _) in &mut self.marker_selection {
            *t = follow(*t).unwrap_or(usize::MAX);
        }
        // So does the blend's sync tag (normalised time when it is gone).
        let blend = &mut self.side.pose.blend;
        if let crate::ui::pose::SyncMode::Tag(t) = blend.sync {
            blend.sync = follow(t).map_or(crate::ui::pose::SyncMode::NormalizedTime, |i| {
                crate::ui::pose::SyncMode::Tag(i)
            });
        }
        self.selection_tag_names = doc.tags.iter().map(|t| t.name.clone()).collect();
        self.side.pose.follow_clip_b(doc);
        self.selection.retain(|(t, r)| {
            doc.tags
                .get(*t)
                .and_then(|tag| tag.ranges.get(&clip))
                .is_some_and(|l| l.contains(r))
        });
        self.marker_selection.retain(|(t, f)| {
            doc.tags
                .get(*t)
                .is_some_and(|tag| tag.markers_on(clip).contains(f))
        });
        if self.active_tag.is_some_and(|t| t >= tags) {
            self.active_tag = tags.checked_sub(1);
        }
        if self.current_clip as usize >= self.project.doc.clips.len() {
            self.current_clip = self.project.doc.clips.len().saturating_sub(1) as ClipId;
        }
        // The clip shown is gone (an import undone): another is shown, fitted and started as when
        // it is selected; the gone clip's playhead, mark in, loop range and selection are not
        // this one's.
        if found.is_none() && self.current_key.is_some() {
            self.show_clip(self.current_clip);
        }
        self.note_current_key();
        let frames = self.frames();
        self.playback.clamp_to(frames);
    }
}

impl eframe::App for TaglaneApp {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        if ctx.input(|i| i.viewport().close_requested()) && !self.allow_close {
            if self.has_unsaved_work() {
                ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
                self.dialog = Some(Dialog::Unsaved(Guarded::Quit));
            } else {
                self.files.recovery.clear(&Origin::of(&self.project));
            }
        }
        TaglaneApp::ui(self, ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, PREFS_KEY, &self.prefs);
    }
}

/// Storage key of [`Prefs`].
pub const PREFS_KEY: &str = "taglane.prefs";
