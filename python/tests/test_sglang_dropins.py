# SPDX-License-Identifier: Apache-2.0
"""The SGLang drop-ins (attnmeta._sglang_dropins) on NumPy buffers (the CPU
backend): SGLang's own test of create_flashinfer_kv_indices_triton
re-expressed (an arange pool, distinct random pool rows and lengths, B in
{1, 37, 1786}, kv_indptr the cumulative sum, the slot list the rows'
prefixes one after another), the page table against a loop written from
SGLang's definition, the fused kv_indptr, and what is refused."""

import numpy as np
import pytest

import attnmeta
from attnmeta import (
    create_flashinfer_kv_indices_triton,
    create_flashmla_kv_indices_triton,
    create_kv_indptr_and_indices,
)

MAX_BATCH = MAX_CONTEXT = 4096


@pytest.fixture(scope="module")
def pool():
    return np.arange(MAX_BATCH * MAX_CONTEXT, dtype=np.int32).reshape(MAX_BATCH, MAX_CONTEXT)


@pytest.mark.parametrize("batch", [1, 37, 1786])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_create_kvindices(pool, batch, index_dtype):
    rng = np.random.default_rng(batch)
    rpi = rng.choice(MAX_BATCH, size=batch, replace=False).astype(index_dtype)
    lens = rng.choice(MAX_CONTEXT, size=batch, replace=False).astype(index_dtype)
    indptr = np.zeros(batch + 1, dtype=np.int32)
    indptr[1:] = np.cumsum(lens)
    want = np.concatenate([pool[rpi[i], : lens[i]] for i in range(batch)])
    got = np.full(indptr[-1] + 5, -77, dtype=np.int32)  # 5 more: never written
    create_flashinfer_kv_indices_triton[(batch,)](
        pool, rpi, lens, indptr, None, got, pool.shape[1]
    )
    np.testing.assert_array_equal(got[: indptr[-1]], want)
    assert (got[indptr[-1]:] == -77).all()

    fused_ptr = np.full(batch + 3, -9, dtype=np.int32)
    fused = np.full(indptr[-1] + 5, -77, dtype=np.int32)
    create_kv_indptr_and_indices[(batch, 4)](pool, rpi, lens, fused_ptr, None, fused, pool.shape[1])
    np.testing.assert_array_equal(fused_ptr[: batch + 1], indptr)
    assert (fused_ptr[batch + 1:] == -9).all()
    np.testing.assert_array_equal(fused, got)


def test_start_and_longer_buffers(pool):
    # graph buffers longer than B: rows past grid[0] are not read
    rpi = np.array([5, 9, 0, 0], dtype=np.int64)
    lens = np.array([3, 2, 1, 1], dtype=np.int64)
    start = np.array([10, 4000, 0, 0], dtype=np.int64)
    indptr = np.array([0, 3, 5, 0, 0], dtype=np.int32)
    got = np.full(8, -77, dtype=np.int32)
    create_flashinfer_kv_indices_triton[(2,)](pool, rpi, lens, indptr, start, got, MAX_CONTEXT)
    want = [pool[5, 10], pool[5, 11], pool[5, 12], pool[9, 4000], pool[9, 4001]]
    assert got[:5].tolist() == want and (got[5:] == -77).all()


