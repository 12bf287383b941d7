# SPDX-License-Identifier: Apache-2.0
# Sourced by the A/B scripts (bench/ab_bench.sh, bench/paths_ab.sh).
#
# ab_start MIN MAX USAGE ARGS...: exits 2 with "usage: $0 USAGE" unless
# ARGS are MIN to MAX words; creates OUTDIR (the first of ARGS) and sets
# `out` to its absolute path and `extra` to the words of
# ATTNMETA_AB_BENCH_ARGS (extra bench arguments).
ab_start() {
  local min=$1 max=$2 usage=$3
  shift 3
  if [ $# -lt "$min" ] || [ $# -gt "$max" ]; then
    echo "usage: $0 $usage" >&2
    exit 2
  fi
  mkdir -p "$1"
  out=$(cd "$1" && pwd)
  read -r -a extra <<<"${ATTNMETA_AB_BENCH_ARGS:-}"
}
