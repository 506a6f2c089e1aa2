//! Markers and notes in the `taglane.tags` file (format version 2): reading with full validation
//! and writing, shared by the streaming loader and writer and by the reference ones.
//!
//! ```json
//! {"name": "contact:LeftFoot", "ranges": {"walk_01": [[0, 40]]},
//!  "markers": {"walk_01": [12, 48]},
//!  "notes": {"walk_01": [{"range": [0, 40], "note": "on gravel", "data": {"surface": "gravel"}},
//!                        {"marker": 48, "note": "heel strike"}]}}
//! ```
//!
//! Both are small next to the ranges (one per event, not per frame), so they are read into a small
//! tree ([`Tree`], which keeps duplicate keys so they can be reported) and checked from there.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{LoadWarning, TagsFileError, key_path};
use crate::core::tags::document::{Anchor, ClipId, ClipInfo, Note, Tag};
use crate::core::tags::parse::closest_names;
use crate::core::tags::range::Range;

/// A JSON value with objects as ordered key lists (duplicates kept).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tree {
    Null,
    Bool(bool),
    Num(serde_json::Number),
    Str(String),
    Arr(Vec<Tree>),
    Obj(Vec<(String, Tree)>),
}

impl Tree {
    fn kind(&self) -> &'static str {
        match self {
            Tree::Null => "null",
            Tree::Bool(_) => "a boolean",
            Tree::Num(_) => "a number",
            Tree::Str(_) => "a string",
            Tree::Arr(_) => "an array",
            Tree::Obj(_) => "an object",
        }
    }
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Tree;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<Tree, E> {
                Ok(Tree::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Tree, E> {
                Ok(Tree::Bool(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Tree, E> {
                Ok(Tree::Num(v.into()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Tree, E> {
                Ok(Tree::Num(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Tree, E> {
                Ok(serde_json::Number::from_f64(v).map_or(Tree::Null, Tree::Num))
            }
            fn visit_str<E>(self, v: &str) -> Result<Tree, E> {
                Ok(Tree::Str(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Tree, E> {
                Ok(Tree::Str(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Tree, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(Tree::Arr(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Tree, A::Error> {
                let mut v = Vec::new();
                while let Some(k) = a.next_key::<String>()? {
                    v.push((k, a.next_value()?));
                }
                Ok(Tree::Obj(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// What the checks need to know about the document read so far.
pub(crate) struct Context<'a> {
    pub file: &'a str,
    /// `tags[i]`
    pub tag_path: String,
    pub clips: &'a [ClipInfo],
    pub clip_id: &'a dyn Fn(&str) -> Option<ClipId>,
}

type R<T> = Result<T, TagsFileError>;

/// Error messages and frame checks for one file.
struct Checker<'a> {
    file: &'a str,
}

impl Checker<'_> {
    fn fail(&self, path: &str, message: impl Into<String>) -> TagsFileError {
        TagsFileError::Invalid {
            file: self.file.to_owned(),
            path: path.to_owned(),
            message: message.into(),
        }
    }

    fn frame(&self, v: &Tree, path: &str, frames: u32, what: &str) -> R<u32> {
        let n = match v {
            Tree::Num(n) => n.as_u64(),
            _ => None,
        };
        match n {
            Some(f) if f < u64::from(frames) => Ok(f as u32),
            Some(f) => Err(self.fail(
                path,
                format!(
                    "{what} {f} is outside the clip (frames 0 to {})",
                    frames.saturating_sub(1)
                ),
            )),
            None => Err(self.fail(
                path,
                format!(
                    "expected a whole frame number >= 0 for the {what}, found {}",
                    match v {
                        Tree::Num(n) => n.to_string(),
                        other => other.kind().to_owned(),
                    }
                ),
            )),
        }
    }
}

impl Context<'_> {
    fn fail(&self, path: &str, message: impl Into<String>) -> TagsFileError {
        Checker { file: self.file }.fail(path, message)
    }

    /// The entries of an object keyed by clip name, each with its clip id; duplicate keys and
    /// unknown clips are errors.
    fn clip_entries<'t>(&self, v: &'t Tree, path: &str) -> R<Vec<(ClipId, String, &'t Tree)>> {
        let Tree::Obj(entries) = v else {
            return Err(self.fail(path, format!("expected an object, found {}", v.kind())));
        };
        let mut out: Vec<(ClipId, String, &Tree)> = Vec::with_capacity(entries.len());
        for (name, value) in entries {
            let p = key_path(path, name);
            if out.iter().any(|(_, n, _)| n == name) {
                return Err(self.fail(&p, format!("duplicate key `{name}`")));
            }
            let Some(clip) = (self.clip_id)(name) else {
                let mut msg = format!("unknown clip `{name}`; expected a clip of the `clips` list");
                let near = closest_names(name, self.clips.iter().map(|c| c.name.as_str()));
                if !near.is_empty() {
                    let _ = write!(msg, " (did you mean `{}`?)", near.join("` or `"));
                }
                return Err(self.fail(&p, msg));
            };
            out.push((clip, p, value));
        }
        Ok(out)
    }
}

/// Reads a tag's `markers`: clip name -> list of frames. Unsorted lists are sorted; a frame given
/// twice is kept once, with a warning.
pub(crate) fn read_markers(
    cx: &Context<'_>,
    v: &Tree,
    warnings: &mut Vec<LoadWarning>,
) -> R<BTreeMap<ClipId, Vec<u32>>> {
    let path = format!("{}.markers", cx.tag_path);
    let mut out = BTreeMap::new();
    for (clip, cp, list) in cx.clip_entries(v, &path)? {
        let frames = cx.clips[clip as usize].frames;
        let markers = read_marker_list(cx.file, list, &cp, frames, warnings)?;
        if !markers.is_empty() {
            out.insert(clip, markers);
        }
    }
    Ok(out)
}

/// Reads one list of marker frames at `path` of `file`, for a clip of `frames` frames: sorted,
/// each frame once (a warning when one was given twice).
pub(crate) fn read_marker_list(
    file: &str,
    list: &Tree,
    path: &str,
    frames: u32,
    warnings: &mut Vec<LoadWarning>,
) -> R<Vec<u32>> {
    let cx = Checker { file };
    let Tree::Arr(items) = list else {
        return Err(cx.fail(
            path,
            format!("expected an array of frames, found {}", list.kind()),
        ));
    };
    let mut markers = Vec::with_capacity(items.len());
    for (k, item) in items.iter().enumerate() {
        markers.push(cx.frame(item, &format!("{path}[{k}]"), frames, "marker")?);
    }
    markers.sort_unstable();
    let n = markers.len();
    markers.dedup();
    if markers.len() < n {
        warnings.push(LoadWarning {
            path: path.to_owned(),
            message: format!("{} marker(s) given twice were kept once", n - markers.len()),
        });
    }
    Ok(markers)
}

/// Reads a tag's `notes`: clip name -> list of `{"range": [start, stop]}` or `{"marker": frame}`,
/// each with an optional `"note"` text and `"data"` object of strings. The anchor must be a range
/// or marker the tag has on that clip (a range inside one of the tag's ranges, e.g. one merged on
/// load, moves to it, with a warning).
pub(crate) fn read_notes(
    cx: &Context<'_>,
    v: &Tree,
    tag: &Tag,
    warnings: &mut Vec<LoadWarning>,
) -> R<BTreeMap<ClipId, Vec<(Anchor, Note)>>> {
    let path = format!("{}.notes", cx.tag_path);
    let mut out = BTreeMap::new();
    for (clip, cp, list) in cx.clip_entries(v, &path)? {
        let frames = cx.clips[clip as usize].frames;
        let notes = read_note_list(
            cx.file,
            list,
            &cp,
            frames,
            tag.ranges_on(clip),
            tag.markers_on(clip),
            warnings,
        )?;
        if !notes.is_empty() {
            out.insert(clip, notes);
        }
    }
    Ok(out)
}

/// Reads one list of notes at `path` of `file`, on a clip of `frames` frames where the tag has
/// `ranges` and `markers`. Sorted by anchor; two notes on one anchor are combined (with a warning).
#[allow(clippy::too_many_lines)]
pub(crate) fn read_note_list(
    file: &str,
    list: &Tree,
    cp: &str,
    frames: u32,
    ranges: &[Range],
    markers: &[u32],
    warnings: &mut Vec<LoadWarning>,
) -> R<Vec<(Anchor, Note)>> {
    let cx = Checker { file };
    let Tree::Arr(items) = list else {
        return Err(cx.fail(
            cp,
            format!("expected an array of notes, found {}", list.kind()),
        ));
    };
    let mut notes: Vec<(Anchor, Note)> = Vec::with_capacity(items.len());
    for (k, item) in items.iter().enumerate() {
        let ip = format!("{cp}[{k}]");
        let Tree::Obj(fields) = item else {
            return Err(cx.fail(&ip, format!("expected an object, found {}", item.kind())));
        };
        let mut seen: Vec<&str> = Vec::new();
        for (key, _) in fields {
            if seen.contains(&key.as_str()) {
                return Err(cx.fail(&key_path(&ip, key), format!("duplicate key `{key}`")));
            }
            seen.push(key);
            if !["range", "marker", "note", "data"].contains(&key.as_str()) {
                warnings.push(LoadWarning {
                    path: key_path(&ip, key),
                    message: format!(
                        "unknown field `{key}` is ignored and will not be saved (known: range, marker, note, data)"
                    ),
                });
            }
        }
        let get = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        let anchor = match (get("range"), get("marker")) {
            (Some(_), Some(_)) => {
                return Err(cx.fail(
                    &ip,
                    "a note is on a range or on a marker: give `range` or `marker`, not both",
                ));
            }
            (None, None) => {
                return Err(cx.fail(
                    &ip,
                    "expected `range` ([start, stop]) or `marker` (a frame): what the note is on",
                ));
            }
            (Some(r), None) => {
                let rp = format!("{ip}.range");
                let pair = match r {
                    Tree::Arr(p) if p.len() == 2 => p,
                    other => {
                        return Err(cx.fail(
                            &rp,
                            format!("expected a range [start, stop], found {}", other.kind()),
                        ));
                    }
                };
                let start = cx.frame(&pair[0], &format!("{rp}[0]"), frames, "range start")?;
                let stop = match &pair[1] {
                    Tree::Num(n) => n.as_u64().filter(|&s| s <= u64::from(frames)),
                    _ => None,
                }
                .ok_or_else(|| {
                    cx.fail(
                        &format!("{rp}[1]"),
                        format!(
                            "expected a whole frame number from 1 to {frames} for the range stop"
                        ),
                    )
                })? as u32;
                if start >= stop {
                    return Err(cx.fail(
                        &rp,
                        format!("expected start < stop, found [{start}, {stop}]"),
                    ));
                }
                let want = Range::new(start, stop);
                match ranges
                    .iter()
                    .find(|r| r.start <= want.start && want.stop <= r.stop)
                {
                    Some(&r) if r == want => Anchor::Range(r),
                    Some(&r) => {
                        warnings.push(LoadWarning {
                            path: rp.clone(),
                            message: format!(
                                "the note's range [{start}, {stop}] lies inside the tag's range [{}, {}]: moved there",
                                r.start, r.stop
                            ),
                        });
                        Anchor::Range(r)
                    }
                    None => {
                        return Err(cx.fail(
                            &rp,
                            format!("the tag has no range [{start}, {stop}] on this clip for the note to be on"),
                        ));
                    }
                }
            }
            (None, Some(m)) => {
                let mp = format!("{ip}.marker");
                let f = cx.frame(m, &mp, frames, "marker")?;
                if markers.binary_search(&f).is_err() {
                    return Err(cx.fail(
                        &mp,
                        format!(
                            "the tag has no marker at frame {f} on this clip for the note to be on"
                        ),
                    ));
                }
                Anchor::Marker(f)
            }
        };
        let text = match get("note") {
            None => String::new(),
            Some(Tree::Str(s)) => s.clone(),
            Some(other) => {
                return Err(cx.fail(
                    &format!("{ip}.note"),
                    format!("expected a string, found {}", other.kind()),
                ));
            }
        };
        let mut data = BTreeMap::new();
        match get("data") {
            None => {}
            Some(Tree::Obj(pairs)) => {
                for (key, value) in pairs {
                    let kp = key_path(&format!("{ip}.data"), key);
                    let Tree::Str(value) = value else {
                        return Err(cx.fail(
                            &kp,
                            format!("expected a string value, found {}", value.kind()),
                        ));
                    };
                    if key.trim().is_empty() {
                        return Err(cx.fail(&kp, "a data key cannot be empty"));
                    }
                    if data.insert(key.clone(), value.clone()).is_some() {
                        return Err(cx.fail(&kp, format!("duplicate key `{key}`")));
                    }
                }
            }
            Some(other) => {
                return Err(cx.fail(
                    &format!("{ip}.data"),
                    format!("expected an object of strings, found {}", other.kind()),
                ));
            }
        }
        let note = Note { text, data };
        match notes.iter_mut().find(|(a, _)| *a == anchor) {
            Some((_, existing)) => {
                warnings.push(LoadWarning {
                    path: ip,
                    message: "a second note on the same range or marker: the two were combined"
                        .to_owned(),
                });
                *existing = Note::combine([&*existing, &note]);
            }
            None => {
                if !note.is_empty() {
                    notes.push((anchor, note));
                }
            }
        }
    }
    notes.sort_by_key(|(a, _)| *a);
    Ok(notes)
}

/// True when the document needs format version 2 (a tag has markers or notes).
pub(crate) fn needs_version_2(tags: &[Tag]) -> bool {
    tags.iter()
        .any(|t| !t.markers.is_empty() || !t.notes.is_empty())
}

/// Writes `, "markers": {...}` and `, "notes": {...}` of tag `t` (nothing when it has none), one
/// clip per line. `clip_names` are the JSON-quoted names. Errors: `(path, message)`.
pub(crate) fn write(
    s: &mut String,
    t: &Tag,
    i: usize,
    clip_names: &[String],
    json_str: impl Fn(&str) -> String,
) -> Result<(), (String, String)> {
    let name_of = |clip: ClipId, field: &str| {
        clip_names.get(clip as usize).ok_or_else(|| {
            (
                format!("tags[{i}].{field}"),
                format!("{field} on clip id {clip}, which does not exist"),
            )
        })
    };
    if !t.markers.is_empty() {
        s.push_str(", \"markers\": {");
        for (k, (&clip, frames)) in t.markers.iter().enumerate() {
            s.push_str(if k == 0 { "\n      " } else { ",\n      " });
            s.push_str(name_of(clip, "markers")?);
            s.push_str(": [");
            for (j, f) in frames.iter().enumerate() {
                if j > 0 {
                    s.push_str(", ");
                }
                let _ = write!(s, "{f}");
            }
            s.push(']');
        }
        s.push_str("\n    }");
    }
    if !t.notes.is_empty() {
        s.push_str(", \"notes\": {");
        for (k, (&clip, notes)) in t.notes.iter().enumerate() {
            s.push_str(if k == 0 { "\n      " } else { ",\n      " });
            s.push_str(name_of(clip, "notes")?);
            s.push_str(": ");
            write_note_list(s, notes, &json_str);
        }
        s.push_str("\n    }");
    }
    Ok(())
}

/// Writes a list of notes as `[{"range": [a, b], "note": ..., "data": {...}}, {"marker": f}]`.
pub(crate) fn write_note_list(
    s: &mut String,
    notes: &[(Anchor, Note)],
    json_str: impl Fn(&str) -> String,
) {
    s.push('[');
    for (j, (anchor, note)) in notes.iter().enumerate() {
        if j > 0 {
            s.push_str(", ");
        }
        match anchor {
            Anchor::Range(r) => {
                let _ = write!(s, "{{\"range\": [{}, {}]", r.start, r.stop);
            }
            Anchor::Marker(f) => {
                let _ = write!(s, "{{\"marker\": {f}");
            }
        }
        if !note.text.is_empty() {
            s.push_str(", \"note\": ");
            s.push_str(&json_str(&note.text));
        }
        if !note.data.is_empty() {
            s.push_str(", \"data\": {");
            for (d, (key, value)) in note.data.iter().enumerate() {
                if d > 0 {
                    s.push_str(", ");
                }
                s.push_str(&json_str(key));
                s.push_str(": ");
                s.push_str(&json_str(value));
            }
            s.push('}');
        }
        s.push('}');
    }
    s.push(']');
}
