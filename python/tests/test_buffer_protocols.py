# SPDX-License-Identifier: Apache-2.0
"""Buffers that are neither torch tensors nor NumPy arrays: objects with
__cuda_array_interface__ (CuPy, Numba, JAX) and DLPack producers
(__dlpack__ / __dlpack_device__). Stand-ins of both kinds are built over
NumPy memory (CPU backend, DLPack) or memory from attnmeta_device_alloc
(CUDA backend, when a device exists), so the tests need neither CuPy nor
torch; results are checked against the naive reference."""

import ctypes

import numpy as np
import pytest

import reference

QSL = [0, 2, 3, 6]
T = 8
WANT = [0, 0, 1, 2, 2, 2, 0, 0]


class DLPackOnly:
    """Only the DLPack protocol of a NumPy array (CPU, kDLCPU)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


class CudaArray:
    """A __cuda_array_interface__ (v3) over a device pointer."""

    def __init__(self, ptr, shape, typestr="<i4", strides=None, readonly=False):
        self.__cuda_array_interface__ = None  # set below; the class attribute marks the kind
        self._cai = dict(shape=tuple(shape), typestr=typestr, data=(ptr, readonly),
                         strides=strides, version=3)

    @property
    def __cuda_array_interface__(self):  # noqa: F811
        return self._cai

    @__cuda_array_interface__.setter
    def __cuda_array_interface__(self, value):
        pass


def test_dlpack_token_map(attnmeta):
    qsl = np.array(QSL, np.int32)
    out = np.full(T, -7, np.int32)
    got = attnmeta.compute_token_to_req_indices(DLPackOnly(qsl), DLPackOnly(out), -1, T)
    assert isinstance(got, DLPackOnly)
    assert out.tolist() == reference.token_map(QSL, 3, -1, T) == WANT


def test_dlpack_table_and_step(attnmeta):
    qsl = np.array(QSL, np.int32)
    seq_lens = np.array([5, 1, 3], np.int32)
    wide = np.arange(3 * 8, dtype=np.int32).reshape(3, 8)
    table = wide[:, :3]  # a column slice: row stride 8
    table_out = np.full((T, 3), -7, np.int32)
    slots = np.full(T, -7, np.int64)
    attnmeta.build_step(DLPackOnly(qsl), T, seq_lens=DLPackOnly(seq_lens),
                        block_table=DLPackOnly(table), block_table_out=DLPackOnly(table_out),
                        slot_mapping=DLPackOnly(slots), block_size=2)
    want_rows = [table[r].tolist() for r in WANT[:6]] + [[0, 0, 0]] * 2
    assert table_out.tolist() == want_rows
    positions = [3, 4, 0, 0, 1, 2]  # the last query tokens of KV lengths 5, 1, 3
    want_slots = [int(table[r][p // 2]) * 2 + p % 2 for r, p in zip(WANT, positions)] + [-1, -1]
    assert slots.tolist() == want_slots == [3, 4, 16, 32, 33, 34, -1, -1]


def test_dlpack_checks(attnmeta):
    qsl = np.array(QSL, np.int32)
    with pytest.raises(TypeError, match="out must be a int32 buffer, got DLPack dtype"):
        attnmeta.compute_token_to_req_indices(qsl, DLPackOnly(np.zeros(T, np.int64)), -1, T)
    with pytest.raises(ValueError, match="out must be 1-D, got 2 dimensions"):
        attnmeta.compute_token_to_req_indices(qsl, DLPackOnly(np.zeros((2, 4), np.int32)), -1, T)
    with pytest.raises(ValueError, match="out must be contiguous, got a stride of 2 elements"):
        attnmeta.compute_token_to_req_indices(qsl, DLPackOnly(np.zeros(2 * T, np.int32)[::2]), -1, T)


def _cuda_count(attnmeta):
    try:
        return attnmeta.backend_device_count(attnmeta.Backend.CUDA)
    except attnmeta.AttnmetaError:
        return 0


def test_cuda_array_interface_checks(attnmeta):
    """Argument checks happen before any device is touched."""
    qsl = CudaArray(256, (4,))
    with pytest.raises(TypeError, match="out must hold little-endian int32, got typestr '<i8'"):
        attnmeta.compute_token_to_req_indices(qsl, CudaArray(512, (T,), "<i8"), -1, T)
    with pytest.raises(ValueError, match="out must be 1-D, got shape"):
        attnmeta.compute_token_to_req_indices(qsl, CudaArray(512, (2, 4)), -1, T)
    with pytest.raises(ValueError, match="out must be contiguous, got a stride of 8 bytes"):
        attnmeta.compute_token_to_req_indices(qsl, CudaArray(512, (T,), strides=(8,)), -1, T)
    with pytest.raises(ValueError, match="out is an output but the buffer is read-only"):
        attnmeta.compute_token_to_req_indices(qsl, CudaArray(512, (T,), readonly=True), -1, T)
    with pytest.raises(ValueError, match="out is not aligned"):
        attnmeta.compute_token_to_req_indices(qsl, CudaArray(514, (T,)), -1, T)
    with pytest.raises(ValueError, match="out is on cuda device 0 but query_start_loc is on the host"):
        attnmeta.compute_token_to_req_indices(np.array(QSL, np.int32), CudaArray(512, (T,)), -1, T)


def test_cuda_array_interface_without_device(attnmeta):
    if _cuda_count(attnmeta):
        pytest.skip("a CUDA device exists: test_cuda_array_interface_on_device runs instead")
    with pytest.raises(attnmeta.AttnmetaError) as info:
        attnmeta.compute_token_to_req_indices(CudaArray(256, (4,)), CudaArray(512, (T,)), -1, T)
    assert info.value.status in (attnmeta.Status.NO_DEVICE, attnmeta.Status.BACKEND_UNAVAILABLE)


def test_cuda_array_interface_on_device(attnmeta):
    """Device memory from attnmeta_device_alloc behind the interface."""
    if not _cuda_count(attnmeta):
        pytest.skip("no CUDA device")
    from attnmeta import _lib

    ctx = attnmeta.get_context("cuda", 0)
    ptrs = []
    try:
        for size in (4 * len(QSL), 4 * T):
            p = ctypes.c_void_p()
            assert _lib.device_alloc(ctx.handle, size, ctypes.byref(p)) == 0
            ptrs.append(p.value)
        host_qsl = np.array(QSL, np.int32)
        poison = np.full(T, -7, np.int32)
        assert _lib.copy_to_device(ctx.handle, ptrs[0], host_qsl.ctypes.data, host_qsl.nbytes) == 0
        assert _lib.copy_to_device(ctx.handle, ptrs[1], poison.ctypes.data, poison.nbytes) == 0
        attnmeta.compute_token_to_req_indices(CudaArray(ptrs[0], (4,)), CudaArray(ptrs[1], (T,)), -1, T)
        ctx.synchronize()
        got = np.empty(T, np.int32)
        assert _lib.copy_to_host(ctx.handle, got.ctypes.data, ptrs[1], got.nbytes) == 0
        assert got.tolist() == WANT
    finally:
        for p in ptrs:
            _lib.device_free(ctx.handle, p)


# ---------------------------------------------------------------------------
# DLPack capsule lifetimes: the producer's deleter (which poisons the memory
# here) runs exactly once, and only once nothing but the binding refers to
# the producer; the library never writes after it.

import gc  # noqa: E402

import dlpack_producer as dlp  # noqa: E402


def _tick():
    dlp.clock[0] += 1
    return dlp.clock[0]


def _collect():
    gc.collect()
    return _tick()


def test_dlpack_capsule_consumed_and_deleter_after_last_reference(attnmeta):
    qsl = np.array(QSL, np.int32)
    out = dlp.Producer([-7] * T)
    out.keep_capsules = True
    called = _tick()
    attnmeta.compute_token_to_req_indices(qsl, out, -1, T)
    after = _collect()
    assert out.deletions() == [], "the deleter ran while the producer was still referred to"
    assert out.read() == WANT
    capsule = out.capsules.pop()
    assert dlp._capsule_valid(capsule, b"used_dltensor") and not dlp._capsule_valid(capsule, b"dltensor")
    del capsule
    events = out.events
    dropped = _tick()
    del out
    _collect()
    assert len(events) == 1 and called < after < dropped == events[0][2]
    assert dlp.live_exports() == 0


def test_dlpack_refused_capsule_deleted_once(attnmeta):
    qsl = np.array(QSL, np.int32)
    wrong = dlp.Producer([0] * T, bits=64)
    with pytest.raises(TypeError, match="out must be a int32 buffer"):
        attnmeta.compute_token_to_req_indices(qsl, wrong, -1, T)
    assert len(wrong.deletions()) == 1  # left unconsumed: the capsule's destructor
    _collect()
    assert len(wrong.deletions()) == 1


def test_dlpack_repeated_calls_keep_one_export_per_memory(attnmeta):
    """Every call exports fresh memory here, so each export is kept until
    the producer is dropped, then each deleted exactly once."""
    qsl = np.array(QSL, np.int32)
    out = dlp.Producer([-7] * T)
    for _ in range(5):
        attnmeta.compute_token_to_req_indices(qsl, out, -1, T)
        _collect()
    assert out.deletions() == [] and len(out.exports) == 5
    events, exports = out.events, list(out.exports)
    del out
    _collect()
    assert sorted(e[1] for e in events) == sorted(exports)
    assert dlp.live_exports() == 0


def test_dlpack_step_plan_replays(attnmeta):
    """The plan keeps its buffers: replays after collections write into
    live memory, and the deleters run once the plan is gone."""
    seq = [5, 1, 3]
    plan = attnmeta.StepPlan(dlp.Producer(QSL), seq_lens=dlp.Producer(seq),
                             token_to_req=dlp.Producer([-7] * T),
                             seq_lens_out=dlp.Producer([-7] * T))
    bufs = plan.buffers
    producers = list(bufs.values())
    del bufs
    for _ in range(3):
        _collect()
        plan.build(3, T)
    out = plan.buffers["token_to_req"]
    lens = plan.buffers["seq_lens_out"]
    assert out.read() == WANT
    assert lens.read() == [4, 5, 1, 1, 2, 3, 0, 0]  # each token's KV length
    assert all(p.deletions() == [] for p in producers)
    del out, lens
    events = [p.events for p in producers]
    del producers
    _collect()
    assert all(e == [] for e in events), "deleted while the plan lives"
    del plan
    _collect()
    assert all(len(e) == 1 for e in events)
    assert dlp.live_exports() == 0


def test_dlpack_topk_plan_replays(attnmeta):
    bs, K = 4, 3
    topk = [0, 5, -1, 2, 7, 1]  # two tokens of request 0
    table = [10, 11, 12, 13]
    plan = attnmeta.TopkPlan(dlp.Producer(topk, shape=(2, K)), dlp.Producer(table, shape=(1, 4)),
                             dlp.Producer([77] * 6, shape=(2, K)),
                             req_id=dlp.Producer([0, 0]), block_size=bs)
    for _ in range(3):
        _collect()
        plan.convert(2)
    out = plan.buffers["out"]
    assert out.read() == [40, 45, -1, 42, 47, 41]
    events = [p.events for p in plan.buffers.values()]
    del out
    _collect()
    assert all(e == [] for e in events)
    del plan
    _collect()
    assert all(len(e) == 1 for e in events)
    assert dlp.live_exports() == 0


def test_bool_is_not_an_integer(attnmeta):
    from attnmeta import _arrays

    qsl = np.array(QSL, np.int32)
    out = np.zeros(T, np.int32)
    for value in (True, False, np.True_):
        with pytest.raises(TypeError, match="num_tokens must be an integer, got bool"):
            attnmeta.compute_token_to_req_indices(qsl, out, -1, value)
        with pytest.raises(TypeError, match="block_size must be an integer, got bool"):
            attnmeta.StepPlan(qsl, token_to_req=out, block_size=value)
        with pytest.raises(TypeError, match="x must be an integer"):
            _arrays.int32(value, "x")
    assert _arrays.int32(np.int64(7), "x") == 7 and _arrays.int32(3, "x") == 3
