//! The query panel: an editor with highlighting, completion and live errors; a visual builder kept
//! in sync with the text; saved queries and history; result lanes from the ranges and masks
//! engines; a results table; evaluation details; a step-through of one operation; freezing a
//! result into a tag; JSON/CSV export; the "cut" export in a background thread.
//!
//! [`model`] holds the logic (no egui); this file draws and queues [`AppCommand`]s.

pub mod model;

use std::path::{Path, PathBuf};

use egui::text::{CCursor, CCursorRange, LayoutJob};
use egui::{Color32, FontId, RichText, Stroke, TextFormat, Ui};

use self::model::{
    BuilderEdit, Evaluation, StepTrace, TokenClass, apply_builder_edit, apply_completion,
    char_span_to_bytes, completions, doc_fingerprint, evaluate_all, first_binary_node,
    frozen_tag_name, highlight, push_history, trace_node,
};
use crate::core::anim::Clip;
use crate::core::cut::{
    CutError, CutOutput, CutSummary, DEFAULT_PATTERN, check_outputs, cut_clips, plan_cut,
};
use crate::core::doc::Edit;
use crate::core::tags::explain::{BinOp, Expr, result_csv, result_json, result_rows};
use crate::core::tags::query::{QueryEngine, next_version};
use crate::core::tags::{
    ClipId, ClipInfo, Engine, Filter, QueryError, Range, SavedQuery, Tag, TagDocument,
};
use crate::ui::command::AppCommand;
use crate::ui::jobs::Job;
use crate::ui::theme::{self, query_colors};
use crate::ui::timeline::ExtraLane;

/// Lane ids of the query lanes (in [`AppCommand::ExtraRangeClicked`]).
pub const LANE_RANGES: &str = "query:ranges";
pub const LANE_MASKS: &str = "query:masks";
pub const LANE_NODE: &str = "query:node";

pub use crate::ui::command::QueryExportKind;

/// The tabs of the panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Results,
    Builder,
    Details,
    Step,
    Export,
}

/// Documents with more ranges than this are evaluated in a background thread.
pub const BACKGROUND_RANGES: usize = 20_000;

/// An evaluation running in a background thread; it owns the engine (index, cache) meanwhile.
struct EvalJob {
    key: (String, u64),
    job: Job<(QueryEngine, Result<Evaluation, String>)>,
}

/// Why a cut export did not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CutStartError {
    /// `count` files of the cut already exist in the folder (and replacing was not allowed).
    Exists {
        count: usize,
    },
    Other(String),
}

/// A cut export running in a background thread: its progress counts files.
pub struct CutJob {
    pub out_dir: PathBuf,
    pub job: Job<Result<CutSummary, CutError>>,
}

/// State of the query panel (view state: not part of the document, except what it saves through
/// edits).
pub struct QueryPanel {
    /// The query text in the editor.
    pub text: String,
    /// The error of the current text, if it does not parse.
    pub error: Option<QueryError>,
    /// Results of the last text that parsed (kept while the text has an error, on the document
    /// they were evaluated on).
    pub eval: Option<Evaluation>,
    /// The fingerprint ([`model::doc_fingerprint`]) of the document `eval` was evaluated on.
    eval_doc: Option<u64>,
    /// Recent queries, newest first.
    pub history: Vec<String>,
    pub tab: Tab,
    /// The builder's tree (follows the text when it parses).
    pub builder: Option<Expr>,
    /// The tree node whose result is shown as an extra lane.
    pub node_lane: Option<usize>,
    /// The binary node traced in the step-through view, and the step.
    pub step_node: Option<usize>,
    pub step: usize,
    /// The results table lists every clip of the project, matched or not.
    pub whole_database: bool,
    /// The result range last clicked in the table.
    pub selected_result: Option<(ClipId, Range)>,
    pub save_name: String,
    pub freeze_name: String,
    /// The name last suggested for freezing (from the text then): while the field holds it, it
    /// follows the text.
    freeze_suggested: String,
    pub cut_pattern: String,
    pub cut: Option<CutJob>,
    /// The summary of the last cut, shown in the panel.
    pub cut_summary: Option<String>,
    /// The last export or panel message.
    pub message: Option<String>,
    engine: QueryEngine,
    /// The (text, document fingerprint) last parsed, and last evaluated (or being evaluated).
    evaluated: Option<(String, u64)>,
    eval_key: Option<(String, u64)>,
    parsed: Option<crate::core::tags::Query>,
    pending: Option<EvalJob>,
    /// The UI's context, to wake it when a background job ends.
    ctx: Option<egui::Context>,
    /// True when the last evaluation ran in the background thread.
    pub last_in_background: bool,
    completion: Option<(usize, usize, Vec<String>)>,
    /// Give the editor the focus back on the next frame, cursor at this character (after a
    /// completion).
    refocus: Option<usize>,
    /// The height each Results row took when last drawn, and what they were drawn for (the
    /// result, the panel's width, whole database): rows out of view take that height without
    /// being laid out.
    row_heights: (Option<ResultsKey>, std::collections::HashMap<ClipId, f32>),
}

/// What the Results rows' heights depend on: the document and query evaluated, the panel's
/// width (its bits), and whether every clip has a row.
type ResultsKey = (Option<u64>, String, u32, bool);

impl Default for QueryPanel {
    fn default() -> Self {
        Self {
            text: String::new(),
            error: None,
            eval: None,
            eval_doc: None,
            history: Vec::new(),
            tab: Tab::Results,
            builder: None,
            node_lane: None,
            step_node: None,
            step: 0,
            whole_database: false,
            selected_result: None,
            save_name: String::new(),
            freeze_name: String::new(),
            freeze_suggested: String::new(),
            cut_pattern: DEFAULT_PATTERN.to_owned(),
            cut: None,
            cut_summary: None,
            message: None,
            engine: model::new_engine(),
            evaluated: None,
            eval_key: None,
            parsed: None,
            pending: None,
            ctx: None,
            last_in_background: false,
            completion: None,
            refocus: None,
            row_heights: Default::default(),
        }
    }
}

