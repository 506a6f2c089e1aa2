//! The app's modal dialogs: unsaved changes, rename, delete confirmation, recovery. Each one queues
//! commands; Enter confirms and Esc cancels every one of them.

use egui::Key;

use crate::ui::app::TaglaneApp;
use crate::ui::command::{AppCommand, Guarded};
use crate::ui::recovery::{AutosaveInfo, Origin};

/// A modal dialog.
#[derive(Debug, Clone, PartialEq)]
pub enum Dialog {
    /// "Save changes?" before doing `then`.
    Unsaved(Guarded),
    /// The name of tag `index` being edited; `new` for a tag just made (its name is a
    /// placeholder: the dialog asks for one, and Cancel keeps the placeholder).
    Rename {
        index: usize,
        name: String,
        new: bool,
    },
    ConfirmDeleteTag(usize),
    /// The open project has an autosave from a session that did not end cleanly.
    Recover {
        info: AutosaveInfo,
    },
    /// A sidecar-mode save found sidecars of clips that are not in the project (removed since it
    /// was opened): left in place, they bring those clips back on the next open.
    StaleSidecars(Vec<std::path::PathBuf>),
    /// An export would replace `count` files that already exist in `dir`.
    ReplaceFiles {
        what: ReplaceWhat,
        dir: std::path::PathBuf,
        count: usize,
    },
}

/// Which export [`Dialog::ReplaceFiles`] asks about.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplaceWhat {
    /// The query result cut into BVH files.
    Cut,
    /// One JSON file of tags per clip.
    PerClipJson,
    /// The chosen compression candidate's `.tlc` files, of clip `only` or of every clip.
    Compressed {
        only: Option<crate::core::tags::ClipId>,
    },
}

impl ReplaceWhat {
    /// What the dialog calls the export's files.
    fn files(&self) -> &'static str {
        match self {
            Self::Cut => "the cut's files",
            Self::PerClipJson => "the clips' tag files",
            Self::Compressed { .. } => "the compressed clips' files",
        }
    }

    /// The export again, replacing.
    fn replacing(&self, dir: std::path::PathBuf) -> AppCommand {
        match self {
            Self::Cut => AppCommand::QueryCut {
                dir: Some(dir),
                replace: true,
            },
            Self::PerClipJson => AppCommand::Export(
                crate::ui::command::ExportKind::PerClipJson { replace: true },
                Some(dir),
            ),
            Self::Compressed { only } => AppCommand::CompressionExport {
                only: *only,
                dir: Some(dir),
                replace: true,
            },
        }
    }
}

