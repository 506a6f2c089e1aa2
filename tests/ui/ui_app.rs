//! Drives the real app through AccessKit and synthetic pointer/key events (egui_kittest), and checks
//! the document and view state after each step.
#![cfg(feature = "ui")]

use crate::common::temp_dir;
use crate::common::{ranges, tag_index};
use egui::{Event, Key, Modifiers, PointerButton, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use taglane::core::tags::Range;
use taglane::ui::TaglaneApp;
use taglane::ui::command::AppCommand;
use taglane::ui::project::Project;

fn harness() -> Harness<'static, TaglaneApp> {
    crate::common::demo_harness([1400.0, 860.0])
}

/// A drag with Alt held: these tests check exact frames, so snapping (tested in ui_editor.rs) is
/// off.
fn drag(h: &mut Harness<'static, TaglaneApp>, from: Pos2, to: Pos2) {
    crate::common::drag(h, from, to, Modifiers::ALT, |_| {});
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
    assert!(h.state().selection.is_empty());
    // Undo brings the range back selected, as it was; undoing the move selects it where it was.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert_eq!(h.state().selection, vec![(idle, Range::new(170, 180))]);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert!(ranges(h.state(), idle).contains(&Range::new(150, 160)));
    assert_eq!(h.state().selection, vec![(idle, Range::new(150, 160))]);
    // Redo of the move: the moved range selected again.
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    h.run_steps(2);
    assert_eq!(h.state().selection, vec![(idle, Range::new(170, 180))]);
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

/// Ctrl+Shift+V with no lane picked says so instead of pasting by tag name (its menu item is off
/// then); a lane that no longer exists is no lane, and O there does not index past the tags.
#[test]
fn paste_into_the_active_lane_needs_a_lane() {
    let mut h = harness();
    let idle = tag_index(h.state(), "Idle");
    let r = ranges(h.state(), idle)[0];
    h.state_mut()
        .queue
        .push(AppCommand::Select(vec![(idle, r)]));
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::C);
    h.run_steps(1);
    h.state_mut().queue.push(AppCommand::SetActiveTag(None));
    h.state_mut().queue.push(AppCommand::SetPlayhead(150.0));
    h.run_steps(1);
    let steps = h.state().project.history.len();
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::V);
    h.run_steps(2);
    assert_eq!(h.state().project.history.len(), steps);
    let status = h.state().status.clone().map(|s| s.1).unwrap_or_default();
    assert!(status.contains("pick a lane to paste into"), "{status}");
    let past = h.state().project.doc.tags.len();
    h.state_mut()
        .queue
        .push(AppCommand::SetActiveTag(Some(past)));
    h.run_steps(1);
    assert_eq!(h.state().active_tag, None);
    h.key_press(Key::I);
    h.key_press(Key::O);
    h.run_steps(2);
    assert_eq!(h.state().project.history.len(), steps);
}

/// Keys pressed within one frame (a slow frame: a save of a large project) act in the order
/// they were pressed, one action a press: I, three steps and O mark the three frames walked
/// (they were merged into one step each and run in the table's order: O before the steps).
#[test]
fn keys_of_one_frame_act_in_their_order() {
    let mut h = harness();
    let idle = tag_index(h.state(), "Idle");
    h.state_mut()
        .queue
        .push(AppCommand::SetActiveTag(Some(idle)));
    h.state_mut().queue.push(AppCommand::SetPlayhead(100.0));
    h.run_steps(2);
    let before = ranges(h.state(), idle);
    assert!(!before.iter().any(|r| r.contains(101)), "{before:?}");
    for k in [
        Key::I,
        Key::ArrowRight,
        Key::ArrowRight,
        Key::ArrowRight,
        Key::O,
    ] {
        h.key_press(k);
    }
    h.step();
    h.run_steps(1);
    let made: Vec<Range> = ranges(h.state(), idle)
        .into_iter()
        .filter(|r| r.start == 100)
        .collect();
    // Mark out takes the frame under the playhead: 100..=103.
    assert_eq!(made, vec![Range::new(100, 104)]);
    assert_eq!(h.state().playback.playhead, 103.0);
}

/// A held key acts once, except the keys meant to repeat (stepping): holding Space starts
/// playback and leaves it playing.
#[test]
fn a_held_key_acts_once_unless_it_steps() {
    let mut h = harness();
    h.state_mut().queue.push(AppCommand::SetPlayhead(100.0));
    h.run_steps(2);
    for _ in 0..4 {
        h.key_down(Key::Space);
        h.run_steps(1);
    }
    h.key_up(Key::Space);
    h.run_steps(1);
    assert!(h.state().playback.playing);
    h.key_press(Key::Space);
    h.run_steps(1);
    assert!(!h.state().playback.playing);
    h.state_mut().queue.push(AppCommand::SetPlayhead(100.0));
    h.run_steps(1);
    for _ in 0..3 {
        h.key_down(Key::ArrowRight);
        h.run_steps(1);
    }
    h.key_up(Key::ArrowRight);
    h.run_steps(1);
    assert_eq!(h.state().playback.playhead, 103.0);
}

