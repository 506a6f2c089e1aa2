//! Compressed clip reader (`.tlc`): any bytes, read twice: as they are (the size and checksum
//! checks), and with the size field and CRC-32 patched to match, so mutations reach the body
//! validation behind the checksum. A clip that parses must sample every joint at several frames and
//! decompress without panicking, and the fast decoder (AVX2 where the CPU has it, with AVX-512
//! instructions where it has those) and the AVX2 one without them must give the same bits as the
//! portable one at every frame, half frame and the sampled times.
#![no_main]

use libfuzzer_sys::fuzz_target;
use taglane::core::anim::Transform;
use taglane::core::compress::bits::crc32;
use taglane::core::compress::format::{CompressedClip, HEADER_BYTES};

/// Offset of the `file size` field in the header (docs/TLC_FORMAT.md).
const SIZE_AT: usize = 48;

fn exercise(bytes: Vec<u8>) {
    let Ok(clip) = CompressedClip::from_bytes(bytes) else {
        return;
    };
    let mut pose = vec![Transform::IDENTITY; clip.joint_count()];
    let last = clip.frame_count().saturating_sub(1) as f32;
    let mut portable = pose.clone();
    let mut avx2 = pose.clone();
    let halves = (0..=(2.0 * last.min(64.0)) as u32).map(|h| h as f32 * 0.5);
    for frame in [0.0, last * 0.37, last, -1.0, last + 2.0].into_iter().chain(halves) {
        clip.sample_pose_at_frame(frame, &mut pose);
        clip.sample_pose_portable(frame, &mut portable);
        clip.sample_pose_avx2(frame, &mut avx2);
        let bits = |t: &Transform| {
            (t.rotation.to_array().map(f32::to_bits), t.translation.to_array().map(f32::to_bits))
        };
        for (j, ((a, b), c)) in pose.iter().zip(&portable).zip(&avx2).enumerate() {
            assert!(bits(a) == bits(b), "frame {frame} joint {j}: {a:?} vs portable {b:?}");
            assert!(bits(c) == bits(b), "frame {frame} joint {j}: avx2 {c:?} vs portable {b:?}");
        }
    }
    clip.sample_pose(clip.duration_s() * 0.5, &mut pose);
    let _ = clip.sample_joint(0.0, clip.joint_count() - 1);
    let full = clip.to_clip();
    assert_eq!(full.frame_count, clip.frame_count());
}

fuzz_target!(|data: &[u8]| {
    exercise(data.to_vec());
    if data.len() >= HEADER_BYTES + 4 {
        let mut fixed = data.to_vec();
        let len = fixed.len();
        fixed[SIZE_AT..SIZE_AT + 4].copy_from_slice(&(len as u32).to_le_bytes());
        let crc = crc32(&fixed[..len - 4]);
        fixed[len - 4..].copy_from_slice(&crc.to_le_bytes());
        exercise(fixed);
    }
});
