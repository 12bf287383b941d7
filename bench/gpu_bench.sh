#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/gpu_bench.sh OUTDIR [BUILD_DIR]
#
# The GPU benchmark of attnmeta, under a minute on an H200 (3 at most):
#  1. `attnmeta bench --backend cuda` over the cases of the performance
#     targets, with a handful of launch-config variants in the same run
#     (floors, checks, ratios to the targets and the anchors) -> bench.json;
#  2. bench/compare.py: the PyTorch op chain, the Triton pair and attnmeta
#     (through the Python binding) on the same inputs in one process
#     -> compare.json, compare.png;
#  2b. bench/triton_dsv4.py: a whole DeepSeek-V4 decode step, the engine's
#     Triton sequence against one attnmeta launch -> dsv4.json (its table is
#     printed);
#  2c. bench/topk_compare.py: the per-layer top-k conversion, attnmeta
#     against the Triton re-implementation of the engines' kernel
#     (bench/triton_topk.py) and the copy bound, warm and cold -> its table
#     and one JSON line in the log (ATTNMETA_BENCH_TOPK=0 leaves it out);
#  3. bench/pdl_chain.cu, built here with nvcc: producer -> attnmeta ->
#     consumer in one graph, with and without early start;
#  4. bench/paths_ab.sh: the same build with each special path of the
#     kernel switched off in turn (what each one wins), and, when
#     ATTNMETA_AB_OLD_TREE names a source tree, bench/ab_bench.sh of that
#     tree against this one;
#  5. a compact table of 1 and 2, printed last, then a one-line summary.
# Everything printed also goes to OUTDIR/gpu_bench.log (5 files in all).
#
# BUILD_DIR defaults to $ATTNMETA_GPU_BUILD_DIR (set by ci/gpu.sh). The
# whole run keeps within $ATTNMETA_GPU_TIME_LEFT_S seconds (default 180);
# under 90 s both tools run --quick. Variants: ATTNMETA_BENCH_CONFIGS=
# "default;block=128;..." replaces the list.
# Exit status: non-zero when a check failed or a step could not run.
set -u -o pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 OUTDIR [BUILD_DIR]" >&2
  exit 2
fi
out=$1
build_arg=${2:-${ATTNMETA_GPU_BUILD_DIR:-}}
if [ -z "$build_arg" ]; then
  echo "gpu_bench: no BUILD_DIR given and ATTNMETA_GPU_BUILD_DIR is not set" >&2
  exit 2
fi
build=$(cd "$build_arg" && pwd) || { echo "gpu_bench: no build folder $build_arg" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/gpu_bench.log
: >"$log"
cli=$build/bin/attnmeta
status=0
bench_rc=127
budget=${ATTNMETA_GPU_TIME_LEFT_S:-180}
case $budget in '' | *[!0-9]*) budget=180 ;; esac
t_bench=$((budget * 34 / 100))
t_compare=$((budget * 24 / 100))
t_dsv4=$((budget * 11 / 100))
t_topk=$((budget * 11 / 100))
start_s=$SECONDS
left_s() { echo $((budget - (SECONDS - start_s))); }
quick=()
[ "$budget" -lt 90 ] && quick=(--quick)

say() { echo "$@" | tee -a "$log"; }

say "== gpu_bench $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "${ATTNMETA_COMMIT:-unknown}")"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null \
  | sed 's/^/   gpu: /' | tee -a "$log"

# ---- 1. the C benchmark, several schedules in one run ----
configs=${ATTNMETA_BENCH_CONFIGS:-"default;block=128;stage=1;vector=0;lanes=8;lanes=32"}
args=()
IFS=';' read -r -a list <<<"$configs"
for c in "${list[@]}"; do args+=(--config "$c"); done
if [ -x "$cli" ]; then
  say "== attnmeta bench --backend cuda (${#list[@]} variants, ${t_bench} s at most) ${quick[*]+${quick[*]}}"
  timeout "$t_bench" "$cli" bench --backend cuda --json "$out/bench.json" ${quick[@]+"${quick[@]}"} "${args[@]}" \
    >>"$log" 2>&1
  rc=$?
  [ $rc -eq 0 ] || { say "attnmeta bench: exit status $rc"; status=1; }
  bench_rc=$rc
