//! Importing capture libraries in the app: folders and files (menu, drop, Ctrl+Shift+I), scanned in
//! the background on every core with progress (files, MB, time left) and Cancel; the result is one
//! undoable edit and a report the user can copy. Clip units can be set for a selection of clips.
//!
//! The work is the core's (`core::library`): `scan_library` on a [`Job`], then `plan_import`
//! against the document as it is when the scan ends.

use std::path::PathBuf;
use std::sync::Arc;

use egui::Ui;

use crate::core::doc::Edit;
use crate::core::library::{Cancelled, ImportPlan, ImportSettings, LibraryScan, UnitSetting};
use crate::core::tags::ClipId;
use crate::ui::app::{Level, TaglaneApp};
use crate::ui::command::AppCommand;
use crate::ui::jobs::{Job, format_duration};

/// An import running in the background.
pub struct ImportJob {
    /// What was asked for (folders or files).
    pub roots: Vec<PathBuf>,
    pub job: Job<Result<LibraryScan, Cancelled>>,
    /// Megabytes done and total, for the progress line.
    pub mb: Arc<std::sync::Mutex<(f64, f64)>>,
}

/// Import state of the app.
#[derive(Default)]
pub struct LibraryState {
    pub import: Option<ImportJob>,
    /// How units are chosen for imported clips.
    pub units: UnitSetting,
    /// The last import's plan, shown in the report window while `show_report`.
    pub last: Option<ImportPlan>,
    pub show_report: bool,
}

impl LibraryState {
    /// True while an import runs.
    pub fn importing(&self) -> bool {
        self.import.is_some()
    }
}

impl TaglaneApp {
    /// Starts importing `roots` (folders and take files) in the background.
    pub(crate) fn start_import(&mut self, roots: Vec<PathBuf>, ctx: &egui::Context) {
        if roots.is_empty() {
            return;
        }
        if self.library.import.is_some() {
            self.message(
                Level::Warning,
                "an import is already running: wait for it or cancel it first",
            );
            return;
        }
        let settings = ImportSettings {
            units: self.library.units,
            jobs: None,
        };
        let mb = Arc::new(std::sync::Mutex::new((0.0, 0.0)));
        let label = match roots.as_slice() {
            [one] => format!(
                "import {}",
                one.file_name()
                    .map_or_else(|| one.display().to_string(), |n| n.to_string_lossy().into())
            ),
            many => format!("import {} folders or files", many.len()),
        };
        // The project's clip sources: their file identities (a take reached through a link is
        // matched by them) are read in the background, not when the plan is made.
        let base = self
            .project
            .base_dir()
            .map(|b| crate::core::library::walk::absolute(&b));
        let mut sources: Vec<PathBuf> = (self.project.doc.clips.iter())
            .filter_map(|c| crate::core::library::source_path(c, base.as_deref()))
            .collect();
        sources.sort_unstable();
        sources.dedup();
        let (r, m) = (roots.clone(), Arc::clone(&mb));
        let job = Job::spawn(label, Some(ctx), move |p| {
            let report = |prog: &crate::core::library::Progress| {
                p.set_total(prog.files_total as u64);
                p.set_done(prog.files_done as u64);
                *m.lock().unwrap_or_else(|e| e.into_inner()) =
                    (prog.bytes_done as f64 / 1e6, prog.bytes_total as f64 / 1e6);
            };
            let mut scan =
                crate::core::library::scan_library(&r, &settings, &report, p.cancel_flag())?;
            crate::core::library::identify_sources(&mut scan, &sources);
            Ok(scan)
        });
        self.library.import = Some(ImportJob { roots, job, mb });
        self.message(Level::Info, "importing in the background…");
    }

