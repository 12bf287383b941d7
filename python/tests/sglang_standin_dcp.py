# SPDX-License-Identifier: Apache-2.0
"""The stand-in's decode-context-parallel part, written from reading
SGLang's code: create_triton_kv_indices_for_dcp_triton and
create_mla_kv_page_table_for_dcp in their defining module
(sglang.kernels.ops.attention.dcp_kernels), get_dcp_lens
(sglang.srt.layers.dcp.layout), and two backends that import the kernels
at import time: FlashInfer's DCP decode (the rank's lengths, kv_indptr as
their cumulative sum, the slot list on a (bs,) grid) and TRTLLM MLA's DCP
block table (a (bs, blocks) grid of PAGES_PER_BLOCK pages each).

The kernels are NumPy loops over SGLang's programs: the slot list's first
column is s + ((k - s) mod W), then every W-th, each slot divided by W;
the page table's page p reads column k + p * ps * W, divided by W and ps.
In-bounds data only."""

import numpy as np

import vllm_standin

DCP_KERNELS = "sglang.kernels.ops.attention.dcp_kernels"
LAYOUT = "sglang.srt.layers.dcp.layout"
FLASHINFER = "sglang.srt.layers.attention.flashinfer_backend"
TRTLLM_MLA = "sglang.srt.layers.attention.trtllm_mla_backend"
MODULES = [DCP_KERNELS, LAYOUT, TRTLLM_MLA]

SLOT_ARGS = ["req_to_token_ptr", "req_pool_indices_ptr", "dcp_kernel_lens_ptr", "kv_indptr",
             "kv_start_idx", "kv_indices_ptr", "req_to_token_ptr_stride", "dcp_size", "dcp_rank"]
PAGE_ARGS = ["req_to_token_ptr", "req_pool_indices_ptr", "local_seq_lens_ptr",
             "block_kv_indices_ptr", "req_to_token_stride", "block_table_stride",
             "PHYSICAL_PAGE_SIZE", "DCP_SIZE", "DCP_RANK", "PAGES_PER_BLOCK"]


def get_dcp_lens(lens, dcp_size, dcp_rank, start=None, interleave_size=1):
    """SGLang's count of the positions of [start, start + lens) a rank owns
    (NumPy; runs of interleave_size positions dealt out in turn)."""
    lens = np.asarray(lens, dtype=np.int64)
    if dcp_size == 1:
        return lens
    cycle = dcp_size * interleave_size

    def before(end):
        return end // cycle * interleave_size + np.clip(
            end % cycle - dcp_rank * interleave_size, 0, interleave_size)

    if start is None:
        return before(lens)
    start = np.asarray(start, dtype=np.int64)
    return before(start + lens) - before(start)


def _slot_kernel(grid, req_to_token, req_pool_indices, dcp_kernel_lens, kv_indptr, kv_start_idx,
                 kv_indices, stride, dcp_size, dcp_rank):
    flat = req_to_token.reshape(-1)
    for pid in range(grid[0]):
        start = int(kv_start_idx[pid]) if kv_start_idx is not None else 0
        first = start + (dcp_rank + dcp_size - start % dcp_size) % dcp_size
        n = int(dcp_kernel_lens[pid])
        if n <= 0:
            continue
        cols = first + np.arange(n, dtype=np.int64) * dcp_size
        data = flat[int(req_pool_indices[pid]) * int(stride) + cols].astype(np.int64)
        at = int(kv_indptr[pid])
        kv_indices[at:at + n] = data // dcp_size


