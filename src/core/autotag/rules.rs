//! The evaluation of custom rules (the rule format itself is `core::settings::rules`).
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

use glam::Vec3;

use crate::core::anim::Skeleton;

pub(crate) use crate::core::settings::rules::SignalKey;
pub use crate::core::settings::rules::{
    AutotagSettings, Condition, DEFAULT_MIN_DURATION_S, DEFAULT_SPEED_SMOOTH_S, Rule,
    SETTINGS_VERSION, SignalKind, parse_settings, parse_settings_at, read_settings,
};

use super::motion::Motion;
use super::signal::{drop_short, fill_gaps, frames_for, hysteresis, percentile, windowed_speed};

// ---------------------------------------------------------------------------------------------
// Evaluation.
// ---------------------------------------------------------------------------------------------

/// What rule signals are measured on.
pub struct RuleInput<'a> {
    pub skeleton: &'a Skeleton,
    pub motion: &'a Motion,
}

impl RuleInput<'_> {
    fn find(&self, name: &str) -> Result<usize, String> {
        self.skeleton
            .find(name)
            .ok_or_else(|| format!("no joint named `{name}`"))
    }

    /// The clip's floor for `height`: the 5th percentile over frames of the lowest joint's Y.
    fn floor_cm(&self) -> f32 {
        let m = self.motion;
        let lowest: Vec<f32> = (0..m.frames)
            .map(|f| {
                (0..m.joints)
                    .map(|k| m.at(f, k).y)
                    .fold(f32::INFINITY, f32::min)
            })
            .collect();
        percentile(&lowest, 0.05).unwrap_or(0.0)
    }

    fn has_offset(&self, j: usize) -> bool {
        self.skeleton.rest[j].translation.length_squared() > 1e-12
    }

    /// The joint above `j` at another place: its parent, skipping zero-length bones.
    fn parent_end(&self, j: usize) -> Option<usize> {
        let mut a = j;
        while let Some(p) = self.skeleton.parents[a] {
            if self.has_offset(a) {
                return Some(p);
            }
            a = p;
        }
        None
    }

    /// The joint below `j` at another place: its first child, skipping zero-length bones.
    fn child_end(&self, j: usize) -> Option<usize> {
        let parents = &self.skeleton.parents;
        let mut queue = vec![j];
        while let Some(a) = queue.pop() {
            let children: Vec<usize> = (a + 1..parents.len())
                .filter(|&k| parents[k] == Some(a))
                .collect();
            if let Some(&c) = children.iter().find(|&&c| self.has_offset(c)) {
                return Some(c);
            }
            queue.extend(children.iter().rev());
        }
        None
    }

    /// The signal of one condition, one value per frame; `Err` says why it cannot be measured on
    /// this clip (a missing joint).
    pub fn signal(&self, c: &Condition, floor: &mut Option<f32>) -> Result<Vec<f32>, String> {
        let m = self.motion;
        let j = self.find(&c.joint)?;
        let coord = |axis: usize, other: Option<usize>| -> Vec<f32> {
            (0..m.frames)
                .map(|f| {
                    let v = m.at(f, j)[axis];
                    other.map_or(v, |o| v - m.at(f, o)[axis])
                })
                .collect()
        };
        let relative = match &c.relative_to {
            Some(n) => Some(self.find(n)?),
            None => None,
        };
        Ok(match c.signal {
            SignalKind::X => coord(0, relative),
            SignalKind::Y => coord(1, relative),
            SignalKind::Z => coord(2, relative),
            SignalKind::Height => match relative {
                Some(o) => coord(1, Some(o)),
                None => {
                    let floor = *floor.get_or_insert_with(|| self.floor_cm());
                    coord(1, None).into_iter().map(|y| y - floor).collect()
                }
            },
            SignalKind::Distance => {
                let o = self.find(c.to.as_deref().unwrap_or(&c.joint))?;
                (0..m.frames)
                    .map(|f| m.at(f, j).distance(m.at(f, o)))
                    .collect()
            }
            SignalKind::Speed => {
                let mut track = Vec::new();
                m.track(j, &mut track);
                let half = frames_for(c.smooth_s.unwrap_or(DEFAULT_SPEED_SMOOTH_S) / 2.0, m.fps, 1);
                let mut out = Vec::new();
                windowed_speed(&track, m.fps, half, false, &mut out);
                out
            }
            SignalKind::Angle => {
                let name = &self.skeleton.names[j];
                let a = self
                    .parent_end(j)
                    .ok_or_else(|| format!("joint `{name}` has no parent to measure an angle"))?;
                let b = match &c.to {
                    Some(n) => self.find(n)?,
                    None => self.child_end(j).ok_or_else(|| {
                        format!("joint `{name}` has no child to measure an angle; name one in `to`")
                    })?,
                };
                (0..m.frames)
                    .map(|f| {
                        let p = m.at(f, j);
                        let (u, v) = (m.at(f, a) - p, m.at(f, b) - p);
                        bend_deg(u, v)
                    })
                    .collect()
            }
        })
    }
}

