//! `taglane query` and `taglane tags`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use crate::core::library::load_any;
use crate::core::tags::TagDocument;
use crate::core::tags::query::{Engine, evaluate};
use crate::core::tags::range::total_frames;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    Ranges,
    Masks,
    Auto,
}

impl From<EngineArg> for Engine {
    fn from(e: EngineArg) -> Engine {
        match e {
            EngineArg::Ranges => Engine::Ranges,
            EngineArg::Masks => Engine::Masks,
            EngineArg::Auto => Engine::Auto,
        }
    }
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    /// Tag data file (taglane.tags JSON).
    pub file: PathBuf,
    /// Query expression, e.g. "Running & Male - Tired".
    pub expr: String,
    /// Evaluation engine.
    #[arg(long, value_enum, default_value = "auto")]
    pub engine: EngineArg,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TagsArgs {
    /// Tag data file (taglane.tags JSON).
    pub file: PathBuf,
}

/// Loads the file, printing warnings to stderr; `Err` carries the exit code.
fn load(file: &std::path::Path) -> Result<TagDocument, ExitCode> {
    match load_any(file) {
        Ok((doc, warnings)) => match super::report_load_warnings(file, &warnings) {
            Ok(()) => Ok(doc),
            Err(e) => Err(super::fail_input(e)),
        },
        Err(e) => Err(super::fail_input(e)),
    }
}

pub fn query(args: QueryArgs) -> ExitCode {
    let doc = match load(&args.file) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let q = match super::parse_query_or_fail(&doc, &args.expr) {
        Ok(q) => q,
        Err(code) => return code,
    };
    let engine = Engine::from(args.engine);
    let (result, auto) = match evaluate(&doc, &q, engine) {
        Ok(r) => r,
        Err(e) => return super::fail_usage(e),
    };
    let total_ranges = result.range_count();
    let total = result.total_frames();
    if args.json {
        let mut s = String::new();
        let _ = write!(
            s,
            "{{\"expr\": {}, \"engine\": \"{}\", \"clips\": {{",
            serde_json::to_string(&args.expr).unwrap_or_default(),
            engine.name()
        );
        for (k, (clip, ranges)) in result.iter().enumerate() {
            let list: Vec<String> = ranges
                .iter()
                .map(|r| format!("[{}, {}]", r.start, r.stop))
                .collect();
            let name = serde_json::to_string(&doc.clips[clip as usize].name).unwrap_or_default();
            let _ = write!(
                s,
                "{}{name}: [{}]",
                if k == 0 { "" } else { ", " },
                list.join(", ")
            );
        }
        let _ = writeln!(s, "}}, \"frames\": {total}, \"ranges\": {total_ranges}}}");
        super::emit(&s);
        return ExitCode::SUCCESS;
    }
    let rows: Vec<[String; 4]> = result
        .iter()
        .map(|(clip, ranges)| {
            let c = &doc.clips[clip as usize];
            let frames = total_frames(ranges);
            [
                c.name.clone(),
                ranges.len().to_string(),
                frames.to_string(),
                format!("{:.2}", frames as f64 / f64::from(c.fps)),
            ]
        })
        .collect();
    let seconds: f64 = result
        .iter()
        .map(|(clip, ranges)| total_frames(ranges) as f64 / f64::from(doc.clips[clip as usize].fps))
        // From +0 (the standard sum of no terms is -0, printed `-0.00`).
        .fold(0.0, |a, b| a + b);
    let total_row = [
        "total".to_string(),
        total_ranges.to_string(),
        total.to_string(),
        format!("{seconds:.2}"),
    ];
    let mut out = table(
        &["clip", "ranges", "frames", "seconds"],
        &rows,
        Some(&total_row),
    );
    if rows.is_empty() {
        let _ = writeln!(out, "no frame matches `{}`", args.expr);
    }
    let _ = match auto {
        Some(report) => writeln!(out, "engine: auto ({})", report.reason()),
        None => writeln!(out, "engine: {}", engine.name()),
    };
    super::emit(&out);
    ExitCode::SUCCESS
}

pub fn tags(args: TagsArgs) -> ExitCode {
    let doc = match load(&args.file) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let rows: Vec<[String; 5]> = doc
        .tags
        .iter()
        .map(|t| {
            // What queries see: markers count as one-frame ranges.
            let (mut clips, mut ranges, mut frames) = (0usize, 0usize, 0u64);
            let mut on_clip = Vec::new();
            for clip in t.clips_used() {
                t.frames_on(clip, &mut on_clip);
                clips += 1;
                ranges += on_clip.len();
                frames += total_frames(&on_clip);
            }
            let color = t.color.map_or_else(
                || "-".to_string(),
                |[r, g, b]| format!("#{r:02x}{g:02x}{b:02x}"),
            );
            [
                t.name.clone(),
                color,
                clips.to_string(),
                ranges.to_string(),
                frames.to_string(),
            ]
        })
        .collect();
    let mut out = table(&["tag", "color", "clips", "ranges", "frames"], &rows, None);
    let _ = writeln!(
        out,
        "{} tags, {} clips, {} saved queries",
        doc.tags.len(),
        doc.clips.len(),
        doc.queries.len()
    );
    super::emit(&out);
    ExitCode::SUCCESS
}

/// A plain text table: first column left-aligned, the others right-aligned, in terminal columns
/// (a wide character takes two). A column is at most [`super::MAX_COLUMN_WIDTH`] columns wide: a longer cell is printed whole, unpadded, so the
/// table stays about the size of its cells.
fn table<const N: usize>(
    head: &[&str; N],
    rows: &[[String; N]],
    total: Option<&[String; N]>,
) -> String {
    use crate::core::text::width as columns;
    // A cell is one line whatever it holds (a tab or newline in a name).
    let rows: Vec<[String; N]> = rows
        .iter()
        .map(|r| {
            r.clone()
                .map(|c| crate::core::text::one_line(&c).into_owned())
        })
        .collect();
    let total = total.map(|t| {
        t.clone()
            .map(|c| crate::core::text::one_line(&c).into_owned())
    });
    let (rows, total) = (&rows[..], total.as_ref());
    let mut width = head.map(columns);
    for row in rows.iter().chain(total) {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(columns(cell).min(super::MAX_COLUMN_WIDTH));
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(width).enumerate() {
            let pad = w.saturating_sub(columns(cell));
            if i == 0 {
                let _ = write!(s, "{cell}{}", " ".repeat(pad));
            } else {
                let _ = write!(s, "  {}{cell}", " ".repeat(pad));
            }
        }
        s.push('\n');
        s
    };
    let mut s = line(&head.map(str::to_string));
    s.push_str(&line(&width.map(|w| "-".repeat(w))));
    for row in rows {
        s.push_str(&line(row));
    }
    if let Some(t) = total {
        s.push_str(&line(t));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_cell_does_not_pad_every_row() {
        let long = "x".repeat(100_000);
        let mut rows: Vec<[String; 2]> = (0..1_000)
            .map(|i| [format!("clip{i}"), i.to_string()])
            .collect();
        rows.push([long.clone(), "7".to_string()]);
        let text = table(&["clip", "frames"], &rows, None);
        // Padded to the long cell, the table would be 100 MB.
        assert!(text.len() < long.len() + 100_000, "{} bytes", text.len());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2 + rows.len());
        // Short cells are padded to the capped width; the long one is printed whole.
        let w = crate::cli::MAX_COLUMN_WIDTH;
        assert_eq!(lines[0], format!("{:<w$}  frames", "clip"));
        assert_eq!(lines[2], format!("{:<w$}       0", "clip0"));
        assert_eq!(lines[2 + 1_000], format!("{long}       7"));
    }

    #[test]
    fn wide_characters_line_up() {
        let rows = [
            ["歩く".to_string(), "12".to_string()],
            ["walk".to_string(), "3".to_string()],
        ];
        let text = table(&["tag", "ranges"], &rows, None);
        let lines: Vec<&str> = text.lines().collect();
        // "歩く" is four columns, as "walk" is: the numbers end in the same column.
        assert_eq!(lines[2], "歩く      12");
        assert_eq!(lines[3], "walk       3");
        // A tab or newline in a name is written as an escape: the row stays one line.
        let rows = [["walk\tleft\nfast".to_string(), "1".to_string()]];
        let text = table(&["tag", "ranges"], &rows, None);
        assert_eq!(text.lines().nth(2), Some("walk\\tleft\\nfast       1"));
    }
}
