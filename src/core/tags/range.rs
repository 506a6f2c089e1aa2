//! Half-open frame ranges.

/// A half-open range of frames `[start, stop)`.
///
/// Frames are `u32`: a clip never has negative frames, and 4 billion frames (over a year at 120 fps)
/// is more than any take. A range in a canonical list is non-empty (`start < stop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
pub struct Range {
    pub start: u32,
    pub stop: u32,
}

impl Range {
    #[inline]
    pub const fn new(start: u32, stop: u32) -> Self {
        Self { start, stop }
    }

    /// Number of frames in the range (0 when empty).
    #[inline]
    pub const fn len(&self) -> u32 {
        self.stop.saturating_sub(self.start)
    }

    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.stop <= self.start
    }

    #[inline]
    pub const fn contains(&self, frame: u32) -> bool {
        self.start <= frame && frame < self.stop
    }
}

// ---------------------------------------------------------------------------------------------
// Canonical range lists and the linear sweeps.
//
// A *canonical* list is sorted by start, and its ranges are non-empty, disjoint and non-adjacent
// (`a.stop < b.start` for consecutive `a`, `b`). Every sweep below reads canonical lists and writes a
// canonical list. The `*_append` forms append to the output (used by the packed sets, which write
// many clips into one flat array); the plain forms clear it first. Each reserves its worst-case
// output size once, before the loop, so the loop itself never allocates.
// ---------------------------------------------------------------------------------------------

/// True when `ranges` is canonical: sorted, non-empty, disjoint and non-adjacent.
pub fn is_canonical(ranges: &[Range]) -> bool {
    ranges.iter().all(|r| r.start < r.stop) && ranges.windows(2).all(|w| w[0].stop < w[1].start)
}

/// Sorts `ranges`, drops empty ones and merges overlapping or adjacent ones, in place.
/// Returns the number of ranges that were merged into a neighbour (0 when the input was already
/// canonical apart from order and empties).
pub fn canonicalize(ranges: &mut Vec<Range>) -> usize {
    ranges.retain(|r| r.start < r.stop);
    ranges.sort_unstable();
    let mut merged = 0;
    let mut w = 0usize;
    for i in 0..ranges.len() {
        let r = ranges[i];
        if w > 0 && ranges[w - 1].stop >= r.start {
            let last = &mut ranges[w - 1];
            last.stop = last.stop.max(r.stop);
            merged += 1;
        } else {
            ranges[w] = r;
            w += 1;
        }
    }
    ranges.truncate(w);
    merged
}

/// A range list that is canonical by construction (see [`is_canonical`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct RangeList(Vec<Range>);

impl RangeList {
    pub const fn new() -> Self {
        Self(Vec::new())
    }

    /// Builds a canonical list from any ranges (sorting and merging as needed).
    pub fn from_ranges(mut ranges: Vec<Range>) -> Self {
        canonicalize(&mut ranges);
        Self(ranges)
    }

    /// Wraps `ranges` if they are already canonical; gives them back otherwise.
    pub fn from_canonical(ranges: Vec<Range>) -> Result<Self, Vec<Range>> {
        if is_canonical(&ranges) {
            Ok(Self(ranges))
        } else {
            Err(ranges)
        }
    }

    pub fn as_slice(&self) -> &[Range] {
        &self.0
    }

