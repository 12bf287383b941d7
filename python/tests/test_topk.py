# SPDX-License-Identifier: Apache-2.0
"""The sparse top-k conversion (contract section 6) through the binding, NumPy
on the CPU backend, against a naive reference written here from the
contract: the engines' argument names and defaults, their test matrices,
the prefill workspace, DCP with compaction, the prepared plan, hostile data
and argument checks."""

import re

import numpy as np
import pytest

from conftest import CPU_CONFIGS

INT32_MAX = 2**31 - 1


def reference(topk, table, bs, req=None, qsl=None, R=None, stride_rows=None, W=1, k=0, I=1,
              prefill=None, starts=None, token_slot=None, compact=False):
    """(out, counts, flags) by the contract's steps, entry by entry."""
    T, K = topk.shape
    R = table.shape[0] if R is None else R
    stride_rows = bs if stride_rows is None else stride_rows
    out = np.full((T, K), -1, np.int64)
    counts = np.zeros(T, np.int64)
    flags = 0
    for t in range(T):
        if qsl is not None:
            actual = min(max(int(qsl[R]), 0), T)
            r = -1
            if t < actual and R > 0:
                r = next((i for i in range(R) if qsl[i + 1] > t), R - 1)
        else:
            r = int(req[t]) if 0 <= int(req[t]) < R else -1
        row = []
        for j in range(K):
            x = int(topk[t, j])
            v = -1
            if r < 0 or x < 0:
                pass
            elif prefill is not None and prefill[t] >= 0:  # the raw x: no DCP, no table bound
                p = int(prefill[t])
                if p >= len(starts):
                    flags |= 256
                else:
                    v = int(starts[p]) + x
            elif (x // I) % W == k:
                local = (x // (W * I)) * I + x % I
                blk, o = local // bs, local % bs
                if blk >= table.shape[1]:
                    flags |= 32
                else:
                    bid = int(table[r, blk])
                    if bid < 0:
                        flags |= 64
                    else:
                        v = bid * stride_rows + o
            if v != -1 and not 0 <= v <= INT32_MAX:
                flags |= 512
                v = -1
            row.append(v)
        n = sum(1 for v in row if v != -1)
        if token_slot is not None and token_slot[t] < 0:
            n = 0
        counts[t] = n
        if compact:
            kept = [v for v in row if v != -1][:n]
            out[t, : len(kept)] = kept
        else:
            out[t] = row
    return out, counts, flags


def engine_inputs(bs, K, T=8, R=4, blocks=10, seed=0):
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 1000, size=(R, blocks)).astype(np.int32)
    req = np.repeat(np.arange(R, dtype=np.int32), T // R)
    topk = rng.integers(0, bs * blocks, size=(T, K)).astype(np.int32)
    for t in range(T):  # a run of -1 and a run past the table
        a, b = rng.integers(0, K - K // 8, size=2)
        topk[t, a : a + K // 8] = -1
        topk[t, b : b + K // 8] = bs * blocks + rng.integers(0, 3 * bs, size=K // 8)
    return req, table, topk


@pytest.mark.parametrize("K", [128, 256, 512])
@pytest.mark.parametrize("bs", [16, 64, 128])
def test_engine_matrix(attnmeta, bs, K):
    req, table, topk = engine_inputs(bs, K, seed=bs * K)
    out = attnmeta.convert_req_index_to_global_index(req, table, topk, BLOCK_SIZE=bs, NUM_TOPK_TOKENS=K)
    want, counts, _ = reference(topk, table, bs, req=req)
    np.testing.assert_array_equal(out, want)
    out2, got_counts = attnmeta.convert_req_index_to_global_index(
        req, table, topk, BLOCK_SIZE=bs, NUM_TOPK_TOKENS=K, BLOCK_N=64, return_valid_counts=True)
    np.testing.assert_array_equal(out2, want)
    np.testing.assert_array_equal(got_counts, counts)
    # the engines' formula, written out for the valid entries
    x = topk.astype(np.int64)
    ok = (x >= 0) & (x < bs * table.shape[1])
    blk = np.where(ok, x // bs, 0)
    formula = table[req[:, None], blk].astype(np.int64) * bs + x % bs
    np.testing.assert_array_equal(np.where(ok, formula, -1), out)


def test_prefill_workspace(attnmeta):
    bs, K = 16, 128
    rng = np.random.default_rng(7)
    req = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3], np.int32)
    prefill = np.array([-1] * 6 + [0, 0, 0, 1, 1, 1], np.int32)
    starts = np.array([0, 100], np.int32)
    table = rng.integers(0, 500, size=(4, 10)).astype(np.int32)
    topk = rng.integers(-1, 160, size=(12, K)).astype(np.int32)
    out = attnmeta.convert_req_index_to_global_index(
        req, table, topk, BLOCK_SIZE=bs, NUM_TOPK_TOKENS=K, HAS_PREFILL_WORKSPACE=True,
        prefill_workspace_request_ids=prefill, prefill_workspace_starts=starts)
    want, _, _ = reference(topk, table, bs, req=req, prefill=prefill, starts=starts)
    np.testing.assert_array_equal(out, want)
    x = topk[9]
    np.testing.assert_array_equal(out[9], np.where(x >= 0, 100 + x, -1))


def test_prefill_past_the_table(attnmeta):
    """Workspace rows are addressed by the raw position: past the block table
    (2 blocks of 16 positions here) they still convert, decode rows do not."""
    req = np.array([0, 0, 1], np.int32)
    prefill = np.array([0, 1, -1], np.int32)
    starts = np.array([0, 100], np.int32)
    table = np.array([[3, 4], [5, 6]], np.int32)
    topk = np.array([[128, 31, 32, -1], [200, 0, 31, 32], [128, 0, 31, 32]], np.int32)
    out, counts = attnmeta.convert_req_index_to_global_index(
        req, table, topk, BLOCK_SIZE=16, NUM_TOPK_TOKENS=4, HAS_PREFILL_WORKSPACE=True,
        prefill_workspace_request_ids=prefill, prefill_workspace_starts=starts,
        return_valid_counts=True)
    np.testing.assert_array_equal(out, [[128, 31, 32, -1], [300, 100, 131, 132],
                                        [-1, 5 * 16, 6 * 16 + 15, -1]])
    np.testing.assert_array_equal(counts, [3, 4, 2])
    want, want_counts, _ = reference(topk, table, 16, req=req, prefill=prefill, starts=starts)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(counts, want_counts)


@pytest.mark.parametrize("rank", [0, 1])
def test_prefill_ignores_dcp_ownership(attnmeta, rank):
    """With DCP a prefill token keeps every position, whichever rank owns it;
    decode tokens keep only this rank's."""
    req = np.array([0, 1], np.int32)
    prefill = np.array([0, -1], np.int32)
    starts = np.array([10], np.int32)
    table = np.array([[7, 8], [9, 2]], np.int32)
    topk = np.array([[0, 1, 2, 3, 64, 65], [0, 1, 2, 3, 64, 65]], np.int32)
    plan_out = np.full((2, 6), -9, np.int32)
    counts = np.full(2, -9, np.int32)
    attnmeta.TopkPlan(topk, table, plan_out, req_id=req, valid_counts=counts, block_size=4,
                      prefill_workspace_request_ids=prefill, prefill_workspace_starts=starts,
                      dcp_size=2, dcp_rank=rank).convert()
    np.testing.assert_array_equal(plan_out[0], [10, 11, 12, 13, 74, 75])
    want, want_counts, _ = reference(topk, table, 4, req=req, W=2, k=rank, prefill=prefill,
                                     starts=starts)
    np.testing.assert_array_equal(plan_out, want)
    np.testing.assert_array_equal(counts, want_counts)


def test_dcp_example(attnmeta):
    topk = np.full((1, 128), -1, np.int32)
    topk[0, :8] = np.arange(8)
    out, counts = attnmeta.filter_and_convert_dcp_index(
        np.zeros(1, np.int32), np.array([[10]], np.int32), topk, 2, 0, BLOCK_SIZE=4,
        NUM_TOPK_TOKENS=128, return_valid_counts=True)
    assert counts.tolist() == [4]
    assert out[0, :4].tolist() == [40, 41, 42, 43]
    assert (out[0, 4:] == -1).all()


@pytest.mark.parametrize("I", [1, 2])
@pytest.mark.parametrize("rank", [0, 1])
def test_dcp_compacted(attnmeta, I, rank):
    bs, K, R = 16, 1024, 4
    rng = np.random.default_rng(I * 10 + rank)
    table = rng.integers(0, 1000, size=(R, 64)).astype(np.int32)
    req = np.repeat(np.arange(R, dtype=np.int32), 2)
    topk = rng.integers(0, bs * 64 * 2, size=(8, K)).astype(np.int32)
    topk[:, ::37] = -1
    out, counts = attnmeta.filter_and_convert_dcp_index(
        req, table, topk, 2, rank, cp_kv_cache_interleave_size=I, BLOCK_SIZE=bs,
        NUM_TOPK_TOKENS=K, return_valid_counts=True)
    want, want_counts, _ = reference(topk, table, bs, req=req, W=2, k=rank, I=I, compact=True)
    np.testing.assert_array_equal(counts, want_counts)
    np.testing.assert_array_equal(out, want)
    assert (counts > 300).all()  # hundreds valid a row


@pytest.mark.parametrize("config", list(CPU_CONFIGS))
def test_plan_qsl_token_slot_hostile(attnmeta, cpu_contexts, config):
    bs, K, T, R = 16, 96, 9, 3
    rng = np.random.default_rng(3)
    qsl = np.array([0, 2, 5, 7], np.int32)  # tokens 7, 8 are padding
    table = rng.integers(0, 1000, size=(R, 6)).astype(np.int32)
    table[1, 2] = -3                  # a negative block id
    table[2, 0] = 2**29               # x 4 rows past INT32_MAX
    topk = rng.integers(-2, bs * 7, size=(T, K)).astype(np.int32)
    slot = np.arange(T, dtype=np.int64)
    slot[3] = -1
    out = np.full((T + 1, K + 3), 77, np.int32)     # a row and columns the plan never writes
    counts = np.full(T + 1, 77, np.int32)
    err = np.zeros(1, np.int32)
    plan = attnmeta.TopkPlan(topk, table, out, query_start_loc=qsl, valid_counts=counts,
                             compact=True, block_size=bs, stride_rows=4, token_slot=slot,
                             error_word=err, context=cpu_contexts[config])
    plan.convert(T)
    want, want_counts, flags = reference(topk, table, bs, qsl=qsl, stride_rows=4,
                                         token_slot=slot, compact=True)
    np.testing.assert_array_equal(out[:T, :K], want)
    np.testing.assert_array_equal(counts[:T], want_counts)
    assert (out[T] == 77).all() and (out[:, K:] == 77).all() and counts[T] == 77
    assert err[0] == flags and flags & 32 and flags & 64 and flags & 512
    assert attnmeta.ErrorFlag(int(err[0])) & attnmeta.ErrorFlag.SLOT_OUT_OF_RANGE


def test_bad_req_id_and_workspace(attnmeta):
    bs, K = 16, 64
    req = np.array([0, -1, 4, 2**31 - 1, 1, 3], np.int32)
    prefill = np.array([0, -1, -1, 0, 5, -9], np.int32)
    starts = np.array([2**31 - 50], np.int32)
    table = np.arange(40, dtype=np.int32).reshape(4, 10)
    topk = np.tile(np.arange(0, 4 * K, 4, dtype=np.int32) % 160, (6, 1))
    out = np.zeros((6, K), np.int32)
    counts = np.zeros(6, np.int32)
    err = np.zeros(1, np.int32)
    attnmeta.TopkPlan(topk, table, out, req_id=req, valid_counts=counts, block_size=bs,
                      prefill_workspace_request_ids=prefill, prefill_workspace_starts=starts,
                      error_word=err)()
    want, want_counts, flags = reference(topk, table, bs, req=req, prefill=prefill, starts=starts)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(counts, want_counts)
    assert (out[1] == -1).all() and (out[2] == -1).all() and (out[3] == -1).all()
    assert err[0] == flags == 256 | 512  # token 4's workspace index, token 0's sums
    assert "workspace" in attnmeta.describe_error_flags(256)


def test_argument_errors(attnmeta):
    req, table, topk = engine_inputs(16, 128)
    with pytest.raises(ValueError, match="NUM_TOPK_TOKENS"):
        attnmeta.convert_req_index_to_global_index(req, table, topk, BLOCK_SIZE=16)
    out = np.zeros((8, 128), np.int32)
    with pytest.raises(ValueError, match="exactly one"):
        attnmeta.TopkPlan(topk, table, out)
    with pytest.raises(ValueError, match="compact needs"):
        attnmeta.TopkPlan(topk, table, out, req_id=req, compact=True)
    with pytest.raises(ValueError, match="fewer than"):
        attnmeta.TopkPlan(topk, table, out[:, :100], req_id=req)
    with pytest.raises(ValueError, match="dcp_rank"):
        attnmeta.TopkPlan(topk, table, out, req_id=req, dcp_size=2, dcp_rank=2)
    with pytest.raises(TypeError):
        attnmeta.TopkPlan(topk.astype(np.int64), table, out, req_id=req)
    plan = attnmeta.TopkPlan(topk, table, out, req_id=req[:4])
    with pytest.raises(ValueError, match="num_tokens"):
        plan.convert(8)
    plan.convert(4)
    plan.convert(0)


def test_empty_inputs(attnmeta):
    """T = 0 is valid input (NumPy gives (0, K) arrays the strides (0, 0)):
    empty results; an empty block table with T > 0 gives all -1."""
    topk = np.empty((0, 8), np.int32)
    assert topk.strides == (0, 0)
    req = np.empty(0, np.int32)
    table = np.zeros((2, 4), np.int32)
    out = attnmeta.convert_req_index_to_global_index(req, table, topk, BLOCK_SIZE=16,
                                                     NUM_TOPK_TOKENS=8)
    assert out.shape == (0, 8)
    out, counts = attnmeta.convert_req_index_to_global_index(
        req, table, topk, BLOCK_SIZE=16, NUM_TOPK_TOKENS=8, return_valid_counts=True)
    assert out.shape == (0, 8) and counts.shape == (0,)
    out, counts = attnmeta.filter_and_convert_dcp_index(req, table, topk, 2, 1, BLOCK_SIZE=16,
                                                        NUM_TOPK_TOKENS=8,
                                                        return_valid_counts=True)
    assert out.shape == (0, 8) and counts.shape == (0,)
    # no requests: every entry -1, every count 0
    empty_table = np.empty((0, 4), np.int32)
    rows = np.arange(16, dtype=np.int32).reshape(2, 8)
    out, counts = attnmeta.filter_and_convert_dcp_index(np.zeros(2, np.int32), empty_table, rows,
                                                        2, 0, BLOCK_SIZE=16, NUM_TOPK_TOKENS=8,
                                                        return_valid_counts=True)
    assert (out == -1).all() and (counts == 0).all()


def test_persistent_buffers_and_block_stride(attnmeta):
    """The engines' out=, valid_counts_out= and BLOCK_STRIDE_ROWS=: the
    caller's buffers are filled and returned, slots step by the stride."""
    req, table, topk = engine_inputs(16, 128, seed=3)
    T, K = topk.shape
    out = np.full((T + 2, K), -99, np.int32)
    counts = np.full(T + 1, -99, np.int32)
    got, got_counts = attnmeta.convert_req_index_to_global_index(
        req, table, topk, BLOCK_SIZE=16, NUM_TOPK_TOKENS=K, return_valid_counts=True,
        out=out[:T], valid_counts_out=counts[:T], BLOCK_STRIDE_ROWS=48)
    assert np.shares_memory(got, out) and np.shares_memory(got_counts, counts)
    want, want_counts, _ = reference(topk, table, 16, req=req, stride_rows=48)
    np.testing.assert_array_equal(out[:T], want)
    np.testing.assert_array_equal(counts[:T], want_counts)
    assert (out[T:] == -99).all() and counts[T] == -99
    x = topk.astype(np.int64)
    ok = (x >= 0) & (x < 16 * table.shape[1])
    formula = table[req[:, None], np.where(ok, x // 16, 0)].astype(np.int64) * 48 + x % 16
    np.testing.assert_array_equal(np.where(ok, formula, -1), want)
    # without return_valid_counts the counts buffer is not used, as the engines do
    counts[:] = -99
    got = attnmeta.convert_req_index_to_global_index(
        req, table, topk, BLOCK_SIZE=16, NUM_TOPK_TOKENS=K, out=out[:T],
        valid_counts_out=counts[:T])
    assert np.shares_memory(got, out) and (counts == -99).all()


@pytest.mark.parametrize("rows", [5, 9])
def test_req_id_must_cover_the_same_tokens(attnmeta, rows):
    req, table, topk = engine_inputs(16, 128, seed=4)
    req = np.resize(req, rows).astype(np.int32)
    with pytest.raises(ValueError, match="must cover the same tokens"):
        attnmeta.convert_req_index_to_global_index(req, table, topk, BLOCK_SIZE=16,
                                                   NUM_TOPK_TOKENS=128)
    with pytest.raises(ValueError, match="must cover the same tokens"):
        attnmeta.filter_and_convert_dcp_index(req, table, topk, 2, 0, BLOCK_SIZE=16,
                                              NUM_TOPK_TOKENS=128)


@pytest.mark.parametrize("rank", [0, 1])
def test_flag_32_only_from_the_owner(attnmeta, rank):
    """W = 2: position 9 is rank 1's, its rank-local block (1) is past a
    one-block table; rank 0 passes it over without a flag."""
    word, out = np.zeros(1, np.int32), np.full((1, 4), -9, np.int32)
    attnmeta.TopkPlan(np.array([[9, -1, 1, -1]], np.int32), np.array([[3]], np.int32), out,
                      req_id=np.zeros(1, np.int32), block_size=4, dcp_size=2, dcp_rank=rank,
                      error_word=word).convert()
    assert out.tolist() == [[-1, -1, 12 if rank == 1 else -1, -1]]
    assert word[0] == (32 if rank == 1 else 0)


def test_query_start_loc_raises_no_boundary_flags(attnmeta):
    """The conversion leaves flags 1, 2 and 4 to the step: boundaries not
    well formed raise none of them; padding past clamp(qsl[R], 0, T) is -1."""
    topk = np.tile(np.arange(8, dtype=np.int32), (4, 1))
    table = np.arange(8, dtype=np.int32).reshape(2, 4)
    for qsl in ([1, 3, 2], [0, 2, 99], [0, 3, -5]):
        word, out = np.zeros(1, np.int32), np.full((4, 8), -9, np.int32)
        counts = np.full(4, -9, np.int32)
        attnmeta.TopkPlan(topk, table, out, query_start_loc=np.array(qsl, np.int32),
                          valid_counts=counts, block_size=4, error_word=word).convert()
        assert word[0] & 7 == 0, (qsl, word[0])
        assert (word[0] & ~(32 | 64 | 256 | 512)) == 0
        assert (out >= -1).all() and (out != -9).all()
        actual = min(max(qsl[-1], 0), 4)
        assert (out[actual:] == -1).all() and (counts[actual:] == 0).all()


@pytest.mark.parametrize(
    "change, text",
    [
        (dict(BLOCK_SIZE=0), "BLOCK_SIZE (0) must be >= 1"),
        (dict(BLOCK_STRIDE_ROWS=0), "BLOCK_STRIDE_ROWS (0) must be >= 1"),
        (dict(return_valid_counts=True, valid_counts_out=np.zeros(8, np.int64)),
         "valid_counts_out must be"),
        (dict(out=np.zeros((8, 64), np.int64)), "out must be"),
    ],
    ids=lambda v: "+".join(v) if isinstance(v, dict) else str(v)[:24],
)
def test_engine_function_errors_name_the_callers_arguments(attnmeta, change, text):
    req, table, topk = engine_inputs(16, 64, seed=5)
    with pytest.raises((ValueError, TypeError)) as info:
        attnmeta.convert_req_index_to_global_index(req, table, topk, **dict(
            dict(BLOCK_SIZE=16, NUM_TOPK_TOKENS=64), **change))
    assert text in str(info.value)
    assert "stride_rows" not in str(info.value) and "block_size" not in str(info.value)


# ---- DCP peer slots to one owner's local slots (contract section 6b) ----

def ref_owner_local(peer, owner, segment):
    start, stop = owner * segment, (owner + 1) * segment
    out = np.full(peer.shape, -1, np.int64)
    counts = np.zeros(peer.shape[0], np.int64)
    for t in range(peer.shape[0]):
        kept = [int(s) - start for s in peer[t] if start <= s < stop]
        out[t, : len(kept)] = kept
        counts[t] = len(kept)
    return out, counts


def test_owner_filter_example(attnmeta):
    """Worked by hand: W = 3, 2 blocks of 4 slots a peer (S = 8), owner 2
    keeps [16, 24): the row's 16, 23, 17, 20 become 0, 7, 1, 4, in order."""
    peer = np.array([[16, 3, 23, -1, 17, 8, 24, 20, 15]], np.int32)
    local, counts = attnmeta._topk.filter_peer_slots_to_owner_local(
        peer, owner_rank=2, dcp_world_size=3, blocks_per_peer=2, block_size=4)
    assert local.tolist() == [[0, 7, 1, 4, -1, -1, -1, -1, -1]]
    assert counts.tolist() == [4]


@pytest.mark.parametrize("owner", [0, 1, 3])
@pytest.mark.parametrize("K", [1, 7, 128, 513])
def test_owner_filter_matches_reference(attnmeta, owner, K):
    W, peer_blocks, bs = 4, 16, 64
    segment = peer_blocks * bs
    rng = np.random.default_rng(owner * 1000 + K)
    peer = rng.integers(-3, W * segment + 50, size=(9, K)).astype(np.int32)
    peer[2] = -1  # a row with nothing
    padded = np.full((9, K + 3), 7, np.int32)[:, :K]  # rows with a row stride past K
    padded[:] = peer
    for slots in (peer, padded):
        local, counts = attnmeta._topk.filter_peer_slots_to_owner_local(
            slots, owner_rank=owner, dcp_world_size=W, blocks_per_peer=peer_blocks,
            block_size=bs)
        want, want_counts = ref_owner_local(peer, owner, segment)
        np.testing.assert_array_equal(local, want)
        np.testing.assert_array_equal(counts, want_counts)
        assert local.dtype == np.int32 and counts.dtype == np.int32


def test_owner_filter_empty_and_errors(attnmeta):
    f = attnmeta._topk.filter_peer_slots_to_owner_local
    local, counts = f(np.empty((0, 4), np.int32), owner_rank=0, dcp_world_size=2,
                      blocks_per_peer=4, block_size=4)
    assert local.shape == (0, 4) and counts.shape == (0,)
    good = dict(owner_rank=0, dcp_world_size=2, blocks_per_peer=4, block_size=4)
    slots = np.zeros((2, 4), np.int32)
    for change, text in [
        (dict(dcp_world_size=1), "dcp_world_size > 1"),
        (dict(owner_rank=2), "owner_rank (2)"),
        (dict(blocks_per_peer=0), "blocks_per_peer (0)"),
        (dict(block_size=0), "block_size (0)"),
        (dict(blocks_per_peer=2**20, block_size=2**11), "do not fit in int32"),
    ]:
        with pytest.raises(ValueError, match=re.escape(text)):
            f(slots, **dict(good, **change))
    with pytest.raises(ValueError, match="2-D"):
        f(np.zeros(4, np.int32), **good)
    with pytest.raises(ValueError, match="at least one column"):
        f(np.zeros((2, 0), np.int32), **good)
    with pytest.raises(TypeError, match="peer_slots must be"):
        f(np.zeros((2, 4), np.int64), **good)


@pytest.mark.parametrize("counted", [False, True])
def test_plan_early_start_same_results(attnmeta, counted):
    """TopkPlan(early_start=True) sets ATTNMETA_LAUNCH_EARLY_START, which
    changes how the kernel is launched, never what it writes."""
    req, table, topk = engine_inputs(64, 512, seed=11)
    T, K = topk.shape
    out = np.full((T, K), -99, np.int32)
    counts = np.full(T, -99, np.int32)
    plan = attnmeta.TopkPlan(topk, table, out, req_id=req, block_size=64,
                             valid_counts=counts if counted else None, early_start=True)
    assert plan._op.launch_flags == 1
    plan.convert()
    want, want_counts, _ = reference(topk, table, 64, req=req)
    np.testing.assert_array_equal(out, want)
    if counted:
        np.testing.assert_array_equal(counts, want_counts)
    else:
        assert (counts == -99).all()
