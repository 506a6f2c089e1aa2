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

// ---------------------------------------------------------------------------------------------
// Edits. Every change to a tag's ranges gives the tag a fresh version (see
// `query::next_version`), so caches can tell a stale result; clip edits refresh every tag, since
// they change what `!x` covers or shift clip ids.
// ---------------------------------------------------------------------------------------------

use super::parse::rename_tag_in_expr;
use super::query::next_version;
use super::range::{self as range_ops, canonicalize};

/// Why an edit of a [`TagDocument`] was refused. The document is unchanged when one is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("a clip named `{0}` already exists")]
    DuplicateClip(String),
    #[error("a tag named `{0}` already exists")]
    DuplicateTag(String),
    #[error("names cannot be empty")]
    EmptyName,
    #[error("there is no clip {0}")]
    NoSuchClip(ClipId),
    #[error("there is no tag {0}")]
    NoSuchTag(usize),
    #[error(
        "range [{start}, {stop}) is not a non-empty range inside clip `{clip}` ([0, {frames}))"
    )]
    BadRange {
        clip: String,
        start: u32,
        stop: u32,
        frames: u32,
    },
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

    fn touch_all_tags(&mut self) {
        for t in &mut self.tags {
            t.version = next_version();
        }
    }

    fn check_clip(&self, clip: ClipId) -> Result<u32, EditError> {
        self.clips
            .get(clip as usize)
            .map(|c| c.frames)
            .ok_or(EditError::NoSuchClip(clip))
    }

    fn check_tag(&self, tag: usize) -> Result<(), EditError> {
        if tag < self.tags.len() {
            Ok(())
        } else {
            Err(EditError::NoSuchTag(tag))
        }
    }

    /// Appends a clip; returns its id.
    pub fn add_clip(&mut self, clip: ClipInfo) -> Result<ClipId, EditError> {
        if clip.name.is_empty() {
            return Err(EditError::EmptyName);
        }
        if self.clip_index(&clip.name).is_some() {
            return Err(EditError::DuplicateClip(clip.name));
        }
        self.clips.push(clip);
        self.touch_all_tags();
        Ok(self.clips.len() as ClipId - 1)
    }

    pub fn rename_clip(&mut self, clip: ClipId, name: &str) -> Result<(), EditError> {
        self.check_clip(clip)?;
        if name.is_empty() {
            return Err(EditError::EmptyName);
        }
        if self.clip_index(name).is_some_and(|c| c != clip) {
            return Err(EditError::DuplicateClip(name.to_string()));
        }
        self.clips[clip as usize].name = name.to_string();
        Ok(())
    }

    /// Removes a clip and every range on it; the clips after it move down one id.
    pub fn remove_clip(&mut self, clip: ClipId) -> Result<ClipInfo, EditError> {
        self.check_clip(clip)?;
        let info = self.clips.remove(clip as usize);
        for t in &mut self.tags {
            let old = std::mem::take(&mut t.ranges);
            t.ranges = old
                .into_iter()
                .filter(|(c, _)| *c != clip)
                .map(|(c, r)| (if c > clip { c - 1 } else { c }, r))
                .collect();
        }
        self.touch_all_tags();
        Ok(info)
    }

    /// Appends a tag without ranges; returns its index.
    pub fn add_tag(&mut self, name: &str, color: Option<[u8; 3]>) -> Result<usize, EditError> {
        if name.is_empty() {
            return Err(EditError::EmptyName);
        }
        if self.tag_index(name).is_some() {
            return Err(EditError::DuplicateTag(name.to_string()));
        }
        self.tags.push(Tag {
            name: name.to_string(),
            color,
            ranges: BTreeMap::new(),
            version: next_version(),
        });
        Ok(self.tags.len() - 1)
    }

    /// Renames a tag and rewrites the saved queries that use the old name. Returns how many saved
    /// queries were rewritten (queries that do not tokenize are left alone).
    pub fn rename_tag(&mut self, tag: usize, name: &str) -> Result<usize, EditError> {
        self.check_tag(tag)?;
        if name.is_empty() {
            return Err(EditError::EmptyName);
        }
        if self.tag_index(name).is_some_and(|t| t != tag) {
            return Err(EditError::DuplicateTag(name.to_string()));
        }
        let old = std::mem::replace(&mut self.tags[tag].name, name.to_string());
        self.tags[tag].version = next_version();
        let mut rewritten = 0;
        for q in &mut self.queries {
            if let Some(expr) = rename_tag_in_expr(&q.expr, &old, name) {
                q.expr = expr;
                rewritten += 1;
            }
        }
        Ok(rewritten)
    }

    /// Removes a tag (saved queries that use it are kept, and will report the unknown name).
    pub fn remove_tag(&mut self, tag: usize) -> Result<Tag, EditError> {
        self.check_tag(tag)?;
        Ok(self.tags.remove(tag))
    }

    fn check_ranges(&self, clip: ClipId, ranges: &[Range]) -> Result<(), EditError> {
        let frames = self.check_clip(clip)?;
        for r in ranges {
            if r.start >= r.stop || r.stop > frames {
                return Err(EditError::BadRange {
                    clip: self.clips[clip as usize].name.clone(),
                    start: r.start,
                    stop: r.stop,
                    frames,
                });
            }
        }
        Ok(())
    }

    /// Replaces the ranges of `tag` on `clip` (sorted and merged as needed; an empty list removes
    /// the clip from the tag). Returns how many ranges were merged into a neighbour.
    pub fn set_ranges(
        &mut self,
        tag: usize,
        clip: ClipId,
        mut ranges: Vec<Range>,
    ) -> Result<usize, EditError> {
        self.check_tag(tag)?;
        self.check_ranges(clip, &ranges)?;
        let merged = canonicalize(&mut ranges);
        let t = &mut self.tags[tag];
        if ranges.is_empty() {
            t.ranges.remove(&clip);
        } else {
            t.ranges.insert(clip, ranges);
        }
        t.version = next_version();
        Ok(merged)
    }

    /// Adds the frames of `range` to `tag` on `clip`.
    pub fn add_range(&mut self, tag: usize, clip: ClipId, range: Range) -> Result<(), EditError> {
        self.check_tag(tag)?;
        self.check_ranges(clip, &[range])?;
        let t = &mut self.tags[tag];
        let mut out = Vec::new();
        range_ops::union(
            t.ranges.get(&clip).map_or(&[][..], |v| v),
            &[range],
            &mut out,
        );
        t.ranges.insert(clip, out);
        t.version = next_version();
        Ok(())
    }

    /// Removes the frames of `range` from `tag` on `clip` (splitting a range if needed).
    pub fn remove_range(
        &mut self,
        tag: usize,
        clip: ClipId,
        range: Range,
    ) -> Result<(), EditError> {
        self.check_tag(tag)?;
        self.check_ranges(clip, &[range])?;
        let t = &mut self.tags[tag];
        let mut out = Vec::new();
        range_ops::difference(
            t.ranges.get(&clip).map_or(&[][..], |v| v),
            &[range],
            &mut out,
        );
        if out.is_empty() {
            t.ranges.remove(&clip);
        } else {
            t.ranges.insert(clip, out);
        }
        t.version = next_version();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> TagDocument {
        let mut d = TagDocument::default();
        for (name, frames) in [("a", 10), ("b", 20), ("c", 30)] {
            d.add_clip(ClipInfo {
                name: name.into(),
                frames,
                fps: 30.0,
                source: None,
            })
            .unwrap();
        }
        d.add_tag("Walk", None).unwrap();
        d.add_tag("Run", Some([1, 2, 3])).unwrap();
        d.queries.push(SavedQuery {
            name: "q".into(),
            expr: "Walk - Run".into(),
        });
        d
    }

    #[test]
    fn edits_bump_versions_and_validate() {
        let mut d = doc();
        let v = d.tags[0].version;
        assert_eq!(
            d.set_ranges(0, 1, vec![Range::new(5, 9), Range::new(0, 5)])
                .unwrap(),
            1
        );
        assert_eq!(d.tags[0].ranges[&1], vec![Range::new(0, 9)]);
        assert_ne!(d.tags[0].version, v);
        assert!(matches!(
            d.set_ranges(0, 1, vec![Range::new(5, 21)]),
            Err(EditError::BadRange { .. })
        ));
        assert!(matches!(
            d.set_ranges(0, 7, vec![]),
            Err(EditError::NoSuchClip(7))
        ));
        d.add_range(0, 1, Range::new(12, 15)).unwrap();
        d.remove_range(0, 1, Range::new(3, 13)).unwrap();
        assert_eq!(
            d.tags[0].ranges[&1],
            vec![Range::new(0, 3), Range::new(13, 15)]
        );
        assert_eq!(
            d.add_tag("Run", None),
            Err(EditError::DuplicateTag("Run".into()))
        );
    }

    #[test]
    fn removing_a_clip_shifts_ids() {
        let mut d = doc();
        d.set_ranges(0, 0, vec![Range::new(0, 1)]).unwrap();
        d.set_ranges(0, 2, vec![Range::new(0, 2)]).unwrap();
        let v = d.tags[1].version;
        d.remove_clip(1).unwrap();
        assert_eq!(
            d.tags[0].ranges.keys().copied().collect::<Vec<_>>(),
            vec![0, 1]
        );
        assert_eq!(d.tags[0].ranges[&1], vec![Range::new(0, 2)]);
        assert_ne!(d.tags[1].version, v);
    }

    #[test]
    fn renaming_a_tag_rewrites_saved_queries() {
        let mut d = doc();
        assert_eq!(d.rename_tag(0, "loco:Walk").unwrap(), 1);
        assert_eq!(d.queries[0].expr, "loco:Walk - Run");
        assert_eq!(d.rename_tag(1, "run fast").unwrap(), 1);
        assert_eq!(d.queries[0].expr, "loco:Walk - \"run fast\"");
        assert!(d.parse_query(&d.queries[0].expr.clone()).is_ok());
    }
}
