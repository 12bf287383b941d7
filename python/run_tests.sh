#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the Python binding's tests against one build of the C library.
#
#   python/run_tests.sh BUILD_DIR [pytest arguments...]
#
# BUILD_DIR is a CMake build folder (its lib/ holds libattnmeta.so). The
# tests import the package from python/ (PYTHONPATH) and load the library
# named by ATTNMETA_LIBRARY. They run with Debian's /usr/bin/python3 (with
# python3-numpy and python3-pytest); set ATTNMETA_PYTHON to use another
# interpreter (e.g. one with torch, for tests/test_torch_*.py).
# Exits non-zero when any test fails, and also when no test ran at all.
set -u

if [ $# -lt 1 ]; then
  echo "usage: $0 BUILD_DIR [pytest arguments...]" >&2
  exit 2
fi
build=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$build/lib" ]; then
  echo "$0: $build/lib does not exist: build the C library first" >&2
  exit 2
fi
libdir=$(cd "$build/lib" && pwd)
if [ ! -e "$libdir/libattnmeta.so" ]; then
  echo "$0: no libattnmeta.so in $libdir: build the C library first" >&2
  exit 2
fi
python=${ATTNMETA_PYTHON:-/usr/bin/python3}

PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" \
ATTNMETA_LIBRARY="$libdir/libattnmeta.so" \
PYTHONDONTWRITEBYTECODE=1 \
  "$python" -m pytest -p no:cacheprovider "$here/tests" "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "$0: pytest collected no tests: counted as a failure" >&2
fi
exit "$rc"
