//! The auto-tag panel in the real app (egui_kittest): ghost lanes that follow a dragged threshold
//! line and a typed parameter, rule errors with their JSON path, applying to every clip in the
//! background and undoing it in one step, the confirmation before hand-made frames are replaced,
//! planted feet in the pose viewport, and a screenshot.
#![cfg(feature = "ui")]

use std::time::{Duration, Instant};

use egui::{Key, Modifiers};
use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::{Harness, SnapshotOptions};
use taglane::core::autotag::{AutotagSettings, CONTACT_LEFT, ThresholdKey};
use taglane::core::doc::Edit;
use taglane::core::tags::{Range, TagDocument};
use taglane::ui::TaglaneApp;
use taglane::ui::autotag::model::Grab;
use taglane::ui::bottom_panel::BottomTab;
use taglane::ui::command::AppCommand;
use taglane::ui::timeline::model::Row;

fn harness() -> Harness<'static, TaglaneApp> {
    crate::common::demo_harness([1600.0, 1000.0])
}

/// Opens the Auto-tag tab by its button.
fn open_panel(h: &mut Harness<'static, TaglaneApp>) {
    h.get_by_label("Auto-tag").click();
    h.run_steps(3);
    assert_eq!(h.state().bottom_tab, BottomTab::Autotag);
}

/// The ghost lane of `tag` on the current clip.
fn ghost(app: &TaglaneApp, tag: &str) -> Vec<Range> {
    app.autotag
        .extra_lanes(&app.project.doc, app.current_clip)
        .into_iter()
        .find(|l| l.label == format!("auto: {tag}"))
        .map(|l| l.ranges)
        .unwrap_or_else(|| panic!("no ghost lane for {tag}"))
}

fn frames(ranges: &[Range]) -> u32 {
    ranges.iter().map(Range::len).sum()
}

/// Names and ranges of every tag (per clip), and the autotag settings: what an undo restores.
type DocState = (
    Vec<(String, Vec<(u32, Vec<Range>)>)>,
    Option<AutotagSettings>,
);

fn tags_of(doc: &TagDocument) -> DocState {
    (
        doc.tags
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    t.ranges.iter().map(|(c, l)| (*c, l.to_vec())).collect(),
                )
            })
            .collect(),
        doc.autotag.clone(),
    )
}

/// Types `text` into the number field labelled `label` and presses Enter.
fn type_value(h: &mut Harness<'static, TaglaneApp>, label: &str, text: &str) {
    h.get_by_label(label).click();
    h.run_steps(2);
    h.key_press_modifiers(Modifiers::COMMAND, Key::A);
    h.get_by_label(label).type_text(text);
    h.key_press(Key::Enter);
    h.run_steps(3);
}

/// Steps until the background apply has ended (it runs on its own thread).
fn wait_for_job(h: &mut Harness<'static, TaglaneApp>) {
    let start = Instant::now();
    while h.state().autotag.is_busy() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the apply never ended"
        );
        std::thread::sleep(Duration::from_millis(5));
        h.step();
    }
    h.run_steps(3);
}

