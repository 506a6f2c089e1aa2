//! The `taglane.tags` file round-trips exactly (issue 15): for random documents, including markers,
//! notes, `unit_cm`, autotag settings and names that need escaping, `load(save(doc)) == doc`
//! (ignoring edit versions) and, for the canonical bytes the writer produces,
//! `save(load(bytes)) == bytes`. Also through a file on disk (`save_tags_file`, `load_tags_file`).

use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use taglane::core::autotag::{AutotagSettings, parse_settings};
use taglane::core::tags::format::{load_tags_file, load_tags_str, save_tags_file, tags_to_string};
use taglane::core::tags::{Anchor, ClipInfo, Note, Range, SavedQuery, Tag, TagDocument};

/// Names: plain, with spaces and punctuation, escapes (quotes, backslashes, control characters)
/// and non-ASCII text; never empty or only spaces.
fn name_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9_]{0,8}",
        "[a-zA-Z:./ -]{1,12}",
        "[\"\\\\\u{0}-\u{1f}a-c]{1,6}",
        "[é漢字🎞 a]{1,5}",
        any::<String>(),
    ]
    // A name of spaces only is refused (edits could not put it back).
    .prop_filter("not only spaces", |s| !s.trim().is_empty())
}

/// Free text (notes, data values, saved query text): anything, including the empty string.
fn text_strategy() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "[a-z ,;=]{0,12}", any::<String>(),]
}

/// `n` distinct names.
fn distinct_names(n: std::ops::Range<usize>) -> impl Strategy<Value = Vec<String>> {
    proptest::collection::btree_set(name_strategy(), n).prop_map(|s| s.into_iter().collect())
}

/// A positive finite `f32` in `(0, max]`, from all over the range (raw bits) and common values.
fn positive_f32(max: f32) -> impl Strategy<Value = f32> {
    prop_oneof![
        prop::sample::select(vec![
            1.0f32, 2.54, 5.644, 24.0, 29.97, 30.0, 100.0, 119.88, 120.0
        ]),
        (1u32..0x7f80_0000).prop_map(f32::from_bits),
    ]
    .prop_map(move |x| if x <= max { x } else { max })
}

fn clip_strategy(name: String) -> impl Strategy<Value = ClipInfo> {
    (
        prop_oneof![Just(0u32), 1u32..4, 1u32..5000, Just(1 << 28)],
        // The frame rates a document may hold (`core::limits::fps_ok`: no subnormal f32).
        positive_f32(100_000.0).prop_map(|f| f.max(f32::MIN_POSITIVE)),
        proptest::option::of(text_strategy()),
        // The units a document may hold (`core::limits::unit_cm_ok`: a micrometre to a kilometre).
        proptest::option::of(
            positive_f32(taglane::core::limits::MAX_UNIT_CM)
                .prop_map(|u| u.max(taglane::core::limits::MIN_UNIT_CM)),
        ),
    )
        .prop_map(move |(frames, fps, source, unit_cm)| ClipInfo {
            name: name.clone(),
            frames,
            fps,
            source,
            unit_cm,
        })
}

/// A canonical range list inside `[0, frames)` (sorted, disjoint, non-adjacent, non-empty ranges):
/// cut points chosen in the clip, every other gap kept.
fn canonical_ranges(frames: u32, cuts: &[u32]) -> Vec<Range> {
    if frames == 0 {
        return Vec::new();
    }
    let mut points: Vec<u32> = cuts.iter().map(|c| c % (frames + 1)).collect();
    points.sort_unstable();
    points.dedup();
    let mut out: Vec<Range> = Vec::new();
    for pair in points.chunks_exact(2) {
        let r = Range::new(pair[0], pair[1]);
        // Keep a gap of at least one frame to the previous range (adjacent ranges would merge).
        if out.last().is_none_or(|last| last.stop < r.start) {
            out.push(r);
        }
    }
    out
}

/// What one tag holds on one clip, before it is checked against the clip: cut points for the
/// ranges, marker frames, and notes as (on a marker?, which one, text, data).
type CellSeed = (
    Vec<u32>,
    Vec<u32>,
    Vec<(bool, usize, String, BTreeMap<String, String>)>,
);

fn cell_strategy() -> impl Strategy<Value = CellSeed> {
    (
        proptest::collection::vec(any::<u32>(), 0..10),
        proptest::collection::vec(any::<u32>(), 0..4),
        proptest::collection::vec(
            (
                any::<bool>(),
                any::<usize>(),
                text_strategy(),
                proptest::collection::btree_map(name_strategy(), text_strategy(), 0..3),
            ),
            0..3,
        ),
    )
}

