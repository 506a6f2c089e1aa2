//! The demo project: procedural humanoid takes (walking, running, idling, limping, tired, with
//! transitions and a turn) on a CMU-like skeleton, and tags derived from the motion itself
//! (gait segments, foot contacts measured on the generated poses).
//!
//! The generated files live in `assets/demo/` and are embedded in the binary; a test checks that
//! they are what this generator produces (regenerate with `UPDATE_ASSETS=1 cargo test demo_assets`).

use std::f32::consts::{PI, TAU};

use glam::{Quat, Vec3};

use crate::core::anim::skeleton::EndSite;
use crate::core::anim::{Clip, Skeleton, Transform, local_to_model};
use crate::core::tags::{ClipInfo, Range, SavedQuery, Tag, TagDocument};

/// Frame rate of every demo clip.
pub const DEMO_FPS: f32 = 30.0;

/// Gait keys a demo take is scripted with; parameters crossfade between consecutive segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gait {
    Idle,
    Walk,
    Run,
}

/// Style modifiers that apply to a whole take.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// Body scale: 1.0 for the "male" performer, 0.93 for the "female" one.
    pub body_scale: f32,
    /// 0..1: slower, hunched, smaller arm swing.
    pub tired: f32,
    /// 0..1: the right leg is favoured (short stance, stiff knee).
    pub limp: f32,
    /// Turn rate in degrees per second while moving.
    pub turn_deg_per_s: f32,
}

/// One scripted take.
#[derive(Debug, Clone)]
pub struct TakeScript {
    pub name: &'static str,
    pub male: bool,
    pub style: Style,
    /// Segments: gait and duration in seconds.
    pub segments: Vec<(Gait, f32)>,
}

/// The scripts of the demo takes.
pub fn demo_scripts() -> Vec<TakeScript> {
    let male = Style {
        body_scale: 1.0,
        ..Style::default()
    };
    let female = Style {
        body_scale: 0.93,
        ..Style::default()
    };
    use Gait::*;
    vec![
        TakeScript {
            name: "walk_male_01",
            male: true,
            style: male,
            segments: vec![(Idle, 1.0), (Walk, 7.0)],
        },
        TakeScript {
            name: "run_male_01",
            male: true,
            style: male,
            segments: vec![(Run, 6.0)],
        },
        TakeScript {
            name: "idle_female_01",
            male: false,
            style: female,
            segments: vec![(Idle, 5.0)],
        },
        TakeScript {
            name: "walk_to_run_female_01",
            male: false,
            style: female,
            segments: vec![(Walk, 3.5), (Run, 4.0)],
        },
        TakeScript {
            name: "tired_run_male_02",
            male: true,
            style: Style { tired: 1.0, ..male },
            segments: vec![(Run, 4.0), (Walk, 3.0)],
        },
        TakeScript {
            name: "limp_walk_female_02",
            male: false,
            style: Style {
                limp: 1.0,
                ..female
            },
            segments: vec![(Walk, 7.0)],
        },
        TakeScript {
            name: "tired_walk_female_03",
            male: false,
            style: Style {
                tired: 1.0,
                ..female
            },
            segments: vec![(Walk, 6.0)],
        },
        TakeScript {
            name: "run_stop_male_03",
            male: true,
            style: male,
            segments: vec![(Run, 3.0), (Walk, 1.5), (Idle, 2.5)],
        },
        TakeScript {
            name: "walk_turn_left_male_04",
            male: true,
            style: Style {
                turn_deg_per_s: 25.0,
                ..male
            },
            segments: vec![(Walk, 6.0)],
        },
        TakeScript {
            name: "limp_run_male_05",
            male: true,
            style: Style {
                limp: 0.7,
                tired: 0.5,
                ..male
            },
            segments: vec![(Walk, 2.0), (Run, 4.0)],
        },
    ]
}

