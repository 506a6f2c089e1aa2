#!/usr/bin/env bash
# Ratio and error of ACL and taglane on a folder of takes other than the shared ones, by the
# method of the nine (run.sh): ACL's own compressor with its default settings, then taglane's
# automatic mode at 98% of ACL's max error on the same take (ACL's metric, at frames). Nothing
# is tuned per take: the one input is ACL's error. Prints each take, then the totals (ratio =
# ACL's raw size over the compressed size, for both) and the takes where taglane's error at
# frames or between frames is above ACL's.
#
#   tools/acl_side_by_side/other_takes.sh DIR UNITS      # every *.bvh in DIR; UNITS cm, cmu, ...
#
# Needs ACL's compressor built by run.sh in $WORK (/tmp/acl_side_by_side by default).
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 DIR UNITS" >&2
  exit 2
fi
dir=$1 units=$2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
WORK=${WORK:-/tmp/acl_side_by_side}
acl=$WORK/acl_compressor
if [ ! -x "$acl" ]; then
  echo "$acl is missing: run tools/acl_side_by_side/run.sh first (WORK=$WORK)" >&2
  exit 2
fi
(cd "$repo" && cargo build -q --release --no-default-features --bin taglane)
taglane=$repo/target/release/taglane
out=$WORK/other_takes
mkdir -p "$out"
raw_total=0 acl_total=0 tl_total=0 over=0 n=0
for take in "$dir"/*.bvh; do
  name=$(basename "$take" .bvh)
  "$taglane" export-acl "$take" -o "$out/$name.acl.sjson" --units "$units"
  "$acl" -acl="$out/$name.acl.sjson" -out="$out/$name.acl" -stats="$out/$name.stats.sjson" >/dev/null
  stat() { grep -m1 -E "^\s*$1 = " "$out/$name.stats.sjson" | tr -d '\r' | awk '{print $3}'; }
  raw=$(stat raw_size) size=$(stat compressed_size) err=$(stat max_error)
  budget=$(awk -v e="$err" 'BEGIN { printf "%.9f", e * 0.98 }')
  report=$("$taglane" compress "$take" --units "$units" --error-cm "$budget" \
    -o "$out/$name.tlc" --report json)
  read -r tl at between < <(python3 -c 'import json, sys; r = json.load(sys.stdin)
print(r["compressed_bytes"], r["max_error_cm"], r["between"]["max_error_cm"])' <<<"$report")
  raw_total=$((raw_total + raw)) acl_total=$((acl_total + size)) tl_total=$((tl_total + tl))
  n=$((n + 1))
  if awk -v a="$at" -v b="$between" -v e="$err" 'BEGIN { exit !(a > e || b > e) }'; then
    over=$((over + 1))
    echo "OVER ACL'S ERROR: $name"
  fi
  awk -v c="$name" -v r="$raw" -v s="$size" -v e="$err" -v t="$tl" -v a="$at" -v b="$between" \
    'BEGIN { printf "%-48s ACL %6.3f at %.4f cm   taglane %6.3f (%.2fx) at %.4f cm, between frames %.4f cm\n", c, r / s, e, r / t, s / t, a, b }'
done
awk -v n="$n" -v r="$raw_total" -v s="$acl_total" -v t="$tl_total" -v o="$over" \
  'BEGIN { printf "%d takes: ACL %.3f, taglane %.3f (%.3fx ACL); %d over ACL'"'"'s error\n", n, r / s, r / t, s / t, o }'
