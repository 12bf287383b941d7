# SPDX-License-Identifier: Apache-2.0
"""Finding and loading libattnmeta.so, the ctypes prototypes, the enums, the
error type and the ctypes mirror of ``attnmeta_step``.

The library is looked for, in this order (the first file that loads wins):

1. ``$ATTNMETA_LIBRARY``: the full path of the library. When it is set, no
   other place is tried, and a path that does not load is an error.
2. Next to the package: ``attnmeta/libattnmeta.so`` or
   ``attnmeta/lib/libattnmeta.so`` (an installed wheel or a copied package).
3. The build trees of the source checkout the package sits in:
   ``<source>/build*/lib/libattnmeta.so``, the most recently built first,
   sanitizer builds last (so ``PYTHONPATH=python`` works straight from the
   checkout).
4. The install prefixes: ``sys.prefix/lib``, ``sys.prefix/lib64``,
   ``/usr/local/lib``, ``/usr/local/lib64``.
5. The dynamic loader's own search path (``LD_LIBRARY_PATH``, ``ldconfig``):
   ``libattnmeta.so.0``, then ``libattnmeta.so``.

The GPU backends (``libattnmeta_cuda.so``, ``libattnmeta_hip.so``) are found
by the C library itself, next to the library file that was loaded (or in
``$ATTNMETA_MODULE_DIR``).
"""

import ctypes
import enum
import glob
import operator
import os
import sys
import warnings
from typing import Any, Callable, List, Optional, Sequence, Tuple, Type, Union

__all__ = [
    "AttnmetaArgumentError",
    "AttnmetaError",
    "Backend",
    "ErrorFlag",
    "Status",
    "library_candidates",
]

from . import _schema
from ._version import __version__  # of this binding; matches the C library it was written for

LIBRARY_NAME = "libattnmeta.so"
SONAME = "libattnmeta.so.0"


class Status(enum.IntEnum):
    """``attnmeta_status``: the numbers are fixed by the C API."""

    OK = 0
    INVALID_ARGUMENT = 1
    NULL_POINTER = 2
    CAPACITY = 3
    STRIDE = 4
    OVERFLOW = 5
    UNKNOWN_BACKEND = 6
    BACKEND_UNAVAILABLE = 7
    NO_DEVICE = 8
    UNSUPPORTED_ARCH = 9
    ABI_MISMATCH = 10
    LAUNCH = 11
    NOT_SUPPORTED = 12
    OUT_OF_MEMORY = 13
    INVALID_CONTEXT = 14
    INTERNAL = 15


class Backend(enum.IntEnum):
    """``attnmeta_backend``."""

    AUTO = 0
    CPU = 1
    CUDA = 2
    HIP = 3


class ErrorFlag(enum.IntFlag):
    """Bits the kernels OR into the optional device error word."""

    NONE = 0
    QSL_FIRST_NONZERO = 1 << 0
    QSL_DECREASING = 1 << 1
    TOTAL_OUT_OF_RANGE = 1 << 2
    SEQ_LEN_NEGATIVE = 1 << 3
    SEQ_LEN_LT_QLEN = 1 << 4
    BLOCK_OUT_OF_TABLE = 1 << 5
    BLOCK_ID_NEGATIVE = 1 << 6
    POSITION_NEGATIVE = 1 << 7
    WORKSPACE_OUT_OF_RANGE = 1 << 8
    SLOT_OUT_OF_RANGE = 1 << 9
    POOL_INDEX_OUT_OF_RANGE = 1 << 10
    SCAN_OVERFLOW = 1 << 11


# Statuses that mean "an argument is wrong": raised as AttnmetaArgumentError,
# which is also a ValueError.
_ARGUMENT_STATUSES = frozenset(
    (Status.INVALID_ARGUMENT, Status.NULL_POINTER, Status.CAPACITY, Status.STRIDE, Status.OVERFLOW)
)


