//! Sidecar mode: each clip's tags live in a file next to its take (`walk.bvh.tags.json`), and the
//! project file lists only the folders of takes, the tags (names and colours) and the saved
//! queries. Two animators tagging different takes under version control then never touch the same
//! file. See docs/LIBRARY.md and docs/TAGS_FORMAT.md for the formats.
//!
//! - A sidecar is the per-clip JSON of `core::doc::exchange::per_clip_json` (`taglane.cliptags`
//!   version 1: `clip`, `frames`, `fps`, `tags`), plus an optional `unit_cm`. A clip of a file with
//!   several animations (named `FILE#ANIMATION`) has its own sidecar, `Fox.glb#Walk.tags.json`.
//! - Loading walks the folders, reads every sidecar and builds the document: clips in walk order,
//!   tags in the project's order then the others by name. A sidecar that cannot be read is reported
//!   (file and JSON path) and its take left out; saving never writes over it. Takes without a
//!   sidecar are listed as untracked: importing the folder adds them.
//! - Saving checks everything first, then writes each sidecar whose text changed and finally the
//!   project file, each with [`crate::core::io::write_atomic`]. Unchanged files are not rewritten,
//!   so version control sees only what changed. Sidecars of clips that are not in the document
//!   are left in place and reported (delete them, or their takes, to drop the takes for good).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::cliptags_fast::FlatClipTags;
use super::json::{self, Json, check_keys, get, key_path};
use super::merge::{OnDisk, Theirs};
use super::naming::ANIMATION_SEPARATOR;
use super::plan::{source_for, source_path};
use super::walk::{SIDECAR_SUFFIX, absolute, find_takes};
use crate::core::json::{f32_text, string_text};
use crate::core::tags::format::annotations::{self, Tree};
use crate::core::tags::format::parse_color;
use crate::core::tags::format::{FORMAT_TAG, MAX_CLIP_FRAMES, push_queries};
use crate::core::tags::{
    Anchor, ClipId, ClipInfo, ClipRanges, LoadWarning, Note, Range, SavedQuery, Tag, TagDocument,
    TagsFileError, load_tags_str, parse_query,
};

/// What to do after a save that stopped so as not to lose either version, in the app (which has
/// Save As) and on the command line (which starts again from the files on disk).
pub(crate) const KEEP_BOTH_ADVICE: &str = "In the app, Save As keeps this version in another \
     file, and reopening the project shows the one on disk; on the command line, run the command \
     again: it starts from the files on disk";

/// The `format` of a sidecar.
pub const CLIPTAGS_FORMAT: &str = "taglane.cliptags";
/// The newest sidecar version this build reads and the one it writes.
pub const CLIPTAGS_VERSION: u64 = 1;
/// The project file version of sidecar mode.
pub const SIDECAR_PROJECT_VERSION: u64 = 2;
/// The value of the project's `storage` field in sidecar mode.
pub const STORAGE_SIDECAR: &str = "sidecar";

/// One clip's tags as a sidecar holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipTags {
    pub clip: String,
    pub frames: u32,
    pub fps: f32,
    pub unit_cm: Option<f32>,
    /// Tag name and canonical ranges, in file order.
    pub tags: Vec<(String, Vec<Range>)>,
    /// Tag name and markers (sorted frames).
    pub markers: Vec<(String, Vec<u32>)>,
    /// Tag name and notes on its ranges and markers.
    pub notes: Vec<(String, Vec<(Anchor, Note)>)>,
}

/// The project file of sidecar mode.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SidecarProject {
    /// Folders of takes, relative to the project file (or absolute).
    pub folders: Vec<String>,
    /// Tags in display order, with their colours.
    pub tags: Vec<(String, Option<[u8; 3]>)>,
    pub queries: Vec<SavedQuery>,
    /// The project's autotag settings (docs/AUTOTAG.md), as in a single-file project.
    pub autotag: Option<crate::core::settings::AutotagSettings>,
}

/// Which animation of `take` the clip `name` is, for its sidecar's name: the part after `FILE#`
/// ([`crate::core::source::animation_part`]) of a clip of a file that holds several animations
/// (a glTF, or any take `shared` by several clips), else none. A BVH holds one animation, so a `#` in its clip's name (a take called `t#1.bvh`)
/// is part of the name: its sidecar is `t#1.bvh.tags.json`, as for any take.
pub(crate) fn animation_part<'a>(take: &Path, name: &'a str, shared: bool) -> Option<&'a str> {
    let several = matches!(
        crate::core::anim::AnimFormat::from_path(take),
        Some(crate::core::anim::AnimFormat::Glb | crate::core::anim::AnimFormat::Gltf)
    );
    (shared || (several && name.contains(ANIMATION_SEPARATOR))).then(|| {
        let stem = take.file_stem().unwrap_or_default().to_string_lossy();
        crate::core::source::animation_part(name, &stem)
    })
}

/// The sidecar of a take (`walk.bvh.tags.json`), or of one animation of it (`Fox.glb#Walk.tags.json`).
pub fn sidecar_path(take: &Path, animation: Option<&str>) -> PathBuf {
    let mut name = take
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(a) = animation {
        name.push(ANIMATION_SEPARATOR);
        name.extend(a.chars().map(|c| {
            if matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|') || c.is_control() {
                '_'
            } else {
                c
            }
        }));
    }
    name.push_str(SIDECAR_SUFFIX);
    take.with_file_name(name)
}

fn invalid(file: &str, path: &str, message: impl Into<String>) -> TagsFileError {
    TagsFileError::Invalid {
        file: file.to_owned(),
        path: if path.is_empty() {
            "(top level)".to_owned()
        } else {
            path.to_owned()
        },
        message: message.into(),
    }
}

/// A whole number in `[0, max]` at `path`.
fn uint(v: &Json, path: &str, max: u64, what: &str, file: &str) -> Result<u64, TagsFileError> {
    match v {
        Json::Num(n) => match n.as_u64() {
            Some(x) if x <= max => Ok(x),
            Some(x) => Err(invalid(
                file,
                path,
                format!("{what} {x} is too large; the limit is {max}"),
            )),
            None => Err(invalid(
                file,
                path,
                format!("expected {what} as a whole number >= 0, found {n}"),
            )),
        },
        other => Err(invalid(
            file,
            path,
            format!("expected {what} (a whole number), found {}", other.kind()),
        )),
    }
}

fn string<'a>(v: &'a Json, path: &str, file: &str) -> Result<&'a str, TagsFileError> {
    match v {
        Json::Str(s) => Ok(s),
        other => Err(invalid(
            file,
            path,
            format!("expected a string, found {}", other.kind()),
        )),
    }
}

fn required<'a>(
    fields: &'a [(String, Json)],
    path: &str,
    key: &str,
    file: &str,
) -> Result<&'a Json, TagsFileError> {
    get(fields, key).ok_or_else(|| invalid(file, path, format!("missing required field `{key}`")))
}

fn object<'a>(v: &'a Json, path: &str, file: &str) -> Result<&'a [(String, Json)], TagsFileError> {
    match v {
        Json::Obj(f) => Ok(f),
        other => Err(invalid(
            file,
            path,
            format!("expected an object, found {}", other.kind()),
        )),
    }
}

fn array<'a>(v: &'a Json, path: &str, file: &str) -> Result<&'a [Json], TagsFileError> {
    match v {
        Json::Arr(a) => Ok(a),
        other => Err(invalid(
            file,
            path,
            format!("expected an array, found {}", other.kind()),
        )),
    }
}

fn warn_unknown(
    unknown: Vec<&str>,
    path: &str,
    known: &[&str],
    file: &str,
    warnings: &mut Vec<LoadWarning>,
) {
    for k in unknown {
        warnings.push(LoadWarning {
            path: format!("{file}: {}", key_path(path, k)),
            message: format!(
                "unknown field `{k}` is ignored, and dropped when this file's tags are next \
                 changed and saved (known: {})",
                known.join(", ")
            ),
        });
    }
}

/// Warnings of the readers shared with the project file (their paths are inside the document),
/// named with the sidecar `file` like the sidecar's other warnings: once merged into a library's
/// warnings they would otherwise seem to be about the project file.
fn in_file(file: &str, warnings: Vec<LoadWarning>) -> impl Iterator<Item = LoadWarning> {
    warnings.into_iter().map(move |w| LoadWarning {
        path: format!("{file}: {}", w.path),
        message: w.message,
    })
}

/// Checks `format` and `version` of a file.
fn header(
    fields: &[(String, Json)],
    format: &str,
    versions: std::ops::RangeInclusive<u64>,
    file: &str,
) -> Result<u64, TagsFileError> {
    let f = string(required(fields, "", "format", file)?, "format", file)?;
    if f != format {
        return Err(invalid(
            file,
            "format",
            format!("expected \"{format}\", found \"{f}\""),
        ));
    }
    let v = uint(
        required(fields, "", "version", file)?,
        "version",
        u64::MAX,
        "the version",
        file,
    )?;
    if !versions.contains(&v) {
        return Err(invalid(
            file,
            "version",
            format!(
                "unsupported version {v}; this build reads versions {} to {}",
                versions.start(),
                versions.end()
            ),
        ));
    }
    Ok(v)
}

