# SPDX-License-Identifier: Apache-2.0
"""The per-layer sparse top-k conversion (contract section 6): request-local
top-k indices to global KV-cache slots, as a prepared plan over persistent
buffers (checked once; each call sets the sizes and launches, safe to
capture in a CUDA graph) and as the engines' functions (which allocate
their outputs, like the engines' own)."""

import ctypes
import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

from . import _compile, _lib
from ._arrays import dcp_settings, device_str, int32, stream_handle, table, torch_state
from ._context import context_for
from ._lib import Backend
from ._members import TOPK, Attach
from ._names import call_named
from ._plan import Plan

if TYPE_CHECKING:
    from ._context import Context

Buffer = Any  # a torch tensor, NumPy array, __cuda_array_interface__ or DLPack object

__all__ = [
    "TopkPlan",
    "convert_req_index_to_global_index",
    "filter_and_convert_dcp_index",
    "filter_peer_slots_to_owner_local",
]

_INT32_MAX = 2**31 - 1
_DCP_NAMES = ("dcp_size", "dcp_rank", "cp_kv_cache_interleave_size")


class TopkLaunch(Plan):
    """What the plans that launch the top-k conversion share (TopkPlan,
    PeerTablePlan): the operation they hold, checked, and its one launch."""

    __slots__ = ("_op", "_addr", "_dev", "_raw_stream", "_guard")
    _op: Any
    _addr: int
    _dev: Tuple[int, int]
    _raw_stream: Optional[Callable[[int], Optional[int]]]
    _guard: bool

    def _hold(self, args: Dict[str, Any], keep: Dict[str, Any], op: Any, dev: Tuple[int, int],
              first: str) -> None:
        """Keeps the checked operation over the buffers of ``dev``; ``first``
        names the buffer a context that does not match is reported for."""
        self._args = args
        self._keep = keep
        self._op = op
        self._addr = ctypes.addressof(op)
        self._ctx = context_for(dev, args["context"], first)
        self._dev = dev
        if dev[0] == Backend.CPU:
            self._raw_stream = None
            self._guard = False
        else:
            ts = torch_state()
            self._raw_stream = ts.raw_stream
            self._guard = ts.multi_gpu

    def _launch(self, stream: Any) -> None:
        """attnmeta_convert_topk on ``stream`` (default: torch's current
        stream of the buffers' device), torch's current device kept."""
        if self._raw_stream is None:
            if stream is not None:
                stream_handle(stream, self._dev)
            status = _lib.convert_topk(self._ctx._handle, self._addr, None)
        else:
            index = self._dev[1]
            handle = self._raw_stream(index) if stream is None else stream_handle(stream, self._dev)
            ts = torch_state()
            previous = ts.get_device() if self._guard else index
            try:
                status = _lib.convert_topk(self._ctx._handle, self._addr, handle)
            finally:
                if previous != index:
                    ts.set_device(previous)
        if status:
            raise self._ctx.error(status, "attnmeta_convert_topk")


