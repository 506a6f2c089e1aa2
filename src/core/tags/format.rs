//! The `taglane.tags` JSON file: load with full validation, save atomically. See docs/TAGS_FORMAT.md.
//!
//! Loading never drops anything silently: overlapping or adjacent ranges are merged and reported as
//! warnings, unknown fields are reported as warnings (they are not kept on save), and every error
//! names the file and the JSON path (`tags[2].ranges.walk_01[1]`) or the line and column.
//!
//! Both directions stream: the loader reads the text straight into the document (no JSON tree) and
//! the writer formats it straight into one string. See docs/PERFORMANCE.md ("Streaming load and save").

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;

use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::value::RawValue;

use super::clip_ranges::{ClipRanges, ClipRangesBuilder};
use super::document::{ClipInfo, SavedQuery, Tag, TagDocument};
use super::parse::{closest_names, parse_query};
use super::query::next_version;
use super::range::Range;
use crate::core::settings::{AutotagSettings, SettingsError, parse_settings_at};

/// The value of the `format` field.
pub const FORMAT_TAG: &str = "taglane.tags";
/// The newest version this build reads. The writer writes the lowest version that holds the
/// document: 1, or 2 when a tag has markers or notes (so older builds refuse such a file instead of
/// dropping its markers and notes).
pub const FORMAT_VERSION: u64 = 2;
/// The longest clip accepted, in frames (2^28: over 620 hours at 120 fps). Masks allocate one bit
/// per frame, so the limit bounds what a file can make us allocate for one clip (32 MiB).
pub const MAX_CLIP_FRAMES: u64 = 1 << 28;

/// The fields of the top level, in the order the writer emits them.
const TOP_LEVEL_FIELDS: [&str; 7] = [
    "format", "version", "clips", "tags", "queries", "autotag", "storage",
];

/// What a single-file loader says of a sidecar-mode project (see docs/TAGS_FORMAT.md).
pub(crate) const SIDECAR_PROJECT_MESSAGE: &str = "this is a sidecar-mode project: its tags are in the takes' .tags.json files; open it as a project (taglane PROJECT, File > Open) rather than as a tag file";

/// Reads the optional `autotag` field (autotag settings, versioned on their own; see
/// docs/AUTOTAG.md). Errors carry the JSON path from the top (`autotag.rules[0].when[1].leave`).
fn read_autotag(raw: &str) -> Result<AutotagSettings, SettingsError> {
    parse_settings_at(raw, "autotag")
}

/// Appends `,\n  "autotag": {...}` for a document with autotag settings (nothing otherwise, so a
/// document without them is written exactly as before the field existed). Refuses settings the
/// loader would reject.
fn write_autotag(s: &mut String, doc: &TagDocument, file_label: &str) -> Result<(), TagsFileError> {
    let Some(settings) = &doc.autotag else {
        return Ok(());
    };
    settings.validate().map_err(|e| TagsFileError::Invalid {
        file: file_label.to_string(),
        path: format!("autotag.{}", e.path),
        message: e.message,
    })?;
    s.push_str(",\n  \"autotag\": ");
    s.push_str(&settings.to_json(2));
    Ok(())
}

/// A tag file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TagsFileError {
    /// The file could not be read or written.
    #[error("{file}: {message}")]
    Io { file: String, message: String },
    /// Not JSON.
    #[error("{file}: line {line}, column {column}: {message}")]
    Syntax {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// JSON, but not a valid tag file.
    #[error("{file}: {path}: {message}")]
    Invalid {
        file: String,
        path: String,
        message: String,
    },
}

/// Something the loader fixed or ignored, with where it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadWarning {
    /// JSON path, like `tags[0].ranges.walk_01`; empty for a message that names its own file.
    pub path: String,
    pub message: String,
}

impl fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

// `key_path` is also used by `format/annotations.rs`.
use crate::core::json::{f32_text, key_path, string_text};

/// `#rrggbb` (either case) as its three bytes; `None` for anything else.
pub(crate) fn parse_color(s: &str) -> Option<[u8; 3]> {
    let hex = s.strip_prefix('#')?;
    // Six hex digits and nothing else (`from_str_radix` also takes a sign: `#+f+f+f`).
    if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some([byte(0)?, byte(2)?, byte(4)?])
}

/// Checks a clip's `unit_cm` (`value`: the number read, or the kind of value found instead).
fn check_unit_cm(value: Result<f64, &str>, path: &str, file: &str) -> Result<f32, TagsFileError> {
    let fail = |message: String| TagsFileError::Invalid {
        file: file.to_string(),
        path: path.to_string(),
        message,
    };
    let x = value.map_err(|kind| {
        fail(format!(
            "expected centimetres per unit (a number), found {kind}"
        ))
    })?;
    if crate::core::limits::unit_cm_ok(x) {
        Ok(x as f32)
    } else {
        Err(fail(crate::core::limits::unit_cm_message(x)))
    }
}

// ---------------------------------------------------------------------------------------------
// The streaming loader.
//
// The file is read in one pass straight into the document: serde drives visitors that validate each
// value as it arrives and build the clips, tags (range lists read into one vector each) and queries;
// no JSON tree is built. Small objects (a clip, a query, a tag's name and colour) are buffered as
// their fields so they are checked in the same order as before, whatever the order of the keys.
//
// Errors are exactly those of the tree loader this replaced (kept in `format/reference.rs` as the
// test oracle). That loader parsed the whole text first, then checked the tree top-down: a syntax
// error anywhere wins over any other; then a duplicate key at the top level; then `format`,
// `version`, `clips`, `tags` and `queries` in that order, each element in file order. Here:
// - every value is parsed with `deserialize_any` as the tree parser did (same number and string
//   checks, same nesting limit), so a file that loads here parsed there;
// - on any problem the loader keeps reading (skipping the rest of the section) so that a problem
//   the old order checks earlier (a duplicate top-level key, `format`) still wins, and before
//   reporting it re-parses the whole text with a checking-only visitor, so a syntax error later in
//   the file is reported first, as before;
// - sections that arrive out of order (`tags` before `clips`) are kept as raw text and read once
//   the sections they depend on are known; the whole text is then also checked as above.
// ---------------------------------------------------------------------------------------------

/// A JSON value as the loader needs it: scalars as read, arrays and objects only as their kind
/// (their contents are parsed and checked like any JSON, then dropped).
#[derive(Debug)]
enum Small<'de> {
    Null,
    Bool,
    U(u64),
    I(i64),
    F(f64),
    Str(Cow<'de, str>),
    Arr,
    Obj,
}

