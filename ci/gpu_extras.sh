#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci/gpu_extras.sh OUTDIR [OLD_TREE] — the GPU checks that ci/gpu.sh leaves
# out, in one command on the NVIDIA test machine (about five minutes):
#
#   build     Release build of this tree (CUDA module for sm_90, no tests),
#             installed into a prefix
#   fused     examples/fused_topk's CUDA program (bit-for-bit checks, then
#             the selection alone, selection + attnmeta_convert_topk, and the
#             fused kernel, timed in CUDA graphs) and tests/gpu's device
#             functions against attnmeta_convert_topk (needs a tests build)
#   readme    the README's torch example against the output the README shows
#   standin   python/tests/vllm_standin_measure.py: launches and times of the
#             vLLM-shaped stand-in builds with and without patch_vllm()
#   ab        bench/ab_bench.sh OLD_TREE against this tree (when OLD_TREE is
#             given), the README cases' device time on one GPU
#   cuda      the Criterion suite (ATTNMETA_EXTRAS_FILTER, default every
#             test) and the conformance vectors on the CUDA backend
#   python    python/run_gpu_tests.sh (torch, CUDA graphs, torch.compile)
#   sglang    bench/sglang_compare.py (SGLang's decode builds against their
#             Triton re-implementations) and `attnmeta pool`'s decode step
#   dsv41     `attnmeta bench`'s DeepSeek-V4.1 step cases (every product of
#             the step in one launch) next to the DSV4 step cases
#   sanitize  compute-sanitizer over the Criterion tests of ATTNMETA_SANITIZE_FILTER
#             (default the pool suites): memcheck, racecheck and synccheck
#   floor     bench/floor_bench.sh: the floor kernels of the part-1 and DSV4
#             steps and `attnmeta bench` over the same cases, side by side
#
# ATTNMETA_EXTRAS lists the steps to run (default: build fused readme
# standin ab); build runs whenever another step does.
#
# Each step's output goes to OUTDIR/<step>.log; OUTDIR/extras.txt has one
# line per step, also printed last. Exit status 0 only when no step failed.
set -uo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 OUTDIR [OLD_TREE]" >&2
  exit 2
fi
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
old=${2:-}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2
export PATH=/usr/local/cuda/bin:$PATH
jobs=$(nproc 2>/dev/null || echo 4)
build=$root/build-extras
prefix=$root/build-extras-prefix
export root out build prefix jobs
lines=()
failed=0

step() { # step NAME LIMIT_S COMMAND...
  local name=$1 secs=$2 start=$SECONDS rc verdict
  shift 2
  if declare -F "$1" >/dev/null; then # a function of this script: in a child bash
    timeout --kill-after=10 "$secs" bash -c "$(declare -f "$1"); \"\$@\"" "$1" "$@" \
      >"$out/$name.log" 2>&1
  else
    timeout --kill-after=10 "$secs" "$@" >"$out/$name.log" 2>&1
  fi
  rc=$?
  if [ "$rc" -eq 0 ]; then verdict=PASS; else verdict=FAIL; failed=1; fi
  lines+=("$(printf '%-8s %-4s %4ss  %s' "$name" "$verdict" "$((SECONDS - start))" \
    "$(grep -v '^\s*$' "$out/$name.log" | tail -n 1 | cut -c1-140)")")
  printf '%s\n' "${lines[-1]}"
}

build_tree() {
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=ON \
    -DATTNMETA_WITH_CUDA=ON -DATTNMETA_WITH_HIP=OFF -DATTNMETA_CUDA_ARCHITECTURES=90 \
    -DCRITERION_ROOT="${CRITERION_ROOT:-$root/.carry/criterion}" \
    ${ATTNMETA_COMMIT:+"-DATTNMETA_COMMIT=$ATTNMETA_COMMIT"} &&
    cmake --build "$build" -j"$jobs" &&
    cmake --install "$build" --prefix "$prefix" >/dev/null
}

