# SPDX-License-Identifier: Apache-2.0
"""Routing vLLM's per-step attention metadata through attnmeta.

:func:`patch_vllm` replaces, in the running process only, the metadata
launches of vLLM's decode step for DeepSeek-V3.2/V4 models by attnmeta
launches into the same buffers (so CUDA graphs keep their addresses):

``token_to_req_indices``
    the method ``CommonAttentionMetadata.token_to_req_indices(buffer)``
    (its per-instance cache kept);
``compute_token_to_req_indices``
    ``vllm.v1.attention.ops.metadata.compute_token_to_req_indices`` and
    every module-level name bound to it (modules that imported it, such as
    the draft-decode update);
``indexer_decode_varlen``
    the varlen (SM100) path of ``DeepseekV32IndexerMetadataBuilder.build``:
    its inline launch of ``_indexer_decode_metadata_kernel``, through an
    object standing in for the kernel in its module (``build`` imports it
    when it runs);
``indexer_decode_flat`` / ``indexer_decode_native``
    ``_prepare_decode_tensors``: the flattened one-row-per-token tensors
    (both of vLLM's branches) and the native ``[B, next_n]`` lengths;
``compressed_slot_mapping``
    ``compressor_utils.get_compressed_slot_mapping`` and its bindings (the
    indexer's and the DeepSeek-V4 builders' compressed groups);
``pcp_compressed_slot_mapping``
    ``compressor_utils.get_pcp_compressed_slot_mapping`` and its bindings
    (each layer's compressed slots from PCP's gathered logical slots);
``swa_decode``
    the decode and prefill launches of
    ``sparse_swa._compute_swa_indices_and_lens_kernel``;
``swa_groups``
    ``SWAWindowMetadata._launch`` of vLLM's batched DeepSeek-V4.1 SWA
    builder (a loaded ``vllm.*.swa_metadata`` module): every SWA group's
    rows in one launch, when the groups' tables are views of one buffer
    at equal spacing (else vLLM's kernel runs, counted in fallbacks);
``c128a_decode``
    ``flashmla_sparse.build_c128a_topk_metadata``: the global C128A rows
    and lengths of the decode tokens and, in a step with prefill tokens,
    their request-local rows (C128A mixed mode), at vLLM's batch width,
    with or without DCP;
``topk_conversion``
    ``sparse_utils.triton_convert_req_index_to_global_index`` and
    ``triton_filter_and_convert_dcp_index`` and their bindings (each
    layer's top-k conversion);
``dcp_peer_views``
    ``sparse_utils.build_rotated_dcp_peer_block_table``,
    ``convert_global_indices_to_dcp_peer_slots`` and
    ``filter_peer_slots_to_owner_local`` and their bindings (the DCP peer
    views: the rotated page table, global indices to peer slots, one
    owner's local slots).

DCP localisation and the compression of lengths stay vLLM's code, run on
the same (global) products as before. A target whose names or parameters
differ from these is left alone, and ``handle.skipped`` says why: targets
are judged by their code, not by vLLM's version string (a source checkout
reports a fallback version). A routed kernel launch whose arguments the
routed path does not cover (another stride, a prefill offset) runs vLLM's
kernel; ``handle.fallbacks`` counts those.

``handle.launches`` counts, per target, the attnmeta launches made (one
per replaced launch sequence); ``handle.reset_counts()`` starts again.

Usage, before the engine builds its first step::

    from attnmeta.integrations.vllm import patch_vllm
    handle = patch_vllm()
    print(handle)            # what was routed, and what was not and why
    ...
    print(handle.launches)   # e.g. {'indexer_decode_varlen': 1, ...}
    handle.restore()
"""

import importlib
from typing import Optional

from . import _vllm_handle, _vllm_targets
from ._vllm_handle import VllmPatch

__all__ = ["TARGETS", "VllmPatch", "patch_vllm", "active_patch"]

TARGETS = _vllm_targets.TARGETS

_GROUPS = {
    "token_to_req_indices": ("token_to_req_indices", "compute_token_to_req_indices"),
    "indexer_decode": ("indexer_decode_varlen", "indexer_decode_flat", "indexer_decode_native"),
    "dsv4": ("compressed_slot_mapping", "pcp_compressed_slot_mapping", "swa_decode",
             "swa_groups", "c128a_decode", "topk_conversion", "dcp_peer_views"),
}

def active_patch() -> Optional[VllmPatch]:
    """The patch in force, or None."""
    return _vllm_handle.in_force


def patch_vllm(*, token_to_req_indices: bool = True, indexer_decode: bool = True,
               dsv4: bool = True, check_version: bool = True, **targets: bool) -> VllmPatch:
    """Routes vLLM's decode-step metadata through attnmeta (see the module's
    documentation). The three groups (``token_to_req_indices``,
    ``indexer_decode``, ``dsv4``) and any single target of :data:`TARGETS`
    (a keyword of its own, e.g. ``swa_decode=False``) can be turned off.
    Returns the handle; raises ImportError when vLLM is not importable and
    TypeError for an unknown target. Calling it again while a patch is in
    force returns that patch. ``check_version`` is accepted for older
    callers and changes nothing: every target is checked by its code."""
    del check_version
    unknown = sorted(set(targets) - set(TARGETS))
    if unknown:
        raise TypeError("patch_vllm: unknown target(s) %s; targets are %s"
                        % (", ".join(unknown), ", ".join(TARGETS)))
    vllm = importlib.import_module("vllm")
    version = str(getattr(vllm, "__version__", "unknown"))
    groups = dict(token_to_req_indices=token_to_req_indices, indexer_decode=indexer_decode,
                  dsv4=dsv4)
    wanted = {}
    for group, names in _GROUPS.items():
        for name in names:
            wanted[name] = bool(targets.get(name, groups[group]))
    with _vllm_handle.lock:
        if _vllm_handle.in_force is not None:
            return _vllm_handle.in_force
        patch = VllmPatch(version)
        _vllm_targets.run(patch, wanted)
        if patch.active:
            _vllm_handle.in_force = patch
        return patch