/// Parses a sidecar (`file` names it in messages). Ranges must lie in `[0, frames)`; overlapping or
/// adjacent ranges are merged with a warning. A sidecar as the writer leaves it is read straight
/// into typed fields ([`parse_cliptags_fast`]); anything else, through a JSON tree that names the
/// place of each problem ([`parse_cliptags_tree`]).
pub fn parse_cliptags(
    text: &str,
    file: &str,
) -> Result<(ClipTags, Vec<LoadWarning>), TagsFileError> {
    read_sidecar(text, file).map(|read| match read {
        Sidecar::Fast(f) => (f.into(), Vec::new()),
        Sidecar::Tree(ct, w) => (ct, w),
    })
}

/// The fast path of [`parse_cliptags`] alone: `Some` for a sidecar as the writer leaves it
/// (without markers or notes), read straight into typed fields; `None` for anything else.
pub fn parse_cliptags_fast(text: &str) -> Option<ClipTags> {
    super::cliptags_fast::parse(text)
}

/// [`parse_cliptags`] through the JSON tree, for every file (the fast path's oracle in tests).
pub fn parse_cliptags_tree(
    text: &str,
    file: &str,
) -> Result<(ClipTags, Vec<LoadWarning>), TagsFileError> {
    const KNOWN: [&str; 9] = [
        "format", "version", "clip", "frames", "fps", "unit_cm", "tags", "markers", "notes",
    ];
    let root = json::parse(text, file)?;
    let fields = object(&root, "", file)?;
    let fail = |p: &str, m: String| invalid(file, p, m);
    let unknown = check_keys(fields, "", &KNOWN, &fail)?;
    let mut warnings = Vec::new();
    warn_unknown(unknown, "", &KNOWN, file, &mut warnings);
    header(fields, CLIPTAGS_FORMAT, 1..=CLIPTAGS_VERSION, file)?;
    let clip = string(required(fields, "", "clip", file)?, "clip", file)?;
    if clip.trim().is_empty() {
        return Err(invalid(file, "clip", "expected a non-empty clip name"));
    }
    let frames = uint(
        required(fields, "", "frames", file)?,
        "frames",
        MAX_CLIP_FRAMES,
        "frames",
        file,
    )? as u32;
    let fps = match required(fields, "", "fps", file)? {
        Json::Num(n) => n.as_f64().unwrap_or(f64::NAN),
        other => {
            return Err(invalid(
                file,
                "fps",
                format!(
                    "expected frames per second (a number), found {}",
                    other.kind()
                ),
            ));
        }
    };
    if !crate::core::limits::fps_ok(fps) {
        return Err(invalid(file, "fps", crate::core::limits::fps_message(fps)));
    }
    let unit_cm = match get(fields, "unit_cm") {
        None => None,
        Some(Json::Num(n)) => {
            let u = n.as_f64().unwrap_or(f64::NAN);
            if !crate::core::limits::unit_cm_ok(u) {
                return Err(invalid(
                    file,
                    "unit_cm",
                    crate::core::limits::unit_cm_message(u),
                ));
            }
            Some(u as f32)
        }
        Some(other) => {
            return Err(invalid(
                file,
                "unit_cm",
                format!(
                    "expected centimetres per unit (a number), found {}",
                    other.kind()
                ),
            ));
        }
    };
    let mut tags = Vec::new();
    if let Some(t) = get(fields, "tags") {
        let entries = object(t, "tags", file)?;
        check_keys(entries, "tags", &[], &fail)?;
        for (name, list) in entries {
            let path = key_path("tags", name);
            if name.trim().is_empty() {
                return Err(invalid(file, &path, "expected a non-empty tag name"));
            }
            let items = array(list, &path, file)?;
            let mut ranges = Vec::with_capacity(items.len());
            for (k, item) in items.iter().enumerate() {
                // A well-formed range is taken as it is: no JSON path is built unless something
                // is wrong (then the checks below name the place).
                if let Json::Arr(pair) = item
                    && let [Json::Num(a), Json::Num(b)] = pair.as_slice()
                    && let (Some(start), Some(stop)) = (a.as_u64(), b.as_u64())
                    && start < stop
                    && stop <= u64::from(frames)
                {
                    ranges.push(Range::new(start as u32, stop as u32));
                    continue;
                }
                let ip = format!("{path}[{k}]");
                let pair = array(item, &ip, file)?;
                if pair.len() != 2 {
                    return Err(invalid(
                        file,
                        &ip,
                        format!(
                            "expected a range [start, stop] with 2 numbers, found {} values",
                            pair.len()
                        ),
                    ));
                }
                let start = uint(
                    &pair[0],
                    &format!("{ip}[0]"),
                    u64::from(u32::MAX),
                    "the start frame",
                    file,
                )? as u32;
                let stop = uint(
                    &pair[1],
                    &format!("{ip}[1]"),
                    u64::from(u32::MAX),
                    "the stop frame",
                    file,
                )? as u32;
                if start >= stop {
                    return Err(invalid(
                        file,
                        &ip,
                        format!(
                            "range [{start}, {stop}] is empty or reversed; expected start < stop (stop is exclusive)"
                        ),
                    ));
                }
                if stop > frames {
                    return Err(invalid(
                        file,
                        &ip,
                        format!(
                            "range [{start}, {stop}] is outside clip `{clip}`, which has {frames} frames: expected 0 <= start < stop <= {frames}"
                        ),
                    ));
                }
                ranges.push(Range::new(start, stop));
            }
            // A list as the writer leaves it (sorted, apart) is kept without a copy.
            if crate::core::tags::range::is_canonical(&ranges) {
                tags.push((name.clone(), ranges));
                continue;
            }
            let mut canonical = ranges.clone();
            crate::core::tags::range::canonicalize(&mut canonical);
            if canonical.len() != ranges.len() {
                warnings.push(LoadWarning {
                    path: format!("{file}: {path}"),
                    message: format!(
                        "overlapping or adjacent ranges merged: {} ranges became {}",
                        ranges.len(),
                        canonical.len()
                    ),
                });
            }
            tags.push((name.clone(), canonical));
        }
    }
    // Markers and notes, keyed by tag name like the ranges.
    let mut markers: Vec<(String, Vec<u32>)> = Vec::new();
    if let Some(m) = get(fields, "markers") {
        let entries = object(m, "markers", file)?;
        check_keys(entries, "markers", &[], &fail)?;
        for (name, list) in entries {
            let path = key_path("markers", name);
            let mut found = Vec::new();
            let list =
                annotations::read_marker_list(file, &to_tree(list), &path, frames, &mut found)?;
            warnings.extend(in_file(file, found));
            if !list.is_empty() {
                markers.push((name.clone(), list));
            }
        }
    }
    let mut notes: Vec<(String, Vec<(Anchor, Note)>)> = Vec::new();
    if let Some(n) = get(fields, "notes") {
        let entries = object(n, "notes", file)?;
        check_keys(entries, "notes", &[], &fail)?;
        for (name, list) in entries {
            let path = key_path("notes", name);
            let ranges = tags
                .iter()
                .find(|(t, _)| t == name)
                .map_or(&[][..], |(_, r)| r.as_slice());
            let marks = markers
                .iter()
                .find(|(t, _)| t == name)
                .map_or(&[][..], |(_, m)| m.as_slice());
            let mut found = Vec::new();
            let list = annotations::read_note_list(
                file,
                &to_tree(list),
                &path,
                frames,
                ranges,
                marks,
                &mut found,
            )?;
            warnings.extend(in_file(file, found));
            if !list.is_empty() {
                notes.push((name.clone(), list));
            }
        }
    }
    Ok((
        ClipTags {
            clip: clip.to_owned(),
            frames,
            fps: fps as f32,
            unit_cm,
            tags,
            markers,
            notes,
        },
        warnings,
    ))
}

fn to_value(v: &Json) -> serde_json::Value {
    match v {
        Json::Null => serde_json::Value::Null,
        Json::Bool(b) => serde_json::Value::Bool(*b),
        Json::Num(n) => serde_json::Value::Number(n.clone()),
        Json::Str(s) => serde_json::Value::String(s.clone()),
        Json::Arr(a) => serde_json::Value::Array(a.iter().map(to_value).collect()),
        Json::Obj(o) => {
            serde_json::Value::Object(o.iter().map(|(k, x)| (k.clone(), to_value(x))).collect())
        }
    }
}

fn to_tree(v: &Json) -> Tree {
    match v {
        Json::Null => Tree::Null,
        Json::Bool(b) => Tree::Bool(*b),
        Json::Num(n) => Tree::Num(n.clone()),
        Json::Str(s) => Tree::Str(s.clone()),
        Json::Arr(a) => Tree::Arr(a.iter().map(to_tree).collect()),
        Json::Obj(o) => Tree::Obj(o.iter().map(|(k, x)| (k.clone(), to_tree(x))).collect()),
    }
}

