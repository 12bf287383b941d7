# SPDX-License-Identifier: Apache-2.0
"""vLLM's DCP peer views (``sparse_utils.py``; contract sections 6c and 6d),
for engines that read every rank's KV through one rank-major peer view:
``convert_global_indices_to_dcp_peer_slots`` (a token's global top-k
positions to peer slots, one launch of the top-k conversion) and
``build_rotated_dcp_peer_block_table`` (the page table over the view
rotated to the calling rank, a product of that launch), with vLLM's
arguments and checks; and :class:`PeerTablePlan`, the table over
persistent buffers."""

import ctypes
import sys
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

from . import _lib
from ._arrays import device_str, int32, table, torch_state
from ._members import TOPK, Attach
from ._names import call_named
from ._topk import Converted, TopkLaunch, TopkPlan, _new_like

if TYPE_CHECKING:
    from ._context import Context

Buffer = Any  # a torch tensor or a NumPy array

__all__ = [
    "PeerTablePlan",
    "build_rotated_dcp_peer_block_table",
    "convert_global_indices_to_dcp_peer_slots",
]

_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1


def _is_torch(x: Any) -> bool:
    ts = torch_state()
    return ts is not None and isinstance(x, ts.Tensor)


def _shape(x: Any) -> Tuple[int, ...]:
    return tuple(int(n) for n in getattr(x, "shape", ()))


