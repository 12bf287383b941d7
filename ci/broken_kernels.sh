#!/usr/bin/env bash
# ci/broken_kernels.sh HIP_CPU_ROOT [WORK_DIR]
#
# Shows that the HIP backend run on HIP-CPU checks what the CPU backend
# cannot: builds two deliberately broken copies of the kernel body and runs
# the conformance vectors on both backends of each.
#   barrier_removed  the barrier after the staging loop is gone
#   staging_at_lane  the staging loops start at th.lane, not th.thread
# The CPU backend runs one thread per block, so it passes either way; the
# HIP-CPU module runs real multi-thread blocks and must fail. Each copy is
# the source tree with src/common/am_step_kernel.h edited, built in
# WORK_DIR/<name> (default build-broken-kernels; core, CLI and the HIP-CPU
# module only). Prints one result line per copy; exits 0 when both copies
# behave as described (CPU passes, HIP-CPU fails), 1 otherwise.
# Environment: ATTNMETA_BROKEN_CONFIGS (HIP-CPU launch configs, default
# "sweep"), ATTNMETA_BROKEN_VECTORS (vector folder, default the tree's).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
hip_cpu=${1:?usage: ci/broken_kernels.sh HIP_CPU_ROOT [WORK_DIR]}
work=${2:-$root/build-broken-kernels}
case $work in /*) ;; *) work=$root/$work ;; esac
vectors=${ATTNMETA_BROKEN_VECTORS:-$root/conformance/vectors}
configs=(${ATTNMETA_BROKEN_CONFIGS:-sweep})
kernel=src/common/am_step_kernel.h
jobs=$(nproc 2>/dev/null || echo 2)
failures=0

# name, sed expression, how many lines it must change
mutations=(
  "barrier_removed|/^[[:space:]]*AM_BARRIER();[[:space:]]*\$/d|1"
  "staging_at_lane|s/for (i = th\.thread; \(i <=* num_reqs; i += th\.block_dim) stage\)/for (i = th.lane; \1/|2"
)

summary() { # the runner's last line: "N passed, N failed, N skipped"
  tail -n 1 "$1"
}

for m in "${mutations[@]}"; do
  IFS='|' read -r name expr lines <<<"$m"
  dir=$work/$name
  rm -rf "$dir"
  mkdir -p "$dir/src"
  # the tree without build folders, version control or the vendored HIP-CPU
  tar -C "$root" --exclude='./build*' --exclude=./.git --exclude=./third_party \
    --exclude=./fuzz/corpus -cf - . | tar -C "$dir/src" -xf -
  sed -i "$expr" "$dir/src/$kernel"
  changed=$(diff "$root/$kernel" "$dir/src/$kernel" | grep -c '^>\|^<' || true)
  if [ "$changed" -lt "$lines" ]; then
    echo "broken kernels: $name: the edit did not apply to $kernel ($changed lines changed)"
    failures=$((failures + 1))
    continue
  fi
  if ! { cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
      -DATTNMETA_WITH_CUDA=OFF -DATTNMETA_WITH_HIP=OFF -DATTNMETA_HIP_CPU_ROOT="$hip_cpu" &&
    cmake --build "$dir/build" -j"$jobs" --target attnmeta_cli attnmeta_hip_cpu; } \
    >"$dir/build.log" 2>&1; then
    tail -n 30 "$dir/build.log"
    echo "broken kernels: $name: build failed"
    failures=$((failures + 1))
    continue
  fi
  cli=$dir/build/bin/attnmeta
  "$cli" conformance --backend cpu "$vectors" >"$dir/cpu.log" 2>&1
  cpu_rc=$?
  args=()
  for c in "${configs[@]}"; do args+=(--config "$c"); done
  ATTNMETA_MODULE_DIR=$dir/build/hip-cpu "$cli" conformance --backend hip "${args[@]}" \
    "$vectors" >"$dir/hip.log" 2>&1
  hip_rc=$?
  verdict="as expected"
  if [ $cpu_rc -ne 0 ] || [ $hip_rc -ne 1 ]; then
    verdict="NOT as expected (cpu exit $cpu_rc, want 0; hip exit $hip_rc, want 1)"
    failures=$((failures + 1))
  fi
  echo "broken kernels: $name: cpu: $(summary "$dir/cpu.log"); hip on HIP-CPU: $(summary "$dir/hip.log") -- $verdict"
  grep -m 1 '^FAIL' "$dir/hip.log" | cut -c 1-300 | sed 's/^/  first hip failure: /'
done

[ $failures -eq 0 ]
