//! Automatic tagging: tags proposed from the motion itself, with the per-frame signals and the
//! thresholds that produced them (for plotting and adjusting).
//!
//! Generators (see `docs/AUTOTAG.md` for the method, every parameter with its default and unit,
//! and the measured quality):
//!
//! - foot contacts `contact:LeftFoot`, `contact:RightFoot` and `contact:Airborne` ([`contacts`]);
//! - locomotion states `locomotion:Idle`, `Walk`, `Run` and turns `locomotion:TurnLeft`,
//!   `TurnRight` ([`locomotion`]);
//! - custom rules from the settings ([`rules`]).
//!
//! Three steps, so an editor can re-threshold at once while a threshold is dragged:
//!
//! 1. [`Prepared::new`]: forward kinematics of every frame, once per clip (the expensive part);
//! 2. measuring: every generator's per-frame signals, computed from the prepared motion and cached
//!    in the `Prepared` until a parameter that changes a signal changes (a window, a joint name, a
//!    rule's signal);
//! 3. [`Prepared::autotag`]: thresholds, hysteresis and minimum durations on the cached signals,
//!    giving the proposed ranges and the signals with their thresholds. Changing a threshold only
//!    repeats this step: linear in the frames, no forward kinematics.
//!
//! [`apply::proposals_edit`] turns proposals into one undoable [`crate::core::doc::Edit`].
//!
//! Everything is measured in centimetres: model-space joint positions come from the animation
//! core's forward kinematics ([`Motion`]) scaled by the clip's `unit_cm`.

pub mod apply;
pub mod contacts;
pub mod locomotion;
pub mod motion;
pub mod rules;
pub mod signal;
pub mod units;

use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::core::anim::{Clip, Skeleton};
use crate::core::tags::Range;

pub use apply::{ApplyMode, ApplyPolicy, ApplyReport, Replaced, proposals_edit};
pub use contacts::{AirborneParams, ContactParams, FootJoints};
pub use locomotion::{LocomotionParams, TurnParams};
pub use motion::Motion;
pub use rules::{
    AutotagSettings, Condition, Rule, SETTINGS_VERSION, SignalKind, parse_settings,
    parse_settings_at,
};
pub use units::{CMU_CM_PER_UNIT, UnitGuess, guess_unit};
// The settings (parameters, rules, the built-in tag names) are project data, in `core::settings`.
pub use crate::core::settings::{
    AIRBORNE, AutotagParams, BUILTIN_TAGS, CONTACT_LEFT, CONTACT_RIGHT, IDLE, RUN, SettingsError,
    TURN_LEFT, TURN_RIGHT, WALK,
};

/// Which parameters a drawn threshold stands for (see [`AutotagSettings::set_threshold`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThresholdKey {
    /// `contacts.enter_height_cm` / `leave_height_cm`.
    ContactHeight,
    /// `contacts.enter_speed_cm_s` / `leave_speed_cm_s`.
    ContactSpeed,
    /// `airborne.min_height_cm` (enter and leave are equal).
    AirborneHeight,
    /// `locomotion.idle_max_m_s` ± `hysteresis_m_s` (enter above, leave below the boundary).
    IdleWalk,
    /// `locomotion.walk_max_m_s` ± `hysteresis_m_s`.
    WalkRun,
    /// `turning.enter_deg_s` / `leave_deg_s`.
    TurnLeft,
    /// Minus `turning.enter_deg_s` / `leave_deg_s` (the same parameters, mirrored).
    TurnRight,
    /// The thresholds of condition `condition` of rule `rule`.
    Rule { rule: usize, condition: usize },
}

/// A threshold drawn over a signal: the state switches on when the signal crosses `enter` and off
/// when it crosses back over `leave` (equal values: no hysteresis).
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub label: String,
    pub enter: f32,
    pub leave: f32,
    /// The parameters it stands for.
    pub key: ThresholdKey,
}

