# SPDX-License-Identifier: Apache-2.0
"""attnmeta.integrations.sglang against the stand-in of SGLang's code
(sglang_standin.py): every routed kernel gives what the stand-in's own
(SGLang's) kernel gives, bit for bit, into the same buffers, with none of
the stand-in's kernels left on the routed path and the handle's counters
saying so. SGLang's test_create_kvindices cases (an arange pool, distinct
random pool rows and lengths, B in {1, 37, 1786}, kv_indptr the cumulative
sum) run through its backends; graph padding rows read the reserved row 0;
forms attnmeta does not build run SGLang's kernel; kernels whose code
differs are left alone with a reason; restore() puts every binding back.
NumPy arrays always; torch tensors too where torch exists (its GPU when it
sees one)."""

import sys
import types

import numpy as np
import pytest

import sglang_standin as standin
from attnmeta.integrations._sglang_functions import FUNCTION_TARGETS
from attnmeta.integrations._sglang_targets import TARGETS as KERNEL_TARGETS
import test_vllm_integration

KERNELS = ("create_flashinfer_kv_indices_triton", "create_flashmla_kv_indices_triton",
           "create_chunked_prefix_cache_kv_indices")
MAX_BATCH = MAX_CONTEXT = 4096


# NumPy, and torch on the CPU and on its GPU where torch has them
KINDS = test_vllm_integration.KINDS


@pytest.fixture(scope="module")
def sglang_mod():
    from attnmeta.integrations import sglang

    return sglang


@pytest.fixture(scope="module")
def arange_pool():
    return np.arange(MAX_BATCH * MAX_CONTEXT, dtype=np.int32).reshape(MAX_BATCH, MAX_CONTEXT)


def _host(x, xp):
    return np.asarray(xp.to_np(x))


def _both(monkeypatch, sglang_mod, xp, run, install=None, **targets):
    """run(mods) -> arrays, once on SGLang's kernels and once patched with
    `targets` (fresh modules each time); returns (theirs, mine, their
    launches, my launches, handle)."""
    mods = standin.install(monkeypatch, xp, **(install or {}))
    theirs = [_host(a, xp) for a in run(mods)]
    their_launches = standin.launches()
    mods = standin.install(monkeypatch, xp, **(install or {}))
    patch = sglang_mod.patch_sglang(**targets)
    try:
        mine = [_host(a, xp) for a in run(mods)]
        my_launches = standin.launches()
    finally:
        patch.restore()
    return theirs, mine, their_launches, my_launches, patch


def _assert_same(theirs, mine):
    assert len(theirs) == len(mine)
    for a, b in zip(theirs, mine):
        np.testing.assert_array_equal(a, b)


def _create_kvindices_case(xp, batch, index_dtype):
    """SGLang's test_create_kvindices data: distinct random pool rows and
    lengths (below the pool's width), in index_dtype."""
    rng = np.random.default_rng(batch)
    rpi = rng.choice(MAX_BATCH, size=batch, replace=False).astype(index_dtype)
    lens = rng.choice(MAX_CONTEXT, size=batch, replace=False).astype(index_dtype)
    return xp.array(rpi.tolist(), index_dtype), xp.array(lens.tolist(), index_dtype), lens


