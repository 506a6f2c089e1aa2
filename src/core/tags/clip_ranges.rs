//! One tag's ranges on every clip, in one flat buffer.
//!
//! A library-scale project has about as many (tag, clip) lists as ranges (the stress project:
//! 1,000,000 ranges in 786,699 lists), so a map of `Vec`s spends three to four times the bytes of
//! the ranges on list headers, map nodes and allocator chunks (docs/PERFORMANCE.md, "Big
//! projects"). Here a tag keeps three arrays: the clips that have ranges (sorted), where each
//! clip's list ends, and every range back to back: 8 bytes a list and 8 bytes a range.
//!
//! The API reads like the map it replaces (`get`, `insert`, `remove`, `iter`, `keys`, `values`), so
//! the edit path and the engines did not change shape. An insert or removal in the middle moves the
//! ranges after it (one `memmove` of the tag's tail); bulk work goes through
//! [`ClipRanges::push`] in clip order, [`ClipRangesBuilder`] in any order, [`ClipRanges::set_many`]
//! and [`ClipRanges::rebuild`], which are linear. A tag holds at most `u32::MAX` ranges (far past
//! the loaders' limits).

use std::collections::BTreeMap;
use std::fmt;

use super::range::Range;

/// Index of a clip in [`TagDocument::clips`](super::TagDocument::clips) (defined here, below the
/// document, so the document can hold this type without an import circle; re-exported there).
pub type ClipId = u32;

/// Every clip's canonical range list of one tag: clips without ranges have no entry (an empty list
/// given to [`insert`](Self::insert) removes the clip's entry).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct ClipRanges {
    /// Clips with ranges, ascending and unique.
    clips: Vec<ClipId>,
    /// `ends[i]`: one past the last range of `clips[i]` in `ranges` (the list starts at
    /// `ends[i - 1]`, or 0).
    ends: Vec<u32>,
    /// Every list, in clip order.
    ranges: Vec<Range>,
}

impl ClipRanges {
    /// No ranges.
    pub const fn new() -> Self {
        Self {
            clips: Vec::new(),
            ends: Vec::new(),
            ranges: Vec::new(),
        }
    }

    /// Number of clips with ranges.
    #[inline]
    pub fn len(&self) -> usize {
        self.clips.len()
    }