#[test]
fn rename_a_tag_updates_saved_queries() {
    let mut h = harness();
    h.get_by_label("Running").click();
    h.run_steps(2);
    assert_eq!(h.state().active_tag, Some(tag_index(h.state(), "Running")));
    h.state_mut().browser.filters.tag = taglane::ui::browser::TagFilter::Tag("Running".into());
    h.state_mut().query.text = "Running & Male".into();
    h.state_mut().similar.accept_tag = "Running".into();
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
    assert_eq!(
        app.browser.filters.tag,
        taglane::ui::browser::TagFilter::Tag("Sprinting".into()),
        "the browser's tag filter follows the rename"
    );
    assert_eq!(
        app.query.text, "Sprinting & Male",
        "the query composed follows too"
    );
    assert_eq!(
        app.similar.accept_tag, "Sprinting",
        "and the tag Find similar accepts into"
    );
    // Undo and redo take the view's state by name with them too (a hidden lane, the filter):
    // undoing the rename left "Running" shown and the filter matching no tag.
    h.state_mut()
        .queue
        .push(AppCommand::ToggleHidden("Sprinting".into()));
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    let app = h.state();
    assert!(app.project.doc.tags.iter().any(|t| t.name == "Running"));
    assert!(app.timeline.is_dimmed("Running"), "the lane stays hidden");
    assert_eq!(app.query.text, "Running & Male");
    assert_eq!(app.similar.accept_tag, "Running");
    assert_eq!(
        app.browser.filters.tag,
        taglane::ui::browser::TagFilter::Tag("Running".into())
    );
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    h.run_steps(2);
    let app = h.state();
    assert!(app.timeline.is_dimmed("Sprinting"));
    assert_eq!(
        app.browser.filters.tag,
        taglane::ui::browser::TagFilter::Tag("Sprinting".into())
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
    let edited = ranges(h.state(), idle);
    assert!(edited.iter().any(|r| r.contains(105)), "{edited:?}");
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
    // The demo's takes were written out beside it, and the status bar says so.
    let status = h
        .state()
        .status
        .as_ref()
        .map(|s| s.1.clone())
        .unwrap_or_default();
    let takes = h.state().project.doc.clips.len();
    assert!(
        status.contains(&format!(
            "with the demo's {takes} take(s) written beside it"
        )),
        "{status}"
    );
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
    assert_eq!(ranges(h.state(), idle), edited);
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

#[test]
fn copy_paste_between_clips_and_into_another_tag() {
    let mut h = harness();
    let idle = tag_index(h.state(), "Idle");
    let injured = tag_index(h.state(), "Injured");
    drag_lane(&mut h, idle, 100, 109);
    // The range drawn is selected, ready for exact frames in the inspector.
    assert_eq!(h.state().selection, vec![(idle, Range::new(100, 110))]);
    h.state_mut().selection.clear();
    // Select it by clicking it, copy, switch clip, paste at the playhead.
    let p = h.state().timeline.lane_point(idle, 105).unwrap();
    h.event(Event::PointerMoved(p));
    h.event(Event::PointerButton {
        pos: p,
        button: PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    h.event(Event::PointerButton {
        pos: p,
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.run_steps(2);
    assert_eq!(h.state().selection, vec![(idle, Range::new(100, 110))]);
    h.key_press_modifiers(Modifiers::COMMAND, Key::C);
    h.get_by_label_contains("run_male_01").click();
    h.run_steps(2);
    assert_eq!(h.state().current_clip, 1);
    h.state_mut().queue.push(AppCommand::SetPlayhead(20.0));
    h.run_steps(1);
    h.key_press_modifiers(Modifiers::COMMAND, Key::V);
    h.run_steps(2);
    assert!(
        ranges(h.state(), idle).contains(&Range::new(20, 30)),
        "{:?}",
        ranges(h.state(), idle)
    );
    // Ctrl+V while the system clipboard holds an image: egui sends an image paste, no key; the
    // copied ranges paste all the same (nothing happened before).
    h.state_mut().queue.push(AppCommand::SetPlayhead(140.0));
    h.run_steps(1);
    h.event(Event::PasteImage(std::sync::Arc::new(
        egui::ColorImage::filled([1, 1], egui::Color32::WHITE),
    )));
    h.run_steps(2);
    assert!(
        ranges(h.state(), idle).contains(&Range::new(140, 150)),
        "{:?}",
        ranges(h.state(), idle)
    );
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    // Paste into the active lane instead.
    h.state_mut()
        .queue
        .push(AppCommand::SetActiveTag(Some(injured)));
    h.state_mut().queue.push(AppCommand::SetPlayhead(50.0));
    h.run_steps(1);
    h.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::V);
    h.run_steps(2);
    assert_eq!(ranges(h.state(), injured), vec![Range::new(50, 60)]);
    // History survives switching clips: undo both pastes from clip 0.
    h.get_by_label_contains("walk_male_01").click();
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    let doc = &h.state().project.doc;
    assert!(!doc.tags[injured].ranges.contains_key(&1));
    assert!(
        doc.tags[idle]
            .ranges
            .get(&1)
            .is_none_or(|l| !l.contains(&Range::new(20, 30)))
    );
}

#[test]
fn box_select_split_and_jump_to_edges() {
    let mut h = harness();
    let left = tag_index(h.state(), "contact:LeftFootDown");
    let right = tag_index(h.state(), "contact:RightFootDown");
    let view = &h.state().timeline;
    let (a, b) = (
        view.lane_point(left, 40).unwrap(),
        view.lane_point(right, 140).unwrap(),
    );
    // Shift+drag on an empty spot starts a box selection.
    h.event(Event::PointerMoved(a));
    h.step();
    h.event(Event::ModifiersChanged(Modifiers::SHIFT));
    h.event(Event::PointerButton {
        pos: a,
        button: PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::SHIFT,
    });
    h.step();
    for k in 1..=4 {
        h.event(Event::PointerMoved(a + (b - a) * (k as f32 / 4.0)));
        h.step();
    }
    h.event(Event::PointerButton {
        pos: b,
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::SHIFT,
    });
    h.step();
    h.event(Event::ModifiersChanged(Modifiers::NONE));
    h.run_steps(2);
    let sel = h.state().selection.clone();
    let doc = &h.state().project.doc;
    let expected: usize = [left, right]
        .iter()
        .map(|&t| {
            doc.tags[t].ranges[&0]
                .iter()
                .filter(|r| r.stop > 40 && r.start < 141)
                .count()
        })
        .sum();
    assert!(expected >= 4);
    assert_eq!(sel.len(), expected, "{sel:?}");
    // Split the first selected range at its middle.
    let (tag, r) = sel[0];
    let mid = (r.start + r.stop) / 2;
    h.state_mut().queue.push(AppCommand::Select(vec![(tag, r)]));
    h.state_mut()
        .queue
        .push(AppCommand::SetPlayhead(mid as f64));
    h.run_steps(1);
    h.key_press(Key::S);
    h.run_steps(2);
    let now = ranges(h.state(), tag);
    assert!(
        now.contains(&Range::new(r.start, mid)) && now.contains(&Range::new(mid + 1, r.stop)),
        "{now:?}"
    );
    // Jump to the next range edge of the visible lanes.
    h.state_mut().queue.push(AppCommand::SetPlayhead(0.0));
    h.run_steps(1);
    h.key_press_modifiers(Modifiers::COMMAND, Key::ArrowRight);
    h.run_steps(1);
    let p = h.state().playback.playhead as u32;
    let doc = &h.state().project.doc;
    let first_edge = doc
        .tags
        .iter()
        .filter_map(|t| t.ranges.get(&0))
        .flatten()
        .flat_map(|r| [r.start, r.stop])
        .filter(|&e| e > 0)
        .min()
        .unwrap();
    assert_eq!(p, first_edge);
}

#[test]
fn tags_create_reorder_hide_solo_delete() {
    let mut h = harness();
    let n = h.state().project.doc.tags.len();
    h.get_by_label("New tag").click();
    h.run_steps(3);
    // A dialog of its own: naming, not renaming; the field starts empty (typing gives the
    // name, nothing to select first).
    h.get_by_label("Name the new tag");
    h.get_by_label("New tag name").type_text("gesture:Wave");
    h.run_steps(1);
    h.get_by_label("Name").click();
    h.run_steps(3);
    // The status line and the undo entry say what happened: a tag made, not one renamed.
    let status = h.state().status.as_ref().map(|s| s.1.clone());
    assert_eq!(status.as_deref(), Some("new tag gesture:Wave"));
    assert_eq!(
        h.state().project.history.undo_label(),
        Some("name new tag gesture:Wave")
    );
    let doc = &h.state().project.doc;
    assert_eq!(doc.tags.len(), n + 1);
    let wave = tag_index(h.state(), "gesture:Wave");
    // The new tag has a colour of its own, apart in hue from every other tag's.
    {
        use taglane::core::tags::color::{hue_distance, hue_of, shown_color};
        let hue = |t: &taglane::core::tags::Tag| hue_of(shown_color(t.color, &t.name));
        let new = hue(&doc.tags[wave]).expect("a coloured tag");
        assert!(doc.tags[wave].color.is_some());
        for (i, t) in doc.tags.iter().enumerate() {
            if let Some(h) = hue(t).filter(|_| i != wave) {
                assert!(hue_distance(new, h) >= 20.0, "{} at {h} vs {new}", t.name);
            }
        }
    }
    // A namespace header appears for it.
    h.get_by_label_contains("gesture  (1)");
    h.state_mut().queue.push(AppCommand::MoveTag {
        index: wave,
        up: true,
    });
    h.run_steps(2);
    assert_eq!(tag_index(h.state(), "gesture:Wave"), wave - 1);
    h.state_mut()
        .queue
        .push(AppCommand::ToggleHidden("Male".into()));
    h.state_mut()
        .queue
        .push(AppCommand::ToggleSolo("Walking".into()));
    h.run_steps(2);
    assert!(h.state().timeline.is_dimmed("Male") && h.state().timeline.is_dimmed("Running"));
    assert!(!h.state().timeline.is_dimmed("Walking"));
    // Delete asks first.
    let male = tag_index(h.state(), "Male");
    h.state_mut().queue.push(AppCommand::AskDeleteTag(male));
    h.run_steps(3);
    assert_eq!(
        h.state().dialog,
        Some(taglane::ui::app::Dialog::ConfirmDeleteTag(male))
    );
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert_eq!(h.state().project.doc.tags.len(), n + 1);
    h.state_mut().queue.push(AppCommand::AskDeleteTag(male));
    h.run_steps(3);
    h.get_by_label("Delete").click();
    h.run_steps(2);
    assert!(h.state().project.doc.tags.iter().all(|t| t.name != "Male"));
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert_eq!(
        tag_index(h.state(), "Male"),
        male,
        "undo restores the tag in place"
    );
}

#[test]
fn export_and_import_csv_json_and_per_clip() {
    use taglane::ui::command::ExportKind;
    let dir = temp_dir("export");
    let mut h = harness();
    let csv = dir.join("tags.csv");
    let json = dir.join("tags.json");
    let per_clip = dir.join("per_clip");
    h.state_mut()
        .queue
        .push(AppCommand::Export(ExportKind::Csv, Some(csv.clone())));
    h.state_mut()
        .queue
        .push(AppCommand::Export(ExportKind::Json, Some(json.clone())));
    h.state_mut().queue.push(AppCommand::Export(
        ExportKind::PerClipJson { replace: false },
        Some(per_clip.clone()),
    ));
    h.run_steps(2);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with(&format!("{}\n", taglane::core::doc::exchange::CSV_HEADER)));
    assert!(
        text.contains("Male,walk_male_01,0,241,0.000000,8.033333"),
        "{}",
        &text[..200]
    );
    assert_eq!(
        std::fs::read_dir(&per_clip).unwrap().count(),
        h.state().project.doc.clips.len()
    );
    // Into the same folder again: the app asks first; Cancel writes nothing, Replace writes all.
    let first = std::fs::read_dir(&per_clip)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let exported = std::fs::read_to_string(&first).unwrap();
    std::fs::write(&first, "edited by hand").unwrap();
    let again = || {
        AppCommand::Export(
            ExportKind::PerClipJson { replace: false },
            Some(per_clip.clone()),
        )
    };
    h.state_mut().queue.push(again());
    h.run_steps(3);
    h.get_by_label("Replace files?");
    h.get_by_label_contains("of the clips' tag files already exist");
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(h.state().dialog.is_none());
    assert_eq!(std::fs::read_to_string(&first).unwrap(), "edited by hand");
    h.state_mut().queue.push(again());
    h.run_steps(3);
    h.get_by_label("Replace").click();
    h.run_steps(2);
    assert_eq!(std::fs::read_to_string(&first).unwrap(), exported);
    // Importing our own export changes nothing.
    h.state_mut()
        .queue
        .push(AppCommand::ImportTags(Some(csv.clone())));
    h.run_steps(2);
    assert!(
        !h.state().project.history.is_dirty(),
        "{:?}",
        h.state().status
    );
    // A CSV with a new tag and a row on an unknown clip: merged, conflict reported, one undo step.
    std::fs::write(
        &csv,
        "tag,clip,start,stop\nWave,walk_male_01,10,20\nWave,nowhere,1,2\n",
    )
    .unwrap();
    h.state_mut()
        .queue
        .push(AppCommand::ImportTags(Some(csv.clone())));
    h.run_steps(2);
    let wave = tag_index(h.state(), "Wave");
    assert_eq!(
        h.state().project.doc.tags[wave].ranges[&0],
        vec![Range::new(10, 20)]
    );
    let status = h.state().status.clone().unwrap().1;
    assert!(
        status.contains("nowhere") && status.contains("skipped"),
        "{status}"
    );
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert!(h.state().project.doc.tags.iter().all(|t| t.name != "Wave"));
    // A bad CSV changes nothing and says where.
    std::fs::write(&csv, "tag,clip,start,stop\nWave,walk_male_01,x,20\n").unwrap();
    h.state_mut()
        .queue
        .push(AppCommand::ImportTags(Some(csv.clone())));
    h.run_steps(2);
    let status = h.state().status.clone().unwrap().1;
    assert!(
        status.contains("line 2") && status.contains("start"),
        "{status}"
    );
    assert!(!h.state().project.history.is_dirty());
    // A tags file the reader corrects (two overlapping ranges merged): merged, and said.
    let file = dir.join("overlap.tags.json");
    std::fs::write(
        &file,
        r#"{"format": "taglane.tags", "version": 1,
            "clips": [{"name": "walk_male_01", "frames": 241, "fps": 30}],
            "tags": [{"name": "Wave", "ranges": {"walk_male_01": [[10, 20], [15, 25]]}}]}"#,
    )
    .unwrap();
    h.state_mut()
        .queue
        .push(AppCommand::ImportTags(Some(file.clone())));
    h.run_steps(2);
    let wave = tag_index(h.state(), "Wave");
    assert_eq!(
        h.state().project.doc.tags[wave].ranges[&0],
        vec![Range::new(10, 25)]
    );
    let (level, status) = h.state().status.clone().unwrap();
    assert!(
        status.contains("in the file, tags[0].ranges.walk_male_01"),
        "{status}"
    );
    assert_eq!(level, taglane::ui::app::Level::Warning);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn import_animation_files_and_relink() {
    let dir = temp_dir("import");
    let (name, text) = taglane::ui::project::DEMO_CLIP_FILES[0];
    let bvh = dir.join(name);
    std::fs::write(&bvh, text).unwrap();
    std::fs::write(
        dir.join("broken.bvh"),
        "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n",
    )
    .unwrap();
    let mut h = harness();
    let n = h.state().project.doc.clips.len();
    h.state_mut()
        .queue
        .push(AppCommand::ImportAnimation(Some(vec![
            bvh.clone(),
            dir.join("broken.bvh"),
        ])));
    h.run_steps(1);
    crate::common::wait_import(&mut h);
    let doc = &h.state().project.doc;
    assert_eq!(doc.clips.len(), n + 1, "one imported, one refused");
    // The demo already has a `walk_male_01`: the new clip's name says which folder it is from.
    let name = &doc.clips[n].name;
    assert!(
        name != "walk_male_01" && name.ends_with("walk_male_01"),
        "{name}"
    );
    assert_eq!(doc.clips[n].frames, 241);
    assert_eq!(
        doc.clips[n].unit_cm,
        Some(1.0),
        "the unit is chosen and stored"
    );
    let status = h.state().status.clone().unwrap().1;
    assert!(
        status.contains("broken.bvh") && status.contains("line"),
        "{status}"
    );
    let report = h.state().library.last.as_ref().unwrap().report_text(true);
    assert!(report.contains("broken.bvh"), "{report}");
    // Dropping the same file again adds nothing: it is already in the project.
    h.input_mut()
        .dropped_files
        .push(std::sync::Arc::new(DroppedPath(bvh.clone())));
    h.run_steps(1);
    crate::common::wait_import(&mut h);
    assert_eq!(h.state().project.doc.clips.len(), n + 1);
    let status = h.state().status.clone().unwrap().1;
    assert!(status.contains("already in the project"), "{status}");
    // Re-link a clip to a moved file.
    let moved = dir.join("moved.bvh");
    std::fs::rename(&bvh, &moved).unwrap();
    h.state_mut().queue.push(AppCommand::Relink {
        clip: n as u32,
        path: Some(moved.clone()),
    });
    h.run_steps(2);
    let source = h.state().project.doc.clips[n].source.clone().unwrap();
    assert!(source.ends_with("moved.bvh"), "{source}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file dropped on the window, as the windowing layer hands it to egui.
#[derive(Debug)]
struct DroppedPath(std::path::PathBuf);

impl egui::DroppedFile for DroppedPath {
    fn path(&self) -> &std::path::Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

/// A drag under which the document or the clip changes (here an undo, then another clip shown,
/// as a finished import does) is dropped: it does not land on what it was not made for.
#[test]
fn a_drag_is_dropped_when_the_document_or_clip_changes_under_it() {
    let mut h = harness();
    let idle = tag_index(h.state(), "Idle");
    for interrupt in [AppCommand::Undo, AppCommand::SelectClip(1)] {
        // Something to undo (the first round), made before the drag.
        let view = &h.state().timeline;
        let (a, b) = (
            view.lane_point(idle, 150).unwrap(),
            view.lane_point(idle, 160).unwrap(),
        );
        drag(&mut h, a, b);
        let view = &h.state().timeline;
        let (from, to) = (
            view.lane_point(idle, 100).unwrap(),
            view.lane_point(idle, 120).unwrap(),
        );
        crate::common::press(&mut h, from, Modifiers::ALT);
        crate::common::drag_steps(&mut h, from, to, 1..=2);
        assert!(h.state().timeline.gesture.is_some(), "dragging");
        h.state_mut().queue.push(interrupt.clone());
        h.step();
        let doc_now = h.state().project.doc.clone();
        crate::common::drag_steps(&mut h, from, to, 3..=4);
        crate::common::release(&mut h, to, Modifiers::ALT);
        h.run_steps(3);
        let app = h.state();
        assert_eq!(
            app.project.doc.tags, doc_now.tags,
            "{interrupt:?}: nothing landed"
        );
        assert!(app.timeline.gesture.is_none());
    }
}

/// The shortcuts window (F1) fits a small window below the menu bar and scrolls to its last row.
#[test]
fn the_shortcuts_window_fits_and_scrolls() {
    let mut h = crate::common::demo_harness([1024.0, 640.0]);
    h.key_press(Key::F1);
    h.run_steps(3);
    assert!(h.state().show_help);
    let rect = h
        .ctx
        .memory(|m| m.area_rect(egui::Id::unique("Keyboard shortcuts")))
        .expect("the window is shown");
    assert!(rect.bottom() <= 640.0 && rect.top() >= 20.0, "{rect:?}");
    // The last gesture is laid out (in the scrolled list), so it can be reached.
    h.get_by_label_contains("Enter / Esc");
    // Esc closes it.
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert!(!h.state().show_help);
}

/// A timeline showing the whole clip shows it whole again after the window is resized; one the
/// user zoomed stays as zoomed.
#[test]
fn the_timeline_fits_the_clip_again_when_the_window_is_resized() {
    let mut h = crate::common::demo_harness([1600.0, 1000.0]);
    h.run_steps(2);
    let frames = f64::from(h.state().project.doc.clips[h.state().current_clip as usize].frames);
    let fits = |h: &egui_kittest::Harness<'static, taglane::ui::TaglaneApp>| {
        let a = h.state().timeline.last_axis.expect("drawn");
        let shown = f64::from(a.width) / a.px_per_frame;
        a.first_frame == 0.0 && shown >= frames && shown < frames * 1.05
    };
    assert!(fits(&h));
    for size in [[2400.0, 1200.0], [1100.0, 700.0]] {
        h.set_size(egui::Vec2::from(size));
        h.run_steps(3);
        assert!(fits(&h), "{size:?}: {:?}", h.state().timeline.last_axis);
    }
    // Zoomed by the user: kept.
    h.state_mut().timeline.zoom_around(2.0, 0.0);
    h.run_steps(1);
    let zoomed = h.state().timeline.last_axis.unwrap().px_per_frame;
    h.set_size(egui::Vec2::new(1600.0, 1000.0));
    h.run_steps(3);
    assert_eq!(h.state().timeline.last_axis.unwrap().px_per_frame, zoomed);
}

/// Undo and redo of a new tag or a deleted one leave the lane the user was on active, not its
/// neighbour (M, I/O and paste act on the active lane).
#[test]
fn undo_of_a_new_or_deleted_tag_keeps_the_lane_that_was_active() {
    let mut h = harness();
    let first = h.state().project.doc.tags[0].name.clone();
    let tag_count_before = h.state().project.doc.tags.len();
    h.state_mut().queue.push(AppCommand::SetActiveTag(Some(0)));
    h.run_steps(2);
    h.state_mut().queue.push(AppCommand::NewTag);
    h.run_steps(2);
    assert_eq!(
        h.state().active_tag,
        Some(1),
        "the new tag, below the active lane"
    );
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert!(h.state().dialog.is_none());
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(tag_index(h.state(), &first), 0);
    assert_eq!(h.state().active_tag, Some(0), "back on {first}");
    h.state_mut().queue.push(AppCommand::Redo);
    h.run_steps(2);
    assert_eq!(h.state().project.doc.tags.len(), 1 + tag_count_before);
    assert_eq!(h.state().active_tag, Some(0), "redo moves no lane");
    // Delete the active tag, then undo: it is active again, not the neighbour that took its place.
    let second = h.state().project.doc.tags[2].name.clone();
    h.state_mut().queue.push(AppCommand::SetActiveTag(Some(2)));
    h.state_mut().queue.push(AppCommand::DeleteTag(2));
    h.run_steps(2);
    assert!(h.state().project.doc.tag_index(&second).is_none());
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(h.state().active_tag, Some(tag_index(h.state(), &second)));
    // Delete a tag that is not the active lane, then undo: the active lane stays where it was,
    // even when the tag comes back at the active lane's index.
    let (a, b) = (
        h.state().project.doc.tags[0].name.clone(),
        h.state().project.doc.tags[1].name.clone(),
    );
    h.state_mut().queue.push(AppCommand::SetActiveTag(Some(1)));
    h.state_mut().queue.push(AppCommand::DeleteTag(0));
    h.run_steps(2);
    assert_eq!(h.state().active_tag, Some(tag_index(h.state(), &b)));
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(tag_index(h.state(), &a), 0);
    assert_eq!(
        h.state().active_tag,
        Some(tag_index(h.state(), &b)),
        "still {b}"
    );
}

/// A range moved onto its neighbour merges with it (a tag is a set of frames): the selection is
/// then the merged range, which Delete removes, not the moved part that no longer exists alone.
#[test]
fn a_move_that_merges_selects_the_merged_range() {
    let mut h = harness();
    let idle = tag_index(h.state(), "Idle");
    drag_lane(&mut h, idle, 100, 109);
    drag_lane(&mut h, idle, 130, 139);
    assert_eq!(h.state().selection, vec![(idle, Range::new(130, 140))]);
    // Drag the first range's body 25 frames right, onto the second.
    drag_lane(&mut h, idle, 105, 130);
    assert!(
        ranges(h.state(), idle).contains(&Range::new(125, 140)),
        "{:?}",
        ranges(h.state(), idle)
    );
    assert_eq!(h.state().selection, vec![(idle, Range::new(125, 140))]);
    h.key_press(Key::Delete);
    h.run_steps(2);
    assert!(
        ranges(h.state(), idle).iter().all(|r| r.stop <= 100),
        "{:?}",
        ranges(h.state(), idle)
    );
}

/// Copy also puts the ranges on the system clipboard as a table, so Ctrl+V works here (egui makes
/// Ctrl+V a paste only when the system clipboard holds text) and a paste elsewhere gets them.
#[test]
fn copy_puts_the_ranges_on_the_system_clipboard() {
    let mut h = harness();
    let idle = tag_index(h.state(), "Idle");
    // A range that does not start at frame 0 (Idle on run_stop_male_03 is 135-211): the table
    // gives the clip's frames, not positions relative to the first copied item.
    let c = h
        .state()
        .project
        .doc
        .clips
        .iter()
        .position(|c| c.name == "run_stop_male_03")
        .unwrap();
    h.state_mut().queue.push(AppCommand::SelectClip(c as u32));
    h.run_steps(2);
    let r = ranges(h.state(), idle)[0];
    assert!(r.start > 0, "{r:?}");
    h.state_mut()
        .queue
        .push(AppCommand::Select(vec![(idle, r)]));
    h.run_steps(2);
    h.state_mut().queue.push(AppCommand::Copy);
    h.step();
    let copied = |h: &Harness<'static, TaglaneApp>| -> Vec<String> {
        h.output()
            .platform_output
            .commands
            .iter()
            .filter_map(|c| match c {
                egui::OutputCommand::CopyText(t) => Some(t.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        copied(&h),
        [format!(
            "clip\ttag\tstart\tstop\tnote\nrun_stop_male_03\tIdle\t{}\t{}\t\n",
            r.start, r.stop
        )]
    );
    // With nothing selected, a copy leaves the system clipboard alone.
    h.state_mut().queue.push(AppCommand::SelectItems {
        ranges: Vec::new(),
        markers: Vec::new(),
    });
    h.run_steps(1);
    h.state_mut().queue.push(AppCommand::Copy);
    h.step();
    assert!(copied(&h).is_empty());
}

/// Mark in near the end of a looping clip, mark out after the wrap: the frames that played,
/// [in, end) and [0, out], not the ones between out and in that did not.
#[test]
fn mark_in_and_out_across_the_loop_wrap_tag_what_played() {
    let mut h = harness();
    let running = tag_index(h.state(), "Running");
    let frames = h.state().frames();
    let fps = f64::from(h.state().fps());
    h.state_mut()
        .queue
        .push(AppCommand::SetActiveTag(Some(running)));
    // Mark in 10 frames before the end, then play 40 frames: past the end, wrapped to frame 29.
    let mark_in_and_wrap = |h: &mut Harness<'static, TaglaneApp>| {
        h.state_mut()
            .queue
            .push(AppCommand::SetPlayhead(f64::from(frames - 10)));
        h.run_steps(1);
        h.state_mut().queue.push(AppCommand::MarkIn);
        h.run_steps(1);
        assert!(h.state().playback.looping);
        h.state_mut().playback.advance(40.0 / fps, fps, frames);
    };
    mark_in_and_wrap(&mut h);
    let out = h.state().playback.playhead.floor() as u32;
    assert!(out < 40, "{out}");
    h.state_mut().queue.push(AppCommand::MarkOut);
    h.run_steps(1);
    let now = ranges(h.state(), running);
    assert!(now.contains(&Range::new(frames - 10, frames)), "{now:?}");
    assert!(now.iter().any(|r| r.start == 0 && r.stop > out), "{now:?}");
    assert!(
        !now.iter()
            .any(|r| r.contains(frames / 2) && r.start <= out + 1 && r.stop >= frames - 10),
        "{now:?}"
    );
    // A jump of the playhead after the wrap ends that run: mark in late, wrap, click back to the
    // middle, mark out: the frames between, as when nothing wrapped.
    h.state_mut().queue.push(AppCommand::Undo);
    mark_in_and_wrap(&mut h);
    h.state_mut()
        .queue
        .push(AppCommand::SetPlayhead(f64::from(frames / 2)));
    h.state_mut().queue.push(AppCommand::MarkOut);
    h.run_steps(1);
    let now = ranges(h.state(), running);
    assert!(now.contains(&Range::new(frames / 2, frames - 9)), "{now:?}");
    // Marked again inside what the lane holds: nothing changes, and no undo step is added.
    let steps = h.state().project.history.len();
    for f in [frames / 2 + 2, frames / 2 + 5] {
        h.state_mut()
            .queue
            .push(AppCommand::SetPlayhead(f64::from(f)));
        h.state_mut().queue.push(if f == frames / 2 + 2 {
            AppCommand::MarkIn
        } else {
            AppCommand::MarkOut
        });
        h.run_steps(1);
    }
    assert_eq!(ranges(h.state(), running), now);
    assert_eq!(h.state().project.history.len(), steps);
    assert!(h.state().playback.mark_in.is_none());
    let status = h.state().status.clone().unwrap().1;
    assert!(status.contains("already covers"), "{status}");
}

/// Pausing leaves the playhead on the frame shown, not between two frames.
#[test]
fn pausing_stops_on_a_whole_frame() {
    let mut h = harness();
    h.state_mut().queue.push(AppCommand::TogglePlay);
    h.run_steps(1);
    assert!(h.state().playback.playing);
    let (fps, frames) = (f64::from(h.state().fps()), h.state().frames());
    h.state_mut().playback.advance(3.351, fps, frames);
    assert!(h.state().playback.playhead.fract() > 0.0);
    h.state_mut().queue.push(AppCommand::TogglePlay);
    h.run_steps(1);
    let p = h.state().playback.playhead;
    assert!(!h.state().playback.playing);
    assert_eq!(p, p.floor(), "{p}");
}

/// Undo of an edit on a clip that is not shown shows that clip and says so: an undo never changes
/// a clip out of sight.
#[test]
fn undo_shows_the_clip_it_changes() {
    let mut h = harness();
    let idle = tag_index(h.state(), "Idle");
    drag_lane(&mut h, idle, 100, 109);
    assert_eq!(h.state().current_clip, 0);
    h.state_mut().queue.push(AppCommand::SelectClip(1));
    h.run_steps(2);
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(h.state().current_clip, 0);
    let status = h.state().status.clone().map(|s| s.1).unwrap_or_default();
    assert!(status.contains("on walk_male_01"), "{status}");
    assert!(!ranges(h.state(), idle).contains(&Range::new(100, 110)));
    // Redo, from another clip again, comes back to it too.
    h.state_mut().queue.push(AppCommand::SelectClip(2));
    h.run_steps(2);
    h.state_mut().queue.push(AppCommand::Redo);
    h.run_steps(2);
    assert_eq!(h.state().current_clip, 0);
    assert!(ranges(h.state(), idle).contains(&Range::new(100, 110)));
}

/// A command applied at the end of a frame (a shortcut, a click with the pointer held still) asks
/// for the next frame at once: the screen shows its result without waiting for more input.
#[test]
fn a_frame_that_applies_commands_asks_for_another() {
    let mut h = harness();
    h.run();
    h.step();
    assert!(!h.ctx.has_requested_repaint(), "the app is idle");
    h.state_mut().queue.push(AppCommand::SetPlayhead(10.0));
    h.step();
    assert!(h.ctx.has_requested_repaint());
    assert_eq!(h.state().playback.playhead, 10.0);
}

/// A loop range holds frames of the clip only: one past its end (a match of results older than
/// the clip) is cut at the end, or dropped when nothing of it is left, as is an empty one.
#[test]
fn a_loop_range_past_the_clip_is_cut_to_it() {
    let mut h = harness();
    let frames = h.state().project.doc.clips[0].frames;
    for (asked, kept) in [
        (Range::new(200, frames + 50), Some(Range::new(200, frames))),
        (Range::new(frames + 10, frames + 20), None),
        (Range::new(30, 30), None),
        (Range::new(10, 20), Some(Range::new(10, 20))),
    ] {
        h.state_mut()
            .queue
            .push(AppCommand::SetLoopRange(Some(asked)));
        h.run_steps(2);
        assert_eq!(h.state().playback.loop_range, kept, "{asked:?}");
    }
}