impl QueryPanel {
    /// A panel starting on `text`.
    pub fn with_text(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            ..Self::default()
        }
    }

    /// Re-parses when the text or the document changed since the last frame, and evaluates: on
    /// this thread for documents up to [`BACKGROUND_RANGES`] ranges, in a background thread above
    /// (the panel keeps showing the previous result meanwhile).
    pub fn update(&mut self, doc: &TagDocument) {
        let key = (self.text.clone(), doc_fingerprint(doc));
        // A finished background evaluation.
        let finished = self.pending.as_mut().and_then(|p| p.job.poll());
        if let Some(result) = finished
            && let Some(pending) = self.pending.take()
        {
            match result {
                Ok((engine, result)) => {
                    self.engine = engine;
                    if pending.key == key {
                        self.install(result, key.1);
                    } else {
                        self.eval_key = None;
                    }
                }
                Err(e) => {
                    // The evaluation failed (a panic in its thread): said where the text's errors
                    // are, and not run again until the text or the document changes (it would
                    // fail again, on both cores, forever).
                    self.engine = model::new_engine();
                    if pending.key == key {
                        self.install(Err(format!("the evaluation failed: {e}")), key.1);
                    } else {
                        self.eval_key = None;
                    }
                }
            }
        }
        // Parse.
        if self.evaluated.as_ref() != Some(&key) {
            self.evaluated = Some(key.clone());
            if self.text.trim().is_empty() {
                self.error = None;
                self.eval = None;
                self.builder = None;
                self.parsed = None;
                self.eval_key = None;
                return;
            }
            match doc.parse_query(&self.text) {
                Err(e) => {
                    self.error = Some(e);
                    // The last result is kept while the text is being typed, but not on
                    // another document (a tag deleted, another project opened): its lanes and
                    // rows would stand for ranges and clips that are not these.
                    if self.eval_doc != Some(key.1) {
                        self.forget_results();
                    }
                }
                Ok(q) => {
                    self.error = None;
                    self.builder = Expr::from_query(&q, doc).ok();
                    self.parsed = Some(q);
                }
            }
        }
        // Evaluate.
        if self.error.is_some()
            || self.text.trim().is_empty()
            || self.pending.is_some()
            || self.eval_key.as_ref() == Some(&key)
        {
            return;
        }
        let Some(q) = self.parsed.clone() else {
            return;
        };
        self.eval_key = Some(key.clone());
        let ranges: usize = doc.tags.iter().map(|t| t.ranges.range_count()).sum();
        self.last_in_background = ranges > BACKGROUND_RANGES;
        if self.last_in_background {
            let mut engine = std::mem::replace(&mut self.engine, model::new_engine());
            let doc = doc.clone();
            let text = self.text.clone();
            let job = Job::spawn("evaluate query", self.ctx.as_ref(), move |_| {
                let result = evaluate_all(&mut engine, &doc, &text, &q);
                (engine, result)
            });
            self.pending = Some(EvalJob { key, job });
        } else {
            let result = evaluate_all(&mut self.engine, doc, &self.text, &q);
            self.install(result, key.1);
        }
    }

    /// Drops the results shown and what points into them (the node lane, the step view, the
    /// result row clicked).
    fn forget_results(&mut self) {
        self.eval = None;
        self.eval_doc = None;
        self.eval_key = None;
        self.node_lane = None;
        self.step_node = None;
        self.step = 0;
        self.selected_result = None;
    }

    /// Another project replaced the open one: nothing of this one's results, running evaluation
    /// or names typed for them stays (the text, the history and the settings do). A running cut
    /// finishes writing the files it was started for.
    pub fn forget_project(&mut self) {
        self.forget_results();
        if let Some(p) = self.pending.take() {
            p.job.cancel();
        }
        self.evaluated = None;
        self.parsed = None;
        self.error = None;
        self.builder = None;
        self.message = None;
        self.save_name.clear();
        self.freeze_name.clear();
        self.freeze_suggested.clear();
    }

    /// True while a background evaluation runs.
    pub fn is_evaluating(&self) -> bool {
        self.pending.is_some()
    }

    /// The result of the text in the editor on the document as it is: `None` while a background
    /// evaluation runs (the result shown meanwhile is of an earlier text or document) or when
    /// the text does not parse. What is frozen, exported or cut comes from here.
    pub fn current_result(&self) -> Option<&Evaluation> {
        if self.is_evaluating() || self.error.is_some() {
            return None;
        }
        self.eval.as_ref()
    }

    fn install(&mut self, result: Result<Evaluation, String>, doc: u64) {
        match result {
            Ok(ev) => {
                self.eval_doc = Some(doc);
                let same_tree = self.eval.as_ref().is_some_and(|o| o.query == ev.query);
                if !same_tree {
                    self.node_lane = None;
                    self.step_node = first_binary_node(&ev.tree);
                    self.step = 0;
                }
                self.eval = Some(ev);
            }
            Err(e) => {
                self.error = Some(QueryError {
                    span: 0..self.text.chars().count(),
                    message: e,
                    suggestions: Vec::new(),
                })
            }
        }
    }

    /// The result lanes for `clip`: ranges engine, masks engine (alarmed when they differ) and the
    /// selected tree node.
    pub fn extra_lanes(&self, doc: &TagDocument, clip: ClipId, dark: bool) -> Vec<ExtraLane> {
        let Some(ev) = &self.eval else {
            return Vec::new();
        };
        let c = query_colors(dark);
        let differ = !ev.agree();
        let here = ev.ranges.clip_ranges(clip) != ev.masks.clip_ranges(clip);
        let warn = if differ {
            format!(
                "WARNING: the engines disagree on {} clip(s){}",
                ev.mismatched.len(),
                if here { ", this one included" } else { "" }
            )
        } else {
            "the ranges and masks engines agree".to_owned()
        };
        let mut lanes = vec![
            ExtraLane {
                id: LANE_RANGES.to_owned(),
                label: "result (ranges engine)".to_owned(),
                tooltip: format!("{}\nranges engine, {:.0} µs; {warn}", ev.text, ev.ranges_us),
                color: c.lane_ranges,
                ranges: ev.ranges.clip_ranges(clip).to_vec(),
                alarm: differ,
            },
            ExtraLane {
                id: LANE_MASKS.to_owned(),
                label: match &ev.masks_unavailable {
                    None => "result (masks engine)".to_owned(),
                    Some(_) => "result (masks: not run)".to_owned(),
                },
                tooltip: match &ev.masks_unavailable {
                    None => format!("{}\nmasks engine, {:.0} µs; {warn}", ev.text, ev.masks_us),
                    Some(why) => format!("{}\nmasks engine not run: {why}", ev.text),
                },
                color: c.lane_masks,
                ranges: ev.masks.clip_ranges(clip).to_vec(),
                alarm: differ,
            },
        ];
        if let Some(n) = self.node_lane.filter(|&n| n < ev.node_results.len()) {
            lanes.push(ExtraLane {
                id: LANE_NODE.to_owned(),
                label: format!("node: {}", short(&ev.tree.expr(n, doc).to_text())),
                tooltip: "the intermediate result of the selected node of the expression tree"
                    .to_owned(),
                color: c.lane_node,
                ranges: ev.node_results[n].clip_ranges(clip).to_vec(),
                alarm: false,
            });
        }
        lanes
    }

    /// Writes the current result to `path`: JSON in the `taglane query --json` shape (engine
    /// `auto`) or CSV.
    pub fn export(
        &mut self,
        doc: &TagDocument,
        kind: QueryExportKind,
        path: &Path,
    ) -> Result<String, String> {
        let Some(ev) = self.current_result() else {
            return Err("no current query result to export (still evaluating?)".to_owned());
        };
        let mut text = match kind {
            QueryExportKind::Json => result_json(doc, &ev.text, Engine::Auto.name(), &ev.auto),
            QueryExportKind::Csv => result_csv(doc, &ev.auto),
        };
        if kind == QueryExportKind::Json {
            text.push('\n');
        }
        crate::core::io::write_atomic(path, text.as_bytes(), false)
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        let msg = format!(
            "exported {} range(s) of `{}` to {}",
            ev.auto.range_count(),
            ev.text,
            path.display()
        );
        let t = ev.text.clone();
        push_history(&mut self.history, &t);
        self.message = Some(msg.clone());
        Ok(msg)
    }

    /// Starts the cut export of the current result into `out_dir` in a background thread.
    /// `demo` makes clips load from the embedded demo files; otherwise sources are read relative
    /// to `base_dir`. Files of the cut that already exist are replaced only with `replace_existing`; otherwise
    /// nothing starts and the error is [`CutError::Exists`] (the app then asks).
    pub fn start_cut(
        &mut self,
        doc: &TagDocument,
        out_dir: PathBuf,
        base_dir: Option<PathBuf>,
        demo: bool,
        replace_existing: bool,
        ctx: Option<&egui::Context>,
    ) -> Result<(), CutStartError> {
        if self.cut.is_some() {
            return Err(CutStartError::Other(
                "a cut export is already running".to_owned(),
            ));
        }
        let Some(ev) = self.current_result() else {
            return Err(CutStartError::Other(
                "no current query result to cut (still evaluating?)".to_owned(),
            ));
        };
        let plan = plan_cut(doc, &ev.auto, &ev.text, &self.cut_pattern)
            .map_err(|e| CutStartError::Other(e.to_string()))?;
        let out = CutOutput {
            dir: &out_dir,
            base_dir: base_dir.as_deref(),
            replace_existing,
        };
        // Checked here too, so that the app can ask before anything runs.
        match check_outputs(doc, &plan, out) {
            Ok(()) => {}
            Err(CutError::Exists { count, .. }) => return Err(CutStartError::Exists { count }),
            Err(e) => return Err(CutStartError::Other(e.to_string())),
        }
        let doc = doc.clone();
        let dir = out_dir.clone();
        let job = Job::spawn("cut into BVH files", ctx, move |p| {
            let mut load =
                |c: ClipId, info: &ClipInfo| load_clip(c, info, base_dir.as_deref(), demo);
            let mut tick = |done: usize, total: usize| {
                p.set_total(total as u64);
                p.set_done(done as u64);
                !p.is_cancelled()
            };
            let out = CutOutput {
                dir: &dir,
                base_dir: base_dir.as_deref(),
                replace_existing,
            };
            cut_clips(&doc, &plan, out, &mut load, &mut tick)
        });
        self.cut = Some(CutJob { out_dir, job });
        self.cut_summary = None;
        Ok(())
    }

    /// Collects a finished cut; returns its summary line once.
    pub fn poll_cut(&mut self) -> Option<String> {
        let cut = self.cut.as_mut()?;
        let result = cut.job.poll()?;
        let out_dir = cut.out_dir.clone();
        self.cut = None;
        let line = match result {
            Ok(Ok(summary)) => summary.line(&out_dir),
            Ok(Err(e)) => format!("cut failed: {e}"),
            Err(e) => format!("cut failed: {e}"),
        };
        self.cut_summary = Some(line.clone());
        Some(line)
    }

    /// Waits for a running cut to finish (tests).
    pub fn wait_cut(&mut self) -> Option<String> {
        while self.cut.is_some() {
            if let Some(l) = self.poll_cut() {
                return Some(l);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        None
    }

    /// The edit that adds the current result as a new tag named `name` (frozen ranges).
    pub fn freeze_edit(&self, doc: &TagDocument, name: &str) -> Option<Edit> {
        let ev = self.current_result()?;
        let ranges = ev
            .auto
            .iter()
            .filter(|(_, r)| !r.is_empty())
            .map(|(c, r)| (c, r.to_vec()))
            .collect();
        Some(Edit::InsertTag {
            index: doc.tags.len(),
            tag: Tag {
                name: name.to_owned(),
                color: Some(doc.new_tag_color()),
                ranges,
                markers: Default::default(),
                notes: Default::default(),
                version: next_version(),
            },
        })
    }
}

/// Loads the animation of a clip, by the project's one rule ([`crate::core::project::load`]).
fn load_clip(
    clip: ClipId,
    info: &ClipInfo,
    base_dir: Option<&Path>,
    demo: bool,
) -> Result<Clip, String> {
    crate::core::project::load(&crate::core::project::ClipRequest::new(
        clip, info, base_dir, demo,
    )?)
}

fn short(text: &str) -> String {
    let t: String = text.chars().take(28).collect();
    if t.len() < text.len() {
        format!("{t}..")
    } else {
        t
    }
}

fn class_color(class: TokenClass, ui: &Ui, dark: bool) -> Color32 {
    let c = query_colors(dark);
    match class {
        TokenClass::Tag => c.tag,
        TokenClass::UnknownTag => c.unknown_tag,
        TokenClass::Function => c.function,
        TokenClass::Keyword => c.keyword,
        TokenClass::Operator => c.operator,
        TokenClass::Number => c.number,
        _ => ui.visuals().text_color(),
    }
}

/// The highlighted text of the editor, the error span underlined.
fn layout_job(
    ui: &Ui,
    text: &str,
    names: &[&str],
    error: Option<&QueryError>,
    dark: bool,
) -> LayoutJob {
    let font = FontId::monospace(14.0);
    let err_bytes = error.map(|e| {
        let mut span = e.span.clone();
        if span.end <= span.start {
            span.end = span.start + 1;
        }
        char_span_to_bytes(text, &span)
    });
    let err_color = theme::palette(dark).error;
    let mut job = LayoutJob::default();
    for (range, class) in highlight(text, names) {
        // Split the piece at the error span so the underline covers exactly the columns.
        let mut cuts = vec![range.start, range.end];
        if let Some(e) = &err_bytes {
            for b in [e.start, e.end] {
                if b > range.start && b < range.end {
                    cuts.push(b);
                }
            }
        }
        cuts.sort_unstable();
        for w in cuts.windows(2) {
            let (a, b) = (w[0], w[1]);
            let in_err = err_bytes
                .as_ref()
                .is_some_and(|e| a >= e.start && b <= e.end);
            job.append(
                &text[a..b],
                0.0,
                TextFormat {
                    font_id: font.clone(),
                    color: class_color(class, ui, dark),
                    underline: if in_err {
                        Stroke::new(2.0, err_color)
                    } else {
                        Stroke::NONE
                    },
                    ..Default::default()
                },
            );
        }
    }
    // An error at the very end (e.g. "expected a tag name") gets an underlined blank.
    if let Some(e) = &err_bytes
        && e.start >= text.len()
    {
        job.append(
            " ",
            0.0,
            TextFormat {
                font_id: font,
                underline: Stroke::new(2.0, err_color),
                ..Default::default()
            },
        );
    }
    job
}

/// Shows the panel; queues commands into `out`.
pub fn query_ui(
    ui: &mut Ui,
    panel: &mut QueryPanel,
    doc: &TagDocument,
    clip: ClipId,
    dark: bool,
    out: &mut Vec<AppCommand>,
) {
    panel.ctx = Some(ui.ctx().clone());
    if panel.is_evaluating() {
        ui.ctx()
            .request_repaint_after(std::time::Duration::from_millis(50));
    }
    let names: Vec<&str> = doc.tags.iter().map(|t| t.name.as_str()).collect();
    ui.horizontal(|ui| {
        ui.strong("Query");
        editor_ui(ui, panel, &names, dark);
    });
    completion_ui(ui, panel);
    status_line_ui(ui, panel, dark);
    // Wraps in a narrow window instead of cutting "Saved queries" and "History" off.
    ui.horizontal_wrapped(|ui| {
        for (tab, label) in [
            (Tab::Results, "Results"),
            (Tab::Builder, "Builder"),
            (Tab::Details, "Details"),
            (Tab::Step, "Step through"),
            (Tab::Export, "Save and export"),
        ] {
            if ui.selectable_label(panel.tab == tab, label).clicked() {
                panel.tab = tab;
            }
        }
        ui.separator();
        saved_and_history_ui(ui, panel, doc, out);
    });
    ui.separator();
    // A stable id: the rows above (completions, errors) come and go, and must not change the ids
    // of the widgets below (an open menu would close).
    ui.push_id("query_tab_content", |ui| {
        egui::ScrollArea::both()
            .id_salt("query_tab_scroll")
            .auto_shrink([false, false])
            .show(ui, |ui| match panel.tab {
                Tab::Results => results_ui(ui, panel, doc, out),
                Tab::Builder => builder_ui(ui, panel, doc),
                Tab::Details => details_ui(ui, panel, doc, clip),
                Tab::Step => step_ui(ui, panel, doc, clip, dark),
                Tab::Export => export_ui(ui, panel, doc, out),
            });
    });
}

fn editor_ui(ui: &mut Ui, panel: &mut QueryPanel, names: &[&str], dark: bool) {
    let error = panel.error.clone();
    let mut layouter = |ui: &Ui, buf: &dyn egui::TextBuffer, wrap: f32| {
        let mut job = layout_job(ui, buf.as_str(), names, error.as_ref(), dark);
        job.wrap.max_width = wrap;
        ui.fonts_mut(|f| f.layout_job(job))
    };
    let label = ui.label("Expression");
    let id = editor_id();
    // Tab takes the first completion (before the editor sees the key, which would move focus).
    if ui.memory(|m| m.has_focus(id))
        && let Some((start, cur, list)) = panel.completion.clone()
        && ui.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Tab))
    {
        accept_completion(ui, panel, id, start, cur, &list[0]);
    }
    if let Some(at) = panel.refocus.take() {
        ui.memory_mut(|m| m.request_focus(id));
        let mut state = egui::TextEdit::load_state(ui.ctx(), id).unwrap_or_default();
        state
            .cursor
            .set_char_range(Some(CCursorRange::one(CCursor::new(at))));
        state.store(ui.ctx(), id);
    }
    let output = egui::TextEdit::singleline(&mut panel.text)
        .id(id)
        .desired_width(ui.available_width() - 8.0)
        .hint_text("e.g. (Walking | Running) & Male - Tired")
        // While completions are offered, Tab is ours (it takes the first) instead of moving focus.
        .lock_focus(panel.completion.is_some())
        .layouter(&mut layouter)
        .show(ui);
    let response = output.response.response.labelled_by(label.id);
    let cursor = output
        .cursor_range
        .or_else(|| output.state.cursor.char_range())
        .map(|c| c.primary.index.0);
    if ui.memory(|m| m.has_focus(id))
        && let Some(cursor) = cursor
    {
        let (start, list) = completions(&panel.text, cursor, names);
        panel.completion = (!list.is_empty()).then_some((start, cursor, list));
    }
    if response.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
        let t = panel.text.clone();
        if panel.error.is_none() {
            push_history(&mut panel.history, &t);
        }
    }
}

