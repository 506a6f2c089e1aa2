//! Frame-exact editing in the real app (egui_kittest): the inspector, snapping, markers and notes.
#![cfg(feature = "ui")]

use crate::common::{ranges, tag_index};
use egui::{Event, Key, Modifiers, PointerButton, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use taglane::core::tags::{Anchor, Range};
use taglane::ui::TaglaneApp;
use taglane::ui::command::AppCommand;

fn harness() -> Harness<'static, TaglaneApp> {
    // Steps of 1/60 s, so two clicks can make a double-click (egui: within 0.3 s).
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .with_step_dt(1.0 / 60.0)
        .build_ui_state(
            |ui, app: &mut TaglaneApp| app.ui(ui),
            TaglaneApp::demo_for_tests(),
        );
    h.run_steps(3);
    h
}

fn pointer(h: &mut Harness<'static, TaglaneApp>, pos: Pos2, pressed: bool, modifiers: Modifiers) {
    h.event(Event::PointerButton {
        pos,
        button: PointerButton::Primary,
        pressed,
        modifiers,
    });
    h.step();
}

/// Selects everything in a text field and types `text` over it.
fn retype(h: &mut Harness<'static, TaglaneApp>, label: &str, text: &str) {
    h.get_by_label(label).focus();
    h.run_steps(1);
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.get_by_label(label).type_text(text);
    h.run_steps(1);
}

/// Shows the walk-to-run take (clip 3: Walking stops where Running starts); returns the two
/// tags' indices.
fn walk_to_run(h: &mut Harness<'static, TaglaneApp>) -> (usize, usize) {
    h.state_mut().queue.push(AppCommand::SelectClip(3));
    h.run_steps(2);
    (
        tag_index(h.state(), "Walking"),
        tag_index(h.state(), "Running"),
    )
}

fn select_first(h: &mut Harness<'static, TaglaneApp>, tag: usize) -> Range {
    let r = ranges(h.state(), tag)[0];
    h.state_mut().queue.push(AppCommand::Select(vec![(tag, r)]));
    h.run_steps(3);
    r
}

#[test]
fn a_selected_ranges_fields_fit_in_the_inspector_at_1600_by_1000() {
    let mut h = harness();
    let walking = tag_index(h.state(), "Walking");
    select_first(&mut h, walking);
    // The inspector's last line ends above the status bar, clear of the bar's frame (its
    // label sits about 10 points under the bar's top edge): nothing to scroll to. The panel
    // once kept its minimum height, and this line ended 4 points above the bar's label,
    // half hidden.
    let hint = h.get_by_label("Enter applies, Esc restores.").rect();
    let status = h.get_by_label_contains("range(s) selected").rect();
    assert!(
        hint.max.y + 20.0 < status.min.y,
        "the hint ends at y {} under the status bar at {}",
        hint.max.y,
        status.min.y
    );
}

#[test]
fn the_inspector_edits_start_and_stop_by_typing_as_one_undo_step() {
    let mut h = harness();
    h.state_mut().queue.push(AppCommand::SelectClip(3));
    h.run_steps(2);
    let running = tag_index(h.state(), "Running");
    let r = select_first(&mut h, running);
    retype(&mut h, "Start frame", "150");
    retype(&mut h, "Stop frame", "180");
    h.key_press(Key::Enter);
    h.run_steps(3);
    let now = ranges(h.state(), running);
    assert!(now.contains(&Range::new(150, 180)), "{now:?}");
    assert_eq!(
        h.state().selection,
        vec![(running, Range::new(150, 180))],
        "the edited range stays selected"
    );
    // Invalid input is explained inline and changes nothing.
    let before = h.state().project.doc.clone();
    retype(&mut h, "Stop frame", "99999");
    h.key_press(Key::Enter);
    h.run_steps(3);
    let err = h.state().inspector.error.clone().unwrap_or_default();
    assert!(err.contains("past the end of the clip"), "{err}");
    h.get_by_label_contains("past the end of the clip");
    assert_eq!(h.state().project.doc.tags, before.tags);
    // Esc puts the fields back; one undo restores the original range.
    h.get_by_label("Stop frame").focus();
    h.run_steps(1);
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert_eq!(h.state().inspector.stop, "180");
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert_eq!(ranges(h.state(), running)[0], r);
}

