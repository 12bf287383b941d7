# SPDX-License-Identifier: Apache-2.0
"""`pip install .` from the repository root: builds the C library with CMake
and bundles it into a platform wheel (pyproject.toml holds the metadata).

What the wheel's attnmeta/ holds besides the Python package:
  lib/libattnmeta.so.0              the core library with the CPU backend
  lib/libattnmeta_{cuda,hip}.so     the GPU modules CMake built (the core
                                    loads them from its own folder)
  bin/attnmeta                      the command-line tool (RUNPATH
                                    $ORIGIN/../lib); the `attnmeta` console
                                    script runs it
  share/attnmeta/vectors/*.amv      the conformance vectors, which
                                    `attnmeta conformance` runs without files

CMake 3.25 or newer must be on PATH (a missing or older one stops the
build with a message saying so). CMake finds the compilers as a plain
`cmake -S . -B build` does: nvcc on PATH or at /usr/local/cuda/bin/nvcc
builds the CUDA module, a HIP compiler the HIP module. Environment:
  ATTNMETA_CMAKE_ARGS        more configure arguments, shell-quoted (e.g.
                             "-DATTNMETA_CUDA_ARCHITECTURES=90-real
                             -DATTNMETA_WITH_HIP=OFF")
  CMAKE_BUILD_PARALLEL_LEVEL build jobs (default: the number of CPUs)
  ATTNMETA_WHEEL_BUILD_DIR   the CMake build folder (default:
                             build-wheel/cmake in this checkout; kept, so
                             a second install rebuilds only what changed)
  ATTNMETA_WHEEL_PLATFORM    the wheel's platform tag (default: from the
                             newest GLIBC symbol version the bundled files
                             need, manylinux_2_<N>_<arch>; docs/install.md)

The version is the C header's (ATTNMETA_VERSION_* in
include/attnmeta/attnmeta.h), the project's one place for it.
"""

import os
import platform
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))
# setuptools' own build folder: not build/, the README's CMake build folder,
# whose lib/ would otherwise be packed into the wheel.
BUILD_BASE = os.path.join(ROOT, "build-wheel")
MODULES = ("libattnmeta_cuda.so", "libattnmeta_hip.so")
CMAKE_MINIMUM = (3, 25)


def header_version():
    """MAJOR.MINOR.PATCH from the ATTNMETA_VERSION_* macros of the header."""
    with open(os.path.join(ROOT, "include", "attnmeta", "attnmeta.h")) as f:
        text = f.read()
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        found = re.search(r"^#define ATTNMETA_VERSION_%s +(\d+)" % part, text, re.M)
        if not found:
            sys.exit("attnmeta setup.py: include/attnmeta/attnmeta.h defines no ATTNMETA_VERSION_" + part)
        parts.append(found.group(1))
    return ".".join(parts)


def find_cmake():
    """The cmake on PATH when it is 3.25 or newer, else a clear exit."""
    need = "%d.%d" % CMAKE_MINIMUM
    cmake = shutil.which("cmake")
    if cmake is None:
        sys.exit("attnmeta setup.py: building the C library needs CMake %s or newer, and no cmake "
                 "is on PATH. Install one (Debian 12: apt-get install cmake; elsewhere: "
                 "https://cmake.org/download/) and run pip again." % need)
    try:
        out = subprocess.run([cmake, "--version"], check=True, stdout=subprocess.PIPE,
                             universal_newlines=True).stdout
        found = re.search(r"version (\d+)\.(\d+)", out)
        have = (int(found.group(1)), int(found.group(2)))
    except (OSError, subprocess.CalledProcessError, AttributeError):
        sys.exit("attnmeta setup.py: %s --version failed; CMake %s or newer is needed" % (cmake, need))
    if have < CMAKE_MINIMUM:
        sys.exit("attnmeta setup.py: building the C library needs CMake %s or newer; %s is %d.%d. "
                 "Put a newer cmake first on PATH and run pip again." % ((need, cmake) + have))
    return cmake


