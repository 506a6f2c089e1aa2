#!/bin/sh
# Runs every fuzz target for $1 seconds (default 600), one after the other, on one core.
# Equivalent to: RUSTC_BOOTSTRAP=1 cargo fuzz run <target> corpus/<target> seeds/<target> -- <flags>
set -u
secs=${1:-600}
shift || true
targets=${*:-"bvh gltf tags_json query tlc cliptags"}
here=$(cd "$(dirname "$0")" && pwd)
bin=$here/target/x86_64-unknown-linux-gnu/release
for t in $targets; do
  mkdir -p "$here/corpus/$t" "$here/artifacts/$t" "$here/logs/$t"
  echo "$t start $(date -u +%FT%TZ)" >> "$here/logs/times.txt"
  (cd "$here/logs/$t" && "$bin/$t" "$here/corpus/$t" "$here/seeds/$t" \
     -jobs=1 -workers=1 -max_total_time="$secs" -max_len=16384 -rss_limit_mb=2048 -timeout=10 \
     -artifact_prefix="$here/artifacts/$t/" -print_final_stats=1 > run.out 2>&1)
  echo "$t end $(date -u +%FT%TZ) rc=$?" >> "$here/logs/times.txt"
done