/// The sidecar text of clip `clip` of `doc`: the tags with ranges on it in document order, one
/// range list per line. [`cliptags_texts`] gives the same for every clip at once.
pub fn cliptags_text(doc: &TagDocument, clip: ClipId) -> String {
    let mut s = String::with_capacity(256);
    let mut first = true;
    let mut body = String::new();
    for tag in &doc.tags {
        if let Some(list) = tag.ranges.get(&clip) {
            push_range_entry(&mut body, &string_text(&tag.name), list, &mut first);
        }
    }
    let mut markers = String::new();
    let mut first_marker = true;
    let mut notes = String::new();
    let mut first_note = true;
    for t in &doc.tags {
        let list = t.markers_on(clip);
        if !list.is_empty() {
            push_marker_entry(&mut markers, &string_text(&t.name), list, &mut first_marker);
        }
        let list = t.notes_on(clip);
        if !list.is_empty() {
            push_note_entry(&mut notes, &string_text(&t.name), list, &mut first_note);
        }
    }
    assemble_cliptags(&mut s, &doc.clips[clip as usize], &body, &markers, &notes);
    s
}

/// [`cliptags_text`] of every clip of `doc`, in clip order: one pass over the tags' lists
/// (per-clip look-ups in every tag made saving a 10,000-clip, 200-tag project quadratic).
pub fn cliptags_texts(doc: &TagDocument) -> Vec<String> {
    let n = doc.clips.len();
    // Per clip: the `tags`, `markers` and `notes` entries, and whether each is still empty.
    let mut ranges = vec![String::new(); n];
    let mut markers = vec![String::new(); n];
    let mut notes = vec![String::new(); n];
    let mut firsts = vec![[true; 3]; n];
    for t in &doc.tags {
        let name = string_text(&t.name);
        for (&c, list) in &t.ranges {
            if let Some(body) = ranges.get_mut(c as usize) {
                push_range_entry(body, &name, list, &mut firsts[c as usize][0]);
            }
        }
        for (&c, list) in &t.markers {
            if let Some(body) = markers.get_mut(c as usize)
                && !list.is_empty()
            {
                push_marker_entry(body, &name, list, &mut firsts[c as usize][1]);
            }
        }
        for (&c, list) in &t.notes {
            if let Some(body) = notes.get_mut(c as usize)
                && !list.is_empty()
            {
                push_note_entry(body, &name, list, &mut firsts[c as usize][2]);
            }
        }
    }
    doc.clips
        .iter()
        .enumerate()
        .map(|(c, info)| {
            let mut s =
                String::with_capacity(160 + ranges[c].len() + markers[c].len() + notes[c].len());
            assemble_cliptags(&mut s, info, &ranges[c], &markers[c], &notes[c]);
            s
        })
        .collect()
}

/// Starts the entry `"Tag": ` of a sidecar's `tags`, `markers` or `notes` object.
fn push_entry_key(s: &mut String, name: &str, first: &mut bool) {
    s.push_str(if *first { "\n    " } else { ",\n    " });
    *first = false;
    s.push_str(name);
    s.push_str(": ");
}

/// Appends `"Tag": [[a, b], ...]` to a sidecar's `tags` entries.
fn push_range_entry(s: &mut String, name: &str, list: &[Range], first: &mut bool) {
    push_entry_key(s, name, first);
    push_list(s, list, |s, r| {
        let _ = write!(s, "[{}, {}]", r.start, r.stop);
    });
}

/// Appends `"Tag": [f, ...]` to a sidecar's `markers` entries.
fn push_marker_entry(s: &mut String, name: &str, list: &[u32], first: &mut bool) {
    push_entry_key(s, name, first);
    push_list(s, list, |s, f| {
        let _ = write!(s, "{f}");
    });
}

/// `[a, b, ...]` on one line, each item written by `item`.
fn push_list<T>(s: &mut String, list: &[T], item: impl Fn(&mut String, &T)) {
    s.push('[');
    for (j, x) in list.iter().enumerate() {
        if j > 0 {
            s.push_str(", ");
        }
        item(s, x);
    }
    s.push(']');
}

/// Appends `"Tag": [{"range": ...}, ...]` to a sidecar's `notes` entries.
fn push_note_entry(s: &mut String, name: &str, list: &[(Anchor, Note)], first: &mut bool) {
    push_entry_key(s, name, first);
    annotations::write_note_list(s, list, string_text);
}

/// A sidecar from its parts: the clip's header, then the `tags` entries, and `markers` and
/// `notes` when the clip has some.
fn assemble_cliptags(s: &mut String, info: &ClipInfo, ranges: &str, markers: &str, notes: &str) {
    let _ = write!(
        s,
        "{{\n  \"format\": \"{CLIPTAGS_FORMAT}\",\n  \"version\": {CLIPTAGS_VERSION},\n  \"clip\": {},\n  \"frames\": {},\n  \"fps\": {}",
        string_text(&info.name),
        info.frames,
        f32_text(info.fps)
    );
    if let Some(u) = info.unit_cm {
        let _ = write!(s, ",\n  \"unit_cm\": {}", f32_text(u));
    }
    s.push_str(",\n  \"tags\": {");
    s.push_str(ranges);
    s.push_str(if ranges.is_empty() { "}" } else { "\n  }" });
    if !markers.is_empty() {
        s.push_str(",\n  \"markers\": {");
        s.push_str(markers);
        s.push_str("\n  }");
    }
    if !notes.is_empty() {
        s.push_str(",\n  \"notes\": {");
        s.push_str(notes);
        s.push_str("\n  }");
    }
    s.push_str("\n}\n");
}

/// Parses the project file of sidecar mode.
pub fn parse_sidecar_project(
    text: &str,
    file: &str,
) -> Result<(SidecarProject, Vec<LoadWarning>), TagsFileError> {
    const KNOWN: [&str; 7] = [
        "format", "version", "storage", "folders", "tags", "queries", "autotag",
    ];
    let root = json::parse(text, file)?;
    let fields = object(&root, "", file)?;
    let fail = |p: &str, m: String| invalid(file, p, m);
    let unknown = check_keys(fields, "", &KNOWN, &fail)?;
    let mut warnings = Vec::new();
    warn_unknown(unknown, "", &KNOWN, file, &mut warnings);
    header(
        fields,
        FORMAT_TAG,
        SIDECAR_PROJECT_VERSION..=SIDECAR_PROJECT_VERSION,
        file,
    )?;
    let storage = string(required(fields, "", "storage", file)?, "storage", file)?;
    if storage != STORAGE_SIDECAR {
        return Err(invalid(
            file,
            "storage",
            format!("expected \"{STORAGE_SIDECAR}\", found \"{storage}\""),
        ));
    }
    let mut project = SidecarProject::default();
    for (i, f) in array(required(fields, "", "folders", file)?, "folders", file)?
        .iter()
        .enumerate()
    {
        let p = format!("folders[{i}]");
        // An empty path is the project's own folder: what `import --sidecar` wrote for it
        // before it wrote `.` (such a project must still open).
        let folder = match string(f, &p, file)? {
            "" => ".",
            folder => folder,
        };
        if folder.trim().is_empty() {
            return Err(invalid(
                file,
                &p,
                "expected a folder path, found an empty string",
            ));
        }
        if !project.folders.iter().any(|x| x == folder) {
            project.folders.push(folder.to_owned());
        }
    }
    if let Some(tags) = get(fields, "tags") {
        for (i, t) in array(tags, "tags", file)?.iter().enumerate() {
            let p = format!("tags[{i}]");
            let tf = object(t, &p, file)?;
            if get(tf, "ranges").is_some() {
                return Err(invalid(
                    file,
                    &format!("{p}.ranges"),
                    "in sidecar mode ranges live in the takes' `.tags.json` files, not in the project",
                ));
            }
            let unknown = check_keys(tf, &p, &["name", "color"], &fail)?;
            warn_unknown(unknown, &p, &["name", "color"], file, &mut warnings);
            let name = string(required(tf, &p, "name", file)?, &format!("{p}.name"), file)?;
            if name.trim().is_empty() {
                return Err(invalid(
                    file,
                    &format!("{p}.name"),
                    "expected a non-empty name (not only spaces)",
                ));
            }
            if let Some(j) = project.tags.iter().position(|(n, _)| n == name) {
                return Err(invalid(
                    file,
                    &format!("{p}.name"),
                    format!("duplicate tag name `{name}` (also tags[{j}])"),
                ));
            }
            let color = match get(tf, "color") {
                None => None,
                Some(c) => {
                    let cp = format!("{p}.color");
                    let s = string(c, &cp, file)?;
                    Some(parse_color(s).ok_or_else(|| {
                        invalid(
                            file,
                            &cp,
                            format!("expected a colour like \"#4e9a06\", found \"{s}\""),
                        )
                    })?)
                }
            };
            project.tags.push((name.to_owned(), color));
        }
    }
    if let Some(queries) = get(fields, "queries") {
        let mut parsed = Vec::new();
        for (i, q) in array(queries, "queries", file)?.iter().enumerate() {
            let p = format!("queries[{i}]");
            let qf = object(q, &p, file)?;
            let unknown = check_keys(qf, &p, &["name", "expr"], &fail)?;
            warn_unknown(unknown, &p, &["name", "expr"], file, &mut warnings);
            let name = string(required(qf, &p, "name", file)?, &format!("{p}.name"), file)?;
            if name.trim().is_empty() {
                return Err(invalid(
                    file,
                    &format!("{p}.name"),
                    "expected a non-empty name (not only spaces)",
                ));
            }
            if let Some(j) = parsed.iter().position(|q: &SavedQuery| q.name == name) {
                return Err(invalid(
                    file,
                    &format!("{p}.name"),
                    format!("duplicate query name `{name}` (also queries[{j}])"),
                ));
            }
            let expr = string(required(qf, &p, "expr", file)?, &format!("{p}.expr"), file)?;
            parsed.push(SavedQuery {
                name: name.to_owned(),
                expr: expr.to_owned(),
            });
        }
        // Tags also come from the sidecars: the queries are checked once the document is built.
        project.queries = parsed;
    }
    if let Some(v) = get(fields, "autotag") {
        let raw = serde_json::to_string(&to_value(v)).unwrap_or_default();
        project.autotag = Some(
            crate::core::settings::parse_settings_at(&raw, "autotag")
                .map_err(|e| invalid(file, &e.path, e.message))?,
        );
    }
    Ok((project, warnings))
}

