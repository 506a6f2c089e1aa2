//! Automatic tagging: tags proposed from the motion itself, with the per-frame signals and the
//! thresholds that produced them (for plotting and adjusting).
//!
//! Generators (see `docs/AUTOTAG.md` for the method, parameters, defaults, units and measured
//! quality):
//!
//! - foot contacts `contact:LeftFoot`, `contact:RightFoot` and `contact:Airborne` ([`contacts`]);
//! - locomotion states `locomotion:Idle`, `Walk`, `Run` and turns `locomotion:TurnLeft`,
//!   `TurnRight` ([`locomotion`]);
//! - custom rules from a JSON rule file ([`rules`]).
//!
//! Everything is measured in centimetres: model-space joint positions come from the animation
//! core's forward kinematics ([`motion::Motion`]) scaled by the clip's `unit_cm`.

pub mod contacts;
pub mod locomotion;
pub mod motion;
pub mod rules;
pub mod signal;
pub mod units;

use serde::{Deserialize, Serialize};

use crate::core::anim::{Clip, RootMotionTrack};
use crate::core::tags::Range;

pub use contacts::{AirborneParams, ContactParams};
pub use locomotion::{LocomotionParams, TurnParams};
pub use motion::Motion;
pub use rules::{Condition, Rule, RuleError, RuleSet, SignalKind, parse_rules};
pub use units::{CMU_CM_PER_UNIT, UnitGuess, guess_unit};

/// Tag names of the built-in generators.
pub const CONTACT_LEFT: &str = "contact:LeftFoot";
pub const CONTACT_RIGHT: &str = "contact:RightFoot";
pub const AIRBORNE: &str = "contact:Airborne";
pub const IDLE: &str = "locomotion:Idle";
pub const WALK: &str = "locomotion:Walk";
pub const RUN: &str = "locomotion:Run";
pub const TURN_LEFT: &str = "locomotion:TurnLeft";
pub const TURN_RIGHT: &str = "locomotion:TurnRight";

/// Every built-in tag, in output order.
pub const BUILTIN_TAGS: [&str; 8] = [
    CONTACT_LEFT,
    CONTACT_RIGHT,
    AIRBORNE,
    IDLE,
    WALK,
    RUN,
    TURN_LEFT,
    TURN_RIGHT,
];

/// The parameters of every built-in generator (serde: missing fields take their defaults).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AutotagParams {
    pub contacts: ContactParams,
    pub airborne: AirborneParams,
    pub locomotion: LocomotionParams,
    pub turning: TurnParams,
}

/// A threshold drawn over a signal: the state switches on when the signal crosses `enter` and off
/// when it crosses back over `leave`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Threshold {
    pub label: String,
    pub enter: f32,
    pub leave: f32,
}

/// A per-frame signal a generator used, ready for plotting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Signal {
    /// What it measures (`left foot height`, `root horizontal speed`, `HandsUp: LeftHand y - Head y`).
    pub name: String,
    /// The tags it drives.
    pub tags: Vec<String>,
    /// Unit of the values (`cm`, `cm/s`, `m/s`, `deg/s`, `deg`).
    pub unit: String,
    /// One value per frame.
    pub values: Vec<f32>,
    pub thresholds: Vec<Threshold>,
}

/// The proposed ranges of one tag on one clip (canonical: sorted, disjoint, non-adjacent).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proposal {
    pub tag: String,
    pub ranges: Vec<Range>,
}

/// Everything the generators produced for one clip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Autotagged {
    /// One entry per requested tag, in [`BUILTIN_TAGS`] order then rule order.
    pub proposals: Vec<Proposal>,
    pub signals: Vec<Signal>,
    /// Things the user should know (a rule skipped because a joint is missing, ...).
    pub warnings: Vec<String>,
}

impl Autotagged {
    /// The ranges proposed for `tag`, if it was generated.
    pub fn ranges(&self, tag: &str) -> Option<&[Range]> {
        self.proposals
            .iter()
            .find(|p| p.tag == tag)
            .map(|p| p.ranges.as_slice())
    }
}

/// Why a clip could not be tagged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AutotagError {
    #[error(
        "clip `{clip}`: no {side} foot joint found (looked for LeftFoot/LeftAnkle/Foot_L/mixamorig:LeftFoot and similar names); name the foot joints in the contact parameters"
    )]
    NoFootJoints { clip: String, side: &'static str },
    #[error("clip `{clip}`: no joint named `{joint}` ({what})")]
    NoSuchJoint {
        clip: String,
        joint: String,
        what: String,
    },
    #[error("clip `{clip}`: {message}")]
    InvalidClip { clip: String, message: String },
}

/// Which tags to produce: `None` for every built-in tag and every rule.
pub type TagFilter<'a> = Option<&'a [String]>;

fn wanted(only: TagFilter<'_>, tag: &str) -> bool {
    only.is_none_or(|o| o.iter().any(|t| t == tag))
}

