#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci/wheel.sh: `pip install .` as a new user meets it, on a fresh copy of the
# checkout (its tracked and unignored files: no build folder, nothing an
# earlier build left, no .git), offline: pip takes setuptools and wheel from
# Debian's local wheels ($WHEELS, /usr/share/python-wheels: python3-setuptools-whl,
# python3-wheel-whl, python3-pip-whl) with build isolation, as with any index.
#   - a fake cmake older than 3.25 on PATH stops the build with a clear message;
#   - `pip wheel` makes a platform wheel (manylinux_2_N tag, N the newest
#     GLIBC_2.N its files need, by objdump) holding the package, py.typed,
#     the library, the GPU modules this machine builds, the CLI, the vectors
#     and the licence, at the header's version;
#   - `pip install --no-index --find-links $WHEELS .` in a fresh venv without
#     system site packages; there: import attnmeta from the venv, version and
#     metadata agree, the console script (info, step, conformance) and
#     `python -m attnmeta`;
#   - the wheel in a venv with system site packages (for NumPy): one step on
#     the CPU backend, checked.
# KEEP=1 keeps the temporary folder. Exits non-zero when any check fails.
set -u -o pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-/usr/bin/python3}
wheels=${WHEELS:-/usr/share/python-wheels}
version=$(sed -n 's/^#define ATTNMETA_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' \
  "$src/include/attnmeta/attnmeta.h" | paste -sd.)
work=$(mktemp -d "${TMPDIR:-/tmp}/attnmeta-wheel.XXXXXX")
log="$work/log"
failures=0
if [ "${KEEP:-0}" = 1 ]; then echo "keeping $work"; else trap 'rm -rf "$work"' EXIT; fi
unset ATTNMETA_LIBRARY ATTNMETA_MODULE_DIR ATTNMETA_BACKEND PYTHONPATH LD_LIBRARY_PATH VIRTUAL_ENV

pass() { echo "ok   $*"; }
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
  if [ -s "$log" ]; then tail -n 30 "$log" | sed 's/^/    | /'; fi
}
run() { # run "description" command...
  local what=$1
  shift
  if "$@" >"$log" 2>&1; then pass "$what"; else fail "$what"; fi
}

fresh_copy() {
  mkdir -p "$work/src"
  if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$src" && git ls-files -z --cached --others --exclude-standard |
      xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' | tar --null -T - -cf -) |
      tar -xf - -C "$work/src"
  else
    tar -C "$src" --exclude='./build*' -cf - . | tar -xf - -C "$work/src"
  fi
  [ -f "$work/src/pyproject.toml" ] && [ -f "$work/src/setup.py" ]
}
run "fresh copy of the checkout (tracked and unignored files)" fresh_copy || { echo "wheel: $failures check(s) failed"; exit 1; }

# A fresh venv without system site packages: what pip sees is the venv's own
# pip and what $wheels holds, nothing of Debian's dist-packages.
bare="$work/venv-bare"
run "fresh venv without system site packages" "$python" -m venv "$bare"

