//! The `taglane` binary: parses the command line, then runs a command or starts the desktop app.

use std::process::ExitCode;

fn main() -> ExitCode {
    match taglane::cli::parse(std::env::args_os().collect()) {
        Ok(cli) => taglane::cli::run(cli),
        Err(code) => code,
    }
}
