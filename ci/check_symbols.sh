#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ci/check_symbols.sh BUILD_OR_PREFIX
#
# ABI hygiene of a build tree (BUILD/lib/libattnmeta.so, modules beside it)
# or of an install prefix (PREFIX/<libdir>/libattnmeta.so, modules in
# <libdir>/attnmeta/):
#   - the soname is libattnmeta.so.<ATTNMETA_VERSION_MAJOR>;
#   - `nm -D --defined-only` of libattnmeta.so is exactly abi/libattnmeta.symbols;
#   - abi/libattnmeta.symbols is exactly the ATTNMETA_API declarations of the
#     public headers (the installed ones for a prefix, else include/attnmeta/);
#   - each backend module exports exactly attnmeta_backend_entry;
#   - a static libattnmeta.a, when present, defines every listed symbol.
# Prints one line per check ("ok" or "FAIL", then the difference) and exits
# non-zero when any check fails. See docs/abi.md.
set -u -o pipefail

. "$(dirname "${BASH_SOURCE[0]}")/folder_arg.sh"
folder_arg root BUILD_DIR_OR_INSTALL_PREFIX folder "$@"
list="$src/abi/libattnmeta.symbols"
failures=0

ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
# Prints the lines only in $1 ("-") and only in $2 ("+"), indented.
show_diff() {
  diff <(printf '%s\n' "$1") <(printf '%s\n' "$2") | sed -n 's/^< /    - /p; s/^> /    + /p'
}
exported() { nm -D --defined-only --format=posix "$1" | awk '{print $1}' | LC_ALL=C sort -u; }

# ---- find the core library ----
core=""
for cand in "$root"/lib/libattnmeta.so "$root"/lib64/libattnmeta.so "$root"/lib/*/libattnmeta.so; do
  if [ -e "$cand" ]; then core=$cand; break; fi
done
if [ -z "$core" ]; then
  echo "FAIL no libattnmeta.so under $root/lib, $root/lib64 or $root/lib/*"
  exit 1
fi
libdir=$(dirname "$core")
if [ -f "$root/include/attnmeta/attnmeta.h" ]; then
  headers="$root/include/attnmeta"
else
  headers="$src/include/attnmeta"
fi
echo "core library: $core"

# ---- soname ----
major=$(sed -n 's/^#define ATTNMETA_VERSION_MAJOR[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$headers/attnmeta.h")
soname=$(readelf -d "$core" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" = "libattnmeta.so.$major" ]; then
  ok "soname $soname"
else
  fail "soname is '$soname', expected libattnmeta.so.$major"
fi

# ---- exports of the core library against the committed list ----
want=$(grep -v -e '^#' -e '^[[:space:]]*$' "$list" | LC_ALL=C sort -u)
have=$(exported "$core")
if [ "$have" = "$want" ]; then
  ok "libattnmeta.so exports exactly abi/libattnmeta.symbols ($(printf '%s\n' "$want" | wc -l) symbols)"
else
  fail "libattnmeta.so exports differ from abi/libattnmeta.symbols (- listed only, + exported only):"
  show_diff "$want" "$have"
fi

# ---- the committed list against the header declarations ----
# Joins each header into one line (comments and preprocessor lines removed)
# and takes the name before the '(' of every ATTNMETA_API declaration.
declared=$(for h in "$headers"/*.h; do
    sed -e 's://.*$::' -e '/^[[:space:]]*#/d' "$h" | tr '\n' ' ' | sed -e 's:/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/: :g' |
      grep -o 'ATTNMETA_API[^;{(]*(' | sed -e 's/[[:space:]]*($//' -e 's/.*[^A-Za-z0-9_]//'
  done | LC_ALL=C sort -u)
if [ "$declared" = "$want" ]; then
  ok "abi/libattnmeta.symbols matches the ATTNMETA_API declarations of $headers/*.h"
else
  fail "abi/libattnmeta.symbols differs from the ATTNMETA_API declarations of $headers/*.h (- listed only, + declared only):"
  show_diff "$want" "$declared"
fi

# ---- backend modules ----
if [ -d "$libdir/attnmeta" ]; then moddir="$libdir/attnmeta"; else moddir="$libdir"; fi
found_module=0
for m in "$moddir"/libattnmeta_*.so; do
  [ -e "$m" ] || continue
  found_module=1
  have=$(exported "$m")
  if [ "$have" = "attnmeta_backend_entry" ]; then
    ok "$(basename "$m") exports exactly attnmeta_backend_entry"
  else
    fail "$(basename "$m") must export exactly attnmeta_backend_entry (- expected only, + exported only):"
    show_diff "attnmeta_backend_entry" "$have"
  fi
done
if [ $found_module = 0 ]; then
  echo "note no backend module in $moddir (built without CUDA and HIP)"
fi

# ---- static core, when built ----
if [ -e "$libdir/libattnmeta.a" ]; then
  defined=$(nm -g --defined-only --format=posix "$libdir/libattnmeta.a" 2>/dev/null |
    awk 'NF >= 2 && $1 !~ /:$/ && $1 !~ /\]$/ {print $1}' | LC_ALL=C sort -u)
  missing=$(LC_ALL=C comm -23 <(printf '%s\n' "$want") <(printf '%s\n' "$defined"))
  if [ -z "$missing" ]; then
    ok "libattnmeta.a defines every listed symbol"
  else
    fail "libattnmeta.a lacks listed symbols:"
    printf '    - %s\n' $missing
  fi
fi

if [ $failures -ne 0 ]; then
  echo "check_symbols: $failures check(s) failed"
  exit 1
fi
echo "check_symbols: all checks passed"
