# SPDX-License-Identifier: Apache-2.0
"""The operations: the token map and the one-launch step, as functions
(validate and launch each call) and as prepared plans over persistent
buffers (validate once, then each call sets the sizes and launches)."""

import ctypes
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

from . import _arrays, _compile, _lib, _members
from ._dsv4 import DSV4_ARGS, setup_dsv4
from ._arrays import I32, dcp_settings, device_str, int32, stream_handle, torch_state, vec
from ._context import _cache as _context_cache
from ._context import context_for
from ._lib import Backend
from ._plan import Plan

__all__ = [
    "IndexerDecodeMetadata",
    "StepPlan",
    "build_step",
    "compute_token_to_req_indices",
    "token_to_req",
]

if TYPE_CHECKING:
    from ._context import Context

# A buffer: a torch tensor, a NumPy array, or an object with
# __cuda_array_interface__ or __dlpack__ (see _arrays).
Buffer = Any
BufferT = TypeVar("BufferT")
# None (torch's current stream), an int handle (cudaStream_t), or a
# torch.cuda.Stream.
Stream = Any
_INT32_MAX = 2**31 - 1

# The step's outputs (the DeepSeek-V3.2/V4 ones aside), in the schema's order.
OUTPUT_NAMES = _members.STEP_OUTPUTS


# StepPlan's keyword arguments past its own: every buffer of the step
# (None: not built, or not read) and the DeepSeek-V3.2/V4 settings.
_MORE_ARGS: Dict[str, Any] = {name: None for name in _members.STEP if name != "query_start_loc"}
_MORE_ARGS.update(DSV4_ARGS)


def _input_with(cols: str) -> str:
    """The input whose columns member is ``cols`` (block_table for block_table_cols)."""
    return next(m.name for m in _members.STEP.values() if not m.out and m.cols == cols)


def _cached_context(dev: Tuple[int, int]) -> "Context":
    ctx = _context_cache.get(dev)
    return ctx if ctx is not None else context_for(dev, None)


def _too_many(what: str, value: int, limits: Sequence[Tuple[int, str, str]]) -> ValueError:
    """The ValueError for a `what` (num_reqs / num_tokens) over a buffer's room."""
    if value < 0:
        return ValueError("%s (%d) must be >= 0" % (what, value))
    for room, name, unit in limits:
        if room < value:
            return ValueError("%s has room for %d %s, fewer than %s = %d" % (name, room, unit, what, value))
    return ValueError("%s (%d) is out of range" % (what, value))