    pub fn into_vec(self) -> Vec<Range> {
        self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Total number of frames covered.
    pub fn frames(&self) -> u64 {
        total_frames(&self.0)
    }

    pub fn union(&self, other: &Self) -> Self {
        let mut out = Vec::new();
        union(&self.0, &other.0, &mut out);
        Self(out)
    }

    pub fn intersection(&self, other: &Self) -> Self {
        let mut out = Vec::new();
        intersection(&self.0, &other.0, &mut out);
        Self(out)
    }

    pub fn difference(&self, other: &Self) -> Self {
        let mut out = Vec::new();
        difference(&self.0, &other.0, &mut out);
        Self(out)
    }

    pub fn symmetric_difference(&self, other: &Self) -> Self {
        let mut out = Vec::new();
        symmetric_difference(&self.0, &other.0, &mut out);
        Self(out)
    }

    /// The frames of `[0, frames)` not in this list.
    pub fn complement(&self, frames: u32) -> Self {
        let mut out = Vec::new();
        complement(&self.0, frames, &mut out);
        Self(out)
    }
}

impl std::ops::Deref for RangeList {
    type Target = [Range];
    fn deref(&self) -> &[Range] {
        &self.0
    }
}

/// Total number of frames covered by a canonical list.
pub fn total_frames(ranges: &[Range]) -> u64 {
    ranges.iter().map(|r| u64::from(r.len())).sum()
}

/// `out = a | b`.
pub fn union(a: &[Range], b: &[Range], out: &mut Vec<Range>) {
    out.clear();
    union_append(a, b, out);
}

/// `out = a & b`.
pub fn intersection(a: &[Range], b: &[Range], out: &mut Vec<Range>) {
    out.clear();
    intersection_append(a, b, out);
}

/// `out = a - b`.
pub fn difference(a: &[Range], b: &[Range], out: &mut Vec<Range>) {
    out.clear();
    difference_append(a, b, out);
}

/// `out = a ^ b` (frames in exactly one of the two).
pub fn symmetric_difference(a: &[Range], b: &[Range], out: &mut Vec<Range>) {
    out.clear();
    symmetric_difference_append(a, b, out);
}

/// `out = [0, frames) - a`. Ranges of `a` past `frames` are ignored.
pub fn complement(a: &[Range], frames: u32, out: &mut Vec<Range>) {
    out.clear();
    complement_append(a, frames, out);
}

/// Appends `a | b`: a merge by start that extends the current output range while the next input
/// range overlaps or touches it.
///
/// The three sweeps below are written without data-dependent branches (the choices compile to
/// conditional moves): the output is sized once to its worst case, each step writes its candidate
/// range at the write position and advances that position only when the range is kept, and the
/// output is truncated at the end. On random data this is several times faster than branching,
/// which mispredicts about half of the time.
pub fn union_append(a: &[Range], b: &[Range], out: &mut Vec<Range>) {
    let base = out.len();
    let (na, nb) = (a.len(), b.len());
    if na + nb == 0 {
        return;
    }
    out.resize(base + na + nb, Range::default());
    let buf = &mut out[base..];
    let (mut i, mut j, mut k) = (0usize, 0usize, 0usize);
    // The first range (smaller start) opens the current run.
    let mut cur = if nb == 0 || (na > 0 && a[0].start <= b[0].start) {
        i = 1;
        a[0]
    } else {
        j = 1;
        b[0]
    };
    while i < na && j < nb {
        let (x, y) = (a[i], b[j]);
        let take_a = x.start <= y.start;
        let r = if take_a { x } else { y };
        i += usize::from(take_a);
        j += usize::from(!take_a);
        let new_run = r.start > cur.stop;
        buf[k] = cur;
        k += usize::from(new_run);
        cur.start = if new_run { r.start } else { cur.start };
        cur.stop = if new_run {
            r.stop
        } else {
            cur.stop.max(r.stop)
        };
    }
    // One side is exhausted: the other only needs merging into the current run.
    let rest = if i < na { &a[i..] } else { &b[j..] };
    for &r in rest {
        let new_run = r.start > cur.stop;
        buf[k] = cur;
        k += usize::from(new_run);
        cur.start = if new_run { r.start } else { cur.start };
        cur.stop = if new_run {
            r.stop
        } else {
            cur.stop.max(r.stop)
        };
    }
    buf[k] = cur;
    out.truncate(base + k + 1);
}

/// The branch-free two-cursor intersection over two canonical sequences given by index functions
/// (so the same loop serves `a & b` and `a & gaps(b)`, which is `a - b`).
#[inline(always)]
fn intersect_by(
    na: usize,
    fa: impl Fn(usize) -> Range,
    nb: usize,
    fb: impl Fn(usize) -> Range,
    out: &mut Vec<Range>,
) {
    let base = out.len();
    if na == 0 || nb == 0 {
        return;
    }
    // Each step emits at most one range and consumes one input range.
    out.resize(base + na + nb, Range::default());
    let buf = &mut out[base..];
    let (mut i, mut j, mut k) = (0usize, 0usize, 0usize);
    while i < na && j < nb {
        let (x, y) = (fa(i), fb(j));
        let start = x.start.max(y.start);
        let stop = x.stop.min(y.stop);
        buf[k] = Range { start, stop };
        k += usize::from(start < stop);
        let adv_a = x.stop < y.stop;
        i += usize::from(adv_a);
        j += usize::from(!adv_a);
    }
    out.truncate(base + k);
}

/// Appends `a & b`: two cursors; each step emits the overlap of the current pair and advances the
/// range that ends first.
pub fn intersection_append(a: &[Range], b: &[Range], out: &mut Vec<Range>) {
    intersect_by(a.len(), |i| a[i], b.len(), |j| b[j], out);
}

/// Appends `a - b`, computed as `a & gaps(b)` where the gaps of `b` (including the ones before its
/// first and after its last range) are formed on the fly.
pub fn difference_append(a: &[Range], b: &[Range], out: &mut Vec<Range>) {
    let nb = b.len();
    let gap = |j: usize| Range {
        start: if j == 0 { 0 } else { b[j - 1].stop },
        stop: if j < nb { b[j].start } else { u32::MAX },
    };
    intersect_by(a.len(), |i| a[i], nb + 1, gap, out);
}

/// Appends `a ^ b` with the general event sweep.
pub fn symmetric_difference_append(a: &[Range], b: &[Range], out: &mut Vec<Range>) {
    sweep_append(a, b, |x, y| x != y, out, &mut NoTrace);
}

/// Appends `[0, frames) - a`.
pub fn complement_append(a: &[Range], frames: u32, out: &mut Vec<Range>) {
    out.reserve(a.len() + 1);
    let mut start = 0u32;
    for r in a {
        if r.start >= frames {
            break;
        }
        if r.start > start {
            out.push(Range {
                start,
                stop: r.start,
            });
        }
        start = r.stop;
    }
    if start < frames {
        out.push(Range {
            start,
            stop: frames,
        });
    }
}

/// One event of a traced sweep: the sweep reached `frame`, where the listed inputs started or
/// stopped; `inside_*` tell the state after the event, and `output` is the output range that closed
/// at this frame, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepEvent {
    pub frame: u32,
    /// `Some(true)` when a range of `a` starts here, `Some(false)` when one stops, `None` otherwise.
    pub a: Option<bool>,
    pub b: Option<bool>,
    pub inside_a: bool,
    pub inside_b: bool,
    pub inside_out: bool,
    /// The output range completed at this event.
    pub output: Option<Range>,
}

