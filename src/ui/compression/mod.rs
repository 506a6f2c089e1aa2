//! The compression comparison view: candidates (presets or edited settings), a background
//! comparison over the current clip or the whole project with progress and cancel, a table per
//! candidate, plots (error over time, per-joint error, size vs error with the Pareto front), the
//! ghost overlay data for the viewport, "jump to worst frame", and the `.tlc` export.

pub mod model;

use std::path::PathBuf;
use std::sync::Arc;

use egui::{Color32, Ui};
use egui_plot::{Bar, BarChart, Legend, Line, Plot, PlotPoints, Points, VLine};
use glam::Vec3;

use self::model::{
    Candidate, ClipOutcome, Job, Summary, export_tlc, lock, pareto_front, summarize,
    tlc_export_files,
};
use crate::core::anim::{Clip, RotationInterp, SampleSettings, Transform, local_to_model};
use crate::core::compress::metric::Shell;
use crate::core::compress::settings::WIDTHS;
use crate::core::compress::{BitRate, Preset, RotationFormat};
use crate::core::io::ExportFilesError;
use crate::core::tags::ClipId;
use crate::ui::anim_cache::resolve;
use crate::ui::command::AppCommand;
use crate::ui::theme;
use crate::ui::view::ClipContext;

/// Which clips a comparison runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    #[default]
    CurrentClip,
    AllClips,
}

/// A finished (or cancelled) comparison.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub candidates: Vec<Candidate>,
    /// `outcomes[candidate]`, one per clip compressed.
    pub outcomes: Vec<Vec<ClipOutcome>>,
    pub cancelled: bool,
    /// The clips it ran on, as they were.
    pub on: Compared,
}

/// The project's clips as they were when a comparison started: its results stand for them only.
/// Another project opened, a clip relinked to another take, given another unit or length, or
/// clips added or removed (the document's `clip_data_version`, which every such edit renews, as
/// find-similar's features follow it; a rename keeps it), and the table, the ghost, "jump to
/// worst frame" and the export would show or write another take's results (they are found by
/// clip number).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Compared {
    project: Option<PathBuf>,
    clip_data_version: u64,
}

impl Compared {
    fn of(project: &crate::ui::project::Project) -> Self {
        Self {
            project: project.path.clone(),
            clip_data_version: project.doc.clip_data_version,
        }
    }

    /// Whether `project`'s clips are still those compared.
    pub fn holds(&self, project: &crate::ui::project::Project) -> bool {
        self.project == project.path && self.clip_data_version == project.doc.clip_data_version
    }
}

impl Comparison {
    /// The table figures of candidate `k` over every clip it ran on.
    pub fn summary(&self, k: usize) -> Option<Summary> {
        self.outcomes.get(k).map(|o| summarize(o))
    }

    /// Candidate `k`'s outcome on clip `clip`.
    pub fn outcome(&self, k: usize, clip: ClipId) -> Option<&ClipOutcome> {
        self.outcomes.get(k)?.iter().find(|o| o.clip == clip)
    }
}

/// The decompressed candidate at the playhead, for the viewport.
pub struct Ghost {
    /// Model-space joint positions of the decoded pose, errors scaled by `ghost_scale`.
    pub positions: Vec<Vec3>,
    /// Error of each joint at the playhead (ACL's metric), cm.
    pub errors_cm: Vec<f32>,
    /// Joint colours by error (green 0 to red at the clip's maximum error).
    pub colors: Vec<Color32>,
}

/// State of the compression view.
pub struct CompressionView {
    pub candidates: Vec<Candidate>,
    pub scope: Scope,
    /// The running comparison.
    pub job: Option<Job>,
    /// The last finished comparison.
    pub comparison: Option<Comparison>,
    /// The candidate shown in the plots, the ghost and exported.
    pub chosen: usize,
    /// The ghost is drawn at `original + ghost_scale * (decoded - original)` so small errors show.
    pub ghost_scale: f32,
    /// What the running comparison was started on.
    started_on: Compared,
    /// Folder for exports; asked with a dialog when `None`.
    pub export_dir: Option<PathBuf>,
    /// Result of the last action (export, errors).
    pub status: Option<String>,
    /// An export writing files in the background.
    pub export_job: Option<crate::ui::jobs::Job<Result<Vec<PathBuf>, String>>>,
    /// The files written by the last finished export, or why it failed.
    pub last_export: Option<Result<Vec<PathBuf>, String>>,
}