class StepPlan(Plan):
    """One decode step over persistent, caller-owned buffers.

    Every buffer is checked once, here (dtype, device, contiguity, strides);
    :meth:`build` then sets the sizes of this step and makes the one launch,
    costing little more than the C call. The plan keeps references to its
    buffers, so they stay alive while it exists. Each buffer is the keyword
    argument of its ``attnmeta_step`` member's name (any the schema lists).

    Inputs: ``query_start_loc`` [>= R + 1], ``seq_lens`` [>= R] (needed by
    seq_lens_out, global_seq_lens_out, positions, slot_mapping),
    ``block_table`` [>= R, cols] with unit column stride and any row stride
    >= cols (needed by block_table_out and slot_mapping).

    Outputs (None = not built): ``token_to_req``, ``global_seq_lens_out``,
    ``decode_lens_out``, ``req_indices_out`` [>= T] int32; ``positions``
    [>= T] int64; ``seq_lens_out`` [>= C] int32; ``slot_mapping`` [>= C]
    int64 (needs ``block_size``, the KV cache's block size: it has no
    default); ``block_table_out`` [>= T, >= cols]; ``per_req_lens_out`` [>= R];
    ``error_word`` [>= 1] (bits OR-ed in, never cleared).

    DeepSeek-V3.2/V4 products of the same launch (they read seq_lens):
    ``compressed_groups``, up to 4 dicts of ``block_table``, ``ratio``,
    ``block_size``, ``slot_mapping`` [>= C] int64 and ``seq_lens_out``
    [>= R] int32 (either output may be left out); ``swa_indices`` [>= T,
    width] (or [T, 1, width]) and ``swa_lens`` [>= C] over
    ``swa_block_table`` with ``swa_block_size``, ``swa_window``,
    ``swa_width`` (default: the rows' columns) and ``swa_causal`` (a
    ``swa_block_table`` [G, R, cols] holds G groups' tables, every group
    in the launch: then ``swa_indices`` is [G, >= T, width] or
    [G, >= T, 1, width], and ``swa_lens`` is written once);
    ``c128a_rows`` [>= T, width] and ``c128a_lens`` [>= C] over
    ``c128a_block_table`` with ``c128a_ratio``, ``c128a_block_size``,
    ``c128a_width`` and ``c128a_local`` (request-local indices, no table);
    ``indexer_lens_out`` [>= C] int32, the indexer's compressed lengths,
    with ``indexer_ratio`` and ``indexer_prefill`` (under DCP: divide, then
    localise, as vLLM's prefill chunks do; default: localise, then divide,
    as its decode metadata does).

    ``capacity`` (C) defaults to the shortest of seq_lens_out and
    slot_mapping (entries [T, C) are cleared each step), or to T when
    neither is built. All buffers are torch tensors on one device (CUDA or
    CPU) or NumPy arrays (CPU backend).
    """

    __slots__ = (
        "_step",
        "_addr",
        "_dev",
        "_gpu_index",
        "_raw_stream",
        "_guard",
        "_fn",
        "_max_reqs",
        "_max_tokens",
        "_max_tokens_held",
        "_req_limits",
        "_token_limits",
        "_capacity",
        "_num_mapped",
    )
    _step: Any  # _lib.Step
    _addr: int
    _dev: Tuple[int, int]
    _gpu_index: Optional[int]
    _raw_stream: Callable[[int], Optional[int]]
    _guard: bool
    _fn: Callable[..., int]
    _max_reqs: int
    _max_tokens: int
    _max_tokens_held: int
    _req_limits: List[Tuple[int, str, str]]
    _token_limits: List[Tuple[int, str, str]]
    _capacity: Optional[int]
    _num_mapped: int

    def __init__(
        self,
        query_start_loc: Buffer,
        *,
        capacity: Optional[int] = None,
        num_mapped: int = -1,
        block_size: Optional[int] = None,
        dcp_world_size: int = 1,
        dcp_rank: int = 0,
        dcp_interleave: int = 1,
        context: "Optional[Context]" = None,
        **more: Any,
    ) -> None:
        # `more`: the buffers by member name (the schema's) and the
        # DeepSeek-V3.2/V4 settings (DSV4_ARGS), each None or its default
        # unless given.
        for name in more:
            if name not in _MORE_ARGS:
                raise TypeError("%s() got an unexpected keyword argument %r"
                                % (type(self).__name__, name))
        args = dict(_MORE_ARGS)
        args.update(more)
        args.update(query_start_loc=query_start_loc, capacity=capacity, num_mapped=num_mapped,
                    block_size=block_size, dcp_world_size=dcp_world_size, dcp_rank=dcp_rank,
                    dcp_interleave=dcp_interleave, context=context)
        self._start(args)

    # ---- set-up: every check happens here ----

    def _setup(self, args: Dict[str, Any]) -> None:
        step = _lib.Step()
        _lib.step_init(ctypes.addressof(step))
        keep = {}

        qsl = args["query_start_loc"]
        qptr, dev, qlen = vec(qsl, "query_start_loc", I32)
        if qlen < 1:
            raise ValueError("query_start_loc must hold at least one entry (R + 1 for R requests)")
        keep["query_start_loc"] = qsl
        step.query_start_loc = qptr
        req_limits = [(qlen - 1, "query_start_loc (of %d entries)" % qlen, "requests")]
        token_limits: List[Tuple[int, str, str]] = []

        def check_dev(d: Tuple[int, int], name: str) -> None:
            if d != dev:
                raise ValueError(
                    "%s is on %s but query_start_loc is on %s" % (name, device_str(d), device_str(dev))
                )

        # Scalars.
        num_mapped = int32(args["num_mapped"], "num_mapped")
        block_size = args["block_size"]
        if block_size is None:
            if args["slot_mapping"] is not None:
                raise ValueError("slot_mapping needs block_size, the KV cache's block size (>= 1): "
                                 "it has no default")
            block_size = 0  # unset; only slot_mapping reads it
        else:
            block_size = int32(block_size, "block_size")
            if block_size < 1:
                raise ValueError("block_size (%d) must be >= 1" % block_size)
        step.num_mapped = num_mapped
        step.block_size = block_size
        step.dcp_world_size, step.dcp_rank, step.dcp_interleave = dcp_settings(
            args["dcp_world_size"], args["dcp_rank"], args["dcp_interleave"])

        # Inputs (each read by some of the outputs), then outputs.
        limits = {"R": req_limits, "T": token_limits}
        cap_lens: List[Tuple[int, str]] = []
        attach = _members.Attach(check_dev, qptr, keep, limits, cap_lens)
        for name in _members.STEP_INPUTS:
            if args[name] is not None:
                attach(step, _members.STEP[name], args[name])
                continue
            for reader in _members.readers(name):
                if args[reader] is not None:
                    raise ValueError("%s is required when %s is built" % (name, reader))
        for name in OUTPUT_NAMES:
            buf = args[name]
            if buf is None:
                continue
            member = _members.STEP[name]
            n, out_cols = attach(step, member, buf)
            if member.cols is not None and out_cols < getattr(step, member.cols):
                raise ValueError("%s has %d columns, fewer than %s's %d"
                                 % (name, out_cols, _input_with(member.cols),
                                    getattr(step, member.cols)))
            if member.rows == "ONE" and n < 1:
                raise ValueError("%s must hold at least one int32" % name)

        # DeepSeek-V3.2/V4 products (contract sections 5, 5a, 7, 8).
        readers = setup_dsv4(args, step, attach)
        if readers and args["seq_lens"] is None:
            raise ValueError("seq_lens is required when %s is built" % readers[0])

        # Capacity: T <= C <= every capacity-long output.
        capacity = args["capacity"]
        if capacity is not None:
            capacity = int32(capacity, "capacity")
            if capacity < 0:
                raise ValueError("capacity (%d) must be >= 0" % capacity)
            for n, name in cap_lens:
                if n < capacity:
                    raise ValueError("%s has %d entries, fewer than capacity = %d" % (name, n, capacity))
            # capacity >= num_tokens is the library's own check (ERR_CAPACITY).
        elif cap_lens:
            capacity = min(n for n, _ in cap_lens)
        if capacity is not None:
            step.capacity = capacity

        ctx = context_for(dev, args["context"])

        self._args = args
        self._keep = keep
        self._step = step
        self._addr = ctypes.addressof(step)
        self._ctx = ctx
        self._dev = dev
        self._capacity = capacity
        self._num_mapped = num_mapped
        self._req_limits = req_limits
        self._token_limits = token_limits
        self._max_reqs = min(n for n, _, _ in req_limits)
        self._max_tokens = min(n for n, _, _ in token_limits) if token_limits else _INT32_MAX
        self._max_tokens_held = self._max_tokens if capacity is None else min(self._max_tokens, capacity)
        self._fn = _lib.build_step
        if dev[0] == Backend.CPU:
            self._gpu_index = None
            self._raw_stream = _no_stream  # never called: the CPU backend takes no stream
            self._guard = False
        else:
            ts = torch_state()
            self._gpu_index = dev[1]
            # Without torch (__cuda_array_interface__ / DLPack buffers) the
            # default stream, unless one is given; no device to give back.
            self._raw_stream = ts.raw_stream if ts is not None else _no_stream
            self._guard = ts.multi_gpu if ts is not None else False

    # ---- the hot path ----

    def build(self, num_reqs: int, num_tokens: int, num_mapped: Optional[int] = None,
              stream: Stream = None) -> None:
        """Builds every output of the plan for R = ``num_reqs`` requests and
        T = ``num_tokens`` (padded) tokens, in one launch on ``stream``
        (default: torch's current stream of the buffers' device). Never
        synchronises or allocates; safe to capture in a CUDA graph.
        ``num_mapped`` overrides the plan's value for this call."""
        if _compile.is_compiling():
            self._build_op(num_reqs, num_tokens, num_mapped)
            return
        if not 0 <= num_reqs <= self._max_reqs:
            raise _too_many("num_reqs", num_reqs, self._req_limits)
        if not 0 <= num_tokens <= self._max_tokens:
            raise _too_many("num_tokens", num_tokens, self._token_limits)
        step = self._step
        step.num_reqs = num_reqs
        step.num_tokens = num_tokens
        if self._capacity is None:
            step.capacity = num_tokens
        step.num_mapped = self._num_mapped if num_mapped is None else int32(num_mapped, "num_mapped")
        index = self._gpu_index
        if index is None:
            status = self._fn(self._ctx._handle, self._addr, None)
        else:
            handle = self._raw_stream(index) if stream is None else stream_handle(stream, self._dev)
            if self._guard:
                status = _guarded(self._fn, self._ctx._handle, self._addr, handle, index)
            else:
                status = self._fn(self._ctx._handle, self._addr, handle)
        if status:
            raise self._ctx.error(status, "attnmeta_build_step")

    __call__ = build

    def _build_op(self, num_reqs: int, num_tokens: int, num_mapped: Optional[int]) -> None:
        """build() inside torch.compile: the custom operator over the plan's
        buffers (attnmeta.ops picks the DeepSeek-V4 one when the plan has
        DSV4 products)."""
        args = self._args
        more = {name: args[name] for name in DSV4_ARGS}
        more.update((name, args[name])
                    for name in OUTPUT_NAMES + _members.DSV4_OUTPUTS + _members.DSV4_INPUTS)
        _compile.ops_module.build_step(
            args["query_start_loc"], num_tokens, num_reqs=num_reqs, capacity=args["capacity"],
            num_mapped=args["num_mapped"] if num_mapped is None else num_mapped,
            block_size=args["block_size"], dcp_world_size=args["dcp_world_size"],
            dcp_rank=args["dcp_rank"], dcp_interleave=args["dcp_interleave"],
            seq_lens=args["seq_lens"], block_table=args["block_table"], **more)

    # ---- the rest ----

    @property
    def backend(self) -> Backend:
        return Backend(self._dev[0])

    @property
    def device(self) -> int:
        return self._dev[1]

    @property
    def capacity(self) -> Optional[int]:
        """C, or None when it follows num_tokens."""
        return self._capacity

    @property
    def max_reqs(self) -> int:
        """The largest num_reqs the buffers hold."""
        return self._max_reqs

    @property
    def max_tokens(self) -> int:
        """The largest num_tokens the buffers (and capacity) hold."""
        return self._max_tokens_held

    def __getattr__(self, name: str) -> Optional[Buffer]:
        # The buffers by name: plan.seq_lens_out, plan.block_table, ...
        if name in _members.STEP or name in DSV4_ARGS:
            try:
                return self._keep[name]
            except (KeyError, AttributeError):
                return None
        raise AttributeError("%s has no attribute %r" % (type(self).__name__, name))

    def views(self, num_reqs: int, num_tokens: int) -> Dict[str, Buffer]:
        """The outputs cut to this step's sizes: per-token outputs to
        ``[:num_tokens]``, per_req_lens_out to ``[:num_reqs]`` (a dict; not
        for the hot path)."""
        out = {}
        for name, buf in self._keep.items():
            member = _members.member_of(name)
            if member.out:
                rows = {"T": num_tokens, "C": num_tokens, "R": num_reqs}.get(member.rows)
                out[name] = buf if rows is None else buf[:rows]
        return out

    def __repr__(self) -> str:
        built = [n for n in OUTPUT_NAMES if n in self._keep]
        return "<attnmeta.%s on %s: %s>" % (type(self).__name__, device_str(self._dev), ", ".join(built))