/// A field being typed in, then another range dragged on the timeline (a drag takes the
/// keyboard from the field without a click): what was typed applies to the range it was typed
/// for, the drag moves the other, and the editing keys are the timeline's again.
#[test]
fn typing_in_the_inspector_then_dragging_another_range_applies_what_was_typed() {
    let mut h = harness();
    let (walking, running) = walk_to_run(&mut h);
    let walk = select_first(&mut h, walking);
    let run = ranges(h.state(), running)[0];
    // Typed, not applied: no Enter, no click.
    retype(&mut h, "Start frame", &(walk.start + 2).to_string());
    assert!(h.state().inspector.typing);
    let steps = h.state().project.history.len();
    // Running's range (it ends with the clip) dragged 5 frames to the left by its middle (Alt:
    // no snapping).
    let mid = (run.start + run.stop) / 2;
    let (from, to) = {
        let v = &h.state().timeline;
        (
            v.lane_point(running, mid).unwrap(),
            v.lane_point(running, mid - 5).unwrap(),
        )
    };
    crate::common::drag(&mut h, from, to, Modifiers::ALT, |_| {});
    let moved = Range::new(run.start - 5, run.stop - 5);
    assert!(
        ranges(h.state(), walking).contains(&Range::new(walk.start + 2, walk.stop)),
        "what was typed was lost: {:?}",
        ranges(h.state(), walking)
    );
    assert_eq!(
        ranges(h.state(), running)[0],
        moved,
        "{:?} {:?} {}",
        h.state().selection,
        h.state().status,
        h.state().project.history.len() - steps
    );
    assert_eq!(h.state().project.history.len(), steps + 2, "one step each");
    assert_eq!(h.state().selection, vec![(running, moved)]);
    assert_eq!(h.state().inspector.start, moved.start.to_string());
    // The keyboard is the timeline's: Delete deletes the dragged range, not a character.
    assert!(!h.state().inspector.typing);
    h.key_press(Key::Delete);
    h.run_steps(2);
    assert!(!ranges(h.state(), running).contains(&moved));
}

#[test]
fn dragging_an_edge_snaps_to_another_lanes_range_edge_unless_alt_is_held() {
    let mut h = harness();
    let (walking, running) = walk_to_run(&mut h);
    // The walk-to-run take: Walking stops where Running starts.
    let walk = ranges(h.state(), walking)[0];
    let run = ranges(h.state(), running)[0];
    // Move Running's start two frames off the boundary first (without snapping).
    let target = run.start + 3;
    let (from, to) = {
        let v = &h.state().timeline;
        (
            v.lane_boundary_point(running, run.start).unwrap(),
            v.lane_boundary_point(running, target).unwrap(),
        )
    };
    crate::common::drag(&mut h, from, to, Modifiers::ALT, |app| {
        assert_eq!(app.timeline.snap_line, None, "Alt turns snapping off");
    });
    let moved = ranges(h.state(), running)[0];
    assert_eq!(moved.start, target, "{moved:?}");
    // Dragging it back to one frame past Walking's stop snaps onto it, with the snap line (the
    // frame is chosen where no other target is as close).
    let targets = taglane::ui::timeline::model::snap_targets(
        &h.state().project.doc,
        3,
        0,
        &[(running, moved)],
        &[],
    );
    assert!(targets.contains(&walk.stop));
    let near = [walk.stop + 1, walk.stop - 1]
        .into_iter()
        .find(|n| !targets.contains(n))
        .expect("a free frame beside the edge");
    let (from, to) = {
        let v = &h.state().timeline;
        (
            v.lane_boundary_point(running, moved.start).unwrap(),
            v.lane_boundary_point(running, near).unwrap(),
        )
    };
    crate::common::drag(&mut h, from, to, Modifiers::NONE, |app| {
        assert_eq!(app.timeline.snap_line, Some(walk.stop));
    });
    let now = ranges(h.state(), running);
    assert!(now.iter().any(|r| r.start == walk.stop), "{now:?}");
}

