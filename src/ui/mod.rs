//! The desktop application (feature `ui`): an eframe/egui app over the core.
//!
//! Panels read the project and view state and queue [`command::AppCommand`]s; the app applies them
//! in one place (`TaglaneApp::apply`, in `apply.rs`), which gives undo/redo and shortcuts one home.

pub mod anim_cache;
pub mod app;
mod apply;
pub mod autotag;
pub mod bottom_panel;
pub mod browser;
pub mod clip_follow;
pub mod command;
pub mod compression;
pub mod dialogs;
mod editing;
pub mod file_dialog;
pub mod files;
pub mod inspector;
pub mod jobs;
pub mod keymap;
pub mod library;
mod menu;
pub mod pose;
pub mod project;
pub mod query;
pub mod recovery;
pub mod side_panel;
pub mod similar;
pub mod theme;
pub mod timeline;
pub mod transport;
pub mod view;

use std::path::PathBuf;

pub use app::TaglaneApp;

/// The application id (window class, persistence folder).
pub const APP_ID: &str = "taglane";

/// Starts the desktop app on `project`, or on the embedded demo when `None`.
pub fn run_app(project: Option<PathBuf>) -> Result<(), String> {
    // Load the project before opening a window, so a bad file fails with a clear message.
    let (initial, warnings) = match &project {
        Some(p) => project::Project::load(p)?,
        None => (project::Project::demo(), Vec::new()),
    };
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("taglane")
            .with_app_id(APP_ID)
            .with_inner_size([1600.0, 960.0])
            .with_min_inner_size([720.0, 420.0])
            .with_drag_and_drop(true),
        persist_window: true,
        ..Default::default()
    };
    let recovery_dir = eframe::storage_dir(APP_ID).unwrap_or_else(std::env::temp_dir);
    eframe::run_native(
        APP_ID,
        options,
        Box::new(move |cc| {
            let prefs = cc
                .storage
                .and_then(|s| eframe::get_value::<app::Prefs>(s, app::PREFS_KEY))
                .unwrap_or_default();
            let mut app =
                TaglaneApp::new(initial, prefs, recovery::Recovery::in_dir(&recovery_dir));
            if let Some(p) = &project {
                app.prefs.recent.retain(|r| r != p);
                app.prefs.recent.insert(0, p.clone());
            }
            if let Some(w) = warnings.first() {
                app.status = Some((
                    app::Level::Warning,
                    format!("{} warning(s) while loading; first: {w}", warnings.len()),
                ));
            }
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| format!("cannot start the window: {e}"))
}
