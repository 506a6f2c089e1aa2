"""Which lines of machine code one pose runs, for the three sides of the side-by-side harness.

Run under gdb (no debug information needed):

    TAGLANE_MOCAP=../shared/mocap SIDES_WORK=/tmp/acl_side_by_side CLIP=kick \\
      gdb -q -batch -x tools/acl_side_by_side/code_lines.py \\
      tools/acl_side_by_side/target/release/acl-side-by-side

It starts the harness's `warm` mode on CLIP, stops at the entry of each side's pose function
(ACL's `tl_acl_sample`, taglane's `CompressedClip::sample_pose`, the uncompressed clip's
`sample_clip`) on its third call, single-steps it to its return and prints, per side: the
instructions run, the distinct 64-byte lines of code they lie in, how many runs of consecutive
lines those lines form in the order they are first reached (a gap of one line counts as
consecutive), the distinct 4 KiB pages, and the span from the lowest line to the highest.
With the code evicted (the cold mode), a pose waits for each of its lines of code to come from
memory: these counts are where a cold pose's time goes (docs/PERFORMANCE.md).
"""

import os
import subprocess

import gdb  # noqa: F401  (provided by gdb)

BIN = gdb.current_progspace().filename
WORK = os.environ.get("SIDES_WORK", "/tmp/acl_side_by_side")
CLIP = os.environ.get("CLIP", "kick")
FLAGS = open("/proc/cpuinfo").read()
EVEX = all(f" {flag}" in FLAGS for flag in ["avx512f", "avx512vl", "avx512_vbmi2"])
SAMPLE = "decode_avx211sample_evex17h" if EVEX else "decode_avx211sample_avx217h"
SIDES = [
    ("ACL", "tl_acl_sample"),
    # `sample_pose` is inlined into its caller since 2026-11-27 (a few instructions that pick
    # the decoder): then the vector sample it calls (a CPU with AVX2; the EVEX one where it also
    # has AVX-512 F, VL and VBMI2).
    ("taglane", "CompressedClip$GT$11sample_pose17h|" + SAMPLE),
    ("uncompressed", "_ZN7taglane4core4anim6sample11sample_clip17h"),
]
CALL = 3


def functions():
    """(offset, mangled name) of every function in the harness."""
    names = subprocess.run(["nm", BIN], capture_output=True, text=True, check=True).stdout
    rows = (line.split() for line in names.splitlines())
    return [(int(r[0], 16), r[2]) for r in rows if len(r) == 3 and r[1] in "Tt"]


def symbol_offset(patterns, table):
    """The offset of the one function whose mangled name contains the first of `patterns` (a
    `|`-separated list) that some function's name contains."""
    found = []
    for pattern in patterns.split("|"):
        found = found or [offset for offset, name in table if pattern in name]
    if len(found) != 1:
        raise SystemExit(f"{patterns}: {len(found)} functions in {BIN}, expected one")
    return found[0]


def reg(name):
    return int(gdb.parse_and_eval(name))


def main():
    gdb.execute("set pagination off")
    table = functions()
    offsets = {symbol_offset(pattern, table): side for side, pattern in SIDES}
    args = f"warm {WORK}/tlc {WORK}/acl {CLIP} {CALL} > /dev/null"
    gdb.execute("starti " + args)
    mappings = gdb.execute("info proc mappings", to_string=True)
    base = next(
        int(line.split()[0], 16)
        for line in mappings.splitlines()
        if os.path.basename(BIN) in line
    )
    for offset in offsets:
        gdb.execute(f"break *{base + offset:#x}")
    calls = dict.fromkeys(offsets, 0)
    traces = {}
    while len(traces) < len(offsets):
        gdb.execute("continue", to_string=True)
        at = reg("$pc") - base
        if at not in offsets or at in traces:
            continue
        calls[at] += 1
        if calls[at] < CALL:
            continue
        back, stack = reg("*(long*)$sp"), reg("$sp")
        pcs = []
        while not (reg("$pc") == back and reg("$sp") > stack):
            pcs.append(reg("$pc"))
            gdb.execute("stepi", to_string=True)
        traces[at] = pcs
    gdb.execute("kill")
    print(f"{CLIP}: one pose (the {CALL}rd call of each side)")
    for offset, side in offsets.items():
        pcs = traces[offset]
        order = list(dict.fromkeys(pc >> 6 for pc in pcs))
        runs = 1 + sum(1 for a, b in zip(order, order[1:]) if not 0 < b - a <= 2)
        pages = len({line >> 6 for line in order})
        span = (max(order) - min(order) + 1) * 64 / 1024
        print(
            f"  {side:13s} instructions {len(pcs):5d}  lines {len(order):4d}  "
            f"runs {runs:3d}  pages {pages:2d}  span {span:6.1f} KiB"
        )


main()