impl Small<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Small::Null => "null",
            Small::Bool => "a boolean",
            Small::U(_) | Small::I(_) | Small::F(_) => "a number",
            Small::Str(_) => "a string",
            Small::Arr => "an array",
            Small::Obj => "an object",
        }
    }

    fn number(&self) -> Option<serde_json::Number> {
        match *self {
            Small::U(x) => Some(x.into()),
            Small::I(x) => Some(x.into()),
            Small::F(x) => serde_json::Number::from_f64(x),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Small<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Small<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<Small<'de>, E> {
                Ok(Small::Null)
            }
            fn visit_bool<E>(self, _v: bool) -> Result<Small<'de>, E> {
                Ok(Small::Bool)
            }
            fn visit_u64<E>(self, v: u64) -> Result<Small<'de>, E> {
                Ok(Small::U(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Small<'de>, E> {
                Ok(Small::I(v))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Small<'de>, E> {
                Ok(if v.is_finite() {
                    Small::F(v)
                } else {
                    Small::Null
                })
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Small<'de>, E> {
                Ok(Small::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Small<'de>, E> {
                Ok(Small::Str(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Small<'de>, E> {
                Ok(Small::Str(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Small<'de>, A::Error> {
                while a.next_element::<Check>()?.is_some() {}
                Ok(Small::Arr)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Small<'de>, A::Error> {
                while a.next_key::<Key>()?.is_some() {
                    a.next_value::<Check>()?;
                }
                Ok(Small::Obj)
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses any JSON value as a tree parser does (same checks, same errors) and keeps nothing.
struct Check;

impl<'de> Deserialize<'de> for Check {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Check;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<Check, E> {
                Ok(Check)
            }
            fn visit_bool<E>(self, _v: bool) -> Result<Check, E> {
                Ok(Check)
            }
            fn visit_u64<E>(self, _v: u64) -> Result<Check, E> {
                Ok(Check)
            }
            fn visit_i64<E>(self, _v: i64) -> Result<Check, E> {
                Ok(Check)
            }
            fn visit_f64<E>(self, _v: f64) -> Result<Check, E> {
                Ok(Check)
            }
            fn visit_str<E>(self, _v: &str) -> Result<Check, E> {
                Ok(Check)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Check, A::Error> {
                while a.next_element::<Check>()?.is_some() {}
                Ok(Check)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Check, A::Error> {
                while a.next_key::<Key>()?.is_some() {
                    a.next_value::<Check>()?;
                }
                Ok(Check)
            }
        }
        d.deserialize_any(V)
    }
}

/// An object key, borrowed from the text when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_string(V)
    }
}

/// What a value is expected to be: the handler of arrays and objects, and what to do when the value
/// is of another kind (`wrong` gets the kind found). Wrapped in [`Any`] to become a serde seed.
trait Shape<'de>: Sized {
    fn seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        self.wrong("an array");
        Ok(())
    }
    fn map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_key::<IgnoredAny>()?.is_some() {
            a.next_value::<IgnoredAny>()?;
        }
        self.wrong("an object");
        Ok(())
    }
    fn wrong(self, kind: &'static str);
}

struct Any<S>(S);

impl<'de, S: Shape<'de>> Visitor<'de> for Any<S> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.wrong("null");
        Ok(())
    }
    fn visit_bool<E>(self, _v: bool) -> Result<(), E> {
        self.0.wrong("a boolean");
        Ok(())
    }
    fn visit_u64<E>(self, _v: u64) -> Result<(), E> {
        self.0.wrong("a number");
        Ok(())
    }
    fn visit_i64<E>(self, _v: i64) -> Result<(), E> {
        self.0.wrong("a number");
        Ok(())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        // The tree loader kept a non-finite number as null (serde_json never yields one).
        self.0
            .wrong(if v.is_finite() { "a number" } else { "null" });
        Ok(())
    }
    fn visit_str<E>(self, _v: &str) -> Result<(), E> {
        self.0.wrong("a string");
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<(), A::Error> {
        self.0.seq(a)
    }
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<(), A::Error> {
        self.0.map(a)
    }
}

impl<'de, S: Shape<'de>> DeserializeSeed<'de> for Any<S> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// A fast hash for names (clip names are looked up once per range list).
#[derive(Default, Clone, Copy)]
struct NameHasher(u64);

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

type NameMap<V> = HashMap<String, V, BuildHasherDefault<NameHasher>>;

struct Loader<'a> {
    file: &'a str,
    warnings: Vec<LoadWarning>,
    /// The first problem found (see the order above).
    error: Option<TagsFileError>,
    /// A section was read out of order, from its raw text.
    deferred: bool,
    clips: Vec<ClipInfo>,
    tags: Vec<Tag>,
    queries: Vec<SavedQuery>,
    autotag: Option<AutotagSettings>,
    /// Clip ids by name: a linear `clip_index` per range entry made loading quadratic (22 s for the
    /// 10,000-clip stress project, see docs/ROBUSTNESS.md).
    clip_ids: NameMap<u32>,
    tag_ids: NameMap<usize>,
    /// Per clip, the number (index + 1) of the last tag whose `ranges` named it: finds duplicate keys.
    clip_seen: Vec<u32>,
    /// The ranges of the list being read, with their index in the file.
    scratch: Vec<Range>,
}

type R<T> = Result<T, TagsFileError>;

/// The fields of a small object, in file order (duplicates included).
type Fields<'de> = Vec<(Cow<'de, str>, Small<'de>)>;

impl<'a> Loader<'a> {
    fn new(file: &'a str) -> Self {
        Loader {
            file,
            warnings: Vec::new(),
            error: None,
            deferred: false,
            clips: Vec::new(),
            tags: Vec::new(),
            queries: Vec::new(),
            autotag: None,
            clip_ids: NameMap::default(),
            tag_ids: NameMap::default(),
            clip_seen: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn fail(&self, path: &str, message: impl Into<String>) -> TagsFileError {
        TagsFileError::Invalid {
            file: self.file.to_string(),
            path: if path.is_empty() {
                "(top level)".to_string()
            } else {
                path.to_string()
            },
            message: message.into(),
        }
    }

    fn warn(&mut self, path: &str, message: impl Into<String>) {
        self.warnings.push(LoadWarning {
            path: path.to_string(),
            message: message.into(),
        });
    }

    /// Records the first problem.
    fn set_error(&mut self, e: TagsFileError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Checks the keys of an object for duplicates and reports unknown fields (`known` empty:
    /// any key is fine), in file order.
    fn keys<'k>(
        &mut self,
        keys: impl IntoIterator<Item = &'k str>,
        path: &str,
        known: &[&str],
    ) -> R<()> {
        let mut seen: Vec<&str> = Vec::new();
        for k in keys {
            if seen.contains(&k) {
                return Err(self.fail(&key_path(path, k), format!("duplicate key `{k}`")));
            }
            seen.push(k);
            if !known.is_empty() && !known.contains(&k) {
                self.warn(
                    &key_path(path, k),
                    format!(
                        "unknown field `{k}` is ignored and will not be saved (known: {})",
                        known.join(", ")
                    ),
                );
            }
        }
        Ok(())
    }

    /// [`Loader::keys`] on buffered fields.
    fn fields(&mut self, fields: &Fields, path: &str, known: &[&str]) -> R<()> {
        self.keys(fields.iter().map(|(k, _)| k.as_ref()), path, known)
    }

    fn required<'f, 'de>(&self, m: &'f Fields<'de>, path: &str, key: &str) -> R<&'f Small<'de>> {
        get(m, key).ok_or_else(|| self.fail(path, format!("missing required field `{key}`")))
    }

    fn string<'v>(&self, v: &'v Small, path: &str) -> R<&'v str> {
        match v {
            Small::Str(s) => Ok(s),
            other => Err(self.fail(path, format!("expected a string, found {}", other.kind()))),
        }
    }

    fn name<'v>(&self, v: &'v Small, path: &str) -> R<&'v str> {
        let s = self.string(v, path)?;
        // Names of spaces only are refused as edits refuse them (an undo could not put one back).
        if s.trim().is_empty() {
            return Err(self.fail(path, "expected a non-empty name (not only spaces)"));
        }
        Ok(s)
    }

    fn uint(&self, v: &Small, path: impl Fn() -> String, max: u64, what: &str) -> R<u64> {
        match *v {
            Small::U(x) if x <= max => Ok(x),
            Small::U(x) => Err(self.fail(
                &path(),
                format!("{what} {x} is too large; the limit is {max}"),
            )),
            Small::I(_) | Small::F(_) => Err(self.fail(
                &path(),
                format!(
                    "expected {what} as a whole number >= 0, found {}",
                    v.number().map(|n| n.to_string()).unwrap_or_default()
                ),
            )),
            _ => Err(self.fail(
                &path(),
                format!("expected {what} (a whole number), found {}", v.kind()),
            )),
        }
    }

    /// Checks `format` and `version`, in that order; the version.
    fn header(&self, format: Option<&Small>, version: Option<&Small>) -> R<u64> {
        let format = format.ok_or_else(|| self.fail("", "missing required field `format`"))?;
        match format {
            Small::Str(s) if s == FORMAT_TAG => {}
            other => {
                let found = match other {
                    Small::Str(s) => format!("\"{s}\""),
                    o => o.kind().to_string(),
                };
                return Err(self.fail(
                    "format",
                    format!(
                        "expected \"{FORMAT_TAG}\", found {found}; this is not a taglane tag file"
                    ),
                ));
            }
        }
        let version = version.ok_or_else(|| self.fail("", "missing required field `version`"))?;
        let version = self.uint(version, || "version".to_string(), u64::MAX, "the version")?;
        if version == 0 || version > FORMAT_VERSION {
            return Err(self.fail(
                "version",
                format!(
                    "unsupported version {version}; this build reads versions 1 to {FORMAT_VERSION}"
                ),
            ));
        }
        Ok(version)
    }

    /// Validates clip `i` and appends it.
    fn clip(&mut self, i: usize, m: &Fields) -> R<()> {
        let p = format!("clips[{i}]");
        self.fields(m, &p, &["name", "frames", "fps", "source", "unit_cm"])?;
        let name = self.name(self.required(m, &p, "name")?, &format!("{p}.name"))?;
        if let Some(j) = self.clip_ids.get(name) {
            return Err(self.fail(
                &format!("{p}.name"),
                format!("duplicate clip name `{name}` (also clips[{j}])"),
            ));
        }
        let frames = self.uint(
            self.required(m, &p, "frames")?,
            || format!("{p}.frames"),
            MAX_CLIP_FRAMES,
            "frames",
        )?;
        let fps_path = format!("{p}.fps");
        let fps_value = self.required(m, &p, "fps")?;
        let fps = match fps_value.number() {
            Some(n) => n.as_f64().unwrap_or(f64::NAN),
            None => {
                return Err(self.fail(
                    &fps_path,
                    format!(
                        "expected frames per second (a number), found {}",
                        fps_value.kind()
                    ),
                ));
            }
        };
        if !crate::core::limits::fps_ok(fps) {
            return Err(self.fail(&fps_path, crate::core::limits::fps_message(fps)));
        }
        let source = match get(m, "source") {
            Some(v) => Some(self.string(v, &format!("{p}.source"))?.to_string()),
            None => None,
        };
        let unit_cm = match get(m, "unit_cm") {
            Some(v) => Some(check_unit_cm(
                v.number()
                    .map(|n| n.as_f64().unwrap_or(f64::NAN))
                    .ok_or(v.kind()),
                &format!("{p}.unit_cm"),
                self.file,
            )?),
            None => None,
        };
        self.clip_ids
            .insert(name.to_string(), self.clips.len() as u32);
        self.clips.push(ClipInfo {
            name: name.to_string(),
            frames: frames as u32,
            fps: fps as f32,
            source,
            unit_cm,
        });
        Ok(())
    }

    /// Validates query `i` and appends it; `names` are the document's tag names.
    fn query(&mut self, i: usize, m: &Fields, names: &[&str]) -> R<()> {
        let p = format!("queries[{i}]");
        self.fields(m, &p, &["name", "expr"])?;
        let name = self.name(self.required(m, &p, "name")?, &format!("{p}.name"))?;
        if let Some(j) = self.queries.iter().position(|q| q.name == name) {
            return Err(self.fail(
                &format!("{p}.name"),
                format!("duplicate query name `{name}` (also queries[{j}])"),
            ));
        }
        let expr = self.string(self.required(m, &p, "expr")?, &format!("{p}.expr"))?;
        if let Err(e) = parse_query(expr, names) {
            self.warn(
                &format!("{p}.expr"),
                format!("the saved query does not run: {e} (kept as written)"),
            );
        }
        self.queries.push(SavedQuery {
            name: name.to_string(),
            expr: expr.to_string(),
        });
        Ok(())
    }

    /// Validates the fields of tag `i` other than its ranges, then takes the ranges read, and
    /// appends the tag.
    fn tag(
        &mut self,
        i: usize,
        keys: &[Cow<str>],
        m: &Fields,
        ranges: RangesRead,
        annotations: [Option<annotations::Tree>; 2],
    ) -> R<()> {
        let p = format!("tags[{i}]");
        self.keys(
            keys.iter().map(|k| k.as_ref()),
            &p,
            &["name", "color", "ranges", "markers", "notes"],
        )?;
        let name = self.name(self.required(m, &p, "name")?, &format!("{p}.name"))?;
        if let Some(j) = self.tag_ids.get(name) {
            return Err(self.fail(
                &format!("{p}.name"),
                format!("duplicate tag name `{name}` (also tags[{j}])"),
            ));
        }
        let color = match get(m, "color") {
            Some(v) => {
                let cp = format!("{p}.color");
                let s = self.string(v, &cp)?;
                Some(parse_color(s).ok_or_else(|| {
                    self.fail(
                        &cp,
                        format!("expected a colour like \"#4e9a06\", found \"{s}\""),
                    )
                })?)
            }
            None => None,
        };
        let ranges = match ranges {
            RangesRead::Absent => ClipRanges::new(),
            RangesRead::Wrong(kind) => {
                return Err(self.fail(
                    &format!("{p}.ranges"),
                    format!("expected an object, found {kind}"),
                ));
            }
            RangesRead::Read(r) => {
                if let Some(k) = r.duplicate {
                    return Err(self.fail(
                        &key_path(&format!("{p}.ranges"), &k),
                        format!("duplicate key `{k}`"),
                    ));
                }
                if let Some(e) = r.error {
                    return Err(e);
                }
                self.warnings.extend(r.warnings);
                // One flat buffer for the tag, in clip order whatever the file's key order (clip
                // ids are unique here, checked on read).
                r.lists.finish()
            }
        };
        let mut tag = Tag {
            name: name.to_string(),
            color,
            ranges,
            markers: Default::default(),
            notes: Default::default(),
            version: next_version(),
        };
        if annotations.iter().any(Option::is_some) {
            let ids = &self.clip_ids;
            let clip_id = |n: &str| ids.get(n).copied();
            let cx = annotations::Context {
                file: self.file,
                tag_path: p,
                clips: &self.clips,
                clip_id: &clip_id,
            };
            let mut warnings = Vec::new();
            if let Some(v) = &annotations[0] {
                tag.markers = annotations::read_markers(&cx, v, &mut warnings)?;
            }
            if let Some(v) = &annotations[1] {
                tag.notes = annotations::read_notes(&cx, v, &tag, &mut warnings)?;
            }
            self.warnings.extend(warnings);
        }
        self.tag_ids.insert(name.to_string(), self.tags.len());
        self.tags.push(tag);
        Ok(())
    }

    /// Sorts the list just read (in `scratch`, with `clip`) and merges overlapping or adjacent
    /// ranges with a warning at `path()`.
    fn canonical_list(&mut self, path: impl Fn() -> String) {
        let list = &self.scratch;
        if list.windows(2).all(|w| w[0].stop < w[1].start) {
            return;
        }
        let mut list: Vec<(Range, usize)> = list.iter().copied().zip(0..).collect();
        list.sort_by_key(|(r, _)| (r.start, r.stop));
        let mut out: Vec<Range> = Vec::with_capacity(list.len());
        // Indices (in the file) and values of the ranges merged into the current output range.
        let mut group: Vec<(usize, Range)> = Vec::new();
        let mut merges: Vec<String> = Vec::new();
        let flush = |merges: &mut Vec<String>, group: &mut Vec<(usize, Range)>, merged: Range| {
            if group.len() > 1 {
                group.sort_unstable_by_key(|(k, _)| *k);
                let which: Vec<String> = group
                    .iter()
                    .map(|(k, r)| format!("#{k} [{}, {}]", r.start, r.stop))
                    .collect();
                merges.push(format!(
                    "ranges {} overlap or are adjacent; merged into [{}, {}]",
                    which.join(" and "),
                    merged.start,
                    merged.stop
                ));
            }
            group.clear();
        };
        for (r, k) in list {
            match out.last_mut() {
                Some(last) if last.stop >= r.start => {
                    last.stop = last.stop.max(r.stop);
                    group.push((k, r));
                }
                _ => {
                    if let Some(&last) = out.last() {
                        flush(&mut merges, &mut group, last);
                    }
                    out.push(r);
                    group.push((k, r));
                }
            }
        }
        if let Some(&last) = out.last() {
            flush(&mut merges, &mut group, last);
        }
        if !merges.is_empty() {
            let path = path();
            for m in merges {
                self.warn(&path, m);
            }
        }
        self.scratch = out;
    }
}

