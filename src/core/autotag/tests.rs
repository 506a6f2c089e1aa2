//! Each generator on hand-made motions whose answer is known by construction.

use std::sync::Arc;

use glam::{Quat, Vec3};

use super::*;
use crate::core::anim::{Clip, Skeleton, Transform};

/// The hand-made figure: joint names and parents. Facing +Z, its left towards +X, Y up, in cm.
const FIGURE: [(&str, Option<usize>, [f32; 3]); 15] = [
    ("Hips", None, [0.0, 90.0, 0.0]),
    ("LeftUpLeg", Some(0), [10.0, 85.0, 0.0]),
    ("LeftFoot", Some(1), [10.0, 8.0, 0.0]),
    ("LeftToeBase", Some(2), [10.0, 2.0, 12.0]),
    ("RightUpLeg", Some(0), [-10.0, 85.0, 0.0]),
    ("RightFoot", Some(4), [-10.0, 8.0, 0.0]),
    ("RightToeBase", Some(5), [-10.0, 2.0, 12.0]),
    ("Spine", Some(0), [0.0, 110.0, 0.0]),
    ("Head", Some(7), [0.0, 160.0, 0.0]),
    ("LeftArm", Some(7), [18.0, 145.0, 0.0]),
    ("LeftForeArm", Some(9), [18.0, 118.0, 0.0]),
    ("LeftHand", Some(10), [18.0, 92.0, 0.0]),
    ("RightArm", Some(7), [-18.0, 145.0, 0.0]),
    ("RightForeArm", Some(12), [-18.0, 118.0, 0.0]),
    ("RightHand", Some(13), [-18.0, 92.0, 0.0]),
];
const HIPS: usize = 0;
const L_FOOT: usize = 2;
const L_TOE: usize = 3;
const R_FOOT: usize = 5;
const R_TOE: usize = 6;
const HEAD: usize = 8;
const L_FOREARM: usize = 10;
const L_HAND: usize = 11;
const R_FOREARM: usize = 13;
const R_HAND: usize = 14;

/// One frame of the figure: model-space positions (cm) and the rotation of the hips (every other
/// joint has no local rotation).
struct Pose {
    p: [Vec3; 15],
    hips: Quat,
}

impl Pose {
    fn standing() -> Self {
        Pose {
            p: FIGURE.map(|(_, _, x)| Vec3::from(x)),
            hips: Quat::IDENTITY,
        }
    }

    /// Moves a foot (ankle and toe together).
    fn foot(&mut self, left: bool, by: Vec3) {
        let (a, t) = if left {
            (L_FOOT, L_TOE)
        } else {
            (R_FOOT, R_TOE)
        };
        self.p[a] += by;
        self.p[t] += by;
    }

    /// Moves the whole body.
    fn body(&mut self, by: Vec3) {
        for p in &mut self.p {
            *p += by;
        }
    }
}

/// A clip of the figure at `fps`, frame `f` posed by `pose(f, &mut standing pose)`.
fn figure(frames: usize, fps: f32, pose: impl Fn(usize, &mut Pose)) -> Clip {
    let n = FIGURE.len();
    let mut rotations = Vec::with_capacity(frames * n);
    let mut translations = Vec::with_capacity(frames * n);
    for f in 0..frames {
        let mut p = Pose::standing();
        pose(f, &mut p);
        let inv = p.hips.inverse();
        for (j, (_, parent, _)) in FIGURE.iter().enumerate() {
            match parent {
                None => {
                    rotations.push(p.hips);
                    translations.push(p.p[j]);
                }
                Some(q) => {
                    rotations.push(Quat::IDENTITY);
                    translations.push(inv * (p.p[j] - p.p[*q]));
                }
            }
        }
    }
    let rest: Vec<Transform> = (0..n)
        .map(|j| Transform {
            translation: translations.get(j).copied().unwrap_or(Vec3::ZERO),
            ..Transform::IDENTITY
        })
        .collect();
    Clip {
        name: "handmade".into(),
        skeleton: Skeleton::new(
            FIGURE.iter().map(|j| j.0.to_owned()).collect(),
            FIGURE.iter().map(|j| j.1).collect(),
            rest,
        ),
        fps,
        frame_count: frames,
        unit_cm: 1.0,
        rotations,
        translations,
        scales: vec![Vec3::ONE; frames * n],
    }
}

