# SPDX-License-Identifier: Apache-2.0
"""The operations as torch custom operators (``torch.library``), for
``torch.compile``.

Importing this module (torch >= 2.4) registers, in the ``attnmeta``
namespace:

- ``torch.ops.attnmeta.token_to_req_indices(query_start_loc, out!,
  num_mapped_tokens, num_tokens) -> ()``
- ``torch.ops.attnmeta.build_step(query_start_loc, seq_lens?, block_table?,
  token_to_req!?, seq_lens_out!?, global_seq_lens_out!?, block_table_out!?,
  decode_lens_out!?, req_indices_out!?, per_req_lens_out!?, positions!?,
  slot_mapping!?, error_word!?, num_reqs, num_tokens, capacity,
  num_mapped, block_size, dcp_world_size, dcp_rank, dcp_interleave) -> ()``
- ``torch.ops.attnmeta.build_dsv4_step(...)``: the same step with the
  DeepSeek-V3.2/V4 products of the same launch (up to 4 compressed groups,
  the SWA rows, the C128A rows);
- ``torch.ops.attnmeta.convert_topk(...)``: one layer's top-k conversion
  (:class:`attnmeta.TopkPlan`'s arguments).

each declaring the outputs it writes in place, with a fake (meta)
implementation that writes nothing, so ``torch.compile(fullgraph=True)``
traces them as single opaque nodes: no graph break, no recompilation per
call. Inside a compiled region the package's own functions
(:func:`attnmeta.compute_token_to_req_indices`, :func:`attnmeta.build_step`,
``StepPlan.build``, the DeepSeek-V4 drop-ins built on it) route themselves
here; outside one they stay the direct ctypes call, which costs a few µs
of host time less than a trip through torch's dispatcher
(``python/bench_overhead.py`` measures both).

The wrappers :func:`compute_token_to_req_indices`, :func:`build_step` and
:func:`convert_topk` below call the operators explicitly (the same
arguments as the package's functions).
"""

import sys
from typing import Any, Dict, List, Optional, Sequence

try:
    import torch
except ImportError as exc:
    raise ImportError("attnmeta.ops needs torch (>= 2.4): %s" % exc) from None

from . import _compile, _step

__all__ = ["compute_token_to_req_indices", "build_step", "convert_topk", "OUTPUTS",
           "DSV4_OUTPUTS"]

if not hasattr(torch, "library") or not hasattr(torch.library, "custom_op"):
    raise ImportError(
        "attnmeta.ops needs torch >= 2.4 (torch.library.custom_op); this is torch %s"
        % torch.__version__
    )

MAX_GROUPS = 4

OUTPUTS = (
    "token_to_req",
    "seq_lens_out",
    "global_seq_lens_out",
    "block_table_out",
    "decode_lens_out",
    "req_indices_out",
    "per_req_lens_out",
    "positions",
    "slot_mapping",
    "error_word",
)

# The DeepSeek-V4 outputs of build_dsv4_step, after OUTPUTS: each group's
# two, then the SWA and C128A rows and lengths.
_GROUP_OUTPUTS = tuple("g%d_%s" % (g, name) for g in range(MAX_GROUPS)
                       for name in ("slot_mapping", "seq_lens_out"))
DSV4_OUTPUTS = _GROUP_OUTPUTS + ("swa_indices", "swa_lens", "c128a_rows", "c128a_lens")


# ---------------------------------------------------------------------------
# token map


@torch.library.custom_op("attnmeta::token_to_req_indices", mutates_args=("out",))
def _token_to_req_indices(query_start_loc: torch.Tensor, out: torch.Tensor, num_mapped_tokens: int,
                          num_tokens: int) -> None:
    _step._token_to_req(query_start_loc, out, num_tokens, None, num_mapped_tokens, None, None)


@_token_to_req_indices.register_fake
def _token_to_req_indices_fake(query_start_loc: torch.Tensor, out: torch.Tensor, num_mapped_tokens: int,
                               num_tokens: int) -> None:
    return None


# ---------------------------------------------------------------------------
# the step (contract sections 1-4)


