//! Queries: a postfix program over tags, evaluated on packed range sets or mask sets, with a cache.
//!
//! # Encoding
//! A [`Query`] is a postfix stack of `i32`, stored inline for up to 16 entries (a deeper query
//! spills to the heap and still works). A non-negative entry pushes the tag with that index (into
//! [`TagDocument::tags`]); a negative entry is an operator:
//!
//! | code            | operator                                   |
//! |-----------------|--------------------------------------------|
//! | `-1`            | union `a | b`                               |
//! | `-2`            | intersection `a & b`                       |
//! | `-3`            | difference `a - b`                         |
//! | `-4`            | complement `!a` (within each clip)         |
//! | `-5`            | symmetric difference `a ^ b`               |
//! | `-16 - k`       | filter `k` ([`Filter::code`]); the next entry is its argument (frames or seed, stored as `i32` bits) |
//!
//! # Engines
//! - [`Engine::Ranges`]: operation by operation on [`RangeSet`]s (linear sweeps per clip).
//! - [`Engine::Masks`]: on [`MaskSet`]s. A query made only of `| & - ! ^` runs in one pass over the
//!   words of its input masks ([`Evaluator::eval_masks_fused`]): per clip, per block of 16 words, the
//!   postfix program runs on a small stack of word blocks, with no intermediate mask. Queries with
//!   filters run operation by operation ([`Evaluator::eval_masks_op_by_op`]).
//! - [`Engine::Auto`]: per clip, ranges or masks from the data (see [`AUTO_MASKS_RANGES_PER_WORD`]).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use smallvec::SmallVec;

use super::document::{ClipId, TagDocument};
use super::filters::Filter;
use super::mask::{self, words_for};
use super::mask_set::MaskSet;
use super::range::{self, Range, SetOp};
use super::range_set::RangeSet;

pub const OP_UNION: i32 = -1;
pub const OP_INTERSECTION: i32 = -2;
pub const OP_DIFFERENCE: i32 = -3;
pub const OP_COMPLEMENT: i32 = -4;
pub const OP_SYMMETRIC_DIFFERENCE: i32 = -5;
/// Filter `k` is `OP_FILTER - k`, followed by its argument.
pub const OP_FILTER: i32 = -16;

/// One decoded step of a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Item {
    Tag(u32),
    Union,
    Intersection,
    Difference,
    SymmetricDifference,
    Complement,
    Filter(Filter, u32),
}

/// A query as a postfix program (see the module docs for the encoding).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Query {
    code: SmallVec<[i32; 16]>,
}

/// A query whose code is not a well-formed postfix program for the tag count given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryCodeError {
    #[error("the query is empty")]
    Empty,
    #[error("entry {at}: tag index {tag} is out of range (the document has {tags} tags)")]
    UnknownTag { at: usize, tag: u32, tags: usize },
    #[error("entry {at}: operator code {code} is unknown")]
    UnknownOperator { at: usize, code: i32 },
    #[error("entry {at}: the operator needs more operands than the stack holds")]
    MissingOperand { at: usize },
    #[error("entry {at}: the filter has no argument entry")]
    MissingArgument { at: usize },
    #[error("the program leaves {0} values on the stack instead of 1")]
    Unbalanced(usize),
}

impl Query {
    /// The query that reads one tag.
    pub fn tag(index: u32) -> Self {
        assert!(index <= i32::MAX as u32, "tag index too large");
        let mut code = SmallVec::new();
        code.push(index as i32);
        Self { code }
    }

    /// Wraps raw postfix code (not checked: see [`Query::validate`]).
    pub fn from_code(code: &[i32]) -> Self {
        Self {
            code: SmallVec::from_slice(code),
        }
    }

    /// The raw postfix code.
    pub fn code(&self) -> &[i32] {
        &self.code
    }

    /// True while the code fits the inline capacity (no heap allocation).
    pub fn is_inline(&self) -> bool {
        !self.code.spilled()
    }

    /// Appends a decoded item.
    pub fn push(&mut self, item: Item) {
        match item {
            Item::Tag(t) => {
                assert!(t <= i32::MAX as u32, "tag index too large");
                self.code.push(t as i32)
            }
            Item::Union => self.code.push(OP_UNION),
            Item::Intersection => self.code.push(OP_INTERSECTION),
            Item::Difference => self.code.push(OP_DIFFERENCE),
            Item::SymmetricDifference => self.code.push(OP_SYMMETRIC_DIFFERENCE),
            Item::Complement => self.code.push(OP_COMPLEMENT),
            Item::Filter(f, arg) => {
                // Filters without an argument store 0, so equal queries have equal code.
                let arg = if f.argument().is_some() { arg } else { 0 };
                self.code.push(OP_FILTER - i32::from(f.code()));
                self.code.push(arg as i32);
            }
        }
    }

    /// `filter(self, arg)`.
    pub fn filter(mut self, filter: Filter, arg: u32) -> Self {
        self.push(Item::Filter(filter, arg));
        self
    }

    /// `self ^ other`.
    pub fn symmetric_difference(self, other: Query) -> Self {
        self.binary(other, Item::SymmetricDifference)
    }

    fn binary(mut self, other: Query, op: Item) -> Self {
        self.code.extend_from_slice(&other.code);
        self.push(op);
        self
    }