#[test]
fn markers_are_created_by_key_and_double_click_moved_by_dragging_and_exported() {
    let mut h = harness();
    let left = tag_index(h.state(), "contact:LeftFootDown");
    h.state_mut()
        .queue
        .push(AppCommand::SetActiveTag(Some(left)));
    h.state_mut().queue.push(AppCommand::SetPlayhead(20.0));
    h.run_steps(2);
    h.key_press(Key::M);
    h.run_steps(2);
    let markers = |h: &Harness<'static, TaglaneApp>| {
        h.state().project.doc.tags[left]
            .markers_on(h.state().current_clip)
            .to_vec()
    };
    assert_eq!(markers(&h), vec![20]);
    // Double-click on frame 60 of the lane (after a pause: egui counts clicks from time 0, and
    // the harness starts at 0).
    h.run_steps(30);
    let p = h.state().timeline.lane_point(left, 60).unwrap();
    h.event(Event::PointerMoved(p));
    h.step();
    for _ in 0..2 {
        pointer(&mut h, p, true, Modifiers::NONE);
        pointer(&mut h, p, false, Modifiers::NONE);
    }
    h.run_steps(2);
    assert_eq!(markers(&h), vec![20, 60]);
    // The playhead is on the marker's frame (the first click put it on a frame boundary).
    assert_eq!(h.state().playback.playhead, 60.0);
    // Drag the marker at 60 to 75; it snaps to nothing there (Alt off is fine: no target near).
    let (from, to) = {
        let v = &h.state().timeline;
        (
            v.lane_point(left, 60).unwrap(),
            v.lane_point(left, 75).unwrap(),
        )
    };
    crate::common::drag(&mut h, from, to, Modifiers::ALT, |_| {});
    assert_eq!(markers(&h), vec![20, 75]);
    assert_eq!(h.state().marker_selection, vec![(left, 75)]);
    // Queries see a marker as a one-frame range.
    let doc = &h.state().project.doc;
    let q = doc.parse_query("contact:LeftFootDown").unwrap();
    let idx = taglane::core::tags::TagIndex::build(doc);
    let mut out = taglane::core::tags::RangeSet::new();
    taglane::core::tags::Evaluator::new()
        .eval(&q, &idx, taglane::core::tags::Engine::Ranges, &mut out)
        .unwrap();
    assert!(out.clip_ranges(0).iter().any(|r| r.contains(75)));
    // Exported in CSV.
    let dir = std::env::temp_dir().join(format!("taglane-markers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("tags.csv");
    h.state_mut().queue.push(AppCommand::Export(
        taglane::ui::command::ExportKind::Csv,
        Some(csv.clone()),
    ));
    h.run_steps(2);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.contains("contact:LeftFootDown,walk_male_01,75,76,2.500000,2.533333,marker,,"),
        "{text}"
    );
    // Undo twice: the move, then the double-click marker.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert_eq!(markers(&h), vec![20]);
    std::fs::remove_dir_all(&dir).ok();
}

