#!/usr/bin/env bash
# Re-renders the README screenshots from the real app (the image snapshot tests, on the CPU) and
# copies them into screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export WGPU_BACKEND="${WGPU_BACKEND:-vulkan}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
UPDATE_SNAPSHOTS=1 cargo test --test ui -- snapshot screenshot timeline_on_the_demo light_theme editor_with
mkdir -p screenshots
for name in timeline editor light_help query query_details query_step pose compression similar; do
  cp "tests/snapshots/$name.png" "screenshots/$name.png"
done
echo "screenshots/ updated"