impl Default for CompressionView {
    fn default() -> Self {
        Self {
            candidates: vec![
                Candidate::from_preset(0, Preset::Auto),
                Candidate::from_preset(1, Preset::SmallestThree32),
            ],
            scope: Scope::CurrentClip,
            job: None,
            comparison: None,
            chosen: 0,
            started_on: Compared::default(),
            ghost_scale: 1.0,
            export_dir: None,
            status: None,
            export_job: None,
            last_export: None,
        }
    }
}

impl CompressionView {
    /// True while a comparison runs.
    pub fn is_running(&self) -> bool {
        self.job.is_some()
    }

    /// Starts a comparison of every candidate on the scope's clips (cancels a running one).
    pub fn start(&mut self, project: &crate::ui::project::Project, current: ClipId) {
        if let Some(j) = self.job.take() {
            j.cancel();
        }
        let ids: Vec<ClipId> = match self.scope {
            Scope::CurrentClip => vec![current],
            Scope::AllClips => (0..project.doc.clips.len() as ClipId).collect(),
        };
        self.started_on = Compared::of(project);
        let mut requests = Vec::new();
        let mut errors = Vec::new();
        for id in ids {
            match resolve(project, id) {
                Ok(r) => requests.push(r),
                Err(e) => errors.push(e),
            }
        }
        self.status = errors
            .first()
            .map(|e| format!("skipped {} clip(s): {e}", errors.len()));
        if requests.is_empty() {
            self.status = Some(
                self.status
                    .clone()
                    .unwrap_or_else(|| "no clip to compress".into()),
            );
            return;
        }
        self.job = Some(Job::start(requests, self.candidates.clone()));
    }

    /// Collects a finished job; keeps repainting while one runs. Results (finished or coming) of
    /// clips that `project` no longer holds as they were are dropped, with a status that says so.
    pub fn poll(&mut self, ctx: &egui::Context, project: &crate::ui::project::Project) {
        self.poll_export(ctx);
        let stale =
            "the clips compared changed (another project, a relinked take, a unit): compare again";
        if self
            .comparison
            .as_ref()
            .is_some_and(|c| !c.on.holds(project))
        {
            self.comparison = None;
            self.status = Some(stale.into());
        }
        if self.job.is_some() && !self.started_on.holds(project) {
            if let Some(j) = self.job.take() {
                j.cancel();
            }
            self.status = Some(stale.into());
        }
        let Some(job) = &mut self.job else { return };
        if !job.is_finished() {
            // The table fills as clips finish: a few times a second is enough (every frame kept
            // a core busy drawing for the minutes an all-clips run takes).
            ctx.request_repaint_after(std::time::Duration::from_millis(50));
            return;
        }
        if let Some(job) = self.job.take() {
            let (state, candidates) = job.join_with_candidates();
            // The candidate shown is one of those compared (the list may have grown or shrunk
            // while it ran).
            self.chosen = self.chosen.min(candidates.len().saturating_sub(1));
            // A run that stopped inside a clip (cancelled, or a panic) compared the candidates
            // before it on one more clip than those after: each is kept on the clips every one
            // finished (a candidate with none summed to 0 bytes at 0 cm and took the Pareto front
            // alone).
            let (outcomes, trimmed) = common_clips(state.outcomes);
            self.comparison = Some(Comparison {
                candidates,
                outcomes,
                cancelled: state.cancelled || trimmed,
                on: std::mem::take(&mut self.started_on),
            });
            if state.cancelled {
                self.status =
                    Some("cancelled: the table shows the clips every candidate finished".into());
            } else if !state.current.is_empty() {
                self.status = Some(state.current);
            }
        }
    }

    /// Progress of the running comparison, 0 to 1, and what it is doing.
    pub fn progress(&self) -> Option<(f32, String)> {
        let job = self.job.as_ref()?;
        let s = lock(&job.state);
        Some((s.progress, s.current.clone()))
    }