fn accept_completion(
    ui: &Ui,
    panel: &mut QueryPanel,
    id: egui::Id,
    start: usize,
    cursor: usize,
    with: &str,
) {
    let (text, at) = apply_completion(&panel.text, start, cursor, with);
    panel.text = text;
    panel.completion = None;
    ui.memory_mut(|m| m.request_focus(id));
    panel.refocus = Some(at);
}

fn completion_ui(ui: &mut Ui, panel: &mut QueryPanel) {
    let Some((start, cursor, list)) = panel.completion.clone() else {
        return;
    };
    let id = editor_id();
    let mut clicked = false;
    ui.horizontal_wrapped(|ui| {
        ui.weak("Complete (Tab):");
        for c in &list {
            if ui.small_button(c).clicked() {
                accept_completion(ui, panel, id, start, cursor, c);
                clicked = true;
            }
        }
    });
    // The list goes away when the editor has lost focus, unless a button is being pressed.
    if !clicked && !ui.memory(|m| m.has_focus(id)) && ui.input(|i| !i.pointer.any_down()) {
        panel.completion = None;
    }
}

fn status_line_ui(ui: &mut Ui, panel: &QueryPanel, dark: bool) {
    let pal = theme::palette(dark);
    if let Some(e) = &panel.error {
        // Wrapped: a message with its suggestions is often wider than the panel.
        ui.add(egui::Label::new(RichText::new(format!("Error at {e}")).color(pal.error)).wrap())
            .on_hover_text(e.render(&panel.text));
        if panel.eval.is_some() {
            ui.weak("(showing the results of the last valid query)");
        }
        return;
    }
    let Some(ev) = &panel.eval else {
        if panel.is_evaluating() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("evaluating on the whole database...");
            });
        } else {
            ui.weak("Type a query: tag names, | & - ^ !, parentheses, first(x, N) ...");
        }
        return;
    };
    ui.horizontal(|ui| {
        if panel.is_evaluating() {
            ui.spinner();
            ui.label("evaluating on the whole database...");
            ui.separator();
        }
        if !ev.agree() {
            ui.label(
                RichText::new(format!(
                    "WARNING: the ranges and masks engines DISAGREE on {} clip(s)! This is a bug.",
                    ev.mismatched.len()
                ))
                .strong()
                .color(pal.error),
            );
        }
        ui.label(format!(
            "{} range(s), {} frames on {} clip(s)",
            ev.auto.range_count(),
            ev.auto.total_frames(),
            ev.auto.clips().len()
        ));
        ui.separator();
        let masks = match ev.masks_unavailable {
            None => format!("masks {:.0} µs", ev.masks_us),
            Some(_) => "masks not run (over the memory budget)".to_owned(),
        };
        ui.weak(format!(
            "ranges {:.0} µs, {masks}, auto {:.0} µs{}",
            ev.ranges_us,
            ev.auto_us,
            if ev.cached { ", cache hit" } else { "" }
        ));
        if let Some(m) = &panel.message {
            ui.separator();
            ui.label(m);
        }
    });
}