    /// Decodes the code. Malformed code yields `Err` items; see [`Query::validate`].
    pub fn items(&self) -> impl Iterator<Item = Result<Item, QueryCodeError>> + '_ {
        let mut at = 0usize;
        std::iter::from_fn(move || {
            let c = *self.code.get(at)?;
            let here = at;
            at += 1;
            Some(match c {
                c if c >= 0 => Ok(Item::Tag(c as u32)),
                OP_UNION => Ok(Item::Union),
                OP_INTERSECTION => Ok(Item::Intersection),
                OP_DIFFERENCE => Ok(Item::Difference),
                OP_COMPLEMENT => Ok(Item::Complement),
                OP_SYMMETRIC_DIFFERENCE => Ok(Item::SymmetricDifference),
                c => match u8::try_from(OP_FILTER - c).ok().and_then(Filter::from_code) {
                    Some(f) => match self.code.get(at) {
                        Some(&arg) => {
                            at += 1;
                            Ok(Item::Filter(f, arg as u32))
                        }
                        None => Err(QueryCodeError::MissingArgument { at: here }),
                    },
                    None => Err(QueryCodeError::UnknownOperator { at: here, code: c }),
                },
            })
        })
    }

    /// Checks that the code is a well-formed program over `tag_count` tags; returns the largest
    /// stack depth it reaches.
    pub fn validate(&self, tag_count: usize) -> Result<usize, QueryCodeError> {
        if self.code.is_empty() {
            return Err(QueryCodeError::Empty);
        }
        let (mut depth, mut max_depth) = (0usize, 0usize);
        for (at, item) in self.items().enumerate() {
            match item? {
                Item::Tag(t) => {
                    if t as usize >= tag_count {
                        return Err(QueryCodeError::UnknownTag {
                            at,
                            tag: t,
                            tags: tag_count,
                        });
                    }
                    depth += 1;
                    max_depth = max_depth.max(depth);
                }
                Item::Complement | Item::Filter(..) => {
                    if depth < 1 {
                        return Err(QueryCodeError::MissingOperand { at });
                    }
                }
                _ => {
                    if depth < 2 {
                        return Err(QueryCodeError::MissingOperand { at });
                    }
                    depth -= 1;
                }
            }
        }
        if depth != 1 {
            return Err(QueryCodeError::Unbalanced(depth));
        }
        Ok(max_depth)
    }

    /// The distinct tags the query reads, in first-use order.
    pub fn tags_read(&self) -> SmallVec<[u32; 8]> {
        let mut out = SmallVec::new();
        for item in self.items().flatten() {
            if let Item::Tag(t) = item
                && !out.contains(&t)
            {
                out.push(t);
            }
        }
        out
    }

    /// True when the query uses no filter (only `| & - ! ^`), so the masks engine can run it in one
    /// pass over the words.
    pub fn is_pure_logic(&self) -> bool {
        self.items()
            .all(|i| matches!(i, Ok(item) if !matches!(item, Item::Filter(..))))
    }
}

macro_rules! query_binop {
    ($tr:ident, $f:ident, $item:expr) => {
        impl std::ops::$tr for Query {
            type Output = Query;
            fn $f(self, rhs: Query) -> Query {
                self.binary(rhs, $item)
            }
        }
        impl std::ops::$tr<&Query> for &Query {
            type Output = Query;
            fn $f(self, rhs: &Query) -> Query {
                self.clone().binary(rhs.clone(), $item)
            }
        }
    };
}
query_binop!(BitOr, bitor, Item::Union);
query_binop!(BitAnd, bitand, Item::Intersection);
query_binop!(Sub, sub, Item::Difference);
query_binop!(BitXor, bitxor, Item::SymmetricDifference);

impl std::ops::Not for Query {
    type Output = Query;
    fn not(mut self) -> Query {
        self.push(Item::Complement);
        self
    }
}

impl std::ops::Not for &Query {
    type Output = Query;
    fn not(self) -> Query {
        !self.clone()
    }
}

// ---------------------------------------------------------------------------------------------
// The packed database.
// ---------------------------------------------------------------------------------------------

/// The packed forms of a document's tags: one [`RangeSet`] and one [`MaskSet`] per tag, plus the
/// clip lengths, built from a [`TagDocument`]. Records the version of each tag it was built from.
///
/// A tag's ranges are built with the index (and again when the tag changes); its masks only when a
/// query first reads the tag with masks (the masks engine, or `auto` on a clip it gives to masks),
/// or when asked ([`Self::prepare_masks`]). Masks are 1 bit a frame of every clip a tag is on: on
/// a library of 10,000 clips and 200 tags, building them all took 190-270 ms and 280 MiB that a
/// session querying a few tags never reads, and every range edit rebuilt the edited tag's.
#[derive(Debug, Clone, Default)]
pub struct TagIndex {
    clip_frames: Vec<u32>,
    /// The document's clip-list version this index was built from.
    clips_version: u64,
    versions: Vec<u64>,
    ranges: Vec<RangeSet>,
    /// One slot a tag, filled at first use.
    masks: Vec<OnceLock<MaskSet>>,
    /// Bytes of each tag's masks, built or not, and of one mask over all clips.
    tag_mask_bytes: Vec<u64>,
    all_mask_bytes: u64,
    mask_budget_bytes: u64,
    /// Bytes of every tag's masks and the mask over all clips.
    masks_needed_bytes: u64,
    /// When [`Self::make_room_for`] last saw a query read each tag (a count of its calls), so
    /// that it forgets the masks read longest ago first.
    last_read: Vec<u64>,
    room_calls: u64,
}

/// The default budget for the mask sets of one [`TagIndex`]: 1 GiB.
pub const DEFAULT_MASK_BUDGET_BYTES: u64 = 1 << 30;

impl TagIndex {
    /// Builds the index with the default mask budget ([`DEFAULT_MASK_BUDGET_BYTES`]).
    pub fn build(doc: &TagDocument) -> Self {
        Self::build_with_mask_budget(doc, DEFAULT_MASK_BUDGET_BYTES)
    }

    /// Builds the index. A query's masks are built only if they, the masks built before and room
    /// for one full-document mask (as a complement needs) fit in `mask_budget_bytes`. Clip
    /// lengths come from a file, so this bounds what a file can make us allocate; a query whose
    /// masks do not fit gets [`EvalError::MasksOverBudget`] from the masks engine, and `auto` uses
    /// ranges everywhere for it.
    pub fn build_with_mask_budget(doc: &TagDocument, mask_budget_bytes: u64) -> Self {
        let clip_frames: Vec<u32> = doc.clips.iter().map(|c| c.frames).collect();
        let mut idx = Self {
            clip_frames,
            clips_version: doc.clips_version,
            mask_budget_bytes,
            ..Self::default()
        };
        for t in 0..doc.tags.len() {
            let r = idx.build_tag(doc, t);
            idx.ranges.push(r);
            idx.versions.push(doc.tags[t].version);
        }
        idx.reset_masks(None);
        idx
    }

