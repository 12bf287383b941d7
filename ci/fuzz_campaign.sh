#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci/fuzz_campaign.sh OUTDIR SECONDS
#
# A long fuzzing campaign for the figures of docs/reliability.md: runs each
# libFuzzer harness (fuzz_step, fuzz_args, then fuzz_vecfile) with N parallel workers
# (libFuzzer -jobs=N -workers=N) on a copy of its committed corpus
# fuzz/corpus/<harness>/ for at most SECONDS, and at most 10.5 million
# executions per harness in all (10,500,000 / N per worker), then writes
# OUTDIR/fuzz-summary.txt: per harness the executions summed over the
# workers (their logs' stat::number_of_executed_units), the coverage
# (cov: edges / ft: features, the highest a worker reached), the corpus at
# the end, the crashes, failed checks, leaks, timeouts and out-of-memory
# inputs found, and the command line. Exits non-zero when anything was
# found or a worker failed.
#
# The harnesses are the ones of the build folder (ci/fuzz.sh builds them:
# `bash ci/fuzz.sh 1`, or ATTNMETA_FUZZ_BUILD_ONLY=1 bash ci/fuzz.sh), with
# the sanitizers that build has. When they are present nothing is built,
# so the folder can be copied to another Linux x86-64 machine that has
# neither clang nor cmake: the binaries link the sanitizer runtimes and the
# library statically and need only the C and C++ runtime libraries. Only
# when they are missing does this script build them (clang and cmake needed).
#
# Environment:
#   ATTNMETA_FUZZ_BUILD_DIR  build folder with fuzz/<harness> (or <harness>
#                            directly in it); default build-fuzz
#   ATTNMETA_FUZZ_WORKERS    parallel workers per harness (default: nproc)
#   ATTNMETA_FUZZ_MAX_RUNS   executions per harness in all (default 10500000)
#   ATTNMETA_FUZZ_HARNESSES  which harnesses (default "fuzz_step fuzz_args fuzz_vecfile")
#   ATTNMETA_COMMIT          commit to report (default: the checkout's HEAD);
#                            say which commit the harnesses were built from
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if [ $# -ne 2 ]; then
  echo "usage: $0 OUTDIR SECONDS" >&2
  exit 2
fi
out=$1
seconds=$2
case $seconds in
  '' | *[!0-9]* | 0) echo "$0: SECONDS must be a positive integer" >&2; exit 2 ;;
esac
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
build=${ATTNMETA_FUZZ_BUILD_DIR:-$root/build-fuzz}
case $build in /*) ;; *) build=$root/$build ;; esac
workers=${ATTNMETA_FUZZ_WORKERS:-$(nproc 2>/dev/null || echo 1)}
max_runs=${ATTNMETA_FUZZ_MAX_RUNS:-10500000}
read -r -a harnesses <<<"${ATTNMETA_FUZZ_HARNESSES:-fuzz_step fuzz_args fuzz_vecfile}"
case $workers in '' | *[!0-9]* | 0) echo "$0: ATTNMETA_FUZZ_WORKERS must be >= 1" >&2; exit 2 ;; esac

binary_of() {
  if [ -x "$build/fuzz/$1" ]; then echo "$build/fuzz/$1"
  elif [ -x "$build/$1" ]; then echo "$build/$1"
  fi
}

missing=0
for h in "${harnesses[@]}"; do [ -n "$(binary_of "$h")" ] || missing=1; done
if [ $missing = 1 ]; then
  echo "=== fuzz campaign: harnesses missing in $build: building them (ci/fuzz.sh)"
  ATTNMETA_FUZZ_BUILD_DIR=$build ATTNMETA_FUZZ_BUILD_ONLY=1 bash "$root/ci/fuzz.sh" || exit 1
fi

max_len_of() {
  case $1 in
    fuzz_step) echo 1024 ;;
    fuzz_vecfile) echo 4096 ;;
    *) echo 512 ;;
  esac
}

# Sum of one "stat::NAME: value" over the workers' logs.
sum_stat() { cat "$1"/fuzz-*.log 2>/dev/null | awk -v k="stat::$2:" '$1 == k { s += $2 } END { print s + 0 }'; }
# The highest "cov: N" / "ft: N" any worker printed.
max_field() {
  cat "$1"/fuzz-*.log 2>/dev/null | awk -v k="$2:" '{ for (i = 1; i < NF; i++) if ($i == k && $(i + 1) + 0 > m) m = $(i + 1) + 0 } END { print m + 0 }'
}
# The operations' counts of ATTNMETA_FUZZ_STATS=1, summed over the workers:
# "name N, name N" from the lines "  by operation: name N, ..." (fuzz_step)
# or "  by entry point: name:N ..." (fuzz_args, the first such line a worker prints).
sum_operations() {
  cat "$1"/fuzz-*.log 2>/dev/null | awk '
    /^  by operation:/ { sub(/^  by operation: */, ""); n = split($0, parts, /, */)
      for (i = 1; i <= n; i++) { split(parts[i], kv, " "); s[kv[1]] += kv[2]; if (!(kv[1] in seen)) { seen[kv[1]] = 1; order[++m] = kv[1] } } }
    /^fuzz_args inputs:/ { want = 1 }
    want && /^  by entry point:/ { want = 0; sub(/^  by entry point: */, ""); n = split($0, parts, / +/)
      for (i = 1; i <= n; i++) { split(parts[i], kv, ":"); s[kv[1]] += kv[2]; if (!(kv[1] in seen)) { seen[kv[1]] = 1; order[++m] = kv[1] } } }
    END { for (i = 1; i <= m; i++) printf "%s%s %d", (i > 1 ? ", " : ""), order[i], s[order[i]]; print "" }'
}

