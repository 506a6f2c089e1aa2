//! Skeletal animation: skeletons, clips, sampling, mixing, forward kinematics, root motion, tag events,
//! and the BVH and glTF importers.

pub mod clip;
pub mod skeleton;

pub use clip::Clip;
pub use skeleton::{Skeleton, Transform};