    fn build_tag(&self, doc: &TagDocument, t: usize) -> RangeSet {
        let mut set = RangeSet::new();
        let mut fixed = Vec::new();
        let mut with_markers = Vec::new();
        let tag = &doc.tags[t];
        for clip in tag.clips_used() {
            let Some(&frames) = self.clip_frames.get(clip as usize) else {
                continue;
            };
            // Markers are one-frame ranges for queries.
            let ranges = if tag.markers_on(clip).is_empty() {
                tag.ranges_on(clip)
            } else {
                tag.frames_on(clip, &mut with_markers);
                &with_markers
            };
            if range::is_canonical(ranges) && ranges.last().is_none_or(|r| r.stop <= frames) {
                set.push_clip(clip, ranges);
            } else {
                // The document's fields are public; repair rather than trust (sort, merge, clamp).
                fixed.clear();
                fixed.extend(
                    ranges
                        .iter()
                        .map(|r| Range::new(r.start.min(frames), r.stop.min(frames))),
                );
                range::canonicalize(&mut fixed);
                set.push_clip(clip, &fixed);
            }
        }
        set
    }

    /// Bytes of the masks of a tag's ranges: a word per 64 frames of each clip it is on.
    fn mask_bytes(&self, ranges: &RangeSet) -> u64 {
        let words =
            |c: ClipId| words_for(self.clip_frames.get(c as usize).copied().unwrap_or(0)) as u64;
        ranges.clips().iter().map(|&c| words(c)).sum::<u64>() * 8
    }

    /// Forgets the masks of `only` (or of every tag), to be built again at their next use, and
    /// works out the bytes they need.
    fn reset_masks(&mut self, only: Option<&[usize]>) {
        match only {
            Some(tags) if self.masks.len() == self.ranges.len() => {
                for &t in tags {
                    self.masks[t] = OnceLock::new();
                    self.tag_mask_bytes[t] = self.mask_bytes(&self.ranges[t]);
                }
            }
            _ => {
                self.masks = (0..self.ranges.len()).map(|_| OnceLock::new()).collect();
                self.last_read = vec![0; self.ranges.len()];
                self.tag_mask_bytes = self.ranges.iter().map(|r| self.mask_bytes(r)).collect();
                let frames = self.clip_frames.iter();
                self.all_mask_bytes = frames.map(|&f| words_for(f) as u64 * 8).sum();
            }
        }
        self.masks_needed_bytes = self.tag_mask_bytes.iter().sum::<u64>() + self.all_mask_bytes;
    }

    /// Brings the index up to date with `doc`: rebuilds the tags whose version changed (everything
    /// when the clips or the tag count changed). Returns the number of tags rebuilt.
    pub fn sync(&mut self, doc: &TagDocument) -> usize {
        let same_clips = self.clips_version == doc.clips_version
            && self.clip_frames.len() == doc.clips.len()
            && self
                .clip_frames
                .iter()
                .zip(&doc.clips)
                .all(|(&f, c)| f == c.frames);
        if !same_clips || self.versions.len() != doc.tags.len() {
            *self = Self::build_with_mask_budget(doc, self.mask_budget_bytes);
            return doc.tags.len();
        }
        let mut changed = Vec::new();
        for t in 0..doc.tags.len() {
            if self.versions[t] != doc.tags[t].version {
                self.ranges[t] = self.build_tag(doc, t);
                self.versions[t] = doc.tags[t].version;
                changed.push(t);
            }
        }
        if !changed.is_empty() {
            self.reset_masks(Some(&changed));
        }
        changed.len()
    }

    /// True when every tag's masks fit in the budget together (each is built at its first use).
    /// A query may still run with masks when they do not: see [`Self::masks_fit`].
    pub fn has_masks(&self) -> bool {
        self.masks_needed_bytes <= self.mask_budget_bytes
    }

    /// Bytes of the masks built so far, those of the tags `q` reads that are not built yet, and
    /// one mask over all clips: what evaluating `q` with masks would hold.
    pub fn masks_bytes_for(&self, q: &Query) -> u64 {
        let built: u64 = (0..self.masks.len())
            .filter(|&t| self.masks[t].get().is_some())
            .map(|t| self.tag_mask_bytes[t])
            .sum();
        let to_build: u64 = q
            .tags_read()
            .iter()
            .map(|&t| t as usize)
            .filter(|&t| t < self.masks.len() && self.masks[t].get().is_none())
            .map(|t| self.tag_mask_bytes[t])
            .sum();
        built + to_build + self.all_mask_bytes
    }

    /// True when `q` can be evaluated with masks within the budget ([`Self::masks_bytes_for`]).
    pub fn masks_fit(&self, q: &Query) -> bool {
        self.masks_bytes_for(q) <= self.mask_budget_bytes
    }

    /// When `q`'s masks do not fit beside those built before, forgets built masks of tags `q`
    /// does not read, those read longest ago first (by the queries given here), until they fit:
    /// the budget bounds the masks held at once rather than all those ever built, and the tags
    /// a session keeps querying keep theirs. They are built again when a query reads them.
    /// Nothing is forgotten for a query whose own masks would not fit with nothing else built.
    /// Returns whether `q`'s masks fit now.
    pub fn make_room_for(&mut self, q: &Query) -> bool {
        let read = q.tags_read();
        self.room_calls += 1;
        for &t in &read {
            if let Some(last) = self.last_read.get_mut(t as usize) {
                *last = self.room_calls;
            }
        }
        let mut needed = self.masks_bytes_for(q);
        if needed <= self.mask_budget_bytes {
            return true;
        }
        // A query whose own masks never fit forgets nothing (it runs on ranges).
        let own: u64 = read
            .iter()
            .filter_map(|&t| self.tag_mask_bytes.get(t as usize))
            .sum();
        if own + self.all_mask_bytes > self.mask_budget_bytes {
            return false;
        }
        let mut others: Vec<usize> = (0..self.masks.len())
            .filter(|&t| self.masks[t].get().is_some() && !read.contains(&(t as u32)))
            .collect();
        others.sort_by_key(|&t| self.last_read[t]);
        for t in others {
            self.masks[t] = OnceLock::new();
            needed -= self.tag_mask_bytes[t];
            if needed <= self.mask_budget_bytes {
                return true;
            }
        }
        false
    }

    /// True when the masks of `tag` are built (and held).
    pub fn tag_masks_built(&self, tag: usize) -> bool {
        self.masks.get(tag).is_some_and(|m| m.get().is_some())
    }

    /// Builds now the masks of the tags `q` reads that are not built yet (in parallel), so that
    /// timing an engine does not time building its input. Nothing when they do not fit.
    pub fn prepare_masks(&self, q: &Query) {
        if self.masks_fit(q) {
            let tags: Vec<usize> = q.tags_read().iter().map(|&t| t as usize).collect();
            self.prepare_masks_of(&tags);
        }
    }