@torch.library.custom_op("attnmeta::build_step", mutates_args=OUTPUTS)
def _build_step(
    query_start_loc: torch.Tensor,
    seq_lens: Optional[torch.Tensor],
    block_table: Optional[torch.Tensor],
    token_to_req: Optional[torch.Tensor],
    seq_lens_out: Optional[torch.Tensor],
    global_seq_lens_out: Optional[torch.Tensor],
    block_table_out: Optional[torch.Tensor],
    decode_lens_out: Optional[torch.Tensor],
    req_indices_out: Optional[torch.Tensor],
    per_req_lens_out: Optional[torch.Tensor],
    positions: Optional[torch.Tensor],
    slot_mapping: Optional[torch.Tensor],
    error_word: Optional[torch.Tensor],
    num_reqs: int,
    num_tokens: int,
    capacity: int,
    num_mapped: int,
    block_size: int,
    dcp_world_size: int,
    dcp_rank: int,
    dcp_interleave: int,
) -> None:
    _step._build_step_direct(
        query_start_loc, num_tokens, num_reqs=num_reqs, seq_lens=seq_lens,
        block_table=block_table, token_to_req=token_to_req, seq_lens_out=seq_lens_out,
        global_seq_lens_out=global_seq_lens_out, block_table_out=block_table_out,
        decode_lens_out=decode_lens_out, req_indices_out=req_indices_out,
        per_req_lens_out=per_req_lens_out, positions=positions, slot_mapping=slot_mapping,
        error_word=error_word, capacity=None if capacity < 0 else capacity,
        num_mapped=num_mapped, block_size=None if block_size == 0 else block_size,
        dcp_world_size=dcp_world_size,
        dcp_rank=dcp_rank, dcp_interleave=dcp_interleave)


@_build_step.register_fake
def _build_step_fake(
    query_start_loc: torch.Tensor,
    seq_lens: Optional[torch.Tensor],
    block_table: Optional[torch.Tensor],
    token_to_req: Optional[torch.Tensor],
    seq_lens_out: Optional[torch.Tensor],
    global_seq_lens_out: Optional[torch.Tensor],
    block_table_out: Optional[torch.Tensor],
    decode_lens_out: Optional[torch.Tensor],
    req_indices_out: Optional[torch.Tensor],
    per_req_lens_out: Optional[torch.Tensor],
    positions: Optional[torch.Tensor],
    slot_mapping: Optional[torch.Tensor],
    error_word: Optional[torch.Tensor],
    num_reqs: int,
    num_tokens: int,
    capacity: int,
    num_mapped: int,
    block_size: int,
    dcp_world_size: int,
    dcp_rank: int,
    dcp_interleave: int,
) -> None:
    return None


# ---------------------------------------------------------------------------
# the step with the DeepSeek-V3.2/V4 products (contract sections 5, 7, 8)


