# SPDX-License-Identifier: Apache-2.0
"""The operations as torch custom operators (``torch.library``), for
``torch.compile``.

Importing this module (torch >= 2.4) registers, in the ``attnmeta``
namespace:

- ``torch.ops.attnmeta.token_to_req_indices(query_start_loc, out!,
  num_mapped_tokens, num_tokens) -> ()``
- ``torch.ops.attnmeta.build_step(query_start_loc, seq_lens?, block_table?,
  <each of OUTPUTS>!?, num_reqs, num_tokens, capacity, num_mapped,
  block_size, dcp_world_size, dcp_rank, dcp_interleave) -> ()``, OUTPUTS
  being the step's outputs in the schema's order (token_to_req,
  seq_lens_out, ..., error_word);
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

import inspect
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

try:
    import torch
except ImportError as exc:
    raise ImportError("attnmeta.ops needs torch (>= 2.4): %s" % exc) from None

from . import _compile, _members, _step
from ._dsv4 import DSV4_ARGS

__all__ = ["compute_token_to_req_indices", "build_step", "convert_topk", "OUTPUTS",
           "DSV4_OUTPUTS"]

if not hasattr(torch, "library") or not hasattr(torch.library, "custom_op"):
    raise ImportError(
        "attnmeta.ops needs torch >= 2.4 (torch.library.custom_op); this is torch %s"
        % torch.__version__
    )

MAX_GROUPS = 4

OUTPUTS = _step.OUTPUT_NAMES

# Each group's buffers as build_dsv4_step names them: g<g>_<member>.
_GROUP_ARGS = [[("g%d_%s" % (g, name), name) for name in _members.GROUP_INPUTS + _members.GROUP_OUTPUTS]
               for g in range(MAX_GROUPS)]
# The DeepSeek-V4 outputs of build_dsv4_step, after OUTPUTS: each group's
# two, then the SWA and C128A rows and lengths.
DSV4_OUTPUTS = tuple("g%d_%s" % (g, name) for g in range(MAX_GROUPS)
                     for name in _members.GROUP_OUTPUTS) + _members.DSV4_OUTPUTS
_DSV4_TENSORS = _members.DSV4_OUTPUTS + _members.DSV4_INPUTS
# The DeepSeek-V4 settings with their defaults (None: -1 for the operator).
_DSV4_SCALARS = {name: default for name, default in DSV4_ARGS.items()
                 if name != "compressed_groups" and name not in _members.STEP}


# ---------------------------------------------------------------------------
# The operators' parameters, in order, with their types.

_Tensor = torch.Tensor
_Maybe = Optional[torch.Tensor]
_SIZES = ("num_reqs", "num_tokens", "capacity", "num_mapped", "block_size", "dcp_world_size",
          "dcp_rank", "dcp_interleave")
_STEP_PARAMS = ([("query_start_loc", _Tensor)]
                + [(name, _Maybe) for name in _members.STEP_INPUTS + OUTPUTS]
                + [(name, int) for name in _SIZES])
_DSV4_PARAMS = (_STEP_PARAMS[:-len(_SIZES)]
                + [(name, _Maybe) for name in DSV4_OUTPUTS]
                + [("g%d_%s" % (g, name), _Maybe) for name in _members.GROUP_INPUTS
                   for g in range(MAX_GROUPS)]
                + [(name, _Maybe) for name in _members.DSV4_INPUTS]
                + _STEP_PARAMS[-len(_SIZES):]
                + [("num_groups", int), ("group_ratios", List[int]), ("group_block_sizes", List[int])]
                + [(name, bool if isinstance(default, bool) else int)
                   for name, default in _DSV4_SCALARS.items()])
# The names alone, for the wrappers that torch.compile traces.
_STEP_NAMES = tuple(name for name, _ in _STEP_PARAMS)
_DSV4_NAMES = tuple(name for name, _ in _DSV4_PARAMS)
_TOPK_OUTPUTS = ("out", "valid_counts", "error_word")
_TOPK_PARAMS = ([("token_indices", _Tensor), ("block_table", _Tensor), ("out", _Tensor)]
                + [(name, _Maybe) for name in ("valid_counts", "error_word", "req_id",
                                               "query_start_loc", "prefill_workspace_request_ids",
                                               "prefill_workspace_starts", "token_slot")]
                + [("num_tokens", int), ("compact", bool), ("block_size", int),
                   ("stride_rows", int), ("dcp_size", int), ("dcp_rank", int),
                   ("cp_kv_cache_interleave_size", int), ("blocks_per_peer", int),
                   ("early_start", bool)])


def _operator(name: str, params: Sequence[Tuple[str, Any]], mutates: Sequence[str],
              run: Callable[[Dict[str, Any]], None]) -> Any:
    """The custom operator ``attnmeta::<name>`` over ``params`` (its schema
    inferred from their types), declaring the outputs it writes in place:
    ``run`` gets the arguments by name; the fake (meta) implementation
    writes nothing."""
    names = [param for param, _ in params]
    signature = inspect.Signature(
        [inspect.Parameter(param, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=kind)
         for param, kind in params], return_annotation=None)

    def kernel(*args: Any, **kwargs: Any) -> None:
        values = dict(zip(names, args))
        values.update(kwargs)
        run(values)

    def fake(*args: Any, **kwargs: Any) -> None:
        return None

    setattr(kernel, "__signature__", signature)
    setattr(fake, "__signature__", signature)
    op = torch.library.custom_op("attnmeta::" + name, mutates_args=tuple(mutates))(kernel)
    op.register_fake(fake)
    return op


# ---------------------------------------------------------------------------
# token map


def _run_token_map(a: Dict[str, Any]) -> None:
    _step._token_to_req(a["query_start_loc"], a["out"], a["num_tokens"], None,
                        a["num_mapped_tokens"], None, None)


_token_to_req_indices = _operator(
    "token_to_req_indices",
    [("query_start_loc", _Tensor), ("out", _Tensor), ("num_mapped_tokens", int), ("num_tokens", int)],
    ("out",), _run_token_map)


# ---------------------------------------------------------------------------
# the step (contract sections 1-4), and with the DeepSeek-V3.2/V4 products
# (contract sections 5, 7, 8)


def _step_arguments(a: Dict[str, Any]) -> Dict[str, Any]:
    """StepPlan's arguments from an operator's (its "not given" sizes as None)."""
    kwargs = {name: a[name] for name in _members.STEP_INPUTS + OUTPUTS}
    kwargs.update(num_reqs=a["num_reqs"], capacity=None if a["capacity"] < 0 else a["capacity"],
                  num_mapped=a["num_mapped"],
                  block_size=None if a["block_size"] == 0 else a["block_size"],
                  dcp_world_size=a["dcp_world_size"], dcp_rank=a["dcp_rank"],
                  dcp_interleave=a["dcp_interleave"])
    return kwargs


def _run_step(a: Dict[str, Any]) -> None:
    _step._build_step_direct(a["query_start_loc"], a["num_tokens"], **_step_arguments(a))


def _run_dsv4_step(a: Dict[str, Any]) -> None:
    kwargs = _step_arguments(a)
    groups = []
    for g in range(a["num_groups"]):
        group: Dict[str, Any] = dict(ratio=a["group_ratios"][g], block_size=a["group_block_sizes"][g])
        group.update((name, a[arg]) for arg, name in _GROUP_ARGS[g] if a[arg] is not None)
        groups.append(group)
    kwargs["compressed_groups"] = groups
    kwargs.update((name, a[name]) for name in _DSV4_TENSORS)
    for name, default in _DSV4_SCALARS.items():
        kwargs[name] = None if default is None and a[name] < 0 else a[name]
    _step._build_step_direct(a["query_start_loc"], a["num_tokens"], **kwargs)


_build_step = _operator("build_step", _STEP_PARAMS, OUTPUTS, _run_step)
_build_dsv4_step = _operator("build_dsv4_step", _DSV4_PARAMS, OUTPUTS + DSV4_OUTPUTS,
                             _run_dsv4_step)


# ---------------------------------------------------------------------------
# the top-k conversion (contract section 6)


def _run_topk(a: Dict[str, Any]) -> None:
    from ._topk import TopkPlan

    kwargs = dict(a)
    num_tokens = kwargs.pop("num_tokens")
    if kwargs["stride_rows"] < 0:
        kwargs["stride_rows"] = None
    plan = TopkPlan(kwargs.pop("token_indices"), kwargs.pop("block_table"), kwargs.pop("out"),
                    **kwargs)
    plan.convert(None if num_tokens < 0 else num_tokens)


_convert_topk = _operator("convert_topk", _TOPK_PARAMS, _TOPK_OUTPUTS, _run_topk)


# ---------------------------------------------------------------------------
# the wrappers (the package's own functions call these inside torch.compile)


def compute_token_to_req_indices(query_start_loc: torch.Tensor, out: torch.Tensor,
                                 num_mapped_tokens: Optional[int], num_tokens: int) -> torch.Tensor:
    """:func:`attnmeta.compute_token_to_req_indices` through
    ``torch.ops.attnmeta.token_to_req_indices``; returns ``out[:num_tokens]``."""
    torch.ops.attnmeta.token_to_req_indices(
        query_start_loc, out, -1 if num_mapped_tokens is None else num_mapped_tokens, num_tokens)
    return out[:num_tokens]


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
    # Plain loops, dicts and lists only: torch.compile traces this function.
    for name in outputs:
        if name not in OUTPUTS and name not in _DSV4_TENSORS and name not in _DSV4_SCALARS:
            raise TypeError("build_step() got an unknown argument: %s" % name)
    values: Dict[str, Any] = dict(
        query_start_loc=query_start_loc, seq_lens=seq_lens, block_table=block_table,
        num_reqs=query_start_loc.shape[0] - 1 if num_reqs is None else num_reqs,
        num_tokens=num_tokens, capacity=_no_value(capacity), num_mapped=num_mapped,
        block_size=0 if block_size is None else block_size, dcp_world_size=dcp_world_size,
        dcp_rank=dcp_rank, dcp_interleave=dcp_interleave)
    for name in OUTPUTS + _DSV4_TENSORS:
        values[name] = outputs.get(name)
    wants_dsv4 = len(compressed_groups) > 0 or any(values[name] is not None for name in _DSV4_TENSORS)
    if not wants_dsv4:
        torch.ops.attnmeta.build_step(*[values[name] for name in _STEP_NAMES])
        return
    if len(compressed_groups) > MAX_GROUPS:
        raise ValueError("compressed_groups holds %d groups; at most %d"
                         % (len(compressed_groups), MAX_GROUPS))
    ratios: List[int] = []
    sizes: List[int] = []
    for g in range(MAX_GROUPS):
        group = compressed_groups[g] if g < len(compressed_groups) else {}
        for arg, name in _GROUP_ARGS[g]:
            values[arg] = group.get(name)
        ratios.append(int(group.get("ratio", 0)))
        sizes.append(int(group.get("block_size", 0)))
    values.update(num_groups=len(compressed_groups), group_ratios=ratios, group_block_sizes=sizes)
    for name, default in _DSV4_SCALARS.items():
        value = outputs.get(name, default)
        if default is None:
            value = _no_value(value)
        elif isinstance(default, bool):
            value = bool(value)
        values[name] = value
    torch.ops.attnmeta.build_dsv4_step(*[values[name] for name in _DSV4_NAMES])


def convert_topk(token_indices: torch.Tensor, block_table: torch.Tensor, out: torch.Tensor, *,
                 num_tokens: Optional[int] = None, req_id: Optional[torch.Tensor] = None,
                 query_start_loc: Optional[torch.Tensor] = None,
                 valid_counts: Optional[torch.Tensor] = None, compact: bool = False,
                 block_size: int = 64, stride_rows: Optional[int] = None,
                 prefill_workspace_request_ids: Optional[torch.Tensor] = None,
                 prefill_workspace_starts: Optional[torch.Tensor] = None,
                 token_slot: Optional[torch.Tensor] = None, dcp_size: int = 1, dcp_rank: int = 0,
                 cp_kv_cache_interleave_size: int = 1,
                 error_word: Optional[torch.Tensor] = None, blocks_per_peer: int = 0,
                 early_start: bool = False) -> None:
    """One :class:`attnmeta.TopkPlan` conversion through
    ``torch.ops.attnmeta.convert_topk`` (its arguments; ``num_tokens``
    None: every row of token_indices)."""
    torch.ops.attnmeta.convert_topk(
        token_indices, block_table, out, valid_counts, error_word, req_id, query_start_loc,
        prefill_workspace_request_ids, prefill_workspace_starts, token_slot,
        _no_value(num_tokens), compact, block_size, _no_value(stride_rows), dcp_size, dcp_rank,
        cp_kv_cache_interleave_size, blocks_per_peer, early_start)


# From now on the package's functions take this path inside torch.compile.
_compile.install(torch, sys.modules[__name__])
