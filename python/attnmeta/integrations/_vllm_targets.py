# SPDX-License-Identifier: Apache-2.0
"""The vLLM targets routed through attnmeta, one function each: it checks
the target's shape (names and parameters) and either replaces it, writing
into the same buffers vLLM's code writes, or says in ``patch.skipped`` why
it left it alone."""

import importlib
import threading
from typing import Any, Callable, Dict, Tuple

from ._vllm_handle import MARK, VllmPatch, expect, params, rebind_everywhere, wraps
from ._vllm_kernels import RoutedKernel, row_stride
from ._vllm_swa_groups import swa_groups

BACKEND_MODULES = ("vllm.v1.attention.backend", "vllm.v1.attention.backends.utils")
OPS_METADATA = "vllm.v1.attention.ops.metadata"
INDEXER = "vllm.v1.attention.backends.mla.indexer"
COMPRESSOR = "vllm.v1.attention.backends.mla.compressor_utils"
SPARSE_SWA = "vllm.v1.attention.backends.mla.sparse_swa"
SPARSE_UTILS = "vllm.v1.attention.backends.mla.sparse_utils"
FLASHMLA_SPARSE = "vllm.v1.attention.backends.mla.flashmla_sparse"

TOKEN_MAP_PARAMS = ("query_start_loc", "out", "num_mapped_tokens", "num_tokens")
VARLEN_ARGS = ("query_start_loc", "seq_lens", "block_table", "output_seq_lens",
               "output_block_table", "decode_lens", "indices", "per_req_lens", "num_reqs",
               "num_tokens", "capacity", "input_stride", "output_stride", "BLOCK_COLS")
PREPARE_PARAMS = ("seq_lens", "block_table", "decode_lens", "decode_lens_cpu", "query_start_loc",
                  "num_decodes", "num_decode_tokens", "use_native", "next_n", "max_decode_len")
GLOBAL_PARAMS = ("global_seq_lens", "decode_lens", "decode_lens_cpu", "query_start_loc",
                 "num_decode_tokens", "use_native", "max_decode_len")
VARLEN_INDICES_PARAMS = ("self", "decode_lens", "decode_lens_cpu", "num_decode_tokens")
BUILD_PARAMS = ("self", "common_prefix_len", "common_attn_metadata")
COMPRESSED_PARAMS = ("num_tokens", "query_start_loc", "seq_lens", "block_table", "block_size",
                     "compress_ratio", "out")
COMPRESSED_DCP = ("cp_world_size", "cp_rank", "cp_kv_cache_interleave_size")
PCP_COMPRESSED_PARAMS = ("logical_slot_mapping", "positions", "logical_block_size",
                         "storage_block_size", "compress_ratio", "out")
SWA_ARGS = ("swa_indices_ptr", "swa_indices_stride", "swa_lens_ptr", "window_size",
            "query_start_loc_ptr", "seq_lens_ptr", "token_to_req_indices_ptr",
            "is_valid_token_ptr", "block_table_ptr", "block_table_stride", "block_size",
            "token_offset", "TRITON_BLOCK_SIZE")
# vLLM's kernel since in-image visibility (the DeepSeek-V4 vision model):
# the rows' width and each token's in-image counts, used when HAS_IMAGE
SWA_IMAGE_ARGS = ("swa_indices_ptr", "swa_indices_stride", "swa_lens_ptr", "window_size",
                  "index_width", "left_visible_ptr", "right_visible_ptr", "query_start_loc_ptr",
                  "seq_lens_ptr", "token_to_req_indices_ptr", "is_valid_token_ptr",
                  "block_table_ptr", "block_table_stride", "block_size", "token_offset",
                  "HAS_IMAGE", "TRITON_BLOCK_SIZE")
C128A_PARAMS = ("positions", "compress_ratio", "num_decode_tokens", "token_to_req_indices",
                "block_table", "block_size", "slot_mapping", "global_decode_buffer",
                "decode_lens_buffer", "prefill_buffer", "max_compressed_tokens")
CONVERT_PARAMS = ("req_id", "block_table", "token_indices", "BLOCK_SIZE", "BLOCK_STRIDE_ROWS",
                  "NUM_TOPK_TOKENS", "BLOCK_N", "HAS_PREFILL_WORKSPACE",
                  "prefill_workspace_request_ids", "prefill_workspace_starts",
                  "return_valid_counts")
DCP_CONVERT_PARAMS = ("req_id", "block_table", "token_indices", "dcp_size", "dcp_rank",
                      "cp_kv_cache_interleave_size", "BLOCK_SIZE", "NUM_TOPK_TOKENS", "BLOCK_N",
                      "return_valid_counts", "compact_valid_to_front")

