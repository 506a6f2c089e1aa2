//! Skeletal animation: skeletons, clips, sampling, mixing, forward kinematics, root motion, tag events,
//! the BVH and glTF importers, the fast scan of animation files and length units.
//!
//! See `docs/ANIMATION.md` for the model, conventions and import policies.

pub mod bvh;
mod bvh_scan;
pub mod clip;
pub mod events;
pub mod fk;
pub mod gltf;
pub mod import;
pub mod mix;
pub mod root_motion;
pub mod sample;
pub mod scan;
pub mod skeleton;
pub mod units;

pub use bvh::{bvh_export_losses, parse_bvh, parse_bvh_bytes, save_bvh, write_bvh};
pub use clip::Clip;
pub use events::{
    EventSettings, TagEvent, TagEventKind, active_tags, clip_tag_ranges, frame_at, tag_events,
};
pub use fk::{JobError, chain_to_model, compose, joint_to_model, local_to_model};
pub use import::{
    AnimFormat, ImportError, ImportOptions, ImportWarning, Imported, Place, load_animation,
    load_animation_from_bytes,
};
pub use mix::{MixSettings, SampleBuffer, mix, mix_in_place, subtree_mask};
pub use root_motion::{
    RootMotion, RootMotionBlend, RootMotionTrack, blend_root_motion, blend_vec, root_motion,
};
pub use sample::{
    Extrapolation, FramePosition, RotationInterp, SampleSettings, frame_position, interp_rotation,
    interp_transform, nlerp, sample_clip, slerp,
};
pub use scan::{ClipScan, FileScan, scan_animation, scan_animation_bytes};
pub use skeleton::{EndSite, Skeleton, Transform};
pub use units::{CMU_CM_PER_UNIT, UnitGuess, guess_unit};