/// A per-frame signal a generator used, ready for plotting.
#[derive(Debug, Clone, PartialEq)]
pub struct Signal {
    /// What it measures (`left foot height`, `root horizontal speed`, `HandsUp: LeftHand y - Head y`).
    pub name: String,
    /// The tags it drives.
    pub tags: Vec<String>,
    /// Unit of the values (`cm`, `cm/s`, `m/s`, `deg/s`, `deg`).
    pub unit: &'static str,
    /// One value per frame (shared with the cache: cloning a signal copies no values).
    pub values: Arc<[f32]>,
    pub thresholds: Vec<Threshold>,
}

/// The proposed ranges of one tag on one clip (canonical: sorted, disjoint, non-adjacent).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proposal {
    pub tag: String,
    pub ranges: Vec<Range>,
}

/// Everything the generators produced for one clip.
#[derive(Debug, Clone, PartialEq)]
pub struct Autotagged {
    /// One entry per requested tag, in [`BUILTIN_TAGS`] order then rule order.
    pub proposals: Vec<Proposal>,
    /// The signals behind the requested tags, with their thresholds.
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

    /// The signal called `name`.
    pub fn signal(&self, name: &str) -> Option<&Signal> {
        self.signals.iter().find(|s| s.name == name)
    }
}

/// Why a clip could not be tagged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AutotagError {
    #[error(
        "clip `{clip}`: no {side} foot joint found (looked for names like {examples}); name it with the parameter `contacts.{side}_ankle`"
    )]
    NoFootJoints {
        clip: String,
        side: &'static str,
        examples: &'static str,
    },
    #[error("clip `{clip}`: no joint named `{joint}` (parameter `{what}`)")]
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

/// Every tag name the generators can produce with these rules (for checking a tag selection).
pub fn known_tags(rules: &[Rule]) -> Vec<String> {
    BUILTIN_TAGS
        .iter()
        .map(|t| (*t).to_owned())
        .chain(rules.iter().map(|r| r.tag.clone()))
        .collect()
}

