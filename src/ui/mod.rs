//! The desktop application (feature `ui`).

use std::path::PathBuf;

/// Starts the desktop app on `project`, or on the embedded demo when `None`.
pub fn run_app(_project: Option<PathBuf>) -> Result<(), String> {
    Err("the desktop app is not built yet".into())
}
