# SPDX-License-Identifier: Apache-2.0
"""Triton re-implementations of SGLang's per-step metadata kernels, written
from their semantics (contract sections 10, 12 and 13) in SGLang's launch
design, the baselines of bench/sglang_compare.py:

  slot_list       the CSR slot list (create_flashinfer_kv_indices_triton):
                  a program per request row copying its row's slots in
                  blocks; SGLang's backends launch a cumsum and a cast-copy
                  into kv_indptr before it (3 launches in all);
  fa3_decode      FA3's fused decode metadata (normal_decode_set_metadata):
                  program (0, 0) writes the lengths and their prefix sum in
                  a serial loop, programs (b, c) the page table's column
                  block c of row b, live pages only (1 launch);
  dsa_decode      DSA's fused decode metadata (fused_dsa_decode_metadata):
                  the same split, with the lengths clipped to the top-k and
                  their prefix sum, page_table_1 and the real page table
                  (1 launch);
  draft_decode    EAGLE's multi-step draft decode lists
                  (generate_draft_decode_kv_indices, contract section 14):
                  a program per (step, request, branch) copying its list in
                  blocks and writing its kv_indptr entry from the positions
                  before it (1 launch).

No bounds are checked, as in SGLang: the benchmark's inputs are in bounds.
Imported only where Triton is installed.
"""

import triton
import triton.language as tl