// Joint indices of the demo skeleton.
const HIPS: usize = 0;
const L_UPLEG: usize = 2;
const L_LEG: usize = 3;
const L_FOOT: usize = 4;
const L_TOE: usize = 5;
const R_UPLEG: usize = 7;
const R_LEG: usize = 8;
const R_FOOT: usize = 9;
const R_TOE: usize = 10;
const LOWER_BACK: usize = 11;
const SPINE: usize = 12;
const SPINE1: usize = 13;
const NECK: usize = 14;
const HEAD: usize = 15;
const L_ARM: usize = 17;
const L_FOREARM: usize = 18;
const R_ARM: usize = 21;
const R_FOREARM: usize = 22;

/// A CMU-like humanoid, Y up, facing +Z, in centimetres, scaled by `s`.
pub fn demo_skeleton(s: f32) -> Skeleton {
    let joints: [(&str, Option<usize>, [f32; 3]); 24] = [
        ("Hips", None, [0.0, 0.0, 0.0]),
        ("LHipJoint", Some(HIPS), [0.0, 0.0, 0.0]),
        ("LeftUpLeg", Some(1), [9.5, -6.0, 0.0]),
        ("LeftLeg", Some(L_UPLEG), [0.0, -42.0, 0.0]),
        ("LeftFoot", Some(L_LEG), [0.0, -41.0, 0.0]),
        ("LeftToeBase", Some(L_FOOT), [0.0, -6.0, 13.0]),
        ("RHipJoint", Some(HIPS), [0.0, 0.0, 0.0]),
        ("RightUpLeg", Some(6), [-9.5, -6.0, 0.0]),
        ("RightLeg", Some(R_UPLEG), [0.0, -42.0, 0.0]),
        ("RightFoot", Some(R_LEG), [0.0, -41.0, 0.0]),
        ("RightToeBase", Some(R_FOOT), [0.0, -6.0, 13.0]),
        ("LowerBack", Some(HIPS), [0.0, 6.0, -1.0]),
        ("Spine", Some(LOWER_BACK), [0.0, 12.0, 0.0]),
        ("Spine1", Some(SPINE), [0.0, 12.0, 0.0]),
        ("Neck", Some(SPINE1), [0.0, 15.0, 0.0]),
        ("Head", Some(NECK), [0.0, 9.0, 1.0]),
        ("LeftShoulder", Some(SPINE1), [4.0, 12.0, 0.0]),
        ("LeftArm", Some(16), [14.0, 0.0, 0.0]),
        ("LeftForeArm", Some(L_ARM), [0.0, -28.0, 0.0]),
        ("LeftHand", Some(L_FOREARM), [0.0, -25.0, 0.0]),
        ("RightShoulder", Some(SPINE1), [-4.0, 12.0, 0.0]),
        ("RightArm", Some(20), [-14.0, 0.0, 0.0]),
        ("RightForeArm", Some(R_ARM), [0.0, -28.0, 0.0]),
        ("RightHand", Some(R_FOREARM), [0.0, -25.0, 0.0]),
    ];
    let end = |parent: usize, offset: [f32; 3]| EndSite {
        parent,
        offset: Vec3::from(offset) * s,
    };
    Skeleton {
        names: joints.iter().map(|j| j.0.to_owned()).collect(),
        parents: joints.iter().map(|j| j.1).collect(),
        rest: joints
            .iter()
            .map(|j| Transform {
                translation: Vec3::from(j.2) * s,
                ..Transform::IDENTITY
            })
            .collect(),
        end_sites: vec![
            end(L_TOE, [0.0, 0.0, 5.0]),
            end(R_TOE, [0.0, 0.0, 5.0]),
            end(HEAD, [0.0, 14.0, 0.0]),
            end(19, [0.0, -9.0, 0.0]),
            end(23, [0.0, -9.0, 0.0]),
        ],
    }
}

