//! Custom rules: a small JSON format that proposes a tag wherever conditions on joint signals hold.
//!
//! ```json
//! {
//!   "version": 1,
//!   "rules": [
//!     {
//!       "tag": "HandsUp",
//!       "when": [
//!         { "signal": "y", "joint": "LeftHand", "relative_to": "Head", "above": 5, "leave": 0 },
//!         { "signal": "y", "joint": "RightHand", "relative_to": "Head", "above": 5, "leave": 0 }
//!       ],
//!       "min_duration_s": 0.2
//!     }
//!   ]
//! }
//! ```
//!
//! A rule's tag is on while **every** condition is on. A condition thresholds one signal of a joint,
//! in centimetres, centimetres per second or degrees (see [`SignalKind`]): with `"above": E` it turns
//! on when the signal rises above `E` and off when it falls below `leave`; with `"below": E` the
//! reverse. `leave` defaults to `E` (no hysteresis) and must lie on the off side of `E`. Then gaps
//! shorter than `min_gap_s` (default 0) are closed and runs shorter than `min_duration_s` (default
//! 0.1 s) dropped. Every error names its JSON path (`rules[0].when[1].leave`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core::anim::Clip;

use super::motion::Motion;
use super::signal::{
    Side, drop_short, fill_gaps, frames_for, hysteresis, percentile, windowed_speed,
};
use super::{Signal, Threshold};

/// Version of the rule format this code reads and writes.
pub const RULES_VERSION: u32 = 1;

/// A rule file: a version and a list of rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSet {
    /// Format version, [`RULES_VERSION`]; may be omitted.
    #[serde(default = "default_version")]
    pub version: u32,
    pub rules: Vec<Rule>,
}

fn default_version() -> u32 {
    RULES_VERSION
}

/// One rule: the tag it proposes and the conditions that must all hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Tag name (may be namespaced, `pose:HandsUp`).
    pub tag: String,
    /// Conditions, all of which must hold (at least one).
    #[serde(default)]
    pub when: Vec<Condition>,
    /// Runs shorter than this are dropped, seconds. Default 0.1.
    #[serde(default = "default_min_duration")]
    pub min_duration_s: f32,
    /// Gaps shorter than this between two runs are closed, seconds. Default 0.
    #[serde(default)]
    pub min_gap_s: f32,
}

fn default_min_duration() -> f32 {
    0.1
}

/// What a condition measures on its joint. All positions are model-space, Y up, in centimetres.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignalKind {
    /// Height above the floor (cm): the joint's Y minus the clip's floor (the 5th percentile over
    /// frames of the lowest joint's Y), or minus `relative_to`'s Y.
    Height,
    /// Speed of the joint (cm/s, 3D), measured over `smooth_s` (default 0.1 s).
    Speed,
    /// Model-space X, Y or Z (cm), minus `relative_to`'s when given.
    X,
    Y,
    Z,
    /// Distance between `joint` and `to` (cm).
    Distance,
    /// Rotation angle of the joint relative to its rest orientation (degrees, 0..180), from its
    /// local rotation (e.g. the bend of a one-axis knee or elbow).
    Angle,
}

impl SignalKind {
    fn unit(self) -> &'static str {
        match self {
            SignalKind::Speed => "cm/s",
            SignalKind::Angle => "deg",
            _ => "cm",
        }
    }

    fn name(self) -> &'static str {
        match self {
            SignalKind::Height => "height",
            SignalKind::Speed => "speed",
            SignalKind::X => "x",
            SignalKind::Y => "y",
            SignalKind::Z => "z",
            SignalKind::Distance => "distance",
            SignalKind::Angle => "angle",
        }
    }
}

/// One thresholded signal of a joint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub signal: SignalKind,
    /// Exact joint name.
    pub joint: String,
    /// For `height`, `x`, `y`, `z`: subtract this joint's value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_to: Option<String>,
    /// For `distance`: the other joint (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// On above this value (exactly one of `above`, `below`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above: Option<f32>,
    /// On below this value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub below: Option<f32>,
    /// Off threshold (hysteresis); defaults to the on threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leave: Option<f32>,
    /// For `speed`: the measuring window in seconds (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smooth_s: Option<f32>,
}