/// The project file text of sidecar mode.
pub fn sidecar_project_text(project: &SidecarProject) -> String {
    let mut s = format!(
        "{{\n  \"format\": \"{FORMAT_TAG}\",\n  \"version\": {SIDECAR_PROJECT_VERSION},\n  \"storage\": \"{STORAGE_SIDECAR}\",\n  \"folders\": ["
    );
    for (i, f) in project.folders.iter().enumerate() {
        s.push_str(if i == 0 { "" } else { ", " });
        s.push_str(&string_text(f));
    }
    s.push_str("],\n  \"tags\": [");
    for (i, (name, color)) in project.tags.iter().enumerate() {
        s.push_str(if i == 0 { "\n" } else { ",\n" });
        let _ = write!(s, "    {{\"name\": {}", string_text(name));
        if let Some([r, g, b]) = color {
            let _ = write!(s, ", \"color\": \"#{r:02x}{g:02x}{b:02x}\"");
        }
        s.push('}');
    }
    s.push_str(if project.tags.is_empty() {
        "],\n"
    } else {
        "\n  ],\n"
    });
    push_queries(&mut s, &project.queries);
    if let Some(settings) = &project.autotag {
        s.push_str(",\n  \"autotag\": ");
        s.push_str(&settings.to_json(2));
    }
    s.push_str("\n}\n");
    s
}

/// True when `text` is a sidecar-mode project file (its top-level `storage` is `"sidecar"`).
/// Cheap on other files: only a text holding `"storage"` is parsed.
pub fn is_sidecar_project_text(text: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(default)]
        storage: Option<serde_json::Value>,
    }
    text.contains("\"storage\"")
        && serde_json::from_str::<Head>(text)
            .is_ok_and(|h| h.storage.as_ref().and_then(|v| v.as_str()) == Some(STORAGE_SIDECAR))
}

/// How a load's message about a sidecar that could not be read (its clip left out of the
/// document) begins.
const NOT_LOADED: &str = "not loaded: ";

/// True when `w`, a warning of [`load_any`], says a sidecar could not be read, so that the
/// document lacks its clip: a command whose result would silently leave clips out (a query, a
/// cut, a search) treats it as an error.
pub fn is_unloaded_sidecar(w: &LoadWarning) -> bool {
    w.path.is_empty() && w.message.starts_with(NOT_LOADED)
}

