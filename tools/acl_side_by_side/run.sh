#!/usr/bin/env bash
# ACL against taglane on the nine shared takes: ratio and error with ACL's own compressor (and
# the ratio on the glTF Fox's three clips), then warm and cold decode timed side by side in one
# process. Everything fetched and built goes to
# $WORK (outside the repository). Needs git, g++ and network the first time (or ACL_SRC).
#
#   tools/acl_side_by_side/run.sh                 # warm 300 rounds, cold 60 poses a side
#   WARM=1000 COLD=100 tools/acl_side_by_side/run.sh
#   ACL_SRC=/path/with/acl,rtm,sjson-cpp tools/acl_side_by_side/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
WORK=${WORK:-/tmp/acl_side_by_side}
WARM=${WARM:-300}
COLD=${COLD:-60}
# ACL's develop branch as measured in docs/PERFORMANCE.md, and the RTM and sjson-cpp commits its
# submodules name.
ACL_COMMIT=0f855f01827a053792ee8c8a36ebabe228ed3727
RTM_COMMIT=2a2ba0f93b5ff034753d068828c6199e19e27686
SJSON_COMMIT=54b3985e8ccc5efb5f24dabf0b4b802a996366e6
mkdir -p "$WORK"
src=${ACL_SRC:-$WORK/src}
if [ ! -d "$src/acl" ]; then
  mkdir -p "$src"
  git clone -q https://github.com/nfrechette/acl "$src/acl"
  git clone -q https://github.com/nfrechette/rtm "$src/rtm"
  git clone -q https://github.com/nfrechette/sjson-cpp "$src/sjson-cpp"
  git -C "$src/acl" checkout -q "$ACL_COMMIT"
  git -C "$src/rtm" checkout -q "$RTM_COMMIT"
  git -C "$src/sjson-cpp" checkout -q "$SJSON_COMMIT"
fi
echo "ACL $(git -C "$src/acl" rev-parse --short HEAD), RTM $(git -C "$src/rtm" rev-parse --short HEAD)"
flags=${ACL_FLAGS:-"-mavx2 -mfma -mbmi -mpopcnt"}
if [ ! -x "$WORK/acl_compressor" ]; then
  echo "building acl_compressor (g++ -O2 $flags)"
  # shellcheck disable=SC2086
  g++ -O2 -std=c++17 $flags -DACL_USE_SJSON -DACL_ON_ASSERT_ABORT -DRTM_ON_ASSERT_ABORT \
    -DSJSON_CPP_ON_ASSERT_ABORT -I"$src/acl/includes" -I"$src/rtm/includes" \
    -I"$src/sjson-cpp/includes" -I"$src/acl/tools/acl_compressor/includes" \
    "$src/acl/tools/acl_compressor/main_generic/main.cpp" \
    "$src/acl/tools/acl_compressor/sources/"*.cpp -o "$WORK/acl_compressor"
fi
(cd "$repo" && cargo build -q --release --no-default-features --bin taglane --example decode_count)
mocap=${TAGLANE_MOCAP:-$repo/../shared/mocap}
mkdir -p "$WORK/sjson" "$WORK/acl" "$WORK/stats" "$WORK/tlc"
clips="dance:bandai_dataset-1_dance-short_normal_001:cm kick:bandai_dataset-1_kick_normal_001:cm
walk1:bandai_dataset-1_walk_normal_001:cm respond:bandai_dataset-1_respond_normal_001:cm
walk-turn-left:bandai_dataset-2_walk-turn-left_normal_001:cm walk2:bandai_dataset-2_walk_normal_001:cm
cmu_01_01:cmu_01_01_hops_turn:cmu cmu_01_03:cmu_01_03_climb_hang:cmu cmu_131_03:cmu_131_03_hop_start_stop:cmu"
echo "== ACL's compressor (default settings), ACL's metric at frames"
raw_total=0 acl_total=0
for entry in $clips; do
  IFS=: read -r short file units <<<"$entry"
  "$repo/target/release/taglane" export-acl "$mocap/$file.bvh" -o "$WORK/sjson/$short.acl.sjson" --units "$units"
  "$WORK/acl_compressor" -acl="$WORK/sjson/$short.acl.sjson" -out="$WORK/acl/$short.acl" \
    -stats="$WORK/stats/$short.sjson" >/dev/null
  stat() { grep -m1 -E "^\s*$1 = " "$WORK/stats/$short.sjson" | tr -d '\r' | awk '{print $3}'; }
  raw=$(stat raw_size) size=$(stat compressed_size)
  raw_total=$((raw_total + raw)) acl_total=$((acl_total + size))
  awk -v c="$short" -v r="$raw" -v s="$size" -v e="$(stat max_error)" -v t="$(stat compression_time)" \
    'BEGIN { printf "%-15s ratio %6.3f  max error %.4f cm  compress %6.1f ms\n", c, r / s, e, t * 1000 }'