/// Gait parameters; every field blends linearly between gaits.
#[derive(Debug, Clone, Copy)]
struct GaitParams {
    speed_cm_per_s: f32,
    cycles_per_s: f32,
    /// Fraction of a cycle each foot is on the ground.
    stance: f32,
    knee_deg: f32,
    arm_deg: f32,
    elbow_deg: f32,
    lean_deg: f32,
    flight_cm: f32,
}

fn params(g: Gait) -> GaitParams {
    match g {
        Gait::Idle => GaitParams {
            speed_cm_per_s: 0.0,
            cycles_per_s: 0.25,
            stance: 1.0,
            knee_deg: 0.0,
            arm_deg: 0.0,
            elbow_deg: 8.0,
            lean_deg: 0.0,
            flight_cm: 0.0,
        },
        Gait::Walk => GaitParams {
            speed_cm_per_s: 140.0,
            cycles_per_s: 1.0,
            stance: 0.6,
            knee_deg: 55.0,
            arm_deg: 18.0,
            elbow_deg: 15.0,
            lean_deg: 3.0,
            flight_cm: 0.0,
        },
        Gait::Run => GaitParams {
            speed_cm_per_s: 360.0,
            cycles_per_s: 1.4,
            stance: 0.38,
            knee_deg: 95.0,
            arm_deg: 32.0,
            elbow_deg: 85.0,
            lean_deg: 10.0,
            flight_cm: 5.0,
        },
    }
}

fn lerp_params(a: GaitParams, b: GaitParams, w: f32) -> GaitParams {
    let l = |x: f32, y: f32| x + (y - x) * w;
    GaitParams {
        speed_cm_per_s: l(a.speed_cm_per_s, b.speed_cm_per_s),
        cycles_per_s: l(a.cycles_per_s, b.cycles_per_s),
        stance: l(a.stance, b.stance),
        knee_deg: l(a.knee_deg, b.knee_deg),
        arm_deg: l(a.arm_deg, b.arm_deg),
        elbow_deg: l(a.elbow_deg, b.elbow_deg),
        lean_deg: l(a.lean_deg, b.lean_deg),
        flight_cm: l(a.flight_cm, b.flight_cm),
    }
}

/// Crossfade time between scripted segments, in seconds.
const BLEND_S: f32 = 0.8;

/// Gait parameters at time `t`, and the segment (index) and transition state there.
fn params_at(script: &TakeScript, t: f32) -> (GaitParams, usize, bool) {
    let mut start = 0.0;
    for (i, &(gait, dur)) in script.segments.iter().enumerate() {
        let end = start + dur;
        if t < end || i + 1 == script.segments.len() {
            // Blend into the next segment over the last BLEND_S/2 and out of the previous one over
            // the first BLEND_S/2.
            let p = params(gait);
            if i + 1 < script.segments.len() && t > end - BLEND_S / 2.0 {
                let w = (t - (end - BLEND_S / 2.0)) / BLEND_S;
                return (
                    lerp_params(p, params(script.segments[i + 1].0), smooth(w)),
                    i,
                    true,
                );
            }
            if i > 0 && t < start + BLEND_S / 2.0 {
                let w = 0.5 + (t - start) / BLEND_S;
                return (
                    lerp_params(params(script.segments[i - 1].0), p, smooth(w)),
                    i,
                    true,
                );
            }
            return (p, i, false);
        }
        start = end;
    }
    (params(Gait::Idle), 0, false)
}

fn smooth(w: f32) -> f32 {
    let w = w.clamp(0.0, 1.0);
    w * w * (3.0 - 2.0 * w)
}