    /// Builds now every tag's masks (what `prepare_masks` does for one query's tags). Nothing
    /// when they do not fit together.
    pub fn prepare_all_masks(&self) {
        if self.has_masks() {
            let tags: Vec<usize> = (0..self.ranges.len()).collect();
            self.prepare_masks_of(&tags);
        }
    }

    fn prepare_masks_of(&self, tags: &[usize]) {
        use rayon::prelude::*;
        tags.par_iter()
            .filter(|&&t| t < self.masks.len())
            .for_each(|&t| {
                self.masks_of(t);
            });
    }

    /// How many tags' masks are built.
    pub fn masks_built(&self) -> usize {
        self.masks.iter().filter(|m| m.get().is_some()).count()
    }

    /// Bytes the mask sets need (whether or not they were built).
    pub fn masks_needed_bytes(&self) -> u64 {
        self.masks_needed_bytes
    }

    fn require_masks(&self, q: &Query) -> Result<(), EvalError> {
        let needed_bytes = self.masks_bytes_for(q);
        if needed_bytes <= self.mask_budget_bytes {
            Ok(())
        } else {
            Err(EvalError::MasksOverBudget {
                needed_bytes,
                budget_bytes: self.mask_budget_bytes,
            })
        }
    }

    /// True when every tag version and clip length matches `doc`.
    pub fn is_current(&self, doc: &TagDocument) -> bool {
        self.clips_version == doc.clips_version
            && self.versions.len() == doc.tags.len()
            && self
                .versions
                .iter()
                .zip(&doc.tags)
                .all(|(&v, t)| v == t.version)
            && self.clip_frames.len() == doc.clips.len()
            && self
                .clip_frames
                .iter()
                .zip(&doc.clips)
                .all(|(&f, c)| f == c.frames)
    }

    pub fn clip_frames(&self) -> &[u32] {
        &self.clip_frames
    }

    pub fn tag_count(&self) -> usize {
        self.ranges.len()
    }

    /// The ranges of a tag. Panics if `tag >= self.tag_count()`.
    pub fn tag_ranges(&self, tag: usize) -> &RangeSet {
        &self.ranges[tag]
    }

    /// The masks of a tag (built now if they are not yet); `None` when there is no such tag or
    /// its masks do not fit in the budget beside those built before.
    pub fn tag_masks(&self, tag: usize) -> Option<&MaskSet> {
        let slot = self.masks.get(tag)?;
        if slot.get().is_none() {
            let q = Query::tag(tag as u32);
            if !self.masks_fit(&q) {
                return None;
            }
        }
        Some(self.masks_of(tag))
    }

    /// The masks of a tag, built at their first use, for engines that checked
    /// [`Self::require_masks`] or [`Self::masks_fit`].
    fn masks_of(&self, tag: usize) -> &MaskSet {
        self.masks[tag]
            .get_or_init(|| MaskSet::from_range_set(&self.ranges[tag], &self.clip_frames))
    }

    /// Heap bytes of all the tags' range sets.
    pub fn ranges_memory_bytes(&self) -> usize {
        self.ranges.iter().map(RangeSet::memory_bytes).sum()
    }

    /// Heap bytes of the tags' mask sets built so far.
    pub fn masks_memory_bytes(&self) -> usize {
        self.masks
            .iter()
            .filter_map(OnceLock::get)
            .map(MaskSet::memory_bytes)
            .sum()
    }
}

// ---------------------------------------------------------------------------------------------
// Evaluation.
// ---------------------------------------------------------------------------------------------

/// Which engine evaluates a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Engine {
    Ranges,
    Masks,
    #[default]
    Auto,
}

impl Engine {
    pub const fn name(self) -> &'static str {
        match self {
            Engine::Ranges => "ranges",
            Engine::Masks => "masks",
            Engine::Auto => "auto",
        }
    }
}

/// The `auto` rule: a clip is evaluated with masks when its input tags hold, on average, more than
/// this many ranges per 64-frame word of the clip (`leaf ranges / (words * leaves)`), with ranges
/// otherwise. Queries with filters always use ranges (filters work on ranges). The value comes from
/// the `auto_rule` group of `benches/tags.rs` (see docs/QUERY.md).
pub const AUTO_MASKS_RANGES_PER_WORD: f64 = 0.25;

/// What the `auto` engine chose for one clip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipChoice {
    pub clip: ClipId,
    /// `Engine::Ranges` or `Engine::Masks`.
    pub engine: Engine,
    /// Ranges of the query's input tags on the clip (a tag read twice counts twice).
    pub leaf_ranges: usize,
    /// 64-frame words of the clip.
    pub words: usize,
}

/// What the `auto` engine did, and why.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AutoReport {
    /// One entry per clip that was evaluated (clips where the tags present cannot give a
    /// non-empty result, like a clip without A for `A & B`, are skipped).
    pub choices: Vec<ClipChoice>,
    /// True when the query has filters, which forces ranges.
    pub has_filters: bool,
    /// True when the index has no masks (over its memory budget), which forces ranges.
    pub masks_over_budget: bool,
}

impl AutoReport {
    pub fn clips_with(&self, engine: Engine) -> usize {
        self.choices.iter().filter(|c| c.engine == engine).count()
    }

    /// One line: how many clips went to each engine and the rule.
    pub fn reason(&self) -> String {
        let (m, r) = (
            self.clips_with(Engine::Masks),
            self.clips_with(Engine::Ranges),
        );
        if self.masks_over_budget {
            format!(
                "ranges on all {r} clips: the masks of this project's clips are over the memory budget"
            )
        } else if self.has_filters {
            format!("ranges on all {r} clips: the query has filters, which work on ranges")
        } else {
            format!(
                "masks on {m} clips, ranges on {r}: masks where the input tags average more than \
                 {AUTO_MASKS_RANGES_PER_WORD} ranges per 64-frame word"
            )
        }
    }
}

/// An error evaluating a query.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("invalid query code: {0}")]
    Code(#[from] QueryCodeError),
    #[error(
        "the masks of this project's clips would need {needed_bytes} bytes, over the budget of {budget_bytes} bytes; \
         use the ranges engine"
    )]
    MasksOverBudget {
        needed_bytes: u64,
        budget_bytes: u64,
    },
}

/// Words per block of the one-pass masks evaluator (1,024 frames).
const BLOCK: usize = 16;

