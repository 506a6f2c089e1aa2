//! `RangeSet`: the canonical ranges of many clips, packed.
//!
//! Layout: `clips` (sorted clip ids, each with at least one range), `offsets` (`clips.len() + 1`
//! entries; clip `i` owns `ranges[offsets[i]..offsets[i + 1]]`) and one flat `ranges` array. Each
//! clip's slice is canonical. Set operations walk both clip-id lists in order; a clip present on one
//! side only is copied whole (union, difference, symmetric difference) or skipped (intersection)
//! without looking at its ranges.

use super::document::ClipId;
use super::filters::{self, Filter};
use super::range::{self, Range, SetOp};

/// True when bit `clip` is set in `skip` (an empty slice skips nothing).
#[inline]
fn skipped(skip: &[u64], clip: ClipId) -> bool {
    skip.get(clip as usize / 64)
        .is_some_and(|w| (w >> (clip % 64)) & 1 == 1)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeSet {
    clips: Vec<ClipId>,
    offsets: Vec<u32>,
    ranges: Vec<Range>,
}

impl Default for RangeSet {
    fn default() -> Self {
        Self::new()
    }
}

impl RangeSet {
    pub fn new() -> Self {
        Self {
            clips: Vec::new(),
            offsets: vec![0],
            ranges: Vec::new(),
        }
    }

    pub fn clear(&mut self) {
        self.clips.clear();
        self.offsets.clear();
        self.offsets.push(0);
        self.ranges.clear();
    }

    /// Builds a set from `(clip, ranges)` pairs in any order; each list is canonicalised and clips
    /// given twice are merged.
    pub fn from_clips<'a>(items: impl IntoIterator<Item = (ClipId, &'a [Range])>) -> Self {
        let mut v: Vec<(ClipId, Vec<Range>)> =
            items.into_iter().map(|(c, r)| (c, r.to_vec())).collect();
        v.sort_by_key(|(c, _)| *c);
        let mut set = Self::new();
        let mut i = 0;
        while i < v.len() {
            let clip = v[i].0;
            let mut all = Vec::new();
            while i < v.len() && v[i].0 == clip {
                all.extend_from_slice(&v[i].1);
                i += 1;
            }
            range::canonicalize(&mut all);
            set.push_clip(clip, &all);
        }
        set
    }

    /// Appends a clip. `clip` must be greater than every clip already in the set and `ranges`
    /// canonical; an empty list adds nothing.
    pub fn push_clip(&mut self, clip: ClipId, ranges: &[Range]) {
        debug_assert!(
            self.clips.last().is_none_or(|&c| c < clip),
            "clips must be pushed in order"
        );
        debug_assert!(range::is_canonical(ranges));
        if ranges.is_empty() {
            return;
        }
        self.ranges.extend_from_slice(ranges);
        self.clips.push(clip);
        self.offsets.push(self.ranges.len() as u32);
    }

    /// Closes a clip whose ranges were appended to `self.ranges` since the last clip; adds nothing
    /// if none were.
    pub(crate) fn end_clip(&mut self, clip: ClipId) {
        if self.ranges.len() > *self.offsets.last().unwrap_or(&0) as usize {
            self.clips.push(clip);
            self.offsets.push(self.ranges.len() as u32);
        }
    }

    /// The flat range array, for appending the ranges of the next clip before [`Self::end_clip`].
    pub(crate) fn flat_mut(&mut self) -> &mut Vec<Range> {
        &mut self.ranges
    }

    /// Sorted ids of the clips with at least one range.
    pub fn clips(&self) -> &[ClipId] {
        &self.clips
    }

    /// The flat range array.
    pub fn flat_ranges(&self) -> &[Range] {
        &self.ranges
    }

    /// The ranges of the `i`-th stored clip.
    pub fn slot(&self, i: usize) -> &[Range] {
        &self.ranges[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The ranges of `clip` (empty when absent).
    pub fn clip_ranges(&self, clip: ClipId) -> &[Range] {
        match self.clips.binary_search(&clip) {
            Ok(i) => self.slot(i),
            Err(_) => &[],
        }
    }

    /// `(clip, ranges)` for every stored clip, in clip order.
    pub fn iter(&self) -> impl Iterator<Item = (ClipId, &[Range])> + '_ {
        self.clips
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, self.slot(i)))
    }

    /// `(clip, number of ranges)` for every stored clip, in clip order.
    pub fn clip_counts(&self) -> impl Iterator<Item = (ClipId, usize)> + '_ {
        self.clips
            .iter()
            .zip(self.offsets.windows(2))
            .map(|(&c, w)| (c, (w[1] - w[0]) as usize))
    }

    pub fn is_empty(&self) -> bool {
        self.clips.is_empty()
    }

    pub fn range_count(&self) -> usize {
        self.ranges.len()
    }

    pub fn total_frames(&self) -> u64 {
        range::total_frames(&self.ranges)
    }

    /// Heap bytes held (capacity, not length).
    pub fn memory_bytes(&self) -> usize {
        self.clips.capacity() * size_of::<ClipId>()
            + self.offsets.capacity() * size_of::<u32>()
            + self.ranges.capacity() * size_of::<Range>()
    }

    /// Walks the clips of `self` and `other` in order, calling `both` for shared clips and copying
    /// one-sided clips when `keep_a` / `keep_b` say so.
    fn merge_walk(
        &self,
        other: &Self,
        out: &mut RangeSet,
        keep_a: bool,
        keep_b: bool,
        both: fn(&[Range], &[Range], &mut Vec<Range>),
        skip: &[u64],
    ) {
        out.clear();
        let (mut i, mut j) = (0usize, 0usize);
        let (na, nb) = (self.clips.len(), other.clips.len());
        while i < na || j < nb {
            let ca = self.clips.get(i).copied().unwrap_or(ClipId::MAX);
            let cb = other.clips.get(j).copied().unwrap_or(ClipId::MAX);
            if i < na && (j >= nb || ca < cb) {
                if keep_a && !skipped(skip, ca) {
                    out.push_clip(ca, self.slot(i));
                }
                i += 1;
            } else if j < nb && (i >= na || cb < ca) {
                if keep_b && !skipped(skip, cb) {
                    out.push_clip(cb, other.slot(j));
                }
                j += 1;
            } else {
                if !skipped(skip, ca) {
                    both(self.slot(i), other.slot(j), &mut out.ranges);
                    out.end_clip(ca);
                }
                i += 1;
                j += 1;
            }
        }
    }

    /// `out = self | other`.
    pub fn union(&self, other: &Self, out: &mut RangeSet) {
        self.merge_walk(other, out, true, true, range::union_append, &[]);
    }

    /// `out = self & other`.
    pub fn intersection(&self, other: &Self, out: &mut RangeSet) {
        self.merge_walk(other, out, false, false, range::intersection_append, &[]);
    }

    /// `out = self - other`.
    pub fn difference(&self, other: &Self, out: &mut RangeSet) {
        self.merge_walk(other, out, true, false, range::difference_append, &[]);
    }

    /// `out = self ^ other`.
    pub fn symmetric_difference(&self, other: &Self, out: &mut RangeSet) {
        self.merge_walk(
            other,
            out,
            true,
            true,
            range::symmetric_difference_append,
            &[],
        );
    }

    /// `op(self, other)` on every clip except those whose bit is set in `skip` (bit `c % 64` of
    /// word `c / 64`); used by the `auto` engine, which evaluates those clips with masks.
    pub(crate) fn op_skipping(&self, op: SetOp, other: &Self, out: &mut RangeSet, skip: &[u64]) {
        match op {
            SetOp::Union => self.merge_walk(other, out, true, true, range::union_append, skip),
            SetOp::Intersection => {
                self.merge_walk(other, out, false, false, range::intersection_append, skip)
            }
            SetOp::Difference => {
                self.merge_walk(other, out, true, false, range::difference_append, skip)
            }
            SetOp::SymmetricDifference => self.merge_walk(
                other,
                out,
                true,
                true,
                range::symmetric_difference_append,
                skip,
            ),
        }
    }

    /// `out = !self` within every clip: `clip_frames[c]` is the length of clip `c`.
    pub fn complement(&self, clip_frames: &[u32], out: &mut RangeSet) {
        self.complement_skipping(clip_frames, out, &[]);
    }

    /// [`Self::complement`] except on the clips set in `skip`.
    pub(crate) fn complement_skipping(
        &self,
        clip_frames: &[u32],
        out: &mut RangeSet,
        skip: &[u64],
    ) {
        out.clear();
        let mut i = 0usize;
        for (c, &frames) in clip_frames.iter().enumerate() {
            let c = c as ClipId;
            while i < self.clips.len() && self.clips[i] < c {
                i += 1;
            }
            if skipped(skip, c) {
                continue;
            }
            let own: &[Range] = if self.clips.get(i) == Some(&c) {
                self.slot(i)
            } else {
                &[]
            };
            range::complement_append(own, frames, &mut out.ranges);
            out.end_clip(c);
        }
    }

    /// `out = filter(self, arg)` applied to each clip.
    pub fn filter(&self, filter: Filter, arg: u32, clip_frames: &[u32], out: &mut RangeSet) {
        out.clear();
        for (i, &c) in self.clips.iter().enumerate() {
            let frames = clip_frames.get(c as usize).copied().unwrap_or(0);
            filters::apply_append(filter, arg, self.slot(i), frames, c, &mut out.ranges);
            out.end_clip(c);
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
    fn set_ops_copy_skip_and_combine_clips() {
        let a = RangeSet::from_clips([(0, &r(&[(0, 5)])[..]), (2, &r(&[(0, 10)])[..])]);
        let b = RangeSet::from_clips([(1, &r(&[(3, 4)])[..]), (2, &r(&[(5, 20)])[..])]);
        let mut out = RangeSet::new();
        a.union(&b, &mut out);
        assert_eq!(out.clips(), &[0, 1, 2]);
        assert_eq!(out.clip_ranges(2), &r(&[(0, 20)])[..]);
        a.intersection(&b, &mut out);
        assert_eq!(out.clips(), &[2]);
        assert_eq!(out.clip_ranges(2), &r(&[(5, 10)])[..]);
        a.difference(&b, &mut out);
        assert_eq!(out.clips(), &[0, 2]);
        assert_eq!(out.clip_ranges(2), &r(&[(0, 5)])[..]);
        b.difference(&b, &mut out);
        assert!(out.is_empty());
        a.complement(&[5, 8, 10, 3], &mut out);
        assert_eq!(out.clips(), &[1, 3]);
        assert_eq!(out.clip_ranges(1), &r(&[(0, 8)])[..]);
        a.symmetric_difference(&b, &mut out);
        assert_eq!(out.clip_ranges(2), &r(&[(0, 5), (10, 20)])[..]);
    }
}