    /// True when no clip has ranges.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.clips.is_empty()
    }

    /// Number of ranges over all clips.
    #[inline]
    pub fn range_count(&self) -> usize {
        self.ranges.len()
    }

    #[inline]
    fn span(&self, i: usize) -> std::ops::Range<usize> {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        start..self.ends[i] as usize
    }

    #[inline]
    fn slot(&self, clip: ClipId) -> Result<usize, usize> {
        // Appends and reads in clip order are the common case: check the last entry first.
        match self.clips.last() {
            Some(&last) if last < clip => Err(self.clips.len()),
            Some(&last) if last == clip => Ok(self.clips.len() - 1),
            _ => self.clips.binary_search(&clip),
        }
    }

    /// The list of `clip`, if it has ranges.
    #[inline]
    pub fn get(&self, clip: &ClipId) -> Option<&[Range]> {
        self.slot(*clip).ok().map(|i| &self.ranges[self.span(i)])
    }

    /// True when `clip` has ranges.
    #[inline]
    pub fn contains_key(&self, clip: &ClipId) -> bool {
        self.slot(*clip).is_ok()
    }

    /// Sets the list of `clip` (an empty list removes its entry); returns the old list.
    pub fn insert(&mut self, clip: ClipId, list: Vec<Range>) -> Option<Vec<Range>> {
        self.set(clip, &list)
    }

    /// Sets the list of `clip` from a slice (an empty one removes its entry); returns the old list.
    pub fn set(&mut self, clip: ClipId, list: &[Range]) -> Option<Vec<Range>> {
        match self.slot(clip) {
            Ok(i) => {
                let span = self.span(i);
                let old = self.ranges[span.clone()].to_vec();
                if list.is_empty() {
                    self.remove_slot(i);
                } else {
                    self.replace_span(i, span, list);
                }
                Some(old)
            }
            Err(i) => {
                if !list.is_empty() {
                    let at = if i == 0 { 0 } else { self.ends[i - 1] as usize };
                    self.clips.insert(i, clip);
                    self.ends.insert(i, at as u32);
                    self.replace_span(i, at..at, list);
                }
                None
            }
        }
    }

    /// Puts `list` where `span` was (the list of slot `i`) and moves the later ends.
    fn replace_span(&mut self, i: usize, span: std::ops::Range<usize>, list: &[Range]) {
        let delta = list.len() as i64 - span.len() as i64;
        if span.len() == list.len() {
            self.ranges[span].copy_from_slice(list);
        } else {
            self.ranges.splice(span, list.iter().copied());
        }
        for e in &mut self.ends[i..] {
            *e = (i64::from(*e) + delta) as u32;
        }
    }

    fn remove_slot(&mut self, i: usize) {
        let span = self.span(i);
        let n = span.len() as u32;
        self.ranges.drain(span);
        self.clips.remove(i);
        self.ends.remove(i);
        for e in &mut self.ends[i..] {
            *e -= n;
        }
    }

    /// Removes the list of `clip`; returns it.
    pub fn remove(&mut self, clip: &ClipId) -> Option<Vec<Range>> {
        let i = self.slot(*clip).ok()?;
        let old = self.ranges[self.span(i)].to_vec();
        self.remove_slot(i);
        Some(old)
    }

    /// Appends `list` for `clip` when `clip` is after every clip present (the fast path of
    /// loaders and generators); otherwise sets it as [`set`](Self::set) does.
    pub fn push(&mut self, clip: ClipId, list: &[Range]) {
        if list.is_empty() {
            self.remove(&clip);
        } else if self.clips.last().is_none_or(|&l| l < clip) {
            self.ranges.extend_from_slice(list);
            self.clips.push(clip);
            self.ends.push(self.ranges.len() as u32);
        } else {
            self.set(clip, list);
        }
    }

    /// Appends one range to the list of `clip`, which must be the last clip present or after it
    /// (generators that emit clip after clip). Returns false, changing nothing, when `clip` is
    /// before the last clip.
    pub fn push_range(&mut self, clip: ClipId, r: Range) -> bool {
        match self.clips.last() {
            Some(&l) if l == clip => {
                self.ranges.push(r);
                *self.ends.last_mut().expect("an end per clip") += 1;
                true
            }
            Some(&l) if l > clip => false,
            _ => {
                self.ranges.push(r);
                self.clips.push(clip);
                self.ends.push(self.ranges.len() as u32);
                true
            }
        }
    }

    /// Sets the lists of many clips at once (each clip at most once; an empty list removes the
    /// clip): one linear merge with the lists present, where setting them one by one would move
    /// the tag's tail once per clip (an auto-tag pass over a whole library, and its undo).
    pub fn set_many(&mut self, mut updates: Vec<(ClipId, Vec<Range>)>) {
        updates.sort_unstable_by_key(|(c, _)| *c);
        debug_assert!(
            updates.windows(2).all(|w| w[0].0 < w[1].0),
            "a clip given twice"
        );
        // Exact sizes, so the buffer holds no spare room after the pass.
        let (mut ranges, mut clips) = (self.ranges.len(), self.clips.len());
        for (c, l) in &updates {
            let old = self.get(c).map(<[Range]>::len);
            ranges = (ranges + l.len()).saturating_sub(old.unwrap_or(0));
            clips = (clips + usize::from(!l.is_empty())).saturating_sub(usize::from(old.is_some()));
        }
        let old = std::mem::take(self);
        self.ranges.reserve_exact(ranges);
        self.clips.reserve_exact(clips);
        self.ends.reserve_exact(clips);
        let mut it = old.iter().peekable();
        for (c, list) in &updates {
            while let Some((&k, l)) = it.next_if(|(k, _)| **k < *c) {
                self.push(k, l);
            }
            it.next_if(|(k, _)| **k == *c);
            self.push(*c, list);
        }
        for (&k, l) in it {
            self.push(k, l);
        }
    }

    /// Every list passed through `f` (which may change its length, or empty it to drop the
    /// clip), in one linear pass.
    pub fn rebuild(&mut self, mut f: impl FnMut(ClipId, &mut Vec<Range>)) {
        let old = std::mem::take(self);
        let mut buf = Vec::new();
        self.ranges.reserve(old.ranges.len());
        for (&c, list) in old.iter() {
            buf.clear();
            buf.extend_from_slice(list);
            f(c, &mut buf);
            self.push(c, &buf);
        }
    }

    /// Removes every list.
    pub fn clear(&mut self) {
        self.clips.clear();
        self.ends.clear();
        self.ranges.clear();
    }

    /// Renumbers clips at or after `at` by one: up for an insertion, down for a removal (the list
    /// of `at` must already be gone when removing). Returns true when any clip moved.
    pub fn shift_clips(&mut self, at: ClipId, insert: bool) -> bool {
        let from = self.clips.partition_point(|&c| c < at);
        assert!(
            insert || self.clips.get(from) != Some(&at),
            "the list of clip {at} must be removed before the clips after it move down"
        );
        for c in &mut self.clips[from..] {
            *c = if insert { *c + 1 } else { *c - 1 };
        }
        from < self.clips.len()
    }

    /// Clips with ranges, ascending.
    #[inline]
    pub fn keys(&self) -> std::slice::Iter<'_, ClipId> {
        self.clips.iter()
    }

    /// Each clip's list, in clip order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &[Range]> + ExactSizeIterator + '_ {
        (0..self.clips.len()).map(|i| &self.ranges[self.span(i)])
    }

    /// `(clip, list)` in clip order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { map: self, i: 0 }
    }

    /// Releases spare capacity (after a load).
    pub fn shrink_to_fit(&mut self) {
        self.clips.shrink_to_fit();
        self.ends.shrink_to_fit();
        self.ranges.shrink_to_fit();
    }

    /// Bytes of heap held (capacity, not length).
    pub fn heap_bytes(&self) -> usize {
        self.clips.capacity() * size_of::<ClipId>()
            + self.ends.capacity() * size_of::<u32>()
            + self.ranges.capacity() * size_of::<Range>()
    }
}

