//! Drives the real app through AccessKit and synthetic pointer/key events (egui_kittest), and checks
//! the document and view state after each step.
#![cfg(feature = "ui")]

use egui::{Event, Key, Modifiers, PointerButton, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use taglane::core::tags::Range;
use taglane::ui::TaglaneApp;
use taglane::ui::command::AppCommand;
use taglane::ui::project::Project;

fn harness() -> Harness<'static, TaglaneApp> {
    let mut h = Harness::builder()
        .with_size([1400.0, 860.0])
        .build_ui_state(
            |ui, app: &mut TaglaneApp| app.ui(ui),
            TaglaneApp::demo_for_tests(),
        );
    h.run_steps(3);
    h
}

fn tag_index(app: &TaglaneApp, name: &str) -> usize {
    app.project
        .doc
        .tags
        .iter()
        .position(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tag {name}"))
}

fn ranges(app: &TaglaneApp, tag: usize) -> Vec<Range> {
    app.project.doc.tags[tag]
        .ranges
        .get(&app.current_clip)
        .cloned()
        .unwrap_or_default()
}

/// A press at `from`, moves in steps, and a release at `to`, one frame each.
fn drag(h: &mut Harness<'static, TaglaneApp>, from: Pos2, to: Pos2) {
    h.event(Event::PointerMoved(from));
    h.step();
    h.event(Event::PointerButton {
        pos: from,
        button: PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    h.step();
    for k in 1..=4 {
        h.event(Event::PointerMoved(from + (to - from) * (k as f32 / 4.0)));
        h.step();
    }
    h.event(Event::PointerButton {
        pos: to,
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.step();
    h.run_steps(2);
}

/// Drags on tag `tag`'s lane from the middle of frame `from` to the middle of frame `to`.
fn drag_lane(h: &mut Harness<'static, TaglaneApp>, tag: usize, from: u32, to: u32) {
    let view = &h.state().timeline;
    let (a, b) = (
        view.lane_point(tag, from).unwrap(),
        view.lane_point(tag, to).unwrap(),
    );
    drag(h, a, b);
}

#[test]
fn opens_the_demo_project() {
    let h = harness();
    let app = h.state();
    assert!(app.project.is_demo);
    assert!(app.project.doc.clips.len() >= 8);
    assert!(
        app.project
            .doc
            .tags
            .iter()
            .any(|t| t.name == "locomotion:Transition")
    );
    h.get_by_label_contains("walk_male_01");
    h.get_by_label("Timeline tracks");
    assert_eq!(app.window_title(), "demo project — taglane");
}

#[test]
fn create_resize_undo_redo_by_hand() {
    let mut h = harness();
    let idle = tag_index(h.state(), "Idle");
    // Walk take: Idle covers the first second only; make room far from it.
    let before = ranges(h.state(), idle);
    assert!(before.iter().all(|r| r.stop < 100), "{before:?}");
    let view = &h.state().timeline;
    let (from, to) = (
        view.lane_point(idle, 100).unwrap(),
        view.lane_point(idle, 120).unwrap(),
    );
    drag(&mut h, from, to);
    let created = Range::new(100, 121);
    assert!(
        ranges(h.state(), idle).contains(&created),
        "{:?}",
        ranges(h.state(), idle)
    );
    assert_eq!(h.state().project.history.undo_label(), Some("create range"));
    assert!(h.state().window_title().starts_with('●'), "unsaved marker");

    // Resize: drag the stop edge from 121 to 140.
    let view = &h.state().timeline;
    let (from, to) = (
        view.lane_boundary_point(idle, 121).unwrap(),
        view.lane_boundary_point(idle, 140).unwrap(),
    );
    drag(&mut h, from, to);
    assert!(
        ranges(h.state(), idle).contains(&Range::new(100, 140)),
        "{:?}",
        ranges(h.state(), idle)
    );

    // Undo the resize, then the creation, with the keyboard.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert!(ranges(h.state(), idle).contains(&created));
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert_eq!(ranges(h.state(), idle), before);
    assert!(
        !h.state().window_title().starts_with('●'),
        "back to the saved state"
    );
    // Redo both.
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    h.run_steps(2);
    assert!(ranges(h.state(), idle).contains(&Range::new(100, 140)));
}

#[test]
fn move_and_delete_selected_range() {
    let mut h = harness();
    let idle = tag_index(h.state(), "Idle");
    drag_lane(&mut h, idle, 150, 159);
    assert!(ranges(h.state(), idle).contains(&Range::new(150, 160)));
    // Drag the body 20 frames right: one step in the history.
    let undo_depth = h.state().project.history.len();
    drag_lane(&mut h, idle, 155, 175);
    assert!(
        ranges(h.state(), idle).contains(&Range::new(170, 180)),
        "{:?}",
        ranges(h.state(), idle)
    );
    assert_eq!(h.state().project.history.len(), undo_depth + 1);
    assert_eq!(h.state().selection, vec![(idle, Range::new(170, 180))]);
    h.key_press(Key::Delete);
    h.run_steps(2);
    assert!(!ranges(h.state(), idle).contains(&Range::new(170, 180)));
}

#[test]
fn mark_in_and_out_while_playing() {
    let mut h = harness();
    let walking = tag_index(h.state(), "Idle");
    h.state_mut()
        .queue
        .push(AppCommand::SetActiveTag(Some(walking)));
    h.state_mut().queue.push(AppCommand::SetPlayhead(100.0));
    h.run_steps(2);
    h.key_press(Key::I);
    h.key_press(Key::Space);
    h.run_steps(3);
    assert!(h.state().playback.playing);
    let out = h.state().playback.playhead.floor() as u32;
    assert!(out > 100, "the playhead moved while playing");
    h.key_press(Key::O);
    h.key_press(Key::Space);
    h.run_steps(1);
    let app = h.state();
    assert!(!app.playback.playing);
    let made: Vec<Range> = ranges(app, walking)
        .into_iter()
        .filter(|r| r.start == 100)
        .collect();
    assert_eq!(made.len(), 1, "{:?}", ranges(app, walking));
    // Mark out is inclusive of the frame under the playhead (it moved at most one more step).
    assert!(
        made[0].stop > out && made[0].stop <= out + 10,
        "{:?}, out at {out}",
        made[0]
    );
}

#[test]
fn rename_a_tag_updates_saved_queries() {
    let mut h = harness();
    h.get_by_label("Running").click();
    h.run_steps(2);
    assert_eq!(h.state().active_tag, Some(tag_index(h.state(), "Running")));
    h.get_by_label("Rename tag").click();
    h.run_steps(2);
    assert!(h.state().dialog.is_some(), "{:?}", h.state().status);
    // A modal needs a sizing pass before it is shown.
    h.run_steps(3);
    let field = h.get_by_label("New tag name");
    field.focus();
    field.type_text("");
    h.run_steps(1);
    // Replace the text: select all, then type.
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.get_by_label("New tag name").type_text("Sprinting");
    h.run_steps(2);
    h.get_by_label("Rename").click();
    h.run_steps(3);
    let app = h.state();
    assert!(
        app.project.doc.tags.iter().any(|t| t.name == "Sprinting"),
        "{:?}",
        app.status
    );
    assert!(
        app.project
            .doc
            .queries
            .iter()
            .any(|q| q.expr == "Sprinting & Male & (Tired | Limping)")
    );
    assert!(
        !app.project
            .doc
            .queries
            .iter()
            .any(|q| q.expr.contains("Running"))
    );
}

#[test]
fn save_and_reload() {
    let dir = std::env::temp_dir().join(format!("taglane-ui-save-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("project.taglane.json");
    let mut h = harness();
    let idle = tag_index(h.state(), "Idle");
    drag_lane(&mut h, idle, 100, 110);
    h.state_mut()
        .queue
        .push(AppCommand::SaveAs(Some(path.clone())));
    h.run_steps(2);
    assert!(
        !h.state().project.history.is_dirty(),
        "{:?}",
        h.state().status
    );
    assert_eq!(h.state().window_title(), "project.taglane.json — taglane");
    let (loaded, warnings) = Project::load(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let saved = &h.state().project.doc;
    assert_eq!(loaded.doc.clips, saved.clips);
    assert_eq!(loaded.doc.queries, saved.queries);
    for (a, b) in loaded.doc.tags.iter().zip(&saved.tags) {
        assert_eq!((&a.name, a.color, &a.ranges), (&b.name, b.color, &b.ranges));
    }
    // Open it back in the app.
    h.state_mut()
        .queue
        .push(AppCommand::Guarded(taglane::ui::command::Guarded::Open(
            Some(path.clone()),
        )));
    h.run_steps(2);
    assert_eq!(h.state().project.path.as_deref(), Some(path.as_path()));
    assert!(ranges(h.state(), idle).contains(&Range::new(100, 111)));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unsaved_changes_prompt_before_new() {
    let mut h = harness();
    let idle = tag_index(h.state(), "Idle");
    drag_lane(&mut h, idle, 100, 110);
    h.key_press_modifiers(Modifiers::COMMAND, Key::N);
    h.run_steps(2);
    h.get_by_label("Unsaved changes");
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(h.state().project.is_demo, "cancel keeps the project");
    h.key_press_modifiers(Modifiers::COMMAND, Key::N);
    h.run_steps(2);
    h.get_by_label("Don't save").click();
    h.run_steps(3);
    assert!(
        h.state().project.doc.clips.is_empty(),
        "new project after discarding"
    );
}
