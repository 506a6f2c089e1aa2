//! Per-frame bitmasks of one clip: bit `f` is set when frame `f` is in the set.
//!
//! Storage is `bitvec` (`BitVec<u64, Lsb0>`: frame `f` is bit `f % 64` of word `f / 64`), used for
//! storage, slicing and bit access. The logic runs on the raw `u64` words: bitvec's `&=`/`|=` go
//! bit-span by bit-span and are far slower than a plain word loop. Bits past the last frame of the
//! last word are always zero; the complement masks them off.

use bitvec::prelude::{BitSlice, BitVec, Lsb0};

use super::range::Range;

/// Bit storage of masks.
pub type Bits = BitVec<u64, Lsb0>;

/// Number of `u64` words for `frames` frames.
#[inline]
pub const fn words_for(frames: u32) -> usize {
    (frames as usize).div_ceil(64)
}

/// The mask of the valid bits of the last word for `frames` frames (all ones when `frames` is a
/// multiple of 64).
#[inline]
pub const fn tail_mask(frames: u32) -> u64 {
    match frames % 64 {
        0 => u64::MAX,
        n => (1u64 << n) - 1,
    }
}

/// Sets the bits of `ranges` in `words`; parts of ranges past the last word are ignored.
pub fn rasterize_words(ranges: &[Range], words: &mut [u64]) {
    let limit = words.len() * 64;
    for r in ranges {
        let (s, e) = (r.start as usize, (r.stop as usize).min(limit));
        if s >= e {
            continue;
        }
        let (ws, we) = (s / 64, (e - 1) / 64);
        let first = u64::MAX << (s % 64);
        let last = u64::MAX >> (63 - (e - 1) % 64);
        if ws == we {
            words[ws] |= first & last;
        } else {
            words[ws] |= first;
            words[ws + 1..we].fill(u64::MAX);
            words[we] |= last;
        }
    }
}

/// Appends the runs of set bits of `words` as ranges, offset by nothing (bit 0 is frame 0). The
/// words must have zero bits past `frames`.
pub fn vectorize_words_append(words: &[u64], frames: u32, out: &mut Vec<Range>) {
    let mut in_run = false;
    let mut start = 0u32;
    for (wi, &w) in words.iter().enumerate() {
        let base = wi as u32 * 64;
        let mut cur = w;
        if in_run {
            if w == u64::MAX {
                continue;
            }
            let end = (!w).trailing_zeros();
            out.push(Range::new(start, base + end));
            in_run = false;
            cur = w & (u64::MAX << end);
        }
        while cur != 0 {
            let s = cur.trailing_zeros();
            let zeros_after = !cur & (u64::MAX << s);
            if zeros_after == 0 {
                start = base + s;
                in_run = true;
                break;
            }
            let e = zeros_after.trailing_zeros();
            out.push(Range::new(base + s, base + e));
            cur &= u64::MAX << e;
        }
    }
    if in_run {
        let end = (words.len() as u64 * 64).min(u64::from(frames)) as u32;
        out.push(Range::new(start, end));
    }
}

/// `out[i] = a[i] & b[i]`.
#[inline]
pub fn and_words(a: &[u64], b: &[u64], out: &mut [u64]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = x & y;
    }
}

/// `out[i] = a[i] | b[i]`.
#[inline]
pub fn or_words(a: &[u64], b: &[u64], out: &mut [u64]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = x | y;
    }
}

/// `out[i] = a[i] & !b[i]`.
#[inline]
pub fn and_not_words(a: &[u64], b: &[u64], out: &mut [u64]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = x & !y;
    }
}

/// `out[i] = a[i] ^ b[i]`.
#[inline]
pub fn xor_words(a: &[u64], b: &[u64], out: &mut [u64]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = x ^ y;
    }
}

/// `out = !a` within `frames` frames (the bits past `frames` stay zero).
#[inline]
pub fn not_words(a: &[u64], frames: u32, out: &mut [u64]) {
    for (o, &x) in out.iter_mut().zip(a) {
        *o = !x;
    }
    if let Some(last) = out.last_mut() {
        *last &= tail_mask(frames);
    }
}

/// The mask of one clip.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Mask {
    bits: Bits,
}

impl Mask {
    /// An empty mask of `frames` frames.
    pub fn new(frames: u32) -> Self {
        Self {
            bits: Bits::repeat(false, frames as usize),
        }
    }

    /// The mask of `ranges` (canonical, inside `[0, frames)`).
    pub fn from_ranges(ranges: &[Range], frames: u32) -> Self {
        let mut m = Self::default();
        rasterize(ranges, frames, &mut m);
        m
    }

    pub fn frames(&self) -> u32 {
        self.bits.len() as u32
    }

    pub fn bits(&self) -> &BitSlice<u64, Lsb0> {
        &self.bits
    }

