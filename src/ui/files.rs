//! Files: the unsaved-changes guard, open, save, import, export, relink, the path dialogs (system
//! or in-app), dropped files, autosave and recovery.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::core::doc::{Edit, exchange};
use crate::core::io::project_relative;
use crate::core::tags::TagDocument;
use crate::ui::app::{Dialog, Level, TaglaneApp};
use crate::ui::command::{AppCommand, ExportKind, Guarded};
use crate::ui::dialogs::ReplaceWhat;
use crate::ui::file_dialog::{DialogBackend, FileBrowser, NativeAnswer, PathKind, PathRequest};
use crate::ui::project::Project;
use crate::ui::recovery::{AutosaveInfo, Origin, Recovery};
use crate::ui::timeline::TimelineView;
use crate::ui::transport::Playback;

/// File dialogs, autosave and recovery.
pub struct Files {
    /// The in-app file browser, while it is open.
    pub browser: Option<FileBrowser>,
    /// Files dropped on the window while a modal window was open, handled once it closes.
    pub dropped: Vec<PathBuf>,
    /// The system file dialog (tests replace it to simulate one that cannot open).
    pub native_dialog: fn(&PathRequest, Option<&Path>) -> NativeAnswer,
    /// Set once the system dialog failed to open: the in-app browser is used from then on.
    pub native_unavailable: bool,
    /// Autosaves of this and other projects.
    pub recovery: Recovery,
    /// Stale sidecars the user chose to keep for the open project: not asked about again.
    pub kept_sidecars: std::collections::HashSet<PathBuf>,
    /// How often a project with unsaved changes is autosaved (30 s; tests shorten it).
    pub autosave_every: Duration,
    last_autosave: Instant,
    /// An autosave of the open project was written since it was last clean.
    autosave_written: bool,
}

impl Files {
    pub fn new(recovery: Recovery) -> Self {
        Self {
            browser: None,
            dropped: Vec::new(),
            native_dialog: crate::ui::file_dialog::native_dialog,
            native_unavailable: false,
            recovery,
            kept_sidecars: Default::default(),
            autosave_every: Duration::from_secs(30),
            last_autosave: Instant::now(),
            autosave_written: false,
        }
    }
}

