//! Tag exchange beyond the project format: CSV (`tag,clip,start,stop,start_s,stop_s`), one JSON file
//! per clip for engines that load tags with the clip, and merging imported tags into a document as
//! one undoable [`Edit`] with a report of conflicts.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::json;

use super::edit::{Edit, canonicalize, canonicalize_markers, reanchored};
use crate::core::tags::{Anchor, Note, Range, Tag, TagDocument};
#[cfg(test)]
use crate::core::tags::{ClipInfo, SavedQuery};

/// The CSV header written by [`to_csv`]. [`parse_csv`] needs the first four columns; the others are
/// optional and found by name.
pub const CSV_HEADER: &str = "tag,clip,start,stop,start_s,stop_s,kind,note,data";

/// Writes every range and marker of every tag as one CSV row: tag, clip, start frame, stop frame
/// (exclusive; a marker at frame `f` is `f,f+1`), start and stop in seconds, `range` or `marker`,
/// the note's text and its payload as `key=value;key=value`. Rows come in tag order, then clip
/// order, then frame order.
pub fn to_csv(doc: &TagDocument) -> String {
    let rows: usize = doc.tags.iter().map(|t| t.ranges.range_count()).sum();
    // About 48 bytes a row for short names; the string grows if that is not enough.
    let mut out = String::with_capacity(CSV_HEADER.len() + 1 + rows * 48);
    write_csv(doc, &mut out);
    out
}

/// [`to_csv`] into a caller's buffer (appended): rows are formatted straight into `out`, with one
/// scratch list of the events of a (tag, clip) reused throughout, so writing allocates nothing per
/// row.
pub fn write_csv(doc: &TagDocument, out: &mut String) {
    out.push_str(CSV_HEADER);
    out.push('\n');
    let mut events: Vec<Anchor> = Vec::new();
    let mut tag_field = String::new();
    for tag in &doc.tags {
        tag_field.clear();
        push_csv_field(&mut tag_field, &tag.name);
        for clip in tag.clips_used() {
            let Some(info) = doc.clips.get(clip as usize) else {
                continue;
            };
            events.clear();
            events.extend(tag.ranges_on(clip).iter().map(|r| Anchor::Range(*r)));
            events.extend(tag.markers_on(clip).iter().map(|&f| Anchor::Marker(f)));
            events.sort_by_key(|a| (a.range().start, matches!(a, Anchor::Marker(_))));
            let fps = f64::from(info.fps);
            for &a in &events {
                let r = a.range();
                let kind = match a {
                    Anchor::Range(_) => "range",
                    Anchor::Marker(_) => "marker",
                };
                out.push_str(&tag_field);
                out.push(',');
                push_csv_field(out, &info.name);
                let _ = write!(
                    out,
                    ",{},{},{:.6},{:.6},{kind},",
                    r.start,
                    r.stop,
                    f64::from(r.start) / fps,
                    f64::from(r.stop) / fps,
                );
                match tag.note(clip, a) {
                    Some(n) => {
                        push_csv_field(out, &n.text);
                        out.push(',');
                        push_csv_field(out, &n.data_text());
                    }
                    None => out.push(','),
                }
                out.push('\n');
            }
        }
    }
}

/// Appends `s` as one CSV field: as is, or quoted (quotes doubled) when it holds a comma, a quote
/// or a line break.
fn push_csv_field(out: &mut String, s: &str) {
    if !s.contains([',', '"', '\n', '\r']) {
        out.push_str(s);
        return;
    }
    out.push('"');
    for (i, part) in s.split('"').enumerate() {
        if i > 0 {
            out.push_str("\"\"");
        }
        out.push_str(part);
    }
    out.push('"');
}

/// One CSV row read back: tag name, clip name, the frame range (a marker: one frame) and its note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvRow {
    pub tag: String,
    pub clip: String,
    pub range: Range,
    /// A marker (a one-frame event) rather than a range.
    pub marker: bool,
    /// Empty when the row has none.
    pub note: Note,
}

/// Reads and parses a CSV file (at most [`crate::core::limits::MAX_CSV_FILE_BYTES`]); errors name
/// the file.
pub fn load_csv_file(path: &std::path::Path) -> Result<Vec<CsvRow>, String> {
    let file = path.display().to_string();
    let bytes = crate::core::limits::read_limited(path, crate::core::limits::MAX_CSV_FILE_BYTES)
        .map_err(|e| format!("{file}: cannot read: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "{file}: byte {}: expected UTF-8 text",
            e.utf8_error().valid_up_to()
        )
    })?;
    parse_csv(&text, &file)
}

/// Parses CSV written by [`to_csv`] (or by hand: the seconds columns are optional and ignored; the
/// header row is required). Errors name the file, the line and what was expected.
pub fn parse_csv(text: &str, file: &str) -> Result<Vec<CsvRow>, String> {
    // A spreadsheet's "CSV UTF-8" starts with a byte order mark, which is no part of the header.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut rows = Vec::new();
    let mut lines = csv_records(text).filter(|(_, l)| !l.trim().is_empty());
    let Some((h, header)) = lines.next() else {
        return Err(format!(
            "{file}: empty file; expected the header line '{CSV_HEADER}'"
        ));
    };
    let h = h + 1;
    let mut header_fields = Vec::new();
    split_csv_line(header, &mut header_fields).map_err(|e| format!("{file} line {h}: {e}"))?;
    let names: Vec<&str> = header_fields.iter().map(|s| s.trim()).collect();
    if names.len() < 4 || names[..4] != ["tag", "clip", "start", "stop"] {
        return Err(format!(
            "{file} line {h}: expected the header '{CSV_HEADER}' (the columns after stop are optional), found '{header}'"
        ));
    }
    let column = |name: &str| names.iter().position(|n| *n == name);
    let (kind_col, note_col, data_col) = (column("kind"), column("note"), column("data"));
    // One list of fields reused for every line; fields without quotes borrow from the text.
    let mut fields: Vec<Cow<str>> = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        split_csv_line(line, &mut fields).map_err(|e| format!("{file} line {n}: {e}"))?;
        if fields.len() < 4 {
            return Err(format!(
                "{file} line {n}: expected at least 4 fields (tag,clip,start,stop), found {}",
                fields.len()
            ));
        }
        let num = |k: usize, what: &str| -> Result<u32, String> {
            fields[k].trim().parse::<u32>().map_err(|_| {
                format!(
                    "{file} line {n}: expected a whole frame number >= 0 for {what}, found '{}'",
                    fields[k]
                )
            })
        };
        let (start, stop) = (num(2, "start")?, num(3, "stop")?);
        if start >= stop {
            return Err(format!(
                "{file} line {n}: expected start < stop, found start {start} and stop {stop}"
            ));
        }
        if fields[0].trim().is_empty() {
            return Err(format!(
                "{file} line {n}: expected a tag name in the first column"
            ));
        }
        let field = |c: Option<usize>| c.and_then(|c| fields.get(c)).map_or("", |f| f.trim());
        let marker = match field(kind_col) {
            "" | "range" => false,
            "marker" => true,
            other => {
                return Err(format!(
                    "{file} line {n}: expected `range` or `marker` in the kind column, found '{other}'"
                ));
            }
        };
        if marker && stop != start + 1 {
            return Err(format!(
                "{file} line {n}: a marker is one frame: expected stop = start + 1, found start {start} and stop {stop}"
            ));
        }
        let data = Note::parse_data(field(data_col))
            .map_err(|e| format!("{file} line {n}: data column: {e}"))?;
        rows.push(CsvRow {
            tag: fields[0].to_string(),
            clip: fields[1].to_string(),
            range: Range::new(start, stop),
            marker,
            note: Note {
                text: note_col
                    .and_then(|c| fields.get(c))
                    .map_or_else(String::new, |f| f.to_string()),
                data,
            },
        });
    }
    Ok(rows)
}

