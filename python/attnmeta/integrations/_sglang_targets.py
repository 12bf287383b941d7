# SPDX-License-Identifier: Apache-2.0
"""The SGLang kernels routed through attnmeta, as a table: each target is
one Triton kernel of SGLang's, the modules that define it, the arguments
it must take, and how its arguments become a call of an attnmeta drop-in
(attnmeta._sglang_dropins). Every module-level binding of the kernel in
the loaded sglang modules is replaced by a RoutedKernel (the defining
module, SGLang's re-exports and the backends that imported the name);
modules imported later take the routed object from the defining module."""

from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple

from .. import _sglang_dropins
from ._sglang_functions import FUNCTION_TARGETS, route_function
from ._sglang_handle import PACKAGE, SglangPatch
from ._vllm_handle import rebind_everywhere
from ._vllm_kernels import RoutedKernel

KV_INDICES = "sglang.kernels.ops.kvcache.kv_indices"
ATTENTION_UTILS = "sglang.srt.layers.attention.utils"
DEFINING_MODULES = (KV_INDICES, ATTENTION_UTILS)
# EAGLE's draft decode kernel: its newest home, the older ones (spec_utils
# re-exports it; eagle_utils' older form takes other arguments and is left alone)
DRAFT_MODULES = ("sglang.kernels.ops.speculative.cache_locs",
                 "sglang.srt.speculative.triton_ops.cache_locs",
                 "sglang.srt.speculative.spec_utils", "sglang.srt.speculative.eagle_utils")

SLOT_LIST_ARGS = ("req_to_token_ptr", "req_pool_indices_ptr", "page_kernel_lens_ptr",
                  "kv_indptr", "kv_start_idx", "kv_indices_ptr", "req_to_token_ptr_stride")
PAGE_TABLE_ARGS = ("req_to_token_ptr", "req_pool_indices_ptr", "page_kernel_lens_ptr",
                   "kv_start_idx", "kv_indices_ptr", "req_to_token_ptr_stride",
                   "kv_indices_ptr_stride")
DRAFT_ARGS = ("req_pool_indices", "req_to_token", "paged_kernel_lens", "kv_indices", "kv_indptr",
              "positions", "pool_len", "kv_indices_stride", "kv_indptr_stride", "bs_upper",
              "iter_upper", "num_tokens_upper", "page_size")
# decode context parallel (DCP): one rank's slot list and MLA page table
DCP_MODULES = ("sglang.kernels.ops.attention.dcp_kernels",)
DCP_SLOT_LIST_ARGS = ("req_to_token_ptr", "req_pool_indices_ptr", "dcp_kernel_lens_ptr",
                      "kv_indptr", "kv_start_idx", "kv_indices_ptr", "req_to_token_ptr_stride",
                      "dcp_size", "dcp_rank")
DCP_PAGE_TABLE_ARGS = ("req_to_token_ptr", "req_pool_indices_ptr", "local_seq_lens_ptr",
                       "block_kv_indices_ptr", "req_to_token_stride", "block_table_stride",
                       "PHYSICAL_PAGE_SIZE", "DCP_SIZE", "DCP_RANK")
CHUNKED_ARGS = ("req_to_token_ptr", "req_pool_indices_ptr", "chunk_start_idx_ptr",
                "chunk_seq_lens_ptr", "chunk_cu_seq_lens_ptr", "chunk_kv_indices_ptr",
                "req_to_token_ptr_stride")


class Target(NamedTuple):
    kernel: str  # the kernel's name in SGLang's modules
    args: Tuple[str, ...]  # its first parameters, exactly
    constexprs: Tuple[str, ...]  # parameters it may take after them (passed on by name)
    dropin: Any  # the drop-in, launched as dropin[grid](...)
    dropin_args: Tuple[str, ...]  # the kernel's parameters in the drop-in's order
    modules: Tuple[str, ...] = DEFINING_MODULES  # where SGLang defines it, newest first


