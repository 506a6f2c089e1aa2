//! The rest pose of a sample written with 16-byte stores (SSE2, which every x86-64 CPU has).
//!
//! Before the animated tracks, a pose is the rest pose: each joint's identity rotation, its rest
//! translation (12 bytes a joint in the file) and a unit scale: on a 22-joint take, about a tenth
//! of a warm pose. Written field by field, that is five stores a joint (16, 8, 4, 8 and 4 bytes);
//! here a joint takes three: the rotation, the translation with the scale's x in its fourth lane,
//! and the scale's y and z. That needs the translation and scale of
//! [`Transform`] next to each other, which [`LAYOUT`] checks at compile time (another layout
//! takes the field-by-field writes).
#![allow(unsafe_code)]

use std::arch::x86_64::*;
use std::mem::{offset_of, size_of};

use crate::core::anim::Transform;

/// Whether `Transform` is laid out as [`write_rest`] writes it: the rotation in bytes 0-15, the
/// translation in 16-27 and the scale in 28-39 of 48.
const LAYOUT: bool = offset_of!(Transform, rotation) == 0
    && offset_of!(Transform, translation) == 16
    && offset_of!(Transform, scale) == 28
    && size_of::<Transform>() == 48;

/// Writes the rest pose into `out` from the rest translations `rest` (12 bytes a joint, from
/// byte 0) and returns true; or writes nothing and returns false when `Transform` has another
/// layout or `rest` holds fewer than `12 * out.len() + 4` bytes (a translation is read with a
/// 16-byte load, its last 4 bytes replaced by the scale's x).
#[inline]
pub(super) fn write_rest(rest: &[u8], out: &mut [Transform]) -> bool {
    if !LAYOUT || rest.len() < 12 * out.len() + 4 {
        return false;
    }
    let n = out.len();
    let (src, dst) = (rest.as_ptr(), out.as_mut_ptr().cast::<u8>());
    // SAFETY: joints `0..n` of `out`, reading `12 * n + 4` bytes of `rest` (checked above).
    unsafe { one_at_a_time(src, dst, 0..n) };
    true
}

/// The rest pose of joints `joints`, a joint at a time with 16-byte stores.
///
/// # Safety
/// `dst` points to at least `joints.end` transforms laid out as [`LAYOUT`] says, and `src` to
/// at least `12 * joints.end + 4` readable bytes.
#[inline(always)]
unsafe fn one_at_a_time(src: *const u8, dst: *mut u8, joints: std::ops::Range<usize>) {
    // SAFETY: SSE2 is part of x86-64, so its intrinsics run on every CPU this is built for.
    // The load reads bytes `12 * j .. 12 * j + 16` of `src`; the stores write bytes 0-39 of
    // transform `j`, which are its rotation, translation and scale (`LAYOUT`): an identity
    // rotation, the translation and a unit scale, all valid floats (as the caller guarantees).
    unsafe {
        let identity = _mm_setr_ps(0.0, 0.0, 0.0, 1.0);
        let xyz = _mm_castsi128_ps(_mm_setr_epi32(-1, -1, -1, 0));
        let one = _mm_set1_ps(1.0);
        for j in joints {
            let o = dst.add(48 * j);
            let t = _mm_loadu_ps(src.add(12 * j).cast());
            _mm_storeu_ps(o.cast(), identity);
            // The translation, and 1.0 (the scale's x) in the fourth lane.
            _mm_storeu_ps(o.add(16).cast(), _mm_or_ps(_mm_and_ps(t, xyz), identity));
            _mm_storel_epi64(o.add(32).cast(), _mm_castps_si128(one));
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;

    fn rest_bytes(t: &[Vec3]) -> Vec<u8> {
        t.iter()
            .flat_map(|v| v.to_array())
            .flat_map(f32::to_le_bytes)
            .collect()
    }

    #[test]
    fn the_rest_pose_is_written_whole_over_whatever_was_there() {
        // This compiler lays `Transform` out as the wide writes need. If that changes, the
        // decoder takes the field-by-field writes and this test stops compiling, to say so.
        const {
            assert!(
                LAYOUT,
                "Transform's layout changed; write_rest is never taken"
            )
        };
        let t: Vec<Vec3> = (0..5)
            .map(|j| Vec3::new(j as f32, -2.5 * j as f32, 1e-3 + j as f32))
            .collect();
        let mut bytes = rest_bytes(&t);
        // The last joint's 16-byte load needs 4 bytes after it (the next section in a file).
        bytes.extend([0xAB; 4]);
        let garbage = Transform {
            translation: Vec3::NAN,
            rotation: Quat::from_xyzw(f32::NAN, 7.0, f32::NAN, -3.0),
            scale: Vec3::splat(9.0),
        };
        let mut out = vec![garbage; 6];
        assert!(write_rest(&bytes, &mut out[..5]));
        for (j, o) in out[..5].iter().enumerate() {
            let want = Transform {
                translation: t[j],
                rotation: Quat::IDENTITY,
                scale: Vec3::ONE,
            };
            assert_eq!(o, &want, "joint {j}");
        }
        // Past the slice: untouched.
        assert!(out[5].translation.x.is_nan() && out[5].scale == Vec3::splat(9.0));
    }

    #[test]
    fn too_few_rest_bytes_write_nothing() {
        let bytes = rest_bytes(&[Vec3::ONE, Vec3::X]);
        let mut out = vec![Transform::IDENTITY; 2];
        out[0].scale = Vec3::splat(3.0);
        assert!(
            !write_rest(&bytes, &mut out),
            "the last load would read past the bytes"
        );
        assert_eq!(out[0].scale, Vec3::splat(3.0));
        assert!(write_rest(&bytes, &mut out[..1]));
        assert_eq!(out[0].scale, Vec3::ONE);
    }
}