/// The records of a CSV text, each with the (0-based) line it starts on: a line, or several when
/// a quoted field holds line breaks (the writer quotes a note with a line break; the record then
/// keeps the break inside the field). A quote still open at the end of the text leaves its line a
/// record of its own, whose split then reports the open quote on that line.
fn csv_records(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut lines = text.lines().enumerate();
    std::iter::from_fn(move || {
        let (i, first) = lines.next()?;
        if !first.contains('"') || !ends_in_quotes(first, false) {
            return Some((i, first));
        }
        let mut ahead = lines.clone();
        let mut taken = 0usize;
        let last = loop {
            let Some((_, line)) = ahead.next() else {
                return Some((i, first));
            };
            taken += 1;
            if !ends_in_quotes(line, true) {
                break line;
            }
        };
        lines.nth(taken - 1);
        let start = first.as_ptr() as usize - text.as_ptr() as usize;
        let end = last.as_ptr() as usize - text.as_ptr() as usize + last.len();
        Some((i, &text[start..end]))
    })
}

/// Whether a quoted field is still open at the end of `line`, read from the state `quoted` (open
/// at its start) with the rules of [`split_csv_line`].
fn ends_in_quotes(line: &str, mut quoted: bool) -> bool {
    // Whether the current field is still empty (a quote opens a field only at its start).
    let mut empty = !quoted;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    empty = false;
                } else {
                    quoted = false;
                }
            } else {
                empty = false;
            }
        } else if c == '"' && empty {
            quoted = true;
        } else {
            empty = c == ',';
        }
    }
    quoted
}

/// Splits one CSV line into `fields` (cleared first). A line without quotes is split on commas,
/// each field borrowing from the line; a line with quotes is read character by character.
fn split_csv_line<'a>(line: &'a str, fields: &mut Vec<Cow<'a, str>>) -> Result<(), String> {
    fields.clear();
    if !line.contains('"') {
        fields.extend(line.split(',').map(Cow::Borrowed));
        return Ok(());
    }
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut column = 0usize;
    while let Some(c) = chars.next() {
        column += 1;
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    cur.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                cur.push(c);
            }
        } else if c == '"' && cur.is_empty() {
            quoted = true;
        } else if c == ',' {
            fields.push(Cow::Owned(std::mem::take(&mut cur)));
        } else {
            cur.push(c);
        }
    }
    if quoted {
        return Err(format!(
            "unterminated quoted field (column {column}): expected a closing '\"'"
        ));
    }
    fields.push(Cow::Owned(cur));
    Ok(())
}

/// One JSON document per clip: `{"format": "taglane.cliptags", "version": 1, "clip", "frames", "fps",
/// "tags": {"Walk": [[0, 120], ...]}, "markers": {"contact:LeftFoot": [12, 48]}, "notes":
/// {"Walk": [{"range": [0, 120], "note": "...", "data": {...}}, {"marker": 12, ...}]}}`; tags
/// with nothing on the clip are left out, and `markers` and `notes` only appear when some tag has
/// them. Returns (clip name, JSON text) pairs in clip order.
pub fn per_clip_json(doc: &TagDocument) -> Vec<(String, String)> {
    doc.clips
        .iter()
        .enumerate()
        .map(|(c, info)| {
            let c = c as u32;
            let mut tags = serde_json::Map::new();
            let mut markers = serde_json::Map::new();
            let mut notes = serde_json::Map::new();
            for tag in &doc.tags {
                if let Some(list) = tag.ranges.get(&c) {
                    let pairs: Vec<[u32; 2]> = list.iter().map(|r| [r.start, r.stop]).collect();
                    tags.insert(tag.name.clone(), json!(pairs));
                }
                if let Some(list) = tag.markers.get(&c) {
                    markers.insert(tag.name.clone(), json!(list));
                }
                if let Some(list) = tag.notes.get(&c) {
                    let items: Vec<serde_json::Value> = list
                        .iter()
                        .map(|(a, n)| {
                            let mut o = serde_json::Map::new();
                            match a {
                                Anchor::Range(r) => {
                                    o.insert("range".into(), json!([r.start, r.stop]))
                                }
                                Anchor::Marker(f) => o.insert("marker".into(), json!(f)),
                            };
                            if !n.text.is_empty() {
                                o.insert("note".into(), json!(n.text));
                            }
                            if !n.data.is_empty() {
                                o.insert("data".into(), json!(n.data));
                            }
                            serde_json::Value::Object(o)
                        })
                        .collect();
                    notes.insert(tag.name.clone(), json!(items));
                }
            }
            let mut value = json!({
                "format": "taglane.cliptags",
                "version": 1,
                "clip": info.name,
                "frames": info.frames,
                "fps": info.fps,
                "tags": tags,
            });
            if !markers.is_empty() {
                value["markers"] = serde_json::Value::Object(markers);
            }
            if !notes.is_empty() {
                value["notes"] = serde_json::Value::Object(notes);
            }
            (
                info.name.clone(),
                serde_json::to_string_pretty(&value).unwrap_or_default() + "\n",
            )
        })
        .collect()
}