impl Condition {
    /// `(side, enter, leave)`; valid conditions always have one.
    pub fn threshold(&self) -> (Side, f32, f32) {
        match (self.above, self.below) {
            (Some(e), _) => (Side::Above, e, self.leave.unwrap_or(e)),
            (None, Some(e)) => (Side::Below, e, self.leave.unwrap_or(e)),
            (None, None) => (Side::Above, f32::INFINITY, f32::INFINITY),
        }
    }
}

/// A rule file error: the JSON path (or `line L column C` for syntax errors) and what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct RuleError {
    pub path: String,
    pub message: String,
}

fn err(path: impl Into<String>, message: impl Into<String>) -> RuleError {
    RuleError {
        path: path.into(),
        message: message.into(),
    }
}

/// Parses and validates a rule file. Errors name the JSON path of the offending value.
pub fn parse_rules(text: &str) -> Result<RuleSet, RuleError> {
    let root: Value = serde_json::from_str(text).map_err(|e| {
        err(
            format!("line {} column {}", e.line(), e.column()),
            format!("invalid JSON: {e}"),
        )
    })?;
    let Value::Object(mut top) = root else {
        return Err(err(
            "$",
            "expected an object with a `rules` array, found another JSON value",
        ));
    };
    let version = match top.remove("version") {
        None => RULES_VERSION,
        Some(v) => match v.as_u64() {
            Some(v) if v == u64::from(RULES_VERSION) => RULES_VERSION,
            _ => {
                return Err(err(
                    "version",
                    format!("unsupported rule format version {v}, expected {RULES_VERSION}"),
                ));
            }
        },
    };
    let rules_value = top
        .remove("rules")
        .ok_or_else(|| err("rules", "missing: expected an array of rules"))?;
    if let Some(k) = top.keys().next() {
        return Err(err(
            k.clone(),
            "unknown field, expected `version` or `rules`",
        ));
    }
    let Value::Array(list) = rules_value else {
        return Err(err("rules", "expected an array of rules"));
    };
    let mut rules = Vec::with_capacity(list.len());
    for (i, mut v) in list.into_iter().enumerate() {
        let path = format!("rules[{i}]");
        let when = match v.as_object_mut() {
            Some(o) => o.remove("when"),
            None => return Err(err(path, "expected an object")),
        };
        let mut rule: Rule =
            serde_json::from_value(v).map_err(|e| err(path.clone(), e.to_string()))?;
        let Some(Value::Array(when)) = when else {
            return Err(err(
                format!("{path}.when"),
                "expected a non-empty array of conditions",
            ));
        };
        for (k, c) in when.into_iter().enumerate() {
            let cpath = format!("{path}.when[{k}]");
            let c: Condition =
                serde_json::from_value(c).map_err(|e| err(cpath.clone(), e.to_string()))?;
            validate_condition(&c, &cpath)?;
            rule.when.push(c);
        }
        validate_rule(&rule, &path)?;
        if let Some(j) = rules.iter().position(|r: &Rule| r.tag == rule.tag) {
            return Err(err(
                format!("{path}.tag"),
                format!("duplicate tag `{}` (also rules[{j}])", rule.tag),
            ));
        }
        rules.push(rule);
    }
    Ok(RuleSet { version, rules })
}

fn validate_rule(rule: &Rule, path: &str) -> Result<(), RuleError> {
    if rule.tag.trim().is_empty() {
        return Err(err(format!("{path}.tag"), "expected a non-empty tag name"));
    }
    if rule.when.is_empty() {
        return Err(err(
            format!("{path}.when"),
            "expected a non-empty array of conditions",
        ));
    }
    for (field, v) in [
        ("min_duration_s", rule.min_duration_s),
        ("min_gap_s", rule.min_gap_s),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(err(
                format!("{path}.{field}"),
                format!("expected a number of seconds >= 0, found {v}"),
            ));
        }
    }
    Ok(())
}