fn saved_and_history_ui(
    ui: &mut Ui,
    panel: &mut QueryPanel,
    doc: &TagDocument,
    out: &mut Vec<AppCommand>,
) {
    ui.menu_button("Saved queries", |ui| {
        if doc.queries.is_empty() {
            ui.label("No saved query");
        }
        for (k, q) in doc.queries.iter().enumerate() {
            ui.horizontal(|ui| {
                if ui.button(&q.name).on_hover_text(&q.expr).clicked() {
                    panel.text = q.expr.clone();
                    push_history(&mut panel.history, &q.expr);
                    ui.close();
                }
                if ui
                    .small_button("x")
                    .on_hover_text("Delete this saved query")
                    .clicked()
                {
                    let mut list = doc.queries.clone();
                    list.remove(k);
                    out.push(AppCommand::Edit {
                        edit: Edit::SetQueries(list),
                        label: format!("delete query {}", q.name),
                        select: None,
                    });
                    ui.close();
                }
            });
        }
    });
    ui.menu_button("History", |ui| {
        if panel.history.is_empty() {
            ui.label("No recent query");
        }
        for h in panel.history.clone() {
            if ui.button(&h).clicked() {
                panel.text = h;
                ui.close();
            }
        }
    });
}

fn results_ui(ui: &mut Ui, panel: &mut QueryPanel, doc: &TagDocument, out: &mut Vec<AppCommand>) {
    let Some(ev) = &panel.eval else {
        return;
    };
    ui.horizontal(|ui| {
        ui.checkbox(&mut panel.whole_database, "Whole database (every clip)");
    });
    let rows = result_rows(doc, &ev.auto);
    let mut selected = panel.selected_result;
    // Row by row rather than a grid: a clip's matched ranges wrap onto as many lines as they
    // need, and the next clip starts below them (a grid sizes its rows from the frame before,
    // so wrapped cells ran into the next row).
    let head = |ui: &mut Ui, cells: [&str; 5]| {
        results_row(ui, None, |ui, w| {
            for (k, (cell, width)) in cells.iter().zip(w).enumerate() {
                results_cell(ui, width, k == 1 || k == 2 || k == 3, |ui| {
                    ui.label(RichText::new(*cell).strong());
                });
            }
        });
    };
    head(
        ui,
        [
            "clip",
            "ranges",
            "frames",
            "seconds",
            "matched ranges (click to jump)",
        ],
    );
    // Rows out of view are not laid out: each takes the height it took when last drawn. A broad
    // result over a large library laid out every clip's row and up to 40 range labels each,
    // every frame (tens of thousands of widgets).
    let key: ResultsKey = (
        panel.eval_doc,
        ev.postfix.clone(),
        ui.available_width().to_bits(),
        panel.whole_database,
    );
    if panel.row_heights.0.as_ref() != Some(&key) {
        panel.row_heights = (Some(key), Default::default());
    }
    let spacing = ui.spacing().item_spacing.y;
    let mut stripe = false;
    for (c, info) in doc.clips.iter().enumerate() {
        let c = c as ClipId;
        // `rows` is in clip order (the result's).
        let row = rows
            .binary_search_by_key(&c, |r| r.0)
            .ok()
            .map(|i| &rows[i]);
        if row.is_none() && !panel.whole_database {
            continue;
        }
        stripe = !stripe;
        if let Some(&h) = panel.row_heights.1.get(&c) {
            let rect = egui::Rect::from_min_size(ui.cursor().min, egui::vec2(1.0, h));
            if !ui.is_rect_visible(rect) {
                ui.allocate_space(egui::vec2(0.0, h));
                continue;
            }
        }
        let (n, f, s) = row.map_or((0, 0, 0.0), |r| (r.1, r.2, r.3));
        let top = ui.cursor().top();
        results_row(ui, stripe.then_some(()), |ui, w| {
            results_cell(ui, w[0], false, |ui| {
                ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
                if ui.link(&info.name).on_hover_text(&info.name).clicked() {
                    out.push(AppCommand::SelectClip(c));
                }
            });
            for (text, width) in [(n.to_string(), w[1]), (f.to_string(), w[2])] {
                results_cell(ui, width, true, |ui| {
                    ui.label(text);
                });
            }
            results_cell(ui, w[3], true, |ui| {
                ui.label(format!("{s:.2}"));
            });
            let wrapped = egui::Layout::left_to_right(egui::Align::TOP).with_main_wrap(true);
            ui.allocate_ui_with_layout(egui::vec2(w[4], 0.0), wrapped, |ui| {
                for r in ev.auto.clip_ranges(c).iter().take(40) {
                    let is_sel = selected == Some((c, *r));
                    if ui
                        .selectable_label(is_sel, format!("[{}, {})", r.start, r.stop))
                        .clicked()
                    {
                        selected = Some((c, *r));
                        out.push(AppCommand::QueryJump { clip: c, range: *r });
                    }
                }
                let more = ev.auto.clip_ranges(c).len().saturating_sub(40);
                if more > 0 {
                    ui.weak(format!("and {more} more"));
                }
            });
        });
        // Without the spacing after it, which `allocate_space` adds again.
        let h = (ui.cursor().top() - top - spacing).max(0.0);
        panel.row_heights.1.insert(c, h);
    }
    let total_seconds = format!("{:.2}", rows.iter().map(|r| r.3).sum::<f64>());
    head(
        ui,
        [
            "total",
            &ev.auto.range_count().to_string(),
            &ev.auto.total_frames().to_string(),
            &total_seconds,
            "",
        ],
    );
    panel.selected_result = selected;
}

