# SPDX-License-Identifier: Apache-2.0
"""Drop-ins for the DeepSeek-V3.2/V4 metadata functions of serving engines
(contract sections 5, 7, 8): each one launch of the step kernel with only
that product, on torch's current stream (or the CPU backend), never
synchronising; graph-capturable when every buffer is given (``out=None``
allocates, like the engines' own functions). For a whole DSV4 step in one
launch, give every buffer to one :class:`StepPlan` instead."""

from typing import Any, Dict, Optional, Tuple

from ._arrays import dcp_settings, int32
from ._names import call_named
from ._step import StepPlan

__all__ = [
    "batched_swa_indices_and_lens",
    "c128a_row_width",
    "compute_c128a_indices_and_lens",
    "compute_swa_indices_and_lens",
    "get_compressed_slot_mapping",
    "get_pcp_compressed_slot_mapping",
]


Buffer = Any  # a torch tensor, NumPy array, __cuda_array_interface__ or DLPack object


def _full_like_int64(like: Buffer, n: int, value: int) -> Buffer:
    """A new int64 [n] array filled with `value`, of `like`'s kind and device."""
    if hasattr(like, "new_full"):  # torch
        import torch

        return like.new_full((n,), value, dtype=torch.int64)
    import numpy as np

    return np.full(n, value, dtype=np.int64)


def _rows_of(table_like: Buffer) -> int:
    return int(table_like.shape[0])


def _num_reqs(query_start_loc: Buffer, seq_lens: Optional[Buffer],
              *tables: Optional[Buffer]) -> int:
    """The request count the engines launch over: the smallest of the tables'
    rows, ``len(seq_lens)`` and ``len(query_start_loc) - 1`` (graph-capture
    dummy metadata may pad a block table past the real requests)."""
    counts = [_rows_of(query_start_loc) - 1]
    counts += [_rows_of(t) for t in (seq_lens,) + tables if t is not None]
    return max(min(counts), 0)


def _launch(names: Dict[str, str], num_tokens: int, query_start_loc: Buffer,
            seq_lens: Buffer, table: Optional[Buffer], **products: Any) -> None:
    """One launch of a StepPlan of ``products`` over the engines' request
    count (``table``: the block table, or None), its errors naming the
    engine function's arguments (``names``, StepPlan's -> the engine's)."""
    plan = call_named(names, StepPlan, query_start_loc=query_start_loc, seq_lens=seq_lens,
                      **products)
    call_named(names, plan.build, _num_reqs(query_start_loc, seq_lens, table), num_tokens)


def _at_least(value: int, low: int, name: str) -> int:
    value = int32(value, name)
    if value < low:
        raise ValueError("%s (%d) must be >= %d" % (name, value, low))
    return value


def _dcp(world: int, rank: int, interleave: int, block_size: int,
         names: Tuple[str, str] = ("dcp_world_size", "dcp_rank")) -> Tuple[int, int, int]:
    """The DCP arguments checked, with the caller's names (contract section 5:
    with W > 1 every block holds whole interleave groups of each rank)."""
    world, rank, interleave = dcp_settings(world, rank, interleave,
                                           (names[0], names[1], "cp_kv_cache_interleave_size"))
    if world > 1 and block_size % interleave:
        raise ValueError(
            "block_size (%d) must be a multiple of cp_kv_cache_interleave_size (%d) when %s > 1"
            % (block_size, interleave, names[0])
        )
    return world, rank, interleave


_GROUP_NAMES = {
    "compressed_groups[0].slot_mapping": "out",
    "compressed_groups[0].block_table": "block_table",
    "compressed_groups[0].block_size": "block_size",
    "compressed_groups[0].ratio": "compress_ratio",
    "dcp_interleave": "cp_kv_cache_interleave_size",
}


