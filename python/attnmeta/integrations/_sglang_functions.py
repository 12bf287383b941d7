# SPDX-License-Identifier: Apache-2.0
"""SGLang's plain metadata functions routed through attnmeta (contract
sections 12 and 13): each target is one function of SGLang's, the modules
that may define it, and the drop-in for each parameter list it has had.
Every module-level binding of the function in the loaded sglang modules
is replaced by a wrapper that makes the drop-in's one launch, or hands the
call to SGLang's function (counted in ``handle.fallbacks``) when the
drop-in refuses the arguments before writing anything."""

from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple

from .. import _sglang_dropins as dropins
from .. import _sglang_graph_dropins as graph_dropins
from ._sglang_handle import PACKAGE, SglangPatch
from ._vllm_handle import params, rebind_everywhere, wraps


class Form(NamedTuple):
    args: Tuple[str, ...]  # the function's parameters, exactly
    dropin: Callable[..., None]


class FunctionTarget(NamedTuple):
    function: str
    modules: Tuple[str, ...]  # defining modules, newest first
    forms: Tuple[Form, ...]


FA3_MODULES = ("sglang.kernels.ops.attention.metadata",
               "sglang.srt.layers.attention.flashattention_backend")
DSA_MODULES = ("sglang.kernels.ops.attention.dsa_metadata",)
TRTLLM_MLA_MODULES = ("sglang.kernels.ops.kvcache.trtllm_mla_graph_metadata",)
TRTLLM_MHA_MODULES = ("sglang.kernels.ops.kvcache.trtllm_mha_graph_metadata",)

FUNCTION_TARGETS = {
    "fa3_decode_metadata": FunctionTarget("normal_decode_set_metadata", FA3_MODULES, (
        Form(("cache_seqlens_int32", "cu_seqlens_k", "page_table", "req_to_token",
              "req_pool_indices", "max_seq_pages", "seq_lens", "seq_len_delta", "page_size",
              "swa_page_table", "token_to_kv_pool", "skip_page_table"),
             dropins.normal_decode_set_metadata),
        Form(("cache_seqlens_int32", "cu_seqlens_k", "page_table", "req_to_token",
              "req_pool_indices", "strided_indices", "max_seq_pages", "seq_lens",
              "seq_len_delta", "page_size", "swa_page_table", "token_to_kv_pool"),
             dropins.normal_decode_set_metadata_strided),
    )),
    "dsa_decode_metadata": FunctionTarget("fused_dsa_decode_metadata", DSA_MODULES, (
        Form(("seq_lens", "req_pool_indices", "req_to_token", "cache_seqlens", "cu_seqlens_k",
              "page_table_1", "dsa_cache_seqlens", "dsa_cu_seqlens_k", "real_page_table", "bs",
              "max_len", "dsa_index_topk", "real_page_size", "index_kpool"),
             dropins.fused_dsa_decode_metadata),
    )),
    "dsa_target_verify_metadata": FunctionTarget("fused_dsa_target_verify_metadata", DSA_MODULES, (
        Form(("seq_lens", "req_pool_indices", "req_to_token", "cache_seqlens", "cu_seqlens_k",
              "page_table_1", "seqlens_expanded", "dsa_cache_seqlens", "dsa_cu_seqlens_k",
              "real_page_table", "bs", "max_seqlen_k", "dsa_index_topk", "real_page_size",
              "next_n", "paged_mqa_ctx_lens_2d", "index_kpool"),
             dropins.fused_dsa_target_verify_metadata),
    )),
    "dsa_draft_extend_metadata": FunctionTarget("fused_dsa_draft_extend_metadata", DSA_MODULES, (
        Form(("seq_lens", "extend_seq_lens", "req_pool_indices", "req_to_token", "cache_seqlens",
              "cu_seqlens_k", "page_table_1", "seqlens_expanded", "dsa_cache_seqlens",
              "dsa_cu_seqlens_k", "real_page_table", "bs", "total_len", "max_seqlen_k",
              "dsa_index_topk", "real_page_size", "max_extend_len", "max_total_len",
              "static_extend_len", "index_kpool"),
             dropins.fused_dsa_draft_extend_metadata),
    )),
}  # type: Dict[str, FunctionTarget]

# The TRT-LLM backends' fused CUDA-graph updates (keyword-only functions).
_MHA_ARGS = ("req_pool_indices", "seq_lens", "req_to_token", "cache_seqlens", "cu_seqlens_k",
             "page_table", "bs", "seqlen_offset", "max_seq_pages", "page_size", "swa_mapping",
             "swa_page_table", "out_cache_loc", "swa_out_cache_loc", "cu_seqlens_q", "qlens",
             "q_stride", "q_mode")
FUNCTION_TARGETS.update({
    "trtllm_mla_graph_metadata": FunctionTarget(
        "update_trtllm_mla_graph_metadata", TRTLLM_MLA_MODULES, (
            Form(("req_pool_indices", "seq_lens", "req_to_token", "block_kv_indices", "bs",
                  "seqlen_offset", "page_size", "seq_lens_k"),
                 graph_dropins.update_trtllm_mla_graph_metadata),
        )),
    "trtllm_mha_graph_metadata": FunctionTarget(
        "update_trtllm_mha_graph_metadata", TRTLLM_MHA_MODULES, (
            Form(_MHA_ARGS + ("skip_page_table",), graph_dropins.update_trtllm_mha_graph_metadata),
            Form(_MHA_ARGS, graph_dropins.update_trtllm_mha_graph_metadata_full_width),
        )),
    "fa3_draft_extend_metadata": FunctionTarget("draft_extend_set_metadata", FA3_MODULES, (
        Form(("cache_seqlens_int32", "cu_seqlens_k", "cu_seqlens_q", "page_table",
              "req_to_token", "req_pool_indices", "seq_lens", "extend_seq_lens", "page_size",
              "full_to_swa_index_mapping", "swa_page_table", "out_cache_loc",
              "swa_out_cache_loc"),
             dropins.draft_extend_set_metadata),
    )),
})

# Targets left to SGLang, and why (docs/integration-sglang.md, "What stays SGLang's").
NOT_BUILT = {}  # type: Dict[str, str]


def _form(target: FunctionTarget, fn: Any) -> Optional[Form]:
    have = params(fn)
    for form in target.forms:
        if have == form.args:
            return form
    return None


def _routed(original: Callable[..., Any], dropin: Callable[..., None], patch: SglangPatch,
            label: str) -> Callable[..., Any]:
    @wraps(original)
    def routed(*args: Any, **kw: Any) -> Any:
        try:
            dropin(*args, **kw)
        except (NotImplementedError, ValueError) as exc:  # refused before writing anything
            patch.fell_back(label, "%s: %s" % (type(exc).__name__, exc))
            return original(*args, **kw)
        patch.count(label)
        return None

    return routed


def route_function(patch: SglangPatch, label: str) -> None:
    if label in NOT_BUILT:
        patch.skipped[label] = NOT_BUILT[label]
        return
    target = FUNCTION_TARGETS[label]
    original = patch.find(label, target.modules, target.function)
    if original is None:
        return
    form = _form(target, original)
    if form is None:
        patch.skipped[label] = "%s takes (%s), not a form attnmeta knows" % (
            target.function, ", ".join(params(original) or ()))
        return
    routed = _routed(original, form.dropin, patch, label)
    if rebind_everywhere(patch, original, routed, label, prefix=PACKAGE):
        patch.apply(label)