PEER_TABLE_PARAMS = ("gathered_block_tables", "local_rank", "peer_block_stride",
                     "cp_kv_cache_interleave_size", "block_size", "BLOCK_N")
PEER_SLOTS_PARAMS = ("req_id", "block_table", "token_indices", "dcp_size", "blocks_per_peer",
                     "cp_kv_cache_interleave_size", "block_size", "BLOCK_N",
                     "return_valid_counts", "out", "valid_counts_out")
OWNER_FILTER_PARAMS = ("peer_slots", "owner_rank", "dcp_world_size", "blocks_per_peer",
                       "block_size")


def _exactly(have: Any, want: Tuple[str, ...]) -> Any:
    """None when the parameters are exactly `want`, else why not."""
    if have is None:
        return "has parameters that cannot be read"
    if tuple(have) != want:
        return "takes (%s), not (%s)" % (", ".join(have), ", ".join(want))
    return None


def _module(patch: VllmPatch, label: str, name: str) -> Any:
    try:
        return importlib.import_module(name)
    except Exception as exc:  # a vLLM module may fail in other ways than ImportError
        patch.skipped[label] = "cannot import %s: %s: %s" % (name, type(exc).__name__, exc)
        return None


def _attr(patch: VllmPatch, label: str, module: Any, name: str) -> Any:
    value = module.__dict__.get(name) if module is not None else None
    if value is None and module is not None:
        patch.skipped[label] = "%s has no %s" % (module.__name__, name)
    return value


def _function(patch: VllmPatch, label: str, module_name: str, name: str, want: Tuple[str, ...],
              check: Callable[[Any, Tuple[str, ...]], Any] = _exactly) -> Any:
    """Function ``name`` of module ``module_name`` when ``check`` finds its
    parameters as ``want`` (default: exactly those); else None, with why in
    ``patch.skipped[label]``."""
    original = _attr(patch, label, _module(patch, label, module_name), name)
    if original is None:
        return None
    why = check(params(original), want)
    if why:
        patch.skipped[label] = name + " " + why
        return None
    return original


def _takes(patch: VllmPatch, label: str, kernel: Any, name: str, want: Tuple[str, ...]) -> bool:
    """Whether Triton kernel ``name`` takes exactly the arguments ``want``;
    if not, why goes in ``patch.skipped[label]``."""
    names = getattr(kernel, "arg_names", None)
    if names is not None and tuple(names) == want:
        return True
    patch.skipped[label] = "%s takes (%s), not (%s)" % (
        name, ", ".join(names or ("?",)), ", ".join(want))
    return False