#[test]
fn ghost_lanes_follow_a_dragged_threshold_line_and_a_typed_parameter() {
    let mut h = harness();
    // Closed: no proposal lanes.
    assert!(
        !h.state()
            .timeline
            .last_rows
            .iter()
            .any(|r| matches!(r, Row::Extra(_)))
    );
    open_panel(&mut h);
    let app = h.state();
    let tags = app.autotag.enabled_tags();
    let out = app
        .autotag
        .output_for(0)
        .expect("proposals for the demo clip");
    assert_eq!(out.proposals.len(), tags.len());
    // One ghost lane per proposed tag, drawn by the timeline under the tag lanes.
    let extra = app
        .timeline
        .last_rows
        .iter()
        .filter(|r| matches!(r, Row::Extra(_)))
        .count();
    assert_eq!(extra, tags.len(), "{:?}", app.timeline.last_rows);
    h.get_by_label("auto: contact:LeftFoot");
    let before = ghost(h.state(), CONTACT_LEFT);
    assert!(!before.is_empty());

    // Drag the contact speed threshold (planted below 20 cm/s) up: longer contacts.
    h.state_mut().autotag.signal = Some("left foot speed".to_owned());
    h.run_steps(3);
    let from = h
        .state()
        .autotag
        .threshold_pos(ThresholdKey::ContactSpeed, Grab::Enter)
        .expect("the threshold line is drawn");
    let to = from - egui::vec2(0.0, 40.0);
    crate::common::drag(&mut h, from, to, Modifiers::NONE, |app| {
        assert!(
            app.autotag.drag.is_some(),
            "the line is held during the drag"
        );
    });
    let app = h.state();
    let c = &app.autotag.valid.params.contacts;
    assert!(
        c.enter_speed_cm_s > 25.0,
        "enter speed {}",
        c.enter_speed_cm_s
    );
    assert!(c.leave_speed_cm_s >= c.enter_speed_cm_s);
    let after = ghost(app, CONTACT_LEFT);
    assert!(
        frames(&after) > frames(&before),
        "{} -> {} frames",
        frames(&before),
        frames(&after)
    );
    // The plot and the lanes show the same proposal as the core with those settings.
    let clip = app.project.load_clip(0).unwrap();
    let only = app.autotag.enabled_tags();
    let want = taglane::core::autotag::autotag(&clip, &app.autotag.valid, Some(&only)).unwrap();
    assert_eq!(want.ranges(CONTACT_LEFT).unwrap(), after.as_slice());
    // Nothing is saved in the project until an apply (or Save).
    assert!(app.project.doc.autotag.is_none());
    assert!(app.project.history.undo_label().is_none());

    // Typed parameters: the enter height far above any foot; leave height (7) is then below it,
    // which is refused with the parameter's path while the proposals keep the last valid settings.
    let dragged = frames(&after);
    type_value(&mut h, "enter height", "50");
    let app = h.state();
    assert_eq!(app.autotag.settings.params.contacts.enter_height_cm, 50.0);
    let e = app.autotag.error.as_ref().expect("leave below enter");
    assert_eq!(e.path, "params.contacts.leave_height_cm");
    assert_eq!(app.autotag.valid.params.contacts.enter_height_cm, 4.0);
    assert_eq!(frames(&ghost(app, CONTACT_LEFT)), dragged);
    // The reason, under the refused field.
    h.get_by_label("expected a height in cm >= `enter_height_cm` (50), found 7");
    type_value(&mut h, "leave height", "60");
    let app = h.state();
    assert!(app.autotag.error.is_none(), "{:?}", app.autotag.error);
    assert_eq!(app.autotag.valid.params.contacts.enter_height_cm, 50.0);
    assert!(frames(&ghost(app, CONTACT_LEFT)) > dragged);
}