def get_compressed_slot_mapping(
    num_tokens: int,
    query_start_loc: Buffer,
    seq_lens: Buffer,
    block_table: Buffer,
    block_size: int,
    compress_ratio: int,
    out: Optional[Buffer] = None,
    dcp_world_size: Optional[int] = None,
    dcp_rank: Optional[int] = None,
    cp_kv_cache_interleave_size: int = 1,
    *,
    cp_world_size: Optional[int] = None,
    cp_rank: Optional[int] = None,
) -> Buffer:
    """The compressed slot mapping of one compressed KV-cache group (contract
    section 5), with the argument order of vLLM's function of this name:
    R = the smallest of ``block_table.shape[0]``, ``len(seq_lens)`` and
    ``len(query_start_loc) - 1`` requests, T = ``num_tokens``. The token that
    completes ``compress_ratio`` positions gets its compressed row's slot
    (``block_size`` rows a block, DCP placement), every other entry of
    ``out`` -- the whole buffer, not only ``[:num_tokens]`` -- is -1.
    ``out`` (int64, ``len(out) >= num_tokens``) defaults to a new array. DCP
    is ``dcp_world_size`` / ``dcp_rank`` or, as older engine code spells
    them, ``cp_world_size`` / ``cp_rank`` (default 1 / 0).
    Returns ``out[:num_tokens]``."""
    num_tokens = _at_least(num_tokens, 0, "num_tokens")
    world_name, rank_name = "dcp_world_size", "dcp_rank"
    if cp_world_size is not None or cp_rank is not None:
        if dcp_world_size is not None or dcp_rank is not None:
            raise TypeError("give DCP as dcp_world_size/dcp_rank or as cp_world_size/cp_rank, "
                            "not both")
        dcp_world_size, dcp_rank = cp_world_size, cp_rank
        world_name, rank_name = "cp_world_size", "cp_rank"
    ratio = _at_least(compress_ratio, 1, "compress_ratio")
    bs = _at_least(block_size, 1, "block_size")
    world, rank, interleave = _dcp(1 if dcp_world_size is None else dcp_world_size,
                                   0 if dcp_rank is None else dcp_rank,
                                   cp_kv_cache_interleave_size, bs, (world_name, rank_name))
    if block_table is None:
        raise ValueError("block_table is required")
    if out is None:
        out = _full_like_int64(query_start_loc, num_tokens, -1)
    names = dict(_GROUP_NAMES, dcp_world_size=world_name, dcp_rank=rank_name)
    group = dict(block_table=block_table, ratio=ratio, block_size=bs, slot_mapping=out)
    _launch(names, num_tokens, query_start_loc, seq_lens, block_table, compressed_groups=(group,),
            dcp_world_size=world, dcp_rank=rank, dcp_interleave=interleave)
    return out[:num_tokens]


_PCP_NAMES = {
    "pcp_logical_slots": "logical_slot_mapping",
    "pcp_positions": "positions",
    "pcp_logical_block_size": "logical_block_size",
    "compressed_groups[0].block_size": "storage_block_size",
    "compressed_groups[0].ratio": "compress_ratio",
    "compressed_groups[0].slot_mapping": "out",
}


def _zeros_int32_like(like: Buffer, n: int) -> Buffer:
    """A new int32 [n] array of zeros of `like`'s kind and device."""
    if hasattr(like, "new_zeros"):  # torch
        import torch

        return like.new_zeros((n,), dtype=torch.int32)
    import numpy as np

    return np.zeros(n, dtype=np.int32)