def _bound(signature: Any, args: Any, kwargs: Any) -> Dict[str, Any]:
    """A call's arguments by parameter name, the defaults filled in."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


# ---------------------------------------------------------------------------
# the token map: CommonAttentionMetadata.token_to_req_indices and every
# binding of vllm.v1.attention.ops.metadata.compute_token_to_req_indices


def token_map_method(patch: VllmPatch) -> None:
    label = "token_to_req_indices"
    cls = None
    for name in BACKEND_MODULES:
        try:
            cls = getattr(importlib.import_module(name), "CommonAttentionMetadata", None)
        except ImportError:
            continue
        if cls is not None:
            break
    if cls is None:
        patch.skipped[label] = "no CommonAttentionMetadata in %s" % " or ".join(BACKEND_MODULES)
        return
    original = cls.__dict__.get("token_to_req_indices")
    if not callable(original) or params(original) != ("self", "buffer"):
        patch.skipped[label] = "CommonAttentionMetadata.token_to_req_indices is not (self, buffer)"
        return
    from .. import compute_token_to_req_indices

    @wraps(original)
    def token_to_req_indices(self: Any, buffer: Any) -> Any:
        num_tokens = self.num_actual_tokens
        cache = getattr(self, "_token_to_req_indices_cache", None)
        if cache is not None:
            return cache[:num_tokens]
        num_mapped = int(self.query_start_loc_cpu[-1])
        total = max(num_mapped, num_tokens)
        if buffer.shape[0] < total:
            raise ValueError("token_to_req_indices: buffer holds %d entries, %d needed"
                             % (buffer.shape[0], total))
        compute_token_to_req_indices(self.query_start_loc, buffer, num_mapped, total)
        patch.count(label)
        self._token_to_req_indices_cache = buffer[:total]
        return self._token_to_req_indices_cache[:num_tokens]

    patch.replace(cls, "token_to_req_indices", token_to_req_indices, label)
    patch.apply(label)


def token_map_function(patch: VllmPatch) -> None:
    label = "compute_token_to_req_indices"
    original = _function(patch, label, OPS_METADATA, "compute_token_to_req_indices",
                         TOKEN_MAP_PARAMS, expect)
    if original is None:
        return
    from .. import compute_token_to_req_indices as ours

    @wraps(original)
    def compute_token_to_req_indices(query_start_loc: Any, out: Any, num_mapped_tokens: int,
                                     num_tokens: int) -> Any:
        # vLLM maps nothing for a negative count; attnmeta reads a negative
        # count as "the device's total", so pass 0 for it.
        got = ours(query_start_loc, out, max(int(num_mapped_tokens), 0), int(num_tokens))
        patch.count(label)
        return got

    rebind_everywhere(patch, original, compute_token_to_req_indices, label)
    patch.apply(label)


# ---------------------------------------------------------------------------
# the sparse indexer's decode metadata: varlen (inline kernel launch),
# flattened and native (DeepseekV32IndexerMetadataBuilder._prepare_decode_tensors)


_building = threading.local()


def wrap_build(patch: VllmPatch, cls: Any, label: str) -> None:
    """build() keeps its common metadata where the routed methods find it:
    they see query_start_loc[:num_decodes], and a launch needs the boundary
    after the last decode request too. Once per class."""
    build = cls.__dict__["build"]
    if hasattr(build, MARK):
        return

    @wraps(build)
    def patched_build(self: Any, common_prefix_len: Any, common_attn_metadata: Any, *args: Any,
                      **kwargs: Any) -> Any:
        previous = getattr(_building, "common", None)
        _building.common = common_attn_metadata
        try:
            return build(self, common_prefix_len, common_attn_metadata, *args, **kwargs)
        finally:
            _building.common = previous

    patch.replace(cls, "build", patched_build, label)


def _indexer_builder(patch: VllmPatch, labels: Any) -> Any:
    """The indexer's builder class when its build() is (self,
    common_prefix_len, common_attn_metadata, ...), else None (and why)."""
    module = None
    for label in labels:
        module = _module(patch, label, INDEXER)
    cls = None
    for label in labels:
        cls = _attr(patch, label, module, "DeepseekV32IndexerMetadataBuilder")
    if cls is None:
        return None
    build = cls.__dict__.get("build")
    why = "has no build" if not callable(build) else expect(params(build), BUILD_PARAMS)
    if why:
        for label in labels:
            patch.skipped[label] = "DeepseekV32IndexerMetadataBuilder.build " + why
        return None
    return cls


def indexer_varlen(patch: VllmPatch) -> None:
    """The varlen path: the inline launch of _indexer_decode_metadata_kernel
    in build(), and, in vLLM before that kernel (the varlen path through
    _prepare_decode_tensors), _build_varlen_decode_indices."""
    label = "indexer_decode_varlen"
    from .._step import build_step

    module = _module(patch, label, OPS_METADATA)
    kernel = module.__dict__.get("_indexer_decode_metadata_kernel") if module else None
    if kernel is None:
        if _varlen_indices(patch, label, build_step):
            patch.skipped.pop(label, None)
            patch.apply(label)
        elif label not in patch.skipped:
            patch.skipped[label] = ("%s has no _indexer_decode_metadata_kernel and the indexer "
                                    "no _build_varlen_decode_indices" % OPS_METADATA)
        return
    if not _takes(patch, label, kernel, "_indexer_decode_metadata_kernel", VARLEN_ARGS):
        return

    def route(a: Dict[str, Any], grid: Tuple[Any, ...]) -> bool:
        table, out_table = a["block_table"], a["output_block_table"]
        cols = int(a["BLOCK_COLS"])
        if (row_stride(table) != int(a["input_stride"])
                or row_stride(out_table) != int(a["output_stride"])
                or len(table.shape) != 2 or cols > table.shape[1]):
            return False
        num_reqs, num_tokens = int(a["num_reqs"]), int(a["num_tokens"])
        build_step(a["query_start_loc"][: num_reqs + 1], num_tokens, num_reqs=num_reqs,
                   seq_lens=a["seq_lens"], block_table=table[:, :cols],
                   seq_lens_out=a["output_seq_lens"], block_table_out=out_table,
                   decode_lens_out=a["decode_lens"], req_indices_out=a["indices"],
                   per_req_lens_out=a["per_req_lens"], capacity=int(a["capacity"]))
        return True

    # build() imports the kernel from its module when it runs, so replacing
    # it there (and wherever a module imported it) is enough.
    rebind_everywhere(patch, kernel, RoutedKernel(kernel, VARLEN_ARGS, route, patch, label), label)
    patch.apply(label)


def _varlen_indices(patch: VllmPatch, label: str, build_step: Any) -> bool:
    """_build_varlen_decode_indices(decode_lens, decode_lens_cpu,
    num_decode_tokens): each token's request, padding tokens numbered on
    past the requests, into decode_indices_buffer. True when routed."""
    cls = _indexer_builder(patch, [label])
    method = cls.__dict__.get("_build_varlen_decode_indices") if cls is not None else None
    if method is None or params(method) != VARLEN_INDICES_PARAMS:
        return False

    @wraps(method)
    def build_varlen_decode_indices(self: Any, decode_lens: Any, decode_lens_cpu: Any,
                                    num_decode_tokens: int) -> Any:
        common = getattr(_building, "common", None)
        if common is None:
            patch.fell_back(label)
            return method(self, decode_lens, decode_lens_cpu, num_decode_tokens)
        num_decodes = int(decode_lens.shape[0])
        out = self.decode_indices_buffer
        build_step(common.query_start_loc[: num_decodes + 1], num_decode_tokens,
                   num_reqs=num_decodes, req_indices_out=out)
        patch.count(label)
        return out[:num_decode_tokens]

    wrap_build(patch, cls, label)
    patch.replace(cls, "_build_varlen_decode_indices", build_varlen_decode_indices, label)
    return True


def _uniform_boundaries(builder: Any, like: Any, per_request: int) -> Any:
    """[0, n, 2n, ...] up to the builder's capacity, kept on the builder
    (made once per decode width, outside graph replays)."""
    cache = builder.__dict__.setdefault("_attnmeta_uniform_qsl", {})
    got = cache.get(per_request)
    if got is None:
        count = int(builder.decode_seq_lens_buffer.shape[0]) // per_request + 1
        if hasattr(like, "new_full"):  # torch
            import torch

            got = torch.arange(count, dtype=torch.int32, device=like.device) * per_request
        else:
            import numpy as np

            got = np.arange(count, dtype=np.int32) * per_request
        cache[per_request] = got
    return got


def indexer_prepare(patch: VllmPatch, flat: bool = True, native: bool = True) -> None:
    labels = [lab for lab, on in (("indexer_decode_flat", flat), ("indexer_decode_native", native))
              if on]
    cls = _indexer_builder(patch, labels)
    if cls is None:
        return
    prepare = cls.__dict__.get("_prepare_decode_tensors")
    why = None
    if not callable(prepare):
        why = "DeepseekV32IndexerMetadataBuilder has no _prepare_decode_tensors"
    elif expect(params(prepare), ("self",) + PREPARE_PARAMS) or len(params(prepare) or ()) != 11:
        why = "_prepare_decode_tensors takes (%s), not (%s)" % (
            ", ".join((params(prepare) or ())[1:]), ", ".join(PREPARE_PARAMS))
    if why:
        for label in labels:
            patch.skipped[label] = why
        return
    from .._step import build_step

    @wraps(prepare)
    def patched_prepare(self: Any, seq_lens: Any, block_table: Any, decode_lens: Any,
                        decode_lens_cpu: Any, query_start_loc: Any, num_decodes: int,
                        num_decode_tokens: int, use_native: bool, next_n: int,
                        max_decode_len: int) -> Any:
        common = getattr(_building, "common", None)
        seq_buf = self.decode_seq_lens_buffer
        if common is not None and not use_native and flat:
            table_out = self.expanded_block_table_buffer
            if len(block_table.shape) == 2 and table_out.shape[1] >= block_table.shape[1]:
                # per-token causal lengths (zeros from the real token count to
                # the end of the buffer), the request's block-table row (zero
                # rows for padding tokens), decode length 1: one launch
                build_step(common.query_start_loc[: num_decodes + 1], num_decode_tokens,
                           num_reqs=num_decodes, seq_lens=seq_lens, block_table=block_table,
                           seq_lens_out=seq_buf, block_table_out=table_out,
                           decode_lens_out=self.decode_lens_buffer, capacity=seq_buf.shape[0])
                patch.count("indexer_decode_flat")
                return (seq_buf[:num_decode_tokens], table_out[:num_decode_tokens],
                        self.decode_lens_buffer[:num_decode_tokens], num_decode_tokens, False)
            patch.fell_back("indexer_decode_flat")
        if common is not None and use_native and next_n > 1 and native:
            # [B, max_decode_len] rows: request b's token j sees
            # max(seq_lens[b] - max_decode_len + j + 1, 0) entries: the
            # one-row-per-token lengths of B requests of max_decode_len tokens.
            width = int(max_decode_len)
            n = int(num_decodes) * width
            bounds = _uniform_boundaries(self, seq_buf, width)
            build_step(bounds[: num_decodes + 1], n, num_reqs=num_decodes, seq_lens=seq_lens,
                       seq_lens_out=seq_buf, capacity=n)
            patch.count("indexer_decode_native")
            requires_padding = int(decode_lens_cpu.min()) != width
            return (seq_buf[:n].reshape(num_decodes, width), block_table, decode_lens,
                    num_decodes, requires_padding)
        return prepare(self, seq_lens, block_table, decode_lens, decode_lens_cpu,
                       query_start_loc, num_decodes, num_decode_tokens, use_native, next_n,
                       max_decode_len)

    glob = cls.__dict__.get("_prepare_global_decode_seq_lens")
    if flat and callable(glob) and params(glob) == ("self",) + GLOBAL_PARAMS:
        @wraps(glob)
        def patched_global(self: Any, global_seq_lens: Any, decode_lens: Any,
                           decode_lens_cpu: Any, query_start_loc: Any, num_decode_tokens: int,
                           use_native: bool, max_decode_len: int) -> Any:
            common = getattr(_building, "common", None)
            if global_seq_lens is None or use_native or max_decode_len <= 1 or common is None:
                return glob(self, global_seq_lens, decode_lens, decode_lens_cpu, query_start_loc,
                            num_decode_tokens, use_native, max_decode_len)
            # DCP's global per-token lengths: zeros from the real token count
            # to num_decode_tokens, nothing past it
            out = self.global_decode_seq_lens_buffer
            num_decodes = int(decode_lens.shape[0])
            build_step(common.query_start_loc[: num_decodes + 1], num_decode_tokens,
                       num_reqs=num_decodes, seq_lens=global_seq_lens, seq_lens_out=out,
                       capacity=num_decode_tokens)
            patch.count("indexer_decode_flat")
            return out[:num_decode_tokens]

        patch.replace(cls, "_prepare_global_decode_seq_lens", patched_global, labels[0])
    wrap_build(patch, cls, labels[0])
    patch.replace(cls, "_prepare_decode_tensors", patched_prepare, labels[0])
    for label in labels:
        patch.apply(label)


# ---------------------------------------------------------------------------
# DeepSeek-V4: compressed slot mappings, SWA rows, per-layer top-k conversion


def compressed_slot_mapping(patch: VllmPatch) -> None:
    label = "compressed_slot_mapping"
    original = _function(patch, label, COMPRESSOR, "get_compressed_slot_mapping",
                         COMPRESSED_PARAMS + COMPRESSED_DCP)
    if original is None:
        return
    import inspect

    from .._dsv4_dropins import get_compressed_slot_mapping as ours

    signature = inspect.signature(original)

    @wraps(original)
    def get_compressed_slot_mapping(*args: Any, **kwargs: Any) -> Any:
        a = _bound(signature, args, kwargs)
        got = ours(a["num_tokens"], a["query_start_loc"], a["seq_lens"], a["block_table"],
                   a["block_size"], a["compress_ratio"], out=a["out"],
                   cp_kv_cache_interleave_size=a["cp_kv_cache_interleave_size"],
                   cp_world_size=a["cp_world_size"], cp_rank=a["cp_rank"])
        patch.count(label)
        return got

    rebind_everywhere(patch, original, get_compressed_slot_mapping, label)
    patch.apply(label)


def pcp_compressed_slot_mapping(patch: VllmPatch) -> None:
    label = "pcp_compressed_slot_mapping"
    original = _function(patch, label, COMPRESSOR, "get_pcp_compressed_slot_mapping",
                         PCP_COMPRESSED_PARAMS)
    if original is None:
        return
    import inspect

    from .._dsv4_dropins import get_pcp_compressed_slot_mapping as ours

    signature = inspect.signature(original)

    @wraps(original)
    def get_pcp_compressed_slot_mapping(*args: Any, **kwargs: Any) -> Any:
        a = _bound(signature, args, kwargs)
        got = ours(a["logical_slot_mapping"], a["positions"], a["logical_block_size"],
                   a["storage_block_size"], a["compress_ratio"], out=a["out"])
        if int(a["logical_slot_mapping"].shape[0]) > 0:  # no tokens: no launch, as vLLM's
            patch.count(label)
        return got

    rebind_everywhere(patch, original, get_pcp_compressed_slot_mapping, label)
    patch.apply(label)


def swa_rows(patch: VllmPatch) -> None:
    label = "swa_decode"
    module = _module(patch, label, SPARSE_SWA)
    kernel = _attr(patch, label, module, "_compute_swa_indices_and_lens_kernel")
    if kernel is None:
        return
    names = tuple(getattr(kernel, "arg_names", None) or ())
    args = SWA_IMAGE_ARGS if names == SWA_IMAGE_ARGS else SWA_ARGS
    if not _takes(patch, label, kernel, "_compute_swa_indices_and_lens_kernel", args):
        return
    from .._dsv4_dropins import _boundaries_from, compute_swa_indices_and_lens

    def route(a: Dict[str, Any], grid: Tuple[Any, ...]) -> bool:
        # The decode launch (token_offset 0) and the prefill launch (the
        # tokens from token_offset on: rows and lengths at t - token_offset)
        offset = int(a["token_offset"])
        rows, table = a["swa_indices_ptr"], a["block_table_ptr"]
        if (offset < 0 or row_stride(rows) != int(a["swa_indices_stride"])
                or row_stride(table) != int(a["block_table_stride"])):
            return False
        n = int(grid[0])
        image: Dict[str, Any] = {}
        if args is SWA_IMAGE_ARGS:
            image["index_width"] = int(a["index_width"])
            if a["HAS_IMAGE"]:  # the in-image counts of the launch's tokens
                image["left_visible"] = a["left_visible_ptr"][offset:offset + n]
                image["right_visible"] = a["right_visible_ptr"][offset:offset + n]
        compute_swa_indices_and_lens(rows, a["swa_lens_ptr"], int(a["window_size"]),
                                     _boundaries_from(a["query_start_loc_ptr"], offset),
                                     a["seq_lens_ptr"], table, int(a["block_size"]), num_tokens=n,
                                     is_valid_token=a["is_valid_token_ptr"][offset:offset + n],
                                     **image)
        return True

    rebind_everywhere(patch, kernel, RoutedKernel(kernel, args, route, patch, label), label)
    patch.apply(label)


def topk_conversion(patch: VllmPatch) -> None:
    label = "topk_conversion"
    module = _module(patch, label, SPARSE_UTILS)
    plain = _attr(patch, label, module, "triton_convert_req_index_to_global_index")
    dcp = _attr(patch, label, module, "triton_filter_and_convert_dcp_index")
    if plain is None or dcp is None:
        return
    why = expect(params(plain), CONVERT_PARAMS) or expect(params(dcp), DCP_CONVERT_PARAMS)
    # parameters past the known ones: only those attnmeta's functions take too
    extra = [p for p in (params(plain) or ())[len(CONVERT_PARAMS):]
             if p not in ("out", "valid_counts_out")]
    extra += list((params(dcp) or ())[len(DCP_CONVERT_PARAMS):])
    if not why and extra:
        why = "takes parameters attnmeta's does not: %s" % ", ".join(extra)
    if why:
        patch.skipped[label] = "the top-k conversion " + why
        return
    import inspect

    from .._topk import convert_req_index_to_global_index, filter_and_convert_dcp_index

    plain_sig, dcp_sig = inspect.signature(plain), inspect.signature(dcp)

    @wraps(plain)
    def triton_convert_req_index_to_global_index(*args: Any, **kwargs: Any) -> Any:
        a = _bound(plain_sig, args, kwargs)
        stride = a.pop("BLOCK_STRIDE_ROWS")
        got = convert_req_index_to_global_index(**a, BLOCK_STRIDE_ROWS=stride)
        patch.count(label)
        return got

    @wraps(dcp)
    def triton_filter_and_convert_dcp_index(*args: Any, **kwargs: Any) -> Any:
        got = filter_and_convert_dcp_index(**_bound(dcp_sig, args, kwargs))
        patch.count(label)
        return got

    rebind_everywhere(patch, plain, triton_convert_req_index_to_global_index, label)
    rebind_everywhere(patch, dcp, triton_filter_and_convert_dcp_index, label)
    patch.apply(label)


def dcp_peer_views(patch: VllmPatch) -> None:
    """sparse_utils' build_rotated_dcp_peer_block_table,
    convert_global_indices_to_dcp_peer_slots and
    filter_peer_slots_to_owner_local, and their bindings: the same
    arguments (attnmeta's drop-ins), one launch each."""
    label = "dcp_peer_views"
    table = _function(patch, label, SPARSE_UTILS, "build_rotated_dcp_peer_block_table",
                      PEER_TABLE_PARAMS)
    slots = _function(patch, label, SPARSE_UTILS, "convert_global_indices_to_dcp_peer_slots",
                      PEER_SLOTS_PARAMS) if table is not None else None
    owner = _function(patch, label, SPARSE_UTILS, "filter_peer_slots_to_owner_local",
                      OWNER_FILTER_PARAMS) if slots is not None else None
    if table is None or slots is None or owner is None:
        return
    from .. import _dcp_peer_dropins as mine
    from .._topk import filter_peer_slots_to_owner_local as my_filter

    @wraps(owner)
    def filter_peer_slots_to_owner_local(*args: Any, **kwargs: Any) -> Any:
        got = my_filter(*args, **kwargs)
        patch.count(label)
        return got

    @wraps(table)
    def build_rotated_dcp_peer_block_table(*args: Any, **kwargs: Any) -> Any:
        got = mine.build_rotated_dcp_peer_block_table(*args, **kwargs)
        patch.count(label)
        return got

    @wraps(slots)
    def convert_global_indices_to_dcp_peer_slots(*args: Any, **kwargs: Any) -> Any:
        got = mine.convert_global_indices_to_dcp_peer_slots(*args, **kwargs)
        patch.count(label)
        return got

    rebind_everywhere(patch, table, build_rotated_dcp_peer_block_table, label)
    rebind_everywhere(patch, slots, convert_global_indices_to_dcp_peer_slots, label)
    rebind_everywhere(patch, owner, filter_peer_slots_to_owner_local, label)
    patch.apply(label)


C128A_DCP_PARAMS = (C128A_PARAMS[:3] + ("actual_num_query_tokens",) + C128A_PARAMS[3:]
                    + ("dcp_world_size", "dcp_rank", "cp_kv_cache_interleave_size"))
C128A_BUILDER = ("self", "cm", "req_id_per_token")


def _c128a_signature(have: Any, want: Tuple[str, ...]) -> Any:
    """vLLM's build_c128a_topk_metadata: without the batch width, with the
    newest ``max_seq_len`` (the batch-dependent row width), or the DCP
    variant (``actual_num_query_tokens`` and the step's DCP)."""
    if have is not None and tuple(have) in (want + ("max_seq_len",), C128A_DCP_PARAMS):
        return None
    return _exactly(have, want)


def _c128a_width(a: Dict[str, Any], bound: int) -> int:
    """The rows' width vLLM uses: the batch's with ``max_seq_len`` (from the
    largest position, read back, where the host's value is None, as vLLM
    falls back), else the kernel's bound."""
    if "max_seq_len" not in a:
        return bound
    from .._dsv4_dropins import c128a_row_width

    top = a["max_seq_len"]
    top = int(a["positions"].max()) + 1 if top is None else int(top)
    return c128a_row_width(top, int(a["compress_ratio"]), bound)


def _c128a_launch(a: Dict[str, Any], cm: Any) -> Any:
    """The C128A rows of ``build_c128a_topk_metadata``'s arguments ``a`` in
    one launch, vLLM's three views returned; None where attnmeta does not
    compute what vLLM's kernel does (vLLM's then runs)."""
    from .._dsv4_dropins import compute_c128a_indices_and_lens

    rows, lens, pre = a["global_decode_buffer"], a["decode_lens_buffer"], a["prefill_buffer"]
    tokens, decodes = int(a["positions"].shape[0]), int(a["num_decode_tokens"])
    bound, bs = int(a["max_compressed_tokens"]), int(a["block_size"])
    world, rank = int(a.get("dcp_world_size", 1)), int(a.get("dcp_rank", 0))
    interleave = int(a.get("cp_kv_cache_interleave_size", 1))
    num_reqs = int(cm.num_reqs)
    mixed = tokens > decodes
    # rows as wide as the kernel's bound; (mixed mode) every output [>= T]
    # rows, as attnmeta writes both tables for each of the T tokens; with
    # DCP whole interleave groups a block; the DCP variant's real tokens
    # (actual_num_query_tokens) are the boundaries' tokens
    if (tokens == 0 or len(rows.shape) != 2 or int(rows.shape[1]) != bound
            or (mixed and (len(pre.shape) != 2 or int(pre.shape[1]) != bound
                           or min(int(b.shape[0]) for b in (rows, lens, pre)) < tokens))
            or (world > 1 and bs % interleave)
            or ("actual_num_query_tokens" in a and int(a["actual_num_query_tokens"])
                != int(cm.query_start_loc_cpu[num_reqs]))):
        return None
    width = _c128a_width(a, bound)
    if width == 0:  # vLLM only clears the decode lengths
        return None
    ratio = int(a["compress_ratio"])
    dcp: Dict[str, Any] = dict(dcp_world_size=world, dcp_rank=rank,
                               cp_kv_cache_interleave_size=interleave)
    if not mixed:
        table = a["block_table"]
        num_decodes = int(table.shape[0])
        compute_c128a_indices_and_lens(rows[:tokens, :width], lens[:tokens],
                                       cm.query_start_loc[: num_decodes + 1],
                                       cm.seq_lens[:num_decodes], table, bs,
                                       compress_ratio=ratio, num_tokens=tokens, **dcp)
        return rows[:tokens, :width], lens[:tokens], pre[:0, :width]
    # the prefill requests' rows are not in the decode table vLLM passes,
    # and the step's request count comes from the table
    return compute_c128a_indices_and_lens(
        rows[:tokens, :width], lens[:tokens], cm.query_start_loc[: num_reqs + 1],
        cm.seq_lens[:num_reqs], cm.block_table_tensor[:num_reqs], bs, compress_ratio=ratio,
        num_tokens=tokens, num_decode_tokens=decodes, prefill_indices=pre[:tokens, :width], **dcp)


def c128a_rows(patch: VllmPatch) -> None:
    """build_c128a_topk_metadata: the global C128A rows of the decode tokens
    and, in a step with prefill tokens, their request-local rows, in one
    launch (mixed mode), with or without DCP. It is given positions and each
    token's request; the launch takes the step's boundaries, lengths and
    table from the common metadata of the builder's _build_c128a_metadata,
    which is wrapped to keep it."""
    label = "c128a_decode"
    original = _function(patch, label, FLASHMLA_SPARSE, "build_c128a_topk_metadata", C128A_PARAMS,
                         _c128a_signature)
    if original is None:
        return
    module = importlib.import_module(FLASHMLA_SPARSE)
    builders = [cls for cls in vars(module).values() if isinstance(cls, type)
                and tuple(params(cls.__dict__.get("_build_c128a_metadata")) or ())[:3]
                == C128A_BUILDER]
    if not builders:
        patch.skipped[label] = ("%s has no builder with _build_c128a_metadata(self, cm, "
                                "req_id_per_token, ...)" % FLASHMLA_SPARSE)
        return
    import inspect

    signature = inspect.signature(original)
    for cls in builders:
        method = cls.__dict__["_build_c128a_metadata"]

        def keep_common(self: Any, cm: Any, *args: Any, _method: Any = method,
                        **kwargs: Any) -> Any:
            previous = getattr(_building, "c128a_common", None)
            _building.c128a_common = cm
            try:
                return _method(self, cm, *args, **kwargs)
            finally:
                _building.c128a_common = previous

        patch.replace(cls, "_build_c128a_metadata", wraps(method)(keep_common), label)

    @wraps(original)
    def build_c128a_topk_metadata(*args: Any, **kwargs: Any) -> Any:
        cm = getattr(_building, "c128a_common", None)
        got = None if cm is None else _c128a_launch(_bound(signature, args, kwargs), cm)
        if got is None:
            patch.fell_back(label)
            return original(*args, **kwargs)
        patch.count(label)
        return got

    rebind_everywhere(patch, original, build_c128a_topk_metadata, label)
    patch.apply(label)


TARGETS = ("token_to_req_indices", "compute_token_to_req_indices", "indexer_decode_varlen",
           "indexer_decode_flat", "indexer_decode_native", "compressed_slot_mapping",
           "pcp_compressed_slot_mapping", "swa_decode", "swa_groups", "c128a_decode",
           "topk_conversion", "dcp_peer_views")

_SINGLE = {
    "token_to_req_indices": token_map_method,
    "compute_token_to_req_indices": token_map_function,
    "indexer_decode_varlen": indexer_varlen,
    "compressed_slot_mapping": compressed_slot_mapping,
    "pcp_compressed_slot_mapping": pcp_compressed_slot_mapping,
    "swa_decode": swa_rows,
    "swa_groups": swa_groups,
    "c128a_decode": c128a_rows,
    "topk_conversion": topk_conversion,
    "dcp_peer_views": dcp_peer_views,
}


def run(patch: VllmPatch, wanted: Dict[str, bool]) -> None:
    """Routes each wanted target (all by default)."""
    for name, fn in _SINGLE.items():
        if wanted.get(name, True):
            fn(patch)
    flat = wanted.get("indexer_decode_flat", True)
    native = wanted.get("indexer_decode_native", True)
    if flat or native:
        indexer_prepare(patch, flat=flat, native=native)
