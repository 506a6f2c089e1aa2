//! The `taglane.tags` file: every validation error names the file and the JSON path; merges and
//! unknown fields are warnings; saves round-trip and are atomic.

use taglane::core::tags::Range;
use taglane::core::tags::format::{
    TagsFileError, load_tags_file, load_tags_str, save_tags_file, tags_to_string,
};

const GOOD: &str = r##"{ "format": "taglane.tags", "version": 1,
  "clips": [ {"name": "walk_01", "frames": 195, "fps": 30.0, "source": "mocap/walk_01.bvh"},
             {"name": "walk 02", "frames": 1, "fps": 120} ],
  "tags":  [ {"name": "locomotion:Walk", "color": "#4e9a06",
              "ranges": {"walk_01": [[0, 120], [150, 195]], "walk 02": [[0, 1]]}},
             {"name": "Tired"} ],
  "queries": [ {"name": "tired walkers", "expr": "locomotion:Walk & Tired"} ] }"##;

/// Replaces `from` by `to` in the good file (once, and it must be there).
fn edit(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "test bug: `{from}` not in the sample");
    GOOD.replacen(from, to, 1)
}

/// Loads `text` and returns the error's JSON path and message.
fn invalid(text: &str) -> (String, String) {
    match load_tags_str(text, "sample.json") {
        Err(TagsFileError::Invalid {
            file,
            path,
            message,
        }) => {
            assert_eq!(file, "sample.json");
            (path, message)
        }
        other => panic!("expected an Invalid error, got {other:?}"),
    }
}

#[test]
fn the_example_loads() {
    let (doc, warnings) = load_tags_str(GOOD, "sample.json").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(doc.clips.len(), 2);
    assert_eq!(doc.clips[0].source.as_deref(), Some("mocap/walk_01.bvh"));
    assert_eq!(doc.clips[1].fps, 120.0);
    assert_eq!(doc.tags[0].color, Some([0x4e, 0x9a, 0x06]));
    assert_eq!(
        doc.tags[0].ranges[&0],
        vec![Range::new(0, 120), Range::new(150, 195)]
    );
    assert_eq!(doc.tags[0].ranges[&1], vec![Range::new(0, 1)]);
    assert!(doc.tags[1].ranges.is_empty());
    assert_eq!(doc.queries[0].expr, "locomotion:Walk & Tired");
    assert!(doc.tags.iter().all(|t| t.version != 0));
}

#[test]
fn wrong_format_and_versions() {
    let (p, m) = invalid(&edit("\"taglane.tags\"", "\"other.tags\""));
    assert_eq!(p, "format");
    assert!(m.contains("expected \"taglane.tags\""), "{m}");
    let (p, m) = invalid(&edit("\"version\": 1", "\"version\": 3"));
    assert_eq!(p, "version");
    assert!(m.contains("unsupported version 3"), "{m}");
    let (p, _) = invalid(&edit("\"version\": 1", "\"version\": \"1\""));
    assert_eq!(p, "version");
    let (p, m) = invalid(&edit("\"version\": 1,", ""));
    assert_eq!(p, "(top level)");
    assert!(m.contains("missing required field `version`"));
    let (p, _) = invalid("[1, 2]");
    assert_eq!(p, "(top level)");
}

#[test]
fn duplicate_names() {
    let (p, m) = invalid(&edit("\"walk 02\", \"frames\"", "\"walk_01\", \"frames\""));
    assert_eq!(p, "clips[1].name");
    assert!(m.contains("duplicate clip name `walk_01`"), "{m}");
    let (p, m) = invalid(&edit(
        "{\"name\": \"Tired\"}",
        "{\"name\": \"locomotion:Walk\"}",
    ));
    assert_eq!(p, "tags[1].name");
    assert!(m.contains("duplicate tag name"), "{m}");
    let (p, m) = invalid(&edit(
        "\"name\": \"tired walkers\"",
        "\"name\": \"x\", \"name\": \"y\"",
    ));
    assert_eq!(p, "queries[0].name");
    assert!(m.contains("duplicate key"), "{m}");
    // A name of spaces only is refused, as edits refuse it (an undo could not put it back).
    let (p, m) = invalid(&edit("{\"name\": \"Tired\"}", "{\"name\": \"  \"}"));
    assert_eq!(p, "tags[1].name");
    assert!(m.contains("not only spaces"), "{m}");
}

