//! The "Find similar" tool (tag by example, bottom panel): select a range, find every similar
//! moment in the project in the background, review the ranked matches (thumbnails, ghost lanes on
//! the timeline, the query's pose over each match in the viewport), accept some or all under a
//! score threshold as ranges of a tag in one undoable step. See `docs/SIMILAR.md`, "In the app".
//!
//! [`model`] holds the logic (no egui), [`layout`] the tab's widgets, [`paint`] what is drawn
//! inside them (poses, bars); this file the state, the commands and what the tool gives the rest
//! of the app (timeline lanes, the viewport overlay).

pub mod layout;
pub mod model;
pub mod paint;

use std::collections::HashMap;
use std::sync::Arc;

use self::model::{
    AppView, Buffers, Failure, FeatureSet, PoseRig, QuerySpec, Results, SearchOutcome,
    SearchRequest, SidePose, aligned_pose, clip_name, features_key, query_from, query_time_s,
    side_pose,
};
use crate::core::similar::{JointOverrides, SUGGESTED_MAX_SCORE, SearchSettings, Weights};
use crate::core::tags::{ClipId, Range, TagDocument};
use crate::ui::anim_cache::{AnimCache, Loaded};
use crate::ui::command::AppCommand;
pub use crate::ui::command::SimilarCommand;
use crate::ui::jobs::Job;
use crate::ui::project::Project;
use crate::ui::theme::similar_colors;
use crate::ui::timeline::ExtraLane;
use crate::ui::view::OverlayPose;

pub use self::layout::similar_ui;

/// Lane ids of the tool's timeline lanes all start with this.
pub const LANE_PREFIX: &str = "similar:";
/// The matches on the current clip.
pub const LANE_MATCHES: &str = "similar:matches";
/// The query's range, on its clip.
pub const LANE_QUERY: &str = "similar:query";

/// Default number of matches asked for.
pub const DEFAULT_TOP: usize = 50;
/// Most matches one search may ask for.
pub const MAX_TOP: usize = 1000;

/// A search running in the background.
struct SearchJob {
    query: QuerySpec,
    job: Job<Result<SearchOutcome, Failure>>,
    /// Cancel was pressed: whatever it returns is dropped.
    cancelled: bool,
    /// [`features_key`] of the clips it searches.
    key: u64,
    /// Woken when it ends, and given to the search run again when the clips changed meanwhile.
    ctx: Option<egui::Context>,
}

/// The query's pose and the match's at the playhead, seen from the side (the tab draws them side
/// by side).
#[derive(Debug, Clone)]
pub struct LivePair {
    /// The match shown.
    pub index: usize,
    /// The query's frame (fractional) at the playhead.
    pub query_frame: f64,
    pub query: SidePose,
    pub query_bones: Vec<(usize, usize)>,
    pub target: SidePose,
    pub target_bones: Vec<(usize, usize)>,
}

/// State of the tool.
pub struct SimilarPanel {
    /// Matches asked for. Default [`DEFAULT_TOP`].
    pub top: usize,
    /// "Accept all under" and "Check under" take the matches scoring at most this. Default
    /// [`SUGGESTED_MAX_SCORE`].
    pub threshold: f32,
    /// Feature weights of the next search.
    pub weights: Weights,
    /// Let windows be 0.75 to 1.25 times the query's duration. Default on.
    pub stretch: bool,
    /// Loop playback over the match shown. Default on.
    pub loop_match: bool,
    /// The tag accepted matches go to (the query's tag after each search).
    pub accept_tag: String,
    /// Joint names overriding the conventions (none by default).
    pub joints: JointOverrides,
    pub results: Option<Results>,
    /// The results were found on other clips than the project's now (import, re-link, unit).
    pub stale: bool,
    /// The last message of the tool (no query, cancelled, failed).
    pub message: Option<String>,
    /// Set when a search has just ended (found, nothing, failed), for the app to say in the status
    /// bar when the tab is not in front; taken with [`SimilarPanel::take_finished`].
    finished: Option<String>,
    /// The query's pose and the match's at the playhead.
    pub live: Option<LivePair>,
    /// Scroll the list to this match on the next frame.
    pub scroll_to: Option<usize>,
    job: Option<SearchJob>,
    /// Features of the last search, reused while the clips stay the same.
    features: Option<Arc<FeatureSet>>,
    rigs: HashMap<(ClipId, u64), Option<Arc<PoseRig>>>,
    buffers: Buffers,
}