# ---------------------------------------------------------------------------
# the slot list


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("batch", [1, 37, 1786])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_create_kvindices_through_flashinfer(sglang_mod, monkeypatch, arange_pool, kind, batch,
                                             index_dtype):
    xp = KINDS[kind]
    pool = xp.array(arange_pool, np.int32)
    rpi, lens, host_lens = _create_kvindices_case(xp, batch, index_dtype)
    total = int(host_lens.sum())

    def run(mods):
        kv_indptr = xp.zeros(batch + 1)
        kv_indices = xp.full(total + 7, -77)  # 7 more: never written
        mods[standin.FLASHINFER].update_decode_indices(pool, rpi, lens, batch, kv_indptr,
                                                       kv_indices)
        return kv_indptr, kv_indices

    theirs, mine, their_launches, my_launches, patch = _both(monkeypatch, sglang_mod, xp, run)
    _assert_same(theirs, mine)
    # SGLang's test: the rows' prefixes one after another
    want = np.concatenate([arange_pool[int(r), :int(n)] for r, n in
                           zip(_host(rpi, xp), host_lens)])
    np.testing.assert_array_equal(mine[1][:total], want)
    assert (mine[1][total:] == -77).all()
    assert their_launches == {"torch.cumsum": 1, "torch.copy": 1,
                              "create_flashinfer_kv_indices_triton": 1}
    assert my_launches == {"torch.cumsum": 1, "torch.copy": 1}
    assert patch.launches["flashinfer_kv_indices"] == 1 and not patch.fallbacks


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_start_index_and_graph_padding_rows(sglang_mod, monkeypatch, kind):
    """A replay at bs 4 with 2 real requests: the padding rows have pool
    row 0 (reserved, zeros) and seq_len 1, so each writes one slot 0; the
    persistent buffers are longer than the step, their tail stale."""
    xp = KINDS[kind]
    pool = xp.i32([[0] * 16] + [[100 * r + c for c in range(16)] for r in range(1, 6)])
    rpi = xp.array([3, 5, 0, 0, 7, 7], np.int64)  # graph buffers of max_bs 6
    seq = xp.array([4, 6, 1, 1, 9, 9], np.int64)
    start = xp.array([2, 10, 0, 0, 0, 0], np.int64)

    def run(mods):
        kv_indptr = xp.zeros(7)
        kv_indices = xp.full(20, 555)  # stale from an earlier replay
        mods[standin.FLASHINFER].update_decode_indices(pool, rpi, seq, 4, kv_indptr, kv_indices,
                                                       kv_start_idx=start)
        return kv_indptr, kv_indices

    theirs, mine, _, my_launches, patch = _both(monkeypatch, sglang_mod, xp, run)
    _assert_same(theirs, mine)
    assert mine[0].tolist() == [0, 4, 10, 11, 12, 0, 0]
    assert mine[1][:12].tolist() == [302, 303, 304, 305, 510, 511, 512, 513, 514, 515, 0, 0]
    assert (mine[1][12:] == 555).all()
    assert "create_flashinfer_kv_indices_triton" not in my_launches
    assert patch.launches["flashinfer_kv_indices"] == 1


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_triton_backend_imports_from_the_defining_module(sglang_mod, monkeypatch, kind):
    """The Triton backend's 2-D token-block grid, its name bound from
    sglang.kernels.ops.kvcache.kv_indices, launched twice in a step."""
    xp = KINDS[kind]
    pool = xp.i32([[0] * 40] + [[1000 * r + c for c in range(40)] for r in range(1, 4)])
    rpi = xp.array([2, 1, 3, 0], np.int64)
    seq = xp.array([40, 17, 0, 1], np.int64)

    def run(mods):
        kv_indptr, kv_indices = xp.zeros(5), xp.full(60, -1)
        for _ in range(2):
            mods[standin.TRITON].update_decode_indices(pool, rpi, seq, 4, kv_indptr, kv_indices)
        return kv_indptr, kv_indices

    theirs, mine, _, my_launches, patch = _both(monkeypatch, sglang_mod, xp, run)
    _assert_same(theirs, mine)
    assert my_launches == {"torch.cumsum": 2, "torch.copy": 2}
    assert patch.launches["flashinfer_kv_indices"] == 2


@pytest.mark.parametrize("form", ["entry_page_size", "token_mapping", "int64_kv_indices"])
def test_forms_attnmeta_does_not_build_run_sglangs_kernel(sglang_mod, monkeypatch, form):
    xp = KINDS["numpy"]
    pool = xp.i32([[0] * 8] + [[10 * r + c for c in range(8)] for r in range(1, 4)])
    rpi, seq = xp.array([1, 3], np.int64), xp.array([5, 3], np.int64)
    options = dict(entry_page_size=4) if form == "entry_page_size" else {}
    if form == "token_mapping":
        options["token_mapping"] = xp.array([7 * v for v in range(64)], np.int64)

    def run(mods):
        kv_indptr = xp.zeros(3)
        # int64 in SGLang's ENTRY_PAGE_SIZE > 1 and DCP paths
        kv_indices = xp.full(8, -1, np.int32 if form == "token_mapping" else np.int64)
        mods[standin.TRITON].update_decode_indices(pool, rpi, seq, 2, kv_indptr, kv_indices,
                                                   **options)
        return kv_indptr, kv_indices

    theirs, mine, their_launches, my_launches, patch = _both(monkeypatch, sglang_mod, xp, run)
    _assert_same(theirs, mine)
    assert my_launches == their_launches
    assert patch.launches["flashinfer_kv_indices"] == 0
    assert patch.fallbacks == {"flashinfer_kv_indices": 1}
    assert "not built in attnmeta" in patch.fallback_reasons["flashinfer_kv_indices"]