/// Writes [`per_clip_json`] into folder `dir` (created if needed) as `CLIP.tags.json` files (names
/// from [`crate::core::io::export_files`]), each atomically. Unless `replace`, nothing is written
/// when any of them exists already (an earlier export, or the sidecars of takes in that folder).
/// Returns the files written; a failure names its file.
pub fn write_per_clip_json(
    doc: &TagDocument,
    dir: &std::path::Path,
    replace: bool,
) -> Result<Vec<std::path::PathBuf>, crate::core::io::ExportFilesError> {
    let texts = per_clip_json(doc);
    let names: Vec<&str> = texts.iter().map(|(n, _)| n.as_str()).collect();
    let paths = crate::core::io::export_files(dir, &names, ".tags.json");
    let files: Vec<(std::path::PathBuf, Vec<u8>)> = paths
        .into_iter()
        .zip(texts)
        .map(|(p, (_, text))| (p, text.into_bytes()))
        .collect();
    if files.is_empty() {
        std::fs::create_dir_all(dir).map_err(|e| {
            crate::core::io::ExportFilesError::Other(format!("{}: {e}", dir.display()))
        })?;
    }
    crate::core::io::write_export_files(&files, replace)
}

/// What a merge did and what it could not do.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MergeReport {
    pub clips_added: usize,
    pub tags_added: usize,
    pub queries_added: usize,
    /// The import's auto-tag settings were taken (the document had none).
    pub autotag_added: bool,
    /// Ranges that added frames to the document.
    pub ranges_merged: usize,
    /// Markers added.
    pub markers_merged: usize,
    /// Notes added or combined with a note already there.
    pub notes_merged: usize,
    /// Plain-language conflicts: what was skipped, clamped or kept.
    pub conflicts: Vec<String>,
}

impl MergeReport {
    /// A one-line summary for a status bar.
    pub fn summary(&self) -> String {
        let mut s = format!("merged {} range(s)", self.ranges_merged);
        if self.markers_merged > 0 {
            let _ = write!(s, ", {} marker(s)", self.markers_merged);
        }
        if self.notes_merged > 0 {
            let _ = write!(s, ", {} note(s)", self.notes_merged);
        }
        let _ = write!(
            s,
            "; added {} tag(s), {} clip(s), {} quer{}",
            self.tags_added,
            self.clips_added,
            self.queries_added,
            if self.queries_added == 1 { "y" } else { "ies" }
        );
        if self.autotag_added {
            s.push_str(", the auto-tag settings");
        }
        if !self.conflicts.is_empty() {
            let _ = write!(
                s,
                "; {} conflict(s): {}",
                self.conflicts.len(),
                self.conflicts.join("; ")
            );
        }
        s
    }
}

/// Builds the edit that merges `incoming` into `doc`: new clips and tags are appended, ranges of
/// tags with the same name are united, saved queries with new names are added. Conflicts (a clip
/// with the same name but another frame count, frame rate or unit, a tag with another colour, a
/// query with the same name but another expression, other auto-tag settings) keep the open
/// document's version and are reported. The import's auto-tag
/// settings are taken when the document has none. Applying the edit is one undoable step.
pub fn merge_document(doc: &TagDocument, incoming: &TagDocument) -> (Edit, MergeReport) {
    let mut report = MergeReport::default();
    let mut edits = Vec::new();
    // Map incoming clip ids to ids in the merged document.
    let mut clip_map = Vec::with_capacity(incoming.clips.len());
    let mut next_clip = doc.clips.len();
    for info in &incoming.clips {
        match doc.clips.iter().position(|c| c.name == info.name) {
            Some(i) => {
                let ours = &doc.clips[i];
                if ours.frames != info.frames {
                    report.conflicts.push(format!(
                        "clip '{}' has {} frames here but {} in the import: ranges past frame {} were clamped",
                        info.name, ours.frames, info.frames, ours.frames
                    ));
                }
                if ours.fps != info.fps {
                    report.conflicts.push(format!(
                        "clip '{}' runs at {} fps here but {} in the import: kept {} fps",
                        info.name, ours.fps, info.fps, ours.fps
                    ));
                }
                if ours.unit_cm != info.unit_cm {
                    let unit = |u: Option<f32>| {
                        u.map_or("the file format's unit".to_owned(), |u| {
                            format!("{u} cm a unit")
                        })
                    };
                    report.conflicts.push(format!(
                        "clip '{}' has {} here but {} in the import: kept {}",
                        info.name,
                        unit(ours.unit_cm),
                        unit(info.unit_cm),
                        unit(ours.unit_cm)
                    ));
                }
                clip_map.push((i, ours.frames));
            }
            None => {
                edits.push(Edit::InsertClip {
                    index: next_clip,
                    clip: info.clone(),
                    ranges: vec![],
                });
                clip_map.push((next_clip, info.frames));
                next_clip += 1;
                report.clips_added += 1;
            }
        }
    }
    let mut rows: Vec<Row> = Vec::new();
    for tag in &incoming.tags {
        for c in tag.clips_used() {
            let Some(&(target, _)) = clip_map.get(c as usize) else {
                continue;
            };
            let note = |a: Anchor| tag.note(c, a).cloned().unwrap_or_default();
            rows.extend(tag.ranges_on(c).iter().map(|r| Row {
                tag: tag.name.clone(),
                clip: target,
                anchor: Anchor::Range(*r),
                note: note(Anchor::Range(*r)),
            }));
            rows.extend(tag.markers_on(c).iter().map(|&f| Row {
                tag: tag.name.clone(),
                clip: target,
                anchor: Anchor::Marker(f),
                note: note(Anchor::Marker(f)),
            }));
        }
    }
    let colors: BTreeMap<&str, [u8; 3]> = incoming
        .tags
        .iter()
        .filter_map(|t| Some((t.name.as_str(), t.color?)))
        .collect();
    let hex = |c: [u8; 3]| format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]);
    for t in &doc.tags {
        if let (Some(ours), Some(&theirs)) = (t.color, colors.get(t.name.as_str()))
            && ours != theirs
        {
            report.conflicts.push(format!(
                "tag '{}' is {} here but {} in the import: kept {}",
                t.name,
                hex(ours),
                hex(theirs),
                hex(ours)
            ));
        }
    }
    let frames_of = |clip: usize| -> u32 {
        clip_map
            .iter()
            .find(|(id, _)| *id == clip)
            .map(|(_, f)| *f)
            .or_else(|| doc.clips.get(clip).map(|c| c.frames))
            .unwrap_or(0)
    };
    let new_tag_names: Vec<String> = incoming.tags.iter().map(|t| t.name.clone()).collect();
    merge_rows(
        doc,
        &new_tag_names,
        &colors,
        rows,
        &frames_of,
        &mut edits,
        &mut report,
    );
    let mut queries = doc.queries.clone();
    for q in &incoming.queries {
        match queries.iter().find(|o| o.name == q.name) {
            Some(o) if o.expr != q.expr => report.conflicts.push(format!(
                "saved query '{}' differs ('{}' here, '{}' in the import): kept this one",
                q.name, o.expr, q.expr
            )),
            Some(_) => {}
            None => {
                queries.push(q.clone());
                report.queries_added += 1;
            }
        }
    }
    if report.queries_added > 0 {
        edits.push(Edit::SetQueries(queries));
    }
    match (&doc.autotag, &incoming.autotag) {
        (None, Some(theirs)) => {
            edits.push(Edit::SetAutotag(Some(Box::new(theirs.clone()))));
            report.autotag_added = true;
        }
        (Some(ours), Some(theirs)) if ours != theirs => report
            .conflicts
            .push("the auto-tag settings differ: kept this project's".to_owned()),
        _ => {}
    }
    (Edit::Batch(edits), report)
}

