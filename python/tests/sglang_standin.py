# SPDX-License-Identifier: Apache-2.0
"""A stand-in for the parts of SGLang that attnmeta.integrations.sglang
routes, written from reading SGLang's code: the kernels' defining module
(sglang.kernels.ops.kvcache.kv_indices) with their names and parameters,
the re-export in sglang.srt.layers.attention.utils, and backends that
import the names at import time (from either module) and launch them
inline as ``kernel[grid](...)`` after their torch cumulative sums; EAGLE's
draft decode kernel in sglang_standin_draft.py, the DCP kernels in
sglang_standin_dcp.py.

The kernels are NumPy functions behind vllm_standin.Kernel objects, which
count their launches in vllm_standin.LAUNCHES (by kernel name, torch
operations as ``torch.<op>``); a kernel given torch tensors works on host
copies and writes them back. Arrays are vllm_standin.Arrays (NumPy or
torch). SGLang's out-of-bounds behaviour is not
modelled: the tests give in-bounds data.

install(monkeypatch, xp, **options) puts the modules into sys.modules."""

import sys

import numpy as np

import sglang_standin_dcp
import sglang_standin_draft
import vllm_standin
from vllm_standin import cdiv

KV_INDICES = "sglang.kernels.ops.kvcache.kv_indices"
UTILS = "sglang.srt.layers.attention.utils"
FLASHINFER = "sglang.srt.layers.attention.flashinfer_backend"
TRITON = "sglang.srt.layers.attention.triton_backend"
FLASHMLA = "sglang.srt.layers.attention.flashmla_backend"
FORWARD_BATCH = "sglang.srt.model_executor.forward_batch_info"
MODULES = [KV_INDICES, UTILS, FLASHINFER, TRITON, FLASHMLA, FORWARD_BATCH]
MODULES += sglang_standin_draft.MODULES  # EAGLE's draft decode kernel and its re-export
MODULES += sglang_standin_dcp.MODULES  # the DCP kernels, get_dcp_lens, TRTLLM MLA's backend

SLOT_LIST_ARGS = ["req_to_token_ptr", "req_pool_indices_ptr", "page_kernel_lens_ptr",
                  "kv_indptr", "kv_start_idx", "kv_indices_ptr", "req_to_token_ptr_stride",
                  "ENTRY_PAGE_SIZE", "TOKEN_BLOCK_PARALLEL", "token_mapping"]
PAGE_TABLE_ARGS = ["req_to_token_ptr", "req_pool_indices_ptr", "page_kernel_lens_ptr",
                   "kv_start_idx", "kv_indices_ptr", "req_to_token_ptr_stride",
                   "kv_indices_ptr_stride", "PAGED_SIZE"]
CHUNKED_ARGS = ["req_to_token_ptr", "req_pool_indices_ptr", "chunk_start_idx_ptr",
                "chunk_seq_lens_ptr", "chunk_cu_seq_lens_ptr", "chunk_kv_indices_ptr",
                "req_to_token_ptr_stride"]
PAGE_BLOCK = 4096  # tokens per program of the page-table kernel (SGLang's block size)


class Kernel(vllm_standin.Kernel):
    """vLLM's stand-in kernel, whose grid may also be a function of the
    launch's meta-parameters, as Triton's may."""

    def __getitem__(self, grid):
        return vllm_standin.Kernel.__getitem__(self, grid({}) if callable(grid) else grid)


def cumsum(xp, x):
    """The cumulative sum SGLang's backends take before the slot list, on
    the stand-in's arrays (counted as torch.cumsum)."""
    vllm_standin.LAUNCHES["torch.cumsum"] += 1
    if xp.torch is not None:
        return xp.torch.cumsum(x, dim=0)
    return np.cumsum(x)


def _host(x):
    return x.detach().cpu().numpy() if hasattr(x, "detach") else x


