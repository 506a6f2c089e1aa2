//! A small JSON tree that keeps object keys in file order (duplicates included), and a reader of
//! objects that names the JSON path of every problem. Used to read autotag settings, in a rule file
//! or in a project.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::SettingsError;

/// A JSON value; objects keep their keys in file order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
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

    /// Parses JSON text; a syntax error is reported at `line L column C`.
    pub fn parse(text: &str) -> Result<Json, SettingsError> {
        serde_json::from_str(text).map_err(|e| SettingsError {
            path: format!("line {} column {}", e.line(), e.column()),
            message: format!("invalid JSON: {e}")
                .replace(&format!(" at line {} column {}", e.line(), e.column()), ""),
        })
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
                Ok(Json::Num(v as f64))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Num(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
                Ok(Json::Num(v))
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
                while let Some((k, x)) = a.next_entry::<String, Json>()? {
                    v.push((k, x));
                }
                Ok(Json::Obj(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// `base.key`, or `base["key"]` when the key is not a plain identifier.
pub fn key_path(base: &str, key: &str) -> String {
    let simple = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match (base.is_empty(), simple) {
        (true, true) => key.to_owned(),
        (false, true) => format!("{base}.{key}"),
        (_, false) => format!("{base}[{}]", serde_json::to_string(key).unwrap_or_default()),
    }
}

pub fn err(path: impl Into<String>, message: impl Into<String>) -> SettingsError {
    let path = path.into();
    SettingsError {
        path: if path.is_empty() {
            "(top level)".to_owned()
        } else {
            path
        },
        message: message.into(),
    }
}

/// The fields of one JSON object, read by name; [`Fields::finish`] rejects the keys nobody read.
pub struct Fields<'a> {
    pub path: String,
    entries: &'a [(String, Json)],
    used: Vec<bool>,
}

impl<'a> Fields<'a> {
    /// `v` must be an object without duplicate keys.
    pub fn new(v: &'a Json, path: &str) -> Result<Self, SettingsError> {
        let Json::Obj(entries) = v else {
            return Err(err(path, format!("expected an object, found {}", v.kind())));
        };
        let mut seen = std::collections::HashSet::with_capacity(entries.len());
        if let Some((k, _)) = entries.iter().find(|(k, _)| !seen.insert(k.as_str())) {
            return Err(err(key_path(path, k), format!("duplicate key `{k}`")));
        }
        Ok(Self {
            path: path.to_owned(),
            entries,
            used: vec![false; entries.len()],
        })
    }

    pub fn at(&self, key: &str) -> String {
        key_path(&self.path, key)
    }

    /// The value of `key` (marked as read).
    pub fn get(&mut self, key: &str) -> Option<&'a Json> {
        let i = self.entries.iter().position(|(k, _)| k == key)?;
        self.used[i] = true;
        Some(&self.entries[i].1)
    }

    /// A number that fits an `f32` (finite), or `default` when absent.
    pub fn f32_or(&mut self, key: &str, default: f32) -> Result<f32, SettingsError> {
        Ok(self.opt_f32(key)?.unwrap_or(default))
    }

    pub fn opt_f32(&mut self, key: &str) -> Result<Option<f32>, SettingsError> {
        match self.get(key) {
            None => Ok(None),
            Some(Json::Num(x)) => {
                let v = *x as f32;
                if v.is_finite() {
                    Ok(Some(v))
                } else {
                    Err(err(
                        self.at(key),
                        format!("expected a finite number, found {x}"),
                    ))
                }
            }
            Some(other) => Err(err(
                self.at(key),
                format!("expected a number, found {}", other.kind()),
            )),
        }
    }

    pub fn opt_string(&mut self, key: &str) -> Result<Option<String>, SettingsError> {
        match self.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Str(s)) if s.is_empty() => {
                Err(err(self.at(key), "expected a non-empty name"))
            }
            Some(Json::Str(s)) => Ok(Some(s.clone())),
            Some(other) => Err(err(
                self.at(key),
                format!("expected a string, found {}", other.kind()),
            )),
        }
    }

    pub fn string(&mut self, key: &str) -> Result<String, SettingsError> {
        self.opt_string(key)?
            .ok_or_else(|| err(self.path.clone(), format!("missing required field `{key}`")))
    }

    /// Fails on the first key that was not read: an unknown field (most likely a typo).
    pub fn finish(self, known: &[&str]) -> Result<(), SettingsError> {
        match self.used.iter().position(|u| !u) {
            None => Ok(()),
            Some(i) => {
                let k = &self.entries[i].0;
                let near = crate::core::names::closest_names(k, known.iter().copied());
                let hint = if near.is_empty() {
                    String::new()
                } else {
                    format!(" (did you mean `{}`?)", near.join("` or `"))
                };
                Err(err(
                    self.at(k),
                    format!(
                        "unknown field `{k}`{hint}; expected one of: {}",
                        known.join(", ")
                    ),
                ))
            }
        }
    }
}
