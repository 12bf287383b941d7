#!/usr/bin/env bash
# The project's one test command: installs what it needs (when root), builds
# everything buildable here (core, CPU backend, CUDA module when nvcc exists,
# HIP module with Debian's ROCm packages, CLI, tests), and runs every test
# that needs no GPU. Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# Its own build folder by default: the README's command 1 configures build/
# with BUILD_TESTING=OFF, and nothing here may depend on what it left there.
build=${ATTNMETA_BUILD_DIR:-$root/build-ci}
failures=()
passed=0

step() { # step NAME COMMAND...: runs one stage, records failure, keeps going
  local name=$1 t0=$SECONDS; shift
  echo "=== $name"
  if "$@"; then
    echo "=== $name: ok ($((SECONDS - t0)) s)"
    passed=$((passed + 1))
  else
    echo "=== $name: FAILED ($((SECONDS - t0)) s)"
    failures+=("$name")
  fi
}

if [ "$(id -u)" = 0 ] && [ "${ATTNMETA_SKIP_DEPS:-0}" != 1 ]; then
  bash ci/deps.sh || exit 1
fi

# Every option the stages below rely on is given explicitly, so a folder an
# earlier command configured otherwise (tests off, a sanitizer) is brought
# back to what they need. The CUDA targets are the cache's (the default list,
# six architectures and PTX, builds in about 15 s on 2 cores).
configure_and_build() {
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DATTNMETA_WERROR=ON \
    -DBUILD_TESTING=ON -DATTNMETA_SANITIZE=OFF -DATTNMETA_WITH_CUDA=AUTO -DATTNMETA_WITH_HIP=AUTO &&
    cmake --build "$build" -j"$(nproc)"
}
step "build (core, CPU, CUDA and HIP modules, CLI, tests)" configure_and_build || true
[ ${#failures[@]} -eq 0 ] || { echo "build failed"; exit 1; }

step "modules load or refuse cleanly (attnmeta info)" "$build/bin/attnmeta" info
step "main job on the default backend (attnmeta step)" "$build/bin/attnmeta" step --iters 100
# --no-tests=error: a test stage that ran no test is a failure, not a pass.
step "tests (ctest)" ctest --test-dir "$build" --output-on-failure --no-tests=error
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
echo "stages: $passed passed, ${#failures[@]} failed"
[ ${#failures[@]} -eq 0 ]
