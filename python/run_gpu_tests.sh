#!/bin/sh
# The Python binding on a GPU machine (python3 with torch): every test, the
# torch CUDA ones and the CUDA-graph captures included, then the host
# overhead per call through the binding.
#
#   python/run_gpu_tests.sh BUILD_DIR OUTDIR
#
# Writes OUTDIR/python_overhead.json; the pytest summary line is printed last.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR OUTDIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
out=$2
PYTHONUNBUFFERED=1 PYTHONPATH="$here" ATTNMETA_LIBRARY="$build/lib/libattnmeta.so" \
  python3 "$here/bench_overhead.py" --json "$out/python_overhead.json"
bench_rc=$?
log=$(mktemp)
ATTNMETA_PYTHON=python3 sh "$here/run_tests.sh" "$build" -q -rN >"$log" 2>&1
test_rc=$?
tail -n 15 "$log"
rm -f "$log"
[ "$bench_rc" -eq 0 ] && [ "$test_rc" -eq 0 ]
