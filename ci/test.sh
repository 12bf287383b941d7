#!/usr/bin/env bash
# The project's one test command: installs what it needs (when root), builds
# everything buildable here (core, CPU backend, CUDA module when nvcc exists,
# HIP module with Debian's ROCm packages, CLI, tests), and runs every test
# that needs no GPU. Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${ATTNMETA_BUILD_DIR:-$root/build}
failures=()
passed=0

step() { # step NAME COMMAND...: runs one stage, records failure, keeps going
  local name=$1; shift
  echo "=== $name"
  if "$@"; then
    echo "=== $name: ok"
    passed=$((passed + 1))
  else
    echo "=== $name: FAILED"
    failures+=("$name")
  fi
}

if [ "$(id -u)" = 0 ] && [ "${ATTNMETA_SKIP_DEPS:-0}" != 1 ]; then
  bash ci/deps.sh || exit 1
fi

configure_and_build() {
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DATTNMETA_WERROR=ON &&
    cmake --build "$build" -j"$(nproc)"
}
step "build (core, CPU, CUDA and HIP modules, CLI, tests)" configure_and_build || true
[ ${#failures[@]} -eq 0 ] || { echo "build failed"; exit 1; }

step "modules load or refuse cleanly (attnmeta info)" "$build/bin/attnmeta" info
step "main job on the default backend (attnmeta step)" "$build/bin/attnmeta" step --iters 100
step "tests (ctest)" ctest --test-dir "$build" --output-on-failure
step "conformance vectors match the generator (ci/vectors.sh)" bash ci/vectors.sh "$build"
step "conformance kit on the CPU backend (attnmeta conformance)" \
  "$build/bin/attnmeta" conformance --backend cpu "$root/conformance/vectors"
for hook in ci/sanitize.sh ci/fuzz.sh ci/examples.sh python/run_tests.sh; do
  [ -f "$hook" ] || continue
  case $hook in
    ci/sanitize.sh) step "sanitizer build and tests" bash "$hook" "$root/build-sanitize" ;;
    ci/fuzz.sh) step "bounded fuzzing" bash "$hook" "${ATTNMETA_FUZZ_SECONDS:-60}" ;;
    ci/examples.sh) step "install and example consumers" bash "$hook" "$build" ;;
    python/run_tests.sh) step "python tests" bash "$hook" "$build" ;;
  esac
done

echo
if [ ${#failures[@]} -ne 0 ]; then
  printf 'ci/test.sh: FAILED stages:\n'
  printf '  %s\n' "${failures[@]}"
fi
echo "stages: $passed passed, ${#failures[@]} failed"
[ ${#failures[@]} -eq 0 ]
