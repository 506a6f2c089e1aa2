//! The one small JSON tree of the core: object keys kept in file order with their duplicates, so a
//! reader can report a key given twice instead of silently keeping the last one, and name the JSON
//! path of every problem. Used by the settings reader, the sidecar loader and the reference tag
//! loader the tests compare with. Depends on nothing else in the core.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// Where a `serde_json` error is and what it says, as every reader reports a syntax error:
/// `(line, column, message)`, the message without serde's own " at line L column C" (the place is
/// given first), and columns counted from 1 (serde_json says column 0 at the end of a line, as in
/// an empty or cut file).
pub fn syntax_place(e: &serde_json::Error) -> (usize, usize, String) {
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let full = e.to_string();
    let what = full.strip_suffix(&suffix).unwrap_or(&full).to_owned();
    (e.line(), e.column().max(1), what)
}

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// As written: an integer stays exact, whatever its size within `u64`/`i64`.
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

    /// The number as an `f64`, if this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Num(n) => n.as_f64(),
            _ => None,
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

/// Appends `.key` to a JSON path, or `["key"]` when the key is not a plain identifier.
pub fn key_path(base: &str, key: &str) -> String {
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

/// `s` as a JSON string literal, quotes and escapes included.
pub fn string_text(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

/// `x` as a JSON number that reads back as a float: always with a decimal point or an exponent
/// (`30.0`, not `30`), the shortest text that gives `x` back.
pub fn f32_text(x: f32) -> String {
    let s = format!("{x}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_stay_in_order_with_duplicates_and_numbers_stay_exact() {
        let v: Json =
            serde_json::from_str(r#"{"b": 1, "a": [true, null], "b": 18446744073709551615}"#)
                .unwrap();
        let Json::Obj(fields) = &v else {
            panic!("{v:?}")
        };
        let keys: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["b", "a", "b"]);
        assert_eq!(fields[2].1, Json::Num(u64::MAX.into()));
        assert_eq!(fields[1].1.kind(), "an array");
        assert_eq!(fields[0].1.as_f64(), Some(1.0));
    }

    #[test]
    fn paths_quote_keys_that_are_not_identifiers() {
        assert_eq!(key_path("", "tags"), "tags");
        assert_eq!(key_path("tags[0]", "name"), "tags[0].name");
        assert_eq!(key_path("ranges", "walk 01"), "ranges[\"walk 01\"]");
        assert_eq!(key_path("ranges", "2x"), "ranges[\"2x\"]");
    }

    #[test]
    fn strings_are_escaped_and_floats_keep_a_point() {
        assert_eq!(string_text("a \"b\"\n"), r#""a \"b\"\n""#);
        assert_eq!(f32_text(30.0), "30.0");
        assert_eq!(f32_text(29.97), "29.97");
        assert_eq!(f32_text(1e-7), "0.0000001");
    }
}
