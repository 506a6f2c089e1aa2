//! The unit of each imported clip: fixed by the user, or guessed (`auto`).
//!
//! `auto` on a BVH file picks the unit that makes the skeleton's standing height human (see
//! [`crate::core::anim::units`]). A glTF file keeps its own unit, the metre the glTF specification
//! prescribes: its skeleton need not be a human's (the shared Fox is a quadruped). A glTF skeleton
//! whose standing height in metres is outside [`PLAUSIBLE_GLTF_HEIGHT_M`] keeps the metre too, but
//! is flagged for the user to check (the shared Fox stands 60 "metres" tall: it was authored in
//! centimetres). Every choice comes with a sentence saying what was chosen and why, for the import
//! report.

use std::fmt;
use std::str::FromStr;

use crate::core::anim::units::{
    PLAUSIBLE_HEIGHT_CM, UNIT_CANDIDATES, guess_unit_from_height, unit_name,
};
use crate::core::anim::{AnimFormat, ClipScan};

/// Standing heights, in metres, that a glTF skeleton in the unit of the specification may have
/// without a doubt (a mouse to a giant); outside them `auto` still takes the metre, and asks the
/// user to check the clip.
pub const PLAUSIBLE_GLTF_HEIGHT_M: (f32, f32) = (0.02, 20.0);

/// How the unit of imported clips is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum UnitSetting {
    /// Guess per clip (the default).
    #[default]
    Auto,
    /// Centimetres per file unit for every clip.
    Fixed(f32),
}

impl FromStr for UnitSetting {
    type Err = String;

    /// `auto`, a unit name (`cm`, `m`, `mm`, `in`, `cmu`) or centimetres per unit (`2.54`).
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("auto") {
            return Ok(UnitSetting::Auto);
        }
        if let Some((_, cm)) = UNIT_CANDIDATES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(t))
        {
            return Ok(UnitSetting::Fixed(*cm));
        }
        match t.parse::<f32>() {
            Ok(cm) if crate::core::limits::unit_cm_ok(f64::from(cm)) => Ok(UnitSetting::Fixed(cm)),
            Ok(cm) if cm.is_finite() && cm > 0.0 => {
                Err(crate::core::limits::unit_cm_message(format_args!("`{s}`")))
            }
            _ => Err(format!(
                "expected auto, cm, m, mm, in, cmu or centimetres per unit (a positive number), found `{s}`"
            )),
        }
    }
}

impl fmt::Display for UnitSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitSetting::Auto => f.write_str("auto"),
            UnitSetting::Fixed(cm) => f.write_str(&describe_unit(*cm)),
        }
    }
}

/// `cmu (5.644 cm)`, `m (100 cm)`, or `3 cm` for a unit without a name.
pub fn describe_unit(unit_cm: f32) -> String {
    match unit_name(unit_cm) {
        Some("cm") => "cm".to_owned(),
        Some(name) => format!("{name} ({unit_cm} cm)"),
        None => format!("{unit_cm} cm"),
    }
}

/// The unit chosen for one clip.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitChoice {
    /// Centimetres per file unit.
    pub unit_cm: f32,
    /// What was chosen and why (`auto: cmu (5.644 cm): standing height 30.6 units = 172.7 cm`).
    pub reason: String,
    /// False when `auto` could not measure a human height (the user should check the clip).
    pub confident: bool,
}

