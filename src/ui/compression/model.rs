//! Pure logic of the compression view (no egui): candidates, the background comparison job,
//! summaries per candidate, the Pareto front, decode timing and the `.tlc` export.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::core::compress::{CompressResult, CompressSettings, Control, Preset};
use crate::core::io::ExportFilesError;
use crate::core::tags::ClipId;
use crate::ui::anim_cache::{ClipRequest, load};

/// One set of settings to compare.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// "A", "B", ...
    pub label: String,
    /// The preset it came from; `None` once edited by hand.
    pub preset: Option<Preset>,
    pub settings: CompressSettings,
}

impl Candidate {
    pub fn from_preset(index: usize, preset: Preset) -> Self {
        Self {
            label: candidate_label(index),
            preset: Some(preset),
            settings: preset.settings(),
        }
    }

    /// The preset name, or "custom".
    pub fn describe(&self) -> String {
        self.preset
            .map_or_else(|| "custom".to_owned(), |p| p.name().to_owned())
    }
}

/// "A", "B", ..., "Z", "AA", ...
pub fn candidate_label(index: usize) -> String {
    let mut s = String::new();
    let mut i = index;
    loop {
        s.insert(0, (b'A' + (i % 26) as u8) as char);
        if i < 26 {
            break;
        }
        i = i / 26 - 1;
    }
    s
}

/// The result of one candidate on one clip.
#[derive(Debug, Clone)]
pub struct ClipOutcome {
    pub clip: ClipId,
    pub clip_name: String,
    /// The compressed clip and its report, or why it failed (load or compression error).
    pub result: Result<Arc<CompressResult>, String>,
    /// Mean time to decode one pose from the compressed form, microseconds (measured by decoding
    /// every frame).
    pub decode_us_per_pose: f64,
}

/// A candidate's figures over the clips it was run on.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    pub clips_ok: usize,
    pub clips_failed: usize,
    pub raw_bytes: usize,
    pub compressed_bytes: usize,
    /// `raw_bytes / compressed_bytes` (0 when nothing compressed).
    pub ratio: f64,
    /// Largest error at a frame (ACL's metric), cm.
    pub max_error_cm: f32,
    /// Largest error between frames (decoded vs the original sampled with nlerp), cm.
    pub between_max_error_cm: f32,
    /// Mean over every joint and frame of every clip.
    pub mean_error_cm: f32,
    /// Largest per-clip 99th percentile (a conservative database figure).
    pub p99_error_cm: f32,
    /// Where the largest error is: clip, joint, frame.
    pub worst_clip: String,
    pub worst_joint: String,
    pub worst_frame: usize,
    pub encode_ms: f64,
    /// Mean decode time per pose over all clips' frames, microseconds.
    pub decode_us_per_pose: f64,
}

impl Summary {
    /// The larger of the at-frame and between-frame maxima, cm.
    pub fn overall_max_cm(&self) -> f32 {
        self.max_error_cm.max(self.between_max_error_cm)
    }
}

/// Sums the outcomes of one candidate.
pub fn summarize(outcomes: &[ClipOutcome]) -> Summary {
    let mut s = Summary::default();
    let (mut mean_acc, mut weight_acc) = (0.0f64, 0.0f64);
    let (mut decode_acc, mut decode_frames) = (0.0f64, 0.0f64);
    for o in outcomes {
        let Ok(r) = &o.result else {
            s.clips_failed += 1;
            continue;
        };
        s.clips_ok += 1;
        s.raw_bytes += r.raw_bytes;
        s.compressed_bytes += r.compressed_bytes;
        let samples = (r.clip.frame_count() * r.clip.joint_count()) as f64;
        mean_acc += f64::from(r.error.mean_error_cm) * samples;
        weight_acc += samples;
        s.p99_error_cm = s.p99_error_cm.max(r.error.p99_error_cm);
        s.between_max_error_cm = s.between_max_error_cm.max(r.error.between.max_error_cm);
        if r.error.max_error_cm >= s.max_error_cm {
            s.max_error_cm = r.error.max_error_cm;
            s.worst_clip = o.clip_name.clone();
            s.worst_joint = r.error.worst.joint_name.clone();
            s.worst_frame = r.error.worst.frame;
        }
        s.encode_ms += r.compress_ms;
        decode_acc += o.decode_us_per_pose * r.clip.frame_count() as f64;
        decode_frames += r.clip.frame_count() as f64;
    }
    if s.compressed_bytes > 0 {
        s.ratio = s.raw_bytes as f64 / s.compressed_bytes as f64;
    }
    if weight_acc > 0.0 {
        s.mean_error_cm = (mean_acc / weight_acc) as f32;
    }
    if decode_frames > 0.0 {
        s.decode_us_per_pose = decode_acc / decode_frames;
    }
    s
}