    /// The chosen candidate decoded at `time_s` over clip `clip` (the current clip `original`), with
    /// per-joint errors; `None` without a result for that clip.
    pub fn ghost(
        &self,
        original: &Clip,
        clip: ClipId,
        time_s: f64,
        _settings: &SampleSettings,
    ) -> Option<Ghost> {
        let outcome = self.comparison.as_ref()?.outcome(self.chosen, clip)?;
        let r = outcome.result.as_ref().ok()?;
        let n = original.joint_count();
        if r.clip.joint_count() != n {
            return None;
        }
        let mut local = vec![Transform::IDENTITY; n];
        let mut orig = vec![Transform::IDENTITY; n];
        let mut dec = vec![Transform::IDENTITY; n];
        // The original as the metric sees it (clamped, nlerp like the decoder).
        crate::core::anim::sample_clip(
            original,
            time_s,
            &SampleSettings::clamped(RotationInterp::Nlerp),
            &mut local,
        )
        .ok()?;
        local_to_model(&original.skeleton, &local, &mut orig).ok()?;
        r.clip.sample_pose(time_s as f32, &mut local);
        local_to_model(&original.skeleton, &local, &mut dec).ok()?;
        let shell = Shell::new(r.settings.shell_cm, original.unit_cm);
        let errors_cm: Vec<f32> = orig
            .iter()
            .zip(&dec)
            .map(|(o, d)| shell.error_cm(o, d))
            .collect();
        let scale = r.error.max_error_cm.max(1e-6);
        let k = if self.ghost_scale.is_finite() {
            self.ghost_scale.max(0.0)
        } else {
            1.0
        };
        Some(Ghost {
            positions: orig
                .iter()
                .zip(&dec)
                .map(|(o, d)| o.translation + (d.translation - o.translation) * k)
                .collect(),
            colors: errors_cm
                .iter()
                .map(|e| theme::error_color(e / scale))
                .collect(),
            errors_cm,
        })
    }