fn run(clip: &Clip, settings: &AutotagSettings) -> Autotagged {
    autotag(clip, settings, None).unwrap()
}

fn r(a: u32, b: u32) -> Range {
    Range::new(a, b)
}

/// A foot stepping: swings of `swing` frames (a 10 cm high arc moving forward at `speed_cm_s`)
/// between stops of `stop` frames on the ground, starting with a stop. Returns the offset at `f`.
fn stepping(f: usize, swing: usize, stop: usize, fps: f32, speed_cm_s: f32) -> Vec3 {
    let period = swing + stop;
    let (cycle, k) = (f / period, f % period);
    let stride = speed_cm_s * swing as f32 / fps;
    let base = Vec3::Z * stride * cycle as f32;
    if k < stop {
        base
    } else {
        // Strictly between the two stops: the foot moves on every swing frame.
        let u = (k - stop + 1) as f32 / (swing + 1) as f32;
        base + Vec3::new(0.0, 10.0 * (std::f32::consts::PI * u).sin(), stride * u)
    }
}

#[test]
fn a_foot_that_stops_for_exactly_ten_frames_is_planted_on_exactly_those_frames() {
    // 30 fps: stops at [0, 10), [22, 32), [44, 54), ...; the right foot stays planted.
    let clip = figure(120, 30.0, |f, p| {
        p.foot(true, stepping(f, 12, 10, 30.0, 100.0));
    });
    let out = run(&clip, &AutotagSettings::default());
    let want: Vec<Range> = (0..6)
        .map(|c| r(22 * c, 22 * c + 10))
        .filter(|x| x.start < 120)
        .collect();
    assert_eq!(out.ranges(CONTACT_LEFT).unwrap(), want);
    assert_eq!(out.ranges(CONTACT_RIGHT).unwrap(), [r(0, 120)]);
    // Never airborne: one foot is always down.
    assert_eq!(out.ranges(AIRBORNE).unwrap(), []);
    // At 120 fps (speeds over 4 frames) the stops are found to within a frame.
    let clip = figure(480, 120.0, |f, p| {
        p.foot(true, stepping(f, 48, 40, 120.0, 100.0));
    });
    let got = run(&clip, &AutotagSettings::default());
    let got = got.ranges(CONTACT_LEFT).unwrap();
    assert_eq!(got.len(), 6, "{got:?}");
    for (c, g) in got.iter().enumerate() {
        let (a, b) = (88 * c as u32, 88 * c as u32 + 40);
        assert!(
            g.start.abs_diff(a) <= 1 && g.stop.abs_diff(b.min(480)) <= 1,
            "{g:?} vs [{a}, {b})"
        );
    }
}

#[test]
fn noise_between_the_enter_and_leave_thresholds_does_not_chatter() {
    // The left foot lands at frame 20 and stays. From frame 24 it jitters sideways (steps of 0.8,
    // 0.8, 0.3, 0.3 cm: every fourth frame moves 0.8 cm both before and after, about 25 cm/s, over
    // the 20 cm/s enter threshold and under the 30 cm/s leave one) while its height drifts between
    // 0 and 5 cm (across the 4 cm enter threshold, under the 7 cm leave one).
    let clip = figure(90, 30.0, |f, p| {
        if f < 20 {
            let u = f as f32 / 20.0;
            p.foot(true, Vec3::new(0.0, 20.0 * (1.0 - u), -40.0 * (1.0 - u)));
        } else if f >= 24 {
            let k = f - 24;
            let x = [0.8, 0.0, 0.3, 0.0][k % 4];
            let up = 2.5 * (1.0 - (std::f32::consts::TAU * k as f32 / 60.0).cos());
            p.foot(true, Vec3::new(x, up, 0.0));
        }
    });
    let mut settings = AutotagSettings::default();
    // The ground is where the foot lands.
    settings.params.contacts.ground_percentile = 0.0;
    let out = run(&clip, &settings);
    assert_eq!(out.ranges(CONTACT_LEFT).unwrap(), [r(20, 90)]);
    // Without hysteresis and minimum durations the same motion chatters: the test can tell.
    let c = &mut settings.params.contacts;
    c.leave_speed_cm_s = c.enter_speed_cm_s;
    c.leave_height_cm = c.enter_height_cm;
    c.min_gap_s = 0.0;
    c.min_contact_s = 0.0;
    let chatter = run(&clip, &settings);
    assert!(
        chatter.ranges(CONTACT_LEFT).unwrap().len() > 5,
        "{:?}",
        chatter.ranges(CONTACT_LEFT)
    );
}