    pub fn words(&self) -> &[u64] {
        self.bits.as_raw_slice()
    }

    pub fn get(&self, frame: u32) -> bool {
        self.bits.get(frame as usize).is_some_and(|b| *b)
    }

    pub fn count_frames(&self) -> u64 {
        self.words().iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// The ranges of the mask, canonical.
    pub fn to_ranges(&self) -> Vec<Range> {
        let mut out = Vec::new();
        vectorize(self, &mut out);
        out
    }

    fn reset(&mut self, frames: u32) {
        self.bits.clear();
        self.bits.resize(frames as usize, false);
        // `resize` only touches bits up to `frames`; the rest of the last word must be zero too.
        for w in self.bits.as_raw_mut_slice() {
            *w = 0;
        }
    }

    /// Sizes the mask to `frames` frames without clearing it (for outputs that write every word).
    fn prepare(&mut self, frames: u32) {
        if self.bits.len() != frames as usize {
            self.bits.clear();
            self.bits.resize(frames as usize, false);
        }
    }

    fn binary(&self, other: &Self, out: &mut Mask, f: fn(&[u64], &[u64], &mut [u64])) {
        let frames = self.frames().min(other.frames());
        out.prepare(frames);
        let n = words_for(frames);
        f(
            &self.words()[..n],
            &other.words()[..n],
            out.bits.as_raw_mut_slice(),
        );
        if let Some(last) = out.bits.as_raw_mut_slice().last_mut() {
            *last &= tail_mask(frames);
        }
    }

    /// `out = self | other` (over the shorter of the two lengths).
    pub fn union(&self, other: &Self, out: &mut Mask) {
        self.binary(other, out, or_words);
    }

    pub fn intersection(&self, other: &Self, out: &mut Mask) {
        self.binary(other, out, and_words);
    }

    pub fn difference(&self, other: &Self, out: &mut Mask) {
        self.binary(other, out, and_not_words);
    }

    pub fn symmetric_difference(&self, other: &Self, out: &mut Mask) {
        self.binary(other, out, xor_words);
    }

    /// `out = !self` within the mask's frames.
    pub fn complement(&self, out: &mut Mask) {
        out.prepare(self.frames());
        not_words(self.words(), self.frames(), out.bits.as_raw_mut_slice());
    }
}

/// Writes the mask of `ranges` into `out`, resized to `frames`; frames past `frames` are ignored.
pub fn rasterize(ranges: &[Range], frames: u32, out: &mut Mask) {
    out.reset(frames);
    let words = out.bits.as_raw_mut_slice();
    rasterize_words(ranges, words);
    if let Some(last) = words.last_mut() {
        *last &= tail_mask(frames);
    }
}

/// Writes the ranges of `mask` into `out` (cleared first), canonical.
pub fn vectorize(mask: &Mask, out: &mut Vec<Range>) {
    out.clear();
    vectorize_words_append(mask.words(), mask.frames(), out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(list: &[(u32, u32)]) -> Vec<Range> {
        list.iter().map(|&(s, e)| Range::new(s, e)).collect()
    }

    #[test]
    fn round_trips_across_word_edges() {
        for frames in [0u32, 1, 63, 64, 65, 128, 130, 200] {
            let cases = [
                r(&[]),
                r(&[(0, frames)]),
                r(&[(0, 1), (2, 3)]),
                r(&[(0, 64.min(frames))]),
                r(&[(63.min(frames), 65.min(frames))]),
                r(&[(1, frames.saturating_sub(1))]),
            ];
            for c in cases {
                let c: Vec<Range> = c
                    .into_iter()
                    .filter(|x| x.start < x.stop && x.stop <= frames)
                    .collect();
                let m = Mask::from_ranges(&c, frames);
                assert_eq!(m.to_ranges(), c, "frames {frames}");
                assert_eq!(m.count_frames(), crate::core::tags::range::total_frames(&c));
            }
        }
    }

    #[test]
    fn complement_keeps_the_tail_clear() {
        let m = Mask::from_ranges(&r(&[(0, 10)]), 70);
        let mut c = Mask::default();
        m.complement(&mut c);
        assert_eq!(c.to_ranges(), r(&[(10, 70)]));
        assert_eq!(c.words()[1] >> 6, 0);
        let mut both = Mask::default();
        m.union(&c, &mut both);
        assert_eq!(both.to_ranges(), r(&[(0, 70)]));
        m.intersection(&c, &mut both);
        assert!(both.to_ranges().is_empty());
        c.difference(&m, &mut both);
        assert_eq!(both.to_ranges(), r(&[(10, 70)]));
        assert!(c.get(69) && !c.get(70) && !c.get(3));
        // Ranges past the end are cut, never written out of bounds.
        assert_eq!(
            Mask::from_ranges(&r(&[(60, 500)]), 70).to_ranges(),
            r(&[(60, 70)])
        );
    }
}