impl Default for SimilarPanel {
    fn default() -> Self {
        Self {
            top: DEFAULT_TOP,
            threshold: SUGGESTED_MAX_SCORE,
            weights: Weights::default(),
            stretch: true,
            loop_match: true,
            accept_tag: String::new(),
            joints: JointOverrides::default(),
            results: None,
            stale: false,
            message: None,
            finished: None,
            live: None,
            scroll_to: None,
            job: None,
            features: None,
            rigs: HashMap::new(),
            buffers: Buffers::default(),
        }
    }
}

impl SimilarPanel {
    /// Another project replaced the one searched: a running search is cancelled and dropped, the
    /// matches and the features of the old project are forgotten. The settings stay.
    pub fn forget_project(&mut self) {
        if let Some(j) = self.job.take() {
            j.job.cancel();
        }
        self.results = None;
        self.stale = false;
        self.live = None;
        self.scroll_to = None;
        self.message = None;
        self.finished = None;
        self.features = None;
        self.rigs.clear();
    }

    /// True while a search runs.
    pub fn is_searching(&self) -> bool {
        self.job.is_some()
    }

    /// The running search's job (its progress), if any.
    pub fn job(&self) -> Option<&Job<Result<SearchOutcome, Failure>>> {
        self.job.as_ref().map(|j| &j.job)
    }

    /// The query being searched for, while a search runs.
    pub fn searching_for(&self) -> Option<&QuerySpec> {
        self.job.as_ref().map(|j| &j.query)
    }

    /// Applies a command; returns the commands that follow from it (switching clips, moving the
    /// playhead, the accepting edit), for the app to apply.
    pub fn command(
        &mut self,
        cmd: SimilarCommand,
        project: &Project,
        view: &AppView<'_>,
        ctx: Option<&egui::Context>,
    ) -> Vec<AppCommand> {
        match cmd {
            SimilarCommand::Find => match query_from(&project.doc, view) {
                Ok(q) => self.start(project, q, view, ctx),
                Err(e) => self.message = Some(e),
            },
            SimilarCommand::Cancel => match &mut self.job {
                Some(j) => {
                    j.job.cancel();
                    j.cancelled = true;
                }
                None => self.message = Some("no search is running".to_owned()),
            },
            SimilarCommand::Select(i) => return self.select(i, project, view),
            SimilarCommand::Step(forward) => {
                match self.results.as_mut().and_then(|r| r.step(forward)) {
                    Some(i) => return self.select(i, project, view),
                    None => {
                        self.message = Some("no matches to step through: Find similar first".into())
                    }
                }
            }
            SimilarCommand::SelectAt { clip, frame } => {
                match self
                    .results
                    .as_ref()
                    .and_then(|r| r.at(clip, f64::from(frame)))
                {
                    Some(i) => return self.select(i, project, view),
                    None => return vec![AppCommand::SetPlayhead(f64::from(frame))],
                }
            }
            SimilarCommand::Accept { indices, tag } => {
                let Some(r) = &self.results else {
                    self.message = Some("no matches to accept: Find similar first".into());
                    return Vec::new();
                };
                if features_key(project, &self.joints) != r.key {
                    self.message = Some(
                        "the clips changed since this search (import, re-link or unit): search \
                         again before accepting"
                            .into(),
                    );
                    return Vec::new();
                }
                match r.accept_edit(&project.doc, &tag, &indices) {
                    Ok((edit, _)) if edit.is_empty() => {
                        self.message = Some(format!(
                            "nothing to accept: {} holds these matches already",
                            tag.trim()
                        ));
                    }
                    Ok((edit, label)) => {
                        self.accept_tag = tag.trim().to_owned();
                        self.message = None;
                        // Accepted: unchecked, so that they are not accepted again (their rows say
                        // "in TAG" now).
                        if let Some(r) = &mut self.results {
                            for &i in &indices {
                                if let Some(c) = r.checked.get_mut(i) {
                                    *c = false;
                                }
                            }
                        }
                        return vec![AppCommand::Edit {
                            edit,
                            label,
                            select: None,
                        }];
                    }
                    Err(e) => self.message = Some(format!("cannot accept: {e}")),
                }
            }
            SimilarCommand::Show => {}
            SimilarCommand::Clear => {
                self.results = None;
                self.live = None;
                self.message = None;
            }
        }
        Vec::new()
    }

