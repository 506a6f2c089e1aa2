//! The editable tag document: clips, tags with ranges per clip, saved queries.
//!
//! This is the editable form; queries run on packed forms built from it.

use std::collections::BTreeMap;

use super::clip_ranges::ClipRanges;
use super::range::Range;

pub use super::clip_ranges::ClipId;

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
/// (sorted, disjoint, non-adjacent, non-empty, inside `[0, frames)`), markers (one-frame events)
/// and notes on either.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tag {
    /// Unique within the document; may be namespaced (`locomotion:Walk`).
    pub name: String,
    /// sRGB colour.
    pub color: Option<[u8; 3]>,
    /// Ranges per clip, in one flat buffer; clips without ranges have no entry.
    pub ranges: ClipRanges,
    /// Markers per clip: single frames (a footstep, a sync point), sorted and unique, inside
    /// `[0, frames)`. Queries see a marker at frame `f` as the range `[f, f + 1)`. Clips without
    /// markers have no entry.
    pub markers: BTreeMap<ClipId, Vec<u32>>,
    /// Notes per clip, each on a range or a marker of this tag on that clip (the anchor exists),
    /// sorted by anchor. Queries ignore them. Clips without notes have no entry.
    pub notes: BTreeMap<ClipId, Vec<(Anchor, Note)>>,
    /// Bumped on every change to `ranges` or `markers`, so caches can tell a stale result.
    pub version: u64,
}

impl Tag {
    /// A tag without ranges, markers or notes.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: next_version(),
            ..Self::default()
        }
    }

    /// The ranges of clip `clip` (empty when none).
    pub fn ranges_on(&self, clip: ClipId) -> &[Range] {
        self.ranges.get(&clip).unwrap_or(&[])
    }

    /// The markers of clip `clip` (empty when none).
    pub fn markers_on(&self, clip: ClipId) -> &[u32] {
        self.markers.get(&clip).map_or(&[], Vec::as_slice)
    }

    /// The notes of clip `clip` (empty when none).
    pub fn notes_on(&self, clip: ClipId) -> &[(Anchor, Note)] {
        self.notes.get(&clip).map_or(&[], Vec::as_slice)
    }

    /// The note on `anchor` of clip `clip`, if any.
    pub fn note(&self, clip: ClipId, anchor: Anchor) -> Option<&Note> {
        self.notes_on(clip)
            .iter()
            .find(|(a, _)| *a == anchor)
            .map(|(_, n)| n)
    }

    /// What queries see on `clip`: the ranges and the markers as one-frame ranges, canonical.
    pub fn frames_on(&self, clip: ClipId, out: &mut Vec<Range>) {
        out.clear();
        out.extend_from_slice(self.ranges_on(clip));
        let markers = self.markers_on(clip);
        if !markers.is_empty() {
            out.extend(markers.iter().map(|&f| Range::new(f, f.saturating_add(1))));
            super::range::canonicalize(out);
        }
    }

    /// Clips with ranges or markers, in order.
    pub fn clips_used(&self) -> impl Iterator<Item = ClipId> + '_ {
        let mut a = self.ranges.keys().copied().peekable();
        let mut b = self.markers.keys().copied().peekable();
        std::iter::from_fn(move || match (a.peek().copied(), b.peek().copied()) {
            (Some(x), Some(y)) if x == y => {
                a.next();
                b.next()
            }
            (Some(x), Some(y)) if x < y => a.next(),
            (Some(_), Some(_)) | (None, Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, None) => None,
        })
    }
}

/// What a note is attached to: a range or a marker of its tag on its clip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Anchor {
    Range(Range),
    Marker(u32),
}

impl Anchor {
    /// The frames it covers (a marker: one frame).
    pub fn range(self) -> Range {
        match self {
            Anchor::Range(r) => r,
            Anchor::Marker(f) => Range::new(f, f.saturating_add(1)),
        }
    }
}

/// A note on a range or marker: free text and a key/value payload (`surface=gravel`). Data for
/// the people and the game reading the tags; the query algebra ignores it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Note {
    pub text: String,
    pub data: BTreeMap<String, String>,
}

