# SPDX-License-Identifier: Apache-2.0
"""Turning torch tensors, NumPy arrays, ``__cuda_array_interface__`` objects
and DLPack producers into (pointer, device, sizes), with the checks that
name the offending argument; streams; the current-device guard for several
GPUs.

Neither torch nor NumPy is imported here: a buffer can only be a torch
tensor if the caller imported torch, and likewise for NumPy, so both are
looked up in ``sys.modules`` when first met.
"""

import operator
import sys
from typing import Any, Callable, Dict, Optional, Tuple

from . import _compile
from ._lib import Backend

I32 = "int32"
I64 = "int64"
_ITEMSIZE = {I32: 4, I64: 8}

CPU_DEVICE = (Backend.CPU, 0)

_INT32_MIN = -(2**31)
_INT32_MAX = 2**31 - 1


def device_str(dev: Tuple[int, int]) -> str:
    kind, index = dev
    if kind == Backend.CPU:
        return "the host (CPU backend)"
    return "%s device %d" % (Backend(kind).name.lower(), index)


def int32(value: Any, name: str) -> int:
    """``value`` as an int that fits int32, or TypeError/ValueError naming it.
    A bool is not a number here (True would silently mean 1)."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        raise TypeError("%s must be an integer, got %s" % (name, type(value).__name__))
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, got %s" % (name, type(value).__name__)) from None
    if not _INT32_MIN <= value <= _INT32_MAX:
        raise ValueError("%s (%d) does not fit in int32" % (name, value))
    return value


def dcp_settings(world: Any, rank: Any, interleave: Any,
                 names: Tuple[str, str, str] = ("dcp_world_size", "dcp_rank", "dcp_interleave"),
                 ) -> Tuple[int, int, int]:
    """The decode context parallelism's world size, rank and interleave as
    int32, checked (world >= 1, 0 <= rank < world, interleave >= 1), named
    as the caller names them in ``names``."""
    world, rank, interleave = (int32(world, names[0]), int32(rank, names[1]),
                               int32(interleave, names[2]))
    if world < 1:
        raise ValueError("%s (%d) must be >= 1" % (names[0], world))
    if not 0 <= rank < world:
        raise ValueError("%s (%d) must be in [0, %s = %d)" % (names[1], rank, names[0], world))
    if interleave < 1:
        raise ValueError("%s (%d) must be >= 1" % (names[2], interleave))
    return world, rank, interleave


# ---------------------------------------------------------------------------
# torch


class _Torch:
    """What the binding needs from torch, looked up once torch is met."""

    def __init__(self, torch):
        self.torch = torch
        self.Tensor = torch.Tensor
        self.dtypes = {I32: torch.int32, I64: torch.int64}
        self.strided = torch.strided
        self.gpu_kind = Backend.HIP if getattr(torch.version, "hip", None) else Backend.CUDA
        self._gpu_devices = {}
        c = torch._C
        if hasattr(c, "_cuda_getCurrentRawStream"):
            self.raw_stream = c._cuda_getCurrentRawStream
        else:  # older torch: slower, same handle
            self.raw_stream = lambda index: torch.cuda.current_stream(index).cuda_stream
        self.get_device = getattr(c, "_cuda_getDevice", None) or torch.cuda.current_device
        self.set_device = getattr(c, "_cuda_setDevice", None) or torch.cuda.set_device
        self._multi_gpu = None
        _compile.torch_found()

    def gpu_device(self, index):
        dev = self._gpu_devices.get(index)
        if dev is None:
            dev = self._gpu_devices.setdefault(index, (self.gpu_kind, index))
        return dev

    @property
    def multi_gpu(self):
        """Several GPUs visible: launches must leave torch's current device
        as they found it (the GPU backends make the context's device current)."""
        if self._multi_gpu is None:
            self._multi_gpu = self.torch.cuda.device_count() > 1
        return self._multi_gpu


_torch_state = None  # type: Optional[_Torch]


def _imported(module: str, attribute: str, make: Callable[[Any], Any]) -> Any:
    """``make(the module)`` when ``module`` is imported (and has
    ``attribute``: not a stand-in), else None. Nothing is imported here."""
    found = sys.modules.get(module)
    if found is None or not hasattr(found, attribute):
        return None
    return make(found)


def torch_state() -> Any:  # an _Torch, or None while torch is not imported
    """The _Torch of the imported torch, or None when torch is not imported."""
    global _torch_state
    if _torch_state is None:
        _torch_state = _imported("torch", "Tensor", _Torch)
    return _torch_state


def _torch_fail(x, name, dtype, ndim):
    """Raises the precise error for a tensor that failed the quick checks."""
    ts = _torch_state
    if x.dtype is not ts.dtypes[dtype]:
        raise TypeError("%s must be a %s tensor, got %s" % (name, dtype, x.dtype))
    if x.layout is not ts.strided:
        raise ValueError("%s must be a strided (dense) tensor, got layout %s" % (name, x.layout))
    if x.dim() != ndim:
        raise ValueError("%s must be %d-D, got shape %s" % (name, ndim, tuple(x.shape)))
    if not (x.is_cuda or x.is_cpu):
        raise ValueError("%s is on device '%s'; attnmeta serves cpu and cuda tensors" % (name, x.device))
    raise ValueError("%s must be contiguous, got stride %d" % (name, x.stride(0)))


def _torch_vec(x, name, dtype, out):
    # The hot path of the functions: as few calls into torch as possible.
    ts = _torch_state
    if x.dtype is not ts.dtypes[dtype] or x.layout is not ts.strided or x.dim() != 1:
        _torch_fail(x, name, dtype, 1)
    if x.is_cuda:
        index = x.get_device()
        dev = ts._gpu_devices.get(index) or ts.gpu_device(index)
    elif x.is_cpu:
        dev = CPU_DEVICE
    else:
        _torch_fail(x, name, dtype, 1)
    n = x.numel()
    if n > 1 and x.stride(0) != 1:
        _torch_fail(x, name, dtype, 1)
    return x.data_ptr(), dev, n


def _torch_table(x, name, out):
    ts = _torch_state
    if x.dtype is not ts.dtypes[I32] or x.layout is not ts.strided or x.dim() != 2:
        _torch_fail(x, name, I32, 2)
    if x.is_cuda:
        dev = ts.gpu_device(x.get_device())
    elif x.is_cpu:
        dev = CPU_DEVICE
    else:
        _torch_fail(x, name, I32, 2)
    rows, cols = x.shape
    s0, s1 = x.stride()
    return x.data_ptr(), dev, rows, cols, _row_stride(name, rows, cols, s0, s1, (s0, s1))


# ---------------------------------------------------------------------------
# NumPy


class _NumPy:
    def __init__(self, np):
        self.ndarray = np.ndarray
        self.dtypes = {I32: np.dtype(np.int32), I64: np.dtype(np.int64)}


_numpy_state = None  # type: Optional[_NumPy]


def numpy_state() -> "Optional[_NumPy]":
    global _numpy_state
    if _numpy_state is None:
        _numpy_state = _imported("numpy", "ndarray", _NumPy)
    return _numpy_state


def _numpy_common(x, name, dtype, ndim, out):
    want = _numpy_state.dtypes[dtype]
    if x.dtype != want:
        raise TypeError("%s must be a native-endian %s array, got dtype %s" % (name, dtype, x.dtype))
    if x.ndim != ndim:
        raise ValueError("%s must be %d-D, got shape %s" % (name, ndim, x.shape))
    flags = x.flags
    if not flags.aligned:
        raise ValueError("%s is not aligned to its %d-byte elements" % (name, x.itemsize))
    if out and not flags.writeable:
        raise ValueError("%s is an output but the array is read-only" % name)
    return flags


def _numpy_vec(x, name, dtype, out):
    flags = _numpy_common(x, name, dtype, 1, out)
    if not flags.c_contiguous:
        raise ValueError(
            "%s must be contiguous, got a stride of %d bytes" % (name, x.strides[0])
        )
    return x.ctypes.data, CPU_DEVICE, x.shape[0]


def _numpy_table(x, name, out):
    _numpy_common(x, name, I32, 2, out)
    rows, cols = x.shape
    # Aligned (checked above) means every stride of a dimension longer
    # than 1 is a whole number of elements.
    b0, b1 = x.strides
    elems = (b0 // 4, b1 // 4)
    return x.ctypes.data, CPU_DEVICE, rows, cols, _row_stride(name, rows, cols, elems[0], elems[1], elems)


# ---------------------------------------------------------------------------
# __cuda_array_interface__ (CuPy, Numba, JAX, ...): CUDA device memory
#
# The interface names no device: the buffer is taken to be on the object's
# own device (``x.device.id``, as CuPy has it), else torch's current device
# when torch is in use, else device 0. Its ``stream`` entry (v3) is not
# waited on: the launch goes on the stream given (or torch's current one),
# which the caller orders after the producer's work, as with torch tensors.

_CAI_TYPES = {I32: ("<i4", "|i4", "=i4"), I64: ("<i8", "|i8", "=i8")}


def _cai_device(x):
    index = getattr(getattr(x, "device", None), "id", None)
    if not isinstance(index, int):
        ts = torch_state()
        index = ts.get_device() if ts is not None and ts.torch.cuda.is_initialized() else 0
    return (Backend.CUDA, index)


def _cai_common(x, name, dtype, ndim, out):
    try:
        cai = x.__cuda_array_interface__
        shape = tuple(operator.index(n) for n in cai["shape"])
        typestr = cai["typestr"]
        ptr, readonly = cai["data"]
        ptr = operator.index(ptr or 0)
        strides = cai.get("strides")
        if strides is not None:
            strides = tuple(operator.index(n) for n in strides)
    except Exception as exc:  # the producer's own failure, or not the interface's form
        raise TypeError("%s has a malformed __cuda_array_interface__ (%s)" % (name, exc)) from None
    if typestr not in _CAI_TYPES[dtype]:
        raise TypeError("%s must hold little-endian %s, got typestr %r" % (name, dtype, typestr))
    if len(shape) != ndim:
        raise ValueError("%s must be %d-D, got shape %s" % (name, ndim, shape))
    if out and readonly:
        raise ValueError("%s is an output but the buffer is read-only" % name)
    if cai.get("mask") is not None:
        raise ValueError("%s is a masked array; attnmeta takes plain buffers" % name)
    size = _ITEMSIZE[dtype]
    if strides is None:  # C-contiguous
        strides = tuple(size * _prod(shape[i + 1:]) for i in range(ndim))
    if ptr % size:
        raise ValueError("%s is not aligned to its %d-byte elements" % (name, size))
    return ptr or 0, _cai_device(x), shape, tuple(strides)


def _prod(values):
    n = 1
    for v in values:
        n *= v
    return n


def _cai_vec(x, name, dtype, out):
    ptr, dev, shape, strides = _cai_common(x, name, dtype, 1, out)
    if shape[0] > 1 and strides[0] != _ITEMSIZE[dtype]:
        raise ValueError("%s must be contiguous, got a stride of %d bytes" % (name, strides[0]))
    return ptr, dev, shape[0]


def _byte_table(name, ptr, dev, shape, strides):
    rows, cols = shape
    b0, b1 = strides
    if (rows > 1 and b0 % 4) or (cols > 1 and b1 % 4):
        raise ValueError("%s has strides %s (bytes) that are not whole int32 elements" % (name, strides))
    elems = (b0 // 4, b1 // 4)
    return ptr, dev, rows, cols, _row_stride(name, rows, cols, elems[0], elems[1], elems)


def _cai_table(x, name, out):
    ptr, dev, shape, strides = _cai_common(x, name, I32, 2, out)
    return _byte_table(name, ptr, dev, shape, strides)


# ---------------------------------------------------------------------------
# DLPack (__dlpack__ / __dlpack_device__): JAX, CuPy, TensorFlow, PaddlePaddle,
# MXNet, NumPy, ...
#
# An accepted capsule is consumed, as the DLPack rules have it: renamed
# ``used_dltensor`` (so its destructor no longer calls the producer's
# deleter) and its managed tensor held in a _DLPackHold, which calls the
# deleter exactly once when nothing but the holds refers to ``x`` any more:
# the buffer stays valid while the caller (or a plan) holds ``x``, as for
# every other buffer kind, even where the deleter frees the memory. The
# holds are swept at each DLPack export and after each garbage collection.
# A refused capsule is left unconsumed: its destructor calls the deleter.

import ctypes as _ct  # noqa: E402
import gc as _gc  # noqa: E402
import threading as _threading  # noqa: E402


class _DLDevice(_ct.Structure):
    _fields_ = [("device_type", _ct.c_int32), ("device_id", _ct.c_int32)]


class _DLDataType(_ct.Structure):
    _fields_ = [("code", _ct.c_uint8), ("bits", _ct.c_uint8), ("lanes", _ct.c_uint16)]


class _DLTensor(_ct.Structure):
    _fields_ = [
        ("data", _ct.c_void_p),
        ("device", _DLDevice),
        ("ndim", _ct.c_int32),
        ("dtype", _DLDataType),
        ("shape", _ct.POINTER(_ct.c_int64)),
        ("strides", _ct.POINTER(_ct.c_int64)),
        ("byte_offset", _ct.c_uint64),
    ]


_capsule_pointer = _ct.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = _ct.c_void_p
_capsule_pointer.argtypes = [_ct.py_object, _ct.c_char_p]
_capsule_valid = _ct.pythonapi.PyCapsule_IsValid
_capsule_valid.restype = _ct.c_int
_capsule_valid.argtypes = [_ct.py_object, _ct.c_char_p]
_capsule_set_name = _ct.pythonapi.PyCapsule_SetName
_capsule_set_name.restype = _ct.c_int
_capsule_set_name.argtypes = [_ct.py_object, _ct.c_char_p]
# The capsule keeps the name's address: a bytes object that lives as long
# as the module.
_USED_NAME = b"used_dltensor"


class _DLManagedTensor(_ct.Structure):
    pass


_DLDeleter = _ct.PYFUNCTYPE(None, _ct.POINTER(_DLManagedTensor))  # keeps the GIL
_DLManagedTensor._fields_ = [
    ("dl_tensor", _DLTensor),
    ("manager_ctx", _ct.c_void_p),
    ("deleter", _ct.c_void_p),
]


class _DLPackHold:
    """A consumed managed tensor and the object it came from. ``owned`` is
    how many references to ``source`` the hold accounts for: its own, and
    those the export added (a producer's manager often refers to the
    object), so the others are the caller's."""

    __slots__ = ("source", "address", "data", "owned", "__weakref__")

    def __init__(self, source, address, data, added):
        self.source = source
        self.address = address
        self.data = data
        self.owned = 1 + max(added, 0)

    def release(self):
        """Calls the producer's deleter, once."""
        address, self.address = self.address, None
        if address is None:
            return
        deleter = _DLManagedTensor.from_address(address).deleter
        if deleter:  # the source stays referred to until its tensor is gone
            _DLDeleter(deleter)(_ct.cast(address, _ct.POINTER(_DLManagedTensor)))
        self.source = None


_holds = {}  # type: Dict[int, list]  # id(source) -> its live _DLPackHold objects
_holds_lock = _threading.Lock()


def _sweep_locked():
    """The holds of objects nobody else refers to, taken out of the registry
    (released by the caller, outside the lock: a deleter may run any code)."""
    done = [key for key, holds in _holds.items()
            # less getrefcount's own argument and the holds' references
            if sys.getrefcount(holds[0].source) - 1 - sum(h.owned for h in holds) <= 0]
    return [h for key in done for h in _holds.pop(key)]


def _release(holds):
    for h in holds:
        h.release()


def _sweep(phase="stop", info=None):
    """The holds' sweep; after a garbage collection too (never blocking:
    a collection may run inside the binding's own registry update)."""
    if phase != "stop" or not _holds:
        return
    if _holds_lock.acquire(blocking=False):
        try:
            done = _sweep_locked()
        finally:
            _holds_lock.release()
        _release(done)


_gc.callbacks.append(_sweep)


def _hold(x, address, data, added):
    """Keeps the consumed managed tensor at `address` while `x` is referred
    to elsewhere (see above)."""
    hold = _DLPackHold(x, address, data, added)
    with _holds_lock:
        group = _holds.setdefault(id(x), [])
        if any(h.data == data for h in group):
            done = [hold]  # an earlier export of the same memory keeps it
        else:
            group.append(hold)
            done = []
        done += _sweep_locked()
    _release(done)


# DLDeviceType: kDLCPU 1, kDLCUDA 2, kDLCUDAHost 3, kDLROCM 10,
# kDLROCMHost 11, kDLCUDAManaged 13.
_DL_KINDS = {1: Backend.CPU, 3: Backend.CPU, 11: Backend.CPU, 2: Backend.CUDA, 13: Backend.CUDA,
             10: Backend.HIP}
_DL_INT = 0  # kDLInt


def _dlpack_common(x, name, dtype, ndim, out, shaped):
    """The buffer of a DLPack producer as shaped(name, pointer, device,
    shape, strides in elements) makes it; the capsule is consumed only
    when every check has passed."""
    refs_before = sys.getrefcount(x)
    try:
        capsule = x.__dlpack__()
    except Exception as exc:  # the producer's own refusal (e.g. read-only)
        raise TypeError("%s: __dlpack__() failed: %s" % (name, exc)) from None
    if type(capsule).__name__ != "PyCapsule" or not _capsule_valid(capsule, b"dltensor"):
        raise TypeError("%s: __dlpack__() returned no unused 'dltensor' capsule" % name)
    address = _capsule_pointer(capsule, b"dltensor")
    try:
        if not address:
            raise TypeError("%s: __dlpack__() returned an empty 'dltensor' capsule" % name)
        ptr, dev, shape, elems = _dlpack_read(_DLTensor.from_address(address), x, name, dtype,
                                              ndim, out)
        result = shaped(name, ptr, dev, shape, elems)
    except (TypeError, ValueError):
        # refused, not consumed: the capsule goes now (its destructor calls
        # the producer's deleter), not with the exception's frames
        capsule = None
        raise
    if _capsule_set_name(capsule, _USED_NAME) != 0:
        raise TypeError("%s: the DLPack capsule could not be marked used" % name)
    del capsule  # its destructor now leaves the managed tensor alone
    added = sys.getrefcount(x) - refs_before  # references the export holds
    _hold(x, address, ptr, added)
    return result


def _dlpack_read(t, x, name, dtype, ndim, out):
    """The checks of a DLPack tensor t: (pointer, device, shape, strides in
    elements), or TypeError / ValueError naming the argument."""
    kind = _DL_KINDS.get(t.device.device_type)
    if kind is None:
        raise ValueError("%s is on DLPack device type %d; attnmeta serves CPU, CUDA and ROCm"
                         % (name, t.device.device_type))
    dev = CPU_DEVICE if kind == Backend.CPU else (kind, t.device.device_id)
    want_bits = _ITEMSIZE[dtype] * 8
    if t.dtype.code != _DL_INT or t.dtype.bits != want_bits or t.dtype.lanes != 1:
        raise TypeError("%s must be a %s buffer, got DLPack dtype (code %d, %d bits, %d lanes)"
                        % (name, dtype, t.dtype.code, t.dtype.bits, t.dtype.lanes))
    if t.ndim != ndim:
        raise ValueError("%s must be %d-D, got %d dimensions" % (name, ndim, t.ndim))
    shape = tuple(t.shape[i] for i in range(ndim))
    if t.strides:
        elems = tuple(t.strides[i] for i in range(ndim))
    else:
        elems = tuple(_prod(shape[i + 1:]) for i in range(ndim))
    ptr = (t.data or 0) + t.byte_offset
    if ptr % _ITEMSIZE[dtype]:
        raise ValueError("%s is not aligned to its %d-byte elements" % (name, _ITEMSIZE[dtype]))
    if out and getattr(x, "flags", None) is not None and getattr(x.flags, "writeable", True) is False:
        raise ValueError("%s is an output but the array is read-only" % name)
    return ptr, dev, shape, elems


def _dlpack_vec_of(name, ptr, dev, shape, elems):
    if shape[0] > 1 and elems[0] != 1:
        raise ValueError("%s must be contiguous, got a stride of %d elements" % (name, elems[0]))
    return ptr, dev, shape[0]


def _dlpack_table_of(name, ptr, dev, shape, elems):
    rows, cols = shape
    return ptr, dev, rows, cols, _row_stride(name, rows, cols, elems[0], elems[1], elems)


def _dlpack_vec(x, name, dtype, out):
    return _dlpack_common(x, name, dtype, 1, out, _dlpack_vec_of)


def _dlpack_table(x, name, out):
    return _dlpack_common(x, name, I32, 2, out, _dlpack_table_of)


# ---------------------------------------------------------------------------
# Shared


def _row_stride(name, rows, cols, s0, s1, shown):
    """The row stride (elements) to pass for a [rows][cols] table."""
    # A table of no rows holds no element, so its strides mean nothing
    # (NumPy gives a (0, n) array the strides (0, 0)).
    if rows > 0 and cols > 1 and s1 != 1:
        raise ValueError(
            "%s must have unit column stride (rows may be padded), got strides %s" % (name, shown)
        )
    if rows <= 1:
        return cols  # one row or none: the row stride is never used
    if s0 < cols:
        raise ValueError(
            "%s has row stride %d, smaller than its %d columns (strides %s)" % (name, s0, cols, shown)
        )
    return s0


_VEC = {}  # type: Dict[type, Callable[..., Tuple[Any, ...]]]
_TABLE = {}  # type: Dict[type, Callable[..., Tuple[Any, ...]]]


def _classify(cls, name):
    ts = torch_state()
    if ts is not None and issubclass(cls, ts.Tensor):
        return _torch_vec, _torch_table
    ns = numpy_state()
    if ns is not None and issubclass(cls, ns.ndarray):
        return _numpy_vec, _numpy_table
    if hasattr(cls, "__cuda_array_interface__"):
        return _cai_vec, _cai_table
    if hasattr(cls, "__dlpack__"):
        return _dlpack_vec, _dlpack_table
    raise TypeError(
        "%s must be a torch.Tensor, a numpy.ndarray, or an object with __cuda_array_interface__ "
        "or __dlpack__, got %s" % (name, cls.__name__)
    )


def vec(x: Any, name: str, dtype: str = I32,
        out: bool = False) -> Tuple[int, Tuple[int, int], int]:
    """A 1-D contiguous buffer: (pointer, device, length)."""
    fn = _VEC.get(type(x))
    if fn is None:
        fn, table_fn = _classify(type(x), name)
        _VEC[type(x)] = fn
        _TABLE[type(x)] = table_fn
    return fn(x, name, dtype, out)  # type: ignore[return-value]


def table(x: Any, name: str,
          out: bool = False) -> Tuple[int, Tuple[int, int], int, int, int]:
    """A 2-D int32 table with unit column stride: (pointer, device, rows,
    cols, row_stride) with row_stride >= cols."""
    fn = _TABLE.get(type(x))
    if fn is None:
        vec_fn, fn = _classify(type(x), name)
        _VEC[type(x)] = vec_fn
        _TABLE[type(x)] = fn
    return fn(x, name, out)  # type: ignore[return-value]


def stream_handle(stream: Any, dev: Tuple[int, int]) -> Optional[int]:
    """The stream to pass to C for work on ``dev``: the caller's, or torch's
    current stream of that device; None on the CPU backend."""
    if dev[0] == Backend.CPU:
        if stream is not None and not isinstance(stream, int) and not hasattr(stream, "cuda_stream"):
            raise TypeError(
                "stream must be None, an int handle or a torch.cuda.Stream, got %s"
                % type(stream).__name__
            )
        return None  # the CPU backend runs in the calling thread
    if stream is None:
        ts = _torch_state
        if ts is None:
            return None
        return ts.raw_stream(dev[1]) or None
    if isinstance(stream, int):
        return stream or None
    handle = getattr(stream, "cuda_stream", None)
    if handle is None:
        raise TypeError(
            "stream must be None, an int handle or a torch.cuda.Stream, got %s" % type(stream).__name__
        )
    index = getattr(stream, "device_index", None)
    if index is not None and index != dev[1]:
        raise ValueError(
            "stream belongs to device %d but the buffers are on %s" % (index, device_str(dev))
        )
    return handle or None
