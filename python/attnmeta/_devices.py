"""Backend queries: device counts and the architectures a module was built for."""

import ctypes
from typing import Union

from . import _lib
from ._arrays import int32
from ._lib import Backend, make_error


def backend_device_count(backend: Union[Backend, int]) -> int:
    """How many devices ``backend`` finds (0 with no device or no module)."""
    count = ctypes.c_int(0)
    status = _lib.backend_device_count(int32(backend, "backend"), ctypes.byref(count))
    if status:
        raise make_error(status, "", "attnmeta_backend_device_count")
    return count.value


def backend_targets(backend: Union[Backend, int]) -> str:
    """The architectures the backend's module was built for, e.g.
    ``"sm_90 sm_100"`` (``"host"``-like text for the CPU backend)."""
    text = ctypes.c_char_p()
    status = _lib.backend_targets(int32(backend, "backend"), ctypes.byref(text))
    if status:
        raise make_error(status, "", "attnmeta_backend_targets")
    return text.value.decode() if text.value else ""
