#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source file of the project (C, C++, HIP, CUDA, Python, shell, CMake)
# names its licence in an SPDX line; vendored code (third_party/) keeps its own.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=$(git ls-files -- '*.c' '*.h' '*.cpp' '*.hip' '*.cu' '*.py' '*.sh' '*.cmake' '*.in' \
            '*CMakeLists.txt' .ci/run ':!third_party/' |
          while read -r f; do grep -q 'SPDX-License-Identifier: Apache-2.0' "$f" || echo "$f"; done)
if [ -n "$missing" ]; then
  echo "check_spdx: no SPDX-License-Identifier line in:"; echo "$missing"; exit 1
fi
echo "check_spdx: every source file has its SPDX line"
