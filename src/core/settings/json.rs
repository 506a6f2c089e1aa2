//! Reading settings JSON (the tree is `core::json`'s): parsing with line and column in errors, and
//! a reader of objects that names the JSON path of every problem. Used to read autotag settings,
//! in a rule file or in a project.

use super::SettingsError;

pub use crate::core::json::{Json, key_path};

/// Parses JSON text; a syntax error is reported at `line L, column C`.
pub fn parse(text: &str) -> Result<Json, SettingsError> {
    // A UTF-8 byte order mark (written by some Windows editors) is skipped.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str(text).map_err(|e| {
        let (line, column, what) = crate::core::json::syntax_place(&e);
        SettingsError {
            path: format!("line {line}, column {column}"),
            message: format!("not valid JSON: {what}"),
        }
    })
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
            Some(n @ Json::Num(_)) => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                let v = x as f32;
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
