# SPDX-License-Identifier: Apache-2.0
"""Packaging: pyproject.toml holds the metadata; this file bundles the
built C library into the wheel, as attnmeta/lib/, so an installed package
needs no library elsewhere.

The library is taken from (first match):
  $ATTNMETA_BUILD_DIR          a CMake build folder (or its lib/ folder)
  ../build*/lib                the newest build tree of this source checkout
                               (sanitizer builds last)
Set ATTNMETA_BUNDLE_LIBRARY=0 to bundle nothing (the installed package then
finds the library at run time: $ATTNMETA_LIBRARY, the install prefix, or
the loader path; see attnmeta/_lib.py).
"""

import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
# The GPU modules are optional: the C library loads them from its own folder.
FILES = ("libattnmeta.so", "libattnmeta_cuda.so", "libattnmeta_hip.so")


def _library_dir():
    if os.environ.get("ATTNMETA_BUNDLE_LIBRARY", "1") == "0":
        return None
    env = os.environ.get("ATTNMETA_BUILD_DIR", "")
    if env:
        for folder in (os.path.join(env, "lib"), env):
            if os.path.isfile(os.path.join(folder, "libattnmeta.so")):
                return os.path.abspath(folder)
        raise SystemExit("ATTNMETA_BUILD_DIR=%s holds no libattnmeta.so (nor lib/libattnmeta.so)" % env)
    found = glob.glob(os.path.join(os.path.dirname(HERE), "build*", "lib", "libattnmeta.so"))
    found.sort(key=lambda path: (_sanitized(path), -os.path.getmtime(path)))
    return os.path.dirname(found[0]) if found else None


def _sanitized(lib_path):
    """A sanitizer build would abort the Python that loads it: never preferred."""
    cache = os.path.join(os.path.dirname(os.path.dirname(lib_path)), "CMakeCache.txt")
    try:
        with open(cache, errors="replace") as f:
            return any((line.startswith("ATTNMETA_SANITIZE:") and line.rstrip().endswith("=ON"))
                       or (line.startswith("CMAKE_C_FLAGS") and "-fsanitize" in line) for line in f)
    except OSError:
        return False


LIBRARY_DIR = _library_dir()


class BuildPy(build_py):
    """Copies the library (links resolved) into the built package's lib/."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "attnmeta", "lib")
        shutil.rmtree(target, ignore_errors=True)  # nothing stale from an earlier build
        if LIBRARY_DIR is None:
            return
        os.makedirs(target, exist_ok=True)
        for name in FILES:
            source = os.path.join(LIBRARY_DIR, name)
            if os.path.exists(source):
                shutil.copyfile(os.path.realpath(source), os.path.join(target, name))
                os.chmod(os.path.join(target, name), 0o755)


class BinaryDistribution(Distribution):
    """With a bundled library the wheel is platform-specific."""

    def has_ext_modules(self):
        return LIBRARY_DIR is not None


cmdclass = {"build_py": BuildPy}
try:  # a py3-none-<platform> tag: ctypes ties the wheel to the platform, not to a Python ABI
    from wheel.bdist_wheel import bdist_wheel

    class BdistWheel(bdist_wheel):
        def get_tag(self):
            python, abi, plat = super().get_tag()
            if LIBRARY_DIR is not None:
                return "py3", "none", plat
            return python, abi, plat

    cmdclass["bdist_wheel"] = BdistWheel
except ImportError:
    pass

setup(cmdclass=cmdclass, distclass=BinaryDistribution)