fn get<'f, 'de>(m: &'f Fields<'de>, key: &str) -> Option<&'f Small<'de>> {
    m.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// Reads the fields of a small object (values of other kinds are left for the caller to report).
struct FieldsShape<'o, 'de> {
    out: &'o mut Result<Fields<'de>, &'static str>,
}

impl<'de> Shape<'de> for FieldsShape<'_, 'de> {
    fn map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let mut fields = Fields::new();
        while let Some(Key(k)) = a.next_key()? {
            fields.push((k, a.next_value::<Small>()?));
        }
        *self.out = Ok(fields);
        Ok(())
    }
    fn wrong(self, kind: &'static str) {
        *self.out = Err(kind);
    }
}

/// Reads a small object; `Err(kind)` when the value is not an object.
fn read_fields<'de, A: SeqAccess<'de>>(
    a: &mut A,
) -> Result<Option<Result<Fields<'de>, &'static str>>, A::Error> {
    let mut out = Err("null");
    match a.next_element_seed(Any(FieldsShape { out: &mut out }))? {
        Some(()) => Ok(Some(out)),
        None => Ok(None),
    }
}

/// One top-level section: not seen yet, read, or kept as raw text to read later.
enum Section<'de> {
    Absent,
    Done,
    Raw(&'de RawValue),
}