class TopkPlan(TopkLaunch):
    """One layer's top-k conversion over persistent, caller-owned buffers.

    ``token_indices`` [T, K] int32 (any row stride, unit column stride):
    request-local KV positions, negative = none. The token's request comes
    from ``req_id`` [>= T] or, found on the device as the step does, from
    ``query_start_loc`` [>= R + 1] (exactly one of the two).
    ``block_table`` [R, cols] (any row stride). ``out`` [>= T, >= K] int32.

    Optional: ``valid_counts`` [>= T] (valid entries per row); ``compact``
    (needs valid_counts): each row's valid slots first, in increasing column
    order, then -1; ``prefill_workspace_request_ids`` [>= T] with
    ``prefill_workspace_starts`` [P] (prefill tokens map to
    ``starts[p] + x``, with neither DCP ownership nor the table's bound
    applying); ``token_slot`` [>= T] int64 (a token whose slot is negative
    counts 0); ``error_word`` [>= 1]; DCP ``dcp_size``, ``dcp_rank``,
    ``cp_kv_cache_interleave_size``; ``stride_rows`` (cache rows between
    consecutive blocks; default ``block_size``); ``blocks_per_peer`` S >= 1:
    a rank-major DCP peer view (contract section 6c), decode entries of
    every rank ``o`` become ``(o * S + id) * stride_rows + offset``;
    ``early_start``: the launch may begin while the kernel ahead of it on
    the stream still runs, and waits on the device before it reads or
    writes anything (``ATTNMETA_LAUNCH_EARLY_START``; NVIDIA GPUs of compute
    capability 9.0 and later, ignored elsewhere; same results).

    :meth:`convert` (or calling the plan) makes the one launch.
    """

    __slots__ = ("_max_tokens", "_rows")

    def __init__(
        self,
        token_indices: Buffer,
        block_table: Buffer,
        out: Buffer,
        *,
        req_id: Optional[Buffer] = None,
        query_start_loc: Optional[Buffer] = None,
        valid_counts: Optional[Buffer] = None,
        compact: bool = False,
        block_size: int = 64,
        stride_rows: Optional[int] = None,
        prefill_workspace_request_ids: Optional[Buffer] = None,
        prefill_workspace_starts: Optional[Buffer] = None,
        token_slot: Optional[Buffer] = None,
        dcp_size: int = 1,
        dcp_rank: int = 0,
        cp_kv_cache_interleave_size: int = 1,
        error_word: Optional[Buffer] = None,
        context: "Optional[Context]" = None,
        blocks_per_peer: int = 0,
        early_start: bool = False,
    ) -> None:
        args = dict(
            token_indices=token_indices,
            block_table=block_table,
            out=out,
            req_id=req_id,
            query_start_loc=query_start_loc,
            valid_counts=valid_counts,
            compact=compact,
            block_size=block_size,
            stride_rows=stride_rows,
            prefill_workspace_request_ids=prefill_workspace_request_ids,
            prefill_workspace_starts=prefill_workspace_starts,
            token_slot=token_slot,
            dcp_size=dcp_size,
            dcp_rank=dcp_rank,
            cp_kv_cache_interleave_size=cp_kv_cache_interleave_size,
            error_word=error_word,
            context=context,
            blocks_per_peer=blocks_per_peer,
            early_start=early_start,
        )
        self._start(args)

    def _setup(self, args: Dict[str, Any]) -> None:
        op = _lib.Topk()
        _lib.topk_init(ctypes.addressof(op))
        keep: Dict[str, Any] = {}

        ti = args["token_indices"]
        tptr, dev, rows, k, tstride = table(ti, "token_indices")
        if k < 1:
            raise ValueError("token_indices must have at least one column (K >= 1)")
        keep["token_indices"] = ti
        op.topk = tptr
        op.topk_stride = tstride
        op.topk_count = int32(k, "K (token_indices columns)")
        limits: List[Tuple[int, str, str]] = [(rows, "token_indices", "rows (tokens)")]

        def check_dev(d: Any, name: str) -> None:
            if d != dev:
                raise ValueError(
                    "%s is on %s but token_indices is on %s" % (name, device_str(d), device_str(dev))
                )

        attach = Attach(check_dev, None, keep, {"T": limits}, [])

        def given(arg: str, member: str) -> Optional[int]:
            """Attaches argument ``arg`` as ``member`` when given: its length."""
            buf = args[arg]
            return None if buf is None else attach(op, TOPK[member], buf, arg)[0]

        block_size = int32(args["block_size"], "block_size")
        if block_size < 1:
            raise ValueError("block_size (%d) must be >= 1" % block_size)
        op.block_size = block_size
        stride_rows = args["stride_rows"]
        op.stride_rows = 0 if stride_rows is None else int32(stride_rows, "stride_rows")
        if op.stride_rows < 0 or (stride_rows is not None and op.stride_rows == 0):
            raise ValueError("stride_rows (%d) must be >= 1" % op.stride_rows)
        op.dcp_world_size, op.dcp_rank, op.dcp_interleave = dcp_settings(
            args["dcp_size"], args["dcp_rank"], args["cp_kv_cache_interleave_size"], _DCP_NAMES)
        peer = int32(args["blocks_per_peer"], "blocks_per_peer")
        if peer < 0:
            raise ValueError("blocks_per_peer (%d) must be >= 1, or 0 for no peer view" % peer)
        if peer * op.dcp_world_size * (op.stride_rows or block_size) > _INT32_MAX:
            raise ValueError(
                "rank-major peer slots do not fit in int32: dcp_size x blocks_per_peer x "
                "stride_rows = %d" % (peer * op.dcp_world_size * (op.stride_rows or block_size)))
        op.peer_blocks = peer
        op.launch_flags = _lib.LAUNCH_EARLY_START if args["early_start"] else 0

        nreq = attach(op, TOPK["block_table"], args["block_table"])[0]
        if (args["req_id"] is None) == (args["query_start_loc"] is None):
            raise ValueError("give exactly one of req_id and query_start_loc")
        if given("req_id", "req_id") is not None:
            op.num_reqs = int32(nreq, "block_table rows")
        else:
            n = attach(op, TOPK["query_start_loc"], args["query_start_loc"])[0]
            if n < 1:
                raise ValueError("query_start_loc must hold at least one entry (R + 1)")
            if n - 1 > nreq:
                raise ValueError(
                    "query_start_loc has %d requests, block_table only %d rows" % (n - 1, nreq)
                )
            op.num_reqs = n - 1

        if given("prefill_workspace_request_ids", "prefill_req") is not None:
            if args["prefill_workspace_starts"] is None:
                raise ValueError("prefill_workspace_starts is required with prefill_workspace_request_ids")
            p = given("prefill_workspace_starts", "workspace_starts")
            op.num_prefill = int32(p, "prefill_workspace_starts length")
        elif args["prefill_workspace_starts"] is not None:
            raise ValueError("prefill_workspace_starts given without prefill_workspace_request_ids")
        given("token_slot", "token_slot")

        ocols = attach(op, TOPK["out"], args["out"])[1]
        if ocols < k:
            raise ValueError("out has %d columns, fewer than token_indices' %d" % (ocols, k))
        given("valid_counts", "valid_count")
        op.compact = 1 if args["compact"] else 0
        if op.compact and args["valid_counts"] is None:
            raise ValueError("compact needs valid_counts")
        words = given("error_word", "error_word")
        if words is not None and words < 1:
            raise ValueError("error_word must hold at least one int32")

        self._hold(args, keep, op, dev, "token_indices")
        self._rows = rows
        self._max_tokens = min(min(n for n, _, _ in limits), _INT32_MAX)

    def convert(self, num_tokens: Optional[int] = None, stream: Any = None) -> None:
        """Converts rows ``[0, num_tokens)`` (default: every row of
        token_indices) in one launch on ``stream`` (default: torch's current
        stream of the buffers' device). Never synchronises or allocates.
        Inside ``torch.compile`` it is the custom operator
        ``torch.ops.attnmeta.convert_topk``."""
        if _compile.is_compiling():
            traced = {name: value for name, value in self._args.items() if name != "context"}
            _compile.ops_module.convert_topk(num_tokens=num_tokens, **traced)
            return
        t = self._rows if num_tokens is None else num_tokens
        if not 0 <= t <= self._max_tokens:
            raise ValueError("num_tokens (%d) must be in [0, %d]" % (t, self._max_tokens))
        op = self._op
        op.num_tokens = t
        if t == 0:
            return
        self._launch(stream)

    __call__ = convert

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def __repr__(self) -> str:
        return "<attnmeta.TopkPlan on %s: K=%d>" % (device_str(self._dev), self._op.topk_count)


