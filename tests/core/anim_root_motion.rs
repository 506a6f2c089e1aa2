//! Root motion and its blending, and tag events, on hand-made clips with known answers.

use std::f32::consts::{FRAC_PI_2, PI};

use glam::{Quat, Vec3};
use taglane::core::anim::{
    Clip, EventSettings, RootMotion, RootMotionBlend, RootMotionTrack, Skeleton, TagEventKind,
    Transform, active_tags, blend_root_motion, blend_vec, root_motion, tag_events,
};
use taglane::core::tags::Range;

/// A clip whose root stays at zero and whose child "Hips" walks: x(f) = f along +Z... (see below).
/// Frames 0..=n-1 at 1 fps; Hips moves `step` per frame along its facing and turns `turn_deg`
/// per frame about +Y.
fn walker(frames: usize, step: f32, turn_deg: f32) -> Clip {
    let skeleton = Skeleton::new(
        vec!["Root".into(), "Hips".into()],
        vec![None, Some(0)],
        vec![Transform::IDENTITY; 2],
    );
    let mut rotations = Vec::new();
    let mut translations = Vec::new();
    let mut pos = Vec3::ZERO;
    for f in 0..frames {
        let heading = (turn_deg * f as f32).to_radians();
        rotations.push(Quat::IDENTITY);
        translations.push(Vec3::ZERO);
        // Hips local frame: facing +Z, rotated about +Y by the heading; a rig whose forward axis is
        // local X would work the same (the forward axis is detected).
        rotations.push(Quat::from_rotation_y(heading));
        translations.push(pos);
        pos += Quat::from_rotation_y(heading) * Vec3::new(0.0, 0.0, step);
    }
    Clip {
        name: "walk".into(),
        skeleton,
        fps: 1.0,
        frame_count: frames,
        unit_cm: 1.0,
        scales: vec![Vec3::ONE; rotations.len()],
        rotations,
        translations,
    }
}

fn close(a: Vec3, b: Vec3, eps: f32) {
    assert!(a.abs_diff_eq(b, eps), "{a} != {b}");
}

#[test]
fn straight_walk_displacement_on_a_child_joint() {
    let clip = walker(11, 10.0, 0.0); // 10 s, 100 units along +Z
    // The ROOT does not move; Hips does.
    let root = root_motion(&clip, 0, 0.0, 10.0, false).unwrap();
    close(root.translation, Vec3::ZERO, 1e-6);
    let hips = root_motion(&clip, 1, 0.0, 10.0, false).unwrap();
    close(hips.translation, Vec3::new(0.0, 0.0, 100.0), 1e-4);
    close(hips.translation_local, Vec3::new(0.0, 0.0, 100.0), 1e-4);
    assert!(hips.heading_rad.abs() < 1e-6);
    // Between frames: linear; clamped past the end.
    let part = root_motion(&clip, 1, 2.5, 4.0, false).unwrap();
    close(part.translation, Vec3::new(0.0, 0.0, 15.0), 1e-4);
    let clamped = root_motion(&clip, 1, 9.0, 50.0, false).unwrap();
    close(clamped.translation, Vec3::new(0.0, 0.0, 10.0), 1e-4);
}

#[test]
fn looping_straight_walk_keeps_going() {
    let clip = walker(11, 10.0, 0.0);
    let track = RootMotionTrack::new(&clip, 1).unwrap();
    // From 8 s to 13 s crosses one loop boundary: 20 units to the end, then 30 more.
    let m = track.delta(8.0, 13.0, true).unwrap();
    close(m.translation, Vec3::new(0.0, 0.0, 50.0), 1e-3);
    // Three and a half cycles.
    let m = track.delta(0.0, 35.0, true).unwrap();
    close(m.translation, Vec3::new(0.0, 0.0, 350.0), 1e-2);
    // Backwards is the opposite.
    let back = track.delta(13.0, 8.0, true).unwrap();
    close(back.translation, Vec3::new(0.0, 0.0, -50.0), 1e-3);
}

