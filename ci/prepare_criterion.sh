#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci/prepare_criterion.sh OUTDIR
#
# Collects Debian's Criterion (package libcriterion-dev) into OUTDIR so that a
# machine without Criterion and without network (the GPU test machine) can
# build and run the test suite against it:
#
#   OUTDIR/include/criterion/...   the headers
#   OUTDIR/lib/libcriterion.so*    the library, with its soname links
#   OUTDIR/lib/lib*.so*            every shared library it needs, except the
#                                  C runtime (glibc's libraries, the dynamic
#                                  loader, libstdc++, libgcc_s), which every
#                                  Linux machine has
#   OUTDIR/MANIFEST.txt            what was copied, from which package
#
# Each copied library gets the run path $ORIGIN (when patchelf is present),
# so the folder is self-contained: a program linked with
#   -I OUTDIR/include -L OUTDIR/lib -lcriterion
#   -Wl,-rpath-link,OUTDIR/lib -Wl,-rpath,OUTDIR/lib
# finds everything there. The script ends by building and running such a
# program, and checks that every library it loads outside the C runtime comes
# from OUTDIR/lib.
#
# Run it on Debian 12 (or newer) with libcriterion-dev installed; the copied
# libraries need a glibc at least as new as the one the script reports (a
# glibc is backward compatible: Ubuntu 24.04's 2.39 runs Debian 12's 2.36
# binaries). The usual place is the repository's ignored folder .carry/:
#   ci/prepare_criterion.sh .carry/criterion
set -euo pipefail

usage() {
  echo "usage: $0 OUTDIR" >&2
  exit 2
}
[ $# -eq 1 ] || usage
out=$1

cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || cc=gcc

# ---- locate Criterion ----
lib_link=$("$cc" -print-file-name=libcriterion.so 2>/dev/null || true)
if [ -z "$lib_link" ] || [ "$lib_link" = libcriterion.so ] || [ ! -e "$lib_link" ]; then
  lib_link=$(ldconfig -p 2>/dev/null | awk '$1 ~ /^libcriterion\.so/ {print $NF; exit}')
fi
if [ -z "$lib_link" ] || [ ! -e "$lib_link" ]; then
  echo "prepare_criterion: libcriterion.so not found; install it first: apt-get install libcriterion-dev" >&2
  exit 1
fi
lib_real=$(readlink -f "$lib_link")
inc_dir=""
for d in /usr/include /usr/local/include "$(dirname "$(dirname "$lib_real")")/include"; do
  if [ -f "$d/criterion/criterion.h" ]; then
    inc_dir=$d
    break
  fi
done
if [ -z "$inc_dir" ]; then
  echo "prepare_criterion: criterion/criterion.h not found; apt-get install libcriterion-dev" >&2
  exit 1
fi

# glibc's own libraries, the loader and the compiler's runtime: never copied.
is_system_runtime() {
  case "$1" in
    linux-vdso.so* | linux-gate.so* | ld-linux*.so* | ld64.so* | libc.so.* | libm.so.* | \
      libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | libutil.so.* | \
      libanl.so.* | libnss_*.so.* | libBrokenLocale.so.* | libc_malloc_debug.so.* | \
      libthread_db.so.* | libstdc++.so.* | libgcc_s.so.*)
      return 0
      ;;
  esac
  return 1
}

soname_of() {
  readelf -d "$1" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p'
}

package_of() {
  # dpkg -S wants the path the package installed; try the path and its /usr twin.
  local p
  for p in "$1" "/usr$1" "${1#/usr}"; do
    if dpkg-query -S "$p" >/dev/null 2>&1; then
      local pkg
      pkg=$(dpkg-query -S "$p" 2>/dev/null | head -n 1 | cut -d: -f1)
      echo "$pkg $(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null)"
      return
    fi
  done
  echo "unknown"
}

# ---- copy ----
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "${out:?}/include" "${out:?}/lib"
mkdir -p "$out/include" "$out/lib"
cp -R "$inc_dir/criterion" "$out/include/"

manifest="$out/MANIFEST.txt"
{
  echo "Criterion collected by ci/prepare_criterion.sh on $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  # shellcheck disable=SC1091
  echo "host: $(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown}"), $(uname -m)"
  echo "headers: $inc_dir/criterion ($(package_of "$inc_dir/criterion/criterion.h"))"
  echo "libraries (file <- origin, package):"
} >"$manifest"