/// Generates one take: the clip, the per-frame segment index and transition flags.
pub fn generate_take(script: &TakeScript) -> (Clip, Vec<(usize, bool)>) {
    let st = script.style;
    let skeleton = demo_skeleton(st.body_scale);
    let n = skeleton.len();
    let total_s: f32 = script.segments.iter().map(|s| s.1).sum();
    let frames = (total_s * DEMO_FPS).round() as usize + 1;
    let mut rotations = Vec::with_capacity(frames * n);
    let mut translations = Vec::with_capacity(frames * n);
    let mut per_frame = Vec::with_capacity(frames);
    let mut phase = 0.0f32;
    let mut heading = 0.0f32;
    let mut pos = Vec3::ZERO;
    let dt = 1.0 / DEMO_FPS;
    let deg = |d: f32| d.to_radians();
    for f in 0..frames {
        let t = f as f32 * dt;
        let (mut p, seg, transition) = params_at(script, t);
        per_frame.push((seg, transition));
        // Style modifiers.
        p.speed_cm_per_s *= 1.0 - 0.2 * st.tired - 0.25 * st.limp;
        p.cycles_per_s *= 1.0 - 0.1 * st.tired;
        p.arm_deg *= 1.0 - 0.4 * st.tired;
        p.lean_deg += 9.0 * st.tired;
        let moving = (p.speed_cm_per_s / 140.0).min(1.0);
        let mut pose = skeleton.rest.clone();
        // Legs: phase 0 = left leg passing under the body moving forward.
        // Legs. Each leg's cycle starts at heel strike with the leg forward; during stance the hip
        // sweeps back linearly at the speed that keeps the planted foot still under the moving
        // body (amplitude from speed, stance time and leg length), during swing it comes forward
        // with the knee bent. The ankle keeps the foot flat while planted.
        let leg_len = 83.0 * st.body_scale;
        let cycle_s = 1.0 / p.cycles_per_s.max(1e-3);
        let leg = |pose: &mut Vec<Transform>,
                   joints: [usize; 4],
                   u: f32,
                   stance: f32,
                   knee_scale: f32| {
            let [up, knee, foot, toe] = joints;
            let stance = stance.clamp(0.05, 1.0);
            // Half the distance the body travels during stance, as a fraction of the leg length:
            // the planted foot's offset from the hip goes linearly from +reach to -reach.
            let reach = (p.speed_cm_per_s * stance * cycle_s / (2.0 * leg_len)).min(0.8);
            let amp = reach.asin();
            let (hip, knee_flex) = if u < stance {
                let s = u / stance;
                ((reach * (1.0 - 2.0 * s)).asin(), deg(4.0))
            } else {
                let s = (u - stance) / (1.0 - stance).max(1e-3);
                (
                    -amp + 2.0 * amp * smooth(s),
                    deg(4.0) + deg(p.knee_deg * knee_scale) * (PI * s).sin(),
                )
            };
            let knee_flex = knee_flex * moving.max(0.15);
            let flat = knee_flex - hip;
            let ankle = if u < stance { flat } else { 0.5 * flat };
            pose[up].rotation = Quat::from_rotation_x(-hip);
            pose[knee].rotation = Quat::from_rotation_x(knee_flex);
            pose[foot].rotation = Quat::from_rotation_x(-ankle);
            pose[toe].rotation =
                Quat::from_rotation_x(if u < stance { 0.0 } else { deg(10.0 * moving) });
            hip
        };
        let u = phase / TAU;
        let right_stance = p.stance * (1.0 - 0.35 * st.limp);
        let hip_l = leg(&mut pose, [L_UPLEG, L_LEG, L_FOOT, L_TOE], u, p.stance, 1.0);
        let hip_r = leg(
            &mut pose,
            [R_UPLEG, R_LEG, R_FOOT, R_TOE],
            (u + 0.5) % 1.0,
            right_stance,
            1.0 - 0.7 * st.limp,
        );
        // Torso: lean, counter-rotation, breathing, head droop when tired.
        let breathe = (TAU * 0.3 * t).sin();
        pose[LOWER_BACK].rotation = Quat::from_rotation_x(deg(p.lean_deg * 0.5 + 0.8 * breathe))
            * Quat::from_rotation_y(-0.25 * (hip_l - hip_r) * 0.5)
            * Quat::from_rotation_z(deg(4.0 * st.limp * phase.cos()));
        pose[SPINE].rotation = Quat::from_rotation_x(deg(p.lean_deg * 0.3));
        pose[SPINE1].rotation = Quat::from_rotation_x(deg(p.lean_deg * 0.2 + 0.5 * breathe));
        pose[NECK].rotation = Quat::from_rotation_x(deg(-p.lean_deg * 0.4 + 12.0 * st.tired));
        pose[HEAD].rotation =
            Quat::from_rotation_y(deg(6.0 * (TAU * 0.11 * t).sin() * (1.0 - moving)));
        // Arms: swing against the same-side leg, elbows bent more when running.
        // Arms swing with the opposite leg: forward while it is forward.
        let arm = |pose: &mut Vec<Transform>, a: usize, fa: usize, opposite_hip: f32, side: f32| {
            let swing = (opposite_hip / 0.5).clamp(-1.2, 1.2);
            pose[a].rotation = Quat::from_rotation_x(-deg(p.arm_deg * swing))
                * Quat::from_rotation_z(deg(side * 6.0));
            pose[fa].rotation =
                Quat::from_rotation_x(-deg(p.elbow_deg + 0.3 * p.arm_deg * swing.max(0.0)));
        };
        arm(&mut pose, L_ARM, L_FOREARM, hip_r, 1.0);
        arm(&mut pose, R_ARM, R_FOREARM, hip_l, -1.0);
        // Root: heading, position on the ground plane, hip bob; height is set from the feet below.
        pose[HIPS].rotation =
            Quat::from_rotation_y(heading) * Quat::from_rotation_z(deg(3.0 * moving * phase.sin()));
        pose[HIPS].translation = pos;
        let lowest = lowest_foot_y(&skeleton, &pose);
        // Airborne between one foot's toe-off and the other's heel strike (running only).
        let half = (phase / TAU) % 0.5;
        let flight = if p.stance < 0.5 && half >= p.stance {
            p.flight_cm * (PI * (half - p.stance) / (0.5 - p.stance)).sin()
        } else {
            0.0
        };
        pose[HIPS].translation.y = -lowest + flight + 0.5;
        for tr in &pose {
            rotations.push(tr.rotation);
            translations.push(tr.translation);
        }
        // Integrate.
        phase = (phase + TAU * p.cycles_per_s * dt) % TAU;
        heading += deg(st.turn_deg_per_s) * moving * dt;
        pos += Quat::from_rotation_y(heading) * Vec3::Z * p.speed_cm_per_s * dt;
    }
    // Hemisphere continuity per joint.
    for j in 0..n {
        for f in 1..frames {
            let prev = rotations[(f - 1) * n + j];
            let cur = &mut rotations[f * n + j];
            if prev.dot(*cur) < 0.0 {
                *cur = -*cur;
            }
        }
    }
    let clip = Clip {
        name: script.name.to_owned(),
        skeleton,
        fps: DEMO_FPS,
        frame_count: frames,
        unit_cm: 1.0,
        rotations,
        translations,
        scales: vec![Vec3::ONE; frames * n],
    };
    (clip, per_frame)
}