/// Lists appended in any clip order (a loader reading a file whose lists are keyed by clip name in
/// another order than the clips), put in clip order once by [`finish`](Self::finish): linear in
/// the ranges plus a sort of the clips, where inserting each list in place would move the tail of
/// the buffer every time.
#[derive(Debug)]
pub struct ClipRangesBuilder {
    parts: ClipRanges,
    /// True while every clip pushed came after the one before.
    sorted: bool,
}

impl Default for ClipRangesBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ClipRangesBuilder {
    /// Empty.
    pub fn new() -> Self {
        Self {
            parts: ClipRanges::new(),
            sorted: true,
        }
    }

    /// Appends the list of `clip` (empty lists are skipped; of a clip given twice, the later list
    /// is kept).
    pub fn push(&mut self, clip: ClipId, list: &[Range]) {
        if list.is_empty() {
            return;
        }
        let p = &mut self.parts;
        if p.clips.last().is_some_and(|&l| l >= clip) {
            self.sorted = false;
        }
        p.ranges.extend_from_slice(list);
        p.clips.push(clip);
        p.ends.push(p.ranges.len() as u32);
    }

    /// The lists in clip order, without spare capacity.
    pub fn finish(self) -> ClipRanges {
        let mut p = self.parts;
        if !self.sorted {
            // Stable, so of a clip given twice the later list is pushed last and wins.
            let mut order: Vec<usize> = (0..p.clips.len()).collect();
            order.sort_by_key(|&i| p.clips[i]);
            let mut out = ClipRanges::new();
            out.clips.reserve_exact(order.len());
            out.ends.reserve_exact(order.len());
            out.ranges.reserve_exact(p.ranges.len());
            for i in order {
                let span = p.span(i);
                out.push(p.clips[i], &p.ranges[span]);
            }
            p = out;
        }
        p.shrink_to_fit();
        p
    }
}

