#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/gpu_code_hashes.sh [SOURCE_ROOT]
#
# Compiles the GPU code of the CUDA and HIP modules (device side only) and
# prints the SHA-256 of each: the sm_90 PTX (nvcc) and the gfx90a code object
# (clang -x hip, as with Debian's ROCm packages). A host-side or test-only
# change must leave both hashes as they were: run it before and after and
# compare (with the same compilers, the whole files byte for byte). Needs
# nvcc (PATH or /usr/local/cuda/bin) and clang++-15 with Debian's AMD device
# libraries; a missing compiler is said, not skipped silently (exit 2).
set -euo pipefail
src=$(cd "${1:-$(dirname "$0")/..}" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
hipcxx=${ATTNMETA_HIP_CLANG:-clang++-15}
bitcode=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode
status=0

if [ -x "$nvcc" ]; then
  "$nvcc" -std=c++17 -O3 -arch=sm_90 -ptx -DAM_BUILD_TARGETS='"sm_90 sm_100"' \
    -I"$src/include" -I"$src/src/common" -I"$src/src/cuda" \
    "$src/src/cuda/cuda_backend.cu" -o "$out/sm_90.ptx"
  echo "sm_90 PTX       $(sha256sum <"$out/sm_90.ptx" | cut -d' ' -f1)  ($("$nvcc" --version | tail -1))"
else
  echo "sm_90 PTX       not built: no nvcc"; status=2
fi

if command -v "$hipcxx" >/dev/null && [ -d "$bitcode" ]; then
  "$hipcxx" -x hip -std=c++17 -O3 --offload-arch=gfx90a --cuda-device-only -c \
    --rocm-path=/usr --rocm-device-lib-path="$bitcode" -DAM_BUILD_TARGETS='"gfx90a gfx942"' \
    -I"$src/include" -I"$src/src/common" -I"$src/src/hip" \
    "$src/src/hip/hip_backend.hip" -o "$out/gfx90a.co"
  echo "gfx90a object   $(sha256sum <"$out/gfx90a.co" | cut -d' ' -f1)  ($("$hipcxx" --version | head -1))"
else
  echo "gfx90a object   not built: no $hipcxx or no $bitcode"; status=2
fi
exit $status
