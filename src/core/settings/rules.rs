//! Autotag settings (the parameters of the built-in generators and the custom rules) in their JSON
//! form, a rule file or a project's `autotag` field: reading with JSON-path errors, checking and
//! writing. Data only: the generators that use them are `core::autotag`.
//!
//! ```json
//! {
//!   "version": 1,
//!   "params": { "contacts": { "enter_height_cm": 3.5 }, "turning": { "enter_deg_s": 25 } },
//!   "rules": [
//!     { "tag": "pose:HandsUp",
//!       "when": [
//!         { "signal": "y", "joint": "LeftHand", "relative_to": "Head", "above": 5, "leave": 0 },
//!         { "signal": "y", "joint": "RightHand", "relative_to": "Head", "above": 5, "leave": 0 }
//!       ],
//!       "min_duration_s": 0.2 }
//!   ]
//! }
//! ```
//!
//! Every field but `version` may be omitted (parameters take their defaults). A rule's tag is on
//! while **every** condition is on. A condition thresholds one signal of a joint ([`SignalKind`]) in
//! centimetres, centimetres per second or degrees: with `"above": E` it turns on when the signal
//! rises above `E` and off when it falls below `leave`; with `"below": E` the reverse. `leave`
//! defaults to `E` (no hysteresis) and must lie on the off side of `E`. Then gaps shorter than
//! `min_gap_s` (default 0) are closed and runs shorter than `min_duration_s` (default 0.1 s) dropped.
//!
//! Unknown fields are errors (they are most likely typos); every error names its JSON path
//! (`rules[0].when[1].leave`). See `docs/AUTOTAG.md`.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::json::{Fields, Json, err};
use super::params::{AirborneParams, ContactParams, LocomotionParams, TurnParams};
use super::{AutotagParams, BUILTIN_TAGS, SettingsError, Side};

/// Version of the settings format this build reads and writes.
pub const SETTINGS_VERSION: u64 = 1;

/// The parameters of the built-in generators and the custom rules: what a rule file holds and what
/// a project saves in its `autotag` field.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AutotagSettings {
    pub params: AutotagParams,
    pub rules: Vec<Rule>,
}

/// One rule: the tag it proposes and the conditions that must all hold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rule {
    /// Tag name (may be namespaced, `pose:HandsUp`); not a built-in tag.
    pub tag: String,
    /// Conditions, all of which must hold (at least one).
    pub when: Vec<Condition>,
    /// Runs shorter than this are dropped, seconds. Default 0.1.
    pub min_duration_s: f32,
    /// Gaps shorter than this between two runs are closed, seconds. Default 0.
    pub min_gap_s: f32,
}

/// Default of [`Rule::min_duration_s`].
pub const DEFAULT_MIN_DURATION_S: f32 = 0.1;
/// Default of [`Condition::smooth_s`] for `speed`.
pub const DEFAULT_SPEED_SMOOTH_S: f32 = 0.1;

/// What a condition measures on its joint. Positions are model-space, Y up, in centimetres.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SignalKind {
    /// Height (cm): the joint's Y above the clip's floor (the 5th percentile over frames of the
    /// lowest joint's Y), or above `relative_to`'s Y.
    Height,
    /// Speed of the joint (cm/s, 3D): distance covered over `smooth_s` (default 0.1 s) centred on
    /// the frame, divided by that time.
    Speed,
    /// Model-space X, Y or Z (cm), minus `relative_to`'s when given.
    X,
    Y,
    Z,
    /// Distance between `joint` and `to` (cm).
    Distance,
    /// Bend of the joint (degrees, 0 = straight, 180 = folded back): the angle between the bone
    /// coming in from its parent and the bone going out to `to` (default: its first child). Joints
    /// at the same place as their parent or child (zero-length bones) are skipped over.
    Angle,
}

