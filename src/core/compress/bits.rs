//! Bit packing (LSB first), quantisation of floats to N bits, and the CRC-32 used by the `.tlc` trailer.

/// Appends values of 0..=32 bits to a byte vector, least significant bit first.
#[derive(Debug, Default, Clone)]
pub struct BitWriter {
    bytes: Vec<u8>,
    acc: u64,
    acc_bits: u32,
}

impl BitWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes the low `bits` bits of `value` (`bits <= 32`).
    #[inline]
    pub fn write(&mut self, value: u32, bits: u32) {
        debug_assert!(bits <= 32);
        if bits == 0 {
            return;
        }
        let masked = if bits == 32 {
            u64::from(value)
        } else {
            u64::from(value) & ((1u64 << bits) - 1)
        };
        self.acc |= masked << self.acc_bits;
        self.acc_bits += bits;
        while self.acc_bits >= 8 {
            self.bytes.push(self.acc as u8);
            self.acc >>= 8;
            self.acc_bits -= 8;
        }
    }

    /// Pads with zero bits to the next byte boundary.
    pub fn align(&mut self) {
        if self.acc_bits > 0 {
            self.bytes.push(self.acc as u8);
            self.acc = 0;
            self.acc_bits = 0;
        }
    }

    /// Number of bits written so far.
    pub fn bit_len(&self) -> usize {
        self.bytes.len() * 8 + self.acc_bits as usize
    }

    /// Aligns and returns the bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.align();
        self.bytes
    }
}

/// Reads `bits` (0..=32) bits at absolute bit position `pos` of `data`, LSB first.
///
/// `data` must hold at least 8 bytes past `pos / 8` (the decoder pads its data block with 8 zero
/// bytes, so every in-range read is in bounds); an out-of-range read returns 0 instead of panicking.
#[inline(always)]
pub fn read_bits(data: &[u8], pos: usize, bits: u32) -> u32 {
    let byte = pos >> 3;
    let Some(chunk) = data.get(byte..byte + 8) else {
        return 0;
    };
    let word = u64::from_le_bytes([
        chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
    ]);
    let shifted = word >> (pos & 7);
    (shifted & ((1u64 << bits) - 1)) as u32
}

/// Largest integer representable in `bits` bits, as f32 (`2^bits - 1`).
#[inline]
pub fn max_q(bits: u32) -> f32 {
    ((1u64 << bits) - 1) as f32
}

/// Quantises `x` in `[0, 1]` to an unsigned `bits`-bit integer with rounding (clamped).
#[inline]
pub fn quantize_unorm(x: f32, bits: u32) -> u32 {
    let m = max_q(bits);
    let q = (x.clamp(0.0, 1.0) * m).round();
    q as u32
}

/// The inverse of [`quantize_unorm`].
#[inline]
pub fn dequantize_unorm(q: u32, bits: u32) -> f32 {
    q as f32 / max_q(bits)
}

/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as used by zip and PNG.
pub fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc = TABLE[((crc ^ u32::from(b)) & 0xFF) as usize] ^ (crc >> 8);
    }
    crc ^ 0xFFFF_FFFF
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn crc32_known_value() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    proptest! {
        #[test]
        fn bit_round_trip(values in proptest::collection::vec((any::<u32>(), 0u32..=32), 0..200)) {
            let mut w = BitWriter::new();
            for &(v, b) in &values {
                w.write(v, b);
            }
            let total = w.bit_len();
            let mut bytes = w.finish();
            bytes.extend_from_slice(&[0; 8]);
            prop_assert_eq!(total, values.iter().map(|&(_, b)| b as usize).sum::<usize>());
            let mut pos = 0;
            for &(v, b) in &values {
                let expect = if b == 32 { v } else { v & ((1u32 << b) - 1) };
                prop_assert_eq!(read_bits(&bytes, pos, b), expect);
                pos += b as usize;
            }
        }

        #[test]
        fn unorm_round_trip_within_half_step(x in 0.0f32..=1.0, bits in 1u32..=24) {
            let q = quantize_unorm(x, bits);
            prop_assert!(q as f32 <= max_q(bits));
            let back = dequantize_unorm(q, bits);
            prop_assert!((back - x).abs() <= 0.5 / max_q(bits) + 1e-6);
        }
    }
}
