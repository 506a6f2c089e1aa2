//! Quality of "find similar" (issue 14), reported in `docs/SIMILAR.md`:
//!
//! - on the demo takes, whose gait segments are known from their generator: one gait cycle of
//!   running, walking and idling as the query; precision and recall of the returned ranges against
//!   the generator's segments (a returned range counts for a segment when at least 50% of its frames
//!   lie in it) must be at least 0.9 each;
//! - on the real takes in `../shared/mocap` (`#[ignore]`d when absent): a walking cycle of one
//!   Bandai walk returns walks (both Bandai walk takes and the turning walk) before any dance, kick
//!   or climb, and never itself or a window overlapping it; so does a stride of the demo's
//!   procedural walk (another skeleton, another frame rate).
//!
//! `cargo test --no-default-features --test core similar_quality -- --include-ignored --nocapture`
//! prints the tables.

use crate::common::mocap;

use taglane::core::anim::{Clip, ImportOptions, load_animation};
use taglane::core::autotag::{AutotagSettings, CMU_CM_PER_UNIT, CONTACT_LEFT, autotag};
use taglane::core::demo::{Gait, demo_scripts, generate_take};
use taglane::core::similar::{
    ClipFeatures, JointOverrides, Match, Query, SUGGESTED_MAX_SCORE, SearchIndex, SearchSettings,
    Weights, clip_features_by_name,
};

struct Segment {
    clip: usize,
    gait: Gait,
    start: usize,
    stop: usize,
}

/// The demo takes and their gait segments, from the generator's per-frame segment index.
fn demo() -> (Vec<Clip>, Vec<String>, Vec<Segment>) {
    let mut clips = Vec::new();
    let mut names = Vec::new();
    let mut segs = Vec::new();
    for (c, script) in demo_scripts().iter().enumerate() {
        let (clip, per_frame) = generate_take(script);
        let mut f = 0;
        while f < per_frame.len() {
            let seg = per_frame[f].0;
            let mut g = f;
            while g < per_frame.len() && per_frame[g].0 == seg {
                g += 1;
            }
            segs.push(Segment {
                clip: c,
                gait: script.segments[seg].0,
                start: f,
                stop: g,
            });
            f = g;
        }
        names.push(script.name.to_owned());
        clips.push(clip);
    }
    (clips, names, segs)
}

fn overlap(a: (usize, usize), b: (usize, usize)) -> usize {
    a.1.min(b.1).saturating_sub(a.0.max(b.0))
}

/// Precision, recall and the share of the gait's frames (outside the query) covered by true
/// matches.
fn score(m: &[Match], segs: &[Segment], q: &Query, gait: Gait) -> (f32, f32, f32, usize) {
    let lq = q.stop - q.start;
    let min_w = (0.75 * lq as f32).ceil() as usize;
    let same: Vec<&Segment> = segs.iter().filter(|s| s.gait == gait).collect();
    let in_seg = |m: &Match, s: &Segment| {
        m.clip == s.clip && 2 * overlap((m.start, m.stop), (s.start, s.stop)) >= m.stop - m.start
    };
    let tp: Vec<&Match> = m
        .iter()
        .filter(|m| same.iter().any(|s| in_seg(m, s)))
        .collect();
    let outside_query = |s: &Segment| {
        let own = if s.clip == q.clip {
            overlap((s.start, s.stop), (q.start, q.stop))
        } else {
            0
        };
        s.stop - s.start - own
    };
    let eligible: Vec<&&Segment> = same.iter().filter(|s| outside_query(s) >= min_w).collect();
    let hit = eligible
        .iter()
        .filter(|s| tp.iter().any(|m| in_seg(m, s)))
        .count();
    let frames: usize = eligible.iter().map(|s| outside_query(s)).sum();
    let covered: usize = tp
        .iter()
        .map(|m| {
            same.iter()
                .filter(|s| s.clip == m.clip)
                .map(|s| overlap((m.start, m.stop), (s.start, s.stop)))
                .sum::<usize>()
        })
        .sum();
    (
        tp.len() as f32 / m.len().max(1) as f32,
        hit as f32 / eligible.len().max(1) as f32,
        covered as f32 / frames.max(1) as f32,
        eligible.len(),
    )
}