    /// Starts writing the chosen candidate's compressed clips (`only`: one clip, else all) into
    /// `export_dir` in a background thread; the result lands in `last_export`.
    pub fn start_export(
        &mut self,
        only: Option<ClipId>,
        replace: bool,
    ) -> Result<(), ExportFilesError> {
        let other = |s: &str| ExportFilesError::Other(s.to_owned());
        if self.export_job.is_some() {
            return Err(other("an export is already running"));
        }
        let dir = self
            .export_dir
            .clone()
            .ok_or_else(|| other("choose an export folder first"))?;
        let cmp = self
            .comparison
            .as_ref()
            .ok_or_else(|| other("run a comparison first"))?;
        let outcomes: Vec<ClipOutcome> = cmp
            .outcomes
            .get(self.chosen)
            .map(|o| {
                o.iter()
                    .filter(|o| only.is_none_or(|c| o.clip == c))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        // Asked here too, so that the app can ask before anything is written.
        if !replace {
            let refs: Vec<&ClipOutcome> = outcomes.iter().collect();
            let (paths, _) = tlc_export_files(&refs, &dir);
            if let Some(e) = crate::core::io::existing_files(paths.iter().map(|p| p.as_path())) {
                return Err(e);
            }
        }
        let job = crate::ui::jobs::Job::spawn("export .tlc files", None, move |p| {
            p.set_total(outcomes.len() as u64);
            let refs: Vec<&ClipOutcome> = outcomes.iter().collect();
            export_tlc(&refs, &dir, replace).map_err(|e| e.to_string())
        });
        self.export_job = Some(job);
        Ok(())
    }

    /// True while an export runs.
    pub fn is_exporting(&self) -> bool {
        self.export_job.is_some()
    }

    fn poll_export(&mut self, ctx: &egui::Context) {
        let Some(job) = self.export_job.as_mut() else {
            return;
        };
        let Some(result) = job.poll() else {
            ctx.request_repaint_after(std::time::Duration::from_millis(50));
            return;
        };
        self.export_job = None;
        let result = result.and_then(|r| r);
        self.status = Some(match &result {
            Ok(files) => format!("exported {} file(s)", files.len()),
            Err(e) => format!("export failed: {e}"),
        });
        self.last_export = Some(result);
    }

    /// The compression tab.
    pub fn compression_ui(
        &mut self,
        ui: &mut Ui,
        input: &ClipContext<'_>,
        clip: Option<&Arc<Clip>>,
        queue: &mut Vec<AppCommand>,
    ) {
        ui.label("Candidates");
        let mut remove = None;
        let can_remove = self.candidates.len() > 2;
        for (k, cand) in self.candidates.iter_mut().enumerate() {
            ui.push_id(k, |ui| {
                ui.horizontal(|ui| {
                    egui::ComboBox::from_label(format!("Candidate {}", cand.label))
                        .selected_text(cand.describe())
                        .show_ui(ui, |ui| {
                            for p in Preset::ALL {
                                if ui
                                    .selectable_label(cand.preset == Some(p), p.name())
                                    .clicked()
                                {
                                    cand.preset = Some(p);
                                    cand.settings = p.settings();
                                }
                            }
                            if ui
                                .selectable_label(cand.preset.is_none(), "custom")
                                .clicked()
                            {
                                cand.preset = None;
                            }
                        });
                    if can_remove && ui.button(format!("Remove {}", cand.label)).clicked() {
                        remove = Some(k);
                    }
                });
                if cand.preset.is_none() {
                    settings_ui(ui, cand);
                }
            });
        }
        if let Some(k) = remove {
            self.candidates.remove(k);
            for (i, c) in self.candidates.iter_mut().enumerate() {
                c.label = model::candidate_label(i);
            }
        }
        if ui.button("Add candidate").clicked() {
            let n = self.candidates.len();
            let preset = Preset::ALL[n % Preset::ALL.len()];
            self.candidates.push(Candidate::from_preset(n, preset));
        }
        ui.horizontal(|ui| {
            ui.label("Clips");
            ui.selectable_value(&mut self.scope, Scope::CurrentClip, "Current clip");
            ui.selectable_value(&mut self.scope, Scope::AllClips, "All clips");
        });
        match self.progress() {
            Some((p, what)) => {
                ui.horizontal(|ui| {
                    ui.add(
                        egui::ProgressBar::new(p)
                            .show_percentage()
                            .desired_width(200.0),
                    );
                    if ui.button("Cancel").clicked()
                        && let Some(j) = &self.job
                    {
                        j.cancel();
                    }
                });
                ui.weak(what);
            }
            None => {
                if ui.button("Compress").clicked() {
                    self.start(input.project, input.clip);
                }
            }
        }
        if let Some(s) = &self.status {
            ui.label(s);
        }
        let Some(cmp) = &self.comparison else {
            ui.weak("Compress to compare the candidates.");
            return;
        };
        if cmp.cancelled {
            ui.colored_label(
                theme::palette(input.dark).warning,
                "cancelled (partial results)",
            );
        }
        ui.separator();
        table_ui(ui, cmp, input.clip);

        ui.separator();
        ui.horizontal_wrapped(|ui| {
            let label = cmp
                .candidates
                .get(self.chosen)
                .map_or_else(String::new, |c| format!("{} ({})", c.label, c.describe()));
            egui::ComboBox::from_label("Show candidate")
                .selected_text(label)
                .show_ui(ui, |ui| {
                    for (k, c) in cmp.candidates.iter().enumerate() {
                        ui.selectable_value(
                            &mut self.chosen,
                            k,
                            format!("{} ({})", c.label, c.describe()),
                        );
                    }
                });
        });
        ui.horizontal_wrapped(|ui| {
            let l = ui.label("Ghost error scale");
            ui.add(
                egui::DragValue::new(&mut self.ghost_scale)
                    .range(1.0..=1000.0)
                    .speed(1.0)
                    .prefix("x"),
            )
            .labelled_by(l.id);
        });
        let current = cmp.outcome(self.chosen, input.clip);
        let worst_frame = current
            .and_then(|o| o.result.as_ref().ok())
            .map(|r| r.error.worst.frame);
        ui.horizontal_wrapped(|ui| {
            if ui
                .add_enabled(
                    worst_frame.is_some(),
                    egui::Button::new("Jump to worst frame"),
                )
                .clicked()
                && let Some(f) = worst_frame
            {
                // Paused there: while playing, the playhead landed on it and moved on.
                queue.push(AppCommand::Stop);
                queue.push(AppCommand::SetPlayhead(f as f64));
            }
            let between = current
                .and_then(|o| o.result.as_ref().ok())
                .map(|r| f64::from(r.error.between.worst.position));
            if ui
                .add_enabled(
                    between.is_some(),
                    egui::Button::new("Jump to worst between frames"),
                )
                .clicked()
                && let Some(p) = between
            {
                queue.push(AppCommand::Stop);
                queue.push(AppCommand::SetPlayhead(p));
            }
        });
        // On its own line, wrapped: a long line would widen the side panel over the timeline.
        if let Some(r) = current.and_then(|o| o.result.as_ref().ok()) {
            let b = &r.error.between.worst;
            ui.add(
                egui::Label::new(format!(
                    "worst: {} at frame {} ({:.4} cm); between frames {} at frame {:.2} ({:.4} cm)",
                    r.error.worst.joint_name,
                    r.error.worst.frame,
                    r.error.worst.error_cm,
                    b.joint_name,
                    b.position,
                    b.error_cm
                ))
                .wrap(),
            );
        }
        per_clip_ui(ui, cmp, self.chosen, queue);
        plots_ui(ui, cmp, self.chosen, input, clip);

        ui.separator();
        ui.label("Export the chosen candidate (.tlc)");
        ui.horizontal_wrapped(|ui| {
            if ui.button("Choose folder...").clicked() {
                queue.push(AppCommand::AskPath(Box::new(
                    crate::ui::file_dialog::PathRequest::new(
                        "Export compressed clips to",
                        crate::ui::file_dialog::PathKind::Folder,
                        AppCommand::SetCompressionExportDir(None),
                    ),
                )));
            }
            match &self.export_dir {
                Some(d) => ui.weak(d.display().to_string()),
                None => ui.weak("no folder chosen"),
            };
        });
        let mut export = None;
        ui.horizontal_wrapped(|ui| {
            let idle = self.export_job.is_none();
            if ui
                .add_enabled(idle, egui::Button::new("Export this clip"))
                .clicked()
            {
                export = Some(Some(input.clip));
            }
            if ui
                .add_enabled(idle, egui::Button::new("Export all clips"))
                .clicked()
            {
                export = Some(None);
            }
        });
        if let Some(only) = export {
            queue.push(AppCommand::CompressionExport {
                only,
                dir: self.export_dir.clone(),
                replace: false,
            });
        }
    }
}

fn settings_ui(ui: &mut Ui, cand: &mut Candidate) {
    let s = &mut cand.settings;
    ui.indent("settings", |ui| {
        egui::ComboBox::from_label(format!("Rotation format {}", cand.label))
            .selected_text(format!("{:?}", s.rotation_format))
            .show_ui(ui, |ui| {
                for f in [
                    RotationFormat::Full,
                    RotationFormat::DropW,
                    RotationFormat::SmallestThree32,
                    RotationFormat::SmallestThree48,
                ] {
                    ui.selectable_value(&mut s.rotation_format, f, format!("{f:?}"));
                }
            });
        let auto = matches!(s.bits, BitRate::Auto { .. });
        ui.horizontal_wrapped(|ui| {
            if ui.selectable_label(auto, "auto bits").clicked() && !auto {
                s.bits = BitRate::default();
            }
            if ui.selectable_label(!auto, "fixed bits").clicked() && auto {
                s.bits = BitRate::Fixed {
                    rotation_bits: 16,
                    translation_bits: 16,
                    scale_bits: 16,
                };
            }
        });
        match &mut s.bits {
            BitRate::Auto { error_cm } => {
                ui.horizontal(|ui| {
                    let l = ui.label("Error budget (cm)");
                    ui.add(
                        egui::DragValue::new(error_cm)
                            .range(0.0001..=10.0)
                            .speed(0.001),
                    )
                    .labelled_by(l.id);
                });
            }
            BitRate::Fixed {
                rotation_bits,
                translation_bits,
                scale_bits,
            } => {
                for (name, b) in [
                    ("Rotation bits", rotation_bits),
                    ("Translation bits", translation_bits),
                    ("Scale bits", scale_bits),
                ] {
                    egui::ComboBox::from_label(format!("{name} {}", cand.label))
                        .selected_text(b.to_string())
                        .show_ui(ui, |ui| {
                            for w in WIDTHS.iter().filter(|w| **w > 0) {
                                ui.selectable_value(b, *w, w.to_string());
                            }
                        });
                }
            }
        }
        ui.horizontal_wrapped(|ui| {
            let l = ui.label("Segment frames");
            // 0 is one segment for the whole clip (the whole-clip presets): a range from 1 put
            // such a candidate at 1 the moment "custom" was picked.
            ui.add(egui::DragValue::new(&mut s.segment_frames).range(0..=u16::MAX))
                .labelled_by(l.id)
                .on_hover_text("Frames a segment holds; 0: one segment for the whole clip");
            let l = ui.label("Frame step");
            ui.add(egui::DragValue::new(&mut s.frame_step).range(1..=16))
                .labelled_by(l.id);
        });
        ui.checkbox(&mut s.segment_ranges, "Per-segment ranges");
        ui.checkbox(&mut s.constant_tracks, "Constant tracks");
        ui.checkbox(&mut s.rest_pose_elision, "Rest-pose elision");
        if let Err(e) = s.validate() {
            ui.label(format!("invalid: {e}"));
        }
    });
}

/// Each candidate's outcomes on the clips every candidate finished (the run goes clip by clip,
/// each clip through every candidate), and whether any was left out.
fn common_clips(mut outcomes: Vec<Vec<ClipOutcome>>) -> (Vec<Vec<ClipOutcome>>, bool) {
    let done = outcomes.iter().map(Vec::len).min().unwrap_or(0);
    let trimmed = outcomes.iter().any(|o| o.len() > done);
    for o in &mut outcomes {
        o.truncate(done);
    }
    (outcomes, trimmed)
}

fn table_ui(ui: &mut Ui, cmp: &Comparison, current: ClipId) {
    let has_current = (0..cmp.candidates.len()).any(|k| cmp.outcome(k, current).is_some());
    let clips = cmp.outcomes.first().map_or(0, Vec::len);
    ui.label(format!("Results over {clips} clip(s)"));
    // One column a candidate and one row a figure: a comparison holds a few candidates and nine
    // figures, and the panel is narrow (a row a candidate needed scrolling for its last columns).
    let summaries: Vec<_> = cmp
        .candidates
        .iter()
        .enumerate()
        .filter_map(|(k, cand)| cmp.summary(k).map(|s| (cand, s)))
        .collect();
    type Cell = fn(&Summary, usize) -> String;
    let rows: [(&str, &str, Cell); 9] = [
        ("size (B)", "compressed size in bytes", |s, _| {
            s.compressed_bytes.to_string()
        }),
        ("ratio", "uncompressed size / compressed size", |s, _| {
            format!("{:.2}", s.ratio)
        }),
        (
            "max (cm)",
            "largest error at a frame (ACL's metric: vertices 3 cm along each joint's axes)",
            |s, _| format!("{:.4}", s.max_error_cm),
        ),
        (
            "worst",
            "where the largest error at a frame is: joint @ frame",
            |s, clips| {
                if clips > 1 {
                    format!("{} {} @{}", s.worst_clip, s.worst_joint, s.worst_frame)
                } else {
                    format!("{} @{}", s.worst_joint, s.worst_frame)
                }
            },
        ),
        (
            "between (cm)",
            "largest error between frames: the decoded pose against the original sampled with nlerp",
            |s, _| format!("{:.4}", s.between_max_error_cm),
        ),
        (
            "mean (cm)",
            "mean error over every joint and frame of every clip",
            |s, _| format!("{:.4}", s.mean_error_cm),
        ),
        (
            "p99 (cm)",
            "largest 99th percentile of a clip's errors",
            |s, _| format!("{:.4}", s.p99_error_cm),
        ),
        ("encode (ms)", "time to compress the clips", |s, _| {
            format!("{:.1}", s.encode_ms)
        }),
        (
            "decode (us/pose)",
            "mean time to decode one pose, over every frame of the clips",
            |s, _| format!("{:.2}", s.decode_us_per_pose),
        ),
    ];
    // The figures' names stay in view; the candidates' columns scroll beside them when there
    // are more than the panel holds. Each cell is one line (cut, whole in its tooltip), so the
    // rows of the two grids line up.
    let names = std::iter::once(("candidate", "the candidate's letter"))
        .chain(std::iter::once(("settings", "the candidate's preset")))
        .chain(rows.iter().map(|(name, hover, _)| (*name, *hover)));
    ui.horizontal_top(|ui| {
        egui::Grid::new("compression_names")
            .striped(true)
            .show(ui, |ui| {
                for (k, (name, hover)) in names.enumerate() {
                    let text = if k == 0 {
                        egui::RichText::new(name).strong()
                    } else {
                        egui::RichText::new(name)
                    };
                    ui.label(text).on_hover_text(hover);
                    ui.end_row();
                }
            });
        egui::ScrollArea::horizontal()
            .id_salt("compression_table")
            .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible)
            .show(ui, |ui| {
                egui::Grid::new("compression_grid")
                    .striped(true)
                    .max_col_width(120.0)
                    .num_columns(summaries.len())
                    .show(ui, |ui| {
                        let cell = |ui: &mut Ui, text: egui::RichText, hover: &str| {
                            ui.add(egui::Label::new(text).truncate())
                                .on_hover_text(hover);
                        };
                        for (cand, _) in &summaries {
                            let text = egui::RichText::new(&cand.label).strong();
                            cell(ui, text, &cand.describe());
                        }
                        ui.end_row();
                        for (cand, _) in &summaries {
                            cell(ui, cand.describe().into(), &cand.describe());
                        }
                        ui.end_row();
                        for (_, hover, value) in &rows {
                            for (_, s) in &summaries {
                                // A candidate that compressed no clip has no figures.
                                let text = if s.clips_ok == 0 {
                                    "—".to_owned()
                                } else {
                                    value(s, clips)
                                };
                                cell(ui, text.clone().into(), &format!("{text}: {hover}"));
                            }
                            ui.end_row();
                        }
                    });
            });
    });
    if !has_current && clips > 0 {
        ui.weak("The current clip is not in this comparison.");
    }
    for outcomes in &cmp.outcomes {
        for o in outcomes {
            if let Err(e) = &o.result {
                ui.label(format!("{}: {e}", o.clip_name));
            }
        }
    }
}

/// The chosen candidate's figures per clip; "Show" opens the clip at its worst frame.
fn per_clip_ui(ui: &mut Ui, cmp: &Comparison, chosen: usize, queue: &mut Vec<AppCommand>) {
    let Some(outcomes) = cmp.outcomes.get(chosen).filter(|o| o.len() > 1) else {
        return;
    };
    egui::CollapsingHeader::new(format!("Per clip ({} clips)", outcomes.len()))
        .id_salt("per_clip")
        .show(ui, |ui| {
            egui::ScrollArea::horizontal()
                .id_salt("per_clip_scroll")
                // A visible bar: the last columns may lie past the panel's edge.
                .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible)
                .show(ui, |ui| {
                    egui::Grid::new("per_clip_grid")
                        .striped(true)
                        .show(ui, |ui| {
                            for h in [
                                "clip",
                                "",
                                "size (B)",
                                "ratio",
                                "max (cm)",
                                "worst",
                                "between (cm)",
                            ] {
                                ui.strong(h);
                            }
                            ui.end_row();
                            for (k, o) in outcomes.iter().enumerate() {
                                ui.label(&o.clip_name);
                                match &o.result {
                                    Ok(r) => {
                                        let show = ui
                                            .push_id(k, |ui| ui.button("Show"))
                                            .inner
                                            .on_hover_text("Open this clip at its worst frame");
                                        if show.clicked() {
                                            queue.push(AppCommand::SelectClip(o.clip));
                                            queue.push(AppCommand::Stop);
                                            queue.push(AppCommand::SetPlayhead(
                                                r.error.worst.frame as f64,
                                            ));
                                        }
                                        ui.label(r.compressed_bytes.to_string());
                                        ui.label(format!("{:.2}", r.ratio));
                                        ui.label(format!("{:.4}", r.error.max_error_cm));
                                        ui.label(format!(
                                            "{} @{}",
                                            r.error.worst.joint_name, r.error.worst.frame
                                        ));
                                        ui.label(format!("{:.4}", r.error.between.max_error_cm));
                                    }
                                    Err(e) => {
                                        ui.label("");
                                        ui.label(e);
                                    }
                                }
                                ui.end_row();
                            }
                        });
                });
        });
}

