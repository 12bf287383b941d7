# SPDX-License-Identifier: Apache-2.0
"""Routing SGLang's index-buffer kernels through attnmeta.

:func:`patch_sglang` replaces, in the running process only, SGLang's Triton
kernels that build the attention backends' index buffers from the request
pool by objects launched the same way (``kernel[grid](...)``, SGLang's
arguments) that make one ``attnmeta_build_pool_indices`` launch into the
same buffers (so CUDA graphs keep their addresses):

``flashinfer_kv_indices``
    ``create_flashinfer_kv_indices_triton``, the CSR slot list (FlashInfer,
    FlashInfer MLA, Triton, aiter, the speculative and tree paths);
``flashmla_kv_indices``
    ``create_flashmla_kv_indices_triton``, the padded page table (FlashMLA,
    Cutlass MLA and the other MLA backends built on FlashInfer MLA's);
``chunked_prefix_kv_indices``
    ``create_chunked_prefix_cache_kv_indices``, MLA's chunked prefix (the
    slot list with the chunk's start and offsets); off unless asked for,
    as its int32 starts and lengths are copied to int64 first;
``draft_decode_kv_indices``
    ``generate_draft_decode_kv_indices``, EAGLE's multi-step draft decode
    lists (each step's slot list and indptr; grid ``(steps, bs, topk)``),
    defined in ``sglang.kernels.ops.speculative.cache_locs`` (older:
    ``sglang.srt.speculative.triton_ops.cache_locs``, ``spec_utils``);
``fa3_decode_metadata``
    ``normal_decode_set_metadata``, FA3's lengths, their prefix sum and
    page tables (newest form, and the older one with ``strided_indices``);
``dsa_decode_metadata``, ``dsa_target_verify_metadata``, ``dsa_draft_extend_metadata``
    ``fused_dsa_decode_metadata``, ``fused_dsa_target_verify_metadata`` and
    ``fused_dsa_draft_extend_metadata``,
    the DSA lengths, their clips and prefix sums and the two page tables
    (plain functions: a wrapper makes the drop-in's one launch, or calls
    SGLang's function when the drop-in refuses the arguments).
``trtllm_mla_graph_metadata``, ``trtllm_mha_graph_metadata``
    ``update_trtllm_mla_graph_metadata`` and ``update_trtllm_mha_graph_metadata``,
    the TRT-LLM backends' fused CUDA-graph updates (lengths, cumulative
    lengths, page tables, ``cu_seqlens_q`` of ``q_mode`` 1 and 2); the MHA
    update's ``swa_out_cache_loc`` form calls SGLang's function;
``fa3_draft_extend_metadata``
    FA3's ``draft_extend_set_metadata`` (lengths, both prefix sums, one
    page-table row a request); its SWA-pool form calls SGLang's function.

Each kernel is found in its defining module
(``sglang.kernels.ops.kvcache.kv_indices``, or
``sglang.srt.layers.attention.utils`` in older trees) and every
module-level binding of it in the loaded sglang modules is replaced: the
re-export in ``utils`` and each backend that imported the name. Modules
imported later, and functions importing the name when they run, take the
routed kernel from the defining module. A kernel whose parameters differ
is left alone, and ``handle.skipped`` says why. A launch in a form attnmeta
does not build yet (``ENTRY_PAGE_SIZE > 1``, ``token_mapping``, int64
``kv_indices``, a grid given as a function) runs SGLang's kernel;
``handle.fallbacks`` counts those.

The cumulative sums in front of the slot list (``kv_indptr[1:bs + 1] =
cumsum(seq_lens)``) are inline torch code in SGLang's backends and stay
SGLang's; :func:`attnmeta.create_kv_indptr_and_indices` does them with the
slot list in one launch for code that calls it. docs/integration-sglang.md
lists what is routed and the launches before and after.

Before the backends build their first step::

    from attnmeta.integrations import sglang as am_sglang

    with am_sglang.patch_sglang() as handle:   # restore() at the end
        print(handle)           # routed targets, and the others with why
        ...                     # SGLang's steps
        print(handle.launches)  # {'flashinfer_kv_indices': 3, ...}
"""

import importlib
from typing import Optional

from . import _sglang_functions, _sglang_handle, _sglang_targets
from ._sglang_handle import SglangPatch

__all__ = ["TARGETS", "SglangPatch", "patch_sglang", "active_patch"]

TARGETS = tuple(_sglang_targets.TARGETS) + tuple(_sglang_functions.FUNCTION_TARGETS)


def active_patch() -> Optional[SglangPatch]:
    """The patch in force, or None."""
    return _sglang_handle.in_force


def patch_sglang(**targets: bool) -> SglangPatch:
    """Routes SGLang's index-buffer kernels through attnmeta (see the
    module's documentation). A keyword per target of :data:`TARGETS` turns
    it on or off (``flashmla_kv_indices=False``; the chunked prefix is off
    unless ``chunked_prefix_kv_indices=True``). Returns the handle; raises
    ImportError when SGLang is not importable and TypeError for an unknown
    target. Calling it again while a patch is in force returns that patch."""
    on = _sglang_targets.wanted("patch_sglang", targets)
    version = getattr(importlib.import_module("sglang"), "__version__", "unknown")
    with _sglang_handle.lock:
        if _sglang_handle.in_force is None:
            patch = SglangPatch(str(version))
            _sglang_targets.run(patch, on)
            if patch.active:
                _sglang_handle.in_force = patch
            return patch
        return _sglang_handle.in_force