/// Receives the events of a sweep (see [`sweep_traced`]).
pub trait SweepTrace {
    fn event(&mut self, event: SweepEvent);
}

struct NoTrace;
impl SweepTrace for NoTrace {
    #[inline(always)]
    fn event(&mut self, _event: SweepEvent) {}
}

impl SweepTrace for Vec<SweepEvent> {
    fn event(&mut self, event: SweepEvent) {
        self.push(event);
    }
}

/// The general event sweep: walks the start/stop events of both lists in frame order, keeps
/// "inside a" and "inside b", and emits an output range wherever `op(inside_a, inside_b)` holds.
fn sweep_append<F: Fn(bool, bool) -> bool, T: SweepTrace>(
    a: &[Range],
    b: &[Range],
    op: F,
    out: &mut Vec<Range>,
    trace: &mut T,
) {
    out.reserve(a.len() + b.len());
    const END: u64 = u64::MAX;
    let (mut i, mut j) = (0usize, 0usize);
    let (mut in_a, mut in_b, mut in_out) = (false, false, op(false, false));
    debug_assert!(!in_out, "the sweep op must map (false, false) to false");
    let mut start = 0u32;
    loop {
        let na = a
            .get(i)
            .map_or(END, |r| u64::from(if in_a { r.stop } else { r.start }));
        let nb = b
            .get(j)
            .map_or(END, |r| u64::from(if in_b { r.stop } else { r.start }));
        let at = na.min(nb);
        if at == END {
            break;
        }
        let frame = at as u32;
        let mut ev_a = None;
        let mut ev_b = None;
        if na == at {
            ev_a = Some(!in_a);
            if in_a {
                i += 1;
            }
            in_a = !in_a;
        }
        if nb == at {
            ev_b = Some(!in_b);
            if in_b {
                j += 1;
            }
            in_b = !in_b;
        }
        let now = op(in_a, in_b);
        let mut closed = None;
        if now != in_out {
            if now {
                start = frame;
            } else {
                let r = Range { start, stop: frame };
                out.push(r);
                closed = Some(r);
            }
            in_out = now;
        }
        trace.event(SweepEvent {
            frame,
            a: ev_a,
            b: ev_b,
            inside_a: in_a,
            inside_b: in_b,
            inside_out: in_out,
            output: closed,
        });
    }
}

