//! Integration tests of the desktop app (egui_kittest driving the real app, image snapshots), in one
//! test binary. Built only with the `ui` feature.
#![cfg(feature = "ui")]

#[path = "../common/mod.rs"]
mod common;

mod robust_ui;
mod ui_app;
mod ui_autotag;
mod ui_compression;
mod ui_editor;
mod ui_library;
mod ui_pose;
mod ui_query;
mod ui_safety;
mod ui_similar;
mod ui_snapshots;
