# SPDX-License-Identifier: Apache-2.0
"""Backend queries: device counts, the architectures a module was built
for, and the file a backend was loaded from. Each takes a backend as
:class:`Context` does: a :class:`Backend`, its number, or its name."""

import ctypes
from typing import Union

from . import _lib
from ._context import backend_kind
from ._lib import Backend, make_error

__all__ = ["backend_device_count", "backend_targets", "backend_module_path"]


def backend_device_count(backend: Union[Backend, int, str]) -> int:
    """How many devices ``backend`` finds (0 with no device or no module)."""
    count = ctypes.c_int(0)
    status = _lib.backend_device_count(int(backend_kind(backend)), ctypes.byref(count))
    if status:
        raise make_error(status, "", "attnmeta_backend_device_count")
    return count.value


def backend_targets(backend: Union[Backend, int, str]) -> str:
    """The architectures the backend's module was built for, e.g.
    ``"sm_90 sm_100"`` (``"host"``-like text for the CPU backend)."""
    text = ctypes.c_char_p()
    status = _lib.backend_targets(int(backend_kind(backend)), ctypes.byref(text))
    if status:
        raise make_error(status, "", "attnmeta_backend_targets")
    return text.value.decode() if text.value else ""


def backend_module_path(backend: Union[Backend, int, str]) -> str:
    """The file ``backend`` was loaded from: its module for a GPU backend,
    the library itself for the CPU backend ("" when the loader cannot tell,
    or when the library predates ``attnmeta_backend_module_path``)."""
    kind = int(backend_kind(backend))
    if _lib.backend_module_path is None:
        return ""
    text = ctypes.c_char_p()
    status = _lib.backend_module_path(kind, ctypes.byref(text))
    if status:
        raise make_error(status, "", "attnmeta_backend_module_path")
    return ctypes.string_at(text.value).decode(errors="replace") if text.value else ""