struct Top<'l, 'a> {
    l: &'l mut Loader<'a>,
}

impl<'de> Shape<'de> for Top<'_, '_> {
    fn map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let l = self.l;
        let mut keys: Vec<Cow<'de, str>> = Vec::new();
        let (mut format, mut version) = (None, None);
        let (mut clips, mut tags, mut queries) =
            (Section::Absent, Section::Absent, Section::Absent);
        let mut autotag: Option<&'de RawValue> = None;
        let mut storage: Option<Small> = None;
        let mut dup = false;
        while let Some(Key(k)) = a.next_key()? {
            if dup || keys.contains(&k) {
                dup = true;
                keys.push(k);
                a.next_value::<IgnoredAny>()?;
                continue;
            }
            let broken = l.error.is_some();
            match k.as_ref() {
                "format" => format = Some(a.next_value::<Small>()?),
                "version" => version = Some(a.next_value::<Small>()?),
                "clips" if broken => {
                    a.next_value::<IgnoredAny>()?;
                }
                "clips" => {
                    a.next_value_seed(Any(ClipsShape { l: &mut *l }))?;
                    clips = Section::Done;
                }
                "tags" if broken => {
                    a.next_value::<IgnoredAny>()?;
                }
                "tags" if matches!(clips, Section::Done) => {
                    a.next_value_seed(Any(TagsShape { l: &mut *l }))?;
                    tags = Section::Done;
                }
                "tags" => tags = Section::Raw(a.next_value()?),
                "queries" if broken => {
                    a.next_value::<IgnoredAny>()?;
                }
                "queries" if matches!(tags, Section::Done) => {
                    a.next_value_seed(Any(QueriesShape { l: &mut *l }))?;
                    queries = Section::Done;
                }
                "queries" => queries = Section::Raw(a.next_value()?),
                "autotag" => autotag = Some(a.next_value()?),
                "storage" => storage = Some(a.next_value::<Small>()?),
                _ => {
                    a.next_value::<Check>()?;
                }
            }
            keys.push(k);
        }
        // The checks of the tree loader, in its order; sections already read may have recorded an
        // error, which comes after the checks of the header.
        let section_error = l.error.take();
        let before = l.warnings.len();
        let checked = l
            .keys(keys.iter().map(|k| k.as_ref()), "", &TOP_LEVEL_FIELDS)
            .and_then(|()| l.header(format.as_ref(), version.as_ref()));
        // Top-level warnings come first.
        let top_warnings = l.warnings.len() - before;
        l.warnings.rotate_right(top_warnings);
        let version = match checked {
            Ok(v) => v,
            Err(e) => {
                l.error = Some(e);
                return Ok(());
            }
        };
        if keys.iter().any(|k| k == "storage") {
            // `"sidecar"` is a sidecar-mode project; any other value is a mistake in the file
            // (`"sidecars"`), named as such rather than taken for one.
            let message = match &storage {
                Some(Small::Str(v)) if v == "sidecar" => SIDECAR_PROJECT_MESSAGE.to_owned(),
                other => {
                    let found = match other {
                        Some(Small::Str(v)) => format!("\"{v}\""),
                        Some(o) => o.kind().to_string(),
                        None => "nothing".to_owned(),
                    };
                    format!(
                        "unknown storage {found}; expected \"sidecar\" (a sidecar-mode project), \
                         or no `storage` field for a project in one file"
                    )
                }
            };
            l.error = Some(l.fail("storage", message));
            return Ok(());
        }
        if let Some(e) = section_error {
            l.error = Some(e);
            return Ok(());
        }
        for (name, section) in [("clips", clips), ("tags", tags), ("queries", queries)] {
            let raw = match section {
                Section::Done => continue,
                Section::Absent if name == "queries" => continue,
                Section::Absent => {
                    l.error = Some(l.fail("", format!("missing required field `{name}`")));
                    return Ok(());
                }
                Section::Raw(raw) => raw,
            };
            l.deferred = true;
            let mut de = serde_json::Deserializer::from_str(raw.get());
            let read = match name {
                "clips" => Any(ClipsShape { l: &mut *l }).deserialize(&mut de),
                "tags" => Any(TagsShape { l: &mut *l }).deserialize(&mut de),
                _ => Any(QueriesShape { l: &mut *l }).deserialize(&mut de),
            };
            read.map_err(de::Error::custom)?;
            if l.error.is_some() {
                return Ok(());
            }
        }
        if let Some(raw) = autotag {
            match read_autotag(raw.get()) {
                Ok(settings) => l.autotag = Some(settings),
                Err(e) => l.error = Some(l.fail(&e.path, e.message)),
            }
        }
        // Markers and notes came with version 2: a version 1 file holding them was edited by
        // hand or written by another tool. They are read; the next save writes version 2.
        if version == 1
            && l.tags
                .iter()
                .any(|t| !t.markers.is_empty() || !t.notes.is_empty())
        {
            l.warnings.push(LoadWarning {
                path: "version".into(),
                message: "version 1 has no markers or notes, but this file's tags have some; \
                          read as version 2 (a save writes version 2)"
                    .into(),
            });
        }
        Ok(())
    }
    fn wrong(self, kind: &'static str) {
        let e = self.l.fail("", format!("expected an object, found {kind}"));
        self.l.set_error(e);
    }
}

