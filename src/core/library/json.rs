//! A small JSON tree that keeps object keys in file order with their duplicates, so the sidecar
//! loaders can report a key given twice instead of silently keeping the last one, and errors can
//! name JSON paths.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::core::tags::TagsFileError;

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Num(serde_json::Number),
    Str(String),
    Arr(Vec<Json>),
    /// Keys in file order, duplicates kept.
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// What kind of value this is, for messages (`a string`, `an array`).
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Num(_) => "a number",
            Json::Str(_) => "a string",
            Json::Arr(_) => "an array",
            Json::Obj(_) => "an object",
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Bool(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Num(v.into()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Num(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
                serde_json::Number::from_f64(v)
                    .map(Json::Num)
                    .ok_or_else(|| E::custom("expected a finite number"))
            }
            fn visit_str<E>(self, v: &str) -> Result<Json, E> {
                Ok(Json::Str(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Json, E> {
                Ok(Json::Str(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(Json::Arr(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut v = Vec::new();
                while let Some(k) = a.next_key::<String>()? {
                    v.push((k, a.next_value()?));
                }
                Ok(Json::Obj(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses JSON text; a syntax error names the file, the line and the column.
pub(crate) fn parse(text: &str, file: &str) -> Result<Json, TagsFileError> {
    serde_json::from_str(text).map_err(|e| TagsFileError::Syntax {
        file: file.to_owned(),
        line: e.line(),
        column: e.column(),
        message: format!("not valid JSON: {e}")
            .replace(&format!(" at line {} column {}", e.line(), e.column()), ""),
    })
}

/// Appends `.key` or `["key"]` to a JSON path.
pub(crate) fn key_path(base: &str, key: &str) -> String {
    let simple = key
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_alphanumeric() || c == '_');
    match (base.is_empty(), simple) {
        (true, true) => key.to_owned(),
        (false, true) => format!("{base}.{key}"),
        (_, false) => format!("{base}[{}]", serde_json::to_string(key).unwrap_or_default()),
    }
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