@torch.library.custom_op("attnmeta::build_dsv4_step", mutates_args=OUTPUTS + DSV4_OUTPUTS)
def _build_dsv4_step(
    query_start_loc: torch.Tensor,
    seq_lens: Optional[torch.Tensor],
    block_table: Optional[torch.Tensor],
    token_to_req: Optional[torch.Tensor],
    seq_lens_out: Optional[torch.Tensor],
    global_seq_lens_out: Optional[torch.Tensor],
    block_table_out: Optional[torch.Tensor],
    decode_lens_out: Optional[torch.Tensor],
    req_indices_out: Optional[torch.Tensor],
    per_req_lens_out: Optional[torch.Tensor],
    positions: Optional[torch.Tensor],
    slot_mapping: Optional[torch.Tensor],
    error_word: Optional[torch.Tensor],
    g0_slot_mapping: Optional[torch.Tensor],
    g0_seq_lens_out: Optional[torch.Tensor],
    g1_slot_mapping: Optional[torch.Tensor],
    g1_seq_lens_out: Optional[torch.Tensor],
    g2_slot_mapping: Optional[torch.Tensor],
    g2_seq_lens_out: Optional[torch.Tensor],
    g3_slot_mapping: Optional[torch.Tensor],
    g3_seq_lens_out: Optional[torch.Tensor],
    swa_indices: Optional[torch.Tensor],
    swa_lens: Optional[torch.Tensor],
    c128a_rows: Optional[torch.Tensor],
    c128a_lens: Optional[torch.Tensor],
    g0_block_table: Optional[torch.Tensor],
    g1_block_table: Optional[torch.Tensor],
    g2_block_table: Optional[torch.Tensor],
    g3_block_table: Optional[torch.Tensor],
    swa_block_table: Optional[torch.Tensor],
    c128a_block_table: Optional[torch.Tensor],
    num_reqs: int,
    num_tokens: int,
    capacity: int,
    num_mapped: int,
    block_size: int,
    dcp_world_size: int,
    dcp_rank: int,
    dcp_interleave: int,
    num_groups: int,
    group_ratios: List[int],
    group_block_sizes: List[int],
    swa_block_size: int,
    swa_window: int,
    swa_width: int,
    swa_causal: bool,
    c128a_ratio: int,
    c128a_block_size: int,
    c128a_width: int,
    c128a_local: bool,
) -> None:
    tables = (g0_block_table, g1_block_table, g2_block_table, g3_block_table)
    group_outputs = ((g0_slot_mapping, g0_seq_lens_out), (g1_slot_mapping, g1_seq_lens_out),
                     (g2_slot_mapping, g2_seq_lens_out), (g3_slot_mapping, g3_seq_lens_out))
    groups = []
    for g in range(num_groups):
        group: Dict[str, Any] = dict(block_table=tables[g], ratio=group_ratios[g],
                                     block_size=group_block_sizes[g])
        if group_outputs[g][0] is not None:
            group["slot_mapping"] = group_outputs[g][0]
        if group_outputs[g][1] is not None:
            group["seq_lens_out"] = group_outputs[g][1]
        groups.append(group)
    _step._build_step_direct(
        query_start_loc, num_tokens, num_reqs=num_reqs, seq_lens=seq_lens,
        block_table=block_table, token_to_req=token_to_req, seq_lens_out=seq_lens_out,
        global_seq_lens_out=global_seq_lens_out, block_table_out=block_table_out,
        decode_lens_out=decode_lens_out, req_indices_out=req_indices_out,
        per_req_lens_out=per_req_lens_out, positions=positions, slot_mapping=slot_mapping,
        error_word=error_word, capacity=None if capacity < 0 else capacity,
        num_mapped=num_mapped, block_size=None if block_size == 0 else block_size,
        dcp_world_size=dcp_world_size, dcp_rank=dcp_rank, dcp_interleave=dcp_interleave,
        compressed_groups=groups, swa_indices=swa_indices, swa_lens=swa_lens,
        swa_block_table=swa_block_table, swa_block_size=swa_block_size,
        swa_window=None if swa_window < 0 else swa_window,
        swa_width=None if swa_width < 0 else swa_width, swa_causal=swa_causal,
        c128a_rows=c128a_rows, c128a_lens=c128a_lens, c128a_block_table=c128a_block_table,
        c128a_ratio=c128a_ratio, c128a_block_size=c128a_block_size,
        c128a_width=None if c128a_width < 0 else c128a_width, c128a_local=c128a_local)


@_build_dsv4_step.register_fake
def _build_dsv4_step_fake(
    query_start_loc: torch.Tensor,
    seq_lens: Optional[torch.Tensor],
    block_table: Optional[torch.Tensor],
    token_to_req: Optional[torch.Tensor],
    seq_lens_out: Optional[torch.Tensor],
    global_seq_lens_out: Optional[torch.Tensor],
    block_table_out: Optional[torch.Tensor],
    decode_lens_out: Optional[torch.Tensor],
    req_indices_out: Optional[torch.Tensor],
    per_req_lens_out: Optional[torch.Tensor],
    positions: Optional[torch.Tensor],
    slot_mapping: Optional[torch.Tensor],
    error_word: Optional[torch.Tensor],
    g0_slot_mapping: Optional[torch.Tensor],
    g0_seq_lens_out: Optional[torch.Tensor],
    g1_slot_mapping: Optional[torch.Tensor],
    g1_seq_lens_out: Optional[torch.Tensor],
    g2_slot_mapping: Optional[torch.Tensor],
    g2_seq_lens_out: Optional[torch.Tensor],
    g3_slot_mapping: Optional[torch.Tensor],
    g3_seq_lens_out: Optional[torch.Tensor],
    swa_indices: Optional[torch.Tensor],
    swa_lens: Optional[torch.Tensor],
    c128a_rows: Optional[torch.Tensor],
    c128a_lens: Optional[torch.Tensor],
    g0_block_table: Optional[torch.Tensor],
    g1_block_table: Optional[torch.Tensor],
    g2_block_table: Optional[torch.Tensor],
    g3_block_table: Optional[torch.Tensor],
    swa_block_table: Optional[torch.Tensor],
    c128a_block_table: Optional[torch.Tensor],
    num_reqs: int,
    num_tokens: int,
    capacity: int,
    num_mapped: int,
    block_size: int,
    dcp_world_size: int,
    dcp_rank: int,
    dcp_interleave: int,
    num_groups: int,
    group_ratios: List[int],
    group_block_sizes: List[int],
    swa_block_size: int,
    swa_window: int,
    swa_width: int,
    swa_causal: bool,
    c128a_ratio: int,
    c128a_block_size: int,
    c128a_width: int,
    c128a_local: bool,
) -> None:
    return None


