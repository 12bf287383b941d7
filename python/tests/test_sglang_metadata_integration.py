# SPDX-License-Identifier: Apache-2.0
"""patch_sglang() on SGLang's plain metadata functions (contract sections
12 and 13), against a stand-in written from SGLang's structure: the
defining modules (sglang.kernels.ops.attention.metadata with FA3's
normal_decode_set_metadata, ...attention.dsa_metadata with the fused DSA
functions) as NumPy functions that count their calls, and backends that
import the names at import time. Checks that each target is routed in
every binding, gives the stand-in's values bit for bit on in-bounds data,
counts its launches, falls back on what attnmeta refuses, and restores."""

import sys
import types

import numpy as np
import pytest

from attnmeta.integrations.sglang import patch_sglang

META = "sglang.kernels.ops.attention.metadata"
DSA = "sglang.kernels.ops.attention.dsa_metadata"
FA3_BACKEND = "sglang.srt.layers.attention.flashattention_backend"
DSA_BACKEND = "sglang.srt.layers.attention.dsa_backend"
CALLS = {}


def _count(name):
    CALLS[name] = CALLS.get(name, 0) + 1


def normal_decode_set_metadata(cache_seqlens_int32, cu_seqlens_k, page_table, req_to_token,
                               req_pool_indices, max_seq_pages, seq_lens, seq_len_delta,
                               page_size, swa_page_table=None, token_to_kv_pool=None,
                               skip_page_table=False):
    _count("normal_decode_set_metadata")
    lens = (seq_lens + seq_len_delta).astype(np.int32)
    cache_seqlens_int32[:] = lens
    cu_seqlens_k[0] = 0
    cu_seqlens_k[1:len(lens) + 1] = np.cumsum(lens)
    if skip_page_table:
        return
    for b, n in enumerate(lens):
        live = min(-(-int(n) // page_size), max_seq_pages)
        slots = req_to_token[req_pool_indices[b], np.arange(live) * page_size]
        page_table[b, :live] = slots >> (page_size.bit_length() - 1)
        if swa_page_table is not None and token_to_kv_pool is not None:
            mapped = token_to_kv_pool.full_to_swa_index_mapping[slots]
            swa_page_table[b, :live] = mapped >> (page_size.bit_length() - 1)


def _dsa(seq, rpi, r2t, cache, cu, t1, dsa_lens, dsa_cu, real, kv, seen, req, max_len, topk, ps):
    cache[:len(kv)] = kv
    cu[0] = 0
    cu[1:len(kv) + 1] = np.cumsum(kv)
    dsa_lens[:len(seen)] = np.minimum(seen, topk)
    dsa_cu[0] = 0
    dsa_cu[1:len(seen) + 1] = np.cumsum(np.minimum(seen, topk))
    for e, b in enumerate(req):
        n1 = min(int(kv[b]), max_len)
        row = r2t[rpi[b]]
        if t1 is not None:
            t1[e, :n1] = row[:n1]
        if ps > 1:
            n = -(-n1 // ps)
            real[e, :n] = row[: n * ps : ps] // ps


def fused_dsa_decode_metadata(seq_lens, req_pool_indices, req_to_token, cache_seqlens,
                              cu_seqlens_k, page_table_1, dsa_cache_seqlens, dsa_cu_seqlens_k,
                              real_page_table, bs, max_len, dsa_index_topk, real_page_size,
                              index_kpool=1):
    _count("fused_dsa_decode_metadata")
    kv = seq_lens[:bs].astype(np.int32)
    _dsa(seq_lens, req_pool_indices, req_to_token, cache_seqlens, cu_seqlens_k, page_table_1,
         dsa_cache_seqlens, dsa_cu_seqlens_k, real_page_table, kv, kv, range(bs), max_len,
         dsa_index_topk, real_page_size)


def fused_dsa_target_verify_metadata(seq_lens, req_pool_indices, req_to_token, cache_seqlens,
                                     cu_seqlens_k, page_table_1, seqlens_expanded,
                                     dsa_cache_seqlens, dsa_cu_seqlens_k, real_page_table, bs,
                                     max_seqlen_k, dsa_index_topk, real_page_size, next_n,
                                     paged_mqa_ctx_lens_2d=None, index_kpool=1):
    _count("fused_dsa_target_verify_metadata")
    kv = seq_lens[:bs].astype(np.int32) + next_n
    req = np.repeat(np.arange(bs), next_n)
    seen = (seq_lens[req] + np.tile(np.arange(next_n), bs) + 1).astype(np.int32)
    seqlens_expanded[:len(seen)] = seen
    _dsa(seq_lens, req_pool_indices, req_to_token, cache_seqlens, cu_seqlens_k, page_table_1,
         dsa_cache_seqlens, dsa_cu_seqlens_k, real_page_table, kv, seen, req, max_seqlen_k,
         dsa_index_topk, real_page_size)


def fused_dsa_draft_extend_metadata(seq_lens, extend_seq_lens, req_pool_indices, req_to_token,
                                    cache_seqlens, cu_seqlens_k, page_table_1, seqlens_expanded,
                                    dsa_cache_seqlens, dsa_cu_seqlens_k, real_page_table, bs,
                                    total_len, max_seqlen_k, dsa_index_topk, real_page_size,
                                    max_extend_len, max_total_len, static_extend_len=False,
                                    index_kpool=1):
    _count("fused_dsa_draft_extend_metadata")
    kv = seq_lens[:bs].astype(np.int32)
    qo = extend_seq_lens[:bs].astype(np.int64)
    req = np.repeat(np.arange(bs), qo)
    local = np.concatenate([np.arange(q) for q in qo])
    seen = np.maximum(kv[req] - qo[req] + local + 1, 0).astype(np.int32)
    seqlens_expanded[:total_len] = seen
    _dsa(seq_lens, req_pool_indices, req_to_token, cache_seqlens, cu_seqlens_k, page_table_1,
         dsa_cache_seqlens, dsa_cu_seqlens_k, real_page_table, kv, seen, req, max_seqlen_k,
         dsa_index_topk, real_page_size)


@pytest.fixture
def standin(monkeypatch):
    CALLS.clear()
    for name in ("sglang", "sglang.kernels", "sglang.kernels.ops", "sglang.kernels.ops.attention",
                 "sglang.srt", "sglang.srt.layers", "sglang.srt.layers.attention"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    meta, dsa = types.ModuleType(META), types.ModuleType(DSA)
    meta.normal_decode_set_metadata = normal_decode_set_metadata
    dsa.fused_dsa_decode_metadata = fused_dsa_decode_metadata
    dsa.fused_dsa_target_verify_metadata = fused_dsa_target_verify_metadata
    dsa.fused_dsa_draft_extend_metadata = fused_dsa_draft_extend_metadata
    fa3, dsa_backend = types.ModuleType(FA3_BACKEND), types.ModuleType(DSA_BACKEND)
    fa3.normal_decode_set_metadata = meta.normal_decode_set_metadata  # imported by name
    dsa_backend.fused_dsa_decode_metadata = dsa.fused_dsa_decode_metadata
    dsa_backend.fused_dsa_target_verify_metadata = dsa.fused_dsa_target_verify_metadata
    dsa_backend.fused_dsa_draft_extend_metadata = dsa.fused_dsa_draft_extend_metadata
    for module in (meta, dsa, fa3, dsa_backend):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    return types.SimpleNamespace(meta=meta, dsa=dsa, fa3=fa3, dsa_backend=dsa_backend)


def fa3_call(fn, ps, swa):
    rng = np.random.default_rng(ps)
    bs, pool_rows = 6, 9
    r2t = rng.integers(0, 5000, (pool_rows, 512)).astype(np.int32)
    r2t[0] = 0
    rpi = np.array([3, 1, 7, 2, 0, 0], np.int64)  # two graph padding rows
    seq = np.array([100, 3, 250, 17, 1, 1], np.int64)
    pages = -(-255 // ps)
    out = [np.full(bs, -7, np.int32), np.zeros(bs + 1, np.int32),
           np.full((bs, pages + 4), -7, np.int32), np.full((bs, pages + 4), -7, np.int32)]
    pool = types.SimpleNamespace(full_to_swa_index_mapping=(np.arange(5000) * 3 % 5000))
    fn(out[0], out[1], out[2], r2t, rpi, pages, seq, 2, ps, out[3] if swa else None,
       pool if swa else None)
    return out


def dsa_call(fn, verify, ps):
    rng = np.random.default_rng(ps + verify)
    bs, next_n, max_len = 5, 3, 200
    r2t = rng.integers(0, 1 << 16, (8, 256)).astype(np.int32)
    rpi = np.array([4, 2, 6, 0, 0], np.int64)
    seq = np.array([150, 9, 199, 1, 1], np.int64)
    rows = bs * (next_n if verify else 1)
    out = [np.full(bs, -7, np.int32), np.full(bs + 1, -7, np.int32),
           np.full((rows, max_len), -7, np.int32), np.full(rows, -7, np.int32),
           np.full(rows + 1, -7, np.int32), np.full((rows, -(-max_len // ps)), -7, np.int32),
           np.full(rows, -7, np.int32)]
    if verify:
        fn(seq, rpi, r2t, out[0], out[1], out[2], out[6], out[3], out[4], out[5], bs, max_len, 64,
           ps, next_n)
    else:
        fn(seq, rpi, r2t, out[0], out[1], out[2], out[3], out[4], out[5], bs, max_len, 64, ps)
    return out


def draft_extend_call(fn, ps):
    rng = np.random.default_rng(ps)
    bs, max_len = 4, 120
    r2t = rng.integers(0, 1 << 16, (6, 128)).astype(np.int32)
    rpi, seq = np.array([2, 5, 0, 0], np.int64), np.array([60, 7, 1, 1], np.int64)
    qo = np.array([3, 2, 3, 3], np.int32)
    total = int(qo.sum())
    out = [np.full(bs, -7, np.int32), np.full(bs + 1, -7, np.int32),
           np.full((total, max_len), -7, np.int32), np.full(total, -7, np.int32),
           np.full(total, -7, np.int32), np.full(total + 1, -7, np.int32),
           np.full((total, -(-max_len // ps)), -7, np.int32)]
    fn(seq, qo, rpi, r2t, out[0], out[1], out[2], out[3], out[4], out[5], out[6], bs, total,
       max_len, 16, ps, 3, total)
    return out


def test_routes_each_function_with_sglangs_values(standin):
    want_fa3 = [fa3_call(normal_decode_set_metadata, ps, swa) for ps in (1, 16) for swa in (0, 1)]
    want_dsa = [dsa_call(f, v, ps) for f, v in ((fused_dsa_decode_metadata, 0),
                                               (fused_dsa_target_verify_metadata, 1))
                for ps in (1, 64)]
    want_de = [draft_extend_call(fused_dsa_draft_extend_metadata, ps) for ps in (1, 64)]
    CALLS.clear()
    with patch_sglang() as handle:
        for label in ("fa3_decode_metadata", "dsa_decode_metadata", "dsa_target_verify_metadata",
                      "dsa_draft_extend_metadata"):
            assert label in handle.applied, handle
        assert "%s.normal_decode_set_metadata" % FA3_BACKEND in handle.bindings["fa3_decode_metadata"]
        got_fa3 = [fa3_call(standin.fa3.normal_decode_set_metadata, ps, swa)
                   for ps in (1, 16) for swa in (0, 1)]
        got_dsa = [dsa_call(f, v, ps)
                   for f, v in ((standin.dsa_backend.fused_dsa_decode_metadata, 0),
                                (standin.dsa_backend.fused_dsa_target_verify_metadata, 1))
                   for ps in (1, 64)]
        got_de = [draft_extend_call(standin.dsa_backend.fused_dsa_draft_extend_metadata, ps)
                  for ps in (1, 64)]
        assert CALLS == {}  # none of SGLang's functions ran
        assert handle.launches["dsa_draft_extend_metadata"] == 2
        assert handle.launches["fa3_decode_metadata"] == 4
        assert handle.launches["dsa_decode_metadata"] == 2
        assert handle.launches["dsa_target_verify_metadata"] == 2
    for got, want in zip(got_fa3 + got_dsa + got_de, want_fa3 + want_dsa + want_de):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert standin.fa3.normal_decode_set_metadata is normal_decode_set_metadata  # restored
    assert standin.dsa.fused_dsa_decode_metadata is fused_dsa_decode_metadata


def test_refused_arguments_run_sglangs_function(standin):
    with patch_sglang(dsa_decode_metadata=False) as handle:
        assert "dsa_decode_metadata" in handle.skipped
        assert standin.dsa_backend.fused_dsa_decode_metadata is fused_dsa_decode_metadata
        seq = np.array([5], np.int64)
        r2t = np.arange(16, dtype=np.int32).reshape(2, 8)
        args = [seq, np.array([1], np.int64), r2t, np.zeros(1, np.int32), np.zeros(2, np.int32),
                None, np.zeros(2, np.int32), np.zeros(2, np.int32), np.zeros(3, np.int32),
                np.zeros((2, 2), np.int32), 1, 8, 4, 4, 2]
        standin.dsa_backend.fused_dsa_target_verify_metadata(
            *args, paged_mqa_ctx_lens_2d=np.zeros((1, 2), np.int32))
        assert CALLS == {"fused_dsa_target_verify_metadata": 1}
        assert handle.fallbacks["dsa_target_verify_metadata"] == 1
        assert "paged_mqa_ctx_lens_2d" in handle.fallback_reasons["dsa_target_verify_metadata"]


def test_older_fa3_form_is_routed_to_the_strided_drop_in(standin, monkeypatch):
    def older(cache_seqlens_int32, cu_seqlens_k, page_table, req_to_token, req_pool_indices,
              strided_indices, max_seq_pages, seq_lens, seq_len_delta, page_size,
              swa_page_table=None, token_to_kv_pool=None):
        raise AssertionError("routed away")

    monkeypatch.setattr(standin.meta, "normal_decode_set_metadata", older)
    monkeypatch.setattr(standin.fa3, "normal_decode_set_metadata", older)
    with patch_sglang() as handle:
        r2t = np.arange(64, dtype=np.int32).reshape(2, 32)
        table = np.full((1, 6), -7, np.int32)
        standin.fa3.normal_decode_set_metadata(
            np.zeros(1, np.int32), np.zeros(2, np.int32), table, r2t, np.array([1]),
            np.arange(0, 32, 4), 5, np.array([3], np.int64), 0, 4)
        assert table[0].tolist() == [8, 9, 10, 11, 12, -7]  # every page to max_seq_pages
        assert handle.launches["fa3_decode_metadata"] == 1