/// One row of the Results table: `cells` lays out the five columns left to right, given their
/// widths (clip, three numbers, then the rest of the width for the matched ranges). `stripe`
/// paints a band behind the row.
fn results_row(ui: &mut Ui, stripe: Option<()>, cells: impl FnOnce(&mut Ui, [f32; 5])) {
    let background = ui.painter().add(egui::Shape::Noop);
    let spacing = ui.spacing().item_spacing.x;
    let rest = (ui.available_width() - 180.0 - 3.0 * 56.0 - 4.0 * spacing).max(120.0);
    let widths = [180.0, 56.0, 56.0, 56.0, rest];
    let row = ui.horizontal_top(|ui| cells(ui, widths)).response;
    if stripe.is_some() {
        let fill = ui.visuals().faint_bg_color;
        let band = egui::Rect::from_min_max(
            row.rect.min,
            egui::pos2(ui.max_rect().right(), row.rect.max.y),
        );
        ui.painter()
            .set(background, egui::Shape::rect_filled(band, 0.0, fill));
    }
}

/// A cell of a Results row `width` wide, its content left-aligned (right-aligned for numbers).
fn results_cell(ui: &mut Ui, width: f32, number: bool, content: impl FnOnce(&mut Ui)) {
    let align = if number {
        egui::Layout::right_to_left(egui::Align::Center)
    } else {
        egui::Layout::left_to_right(egui::Align::Center)
    };
    ui.allocate_ui_with_layout(egui::vec2(width, 18.0), align, |ui| {
        ui.set_min_size(egui::vec2(width, 18.0));
        content(ui);
    });
}