/// Model-space transforms of a pose.
fn model_pose(skeleton: &Skeleton, local: &[Transform]) -> Vec<Transform> {
    let mut model = vec![Transform::IDENTITY; local.len()];
    local_to_model(skeleton, local, &mut model).expect("the demo skeleton is valid");
    model
}

fn lowest_foot_y(skeleton: &Skeleton, local: &[Transform]) -> f32 {
    let mut l = local.to_vec();
    l[HIPS].translation.y = 0.0;
    let m = model_pose(skeleton, &l);
    [L_FOOT, L_TOE, R_FOOT, R_TOE]
        .iter()
        .map(|&j| m[j].translation.y)
        .fold(f32::INFINITY, f32::min)
}

/// Height (cm) under which a foot or its toe counts as planted.
const CONTACT_CM: f32 = 2.5;

/// Frames where each foot is planted: foot or toe within [`CONTACT_CM`] of the ground and the foot
/// moving slower than 40 cm/s horizontally.
fn contacts(clip: &Clip) -> [Vec<Range>; 2] {
    let n = clip.joint_count();
    let mut out = [Vec::new(), Vec::new()];
    let mut prev: Option<Vec<Transform>> = None;
    let mut open: [Option<u32>; 2] = [None, None];
    let mut local = vec![Transform::IDENTITY; n];
    for f in 0..clip.frame_count {
        clip.copy_pose(f, &mut local);
        let m = model_pose(&clip.skeleton, &local);
        for (side, (foot, toe)) in [(L_FOOT, L_TOE), (R_FOOT, R_TOE)].into_iter().enumerate() {
            let low = m[foot].translation.y.min(m[toe].translation.y);
            let speed = prev.as_ref().map_or(0.0, |p| {
                let d = m[foot].translation - p[foot].translation;
                Vec3::new(d.x, 0.0, d.z).length() * clip.fps
            });
            let down = low < CONTACT_CM && speed < 40.0;
            match (down, open[side]) {
                (true, None) => open[side] = Some(f as u32),
                (false, Some(s)) => {
                    out[side].push(Range::new(s, f as u32));
                    open[side] = None;
                }
                _ => {}
            }
        }
        prev = Some(m);
    }
    for side in 0..2 {
        if let Some(s) = open[side] {
            out[side].push(Range::new(s, clip.frame_count as u32));
        }
    }
    out
}

