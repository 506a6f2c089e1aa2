//! Asking the user for a file or folder: the system dialog (rfd) where it can open, else taglane's
//! own file browser, so Save, Open, Import and Export never silently do nothing.
//!
//! A command that needs a path and has none (e.g. `AppCommand::SaveAs(None)`) becomes a
//! [`PathRequest`] holding that command; the chosen path is filled in
//! ([`crate::ui::command::AppCommand::with_paths`]) and the command is queued again. The system dialog blocks and answers at once; the in-app
//! browser is a modal that answers in a later frame. When the system dialog returns nothing faster
//! than a person can cancel (no desktop portal or GTK, as on a bare X server), the app says so in
//! the status bar and uses the in-app browser from then on.
//!
//! The listing and path logic ([`list_dir`], [`resolve_choice`]) do not touch egui and are tested
//! on their own.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egui::{Key, Ui};

#[cfg(test)]
use crate::ui::command::AppCommand;
pub use crate::ui::command::{PathKind, PathRequest};

/// Which dialogs the app uses (a preference).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum DialogBackend {
    /// The system's dialog, falling back to the in-app browser when it cannot open.
    #[default]
    System,
    /// Always taglane's own browser.
    InApp,
}

/// What the system dialog did.
#[derive(Debug, Clone, PartialEq)]
pub enum NativeAnswer {
    Chosen(Vec<PathBuf>),
    /// The user closed it without choosing.
    Cancelled,
    /// It could not open (no portal or GTK).
    Unavailable,
}

/// Shows the system dialog for `request` (blocking). A dialog that returns nothing within
/// `min_human` did not really open: no one cancels that fast.
pub fn native_dialog(request: &PathRequest, start_dir: Option<&Path>) -> NativeAnswer {
    let min_human = Duration::from_millis(250);
    let t = Instant::now();
    let mut d = rfd::FileDialog::new().set_title(&request.title);
    if let Some(dir) = start_dir {
        d = d.set_directory(dir);
    }
    for (name, exts) in &request.filters {
        d = d.add_filter(name, exts);
    }
    let chosen = match request.kind {
        PathKind::Open => d.pick_file().map(|p| vec![p]),
        PathKind::OpenMany => d.pick_files(),
        PathKind::Save => d
            .set_file_name(&request.file_name)
            .save_file()
            .map(|p| vec![p]),
        PathKind::Folder => d.pick_folder().map(|p| vec![p]),
    };
    match chosen {
        Some(paths) if !paths.is_empty() => NativeAnswer::Chosen(paths),
        _ if t.elapsed() < min_human => NativeAnswer::Unavailable,
        _ => NativeAnswer::Cancelled,
    }
}

/// One row of the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub path: PathBuf,
    pub is_dir: bool,
}

/// The folders, then the files `request` accepts, of `dir`, each sorted by name (case-insensitive);
/// hidden entries (leading dot) left out.
pub fn list_dir(dir: &Path, request: &PathRequest) -> Result<Vec<Entry>, String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    for e in read.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = e.path();
        let is_dir = path.is_dir();
        if is_dir {
            dirs.push(Entry { name, path, is_dir });
        } else if request.kind != PathKind::Folder && request.accepts(&path) {
            files.push(Entry { name, path, is_dir });
        }
    }
    let key = |e: &Entry| e.name.to_lowercase();
    dirs.sort_by_key(key);
    files.sort_by_key(key);
    dirs.extend(files);
    Ok(dirs)
}

/// The path(s) the browser returns for the typed `name` in `dir` (or the selected files), or why
/// not. A Save name without an extension gets the first filter's.
pub fn resolve_choice(
    request: &PathRequest,
    dir: &Path,
    name: &str,
    selected: &[PathBuf],
) -> Result<Vec<PathBuf>, String> {
    let name = name.trim();
    match request.kind {
        PathKind::Folder => {
            let p = if name.is_empty() {
                dir.to_path_buf()
            } else {
                dir.join(name)
            };
            if p.is_dir() {
                Ok(vec![p])
            } else {
                Err(format!("{} is not a folder", p.display()))
            }
        }
        PathKind::Open | PathKind::OpenMany => {
            let paths: Vec<PathBuf> = if name.is_empty() {
                selected.to_vec()
            } else {
                vec![dir.join(name)]
            };
            if paths.is_empty() {
                return Err("choose a file".to_owned());
            }
            if let Some(missing) = paths.iter().find(|p| !p.is_file()) {
                return Err(format!("{} is not a file", missing.display()));
            }
            Ok(paths)
        }
        PathKind::Save => {
            if name.is_empty() {
                return Err("type a file name".to_owned());
            }
            if name.contains('/') || name.contains('\\') {
                return Err("type a name, not a path (choose the folder above)".to_owned());
            }
            let mut p = dir.join(name);
            if p.is_dir() {
                return Err(format!("{} is a folder", p.display()));
            }
            if p.extension().is_none()
                && let Some(ext) = request.filters.first().and_then(|(_, e)| e.first())
            {
                p.set_extension(ext);
            }
            if p.is_dir() {
                return Err(format!("{} is a folder", p.display()));
            }
            Ok(vec![p])
        }
    }
}