    /// Starts a search for `q` (a running one is cancelled).
    fn start(
        &mut self,
        project: &Project,
        q: QuerySpec,
        view: &AppView<'_>,
        ctx: Option<&egui::Context>,
    ) {
        match &q.tag {
            Some(t) => self.accept_tag = t.clone(),
            None if self.accept_tag.trim().is_empty() => {
                self.accept_tag = view
                    .active_tag
                    .and_then(|t| project.doc.tags.get(t))
                    .map_or_else(|| "Similar".to_owned(), |t| t.name.clone());
            }
            None => {}
        }
        self.message = None;
        self.spawn(project, q, ctx.cloned());
    }

    /// Runs the search for `q` in the background over the project's clips as they are now.
    fn spawn(&mut self, project: &Project, q: QuerySpec, ctx: Option<egui::Context>) {
        if let Some(old) = self.job.take() {
            old.job.cancel();
        }
        let settings = SearchSettings {
            top: self.top.clamp(1, MAX_TOP),
            stretches: if self.stretch {
                SearchSettings::default().stretches
            } else {
                vec![1.0]
            },
            ..SearchSettings::default()
        };
        let req = SearchRequest::new(
            project,
            q.clone(),
            self.weights,
            &self.joints,
            settings,
            self.features.clone(),
        );
        let key = req.features_key;
        let label = format!("find similar to {}", q.short(&project.doc));
        let job = Job::spawn(label, ctx.as_ref(), move |p| {
            let progress = |phase: model::Phase, done: usize, total: usize| {
                p.set_note(phase.describe());
                p.set_total(total as u64);
                p.set_done(done as u64);
            };
            model::run_search(&req, &progress, p.cancel_flag())
        });
        self.job = Some(SearchJob {
            query: q,
            job,
            cancelled: false,
            key,
            ctx,
        });
    }

    /// The commands that show match `i`.
    fn select(&mut self, i: usize, project: &Project, view: &AppView<'_>) -> Vec<AppCommand> {
        let Some(r) = self.results.as_mut() else {
            return Vec::new();
        };
        let Some(m) = r.matches.get(i).copied() else {
            return Vec::new();
        };
        let Some(info) = project.doc.clips.get(m.clip) else {
            self.message = Some(format!(
                "match {} is on clip {}, which the project no longer has: search again",
                i + 1,
                m.clip
            ));
            return Vec::new();
        };
        r.current = Some(i);
        self.scroll_to = Some(i);
        let clip = m.clip as ClipId;
        let mut out = Vec::new();
        if clip != view.clip {
            out.push(AppCommand::SelectClip(clip));
        }
        out.push(AppCommand::SetPlayhead(m.start as f64));
        if self.loop_match {
            let stop = (m.stop as u32).min(info.frames);
            out.push(AppCommand::SetLoopRange(Some(Range::new(
                m.start as u32,
                stop,
            ))));
        }
        out
    }

    /// Collects a finished search. A search over clips that changed while it ran (import, re-link,
    /// unit) is never shown: it runs again over the clips as they are, or is dropped when its query
    /// no longer fits the project.
    fn poll(&mut self, project: &Project) {
        let Some(result) = self.job.as_mut().and_then(|j| j.job.poll()) else {
            return;
        };
        let Some(job) = self.job.take() else {
            return;
        };
        if job.cancelled {
            self.message = Some("search cancelled".to_owned());
            return;
        }
        let doc = &project.doc;
        if job.key != features_key(project, &self.joints) {
            let q = job.query;
            let fits = doc
                .clips
                .get(q.clip as usize)
                .is_some_and(|c| q.range.stop <= c.frames && q.range.start < q.range.stop);
            if fits {
                self.message = Some(
                    "the clips changed during the search (import, re-link or unit): searching \
                     again"
                        .to_owned(),
                );
                self.spawn(project, q, job.ctx);
            } else {
                self.message = Some(format!(
                    "the clips changed during the search and the query {} no longer fits its \
                     clip: its results were dropped; select a range and search again",
                    q.short(doc)
                ));
            }
            return;
        }
        let query = job.query.short(doc);
        match result {
            Ok(Ok(out)) => {
                self.features = Some(Arc::clone(&out.features));
                let r = Results::from_outcome(out, doc);
                self.finished = Some(format!(
                    "find similar: {} match(es) for {query}",
                    r.matches.len()
                ));
                self.message = r.matches.is_empty().then(|| {
                    "no match: every window of every searched clip overlaps the query (a \
                         query as long as its clip, in a project of one clip?)"
                        .into()
                });
                self.results = Some(r);
                self.stale = false;
            }
            Ok(Err(Failure::Cancelled)) => self.message = Some("search cancelled".to_owned()),
            Ok(Err(Failure::Failed(e))) => {
                self.finished = Some(format!("find similar: cannot search: {e}"));
                self.message = Some(format!("cannot search: {e}"));
            }
            Err(e) => {
                self.finished = Some(format!("find similar: {e}"));
                self.message = Some(e);
            }
        }
    }