#[test]
fn demo_gait_cycles_find_their_gait() {
    let (clips, names, segs) = demo();
    let feats: Vec<ClipFeatures> = clips
        .iter()
        .map(|c| clip_features_by_name(c, &JointOverrides::default()).unwrap())
        .collect();
    let refs: Vec<&ClipFeatures> = feats.iter().collect();
    let index = SearchIndex::build(&refs, &Weights::default()).unwrap();
    let settings = SearchSettings {
        top: 1000,
        max_score: Some(SUGGESTED_MAX_SCORE),
        ..SearchSettings::default()
    };
    // One cycle of each gait, well inside a segment: walking 1 cycle/s, running 1.4 cycles/s (21
    // frames at 30 fps); idling has no stride, so one second of it.
    let queries = [
        (
            "walk",
            Gait::Walk,
            Query {
                clip: 0,
                start: 120,
                stop: 150,
            },
        ),
        (
            "run",
            Gait::Run,
            Query {
                clip: 1,
                start: 60,
                stop: 81,
            },
        ),
        (
            "idle",
            Gait::Idle,
            Query {
                clip: 2,
                start: 60,
                stop: 90,
            },
        ),
    ];
    println!("| query | returned | precision | recall (segments) | frames covered |");
    println!("|---|---:|---:|---:|---:|");
    for (label, gait, q) in queries {
        let m = index.search(&q, &settings).unwrap();
        let (p, r, cov, n) = score(&m, &segs, &q, gait);
        println!(
            "| {label}: {} {}:{} | {} | {p:.3} | {r:.3} (of {n}) | {cov:.3} |",
            names[q.clip],
            q.start,
            q.stop,
            m.len()
        );
        for x in &m {
            assert!(
                !(x.clip == q.clip && x.start < q.stop && q.start < x.stop),
                "{label}: overlaps the query: {x:?}"
            );
        }
        if p < 0.9 || r < 0.9 {
            for x in &m {
                eprintln!("  {} {}:{} {:.3}", names[x.clip], x.start, x.stop, x.score);
            }
        }
        assert!(p >= 0.9, "{label}: precision {p}");
        assert!(r >= 0.9, "{label}: recall {r}");
    }
}

const TAKES: [(&str, f32); 9] = [
    ("bandai_dataset-1_walk_normal_001.bvh", 1.0),
    ("bandai_dataset-2_walk_normal_001.bvh", 1.0),
    ("bandai_dataset-2_walk-turn-left_normal_001.bvh", 1.0),
    ("bandai_dataset-1_respond_normal_001.bvh", 1.0),
    ("bandai_dataset-1_kick_normal_001.bvh", 1.0),
    ("bandai_dataset-1_dance-short_normal_001.bvh", 1.0),
    ("cmu_01_01_hops_turn.bvh", CMU_CM_PER_UNIT),
    ("cmu_01_03_climb_hang.bvh", CMU_CM_PER_UNIT),
    ("cmu_131_03_hop_start_stop.bvh", CMU_CM_PER_UNIT),
];

fn is_walk(name: &str) -> bool {
    name.contains("walk")
}

fn is_excluded_kind(name: &str) -> bool {
    ["dance", "kick", "climb"].iter().any(|k| name.contains(k))
}