fn plots_ui(
    ui: &mut Ui,
    cmp: &Comparison,
    chosen: usize,
    input: &ClipContext<'_>,
    clip: Option<&Arc<Clip>>,
) {
    let current = cmp
        .outcome(chosen, input.clip)
        .and_then(|o| o.result.as_ref().ok());
    if let Some(r) = current {
        ui.label("Error over time of the worst joints (cm), at frames and a quarter, half and three quarters between them");
        let frame = input.playhead;
        // Room above the curves for the legend (top right), so that it hides none of them.
        let top = r
            .error
            .worst_joints
            .iter()
            .flat_map(|j| j.curve())
            .map(|(_, e)| f64::from(e))
            .fold(0.0f64, f64::max);
        Plot::new("error_time_plot")
            // The wheel scrolls the panel; Ctrl+wheel zooms, a drag pans, a double click resets.
            .allow_scroll(false)
            .height(190.0)
            .include_y(0.0)
            .include_y(top * 1.9)
            .legend(Legend::default())
            .show(ui, |plot| {
                for (k, j) in r.error.worst_joints.iter().enumerate() {
                    let pts: PlotPoints<'_> = j
                        .curve()
                        .into_iter()
                        .map(|(f, e)| [f64::from(f), f64::from(e)])
                        .collect();
                    plot.line(
                        Line::new(j.joint_name.clone(), pts)
                            .color(theme::PLOT_SERIES[k % theme::PLOT_SERIES.len()]),
                    );
                }
                plot.vline(VLine::new("playhead", frame).color(theme::PLOT_SERIES[5]));
            });
        ui.label("Maximum error per joint (cm, at or between frames)");
        // Room for the top tick label under the title.
        ui.add_space(6.0);
        let names = clip.map(|c| c.skeleton.names.clone()).unwrap_or_default();
        let overall = r.error.overall_max_cm().max(1e-6);
        let bars: Vec<Bar> = r
            .error
            .joint_max_cm
            .iter()
            .zip(&r.error.between.joint_max_cm)
            .enumerate()
            .map(|(j, (a, b))| {
                let e = a.max(*b);
                Bar::new(j as f64, f64::from(e))
                    .name(
                        names
                            .get(j)
                            .cloned()
                            .unwrap_or_else(|| format!("joint {j}")),
                    )
                    .fill(theme::error_color(e / overall))
            })
            .collect();
        Plot::new("joint_error_plot")
            // The wheel scrolls the panel; Ctrl+wheel zooms, a drag pans, a double click resets.
            .allow_scroll(false)
            .height(130.0)
            .x_axis_label("joint (hover a bar for its name)")
            .show(ui, |plot| plot.bar_chart(BarChart::new("max error", bars)));
    }

    ui.label(
        "Size (bytes) vs max error (cm, at or between frames): clips, database totals and the Pareto front",
    );
    // A candidate that compressed no clip is no point (the front skips what is not finite).
    let totals: Vec<(f64, f64)> = (0..cmp.candidates.len())
        .filter_map(|k| cmp.summary(k))
        .map(|s| match s.clips_ok {
            0 => (f64::INFINITY, f64::INFINITY),
            _ => (s.compressed_bytes as f64, f64::from(s.overall_max_cm())),
        })
        .collect();
    let front = pareto_front(&totals);
    Plot::new("pareto_plot")
        // The wheel scrolls the panel; Ctrl+wheel zooms, a drag pans, a double click resets.
        .allow_scroll(false)
        .height(170.0)
        // Bottom left: the corner no candidate reaches (small and exact), so no point hides.
        .legend(Legend::default().position(egui_plot::Corner::LeftBottom))
        .show(ui, |plot| {
            for (k, cand) in cmp.candidates.iter().enumerate() {
                let color = theme::PLOT_SERIES[k % theme::PLOT_SERIES.len()];
                let per_clip: PlotPoints<'_> = cmp
                    .outcomes
                    .get(k)
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .filter_map(|o| o.result.as_ref().ok())
                    .map(|r| {
                        [
                            r.compressed_bytes as f64,
                            f64::from(r.error.overall_max_cm()),
                        ]
                    })
                    .collect();
                plot.points(
                    Points::new(format!("{} clips", cand.label), per_clip)
                        .color(color)
                        .radius(2.0),
                );
                if let Some(t) = totals.get(k).filter(|t| t.0.is_finite()) {
                    plot.points(
                        Points::new(format!("{} total", cand.label), vec![[t.0, t.1]])
                            .color(color)
                            .radius(5.0),
                    );
                }
            }
            let line: PlotPoints<'_> = front.iter().map(|&i| [totals[i].0, totals[i].1]).collect();
            plot.line(Line::new("Pareto front", line).color(theme::PLOT_SERIES[5]));
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(clip: ClipId) -> ClipOutcome {
        ClipOutcome {
            clip,
            clip_name: format!("clip{clip}"),
            result: Err("not compressed in this test".into()),
            decode_us_per_pose: 0.0,
        }
    }

    /// A run stopped inside clip 2: candidate A finished it, B did not. Both are kept on clips 0
    /// and 1, and the comparison says it is partial.
    #[test]
    fn a_stopped_run_keeps_the_clips_every_candidate_finished() {
        let a = vec![outcome(0), outcome(1), outcome(2)];
        let b = vec![outcome(0), outcome(1)];
        let (kept, trimmed) = common_clips(vec![a, b]);
        assert!(trimmed);
        for o in &kept {
            assert_eq!(o.iter().map(|o| o.clip).collect::<Vec<_>>(), [0, 1]);
        }
        // A run stopped before B's first clip: nothing is compared.
        let (kept, trimmed) = common_clips(vec![vec![outcome(0)], Vec::new()]);
        assert!(trimmed && kept.iter().all(Vec::is_empty));
        let (_, trimmed) = common_clips(vec![vec![outcome(0)], vec![outcome(0)]]);
        assert!(!trimmed);
    }
}
