# SPDX-License-Identifier: Apache-2.0
"""A DLPack producer built with ctypes, for the buffer tests.

Each ``__dlpack__()`` exports fresh host memory in a fresh DLManagedTensor
whose deleter poisons that memory, frees the tensor and records the call in
``events`` (with the number of library calls made so far, ``clock``). The
capsule's destructor calls the deleter only while the capsule is still
named ``dltensor``, as the DLPack rules say; a consumer that renames it
``used_dltensor`` owns the deleter call. ``lie`` makes the exported tensor
claim other dtypes, shapes or strides than the memory has."""

import ctypes

from attnmeta import _arrays

_pyapi = ctypes.pythonapi
_capsule_new = _pyapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_pointer = _pyapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_valid = _pyapi.PyCapsule_IsValid
_capsule_valid.restype = ctypes.c_int
_capsule_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]

POISON = 0x7B7B7B7B
_DLTENSOR = b"dltensor"


# The DLPack structs (the standard's layout) are the package's own, the
# deleter an address; NumPy's __dlpack__ (test_buffer_protocols.py) checks
# that layout independently.
DLDevice = _arrays._DLDevice
DLDataType = _arrays._DLDataType
DLManagedTensor = _arrays._DLManagedTensor
DELETER = _arrays._DLDeleter
# The destructor sees the dying capsule as a raw pointer (a new reference
# to it would revive it).
CAPSULE_DESTRUCTOR = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
_raw_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _pyapi))
_raw_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _pyapi))

# address of a live managed tensor -> (producer, its memory, the ctypes objects)
_live = {}
clock = [0]  # bumped by the tests around each library call


@DELETER
def _deleter(managed):
    address = ctypes.addressof(managed.contents)
    producer, memory, _keep = _live.pop(address)
    ctypes.memset(memory, 0x7B, ctypes.sizeof(memory))
    producer.events.append(("deleted", address, clock[0]))


@CAPSULE_DESTRUCTOR
def _capsule_destructor(capsule):
    if _raw_valid is None:  # the interpreter is shutting down
        return
    if _raw_valid(capsule, _DLTENSOR):  # never consumed: the producer's deleter
        managed = ctypes.cast(_raw_pointer(capsule, _DLTENSOR), ctypes.POINTER(DLManagedTensor))
        DELETER(managed.contents.deleter)(managed)


_DESTRUCTOR_ADDRESS = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value


class Producer:
    """``count`` int32 or int64 entries (``bits``) as ``shape`` (default
    1-D), filled from ``values``; each export copies the current contents
    into fresh memory, and ``last`` is the memory of the latest export."""

    def __init__(self, values, bits=32, shape=None, strides=None, code=0, lanes=1,
                 device_type=1, byte_offset=0, pad=0):
        self.values = list(values)
        self.bits = bits
        self.shape = shape if shape is not None else (len(self.values),)
        self.strides = strides
        self.code, self.lanes, self.device_type = code, lanes, device_type
        self.byte_offset, self.pad = byte_offset, pad
        self.events = []
        self.exports = []  # addresses of the managed tensors handed out
        self.last = None
        self.capsules = []  # kept when keep_capsules is set, to look at their names
        self.keep_capsules = False

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, stream=None):
        ctype = ctypes.c_int32 if self.bits == 32 else ctypes.c_int64
        count = len(self.values) + self.pad
        memory = (ctype * max(count, 1))(*self.values)
        shape = (ctypes.c_int64 * max(len(self.shape), 1))(*self.shape)
        strides = None
        if self.strides is not None:
            strides = (ctypes.c_int64 * max(len(self.strides), 1))(*self.strides)
        managed = DLManagedTensor()
        t = managed.dl_tensor
        t.data = ctypes.addressof(memory)
        t.device = DLDevice(self.device_type, 0)
        t.ndim = len(self.shape)
        t.dtype = DLDataType(self.code, self.bits, self.lanes)
        t.shape = shape
        t.strides = strides if strides is not None else None
        t.byte_offset = self.byte_offset
        managed.deleter = ctypes.cast(_deleter, ctypes.c_void_p).value
        address = ctypes.addressof(managed)
        _live[address] = (self, memory, (managed, shape, strides))
        self.exports.append(address)
        self.last = memory
        capsule = _capsule_new(address, _DLTENSOR, _DESTRUCTOR_ADDRESS)
        if self.keep_capsules:
            self.capsules.append(capsule)
        return capsule

    def read(self):
        """The latest export's entries (past byte_offset), as ints."""
        step = self.bits // 8
        skip = self.byte_offset // step
        return list(self.last[skip:skip + len(self.values)])

    def deletions(self):
        return [e for e in self.events if e[0] == "deleted"]


def live_exports():
    """How many exported managed tensors are not deleted yet."""
    return len(_live)
