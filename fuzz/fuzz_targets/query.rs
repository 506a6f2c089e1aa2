//! Query parser and evaluator. The input is the query text (UTF-8). It is parsed against a small
//! fixed document; a query that parses is evaluated with every engine, and the engines must agree.
#![no_main]

use std::collections::BTreeMap;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use taglane::core::tags::query::evaluate;
use taglane::core::tags::{ClipInfo, Engine, Range, Tag, TagDocument, parse_query};

fn doc() -> &'static TagDocument {
    static DOC: OnceLock<TagDocument> = OnceLock::new();
    DOC.get_or_init(|| {
        let clip = |name: &str, frames: u32| ClipInfo {
            name: name.to_string(),
            frames,
            fps: 30.0,
            source: None,
            unit_cm: None,
        };
        let tag = |name: &str, ranges: &[(u32, &[(u32, u32)])]| Tag {
            name: name.to_string(),
            color: None,
            ranges: ranges
                .iter()
                .map(|(c, rs)| (*c, rs.iter().map(|&(a, b)| Range::new(a, b)).collect()))
                .collect::<BTreeMap<_, Vec<Range>>>()
                .into(),
            markers: Default::default(),
            notes: Default::default(),
            version: 0,
        };
        TagDocument {
            clips: vec![clip("a", 100), clip("b", 300), clip("c", 1), clip("d", 64)],
            tags: vec![
                tag("walk", &[(0, &[(0, 10), (20, 40), (90, 100)]), (1, &[(5, 200)])]),
                tag("run", &[(0, &[(5, 25)]), (1, &[(150, 300)]), (3, &[(0, 64)])]),
                tag("idle", &[(2, &[(0, 1)]), (3, &[(1, 2), (3, 4), (62, 63)])]),
                tag("loco:turn left", &[(1, &[(0, 1), (299, 300)])]),
                tag("empty", &[]),
            ],
            queries: vec![],
            ..Default::default()
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let doc = doc();
    let names: Vec<&str> = doc.tags.iter().map(|t| t.name.as_str()).collect();
    let Ok(query) = parse_query(text, &names) else {
        return;
    };
    let (ranges, _) = evaluate(doc, &query, Engine::Ranges).expect("a parsed query evaluates");
    for engine in [Engine::Masks, Engine::Auto] {
        let (other, _) = evaluate(doc, &query, engine).expect("a parsed query evaluates");
        assert_eq!(other, ranges, "engine {} disagrees with ranges on {text:?}", engine.name());
    }
});