fn validate_condition(c: &Condition, path: &str) -> Result<(), RuleError> {
    if c.joint.is_empty() {
        return Err(err(format!("{path}.joint"), "expected a joint name"));
    }
    let enter = match (c.above, c.below) {
        (Some(e), None) | (None, Some(e)) => e,
        _ => {
            return Err(err(
                path,
                "expected exactly one of `above` or `below` (the on threshold)",
            ));
        }
    };
    let field = if c.above.is_some() { "above" } else { "below" };
    if !enter.is_finite() {
        return Err(err(format!("{path}.{field}"), "expected a finite number"));
    }
    if let Some(l) = c.leave {
        let ok = if c.above.is_some() {
            l <= enter
        } else {
            l >= enter
        };
        if !l.is_finite() || !ok {
            let rel = if c.above.is_some() { "<=" } else { ">=" };
            return Err(err(
                format!("{path}.leave"),
                format!("expected a number {rel} `{field}` ({enter}), found {l}"),
            ));
        }
    }
    match c.signal {
        SignalKind::Distance if c.to.is_none() => {
            return Err(err(
                format!("{path}.to"),
                "missing: signal `distance` needs the other joint in `to`",
            ));
        }
        SignalKind::Distance => {}
        _ if c.to.is_some() => {
            return Err(err(
                format!("{path}.to"),
                "only signal `distance` takes `to` (use `relative_to` for coordinates)",
            ));
        }
        _ => {}
    }
    if c.relative_to.is_some()
        && !matches!(
            c.signal,
            SignalKind::Height | SignalKind::X | SignalKind::Y | SignalKind::Z
        )
    {
        return Err(err(
            format!("{path}.relative_to"),
            "only signals `height`, `x`, `y` and `z` take `relative_to`",
        ));
    }
    if let Some(s) = c.smooth_s {
        if c.signal != SignalKind::Speed {
            return Err(err(
                format!("{path}.smooth_s"),
                "only signal `speed` takes `smooth_s`",
            ));
        }
        if !(s.is_finite() && s > 0.0) {
            return Err(err(
                format!("{path}.smooth_s"),
                format!("expected a positive number of seconds, found {s}"),
            ));
        }
    }
    Ok(())
}

/// Evaluates one condition's signal on a clip; `Err(joint name)` when a joint is missing.
pub fn condition_signal(
    clip: &Clip,
    motion: &Motion,
    floor_cm: &mut Option<f32>,
    c: &Condition,
) -> Result<Vec<f32>, String> {
    let find = |name: &str| clip.skeleton.find(name).ok_or_else(|| name.to_owned());
    let j = find(&c.joint)?;
    let other = match (&c.relative_to, &c.to) {
        (Some(n), _) | (None, Some(n)) => Some(find(n)?),
        _ => None,
    };
    let frames = motion.frames;
    let coord = |axis: usize| -> Vec<f32> {
        (0..frames)
            .map(|f| {
                let v = motion.at(f, j)[axis];
                other.map_or(v, |o| v - motion.at(f, o)[axis])
            })
            .collect()
    };
    Ok(match c.signal {
        SignalKind::X => coord(0),
        SignalKind::Y => coord(1),
        SignalKind::Z => coord(2),
        SignalKind::Height => {
            if other.is_some() {
                coord(1)
            } else {
                let floor = *floor_cm.get_or_insert_with(|| {
                    let lowest: Vec<f32> = (0..frames)
                        .map(|f| {
                            (0..motion.joints)
                                .map(|k| motion.at(f, k).y)
                                .fold(f32::INFINITY, f32::min)
                        })
                        .collect();
                    percentile(&lowest, 0.05).unwrap_or(0.0)
                });
                coord(1).into_iter().map(|y| y - floor).collect()
            }
        }
        SignalKind::Distance => {
            let o = other.unwrap_or(j);
            (0..frames)
                .map(|f| motion.at(f, j).distance(motion.at(f, o)))
                .collect()
        }
        SignalKind::Speed => {
            let mut track = Vec::new();
            motion.track(j, &mut track);
            let half = frames_for(c.smooth_s.unwrap_or(0.1) / 2.0, motion.fps, 1);
            let mut out = Vec::new();
            windowed_speed(&track, motion.fps, half, false, &mut out);
            out
        }
        SignalKind::Angle => {
            let rest = clip.skeleton.rest[j].rotation.inverse();
            (0..frames)
                .map(|f| {
                    let q = rest * clip.rotations[f * clip.joint_count() + j];
                    (2.0 * q.w.abs().min(1.0).acos()).to_degrees()
                })
                .collect()
        }
    })
}