    /// Collects a finished import: applies its plan as one undoable edit and shows the report.
    pub(crate) fn poll_import(&mut self) {
        let Some(result) = self.library.import.as_mut().and_then(|i| i.job.poll()) else {
            return;
        };
        let import = self.library.import.take().expect("polled");
        let scan = match result {
            Ok(Ok(scan)) => scan,
            Ok(Err(Cancelled)) => {
                self.message(Level::Info, "import cancelled: nothing was added");
                return;
            }
            Err(e) => {
                self.message(Level::Error, e);
                return;
            }
        };
        let base = self.project.base_dir();
        let plan = crate::core::library::plan_import(&self.project.doc, base.as_deref(), &scan);
        let first_new = self.project.doc.clips.len() as ClipId;
        let what = match import.roots.as_slice() {
            [one] => one.display().to_string(),
            many => format!("{} folders or files", many.len()),
        };
        // The first new clip is shown, unless that would take away what the user is doing: text
        // typed in the inspector (the range it is for leaves with the clip) or a drag.
        let busy = self.inspector.typing || self.timeline.gesture.is_some();
        if plan.imported_any() {
            self.apply_edit(plan.edit.clone(), &format!("import {what}"));
            if !busy {
                self.queue.push(AppCommand::SelectClip(first_new));
            }
        }
        let level = if !plan.failed.is_empty() || !plan.problems.is_empty() {
            Level::Warning
        } else {
            Level::Info
        };
        let mut line = plan.summary();
        if let Some(f) = plan.failed.first() {
            line.push_str(&format!("; first failure: {}", f.message));
        }
        self.message(level, line);
        self.library.show_report = !plan.failed.is_empty()
            || !plan.changed.is_empty()
            || !plan.missing.is_empty()
            || !plan.linked.is_empty()
            || plan.added.iter().any(|a| !a.unit.confident)
            || plan.added.len() > 1;
        self.library.last = Some(plan);
    }

    /// Applies a library command; returns it back when it is not one.
    pub(crate) fn library_command(
        &mut self,
        cmd: AppCommand,
        ctx: &egui::Context,
    ) -> Option<AppCommand> {
        match cmd {
            AppCommand::ImportAnimation(Some(paths)) => self.start_import(paths, ctx),
            AppCommand::ImportFolder(Some(dir)) => self.start_import(vec![dir], ctx),
            AppCommand::ImportFolder(None) => {
                self.ask_path(crate::ui::file_dialog::PathRequest::new(
                    "Import a folder of takes",
                    crate::ui::file_dialog::PathKind::Folder,
                    AppCommand::ImportFolder(None),
                ))
            }
            AppCommand::CancelImport => {
                if let Some(i) = &self.library.import {
                    i.job.cancel();
                }
            }
            AppCommand::ShowImportReport(show) => self.library.show_report = show,
            AppCommand::UpdateChangedClips => {
                if let Some(plan) = &self.library.last {
                    let edit = plan.update_changed_edit(&self.project.doc);
                    let losses = plan.update_changed_losses(&self.project.doc);
                    if !edit.is_empty() {
                        self.apply_edit(edit, "update the lengths of changed clips");
                        if !losses.is_empty() {
                            // Said, not silent: what the shorter takes cut off (Undo restores).
                            let first = &losses[0];
                            let more = match losses.len() {
                                1 => String::new(),
                                n => format!(" (and {} more)", n - 1),
                            };
                            self.message(
                                Level::Warning,
                                format!("lengths updated; {first}{more}; Undo restores them"),
                            );
                        }
                    } else {
                        // Updated already, or the clips renamed or removed since the import.
                        self.message(
                            Level::Info,
                            "nothing to update: every clip the import found changed has its \
                             take's length already (or is no longer in the project)",
                        );
                    }
                }
            }
            AppCommand::SetImportUnits(u) => self.library.units = u,
            AppCommand::SetClipUnits { clips, unit_cm } => {
                let edits: Vec<Edit> = clips
                    .iter()
                    .filter(|&&c| {
                        self.project
                            .doc
                            .clips
                            .get(c as usize)
                            .is_some_and(|i| i.unit_cm != unit_cm)
                    })
                    .map(|&clip| Edit::SetClipUnit { clip, unit_cm })
                    .collect();
                let what = unit_cm.map_or("the file's own unit".to_owned(), |u| {
                    crate::core::library::describe_unit(u)
                });
                if !edits.is_empty() {
                    self.apply_edit(
                        Edit::Batch(edits),
                        &format!("unit of {} clip(s): {what}", clips.len()),
                    );
                }
            }
            AppCommand::GuessClipUnits(clips) => self.guess_units(&clips),
            other => return Some(other),
        }
        None
    }