def _no_stream(index: int) -> Optional[int]:
    return None


def _guarded(fn: Callable[..., int], handle: Optional[int], addr: int, stream: Optional[int],
             index: int) -> int:
    """The launch with torch's current device kept as it was."""
    ts = torch_state()
    previous = ts.get_device()
    try:
        return fn(handle, addr, stream)
    finally:
        if previous != index:
            ts.set_device(previous)


class IndexerDecodeMetadata(StepPlan):
    """The sparse-attention indexer's decode metadata (contract section 2),
    one row per token, built in place into persistent buffers in one launch:

    - ``seq_lens_out`` [C]: causal length of each token (DCP-local with
      ``dcp_world_size > 1``), 0 for padding and for [T, C);
    - ``block_table_out`` [T, >= cols]: the token's request row, 0 for padding;
    - ``decode_lens_out`` [T]: all 1;
    - ``req_indices_out`` [T]: the token's request, R + (t - actual) for padding;
    - ``per_req_lens_out`` [R]: query length of each request.

    Any other product of :class:`StepPlan` can be added by keyword
    (``token_to_req``, ``global_seq_lens_out``, ``positions``,
    ``slot_mapping``, ``error_word``, ...). Each step: ``build(num_reqs,
    num_tokens)``.
    """

    __slots__ = ()

    def __init__(
        self,
        query_start_loc: Buffer,
        seq_lens: Buffer,
        block_table: Buffer,
        *,
        seq_lens_out: Buffer,
        block_table_out: Buffer,
        **more: Any
    ) -> None:
        # decode_lens_out, req_indices_out, per_req_lens_out and any other
        # StepPlan argument come in `more`.
        super().__init__(query_start_loc, seq_lens=seq_lens, block_table=block_table,
                         seq_lens_out=seq_lens_out, block_table_out=block_table_out, **more)


