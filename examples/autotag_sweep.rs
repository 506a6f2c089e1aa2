//! Parameter sweeps of the automatic tagging: how the contact thresholds trade stance coverage
//! against foot slide on the shared takes (and precision/recall on the demo takes), and how the
//! turn thresholds and the locomotion window behave. Prints markdown tables; used to choose the
//! defaults documented in docs/AUTOTAG.md.
//!
//! `cargo run --release --no-default-features --example autotag_sweep`
//!
//! Without `../shared/mocap` only the demo columns are filled.

#[path = "../tests/core/autotag_common.rs"]
mod autotag_common;

use autotag_common::{ContactFigures, TAKES, demo_precision_recall, load_take, measure_take, pct};
use taglane::core::anim::Clip;
use taglane::core::autotag::AutotagSettings;

fn main() {
    let takes: Vec<(&str, Clip)> = TAKES
        .iter()
        .filter_map(|(file, unit)| Some((*file, load_take(file, *unit)?)))
        .collect();
    if takes.is_empty() {
        println!("../shared/mocap not found: demo takes only\n");
    }
    let shared = |settings: &AutotagSettings| {
        let mut all = ContactFigures::default();
        let reports: Vec<_> = takes
            .iter()
            .map(|(file, clip)| measure_take(file, clip, settings))
            .collect();
        for r in &reports {
            all.add(&r.contacts);
        }
        (all, reports)
    };

    println!("## Contacts\n");
    println!(
        "| enter / leave speed cm/s | enter / leave height cm | speed window s | ground quantile | stance coverage | slide mean cm/s | slide p95 cm/s | demo contacts P / R |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (es, ls) in [(15.0f32, 25.0f32), (20.0, 30.0), (25.0, 40.0), (30.0, 50.0)] {
        for (eh, lh) in [(3.0f32, 5.0f32), (4.0, 7.0), (5.0, 8.0)] {
            for win in [0.03f32, 0.05] {
                for q in [0.02f32, 0.05, 0.1] {
                    let mut s = AutotagSettings::default();
                    let c = &mut s.params.contacts;
                    (c.enter_speed_cm_s, c.leave_speed_cm_s) = (es, ls);
                    (c.enter_height_cm, c.leave_height_cm) = (eh, lh);
                    c.speed_window_s = win;
                    c.ground_percentile = q;
                    let (all, _) = shared(&s);
                    let (scores, _) = demo_precision_recall(&s);
                    let demo = scores.contacts;
                    println!(
                        "| {es} / {ls} | {eh} / {lh} | {win} | {q} | {} | {:.2} | {:.2} | {} / {} |",
                        pct(all.coverage()),
                        all.slide_mean(),
                        all.slide_p95(),
                        pct(demo.precision()),
                        pct(demo.recall()),
                    );
                }
            }
        }
    }

    println!("\n## Turns\n");
    println!(
        "| enter / leave deg/s | window s | walk-turn-left L / R frames | straight walks and in-place takes: turn frames | demo walk_turn_left (25 deg/s) |"
    );
    println!("|---|---|---|---|---|");
    let (demo_clips, _) = taglane::core::demo::demo_project();
    let demo_turn = demo_clips
        .iter()
        .find(|c| c.name == "walk_turn_left_male_04")
        .expect("the demo turn take");
    for (enter, leave) in [(15.0f32, 10.0f32), (20.0, 12.0), (30.0, 20.0)] {
        for window in [0.5f32, 1.0, 1.5] {
            let mut s = AutotagSettings::default();
            s.params.turning.enter_deg_s = enter;
            s.params.turning.leave_deg_s = leave;
            s.params.turning.window_s = window;
            let (_, reports) = shared(&s);
            let turn_of = |f: &str| {
                reports
                    .iter()
                    .find(|r| r.file == f)
                    .map_or([0, 0, 0], |r| r.turn_air)
            };
            let left = turn_of("bandai_dataset-2_walk-turn-left_normal_001.bvh");
            let straight: u32 = [
                "bandai_dataset-1_walk_normal_001.bvh",
                "bandai_dataset-2_walk_normal_001.bvh",
                "bandai_dataset-1_respond_normal_001.bvh",
            ]
            .iter()
            .map(|f| turn_of(f)[0] + turn_of(f)[1])
            .sum();
            let demo = taglane::core::autotag::autotag(demo_turn, &s, None).unwrap();
            let demo_left: u32 = demo
                .ranges(taglane::core::autotag::TURN_LEFT)
                .unwrap()
                .iter()
                .map(|r| r.len())
                .sum();
            println!(
                "| {enter} / {leave} | {window} | {} / {} | {straight} | {demo_left} of {} frames |",
                left[0], left[1], demo_turn.frame_count
            );
        }
    }

    println!("\n## Locomotion window\n");
    println!(
        "| smooth s | min segment s | demo idle P / R | demo walk P / R | demo run P / R | shared idle / walk clear frames covered |"
    );
    println!("|---|---|---|---|---|---|");
    for smooth in [0.2f32, 0.3, 0.5] {
        for min_segment in [0.2f32, 0.3, 0.5] {
            let mut s = AutotagSettings::default();
            s.params.locomotion.smooth_s = smooth;
            s.params.locomotion.min_segment_s = min_segment;
            let (scores, _) = demo_precision_recall(&s);
            let [idle, walk, run] = scores.gaits;
            let (_, reports) = shared(&s);
            let mut g = autotag_common::GaitFigures::default();
            for r in &reports {
                g.add(&r.gaits);
            }
            let cov = |k: usize| g.coverage(k).map_or("-".to_owned(), pct);
            println!(
                "| {smooth} | {min_segment} | {} / {} | {} / {} | {} / {} | {} / {} |",
                pct(idle.precision()),
                pct(idle.recall()),
                pct(walk.precision()),
                pct(walk.recall()),
                pct(run.precision()),
                pct(run.recall()),
                cov(0),
                cov(1),
            );
        }
    }
}
