//! Tags: frame ranges per clip, packed range and mask sets, queries over them, and the tag document.

pub mod document;
pub mod range;

pub use document::{ClipId, ClipInfo, SavedQuery, Tag, TagDocument};
pub use range::Range;