#[test]
fn short_blips_are_dropped_and_short_gaps_closed() {
    // Left: planted, with a one-frame slip (2 cm, 60 cm/s) at frame 30: a one-frame gap, closed.
    // Right: swinging high until it lands at frame 20, touching the ground for two frames (8, 9)
    // on the way.
    let clip = figure(60, 30.0, |f, p| {
        if f == 30 {
            p.foot(true, Vec3::X * 2.0);
        }
        let z = 3.0 * f.min(20) as f32;
        let y = match f {
            8 | 9 => 0.0,
            f if f < 20 => 15.0,
            _ => 0.0,
        };
        let z = if f == 9 { 24.0 } else { z };
        p.foot(false, Vec3::new(0.0, y, z));
    });
    let out = run(&clip, &AutotagSettings::default());
    assert_eq!(out.ranges(CONTACT_LEFT).unwrap(), [r(0, 60)]);
    // Two frames = the default minimum contact (0.05 s at 30 fps, rounded): kept.
    assert_eq!(out.ranges(CONTACT_RIGHT).unwrap(), [r(8, 10), r(20, 60)]);
    let mut settings = AutotagSettings::default();
    settings.params.contacts.min_contact_s = 0.1;
    let out = run(&clip, &settings);
    assert_eq!(out.ranges(CONTACT_RIGHT).unwrap(), [r(20, 60)]);
    settings.params.contacts.min_gap_s = 0.0;
    let out = run(&clip, &settings);
    assert_eq!(out.ranges(CONTACT_LEFT).unwrap(), [r(0, 30), r(31, 60)]);
}

#[test]
fn the_ground_is_found_when_the_take_starts_in_the_air_or_on_a_step() {
    // First 40 frames: standing still on a 25 cm step (both feet); then stepping down to the floor
    // for the remaining 60 frames. A first-frame or minimum ground would fail one way or the other.
    let clip = figure(100, 30.0, |f, p| {
        let up = if f < 40 {
            25.0
        } else if f < 45 {
            25.0 - 5.0 * (f - 40) as f32
        } else {
            0.0
        };
        p.foot(
            true,
            Vec3::Y * up + Vec3::Z * if f < 40 { 0.0 } else { 30.0 },
        );
        p.foot(
            false,
            Vec3::Y * up + Vec3::Z * if f < 40 { 0.0 } else { 30.0 },
        );
    });
    let out = run(&clip, &AutotagSettings::default());
    assert_eq!(out.ranges(CONTACT_LEFT).unwrap(), [r(45, 100)]);
    // Starting in the air (a T-pose frame, then 20 frames of a held leg): the floor is the floor.
    let clip = figure(100, 30.0, |f, p| {
        if f < 20 {
            p.foot(true, Vec3::new(0.0, 40.0, 20.0));
        }
        if f == 0 {
            p.body(Vec3::Y * 30.0);
        }
    });
    let out = run(&clip, &AutotagSettings::default());
    assert_eq!(out.ranges(CONTACT_LEFT).unwrap(), [r(20, 100)]);
    assert_eq!(out.ranges(CONTACT_RIGHT).unwrap(), [r(1, 100)]);
}