#[test]
fn range_on_an_unknown_clip() {
    let (p, m) = invalid(&edit("\"walk 02\": [[0, 1]]", "\"walk_10\": [[0, 1]]"));
    assert_eq!(p, "tags[0].ranges.walk_10");
    assert!(m.contains("unknown clip `walk_10`"), "{m}");
    assert!(m.contains("did you mean `walk_01`"), "{m}");
}

#[test]
fn empty_or_reversed_ranges() {
    let (p, m) = invalid(&edit("[150, 195]", "[150, 150]"));
    assert_eq!(p, "tags[0].ranges.walk_01[1]");
    assert!(m.contains("expected start < stop"), "{m}");
    let (p, _) = invalid(&edit("[150, 195]", "[160, 150]"));
    assert_eq!(p, "tags[0].ranges.walk_01[1]");
}

#[test]
fn ranges_outside_the_clip() {
    let (p, m) = invalid(&edit("[150, 195]", "[150, 196]"));
    assert_eq!(p, "tags[0].ranges.walk_01[1]");
    assert!(m.contains("195 frames"), "{m}");
    let (p, m) = invalid(&edit("[[0, 1]]", "[[0, 2]]"));
    assert_eq!(p, "tags[0].ranges[\"walk 02\"][0]");
    assert!(m.contains("outside clip `walk 02`"), "{m}");
    let (p, _) = invalid(&edit("[150, 195]", "[-1, 195]"));
    assert_eq!(p, "tags[0].ranges.walk_01[1][0]");
    let (p, _) = invalid(&edit("[150, 195]", "[150.5, 195]"));
    assert_eq!(p, "tags[0].ranges.walk_01[1][0]");
    let (p, m) = invalid(&edit("[150, 195]", "[150, 160, 170]"));
    assert_eq!(p, "tags[0].ranges.walk_01[1]");
    assert!(m.contains("found 3 values"), "{m}");
}

#[test]
fn bad_fields() {
    let (p, m) = invalid(&edit("\"frames\": 195, ", ""));
    assert_eq!(p, "clips[0]");
    assert!(m.contains("missing required field `frames`"));
    let (p, m) = invalid(&edit("\"frames\": 195", "\"frames\": 99999999999"));
    assert_eq!(p, "clips[0].frames");
    assert!(m.contains("too large"), "{m}");
    let (p, _) = invalid(&edit("\"fps\": 30.0", "\"fps\": 0"));
    assert_eq!(p, "clips[0].fps");
    // A rate that rounds to 0 as f32 is refused when read, naming the value written.
    let (p, m) = invalid(&edit("\"fps\": 30.0", "\"fps\": 1e-300"));
    assert_eq!(p, "clips[0].fps");
    assert!(
        m.contains("round to 0 as a 32-bit float), found 1e-300"),
        "{m}"
    );
    let (p, _) = invalid(&edit("\"#4e9a06\"", "\"green\""));
    assert_eq!(p, "tags[0].color");
    // Signs are not hex digits (`u8::from_str_radix` takes them).
    let (p, _) = invalid(&edit("\"#4e9a06\"", "\"#+f+f+f\""));
    assert_eq!(p, "tags[0].color");
    let (p, _) = invalid(&edit("\"name\": \"Tired\"", "\"name\": \"\""));
    assert_eq!(p, "tags[1].name");
    let (p, _) = invalid(&edit("\"source\": \"mocap/walk_01.bvh\"", "\"source\": 3"));
    assert_eq!(p, "clips[0].source");
}

#[test]
fn overlapping_and_adjacent_ranges_merge_with_a_warning() {
    let text = edit(
        "[[0, 120], [150, 195]]",
        "[[150, 195], [0, 100], [100, 120], [110, 115]]",
    );
    let (doc, warnings) = load_tags_str(&text, "sample.json").unwrap();
    assert_eq!(
        doc.tags[0].ranges[&0],
        vec![Range::new(0, 120), Range::new(150, 195)]
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].path, "tags[0].ranges.walk_01");
    assert!(
        warnings[0]
            .message
            .contains("#1 [0, 100] and #2 [100, 120] and #3 [110, 115]"),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].message.contains("merged into [0, 120]"));
}

#[test]
fn unknown_fields_and_broken_saved_queries_warn() {
    let text = edit(
        "\"color\": \"#4e9a06\",",
        "\"color\": \"#4e9a06\", \"comment\": \"hi\",",
    );
    let text = text.replacen("locomotion:Walk & Tired\"", "locomotion:Walk & Tird\"", 1);
    let (doc, warnings) = load_tags_str(&text, "sample.json").unwrap();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert_eq!(warnings[0].path, "tags[0].comment");
    assert_eq!(warnings[1].path, "queries[0].expr");
    assert!(
        warnings[1].message.contains("did you mean `Tired`"),
        "{}",
        warnings[1]
    );
    assert_eq!(doc.queries[0].expr, "locomotion:Walk & Tird");
}