/// Tag names of the demo project, with colours, in lane order.
pub const DEMO_TAGS: [(&str, [u8; 3]); 12] = [
    ("Male", [52, 101, 164]),
    ("Female", [173, 127, 168]),
    ("Walking", [78, 154, 6]),
    ("Running", [204, 0, 0]),
    ("Idle", [136, 138, 133]),
    ("Tired", [193, 125, 17]),
    ("Limping", [117, 80, 123]),
    ("Injured", [164, 0, 0]),
    ("locomotion:Transition", [237, 212, 0]),
    ("locomotion:Turn", [6, 152, 154]),
    ("contact:LeftFootDown", [114, 159, 207]),
    ("contact:RightFootDown", [252, 175, 62]),
];

/// Saved queries of the demo project.
pub const DEMO_QUERIES: [(&str, &str); 5] = [
    (
        "tired or limping male runners",
        "Running & Male & (Tired | Limping)",
    ),
    ("tired walkers", "Walking & Tired"),
    (
        "footsteps while running",
        "Running & (contact:LeftFootDown | contact:RightFootDown)",
    ),
    (
        "healthy locomotion",
        "(Walking | Running) - Injured - Tired",
    ),
    (
        "both feet planted",
        "contact:LeftFootDown & contact:RightFootDown",
    ),
];

