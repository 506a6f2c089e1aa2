//! Quality measurements of the automatic tags, shared by `tests/autotag_quality.rs` and
//! `examples/autotag_sweep.rs`. They are computed here from the motion, independently of the
//! generators' own signals, with the criteria of issue 13:
//!
//! - **clear stance** frames of a foot: its lowest joint (ankle or toe) within 3 cm of that joint's
//!   ground level (the 5th percentile of its height over the take) and slower than 20 cm/s (3D,
//!   over 0.05 s), for at least 0.05 s; contact ranges must cover at least 95% of them;
//! - **slide** of a planted foot: the slower of its ankle and toe, horizontal speed (central
//!   difference over one frame each side), over the frames tagged as contacts: at most 10 cm/s on
//!   average and 30 cm/s at the 95th percentile;
//! - **clearly classified** locomotion frames, on the horizontal speed of `Hips` averaged over
//!   0.3 s: idle < 0.15 m/s, walk 0.6-1.8 m/s, run > 2.8 m/s; each state's tag must cover at least
//!   80% of its frames;
//! - on the demo takes, whose contacts and gait segments come with the generator: precision and
//!   recall per frame.

#![allow(dead_code, reason = "each user takes the parts it needs")]

use std::path::PathBuf;

use glam::Vec3;
use taglane::core::anim::{Clip, ImportOptions, load_animation};
use taglane::core::autotag::contacts::find_feet;
use taglane::core::autotag::{
    AIRBORNE, AutotagSettings, CMU_CM_PER_UNIT, CONTACT_LEFT, CONTACT_RIGHT, IDLE, Motion,
    Prepared, RUN, TURN_LEFT, TURN_RIGHT, WALK,
};
use taglane::core::tags::Range;

pub fn mocap_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/mocap"))
}

/// The nine shared takes and their units (cm per file unit).
pub const TAKES: [(&str, f32); 9] = [
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

/// Loads a shared take with its known unit; `None` when `../shared/mocap` is missing.
pub fn load_take(file: &str, unit_cm: f32) -> Option<Clip> {
    let path = mocap_dir().join(file);
    if !path.exists() {
        return None;
    }
    let mut clip = load_animation(&path, &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .clips
        .remove(0);
    clip.unit_cm = unit_cm;
    Some(clip)
}

pub fn covered(ranges: &[Range], frames: usize) -> Vec<bool> {
    let mut v = vec![false; frames];
    for r in ranges {
        v[r.start as usize..(r.stop as usize).min(frames)].fill(true);
    }
    v
}

pub fn percentile(mut v: Vec<f32>, q: f32) -> f32 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f32::total_cmp);
    v[((v.len() - 1) as f32 * q).round() as usize]
}

/// Central difference over `half` frames each side (one-sided at the ends), units per second.
pub fn speed(track: &[Vec3], fps: f32, half: usize, horizontal: bool) -> Vec<f32> {
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

fn frames_for(secs: f32, fps: f32) -> usize {
    ((secs * fps).round() as usize).max(1)
}

/// Contact measurements, summed over feet and takes.
#[derive(Default, Clone)]
pub struct ContactFigures {
    pub clear: usize,
    pub clear_covered: usize,
    pub slide: Vec<f32>,
}

impl ContactFigures {
    pub fn add(&mut self, o: &ContactFigures) {
        self.clear += o.clear;
        self.clear_covered += o.clear_covered;
        self.slide.extend_from_slice(&o.slide);
    }
    pub fn coverage(&self) -> f32 {
        self.clear_covered as f32 / self.clear.max(1) as f32
    }
    pub fn slide_mean(&self) -> f32 {
        self.slide.iter().sum::<f32>() / self.slide.len().max(1) as f32
    }
    pub fn slide_p95(&self) -> f32 {
        percentile(self.slide.clone(), 0.95)
    }
}

/// Clear stance coverage and slide of the contact ranges `tags` (`[left, right]`).
pub fn measure_contacts(clip: &Clip, motion: &Motion, tags: [&[Range]; 2]) -> ContactFigures {
    let feet = find_feet(&clip.name, &clip.skeleton, &Default::default()).unwrap();
    let fps = clip.fps;
    let half = frames_for(0.025, fps);
    let min_run = frames_for(0.05, fps);
    let mut fig = ContactFigures::default();
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
                let v = hspeeds.iter().map(|s| s[f]).fold(f32::INFINITY, f32::min);
                fig.slide.push(v);
            }
        }
    }
    fig
}

