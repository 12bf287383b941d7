# SPDX-License-Identifier: Apache-2.0
"""The DeepSeek-V3.2/V4 products (contract sections 5, 5a, 7, 8) through the
binding, NumPy on the CPU backend: the drop-ins and a whole DSV4 step plan
against a naive reference written here from the contract, poisoned
outputs, the contract's examples, and argument errors."""

import numpy as np
import pytest

from conftest import CPU_CONFIGS
from reference import req_of

POISON32 = 0x5A5A5A5A
POISON64 = 0x5A5A5A5A5A5A5A5A


# ---- naive reference (plain loops, Python integers) ----

def _tokens(qsl, seq, R, T):
    """(valid, r, qlen, pos) of every token."""
    actual = min(max(qsl[R], 0), T) if R > 0 else 0
    out = []
    for t in range(T):
        if t < actual:
            r = req_of(qsl, R, t)
            qlen = qsl[r + 1] - qsl[r]
            out.append((True, r, qlen, seq[r] - qlen + t - qsl[r]))
        else:
            out.append((False, 0, 0, 0))
    return out


def _mine(c, bs, W, k, I):
    return ((c % (bs * W)) // I) % W == k


def _place(table, r, bs, c, W=1, k=0, I=1):
    vb = bs * W
    blk, vo = c // vb, c % vb
    if blk >= len(table[r]) or not _mine(c, bs, W, k, I) or table[r][blk] < 0:
        return -1
    return table[r][blk] * bs + (vo // (W * I)) * I + vo % I


def ref_compressed(qsl, seq, R, T, C, table, bs, ratio, W=1, k=0, I=1):
    out = [-1] * C
    for t, (valid, r, _, pos) in enumerate(_tokens(qsl, seq, R, T)):
        if valid and pos >= 0 and (pos + 1) % ratio == 0:
            out[t] = _place(table, r, bs, pos // ratio, W, k, I)
    return out


def ref_swa(qsl, seq, R, T, C, table, bs, window, width, causal=True, slots=None):
    rows, lens = [], [0] * C
    for t, (valid, r, qlen, pos) in enumerate(_tokens(qsl, seq, R, T)):
        start = n = 0
        if slots is not None and slots[t] < 0:
            valid = False  # no KV slot of its own: seen as a padding token
        if valid and not causal:
            start = max(seq[r] - qlen - window, 0)
            n = min(max(seq[r] - start, 0), width)
        elif valid and pos >= 0:
            start = max(pos - window + 1, 0)
            n = pos + 1 - start
        row = []
        for j in range(width):
            q = start + j
            if j < n and q // bs < len(table[r]) and table[r][q // bs] >= 0:
                row.append(table[r][q // bs] * bs + q % bs)
            else:
                row.append(-1)
        rows.append(row)
        lens[t] = n
    return rows, lens


def ref_c128a(qsl, seq, R, T, C, table, bs, ratio, width, local=False, W=1, k=0, I=1):
    rows, lens = [], [0] * C
    for t, (valid, r, _, pos) in enumerate(_tokens(qsl, seq, R, T)):
        n = min((pos + 1) // ratio, width) if valid and pos >= 0 else 0
        if local:
            row = list(range(n))
        else:
            row = [_place(table, r, bs, c, W, k, I) for c in range(n) if _mine(c, bs, W, k, I)]
        lens[t] = len(row)
        rows.append(row + [-1] * (width - len(row)))
    return rows, lens


def ref_indexer_lens(qsl, seq, R, T, C, ratio, prefill=False, W=1, k=0, I=1):
    """Section 5a, counting each rank's KV tokens (or compressed keys)."""
    out = [0] * C
    for t, (valid, _, _, pos) in enumerate(_tokens(qsl, seq, R, T)):
        if not valid:
            continue
        L = max(pos + 1, 0)
        owned = lambda n: sum(1 for i in range(n) if (i // I) % W == k)
        out[t] = owned(L // ratio) if prefill else owned(L) // ratio
    return out


# ---- helpers ----

def _table(R, cols, base):
    return np.array([[base + 1000 * r + c for c in range(cols)] for r in range(R)], np.int32)


def _qsl(qlens):
    return np.concatenate([[0], np.cumsum(qlens)]).astype(np.int32)


SHAPES = [
    # (qlens, seq_lens, pad tokens)
    ([1, 1, 1, 1], [8192, 32768, 131072, 1000], 3),
    ([8, 8], [8192, 8191], 0),
    ([1, 3, 8, 1, 2], [5, 64, 200, 1, 130], 2),
    ([40], [280], 0),
    ([0, 2, 0, 5], [3, 300, 0, 7000], 4),
]


# ---- the drop-ins ----

@pytest.mark.parametrize("config", list(CPU_CONFIGS))
@pytest.mark.parametrize("ratio", [4, 128])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dcp", [(1, 0, 1), (2, 1, 1), (4, 3, 2)], ids=str)
def test_compressed_slot_mapping(attnmeta, cpu_contexts, config, ratio, shape, dcp):
    qlens, seq, pad = shape
    W, k, I = dcp
    R, T = len(qlens), sum(qlens) + pad
    bs = 256 // ratio
    table = _table(R, max(seq) // ratio // (bs * W) + 2, 7)
    qsl, seq_a = _qsl(qlens), np.array(seq, np.int32)
    out = np.full(T + 5, POISON64, np.int64)
    got = attnmeta.get_compressed_slot_mapping(T, qsl, seq_a, table, bs, ratio, out=out,
                                               dcp_world_size=W, dcp_rank=k,
                                               cp_kv_cache_interleave_size=I)
    assert got.shape == (T,)
    assert out.tolist() == ref_compressed(list(qsl), seq, R, T, T + 5, table.tolist(), bs, ratio,
                                          W, k, I)


def test_compressed_slot_mapping_examples(attnmeta):
    table = np.array([[5, 7]], np.int32)
    got = attnmeta.get_compressed_slot_mapping(8, np.array([0, 8], np.int32),
                                               np.array([260], np.int32), table, 64, 4)
    assert got.dtype == np.int64
    assert got.tolist() == [-1, -1, -1, 383, -1, -1, -1, 448]
    got = attnmeta.get_compressed_slot_mapping(40, np.array([0, 40], np.int32),
                                               np.array([280], np.int32), table, 64, 4)
    assert [v for v in got.tolist() if v >= 0] == [5 * 64 + i for i in range(60, 64)] + [
        7 * 64 + i for i in range(6)]


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("window", [8, 128])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_swa(attnmeta, causal, window, shape):
    qlens, seq, pad = shape
    R, T = len(qlens), sum(qlens) + pad
    width = window if causal else window + max(qlens)
    table = _table(R, max(seq) // 64 + 2, 3)
    qsl, seq_a = _qsl(qlens), np.array(seq, np.int32)
    rows = np.full((T + 2, 1, width), POISON32, np.int32)  # vLLM's [tokens, 1, width]
    lens = np.full(T + 4, POISON32, np.int32)
    attnmeta.compute_swa_indices_and_lens(rows, lens, window, qsl, seq_a, table, 64,
                                          num_tokens=T, causal=causal)
    want_rows, want_lens = ref_swa(list(qsl), seq, R, T, T + 4, table.tolist(), 64, window,
                                   width, causal)
    assert rows[:T, 0].tolist() == want_rows
    assert (rows[T:] == POISON32).all(), "wrote rows past num_tokens"
    assert lens.tolist() == want_lens


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("spelling", ["slot_mapping", "is_valid_token"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_swa_tokens_without_slots(attnmeta, causal, spelling, shape):
    """vLLM's SWA builder: a token whose slot_mapping entry is < 0 gets
    length 0 and a row of -1 (its is_valid_token is False), either mode."""
    qlens, seq, pad = shape
    R, T = len(qlens), sum(qlens) + pad
    window = 8
    width = window if causal else window + max(qlens)
    table = _table(R, max(seq) // 64 + 2, 3)
    qsl, seq_a = _qsl(qlens), np.array(seq, np.int32)
    slots = np.array([-1 if t % 3 == 1 else 64 * t + 5 for t in range(T)], np.int64)
    rows = np.full((T, 1, width), POISON32, np.int32)
    lens = np.full(T, POISON32, np.int32)
    given = dict(slot_mapping=slots) if spelling == "slot_mapping" else dict(
        is_valid_token=slots >= 0)
    attnmeta.compute_swa_indices_and_lens(rows, lens, window, qsl, seq_a, table, 64,
                                          causal=causal, **given)
    want_rows, want_lens = ref_swa(list(qsl), seq, R, T, T, table.tolist(), 64, window, width,
                                   causal, slots.tolist())
    assert rows[:, 0].tolist() == want_rows and lens.tolist() == want_lens


def test_swa_without_slots_example(attnmeta):
    """The contract's example: window 8, seq_lens [5], slots [65, -1, 67]
    give lengths 3 0 5, the middle row all -1."""
    qsl, seq = np.array([0, 3], np.int32), np.array([5], np.int32)
    table = np.array([[1]], np.int32)
    rows = np.full((3, 8), POISON32, np.int32)
    lens = np.full(3, POISON32, np.int32)
    attnmeta.compute_swa_indices_and_lens(rows, lens, 8, qsl, seq, table, 64,
                                          slot_mapping=np.array([65, -1, 67], np.int64))
    assert lens.tolist() == [3, 0, 5]
    assert rows[1].tolist() == [-1] * 8
    assert rows[2].tolist() == [64, 65, 66, 67, 68, -1, -1, -1]


def test_swa_slots_one_spelling(attnmeta):
    qsl, seq = np.array([0, 1], np.int32), np.array([5], np.int32)
    with pytest.raises(TypeError, match="not both"):
        attnmeta.compute_swa_indices_and_lens(
            np.zeros((1, 8), np.int32), np.zeros(1, np.int32), 8, qsl, seq,
            np.zeros((1, 1), np.int32), 64, slot_mapping=np.zeros(1, np.int64),
            is_valid_token=np.ones(1, bool))


@pytest.mark.parametrize("local", [False, True])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dcp", [(1, 0, 1), (2, 0, 2), (4, 1, 1)], ids=str)
def test_c128a(attnmeta, local, shape, dcp):
    qlens, seq, pad = shape
    W, k, I = dcp
    R, T = len(qlens), sum(qlens) + pad
    width = 1024
    table = _table(R, width // (2 * W) + 2, 11)
    qsl, seq_a = _qsl(qlens), np.array(seq, np.int32)
    rows = np.full((T, width + 3), POISON32, np.int32)[:, :width]  # padded rows
    lens = np.full(T + 1, POISON32, np.int32)
    attnmeta.compute_c128a_indices_and_lens(rows, lens, qsl, seq_a, table, 2, 128, num_tokens=T,
                                            local=local, dcp_world_size=W, dcp_rank=k,
                                            cp_kv_cache_interleave_size=I)
    want_rows, want_lens = ref_c128a(list(qsl), seq, R, T, T + 1, table.tolist(), 2, 128, width,
                                     local, W, k, I)
    assert rows.tolist() == want_rows
    assert lens.tolist() == want_lens


def ref_c128a_mixed(qsl, seq, R, T, C, table, bs, ratio, width, D, W=1, k=0, I=1):
    """Mixed mode from the contract: tokens [0, D) global rows, the rest
    local rows into the prefill table at t - D; the other rows -1."""
    glob, glens = ref_c128a(qsl, seq, R, T, C, table, bs, ratio, width, False, W, k, I)
    loc, llens = ref_c128a(qsl, seq, R, T, C, table, bs, ratio, width, True)
    none = [-1] * width
    rows = [glob[t] if t < D else none for t in range(T)]
    prefill = [loc[t] for t in range(D, T)] + [none] * D
    lens = [glens[t] if t < D else llens[t] for t in range(T)] + [0] * (C - T)
    return rows, prefill, lens


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dcp", [(1, 0, 1), (2, 1, 1)], ids=str)
@pytest.mark.parametrize("where", ["none", "half", "all"])
def test_c128a_mixed(attnmeta, shape, dcp, where):
    """vLLM's build_c128a_topk_metadata: one launch, decode tokens global,
    prefill tokens local into a second table at t - D."""
    qlens, seq, pad = shape
    W, k, I = dcp
    R, T = len(qlens), sum(qlens) + pad
    D = {"none": 0, "half": sum(qlens) // 2, "all": T}[where]
    width = 1024
    table = _table(R, width // (2 * W) + 2, 11)
    qsl, seq_a = _qsl(qlens), np.array(seq, np.int32)
    rows = np.full((T + 2, 1, width), POISON32, np.int32)
    prefill = np.full((T + 2, 1, width), POISON32, np.int32)
    lens = np.full(T + 1, POISON32, np.int32)
    got = attnmeta.compute_c128a_indices_and_lens(
        rows, lens, qsl, seq_a, table, 2, 128, num_tokens=T, dcp_world_size=W, dcp_rank=k,
        cp_kv_cache_interleave_size=I, num_decode_tokens=D, prefill_indices=prefill)
    want_rows, want_prefill, want_lens = ref_c128a_mixed(list(qsl), seq, R, T, T + 1,
                                                         table.tolist(), 2, 128, width, D, W, k, I)
    assert rows[:T, 0].tolist() == want_rows and prefill[:T, 0].tolist() == want_prefill
    assert (rows[T:] == POISON32).all() and (prefill[T:] == POISON32).all()
    assert lens.tolist() == want_lens
    assert got[0].shape == (D, width) and got[1].shape == (D,)
    assert got[2].shape == (T - D, width)


def test_c128a_mixed_example(attnmeta):
    """The contract's example: decode at 299, prefill at 400, D = 1."""
    rows = np.full((2, 8), POISON32, np.int32)
    prefill = np.full((2, 8), POISON32, np.int32)
    lens = np.full(2, POISON32, np.int32)
    table = np.array([[4, 9, 13], [20, 21, 22]], np.int32)
    attnmeta.compute_c128a_indices_and_lens(rows, lens, np.array([0, 1, 2], np.int32),
                                            np.array([300, 401], np.int32), table, 2, 128,
                                            num_decode_tokens=1, prefill_indices=prefill)
    assert rows.tolist() == [[8, 9] + [-1] * 6, [-1] * 8]
    assert prefill.tolist() == [[0, 1, 2] + [-1] * 5, [-1] * 8]
    assert lens.tolist() == [2, 3]


@pytest.mark.parametrize("max_seq_len, want", [(0, 0), (100, 128), (128 * 128, 128),
                                               (128 * 129, 256), (10 ** 7, 512)])
def test_c128a_row_width(attnmeta, max_seq_len, want):
    """vLLM's batch-dependent width: the longest compressed length rounded up
    to 128, within the buffers' 512 columns."""
    assert attnmeta.c128a_row_width(max_seq_len, 128, 512) == want


def test_c128a_mixed_width_from_max_seq_len(attnmeta):
    rows = np.full((3, 512), POISON32, np.int32)
    prefill = np.full((3, 512), POISON32, np.int32)
    lens = np.full(3, POISON32, np.int32)
    table = _table(3, 300, 5)
    seq = [300, 20000, 129 * 128]
    got = attnmeta.compute_c128a_indices_and_lens(
        rows, lens, np.array([0, 1, 2, 3], np.int32), np.array(seq, np.int32), table, 2, 128,
        num_decode_tokens=2, prefill_indices=prefill, max_seq_len=max(seq))
    assert got[0].shape == (2, 256) and got[2].shape == (1, 256)
    assert (rows[:, 256:] == POISON32).all() and (prefill[:, 256:] == POISON32).all()
    assert lens.tolist() == [2, 156, 129]
    assert prefill[0, :130].tolist() == list(range(129)) + [-1]


def test_c128a_example(attnmeta):
    rows = np.full((2, 8192), POISON32, np.int32)
    lens = np.full(2, POISON32, np.int32)
    attnmeta.compute_c128a_indices_and_lens(rows, lens, np.array([0, 1, 2], np.int32),
                                            np.array([257, 300], np.int32),
                                            np.zeros((2, 4), np.int32), 2, 128)
    assert lens.tolist() == [2, 2]
    assert rows[:, :2].tolist() == [[0, 1], [0, 1]] and (rows[:, 2:] == -1).all()


@pytest.mark.parametrize("prefill", [False, True])
@pytest.mark.parametrize("ratio", [1, 4, 128])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dcp", [(1, 0, 1), (2, 0, 1), (2, 1, 2), (4, 3, 1)], ids=str)
def test_indexer_lens(attnmeta, prefill, ratio, shape, dcp):
    qlens, seq, pad = shape
    W, k, I = dcp
    R, T = len(qlens), sum(qlens) + pad
    C = T + 2
    qsl, seq_a = _qsl(qlens), np.array(seq, np.int32)
    out = np.full(C, POISON32, np.int32)
    attnmeta.StepPlan(qsl, seq_lens=seq_a, indexer_lens_out=out, indexer_ratio=ratio,
                      indexer_prefill=prefill, dcp_world_size=W, dcp_rank=k,
                      dcp_interleave=I).build(R, T)
    assert out.tolist() == ref_indexer_lens(list(qsl), seq, R, T, C, ratio, prefill, W, k, I)


def test_indexer_lens_example(attnmeta):
    """The contract's example: W = 2, k = 0, ratio 4, L = 12."""
    got = []
    for prefill in (False, True):
        out = np.full(1, POISON32, np.int32)
        attnmeta.StepPlan(np.array([0, 1], np.int32), seq_lens=np.array([12], np.int32),
                          indexer_lens_out=out, indexer_ratio=4, indexer_prefill=prefill,
                          dcp_world_size=2).build(1, 1)
        got.append(int(out[0]))
    assert got == [1, 2]


def test_indexer_lens_needs_its_ratio(attnmeta):
    out = np.zeros(2, np.int32)
    with pytest.raises(ValueError, match="indexer_ratio is required"):
        attnmeta.StepPlan(np.array([0, 1], np.int32), seq_lens=np.array([5], np.int32),
                          indexer_lens_out=out)
    with pytest.raises(ValueError, match="indexer_ratio"):
        attnmeta.StepPlan(np.array([0, 1], np.int32), seq_lens=np.array([5], np.int32),
                          indexer_lens_out=out, indexer_ratio=0)


# ---- a whole DSV4 step in one plan ----

def test_whole_step_plan(attnmeta):
    qlens, seq, pad = [1, 2, 1], [700, 129, 90000], 2
    R, T = len(qlens), sum(qlens) + pad
    C = T + 3
    qsl, seq_a = _qsl(qlens), np.array(seq, np.int32)
    t4, t128 = _table(R, 400, 1), _table(R, 800, 2)
    swa_t, c_t = _table(R, 1500, 3), _table(R, 520, 4)
    slots4 = np.full(C, POISON64, np.int64)
    slots128 = np.full(C, POISON64, np.int64)
    lens4 = np.full(R, POISON32, np.int32)
    swa = np.full((T, 128), POISON32, np.int32)
    swa_lens = np.full(C, POISON32, np.int32)
    c_rows = np.full((T, 1024), POISON32, np.int32)
    c_lens = np.full(C, POISON32, np.int32)
    slot_mapping = np.full(C, POISON64, np.int64)
    word = np.zeros(1, np.int32)
    plan = attnmeta.StepPlan(
        qsl, seq_lens=seq_a, block_table=swa_t, slot_mapping=slot_mapping, block_size=64,
        error_word=word,
        compressed_groups=[
            dict(block_table=t4, ratio=4, block_size=64, slot_mapping=slots4, seq_lens_out=lens4),
            dict(block_table=t128, ratio=128, block_size=2, slot_mapping=slots128),
        ],
        swa_indices=swa, swa_lens=swa_lens, swa_block_table=swa_t, swa_block_size=64,
        swa_window=128,
        c128a_rows=c_rows, c128a_lens=c_lens, c128a_block_table=c_t, c128a_ratio=128,
        c128a_block_size=2,
    )
    plan.build(R, T)
    q, tl = list(qsl), None
    assert slots4.tolist() == ref_compressed(q, seq, R, T, C, t4.tolist(), 64, 4)
    assert slots128.tolist() == ref_compressed(q, seq, R, T, C, t128.tolist(), 2, 128)
    assert lens4.tolist() == [s // 4 for s in seq]
    want_rows, want_lens = ref_swa(q, seq, R, T, C, swa_t.tolist(), 64, 128, 128)
    assert swa.tolist() == want_rows and swa_lens.tolist() == want_lens
    want_rows, want_lens = ref_c128a(q, seq, R, T, C, c_t.tolist(), 2, 128, 1024)
    assert c_rows.tolist() == want_rows and c_lens.tolist() == want_lens
    assert word[0] == 0
    views = plan.views(R, T)
    assert views["swa_indices"].shape == (T, 128)
    assert views["compressed_groups[0].seq_lens_out"].shape == (R,)
    del tl


# ---- argument errors: a ValueError naming the argument, nothing written ----

@pytest.mark.parametrize(
    "change, text",
    [
        (dict(compressed_groups=[dict(ratio=0, block_size=64)]), "ratio"),
        (dict(compressed_groups=[dict(ratio=4, block_size=0)]), "block_size"),
        (dict(compressed_groups=[dict(ratio=4, block_size=64, block_table=None)]), "block_table"),
        (dict(compressed_groups=[dict(ratio=4, block_size=64, bogus=1)]), "bogus"),
        (dict(compressed_groups=[dict(ratio=4, block_size=64)] * 5), "at most 4"),
        (dict(swa_window=None), "swa_window"),
        (dict(swa_window=0), "swa_window"),
        (dict(swa_width=200), "swa_width"),
        (dict(swa_block_table=None), "swa_block_table"),
        (dict(c128a_ratio=0), "c128a_ratio"),
        (dict(c128a_block_table=None), "c128a_block_table"),
        (dict(c128a_width=2000), "c128a_width"),
        (dict(seq_lens=None), "seq_lens"),
        (dict(dcp_world_size=2, dcp_interleave=4, c128a_block_size=2), "c128a_block_size"),
    ],
    ids=lambda v: str(v)[:40],
)
def test_argument_errors(attnmeta, change, text):
    R, T = 2, 3
    qsl, seq = _qsl([1, 2]), np.array([300, 500], np.int32)
    table = _table(R, 16, 1)
    slots = np.full(T, POISON64, np.int64)
    swa = np.full((T, 128), POISON32, np.int32)
    rows = np.full((T, 1024), POISON32, np.int32)
    change = dict(change)  # the parameters are shared between runs
    groups = change.pop("compressed_groups", None)
    if groups is not None:
        groups = [dict(dict(block_table=table, slot_mapping=slots), **g) for g in groups]
    kw = dict(seq_lens=seq, compressed_groups=groups or (), swa_indices=swa,
              swa_block_table=table, swa_window=128, c128a_rows=rows, c128a_block_table=table)
    kw.update(change)
    with pytest.raises((ValueError, TypeError)) as info:
        attnmeta.StepPlan(qsl, **kw).build(R, T)
    assert text in str(info.value)
    assert (slots == POISON64).all() and (swa == POISON32).all() and (rows == POISON32).all()


# ---- the engines' calls: padded tables, argument spellings, their names in errors ----

def test_padded_block_table_example(attnmeta):
    """R is the smallest of the table's rows, len(seq_lens) and
    len(query_start_loc) - 1: graph-capture dummy metadata pads the table."""
    got = attnmeta.get_compressed_slot_mapping(
        4, np.array([0, 4], np.int32), np.array([2], np.int32),
        np.array([[5], [7], [9]], np.int32), 64, 4)
    assert got.tolist() == [-1, -1, -1, -1]


@pytest.mark.parametrize("padded", ["table", "seq_lens", "query_start_loc"])
def test_padded_inputs_drop_ins(attnmeta, padded):
    """Any of the three inputs longer than the real requests: the same result
    as with exactly R of each."""
    qlens, seq, pad = [1, 3, 8, 1, 2], [5, 64, 200, 1, 130], 2
    R, T = len(qlens), sum(qlens) + pad
    qsl, seq_a = _qsl(qlens), np.array(seq, np.int32)
    table = _table(R, 8, 7)
    p_qsl, p_seq, p_table = qsl, seq_a, table
    if padded == "table":
        p_table = np.concatenate([table, _table(3, 8, 500)])
    elif padded == "seq_lens":
        p_seq = np.concatenate([seq_a, [9000, 9000]]).astype(np.int32)
    else:
        p_qsl = np.concatenate([qsl, [qsl[-1]] * 3]).astype(np.int32)
    out = np.full(T + 2, POISON64, np.int64)
    attnmeta.get_compressed_slot_mapping(T, p_qsl, p_seq, p_table, 64, 4, out=out)
    assert out.tolist() == ref_compressed(list(qsl), seq, R, T, T + 2, table.tolist(), 64, 4)
    rows = np.full((T, 1, 16), POISON32, np.int32)
    lens = np.full(T, POISON32, np.int32)
    attnmeta.compute_swa_indices_and_lens(rows, lens, 16, p_qsl, p_seq, p_table, 64)
    want_rows, want_lens = ref_swa(list(qsl), seq, R, T, T, table.tolist(), 64, 16, 16)
    assert rows[:, 0].tolist() == want_rows and lens.tolist() == want_lens
    rows = np.full((T, 64), POISON32, np.int32)
    lens = np.full(T, POISON32, np.int32)
    attnmeta.compute_c128a_indices_and_lens(rows, lens, p_qsl, p_seq, p_table, 2, 4)
    want_rows, want_lens = ref_c128a(list(qsl), seq, R, T, T, table.tolist(), 2, 4, 64)
    assert rows.tolist() == want_rows and lens.tolist() == want_lens


def test_compressed_slot_mapping_cp_spelling(attnmeta):
    """compressor_utils.py's cp_world_size / cp_rank are the dcp_* ones."""
    qlens, seq = [8, 8], [8192, 8191]
    qsl, seq_a = _qsl(qlens), np.array(seq, np.int32)
    table = _table(2, 200, 7)
    want = ref_compressed(list(qsl), seq, 2, 16, 16, table.tolist(), 64, 4, 2, 1, 2)
    got = attnmeta.get_compressed_slot_mapping(16, qsl, seq_a, table, 64, 4, cp_world_size=2,
                                               cp_rank=1, cp_kv_cache_interleave_size=2)
    assert got.tolist() == want
    got = attnmeta.get_compressed_slot_mapping(16, qsl, seq_a, table, 64, 4, None, 2, 1, 2)
    assert got.tolist() == want
    with pytest.raises(TypeError, match="not both"):
        attnmeta.get_compressed_slot_mapping(16, qsl, seq_a, table, 64, 4, dcp_world_size=2,
                                             cp_rank=1)
    with pytest.raises(ValueError, match=r"cp_rank \(2\) must be in \[0, cp_world_size = 2\)"):
        attnmeta.get_compressed_slot_mapping(16, qsl, seq_a, table, 64, 4, cp_world_size=2,
                                             cp_rank=2)


def _dropin_call(attnmeta, which, **change):
    qsl, seq = _qsl([1, 2]), np.array([300, 500], np.int32)
    table = _table(2, 16, 1)
    if which == "compressed":
        kw = dict(num_tokens=3, query_start_loc=qsl, seq_lens=seq, block_table=table,
                  block_size=64, compress_ratio=4, out=np.full(3, POISON64, np.int64))
        kw.update(change)
        return attnmeta.get_compressed_slot_mapping(**kw)
    if which == "swa":
        kw = dict(swa_indices=np.full((3, 128), POISON32, np.int32),
                  swa_lens=np.full(3, POISON32, np.int32), window_size=128,
                  query_start_loc=qsl, seq_lens=seq, block_table=table, block_size=64)
        kw.update(change)
        return attnmeta.compute_swa_indices_and_lens(**kw)
    kw = dict(indices=np.full((3, 64), POISON32, np.int32), lens=np.full(3, POISON32, np.int32),
              query_start_loc=qsl, seq_lens=seq, block_table=table, block_size=2)
    kw.update(change)
    return attnmeta.compute_c128a_indices_and_lens(**kw)


@pytest.mark.parametrize(
    "which, change, text",
    [
        ("compressed", dict(compress_ratio=0), "compress_ratio (0) must be >= 1"),
        ("compressed", dict(block_size=0), "block_size (0) must be >= 1"),
        ("compressed", dict(block_table=None), "block_table"),
        ("compressed", dict(out=np.zeros(3, np.int32)), "out must be"),
        ("compressed", dict(out=np.zeros(2, np.int64)), "out"),
        ("compressed", dict(block_table=np.zeros((2, 4), np.int64)), "block_table must be"),
        ("compressed", dict(dcp_world_size=2, dcp_rank=3), "dcp_rank (3)"),
        ("compressed", dict(dcp_world_size=2, cp_kv_cache_interleave_size=0),
         "cp_kv_cache_interleave_size (0)"),
        ("swa", dict(window_size=0), "window_size (0) must be >= 1"),
        ("swa", dict(block_size=0), "block_size (0) must be >= 1"),
        ("swa", dict(block_table=np.zeros((2, 4), np.int64)), "block_table must be"),
        ("c128a", dict(compress_ratio=0), "compress_ratio (0) must be >= 1"),
        ("c128a", dict(block_size=0), "block_size (0) must be >= 1"),
        ("c128a", dict(indices=np.zeros((3, 4), np.int64)), "indices must be"),
        ("c128a", dict(lens=np.zeros(3, np.int64)), "lens must be"),
        ("c128a", dict(block_table=None), "block_table is required"),
        ("c128a", dict(dcp_world_size=2, cp_kv_cache_interleave_size=4),
         "cp_kv_cache_interleave_size"),
    ],
    ids=lambda v: "+".join(v) if isinstance(v, dict) else str(v)[:24],
)
def test_dropin_errors_name_the_callers_arguments(attnmeta, which, change, text):
    with pytest.raises((ValueError, TypeError)) as info:
        _dropin_call(attnmeta, which, **dict(change))
    message = str(info.value)
    assert text in message
    for inner in ("compressed_groups", "swa_block", "swa_window", "c128a_", "dcp_interleave"):
        assert inner not in message, message


def test_empty_inputs(attnmeta):
    """R = 0 tables and T = 0 steps are valid (NumPy gives empty 2-D arrays
    the strides (0, 0)): every slot -1, every length 0."""
    table = np.empty((0, 4), np.int32)
    assert table.strides == (0, 0)
    qsl, seq = np.zeros(1, np.int32), np.empty(0, np.int32)
    out = np.full(3, POISON64, np.int64)
    got = attnmeta.get_compressed_slot_mapping(3, qsl, seq, table, 64, 4, out=out)
    assert got.tolist() == [-1] * 3 and out.tolist() == [-1] * 3
    got = attnmeta.get_compressed_slot_mapping(0, qsl, seq, table, 64, 4)
    assert got.shape == (0,)
    rows, lens = np.full((2, 1, 8), POISON32, np.int32), np.full(2, POISON32, np.int32)
    attnmeta.compute_swa_indices_and_lens(rows, lens, 8, qsl, seq, table, 64)
    assert (rows == -1).all() and (lens == 0).all()
    rows, lens = np.empty((0, 8), np.int32), np.empty(0, np.int32)
    attnmeta.compute_c128a_indices_and_lens(rows, lens, qsl, seq, table, 2)
    slots = np.full(2, POISON64, np.int64)
    plan = attnmeta.StepPlan(qsl, seq_lens=seq, compressed_groups=[
        dict(block_table=table, ratio=4, block_size=64, slot_mapping=slots)])
    plan.build(0, 2)
    assert slots.tolist() == [-1, -1]


# ---- points the contract settles ----

@pytest.mark.parametrize("rank", [0, 1])
def test_flag_32_which_ranks(attnmeta, rank):
    """W = 2, I = 1, bs = 4, one-block table: row 9 (rank 1's) and row 8
    (rank 0's) lie past the table. A one-row-per-token product flags on every
    rank; the C128A list flags only on the owner of the row past the table."""
    table = np.array([[3]], np.int32)
    qsl, seq = np.array([0, 1], np.int32), np.array([10], np.int32)  # position 9
    dcp = dict(dcp_world_size=2, dcp_rank=rank)
    word, slots = np.zeros(1, np.int32), np.full(1, POISON64, np.int64)
    attnmeta.StepPlan(qsl, seq_lens=seq, block_table=table, slot_mapping=slots, block_size=4,
                      error_word=word, **dcp).build(1, 1)
    assert slots.tolist() == [-1] and word[0] == 32
    word, slots = np.zeros(1, np.int32), np.full(1, POISON64, np.int64)
    attnmeta.StepPlan(qsl, seq_lens=seq, error_word=word, compressed_groups=[
        dict(block_table=table, ratio=1, block_size=4, slot_mapping=slots)], **dcp).build(1, 1)
    assert slots.tolist() == [-1] and word[0] == 32
    # C128A, position 8 with ratio 1: rows 0..8, row 8 is rank 0's and past the table
    word = np.zeros(1, np.int32)
    rows, lens = np.full((1, 16), POISON32, np.int32), np.full(1, POISON32, np.int32)
    attnmeta.StepPlan(np.array([0, 1], np.int32), seq_lens=np.array([9], np.int32),
                      c128a_rows=rows, c128a_lens=lens, c128a_block_table=table, c128a_ratio=1,
                      c128a_block_size=4, error_word=word, **dcp).build(1, 1)
    owned = [c for c in range(9) if c % 2 == rank]
    want = [3 * 4 + c // 2 if c < 8 else -1 for c in owned]
    assert lens.tolist() == [len(owned)]
    assert rows[0, :len(owned)].tolist() == want and (rows[0, len(owned):] == -1).all()
    assert word[0] == (32 if rank == 0 else 0)


@pytest.mark.parametrize("width, want_len", [(128, 128), (192, 131)])
def test_non_causal_swa_row_width(attnmeta, width, want_len):
    """The contract's example: a non-causal length never exceeds the row
    width; at the engines' width (window + draft block, rounded up to 64) it is
    theirs, seq_lens - start."""
    table = np.arange(10, dtype=np.int32).reshape(1, 10) + 20
    rows = np.full((3, width), POISON32, np.int32)
    lens = np.full(3, POISON32, np.int32)
    attnmeta.compute_swa_indices_and_lens(rows, lens, 128, np.array([0, 3], np.int32),
                                          np.array([300], np.int32), table, 64, causal=False)
    assert lens.tolist() == [want_len] * 3
    want = [(20 + q // 64) * 64 + q % 64 for q in range(169, 169 + want_len)]
    for t in range(3):
        assert rows[t, :want_len].tolist() == want and (rows[t, want_len:] == -1).all()