#[test]
fn a_jump_is_airborne_while_both_feet_are_up() {
    // Both feet planted, then a 15-frame jump with a 30 cm parabola, then planted again.
    let (s, k) = (30usize, 15usize);
    let height = |f: usize| -> f32 {
        if f <= s || f >= s + k {
            0.0
        } else {
            let t = (f - s) as f32;
            4.0 * 30.0 * t * (k as f32 - t) / (k * k) as f32
        }
    };
    let clip = figure(80, 30.0, |f, p| p.body(Vec3::Y * height(f)));
    let out = run(&clip, &AutotagSettings::default());
    // Every frame of the flight has both feet more than 3 cm up (the first is 7.5 cm up).
    assert!((31..45).all(|f| height(f) > 3.0) && height(30) == 0.0 && height(45) == 0.0);
    assert_eq!(out.ranges(AIRBORNE).unwrap(), [r(31, 45)]);
    assert_eq!(out.ranges(CONTACT_LEFT).unwrap(), [r(0, 31), r(45, 80)]);
    assert_eq!(out.ranges(CONTACT_RIGHT).unwrap(), [r(0, 31), r(45, 80)]);
    // Walking (one foot always down) is never airborne: see the ten-frame stop test.
}

#[test]
fn a_root_accelerating_through_the_speed_bands_is_idle_then_walk_then_run() {
    // 0.5 m/s^2 from rest for 8 s at 30 fps: 0.35 m/s (idle/walk + hysteresis) at 0.7 s, 2.25 m/s
    // (walk/run + hysteresis) at 4.5 s. The centred average of a linear speed is the speed.
    let fps = 30.0;
    let clip = figure(241, fps, |f, p| {
        let t = f as f32 / fps;
        p.body(Vec3::Z * 0.5 * 50.0 * t * t);
    });
    let out = run(&clip, &AutotagSettings::default());
    let idle = out.ranges(IDLE).unwrap();
    let walk = out.ranges(WALK).unwrap();
    let run_ = out.ranges(RUN).unwrap();
    assert_eq!(idle.len(), 1);
    assert_eq!(walk.len(), 1);
    assert_eq!(run_.len(), 1);
    assert_eq!(idle[0].start, 0);
    assert!(idle[0].stop.abs_diff(21) <= 1, "{idle:?}");
    assert_eq!(walk[0].start, idle[0].stop);
    assert!(walk[0].stop.abs_diff(135) <= 1, "{walk:?}");
    assert_eq!(run_[0], r(walk[0].stop, 241));
    // The signal is in m/s and shows the thresholds.
    let s = out.signal("root horizontal speed").unwrap();
    assert_eq!(s.unit, "m/s");
    assert!((s.values[120] - 2.0).abs() < 0.01, "{}", s.values[120]);
    assert_eq!(s.thresholds.len(), 2);
    assert_eq!(s.thresholds[1].key, ThresholdKey::WalkRun);
}

#[test]
fn gait_states_partition_the_clip_and_hysteresis_holds_them() {
    // Speed wobbling +-0.04 m/s around 0.3 m/s never leaves the state it starts in; segments
    // shorter than 0.3 s merge away; every frame has exactly one state.
    let fps = 30.0;
    let clip = figure(150, fps, |f, p| {
        let t = f as f32 / fps;
        // 30 cm/s forward plus a 4 cm/s-amplitude wobble.
        let x = 30.0 * t
            + 4.0 / (std::f32::consts::TAU * 2.0) * (std::f32::consts::TAU * 2.0 * t).sin();
        p.body(Vec3::Z * x);
    });
    let out = run(&clip, &AutotagSettings::default());
    let mut covered = vec![0u8; 150];
    for tag in [IDLE, WALK, RUN] {
        for r in out.ranges(tag).unwrap() {
            for c in &mut covered[r.start as usize..r.stop as usize] {
                *c += 1;
            }
        }
    }
    assert!(covered.iter().all(|&c| c == 1), "{covered:?}");
    let changes = [IDLE, WALK, RUN]
        .iter()
        .map(|t| out.ranges(t).unwrap().len())
        .sum::<usize>();
    assert_eq!(changes, 1, "{:?}", out.proposals);
    // An idle character swaying its hips (3 cm at 1 Hz) is idle.
    let clip = figure(150, fps, |f, p| {
        let t = f as f32 / fps;
        p.p[HIPS].x += 3.0 * (std::f32::consts::TAU * t).sin();
    });
    let out = run(&clip, &AutotagSettings::default());
    assert_eq!(out.ranges(IDLE).unwrap(), [r(0, 150)]);
}

