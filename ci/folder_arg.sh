# SPDX-License-Identifier: Apache-2.0
# Sourced by the checks that take one folder (ci/check_symbols.sh,
# ci/examples.sh); sets `src` to the source tree.
#
# folder_arg VAR USAGE WHAT ARGS...: sets VAR to the absolute path of the
# one folder in ARGS; exits 2 with "usage: $0 USAGE" when ARGS are not one
# word, 1 with "FAIL no such WHAT" when it is no folder.
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
folder_arg() {
  local var=$1 usage=$2 what=$3 dir
  shift 3
  if [ $# -ne 1 ]; then
    echo "usage: $0 $usage" >&2
    exit 2
  fi
  dir=$(cd "$1" 2>/dev/null && pwd) || { echo "FAIL no such $what: $1"; exit 1; }
  printf -v "$var" '%s' "$dir"
}
