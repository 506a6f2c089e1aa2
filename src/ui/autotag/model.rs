//! The auto-tag panel's logic, without egui: the generators and their parameters (every one with
//! its unit), the rules text, threshold drags, the ghost lanes' contents, planted feet, the clips an
//! apply covers, the background batch and the one edit an apply makes.
//!
//! The generators themselves are in [`crate::core::autotag`]; this file only arranges what the panel
//! shows and asks for.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde::Serialize;

use crate::core::autotag::rules::read_settings;
use crate::core::autotag::signal::Side;
use crate::core::autotag::{
    AIRBORNE, ApplyMode, ApplyPolicy, ApplyReport, AutotagParams, AutotagSettings, CONTACT_LEFT,
    CONTACT_RIGHT, FootJoints, IDLE, Prepared, Proposal, RUN, Rule, SETTINGS_VERSION,
    SettingsError, TURN_LEFT, TURN_RIGHT, ThresholdKey, WALK, proposals_edit,
};
use crate::core::doc::{Edit, EditError};
use crate::core::project::{ClipRequest, load};
use crate::core::settings::json::{Json, err};
use crate::core::tags::range::{difference, total_frames, union};
use crate::core::tags::{ClipId, ClipInfo, Range, TagDocument};

// ---------------------------------------------------------------------------------------------
// Generators and parameters.
// ---------------------------------------------------------------------------------------------

/// The built-in generators, in panel order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Generator {
    Contacts,
    Airborne,
    Locomotion,
    Turns,
}

impl Generator {
    pub const ALL: [Generator; 4] = [
        Generator::Contacts,
        Generator::Airborne,
        Generator::Locomotion,
        Generator::Turns,
    ];

    /// The heading in the panel.
    pub fn label(self) -> &'static str {
        match self {
            Generator::Contacts => "Foot contacts",
            Generator::Airborne => "Airborne",
            Generator::Locomotion => "Locomotion states",
            Generator::Turns => "Turns",
        }
    }

    /// What it does, for the tooltip.
    pub fn help(self) -> &'static str {
        match self {
            Generator::Contacts => {
                "A foot is planted while its lowest joint (ankle or toe) is near its ground level \
                 and nearly still; separate enter and leave thresholds keep noise from chattering."
            }
            Generator::Airborne => "Neither foot planted and both off the ground.",
            Generator::Locomotion => {
                "Idle, Walk or Run from the horizontal speed of the travelling root, averaged over \
                 a window; the three never overlap."
            }
            Generator::Turns => "Turning left or right from the travelling root's yaw rate.",
        }
    }

    /// The parameter group in the settings JSON (`params.<group>`).
    pub fn group(self) -> &'static str {
        match self {
            Generator::Contacts => "contacts",
            Generator::Airborne => "airborne",
            Generator::Locomotion => "locomotion",
            Generator::Turns => "turning",
        }
    }

    /// The tags it proposes.
    pub fn tags(self) -> &'static [&'static str] {
        match self {
            Generator::Contacts => &[CONTACT_LEFT, CONTACT_RIGHT],
            Generator::Airborne => &[AIRBORNE],
            Generator::Locomotion => &[IDLE, WALK, RUN],
            Generator::Turns => &[TURN_LEFT, TURN_RIGHT],
        }
    }
}

/// One numeric parameter as the panel edits it.
pub struct ParamSpec {
    pub generator: Generator,
    /// Its name in the settings JSON (`params.<group>.<key>`).
    pub key: &'static str,
    /// The panel's label (unique over the table, so it also names the field for accessibility).
    pub label: &'static str,
    /// Unit shown after the value (`cm`, `cm/s`, `m/s`, `deg/s`, `s`, or "" for a quantile).
    pub unit: &'static str,
    pub help: &'static str,
    pub get: fn(&AutotagParams) -> f32,
    pub set: fn(&mut AutotagParams, f32),
    /// Drag speed (value per point) and the range of the field.
    pub speed: f64,
    pub min: f64,
    pub max: f64,
    pub decimals: usize,
}

macro_rules! param {
    ($gen:ident, $group:ident . $field:ident, label: $label:expr, unit: $unit:expr,
     speed: $speed:expr, max: $max:expr, decimals: $dec:expr, help: $help:expr) => {
        ParamSpec {
            generator: Generator::$gen,
            key: stringify!($field),
            label: $label,
            unit: $unit,
            help: $help,
            get: |p| p.$group.$field,
            set: |p, v| p.$group.$field = v,
            speed: $speed,
            min: 0.0,
            max: $max,
            decimals: $dec,
        }
    };
}

