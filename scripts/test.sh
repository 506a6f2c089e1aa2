#!/usr/bin/env bash
# Sets up the machine if needed, then runs every test: the core alone (no `ui` feature, which proves it
# never needs egui), then everything with the UI tests. Tests that need the real motion-capture files in
# ../shared/mocap are included when that folder exists.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"

# UI snapshot tests render on the CPU; pick one adapter so parallel tests never race for it.
export WGPU_BACKEND="${WGPU_BACKEND:-vulkan}"
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
  XDG_RUNTIME_DIR="$(mktemp -d)"
  export XDG_RUNTIME_DIR
fi

ignored=()
if [ -d ../shared/mocap ]; then
  ignored=(--include-ignored)
  echo "test: ../shared/mocap found, running the tests that need it too"
fi

# The core's unit tests without the `ui` feature: the library builds and passes with no UI crate
# (clippy in .ci/run also checks every target without it). The integration tests (one binary for
# the core and the command line, tests/core; one for the app, tests/ui) run once, in the second pass.
echo "test: core alone (--no-default-features)"
cargo test --no-default-features --lib -- "${ignored[@]}"
echo "test: everything (default features: core + ui)"
cargo test --lib --bins --tests -- "${ignored[@]}"
echo "test: benchmarks, once each in test mode"
cargo test --benches
cargo test --doc