# ---------------------------------------------------------------------------
# the top-k conversion (contract section 6)

_TOPK_OUTPUTS = ("out", "valid_counts", "error_word")


@torch.library.custom_op("attnmeta::convert_topk", mutates_args=_TOPK_OUTPUTS)
def _convert_topk(
    token_indices: torch.Tensor,
    block_table: torch.Tensor,
    out: torch.Tensor,
    valid_counts: Optional[torch.Tensor],
    error_word: Optional[torch.Tensor],
    req_id: Optional[torch.Tensor],
    query_start_loc: Optional[torch.Tensor],
    prefill_workspace_request_ids: Optional[torch.Tensor],
    prefill_workspace_starts: Optional[torch.Tensor],
    token_slot: Optional[torch.Tensor],
    num_tokens: int,
    compact: bool,
    block_size: int,
    stride_rows: int,
    dcp_size: int,
    dcp_rank: int,
    cp_kv_cache_interleave_size: int,
) -> None:
    from ._topk import TopkPlan

    plan = TopkPlan(
        token_indices, block_table, out, req_id=req_id, query_start_loc=query_start_loc,
        valid_counts=valid_counts, compact=compact, block_size=block_size,
        stride_rows=None if stride_rows < 0 else stride_rows,
        prefill_workspace_request_ids=prefill_workspace_request_ids,
        prefill_workspace_starts=prefill_workspace_starts, token_slot=token_slot,
        dcp_size=dcp_size, dcp_rank=dcp_rank,
        cp_kv_cache_interleave_size=cp_kv_cache_interleave_size, error_word=error_word)
    plan.convert(None if num_tokens < 0 else num_tokens)


@_convert_topk.register_fake
def _convert_topk_fake(
    token_indices: torch.Tensor,
    block_table: torch.Tensor,
    out: torch.Tensor,
    valid_counts: Optional[torch.Tensor],
    error_word: Optional[torch.Tensor],
    req_id: Optional[torch.Tensor],
    query_start_loc: Optional[torch.Tensor],
    prefill_workspace_request_ids: Optional[torch.Tensor],
    prefill_workspace_starts: Optional[torch.Tensor],
    token_slot: Optional[torch.Tensor],
    num_tokens: int,
    compact: bool,
    block_size: int,
    stride_rows: int,
    dcp_size: int,
    dcp_rank: int,
    cp_kv_cache_interleave_size: int,
) -> None:
    return None


# ---------------------------------------------------------------------------
# the wrappers (the package's own functions call these inside torch.compile)


def compute_token_to_req_indices(query_start_loc: torch.Tensor, out: torch.Tensor,
                                 num_mapped_tokens: Optional[int], num_tokens: int) -> torch.Tensor:
    """:func:`attnmeta.compute_token_to_req_indices` through
    ``torch.ops.attnmeta.token_to_req_indices``; returns ``out[:num_tokens]``."""
    torch.ops.attnmeta.token_to_req_indices(
        query_start_loc, out, -1 if num_mapped_tokens is None else num_mapped_tokens, num_tokens)
    return out[:num_tokens]


_DSV4_TENSORS = ("swa_indices", "swa_lens", "swa_block_table", "c128a_rows", "c128a_lens",
                 "c128a_block_table")
_DSV4_SCALARS = dict(swa_block_size=64, swa_window=None, swa_width=None, swa_causal=True,
                     c128a_ratio=128, c128a_block_size=2, c128a_width=None, c128a_local=False)


def _no_value(value: Optional[int]) -> int:
    return -1 if value is None else value


