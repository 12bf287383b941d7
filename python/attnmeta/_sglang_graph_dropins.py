# SPDX-License-Identifier: Apache-2.0
"""Drop-ins for SGLang's fused CUDA-graph metadata updates of the TRT-LLM
MLA and MHA backends (``update_trtllm_mla_graph_metadata``,
``update_trtllm_mha_graph_metadata``), each one launch of
``attnmeta_build_pool_indices`` (docs/contract.md section 12), with
SGLang's keyword-only signatures and defaults. They write in place and
return nothing; ``bs == 0`` writes nothing, as SGLang's early return.
Rows ``[bs, len)`` of longer buffers (whole graph buffers) are not touched.

``req_pool_indices`` and ``seq_lens`` are read as int64; int32 ones are
first copied to int64 (one more device operation each).

Differences on data SGLang's kernels cannot take (out-of-bounds reads or
writes there): a negative length is stored as 0 and sums saturate at
INT32_MAX; table entries stay inside the row (SGLang's spill into the next
row); pool rows, columns and SWA slots outside their tables give -1.
``cu_seqlens_k[0]`` is written 0 (SGLang leaves it: its buffers hold 0).

``q_mode`` 1 and 2 write ``cu_seqlens_q[1:]`` in the same launch (the pool
operation's ``query_rows = 1``: one table row a request): the prefix sums
of ``qlens`` (a negative one counts as 0), or ``(b + 1) * q_stride``;
``cu_seqlens_q[0]`` is written 0.

Refused (NotImplementedError, nothing written; the SGLang patch then runs
SGLang's function): ``swa_out_cache_loc`` (the translation of
``out_cache_loc`` through the SWA map is no product of the pool operation)."""

from typing import Any, Optional

from ._arrays import I32, I64, int32, vec
from ._sglang_dropins import _INT32_MAX, _as_int64, _Call, _lengths_call, _page_rows

Buffer = Any  # a torch tensor, NumPy array, __cuda_array_interface__ or DLPack object

__all__ = [
    "update_trtllm_mha_graph_metadata",
    "update_trtllm_mha_graph_metadata_full_width",
    "update_trtllm_mla_graph_metadata",
]

Q_MODE_NONE = 0  # SGLang's: cu_seqlens_q preset by the caller (decode, target verify)
Q_MODE_LENS = 1  # cu_seqlens_q[b + 1] = qlens[0] + ... + qlens[b]
Q_MODE_STRIDE = 2  # cu_seqlens_q[b + 1] = (b + 1) * q_stride


def _rows(bs: int) -> int:
    b = int32(bs, "bs")
    if b < 0:
        raise ValueError("bs (%d) must be >= 0" % b)
    return b


def _page_size(page_size: int) -> int:
    ps = int32(page_size, "page_size")
    if ps < 1:
        raise ValueError("page_size (%d) must be >= 1" % ps)
    return ps


def update_trtllm_mla_graph_metadata(
    *,
    req_pool_indices: Buffer,
    seq_lens: Buffer,
    req_to_token: Buffer,
    block_kv_indices: Buffer,
    bs: int,
    seqlen_offset: int,
    page_size: int,
    seq_lens_k: Optional[Buffer] = None,
) -> None:
    """SGLang's TRT-LLM MLA graph update in one launch, for ``b < bs``:
    ``L = int32(seq_lens[b] + seqlen_offset)``, ``seq_lens_k[b] = L`` when
    given, and ``block_kv_indices[b][p] = req_to_token[rpi[b], p *
    page_size] // page_size`` for ``p < cdiv(L, page_size)`` (kept inside
    the row's width); nothing past that is written."""
    b = _rows(bs)
    if b == 0:
        return
    ps = _page_size(page_size)
    call = _lengths_call(b, req_to_token, req_pool_indices, seq_lens, seqlen_offset)
    ptr, cols, stride = _page_rows(call, block_kv_indices, "block_kv_indices", b)
    call.op.page_table = ptr or None
    call.op.page_table_width = int32(cols, "block_kv_indices columns")
    call.op.page_table_stride = stride
    call.op.page_size = ps
    if seq_lens_k is not None:
        call.op.cache_seqlens = call.vector(seq_lens_k, "seq_lens_k", I32, b, out=True)
    call.run()


