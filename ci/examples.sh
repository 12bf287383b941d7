#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci/examples.sh BUILD_DIR
#
# Installs a built tree into a fresh temporary prefix and uses it the way a
# consumer would, never through the build or source tree:
#   - the installed layout (headers, libattnmeta.so.0, modules, CLI, CMake
#     package, pkg-config file, Python package);
#   - the C and C++ examples built with find_package(attnmeta CONFIG)
#     (CMAKE_PREFIX_PATH=prefix) and with pkg-config (PKG_CONFIG_PATH), and
#     the static core when the build has it, run on the CPU backend;
#   - version checking of the CMake package (0.1 accepted, 1.0 refused);
#   - the fused top-k example (examples/fused_topk) through the CMake
#     package, run on the CPU; its CUDA program built where nvcc is;
#   - prefix/bin/attnmeta info: every module the build made is loaded from
#     prefix/<libdir>/attnmeta/ (checked with the loader's own trace);
#   - prefix/bin/attnmeta conformance with no files, run from a folder outside
#     the source tree, runs the installed vectors (prefix/share/attnmeta/
#     vectors) on the CPU backend: every vector passes;
#   - ci/check_symbols.sh on the prefix;
#   - examples/python_ctypes.py and `import attnmeta` with /usr/bin/python3;
#   - the prefix moved elsewhere still works (relocatable package), the
#     installed conformance vectors included;
#   - README.md's C and NumPy examples, taken from the README, built and
#     run against the prefix, print what the README shows;
#   - `cmake --build BUILD --target uninstall` then removes everything it
#     installed (and nothing else) from a fresh prefix.
# Prints one line per check and exits non-zero when any check fails.
# KEEP=1 keeps the temporary folder.
set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/folder_arg.sh"
folder_arg build BUILD_DIR "build folder" "$@"
python=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/attnmeta-examples.XXXXXX")
prefix="$work/prefix"
log="$work/log"
failures=0
if [ "${KEEP:-0}" = 1 ]; then
  echo "keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi

# A consumer's environment: nothing pointing into the build tree.
unset ATTNMETA_MODULE_DIR ATTNMETA_LIBRARY ATTNMETA_BACKEND LD_LIBRARY_PATH PYTHONPATH \
  PKG_CONFIG_PATH CMAKE_PREFIX_PATH
export ATTNMETA_BACKEND=cpu

pass() { echo "ok   $*"; }
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
  if [ -s "$log" ]; then tail -n 25 "$log" | sed 's/^/    | /'; fi
}
# run "description" command...: one check; output kept in $log.
run() {
  local what=$1
  shift
  if "$@" >"$log" 2>&1; then pass "$what"; else fail "$what"; fi
}

version=$(sed -n 's/^#define ATTNMETA_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' \
  "$src/include/attnmeta/attnmeta.h" | paste -sd.)
modules=()
for m in cuda hip; do
  if [ -e "$build/lib/libattnmeta_$m.so" ]; then modules+=("$m"); fi
done