/// taglane's own file browser (a modal).
#[derive(Debug, Clone, PartialEq)]
pub struct FileBrowser {
    pub request: PathRequest,
    pub dir: PathBuf,
    /// The folder field (editable).
    pub dir_text: String,
    /// The file name field.
    pub name: String,
    pub selected: Vec<PathBuf>,
    pub entries: Result<Vec<Entry>, String>,
    pub error: Option<String>,
    /// A Save that would replace this file, waiting for confirmation.
    pub confirm_replace: Option<PathBuf>,
}

/// What the browser did this frame.
#[derive(Debug, Clone, PartialEq)]
pub enum BrowserOutcome {
    Open,
    Cancelled,
    Chosen(Vec<PathBuf>),
}

impl FileBrowser {
    pub fn new(request: PathRequest, start_dir: PathBuf) -> Self {
        let mut b = Self {
            name: request.file_name.clone(),
            request,
            dir: PathBuf::new(),
            dir_text: String::new(),
            selected: Vec::new(),
            entries: Ok(Vec::new()),
            error: None,
            confirm_replace: None,
        };
        b.go_to(start_dir);
        b
    }

    /// Shows folder `dir`.
    pub fn go_to(&mut self, dir: PathBuf) {
        self.entries = list_dir(&dir, &self.request);
        self.dir_text = dir.display().to_string();
        self.dir = dir;
        self.selected.clear();
        self.error = None;
    }

