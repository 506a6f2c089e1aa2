//! Animation compression: a segmented, range-reduced, variable-bit-rate codec with an automatic
//! bit selection driven by ACL's error metric, the `.tlc` file format with random-access sampling,
//! a key-reduced time-sorted stream (BitSquid layout) and ACL SJSON export.
//!
//! Algorithms and the metric: `docs/COMPRESSION.md`. File layout: `docs/TLC_FORMAT.md`.

pub mod acl_sjson;
pub mod bits;
pub mod decode;
pub mod encode;
pub mod format;
pub mod metric;
pub mod quat_pack;
pub mod settings;
pub mod stream;
pub mod synth;

pub use encode::{
    CompressError, CompressResult, Control, compress, compress_with, measure_clip, raw_size_bytes,
};
pub use format::{CompressedClip, TlcError, TrackStore};
pub use metric::{ErrorReport, JointFrameErrors, WorstError};
pub use settings::{BitRate, CompressSettings, Preset, RotationFormat};