impl SignalKind {
    pub const ALL: [(&'static str, SignalKind); 7] = [
        ("height", SignalKind::Height),
        ("speed", SignalKind::Speed),
        ("x", SignalKind::X),
        ("y", SignalKind::Y),
        ("z", SignalKind::Z),
        ("distance", SignalKind::Distance),
        ("angle", SignalKind::Angle),
    ];

    pub fn unit(self) -> &'static str {
        match self {
            SignalKind::Speed => "cm/s",
            SignalKind::Angle => "deg",
            _ => "cm",
        }
    }

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("?", |(n, _)| n)
    }
}

/// What a condition's signal depends on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SignalKey {
    kind: SignalKind,
    joint: String,
    relative_to: Option<String>,
    to: Option<String>,
    smooth_bits: u32,
}

/// One thresholded signal of a joint. A valid condition has exactly one of `above` and `below`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Condition {
    pub signal: SignalKind,
    /// Exact joint name.
    pub joint: String,
    /// For `height`, `x`, `y`, `z`: measure relative to this joint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_to: Option<String>,
    /// For `distance` (required) and `angle` (optional): the other joint.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// On above this value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub above: Option<f32>,
    /// On below this value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub below: Option<f32>,
    /// Off threshold (hysteresis); defaults to the on threshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leave: Option<f32>,
    /// For `speed`: the measuring window in seconds (default 0.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smooth_s: Option<f32>,
}

impl Condition {
    /// `(side, enter, leave)` of a valid condition.
    pub fn threshold(&self) -> (Side, f32, f32) {
        match (self.above, self.below) {
            (Some(e), _) => (Side::Above, e, self.leave.unwrap_or(e)),
            (None, Some(e)) => (Side::Below, e, self.leave.unwrap_or(e)),
            (None, None) => (Side::Above, f32::INFINITY, f32::INFINITY),
        }
    }

    /// Sets the on and off thresholds, keeping the side.
    pub fn set_threshold(&mut self, enter: f32, leave: f32) {
        if self.below.is_some() {
            self.below = Some(enter);
        } else {
            self.above = Some(enter);
        }
        self.leave = (leave != enter).then_some(leave);
    }