/// Indices of the points on the Pareto front of `(size, error)` (smaller is better on both): no
/// other point is at least as good on both and strictly better on one. Sorted by size.
pub fn pareto_front(points: &[(f64, f64)]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].0.is_finite() && points[i].1.is_finite())
        .collect();
    idx.sort_by(|&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[a].1.total_cmp(&points[b].1))
    });
    let mut front = Vec::new();
    let mut best_err = f64::INFINITY;
    for i in idx {
        if points[i].1 < best_err {
            best_err = points[i].1;
            front.push(i);
        }
    }
    front
}

/// Mean time to decode one pose, microseconds (the command line's measurement).
pub use crate::core::compress::decode_us_per_pose;

/// State of a background comparison, shared with its thread.
#[derive(Debug, Default)]
pub struct JobState {
    /// Fraction done, 0 to 1.
    pub progress: f32,
    /// What is being worked on.
    pub current: String,
    /// `outcomes[candidate]`, in clip order; filled as clips finish.
    pub outcomes: Vec<Vec<ClipOutcome>>,
    pub finished: bool,
    pub cancelled: bool,
}

/// A comparison running in a background thread (the app's one job type, `ui::jobs::Job`); the
/// outcomes fill `state` as clips finish, so the table grows while it runs.
pub struct Job {
    pub state: Arc<Mutex<JobState>>,
    /// The candidates as they were when the job started (the view may be edited meanwhile).
    pub candidates: Vec<Candidate>,
    job: Option<crate::ui::jobs::Job<()>>,
}

impl Job {
    /// Starts compressing every clip of `clips` with every candidate. Clips are loaded in the
    /// thread too.
    pub fn start(clips: Vec<ClipRequest>, candidates: Vec<Candidate>) -> Self {
        let state = Arc::new(Mutex::new(JobState {
            outcomes: vec![Vec::new(); candidates.len()],
            ..JobState::default()
        }));
        let st = Arc::clone(&state);
        let cands = candidates.clone();
        let job = crate::ui::jobs::Job::spawn("compare compression", None, move |p| {
            run(&clips, &cands, &st, p.cancel_flag());
        });
        Self {
            state,
            candidates,
            job: Some(job),
        }
    }

    /// Asks the thread to stop; it finishes soon after with `cancelled` set.
    pub fn cancel(&self) {
        if let Some(j) = &self.job {
            j.cancel();
        }
    }

    /// True once the thread is done (finished or cancelled, or stopped by a panic: the job
    /// catches it, and `run` never says it finished, so the tab waited forever).
    pub fn is_finished(&mut self) -> bool {
        if lock(&self.state).finished {
            return true;
        }
        match self.job.as_mut().and_then(|j| j.poll()) {
            None => false,
            Some(result) => {
                self.job = None;
                let mut s = lock(&self.state);
                s.finished = true;
                if let Err(e) = result {
                    s.current = format!("the comparison stopped: {e}");
                }
                true
            }
        }
    }

    /// Waits for the thread and returns the final state.
    pub fn join(self) -> JobState {
        self.join_with_candidates().0
    }