@triton.jit
def _slot_list(r2t_ptr, r2t_stride, rpi_ptr, len_ptr, indptr_ptr, out_ptr, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    row = tl.load(rpi_ptr + b)
    n = tl.load(len_ptr + b).to(tl.int32)
    at = tl.load(indptr_ptr + b)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = cols < n
        v = tl.load(r2t_ptr + row * r2t_stride + cols, mask=m, other=0)
        tl.store(out_ptr + at + cols, v, mask=m)


def slot_list(torch, r2t, rpi, seq_lens, kv_indptr, kv_indices, bs):
    """SGLang's FlashInfer decode build: cumsum, cast-copy, the kernel."""
    kv_indptr[1:bs + 1] = torch.cumsum(seq_lens[:bs], dim=0)
    _slot_list[(bs,)](r2t, r2t.stride(0), rpi, seq_lens, kv_indptr, kv_indices, BLOCK=512)


@triton.jit
def _fa3_decode(seq_ptr, rpi_ptr, r2t_ptr, r2t_stride, cache_ptr, cu_ptr, pt_ptr, pt_stride, B,
                max_pages, DELTA: tl.constexpr, PS: tl.constexpr, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    c = tl.program_id(1)
    if b == 0 and c == 0:
        acc = tl.zeros((), tl.int32)
        for i in range(B):
            v = (tl.load(seq_ptr + i) + DELTA).to(tl.int32)
            tl.store(cache_ptr + i, v)
            tl.store(cu_ptr + i, acc)
            acc += v
        tl.store(cu_ptr + B, acc)
    n = (tl.load(seq_ptr + b).to(tl.int32) + DELTA + PS - 1) // PS
    n = tl.minimum(n, max_pages)
    cols = c * BLOCK + tl.arange(0, BLOCK)
    m = cols < n
    row = tl.load(rpi_ptr + b)
    v = tl.load(r2t_ptr + row * r2t_stride + cols * PS, mask=m, other=0)
    tl.store(pt_ptr + b * pt_stride + cols, v // PS, mask=m)


def fa3_decode(cache, cu, page_table, r2t, rpi, max_pages, seq_lens, delta, ps):
    bs = cache.shape[0]
    block = 128
    grid = (bs, max(1, triton.cdiv(max_pages, block)))
    _fa3_decode[grid](seq_lens, rpi, r2t, r2t.stride(0), cache, cu, page_table,
                      page_table.stride(0), bs, max_pages, DELTA=delta, PS=ps, BLOCK=block)


@triton.jit
def _dsa_decode(seq_ptr, rpi_ptr, r2t_ptr, r2t_stride, cache_ptr, cu_ptr, t1_ptr, t1_stride,
                dlen_ptr, dcu_ptr, real_ptr, real_stride, B, max_len, TOPK: tl.constexpr,
                PS: tl.constexpr, HAS_T1: tl.constexpr, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    c = tl.program_id(1)
    if b == 0 and c == 0:
        acc = tl.zeros((), tl.int32)
        dacc = tl.zeros((), tl.int32)
        tl.store(cu_ptr, acc)
        tl.store(dcu_ptr, dacc)
        for i in range(B):
            v = tl.load(seq_ptr + i).to(tl.int32)
            d = tl.minimum(v, TOPK)
            acc += v
            dacc += d
            tl.store(cache_ptr + i, v)
            tl.store(cu_ptr + i + 1, acc)
            tl.store(dlen_ptr + i, d)
            tl.store(dcu_ptr + i + 1, dacc)
    n = tl.minimum(tl.load(seq_ptr + b).to(tl.int32), max_len)
    row = tl.load(rpi_ptr + b)
    for start in range(c * BLOCK, n, tl.num_programs(1) * BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = cols < n
        v = tl.load(r2t_ptr + row * r2t_stride + cols, mask=m, other=0)
        if HAS_T1:
            tl.store(t1_ptr + b * t1_stride + cols, v, mask=m)
        tl.store(real_ptr + b * real_stride + cols // PS, v // PS, mask=m & (cols % PS == 0))


def dsa_decode(seq_lens, rpi, r2t, cache, cu, page_table_1, dsa_lens, dsa_cu, real, bs, max_len,
               topk, ps):
    block = 128
    splits = max(1, min(triton.cdiv(max_len, block), 8192 // max(bs, 1)))
    t1 = page_table_1 if page_table_1 is not None else real
    _dsa_decode[(bs, splits)](seq_lens, rpi, r2t, r2t.stride(0), cache, cu, t1, t1.stride(0),
                              dsa_lens, dsa_cu, real, real.stride(0), bs, max_len, TOPK=topk,
                              PS=ps, HAS_T1=page_table_1 is not None, BLOCK=block)


def dsa_decode_unfused(torch, seq_lens, rpi, r2t, cache, cu, page_table_1, dsa_lens, dsa_cu, real,
                       bs, max_len, topk, ps):
    """SGLang's torch path (taken on ROCm, where the fused kernel is gated
    off): casts, two cumsums, a clamp, the gathers and a floor division."""
    cache.copy_(seq_lens[:bs].to(torch.int32))
    cu[1:bs + 1] = torch.cumsum(cache, dim=0)
    dsa_lens.copy_(torch.clamp(cache, max=topk))
    dsa_cu[1:bs + 1] = torch.cumsum(dsa_lens, dim=0)
    rows = r2t[rpi[:bs], :max_len]
    if page_table_1 is not None:
        page_table_1[:bs, :max_len] = rows
    real[:bs, :rows[:, ::ps].shape[1]] = rows[:, ::ps] // ps


@triton.jit
def _draft_decode(rpi_ptr, r2t_ptr, r2t_stride, len_ptr, out_ptr, out_stride, ip_ptr, ip_stride,
                  pos_ptr, PS: tl.constexpr, REQS_P2: tl.constexpr, STEPS_P2: tl.constexpr,
                  TOKENS_P2: tl.constexpr, BLOCK: tl.constexpr):
    step, b, k = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    steps, topk = tl.num_programs(0), tl.num_programs(2)
    m = step + 1  # draft slots of this step
    reqs = tl.arange(0, REQS_P2)
    before = tl.sum(tl.load(len_ptr + reqs, mask=reqs < b, other=0))
    n = tl.load(len_ptr + b)
    row = r2t_ptr + tl.load(rpi_ptr + b) * r2t_stride
    dst = out_ptr + step * out_stride + before * topk + b * m * topk + k * (n + m)
    for start in range(0, n.to(tl.int32), BLOCK):
        cols = start + tl.arange(0, BLOCK)
        live = cols < n
        tl.store(dst + cols, tl.load(row + cols, mask=live, other=0), mask=live)
    if PS == 1:
        first = n + k * steps
    else:  # each branch's own pages from the partial page's start
        partial = n % PS
        paged = n - partial + k * ((partial + steps + PS - 1) // PS) * PS + partial
        first = tl.where(topk == 1, n + k * steps, paged)
    j = tl.arange(0, STEPS_P2)
    tl.store(dst + n + j, tl.load(row + first + j, mask=j < m, other=0), mask=j < m)
    e = b * topk + k + 1  # this program's kv_indptr entry
    tokens = tl.arange(0, TOKENS_P2)
    before_e = tl.sum(tl.load(pos_ptr + tokens, mask=tokens < e, other=0))
    tl.store(ip_ptr + step * ip_stride + e, (before_e + e * m).to(tl.int32))
    if (b == 0) & (k == 0):
        tl.store(ip_ptr + step * ip_stride, 0)


def draft_decode(rpi, r2t, seq_lens, kv_indices, kv_indptr, positions, steps, bs, topk, ps):
    """EAGLE's draft decode lists for every step in one launch."""
    _draft_decode[(steps, bs, topk)](
        rpi, r2t, r2t.stride(0), seq_lens, kv_indices, kv_indices.stride(0), kv_indptr,
        kv_indptr.stride(0), positions, PS=ps, REQS_P2=triton.next_power_of_2(bs),
        STEPS_P2=triton.next_power_of_2(steps), TOKENS_P2=triton.next_power_of_2(bs * topk),
        BLOCK=128)
