"""Drop-ins for the DeepSeek-V3.2/V4 metadata functions of serving engines
(contract sections 5, 7, 8): each one launch of the step kernel with only
that product, on torch's current stream (or the CPU backend), never
synchronising; graph-capturable when every buffer is given (``out=None``
allocates, like the engines' own functions). For a whole DSV4 step in one
launch, give every buffer to one :class:`StepPlan` instead."""

from ._arrays import int32
from ._step import StepPlan

__all__ = [
    "compute_c128a_indices_and_lens",
    "compute_swa_indices_and_lens",
    "get_compressed_slot_mapping",
]


def _full_like_int64(like, n, value):
    """A new int64 [n] array filled with `value`, of `like`'s kind and device."""
    if hasattr(like, "new_full"):  # torch
        import torch

        return like.new_full((n,), value, dtype=torch.int64)
    import numpy as np

    return np.full(n, value, dtype=np.int64)


def _rows_of(table_like):
    return int(table_like.shape[0])


def get_compressed_slot_mapping(
    num_tokens,
    query_start_loc,
    seq_lens,
    block_table,
    block_size,
    compress_ratio,
    out=None,
    dcp_world_size=1,
    dcp_rank=0,
    cp_kv_cache_interleave_size=1,
):
    """The compressed slot mapping of one compressed KV-cache group (contract
    section 5), with the argument order of vLLM's function of this name:
    R = ``block_table.shape[0]`` requests, T = ``num_tokens``. The token that
    completes ``compress_ratio`` positions gets its compressed row's slot
    (``block_size`` rows a block, DCP placement), every other entry of
    ``out`` -- the whole buffer, not only ``[:num_tokens]`` -- is -1.
    ``out`` (int64, ``len(out) >= num_tokens``) defaults to a new array.
    Returns ``out[:num_tokens]``."""
    num_tokens = int32(num_tokens, "num_tokens")
    if out is None:
        out = _full_like_int64(query_start_loc, num_tokens, -1)
    plan = StepPlan(
        query_start_loc,
        seq_lens=seq_lens,
        compressed_groups=(
            dict(block_table=block_table, ratio=compress_ratio, block_size=block_size,
                 slot_mapping=out),
        ),
        dcp_world_size=dcp_world_size,
        dcp_rank=dcp_rank,
        dcp_interleave=cp_kv_cache_interleave_size,
    )
    plan.build(_rows_of(block_table), num_tokens)
    return out[:num_tokens]


def compute_swa_indices_and_lens(
    swa_indices,
    swa_lens,
    window_size,
    query_start_loc,
    seq_lens,
    block_table,
    block_size,
    num_tokens=None,
    causal=True,
):
    """The sliding-window rows (contract section 7) of T = ``num_tokens``
    tokens (default ``len(swa_lens)``) into ``swa_indices`` [>= T, width]
    (or vLLM's [>= T, 1, width]) and ``swa_lens``; ``swa_lens`` is cleared
    past T (as the engine's memset does). R = ``block_table.shape[0]``.
    ``causal=False``: a draft block sees its whole block. Returns
    ``(swa_indices[:T], swa_lens[:T])``."""
    n = len(swa_lens) if num_tokens is None else int32(num_tokens, "num_tokens")
    plan = StepPlan(
        query_start_loc,
        seq_lens=seq_lens,
        swa_indices=swa_indices,
        swa_lens=swa_lens,
        swa_block_table=block_table,
        swa_block_size=block_size,
        swa_window=window_size,
        swa_causal=causal,
    )
    plan.build(_rows_of(block_table), n)
    return swa_indices[:n], swa_lens[:n]


def compute_c128a_indices_and_lens(
    indices,
    lens,
    query_start_loc,
    seq_lens,
    block_table,
    block_size,
    compress_ratio=128,
    num_tokens=None,
    local=False,
    dcp_world_size=1,
    dcp_rank=0,
    cp_kv_cache_interleave_size=1,
):
    """The heavily compressed (C128A) rows (contract section 8) of T =
    ``num_tokens`` tokens (default ``len(lens)``) into ``indices`` [>= T,
    width] (or [>= T, 1, width]) and ``lens`` (cleared past T): every
    compressed row a token sees, as global slots through ``block_table``
    (``block_size`` compressed rows a block, packed per DCP rank) or, with
    ``local=True``, as request-local indices. R = ``block_table.shape[0]``
    (or ``len(seq_lens)`` when ``block_table`` is None in local mode).
    Returns ``(indices[:T], lens[:T])``."""
    n = len(lens) if num_tokens is None else int32(num_tokens, "num_tokens")
    plan = StepPlan(
        query_start_loc,
        seq_lens=seq_lens,
        c128a_rows=indices,
        c128a_lens=lens,
        c128a_block_table=None if local else block_table,
        c128a_ratio=compress_ratio,
        c128a_block_size=block_size,
        c128a_local=local,
        dcp_world_size=dcp_world_size,
        dcp_rank=dcp_rank,
        dcp_interleave=cp_kv_cache_interleave_size,
    )
    plan.build(_rows_of(block_table) if block_table is not None else len(seq_lens), n)
    return indices[:n], lens[:n]