def _new_like(x: Buffer, shape: Tuple[int, ...], value: Optional[int] = None) -> Buffer:
    """A new int32 array of ``shape`` like ``x`` (torch on its device, or
    NumPy), filled with ``value`` unless it is None."""
    ts = torch_state()
    if ts is not None and isinstance(x, ts.Tensor):
        torch = ts.torch
        if value is None:
            return torch.empty(shape, dtype=torch.int32, device=x.device)
        return torch.full(shape, value, dtype=torch.int32, device=x.device)
    np = sys.modules["numpy"]
    return np.empty(shape, dtype=np.int32) if value is None else np.full(shape, value, dtype=np.int32)


Converted = Union[Buffer, Tuple[Buffer, Buffer]]

# TopkPlan's argument names -> the engine functions'
_ENGINE_NAMES = {"block_size": "BLOCK_SIZE", "stride_rows": "BLOCK_STRIDE_ROWS"}


def _run(req_id: Buffer, block_table: Buffer, token_indices: Buffer, BLOCK_SIZE: int,
         NUM_TOPK_TOKENS: int, return_valid_counts: bool, compact: bool,
         out: Optional[Buffer] = None, valid_counts_out: Optional[Buffer] = None,
         **more: Any) -> Converted:
    shape = tuple(token_indices.shape)
    if len(shape) != 2 or shape[1] != NUM_TOPK_TOKENS:
        raise ValueError(
            "token_indices must be [num_tokens, NUM_TOPK_TOKENS = %d], got shape %s"
            % (NUM_TOPK_TOKENS, shape)
        )
    n_req = tuple(getattr(req_id, "shape", (shape[0],)))
    if len(n_req) != 1 or n_req[0] != shape[0]:
        raise ValueError(
            "req_id (shape %s) and token_indices (%d rows) must cover the same tokens"
            % (n_req, shape[0])
        )
    if out is None:
        out = _new_like(token_indices, shape)
    counts = None
    names = dict(_ENGINE_NAMES)
    if return_valid_counts or compact:
        if valid_counts_out is not None and return_valid_counts:
            counts = valid_counts_out
            names["valid_counts"] = "valid_counts_out"
        else:
            counts = _new_like(token_indices, (shape[0],))
    plan = call_named(names, TopkPlan, token_indices, block_table, out, req_id=req_id,
                      valid_counts=counts, compact=compact, block_size=BLOCK_SIZE, **more)
    call_named(names, plan.convert, shape[0])
    return (out, counts) if return_valid_counts else out