/// An import that lands while a note is being typed adds its clips without showing the first of
/// them: showing it took the selection, and the typed note with it.
#[test]
fn an_import_landing_while_typing_keeps_the_clip_and_the_text() {
    let dir = crate::common::Scratch::new("import-typing");
    let take = dir.join("take.bvh");
    std::fs::write(&take, taglane::ui::project::DEMO_CLIP_FILES[1].1).unwrap();
    let mut h = harness();
    let walking = tag_index(h.state(), "Walking");
    let r = select_first(&mut h, walking);
    let clip = h.state().current_clip;
    let clips = h.state().project.doc.clips.len();
    retype(&mut h, "Note", "heel strike");
    assert!(h.state().inspector.typing);
    h.state_mut()
        .queue
        .push(AppCommand::ImportAnimation(Some(vec![take])));
    crate::common::wait_import(&mut h);
    assert_eq!(h.state().project.doc.clips.len(), clips + 1);
    assert_eq!(h.state().current_clip, clip);
    h.key_press(Key::Enter);
    h.run_steps(3);
    let tag = &h.state().project.doc.tags[walking];
    let n = tag.note(clip, Anchor::Range(r)).cloned().expect("the note");
    assert_eq!(n.text, "heel strike");
}

#[test]
fn a_note_survives_a_split_and_undo() {
    let mut h = harness();
    let walking = tag_index(h.state(), "Walking");
    let r = select_first(&mut h, walking);
    retype(&mut h, "Note", "tired at the end");
    retype(&mut h, "Data", "surface=gravel; speed=slow");
    h.key_press(Key::Enter);
    h.run_steps(3);
    let tag = |h: &Harness<'static, TaglaneApp>| h.state().project.doc.tags[walking].clone();
    let n = tag(&h).note(0, Anchor::Range(r)).cloned().expect("a note");
    assert_eq!(n.text, "tired at the end");
    assert_eq!(n.data["surface"], "gravel");
    // Split in the middle: both halves keep the note.
    let mid = (r.start + r.stop) / 2;
    h.state_mut()
        .queue
        .push(AppCommand::SetPlayhead(f64::from(mid)));
    h.run_steps(1);
    h.key_press(Key::S);
    h.run_steps(2);
    let t = tag(&h);
    let halves = [Range::new(r.start, mid), Range::new(mid + 1, r.stop)];
    for half in halves {
        assert_eq!(t.note(0, Anchor::Range(half)), Some(&n), "{:?}", t.notes);
    }
    // Undo the split: one range with its note; undo the note: none.
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert_eq!(tag(&h).note(0, Anchor::Range(r)), Some(&n));
    h.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert!(tag(&h).notes.is_empty());
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn the_camera_follows_hips_on_a_bandai_take_not_its_standing_root() {
    use taglane::core::tags::{ClipInfo, TagDocument};
    use taglane::ui::project::Project;
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/mocap/bandai_dataset-1_walk_normal_001.bvh")
        .canonicalize()
        .expect("the Bandai walk take");
    let mut doc = TagDocument::default();
    doc.add_clip(ClipInfo {
        name: "walk".into(),
        frames: 195,
        fps: 30.0,
        source: Some(file.display().to_string()),
        unit_cm: Some(1.0),
    })
    .unwrap();
    let project = Project {
        doc,
        ..Project::default()
    };
    let app = TaglaneApp::new(
        project,
        taglane::ui::app::Prefs::default(),
        taglane::ui::recovery::Recovery::disabled(),
    );
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), app);
    crate::common::wait_anim(&mut h);
    let hips = {
        let pose = &h.state().side.pose;
        assert_eq!(pose.load_error, None);
        assert_eq!(pose.static_root, Some(0), "joint_Root stands still");
        pose.follow_joint
    };
    let mut last_x = None;
    for frame in [0.0, 60.0, 120.0, 190.0] {
        h.state_mut().queue.push(AppCommand::SetPlayhead(frame));
        h.run_steps(2);
        let pose = &h.state().side.pose;
        let at = pose.base_positions[hips];
        let target = pose.camera.target;
        assert!(
            (target.x - at.x).abs() < 1e-3 && (target.z - at.z).abs() < 1e-3,
            "frame {frame}: camera at {target:?}, Hips at {at:?}"
        );
        // The character walks: the target moves with it.
        if let Some(x) = last_x {
            assert_ne!(x, (target.x, target.z));
        }
        last_x = Some((target.x, target.z));
        // Framed on the body (about 1.7 m), not on the path from the origin.
        assert!(
            pose.camera.distance < 500.0,
            "distance {}",
            pose.camera.distance
        );
    }
}

