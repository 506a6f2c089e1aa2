#!/usr/bin/env bash
# Re-renders the README screenshots from the real app (the image snapshot tests, on the CPU) and
# copies them into screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export WGPU_BACKEND="${WGPU_BACKEND:-vulkan}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
# Screenshots on real takes need ../shared/mocap (their tests are ignored without it).
real=()
if [ -d ../shared/mocap ]; then
  real=(--include-ignored)
fi
# The snapshot tests pass within a tolerance of a few hundred pixels, so a baseline that differs by
# a word is kept: remove the baselines first so every one is rendered anew.
names=(timeline editor light_help query query_details query_step pose compression autotag similar)
if [ -d ../shared/mocap ]; then
  names+=(autotag_real browser_real)
fi
for name in "${names[@]}"; do
  rm -f "tests/snapshots/$name.png"
done
UPDATE_SNAPSHOTS=1 cargo test --test ui -- "${real[@]}" snapshot screenshot timeline_on_the_demo light_theme editor_with
mkdir -p screenshots
for name in timeline editor light_help query query_details query_step pose compression autotag autotag_real browser_real similar; do
  if [ -f "tests/snapshots/$name.png" ]; then
    cp "tests/snapshots/$name.png" "screenshots/$name.png"
  fi
done
echo "screenshots/ updated"