struct ClipsShape<'l, 'a> {
    l: &'l mut Loader<'a>,
}

impl<'de> Shape<'de> for ClipsShape<'_, '_> {
    fn seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let l = self.l;
        let mut i = 0;
        while l.error.is_none() {
            let Some(fields) = read_fields(&mut a)? else {
                break;
            };
            let checked = match fields {
                Ok(m) => l.clip(i, &m),
                Err(kind) => Err(l.fail(
                    &format!("clips[{i}]"),
                    format!("expected an object, found {kind}"),
                )),
            };
            if let Err(e) = checked {
                l.set_error(e);
            }
            i += 1;
        }
        while a.next_element::<IgnoredAny>()?.is_some() {}
        l.clip_seen = vec![0; l.clips.len()];
        Ok(())
    }
    fn wrong(self, kind: &'static str) {
        let e = self
            .l
            .fail("clips", format!("expected an array, found {kind}"));
        self.l.set_error(e);
    }
}

struct QueriesShape<'l, 'a> {
    l: &'l mut Loader<'a>,
}

impl<'de> Shape<'de> for QueriesShape<'_, '_> {
    fn seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let l = self.l;
        let tag_names: Vec<String> = l.tags.iter().map(|t| t.name.clone()).collect();
        let names: Vec<&str> = tag_names.iter().map(String::as_str).collect();
        let mut i = 0;
        while l.error.is_none() {
            let Some(fields) = read_fields(&mut a)? else {
                break;
            };
            let checked = match fields {
                Ok(m) => l.query(i, &m, &names),
                Err(kind) => Err(l.fail(
                    &format!("queries[{i}]"),
                    format!("expected an object, found {kind}"),
                )),
            };
            if let Err(e) = checked {
                l.set_error(e);
            }
            i += 1;
        }
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn wrong(self, kind: &'static str) {
        let e = self
            .l
            .fail("queries", format!("expected an array, found {kind}"));
        self.l.set_error(e);
    }
}

