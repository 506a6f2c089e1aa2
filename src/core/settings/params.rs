//! The parameters of the built-in generators, with their documented defaults and units.

use serde::Serialize;

/// Parameters of the foot-contact generator. Heights in centimetres above the foot's ground level,
/// speeds in centimetres per second, durations in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContactParams {
    /// Quantile (0..1) of each foot joint's height over the clip taken as its ground level. 0.05.
    pub ground_percentile: f32,
    /// A foot enters contact when its lowest joint is less than this above its ground level. 4 cm.
    pub enter_height_cm: f32,
    /// ... and leaves contact when it rises more than this above it (>= enter). 7 cm.
    pub leave_height_cm: f32,
    /// A foot enters contact when that joint moves slower than this. 20 cm/s.
    pub enter_speed_cm_s: f32,
    /// ... and leaves contact when it moves faster than this (>= enter). 30 cm/s.
    pub leave_speed_cm_s: f32,
    /// Window over which foot speeds are measured, on each side of the frame (see
    /// [`still_speed`](crate::core::autotag::signal::still_speed)); at least one frame. 0.03 s.
    pub speed_window_s: f32,
    /// Contacts shorter than this are dropped. 0.05 s.
    pub min_contact_s: f32,
    /// Gaps shorter than this between two contacts of one foot are closed. 0.05 s.
    pub min_gap_s: f32,
    /// Exact joint names overriding the search by convention (`None`: search).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_ankle: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_toe: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub right_ankle: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub right_toe: Option<String>,
}

impl Default for ContactParams {
    fn default() -> Self {
        Self {
            ground_percentile: 0.05,
            enter_height_cm: 4.0,
            leave_height_cm: 7.0,
            enter_speed_cm_s: 20.0,
            leave_speed_cm_s: 30.0,
            speed_window_s: 0.03,
            min_contact_s: 0.05,
            min_gap_s: 0.05,
            left_ankle: None,
            left_toe: None,
            right_ankle: None,
            right_toe: None,
        }
    }
}

/// Parameters of the airborne generator (`contact:Airborne`: neither foot planted, both off the
/// ground).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AirborneParams {
    /// Both feet must be more than this above their ground levels. 3 cm.
    pub min_height_cm: f32,
    /// Shorter flights are dropped. 0.05 s.
    pub min_duration_s: f32,
}

impl Default for AirborneParams {
    fn default() -> Self {
        Self {
            min_height_cm: 3.0,
            min_duration_s: 0.05,
        }
    }
}

/// Parameters of the locomotion-state generator. Speeds in metres per second, durations in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocomotionParams {
    /// Below this the character is idle. 0.3 m/s.
    pub idle_max_m_s: f32,
    /// Above this it runs; between the two it walks. 2.2 m/s.
    pub walk_max_m_s: f32,
    /// How far past a boundary the speed must go to change state. 0.05 m/s.
    pub hysteresis_m_s: f32,
    /// Window over which the root's speed is averaged. 0.3 s.
    pub smooth_s: f32,
    /// Segments shorter than this are merged into a neighbour. 0.3 s.
    pub min_segment_s: f32,
    /// Exact name of the travelling root, overriding the automatic choice (also used for turns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_joint: Option<String>,
}

impl Default for LocomotionParams {
    fn default() -> Self {
        Self {
            idle_max_m_s: 0.3,
            walk_max_m_s: 2.2,
            hysteresis_m_s: 0.05,
            smooth_s: 0.3,
            min_segment_s: 0.3,
            root_joint: None,
        }
    }
}

/// Parameters of the turn generator. Rates in degrees per second, durations in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnParams {
    /// A turn starts when the yaw rate exceeds this (either direction). 20 deg/s.
    pub enter_deg_s: f32,
    /// ... and ends when it falls below this (<= enter). 12 deg/s.
    pub leave_deg_s: f32,
    /// Window over which the yaw rate is measured. 1 s.
    pub window_s: f32,
    /// Shorter turns are dropped. 0.3 s.
    pub min_duration_s: f32,
}

impl Default for TurnParams {
    fn default() -> Self {
        Self {
            enter_deg_s: 20.0,
            leave_deg_s: 12.0,
            window_s: 1.0,
            min_duration_s: 0.3,
        }
    }
}