/// The whole demo: clips and the tag document over them (clip sources `NAME.bvh`).
pub fn demo_project() -> (Vec<Clip>, TagDocument) {
    let mut clips = Vec::new();
    let mut tags: Vec<Tag> = DEMO_TAGS
        .iter()
        .map(|(name, color)| Tag {
            color: Some(*color),
            ..Tag::new((*name).to_owned())
        })
        .collect();
    let mut infos = Vec::new();
    for (c, script) in demo_scripts().iter().enumerate() {
        let (clip, per_frame) = generate_take(script);
        let frames = clip.frame_count as u32;
        let c = c as u32;
        // Clips come in order, so each list is appended at the end of its tag's buffer.
        let mut add = |tag: usize, r: Range| {
            let appended = tags[tag].ranges.push_range(c, r);
            debug_assert!(appended, "clips in order");
        };
        add(if script.male { 0 } else { 1 }, Range::new(0, frames));
        // Gait segments: a frame belongs to its segment's gait tag; crossfades are transitions.
        let mut f = 0usize;
        while f < per_frame.len() {
            let (seg, _) = per_frame[f];
            let mut g = f;
            while g < per_frame.len() && per_frame[g].0 == seg {
                g += 1;
            }
            let tag = match script.segments[seg].0 {
                Gait::Walk => 2,
                Gait::Run => 3,
                Gait::Idle => 4,
            };
            add(tag, Range::new(f as u32, g as u32));
            f = g;
        }
        let mut f = 0usize;
        while f < per_frame.len() {
            if per_frame[f].1 {
                let mut g = f;
                while g < per_frame.len() && per_frame[g].1 {
                    g += 1;
                }
                add(8, Range::new(f as u32, g as u32));
                f = g;
            } else {
                f += 1;
            }
        }
        if script.style.tired > 0.0 {
            add(5, Range::new(0, frames));
        }
        if script.style.limp > 0.0 {
            add(6, Range::new(0, frames));
            add(7, Range::new(0, frames));
        }
        if script.style.turn_deg_per_s != 0.0 {
            add(9, Range::new(0, frames));
        }
        let [left, right] = contacts(&clip);
        for r in left {
            add(10, r);
        }
        for r in right {
            add(11, r);
        }
        infos.push(ClipInfo {
            name: clip.name.clone(),
            frames,
            fps: clip.fps,
            source: Some(format!("{}.bvh", clip.name)),
            unit_cm: None,
        });
        clips.push(clip);
    }
    for t in &mut tags {
        t.ranges
            .rebuild(|c, list| crate::core::doc::canonicalize(list, infos[c as usize].frames));
    }
    let doc = TagDocument {
        clips: infos,
        tags,
        queries: DEMO_QUERIES
            .iter()
            .map(|(n, e)| SavedQuery {
                name: (*n).to_owned(),
                expr: (*e).to_owned(),
            })
            .collect(),
        ..Default::default()
    };
    (clips, doc)
}

/// The demo files: `(file name, contents)` for each clip's BVH and the project JSON
/// `demo.taglane.json`.
pub fn demo_files() -> Vec<(String, String)> {
    let (clips, doc) = demo_project();
    let mut files: Vec<(String, String)> = clips
        .iter()
        .map(|c| (format!("{}.bvh", c.name), crate::core::anim::write_bvh(c)))
        .collect();
    let json = doc.to_json_string().expect("the demo document is valid");
    files.push(("demo.taglane.json".to_owned(), json));
    files
}

