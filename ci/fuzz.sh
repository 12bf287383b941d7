#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci/fuzz.sh [SECONDS]
#
# Builds the libFuzzer harnesses (fuzz/) with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs each for SECONDS (default 60) on a
# temporary copy of its committed corpus fuzz/corpus/<harness>/ (the
# committed corpus never grows in CI). Exits non-zero when a harness finds a
# crash, a failed check, a leak or a timeout; the input is kept under
# BUILD/fuzz-artifacts/ and printed in base64 so it can be committed as a
# regression seed.
#
# Environment:
#   ATTNMETA_FUZZ_BUILD_DIR  build folder (default build-fuzz)
#   ATTNMETA_FUZZ_CC         clang to use (default clang, else clang-14)
#   ATTNMETA_FUZZ_JOBS       parallel fuzzing processes per harness (default 1)
#   ATTNMETA_FUZZ_BUILD_ONLY 1: build the harnesses and stop (ci/fuzz_campaign.sh)
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-60}
build=${ATTNMETA_FUZZ_BUILD_DIR:-$root/build-fuzz}
case $build in /*) ;; *) build=$root/$build ;; esac
jobs=${ATTNMETA_FUZZ_JOBS:-1}
harnesses=(fuzz_step fuzz_args fuzz_vecfile)

case $seconds in
  '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac

cc=${ATTNMETA_FUZZ_CC:-}
if [ -z "$cc" ]; then
  for c in clang clang-14; do
    if command -v "$c" >/dev/null 2>&1; then cc=$c; break; fi
  done
fi
if [ -z "$cc" ]; then
  echo "ci/fuzz.sh: clang not found (apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi

mkdir -p "$build"
echo "=== fuzz: build with $cc in $build"
# A cache made with another compiler makes CMake drop the cache and the
# options given with it: empty such a build folder first (only a build
# folder: one with a CMakeCache.txt and no CMakeLists.txt).
if [ -f "$build/CMakeCache.txt" ] && [ ! -f "$build/CMakeLists.txt" ]; then
  cached=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
  cached=$(command -v "$cached" 2>/dev/null || echo "$cached")
  if [ "$(readlink -f "$cached" 2>/dev/null)" != "$(readlink -f "$(command -v "$cc")" 2>/dev/null)" ]; then
    echo "fuzz: $build was configured with $cached; emptying it to configure with $cc"
    find "$build" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
  fi
fi
if ! cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DATTNMETA_FUZZ=ON -DBUILD_TESTING=OFF -DATTNMETA_WITH_CUDA=OFF -DATTNMETA_WITH_HIP=OFF \
  >"$build/configure.log" 2>&1; then
  cat "$build/configure.log"
  exit 1
fi
if ! grep -qx "ATTNMETA_FUZZ:BOOL=ON" "$build/CMakeCache.txt"; then
  echo "ci/fuzz.sh: $build/CMakeCache.txt lacks ATTNMETA_FUZZ=ON" >&2
  exit 1
fi
cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)" --target "${harnesses[@]}" || exit 1
if [ "${ATTNMETA_FUZZ_BUILD_ONLY:-0}" = 1 ]; then
  echo "ci/fuzz.sh: harnesses built in $build/fuzz"
  exit 0
fi

artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()

max_len_of() {
  case $1 in
    fuzz_step) echo 1024 ;;
    fuzz_vecfile) echo 4096 ;;
    *) echo 512 ;;
  esac
}

for h in "${harnesses[@]}"; do
  corpus=$work/$h
  mkdir -p "$corpus"
  if [ -d "$root/fuzz/corpus/$h" ]; then cp "$root/fuzz/corpus/$h/." "$corpus/" -R; fi
  echo "=== fuzz: $h for ${seconds}s on $(find "$corpus" -type f | wc -l) seed inputs"
  rm -f "$artifacts/$h-"*
  args=(-max_total_time="$seconds" -max_len="$(max_len_of "$h")" -timeout=60
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$artifacts/$h-")
  if [ "$jobs" -gt 1 ]; then args+=(-jobs="$jobs" -workers="$jobs"); fi
  # no GPU module may be loaded from an installation (a vendor runtime
  # loaded without a device has leaks of its own): an empty module folder
  mkdir -p "$work/no-modules"
  ( cd "$work" && ATTNMETA_MODULE_DIR="$work/no-modules" "$build/fuzz/$h" "${args[@]}" "$corpus" ) \
    >"$work/$h.log" 2>&1
  rc=$?
  if [ "$jobs" -gt 1 ]; then cat "$work"/fuzz-*.log >>"$work/$h.log" 2>/dev/null; rm -f "$work"/fuzz-*.log; fi
  grep -E '^(stat::|#[0-9]+[[:space:]]+DONE)' "$work/$h.log" | sed "s/^/  $h: /"
  found=$(find "$artifacts" -name "$h-*" -type f 2>/dev/null | head -n 5)
  if [ $rc -ne 0 ] || [ -n "$found" ]; then
    echo "=== fuzz: $h FAILED (exit $rc)"
    tail -n 60 "$work/$h.log"
    for f in $found; do
      echo "--- $f (base64; commit it under fuzz/corpus/$h/ as a regression seed):"
      base64 -w 0 "$f"
      echo
    done
    failed+=("$h")
  else
    echo "=== fuzz: $h ok"
  fi
done

if [ ${#failed[@]} -eq 0 ]; then
  echo "ci/fuzz.sh: every harness ran ${seconds}s without a finding"
  exit 0
fi
echo "ci/fuzz.sh: findings in: ${failed[*]}"
exit 1