def get_pcp_compressed_slot_mapping(
    logical_slot_mapping: Buffer,
    positions: Buffer,
    logical_block_size: int,
    storage_block_size: int,
    compress_ratio: int,
    out: Optional[Buffer] = None,
) -> Buffer:
    """One layer's compressed slot mapping from PCP's gathered logical slot
    mapping (contract section 5b), with the arguments of vLLM's function of
    this name: for each of the T = ``len(logical_slot_mapping)`` tokens,
    -1 unless its logical slot is >= 0 and ``positions[t] + 1`` is a
    multiple of ``compress_ratio``; else ``(slot // logical_block_size) *
    storage_block_size + (slot % logical_block_size) // compress_ratio``.
    ``logical_block_size`` must be a multiple of ``compress_ratio`` and
    ``storage_block_size`` the quotient. Both inputs and ``out`` (default: a
    new array; ``len(out) >= T``, only ``out[:T]`` written) are int64.
    Returns ``out[:T]``."""
    n = int(logical_slot_mapping.shape[0])
    if int(positions.shape[0]) != n:
        raise ValueError("positions has %d entries, logical_slot_mapping %d: one a token"
                         % (int(positions.shape[0]), n))
    lbs = _at_least(logical_block_size, 1, "logical_block_size")
    ratio = _at_least(compress_ratio, 1, "compress_ratio")
    storage = _at_least(storage_block_size, 1, "storage_block_size")
    if lbs % ratio:
        raise ValueError("logical_block_size (%d) must be a multiple of compress_ratio (%d)"
                         % (lbs, ratio))
    if storage != lbs // ratio:
        raise ValueError("storage_block_size (%d) must be logical_block_size // compress_ratio "
                         "= %d" % (storage, lbs // ratio))
    if out is None:
        out = _full_like_int64(logical_slot_mapping, n, -1)
    elif int(out.shape[0]) < n:
        raise ValueError("out has %d entries, fewer than the %d tokens" % (int(out.shape[0]), n))
    slots = out[:n]
    if n == 0:
        return slots
    # no request is read: the step of no requests (one boundary, no lengths)
    qsl = _zeros_int32_like(logical_slot_mapping, 1)
    group = dict(ratio=ratio, block_size=storage, slot_mapping=slots)
    plan = call_named(_PCP_NAMES, StepPlan, query_start_loc=qsl,
                      seq_lens=_zeros_int32_like(logical_slot_mapping, 1), capacity=n,
                      compressed_groups=(group,), pcp_logical_slots=logical_slot_mapping,
                      pcp_positions=positions, pcp_logical_block_size=lbs)
    call_named(_PCP_NAMES, plan.build, 0, n)
    return slots


_SWA_NAMES = {
    "swa_block_table": "block_table",
    "swa_block_size": "block_size",
    "swa_window": "window_size",
    "swa_width": "index_width",
    "swa_token_slots": "slot_mapping",
    "swa_left_visible": "left_visible",
    "swa_right_visible": "right_visible",
    "swa_replay_start": "replay_start",
}


def compute_swa_indices_and_lens(
    swa_indices: Buffer,
    swa_lens: Buffer,
    window_size: int,
    query_start_loc: Buffer,
    seq_lens: Buffer,
    block_table: Buffer,
    block_size: int,
    num_tokens: Optional[int] = None,
    causal: bool = True,
    *,
    slot_mapping: Optional[Buffer] = None,
    is_valid_token: Optional[Buffer] = None,
    left_visible: Optional[Buffer] = None,
    right_visible: Optional[Buffer] = None,
    replay_start: Optional[Buffer] = None,
    index_width: Optional[int] = None,
) -> Tuple[Buffer, Buffer]:
    """The sliding-window rows (contract section 7) of T = ``num_tokens``
    tokens (default ``len(swa_lens)``) into ``swa_indices`` [>= T, width]
    (or vLLM's [>= T, 1, width]) and ``swa_lens``; ``swa_lens`` is cleared
    past T (as the engine's memset does). R = the smallest of
    ``block_table.shape[0]``, ``len(seq_lens)`` and ``len(query_start_loc) - 1``.
    ``causal=False``: a draft block sees its whole block.
    A token without a KV slot gets length 0 and a row of -1: give the
    step's ``slot_mapping`` (int64 [>= T]; a slot < 0 marks the token) or,
    as vLLM's kernel takes it, ``is_valid_token`` (bool [>= T], i.e.
    ``slot_mapping >= 0``; turned into int64 slots 0 / -1 first, one small
    array of the buffers' kind), not both.

    Causal mode only: ``left_visible`` and ``right_visible`` (int32 [>= T],
    both or neither) are the DeepSeek-V4 vision model's in-image counts,
    as vLLM's SWA kernel takes them: token t's row starts ``max(left[t] -
    (window_size - 1), 0)`` positions before its window and ends
    ``right[t]`` positions after the token; the rows then need
    ``window_size`` plus the model's image tokens of width.
    ``replay_start`` (int32 [>= R]) is each request's lowest window
    position (vLLM's batched DeepSeek-V4.1 SWA rows); not with the counts.
    ``index_width`` (default: ``swa_indices``' columns) is the rows'
    width. Lengths are clamped into [0, width]. Returns
    ``(swa_indices[:T], swa_lens[:T])``."""
    n = len(swa_lens) if num_tokens is None else _at_least(num_tokens, 0, "num_tokens")
    window = _at_least(window_size, 1, "window_size")
    bs = _at_least(block_size, 1, "block_size")
    if block_table is None:
        raise ValueError("block_table is required")
    if slot_mapping is not None and is_valid_token is not None:
        raise TypeError("give slot_mapping or is_valid_token, not both")
    slots = slot_mapping if is_valid_token is None else _valid_as_slots(is_valid_token)
    _launch(_SWA_NAMES, n, query_start_loc, seq_lens, block_table, swa_indices=swa_indices,
            swa_lens=swa_lens, swa_block_table=block_table, swa_block_size=bs, swa_window=window,
            swa_width=index_width, swa_causal=causal, swa_token_slots=slots,
            swa_left_visible=left_visible, swa_right_visible=right_visible,
            swa_replay_start=replay_start)
    return swa_indices[:n], swa_lens[:n]


def _boundaries_from(query_start_loc: Buffer, offset: int) -> Buffer:
    """The step's boundaries seen from token ``offset`` on: ``max(qsl -
    offset, 0)``, so the requests before it are empty and token ``offset +
    i`` is token ``i`` of the same request at the same position (one small
    device operation; ``query_start_loc`` itself when offset is 0)."""
    if offset == 0:
        return query_start_loc
    if hasattr(query_start_loc, "clamp"):  # torch
        return (query_start_loc - offset).clamp(min=0)
    import numpy as np

    return np.maximum(query_start_loc - offset, 0).astype(query_start_loc.dtype)


def _stride(x: Buffer, axis: int) -> int:
    """Elements between entries along ``axis`` (torch or NumPy)."""
    stride = getattr(x, "stride", None)
    if callable(stride):
        return int(stride(axis))
    return int(x.strides[axis]) // int(x.itemsize)


def batched_swa_indices_and_lens(
    block_tables: Buffer,
    indices: Buffer,
    indices_width: int,
    lens: Buffer,
    rows: int,
    window_size: int,
    query_start_loc: Buffer,
    seq_lens: Buffer,
    token_to_req_indices: Optional[Buffer],
    is_valid_token: Buffer,
    block_table_stride: int,
    block_size: int,
    replay_start: Buffer,
    token_offset: int,
    num_tokens: int,
) -> Tuple[Buffer, Buffer]:
    """vLLM's batched DeepSeek-V4.1 SWA rows (``_batched_swa_indices_and_lens_kernel``
    over a grid of ``(num_tokens, G)``), every group in one launch (contract
    section 7, SWA groups): the window rows of tokens ``token_offset ..
    token_offset + num_tokens - 1`` into ``indices`` [G, rows, width] (or
    [G, rows, 1, width]) at row ``t - token_offset`` of each group, and their
    lengths into ``lens`` [G, rows] (the same in every group: written once,
    then copied to the other groups, one device operation).

    The kernel's arguments, with one change: vLLM passes ``table_ptrs``, a
    device array of the G tables' addresses; here ``block_tables`` is the G
    tables as one array [G, R, cols] (any group stride; an engine whose
    tables are views of one allocation has it as a strided view). The rows'
    stride must be ``indices_width`` and the tables' ``block_table_stride``,
    as vLLM's kernel addresses them. ``replay_start`` (int32 [>= R]) raises
    each request's window start; ``is_valid_token[t]`` false gives length 0
    and a row of -1. ``token_to_req_indices`` is not read: each token's
    request comes from ``query_start_loc``. Returns ``(indices[:, :n],
    lens[:, :n])``."""
    n = _at_least(num_tokens, 0, "num_tokens")
    offset = _at_least(token_offset, 0, "token_offset")
    groups = int(block_tables.shape[0]) if getattr(block_tables, "ndim", 0) == 3 else 0
    if groups < 1:
        raise ValueError("block_tables must be [G, R, cols] with G >= 1")
    if tuple(indices.shape[:2]) != (groups, int(rows)) or tuple(lens.shape) != (groups, int(rows)):
        raise ValueError("indices must be [G, rows, (1,) width] and lens [G, rows] (G = %d, "
                         "rows = %d)" % (groups, int(rows)))
    if n > int(rows):
        raise ValueError("num_tokens (%d) exceeds the %d rows of a group" % (n, int(rows)))
    width = int(indices_width)
    if (int(indices.shape[-1]) != width or _stride(indices, 1) != width
            or _stride(indices, -1) != 1):
        raise ValueError("indices' rows must be indices_width (%d) wide and dense"
                         % width)
    if _stride(block_tables, 1) != int(block_table_stride):
        raise ValueError("block_table_stride (%d) is not the tables' row stride (%d)"
                         % (int(block_table_stride), _stride(block_tables, 1)))
    del token_to_req_indices  # attnmeta finds each token's request from the boundaries
    window = _at_least(window_size, 1, "window_size")
    bs = _at_least(block_size, 1, "block_size")
    slots = _valid_as_slots(is_valid_token[offset:offset + n])
    qsl = _boundaries_from(query_start_loc, offset)
    names = dict(_SWA_NAMES, swa_block_table="block_tables", swa_width="indices_width",
                 swa_indices="indices", swa_lens="lens")
    _launch(names, n, qsl, seq_lens, block_tables[0], swa_indices=indices[:, :n],
            swa_lens=lens[0, :n], swa_block_table=block_tables, swa_block_size=bs,
            swa_window=window, swa_width=width, swa_causal=True,
            swa_token_slots=slots, swa_replay_start=replay_start)
    if groups > 1 and n > 0:
        lens[1:, :n] = lens[0:1, :n]  # the lengths do not depend on the table
    return indices[:, :n], lens[:, :n]


def _valid_as_slots(is_valid: Buffer) -> Buffer:
    """vLLM's per-token validity (bool) as slots the step reads: 0 for a
    valid token, -1 for one without a KV slot."""
    if hasattr(is_valid, "to") and hasattr(is_valid, "new_full"):  # torch
        import torch

        return is_valid.to(torch.int64) - 1
    import numpy as np

    return np.asarray(is_valid).astype(np.int64) - 1


_C128A_NAMES = {
    "c128a_prefill_rows": "prefill_indices",
    "c128a_num_decode_tokens": "num_decode_tokens",
    "c128a_rows": "indices",
    "c128a_lens": "lens",
    "c128a_block_table": "block_table",
    "c128a_block_size": "block_size",
    "c128a_ratio": "compress_ratio",
    "dcp_interleave": "cp_kv_cache_interleave_size",
}


def compute_c128a_indices_and_lens(
    indices: Buffer,
    lens: Buffer,
    query_start_loc: Buffer,
    seq_lens: Buffer,
    block_table: Optional[Buffer],
    block_size: int,
    compress_ratio: int = 128,
    num_tokens: Optional[int] = None,
    local: bool = False,
    dcp_world_size: int = 1,
    dcp_rank: int = 0,
    cp_kv_cache_interleave_size: int = 1,
    *,
    num_decode_tokens: Optional[int] = None,
    prefill_indices: Optional[Buffer] = None,
    max_seq_len: Optional[int] = None,
) -> Tuple[Buffer, ...]:
    """The heavily compressed (C128A) rows (contract section 8) of T =
    ``num_tokens`` tokens (default ``len(lens)``) into ``indices`` [>= T,
    width] (or [>= T, 1, width]) and ``lens`` (cleared past T): every
    compressed row a token sees, as global slots through ``block_table``
    (``block_size`` compressed rows a block, packed per DCP rank) or, with
    ``local=True``, as request-local indices (``block_table`` may then be
    None). R = the smallest of ``block_table.shape[0]`` (when given),
    ``len(seq_lens)`` and ``len(query_start_loc) - 1``.
    Returns ``(indices[:T], lens[:T])``.

    A mixed batch in one launch, as vLLM's ``build_c128a_topk_metadata``
    builds it: ``num_decode_tokens`` = D, tokens [0, D) decode tokens
    (global rows into ``indices``, lengths into ``lens``), the rest prefill
    tokens, whose request-local rows go to ``prefill_indices`` [>= T,
    width] at row t - D (their lengths, the local ones, into ``lens[t]``).
    ``max_seq_len`` (the host's largest sequence length of the batch) sets
    the rows' width as vLLM does, :func:`c128a_row_width` of it, within the
    buffers' columns; without it the width is the columns. Returns vLLM's
    three views ``(indices[:D, :width], lens[:D], prefill_indices[:T - D,
    :width])``."""
    n = len(lens) if num_tokens is None else _at_least(num_tokens, 0, "num_tokens")
    ratio = _at_least(compress_ratio, 1, "compress_ratio")
    bs = _at_least(block_size, 1, "block_size")
    world, rank, interleave = _dcp(dcp_world_size, dcp_rank, cp_kv_cache_interleave_size, bs)
    mixed = num_decode_tokens is not None
    if prefill_indices is not None and not mixed:
        raise ValueError("prefill_indices needs num_decode_tokens (a mixed batch)")
    if mixed and local:
        raise ValueError("num_decode_tokens (a mixed batch) and local=True exclude each other")
    if block_table is None and not local:
        raise ValueError("block_table is required for global slots (local=False)")
    table = None if local else block_table
    more: Dict[str, Any] = {}
    width = None
    decodes = 0
    if num_decode_tokens is not None:
        decodes = _at_least(num_decode_tokens, 0, "num_decode_tokens")
        if decodes > n:
            raise ValueError("num_decode_tokens (%d) exceeds num_tokens (%d)" % (decodes, n))
        more = dict(c128a_num_decode_tokens=decodes, c128a_prefill_rows=prefill_indices)
    if max_seq_len is not None:
        cols = [int(b.shape[-1]) for b in (indices, prefill_indices) if b is not None]
        width = c128a_row_width(max_seq_len, ratio, min(cols) if cols else 0)
    _launch(_C128A_NAMES, n, query_start_loc, seq_lens, table, c128a_rows=indices,
            c128a_lens=lens, c128a_block_table=table, c128a_ratio=ratio, c128a_block_size=bs,
            c128a_local=local, c128a_width=width, dcp_world_size=world, dcp_rank=rank,
            dcp_interleave=interleave, **more)
    if not mixed:
        return indices[:n], lens[:n]
    w = int(indices.shape[-1]) if width is None else width
    rows = indices if len(indices.shape) == 2 else indices.reshape(indices.shape[0], -1)
    pre = prefill_indices
    if pre is not None and len(pre.shape) == 3:
        pre = pre.reshape(pre.shape[0], -1)
    return (rows[:decodes, :w], lens[:decodes],
            None if pre is None else pre[:n - decodes, :w])


def c128a_row_width(max_seq_len: int, compress_ratio: int, max_width: int,
                    alignment: int = 128) -> int:
    """The C128A rows' width for a batch whose longest sequence holds
    ``max_seq_len`` tokens, as vLLM sizes them: the longest compressed
    length (``max_seq_len // compress_ratio``) rounded up to
    ``alignment``, at most ``max_width`` (the buffers' columns); one
    ``alignment`` when that length is 0, and 0 when ``max_seq_len < 1``.
    A host value: no device data is read."""
    ratio = _at_least(compress_ratio, 1, "compress_ratio")
    align = _at_least(alignment, 1, "alignment")
    top = max(int(max_width), 0)
    if int(max_seq_len) < 1:
        return 0
    longest = min(int(max_seq_len) // ratio, top)
    if longest == 0:
        return min(top, align)
    return min(top, -(-longest // align) * align)