#[test]
fn turning_walk_accumulates_heading_across_loops() {
    // 9 frames turning 45 degrees per frame: one cycle (8 steps) turns a full 360 degrees.
    let clip = walker(9, 10.0, 45.0);
    let track = RootMotionTrack::new(&clip, 1).unwrap();
    let one = track.delta(0.0, 8.0, true).unwrap();
    assert!(
        (one.heading_rad - 2.0 * PI).abs() < 1e-4,
        "{}",
        one.heading_rad
    );
    // A regular octagon: back at the start after a cycle.
    close(one.translation, Vec3::ZERO, 1e-3);
    // Two and a quarter cycles: 18 steps = 810 degrees.
    let m = track.delta(0.0, 18.0, true).unwrap();
    assert!((m.heading_rad - 18.0 * PI / 4.0).abs() < 1e-3);
    // A clip turning 90 degrees per cycle: each new cycle continues in the turned direction.
    let quarter = walker(3, 10.0, 45.0); // 2 steps: +Z then 45 degrees left
    let track = RootMotionTrack::new(&quarter, 1).unwrap();
    let c = track.delta(0.0, 2.0, true).unwrap();
    assert!((c.heading_rad - FRAC_PI_2).abs() < 1e-5);
    let two = track.delta(0.0, 4.0, true).unwrap();
    // Second cycle = first cycle's displacement rotated by 90 degrees, added at its end.
    let expected = c.translation + Quat::from_rotation_y(FRAC_PI_2) * c.translation;
    close(two.translation, expected, 1e-3);
    assert!((two.heading_rad - PI).abs() < 1e-4);
}

#[test]
fn local_translation_is_in_the_heading_frame_at_t0() {
    // After 2 frames the walker faces +X (90 degrees); the next step is along +X in model space and
    // straight ahead (+Z) in its own frame.
    let clip = walker(4, 10.0, 45.0);
    let m = root_motion(&clip, 1, 2.0, 3.0, false).unwrap();
    close(m.translation, Vec3::new(10.0, 0.0, 0.0), 1e-4);
    close(m.translation_local, Vec3::new(0.0, 0.0, 10.0), 1e-4);
}

#[test]
fn bad_joint_and_times_are_errors() {
    let clip = walker(3, 1.0, 0.0);
    assert!(root_motion(&clip, 5, 0.0, 1.0, false).is_err());
    assert!(root_motion(&clip, 1, f64::NAN, 1.0, false).is_err());
}

fn motion(x: f32, z: f32) -> RootMotion {
    RootMotion {
        translation: Vec3::new(x, 0.0, z),
        translation_local: Vec3::new(x, 0.0, z),
        heading_rad: 0.0,
    }
}

