//! The loader and writer of the `taglane.tags` file as they were before the streaming ones: the
//! loader parses the whole file into a JSON tree first. Kept for tests only, as the oracle the
//! streaming loader and writer must match exactly (same document, warnings, errors and bytes).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use super::super::document::{ClipInfo, SavedQuery, Tag, TagDocument};
use super::super::parse::{closest_names, parse_query};
use super::super::query::next_version;
use super::super::range::Range;
use super::{
    FORMAT_TAG, FORMAT_VERSION, LoadWarning, MAX_CLIP_FRAMES, TagsFileError, annotations, key_path,
    parse_color,
};
use crate::core::settings::rules::read_settings;

use crate::core::json::Json as J;

fn to_tree(v: &J) -> annotations::Tree {
    use annotations::Tree;
    match v {
        J::Null => Tree::Null,
        J::Bool(b) => Tree::Bool(*b),
        J::Num(n) => Tree::Num(n.clone()),
        J::Str(s) => Tree::Str(s.clone()),
        J::Arr(v) => Tree::Arr(v.iter().map(to_tree).collect()),
        J::Obj(v) => Tree::Obj(v.iter().map(|(k, x)| (k.clone(), to_tree(x))).collect()),
    }
}

struct Loader<'a> {
    file: &'a str,
    warnings: Vec<LoadWarning>,
}

type R<T> = Result<T, TagsFileError>;

