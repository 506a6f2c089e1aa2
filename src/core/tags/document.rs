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
    /// Centimetres per unit of the clip's animation file (`None`: the format's convention, see
    /// `ImportOptions::unit_cm`). Stored in the project as the clip's optional `unit_cm`.
    pub unit_cm: Option<f32>,
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
///
/// Change it through [`crate::core::doc::Edit`], the one edit path: edits keep the ranges
/// canonical and give every changed tag (and the clip list) a fresh version, which is what query
/// caches compare.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TagDocument {
    pub clips: Vec<ClipInfo>,
    pub tags: Vec<Tag>,
    pub queries: Vec<SavedQuery>,
    /// The project's autotag settings (generator parameters and custom rules), saved in the
    /// optional `autotag` field; `None` when the project has none (the defaults apply).
    pub autotag: Option<crate::core::autotag::AutotagSettings>,
    /// Version of the clip list (count, order, frame counts): a fresh [`next_version`] whenever a
    /// clip is inserted, removed or changes length. Query results cover every clip (a complement,
    /// `first(..)`), so caches compare this as well as the versions of the tags a query read.
    pub clips_version: u64,
}

/// Version numbers for tags and clip lists: process-wide, strictly increasing, never 0. Every tag
/// edit and every load gives the tag a fresh number, so `(tag index, version)` identifies the tag's
/// content even across documents and after tags are removed or reordered.
pub fn next_version() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl TagDocument {
    /// The id of the clip called `name`.
    pub fn clip_index(&self, name: &str) -> Option<ClipId> {
        self.clips
            .iter()
            .position(|c| c.name == name)
            .map(|i| i as ClipId)
    }

    /// The index of the tag called `name`.
    pub fn tag_index(&self, name: &str) -> Option<usize> {
        self.tags.iter().position(|t| t.name == name)
    }

    /// Gives tag `tag` a fresh version (its ranges changed).
    pub fn touch_tag(&mut self, tag: usize) {
        if let Some(t) = self.tags.get_mut(tag) {
            t.version = next_version();
        }
    }

    /// Gives the clip list a fresh version (a clip was inserted, removed or changed length).
    pub fn touch_clips(&mut self) {
        self.clips_version = next_version();
    }

    /// Gives every tag and the clip list fresh versions (after a load or a wholesale change).
    pub fn touch_all(&mut self) {
        for t in &mut self.tags {
            t.version = next_version();
        }
        self.touch_clips();
    }
}
