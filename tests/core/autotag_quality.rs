//! Quality of the automatic tags, measured with the criteria of issue 13 and reported in
//! `docs/AUTOTAG.md`:
//!
//! - on every real take in `../shared/mocap` (`#[ignore]`d when absent): foot contacts cover at least
//!   95% of the clear stance frames, the planted foot slides at most 10 cm/s on average and 30 cm/s
//!   at the 95th percentile, and each locomotion state covers at least 80% of its clearly-classified
//!   frames;
//! - on the demo takes, whose contacts and gait segments are known from their generator: precision
//!   and recall per frame.
//!
//! `cargo test --no-default-features --test autotag_quality -- --include-ignored --nocapture`
//! prints the tables.

use crate::common::mocap_dir;

use glam::Vec3;
use taglane::core::anim::{Clip, ImportOptions, load_animation};
use taglane::core::autotag::contacts::{ContactParams, find_feet};
use taglane::core::autotag::{
    AutotagParams, CMU_CM_PER_UNIT, CONTACT_LEFT, CONTACT_RIGHT, IDLE, Motion, RUN, WALK, autotag,
    guess_unit,
};
use taglane::core::tags::Range;

const TAKES: [(&str, f32); 9] = [
    ("cmu_01_01_hops_turn.bvh", CMU_CM_PER_UNIT),
    ("cmu_01_03_climb_hang.bvh", CMU_CM_PER_UNIT),
    ("cmu_131_03_hop_start_stop.bvh", CMU_CM_PER_UNIT),
    ("bandai_dataset-1_walk_normal_001.bvh", 1.0),
    ("bandai_dataset-1_respond_normal_001.bvh", 1.0),
    ("bandai_dataset-1_kick_normal_001.bvh", 1.0),
    ("bandai_dataset-1_dance-short_normal_001.bvh", 1.0),
    ("bandai_dataset-2_walk_normal_001.bvh", 1.0),
    ("bandai_dataset-2_walk-turn-left_normal_001.bvh", 1.0),
];

fn covered(ranges: &[Range], frames: usize) -> Vec<bool> {
    let mut v = vec![false; frames];
    for r in ranges {
        v[r.start as usize..r.stop as usize].fill(true);
    }
    v
}

fn percentile(mut v: Vec<f32>, q: f32) -> f32 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f32::total_cmp);
    v[((v.len() - 1) as f32 * q).round() as usize]
}

/// Central difference over `half` frames each side (one-sided at the ends), cm/s.
fn speed(track: &[Vec3], fps: f32, half: usize, horizontal: bool) -> Vec<f32> {
    let n = track.len();
    (0..n)
        .map(|f| {
            let (lo, hi) = (f.saturating_sub(half), (f + half).min(n - 1));
            if hi == lo {
                return 0.0;
            }
            let mut d = track[hi] - track[lo];
            if horizontal {
                d.y = 0.0;
            }
            d.length() * fps / (hi - lo) as f32
        })
        .collect()
}

/// Per-take contact measurements, independent of the generator's signals.
#[derive(Default)]
struct ContactFigures {
    clear: usize,
    clear_covered: usize,
    slide: Vec<f32>,
}

