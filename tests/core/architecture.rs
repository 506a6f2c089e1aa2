//! The house rules that the compiler does not check: the core never names the UI toolkit, and no
//! module of `core/`, of `core/tags/` or among the UI panels imports another that imports it back
//! (a circle). Read from the source text: `use` paths and written-out paths, comments and test
//! modules left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The app's rooms: `impl TaglaneApp` split over files (state, applying commands, files, editing,
/// transport, dialogs, menu, library jobs). They are one type and may name each other; panels
/// may not name them.
const APP_ROOMS: &[&str] = &[
    "app",
    "apply",
    "dialogs",
    "editing",
    "files",
    "library",
    "menu",
    "transport",
];

/// Files compiled only in tests (they may reach anywhere to compare).
const TEST_ONLY: &[&str] = &["src/core/tags/format/equivalence.rs"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without comments, string contents and the items marked `#[cfg(test)]`.
fn code_of(text: &str) -> String {
    without_test_items(&without_comments(text))
}

/// `code` without each item that follows a `#[cfg(test)]` (a `use` up to its `;`, a module or
/// function up to its matching `}`). Comments and strings must be gone already (braces in them
/// would count).
fn without_test_items(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(i) = rest.find(MARK) {
        out.push_str(&rest[..i]);
        let item = &rest[i + MARK.len()..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (k, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_str = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_str {
            if c == '\\' {
                chars.next();
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        if c == '"' {
            in_str = true;
            continue;
        }
        if c == '/' && chars.peek() == Some(&'/') {
            for c in chars.by_ref() {
                if c == '\n' {
                    out.push('\n');
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first names after every `prefix` in `code` (`prefix::a`, `prefix::{a, b::c}` give a, b).
fn names_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = code[from..].find(prefix).map(|i| i + from) {
        // A whole path segment: `super::x` must not match inside `super::super::x`.
        let before = code[..i].chars().next_back();
        let after = &code[i + prefix.len()..];
        from = i + prefix.len();
        if before.is_some_and(|c| c == ':' || c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let after = after.trim_start();
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 0;
            let mut start = true;
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        start = false;
                        let name = ident_at(&group[k..]);
                        if !name.is_empty() {
                            out.push(name.to_owned());
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident_at(after);
            // `super::super::y` read with `super::` is a longer path, not an import of `super`.
            if !name.is_empty() && name != "super" {
                out.push(name.to_owned());
            }
        }
    }
    out
}

/// Module-level import graph of the folder `dir` (module = first path part under it), following
/// `crate::<path>::x` and the `super::` forms that lead to the folder.
fn graph(dir: &str, crate_path: &str) -> BTreeMap<String, BTreeSet<String>> {
    let base = root().join(dir);
    let mut files = Vec::new();
    rust_files(&base, &mut files);
    let mut modules = BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(&base).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        modules.insert(first.trim_end_matches(".rs").to_owned());
    }
    modules.remove("mod");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let rel_to_root = f
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if TEST_ONLY.contains(&rel_to_root.as_str()) {
            continue;
        }
        let rel = f.strip_prefix(&base).unwrap();
        let depth = rel.components().count();
        let module = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_owned();
        if module == "mod" {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(f).unwrap());
        let mut targets = names_after(&code, &format!("crate::{crate_path}::"));
        // `a.rs` or `a/mod.rs` reach siblings with `super::`; `a/b.rs` with `super::super::`.
        let is_mod_rs = rel.file_name().is_some_and(|n| n == "mod.rs");
        let up = if depth == 1 || (depth == 2 && is_mod_rs) {
            "super::".to_owned()
        } else {
            "super::".repeat(depth - usize::from(is_mod_rs))
        };
        targets.extend(names_after(&code, &up));
        let set = edges.entry(module.clone()).or_default();
        for t in targets {
            if t != module && modules.contains(&t) {
                set.insert(t);
            }
        }
    }
    edges
}

/// One circle in the graph, if there is any (depth-first search).
fn find_circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        v: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(v.to_owned(), 1);
        stack.push(v.to_owned());
        for w in edges.get(v).into_iter().flatten() {
            match state.get(w.as_str()).copied().unwrap_or(0) {
                0 => {
                    if let Some(c) = visit(w, edges, state, stack) {
                        return Some(c);
                    }
                }
                1 => {
                    let i = stack.iter().position(|s| s == w).unwrap();
                    let mut circle = stack[i..].to_vec();
                    circle.push(w.clone());
                    return Some(circle);
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(v.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for v in edges.keys() {
        if state.get(v.as_str()).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(c) = visit(v, edges, &mut state, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_reader_sees_imports() {
    let code = code_of(
        "use crate::core::{anim::Clip, tags::{Range, Tag}};\n// crate::core::ui\nuse super::x;\n\
         let s = \"crate::core::quoted\";\nuse super::super::y;\n#[cfg(test)]\nuse crate::core::z;\n\
         #[cfg(test)]\nmod tests {\n fn f() { crate::core::w::f(); }\n}\nuse crate::core::after;",
    );
    assert_eq!(
        names_after(&code, "crate::core::"),
        ["anim", "tags", "after"],
        "test items are left out, what follows them is read"
    );
    assert_eq!(names_after(&code, "super::"), ["x"]);
    assert_eq!(names_after(&code, "super::super::"), ["y"]);
    let mut circle = BTreeMap::new();
    circle.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    circle.insert("b".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert_eq!(find_circle(&circle).unwrap(), ["a", "b", "a"]);
}

#[test]
fn no_import_circles_in_core() {
    let edges = graph("src/core", "core");
    assert!(
        edges.contains_key("tags") && edges.contains_key("anim"),
        "{edges:?}"
    );
    assert!(
        edges["project"].contains("doc"),
        "the reader finds real edges: {edges:?}"
    );
    assert_eq!(
        find_circle(&edges),
        None,
        "core modules import each other in a circle"
    );
}

#[test]
fn no_import_circles_among_core_tags_files() {
    let edges = graph("src/core/tags", "core::tags");
    assert!(edges["query"].contains("range"), "{edges:?}");
    assert_eq!(
        find_circle(&edges),
        None,
        "core/tags files import each other in a circle"
    );
}

#[test]
fn ui_panels_do_not_import_the_app_or_each_other_in_circles() {
    let mut edges = graph("src/ui", "ui");
    for (module, targets) in &edges {
        if APP_ROOMS.contains(&module.as_str()) {
            continue;
        }
        let rooms: Vec<_> = targets
            .iter()
            .filter(|t| APP_ROOMS.contains(&t.as_str()))
            .collect();
        assert!(
            rooms.is_empty(),
            "panel `{module}` names the app's rooms {rooms:?}"
        );
    }
    edges.retain(|m, _| !APP_ROOMS.contains(&m.as_str()));
    assert!(edges["side_panel"].contains("pose"), "{edges:?}");
    assert_eq!(
        find_circle(&edges),
        None,
        "UI panels import each other in a circle"
    );
}

#[test]
fn the_core_never_names_the_ui_toolkit() {
    let mut files = Vec::new();
    rust_files(&root().join("src/core"), &mut files);
    for f in files {
        let code = code_of(&std::fs::read_to_string(&f).unwrap());
        for word in ["egui", "eframe", "rfd::", "crate::ui"] {
            assert!(!code.contains(word), "{} names `{word}`", f.display());
        }
    }
}
