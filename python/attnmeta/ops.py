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

each declaring the outputs it writes in place, with a fake (meta)
implementation that writes nothing, so ``torch.compile(fullgraph=True)``
traces them as single opaque nodes: no graph break, no recompilation per
call. Inside a compiled region the package's own functions
(:func:`attnmeta.compute_token_to_req_indices`, :func:`attnmeta.build_step`,
``StepPlan.build``) route themselves here; outside one they stay the direct
ctypes call, which costs a few µs of host time less than a trip through
torch's dispatcher (``python/bench_overhead.py`` measures both).

The wrappers :func:`compute_token_to_req_indices` and :func:`build_step`
below call the operators explicitly (the same arguments as the package's
functions).
"""

import sys
from typing import Optional

try:
    import torch
except ImportError as exc:
    raise ImportError("attnmeta.ops needs torch (>= 2.4): %s" % exc) from None

from . import _compile, _step

__all__ = ["compute_token_to_req_indices", "build_step", "OUTPUTS"]

if not hasattr(torch, "library") or not hasattr(torch.library, "custom_op"):
    raise ImportError(
        "attnmeta.ops needs torch >= 2.4 (torch.library.custom_op); this is torch %s"
        % torch.__version__
    )

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


@torch.library.custom_op("attnmeta::token_to_req_indices", mutates_args=("out",))
def _token_to_req_indices(query_start_loc: torch.Tensor, out: torch.Tensor, num_mapped_tokens: int,
                          num_tokens: int) -> None:
    _step._token_to_req(query_start_loc, out, num_tokens, None, num_mapped_tokens, None, None)


@_token_to_req_indices.register_fake
def _token_to_req_indices_fake(query_start_loc, out, num_mapped_tokens, num_tokens):
    return None


@torch.library.custom_op(
    "attnmeta::build_step",
    mutates_args=OUTPUTS,
)
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
def _build_step_fake(query_start_loc, seq_lens, block_table, token_to_req, seq_lens_out,
                     global_seq_lens_out, block_table_out, decode_lens_out, req_indices_out,
                     per_req_lens_out, positions, slot_mapping, error_word, num_reqs, num_tokens,
                     capacity, num_mapped, block_size, dcp_world_size, dcp_rank, dcp_interleave):
    return None


def compute_token_to_req_indices(query_start_loc: torch.Tensor, out: torch.Tensor,
                                 num_mapped_tokens: Optional[int], num_tokens: int) -> torch.Tensor:
    """:func:`attnmeta.compute_token_to_req_indices` through
    ``torch.ops.attnmeta.token_to_req_indices``; returns ``out[:num_tokens]``."""
    torch.ops.attnmeta.token_to_req_indices(
        query_start_loc, out, -1 if num_mapped_tokens is None else num_mapped_tokens, num_tokens)
    return out[:num_tokens]


def build_step(query_start_loc: torch.Tensor, num_tokens: int, *, num_reqs: Optional[int] = None,
               capacity: Optional[int] = None, num_mapped: int = -1,
               block_size: Optional[int] = None,
               dcp_world_size: int = 1, dcp_rank: int = 0, dcp_interleave: int = 1,
               seq_lens: Optional[torch.Tensor] = None, block_table: Optional[torch.Tensor] = None,
               **outputs: Optional[torch.Tensor]) -> None:
    """:func:`attnmeta.build_step` through ``torch.ops.attnmeta.build_step``
    (torch tensors only; no ``context`` or ``stream``: torch's current
    stream). The operator's ``block_size`` 0 stands for "not given"."""
    # Plain loops and lists only: torch.compile traces this function.
    for name in outputs:
        if name not in OUTPUTS:
            raise TypeError("build_step() got an unknown argument: %s" % name)
    if num_reqs is None:
        num_reqs = query_start_loc.shape[0] - 1
    buffers = [outputs.get(name) for name in OUTPUTS]
    torch.ops.attnmeta.build_step(
        query_start_loc, seq_lens, block_table, *buffers,
        num_reqs, num_tokens, -1 if capacity is None else capacity, num_mapped,
        0 if block_size is None else block_size, dcp_world_size, dcp_rank, dcp_interleave)


# From now on the package's functions take this path inside torch.compile.
_compile.install(torch, sys.modules[__name__])
