# SPDX-License-Identifier: Apache-2.0
"""Randomised properties of the binding's buffer layer (attnmeta._arrays):
NumPy views of every dtype, shape, stride and offset; objects whose
``__cuda_array_interface__`` or ``__array_interface__`` lies; DLPack
producers whose tensors lie about dtype, shape, strides, device or offset;
and the lifetimes of the DLPack capsules through one-shot calls and plans.

Each case is checked against an expectation written here from the binding's
documented rules, never from its code: an accepted buffer gives the true
pointer and sizes, a refused one a TypeError or ValueError (never a crash,
never another exception), and a library call through an accepted view
writes exactly the view's entries.

The cases come from one seeded generator: ATTNMETA_PROPERTY_SEED (default
20261201) and ATTNMETA_PROPERTY_ROUNDS (default 150 per property, what CI
runs; the H200 test machine runs ATTNMETA_PROPERTY_ROUNDS=20000). A failure
prints the seed and round to replay it. Only NumPy and ctypes are used.
"""

import ctypes
import gc
import os
import random

import numpy as np
import pytest

import dlpack_producer as dlp
import reference

SEED = int(os.environ.get("ATTNMETA_PROPERTY_SEED", "20261201"))
ROUNDS = int(os.environ.get("ATTNMETA_PROPERTY_ROUNDS", "150"))

DTYPES = [np.int32, np.int64, np.int16, np.uint32, np.float32, np.int8, np.uint64, np.float64]
NONNATIVE = [np.dtype(">i4"), np.dtype(">i8")]


def _rng(name):
    return random.Random("%d/%s" % (SEED, name))


def _where(name, i):
    return "%s round %d (ATTNMETA_PROPERTY_SEED=%d)" % (name, i, SEED)


@pytest.fixture(scope="module")
def arrays(attnmeta):
    from attnmeta import _arrays

    return _arrays


# ---------------------------------------------------------------------------
# NumPy views


def _random_view(r):
    """A view into a poisoned base array: (base, view)."""
    dtype = r.choice(DTYPES + NONNATIVE) if r.random() < 0.3 else r.choice([np.int32, np.int64])
    dtype = np.dtype(dtype)
    ndim = r.choice([0, 1, 1, 2, 2, 3])
    base = np.full(r.randint(8, 400), 77, dtype=dtype)
    if r.random() < 0.1:  # a view that starts off its elements' alignment
        raw = np.zeros(base.nbytes + dtype.itemsize, np.uint8)
        base = raw[1:1 + base.nbytes].view(dtype)
    if ndim == 0:
        at = r.randrange(len(base))
        return base, base[at:at + 1].reshape(())
    start = r.randrange(0, 4)
    step = r.choice([1, 1, 1, 2, 3, -1])
    flat = base[start::step] if step > 0 else base[::-1][start:]
    if ndim == 1:
        n = r.randint(0, len(flat))
        view = flat[:n]
    else:
        rows = r.randint(0, 6)
        cols = r.randint(0, 8)
        if rows * cols > len(flat):
            rows = len(flat) // max(cols, 1)
        view = flat[: rows * cols].reshape(rows, cols) if rows * cols else flat[:0].reshape(rows, cols)
        if r.random() < 0.3 and cols > 1:
            view = view[:, : r.randint(1, cols)]  # a column slice: padded rows
        if r.random() < 0.2:
            view = view.T
        if ndim == 3:
            view = view.reshape(view.shape + (1,))
    if r.random() < 0.1:
        view = view.copy()
        view.setflags(write=False)
    return base, view


def _itemsize_ok(view, dtype):
    want = np.dtype(np.int32 if dtype == "int32" else np.int64)
    return view.dtype == want  # native byte order only


def _expect_vec(view, dtype, out):
    """(None, ptr, n) when accepted, else (exception type, None, None)."""
    if not _itemsize_ok(view, dtype):
        return TypeError, None, None
    if view.ndim != 1:
        return ValueError, None, None
    if view.ctypes.data % view.itemsize and view.size:  # an empty view reads nothing
        return ValueError, None, None
    if out and not view.flags.writeable:
        return ValueError, None, None
    if len(view) > 1 and view.strides[0] != view.itemsize:
        return ValueError, None, None
    return None, view.ctypes.data, len(view)


def _expect_table(view, out):
    if not _itemsize_ok(view, "int32"):
        return TypeError, None
    if view.ndim != 2:
        return ValueError, None
    if view.ctypes.data % 4 and view.size:
        return ValueError, None
    if out and not view.flags.writeable:
        return ValueError, None
    rows, cols = view.shape
    s0, s1 = view.strides[0] // 4, view.strides[1] // 4
    if rows > 0 and cols > 1 and s1 != 1:  # no row: no element, strides mean nothing
        return ValueError, None
    if rows > 1 and s0 < cols:
        return ValueError, None
    return None, (view.ctypes.data, rows, cols, s0 if rows > 1 else cols)


