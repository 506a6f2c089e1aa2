"""The lines of machine code one compressed pose runs, in `examples/decode_count.rs`.

`code_lines.py` counts them in the side-by-side harness (ACL, taglane and the uncompressed clip);
this counts taglane's alone in a plain build of the example, which is quicker to rebuild while
working on the decoder. Run under gdb (no debug information needed):

    cargo build --release --no-default-features --example decode_count
    target/release/examples/decode_count prepare /tmp/tlc      # the nine shared takes compressed
    TLC_DIR=/tmp/tlc CLIP=kick gdb -q -batch -x tools/acl_side_by_side/pose_lines.py \\
      target/release/examples/decode_count

It starts `decode_count compressed TLC_DIR CLIP 3`, stops at the entry of
`CompressedClip::sample_pose` (or, where that is inlined into its caller, of the vector sample
it calls) on its third call, single-steps it to its return and prints the
instructions run, the distinct 64-byte lines of code they lie in, and how many of those lines lie
in each function (by symbol; inlined code counts for the function it was inlined into).
"""

import collections
import os
import subprocess

import gdb  # noqa: F401  (provided by gdb)

BIN = gdb.current_progspace().filename
TLC_DIR = os.environ.get("TLC_DIR", "/tmp/tlc")
CLIP = os.environ.get("CLIP", "kick")


def reg(name):
    return int(gdb.parse_and_eval("(unsigned long)" + name))


gdb.execute("set pagination off")
gdb.execute("set language c")
symbols = subprocess.run(["nm", BIN], capture_output=True, text=True, check=True).stdout
# `sample_pose` is inlined into its caller since 2026-11-27 (a few instructions that pick the
# decoder); the count then starts at the vector sample it calls (on a CPU with AVX2: the EVEX
# one where the CPU also has AVX-512 F, VL and VBMI2, as `Decoder::detect` chooses).
FLAGS = open("/proc/cpuinfo").read()
EVEX = all(f" {flag}" in FLAGS for flag in ["avx512f", "avx512vl", "avx512_vbmi2"])
SAMPLE = "decode_avx211sample_evex17h" if EVEX else "decode_avx211sample_avx217h"
entry = []
for pattern in ["CompressedClip$GT$11sample_pose17h", SAMPLE]:
    entry = entry or [
        int(r[0], 16)
        for r in (line.split() for line in symbols.splitlines())
        if len(r) == 3 and r[1] in "Tt" and pattern in r[2]
    ]
assert len(entry) == 1, entry
gdb.execute(f"starti compressed {TLC_DIR} {CLIP} 3 > /dev/null")
maps = gdb.execute("info proc mappings", to_string=True)
base = next(int(m.split()[0], 16) for m in maps.splitlines() if os.path.basename(BIN) in m)
gdb.execute(f"break *{base + entry[0]:#x}")
for _ in range(3):
    gdb.execute("continue", to_string=True)
back, stack = int(gdb.parse_and_eval("*(unsigned long*)$sp")), reg("$sp")
pcs = []
while not (reg("$pc") == back and reg("$sp") > stack):
    pcs.append(reg("$pc") - base)
    gdb.execute("stepi", to_string=True)
gdb.execute("kill")
lines = list(dict.fromkeys(pc >> 6 for pc in pcs))
first = {}
for pc in pcs:
    first.setdefault(pc >> 6, pc)
names = subprocess.run(
    ["addr2line", "-f", "-C", "-e", BIN] + [hex(first[line]) for line in lines],
    capture_output=True,
    text=True,
).stdout.splitlines()
by_function = collections.Counter(names[2 * i][:100] for i in range(len(lines)))
print(f"{CLIP}: {len(pcs)} instructions, {len(lines)} lines")
for name, count in by_function.most_common():
    print(f"{count:5d} {name}")