/// A field left without Enter (the focus moved out of the inspector) is applied, as Blender and
/// Unreal apply a field on leaving it: the inspector never shows a value the range does not have,
/// to be applied later by an Enter in another field.
#[test]
fn leaving_the_inspector_applies_what_was_typed() {
    let mut h = harness();
    h.state_mut().queue.push(AppCommand::SelectClip(3));
    h.run_steps(2);
    let running = tag_index(h.state(), "Running");
    let r = select_first(&mut h, running);
    let start = r.start + 5;
    retype(&mut h, "Start frame", &start.to_string());
    // Focus elsewhere (the transport's Go to field).
    h.get_by_label("Go to").focus();
    h.run_steps(3);
    let now = ranges(h.state(), running);
    assert!(now.contains(&Range::new(start, r.stop)), "{now:?}");
    assert_eq!(h.state().inspector.start, start.to_string());
    // One undo step.
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(ranges(h.state(), running)[0], r);
}

/// Go to (Ctrl+G) with a frame outside the clip, or text that is no frame, says why.
#[test]
fn go_to_explains_input_it_cannot_take() {
    let mut h = harness();
    for (typed, says) in [("9999", "outside the clip"), ("abc", "not a frame number")] {
        h.key_press_modifiers(Modifiers::COMMAND, Key::G);
        h.run_steps(2);
        h.key_press_modifiers(Modifiers::COMMAND, Key::A);
        h.get_by_label("Go to").type_text(typed);
        h.run_steps(1);
        h.key_press(Key::Enter);
        h.run_steps(2);
        assert!(
            h.query_by_label_contains(says).is_some(),
            "{typed}: no `{says}`"
        );
    }
}

/// A range and a marker selected together move together when the range is dragged, and stay
/// selected.
#[test]
fn a_range_and_a_marker_selected_together_move_together() {
    let mut h = harness();
    let (left, idle) = (
        tag_index(h.state(), "contact:LeftFootDown"),
        tag_index(h.state(), "Idle"),
    );
    h.state_mut()
        .queue
        .push(AppCommand::AddMarker(Some((left, 150))));
    h.run_steps(2);
    let r = ranges(h.state(), idle)[0];
    h.state_mut().queue.push(AppCommand::SelectItems {
        ranges: vec![(idle, r)],
        markers: vec![(left, 150)],
    });
    h.run_steps(2);
    let (from, to) = {
        let v = &h.state().timeline;
        let mid = (r.start + r.stop) / 2;
        (
            v.lane_point(idle, mid).unwrap(),
            v.lane_point(idle, mid + 10).unwrap(),
        )
    };
    crate::common::drag(&mut h, from, to, Modifiers::ALT, |_| {});
    let moved = Range::new(r.start + 10, r.stop + 10);
    assert!(
        ranges(h.state(), idle).contains(&moved),
        "{:?}",
        ranges(h.state(), idle)
    );
    let markers = h.state().project.doc.tags[left]
        .markers_on(h.state().current_clip)
        .to_vec();
    assert!(
        markers.contains(&160) && !markers.contains(&150),
        "{markers:?}"
    );
    assert_eq!(h.state().selection, vec![(idle, moved)]);
    assert_eq!(h.state().marker_selection, vec![(left, 160)]);
}

