//! Tag JSON loader: any UTF-8 text. A document that loads must save; the saved text must load back
//! to the same document (every field: clips, tags with colours, ranges, markers and notes, saved
//! queries, autotag settings; edit versions aside), and saving that again must give the same bytes
//! (the writer's output is canonical: `save(load(bytes)) == bytes`).
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
    let saved = doc.to_json_string().expect("a loaded document must save");
    let (again, _) =
        load_tags_str(&saved, "saved.taglane.json").expect("a saved document must load");
    let resaved = again
        .to_json_string()
        .expect("a reloaded document must save");
    assert_eq!(
        again.unversioned(),
        doc.unversioned(),
        "the document changed in a save/load round trip"
    );
    assert_eq!(
        resaved, saved,
        "saving a loaded canonical file changed its bytes"
    );
});