    /// Waits for the thread and returns the final state and the candidates it ran.
    pub fn join_with_candidates(mut self) -> (JobState, Vec<Candidate>) {
        if let Some(j) = self.job.take()
            && let Err(e) = j.wait()
        {
            let mut s = lock(&self.state);
            s.finished = true;
            s.current = e;
        }
        let state = std::mem::take(&mut *lock(&self.state));
        (state, std::mem::take(&mut self.candidates))
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Locks a mutex, recovering the data if a thread panicked while holding it.
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn run(
    clips: &[ClipRequest],
    candidates: &[Candidate],
    state: &Mutex<JobState>,
    cancel: &AtomicBool,
) {
    let total = (clips.len() * candidates.len()).max(1) as f32;
    'clips: for (ci, request) in clips.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        lock(state).current = format!("loading {}", request.name);
        let loaded = load(request);
        for (k, cand) in candidates.iter().enumerate() {
            if cancel.load(Ordering::Relaxed) {
                break 'clips;
            }
            let done = (ci * candidates.len() + k) as f32;
            lock(state).current = format!("{}: candidate {}", request.name, cand.label);
            let outcome = match &loaded {
                Err(e) => ClipOutcome {
                    clip: request.clip,
                    clip_name: request.name.clone(),
                    result: Err(e.clone()),
                    decode_us_per_pose: 0.0,
                },
                Ok(clip) => {
                    let mut progress = |f: f32| {
                        lock(state).progress = (done + f.clamp(0.0, 1.0)) / total;
                    };
                    let r = crate::core::compress::compress_with(
                        clip,
                        &cand.settings,
                        Control {
                            progress: &mut progress,
                            cancel,
                        },
                    );
                    match r {
                        Err(crate::core::compress::CompressError::Cancelled) => break 'clips,
                        Err(e) => ClipOutcome {
                            clip: request.clip,
                            clip_name: request.name.clone(),
                            result: Err(format!("{}: {e}", request.name)),
                            decode_us_per_pose: 0.0,
                        },
                        Ok(r) => ClipOutcome {
                            clip: request.clip,
                            clip_name: request.name.clone(),
                            decode_us_per_pose: decode_us_per_pose(&r.clip),
                            result: Ok(Arc::new(r)),
                        },
                    }
                }
            };
            let mut s = lock(state);
            s.outcomes[k].push(outcome);
            s.progress = (done + 1.0) / total;
        }
    }
    let mut s = lock(state);
    s.cancelled = cancel.load(Ordering::Relaxed);
    s.finished = true;
    s.current.clear();
}

/// Writes the compressed clips of `outcomes` (failed ones skipped) as `NAME.tlc` into `dir`, each
/// atomically. Returns the files written.
pub fn export_tlc(
    outcomes: &[&ClipOutcome],
    dir: &Path,
    replace: bool,
) -> Result<Vec<PathBuf>, ExportFilesError> {
    if !dir.is_dir() {
        return Err(ExportFilesError::Other(format!(
            "{}: not a folder",
            dir.display()
        )));
    }
    let (paths, results) = tlc_export_files(outcomes, dir);
    if paths.is_empty() {
        return Err(ExportFilesError::Other(
            "nothing to export: no clip compressed with this candidate".into(),
        ));
    }
    if !replace && let Some(e) = crate::core::io::existing_files(paths.iter().map(|p| p.as_path()))
    {
        return Err(e);
    }
    for (path, r) in paths.iter().zip(results) {
        crate::core::io::write_atomic(path, r.clip.bytes(), false)
            .map_err(|e| ExportFilesError::Other(format!("{}: {e}", path.display())))?;
    }
    Ok(paths)
}

/// The files [`export_tlc`] writes into `dir` (one per clip compressed; two clips never share
/// one) and what goes into each.
pub fn tlc_export_files<'a>(
    outcomes: &[&'a ClipOutcome],
    dir: &Path,
) -> (Vec<PathBuf>, Vec<&'a CompressResult>) {
    let ok: Vec<(&str, &CompressResult)> = outcomes
        .iter()
        .filter_map(|o| Some((o.clip_name.as_str(), o.result.as_deref().ok()?)))
        .collect();
    let names: Vec<&str> = ok.iter().map(|(n, _)| *n).collect();
    let paths = crate::core::io::export_files(dir, &names, ".tlc");
    (paths, ok.into_iter().map(|(_, r)| r).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::anim_cache::resolve;
    use crate::ui::project::Project;

    #[test]
    fn labels() {
        assert_eq!(candidate_label(0), "A");
        assert_eq!(candidate_label(25), "Z");
        assert_eq!(candidate_label(26), "AA");
        assert_eq!(candidate_label(27), "AB");
    }

    #[test]
    fn pareto_front_matches_a_brute_force() {
        let pts = [
            (10.0, 5.0),
            (20.0, 1.0),
            (15.0, 5.0),
            (30.0, 1.0),
            (5.0, 9.0),
            (12.0, 3.0),
            (f64::NAN, 0.0),
        ];
        let front = pareto_front(&pts);
        let dominated = |i: usize| {
            pts.iter().enumerate().any(|(j, q)| {
                j != i && q.0 <= pts[i].0 && q.1 <= pts[i].1 && (q.0 < pts[i].0 || q.1 < pts[i].1)
            })
        };
        let brute: Vec<usize> = (0..pts.len())
            .filter(|&i| pts[i].0.is_finite() && !dominated(i))
            .collect();
        let mut sorted = front.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, brute);
        assert_eq!(front, vec![4, 0, 5, 1]);
    }

    #[test]
    fn job_runs_to_completion_and_summaries_add_up() {
        let project = Project::demo();
        let clips: Vec<_> = (0..2).map(|c| resolve(&project, c).unwrap()).collect();
        let cands = vec![
            Candidate::from_preset(0, Preset::Auto),
            Candidate::from_preset(1, Preset::Raw),
        ];
        let job = Job::start(clips, cands);
        let state = job.join();
        assert!(state.finished && !state.cancelled);
        assert_eq!(state.outcomes.len(), 2);
        let auto = summarize(&state.outcomes[0]);
        let raw = summarize(&state.outcomes[1]);
        assert_eq!(auto.clips_ok, 2);
        assert!(auto.ratio > raw.ratio, "{} vs {}", auto.ratio, raw.ratio);
        assert!(auto.max_error_cm <= 0.01, "{}", auto.max_error_cm);
        assert!(
            auto.between_max_error_cm <= 0.01,
            "{}",
            auto.between_max_error_cm
        );
        assert!(auto.between_max_error_cm > 0.0);
        let sizes: usize = state.outcomes[0]
            .iter()
            .map(|o| o.result.as_ref().unwrap().compressed_bytes)
            .sum();
        assert_eq!(auto.compressed_bytes, sizes);
        assert!(auto.decode_us_per_pose > 0.0);
        let dir = std::env::temp_dir().join(format!("taglane-export-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let refs: Vec<&ClipOutcome> = state.outcomes[0].iter().collect();
        let files = export_tlc(&refs, &dir, false).unwrap();
        assert_eq!(files.len(), 2);
        let bytes = std::fs::read(&files[0]).unwrap();
        assert!(crate::core::compress::CompressedClip::from_bytes(bytes).is_ok());
        // Again: refused unless replacing, and the files left as they are.
        std::fs::write(&files[1], b"kept").unwrap();
        assert!(matches!(
            export_tlc(&refs, &dir, false),
            Err(ExportFilesError::Exists { count: 2, .. })
        ));
        assert_eq!(std::fs::read(&files[1]).unwrap(), b"kept");
        assert_eq!(export_tlc(&refs, &dir, true).unwrap(), files);
        assert_ne!(std::fs::read(&files[1]).unwrap(), b"kept");
        std::fs::remove_dir_all(&dir).ok();
        assert!(export_tlc(&refs, Path::new("/nonexistent/x"), false).is_err());
    }

    #[test]
    fn cancel_stops_the_job() {
        let project = Project::demo();
        let clips: Vec<_> = (0..project.doc.clips.len() as ClipId)
            .map(|c| resolve(&project, c).unwrap())
            .collect();
        let job = Job::start(clips, vec![Candidate::from_preset(0, Preset::Auto)]);
        job.cancel();
        let state = job.join();
        assert!(state.finished && state.cancelled);
        assert!(state.outcomes[0].len() < project.doc.clips.len());
    }

    #[test]
    fn a_failed_load_is_an_outcome_not_a_panic() {
        let request = ClipRequest {
            clip: 0,
            name: "x".into(),
            frames: 1,
            source: crate::ui::anim_cache::ClipSource::File("/nonexistent/x.bvh".into()),
        };
        let state = Job::start(vec![request], vec![Candidate::from_preset(0, Preset::Auto)]).join();
        let s = summarize(&state.outcomes[0]);
        assert_eq!((s.clips_ok, s.clips_failed), (0, 1));
    }
}
