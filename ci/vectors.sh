#!/usr/bin/env bash
# The committed conformance vectors (conformance/vectors/*.amv) must be
# exactly what the generator (conformance/generator/) makes from the case
# table (cases.c) and the naive reference (reference.c): regenerates them into
# a temporary folder and compares, byte for byte. Fails on any difference, a
# missing or extra file, or a file of 1 MiB or more.
#
# usage: ci/vectors.sh BUILD_DIR [--update]
#   BUILD_DIR  a configured build folder; attnmeta_gen_vectors is built there
#              when it is missing or out of date
#   --update   after a deliberate change of the cases or the reference:
#              write the regenerated files into conformance/vectors/ (then
#              review the difference and commit it)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
if [ $# -lt 1 ] || [ $# -gt 2 ] || { [ $# = 2 ] && [ "$2" != --update ]; }; then
  echo "usage: ci/vectors.sh BUILD_DIR [--update]" >&2
  exit 2
fi
build=$1
update=${2:-}

if ! cmake --build "$build" --target attnmeta_gen_vectors >"${TMPDIR:-/tmp}/vectors-build.$$.log" 2>&1; then
  cat "${TMPDIR:-/tmp}/vectors-build.$$.log" >&2
  rm -f "${TMPDIR:-/tmp}/vectors-build.$$.log"
  echo "ci/vectors.sh: cannot build attnmeta_gen_vectors in $build" >&2
  exit 1
fi
rm -f "${TMPDIR:-/tmp}/vectors-build.$$.log"
gen=$(find "$build" -name attnmeta_gen_vectors -type f -perm -u+x 2>/dev/null | head -n 1)
if [ -z "$gen" ]; then
  echo "ci/vectors.sh: attnmeta_gen_vectors not found under $build" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/vectors"
if ! "$gen" "$tmp/vectors" >"$tmp/gen.log" 2>&1; then
  cat "$tmp/gen.log" >&2
  echo "ci/vectors.sh: the generator failed" >&2
  exit 1
fi

if [ "$update" = --update ]; then
  mkdir -p "$root/conformance/vectors"
  rm -f "$root"/conformance/vectors/*.amv
  cp "$tmp"/vectors/*.amv "$root/conformance/vectors/"
  cat "$tmp/gen.log"
  echo "ci/vectors.sh: conformance/vectors/ rewritten; review 'git diff conformance/vectors' and commit"
  exit 0
fi

status=0
if ! diff -r -u "$root/conformance/vectors" "$tmp/vectors" >"$tmp/diff.txt"; then
  echo "ci/vectors.sh: conformance/vectors/ differs from what the generator makes (first 60 lines):"
  head -n 60 "$tmp/diff.txt"
  echo "ci/vectors.sh: if the change of the cases or the reference is deliberate, run"
  echo "  bash ci/vectors.sh $build --update"
  status=1
fi
for f in "$root"/conformance/vectors/*.amv; do
  size=$(wc -c <"$f")
  if [ "$size" -ge 1048576 ]; then
    echo "ci/vectors.sh: $f is $size bytes, 1 MiB or more"
    status=1
  fi
done
if [ $status = 0 ]; then
  files=$(find "$root/conformance/vectors" -name '*.amv' | wc -l)
  vectors=$(cat "$root"/conformance/vectors/*.amv | grep -c '^vector ')
  bytes=$(cat "$root"/conformance/vectors/*.amv | wc -c)
  echo "ci/vectors.sh: $vectors vectors in $files files ($bytes bytes) match the generator"
fi
exit $status