#[test]
fn turns_left_and_right_follow_the_yaw_rate() {
    // Straight 2 s, left 90 deg/s for 1 s, straight 2 s, right 90 deg/s for 1 s, straight 2 s.
    let fps = 30.0;
    let heading = |t: f32| -> f32 {
        let left = (t - 2.0).clamp(0.0, 1.0);
        let right = (t - 5.0).clamp(0.0, 1.0);
        90.0 * (left - right)
    };
    let clip = figure(241, fps, |f, p| {
        let h = heading(f as f32 / fps).to_radians();
        p.hips = Quat::from_rotation_y(h);
        // Rotate the body about the hips.
        let c = p.p[HIPS];
        for q in &mut p.p {
            *q = c + Quat::from_rotation_y(h) * (*q - c);
        }
    });
    let out = run(&clip, &AutotagSettings::default());
    let left = out.ranges(TURN_LEFT).unwrap();
    let right = out.ranges(TURN_RIGHT).unwrap();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(right.len(), 1, "{right:?}");
    // The 1 s window smears each edge by up to half a second.
    for (range, (a, b)) in [(left[0], (60, 90)), (right[0], (150, 180))] {
        assert!(range.start <= a && range.stop >= b, "{range:?}");
        assert!(range.start >= a - 15 && range.stop <= b + 15, "{range:?}");
    }
    let rate = out.signal("root yaw rate").unwrap();
    assert!((rate.values[75] - 90.0).abs() < 1.0, "{}", rate.values[75]);
    assert!(
        (rate.values[165] + 90.0).abs() < 1.0,
        "{}",
        rate.values[165]
    );
}

/// A figure raising both hands above its head for frames [30, 60) and bending its left elbow to
/// 90 degrees over [70, 90); the right hand moves fast over [100, 110).
fn gestures() -> Clip {
    figure(130, 30.0, |f, p| {
        if (30..60).contains(&f) {
            // Arms up, elbows nearly straight.
            p.p[L_FOREARM] = Vec3::new(12.0, 168.0, 0.0);
            p.p[R_FOREARM] = Vec3::new(-12.0, 168.0, 0.0);
            p.p[L_HAND] = Vec3::new(5.0, 190.0, 0.0);
            p.p[R_HAND] = Vec3::new(-5.0, 190.0, 0.0);
        }
        if (70..90).contains(&f) {
            // Elbow bent 90 degrees: the hand points forward from the elbow.
            p.p[L_HAND] = p.p[L_FOREARM] + Vec3::Z * 26.0;
        }
        if (100..110).contains(&f) {
            p.p[R_HAND].z += 4.0 * (f - 100) as f32; // 120 cm/s
        }
        if f >= 110 {
            p.p[R_HAND].z += 40.0;
        }
    })
}