/// The result of one rule on one clip: its states and its plot signals.
pub fn evaluate_rule(
    clip: &Clip,
    motion: &Motion,
    floor_cm: &mut Option<f32>,
    rule: &Rule,
) -> Result<(Vec<bool>, Vec<Signal>), String> {
    let mut all = vec![true; motion.frames];
    let mut signals = Vec::with_capacity(rule.when.len());
    let mut states = Vec::new();
    for c in &rule.when {
        let values = condition_signal(clip, motion, floor_cm, c)?;
        let (side, enter, leave) = c.threshold();
        hysteresis(&values, side, enter, leave, &mut states);
        for (a, s) in all.iter_mut().zip(&states) {
            *a &= *s;
        }
        let of = match (&c.relative_to, &c.to) {
            (Some(o), _) => format!(" - {o} {}", c.signal.name()),
            (None, Some(o)) => format!(" to {o}"),
            _ => String::new(),
        };
        signals.push(Signal {
            name: format!("{}: {} {}{of}", rule.tag, c.joint, c.signal.name()),
            tags: vec![rule.tag.clone()],
            unit: c.signal.unit().to_owned(),
            values,
            thresholds: vec![Threshold {
                label: if side == Side::Above {
                    "on above"
                } else {
                    "on below"
                }
                .to_owned(),
                enter,
                leave,
            }],
        });
    }
    fill_gaps(&mut all, frames_for(rule.min_gap_s, motion.fps, 0));
    drop_short(&mut all, frames_for(rule.min_duration_s, motion.fps, 1));
    Ok((all, signals))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"version": 1, "rules": [{"tag": "HandsUp", "when": [
        {"signal": "y", "joint": "LeftHand", "relative_to": "Head", "above": 5, "leave": 0},
        {"signal": "distance", "joint": "LeftHand", "to": "RightHand", "below": 30}
    ], "min_duration_s": 0.2}]}"#;

    #[test]
    fn a_good_rule_file_parses_and_round_trips() {
        let set = parse_rules(GOOD).unwrap();
        assert_eq!(set.rules.len(), 1);
        let r = &set.rules[0];
        assert_eq!(r.tag, "HandsUp");
        assert_eq!(r.when[0].threshold(), (Side::Above, 5.0, 0.0));
        assert_eq!(r.when[1].threshold(), (Side::Below, 30.0, 30.0));
        assert_eq!(r.min_gap_s, 0.0);
        let text = serde_json::to_string(&set).unwrap();
        assert_eq!(parse_rules(&text).unwrap(), set);
    }

    #[test]
    fn errors_name_the_json_path() {
        let cases = [
            ("[1]", "$"),
            (r#"{"rulez": []}"#, "rules"),
            (r#"{"rules": [], "x": 1}"#, "x"),
            (r#"{"version": 9, "rules": []}"#, "version"),
            (r#"{"rules": [{"tag": "A"}]}"#, "rules[0].when"),
            (
                r#"{"rules": [{"tag": "A", "when": [{"signal": "heigth", "joint": "H", "above": 1}]}]}"#,
                "rules[0].when[0]",
            ),
            (
                r#"{"rules": [{"tag": "A", "when": [{"signal": "y", "joint": "H", "above": 1, "leave": 2}]}]}"#,
                "rules[0].when[0].leave",
            ),
            (
                r#"{"rules": [{"tag": "A", "when": [{"signal": "y", "joint": "H", "above": 1}]},
                   {"tag": "B", "when": [{"signal": "distance", "joint": "H", "below": 1}]}]}"#,
                "rules[1].when[0].to",
            ),
            (
                r#"{"rules": [{"tag": "A", "when": [{"signal": "y", "joint": "H", "above": 1, "below": 2}]}]}"#,
                "rules[0].when[0]",
            ),
            (
                r#"{"rules": [{"tag": "A", "when": [{"signal": "y", "joint": "H", "above": 1}]},
                   {"tag": "A", "when": [{"signal": "y", "joint": "H", "above": 1}]}]}"#,
                "rules[1].tag",
            ),
            (
                r#"{"rules": [{"tag": "A", "min_duration_s": -1, "when": [{"signal": "y", "joint": "H", "above": 1}]}]}"#,
                "rules[0].min_duration_s",
            ),
            ("{\"rules\": [\n{\"tag\": }]}", "line 2 column 9"),
        ];
        for (text, path) in cases {
            let e = parse_rules(text).unwrap_err();
            assert_eq!(e.path, path, "{text}: {e}");
        }
    }
}
