//! Tag JSON loader: any UTF-8 text. A document that loads must save, and the saved text must load
//! back to the same document (ranges, clips, tags and saved queries).
#![no_main]

use libfuzzer_sys::fuzz_target;
use taglane::core::tags::load_tags_str;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok((doc, _warnings)) = load_tags_str(text, "fuzz.taglane.json") else {
        return;
    };
    let saved = doc
        .to_json_string()
        .expect("a loaded document must save");
    let (again, _) = load_tags_str(&saved, "saved.taglane.json").expect("a saved document must load");
    assert_eq!(again.clips, doc.clips, "clips changed in a save/load round trip");
    assert_eq!(again.queries, doc.queries, "saved queries changed in a save/load round trip");
    assert_eq!(again.tags.len(), doc.tags.len());
    for (a, b) in again.tags.iter().zip(&doc.tags) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.color, b.color);
        assert_eq!(a.ranges, b.ranges, "ranges of tag {} changed", a.name);
    }
});
