//! The fast path of reading a sidecar (`.tags.json`): the text straight into typed fields with
//! borrowed strings, no JSON tree. It takes only a sidecar the writer could have written and that
//! reads without a warning: the known fields once each, no markers or notes, tag names unique and
//! not blank, every list canonical and inside the clip. Anything else (an error to report, a
//! warning to give, markers or notes) returns `None`, and the tree reader
//! ([`parse_cliptags`](super::sidecar::parse_cliptags)) reads the file with its messages, so
//! errors and warnings do not depend on this path. For a file both take, both give the same
//! clip tags (`tests/core/library_sidecar.rs` checks it on every sidecar of the stress project
//! and on damaged variants).
//!
//! A library of 10,000 takes opens through this path: the tree cost an allocation per range and
//! per number, and the lists are read into four buffers a file ([`FlatClipTags`]), not a `String`
//! and a `Vec` a list (docs/PERFORMANCE.md, "Sidecar mode at library scale").

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::sidecar::{CLIPTAGS_FORMAT, CLIPTAGS_VERSION, ClipTags};
use crate::core::tags::Range;
use crate::core::tags::format::MAX_CLIP_FRAMES;
use crate::core::tags::range::is_canonical;

/// The fields of a sidecar without markers and notes (those go to the tree reader).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields<'a> {
    #[serde(borrow)]
    format: Cow<'a, str>,
    version: u64,
    #[serde(borrow)]
    clip: Cow<'a, str>,
    frames: u64,
    fps: f64,
    #[serde(default)]
    unit_cm: Number,
    #[serde(default)]
    tags: Lists,
}

/// An optional number that is never `null` (`null` is an error for the tree reader to name).
#[derive(Default)]
struct Number(Option<f64>);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        f64::deserialize(d).map(|v| Number(Some(v)))
    }
}

/// The `tags` object, every entry in file order (duplicates included: the caller refuses them), in
/// four buffers: the names one after the other, the lists one after the other, and where each
/// ends. A library's sidecars hold a list per tag and clip (786,699 in the stress project): a
/// `String` and a `Vec` for each was most of the time of opening it, in the allocator.
#[derive(Default)]
struct Lists {
    names: String,
    name_ends: Vec<u32>,
    ranges: Vec<Range>,
    range_ends: Vec<u32>,
}

impl Lists {
    fn iter(&self) -> impl Iterator<Item = (&str, &[Range])> {
        (0..self.name_ends.len()).map(|i| {
            let span = |ends: &[u32]| {
                let start = if i == 0 { 0 } else { ends[i - 1] as usize };
                start..ends[i] as usize
            };
            (
                &self.names[span(&self.name_ends)],
                &self.ranges[span(&self.range_ends)],
            )
        })
    }
}

impl<'de> Deserialize<'de> for Lists {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Lists;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of range lists")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Lists, A::Error> {
                let mut out = Lists::default();
                while let Some(name) = m.next_key::<Cow<'de, str>>()? {
                    out.names.push_str(&name);
                    out.name_ends
                        .push(u32::try_from(out.names.len()).map_err(|_| {
                            serde::de::Error::custom("tag names longer than 4 GiB in all")
                        })?);
                    m.next_value_seed(AppendRanges(&mut out.ranges))?;
                    out.range_ends.push(
                        u32::try_from(out.ranges.len())
                            .map_err(|_| serde::de::Error::custom("more than 2^32 ranges"))?,
                    );
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

/// A list of `[start, stop]` pairs of `u32`, appended to a buffer.
struct AppendRanges<'b>(&'b mut Vec<Range>);

impl<'de> DeserializeSeed<'de> for AppendRanges<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        struct V<'b>(&'b mut Vec<Range>);
        impl<'de> Visitor<'de> for V<'_> {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of [start, stop] pairs")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
                while let Some([start, stop]) = s.next_element::<[u32; 2]>()? {
                    self.0.push(Range::new(start, stop));
                }
                Ok(())
            }
        }
        d.deserialize_seq(V(self.0))
    }
}

/// A sidecar the fast path took, in the loader's form: its range lists in four buffers
/// ([`FlatClipTags::lists`]), so a few allocations a file where [`ClipTags`] takes two a list.
pub(crate) struct FlatClipTags {
    pub clip: String,
    pub frames: u32,
    pub fps: f32,
    pub unit_cm: Option<f32>,
    lists: Lists,
}

impl FlatClipTags {
    /// Tag name and canonical ranges, in file order.
    pub fn lists(&self) -> impl Iterator<Item = (&str, &[Range])> {
        self.lists.iter()
    }
}