/// Bend between the incoming bone (towards `to_parent`) and the outgoing one (`to_child`):
/// 0 degrees when they are aligned (straight), 180 when folded back; 0 when a bone has no length.
fn bend_deg(to_parent: Vec3, to_child: Vec3) -> f32 {
    let d = to_parent.length() * to_child.length();
    if d <= 1e-9 {
        return 0.0;
    }
    let cos = (to_parent.dot(to_child) / d).clamp(-1.0, 1.0);
    180.0 - cos.acos().to_degrees()
}

/// Frames where a rule holds, from the signals of its conditions (in `when` order).
pub fn rule_states(rule: &Rule, signals: &[&[f32]], fps: f32, frames: usize) -> Vec<bool> {
    let mut all = vec![true; frames];
    let mut states = Vec::new();
    for (c, values) in rule.when.iter().zip(signals) {
        let (side, enter, leave) = c.threshold();
        hysteresis(values, side, enter, leave, &mut states);
        for (a, s) in all.iter_mut().zip(&states) {
            *a &= *s;
        }
    }
    fill_gaps(&mut all, frames_for(rule.min_gap_s, fps, 0));
    drop_short(&mut all, frames_for(rule.min_duration_s, fps, 1));
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::settings::{AutotagParams, Side};

    const GOOD: &str = r#"{"version": 1, "rules": [{"tag": "HandsUp", "when": [
        {"signal": "y", "joint": "LeftHand", "relative_to": "Head", "above": 5, "leave": 0},
        {"signal": "distance", "joint": "LeftHand", "to": "RightHand", "below": 30}
    ], "min_duration_s": 0.2}]}"#;

    #[test]
    fn a_good_rule_file_parses_and_round_trips() {
        let set = parse_settings(GOOD).unwrap();
        assert_eq!(set.params, AutotagParams::default());
        assert_eq!(set.rules.len(), 1);
        let r = &set.rules[0];
        assert_eq!(r.tag, "HandsUp");
        assert_eq!(r.when[0].threshold(), (Side::Above, 5.0, 0.0));
        assert_eq!(r.when[1].threshold(), (Side::Below, 30.0, 30.0));
        assert_eq!(r.min_gap_s, 0.0);
        let text = set.to_json(0);
        assert_eq!(parse_settings(&text).unwrap(), set, "{text}");
        // Parameters and overrides round-trip too, nested at any indent.
        let mut set = set;
        set.params.contacts.left_ankle = Some("L_Ankle".into());
        set.params.turning.enter_deg_s = 33.5;
        set.params.locomotion.root_joint = Some("pelvis".into());
        let text = set.to_json(2);
        assert_eq!(parse_settings(&text).unwrap(), set, "{text}");
        assert!(text.lines().all(|l| l.len() < 400), "{text}");
    }

    #[test]
    fn errors_name_the_json_path() {
        let cases = [
            ("[1]", "(top level)"),
            (r#"{"rules": []}"#, "(top level)"),
            (r#"{"version": 1, "rulez": []}"#, "rulez"),
            (r#"{"version": 9, "rules": []}"#, "version"),
            (r#"{"version": 1, "rules": {}}"#, "rules"),
            (r#"{"version": 1, "rules": [{"tag": "A"}]}"#, "rules[0]"),
            (
                r#"{"version": 1, "rules": [{"tag": "A", "when": [{"signal": "heigth", "joint": "H", "above": 1}]}]}"#,
                "rules[0].when[0].signal",
            ),
            (
                r#"{"version": 1, "rules": [{"tag": "A", "when": [{"signal": "y", "joint": "H", "above": 1, "leave": 2}]}]}"#,
                "rules[0].when[0].leave",
            ),
            (
                r#"{"version": 1, "rules": [{"tag": "A", "when": [{"signal": "y", "joint": "H", "above": 1}]},
                   {"tag": "B", "when": [{"signal": "distance", "joint": "H", "below": 1}]}]}"#,
                "rules[1].when[0].to",
            ),
            (
                r#"{"version": 1, "rules": [{"tag": "A", "when": [{"signal": "y", "joint": "H", "above": 1, "below": 2}]}]}"#,
                "rules[0].when[0]",
            ),
            (
                r#"{"version": 1, "rules": [{"tag": "A", "when": [{"signal": "y", "joint": "H", "above": 1}]},
                   {"tag": "A", "when": [{"signal": "y", "joint": "H", "above": 1}]}]}"#,
                "rules[1].tag",
            ),
            (
                r#"{"version": 1, "rules": [{"tag": "A", "min_duration_s": -1, "when": [{"signal": "y", "joint": "H", "above": 1}]}]}"#,
                "rules[0].min_duration_s",
            ),
            (
                r#"{"version": 1, "rules": [{"tag": "A", "min_duration": 1, "when": [{"signal": "y", "joint": "H", "above": 1}]}]}"#,
                "rules[0].min_duration",
            ),
            (
                r#"{"version": 1, "rules": [{"tag": "A", "when": [{"signal": "y", "joint": "H", "joint": "G", "above": 1}]}]}"#,
                "rules[0].when[0].joint",
            ),
            (
                r#"{"version": 1, "rules": [{"tag": "A", "when": [{"signal": "speed", "joint": "H", "above": "fast"}]}]}"#,
                "rules[0].when[0].above",
            ),
            (
                r#"{"version": 1, "rules": [{"tag": "contact:LeftFoot", "when": [{"signal": "y", "joint": "H", "above": 1}]}]}"#,
                "rules[0].tag",
            ),
            (
                r#"{"version": 1, "params": {"contacts": {"leave_height_cm": 1}}}"#,
                "params.contacts.leave_height_cm",
            ),
            (
                r#"{"version": 1, "params": {"contacts": {"enter_hieght_cm": 1}}}"#,
                "params.contacts.enter_hieght_cm",
            ),
            (
                r#"{"version": 1, "params": {"locomotion": {"walk_max_m_s": 0.2}}}"#,
                "params.locomotion.walk_max_m_s",
            ),
            (
                r#"{"version": 1, "params": {"turning": {"window_s": 0}}}"#,
                "params.turning.window_s",
            ),
            (r#"{"version": 1, "params": {"gait": {}}}"#, "params.gait"),
            (
                r#"{"version": 1, "params": {"contacts": {"left_ankle": 3}}}"#,
                "params.contacts.left_ankle",
            ),
            (
                "{\"version\": 1, \"rules\": [\n{\"tag\": }]}",
                "line 2, column 9",
            ),
        ];
        for (text, path) in cases {
            let e = parse_settings(text).unwrap_err();
            assert_eq!(e.path, path, "{text}: {e}");
        }
        // Nested in a project: the prefix starts every path.
        let e =
            parse_settings_at(r#"{"version": 1, "rules": [{"tag": "A"}]}"#, "autotag").unwrap_err();
        assert_eq!(e.path, "autotag.rules[0]");
        let e =
            parse_settings_at(r#"{"version": 1, "params": {"gait": 1}}"#, "autotag").unwrap_err();
        assert_eq!(e.path, "autotag.params.gait");
        // Unknown fields suggest the closest known one.
        let e = parse_settings(r#"{"version": 1, "params": {"contacts": {"enter_hieght_cm": 1}}}"#)
            .unwrap_err();
        assert!(e.message.contains("did you mean `enter_height_cm`"), "{e}");
    }

    #[test]
    fn the_bend_of_a_joint_is_zero_straight_and_grows_as_it_folds() {
        let up = Vec3::Y;
        assert!(bend_deg(up, -up).abs() < 1e-3);
        assert!((bend_deg(up, Vec3::X) - 90.0).abs() < 1e-3);
        assert!((bend_deg(up, up) - 180.0).abs() < 1e-3);
        assert_eq!(bend_deg(Vec3::ZERO, up), 0.0);
    }
}