impl TaglaneApp {
    /// Applies a file command; returns it back when it is not one.
    pub(crate) fn file_command(
        &mut self,
        cmd: AppCommand,
        ctx: &egui::Context,
    ) -> Option<AppCommand> {
        match cmd {
            AppCommand::Guarded(action) => self.guarded(action, false, ctx),
            AppCommand::GuardedDiscard(action) => self.guarded(action, true, ctx),
            AppCommand::SaveThen(action) => {
                self.take_autotag_settings();
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
            AppCommand::Save => {
                // The auto-tag panel's settings go into the file with the rest (a save said
                // "saved" and left them out).
                self.take_autotag_settings();
                match self.project.path.clone().filter(|_| !self.project.is_demo) {
                    Some(p) => self.save_to(&p),
                    None => self.apply(AppCommand::SaveAs(None), ctx),
                }
            }
            AppCommand::SaveAs(Some(p)) => {
                self.take_autotag_settings();
                self.save_to(&p);
            }
            AppCommand::SaveAs(None) => {
                let req = self.save_as_request();
                self.ask_path(req);
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
                let source = project_relative(&p, self.project.base_dir().as_deref());
                // Loaded afresh, even from the path it had (a drive mounted again, a file put
                // back): the failure kept for that path would come back otherwise.
                self.side.anim.forget(clip);
                self.apply_edit(
                    Edit::SetClipSource {
                        clip,
                        source: Some(source),
                    },
                    "relink clip",
                );
            }
            AppCommand::RecoverAutosave(info) => {
                // Into the project it belongs to, opened afresh: through "save your changes?"
                // when that is another project or this one has changes of its own.
                if info.origin != Origin::of(&self.project) || self.has_unsaved_work() {
                    self.apply(AppCommand::Guarded(Guarded::Recover(info)), ctx);
                    return None;
                }
                self.recover_into_current(info);
            }
            AppCommand::KeepSidecars(files) => {
                self.files.kept_sidecars.extend(files);
            }
            AppCommand::MoveSidecarsAside(files) => {
                let moved = crate::core::library::move_sidecars_aside(&files);
                // The project no longer has them: a later save must not take one gone for a clip
                // removed on disk (an undo of the removal writes it again).
                for f in files.iter().filter(|f| !f.exists()) {
                    self.project.sidecars.forget(f);
                }
                match moved {
                    Ok(moved) => self.message(
                        Level::Info,
                        format!(
                            "moved {} stale sidecar(s) aside (renamed to *{}), e.g. {}",
                            moved.len(),
                            crate::core::library::sidecar::MOVED_ASIDE_SUFFIX,
                            moved
                                .first()
                                .map_or(String::new(), |p| p.display().to_string())
                        ),
                    ),
                    Err(e) => self.message(Level::Error, e.to_string()),
                }
            }
            AppCommand::DiscardAutosave(info) => {
                self.files.recovery.discard(&info);
                self.message(
                    Level::Info,
                    format!("deleted the autosave of {}", info.origin.describe()),
                );
            }
            other => return Some(other),
        }
        None
    }

    /// Puts the auto-tag panel's settings into the project (an undo step) when they are not
    /// there yet, before a save.
    fn take_autotag_settings(&mut self) {
        if self.autotag.settings_unsaved(&self.project.doc) {
            let edit = self.autotag.save_settings_edit();
            self.apply_edit(edit, "auto-tag settings");
        }
    }

    /// True when the project has changes not saved: edits, or auto-tag settings changed in the
    /// panel and not yet saved into the project.
    pub(crate) fn has_unsaved_work(&self) -> bool {
        self.project.history.is_dirty() || self.autotag.settings_unsaved(&self.project.doc)
    }

    /// Puts autosave `info` into the project open now (the one it belongs to, just opened, with
    /// no changes of its own) as one undo step "recover autosave": Undo gives back the project as
    /// it is on disk. When the project was saved again after the autosave was written (its saved
    /// state then differs from the one the autosave kept, or without one the file is newer), the
    /// autosave's edits are merged into the newer save as concurrent saves are (before, the
    /// autosave was put over the newer save, and its work was lost with no undo); on a conflict
    /// the autosave's version is taken, as a step Undo takes back, and the status says so.
    fn recover_into_current(&mut self, info: AutosaveInfo) {
        use crate::core::library::merge::merge_documents;
        let (doc, warnings) = match self.files.recovery.load(&info) {
            Ok(loaded) => loaded,
            Err(e) => {
                self.message(Level::Error, format!("cannot recover: {e}"));
                return;
            }
        };
        let disk = self.project.doc.clone();
        // The whole autosave as an edit of what is on disk, when the edit gives it exactly.
        let whole = |disk: &TagDocument, doc: &TagDocument| {
            let edit = merge_documents(disk, disk, doc).ok()?;
            let mut check = disk.clone();
            edit.clone().apply(&mut check).ok()?;
            check.same_content(doc).then_some(edit)
        };
        let base = self.files.recovery.load_base(&info);
        // (A project file gone since is recovered whole, into a project that saves to its path.)
        let on_disk = matches!(&info.origin, Origin::File(p) if p.is_file());
        let saved_since = on_disk
            && match &base {
                Some(base) => !base.same_content(&disk),
                None => info.saved_at_unix_secs < file_modified_secs(&info.origin),
            };
        let mut note = String::new();
        let edit = if !saved_since {
            whole(&disk, &doc)
        } else {
            let merged = base
                .as_ref()
                .ok_or_else(|| "the autosave does not say what it was made on".to_owned())
                .and_then(|base| merge_documents(base, &disk, &doc));
            match merged {
                Ok(edit) => {
                    note = format!(
                        "; {} was saved after the autosave: the two were merged",
                        info.origin.describe()
                    );
                    Some(edit)
                }
                Err(why) => {
                    note = format!(
                        "; {} was saved after the autosave and they could not be merged ({why}): the autosave's version replaced the saved one, and Undo gives the saved one back",
                        info.origin.describe()
                    );
                    whole(&disk, &doc)
                }
            }
        };
        let applied = match edit {
            Some(edit) => self.project.apply(edit, "recover autosave").is_ok(),
            None => false,
        };
        if !applied {
            // No edit gives the autosave exactly: the document itself, without an undo step.
            self.project.doc = doc;
            self.project.history.clear();
            self.project.history.mark_unsaved();
            if saved_since {
                note = format!(
                    "; {} was saved after the autosave: the autosave's version replaced it (the saved one is its .bak after the next save)",
                    info.origin.describe()
                );
            }
        }
        self.after_structure_change();
        // The work is this session's now: its own autosave holds it before the old one goes.
        let kept = match self.files.recovery.save(&self.project) {
            Ok(()) => {
                self.files.recovery.discard(&info);
                String::new()
            }
            Err(e) => format!(" (the old autosave is kept: {e})"),
        };
        self.message(
            Level::Info,
            format!(
                "recovered {} unsaved edit(s) of {}: save to keep them{note}{kept}{}",
                info.unsaved_edits,
                info.origin.describe(),
                warn_suffix(&warnings)
            ),
        );
    }

    fn guarded(&mut self, action: Guarded, discard: bool, ctx: &egui::Context) {
        if self.has_unsaved_work() && !discard {
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
            Guarded::Recover(info) => {
                let project = match &info.origin {
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
                        // Straight in: this is the project the autosave belongs to (asking
                        // `RecoverAutosave` again compared origins, and a path that is not its
                        // own canonical form sent the two commands to each other forever).
                        self.recover_into_current(info);
                    }
                    Err(e) => self.message(Level::Error, format!("cannot recover: {e}")),
                }
            }
            Guarded::Quit => {
                self.allow_close = true;
                self.files.recovery.clear(&Origin::of(&self.project));
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
        // Its changes discarded, or none: its autosave (written while it had some) goes too.
        if discard || !self.project.history.is_dirty() {
            self.files.recovery.clear(&Origin::of(&self.project));
        }
        self.files.autosave_written = false;
        self.project = project;
        // Background work and results of the old project never reach the new one.
        self.similar.forget_project();
        self.autotag.forget_project();
        self.query.forget_project();
        // Clips are numbered per project: what is loaded (and what failed) belongs to the old
        // one, and the browser's load marks and the views' caches read it by number.
        self.side.anim.clear();
        self.side.pose.forget_project();
        // An import runs for the project it was started on, and its report speaks of that
        // project's clips.
        if let Some(import) = self.library.import.take() {
            import.job.cancel();
        }
        self.library.last = None;
        self.library.show_report = false;
        self.files.kept_sidecars.clear();
        // A question about the closed project's stale sidecars (raised by the save before an
        // Open) is not this project's: the files stay, and its next save asks again.
        if matches!(self.dialog, Some(Dialog::StaleSidecars(_))) {
            self.dialog = None;
        }
        self.current_clip = 0;
        self.current_key = None;
        self.selection.clear();
        self.marker_selection.clear();
        self.inspector = Default::default();
        self.browser.selected.clear();
        self.playback = Playback::default();
        self.active_tag = (!self.project.doc.tags.is_empty()).then_some(0);
        self.active_name = None;
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
        let was_demo = self.project.is_demo;
        let saved = self.project.save_to(path);
        // Changes made on disk meanwhile were merged into the document (an undo step).
        if !self.project.merged_from_disk.is_empty() {
            self.after_structure_change();
        }
        match saved {
            Ok(stale) => {
                self.add_recent(path);
                self.files.recovery.clear(&before);
                self.files.recovery.clear(&Origin::of(&self.project));
                let mut said = format!("saved {}", path.display());
                if was_demo {
                    // The demo's takes live in the program: the save wrote them out for the
                    // project's clips to load from.
                    let takes = self
                        .project
                        .doc
                        .clips
                        .iter()
                        .filter(|c| {
                            c.source.as_deref().is_some_and(|s| {
                                crate::core::project::DEMO_CLIP_FILES
                                    .iter()
                                    .any(|(f, _)| s.ends_with(f))
                            })
                        })
                        .count();
                    if takes > 0 {
                        said += &format!(
                            ", with the demo's {takes} take(s) written beside it as BVH files"
                        );
                    }
                }
                let merged = &self.project.merged_from_disk;
                if let Some(first) = merged.first() {
                    said += &format!(
                        "; first merged {} file(s) changed on disk since the project was opened \
                         or last saved, e.g. {} (undo \"changes made on disk\" to see your version \
                         alone)",
                        merged.len(),
                        first.display()
                    );
                }
                let kept = &self.project.kept_on_disk;
                if let Some(first) = kept.first() {
                    said += &format!(
                        "; kept {} file(s) changed on disk since the project was opened that \
                         cannot be read (not edited here), e.g. {}: fix them, then reopen the \
                         project",
                        kept.len(),
                        first.display()
                    );
                }
                let level = if merged.is_empty() && kept.is_empty() {
                    Level::Info
                } else {
                    Level::Warning
                };
                self.message(level, said);
                let new: Vec<PathBuf> = stale
                    .into_iter()
                    .filter(|f| !self.files.kept_sidecars.contains(f))
                    .collect();
                if !new.is_empty() {
                    self.dialog = Some(Dialog::StaleSidecars(new));
                }
            }
            Err(e) => self.message(Level::Error, e),
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
                .map(|(incoming, warnings)| {
                    // What the reader corrected or left out (overlapping ranges merged, an
                    // unknown field, a query that does not parse) is said with the merge's own.
                    let (edit, mut report) = exchange::merge_document(&self.project.doc, &incoming);
                    report
                        .conflicts
                        .splice(0..0, warnings.iter().map(|w| format!("in the file, {w}")));
                    (edit, report)
                })
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
            Ok((edit, report)) => {
                if self.apply_edit(edit, &format!("import tags from {}", path.display())) {
                    let level = if report.conflicts.is_empty() {
                        Level::Info
                    } else {
                        Level::Warning
                    };
                    self.message(level, format!("{}: {}", path.display(), report.summary()));
                }
            }
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
            ExportKind::PerClipJson { .. } => {
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
        if self.prefs.dialogs == DialogBackend::System && !self.files.native_unavailable {
            match (self.files.native_dialog)(&request, Some(&start)) {
                NativeAnswer::Chosen(paths) => self.path_chosen(request, paths),
                NativeAnswer::Cancelled => {
                    self.message(Level::Info, format!("{}: cancelled", request.title))
                }
                NativeAnswer::Unavailable => {
                    self.files.native_unavailable = true;
                    self.message(
                        Level::Warning,
                        "the system file dialog could not open (no desktop portal or GTK): \
                         using taglane's file browser",
                    );
                    self.files.browser = Some(FileBrowser::new(request, start));
                }
            }
        } else {
            self.files.browser = Some(FileBrowser::new(request, start));
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

    pub(crate) fn file_browser_ui(&mut self, ctx: &egui::Context) {
        let Some(browser) = self.files.browser.as_mut() else {
            return;
        };
        match browser.ui(ctx) {
            crate::ui::file_dialog::BrowserOutcome::Open => {}
            crate::ui::file_dialog::BrowserOutcome::Cancelled => {
                let title = browser.request.title.clone();
                self.files.browser = None;
                self.message(Level::Info, format!("{title}: cancelled"));
            }
            crate::ui::file_dialog::BrowserOutcome::Chosen(paths) => {
                let request = browser.request.clone();
                self.files.browser = None;
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
            ExportKind::PerClipJson { replace } => {
                match exchange::write_per_clip_json(&self.project.doc, &path, replace) {
                    Ok(files) => Ok(files.len()),
                    Err(crate::core::io::ExportFilesError::Exists { count, .. }) => {
                        self.dialog = Some(Dialog::ReplaceFiles {
                            what: ReplaceWhat::PerClipJson,
                            dir: path,
                            count,
                        });
                        return;
                    }
                    Err(e) => Err(e.to_string()),
                }
            }
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

    /// Writes the autosave when it is due. While there are unsaved changes the next frame is
    /// asked for when the next autosave is due: an idle window draws no frames of its own, and
    /// an edit followed by no input (the animator in another program) must still reach the
    /// autosave before a crash.
    pub(crate) fn autosave_tick(&mut self, ctx: &egui::Context) {
        let elapsed = self.files.last_autosave.elapsed();
        if elapsed >= self.files.autosave_every {
            self.files.last_autosave = Instant::now();
            if self.has_unsaved_work() {
                // With the auto-tag panel's settings not yet in the project, as a save would put
                // them.
                let saved = if self.autotag.settings_unsaved(&self.project.doc) {
                    let mut doc = self.project.doc.clone();
                    let _ = self.autotag.save_settings_edit().apply(&mut doc);
                    self.files.recovery.save_doc(&self.project, &doc)
                } else {
                    self.files.recovery.save(&self.project)
                };
                match saved {
                    Ok(()) => self.files.autosave_written = true,
                    Err(e) => self.message(Level::Warning, format!("autosave failed: {e}")),
                }
            } else if std::mem::take(&mut self.files.autosave_written) {
                // Clean again (undone to what is on disk, saved): the autosave holds nothing to
                // recover, and a later start would offer it as work lost.
                self.files.recovery.clear(&Origin::of(&self.project));
            }
        }
        if self.has_unsaved_work() {
            let due = self
                .files
                .autosave_every
                .saturating_sub(self.files.last_autosave.elapsed());
            ctx.request_repaint_after(due.max(Duration::from_millis(100)));
        }
    }

    /// Files dropped on the window: imported or merged, or kept until no modal window is open
    /// (`modal`).
    pub(crate) fn handle_dropped_files(&mut self, ctx: &egui::Context, modal: bool) {
        let new: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        self.files.dropped.extend(new);
        if modal || self.files.dropped.is_empty() {
            return;
        }
        let dropped = std::mem::take(&mut self.files.dropped);
        // Folders and take files go to a library import; tag files are merged.
        let (anims, other): (Vec<PathBuf>, Vec<PathBuf>) = dropped.into_iter().partition(|p| {
            p.is_dir() || crate::core::anim::import::AnimFormat::from_path(p).is_some()
        });
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
}

fn warn_suffix(warnings: &[String]) -> String {
    match warnings.len() {
        0 => String::new(),
        1 => format!(" (warning: {})", warnings[0]),
        n => format!(" ({n} warnings; first: {})", warnings[0]),
    }
}

/// When the project file of `origin` was last modified (seconds since the Unix epoch; 0 for no
/// file).
fn file_modified_secs(origin: &Origin) -> u64 {
    match origin {
        Origin::File(p) => std::fs::metadata(p)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs()),
        Origin::Demo | Origin::Untitled => 0,
    }
}