/// Builds the edit that merges CSV rows into `doc`. Rows on clips the document does not have are
/// skipped and reported (CSV carries no frame count to create them with).
pub fn merge_csv(doc: &TagDocument, rows: &[CsvRow]) -> (Edit, MergeReport) {
    let mut report = MergeReport::default();
    let mut edits = Vec::new();
    let mut merged = Vec::new();
    let mut unknown: BTreeMap<&str, usize> = BTreeMap::new();
    for row in rows {
        match doc.clips.iter().position(|c| c.name == row.clip) {
            Some(c) => merged.push(Row {
                tag: row.tag.clone(),
                clip: c,
                anchor: if row.marker {
                    Anchor::Marker(row.range.start)
                } else {
                    Anchor::Range(row.range)
                },
                note: row.note.clone(),
            }),
            None => *unknown.entry(row.clip.as_str()).or_default() += 1,
        }
    }
    for (clip, n) in unknown {
        report.conflicts.push(format!(
            "{n} row(s) name clip '{clip}', which is not in the project: skipped"
        ));
    }
    // The tags of the rows merged (those of skipped rows only are not created).
    let mut names: Vec<String> = Vec::new();
    for row in &merged {
        if !names.contains(&row.tag) {
            names.push(row.tag.clone());
        }
    }
    let frames_of = |clip: usize| doc.clips.get(clip).map_or(0, |c| c.frames);
    merge_rows(
        doc,
        &names,
        &BTreeMap::new(),
        merged,
        &frames_of,
        &mut edits,
        &mut report,
    );
    (Edit::Batch(edits), report)
}

/// A range or marker to merge, with its note (empty for none).
struct Row {
    tag: String,
    clip: usize,
    anchor: Anchor,
    note: Note,
}

/// What one tag gets on one clip.
#[derive(Default)]
struct Incoming {
    ranges: Vec<Range>,
    markers: Vec<u32>,
    notes: Vec<(Anchor, Note)>,
}

fn merge_rows(
    doc: &TagDocument,
    tag_order: &[String],
    colors: &BTreeMap<&str, [u8; 3]>,
    rows: Vec<Row>,
    frames_of: &dyn Fn(usize) -> u32,
    edits: &mut Vec<Edit>,
    report: &mut MergeReport,
) {
    // Group rows by tag name, then clip.
    let mut by_tag: BTreeMap<&str, BTreeMap<usize, Incoming>> = BTreeMap::new();
    for row in &rows {
        let entry = by_tag
            .entry(row.tag.as_str())
            .or_default()
            .entry(row.clip)
            .or_default();
        match row.anchor {
            Anchor::Range(r) => entry.ranges.push(r),
            Anchor::Marker(f) => entry.markers.push(f),
        }
        if !row.note.is_empty() {
            entry.notes.push((row.anchor, row.note.clone()));
        }
    }
    let mut next_tag = doc.tags.len();
    for name in tag_order {
        let Some(clips) = by_tag.remove(name.as_str()) else {
            // A tag with no ranges in the import still gets created.
            if !doc.tags.iter().any(|t| &t.name == name) {
                edits.push(Edit::InsertTag {
                    index: next_tag,
                    tag: empty_tag(name, colors.get(name.as_str()).copied()),
                });
                next_tag += 1;
                report.tags_added += 1;
            }
            continue;
        };
        let existing = doc.tags.iter().position(|t| &t.name == name);
        let index = match existing {
            Some(i) => i,
            None => {
                edits.push(Edit::InsertTag {
                    index: next_tag,
                    tag: empty_tag(name, colors.get(name.as_str()).copied()),
                });
                next_tag += 1;
                report.tags_added += 1;
                next_tag - 1
            }
        };
        // A tag's range edits first, then its marker and note edits (each clip's notes still after
        // its ranges and markers): range edits back to back are written in one merge.
        let (mut set_markers, mut set_notes) = (Vec::new(), Vec::new());
        for (clip, incoming) in clips {
            let frames = frames_of(clip);
            let c = clip as u32;
            let ours = existing.map(|i| &doc.tags[i]);
            let before: &[Range] = ours.map_or(&[], |t| t.ranges_on(c));
            let markers_before: &[u32] = ours.map_or(&[], |t| t.markers_on(c));
            let notes_before: &[(Anchor, Note)] = ours.map_or(&[], |t| t.notes_on(c));
            let clamped = incoming.ranges.iter().filter(|r| r.stop > frames).count()
                + incoming.markers.iter().filter(|&&f| f >= frames).count();
            if clamped > 0 {
                report.conflicts.push(format!(
                    "{clamped} range(s) or marker(s) of '{name}' went past the end of clip {} ({frames} frames): clamped",
                    clip_label(doc, clip)
                ));
            }
            // An incoming range adds frames unless one range already there holds it (canonical
            // ranges do not touch, so a range covered by them lies in one).
            report.ranges_merged += incoming
                .ranges
                .iter()
                .map(|r| Range::new(r.start.min(frames), r.stop.min(frames)))
                .filter(|r| r.start < r.stop)
                .filter(|r| {
                    !before
                        .iter()
                        .any(|b| b.start <= r.start && r.stop <= b.stop)
                })
                .count();
            let mut list = incoming.ranges;
            list.extend_from_slice(before);
            canonicalize(&mut list, frames);
            let mut markers = incoming.markers;
            markers.extend_from_slice(markers_before);
            canonicalize_markers(&mut markers, frames);
            report.markers_merged += markers.len() - markers_before.len().min(markers.len());
            // Existing notes follow the merged ranges; imported notes join them on the range
            // or marker they fall on.
            let mut notes = reanchored(notes_before, &list, &markers);
            let mut unplaced = 0;
            for (anchor, note) in incoming.notes {
                let target = match anchor {
                    Anchor::Range(r) => list
                        .iter()
                        .find(|x| x.start < r.stop.min(frames) && r.start < x.stop)
                        .map(|x| Anchor::Range(*x)),
                    // Clamped as its marker was; a clip of no frames has no marker to hold it.
                    Anchor::Marker(f) => Some(f.min(frames.saturating_sub(1)))
                        .filter(|m| markers.contains(m))
                        .map(Anchor::Marker),
                };
                let Some(target) = target else {
                    unplaced += 1;
                    continue;
                };
                match notes.iter_mut().find(|(a, _)| *a == target) {
                    Some((_, n)) if *n == note => {}
                    Some((_, n)) => {
                        *n = Note::combine([&*n, &note]);
                        report.notes_merged += 1;
                    }
                    None => {
                        notes.push((target, note));
                        report.notes_merged += 1;
                    }
                }
            }
            if unplaced > 0 {
                report.conflicts.push(format!(
                    "{unplaced} note(s) of '{name}' on clip {} ({frames} frames) had no range or \
                     marker left to hold them: skipped",
                    clip_label(doc, clip)
                ));
            }
            notes.sort_by_key(|(a, _)| *a);
            if list != before {
                edits.push(Edit::SetRanges {
                    tag: index,
                    clip: c,
                    ranges: list,
                });
            }
            if markers != markers_before {
                set_markers.push(Edit::SetMarkers {
                    tag: index,
                    clip: c,
                    frames: markers,
                });
            }
            if notes != notes_before {
                set_notes.push(Edit::SetNotes {
                    tag: index,
                    clip: c,
                    notes,
                });
            }
        }
        edits.extend(set_markers);
        edits.extend(set_notes);
    }
}

