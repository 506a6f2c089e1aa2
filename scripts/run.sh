#!/usr/bin/env bash
# Sets up the machine if needed, then runs the taglane desktop app on its embedded demo project.
# Extra arguments go to taglane (e.g. a project file, or a subcommand such as `query`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
exec cargo run --release -- "$@"