def _page_kernel(grid, req_to_token, req_pool_indices, local_seq_lens, block_kv_indices,
                 req_to_token_stride, block_table_stride, PHYSICAL_PAGE_SIZE, DCP_SIZE, DCP_RANK,
                 PAGES_PER_BLOCK):
    flat, out = req_to_token.reshape(-1), block_kv_indices.reshape(-1)
    ps = PHYSICAL_PAGE_SIZE
    for req in range(grid[0]):
        pages = -(-int(local_seq_lens[req]) // ps)
        row = int(req_pool_indices[req]) * int(req_to_token_stride)
        for block in range(grid[1]):
            p = block * PAGES_PER_BLOCK + np.arange(PAGES_PER_BLOCK)
            p = p[p < pages]
            slots = flat[row + DCP_RANK + p * ps * DCP_SIZE].astype(np.int64)
            out[req * int(block_table_stride) + p] = slots // DCP_SIZE // ps


def _fill_flashinfer(mod):
    def dcp_decode_indices(req_to_token, req_pool_indices, seq_lens, bs, kv_indptr, kv_indices,
                           kv_start_idx, dcp_size, dcp_rank):
        """FlashInfer's DCP decode: the rank's lengths, kv_indptr[1:bs+1]
        their cumulative sum, then the rank's slot list."""
        lens = get_dcp_lens(_host(seq_lens)[:bs], dcp_size, dcp_rank,
                            None if kv_start_idx is None else _host(kv_start_idx)[:bs])
        _assign(kv_indptr, 1, np.cumsum(lens))
        dcp_lens = _like(seq_lens, lens)
        mod.create_triton_kv_indices_for_dcp_triton[(bs,)](
            req_to_token, req_pool_indices, dcp_lens, kv_indptr, kv_start_idx, kv_indices,
            req_to_token.shape[1], dcp_size, dcp_rank)
        return dcp_lens

    mod.dcp_decode_indices = dcp_decode_indices


def _fill_trtllm_mla(mod):
    def dcp_block_table(req_to_token, req_pool_indices, seq_lens, bs, block_kv_indices,
                        page_size, dcp_size, dcp_rank):
        """TRTLLM MLA's DCP decode table: the rank's lengths, then its pages
        on a (bs, blocks) grid of 4096 / page_size pages a block."""
        local = _like(seq_lens, get_dcp_lens(_host(seq_lens)[:bs], dcp_size, dcp_rank))
        per_block = max(1, 4096 // page_size)
        blocks = -(-block_kv_indices.shape[1] // per_block)
        mod.create_mla_kv_page_table_for_dcp[(bs, blocks)](
            req_to_token, req_pool_indices, local, block_kv_indices, req_to_token.shape[1],
            block_kv_indices.shape[1], PHYSICAL_PAGE_SIZE=page_size, DCP_SIZE=dcp_size,
            DCP_RANK=dcp_rank, PAGES_PER_BLOCK=per_block)
        return local

    mod.dcp_block_table = dcp_block_table


def _host(x):
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)


def _like(model, values):
    """values (NumPy) as an array of model's kind, dtype and device."""
    if hasattr(model, "detach"):
        import torch

        return torch.as_tensor(values, dtype=model.dtype, device=model.device)
    return np.asarray(values, dtype=model.dtype)


def _assign(buf, at, values):
    if hasattr(buf, "detach"):
        import torch

        buf[at:at + len(values)] = torch.as_tensor(values, dtype=buf.dtype, device=buf.device)
    else:
        buf[at:at + len(values)] = values


def fill(modules):
    """The DCP modules' contents (their modules already made)."""
    slots = vllm_standin.Kernel("create_triton_kv_indices_for_dcp_triton", _slot_kernel,
                                SLOT_ARGS)
    pages = vllm_standin.Kernel("create_mla_kv_page_table_for_dcp", _page_kernel, PAGE_ARGS)
    modules[DCP_KERNELS].create_triton_kv_indices_for_dcp_triton = slots
    modules[DCP_KERNELS].create_mla_kv_page_table_for_dcp = pages
    modules[LAYOUT].get_dcp_lens = get_dcp_lens
    modules[FLASHINFER].create_triton_kv_indices_for_dcp_triton = slots
    modules[TRTLLM_MLA].create_mla_kv_page_table_for_dcp = pages
    _fill_flashinfer(modules[FLASHINFER])
    _fill_trtllm_mla(modules[TRTLLM_MLA])
