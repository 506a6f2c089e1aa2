//! The streaming loader and writer against the tree loader and writer they replaced
//! (`reference.rs`): same document, warnings, error messages and bytes, on the seeds, the demo, the
//! stress project and many damaged or reordered variants of them.

use super::reference;
use crate::core::tags::document::TagDocument;

/// What a load produced, without the edit versions (they differ between any two loads).
fn outcome(r: Result<(TagDocument, Vec<super::LoadWarning>), super::TagsFileError>) -> String {
    match r {
        Ok((doc, warnings)) => {
            let mut s = format!("clips {:?}\nqueries {:?}\n", doc.clips, doc.queries);
            for t in &doc.tags {
                s += &format!(
                    "tag {:?} {:?} {:?} {:?} {:?}\n",
                    t.name, t.color, t.ranges, t.markers, t.notes
                );
            }
            s += &format!("autotag {:?}\n", doc.autotag);
            for w in warnings {
                s += &format!("warning {w}\n");
            }
            s
        }
        Err(e) => format!("error {e}"),
    }
}

fn same(text: &str, what: &str) {
    let new = outcome(super::load_tags_str(text, "f.json"));
    let old = outcome(reference::load_tags_str(text, "f.json"));
    assert_eq!(new, old, "{what}\n--- input ---\n{text}");
    if let Ok((doc, _)) = super::load_tags_str(text, "f.json") {
        assert_eq!(
            super::tags_to_string(&doc, "f").unwrap(),
            reference::tags_to_string(&doc, "f").unwrap(),
            "{what}: written bytes differ"
        );
    }
}

/// A project with autotag settings (parameters and two rules).
const AUTOTAG_SEED: &str = r#"{"format": "taglane.tags", "version": 1,
  "clips": [{"name": "a", "frames": 50, "fps": 30}],
  "tags": [{"name": "walk", "ranges": {"a": [[0, 3]]}}],
  "queries": [],
  "autotag": {"version": 1,
    "params": {"contacts": {"enter_height_cm": 3.5, "left_ankle": "L_Ankle"}, "turning": {"enter_deg_s": 25}},
    "rules": [
      {"tag": "pose:HandsUp", "when": [
        {"signal": "y", "joint": "LeftHand", "relative_to": "Head", "above": 5, "leave": 0},
        {"signal": "y", "joint": "RightHand", "relative_to": "Head", "above": 5, "leave": 0}],
       "min_duration_s": 0.2},
      {"tag": "Crouch", "when": [{"signal": "height", "joint": "Hips", "below": 60, "leave": 65}]}]}}"#;

fn seeds() -> Vec<(String, String)> {
    let mut out = vec![
        (
            "demo".to_string(),
            crate::core::project::DEMO_PROJECT_JSON.to_string(),
        ),
        (
            "stress (small)".to_string(),
            super::tags_to_string(
                &crate::core::stress::stress_document(&crate::core::stress::StressSpec {
                    clips: 12,
                    tags: 9,
                    ranges: 300,
                    seed: 7,
                }),
                "s",
            )
            .unwrap(),
        ),
    ];
    out.push(("autotag".to_string(), AUTOTAG_SEED.to_string()));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/tags_json");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    for p in files {
        out.push((
            p.display().to_string(),
            std::fs::read_to_string(&p).unwrap(),
        ));
    }
    out
}

#[test]
fn seeds_load_and_write_the_same() {
    for (name, text) in seeds() {
        same(&text, &name);
    }
}

struct Rng(crate::core::rng::SplitMix64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u64) as usize
    }
}

/// Text fragments that exercise the checks: wrong kinds, bad numbers, duplicates, unknown keys.
const PIECES: &[&str] = &[
    "null",
    "true",
    "-1",
    "1e400",
    "0.5",
    "\"x\"",
    "[]",
    "{}",
    "[1,2]",
    "[[3,1]]",
    "\"#ff00zz\"",
    "\"format\": \"taglane.tags\",",
    "\"version\": 3,",
    "\"markers\": {\"c0\": [1]},",
    "\"notes\": {\"c0\": [{\"marker\": 1}]},",
    "\"extra\": 1,",
    "\"name\": \"dup\",",
    "\"clips\": [],",
    "\"tags\": [],",
    "\"queries\": [],",
    ",",
    "\"",
    "}",
    "]",
    "4294967296",
    "\"ranges\": {\"nope\": [[0, 1]]},",
    "\"fps\": 0,",
    "\"frames\": -3,",
    "\"expr\": \"a & (\",",
    "\"autotag\": {\"version\": 1},",
    "\"autotag\": {\"version\": 2},",
    "\"below\": 3,",
    "\"leave\": 99,",
    "\"signal\": \"angle\",",
];