class AttnmetaError(RuntimeError):
    """A call into the C library failed.

    ``status`` is the :class:`Status` (an ``int`` when the code is newer than
    this binding), ``message`` the library's own text (``attnmeta_last_error``
    or ``attnmeta_open_error``), ``function`` the C function that failed.
    """

    def __init__(self, status: int, message: str = "", function: str = "") -> None:
        try:
            status = Status(status)
        except ValueError:
            status = int(status)
        self.status = status
        self.message = message
        self.function = function
        name = status.name if isinstance(status, Status) else "status %d" % status
        text = "%s (%s)" % (status_string(status), name)
        if message:
            text += ": " + message
        if function:
            text = function + ": " + text
        super().__init__(text)

    def __reduce__(self) -> Tuple[Type["AttnmetaError"], Tuple[int, str, str]]:
        return (type(self), (int(self.status), self.message, self.function))


class AttnmetaArgumentError(AttnmetaError, ValueError):
    """The C library rejected an argument (invalid value, NULL pointer,
    capacity, stride or overflow): both an :class:`AttnmetaError` and a
    ``ValueError``."""


def make_error(status: int, message: str = "", function: str = "") -> AttnmetaError:
    """The exception for a failed C call (not raised)."""
    cls = AttnmetaArgumentError if status in _ARGUMENT_STATUSES else AttnmetaError
    return cls(status, message, function)


# ---------------------------------------------------------------------------
# attnmeta_step and attnmeta_topk, field for field (include/attnmeta/attnmeta.h),
# from the schema

_p = ctypes.c_void_p
_i32 = ctypes.c_int32
_i64 = ctypes.c_int64


MAX_COMPRESSED_GROUPS = 4  # ATTNMETA_MAX_COMPRESSED_GROUPS
LAUNCH_EARLY_START = 1  # ATTNMETA_LAUNCH_EARLY_START

SWA_CAUSAL, SWA_NON_CAUSAL = 0, 1  # attnmeta_swa_mode
C128A_GLOBAL, C128A_LOCAL, C128A_MIXED = 0, 1, 2  # attnmeta_c128a_mode
INDEXER_DECODE, INDEXER_PREFILL = 0, 1  # attnmeta_indexer_mode

# The ctypes of the schema's C types (_schema.py, generated from the schema).
_SCALARS = {"size_t": ctypes.c_size_t, "int32_t": _i32, "int64_t": _i64, "uint32_t": ctypes.c_uint32}


def _fields_of(members: Sequence[Tuple[str, str, str, Any, Tuple[str, ...]]]) -> List[Tuple[str, Any]]:
    """The ctypes ``_fields_`` of a struct's members, as the schema lists them."""
    fields: List[Tuple[str, Any]] = []
    for name, c_type, *_ in members:
        if c_type.endswith("*"):
            fields.append((name, _p))
        elif c_type == "am_group_array":
            fields.append((name, CompressedGroup * MAX_COMPRESSED_GROUPS))
        else:
            fields.append((name, _SCALARS[c_type]))
    return fields


class CompressedGroup(ctypes.Structure):
    """ctypes mirror of ``attnmeta_compressed_group``."""

    _fields_ = _fields_of(_schema.COMPRESSED_GROUP_FIELDS)


class Step(ctypes.Structure):
    """ctypes mirror of ``attnmeta_step``; pointer fields take ints (or None)."""

    _fields_ = _fields_of(_schema.STEP_FIELDS)


class Topk(ctypes.Structure):
    """ctypes mirror of ``attnmeta_topk``; pointer fields take ints (or None)."""

    _fields_ = _fields_of(_schema.TOPK_FIELDS)


class Pool(ctypes.Structure):
    """ctypes mirror of ``attnmeta_pool``; pointer fields take ints (or None)."""

    _fields_ = _fields_of(_schema.POOL_FIELDS)


class LaunchConfig(ctypes.Structure):
    """ctypes mirror of ``attnmeta_launch_config``."""

    _fields_ = [(name, ctypes.c_int) for name in ("block", "grid", "stage", "vector", "lanes")]