/// One step of the compiled one-pass masks program.
#[derive(Debug, Clone, Copy)]
enum WordOp {
    Load(usize),
    Or,
    And,
    AndNot,
    Xor,
    Not,
}

/// A value on the evaluation stack: an input borrowed from the index, or an owned intermediate.
enum Operand<'a, B: ?Sized, O> {
    Borrowed(&'a B),
    Owned(O),
}

impl<B: ?Sized, O: std::borrow::Borrow<B>> Operand<'_, B, O> {
    fn get(&self) -> &B {
        match self {
            Operand::Borrowed(t) => t,
            Operand::Owned(t) => t.borrow(),
        }
    }
}

/// Reusable buffers for evaluation. Keep one around: after the first queries, evaluation does not
/// allocate except to grow the output.
#[derive(Debug, Default)]
pub struct Evaluator {
    spare_ranges: Vec<RangeSet>,
    spare_masks: Vec<MaskSet>,
    block_stack: Vec<[u64; BLOCK]>,
    clip_words: Vec<u64>,
    program: Vec<WordOp>,
    leaves: Vec<u32>,
    leaf_counts: Vec<u32>,
    leaf_bits: Vec<u64>,
}

/// Runs a postfix program generically over an operand type.
macro_rules! run_postfix {
    ($items:expr, $leaf:expr, $spare:expr, $bin:expr, $unary:expr) => {{
        let mut stack: SmallVec<[Operand<'_, _, _>; 16]> = SmallVec::new();
        for item in $items {
            let item: Item = item?;
            match item {
                Item::Tag(t) => stack.push(Operand::Borrowed($leaf(t))),
                Item::Complement | Item::Filter(..) => {
                    let a = stack
                        .pop()
                        .ok_or(QueryCodeError::MissingOperand { at: 0 })?;
                    let mut out = $spare.pop().unwrap_or_default();
                    $unary(item, a.get(), &mut out);
                    if let Operand::Owned(x) = a {
                        $spare.push(x);
                    }
                    stack.push(Operand::Owned(out));
                }
                _ => {
                    let b = stack
                        .pop()
                        .ok_or(QueryCodeError::MissingOperand { at: 0 })?;
                    let a = stack
                        .pop()
                        .ok_or(QueryCodeError::MissingOperand { at: 0 })?;
                    let mut out = $spare.pop().unwrap_or_default();
                    $bin(item, a.get(), b.get(), &mut out);
                    for x in [a, b] {
                        if let Operand::Owned(x) = x {
                            $spare.push(x);
                        }
                    }
                    stack.push(Operand::Owned(out));
                }
            }
        }
        if stack.len() != 1 {
            return Err(QueryCodeError::Unbalanced(stack.len()).into());
        }
        stack.pop()
    }};
}

impl Evaluator {
    pub fn new() -> Self {
        Self::default()
    }

    /// Evaluates `q` with `engine`; the result goes to `out` as ranges per clip. Returns what `auto`
    /// chose (`None` for the other engines).
    pub fn eval(
        &mut self,
        q: &Query,
        idx: &TagIndex,
        engine: Engine,
        out: &mut RangeSet,
    ) -> Result<Option<AutoReport>, EvalError> {
        match engine {
            Engine::Ranges => self.eval_ranges(q, idx, out).map(|_| None),
            Engine::Masks => {
                let mut m = self.spare_masks.pop().unwrap_or_default();
                let r = self.eval_masks(q, idx, &mut m);
                if r.is_ok() {
                    m.to_range_set(out);
                }
                self.spare_masks.push(m);
                r.map(|_| None)
            }
            Engine::Auto => self.eval_auto(q, idx, out).map(Some),
        }
    }

    /// The ranges engine: operation by operation on range sets.
    pub fn eval_ranges(
        &mut self,
        q: &Query,
        idx: &TagIndex,
        out: &mut RangeSet,
    ) -> Result<(), EvalError> {
        self.eval_ranges_skipping(q, idx, out, &[])
    }

    /// The ranges engine on every clip except those set in `skip` (bit per clip id).
    fn eval_ranges_skipping(
        &mut self,
        q: &Query,
        idx: &TagIndex,
        out: &mut RangeSet,
        skip: &[u64],
    ) -> Result<(), EvalError> {
        q.validate(idx.tag_count())?;
        let frames = idx.clip_frames();
        let spare = &mut self.spare_ranges;
        let result = run_postfix!(
            q.items(),
            |t: u32| idx.tag_ranges(t as usize),
            spare,
            |op, a: &RangeSet, b: &RangeSet, o: &mut RangeSet| {
                let op = match op {
                    Item::Union => SetOp::Union,
                    Item::Intersection => SetOp::Intersection,
                    Item::Difference => SetOp::Difference,
                    _ => SetOp::SymmetricDifference,
                };
                a.op_skipping(op, b, o, skip)
            },
            |op, a: &RangeSet, o: &mut RangeSet| match op {
                Item::Filter(f, arg) => a.filter(f, arg, frames, o),
                _ => a.complement_skipping(frames, o, skip),
            }
        );
        match result {
            Some(Operand::Owned(r)) => {
                *out = r;
            }
            Some(Operand::Borrowed(r)) => out.clone_from(r),
            None => return Err(QueryCodeError::Empty.into()),
        }
        Ok(())
    }

    /// The masks engine: one pass over the words for pure-logic queries, operation by operation
    /// otherwise.
    pub fn eval_masks(
        &mut self,
        q: &Query,
        idx: &TagIndex,
        out: &mut MaskSet,
    ) -> Result<(), EvalError> {
        if q.is_pure_logic() {
            self.eval_masks_fused(q, idx, out)
        } else {
            self.eval_masks_op_by_op(q, idx, out)
        }
    }

    /// Masks, operation by operation: each operator writes a whole intermediate mask set.
    pub fn eval_masks_op_by_op(
        &mut self,
        q: &Query,
        idx: &TagIndex,
        out: &mut MaskSet,
    ) -> Result<(), EvalError> {
        q.validate(idx.tag_count())?;
        idx.require_masks(q)?;
        let frames = idx.clip_frames();
        let spare = &mut self.spare_masks;
        let result = run_postfix!(
            q.items(),
            |t: u32| idx.masks_of(t as usize),
            spare,
            |op, a: &MaskSet, b: &MaskSet, o: &mut MaskSet| match op {
                Item::Union => a.union(b, o),
                Item::Intersection => a.intersection(b, o),
                Item::Difference => a.difference(b, o),
                _ => a.symmetric_difference(b, o),
            },
            |op, a: &MaskSet, o: &mut MaskSet| match op {
                Item::Filter(f, arg) => a.filter(f, arg, o),
                _ => a.complement(frames, o),
            }
        );
        match result {
            Some(Operand::Owned(r)) => *out = r,
            Some(Operand::Borrowed(r)) => out.clone_from(r),
            None => return Err(QueryCodeError::Empty.into()),
        }
        Ok(())
    }

    /// Compiles a pure-logic query to word ops; returns whether the result on all-empty inputs is
    /// empty (then clips where no input tag occurs can be skipped).
    fn compile_words(&mut self, q: &Query) -> Result<bool, EvalError> {
        self.program.clear();
        self.leaves.clear();
        for item in q.items() {
            self.program.push(match item? {
                Item::Tag(t) => {
                    self.leaves.push(t);
                    WordOp::Load(self.leaves.len() - 1)
                }
                Item::Union => WordOp::Or,
                Item::Intersection => WordOp::And,
                Item::Difference => WordOp::AndNot,
                Item::SymmetricDifference => WordOp::Xor,
                Item::Complement => WordOp::Not,
                Item::Filter(..) => unreachable!("checked by is_pure_logic"),
            });
        }
        // Evaluate the program on empty inputs: one bit suffices.
        let mut st: SmallVec<[bool; 16]> = SmallVec::new();
        for op in &self.program {
            match op {
                WordOp::Load(_) => st.push(false),
                WordOp::Not => {
                    let a = st.pop().unwrap_or(false);
                    st.push(!a)
                }
                op => {
                    let b = st.pop().unwrap_or(false);
                    let a = st.pop().unwrap_or(false);
                    st.push(match op {
                        WordOp::Or => a | b,
                        WordOp::And => a & b,
                        WordOp::AndNot => a & !b,
                        _ => a ^ b,
                    });
                }
            }
        }
        Ok(!st.pop().unwrap_or(false))
    }

    /// The one-pass masks evaluator: for each clip and each block of words, runs the whole program
    /// on a small stack of word blocks and writes the result words once. No intermediate mask set.
    pub fn eval_masks_fused(
        &mut self,
        q: &Query,
        idx: &TagIndex,
        out: &mut MaskSet,
    ) -> Result<(), EvalError> {
        let depth = q.validate(idx.tag_count())?;
        idx.require_masks(q)?;
        if !q.is_pure_logic() {
            return self.eval_masks_op_by_op(q, idx, out);
        }
        self.compile_words(q)?;
        let empty_when = EmptyTable::new(&self.program, self.leaves.len());
        self.block_stack.resize(depth.max(1), [0; BLOCK]);
        out.clear();
        let mut cursors: SmallVec<[usize; 16]> = SmallVec::from_elem(0, self.leaves.len());
        let mut words: SmallVec<[Option<&[u64]>; 16]> =
            SmallVec::from_elem(None, self.leaves.len());
        for (c, &frames) in idx.clip_frames().iter().enumerate() {
            let c = c as ClipId;
            for (k, &t) in self.leaves.iter().enumerate() {
                let set = idx.masks_of(t as usize);
                let clips = set.clips();
                while cursors[k] < clips.len() && clips[cursors[k]] < c {
                    cursors[k] += 1;
                }
                words[k] = (clips.get(cursors[k]) == Some(&c)).then(|| set.slot_words(cursors[k]));
            }
            // Skip the clip when the tags present on it cannot make a non-empty result (for
            // `A & B`, a clip without A); decided on presence alone, without reading a word.
            if empty_when.is_empty(&self.program, |k| words[k].is_some()) {
                continue;
            }
            let w = out.open_clip(frames);
            fused_clip(&self.program, &words, frames, &mut self.block_stack, w);
            out.close_clip(c, frames);
        }
        Ok(())
    }

    /// The `auto` engine: per clip, ranges or masks by [`AUTO_MASKS_RANGES_PER_WORD`]. The clips
    /// given to ranges run through the set-level ranges engine (which skips the others); the clips
    /// given to masks run through the one-pass word evaluator; the two results hold different clips
    /// and are joined by copying whole clips.
    pub fn eval_auto(
        &mut self,
        q: &Query,
        idx: &TagIndex,
        out: &mut RangeSet,
    ) -> Result<AutoReport, EvalError> {
        let depth = q.validate(idx.tag_count())?;
        let has_filters = !q.is_pure_logic();
        let empty_on_empty = if has_filters {
            // Filters map empty to empty, so only `!` can make something from nothing.
            !q.items().any(|i| matches!(i, Ok(Item::Complement)))
        } else {
            self.compile_words(q)?
        };
        if has_filters {
            self.leaves.clear();
            self.leaves.extend(q.items().filter_map(|i| match i {
                Ok(Item::Tag(t)) => Some(t),
                _ => None,
            }));
        }
        // (Filter queries do not use the word program; their rule is "no input ranges, no `!`".)
        let leaves_for_table = if has_filters {
            usize::MAX
        } else {
            self.leaves.len()
        };
        let empty_when = EmptyTable::new(&self.program, leaves_for_table);
        let masks_available = idx.masks_fit(q);
        let mut report = AutoReport {
            choices: Vec::new(),
            has_filters,
            masks_over_budget: !masks_available,
        };
        let n = self.leaves.len();
        let clip_count = idx.clip_frames().len();
        let mut skip = vec![0u64; clip_count.div_ceil(64)];
        let mut masks_clips: Vec<ClipId> = Vec::new();
        // One linear pass per input tag fills, per clip, its input range count and which inputs
        // are present (bit k: leaf k; leaves past 64 are not tracked and never allow a skip).
        self.leaf_counts.clear();
        self.leaf_counts.resize(clip_count, 0);
        self.leaf_bits.clear();
        self.leaf_bits.resize(clip_count, 0);
        for (k, &t) in self.leaves.iter().enumerate() {
            let bit = if k < 64 { 1u64 << k } else { 0 };
            for (c, len) in idx.tag_ranges(t as usize).clip_counts() {
                let n = &mut self.leaf_counts[c as usize];
                *n = n.saturating_add(len as u32);
                self.leaf_bits[c as usize] |= bit;
            }
        }
        for (c, &frames) in idx.clip_frames().iter().enumerate() {
            let leaf_ranges = self.leaf_counts[c] as usize;
            let bits = self.leaf_bits[c];
            let c = c as ClipId;
            let empty = if has_filters {
                leaf_ranges == 0 && empty_on_empty
            } else if n <= 64 {
                empty_when.is_empty(&self.program, |k| (bits >> k) & 1 == 1)
            } else {
                false
            };
            if empty {
                continue;
            }
            let words = words_for(frames);
            let use_masks = !has_filters
                && masks_available
                && leaf_ranges as f64 > AUTO_MASKS_RANGES_PER_WORD * (words * n.max(1)) as f64;
            report.choices.push(ClipChoice {
                clip: c,
                engine: if use_masks {
                    Engine::Masks
                } else {
                    Engine::Ranges
                },
                leaf_ranges,
                words,
            });
            if use_masks {
                skip[c as usize / 64] |= 1 << (c % 64);
                masks_clips.push(c);
            }
        }
        if masks_clips.is_empty() {
            self.eval_ranges_skipping(q, idx, out, &[])?;
            return Ok(report);
        }
        // When every clip that can match went to masks, the ranges engine has nothing to do.
        let all_masks = masks_clips.len() == report.choices.len();
        let mut by_ranges = self.spare_ranges.pop().unwrap_or_default();
        by_ranges.clear();
        if !all_masks {
            self.eval_ranges_skipping(q, idx, &mut by_ranges, &skip)?;
        }
        let mut by_masks = self.spare_ranges.pop().unwrap_or_default();
        by_masks.clear();
        self.block_stack.resize(depth.max(1), [0; BLOCK]);
        let mut leaf_words: SmallVec<[Option<&[u64]>; 16]> = SmallVec::from_elem(None, n);
        let mut cursors: SmallVec<[usize; 16]> = SmallVec::from_elem(0, n);
        for &c in &masks_clips {
            let frames = idx.clip_frames()[c as usize];
            // `masks_clips` is sorted, so each leaf's clip list is walked once.
            for (k, &t) in self.leaves.iter().enumerate() {
                let set = idx.masks_of(t as usize);
                let clips = set.clips();
                while cursors[k] < clips.len() && clips[cursors[k]] < c {
                    cursors[k] += 1;
                }
                leaf_words[k] =
                    (clips.get(cursors[k]) == Some(&c)).then(|| set.slot_words(cursors[k]));
            }
            self.clip_words.resize(words_for(frames), 0);
            fused_clip(
                &self.program,
                &leaf_words,
                frames,
                &mut self.block_stack,
                &mut self.clip_words,
            );
            mask::vectorize_words_append(&self.clip_words, frames, by_masks.flat_mut());
            by_masks.end_clip(c);
        }
        if by_ranges.is_empty() {
            std::mem::swap(out, &mut by_masks);
        } else {
            by_ranges.union(&by_masks, out);
        }
        self.spare_ranges.push(by_ranges);
        self.spare_ranges.push(by_masks);
        Ok(report)
    }
}

/// What is known of a mask from which tags are present on a clip (absent tags are empty masks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presence {
    Empty,
    Full,
    Unknown,
}