def _truncating_div(v, d):
    """Triton's integer division (C's: toward zero)."""
    return np.where(v < 0, -((-v) // d), v // d)


def _row_slots(req_to_token, stride, row, positions, entry_page_size):
    flat = req_to_token.reshape(-1)
    if entry_page_size == 1:
        return flat[row * stride + positions]
    entries = flat[row * stride + positions // entry_page_size].astype(np.int64)
    return entries * entry_page_size + positions % entry_page_size


def _slot_list(grid, req_to_token, req_pool_indices, page_kernel_lens, kv_indptr, kv_start_idx,
               kv_indices, stride, ENTRY_PAGE_SIZE=1, TOKEN_BLOCK_PARALLEL=False,
               token_mapping=None):
    del TOKEN_BLOCK_PARALLEL  # shapes SGLang's launch only
    mapping = _host(token_mapping)
    for pid in range(grid[0]):
        start = int(kv_start_idx[pid]) if kv_start_idx is not None else 0
        n = int(page_kernel_lens[pid])
        if n <= 0:
            continue
        data = _row_slots(req_to_token, int(stride), int(req_pool_indices[pid]),
                          start + np.arange(n, dtype=np.int64), int(ENTRY_PAGE_SIZE))
        if mapping is not None:
            data = np.where(data >= 0, mapping[np.maximum(data, 0)], -1)
        offset = int(kv_indptr[pid])
        kv_indices[offset:offset + n] = data


def _page_table(grid, req_to_token, req_pool_indices, page_kernel_lens, kv_start_idx, kv_indices,
                stride, kv_indices_stride, PAGED_SIZE=64):
    flat, out = req_to_token.reshape(-1), kv_indices.reshape(-1)
    for pid in range(grid[0]):
        start = int(kv_start_idx[pid]) if kv_start_idx is not None else 0
        length = int(page_kernel_lens[pid])
        pages = np.arange(cdiv(length, PAGED_SIZE) if length > 0 else 0, dtype=np.int64)
        first = flat[int(req_pool_indices[pid]) * int(stride) + start + pages * PAGED_SIZE]
        out[pid * int(kv_indices_stride) + pages] = _truncating_div(first, PAGED_SIZE)


def _chunked(grid, req_to_token, req_pool_indices, chunk_start_idx, chunk_seq_lens,
             chunk_cu_seq_lens, chunk_kv_indices, stride):
    _slot_list(grid, req_to_token, req_pool_indices, chunk_seq_lens, chunk_cu_seq_lens,
               chunk_start_idx, chunk_kv_indices, stride)


def _fill_kv_indices(mod):
    mod.create_flashinfer_kv_indices_triton = Kernel(
        "create_flashinfer_kv_indices_triton", _slot_list, SLOT_LIST_ARGS)
    mod.create_flashmla_kv_indices_triton = Kernel(
        "create_flashmla_kv_indices_triton", _page_table, PAGE_TABLE_ARGS)
    mod.create_chunked_prefix_cache_kv_indices = Kernel(
        "create_chunked_prefix_cache_kv_indices", _chunked, CHUNKED_ARGS)

    def get_num_kv_index_blocks_flashmla(kv_indices_width, page_size):
        return cdiv(kv_indices_width, PAGE_BLOCK // page_size)

    mod.get_num_kv_index_blocks_flashmla = get_num_kv_index_blocks_flashmla


def _import(into, source, *names):
    """``from source import names`` at import time."""
    for name in names:
        setattr(into, name, getattr(source, name))


def _fill_flashinfer(mod, xp):
    def update_decode_indices(req_to_token, req_pool_indices, seq_lens, bs, kv_indptr,
                              kv_indices, kv_start_idx=None):
        """FlashInfer's decode indices update: kv_indptr's cumulative sum
        (cumsum and a cast-copy into the int32 buffer), then the slot list."""
        xp.assign(kv_indptr[1:bs + 1], cumsum(xp, seq_lens[:bs]))
        mod.create_flashinfer_kv_indices_triton[(bs,)](
            req_to_token, req_pool_indices, seq_lens, kv_indptr, kv_start_idx, kv_indices,
            req_to_token.shape[1])

    mod.update_decode_indices = update_decode_indices


def _fill_triton(mod, xp):
    def update_decode_indices(req_to_token, req_pool_indices, seq_lens, bs, kv_indptr,
                              kv_indices, entry_page_size=1, token_mapping=None):
        """The Triton backend's: its 2-D grid (token-block parallel), the
        stride by keyword-free position and the newer constexprs."""
        xp.assign(kv_indptr[1:bs + 1], cumsum(xp, seq_lens[:bs]))
        blocks = max(1, min(cdiv(req_to_token.shape[1], 8192), 512 // max(1, bs)))
        mod.create_flashinfer_kv_indices_triton[(bs, blocks)](
            req_to_token, req_pool_indices, seq_lens, kv_indptr, None, kv_indices,
            req_to_token.shape[1], ENTRY_PAGE_SIZE=entry_page_size, TOKEN_BLOCK_PARALLEL=True,
            token_mapping=token_mapping)

    mod.update_decode_indices = update_decode_indices


def _fill_flashmla(mod):
    def build_block_table(req_to_token, req_pool_indices, seq_lens, bs, block_kv_indices,
                          page_size):
        """The page table into the backend's (-1 or stale) table buffer,
        one program per page block (the 2-D grid)."""
        width = block_kv_indices.shape[1]
        mod.create_flashmla_kv_indices_triton[(bs, mod.get_num_kv_index_blocks_flashmla(
            width, page_size))](
            req_to_token, req_pool_indices, seq_lens, None, block_kv_indices,
            req_to_token.shape[1], width, PAGED_SIZE=page_size)

    mod.build_block_table = build_block_table


def _fill_forward_batch(mod):
    def prepare_chunked_kv_indices(req_to_token, req_pool_indices, chunk_starts, chunk_lens,
                                   chunk_cu_lens, chunk_kv_indices, bs):
        mod.create_chunked_prefix_cache_kv_indices[(bs,)](
            req_to_token, req_pool_indices, chunk_starts, chunk_lens, chunk_cu_lens,
            chunk_kv_indices, req_to_token.shape[1])

    mod.prepare_chunked_kv_indices = prepare_chunked_kv_indices


def make_modules(xp, version="0.5.6.dev0", utils_defines=False):
    """The stand-in sglang package: {module name: module}. ``utils_defines``:
    the older layout, the kernels defined in attention/utils.py itself."""
    modules = vllm_standin._package(MODULES)
    modules["sglang"].__version__ = version
    kv, utils = modules[KV_INDICES], modules[UTILS]
    if utils_defines:
        _fill_kv_indices(utils)
        del modules[KV_INDICES]
        delattr(modules["sglang.kernels.ops.kvcache"], "kv_indices")
    else:
        _fill_kv_indices(kv)
        _import(utils, kv, "create_flashinfer_kv_indices_triton",
                "create_flashmla_kv_indices_triton", "get_num_kv_index_blocks_flashmla")
    source = utils if utils_defines else kv
    _import(modules[FLASHINFER], utils, "create_flashinfer_kv_indices_triton")
    _import(modules[TRITON], source, "create_flashinfer_kv_indices_triton")
    _import(modules[FLASHMLA], utils, "create_flashmla_kv_indices_triton",
            "get_num_kv_index_blocks_flashmla")
    _import(modules[FORWARD_BATCH], source, "create_chunked_prefix_cache_kv_indices")
    _fill_flashinfer(modules[FLASHINFER], xp)
    _fill_triton(modules[TRITON], xp)
    _fill_flashmla(modules[FLASHMLA])
    _fill_forward_batch(modules[FORWARD_BATCH])
    sglang_standin_draft.fill(modules)
    sglang_standin_dcp.fill(modules)
    return modules


def remove(monkeypatch):
    """No sglang module left in sys.modules (undone by monkeypatch)."""
    for name in [name for name in sys.modules if name.split(".")[0] == "sglang"]:
        monkeypatch.delitem(sys.modules, name)


def install(monkeypatch, xp, **kw):
    """The stand-in modules in sys.modules (undone by monkeypatch); the
    launch counts start from zero."""
    modules = make_modules(xp, **kw)
    remove(monkeypatch)
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    vllm_standin.LAUNCHES.clear()
    return modules


def launches():
    """The stand-in's launches so far, by kernel or torch operation."""
    return {name: n for name, n in vllm_standin.LAUNCHES.items() if n}
