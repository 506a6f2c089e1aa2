//! The pose preview in the real app: scrubbing changes the sampled pose (checked against the
//! animation core), blending follows the weight slider, a missing source shows a message.
#![cfg(feature = "ui")]

use egui::{Event, Modifiers, PointerButton};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use glam::Vec3;
use taglane::core::anim::{
    AnimFormat, Clip, ImportOptions, RotationInterp, SampleSettings, Transform,
    load_animation_from_bytes, local_to_model, sample_clip,
};
use taglane::ui::TaglaneApp;
use taglane::ui::command::AppCommand;
use taglane::ui::pose::model::{PoseBuffers, blend_model};
use taglane::ui::project::DEMO_CLIP_FILES;

fn harness_with(app: TaglaneApp) -> Harness<'static, TaglaneApp> {
    crate::common::harness_with(app, [1400.0, 860.0])
}

fn demo_clip(index: usize) -> Clip {
    let (name, text) = DEMO_CLIP_FILES[index];
    load_animation_from_bytes(
        text.as_bytes(),
        AnimFormat::Bvh,
        name,
        None,
        &ImportOptions::default(),
    )
    .unwrap()
    .clips
    .remove(0)
}

fn reference_positions(clip: &Clip, time_s: f64) -> Vec<Vec3> {
    let n = clip.joint_count();
    let mut local = vec![Transform::IDENTITY; n];
    let mut model = vec![Transform::IDENTITY; n];
    sample_clip(
        clip,
        time_s,
        &SampleSettings::clamped(RotationInterp::Slerp),
        &mut local,
    )
    .unwrap();
    local_to_model(&clip.skeleton, &local, &mut model).unwrap();
    model.iter().map(|t| t.translation).collect()
}

/// Positions relative to the root's ground point (clip B is drawn over A's place on the ground).
fn ground_relative(p: &[Vec3]) -> Vec<Vec3> {
    let r = p[0];
    p.iter().map(|q| *q - Vec3::new(r.x, 0.0, r.z)).collect()
}

fn max_distance(a: &[Vec3], b: &[Vec3]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (*x - *y).length())
        .fold(0.0, f32::max)
}

#[test]
fn scrubbing_the_playhead_changes_the_pose() {
    let mut h = harness_with(TaglaneApp::demo_for_tests());
    let clip = demo_clip(0);
    let first = h.state().side.pose.joint_positions.clone();
    assert_eq!(first.len(), clip.joint_count());
    assert!(max_distance(&first, &reference_positions(&clip, 0.0)) < 1e-4);

    // A fractional playhead: sampled between frames 100 and 101.
    h.state_mut().queue.push(AppCommand::SetPlayhead(100.5));
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.playback.playhead, 100.5);
    let now = app.side.pose.joint_positions.clone();
    assert!(
        max_distance(&first, &now) > 1.0,
        "the pose did not move when scrubbing"
    );
    let expected = reference_positions(&clip, 100.5 / f64::from(clip.fps));
    assert!(max_distance(&now, &expected) < 1e-4);
    assert!((app.side.pose.time_s - 100.5 / 30.0).abs() < 1e-9);
    // Not simply one of the neighbouring frames.
    let f100 = reference_positions(&clip, 100.0 / 30.0);
    assert!(max_distance(&now, &f100) > 1e-3);
}