/// The lane headers widen for a long tag name (the lanes start further right), and the wheel over
/// the names scrolls the lanes as it does over the lanes.
#[test]
fn lane_headers_fit_long_names_and_scroll_with_the_wheel() {
    use taglane::core::doc::Edit;
    use taglane::core::tags::Tag;
    let mut h = harness();
    let male = tag_index(h.state(), "Male");
    let before = h.state().timeline.lane_point(male, 0).unwrap();
    // Thirty more tags, the last with a long name: more lanes than the timeline shows.
    let count = h.state().project.doc.tags.len();
    for k in 0..30 {
        let name = if k == 29 {
            "a_long_tag_name_that_no_header_of_200_points_holds".to_owned()
        } else {
            format!("Extra{k}")
        };
        h.state_mut().queue.push(AppCommand::Edit {
            edit: Edit::InsertTag {
                index: count + k,
                tag: Tag::new(name),
            },
            label: "add tag".into(),
            select: None,
        });
    }
    h.run_steps(3);
    let after = h.state().timeline.lane_point(male, 0).unwrap();
    assert!(
        after.x > before.x + 30.0,
        "the lanes start at {} (before: {})",
        after.x,
        before.x
    );
    // The wheel over Male's name: the lanes scroll.
    assert_eq!(h.state().timeline.scroll_y, 0.0);
    let over_name = Pos2::new(after.x - 60.0, after.y);
    h.event(Event::PointerMoved(over_name));
    h.step();
    h.event(Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, -120.0),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Wheel,
        modifiers: Modifiers::NONE,
    });
    h.run_steps(20);
    assert!(
        h.state().timeline.scroll_y > 0.0,
        "scroll_y {}",
        h.state().timeline.scroll_y
    );
}

/// In a 1024 x 768 window the inspector's seconds stay inside the left panel: a long clip name is
/// cut (whole in its tooltip) instead of widening the fields' column.
#[test]
fn narrow_inspector_keeps_the_seconds_in_view() {
    let mut h = Harness::builder()
        .with_size([1024.0, 768.0])
        .build_ui_state(
            |ui, app: &mut TaglaneApp| app.ui(ui),
            TaglaneApp::demo_for_tests(),
        );
    h.state_mut().queue.push(AppCommand::SelectClip(3));
    h.run_steps(3);
    assert_eq!(h.state().project.doc.clips[3].name, "walk_to_run_female_01");
    let running = crate::common::tag_index(h.state(), "Running");
    let range = *h.state().project.doc.tags[running]
        .ranges
        .get(&3)
        .unwrap()
        .first()
        .unwrap();
    h.state_mut().selection = vec![(running, range)];
    h.run_steps(3);
    let panel_right = h.get_by_label("Start").rect().min.x;
    let start_s = format!("{:.2} s", f64::from(range.start) / 30.0);
    let seconds = h.get_by_label(&start_s).rect();
    assert!(
        seconds.max.x <= panel_right,
        "{start_s} ends at {} past the panel's {panel_right}",
        seconds.max.x
    );
    // The clip's name in the inspector (the row above the start frame's), cut before the seconds.
    let name = h
        .get_all_by_label_contains("walk_to_run")
        .map(|n| n.rect())
        .find(|r| r.min.y < seconds.min.y && r.min.y > seconds.min.y - 40.0)
        .expect("the inspector's clip name");
    assert!(name.max.x < seconds.min.x, "{name:?} {seconds:?}");
}

/// The Edit menu's Copy and Delete take a selection of markers alone, as their keys do (they
/// were greyed out unless a range was selected).
#[test]
fn the_edit_menu_copies_and_deletes_markers_alone() {
    let mut h = harness();
    let walking = tag_index(h.state(), "Walking");
    h.state_mut()
        .queue
        .push(AppCommand::AddMarker(Some((walking, 5))));
    h.run_steps(2);
    h.state_mut().queue.push(AppCommand::SelectItems {
        ranges: Vec::new(),
        markers: vec![(walking, 5)],
    });
    h.run_steps(2);
    let markers = |h: &Harness<'static, TaglaneApp>| {
        h.state().project.doc.tags[walking].markers_on(0).to_vec()
    };
    assert_eq!(markers(&h), [5]);
    h.get_by_label("Edit").click();
    h.run_steps(2);
    h.get_by_label_contains("Copy selection").click();
    h.run_steps(2);
    assert!(!h.state().clipboard.items.is_empty(), "copied");
    h.get_by_label("Edit").click();
    h.run_steps(2);
    h.get_by_label_contains("Delete selection").click();
    h.run_steps(2);
    assert!(markers(&h).is_empty(), "deleted");
}