fn mutate(text: &str, rng: &mut Rng) -> String {
    let b = text.as_bytes();
    // Cut and paste only at ASCII positions so the text stays valid UTF-8.
    let cut = |rng: &mut Rng| {
        let mut i = rng.below(b.len() + 1);
        while i < b.len() && !text.is_char_boundary(i) {
            i += 1;
        }
        i
    };
    let (mut i, mut j) = (cut(rng), cut(rng));
    if i > j {
        std::mem::swap(&mut i, &mut j);
    }
    match rng.below(5) {
        // Drop a span.
        0 => format!("{}{}", &text[..i], &text[j..]),
        // Insert a fragment.
        1 => format!(
            "{}{}{}",
            &text[..i],
            PIECES[rng.below(PIECES.len())],
            &text[i..]
        ),
        // Replace a short span with a fragment.
        2 => {
            let j = (i + rng.below(12)).min(text.len());
            let j = (j..=text.len())
                .find(|&k| text.is_char_boundary(k))
                .unwrap();
            format!(
                "{}{}{}",
                &text[..i],
                PIECES[rng.below(PIECES.len())],
                &text[j..]
            )
        }
        // Duplicate a span.
        3 => format!("{}{}{}", &text[..j], &text[i..j], &text[j..]),
        // Truncate.
        _ => text[..i].to_string(),
    }
}

#[test]
fn damaged_files_give_the_same_document_or_error() {
    let mut rng = Rng(crate::core::rng::SplitMix64(0x7A61_6C61_6E65));
    for (name, text) in seeds() {
        if text.len() > 200_000 {
            continue;
        }
        for k in 0..400 {
            let mut t = mutate(&text, &mut rng);
            if k % 3 == 0 {
                t = mutate(&t, &mut rng);
            }
            same(&t, &format!("{name}, mutation {k}"));
        }
    }
}

#[test]
fn sections_in_any_order_load_the_same() {
    let sections = [
        "\"format\": \"taglane.tags\"",
        "\"version\": 1",
        "\"clips\": [{\"name\": \"a\", \"frames\": 50, \"fps\": 30}, {\"fps\": 60, \"frames\": 9, \"name\": \"b\"}]",
        "\"tags\": [{\"ranges\": {\"b\": [[0, 3], [2, 5]], \"a\": [[1, 4]]}, \"name\": \"walk\", \"color\": \"#102030\"}, {\"name\": \"run\", \"ranges\": {}}]",
        "\"queries\": [{\"expr\": \"walk | run\", \"name\": \"q\"}, {\"name\": \"bad\", \"expr\": \"walk & nope\"}]",
    ];
    // Every order of the five sections (120).
    let mut idx = [0usize, 1, 2, 3, 4];
    let mut orders = Vec::new();
    permute(&mut idx, 0, &mut orders);
    for order in orders {
        let body: Vec<&str> = order.iter().map(|&i| sections[i]).collect();
        let text = format!("{{{}}}", body.join(", "));
        same(&text, "reordered sections");
    }
}

fn permute(a: &mut [usize; 5], k: usize, out: &mut Vec<[usize; 5]>) {
    if k == a.len() {
        out.push(*a);
        return;
    }
    for i in k..a.len() {
        a.swap(k, i);
        permute(a, k + 1, out);
        a.swap(k, i);
    }
}

#[test]
fn autotag_settings_load_and_write_the_same_wherever_they_are() {
    let sections = [
        "\"format\": \"taglane.tags\"",
        "\"version\": 1",
        "\"clips\": [{\"name\": \"a\", \"frames\": 50, \"fps\": 30}]",
        "\"tags\": [{\"name\": \"walk\", \"ranges\": {\"a\": [[1, 4]]}}]",
        "\"queries\": [{\"expr\": \"walk\", \"name\": \"q\"}]",
    ];
    let autotags = [
        r#""autotag": {"version": 1}"#,
        r#""autotag": {"version": 1, "rules": [{"tag": "Up", "when": [{"signal": "y", "joint": "Head", "above": 170}]}]}"#,
        r#""autotag": {"version": 1, "rules": [{"tag": "Up", "when": [{"signal": "y", "joint": "Head", "above": 170, "leave": 180}]}]}"#,
        r#""autotag": {"version": 3}"#,
        r#""autotag": []"#,
        r#""autotag": {"version": 1, "params": {"contacts": {"enter_height_cm": "low"}}}"#,
    ];
    for autotag in autotags {
        for at in 0..=sections.len() {
            let mut body: Vec<&str> = sections.to_vec();
            body.insert(at, autotag);
            same(&format!("{{{}}}", body.join(", ")), "autotag placed");
            // With an error in another section too: the same one wins in both loaders.
            let broken = format!("{{{}}}", body.join(", ")).replace("[[1, 4]]", "[[4, 1]]");
            same(&broken, "autotag and a bad range");
        }
    }
    // Errors name the path inside the settings.
    let text = format!("{{{}, {}}}", sections.join(", "), autotags[2]);
    let e = super::load_tags_str(&text, "f.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("autotag.rules[0].when[0].leave"), "{e}");
}