else
  say "gpu_bench: $cli not built"
  status=1
fi

# ---- 2. torch / Triton / attnmeta side by side ----
say "== bench/compare.py (${t_compare} s at most) ${quick[*]+${quick[*]}}"
ATTNMETA_LIBRARY=$build/lib/libattnmeta.so PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" \
  PYTHONUNBUFFERED=1 timeout "$t_compare" python3 "$here/compare.py" --json "$out/compare.json" \
  --png "$out/compare.png" ${quick[@]+"${quick[@]}"} >>"$log" 2>&1
compare_rc=$?
[ $compare_rc -eq 0 ] || { say "compare.py: exit status $compare_rc"; status=1; }

# ---- 2b. a whole DSV4 decode step: the engine's Triton sequence / attnmeta ----
say "== bench/triton_dsv4.py (${t_dsv4} s at most)"
ATTNMETA_LIBRARY=$build/lib/libattnmeta.so PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" \
  PYTHONUNBUFFERED=1 timeout "$t_dsv4" python3 "$here/triton_dsv4.py" --json "$out/dsv4.json" \
  --quick 2>&1 | tee -a "$log"
dsv4_rc=${PIPESTATUS[0]}
[ "$dsv4_rc" -eq 0 ] || { say "triton_dsv4.py: exit status $dsv4_rc"; status=1; }

# ---- 2c. the top-k conversion against Triton and the copy bound ----
topk_rc=0
if [ "${ATTNMETA_BENCH_TOPK:-1}" != 0 ]; then
  say "== bench/topk_compare.py (${t_topk} s at most) ${quick[*]+${quick[*]}}"
  ATTNMETA_LIBRARY=$build/lib/libattnmeta.so PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" \
    PYTHONUNBUFFERED=1 timeout "$t_topk" python3 "$here/topk_compare.py" --print-json \
    ${quick[@]+"${quick[@]}"} 2>&1 | tee -a "$log"
  topk_rc=${PIPESTATUS[0]}
  [ $topk_rc -eq 0 ] || { say "topk_compare.py: exit status $topk_rc"; status=1; }
fi
# ---- 3. a modelled step: producer -> attnmeta -> consumer, with and without early start ----
pdl_line="pdl_chain: not run ($(left_s) s left)"
nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ -x "$nvcc_bin" ] && [ -f "$build/lib/libattnmeta.so" ] && [ "$(left_s)" -ge 40 ]; then
  say "== bench/pdl_chain.cu (build and run, 90 s at most) ${quick[*]+${quick[*]}}"
  if timeout 60 "$nvcc_bin" -O3 -arch=sm_90 -I"$root/include" "$here/pdl_chain.cu" -L"$build/lib" \
    -lattnmeta -Xlinker -rpath="$build/lib" -o "$build/bin/pdl_chain" >>"$log" 2>&1; then
    timeout 30 "$build/bin/pdl_chain" ${quick[@]+"${quick[@]}"} 2>&1 | tee -a "$log"
    pdl_rc=${PIPESTATUS[0]}
    pdl_line=$(grep -a '^pdl_chain: checks' "$log" | tail -n 1)
    [ -n "$pdl_line" ] || pdl_line="pdl_chain: exit status $pdl_rc, no summary"
    [ "$pdl_rc" -eq 0 ] || { say "pdl_chain: exit status $pdl_rc"; status=1; }
  else
    say "pdl_chain: build failed"
    pdl_line="pdl_chain: build failed"
    status=1
  fi