/// Every numeric parameter of the built-in generators, in panel order (defaults, units and meaning
/// in `docs/AUTOTAG.md`).
pub const PARAMS: &[ParamSpec] = &[
    param!(Contacts, contacts.enter_height_cm, label: "enter height", unit: "cm", speed: 0.05, max: 100.0, decimals: 2,
        help: "A foot may become planted when its lowest joint is less than this above its ground level (default 4)."),
    param!(Contacts, contacts.leave_height_cm, label: "leave height", unit: "cm", speed: 0.05, max: 100.0, decimals: 2,
        help: "A planted foot is released when it rises more than this above its ground level; >= enter height (default 7)."),
    param!(Contacts, contacts.enter_speed_cm_s, label: "enter speed", unit: "cm/s", speed: 0.2, max: 1000.0, decimals: 1,
        help: "A foot may become planted when it moves slower than this (default 20)."),
    param!(Contacts, contacts.leave_speed_cm_s, label: "leave speed", unit: "cm/s", speed: 0.2, max: 1000.0, decimals: 1,
        help: "A planted foot is released when it moves faster than this; >= enter speed (default 30)."),
    param!(Contacts, contacts.speed_window_s, label: "foot speed window", unit: "s", speed: 0.002, max: 10.0, decimals: 3,
        help: "Window on each side of a frame over which foot speeds are measured, at least one frame (default 0.03)."),
    param!(Contacts, contacts.min_contact_s, label: "min contact", unit: "s", speed: 0.005, max: 10.0, decimals: 3,
        help: "Contacts shorter than this are dropped (default 0.05)."),
    param!(Contacts, contacts.min_gap_s, label: "min gap", unit: "s", speed: 0.005, max: 10.0, decimals: 3,
        help: "Gaps shorter than this between two contacts of one foot are closed (default 0.05)."),
    param!(Contacts, contacts.ground_percentile, label: "ground quantile", unit: "", speed: 0.002, max: 1.0, decimals: 3,
        help: "Quantile (0..1) of each foot joint's height over the clip taken as its ground level (default 0.05)."),
    param!(Airborne, airborne.min_height_cm, label: "airborne above", unit: "cm", speed: 0.05, max: 100.0, decimals: 2,
        help: "Both feet must be more than this above their ground levels (default 3)."),
    param!(Airborne, airborne.min_duration_s, label: "min flight", unit: "s", speed: 0.005, max: 10.0, decimals: 3,
        help: "Shorter flights are dropped (default 0.05)."),
    param!(Locomotion, locomotion.idle_max_m_s, label: "idle below", unit: "m/s", speed: 0.005, max: 20.0, decimals: 3,
        help: "Idle below this speed of the travelling root (default 0.3)."),
    param!(Locomotion, locomotion.walk_max_m_s, label: "run above", unit: "m/s", speed: 0.01, max: 20.0, decimals: 3,
        help: "Walk up to this speed, Run above (default 2.2)."),
    param!(Locomotion, locomotion.hysteresis_m_s, label: "hysteresis", unit: "m/s", speed: 0.002, max: 5.0, decimals: 3,
        help: "How far past a boundary the speed must go to change state (default 0.05)."),
    param!(Locomotion, locomotion.smooth_s, label: "speed average", unit: "s", speed: 0.005, max: 60.0, decimals: 3,
        help: "Window of the root speed's average (default 0.3)."),
    param!(Locomotion, locomotion.min_segment_s, label: "min segment", unit: "s", speed: 0.005, max: 60.0, decimals: 3,
        help: "Shorter segments merge into a neighbour (default 0.3)."),
    param!(Turns, turning.enter_deg_s, label: "turn above", unit: "deg/s", speed: 0.2, max: 3600.0, decimals: 1,
        help: "A turn starts when the yaw rate exceeds this, either direction (default 20)."),
    param!(Turns, turning.leave_deg_s, label: "turn ends below", unit: "deg/s", speed: 0.2, max: 3600.0, decimals: 1,
        help: "A turn ends when the yaw rate falls below this; <= turn above (default 12)."),
    param!(Turns, turning.window_s, label: "yaw window", unit: "s", speed: 0.01, max: 60.0, decimals: 2,
        help: "Window of the yaw rate (default 1)."),
    param!(Turns, turning.min_duration_s, label: "min turn", unit: "s", speed: 0.005, max: 60.0, decimals: 3,
        help: "Shorter turns are dropped (default 0.3)."),
];

/// One joint-name parameter (empty: found automatically).
pub struct JointSpec {
    pub generator: Generator,
    pub key: &'static str,
    pub label: &'static str,
    pub help: &'static str,
    pub get: fn(&AutotagParams) -> &Option<String>,
    pub set: fn(&mut AutotagParams, Option<String>),
}

macro_rules! joint {
    ($gen:ident, $group:ident . $field:ident, $label:expr, $help:expr) => {
        JointSpec {
            generator: Generator::$gen,
            key: stringify!($field),
            label: $label,
            help: $help,
            get: |p| &p.$group.$field,
            set: |p, v| p.$group.$field = v,
        }
    };
}

/// The joint-name parameters, in panel order.
pub const JOINTS: &[JointSpec] = &[
    joint!(
        Contacts,
        contacts.left_ankle,
        "left ankle",
        "The left foot's ankle joint, instead of the search by naming convention."
    ),
    joint!(
        Contacts,
        contacts.left_toe,
        "left toe",
        "The left foot's toe joint."
    ),
    joint!(
        Contacts,
        contacts.right_ankle,
        "right ankle",
        "The right foot's ankle joint, instead of the search by naming convention."
    ),
    joint!(
        Contacts,
        contacts.right_toe,
        "right toe",
        "The right foot's toe joint."
    ),
    joint!(
        Locomotion,
        locomotion.root_joint,
        "travelling root",
        "The joint that carries the translation (also used for turns), instead of the automatic choice."
    ),
];

/// Sets one numeric parameter on a copy of `settings` and checks the whole: the new settings, or
/// the error (its JSON path and what was expected).
pub fn with_param(
    settings: &AutotagSettings,
    spec: &ParamSpec,
    value: f32,
) -> (AutotagSettings, Option<SettingsError>) {
    let mut next = settings.clone();
    (spec.set)(&mut next.params, value);
    let error = next.validate().err();
    (next, error)
}

// ---------------------------------------------------------------------------------------------
// Which tags are proposed.
// ---------------------------------------------------------------------------------------------

/// The tags to propose: every built-in tag and rule tag not in `disabled`, in output order.
pub fn enabled_tags(
    settings: &AutotagSettings,
    disabled: &std::collections::BTreeSet<String>,
) -> Vec<String> {
    crate::core::autotag::known_tags(&settings.rules)
        .into_iter()
        .filter(|t| !disabled.contains(t))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The rules text.
// ---------------------------------------------------------------------------------------------

#[derive(Serialize)]
struct RuleFile<'a> {
    version: u64,
    rules: &'a [Rule],
}