def test_numpy_views_vec(arrays):
    r = _rng("vec")
    for i in range(ROUNDS * 4):
        _, view = _random_view(r)
        dtype = r.choice(["int32", "int64"])
        out = r.random() < 0.5
        want_exc, ptr, n = _expect_vec(view, dtype, out)
        where = _where("vec", i)
        if want_exc is None:
            got = arrays.vec(view, "x", dtype, out)
            assert got == (ptr, arrays.CPU_DEVICE, n), where
        else:
            with pytest.raises(want_exc, match="^x "):
                arrays.vec(view, "x", dtype, out)


def test_numpy_views_table(arrays):
    r = _rng("table")
    for i in range(ROUNDS * 4):
        _, view = _random_view(r)
        out = r.random() < 0.5
        want_exc, want = _expect_table(view, out)
        where = _where("table", i)
        if want_exc is None:
            ptr, dev, rows, cols, stride = arrays.table(view, "x", out)
            assert (ptr, rows, cols, stride) == want and dev == arrays.CPU_DEVICE, where
        else:
            with pytest.raises(want_exc, match="^x "):
                arrays.table(view, "x", out)


def test_library_writes_exactly_the_view(attnmeta):
    """The token map through an accepted 1-D view: its entries are the
    reference's, every other byte of the base array keeps its poison."""
    r = _rng("writes")
    for i in range(ROUNDS):
        R = r.randint(0, 5)
        qlens = [r.randint(0, 4) for _ in range(R)]
        qsl = [0]
        for q in qlens:
            qsl.append(qsl[-1] + q)
        T = qsl[-1] + r.randint(0, 3)
        base = np.full(T + 16, 77, np.int32)
        start = r.randint(0, 8)
        out = base[start:start + T]
        attnmeta.compute_token_to_req_indices(np.array(qsl, np.int32), out, -1, T)
        want = reference.token_map(qsl, R, -1, T)
        where = _where("writes", i)
        assert out.tolist() == want, where
        assert (base[:start] == 77).all() and (base[start + T:] == 77).all(), where


# ---------------------------------------------------------------------------
# Objects whose interfaces lie


class _LyingCuda:
    def __init__(self, cai):
        self._cai = cai

    @property
    def __cuda_array_interface__(self):
        if isinstance(self._cai, Exception):
            raise self._cai
        return self._cai


class _ArrayInterfaceOnly:
    def __init__(self, ai):
        self.__array_interface__ = ai


class _LyingNdarray(np.ndarray):
    """An ndarray whose __array_interface__ names other memory."""

    @property
    def __array_interface__(self):
        ai = dict(np.asarray(self).__array_interface__)
        ai["data"] = (ai["data"][0] + 4096, False)
        return ai


def _random_cai(r):
    """A __cuda_array_interface__ dict, right or wrong in one way; the
    exception expected (None when it is right) for a 1-D int32 output."""
    n = r.randint(0, 9)
    cai = {"shape": (n,), "typestr": "<i4", "data": (4096 * r.randint(1, 9), False), "version": 3}
    fault = r.randrange(12)
    want = None
    if fault == 0:
        cai["typestr"] = r.choice(["<i8", ">i4", "<f4", "|u1", "<u4", 7])
        want = TypeError
    elif fault == 1:
        cai["shape"] = r.choice([(n, 1), (), (1, n, 1)])
        want = ValueError
    elif fault == 2:
        cai["data"] = (cai["data"][0], True)
        want = ValueError
    elif fault == 3:
        cai["strides"] = (8,)
        want = ValueError if n > 1 else None
    elif fault == 4:
        cai["data"] = (cai["data"][0] + r.choice([1, 2, 3]), False)
        want = ValueError
    elif fault == 5:
        del cai[r.choice(["shape", "typestr", "data"])]
        want = TypeError
    elif fault == 6:
        cai["data"] = r.choice([None, 5, (1, 2, 3), "ptr"])
        want = TypeError
    elif fault == 7:
        cai["mask"] = object()
        want = ValueError
    elif fault == 8:
        cai = r.choice([None, 3, [], "cai"])
        want = TypeError
    elif fault == 9:
        cai = RuntimeError("the producer fails")
        want = TypeError
    elif fault == 10:
        cai["shape"] = r.choice([("a",), None, 5])
        want = TypeError if not isinstance(cai["shape"], tuple) else (TypeError, ValueError)
    return cai, want


def test_lying_cuda_array_interface(arrays):
    r = _rng("cai")
    for i in range(ROUNDS * 4):
        cai, want = _random_cai(r)
        where = _where("cai", i)
        if want is None:
            ptr, dev, n = arrays.vec(_LyingCuda(cai), "x", "int32", True)
            assert ptr == cai["data"][0] and n == cai["shape"][0], where
            assert dev[0] == arrays.Backend.CUDA, where
        else:
            with pytest.raises(want):
                arrays.vec(_LyingCuda(cai), "x", "int32", True)


