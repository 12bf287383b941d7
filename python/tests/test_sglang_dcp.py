# SPDX-License-Identifier: Apache-2.0
"""SGLang's DCP index kernels (create_triton_kv_indices_for_dcp_triton,
create_mla_kv_page_table_for_dcp; docs/contract.md section 15): through
the stand-in's backends (sglang_standin_dcp.py) the routed kernels give
what SGLang's give, bit for bit, into the same buffers, in one attnmeta
launch each and none of SGLang's. SGLang's own DCP tests re-expressed (an
arange pool of 2 x 16, lengths 7 and 6 from columns 1 and 2, world 2, each
rank; the pool round trip of sparse pair-aligned virtual slots; the MLA
page table), random batches over worlds 2 to 8 and every rank, the
drop-ins called directly, their refusals, and SGLang's kernel taking the
int64 kv_indices attnmeta does not build."""

import numpy as np
import pytest

import sglang_standin as standin
import sglang_standin_dcp as dcp
import test_sglang_integration as integration
from attnmeta import create_mla_kv_page_table_for_dcp, create_triton_kv_indices_for_dcp_triton

KINDS = integration.KINDS
SENTINEL = -7


@pytest.fixture(scope="module")
def sglang_mod():
    from attnmeta.integrations import sglang

    return sglang


def _routed_same(monkeypatch, sglang_mod, xp, run, kernel, label):
    theirs, mine, their_launches, my_launches, patch = integration._both(
        monkeypatch, sglang_mod, xp, run)
    integration._assert_same(theirs, mine)
    assert their_launches == {kernel: 1}
    assert not my_launches
    assert patch.launches[label] == 1
    assert not patch.fallbacks.get(label)
    return mine


