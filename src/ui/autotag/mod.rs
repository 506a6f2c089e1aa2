//! The auto-tag panel (bottom panel, tab "Auto-tag"): choose the generators and rules, edit their
//! parameters, see the proposals live as ghost lanes under the real ones and the signal behind them
//! with its thresholds in a plot (drag a threshold line to change it), then apply them to this
//! clip, the checked clips or every clip as one undoable step.
//!
//! The current clip is prepared once (forward kinematics, [`Prepared::new`]); every change of a
//! parameter or a dragged threshold only re-applies thresholds on its cached signals. Applying to
//! other clips loads and tags them in a background [`Job`] with progress and cancel. Existing ranges
//! that a `Replace` would remove are listed in a confirmation dialog first (Enter confirms, Esc
//! cancels). The settings used are saved in the project with the apply (`Edit::SetAutotag`).
//!
//! [`model`] holds the logic (no egui); this file the panel's state, what it feeds the rest of the
//! app (ghost lanes, planted feet) and applying; `panel.rs` draws the panel, `plot.rs` the signal
//! plot.

pub mod model;
mod panel;
mod plot;

pub use panel::autotag_ui;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use egui_plot::PlotTransform;

use self::model::{
    BatchOutcome, GhostLane, Grab, LANE_PREFIX, Scope, ThresholdDrag, apply_edit, apply_label,
    covered_sides, enabled_tags, find_clips, ghost_lanes, parse_rules_text, planted_joints, policy,
    real_contacts, rules_text, scope_clips,
};
use crate::core::autotag::contacts::find_feet;
use crate::core::autotag::{
    ApplyMode, ApplyReport, AutotagSettings, Autotagged, Prepared, Proposal, SettingsError, Signal,
    ThresholdKey,
};
use crate::core::doc::Edit;
use crate::core::project::resolve;
use crate::core::tags::{ClipId, ClipInfo, TagDocument};
use crate::ui::anim_cache::AnimCache;
use crate::ui::command::AppCommand;
use crate::ui::jobs::Job;
use crate::ui::theme;
use crate::ui::timeline::ExtraLane;
use crate::ui::view::ClipContext;

/// The left column's tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tab {
    #[default]
    Generators,
    Rules,
    Apply,
}

/// The current clip, prepared, and the proposals for the last settings.
struct Live {
    clip: ClipId,
    version: u64,
    /// The clip's joint names (for the joint fields).
    names: Vec<String>,
    prepared: Result<Arc<Prepared>, String>,
    /// The settings and tags `output` was computed with.
    key: Option<(AutotagSettings, Vec<String>)>,
    output: Result<Autotagged, String>,
}

/// A background apply: what it runs with.
struct BatchJob {
    job: Job<BatchOutcome>,
    settings: AutotagSettings,
    /// The clips, as they were when the job started.
    clips: Vec<(ClipId, ClipInfo)>,
}

/// An apply waiting for the user's confirmation, because `Replace` would remove existing frames.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub proposals: Vec<(ClipId, Vec<Proposal>)>,
    pub settings: AutotagSettings,
    pub modes: BTreeMap<String, ApplyMode>,
    /// The clips applied to, as they were when the apply started (the proposals were made from
    /// them). The apply finds each clip with proposals again by name: other clips may have been
    /// added, removed or reordered meanwhile (an import), but if one of these is gone, or was
    /// relinked or changed length, rate or unit, nothing is applied (see [`find_clips`]).
    pub clips: Vec<(ClipId, ClipInfo)>,
    pub report: ApplyReport,
    /// Clips that could not be tagged, one line each.
    pub skipped: Vec<String>,
    /// The project changed since the list was made: it was made again.
    pub changed: bool,
}

