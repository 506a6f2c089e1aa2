//! Image snapshots of the real app, rendered on the CPU (wgpu on Mesa lavapipe). Baselines live in
//! `tests/snapshots/`; refresh them with `UPDATE_SNAPSHOTS=1`. The same images are copied to
//! `screenshots/` for the README by `scripts/screenshots.sh`.
#![cfg(feature = "ui")]

use egui_kittest::{Harness, SnapshotOptions};
use taglane::ui::TaglaneApp;
use taglane::ui::command::AppCommand;

/// One place for the size and tolerance of every snapshot: GL and Vulkan software renderers differ
/// by a few dozen pixels.
fn snapshot_harness(app: TaglaneApp) -> Harness<'static, TaglaneApp> {
    Harness::builder()
        .with_size([1600.0, 960.0])
        .with_options(SnapshotOptions::default().max_failed_pixels(400))
        .wgpu()
        .build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), app)
}

#[test]
fn timeline_on_the_demo_project() {
    let mut app = TaglaneApp::demo_for_tests();
    // A clip with a gait transition, the playhead mid-clip and one range selected.
    app.queue.push(AppCommand::SelectClip(3));
    app.queue.push(AppCommand::SetPlayhead(96.0));
    let mut h = snapshot_harness(app);
    h.run_steps(3);
    let running = h
        .state()
        .project
        .doc
        .tags
        .iter()
        .position(|t| t.name == "Running")
        .unwrap();
    let first = h.state().project.doc.tags[running].ranges[&3][0];
    h.state_mut()
        .queue
        .push(AppCommand::Select(vec![(running, first)]));
    h.state_mut()
        .queue
        .push(AppCommand::SetActiveTag(Some(running)));
    h.run_steps(3);
    h.snapshot("timeline");
}

#[test]
fn light_theme_and_help() {
    let mut app = TaglaneApp::demo_for_tests();
    app.queue.push(AppCommand::SetDarkMode(false));
    app.queue.push(AppCommand::ShowHelp(true));
    let mut h = snapshot_harness(app);
    h.run_steps(4);
    h.snapshot("light_help");
}