impl From<FlatClipTags> for ClipTags {
    fn from(f: FlatClipTags) -> Self {
        ClipTags {
            tags: f
                .lists()
                .map(|(name, list)| (name.to_owned(), list.to_vec()))
                .collect(),
            clip: f.clip,
            frames: f.frames,
            fps: f.fps,
            unit_cm: f.unit_cm,
            markers: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// The clip tags of `text` when it is a sidecar the fast path takes (see the module); `None`
/// otherwise, for the tree reader.
pub(crate) fn parse(text: &str) -> Option<ClipTags> {
    parse_flat(text).map(ClipTags::from)
}

/// As [`parse`], in the loader's form.
pub(crate) fn parse_flat(text: &str) -> Option<FlatClipTags> {
    let f: Fields = serde_json::from_str(text).ok()?;
    let fine = f.format == CLIPTAGS_FORMAT
        && (1..=CLIPTAGS_VERSION).contains(&f.version)
        && !f.clip.trim().is_empty()
        && f.frames <= MAX_CLIP_FRAMES
        // The tree reader's check (a rate that is no normal f32, such as 1e-50, is refused
        // there with its place, not read as 0 here).
        && crate::core::limits::fps_ok(f.fps);
    if !fine {
        return None;
    }
    let frames = f.frames as u32;
    let unit_cm = match f.unit_cm.0 {
        None => None,
        // The tree reader's check (it refuses the file with its place).
        Some(u) if crate::core::limits::unit_cm_ok(u) => Some(u as f32),
        Some(_) => return None,
    };
    let lists = f.tags;
    let good_list =
        |l: &[Range]| is_canonical(l) && l.iter().all(|r| r.start < r.stop && r.stop <= frames);
    if !lists
        .iter()
        .all(|(name, l)| !name.trim().is_empty() && good_list(l))
    {
        return None;
    }
    let mut names: Vec<&str> = lists.iter().map(|(n, _)| n).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    Some(FlatClipTags {
        clip: f.clip.into_owned(),
        frames,
        fps: f.fps as f32,
        unit_cm,
        lists,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::library::sidecar::parse_cliptags_tree as parse_tree;

    const GOOD: &str = r#"{
  "format": "taglane.cliptags",
  "version": 1,
  "clip": "walk \"01\"",
  "frames": 100,
  "fps": 30,
  "unit_cm": 2.54,
  "tags": {
    "locomotion:Walk": [[0, 40], [60, 90]],
    "Empty": [],
    "Tired": [[99, 100]]
  }
}
"#;

    /// Where the fast path takes a file, the tree reader gives the same clip tags and no warning;
    /// it declines every file with something to report, markers or notes, or a list to reorder.
    #[test]
    fn the_fast_path_agrees_with_the_tree_reader_or_declines() {
        let fast = parse(GOOD).expect("a sidecar as the writer leaves it");
        assert_eq!(fast.clip, "walk \"01\"");
        assert_eq!(fast.tags[0].1, vec![Range::new(0, 40), Range::new(60, 90)]);
        let variants: Vec<String> = vec![
            GOOD.to_owned(),
            GOOD.replace("\"fps\": 30", "\"fps\": 29.97"),
            GOOD.replace("  \"unit_cm\": 2.54,\n", ""),
            GOOD.replace("\"tags\": {", "\"extra\": 1, \"tags\": {"),
            GOOD.replace("2.54", "null"),
            GOOD.replace("2.54", "-1"),
            GOOD.replace("2.54", "1e40"),
            GOOD.replace("[[0, 40], [60, 90]]", "[[60, 90], [0, 40]]"),
            GOOD.replace("[[0, 40], [60, 90]]", "[[0, 40], [40, 90]]"),
            GOOD.replace("[[0, 40], [60, 90]]", "[[0, 40], [60, 101]]"),
            GOOD.replace("[[0, 40], [60, 90]]", "[[0, 40.0]]"),
            GOOD.replace("[[0, 40], [60, 90]]", "[[0, 40, 1]]"),
            GOOD.replace("[[0, 40], [60, 90]]", "[[40, 40]]"),
            GOOD.replace("[[0, 40], [60, 90]]", "[[0, 4294967296]]"),
            GOOD.replace("\"Empty\"", "\"Tired\""),
            GOOD.replace("\"Empty\"", "\" \""),
            GOOD.replace("\"version\": 1", "\"version\": 2"),
            GOOD.replace("\"version\": 1", "\"version\": 1, \"version\": 1"),
            GOOD.replace("taglane.cliptags", "taglane.tags"),
            GOOD.replace("\"frames\": 100", "\"frames\": -1"),
            GOOD.replace("\"fps\": 30", "\"fps\": 0"),
            GOOD.replace("\"fps\": 30", "\"fps\": 1e-50"),
            GOOD.replace("\"walk \\\"01\\\"\"", "\"  \""),
            GOOD.replace("\"tags\": {", "\"markers\": {\"Tired\": [3]}, \"tags\": {"),
            GOOD.replace("\"tags\": {", "\"tags\": null, \"x\": {"),
            GOOD.replace("\"tags\": {", "\"notes\": {}, \"tags\": {"),
            format!("\u{feff}{GOOD}"),
            format!("{GOOD} x"),
        ];
        let mut taken = Vec::new();
        for (i, text) in variants.iter().enumerate() {
            if let Some(fast) = parse(text) {
                assert_eq!(
                    parse_tree(text, "v.tags.json"),
                    Ok((fast, Vec::new())),
                    "{text}"
                );
                taken.push(i);
            }
        }
        assert_eq!(
            taken,
            [0, 1, 2],
            "only the first three are as the writer leaves them"
        );
    }
}
