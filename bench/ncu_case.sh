#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/ncu_case.sh OUTDIR BUILD_DIR CASE [KERNEL_REGEX]
#
# Nsight Compute on one step kernel of one `attnmeta bench` case, as the
# benchmark runs it (caches and clocks left alone, so the inputs are warm in
# L2 like in the graph replays), with warp-state sampling every 32 cycles so
# a 2 us kernel still gets a useful sample count. Leaves OUTDIR/ncu-CASE.txt
# (details page, the per-instruction stall table of the busiest
# instructions last) and OUTDIR/ncu-CASE.ncu-rep.
set -u -o pipefail
if [ $# -lt 3 ] || [ $# -gt 4 ]; then
  echo "usage: $0 OUTDIR BUILD_DIR CASE [KERNEL_REGEX]" >&2
  exit 2
fi
out=$1 build=$2 case_name=$3 kernel=${4:-am_step_kernel}
mkdir -p "$out"
rep=$out/ncu-$case_name
ncu --clock-control none --cache-control none -k "regex:$kernel" --launch-skip 20 --launch-count 1 \
  --section SpeedOfLight --section InstructionStats --section WarpStateStats \
  --section SourceCounters --section LaunchStats --warp-sampling-interval 0 -f -o "$rep" \
  "$build/bin/attnmeta" bench --backend cuda --quick --case "$case_name" >"$rep.log" 2>&1 ||
  { cat "$rep.log"; exit 1; }
ncu -i "$rep.ncu-rep" --page details >"$rep.txt" 2>&1
ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.csv" 2>&1
python3 - "$rep.csv" >>"$rep.txt" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
hdr, data = rows[head], rows[head + 1:]
ix = {h: i for i, h in enumerate(hdr)}
samples = "Warp Stall Sampling (All Samples)"
stalls = [h for h in hdr if h.startswith("stall_") and "(Not Issued)" not in h]
total = sum(int(r[ix[samples]] or 0) for r in data if len(r) == len(hdr))
executed = sum(int(r[ix["Instructions Executed"]] or 0) for r in data if len(r) == len(hdr))
print(f"\nper-instruction samples: {total} samples, {executed} warp instructions executed")
print(f"{'addr':>6} {'samples':>7} {'exec':>5}  top stall  source")
for r in data:
    if len(r) != len(hdr) or r[ix["Instructions Executed"]] in ("", "0"):
        continue
    s = int(r[ix[samples]] or 0)
    top = max(stalls, key=lambda h: float(r[ix[h]] or 0))
    top = top if float(r[ix[top]] or 0) > 0 else "-"
    print(f"{r[ix['Address']][-4:]:>6} {s:7d} {r[ix['Instructions Executed']]:>5}  {top:<22} {r[ix['Source']].strip()[:70]}")
PY
rm -f "$rep.csv" "$rep.log"
grep -E "Duration|Elapsed Cycles|Executed Instructions  |Warp Cycles Per Issued|per-instruction samples" "$rep.txt"