#[test]
fn syntax_errors_give_line_and_column() {
    let text = "{\n  \"format\": \"taglane.tags\",\n  \"version\": 1,,\n}";
    match load_tags_str(text, "broken.json") {
        Err(e @ TagsFileError::Syntax { line: 3, .. }) => {
            assert!(e.to_string().starts_with("broken.json: line 3"))
        }
        other => panic!("{other:?}"),
    }
    // An empty or cut file: columns count from 1 (serde_json says 0 at the end of a line).
    for text in ["", "{\n  \"format\": "] {
        match load_tags_str(text, "cut.json") {
            Err(TagsFileError::Syntax { column, .. }) => assert!(column >= 1, "{text:?}"),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn save_round_trips_atomically() {
    let dir = std::env::temp_dir().join(format!("taglane-format-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tags.json");
    let (mut doc, _) = load_tags_str(GOOD, "sample.json").unwrap();
    doc.add_range(1, 0, Range::new(10, 20)).unwrap();
    doc.rename_tag(1, "very \"tired\"").unwrap();
    save_tags_file(&doc, &path, false).unwrap();
    let (back, warnings) = load_tags_file(&path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(back.clone().unversioned(), doc.clone().unversioned());
    assert_eq!(
        back.queries[0].expr,
        "locomotion:Walk & \"very \\\"tired\\\"\""
    );
    assert!(back.parse_query(&back.queries[0].expr).is_ok());
    // Saving twice gives the same bytes, and no temporary file is left behind.
    save_tags_file(&back, &path, true).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        tags_to_string(&doc, "x").unwrap()
    );
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    assert!(names.contains(&"tags.json.bak".to_string()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unreadable_files_name_the_file() {
    let err = load_tags_file(std::path::Path::new("/nonexistent/tags.json")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("/nonexistent/tags.json: cannot read"),
        "{err}"
    );
}

const WITH_EVENTS: &str = r##"{ "format": "taglane.tags", "version": 2,
  "clips": [ {"name": "walk_01", "frames": 195, "fps": 30.0} ],
  "tags":  [ {"name": "contact:LeftFoot", "ranges": {"walk_01": [[0, 40], [60, 90]]},
              "markers": {"walk_01": [48, 12, 12]},
              "notes": {"walk_01": [{"range": [60, 90], "note": "on gravel", "data": {"surface": "gravel", "side": "left"}},
                                    {"marker": 48, "note": "heel strike"},
                                    {"range": [10, 20], "note": "inside"}]}} ],
  "queries": [] }"##;

#[test]
fn markers_and_notes_load_validate_and_round_trip() {
    use taglane::core::tags::{Anchor, Note};
    let (doc, warnings) = load_tags_str(WITH_EVENTS, "sample.json").unwrap();
    let t = &doc.tags[0];
    assert_eq!(t.markers[&0], vec![12, 48]);
    assert_eq!(
        t.note(0, Anchor::Marker(48)).map(|n| n.text.as_str()),
        Some("heel strike")
    );
    let gravel = t.note(0, Anchor::Range(Range::new(60, 90))).unwrap();
    assert_eq!(gravel.data["surface"], "gravel");
    // A note on a range inside one of the tag's ranges moves to that range, with a warning.
    assert_eq!(
        t.note(0, Anchor::Range(Range::new(0, 40))),
        Some(&Note {
            text: "inside".into(),
            data: Default::default()
        })
    );
    let paths: Vec<&str> = warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        paths,
        ["tags[0].markers.walk_01", "tags[0].notes.walk_01[2].range"]
    );
    // Written as version 2, read back the same, written again byte for byte.
    let text = tags_to_string(&doc, "x").unwrap();
    assert!(text.contains("\"version\": 2"), "{text}");
    let (again, w) = load_tags_str(&text, "x").unwrap();
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(again.tags[0].markers, t.markers);
    assert_eq!(again.tags[0].notes, t.notes);
    assert_eq!(tags_to_string(&again, "x").unwrap(), text);
    // The same file claiming version 1 (which has no markers or notes) is read whole, with a
    // warning at `version`; a save writes version 2.
    let v1 = WITH_EVENTS.replacen("\"version\": 2", "\"version\": 1", 1);
    let (as_v1, w1) = load_tags_str(&v1, "old.json").unwrap();
    assert_eq!(as_v1.tags[0].markers, t.markers);
    assert_eq!(as_v1.tags[0].notes, t.notes);
    let versions: Vec<&taglane::core::tags::LoadWarning> =
        w1.iter().filter(|w| w.path == "version").collect();
    assert_eq!(versions.len(), 1, "{w1:?}");
    assert!(
        versions[0]
            .message
            .contains("version 1 has no markers or notes")
    );
    assert_eq!(w1.len(), warnings.len() + 1);
    assert!(
        tags_to_string(&as_v1, "x")
            .unwrap()
            .contains("\"version\": 2")
    );
    // A document without markers or notes is still written as version 1.
    let (plain, _) = load_tags_str(GOOD, "g").unwrap();
    assert!(
        tags_to_string(&plain, "g")
            .unwrap()
            .contains("\"version\": 1")
    );
}

#[test]
fn bad_markers_and_notes_name_their_json_path() {
    let bad = |from: &str, to: &str| {
        assert!(WITH_EVENTS.contains(from), "test bug: `{from}`");
        let text = WITH_EVENTS.replacen(from, to, 1);
        match load_tags_str(&text, "sample.json") {
            Err(TagsFileError::Invalid { path, message, .. }) => (path, message),
            other => panic!("expected an error for {to}, got {other:?}"),
        }
    };
    let (p, m) = bad("[48, 12, 12]", "[48, 500]");
    assert_eq!(p, "tags[0].markers.walk_01[1]");
    assert!(m.contains("outside the clip"), "{m}");
    let (p, m) = bad("[48, 12, 12]", "[48, -1]");
    assert_eq!(p, "tags[0].markers.walk_01[1]");
    assert!(m.contains("whole frame number"), "{m}");
    let (p, m) = bad("\"markers\": {\"walk_01\"", "\"markers\": {\"walk_1\"");
    assert_eq!(p, "tags[0].markers.walk_1");
    assert!(m.contains("did you mean `walk_01`"), "{m}");
    let (p, m) = bad("{\"marker\": 48,", "{\"marker\": 47,");
    assert_eq!(p, "tags[0].notes.walk_01[1].marker");
    assert!(m.contains("no marker at frame 47"), "{m}");
    let (p, m) = bad("{\"range\": [60, 90],", "{\"range\": [95, 99],");
    assert_eq!(p, "tags[0].notes.walk_01[0].range");
    assert!(m.contains("no range [95, 99]"), "{m}");
    let (p, m) = bad("\"side\": \"left\"", "\"side\": 3");
    assert_eq!(p, "tags[0].notes.walk_01[0].data.side");
    assert!(m.contains("expected a string value"), "{m}");
    let (p, m) = bad("{\"marker\": 48,", "{\"marker\": 48, \"range\": [0, 40],");
    assert_eq!(p, "tags[0].notes.walk_01[1]");
    assert!(m.contains("not both"), "{m}");
    let (p, _) = bad("\"note\": \"heel strike\"", "\"note\": 5");
    assert_eq!(p, "tags[0].notes.walk_01[1].note");
}

/// The sample as this build writes it, before the `autotag` field existed: a file without autotag
/// settings must still be written byte for byte like this.
const GOOD_WRITTEN: &str = r##"{
  "format": "taglane.tags",
  "version": 1,
  "clips": [
    {"name": "walk_01", "frames": 195, "fps": 30.0, "source": "mocap/walk_01.bvh"},
    {"name": "walk 02", "frames": 1, "fps": 120.0}
  ],
  "tags": [
    {"name": "locomotion:Walk", "color": "#4e9a06", "ranges": {
      "walk_01": [[0, 120], [150, 195]],
      "walk 02": [[0, 1]]
    }},
    {"name": "Tired", "ranges": {}}
  ],
  "queries": [
    {"name": "tired walkers", "expr": "locomotion:Walk & Tired"}
  ]
}
"##;

#[test]
fn autotag_settings_are_saved_in_the_project_and_files_without_them_are_unchanged() {
    // No settings: the bytes of the format before the field, and the field stays absent.
    let (doc, _) = load_tags_str(GOOD, "sample.json").unwrap();
    assert_eq!(doc.autotag, None);
    assert_eq!(tags_to_string(&doc, "s").unwrap(), GOOD_WRITTEN);
    // Settings with a rule and a parameter round-trip.
    let with = GOOD.trim_end().trim_end_matches('}').to_owned()
        + r#", "autotag": {"version": 1,
              "params": {"contacts": {"enter_height_cm": 3.5}},
              "rules": [{"tag": "pose:HandsUp", "when": [
                {"signal": "y", "joint": "LeftHand", "relative_to": "Head", "above": 5, "leave": 0},
                {"signal": "y", "joint": "RightHand", "relative_to": "Head", "above": 5, "leave": 0}],
                "min_duration_s": 0.2}]}}"#;
    let (doc, warnings) = load_tags_str(&with, "sample.json").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let settings = doc.autotag.as_ref().unwrap();
    assert_eq!(settings.params.contacts.enter_height_cm, 3.5);
    assert_eq!(settings.rules[0].tag, "pose:HandsUp");
    let text = tags_to_string(&doc, "s").unwrap();
    assert!(
        text.starts_with(GOOD_WRITTEN.trim_end().trim_end_matches("\n}")),
        "{text}"
    );
    let (again, _) = load_tags_str(&text, "s").unwrap();
    assert_eq!(again.autotag, doc.autotag);
    assert_eq!(tags_to_string(&again, "s").unwrap(), text);
    // Errors inside the settings name their path from the top of the file.
    let bad = with.replace("\"leave\": 0}", "\"leave\": 9}");
    let (p, m) = invalid(&bad);
    assert_eq!(p, "autotag.rules[0].when[0].leave");
    assert!(m.contains("<= `above` (5)"), "{m}");
    let (p, m) = invalid(&with.replace(
        "\"autotag\": {\"version\": 1,",
        "\"autotag\": {\"version\": 7,",
    ));
    assert_eq!(p, "autotag.version");
    assert!(m.contains("unsupported autotag settings version 7"), "{m}");
    let (p, _) = invalid(&with.replace("enter_height_cm", "enter_hieght_cm"));
    assert_eq!(p, "autotag.params.contacts.enter_hieght_cm");
    // A document holding invalid settings is not written.
    let mut broken = doc.clone();
    broken.autotag.as_mut().unwrap().params.turning.window_s = -1.0;
    match tags_to_string(&broken, "s") {
        Err(TagsFileError::Invalid { path, .. }) => {
            assert_eq!(path, "autotag.params.turning.window_s")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_sidecar_mode_project_is_named_as_such_by_the_single_file_loader() {
    let text = r#"{"format": "taglane.tags", "version": 2, "storage": "sidecar", "folders": ["takes"], "tags": []}"#;
    let (path, message) = invalid(text);
    assert_eq!(path, "storage");
    assert!(message.contains("sidecar-mode project"), "{message}");
    // Another value is a mistake in the file, named as such (not taken for a sidecar project).
    for (value, found) in [
        ("\"sidecars\"", "\"sidecars\""),
        ("3", "a number"),
        ("{}", "an object"),
    ] {
        let (path, message) = invalid(&text.replace("\"sidecar\"", value));
        assert_eq!(path, "storage");
        assert!(
            message.contains("unknown storage") && message.contains(found),
            "{value}: {message}"
        );
    }
}

/// A UTF-8 byte order mark before the JSON (some Windows editors write one) is skipped, as a
/// BVH's is.
#[test]
fn a_byte_order_mark_is_skipped() {
    let plain = load_tags_str(GOOD, "sample.json").unwrap().0;
    let with_bom = format!("\u{feff}{GOOD}");
    let (doc, _) = load_tags_str(&with_bom, "sample.json").unwrap();
    let shape = |d: &taglane::core::tags::TagDocument| {
        d.tags
            .iter()
            .map(|t| (t.name.clone(), t.ranges.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(shape(&doc), shape(&plain));
    assert_eq!(doc.clips.len(), 2);
}

/// The writer refuses a unit the reader refuses (it only asked for a positive number: 1e-5 cm per
/// unit was saved, and the file then did not open).
#[test]
fn a_unit_the_reader_refuses_is_not_written() {
    let (mut doc, _) = load_tags_str(GOOD, "sample.json").unwrap();
    doc.clips[0].unit_cm = Some(1e-5);
    match tags_to_string(&doc, "out.json") {
        Err(TagsFileError::Invalid { path, message, .. }) => {
            assert_eq!(path, "clips[0].unit_cm");
            assert!(message.contains("a micrometre"), "{message}");
        }
        other => panic!("expected an Invalid error, got {other:?}"),
    }
    doc.clips[0].unit_cm = Some(1e-4);
    let text = tags_to_string(&doc, "out.json").unwrap();
    assert!(load_tags_str(&text, "out.json").is_ok());
}