old_cmake_refused() {
  mkdir -p "$work/old-cmake" &&
    printf '#!/bin/sh\necho "cmake version 3.18.4"\n' >"$work/old-cmake/cmake" &&
    chmod +x "$work/old-cmake/cmake" &&
    ! (cd "$work/src" && PATH="$work/old-cmake:$PATH" ATTNMETA_WHEEL_BUILD_DIR="$work/old-cmake/build" \
      "$bare/bin/python" -m pip wheel --no-index --find-links "$wheels" --no-deps -w "$work/old-cmake/dist" .) &&
    ! ls "$work"/old-cmake/dist/*.whl >/dev/null 2>&1
}
old_cmake_message() { grep -q "needs CMake 3.25 or newer; .* is 3.18" "$log"; }
if old_cmake_refused >"$log" 2>&1 && old_cmake_message; then
  pass "cmake 3.18 on PATH: pip stops with 'needs CMake 3.25 or newer'"
else
  fail "cmake 3.18 on PATH: pip stops with 'needs CMake 3.25 or newer'"
fi

t0=$SECONDS
build_wheel() {
  (cd "$work/src" && "$bare/bin/python" -m pip wheel --no-index --find-links "$wheels" --no-deps \
    -w "$work/dist" .)
}
run "pip wheel --no-index --find-links $wheels . (build isolation; CMake builds the C library)" build_wheel
echo "     wheel built in $((SECONDS - t0)) s"
wheel=$(ls "$work"/dist/attnmeta-*.whl 2>/dev/null | head -n 1)

modules=()
for m in cuda hip; do
  [ -e "$work/src/build-wheel/stage/lib/attnmeta/libattnmeta_$m.so" ] && modules+=("$m")
done
contents_ok() {
  local listing f
  [ -n "$wheel" ] || { echo "no wheel in $work/dist"; return 1; }
  listing=$("$python" -m zipfile -l "$wheel") || return 1
  echo "$listing"
  # The tag names the glibc the wheel's ELF files need, checked here apart
  # from setup.py: the newest GLIBC_2.N of objdump -T over them.
  local elf="$work/elf" need
  rm -rf "$elf" && mkdir -p "$elf" && (cd "$elf" && "$python" -m zipfile -e "$wheel" .) || return 1
  need=$(find "$elf/attnmeta/lib" "$elf/attnmeta/bin" -type f -exec objdump -T {} + |
    grep -o 'GLIBC_2\.[0-9]*' | sed 's/GLIBC_2\.//' | sort -n | tail -n 1)
  echo "newest GLIBC symbol version needed: 2.$need"
  case $(basename "$wheel") in
    "attnmeta-$version-py3-none-manylinux_2_${need}_$(uname -m).whl") ;;
    *) echo "expected attnmeta-$version-py3-none-manylinux_2_${need}_$(uname -m).whl, got $(basename "$wheel")"
       return 1 ;;
  esac
  for f in attnmeta/__init__.py attnmeta/py.typed attnmeta/lib/libattnmeta.so.0 attnmeta/bin/attnmeta \
           attnmeta/share/attnmeta/vectors/s1_token_map.amv "attnmeta-$version.dist-info/LICENSE"; do
    grep -q "^$f " <<<"$listing" || { echo "missing $f"; return 1; }
  done
  for m in "${modules[@]}"; do
    grep -q "^attnmeta/lib/libattnmeta_$m.so " <<<"$listing" || { echo "missing module $m"; return 1; }
  done
  "$python" - "$wheel" "$version" <<'PY'
import sys, zipfile
meta = zipfile.ZipFile(sys.argv[1]).read("attnmeta-%s.dist-info/METADATA" % sys.argv[2]).decode()
sys.exit(0 if "License: Apache-2.0" in meta else "METADATA names no Apache-2.0 licence")
PY
}
run "platform wheel $(basename "${wheel:-none}") (tag from its glibc need) holds the package, py.typed, libattnmeta.so.0, modules (${modules[*]:-none}), bin/attnmeta, conformance vectors, LICENSE" contents_ok

install_bare() {
  (cd "$work/src" && "$bare/bin/python" -m pip install --no-index --find-links "$wheels" .)
}
run "pip install --no-index --find-links $wheels . in the venv without system site packages" install_bare

bare_ok() {
  (cd "$work" && "$bare/bin/python" - "$bare" "$version" <<'PY'
import os, sys
from importlib.metadata import version
import attnmeta
venv = os.path.realpath(sys.argv[1])
for path in (attnmeta.__file__, attnmeta.library_path):
    if not os.path.realpath(path).startswith(venv + os.sep):
        sys.exit("%s is not from the venv" % path)
got = (attnmeta.__version__, attnmeta.version_string(), version("attnmeta"))
print("attnmeta.__version__, library, metadata:", got, "from", attnmeta.library_path)
sys.exit(0 if got == (sys.argv[2],) * 3 else "expected %s three times" % sys.argv[2])
PY
  )
}
run "the venv's attnmeta: package, library and metadata at version $version" bare_ok

venv="$work/venv"
install_ok() {
  "$python" -m venv --system-site-packages "$venv" &&
    "$venv/bin/python" -m pip install --no-index --no-deps "$wheel"
}
run "the wheel in a venv with system site packages (for NumPy)" install_ok

# Everything below runs outside the checkout, so nothing comes from it.
step_ok() {
  (cd "$work" && "$venv/bin/python" - "$venv" <<'PY'
import os, sys
import numpy as np
import attnmeta
venv = os.path.realpath(sys.argv[1])
for path in (attnmeta.__file__, attnmeta.library_path):
    if not os.path.realpath(path).startswith(venv + os.sep):
        sys.exit("%s is not from the venv" % path)
print("attnmeta", attnmeta.version_string(), "from", attnmeta.library_path)
# 3 requests of 2, 1 and 3 tokens padded to 8 tokens, block size 2.
qsl = np.array([0, 2, 3, 6], np.int32)
seq_lens = np.array([5, 1, 3], np.int32)
table = np.array([[10, 11, 12], [20, 21, 22], [30, 31, 32]], np.int32)
tok = np.full(8, -7, np.int32)
slots = np.full(8, -7, np.int64)
pos = np.full(8, -7, np.int64)
attnmeta.build_step(qsl, 8, seq_lens=seq_lens, block_table=table, token_to_req=tok,
                    positions=pos, slot_mapping=slots, block_size=2,
                    context=attnmeta.Context("cpu"))
want_tok = [0, 0, 1, 2, 2, 2, 0, 0]
want_pos = [3, 4, 0, 0, 1, 2, 0, 0]
want_slots = [11 * 2 + 1, 12 * 2 + 0, 20 * 2 + 0, 30 * 2 + 0, 30 * 2 + 1, 31 * 2 + 0, -1, -1]
got = (tok.tolist(), pos.tolist(), slots.tolist())
print("token_to_req", got[0], "positions", got[1], "slot_mapping", got[2])
sys.exit(0 if got == (want_tok, want_pos, want_slots) else "expected %s" % ((want_tok, want_pos, want_slots),))
PY
  )
}
run "import attnmeta from the venv, one step on the CPU backend (token map, positions, slots)" step_ok

cli_ok() {
  (cd "$work" && PATH="$bare/bin:$PATH" && [ "$(command -v attnmeta)" = "$bare/bin/attnmeta" ] &&
    attnmeta info >"$work/info.txt" && cat "$work/info.txt" &&
    grep -q "^backend cpu " "$work/info.txt" &&
    ATTNMETA_BACKEND=cpu attnmeta step --iters 3 &&
    attnmeta conformance --backend cpu)
}
run "attnmeta console script: info, step and conformance (the bundled vectors) on the CPU backend" cli_ok

python_m_ok() {
  (cd "$work" && "$bare/bin/python" -m attnmeta >"$work/python-m.txt" && cat "$work/python-m.txt" &&
    grep -v '^python package: ' "$work/python-m.txt" | diff -u "$work/info.txt" - &&
    grep -q "^python package: attnmeta $version in $bare/" "$work/python-m.txt")
}
run "python -m attnmeta prints what attnmeta info prints, and the package's version and folder" python_m_ok

if [ $failures -ne 0 ]; then
  echo "wheel: $failures check(s) failed"
  exit 1
fi
echo "wheel: all checks passed"