/// State of the auto-tag panel.
pub struct AutotagPanel {
    /// The settings being edited; may be invalid (`error` says why).
    pub settings: AutotagSettings,
    /// The last valid settings: what the proposals and an apply use.
    pub valid: AutotagSettings,
    /// Why `settings` is invalid (the JSON path of the parameter and what was expected).
    pub error: Option<SettingsError>,
    /// The rules editor's text, and why it does not read (it keeps the last rules that did).
    pub rules_text: String,
    pub rules_error: Option<SettingsError>,
    /// Tags not proposed (unchecked generators and rules).
    pub disabled: BTreeSet<String>,
    /// Per tag: replace or merge (default merge).
    pub modes: BTreeMap<String, ApplyMode>,
    pub scope: Scope,
    /// The clips of [`Scope::Checked`].
    pub checked: BTreeSet<ClipId>,
    /// Those clips as last seen, which `checked` follows when the clip list changes
    /// ([`crate::ui::clip_follow`]): an apply to the checked clips tagged other clips.
    checked_seen: Option<crate::ui::clip_follow::ClipsSeen>,
    pub tab: Tab,
    /// The plotted signal, by name (`None`: the first).
    pub signal: Option<String>,
    /// What the last apply did, or why it did not.
    pub status: Option<String>,
    /// The threshold line being dragged.
    pub drag: Option<ThresholdDrag>,
    /// The apply waiting for confirmation.
    pub pending: Option<Pending>,
    /// The project's settings as last seen (reloaded into the panel when they change: undo, open).
    seen: Option<Option<AutotagSettings>>,
    live: Option<Live>,
    plot: Option<PlotTransform>,
    job: Option<BatchJob>,
    ctx: Option<egui::Context>,
}

impl Default for AutotagPanel {
    fn default() -> Self {
        Self {
            settings: AutotagSettings::default(),
            valid: AutotagSettings::default(),
            error: None,
            rules_text: rules_text(&[]),
            rules_error: None,
            disabled: BTreeSet::new(),
            modes: BTreeMap::new(),
            scope: Scope::Current,
            checked: BTreeSet::new(),
            checked_seen: None,
            tab: Tab::Generators,
            signal: None,
            status: None,
            drag: None,
            pending: None,
            seen: None,
            live: None,
            plot: None,
            job: None,
            ctx: None,
        }
    }
}