    /// What the search that has just ended found (once), for the status bar.
    pub fn take_finished(&mut self) -> Option<String> {
        self.finished.take()
    }

    /// Once a frame, before the panels: collects a finished search, checks the results still
    /// belong to the project's clips, and, while the tab is `open` and the playhead is inside a
    /// match of the current clip, gives the query's pose aligned on the match's for the viewport
    /// (and both poses for the tab).
    pub fn update(
        &mut self,
        project: &Project,
        clip: ClipId,
        playhead: f64,
        open: bool,
        anim: &mut AnimCache,
        dark: bool,
    ) -> Option<OverlayPose> {
        self.poll(project);
        self.live = None;
        if self.results.is_none() || !open {
            return None;
        }
        let key = features_key(project, &self.joints);
        let r = self.results.as_ref()?;
        self.stale = r.key != key;
        if self.stale {
            return None;
        }
        let i = r.at(clip, playhead)?;
        let m = r.matches[i];
        let q = r.query.clone();
        let query_fps = project.doc.clips.get(q.clip as usize)?.fps;
        let query_s = query_time_s(&m, &q, query_fps, playhead)?;
        let target = anim.fetch(project, clip).ready()?.clone();
        let query = anim.fetch(project, q.clip).ready()?.clone();
        let t_rig = self.rig(&target)?;
        let q_rig = self.rig(&query)?;
        let target_s = playhead / f64::from(target.fps.max(1e-3));
        let aligned = aligned_pose(
            &query,
            &q_rig,
            query_s,
            &target,
            &t_rig,
            target_s,
            &mut self.buffers,
        )
        .ok()?;
        let target_side = self
            .buffers
            .sample(&target, target_s)
            .ok()
            .map(|model| side_pose(&t_rig, model))?;
        let query_side = self
            .buffers
            .sample(&query, query_s)
            .ok()
            .map(|model| side_pose(&q_rig, model))?;
        let query_frame = query_s * f64::from(query_fps);
        self.live = Some(LivePair {
            index: i,
            query_frame,
            query: query_side,
            query_bones: q_rig.bones.clone(),
            target: target_side,
            target_bones: t_rig.bones.clone(),
        });
        Some(OverlayPose {
            positions: aligned.positions,
            parents: aligned.parents,
            color: similar_colors(dark).overlay,
            label: format!(
                "Pink: the query ({} of {}) at frame {query_frame:.1}, aligned at the root on \
                 match {} (score {:.2})",
                q.short(&project.doc),
                clip_name(&project.doc, q.clip),
                i + 1,
                m.score
            ),
        })
    }

    /// The rig of a loaded clip (joints found once per load).
    fn rig(&mut self, clip: &Loaded) -> Option<Arc<PoseRig>> {
        if self.rigs.len() > 64 {
            self.rigs.clear();
        }
        self.rigs
            .entry((clip.id, clip.version))
            .or_insert_with(|| PoseRig::new(clip, &self.joints).ok().map(Arc::new))
            .clone()
    }

    /// The tool's lanes for `clip`: the query's range (on its clip) and the matches.
    pub fn extra_lanes(&self, doc: &TagDocument, clip: ClipId, dark: bool) -> Vec<ExtraLane> {
        let Some(r) = &self.results else {
            return Vec::new();
        };
        let c = similar_colors(dark);
        let short = r.query.short(doc);
        let mut lanes = Vec::new();
        if r.query.clip == clip {
            lanes.push(ExtraLane {
                id: LANE_QUERY.to_owned(),
                label: format!("query: {short}"),
                tooltip: format!("the range searched for: {}", r.query.describe(doc)),
                color: c.lane_query,
                ranges: vec![r.query.range],
                alarm: false,
            });
        }
        let here = r.ranges_on(clip);
        let stale = if self.stale {
            "\nthe clips changed since this search: search again"
        } else {
            ""
        };
        lanes.push(ExtraLane {
            id: LANE_MATCHES.to_owned(),
            label: format!("similar to {short}"),
            tooltip: format!(
                "{} of the {} matches of Find similar are on this clip; click one to step to it{stale}",
                here.len(),
                r.matches.len()
            ),
            color: c.lane_matches,
            ranges: here,
            alarm: self.stale,
        });
        lanes
    }

    /// Waits for the running search and collects it (tests).
    pub fn wait(&mut self, project: &Project) {
        while self.job.is_some() {
            self.poll(project);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}
