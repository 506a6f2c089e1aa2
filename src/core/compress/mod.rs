//! Animation compression: a segmented, range-reduced, variable-bit-rate codec with an automatic
//! bit selection driven by ACL's error metric, the `.tlc` file format with random-access sampling,
//! a key-reduced time-sorted stream (BitSquid layout) and ACL SJSON export.
//!
//! Algorithms and the metric: `docs/COMPRESSION.md`. File layout: `docs/TLC_FORMAT.md`.

pub mod acl_sjson;
pub mod bits;
pub mod decode;
#[cfg(target_arch = "x86_64")]
mod decode_avx2;
/// Another revision's AVX2 decoder, compiled beside this one for an A/B in one process
/// (`scripts/decode_ab_inprocess.sh` writes the file, its inner attributes and comments taken
/// out, and builds with `--cfg taglane_decoder_ab`; never part of a normal build).
#[cfg(all(target_arch = "x86_64", taglane_decoder_ab))]
#[allow(unsafe_code, dead_code)]
mod decode_avx2_base {
    include!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/target/decoder_ab/decode_avx2_base.rs"
    ));
}
/// With `--cfg taglane_decoder_ab`: poses decoded by the other revision's vector decoder while
/// set.
#[cfg(taglane_decoder_ab)]
#[doc(hidden)]
pub static DECODE_WITH_BASE: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);
pub mod encode;
pub mod format;
pub mod metric;
mod prefetch;
pub mod quat_pack;
#[cfg(target_arch = "x86_64")]
mod rest_sse;
pub mod settings;
pub mod stream;
pub mod synth;

pub use decode::Decoder;
pub use encode::{
    CompressError, CompressResult, Control, compress, compress_with, measure_clip, raw_bytes,
    raw_size_bytes,
};
pub use format::{CompressedClip, TlcError, TrackStore};
pub use metric::{ErrorReport, JointFrameErrors, WorstError};
pub use settings::{BitRate, CompressSettings, Preset, RotationFormat};

/// Mean time to decode one pose of `clip`, microseconds: poses at scattered times (golden-ratio
/// steps over the clip, so between frames as a game samples), for at least 2 ms and at most
/// 20,000 poses. The one measurement the command line's reports and the app's table share.
pub fn decode_us_per_pose(clip: &CompressedClip) -> f64 {
    use std::time::Instant;
    let mut pose = vec![crate::core::anim::Transform::IDENTITY; clip.joint_count()];
    let d = clip.duration_s();
    let start = Instant::now();
    let mut poses = 0u32;
    while poses < 20_000 {
        for _ in 0..64 {
            let t = d * ((poses as f32 * 0.618_034).fract());
            clip.sample_pose(t, &mut pose);
            std::hint::black_box(&pose);
            poses += 1;
        }
        if start.elapsed().as_secs_f64() > 2e-3 {
            break;
        }
    }
    start.elapsed().as_secs_f64() * 1e6 / f64::from(poses.max(1))
}