impl AutotagSettings {
    /// Sets the parameters behind a drawn threshold (see [`ThresholdKey`]) and checks the result;
    /// on error nothing changes. For `IdleWalk` and `WalkRun` the boundary becomes the midpoint and
    /// the hysteresis half the distance (the hysteresis is shared by both boundaries); for
    /// `AirborneHeight` only `enter` is used; `TurnRight` takes the negated values.
    pub fn set_threshold(
        &mut self,
        key: ThresholdKey,
        enter: f32,
        leave: f32,
    ) -> Result<(), SettingsError> {
        let mut next = self.clone();
        let p = &mut next.params;
        match key {
            ThresholdKey::ContactHeight => {
                p.contacts.enter_height_cm = enter;
                p.contacts.leave_height_cm = leave;
            }
            ThresholdKey::ContactSpeed => {
                p.contacts.enter_speed_cm_s = enter;
                p.contacts.leave_speed_cm_s = leave;
            }
            ThresholdKey::AirborneHeight => p.airborne.min_height_cm = enter,
            ThresholdKey::IdleWalk => {
                p.locomotion.idle_max_m_s = (enter + leave) / 2.0;
                p.locomotion.hysteresis_m_s = (enter - leave).abs() / 2.0;
            }
            ThresholdKey::WalkRun => {
                p.locomotion.walk_max_m_s = (enter + leave) / 2.0;
                p.locomotion.hysteresis_m_s = (enter - leave).abs() / 2.0;
            }
            ThresholdKey::TurnLeft => {
                p.turning.enter_deg_s = enter;
                p.turning.leave_deg_s = leave;
            }
            ThresholdKey::TurnRight => {
                p.turning.enter_deg_s = -enter;
                p.turning.leave_deg_s = -leave;
            }
            ThresholdKey::Rule { rule, condition } => {
                let path = format!("rules[{rule}].when[{condition}]");
                let c = next
                    .rules
                    .get_mut(rule)
                    .and_then(|r| r.when.get_mut(condition))
                    .ok_or_else(|| {
                        crate::core::settings::json::err(path, "no such rule condition")
                    })?;
                c.set_threshold(enter, leave);
            }
        }
        next.validate()?;
        *self = next;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Prepared clip, measured signals, evaluation.
// ---------------------------------------------------------------------------------------------

/// A clip ready for tagging: its motion in model space (forward kinematics done once) and a cache of
/// the signals measured on it. Cheap to re-run with other thresholds ([`Prepared::autotag`]).
/// `Send + Sync`: clips can be prepared and tagged on worker threads.
#[derive(Debug)]
pub struct Prepared {
    name: String,
    skeleton: Skeleton,
    motion: Motion,
    auto_root: usize,
    cache: Mutex<Option<Arc<Measured>>>,
}

/// The signals of every generator on one clip, for one set of signal parameters (windows, joint
/// names, rule signals); thresholds are not part of it.
#[derive(Debug)]
pub struct Measured {
    key: MeasureKey,
    frames: usize,
    fps: f32,
    feet: Result<Feet, AutotagError>,
    root: Result<Root, AutotagError>,
    /// Per rule: the signal of each condition, or why the rule cannot be measured on this clip.
    rules: Vec<Result<Vec<Arc<[f32]>>, String>>,
}

#[derive(Debug)]
struct Feet {
    joints: [FootJoints; 2],
    height: [Arc<[f32]>; 2],
    speed: [Arc<[f32]>; 2],
    lower: Arc<[f32]>,
}

#[derive(Debug)]
struct Root {
    joint: usize,
    speed_m_s: Arc<[f32]>,
    yaw_deg_s: Arc<[f32]>,
}

/// The parameters that change signals (not thresholds); equal keys give equal signals.
#[derive(Debug, Clone, PartialEq)]
struct MeasureKey {
    contacts: (u32, u32, [Option<String>; 4]),
    locomotion: (u32, Option<String>),
    turning: u32,
    rules: Vec<Vec<rules::SignalKey>>,
}

impl MeasureKey {
    fn of(s: &AutotagSettings) -> Self {
        let c = &s.params.contacts;
        Self {
            contacts: (
                c.ground_percentile.to_bits(),
                c.speed_window_s.to_bits(),
                [
                    c.left_ankle.clone(),
                    c.left_toe.clone(),
                    c.right_ankle.clone(),
                    c.right_toe.clone(),
                ],
            ),
            locomotion: (
                s.params.locomotion.smooth_s.to_bits(),
                s.params.locomotion.root_joint.clone(),
            ),
            turning: s.params.turning.window_s.to_bits(),
            rules: s
                .rules
                .iter()
                .map(|r| r.when.iter().map(Condition::signal_key).collect())
                .collect(),
        }
    }
}

impl Prepared {
    /// Runs forward kinematics on every frame of `clip` (in centimetres through its `unit_cm`).
    /// Fails, naming the clip, on an invalid clip.
    pub fn new(clip: &Clip) -> Result<Self, AutotagError> {
        let motion = Motion::new(clip)?;
        Ok(Self {
            name: clip.name.clone(),
            skeleton: clip.skeleton.clone(),
            auto_root: locomotion::auto_travelling_root(clip),
            motion,
            cache: Mutex::new(None),
        })
    }

    /// The clip's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The model-space motion (cm).
    pub fn motion(&self) -> &Motion {
        &self.motion
    }

    /// The travelling root chosen automatically (see [`locomotion`]).
    pub fn auto_root(&self) -> usize {
        self.auto_root
    }

    /// The signals for these settings: from the cache when only thresholds changed since the last
    /// call, else measured again (no forward kinematics) and cached.
    pub fn measured(&self, settings: &AutotagSettings) -> Arc<Measured> {
        let key = MeasureKey::of(settings);
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = cache.as_ref()
            && m.key == key
        {
            return Arc::clone(m);
        }
        let m = Arc::new(self.measure(settings, key));
        *cache = Some(Arc::clone(&m));
        m
    }

    fn measure(&self, settings: &AutotagSettings, key: MeasureKey) -> Measured {
        let p = &settings.params;
        let m = &self.motion;
        let feet = contacts::find_feet(&self.name, &self.skeleton, &p.contacts).map(|joints| {
            let [l, r] = joints.map(|foot| contacts::foot_signals(m, foot, &p.contacts));
            let lower = contacts::lower_foot_height([&l, &r]);
            Feet {
                joints,
                height: [l.height_cm.into(), r.height_cm.into()],
                speed: [l.speed_cm_s.into(), r.speed_cm_s.into()],
                lower: lower.into(),
            }
        });
        let root = locomotion::travelling_root(
            &self.name,
            &self.skeleton.names,
            self.auto_root,
            p.locomotion.root_joint.as_deref(),
        )
        .map(|joint| Root {
            joint,
            speed_m_s: locomotion::root_speed_m_s(m, joint, p.locomotion.smooth_s).into(),
            yaw_deg_s: locomotion::yaw_rate_deg_s(m, joint, p.turning.window_s).into(),
        });
        let input = rules::RuleInput {
            skeleton: &self.skeleton,
            motion: m,
        };
        let mut floor = None;
        let rules = settings
            .rules
            .iter()
            .map(|r| {
                r.when
                    .iter()
                    .map(|c| input.signal(c, &mut floor).map(Arc::from))
                    .collect()
            })
            .collect();
        Measured {
            key,
            frames: m.frames,
            fps: m.fps,
            feet,
            root,
            rules,
        }
    }

    /// Proposes the tags in `only` (every tag when `None`) with these settings. Rules whose joints
    /// the clip lacks are skipped with a warning; a missing foot or root joint is an error only
    /// when a tag that needs it is requested.
    pub fn autotag(
        &self,
        settings: &AutotagSettings,
        only: TagFilter<'_>,
    ) -> Result<Autotagged, AutotagError> {
        self.measured(settings).evaluate(&self.name, settings, only)
    }
}

impl Measured {
    /// The foot joints used, `[left, right]`, or why there are none.
    pub fn feet(&self) -> Result<[FootJoints; 2], &AutotagError> {
        self.feet.as_ref().map(|f| f.joints)
    }

    /// The travelling root used, or why there is none.
    pub fn root_joint(&self) -> Result<usize, &AutotagError> {
        self.root.as_ref().map(|r| r.joint)
    }

    /// Thresholds on the measured signals. `settings` must measure like the ones these signals
    /// came from (the caller, [`Prepared::autotag`], makes sure of that).
    fn evaluate(
        &self,
        clip: &str,
        settings: &AutotagSettings,
        only: TagFilter<'_>,
    ) -> Result<Autotagged, AutotagError> {
        debug_assert_eq!(self.key, MeasureKey::of(settings));
        let p = &settings.params;
        let fps = self.fps;
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
        let tags_of = |list: &[&str]| -> Vec<String> {
            list.iter()
                .filter(|t| wanted(only, t))
                .map(|t| (*t).to_owned())
                .collect()
        };

        if [CONTACT_LEFT, CONTACT_RIGHT, AIRBORNE]
            .iter()
            .any(|t| wanted(only, t))
        {
            let feet = self.feet.as_ref().map_err(Clone::clone)?;
            let planted = [0, 1].map(|k| {
                contacts::contact_states(&feet.height[k], &feet.speed[k], fps, &p.contacts)
            });
            push(&mut out, CONTACT_LEFT, &planted[0]);
            push(&mut out, CONTACT_RIGHT, &planted[1]);
            let air = contacts::airborne_states(
                &feet.lower,
                [&planted[0], &planted[1]],
                fps,
                &p.airborne,
            );
            push(&mut out, AIRBORNE, &air);
            for (k, (side, tag)) in [("left", CONTACT_LEFT), ("right", CONTACT_RIGHT)]
                .into_iter()
                .enumerate()
            {
                if !wanted(only, tag) && !wanted(only, AIRBORNE) {
                    continue;
                }
                let tags = tags_of(&[tag, AIRBORNE]);
                let c = &p.contacts;
                out.signals.push(Signal {
                    name: format!("{side} foot height"),
                    tags: tags.clone(),
                    unit: "cm",
                    values: Arc::clone(&feet.height[k]),
                    thresholds: vec![Threshold {
                        label: "planted below".to_owned(),
                        enter: c.enter_height_cm,
                        leave: c.leave_height_cm,
                        key: ThresholdKey::ContactHeight,
                    }],
                });
                out.signals.push(Signal {
                    name: format!("{side} foot speed"),
                    tags,
                    unit: "cm/s",
                    values: Arc::clone(&feet.speed[k]),
                    thresholds: vec![Threshold {
                        label: "planted below".to_owned(),
                        enter: c.enter_speed_cm_s,
                        leave: c.leave_speed_cm_s,
                        key: ThresholdKey::ContactSpeed,
                    }],
                });
            }
            if wanted(only, AIRBORNE) {
                out.signals.push(Signal {
                    name: "lower foot height".to_owned(),
                    tags: vec![AIRBORNE.to_owned()],
                    unit: "cm",
                    values: Arc::clone(&feet.lower),
                    thresholds: vec![Threshold {
                        label: "airborne above".to_owned(),
                        enter: p.airborne.min_height_cm,
                        leave: p.airborne.min_height_cm,
                        key: ThresholdKey::AirborneHeight,
                    }],
                });
            }
        }

        let gait_tags = tags_of(&[IDLE, WALK, RUN]);
        let turn_tags = tags_of(&[TURN_LEFT, TURN_RIGHT]);
        if !gait_tags.is_empty() || !turn_tags.is_empty() {
            let root = self.root.as_ref().map_err(Clone::clone)?;
            if !gait_tags.is_empty() {
                let gaits = locomotion::gait_states(&root.speed_m_s, fps, &p.locomotion);
                for (g, tag) in [
                    (locomotion::Gait::Idle, IDLE),
                    (locomotion::Gait::Walk, WALK),
                    (locomotion::Gait::Run, RUN),
                ] {
                    let states: Vec<bool> = gaits.iter().map(|&x| x == g).collect();
                    push(&mut out, tag, &states);
                }
                out.signals.push(locomotion::speed_signal(
                    Arc::clone(&root.speed_m_s),
                    &p.locomotion,
                    gait_tags,
                ));
            }
            if !turn_tags.is_empty() {
                let [left, right] = locomotion::turn_states(&root.yaw_deg_s, fps, &p.turning);
                push(&mut out, TURN_LEFT, &left);
                push(&mut out, TURN_RIGHT, &right);
                out.signals.push(locomotion::yaw_signal(
                    Arc::clone(&root.yaw_deg_s),
                    &p.turning,
                    turn_tags,
                ));
            }
        }

        for (i, (rule, measured)) in settings.rules.iter().zip(&self.rules).enumerate() {
            if !wanted(only, &rule.tag) {
                continue;
            }
            let values = match measured {
                Ok(v) => v,
                Err(why) => {
                    out.warnings
                        .push(format!("clip `{clip}`: rule `{}` skipped: {why}", rule.tag));
                    continue;
                }
            };
            let slices: Vec<&[f32]> = values.iter().map(|v| &v[..]).collect();
            let states = rules::rule_states(rule, &slices, fps, self.frames);
            push(&mut out, &rule.tag, &states);
            for (k, (c, v)) in rule.when.iter().zip(values).enumerate() {
                let (side, enter, leave) = c.threshold();
                let of = match (&c.relative_to, &c.to) {
                    (Some(o), _) => format!(" - {o} {}", c.signal.name()),
                    (None, Some(o)) => format!(" to {o}"),
                    _ => String::new(),
                };
                out.signals.push(Signal {
                    name: format!("{}: {} {}{of}", rule.tag, c.joint, c.signal.name()),
                    tags: vec![rule.tag.clone()],
                    unit: c.signal.unit(),
                    values: Arc::clone(v),
                    thresholds: vec![Threshold {
                        label: match side {
                            signal::Side::Above => "on above",
                            signal::Side::Below => "on below",
                        }
                        .to_owned(),
                        enter,
                        leave,
                        key: ThresholdKey::Rule {
                            rule: i,
                            condition: k,
                        },
                    }],
                });
            }
        }
        Ok(out)
    }
}

/// Prepares `clip` and proposes the tags in `only` with `settings` (see [`Prepared`]; keep the
/// `Prepared` to re-run with other thresholds).
pub fn autotag(
    clip: &Clip,
    settings: &AutotagSettings,
    only: TagFilter<'_>,
) -> Result<Autotagged, AutotagError> {
    Prepared::new(clip)?.autotag(settings, only)
}

#[cfg(test)]
mod tests;