/// The rules as the panel's editor shows them: a settings file without parameters (which the panel
/// edits in its fields), `{"version": 1, "rules": [...]}`, indented.
pub fn rules_text(rules: &[Rule]) -> String {
    serde_json::to_string_pretty(&RuleFile {
        version: SETTINGS_VERSION,
        rules,
    })
    .unwrap_or_else(|_| format!("{{\"version\": {SETTINGS_VERSION}, \"rules\": []}}"))
}

/// Reads the editor's text: the rules of a settings file (the format of `docs/AUTOTAG.md`). Errors
/// name the JSON path (`rules[0].when[1].leave`) or the line and column of a syntax error.
/// Parameters are refused here: the panel's fields own them.
pub fn parse_rules_text(text: &str) -> Result<Vec<Rule>, SettingsError> {
    let value = crate::core::settings::json::parse(text)?;
    if let Json::Obj(entries) = &value
        && entries.iter().any(|(k, _)| k == "params")
    {
        return Err(err(
            "params",
            "generator parameters are set in the panel's fields; keep only `version` and `rules` \
             here (Take parameters moves these into the fields)",
        ));
    }
    Ok(read_settings(&value, "")?.rules)
}

/// An example rule for an empty editor: hands above the head.
pub fn example_rules() -> Vec<Rule> {
    use crate::core::autotag::{Condition, SignalKind};
    let hand = |joint: &str| Condition {
        signal: SignalKind::Y,
        joint: joint.to_owned(),
        relative_to: Some("Head".to_owned()),
        to: None,
        above: Some(5.0),
        below: None,
        leave: Some(0.0),
        smooth_s: None,
    };
    vec![Rule {
        tag: "pose:HandsUp".to_owned(),
        when: vec![hand("LeftHand"), hand("RightHand")],
        min_duration_s: 0.2,
        min_gap_s: 0.0,
    }]
}

// ---------------------------------------------------------------------------------------------
// Threshold drags.
// ---------------------------------------------------------------------------------------------

/// How the two lines of a threshold relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThresholdShape {
    /// On below `enter`, off above `leave` (`leave >= enter`).
    Below,
    /// On above `enter`, off below `leave` (`leave <= enter`).
    Above,
    /// One value (`enter == leave`).
    Single,
    /// A boundary with a hysteresis band around it: both lines move together.
    Boundary,
}

/// The shape of the threshold `key` under `settings`.
pub fn threshold_shape(key: ThresholdKey, settings: &AutotagSettings) -> ThresholdShape {
    match key {
        ThresholdKey::ContactHeight | ThresholdKey::ContactSpeed | ThresholdKey::TurnRight => {
            ThresholdShape::Below
        }
        ThresholdKey::TurnLeft => ThresholdShape::Above,
        ThresholdKey::AirborneHeight => ThresholdShape::Single,
        ThresholdKey::IdleWalk | ThresholdKey::WalkRun => ThresholdShape::Boundary,
        ThresholdKey::Rule { rule, condition } => settings
            .rules
            .get(rule)
            .and_then(|r| r.when.get(condition))
            .map_or(ThresholdShape::Above, |c| match c.threshold().0 {
                Side::Above => ThresholdShape::Above,
                Side::Below => ThresholdShape::Below,
            }),
    }
}

/// Which line of a threshold is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grab {
    Enter,
    Leave,
}

/// A threshold line being dragged: what it stands for and where it was when grabbed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThresholdDrag {
    pub key: ThresholdKey,
    pub shape: ThresholdShape,
    pub grab: Grab,
    pub enter: f32,
    pub leave: f32,
    /// Move both lines together (shift held, or a boundary).
    pub both: bool,
}

impl ThresholdDrag {
    /// `(enter, leave)` with the held line at `value`. The other line is pushed along when the held
    /// one would cross it (the order of the two is kept); a boundary or `both` moves them together.
    pub fn values_at(&self, value: f32) -> (f32, f32) {
        let (e, l) = (self.enter, self.leave);
        let held = match self.grab {
            Grab::Enter => e,
            Grab::Leave => l,
        };
        if self.both || self.shape == ThresholdShape::Boundary {
            let d = value - held;
            return (e + d, l + d);
        }
        match (self.shape, self.grab) {
            (ThresholdShape::Single, _) => (value, value),
            (ThresholdShape::Below, Grab::Enter) => (value, l.max(value)),
            (ThresholdShape::Below, Grab::Leave) => (e.min(value), value),
            (ThresholdShape::Above, Grab::Enter) => (value, l.min(value)),
            (ThresholdShape::Above, Grab::Leave) => (e.max(value), value),
            (ThresholdShape::Boundary, _) => unreachable!("handled above"),
        }
    }
}

/// `value` rounded to a step that suits a plot spanning `span` units (three significant digits of
/// the span), so dragged thresholds read `20.5`, not `20.4871`.
pub fn round_for_span(value: f32, span: f32) -> f32 {
    if !span.is_finite() || span <= 0.0 || !value.is_finite() {
        return value;
    }
    let step = 10f32.powf((span.log10() - 2.0).floor());
    (value / step).round() * step
}

// ---------------------------------------------------------------------------------------------
// Planted feet.
// ---------------------------------------------------------------------------------------------

/// The side a contact tag stands for: `Some(0)` left, `Some(1)` right, for tags in the `contact:`
/// namespace that name one side (`contact:LeftFoot`, `contact:RightFootDown`, any case);
/// `contact:Airborne` and other tags stand for none.
pub fn contact_side(tag: &str) -> Option<usize> {
    let lower = tag.to_ascii_lowercase();
    let rest = lower.strip_prefix("contact:")?;
    match (rest.contains("left"), rest.contains("right")) {
        (true, false) => Some(0),
        (false, true) => Some(1),
        _ => None,
    }
}