# ---------------------------------------------------------------------------
# Finding the library


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def _source_root() -> Optional[str]:
    """The source checkout this package sits in (python/attnmeta/ inside it),
    or None when the package is installed elsewhere."""
    root = os.path.dirname(os.path.dirname(_package_dir()))
    if os.path.isfile(os.path.join(root, "include", "attnmeta", "attnmeta.h")):
        return root
    return None


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _sanitized(lib_path: str) -> bool:
    """Whether the build tree of lib_path was configured with sanitizers: such
    a library aborts a Python that did not preload the sanitizer runtime, so
    it is tried last."""
    cache = os.path.join(os.path.dirname(os.path.dirname(lib_path)), "CMakeCache.txt")
    try:
        with open(cache, errors="replace") as f:
            for line in f:
                if line.startswith("ATTNMETA_SANITIZE:") and line.rstrip().endswith("=ON"):
                    return True
                if line.startswith("CMAKE_C_FLAGS") and "-fsanitize" in line:
                    return True
    except OSError:
        pass
    return False


def _build_order(path: str) -> Tuple[bool, float]:
    return (_sanitized(path), -_mtime(path))


def library_candidates() -> List[Tuple[str, str]]:
    """The places the library is looked for, in order, as (where, path)
    pairs; a bare file name means "ask the dynamic loader". With
    ``$ATTNMETA_LIBRARY`` set, it is the only candidate."""
    env = os.environ.get("ATTNMETA_LIBRARY", "")
    if env:
        return [("$ATTNMETA_LIBRARY", env)]
    found = []
    pkg = _package_dir()
    for folder in (pkg, os.path.join(pkg, "lib")):
        for name in (LIBRARY_NAME, SONAME):
            found.append(("package", os.path.join(folder, name)))
    root = _source_root()
    if root is not None:
        builds = glob.glob(os.path.join(root, "build*", "lib", LIBRARY_NAME))
        builds.sort(key=_build_order)  # newest first, sanitizer builds last
        found.extend(("build tree", path) for path in builds)
    prefixes = []
    for prefix in (sys.prefix, "/usr/local"):
        for sub in ("lib", "lib64"):
            folder = os.path.join(prefix, sub)
            if folder not in prefixes:
                prefixes.append(folder)
    found.extend(("install prefix", os.path.join(folder, LIBRARY_NAME)) for folder in prefixes)
    found.append(("loader path", SONAME))
    found.append(("loader path", LIBRARY_NAME))
    return found


def _load() -> Tuple[ctypes.PyDLL, ctypes.CDLL, str]:
    """Loads the library: returns (CDLL that holds the GIL, CDLL that
    releases it, path). Raises ImportError listing what was tried."""
    tried = []
    for where, path in library_candidates():
        is_file = os.sep in path
        if is_file and where != "$ATTNMETA_LIBRARY" and not os.path.exists(path):
            continue
        try:
            # Calls that only check arguments and queue a launch hold the GIL
            # (cheaper, and calls on one context never overlap); calls that
            # may wait (open, synchronise, copies) release it.
            fast = ctypes.PyDLL(path)
            slow = ctypes.CDLL(path)
        except OSError as exc:
            tried.append("  %s: %s: %s" % (where, path, exc))
            continue
        if tried:
            warnings.warn(
                "attnmeta: loaded %s after failing to load:\n%s" % (path, "\n".join(tried)),
                RuntimeWarning,
                stacklevel=3,
            )
        return fast, slow, _resolve_path(slow, path)
    raise ImportError(
        "attnmeta: cannot load %s. Build the C library (cmake -S . -B build && cmake --build "
        "build), then run from the source checkout with PYTHONPATH=python, install the "
        "library, or set ATTNMETA_LIBRARY to its full path. Tried:\n%s"
        % (LIBRARY_NAME, "\n".join(tried) if tried else "  (no candidate file exists)")
    )


