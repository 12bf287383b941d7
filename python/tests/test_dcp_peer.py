# SPDX-License-Identifier: Apache-2.0
"""vLLM's DCP peer views through the binding (contract sections 6c, 6d),
NumPy on the CPU backend, against naive references written here from the
contract: vLLM's examples, strided and shared (stride 0) gathered tables,
every local rank, hostile ids, persistent outputs, empty inputs and the
argument checks with vLLM's messages."""

import re

import numpy as np
import pytest

INT32_MAX = 2**31 - 1


def ref_table(g, rank, S):
    W, R, M = g.shape
    out = np.full((R, W * M), -1, np.int64)
    for r in range(R):
        for L in range(W * M):
            o, p = L % W, L // W
            b = int(g[o, r, p])
            v = ((o - rank) % W) * S + b
            if 0 <= b < S and v <= INT32_MAX:
                out[r, L] = v
    return out


def ref_slots(req, table, ti, W, S, I, bs):
    out = np.full(ti.shape, -1, np.int64)
    for t in range(ti.shape[0]):
        r = int(req[t])
        if not 0 <= r < table.shape[0]:
            continue
        for j in range(ti.shape[1]):
            x = int(ti[t, j])
            if x < 0:
                continue
            o = (x // I) % W
            local = (x // (W * I)) * I + x % I
            blk = local // bs
            if blk >= table.shape[1]:
                continue
            b = int(table[r, blk])
            if 0 <= b < S:
                out[t, j] = (o * S + b) * bs + local % bs
    return out, (out >= 0).sum(axis=1)


GATHERED = np.array([[[4, 8, -1], [12, 2, 7]], [[1, 5, -1], [10, -1, -1]],
                     [[3, 6, -1], [11, 6, 1]], [[9, 0, -1], [5, 9, -1]]], np.int32)


@pytest.mark.parametrize("rank", [0, 1, 3])
def test_rotated_table_vllm_example(attnmeta, rank):
    got = attnmeta.build_rotated_dcp_peer_block_table(
        GATHERED, local_rank=rank, peer_block_stride=16, cp_kv_cache_interleave_size=64,
        block_size=64, BLOCK_N=4)
    assert got.dtype == np.int32 and got.shape == (2, 12)
    np.testing.assert_array_equal(got, ref_table(GATHERED, rank, 16))
    if rank == 0:  # global logical-page order, not owner-major
        assert got[0].tolist() == [4, 17, 35, 57, 8, 21, 38, 48, -1, -1, -1, -1]
    assert (got[0, 8:] == -1).all()


def test_rotated_table_strides_and_fail_closed(attnmeta):
    storage = np.full((3, 2, 2, 8), -99, np.int32)
    g = storage[:, :, 1, 1::2]  # column stride 2: copied, as any other layout would be
    g[:] = [[[0, 7, -1, -1], [2, 3, 4, -1]], [[1, 8, -1, -1], [5, -1, 6, -1]],
            [[6, INT32_MAX, -1, -1], [7, 1, 0, -1]]]
    got = attnmeta.build_rotated_dcp_peer_block_table(
        g, local_rank=2, peer_block_stride=8, cp_kv_cache_interleave_size=32, block_size=32,
        BLOCK_N=8)
    np.testing.assert_array_equal(got, ref_table(g, 2, 8))
    assert got[0, 4] == -1 and got[0, 5] == -1  # id == stride, a very large id


@pytest.mark.parametrize("W,R,M,S", [(2, 5, 7, 50), (8, 3, 33, 300), (1, 4, 9, 30), (3, 2, 4, 2**30)])
def test_rotated_table_matches_reference(attnmeta, W, R, M, S):
    rng = np.random.default_rng(W * 100 + M)
    g = rng.integers(-2, min(S + 3, 10**6), size=(W, R, M)).astype(np.int32)
    g[0, 0, 0] = INT32_MAX
    interleaved = np.ascontiguousarray(g.transpose(1, 0, 2)).transpose(1, 0, 2)  # [R][W][M]
    shared = np.broadcast_to(g[:1], (W, R, M))  # vLLM's expand: rank stride 0
    for tables in (g, interleaved, shared):
        for rank in range(W):
            got = attnmeta.build_rotated_dcp_peer_block_table(
                tables, local_rank=rank, peer_block_stride=S, cp_kv_cache_interleave_size=16,
                block_size=16)
            np.testing.assert_array_equal(got, ref_table(tables, rank, S))


def test_peer_table_plan_persistent_and_flags(attnmeta):
    out = np.full((2, 15), 77, np.int32)  # wider than W * M: the pages past it are -1
    err = np.zeros(1, np.int32)
    plan = attnmeta.PeerTablePlan(GATHERED, out, local_rank=1, peer_block_stride=8, width=14,
                                  error_word=err)
    plan.build()
    want = np.full((2, 14), -1, np.int64)
    want[:, :12] = ref_table(GATHERED, 1, 8)
    np.testing.assert_array_equal(out[:, :14], want)
    assert (out[:, 14] == 77).all()
    assert err[0] == 64  # ids 8, 9, 10, 11, 12 lie past segments of 8


def test_rotated_table_empty_and_errors(attnmeta):
    f = attnmeta.build_rotated_dcp_peer_block_table
    good = dict(local_rank=0, peer_block_stride=8, cp_kv_cache_interleave_size=64, block_size=64)
    assert f(np.empty((2, 0, 3), np.int32), **good).shape == (0, 6)
    assert f(np.empty((2, 3, 0), np.int32), **good).shape == (3, 0)
    t = np.zeros((2, 1, 1), np.int32)
    with pytest.raises(TypeError, match="dtype int32"):
        f(np.zeros((2, 1, 1), np.int64), **good)
    for bad, change, text in [
        (np.zeros((2, 1), np.int32), {}, "must have shape"),
        (np.zeros((0, 1, 1), np.int32), {}, "at least one DCP owner"),
        (t, dict(local_rank=2), "local_rank must be"),
        (t, dict(peer_block_stride=0), "peer_block_stride must be positive"),
        (t, dict(peer_block_stride=2**63 - 1), "address space exceeds int64"),
        (t, dict(cp_kv_cache_interleave_size=32), "interleave_size == block_size"),
        (t, dict(BLOCK_N=7), "positive power of two"),
    ]:
        with pytest.raises(ValueError, match=re.escape(text)):
            f(bad, **dict(good, **change))


@pytest.mark.parametrize("interleave", [1, 2, 4])
def test_peer_slots_vllm_example(attnmeta, interleave):
    req = np.array([0, 1], np.int32)
    table = np.array([[3, 7, 9], [5, 1, 6]], np.int32)
    ti = np.full((2, 257), -1, np.int32)
    ti[0, :8] = [0, 1, 2, 3, 8, 9, 10, 11]
    ti[1, :8] = [4, 5, 6, 7, 12, 13, 14, 15]
    out, counts = attnmeta.convert_global_indices_to_dcp_peer_slots(
        req, table, ti, dcp_size=2, blocks_per_peer=16, cp_kv_cache_interleave_size=interleave,
        block_size=4, BLOCK_N=64, return_valid_counts=True)
    want, want_counts = ref_slots(req, table, ti, 2, 16, interleave, 4)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(counts, want_counts)
    assert out.dtype == np.int32 and (out[:, 8:] == -1).all()
    if interleave == 2:
        assert out[0, :8].tolist() == [12, 13, 76, 77, 28, 29, 92, 93]


def test_peer_slots_invalid_entries(attnmeta):
    req = np.array([0, 1, 2, -1], np.int32)
    table = np.array([[2, -1], [3, 8]], np.int32)
    ti = np.full((4, 128), -1, np.int32)
    ti[:, :2] = [[-1, 8], [0, 2], [0, 1], [0, 1]]
    out, counts = attnmeta.convert_global_indices_to_dcp_peer_slots(
        req, table, ti, dcp_size=1, blocks_per_peer=8, block_size=2, return_valid_counts=True)
    want = np.full_like(ti, -1)
    want[1, 0] = 6
    np.testing.assert_array_equal(out, want)
    assert counts.tolist() == [0, 1, 0, 0]


@pytest.mark.parametrize("W,I,bs,S", [(2, 2, 4, 16), (4, 64, 64, 900), (3, 1, 16, 700)])
def test_peer_slots_match_reference(attnmeta, W, I, bs, S):
    rng = np.random.default_rng(W * 7 + I)
    R, cols, T, K = 4, 10, 9, 130
    table = rng.integers(-2, S + 40, size=(R, cols)).astype(np.int32)
    req = rng.integers(-1, R + 1, size=T).astype(np.int32)
    ti = rng.integers(-3, W * cols * bs + 3 * bs, size=(T, K)).astype(np.int32)
    padded = np.full((T, K + 5), 5, np.int32)[:, :K]  # rows with a stride past K
    padded[:] = ti
    for rows in (ti, padded):
        out, counts = attnmeta.convert_global_indices_to_dcp_peer_slots(
            req, table, rows, dcp_size=W, blocks_per_peer=S, cp_kv_cache_interleave_size=I,
            block_size=bs, return_valid_counts=True)
        want, want_counts = ref_slots(req, table, ti, W, S, I, bs)
        np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(counts, want_counts)


def test_peer_slots_of_strided_inputs(attnmeta):
    """vLLM's kernel reads req_id, block_table and token_indices at any
    strides: every-other-element views give the slots of their values."""
    req = np.array([9, 0, 9, 1], np.int32)[1::2]
    table = np.array([[3, 99, 7, 99], [5, 99, 1, 99]], np.int32)[:, ::2]
    storage = np.full((2, 32), -1, np.int32)
    storage[0, :16:2] = [0, 1, 2, 3, 8, 9, 10, 11]
    storage[1, :16:2] = [4, 5, 6, 7, 12, 13, 14, 15]
    ti = storage[:, ::2]
    got, counts = attnmeta.convert_global_indices_to_dcp_peer_slots(
        req, table, ti, dcp_size=2, blocks_per_peer=16, cp_kv_cache_interleave_size=2,
        block_size=4, return_valid_counts=True)
    want, want_counts = ref_slots(req, table, ti, 2, 16, 2, 4)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(counts, want_counts)


def test_peer_slots_persistent_and_empty(attnmeta):
    req = np.array([0, 1], np.int32)
    table = np.array([[3, 7], [5, 1]], np.int32)
    ti = np.array([[0, 1, -1, -1], [4, 5, 6, -1]], np.int32)
    out = np.full_like(ti, -99)
    vc = np.full(2, 99, np.int32)
    got, counts = attnmeta.convert_global_indices_to_dcp_peer_slots(
        req, table, ti, dcp_size=2, blocks_per_peer=16, cp_kv_cache_interleave_size=2,
        block_size=4, BLOCK_N=4, return_valid_counts=True, out=out, valid_counts_out=vc)
    assert got is out and counts is vc
    assert vc.tolist() == [2, 3] and (out[ti < 0] == -1).all()
    assert attnmeta.convert_global_indices_to_dcp_peer_slots(req, table, ti, 2, 16,
                                                              block_size=4).shape == (2, 4)
    empty = np.empty((0, 4), np.int32)
    e_out, e_vc = np.empty_like(empty), np.empty(0, np.int32)
    got, counts = attnmeta.convert_global_indices_to_dcp_peer_slots(
        np.empty(0, np.int32), np.zeros((1, 1), np.int32), empty, dcp_size=4, blocks_per_peer=16,
        cp_kv_cache_interleave_size=64, block_size=64, return_valid_counts=True, out=e_out,
        valid_counts_out=e_vc)
    assert got is e_out and counts is e_vc


def test_peer_slots_errors(attnmeta):
    f = attnmeta.convert_global_indices_to_dcp_peer_slots
    good = dict(dcp_size=2, blocks_per_peer=4, cp_kv_cache_interleave_size=1, block_size=4)
    one = np.array([0], np.int32)
    tab = np.array([[0]], np.int32)
    ti = np.array([[0]], np.int32)
    for change, text in [
        (dict(dcp_size=0), "dcp_size must be positive"),
        (dict(blocks_per_peer=0), "blocks_per_peer must be positive"),
        (dict(cp_kv_cache_interleave_size=3), "must be greater than or equal to and divisible"),
        (dict(BLOCK_N=3), "BLOCK_N must be a positive power of two"),
        (dict(blocks_per_peer=2**20, block_size=2**11), "do not fit in int32"),
    ]:
        with pytest.raises(ValueError, match=re.escape(text)):
            f(one, tab, ti, **dict(good, **change))
    with pytest.raises(TypeError, match="req_id must have dtype int32"):
        f(one.astype(np.int64), tab, ti, **good)
    with pytest.raises(ValueError, match=re.escape("must have the same row count")):
        f(np.array([0, 0], np.int32), tab, ti, **good)
    with pytest.raises(ValueError, match="at least one row and one column"):
        f(one, np.zeros((1, 0), np.int32), ti, **good)
    with pytest.raises(ValueError, match="at least one column"):
        f(one, tab, np.zeros((1, 0), np.int32), **good)
    with pytest.raises(ValueError, match="out must match token_indices"):
        f(one, tab, ti, out=np.zeros((1, 2), np.int32), **good)
    with pytest.raises(ValueError, match="out must not alias"):
        f(one, tab, ti, out=ti, **good)
    with pytest.raises(ValueError, match="requires return_valid_counts=True"):
        f(one, tab, ti, valid_counts_out=np.zeros(1, np.int32), **good)
    with pytest.raises(ValueError, match="valid_counts_out must be"):
        f(one, tab, ti, return_valid_counts=True, valid_counts_out=np.zeros(2, np.int32), **good)


def test_topk_plan_blocks_per_peer(attnmeta):
    """TopkPlan's blocks_per_peer is the same conversion, compaction included."""
    req = np.array([0, 1], np.int32)
    table = np.array([[3, 7, 20], [5, 1, 6]], np.int32)
    ti = np.array([[0, 1, -1, 9, 2], [4, -1, 6, 7, 100]], np.int32)
    out = np.zeros_like(ti)
    counts = np.zeros(2, np.int32)
    attnmeta.TopkPlan(ti, table, out, req_id=req, valid_counts=counts, compact=True,
                      block_size=4, dcp_size=2, blocks_per_peer=16).convert()
    want, want_counts = ref_slots(req, table, ti, 2, 16, 1, 4)
    for t in range(2):
        kept = [int(v) for v in want[t] if v >= 0]
        assert out[t].tolist() == kept + [-1] * (5 - len(kept))
    np.testing.assert_array_equal(counts, want_counts)
    with pytest.raises(ValueError, match="blocks_per_peer"):
        attnmeta.TopkPlan(ti, table, out, req_id=req, block_size=4, blocks_per_peer=-1)
