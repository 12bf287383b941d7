#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs every Debian package the build and the tests need (run as root).
set -euo pipefail
packages=(
  build-essential cmake pkg-config git
  libcriterion-dev                       # test framework
  hipcc libamdhip64-dev                  # HIP backend module (built, not run, without an AMD GPU)
  clang-19 clang-tools-19 lld-19 libclang-rt-19-dev # its HIP compiler: knows gfx942 (clang-15 stops at gfx940)
  libtbb-dev                             # HIP-CPU (third_party/hip-cpu): the HIP module run on the CPU in tests
  clang libclang-rt-14-dev               # libFuzzer and sanitizer runtimes
  python3 python3-numpy python3-pytest python3-setuptools
  python3-pip python3-wheel python3-venv # pip install . into a fresh venv (ci/wheel.sh)
  python3-setuptools-whl python3-wheel-whl python3-pip-whl # /usr/share/python-wheels: pip install . offline
  python3-mypy                           # the Python package's type hints (python/tests)
)
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
echo "deps: installed ${packages[*]}"