def _resolve_path(lib: ctypes.CDLL, fallback: str) -> str:
    """The file the loader actually mapped (for a bare name), via dladdr."""
    try:

        class _DlInfo(ctypes.Structure):
            _fields_ = [
                ("dli_fname", ctypes.c_char_p),
                ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p),
            ]

        libc = ctypes.CDLL(None)
        dladdr = libc.dladdr
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        dladdr.restype = ctypes.c_int
        info = _DlInfo()
        addr = ctypes.cast(lib.attnmeta_version, ctypes.c_void_p).value
        if dladdr(addr, ctypes.byref(info)) and info.dli_fname:
            return os.path.realpath(os.fsdecode(info.dli_fname))
    except (AttributeError, OSError):
        pass
    return fallback


def _prototype(lib: ctypes.CDLL, name: str, restype: Any, argtypes: Sequence[Any]) -> Any:
    try:
        fn = getattr(lib, name)
    except AttributeError:
        raise ImportError(
            "attnmeta: %s has no function %s: it is older than this binding"
            % (library_path, name)
        ) from None
    fn.restype = restype
    fn.argtypes = argtypes
    return fn


_fast, _slow, library_path = _load()

_vp = ctypes.c_void_p
_cint = ctypes.c_int
_ccp = ctypes.c_char_p

# Functions that take a context or return at once: hold the GIL.
version = _prototype(_fast, "attnmeta_version", _cint, [])
_version_string = _prototype(_fast, "attnmeta_version_string", _ccp, [])
_status_string = _prototype(_fast, "attnmeta_status_string", _ccp, [_cint])
_backend_name = _prototype(_fast, "attnmeta_backend_name", _ccp, [_cint])
_flags_describe = _prototype(
    _fast, "attnmeta_error_flags_describe", ctypes.c_size_t, [_i32, ctypes.c_char_p, ctypes.c_size_t]
)
open_error = _prototype(_fast, "attnmeta_open_error", _ccp, [])
close = _prototype(_fast, "attnmeta_close", _cint, [_vp])
context_backend = _prototype(_fast, "attnmeta_context_backend", _cint, [_vp])
context_device = _prototype(_fast, "attnmeta_context_device", _cint, [_vp])
context_device_name = _prototype(_fast, "attnmeta_context_device_name", _ccp, [_vp])
last_error = _prototype(_fast, "attnmeta_last_error", _ccp, [_vp])
launch_config_default = _prototype(_fast, "attnmeta_launch_config_default", LaunchConfig, [])
set_launch_config = _prototype(_fast, "attnmeta_set_launch_config", _cint, [_vp, _vp])
step_init_size = _prototype(_fast, "attnmeta_step_init_size", _cint, [_vp, ctypes.c_size_t])


def step_init(address: int) -> int:
    """attnmeta_step_init for this binding's Step: the library writes only
    ``sizeof(Step)`` bytes and fills what this mirror has."""
    return int(step_init_size(address, ctypes.sizeof(Step)))
build_step = _prototype(_fast, "attnmeta_build_step", _cint, [_vp, _vp, _vp])
topk_init_size = _prototype(_fast, "attnmeta_topk_init_size", _cint, [_vp, ctypes.c_size_t])


def topk_init(address: int) -> int:
    """attnmeta_topk_init for this binding's Topk (``sizeof(Topk)`` bytes)."""
    return int(topk_init_size(address, ctypes.sizeof(Topk)))



convert_topk = _prototype(_fast, "attnmeta_convert_topk", _cint, [_vp, _vp, _vp])
token_to_req = _prototype(
    _fast, "attnmeta_token_to_req", _cint, [_vp, _vp, _i32, _i32, _i32, _vp, _vp]
)
backend_targets = _prototype(
    _fast, "attnmeta_backend_targets", _cint, [_cint, ctypes.POINTER(ctypes.c_char_p)]
)



def _optional_prototype(lib: ctypes.CDLL, name: str, restype: Any,
                        argtypes: Sequence[Any]) -> Any:
    """A function the library may lack (added after 0.1): None then."""
    fn = getattr(lib, name, None)
    if fn is not None:
        fn.restype = restype
        fn.argtypes = argtypes
    return fn