TARGETS = {
    # the CSR slot list of FlashInfer, Triton, aiter and the speculative paths
    "flashinfer_kv_indices": Target(
        "create_flashinfer_kv_indices_triton", SLOT_LIST_ARGS,
        ("ENTRY_PAGE_SIZE", "TOKEN_BLOCK_PARALLEL", "token_mapping"),
        _sglang_dropins.create_flashinfer_kv_indices_triton, SLOT_LIST_ARGS),
    # the padded page table of FlashMLA, Cutlass MLA and FlashInfer MLA
    "flashmla_kv_indices": Target(
        "create_flashmla_kv_indices_triton", PAGE_TABLE_ARGS,
        ("NUM_PAGE_PER_BLOCK", "PAGED_SIZE"),
        _sglang_dropins.create_flashmla_kv_indices_triton, PAGE_TABLE_ARGS),
    # MLA's chunked prefix: the slot list with the chunk's start, lengths and offsets
    "chunked_prefix_kv_indices": Target(
        "create_chunked_prefix_cache_kv_indices", CHUNKED_ARGS, (),
        _sglang_dropins.create_flashinfer_kv_indices_triton,
        ("req_to_token_ptr", "req_pool_indices_ptr", "chunk_seq_lens_ptr",
         "chunk_cu_seq_lens_ptr", "chunk_start_idx_ptr", "chunk_kv_indices_ptr",
         "req_to_token_ptr_stride")),
    # EAGLE's multi-step draft decode lists (FlashInfer, Triton, aiter, TRTLLM draft backends)
    "draft_decode_kv_indices": Target(
        "generate_draft_decode_kv_indices", DRAFT_ARGS, ("ENTRY_PAGE_SIZE",),
        _sglang_dropins.generate_draft_decode_kv_indices, DRAFT_ARGS, DRAFT_MODULES),
    # DCP: the rank's slot list (FlashInfer, Triton) and MLA page table (TRTLLM, TokenSpeed,
    # aiter, Ascend MLA)
    "dcp_kv_indices": Target(
        "create_triton_kv_indices_for_dcp_triton", DCP_SLOT_LIST_ARGS, (),
        _sglang_dropins.create_triton_kv_indices_for_dcp_triton, DCP_SLOT_LIST_ARGS, DCP_MODULES),
    "dcp_mla_page_table": Target(
        "create_mla_kv_page_table_for_dcp", DCP_PAGE_TABLE_ARGS, ("PAGES_PER_BLOCK",),
        _sglang_dropins.create_mla_kv_page_table_for_dcp, DCP_PAGE_TABLE_ARGS, DCP_MODULES),
}  # type: Dict[str, Target]


def _why_not(target: Target, kernel: Any) -> Optional[str]:
    """None when the kernel takes the target's arguments, else why not."""
    names = getattr(kernel, "arg_names", None)
    if names is None:
        return "%s has no arg_names (not a Triton kernel)" % target.kernel
    names = tuple(names)
    head, rest = names[: len(target.args)], names[len(target.args):]
    if head != target.args or not set(rest) <= set(target.constexprs):
        return "%s takes (%s), not (%s[, %s])" % (
            target.kernel, ", ".join(names), ", ".join(target.args), ", ".join(target.constexprs))
    return None


def _route(target: Target) -> Callable[[Dict[str, Any], Tuple[Any, ...]], bool]:
    def route(named: Dict[str, Any], grid: Tuple[Any, ...]) -> bool:
        args = [named.get(name) for name in target.dropin_args]
        constexprs = {name: named[name] for name in target.constexprs if name in named}
        try:
            target.dropin[grid](*args, **constexprs)
        except NotImplementedError as exc:
            # a form attnmeta does not build yet: it wrote nothing, SGLang's kernel runs
            raise ValueError("not built in attnmeta: %s" % exc) from exc
        return True

    return route


def route_target(patch: SglangPatch, label: str) -> None:
    target = TARGETS[label]
    original = patch.find(label, target.modules, target.kernel)
    if original is None:
        return
    why = _why_not(target, original)
    if why:
        patch.skipped[label] = why
        return
    routed = RoutedKernel(original, original.arg_names, _route(target), patch, label)
    if rebind_everywhere(patch, original, routed, label, prefix=PACKAGE):
        patch.apply(label)


# Routed only when asked: SGLang's chunk starts and lengths are int32, which
# the pool operation takes as int64 copies (two launches more than SGLang's one).
OFF_BY_DEFAULT = {"chunked_prefix_kv_indices": "off by default (its int32 chunk starts and "
                  "lengths are copied to int64 first): chunked_prefix_kv_indices=True routes it"}


def wanted(caller: str, asked: Dict[str, bool]) -> Dict[str, bool]:
    """Each target's on or off from the caller's keywords and the defaults;
    TypeError for a name that is no target."""
    every = list(TARGETS) + list(FUNCTION_TARGETS)
    unknown = sorted(set(asked) - set(every))
    if unknown:
        raise TypeError("%s: unknown target(s) %s; targets are %s"
                        % (caller, ", ".join(unknown), ", ".join(every)))
    return {label: bool(asked.get(label, label not in OFF_BY_DEFAULT)) for label in every}


def run(patch: SglangPatch, on: Dict[str, bool]) -> None:
    for label in on:
        if not on[label]:
            patch.skipped[label] = OFF_BY_DEFAULT.get(label, "turned off by the caller")
        elif label in FUNCTION_TARGETS:
            route_function(patch, label)
        else:
            route_target(patch, label)