impl Note {
    /// True when it holds nothing (such notes are not stored).
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty() && self.data.is_empty()
    }

    /// Several notes as one (ranges merged): texts joined with `; ` (each once), payloads merged;
    /// a key the notes give different values keeps them all, joined with `; ` in order (each
    /// once), so that no value is dropped.
    pub fn combine<'a>(notes: impl IntoIterator<Item = &'a Note>) -> Note {
        let mut out = Note::default();
        for n in notes {
            // Part by part, so that a text already combined (`a; b`) adds only what is new.
            for t in n.text.split("; ").map(str::trim).filter(|t| !t.is_empty()) {
                if !out.text.split("; ").any(|x| x == t) {
                    if !out.text.is_empty() {
                        out.text.push_str("; ");
                    }
                    out.text.push_str(t);
                }
            }
            for (k, v) in &n.data {
                match out.data.get_mut(k) {
                    None => {
                        out.data.insert(k.clone(), v.clone());
                    }
                    Some(have) => {
                        for part in v.split("; ") {
                            if !have.split("; ").any(|x| x == part) {
                                have.push_str("; ");
                                have.push_str(part);
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// The payload as `key=value` pairs joined by `;` (exports, tooltips, the inspector's field),
    /// with `\\`, `;`, `=` and line breaks in keys and values escaped by a backslash
    /// (`surface=gravel\; wet`), and white space at either end of a key or value too (`\ `), so
    /// that [`Note::parse_data`], which trims what is not escaped, reads back the same pairs.
    pub fn data_text(&self) -> String {
        let mut out = String::new();
        for (i, (k, v)) in self.data.iter().enumerate() {
            if i > 0 {
                out.push(';');
            }
            escape_data(k, &mut out);
            out.push('=');
            escape_data(v, &mut out);
        }
        out
    }

    /// Parses `key=value` pairs separated by `;` or new lines (`\;`, `\=`, `\\`, `\n` and `\r`
    /// stand for those characters, and a backslash before white space for that character;
    /// another backslash is kept as it is). Keys and values are trimmed of the white space that
    /// is not escaped; keys must be non-empty and unique; the error names the pair.
    pub fn parse_data(text: &str) -> Result<BTreeMap<String, String>, String> {
        let mut data = BTreeMap::new();
        let mut i = 0;
        for pair in split_data_pairs(text) {
            let (k, v) = (pair.0.as_str(), pair.1.as_deref());
            if k.is_empty() && v.is_none() {
                continue;
            }
            i += 1;
            let shown = match v {
                Some(v) => format!("{k}={v}"),
                None => k.to_owned(),
            };
            let Some(v) = v else {
                return Err(format!("pair {i}: `{shown}` is not key=value"));
            };
            if k.is_empty() {
                return Err(format!("pair {i}: `{shown}` has no key before `=`"));
            }
            if data.insert(k.to_owned(), v.to_owned()).is_some() {
                return Err(format!("pair {i}: the key `{k}` is given twice"));
            }
        }
        Ok(data)
    }
}

/// Appends `s` with the characters that separate pairs, keys and values escaped (see
/// [`Note::data_text`]).
fn escape_data(s: &str, out: &mut String) {
    let inner = s.trim();
    let (lead, trail) = (s.len() - s.trim_start().len(), s.trim_end().len());
    for (at, c) in s.char_indices() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            '=' => out.push_str("\\="),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            // White space the reader would trim: kept by a backslash.
            c if c.is_whitespace() && (at < lead || at >= trail || inner.is_empty()) => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
}

/// The pairs of a payload text, unescaped, each key and value trimmed of the white space that was
/// not escaped: each key, and its value when an unescaped `=` is there.
fn split_data_pairs(text: &str) -> Vec<(String, Option<String>)> {
    // Characters with whether they were escaped (escaped white space is not trimmed).
    type Part = Vec<(char, bool)>;
    fn trimmed(part: &Part) -> String {
        let loose = |&(c, escaped): &(char, bool)| c.is_whitespace() && !escaped;
        let start = part.iter().position(|x| !loose(x)).unwrap_or(part.len());
        let end = part
            .iter()
            .rposition(|x| !loose(x))
            .map_or(start, |i| i + 1);
        part[start..end].iter().map(|&(c, _)| c).collect()
    }
    let mut pairs = Vec::new();
    let (mut key, mut value): (Part, Option<Part>) = (Vec::new(), None);
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        let got: (char, bool) = match c {
            ';' | '\n' => {
                pairs.push((trimmed(&key), value.take().map(|v| trimmed(&v))));
                key.clear();
                continue;
            }
            '=' if value.is_none() => {
                value = Some(Vec::new());
                continue;
            }
            '\\' => match chars.next() {
                Some('n') => ('\n', true),
                Some('r') => ('\r', true),
                Some('\\') => ('\\', true),
                Some(';') => (';', true),
                Some('=') => ('=', true),
                Some(w) if w.is_whitespace() => (w, true),
                Some(other) => {
                    let part = value.as_mut().unwrap_or(&mut key);
                    part.push(('\\', true));
                    part.push((other, true));
                    continue;
                }
                None => ('\\', true),
            },
            c => (c, false),
        };
        value.as_mut().unwrap_or(&mut key).push(got);
    }
    pairs.push((trimmed(&key), value.map(|v| trimmed(&v))));
    pairs
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
    pub autotag: Option<crate::core::settings::AutotagSettings>,
    /// Version of the clip list (count, order, names, frame counts, sources, units): a fresh
    /// [`next_version`] whenever a clip is inserted, removed, renamed, changes length or unit or
    /// is relinked to another file (every edit of a clip goes through `Edit`, which does it).
    /// Query results cover every clip (a complement, `first(..)`), so caches compare this as well
    /// as the versions of the tags a query read; the browser's rows (filtered and sorted by name,
    /// grouped by source folder) follow it too.
    pub clips_version: u64,
    /// Version of what is loaded from the clips (count, order, frame counts, sources, units):
    /// renewed with [`Self::clips_version`] by every clip edit but a rename. Find-similar's
    /// features are built from the clips' files, not their names, so they follow this one.
    pub clip_data_version: u64,
}

/// Version numbers for tags and clip lists: process-wide, strictly increasing, never 0. Every tag
/// edit and every load gives the tag a fresh number, so `(tag index, version)` identifies the tag's
/// content even across documents and after tags are removed or reordered.
pub fn next_version() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

pub use crate::core::names::unique_name;

/// A document of clips named and sized as given (30 fps, no source), for unit tests.
#[cfg(test)]
pub(crate) fn test_document(clips: &[(&str, u32)]) -> TagDocument {
    let mut d = TagDocument::default();
    for &(name, frames) in clips {
        d.add_clip(ClipInfo {
            name: name.into(),
            frames,
            fps: 30.0,
            source: None,
            unit_cm: None,
        })
        .expect("unique test clip names");
    }
    d
}

impl TagDocument {
    /// Whether `other` holds the same clips, tags (names, colours, ranges, markers and notes),
    /// queries and auto-tag settings: equality without the version numbers, which every load
    /// and edit renews (`==` tells two loads of one file apart).
    pub fn same_content(&self, other: &TagDocument) -> bool {
        self.clips == other.clips
            && self.queries == other.queries
            && self.autotag == other.autotag
            && self.tags.len() == other.tags.len()
            && self.tags.iter().zip(&other.tags).all(|(a, b)| {
                a.name == b.name
                    && a.color == b.color
                    && a.ranges == b.ranges
                    && a.markers == b.markers
                    && a.notes == b.notes
            })
    }

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

    /// A tag name not used yet: `base`, else `base2`, `base3`, ...
    pub fn unique_tag_name(&self, base: &str) -> String {
        unique_name(base, "", |n| self.tag_index(n).is_some())
    }

    /// A colour for a new tag that stands apart in hue from every tag's colour; see
    /// [`super::color::distinct_color`].
    pub fn new_tag_color(&self) -> [u8; 3] {
        self.new_tag_colors(1)[0]
    }

    /// Colours for `n` tags added together, apart from every tag's and from each other.
    pub fn new_tag_colors(&self, n: usize) -> Vec<[u8; 3]> {
        super::color::distinct_colors(
            self.tags
                .iter()
                .map(|t| super::color::shown_color(t.color, &t.name)),
            n,
        )
    }

    /// A clip name not used yet: `base`, else `base_2`, `base_3`, ...
    pub fn unique_clip_name(&self, base: &str) -> String {
        unique_name(base, "_", |n| self.clip_index(n).is_some())
    }

    /// The document with every edit version set to 0 (tags', the clip list's, the clip data's):
    /// what two loads of one file have in common, for comparing documents by content.
    pub fn unversioned(mut self) -> Self {
        self.clips_version = 0;
        self.clip_data_version = 0;
        for t in &mut self.tags {
            t.version = 0;
        }
        self
    }

    /// Gives tag `tag` a fresh version (its ranges changed).
    pub fn touch_tag(&mut self, tag: usize) {
        if let Some(t) = self.tags.get_mut(tag) {
            t.version = next_version();
        }
    }

    /// Gives the clip list and its data fresh versions (a clip was inserted, removed, changed
    /// length or unit, or was relinked).
    pub fn touch_clips(&mut self) {
        let v = next_version();
        self.clips_version = v;
        self.clip_data_version = v;
    }

    /// Gives the clip list a fresh version, not its data (a clip was renamed).
    pub fn touch_clip_names(&mut self) {
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