#[test]
fn lerp_shortens_a_90_degree_blend_nlerp_and_slerp_keep_length() {
    let (a, b) = (motion(0.0, 1.0), motion(1.0, 0.0));
    let lerp = blend_root_motion(&a, &b, 0.5, RootMotionBlend::Lerp);
    assert!((lerp.translation.length() - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
    for how in [RootMotionBlend::Nlerp, RootMotionBlend::Slerp] {
        for w in [0.1, 0.25, 0.5, 0.9] {
            let m = blend_root_motion(&a, &b, w, how);
            assert!((m.translation.length() - 1.0).abs() < 1e-6, "{how:?} {w}");
        }
    }
    // Different lengths: nlerp and slerp lerp the length.
    let long = motion(3.0, 0.0);
    for how in [RootMotionBlend::Nlerp, RootMotionBlend::Slerp] {
        let m = blend_root_motion(&a, &long, 0.5, how);
        assert!((m.translation.length() - 2.0).abs() < 1e-5);
    }
}

#[test]
fn slerp_turns_at_constant_angular_speed_nlerp_does_not() {
    let (a, b) = (Vec3::Z, Vec3::X); // 90 degrees apart
    let angle = |v: Vec3| v.x.atan2(v.z).to_degrees();
    let mut nlerp_error = 0.0f32;
    for i in 0..=20 {
        let w = i as f32 / 20.0;
        let s = blend_vec(a, b, w, RootMotionBlend::Slerp);
        assert!((angle(s) - 90.0 * w).abs() < 1e-3, "w {w}: {}", angle(s));
        let n = blend_vec(a, b, w, RootMotionBlend::Nlerp);
        nlerp_error = nlerp_error.max((angle(n) - 90.0 * w).abs());
    }
    // nlerp lags then leads: about 4.1 degrees off at w = 0.25 for a 90 degree blend.
    assert!(nlerp_error > 3.0, "{nlerp_error}");
    // Opposite directions still give a direction of the right length.
    let o = blend_vec(Vec3::Z, -Vec3::Z, 0.5, RootMotionBlend::Nlerp);
    assert!((o.length() - 1.0).abs() < 1e-5);
    // Headings lerp.
    let mut h = motion(0.0, 1.0);
    h.heading_rad = 1.0;
    assert_eq!(
        blend_root_motion(&motion(0.0, 1.0), &h, 0.25, RootMotionBlend::Slerp).heading_rad,
        0.25
    );
}

// ---- tag events ----

fn settings(frames: u32, looping: bool) -> EventSettings {
    EventSettings {
        frame_count: frames,
        fps: 10.0,
        looping,
    }
}

#[test]
fn events_in_order_within_one_interval() {
    let step: &[Range] = &[Range::new(2, 4), Range::new(7, 8)];
    let jump: &[Range] = &[Range::new(4, 6)];
    let tags = [step, jump];
    let mut out = Vec::new();
    // (0.1, 0.75]: frames 2 (enter step), 4 (leave step, enter jump), 6 (leave jump), 7 (enter step).
    tag_events(&tags, &settings(11, false), 0.1, 0.75, &mut out).unwrap();
    let got: Vec<(usize, TagEventKind, u32)> =
        out.iter().map(|e| (e.tag, e.kind, e.frame)).collect();
    assert_eq!(
        got,
        [
            (0, TagEventKind::Enter, 2),
            (0, TagEventKind::Leave, 4),
            (1, TagEventKind::Enter, 4),
            (1, TagEventKind::Leave, 6),
            (0, TagEventKind::Enter, 7),
        ]
    );
    assert!((out[0].time_s - 0.2).abs() < 1e-9);
    // Half-open interval: an event exactly at t0 is not repeated, one exactly at t1 is included.
    out.clear();
    tag_events(&tags, &settings(11, false), 0.2, 0.4, &mut out).unwrap();
    let got: Vec<(usize, TagEventKind)> = out.iter().map(|e| (e.tag, e.kind)).collect();
    assert_eq!(got, [(0, TagEventKind::Leave), (1, TagEventKind::Enter)]);
    // "Did a footstep start during the last update?"
    out.clear();
    tag_events(&tags, &settings(11, false), 0.65, 0.7, &mut out).unwrap();
    assert!(
        out.iter()
            .any(|e| e.tag == 0 && e.kind == TagEventKind::Enter)
    );
    assert_eq!(active_tags(&tags, &settings(11, false), 0.45), [1]);
}

#[test]
fn events_across_a_loop() {
    // 11 frames at 10 fps: period 1 s, frames 0..=9 per cycle, frame 10 is frame 0 again.
    let start: &[Range] = &[Range::new(0, 2)];
    let end: &[Range] = &[Range::new(8, 11)];
    let both: &[Range] = &[Range::new(0, 1), Range::new(9, 11)];
    let tags = [start, end, both];
    let mut out = Vec::new();
    tag_events(&tags, &settings(11, true), 0.75, 1.25, &mut out).unwrap();
    let got: Vec<(usize, TagEventKind, u32, i64)> = out
        .iter()
        .map(|e| (e.tag, e.kind, e.frame, e.cycle))
        .collect();
    assert_eq!(
        got,
        [
            (1, TagEventKind::Enter, 8, 0),
            (2, TagEventKind::Enter, 9, 0),
            // The wrap at t = 1.0: `end` leaves, `start` enters, `both` continues.
            (1, TagEventKind::Leave, 0, 1),
            (0, TagEventKind::Enter, 0, 1),
            (2, TagEventKind::Leave, 1, 1),
            (0, TagEventKind::Leave, 2, 1),
        ]
    );
    assert!((out[2].time_s - 1.0).abs() < 1e-9);
    // Several cycles: each cycle repeats the events.
    out.clear();
    tag_events(&[start], &settings(11, true), 0.5, 3.5, &mut out).unwrap();
    assert_eq!(out.len(), 6);
    // Bad intervals are errors.
    assert!(tag_events(&tags, &settings(11, true), 1.0, 0.5, &mut out).is_err());
    assert!(tag_events(&tags, &settings(11, true), 0.0, f64::INFINITY, &mut out).is_err());
}

#[test]
fn events_match_a_frame_by_frame_model() {
    // Slow model: walk frame by frame and compare states.
    let a: &[Range] = &[Range::new(1, 3), Range::new(5, 9), Range::new(12, 13)];
    let b: &[Range] = &[Range::new(0, 13)];
    let tags = [a, b];
    for looping in [false, true] {
        let s = settings(13, looping);
        for (t0, t1) in [
            (0.0, 1.2),
            (0.05, 0.95),
            (0.3, 3.7),
            (1.1, 1.2),
            (-0.5, 0.6),
        ] {
            let mut out = Vec::new();
            tag_events(&tags, &s, t0, t1, &mut out).unwrap();
            // Model: sample the active set every 1/1000 s.
            let mut model = Vec::new();
            let mut prev = active_tags(&tags, &s, t0);
            let steps = ((t1 - t0) * 1000.0).round() as i64;
            for i in 1..=steps {
                let t = t0 + i as f64 / 1000.0;
                let now = active_tags(&tags, &s, t);
                for k in 0..2 {
                    let (p, n) = (prev.contains(&k), now.contains(&k));
                    if p != n {
                        model.push((
                            k,
                            if n {
                                TagEventKind::Enter
                            } else {
                                TagEventKind::Leave
                            },
                        ));
                    }
                }
                prev = now;
            }
            let got: Vec<(usize, TagEventKind)> = out.iter().map(|e| (e.tag, e.kind)).collect();
            let mut model_sorted = got.clone();
            model_sorted.sort();
            let mut m = model.clone();
            m.sort();
            assert_eq!(
                model_sorted, m,
                "looping {looping} ({t0}, {t1}]: {got:?} vs {model:?}"
            );
        }
    }
}

#[test]
fn events_from_a_tag_document() {
    use taglane::core::anim::clip_tag_ranges;
    use taglane::core::tags::{Tag, TagDocument};
    let tag = |name: &str, clip: u32, ranges: Vec<Range>| Tag {
        ranges: [(clip, ranges)].into(),
        ..Tag::new(name)
    };
    let doc = TagDocument {
        tags: vec![
            tag("footstep", 0, vec![Range::new(3, 4)]),
            tag("other_clip", 1, vec![Range::new(0, 5)]),
        ],
        ..TagDocument::default()
    };
    let tags = clip_tag_ranges(&doc, 0);
    assert_eq!(tags.len(), 2);
    assert!(tags[1].is_empty());
    let mut out = Vec::new();
    tag_events(&tags, &settings(11, false), 0.25, 0.35, &mut out).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].tag, out[0].kind), (0, TagEventKind::Enter));
}