/// Builds a tag's content on `clip` from a seed: canonical ranges, sorted unique markers, and notes
/// on some of them (non-empty, one per anchor, sorted by anchor), as an edit would leave them.
fn fill_cell(tag: &mut Tag, clip: u32, frames: u32, (cuts, marks, notes): CellSeed) {
    let ranges = canonical_ranges(frames, &cuts);
    let mut markers: Vec<u32> = if frames == 0 {
        Vec::new()
    } else {
        marks.iter().map(|m| m % frames).collect()
    };
    markers.sort_unstable();
    markers.dedup();
    let mut list: Vec<(Anchor, Note)> = Vec::new();
    for (on_marker, which, text, data) in notes {
        let anchor = if on_marker && !markers.is_empty() {
            Anchor::Marker(markers[which % markers.len()])
        } else if !ranges.is_empty() {
            Anchor::Range(ranges[which % ranges.len()])
        } else {
            continue;
        };
        let data: BTreeMap<String, String> = data
            .into_iter()
            .filter(|(k, _)| !k.trim().is_empty())
            .collect();
        let note = Note { text, data };
        if note.is_empty() || list.iter().any(|(a, _)| *a == anchor) {
            continue;
        }
        list.push((anchor, note));
    }
    list.sort_by_key(|(a, _)| *a);
    if !ranges.is_empty() {
        tag.ranges.insert(clip, ranges);
    }
    if !markers.is_empty() {
        tag.markers.insert(clip, markers);
    }
    if !list.is_empty() {
        tag.notes.insert(clip, list);
    }
}