fn rule(text: &str) -> AutotagSettings {
    parse_settings(&format!(r#"{{"version": 1, "rules": [{text}]}}"#)).unwrap()
}

#[test]
fn every_rule_signal_kind() {
    let clip = gestures();
    let cases = [
        // y relative to another joint: both hands above the head.
        (
            r#"{"tag": "HandsUp", "when": [
                {"signal": "y", "joint": "LeftHand", "relative_to": "Head", "above": 5, "leave": 0},
                {"signal": "y", "joint": "RightHand", "relative_to": "Head", "above": 5, "leave": 0}]}"#,
            vec![r(30, 60)],
        ),
        // Height above the floor.
        (
            r#"{"tag": "HandHigh", "when": [{"signal": "height", "joint": "LeftHand", "above": 150}]}"#,
            vec![r(30, 60)],
        ),
        // Height relative to a joint.
        (
            r#"{"tag": "HandOverHead", "when": [{"signal": "height", "joint": "LeftHand", "relative_to": "Head", "above": 0}]}"#,
            vec![r(30, 60)],
        ),
        // A coordinate: x of the left hand towards the middle.
        (
            r#"{"tag": "HandIn", "when": [{"signal": "x", "joint": "LeftHand", "below": 10}]}"#,
            vec![r(30, 60)],
        ),
        // z: the hand forward (bent elbow).
        (
            r#"{"tag": "HandForward", "when": [{"signal": "z", "joint": "LeftHand", "relative_to": "LeftForeArm", "above": 20}]}"#,
            vec![r(70, 90)],
        ),
        // Distance between two joints: hands together.
        (
            r#"{"tag": "HandsTogether", "when": [{"signal": "distance", "joint": "LeftHand", "to": "RightHand", "below": 15}]}"#,
            vec![r(30, 60)],
        ),
        // Bend of the elbow (LeftForeArm between LeftArm and LeftHand).
        (
            r#"{"tag": "ElbowBent", "when": [{"signal": "angle", "joint": "LeftForeArm", "above": 60}]}"#,
            vec![r(70, 90)],
        ),
        // Speed of a joint.
        (
            r#"{"tag": "FastHand", "when": [{"signal": "speed", "joint": "RightHand", "above": 70, "smooth_s": 0.1}]}"#,
            // The jumps into and out of the hands-up pose are fast too.
            vec![r(28, 32), r(58, 62), r(100, 110)],
        ),
    ];
    for (text, want) in cases {
        let settings = rule(text);
        let tag = settings.rules[0].tag.clone();
        let out = run(&clip, &settings);
        let got = out.ranges(&tag).unwrap();
        let ok = got.len() == want.len()
            && got
                .iter()
                .zip(&want)
                .all(|(g, w)| g.start.abs_diff(w.start) <= 1 && g.stop.abs_diff(w.stop) <= 1);
        assert!(ok, "{tag}: got {got:?}, want {want:?}");
        let s = out
            .signals
            .iter()
            .find(|s| s.tags == [tag.clone()])
            .unwrap();
        assert_eq!(s.values.len(), 130);
        assert_eq!(
            s.thresholds[0].key,
            ThresholdKey::Rule {
                rule: 0,
                condition: 0
            }
        );
    }
    // The angle is 0 straight and 90 bent.
    let settings =
        rule(r#"{"tag": "E", "when": [{"signal": "angle", "joint": "LeftForeArm", "above": 60}]}"#);
    let out = run(&clip, &settings);
    let angle = &out.signals.last().unwrap().values;
    assert!(
        angle[10].abs() < 0.1 && (angle[80] - 90.0).abs() < 0.1,
        "{} {}",
        angle[10],
        angle[80]
    );
}

#[test]
fn rules_with_missing_joints_are_skipped_with_a_warning_and_min_duration_applies() {
    let clip = gestures();
    let settings = parse_settings(
        r#"{"version": 1, "rules": [
            {"tag": "Tail", "when": [{"signal": "y", "joint": "Tail", "above": 0}]},
            {"tag": "Brief", "min_duration_s": 1.5, "when": [{"signal": "height", "joint": "LeftHand", "above": 150}]}]}"#,
    )
    .unwrap();
    let out = run(&clip, &settings);
    assert!(out.ranges("Tail").is_none());
    assert_eq!(out.warnings.len(), 1);
    assert!(out.warnings[0].contains("Tail") && out.warnings[0].contains("handmade"));
    // 30 frames (1 s) is shorter than 1.5 s: dropped.
    assert_eq!(out.ranges("Brief").unwrap(), []);
}