fn builder_ui(ui: &mut Ui, panel: &mut QueryPanel, doc: &TagDocument) {
    let names: Vec<String> = doc.tags.iter().map(|t| t.name.clone()).collect();
    if names.is_empty() {
        ui.label("The project has no tags yet.");
        return;
    }
    ui.weak("Pick tags and combine them; the text above follows (and typing updates this tree).");
    let mut tree = match panel.builder.clone() {
        Some(t) => t,
        None => {
            ui.horizontal(|ui| {
                ui.label("Start from a tag:");
                for n in names.iter().take(12) {
                    if ui.button(n).clicked() {
                        panel.text = Expr::Tag(n.clone()).to_text();
                    }
                }
            });
            return;
        }
    };
    let mut edit: Option<(Vec<usize>, BuilderEdit)> = None;
    builder_node_ui(ui, &tree, &mut Vec::new(), &names, &mut edit);
    if let Some((path, e)) = edit
        && apply_builder_edit(&mut tree, &path, e)
    {
        panel.text = tree.to_text();
        panel.builder = Some(tree);
    }
}

fn tag_combo(
    ui: &mut Ui,
    id: impl std::hash::Hash + std::fmt::Debug,
    current: &str,
    names: &[String],
) -> Option<String> {
    let mut picked = None;
    egui::ComboBox::from_id_salt(id)
        .selected_text(current)
        .show_ui(ui, |ui| {
            for n in names {
                if ui.selectable_label(n == current, n).clicked() {
                    picked = Some(n.clone());
                }
            }
        });
    picked
}

fn builder_node_ui(
    ui: &mut Ui,
    node: &Expr,
    path: &mut Vec<usize>,
    names: &[String],
    edit: &mut Option<(Vec<usize>, BuilderEdit)>,
) {
    let here = path.clone();
    let mut set = |e: BuilderEdit| *edit = Some((here.clone(), e));
    ui.horizontal(|ui| {
        ui.add_space(path.len() as f32 * 18.0);
        match node {
            Expr::Tag(name) => {
                ui.label("tag");
                if let Some(n) = tag_combo(ui, ("b_tag", &here), name, names) {
                    set(BuilderEdit::SetTag(n));
                }
            }
            Expr::Not(_) => {
                ui.label("not (complement)");
            }
            Expr::Binary(op, ..) => {
                egui::ComboBox::from_id_salt(("b_op", &here))
                    .selected_text(format!("{} {}", op.symbol(), op.word()))
                    .show_ui(ui, |ui| {
                        for o in BinOp::ALL {
                            if ui
                                .selectable_label(o == *op, format!("{} {}", o.symbol(), o.word()))
                                .clicked()
                            {
                                set(BuilderEdit::SetOp(o));
                            }
                        }
                    });
            }
            Expr::Filter(f, arg, _) => {
                egui::ComboBox::from_id_salt(("b_filter", &here))
                    .selected_text(f.name())
                    .show_ui(ui, |ui| {
                        for g in Filter::ALL {
                            if ui.selectable_label(g == *f, g.name()).clicked() {
                                set(BuilderEdit::SetFilter(g));
                            }
                        }
                    });
                if let Some(what) = f.argument() {
                    let mut v = *arg;
                    let l = ui.label(what);
                    if ui
                        .add(egui::DragValue::new(&mut v).range(0..=100_000))
                        .labelled_by(l.id)
                        .changed()
                    {
                        set(BuilderEdit::SetArg(v));
                    }
                }
            }
        }
        ui.menu_button("+", |ui| {
            for o in BinOp::ALL {
                ui.menu_button(format!("{} {} with tag", o.symbol(), o.word()), |ui| {
                    for n in names {
                        if ui.button(n).clicked() {
                            set(BuilderEdit::Combine(o, n.clone()));
                            ui.close();
                        }
                    }
                });
            }
            ui.menu_button("filter", |ui| {
                for f in Filter::ALL {
                    if ui.button(f.name()).clicked() {
                        set(BuilderEdit::WrapFilter(f));
                        ui.close();
                    }
                }
            });
            if ui.button("not (toggle complement)").clicked() {
                set(BuilderEdit::ToggleNot);
                ui.close();
            }
        })
        .response
        .on_hover_text("Combine, filter or negate this node");
        if !matches!(node, Expr::Tag(_))
            && ui
                .small_button("remove")
                .on_hover_text("Replace this node by its first operand")
                .clicked()
        {
            set(BuilderEdit::Unwrap);
        }
        if matches!(node, Expr::Tag(_))
            && !path.is_empty()
            && ui
                .small_button("remove")
                .on_hover_text(
                    "Take this tag out of the query (its operation keeps the other side)",
                )
                .clicked()
        {
            set(BuilderEdit::Remove);
        }
    });
    let children: Vec<&Expr> = match node {
        Expr::Tag(_) => vec![],
        Expr::Not(a) | Expr::Filter(_, _, a) => vec![a],
        Expr::Binary(_, a, b) => vec![a, b],
    };
    for (k, c) in children.into_iter().enumerate() {
        path.push(k);
        builder_node_ui(ui, c, path, names, edit);
        path.pop();
    }
}

