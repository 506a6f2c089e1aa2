//! The `taglane` binary: parses the command line, then runs a command or starts the desktop app.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = taglane::cli::Cli::parse();
    taglane::cli::run(cli)
}