/// Autotag settings: parameters and rules with random values, kept when they pass their checks.
fn autotag_strategy() -> impl Strategy<Value = Option<AutotagSettings>> {
    let condition = (
        prop::sample::select(vec!["height", "y", "speed", "distance", "x"]),
        "[A-Za-z]{1,8}",
        any::<bool>(),
        -200.0f32..200.0,
        proptest::option::of(-200.0f32..200.0),
    )
        .prop_map(|(signal, joint, above, value, leave)| {
            let mut c = format!(r#"{{"signal": "{signal}", "joint": "{joint}""#);
            if signal == "distance" {
                c.push_str(r#", "to": "Hips""#);
            }
            c.push_str(&format!(
                r#", "{}": {value:?}"#,
                if above { "above" } else { "below" }
            ));
            if let Some(l) = leave {
                c.push_str(&format!(r#", "leave": {l:?}"#));
            }
            c.push('}');
            c
        });
    let rule = (
        "[a-z]{1,6}(:[A-Z][a-z]{0,5})?",
        proptest::collection::vec(condition, 1..3),
        0.0f32..3.0,
    )
        .prop_map(|(tag, when, min_duration)| {
            format!(
                r#"{{"tag": "{tag}", "when": [{}], "min_duration_s": {min_duration:?}}}"#,
                when.join(", ")
            )
        });
    proptest::option::of(
        (
            proptest::collection::vec(rule, 0..3),
            0.5f32..4.0,
            10.0f32..40.0,
        )
            .prop_map(|(rules, enter_height, turn)| {
                format!(
                    r#"{{"version": 1, "params": {{"contacts": {{"enter_height_cm": {enter_height:?}}}, "turning": {{"enter_deg_s": {turn:?}}}}}, "rules": [{}]}}"#,
                    rules.join(", ")
                )
            }),
    )
    .prop_map(|text| text.and_then(|t| parse_settings(&t).ok()))
}

prop_compose! {
    fn document_strategy()(
        clip_names in distinct_names(0..6),
        tag_names in distinct_names(0..5),
        query_names in distinct_names(0..3),
    )(
        cells in proptest::collection::vec(
            proptest::option::of(cell_strategy()),
            tag_names.len() * clip_names.len(),
        ),
        clips in clip_names
            .into_iter()
            .map(clip_strategy)
            .collect::<Vec<_>>(),
        colors in proptest::collection::vec(proptest::option::of(any::<[u8; 3]>()), tag_names.len()),
        exprs in proptest::collection::vec(text_strategy(), query_names.len()),
        autotag in autotag_strategy(),
        tag_names in Just(tag_names),
        query_names in Just(query_names),
    ) -> TagDocument {
        let mut cells = cells.into_iter();
        let mut tags: Vec<Tag> = Vec::new();
        for (name, color) in tag_names.into_iter().zip(colors) {
            let mut tag = Tag::new(name);
            tag.color = color;
            for (c, clip) in clips.iter().enumerate() {
                if let Some(Some(seed)) = cells.next() {
                    fill_cell(&mut tag, c as u32, clip.frames, seed);
                }
            }
            tags.push(tag);
        }
        let queries = query_names
            .into_iter()
            .zip(exprs)
            .map(|(name, expr)| SavedQuery { name, expr })
            .collect();
        TagDocument { clips, tags, queries, autotag, ..Default::default() }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn load_of_save_is_the_document_and_save_of_load_is_the_bytes(doc in document_strategy()) {
        let bytes = tags_to_string(&doc, "doc").unwrap();
        let (back, warnings) = load_tags_str(&bytes, "doc.json")
            .unwrap_or_else(|e| panic!("{e}\n--- saved ---\n{bytes}"));
        // Saved queries that do not parse warn (kept as written); nothing else may.
        prop_assert!(
            warnings.iter().all(|w| w.message.contains("the saved query does not run")),
            "{warnings:?}"
        );
        let version = if doc.tags.iter().any(|t| !t.markers.is_empty() || !t.notes.is_empty()) {
            "\"version\": 2,"
        } else {
            "\"version\": 1,"
        };
        prop_assert!(bytes.contains(version));
        prop_assert_eq!(back.clone().unversioned(), doc.unversioned());
        let again = tags_to_string(&back, "doc").unwrap();
        prop_assert_eq!(again, bytes);
    }
}

#[test]
fn the_round_trip_holds_through_a_file() {
    let dir = std::env::temp_dir().join(format!("taglane-roundtrip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.taglane.json");
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for _ in 0..20 {
        let doc = document_strategy().new_tree(&mut runner).unwrap().current();
        save_tags_file(&doc, &path, true).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes, tags_to_string(&doc, "x").unwrap().as_bytes());
        let (back, _) = load_tags_file(&path).unwrap();
        assert_eq!(back.unversioned(), doc.unversioned());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The generator makes what the round trip must cover (so the property is not vacuous): markers,
/// notes with text and data, units, sources, colours, autotag settings with rules, names that need
/// escaping, empty clips, and both format versions.
#[test]
fn the_generator_covers_every_field() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for _ in 0..200 {
        let doc = document_strategy().new_tree(&mut runner).unwrap().current();
        let mut mark = |what: &'static str, yes: bool| {
            if yes {
                *seen.entry(what).or_default() += 1;
            }
        };
        let tags = &doc.tags;
        mark("ranges", tags.iter().any(|t| !t.ranges.is_empty()));
        mark("markers", tags.iter().any(|t| !t.markers.is_empty()));
        let notes = || tags.iter().flat_map(|t| t.notes.values().flatten());
        mark(
            "note on a range",
            notes().any(|(a, _)| matches!(a, Anchor::Range(_))),
        );
        mark(
            "note on a marker",
            notes().any(|(a, _)| matches!(a, Anchor::Marker(_))),
        );
        mark("note data", notes().any(|(_, n)| !n.data.is_empty()));
        mark("unit_cm", doc.clips.iter().any(|c| c.unit_cm.is_some()));
        mark("source", doc.clips.iter().any(|c| c.source.is_some()));
        mark("empty clip", doc.clips.iter().any(|c| c.frames == 0));
        mark("colour", tags.iter().any(|t| t.color.is_some()));
        mark(
            "autotag rules",
            doc.autotag.as_ref().is_some_and(|a| !a.rules.is_empty()),
        );
        mark("queries", !doc.queries.is_empty());
        mark(
            "escaped name",
            doc.clips.iter().any(|c| c.name.contains(['"', '\\', '\n'])),
        );
        mark(
            "version 1",
            tags.iter()
                .all(|t| t.markers.is_empty() && t.notes.is_empty()),
        );
    }
    for what in [
        "ranges",
        "markers",
        "note on a range",
        "note on a marker",
        "note data",
        "unit_cm",
        "source",
        "empty clip",
        "colour",
        "autotag rules",
        "queries",
        "escaped name",
        "version 1",
    ] {
        let n = seen.get(what).copied().unwrap_or(0);
        assert!(n >= 5, "only {n} of 200 documents have {what}: {seen:?}");
    }
}