    fn confirm(&mut self) -> Option<BrowserOutcome> {
        match resolve_choice(&self.request, &self.dir, &self.name, &self.selected) {
            Ok(paths) => {
                if self.request.kind == PathKind::Save && paths[0].exists() {
                    self.confirm_replace = Some(paths[0].clone());
                    None
                } else {
                    Some(BrowserOutcome::Chosen(paths))
                }
            }
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    /// The modal, one frame. Enter confirms, Esc cancels.
    pub fn ui(&mut self, ctx: &egui::Context) -> BrowserOutcome {
        let mut outcome = BrowserOutcome::Open;
        // Read before any text field can take them; new presses only (a held Enter replaced the
        // file the moment "Replace it?" appeared).
        let (enter, esc) = ctx.input(|i| {
            (
                crate::ui::keymap::pressed_once(i, Key::Enter),
                crate::ui::keymap::pressed_once(i, Key::Escape),
            )
        });
        egui::Modal::new(egui::Id::unique("taglane_file_browser")).show(ctx, |ui| {
            ui.set_width(560.0);
            ui.heading(&self.request.title);
            if let Some(path) = self.confirm_replace.clone() {
                ui.label(format!("{} already exists. Replace it?", path.display()));
                ui.horizontal(|ui| {
                    if ui.button("Replace").clicked() || enter {
                        outcome = BrowserOutcome::Chosen(vec![path.clone()]);
                    }
                    if ui.button("Keep it").clicked() || esc {
                        self.confirm_replace = None;
                    }
                });
                return;
            }
            // Enter in the Folder field goes to that folder; it does not confirm the dialog.
            let in_folder_field = self.folder_row(ui);
            let enter = enter && !in_folder_field;
            ui.separator();
            let double_clicked = self.list_ui(ui);
            ui.separator();
            if self.request.kind != PathKind::Folder {
                ui.horizontal(|ui| {
                    let label = ui.label("File name");
                    let edit = ui.add(
                        egui::TextEdit::singleline(&mut self.name).desired_width(f32::INFINITY),
                    );
                    let edit = edit.labelled_by(label.id);
                    if self.request.kind == PathKind::Save
                        && !edit.has_focus()
                        && self.error.is_none()
                    {
                        edit.request_focus();
                    }
                });
            }
            if let Some(e) = &self.error {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
            let confirm_label = match self.request.kind {
                PathKind::Save => "Save",
                PathKind::Folder => "Choose folder",
                PathKind::Open | PathKind::OpenMany => "Open",
            };
            ui.horizontal(|ui| {
                if (ui.button(confirm_label).clicked() || enter || double_clicked)
                    && let Some(o) = self.confirm()
                {
                    outcome = o;
                }
                if ui.button("Cancel").clicked() || esc {
                    outcome = BrowserOutcome::Cancelled;
                }
            });
        });
        outcome
    }

    /// Up, Home and the Folder field; true when Enter was pressed in the field (it then went to
    /// the folder typed there).
    fn folder_row(&mut self, ui: &mut Ui) -> bool {
        ui.horizontal(|ui| {
            if ui
                .add_enabled(self.dir.parent().is_some(), egui::Button::new("Up"))
                .on_hover_text("The folder above")
                .clicked()
                && let Some(parent) = self.dir.parent()
            {
                self.go_to(parent.to_path_buf());
            }
            if let Some(home) = std::env::var_os("HOME")
                && ui.button("Home").clicked()
            {
                self.go_to(PathBuf::from(home));
            }
            let label = ui.label("Folder");
            let edit = ui
                .add(egui::TextEdit::singleline(&mut self.dir_text).desired_width(f32::INFINITY))
                .labelled_by(label.id);
            if edit.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) {
                let p = PathBuf::from(self.dir_text.trim());
                if p.is_dir() {
                    self.go_to(p);
                } else {
                    self.error = Some(format!("{} is not a folder", p.display()));
                }
                return true;
            }
            false
        })
        .inner
    }

    /// The folder's entries. A click on a folder opens it, on a file selects it; a double click
    /// on a file selects it alone and returns true (the caller confirms, as Open or Save would).
    fn list_ui(&mut self, ui: &mut Ui) -> bool {
        let entries = match &self.entries {
            Ok(e) => e.clone(),
            Err(e) => {
                ui.colored_label(ui.visuals().error_fg_color, e);
                return false;
            }
        };
        let mut go = None;
        let mut chosen = false;
        egui::ScrollArea::vertical()
            .max_height(320.0)
            .auto_shrink([false, false])
            .show_rows(ui, 20.0, entries.len(), |ui, rows| {
                for e in &entries[rows] {
                    let selected = self.selected.contains(&e.path);
                    let text = if e.is_dir {
                        format!("{}/", e.name)
                    } else {
                        e.name.clone()
                    };
                    let r = ui.selectable_label(selected, text);
                    if e.is_dir {
                        if r.clicked() {
                            go = Some(e.path.clone());
                        }
                    } else if r.double_clicked() {
                        self.selected = vec![e.path.clone()];
                        self.name = e.name.clone();
                        self.error = None;
                        chosen = true;
                    } else if r.clicked() {
                        let add = ui.input(|i| i.modifiers.command || i.modifiers.shift);
                        if self.request.kind == PathKind::OpenMany && add {
                            if selected {
                                self.selected.retain(|p| p != &e.path);
                            } else {
                                self.selected.push(e.path.clone());
                            }
                            self.name.clear();
                        } else {
                            self.selected = vec![e.path.clone()];
                            self.name = e.name.clone();
                        }
                        self.error = None;
                    }
                }
            });
        if entries.is_empty() {
            ui.weak("(no matching files here)");
        }
        if let Some(dir) = go {
            self.go_to(dir);
        }
        chosen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("taglane-fd-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        for f in ["b.json", "a.JSON", "c.csv", ".hidden.json"] {
            std::fs::write(d.join(f), "{}").unwrap();
        }
        d
    }

    #[test]
    fn listing_filters_and_sorts() {
        let d = temp("list");
        let req = PathRequest::new("t", PathKind::Open, AppCommand::Save).filter("JSON", &["json"]);
        let names: Vec<String> = list_dir(&d, &req)
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["sub", "a.JSON", "b.json"]);
        let folders = PathRequest::new("t", PathKind::Folder, AppCommand::Save);
        assert_eq!(list_dir(&d, &folders).unwrap().len(), 1);
        assert!(
            list_dir(&d.join("nope"), &req)
                .unwrap_err()
                .contains("nope")
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn choices_are_checked() {
        let d = temp("choice");
        let save =
            PathRequest::new("t", PathKind::Save, AppCommand::Save).filter("project", &["json"]);
        assert_eq!(
            resolve_choice(&save, &d, "new", &[]).unwrap(),
            vec![d.join("new.json")]
        );
        assert!(resolve_choice(&save, &d, " ", &[]).is_err());
        assert!(
            resolve_choice(&save, &d, "sub", &[])
                .unwrap_err()
                .contains("folder")
        );
        assert!(resolve_choice(&save, &d, "x/y.json", &[]).is_err());
        let open = PathRequest::new("t", PathKind::Open, AppCommand::Save);
        assert!(resolve_choice(&open, &d, "missing.json", &[]).is_err());
        assert_eq!(
            resolve_choice(&open, &d, "", &[d.join("c.csv")]).unwrap(),
            vec![d.join("c.csv")]
        );
        let folder = PathRequest::new("t", PathKind::Folder, AppCommand::Save);
        assert_eq!(
            resolve_choice(&folder, &d, "", &[]).unwrap(),
            vec![d.clone()]
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