# ---- install ----
run "cmake --install $build --prefix <tmp>/prefix" cmake --install "$build" --prefix "$prefix"
core=""
for cand in "$prefix"/lib/libattnmeta.so.0 "$prefix"/lib64/libattnmeta.so.0 "$prefix"/lib/*/libattnmeta.so.0; do
  if [ -e "$cand" ]; then core=$cand; break; fi
done
if [ -z "$core" ]; then
  fail "no libattnmeta.so.0 installed under $prefix"
  echo "examples: $failures check(s) failed"
  exit 1
fi
libdir=$(dirname "$core")
pydir=$(dirname "$(find "$prefix" -path '*-packages/attnmeta/__init__.py' 2>/dev/null | head -n 1)" 2>/dev/null)

layout_ok() {
  local missing=0 f
  for f in include/attnmeta/attnmeta.h include/attnmeta/device/topk_slot.h bin/attnmeta \
           include/attnmeta/conformance/vecfile.h include/attnmeta/conformance/vecrun.h \
           "${libdir#"$prefix"/}/libattnmeta_conformance.a" share/attnmeta/spec/attnmeta-vectors-v1.md \
           "${libdir#"$prefix"/}/libattnmeta.so" "${libdir#"$prefix"/}/pkgconfig/attnmeta.pc" \
           "${libdir#"$prefix"/}/cmake/attnmeta/attnmetaConfig.cmake" \
           "${libdir#"$prefix"/}/cmake/attnmeta/attnmetaConfigVersion.cmake"; do
    [ -e "$prefix/$f" ] || { echo "missing $f"; missing=1; }
  done
  for f in "$src"/include/attnmeta/*.h; do
    [ -e "$prefix/include/attnmeta/$(basename "$f")" ] || { echo "missing header $(basename "$f")"; missing=1; }
  done
  for f in "$src"/conformance/vectors/*.amv; do
    cmp -s "$f" "$prefix/share/attnmeta/vectors/$(basename "$f")" ||
      { echo "missing or different vector file share/attnmeta/vectors/$(basename "$f")"; missing=1; }
  done
  for m in "${modules[@]}"; do
    [ -e "$libdir/attnmeta/libattnmeta_$m.so" ] || { echo "missing module attnmeta/libattnmeta_$m.so"; missing=1; }
  done
  if [ -d "$src/python/attnmeta" ] && [ -z "$pydir" ]; then echo "missing Python package"; missing=1; fi
  return $missing
}
run "installed layout: headers, libattnmeta.so.0, modules (${modules[*]:-none}) in ${libdir#"$prefix"/}/attnmeta, CLI, CMake, pkg-config${pydir:+, Python}, conformance kit (library, headers, vectors, spec)" layout_ok

soname_ok() { readelf -d "$core" | grep -q 'SONAME.*\[libattnmeta\.so\.0\]'; }
run "soname libattnmeta.so.0" soname_ok

# ---- the examples through the CMake package ----
cmake_example() { # dir name [extra cmake args]
  local dir=$1 name=$2
  shift 2
  cmake -S "$src/examples/$dir" -B "$work/cmake-$name" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" "$@" &&
    cmake --build "$work/cmake-$name" &&
    grep -q "attnmeta_DIR:PATH=$prefix/" "$work/cmake-$name/CMakeCache.txt"
}
run "CMake: C example builds with find_package(attnmeta 0.1 CONFIG)" cmake_example c c
run "CMake: C example runs on the CPU backend" "$work/cmake-c/step_example_c" cpu
run "CMake: C++ example builds with find_package(attnmeta 0.1 CONFIG)" cmake_example cpp cpp
run "CMake: C++ example runs on the CPU backend" "$work/cmake-cpp/step_example_cpp" cpu
# The fused top-k example: the public device functions in an engine's own
# selection kernel, on the CPU; its CUDA program is built where nvcc is
# found and run where a GPU is.
run "CMake: fused top-k example (examples/fused_topk) builds" cmake_example fused_topk fused
run "fused top-k example: the selection writing slots itself equals selection + attnmeta_convert_topk on the CPU" \
  "$work/cmake-fused/fused_topk_cpu"
run "fused top-k example, more shapes (T R L K): 1 1 100 512, 64 9 8192 2048, 20 3 777 700" \
  bash -c 'for a in "1 1 100 512" "64 9 8192 2048" "20 3 777 700"; do "$0" $a || exit 1; done' "$work/cmake-fused/fused_topk_cpu"
nvcc_path=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
if [ -n "$nvcc_path" ]; then
  run "CMake: fused top-k example's CUDA program builds with $nvcc_path" \
    cmake_example fused_topk fused-cuda -DFUSED_TOPK_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc_path"
  if nvidia-smi -L >/dev/null 2>&1 && [[ " ${modules[*]} " == *" cuda "* ]]; then
    run "fused top-k example on the GPU: fused equals unfused and the reference" \
      env ATTNMETA_BACKEND= "$work/cmake-fused-cuda/fused_topk_cuda" 5
  else
    echo "skip fused top-k example on the GPU (no NVIDIA GPU or no CUDA module)"
  fi
else
  echo "skip fused top-k example's CUDA program (no nvcc)"
fi
if [ -e "$libdir/libattnmeta.a" ]; then
  static_ok() { "$work/cmake-static/step_example_c" cpu && ! ldd "$work/cmake-static/step_example_c" | grep -q libattnmeta; }
  run "CMake: C example builds against attnmeta::attnmeta_static" \
    cmake_example c static -DATTNMETA_EXAMPLE_STATIC=ON
  run "CMake: static C example runs on the CPU backend, no libattnmeta.so needed" static_ok
else
  # Asked for and not built: find_package says why, not only "not found".
  no_static_ok() {
    mkdir -p "$work/no-static"
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(s LANGUAGES C)\nfind_package(attnmeta 0.1 CONFIG REQUIRED COMPONENTS static)\n' \
      >"$work/no-static/CMakeLists.txt"
    ! cmake -S "$work/no-static" -B "$work/no-static/b" -DCMAKE_PREFIX_PATH="$prefix" >"$work/no-static/log" 2>&1 &&
      tr -s ' \n' ' ' <"$work/no-static/log" | grep -q 'ATTNMETA_BUILD_STATIC=ON'
  }
  run "CMake: COMPONENTS static without the static core fails saying how to build it" no_static_ok
fi

# A consumer of the conformance kit's library: attnmeta::conformance reads the
# installed vectors with the installed headers.
kit_consumer_ok() {
  local d="$work/kit-consumer" n
  mkdir -p "$d"
  cat >"$d/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(kit_consumer LANGUAGES C)
find_package(attnmeta 0.1 CONFIG REQUIRED)
add_executable(kit_consumer main.c)
target_link_libraries(kit_consumer PRIVATE attnmeta::conformance)
CMAKE
  cat >"$d/main.c" <<'C'
#include <stdio.h>
#include <attnmeta/conformance/vecfile.h>
int main(int argc, char **argv) {
  char err[512], **paths;
  int i, n, vectors = 0;
  if (argc != 2 || (n = amv_list_files(argv[1], &paths, err, sizeof err)) <= 0) return 1;
  for (i = 0; i < n; i++) {
    amv_file f;
    if (amv_load_headers(paths[i], &f, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 1; }
    vectors += f.nvectors;
    amv_file_free(&f);
  }
  amv_free_list(paths, n);
  printf("%d vectors in %d files\n", vectors, n);
  return 0;
}
C
  n=$(find "$src/conformance/vectors" -name '*.amv' -exec grep -c '^vector ' {} + |
      awk -F: '{s += $NF} END {print s}')
  cmake -S "$d" -B "$d/b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" &&
    cmake --build "$d/b" &&
    "$d/b/kit_consumer" "$prefix/share/attnmeta/vectors" | tee "$d/out" &&
    grep -q "^$n vectors in " "$d/out"
}
run "CMake: attnmeta::conformance reads the installed vectors with the installed headers" kit_consumer_ok

version_check() {
  local v
  for v in 0.1 "$version" 1.0; do
    mkdir -p "$work/version-$v"
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(v LANGUAGES NONE)\nfind_package(attnmeta %s CONFIG REQUIRED)\n' \
      "$v" >"$work/version-$v/CMakeLists.txt"
    if cmake -S "$work/version-$v" -B "$work/version-$v/b" -DCMAKE_PREFIX_PATH="$prefix" >"$work/version-$v/log" 2>&1; then
      [ "$v" != 1.0 ] || { echo "find_package(attnmeta 1.0) accepted $version"; return 1; }
    else
      [ "$v" = 1.0 ] || { echo "find_package(attnmeta $v) refused $version"; cat "$work/version-$v/log"; return 1; }
    fi
  done
}
run "CMake: version check: find_package(attnmeta 0.1 / $version) accept $version, 1.0 refuses it" version_check

# ---- the examples through pkg-config ----
pc_ok() {
  local got
  got=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --modversion attnmeta) &&
    [ "$got" = "$version" ] &&
    got=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs attnmeta) &&
    echo "$got" &&
    [ "$got" = "-I$prefix/include -L$libdir -lattnmeta " ] || [ "$got" = "-I$prefix/include -L$libdir -lattnmeta" ]
}
run "pkg-config: attnmeta $version, --cflags --libs with plain paths (-I$prefix/include -L$libdir)" pc_ok
run "pkg-config: C and C++ examples build (examples/Makefile)" \
  env PKG_CONFIG_PATH="$libdir/pkgconfig" make -C "$src/examples" OUT="$work/pkgconfig"
run "pkg-config: C example runs on the CPU backend" "$work/pkgconfig/step_example_c" cpu
run "pkg-config: C++ example runs on the CPU backend" "$work/pkgconfig/step_example_cpp" cpu

# ---- the README's examples, as printed there ----
# Each block follows a "<!-- ci/examples.sh: NAME -->" line of README.md;
# NAME.out holds what NAME must print.
readme_block() { "$python" "$src/ci/readme_block.py" "$1" "$src/README.md"; }
readme_short() { [ "$(wc -c <"$src/README.md")" -le 16384 ]; }
run "README: at most 16 KB (docs/ holds the detail, docs/performance.md the history)" readme_short
readme_c_ok() {
  local d="$work/readme"
  mkdir -p "$d" && readme_block readme_step.c >"$d/readme_step.c" &&
    readme_block readme_step.out >"$d/want" &&
    cc -std=c11 -Wall -Wextra -Werror -o "$d/readme_step" "$d/readme_step.c" \
      $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs attnmeta) -Wl,-rpath,"$libdir" &&
    "$d/readme_step" >"$d/got" && diff -u "$d/want" "$d/got"
}
run "README: the C example builds against the prefix (-Wall -Wextra -Werror) and prints what the README shows" readme_c_ok
if [ -n "$pydir" ]; then
  readme_numpy_ok() {
    local d="$work/readme"
    mkdir -p "$d" && readme_block readme_numpy.py >"$d/readme_numpy.py" &&
      readme_block readme_numpy.out >"$d/want_numpy" &&
      (cd "$d" && PYTHONPATH="$(dirname "$pydir")" "$python" readme_numpy.py >"$d/got_numpy") &&
      diff -u "$d/want_numpy" "$d/got_numpy"
  }
  run "README: the NumPy example runs with the installed package and prints what the README shows" readme_numpy_ok
  # The torch example needs torch and a CUDA or ROCm GPU.
  if "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    readme_torch_ok() {
      local d="$work/readme"
      mkdir -p "$d" && readme_block readme_torch.py >"$d/readme_torch.py" &&
        readme_block readme_torch.out >"$d/want_torch" &&
        (cd "$d" && PYTHONPATH="$(dirname "$pydir")" ATTNMETA_BACKEND= "$python" readme_torch.py >"$d/got_torch") &&
        diff -u "$d/want_torch" "$d/got_torch"
    }
    run "README: the torch example runs on the GPU and prints what the README shows" readme_torch_ok
  else
    echo "skip README: the torch example (no torch with a GPU for $python)"
  fi
fi

# ---- the installed command-line tool ----
# The loader's trace (LD_DEBUG=files) names every file it maps: the core
# and each module must come from the prefix, nothing from the build tree.
info_ok() { # prefix-to-check
  local p=$1 trace="$work/info.trace" m dir
  LD_DEBUG=files LD_DEBUG_OUTPUT="$trace" "$p/bin/attnmeta" info || return 1
  cat "$trace".* >"$trace.all" 2>/dev/null
  if grep -q "$build" "$trace.all"; then echo "loaded from the build tree:"; grep "$build" "$trace.all"; return 1; fi
  grep -Eq "calling init: $p/bin/\.\./[^ ]*libattnmeta\.so\.0|calling init: $libdir/libattnmeta\.so\.0" "$trace.all" ||
    { echo "libattnmeta.so.0 not loaded from $p"; grep -E 'calling init' "$trace.all"; return 1; }
  for m in "${modules[@]}"; do
    "$p/bin/attnmeta" info | grep -Eq "^backend $m +built for: .*; devices: [0-9]+" ||
      { echo "the $m module line does not show a loaded module"; return 1; }
    dir=$(sed -n "s|.*file=\(.*\)/libattnmeta_$m\.so \[0\];  dynamically loaded by.*|\1|p" "$trace.all" | head -n 1)
    [ -n "$dir" ] && [ "$(cd "$dir" && pwd -P)" = "$(cd "$p/${libdir#"$prefix"/}/attnmeta" && pwd -P)" ] ||
      { echo "libattnmeta_$m.so loaded from '${dir:-nowhere}', not $p/${libdir#"$prefix"/}/attnmeta"; return 1; }
  done
  rm -f "$trace".*
}
run "bin/attnmeta info: core and modules (${modules[*]:-none}) loaded from the prefix" info_ok "$prefix"
"$prefix/bin/attnmeta" info 2>&1 | sed 's/^/    | /'

# ---- the conformance kit on the installed prefix ----
# No files given: the tool runs the vectors installed beside it. Run from an
# empty folder, so nothing of the source tree can be picked up.
conformance_ok() { # prefix-to-check
  local p=$1 out="$work/conformance.out" n
  mkdir -p "$work/elsewhere"
  (cd "$work/elsewhere" && "$p/bin/attnmeta" conformance --backend cpu >"$out" 2>&1) ||
    { tail -n 20 "$out"; return 1; }
  n=$(find "$src/conformance/vectors" -name '*.amv' -exec grep -c '^vector ' {} + |
      awk -F: '{s += $NF} END {print s}')
  grep -qx "$n passed, 0 failed, 0 skipped" "$out" ||
    { echo "expected '$n passed, 0 failed, 0 skipped':"; tail -n 3 "$out"; return 1; }
  if grep -E '^(pass|FAIL|skip) ' "$out" | grep -qv "^[a-zA-Z]*  $(cd "$p" && pwd -P)/share/attnmeta/vectors/"; then
    echo "a vector ran from outside $p/share/attnmeta/vectors:"
    grep -E '^(pass|FAIL|skip) ' "$out" | grep -v "$(cd "$p" && pwd -P)/share/attnmeta/vectors/" | head -n 3
    return 1
  fi
  tail -n 1 "$out"
}
run "bin/attnmeta conformance (no files): the installed vectors pass on the CPU backend" conformance_ok "$prefix"
tail -n 1 "$log" | sed 's/^/    | /'

# ---- exported symbols ----
run "ci/check_symbols.sh <prefix>" "$src/ci/check_symbols.sh" "$prefix"

# ---- Python ----
run "Python: examples/python_ctypes.py with $python on the installed library" \
  "$python" "$src/examples/python_ctypes.py" "$prefix"
if [ -d "$src/python/attnmeta" ]; then
  # Without $ATTNMETA_LIBRARY the installed package must load the library of
  # its own installation, and the core the modules of that installation.
  py_pkg_ok() { # prefix
    local p=$1 pkgdir=${pydir/#$prefix/$1}
    (cd "$work" && PYTHONPATH="$(dirname "$pkgdir")" "$python" -c '
import os, sys
import attnmeta
prefix, pkg = os.path.realpath(sys.argv[1]), os.path.realpath(os.path.dirname(attnmeta.__file__))
lib = os.path.realpath(attnmeta.library_path)
print("attnmeta", attnmeta.version_string(), "package", pkg, "library", lib)
for kind in sys.argv[2:]:
    print(kind, "module built for", attnmeta.backend_targets(getattr(attnmeta.Backend, kind.upper())))
sys.exit(0 if pkg.startswith(prefix + os.sep) and lib.startswith(prefix + os.sep) else 1)
' "$p" "${modules[@]}")
  }
  run "Python: import attnmeta from the prefix loads the prefix's library and modules" py_pkg_ok "$prefix"
fi

# ---- relocation: the whole prefix moved elsewhere ----
moved="$work/moved/prefix"
mkdir -p "$work/moved" && mv "$prefix" "$moved"
relocated_ok() {
  rm -rf "$work/cmake-moved"
  cmake -S "$src/examples/c" -B "$work/cmake-moved" -DCMAKE_PREFIX_PATH="$moved" &&
    cmake --build "$work/cmake-moved" && "$work/cmake-moved/step_example_c" cpu &&
    PKG_CONFIG_PATH="${libdir/#$prefix/$moved}/pkgconfig" pkg-config --define-prefix --cflags attnmeta |
      grep -q -- "-I$moved/include" &&
    libdir=${libdir/#$prefix/$moved} prefix=$moved info_ok "$moved" &&
    conformance_ok "$moved" &&
    { [ -z "$pydir" ] || py_pkg_ok "$moved"; }
}
run "relocated prefix: CMake package, pkg-config file (--define-prefix), CLI module lookup, installed conformance vectors and Python package follow the move" relocated_ok

# ---- uninstall: what the install put in place goes, nothing else ----
uninstall_ok() {
  local p="$work/uninstall/prefix" left
  mkdir -p "$p/bin" "$p/lib/pkgconfig" "$p/include" &&
    echo keep >"$p/bin/other-tool" && echo keep >"$p/lib/pkgconfig/other.pc" &&
    cmake --install "$build" --prefix "$p" >/dev/null || return 1
  # Python leaves __pycache__ folders beside the package it imports.
  (cd "$work" && PYTHONPATH="$(dirname "$(find "$p" -path '*-packages/attnmeta/__init__.py' | head -n 1)")/.." \
    "$python" -c 'import attnmeta, attnmeta.integrations') || return 1
  cmake --build "$build" --target uninstall || return 1
  left=$(find "$p" \( -type f -o -type l \) ! -name other-tool ! -name other.pc; find "$p" -name '*attnmeta*')
  [ -z "$left" ] || { echo "left behind:"; echo "$left"; return 1; }
  [ -f "$p/bin/other-tool" ] && [ -f "$p/lib/pkgconfig/other.pc" ] ||
    { echo "uninstall removed files it had not installed"; return 1; }
  # A second run has no manifest left, and says so.
  ! cmake --build "$build" --target uninstall 2>&1 | tee "$work/uninstall/again" >/dev/null
  tr -s ' \n' ' ' <"$work/uninstall/again" | grep -q "nothing was installed from this build folder" ||
    { echo "a second uninstall did not say there is nothing to remove"; return 1; }
}
run "cmake --build BUILD --target uninstall: removes every installed file (after Python's imports too), keeps the prefix's other files" uninstall_ok

if [ $failures -ne 0 ]; then
  echo "examples: $failures check(s) failed"
  exit 1
fi
echo "examples: all checks passed"