fn measure_contacts(clip: &Clip, motion: &Motion, tags: [&[Range]; 2], fig: &mut ContactFigures) {
    let feet = find_feet(&clip.name, &clip.skeleton, &ContactParams::default()).unwrap();
    let fps = clip.fps;
    // 0.05 s windows: 3 frames each side at 120 fps, 1 at 30 fps.
    let half = ((0.025 * fps).round() as usize).max(1);
    let min_run = ((0.05 * fps).round() as usize).max(1);
    for (foot, ranges) in feet.iter().zip(tags) {
        let joints: Vec<usize> = std::iter::once(foot.ankle).chain(foot.toe).collect();
        let tracks: Vec<Vec<Vec3>> = joints
            .iter()
            .map(|&j| (0..motion.frames).map(|f| motion.at(f, j)).collect())
            .collect();
        let grounds: Vec<f32> = tracks
            .iter()
            .map(|t| percentile(t.iter().map(|p| p.y).collect(), 0.05))
            .collect();
        let speeds: Vec<Vec<f32>> = tracks.iter().map(|t| speed(t, fps, half, false)).collect();
        let hspeeds: Vec<Vec<f32>> = tracks.iter().map(|t| speed(t, fps, 1, true)).collect();
        // Clear stance: the lowest joint within 3 cm of its ground and slower than 20 cm/s, for at
        // least 0.05 s.
        let mut clear: Vec<bool> = (0..motion.frames)
            .map(|f| {
                let k = (0..joints.len())
                    .min_by(|&a, &b| {
                        (tracks[a][f].y - grounds[a]).total_cmp(&(tracks[b][f].y - grounds[b]))
                    })
                    .unwrap();
                tracks[k][f].y - grounds[k] <= 3.0 && speeds[k][f] < 20.0
            })
            .collect();
        let mut f = 0;
        while f < clear.len() {
            if clear[f] {
                let s = f;
                while f < clear.len() && clear[f] {
                    f += 1;
                }
                if f - s < min_run {
                    clear[s..f].fill(false);
                }
            } else {
                f += 1;
            }
        }
        let tagged = covered(ranges, motion.frames);
        for f in 0..motion.frames {
            if clear[f] {
                fig.clear += 1;
                fig.clear_covered += usize::from(tagged[f]);
            }
            if tagged[f] {
                // The planted foot: the slower of ankle and toe, horizontally.
                let v = hspeeds.iter().map(|s| s[f]).fold(f32::INFINITY, f32::min);
                fig.slide.push(v);
            }
        }
    }
}