fn clip_label(doc: &TagDocument, clip: usize) -> String {
    doc.clips
        .get(clip)
        .map_or_else(|| format!("#{clip}"), |c| format!("'{}'", c.name))
}

fn empty_tag(name: &str, color: Option<[u8; 3]>) -> Tag {
    Tag {
        name: name.to_owned(),
        color,
        ranges: Default::default(),
        markers: Default::default(),
        notes: Default::default(),
        version: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clip_info(name: &str, frames: u32, fps: f32) -> ClipInfo {
        ClipInfo {
            name: name.to_owned(),
            frames,
            fps,
            source: None,
            unit_cm: None,
        }
    }

    fn doc() -> TagDocument {
        let mut walk = empty_tag("Walk", Some([1, 2, 3]));
        walk.ranges
            .insert(0, vec![Range::new(0, 10), Range::new(20, 30)]);
        let mut odd = empty_tag("odd, \"name\"", None);
        odd.ranges.insert(1, vec![Range::new(1, 2)]);
        TagDocument {
            clips: vec![clip_info("a", 100, 30.0), clip_info("b", 50, 120.0)],
            tags: vec![walk, odd],
            queries: vec![SavedQuery {
                name: "w".into(),
                expr: "Walk & !\"odd, \\\"name\\\"\"".into(),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn a_merge_takes_auto_tag_settings_only_when_the_project_has_none() {
        let mut theirs = doc();
        let mut settings = crate::core::settings::AutotagSettings::default();
        settings.params.contacts.enter_height_cm = 5.5;
        theirs.autotag = Some(settings.clone());
        // None here: taken, in the same undo step, and said in the summary.
        let mut ours = doc();
        let (edit, report) = merge_document(&ours, &theirs);
        assert!(report.autotag_added);
        assert!(
            report.summary().contains("auto-tag settings"),
            "{}",
            report.summary()
        );
        let undo = edit.apply(&mut ours).unwrap();
        assert_eq!(ours.autotag.as_ref(), Some(&settings));
        undo.apply(&mut ours).unwrap();
        assert_eq!(ours.autotag, None);
        // Others here: kept, and reported as a conflict.
        let mut mine = crate::core::settings::AutotagSettings::default();
        mine.params.contacts.enter_height_cm = 3.0;
        ours.autotag = Some(mine.clone());
        let (edit, report) = merge_document(&ours, &theirs);
        assert!(!report.autotag_added);
        assert!(
            report
                .conflicts
                .iter()
                .any(|c| c.contains("auto-tag settings differ")),
            "{:?}",
            report.conflicts
        );
        edit.apply(&mut ours).unwrap();
        assert_eq!(ours.autotag.as_ref(), Some(&mine));
        // The same settings: nothing to say.
        let (_, report) = merge_document(&theirs.clone(), &theirs);
        assert!(!report.autotag_added && report.conflicts.is_empty());
    }

    /// A clip of the same name at another rate or unit, and a tag of another colour: this
    /// project's kept, and each said (they were kept silently).
    #[test]
    fn a_merge_reports_other_rates_units_and_colours() {
        let ours = doc();
        let mut theirs = doc();
        theirs.clips[0].fps = 25.0;
        theirs.clips[1].unit_cm = Some(100.0);
        theirs.tags[0].color = Some([9, 9, 9]);
        let (edit, report) = merge_document(&ours, &theirs);
        let said = report.conflicts.join("\n");
        assert!(
            said.contains("clip 'a' runs at 30 fps here but 25 in the import: kept 30 fps"),
            "{said}"
        );
        assert!(
            said.contains(
                "clip 'b' has the file format's unit here but 100 cm a unit in the import"
            ),
            "{said}"
        );
        assert!(
            said.contains("tag 'Walk' is #010203 here but #090909 in the import"),
            "{said}"
        );
        assert_eq!(report.conflicts.len(), 3, "{said}");
        let mut after = ours.clone();
        edit.apply(&mut after).unwrap();
        assert_eq!(after.clips, ours.clips);
        assert_eq!(after.tags[0].color, ours.tags[0].color);
    }

    #[test]
    fn csv_round_trips_through_merge() {
        let d = doc();
        let csv = to_csv(&d);
        assert!(csv.starts_with(CSV_HEADER));
        assert!(csv.contains("Walk,a,20,30,0.666667,1.000000"));
        let rows = parse_csv(&csv, "t.csv").unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].tag, "odd, \"name\"");
        // Merging into a document with the clips but no tags recreates the tags.
        let mut empty = TagDocument {
            clips: d.clips.clone(),
            ..Default::default()
        };
        let (edit, report) = merge_csv(&empty, &rows);
        edit.apply(&mut empty).unwrap();
        assert_eq!(report.tags_added, 2);
        assert!(report.conflicts.is_empty());
        assert_eq!(empty.tags[0].ranges, d.tags[0].ranges);
        assert_eq!(empty.tags[1].ranges, d.tags[1].ranges);
    }

    /// A spreadsheet's "CSV UTF-8" (a byte order mark first) reads as the same rows; a header
    /// error after blank lines names the header's own line.
    #[test]
    fn csv_with_a_byte_order_mark_reads_and_header_errors_name_their_line() {
        let csv = to_csv(&doc());
        let with_mark = format!("\u{feff}{csv}");
        assert_eq!(
            parse_csv(&with_mark, "t.csv").unwrap(),
            parse_csv(&csv, "t.csv").unwrap()
        );
        let err = parse_csv("\n\ntag,clip,begin,end\n", "t.csv").unwrap_err();
        assert!(
            err.starts_with("t.csv line 3: expected the header"),
            "{err}"
        );
    }

    /// Note data with the characters that separate pairs, keys and values (`;`, `=`, a backslash,
    /// a line break) comes back from a CSV export as it was.
    #[test]
    fn csv_note_data_round_trips_with_separators_in_it() {
        let mut d = doc();
        let mut note = Note {
            text: "wet, \"slippery\"".into(),
            ..Default::default()
        };
        for (k, v) in [
            ("surface", "gravel; wet"),
            ("a=b", "c"),
            ("path", "C:\\takes\\walk"),
            ("lines", "one\ntwo"),
            ("padded", " gravel "),
        ] {
            note.data.insert(k.into(), v.into());
        }
        d.tags[0]
            .notes
            .insert(0, vec![(Anchor::Range(Range::new(0, 10)), note.clone())]);
        let rows = parse_csv(&to_csv(&d), "t.csv").unwrap();
        let mut empty = TagDocument {
            clips: d.clips.clone(),
            ..Default::default()
        };
        let (edit, report) = merge_csv(&empty, &rows);
        assert!(report.conflicts.is_empty(), "{:?}", report.conflicts);
        edit.apply(&mut empty).unwrap();
        assert_eq!(
            empty.tags[0].note(0, Anchor::Range(Range::new(0, 10))),
            Some(&note)
        );
        // The inspector's text of the same data reads back the same.
        assert_eq!(Note::parse_data(&note.data_text()).unwrap(), note.data);
        // Merged back into the document it came from: nothing changes (a value read back
        // trimmed was combined with the original, " gravel ; gravel").
        let (edit, report) = merge_csv(&d, &rows);
        assert!(report.conflicts.is_empty(), "{:?}", report.conflicts);
        let before = d.tags.clone();
        edit.apply(&mut d).unwrap();
        assert_eq!(d.tags[0].notes, before[0].notes);
    }

    /// The CSV writer before it streamed (one `Vec` and several `String`s a row), kept as the oracle
    /// the streaming writer must match byte for byte.
    fn to_csv_reference(doc: &TagDocument) -> String {
        fn field(s: &str) -> String {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_owned()
            }
        }
        let mut out = String::from(CSV_HEADER);
        out.push('\n');
        for tag in &doc.tags {
            for clip in tag.clips_used() {
                let Some(info) = doc.clips.get(clip as usize) else {
                    continue;
                };
                let mut events: Vec<Anchor> = tag
                    .ranges_on(clip)
                    .iter()
                    .map(|r| Anchor::Range(*r))
                    .chain(tag.markers_on(clip).iter().map(|&f| Anchor::Marker(f)))
                    .collect();
                events.sort_by_key(|a| (a.range().start, matches!(a, Anchor::Marker(_))));
                for a in events {
                    let r = a.range();
                    let kind = match a {
                        Anchor::Range(_) => "range",
                        Anchor::Marker(_) => "marker",
                    };
                    let (text, data) = tag
                        .note(clip, a)
                        .map_or((String::new(), String::new()), |n| {
                            (n.text.clone(), n.data_text())
                        });
                    let _ = writeln!(
                        out,
                        "{},{},{},{},{:.6},{:.6},{kind},{},{}",
                        field(&tag.name),
                        field(&info.name),
                        r.start,
                        r.stop,
                        f64::from(r.start) / f64::from(info.fps),
                        f64::from(r.stop) / f64::from(info.fps),
                        field(&text),
                        field(&data),
                    );
                }
            }
        }
        out
    }

    /// The line splitter before it borrowed (every field a new `String`): the oracle.
    fn split_reference(line: &str) -> Result<Vec<String>, String> {
        let mut fields = Vec::new();
        let mut cur = String::new();
        let mut chars = line.chars().peekable();
        let mut quoted = false;
        let mut column = 0usize;
        while let Some(c) = chars.next() {
            column += 1;
            if quoted {
                if c == '"' {
                    if chars.peek() == Some(&'"') {
                        cur.push('"');
                        chars.next();
                    } else {
                        quoted = false;
                    }
                } else {
                    cur.push(c);
                }
            } else if c == '"' && cur.is_empty() {
                quoted = true;
            } else if c == ',' {
                fields.push(std::mem::take(&mut cur));
            } else {
                cur.push(c);
            }
        }
        if quoted {
            return Err(format!(
                "unterminated quoted field (column {column}): expected a closing '\"'"
            ));
        }
        fields.push(cur);
        Ok(fields)
    }

    /// The streaming writer writes what the old one wrote, byte for byte: names that need quoting,
    /// notes with text and payloads (with commas, quotes and line breaks), markers between ranges,
    /// and a generated 200-clip project.
    #[test]
    fn streaming_csv_writer_matches_the_previous_writer() {
        let mut d = doc();
        d.tags[0].markers.insert(0, vec![5, 20, 99]);
        d.tags[0].markers.insert(1, vec![0]);
        let mut note = Note {
            text: "left foot, \"hard\"\nsecond line".into(),
            ..Default::default()
        };
        note.data.insert("surface".into(), "gravel, wet".into());
        note.data.insert("q\"k".into(), "v".into());
        d.tags[0].notes.insert(
            0,
            vec![
                (Anchor::Range(Range::new(0, 10)), note.clone()),
                (
                    Anchor::Marker(20),
                    Note {
                        text: "x".into(),
                        ..Default::default()
                    },
                ),
            ],
        );
        d.clips[1].name = "clip \"b\", take 2".into();
        assert_eq!(to_csv(&d), to_csv_reference(&d));
        let stress = crate::core::stress::stress_document(&crate::core::stress::StressSpec {
            clips: 200,
            tags: 20,
            ranges: 5_000,
            seed: 3,
        });
        assert_eq!(to_csv(&stress), to_csv_reference(&stress));
        let mut buf = String::from("kept\n");
        write_csv(&d, &mut buf);
        assert_eq!(buf, format!("kept\n{}", to_csv(&d)));
        // And the rows read back are the same as through the old splitter.
        let csv = to_csv(&d);
        let mut fields = Vec::new();
        for line in csv.lines() {
            // (A note with a line break spans two lines, each an unterminated field to both.)
            let new = split_csv_line(line, &mut fields)
                .map(|()| fields.iter().map(|f| f.to_string()).collect::<Vec<_>>());
            assert_eq!(new, split_reference(line), "{line}");
        }
    }

    /// A note with line breaks (`\n` or `\r\n`) is written as one quoted field over several lines
    /// and read back whole; errors after it still name their own line, and an open quote at the end
    /// of the file is reported on its line as before.
    #[test]
    fn csv_notes_with_line_breaks_round_trip() {
        let mut d = doc();
        let note = |text: &str| Note {
            text: text.into(),
            ..Default::default()
        };
        d.tags[0].notes.insert(
            0,
            vec![
                (
                    Anchor::Range(Range::new(0, 10)),
                    note("first line\nsecond, \"quoted\"\n"),
                ),
                (Anchor::Range(Range::new(20, 30)), note("a\r\nb")),
            ],
        );
        let csv = to_csv(&d);
        let rows = parse_csv(&csv, "t.csv").unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].note.text, "first line\nsecond, \"quoted\"\n");
        assert_eq!(rows[1].note.text, "a\r\nb");
        assert_eq!(rows[1].range, Range::new(20, 30));
        // The bad row is on line 8: the header, three lines of the first note (it ends with a
        // break), two of the second, the row of the other tag.
        let bad = format!("{csv}Walk,a,9,3\n");
        let e = parse_csv(&bad, "t.csv").unwrap_err();
        assert!(e.contains("t.csv line 8: expected start < stop"), "{e}");
        let e = parse_csv(
            "tag,clip,start,stop\nWalk,a,1,3\n\"Walk,a,1,3\nRun,a,1,3\n",
            "f.csv",
        )
        .unwrap_err();
        assert!(
            e.contains("f.csv line 3: unterminated quoted field (column 11)"),
            "{e}"
        );
    }

    /// The borrowing splitter agrees with the old one on awkward lines (exhaustively over short
    /// lines of `a`, `,`, `"` and a space), errors included.
    #[test]
    fn borrowing_csv_splitter_matches_the_previous_splitter() {
        let alphabet = ['a', ',', '"', ' '];
        for len in 0..=7u32 {
            for code in 0..4usize.pow(len) {
                let mut c = code;
                let line: String = (0..len)
                    .map(|_| {
                        let ch = alphabet[c % 4];
                        c /= 4;
                        ch
                    })
                    .collect();
                let mut fields = Vec::new();
                let new = split_csv_line(&line, &mut fields)
                    .map(|()| fields.iter().map(|f| f.to_string()).collect::<Vec<_>>());
                assert_eq!(new, split_reference(&line), "{line:?}");
            }
        }
    }

    #[test]
    fn csv_errors_name_file_and_line() {
        let e = parse_csv("tag,clip,start,stop\nWalk,a,x,3\n", "f.csv").unwrap_err();
        assert!(e.contains("f.csv line 2") && e.contains("start"), "{e}");
        let e = parse_csv("tag,clip,start,stop\nWalk,a,5,3\n", "f.csv").unwrap_err();
        assert!(
            e.contains("line 2") && e.contains("expected start < stop"),
            "{e}"
        );
        let e = parse_csv("name,clip\n", "f.csv").unwrap_err();
        assert!(e.contains("line 1") && e.contains("header"), "{e}");
        let e = parse_csv("tag,clip,start,stop\n\"Walk,a,1,3\n", "f.csv").unwrap_err();
        assert!(e.contains("line 2") && e.contains("closing"), "{e}");
        assert!(parse_csv("", "f.csv").is_err());
    }

    /// A marker with a note on a clip of no frames: the marker cannot exist, so its note is
    /// skipped and reported; the rest of the merge is made.
    #[test]
    fn a_marker_note_on_a_clip_of_no_frames_is_skipped_not_fatal() {
        let mut d = doc();
        d.clips.push(clip_info("empty", 0, 30.0));
        let rows = parse_csv(
            &format!("{CSV_HEADER}\nWalk,empty,3,4,,,marker,a step,\nWalk,a,40,45,,,range,,\n"),
            "f.csv",
        )
        .unwrap();
        let (edit, report) = merge_csv(&d, &rows);
        let mut m = d.clone();
        edit.apply(&mut m).unwrap();
        assert_eq!(m.tags[0].ranges[&0].last(), Some(&Range::new(40, 45)));
        assert!(m.tags[0].markers_on(2).is_empty());
        assert!(
            report
                .conflicts
                .iter()
                .any(|c| c.contains("1 note(s) of 'Walk'")
                    && c.contains("empty")
                    && c.contains("skipped")),
            "{:?}",
            report.conflicts
        );
    }

    #[test]
    fn csv_rows_on_unknown_clips_are_reported() {
        let d = doc();
        let rows = parse_csv(
            "tag,clip,start,stop\nWalk,zzz,1,3\nWalk,a,95,120\n",
            "f.csv",
        )
        .unwrap();
        let (edit, report) = merge_csv(&d, &rows);
        assert_eq!(report.conflicts.len(), 2, "{:?}", report.conflicts);
        let mut m = d.clone();
        edit.apply(&mut m).unwrap();
        assert_eq!(m.tags[0].ranges[&0].last(), Some(&Range::new(95, 100)));
        // A tag whose rows are all skipped is not created.
        let rows = parse_csv(
            "tag,clip,start,stop
Sprint,zzz,0,5
",
            "f.csv",
        )
        .unwrap();
        let (edit, report) = merge_csv(&d, &rows);
        assert_eq!(report.tags_added, 0);
        let mut m = d.clone();
        edit.apply(&mut m).unwrap();
        assert!(m.tag_index("Sprint").is_none());
    }

    /// The report counts the imported ranges that add frames, not every range of the lists they
    /// joined.
    #[test]
    fn merged_ranges_are_counted_by_what_they_add() {
        let d = doc();
        let before = d.tags[0].ranges_on(0).to_vec();
        let inside = before[0];
        let text = format!(
            "tag,clip,start,stop\n{0},a,{1},{2}\n{0},a,98,99\n",
            d.tags[0].name,
            inside.start,
            inside.start + 1
        );
        let rows = parse_csv(&text, "f.csv").unwrap();
        let (_, report) = merge_csv(&d, &rows);
        // [0, 1) lies in [0, 10); [98, 99) adds a frame.
        assert_eq!(report.ranges_merged, 1, "{before:?}");
    }

    #[test]
    fn merging_documents_adds_clips_tags_queries_and_reports_conflicts() {
        let d = doc();
        let mut other = TagDocument {
            clips: vec![clip_info("b", 60, 120.0), clip_info("c", 10, 24.0)],
            tags: vec![empty_tag("Walk", None), empty_tag("Run", Some([9, 9, 9]))],
            queries: vec![
                SavedQuery {
                    name: "w".into(),
                    expr: "Run".into(),
                },
                SavedQuery {
                    name: "r".into(),
                    expr: "Run".into(),
                },
            ],
            ..Default::default()
        };
        other.tags[0].ranges.insert(0, vec![Range::new(40, 60)]);
        other.tags[1].ranges.insert(1, vec![Range::new(0, 5)]);
        let (edit, report) = merge_document(&d, &other);
        let mut m = d.clone();
        let inverse = edit.apply(&mut m).unwrap();
        assert_eq!(report.clips_added, 1);
        assert_eq!(report.tags_added, 1);
        assert_eq!(report.queries_added, 1);
        assert_eq!(report.conflicts.len(), 3, "{:?}", report.conflicts);
        assert_eq!(m.clips[2].name, "c");
        assert_eq!(
            m.tags[0].ranges[&1],
            vec![Range::new(40, 50)],
            "clamped to our 50 frames"
        );
        assert_eq!(m.tags[2].name, "Run");
        assert_eq!(m.tags[2].color, Some([9, 9, 9]));
        assert_eq!(m.tags[2].ranges[&2], vec![Range::new(0, 5)]);
        assert_eq!(m.queries.len(), 2);
        inverse.apply(&mut m).unwrap();
        assert_eq!(m.clips, d.clips);
        assert_eq!(m.tags.len(), 2);
        assert_eq!(m.queries, d.queries);
    }

    #[test]
    fn per_clip_json_lists_only_tags_on_the_clip() {
        let files = per_clip_json(&doc());
        assert_eq!(files.len(), 2);
        let a: serde_json::Value = serde_json::from_str(&files[0].1).unwrap();
        assert_eq!(a["clip"], "a");
        assert_eq!(a["tags"]["Walk"], json!([[0, 10], [20, 30]]));
        assert!(a["tags"].get("odd, \"name\"").is_none());
    }

    #[test]
    fn per_clip_json_files_are_replaced_only_when_asked() {
        let dir = std::env::temp_dir().join(format!("taglane-per-clip-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let d = doc();
        let written = write_per_clip_json(&d, &dir, false).unwrap();
        assert_eq!(written.len(), d.clips.len());
        let first = std::fs::read(&written[0]).unwrap();
        std::fs::write(&written[0], "kept").unwrap();
        let e = write_per_clip_json(&d, &dir, false).unwrap_err();
        assert!(matches!(
            e,
            crate::core::io::ExportFilesError::Exists { count, .. } if count == d.clips.len()
        ));
        assert_eq!(std::fs::read(&written[0]).unwrap(), b"kept");
        write_per_clip_json(&d, &dir, true).unwrap();
        assert_eq!(std::fs::read(&written[0]).unwrap(), first);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn markers_and_notes_go_through_csv_per_clip_json_and_merges() {
        let mut d = doc();
        let walk = d.tag_index("Walk").unwrap();
        let mut gravel = Note {
            text: "on, \"gravel\"".into(),
            ..Note::default()
        };
        gravel.data.insert("surface".into(), "gravel".into());
        let first = d.tags[walk].ranges_on(0)[0];
        Edit::Batch(vec![
            Edit::SetMarkers {
                tag: walk,
                clip: 0,
                frames: vec![7, 3],
            },
            Edit::SetNotes {
                tag: walk,
                clip: 0,
                notes: vec![
                    (Anchor::Range(first), gravel.clone()),
                    (
                        Anchor::Marker(7),
                        Note {
                            text: "step".into(),
                            ..Note::default()
                        },
                    ),
                ],
            },
        ])
        .apply(&mut d)
        .unwrap();
        // CSV: markers are one-frame rows of kind `marker`; notes and payloads come along.
        let csv = to_csv(&d);
        assert!(csv.starts_with(CSV_HEADER));
        assert!(csv.contains(",marker,step,"), "{csv}");
        assert!(
            csv.contains(",range,\"on, \"\"gravel\"\"\",surface=gravel"),
            "{csv}"
        );
        let rows = parse_csv(&csv, "x.csv").unwrap();
        assert_eq!(rows.iter().filter(|r| r.marker).count(), 2);
        let mut fresh = doc();
        for t in &mut fresh.tags {
            t.ranges.clear();
        }
        let (edit, report) = merge_csv(&fresh, &rows);
        edit.apply(&mut fresh).unwrap();
        assert_eq!(fresh.tags[walk].markers, d.tags[walk].markers);
        assert_eq!(fresh.tags[walk].notes, d.tags[walk].notes);
        assert!(
            report.summary().contains("2 marker(s), 2 note(s)"),
            "{}",
            report.summary()
        );
        // Merging the document into one that has the tag without them.
        let mut other = doc();
        let (edit, _) = merge_document(&other, &d);
        edit.apply(&mut other).unwrap();
        assert_eq!(other.tags[walk].markers, d.tags[walk].markers);
        assert_eq!(other.tags[walk].notes, d.tags[walk].notes);
        // Merging again adds nothing.
        let (edit, _) = merge_document(&other, &d);
        assert!(edit.is_empty(), "{edit:?}");
        // Per-clip JSON lists them.
        let files = per_clip_json(&d);
        let v: serde_json::Value = serde_json::from_str(&files[0].1).unwrap();
        assert_eq!(v["markers"]["Walk"], serde_json::json!([3, 7]));
        assert_eq!(v["notes"]["Walk"][1]["note"], "step");
        assert_eq!(v["notes"]["Walk"][0]["data"]["surface"], "gravel");
        // CSV errors: a marker row must be one frame; the kind must be known.
        let bad = format!("{CSV_HEADER}\nWalk,a,3,5,0,0,marker,,\n");
        assert!(
            parse_csv(&bad, "b.csv")
                .unwrap_err()
                .contains("line 2: a marker is one frame")
        );
        let bad = format!("{CSV_HEADER}\nWalk,a,3,5,0,0,event,,\n");
        assert!(
            parse_csv(&bad, "b.csv")
                .unwrap_err()
                .contains("`range` or `marker`")
        );
        let bad = format!("{CSV_HEADER}\nWalk,a,3,5,0,0,range,,oops\n");
        assert!(
            parse_csv(&bad, "b.csv")
                .unwrap_err()
                .contains("data column")
        );
    }
}