/// Sides whose contact ranges cover `frame`, from (tag, ranges) pairs.
pub fn covered_sides<'a>(
    tags: impl IntoIterator<Item = (&'a str, &'a [Range])>,
    frame: u32,
) -> [bool; 2] {
    let mut out = [false; 2];
    for (tag, ranges) in tags {
        if let Some(side) = contact_side(tag) {
            let i = ranges.partition_point(|r| r.stop <= frame);
            out[side] |= ranges.get(i).is_some_and(|r| r.contains(frame));
        }
    }
    out
}

/// The joints of the feet on the covered sides (ankle, then toe).
pub fn planted_joints(feet: &[FootJoints; 2], covered: [bool; 2]) -> Vec<usize> {
    let mut out = Vec::new();
    for (foot, on) in feet.iter().zip(covered) {
        if on {
            out.push(foot.ankle);
            out.extend(foot.toe);
        }
    }
    out
}

/// The real contact tags of `doc` on `clip`, as (tag, ranges).
pub fn real_contacts(doc: &TagDocument, clip: ClipId) -> Vec<(&str, &[Range])> {
    doc.tags
        .iter()
        .filter(|t| contact_side(&t.name).is_some())
        .filter_map(|t| Some((t.name.as_str(), t.ranges.get(&clip)?)))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Ghost lanes.
// ---------------------------------------------------------------------------------------------

/// A proposal as a read-only lane: what the timeline shows under the real lanes.
#[derive(Debug, Clone, PartialEq)]
pub struct GhostLane {
    pub tag: String,
    pub ranges: Vec<Range>,
    /// The existing tag's colour, when the project has the tag.
    pub color: Option<[u8; 3]>,
    /// What applying it would do on this clip.
    pub tooltip: String,
}

/// Lane id prefix of the ghost lanes (`autotag:contact:LeftFoot`).
pub const LANE_PREFIX: &str = "autotag:";

/// The proposals for `clip` as lanes, each explaining what applying it with `policy` would do.
pub fn ghost_lanes(
    doc: &TagDocument,
    clip: ClipId,
    proposals: &[Proposal],
    policy: &ApplyPolicy,
) -> Vec<GhostLane> {
    let frames = doc.clips.get(clip as usize).map_or(0, |c| c.frames);
    let mut scratch = Vec::new();
    // A tag not in the document yet is shown in the colour applying these proposals gives it
    // (`proposals_edit` colours new tags in the order they are first proposed).
    let mut new_tags: Vec<&str> = Vec::new();
    for p in proposals {
        if doc.tag_index(&p.tag).is_none() && !new_tags.contains(&p.tag.as_str()) {
            new_tags.push(&p.tag);
        }
    }
    let new_colors: Vec<(&str, [u8; 3])> = new_tags
        .iter()
        .copied()
        .zip(doc.new_tag_colors(new_tags.len()))
        .collect();
    proposals
        .iter()
        .map(|p| {
            let tag = doc.tag_index(&p.tag).map(|t| &doc.tags[t]);
            let existing = tag.and_then(|t| t.ranges.get(&clip)).unwrap_or(&[]);
            let mode = policy.mode(&p.tag);
            let next = match mode {
                ApplyMode::Replace => p.ranges.clone(),
                ApplyMode::Merge => {
                    let mut u = Vec::new();
                    union(existing, &p.ranges, &mut u);
                    u
                }
            };
            difference(&next, existing, &mut scratch);
            let added = total_frames(&scratch);
            difference(existing, &next, &mut scratch);
            let removed = total_frames(&scratch);
            let mut tooltip = format!(
                "proposed {}: {} range(s), {} of {frames} frame(s)\n",
                p.tag,
                p.ranges.len(),
                total_frames(&p.ranges),
            );
            tooltip += &match (tag, mode) {
                (None, _) => format!("a new tag; applying adds {added} frame(s)"),
                (Some(_), ApplyMode::Merge) => {
                    format!("merge: adds {added} frame(s), removes none")
                }
                (Some(_), ApplyMode::Replace) => format!(
                    "replace: adds {added} frame(s), removes {removed} existing frame(s){}",
                    if removed > 0 { " (asked first)" } else { "" }
                ),
            };
            GhostLane {
                tag: p.tag.clone(),
                ranges: p.ranges.clone(),
                color: match tag {
                    Some(t) => t.color,
                    None => new_colors
                        .iter()
                        .find(|(n, _)| *n == p.tag)
                        .map(|&(_, c)| c),
                },
                tooltip,
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Applying.
// ---------------------------------------------------------------------------------------------

/// Which clips an apply covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// The clip on screen (with the live proposals).
    #[default]
    Current,
    /// The clips checked in the panel's list.
    Checked,
    /// Every clip of the project.
    All,
}

/// The clips `scope` covers, in project order (ids past the project's clips are ignored).
pub fn scope_clips(
    scope: Scope,
    clip_count: usize,
    current: ClipId,
    checked: &std::collections::BTreeSet<ClipId>,
) -> Vec<ClipId> {
    match scope {
        Scope::Current => ((current as usize) < clip_count)
            .then_some(current)
            .into_iter()
            .collect(),
        Scope::Checked => checked
            .iter()
            .copied()
            .filter(|&c| (c as usize) < clip_count)
            .collect(),
        Scope::All => (0..clip_count as ClipId).collect(),
    }
}

/// What the generators made of one clip.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipOutcome {
    pub clip: ClipId,
    pub name: String,
    /// The proposals, or why the clip could not be tagged (its animation did not load, no foot).
    pub result: Result<Vec<Proposal>, String>,
    pub warnings: Vec<String>,
}

/// The result of tagging many clips.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BatchOutcome {
    /// One per clip that was reached, in clip order.
    pub clips: Vec<ClipOutcome>,
    /// Stopped before the end: nothing is applied.
    pub cancelled: bool,
}

impl BatchOutcome {
    /// The proposals of the clips that could be tagged.
    pub fn proposals(&self) -> Vec<(ClipId, Vec<Proposal>)> {
        self.clips
            .iter()
            .filter_map(|c| Some((c.clip, c.result.as_ref().ok()?.clone())))
            .collect()
    }

    /// One line per clip that could not be tagged.
    pub fn failures(&self) -> Vec<String> {
        self.clips
            .iter()
            .filter_map(|c| c.result.as_ref().err().map(|e| format!("{}: {e}", c.name)))
            .collect()
    }

    pub fn warnings(&self) -> impl Iterator<Item = &String> {
        self.clips.iter().flat_map(|c| &c.warnings)
    }
}

/// Tags one clip: loads its animation (in its unit), runs forward kinematics and the generators.
pub fn tag_clip(request: &ClipRequest, settings: &AutotagSettings, only: &[String]) -> ClipOutcome {
    let run = || -> Result<_, String> {
        let clip = load(request)?;
        let prepared = Prepared::new(&clip).map_err(|e| e.to_string())?;
        prepared
            .autotag(settings, Some(only))
            .map_err(|e| e.to_string())
    };
    let (result, warnings) = match run() {
        Ok(out) => (Ok(out.proposals), out.warnings),
        Err(e) => (Err(e), Vec::new()),
    };
    ClipOutcome {
        clip: request.clip,
        name: request.name.clone(),
        result,
        warnings,
    }
}

/// Tags many clips on up to `workers` threads. `requests` holds each clip's request, or why it
/// could not be resolved; `cancel` stops the work between clips (the outcome is then marked
/// cancelled); `done` is called with the clip's name after each clip.
pub fn run_batch(
    requests: Vec<Result<ClipRequest, (ClipId, String, String)>>,
    settings: &AutotagSettings,
    only: &[String],
    workers: usize,
    cancel: &AtomicBool,
    done: &(dyn Fn(&str) + Sync),
) -> BatchOutcome {
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<ClipOutcome>>> = Mutex::new(vec![None; requests.len()]);
    let work = || {
        loop {
            if cancel.load(Ordering::Relaxed) {
                return;
            }
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(request) = requests.get(i) else {
                return;
            };
            let outcome = match request {
                Ok(r) => tag_clip(r, settings, only),
                Err((clip, name, why)) => ClipOutcome {
                    clip: *clip,
                    name: name.clone(),
                    result: Err(why.clone()),
                    warnings: Vec::new(),
                },
            };
            done(&outcome.name);
            slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(outcome);
        }
    };
    let workers = workers.clamp(1, requests.len().max(1));
    std::thread::scope(|s| {
        for _ in 1..workers {
            s.spawn(work);
        }
        work();
    });
    let clips: Vec<ClipOutcome> = slots
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect();
    BatchOutcome {
        cancelled: cancel.load(Ordering::Relaxed) || clips.len() < requests.len(),
        clips,
    }
}

/// The one edit of an apply: the settings used, saved in the project when they differ from its own
/// (`Edit::SetAutotag`), then the proposals with `policy` (`proposals_edit`); and its report.
pub fn apply_edit(
    doc: &TagDocument,
    proposals: &[(ClipId, Vec<Proposal>)],
    policy: &ApplyPolicy,
    settings: &AutotagSettings,
) -> Result<(Edit, ApplyReport), EditError> {
    let list: Vec<(ClipId, &[Proposal])> =
        proposals.iter().map(|(c, p)| (*c, p.as_slice())).collect();
    let (ranges, report) = proposals_edit(doc, &list, policy)?;
    let mut steps = Vec::with_capacity(2);
    if doc.autotag.as_ref() != Some(settings) {
        steps.push(Edit::SetAutotag(Some(Box::new(settings.clone()))));
    }
    if !ranges.is_empty() {
        steps.push(ranges);
    }
    Ok((Edit::Batch(steps), report))
}

/// The policy of a panel: per-tag modes over the default `Merge`.
pub fn policy(modes: &BTreeMap<String, ApplyMode>) -> ApplyPolicy {
    ApplyPolicy {
        default: ApplyMode::Merge,
        per_tag: modes.clone(),
    }
}

/// The tags whose `Replace` in `report` would remove frames, each once.
pub fn replacing_tags(report: &ApplyReport) -> Vec<String> {
    let mut tags: Vec<String> = report.replaced.iter().map(|r| r.tag.clone()).collect();
    tags.dedup();
    tags.sort();
    tags.dedup();
    tags
}

/// Undo label of an apply over `clips` (names of the project's clips).
/// The proposals of an apply with their clips found again in `doc` by name (`clips`: the clips as
/// they were when the proposals were made). Other clips may have been added, removed or reordered
/// meanwhile (an import ran, another clip was relinked): that changes nothing here. A clip with
/// proposals that is gone (another project was opened, the clip was removed or renamed), or that
/// was relinked or changed length, rate or unit (the proposals were made from what it was), is an
/// error naming it.
pub fn find_clips(
    doc: &TagDocument,
    clips: &[(ClipId, ClipInfo)],
    proposals: &[(ClipId, Vec<Proposal>)],
) -> Result<Vec<(ClipId, Vec<Proposal>)>, String> {
    let was: HashMap<ClipId, &ClipInfo> = clips.iter().map(|(c, i)| (*c, i)).collect();
    let now: HashMap<&str, ClipId> = doc
        .clips
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i as ClipId))
        .collect();
    proposals
        .iter()
        .map(|(c, p)| {
            let info = was.get(c).ok_or_else(|| {
                format!("clip {c} has proposals but was not among the clips applied to")
            })?;
            let &id = now.get(info.name.as_str()).ok_or_else(|| {
                format!(
                    "clip `{}` is no longer in the project (another project was opened, or the \
                     clip was removed or renamed)",
                    info.name
                )
            })?;
            if doc.clips[id as usize] != **info {
                return Err(format!(
                    "clip `{}` was relinked or changed length, rate or unit during the apply \
                     (apply again to tag it as it is now)",
                    info.name
                ));
            }
            Ok((id, p.clone()))
        })
        .collect()
}

