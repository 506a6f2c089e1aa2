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
//! per number (docs/PERFORMANCE.md, "Sidecar mode").

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};

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
    #[serde(default, borrow)]
    tags: Lists<'a>,
}

/// An optional number that is never `null` (`null` is an error for the tree reader to name).
#[derive(Default)]
struct Number(Option<f64>);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        f64::deserialize(d).map(|v| Number(Some(v)))
    }
}

/// The `tags` object: every entry in file order, duplicates included (the caller refuses them).
#[derive(Default)]
struct Lists<'a>(Vec<(Cow<'a, str>, Vec<Range>)>);

impl<'de: 'a, 'a> Deserialize<'de> for Lists<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Lists<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of range lists")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Lists<'a>, A::Error> {
                let mut out = Vec::with_capacity(m.size_hint().unwrap_or(0));
                while let Some(name) = m.next_key::<Cow<'de, str>>()? {
                    let RangeList(list) = m.next_value()?;
                    out.push((name, list));
                }
                Ok(Lists(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// A list of `[start, stop]` pairs of `u32`.
struct RangeList(Vec<Range>);

impl<'de> Deserialize<'de> for RangeList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RangeList;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of [start, stop] pairs")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<RangeList, A::Error> {
                let mut out = Vec::with_capacity(s.size_hint().unwrap_or(0));
                while let Some([start, stop]) = s.next_element::<[u32; 2]>()? {
                    out.push(Range::new(start, stop));
                }
                Ok(RangeList(out))
            }
        }
        d.deserialize_seq(V)
    }
}

/// The clip tags of `text` when it is a sidecar the fast path takes (see the module); `None`
/// otherwise, for the tree reader.
pub(crate) fn parse(text: &str) -> Option<ClipTags> {
    let f: Fields = serde_json::from_str(text).ok()?;
    let fine = f.format == CLIPTAGS_FORMAT
        && (1..=CLIPTAGS_VERSION).contains(&f.version)
        && !f.clip.trim().is_empty()
        && f.frames <= MAX_CLIP_FRAMES
        && f.fps > 0.0
        && f.fps <= 100_000.0;
    if !fine {
        return None;
    }
    let frames = f.frames as u32;
    let unit_cm = match f.unit_cm.0 {
        None => None,
        Some(u) => {
            let u = u as f32;
            if !(u.is_finite() && u > 0.0) {
                return None;
            }
            Some(u)
        }
    };
    let lists = f.tags.0;
    let good_list =
        |l: &[Range]| is_canonical(l) && l.iter().all(|r| r.start < r.stop && r.stop <= frames);
    if !lists
        .iter()
        .all(|(name, l)| !name.trim().is_empty() && good_list(l))
    {
        return None;
    }
    let mut names: Vec<&str> = lists.iter().map(|(n, _)| n.as_ref()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    Some(ClipTags {
        clip: f.clip.into_owned(),
        frames,
        fps: f.fps as f32,
        unit_cm,
        tags: lists
            .into_iter()
            .map(|(n, l)| (n.into_owned(), l))
            .collect(),
        markers: Vec::new(),
        notes: Vec::new(),
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
