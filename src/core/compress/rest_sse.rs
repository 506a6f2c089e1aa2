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
/// 16-byte load, its last 4 bytes replaced by the scale's x). With `avx512` on a CPU that runs
/// the AVX-512 decoder, four joints at a time take three 64-byte stores instead of twelve
/// 16-byte ones.
#[inline]
pub(super) fn write_rest(rest: &[u8], out: &mut [Transform], avx512: bool) -> bool {
    if !LAYOUT || rest.len() < 12 * out.len() + 4 {
        return false;
    }
    let n = out.len();
    let (src, dst) = (rest.as_ptr(), out.as_mut_ptr().cast::<u8>());
    if avx512 && super::decode_avx512::available() {
        // SAFETY: the CPU has AVX-512 F (among the decoder's features, checked above); the reads
        // and writes as below.
        unsafe { four_at_a_time(src, dst, n) };
    } else {
        // SAFETY: joints `0..n` of `out`, reading `12 * n + 4` bytes of `rest` (checked above).
        unsafe { one_at_a_time(src, dst, 0..n) };
    }
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

/// The rest pose of joints `0..n`, four joints (192 bytes) at a time with three 64-byte stores
/// from the first joint that starts a 64-byte line (so the stores do not straddle lines), the
/// joints before and after one at a time.
///
/// # Safety
/// The CPU has AVX-512 F; `dst` points to `n` transforms laid out as [`LAYOUT`] says, and `src`
/// to at least `12 * n + 4` readable bytes.
#[target_feature(enable = "avx512f")]
unsafe fn four_at_a_time(src: *const u8, dst: *mut u8, n: usize) {
    // Joint `j` starts at `dst + 48 j`: with `dst` on 16 bytes (a `Transform`'s alignment), joint
    // `(dst / 16) % 4` is the first to start a line, and every fourth one after it.
    let first = ((dst.addr() >> 4) & 3).min(n);
    let blocks = (n - first) / 4;
    // Four joints are 16 floats: [rotation, translation, scale x, scale y, scale z, (padding)]
    // each. Each store is a constant (the identity rotations, unit scales and zero padding: ones
    // in the lanes of its first mask) with the translations that fall in it expand-loaded into
    // the lanes of its second mask (consecutive floats from the given one; no other is read).
    let one = _mm512_set1_ps(1.0);
    let (c0, c1, c2) = (
        _mm512_maskz_mov_ps(0x8388, one),
        _mm512_maskz_mov_ps(0x8838, one),
        _mm512_maskz_mov_ps(0x3883, one),
    );
    // SAFETY: joints `0..first` and `first + 4 * blocks..n` as the caller guarantees. Block `b`
    // reads the 48 bytes of joints `j..j + 4` (`j = first + 4 b`) of `src` and writes the 192
    // bytes of their transforms: rotations, translations, scales and the padding after each
    // scale (zeros), all inside `out`.
    unsafe {
        one_at_a_time(src, dst, 0..first);
        for b in 0..blocks {
            let j = first + 4 * b;
            let (t, o) = (src.add(12 * j).cast::<f32>(), dst.add(48 * j).cast::<f32>());
            // Joint j's translation in lanes 4-6; joint j + 1's in lanes 0-2 and j + 2's in
            // lanes 12-14 of the next 16 floats; joint j + 3's in lanes 8-10 of the last.
            _mm512_storeu_ps(o, _mm512_mask_expandloadu_ps(c0, 0x0070, t));
            _mm512_storeu_ps(o.add(16), _mm512_mask_expandloadu_ps(c1, 0x7007, t.add(3)));
            _mm512_storeu_ps(o.add(32), _mm512_mask_expandloadu_ps(c2, 0x0700, t.add(9)));
        }
        one_at_a_time(src, dst, first + 4 * blocks..n);
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
        assert!(write_rest(&bytes, &mut out[..5], false));
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
            !write_rest(&bytes, &mut out, false),
            "the last load would read past the bytes"
        );
        assert_eq!(out[0].scale, Vec3::splat(3.0));
        assert!(write_rest(&bytes, &mut out[..1], false));
        assert_eq!(out[0].scale, Vec3::ONE);
    }

    /// Four at a time: every length and every place of the slice against a 64-byte line (the
    /// joints before the first line start and after the last block one at a time), rest
    /// translations ending where the 16-byte loads need them to.
    #[test]
    fn four_at_a_time_writes_the_same_rest_pose() {
        let garbage = Transform {
            translation: Vec3::NAN,
            rotation: Quat::from_xyzw(f32::NAN, 7.0, f32::NAN, -3.0),
            scale: Vec3::splat(9.0),
        };
        let mut blocks = 0;
        for n in 0..14 {
            let t: Vec<Vec3> = (0..n)
                .map(|j| Vec3::new(j as f32 + 0.5, -2.5 * j as f32, 1e-3 - j as f32))
                .collect();
            let mut bytes = rest_bytes(&t);
            bytes.extend([0xAB; 4]);
            for skip in 0..4 {
                let mut out = vec![garbage; skip + n + 1];
                let avx512 = crate::core::compress::decode_avx512::available();
                let start = out[skip..].as_ptr().addr();
                blocks += usize::from(avx512 && n >= 4 + ((start >> 4) & 3));
                assert!(write_rest(&bytes, &mut out[skip..skip + n], true));
                for (j, o) in out[skip..skip + n].iter().enumerate() {
                    let want = Transform {
                        translation: t[j],
                        rotation: Quat::IDENTITY,
                        scale: Vec3::ONE,
                    };
                    assert_eq!(o, &want, "{n} joints from {skip}: joint {j}");
                }
                for o in out[..skip].iter().chain(&out[skip + n..]) {
                    assert!(o.translation.x.is_nan() && o.scale == Vec3::splat(9.0));
                }
            }
        }
        if crate::core::compress::decode_avx512::available() {
            assert!(blocks > 0, "no block of four written");
        }
    }
}
