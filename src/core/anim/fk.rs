//! Forward kinematics: local (parent-from-joint) transforms to model space.

use super::skeleton::{Skeleton, Transform};

/// Why a runtime job (sampling, mixing, forward kinematics) refused its inputs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// A buffer does not have one entry per joint.
    #[error("{what} has {found} entries, expected {expected} (one per joint)")]
    BufferLength {
        what: &'static str,
        expected: usize,
        found: usize,
    },
    /// A parent index is not lower than its child's (the skeleton invariant is broken).
    #[error("joint {joint} has a parent that is not before it")]
    BadParent { joint: usize },
    /// A joint index is out of range.
    #[error("joint {joint} is out of range ({joints} joints)")]
    NoSuchJoint { joint: usize, joints: usize },
    /// Two clips or buffers disagree on the skeleton.
    #[error("the skeletons differ: {0}")]
    SkeletonMismatch(String),
    /// A parameter is outside its domain (weight not finite, time not finite, ...).
    #[error("invalid parameter: {0}")]
    BadParameter(String),
}

pub(crate) fn check_len(what: &'static str, expected: usize, found: usize) -> Result<(), JobError> {
    if expected == found {
        Ok(())
    } else {
        Err(JobError::BufferLength {
            what,
            expected,
            found,
        })
    }
}

/// Computes the model-space transform of every joint: `model[i] = model[parent] * local[i]`, roots
/// keep their local transform. One pass in index order (parents come before children).
pub fn local_to_model(
    skeleton: &Skeleton,
    local: &[Transform],
    model: &mut [Transform],
) -> Result<(), JobError> {
    let n = skeleton.len();
    check_len("skeleton parents", n, skeleton.parents.len())?;
    check_len("local pose", n, local.len())?;
    check_len("model pose", n, model.len())?;
    for i in 0..n {
        model[i] = match skeleton.parents[i] {
            None => local[i],
            Some(p) if p < i => model[p].mul_transform(&local[i]),
            Some(_) => return Err(JobError::BadParent { joint: i }),
        };
    }
    Ok(())
}

/// Computes the model-space transform of one joint by walking its chain from the root: touches only
/// the joints on that chain (cheap when one bone is needed, e.g. root motion of `Hips`).
pub fn joint_to_model(
    skeleton: &Skeleton,
    local: &[Transform],
    joint: usize,
) -> Result<Transform, JobError> {
    let n = skeleton.len();
    check_len("local pose", n, local.len())?;
    check_len("skeleton parents", n, skeleton.parents.len())?;
    if joint >= n {
        return Err(JobError::NoSuchJoint { joint, joints: n });
    }
    // Collect the chain upwards on the stack of a small vector, then compose downwards.
    let mut chain: smallvec::SmallVec<[usize; 32]> = smallvec::SmallVec::new();
    let mut j = joint;
    chain.push(j);
    while let Some(p) = skeleton.parents[j] {
        if p >= j {
            return Err(JobError::BadParent { joint: j });
        }
        chain.push(p);
        j = p;
    }
    let mut acc = Transform::IDENTITY;
    for &k in chain.iter().rev() {
        acc = acc.mul_transform(&local[k]);
    }
    Ok(acc)
}

/// Model-space transforms of the joints on the chain from the root down to `joint`, written in
/// chain order (root first) into `out`; returns how many were written. `out` must hold at least the
/// chain length (at most the joint count).
pub fn chain_to_model(
    skeleton: &Skeleton,
    local: &[Transform],
    joint: usize,
    out: &mut [Transform],
) -> Result<usize, JobError> {
    let n = skeleton.len();
    check_len("local pose", n, local.len())?;
    let chain = skeleton
        .chain_to(joint)
        .ok_or(JobError::NoSuchJoint { joint, joints: n })?;
    if out.len() < chain.len() {
        return Err(JobError::BufferLength {
            what: "chain output",
            expected: chain.len(),
            found: out.len(),
        });
    }
    let mut acc = Transform::IDENTITY;
    for (k, &j) in chain.iter().enumerate() {
        acc = acc.mul_transform(&local[j]);
        out[k] = acc;
    }
    Ok(chain.len())
}
