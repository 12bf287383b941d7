#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/ab_bench.sh OUTDIR SRC_A SRC_B [ROUNDS]
#
# A/B comparison of two source trees of attnmeta on one GPU, in one run, so
# a kernel change is judged against its parent on the same card, clocks and
# driver. Builds both trees (Release, CUDA module for ATTNMETA_AB_ARCH,
# default 90; no tests, no HIP) in parallel, then runs
# `attnmeta bench --backend cuda --quick` alternately A, B, A, B, ...
# (ROUNDS times each, default 2) and prints, per case and variant, the
# median device µs per step of each tree and B / A. Extra bench arguments
# (e.g. "--config vector=0") come from ATTNMETA_AB_BENCH_ARGS.
# Leaves OUTDIR/ab.log (the table last) and OUTDIR/ab-raw.tar.gz: the JSON of
# every bench run ({a,b}-N.json), the build logs and, when cuobjdump exists,
# the SASS of both modules ({a,b}.sass).
set -u -o pipefail
. "$(dirname "$0")/ab_start.sh"
ab_start 3 4 "OUTDIR SRC_A SRC_B [ROUNDS]" "$@"
a=$(cd "$2" && pwd) || exit 2
b=$(cd "$3" && pwd) || exit 2
rounds=${4:-2}
arch=${ATTNMETA_AB_ARCH:-90}
log=$out/ab.log
: >"$log"
raw=$out/raw
mkdir -p "$raw"
export PATH=/usr/local/cuda/bin:$PATH

build() { # build SRC NAME
  cmake -S "$1" -B "$1/build-ab" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
    -DATTNMETA_CUDA_ARCHITECTURES="$arch" -DATTNMETA_WITH_CUDA=ON -DATTNMETA_WITH_HIP=OFF \
    >"$raw/build-$2.log" 2>&1 &&
    cmake --build "$1/build-ab" -j"$(nproc)" >>"$raw/build-$2.log" 2>&1
}
build "$a" a & pa=$!
build "$b" b & pb=$!
wait $pa || { echo "ab_bench: build of $a failed (raw/build-a.log)" | tee -a "$log"; exit 1; }
wait $pb || { echo "ab_bench: build of $b failed (raw/build-b.log)" | tee -a "$log"; exit 1; }

if command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$a/build-ab/lib/libattnmeta_cuda.so" >"$raw/a.sass" 2>&1
  cuobjdump -sass "$b/build-ab/lib/libattnmeta_cuda.so" >"$raw/b.sass" 2>&1
fi

# Only the warm figures are compared: leave out the cold ones where the
# tree's bench has them.
warm_a=() warm_b=()
"$a/build-ab/bin/attnmeta" bench --help 2>/dev/null | grep -q -- --warm-only && warm_a=(--warm-only)
"$b/build-ab/bin/attnmeta" bench --help 2>/dev/null | grep -q -- --warm-only && warm_b=(--warm-only)

status=0
for ((i = 1; i <= rounds; i++)); do
  for side in a b; do
    src=$a warm=(${warm_a[@]+"${warm_a[@]}"})
    [ $side = b ] && src=$b warm=(${warm_b[@]+"${warm_b[@]}"})
    echo "== round $i, $side ($src)" >>"$log"
    "$src/build-ab/bin/attnmeta" bench --backend cuda --quick --json "$raw/$side-$i.json" \
      ${warm[@]+"${warm[@]}"} ${extra[@]+"${extra[@]}"} >>"$log" 2>&1 || { echo "ab_bench: bench $side failed" | tee -a "$log"; status=1; }
  done
done

python3 - "$raw" "$rounds" <<'EOF' | tee -a "$log"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(side):
    runs = []
    for i in range(1, rounds + 1):
        try:
            runs.append(json.load(open(f"{out}/{side}-{i}.json")))
        except (OSError, ValueError):
            pass
    return runs
def medians(runs):
    got = {}
    for run in runs:
        for v in run["variants"]:
            for c in v["cases"]:
                if c.get("skipped") or not c.get("ok"):
                    continue
                got.setdefault((v["label"], c["case"]), []).append(c["graph"]["us_per_step"]["median"])
    return {k: statistics.median(x) for k, x in got.items()}
A, B = medians(load("a")), medians(load("b"))
print(f"{'variant':<22} {'case':<18} {'A us':>7} {'B us':>7} {'B/A':>6}")
for key in A:
    if key in B:
        print(f"{key[0][:22]:<22} {key[1]:<18} {A[key]:7.2f} {B[key]:7.2f} {B[key] / A[key]:6.3f}")
EOF
tar -czf "$out/ab-raw.tar.gz" -C "$out" raw && rm -rf "$raw"
exit $status
