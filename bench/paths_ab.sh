#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/paths_ab.sh OUTDIR BUILD_DIR [ROUNDS]
#
# What each special path of the kernel wins, on one GPU, in one run: the
# same build of attnmeta benchmarked alternately as it is ("base") and with
# one path switched off through ATTNMETA_PATHS_OFF (src/common/am_context.h),
# `attnmeta bench --backend "$backend" --quick` each time, ROUNDS rounds (default
# 2) of base, path 1 off, path 2 off, ... Prints, per case, the median device
# µs per step of base and of each path off, and off / base: a path that
# wins shows > 1 where it applies (and 1.00 where it does not apply).
# Switching a path off never changes a result (tests/test_early_start.c).
# Extra bench arguments from ATTNMETA_AB_BENCH_ARGS, the backend from
# ATTNMETA_AB_BACKEND (default cuda; cpu to try the script); the path list from
# ATTNMETA_AB_PATHS (comma-separated, default all).
# Leaves OUTDIR/paths_ab.log (table last) and OUTDIR/paths_ab-raw.tar.gz.
set -u -o pipefail
. "$(dirname "$0")/ab_start.sh"
ab_start 2 3 "OUTDIR BUILD_DIR [ROUNDS]" "$@"
build=$(cd "$2" && pwd) || exit 2
rounds=${3:-2}
backend=${ATTNMETA_AB_BACKEND:-cuda}
paths=${ATTNMETA_AB_PATHS:-speculate_first,indexer_variant,realign,aligned_rows,tail_vectors,reverse_order,one_wave}
extra+=(--warm-only --copy-bytes 16777216) # only the warm figures are compared
log=$out/paths_ab.log
raw=$out/paths_ab-raw
mkdir -p "$raw"
: >"$log"
IFS=, read -r -a list <<<"$paths"
sides=(base "${list[@]}")
status=0
for ((i = 1; i <= rounds; i++)); do
  for side in "${sides[@]}"; do
    echo "== round $i, $side" >>"$log"
    if [ "$side" = base ]; then
      env -u ATTNMETA_PATHS_OFF "$build/bin/attnmeta" bench --backend "$backend" --quick \
        --json "$raw/$side-$i.json" ${extra[@]+"${extra[@]}"} >>"$log" 2>&1
    else
      ATTNMETA_PATHS_OFF=$side "$build/bin/attnmeta" bench --backend "$backend" --quick \
        --json "$raw/$side-$i.json" ${extra[@]+"${extra[@]}"} >>"$log" 2>&1
    fi || { echo "paths_ab: bench ($side off) failed" | tee -a "$log"; status=1; }
  done
done

python3 - "$raw" "$rounds" "${sides[@]}" <<'PY' | tee -a "$log"
import json, statistics, sys
raw, rounds, sides = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def medians(side):
    got = {}
    for i in range(1, rounds + 1):
        try:
            run = json.load(open(f"{raw}/{side}-{i}.json"))
        except (OSError, ValueError):
            continue
        v = run["variants"][0]
        for c in v["cases"]:
            if c.get("skipped") or not c.get("ok"):
                continue
            got.setdefault(c["case"], []).append(c["graph"]["us_per_step"]["median"])
    return {k: statistics.median(x) for k, x in got.items()}
M = {s: medians(s) for s in sides}
base = M["base"]
print()
print("device us per step (median of %d rounds); columns: base, then off / base per path" % rounds)
print("%-24s %7s " % ("case", "base") + " ".join("%16s" % s[:16] for s in sides[1:]))
for case, b in base.items():
    cells = []
    for s in sides[1:]:
        v = M[s].get(case)
        cells.append("%16s" % ("n/a" if v is None else "%.2f (%.3f)" % (v, v / b)))
    print("%-24s %7.2f " % (case[:24], b) + " ".join(cells))
wins = []
for s in sides[1:]:
    r = [M[s][c] / base[c] for c in base if c in M[s]]
    if r:
        wins.append("%s %.2f-%.2f" % (s, min(r), max(r)))
print("paths_ab: off/base " + ("; ".join(wins) if wins else "no data"))
PY
tar -czf "$out/paths_ab-raw.tar.gz" -C "$out" paths_ab-raw && rm -rf "$raw"
exit $status