def build_step(query_start_loc: Buffer, num_tokens: int, *, num_reqs: Optional[int] = None,
               stream: Stream = None, **kwargs: Any) -> None:
    """Builds the named outputs of one step in one launch (see
    :class:`StepPlan` for the arguments); ``num_reqs`` defaults to
    ``len(query_start_loc) - 1``. Checks every buffer on each call: for a
    step repeated over the same buffers, a :class:`StepPlan` costs less.
    Inside ``torch.compile`` it is the custom operator of :mod:`attnmeta.ops`
    (torch's current stream, the cached context)."""
    if _compile.is_compiling():
        kwargs.pop("context", None)
        _compile.ops_module.build_step(query_start_loc, num_tokens, num_reqs=num_reqs, **kwargs)
        return
    _build_step_direct(query_start_loc, num_tokens, num_reqs=num_reqs, stream=stream, **kwargs)


def _build_step_direct(query_start_loc: Buffer, num_tokens: int, *, num_reqs: Optional[int] = None,
                       stream: Stream = None, **kwargs: Any) -> None:
    plan = StepPlan(query_start_loc, **kwargs)
    if num_reqs is None:
        num_reqs = plan._req_limits[0][0]
    plan.build(int32(num_reqs, "num_reqs"), int32(num_tokens, "num_tokens"), stream=stream)