def _strides(x: Any) -> Tuple[int, ...]:
    """Strides in elements (torch or NumPy)."""
    if _is_torch(x):
        return tuple(x.stride())
    return tuple(int(s) // x.itemsize for s in x.strides)


def _address(x: Any) -> int:
    if _is_torch(x):
        return int(x.data_ptr())
    return int(x.__array_interface__["data"][0])


def _dtype_name(x: Any) -> str:
    return str(getattr(x, "dtype", type(x).__name__)).replace("torch.", "")


def _unit_rows(gathered: Buffer) -> Buffer:
    """``gathered`` [W, R, M], or a contiguous copy where its strides are
    not the C layout's (unit columns, rows and ranks at non-negative
    strides that keep a rank's rows apart)."""
    s0, s1, s2 = _strides(gathered)
    _, rows, cols = _shape(gathered)
    if s2 == 1 and s0 >= 0 and (rows <= 1 or s1 >= cols):
        return gathered
    if _is_torch(gathered):
        return gathered.contiguous()
    return sys.modules["numpy"].ascontiguousarray(gathered)


def _unit_columns(x: Buffer) -> Buffer:
    """An input vector or table, or a contiguous copy where its elements
    (a table's columns) are not at unit stride: vLLM's kernels take any
    strides, the conversion reads unit-stride vectors and rows."""
    shape = _shape(x)
    n = shape[-1] if shape else 0
    if (len(shape) == 2 and shape[0] == 0) or n <= 1 or _strides(x)[-1] == 1:
        return x
    if _is_torch(x):
        return x.contiguous()
    return sys.modules["numpy"].ascontiguousarray(x)


def _peer_view(gathered: Buffer, local_rank: int, peer_block_stride: int) -> Tuple[int, int, int]:
    """vLLM's checks of a peer view: ``gathered`` [dcp_size, num_requests,
    max_owner_pages], local_rank and peer_block_stride; its three sizes."""
    shape = _shape(gathered)
    if len(shape) != 3:
        raise ValueError("gathered_block_tables must have shape [dcp_size, num_requests, "
                         "max_owner_pages], got %s." % (shape,))
    world, rows, cols = shape
    if world < 1:
        raise ValueError("gathered_block_tables must contain at least one DCP owner.")
    if not 0 <= local_rank < world:
        raise ValueError("local_rank must be in [0, %d), got %d." % (world, local_rank))
    if peer_block_stride < 1:
        raise ValueError("peer_block_stride must be positive, got %d." % peer_block_stride)
    if peer_block_stride > _INT64_MAX // world:
        raise ValueError("The rotated peer block-table address space exceeds int64.")
    return world, rows, cols


class PeerTablePlan(TopkLaunch):
    """The rotated DCP peer table (contract section 6d) over persistent,
    caller-owned buffers: ``gathered_block_tables`` [W, R, M] int32 (rank
    ``o``'s table at ``[o]``; unit column stride, any row and rank strides,
    0 included) into ``out`` [R, >= width] int32, ``width`` default W * M.
    Page L of row r: rank ``o = L % W``'s page ``L // W``, in segment
    ``(o - local_rank) % W`` of ``peer_block_stride`` blocks; -1 for
    padding, ids outside ``[0, peer_block_stride)`` and blocks past int32.
    :meth:`build` makes the one launch."""

    __slots__ = ()

    def __init__(self, gathered_block_tables: Buffer, out: Buffer, *, local_rank: int,
                 peer_block_stride: int, width: Optional[int] = None,
                 error_word: Optional[Buffer] = None,
                 context: "Optional[Context]" = None) -> None:
        self._start(dict(gathered_block_tables=gathered_block_tables, out=out,
                         local_rank=local_rank, peer_block_stride=peer_block_stride,
                         width=width, error_word=error_word, context=context))

    def _setup(self, args: Dict[str, Any]) -> None:
        g = args["gathered_block_tables"]
        rank = int32(args["local_rank"], "local_rank")
        stride = int(args["peer_block_stride"])
        world, rows, cols = _peer_view(g, rank, stride)
        op = _lib.Topk()
        _lib.topk_init(ctypes.addressof(op))
        op.topk_count = op.topk_stride = op.out_stride = 1  # no rows: the table alone
        ptr, dev, _, _, row_stride = table(g[0], "gathered_block_tables")
        keep: Dict[str, Any] = {"gathered_block_tables": g}
        op.peer_tables = ptr or None
        op.peer_tables_stride = row_stride
        op.peer_tables_cols = int32(cols, "max_owner_pages")
        op.peer_tables_owner_stride = _strides(g)[0] if world > 1 else 0
        op.num_reqs = int32(rows, "num_requests")
        op.dcp_world_size = int32(world, "dcp_size")
        op.dcp_rank = rank
        op.peer_blocks = stride
        width = world * cols if args["width"] is None else int(args["width"])
        op.peer_table_width = int32(width, "width")

        def check_dev(d: Any, name: str) -> None:
            if d != dev:
                raise ValueError("%s is on %s but gathered_block_tables is on %s"
                                 % (name, device_str(d), device_str(dev)))

        attach = Attach(check_dev, None, keep, {}, [])
        n, ocols = attach(op, TOPK["peer_table_out"], args["out"], "out")
        if n < rows or ocols < width:
            raise ValueError("out of shape (%d, %d) cannot hold the table's %d rows of %d pages"
                             % (n, ocols, rows, width))
        if args["error_word"] is not None:
            attach(op, TOPK["error_word"], args["error_word"], "error_word")
        self._hold(args, keep, op, dev, "gathered_block_tables")

    def build(self, stream: Any = None) -> None:
        """Builds the table in one launch on ``stream`` (default: torch's
        current stream of the buffers' device). Never synchronises or
        allocates."""
        self._launch(stream)

    __call__ = build


def _require_int32(x: Buffer, name: str) -> None:
    if _dtype_name(x) != "int32":
        raise TypeError("%s must have dtype int32, got %s." % (name, _dtype_name(x)))


def _check_block_n(BLOCK_N: int) -> None:
    if BLOCK_N < 1 or BLOCK_N & (BLOCK_N - 1):
        raise ValueError("BLOCK_N must be a positive power of two, got %d." % BLOCK_N)


def build_rotated_dcp_peer_block_table(
    gathered_block_tables: Buffer,
    *,
    local_rank: int,
    peer_block_stride: int,
    cp_kv_cache_interleave_size: int,
    block_size: int,
    BLOCK_N: int = 128,
) -> Buffer:
    """vLLM's ``build_rotated_dcp_peer_block_table`` (same arguments and
    checks): ``gathered_block_tables`` [dcp_size, num_requests,
    max_owner_pages] int32 (any strides) to a new [num_requests, dcp_size *
    max_owner_pages] int32 page table over the peer view rotated so that
    ``local_rank`` is segment 0 (contract section 6d). ``BLOCK_N`` is
    vLLM's tile width: checked, not needed."""
    _require_int32(gathered_block_tables, "gathered_block_tables")
    world, rows, cols = _peer_view(gathered_block_tables, local_rank, peer_block_stride)
    if block_size < 1:
        raise ValueError("block_size must be positive, got %d." % block_size)
    if cp_kv_cache_interleave_size != block_size:
        raise ValueError("Page-sharded DCP peer tables require cp_kv_cache_interleave_size == "
                         "block_size, got %d and %d." % (cp_kv_cache_interleave_size, block_size))
    _check_block_n(BLOCK_N)
    out = _new_like(gathered_block_tables, (rows, world * cols))
    if rows > 0 and world * cols > 0:
        PeerTablePlan(_unit_rows(gathered_block_tables), out, local_rank=local_rank,
                      peer_block_stride=peer_block_stride).build()
    return out


def convert_global_indices_to_dcp_peer_slots(
    req_id: Buffer,
    block_table: Buffer,
    token_indices: Buffer,
    dcp_size: int,
    blocks_per_peer: int,
    cp_kv_cache_interleave_size: int = 1,
    block_size: int = 64,
    BLOCK_N: int = 128,
    return_valid_counts: bool = False,
    out: Optional[Buffer] = None,
    valid_counts_out: Optional[Buffer] = None,
) -> Converted:
    """vLLM's ``convert_global_indices_to_dcp_peer_slots`` (same arguments,
    defaults and checks): each global position ``x`` of ``token_indices``
    [T, K] becomes the rank-major peer slot ``(o * blocks_per_peer + id) *
    block_size + local % block_size`` of its owner ``o = (x // I) % dcp_size``
    (``id`` from ``block_table`` at the owner-local block), -1 where invalid
    (contract section 6c). One launch of the top-k conversion; returns
    ``out`` (the caller's persistent buffer of token_indices' shape, or new)
    and with ``return_valid_counts`` the valid count of each row (into
    ``valid_counts_out`` when given). ``BLOCK_N``: checked, not needed."""
    if dcp_size < 1:
        raise ValueError("dcp_size must be positive, got %d." % dcp_size)
    if blocks_per_peer < 1:
        raise ValueError("blocks_per_peer must be positive, got %d." % blocks_per_peer)
    interleave = cp_kv_cache_interleave_size
    if interleave < 1:
        raise ValueError("cp_kv_cache_interleave_size must be positive, got %d." % interleave)
    if block_size < interleave or block_size % interleave != 0:
        raise ValueError("block_size (%d) must be greater than or equal to and divisible by "
                         "cp_kv_cache_interleave_size (%d)." % (block_size, interleave))
    if dcp_size * blocks_per_peer * block_size > _INT32_MAX:
        raise ValueError("Rank-major peer slots do not fit in int32.")
    _check_block_n(BLOCK_N)
    for x, name in ((req_id, "req_id"), (block_table, "block_table"),
                    (token_indices, "token_indices")):
        _require_int32(x, name)
    shape, tshape = _shape(token_indices), _shape(block_table)
    if len(_shape(req_id)) != 1:
        raise ValueError("req_id must be 1D, got shape %s." % (_shape(req_id),))
    if len(tshape) != 2:
        raise ValueError("block_table must be 2D, got shape %s." % (tshape,))
    if len(shape) != 2:
        raise ValueError("token_indices must be 2D, got shape %s." % (shape,))
    if _shape(req_id)[0] != shape[0]:
        raise ValueError("req_id (%d) and token_indices (%d) must have the same row count."
                         % (_shape(req_id)[0], shape[0]))
    if tshape[0] == 0 or tshape[1] == 0:
        raise ValueError("block_table must have at least one row and one column.")
    if shape[1] == 0:
        raise ValueError("token_indices must contain at least one column.")
    if out is None:
        out = _new_like(token_indices, shape)
    elif _shape(out) != shape or _dtype_name(out) != "int32":
        raise ValueError("out must match token_indices shape, dtype, and device; got shape=%s, "
                         "dtype=%s." % (_shape(out), _dtype_name(out)))
    elif shape[0] * shape[1] > 0 and _address(out) == _address(token_indices):
        raise ValueError("out must not alias token_indices.")
    counts = None
    names = {"valid_counts": "valid_counts", "blocks_per_peer": "blocks_per_peer"}
    if return_valid_counts:
        if valid_counts_out is None:
            counts = _new_like(token_indices, (shape[0],), 0)
        elif _shape(valid_counts_out) != (shape[0],) or _dtype_name(valid_counts_out) != "int32":
            raise ValueError("valid_counts_out must be a one-dimensional int32 tensor with %d "
                             "entries; got shape=%s, dtype=%s."
                             % (shape[0], _shape(valid_counts_out), _dtype_name(valid_counts_out)))
        else:
            counts = valid_counts_out
            names["valid_counts"] = "valid_counts_out"
    elif valid_counts_out is not None:
        raise ValueError("valid_counts_out requires return_valid_counts=True.")
    if shape[0] > 0:
        plan = call_named(names, TopkPlan, _unit_columns(token_indices), _unit_columns(block_table),
                          out, req_id=_unit_columns(req_id),
                          valid_counts=counts, block_size=block_size, dcp_size=dcp_size,
                          cp_kv_cache_interleave_size=interleave,
                          blocks_per_peer=blocks_per_peer)
        call_named(names, plan.convert, shape[0])
    return (out, counts) if return_valid_counts else out
