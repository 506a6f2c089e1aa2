#!/bin/bash
# For `acl-side-by-side pfcold` and `decode_count parts`: prints the exports of TL_SYM and UN_SYM
# (the code of taglane's vector sample and of the uncompressed sample, `OFFSET:SIZE` from `nm -S`)
# and TL_RO and UN_RO (the read-only data lines that code reads, from `objdump -d`; not the
# addresses a `lea` only computes, such as the sample's own for its code prefetches or a panic's
# location, which a pose does not read) for the binary
# $1 (the harness, or the example): `eval $(tools/acl_side_by_side/pf_syms.sh BINARY)`.
B=$1
# The sample the CPU runs: the EVEX one where it has AVX-512 F, VL and VBMI2 (`Decoder::detect`).
sample=sample_avx2
if grep -q avx512_vbmi2 /proc/cpuinfo && grep -q avx512vl /proc/cpuinfo; then sample=sample_evex; fi
tl=$(nm -S -C $B | grep "decode_avx2::$sample$" | awk '{print "0x"$1":0x"$2}')
un=$(nm -S -C $B | grep "sample::sample_clip$" | awk '{print "0x"$1":0x"$2}')
echo "export TL_SYM=$tl UN_SYM=$un"
for pair in "TL $tl" "UN $un"; do set -- $pair; a=${2%%:*}; l=${2##*:}
objdump -d --no-show-raw-insn --start-address=$a --stop-address=$(( a + l )) $B | grep "(%rip)" | grep -v "call\|jmp\|lea " | grep -o "# [0-9a-f]* " | awk '{print $2}' | python3 -c "
import sys
a=[int(x,16) for x in sys.stdin.read().split()]
print('export $1_RO='+','.join(hex(l) for l in sorted(set(x//64*64 for x in a))))"; done
