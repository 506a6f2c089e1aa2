//! The editable tag document: clips, tags with ranges per clip, saved queries.
//!
//! This is the editable form; queries run on packed forms built from it.

use std::collections::BTreeMap;

use super::range::Range;

/// Index of a clip in [`TagDocument::clips`].
pub type ClipId = u32;

/// A clip as the tag document knows it: a name, a length in frames and a rate.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipInfo {
    /// Unique within the document.
    pub name: String,
    /// Number of frames; tag ranges lie in `[0, frames)`.
    pub frames: u32,
    /// Frames per second.
    pub fps: f32,
    /// Path of the animation file, relative to the document's file.
    pub source: Option<String>,
}

/// A tag: a name, an optional colour and, for each clip it occurs on, a canonical range list
/// (sorted, disjoint, non-adjacent, non-empty, inside `[0, frames)`).
#[derive(Debug, Clone, PartialEq)]
pub struct Tag {
    /// Unique within the document; may be namespaced (`locomotion:Walk`).
    pub name: String,
    /// sRGB colour.
    pub color: Option<[u8; 3]>,
    /// Ranges per clip; clips without ranges have no entry.
    pub ranges: BTreeMap<ClipId, Vec<Range>>,
    /// Bumped on every change to `ranges`, so caches can tell a stale result.
    pub version: u64,
}

/// A named query expression stored in the document.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedQuery {
    pub name: String,
    pub expr: String,
}

/// The whole tag document.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TagDocument {
    pub clips: Vec<ClipInfo>,
    pub tags: Vec<Tag>,
    pub queries: Vec<SavedQuery>,
}