def _token_to_req(query_start_loc: Buffer, out: Buffer, num_tokens: Optional[int],
                  num_reqs: Optional[int], num_mapped: Optional[int], stream: Stream,
                  context: "Optional[Context]") -> int:
    """token_to_req's work; returns len(out)."""
    qptr, dev, qlen = vec(query_start_loc, "query_start_loc", I32)
    optr, odev, olen = vec(out, "out", I32, True)
    if odev != dev:
        raise ValueError(
            "out is on %s but query_start_loc is on %s" % (device_str(odev), device_str(dev))
        )
    if qlen < 1:
        raise ValueError("query_start_loc must hold at least one entry (R + 1 for R requests)")
    reqs: int
    tokens: int
    if num_reqs is None:
        reqs = qlen - 1
    else:
        reqs = int32(num_reqs, "num_reqs")
        if not 0 <= reqs < qlen:
            raise _too_many("num_reqs", reqs,
                            [(qlen - 1, "query_start_loc (of %d entries)" % qlen, "requests")])
    if num_tokens is None:
        tokens = olen
    else:
        tokens = int32(num_tokens, "num_tokens")
        if not 0 <= tokens <= olen:
            raise _too_many("num_tokens", tokens, [(olen, "out", "tokens")])
    mapped: int = -1 if num_mapped is None else int32(num_mapped, "num_mapped")
    ctx = _cached_context(dev) if context is None else context_for(dev, context)
    if not optr:  # an empty out (num_tokens == 0): nothing to write
        return olen
    if dev[0] == Backend.CPU:
        if stream is not None:
            stream_handle(stream, dev)  # checks its type; the CPU backend runs in this thread
        status = _lib.token_to_req(ctx._handle, qptr, reqs, mapped, tokens, optr, None)
    else:
        ts = _arrays._torch_state
        if stream is not None:
            handle = stream_handle(stream, dev)
        else:
            handle = (ts.raw_stream(dev[1]) or None) if ts is not None else None
        if ts is not None and ts.multi_gpu:
            previous = ts.get_device()
            try:
                status = _lib.token_to_req(ctx._handle, qptr, reqs, mapped, tokens, optr,
                                           handle)
            finally:
                if previous != dev[1]:
                    ts.set_device(previous)
        else:
            status = _lib.token_to_req(ctx._handle, qptr, reqs, mapped, tokens, optr,
                                       handle)
    if status:
        raise ctx.error(status, "attnmeta_token_to_req")
    return olen


