#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci/gpu.sh OUTDIR — builds attnmeta and runs every GPU check on an NVIDIA
# machine, in one command. See docs/gpu.md.
#
# Needs: the CUDA toolkit (nvcc on PATH or in /usr/local/cuda/bin), CMake,
# a C/C++ compiler, an NVIDIA GPU. No network. Criterion comes from a folder
# prepared by ci/prepare_criterion.sh: $CRITERION_ROOT, else .carry/criterion
# in the source tree.
#
# Steps, in order; each is logged, timed, and recorded PASS, FAIL or SKIP;
# a failing step never stops the later ones:
#   build      Release build (CUDA module for sm_90 and the GPU's own
#              architecture) and, beside it, a CUDA module for an
#              architecture the GPU is not, for the arch step
#   info       attnmeta info
#   criterion  the Criterion suite on the CUDA backend (every case at every
#              launch configuration of the suite)
#   graph      tests/gpu: graph capture and replay
#   streams    tests/gpu: streams, contexts, threads
#   topk_graph tests/gpu: the top-k conversion captured in a graph and replayed
#   conformance  attnmeta conformance over conformance/vectors on the CUDA backend
#   memcheck, racecheck, initcheck, synccheck
#              compute-sanitizer over a subset of the Criterion suite (the
#              hostile-data cases and several normal ones) and the graph test
#              (which replays every scenario also with early start); under
#              racecheck and synccheck also the suite's early-start
#              comparison (early_start/same_bytes_on_every_backend) over five cases
#   arch       the foreign-architecture module is refused with
#              ATTNMETA_ERR_UNSUPPORTED_ARCH and a clear message; a module of
#              older PTX only (80-virtual) opens through the driver's JIT and
#              attnmeta info says "PTX JIT", the main module "SASS"
#   bench      bench/gpu_bench.sh OUTDIR, when that script exists
#   python     python/run_gpu_tests.sh BUILD_DIR OUTDIR, when that script exists
#
# Output: three files of its own, so that the hooks may add theirs and the
# whole stays within eight files: OUTDIR/gpu.log (every step but the
# sanitizers, one section each), OUTDIR/sanitizer.log, and OUTDIR/summary.txt
# (date, GPU, driver, commit, one line per step), also the last lines
# printed. Exit status 0 only when no step failed.
#
# Environment (all optional):
#   CRITERION_ROOT             prepared Criterion folder (default .carry/criterion)
#   ATTNMETA_COMMIT            commit to report where the tree has no .git
#   ATTNMETA_GPU_BUILD_DIR     build folder (default build-gpu in the source tree)
#   ATTNMETA_GPU_DEADLINE_S    seconds the whole run may take (default 510)
#   ATTNMETA_SANITIZE_CASES    case names of the suite run under the sanitizers
#                              (comma-separated; wildcards allowed)
#   ATTNMETA_SANITIZE_FILTER   Criterion --filter for those runs (default step/*)
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNMETA_GPU_BUILD_DIR:-$root/build-gpu}
arch_build=$build-foreign-arch
ptx_build=$build-ptx-only
deadline=${ATTNMETA_GPU_DEADLINE_S:-510}
jobs=$(nproc 2>/dev/null || echo 4)
log=$out/gpu.log
san_log=$out/sanitizer.log
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
: >"$log"
: >"$san_log"
: >"$out/summary.txt"

# ---------------------------------------------------------------- helpers
names=() results=() times=() notes=()
header=()

# summary VERDICT: (re)writes summary.txt: the header, a line per step
# recorded so far, the verdict. Rewritten after every step, so that a run
# stopped from outside still leaves what it found.
summary() {
  {
    printf '%s\n' "${header[@]}"
    for k in "${!names[@]}"; do
      printf '%-10s %-4s %4ss  %s\n' "${names[$k]}" "${results[$k]}" "${times[$k]}" "${notes[$k]}"
    done
    echo "$1"
  } >"$out/summary.txt"
}

