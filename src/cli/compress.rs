//! `taglane compress`, `decompress`, `compare` and `export-acl`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

#[derive(Debug, Args)]
pub struct CompressArgs {
    pub input: PathBuf,
    #[arg(short, long)]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct DecompressArgs {
    pub input: PathBuf,
    #[arg(short, long)]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    pub input: PathBuf,
}

#[derive(Debug, Args)]
pub struct ExportAclArgs {
    pub input: PathBuf,
    #[arg(short, long)]
    pub output: PathBuf,
}

pub fn compress(_args: CompressArgs) -> ExitCode {
    super::fail_usage("compress: not built yet")
}

pub fn decompress(_args: DecompressArgs) -> ExitCode {
    super::fail_usage("decompress: not built yet")
}

pub fn compare(_args: CompareArgs) -> ExitCode {
    super::fail_usage("compare: not built yet")
}

pub fn export_acl(_args: ExportAclArgs) -> ExitCode {
    super::fail_usage("export-acl: not built yet")
}
