//! The application: state, the frame loop, and [`TaglaneApp::apply`], the one place where
//! commands change state.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egui::{Key, KeyboardShortcut, Modifiers, Ui};

use crate::core::anim::import::{ImportOptions, load_animation};
use crate::core::doc::{Edit, exchange};
use crate::core::tags::{ClipId, ClipInfo, Tag};
use crate::ui::browser::{self, BrowserState};
use crate::ui::command::{AppCommand, ExportKind, Guarded};
use crate::ui::file_dialog::{DialogBackend, FileBrowser, NativeAnswer, PathKind, PathRequest};
use crate::ui::project::Project;
use crate::ui::recovery::{Origin, Recovery};
use crate::ui::timeline::model::{self, Clipboard, Selected};
use crate::ui::timeline::{self, TimelineInput, TimelineView};

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
}

impl Default for Prefs {
    fn default() -> Self {
        Self {
            dark: true,
            recent: Vec::new(),
            dialogs: DialogBackend::System,
        }
    }
}

/// Playback state of the current clip.
#[derive(Debug, Clone, PartialEq)]
pub struct Playback {
    /// Playhead in frames (fractional while playing).
    pub playhead: f64,
    pub playing: bool,
    pub looping: bool,
    pub speed: f32,
    /// The mark-in frame on the active lane, waiting for a mark-out.
    pub mark_in: Option<u32>,
}

impl Default for Playback {
    fn default() -> Self {
        Self {
            playhead: 0.0,
            playing: false,
            looping: true,
            speed: 1.0,
            mark_in: None,
        }
    }
}

pub use crate::ui::dialogs::Dialog;

/// The keyboard shortcuts, in the order the help window lists them.
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Space", "Play / pause"),
    ("Left / Right", "Step one frame (Shift: ten)"),
    ("Ctrl+Left / Ctrl+Right", "Previous / next range edge"),
    ("Home / End", "First / last frame"),
    (
        "I / O",
        "Mark in / mark out on the active lane (a range from in to out)",
    ),
    (
        "S",
        "Split at the playhead (the frame under it is cut out: touching ranges merge)",
    ),
    ("Delete / Backspace", "Delete the selected ranges"),
    (
        "Ctrl+C / Ctrl+V",
        "Copy / paste ranges at the playhead (into their tags)",
    ),
    ("Ctrl+Shift+V", "Paste into the active lane"),
    ("Ctrl+A", "Select every range on the clip"),
    ("Ctrl+Z / Ctrl+Shift+Z (Ctrl+Y)", "Undo / redo"),
    ("Ctrl+S / Ctrl+Shift+S", "Save / save as"),
    ("Ctrl+N / Ctrl+O", "New / open project"),
    ("Ctrl+T", "New tag"),
    ("F", "Fit the clip in the timeline"),
    ("Ctrl+wheel / + / -", "Zoom the timeline"),
    ("Shift+wheel", "Pan the timeline"),
    (
        "Drag on a lane",
        "Create a range (Shift/Ctrl+drag: box select)",
    ),
    (
        "Drag a range / its edge",
        "Move / resize (snapped to frames)",
    ),
    ("Click / Shift+click", "Select / add to selection"),
    ("F1", "This help"),
];

