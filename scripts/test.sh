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

# The core and the command line build without the `ui` feature: no egui, eframe or rfd is
# compiled, which proves the core never needs them. (Building their tests without it would compile
# the UI test crates' dependencies - egui_kittest, wgpu - a second time with other features; the
# core's tests all run in the second pass, and clippy in .ci/run checks every target without the
# feature too.)
echo "test: core and command line alone (--no-default-features)"
cargo build --no-default-features --lib --bins
echo "test: everything (default features: core + ui)"
cargo test --lib --bins --tests -- "${ignored[@]}"
echo "test: benchmarks, once each in test mode"
cargo test --benches
cargo test --doc
