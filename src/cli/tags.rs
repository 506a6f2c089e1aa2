//! `taglane query` and `taglane tags`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    Ranges,
    Masks,
    Auto,
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

pub fn query(_args: QueryArgs) -> ExitCode {
    super::fail_usage("query: not built yet")
}

pub fn tags(_args: TagsArgs) -> ExitCode {
    super::fail_usage("tags: not built yet")
}