impl TaglaneApp {
    pub(crate) fn dialogs_ui(&mut self, ctx: &egui::Context) {
        let Some(dialog) = self.dialog.clone() else {
            return;
        };
        // Keys of this frame, taken before any text field sees them: new presses only (a held
        // key's repeats answered the question it raised), and none while the in-app file browser
        // is open over the dialog (its Enter opened a file and answered this one too).
        let browser = self.files.browser.is_some();
        let (enter, esc) = ctx.input(|i| {
            (
                !browser && crate::ui::keymap::pressed_once(i, Key::Enter),
                !browser && crate::ui::keymap::pressed_once(i, Key::Escape),
            )
        });
        let mut close = false;
        egui::Modal::new(egui::Id::unique("taglane_dialog")).show(ctx, |ui| {
            ui.set_max_width(460.0);
            match dialog {
                Dialog::Unsaved(then) => {
                    ui.heading("Unsaved changes");
                    let steps = self.project.history.unsaved_steps();
                    let settings = self.autotag.settings_unsaved(&self.project.doc);
                    let what = match (steps, settings) {
                        (0, true) => "the auto-tag settings".to_owned(),
                        (n, true) => format!("the {n} change(s) and the auto-tag settings"),
                        (n, false) => format!("the {n} change(s)"),
                    };
                    ui.label(format!("Save {what} to {} first?", self.project.title()));
                    if settings {
                        ui.weak(
                            "The auto-tag panel's settings were changed and not saved into the \
                             project; Save saves them too (one undo step).",
                        );
                    }
                    ui.horizontal(|ui| {
                        if ui.button("Save").clicked() || enter {
                            self.queue.push(AppCommand::SaveThen(then.clone()));
                            close = true;
                        }
                        if ui.button("Don't save").clicked() {
                            // Applies only if the action really replaces the project.
                            self.queue.push(AppCommand::GuardedDiscard(then.clone()));
                            close = true;
                        }
                        if ui.button("Cancel").clicked() || esc {
                            close = true;
                        }
                    });
                }
                Dialog::Rename {
                    index,
                    mut name,
                    new,
                } => {
                    ui.heading(if new { "Name the new tag" } else { "Rename tag" });
                    let label = ui.label("New tag name");
                    // A new tag's field starts empty, its placeholder name shown as the hint:
                    // typing gives the name (it does not add to "NewTag").
                    let hint = if new {
                        self.project
                            .doc
                            .tags
                            .get(index)
                            .map_or(String::new(), |t| t.name.clone())
                    } else {
                        String::new()
                    };
                    let edit = ui
                        .add(egui::TextEdit::singleline(&mut name).hint_text(hint.as_str()))
                        .labelled_by(label.id);
                    edit.request_focus();
                    let problem = if new && name.trim().is_empty() {
                        // Nothing typed yet: no error, the button waits.
                        Some(String::new())
                    } else {
                        self.rename_problem(index, &name)
                    };
                    match &problem {
                        Some(p) if !p.is_empty() => {
                            ui.colored_label(ui.visuals().error_fg_color, p);
                        }
                        Some(_) | None if new => {
                            ui.label(format!(
                                "A namespace groups lanes: locomotion:Walk. Cancel keeps the \
                                 name {hint}; undo removes the tag."
                            ));
                        }
                        _ => {
                            ui.label("Saved queries that use the old name are updated.");
                        }
                    }
                    ui.horizontal(|ui| {
                        let ok = ui.add_enabled(
                            problem.is_none(),
                            egui::Button::new(if new { "Name" } else { "Rename" }),
                        );
                        if ok.clicked() || (enter && problem.is_none()) {
                            self.queue.push(AppCommand::RenameTag {
                                index,
                                name: name.clone(),
                                new,
                            });
                            close = true;
                        }
                        if ui.button("Cancel").clicked() || esc {
                            close = true;
                        }
                    });
                    if !close {
                        self.dialog = Some(Dialog::Rename { index, name, new });
                    }
                }
                Dialog::ConfirmDeleteTag(index) => {
                    let tag = self.project.doc.tags.get(index);
                    let name = tag.map_or(String::new(), |t| t.name.clone());
                    let n: usize = tag.map_or(0, |t| t.ranges.range_count());
                    ui.heading("Delete tag");
                    ui.label(format!(
                        "Delete '{name}' and its {n} range(s) on every clip? You can undo this."
                    ));
                    ui.horizontal(|ui| {
                        if ui.button("Delete").clicked() || enter {
                            self.queue.push(AppCommand::DeleteTag(index));
                            close = true;
                        }
                        if ui.button("Cancel").clicked() || esc {
                            close = true;
                        }
                    });
                }
                Dialog::ReplaceFiles { what, dir, count } => {
                    ui.heading("Replace files?");
                    ui.label(format!(
                        "{count} of {} already exist in {}. Replace them? The other files in \
                         the folder are left as they are.",
                        what.files(),
                        dir.display()
                    ));
                    ui.horizontal(|ui| {
                        if ui.button("Replace").clicked() || enter {
                            self.queue.push(what.replacing(dir.clone()));
                            close = true;
                        }
                        if ui.button("Cancel").clicked() || esc {
                            close = true;
                        }
                    });
                }
                Dialog::StaleSidecars(files) => {
                    ui.heading("Sidecars of clips not in the project");
                    ui.label(format!(
                        "{} sidecar file(s) in the project's folders belong to no clip of the \
                         project, for example {}. They were left in place, so their clips and \
                         tags come back the next time the project opens.",
                        files.len(),
                        files.first().map_or(String::new(), |f| f.display().to_string())
                    ));
                    ui.label(
                        "Move aside renames each to NAME.tags.json.removed beside its take (nothing \
                         is deleted; rename it back to restore the clip). Keep leaves them and \
                         does not ask again while the project is open.",
                    );
                    ui.horizontal(|ui| {
                        if ui.button("Move aside").clicked() || enter {
                            self.queue.push(AppCommand::MoveSidecarsAside(files.clone()));
                            close = true;
                        }
                        if ui.button("Keep").clicked() || esc {
                            self.queue.push(AppCommand::KeepSidecars(files.clone()));
                            close = true;
                        }
                    });
                }
                Dialog::Recover { info } => {
                    ui.heading("Recover unsaved work?");
                    ui.label(format!(
                        "taglane did not close normally. Found unsaved work of {}.",
                        info.summary()
                    ));
                    ui.label(if info.origin == Origin::of(&self.project) {
                        "Recover puts it into this project as unsaved changes. Later keeps the \
                         autosave (File > Recover autosave); Discard deletes it."
                    } else {
                        "Recover opens that project and puts the work into it as unsaved \
                         changes. Later keeps the autosave (File > Recover autosave); Discard \
                         deletes it."
                    });
                    ui.horizontal(|ui| {
                        if ui.button("Recover").clicked() || enter {
                            self.queue
                                .push(AppCommand::RecoverAutosave(info.clone()));
                            close = true;
                        }
                        if ui.button("Later").clicked() || esc {
                            close = true;
                        }
                        if ui.button("Discard").clicked() {
                            self.queue
                                .push(AppCommand::DiscardAutosave(info.clone()));
                            close = true;
                        }
                    });
                }
            }
        });
        if close {
            self.dialog = None;
        }
    }

    /// Why `name` cannot be the new name of tag `index` (explained inline), if it cannot.
    fn rename_problem(&self, index: usize, name: &str) -> Option<String> {
        let name = name.trim();
        if name.is_empty() {
            return Some("A tag name cannot be empty.".to_owned());
        }
        self.project
            .doc
            .tags
            .iter()
            .enumerate()
            .any(|(i, t)| i != index && t.name == name)
            .then(|| format!("A tag named '{name}' already exists."))
    }
}
