//! Sample buffers with per-bone sample counts, and the two-input mixer.
//!
//! Rules (as in CoreAnimation's mixer): for each bone, when both inputs hold a sample the output is
//! their blend; when only one does, its sample is copied; when neither does, the bone stays invalid.
//! The output count is the sum of the input counts, so a consumer can tell how many samples fed
//! each bone (0 = invalid, use the rest pose).

use super::clip::Clip;
use super::fk::{JobError, check_len};
use super::sample::{RotationInterp, SampleSettings, interp_transform, sample_clip};
use super::skeleton::{Skeleton, Transform};

/// A local pose with a sample count per bone; bones with count 0 are invalid (not sampled).
#[derive(Debug, Clone, PartialEq)]
pub struct SampleBuffer {
    pub transforms: Vec<Transform>,
    /// Samples accumulated per bone (0 = invalid).
    pub counts: Vec<u32>,
}

impl SampleBuffer {
    /// A buffer of `joints` invalid bones (identity transforms, count 0).
    pub fn new(joints: usize) -> Self {
        Self {
            transforms: vec![Transform::IDENTITY; joints],
            counts: vec![0; joints],
        }
    }

    /// Number of bones.
    pub fn len(&self) -> usize {
        self.transforms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.transforms.is_empty()
    }

    /// True when bone `j` holds at least one sample.
    pub fn is_valid(&self, j: usize) -> bool {
        self.counts.get(j).is_some_and(|c| *c > 0)
    }

    /// Marks every bone invalid.
    pub fn clear(&mut self) {
        self.counts.fill(0);
        self.transforms.fill(Transform::IDENTITY);
    }

    /// Samples `clip` at `time_s` into this buffer: every bone becomes valid with count 1.
    pub fn sample(
        &mut self,
        clip: &Clip,
        time_s: f64,
        settings: &SampleSettings,
    ) -> Result<(), JobError> {
        check_len(
            "sample buffer counts",
            self.transforms.len(),
            self.counts.len(),
        )?;
        sample_clip(clip, time_s, settings, &mut self.transforms)?;
        self.counts.fill(1);
        Ok(())
    }

    /// Replaces invalid bones by the skeleton's rest pose (for forward kinematics), leaving counts.
    pub fn fill_invalid_with_rest(&mut self, skeleton: &Skeleton) -> Result<(), JobError> {
        check_len(
            "skeleton rest pose",
            self.transforms.len(),
            skeleton.rest.len(),
        )?;
        for (j, t) in self.transforms.iter_mut().enumerate() {
            if self.counts.get(j).copied().unwrap_or(0) == 0 {
                *t = skeleton.rest[j];
            }
        }
        Ok(())
    }
}

/// Settings of [`mix`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixSettings<'a> {
    /// Weight of input `b`, in `[0, 1]`: 0 gives `a`, 1 gives `b`.
    pub weight: f32,
    /// Optional per-bone factor in `[0, 1]` multiplying `weight` (e.g. 1 on the upper body, 0 below:
    /// the lower body stays `a`). One entry per bone.
    pub mask: Option<&'a [f32]>,
    pub rotation: RotationInterp,
}

/// Blends `a` and `b` into `out` per the rules in the module documentation. Translations and scales
/// lerp, rotations use `settings.rotation` on the shortest path.
pub fn mix(
    a: &SampleBuffer,
    b: &SampleBuffer,
    settings: &MixSettings<'_>,
    out: &mut SampleBuffer,
) -> Result<(), JobError> {
    let n = a.transforms.len();
    check_len("input a counts", n, a.counts.len())?;
    check_len("input b", n, b.transforms.len())?;
    check_len("input b counts", n, b.counts.len())?;
    check_len("output", n, out.transforms.len())?;
    check_len("output counts", n, out.counts.len())?;
    if let Some(m) = settings.mask {
        check_len("weight mask", n, m.len())?;
        if m.iter().any(|w| !(0.0..=1.0).contains(w)) {
            return Err(JobError::BadParameter(String::from(
                "weight mask entries must be in [0, 1]",
            )));
        }
    }
    if !(0.0..=1.0).contains(&settings.weight) {
        return Err(JobError::BadParameter(format!(
            "mix weight must be in [0, 1], found {}",
            settings.weight
        )));
    }
    for j in 0..n {
        let (ca, cb) = (a.counts[j], b.counts[j]);
        out.transforms[j] = match (ca > 0, cb > 0) {
            (true, true) => {
                let w = settings.weight * settings.mask.map_or(1.0, |m| m[j]);
                interp_transform(&a.transforms[j], &b.transforms[j], w, settings.rotation)
            }
            (true, false) => a.transforms[j],
            (false, true) => b.transforms[j],
            (false, false) => Transform::IDENTITY,
        };
        out.counts[j] = ca.saturating_add(cb);
    }
    Ok(())
}

/// A weight mask that is `inside` on `joint` and all its descendants and `outside` elsewhere
/// (e.g. `subtree_mask(sk, spine, 1.0, 0.0)` for "upper body only").
pub fn subtree_mask(skeleton: &Skeleton, joint: usize, inside: f32, outside: f32) -> Vec<f32> {
    let n = skeleton.len();
    let mut in_tree = vec![false; n];
    for j in 0..n {
        in_tree[j] = j == joint
            || skeleton
                .parents
                .get(j)
                .copied()
                .flatten()
                .is_some_and(|p| p < j && in_tree[p]);
    }
    in_tree
        .into_iter()
        .map(|t| if t { inside } else { outside })
        .collect()
}