/// Runs the generators on one clip. Only the generators needed for the tags in `only` run (so a
/// clip without feet can still get locomotion tags); rules whose joints a clip lacks are skipped with
/// a warning.
pub fn autotag(
    clip: &Clip,
    params: &AutotagParams,
    rules: &[Rule],
    only: TagFilter<'_>,
) -> Result<Autotagged, AutotagError> {
    let motion = Motion::new(clip)?;
    let fps = clip.fps;
    let mut out = Autotagged {
        proposals: Vec::new(),
        signals: Vec::new(),
        warnings: Vec::new(),
    };
    let push = |out: &mut Autotagged, tag: &str, states: &[bool]| {
        if wanted(only, tag) {
            out.proposals.push(Proposal {
                tag: tag.to_owned(),
                ranges: signal::ranges_of(states),
            });
        }
    };

    // Contacts and airborne.
    if [CONTACT_LEFT, CONTACT_RIGHT, AIRBORNE]
        .iter()
        .any(|t| wanted(only, t))
    {
        let cp = &params.contacts;
        let feet = contacts::find_feet(&clip.name, &clip.skeleton, cp)?;
        let sides = feet.map(|foot| {
            let s = contacts::foot_signals(&motion, foot, cp);
            let states = contacts::contact_states(&s, fps, cp);
            (s, states)
        });
        push(&mut out, CONTACT_LEFT, &sides[0].1);
        push(&mut out, CONTACT_RIGHT, &sides[1].1);
        let air = contacts::airborne_states(&sides, fps, &params.airborne);
        push(&mut out, AIRBORNE, &air);
        for (k, (side, tag)) in [("left", CONTACT_LEFT), ("right", CONTACT_RIGHT)]
            .into_iter()
            .enumerate()
        {
            let mut tags = vec![tag.to_owned()];
            if wanted(only, AIRBORNE) {
                tags.push(AIRBORNE.to_owned());
            }
            for mut s in contacts::foot_plot_signals(side, tag, &sides[k].0, cp) {
                s.tags = tags.clone();
                out.signals.push(s);
            }
        }
    }

    // Locomotion and turns.
    let gait_wanted = [IDLE, WALK, RUN].iter().any(|t| wanted(only, t));
    let turn_wanted = [TURN_LEFT, TURN_RIGHT].iter().any(|t| wanted(only, t));
    if gait_wanted || turn_wanted {
        let lp = &params.locomotion;
        let root = locomotion::find_travelling_root(clip, lp.root_joint.as_deref())?;
        let track = RootMotionTrack::new(clip, root).map_err(|e| AutotagError::InvalidClip {
            clip: clip.name.clone(),
            message: e.to_string(),
        })?;
        if gait_wanted {
            let speed = locomotion::root_speed_m_s(&track, clip.unit_cm, lp.smooth_s);
            let gaits = locomotion::gait_states(&speed, fps, lp);
            let tags: Vec<String> = [IDLE, WALK, RUN]
                .iter()
                .filter(|t| wanted(only, t))
                .map(|t| (*t).to_owned())
                .collect();
            for (g, tag) in [
                (locomotion::Gait::Idle, IDLE),
                (locomotion::Gait::Walk, WALK),
                (locomotion::Gait::Run, RUN),
            ] {
                let states: Vec<bool> = gaits.iter().map(|&x| x == g).collect();
                push(&mut out, tag, &states);
            }
            out.signals.push(locomotion::speed_signal(speed, lp, tags));
        }
        if turn_wanted {
            let tp = &params.turning;
            let rate = locomotion::yaw_rate_deg_s(&track, tp.window_s);
            let [left, right] = locomotion::turn_states(&rate, fps, tp);
            push(&mut out, TURN_LEFT, &left);
            push(&mut out, TURN_RIGHT, &right);
            let tags: Vec<String> = [TURN_LEFT, TURN_RIGHT]
                .iter()
                .filter(|t| wanted(only, t))
                .map(|t| (*t).to_owned())
                .collect();
            out.signals.push(locomotion::yaw_signal(rate, tp, tags));
        }
    }

    // Custom rules.
    let mut floor = None;
    for rule in rules.iter().filter(|r| wanted(only, &r.tag)) {
        match rules::evaluate_rule(clip, &motion, &mut floor, rule) {
            Ok((states, signals)) => {
                push(&mut out, &rule.tag, &states);
                out.signals.extend(signals);
            }
            Err(joint) => out.warnings.push(format!(
                "clip `{}`: rule `{}` skipped: no joint named `{joint}`",
                clip.name, rule.tag
            )),
        }
    }
    Ok(out)
}

/// Every tag name [`autotag`] can produce with these rules (for validating a tag selection).
pub fn known_tags(rules: &[Rule]) -> Vec<String> {
    BUILTIN_TAGS
        .iter()
        .map(|t| (*t).to_owned())
        .chain(rules.iter().map(|r| r.tag.clone()))
        .collect()
}
