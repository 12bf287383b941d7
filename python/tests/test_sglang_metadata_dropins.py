# SPDX-License-Identifier: Apache-2.0
"""The SGLang drop-ins of contract sections 12 and 13 on NumPy buffers (the
CPU backend): SGLang's test of normal_decode_set_metadata re-expressed
(both generations: the older full width and the newest live prefix; page
sizes 1 to 128, SWA, a delta), the DSA decode and target-verify metadata
against loops written from SGLang's definitions, bs == 0, the CUDA-graph
padding rows, and what is refused."""

import numpy as np
import pytest

from attnmeta import (
    fused_dsa_decode_metadata,
    fused_dsa_draft_extend_metadata,
    fused_dsa_target_verify_metadata,
    normal_decode_set_metadata,
)
from attnmeta._sglang_dropins import normal_decode_set_metadata_strided

STALE = -77


class SwaPool:
    """What the drop-in reads of SGLang's SWAKVPool."""

    def __init__(self, mapping):
        self.full_to_swa_index_mapping = mapping


def decode_data(bs, max_seq_len, page_size, swa, delta, seed):
    rng = np.random.default_rng(seed)
    seq_lens = rng.integers(max_seq_len // 2, max_seq_len + 1, bs).astype(np.int64)
    max_seq_pages = (int(seq_lens.max()) + delta + page_size - 1) // page_size
    req_to_token = rng.integers(0, 10000, (bs, 2 * max_seq_len)).astype(np.int32)
    rpi = np.arange(bs, dtype=np.int32)
    pool = None
    if swa:
        pool = SwaPool(((np.arange(10000) + rng.integers(0, 100, 10000)) % 10000).astype(np.int32))
    return seq_lens, max_seq_pages, req_to_token, rpi, pool


@pytest.mark.parametrize("generation", ["newest", "strided"])
@pytest.mark.parametrize("bs,max_seq_len,page_size,swa,delta", [
    (2, 128, 1, False, 0), (64, 512, 1, False, 0), (8, 200, 1, False, 5),
    (4, 256, 16, False, 0), (32, 1024, 64, False, 0), (8, 512, 64, False, 3),
    (8, 256, 16, True, 0), (16, 512, 64, True, 0), (8, 400, 64, True, 2),
    (1, 256, 64, False, 0), (2, 10, 64, False, 0),
] + [(4, 256, ps, False, 0) for ps in (2, 4, 8, 32, 128)])
def test_normal_decode_set_metadata(generation, bs, max_seq_len, page_size, swa, delta):
    seq_lens, pages, r2t, rpi, pool = decode_data(bs, max_seq_len, page_size, swa, delta,
                                                  bs * 1000 + page_size)
    cache = np.full(bs, STALE, np.int32)
    cu = np.zeros(bs + 1, np.int32)
    table = np.full((bs, pages + 10), STALE, np.int32)
    swa_table = np.full((bs, pages + 10), STALE, np.int32) if swa else None
    if generation == "newest":
        normal_decode_set_metadata(cache, cu, table, r2t, rpi, pages, seq_lens, delta, page_size,
                                   swa_table, pool)
    else:
        strided = np.arange(0, 2 * max_seq_len, page_size, dtype=np.int32)
        normal_decode_set_metadata_strided(cache, cu, table, r2t, rpi, strided, pages, seq_lens,
                                           delta, page_size, swa_table, pool)
    lens = (seq_lens + delta).astype(np.int32)
    np.testing.assert_array_equal(cache, lens)
    np.testing.assert_array_equal(cu[1:], np.cumsum(lens))
    assert cu[0] == 0
    want = np.full_like(table, STALE)
    want_swa = np.full_like(table, STALE)
    for b in range(bs):
        live = pages if generation == "strided" else min(-(-int(lens[b]) // page_size), pages)
        slots = r2t[rpi[b], np.arange(live) * page_size]
        want[b, :live] = slots // page_size
        if swa:
            want_swa[b, :live] = pool.full_to_swa_index_mapping[slots] // page_size
    np.testing.assert_array_equal(table, want)
    if swa:
        np.testing.assert_array_equal(swa_table, want_swa)


def test_skip_page_table_writes_lengths_only():
    seq_lens, pages, r2t, rpi, _ = decode_data(4, 64, 16, False, 0, 3)
    cache, cu = np.zeros(4, np.int32), np.zeros(5, np.int32)
    table = np.full((4, pages), STALE, np.int32)
    normal_decode_set_metadata(cache, cu, table, r2t, rpi, pages, seq_lens, 1, 16,
                               skip_page_table=True)
    np.testing.assert_array_equal(cache, seq_lens + 1)
    assert (table == STALE).all()


def clip(x, topk, kpool):
    if kpool <= 1:
        return np.minimum(x, topk)
    whole = (x // kpool) * kpool
    return np.minimum(whole, topk) + (x - whole)


def dsa_buffers(rows, max_len, ps):
    return (np.full(rows, STALE, np.int32), np.full(rows + 1, STALE, np.int32),
            np.full((rows, max_len + 3), STALE, np.int32),
            np.full((rows, -(-max_len // ps) + 2), STALE, np.int32))


@pytest.mark.parametrize("ps,kpool,with_table_1", [(1, 1, True), (64, 1, True), (64, 1, False),
                                                   (32, 4, True)])
@pytest.mark.parametrize("next_n", [0, 1, 3])  # 0: decode
def test_fused_dsa_metadata(ps, kpool, with_table_1, next_n):
    rng = np.random.default_rng(ps + kpool + next_n)
    bs, max_len, topk, pool_rows = 7, 300, 64, 12
    r2t = rng.integers(0, 1 << 20, (pool_rows, 320)).astype(np.int32)
    r2t[0] = 0  # the reserved row
    rpi = np.concatenate([rng.choice(np.arange(1, pool_rows), bs - 2, replace=False), [0, 0]])
    seq = np.concatenate([rng.integers(0, 290, bs - 2), [1, 1]]).astype(np.int64)  # graph padding
    rows = bs * max(next_n, 1)
    cache, cu = np.full(bs, STALE, np.int32), np.full(bs + 1, STALE, np.int32)
    dsa_lens, dsa_cu, table_1, real = dsa_buffers(rows, max_len, ps)
    expanded = np.full(rows, STALE, np.int32)
    t1 = table_1 if with_table_1 else None
    if next_n == 0:
        fused_dsa_decode_metadata(seq, rpi, r2t, cache, cu, t1, dsa_lens, dsa_cu, real, bs,
                                  max_len, topk, ps, kpool)
        kv, seen, req = seq, seq, np.arange(bs)
    else:
        fused_dsa_target_verify_metadata(seq, rpi, r2t, cache, cu, t1, expanded, dsa_lens, dsa_cu,
                                         real, bs, max_len, topk, ps, next_n, index_kpool=kpool)
        kv = seq + next_n
        req = np.repeat(np.arange(bs), next_n)
        seen = seq[req] + np.tile(np.arange(next_n), bs) + 1
        np.testing.assert_array_equal(expanded, seen)
    np.testing.assert_array_equal(cache, kv)
    np.testing.assert_array_equal(cu, np.concatenate([[0], np.cumsum(kv)]))
    np.testing.assert_array_equal(dsa_lens, clip(seen, topk, kpool))
    np.testing.assert_array_equal(dsa_cu, np.concatenate([[0], np.cumsum(clip(seen, topk, kpool))]))
    for e in range(rows):
        n1 = min(int(kv[req[e]]), max_len)
        row = r2t[rpi[req[e]]]
        if with_table_1:
            np.testing.assert_array_equal(table_1[e, :n1], row[:n1])
            assert (table_1[e, n1:] == STALE).all()  # the live prefix only
        if ps > 1:
            n = -(-n1 // ps)
            np.testing.assert_array_equal(real[e, :n], row[: n * ps : ps] // ps)
            assert (real[e, n:] == STALE).all()


@pytest.mark.parametrize("ps", [1, 64])
def test_fused_dsa_draft_extend_metadata(ps):
    rng = np.random.default_rng(ps)
    bs, max_len, topk = 6, 260, 32
    r2t = rng.integers(0, 1 << 20, (10, 300)).astype(np.int32)
    r2t[0] = 0
    rpi = np.array([3, 7, 1, 9, 0, 0], np.int64)
    seq = np.array([40, 255, 3, 120, 1, 1], np.int64)  # two graph padding rows (fill 1)
    qo = np.array([3, 1, 4, 2, 3, 3], np.int32)  # int32, as SGLang's extend_seq_lens
    total = int(qo.sum())
    cache, cu = np.full(bs, STALE, np.int32), np.full(bs + 1, STALE, np.int32)
    dsa_lens, dsa_cu, table_1, real = dsa_buffers(total, max_len, ps)
    expanded = np.full(total, STALE, np.int32)
    fused_dsa_draft_extend_metadata(seq, qo, rpi, r2t, cache, cu, table_1, expanded, dsa_lens,
                                    dsa_cu, real, bs, total, max_len, topk, ps, 4, total + 8)
    req = np.repeat(np.arange(bs), qo)
    local = np.concatenate([np.arange(q) for q in qo])
    seen = np.maximum(seq[req] - qo[req] + local + 1, 0)
    np.testing.assert_array_equal(cache, seq)
    np.testing.assert_array_equal(cu, np.concatenate([[0], np.cumsum(seq)]))
    np.testing.assert_array_equal(expanded, seen)
    np.testing.assert_array_equal(dsa_lens, np.minimum(seen, topk))
    np.testing.assert_array_equal(dsa_cu, np.concatenate([[0], np.cumsum(np.minimum(seen, topk))]))
    for e in range(total):
        n1 = min(int(seq[req[e]]), max_len)
        row = r2t[rpi[req[e]]]
        np.testing.assert_array_equal(table_1[e, :n1], row[:n1])
        assert (table_1[e, n1:] == STALE).all()
        if ps > 1:
            n = -(-n1 // ps)
            np.testing.assert_array_equal(real[e, :n], row[: n * ps : ps] // ps)


def test_dsa_no_rows():
    cu, dsa_cu = np.full(3, STALE, np.int32), np.full(3, STALE, np.int32)
    empty = np.zeros(0, np.int64)
    fused_dsa_decode_metadata(empty, empty, np.zeros((2, 4), np.int32), np.zeros(0, np.int32), cu,
                              None, np.zeros(0, np.int32), dsa_cu, np.zeros((0, 1), np.int32), 0,
                              4, 2048, 64)
    assert cu.tolist() == [0, STALE, STALE] and dsa_cu.tolist() == [0, STALE, STALE]


def test_refused_before_writing():
    r2t = np.zeros((2, 8), np.int32)
    one = np.ones(1, np.int64)
    cache, cu = np.full(1, STALE, np.int32), np.full(2, STALE, np.int32)
    with pytest.raises(NotImplementedError):
        fused_dsa_target_verify_metadata(one, one, r2t, cache, cu, None, np.zeros(2, np.int32),
                                         np.zeros(2, np.int32), np.zeros(3, np.int32),
                                         np.zeros((2, 1), np.int32), 1, 8, 4, 8, 2,
                                         paged_mqa_ctx_lens_2d=np.zeros((1, 2), np.int32))
    with pytest.raises(NotImplementedError):
        normal_decode_set_metadata(cache, cu, np.zeros((1, 2), np.int32), r2t, one, 2, one, 0, 4,
                                   np.zeros((1, 2), np.int32), SwaPool(None))
    assert (cache == STALE).all() and (cu == STALE).all()
