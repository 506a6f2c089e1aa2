//! Length units of animation files, and guessing a file's unit from the size of its skeleton.
//!
//! The **standing height** is the median, over up to [`HEIGHT_SAMPLES`] frames spread evenly over the
//! clip ([`height_sample_frames`]), of the vertical extent of the skeleton (joints and BVH End Sites,
//! so the top of the head counts) in file units. The unit chosen is the candidate
//! ([`UNIT_CANDIDATES`]: cm, m, mm, in and the CMU unit of 5.644 cm) that puts that height closest,
//! on a log scale, to the middle of the human range of 150-200 cm (173 cm, their geometric mean).
//! Units 2.2 times apart or more are told apart reliably; a crouching or lying take can fool it, so
//! callers report the guess.
//!
//! The measure needs only a few poses, so the fast library scan (`core::anim::scan`) computes it from
//! the same frames without parsing the whole clip, and gets the same height as [`guess_unit`] on the
//! fully imported clip.

use super::clip::Clip;
use super::fk::local_to_model;
use super::skeleton::{Skeleton, Transform};

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

/// The human standing heights the guess aims at, in centimetres.
pub const HUMAN_HEIGHT_CM: (f32, f32) = (150.0, 200.0);

/// The heights a guess is trusted in, in centimetres: wider than [`HUMAN_HEIGHT_CM`] because the
/// median pose of a take may crouch, dance or raise its arms (the shared Bandai dance measures
/// 139 cm). Outside it the skeleton is probably not a standing human, and the guess is flagged.
pub const PLAUSIBLE_HEIGHT_CM: (f32, f32) = (100.0, 250.0);

/// Most frames measured for the standing height.
pub const HEIGHT_SAMPLES: usize = 64;

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

    /// True when the height in the chosen unit is plausible for a person ([`PLAUSIBLE_HEIGHT_CM`]):
    /// the guess is then trusted; outside it, the skeleton is not a standing human (or crouches all
    /// along) and the user should check the unit.
    pub fn is_plausible(&self) -> bool {
        (PLAUSIBLE_HEIGHT_CM.0..=PLAUSIBLE_HEIGHT_CM.1).contains(&self.height_cm())
    }
}

/// The name of a known unit for `unit_cm` centimetres per unit (`cm`, `m`, `mm`, `in`, `cmu`), or
/// `None` for any other value.
pub fn unit_name(unit_cm: f32) -> Option<&'static str> {
    UNIT_CANDIDATES
        .iter()
        .find(|(_, cm)| (cm - unit_cm).abs() <= 1e-6 * cm)
        .map(|(name, _)| *name)
}

/// The frames measured for the standing height of a clip of `frames` frames: up to
/// [`HEIGHT_SAMPLES`], evenly spread from the first frame to the last (none for an empty clip).
pub fn height_sample_frames(frames: usize) -> impl Iterator<Item = usize> {
    let samples = frames.min(HEIGHT_SAMPLES);
    (0..samples).map(move |k| k * (frames - 1) / (samples - 1).max(1))
}

/// Vertical extent (max y - min y) of one pose: the model-space joint positions and End Sites.
/// `local` is the pose (one transform per joint); `model` is scratch of the same length. `None`
/// when the lengths do not match the skeleton or a parent comes after its child.
pub fn pose_height(
    skeleton: &Skeleton,
    local: &[Transform],
    model: &mut [Transform],
) -> Option<f32> {
    local_to_model(skeleton, local, model).ok()?;
    let ys = model.iter().map(|m| m.translation.y).chain(
        skeleton
            .end_sites
            .iter()
            .filter_map(|e| Some(model.get(e.parent)?.transform_point(e.offset).y)),
    );
    let (lo, hi) = ys.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), y| {
        (lo.min(y), hi.max(y))
    });
    Some(hi - lo)
}

/// The median of the finite values (the upper median for an even count), `None` when there is none.
pub fn median(values: &[f32]) -> Option<f32> {
    let mut v: Vec<f32> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    let k = v.len() / 2;
    let (_, x, _) = v.select_nth_unstable_by(k, f32::total_cmp);
    Some(*x)
}

/// The standing height from the heights of the sampled poses: their median, when positive.
pub fn standing_height_from_poses(pose_heights: &[f32]) -> Option<f32> {
    median(pose_heights).filter(|h| *h > 0.0 && h.is_finite())
}

/// Standing height of a clip's skeleton in file units (see the module documentation); `None` for
/// a clip without joints or with no vertical extent. A clip without frames is measured on its rest
/// pose.
pub fn standing_height_units(clip: &Clip) -> Option<f32> {
    let n = clip.joint_count();
    if n == 0 || clip.validate().is_err() {
        return None;
    }
    let mut local = vec![Transform::IDENTITY; n];
    let mut model = vec![Transform::IDENTITY; n];
    let mut heights = Vec::with_capacity(HEIGHT_SAMPLES);
    if clip.frame_count == 0 {
        heights.push(pose_height(
            &clip.skeleton,
            &clip.skeleton.rest,
            &mut model,
        )?);
    }
    for f in height_sample_frames(clip.frame_count) {
        if !clip.copy_pose(f, &mut local) {
            return None;
        }
        heights.push(pose_height(&clip.skeleton, &local, &mut model)?);
    }
    standing_height_from_poses(&heights)
}

/// Picks the candidate unit that makes a standing height of `height_units` file units human;
/// `None` for a height that is not positive and finite.
pub fn guess_unit_from_height(height_units: f32) -> Option<UnitGuess> {
    if !(height_units > 0.0 && height_units.is_finite()) {
        return None;
    }
    let target = (HUMAN_HEIGHT_CM.0 * HUMAN_HEIGHT_CM.1).sqrt();
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

/// Picks the unit that makes the skeleton's standing height human; `None` when the height cannot
/// be measured.
pub fn guess_unit(clip: &Clip) -> Option<UnitGuess> {
    guess_unit_from_height(standing_height_units(clip)?)
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
            assert!(g.is_plausible(), "{g:?}");
            assert!((150.0..200.0).contains(&g.height_cm()), "{g:?}");
            assert_eq!(unit_name(g.unit_cm), Some(name));
        }
    }

    #[test]
    fn sample_frames_cover_first_and_last() {
        assert_eq!(height_sample_frames(0).count(), 0);
        assert_eq!(height_sample_frames(1).collect::<Vec<_>>(), vec![0]);
        assert_eq!(height_sample_frames(3).collect::<Vec<_>>(), vec![0, 1, 2]);
        let f: Vec<usize> = height_sample_frames(1000).collect();
        assert_eq!((f.len(), f[0], f[63]), (64, 0, 999));
        assert!(f.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn heights_that_cannot_be_measured_give_no_guess() {
        for h in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            assert_eq!(guess_unit_from_height(h), None, "{h}");
        }
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, f32::NAN, 1.0, 2.0]), Some(2.0));
        assert_eq!(unit_name(3.0), None);
    }
}