#[test]
fn changing_a_threshold_reuses_the_measured_signals() {
    let clip = figure(120, 30.0, |f, p| {
        p.foot(true, stepping(f, 12, 10, 30.0, 100.0));
    });
    let prepared = Prepared::new(&clip).unwrap();
    let mut settings = AutotagSettings::default();
    let a = prepared.autotag(&settings, None).unwrap();
    let m1 = prepared.measured(&settings);
    settings
        .set_threshold(ThresholdKey::ContactSpeed, 150.0, 200.0)
        .unwrap();
    let m2 = prepared.measured(&settings);
    assert!(Arc::ptr_eq(&m1, &m2), "a threshold change re-measured");
    let b = prepared.autotag(&settings, None).unwrap();
    assert_ne!(a.ranges(CONTACT_LEFT), b.ranges(CONTACT_LEFT));
    // The plotted thresholds follow the settings; the values are the cached ones.
    let speed = b.signal("left foot speed").unwrap();
    assert_eq!(
        (speed.thresholds[0].enter, speed.thresholds[0].leave),
        (150.0, 200.0)
    );
    assert!(Arc::ptr_eq(
        &speed.values,
        &a.signal("left foot speed").unwrap().values
    ));
    // A window change measures again.
    settings.params.contacts.speed_window_s = 0.1;
    assert!(!Arc::ptr_eq(&m1, &prepared.measured(&settings)));
    // An invalid threshold is refused and changes nothing.
    let before = settings.clone();
    let e = settings
        .set_threshold(ThresholdKey::ContactHeight, 5.0, 1.0)
        .unwrap_err();
    assert_eq!(e.path, "params.contacts.leave_height_cm");
    assert_eq!(settings, before);
}

