# SPDX-License-Identifier: Apache-2.0
"""The GPU driver and runtime versions a backend runs on
(``attnmeta_backend_runtime_versions``), and the line `attnmeta info`
prints for them (tools/cli_info.c's print_runtime_versions)."""

import ctypes
from typing import Tuple

from . import _lib
from ._lib import Backend, Status

__all__ = ["backend_runtime_versions", "runtime_versions_line"]

_c_int_p = ctypes.POINTER(ctypes.c_int)

# Since 0.3.0 (None with an older library). It may load a module: the
# handle that releases the GIL.
_runtime_versions = _lib._optional_prototype(
    _lib._slow, "attnmeta_backend_runtime_versions", ctypes.c_int,
    [ctypes.c_int, _c_int_p, _c_int_p]
)


def backend_runtime_versions(kind: int) -> Tuple[int, int, int]:
    """(status, driver, runtime) of ``attnmeta_backend_runtime_versions``:
    the numbers in the runtime's own encoding, 0 where it cannot tell."""
    if _runtime_versions is None:
        return int(Status.NOT_SUPPORTED), 0, 0
    driver, runtime = ctypes.c_int(0), ctypes.c_int(0)
    status = _runtime_versions(int(kind), ctypes.byref(driver), ctypes.byref(runtime))
    return int(status), driver.value, runtime.value


def _version_text(kind: int, number: int) -> str:
    """CUDA 13000: "13.0"; HIP 60241134: "6.2.41134"; 0: "none"."""
    if number <= 0:
        return "none"
    if kind == Backend.HIP:
        return "%d.%d.%d" % (number // 10000000, number // 100000 % 100, number % 100000)
    return "%d.%d" % (number // 1000, number % 1000 // 10)


def runtime_versions_line(kind: int) -> str:
    """The line of `attnmeta info` that gives ``kind``'s versions."""
    status, driver, runtime = backend_runtime_versions(kind)
    if status == Status.OK:
        return "              driver: %s (%d), runtime: %s (%d)" % (
            _version_text(kind, driver), driver, _version_text(kind, runtime), runtime)
    if kind == Backend.CPU:
        return "              driver/runtime: none (the CPU backend uses no GPU runtime)"
    if status == Status.NOT_SUPPORTED:
        why = ("the module predates the version query" if _runtime_versions is not None
               else "the library predates the version query")
    else:
        why = _lib.status_string(status)
    return "              driver/runtime: unknown (%s)" % why
