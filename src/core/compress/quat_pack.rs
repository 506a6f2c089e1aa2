//! Rotation packings: drop-W reconstruction and smallest three in 32 and 48 bits.
// Parallel per-joint / per-component arrays are indexed together; index loops read clearer.
#![allow(clippy::needless_range_loop)]

use glam::Quat;

use super::bits::{dequantize_unorm, quantize_unorm};

const SQRT_HALF: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// `q` or `-q`, whichever has `w >= 0` (the same rotation).
#[inline]
pub fn positive_w(q: Quat) -> Quat {
    if q.w < 0.0 { -q } else { q }
}

/// Rebuilds a unit quaternion from x, y, z with `w >= 0`. Quantisation can push `x²+y²+z²` past 1;
/// `w` is then 0 and the result is renormalised.
#[inline]
pub fn from_drop_w(x: f32, y: f32, z: f32) -> Quat {
    let w2 = 1.0 - (x * x + y * y + z * z);
    if w2 >= 0.0 {
        Quat::from_xyzw(x, y, z, w2.sqrt())
    } else {
        Quat::from_xyzw(x, y, z, 0.0).normalize()
    }
}

/// Component bits of a smallest-three packing in `total_bits` (32: 10 bits, 48: 15 bits).
#[inline]
pub fn smallest_three_component_bits(total_bits: u32) -> u32 {
    if total_bits >= 48 { 15 } else { 10 }
}

/// Packs a unit quaternion: bits 0-1 the index of the largest |component| (made positive), then
/// the other three in index order, each mapped from `[-1/√2, 1/√2]` to `c` unsigned bits. Returns
/// the packed value in the low `2 + 3c` bits.
pub fn pack_smallest_three(q: Quat, total_bits: u32) -> u64 {
    let c = smallest_three_component_bits(total_bits);
    let a = q.normalize().to_array();
    let mut largest = 0;
    for i in 1..4 {
        if a[i].abs() > a[largest].abs() {
            largest = i;
        }
    }
    let sign = if a[largest] < 0.0 { -1.0 } else { 1.0 };
    let mut packed = largest as u64;
    let mut shift = 2;
    for (i, &v) in a.iter().enumerate() {
        if i == largest {
            continue;
        }
        let unit = (v * sign / SQRT_HALF) * 0.5 + 0.5;
        packed |= u64::from(quantize_unorm(unit, c)) << shift;
        shift += c;
    }
    packed
}

/// The inverse of [`pack_smallest_three`] (the result is normalised).
pub fn unpack_smallest_three(packed: u64, total_bits: u32) -> Quat {
    let c = smallest_three_component_bits(total_bits);
    let mask = (1u64 << c) - 1;
    let largest = (packed & 3) as usize;
    let mut a = [0.0f32; 4];
    let mut shift = 2;
    let mut sum = 0.0;
    for (i, slot) in a.iter_mut().enumerate() {
        if i == largest {
            continue;
        }
        let q = ((packed >> shift) & mask) as u32;
        let v = (dequantize_unorm(q, c) * 2.0 - 1.0) * SQRT_HALF;
        *slot = v;
        sum += v * v;
        shift += c;
    }
    a[largest] = (1.0 - sum).max(0.0).sqrt();
    Quat::from_array(a).normalize()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Rotation angle between two quaternions, computed in f64 (acos of an f32 dot product near 1
    /// is too coarse for the 48-bit bound).
    fn angle_between(a: Quat, b: Quat) -> f32 {
        let (a, b) = (a.as_dquat().normalize(), b.as_dquat().normalize());
        let d = a.dot(b).abs().min(1.0);
        (2.0 * d.acos()) as f32
    }

    fn quat_strategy() -> impl Strategy<Value = Quat> {
        (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0)
            .prop_filter("non-zero", |(x, y, z, w)| {
                x * x + y * y + z * z + w * w > 1e-3
            })
            .prop_map(|(x, y, z, w)| Quat::from_xyzw(x, y, z, w).normalize())
    }

    proptest! {
        // Tolerances: a component step of the 10-bit packing is √2/1023 = 1.38e-3, so a rotation
        // error of a few steps (about 4e-3 rad); 15-bit: √2/32767 = 4.3e-5 (stated bound 2e-4 rad).
        #[test]
        fn smallest_three_32_round_trip(q in quat_strategy()) {
            let back = unpack_smallest_three(pack_smallest_three(q, 32), 32);
            prop_assert!(angle_between(q, back) < 4e-3, "{q:?} -> {back:?}");
        }

        #[test]
        fn smallest_three_48_round_trip(q in quat_strategy()) {
            let p = pack_smallest_three(q, 48);
            prop_assert!(p < (1u64 << 47));
            let back = unpack_smallest_three(p, 48);
            prop_assert!(angle_between(q, back) < 2e-4, "{q:?} -> {back:?}");
        }

        #[test]
        fn drop_w_exact_round_trip(q in quat_strategy()) {
            let p = positive_w(q);
            let back = from_drop_w(p.x, p.y, p.z);
            prop_assert!(angle_between(q, back) < 1e-3);
            prop_assert!((back.length() - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn drop_w_overflow_renormalises() {
        let q = from_drop_w(0.8, 0.7, 0.0);
        assert!((q.length() - 1.0).abs() < 1e-6);
        assert_eq!(q.w, 0.0);
    }
}