struct TagsShape<'l, 'a> {
    l: &'l mut Loader<'a>,
}

impl<'de> Shape<'de> for TagsShape<'_, '_> {
    fn seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let l = self.l;
        let mut i = 0;
        while l.error.is_none() {
            let mut out = TagRead::NotObject("null");
            if a.next_element_seed(Any(TagShape {
                l: &mut *l,
                i,
                out: &mut out,
            }))?
            .is_none()
            {
                break;
            }
            let checked = match out {
                TagRead::Object {
                    keys,
                    fields,
                    ranges,
                    annotations,
                } => l.tag(i, &keys, &fields, ranges, *annotations),
                TagRead::NotObject(kind) => Err(l.fail(
                    &format!("tags[{i}]"),
                    format!("expected an object, found {kind}"),
                )),
            };
            if let Err(e) = checked {
                l.set_error(e);
            }
            i += 1;
        }
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn wrong(self, kind: &'static str) {
        let e = self
            .l
            .fail("tags", format!("expected an array, found {kind}"));
        self.l.set_error(e);
    }
}

/// A tag object as read: every key in file order, the small fields, and the ranges.
enum TagRead<'de> {
    NotObject(&'static str),
    Object {
        keys: Vec<Cow<'de, str>>,
        fields: Fields<'de>,
        ranges: RangesRead,
        /// `markers` and `notes`, as read.
        annotations: Box<[Option<annotations::Tree>; 2]>,
    },
}

/// The `ranges` of a tag as read.
enum RangesRead {
    Absent,
    Wrong(&'static str),
    Read(Box<RangesOut>),
}

struct RangesOut {
    /// The non-empty lists by clip id, in file order.
    lists: ClipRangesBuilder,
    warnings: Vec<LoadWarning>,
    /// The first key given twice (it wins over `error`, as duplicate keys were checked first).
    duplicate: Option<String>,
    /// The first problem in the lists, in file order.
    error: Option<TagsFileError>,
}

struct TagShape<'l, 'a, 'o, 'de> {
    l: &'l mut Loader<'a>,
    i: usize,
    out: &'o mut TagRead<'de>,
}

impl<'de> Shape<'de> for TagShape<'_, '_, '_, 'de> {
    fn map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let mut keys: Vec<Cow<'de, str>> = Vec::new();
        let mut fields = Fields::new();
        let mut ranges = RangesRead::Absent;
        let mut annotations: Box<[Option<annotations::Tree>; 2]> = Box::new([None, None]);
        while let Some(Key(k)) = a.next_key()? {
            if keys.contains(&k) {
                // A duplicate key: the tag fails whatever the value.
                a.next_value::<IgnoredAny>()?;
            } else {
                match k.as_ref() {
                    "name" | "color" => fields.push((k.clone(), a.next_value::<Small>()?)),
                    "markers" => annotations[0] = Some(a.next_value()?),
                    "notes" => annotations[1] = Some(a.next_value()?),
                    "ranges" => {
                        a.next_value_seed(Any(RangesShape {
                            l: &mut *self.l,
                            tag: self.i,
                            out: &mut ranges,
                        }))?;
                    }
                    _ => {
                        a.next_value::<Check>()?;
                    }
                }
            }
            keys.push(k);
        }
        *self.out = TagRead::Object {
            keys,
            fields,
            ranges,
            annotations,
        };
        Ok(())
    }
    fn wrong(self, kind: &'static str) {
        *self.out = TagRead::NotObject(kind);
    }
}

struct RangesShape<'l, 'a, 'o> {
    l: &'l mut Loader<'a>,
    tag: usize,
    out: &'o mut RangesRead,
}

impl<'de> Shape<'de> for RangesShape<'_, '_, '_> {
    fn map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let l = self.l;
        let stamp = self.tag as u32 + 1;
        let mut out = RangesOut {
            lists: ClipRangesBuilder::new(),
            warnings: Vec::new(),
            duplicate: None,
            error: None,
        };
        let mut unknown: HashSet<String> = HashSet::new();
        let ranges_path = || format!("tags[{}].ranges", self.tag);
        while let Some(Key(name)) = a.next_key()? {
            if out.duplicate.is_some() {
                a.next_value::<IgnoredAny>()?;
                continue;
            }
            let clip = l.clip_ids.get(name.as_ref()).copied();
            let repeated = match clip {
                Some(c) => std::mem::replace(&mut l.clip_seen[c as usize], stamp) == stamp,
                None => !unknown.insert(name.to_string()),
            };
            if repeated {
                out.duplicate = Some(name.into_owned());
                a.next_value::<IgnoredAny>()?;
                continue;
            }
            if out.error.is_some() {
                a.next_value::<IgnoredAny>()?;
                continue;
            }
            let Some(clip) = clip else {
                let mut msg =
                    format!("unknown clip `{name}`; ranges must name a clip of the `clips` list");
                let near = closest_names(&name, l.clips.iter().map(|c| c.name.as_str()));
                if !near.is_empty() {
                    let _ = write!(msg, " (did you mean `{}`?)", near.join("` or `"));
                }
                out.error = Some(l.fail(&key_path(&ranges_path(), &name), msg));
                a.next_value::<IgnoredAny>()?;
                continue;
            };
            let path = || key_path(&ranges_path(), &name);
            let mut error = None;
            let warnings_before = l.warnings.len();
            a.next_value_seed(Any(ListShape {
                l: &mut *l,
                clip,
                path: &path,
                error: &mut error,
            }))?;
            if let Some(e) = error {
                out.error = Some(e);
                continue;
            }
            // The list's merge warnings go with the tag's (reported after its own fields).
            l.canonical_list(path);
            out.warnings.extend(l.warnings.drain(warnings_before..));
            if !l.scratch.is_empty() {
                out.lists.push(clip, &l.scratch);
            }
        }
        *self.out = RangesRead::Read(Box::new(out));
        Ok(())
    }
    fn wrong(self, kind: &'static str) {
        *self.out = RangesRead::Wrong(kind);
    }
}

