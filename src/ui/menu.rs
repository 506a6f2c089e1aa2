//! The menu bar. Entries come from the command table ([`crate::ui::keymap`]): label, key and
//! tooltip are the ones the shortcuts and the help window use.

use egui::Ui;

use crate::ui::app::TaglaneApp;
use crate::ui::command::{AppCommand, ExportKind, Guarded};
use crate::ui::file_dialog::DialogBackend;
use crate::ui::keymap::{Action, menu_item};

impl TaglaneApp {
    pub(crate) fn menu_ui(&mut self, ui: &mut Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| self.file_menu(ui));
            ui.menu_button("Edit", |ui| self.edit_menu(ui));
            ui.menu_button("View", |ui| {
                menu_item(ui, Action::Fit, true, &mut self.queue);
                ui.horizontal(|ui| {
                    let label = ui.label("Animation memory");
                    let mut mib = self.prefs.anim_budget_mib;
                    ui.add(
                        egui::DragValue::new(&mut mib)
                            .range(64..=65_536)
                            .speed(16)
                            .suffix(" MiB"),
                    )
                    .labelled_by(label.id)
                    .on_hover_text(
                        "Loaded animations beyond this are unloaded, least recently shown first",
                    );
                    if mib != self.prefs.anim_budget_mib {
                        self.queue.push(AppCommand::SetAnimBudget(mib));
                    }
                });
                menu_item(ui, Action::ZoomIn, true, &mut self.queue);
                menu_item(ui, Action::ZoomOut, true, &mut self.queue);
                ui.separator();
                let dark = self.prefs.dark;
                if ui.radio(dark, "Dark theme").clicked() {
                    self.queue.push(AppCommand::SetDarkMode(true));
                }
                if ui.radio(!dark, "Light theme").clicked() {
                    self.queue.push(AppCommand::SetDarkMode(false));
                }
            });
            ui.menu_button("Playback", |ui| {
                for a in [
                    Action::TogglePlay,
                    Action::JumpStart,
                    Action::JumpEnd,
                    Action::PrevEdge,
                    Action::NextEdge,
                    Action::LoopSelection,
                    Action::GoToFrame,
                ] {
                    menu_item(ui, a, true, &mut self.queue);
                }
            });
            ui.menu_button("Help", |ui| {
                menu_item(ui, Action::Help, true, &mut self.queue);
            });
        });
    }

    fn file_menu(&mut self, ui: &mut Ui) {
        let q = &mut self.queue;
        menu_item(ui, Action::New, true, q);
        menu_item(ui, Action::Open, true, q);
        ui.menu_button("Open recent", |ui| {
            if self.prefs.recent.is_empty() {
                ui.label("No recent projects");
            }
            for p in &self.prefs.recent {
                if ui.button(p.display().to_string()).clicked() {
                    q.push(AppCommand::Guarded(Guarded::Open(Some(p.clone()))));
                }
            }
        });
        if ui.button("Open demo project").clicked() {
            q.push(AppCommand::Guarded(Guarded::OpenDemo));
        }
        ui.menu_button("Recover autosave", |ui| {
            let all = self.files.recovery.all();
            if all.is_empty() {
                ui.label("No autosaved work");
            }
            for info in all {
                ui.horizontal(|ui| {
                    let (label, hover) = if info.in_use() {
                        (
                            format!(
                                "{} (open in a running taglane, process {})",
                                info.summary(),
                                info.pid
                            ),
                            "That window still holds this work; recovering it here opens the \
                             project twice",
                        )
                    } else {
                        (
                            info.summary(),
                            "Open that project and recover the work into it",
                        )
                    };
                    if ui.button(label).on_hover_text(hover).clicked() {
                        q.push(AppCommand::RecoverAutosave(info.clone()));
                    }
                    if ui
                        .small_button("Delete")
                        .on_hover_text("Delete this autosave")
                        .clicked()
                    {
                        q.push(AppCommand::DiscardAutosave(info.clone()));
                    }
                });
            }
        });
        ui.separator();
        menu_item(ui, Action::Save, true, q);
        menu_item(ui, Action::SaveAs, true, q);
        ui.separator();
        menu_item(ui, Action::ImportAnimation, true, q);
        menu_item(ui, Action::ImportFolder, true, q);
        ui.menu_button("Units of imported clips", |ui| {
            use crate::core::library::UnitSetting;
            for (label, u) in [
                ("auto (from the standing height)", UnitSetting::Auto),
                ("centimetres", UnitSetting::Fixed(1.0)),
                ("metres", UnitSetting::Fixed(100.0)),
                ("millimetres", UnitSetting::Fixed(0.1)),
                ("inches", UnitSetting::Fixed(2.54)),
                ("CMU (5.644 cm)", UnitSetting::Fixed(5.644)),
            ] {
                if ui.radio(self.library.units == u, label).clicked() {
                    q.push(AppCommand::SetImportUnits(u));
                }
            }
        });
        menu_item(ui, Action::ImportTags, true, q);
        ui.menu_button("Export tags", |ui| {
            if ui.button("Project JSON…").clicked() {
                q.push(AppCommand::Export(ExportKind::Json, None));
            }
            if ui.button("CSV…").clicked() {
                q.push(AppCommand::Export(ExportKind::Csv, None));
            }
            if ui.button("One JSON per clip…").clicked() {
                q.push(AppCommand::Export(
                    ExportKind::PerClipJson { replace: false },
                    None,
                ));
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
            self.files.native_unavailable = false;
        }
        ui.separator();
        menu_item(ui, Action::Quit, true, q);
    }

    fn edit_menu(&mut self, ui: &mut Ui) {
        let history = &self.project.history;
        let undo = history
            .undo_label()
            .map_or("Undo".to_owned(), |l| format!("Undo {l}"));
        let key = crate::ui::keymap::shortcut_text(ui.ctx(), Action::Undo);
        if ui
            .add_enabled(
                history.can_undo(),
                egui::Button::new(undo).shortcut_text(key),
            )
            .clicked()
        {
            self.queue.push(AppCommand::Undo);
        }
        let redo = history
            .redo_label()
            .map_or("Redo".to_owned(), |l| format!("Redo {l}"));
        let key = crate::ui::keymap::shortcut_text(ui.ctx(), Action::Redo);
        if ui
            .add_enabled(
                history.can_redo(),
                egui::Button::new(redo).shortcut_text(key),
            )
            .clicked()
        {
            self.queue.push(AppCommand::Redo);
        }
        ui.separator();
        // Ranges or markers: Copy and Delete take both.
        let has_selection = !self.selection.is_empty() || !self.marker_selection.is_empty();
        let q = &mut self.queue;
        menu_item(ui, Action::Copy, has_selection, q);
        menu_item(ui, Action::Paste, !self.clipboard.items.is_empty(), q);
        menu_item(
            ui,
            Action::PasteIntoActive,
            !self.clipboard.items.is_empty() && self.active_tag.is_some(),
            q,
        );
        menu_item(ui, Action::Delete, has_selection, q);
        menu_item(ui, Action::Split, true, q);
        menu_item(ui, Action::SelectAll, true, q);
        // No lane needed: a mark in also starts a Find similar query (its help says so).
        menu_item(ui, Action::MarkIn, true, q);
        menu_item(ui, Action::MarkOut, self.playback.mark_in.is_some(), q);
        menu_item(ui, Action::AddMarker, self.active_tag.is_some(), q);
        ui.separator();
        menu_item(ui, Action::NewTag, true, q);
        ui.separator();
        let matches = self
            .similar
            .results
            .as_ref()
            .is_some_and(|r| !r.matches.is_empty());
        menu_item(ui, Action::FindSimilar, true, q);
        menu_item(ui, Action::NextMatch, matches, q);
        menu_item(ui, Action::PrevMatch, matches, q);
    }
}