def _slot_run(xp, pool, rpi, lens, start, world, rank, index_dtype=np.int32):
    bs = len(lens)

    def run(mods):
        kv_indptr = xp.zeros(bs + 4, np.int32)
        kv_indices = xp.full(int(pool.shape[1]) * bs + 8, SENTINEL, index_dtype)
        dcp_lens = mods[dcp.FLASHINFER].dcp_decode_indices(
            pool, xp.array(rpi, np.int64), xp.array(lens, np.int64), bs, kv_indptr, kv_indices,
            None if start is None else xp.array(start, np.int64), world, rank)
        return kv_indptr, kv_indices, dcp_lens

    return run


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("rank", [0, 1])
def test_sglang_triton_dcp_case(sglang_mod, monkeypatch, kind, rank):
    """SGLang's test: arange pool (2, 16), lens [7, 6], start [1, 2], W = 2."""
    xp = KINDS[kind]
    pool = xp.array(np.arange(32, dtype=np.int32).reshape(2, 16), np.int32)
    run = _slot_run(xp, pool, [0, 1], [7, 6], [1, 2], 2, rank)
    indptr, indices, lens = _routed_same(monkeypatch, sglang_mod, xp, run,
                                         "create_triton_kv_indices_for_dcp_triton",
                                         "dcp_kv_indices")
    expected = []
    for row, start, n in zip([0, 1], [1, 2], lens.tolist()):
        first = start + (rank - start) % 2  # SGLang's test's own formula
        expected += [(row * 16 + first + j * 2) // 2 for j in range(n)]
    assert indices[:len(expected)].tolist() == expected
    assert (indices[len(expected):] == SENTINEL).all()
    assert indptr[:3].tolist() == [0, lens[0], lens[0] + lens[1]]


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("rank", [0, 1])
def test_sglang_round_trip_case(sglang_mod, monkeypatch, kind, rank):
    """SGLang's layout round trip: one request whose positions live at
    sparse pair-aligned virtual slots; the rank reads back slot // 2."""
    xp = KINDS[kind]
    locs = [4, 5, 10, 11, 200, 201, 250, 251, 126, 127, 60, 61]
    pool = xp.array(np.array([locs], dtype=np.int32), np.int32)
    run = _slot_run(xp, pool, [0], [12], None, 2, rank)
    _, indices, _ = _routed_same(monkeypatch, sglang_mod, xp, run,
                                 "create_triton_kv_indices_for_dcp_triton", "dcp_kv_indices")
    assert indices[:6].tolist() == [v // 2 for v in locs[rank::2]]


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("world", [2, 3, 4, 8])
def test_random_batches(sglang_mod, monkeypatch, kind, world):
    xp = KINDS[kind]
    rng = np.random.default_rng(world)
    host = rng.integers(0, 1 << 24, size=(12, 300), dtype=np.int32)
    pool = xp.array(host, np.int32)
    bs = 9
    rpi = rng.choice(12, size=bs, replace=False).tolist()
    start = rng.integers(0, 40, size=bs)
    lens = [int(rng.integers(0, 300 - s)) for s in start]
    for rank in range(world):
        run = _slot_run(xp, pool, rpi, lens, start.tolist(), world, rank)
        _routed_same(monkeypatch, sglang_mod, xp, run,
                     "create_triton_kv_indices_for_dcp_triton", "dcp_kv_indices")


def _page_run(xp, pool, rpi, lens, page_size, world, rank, width):
    bs = len(lens)

    def run(mods):
        table = xp.full((bs + 1, width), SENTINEL, np.int32)
        local = mods[dcp.TRTLLM_MLA].dcp_block_table(
            pool, xp.array(rpi, np.int64), xp.array(lens, np.int64), bs, table, page_size,
            world, rank)
        return table, local

    return run


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("page_size,world", [(4, 4), (64, 2), (32, 8)])
def test_mla_page_table(sglang_mod, monkeypatch, kind, page_size, world):
    xp = KINDS[kind]
    rng = np.random.default_rng(page_size + world)
    cols = 2048
    host = np.arange(6 * cols, dtype=np.int32).reshape(6, cols)
    pool = xp.array(host, np.int32)
    lens = [1, 257, 2048, 1000, 0]
    rpi = rng.choice(6, size=len(lens), replace=False).tolist()
    width = -(-cols // world // page_size)
    for rank in range(world):
        run = _page_run(xp, pool, rpi, lens, page_size, world, rank, width)
        table, local = _routed_same(monkeypatch, sglang_mod, xp, run,
                                    "create_mla_kv_page_table_for_dcp", "dcp_mla_page_table")
        for b, n in enumerate(local.tolist()):
            pages = -(-n // page_size)
            want = [host[rpi[b], rank + p * page_size * world] // world // page_size
                    for p in range(pages)]
            assert table[b, :pages].tolist() == want
            assert (table[b, pages:] == SENTINEL).all()
        assert (table[len(lens)] == SENTINEL).all()


def test_dropin_interleave_one_worked_example():
    pool = np.arange(32, dtype=np.int32).reshape(2, 16)
    indices = np.full(8, SENTINEL, np.int32)
    create_triton_kv_indices_for_dcp_triton[(2,)](
        pool, np.array([0, 1]), np.array([3, 3]), np.array([0, 3, 6], np.int64),
        np.array([1, 2]), indices, 16, 2, 0)
    assert indices.tolist() == [1, 2, 3, 9, 10, 11, SENTINEL, SENTINEL]
    table = np.full((1, 4), SENTINEL, np.int32)
    create_mla_kv_page_table_for_dcp[(1, 1)](
        pool, np.array([1]), np.array([5]), table, 16, 4, PHYSICAL_PAGE_SIZE=2, DCP_SIZE=2,
        DCP_RANK=1, PAGES_PER_BLOCK=32)
    # columns 1, 5, 9 hold 17, 21, 25: // 2 // 2 = 4, 5, 6
    assert table.tolist() == [[4, 5, 6, SENTINEL]]


def test_dropin_hostile_rows_and_entries():
    pool = np.arange(32, dtype=np.int32).reshape(2, 16)
    pool[1, 4] = -1
    indices = np.full(6, SENTINEL, np.int32)
    create_triton_kv_indices_for_dcp_triton[(2,)](
        pool, np.array([7, 1]), np.array([2, 3]), np.array([0, 2, 5], np.int32), None,
        indices, 16, 2, 0)
    # pool row 7 of 2: -1 entries; row 1 reads columns 0 2 4, 4 holding -1: -1 (SGLang: 0)
    assert indices.tolist() == [-1, -1, 8, 9, -1, SENTINEL]


def test_dropin_refusals():
    pool = np.arange(32, dtype=np.int32).reshape(2, 16)
    args = [pool, np.array([0]), np.array([2]), np.array([0, 2], np.int32), None,
            np.full(4, SENTINEL, np.int32), 16]
    with pytest.raises(ValueError, match="dcp_rank"):
        create_triton_kv_indices_for_dcp_triton[(1,)](*args, 2, 2)
    with pytest.raises(ValueError, match="dcp_rank"):
        create_triton_kv_indices_for_dcp_triton[(1,)](*args, 2, -1)
    wide = list(args)
    wide[5] = np.full(4, SENTINEL, np.int64)
    with pytest.raises(NotImplementedError, match="int64 kv_indices"):
        create_triton_kv_indices_for_dcp_triton[(1,)](*wide, 2, 0)
    assert (args[5] == SENTINEL).all()
    table = np.full((1, 4), SENTINEL, np.int32)
    with pytest.raises(ValueError, match="PHYSICAL_PAGE_SIZE"):
        create_mla_kv_page_table_for_dcp[(1, 1)](pool, np.array([0]), np.array([5]), table, 16,
                                                 4, PHYSICAL_PAGE_SIZE=0, DCP_SIZE=2, DCP_RANK=0,
                                                 PAGES_PER_BLOCK=32)
    with pytest.raises(ValueError, match="block_table_stride"):
        create_mla_kv_page_table_for_dcp[(1, 1)](pool, np.array([0]), np.array([5]),
                                                 np.full((2, 4), 0, np.int32), 16, 5,
                                                 PHYSICAL_PAGE_SIZE=2, DCP_SIZE=2, DCP_RANK=0,
                                                 PAGES_PER_BLOCK=32)
    assert (table == SENTINEL).all()


@pytest.mark.parametrize("rank", [0, 1])
def test_sglang_runs_int64_kv_indices(sglang_mod, monkeypatch, rank):
    """SGLang's FlashInfer DCP path's int64 kv_indices: not built in
    attnmeta, so SGLang's kernel runs (the same answer, a fallback)."""
    xp = KINDS["numpy"]
    pool = np.arange(32, dtype=np.int32).reshape(2, 16)
    run = _slot_run(xp, pool, [0, 1], [7, 6], [1, 2], 2, rank, index_dtype=np.int64)
    theirs, mine, their_launches, my_launches, patch = integration._both(
        monkeypatch, sglang_mod, xp, run)
    integration._assert_same(theirs, mine)
    assert my_launches == {"create_triton_kv_indices_for_dcp_triton": 1}
    assert patch.fallbacks["dcp_kv_indices"] == 1
    assert "int64 kv_indices" in patch.fallback_reasons["dcp_kv_indices"]