/// Whether the file at `path` is a sidecar-mode project: `Ok(false)` when there is no file (or
/// it is no project of that kind), an error when it is there but cannot be read, for a save to
/// refuse rather than guess (a sidecar project unreadable for a moment, a network share or a
/// version-control update, was written over as a single file).
pub fn sidecar_layout(path: &Path) -> std::io::Result<bool> {
    match crate::core::limits::read_limited(path, crate::core::limits::MAX_TAGS_FILE_BYTES) {
        Ok(bytes) => Ok(String::from_utf8(bytes).is_ok_and(|t| is_sidecar_project_text(&t))),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// True when the file at `path` is a sidecar-mode project.
pub fn is_sidecar_project(path: &Path) -> bool {
    crate::core::limits::read_limited(path, crate::core::limits::MAX_TAGS_FILE_BYTES)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .is_some_and(|t| is_sidecar_project_text(&t))
}

/// A loaded sidecar-mode project.
#[derive(Debug, Clone, PartialEq)]
pub struct SidecarLoad {
    pub doc: TagDocument,
    /// The project's folders as written.
    pub folders: Vec<String>,
    /// Fixed or ignored things (merged ranges, unknown fields, renamed duplicate clips, queries
    /// that do not run), each naming the file and the JSON path.
    pub warnings: Vec<LoadWarning>,
    /// Sidecars that could not be read; their takes are not in the document.
    pub bad_sidecars: Vec<TagsFileError>,
    /// The takes of those sidecars (an import must not add them again: saving would have to write
    /// over the sidecar).
    pub bad_takes: Vec<PathBuf>,
    /// Takes in the folders without a sidecar (not in the project yet).
    pub untracked: Vec<PathBuf>,
    /// Sidecars whose take is missing.
    pub orphans: Vec<PathBuf>,
    /// Folders that could not be read.
    pub problems: Vec<String>,
    /// What each sidecar read held, for [`save_sidecar_project_since`].
    pub baseline: SidecarBaseline,
}

/// A sidecar's baseline entry: its key and the hash of its bytes.
type SeenEntry = (PathBuf, u64);

/// What a project last saw of each of its sidecars (a hash of the file's bytes): what it read at
/// open, then what it wrote or found unchanged at each save. A save compares the files on disk
/// with it to tell its own edits from changes made meanwhile by someone else (another session, a
/// version-control update), which it never writes over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SidecarBaseline(HashMap<PathBuf, [u64; 2]>);

impl SidecarBaseline {
    /// The hash a baseline keeps of a file's bytes (also [`Seen::File`]'s).
    pub fn hash(bytes: &[u8]) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        bytes.hash(&mut h);
        h.finish()
    }

    fn key(file: &Path) -> PathBuf {
        absolute(file)
    }

    /// Records that `file` holds bytes of [`SidecarBaseline::hash`] `hash`.
    pub fn set_hash(&mut self, file: &Path, hash: u64) {
        self.0.insert(Self::key(file), [hash; 2]);
    }

    /// Records that `file` holds `bytes`.
    pub fn set(&mut self, file: &Path, bytes: &[u8]) {
        self.0.insert(Self::key(file), [Self::hash(bytes); 2]);
    }

    /// Records that `file` holds bytes of hash `hash`, which read as what `same` holds (the same
    /// tags in the writer's layout): either is the content last seen.
    pub fn set_same(&mut self, file: &Path, hash: u64, same: &[u8]) {
        self.0.insert(Self::key(file), [hash, Self::hash(same)]);
    }

    /// Adds `same` (the content `file` was last seen holding, in the writer's layout) to what
    /// `file` was seen holding.
    fn also(&mut self, file: &Path, same: &[u8]) {
        if let Some(h) = self.0.get_mut(&Self::key(file)) {
            h[1] = Self::hash(same);
        }
    }

    /// Whether the project saw `file` (read it at open, or wrote or found it at a save).
    pub fn contains(&self, file: &Path) -> bool {
        self.0.contains_key(&Self::key(file))
    }

    /// Forgets `file` (it is gone from disk, and the document no longer has its clip).
    pub fn forget(&mut self, file: &Path) {
        self.0.remove(&Self::key(file));
    }

    /// Whether `file` was last seen holding `bytes` (or, for a file in another layout, the same
    /// tags in the writer's layout); `None` when it was never seen.
    pub fn holds(&self, file: &Path, bytes: &[u8]) -> Option<bool> {
        self.0
            .get(&Self::key(file))
            .map(|h| h.contains(&Self::hash(bytes)))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl SidecarLoad {
    /// The problems that are not warnings (bad sidecars, orphans, unreadable folders, untracked
    /// takes), as lines for a status bar or stderr.
    pub fn problem_messages(&self) -> Vec<String> {
        let mut m: Vec<String> = self
            .bad_sidecars
            .iter()
            .map(|e| format!("{NOT_LOADED}{e}"))
            .collect();
        // A folder that cannot be read (missing, unmounted) leaves its clips out as a bad
        // sidecar does: a query or a cut over the rest would answer for part of the project.
        m.extend(self.problems.iter().map(|p| format!("{NOT_LOADED}{p}")));
        m.extend(self.orphans.iter().map(|p| {
            format!(
                "{}: sidecar without its take (kept, not loaded)",
                p.display()
            )
        }));
        if let Some(first) = self.untracked.first() {
            m.push(format!(
                "{} take(s) in the folders have no sidecar yet (import the folders to add them), e.g. {}",
                self.untracked.len(),
                first.display()
            ));
        }
        m
    }
}

fn project_dir(path: &Path) -> PathBuf {
    // Through a link: the folder of the file it names.
    absolute(&crate::core::io::resolve_link(path))
        .parent()
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
}

fn resolve_folder(folder: &str, dir: &Path) -> PathBuf {
    let p = PathBuf::from(folder);
    if p.is_absolute() {
        super::walk::normalize(&p)
    } else {
        super::walk::normalize(&dir.join(p))
    }
}

/// Reads a text file of at most the tag file limit.
fn read_text(path: &Path) -> Result<String, TagsFileError> {
    let label = path.display().to_string();
    let bytes = crate::core::limits::read_limited(path, crate::core::limits::MAX_TAGS_FILE_BYTES)
        .map_err(|e| TagsFileError::Io {
        file: label.clone(),
        message: format!("cannot read: {e}"),
    })?;
    String::from_utf8(bytes).map_err(|e| TagsFileError::Invalid {
        file: label,
        path: format!("byte {}", e.utf8_error().valid_up_to()),
        message: "expected UTF-8 text, found an invalid byte sequence".to_owned(),
    })
}

/// Sidecars read and parsed together while a project opens (then merged into the document).
const SIDECARS_AT_ONCE: usize = 512;

/// A sidecar read for a project: as the writer leaves it (the fast path's flat form), or through
/// the tree reader, with its warnings.
enum Sidecar {
    Fast(FlatClipTags),
    Tree(ClipTags, Vec<LoadWarning>),
}

/// A sidecar's text (`file` names it in messages) through the fast path, or the tree reader when
/// the fast path declines it: [`parse_cliptags`], in the form the project loader merges.
fn read_sidecar(text: &str, file: &str) -> Result<Sidecar, TagsFileError> {
    match super::cliptags_fast::parse_flat(text) {
        Some(f) => Ok(Sidecar::Fast(f)),
        None => parse_cliptags_tree(text, file).map(|(ct, w)| Sidecar::Tree(ct, w)),
    }
}

/// Loads a sidecar-mode project (see the module documentation). Fails only when the project file
/// itself cannot be read; bad sidecars are reported in [`SidecarLoad::bad_sidecars`].
pub fn load_sidecar_project(path: &Path) -> Result<SidecarLoad, TagsFileError> {
    let text = read_text(path)?;
    load_sidecar_project_text(path, &text)
}

/// [`load_sidecar_project`] of the project file text `text`, for the project file `path` (which
/// need not exist yet): a new sidecar project over folders whose takes have sidecars already
/// (`taglane import --sidecar` into a new project file) takes their clips and tags, as opening
/// it later would.
pub fn load_sidecar_project_text(path: &Path, text: &str) -> Result<SidecarLoad, TagsFileError> {
    let label = path.display().to_string();
    let (project, mut warnings) = parse_sidecar_project(text, &label)?;
    let dir = project_dir(path);
    let roots: Vec<PathBuf> = project
        .folders
        .iter()
        .map(|f| resolve_folder(f, &dir))
        .collect();
    let walk = find_takes(&roots);
    let takes: HashSet<&Path> = walk.files.iter().map(|f| f.path.as_path()).collect();

    // Each sidecar's take and animation.
    let mut by_take: HashMap<&Path, Vec<(Option<String>, &Path)>> = HashMap::new();
    let mut orphans = Vec::new();
    for s in &walk.sidecars {
        match take_of(s, &takes) {
            Some((take, animation)) => {
                let key = *takes.get(take.as_path()).expect("found in the set");
                by_take
                    .entry(key)
                    .or_default()
                    .push((animation, s.as_path()));
            }
            None => orphans.push(s.clone()),
        }
    }
    // Read the sidecars in parallel, in walk order.
    let mut jobs: Vec<(&Path, &Path)> = Vec::new();
    let mut untracked = Vec::new();
    for f in &walk.files {
        match by_take.get_mut(f.path.as_path()) {
            Some(list) => {
                list.sort_by(|a, b| a.0.cmp(&b.0));
                jobs.extend(list.iter().map(|(_, s)| (f.path.as_path(), *s)));
            }
            None => untracked.push(f),
        }
    }
    // A take with no sidecar that is the same file as one with a sidecar (a link to it) is that
    // take's clip, not a take to import.
    let tracked_files: HashSet<&super::walk::FileId> = walk
        .files
        .iter()
        .filter(|f| by_take.contains_key(f.path.as_path()))
        .filter_map(|f| f.id.as_ref())
        .collect();
    let untracked: Vec<PathBuf> = untracked
        .into_iter()
        .filter(|f| f.id.as_ref().is_none_or(|id| !tracked_files.contains(id)))
        .map(|f| f.path.clone())
        .collect();
    let mut doc = TagDocument::default();
    let mut bad_sidecars = Vec::new();
    let mut bad_takes: Vec<PathBuf> = Vec::new();
    // Clip ids grow, so each clip's list is appended at the end of its tag's flat buffer.
    let mut tag_ranges: HashMap<String, ClipRanges> = HashMap::new();
    let mut tag_markers: BTreeMap<String, BTreeMap<ClipId, Vec<u32>>> = BTreeMap::new();
    let mut tag_notes: BTreeMap<String, BTreeMap<ClipId, Vec<(Anchor, Note)>>> = BTreeMap::new();
    let mut names: HashSet<String> = HashSet::new();
    // Read and parsed on every core a block at a time, each block merged (in walk order) and
    // dropped before the next: the parsed lists of a whole library at once (a `String` and a `Vec`
    // a tag and clip) took three times the memory of the document built from them. (Merging a block
    // while the next is parsed, with `rayon::join`, was slower here.)
    let read = jobs.chunks(SIDECARS_AT_ONCE).flat_map(|block| {
        // Each sidecar's baseline entry is made here, on the pool, too.
        let parsed: Vec<Result<(Sidecar, SeenEntry), TagsFileError>> = block
            .par_iter()
            .map(|(_, s)| {
                let text = read_text(s)?;
                let seen = (
                    SidecarBaseline::key(s),
                    SidecarBaseline::hash(text.as_bytes()),
                );
                read_sidecar(&text, &s.display().to_string()).map(|r| (r, seen))
            })
            .collect();
        block.iter().zip(parsed)
    });
    let mut baseline = SidecarBaseline::default();
    baseline.set(path, text.as_bytes());
    // Sidecars read through the JSON tree (not in the writer's layout, or with markers or
    // notes): what a save would write for them is also what they were seen holding.
    let mut in_other_layout: Vec<(ClipId, &Path)> = Vec::new();
    for ((take, sidecar), result) in read {
        let mut read = match result {
            Ok((r, (key, hash))) => {
                baseline.0.insert(key, [hash; 2]);
                r
            }
            Err(e) => {
                bad_sidecars.push(e);
                if !bad_takes.iter().any(|t| t == take) {
                    bad_takes.push(take.to_path_buf());
                }
                continue;
            }
        };
        if let Sidecar::Tree(..) = &read {
            in_other_layout.push((doc.clips.len() as ClipId, sidecar));
        }
        if let Sidecar::Tree(_, w) = &mut read {
            warnings.append(w);
        }
        let (clip, frames, fps, unit_cm) = match &read {
            Sidecar::Fast(f) => (&f.clip, f.frames, f.fps, f.unit_cm),
            Sidecar::Tree(ct, _) => (&ct.clip, ct.frames, ct.fps, ct.unit_cm),
        };
        let mut name = clip.clone();
        if names.contains(&name) {
            let mut n = 2;
            while names.contains(&format!("{clip}_{n}")) {
                n += 1;
            }
            name = format!("{clip}_{n}");
            warnings.push(LoadWarning {
                path: format!("{}: clip", sidecar.display()),
                message: format!(
                    "clip name `{clip}` is used by another sidecar; loaded as `{name}` (saved so)"
                ),
            });
        }
        names.insert(name.clone());
        let id = doc.clips.len() as ClipId;
        doc.clips.push(ClipInfo {
            name,
            frames,
            fps,
            source: Some(source_for(take, Some(&dir))),
            unit_cm,
        });
        // A tag's name is allocated once, at its first list.
        let mut push = |tag: &str, ranges: &[Range]| match tag_ranges.get_mut(tag) {
            Some(lists) => lists.push(id, ranges),
            None => tag_ranges
                .entry(tag.to_owned())
                .or_default()
                .push(id, ranges),
        };
        match read {
            Sidecar::Fast(f) => {
                for (tag, ranges) in f.lists() {
                    push(tag, ranges);
                }
            }
            Sidecar::Tree(ct, _) => {
                for (tag, ranges) in &ct.tags {
                    push(tag, ranges);
                }
                for (tag, frames) in ct.markers {
                    tag_markers.entry(tag).or_default().insert(id, frames);
                }
                for (tag, notes) in ct.notes {
                    tag_notes.entry(tag).or_default().insert(id, notes);
                }
            }
        }
    }
    // Tags: the project's order, then the others by name.
    for (name, color) in &project.tags {
        let ranges = tag_ranges.remove(name).unwrap_or_default();
        doc.tags.push(new_tag(name, *color, ranges));
    }
    let mut others: Vec<String> = tag_ranges.keys().cloned().collect();
    others.extend(tag_markers.keys().cloned());
    others.sort();
    others.dedup();
    for name in others {
        if doc.tag_index(&name).is_none() {
            let ranges = tag_ranges.remove(&name).unwrap_or_default();
            doc.tags.push(new_tag(&name, None, ranges));
        }
    }
    for t in &mut doc.tags {
        if let Some(m) = tag_markers.remove(&t.name) {
            t.markers = m;
        }
        if let Some(n) = tag_notes.remove(&t.name) {
            t.notes = n;
        }
    }
    let tag_names: Vec<&str> = doc.tags.iter().map(|t| t.name.as_str()).collect();
    for (i, q) in project.queries.iter().enumerate() {
        if let Err(e) = parse_query(&q.expr, &tag_names) {
            warnings.push(LoadWarning {
                path: format!("{label}: queries[{i}].expr"),
                message: format!("the saved query does not run: {e} (kept as written)"),
            });
        }
    }
    doc.queries = project.queries;
    doc.autotag = project.autotag;
    doc.touch_all();
    // All texts in one pass over the tags' lists when there is any such file (a text a clip,
    // each made alone, would look up every tag for each clip: quadratic on a large library).
    if !in_other_layout.is_empty() {
        let texts = cliptags_texts(&doc);
        for (clip, sidecar) in in_other_layout {
            baseline.also(sidecar, texts[clip as usize].as_bytes());
        }
    }
    let as_saved = SidecarProject {
        folders: project.folders.clone(),
        tags: doc.tags.iter().map(|t| (t.name.clone(), t.color)).collect(),
        queries: doc.queries.clone(),
        autotag: doc.autotag.clone(),
    };
    baseline.also(path, sidecar_project_text(&as_saved).as_bytes());
    Ok(SidecarLoad {
        doc,
        folders: project.folders,
        warnings,
        bad_sidecars,
        bad_takes,
        untracked,
        orphans,
        problems: walk.problems,
        baseline,
    })
}

/// The take of sidecar `s` among `takes`, and the animation it names (a glTF's `#Walk`), if its take
/// is there.
fn take_of(s: &Path, takes: &HashSet<&Path>) -> Option<(PathBuf, Option<String>)> {
    let name = s
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // The suffix in any case, as the folder walk finds sidecars.
    if !name.to_ascii_lowercase().ends_with(SIDECAR_SUFFIX) {
        return None;
    }
    let stem = &name[..name.len() - SIDECAR_SUFFIX.len()];
    if takes.contains(s.with_file_name(stem).as_path()) {
        return Some((s.with_file_name(stem), None));
    }
    stem.match_indices(ANIMATION_SEPARATOR).find_map(|(i, _)| {
        let take = s.with_file_name(&stem[..i]);
        takes
            .contains(take.as_path())
            .then(|| (take, Some(stem[i + 1..].to_owned())))
    })
}

/// What a stale sidecar is renamed to by [`move_sidecars_aside`]: its name with this added.
pub const MOVED_ASIDE_SUFFIX: &str = ".removed";

/// Moves stale sidecars ([`SidecarSave::stale`]) aside so that their clips stop coming back: each
/// `NAME.tags.json` is renamed to `NAME.tags.json.removed` beside it (`.removed.2`, ... when that
/// exists), which the project's loader does not read. Nothing is deleted. Returns the new paths;
/// a file that is not a sidecar, or that cannot be renamed, stops the move with an error naming it
/// (the files before it are moved already).
pub fn move_sidecars_aside(files: &[PathBuf]) -> Result<Vec<PathBuf>, TagsFileError> {
    let fail = |f: &Path, message: String| TagsFileError::Io {
        file: f.display().to_string(),
        message,
    };
    let mut moved = Vec::with_capacity(files.len());
    for f in files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.to_ascii_lowercase().ends_with(SIDECAR_SUFFIX) {
            return Err(fail(
                f,
                format!("not a sidecar (its name does not end with {SIDECAR_SUFFIX}); not moved"),
            ));
        }
        let mut to = f.with_file_name(format!("{name}{MOVED_ASIDE_SUFFIX}"));
        let mut k = 2;
        while to.exists() {
            to = f.with_file_name(format!("{name}{MOVED_ASIDE_SUFFIX}.{k}"));
            k += 1;
        }
        std::fs::rename(f, &to).map_err(|e| fail(f, format!("cannot move it aside: {e}")))?;
        moved.push(to);
    }
    Ok(moved)
}

fn new_tag(name: &str, color: Option<[u8; 3]>, mut ranges: ClipRanges) -> Tag {
    ranges.shrink_to_fit();
    Tag {
        name: name.to_owned(),
        color,
        ranges,
        markers: Default::default(),
        notes: Default::default(),
        version: crate::core::tags::document::next_version(),
    }
}

/// What a sidecar save did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SidecarSave {
    /// Files written (sidecars, then the project file when it changed).
    pub written: Vec<PathBuf>,
    /// Files left as they were because their text did not change.
    pub unchanged: usize,
    /// Folders added to the project so that it covers every clip's take.
    pub folders_added: Vec<String>,
    /// Sidecars (and the project file) changed on disk since the project last saw them, where the
    /// document changed nothing: kept as they are (see [`save_sidecar_project_since`]).
    pub kept: Vec<PathBuf>,
    /// Sidecars in the folders that belong to no clip of the document but load as clips the next
    /// time the project opens (their take is there and they read without error): clips removed
    /// since the project was opened, or sidecars another tool wrote. Left in place; see
    /// [`move_sidecars_aside`].
    pub stale: Vec<PathBuf>,
}

/// The sidecar path of each clip of `doc`, for a project file in `dir`. Errors name the clip.
fn sidecar_paths(
    doc: &TagDocument,
    dir: &Path,
    file: &str,
) -> Result<Vec<(PathBuf, PathBuf)>, TagsFileError> {
    let mut takes = Vec::with_capacity(doc.clips.len());
    let mut count: HashMap<PathBuf, usize> = HashMap::new();
    for (i, c) in doc.clips.iter().enumerate() {
        let take = source_path(c, Some(dir)).ok_or_else(|| {
            invalid(
                file,
                &format!("clips[{i}].source"),
                format!(
                    "clip `{}` has no take file: in sidecar mode each clip's tags are saved next to its take",
                    c.name
                ),
            )
        })?;
        *count.entry(take.clone()).or_default() += 1;
        takes.push(take);
    }
    let mut seen: HashMap<PathBuf, usize> = HashMap::new();
    let mut out = Vec::with_capacity(takes.len());
    for (i, take) in takes.into_iter().enumerate() {
        let name = &doc.clips[i].name;
        let animation = animation_part(&take, name, count[&take] > 1);
        let sidecar = sidecar_path(&take, animation);
        if let Some(&j) = seen.get(&sidecar) {
            return Err(invalid(
                file,
                &format!("clips[{i}]"),
                format!(
                    "clips `{}` and `{name}` would share the sidecar {}: name the clips of one file `FILE#ANIMATION`",
                    doc.clips[j].name,
                    sidecar.display()
                ),
            ));
        }
        seen.insert(sidecar.clone(), i);
        out.push((take, sidecar));
    }
    Ok(out)
}

/// Saves `doc` in sidecar mode to the project file `path` (see the module documentation).
/// `folders`: the project's folders; `None` keeps those of the existing project file at `path`.
/// Folders are added for clips whose take is outside them. Sidecars that differ are written over
/// (see [`save_sidecar_project_since`] for a save that keeps changes made on disk meanwhile).
pub fn save_sidecar_project(
    path: &Path,
    doc: &TagDocument,
    folders: Option<&[String]>,
) -> Result<SidecarSave, TagsFileError> {
    save_sidecar_project_since(path, doc, folders, None)
}

/// [`save_sidecar_project`] of a project that knows what its sidecars and its project file held
/// (`baseline`: read at open, written at its last save; updated here). A sidecar, or the project
/// file, changed on disk since then by someone else (another session, a version-control update) is
/// never written over:
/// - when the document did not change that clip either, the file is kept as it is and listed in
///   [`SidecarSave::kept`] (reopen the project to see the change);
/// - when the document changed it too, nothing is saved: the error names the file.
pub fn save_sidecar_project_since(
    path: &Path,
    doc: &TagDocument,
    folders: Option<&[String]>,
    baseline: Option<&mut SidecarBaseline>,
) -> Result<SidecarSave, TagsFileError> {
    save_sidecars(path, doc, folders, baseline, false).map(|saved| match saved {
        Ok(save) => save,
        Err(_) => unreachable!("files changed on disk are only collected when asked"),
    })
}

/// [`save_sidecar_project_since`], except that files changed on disk since the project last saw
/// them (both where the document changed that file too and where it did not) are not kept or
/// refused: when there are any, nothing is written and they are returned, read and parsed, for
/// [`super::merge::merge_on_disk`]. The caller merges them into the document, records their
/// bytes in `baseline` (the document now has what they hold) and saves again. A file changed on
/// disk that cannot be read is kept (when the document did not change it) or refused as before.
pub fn save_sidecar_project_or_changes(
    path: &Path,
    doc: &TagDocument,
    baseline: &mut SidecarBaseline,
) -> Result<Result<SidecarSave, Vec<OnDisk>>, TagsFileError> {
    save_sidecars(path, doc, None, Some(baseline), true)
}

fn save_sidecars(
    path: &Path,
    doc: &TagDocument,
    folders: Option<&[String]>,
    mut baseline: Option<&mut SidecarBaseline>,
    collect: bool,
) -> Result<Result<SidecarSave, Vec<OnDisk>>, TagsFileError> {
    let label = path.display().to_string();
    let dir = project_dir(path);
    let mut folders: Vec<String> = match folders {
        Some(f) => f.to_vec(),
        None if path.exists() => parse_sidecar_project(&read_text(path)?, &label)?.0.folders,
        None => Vec::new(),
    };
    // Everything is checked and formatted before anything is written.
    let paths = sidecar_paths(doc, &dir, &label)?;
    for (i, t) in doc.tags.iter().enumerate() {
        if t.ranges.keys().any(|&c| c as usize >= doc.clips.len()) {
            return Err(invalid(
                &label,
                &format!("tags[{i}].ranges"),
                "ranges on a clip id that does not exist",
            ));
        }
    }
    for (i, c) in doc.clips.iter().enumerate() {
        // The range the reader takes, so that nothing is saved that cannot be opened again.
        if !crate::core::limits::fps_ok(f64::from(c.fps)) {
            return Err(invalid(
                &label,
                &format!("clips[{i}].fps"),
                crate::core::limits::fps_message(f64::from(c.fps)),
            ));
        }
        if let Some(u) = c.unit_cm
            && !crate::core::limits::unit_cm_ok(f64::from(u))
        {
            return Err(invalid(
                &label,
                &format!("clips[{i}].unit_cm"),
                crate::core::limits::unit_cm_message(u),
            ));
        }
    }
    let mut report = SidecarSave::default();
    let mut roots: Vec<PathBuf> = folders.iter().map(|f| resolve_folder(f, &dir)).collect();
    for (take, _) in &paths {
        if !roots.iter().any(|r| take.starts_with(r))
            && let Some(parent) = take.parent()
        {
            let folder = source_for(parent, Some(&dir));
            report.folders_added.push(folder.clone());
            folders.push(folder);
            roots.push(parent.to_path_buf());
        }
    }
    let project = SidecarProject {
        folders,
        tags: doc.tags.iter().map(|t| (t.name.clone(), t.color)).collect(),
        queries: doc.queries.clone(),
        autotag: doc.autotag.clone(),
    };
    let mut files: Vec<(PathBuf, String, bool)> = paths
        .iter()
        .zip(cliptags_texts(doc))
        .map(|((_, s), text)| (s.clone(), text, false))
        .collect();
    files.push((path.to_path_buf(), sidecar_project_text(&project), true));
    // The folders walked before the files are compared (the walk of a large library takes a
    // while: a file saved meanwhile is then seen by the comparison, not written over): clips
    // added on disk, and after the writes the stale sidecars.
    let ours: HashSet<&Path> = paths.iter().map(|(_, s)| s.as_path()).collect();
    let walk = find_takes(&roots);
    let takes: HashSet<&Path> = walk.files.iter().map(|f| f.path.as_path()).collect();
    let mut on_disk = match baseline.as_deref() {
        Some(b) if collect => new_clips(&walk.sidecars, &ours, &takes, &paths, &dir, b),
        _ => Vec::new(),
    };
    // Existing files: unchanged ones are skipped; a sidecar that cannot be read is never written
    // over (it may hold tags the document does not have).
    let mut changed = Vec::with_capacity(files.len());
    // Files that hold what the document would write in another layout (formatted by hand or by
    // another tool): left as they are, and the baseline takes their bytes.
    let mut same_content: HashMap<&PathBuf, u64> = HashMap::new();
    for (i, (file, text, is_project)) in files.iter().enumerate() {
        match crate::core::limits::read_limited(file, crate::core::limits::MAX_TAGS_FILE_BYTES) {
            Ok(old) if old == text.as_bytes() => report.unchanged += 1,
            // Rewriting such a file would change nothing but its layout: a change in version
            // control for nothing, and for another session that has the project open, a change
            // made on disk to merge (or a conflict, where it edited the clip too).
            Ok(old) if same_tags(&old, text, *is_project) => {
                report.unchanged += 1;
                same_content.insert(file, SidecarBaseline::hash(&old));
            }
            // Changed on disk since this project last saw it, to be merged by the caller: read
            // and parsed here.
            Ok(old)
                if collect
                    && baseline
                        .as_deref()
                        .is_some_and(|b| b.holds(file, &old) != Some(true)) =>
            {
                let b = baseline.as_deref().expect("checked");
                let ours_unchanged = b.holds(file, text.as_bytes()) == Some(true);
                let label = file.display().to_string();
                let theirs = String::from_utf8(old.clone())
                    .map_err(|_| invalid(&label, "byte 0", "expected UTF-8 text"))
                    .and_then(|t| {
                        if *is_project {
                            parse_sidecar_project(&t, &label).map(|(p, _)| Theirs::Project(p))
                        } else {
                            parse_cliptags(&t, &label)
                                .map(|(ct, _)| Theirs::Sidecar(i as ClipId, ct))
                        }
                    });
                match theirs {
                    Ok(theirs) => on_disk.push(OnDisk {
                        file: file.clone(),
                        bytes: old,
                        theirs,
                        ours_unchanged,
                    }),
                    Err(_) if ours_unchanged => report.kept.push(file.clone()),
                    Err(e) => {
                        return Err(invalid(
                            &label,
                            if *is_project {
                                "(project)"
                            } else {
                                "(sidecar)"
                            },
                            format!(
                                "this file changed on disk since the project was opened or last \
                                 saved, and it was edited here too, but the version on disk \
                                 cannot be read to merge the two ({e}): nothing was saved. \
                                 {KEEP_BOTH_ADVICE}"
                            ),
                        ));
                    }
                }
            }
            // Changed on disk since this project last saw it (or there and never seen): a sidecar,
            // or the project file (its tags, colours, folders, queries).
            Ok(old)
                if baseline
                    .as_deref()
                    .is_some_and(|b| b.holds(file, &old) != Some(true)) =>
            {
                let b = baseline.as_deref().expect("checked");
                if b.holds(file, text.as_bytes()) == Some(true) {
                    // The document has it as this project last saw it: theirs is kept.
                    report.kept.push(file.clone());
                } else if b.holds(file, &old).is_none() && !is_project {
                    // Never read by this project (one becoming a sidecar project, a Save As):
                    // another project's tags for the take.
                    return Err(invalid(
                        &file.display().to_string(),
                        "(sidecar)",
                        "a sidecar this project never read is already beside the take (another \
                         project's, or one left by an earlier one) and holds other tags than this \
                         clip's here: nothing was saved, so that neither is lost. Move it away to \
                         save this project's tags there, or open the project it belongs to",
                    ));
                } else {
                    let (place, what) = if *is_project {
                        (
                            "(project)",
                            "the project file changed on disk since the project was opened or \
                             last saved (another session, a version-control update), and its \
                             tags, colours, folders or queries were changed here too",
                        )
                    } else {
                        (
                            "(sidecar)",
                            "this sidecar changed on disk since the project was opened or last \
                             saved (another session, a version-control update), and this clip was \
                             edited here too",
                        )
                    };
                    return Err(invalid(
                        &file.display().to_string(),
                        place,
                        format!(
                            "{what}: nothing was saved, so that neither version is lost. \
                             {KEEP_BOTH_ADVICE}"
                        ),
                    ));
                }
            }
            Ok(old) if !is_project => {
                let label = file.display().to_string();
                let readable = String::from_utf8(old)
                    .map_err(|_| invalid(&label, "byte 0", "expected UTF-8 text"))
                    .and_then(|t| parse_cliptags(&t, &label));
                if let Err(e) = readable {
                    return Err(invalid(
                        &label,
                        "(sidecar)",
                        format!(
                            "this sidecar cannot be read ({e}); it was not overwritten and nothing was saved: fix or delete it"
                        ),
                    ));
                }
                changed.push((file, text, *is_project));
            }
            // Gone from disk since this project saw it: its clip was removed there (another
            // session moved its sidecar aside), to be merged by the caller.
            // (The take still there: a folder gone, unmounted or renamed is no removal of its
            // clips; the write reports it.)
            Err(e)
                if collect
                    && !is_project
                    && e.kind() == std::io::ErrorKind::NotFound
                    && baseline.as_deref().is_some_and(|b| b.contains(file))
                    && paths[i].0.is_file() =>
            {
                let b = baseline.as_deref().expect("checked");
                on_disk.push(OnDisk {
                    file: file.clone(),
                    bytes: Vec::new(),
                    theirs: Theirs::Gone(i as ClipId),
                    ours_unchanged: b.holds(file, text.as_bytes()) == Some(true),
                });
            }
            // Gone from disk, and not changed here, in a save that does not merge (an import into
            // the project): its clip was removed there meanwhile, and stays removed instead of
            // coming back with this save.
            Err(e)
                if !collect
                    && !is_project
                    && e.kind() == std::io::ErrorKind::NotFound
                    && baseline
                        .as_deref()
                        .is_some_and(|b| b.holds(file, text.as_bytes()) == Some(true))
                    && paths[i].0.is_file() =>
            {
                report.kept.push(file.clone());
            }
            // A sidecar there that cannot be read (too large, no permission) is not written over
            // either.
            Err(e) if !is_project && e.kind() != std::io::ErrorKind::NotFound => {
                return Err(invalid(
                    &file.display().to_string(),
                    "(sidecar)",
                    format!(
                        "this sidecar cannot be read ({e}); it was not overwritten and nothing was saved: fix or delete it"
                    ),
                ));
            }
            _ => changed.push((file, text, *is_project)),
        }
    }
    if !on_disk.is_empty() {
        return Ok(Err(on_disk));
    }
    // The sidecars first, several at a time (each write waits for its fsync), then the project.
    let (project_file, sidecars): (Vec<_>, Vec<_>) = changed.into_iter().partition(|c| c.2);
    // The project file is written last: when it could not be (read-only, its folder missing or
    // closed), nothing is written, not the sidecars alone.
    if let Some((file, _, _)) = project_file.first() {
        crate::core::io::check_writable(file).map_err(|e| TagsFileError::Io {
            file: file.display().to_string(),
            message: format!("cannot save: {e}"),
        })?;
    }
    // A write that fails leaves the files written before it holding this document's text: they
    // are recorded as such, so that the next save does not take this session's own writes for
    // changes made on disk (an undone range came back, "merged from disk", or every later save
    // stopped on a conflict with itself).
    let mut written_then_failed = |done: &[&(&PathBuf, &String, bool)], e: TagsFileError| {
        if let Some(b) = baseline.as_deref_mut() {
            for (file, text, _) in done {
                b.set(file, text.as_bytes());
            }
        }
        e
    };
    if let Err((done, e)) = write_files(&sidecars) {
        let done: Vec<_> = done.iter().map(|&i| &sidecars[i]).collect();
        return Err(written_then_failed(&done, e));
    }
    if let Err((done, e)) = write_files(&project_file) {
        let done: Vec<_> = sidecars
            .iter()
            .chain(done.iter().map(|&i| &project_file[i]))
            .collect();
        return Err(written_then_failed(&done, e));
    }
    report
        .written
        .extend(sidecars.iter().chain(&project_file).map(|c| c.0.clone()));
    // What the sidecars hold now (the kept ones excepted: the document does not have them).
    if let Some(b) = baseline {
        let kept: HashSet<&PathBuf> = report.kept.iter().collect();
        for (file, text, _) in &files {
            if let Some(&hash) = same_content.get(file) {
                b.set_same(file, hash, text.as_bytes());
            } else if !kept.contains(file) {
                b.set(file, text.as_bytes());
            }
        }
    }
    report.stale = walk
        .sidecars
        .iter()
        .filter(|s| !ours.contains(s.as_path()) && take_of(s, &takes).is_some())
        .filter(|s| {
            crate::core::limits::read_limited(s, crate::core::limits::MAX_TAGS_FILE_BYTES)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .is_some_and(|text| parse_cliptags(&text, &s.display().to_string()).is_ok())
        })
        .cloned()
        .collect();
    Ok(Ok(report))
}

/// Whether `old` (a file's bytes on disk) holds the same tags as `text` (what a save would write
/// there): both read, as a sidecar or, with `is_project`, as the project file of sidecar mode, to
/// the same values. Warnings aside: a key this build does not know, which a rewrite would drop,
/// stays in the file left as it is. A file that does not read is never the same.
fn same_tags(old: &[u8], text: &str, is_project: bool) -> bool {
    let Ok(old) = std::str::from_utf8(old) else {
        return false;
    };
    if is_project {
        match (
            parse_sidecar_project(old, ""),
            parse_sidecar_project(text, ""),
        ) {
            (Ok((a, _)), Ok((b, _))) => a == b,
            _ => false,
        }
    } else {
        // The order of a sidecar's tags says nothing (the project's tag order is in the project
        // file, and tags only a sidecar has are sorted by name at load).
        let sorted = |mut c: ClipTags| {
            c.tags.sort_by(|a, b| a.0.cmp(&b.0));
            c.markers.sort_by(|a, b| a.0.cmp(&b.0));
            c.notes.sort_by(|a, b| a.0.cmp(&b.0));
            c
        };
        match (parse_cliptags(old, ""), parse_cliptags(text, "")) {
            (Ok((a, _)), Ok((b, _))) => sorted(a) == sorted(b),
            _ => false,
        }
    }
}

/// The sidecars in the project's folders (`sidecars`, with their `takes`) that belong to no clip
/// of the document (`ours`; `paths`: each clip's take and sidecar) and that the project never saw
/// (`baseline`): clips added on disk since it opened or last saved (another session's import, a
/// version-control update), read and parsed, for [`super::merge::merge_on_disk`]. A sidecar that
/// does not read, or that its clip's name would not save back to (a file of several animations
/// whose clip name does not say which), is left out: it stays a stale sidecar, reported by the
/// save and loaded at the next open.
fn new_clips(
    sidecars: &[PathBuf],
    ours: &HashSet<&Path>,
    takes: &HashSet<&Path>,
    paths: &[(PathBuf, PathBuf)],
    dir: &Path,
    baseline: &SidecarBaseline,
) -> Vec<OnDisk> {
    let mut out = Vec::new();
    for s in sidecars {
        if ours.contains(s.as_path()) || baseline.contains(s) {
            continue;
        }
        let Some((take, _)) = take_of(s, takes) else {
            continue;
        };
        let Ok(bytes) =
            crate::core::limits::read_limited(s, crate::core::limits::MAX_TAGS_FILE_BYTES)
        else {
            continue;
        };
        let label = s.display().to_string();
        let Some(ct) = std::str::from_utf8(&bytes)
            .ok()
            .and_then(|t| parse_cliptags(t, &label).ok())
            .map(|(ct, _)| ct)
        else {
            continue;
        };
        // Where the clip's tags would be saved: as `sidecar_paths` places them.
        let shared = paths.iter().any(|(t, _)| *t == take);
        let animation = animation_part(&take, &ct.clip, shared);
        if sidecar_path(&take, animation) != *s {
            continue;
        }
        out.push(OnDisk {
            file: s.clone(),
            bytes,
            theirs: Theirs::NewClip {
                source: source_for(&take, Some(dir)),
                tags: ct,
            },
            ours_unchanged: true,
        });
    }
    out
}

/// Writes each `(file, text, keep a backup)` atomically, up to eight at a time: a write is mostly
/// waiting for its fsync, and the disk takes several at once. On a failure the files not started
/// yet are not written and the first failure in list order is returned (each file is either old or
/// new, as with one write after the other).
fn write_files(files: &[(&PathBuf, &String, bool)]) -> Result<(), (Vec<usize>, TagsFileError)> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    const WRITERS: usize = 8;
    let next = AtomicUsize::new(0);
    let failed: Mutex<Option<(usize, TagsFileError)>> = Mutex::new(None);
    let written: Mutex<Vec<usize>> = Mutex::new(Vec::new());
    let write = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((file, text, backup)) = files.get(i) else {
                return;
            };
            let mut first = failed.lock().unwrap_or_else(|p| p.into_inner());
            if first.is_some() {
                return;
            }
            drop(first);
            if let Err(e) = crate::core::io::write_atomic(file, text.as_bytes(), *backup) {
                first = failed.lock().unwrap_or_else(|p| p.into_inner());
                if first.as_ref().is_none_or(|(j, _)| i < *j) {
                    *first = Some((
                        i,
                        TagsFileError::Io {
                            file: file.display().to_string(),
                            message: format!("cannot save: {e}"),
                        },
                    ));
                }
            } else {
                written.lock().unwrap_or_else(|p| p.into_inner()).push(i);
            }
        }
    };
    if files.len() <= 1 {
        write();
    } else {
        std::thread::scope(|s| {
            for _ in 0..WRITERS.min(files.len()) {
                s.spawn(write);
            }
        });
    }
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) => Err((written.into_inner().unwrap_or_else(|p| p.into_inner()), e)),
        None => Ok(()),
    }
}