#[test]
fn only_requested_generators_need_their_joints() {
    let mut clip = figure(40, 30.0, |f, p| p.body(Vec3::Z * f as f32));
    for n in &mut clip.skeleton.names {
        if n.contains("Foot") || n.contains("Toe") {
            *n = n.replace("Foot", "Paw").replace("ToeBase", "Claw");
        }
    }
    let settings = AutotagSettings::default();
    let e = autotag(&clip, &settings, None).unwrap_err();
    assert!(
        matches!(e, AutotagError::NoFootJoints { side: "left", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("handmade"), "{e}");
    let only = [WALK.to_owned(), TURN_LEFT.to_owned()];
    let out = autotag(&clip, &settings, Some(&only[..])).unwrap();
    let tags: Vec<&str> = out.proposals.iter().map(|p| p.tag.as_str()).collect();
    assert_eq!(tags, [WALK, TURN_LEFT]);
    // Overrides name the paws.
    let mut settings = AutotagSettings::default();
    settings.params.contacts.left_ankle = Some("LeftPaw".into());
    settings.params.contacts.right_ankle = Some("RightPaw".into());
    let out = autotag(&clip, &settings, None).unwrap();
    assert!(out.ranges(CONTACT_LEFT).is_some());
    // A bad root override names the parameter.
    settings.params.locomotion.root_joint = Some("Nope".into());
    let e = autotag(&clip, &settings, Some(&only[..])).unwrap_err();
    assert!(e.to_string().contains("locomotion.root_joint"), "{e}");
}

#[test]
fn the_travelling_root_is_the_joint_that_carries_the_translation() {
    // Bandai-like: a fixed root above Hips; Hips carries the motion.
    let mut clip = figure(40, 30.0, |f, p| p.body(Vec3::Z * 3.0 * f as f32));
    let n = clip.joint_count();
    let mut names = vec!["joint_Root".to_owned()];
    names.extend(clip.skeleton.names.iter().cloned());
    let mut parents = vec![None];
    parents.extend(
        clip.skeleton
            .parents
            .iter()
            .map(|p| Some(p.map_or(0, |q| q + 1))),
    );
    let mut rest = vec![Transform::IDENTITY];
    rest.extend(clip.skeleton.rest.iter().copied());
    let mut rot = Vec::new();
    let mut tr = Vec::new();
    for f in 0..clip.frame_count {
        rot.push(Quat::IDENTITY);
        tr.push(Vec3::ZERO);
        rot.extend_from_slice(&clip.rotations[f * n..(f + 1) * n]);
        tr.extend_from_slice(&clip.translations[f * n..(f + 1) * n]);
    }
    clip.skeleton = Skeleton::new(names, parents, rest);
    clip.rotations = rot;
    clip.translations = tr;
    clip.scales = vec![Vec3::ONE; clip.frame_count * (n + 1)];
    let prepared = Prepared::new(&clip).unwrap();
    assert_eq!(prepared.skeleton.names[prepared.auto_root()], "Hips");
    let out = prepared.autotag(&AutotagSettings::default(), None).unwrap();
    // 3 cm per frame at 30 fps = 0.9 m/s: walking.
    assert_eq!(out.ranges(WALK).unwrap(), [r(0, 40)]);
}

#[test]
fn hand_made_figure_sanity() {
    // The figure's joints are where FIGURE says when standing.
    let clip = figure(2, 30.0, |_, _| {});
    let m = Motion::new(&clip).unwrap();
    for (j, (_, _, p)) in FIGURE.iter().enumerate() {
        assert!((m.at(1, j) - Vec3::from(*p)).length() < 1e-4);
    }
    assert_eq!(m.at(0, HEAD).y, 160.0);
}

#[test]
fn empty_short_and_broken_clips_never_panic() {
    let settings = AutotagSettings::default();
    for frames in [0, 1, 2] {
        let clip = figure(frames, 30.0, |_, _| {});
        let out = run(&clip, &settings);
        assert_eq!(out.proposals.len(), BUILTIN_TAGS.len());
        assert!(out.signals.iter().all(|s| s.values.len() == frames));
        if frames > 0 {
            assert_eq!(out.ranges(IDLE).unwrap(), [r(0, frames as u32)]);
        }
    }
    let mut clip = figure(10, 30.0, |_, _| {});
    clip.translations[7].y = f32::NAN;
    let e = autotag(&clip, &settings, None).unwrap_err();
    assert!(
        e.to_string().contains("handmade") && e.to_string().contains("not finite"),
        "{e}"
    );
    let mut clip = figure(10, 30.0, |_, _| {});
    clip.unit_cm = 0.0;
    assert!(autotag(&clip, &settings, None).is_err());
    // A glTF without joints loads as a clip of none: refused, naming it (it panicked).
    let none = Clip {
        name: "empty".into(),
        skeleton: Skeleton::new(Vec::new(), Vec::new(), Vec::new()),
        fps: 30.0,
        frame_count: 1,
        unit_cm: 1.0,
        rotations: Vec::new(),
        translations: Vec::new(),
        scales: Vec::new(),
    };
    let e = autotag(&none, &settings, None).unwrap_err().to_string();
    assert!(
        e.contains("empty") && e.contains("no") && e.contains("joint"),
        "{e}"
    );
}

#[test]
fn rule_files_past_the_limits_are_refused_at_their_place() {
    use crate::core::limits::{MAX_CONDITIONS, MAX_RULES};
    let condition = r#"{"signal": "height", "joint": "Hips", "above": 0}"#;
    let rule = |tag: &str, n: usize| {
        format!(
            r#"{{"tag": "{tag}", "when": [{}]}}"#,
            vec![condition; n].join(",")
        )
    };
    let rules = |n: usize, conditions: usize| {
        (0..n)
            .map(|i| rule(&format!("R{i}"), conditions))
            .collect::<Vec<_>>()
            .join(",")
    };
    let doc = |body: String| format!(r#"{{"version": 1, "rules": [{body}]}}"#);
    // At the limits: read.
    let ok = parse_settings(&doc(rules(MAX_RULES, 1))).unwrap();
    assert_eq!(ok.rules.len(), MAX_RULES);
    parse_settings(&doc(rules(1, MAX_CONDITIONS))).unwrap();
    // Past them: refused, naming the place and the limit.
    let e = parse_settings(&doc(rules(MAX_RULES + 1, 1))).unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("rules") && m.contains(&format!("at most {MAX_RULES}")),
        "{m}"
    );
    let e = parse_settings(&doc(rules(2, MAX_CONDITIONS + 1))).unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("rules[0].when") && m.contains(&format!("at most {MAX_CONDITIONS}")),
        "{m}"
    );
    // Settings built in code are held to the same limits.
    let mut big = ok.clone();
    big.rules.push(big.rules[0].clone());
    big.rules.last_mut().unwrap().tag = "Extra".into();
    assert!(big.validate().unwrap_err().to_string().contains("at most"));
    let mut long = parse_settings(&doc(rules(1, 1))).unwrap();
    long.rules[0].when = vec![long.rules[0].when[0].clone(); MAX_CONDITIONS + 1];
    assert!(
        long.validate()
            .unwrap_err()
            .to_string()
            .contains("rules[0].when")
    );
}