def test_lying_array_interface(arrays):
    """__array_interface__ alone is not a buffer kind: refused, whatever it
    says; an ndarray whose interface lies is read from its own memory."""
    r = _rng("ai")
    for i in range(ROUNDS):
        ai = {"shape": (r.randint(0, 9),), "typestr": "<i4", "data": (r.randint(0, 2**40), False),
              "version": 3}
        with pytest.raises(TypeError, match="must be a torch.Tensor, a numpy.ndarray"):
            arrays.vec(_ArrayInterfaceOnly(ai), "x", "int32")
        real = np.arange(r.randint(1, 9), dtype=np.int32)
        liar = real.view(_LyingNdarray)
        ptr, _, n = arrays.vec(liar, "x", "int32", True)
        assert ptr == real.ctypes.data and n == len(real), _where("ai", i)


# ---------------------------------------------------------------------------
# DLPack: lying tensors and capsule lifetimes


def _random_producer(r):
    """A producer for a 1-D int32 output, right or wrong in one way, and
    the exception expected."""
    n = r.randint(0, 9)
    kw = {}
    want = None
    fault = r.randrange(10)
    if fault == 0:
        kw["bits"], want = 64, TypeError
    elif fault == 1:
        kw["code"], want = r.choice([1, 2, 4]), TypeError
    elif fault == 2:
        kw["lanes"], want = r.choice([2, 4]), TypeError
    elif fault == 3:
        kw["shape"], want = (n, 1), ValueError
    elif fault == 4:
        kw["strides"] = (r.choice([2, 3, -1]),)
        want = ValueError if n > 1 else None
    elif fault == 5:
        kw["device_type"], want = r.choice([4, 7, 8, 9, 12, 99]), ValueError
    elif fault == 6:
        kw["byte_offset"], kw["pad"], want = r.choice([1, 2, 3]), 1, ValueError
    elif fault == 7:
        kw["byte_offset"], kw["pad"] = 4 * r.randint(1, 3), 3
    elif fault == 8:
        kw["strides"] = (1,)
    return dlp.Producer([-7] * n, **kw), want


def test_lying_dlpack_tensors(arrays):
    """Refused tensors are left to their capsule (deleted once, at once);
    accepted ones are held while referred to, then deleted once."""
    r = _rng("dlpack")
    for i in range(ROUNDS * 2):
        producer, want = _random_producer(r)
        where = _where("dlpack", i)
        if want is None:
            ptr, dev, n = arrays.vec(producer, "x", "int32", True)
            gc.collect(0)  # any collection sweeps the holds
            assert dev == arrays.CPU_DEVICE and n == len(producer.values), where
            assert ptr == ctypes.addressof(producer.last) + producer.byte_offset, where
            assert producer.deletions() == [], where
        else:
            with pytest.raises(want):
                arrays.vec(producer, "x", "int32", True)
            assert len(producer.deletions()) == 1, where
        events = producer.events
        del producer
        gc.collect(0)  # any collection sweeps the holds
        assert len([e for e in events if e[0] == "deleted"]) == 1, where
    assert dlp.live_exports() == 0


def test_dlpack_lifetimes_through_calls_and_plans(attnmeta):
    """Random interleavings of one-shot calls, plans and their replays,
    plan replacements, dropped references and collections: a deleter runs
    only once nothing but the binding refers to its producer, exactly once,
    and every replay writes the reference's values into live memory."""
    r = _rng("lifetimes")
    QSL, T = [0, 2, 3, 6], 8
    want = reference.token_map(QSL, 3, -1, T)
    live = []  # (producer, its exports when made)
    plans = []
    for i in range(ROUNDS):
        where = _where("lifetimes", i)
        action = r.randrange(6)
        if action == 0:  # a one-shot call
            out = dlp.Producer([-7] * T)
            attnmeta.compute_token_to_req_indices(np.array(QSL, np.int32), out, -1, T)
            assert out.read() == want and out.deletions() == [], where
            if r.random() < 0.5:
                live.append(out)
            del out
        elif action == 1:  # a plan over temporaries only it refers to
            plans.append(attnmeta.StepPlan(dlp.Producer(QSL), token_to_req=dlp.Producer([-7] * T)))
        elif action == 2 and plans:  # a replay
            plan = r.choice(plans)
            plan.build(3, T)
            out = plan.buffers["token_to_req"]
            assert out.read() == want and out.deletions() == [], where
            del out, plan
        elif action == 3 and plans:  # new buffers for a plan
            r.choice(plans).replace(token_to_req=dlp.Producer([-7] * T))
        elif action == 4 and plans:  # a plan dropped
            plans.pop(r.randrange(len(plans)))
        elif action == 5 and live:
            live.pop(r.randrange(len(live)))
        if r.random() < 0.5:
            gc.collect(0)  # any collection sweeps the holds
        for p in live:
            assert p.deletions() == [], where
        for plan in plans:
            for p in plan.buffers.values():
                assert p.deletions() == [], where
        p = plan = None  # the loops' last references
    del live[:], plans[:]
    gc.collect(0)  # any collection sweeps the holds
    assert dlp.live_exports() == 0