#[test]
fn rule_errors_name_their_json_path_and_good_rules_propose_lanes() {
    // Tall enough that the rule's lane, under the demo's tags and eight proposals, is on screen.
    let mut h = crate::common::demo_harness([1600.0, 1200.0]);
    open_panel(&mut h);
    h.get_by_label("Rules (JSON)").click();
    h.run_steps(2);
    h.get_by_label("Insert example").click();
    h.run_steps(3);
    let app = h.state();
    assert_eq!(app.autotag.valid.rules.len(), 1);
    assert!(
        app.autotag
            .enabled_tags()
            .contains(&"pose:HandsUp".to_owned())
    );
    h.get_by_label("auto: pose:HandsUp");
    // A leave on the wrong side of its threshold: the JSON path, shown under the editor.
    let bad = h
        .state()
        .autotag
        .rules_text
        .replacen("\"leave\": 0.0", "\"leave\": 9.0", 1);
    h.state_mut().autotag.rules_text = bad;
    h.state_mut().autotag.apply_rules_text();
    h.run_steps(2);
    h.get_by_label_contains("rules[0].when[0].leave: expected a number <=");
    // The rules in use stay the last ones that read; Apply and Save wait for the text to read
    // (they applied the old rules), and the edit counts as unsaved work (it was dropped
    // unasked on quit).
    assert_eq!(h.state().autotag.valid.rules.len(), 1);
    // (The rules that read saved first: what is unsaved is the text alone.)
    let edit = h.state().autotag.save_settings_edit();
    h.state_mut().queue.push(AppCommand::Edit {
        edit,
        label: "auto-tag settings".into(),
        select: None,
    });
    h.run_steps(3);
    assert!(h.get_by_label("Apply").accesskit_node().is_disabled());
    assert!(h.get_by_label("Save").accesskit_node().is_disabled());
    h.get_by_label("settings changed");
    let app = h.state();
    assert!(app.autotag.settings_unsaved(&app.project.doc));

    // A whole settings file pasted in (as `taglane autotag --rules` reads): its parameters are
    // refused here, then taken into the fields by a button.
    h.state_mut().autotag.rules_text = r#"{"version": 1,
        "params": {"contacts": {"enter_speed_cm_s": 26, "leave_speed_cm_s": 41}},
        "rules": [{"tag": "pose:Crouch",
                   "when": [{"signal": "height", "joint": "Hips", "below": 60, "leave": 70}]}]}"#
        .to_owned();
    h.state_mut().autotag.apply_rules_text();
    h.run_steps(2);
    h.get_by_label_contains("params: generator parameters are set in the panel's fields");
    h.get_by_label("Take parameters").click();
    h.run_steps(3);
    let app = h.state();
    assert!(
        app.autotag.rules_error.is_none(),
        "{:?}",
        app.autotag.rules_error
    );
    assert_eq!(app.autotag.valid.params.contacts.enter_speed_cm_s, 26.0);
    assert_eq!(app.autotag.valid.rules.len(), 1);
    assert_eq!(app.autotag.valid.rules[0].tag, "pose:Crouch");
    assert!(!app.autotag.rules_text.contains("params"));
    h.get_by_label("auto: pose:Crouch");
}

#[test]
fn applying_to_every_clip_runs_in_the_background_and_undoes_in_one_step() {
    let mut h = harness();
    open_panel(&mut h);
    let before = tags_of(&h.state().project.doc);
    h.get_by_label("All clips (10)").click();
    h.run_steps(1);
    h.get_by_label("Apply").click();
    h.run_steps(1);
    wait_for_job(&mut h);
    let app = h.state();
    let doc = &app.project.doc;
    assert_eq!(app.project.history.undo_label(), Some("auto-tag 10 clips"));
    assert_eq!(
        doc.autotag.as_ref(),
        Some(&app.autotag.valid),
        "settings saved"
    );
    // Every proposed tag with frames exists; one that got none on any clip (the demo has no
    // right turn) is not created, and the status says so. The contacts are on every clip (the
    // demo walks and runs).
    let status = app.autotag.status.clone().unwrap_or_default();
    for tag in app.autotag.enabled_tags() {
        match doc.tag_index(&tag) {
            Some(t) => assert!(!doc.tags[t].ranges.is_empty(), "{tag} created empty"),
            None => assert!(
                status.contains("not created") && status.contains(&tag),
                "{tag}: {status}"
            ),
        }
    }
    let left = &doc.tags[doc.tag_index(CONTACT_LEFT).unwrap()];
    assert_eq!(left.ranges.len(), 10);
    // The current clip got exactly its live proposal (the tag is new: nothing to merge with).
    assert_eq!(
        &left.ranges[&0],
        app.autotag
            .output_for(0)
            .unwrap()
            .ranges(CONTACT_LEFT)
            .unwrap()
    );
    assert!(
        app.autotag
            .status
            .as_ref()
            .unwrap()
            .contains("10 clip(s) tagged")
    );
    // One undo restores every tag and the settings.
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(tags_of(&h.state().project.doc), before);
    assert!(!h.state().project.history.is_dirty());
}

