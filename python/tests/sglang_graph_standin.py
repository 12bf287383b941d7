# SPDX-License-Identifier: Apache-2.0
"""NumPy renderings of SGLang's fused CUDA-graph metadata updates, written
from what SGLang's Triton kernels compute (one loop per request, nothing
vectorised across requests): ``update_trtllm_mla_graph_metadata``,
``update_trtllm_mha_graph_metadata`` (newest form: the live prefix, and the
first form: every row to ``max_seq_pages``) and FA3's
``draft_extend_set_metadata``. Each counts its calls in ``CALLS``. Integer
division is Triton's (truncating), lengths are int32 casts that wrap."""

import numpy as np

CALLS = {}


def _count(name):
    CALLS[name] = CALLS.get(name, 0) + 1


def int32_wrap(x):
    return ((np.asarray(x, np.int64) + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)


def trunc_div(x, d):
    """C's (and Triton's) integer division."""
    x = np.asarray(x, np.int64)
    return (np.sign(x) * (np.abs(x) // d)).astype(np.int64)


def cdiv(x, d):
    return int(trunc_div(int(x) + d - 1, d))


def _mla(req_pool_indices, seq_lens, req_to_token, block_kv_indices, bs, seqlen_offset,
         page_size, seq_lens_k):
    if bs == 0:
        return
    for b in range(bs):
        length = int(int32_wrap(int(seq_lens[b]) + seqlen_offset))
        if seq_lens_k is not None:
            seq_lens_k[b] = length
        pages = max(cdiv(length, page_size), 0)
        assert pages <= block_kv_indices.shape[1], "outside SGLang's defined behaviour"
        row = req_to_token[int(req_pool_indices[b])]
        for p in range(pages):
            block_kv_indices[b, p] = trunc_div(row[p * page_size], page_size)


def update_trtllm_mla_graph_metadata(*, req_pool_indices, seq_lens, req_to_token,
                                     block_kv_indices, bs, seqlen_offset, page_size,
                                     seq_lens_k=None):
    _count("update_trtllm_mla_graph_metadata")
    _mla(req_pool_indices, seq_lens, req_to_token, block_kv_indices, bs, seqlen_offset,
         page_size, seq_lens_k)


def _swa_page(token, mapping, page_size):
    if token < 0:
        return -1
    slot = int(mapping[token])
    return -1 if slot < 0 else int(trunc_div(slot, page_size))


def _mha(a, full_width):
    bs, ps = a["bs"], a["page_size"]
    if bs == 0:
        return
    lens = [int(int32_wrap(int(a["seq_lens"][b]) + a["seqlen_offset"])) for b in range(bs)]
    acc_k = acc_q = 0
    for b in range(bs):
        a["cache_seqlens"][b] = lens[b]
        acc_k = int(int32_wrap(acc_k + lens[b]))
        a["cu_seqlens_k"][b + 1] = acc_k
        if a["q_mode"] == 1:
            acc_q = int(int32_wrap(acc_q + int(a["qlens"][b])))
            a["cu_seqlens_q"][b + 1] = acc_q
        elif a["q_mode"] == 2:
            a["cu_seqlens_q"][b + 1] = (b + 1) * a["q_stride"]
    if not a.get("skip_page_table", False):
        for b in range(bs):
            live = a["max_seq_pages"]
            if not full_width:
                live = max(min(cdiv(lens[b], ps), live), 0)
            row = a["req_to_token"][int(a["req_pool_indices"][b])]
            for p in range(live):
                token = int(row[p * ps])
                a["page_table"][b, p] = trunc_div(token, ps)
                if a["swa_page_table"] is not None:
                    a["swa_page_table"][b, p] = _swa_page(token, a["swa_mapping"], ps)
    out = a["swa_out_cache_loc"]
    if out is not None:
        real = 0 if a["out_cache_loc"] is None else min(len(out), len(a["out_cache_loc"]))
        for t in range(len(out)):
            loc = int(a["out_cache_loc"][t]) if t < real else 0
            out[t] = (-1 if loc < 0 else int(a["swa_mapping"][loc])) if t < real else 0


def update_trtllm_mha_graph_metadata(*, req_pool_indices, seq_lens, req_to_token, cache_seqlens,
                                     cu_seqlens_k, page_table, bs, seqlen_offset, max_seq_pages,
                                     page_size, swa_mapping=None, swa_page_table=None,
                                     out_cache_loc=None, swa_out_cache_loc=None,
                                     cu_seqlens_q=None, qlens=None, q_stride=0, q_mode=0,
                                     skip_page_table=False):
    _count("update_trtllm_mha_graph_metadata")
    _mha(dict(locals()), full_width=False)


def update_trtllm_mha_graph_metadata_first(*, req_pool_indices, seq_lens, req_to_token,
                                           cache_seqlens, cu_seqlens_k, page_table, bs,
                                           seqlen_offset, max_seq_pages, page_size,
                                           swa_mapping=None, swa_page_table=None,
                                           out_cache_loc=None, swa_out_cache_loc=None,
                                           cu_seqlens_q=None, qlens=None, q_stride=0, q_mode=0):
    """The first form (no skip_page_table): every row's first max_seq_pages pages."""
    _count("update_trtllm_mha_graph_metadata")
    _mha(dict(locals()), full_width=True)


def draft_extend_set_metadata(cache_seqlens_int32, cu_seqlens_k, cu_seqlens_q, page_table,
                              req_to_token, req_pool_indices, seq_lens, extend_seq_lens,
                              page_size, full_to_swa_index_mapping=None, swa_page_table=None,
                              out_cache_loc=None, swa_out_cache_loc=None):
    _count("draft_extend_set_metadata")
    acc_k = acc_q = 0
    bs = len(cache_seqlens_int32)
    for b in range(bs):
        length = int(int32_wrap(int(seq_lens[b])))
        cache_seqlens_int32[b] = length
        cu_seqlens_k[b] = acc_k
        cu_seqlens_q[b] = acc_q
        acc_k += length
        acc_q += int(extend_seq_lens[b])
    cu_seqlens_k[bs] = acc_k
    cu_seqlens_q[bs] = acc_q
    for b in range(bs):
        live = max(min(cdiv(int(cache_seqlens_int32[b]), page_size), page_table.shape[1]), 0)
        row = req_to_token[int(req_pool_indices[b])]
        for p in range(live):
            page_table[b, p] = row[p * page_size] >> (page_size.bit_length() - 1)
