#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci/sanitize.sh [BUILD_DIR]
#
# 1. AddressSanitizer + UndefinedBehaviorSanitizer: configures the whole
#    project with -DATTNMETA_SANITIZE=ON in BUILD_DIR (default
#    build-sanitize), builds it and runs every ctest test: the Criterion
#    suite, the stress and misuse tests of tests/stress/, and the replay of
#    the committed fuzz corpus. Leak detection stays on.
#    When ci/find_hip_cpu.sh finds HIP-CPU, the same build holds the HIP
#    module built on HIP-CPU (sanitized like the rest), and a stage runs
#    every conformance vector through it at multi-thread launch configs,
#    and the fuzz_step corpus in the harness's HIP-CPU mode; its leak check
#    leaves out HIP-CPU's own runtime state (tests/hip_cpu/lsan.supp).
# 2. clang with more than undefined behaviour: the whole project again in
#    BUILD_DIR-clang with -fsanitize=address,undefined,float-cast-overflow,
#    unsigned-integer-overflow,implicit-conversion (-DATTNMETA_SANITIZE_INTEGER
#    =ON) and every ctest test. The unsigned arithmetic that wraps on purpose
#    goes through named helpers (AM_WRAPS in src/common/am_dialect.h,
#    FZ_WRAPS in the fuzz code, the marked PRNGs of the tests); nothing else is
#    exempt. A missing clang fails the stage (ci/deps.sh installs it).
# 3. ThreadSanitizer: a second build of the library and tests/stress only,
#    in BUILD_DIR-tsan, running the "stress" tests. tests/stress/tsan.supp
#    lists the known, documented race (docs/reliability.md, "Threads").
#
# GPU modules are neither built nor loaded here (ATTNMETA_MODULE_DIR points
# at an empty folder): the sanitizers are host-only, and a vendor runtime
# loaded without a device has leaks of its own. Exits non-zero when a build
# or a test fails. Environment:
#   ATTNMETA_SANITIZE_CC   C compiler (default gcc; clang works too)
#   ATTNMETA_SKIP_TSAN=1   skip the ThreadSanitizer stage
#   ATTNMETA_SKIP_CLANG_INTEGER=1  skip the clang integer-checks stage
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${1:-$root/build-sanitize}
case $build in /*) ;; *) build=$root/$build ;; esac
cc=${ATTNMETA_SANITIZE_CC:-gcc}
jobs=$(nproc 2>/dev/null || echo 2)
failures=()

stage() { # stage NAME COMMAND...: runs one stage, records failure, keeps going
  local name=$1
  shift
  echo "=== sanitize: $name"
  if "$@"; then
    echo "=== sanitize: $name: ok"
  else
    echo "=== sanitize: $name: FAILED"
    failures+=("$name")
    return 1
  fi
}

common=(-DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON
  -DATTNMETA_WITH_CUDA=OFF -DATTNMETA_WITH_HIP=OFF)

# Sanitizer reports end the process with an error; every report names its
# stack. Criterion forks one worker per test: each worker runs under the
# same options, and LeakSanitizer checks each process as it exits.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# One Criterion worker at a time: with several at once, Criterion's own
# runner process sometimes leaks one 48-byte block of its own (allocated in
# libcriterion, seen when tests with a .timeout overlap), which
# LeakSanitizer reports as a failure of the whole suite.
export CRITERION_JOBS=${CRITERION_JOBS:-1}

# A cache made with another compiler makes CMake drop the cache and the
# options given with it (and leaves that build's libraries behind): empty
# such a build folder first (only a build folder: one with a CMakeCache.txt
# and no CMakeLists.txt).
fresh_if_other_compiler() { # DIR
  local cached want
  [ -f "$1/CMakeCache.txt" ] && [ ! -f "$1/CMakeLists.txt" ] || return 0
  cached=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$1/CMakeCache.txt")
  cached=$(command -v "$cached" 2>/dev/null || echo "$cached")
  want=$(command -v "$cc" 2>/dev/null || echo "$cc")
  if [ "$(readlink -f "$cached" 2>/dev/null)" != "$(readlink -f "$want" 2>/dev/null)" ]; then
    echo "sanitize: $1 was configured with $cached; emptying it to configure with $want"
    find "$1" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
  fi
}

# The cache must say what was asked (a silently unsanitized build passes).
cache_has() { # DIR LINE
  grep -qxF "$2" "$1/CMakeCache.txt" || { echo "sanitize: $1/CMakeCache.txt lacks $2" >&2; return 1; }
}

# The HIP module on HIP-CPU (empty: not built, its stage says so).
hip_cpu_root=$(bash "$root/ci/find_hip_cpu.sh" 2>/dev/null) || hip_cpu_root=""

asan_build() {
  mkdir -p "$build"
  fresh_if_other_compiler "$build"
  cmake -S "$root" -B "$build" "${common[@]}" -DATTNMETA_SANITIZE=ON \
    -DATTNMETA_HIP_CPU_ROOT="$hip_cpu_root" >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log"; return 1; }
  cache_has "$build" "ATTNMETA_SANITIZE:BOOL=ON" || return 1
  cmake --build "$build" -j"$jobs"
}
# No GPU module is built here, and none may come from an installation
# either: the module folder the tests see is empty.
no_modules=$(mktemp -d)
trap 'rm -rf "$no_modules"' EXIT

asan_test() {
  ATTNMETA_MODULE_DIR=$no_modules ctest --test-dir "$build" --output-on-failure -j"$jobs" -LE hip-cpu
}

# Every vector at three multi-thread configs (staging and its barrier,
# 7 lanes x 13 groups, 65 lanes x 6 groups over 6 blocks), then the fuzz
# corpus with each input also run on HIP-CPU. About 2 minutes on 2 cores.
# HIP-CPU runs a block's threads as fibers on stacks of its own, which
# ASan's fake stacks for use-after-return cannot follow (false reports):
# that one check is off here. Those stacks are 7168 bytes each, next to
# each other in memory: a kernel frame (ASan's redzones make them large)
# that outgrows one runs into the neighbouring fiber's stack, so the kernels' frame sizes are checked
# first (ci/hip_cpu_fiber_frames.sh).
asan_hip_cpu_test() {
  local start=$SECONDS
  bash "$root/ci/hip_cpu_fiber_frames.sh" "$build/hip-cpu/libattnmeta_hip.so" || return 1
  ASAN_OPTIONS=$ASAN_OPTIONS:detect_stack_use_after_return=0 \
  ATTNMETA_MODULE_DIR=$build/hip-cpu LSAN_OPTIONS=suppressions=$root/tests/hip_cpu/lsan.supp \
    "$build/bin/attnmeta" conformance --backend hip --config block32_grid2_stage1 \
    --config block96_lanes7 --config block=390,lanes=65,grid=6,stage=1 "$root/conformance/vectors" |
    grep -v '^pass ' &&
    ASAN_OPTIONS=$ASAN_OPTIONS:detect_stack_use_after_return=0 \
      ATTNMETA_MODULE_DIR=$build/hip-cpu ATTNMETA_FUZZ_HIP_CPU=1 \
      LSAN_OPTIONS=suppressions=$root/tests/hip_cpu/lsan.supp \
      "$build/fuzz/fuzz_step_replay" "$root/fuzz/corpus/fuzz_step" || return 1
  echo "sanitize: HIP-CPU module: $((SECONDS - start)) s"
}

clang_cc() { # the clang to use, or nothing
  local c
  for c in clang clang-14; do
    if command -v "$c" >/dev/null 2>&1 && command -v "${c/clang/clang++}" >/dev/null 2>&1; then
      echo "$c"
      return
    fi
  done
}
clang_build() {
  local dir=$build-clang c
  c=$(clang_cc)
  mkdir -p "$dir"
  cc=$c fresh_if_other_compiler "$dir"
  cmake -S "$root" -B "$dir" -DCMAKE_C_COMPILER="$c" -DCMAKE_CXX_COMPILER="${c/clang/clang++}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON -DATTNMETA_WITH_CUDA=OFF \
    -DATTNMETA_WITH_HIP=OFF -DATTNMETA_SANITIZE=ON -DATTNMETA_SANITIZE_INTEGER=ON \
    >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; return 1; }
  cache_has "$dir" "ATTNMETA_SANITIZE_INTEGER:BOOL=ON" || return 1
  cmake --build "$dir" -j"$jobs"
}
clang_test() {
  ATTNMETA_MODULE_DIR=$no_modules ctest --test-dir "$build-clang" --output-on-failure -j"$jobs"
}

tsan_build() {
  mkdir -p "$build-tsan"
  local flags="-fsanitize=thread -fno-omit-frame-pointer -g -O1"
  fresh_if_other_compiler "$build-tsan"
  cmake -S "$root" -B "$build-tsan" "${common[@]}" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
    >"$build-tsan/configure.log" 2>&1 || { cat "$build-tsan/configure.log"; return 1; }
  cache_has "$build-tsan" "CMAKE_C_FLAGS:STRING=$flags" || return 1
  cmake --build "$build-tsan" -j"$jobs" --target attnmeta_stress_threads attnmeta_api_misuse
}
tsan_test() {
  ATTNMETA_MODULE_DIR=$no_modules \
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/stress/tsan.supp" \
    ctest --test-dir "$build-tsan" --output-on-failure -L stress -E '^module_env$'
}

mkdir -p "$(dirname "$build")"
stage "ASan+UBSan build ($cc)" asan_build &&
  stage "ASan+UBSan tests (ctest)" asan_test
if [ -z "$hip_cpu_root" ]; then
  echo "=== sanitize: HIP module on HIP-CPU: SKIPPED: no HIP-CPU (see ci/find_hip_cpu.sh)"
elif [ -x "$build/bin/attnmeta" ]; then
  stage "ASan+UBSan HIP module on HIP-CPU: vectors and fuzz corpus" asan_hip_cpu_test
fi
if [ "${ATTNMETA_SKIP_CLANG_INTEGER:-0}" != 1 ]; then
  if [ -n "$(clang_cc)" ]; then
    stage "clang ASan+UBSan+integer checks build" clang_build &&
      stage "clang ASan+UBSan+integer checks tests (ctest)" clang_test
  else
    echo "=== sanitize: clang not installed: the integer-checks stage FAILED"
    failures+=("clang integer checks (clang not installed)")
  fi
fi
if [ "${ATTNMETA_SKIP_TSAN:-0}" != 1 ]; then
  stage "TSan build of tests/stress ($cc)" tsan_build &&
    stage "TSan stress tests" tsan_test
fi

if [ ${#failures[@]} -eq 0 ]; then
  echo "ci/sanitize.sh: all stages passed"
  exit 0
fi
printf 'ci/sanitize.sh: FAILED stages:\n'
printf '  %s\n' "${failures[@]}"
exit 1