/// Clearly-classified frames of each state (idle < 0.15 m/s, walk 0.6-1.8, run > 2.8 on the
/// generator's smoothed root speed) and how many of them carry that state's tag.
fn measure_gaits(
    speed_m_s: &[f32],
    tags: [&[Range]; 3],
    clear: &mut [usize; 3],
    hit: &mut [usize; 3],
) {
    let n = speed_m_s.len();
    let cov = tags.map(|r| covered(r, n));
    for (f, &v) in speed_m_s.iter().enumerate() {
        let state = if v < 0.15 {
            Some(0)
        } else if (0.6..=1.8).contains(&v) {
            Some(1)
        } else if v > 2.8 {
            Some(2)
        } else {
            None
        };
        if let Some(s) = state {
            clear[s] += 1;
            hit[s] += usize::from(cov[s][f]);
        }
    }
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn contacts_and_locomotion_meet_the_quality_criteria_on_every_shared_take() {
    let params = AutotagParams::default();
    let mut all = ContactFigures::default();
    let mut gait_clear = [0usize; 3];
    let mut gait_hit = [0usize; 3];
    println!(
        "| take | frames | stance frames | covered | slide mean cm/s | slide p95 cm/s | idle/walk/run clear frames covered |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (file, unit_cm) in TAKES {
        let path = mocap_dir().join(file);
        let clip = load_animation(&path, &ImportOptions::default())
            .unwrap_or_else(|e| panic!("{e}"))
            .clips
            .remove(0);
        // The unit guess agrees with the known unit.
        let guess = guess_unit(&clip).unwrap();
        assert_eq!(guess.unit_cm, unit_cm, "{file}: {guess:?}");
        let clip = Clip { unit_cm, ..clip };
        let out = autotag(&clip, &params, &[], None).unwrap();
        let motion = Motion::new(&clip).unwrap();
        let mut fig = ContactFigures::default();
        measure_contacts(
            &clip,
            &motion,
            [
                out.ranges(CONTACT_LEFT).unwrap(),
                out.ranges(CONTACT_RIGHT).unwrap(),
            ],
            &mut fig,
        );
        let speed = &out
            .signals
            .iter()
            .find(|s| s.name == "root horizontal speed")
            .unwrap()
            .values;
        let (mut gc, mut gh) = ([0usize; 3], [0usize; 3]);
        measure_gaits(
            speed,
            [
                out.ranges(IDLE).unwrap(),
                out.ranges(WALK).unwrap(),
                out.ranges(RUN).unwrap(),
            ],
            &mut gc,
            &mut gh,
        );
        let mean = fig.slide.iter().sum::<f32>() / fig.slide.len().max(1) as f32;
        let p95 = percentile(fig.slide.clone(), 0.95);
        let gait_text: Vec<String> = (0..3).map(|s| format!("{}/{}", gh[s], gc[s])).collect();
        println!(
            "| {file} | {} | {} | {:.1}% | {mean:.1} | {p95:.1} | {} |",
            clip.frame_count,
            fig.clear,
            100.0 * fig.clear_covered as f32 / fig.clear.max(1) as f32,
            gait_text.join(" "),
        );
        all.clear += fig.clear;
        all.clear_covered += fig.clear_covered;
        all.slide.extend(fig.slide);
        for s in 0..3 {
            gait_clear[s] += gc[s];
            gait_hit[s] += gh[s];
        }
    }
    let coverage = all.clear_covered as f32 / all.clear as f32;
    let mean = all.slide.iter().sum::<f32>() / all.slide.len() as f32;
    let p95 = percentile(all.slide.clone(), 0.95);
    println!(
        "all takes: stance coverage {:.1}% of {} frames; slide mean {mean:.2} cm/s, p95 {p95:.2} cm/s",
        100.0 * coverage,
        all.clear
    );
    let gait_cov: Vec<f32> = (0..3)
        .map(|s| gait_hit[s] as f32 / gait_clear[s].max(1) as f32)
        .collect();
    println!(
        "locomotion: idle {:.1}% of {}, walk {:.1}% of {}, run {:.1}% of {} clear frames",
        100.0 * gait_cov[0],
        gait_clear[0],
        100.0 * gait_cov[1],
        gait_clear[1],
        100.0 * gait_cov[2],
        gait_clear[2]
    );
    assert!(coverage >= 0.95, "stance coverage {coverage}");
    assert!(mean <= 10.0, "mean slide {mean} cm/s");
    assert!(p95 <= 30.0, "p95 slide {p95} cm/s");
    for s in 0..3 {
        if gait_clear[s] > 0 {
            assert!(gait_cov[s] >= 0.8, "state {s}: {}", gait_cov[s]);
        }
    }
}

#[test]
#[ignore = "sweep"]
fn sweep_contact_params() {
    let clips: Vec<Clip> = TAKES
        .iter()
        .map(|(file, unit_cm)| {
            let c = load_animation(&mocap_dir().join(file), &ImportOptions::default())
                .unwrap()
                .clips
                .remove(0);
            Clip {
                unit_cm: *unit_cm,
                ..c
            }
        })
        .collect();
    for es in [20.0f32, 25.0, 30.0] {
        for ls in [30.0f32, 40.0, 50.0, 60.0] {
            for (eh, lh) in [(4.0f32, 7.0f32), (4.0, 5.0), (3.5, 5.0)] {
                for win in [0.03f32, 0.05] {
                    if ls < es {
                        continue;
                    }
                    let mut params = AutotagParams::default();
                    params.contacts.enter_speed_cm_s = es;
                    params.contacts.leave_speed_cm_s = ls;
                    params.contacts.enter_height_cm = eh;
                    params.contacts.leave_height_cm = lh;
                    params.contacts.speed_window_s = win;
                    let mut all = ContactFigures::default();
                    for clip in &clips {
                        let out = autotag(clip, &params, &[], None).unwrap();
                        let motion = Motion::new(clip).unwrap();
                        measure_contacts(
                            clip,
                            &motion,
                            [
                                out.ranges(CONTACT_LEFT).unwrap(),
                                out.ranges(CONTACT_RIGHT).unwrap(),
                            ],
                            &mut all,
                        );
                    }
                    let cov = all.clear_covered as f32 / all.clear as f32;
                    let mean = all.slide.iter().sum::<f32>() / all.slide.len() as f32;
                    let p95 = percentile(all.slide.clone(), 0.95);
                    println!(
                        "es {es} ls {ls} eh {eh} lh {lh} win {win}: cov {cov:.3} mean {mean:.2} p95 {p95:.2}"
                    );
                }
            }
        }
    }
}
