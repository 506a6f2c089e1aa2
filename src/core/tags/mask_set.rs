//! `MaskSet`: per-frame masks of many clips, packed.
//!
//! Layout: `clips` (sorted clip ids), `frames` (length of each stored clip), `word_offsets`
//! (`clips.len() + 1` entries; clip `i` owns words `word_offsets[i]..word_offsets[i + 1]`) and one
//! flat `BitVec<u64, Lsb0>`. Each clip starts on a word boundary, so the logic runs word by word on
//! the raw slice; bits past a clip's last frame are zero. A clip is stored only when at least one of
//! its bits is set, so a `MaskSet` and the `RangeSet` of the same frames hold the same clips.

use bitvec::prelude::{BitSlice, Lsb0};

use super::document::ClipId;
use super::filters::{self, Filter};
use super::mask::{self, Bits, words_for};
use super::range::Range;
use super::range_set::RangeSet;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaskSet {
    clips: Vec<ClipId>,
    frames: Vec<u32>,
    word_offsets: Vec<u32>,
    bits: Bits,
}

impl Default for MaskSet {
    fn default() -> Self {
        Self::new()
    }
}

impl MaskSet {
    pub fn new() -> Self {
        Self {
            clips: Vec::new(),
            frames: Vec::new(),
            word_offsets: vec![0],
            bits: Bits::new(),
        }
    }

    pub fn clear(&mut self) {
        self.clips.clear();
        self.frames.clear();
        self.word_offsets.clear();
        self.word_offsets.push(0);
        self.bits.clear();
    }

    /// Rasterizes a range set; `clip_frames[c]` is the length of clip `c`.
    pub fn from_range_set(set: &RangeSet, clip_frames: &[u32]) -> Self {
        let mut out = Self::new();
        let words: usize = set
            .clips()
            .iter()
            .map(|&c| words_for(clip_frames[c as usize]))
            .sum();
        out.bits.reserve(words * 64);
        for (c, ranges) in set.iter() {
            let frames = clip_frames[c as usize];
            let w = out.open_clip(frames);
            mask::rasterize_words(ranges, w);
            out.close_clip(c, frames);
        }
        out
    }

    /// Appends zeroed words for a clip of `frames` frames and returns them for writing. (The
    /// length is always a whole number of words, so `resize` zeroes whole words.)
    pub(crate) fn open_clip(&mut self, frames: u32) -> &mut [u64] {
        let start = self.bits.len() / 64;
        let n = words_for(frames);
        self.bits.resize((start + n) * 64, false);
        &mut self.bits.as_raw_mut_slice()[start..start + n]
    }

    /// Keeps the clip opened last if any bit is set, drops it otherwise.
    pub(crate) fn close_clip(&mut self, clip: ClipId, frames: u32) {
        let start = *self.word_offsets.last().unwrap_or(&0) as usize;
        let end = self.bits.len() / 64;
        if self.bits.as_raw_slice()[start..end].iter().any(|&w| w != 0) {
            self.clips.push(clip);
            self.frames.push(frames);
            self.word_offsets.push(end as u32);
        } else {
            self.bits.truncate(start * 64);
        }
    }

    /// Appends a clip from its words (copied; bits past `frames` must be zero).
    pub fn push_clip_words(&mut self, clip: ClipId, frames: u32, words: &[u64]) {
        debug_assert!(self.clips.last().is_none_or(|&c| c < clip));
        let w = self.open_clip(frames);
        w.copy_from_slice(&words[..w.len()]);
        self.close_clip(clip, frames);
    }

    pub fn clips(&self) -> &[ClipId] {
        &self.clips
    }

    /// The words of the `i`-th stored clip.
    pub fn slot_words(&self, i: usize) -> &[u64] {
        &self.bits.as_raw_slice()[self.word_offsets[i] as usize..self.word_offsets[i + 1] as usize]
    }

    /// The length in frames of the `i`-th stored clip.
    pub fn slot_frames(&self, i: usize) -> u32 {
        self.frames[i]
    }

    /// The words of `clip`, if stored.
    pub fn clip_words(&self, clip: ClipId) -> Option<&[u64]> {
        self.clips
            .binary_search(&clip)
            .ok()
            .map(|i| self.slot_words(i))
    }

    /// The bits of `clip` (one per frame), if stored.
    pub fn clip_bits(&self, clip: ClipId) -> Option<&BitSlice<u64, Lsb0>> {
        self.clips.binary_search(&clip).ok().map(|i| {
            let s = self.word_offsets[i] as usize * 64;
            &self.bits[s..s + self.frames[i] as usize]
        })
    }

    pub fn is_empty(&self) -> bool {
        self.clips.is_empty()
    }

