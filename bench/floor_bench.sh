#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/floor_bench.sh OUTDIR [BUILD_DIR]
#
# The floors of the part-1 and DSV4 steps (bench/step_floor.cu), built here
# with nvcc and run on this machine's GPU:
#  1. `step_floor --check`: every floor kernel and launch shape against the
#     host computation of the products -> OUTDIR/floor_check.txt;
#  2. `step_floor`: floor warm and cold and the write bound of each case
#     -> OUTDIR/floor.txt;
#  3. with BUILD_DIR (a build with bin/attnmeta and the CUDA backend), in the
#     same run: `attnmeta bench` over the same cases -> OUTDIR/bench.json and
#     OUTDIR/attnmeta_bench.txt, then attnmeta against its floor, case by
#     case -> OUTDIR/floor_vs_attnmeta.txt (goal: <= 1.15 x the floor).
# About two minutes on an H200. Exit status: non-zero when a step failed.
set -u -o pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 OUTDIR [BUILD_DIR]" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
status=0
nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! "$nvcc_bin" -O3 -arch=sm_90 "$here/step_floor.cu" -o "$tmp/step_floor" 2>"$out/floor_build.txt"; then
  echo "floor_bench: nvcc failed (OUTDIR/floor_build.txt)" >&2
  cat "$out/floor_build.txt" >&2
  exit 1
fi
"$tmp/step_floor" --check | tee "$out/floor_check.txt" || status=1
"$tmp/step_floor" | tee "$out/floor.txt" || status=1

if [ $# -eq 2 ]; then
  cli=$(cd "$2" && pwd)/bin/attnmeta
  cases=(1x1 1x4 16x6 16x6+17pad 128x2 1024x1 256xmixed+31pad skewed
         dsv4_1x1 dsv4_32x2 dsv4_128x1 dsv4_64x2+31pad)
  args=()
  for c in "${cases[@]}"; do args+=(--case "$c"); done
  if "$cli" bench --backend cuda "${args[@]}" --json "$out/bench.json" | tee "$out/attnmeta_bench.txt"; then
    python3 - "$out/floor.txt" "$out/bench.json" <<'EOF' | tee "$out/floor_vs_attnmeta.txt" || status=1
import json, sys
floor = {}
for line in open(sys.argv[1]):
    f = line.split()
    try:
        floor[f[0]] = (float(f[1]), float(f[2]), float(f[3]))
    except (IndexError, ValueError):
        pass  # the heading, a failed check
bench = json.load(open(sys.argv[2]))["variants"][0]["cases"]
print("attnmeta against its floor (device us per step; goal: attnmeta <= 1.15 x the floor)")
print("%-16s %8s %8s %8s %8s %7s %7s %8s" % ("case", "attnmeta", "floor", "cold", "floor", "warm x",
                                             "cold x", "write"))
for c in bench:
    name = c["case"]
    if name not in floor or not c.get("ok"):
        continue
    w = c["graph"]["us_per_step"]["median"]
    cold = c.get("cold", {}).get("us_per_step", {}).get("median", 0.0)
    fw, fc, wb = floor[name]
    print("%-16s %8.3f %8.3f %8.3f %8.3f %7.2f %7s %8.3f" % (
        name, w, fw, cold, fc, w / fw, "%.2f" % (cold / fc) if cold and fc > 0 else "n/a", wb))
EOF
  else
    echo "floor_bench: attnmeta bench failed" >&2
    status=1
  fi
fi
exit $status