/// Clearly classified frames of each state (`[idle, walk, run]`) and how many carry its tag.
#[derive(Default, Clone, Copy)]
pub struct GaitFigures {
    pub clear: [usize; 3],
    pub hit: [usize; 3],
}

impl GaitFigures {
    pub fn add(&mut self, o: &GaitFigures) {
        for s in 0..3 {
            self.clear[s] += o.clear[s];
            self.hit[s] += o.hit[s];
        }
    }
    pub fn coverage(&self, s: usize) -> Option<f32> {
        (self.clear[s] > 0).then(|| self.hit[s] as f32 / self.clear[s] as f32)
    }
}

/// Horizontal speed of `Hips` averaged over 0.3 s, m/s.
pub fn hips_speed_m_s(clip: &Clip, motion: &Motion) -> Vec<f32> {
    let hips = clip.skeleton.find("Hips").expect("a Hips joint");
    let track: Vec<Vec3> = (0..motion.frames).map(|f| motion.at(f, hips)).collect();
    speed(&track, clip.fps, frames_for(0.15, clip.fps), true)
        .into_iter()
        .map(|v| v / 100.0)
        .collect()
}

pub fn measure_gaits(speed_m_s: &[f32], tags: [&[Range]; 3]) -> GaitFigures {
    let n = speed_m_s.len();
    let cov = tags.map(|r| covered(r, n));
    let mut fig = GaitFigures::default();
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
            fig.clear[s] += 1;
            fig.hit[s] += usize::from(cov[s][f]);
        }
    }
    fig
}

/// One shared take's measurements.
pub struct TakeReport {
    pub file: String,
    pub frames: usize,
    pub contacts: ContactFigures,
    pub gaits: GaitFigures,
    /// Frames tagged `[TurnLeft, TurnRight, Airborne]`.
    pub turn_air: [u32; 3],
}

fn frames_of(ranges: &[Range]) -> u32 {
    ranges.iter().map(|r| r.len()).sum()
}

/// Tags one clip with `settings` and measures it.
pub fn measure_take(file: &str, clip: &Clip, settings: &AutotagSettings) -> TakeReport {
    let prepared = Prepared::new(clip).unwrap();
    let out = prepared.autotag(settings, None).unwrap();
    let motion = prepared.motion();
    let contacts = measure_contacts(
        clip,
        motion,
        [
            out.ranges(CONTACT_LEFT).unwrap(),
            out.ranges(CONTACT_RIGHT).unwrap(),
        ],
    );
    let gaits = measure_gaits(
        &hips_speed_m_s(clip, motion),
        [
            out.ranges(IDLE).unwrap(),
            out.ranges(WALK).unwrap(),
            out.ranges(RUN).unwrap(),
        ],
    );
    TakeReport {
        file: file.to_owned(),
        frames: clip.frame_count,
        contacts,
        gaits,
        turn_air: [TURN_LEFT, TURN_RIGHT, AIRBORNE].map(|t| frames_of(out.ranges(t).unwrap())),
    }
}