# The pool operation (SGLang's index buffers; after 0.2.0).
_pool_init_size = _optional_prototype(_fast, "attnmeta_pool_init_size", _cint, [_vp, ctypes.c_size_t])
build_pool_indices = _optional_prototype(_fast, "attnmeta_build_pool_indices", _cint, [_vp, _vp, _vp])


def pool_init(address: int) -> int:
    """attnmeta_pool_init for this binding's Pool (``sizeof(Pool)`` bytes);
    ATTNMETA_ERR_NOT_SUPPORTED (12) from a library without the operation."""
    if _pool_init_size is None:
        return 12
    return int(_pool_init_size(address, ctypes.sizeof(Pool)))


# Diagnostics (since 0.2.0).
_build_commit = _optional_prototype(_fast, "attnmeta_build_commit", _ccp, [])
backend_module_path = _optional_prototype(
    _slow, "attnmeta_backend_module_path", _cint, [_cint, ctypes.POINTER(ctypes.c_char_p)]
)

# Functions that may wait (device start-up, synchronisation, copies): release it.
open_context = _prototype(_slow, "attnmeta_open", _cint, [ctypes.POINTER(_vp), _cint, _cint])
backend_device_count = _prototype(
    _slow, "attnmeta_backend_device_count", _cint, [_cint, ctypes.POINTER(_cint)]
)
synchronize = _prototype(_slow, "attnmeta_synchronize", _cint, [_vp, _vp])
device_alloc = _prototype(_slow, "attnmeta_device_alloc", _cint, [_vp, ctypes.c_size_t, ctypes.POINTER(_vp)])
device_free = _prototype(_slow, "attnmeta_device_free", _cint, [_vp, _vp])
copy_to_device = _prototype(_slow, "attnmeta_copy_to_device", _cint, [_vp, _vp, _vp, ctypes.c_size_t])
copy_to_host = _prototype(_slow, "attnmeta_copy_to_host", _cint, [_vp, _vp, _vp, ctypes.c_size_t])


def version_string() -> str:
    """The library's version text, e.g. ``"0.1.0"``."""
    return str(_version_string().decode())


def build_commit() -> str:
    """The source commit the library was built from (``attnmeta_build_commit``),
    or ``"unknown"`` (a library built outside a checkout, or older than 0.2.0)."""
    if _build_commit is None:
        return "unknown"
    return str(_build_commit().decode(errors="replace"))


def status_string(status: int) -> str:
    """``attnmeta_status_string``: a short text for a status code."""
    return str(_status_string(int(status)).decode())


def backend_name(kind: int) -> str:
    """``attnmeta_backend_name``: "auto", "cpu", "cuda", "hip" or "unknown"."""
    return str(_backend_name(int(kind)).decode())


def describe_error_flags(flags: int) -> str:
    """The text of the error-word bits in ``flags`` (``attnmeta_error_flags_describe``):
    ``"no error"`` for 0, else a ", "-separated list."""
    value = operator.index(flags)
    if not -(2**31) <= value < 2**32:
        raise ValueError("flags (%d) do not fit the 32-bit error word" % value)
    if value >= 2**31:  # an unsigned reading of the word
        value -= 2**32
    need = _flags_describe(value, None, 0)
    buf = ctypes.create_string_buffer(need + 1)
    _flags_describe(value, buf, need + 1)
    return buf.value.decode()


def _check_layout() -> None:
    """The library must accept this binding's attnmeta_step and
    attnmeta_topk: of its own size or of an earlier release's (a library
    newer than the binding)."""
    for struct, init, c_name in ((Step, step_init, "attnmeta_step"),
                                 (Topk, topk_init, "attnmeta_topk")):
        scratch = ctypes.create_string_buffer(ctypes.sizeof(struct))
        status = init(ctypes.addressof(scratch))
        if status != 0:
            raise ImportError(
                "attnmeta: %s refuses this binding's %d-byte %s (%s): the binding "
                "(version %s) is newer than the library; use the binding of the library's version"
                % (library_path, ctypes.sizeof(struct), c_name, status_string(status), __version__)
            )


_check_layout()