def test_buffers_the_drop_in_refuses_run_sglangs_kernel(sglang_mod, monkeypatch):
    """A grid given as a function and a kv_indptr shorter than bs + 1: the
    drop-in writes nothing and SGLang's kernel runs; counts start again
    after reset_counts()."""
    xp = KINDS["numpy"]
    pool = xp.i32([[0] * 8] + [[10 * r + c for c in range(8)] for r in range(1, 3)])
    rpi, seq = xp.array([2, 1], np.int64), xp.array([3, 2], np.int64)
    mods = standin.install(monkeypatch, xp)
    with sglang_mod.patch_sglang() as patch:
        kernel = mods[standin.FLASHINFER].create_flashinfer_kv_indices_triton
        out = xp.full(6, -1)
        kernel[lambda meta: (2,)](pool, rpi, seq, xp.i32([0, 3, 5]), None, out, 8)
        assert out.tolist() == [20, 21, 22, 10, 11, -1]
        out = xp.full(6, -1)
        kernel[(2,)](pool, rpi, seq, xp.i32([0, 3]), None, out, 8)  # SGLang reads 2 entries
        assert out.tolist() == [20, 21, 22, 10, 11, -1]
        assert patch.fallbacks == {"flashinfer_kv_indices": 2}
        assert "fewer than the 3 needed" in patch.fallback_reasons["flashinfer_kv_indices"]
        assert standin.launches() == {"create_flashinfer_kv_indices_triton": 2}
        patch.reset_counts()
        kernel[(2,)](pool, rpi, seq, xp.i32([0, 3, 5]), None, out, 8)
        assert patch.launches["flashinfer_kv_indices"] == 1 and not patch.fallbacks


