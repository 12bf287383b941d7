#!/usr/bin/env bash
# ci/wheel.sh: `pip install .` as a new user meets it, on a fresh copy of the
# checkout (its tracked and unignored files: no build folder, nothing an
# earlier build left). Builds the wheel offline with Debian's setuptools
# (`pip wheel --no-build-isolation`, which configures and builds the C library
# with CMake), checks it is a platform wheel holding the library, the GPU
# modules this machine builds and the CLI, installs it into a fresh virtual
# environment (--system-site-packages, for NumPy), and there: imports
# attnmeta from the wheel, builds a step on the CPU backend and checks it,
# runs `python -m attnmeta` and the `attnmeta` console script.
# KEEP=1 keeps the temporary folder. Exits non-zero when any check fails.
set -u -o pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-/usr/bin/python3}
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

t0=$SECONDS
build_wheel() {
  (cd "$work/src" && "$python" -m pip wheel --no-build-isolation --no-index --no-deps \
    -w "$work/dist" .)
}
run "pip wheel --no-build-isolation . (CMake configures and builds the C library)" build_wheel
echo "     wheel built in $((SECONDS - t0)) s"
wheel=$(ls "$work"/dist/attnmeta-*.whl 2>/dev/null | head -n 1)

modules=()
for m in cuda hip; do
  [ -e "$work/src/build-wheel/stage/lib/attnmeta/libattnmeta_$m.so" ] && modules+=("$m")
done
contents_ok() {
  local listing f
  [ -n "$wheel" ] || { echo "no wheel in $work/dist"; return 1; }
  case $(basename "$wheel") in
    *-py3-none-linux_*.whl) ;;
    *) echo "not a platform wheel: $(basename "$wheel")"; return 1 ;;
  esac
  listing=$("$python" -m zipfile -l "$wheel") || return 1
  echo "$listing"
  for f in attnmeta/__init__.py attnmeta/py.typed attnmeta/lib/libattnmeta.so.0 attnmeta/bin/attnmeta \
           attnmeta/share/attnmeta/vectors/s1_token_map.amv attnmeta-0.1.0.dist-info/LICENSE; do
    grep -q "^$f " <<<"$listing" || { echo "missing $f"; return 1; }
  done
  for m in "${modules[@]}"; do
    grep -q "^attnmeta/lib/libattnmeta_$m.so " <<<"$listing" || { echo "missing module $m"; return 1; }
  done
  "$python" - "$wheel" <<'PY'
import sys, zipfile
meta = zipfile.ZipFile(sys.argv[1]).read("attnmeta-0.1.0.dist-info/METADATA").decode()
sys.exit(0 if "License: Apache-2.0" in meta else "METADATA names no Apache-2.0 licence")
PY
}
run "platform wheel $(basename "${wheel:-none}") holds the package, py.typed, libattnmeta.so.0, modules (${modules[*]:-none}), bin/attnmeta, conformance vectors, LICENSE" contents_ok

venv="$work/venv"
install_ok() {
  "$python" -m venv --system-site-packages "$venv" &&
    "$venv/bin/python" -m pip install --no-index --no-deps "$wheel"
}
run "fresh venv (--system-site-packages) and pip install of the wheel" install_ok

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
  (cd "$work" && PATH="$venv/bin:$PATH" && [ "$(command -v attnmeta)" = "$venv/bin/attnmeta" ] &&
    attnmeta info >"$work/info.txt" && cat "$work/info.txt" &&
    grep -q "^backend cpu " "$work/info.txt" &&
    ATTNMETA_BACKEND=cpu attnmeta step --iters 3 &&
    attnmeta conformance --backend cpu)
}
run "attnmeta console script: info, step and conformance (the bundled vectors) on the CPU backend" cli_ok

python_m_ok() {
  (cd "$work" && "$venv/bin/python" -m attnmeta >"$work/python-m.txt" && cat "$work/python-m.txt" &&
    diff -u "$work/info.txt" "$work/python-m.txt")
}
run "python -m attnmeta prints what attnmeta info prints" python_m_ok

if [ $failures -ne 0 ]; then
  echo "wheel: $failures check(s) failed"
  exit 1
fi
echo "wheel: all checks passed"