fused() {
  local fb=$build-fused
  cmake -S examples/fused_topk -B "$fb" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DFUSED_TOPK_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" &&
    cmake --build "$fb" -j"$jobs" &&
    env -u ATTNMETA_BACKEND "$fb/fused_topk_cuda" &&
    if [ -x "$build/bin/attnmeta_gpu_fused_topk_test" ]; then
      env -u ATTNMETA_BACKEND "$build/bin/attnmeta_gpu_fused_topk_test"
    else
      echo "attnmeta_gpu_fused_topk_test not built"
      false
    fi
}

readme() {
  python3 ci/readme_block.py readme_torch.py >"$out/readme_torch.py" &&
    python3 ci/readme_block.py readme_torch.out >"$out/readme_torch.expected" &&
    PYTHONPATH="$root/python" ATTNMETA_LIBRARY="$build/lib/libattnmeta.so" \
      python3 "$out/readme_torch.py" >"$out/readme_torch.actual" &&
    diff "$out/readme_torch.expected" "$out/readme_torch.actual" &&
    echo "README torch example: output as the README shows"
}

standin() {
  PYTHONPATH="$root/python" ATTNMETA_LIBRARY="$build/lib/libattnmeta.so" \
    python3 python/tests/vllm_standin_measure.py --device cuda --json "$out/standin.json" &&
    echo "stand-in measured: $out/standin.json"
}

cuda() {
  ATTNMETA_TEST_BACKENDS=cuda ATTNMETA_TEST_REQUIRE_BACKENDS=cuda "$build/tests/attnmeta_tests" \
    -j"$jobs" --filter "${ATTNMETA_EXTRAS_FILTER:-*/*}" &&
    "$build/bin/attnmeta" conformance --backend cuda conformance/vectors
}

sglang() {
  PYTHONPATH="$root/python" ATTNMETA_LIBRARY="$build/lib/libattnmeta.so" \
    python3 bench/sglang_compare.py --json "$out/sglang_compare.json" &&
    for n in 1 3; do
      "$build/bin/attnmeta" pool --backend cuda --reqs 64 --ctx 32768 --page-size 64 --topk 2048 \
        --token-table --next-n "$n" --iters 1000 || return 1
    done
}

dsv41() {
  "$build/bin/attnmeta" bench --backend cuda --case dsv41_1x1 --case dsv41_32x2 \
    --case dsv41_128x1 --case dsv41_dcp2_32x2 --case dsv4_1x1 --case dsv4_32x2 \
    --case dsv4_128x1 --json "$out/dsv41_bench.json"
}

sanitize() {
  local tool
  for tool in memcheck racecheck synccheck; do
    ATTNMETA_TEST_BACKENDS=cuda ATTNMETA_TEST_REQUIRE_BACKENDS=cuda compute-sanitizer \
      --tool "$tool" --error-exitcode 1 --require-cuda-init=no --target-processes all "$build/tests/attnmeta_tests" -j1 \
      --filter "${ATTNMETA_SANITIZE_FILTER:-pool*/*}" >"$out/sanitize-$tool.log" 2>&1 ||
      { tail -n 20 "$out/sanitize-$tool.log"; return 1; }
    echo "$tool: $(grep -E 'ERROR SUMMARY|Tested:' "$out/sanitize-$tool.log" | tr '\n' ' ')"
  done
}

wanted() { [[ " ${ATTNMETA_EXTRAS:-build fused readme standin ab} " == *" $1 "* ]]; }

step build 300 build_tree
wanted fused && step fused 120 fused
wanted readme && step readme 60 readme
wanted standin && step standin 120 standin
wanted cuda && step cuda 200 cuda
wanted python && step python 180 bash python/run_gpu_tests.sh "$build" "$out"
wanted sglang && step sglang 150 sglang
wanted sanitize && step sanitize 240 sanitize
wanted dsv41 && step dsv41 120 dsv41
wanted floor && step floor 300 bash bench/floor_bench.sh "$out/floor" "$build"
if [ -n "$old" ] && wanted ab; then
  step ab 420 bash bench/ab_bench.sh "$out/ab" "$old" "$root" 2
  tail -n 40 "$out/ab/ab.log" >"$out/ab.log" 2>/dev/null
fi
printf '%s\n' "${lines[@]}" >"$out/extras.txt"
echo
echo "gpu_extras.sh at $(date -u +%FT%TZ):"
cat "$out/extras.txt"
exit "$failed"