    /// What the signal depends on (not the thresholds): equal keys give equal signals.
    pub(crate) fn signal_key(&self) -> SignalKey {
        SignalKey {
            kind: self.signal,
            joint: self.joint.clone(),
            relative_to: self.relative_to.clone(),
            to: self.to.clone(),
            smooth_bits: self.smooth_s.unwrap_or(DEFAULT_SPEED_SMOOTH_S).to_bits(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reading and checking.
// ---------------------------------------------------------------------------------------------

const TOP_FIELDS: [&str; 3] = ["version", "params", "rules"];
const PARAM_GROUPS: [&str; 4] = ["contacts", "airborne", "locomotion", "turning"];
const RULE_FIELDS: [&str; 4] = ["tag", "when", "min_duration_s", "min_gap_s"];
const CONDITION_FIELDS: [&str; 8] = [
    "signal",
    "joint",
    "relative_to",
    "to",
    "above",
    "below",
    "leave",
    "smooth_s",
];

fn join(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.starts_with('[')) {
        (true, _) => path.to_owned(),
        (false, true) => format!("{prefix}{path}"),
        (false, false) => format!("{prefix}.{path}"),
    }
}

/// Parses and checks a settings text (a rule file). Errors name the JSON path of the offending
/// value (`rules[0].when[1].leave`), or the line and column of a syntax error.
pub fn parse_settings(text: &str) -> Result<AutotagSettings, SettingsError> {
    parse_settings_at(text, "")
}

/// [`parse_settings`] for a value nested in a larger file: paths start with `prefix` (`autotag`).
pub fn parse_settings_at(text: &str, prefix: &str) -> Result<AutotagSettings, SettingsError> {
    let value = crate::core::settings::json::parse(text)?;
    read_settings(&value, prefix)
}

/// Reads settings from a JSON tree at `path`.
pub fn read_settings(value: &Json, path: &str) -> Result<AutotagSettings, SettingsError> {
    let mut top = Fields::new(value, path)?;
    match top.get("version") {
        None => {
            return Err(err(
                path,
                format!(
                    "missing required field `version` (this build reads version {SETTINGS_VERSION})"
                ),
            ));
        }
        Some(v @ Json::Num(_)) if v.as_f64() == Some(SETTINGS_VERSION as f64) => {}
        Some(other) => {
            let found = match other {
                Json::Num(v) => v.to_string(),
                o => o.kind().to_owned(),
            };
            return Err(err(
                top.at("version"),
                format!(
                    "unsupported autotag settings version {found}; this build reads version {SETTINGS_VERSION}"
                ),
            ));
        }
    }
    let params = match top.get("params") {
        None => AutotagParams::default(),
        Some(v) => {
            let params = read_params(v, &top.at("params"))?;
            params.validate_at(&top.at("params"))?;
            params
        }
    };
    let rules = match top.get("rules") {
        None => Vec::new(),
        Some(Json::Arr(list)) => {
            let max = crate::core::limits::MAX_RULES;
            check(list.len() <= max, top.at("rules"), || {
                format!("expected at most {max} rules, found {}", list.len())
            })?;
            let mut rules: Vec<Rule> = Vec::with_capacity(list.len());
            let mut tags = HashMap::with_capacity(list.len());
            for (i, v) in list.iter().enumerate() {
                let rp = join(path, &format!("rules[{i}]"));
                let rule = read_rule(v, &rp)?;
                rule.validate_at(&rp)?;
                if let Some(j) = tags.insert(rule.tag.clone(), i) {
                    return Err(err(
                        format!("{rp}.tag"),
                        format!("duplicate tag `{}` (also rules[{j}])", rule.tag),
                    ));
                }
                rules.push(rule);
            }
            rules
        }
        Some(other) => {
            return Err(err(
                top.at("rules"),
                format!("expected an array of rules, found {}", other.kind()),
            ));
        }
    };
    top.finish(&TOP_FIELDS)?;
    Ok(AutotagSettings { params, rules })
}

fn read_params(v: &Json, path: &str) -> Result<AutotagParams, SettingsError> {
    let mut groups = Fields::new(v, path)?;
    let mut p = AutotagParams::default();
    if let Some(v) = groups.get("contacts") {
        let mut f = Fields::new(v, &groups.at("contacts"))?;
        let d = ContactParams::default();
        p.contacts = ContactParams {
            ground_percentile: f.f32_or("ground_percentile", d.ground_percentile)?,
            enter_height_cm: f.f32_or("enter_height_cm", d.enter_height_cm)?,
            leave_height_cm: f.f32_or("leave_height_cm", d.leave_height_cm)?,
            enter_speed_cm_s: f.f32_or("enter_speed_cm_s", d.enter_speed_cm_s)?,
            leave_speed_cm_s: f.f32_or("leave_speed_cm_s", d.leave_speed_cm_s)?,
            speed_window_s: f.f32_or("speed_window_s", d.speed_window_s)?,
            min_contact_s: f.f32_or("min_contact_s", d.min_contact_s)?,
            min_gap_s: f.f32_or("min_gap_s", d.min_gap_s)?,
            left_ankle: f.opt_string("left_ankle")?,
            left_toe: f.opt_string("left_toe")?,
            right_ankle: f.opt_string("right_ankle")?,
            right_toe: f.opt_string("right_toe")?,
        };
        f.finish(&[
            "ground_percentile",
            "enter_height_cm",
            "leave_height_cm",
            "enter_speed_cm_s",
            "leave_speed_cm_s",
            "speed_window_s",
            "min_contact_s",
            "min_gap_s",
            "left_ankle",
            "left_toe",
            "right_ankle",
            "right_toe",
        ])?;
    }
    if let Some(v) = groups.get("airborne") {
        let mut f = Fields::new(v, &groups.at("airborne"))?;
        let d = AirborneParams::default();
        p.airborne = AirborneParams {
            min_height_cm: f.f32_or("min_height_cm", d.min_height_cm)?,
            min_duration_s: f.f32_or("min_duration_s", d.min_duration_s)?,
        };
        f.finish(&["min_height_cm", "min_duration_s"])?;
    }
    if let Some(v) = groups.get("locomotion") {
        let mut f = Fields::new(v, &groups.at("locomotion"))?;
        let d = LocomotionParams::default();
        p.locomotion = LocomotionParams {
            idle_max_m_s: f.f32_or("idle_max_m_s", d.idle_max_m_s)?,
            walk_max_m_s: f.f32_or("walk_max_m_s", d.walk_max_m_s)?,
            hysteresis_m_s: f.f32_or("hysteresis_m_s", d.hysteresis_m_s)?,
            smooth_s: f.f32_or("smooth_s", d.smooth_s)?,
            min_segment_s: f.f32_or("min_segment_s", d.min_segment_s)?,
            root_joint: f.opt_string("root_joint")?,
        };
        f.finish(&[
            "idle_max_m_s",
            "walk_max_m_s",
            "hysteresis_m_s",
            "smooth_s",
            "min_segment_s",
            "root_joint",
        ])?;
    }
    if let Some(v) = groups.get("turning") {
        let mut f = Fields::new(v, &groups.at("turning"))?;
        let d = TurnParams::default();
        p.turning = TurnParams {
            enter_deg_s: f.f32_or("enter_deg_s", d.enter_deg_s)?,
            leave_deg_s: f.f32_or("leave_deg_s", d.leave_deg_s)?,
            window_s: f.f32_or("window_s", d.window_s)?,
            min_duration_s: f.f32_or("min_duration_s", d.min_duration_s)?,
        };
        f.finish(&["enter_deg_s", "leave_deg_s", "window_s", "min_duration_s"])?;
    }
    groups.finish(&PARAM_GROUPS)?;
    Ok(p)
}

fn read_rule(v: &Json, path: &str) -> Result<Rule, SettingsError> {
    let mut f = Fields::new(v, path)?;
    let tag = f.string("tag")?;
    let when = match f.get("when") {
        Some(Json::Arr(list)) => {
            let max = crate::core::limits::MAX_CONDITIONS;
            check(list.len() <= max, f.at("when"), || {
                format!(
                    "expected at most {max} conditions in a rule, found {}",
                    list.len()
                )
            })?;
            let mut out = Vec::with_capacity(list.len());
            for (k, c) in list.iter().enumerate() {
                out.push(read_condition(c, &format!("{path}.when[{k}]"))?);
            }
            out
        }
        Some(other) => {
            return Err(err(
                f.at("when"),
                format!("expected an array of conditions, found {}", other.kind()),
            ));
        }
        None => {
            return Err(err(
                path,
                "missing required field `when` (an array of conditions)",
            ));
        }
    };
    let rule = Rule {
        tag,
        when,
        min_duration_s: f.f32_or("min_duration_s", DEFAULT_MIN_DURATION_S)?,
        min_gap_s: f.f32_or("min_gap_s", 0.0)?,
    };
    f.finish(&RULE_FIELDS)?;
    Ok(rule)
}

fn read_condition(v: &Json, path: &str) -> Result<Condition, SettingsError> {
    let mut f = Fields::new(v, path)?;
    let signal = match f.get("signal") {
        None => return Err(err(path, "missing required field `signal`")),
        Some(Json::Str(s)) => SignalKind::ALL
            .iter()
            .find(|(n, _)| n == s)
            .map(|(_, k)| *k)
            .ok_or_else(|| {
                let names: Vec<&str> = SignalKind::ALL.iter().map(|(n, _)| *n).collect();
                err(
                    f.at("signal"),
                    format!(
                        "unknown signal `{s}`; expected one of: {}",
                        names.join(", ")
                    ),
                )
            })?,
        Some(other) => {
            return Err(err(
                f.at("signal"),
                format!("expected a signal name (a string), found {}", other.kind()),
            ));
        }
    };
    let c = Condition {
        signal,
        joint: f.string("joint")?,
        relative_to: f.opt_string("relative_to")?,
        to: f.opt_string("to")?,
        above: f.opt_f32("above")?,
        below: f.opt_f32("below")?,
        leave: f.opt_f32("leave")?,
        smooth_s: f.opt_f32("smooth_s")?,
    };
    f.finish(&CONDITION_FIELDS)?;
    Ok(c)
}

fn check(ok: bool, path: String, message: impl FnOnce() -> String) -> Result<(), SettingsError> {
    if ok {
        Ok(())
    } else {
        Err(err(path, message()))
    }
}

/// `value >= 0` and finite, seconds.
fn seconds(value: f32, path: String) -> Result<(), SettingsError> {
    check(value.is_finite() && value >= 0.0, path, || {
        format!("expected a number of seconds >= 0, found {value}")
    })
}

/// `enter` and `leave` of a threshold on the "below" side: `0 < enter <= leave`.
fn below_pair(enter: (f32, String), leave: (f32, String), what: &str) -> Result<(), SettingsError> {
    check(enter.0 > 0.0, enter.1.clone(), || {
        format!("expected a {what} > 0, found {}", enter.0)
    })?;
    let name = enter.1.rsplit('.').next().unwrap_or_default().to_owned();
    check(leave.0 >= enter.0, leave.1, || {
        format!(
            "expected a {what} >= `{name}` ({}), found {}",
            enter.0, leave.0
        )
    })
}

impl AutotagParams {
    /// Checks every parameter; the error names its path (`params.contacts.leave_height_cm`).
    pub fn validate(&self) -> Result<(), SettingsError> {
        self.validate_at("params")
    }

    fn validate_at(&self, path: &str) -> Result<(), SettingsError> {
        let at = |group: &str, field: &str| join(path, &format!("{group}.{field}"));
        let c = &self.contacts;
        check(
            (0.0..=1.0).contains(&c.ground_percentile),
            at("contacts", "ground_percentile"),
            || {
                format!(
                    "expected a quantile between 0 and 1, found {}",
                    c.ground_percentile
                )
            },
        )?;
        below_pair(
            (c.enter_height_cm, at("contacts", "enter_height_cm")),
            (c.leave_height_cm, at("contacts", "leave_height_cm")),
            "height in cm",
        )?;
        below_pair(
            (c.enter_speed_cm_s, at("contacts", "enter_speed_cm_s")),
            (c.leave_speed_cm_s, at("contacts", "leave_speed_cm_s")),
            "speed in cm/s",
        )?;
        check(
            c.speed_window_s > 0.0 && c.speed_window_s <= 10.0,
            at("contacts", "speed_window_s"),
            || {
                format!(
                    "expected a window in seconds, > 0 and <= 10, found {}",
                    c.speed_window_s
                )
            },
        )?;
        seconds(c.min_contact_s, at("contacts", "min_contact_s"))?;
        seconds(c.min_gap_s, at("contacts", "min_gap_s"))?;
        let a = &self.airborne;
        check(
            a.min_height_cm >= 0.0,
            at("airborne", "min_height_cm"),
            || format!("expected a height in cm >= 0, found {}", a.min_height_cm),
        )?;
        seconds(a.min_duration_s, at("airborne", "min_duration_s"))?;
        let l = &self.locomotion;
        check(
            l.idle_max_m_s > 0.0,
            at("locomotion", "idle_max_m_s"),
            || format!("expected a speed in m/s > 0, found {}", l.idle_max_m_s),
        )?;
        check(
            l.walk_max_m_s > l.idle_max_m_s,
            at("locomotion", "walk_max_m_s"),
            || {
                format!(
                    "expected a speed in m/s > `idle_max_m_s` ({}), found {}",
                    l.idle_max_m_s, l.walk_max_m_s
                )
            },
        )?;
        let gap = (l.walk_max_m_s - l.idle_max_m_s) / 2.0;
        check(
            l.hysteresis_m_s >= 0.0 && l.hysteresis_m_s < gap.min(l.idle_max_m_s),
            at("locomotion", "hysteresis_m_s"),
            || {
                format!(
                    "expected a speed in m/s >= 0 and below both `idle_max_m_s` and half the walk band ({}), found {}",
                    gap.min(l.idle_max_m_s),
                    l.hysteresis_m_s
                )
            },
        )?;
        check(
            l.smooth_s > 0.0 && l.smooth_s <= 60.0,
            at("locomotion", "smooth_s"),
            || {
                format!(
                    "expected a window in seconds, > 0 and <= 60, found {}",
                    l.smooth_s
                )
            },
        )?;
        seconds(l.min_segment_s, at("locomotion", "min_segment_s"))?;
        let t = &self.turning;
        check(t.enter_deg_s > 0.0, at("turning", "enter_deg_s"), || {
            format!("expected a rate in deg/s > 0, found {}", t.enter_deg_s)
        })?;
        check(
            t.leave_deg_s >= 0.0 && t.leave_deg_s <= t.enter_deg_s,
            at("turning", "leave_deg_s"),
            || {
                format!(
                    "expected a rate in deg/s >= 0 and <= `enter_deg_s` ({}), found {}",
                    t.enter_deg_s, t.leave_deg_s
                )
            },
        )?;
        check(
            t.window_s > 0.0 && t.window_s <= 60.0,
            at("turning", "window_s"),
            || {
                format!(
                    "expected a window in seconds, > 0 and <= 60, found {}",
                    t.window_s
                )
            },
        )?;
        seconds(t.min_duration_s, at("turning", "min_duration_s"))
    }
}

impl Rule {
    /// Checks the rule (`path`: where it is, `rules[2]`).
    pub fn validate_at(&self, path: &str) -> Result<(), SettingsError> {
        check(!self.tag.trim().is_empty(), format!("{path}.tag"), || {
            "expected a non-empty tag name".to_owned()
        })?;
        check(
            !BUILTIN_TAGS.contains(&self.tag.as_str()),
            format!("{path}.tag"),
            || {
                format!(
                    "`{}` is a built-in tag; name the rule's tag differently",
                    self.tag
                )
            },
        )?;
        check(!self.when.is_empty(), format!("{path}.when"), || {
            "expected a non-empty array of conditions".to_owned()
        })?;
        let max = crate::core::limits::MAX_CONDITIONS;
        check(self.when.len() <= max, format!("{path}.when"), || {
            format!(
                "expected at most {max} conditions in a rule, found {}",
                self.when.len()
            )
        })?;
        for (k, c) in self.when.iter().enumerate() {
            c.validate_at(&format!("{path}.when[{k}]"))?;
        }
        seconds(self.min_duration_s, format!("{path}.min_duration_s"))?;
        seconds(self.min_gap_s, format!("{path}.min_gap_s"))
    }
}

impl Condition {
    /// Checks the condition (`path`: where it is, `rules[2].when[0]`).
    pub fn validate_at(&self, path: &str) -> Result<(), SettingsError> {
        check(!self.joint.is_empty(), format!("{path}.joint"), || {
            "expected a joint name".to_owned()
        })?;
        let (field, enter) = match (self.above, self.below) {
            (Some(e), None) => ("above", e),
            (None, Some(e)) => ("below", e),
            _ => {
                return Err(err(
                    path,
                    "expected exactly one of `above` or `below` (the on threshold)",
                ));
            }
        };
        check(enter.is_finite(), format!("{path}.{field}"), || {
            "expected a finite number".to_owned()
        })?;
        if let Some(l) = self.leave {
            let ok = l.is_finite()
                && if field == "above" {
                    l <= enter
                } else {
                    l >= enter
                };
            let rel = if field == "above" { "<=" } else { ">=" };
            check(ok, format!("{path}.leave"), || {
                format!("expected a number {rel} `{field}` ({enter}), found {l}")
            })?;
        }
        match (self.signal, &self.to) {
            (SignalKind::Distance, None) => {
                return Err(err(
                    format!("{path}.to"),
                    "missing: signal `distance` needs the other joint in `to`",
                ));
            }
            (SignalKind::Distance | SignalKind::Angle, _) | (_, None) => {}
            (_, Some(_)) => {
                return Err(err(
                    format!("{path}.to"),
                    "only signals `distance` and `angle` take `to` (use `relative_to` for heights and coordinates)",
                ));
            }
        }
        if self.relative_to.is_some()
            && !matches!(
                self.signal,
                SignalKind::Height | SignalKind::X | SignalKind::Y | SignalKind::Z
            )
        {
            return Err(err(
                format!("{path}.relative_to"),
                "only signals `height`, `x`, `y` and `z` take `relative_to`",
            ));
        }
        if let Some(s) = self.smooth_s {
            check(
                self.signal == SignalKind::Speed,
                format!("{path}.smooth_s"),
                || "only signal `speed` takes `smooth_s`".to_owned(),
            )?;
            check(s > 0.0 && s <= 60.0, format!("{path}.smooth_s"), || {
                format!("expected a window in seconds, > 0 and <= 60, found {s}")
            })?;
        }
        Ok(())
    }
}

impl AutotagSettings {
    /// Checks the parameters and the rules (no two rules with one tag).
    pub fn validate(&self) -> Result<(), SettingsError> {
        self.validate_at("")
    }

    fn validate_at(&self, path: &str) -> Result<(), SettingsError> {
        self.params.validate_at(&join(path, "params"))?;
        let max = crate::core::limits::MAX_RULES;
        check(self.rules.len() <= max, join(path, "rules"), || {
            format!("expected at most {max} rules, found {}", self.rules.len())
        })?;
        let mut tags = HashMap::with_capacity(self.rules.len());
        for (i, r) in self.rules.iter().enumerate() {
            let rp = join(path, &format!("rules[{i}]"));
            r.validate_at(&rp)?;
            if let Some(j) = tags.insert(r.tag.as_str(), i) {
                return Err(err(
                    format!("{rp}.tag"),
                    format!("duplicate tag `{}` (also rules[{j}])", r.tag),
                ));
            }
        }
        Ok(())
    }

    /// The settings as JSON text, in the layout a project file uses (`indent` spaces before each
    /// line after the first; one parameter group and one rule per line). [`parse_settings`] reads
    /// it back to equal settings.
    pub fn to_json(&self, indent: usize) -> String {
        let pad = " ".repeat(indent);
        let p = &self.params;
        let mut s = String::new();
        let _ = write!(
            s,
            "{{\n{pad}  \"version\": {SETTINGS_VERSION},\n{pad}  \"params\": {{\n\
             {pad}    \"contacts\": {},\n{pad}    \"airborne\": {},\n\
             {pad}    \"locomotion\": {},\n{pad}    \"turning\": {}\n{pad}  }},\n{pad}  \"rules\": [",
            compact(&p.contacts),
            compact(&p.airborne),
            compact(&p.locomotion),
            compact(&p.turning),
        );
        for (k, r) in self.rules.iter().enumerate() {
            s.push_str(if k == 0 { "\n" } else { ",\n" });
            let _ = write!(s, "{pad}    {}", compact(r));
        }
        if !self.rules.is_empty() {
            let _ = write!(s, "\n{pad}  ");
        }
        let _ = write!(s, "]\n{pad}}}");
        s
    }
}

/// Compact JSON of a parameter group or a rule (they hold only strings and finite numbers).
fn compact<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".to_owned())
}
