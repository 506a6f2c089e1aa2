//! Sidecar reader (`TAKE.tags.json`): any UTF-8 text. Never panics; where the fast path takes a
//! file (a sidecar as the writer leaves it, read into flat buffers) the tree reader, which names
//! the place of every problem, must read the same clip tags from it with no warning.
#![no_main]

use libfuzzer_sys::fuzz_target;
use taglane::core::library::sidecar::{parse_cliptags, parse_cliptags_fast, parse_cliptags_tree};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let tree = parse_cliptags_tree(text, "fuzz.tags.json");
    if let Some(fast) = parse_cliptags_fast(text) {
        assert_eq!(
            tree,
            Ok((fast, Vec::new())),
            "the fast path and the tree reader disagree"
        );
    }
    assert_eq!(parse_cliptags(text, "fuzz.tags.json"), tree);
});