/// Reads one clip's range list into the loader's scratch buffer.
struct ListShape<'l, 'a, 'p, P: Fn() -> String> {
    l: &'l mut Loader<'a>,
    clip: u32,
    path: &'p P,
    error: &'p mut Option<TagsFileError>,
}

impl<'de, P: Fn() -> String> Shape<'de> for ListShape<'_, '_, '_, P> {
    fn seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let l = self.l;
        let path = self.path;
        l.scratch.clear();
        let frames = l.clips[self.clip as usize].frames;
        let mut k = 0usize;
        loop {
            let mut pair = PairRead::NotArray("null");
            if a.next_element_seed(Any(PairShape { out: &mut pair }))?
                .is_none()
            {
                return Ok(());
            }
            let item = || format!("{}[{k}]", path());
            let checked = match pair {
                PairRead::NotArray(kind) => {
                    Err(l.fail(&item(), format!("expected an array, found {kind}")))
                }
                PairRead::Values(n, _, _) if n != 2 => Err(l.fail(
                    &item(),
                    format!("expected a range [start, stop] with 2 numbers, found {n} values"),
                )),
                PairRead::Values(_, start, stop) => (|| {
                    let start = l.uint(
                        &start,
                        || format!("{}[0]", item()),
                        u64::from(u32::MAX),
                        "the start frame",
                    )? as u32;
                    let stop = l.uint(
                        &stop,
                        || format!("{}[1]", item()),
                        u64::from(u32::MAX),
                        "the stop frame",
                    )? as u32;
                    if start >= stop {
                        return Err(l.fail(&item(), format!("range [{start}, {stop}] is empty or reversed; expected start < stop (stop is exclusive)")));
                    }
                    if stop > frames {
                        let clip = &l.clips[self.clip as usize];
                        return Err(l.fail(
                            &item(),
                            format!(
                                "range [{start}, {stop}] is outside clip `{}`, which has {} frames: expected 0 <= start < stop <= {}",
                                clip.name, clip.frames, clip.frames
                            ),
                        ));
                    }
                    Ok(Range::new(start, stop))
                })(),
            };
            match checked {
                Ok(r) => l.scratch.push(r),
                Err(e) => {
                    *self.error = Some(e);
                    while a.next_element::<IgnoredAny>()?.is_some() {}
                    return Ok(());
                }
            }
            k += 1;
        }
    }
    fn wrong(self, kind: &'static str) {
        *self.error = Some(
            self.l
                .fail(&(self.path)(), format!("expected an array, found {kind}")),
        );
    }
}

/// One range as read: the number of values and the first two (`Null` where missing).
enum PairRead<'de> {
    NotArray(&'static str),
    Values(usize, Small<'de>, Small<'de>),
}

struct PairShape<'o, 'de> {
    out: &'o mut PairRead<'de>,
}

impl<'de> Shape<'de> for PairShape<'_, 'de> {
    fn seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let mut n = 0;
        let mut first = Small::Null;
        let mut second = Small::Null;
        if let Some(v) = a.next_element::<Small>()? {
            first = v;
            n += 1;
            if let Some(v) = a.next_element::<Small>()? {
                second = v;
                n += 1;
                while a.next_element::<Check>()?.is_some() {
                    n += 1;
                }
            }
        }
        *self.out = PairRead::Values(n, first, second);
        Ok(())
    }
    fn wrong(self, kind: &'static str) {
        *self.out = PairRead::NotArray(kind);
    }
}

/// A JSON syntax error of the tag file `file_label` (also of sidecars and the reference loader).
pub(crate) fn syntax_error(file_label: &str, e: &serde_json::Error) -> TagsFileError {
    let (line, column, what) = crate::core::json::syntax_place(e);
    TagsFileError::Syntax {
        file: file_label.to_string(),
        line,
        column,
        message: format!("not valid JSON: {what}"),
    }
}

/// Loads a tag file from text; `file_label` names it in messages. Returns the document and the
/// warnings (merged ranges, ignored fields, saved queries that do not parse).
#[allow(
    clippy::needless_update,
    reason = "the document may gain fields that are not stored in the file"
)]
pub fn load_tags_str(
    text: &str,
    file_label: &str,
) -> Result<(TagDocument, Vec<LoadWarning>), TagsFileError> {
    let max = crate::core::limits::MAX_TAGS_FILE_BYTES;
    if text.len() as u64 > max {
        return Err(TagsFileError::Io {
            file: file_label.to_string(),
            message: crate::core::limits::size_message(text.len() as u64, max),
        });
    }
    // A UTF-8 byte order mark (written by some Windows editors) is skipped, as BVH's is.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut l = Loader::new(file_label);
    let read = {
        let mut de = serde_json::Deserializer::from_str(text);
        Any(Top { l: &mut l })
            .deserialize(&mut de)
            .and_then(|()| de.end())
    };
    if read.is_err() || l.error.is_some() || l.deferred {
        // As the tree loader: a syntax error anywhere comes first.
        if let Err(e) = serde_json::from_str::<Check>(text) {
            return Err(syntax_error(file_label, &e));
        }
        if let Some(e) = l.error {
            return Err(e);
        }
        if let Err(e) = read {
            return Err(syntax_error(file_label, &e));
        }
    }
    let mut doc = TagDocument {
        clips: l.clips,
        tags: l.tags,
        queries: l.queries,
        autotag: l.autotag,
        ..Default::default()
    };
    doc.touch_clips();
    Ok((doc, l.warnings))
}

/// Loads a tag file.
pub fn load_tags_file(path: &Path) -> Result<(TagDocument, Vec<LoadWarning>), TagsFileError> {
    let label = path.display().to_string();
    let bytes = crate::core::limits::read_limited(path, crate::core::limits::MAX_TAGS_FILE_BYTES)
        .map_err(|e| TagsFileError::Io {
        file: label.clone(),
        message: format!("cannot read: {e}"),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| TagsFileError::Invalid {
        file: label.clone(),
        path: format!("byte {}", e.utf8_error().valid_up_to()),
        message: "expected UTF-8 text, found an invalid byte sequence".to_string(),
    })?;
    load_tags_str(&text, &label)
}

/// Appends `x` in decimal.
fn push_u32(s: &mut String, mut x: u32) {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        s.push(char::from(d));
    }
}

