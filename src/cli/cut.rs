//! `taglane cut FILE EXPR --out DIR [--pattern P]`: every range matched by a query written as its
//! own BVH clip (see `core::cut`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::core::cut::{
    CutError, CutOutput, DEFAULT_PATTERN, cut_clips, load_source_clip, plan_cut,
};
use crate::core::library::load_any;
use crate::core::tags::query::{Engine, evaluate};

#[derive(Debug, Args)]
pub struct CutArgs {
    /// Tag data file (taglane.tags JSON); clip `source` paths are relative to its folder.
    pub file: PathBuf,
    /// Query expression, e.g. "Running & Male - Tired".
    pub expr: String,
    /// Output folder (created if needed).
    #[arg(long)]
    pub out: PathBuf,
    /// File name pattern; placeholders {clip}, {query}, {start}, {stop} and the range's
    /// number in its clip from 1 (written n between braces).
    #[arg(long, default_value = DEFAULT_PATTERN)]
    pub pattern: String,
    /// Replace files of the cut that already exist in the output folder (a clip's source take is
    /// never replaced). Without it, a cut that would replace a file writes nothing.
    #[arg(long)]
    pub overwrite: bool,
}

pub fn cut(args: CutArgs) -> ExitCode {
    let doc = match load_any(&args.file) {
        Ok((doc, warnings)) => match super::report_load_warnings(&args.file, &warnings) {
            Ok(()) => doc,
            Err(e) => return super::fail_input(e),
        },
        Err(e) => return super::fail_input(e),
    };
    let q = match super::parse_query_or_fail(&doc, &args.expr) {
        Ok(q) => q,
        Err(code) => return code,
    };
    let result = match evaluate(&doc, &q, Engine::Auto) {
        Ok((r, _)) => r,
        Err(e) => return super::fail_usage(e),
    };
    let plan = match plan_cut(&doc, &result, &args.expr, &args.pattern) {
        Ok(p) => p,
        Err(e) => return super::fail_usage(e),
    };
    let base = args
        .file
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    let out = CutOutput {
        dir: &args.out,
        base_dir: Some(&base),
        replace_existing: args.overwrite,
    };
    let summary = match cut_clips(
        &doc,
        &plan,
        out,
        &mut |c, info| load_source_clip(&base, c, info),
        &mut |_, _| true,
    ) {
        Ok(s) => s,
        // What the command was asked to write (exit 2, as the README says of an output that
        // is a take): files already there, a take, a pattern that names no file or one twice.
        Err(e @ CutError::Exists { .. }) => {
            return super::fail_usage(format!("{e} (--overwrite replaces them)"));
        }
        Err(
            e @ (CutError::WouldReplaceSource { .. }
            | CutError::BadPattern { .. }
            | CutError::DuplicateName(_)),
        ) => return super::fail_usage(e),
        Err(e) => return super::fail_input(e),
    };
    let mut out = String::new();
    for p in &summary.written {
        out.push_str(&format!("{}\n", p.display()));
    }
    for f in &summary.failed {
        say!("taglane: {f}");
    }
    out.push_str(&format!("{}\n", summary.line(&args.out)));
    super::emit(&out);
    if summary.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