#[test]
fn replace_asks_before_removing_hand_made_frames() {
    let mut h = harness();
    // A hand-made contact:LeftFoot over the whole first clip.
    let doc = &h.state().project.doc;
    let frames0 = doc.clips[0].frames;
    let mut tag = taglane::core::tags::Tag::new(CONTACT_LEFT.to_owned());
    tag.ranges.insert(0, vec![Range::new(0, frames0)]);
    let index = doc.tags.len();
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::InsertTag { index, tag },
        label: "hand-made".into(),
        select: None,
    });
    h.run_steps(2);
    open_panel(&mut h);
    h.get_by_label("Apply options").click();
    h.run_steps(2);
    // Merge (the default) never asks and never removes.
    h.get_by_label("Apply").click();
    h.run_steps(3);
    assert!(h.state().autotag.pending.is_none());
    let doc = &h.state().project.doc;
    assert_eq!(doc.tags[index].ranges[&0], [Range::new(0, frames0)]);
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);

    // Replace: the dialog lists what would go; Esc cancels.
    h.state_mut().autotag.modes.insert(
        CONTACT_LEFT.to_owned(),
        taglane::core::autotag::ApplyMode::Replace,
    );
    h.run_steps(1);
    let before = tags_of(&h.state().project.doc);
    h.get_by_label("Apply").click();
    h.run_steps(3);
    let pending = h.state().autotag.pending.clone().expect("asks first");
    assert_eq!(pending.report.replaced.len(), 1);
    assert_eq!(pending.report.replaced[0].tag, CONTACT_LEFT);
    h.get_by_label("Replace existing ranges?");
    h.get_by_label_contains("contact:LeftFoot on 'walk_male_01': ");
    h.key_press(Key::Escape);
    h.run_steps(3);
    assert!(h.state().autotag.pending.is_none());
    assert_eq!(tags_of(&h.state().project.doc), before, "nothing changed");

    // Again; Enter confirms: the hand-made range becomes the proposal, in one undo step.
    h.get_by_label("Apply").click();
    h.run_steps(3);
    assert!(h.state().autotag.pending.is_some());
    h.key_press(Key::Enter);
    h.run_steps(3);
    let app = h.state();
    assert!(app.autotag.pending.is_none());
    let proposal = app
        .autotag
        .output_for(0)
        .unwrap()
        .ranges(CONTACT_LEFT)
        .unwrap();
    assert_eq!(&app.project.doc.tags[index].ranges[&0], proposal);
    assert_eq!(
        app.project.history.undo_label(),
        Some("auto-tag walk_male_01")
    );
    h.state_mut().queue.push(AppCommand::Undo);
    h.run_steps(2);
    assert_eq!(tags_of(&h.state().project.doc), before);

    // "Merge instead" keeps them.
    h.get_by_label("Apply").click();
    h.run_steps(3);
    h.get_by_label("Merge instead").click();
    h.run_steps(3);
    let app = h.state();
    assert!(app.autotag.pending.is_none());
    assert_eq!(
        app.project.doc.tags[index].ranges[&0],
        [Range::new(0, frames0)]
    );
    assert_eq!(
        app.autotag
            .modes
            .get(CONTACT_LEFT)
            .copied()
            .unwrap_or_default(),
        taglane::core::autotag::ApplyMode::Merge
    );
}

