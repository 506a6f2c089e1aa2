#!/usr/bin/env bash
# A/B of the compressed-pose decoder between builds of `examples/decode_count.rs`, steadier than
# paired medians on a shared machine: each build decodes N poses of CLIP in turn, ROUNDS times,
# and the fastest run of each is printed (noise only ever adds time).
#
#   cargo build --release --no-default-features --example decode_count
#   cp target/release/examples/decode_count /tmp/dc_a      # (and another build as /tmp/dc_b)
#   target/release/examples/decode_count prepare /tmp/tlc  # the nine shared takes compressed
#   scripts/decode_ab.sh 8 2000000 /tmp/tlc kick /tmp/dc_a /tmp/dc_b
set -euo pipefail
if [ $# -lt 5 ]; then
  echo "usage: $0 ROUNDS N TLC_DIR CLIP BINARY..." >&2
  exit 2
fi
rounds=$1 n=$2 dir=$3 clip=$4
shift 4
declare -A best
for _ in $(seq "$rounds"); do
  for b in "$@"; do
    start=$(date +%s%N)
    "$b" compressed "$dir" "$clip" "$n" >/dev/null
    ns=$(( ($(date +%s%N) - start) * 1000 / n ))
    if [ -z "${best[$b]:-}" ] || [ "$ns" -lt "${best[$b]}" ]; then best[$b]=$ns; fi
  done
done
for b in "$@"; do
  printf '%s %s: fastest run %d.%03d ns a pose (the clip load included, about 2 ns at N = 2,000,000)\n' \
    "$clip" "$b" $(( best[$b] / 1000 )) $(( best[$b] % 1000 ))
done