def glibc_need(paths):
    """The newest GLIBC_2.N symbol version the ELF files need, as N, or None
    when objdump cannot tell."""
    newest = None
    for path in paths:
        try:
            out = subprocess.run(["objdump", "-T", path], check=True, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, universal_newlines=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return None
        for minor in re.findall(r"\bGLIBC_2\.(\d+)", out):
            newest = max(newest or 0, int(minor))
    return newest


def platform_tag(paths):
    """manylinux_2_N_<arch>: runs where glibc is 2.N or newer, N being what
    the bundled files need. Besides glibc the files link only the C++
    runtime (libstdc++, libgcc_s: the GPU modules) and, for the HIP module,
    ROCm's libamdhip64, which the core loads only when the HIP backend is
    used (docs/install.md)."""
    forced = os.environ.get("ATTNMETA_WHEEL_PLATFORM")
    if forced:
        return forced
    arch = platform.machine()
    minor = glibc_need(paths)
    if minor is None:
        return "linux_" + arch
    return "manylinux_2_%d_%s" % (minor, arch)


BUNDLED = []  # the ELF files of the wheel, for its platform tag


def _run(cmd):
    print("attnmeta setup.py: " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    subprocess.check_call(cmd)


def build_c_library(stage):
    """Configures, builds and installs (component Runtime) the C library
    into `stage`; returns stage."""
    cmake = find_cmake()
    build = os.environ.get("ATTNMETA_WHEEL_BUILD_DIR") or os.path.join(BUILD_BASE, "cmake")
    configure = [
        cmake, "-S", ROOT, "-B", build,
        "-DCMAKE_BUILD_TYPE=Release",
        "-DBUILD_TESTING=OFF",
        "-DATTNMETA_INSTALL_PYTHON=OFF",
        "-DATTNMETA_SANITIZE=OFF",
        "-DCMAKE_INSTALL_LIBDIR=lib",
    ]
    configure += shlex.split(os.environ.get("ATTNMETA_CMAKE_ARGS", ""))
    _run(configure)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    _run([cmake, "--build", build, "-j", jobs])
    shutil.rmtree(stage, ignore_errors=True)
    _run([cmake, "--install", build, "--prefix", stage, "--component", "Runtime"])
    return stage


class BuildPy(build_py):
    """The Python package, then the C library built and copied into it."""

    def run(self):
        super().run()
        stage = build_c_library(os.path.join(BUILD_BASE, "stage"))
        package = os.path.join(self.build_lib, "attnmeta")
        for sub in ("lib", "bin"):
            shutil.rmtree(os.path.join(package, sub), ignore_errors=True)
            os.makedirs(os.path.join(package, sub))
        copies = [(os.path.join(stage, "lib", "libattnmeta.so.0"), "lib"),
                  (os.path.join(stage, "bin", "attnmeta"), "bin")]
        copies += [(os.path.join(stage, "lib", "attnmeta", m), "lib") for m in MODULES]
        vectors = os.path.join(stage, "share", "attnmeta", "vectors")
        if os.path.isdir(vectors):  # what `attnmeta conformance` runs without files
            sub = os.path.join("share", "attnmeta", "vectors")
            shutil.rmtree(os.path.join(package, "share"), ignore_errors=True)
            os.makedirs(os.path.join(package, sub))
            copies += [(os.path.join(vectors, f), sub) for f in sorted(os.listdir(vectors))
                       if f.endswith(".amv")]
        for source, sub in copies:
            if not os.path.exists(source):
                if sub == "lib" and os.path.basename(source) in MODULES:
                    continue  # a GPU module this machine could not build
                sys.exit("attnmeta setup.py: the CMake install made no %s" % source)
            target = os.path.join(package, sub, os.path.basename(source))
            shutil.copyfile(os.path.realpath(source), target)
            os.chmod(target, 0o644 if source.endswith(".amv") else 0o755)
            if not source.endswith(".amv"):
                BUNDLED.append(target)
            print("attnmeta setup.py: bundled attnmeta/%s/%s" % (sub, os.path.basename(source)))


class BinaryDistribution(Distribution):
    """A wheel with a native library: platform-specific."""

    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildPy}
try:  # py3-none-<platform>: ctypes ties the wheel to the platform, not to a Python ABI
    from wheel.bdist_wheel import bdist_wheel

    class BdistWheel(bdist_wheel):
        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            return "py3", "none", platform_tag(BUNDLED)

    cmdclass["bdist_wheel"] = BdistWheel
except ImportError:
    pass

setup(
    version=header_version(),
    cmdclass=cmdclass,
    distclass=BinaryDistribution,
    options={"build": {"build_base": os.path.relpath(BUILD_BASE, os.getcwd())}},
)
