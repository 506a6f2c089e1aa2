//! taglane: tag motion-capture takes with frame ranges, query the tags, preview and compress animation.
//!
//! Layers:
//! - [`core`]: tags, animation, compression and file formats. Never imports egui, eframe or rfd.
//! - [`cli`]: the `taglane` subcommands, thin wrappers over the core.
//! - `ui` (feature `ui`, default on): the eframe/egui desktop application.

pub mod cli;
pub mod core;
#[cfg(feature = "ui")]
pub mod ui;