/// A large synthetic tag document for benchmarks and stress tests: `clips` clips of 600 to 1,400
/// frames at 30 fps, `tags` tags named `tag000`, `ns1:tag001`, ... (every fifth in a namespace), and
/// on each clip about `ranges_per_tag` ranges per tag (0 to twice that, random), reproducible from
/// `seed`.
pub fn synthetic_document(
    clips: usize,
    tags: usize,
    ranges_per_tag: usize,
    seed: u64,
) -> TagDocument {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407)
        | 1;
    let mut next = move |n: u64| -> u64 {
        // xorshift64*: fast and good enough for test data.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(2685821657736338717) % n.max(1)
    };
    let infos: Vec<ClipInfo> = (0..clips)
        .map(|c| ClipInfo {
            name: format!("take_{c:05}"),
            frames: 600 + next(801) as u32,
            fps: 30.0,
            source: Some(format!("takes/take_{c:05}.bvh")),
            unit_cm: None,
        })
        .collect();
    let mut out: Vec<Tag> = (0..tags)
        .map(|t| Tag {
            name: if t % 5 == 1 {
                format!("ns{}:tag{t:03}", t % 3)
            } else {
                format!("tag{t:03}")
            },
            color: None,
            ranges: Default::default(),
            markers: Default::default(),
            notes: Default::default(),
            version: 0,
        })
        .collect();
    for (c, info) in infos.iter().enumerate() {
        for tag in out.iter_mut() {
            let n = next(2 * ranges_per_tag as u64 + 1) as u32;
            if n == 0 {
                continue;
            }
            let slot = info.frames / n;
            let mut list: Vec<Range> = (0..n)
                .filter_map(|i| {
                    let start = i * slot + next(slot.max(1) as u64 / 2 + 1) as u32;
                    let len = 1 + next(slot.max(2) as u64 / 2) as u32;
                    (start < info.frames).then(|| Range::new(start, (start + len).min(info.frames)))
                })
                .collect();
            crate::core::doc::canonicalize(&mut list, info.frames);
            if !list.is_empty() {
                tag.ranges.insert(c as u32, list);
            }
        }
    }
    TagDocument {
        clips: infos,
        tags: out,
        queries: vec![SavedQuery {
            name: "example".into(),
            expr: "tag000 & tag002 - tag003".into(),
        }],
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Token-wise equality where numbers may differ by 1e-3 (a platform's libm may round the last
    /// bits of a sine differently).
    fn same_up_to_float_noise(a: &str, b: &str) -> bool {
        let (ta, tb): (Vec<&str>, Vec<&str>) = (
            a.split_whitespace().collect(),
            b.split_whitespace().collect(),
        );
        ta.len() == tb.len()
            && ta.iter().zip(&tb).all(|(x, y)| {
                x == y
                    || match (x.parse::<f64>(), y.parse::<f64>()) {
                        (Ok(p), Ok(q)) => (p - q).abs() <= 1e-3,
                        _ => false,
                    }
            })
    }

    /// The files in `assets/demo/` are what the generator makes. `UPDATE_ASSETS=1` rewrites them.
    #[test]
    fn demo_assets_are_current() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
        let update = std::env::var_os("UPDATE_ASSETS").is_some();
        for (name, text) in demo_files() {
            let path = dir.join(&name);
            if update {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &text).unwrap();
            }
            let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                same_up_to_float_noise(&on_disk, &text),
                "{} is stale: run UPDATE_ASSETS=1 cargo test demo_assets",
                path.display()
            );
        }
    }

    #[test]
    fn demo_takes_are_valid_and_grounded() {
        let (clips, doc) = demo_project();
        assert_eq!(clips.len(), demo_scripts().len());
        for clip in &clips {
            clip.validate().unwrap();
            assert!(clip.frame_count > 100);
            // Feet touch the ground (within 1 cm) on every frame and never go below it.
            let mut local = vec![Transform::IDENTITY; clip.joint_count()];
            for f in 0..clip.frame_count {
                clip.copy_pose(f, &mut local);
                let m = model_pose(&clip.skeleton, &local);
                let low = [L_FOOT, L_TOE, R_FOOT, R_TOE]
                    .iter()
                    .map(|&j| m[j].translation.y)
                    .fold(f32::INFINITY, f32::min);
                assert!(
                    low > -0.01,
                    "{} frame {f}: foot below ground ({low})",
                    clip.name
                );
            }
        }
        let walking = &doc.tags[2];
        assert!(walking.ranges.contains_key(&0));
        // Every walking or running take has alternating foot contacts.
        for (c, clip) in clips.iter().enumerate() {
            let moving = doc.tags[2].ranges.contains_key(&(c as u32))
                || doc.tags[3].ranges.contains_key(&(c as u32));
            if moving {
                let l = doc.tags[10].ranges.get(&(c as u32)).map_or(0, <[_]>::len);
                let r = doc.tags[11].ranges.get(&(c as u32)).map_or(0, <[_]>::len);
                assert!(
                    l >= 3 && r >= 3,
                    "{}: {l} left and {r} right contacts",
                    clip.name
                );
            }
        }
    }

    #[test]
    fn walking_moves_forward_at_walking_speed() {
        let script = &demo_scripts()[0];
        let (clip, _) = generate_take(script);
        let n = clip.joint_count();
        let first = clip.translations[30 * n + HIPS];
        let last = clip.translations[(clip.frame_count - 1) * n + HIPS];
        let speed = (last - first).length() / ((clip.frame_count - 31) as f32 / clip.fps);
        assert!((100.0..160.0).contains(&speed), "walk speed {speed} cm/s");
    }
}