summary=$out/fuzz-summary.txt
{
  echo "attnmeta fuzz campaign"
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "host: $(uname -srm), $(nproc 2>/dev/null || echo '?') processors"
  echo "commit: ${ATTNMETA_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
  echo "build: $build"
  echo "workers per harness: $workers; at most ${seconds}s and $max_runs executions per harness"
} >"$summary"

status=0
for h in "${harnesses[@]}"; do
  bin=$(binary_of "$h")
  work=$out/$h
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts" "$work/no-modules"
  if [ -d "$root/fuzz/corpus/$h" ]; then cp -R "$root/fuzz/corpus/$h/." "$work/corpus/"; fi
  seeds=$(find "$work/corpus" -type f | wc -l)
  runs_per_worker=$(( (max_runs + workers - 1) / workers ))
  args=(-jobs="$workers" -workers="$workers" -runs="$runs_per_worker" -max_total_time="$seconds"
    -max_len="$(max_len_of "$h")" -timeout=120 -rss_limit_mb=4096 -print_final_stats=1
    -artifact_prefix="$work/artifacts/")
  cmd="ATTNMETA_FUZZ_STATS=1 ATTNMETA_MODULE_DIR=$work/no-modules $bin ${args[*]} $work/corpus"
  echo "=== fuzz campaign: $h, $workers workers, ${seconds}s, $seeds seeds"
  start=$(date +%s)
  # libFuzzer's workers write fuzz-<job>.log into the working directory;
  # the outer timeout only guards against a worker that never stops
  ( cd "$work" && ATTNMETA_FUZZ_STATS=1 ATTNMETA_MODULE_DIR="$work/no-modules" \
      timeout -k 30 $((seconds + 300)) "$bin" "${args[@]}" "$work/corpus" ) >"$work/libfuzzer.log" 2>&1
  rc=$?
  wall=$(( $(date +%s) - start ))
  execs=$(sum_stat "$work" number_of_executed_units)
  cov=$(max_field "$work" cov)
  ft=$(max_field "$work" ft)
  corpus_files=$(find "$work/corpus" -type f | wc -l)
  corpus_bytes=$(find "$work/corpus" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
  crashes=$(find "$work/artifacts" -name 'crash-*' -type f | wc -l)
  leaks=$(find "$work/artifacts" -name 'leak-*' -type f | wc -l)
  timeouts=$(find "$work/artifacts" -name 'timeout-*' -type f | wc -l)
  ooms=$(find "$work/artifacts" -name 'oom-*' -type f | wc -l)
  slow=$(find "$work/artifacts" -name 'slow-unit-*' -type f | wc -l)
  failed_jobs=$(grep -c 'exited with exit code [1-9]' "$work/libfuzzer.log" 2>/dev/null)
  findings=$((crashes + leaks + timeouts + ooms))
  verdict=ok
  if [ "$findings" -gt 0 ] || [ "$rc" -ne 0 ] || [ "$failed_jobs" -gt 0 ]; then verdict=FAILED; status=1; fi
  {
    echo
    echo "== $h: $verdict"
    echo "executions: $execs (summed over $workers workers; $((execs / (wall > 0 ? wall : 1))) per second)"
    echo "wall time: ${wall}s"
    echo "coverage: cov $cov / ft $ft (highest of a worker)"
    echo "corpus: $seeds seeds -> $corpus_files inputs, $corpus_bytes bytes ($work/corpus)"
    echo "findings: crashes or failed checks $crashes, leaks $leaks, timeouts $timeouts, out of memory $ooms (slow inputs noted: $slow)"
    echo "libFuzzer exit code: $rc; workers that failed: $failed_jobs"
    echo "operations: $(sum_operations "$work")"
    echo "peak rss: $(cat "$work"/fuzz-*.log 2>/dev/null | awk '$1 == "stat::peak_rss_mb:" && $2 > m { m = $2 } END { print m + 0 }') MB (largest worker)"
    echo "command (in $work): $cmd"
    echo "logs: $work/libfuzzer.log, $work/fuzz-*.log"
    if [ "$findings" -gt 0 ]; then
      echo "inputs found (commit them under fuzz/corpus/$h/ as regression seeds):"
      find "$work/artifacts" -type f ! -name 'slow-unit-*' | sed 's/^/  /'
    fi
  } >>"$summary"
  echo "=== fuzz campaign: $h $verdict: $execs executions in ${wall}s, cov $cov ft $ft, $findings findings"
done

cat "$summary"
exit $status