def convert_req_index_to_global_index(
    req_id: Buffer,
    block_table: Buffer,
    token_indices: Buffer,
    BLOCK_SIZE: int = 64,
    NUM_TOPK_TOKENS: int = 2048,
    BLOCK_N: int = 128,
    HAS_PREFILL_WORKSPACE: bool = False,
    prefill_workspace_request_ids: Optional[Buffer] = None,
    prefill_workspace_starts: Optional[Buffer] = None,
    return_valid_counts: bool = False,
    out: Optional[Buffer] = None,
    valid_counts_out: Optional[Buffer] = None,
    *,
    BLOCK_STRIDE_ROWS: Optional[int] = None,
) -> Converted:
    """The engines' conversion (same arguments and defaults)::

        out[t, j] = block_table[req_id[t], x // BLOCK_SIZE] * BLOCK_STRIDE_ROWS + x % BLOCK_SIZE

    for ``x = token_indices[t, j]``; -1 where ``x < 0``, where the block is
    past the table (and, unlike the engines' kernel, where ``req_id`` is out
    of range, a block id is negative or the slot overflows int32).
    ``BLOCK_STRIDE_ROWS`` (default ``BLOCK_SIZE``): cache rows between the
    starts of consecutive blocks in a flat view of the cache. With
    ``HAS_PREFILL_WORKSPACE``, a token with
    ``prefill_workspace_request_ids[t] = p >= 0`` maps to
    ``prefill_workspace_starts[p] + x``, the block table's bound aside.
    ``req_id`` and ``token_indices`` cover the same tokens (refused
    otherwise). Returns ``out`` (the caller's persistent ``[>= T, >= K]``
    buffer when given, else new, like token_indices), and with
    ``return_valid_counts`` also the valid count of each row (into
    ``valid_counts_out`` when given; ignored without return_valid_counts,
    as the engines do). ``BLOCK_N`` is the engines' tile width: accepted,
    not needed. For graph capture over persistent buffers see also
    :class:`TopkPlan`."""
    del BLOCK_N
    more: Dict[str, Any] = {}
    if HAS_PREFILL_WORKSPACE:
        if prefill_workspace_request_ids is None or prefill_workspace_starts is None:
            raise ValueError(
                "HAS_PREFILL_WORKSPACE needs prefill_workspace_request_ids and prefill_workspace_starts"
            )
        more = dict(prefill_workspace_request_ids=prefill_workspace_request_ids,
                    prefill_workspace_starts=prefill_workspace_starts)
    if BLOCK_STRIDE_ROWS is not None:
        more["stride_rows"] = BLOCK_STRIDE_ROWS
    return _run(req_id, block_table, token_indices, BLOCK_SIZE, NUM_TOPK_TOKENS,
                return_valid_counts, False, out=out, valid_counts_out=valid_counts_out, **more)


