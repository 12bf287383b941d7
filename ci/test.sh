#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The project's one test command: installs what it needs (when root), builds
# everything buildable here (core, CPU backend, CUDA module when nvcc exists,
# HIP module with Debian's ROCm packages, the HIP module on HIP-CPU when
# ci/find_hip_cpu.sh finds it, CLI, tests), and runs every test that needs
# no GPU. Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# Its own build folder by default: the README's command 1 configures build/
# with BUILD_TESTING=OFF, and nothing here may depend on what it left there.
build=${ATTNMETA_BUILD_DIR:-$root/build-ci}
failures=()
skipped=()
passed=0

step() { # step NAME COMMAND...: runs one stage, records failure, keeps going
  local name=$1 start=$SECONDS; shift
  echo "=== $name"
  if "$@"; then
    echo "=== $name: ok ($((SECONDS - start)) s)"
    passed=$((passed + 1))
  else
    echo "=== $name: FAILED ($((SECONDS - start)) s)"
    failures+=("$name")
  fi
}

if [ "$(id -u)" = 0 ] && [ "${ATTNMETA_SKIP_DEPS:-0}" != 1 ]; then
  bash ci/deps.sh || exit 1
fi

# The HIP backend on the CPU (HIP-CPU, test-only): found in-tree
# (third_party/hip-cpu), beside the checkout or at $ATTNMETA_HIP_CPU_ROOT.
hip_cpu_root=$(bash ci/find_hip_cpu.sh)
hip_cpu_found=$?

# Every option the stages below rely on is given explicitly, so a folder an
# earlier command configured otherwise (tests off, a sanitizer) is brought
# back to what they need. The CUDA targets are the cache's (the default list,
# six architectures and PTX, builds in about 15 s on 2 idle cores); the HIP
# targets the default ones the compiler builds (gfx90a and gfx942 with
# Debian's clang-19), which the test hip_module_code_objects checks.
# A build folder keeps the HIP compiler it was first configured with: one
# configured before clang-19 was installed would stay on clang-15 (no
# gfx942), so its cache and compiler records are removed then (the objects
# stay).
old_hip=$(sed -n 's/^set(CMAKE_HIP_COMPILER "\(.*\)")$/\1/p' "$build"/CMakeFiles/*/CMakeHIPCompiler.cmake 2>/dev/null | head -n 1)
if [[ $old_hip =~ (clang\+\+-15|llvm-15/) ]] && [ -x /usr/lib/llvm-19/bin/clang-offload-bundler ]; then
  echo "=== $build: configured with $old_hip; configuring afresh for clang-19"
  rm -rf "$build/CMakeCache.txt" "$build"/CMakeFiles/[0-9]*.[0-9]*
fi
configure_and_build() {
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DATTNMETA_WERROR=ON \
    -DBUILD_TESTING=ON -DATTNMETA_SANITIZE=OFF -DATTNMETA_WITH_CUDA=AUTO -DATTNMETA_WITH_HIP=AUTO \
    -DATTNMETA_HIP_ARCHITECTURES= \
    -DATTNMETA_HIP_CPU_ROOT="$hip_cpu_root" &&
    cmake --build "$build" -j"$(nproc)"
}
step "build (core, CPU, CUDA and HIP modules, HIP module on HIP-CPU, CLI, tests)" configure_and_build || true
[ ${#failures[@]} -eq 0 ] || { echo "build failed"; exit 1; }

step "modules load or refuse cleanly (attnmeta info)" "$build/bin/attnmeta" info
step "main job on the default backend (attnmeta step)" "$build/bin/attnmeta" step --iters 100
# --no-tests=error: a test stage that ran no test is a failure, not a pass.
step "tests (ctest)" ctest --test-dir "$build" --output-on-failure --no-tests=error -LE hip-cpu

# The HIP module's own source run under HIP-CPU: every vector at the GPU
# sweep and GPU-like shapes, the Criterion suite and the fuzz corpus on
# `hip` (ctest -L hip-cpu), then the proof that it catches what the CPU
# backend cannot (ci/broken_kernels.sh).
hip_cpu_stage() {
  ctest --test-dir "$build" --output-on-failure --no-tests=error -L hip-cpu
}
case $hip_cpu_found in
  0)
    step "HIP backend on HIP-CPU ($hip_cpu_root): vectors, Criterion, fuzz corpus" hip_cpu_stage
    step "broken kernels fail on HIP-CPU and pass on the CPU (ci/broken_kernels.sh)" \
      bash ci/broken_kernels.sh "$hip_cpu_root" "$build-broken-kernels"
    ;;
  1)
    echo "=== HIP backend on HIP-CPU: SKIPPED: no HIP-CPU (ATTNMETA_HIP_CPU_ROOT, third_party/hip-cpu, ../shared/third_party/hip-cpu)"
    skipped+=("HIP backend on HIP-CPU")
    ;;
  *) step "HIP backend on HIP-CPU: ATTNMETA_HIP_CPU_ROOT is usable" false ;;
esac
# The default HIP targets are probed; with Debian's clang-19 (ci/deps.sh)
# they must include gfx942, the MI300X's, not only what clang-15 knows.
hip_compiler=$(sed -n 's/^set(CMAKE_HIP_COMPILER "\(.*\)")$/\1/p' "$build"/CMakeFiles/*/CMakeHIPCompiler.cmake 2>/dev/null | head -n 1)
if [ -e "$build/lib/libattnmeta_hip.so" ] && [[ $hip_compiler =~ /llvm-(19|[2-9][0-9])/ ]]; then
  step "HIP module holds gfx90a and gfx942 code objects ($hip_compiler)" \
    python3 ci/hip_code_objects.py "$build/lib/libattnmeta_hip.so" gfx90a gfx942
fi
step "every source file names its licence (ci/check_spdx.sh)" bash ci/check_spdx.sh
step "conformance vectors match the generator (ci/vectors.sh)" bash ci/vectors.sh "$build"
step "conformance kit on the CPU backend (attnmeta conformance)" \
  "$build/bin/attnmeta" conformance --backend cpu "$root/conformance/vectors"
for hook in ci/sanitize.sh ci/fuzz.sh ci/examples.sh python/run_tests.sh ci/wheel.sh; do
  [ -f "$hook" ] || continue
  case $hook in
    ci/sanitize.sh) step "sanitizer build and tests" bash "$hook" "$root/build-sanitize" ;;
    ci/fuzz.sh) step "bounded fuzzing" bash "$hook" "${ATTNMETA_FUZZ_SECONDS:-60}" ;;
    ci/examples.sh) step "install and example consumers" bash "$hook" "$build" ;;
    python/run_tests.sh) step "python tests" bash "$hook" "$build" ;;
    ci/wheel.sh) step "pip install . on a fresh copy, in a fresh venv (ci/wheel.sh)" bash "$hook" ;;
  esac
done

echo
if [ ${#failures[@]} -ne 0 ]; then
  printf 'ci/test.sh: FAILED stages:\n'
  printf '  %s\n' "${failures[@]}"
fi
if [ ${#skipped[@]} -ne 0 ]; then
  printf 'ci/test.sh: SKIPPED stages:\n'
  printf '  %s\n' "${skipped[@]}"
fi
echo "stages: $passed passed, ${#failures[@]} failed, ${#skipped[@]} skipped"
[ ${#failures[@]} -eq 0 ]