impl Loader<'_> {
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

    /// The fields of an object, checked for duplicates; unknown fields are reported.
    fn object<'j>(&mut self, v: &'j J, path: &str, known: &[&str]) -> R<BTreeMap<&'j str, &'j J>> {
        let J::Obj(entries) = v else {
            return Err(self.fail(path, format!("expected an object, found {}", v.kind())));
        };
        let mut map = BTreeMap::new();
        for (k, x) in entries {
            if map.insert(k.as_str(), x).is_some() {
                return Err(self.fail(&key_path(path, k), format!("duplicate key `{k}`")));
            }
            if !known.is_empty() && !known.contains(&k.as_str()) {
                self.warn(
                    &key_path(path, k),
                    format!(
                        "unknown field `{k}` is ignored and will not be saved (known: {})",
                        known.join(", ")
                    ),
                );
            }
        }
        Ok(map)
    }

    fn required<'j>(&self, m: &BTreeMap<&str, &'j J>, path: &str, key: &str) -> R<&'j J> {
        m.get(key)
            .copied()
            .ok_or_else(|| self.fail(path, format!("missing required field `{key}`")))
    }

    fn string<'j>(&self, v: &'j J, path: &str) -> R<&'j str> {
        match v {
            J::Str(s) => Ok(s),
            other => Err(self.fail(path, format!("expected a string, found {}", other.kind()))),
        }
    }

    fn name<'j>(&self, v: &'j J, path: &str) -> R<&'j str> {
        let s = self.string(v, path)?;
        // Names of spaces only are refused as edits refuse them (an undo could not put one back).
        if s.trim().is_empty() {
            return Err(self.fail(path, "expected a non-empty name (not only spaces)"));
        }
        Ok(s)
    }

    fn uint(&self, v: &J, path: &str, max: u64, what: &str) -> R<u64> {
        let J::Num(n) = v else {
            return Err(self.fail(
                path,
                format!("expected {what} (a whole number), found {}", v.kind()),
            ));
        };
        match n.as_u64() {
            Some(x) if x <= max => Ok(x),
            Some(x) => Err(self.fail(path, format!("{what} {x} is too large; the limit is {max}"))),
            None => Err(self.fail(
                path,
                format!("expected {what} as a whole number >= 0, found {n}"),
            )),
        }
    }

    fn array<'j>(&self, v: &'j J, path: &str) -> R<&'j [J]> {
        match v {
            J::Arr(a) => Ok(a),
            other => Err(self.fail(path, format!("expected an array, found {}", other.kind()))),
        }
    }

    fn load(&mut self, root: &J) -> R<TagDocument> {
        let top = self.object(
            root,
            "",
            &[
                "format", "version", "clips", "tags", "queries", "autotag", "storage",
            ],
        )?;
        let format = self.required(&top, "", "format")?;
        match format {
            J::Str(s) if s == FORMAT_TAG => {}
            other => {
                let found = match other {
                    J::Str(s) => format!("\"{s}\""),
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
        let version = self.uint(
            self.required(&top, "", "version")?,
            "version",
            u64::MAX,
            "the version",
        )?;
        if version == 0 || version > FORMAT_VERSION {
            return Err(self.fail(
                "version",
                format!(
                    "unsupported version {version}; this build reads versions 1 to {FORMAT_VERSION}"
                ),
            ));
        }
        if top.contains_key("storage") {
            return Err(self.fail("storage", super::SIDECAR_PROJECT_MESSAGE));
        }
        let mut doc = TagDocument::default();
        // Clip ids by name: a linear `clip_index` per range entry made loading quadratic (22 s
        // for the 10,000-clip stress project, see docs/ROBUSTNESS.md).
        let mut clip_ids: HashMap<String, u32> = HashMap::new();

        let clips = self.array(self.required(&top, "", "clips")?, "clips")?;
        for (i, c) in clips.iter().enumerate() {
            let p = format!("clips[{i}]");
            let m = self.object(c, &p, &["name", "frames", "fps", "source", "unit_cm"])?;
            let name = self.name(self.required(&m, &p, "name")?, &format!("{p}.name"))?;
            if let Some(j) = clip_ids.get(name) {
                return Err(self.fail(
                    &format!("{p}.name"),
                    format!("duplicate clip name `{name}` (also clips[{j}])"),
                ));
            }
            let frames = self.uint(
                self.required(&m, &p, "frames")?,
                &format!("{p}.frames"),
                MAX_CLIP_FRAMES,
                "frames",
            )?;
            let fps_path = format!("{p}.fps");
            let fps = match self.required(&m, &p, "fps")? {
                J::Num(n) => n.as_f64().unwrap_or(f64::NAN),
                other => {
                    return Err(self.fail(
                        &fps_path,
                        format!(
                            "expected frames per second (a number), found {}",
                            other.kind()
                        ),
                    ));
                }
            };
            if !crate::core::limits::fps_ok(fps) {
                return Err(self.fail(&fps_path, crate::core::limits::fps_message(fps)));
            }
            let source = match m.get("source") {
                Some(v) => Some(self.string(v, &format!("{p}.source"))?.to_string()),
                None => None,
            };
            let unit_cm = match m.get("unit_cm") {
                Some(v) => Some(super::check_unit_cm(
                    match v {
                        J::Num(n) => Ok(n.as_f64().unwrap_or(f64::NAN)),
                        other => Err(other.kind()),
                    },
                    &format!("{p}.unit_cm"),
                    self.file,
                )?),
                None => None,
            };
            clip_ids.insert(name.to_string(), doc.clips.len() as u32);
            doc.clips.push(ClipInfo {
                name: name.to_string(),
                frames: frames as u32,
                fps: fps as f32,
                source,
                unit_cm,
            });
        }

        let tags = self.array(self.required(&top, "", "tags")?, "tags")?;
        for (i, t) in tags.iter().enumerate() {
            let p = format!("tags[{i}]");
            let m = self.object(t, &p, &["name", "color", "ranges", "markers", "notes"])?;
            let name = self.name(self.required(&m, &p, "name")?, &format!("{p}.name"))?;
            if let Some(j) = doc.tag_index(name) {
                return Err(self.fail(
                    &format!("{p}.name"),
                    format!("duplicate tag name `{name}` (also tags[{j}])"),
                ));
            }
            let color = match m.get("color") {
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
            let mut ranges = BTreeMap::new();
            if let Some(rv) = m.get("ranges") {
                let rp = format!("{p}.ranges");
                // Checks the type and duplicate clip keys; the entries are then read in file order.
                self.object(rv, &rp, &[])?;
                let J::Obj(entries) = rv else {
                    unreachable!("checked by object()")
                };
                for (clip_name, list) in entries {
                    let cp = key_path(&rp, clip_name);
                    let Some(&clip) = clip_ids.get(clip_name.as_str()) else {
                        let mut msg = format!(
                            "unknown clip `{clip_name}`; ranges must name a clip of the `clips` list"
                        );
                        let near =
                            closest_names(clip_name, doc.clips.iter().map(|c| c.name.as_str()));
                        if !near.is_empty() {
                            let _ = write!(msg, " (did you mean `{}`?)", near.join("` or `"));
                        }
                        return Err(self.fail(&cp, msg));
                    };
                    let list = self.ranges(list, &cp, &doc.clips[clip as usize])?;
                    if !list.is_empty() {
                        ranges.insert(clip, list);
                    }
                }
            }
            let mut tag = Tag {
                name: name.to_string(),
                color,
                ranges: ranges.into(),
                markers: Default::default(),
                notes: Default::default(),
                version: next_version(),
            };
            let (markers, notes) = (m.get("markers"), m.get("notes"));
            if markers.is_some() || notes.is_some() {
                let clip_id = |n: &str| clip_ids.get(n).copied();
                let cx = annotations::Context {
                    file: self.file,
                    tag_path: p.clone(),
                    clips: &doc.clips,
                    clip_id: &clip_id,
                };
                let mut warnings = Vec::new();
                if let Some(v) = markers {
                    tag.markers = annotations::read_markers(&cx, &to_tree(v), &mut warnings)?;
                }
                if let Some(v) = notes {
                    tag.notes = annotations::read_notes(&cx, &to_tree(v), &tag, &mut warnings)?;
                }
                self.warnings.extend(warnings);
            }
            doc.tags.push(tag);
        }

        if let Some(qv) = top.get("queries") {
            let queries = self.array(qv, "queries")?;
            let names: Vec<&str> = doc.tags.iter().map(|t| t.name.as_str()).collect();
            for (i, q) in queries.iter().enumerate() {
                let p = format!("queries[{i}]");
                let m = self.object(q, &p, &["name", "expr"])?;
                let name = self.name(self.required(&m, &p, "name")?, &format!("{p}.name"))?;
                if let Some(j) = doc.queries.iter().position(|q| q.name == name) {
                    return Err(self.fail(
                        &format!("{p}.name"),
                        format!("duplicate query name `{name}` (also queries[{j}])"),
                    ));
                }
                let expr = self.string(self.required(&m, &p, "expr")?, &format!("{p}.expr"))?;
                if let Err(e) = parse_query(expr, &names) {
                    self.warn(
                        &format!("{p}.expr"),
                        format!("the saved query does not run: {e} (kept as written)"),
                    );
                }
                doc.queries.push(SavedQuery {
                    name: name.to_string(),
                    expr: expr.to_string(),
                });
            }
        }
        // The optional autotag settings (added after the streaming loader replaced this one; both
        // read them with the same function, from the same tree).
        if let Some(v) = top.get("autotag") {
            doc.autotag =
                Some(read_settings(v, "autotag").map_err(|e| self.fail(&e.path, e.message))?);
        }
        Ok(doc)
    }

    /// Reads the range list of one clip, validates each range and merges overlapping or adjacent
    /// ones with a warning.
    fn ranges(&mut self, v: &J, path: &str, clip: &ClipInfo) -> R<Vec<Range>> {
        let items = self.array(v, path)?;
        let mut list: Vec<(Range, usize)> = Vec::with_capacity(items.len());
        for (k, item) in items.iter().enumerate() {
            let p = format!("{path}[{k}]");
            let pair = self.array(item, &p)?;
            if pair.len() != 2 {
                return Err(self.fail(
                    &p,
                    format!(
                        "expected a range [start, stop] with 2 numbers, found {} values",
                        pair.len()
                    ),
                ));
            }
            let start = self.uint(
                &pair[0],
                &format!("{p}[0]"),
                u64::from(u32::MAX),
                "the start frame",
            )? as u32;
            let stop = self.uint(
                &pair[1],
                &format!("{p}[1]"),
                u64::from(u32::MAX),
                "the stop frame",
            )? as u32;
            if start >= stop {
                return Err(self.fail(&p, format!("range [{start}, {stop}] is empty or reversed; expected start < stop (stop is exclusive)")));
            }
            if stop > clip.frames {
                return Err(self.fail(
                    &p,
                    format!(
                        "range [{start}, {stop}] is outside clip `{}`, which has {} frames: expected 0 <= start < stop <= {}",
                        clip.name, clip.frames, clip.frames
                    ),
                ));
            }
            list.push((Range::new(start, stop), k));
        }
        list.sort_by_key(|(r, _)| (r.start, r.stop));
        let mut out: Vec<Range> = Vec::with_capacity(list.len());
        // Indices (in the file) and values of the ranges merged into the current output range.
        let mut group: Vec<(usize, Range)> = Vec::new();
        let flush = |this: &mut Self, group: &mut Vec<(usize, Range)>, merged: Range| {
            if group.len() > 1 {
                group.sort_unstable_by_key(|(k, _)| *k);
                let which: Vec<String> = group
                    .iter()
                    .map(|(k, r)| format!("#{k} [{}, {}]", r.start, r.stop))
                    .collect();
                this.warn(
                    path,
                    format!(
                        "ranges {} overlap or are adjacent; merged into [{}, {}]",
                        which.join(" and "),
                        merged.start,
                        merged.stop
                    ),
                );
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
                        flush(self, &mut group, last);
                    }
                    out.push(r);
                    group.push((k, r));
                }
            }
        }
        if let Some(&last) = out.last() {
            flush(self, &mut group, last);
        }
        Ok(out)
    }
}

/// The tree loader of format version 1 before the streaming one.
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
    let root: J = serde_json::from_str(text).map_err(|e| super::syntax_error(file_label, &e))?;
    let mut loader = Loader {
        file: file_label,
        warnings: Vec::new(),
    };
    let doc = loader.load(&root)?;
    Ok((doc, loader.warnings))
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

fn json_f32(x: f32) -> String {
    let s = format!("{x}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// The document as `taglane.tags` JSON text (version [`FORMAT_VERSION`]): one clip, tag or query
/// per line group, each range list on one line. Fails, naming the place, on a document no loader
/// would accept back (non-finite fps, ranges on a clip id that does not exist).
pub fn tags_to_string(doc: &TagDocument, file_label: &str) -> Result<String, TagsFileError> {
    let fail = |path: String, message: String| TagsFileError::Invalid {
        file: file_label.to_string(),
        path,
        message,
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{{\n  \"format\": \"{FORMAT_TAG}\",\n  \"version\": {},\n  \"clips\": [",
        if annotations::needs_version_2(&doc.tags) {
            2
        } else {
            1
        }
    );
    for (i, c) in doc.clips.iter().enumerate() {
        // The range the reader takes, so that nothing is saved that cannot be opened again.
        if !crate::core::limits::fps_ok(f64::from(c.fps)) {
            return Err(fail(
                format!("clips[{i}].fps"),
                crate::core::limits::fps_message(f64::from(c.fps)),
            ));
        }
        let _ = write!(
            s,
            "    {{\"name\": {}, \"frames\": {}, \"fps\": {}",
            json_str(&c.name),
            c.frames,
            json_f32(c.fps)
        );
        if let Some(src) = &c.source {
            let _ = write!(s, ", \"source\": {}", json_str(src));
        }
        if let Some(u) = c.unit_cm {
            let _ = write!(s, ", \"unit_cm\": {}", json_f32(u));
        }
        s.push_str(if i + 1 < doc.clips.len() {
            "},\n"
        } else {
            "}\n"
        });
    }
    s.push_str("  ],\n  \"tags\": [");
    for (i, t) in doc.tags.iter().enumerate() {
        s.push_str(if i == 0 { "\n" } else { ",\n" });
        let _ = write!(s, "    {{\"name\": {}", json_str(&t.name));
        if let Some([r, g, b]) = t.color {
            let _ = write!(s, ", \"color\": \"#{r:02x}{g:02x}{b:02x}\"");
        }
        s.push_str(", \"ranges\": {");
        for (k, (&clip, ranges)) in t.ranges.iter().enumerate() {
            let Some(info) = doc.clips.get(clip as usize) else {
                return Err(fail(
                    format!("tags[{i}].ranges"),
                    format!("ranges on clip id {clip}, which does not exist"),
                ));
            };
            s.push_str(if k == 0 { "\n" } else { ",\n" });
            let list: Vec<String> = ranges
                .iter()
                .map(|r| format!("[{}, {}]", r.start, r.stop))
                .collect();
            let _ = write!(s, "      {}: [{}]", json_str(&info.name), list.join(", "));
        }
        s.push_str(if t.ranges.is_empty() { "}" } else { "\n    }" });
        let clip_names: Vec<String> = doc.clips.iter().map(|c| json_str(&c.name)).collect();
        annotations::write(&mut s, t, i, &clip_names, json_str)
            .map_err(|(path, message)| fail(path, message))?;
        s.push('}');
    }
    s.push_str(if doc.tags.is_empty() {
        "],\n"
    } else {
        "\n  ],\n"
    });
    s.push_str("  \"queries\": [");
    for (i, q) in doc.queries.iter().enumerate() {
        s.push_str(if i == 0 { "\n" } else { ",\n" });
        let _ = write!(
            s,
            "    {{\"name\": {}, \"expr\": {}}}",
            json_str(&q.name),
            json_str(&q.expr)
        );
    }
    s.push_str(if doc.queries.is_empty() { "]" } else { "\n  ]" });
    if let Some(settings) = &doc.autotag {
        settings
            .validate()
            .map_err(|e| fail(format!("autotag.{}", e.path), e.message))?;
        let _ = write!(s, ",\n  \"autotag\": {}", settings.to_json(2));
    }
    s.push_str("\n}\n");
    Ok(s)
}