/// The colour picker: each opening is one undo step however many changes it makes, and two
/// openings are two steps (the second undo gives back the first colour, not the original).
/// Opens the colour picker of the swatch labelled `swatch`, sets its red channel (a drag value
/// "R ...") to each of `reds` in turn, and closes it.
fn recolour(h: &mut Harness<'static, TaglaneApp>, swatch: &str, reds: &[f64]) {
    use egui_kittest::kittest::NodeT;
    h.get_by_label(swatch).click();
    h.run_steps(3);
    for &r in reds {
        let red = h
            .root()
            .children_recursive()
            .find(|n| {
                n.accesskit_node().role() == egui::accesskit::Role::SpinButton
                    && n.accesskit_node()
                        .value()
                        .is_some_and(|v| v.starts_with("R "))
            })
            .expect("the picker's red channel");
        red.set_value_accesskit(r);
        h.run_steps(2);
    }
    // Closed by a click elsewhere (the timeline's empty ruler area would move the playhead:
    // Escape closes popups).
    h.key_press(egui::Key::Escape);
    h.run_steps(3);
}

#[test]
fn each_opening_of_the_colour_picker_is_one_undo_step() {
    let mut h = crate::common::demo_harness([1400.0, 860.0]);
    let name = h.state().project.doc.tags[0].name.clone();
    let color = |h: &Harness<'static, TaglaneApp>| h.state().project.doc.tags[0].color;
    let original = color(&h);
    let swatch = format!("Colour of {name}");
    // The picker's red channel (a drag value "R ..."), set to each of `reds` in one opening.
    let recolour = |h: &mut Harness<'static, TaglaneApp>, reds: &[f64]| recolour(h, &swatch, reds);
    recolour(&mut h, &[200.0, 210.0]);
    let first = color(&h);
    assert_eq!(first.map(|c| c[0]), Some(210), "{original:?}");
    assert_eq!(h.state().project.history.len(), 1);
    recolour(&mut h, &[100.0, 90.0, 80.0]);
    assert_eq!(color(&h).map(|c| c[0]), Some(80));
    assert_eq!(h.state().project.history.len(), 2);
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(color(&h), first);
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(color(&h), original);
}

/// Two openings of a tag's colour picker stay two undo steps when the tag's row moved on screen
/// in between (a group above it collapsed): the count of openings followed the row, started again
/// for the new row, and the second recolouring joined the first.
#[test]
fn colour_picker_openings_stay_apart_when_the_row_moves() {
    let mut h = crate::common::demo_harness([1400.0, 860.0]);
    let name = "contact:LeftFootDown";
    let tag = tag_index(h.state(), name);
    let color = |h: &Harness<'static, TaglaneApp>| h.state().project.doc.tags[tag].color;
    let original = color(&h);
    let swatch = format!("Colour of {name}");
    let recolour = |h: &mut Harness<'static, TaglaneApp>, red: f64| recolour(h, &swatch, &[red]);
    recolour(&mut h, 200.0);
    let first = color(&h);
    h.state_mut()
        .queue
        .push(AppCommand::ToggleGroup("locomotion".into()));
    h.run_steps(2);
    recolour(&mut h, 90.0);
    assert_eq!(color(&h).map(|c| c[0]), Some(90));
    assert_eq!(h.state().project.history.len(), 2);
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(color(&h), first);
    assert_ne!(first, original);
}