    /// Sets each clip's unit to the one that makes its skeleton stand 150-200 cm tall (the import's
    /// `auto`), from a fast scan of its file; says what it chose.
    fn guess_units(&mut self, clips: &[ClipId]) {
        let mut edits = Vec::new();
        let mut chosen = Vec::new();
        let mut problems = Vec::new();
        for &c in clips {
            let request = match crate::core::project::resolve(&self.project, c) {
                Ok(r) => r,
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            };
            // Positions are in file units whatever the stored unit, so this measures the file.
            let clip = match crate::core::project::load(&request) {
                Ok(c) => c,
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            };
            let name = &self.project.doc.clips[c as usize].name;
            match crate::core::anim::guess_unit(&clip) {
                Some(g) => {
                    let plausible = if g.is_plausible() {
                        ""
                    } else {
                        " (check it: not a standing person's height)"
                    };
                    chosen.push(format!(
                        "{name}: {} (stands {:.0} cm){plausible}",
                        crate::core::library::describe_unit(g.unit_cm),
                        g.height_cm()
                    ));
                    edits.push(Edit::SetClipUnit {
                        clip: c,
                        unit_cm: Some(g.unit_cm),
                    });
                }
                None => problems.push(format!("{name}: the skeleton has no height to measure")),
            }
        }
        if !edits.is_empty() {
            self.apply_edit(Edit::Batch(edits), "guess clip units");
        }
        let mut text = chosen.join("; ");
        if let Some(p) = problems.first() {
            text = format!("{text}; cannot guess: {p}");
        }
        self.message(
            if problems.is_empty() {
                Level::Info
            } else {
                Level::Warning
            },
            text,
        );
    }

    /// The import's progress (files, MB, time left, Cancel), shown above the clip list.
    pub(crate) fn import_progress_ui(&mut self, ui: &mut Ui) {
        let Some(import) = &self.library.import else {
            return;
        };
        let cancelled = crate::ui::jobs::progress_ui(ui, &import.job, "files");
        let (done, total) = *import.mb.lock().unwrap_or_else(|e| e.into_inner());
        let mut line = format!("{done:.1} / {total:.1} MB");
        if let Some(eta) = import.job.eta() {
            line += &format!(", {} left", format_duration(eta));
        }
        ui.weak(line);
        if cancelled {
            self.message(Level::Info, "cancelling the import…");
        }
        ui.separator();
    }

    /// The report of the last import: what was added, units chosen, changed, missing and failed
    /// takes; copyable.
    pub(crate) fn import_report_ui(&mut self, ctx: &egui::Context) {
        if !self.library.show_report {
            return;
        }
        let Some(plan) = &self.library.last else {
            return;
        };
        let text = plan.report_text(true);
        // The clips still to update in the document as it is (after an update, or a rename, the
        // button went on offering the import's count and did nothing).
        let changed = match plan.update_changed_edit(&self.project.doc) {
            Edit::Batch(edits) => edits.len(),
            _ => 0,
        };
        let mut open = true;
        let mut queue = Vec::new();
        egui::Window::new("Import report")
            .open(&mut open)
            .default_size([640.0, 360.0])
            .show(ctx, |ui| {
                ui.label(plan.summary());
                ui.horizontal(|ui| {
                    if ui.button("Copy report").clicked() {
                        ui.ctx().copy_text(text.clone());
                    }
                    if changed > 0
                        && ui
                            .button(format!("Update the length of {changed} changed clip(s)"))
                            .on_hover_text(
                                "Give these clips the frame counts their files have now (undoable)",
                            )
                            .clicked()
                    {
                        queue.push(AppCommand::UpdateChangedClips);
                    }
                    if ui.button("Close").clicked() {
                        queue.push(AppCommand::ShowImportReport(false));
                    }
                });
                egui::ScrollArea::both().show(ui, |ui| {
                    let mut shown = text.as_str();
                    let label = ui.label("Report");
                    ui.add(
                        egui::TextEdit::multiline(&mut shown)
                            .font(egui::TextStyle::Monospace)
                            .desired_width(f32::INFINITY),
                    )
                    .labelled_by(label.id);
                });
            });
        if !open {
            queue.push(AppCommand::ShowImportReport(false));
        }
        self.queue.extend(queue);
    }
}