def _refuse_unbuilt(swa_out_cache_loc: Any) -> None:
    if swa_out_cache_loc is not None:
        raise NotImplementedError("swa_out_cache_loc (out_cache_loc through the SWA map) is not "
                                  "built yet")


def _query_sums(call: _Call, q_mode: Any, cu_seqlens_q: Optional[Buffer], qlens: Optional[Buffer],
                q_stride: Any) -> None:
    """cu_seqlens_q by q_mode, next to the per-request tables."""
    mode = int(q_mode)
    if mode == Q_MODE_NONE:
        return
    if mode not in (Q_MODE_LENS, Q_MODE_STRIDE):
        raise ValueError("q_mode (%d) must be 0, 1 or 2" % mode)
    if cu_seqlens_q is None:
        raise ValueError("q_mode %d without cu_seqlens_q" % mode)
    call.op.query_indptr_out = call.vector(cu_seqlens_q, "cu_seqlens_q", I32, call.b + 1, out=True)
    call.op.query_rows = 1
    if mode == Q_MODE_LENS:
        if qlens is None:
            raise ValueError("q_mode 1 without qlens")
        call.op.query_lens = call.vector(qlens, "qlens", I64, call.b)
        return
    stride = int32(q_stride, "q_stride")
    if stride < 1:  # rows_per_req 0 would read as 1
        raise ValueError("q_stride (%d) must be >= 1 with q_mode 2" % stride)
    call.op.rows_per_req = stride


def _swa(call: _Call, swa_mapping: Optional[Buffer], swa_page_table: Buffer) -> None:
    if swa_mapping is None:
        raise ValueError("swa_page_table is given without swa_mapping")
    ptr, cols, stride = _page_rows(call, swa_page_table, "swa_page_table", call.b)
    if cols != call.op.page_table_width:
        raise ValueError("swa_page_table has %d columns, page_table %d"
                         % (cols, call.op.page_table_width))
    call.op.swa_page_table = ptr or None
    call.op.swa_page_table_stride = stride
    mapping = _as_int64(swa_mapping)
    ptr, d, n = vec(mapping, "swa_mapping", I64)
    call._check_dev(d, "swa_mapping")
    call.keep.append(mapping)
    call.op.full_to_swa = ptr or None
    call.op.swa_map_len = n


def _mha(b: int, req_pool_indices: Buffer, seq_lens: Buffer, req_to_token: Buffer,
         cache_seqlens: Buffer, cu_seqlens_k: Buffer, page_table: Optional[Buffer],
         seqlen_offset: int, max_seq_pages: int, page_size: int, swa_mapping: Optional[Buffer],
         swa_page_table: Optional[Buffer], full_width: bool, q_mode: Any,
         cu_seqlens_q: Optional[Buffer], qlens: Optional[Buffer], q_stride: Any) -> None:
    call = _lengths_call(b, req_to_token, req_pool_indices, seq_lens, seqlen_offset)
    _query_sums(call, q_mode, cu_seqlens_q, qlens, q_stride)
    call.op.cache_seqlens = call.vector(cache_seqlens, "cache_seqlens", I32, b, out=True)
    call.op.kv_indptr_out = call.vector(cu_seqlens_k, "cu_seqlens_k", I32, b + 1, out=True)
    pages = int(max_seq_pages)
    if page_table is not None and pages > 0:
        ptr, cols, stride = _page_rows(call, page_table, "page_table", b)
        call.op.page_table = ptr or None
        call.op.page_table_stride = stride
        call.op.page_table_width = int32(cols, "page_table columns")
        call.op.page_size = _page_size(page_size)
        if swa_page_table is not None:
            _swa(call, swa_mapping, swa_page_table)
        if full_width:
            if pages > cols:
                raise ValueError("max_seq_pages (%d) is wider than page_table (%d columns)"
                                 % (pages, cols))
            call.op.page_table_width = pages
            call.op.fill_to_width = 1
        else:
            call.op.length_cap = min(pages * call.op.page_size, _INT32_MAX)
    elif page_table is None and pages > 0:
        raise ValueError("page_table is None with max_seq_pages %d" % pages)
    call.run()