/// `(clip, list)` in clip order.
#[derive(Clone)]
pub struct Iter<'a> {
    map: &'a ClipRanges,
    i: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a ClipId, &'a [Range]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let m = self.map;
        let c = m.clips.get(self.i)?;
        let list = &m.ranges[m.span(self.i)];
        self.i += 1;
        Some((c, list))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.map.clips.len() - self.i;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a ClipRanges {
    type Item = (&'a ClipId, &'a [Range]);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl fmt::Debug for ClipRanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Lists in any clip order (through [`ClipRangesBuilder`]); of a clip given twice, the last.
impl<L: AsRef<[Range]>> FromIterator<(ClipId, L)> for ClipRanges {
    fn from_iter<I: IntoIterator<Item = (ClipId, L)>>(iter: I) -> Self {
        let mut b = ClipRangesBuilder::new();
        for (c, l) in iter {
            b.push(c, l.as_ref());
        }
        b.finish()
    }
}

impl From<BTreeMap<ClipId, Vec<Range>>> for ClipRanges {
    fn from(map: BTreeMap<ClipId, Vec<Range>>) -> Self {
        map.into_iter().collect()
    }
}

impl<const N: usize> From<[(ClipId, Vec<Range>); N]> for ClipRanges {
    fn from(lists: [(ClipId, Vec<Range>); N]) -> Self {
        lists.into_iter().collect()
    }
}

impl std::ops::Index<&ClipId> for ClipRanges {
    type Output = [Range];

    fn index(&self, clip: &ClipId) -> &[Range] {
        self.get(clip).expect("the clip has ranges")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(a: u32, b: u32) -> Range {
        Range::new(a, b)
    }

    /// The map it replaces, as the model.
    fn model(m: &ClipRanges) -> BTreeMap<ClipId, Vec<Range>> {
        m.iter().map(|(&c, l)| (c, l.to_vec())).collect()
    }

    #[test]
    fn edits_agree_with_a_map_of_lists() {
        let mut m = ClipRanges::new();
        let mut want: BTreeMap<ClipId, Vec<Range>> = BTreeMap::new();
        // A fixed pseudo-random walk of inserts, replacements and removals.
        let mut s = 0x2545_f491_u32;
        for _ in 0..2000 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let clip = s % 23;
            let n = (s >> 8) % 4;
            let list: Vec<Range> = (0..n)
                .map(|k| r(k * 10, k * 10 + 1 + (s >> 20) % 5))
                .collect();
            match (s >> 4) % 5 {
                0 => {
                    assert_eq!(m.remove(&clip), want.remove(&clip));
                }
                1 => {
                    let shifted = m.shift_clips(clip, true);
                    let moved = want.split_off(&clip);
                    assert_eq!(shifted, !moved.is_empty());
                    want.extend(moved.into_iter().map(|(c, l)| (c + 1, l)));
                }
                _ => {
                    let old = if list.is_empty() {
                        want.remove(&clip)
                    } else {
                        want.insert(clip, list.clone())
                    };
                    assert_eq!(m.insert(clip, list), old);
                }
            }
            assert_eq!(model(&m), want);
            assert_eq!(m.len(), want.len());
            assert_eq!(m.range_count(), want.values().map(Vec::len).sum::<usize>());
            for c in 0..30 {
                assert_eq!(m.get(&c), want.get(&c).map(Vec::as_slice));
            }
        }
    }

    #[test]
    fn bulk_forms_match_one_by_one_edits() {
        let lists = vec![(5, vec![r(0, 2)]), (1, vec![r(1, 3), r(4, 6)]), (9, vec![])];
        let a: ClipRanges = lists.clone().into_iter().collect();
        let mut b = ClipRanges::new();
        for (c, l) in lists {
            b.insert(c, l);
        }
        assert_eq!(a, b);
        assert_eq!(a.keys().copied().collect::<Vec<_>>(), [1, 5]);
        assert_eq!(&a[&1], &[r(1, 3), r(4, 6)]);
        // push_range appends to the last clip or starts a later one, never an earlier one.
        let mut p = ClipRanges::new();
        assert!(p.push_range(2, r(0, 1)));
        assert!(p.push_range(2, r(3, 4)));
        assert!(p.push_range(7, r(0, 1)));
        assert!(!p.push_range(1, r(0, 1)));
        assert_eq!(
            model(&p),
            BTreeMap::from([(2, vec![r(0, 1), r(3, 4)]), (7, vec![r(0, 1)])])
        );
        // rebuild: lengths change, an emptied list drops its clip.
        p.rebuild(|c, l| {
            if c == 7 {
                l.clear();
            } else {
                l.push(r(9, 10));
            }
        });
        assert_eq!(
            model(&p),
            BTreeMap::from([(2, vec![r(0, 1), r(3, 4), r(9, 10)])])
        );
        // Shift down past a removed clip; of a clip given twice, the later list.
        let mut q: ClipRanges = [(0, vec![r(0, 1)]), (4, vec![r(5, 6)]), (0, vec![r(0, 2)])].into();
        assert!(q.shift_clips(1, false));
        assert_eq!(
            model(&q),
            BTreeMap::from([(0, vec![r(0, 2)]), (3, vec![r(5, 6)])])
        );
        assert!(!q.shift_clips(4, true));
        assert_eq!(format!("{q:?}"), format!("{:?}", model(&q)));
    }

    #[test]
    fn set_many_equals_setting_one_by_one() {
        let mut s = 0x9e37_79b9_u32;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        };
        for _ in 0..200 {
            let mut base = ClipRanges::new();
            for c in 0..20 {
                if next() % 3 != 0 {
                    base.push(c, &[r(c, c + 1 + next() % 4)]);
                }
            }
            let mut updates: Vec<(ClipId, Vec<Range>)> = Vec::new();
            for c in 0..25 {
                if next() % 2 == 0 {
                    let n = next() % 3;
                    updates.push((c, (0..n).map(|k| r(k * 10, k * 10 + 2)).collect()));
                }
            }
            // Any order in, the same result.
            updates.reverse();
            let mut one_by_one = base.clone();
            for (c, l) in &updates {
                one_by_one.insert(*c, l.clone());
            }
            base.set_many(updates);
            assert_eq!(base, one_by_one);
        }
    }

    #[test]
    fn the_builder_puts_lists_of_any_order_in_clip_order() {
        let lists = [
            (9, vec![r(0, 2)]),
            (1, vec![r(1, 3), r(4, 6)]),
            (4, vec![]),
            (5, vec![r(7, 8)]),
        ];
        let mut b = ClipRangesBuilder::new();
        for (c, l) in &lists {
            b.push(*c, l);
        }
        let built = b.finish();
        let mut one_by_one = ClipRanges::new();
        for (c, l) in &lists {
            one_by_one.insert(*c, l.clone());
        }
        assert_eq!(built, one_by_one);
        assert_eq!(built.keys().copied().collect::<Vec<_>>(), [1, 5, 9]);
        assert_eq!(
            built.heap_bytes(),
            3 * 4 + 3 * 4 + 4 * 8,
            "no spare capacity"
        );
    }
}