/// Loads a project file of either layout: a single `taglane.tags` file, or a sidecar-mode project
/// (whose bad sidecars, untracked takes and orphans become warnings).
pub fn load_any(path: &Path) -> Result<(TagDocument, Vec<LoadWarning>), TagsFileError> {
    load_any_with_baseline(path).map(|(doc, warnings, _)| (doc, warnings))
}

/// What a project's load saw of its files, for a save to tell changes made on disk meanwhile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A sidecar project: each sidecar and the project file.
    Sidecars(SidecarBaseline),
    /// A single file: the hash of its bytes ([`SidecarBaseline::hash`]).
    File(u64),
}

/// [`load_any`], with what the load saw of the files (the bytes parsed, not read again).
pub fn load_any_with_baseline(
    path: &Path,
) -> Result<(TagDocument, Vec<LoadWarning>, Seen), TagsFileError> {
    let text = read_text(path)?;
    if is_sidecar_project_text(&text) {
        let load = load_sidecar_project(path)?;
        let mut warnings = load.warnings.clone();
        // Each message names its file (the caller names the project).
        warnings.extend(load.problem_messages().into_iter().map(|m| LoadWarning {
            path: String::new(),
            message: m,
        }));
        return Ok((load.doc, warnings, Seen::Sidecars(load.baseline)));
    }
    let seen = Seen::File(SidecarBaseline::hash(text.as_bytes()));
    load_tags_str(&text, &path.display().to_string()).map(|(doc, w)| (doc, w, seen))
}
