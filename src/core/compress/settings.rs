//! Compression settings and presets. Every technique is a setting so the app can compare them.

use serde::{Deserialize, Serialize};

/// Bit widths a range-reduced track may use in a segment, indexed by the 4-bit width code stored in
/// the `.tlc` file. 0 bits: the track is constant over the segment (its segment range midpoint);
/// 32 bits: the raw float32 value, no range reduction.
pub const WIDTHS: [u8; 16] = [0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 32];

/// Width code of a bit width in [`WIDTHS`], if it is one of them.
pub fn width_code(bits: u8) -> Option<u8> {
    WIDTHS.iter().position(|&w| w == bits).map(|c| c as u8)
}

/// How rotations are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RotationFormat {
    /// x, y, z, w: four range-reduced components.
    Full,
    /// x, y, z with the sign fixed so `w >= 0`; `w = sqrt(1 - x² - y² - z²)` on decode.
    #[default]
    DropW,
    /// Smallest three in 32 bits: 2-bit index of the largest component, 3 x 10 bits in
    /// `[-1/√2, 1/√2]`. No range reduction. Shakes on deep hierarchies.
    SmallestThree32,
    /// Smallest three in 48 bits: 2-bit index, 3 x 15 bits, 1 unused bit (ozz's layout).
    SmallestThree48,
}

impl RotationFormat {
    /// Code stored in the `.tlc` header.
    pub fn code(self) -> u8 {
        match self {
            Self::Full => 0,
            Self::DropW => 1,
            Self::SmallestThree32 => 2,
            Self::SmallestThree48 => 3,
        }
    }

    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => Self::Full,
            1 => Self::DropW,
            2 => Self::SmallestThree32,
            3 => Self::SmallestThree48,
            _ => return None,
        })
    }

    /// Range-reduced components per key, or `None` for the fixed-size smallest-three packings.
    pub fn ranged_components(self) -> Option<usize> {
        match self {
            Self::Full => Some(4),
            Self::DropW => Some(3),
            Self::SmallestThree32 | Self::SmallestThree48 => None,
        }
    }

    /// Bits per key of the fixed-size packings.
    pub fn packed_bits(self) -> Option<u32> {
        match self {
            Self::SmallestThree32 => Some(32),
            Self::SmallestThree48 => Some(48),
            _ => None,
        }
    }
}

/// How many bits each range-reduced track gets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum BitRate {
    /// Pick the width of every track in every segment to minimise size while every joint's error
    /// (see `docs/COMPRESSION.md`) stays at or under `error_cm` centimetres.
    Auto { error_cm: f32 },
    /// The same width everywhere; each must be one of [`WIDTHS`] (32 = raw float32).
    Fixed {
        rotation_bits: u8,
        translation_bits: u8,
        scale_bits: u8,
    },
}

impl Default for BitRate {
    fn default() -> Self {
        Self::Auto {
            error_cm: DEFAULT_ERROR_CM,
        }
    }
}

/// Default error budget of the automatic mode: 0.01 cm at 3 cm from each joint (ACL's default).
pub const DEFAULT_ERROR_CM: f32 = 0.01;
/// Default distance of the virtual vertices from each joint: 3 cm (ACL's shell distance).
pub const DEFAULT_SHELL_CM: f32 = 3.0;
/// Default segment length: 16 frames (as ACL).
pub const DEFAULT_SEGMENT_FRAMES: u16 = 16;

/// Every knob of the segmented codec. Missing JSON fields take their defaults; an unknown one
/// (a misspelt `frame_stp`) is an error naming it, not a setting silently left at its default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompressSettings {
    /// Rotation packing. Default: drop-W.
    pub rotation_format: RotationFormat,
    /// Bit widths: automatic under an error budget (default 0.01 cm) or fixed.
    pub bits: BitRate,
    /// Frames per segment (default 16). Each segment stores its own range and widths per track.
    /// 0 means one segment for the whole clip (per-clip range reduction only).
    pub segment_frames: u16,
    /// Store a per-segment range (8-bit min and extent per component, relative to the clip range)
    /// so the N bits cover only what the segment spans. Default on.
    pub segment_ranges: bool,
    /// Store tracks that never move once (float32). Default on.
    pub constant_tracks: bool,
    /// Omit tracks equal to the rest (bind) pose. Default on.
    pub rest_pose_elision: bool,
    /// Error a constant or rest-pose track may add, in cm at the shell distance. `None`: a quarter
    /// of the automatic budget, or 0.001 cm with fixed bit widths. Decided by the error metric over
    /// the track's joint and all its descendants, never by a per-value epsilon.
    pub elision_error_cm: Option<f32>,
    /// Keep one frame every `frame_step` frames (1 = all). Destructive: in-between frames are
    /// interpolated on decode.
    pub frame_step: u16,
    /// Distance of the virtual vertices from each joint, in cm (default 3).
    pub shell_cm: f32,
}

impl Default for CompressSettings {
    fn default() -> Self {
        Self {
            rotation_format: RotationFormat::DropW,
            bits: BitRate::default(),
            segment_frames: DEFAULT_SEGMENT_FRAMES,
            segment_ranges: true,
            constant_tracks: true,
            rest_pose_elision: true,
            elision_error_cm: None,
            frame_step: 1,
            shell_cm: DEFAULT_SHELL_CM,
        }
    }
}