/// Runs the word program on [`Presence`] values: `Empty` means the result is empty on this clip
/// whatever the words of the present tags hold.
fn presence(program: &[WordOp], present: impl Fn(usize) -> bool) -> Presence {
    use Presence::{Empty, Full, Unknown};
    let mut st: SmallVec<[Presence; 16]> = SmallVec::new();
    for op in program {
        let v = match *op {
            WordOp::Load(k) => {
                if present(k) {
                    Unknown
                } else {
                    Empty
                }
            }
            WordOp::Not => match st.pop().unwrap_or(Empty) {
                Empty => Full,
                Full => Empty,
                Unknown => Unknown,
            },
            op => {
                let b = st.pop().unwrap_or(Empty);
                let a = st.pop().unwrap_or(Empty);
                let not_b = match b {
                    Empty => Full,
                    Full => Empty,
                    Unknown => Unknown,
                };
                let and = |x: Presence, y: Presence| match (x, y) {
                    (Empty, _) | (_, Empty) => Empty,
                    (Full, y) => y,
                    (x, Full) => x,
                    _ => Unknown,
                };
                match op {
                    WordOp::Or => match (a, b) {
                        (Full, _) | (_, Full) => Full,
                        (Empty, y) => y,
                        (x, Empty) => x,
                        _ => Unknown,
                    },
                    WordOp::And => and(a, b),
                    WordOp::AndNot => and(a, not_b),
                    _ => match (a, b) {
                        (Empty, y) => y,
                        (x, Empty) => x,
                        (Full, Full) => Empty,
                        _ => Unknown,
                    },
                }
            }
        };
        st.push(v);
    }
    st.pop().unwrap_or(Empty)
}

