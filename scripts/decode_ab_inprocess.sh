#!/usr/bin/env bash
# A/B of the AVX2 pose decoder against another revision's, in one process: this tree is built
# with BASE's `src/core/compress/decode_avx2.rs` compiled beside its own (`--cfg
# taglane_decoder_ab`, its own target directory; the switch between them is in `decode.rs`), and
# `examples/decode_count.rs` alternates the two decoders round by round on the same clip, so both
# see the same machine from one moment to the next.
# On a shared machine whose speed doubles and halves within minutes this is the steady
# comparison: each line gives the median of the per-round ratios this / base (warm: rounds of the
# bench's 256 scattered times; cold: single poses after the bench's eviction).
#
#   target/release/examples/decode_count prepare /tmp/tlc   # the nine shared takes compressed
#   scripts/decode_ab_inprocess.sh HEAD 1500 200 /tmp/tlc kick cmu_01_01
#
# COLD_POSES 0 skips the cold rounds. BASE's decoder must fit this tree's interfaces
# (`GroupRun`, `Keys`, the AVX2 decoder's helpers, since 615f481 the `Decoder` argument of its
# entries, and since the EVEX sample (2026-11-28, stop 47) the `evex` argument of `decode_groups`
# and `decode_vectors`); a self-check: BASE = the working tree's own revision gives ratios of 1.00
# within the noise. Only the groups and the translations switch: the rest of the sample is this tree's.
set -euo pipefail
if [ $# -lt 5 ]; then
  echo "usage: $0 BASE_REV ROUNDS COLD_POSES TLC_DIR CLIP..." >&2
  exit 2
fi
base=$1 rounds=$2 cold=$3 dir=$4
shift 4
root=$(git rev-parse --show-toplevel)
out="$root/target/decoder_ab"
mkdir -p "$out"
# Included into a module of `src/core/compress/mod.rs`, where inner attributes and comments are
# not allowed: those lines are taken out (the module allows `unsafe_code` itself).
for decoder in decode_avx2; do
  git -C "$root" show "$base:src/core/compress/$decoder.rs" |
    grep -v -E '^\s*(//!|#!\[)' >"$out/${decoder}_base.rs"
done
(cd "$root" && RUSTFLAGS="--cfg taglane_decoder_ab" CARGO_TARGET_DIR="$out/build" \
  cargo build --release --no-default-features --example decode_count)
bin="$out/build/release/examples/decode_count"
for clip in "$@"; do
  "$bin" ab "$dir" "$clip" "$rounds"
  if [ "$cold" -gt 0 ]; then
    "$bin" abcold "$dir" "$clip" "$cold"
  fi
done