def filter_and_convert_dcp_index(
    req_id: Buffer,
    block_table: Buffer,
    token_indices: Buffer,
    dcp_size: int,
    dcp_rank: int,
    cp_kv_cache_interleave_size: int = 1,
    BLOCK_SIZE: int = 64,
    NUM_TOPK_TOKENS: int = 2048,
    BLOCK_N: int = 128,
    return_valid_counts: bool = False,
    compact_valid_to_front: bool = True,
) -> Converted:
    """The engines' DCP conversion (same arguments and defaults): positions
    this rank does not own become -1, the rest are converted at their
    rank-local index; with ``compact_valid_to_front`` each row holds its
    valid slots first, in increasing column order (the engines' order is
    unspecified), then -1. ``req_id`` and ``token_indices`` cover the same
    tokens (refused otherwise)."""
    del BLOCK_N
    return _run(req_id, block_table, token_indices, BLOCK_SIZE, NUM_TOPK_TOKENS,
                return_valid_counts, bool(compact_valid_to_front), dcp_size=dcp_size,
                dcp_rank=dcp_rank, cp_kv_cache_interleave_size=cp_kv_cache_interleave_size)


def filter_peer_slots_to_owner_local(
    peer_slots: Buffer,
    *,
    owner_rank: int,
    dcp_world_size: int,
    blocks_per_peer: int,
    block_size: int,
) -> Tuple[Buffer, Buffer]:
    """The engines' owner filter of DCP peer slots (same arguments): of each
    row of rank-major ``peer_slots`` [T, K] int32, the slots of rank
    ``owner_rank``'s segment ``[o * S, (o + 1) * S)`` (``S = blocks_per_peer *
    block_size``) as that rank's local slots (``slot - o * S``), first and in
    column order, then -1; returns ``(local_slots, valid_counts)``, new.

    One launch of the top-k conversion (contract section 6b): the peer slots
    are the positions, a block is one segment (``block_size = S``), and a
    one-row table ``[-1] * o + [0]`` keeps segment ``o`` only."""
    world = int32(dcp_world_size, "dcp_world_size")
    owner = int32(owner_rank, "owner_rank")
    if world <= 1 or not 0 <= owner < world:
        raise ValueError(
            "owner_rank (%d) must be in [0, dcp_world_size = %d) with dcp_world_size > 1"
            % (owner, world)
        )
    peer = int32(blocks_per_peer, "blocks_per_peer")
    bs = int32(block_size, "block_size")
    if peer < 1 or bs < 1:
        raise ValueError("blocks_per_peer (%d) and block_size (%d) must be >= 1" % (peer, bs))
    segment = peer * bs
    if world * segment > _INT32_MAX:
        raise ValueError(
            "rank-major peer slots do not fit in int32: dcp_world_size x blocks_per_peer x "
            "block_size = %d" % (world * segment)
        )
    shape = tuple(getattr(peer_slots, "shape", ()))
    if len(shape) != 2:
        raise ValueError("peer_slots must be 2-D [rows, topk], got shape %s" % (shape,))
    if shape[1] == 0:
        raise ValueError("peer_slots must have at least one column")
    rows = shape[0]
    local = _new_like(peer_slots, shape)
    counts = _new_like(peer_slots, (rows,))
    keep = _new_like(peer_slots, (1, owner + 1), -1)
    keep[0, owner] = 0
    names = {"token_indices": "peer_slots"}
    plan = call_named(names, TopkPlan, peer_slots, keep, local,
                      req_id=_new_like(peer_slots, (rows,), 0), valid_counts=counts,
                      compact=True, block_size=segment)
    call_named(names, plan.convert, rows)
    return local, counts