/// For queries with few leaves, [`presence`] for every combination of present leaves, computed once
/// per query (bit `k` of the index: leaf `k` present); per clip it is then one table look-up.
struct EmptyTable(Vec<bool>);

impl EmptyTable {
    const MAX_LEAVES: usize = 12;

    fn new(program: &[WordOp], leaves: usize) -> Self {
        if leaves > Self::MAX_LEAVES {
            return Self(Vec::new());
        }
        Self(
            (0..1usize << leaves)
                .map(|m| presence(program, |k| (m >> k) & 1 == 1) == Presence::Empty)
                .collect(),
        )
    }

    fn is_empty(&self, program: &[WordOp], present: impl Fn(usize) -> bool) -> bool {
        if self.0.is_empty() {
            return presence(program, present) == Presence::Empty;
        }
        let mut m = 0usize;
        for k in 0..self.0.len().trailing_zeros() as usize {
            m |= usize::from(present(k)) << k;
        }
        self.0[m]
    }
}

/// Runs the compiled word program for one clip. `leaves[k]` are the words of the k-th leaf on this
/// clip (`None`: the tag does not occur there, all zeros). Writes `out` (one word per 64 frames).
fn fused_clip(
    program: &[WordOp],
    leaves: &[Option<&[u64]>],
    frames: u32,
    stack: &mut [[u64; BLOCK]],
    out: &mut [u64],
) {
    let n = out.len();
    let mut base = 0usize;
    while base < n {
        // The operators always run on whole blocks (fixed-size loops the compiler unrolls and
        // vectorizes); a short last block is padded with zeros and only `len` words are kept.
        let len = (n - base).min(BLOCK);
        let mut sp = 0usize;
        for op in program {
            match *op {
                WordOp::Load(k) => {
                    let dst = &mut stack[sp];
                    match leaves[k] {
                        Some(w) if len == BLOCK => dst.copy_from_slice(&w[base..base + BLOCK]),
                        Some(w) => {
                            dst[..len].copy_from_slice(&w[base..base + len]);
                            dst[len..].fill(0);
                        }
                        None => dst.fill(0),
                    }
                    sp += 1;
                }
                WordOp::Not => {
                    let a = &mut stack[sp - 1];
                    for x in a.iter_mut() {
                        *x = !*x;
                    }
                }
                op => {
                    let (lo, hi) = stack.split_at_mut(sp - 1);
                    let (a, b) = (&mut lo[sp - 2], &hi[0]);
                    match op {
                        WordOp::Or => (0..BLOCK).for_each(|k| a[k] |= b[k]),
                        WordOp::And => (0..BLOCK).for_each(|k| a[k] &= b[k]),
                        WordOp::AndNot => (0..BLOCK).for_each(|k| a[k] &= !b[k]),
                        _ => (0..BLOCK).for_each(|k| a[k] ^= b[k]),
                    }
                    sp -= 1;
                }
            }
        }
        out[base..base + len].copy_from_slice(&stack[0][..len]);
        base += len;
    }
    if let Some(last) = out.last_mut() {
        *last &= mask::tail_mask(frames);
    }
}