pub fn pct(x: f32) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// The markdown table of the shared takes and the totals.
pub fn shared_table(reports: &[TakeReport]) -> (String, ContactFigures, GaitFigures) {
    let mut s = String::from(
        "| take | frames | clear stance frames | covered | slide mean cm/s | slide p95 cm/s | idle / walk / run clear frames covered | turn L / R frames | airborne frames |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    let (mut all_c, mut all_g) = (ContactFigures::default(), GaitFigures::default());
    for r in reports {
        let gait: Vec<String> = (0..3)
            .map(|k| format!("{}/{}", r.gaits.hit[k], r.gaits.clear[k]))
            .collect();
        s += &format!(
            "| {} | {} | {} | {} | {:.1} | {:.1} | {} | {} / {} | {} |\n",
            r.file,
            r.frames,
            r.contacts.clear,
            pct(r.contacts.coverage()),
            r.contacts.slide_mean(),
            r.contacts.slide_p95(),
            gait.join(" · "),
            r.turn_air[0],
            r.turn_air[1],
            r.turn_air[2],
        );
        all_c.add(&r.contacts);
        all_g.add(&r.gaits);
    }
    let gait: Vec<String> = (0..3)
        .map(|k| match all_g.coverage(k) {
            Some(c) => format!("{} of {}", pct(c), all_g.clear[k]),
            None => "no clear frames".to_owned(),
        })
        .collect();
    s += &format!(
        "| **all** | {} | {} | **{}** | **{:.2}** | **{:.2}** | {} | | |\n",
        reports.iter().map(|r| r.frames).sum::<usize>(),
        all_c.clear,
        pct(all_c.coverage()),
        all_c.slide_mean(),
        all_c.slide_p95(),
        gait.join(" · "),
    );
    (s, all_c, all_g)
}

/// Per-frame precision and recall of tagged ranges against true ones.
#[derive(Default, Clone, Copy, Debug)]
pub struct PrecisionRecall {
    pub both: u64,
    pub tagged: u64,
    pub truth: u64,
}

impl PrecisionRecall {
    pub fn add(&mut self, tagged: &[Range], truth: &[Range], frames: usize) {
        let (a, b) = (covered(tagged, frames), covered(truth, frames));
        for (x, y) in a.iter().zip(&b) {
            self.both += u64::from(*x && *y);
            self.tagged += u64::from(*x);
            self.truth += u64::from(*y);
        }
    }
    pub fn precision(&self) -> f32 {
        self.both as f32 / self.tagged.max(1) as f32
    }
    pub fn recall(&self) -> f32 {
        self.both as f32 / self.truth.max(1) as f32
    }
}

/// Precision and recall on the demo takes, pooled over the takes.
#[derive(Default, Clone, Copy, Debug)]
pub struct DemoScores {
    /// Contacts of both feet against the demo's `contact:LeftFootDown` / `RightFootDown`.
    pub contacts: PrecisionRecall,
    /// The same, counting as true only the frames where the demo's foot is still (the slower of
    /// ankle and toe under 20 cm/s horizontally): the demo's feet slide sideways up to 40 cm/s in
    /// parts of their stance, which its own contact tags include.
    pub contacts_still: PrecisionRecall,
    /// `[idle, walk, run]` against the demo's gait segments (`Idle`, `Walking`, `Running`).
    pub gaits: [PrecisionRecall; 3],
    /// `TurnLeft` or `TurnRight` against `locomotion:Turn`.
    pub turns: PrecisionRecall,
}

/// Scores on the demo takes and the markdown table per take.
pub fn demo_precision_recall(settings: &AutotagSettings) -> (DemoScores, String) {
    let (clips, doc) = taglane::core::demo::demo_project();
    let truth_tag = |name: &str| doc.tag_index(name).expect("a demo tag");
    let truth = [
        truth_tag("contact:LeftFootDown"),
        truth_tag("contact:RightFootDown"),
        truth_tag("Idle"),
        truth_tag("Walking"),
        truth_tag("Running"),
        truth_tag("locomotion:Turn"),
    ];
    let mut all = DemoScores::default();
    let mut s = String::from(
        "| take | frames | contacts P / R | R on still frames | idle P / R | walk P / R | run P / R | turn P / R |\n|---|---|---|---|---|---|---|---|\n",
    );
    let cell = |p: &PrecisionRecall| {
        if p.truth == 0 && p.tagged == 0 {
            "-".to_owned()
        } else {
            format!("{} / {}", pct(p.precision()), pct(p.recall()))
        }
    };
    let sum = |a: &mut PrecisionRecall, b: &PrecisionRecall| {
        a.both += b.both;
        a.tagged += b.tagged;
        a.truth += b.truth;
    };
    for (c, clip) in clips.iter().enumerate() {
        let prepared = Prepared::new(clip).unwrap();
        let out = prepared.autotag(settings, None).unwrap();
        let true_ranges =
            |k: usize| -> &[Range] { doc.tags[truth[k]].ranges.get(&(c as u32)).unwrap_or(&[]) };
        let n = clip.frame_count;
        let mut take = DemoScores::default();
        take.contacts
            .add(out.ranges(CONTACT_LEFT).unwrap(), true_ranges(0), n);
        take.contacts
            .add(out.ranges(CONTACT_RIGHT).unwrap(), true_ranges(1), n);
        let feet = find_feet(&clip.name, &clip.skeleton, &Default::default()).unwrap();
        let m = prepared.motion();
        for (side, tag) in [CONTACT_LEFT, CONTACT_RIGHT].into_iter().enumerate() {
            let joints: Vec<usize> = std::iter::once(feet[side].ankle)
                .chain(feet[side].toe)
                .collect();
            let hs: Vec<Vec<f32>> = joints
                .iter()
                .map(|&j| {
                    let t: Vec<Vec3> = (0..n).map(|f| m.at(f, j)).collect();
                    speed(&t, clip.fps, 1, true)
                })
                .collect();
            let true_cov = covered(true_ranges(side), n);
            let still_truth: Vec<Range> = (0..n)
                .filter(|&f| {
                    true_cov[f] && hs.iter().map(|v| v[f]).fold(f32::INFINITY, f32::min) < 20.0
                })
                .map(|f| Range::new(f as u32, f as u32 + 1))
                .collect();
            take.contacts_still
                .add(out.ranges(tag).unwrap(), &still_truth, n);
        }
        for (k, tag) in [IDLE, WALK, RUN].into_iter().enumerate() {
            take.gaits[k].add(out.ranges(tag).unwrap(), true_ranges(k + 2), n);
        }
        let mut turned: Vec<Range> = out.ranges(TURN_LEFT).unwrap().to_vec();
        turned.extend_from_slice(out.ranges(TURN_RIGHT).unwrap());
        take.turns.add(&turned, true_ranges(5), n);
        s += &format!(
            "| {} | {n} | {} | {} | {} | {} | {} | {} |\n",
            clip.name,
            cell(&take.contacts),
            if take.contacts_still.truth == 0 {
                "-".to_owned()
            } else {
                pct(take.contacts_still.recall())
            },
            cell(&take.gaits[0]),
            cell(&take.gaits[1]),
            cell(&take.gaits[2]),
            cell(&take.turns)
        );
        sum(&mut all.contacts, &take.contacts);
        sum(&mut all.contacts_still, &take.contacts_still);
        for k in 0..3 {
            sum(&mut all.gaits[k], &take.gaits[k]);
        }
        sum(&mut all.turns, &take.turns);
    }
    let bold = |p: &PrecisionRecall| format!("**{} / {}**", pct(p.precision()), pct(p.recall()));
    s += &format!(
        "| **all** | {} | {} | **{}** | {} | {} | {} | {} |\n",
        clips.iter().map(|c| c.frame_count).sum::<usize>(),
        bold(&all.contacts),
        pct(all.contacts_still.recall()),
        bold(&all.gaits[0]),
        bold(&all.gaits[1]),
        bold(&all.gaits[2]),
        bold(&all.turns)
    );
    (all, s)
}