/// A binary set operation on range lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SetOp {
    Union,
    Intersection,
    Difference,
    SymmetricDifference,
}

impl SetOp {
    /// The truth table of the operation on "inside a", "inside b".
    pub fn apply(self, a: bool, b: bool) -> bool {
        match self {
            SetOp::Union => a | b,
            SetOp::Intersection => a & b,
            SetOp::Difference => a & !b,
            SetOp::SymmetricDifference => a ^ b,
        }
    }
}

/// Runs `op` on `a` and `b` with the general event sweep and records every event (for the query
/// view, which shows the sweep step by step). Writes the same output as the specialised sweeps.
pub fn sweep_traced(
    op: SetOp,
    a: &[Range],
    b: &[Range],
    out: &mut Vec<Range>,
    events: &mut Vec<SweepEvent>,
) {
    out.clear();
    events.clear();
    sweep_append(a, b, |x, y| op.apply(x, y), out, events);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(list: &[(u32, u32)]) -> Vec<Range> {
        list.iter().map(|&(s, e)| Range::new(s, e)).collect()
    }

    #[test]
    fn adjacent_ranges_merge_in_union() {
        let mut out = Vec::new();
        union(&r(&[(0, 5)]), &r(&[(5, 9)]), &mut out);
        assert_eq!(out, r(&[(0, 9)]));
    }

    #[test]
    fn canonicalize_merges_and_counts() {
        let mut v = r(&[(5, 9), (0, 5), (3, 4), (10, 10), (12, 14)]);
        let merged = canonicalize(&mut v);
        assert_eq!(v, r(&[(0, 9), (12, 14)]));
        assert_eq!(merged, 2);
        assert!(is_canonical(&v));
    }

    #[test]
    fn sweeps_on_small_cases() {
        let a = r(&[(0, 10), (20, 30), (40, 50)]);
        let b = r(&[(5, 25), (30, 40), (45, 46)]);
        let mut out = Vec::new();
        union(&a, &b, &mut out);
        assert_eq!(out, r(&[(0, 50)]));
        intersection(&a, &b, &mut out);
        assert_eq!(out, r(&[(5, 10), (20, 25), (45, 46)]));
        difference(&a, &b, &mut out);
        assert_eq!(out, r(&[(0, 5), (25, 30), (40, 45), (46, 50)]));
        symmetric_difference(&a, &b, &mut out);
        assert_eq!(out, r(&[(0, 5), (10, 20), (25, 45), (46, 50)]));
        complement(&a, 60, &mut out);
        assert_eq!(out, r(&[(10, 20), (30, 40), (50, 60)]));
        complement(&a, 25, &mut out);
        assert_eq!(out, r(&[(10, 20)]));
        complement(&[], 0, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn difference_with_one_b_range_spanning_many_a_ranges() {
        let a = r(&[(0, 2), (4, 6), (8, 10)]);
        let b = r(&[(1, 9)]);
        let mut out = Vec::new();
        difference(&a, &b, &mut out);
        assert_eq!(out, r(&[(0, 1), (9, 10)]));
    }

    #[test]
    fn traced_sweep_matches_and_records_events() {
        let a = r(&[(0, 10)]);
        let b = r(&[(5, 15)]);
        let (mut out, mut events) = (Vec::new(), Vec::new());
        sweep_traced(SetOp::Intersection, &a, &b, &mut out, &mut events);
        assert_eq!(out, r(&[(5, 10)]));
        assert_eq!(events.len(), 4);
        assert_eq!(events[2].frame, 10);
        assert_eq!(events[2].output, Some(Range::new(5, 10)));
    }

    #[test]
    fn range_list_is_canonical() {
        let l = RangeList::from_ranges(r(&[(3, 4), (0, 3)]));
        assert_eq!(l.as_slice(), &r(&[(0, 4)])[..]);
        assert!(RangeList::from_canonical(r(&[(0, 3), (3, 4)])).is_err());
        assert_eq!(l.complement(6).as_slice(), &r(&[(4, 6)])[..]);
    }
}
