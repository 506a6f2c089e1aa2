//! Image snapshots of the real app, rendered on the CPU (wgpu on Mesa lavapipe). Baselines live in
//! `tests/snapshots/`; refresh them with `UPDATE_SNAPSHOTS=1`. The same images are copied to
//! `screenshots/` for the README by `scripts/screenshots.sh`.
#![cfg(feature = "ui")]

use egui_kittest::{Harness, SnapshotOptions};
use taglane::ui::TaglaneApp;
use taglane::ui::command::AppCommand;

/// One place for the size and tolerance of these snapshots. The demo loads at once and these
/// views show no timings, so the Vulkan renders the tests use are the same from run to run (0-1
/// pixels apart): 60 pixels let GL renders pass (a few dozen apart) but not a missing word (a
/// word of the tab bar is about 74 pixels), which the 400 of the views with timings let through.
fn snapshot_harness(app: TaglaneApp) -> Harness<'static, TaglaneApp> {
    Harness::builder()
        .with_size([1600.0, 960.0])
        .with_options(SnapshotOptions::default().max_failed_pixels(60))
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

/// The editor at work: markers on the contact lanes, a note on a range shown in the inspector, the
/// viewport with volume bones, onion skin and the path of the left foot.
#[test]
fn editor_with_markers_notes_inspector_and_onion_skin() {
    use taglane::core::doc::Edit;
    use taglane::core::tags::{Anchor, Note};
    let mut app = TaglaneApp::demo_for_tests();
    let doc = &app.project.doc;
    let tag = |name: &str| doc.tag_index(name).unwrap();
    let (left, walking) = (tag("contact:LeftFootDown"), tag("Walking"));
    // Heel strikes as markers at the start of each left-foot contact.
    let strikes: Vec<u32> = doc.tags[left]
        .ranges_on(0)
        .iter()
        .map(|r| r.start + 1)
        .collect();
    let walk = doc.tags[walking].ranges_on(0)[0];
    let mut note = Note {
        text: "steady pace".into(),
        ..Note::default()
    };
    note.data.insert("surface".into(), "gravel".into());
    let edit = Edit::Batch(vec![
        Edit::SetMarkers {
            tag: left,
            clip: 0,
            frames: strikes,
        },
        Edit::SetNotes {
            tag: walking,
            clip: 0,
            notes: vec![(Anchor::Range(walk), note)],
        },
    ]);
    app.project.apply(edit, "markers and a note").unwrap();
    app.side.pose.display.onion_count = 3;
    app.side.pose.display.onion_step = 6;
    let foot = 4; // LeftFoot in the demo skeleton
    app.side.pose.display.trail_joint = Some(foot);
    app.queue.push(AppCommand::SetPlayhead(120.0));
    app.queue.push(AppCommand::Select(vec![(walking, walk)]));
    app.queue.push(AppCommand::SetActiveTag(Some(walking)));
    let mut h = snapshot_harness(app);
    h.run_steps(4);
    h.snapshot("editor");
}