fi
# ---- 4. what each special path wins: the same build with one path off at a time ----
# (their logs go into gpu_bench.log; their raw JSON is not kept, so that
# OUTDIR keeps its five files)
ab_tmp=$(mktemp -d)
trap 'rm -rf "$ab_tmp"' EXIT
paths_line="paths_ab: not run ($(left_s) s left)"
if [ -x "$cli" ] && [ "$(left_s)" -ge 30 ]; then
  ab_rounds=1
  [ "$(left_s)" -ge 80 ] && ab_rounds=2
  ab_cases=${ATTNMETA_AB_CASES:-"1x1 16x6 16x6+17pad 128x2 1024x1 1024x1/odd 256xmixed+31pad"}
  ab_args=()
  for c in $ab_cases; do "$cli" bench --list 2>/dev/null | grep -q "^$c " && ab_args+=(--case "$c"); done
  say "== bench/paths_ab.sh ($((${#ab_args[@]} / 2)) cases, $ab_rounds round(s), $(($(left_s) - 10)) s at most)"
  ATTNMETA_AB_BENCH_ARGS="${ab_args[*]}" timeout $(($(left_s) - 10)) bash "$here/paths_ab.sh" "$ab_tmp/paths" "$build" "$ab_rounds" \
    >/dev/null 2>&1
  paths_rc=$?
  paths_line=$(grep -a '^paths_ab:' "$ab_tmp/paths/paths_ab.log" 2>/dev/null | tail -n 1)
  # the whole log (every bench run) into ours; the table also on screen
  cat "$ab_tmp/paths/paths_ab.log" >>"$log" 2>/dev/null
  sed -n '/^device us per step/,$p' "$ab_tmp/paths/paths_ab.log" 2>/dev/null
  [ -n "$paths_line" ] || paths_line="paths_ab: exit status $paths_rc, no table"
  [ "$paths_rc" -eq 0 ] || { say "paths_ab: exit status $paths_rc"; status=1; }
fi
# An old tree against this one (bench/ab_bench.sh), when ATTNMETA_AB_OLD_TREE
# names one (e.g. a `git archive` of the parent commit) and time is left.
if [ -n "${ATTNMETA_AB_OLD_TREE:-}" ] && [ "$(left_s)" -ge 100 ]; then
  say "== bench/ab_bench.sh $ATTNMETA_AB_OLD_TREE against $root ($(($(left_s) - 10)) s at most)"
  timeout $(($(left_s) - 10)) bash "$here/ab_bench.sh" "$ab_tmp/trees" "$ATTNMETA_AB_OLD_TREE" "$root" 2 \
    >/dev/null 2>&1 || { say "ab_bench: failed or cut short"; status=1; }
  cat "$ab_tmp/trees/ab.log" >>"$log" 2>/dev/null
  sed -n '/^variant /,$p' "$ab_tmp/trees/ab.log" 2>/dev/null
elif [ -n "${ATTNMETA_AB_OLD_TREE:-}" ]; then
  say "ab_bench: skipped, $(left_s) s left"
fi
say "== gpu_bench: bench.json compare.json compare.png dsv4.json gpu_bench.log in $out"

# ---- 5. the compact table, last ----
python3 - "$out/bench.json" "$out/compare.json" "$bench_rc" "$compare_rc" "$pdl_line" "$paths_line" <<'EOF' 2>&1 | tee -a "$log"
import json, sys

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except Exception as exc:
        print("(%s: %s)" % (path, exc))
        return None

bench, comp = load(sys.argv[1]), load(sys.argv[2])
f = lambda v, d=2: "n/a" if v is None else ("%." + str(d) + "f") % v
live = {}
if comp:
    for c in comp.get("cases", []):
        g = lambda k: (c.get(k) or {}).get("gpu_us", {}).get("median")
        h = lambda k: (c.get(k) or {}).get("host_us", {}).get("median")
        cg = lambda k: ((c.get(k) or {}).get("gpu_us_cold") or {}).get("median")
        live[c["name"]] = dict(torch=g("torch"), triton=g("triton"), am=g("attnmeta"),
                               triton_host=h("triton"), am_host=h("attnmeta"),
                               triton_cold=cg("triton"), am_cold=cg("attnmeta"))