done
awk -v r="$raw_total" -v s="$acl_total" 'BEGIN { printf "all nine: ratio %.3f\n", r / s }'
echo "== another real take: the glTF Fox's three clips (cm), taglane at 98% of ACL's error on each"
raw_total=0 acl_total=0 tl_total=0
for c in Survey Walk Run; do
  "$repo/target/release/taglane" export-acl "$mocap/gltf_Fox.glb" --clip "$c" --units cm \
    -o "$WORK/sjson/fox_$c.acl.sjson"
  "$WORK/acl_compressor" -acl="$WORK/sjson/fox_$c.acl.sjson" -out="$WORK/acl/fox_$c.acl" \
    -stats="$WORK/stats/fox_$c.sjson" >/dev/null
  stat() { grep -m1 -E "^\s*$1 = " "$WORK/stats/fox_$c.sjson" | tr -d '\r' | awk '{print $3}'; }
  raw=$(stat raw_size) size=$(stat compressed_size) err=$(stat max_error)
  budget=$(awk -v e="$err" 'BEGIN { printf "%.9f", e * 0.98 }')
  report=$("$repo/target/release/taglane" compress "$mocap/gltf_Fox.glb" --clip "$c" --units cm \
    --error-cm "$budget" -o "$WORK/tlc/fox_$c.tlc" --report json)
  field() { grep -o "\"$1\":[0-9.e-]*" <<<"$report" | head -1 | cut -d: -f2; }
  tl=$(field compressed_bytes)
  raw_total=$((raw_total + raw)) acl_total=$((acl_total + size)) tl_total=$((tl_total + tl))
  awk -v c="$c" -v r="$raw" -v s="$size" -v e="$err" -v t="$tl" -v te="$(field overall_max_error_cm)" \
    'BEGIN { printf "fox %-7s ACL ratio %6.3f at %.4f cm, taglane ratio %6.3f at %.4f cm\n", c, r / s, e, r / t, te }'
done
awk -v r="$raw_total" -v s="$acl_total" -v t="$tl_total" \
  'BEGIN { printf "fox, three clips: ACL %.3f, taglane %.3f (%.2fx)\n", r / s, r / t, s / t }'
echo "== taglane (automatic mode at 98% of the issue's ACL errors, as the bench)"
"$repo/target/release/examples/decode_count" prepare "$WORK/tlc"
echo "== decode side by side"
ACL_INCLUDE="$src/acl/includes" RTM_INCLUDE="$src/rtm/includes" ACL_FLAGS="$flags" \
  cargo build -q --release --manifest-path "$here/Cargo.toml"
bin="$here/target/release/acl-side-by-side"
for entry in $clips; do
  short=${entry%%:*}
  TAGLANE_MOCAP="$mocap" "$bin" info "$WORK/tlc" "$WORK/acl" "$short"
  TAGLANE_MOCAP="$mocap" "$bin" check "$WORK/tlc" "$WORK/acl" "$short"
  TAGLANE_MOCAP="$mocap" "$bin" warm "$WORK/tlc" "$WORK/acl" "$short" "$WARM"
  TAGLANE_MOCAP="$mocap" "$bin" cold "$WORK/tlc" "$WORK/acl" "$short" "$COLD"
  TAGLANE_MOCAP="$mocap" "$bin" datacold "$WORK/tlc" "$WORK/acl" "$short" "$COLD"
done