def update_trtllm_mha_graph_metadata(
    *,
    req_pool_indices: Buffer,
    seq_lens: Buffer,
    req_to_token: Buffer,
    cache_seqlens: Buffer,
    cu_seqlens_k: Buffer,
    page_table: Optional[Buffer],
    bs: int,
    seqlen_offset: int,
    max_seq_pages: int,
    page_size: int,
    swa_mapping: Optional[Buffer] = None,
    swa_page_table: Optional[Buffer] = None,
    out_cache_loc: Optional[Buffer] = None,
    swa_out_cache_loc: Optional[Buffer] = None,
    cu_seqlens_q: Optional[Buffer] = None,
    qlens: Optional[Buffer] = None,
    q_stride: int = 0,
    q_mode: int = Q_MODE_NONE,
    skip_page_table: bool = False,
) -> None:
    """SGLang's TRT-LLM MHA graph update (newest form) in one launch, for
    ``b < bs``: ``cache_seqlens[b] = L = int32(seq_lens[b] +
    seqlen_offset)``, ``cu_seqlens_k[1:]`` their prefix sums,
    ``page_table[b][p] = req_to_token[rpi[b], p * page_size] // page_size``
    for ``p < min(cdiv(L, page_size), max_seq_pages)`` (the live prefix),
    ``swa_page_table`` likewise through ``swa_mapping`` (-1 for a negative
    slot or mapping entry); ``skip_page_table`` writes the lengths only.
    ``cu_seqlens_q`` by ``q_mode`` (module docstring); ``out_cache_loc``
    is unused without ``swa_out_cache_loc``, as in SGLang."""
    del out_cache_loc
    b = _rows(bs)
    if b == 0:
        return
    _refuse_unbuilt(swa_out_cache_loc)
    if skip_page_table:
        page_table, swa_page_table, max_seq_pages = None, None, 0
    _mha(b, req_pool_indices, seq_lens, req_to_token, cache_seqlens, cu_seqlens_k, page_table,
         seqlen_offset, max_seq_pages, page_size, swa_mapping, swa_page_table, False, q_mode,
         cu_seqlens_q, qlens, q_stride)


def update_trtllm_mha_graph_metadata_full_width(
    *,
    req_pool_indices: Buffer,
    seq_lens: Buffer,
    req_to_token: Buffer,
    cache_seqlens: Buffer,
    cu_seqlens_k: Buffer,
    page_table: Buffer,
    bs: int,
    seqlen_offset: int,
    max_seq_pages: int,
    page_size: int,
    swa_mapping: Optional[Buffer] = None,
    swa_page_table: Optional[Buffer] = None,
    out_cache_loc: Optional[Buffer] = None,
    swa_out_cache_loc: Optional[Buffer] = None,
    cu_seqlens_q: Optional[Buffer] = None,
    qlens: Optional[Buffer] = None,
    q_stride: int = 0,
    q_mode: int = Q_MODE_NONE,
) -> None:
    """SGLang's first form of the TRT-LLM MHA graph update (no
    ``skip_page_table``): as the newest, but every row's first
    ``max_seq_pages`` pages are written whatever its length."""
    del out_cache_loc
    b = _rows(bs)
    if b == 0:
        return
    _refuse_unbuilt(swa_out_cache_loc)
    _mha(b, req_pool_indices, seq_lens, req_to_token, cache_seqlens, cu_seqlens_k, page_table,
         seqlen_offset, max_seq_pages, page_size, swa_mapping, swa_page_table, True, q_mode,
         cu_seqlens_q, qlens, q_stride)
