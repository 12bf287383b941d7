#!/usr/bin/env bash
# ci/find_hip_cpu.sh: prints the HIP-CPU folder the tests use (the HIP
# backend run on the CPU, docs/conformance.md), looked for in order at
#   $ATTNMETA_HIP_CPU_ROOT, third_party/hip-cpu (in the tree),
#   ../shared/third_party/hip-cpu (beside the checkout).
# Exits 1, printing nothing, when none exists; exits 2 when
# $ATTNMETA_HIP_CPU_ROOT is set but holds no HIP-CPU (an explicit choice is
# never replaced by another copy).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
has_hip_cpu() { [ -f "$1/include/hip/hip_runtime.h" ] && [ -d "$1/src/include/hip" ]; }
if [ -n "${ATTNMETA_HIP_CPU_ROOT:-}" ]; then
  if has_hip_cpu "$ATTNMETA_HIP_CPU_ROOT"; then
    (cd "$ATTNMETA_HIP_CPU_ROOT" && pwd)
    exit 0
  fi
  echo "ci/find_hip_cpu.sh: ATTNMETA_HIP_CPU_ROOT=$ATTNMETA_HIP_CPU_ROOT holds no HIP-CPU" >&2
  exit 2
fi
for d in "$root/third_party/hip-cpu" "$root/../shared/third_party/hip-cpu"; do
  if has_hip_cpu "$d"; then
    (cd "$d" && pwd)
    exit 0
  fi
done
exit 1