impl AutotagPanel {
    /// Once a frame, before the panels: follows the project's settings, collects a finished
    /// background apply, prepares the current clip while the panel is `open`, shows the
    /// confirmation dialog, and returns the joints the viewport marks as planted.
    pub fn update(
        &mut self,
        ctx: &egui::Context,
        input: &ClipContext<'_>,
        open: bool,
        anim: &mut AnimCache,
        queue: &mut Vec<AppCommand>,
    ) -> Vec<usize> {
        self.ctx = Some(ctx.clone());
        let doc = &input.project.doc;
        crate::ui::clip_follow::follow_clip_set(&mut self.checked_seen, &mut self.checked, doc);
        if self.seen.as_ref() != Some(&doc.autotag) {
            // The project's settings changed (an apply, Save, undo, redo): the panel takes them,
            // unless it holds changes of its own that were not saved (kept, now "changed" against
            // the project's new settings).
            let own = self.seen.as_ref().is_some_and(|seen| {
                self.valid != seen.clone().unwrap_or_default()
                    || self.error.is_some()
                    || self.rules_error.is_some()
            });
            self.seen = Some(doc.autotag.clone());
            if !own {
                self.load_settings(doc.autotag.clone().unwrap_or_default());
            }
        }
        self.poll_job(doc, queue);
        // Asked for, not waited for: a take loading in the background froze the whole window
        // on every switch to a clip not loaded yet, the panel closed or not.
        let loaded = match anim.fetch(input.project, input.clip) {
            crate::ui::anim_cache::AnimState::Ready(l) => Ok(l),
            crate::ui::anim_cache::AnimState::Failed(e) => Err(e),
            crate::ui::anim_cache::AnimState::Pending => {
                Err("Loading the animation of this clip…".to_owned())
            }
        };
        if open {
            match &loaded {
                Ok(l) => {
                    if self
                        .live
                        .as_ref()
                        .is_none_or(|v| (v.clip, v.version) != (l.id, l.version))
                    {
                        self.live = Some(Live {
                            clip: l.id,
                            version: l.version,
                            names: l.skeleton.names.clone(),
                            prepared: Prepared::new(&l.clip)
                                .map(Arc::new)
                                .map_err(|e| e.to_string()),
                            key: None,
                            output: Err(String::new()),
                        });
                    }
                }
                Err(e) => {
                    self.live = Some(Live {
                        clip: input.clip,
                        version: 0,
                        names: Vec::new(),
                        prepared: Err(e.clone()),
                        key: None,
                        output: Err(e.clone()),
                    })
                }
            }
            self.refresh();
        }
        self.confirm_ui(ctx, doc, queue);

        // Planted feet: the proposals while the panel shows contacts, else the real contact tags.
        let frame = input.playhead.max(0.0).floor() as u32;
        if open
            && let Some(out) = self.output_for(input.clip)
            && let Ok(m) = self.prepared_for(input.clip)
            && out
                .proposals
                .iter()
                .any(|p| model::contact_side(&p.tag).is_some())
        {
            let covered = covered_sides(
                out.proposals
                    .iter()
                    .map(|p| (p.tag.as_str(), p.ranges.as_slice())),
                frame,
            );
            return match m.measured(&self.valid).feet() {
                Ok(feet) => planted_joints(&feet, covered),
                Err(_) => Vec::new(),
            };
        }
        let covered = covered_sides(real_contacts(doc, input.clip), frame);
        if covered == [false, false] {
            return Vec::new();
        }
        match &loaded {
            Ok(l) => find_feet(&l.name, &l.skeleton, &self.valid.params.contacts)
                .map(|feet| planted_joints(&feet, covered))
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }

    /// The proposals for `clip` as read-only lanes for the timeline, in the tags' colours faded.
    pub fn extra_lanes(&self, doc: &TagDocument, clip: ClipId) -> Vec<ExtraLane> {
        let Some(out) = self.output_for(clip) else {
            return Vec::new();
        };
        ghost_lanes(doc, clip, &out.proposals, &policy(&self.modes))
            .into_iter()
            .map(|g: GhostLane| ExtraLane {
                id: format!("{LANE_PREFIX}{}", g.tag),
                label: format!("auto: {}", g.tag),
                tooltip: g.tooltip,
                color: theme::tag_color(g.color, &g.tag).gamma_multiply(0.55),
                ranges: g.ranges,
                alarm: false,
            })
            .collect()
    }

    /// The live proposals and signals, when they are for `clip`.
    pub fn output_for(&self, clip: ClipId) -> Option<&Autotagged> {
        self.live
            .as_ref()
            .filter(|l| l.clip == clip)
            .and_then(|l| l.output.as_ref().ok())
    }

    /// Why there are no proposals for the current clip, if there are none.
    pub fn output_error(&self) -> Option<&str> {
        self.live
            .as_ref()
            .and_then(|l| l.output.as_ref().err())
            .map(String::as_str)
            .filter(|e| !e.is_empty())
    }

    fn prepared_for(&self, clip: ClipId) -> Result<&Arc<Prepared>, ()> {
        match &self.live {
            Some(l) if l.clip == clip => l.prepared.as_ref().map_err(|_| ()),
            _ => Err(()),
        }
    }

    /// True while a background apply runs.
    pub fn is_busy(&self) -> bool {
        self.job.is_some()
    }

    /// Cancels the background apply, if one runs (nothing is applied).
    pub fn cancel_job(&self) {
        if let Some(j) = &self.job {
            j.job.cancel();
        }
    }

    /// Another project replaced the one the panel worked on: a running apply is cancelled and
    /// dropped, a confirmation waiting for it is forgotten and the live proposals are made again
    /// for the new project (nothing computed for the old one reaches the new one). The settings
    /// stay.
    pub fn forget_project(&mut self) {
        // The next frame loads the new project's settings; clips checked were the old project's.
        self.seen = None;
        self.checked.clear();
        self.cancel_job();
        let dropped = self.job.take().is_some() || self.pending.take().is_some();
        self.live = None;
        self.status = dropped
            .then(|| "another project was opened: the auto-tag apply was dropped".to_owned());
    }

    /// True when the panel's settings (loaded from `doc` and changed since) are not the ones saved
    /// in `doc`, or its rules text was edited into something that does not read: the
    /// unsaved-changes guard asks about them too.
    pub fn settings_unsaved(&self, doc: &TagDocument) -> bool {
        self.seen.as_ref() == Some(&doc.autotag)
            && (self.valid != doc.autotag.clone().unwrap_or_default() || self.rules_error.is_some())
    }

    /// The edit that saves the panel's settings in the project.
    pub fn save_settings_edit(&self) -> Edit {
        Edit::SetAutotag(Some(Box::new(self.valid.clone())))
    }

    /// The tags the generators propose now.
    pub fn enabled_tags(&self) -> Vec<String> {
        enabled_tags(&self.valid, &self.disabled)
    }

    /// Where a threshold line of the plotted signal was last drawn: the middle of the line
    /// (tests drag it from there).
    pub fn threshold_pos(&self, key: ThresholdKey, grab: Grab) -> Option<egui::Pos2> {
        let t = self.plot?;
        let signal = self.plotted_signal()?;
        let th = signal.thresholds.iter().find(|th| th.key == key)?;
        let v = match grab {
            Grab::Enter => th.enter,
            Grab::Leave => th.leave,
        };
        Some(egui::pos2(
            t.frame().center().x,
            t.position_from_point_y(f64::from(v)),
        ))
    }

    /// The signal the plot shows.
    pub fn plotted_signal(&self) -> Option<&Signal> {
        let out = self.live.as_ref()?.output.as_ref().ok()?;
        self.signal
            .as_ref()
            .and_then(|n| out.signal(n))
            .or_else(|| out.signals.first())
    }

    /// Replaces the panel's settings (the project's changed, or defaults were asked for).
    fn load_settings(&mut self, settings: AutotagSettings) {
        if settings.rules != self.valid.rules || self.rules_error.is_some() {
            self.rules_text = rules_text(&settings.rules);
            self.rules_error = None;
        }
        self.settings = settings.clone();
        self.valid = settings;
        self.error = None;
    }

    /// Checks the edited settings; valid ones become the ones in use.
    fn revalidate(&mut self) {
        match self.settings.validate() {
            Ok(()) => {
                self.valid = self.settings.clone();
                self.error = None;
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// Re-thresholds the current clip when the settings or the chosen tags changed (no forward
    /// kinematics: the prepared clip keeps its signals).
    fn refresh(&mut self) {
        let only = self.enabled_tags();
        let Some(live) = &mut self.live else {
            return;
        };
        let Ok(prepared) = &live.prepared else {
            if let Err(e) = &live.prepared {
                live.output = Err(e.clone());
            }
            return;
        };
        if live
            .key
            .as_ref()
            .is_some_and(|(s, o)| *s == self.valid && *o == only)
        {
            return;
        }
        live.output = prepared
            .autotag(&self.valid, Some(&only))
            .map_err(|e| e.to_string());
        live.key = Some((self.valid.clone(), only));
    }

    // -----------------------------------------------------------------------------------------
    // Applying.
    // -----------------------------------------------------------------------------------------

    /// Applies to the clips of the panel's scope: the current clip at once (its proposals are
    /// there), others in a background job.
    fn start_apply(&mut self, input: &ClipContext<'_>, queue: &mut Vec<AppCommand>) {
        let doc = &input.project.doc;
        let clips = scope_clips(self.scope, doc.clips.len(), input.clip, &self.checked);
        if clips.is_empty() {
            self.status = Some("no clip to apply to: check some clips first".to_owned());
            return;
        }
        let only = self.enabled_tags();
        let named: Vec<(ClipId, ClipInfo)> = clips
            .iter()
            .map(|&c| (c, doc.clips[c as usize].clone()))
            .collect();
        if clips == [input.clip] {
            let Some(out) = self.output_for(input.clip) else {
                self.status = Some(format!(
                    "cannot tag this clip: {}",
                    self.output_error().unwrap_or("not prepared yet")
                ));
                return;
            };
            let proposals = vec![(input.clip, out.proposals.clone())];
            let settings = self.valid.clone();
            self.stage(doc, proposals, settings, named, Vec::new(), queue);
            return;
        }
        let requests: Vec<_> = clips
            .iter()
            .map(|&c| {
                resolve(input.project, c).map_err(|e| {
                    let name = doc.clips.get(c as usize).map_or("?", |i| i.name.as_str());
                    (c, name.to_owned(), e)
                })
            })
            .collect();
        let settings = self.valid.clone();
        let run_settings = settings.clone();
        let n = requests.len();
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        let job = Job::spawn(format!("auto-tag {n} clips"), self.ctx.as_ref(), move |p| {
            p.set_total(n as u64);
            model::run_batch(
                requests,
                &run_settings,
                &only,
                workers,
                p.cancel_flag(),
                &|name| {
                    p.add(1);
                    p.set_note(name);
                },
            )
        });
        self.status = None;
        self.job = Some(BatchJob {
            job,
            settings,
            clips: named,
        });
    }

    fn poll_job(&mut self, doc: &TagDocument, queue: &mut Vec<AppCommand>) {
        let Some(j) = &mut self.job else {
            return;
        };
        let Some(result) = j.job.poll() else {
            return;
        };
        let Some(j) = self.job.take() else {
            return;
        };
        match result {
            Ok(out) if out.cancelled => {
                self.status = Some(format!(
                    "cancelled after {} of {} clips: nothing changed",
                    out.clips.len(),
                    j.clips.len()
                ));
            }
            Ok(out) => {
                let mut skipped = out.failures();
                skipped.extend(out.warnings().cloned());
                self.stage(doc, out.proposals(), j.settings, j.clips, skipped, queue);
            }
            Err(e) => self.status = Some(format!("auto-tag failed: {e}")),
        }
    }

    /// Builds the edit; queues it, or asks first when `Replace` would remove existing frames.
    fn stage(
        &mut self,
        doc: &TagDocument,
        proposals: Vec<(ClipId, Vec<Proposal>)>,
        settings: AutotagSettings,
        clips: Vec<(ClipId, ClipInfo)>,
        skipped: Vec<String>,
        queue: &mut Vec<AppCommand>,
    ) {
        let pending = Pending {
            proposals,
            settings,
            modes: self.modes.clone(),
            clips,
            report: ApplyReport::default(),
            skipped,
            changed: false,
        };
        self.commit(doc, pending, false, queue);
    }

    /// Applies `pending` (re-made against the project as it is now). Unless `confirmed` with the
    /// same list of removed frames, an apply that removes frames waits for confirmation.
    fn commit(
        &mut self,
        doc: &TagDocument,
        mut pending: Pending,
        confirmed: bool,
        queue: &mut Vec<AppCommand>,
    ) {
        let proposals = match find_clips(doc, &pending.clips, &pending.proposals) {
            Ok(p) => p,
            Err(e) => {
                self.status = Some(format!("nothing applied: {e}"));
                return;
            }
        };
        let (edit, report) =
            match apply_edit(doc, &proposals, &policy(&pending.modes), &pending.settings) {
                Ok(x) => x,
                Err(e) => {
                    self.status = Some(format!("cannot apply: {e}"));
                    return;
                }
            };
        if report.removes_frames() && !(confirmed && report.replaced == pending.report.replaced) {
            pending.changed = confirmed;
            pending.report = report;
            self.pending = Some(pending);
            return;
        }
        let tagged = pending.proposals.len();
        let mut status = if edit.is_empty() {
            format!("{tagged} clip(s) tagged: nothing to change")
        } else {
            format!("{tagged} clip(s) tagged: {}", report.summary())
        };
        if !pending.skipped.is_empty() {
            status += &format!(
                "; {} problem(s): {}",
                pending.skipped.len(),
                pending.skipped.join("; ")
            );
        }
        self.status = Some(status);
        if !edit.is_empty() {
            queue.push(AppCommand::Edit {
                edit,
                label: apply_label(doc, &proposals.iter().map(|(c, _)| *c).collect::<Vec<_>>()),
                select: None,
            });
        }
    }

    /// The confirmation dialog of an apply that would remove existing frames.
    fn confirm_ui(&mut self, ctx: &egui::Context, doc: &TagDocument, queue: &mut Vec<AppCommand>) {
        let Some(pending) = self.pending.clone() else {
            return;
        };
        // New presses only: the repeats of a held key do not answer the question.
        let (enter, esc) = ctx.input(|i| {
            (
                crate::ui::keymap::pressed_once(i, egui::Key::Enter),
                crate::ui::keymap::pressed_once(i, egui::Key::Escape),
            )
        });
        enum Choice {
            Replace,
            Merge,
            Cancel,
        }
        let mut choice = None;
        egui::Modal::new(egui::Id::unique("taglane_autotag_confirm")).show(ctx, |ui| {
            ui.set_max_width(560.0);
            ui.heading("Replace existing ranges?");
            let r = &pending.report;
            if pending.changed {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    "The project changed since this list was made; it was made again.",
                );
            }
            ui.label(format!(
                "Replacing removes {} existing frame(s) that the proposals do not cover, in {} \
                 range list(s). You can undo the whole apply in one step.",
                r.frames_removed(),
                r.replaced.len()
            ));
            egui::ScrollArea::vertical()
                .max_height(220.0)
                .show(ui, |ui| {
                    for x in &r.replaced {
                        let list: Vec<String> = x
                            .removed
                            .iter()
                            .map(|q| format!("[{}, {})", q.start, q.stop))
                            .collect();
                        ui.label(format!(
                            "{} on '{}': {} frame(s): {}",
                            x.tag,
                            x.clip_name,
                            x.frames(),
                            list.join(" ")
                        ));
                    }
                });
            ui.label(format!(
                "Merge keeps them and adds the proposals instead. In all: {} range list(s) \
                 change, {} frame(s) added{}.",
                r.lists_changed,
                r.frames_added,
                if r.tags_created.is_empty() {
                    String::new()
                } else {
                    format!(", new tags: {}", r.tags_created.join(", "))
                }
            ));
            ui.horizontal(|ui| {
                if ui.button("Replace").clicked() || enter {
                    choice = Some(Choice::Replace);
                }
                if ui
                    .button("Merge instead")
                    .on_hover_text("Merge the tags that would lose frames; nothing is removed")
                    .clicked()
                {
                    choice = Some(Choice::Merge);
                }
                if ui.button("Cancel").clicked() || esc {
                    choice = Some(Choice::Cancel);
                }
            });
        });
        match choice {
            None => {}
            Some(Choice::Cancel) => {
                self.pending = None;
                self.status = Some("apply cancelled: nothing changed".to_owned());
            }
            Some(Choice::Replace) => {
                self.pending = None;
                self.commit(doc, pending, true, queue);
            }
            Some(Choice::Merge) => {
                self.pending = None;
                let mut p = pending;
                for t in model::replacing_tags(&p.report) {
                    p.modes.insert(t.clone(), ApplyMode::Merge);
                    self.modes.insert(t, ApplyMode::Merge);
                }
                self.commit(doc, p, false, queue);
            }
        }
    }
}

impl AutotagPanel {
    /// The joints found automatically on the current clip, by joint parameter key.
    fn found_joints(&self) -> BTreeMap<&'static str, Option<String>> {
        let mut out = BTreeMap::new();
        let Some(live) = &self.live else {
            return out;
        };
        let Ok(p) = &live.prepared else {
            return out;
        };
        let name = |j: usize| live.names.get(j).cloned();
        let m = p.measured(&self.valid);
        if let Ok([l, r]) = m.feet() {
            out.insert("left_ankle", name(l.ankle));
            out.insert("left_toe", l.toe.and_then(name));
            out.insert("right_ankle", name(r.ankle));
            out.insert("right_toe", r.toe.and_then(name));
        }
        if let Ok(j) = m.root_joint() {
            out.insert("root_joint", name(j));
        }
        out
    }

    /// Reads the rules editor; rules that read replace the ones in use.
    pub fn apply_rules_text(&mut self) {
        match parse_rules_text(&self.rules_text) {
            Ok(rules) => {
                self.rules_error = None;
                self.settings.rules = rules;
                self.revalidate();
            }
            Err(e) => self.rules_error = Some(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::project::Project;

    #[test]
    fn an_apply_is_dropped_when_the_projects_clips_changed_meanwhile() {
        let demo = Project::demo();
        let only = enabled_tags(&AutotagSettings::default(), &BTreeSet::new());
        let outcome = model::tag_clip(
            &resolve(&demo, 0).unwrap(),
            &AutotagSettings::default(),
            &only,
        );
        let pending = || Pending {
            proposals: vec![(0, outcome.result.clone().unwrap())],
            settings: AutotagSettings::default(),
            modes: BTreeMap::new(),
            clips: vec![(0, demo.doc.clips[0].clone())],
            report: ApplyReport::default(),
            skipped: Vec::new(),
            changed: false,
        };
        let mut panel = AutotagPanel::default();
        let mut queue = Vec::new();
        // Another project (here: the demo with its first clip renamed) is open now.
        let mut other = demo.doc.clone();
        other.clips[0].name = "another take".into();
        panel.commit(&other, pending(), false, &mut queue);
        assert!(queue.is_empty());
        assert!(panel.status.as_deref().unwrap().contains("nothing applied"));
        panel.commit(&TagDocument::default(), pending(), false, &mut queue);
        assert!(queue.is_empty());
        // The same project, the clip applied to relinked meanwhile.
        let relink = |clip: ClipId| {
            let mut doc = demo.doc.clone();
            crate::core::doc::Edit::SetClipSource {
                clip,
                source: Some("elsewhere.bvh".into()),
            }
            .apply(&mut doc)
            .unwrap();
            doc
        };
        panel.commit(&relink(0), pending(), false, &mut queue);
        assert!(queue.is_empty());
        let status = panel.status.clone().unwrap();
        assert!(
            status.contains("nothing applied") && status.contains("relinked"),
            "{status}"
        );
        assert!(status.contains("walk_male_01"), "{status}");
        // Its length changed.
        let mut shorter = demo.doc.clone();
        shorter.clips[0].frames -= 1;
        panel.commit(&shorter, pending(), false, &mut queue);
        assert!(queue.is_empty());
        // Another clip relinked meanwhile: the apply is not its business.
        panel.commit(&relink(1), pending(), false, &mut queue);
        assert!(
            matches!(&queue[..], [AppCommand::Edit { label, .. }] if label == "auto-tag walk_male_01"),
            "{queue:?} {:?}",
            panel.status
        );
        queue.clear();
        // A clip inserted before it (an import): the edit is made for the clip where it is now.
        let mut moved = demo.doc.clone();
        let mut first = moved.clips[1].clone();
        first.name = "imported meanwhile".into();
        crate::core::doc::Edit::InsertClip {
            index: 0,
            clip: first,
            ranges: Vec::new(),
        }
        .apply(&mut moved)
        .unwrap();
        let Some(AppCommand::Edit { edit, label, .. }) = ({
            panel.commit(&moved, pending(), false, &mut queue);
            queue.pop()
        }) else {
            panic!("nothing applied: {:?}", panel.status);
        };
        assert_eq!(label, "auto-tag walk_male_01");
        let mut after = moved.clone();
        edit.apply(&mut after).unwrap();
        // Each tag's ranges on clip `c`, by name (an apply may add tags).
        let ranges = |doc: &TagDocument, c: ClipId| {
            let tags = doc.tags.iter();
            tags.filter_map(|t| Some((t.name.clone(), t.ranges.get(&c)?.to_vec())))
                .collect::<BTreeMap<_, _>>()
        };
        let touched: BTreeSet<ClipId> = (0..moved.clips.len() as ClipId)
            .filter(|&c| ranges(&moved, c) != ranges(&after, c))
            .collect();
        assert_eq!(
            touched,
            BTreeSet::from([1]),
            "the clip now at index 1 is the one tagged"
        );
        // The same project: one edit, labelled by the clip.
        panel.commit(&demo.doc, pending(), false, &mut queue);
        assert!(
            matches!(&queue[..], [AppCommand::Edit { label, .. }] if label == "auto-tag walk_male_01"),
            "{queue:?}"
        );
    }
}