/// Chooses the unit of clip `clip` of a `format` file.
pub fn choose_unit(setting: UnitSetting, format: AnimFormat, clip: &ClipScan) -> UnitChoice {
    if let UnitSetting::Fixed(unit_cm) = setting {
        return UnitChoice {
            unit_cm,
            reason: format!("{} (as asked)", describe_unit(unit_cm)),
            confident: true,
        };
    }
    if format != AnimFormat::Bvh {
        let (lo, hi) = PLAUSIBLE_GLTF_HEIGHT_M;
        let doubt = clip.height_units.is_some_and(|h| !(lo..=hi).contains(&h));
        let height = clip
            .height_units
            .map(|h| format!("; standing height {h:.3} m"))
            .unwrap_or_default();
        let check = if doubt {
            format!(
                ", unusual for any character ({lo}-{hi} m): check this clip (a file authored in centimetres needs the unit cm)"
            )
        } else {
            String::new()
        };
        return UnitChoice {
            unit_cm: 100.0,
            reason: format!("auto: m (100 cm): glTF is in metres by specification{height}{check}"),
            confident: !doubt,
        };
    }
    match clip.height_units.and_then(guess_unit_from_height) {
        Some(g) => {
            let confident = g.is_plausible();
            let (lo, hi) = PLAUSIBLE_HEIGHT_CM;
            let doubt = if confident {
                String::new()
            } else {
                format!("; no unit makes it {lo}-{hi} cm tall, check this clip")
            };
            UnitChoice {
                unit_cm: g.unit_cm,
                reason: format!(
                    "auto: {}: standing height {:.1} units = {:.0} cm{doubt}",
                    describe_unit(g.unit_cm),
                    g.height_units,
                    g.height_cm()
                ),
                confident,
            }
        }
        None => UnitChoice {
            unit_cm: 1.0,
            reason: "auto: cm (the BVH default): the skeleton has no height to measure".to_owned(),
            confident: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clip(height: Option<f32>) -> ClipScan {
        ClipScan {
            name: "c".into(),
            joint_names: vec![],
            parents: vec![],
            frames: 1,
            fps: 30.0,
            unit_cm: 1.0,
            height_units: height,
        }
    }

    #[test]
    fn settings_parse() {
        assert_eq!("auto".parse(), Ok(UnitSetting::Auto));
        assert_eq!("CMU".parse(), Ok(UnitSetting::Fixed(5.644)));
        assert_eq!("m".parse(), Ok(UnitSetting::Fixed(100.0)));
        assert_eq!("in".parse(), Ok(UnitSetting::Fixed(2.54)));
        assert_eq!("2.5".parse(), Ok(UnitSetting::Fixed(2.5)));
        for bad in ["", "feet", "0", "-1", "nan", "inf"] {
            let e = bad.parse::<UnitSetting>().unwrap_err();
            assert!(e.contains("expected auto"), "{e}");
        }
        assert_eq!(UnitSetting::Fixed(5.644).to_string(), "cmu (5.644 cm)");
    }

    #[test]
    fn auto_says_what_it_chose() {
        let c = choose_unit(UnitSetting::Auto, AnimFormat::Bvh, &clip(Some(30.0)));
        assert_eq!(c.unit_cm, 5.644);
        assert!(
            c.confident && c.reason.contains("cmu") && c.reason.contains("169 cm"),
            "{}",
            c.reason
        );
        let c = choose_unit(UnitSetting::Auto, AnimFormat::Bvh, &clip(Some(1.7)));
        assert_eq!((c.unit_cm, c.confident), (100.0, true));
        // A skeleton 20 cm tall in its best unit: chosen, with a doubt.
        let c = choose_unit(
            UnitSetting::Auto,
            AnimFormat::Bvh,
            &clip(Some(20.0 / 5.644)),
        );
        assert!(!c.confident && c.reason.contains("check"), "{}", c.reason);
        let c = choose_unit(UnitSetting::Auto, AnimFormat::Bvh, &clip(None));
        assert_eq!((c.unit_cm, c.confident), (1.0, false));
        // glTF: the metre; a skeleton 120 m tall in it is flagged, one of 1.7 m is not, nor one
        // without a height to measure.
        let c = choose_unit(UnitSetting::Auto, AnimFormat::Glb, &clip(Some(120.0)));
        assert_eq!((c.unit_cm, c.confident), (100.0, false));
        assert!(
            c.reason.contains("120.000 m") && c.reason.contains("check this clip"),
            "{}",
            c.reason
        );
        let c = choose_unit(UnitSetting::Auto, AnimFormat::Gltf, &clip(Some(1.7)));
        assert_eq!((c.unit_cm, c.confident), (100.0, true));
        assert!(!c.reason.contains("check"), "{}", c.reason);
        let c = choose_unit(UnitSetting::Auto, AnimFormat::Glb, &clip(Some(0.005)));
        assert!(!c.confident);
        let c = choose_unit(UnitSetting::Auto, AnimFormat::Glb, &clip(None));
        assert_eq!((c.unit_cm, c.confident), (100.0, true));
        let c = choose_unit(
            UnitSetting::Fixed(2.54),
            AnimFormat::Glb,
            &clip(Some(120.0)),
        );
        assert_eq!(c.unit_cm, 2.54);
    }
}
