# SPDX-License-Identifier: Apache-2.0
"""The stand-in's EAGLE draft decode part, written from reading SGLang's
code: generate_draft_decode_kv_indices in its defining module
(sglang.kernels.ops.speculative.cache_locs), re-exported by
sglang.srt.speculative.spec_utils, and the multi-step draft backends'
common template, which imports the name at import time and launches it as
``kernel[(steps, num_seqs, topk)](...)`` with SGLang's arguments.

The kernel is a NumPy loop over SGLang's programs (iters, bid, topk_id):
each writes its request's tokens and iters draft slots into step row
iters - 1 and one kv_indptr entry (the entry of z = 0 goes to bs * topk,
so entry 0 is left as the buffer holds it). In-bounds data only."""

import numpy as np

import vllm_standin

CACHE_LOCS = "sglang.kernels.ops.speculative.cache_locs"
SPEC_UTILS = "sglang.srt.speculative.spec_utils"
DRAFT_BACKEND = "sglang.srt.layers.attention.flashinfer_backend"
MODULES = [CACHE_LOCS, SPEC_UTILS]

DRAFT_ARGS = ["req_pool_indices", "req_to_token", "paged_kernel_lens", "kv_indices", "kv_indptr",
              "positions", "pool_len", "kv_indices_stride", "kv_indptr_stride", "bs_upper",
              "iter_upper", "num_tokens_upper", "page_size"]


def next_power_of_2(n):
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _draft_kernel(grid, req_pool_indices, req_to_token, paged_kernel_lens, kv_indices, kv_indptr,
                  positions, pool_len, kv_indices_stride, kv_indptr_stride, bs_upper, iter_upper,
                  num_tokens_upper, page_size):
    num_steps, num_seqs, topk = grid
    flat_pool = req_to_token.reshape(-1)
    out, ptr = kv_indices.reshape(-1), kv_indptr.reshape(-1)
    lens = paged_kernel_lens.astype(np.int64)
    pos = positions.astype(np.int64)
    for step in range(num_steps):
        iters = step + 1
        row_out = step * int(kv_indices_stride)
        row_ptr = step * int(kv_indptr_stride)
        for bid in range(num_seqs):
            seq_len = int(lens[bid])
            cum = int(lens[:min(bid, bs_upper)].sum())
            base_pool = int(req_pool_indices[bid]) * int(pool_len)
            for topk_id in range(topk):
                at = row_out + cum * topk + bid * iters * topk + topk_id * (seq_len + iters)
                out[at:at + seq_len] = flat_pool[base_pool:base_pool + seq_len]
                if page_size == 1 or topk == 1:
                    start = seq_len + topk_id * num_steps
                else:
                    last = seq_len % page_size
                    pages = (last + num_steps + page_size - 1) // page_size
                    start = seq_len // page_size * page_size + topk_id * pages * page_size + last
                n = min(iters, iter_upper)
                out[at + seq_len:at + seq_len + n] = flat_pool[base_pool + start:
                                                               base_pool + start + n]
                zid = bid * topk + topk_id
                if zid == 0:
                    zid = num_seqs * topk
                ptr[row_ptr + zid] = int(pos[:min(zid, num_tokens_upper)].sum()) + zid * iters


def _fill_draft_backend(mod):
    def draft_common_template(req_pool_indices, req_to_token, seq_lens, positions,
                              kv_indices_buffer, kv_indptr, num_seqs, topk, num_steps, page_size):
        """The multi-step draft backends' common template (FlashInfer,
        Triton, aiter): one launch for every step's lists."""
        bs = topk * num_seqs
        mod.generate_draft_decode_kv_indices[(num_steps, num_seqs, topk)](
            req_pool_indices, req_to_token, seq_lens, kv_indices_buffer, kv_indptr, positions,
            req_to_token.shape[1], kv_indices_buffer.shape[1], kv_indptr.shape[1],
            next_power_of_2(num_seqs), next_power_of_2(num_steps), next_power_of_2(bs),
            page_size)

    mod.draft_common_template = draft_common_template


def fill(modules):
    """The draft modules' contents (their modules already made)."""
    kernel = vllm_standin.Kernel("generate_draft_decode_kv_indices", _draft_kernel, DRAFT_ARGS)
    modules[CACHE_LOCS].generate_draft_decode_kv_indices = kernel
    modules[SPEC_UTILS].generate_draft_decode_kv_indices = kernel
    modules[DRAFT_BACKEND].generate_draft_decode_kv_indices = kernel
    _fill_draft_backend(modules[DRAFT_BACKEND])