/// The whole application state.
pub struct TaglaneApp {
    pub project: Project,
    pub current_clip: ClipId,
    pub playback: Playback,
    pub selection: Vec<Selected>,
    pub active_tag: Option<usize>,
    pub timeline: TimelineView,
    pub browser: BrowserState,
    /// The query panel.
    pub query: crate::ui::query::QueryPanel,
    pub clipboard: Clipboard,
    pub prefs: Prefs,
    pub status: Option<(Level, String)>,
    pub dialog: Option<Dialog>,
    pub show_help: bool,
    pub recovery: Recovery,
    /// Commands queued this frame.
    pub queue: Vec<AppCommand>,
    /// Set when the app asked to close and may now do so.
    pub allow_close: bool,
    /// Pose preview and compression view (right panel), and the loaded animations.
    pub pose: crate::ui::pose::PoseView,
    pub compression: crate::ui::compression::CompressionView,
    pub anim_cache: crate::ui::anim_cache::AnimCache,
    /// The in-app file browser, while it is open.
    pub file_browser: Option<FileBrowser>,
    /// The system file dialog (tests replace it to simulate one that cannot open).
    pub native_dialog: fn(&PathRequest, Option<&Path>) -> NativeAnswer,
    /// Set once the system dialog failed to open: the in-app browser is used from then on.
    pub native_unavailable: bool,
    last_autosave: Instant,
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
            active_tag: None,
            timeline: TimelineView::default(),
            browser: BrowserState::default(),
            query: crate::ui::query::QueryPanel::default(),
            clipboard: Clipboard::default(),
            prefs,
            status: None,
            dialog: None,
            show_help: false,
            recovery,
            queue: Vec::new(),
            allow_close: false,
            pose: Default::default(),
            compression: Default::default(),
            anim_cache: Default::default(),
            file_browser: None,
            native_dialog: crate::ui::file_dialog::native_dialog,
            native_unavailable: false,
            last_autosave: Instant::now(),
            last_title: None,
        };
        app.active_tag = (!app.project.doc.tags.is_empty()).then_some(0);
        app.offer_recovery();
        let others = app
            .recovery
            .all()
            .into_iter()
            .filter(|i| i.origin != Origin::of(&app.project))
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
        if let Some(info) = self.recovery.pending_for(&Origin::of(&self.project)) {
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

    fn fps(&self) -> f32 {
        self.project
            .doc
            .clips
            .get(self.current_clip as usize)
            .map_or(30.0, |c| c.fps)
    }

    /// The title bar text: project name, a `●` when there are unsaved changes.
    pub fn window_title(&self) -> String {
        let dirty = if self.project.history.is_dirty() {
            "● "
        } else {
            ""
        };
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
        self.shortcuts(&ctx);
        self.advance_playback(&ctx);
        self.handle_dropped_files(&ctx);

        egui::Panel::top("menu_bar").show(ui, |ui| self.menu_ui(ui));
        egui::Panel::bottom("status_bar").show(ui, |ui| self.status_ui(ui));
        egui::Panel::left("clip_browser")
            .default_size(230.0)
            .show(ui, |ui| {
                browser::browser_ui(
                    ui,
                    &self.project.doc,
                    self.current_clip,
                    &mut self.browser,
                    &mut self.queue,
                );
            });
        egui::Panel::right("pose_panel")
            .resizable(true)
            .default_size(440.0)
            .min_size(280.0)
            .show(ui, |ui| {
                let input = crate::ui::pose::SideInput {
                    project: &self.project,
                    clip: self.current_clip,
                    playhead: self.playback.playhead,
                    dark: self.prefs.dark,
                };
                crate::ui::pose::side_panel_ui(
                    ui,
                    &input,
                    &mut self.anim_cache,
                    &mut self.pose,
                    &mut self.compression,
                    &mut self.queue,
                );
            });
        self.query.update(&self.project.doc);
        egui::Panel::bottom("query_panel")
            .resizable(true)
            .default_size(300.0)
            .show(ui, |ui| {
                crate::ui::query::query_ui(
                    ui,
                    &mut self.query,
                    &self.project.doc,
                    self.current_clip,
                    self.prefs.dark,
                    &mut self.queue,
                );
            });
        let query_lanes =
            self.query
                .extra_lanes(&self.project.doc, self.current_clip, self.prefs.dark);
        egui::CentralPanel::default_margins().show(ui, |ui| {
            self.transport_ui(ui);
            ui.separator();
            let input = TimelineInput {
                doc: &self.project.doc,
                clip: self.current_clip,
                playhead: self.playback.playhead,
                playing: self.playback.playing,
                selection: &self.selection,
                active_tag: self.active_tag,
                mark_in: self.playback.mark_in,
                dark: self.prefs.dark,
                extra_lanes: &query_lanes,
            };
            timeline::timeline_ui(ui, &input, &mut self.timeline, &mut self.queue);
        });
        self.dialogs_ui(&ctx);
        self.file_browser_ui(&ctx);
        self.help_ui(&ctx);

        let queue = std::mem::take(&mut self.queue);
        for cmd in queue {
            self.apply(cmd, &ctx);
        }
        let title = self.window_title();
        if self.last_title.as_deref() != Some(title.as_str()) {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.last_title = Some(title);
        }
        self.autosave_tick();
    }

    fn shortcuts(&mut self, ctx: &egui::Context) {
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        let cmd = Modifiers::COMMAND;
        let cmd_shift = Modifiers::COMMAND | Modifiers::SHIFT;
        let mut q = Vec::new();
        ctx.input_mut(|i| {
            let paste_event = i.events.iter().any(|e| matches!(e, egui::Event::Paste(_)));
            let copy_event = i.events.iter().any(|e| matches!(e, egui::Event::Copy));
            let mut sc = |m: Modifiers, k: Key| i.consume_shortcut(&KeyboardShortcut::new(m, k));
            // Longer combinations first, so Ctrl+Shift+Z is not taken as Ctrl+Z.
            if sc(cmd_shift, Key::Z) || sc(cmd, Key::Y) {
                q.push(AppCommand::Redo);
            }
            if sc(cmd, Key::Z) {
                q.push(AppCommand::Undo);
            }
            if sc(cmd_shift, Key::S) {
                q.push(AppCommand::SaveAs(None));
            }
            if sc(cmd, Key::S) {
                q.push(AppCommand::Save);
            }
            if sc(cmd, Key::N) {
                q.push(AppCommand::Guarded(Guarded::New));
            }
            if sc(cmd, Key::O) {
                q.push(AppCommand::Guarded(Guarded::Open(None)));
            }
            if sc(cmd, Key::T) {
                q.push(AppCommand::NewTag);
            }
            if sc(cmd, Key::A) {
                q.push(AppCommand::SelectAll);
            }
            if sc(cmd_shift, Key::V) {
                q.push(AppCommand::Paste { into_active: true });
            }
            if sc(cmd, Key::V) || paste_event {
                q.push(AppCommand::Paste { into_active: false });
            }
            if sc(cmd, Key::C) || copy_event {
                q.push(AppCommand::Copy);
            }
            if sc(cmd, Key::ArrowLeft) {
                q.push(AppCommand::JumpEdge(false));
            }
            if sc(cmd, Key::ArrowRight) {
                q.push(AppCommand::JumpEdge(true));
            }
            if sc(Modifiers::SHIFT, Key::ArrowLeft) {
                q.push(AppCommand::StepFrames(-10));
            }
            if sc(Modifiers::SHIFT, Key::ArrowRight) {
                q.push(AppCommand::StepFrames(10));
            }
            let none = Modifiers::NONE;
            let plain: [(Key, AppCommand); 14] = [
                (Key::Space, AppCommand::TogglePlay),
                (Key::ArrowLeft, AppCommand::StepFrames(-1)),
                (Key::ArrowRight, AppCommand::StepFrames(1)),
                (Key::Home, AppCommand::JumpStart),
                (Key::End, AppCommand::JumpEnd),
                (Key::I, AppCommand::MarkIn),
                (Key::O, AppCommand::MarkOut),
                (Key::S, AppCommand::SplitAtPlayhead),
                (Key::Delete, AppCommand::DeleteSelection),
                (Key::Backspace, AppCommand::DeleteSelection),
                (Key::F, AppCommand::FitView),
                (Key::Plus, AppCommand::Zoom(1.25)),
                (Key::Minus, AppCommand::Zoom(0.8)),
                (Key::F1, AppCommand::ShowHelp(true)),
            ];
            for (k, c) in plain {
                if sc(none, k) {
                    q.push(c);
                }
            }
            if sc(none, Key::Equals) {
                q.push(AppCommand::Zoom(1.25));
            }
        });
        self.queue.extend(q);
    }

    fn advance_playback(&mut self, ctx: &egui::Context) {
        if !self.playback.playing {
            return;
        }
        let frames = self.frames();
        if frames == 0 {
            self.playback.playing = false;
            return;
        }
        let dt = ctx.input(|i| i.stable_dt).min(0.1) as f64;
        let last = frames.saturating_sub(1) as f64;
        let mut p = self.playback.playhead + dt * self.fps() as f64 * self.playback.speed as f64;
        if p > last {
            if self.playback.looping && last > 0.0 {
                p %= last;
            } else {
                p = last;
                self.playback.playing = false;
            }
        }
        self.playback.playhead = p;
        ctx.request_repaint();
    }

    fn handle_dropped_files(&mut self, ctx: &egui::Context) {
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        if dropped.is_empty() {
            return;
        }
        let (anims, other): (Vec<PathBuf>, Vec<PathBuf>) = dropped
            .into_iter()
            .partition(|p| crate::core::anim::import::AnimFormat::from_path(p).is_some());
        if !anims.is_empty() {
            self.queue.push(AppCommand::ImportAnimation(Some(anims)));
        }
        for p in other {
            let ext = p
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("")
                .to_ascii_lowercase();
            if ext == "json" || ext == "csv" {
                self.queue.push(AppCommand::ImportTags(Some(p)));
            } else {
                self.message(
                    Level::Error,
                    format!(
                        "{}: not a file taglane reads (expected .bvh, .glb, .gltf, .json or .csv)",
                        p.display()
                    ),
                );
            }
        }
    }

    fn menu_ui(&mut self, ui: &mut Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("New project").clicked() {
                    self.queue.push(AppCommand::Guarded(Guarded::New));
                }
                if ui.button("Open project…").clicked() {
                    self.queue.push(AppCommand::Guarded(Guarded::Open(None)));
                }
                ui.menu_button("Open recent", |ui| {
                    if self.prefs.recent.is_empty() {
                        ui.label("No recent projects");
                    }
                    for p in self.prefs.recent.clone() {
                        if ui.button(p.display().to_string()).clicked() {
                            self.queue.push(AppCommand::Guarded(Guarded::Open(Some(p))));
                        }
                    }
                });
                if ui.button("Open demo project").clicked() {
                    self.queue.push(AppCommand::Guarded(Guarded::OpenDemo));
                }
                ui.menu_button("Recover autosave", |ui| {
                    let all = self.recovery.all();
                    if all.is_empty() {
                        ui.label("No autosaved work");
                    }
                    for info in all {
                        ui.horizontal(|ui| {
                            if ui
                                .button(info.summary())
                                .on_hover_text("Open that project and recover the work into it")
                                .clicked()
                            {
                                self.queue
                                    .push(AppCommand::RecoverAutosave(info.origin.clone()));
                            }
                            if ui
                                .small_button("Delete")
                                .on_hover_text("Delete this autosave")
                                .clicked()
                            {
                                self.queue
                                    .push(AppCommand::DiscardAutosave(info.origin.clone()));
                            }
                        });
                    }
                });
                ui.separator();
                if ui.button("Save").clicked() {
                    self.queue.push(AppCommand::Save);
                }
                if ui.button("Save as…").clicked() {
                    self.queue.push(AppCommand::SaveAs(None));
                }
                ui.separator();
                if ui.button("Import animation (BVH, glTF)…").clicked() {
                    self.queue.push(AppCommand::ImportAnimation(None));
                }
                if ui.button("Import tags (JSON, CSV)…").clicked() {
                    self.queue.push(AppCommand::ImportTags(None));
                }
                ui.menu_button("Export tags", |ui| {
                    if ui.button("Project JSON…").clicked() {
                        self.queue.push(AppCommand::Export(ExportKind::Json, None));
                    }
                    if ui.button("CSV…").clicked() {
                        self.queue.push(AppCommand::Export(ExportKind::Csv, None));
                    }
                    if ui.button("One JSON per clip…").clicked() {
                        self.queue
                            .push(AppCommand::Export(ExportKind::PerClipJson, None));
                    }
                });
                ui.separator();
                let mut in_app = self.prefs.dialogs == DialogBackend::InApp;
                if ui
                    .checkbox(&mut in_app, "Use taglane's file browser")
                    .on_hover_text("Instead of the system's file dialog")
                    .changed()
                {
                    self.prefs.dialogs = if in_app {
                        DialogBackend::InApp
                    } else {
                        DialogBackend::System
                    };
                    self.native_unavailable = false;
                }
                ui.separator();
                if ui.button("Quit").clicked() {
                    self.queue.push(AppCommand::Guarded(Guarded::Quit));
                }
            });
            ui.menu_button("Edit", |ui| {
                let undo = self
                    .project
                    .history
                    .undo_label()
                    .map_or("Undo".to_owned(), |l| format!("Undo {l}"));
                if ui
                    .add_enabled(self.project.history.can_undo(), egui::Button::new(undo))
                    .clicked()
                {
                    self.queue.push(AppCommand::Undo);
                }
                let redo = self
                    .project
                    .history
                    .redo_label()
                    .map_or("Redo".to_owned(), |l| format!("Redo {l}"));
                if ui
                    .add_enabled(self.project.history.can_redo(), egui::Button::new(redo))
                    .clicked()
                {
                    self.queue.push(AppCommand::Redo);
                }
                ui.separator();
                for (label, cmd) in [
                    ("Copy ranges", AppCommand::Copy),
                    ("Paste ranges", AppCommand::Paste { into_active: false }),
                    (
                        "Paste into active lane",
                        AppCommand::Paste { into_active: true },
                    ),
                    ("Delete ranges", AppCommand::DeleteSelection),
                    ("Split at playhead", AppCommand::SplitAtPlayhead),
                    ("Select all ranges", AppCommand::SelectAll),
                ] {
                    if ui.button(label).clicked() {
                        self.queue.push(cmd);
                    }
                }
                ui.separator();
                if ui.button("New tag").clicked() {
                    self.queue.push(AppCommand::NewTag);
                }
            });
            ui.menu_button("View", |ui| {
                if ui.button("Fit clip").clicked() {
                    self.queue.push(AppCommand::FitView);
                }
                let dark = self.prefs.dark;
                if ui.radio(dark, "Dark theme").clicked() {
                    self.queue.push(AppCommand::SetDarkMode(true));
                }
                if ui.radio(!dark, "Light theme").clicked() {
                    self.queue.push(AppCommand::SetDarkMode(false));
                }
            });
            ui.menu_button("Help", |ui| {
                if ui.button("Keyboard shortcuts").clicked() {
                    self.queue.push(AppCommand::ShowHelp(true));
                }
            });
        });
    }

    fn transport_ui(&mut self, ui: &mut Ui) {
        let fps = self.fps();
        let frames = self.frames();
        // Wrapped: with the pose panel open the row may not fit, and a row wider than the panel
        // would widen the timeline under the panel.
        ui.horizontal_wrapped(|ui| {
            if ui
                .button("Start")
                .on_hover_text("First frame (Home)")
                .clicked()
            {
                self.queue.push(AppCommand::JumpStart);
            }
            if ui
                .button("Prev")
                .on_hover_text("Previous frame (Left)")
                .clicked()
            {
                self.queue.push(AppCommand::StepFrames(-1));
            }
            let play = if self.playback.playing {
                "Pause"
            } else {
                "Play"
            };
            if ui
                .button(play)
                .on_hover_text("Play / pause (Space)")
                .clicked()
            {
                self.queue.push(AppCommand::TogglePlay);
            }
            if ui
                .button("Next")
                .on_hover_text("Next frame (Right)")
                .clicked()
            {
                self.queue.push(AppCommand::StepFrames(1));
            }
            if ui.button("End").on_hover_text("Last frame (End)").clicked() {
                self.queue.push(AppCommand::JumpEnd);
            }
            if ui
                .button("|<")
                .on_hover_text("Previous range edge (Ctrl+Left)")
                .clicked()
            {
                self.queue.push(AppCommand::JumpEdge(false));
            }
            if ui
                .button(">|")
                .on_hover_text("Next range edge (Ctrl+Right)")
                .clicked()
            {
                self.queue.push(AppCommand::JumpEdge(true));
            }
            if ui
                .selectable_label(self.playback.looping, "Loop")
                .on_hover_text("Loop playback")
                .clicked()
            {
                self.queue.push(AppCommand::ToggleLoop);
            }
            let mut speed = self.playback.speed;
            egui::ComboBox::from_label("Speed")
                .selected_text(format!("{speed}×"))
                .show_ui(ui, |ui| {
                    for s in [0.1f32, 0.25, 0.5, 1.0, 2.0] {
                        ui.selectable_value(&mut speed, s, format!("{s}×"));
                    }
                });
            if speed != self.playback.speed {
                self.queue.push(AppCommand::SetSpeed(speed));
            }
            ui.separator();
            let f = self.playback.playhead;
            ui.monospace(format!(
                "frame {:>6.0} / {}   {:>7.3} s",
                f.floor(),
                frames.saturating_sub(1),
                f / fps as f64
            ));
            ui.separator();
            if ui
                .button("New tag")
                .on_hover_text("Add a tag lane (Ctrl+T)")
                .clicked()
            {
                self.queue.push(AppCommand::NewTag);
            }
            if let Some(t) = self.active_tag {
                if ui.button("Rename tag").clicked() {
                    self.queue.push(AppCommand::StartRename(t));
                }
                if ui.button("Delete tag").clicked() {
                    self.queue.push(AppCommand::AskDeleteTag(t));
                }
            }
            if ui.button("Fit").on_hover_text("Fit the clip (F)").clicked() {
                self.queue.push(AppCommand::FitView);
            }
        });
    }

    fn status_ui(&mut self, ui: &mut Ui) {
        ui.horizontal(|ui| {
            let fps = self.fps() as f64;
            let f = self.playback.playhead.floor();
            ui.monospace(format!("frame {f:.0}  {:.3} s", f / fps));
            ui.separator();
            let frames_sel: u64 = self.selection.iter().map(|(_, r)| r.len() as u64).sum();
            ui.label(format!(
                "{} range(s) selected, {} frames",
                self.selection.len(),
                frames_sel
            ));
            if let Some(m) = self.playback.mark_in {
                ui.separator();
                ui.label(format!("in: {m}"));
            }
            ui.separator();
            if let Some((level, text)) = &self.status {
                let pal = crate::ui::theme::palette(self.prefs.dark);
                let color = match level {
                    Level::Info => ui.visuals().text_color(),
                    Level::Warning => pal.warning,
                    Level::Error => pal.error,
                };
                ui.add(egui::Label::new(egui::RichText::new(text).color(color)).truncate())
                    .on_hover_text(text);
            }
        });
    }

    fn help_ui(&mut self, ctx: &egui::Context) {
        let mut open = self.show_help;
        egui::Window::new("Keyboard shortcuts")
            .open(&mut open)
            .resizable(false)
            .show(ctx, |ui| {
                egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
                    for (keys, what) in SHORTCUTS {
                        ui.monospace(*keys);
                        ui.label(*what);
                        ui.end_row();
                    }
                });
            });
        self.show_help = open;
    }

    /// Applies one command. Every change of state goes through here.
    pub fn apply(&mut self, cmd: AppCommand, ctx: &egui::Context) {
        let frames = self.frames();
        match cmd {
            AppCommand::Edit {
                edit,
                label,
                select,
            } => {
                if let Err(e) = self
                    .project
                    .history
                    .apply(&mut self.project.doc, edit, &label)
                {
                    self.message(Level::Error, format!("{label}: {e}"));
                } else {
                    self.message(Level::Info, label);
                    self.selection = select.unwrap_or_default();
                }
            }
            AppCommand::EditKeyed { edit, label, key } => {
                if let Err(e) =
                    self.project
                        .history
                        .apply_keyed(&mut self.project.doc, edit, &label, Some(key))
                {
                    self.message(Level::Error, format!("{label}: {e}"));
                }
            }
            AppCommand::Undo => {
                match self.project.history.undo(&mut self.project.doc) {
                    Some(l) => self.message(Level::Info, format!("undid {l}")),
                    None => self.message(Level::Info, "nothing to undo"),
                }
                self.after_structure_change();
            }
            AppCommand::Redo => {
                match self.project.history.redo(&mut self.project.doc) {
                    Some(l) => self.message(Level::Info, format!("redid {l}")),
                    None => self.message(Level::Info, "nothing to redo"),
                }
                self.after_structure_change();
            }
            AppCommand::SetPlayhead(f) => {
                self.playback.playhead = f.clamp(0.0, frames.saturating_sub(1) as f64)
            }
            AppCommand::TogglePlay => {
                if !self.playback.playing
                    && self.playback.playhead >= frames.saturating_sub(1) as f64
                {
                    self.playback.playhead = 0.0;
                }
                self.playback.playing = !self.playback.playing && frames > 1;
            }
            AppCommand::Stop => self.playback.playing = false,
            AppCommand::StepFrames(n) => {
                self.playback.playing = false;
                let p = self.playback.playhead.floor() + n as f64;
                self.playback.playhead = p.clamp(0.0, frames.saturating_sub(1) as f64);
            }
            AppCommand::JumpEdge(forward) => {
                let lanes = (0..self.project.doc.tags.len())
                    .filter(|&t| !self.timeline.is_dimmed(&self.project.doc.tags[t].name));
                let edges = model::edges(&self.project.doc, self.current_clip, lanes);
                let p = self.playback.playhead.floor() as u32;
                let target = if forward {
                    edges.iter().find(|&&e| e > p)
                } else {
                    edges.iter().rev().find(|&&e| e < p)
                };
                if let Some(&e) = target {
                    self.playback.playhead = e.min(frames.saturating_sub(1)) as f64;
                }
            }
            AppCommand::JumpStart => self.playback.playhead = 0.0,
            AppCommand::JumpEnd => self.playback.playhead = frames.saturating_sub(1) as f64,
            AppCommand::ToggleLoop => self.playback.looping = !self.playback.looping,
            AppCommand::SetSpeed(s) => self.playback.speed = s.clamp(0.01, 10.0),
            AppCommand::SelectClip(c) => {
                if (c as usize) < self.project.doc.clips.len() && c != self.current_clip {
                    self.current_clip = c;
                    self.selection.clear();
                    self.playback.playhead = 0.0;
                    self.playback.mark_in = None;
                    self.timeline.fit_pending = true;
                }
            }
            AppCommand::Select(s) => self.selection = s,
            AppCommand::ToggleSelected(item) => {
                if let Some(i) = self.selection.iter().position(|s| *s == item) {
                    self.selection.remove(i);
                } else {
                    self.selection.push(item);
                }
            }
            AppCommand::SelectAll => {
                self.selection = self
                    .project
                    .doc
                    .tags
                    .iter()
                    .enumerate()
                    .flat_map(|(t, tag)| {
                        tag.ranges
                            .get(&self.current_clip)
                            .into_iter()
                            .flatten()
                            .map(move |r| (t, *r))
                    })
                    .collect();
            }
            AppCommand::ExtraRangeClicked { range, .. } => {
                self.playback.playing = false;
                self.playback.playhead = range.start as f64;
            }
            AppCommand::SetActiveTag(t) => {
                if t != self.active_tag {
                    self.playback.mark_in = None;
                }
                self.active_tag = t;
            }
            AppCommand::Copy => {
                if self.selection.is_empty() {
                    self.message(Level::Info, "select ranges to copy");
                } else {
                    self.clipboard = Clipboard::copy(&self.project.doc, &self.selection);
                    self.message(
                        Level::Info,
                        format!("copied {} range(s)", self.clipboard.items.len()),
                    );
                }
            }
            AppCommand::Paste { into_active } => {
                let into = if into_active { self.active_tag } else { None };
                let at = self.playback.playhead.floor() as u32;
                let (edit, missing) =
                    self.clipboard
                        .paste(&self.project.doc, self.current_clip, at, into);
                if let Some(edit) = edit {
                    self.queue_now(edit, "paste ranges", ctx);
                }
                if !missing.is_empty() {
                    self.message(
                        Level::Warning,
                        format!("not pasted: this project has no tag named {} (use Ctrl+Shift+V to paste into the active lane)", missing.join(", ")),
                    );
                }
            }
            AppCommand::DeleteSelection => {
                if let Some(edit) =
                    model::delete_selected(&self.project.doc, self.current_clip, &self.selection)
                {
                    self.queue_now(edit, "delete ranges", ctx);
                    self.selection.clear();
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
                        self.queue_now(edit, "split range", ctx);
                        self.selection.clear();
                    }
                    None => self.message(
                        Level::Info,
                        "no range under the playhead to split (select one, or pick its lane)",
                    ),
                }
            }
            AppCommand::MarkIn => {
                if self.active_tag.is_none() {
                    self.message(Level::Warning, "pick a lane first (click its name)");
                } else {
                    let f = self.playback.playhead.floor() as u32;
                    self.playback.mark_in = Some(f);
                    self.message(
                        Level::Info,
                        format!("mark in at frame {f}; press O to mark out"),
                    );
                }
            }
            AppCommand::MarkOut => {
                let (Some(tag), Some(start)) = (self.active_tag, self.playback.mark_in) else {
                    self.message(Level::Warning, "mark in first (I) on the active lane");
                    return;
                };
                let f = self.playback.playhead.floor() as u32;
                let (a, b) = (start.min(f), start.max(f));
                let mut list = self.project.doc.tags[tag]
                    .ranges
                    .get(&self.current_clip)
                    .cloned()
                    .unwrap_or_default();
                list.push(crate::core::tags::Range::new(a, b + 1));
                let edit = Edit::SetRanges {
                    tag,
                    clip: self.current_clip,
                    ranges: list,
                };
                self.queue_now(edit, "mark range", ctx);
                self.playback.mark_in = None;
            }
            AppCommand::NewTag => {
                let mut n = 1;
                let name = loop {
                    let candidate = if n == 1 {
                        "NewTag".to_owned()
                    } else {
                        format!("NewTag{n}")
                    };
                    if !self.project.doc.tags.iter().any(|t| t.name == candidate) {
                        break candidate;
                    }
                    n += 1;
                };
                let index = self
                    .active_tag
                    .map_or(self.project.doc.tags.len(), |t| t + 1)
                    .min(self.project.doc.tags.len());
                let edit = Edit::InsertTag {
                    index,
                    tag: Tag {
                        name: name.clone(),
                        color: None,
                        ranges: Default::default(),
                        version: 0,
                    },
                };
                if self
                    .project
                    .history
                    .apply(&mut self.project.doc, edit, "new tag")
                    .is_ok()
                {
                    self.active_tag = Some(index);
                    self.selection.clear();
                    self.dialog = Some(Dialog::Rename { index, name });
                }
            }
            AppCommand::StartRename(index) => {
                if let Some(t) = self.project.doc.tags.get(index) {
                    self.dialog = Some(Dialog::Rename {
                        index,
                        name: t.name.clone(),
                    });
                }
            }
            AppCommand::RenameTag { index, name } => {
                let name = name.trim().to_owned();
                let Some(old) = self.project.doc.tags.get(index).map(|t| t.name.clone()) else {
                    return;
                };
                if name == old {
                    return;
                }
                let queries_before = self.project.doc.queries.clone();
                match self.project.history.apply(
                    &mut self.project.doc,
                    Edit::RenameTag {
                        index,
                        name: name.clone(),
                    },
                    format!("rename {old} to {name}"),
                ) {
                    Ok(()) => {
                        for set in [&mut self.timeline.hidden, &mut self.timeline.solo] {
                            if set.remove(&old) {
                                set.insert(name.clone());
                            }
                        }
                        let q = if self.project.doc.queries != queries_before {
                            " (saved queries updated)"
                        } else {
                            ""
                        };
                        self.message(Level::Info, format!("renamed {old} to {name}{q}"));
                    }
                    Err(e) => {
                        self.message(Level::Error, format!("cannot rename: {e}"));
                        self.dialog = Some(Dialog::Rename { index, name });
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
                    self.queue_now(Edit::MoveTag { from: index, to }, "reorder tags", ctx);
                    self.after_structure_change();
                    if self.active_tag == Some(index) {
                        self.active_tag = Some(to);
                    }
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
                self.queue_now(
                    Edit::RemoveTag { index },
                    &format!("delete tag {name}"),
                    ctx,
                );
                self.after_structure_change();
            }
            AppCommand::ToggleHidden(n) => toggle(&mut self.timeline.hidden, n),
            AppCommand::ToggleSolo(n) => toggle(&mut self.timeline.solo, n),
            AppCommand::ToggleGroup(n) => toggle(&mut self.timeline.collapsed, n),
            AppCommand::FitView => self.timeline.fit_pending = true,
            AppCommand::Zoom(f) => {
                let centre = self.playback.playhead;
                self.timeline.zoom_around(f as f64, centre);
            }
            AppCommand::SetDarkMode(d) => self.prefs.dark = d,
            AppCommand::ShowHelp(s) => self.show_help = s,
            AppCommand::Guarded(action) => self.guarded(action, false, ctx),
            AppCommand::GuardedDiscard(action) => self.guarded(action, true, ctx),
            AppCommand::SaveThen(action) => {
                match self.project.path.clone().filter(|_| !self.project.is_demo) {
                    Some(p) => {
                        self.save_to(&p);
                        if !self.project.history.is_dirty() {
                            self.apply(AppCommand::Guarded(action), ctx);
                        }
                    }
                    None => {
                        let req = self.save_as_request().after(AppCommand::Guarded(action));
                        self.ask_path(req);
                    }
                }
            }
            AppCommand::AskPath(req) => self.ask_path(*req),
            AppCommand::Save => match self.project.path.clone().filter(|_| !self.project.is_demo) {
                Some(p) => self.save_to(&p),
                None => self.apply(AppCommand::SaveAs(None), ctx),
            },
            AppCommand::SaveAs(Some(p)) => self.save_to(&p),
            AppCommand::SaveAs(None) => {
                let req = self.save_as_request();
                self.ask_path(req);
            }
            AppCommand::ImportAnimation(Some(paths)) => {
                for p in paths {
                    self.import_animation(&p);
                }
            }
            AppCommand::ImportAnimation(None) => self.ask_path(
                PathRequest::new(
                    "Import animation",
                    PathKind::OpenMany,
                    AppCommand::ImportAnimation(None),
                )
                .filter("Animation", &["bvh", "glb", "gltf"]),
            ),
            AppCommand::ImportTags(Some(p)) => self.import_tags(&p),
            AppCommand::ImportTags(None) => self.ask_path(
                PathRequest::new("Import tags", PathKind::Open, AppCommand::ImportTags(None))
                    .filter("Tags", &["json", "csv"]),
            ),
            AppCommand::Export(kind, Some(p)) => self.export(kind, &p),
            AppCommand::Export(kind, None) => {
                let req = self.export_request(kind);
                self.ask_path(req);
            }
            AppCommand::Relink { clip, path: None } => self.ask_path(
                PathRequest::new(
                    "Find the clip's animation file",
                    PathKind::Open,
                    AppCommand::Relink { clip, path: None },
                )
                .filter("Animation", &["bvh", "glb", "gltf"]),
            ),
            AppCommand::Relink {
                clip,
                path: Some(p),
            } => {
                let source = relative_source(&p, self.project.base_dir().as_deref());
                self.queue_now(
                    Edit::SetClipSource {
                        clip,
                        source: Some(source),
                    },
                    "relink clip",
                    ctx,
                );
            }
            AppCommand::RecoverAutosave(origin) => {
                if origin != Origin::of(&self.project) {
                    self.apply(AppCommand::Guarded(Guarded::Recover(origin)), ctx);
                    return;
                }
                match self.recovery.load(&origin) {
                    Ok((doc, warnings)) => {
                        let edits = self
                            .recovery
                            .pending_for(&origin)
                            .map_or(1, |i| i.unsaved_edits);
                        self.project.doc = doc;
                        self.project.history.clear();
                        self.project.history.mark_unsaved();
                        self.after_structure_change();
                        self.message(
                            Level::Info,
                            format!(
                                "recovered {edits} unsaved edit(s) of {}: save to keep them{}",
                                origin.describe(),
                                warn_suffix(&warnings)
                            ),
                        );
                    }
                    Err(e) => self.message(Level::Error, format!("cannot recover: {e}")),
                }
            }
            AppCommand::DiscardAutosave(origin) => {
                self.recovery.clear(&origin);
                self.message(
                    Level::Info,
                    format!("deleted the autosave of {}", origin.describe()),
                );
            }
            AppCommand::QueryJump { clip, range } => {
                self.apply(AppCommand::SelectClip(clip), ctx);
                self.playback.playing = false;
                self.playback.playhead = range.start as f64;
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
            AppCommand::QueryCut { dir: None } => self.ask_path(PathRequest::new(
                "Folder for the cut BVH files",
                PathKind::Folder,
                AppCommand::QueryCut { dir: None },
            )),
            AppCommand::QueryCut { dir: Some(d) } => {
                let base = self.project.base_dir();
                let demo = self.project.is_demo;
                match self.query.start_cut(&self.project.doc, d, base, demo) {
                    Ok(()) => self.message(Level::Info, "cutting query result into BVH files"),
                    Err(e) => self.message(Level::Error, e),
                }
            }
            AppCommand::SetCompressionExportDir(None) => self.ask_path(PathRequest::new(
                "Export compressed clips to",
                PathKind::Folder,
                AppCommand::SetCompressionExportDir(None),
            )),
            AppCommand::SetCompressionExportDir(Some(d)) => {
                self.compression.export_dir = Some(d);
            }
            AppCommand::CompressionExport { only, dir: None } => self.ask_path(PathRequest::new(
                "Export compressed clips to",
                PathKind::Folder,
                AppCommand::CompressionExport { only, dir: None },
            )),
            AppCommand::CompressionExport { only, dir: Some(d) } => {
                self.compression.export_dir = Some(d);
                match self.compression.start_export(only) {
                    Ok(()) => self.compression.status = Some("exporting...".into()),
                    Err(e) => self.compression.status = Some(format!("export failed: {e}")),
                }
            }
        }
    }

    /// Applies an edit immediately as one history step.
    fn queue_now(&mut self, edit: Edit, label: &str, _ctx: &egui::Context) {
        match self
            .project
            .history
            .apply(&mut self.project.doc, edit, label)
        {
            Ok(()) => self.message(Level::Info, label.to_owned()),
            Err(e) => self.message(Level::Error, format!("{label}: {e}")),
        }
    }

    /// Keeps indices valid after tags or clips were added, removed or reordered.
    fn after_structure_change(&mut self) {
        let tags = self.project.doc.tags.len();
        let doc = &self.project.doc;
        let clip = self.current_clip;
        self.selection.retain(|(t, r)| {
            doc.tags
                .get(*t)
                .and_then(|tag| tag.ranges.get(&clip))
                .is_some_and(|l| l.contains(r))
        });
        if self.active_tag.is_some_and(|t| t >= tags) {
            self.active_tag = tags.checked_sub(1);
        }
        if self.current_clip as usize >= self.project.doc.clips.len() {
            self.current_clip = self.project.doc.clips.len().saturating_sub(1) as ClipId;
        }
    }

    /// Runs an action that replaces or closes the project. With unsaved changes it asks first,
    /// unless `discard` (the user already chose "Don't save"); the changes (and their autosave)
    /// are dropped only when the action really replaces the project.
    fn guarded(&mut self, action: Guarded, discard: bool, ctx: &egui::Context) {
        if self.project.history.is_dirty() && !discard {
            self.dialog = Some(Dialog::Unsaved(action));
            return;
        }
        match action {
            Guarded::New => {
                self.replace_project(Project::default(), discard);
                self.message(
                    Level::Info,
                    "new project: import animation files to add clips",
                );
            }
            Guarded::OpenDemo => {
                self.replace_project(Project::demo(), discard);
                self.offer_recovery();
            }
            Guarded::Open(None) => {
                let then = if discard {
                    AppCommand::GuardedDiscard(Guarded::Open(None))
                } else {
                    AppCommand::Guarded(Guarded::Open(None))
                };
                self.ask_path(
                    PathRequest::new("Open project", PathKind::Open, then)
                        .filter("taglane project", &["json"]),
                );
            }
            Guarded::Open(Some(p)) => self.open_with(&p, discard),
            Guarded::Recover(origin) => {
                let project = match &origin {
                    Origin::Demo => Ok(Project::demo()),
                    Origin::Untitled => Ok(Project::default()),
                    Origin::File(p) if p.is_file() => Project::load(p).map(|(p, _)| p),
                    // The file is gone: recover into a project that saves back to its path.
                    Origin::File(p) => Ok(Project {
                        path: Some(p.clone()),
                        ..Project::default()
                    }),
                };
                match project {
                    Ok(project) => {
                        self.replace_project(project, discard);
                        self.apply(AppCommand::RecoverAutosave(origin), ctx);
                    }
                    Err(e) => self.message(Level::Error, format!("cannot recover: {e}")),
                }
            }
            Guarded::Quit => {
                self.allow_close = true;
                self.recovery.clear(&Origin::of(&self.project));
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
        }
    }

    /// Opens a project file (no unsaved-changes check).
    pub fn open(&mut self, path: &Path) {
        self.open_with(path, false);
    }

    /// Opens a project file; when it loads, the current project is replaced (its autosave dropped
    /// if `discard`) and the new project's own autosave, if any, is offered.
    fn open_with(&mut self, path: &Path, discard: bool) {
        match Project::load(path) {
            Ok((project, warnings)) => {
                self.replace_project(project, discard);
                self.add_recent(path);
                self.message(
                    if warnings.is_empty() {
                        Level::Info
                    } else {
                        Level::Warning
                    },
                    format!("opened {}{}", path.display(), warn_suffix(&warnings)),
                );
                self.offer_recovery();
            }
            Err(e) => self.message(Level::Error, format!("{e} (the open project is unchanged)")),
        }
    }

    fn replace_project(&mut self, project: Project, discard: bool) {
        if discard {
            self.recovery.clear(&Origin::of(&self.project));
        }
        self.project = project;
        self.current_clip = 0;
        self.selection.clear();
        self.playback = Playback::default();
        self.active_tag = (!self.project.doc.tags.is_empty()).then_some(0);
        self.timeline = TimelineView::default();
    }

    fn add_recent(&mut self, path: &Path) {
        let p = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        self.prefs.recent.retain(|r| r != &p);
        self.prefs.recent.insert(0, p);
        self.prefs.recent.truncate(10);
    }

    fn save_to(&mut self, path: &Path) {
        let before = Origin::of(&self.project);
        match self.project.save_to(path) {
            Ok(()) => {
                self.add_recent(path);
                self.recovery.clear(&before);
                self.recovery.clear(&Origin::of(&self.project));
                self.message(Level::Info, format!("saved {}", path.display()));
            }
            Err(e) => self.message(Level::Error, e),
        }
    }

    fn import_animation(&mut self, path: &Path) {
        match load_animation(path, &ImportOptions::default()) {
            Ok(imported) => {
                let source = relative_source(path, self.project.base_dir().as_deref());
                let mut added = Vec::new();
                let mut edits = Vec::new();
                let first_index = self.project.doc.clips.len();
                for (index, clip) in (first_index..).zip(&imported.clips) {
                    let mut name = clip.name.clone();
                    let mut n = 2;
                    while self.project.doc.clips.iter().any(|c| c.name == name)
                        || added.contains(&name)
                    {
                        name = format!("{}_{n}", clip.name);
                        n += 1;
                    }
                    edits.push(Edit::InsertClip {
                        index,
                        clip: ClipInfo {
                            name: name.clone(),
                            frames: clip.frame_count as u32,
                            fps: clip.fps,
                            source: Some(source.clone()),
                            unit_cm: None,
                        },
                        ranges: vec![],
                    });
                    added.push(name);
                }
                let first = self.project.doc.clips.len() as ClipId;
                match self.project.history.apply(
                    &mut self.project.doc,
                    Edit::Batch(edits),
                    format!("import {}", path.display()),
                ) {
                    Ok(()) => {
                        let warnings: Vec<String> = imported
                            .warnings
                            .iter()
                            .map(|w| format!("{}: {w}", path.display()))
                            .collect();
                        self.message(
                            if warnings.is_empty() {
                                Level::Info
                            } else {
                                Level::Warning
                            },
                            format!(
                                "imported {} clip(s) from {}{}",
                                added.len(),
                                path.display(),
                                warn_suffix(&warnings)
                            ),
                        );
                        self.queue.push(AppCommand::SelectClip(first));
                    }
                    Err(e) => self.message(Level::Error, format!("{}: {e}", path.display())),
                }
            }
            Err(e) => self.message(Level::Error, e.to_string()),
        }
    }

    fn import_tags(&mut self, path: &Path) {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        let result = if ext == "csv" {
            exchange::load_csv_file(path).map(|rows| exchange::merge_csv(&self.project.doc, &rows))
        } else {
            crate::core::tags::TagDocument::load(path)
                .map_err(|e| e.to_string())
                .map(|(incoming, _)| exchange::merge_document(&self.project.doc, &incoming))
        };
        match result {
            Ok((edit, report)) if edit.is_empty() => {
                let level = if report.conflicts.is_empty() {
                    Level::Info
                } else {
                    Level::Warning
                };
                self.message(
                    level,
                    format!(
                        "{}: nothing new to merge; {}",
                        path.display(),
                        report.summary()
                    ),
                );
            }
            Ok((edit, report)) => match self.project.history.apply(
                &mut self.project.doc,
                edit,
                format!("import tags from {}", path.display()),
            ) {
                Ok(()) => {
                    let level = if report.conflicts.is_empty() {
                        Level::Info
                    } else {
                        Level::Warning
                    };
                    self.message(level, format!("{}: {}", path.display(), report.summary()));
                }
                Err(e) => self.message(Level::Error, format!("{}: {e}", path.display())),
            },
            Err(e) => self.message(Level::Error, e),
        }
    }

    fn export_request(&self, kind: ExportKind) -> PathRequest {
        let stem = self
            .project
            .title()
            .trim_end_matches(".json")
            .trim_end_matches(".taglane")
            .to_owned();
        let then = AppCommand::Export(kind, None);
        match kind {
            ExportKind::Json => PathRequest::new("Export tags as JSON", PathKind::Save, then)
                .filter("JSON", &["json"])
                .file_name(&format!("{stem}.tags.json")),
            ExportKind::Csv => PathRequest::new("Export tags as CSV", PathKind::Save, then)
                .filter("CSV", &["csv"])
                .file_name(&format!("{stem}.csv")),
            ExportKind::PerClipJson => {
                PathRequest::new("Folder for one JSON file per clip", PathKind::Folder, then)
            }
        }
    }

    fn save_as_request(&self) -> PathRequest {
        PathRequest::new("Save project", PathKind::Save, AppCommand::SaveAs(None))
            .filter("taglane project", &["json"])
            .file_name(&format!(
                "{}.taglane.json",
                self.project
                    .title()
                    .trim_end_matches(".json")
                    .trim_end_matches(".taglane")
                    .replace(' ', "_")
            ))
    }

    /// Asks for a path: the system dialog when it can open, else the in-app browser (saying so).
    /// The request's command runs with the path; nothing happens on cancel but a status message.
    pub fn ask_path(&mut self, request: PathRequest) {
        let start = self
            .project
            .base_dir()
            .filter(|d| d.is_dir())
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"));
        if self.prefs.dialogs == DialogBackend::System && !self.native_unavailable {
            match (self.native_dialog)(&request, Some(&start)) {
                NativeAnswer::Chosen(paths) => self.path_chosen(request, paths),
                NativeAnswer::Cancelled => {
                    self.message(Level::Info, format!("{}: cancelled", request.title))
                }
                NativeAnswer::Unavailable => {
                    self.native_unavailable = true;
                    self.message(
                        Level::Warning,
                        "the system file dialog could not open (no desktop portal or GTK): \
                         using taglane's file browser",
                    );
                    self.file_browser = Some(FileBrowser::new(request, start));
                }
            }
        } else {
            self.file_browser = Some(FileBrowser::new(request, start));
        }
    }

    fn path_chosen(&mut self, request: PathRequest, paths: Vec<PathBuf>) {
        match request.then.with_paths(paths) {
            Some(cmd) => {
                self.queue.push(cmd);
                if let Some(after) = request.after {
                    self.queue.push(*after);
                }
            }
            None => self.message(Level::Error, format!("{}: no path chosen", request.title)),
        }
    }

    fn file_browser_ui(&mut self, ctx: &egui::Context) {
        let Some(browser) = self.file_browser.as_mut() else {
            return;
        };
        match browser.ui(ctx) {
            crate::ui::file_dialog::BrowserOutcome::Open => {}
            crate::ui::file_dialog::BrowserOutcome::Cancelled => {
                let title = browser.request.title.clone();
                self.file_browser = None;
                self.message(Level::Info, format!("{title}: cancelled"));
            }
            crate::ui::file_dialog::BrowserOutcome::Chosen(paths) => {
                let request = browser.request.clone();
                self.file_browser = None;
                self.path_chosen(request, paths);
            }
        }
    }

    fn export(&mut self, kind: ExportKind, path: &Path) {
        let path = path.to_path_buf();
        let result = match kind {
            ExportKind::Json => self
                .project
                .doc
                .save(&path, false)
                .map_err(|e| e.to_string())
                .map(|_| 1),
            ExportKind::Csv => crate::core::io::write_atomic(
                &path,
                exchange::to_csv(&self.project.doc).as_bytes(),
                false,
            )
            .map_err(|e| e.to_string())
            .map(|_| 1),
            ExportKind::PerClipJson => std::fs::create_dir_all(&path)
                .map_err(|e| e.to_string())
                .and_then(|_| {
                    let files = exchange::per_clip_json(&self.project.doc);
                    for (name, text) in &files {
                        let file = path.join(format!("{}.tags.json", sanitize_file_name(name)));
                        crate::core::io::write_atomic(&file, text.as_bytes(), false)
                            .map_err(|e| format!("{}: {e}", file.display()))?;
                    }
                    Ok(files.len())
                }),
        };
        match result {
            Ok(n) => self.message(
                Level::Info,
                format!("exported {n} file(s) to {}", path.display()),
            ),
            Err(e) => self.message(
                Level::Error,
                format!("{}: cannot export: {e}", path.display()),
            ),
        }
    }

    fn autosave_tick(&mut self) {
        if self.last_autosave.elapsed() < Duration::from_secs(30) {
            return;
        }
        self.last_autosave = Instant::now();
        if self.project.history.is_dirty()
            && let Err(e) = self.recovery.save(&self.project)
        {
            self.message(Level::Warning, format!("autosave failed: {e}"));
        }
    }
}

fn toggle(set: &mut std::collections::BTreeSet<String>, name: String) {
    if !set.remove(&name) {
        set.insert(name);
    }
}

fn warn_suffix(warnings: &[String]) -> String {
    match warnings.len() {
        0 => String::new(),
        1 => format!(" (warning: {})", warnings[0]),
        n => format!(" ({n} warnings; first: {})", warnings[0]),
    }
}

/// A file name safe on every platform for a clip name.
pub fn sanitize_file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The `source` path stored for an animation file: relative to the project's folder when the file
/// is inside it, absolute otherwise.
fn relative_source(path: &Path, base: Option<&Path>) -> String {
    let abs = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if let Some(base) = base.and_then(|b| b.canonicalize().ok())
        && let Ok(rel) = abs.strip_prefix(&base)
    {
        return rel.to_string_lossy().replace('\\', "/");
    }
    abs.to_string_lossy().into_owned()
}

impl eframe::App for TaglaneApp {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        if ctx.input(|i| i.viewport().close_requested()) && !self.allow_close {
            if self.project.history.is_dirty() {
                ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
                self.dialog = Some(Dialog::Unsaved(Guarded::Quit));
            } else {
                self.recovery.clear(&Origin::of(&self.project));
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