fn details_ui(ui: &mut Ui, panel: &mut QueryPanel, doc: &TagDocument, clip: ClipId) {
    let Some(ev) = &panel.eval else {
        return;
    };
    egui::Grid::new("query_details")
        .num_columns(2)
        .show(ui, |ui| {
            ui.label("postfix program");
            ui.monospace(&ev.postfix);
            ui.end_row();
            ui.label("time (µs)");
            ui.label(format!(
                "ranges {:.1}   masks {:.1}   auto {:.1}",
                ev.ranges_us, ev.masks_us, ev.auto_us
            ));
            ui.end_row();
            ui.label("cache");
            ui.label(if ev.cached {
                "answered from the query cache"
            } else {
                "computed (not in the cache)"
            });
            ui.end_row();
            ui.label("result memory (bytes)");
            ui.label(format!(
                "as ranges {}   as masks {}",
                ev.result_ranges_bytes, ev.result_masks_bytes
            ));
            ui.end_row();
            ui.label("tag index memory (bytes)");
            ui.label(format!(
                "ranges {}   masks {} (of {} of {} tags, built when a query first reads them)",
                ev.index_ranges_bytes, ev.index_masks_bytes, ev.index_masks_built, ev.index_tags
            ));
            ui.end_row();
            if let Some(why) = &ev.masks_unavailable {
                ui.label("masks engine");
                ui.label(format!("not run: {why}"));
                ui.end_row();
            }
            ui.label("engines agree");
            ui.label(if ev.agree() {
                "yes".to_owned()
            } else {
                format!("NO, on clips {:?}", ev.mismatched)
            });
            ui.end_row();
            ui.label("auto");
            ui.add(egui::Label::new(ev.auto_report.reason()).wrap());
            ui.end_row();
        });
    ui.separator();
    ui.strong("Expression tree (click a node to show its result as a lane)");
    let mut clicked = None;
    for (i, depth) in ev.tree.preorder() {
        let r = &ev.node_results[i];
        let here = r.clip_ranges(clip);
        ui.horizontal(|ui| {
            ui.add_space(depth as f32 * 18.0);
            let text = format!(
                "{}   -> {} range(s), {} frames overall; here {:?}",
                ev.tree.label(i, doc),
                r.range_count(),
                r.total_frames(),
                here.iter()
                    .take(6)
                    .map(|x| (x.start, x.stop))
                    .collect::<Vec<_>>()
            );
            if ui
                .selectable_label(panel.node_lane == Some(i), text)
                .clicked()
            {
                clicked = Some(i);
            }
        });
    }
    if let Some(i) = clicked {
        panel.node_lane = if panel.node_lane == Some(i) {
            None
        } else {
            Some(i)
        };
        if matches!(
            ev.tree.nodes[i].kind,
            crate::core::tags::explain::NodeKind::Binary(_)
        ) {
            panel.step_node = Some(i);
            panel.step = 0;
        }
    }
    ui.separator();
    ui.strong("Engine chosen by auto, per clip");
    egui::Grid::new("auto_choices")
        .striped(true)
        .show(ui, |ui| {
            ui.strong("clip");
            ui.strong("engine");
            ui.strong("input ranges");
            ui.strong("words");
            ui.strong("why");
            ui.end_row();
            for ch in &ev.auto_report.choices {
                let name = doc
                    .clips
                    .get(ch.clip as usize)
                    .map_or("?", |c| c.name.as_str());
                ui.label(name);
                ui.label(ch.engine.name());
                ui.label(ch.leaf_ranges.to_string());
                ui.label(ch.words.to_string());
                let leaves = ev.query.code().iter().filter(|&&c| c >= 0).count().max(1);
                let per_word = ch.leaf_ranges as f64 / (ch.words.max(1) * leaves) as f64;
                ui.label(if ev.auto_report.has_filters {
                    "the query has filters: ranges".to_owned()
                } else {
                    format!(
                        "{per_word:.3} ranges per word per input {} {}",
                        if per_word > crate::core::tags::query::AUTO_MASKS_RANGES_PER_WORD {
                            ">"
                        } else {
                            "<="
                        },
                        crate::core::tags::query::AUTO_MASKS_RANGES_PER_WORD
                    )
                });
                ui.end_row();
            }
        });
}

fn step_ui(ui: &mut Ui, panel: &mut QueryPanel, doc: &TagDocument, clip: ClipId, dark: bool) {
    let Some(ev) = &panel.eval else {
        return;
    };
    let Some(node) = panel.step_node else {
        ui.label("The query has no binary operation (| & - ^) to step through.");
        return;
    };
    let Some(trace) = trace_node(ev, node, clip) else {
        return;
    };
    let clip_name = doc
        .clips
        .get(clip as usize)
        .map_or("?", |c| c.name.as_str());
    ui.horizontal(|ui| {
        ui.label(format!(
            "Operation `{}` on clip {clip_name} (pick another binary node in Details).",
            ev.tree.expr(node, doc).to_text()
        ));
    });
    let n = trace.events.len();
    panel.step = panel.step.min(n);
    ui.horizontal(|ui| {
        if ui.button("First").clicked() {
            panel.step = 0;
        }
        if ui.button("Back").clicked() {
            panel.step = panel.step.saturating_sub(1);
        }
        if ui.button("Step").clicked() {
            panel.step = (panel.step + 1).min(n);
        }
        if ui.button("Last").clicked() {
            panel.step = n;
        }
        ui.label(format!("event {} of {n}", panel.step));
    });
    step_strip_ui(ui, &trace, panel.step, doc, dark);
    let formed = trace.output_after(panel.step);
    ui.monospace(format!(
        "output so far: {:?}",
        formed.iter().map(|r| (r.start, r.stop)).collect::<Vec<_>>()
    ));
    egui::Grid::new("step_events").striped(true).show(ui, |ui| {
        for h in [
            "#",
            "frame",
            "a",
            "b",
            "in a",
            "in b",
            "in out",
            "output closed",
        ] {
            ui.strong(h);
        }
        ui.end_row();
        let ev_str = |e: Option<bool>| match e {
            Some(true) => "start",
            Some(false) => "stop",
            None => "",
        };
        for (k, e) in trace.events.iter().enumerate().take(panel.step) {
            ui.label((k + 1).to_string());
            ui.label(e.frame.to_string());
            ui.label(ev_str(e.a));
            ui.label(ev_str(e.b));
            ui.label(e.inside_a.to_string());
            ui.label(e.inside_b.to_string());
            ui.label(e.inside_out.to_string());
            ui.label(
                e.output
                    .map_or(String::new(), |r| format!("[{}, {})", r.start, r.stop)),
            );
            ui.end_row();
        }
    });
}