# ---------------------------------------------------------------------------
# the padded page table and the chunked prefix


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("batch", [1, 3, 8])
@pytest.mark.parametrize("page_size", [32, 64])
def test_flashmla_page_table(sglang_mod, monkeypatch, kind, batch, page_size):
    """Rows of distinct lengths (some a page exactly, one empty), the table
    starting at -1 and wider than any row; pool entries are slot ids of
    pages allocated out of order."""
    xp = KINDS[kind]
    width_tokens = 8 * page_size
    rng = np.random.default_rng(page_size + batch)
    rows = [[0] * width_tokens] + [
        (rng.permutation(64)[np.arange(width_tokens) // page_size] * page_size
         + np.arange(width_tokens) % page_size).tolist() for _ in range(9)]
    pool = xp.i32(rows)
    rpi = xp.array(rng.choice(np.arange(1, 10), size=batch, replace=False).tolist(), np.int64)
    seq = xp.array([[5 * page_size, page_size, 0, 3, 7 * page_size + 1, 2 * page_size - 1,
                     6 * page_size, 1][b] for b in range(batch)], np.int64)

    def run(mods):
        table = xp.full((batch + 2, 9), -1)
        mods[standin.FLASHMLA].build_block_table(pool, rpi, seq, batch, table, page_size)
        return (table,)

    theirs, mine, _, my_launches, patch = _both(monkeypatch, sglang_mod, xp, run)
    _assert_same(theirs, mine)
    host_rows, host_rpi, host_seq = np.array(rows), _host(rpi, xp), _host(seq, xp)
    for b in range(batch):
        n = -(-int(host_seq[b]) // page_size)
        pages = host_rows[host_rpi[b], np.arange(n) * page_size] // page_size
        assert mine[0][b, :n].tolist() == pages.tolist()
        assert (mine[0][b, n:] == -1).all()
    assert (mine[0][batch:] == -1).all()
    assert "create_flashmla_kv_indices_triton" not in my_launches
    assert patch.launches["flashmla_kv_indices"] == 1 and not patch.fallbacks


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_flashmla_graph_padding_rows(sglang_mod, monkeypatch, kind):
    """Padding rows (pool row 0, seq_len fill 1) get page 0 in column 0;
    the rest of their rows keep the buffer's stale replay."""
    xp = KINDS[kind]
    pool = xp.i32([[0] * 256] + [[64 * 3 + c for c in range(128)]
                                 + [64 * 9 + c for c in range(128)]])
    rpi, seq = xp.array([1, 0, 0], np.int64), xp.array([130, 1, 1], np.int64)

    def run(mods):
        table = xp.full((3, 4), 1)  # Cutlass's and old FlashMLA's graph buffers start at 1
        mods[standin.FLASHMLA].build_block_table(pool, rpi, seq, 3, table, 64)
        return (table,)

    theirs, mine, _, _, _ = _both(monkeypatch, sglang_mod, xp, run)
    _assert_same(theirs, mine)
    assert mine[0].tolist() == [[3, 4, 9, 1], [0, 1, 1, 1], [0, 1, 1, 1]]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_chunked_prefix(sglang_mod, monkeypatch, kind):
    xp = KINDS[kind]
    pool = xp.i32([[0] * 32] + [[100 * r + c for c in range(32)] for r in range(1, 4)])
    rpi = xp.array([3, 1, 2], np.int64)
    starts, lens = xp.i32([8, 0, 30]), xp.i32([4, 6, 2])
    cu = xp.i32([0, 4, 10, 12])

    def run(mods):
        out = xp.full(14, -1)
        mods[standin.FORWARD_BATCH].prepare_chunked_kv_indices(pool, rpi, starts, lens, cu, out,
                                                               3)
        return (out,)

    theirs, mine, _, my_launches, patch = _both(monkeypatch, sglang_mod, xp, run,
                                                chunked_prefix_kv_indices=True)
    _assert_same(theirs, mine)
    assert mine[0].tolist() == [308, 309, 310, 311, 100, 101, 102, 103, 104, 105, 230, 231,
                                -1, -1]
    assert not my_launches
    assert patch.launches["chunked_prefix_kv_indices"] == 1


# ---------------------------------------------------------------------------
# the handle


def test_every_binding_is_routed_and_restored(sglang_mod, monkeypatch):
    mods = standin.install(monkeypatch, KINDS["numpy"])
    originals = {(name, k): getattr(mods[name], k) for name in standin.MODULES
                 for k in KERNELS if k in vars(mods[name])}
    patch = sglang_mod.patch_sglang(chunked_prefix_kv_indices=True)
    assert sglang_mod.active_patch() is patch
    assert sglang_mod.patch_sglang() is patch  # once
    # the plain functions' modules are not in this stand-in
    assert patch.applied == list(KERNEL_TARGETS) and set(patch.skipped) == set(FUNCTION_TARGETS)
    assert sorted(patch.bindings["flashinfer_kv_indices"]) == sorted(
        [standin.KV_INDICES + ".create_flashinfer_kv_indices_triton",
         standin.UTILS + ".create_flashinfer_kv_indices_triton",
         standin.FLASHINFER + ".create_flashinfer_kv_indices_triton",
         standin.TRITON + ".create_flashinfer_kv_indices_triton"])
    for (name, k), original in originals.items():
        assert getattr(mods[name], k) is not original
        assert getattr(mods[name], k).arg_names == original.arg_names  # the kernel's attributes
    late = types.ModuleType("sglang.srt.layers.attention.late_backend")
    exec("from sglang.srt.layers.attention.utils import create_flashinfer_kv_indices_triton",
         late.__dict__)
    monkeypatch.setitem(sys.modules, late.__name__, late)
    assert late.create_flashinfer_kv_indices_triton is not originals[
        (standin.UTILS, "create_flashinfer_kv_indices_triton")]
    assert "SGLang 0.5.6.dev0" in repr(patch)
    patch.restore()
    patch.restore()  # twice is fine
    assert sglang_mod.active_patch() is None
    for (name, k), original in originals.items():
        assert getattr(mods[name], k) is original
    assert late.create_flashinfer_kv_indices_triton is originals[
        (standin.UTILS, "create_flashinfer_kv_indices_triton")]


def test_the_older_layout_defines_the_kernels_in_utils(sglang_mod, monkeypatch):
    xp = KINDS["numpy"]
    pool = xp.i32([[0] * 8, [10 + c for c in range(8)]])

    def run(mods):
        kv_indptr, kv_indices = xp.zeros(2), xp.full(4, -1)
        mods[standin.FLASHINFER].update_decode_indices(pool, xp.array([1], np.int64),
                                                       xp.array([3], np.int64), 1, kv_indptr,
                                                       kv_indices)
        return kv_indptr, kv_indices

    theirs, mine, _, _, patch = _both(monkeypatch, sglang_mod, xp, run,
                                      install=dict(utils_defines=True),
                                      chunked_prefix_kv_indices=True)
    _assert_same(theirs, mine)
    assert mine[1].tolist() == [10, 11, 12, -1]
    assert patch.applied == list(KERNEL_TARGETS)
    assert patch.launches["flashinfer_kv_indices"] == 1


def test_changed_code_is_left_alone(sglang_mod, monkeypatch):
    mods = standin.install(monkeypatch, KINDS["numpy"])
    changed = standin.Kernel("create_flashmla_kv_indices_triton", lambda *a, **k: None,
                             standin.PAGE_TABLE_ARGS[:5] + ["PAGE_STRIDE"])
    for name in (standin.KV_INDICES, standin.UTILS, standin.FLASHMLA):
        setattr(mods[name], "create_flashmla_kv_indices_triton", changed)
    monkeypatch.delattr(mods[standin.KV_INDICES], "create_chunked_prefix_cache_kv_indices")
    monkeypatch.delattr(mods[standin.FORWARD_BATCH], "create_chunked_prefix_cache_kv_indices")
    with sglang_mod.patch_sglang(chunked_prefix_kv_indices=True) as patch:
        assert patch.applied == ["flashinfer_kv_indices", "draft_decode_kv_indices",
                                 "dcp_kv_indices", "dcp_mla_page_table"]
        assert "takes (" in patch.skipped["flashmla_kv_indices"]
        assert "PAGE_STRIDE" in patch.skipped["flashmla_kv_indices"]
        assert ("has no create_chunked_prefix_cache_kv_indices"
                in patch.skipped["chunked_prefix_kv_indices"])
        assert mods[standin.FLASHMLA].create_flashmla_kv_indices_triton is changed
    assert sglang_mod.active_patch() is None


def test_only_what_is_asked(sglang_mod, monkeypatch):
    mods = standin.install(monkeypatch, KINDS["numpy"])
    original = mods[standin.FLASHMLA].create_flashmla_kv_indices_triton
    with sglang_mod.patch_sglang(flashinfer_kv_indices=False,
                                 chunked_prefix_kv_indices=False) as patch:
        assert patch.applied == ["flashmla_kv_indices", "draft_decode_kv_indices",
                                 "dcp_kv_indices", "dcp_mla_page_table"]
        assert patch.skipped["flashinfer_kv_indices"] == "turned off by the caller"
        assert mods[standin.FLASHMLA].create_flashmla_kv_indices_triton is not original
    assert mods[standin.FLASHMLA].create_flashmla_kv_indices_triton is original
    chunked = mods[standin.FORWARD_BATCH].create_chunked_prefix_cache_kv_indices
    with sglang_mod.patch_sglang() as patch:  # the defaults
        assert patch.applied == ["flashinfer_kv_indices", "flashmla_kv_indices",
                                 "draft_decode_kv_indices", "dcp_kv_indices",
                                 "dcp_mla_page_table"]
        assert "off by default" in patch.skipped["chunked_prefix_kv_indices"]
        assert mods[standin.FORWARD_BATCH].create_chunked_prefix_cache_kv_indices is chunked
    with pytest.raises(TypeError, match="unknown target"):
        sglang_mod.patch_sglang(flashinfer=True)


def test_without_sglang(sglang_mod, monkeypatch):
    standin.remove(monkeypatch)
    monkeypatch.setitem(sys.modules, "sglang", None)  # import sglang fails
    with pytest.raises(ImportError):
        sglang_mod.patch_sglang()