pub fn apply_label(doc: &TagDocument, clips: &[ClipId]) -> String {
    match clips {
        [one] => format!(
            "auto-tag {}",
            doc.clips
                .get(*one as usize)
                .map_or("?", |c| c.name.as_str())
        ),
        many => format!("auto-tag {} clips", many.len()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::core::project::{Project, resolve};

    fn r(a: u32, b: u32) -> Range {
        Range::new(a, b)
    }

    #[test]
    fn the_parameter_table_covers_every_parameter_once_with_a_unit() {
        // Every field the settings JSON has, with the joint names set so they are written too.
        let mut params = AutotagParams::default();
        for j in JOINTS {
            (j.set)(&mut params, Some("X".into()));
        }
        let json = serde_json::to_value(&params).unwrap();
        let mut want = BTreeSet::new();
        for (group, fields) in json.as_object().unwrap() {
            for key in fields.as_object().unwrap().keys() {
                want.insert(format!("{group}.{key}"));
            }
        }
        let mut have = BTreeSet::new();
        for p in PARAMS {
            assert!(
                have.insert(format!("{}.{}", p.generator.group(), p.key)),
                "{}",
                p.key
            );
            // The table reads and writes the field it names.
            let mut q = AutotagParams::default();
            (p.set)(&mut q, 0.123);
            assert_eq!((p.get)(&q), 0.123, "{}", p.key);
            let v = serde_json::to_value(&q).unwrap();
            assert_eq!(
                v[p.generator.group()][p.key].as_f64().unwrap() as f32,
                0.123
            );
            // The help states the default, and it is the real one.
            let default = (p.get)(&AutotagParams::default());
            let stated = p
                .help
                .split("(default ")
                .nth(1)
                .and_then(|t| t.split(')').next());
            assert_eq!(
                stated.map(|t| t.parse::<f32>().unwrap()),
                Some(default),
                "{}",
                p.key
            );
            let unitless = p.key == "ground_percentile";
            assert_eq!(p.unit.is_empty(), unitless, "{} needs a unit", p.key);
            assert!(!p.help.is_empty());
        }
        for j in JOINTS {
            assert!(
                have.insert(format!("{}.{}", j.generator.group(), j.key)),
                "{}",
                j.key
            );
        }
        assert_eq!(have, want);
        let labels: BTreeSet<&str> = PARAMS
            .iter()
            .map(|p| p.label)
            .chain(JOINTS.iter().map(|j| j.label))
            .collect();
        assert_eq!(
            labels.len(),
            PARAMS.len() + JOINTS.len(),
            "labels are unique"
        );
        // Every built-in tag belongs to exactly one generator.
        let tags: Vec<&str> = Generator::ALL
            .iter()
            .flat_map(|g| g.tags().iter().copied())
            .collect();
        assert_eq!(tags, crate::core::autotag::BUILTIN_TAGS);
    }

    #[test]
    fn an_invalid_parameter_is_reported_with_its_path_and_the_rest_stays() {
        let s = AutotagSettings::default();
        let spec = PARAMS.iter().find(|p| p.key == "leave_speed_cm_s").unwrap();
        let (next, error) = with_param(&s, spec, 10.0);
        let e = error.expect("leave below enter is refused");
        assert_eq!(e.path, "params.contacts.leave_speed_cm_s");
        assert_eq!(
            next.params.contacts.leave_speed_cm_s, 10.0,
            "the field keeps what was typed"
        );
        let (next, error) = with_param(&s, spec, 45.0);
        assert!(error.is_none());
        assert_eq!(next.params.contacts.leave_speed_cm_s, 45.0);
    }

    #[test]
    fn the_rules_text_round_trips_and_names_json_paths() {
        let rules = example_rules();
        let text = rules_text(&rules);
        assert!(text.contains("\"version\": 1"), "{text}");
        assert_eq!(parse_rules_text(&text).unwrap(), rules);
        assert_eq!(parse_rules_text(&rules_text(&[])).unwrap(), []);
        // A leave on the wrong side of its threshold: the path of the value.
        let bad = text.replace("\"leave\": 0.0", "\"leave\": 9.0");
        assert_ne!(bad, text, "{text}");
        let e = parse_rules_text(&bad).unwrap_err();
        assert_eq!(e.path, "rules[0].when[0].leave", "{e}");
        // A typo: the path and a suggestion.
        let e =
            parse_rules_text(&text.replacen("\"relative_to\"", "\"relativ_to\"", 1)).unwrap_err();
        assert_eq!(e.path, "rules[0].when[0].relativ_to");
        assert!(e.message.contains("`relative_to`"), "{e}");
        let e = parse_rules_text(&text.replacen("\"joint\"", "\"jiont\"", 1)).unwrap_err();
        assert_eq!(e.path, "rules[0].when[0]");
        assert!(e.message.contains("`joint`"), "{e}");
        // A syntax error: line and column.
        let e = parse_rules_text("{\"version\": 1,\n \"rules\": [ }").unwrap_err();
        assert!(e.path.starts_with("line 2, column"), "{e}");
        // Parameters belong to the fields.
        let e = parse_rules_text("{\"version\": 1, \"params\": {}}").unwrap_err();
        assert_eq!(e.path, "params");
        let e = parse_rules_text("{\"rules\": []}").unwrap_err();
        assert!(e.message.contains("version"), "{e}");
    }

    #[test]
    fn dragging_keeps_the_order_of_the_two_lines() {
        let s = AutotagSettings::default();
        let drag = |key, grab, enter, leave| ThresholdDrag {
            key,
            shape: threshold_shape(key, &s),
            grab,
            enter,
            leave,
            both: false,
        };
        // Contact speed: planted below 20, released above 30.
        let d = drag(ThresholdKey::ContactSpeed, Grab::Enter, 20.0, 30.0);
        assert_eq!(d.values_at(25.0), (25.0, 30.0));
        assert_eq!(d.values_at(35.0), (35.0, 35.0), "leave is pushed up");
        let d = drag(ThresholdKey::ContactSpeed, Grab::Leave, 20.0, 30.0);
        assert_eq!(d.values_at(15.0), (15.0, 15.0), "enter is pushed down");
        // Turn left: on above 20, off below 12.
        let d = drag(ThresholdKey::TurnLeft, Grab::Leave, 20.0, 12.0);
        assert_eq!(d.values_at(25.0), (25.0, 25.0));
        // Turn right is drawn mirrored (-20 on, -12 off): the "below" shape.
        let d = drag(ThresholdKey::TurnRight, Grab::Enter, -20.0, -12.0);
        assert_eq!(d.values_at(-30.0), (-30.0, -12.0));
        // A boundary moves with its band; shift moves both lines of any threshold.
        let d = drag(ThresholdKey::IdleWalk, Grab::Leave, 0.35, 0.25);
        let (e, l) = d.values_at(0.45);
        assert!(
            (e - 0.55).abs() < 1e-6 && (l - 0.45).abs() < 1e-6,
            "{e} {l}"
        );
        let d = ThresholdDrag {
            both: true,
            ..drag(ThresholdKey::ContactHeight, Grab::Enter, 4.0, 7.0)
        };
        assert_eq!(d.values_at(5.0), (5.0, 8.0));
        assert_eq!(
            drag(ThresholdKey::AirborneHeight, Grab::Enter, 3.0, 3.0).values_at(4.5),
            (4.5, 4.5)
        );
        // The result goes through set_threshold, which keeps the settings valid.
        let mut t = s.clone();
        let (e, l) = drag(ThresholdKey::ContactSpeed, Grab::Enter, 20.0, 30.0).values_at(35.0);
        t.set_threshold(ThresholdKey::ContactSpeed, e, l).unwrap();
        assert_eq!(
            (
                t.params.contacts.enter_speed_cm_s,
                t.params.contacts.leave_speed_cm_s
            ),
            (35.0, 35.0)
        );
        assert!(
            t.set_threshold(ThresholdKey::ContactSpeed, -1.0, 5.0)
                .is_err()
        );
        assert_eq!(round_for_span(20.4871, 80.0), 20.5);
        assert_eq!(round_for_span(0.31234, 3.0), 0.31);
        assert_eq!(round_for_span(7.0, 0.0), 7.0);
    }

    #[test]
    fn planted_feet_come_from_contact_tags_covering_the_frame() {
        assert_eq!(contact_side("contact:LeftFoot"), Some(0));
        assert_eq!(contact_side("contact:RightFootDown"), Some(1));
        assert_eq!(contact_side("CONTACT:left"), Some(0));
        assert_eq!(contact_side("contact:Airborne"), None);
        assert_eq!(contact_side("LeftFoot"), None);
        assert_eq!(contact_side("contact:LeftRight"), None);
        let left = [r(0, 10), r(20, 30)];
        let right = [r(5, 25)];
        let tags = [
            ("contact:LeftFootDown", &left[..]),
            ("contact:RightFootDown", &right[..]),
        ];
        assert_eq!(covered_sides(tags, 0), [true, false]);
        assert_eq!(covered_sides(tags, 10), [false, true]);
        assert_eq!(covered_sides(tags, 22), [true, true]);
        assert_eq!(covered_sides(tags, 30), [false, false]);
        let feet = [
            FootJoints {
                ankle: 3,
                toe: Some(4),
            },
            FootJoints {
                ankle: 8,
                toe: None,
            },
        ];
        assert_eq!(planted_joints(&feet, [true, true]), [3, 4, 8]);
        assert_eq!(planted_joints(&feet, [false, true]), [8]);
        // The demo's hand-made contacts.
        let p = Project::demo();
        let tags = real_contacts(&p.doc, 0);
        assert_eq!(tags.len(), 2, "{tags:?}");
        let down = tags
            .iter()
            .find(|(t, _)| *t == "contact:LeftFootDown")
            .unwrap()
            .1;
        let f = down[2].start;
        assert!(covered_sides(tags.iter().copied(), f)[0]);
    }

    fn doc() -> TagDocument {
        let mut d = crate::core::tags::document::test_document(&[("a", 100), ("b", 50)]);
        let t = d.add_tag("contact:LeftFoot", Some([10, 20, 30])).unwrap();
        d.set_ranges(t, 0, vec![r(0, 10), r(40, 50)]).unwrap();
        d
    }

    fn proposal(tag: &str, ranges: &[Range]) -> Proposal {
        Proposal {
            tag: tag.into(),
            ranges: ranges.to_vec(),
        }
    }

    #[test]
    fn ghost_lanes_say_what_applying_would_do() {
        let d = doc();
        let props = [
            proposal("contact:LeftFoot", &[r(5, 20)]),
            proposal("locomotion:Idle", &[r(0, 100)]),
        ];
        let mut modes = BTreeMap::new();
        let lanes = ghost_lanes(&d, 0, &props, &policy(&modes));
        assert_eq!(lanes.len(), 2);
        assert_eq!(lanes[0].color, Some([10, 20, 30]));
        assert_eq!(lanes[0].ranges, [r(5, 20)]);
        assert!(
            lanes[0].tooltip.contains("merge: adds 10 frame(s)"),
            "{}",
            lanes[0].tooltip
        );
        assert!(
            lanes[1].tooltip.contains("a new tag; applying adds 100"),
            "{}",
            lanes[1].tooltip
        );
        // A new tag is previewed in the colour applying gives it.
        let (edit, _) = proposals_edit(&d, &[(0, &props[..])], &policy(&modes)).expect("an edit");
        let mut applied = d.clone();
        edit.apply(&mut applied).expect("applies");
        let idle = applied.tag_index("locomotion:Idle").expect("created");
        assert!(lanes[1].color.is_some());
        assert_eq!(lanes[1].color, applied.tags[idle].color);
        modes.insert("contact:LeftFoot".to_owned(), ApplyMode::Replace);
        let lanes = ghost_lanes(&d, 0, &props, &policy(&modes));
        assert!(
            lanes[0]
                .tooltip
                .contains("removes 15 existing frame(s) (asked first)"),
            "{}",
            lanes[0].tooltip
        );
    }

    #[test]
    fn one_apply_edit_saves_the_settings_and_undoes_in_one_step() {
        let d = doc();
        let mut settings = AutotagSettings::default();
        settings.params.contacts.enter_speed_cm_s = 25.0;
        let props = vec![
            (0, vec![proposal("contact:LeftFoot", &[r(5, 20)])]),
            (1, vec![proposal("contact:LeftFoot", &[r(0, 5)])]),
        ];
        let mut modes = BTreeMap::new();
        modes.insert("contact:LeftFoot".to_owned(), ApplyMode::Replace);
        let (edit, report) = apply_edit(&d, &props, &policy(&modes), &settings).unwrap();
        assert_eq!(replacing_tags(&report), ["contact:LeftFoot"]);
        assert_eq!(report.frames_removed(), 15);
        let mut project = Project {
            doc: d.clone(),
            ..Project::default()
        };
        project.apply(edit, apply_label(&d, &[0, 1])).unwrap();
        assert_eq!(project.doc.autotag.as_ref(), Some(&settings));
        assert_eq!(project.doc.tags[0].ranges[&0], [r(5, 20)]);
        assert_eq!(project.doc.tags[0].ranges[&1], [r(0, 5)]);
        assert_eq!(project.history.undo_label(), Some("auto-tag 2 clips"));
        project.history.undo(&mut project.doc);
        assert_eq!(project.doc.autotag, None);
        assert_eq!(project.doc.tags[0].ranges, d.tags[0].ranges);
        // Same settings and nothing new: an empty edit.
        let mut same = d.clone();
        same.autotag = Some(settings.clone());
        let (edit, _) = apply_edit(
            &same,
            &[(0, vec![proposal("contact:LeftFoot", &[r(0, 10)])])],
            &policy(&BTreeMap::new()),
            &settings,
        )
        .unwrap();
        assert!(edit.is_empty(), "{edit:?}");
        assert_eq!(apply_label(&d, &[1]), "auto-tag b");
    }

    #[test]
    fn scopes_list_their_clips() {
        let checked = BTreeSet::from([2, 0, 9]);
        assert_eq!(scope_clips(Scope::Current, 3, 1, &checked), [1]);
        assert_eq!(
            scope_clips(Scope::Current, 0, 0, &checked),
            [] as [ClipId; 0]
        );
        assert_eq!(scope_clips(Scope::Checked, 3, 1, &checked), [0, 2]);
        assert_eq!(scope_clips(Scope::All, 3, 1, &checked), [0, 1, 2]);
    }

    #[test]
    fn a_batch_tags_every_clip_reports_failures_and_stops_when_cancelled() {
        let p = Project::demo();
        let settings = AutotagSettings::default();
        let only = enabled_tags(&settings, &BTreeSet::new());
        let mut requests: Vec<_> = (0..3).map(|c| Ok(resolve(&p, c).unwrap())).collect();
        requests.push(Err((7, "gone".to_owned(), "no such file".to_owned())));
        let count = AtomicUsize::new(0);
        let cancel = AtomicBool::new(false);
        let out = run_batch(requests.clone(), &settings, &only, 2, &cancel, &|_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        assert!(!out.cancelled);
        assert_eq!(count.load(Ordering::Relaxed), 4);
        assert_eq!(
            out.clips.iter().map(|c| c.clip).collect::<Vec<_>>(),
            [0, 1, 2, 7]
        );
        assert_eq!(out.failures(), ["gone: no such file"]);
        let props = out.proposals();
        assert_eq!(props.len(), 3);
        // The same proposals as tagging one clip directly.
        let one = tag_clip(&resolve(&p, 1).unwrap(), &settings, &only);
        assert_eq!(Ok(&props[1].1), one.result.as_ref());
        assert!(
            props[0]
                .1
                .iter()
                .any(|p| p.tag == CONTACT_LEFT && !p.ranges.is_empty())
        );
        // Cancelled before it starts: nothing, and marked so.
        cancel.store(true, Ordering::Relaxed);
        let out = run_batch(requests, &settings, &only, 2, &cancel, &|_| {});
        assert!(out.cancelled && out.clips.is_empty());
    }
}