// ---------------------------------------------------------------------------------------------
// The cache.
// ---------------------------------------------------------------------------------------------

pub use super::document::next_version;

#[derive(Debug, Clone)]
struct CacheEntry {
    reads: SmallVec<[(u32, u64); 8]>,
    /// The document's clip-list version and clip count when the result was computed.
    clips: (u64, usize),
    result: Arc<RangeSet>,
}

/// Query results keyed by the query (hash and equality of its postfix code). Each entry records
/// the version of every tag it read and of the clip list (a complement or a filter covers every
/// clip); [`QueryCache::get`] checks them against the document and never returns a result computed
/// from older tag contents or another set of clips. Results that read a tag with version 0 (a tag
/// built by hand, outside the document's edit methods) are not cached.
#[derive(Debug, Clone)]
pub struct QueryCache {
    entries: HashMap<Query, CacheEntry>,
    max_entries: usize,
    pub hits: u64,
    pub misses: u64,
}

impl Default for QueryCache {
    fn default() -> Self {
        Self::new(256)
    }
}

impl QueryCache {
    /// A cache holding at most `max_entries` results.
    pub fn new(max_entries: usize) -> Self {
        Self {
            entries: HashMap::new(),
            max_entries: max_entries.max(1),
            hits: 0,
            misses: 0,
        }
    }

    fn fresh(entry: &CacheEntry, doc: &TagDocument) -> bool {
        entry.clips == (doc.clips_version, doc.clips.len())
            && entry
                .reads
                .iter()
                .all(|&(t, v)| doc.tags.get(t as usize).is_some_and(|tag| tag.version == v))
    }

    /// The cached result of `q` if every tag it read is unchanged in `doc`.
    pub fn get(&mut self, q: &Query, doc: &TagDocument) -> Option<Arc<RangeSet>> {
        match self.entries.get(q) {
            Some(e) if Self::fresh(e, doc) => {
                self.hits += 1;
                Some(e.result.clone())
            }
            Some(_) => {
                self.entries.remove(q);
                self.misses += 1;
                None
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Stores the result of `q`, computed from `doc` as it is now.
    pub fn insert(&mut self, q: &Query, doc: &TagDocument, result: Arc<RangeSet>) {
        let mut reads = SmallVec::new();
        for t in q.tags_read() {
            match doc.tags.get(t as usize) {
                Some(tag) if tag.version != 0 => reads.push((t, tag.version)),
                _ => return,
            }
        }
        if self.entries.len() >= self.max_entries && !self.entries.contains_key(q) {
            self.entries.retain(|_, e| Self::fresh(e, doc));
            if self.entries.len() >= self.max_entries {
                self.entries.clear();
            }
        }
        let clips = (doc.clips_version, doc.clips.len());
        self.entries.insert(
            q.clone(),
            CacheEntry {
                reads,
                clips,
                result,
            },
        );
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

/// The result of [`QueryEngine::run`].
#[derive(Debug, Clone)]
pub struct QueryOutcome {
    /// Ranges per clip.
    pub result: Arc<RangeSet>,
    /// True when the result came from the cache.
    pub cached: bool,
    /// What `auto` chose (when the engine was `auto` and the result was computed now).
    pub auto: Option<AutoReport>,
}

/// Everything needed to answer queries on a changing document: the packed index, the evaluator's
/// buffers and the cache.
#[derive(Debug, Default)]
pub struct QueryEngine {
    pub index: TagIndex,
    pub evaluator: Evaluator,
    pub cache: QueryCache,
}

impl QueryEngine {
    pub fn new(doc: &TagDocument) -> Self {
        Self {
            index: TagIndex::build(doc),
            evaluator: Evaluator::new(),
            cache: QueryCache::default(),
        }
    }

    /// Evaluates `q` on `doc` (cache first; the index is brought up to date on a miss).
    pub fn run(
        &mut self,
        doc: &TagDocument,
        q: &Query,
        engine: Engine,
    ) -> Result<QueryOutcome, EvalError> {
        if let Some(result) = self.cache.get(q, doc) {
            return Ok(QueryOutcome {
                result,
                cached: true,
                auto: None,
            });
        }
        self.index.sync(doc);
        self.index.make_room_for(q);
        let mut out = RangeSet::new();
        let auto = self.evaluator.eval(q, &self.index, engine, &mut out)?;
        let result = Arc::new(out);
        self.cache.insert(q, doc, result.clone());
        Ok(QueryOutcome {
            result,
            cached: false,
            auto,
        })
    }
}

/// Evaluates `q` on `doc` once (builds a throw-away index): ranges per clip and, for `auto`, what it
/// chose.
pub fn evaluate(
    doc: &TagDocument,
    q: &Query,
    engine: Engine,
) -> Result<(RangeSet, Option<AutoReport>), EvalError> {
    let idx = TagIndex::build(doc);
    let mut out = RangeSet::new();
    let report = Evaluator::new().eval(q, &idx, engine, &mut out)?;
    Ok((out, report))
}