#[test]
fn the_viewport_marks_planted_feet() {
    let mut h = harness();
    // walk_male_01: the demo's hand-made contact:LeftFootDown covers [54, 70), RightFootDown
    // [39, 55) and [69, 85).
    let doc = &h.state().project.doc;
    let left = &doc.tags[doc.tag_index("contact:LeftFootDown").unwrap()].ranges[&0];
    assert!(left.iter().any(|r| r.contains(60)), "{left:?}");
    h.state_mut().queue.push(AppCommand::SetPlayhead(60.0));
    h.run_steps(3);
    h.get_by_label("Pose viewport, planted: LeftFoot, LeftToeBase");
    h.state_mut().queue.push(AppCommand::SetPlayhead(75.0));
    h.run_steps(3);
    h.get_by_label("Pose viewport, planted: RightFoot, RightToeBase");

    // With the panel open, the proposals decide: the start of a proposed left contact.
    open_panel(&mut h);
    let out = h.state().autotag.output_for(0).unwrap();
    let left = out.ranges(CONTACT_LEFT).unwrap().to_vec();
    let right = out.ranges("contact:RightFoot").unwrap().to_vec();
    let f = (0..h.state().frames())
        .find(|&f| left.iter().any(|r| r.contains(f)) && !right.iter().any(|r| r.contains(f)))
        .expect("a frame with only the left foot planted");
    h.state_mut()
        .queue
        .push(AppCommand::SetPlayhead(f64::from(f)));
    h.run_steps(3);
    h.get_by_label("Pose viewport, planted: LeftFoot, LeftToeBase");
    // Where no contact is proposed, nothing is planted (the proposals decide)...
    let g = (0..h.state().frames())
        .find(|&f| !left.iter().any(|r| r.contains(f)) && !right.iter().any(|r| r.contains(f)))
        .expect("a frame with no proposed contact");
    h.state_mut()
        .queue
        .push(AppCommand::SetPlayhead(f64::from(g)));
    h.run_steps(3);
    h.get_by_label("Pose viewport");
    // ...until the contact generator is turned off: the real contact tags decide again.
    h.get_by_label("Foot contacts").click();
    h.run_steps(3);
    let doc = &h.state().project.doc;
    let covers = |tag: &str| {
        doc.tags[doc.tag_index(tag).unwrap()].ranges[&0]
            .iter()
            .any(|r| r.contains(g))
    };
    let want = match (
        covers("contact:LeftFootDown"),
        covers("contact:RightFootDown"),
    ) {
        (false, false) => "Pose viewport".to_owned(),
        (l, r) => {
            let mut names = Vec::new();
            if l {
                names.extend(["LeftFoot", "LeftToeBase"]);
            }
            if r {
                names.extend(["RightFoot", "RightToeBase"]);
            }
            format!("Pose viewport, planted: {}", names.join(", "))
        }
    };
    h.get_by_label(&want);
}

/// The demo with the Auto-tag tab in front on walk_to_run_female_01 at frame 120, plotting the
/// root's horizontal speed (the walk/run thresholds).
fn speed_plot_app() -> TaglaneApp {
    let mut app = TaglaneApp::demo_for_tests();
    app.bottom_tab = BottomTab::Autotag;
    app.queue.push(AppCommand::SelectClip(3));
    app.queue.push(AppCommand::SetPlayhead(120.0));
    app.autotag.signal = Some("root horizontal speed".to_owned());
    app
}

#[test]
fn autotag_panel_snapshot() {
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .with_options(SnapshotOptions::default().max_failed_pixels(400))
        .wgpu()
        .build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), speed_plot_app());
    h.run_steps(6);
    assert!(h.state().autotag.output_for(3).is_some());
    h.snapshot("autotag");
}

/// The panel on a real take (CMU 131_03, hop, start, stop, in CMU units): the contact lanes and the
/// left foot's height with its enter/leave lines. Also the README's screenshot.
#[test]
#[ignore = "needs ../shared/mocap"]
fn autotag_panel_on_a_real_take_snapshot() {
    use taglane::core::tags::ClipInfo;
    use taglane::ui::project::Project;
    let file = crate::common::mocap("cmu_131_03_hop_start_stop.bvh")
        .canonicalize()
        .expect("the CMU take");
    let mut doc = TagDocument::default();
    doc.add_clip(ClipInfo {
        name: "cmu_131_03_hop_start_stop".into(),
        frames: 1102,
        fps: 120.0,
        source: Some(file.display().to_string()),
        unit_cm: Some(5.644),
    })
    .unwrap();
    let project = Project {
        doc,
        ..Project::default()
    };
    let mut app = TaglaneApp::new(
        project,
        taglane::ui::app::Prefs::default(),
        taglane::ui::recovery::Recovery::disabled(),
    );
    app.bottom_tab = BottomTab::Autotag;
    app.queue.push(AppCommand::SetPlayhead(430.0));
    app.autotag.signal = Some("left foot height".to_owned());
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .with_options(SnapshotOptions::default().max_failed_pixels(400))
        .wgpu()
        .build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), app);
    crate::common::wait_anim(&mut h);
    h.run_steps(3);
    assert_eq!(h.state().side.pose.load_error, None);
    let left = ghost(h.state(), CONTACT_LEFT);
    assert!(
        left.len() >= 4,
        "a hopping take has several left contacts: {left:?}"
    );
    assert!(
        !ghost(h.state(), "contact:Airborne").is_empty(),
        "and flights between them"
    );
    h.snapshot("autotag_real");
}