record() { # record NAME PASS|FAIL|SKIP SECONDS NOTE
  names+=("$1")
  results+=("$2")
  times+=("$3")
  notes+=("$(printf '%s' "$4" | tr '\n' ' ' | cut -c1-150)")
  printf '[gpu.sh] %-10s %-4s %4ss  %s\n' "$1" "$2" "$3" "${notes[${#notes[@]} - 1]}"
  summary "result: INCOMPLETE, stopped after step $1 ($((SECONDS - start))s)"
}

left() { echo $((deadline - (SECONDS - start))); }

# limit WANT RESERVE: WANT seconds, or what is left before the deadline
# keeping RESERVE for later steps; at least 10.
limit() {
  local l
  l=$(($(left) - $2))
  [ "$l" -gt "$1" ] && l=$1
  [ "$l" -lt 10 ] && l=10
  echo "$l"
}

# run LOG SECONDS CMD...: runs CMD with a time limit, appending a header, its
# output and its exit status to LOG; returns the exit status (124: timed out).
run() {
  local file=$1 secs=$2 rc
  shift 2
  printf '\n=== %s (limit %ss) $ %s\n' "$(date -u +%H:%M:%S)" "$secs" "$*" >>"$file"
  timeout --kill-after=15 "$secs" "$@" >>"$file" 2>&1
  rc=$?
  [ "$rc" -eq 124 ] && echo "=== TIMED OUT after ${secs}s" >>"$file"
  echo "=== exit status $rc" >>"$file"
  return "$rc"
}

# keep STEP FILE...: appends the files to LOG under a section header.
keep() {
  local step=$1
  shift
  printf '\n########## %s ##########\n' "$step" >>"$log"
  cat "$@" >>"$log" 2>/dev/null
}

# How a command ended, in words.
ended() { if [ "$1" = 124 ] || [ "$1" = 137 ]; then echo "TIMED OUT"; else echo "exit $1"; fi; }

# Last Criterion synthesis of a log, without its prefix; where there is none
# (a run cut short), the tests reported so far.
synthesis() {
  local syn
  syn=$(grep -a 'Synthesis:' "$1" | tail -n 1 | sed 's/^.*Synthesis: *//')
  if [ -z "$syn" ]; then
    syn="no synthesis; $(grep -a -c '^\[PASS\]' "$1") passed, $(grep -a -c '^\[FAIL\]' "$1") failed so far"
  fi
  echo "$syn"
}

# Criterion log is clean: a synthesis with tests run, none failing or
# crashing, and no test skipped for want of the backend.
criterion_clean() {
  local syn
  syn=$(synthesis "$1")
  printf '%s' "$syn" | grep -q 'Failing: 0 | Crashing: 0' || return 1
  printf '%s' "$syn" | grep -q 'Tested: 0 ' && return 1
  ! grep -a '\[SKIP\]' "$1" | grep -qi 'not available'
}

# "name: N passed, N failed" line of a tests/gpu program; clean when 0 failed
# and not skipped.
gpu_test_line() { grep -a -E '(: [0-9]+ passed, [0-9]+ failed|^SKIP:)' "$1" | tail -n 1; }
gpu_test_clean() {
  local line
  line=$(gpu_test_line "$1")
  printf '%s' "$line" | grep -q ' passed, 0 failed' && ! grep -aq '^SKIP:' "$1"
}

# Last non-empty line a hook printed (its key figure).
last_line() { grep -a -v '^===' "$1" | grep -a -v '^[[:space:]]*$' | tail -n 1; }

# hook_stage NAME SECONDS CMD...: runs a hook into $tmp/NAME.log, keeps the
# log and records the step (since $t0) with the hook's last line.
hook_stage() {
  local name=$1 secs=$2 rc
  shift 2
  run "$tmp/$name.log" "$secs" "$@"
  rc=$?
  keep "$name" "$tmp/$name.log"
  if [ "$rc" = 0 ]; then
    record "$name" PASS $((SECONDS - t0)) "$(last_line "$tmp/$name.log")"
  else
    record "$name" FAIL $((SECONDS - t0)) "$(ended $rc); $(last_line "$tmp/$name.log")"
  fi
}