def token_to_req(query_start_loc: Buffer, out: BufferT, num_tokens: Optional[int] = None, *,
                 num_reqs: Optional[int] = None, num_mapped: int = -1, stream: Stream = None,
                 context: "Optional[Context]" = None) -> BufferT:
    """The token -> request map (contract section 1) into ``out[:num_tokens]``
    in one launch: ``out[t]`` is the request of token t for t < num_mapped
    (``num_mapped < 0``: the device's ``query_start_loc[R]``), 0 after.
    ``num_tokens`` defaults to ``len(out)``, ``num_reqs`` to
    ``len(query_start_loc) - 1``. Returns ``out``."""
    _token_to_req(query_start_loc, out, num_tokens, num_reqs, num_mapped, stream, context)
    return out


def compute_token_to_req_indices(query_start_loc: Buffer, out: BufferT,
                                 num_mapped_tokens: Optional[int], num_tokens: int, *,
                                 stream: Stream = None,
                                 context: "Optional[Context]" = None) -> BufferT:
    """Drop-in token -> request map: R = ``len(query_start_loc) - 1``;
    ``out[t]`` = request of token t for t < ``num_mapped_tokens`` (None or a
    negative value: the device's ``query_start_loc[R]``), 0 for the rest of
    ``[0, num_tokens)``. One launch on ``stream`` (default: torch's current
    stream); returns ``out[:num_tokens]`` (``out`` itself when it has
    num_tokens entries). Inside ``torch.compile`` it is the custom operator
    ``torch.ops.attnmeta.token_to_req_indices`` (:mod:`attnmeta.ops`)."""
    if _compile.is_compiling():
        traced: BufferT = _compile.ops_module.compute_token_to_req_indices(
            query_start_loc, out, num_mapped_tokens, num_tokens)
        return traced
    olen = _token_to_req(query_start_loc, out, num_tokens, None, num_mapped_tokens, stream, context)
    cut: BufferT = out if num_tokens == olen else out[:num_tokens]  # type: ignore[index]
    return cut