/// Opening another project while an apply runs cancels and drops it: nothing computed for the old
/// project reaches the new one, and the panel says so.
#[test]
fn opening_another_project_drops_a_running_apply() {
    use taglane::ui::command::Guarded;
    let mut h = harness();
    // Thirty copies of the demo's clips, so the apply outlasts a frame.
    let clips = h.state().project.doc.clips.clone();
    let mut edits = Vec::new();
    for k in 0..30 {
        for c in &clips {
            edits.push(Edit::InsertClip {
                index: clips.len() + edits.len(),
                clip: taglane::core::tags::ClipInfo {
                    name: format!("{} copy {k}", c.name),
                    ..c.clone()
                },
                ranges: Vec::new(),
            });
        }
    }
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::Batch(edits),
        label: "copy the clips".into(),
        select: None,
    });
    h.run_steps(1);
    open_panel(&mut h);
    h.get_by_label("All clips (310)").click();
    h.run_steps(1);
    h.get_by_label("Apply").click();
    h.run_steps(1);
    assert!(h.state().autotag.is_busy());
    h.state_mut()
        .queue
        .push(AppCommand::GuardedDiscard(Guarded::OpenDemo));
    h.run_steps(1);
    assert!(!h.state().autotag.is_busy());
    h.run_steps(3);
    let app = h.state();
    assert_eq!(app.project.doc.clips.len(), 10);
    assert!(app.project.doc.tag_index(CONTACT_LEFT).is_none());
    assert!(!app.project.history.is_dirty());
    let status = app.autotag.status.clone().unwrap_or_default();
    assert!(status.contains("dropped"), "{status}");
}

/// In a 1024 x 768 window the plot's column is narrow: the signal list and its "(?)" stay inside
/// the bottom panel (the list cuts a long name), so nothing is cut off at the right panel.
#[test]
fn narrow_window_keeps_the_signal_list_in_the_panel() {
    let mut h = Harness::builder()
        .with_size([1024.0, 768.0])
        .build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), speed_plot_app());
    h.run_steps(6);
    let panel_right = h.get_by_label("Frame").rect().min.x;
    let list = h.get_by_label("Signal").rect();
    let help = h.get_by_label("(?)").rect();
    assert!(list.min.x < panel_right, "{list:?}");
    assert!(
        help.max.x <= panel_right,
        "the (?) at {help:?}, the panel ends at {panel_right}"
    );
}

/// The clips checked for an apply stay the same clips when the clip list changes under them (a
/// clip removed before them): their numbers named the clips after them, which an apply to the
/// checked clips then tagged.
#[test]
fn checked_clips_follow_their_clips_when_the_list_changes() {
    let mut h = harness();
    h.run_steps(2);
    h.state_mut().autotag.checked = [3, 5].into_iter().collect();
    h.run_steps(2);
    let name = |h: &Harness<'static, TaglaneApp>, c: u32| {
        h.state().project.doc.clips[c as usize].name.clone()
    };
    let before: Vec<String> = [3, 5].iter().map(|&c| name(&h, c)).collect();
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::RemoveClip { index: 1 },
        label: "remove".into(),
        select: None,
    });
    h.run_steps(3);
    let now: Vec<u32> = h.state().autotag.checked.iter().copied().collect();
    assert_eq!(now, [2, 4]);
    let names: Vec<String> = now.iter().map(|&c| name(&h, c)).collect();
    assert_eq!(names, before);
}
