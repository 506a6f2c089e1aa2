//! Project settings saved in the project file: the autotag generators' parameters and custom
//! rules (`core::autotag` runs them). Data, its JSON form and its checks only; depends on nothing
//! in the core but `core::names`, so the document (`core::tags`) and its edits (`core::doc`) can hold
//! it without depending on the generators.

pub(crate) mod json;
pub mod params;
pub mod rules;

use serde::Serialize;

pub use params::{AirborneParams, ContactParams, LocomotionParams, TurnParams};
pub use rules::{
    AutotagSettings, Condition, Rule, SETTINGS_VERSION, SignalKind, parse_settings,
    parse_settings_at, read_settings,
};

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

/// The parameters of every built-in generator (each group documents its fields, defaults and
/// units). Read from JSON by [`parse_settings`]; written by [`AutotagSettings::to_json`].
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct AutotagParams {
    pub contacts: ContactParams,
    pub airborne: AirborneParams,
    pub locomotion: LocomotionParams,
    pub turning: TurnParams,
}

/// A problem in autotag settings: the JSON path of the value (`rules[0].when[1].leave`, or
/// `line L column C` for a syntax error) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SettingsError {
    pub path: String,
    pub message: String,
}

/// Which side of a threshold a state is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// On while the value is below `enter`, off once it rises above `leave` (`leave >= enter`).
    Below,
    /// On while the value is above `enter`, off once it falls below `leave` (`leave <= enter`).
    Above,
}