fn shared_takes() -> Vec<Clip> {
    TAKES
        .iter()
        .map(|(f, unit)| {
            let options = ImportOptions {
                unit_cm: Some(*unit),
                ..ImportOptions::default()
            };
            load_animation(&mocap(f), &options).unwrap().clips.remove(0)
        })
        .collect()
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn bandai_walk_cycle_finds_walks_before_dance_kick_or_climb() {
    let clips = shared_takes();
    let feats: Vec<ClipFeatures> = clips
        .iter()
        .map(|c| clip_features_by_name(c, &JointOverrides::default()).unwrap())
        .collect();
    let refs: Vec<&ClipFeatures> = feats.iter().collect();
    let index = SearchIndex::build(&refs, &Weights::default()).unwrap();
    // The query: one stride of the left foot in the middle of the first Bandai walk, from one
    // left-foot contact to the next (as the contact generator finds them).
    let walk = &clips[0];
    let only = [CONTACT_LEFT.to_owned()];
    let tags = autotag(walk, &AutotagSettings::default(), Some(&only)).unwrap();
    let contacts = tags.ranges(CONTACT_LEFT).unwrap();
    let mid = walk.frame_count as u32 / 2;
    let i = contacts.iter().position(|r| r.start >= mid - 20).unwrap();
    let q = Query {
        clip: 0,
        start: contacts[i].start as usize,
        stop: contacts[i + 1].start as usize,
    };
    let m = index
        .search(
            &q,
            &SearchSettings {
                top: 20,
                ..SearchSettings::default()
            },
        )
        .unwrap();
    println!(
        "query: {} {}:{} ({} frames)",
        TAKES[0].0,
        q.start,
        q.stop,
        q.stop - q.start
    );
    println!("| rank | take | range | score |");
    println!("|---:|---|---|---:|");
    for (k, x) in m.iter().enumerate() {
        println!(
            "| {} | {} | {}:{} | {:.3} |",
            k + 1,
            TAKES[x.clip].0,
            x.start,
            x.stop,
            x.score
        );
        assert!(
            !(x.clip == q.clip && x.start < q.stop && q.start < x.stop),
            "overlaps the query: {x:?}"
        );
    }
    let first_bad = m
        .iter()
        .position(|x| is_excluded_kind(TAKES[x.clip].0))
        .unwrap_or(m.len());
    for (take, (file, _)) in TAKES.iter().enumerate().take(3) {
        assert!(
            m[..first_bad].iter().any(|x| x.clip == take),
            "{file} not found before rank {}",
            first_bad + 1
        );
    }
    assert!(
        m[..first_bad].iter().all(|x| is_walk(TAKES[x.clip].0)),
        "a match that is not a walk before rank {}",
        first_bad + 1
    );
    assert!(
        first_bad >= 10,
        "a dance, kick or climb at rank {}",
        first_bad + 1
    );
}

#[test]
#[ignore = "needs ../shared/mocap"]
fn a_walk_on_another_skeleton_finds_the_real_walks_first() {
    // The query: one stride of the demo's walk_male_01 (a procedural take on a CMU-like skeleton,
    // 30 fps); the library: the nine real takes (two other skeletons, 30 and 120 fps) and the
    // query's take.
    let mut clips = shared_takes();
    clips.push(generate_take(&demo_scripts()[0]).0);
    let feats: Vec<ClipFeatures> = clips
        .iter()
        .map(|c| clip_features_by_name(c, &JointOverrides::default()).unwrap())
        .collect();
    let refs: Vec<&ClipFeatures> = feats.iter().collect();
    let index = SearchIndex::build(&refs, &Weights::default()).unwrap();
    let own = TAKES.len();
    let q = Query {
        clip: own,
        start: 120,
        stop: 150,
    };
    let m = index
        .search(
            &q,
            &SearchSettings {
                top: 30,
                ..SearchSettings::default()
            },
        )
        .unwrap();
    let real: Vec<&Match> = m.iter().filter(|x| x.clip != own).collect();
    println!("query: demo walk_male_01 120:150; matches on the real takes:");
    println!("| rank | take | range | score |");
    println!("|---:|---|---|---:|");
    for (k, x) in real.iter().enumerate() {
        println!(
            "| {} | {} | {}:{} | {:.3} |",
            k + 1,
            TAKES[x.clip].0,
            x.start,
            x.stop,
            x.score
        );
    }
    let first_bad = real
        .iter()
        .position(|x| is_excluded_kind(TAKES[x.clip].0))
        .unwrap_or(real.len());
    for (take, (file, _)) in TAKES.iter().enumerate().take(3) {
        assert!(
            real[..first_bad].iter().any(|x| x.clip == take),
            "{file} not found before rank {}",
            first_bad + 1
        );
    }
    assert!(
        real.iter().take(10).all(|x| is_walk(TAKES[x.clip].0)),
        "a match that is not a walk in the first 10"
    );
}