# ------------------------------------------------------------ environment
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
nvcc_path=$(command -v nvcc || true)
sanitizer=$(command -v compute-sanitizer || true)
for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [ -z "$sanitizer" ] && [ -x "$c" ] && sanitizer=$c
done

gpu_line=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
gpu_name=${gpu_line%%,*}
gpu_driver=$(printf '%s' "${gpu_line#*,}" | tr -d ' ')
[ -n "$gpu_line" ] || { gpu_name="unknown (nvidia-smi gave nothing)"; gpu_driver=unknown; }
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
case "$cap" in
  [0-9][0-9] | [0-9][0-9][0-9]) ;;
  *) cap="" ;;
esac

commit=${ATTNMETA_COMMIT:-}
if [ -z "$commit" ] && commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null); then
  git -C "$root" diff --quiet HEAD 2>/dev/null || commit="$commit+uncommitted"
fi
[ -n "$commit" ] || commit=$(head -c 40 "$root/.commit" 2>/dev/null || true)
[ -n "$commit" ] || commit=unknown
export ATTNMETA_COMMIT=$commit

crit=${CRITERION_ROOT:-$root/.carry/criterion}
[ -d "$crit" ] && crit=$(cd "$crit" && pwd)

# The module holds code for sm_90 and for the GPU itself.
archs=90
[ -n "$cap" ] && [ "$cap" != 90 ] && archs="90;$cap"
# An architecture whose code cannot run on this GPU (machine code runs only
# on its own major version).
foreign=80-real
case "$cap" in 8?) foreign=90-real ;; esac
# PTX of an architecture not above the GPU's, with no machine code at all.
ptx_only=80-virtual
case "$cap" in 7?) ptx_only=75-virtual ;; esac

header=("attnmeta GPU run $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $commit"
  "GPU: $gpu_name, driver $gpu_driver (compute capability ${cap:-unknown})")
summary "result: INCOMPLETE, nothing run yet"
{
  echo "attnmeta GPU run, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "source: $root, commit $commit"
  echo "GPU: $gpu_name, driver $gpu_driver, compute capability ${cap:-unknown}"
  echo "nvcc: ${nvcc_path:-not found} $("${nvcc_path:-false}" --version 2>/dev/null | grep -o 'release [0-9.]*' || true)"
  echo "cmake: $(cmake --version 2>/dev/null | head -n 1)"
  echo "compute-sanitizer: ${sanitizer:-not found} $("${sanitizer:-false}" --version 2>/dev/null | grep -o 'Version [0-9.]*' || true)"
  echo "Criterion: $crit"
  echo "deadline: ${deadline}s, $jobs cores"
} | tee -a "$log"

# ------------------------------------------------------------------ build
# Ninja where present, unless the build folder already uses another
# generator. Keep going past a target that fails: every later step runs what
# was built.
generator=()
keep_going=(-- -k)
cached=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
if [ "$cached" = Ninja ] || { [ -z "$cached" ] && command -v ninja >/dev/null 2>&1; }; then
  [ -z "$cached" ] && generator=(-G Ninja)
  keep_going=(-- -k 0)