impl CompressSettings {
    /// Automatic mode with this budget, other settings at their defaults.
    pub fn auto(error_cm: f32) -> Self {
        Self {
            bits: BitRate::Auto { error_cm },
            ..Self::default()
        }
    }

    /// Checks every field; the message names the field and what was expected.
    pub fn validate(&self) -> Result<(), String> {
        const MAX_SHELL_CM: f32 = 10_000.0;
        match self.bits {
            BitRate::Auto { error_cm } => {
                if !(error_cm.is_finite() && error_cm > 0.0) {
                    return Err(format!(
                        "bits.auto.error_cm must be a positive number of cm, found {error_cm}"
                    ));
                }
            }
            BitRate::Fixed {
                rotation_bits,
                translation_bits,
                scale_bits,
            } => {
                for (name, b) in [
                    ("rotation_bits", rotation_bits),
                    ("translation_bits", translation_bits),
                    ("scale_bits", scale_bits),
                ] {
                    if width_code(b).is_none() {
                        return Err(format!(
                            "bits.fixed.{name} must be one of {WIDTHS:?}, found {b}"
                        ));
                    }
                }
            }
        }
        if let Some(e) = self.elision_error_cm
            && !(e.is_finite() && e >= 0.0)
        {
            return Err(format!("elision_error_cm must be >= 0, found {e}"));
        }
        if self.frame_step == 0 {
            return Err("frame_step must be at least 1".into());
        }
        // A vertex 100 m from its joint is past any rig; past it, errors overflow float32 and the
        // budget means nothing ("error max inf cm").
        if !(self.shell_cm > 0.0 && self.shell_cm <= MAX_SHELL_CM) {
            return Err(format!(
                "shell_cm must be above 0 and at most {MAX_SHELL_CM} cm, found {}",
                self.shell_cm
            ));
        }
        Ok(())
    }

    /// The error a constant or rest-pose track may add, in cm.
    pub fn elision_budget_cm(&self) -> f32 {
        match (self.elision_error_cm, self.bits) {
            (Some(e), _) => e,
            (None, BitRate::Auto { error_cm }) => error_cm * 0.25,
            (None, BitRate::Fixed { .. }) => 0.001,
        }
    }
}

/// Named settings for the app and the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// Automatic widths under 0.01 cm, 16-frame segments, drop-W, elision on (ACL-like).
    Auto,
    /// Automatic widths under 0.01 cm on one whole-clip range (no segments).
    AutoClipRange,
    /// Drop-W and translations at 16 bits, per-clip range only.
    Fixed16,
    /// Drop-W and translations at 12 bits, 16-frame segment ranges.
    Fixed12Segments,
    /// Smallest three in 48 bits, translations 16 bits.
    SmallestThree48,
    /// Smallest three in 32 bits, translations 16 bits (shakes at the end of long chains).
    SmallestThree32,
    /// Full quaternions at 16 bits.
    FullQuat16,
    /// Raw float32 everywhere, no elision (the size of the input, for reference).
    Raw,
    /// Automatic widths under 0.01 cm after keeping every 2nd frame (destructive).
    Decimate2,
}

impl Preset {
    pub const ALL: [Preset; 9] = [
        Preset::Auto,
        Preset::AutoClipRange,
        Preset::Fixed16,
        Preset::Fixed12Segments,
        Preset::SmallestThree48,
        Preset::SmallestThree32,
        Preset::FullQuat16,
        Preset::Raw,
        Preset::Decimate2,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Auto => "auto",
            Preset::AutoClipRange => "auto-clip-range",
            Preset::Fixed16 => "fixed16",
            Preset::Fixed12Segments => "fixed12-segments",
            Preset::SmallestThree48 => "smallest3-48",
            Preset::SmallestThree32 => "smallest3-32",
            Preset::FullQuat16 => "full-quat16",
            Preset::Raw => "raw",
            Preset::Decimate2 => "decimate2",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    pub fn settings(self) -> CompressSettings {
        let fixed = |r: u8, t: u8| BitRate::Fixed {
            rotation_bits: r,
            translation_bits: t,
            scale_bits: t,
        };
        let d = CompressSettings::default();
        match self {
            Preset::Auto => d,
            Preset::AutoClipRange => CompressSettings {
                segment_frames: 0,
                segment_ranges: false,
                ..d
            },
            Preset::Fixed16 => CompressSettings {
                bits: fixed(16, 16),
                segment_frames: 0,
                segment_ranges: false,
                ..d
            },
            Preset::Fixed12Segments => CompressSettings {
                bits: fixed(12, 12),
                ..d
            },
            Preset::SmallestThree48 => CompressSettings {
                rotation_format: RotationFormat::SmallestThree48,
                bits: fixed(16, 16),
                ..d
            },
            Preset::SmallestThree32 => CompressSettings {
                rotation_format: RotationFormat::SmallestThree32,
                bits: fixed(16, 16),
                ..d
            },
            Preset::FullQuat16 => CompressSettings {
                rotation_format: RotationFormat::Full,
                bits: fixed(16, 16),
                ..d
            },
            Preset::Raw => CompressSettings {
                rotation_format: RotationFormat::Full,
                bits: fixed(32, 32),
                segment_frames: 0,
                segment_ranges: false,
                constant_tracks: false,
                rest_pose_elision: false,
                ..d
            },
            Preset::Decimate2 => CompressSettings { frame_step: 2, ..d },
        }
    }
}
