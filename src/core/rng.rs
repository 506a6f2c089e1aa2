//! SplitMix64: the one small deterministic generator of the core (synthetic clips, the stress
//! project, `random(..)` picks, generated test data). Not for anything that needs to be secure.

/// A SplitMix64 generator: state advanced by the golden-ratio increment, output mixed.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in `0..n` (0 when `n` is 0); modulo bias is negligible for the small `n` used.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// Uniform in [-1, 1].
    #[inline]
    pub fn signed(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// The SplitMix64 output of one state: a hash of 64 bits, used on its own for stateless picks.
#[inline]
pub fn hash(state: u64) -> u64 {
    mix(state.wrapping_add(0x9E37_79B9_7F4A_7C15))
}

#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_splitmix64_sequence() {
        // First outputs of SplitMix64 seeded with 1234567 (the reference C implementation).
        let mut r = SplitMix64(1_234_567);
        assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(r.next_u64(), 3_203_168_211_198_807_973);
        assert_eq!(hash(1_234_567), 6_457_827_717_110_365_317);
    }
}