#[test]
fn scrubbing_by_dragging_on_the_ruler_changes_the_pose() {
    let mut h = harness_with(TaglaneApp::demo_for_tests());
    let before = h.state().side.pose.joint_positions.clone();
    let ruler = h
        .state()
        .timeline
        .lane_point(0, 120)
        .expect("lane 0 is visible");
    // The ruler is above the first lane.
    let top = h.state().timeline.last_row_layout.as_ref().unwrap().top;
    let pos = egui::pos2(ruler.x, top - taglane::ui::theme::RULER_HEIGHT * 0.5);
    let start = egui::pos2(pos.x - 40.0, pos.y);
    h.event(Event::PointerMoved(start));
    h.step();
    h.event(Event::PointerButton {
        pos: start,
        button: PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    h.step();
    for k in 1..=4 {
        h.event(Event::PointerMoved(
            start + (pos - start) * (k as f32 / 4.0),
        ));
        h.step();
    }
    h.event(Event::PointerButton {
        pos,
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.step();
    h.run_steps(2);
    let app = h.state();
    assert!(
        (app.playback.playhead - 120.0).abs() <= 1.0,
        "{}",
        app.playback.playhead
    );
    let clip = demo_clip(0);
    let expected = reference_positions(&clip, app.playback.playhead / 30.0);
    assert!(max_distance(&app.side.pose.joint_positions, &expected) < 1e-4);
    assert!(max_distance(&before, &app.side.pose.joint_positions) > 1.0);
}

#[test]
fn the_blend_weight_slider_blends_the_second_clip() {
    let mut h = harness_with(TaglaneApp::demo_for_tests());
    h.state_mut().queue.push(AppCommand::SetPlayhead(40.0));
    h.run_steps(2);
    h.get_by_label("Blend with a second clip").click();
    h.run_steps(2);
    assert!(h.state().side.pose.blend.enabled);
    h.state_mut().side.pose.blend.clip_b = Some(1);
    h.run_steps(2);

    // Click three quarters along the slider.
    let rect = h
        .get_all_by_label("Blend weight")
        .find(|n| n.accesskit_node().role() == egui::accesskit::Role::Slider)
        .expect("the weight slider")
        .rect();
    let pos = egui::pos2(rect.left() + rect.width() * 0.75, rect.center().y);
    h.event(Event::PointerMoved(pos));
    h.step();
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
        h.step();
    }
    h.run_steps(2);
    let app = h.state();
    let w = app.side.pose.blend.weight;
    assert!((0.6..=0.9).contains(&w), "weight {w}");
    let a = demo_clip(0);
    let b = demo_clip(1);
    let time_a = 40.0 / 30.0;
    // Normalised time sync by default.
    let time_b = time_a / f64::from(a.duration_s()) * f64::from(b.duration_s());
    assert!((app.side.pose.time_b_s.unwrap() - time_b).abs() < 1e-6);
    let mut out = PoseBuffers::default();
    blend_model(
        &a,
        time_a,
        &b,
        time_b,
        &SampleSettings::clamped(RotationInterp::Slerp),
        w,
        None,
        Some(0),
        &mut out,
    )
    .unwrap();
    let expected: Vec<Vec3> = out.model.iter().map(|t| t.translation).collect();
    assert!(max_distance(&app.side.pose.joint_positions, &expected) < 1e-4);
    assert!(
        max_distance(
            &app.side.pose.joint_positions,
            &app.side.pose.base_positions
        ) > 0.5
    );
    // The root-motion view has its three blends.
    let tr = app.side.pose.trajectories.as_ref().expect("trajectories");
    assert_eq!(tr.lerp.len(), a.frame_count);
    assert_eq!(tr.slerp.len(), tr.nlerp.len());
}

#[test]
fn best_match_sync_picks_a_frame_of_clip_b() {
    let mut app = TaglaneApp::demo_for_tests();
    app.side.pose.blend.enabled = true;
    // Blending a clip with itself: the best match of any frame is that frame.
    app.side.pose.blend.clip_b = Some(0);
    app.side.pose.blend.sync = taglane::ui::pose::SyncMode::BestMatch;
    app.side.pose.blend.position_bias = 0.5;
    let mut h = harness_with(app);
    h.state_mut().queue.push(AppCommand::SetPlayhead(57.0));
    h.run_steps(2);
    assert_eq!(h.state().side.pose.best_match.unwrap().0, 57);
}

#[test]
fn tag_sync_aligns_the_first_ranges_of_the_tag() {
    let mut app = TaglaneApp::demo_for_tests();
    let tag = crate::common::tag_index(&app, "contact:LeftFootDown");
    let first = |app: &TaglaneApp, clip: u32| app.project.doc.tags[tag].ranges[&clip][0].start;
    let (sa, sb) = (first(&app, 0), first(&app, 1));
    app.side.pose.blend.enabled = true;
    app.side.pose.blend.clip_b = Some(1);
    app.side.pose.blend.sync = taglane::ui::pose::SyncMode::Tag(tag);
    let mut h = harness_with(app);
    h.state_mut().queue.push(AppCommand::SetPlayhead(30.0));
    h.run_steps(2);
    let tb = h.state().side.pose.time_b_s.unwrap();
    let expected = 30.0 / 30.0 - f64::from(sa) / 30.0 + f64::from(sb) / 30.0;
    assert!((tb - expected).abs() < 1e-9, "{tb} vs {expected}");
}

#[test]
fn clip_b_past_its_end_follows_the_post_infinity_mode() {
    let mut app = TaglaneApp::demo_for_tests();
    let tag = crate::common::tag_index(&app, "contact:LeftFootDown");
    app.side.pose.blend.enabled = true;
    app.side.pose.blend.clip_b = Some(1);
    app.side.pose.blend.sync = taglane::ui::pose::SyncMode::Tag(tag);
    let mut h = harness_with(app);
    h.state_mut().queue.push(AppCommand::SetPlayhead(240.0));
    h.run_steps(2);
    let b = demo_clip(1);
    let tb = h.state().side.pose.time_b_s.unwrap();
    assert!(tb > f64::from(b.duration_s()) + 0.1, "precondition: {tb}");
    // Clamp (default): B holds its last frame.
    let last = reference_positions(&b, f64::from(b.duration_s()));
    assert!(
        max_distance(
            &ground_relative(&h.state().side.pose.b_positions),
            &ground_relative(&last)
        ) < 1e-3
    );
    // Loop: B wraps around.
    h.state_mut().side.pose.post = taglane::core::anim::Extrapolation::Loop;
    h.run_steps(2);
    let mut looped = vec![Transform::IDENTITY; b.joint_count()];
    sample_clip(
        &b,
        tb,
        &SampleSettings::looped(RotationInterp::Slerp),
        &mut looped,
    )
    .unwrap();
    let mut model = looped.clone();
    local_to_model(&b.skeleton, &looped, &mut model).unwrap();
    let expected: Vec<Vec3> = model.iter().map(|t| t.translation).collect();
    let got = h.state().side.pose.b_positions.clone();
    assert!(max_distance(&ground_relative(&got), &ground_relative(&expected)) < 1e-3);
    assert!(max_distance(&ground_relative(&got), &ground_relative(&last)) > 1.0);
}

#[test]
fn an_upper_body_mask_keeps_the_legs_of_the_first_clip() {
    let mut app = TaglaneApp::demo_for_tests();
    app.side.pose.blend.enabled = true;
    app.side.pose.blend.clip_b = Some(1);
    app.side.pose.blend.weight = 1.0;
    app.side.pose.blend.mask = taglane::ui::pose::model::MaskKind::UpperBody;
    let mut h = harness_with(app);
    h.state_mut().queue.push(AppCommand::SetPlayhead(45.0));
    h.run_steps(2);
    let clip = demo_clip(0);
    let pose = &h.state().side.pose;
    let leg = clip.skeleton.find("LeftFoot").unwrap();
    let hand = clip.skeleton.find("LeftHand").unwrap();
    assert!((pose.joint_positions[leg] - pose.base_positions[leg]).length() < 1e-4);
    assert!((pose.joint_positions[hand] - pose.base_positions[hand]).length() > 0.5);
}

#[test]
fn a_missing_source_shows_a_message_and_a_relink_button() {
    let mut app = TaglaneApp::demo_for_tests();
    app.project.is_demo = false;
    app.project.path = Some(std::path::PathBuf::from("/nonexistent/p.taglane.json"));
    let h = harness_with(app);
    let e = h.state().side.pose.load_error.clone().expect("an error");
    assert!(e.contains("walk_male_01.bvh"), "{e}");
    assert!(h.state().side.pose.joint_positions.is_empty());
    h.get_by_label("Re-link");
}

#[test]
fn hovering_names_a_joint_and_clicking_selects_it() {
    let mut h = harness_with(TaglaneApp::demo_for_tests());
    let joint = 16; // a head/neck joint, away from others
    let p = h
        .state()
        .side
        .pose
        .joint_screen_pos(joint)
        .expect("visible");
    h.event(Event::PointerMoved(p));
    h.run_steps(2);
    let hovered = h
        .state()
        .side
        .pose
        .hovered
        .expect("a joint under the pointer");
    let hp = h.state().side.pose.joint_screen_pos(hovered).unwrap();
    assert!(hp.distance(p) < 9.0);
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos: p,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
        h.step();
    }
    h.run_steps(2);
    assert_eq!(h.state().side.pose.selected, Some(hovered));
    // The rotation curve of the selected joint is shown.
    h.get_by_label_contains("local rotation (Euler Z-Y-X, degrees)");
}

#[test]
fn dragging_orbits_and_the_view_buttons_set_the_camera() {
    let mut h = harness_with(TaglaneApp::demo_for_tests());
    let rect = h.state().side.pose.viewport_rect.unwrap();
    let yaw = h.state().side.pose.camera.yaw_rad;
    // Drag from an empty corner of the viewport.
    let from = rect.left_bottom() + egui::vec2(10.0, -10.0);
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
        h.event(Event::PointerMoved(from + egui::vec2(20.0 * k as f32, 0.0)));
        h.step();
    }
    h.event(Event::PointerButton {
        pos: from + egui::vec2(80.0, 0.0),
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.run_steps(2);
    assert!((h.state().side.pose.camera.yaw_rad - yaw).abs() > 0.3);
    h.get_by_label("Top").click();
    h.run_steps(2);
    let cam = h.state().side.pose.camera;
    assert!(cam.eye().y - cam.target.y > 0.99 * cam.distance);
    h.get_by_label("Front").click();
    h.run_steps(2);
    assert_eq!(h.state().side.pose.camera.yaw_rad, 0.0);
}

/// Screenshot of the pose view (wgpu renderer): a blend with a joint selected.
#[test]
fn pose_view_snapshot() {
    let mut app = TaglaneApp::demo_for_tests();
    app.side.pose.blend.enabled = true;
    // walk_turn_left_male_04: its turn makes the lerp, nlerp and slerp trajectories differ.
    app.side.pose.blend.clip_b = Some(8);
    app.side.pose.blend.weight = 0.5;
    app.side.pose.selected = Some(3);
    let mut h = Harness::builder()
        .with_size([1400.0, 1150.0])
        .wgpu()
        .build_ui_state(|ui, app: &mut TaglaneApp| app.ui(ui), app);
    h.state_mut().queue.push(AppCommand::SetPlayhead(60.0));
    h.run_steps(4);
    h.snapshot("pose");
}

/// A clip whose unit makes its skeleton no character's size (a take in centimetres given metres)
/// is flagged under the viewport, naming where to change the unit.
#[test]
fn a_clip_at_a_unit_of_no_characters_size_is_flagged() {
    let mut h = harness_with(TaglaneApp::demo_for_tests());
    crate::common::wait_anim(&mut h);
    assert!(h.query_by_label_contains("check the clip's unit").is_none());
    let clip = h.state().current_clip;
    h.state_mut().queue.push(AppCommand::SetClipUnits {
        clips: vec![clip],
        unit_cm: Some(100.0),
    });
    h.run_steps(2);
    crate::common::wait_anim(&mut h);
    h.get_by_label_contains("tall at 1 unit = 100 cm: check the clip's unit");
}

/// Clip B and the sync tag follow their clip and tag (by name) when the lists change, and are let
/// go with the project: by number, the blend took whichever clip or tag took the place.
#[test]
fn the_blend_follows_its_clip_and_sync_tag() {
    use taglane::core::doc::Edit;
    use taglane::ui::pose::SyncMode;
    let mut app = TaglaneApp::demo_for_tests();
    let tag = crate::common::tag_index(&app, "contact:LeftFootDown");
    assert!(tag > 0);
    app.side.pose.blend.enabled = true;
    app.side.pose.blend.clip_b = Some(3);
    app.side.pose.blend.sync = SyncMode::Tag(tag);
    let clip_b = app.project.doc.clips[3].name.clone();
    let mut h = harness_with(app);
    h.run_steps(2);
    // The sync tag moved up one place.
    h.state_mut().queue.push(AppCommand::MoveTag {
        index: tag,
        up: true,
    });
    h.run_steps(2);
    assert_eq!(h.state().side.pose.blend.sync, SyncMode::Tag(tag - 1));
    // A clip before clip B removed: B is one place up.
    h.state_mut().queue.push(AppCommand::Edit {
        edit: Edit::RemoveClip { index: 1 },
        label: "remove clip".into(),
        select: None,
    });
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.side.pose.blend.clip_b, Some(2));
    assert_eq!(app.project.doc.clips[2].name, clip_b);
    // Both undone: back where they were.
    for _ in 0..2 {
        h.state_mut().queue.push(AppCommand::Undo);
        h.run_steps(2);
    }
    assert_eq!(h.state().side.pose.blend.clip_b, Some(3));
    assert_eq!(h.state().side.pose.blend.sync, SyncMode::Tag(tag));
    // The sync tag deleted: normalised time.
    h.state_mut().queue.push(AppCommand::DeleteTag(tag));
    h.run_steps(2);
    assert_eq!(h.state().side.pose.blend.sync, SyncMode::NormalizedTime);
    // Another project: clip B let go.
    h.state_mut().queue.push(AppCommand::GuardedDiscard(
        taglane::ui::command::Guarded::New,
    ));
    h.run_steps(2);
    assert_eq!(h.state().side.pose.blend.clip_b, None);
}

/// A long take's root trail is thinned to about 2,048 points (one a frame was projected and drawn
/// every frame), and the joint that moves the clip is worked out once a load, not every frame.
#[test]
fn a_long_takes_root_trail_is_thinned() {
    let dir = crate::common::Scratch::new("long-trail");
    let (name, text) = DEMO_CLIP_FILES[0];
    let (head, motion) = text.split_once("MOTION").unwrap();
    let lines: Vec<&str> = motion
        .lines()
        .skip_while(|l| !l.starts_with("Frame Time"))
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let frames = 6000;
    let mut take = format!("{head}MOTION\nFrames: {frames}\nFrame Time: 0.0333333\n");
    for k in 0..frames {
        take.push_str(lines[k % lines.len()]);
        take.push('\n');
    }
    std::fs::write(dir.join(name), take).unwrap();
    let mut app = TaglaneApp::demo_for_tests();
    app.project.is_demo = false;
    app.project.path = Some(dir.join("p.taglane.json"));
    app.project.doc.clips[0].frames = frames as u32;
    let mut h = harness_with(app);
    crate::common::wait_anim(&mut h);
    let pose = &h.state().side.pose;
    assert!(pose.load_error.is_none(), "{:?}", pose.load_error);
    assert!(pose.trail_stride > 1, "stride {}", pose.trail_stride);
    assert!(
        (1000..=2049).contains(&pose.trail.len()),
        "{} points",
        pose.trail.len()
    );
}
