//! Reading the sidecar files' JSON (the tree is `core::json`'s): parsing with file, line and
//! column in errors, duplicate and unknown keys, fields by name.

use crate::core::tags::TagsFileError;

pub(crate) use crate::core::json::{Json, key_path};

/// Parses JSON text; a syntax error names the file, the line and the column.
pub(crate) fn parse(text: &str, file: &str) -> Result<Json, TagsFileError> {
    // A UTF-8 byte order mark (written by some Windows editors) is skipped.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str(text).map_err(|e| crate::core::tags::format::syntax_error(file, &e))
}

/// Checks an object: no key twice; unknown keys (not in `known`) are returned for warnings.
pub(crate) fn check_keys<'a>(
    fields: &'a [(String, Json)],
    path: &str,
    known: &[&str],
    fail: &dyn Fn(&str, String) -> TagsFileError,
) -> Result<Vec<&'a str>, TagsFileError> {
    let mut unknown = Vec::new();
    for (i, (k, _)) in fields.iter().enumerate() {
        if fields[..i].iter().any(|(o, _)| o == k) {
            return Err(fail(&key_path(path, k), format!("duplicate key `{k}`")));
        }
        if !known.contains(&k.as_str()) {
            unknown.push(k.as_str());
        }
    }
    Ok(unknown)
}

/// The value of `key`, if present.
pub(crate) fn get<'a>(fields: &'a [(String, Json)], key: &str) -> Option<&'a Json> {
    fields.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}