# copy_lib REALPATH NEEDED_NAME: the file under its own name, plus links named
# after its soname and the name a dependant asked for.
copy_lib() {
  local real=$1 needed=$2 base soname
  base=$(basename "$real")
  if [ ! -e "$out/lib/$base" ]; then
    cp -L "$real" "$out/lib/$base"
    chmod u+w "$out/lib/$base"
    echo "  $base <- $real ($(package_of "$real"))" >>"$manifest"
  fi
  soname=$(soname_of "$real")
  for name in "$soname" "$needed"; do
    if [ -n "$name" ] && [ "$name" != "$base" ] && [ ! -e "$out/lib/$name" ]; then
      ln -s "$base" "$out/lib/$name"
    fi
  done
}

copy_lib "$lib_real" libcriterion.so
ln -sfn "$(basename "$lib_real")" "$out/lib/libcriterion.so"

# ldd lists the whole closure of dependencies, not only the direct ones.
ldd "$lib_real" | while read -r name arrow path _; do
  [ "$arrow" = "=>" ] || continue
  is_system_runtime "$name" && continue
  if [ ! -e "$path" ]; then
    echo "prepare_criterion: $name needed by libcriterion is not installed ($path)" >&2
    exit 1
  fi
  copy_lib "$(readlink -f "$path")" "$name"
done

if command -v patchelf >/dev/null 2>&1; then
  for f in "$out"/lib/*; do
    [ -L "$f" ] && continue
    # shellcheck disable=SC2016 # $ORIGIN is for the loader, not the shell
    patchelf --set-rpath '$ORIGIN' "$f"
  done
  echo "run path of every library: \$ORIGIN (patchelf)" >>"$manifest"
else
  echo "prepare_criterion: patchelf not found: the libraries keep no run path, so programs" >&2
  echo "  need LD_LIBRARY_PATH=$out/lib (ci/gpu.sh sets it); apt-get install patchelf avoids that" >&2
  echo "run path: none (no patchelf): set LD_LIBRARY_PATH to lib/" >>"$manifest"
fi

# Newest glibc symbol version the copied libraries use.
glibc_needed=$(for f in "$out"/lib/*; do
  [ -L "$f" ] || objdump -T "$f" 2>/dev/null
done | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n -k3,3n -u | tail -n 1)
echo "newest glibc symbol version used: ${glibc_needed:-none}" >>"$manifest"

# ---- check: build and run a Criterion program against the folder alone ----
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/check.c" <<'EOF'
#include <criterion/criterion.h>
Test(prepare, passes) { cr_assert_eq(1 + 1, 2); }
Test(prepare, skips) { cr_skip_test("skip works"); }
EOF
"$cc" -I"$out/include" "$work/check.c" -o "$work/check" -L"$out/lib" -lcriterion \
  -Wl,-rpath-link,"$out/lib" -Wl,-rpath,"$out/lib"

status=0
# 1. With LD_LIBRARY_PATH pointing only at the folder.
if ! LD_LIBRARY_PATH="$out/lib" "$work/check" --jobs 1 --ascii >"$work/run1.log" 2>&1 ||
  ! grep -q 'Synthesis: Tested: 1 | Passing: 1 | Failing: 0 | Crashing: 0' "$work/run1.log"; then
  echo "prepare_criterion: the check program failed with LD_LIBRARY_PATH=$out/lib:" >&2
  cat "$work/run1.log" >&2
  status=1
fi
# 2. Where the loader found each library: nothing outside the C runtime may
# come from the system, or a machine without those libraries would fail.
LD_LIBRARY_PATH="$out/lib" LD_DEBUG=libs "$work/check" --list >/dev/null 2>"$work/libs.log" || true
while read -r path; do
  name=$(basename "$path")
  is_system_runtime "$name" && continue
  case "$path" in
    "$out"/lib/*) ;;
    *)
      echo "prepare_criterion: $name loaded from $path, not from $out/lib" >&2
      status=1
      ;;
  esac
done < <(sed -n 's/.*calling init: \(.*\)$/\1/p' "$work/libs.log" | sort -u)
# 3. With no LD_LIBRARY_PATH at all: the run paths alone must do.
if ! env -u LD_LIBRARY_PATH "$work/check" --jobs 1 --ascii >"$work/run2.log" 2>&1; then
  echo "prepare_criterion: the check program failed without LD_LIBRARY_PATH:" >&2
  cat "$work/run2.log" >&2
  status=1
fi

if [ "$status" -ne 0 ]; then
  echo "prepare_criterion: FAILED; $out is not usable" >&2
  exit 1
fi
echo "check: a program linked against $out ran with LD_LIBRARY_PATH=$out/lib and without it;" \
  "every library outside the C runtime came from $out/lib" >>"$manifest"
cat "$manifest"
echo "prepare_criterion: $out is ready ($(du -sh "$out" | cut -f1)); copy it to the GPU machine as" \
  ".carry/criterion in the source tree, or point CRITERION_ROOT at it"