/// The document as `taglane.tags` JSON text (version [`FORMAT_VERSION`]): one clip, tag or query
/// per line group, each range list on one line. Fails, naming the place, on a document no loader
/// would accept back (non-finite fps or unit, ranges on a clip id that does not exist).
///
/// Written straight into one string (each clip name escaped once, numbers formatted in place).
pub fn tags_to_string(doc: &TagDocument, file_label: &str) -> Result<String, TagsFileError> {
    let fail = |path: String, message: String| TagsFileError::Invalid {
        file: file_label.to_string(),
        path,
        message,
    };
    let range_count: usize = doc.tags.iter().map(|t| t.ranges.range_count()).sum();
    let list_count: usize = doc.tags.iter().map(|t| t.ranges.len()).sum();
    let mut s = String::with_capacity(
        256 + 96 * doc.clips.len() + 24 * range_count + 24 * list_count + 64 * doc.tags.len(),
    );
    let version = if annotations::needs_version_2(&doc.tags) {
        2
    } else {
        1
    };
    let _ = writeln!(
        s,
        "{{\n  \"format\": \"{FORMAT_TAG}\",\n  \"version\": {version},\n  \"clips\": ["
    );
    let mut clip_names: Vec<String> = Vec::with_capacity(doc.clips.len());
    for (i, c) in doc.clips.iter().enumerate() {
        // The range the reader takes, so that nothing is saved that cannot be opened again.
        if !crate::core::limits::fps_ok(f64::from(c.fps)) {
            return Err(fail(
                format!("clips[{i}].fps"),
                crate::core::limits::fps_message(f64::from(c.fps)),
            ));
        }
        let name = string_text(&c.name);
        s.push_str("    {\"name\": ");
        s.push_str(&name);
        s.push_str(", \"frames\": ");
        push_u32(&mut s, c.frames);
        s.push_str(", \"fps\": ");
        s.push_str(&f32_text(c.fps));
        if let Some(src) = &c.source {
            s.push_str(", \"source\": ");
            s.push_str(&string_text(src));
        }
        if let Some(unit) = c.unit_cm {
            // The range the reader takes, so that nothing is saved that cannot be opened again.
            if !crate::core::limits::unit_cm_ok(f64::from(unit)) {
                return Err(fail(
                    format!("clips[{i}].unit_cm"),
                    crate::core::limits::unit_cm_message(unit),
                ));
            }
            s.push_str(", \"unit_cm\": ");
            s.push_str(&f32_text(unit));
        }
        s.push_str(if i + 1 < doc.clips.len() {
            "},\n"
        } else {
            "}\n"
        });
        clip_names.push(name);
    }
    s.push_str("  ],\n  \"tags\": [");
    for (i, t) in doc.tags.iter().enumerate() {
        s.push_str(if i == 0 { "\n" } else { ",\n" });
        s.push_str("    {\"name\": ");
        s.push_str(&string_text(&t.name));
        if let Some([r, g, b]) = t.color {
            let _ = write!(s, ", \"color\": \"#{r:02x}{g:02x}{b:02x}\"");
        }
        s.push_str(", \"ranges\": {");
        for (k, (&clip, ranges)) in t.ranges.iter().enumerate() {
            let Some(name) = clip_names.get(clip as usize) else {
                return Err(fail(
                    format!("tags[{i}].ranges"),
                    format!("ranges on clip id {clip}, which does not exist"),
                ));
            };
            s.push_str(if k == 0 { "\n      " } else { ",\n      " });
            s.push_str(name);
            s.push_str(": [");
            for (j, r) in ranges.iter().enumerate() {
                s.push_str(if j == 0 { "[" } else { ", [" });
                push_u32(&mut s, r.start);
                s.push_str(", ");
                push_u32(&mut s, r.stop);
                s.push(']');
            }
            s.push(']');
        }
        s.push_str(if t.ranges.is_empty() { "}" } else { "\n    }" });
        annotations::write(&mut s, t, i, &clip_names, string_text)
            .map_err(|(path, message)| fail(path, message))?;
        s.push('}');
    }
    s.push_str(if doc.tags.is_empty() {
        "],\n"
    } else {
        "\n  ],\n"
    });
    push_queries(&mut s, &doc.queries);
    write_autotag(&mut s, doc, file_label)?;
    s.push_str("\n}\n");
    Ok(s)
}

/// Appends the `"queries"` member of a project, one saved query a line (the tag file and the
/// sidecar-mode project file write it the same way).
pub(crate) fn push_queries(s: &mut String, queries: &[SavedQuery]) {
    s.push_str("  \"queries\": [");
    for (i, q) in queries.iter().enumerate() {
        s.push_str(if i == 0 { "\n" } else { ",\n" });
        s.push_str("    {\"name\": ");
        s.push_str(&string_text(&q.name));
        s.push_str(", \"expr\": ");
        s.push_str(&string_text(&q.expr));
        s.push('}');
    }
    s.push_str(if queries.is_empty() { "]" } else { "\n  ]" });
}

/// Saves the document atomically (temporary file, then rename over `path`); with `keep_backup`,
/// the previous file is kept as `path.bak`.
pub fn save_tags_file(
    doc: &TagDocument,
    path: &Path,
    keep_backup: bool,
) -> Result<(), TagsFileError> {
    let label = path.display().to_string();
    let text = tags_to_string(doc, &label)?;
    crate::core::io::write_atomic(path, text.as_bytes(), keep_backup).map_err(|e| {
        TagsFileError::Io {
            file: label,
            message: format!("cannot save: {e}"),
        }
    })
}

impl TagDocument {
    /// See [`load_tags_file`].
    pub fn load(path: &Path) -> Result<(TagDocument, Vec<LoadWarning>), TagsFileError> {
        load_tags_file(path)
    }

    /// See [`load_tags_str`].
    pub fn from_json_str(
        text: &str,
        file_label: &str,
    ) -> Result<(TagDocument, Vec<LoadWarning>), TagsFileError> {
        load_tags_str(text, file_label)
    }

    /// See [`save_tags_file`].
    pub fn save(&self, path: &Path, keep_backup: bool) -> Result<(), TagsFileError> {
        save_tags_file(self, path, keep_backup)
    }

    /// See [`tags_to_string`].
    pub fn to_json_string(&self) -> Result<String, TagsFileError> {
        tags_to_string(self, "(document)")
    }
}

pub(crate) mod annotations;
#[cfg(test)]
mod equivalence;
#[cfg(test)]
mod reference;
