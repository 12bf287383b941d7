#!/bin/sh
# The Python binding on a GPU machine (python3 with torch): the host
# overhead per call through the binding (direct calls and the torch custom
# operators), the torch.compile and vLLM-integration tests one by one, then
# every test, the torch CUDA ones and the CUDA-graph captures included.
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
# torch.compile(fullgraph=True) through the custom operators (attnmeta.ops),
# test by test, then everything else.
log=$(mktemp)
ATTNMETA_PYTHON=python3 sh "$here/run_tests.sh" "$build" -v -rs -p no:randomly \
  -k "test_torch_compile or test_vllm_integration" >"$log" 2>&1
compile_rc=$?
grep -E "PASSED|FAILED|SKIPPED|ERROR|passed|failed" "$log" | tail -n 40
ATTNMETA_PYTHON=python3 sh "$here/run_tests.sh" "$build" -q -rN >"$log" 2>&1
test_rc=$?
tail -n 15 "$log"
rm -f "$log"
[ "$bench_rc" -eq 0 ] && [ "$compile_rc" -eq 0 ] && [ "$test_rc" -eq 0 ]