def build_step(query_start_loc: torch.Tensor, num_tokens: int, *, num_reqs: Optional[int] = None,
               capacity: Optional[int] = None, num_mapped: int = -1,
               block_size: Optional[int] = None,
               dcp_world_size: int = 1, dcp_rank: int = 0, dcp_interleave: int = 1,
               seq_lens: Optional[torch.Tensor] = None, block_table: Optional[torch.Tensor] = None,
               compressed_groups: Sequence[Dict[str, Any]] = (),
               **outputs: Any) -> None:
    """:func:`attnmeta.build_step` through ``torch.ops.attnmeta.build_step``,
    or ``build_dsv4_step`` when a DeepSeek-V4 product is named (torch
    tensors only; no ``context`` or ``stream``: torch's current stream).
    The operators' ``block_size`` 0 and -1 for the other optional sizes
    stand for "not given"."""
    # Plain loops and lists only: torch.compile traces this function.
    dsv4 = {}
    for name in _DSV4_TENSORS:
        dsv4[name] = outputs.pop(name, None)
    scalars = dict(_DSV4_SCALARS)
    for name in _DSV4_SCALARS:
        if name in outputs:
            scalars[name] = outputs.pop(name)
    for name in outputs:
        if name not in OUTPUTS:
            raise TypeError("build_step() got an unknown argument: %s" % name)
    if num_reqs is None:
        num_reqs = query_start_loc.shape[0] - 1
    buffers = [outputs.get(name) for name in OUTPUTS]
    sizes = [num_reqs, num_tokens, _no_value(capacity), num_mapped,
             0 if block_size is None else block_size, dcp_world_size, dcp_rank, dcp_interleave]
    wants_dsv4 = len(compressed_groups) > 0 or any(dsv4[name] is not None for name in _DSV4_TENSORS)
    if not wants_dsv4:
        torch.ops.attnmeta.build_step(query_start_loc, seq_lens, block_table, *buffers, *sizes)
        return
    if len(compressed_groups) > MAX_GROUPS:
        raise ValueError("compressed_groups holds %d groups; at most %d"
                         % (len(compressed_groups), MAX_GROUPS))
    group_outputs: List[Optional[torch.Tensor]] = []
    tables: List[Optional[torch.Tensor]] = []
    ratios: List[int] = []
    sizes_g: List[int] = []
    for g in range(MAX_GROUPS):
        group = compressed_groups[g] if g < len(compressed_groups) else {}
        group_outputs.append(group.get("slot_mapping"))
        group_outputs.append(group.get("seq_lens_out"))
        tables.append(group.get("block_table"))
        ratios.append(int(group.get("ratio", 0)))
        sizes_g.append(int(group.get("block_size", 0)))
    torch.ops.attnmeta.build_dsv4_step(
        query_start_loc, seq_lens, block_table, *buffers, *group_outputs,
        dsv4["swa_indices"], dsv4["swa_lens"], dsv4["c128a_rows"], dsv4["c128a_lens"],
        *tables, dsv4["swa_block_table"], dsv4["c128a_block_table"], *sizes,
        len(compressed_groups), ratios, sizes_g, scalars["swa_block_size"],
        _no_value(scalars["swa_window"]), _no_value(scalars["swa_width"]),
        bool(scalars["swa_causal"]), scalars["c128a_ratio"], scalars["c128a_block_size"],
        _no_value(scalars["c128a_width"]), bool(scalars["c128a_local"]))


def convert_topk(token_indices: torch.Tensor, block_table: torch.Tensor, out: torch.Tensor, *,
                 num_tokens: Optional[int] = None, req_id: Optional[torch.Tensor] = None,
                 query_start_loc: Optional[torch.Tensor] = None,
                 valid_counts: Optional[torch.Tensor] = None, compact: bool = False,
                 block_size: int = 64, stride_rows: Optional[int] = None,
                 prefill_workspace_request_ids: Optional[torch.Tensor] = None,
                 prefill_workspace_starts: Optional[torch.Tensor] = None,
                 token_slot: Optional[torch.Tensor] = None, dcp_size: int = 1, dcp_rank: int = 0,
                 cp_kv_cache_interleave_size: int = 1,
                 error_word: Optional[torch.Tensor] = None) -> None:
    """One :class:`attnmeta.TopkPlan` conversion through
    ``torch.ops.attnmeta.convert_topk`` (its arguments; ``num_tokens``
    None: every row of token_indices)."""
    torch.ops.attnmeta.convert_topk(
        token_indices, block_table, out, valid_counts, error_word, req_id, query_start_loc,
        prefill_workspace_request_ids, prefill_workspace_starts, token_slot,
        _no_value(num_tokens), compact, block_size, _no_value(stride_rows), dcp_size, dcp_rank,
        cp_kv_cache_interleave_size)


# From now on the package's functions take this path inside torch.compile.
_compile.install(torch, sys.modules[__name__])