fi
arch_generator=()
[ ! -f "$arch_build/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1 && arch_generator=(-G Ninja)
common=(-DCMAKE_BUILD_TYPE=Release -DATTNMETA_WITH_CUDA=ON -DATTNMETA_WITH_HIP=OFF)
[ -n "$nvcc_path" ] && common+=("-DCMAKE_CUDA_COMPILER=$nvcc_path")
# A tree copied without its own history reports the commit it was given.
[ -n "${ATTNMETA_COMMIT:-}" ] && common+=("-DATTNMETA_COMMIT=$ATTNMETA_COMMIT")

t0=$SECONDS
# The foreign-architecture module, built beside the main build.
(
  run "$tmp/arch_build.log" "$(limit 300 200)" cmake -S "$root" -B "$arch_build" "${arch_generator[@]}" \
    "${common[@]}" -DBUILD_TESTING=OFF "-DATTNMETA_CUDA_ARCHITECTURES=$foreign" &&
    run "$tmp/arch_build.log" "$(limit 300 200)" cmake --build "$arch_build" -j "$jobs" \
      --target attnmeta_cuda &&
    # A module with PTX only, of an older architecture than the GPU: the
    # driver must compile it at open (the path a GPU newer than the
    # module's machine code takes).
    run "$tmp/arch_build.log" "$(limit 300 200)" cmake -S "$root" -B "$ptx_build" "${arch_generator[@]}" \
      "${common[@]}" -DBUILD_TESTING=OFF "-DATTNMETA_CUDA_ARCHITECTURES=$ptx_only" &&
    run "$tmp/arch_build.log" "$(limit 300 200)" cmake --build "$ptx_build" -j "$jobs" \
      --target attnmeta_cuda
) &
arch_pid=$!
build_ok=0
if run "$tmp/build.log" "$(limit 300 200)" cmake -S "$root" -B "$build" "${generator[@]}" "${common[@]}" \
  -DBUILD_TESTING=ON "-DATTNMETA_CUDA_ARCHITECTURES=$archs" "-DCRITERION_ROOT=$crit" &&
  run "$tmp/build.log" "$(limit 300 200)" cmake --build "$build" -j "$jobs" "${keep_going[@]}"; then
  build_ok=1
fi
wait "$arch_pid"
arch_build_rc=$?
keep build "$tmp/build.log"
keep "build: foreign-architecture module ($foreign)" "$tmp/arch_build.log"
targets=$(grep -a -o 'CUDA module for .*' "$tmp/build.log" | head -n 1)
if [ "$build_ok" = 1 ]; then
  note="${targets:-CUDA module built}"
  if [ "$arch_build_rc" = 0 ]; then
    note="$note; foreign module $foreign"
  else
    note="$note; foreign module $foreign FAILED"
  fi
  record build PASS $((SECONDS - t0)) "$note"
else
  record build FAIL $((SECONDS - t0)) "configure or build failed (gpu.log, section build)"
fi

bin=$build/bin
tests_bin=$bin/attnmeta_tests
[ -x "$tests_bin" ] || tests_bin=$(find "$build" -name attnmeta_tests -type f -perm -u+x 2>/dev/null | head -n 1)
# The suite on the CUDA backend alone. It finds the prepared Criterion's
# libraries through its run paths; only where that fails (a folder prepared
# without patchelf) does the loader get told, and only for the suite, whose
# copies of common libraries (libz, libcrypto) must not reach other programs.
suite_env=(ATTNMETA_TEST_BACKENDS=cuda)
if [ -n "$tests_bin" ] && ldd "$tests_bin" 2>/dev/null | grep -q 'not found'; then
  suite_env+=("LD_LIBRARY_PATH=$crit/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
fi

# ------------------------------------------------------------------- info
t0=$SECONDS
if [ -x "$bin/attnmeta" ]; then
  run "$tmp/info.log" "$(limit 60 300)" "$bin/attnmeta" info
  rc=$?
  keep info "$tmp/info.log"
  # The first line after the CUDA backend's header that is not its module's
  # path: its first device, or why none.
  dev=$(awk '/^backend cuda/ {f = 1; next} f && !/^ *module: / {sub(/^ */, ""); print; exit}' "$tmp/info.log")
  if [ "$rc" = 0 ] && printf '%s' "$dev" | grep -q '^device 0: ' &&
    ! printf '%s' "$dev" | grep -q 'cannot open'; then
    record info PASS $((SECONDS - t0)) "$dev"
  else
    record info FAIL $((SECONDS - t0)) "$(ended $rc); ${dev:-no CUDA backend listed}"
  fi
else
  record info FAIL 0 "attnmeta (the command-line tool) not built"
fi

# -------------------------------------------------------------- criterion
t0=$SECONDS
if [ -z "$tests_bin" ]; then
  record criterion FAIL 0 "attnmeta_tests not built (Criterion found at $crit? see gpu.log)"
else
  run "$tmp/criterion.log" "$(limit 180 280)" env "${suite_env[@]}" "$tests_bin" --color=never \
    -j "$jobs" --verbose
  rc=$?
  keep criterion "$tmp/criterion.log"
  syn=$(synthesis "$tmp/criterion.log")
  if [ "$rc" = 0 ] && criterion_clean "$tmp/criterion.log"; then
    record criterion PASS $((SECONDS - t0)) "$syn"
  else
    record criterion FAIL $((SECONDS - t0)) "$(ended $rc); $syn"
  fi
fi

# ---------------------------------------------------------- graph, streams
for t in graph:attnmeta_gpu_graph_test streams:attnmeta_gpu_stream_test topk_graph:attnmeta_gpu_topk_graph_test \
    topk_early_chain:attnmeta_gpu_topk_early_chain_test; do
  name=${t%%:*}
  exe=$bin/${t#*:}
  t0=$SECONDS
  if [ ! -x "$exe" ]; then
    record "$name" FAIL 0 "${t#*:} not built"
    continue
  fi
  run "$tmp/$name.log" "$(limit 120 260)" "$exe"
  rc=$?
  keep "$name" "$tmp/$name.log"
  line=$(gpu_test_line "$tmp/$name.log")
  if [ "$rc" = 0 ] && gpu_test_clean "$tmp/$name.log"; then
    record "$name" PASS $((SECONDS - t0)) "$line"
  else
    record "$name" FAIL $((SECONDS - t0)) "$(ended $rc); ${line:-no result line}"
  fi
done

# ------------------------------------------------------------ conformance
# The conformance kit's vector files on the CUDA backend (docs/conformance.md).
t0=$SECONDS
run "$tmp/conformance.log" "$(limit 60 120)" "$bin/attnmeta" conformance --backend cuda \
  "$root/conformance/vectors"
rc=$?
keep conformance "$tmp/conformance.log"
line=$(grep -a -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/conformance.log" | tail -n 1)
if [ "$rc" = 0 ] && [ -n "$line" ]; then
  record conformance PASS $((SECONDS - t0)) "$line"
else
  record conformance FAIL $((SECONDS - t0)) "$(ended $rc); ${line:-no summary line}"
fi

# ------------------------------------------------------------- sanitizers
# Each tool runs the suite one test process at a time (--jobs 1), following
# the worker processes Criterion starts (--target-processes all), over the
# cases the suite's ATTNMETA_TEST_CASES selects: every hostile-data case and
# a few normal ones, each at every launch configuration; then the graph test.
# A run cut short by its time limit fails and says so.

# Comma-separated case names; a name with a wildcard stands for every name
# of the case table (conformance/generator/cases.c) it matches.
expand_cases() {
  local names g n picked=() globs
  names=$(grep -o '{"[A-Za-z0-9_]*"' "$root/conformance/generator/cases.c" 2>/dev/null | tr -d '{"')
  IFS=, read -ra globs <<<"$1"
  for g in "${globs[@]}"; do
    case "$g" in
      *[*?[]*)
        for n in $names; do
          # shellcheck disable=SC2053 # $g is a pattern
          [[ $n == $g ]] && picked+=("$n")
        done
        ;;
      *) picked+=("$g") ;;
    esac
  done
  (
    IFS=,
    echo "${picked[*]}"
  )
}
san_cases=$(expand_cases "${ATTNMETA_SANITIZE_CASES:-hostile_*,seq_*,neg_block_ids*,past_table*,mixed_pad17,cols63_vec_misaligned,rows_in1_out3*,rows_in3_out1*,req257_among_empty,dcp_w4_i2_bs64}")
san_filter=${ATTNMETA_SANITIZE_FILTER:-step/*}
# The early-start comparison under racecheck and synccheck: a few normal
# cases (padding, empty requests, misaligned and sliced rows, a long request)
early_cases=$(expand_cases "mixed_pad17,cols63_vec_misaligned,rows_in1_out3*,req257_among_empty,cap_tail_5000")
echo "cases under the sanitizers (ATTNMETA_TEST_CASES): $san_cases" >>"$san_log"
grep -qs ATTNMETA_TEST_CASES "$root"/tests/*.c ||
  echo "note: the suite does not read ATTNMETA_TEST_CASES: all of $san_filter runs" >>"$san_log"
tools=(memcheck racecheck initcheck synccheck)
tool_weight() { if [ "$1" = racecheck ]; then echo 3; else echo 1; fi; }
# Time kept for the steps after the sanitizers.
reserve=40
[ -f "$root/bench/gpu_bench.sh" ] && reserve=$((reserve + 90))
[ -f "$root/python/run_gpu_tests.sh" ] && reserve=$((reserve + 60))
i=0
# Errors a compute-sanitizer log reports, summed over its processes: the
# "ERROR SUMMARY: N errors" of memcheck, initcheck and synccheck, and the
# "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)" of racecheck.
sanitizer_errors() {
  grep -a -o -E 'ERROR SUMMARY: [0-9]+|RACECHECK SUMMARY: [0-9]+ hazards displayed \([0-9]+ errors' "$1" |
    awk '/RACECHECK/ {gsub(/\(/, "", $6); s += $6; next} {s += $3} END {print s + 0}'
}

for tool in "${tools[@]}"; do
  t0=$SECONDS
  if [ -z "$sanitizer" ]; then
    record "$tool" FAIL 0 "compute-sanitizer not found"
    continue
  fi
  if [ -z "$tests_bin" ] || [ ! -x "$bin/attnmeta_gpu_graph_test" ]; then
    record "$tool" FAIL 0 "attnmeta_tests or attnmeta_gpu_graph_test not built"
    continue
  fi
  # A share of what is left for the tools still to run, by weight:
  # racecheck, the slowest (about 95 s on the H200, where an equal share
  # once stopped its suite), weighs three, the others (16-18 s) one.
  weights_left=0
  for t in "${tools[@]:i}"; do weights_left=$((weights_left + $(tool_weight "$t"))); done
  share=$((($(left) - reserve) * $(tool_weight "$tool") / weights_left))
  [ "$share" -gt 150 ] && share=150
  [ "$share" -lt 40 ] && share=40
  i=$((i + 1))
  san=("$sanitizer" --tool "$tool" --error-exitcode 86 --print-limit 20 --require-cuda-init=no)
  : >"$tmp/san_suite.log"
  : >"$tmp/san_graph.log"
  run "$tmp/san_suite.log" $((share * 4 / 5)) env "${suite_env[@]}" "ATTNMETA_TEST_CASES=$san_cases" \
    "${san[@]}" --target-processes all "$tests_bin" --color=never -j1 --verbose \
    "--filter=$san_filter"
  rc_suite=$?
  run "$tmp/san_graph.log" $((share / 5 + 10)) "${san[@]}" "$bin/attnmeta_gpu_graph_test"
  rc_graph=$?
  # The conformance runner checks every vector in ONE process, so nothing
  # depends on the sanitizer following Criterion's workers.
  # racecheck runs the vectors about twice as slowly as the other tools
  # (38 s were not enough for the 197 vectors on the H200).
  conf_limit=$((share / 3 + 10))
  [ "$tool" = racecheck ] && conf_limit=$((share * 2 / 3 + 20))
  : >"$tmp/san_conf.log"
  run "$tmp/san_conf.log" "$conf_limit" "${san[@]}" "$bin/attnmeta" conformance \
    --backend cuda --config auto --config block96_lanes7 "$root/conformance/vectors"
  rc_conf=$?
  # Early start (programmatic dependent launch) under the race and barrier
  # checkers: the suite's comparison of every case with and without it (the
  # graph test above also replays every scenario with it on).
  : >"$tmp/san_early.log"
  rc_early=0
  if [ "$tool" = racecheck ] || [ "$tool" = synccheck ]; then
    run "$tmp/san_early.log" $((share / 4 + 10)) env "${suite_env[@]}" "ATTNMETA_TEST_CASES=$early_cases" \
      "${san[@]}" --target-processes all "$tests_bin" --color=never -j1 --verbose \
      "--filter=early_start/same_bytes_on_every_backend"
    rc_early=$?
    errs_early=$(sanitizer_errors "$tmp/san_early.log")
    if [ "$rc_early" = 0 ] && [ "$errs_early" != 0 ]; then rc_early=86; fi
    if [ "$rc_early" = 0 ] && ! criterion_clean "$tmp/san_early.log"; then rc_early=1; fi
  fi
  printf '\n########## %s ##########\n' "$tool" >>"$san_log"
  cat "$tmp/san_suite.log" "$tmp/san_graph.log" "$tmp/san_conf.log" "$tmp/san_early.log" >>"$san_log"
  errs_conf=$(sanitizer_errors "$tmp/san_conf.log")
  errs_suite=$(sanitizer_errors "$tmp/san_suite.log")
  procs=$(grep -a -c -E '(ERROR|RACECHECK) SUMMARY:' "$tmp/san_suite.log")
  errs_graph=$(sanitizer_errors "$tmp/san_graph.log")
  syn=$(synthesis "$tmp/san_suite.log")
  note="suite: $errs_suite errors in $procs processes, $syn; graph test: $errs_graph errors"
  note="$note; conformance: $errs_conf errors ($(ended $rc_conf))"
  [ -s "$tmp/san_early.log" ] && note="$note; early start: $(synthesis "$tmp/san_early.log" | cut -c1-40) ($(ended $rc_early))"
  if [ "$rc_suite" = 0 ] && [ "$rc_graph" = 0 ] && [ "$errs_suite" = 0 ] && [ "$errs_graph" = 0 ] &&
    [ "$rc_conf" = 0 ] && [ "$errs_conf" = 0 ] && [ "$rc_early" = 0 ] &&
    [ "$procs" -gt 0 ] && criterion_clean "$tmp/san_suite.log" && gpu_test_clean "$tmp/san_graph.log"; then
    record "$tool" PASS $((SECONDS - t0)) "$note"
  else
    record "$tool" FAIL $((SECONDS - t0)) "suite $(ended $rc_suite), graph test $(ended $rc_graph); $note"
  fi
done

# ------------------------------------------------------------------- arch
t0=$SECONDS
if [ "$arch_build_rc" != 0 ] || [ ! -f "$arch_build/lib/libattnmeta_cuda.so" ]; then
  record arch FAIL 0 "the $foreign module was not built (gpu.log, section build)"
elif [ ! -x "$bin/attnmeta_gpu_arch_check" ]; then
  record arch FAIL 0 "attnmeta_gpu_arch_check not built"
else
  # The foreign module must be refused; the main module must open.
  run "$tmp/arch.log" 60 env "ATTNMETA_MODULE_DIR=$arch_build/lib" \
    "$bin/attnmeta_gpu_arch_check" --expect-unsupported
  rc_foreign=$?
  run "$tmp/arch.log" 60 env "ATTNMETA_MODULE_DIR=$arch_build/lib" "$bin/attnmeta" info
  run "$tmp/arch.log" 60 "$bin/attnmeta_gpu_arch_check"
  rc_own=$?
  # The main module runs machine code (SASS) on this GPU; the PTX-only
  # module opens too, compiled by the driver, and attnmeta info says so.
  "$bin/attnmeta" info >"$tmp/info_own.txt" 2>&1
  cat "$tmp/info_own.txt" >>"$tmp/arch.log"
  rc_ptx=1
  if [ -f "$ptx_build/lib/libattnmeta_cuda.so" ]; then
    run "$tmp/arch.log" 60 env "ATTNMETA_MODULE_DIR=$ptx_build/lib" "$bin/attnmeta_gpu_arch_check"
    rc_ptx=$?
    env "ATTNMETA_MODULE_DIR=$ptx_build/lib" "$bin/attnmeta" info >"$tmp/info_ptx.txt" 2>&1
    cat "$tmp/info_ptx.txt" >>"$tmp/arch.log"
    grep -aq "^  device 0: .*, PTX JIT from compute_${ptx_only%-virtual})" "$tmp/info_ptx.txt" || rc_ptx=1
  else
    echo "the PTX-only module ($ptx_only) was not built" >>"$tmp/arch.log"
  fi
  grep -aq "^  device 0: .*, SASS sm_" "$tmp/info_own.txt" || rc_own=1
  keep arch "$tmp/arch.log"
  said=$(grep -a -m 1 'attnmeta_open(CUDA) ->' "$tmp/arch.log" | sed 's/^[^>]*-> //')
  ptx_said=$(grep -a -m 1 -o 'PTX JIT from compute_[0-9]*' "$tmp/info_ptx.txt" 2>/dev/null)
  if [ "$rc_foreign" = 0 ] && [ "$rc_own" = 0 ] && [ "$rc_ptx" = 0 ] && ! grep -aq '^SKIP:' "$tmp/arch.log"; then
    record arch PASS $((SECONDS - t0)) "${said:-refused}; $ptx_only module opens (${ptx_said})"
  else
    record arch FAIL $((SECONDS - t0)) "$(ended $rc_foreign)/$(ended $rc_own)/ptx $(ended $rc_ptx); ${said:-no result}"
  fi
fi

# ------------------------------------------------------------------ hooks
# Each hook gets the build folder and the seconds it may take; its output
# goes into gpu.log, its last line into the summary.
export ATTNMETA_GPU_BUILD_DIR=$build
t0=$SECONDS
if [ -f "$root/bench/gpu_bench.sh" ]; then
  keep_s=10
  [ -f "$root/python/run_gpu_tests.sh" ] && keep_s=70
  ATTNMETA_GPU_TIME_LEFT_S=$(limit 600 "$keep_s")
  export ATTNMETA_GPU_TIME_LEFT_S
  hook_stage bench $((ATTNMETA_GPU_TIME_LEFT_S + 5)) bash "$root/bench/gpu_bench.sh" "$out"
else
  record bench SKIP 0 "bench/gpu_bench.sh not present"
fi
t0=$SECONDS
if [ -f "$root/python/run_gpu_tests.sh" ]; then
  ATTNMETA_GPU_TIME_LEFT_S=$(limit 600 5)
  export ATTNMETA_GPU_TIME_LEFT_S
  hook_stage python "$ATTNMETA_GPU_TIME_LEFT_S" bash "$root/python/run_gpu_tests.sh" "$build" "$out"
else
  record python SKIP 0 "python/run_gpu_tests.sh not present"
fi

# ---------------------------------------------------------------- summary
failed=0
for r in "${results[@]}"; do [ "$r" = FAIL ] && failed=$((failed + 1)); done
if [ "$failed" = 0 ]; then
  summary "result: PASS, ${#names[@]} steps, none failed, $((SECONDS - start))s"
else
  summary "result: FAIL, $failed of ${#names[@]} steps failed, $((SECONDS - start))s (details: gpu.log, sanitizer.log)"
fi
echo
cat "$out/summary.txt"
[ "$failed" = 0 ]