    pub fn total_frames(&self) -> u64 {
        self.bits
            .as_raw_slice()
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    /// Heap bytes held (capacity, not length).
    pub fn memory_bytes(&self) -> usize {
        self.clips.capacity() * size_of::<ClipId>()
            + self.frames.capacity() * size_of::<u32>()
            + self.word_offsets.capacity() * size_of::<u32>()
            + self.bits.capacity().div_ceil(64) * size_of::<u64>()
    }

    /// Appends the ranges of every clip to `out` (which is cleared first).
    pub fn to_range_set(&self, out: &mut RangeSet) {
        out.clear();
        let mut buf = Vec::new();
        for i in 0..self.clips.len() {
            buf.clear();
            mask::vectorize_words_append(self.slot_words(i), self.frames[i], &mut buf);
            out.push_clip(self.clips[i], &buf);
        }
    }

    fn merge_walk(
        &self,
        other: &Self,
        out: &mut MaskSet,
        keep_a: bool,
        keep_b: bool,
        both: fn(&[u64], &[u64], &mut [u64]),
    ) {
        out.clear();
        let (mut i, mut j) = (0usize, 0usize);
        let (na, nb) = (self.clips.len(), other.clips.len());
        while i < na || j < nb {
            let ca = self.clips.get(i).copied().unwrap_or(ClipId::MAX);
            let cb = other.clips.get(j).copied().unwrap_or(ClipId::MAX);
            if i < na && (j >= nb || ca < cb) {
                if keep_a {
                    out.copy_slot(self, i);
                }
                i += 1;
            } else if j < nb && (i >= na || cb < ca) {
                if keep_b {
                    out.copy_slot(other, j);
                }
                j += 1;
            } else {
                let frames = self.frames[i].min(other.frames[j]);
                let n = words_for(frames);
                let (wa, wb) = (&self.slot_words(i)[..n], &other.slot_words(j)[..n]);
                let w = out.open_clip(frames);
                both(wa, wb, w);
                if let Some(last) = w.last_mut() {
                    *last &= mask::tail_mask(frames);
                }
                out.close_clip(ca, frames);
                i += 1;
                j += 1;
            }
        }
    }

    /// Appends a whole stored clip of `src` (its words are copied without being looked at).
    fn copy_slot(&mut self, src: &MaskSet, i: usize) {
        let words = src.slot_words(i);
        self.bits.extend_from_raw_slice(words);
        self.clips.push(src.clips[i]);
        self.frames.push(src.frames[i]);
        self.word_offsets.push((self.bits.len() / 64) as u32);
    }

    pub fn union(&self, other: &Self, out: &mut MaskSet) {
        self.merge_walk(other, out, true, true, mask::or_words);
    }

    pub fn intersection(&self, other: &Self, out: &mut MaskSet) {
        self.merge_walk(other, out, false, false, mask::and_words);
    }

    pub fn difference(&self, other: &Self, out: &mut MaskSet) {
        self.merge_walk(other, out, true, false, mask::and_not_words);
    }

    pub fn symmetric_difference(&self, other: &Self, out: &mut MaskSet) {
        self.merge_walk(other, out, true, true, mask::xor_words);
    }

    /// `out = !self` within every clip: `clip_frames[c]` is the length of clip `c`.
    pub fn complement(&self, clip_frames: &[u32], out: &mut MaskSet) {
        out.clear();
        let mut i = 0usize;
        for (c, &frames) in clip_frames.iter().enumerate() {
            let c = c as ClipId;
            while i < self.clips.len() && self.clips[i] < c {
                i += 1;
            }
            let stored = self.clips.get(i) == Some(&c);
            let w = out.open_clip(frames);
            if stored {
                let src = &self.bits.as_raw_slice()[self.word_offsets[i] as usize..];
                mask::not_words(&src[..w.len()], frames, w);
            } else {
                w.fill(u64::MAX);
                if let Some(last) = w.last_mut() {
                    *last &= mask::tail_mask(frames);
                }
            }
            out.close_clip(c, frames);
        }
    }

    /// `out = filter(self, arg)` per clip: the filters work on ranges, so each clip is vectorized,
    /// filtered and rasterized again.
    pub fn filter(&self, filter: Filter, arg: u32, out: &mut MaskSet) {
        out.clear();
        let (mut ranges, mut filtered): (Vec<Range>, Vec<Range>) = (Vec::new(), Vec::new());
        for i in 0..self.clips.len() {
            let frames = self.frames[i];
            ranges.clear();
            mask::vectorize_words_append(self.slot_words(i), frames, &mut ranges);
            filters::apply(filter, arg, &ranges, frames, self.clips[i], &mut filtered);
            let w = out.open_clip(frames);
            mask::rasterize_words(&filtered, w);
            out.close_clip(self.clips[i], frames);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(list: &[(u32, u32)]) -> Vec<Range> {
        list.iter().map(|&(s, e)| Range::new(s, e)).collect()
    }

    #[test]
    fn mask_set_ops_match_range_set_ops() {
        let frames = [70u32, 8, 130, 3];
        let a = RangeSet::from_clips([(0, &r(&[(0, 5), (60, 70)])[..]), (2, &r(&[(0, 100)])[..])]);
        let b = RangeSet::from_clips([(1, &r(&[(3, 4)])[..]), (2, &r(&[(64, 130)])[..])]);
        let (ma, mb) = (
            MaskSet::from_range_set(&a, &frames),
            MaskSet::from_range_set(&b, &frames),
        );
        let (mut rs, mut ms, mut back) = (RangeSet::new(), MaskSet::new(), RangeSet::new());
        type Rop = fn(&RangeSet, &RangeSet, &mut RangeSet);
        type Mop = fn(&MaskSet, &MaskSet, &mut MaskSet);
        let ops: [(Rop, Mop); 4] = [
            (RangeSet::union, MaskSet::union),
            (RangeSet::intersection, MaskSet::intersection),
            (RangeSet::difference, MaskSet::difference),
            (
                RangeSet::symmetric_difference,
                MaskSet::symmetric_difference,
            ),
        ];
        for (rop, mop) in ops {
            rop(&a, &b, &mut rs);
            mop(&ma, &mb, &mut ms);
            ms.to_range_set(&mut back);
            assert_eq!(back, rs);
            assert_eq!(ms.clips(), rs.clips());
        }
        a.complement(&frames, &mut rs);
        ma.complement(&frames, &mut ms);
        ms.to_range_set(&mut back);
        assert_eq!(back, rs);
        assert!(ma.clip_bits(0).unwrap()[60]);
        assert_eq!(ma.clip_bits(0).unwrap().len(), 70);
    }
}