fn step_strip_ui(ui: &mut Ui, t: &StepTrace, step: usize, doc: &TagDocument, dark: bool) {
    let frames = doc
        .clips
        .get(t.clip as usize)
        .map_or(1, |c| c.frames.max(1));
    let c = query_colors(dark);
    let pal = theme::palette(dark);
    let width = ui.available_width().min(900.0);
    let (rect, _) = ui.allocate_exact_size(egui::vec2(width, 66.0), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    let label_w = 60.0;
    let x = |f: u32| rect.left() + label_w + (rect.width() - label_w) * f as f32 / frames as f32;
    let formed = t.output_after(step);
    for (row, (name, list, color)) in [
        ("a", &t.a, c.step_a),
        ("b", &t.b, c.step_b),
        ("out", &formed, c.step_out),
    ]
    .into_iter()
    .enumerate()
    {
        let y0 = rect.top() + row as f32 * 22.0;
        painter.text(
            egui::pos2(rect.left(), y0 + 10.0),
            egui::Align2::LEFT_CENTER,
            name,
            FontId::monospace(12.0),
            ui.visuals().text_color(),
        );
        painter.rect_filled(
            egui::Rect::from_min_max(egui::pos2(x(0), y0 + 2.0), egui::pos2(x(frames), y0 + 18.0)),
            0.0,
            pal.track_bg,
        );
        for r in list.iter() {
            painter.rect_filled(
                egui::Rect::from_min_max(
                    egui::pos2(x(r.start), y0 + 3.0),
                    egui::pos2(x(r.stop).max(x(r.start) + 1.0), y0 + 17.0),
                ),
                2.0,
                color,
            );
        }
    }
    if let Some(e) = step.checked_sub(1).and_then(|k| t.events.get(k)) {
        let xe = x(e.frame);
        painter.line_segment(
            [egui::pos2(xe, rect.top()), egui::pos2(xe, rect.bottom())],
            Stroke::new(2.0, pal.playhead),
        );
    }
}

fn export_ui(ui: &mut Ui, panel: &mut QueryPanel, doc: &TagDocument, out: &mut Vec<AppCommand>) {
    let has_result = panel.current_result().is_some();
    ui.horizontal(|ui| {
        let l = ui.label("Save as");
        ui.add(
            egui::TextEdit::singleline(&mut panel.save_name)
                .desired_width(180.0)
                .hint_text("query name"),
        )
        .labelled_by(l.id);
        if ui
            .add_enabled(
                panel.error.is_none()
                    && !panel.text.trim().is_empty()
                    && !panel.save_name.trim().is_empty(),
                egui::Button::new("Save query"),
            )
            .on_hover_text("Store this query in the project (keeps it live; undoable)")
            .clicked()
        {
            let name = panel.save_name.trim().to_owned();
            let mut list = doc.queries.clone();
            match list.iter_mut().find(|q| q.name == name) {
                Some(q) => q.expr = panel.text.clone(),
                None => list.push(SavedQuery {
                    name: name.clone(),
                    expr: panel.text.clone(),
                }),
            }
            out.push(AppCommand::Edit {
                edit: Edit::SetQueries(list),
                label: format!("save query {name}"),
                select: None,
            });
            let t = panel.text.clone();
            push_history(&mut panel.history, &t);
        }
    });
    ui.horizontal(|ui| {
        // The suggested name follows the text until the user types their own (the name of
        // the query the panel was first opened on was kept for every later one).
        let suggestion = frozen_tag_name(doc, &panel.text);
        if panel.freeze_name.is_empty() || panel.freeze_name == panel.freeze_suggested {
            panel.freeze_name = suggestion.clone();
        }
        panel.freeze_suggested = suggestion;
        let l = ui.label("Freeze as tag");
        ui.add(egui::TextEdit::singleline(&mut panel.freeze_name).desired_width(220.0))
            .labelled_by(l.id);
        let free = !doc.tags.iter().any(|t| t.name == panel.freeze_name.trim());
        if ui
            .add_enabled(
                has_result && free && !panel.freeze_name.trim().is_empty(),
                egui::Button::new("Create tag"),
            )
            .on_hover_text("A new tag with the ranges of this result (frozen; undoable)")
            .clicked()
            && let Some(edit) = panel.freeze_edit(doc, panel.freeze_name.trim())
        {
            out.push(AppCommand::Edit {
                edit,
                label: format!("freeze query as tag {}", panel.freeze_name.trim()),
                select: None,
            });
            panel.freeze_name.clear();
        }
        if !free {
            ui.weak("a tag with this name exists");
        }
    });
    ui.horizontal(|ui| {
        if ui
            .add_enabled(has_result, egui::Button::new("Export JSON..."))
            .on_hover_text("The same shape as `taglane query --json`")
            .clicked()
        {
            out.push(AppCommand::QueryExport {
                kind: QueryExportKind::Json,
                path: None,
            });
        }
        if ui
            .add_enabled(has_result, egui::Button::new("Export CSV..."))
            .on_hover_text("clip,start,stop,seconds")
            .clicked()
        {
            out.push(AppCommand::QueryExport {
                kind: QueryExportKind::Csv,
                path: None,
            });
        }
    });
    ui.separator();
    ui.horizontal(|ui| {
        let l = ui.label("Cut: file name pattern");
        ui.add(egui::TextEdit::singleline(&mut panel.cut_pattern).desired_width(240.0))
            .labelled_by(l.id)
            .on_hover_text("{clip} {query} {n} {start} {stop}");
        match &panel.cut {
            None => {
                if ui
                    .add_enabled(has_result, egui::Button::new("Cut into BVH files..."))
                    .on_hover_text("Write every matched range as its own BVH clip into a folder")
                    .clicked()
                {
                    out.push(AppCommand::QueryCut {
                        dir: None,
                        replace: false,
                    });
                }
            }
            Some(cut) => {
                crate::ui::jobs::progress_ui(ui, &cut.job, "files");
            }
        }
    });
    if let Some(s) = &panel.cut_summary {
        ui.label(s);
    }
}

/// The editor's widget id (one query panel per app; the same id from every nested `Ui`).
fn editor_id() -> egui::Id {
    egui::Id::unique("taglane_query_editor")
}
