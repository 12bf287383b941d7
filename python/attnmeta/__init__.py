# SPDX-License-Identifier: Apache-2.0
"""attnmeta: per-step attention metadata for LLM serving, built in one
kernel launch (CUDA, HIP or the CPU backend) from torch tensors or NumPy
arrays.

Quick tour::

    import attnmeta
    # token -> request map, on torch's current stream, no sync, graph-safe
    attnmeta.compute_token_to_req_indices(qsl, out, num_mapped_tokens, num_tokens)
    # every product of one step in one launch, over persistent buffers
    plan = attnmeta.StepPlan(qsl, seq_lens=seq_lens, block_table=table,
                             seq_lens_out=seq_out, block_table_out=table_out,
                             positions=pos, slot_mapping=slots, block_size=64)
    plan.build(num_reqs, num_tokens)
    # one layer's sparse top-k indices -> global KV slots (engine arguments)
    out, counts = attnmeta.convert_req_index_to_global_index(
        req_id, block_table, topk_indices, BLOCK_SIZE=64, NUM_TOPK_TOKENS=2048,
        return_valid_counts=True)

The C library is found as described in ``attnmeta._lib`` (``$ATTNMETA_LIBRARY``
first); ``attnmeta.library_path`` says which file was loaded.
"""

from ._lib import (
    AttnmetaArgumentError,
    AttnmetaError,
    Backend,
    ErrorFlag,
    Status,
    backend_name,
    build_commit,
    describe_error_flags,
    library_candidates,
    library_path,
    status_string,
    version,
    version_string,
)
from ._version import __version__
from ._context import Context, clear_context_cache, get_context
from ._devices import backend_device_count, backend_module_path, backend_targets
from ._dsv4_dropins import (
    c128a_row_width,
    compute_c128a_indices_and_lens,
    compute_swa_indices_and_lens,
    get_compressed_slot_mapping,
    get_pcp_compressed_slot_mapping,
)
from ._topk import (
    TopkPlan,
    convert_req_index_to_global_index,
    filter_and_convert_dcp_index,
    filter_peer_slots_to_owner_local,
)
from ._dcp_peer_dropins import (
    PeerTablePlan,
    build_rotated_dcp_peer_block_table,
    convert_global_indices_to_dcp_peer_slots,
)
from ._sglang_dropins import (
    create_flashinfer_kv_indices_triton,
    create_flashmla_kv_indices_triton,
    create_kv_indptr_and_indices,
    create_mla_kv_page_table_for_dcp,
    create_triton_kv_indices_for_dcp_triton,
    fused_dsa_decode_metadata,
    fused_dsa_draft_extend_metadata,
    fused_dsa_target_verify_metadata,
    generate_draft_decode_kv_indices,
    normal_decode_set_metadata,
)
from ._step import (
    IndexerDecodeMetadata,
    StepPlan,
    build_step,
    compute_token_to_req_indices,
    token_to_req,
)

__all__ = [
    "AttnmetaArgumentError",
    "AttnmetaError",
    "Backend",
    "Context",
    "ErrorFlag",
    "IndexerDecodeMetadata",
    "PeerTablePlan",
    "Status",
    "StepPlan",
    "__version__",
    "backend_device_count",
    "backend_module_path",
    "backend_name",
    "backend_targets",
    "build_commit",
    "build_rotated_dcp_peer_block_table",
    "build_step",
    "c128a_row_width",
    "clear_context_cache",
    "compute_c128a_indices_and_lens",
    "compute_swa_indices_and_lens",
    "compute_token_to_req_indices",
    "convert_global_indices_to_dcp_peer_slots",
    "convert_req_index_to_global_index",
    "create_flashinfer_kv_indices_triton",
    "create_flashmla_kv_indices_triton",
    "create_kv_indptr_and_indices",
    "create_mla_kv_page_table_for_dcp",
    "create_triton_kv_indices_for_dcp_triton",
    "describe_error_flags",
    "filter_and_convert_dcp_index",
    "filter_peer_slots_to_owner_local",
    "fused_dsa_decode_metadata",
    "fused_dsa_draft_extend_metadata",
    "fused_dsa_target_verify_metadata",
    "generate_draft_decode_kv_indices",
    "get_compressed_slot_mapping",
    "get_pcp_compressed_slot_mapping",
    "get_context",
    "library_candidates",
    "library_path",
    "normal_decode_set_metadata",
    "status_string",
    "token_to_req",
    "TopkPlan",
    "version",
    "version_string",
]

# torch imported first: its custom operators (attnmeta.ops) are registered
# now, so torch.compile finds them from the first call.
def _register_torch_ops_if_imported() -> None:
    import sys

    from ._register import register_torch_ops

    if "torch" in sys.modules:
        register_torch_ops()


_register_torch_ops_if_imported()
del _register_torch_ops_if_imported