def page_table_by_definition(pool, rpi, lens, start, width, ps):
    out = np.full((len(rpi), width), -1, dtype=np.int32)
    for b, (r, n) in enumerate(zip(rpi, lens)):
        s = 0 if start is None else start[b]
        for p in range(min(-(-max(n, 0) // ps), width)):
            out[b, p] = pool[r, s + p * ps] // ps
    return out


@pytest.mark.parametrize("ps", [32, 64, 128])
def test_flashmla_page_table(pool, ps):
    rng = np.random.default_rng(ps)
    batch = 9
    rpi = rng.choice(MAX_BATCH, size=batch, replace=False).astype(np.int64)
    lens = rng.integers(0, MAX_CONTEXT, size=batch).astype(np.int64)
    lens[0] = 0
    width = -(-MAX_CONTEXT // ps)
    table = np.full((batch + 2, width + 3), -1, dtype=np.int32)[:, :width]  # a row stride > width
    create_flashmla_kv_indices_triton[(batch,)](
        pool, rpi, lens, None, table, MAX_CONTEXT, table.strides[0] // 4, PAGED_SIZE=ps
    )
    np.testing.assert_array_equal(table[:batch],
                                  page_table_by_definition(pool, rpi, lens, None, width, ps))
    assert (table[batch:] == -1).all()


def test_flashmla_width_bounds_the_row(pool):
    rpi = np.array([1], dtype=np.int64)
    lens = np.array([64 * 5], dtype=np.int64)  # 5 pages, 3 columns
    table = np.full((2, 3), -1, dtype=np.int32)
    create_flashmla_kv_indices_triton[(1,)](pool, rpi, lens, None, table, MAX_CONTEXT, 3,
                                            PAGED_SIZE=64)
    assert table[0].tolist() == [pool[1, 0] // 64, pool[1, 64] // 64, pool[1, 128] // 64]
    assert (table[1] == -1).all()  # SGLang's kernel would spill into row 1


def test_pool_row_outside_gives_minus_one(pool):
    rpi = np.array([MAX_BATCH + 3], dtype=np.int64)
    lens = np.array([2], dtype=np.int64)
    indptr = np.array([0, 2], dtype=np.int32)
    got = np.full(2, 5, dtype=np.int32)
    create_flashinfer_kv_indices_triton[(1,)](pool, rpi, lens, indptr, None, got, MAX_CONTEXT)
    assert got.tolist() == [-1, -1]


def test_refused(pool):
    rpi = np.zeros(1, dtype=np.int64)
    lens = np.ones(1, dtype=np.int64)
    indptr = np.array([0, 1], dtype=np.int32)
    out = np.zeros(1, dtype=np.int32)
    with pytest.raises(NotImplementedError):
        create_flashinfer_kv_indices_triton[(1,)](pool, rpi, lens, indptr, None, out, MAX_CONTEXT,
                                                  ENTRY_PAGE_SIZE=4)
    with pytest.raises(NotImplementedError):
        create_flashinfer_kv_indices_triton[(1,)](pool, rpi, lens, indptr, None,
                                                  np.zeros(1, dtype=np.int64), MAX_CONTEXT)
    with pytest.raises(ValueError, match="req_to_token_ptr_stride"):
        create_flashinfer_kv_indices_triton[(1,)](pool, rpi, lens, indptr, None, out, 17)
    with pytest.raises(ValueError, match="kv_indptr"):
        create_flashinfer_kv_indices_triton[(2,)](pool, np.zeros(2, dtype=np.int64),
                                                  np.ones(2, dtype=np.int64), indptr, None, out,
                                                  MAX_CONTEXT)
    with pytest.raises(TypeError):
        create_flashinfer_kv_indices_triton(pool, rpi, lens, indptr, None, out, MAX_CONTEXT)
    assert out.tolist() == [0]


def test_exported():
    assert "create_flashinfer_kv_indices_triton" in attnmeta.__all__
    assert attnmeta.ErrorFlag.POOL_INDEX_OUT_OF_RANGE == 1024
    assert attnmeta.ErrorFlag.SCAN_OVERFLOW == 2048


def test_graph_padding_rows():
    # SGLang's CUDA-graph replay pads rows [raw_bs, bs) with pool row 0 (a
    # reserved row of zeros) and length 1 (FlashInfer's fill): each writes
    # one slot 0.
    pool = np.zeros((4, 16), dtype=np.int32)
    pool[2] = np.arange(100, 116)
    rpi = np.array([2, 0, 0], dtype=np.int64)
    lens = np.array([3, 1, 1], dtype=np.int64)
    indptr = np.full(8, -5, dtype=np.int32)
    got = np.full(10, -77, dtype=np.int32)
    create_kv_indptr_and_indices[(3,)](pool, rpi, lens, indptr, None, got, 16)
    assert indptr[:4].tolist() == [0, 3, 4, 5] and (indptr[4:] == -5).all()
    assert got[:5].tolist() == [100, 101, 102, 0, 0] and (got[5:] == -77).all()