rows = []
if bench:
    fl = bench["floors"]
    print()
    print("%s, attnmeta %s, %s; empty node %.2f us, empty launch %.2f us host, copy %.0f GB/s" % (
        bench["device_name"], bench["library_version"], bench["date"],
        fl["empty_graph_node_us"]["median"], fl["empty_launch_host_us"]["median"],
        fl["copy_bytes_per_s"]["median"] / 1e9))
    variants = bench["variants"]
    for k, case in enumerate(variants[0]["cases"]):
        best = None
        for v in variants:
            c = v["cases"][k]
            if c.get("ok") and (best is None or c["graph"]["us_per_step"]["median"] < best[1]):
                best = (v["label"], c["graph"]["us_per_step"]["median"], c)
        d = case if case.get("ok") else None
        rows.append((case["case"], case["label"], d, best))
print()
print("%-34s %7s %7s %7s %-18s %7s %7s %6s %7s | %7s %7s %7s %6s %7s %7s %7s" % (
    "case", "C GPU", "C cold", "best", "(variant)", "/target", "/tri.a", "launch", "host", "torch",
    "triton", "am", "am/tri", "cold/tri", "tri.h", "am.h"))
names = [r[0] for r in rows] or list(live)
for i, name in enumerate(names):
    label = rows[i][1] if rows else name
    d = rows[i][2] if rows else None
    best = rows[i][3] if rows else None
    l = live.get(name, {})
    gpu = d["graph"]["us_per_step"]["median"] if d else None
    cold = ((d.get("cold") or {}).get("us_per_step") or {}).get("median") if d else None
    print("%-34s %7s %7s %7s %-18s %7s %7s %6s %7s | %7s %7s %7s %6s %7s %7s %7s" % (
        label[:34], f(gpu), f(cold), f(best[1] if best else None), (best[0] if best else "-")[:18],
        f(best[2].get("ratio_to_target") if best else None),
        f(best[2].get("ratio_to_triton_gpu") if best else None),
        f(d["graph"]["launches_per_step"], 0) if d else "n/a",
        f(d["eager"]["host_us_per_step"]["median"], 1) if d else "n/a",
        f(l.get("torch")), f(l.get("triton")), f(l.get("am")),
        f(l["am"] / l["triton"] if l.get("am") and l.get("triton") else None),
        f(l["am_cold"] / l["triton_cold"] if l.get("am_cold") and l.get("triton_cold") else None),
        f(l.get("triton_host"), 1), f(l.get("am_host"), 1)))
print("C GPU = default variant, C cold = the same with the inputs out of L2, best = fastest")
print("variant (device us per step, graph replay); cold/tri = live attnmeta / Triton, both cold;")
print("/target = best / (1.3 x max(empty node, bytes / copy bandwidth)), goal <= 1;")
print("/tri.a = best / Triton anchor of the design notes, goal <= 0.5; host = C eager us per step;")
print("right of | : compare.py live (GPU us; tri.h / am.h = host us per step through Python)")

# Unaligned against aligned (goal <= 1.1): the default variant's GPU time.
odd = {r[0]: r[2]["graph"]["us_per_step"]["median"] for r in rows if r[2]}
# One summary line, last.
def span(vals):
    vals = [v for v in vals if v is not None]
    return "%.2f-%.2f" % (min(vals), max(vals)) if vals else "n/a"
state = lambda rc: "ok" if rc == "0" else "exit %s" % rc
best = [r[3] for r in rows if r[3]]
print(sys.argv[5])
print(sys.argv[6])
print("gpu_bench: attnmeta bench %s, compare.py %s; best/target %s, best/Triton anchor %s, "
      "live attnmeta/triton GPU %s (cold %s), host %s; odd/aligned %s" % (
          state(sys.argv[3]), state(sys.argv[4]),
          span([b[2].get("ratio_to_target") for b in best]),
          span([b[2].get("ratio_to_triton_gpu") for b in best]),
          span([l["am"] / l["triton"] for l in live.values() if l.get("am") and l.get("triton")]),
          span([l["am_cold"] / l["triton_cold"] for l in live.values()
                if l.get("am_cold") and l.get("triton_cold")]),
          span([l["am_host"] / l["triton_host"] for l in live.values()
                if l.get("am_host") and l.get("triton_host")]),
          span([odd[n] / odd[n.split("/")[0]] for n in odd if "/" in n and odd.get(n.split("/")[0])])))
EOF
exit $status
