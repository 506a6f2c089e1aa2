//! Skeletal animation: skeletons, clips, sampling, mixing, forward kinematics, root motion, tag events,
//! and the BVH and glTF importers.
//!
//! See `docs/ANIMATION.md` for the model, conventions and import policies.

pub mod bvh;
pub mod clip;
pub mod fk;
pub mod gltf;
pub mod import;
pub mod mix;
pub mod sample;
pub mod skeleton;

pub use bvh::{bvh_export_losses, parse_bvh, parse_bvh_bytes, write_bvh};
pub use clip::Clip;
pub use fk::{JobError, chain_to_model, joint_to_model, local_to_model};
pub use import::{
    AnimFormat, ImportError, ImportOptions, ImportWarning, Imported, Place, load_animation,
    load_animation_from_bytes,
};
pub use mix::{MixSettings, SampleBuffer, mix, subtree_mask};
pub use sample::{
    Extrapolation, FramePosition, RotationInterp, SampleSettings, frame_position, interp_rotation,
    interp_transform, nlerp, sample_clip, slerp,
};
pub use skeleton::{EndSite, Skeleton, Transform};
