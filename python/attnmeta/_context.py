# SPDX-License-Identifier: Apache-2.0
"""Contexts (``attnmeta_context``) and the per-(backend, device) cache."""

import ctypes
import operator
import threading
from typing import Dict, Optional, Tuple, Union

from . import _lib
from ._arrays import device_str, int32, stream_handle, torch_state
from ._lib import Backend, make_error

__all__ = ["Context", "backend_kind", "get_context", "clear_context_cache"]

_BACKEND_NAMES = {"auto": Backend.AUTO, "cpu": Backend.CPU, "cuda": Backend.CUDA, "hip": Backend.HIP}


def backend_kind(backend: "Union[Backend, int, str]", name: str = "backend") -> "Union[Backend, int]":
    """``backend`` as a :class:`Backend`: a Backend, its number, or its name
    (``"auto"``, ``"cpu"``, ``"cuda"``, ``"hip"``, any case)."""
    if isinstance(backend, bool):  # an int to operator.index, never a backend
        raise TypeError("%s must be an attnmeta.Backend, an integer or a name such as 'cpu', got bool"
                        % name)
    if isinstance(backend, str):
        kind = _BACKEND_NAMES.get(backend.strip().lower())
        if kind is None:
            raise ValueError(
                "%s %r is not a backend name: one of %s" % (name, backend, ", ".join(_BACKEND_NAMES))
            )
        return kind
    try:
        value = operator.index(backend)
    except TypeError:
        raise TypeError(
            "%s must be an attnmeta.Backend, an integer or a name such as 'cpu', got %s"
            % (name, type(backend).__name__)
        ) from None
    try:
        return Backend(value)
    except ValueError:  # the library's own answer (ATTNMETA_ERR_UNKNOWN_BACKEND)
        return int32(value, name)


def _text(ptr_value: Optional[bytes]) -> str:
    return ptr_value.decode(errors="replace") if ptr_value else ""


def _open_handle(backend: int, device: int) -> int:
    handle = ctypes.c_void_p()
    status = _lib.open_context(ctypes.byref(handle), backend, device)
    if status:
        raise make_error(status, _text(_lib.open_error()), "attnmeta_open")
    return int(handle.value or 0)


class Context:
    """A context on one backend and device (``attnmeta_open``).

    ``backend`` is a :class:`Backend`, its number, or its name as the CLI
    and ``$ATTNMETA_BACKEND`` take it: ``"auto"``, ``"cpu"``, ``"cuda"``,
    ``"hip"`` (any case); ``device`` the device index.

    Most code never makes one: the operations pick a cached context from
    the buffers' device (:func:`get_context`). Make your own for a launch
    configuration of your own, and pass it as ``context=``. Close it with
    :meth:`close` or a ``with`` block.
    """

    __slots__ = ("_handle", "backend", "device", "device_name", "__weakref__")
    _handle: Optional[int]

    def __init__(self, backend: "Union[Backend, int, str]" = Backend.AUTO, device: int = 0) -> None:
        backend = backend_kind(backend)
        device = int32(device, "device")
        ts = torch_state() if backend != Backend.CPU else None
        if ts is not None and ts.torch.cuda.is_initialized():
            # Opening a GPU context makes its device current: keep torch's.
            previous = ts.get_device()
            try:
                handle = _open_handle(backend, device)
            finally:
                if ts.get_device() != previous:
                    ts.set_device(previous)
        else:
            handle = _open_handle(backend, device)
        self._handle = handle
        self.backend = Backend(_lib.context_backend(handle))
        self.device = _lib.context_device(handle)
        self.device_name = _text(_lib.context_device_name(handle))

    @property
    def handle(self) -> int:
        """The ``attnmeta_context *`` as an int."""
        if not self._handle:
            raise ValueError("the context is closed")
        return self._handle

    @property
    def key(self) -> Tuple[Backend, int]:
        """(backend, device), as the buffers' device is described."""
        return (self.backend, self.device)

    @property
    def closed(self) -> bool:
        return not self._handle

    def close(self) -> None:
        """Closes the context (``attnmeta_close``); closing twice is fine."""
        handle, self._handle = self._handle, None
        if handle:
            _lib.close(handle)

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass

    def __repr__(self) -> str:
        state = "closed" if self.closed else repr(self.device_name)
        return "<attnmeta.Context %s:%d %s>" % (self.backend.name.lower(), self.device, state)

    def last_error(self) -> str:
        """The message of the last failed call on this context ("" after a success)."""
        return _text(_lib.last_error(self.handle))

    def error(self, status: int, function: str) -> Exception:
        """The exception for ``status`` returned by ``function`` on this context."""
        message = self.last_error() if self._handle else "the context is closed"
        return make_error(status, message, function)

    def set_launch_config(self, block: int = 0, grid: int = 0, stage: int = -1, vector: int = -1,
                          lanes: int = 0) -> None:
        """Launch-shape overrides for later calls on this context (tests and
        tuning): 0 / -1 mean automatic, as in ``attnmeta_launch_config``."""
        config = _lib.LaunchConfig(
            int32(block, "block"),
            int32(grid, "grid"),
            int32(stage, "stage"),
            int32(vector, "vector"),
            int32(lanes, "lanes"),
        )
        status = _lib.set_launch_config(self.handle, ctypes.addressof(config))
        if status:
            raise self.error(status, "attnmeta_set_launch_config")

    def reset_launch_config(self) -> None:
        """Back to every choice automatic."""
        status = _lib.set_launch_config(self.handle, None)
        if status:
            raise self.error(status, "attnmeta_set_launch_config")

    def synchronize(self, stream: Optional[object] = None) -> None:
        """Waits for the work queued on ``stream`` (None: torch's current
        stream when torch is in use, else the default stream). Off the hot
        path: it blocks."""
        handle = stream_handle(stream, self.key)
        status = _lib.synchronize(self.handle, handle)
        if status:
            raise self.error(status, "attnmeta_synchronize")


_cache = {}  # type: Dict[Tuple[Union[Backend, int, str], int], Context]
_cache_lock = threading.Lock()


def get_context(backend: "Union[Backend, int, str]" = Backend.CPU, device: int = 0) -> Context:
    """The process-wide context of (backend, device), opened on first use
    and kept open, so repeated operations cost no open/close. ``backend``
    as for :class:`Context`."""
    key = (backend, device)
    ctx = _cache.get(key)
    if ctx is not None:
        return ctx
    if not isinstance(backend, Backend):
        backend = backend_kind(backend)
        key = (backend, device)
    ctx = _cache.get(key)
    if ctx is not None:
        return ctx
    with _cache_lock:
        ctx = _cache.get(key)
        if ctx is None:
            ctx = Context(backend, device)
            _cache[key] = ctx
            _cache.setdefault(ctx.key, ctx)
    return ctx


def context_for(dev: Tuple[int, int], context: Optional["Context"],
                name: str = "query_start_loc") -> "Context":
    """The context to run on for buffers on ``dev``: ``context`` when given
    (checked against ``dev``), else the cached one."""
    if context is None:
        ctx = _cache.get(dev)
        return ctx if ctx is not None else get_context(*dev)
    if not isinstance(context, Context):
        raise TypeError("context must be an attnmeta.Context, got %s" % type(context).__name__)
    if context.key != dev:
        raise ValueError(
            "context is on %s but %s is on %s"
            % (device_str(context.key), name, device_str(dev))
        )
    return context


def clear_context_cache() -> None:
    """Closes every cached context (they reopen on next use)."""
    with _cache_lock:
        contexts = {id(c): c for c in _cache.values()}
        _cache.clear()
    for ctx in contexts.values():
        ctx.close()

