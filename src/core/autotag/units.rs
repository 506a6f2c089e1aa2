//! Guessing a clip's length unit from the size of its skeleton.
//!
//! The **standing height** is the median, over up to 64 frames spread over the clip, of the vertical
//! extent of the skeleton (joints and BVH End Sites, so the top of the head counts) in file units.
//! The unit chosen is the candidate ([`UNIT_CANDIDATES`]: cm, m, mm, in and the CMU unit of 5.644 cm)
//! that puts that height closest, on a log scale, to the middle of the human range of 150-200 cm
//! (173 cm, their geometric mean). Units 2.2 times apart or more are told apart reliably; a crouching
//! or lying take can fool it, so callers report the guess.

use crate::core::anim::{Clip, Transform, local_to_model};

/// Centimetres per unit of the CMU BVH conversions (about 1/0.45 inch).
pub const CMU_CM_PER_UNIT: f32 = 5.644;

/// The candidate units: name and centimetres per unit.
pub const UNIT_CANDIDATES: [(&str, f32); 5] = [
    ("cm", 1.0),
    ("m", 100.0),
    ("mm", 0.1),
    ("in", 2.54),
    ("cmu", CMU_CM_PER_UNIT),
];

/// A unit guess.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnitGuess {
    /// Name of the chosen unit (`cm`, `m`, `mm`, `in`, `cmu`).
    pub name: &'static str,
    /// Centimetres per file unit.
    pub unit_cm: f32,
    /// Standing height in file units.
    pub height_units: f32,
}

impl UnitGuess {
    /// Standing height in centimetres with the chosen unit.
    pub fn height_cm(&self) -> f32 {
        self.height_units * self.unit_cm
    }
}

/// Standing height of a clip's skeleton in file units (see the module documentation); `None` for
/// a clip without joints or with no vertical extent.
pub fn standing_height_units(clip: &Clip) -> Option<f32> {
    let n = clip.joint_count();
    if n == 0 || clip.validate().is_err() {
        return None;
    }
    let mut local = vec![Transform::IDENTITY; n];
    let mut model = vec![Transform::IDENTITY; n];
    let mut heights = Vec::new();
    let frames = clip.frame_count;
    let samples = frames.clamp(1, 64);
    for k in 0..samples {
        let f = if frames == 0 {
            0
        } else {
            k * (frames - 1) / (samples - 1).max(1)
        };
        if frames == 0 {
            local.copy_from_slice(&clip.skeleton.rest);
        } else {
            clip.copy_pose(f, &mut local);
        }
        local_to_model(&clip.skeleton, &local, &mut model).ok()?;
        let ys = model.iter().map(|m| m.translation.y).chain(
            clip.skeleton
                .end_sites
                .iter()
                .map(|e| model[e.parent].transform_point(e.offset).y),
        );
        let (lo, hi) = ys.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), y| {
            (lo.min(y), hi.max(y))
        });
        heights.push(hi - lo);
    }
    let h = super::signal::percentile(&heights, 0.5)?;
    (h > 0.0 && h.is_finite()).then_some(h)
}

/// Picks the unit that makes the skeleton's standing height human; `None` when the height cannot
/// be measured.
pub fn guess_unit(clip: &Clip) -> Option<UnitGuess> {
    let height_units = standing_height_units(clip)?;
    let target = (150.0f32 * 200.0).sqrt();
    UNIT_CANDIDATES
        .iter()
        .map(|&(name, unit_cm)| {
            let miss = (height_units * unit_cm / target).ln().abs();
            (miss, name, unit_cm)
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name, unit_cm)| UnitGuess {
            name,
            unit_cm,
            height_units,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::demo::{demo_scripts, generate_take};

    #[test]
    fn the_demo_skeleton_is_found_in_each_unit() {
        let (clip, _) = generate_take(&demo_scripts()[0]);
        for (name, unit_cm) in UNIT_CANDIDATES {
            // Rescale the clip as if it had been written in `name`.
            let mut c = clip.clone();
            for t in &mut c.translations {
                *t /= unit_cm;
            }
            for r in &mut c.skeleton.rest {
                r.translation /= unit_cm;
            }
            for e in &mut c.skeleton.end_sites {
                e.offset /= unit_cm;
            }
            let g = guess_unit(&c).unwrap();
            assert_eq!(g.name, name, "height {} units", g.height_units);
            assert!((150.0..200.0).contains(&g.height_cm()), "{g:?}");
        }
    }
}
