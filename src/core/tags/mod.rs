//! Tags: frame ranges per clip, packed range and mask sets, queries over them, and the tag document.
//!
//! See docs/QUERY.md (the query language and engines) and docs/TAGS_FORMAT.md (the file format).

pub mod clip_ranges;
pub mod color;
pub mod document;
pub mod explain;
pub mod filters;
pub mod format;
pub mod mask;
pub mod mask_set;
pub mod parse;
pub mod query;
pub mod range;
pub mod range_set;

pub use clip_ranges::{ClipRanges, ClipRangesBuilder};
pub use document::{Anchor, ClipId, ClipInfo, Note, SavedQuery, Tag, TagDocument, unique_name};
pub use filters::Filter;
pub use format::{LoadWarning, TagsFileError, load_tags_file, load_tags_str, save_tags_file};
pub use mask::Mask;
pub use mask_set::MaskSet;
pub use parse::{QueryError, parse_query, query_to_text};
pub use query::{AutoReport, Engine, Evaluator, Query, QueryCache, QueryEngine, TagIndex};
pub use range::{Range, RangeList};
pub use range_set::RangeSet;