/// The selection follows its tag, not its lane's place: a marker selected on one tag, the tag
/// below moved up over it (both with a marker at that frame, as sync markers are), then Delete:
/// the selected tag's marker goes, the other's stays; the same after an undo of the move.
#[test]
fn the_selection_follows_its_tag_when_tags_are_reordered() {
    use taglane::core::doc::Edit;
    let mut h = harness();
    let clip = h.state().current_clip;
    let (a, b) = (0usize, 1usize);
    let (name_a, name_b) = {
        let tags = &h.state().project.doc.tags;
        (tags[a].name.clone(), tags[b].name.clone())
    };
    for t in [a, b] {
        h.state_mut().queue.push(AppCommand::Edit {
            edit: Edit::SetMarkers {
                tag: t,
                clip,
                frames: vec![7],
            },
            label: "marker".into(),
            select: None,
        });
    }
    let r = ranges(h.state(), a)[0];
    h.state_mut().queue.push(AppCommand::SelectItems {
        ranges: vec![(a, r)],
        markers: vec![(a, 7)],
    });
    h.run_steps(2);
    // B moved above A: A is now second.
    h.state_mut()
        .queue
        .push(AppCommand::MoveTag { index: b, up: true });
    h.run_steps(2);
    let idx = |h: &Harness<'static, TaglaneApp>, n: &str| tag_index(h.state(), n);
    assert_eq!((idx(&h, &name_a), idx(&h, &name_b)), (b, a));
    assert_eq!(h.state().marker_selection, vec![(b, 7)]);
    assert_eq!(h.state().selection, vec![(b, r)]);
    // Undone: back in place, and so is the selection.
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(h.state().marker_selection, vec![(a, 7)]);
    h.state_mut().queue.push(AppCommand::DeleteSelection);
    h.run_steps(2);
    let doc = &h.state().project.doc;
    assert!(doc.tags[a].markers_on(clip).is_empty(), "A's marker went");
    assert!(!doc.tags[a].ranges_on(clip).contains(&r));
    assert_eq!(doc.tags[b].markers_on(clip), [7], "B's marker stays");
}

/// A range dragged against the timeline's right edge moves on while the view scrolls, instead of
/// stopping where the pointer is on the screen.
#[test]
fn a_moved_range_follows_the_pointer_while_the_view_scrolls() {
    let mut h = harness();
    h.state_mut().queue.push(AppCommand::SelectClip(3));
    h.run_steps(3);
    let walking = tag_index(h.state(), "Walking");
    let walk = select_first(&mut h, walking);
    {
        let v = &mut h.state_mut().timeline;
        v.px_per_frame = 20.0;
        v.first_frame = 0.0;
        v.fit_pending = false;
    }
    h.run_steps(2);
    let from = h.state().timeline.lane_point(walking, 10).unwrap();
    let right = h.state().timeline.last_axis.unwrap();
    let edge = egui::pos2(right.left + right.width - 3.0, from.y);
    let on_screen = (right.frame_at(edge.x) - right.frame_at(from.x)).round() as i64;
    crate::common::press(&mut h, from, Modifiers::ALT);
    crate::common::drag_steps(&mut h, from, edge, 1..=4);
    // Held at the edge: the view scrolls.
    let first = h.state().timeline.first_frame;
    for _ in 0..40 {
        h.event(Event::PointerMoved(edge));
        h.step();
    }
    let scrolled = h.state().timeline.first_frame - first;
    assert!(scrolled >= 5.0, "the view did not scroll: {scrolled}");
    let expected = (h.state().timeline.last_axis.unwrap().frame_at(edge.x) - right.frame_at(from.x))
        .round() as i64;
    crate::common::release(&mut h, edge, Modifiers::ALT);
    h.run_steps(2);
    let moved = ranges(h.state(), walking)[0];
    let delta = i64::from(moved.start) - i64::from(walk.start);
    assert!(delta > on_screen + 4, "{delta} vs {on_screen} on screen");
    assert!((delta - expected).abs() <= 1, "{delta} vs {expected}");
}
