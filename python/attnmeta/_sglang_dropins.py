# SPDX-License-Identifier: Apache-2.0
"""Drop-ins for SGLang's index-buffer kernels, each one launch of
``attnmeta_build_pool_indices`` (docs/c_api.md, "SGLang's request pool"),
called as SGLang calls its Triton kernels: ``fn[grid](*args, **constexprs)``
with SGLang's argument names and order. ``B = grid[0]`` request rows are
built (other grid dimensions shape SGLang's launch only); the tensors may
be longer than ``B`` (whole CUDA-graph buffers). Outputs are written in
place, nothing is returned, nothing past the entries SGLang writes is
touched.

``req_pool_indices``, ``page_kernel_lens`` and ``kv_start_idx`` are int64
(SGLang's graph buffers); int32 ones (SGLang's tests) are first copied to
int64, one more device operation each. Bad data has attnmeta's defined
answers (-1 entries for pool rows and columns outside the pool) instead of
SGLang's out-of-bounds reads.

``create_triton_kv_indices_for_dcp_triton`` and
``create_mla_kv_page_table_for_dcp`` are the DCP forms (docs/contract.md
section 15): one rank's share of the slot list and of the MLA page table.

``generate_draft_decode_kv_indices`` (EAGLE's multi-step draft decode
lists, docs/contract.md section 14) takes SGLang's whole grid
``(steps, bs, topk)``.

The plain functions of contract sections 12 and 13
(``normal_decode_set_metadata``, FA3's ``draft_extend_set_metadata``,
``fused_dsa_decode_metadata``,
``fused_dsa_target_verify_metadata``, ``fused_dsa_draft_extend_metadata``) take SGLang's keyword signatures and
write in place, each one launch.

Not yet: ``ENTRY_PAGE_SIZE > 1``, ``token_mapping``, int64 ``kv_indices``,
``paged_mqa_ctx_lens_2d``, ``static_extend_len``, the unified pool's SWA table (refused with
NotImplementedError)."""

import ctypes
from typing import Any, Callable, Optional, Tuple

from . import _lib
from ._arrays import I32, I64, device_str, int32, stream_handle, table, vec
from ._context import context_for

Buffer = Any  # a torch tensor, NumPy array, __cuda_array_interface__ or DLPack object

__all__ = [
    "create_flashinfer_kv_indices_triton",
    "create_flashmla_kv_indices_triton",
    "create_kv_indptr_and_indices",
    "create_mla_kv_page_table_for_dcp",
    "create_triton_kv_indices_for_dcp_triton",
    "draft_extend_set_metadata",
    "fused_dsa_decode_metadata",
    "fused_dsa_draft_extend_metadata",
    "fused_dsa_target_verify_metadata",
    "generate_draft_decode_kv_indices",
    "normal_decode_set_metadata",
    "normal_decode_set_metadata_strided",
]


class _Subscripted:
    """``fn[grid](...)``: runs ``fn(B, ...)`` with ``B = grid[0]``."""

    __slots__ = ("_fn", "__name__")

    def __init__(self, fn: Callable[..., None]) -> None:
        self._fn = fn
        self.__name__ = fn.__name__.lstrip("_")

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        rows = grid[0] if isinstance(grid, (tuple, list)) else grid
        if callable(rows):
            raise TypeError("%s: a grid function is not supported; give the grid as a tuple"
                            % self.__name__)
        b = int32(rows, "grid[0]")
        if b < 0:
            raise ValueError("grid[0] (%d) must be >= 0" % b)

        def launch(*args: Any, **kw: Any) -> None:
            self._fn(b, *args, **kw)

        return launch

    def __call__(self, *args: Any, **kw: Any) -> None:
        raise TypeError("%s is launched as SGLang's kernel is: %s[(bs,)](...)"
                        % (self.__name__, self.__name__))

    @property
    def __doc__(self) -> Optional[str]:  # type: ignore[override]
        return self._fn.__doc__

    def __repr__(self) -> str:
        return "<attnmeta drop-in %s>" % self.__name__


def _dtype_name(x: Any) -> str:
    return str(getattr(x, "dtype", "")).replace("torch.", "")


def _as_int32(x: Buffer) -> Buffer:
    """x itself unless int64, else an int32 copy (an int64 kv_indptr)."""
    if _dtype_name(x) != "int64":
        return x
    if hasattr(x, "to") and hasattr(x, "device"):  # torch
        import torch

        return x.to(torch.int32)
    if hasattr(x, "astype"):
        return x.astype("int32")
    return x


def _as_int64(x: Buffer) -> Buffer:
    """x itself when int64, else an int64 copy (torch on its device, or NumPy)."""
    if _dtype_name(x) == "int64":
        return x
    if hasattr(x, "to") and hasattr(x, "device"):  # torch
        import torch

        return x.to(torch.int64)
    if hasattr(x, "astype"):
        return x.astype("int64")
    return x  # vec() says what is wrong with it


class _Call:
    """One attnmeta_pool being filled from SGLang's arguments, all on the
    device of req_to_token."""

    def __init__(self, b: int, req_to_token: Buffer, stride: Any) -> None:
        self.op = _lib.Pool()
        status = _lib.pool_init(ctypes.addressof(self.op))
        if status != 0:
            raise RuntimeError("attnmeta: the library (%s) lacks the pool operation (%s)"
                               % (_lib.library_path, _lib.status_string(status)))
        self.keep = [req_to_token]
        self.b = b
        ptr, self.dev, rows, cols, row_stride = table(req_to_token, "req_to_token")
        given = int(stride)
        if rows > 1 and given != row_stride:
            raise ValueError("req_to_token_ptr_stride (%d) is not req_to_token's row stride (%d)"
                             % (given, row_stride))
        self.op.req_to_token = ptr or None
        self.op.req_to_token_stride = row_stride
        self.op.pool_rows = int32(rows, "req_to_token rows")
        self.op.pool_cols = int32(cols, "req_to_token columns")
        self.op.num_reqs = b

    def _check_dev(self, d: Tuple[int, int], name: str) -> None:
        if d != self.dev:
            raise ValueError("%s is on %s but req_to_token is on %s"
                             % (name, device_str(d), device_str(self.dev)))

    def vector(self, x: Buffer, name: str, dtype: str, least: int, out: bool = False) -> int:
        if dtype == I64 and not out:
            x = _as_int64(x)
        ptr, d, n = vec(x, name, dtype, out=out)
        self._check_dev(d, name)
        if n < least:
            raise ValueError("%s holds %d entries, fewer than the %d needed" % (name, n, least))
        self.keep.append(x)
        return ptr

    def rows(self, req_pool_indices: Buffer, lens: Buffer, kv_start_idx: Optional[Buffer]) -> None:
        self.op.req_pool_indices = self.vector(req_pool_indices, "req_pool_indices", I64, self.b)
        self.op.lengths = self.vector(lens, "page_kernel_lens", I64, self.b)
        if kv_start_idx is not None:
            self.op.kv_start_idx = self.vector(kv_start_idx, "kv_start_idx", I64, self.b)

    def slots(self, kv_indices: Buffer) -> None:
        if _dtype_name(kv_indices) == "int64":
            raise NotImplementedError("int64 kv_indices (SGLang's DCP and ENTRY_PAGE_SIZE > 1 "
                                      "paths) is not built yet: give an int32 buffer")
        ptr, d, n = vec(kv_indices, "kv_indices", I32, out=True)
        self._check_dev(d, "kv_indices")
        self.keep.append(kv_indices)
        self.op.kv_indices = ptr or None
        self.op.kv_indices_capacity = n

    def run(self) -> None:
        op = self.op
        if not (op.kv_indices or op.kv_indptr_out or op.page_table or op.cache_seqlens
                or op.topk_indptr or op.token_table or op.swa_page_table):
            return  # outputs of no entries: nothing to write
        ctx = context_for(self.dev, None, "req_to_token")
        handle = stream_handle(None, self.dev)
        status = _lib.build_pool_indices(ctx._handle, ctypes.addressof(self.op), handle)
        if status:
            raise ctx.error(status, "attnmeta_build_pool_indices")


def _refuse_unbuilt(entry_page_size: Any, token_mapping: Any) -> None:
    if int(entry_page_size) != 1:
        raise NotImplementedError("ENTRY_PAGE_SIZE = %s: only 1 is built yet" % entry_page_size)
    if token_mapping is not None:
        raise NotImplementedError("token_mapping is not built yet")


def _create_flashinfer_kv_indices_triton(
    b: int,
    req_to_token: Buffer,
    req_pool_indices: Buffer,
    page_kernel_lens: Buffer,
    kv_indptr: Buffer,
    kv_start_idx: Optional[Buffer],
    kv_indices: Buffer,
    req_to_token_ptr_stride: int,
    ENTRY_PAGE_SIZE: int = 1,
    TOKEN_BLOCK_PARALLEL: bool = False,
    token_mapping: Optional[Buffer] = None,
    **ignored: Any,
) -> None:
    """SGLang's CSR slot list: ``kv_indices[kv_indptr[b] + j] =
    req_to_token[req_pool_indices[b], kv_start_idx[b] + j]`` for
    ``j < page_kernel_lens[b]``, ``b < grid[0]``. ``kv_indptr`` (int32,
    ``>= B + 1`` entries) is read; rows are kept inside their
    ``[kv_indptr[b], kv_indptr[b + 1])`` and inside ``kv_indices``."""
    del TOKEN_BLOCK_PARALLEL, ignored
    _refuse_unbuilt(ENTRY_PAGE_SIZE, token_mapping)
    call = _Call(b, req_to_token, req_to_token_ptr_stride)
    call.rows(req_pool_indices, page_kernel_lens, kv_start_idx)
    call.op.kv_indptr = call.vector(kv_indptr, "kv_indptr", I32, b + 1)
    call.slots(kv_indices)
    call.run()


def _create_flashmla_kv_indices_triton(
    b: int,
    req_to_token: Buffer,
    req_pool_indices: Buffer,
    page_kernel_lens: Buffer,
    kv_start_idx: Optional[Buffer],
    kv_indices: Buffer,
    req_to_token_ptr_stride: int,
    kv_indices_ptr_stride: int,
    NUM_PAGE_PER_BLOCK: Optional[int] = None,
    PAGED_SIZE: int = 64,
    **ignored: Any,
) -> None:
    """SGLang's padded page table: ``kv_indices[b][p] =
    req_to_token[req_pool_indices[b], kv_start_idx[b] + p * PAGED_SIZE] //
    PAGED_SIZE`` for ``p < cdiv(page_kernel_lens[b], PAGED_SIZE)``, kept
    inside the row's width (``kv_indices`` is 2-D ``[>= B, width]``, row
    stride ``kv_indices_ptr_stride``); nothing past that is written."""
    del NUM_PAGE_PER_BLOCK, ignored
    call = _Call(b, req_to_token, req_to_token_ptr_stride)
    call.rows(req_pool_indices, page_kernel_lens, kv_start_idx)
    _padded_table(call, kv_indices, ("kv_indices", "kv_indices_ptr_stride"),
                  kv_indices_ptr_stride, (PAGED_SIZE, "PAGED_SIZE"))
    call.run()


def _padded_table(call: _Call, buf: Buffer, names: Tuple[str, str], stride: Any,
                  page_size: Tuple[Any, str]) -> None:
    """The page table output of B rows (SGLang's names of the buffer and of
    its row stride, and of the page size)."""
    ps = int32(page_size[0], page_size[1])
    if ps < 1:
        raise ValueError("%s (%d) must be >= 1" % (page_size[1], ps))
    ptr, d, rows, cols, row_stride = table(buf, names[0], out=True)
    call._check_dev(d, names[0])
    if rows > 1 and int(stride) != row_stride:
        raise ValueError("%s (%d) is not %s' row stride (%d)"
                         % (names[1], int(stride), names[0], row_stride))
    if rows < call.b:
        raise ValueError("%s has %d rows, fewer than grid[0] = %d" % (names[0], rows, call.b))
    call.keep.append(buf)
    call.op.page_table = ptr or None
    call.op.page_table_stride = row_stride
    call.op.page_table_width = int32(cols, names[0] + " columns")
    call.op.page_size = ps


def _create_kv_indptr_and_indices(
    b: int,
    req_to_token: Buffer,
    req_pool_indices: Buffer,
    page_kernel_lens: Buffer,
    kv_indptr: Buffer,
    kv_start_idx: Optional[Buffer],
    kv_indices: Buffer,
    req_to_token_ptr_stride: int,
) -> None:
    """SGLang's ``kv_indptr[1:B + 1] = cumsum(page_kernel_lens)`` and
    create_flashinfer_kv_indices_triton in one launch (SGLang makes three):
    ``kv_indptr`` (int32, ``>= B + 1``) is written, ``kv_indptr[0] = 0`` and
    the prefix sums of ``max(len, 0)`` (one above INT32_MAX stored as
    INT32_MAX), and the slot list is placed by them."""
    call = _Call(b, req_to_token, req_to_token_ptr_stride)
    call.rows(req_pool_indices, page_kernel_lens, kv_start_idx)
    call.op.kv_indptr_out = call.vector(kv_indptr, "kv_indptr", I32, b + 1, out=True)
    call.slots(kv_indices)
    call.run()


def _dcp(call: _Call, size: Any, rank: Any) -> None:
    """Rank ``rank`` of ``size`` (SGLang's DCP kernels deal out single
    positions: interleave 1)."""
    w, k = int32(size, "dcp_size"), int32(rank, "dcp_rank")
    if w < 1 or not 0 <= k < w:
        raise ValueError("dcp_rank (%d) must be in [0, dcp_size = %d)" % (k, w))
    call.op.dcp_world_size = w
    call.op.dcp_rank = k
    call.op.dcp_interleave = 1


def _create_triton_kv_indices_for_dcp_triton(
    b: int,
    req_to_token_ptr: Buffer,
    req_pool_indices_ptr: Buffer,
    dcp_kernel_lens_ptr: Buffer,
    kv_indptr: Buffer,
    kv_start_idx: Optional[Buffer],
    kv_indices_ptr: Buffer,
    req_to_token_ptr_stride: int,
    dcp_size: int,
    dcp_rank: int,
) -> None:
    """SGLang's DCP slot list of rank ``dcp_rank`` of ``dcp_size``: row b
    gets ``dcp_kernel_lens[b]`` entries (get_dcp_lens' counts), entry j the
    slot at the j-th column ``c >= kv_start_idx[b]`` with ``c % dcp_size ==
    dcp_rank``, divided by ``dcp_size``, at ``kv_indptr[b] + j``. kv_indptr
    (int32, or int64 copied to int32) is read; ``kv_indices`` is int32 (int64
    is not built yet); a negative pool entry gives -1."""
    call = _Call(b, req_to_token_ptr, req_to_token_ptr_stride)
    call.rows(req_pool_indices_ptr, dcp_kernel_lens_ptr, kv_start_idx)
    _dcp(call, dcp_size, dcp_rank)
    call.op.kv_indptr = call.vector(_as_int32(kv_indptr), "kv_indptr", I32, b + 1)
    call.slots(kv_indices_ptr)
    call.run()


def _create_mla_kv_page_table_for_dcp(
    b: int,
    req_to_token_ptr: Buffer,
    req_pool_indices_ptr: Buffer,
    local_seq_lens_ptr: Buffer,
    block_kv_indices_ptr: Buffer,
    req_to_token_stride: int,
    block_table_stride: int,
    PHYSICAL_PAGE_SIZE: int,
    DCP_SIZE: int,
    DCP_RANK: int,
    PAGES_PER_BLOCK: Optional[int] = None,
) -> None:
    """SGLang's MLA page table of rank ``DCP_RANK`` of ``DCP_SIZE``: row b,
    page ``p < cdiv(local_seq_lens[b], PHYSICAL_PAGE_SIZE)`` holds
    ``req_to_token[req_pool_indices[b], DCP_RANK + p * PHYSICAL_PAGE_SIZE *
    DCP_SIZE] // DCP_SIZE // PHYSICAL_PAGE_SIZE``, kept inside the row's
    width (2-D ``block_kv_indices``, row stride ``block_table_stride``)."""
    del PAGES_PER_BLOCK
    call = _Call(b, req_to_token_ptr, req_to_token_stride)
    call.rows(req_pool_indices_ptr, local_seq_lens_ptr, None)
    _dcp(call, DCP_SIZE, DCP_RANK)
    _padded_table(call, block_kv_indices_ptr, ("block_kv_indices", "block_table_stride"),
                  block_table_stride, (PHYSICAL_PAGE_SIZE, "PHYSICAL_PAGE_SIZE"))
    call.run()


class _GridSubscripted(_Subscripted):
    """``fn[grid](...)``: runs ``fn(grid, ...)`` with the whole grid, a tuple
    of ints (SGLang's ``(steps, bs, topk)``)."""

    __slots__ = ()

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        if callable(grid) or not isinstance(grid, (tuple, list)):
            raise TypeError("%s: give the grid as a tuple (steps, bs, topk)" % self.__name__)
        dims = tuple(int32(g, "grid[%d]" % i) for i, g in enumerate(grid))
        if any(d < 0 for d in dims):
            raise ValueError("grid %r has a negative dimension" % (dims,))

        def launch(*args: Any, **kw: Any) -> None:
            self._fn(dims, *args, **kw)

        return launch


def _draft_table(call: _Call, buf: Buffer, name: str, stride: Any, rows: int,
                 least_cols: int) -> Tuple[int, int, int]:
    """(pointer, columns, row stride) of a [>= rows][>= least_cols] int32 output."""
    if _dtype_name(buf) == "int64":
        raise NotImplementedError("int64 %s (SGLang's ENTRY_PAGE_SIZE > 1 path) is not built "
                                  "yet: give an int32 buffer" % name)
    ptr, d, n_rows, cols, row_stride = table(buf, name, out=True)
    call._check_dev(d, name)
    if n_rows > 1 and int(stride) != row_stride:
        raise ValueError("%s_stride (%d) is not %s's row stride (%d)"
                         % (name, int(stride), name, row_stride))
    if n_rows < rows:
        raise ValueError("%s has %d rows, fewer than the %d steps" % (name, n_rows, rows))
    if cols < least_cols:
        raise ValueError("%s has %d columns, fewer than the %d needed" % (name, cols, least_cols))
    call.keep.append(buf)
    return ptr, cols, row_stride


def _generate_draft_decode_kv_indices(
    grid: Tuple[int, ...],
    req_pool_indices: Buffer,
    req_to_token: Buffer,
    paged_kernel_lens: Buffer,
    kv_indices: Buffer,
    kv_indptr: Buffer,
    positions: Buffer,
    pool_len: int,
    kv_indices_stride: int,
    kv_indptr_stride: int,
    bs_upper: int,
    iter_upper: int,
    num_tokens_upper: int,
    page_size: int,
    ENTRY_PAGE_SIZE: int = 1,
) -> None:
    """SGLang's EAGLE draft decode lists for ``grid = (steps, bs, topk)``:
    for step ``i``, request ``b < bs`` and branch ``k < topk``, row
    ``kv_indices[i]`` gets the request's ``paged_kernel_lens[b]`` tokens and
    ``i + 1`` draft slots (pages of ``page_size``) at SGLang's offsets, and
    ``kv_indptr[i][e] = sum(positions[:e]) + e * (i + 1)`` for ``e <=
    bs * topk`` (``kv_indptr[i][0] = 0``). One launch; lists past
    ``kv_indices``' width are dropped."""
    if len(grid) != 3:
        raise ValueError("grid %r: SGLang launches (steps, bs, topk)" % (grid,))
    if int(ENTRY_PAGE_SIZE) != 1:
        raise NotImplementedError("ENTRY_PAGE_SIZE = %s: only 1 is built yet" % ENTRY_PAGE_SIZE)
    steps, b, topk = grid
    if steps == 0 or b == 0 or topk == 0:
        return  # SGLang's kernel runs no program
    tokens = b * topk
    ps = int32(page_size, "page_size")
    if ps < 1:
        raise ValueError("page_size (%d) must be >= 1" % ps)
    for name, value, least in (("bs_upper", bs_upper, b), ("iter_upper", iter_upper, steps),
                               ("num_tokens_upper", num_tokens_upper, tokens)):
        if int(value) < least:  # SGLang's kernel would read only part of its rows
            raise ValueError("%s (%d) is below the %d it bounds" % (name, int(value), least))
    rows, row_stride = table(req_to_token, "req_to_token")[2::2]
    if rows > 1 and int(pool_len) != row_stride:
        raise ValueError("pool_len (%d) is not req_to_token's row stride (%d)"
                         % (int(pool_len), row_stride))
    call = _Call(b, req_to_token, pool_len)
    call.op.req_pool_indices = call.vector(req_pool_indices, "req_pool_indices", I64, b)
    call.op.lengths = call.vector(paged_kernel_lens, "paged_kernel_lens", I64, b)
    call.op.draft_positions = call.vector(positions, "positions", I64, tokens)
    call.op.page_size = ps
    call.op.draft_steps = steps
    call.op.draft_topk = topk
    ptr, cols, stride = _draft_table(call, kv_indices, "kv_indices", kv_indices_stride, steps, 0)
    call.op.draft_kv_indices = ptr or None
    call.op.draft_kv_indices_width = cols
    call.op.draft_kv_indices_stride = stride
    ptr, cols, stride = _draft_table(call, kv_indptr, "kv_indptr", kv_indptr_stride, steps,
                                     tokens + 1)
    call.op.draft_kv_indptr = ptr
    call.op.draft_kv_indptr_stride = stride
    ctx = context_for(call.dev, None, "req_to_token")
    status = _lib.build_pool_indices(ctx._handle, ctypes.addressof(call.op),
                                     stream_handle(None, call.dev))
    if status:
        raise ctx.error(status, "attnmeta_build_pool_indices")


create_flashinfer_kv_indices_triton = _Subscripted(_create_flashinfer_kv_indices_triton)
create_flashmla_kv_indices_triton = _Subscripted(_create_flashmla_kv_indices_triton)
create_kv_indptr_and_indices = _Subscripted(_create_kv_indptr_and_indices)
generate_draft_decode_kv_indices = _GridSubscripted(_generate_draft_decode_kv_indices)
create_triton_kv_indices_for_dcp_triton = _Subscripted(_create_triton_kv_indices_for_dcp_triton)
create_mla_kv_page_table_for_dcp = _Subscripted(_create_mla_kv_page_table_for_dcp)


# ---- plain functions (contract sections 12 and 13): SGLang's keyword
# signatures, written in place, nothing returned ----

_INT32_MAX = 2 ** 31 - 1


def _lengths_call(b: int, req_to_token: Buffer, req_pool_indices: Buffer, seq_lens: Buffer,
                  delta: int) -> _Call:
    call = _Call(b, req_to_token, table(req_to_token, "req_to_token")[4])
    call.rows(req_pool_indices, seq_lens, None)
    call.op.length_delta = int32(delta, "seq_len_delta")
    return call


def _page_rows(call: _Call, buf: Buffer, name: str, least_rows: int) -> Tuple[int, int, int]:
    """(pointer, columns, row stride) of an int32 output table."""
    ptr, d, rows, cols, row_stride = table(buf, name, out=True)
    call._check_dev(d, name)
    if rows < least_rows:
        raise ValueError("%s has %d rows, fewer than the %d needed" % (name, rows, least_rows))
    call.keep.append(buf)
    return ptr, cols, row_stride


def _swa_map(token_to_kv_pool: Any) -> Buffer:
    mapping = getattr(token_to_kv_pool, "full_to_swa_index_mapping", None)
    if mapping is None:
        raise NotImplementedError("an SWA pool without full_to_swa_index_mapping (the unified "
                                  "pool's virtual-to-physical table) is not built yet")
    return mapping


def _decode_tables(call: _Call, page_table: Optional[Buffer], swa_page_table: Optional[Buffer],
                   token_to_kv_pool: Any, page_size: int) -> None:
    if page_table is not None:
        ptr, cols, stride = _page_rows(call, page_table, "page_table", call.b)
        call.op.page_table = ptr or None
        call.op.page_table_width = int32(cols, "page_table columns")
        call.op.page_table_stride = stride
    if swa_page_table is not None and token_to_kv_pool is not None:
        mapping = _swa_map(token_to_kv_pool)
        ptr, cols, stride = _page_rows(call, swa_page_table, "swa_page_table", call.b)
        if page_table is not None and cols != call.op.page_table_width:
            raise ValueError("swa_page_table has %d columns, page_table %d"
                             % (cols, call.op.page_table_width))
        call.op.page_table_width = int32(cols, "swa_page_table columns")
        call.op.swa_page_table = ptr or None
        call.op.swa_page_table_stride = stride
        mapping = _as_int64(mapping)
        ptr, d, n = vec(mapping, "full_to_swa_index_mapping", I64)
        call._check_dev(d, "full_to_swa_index_mapping")
        call.keep.append(mapping)
        call.op.full_to_swa = ptr or None
        call.op.swa_map_len = n
    call.op.page_size = int32(page_size, "page_size")
    if call.op.page_size < 1:
        raise ValueError("page_size (%d) must be >= 1" % call.op.page_size)


def normal_decode_set_metadata(
    cache_seqlens_int32: Buffer,
    cu_seqlens_k: Buffer,
    page_table: Buffer,
    req_to_token: Buffer,
    req_pool_indices: Buffer,
    max_seq_pages: int,
    seq_lens: Buffer,
    seq_len_delta: int,
    page_size: int,
    swa_page_table: Optional[Buffer] = None,
    token_to_kv_pool: Any = None,
    skip_page_table: bool = False,
) -> None:
    """SGLang's FA3 decode metadata (newest form) in one launch, for
    ``B = len(cache_seqlens_int32)`` rows: ``cache_seqlens_int32 = seq_lens +
    seq_len_delta``, ``cu_seqlens_k`` its prefix sum with a leading 0, and
    ``page_table[b][p] = req_to_token[rpi[b], p * page_size] // page_size``
    for ``p < min(cdiv(L, page_size), max_seq_pages)`` (the live prefix),
    ``swa_page_table`` likewise through the pool's
    ``full_to_swa_index_mapping``; ``skip_page_table`` writes the lengths
    only."""
    b = _rows_of(cache_seqlens_int32, "cache_seqlens_int32")
    call = _lengths_call(b, req_to_token, req_pool_indices, seq_lens, seq_len_delta)
    call.op.cache_seqlens = call.vector(cache_seqlens_int32, "cache_seqlens_int32", I32, b, out=True)
    call.op.kv_indptr_out = call.vector(cu_seqlens_k, "cu_seqlens_k", I32, b + 1, out=True)
    pages = int(max_seq_pages)
    if not skip_page_table and pages > 0:
        _decode_tables(call, page_table, swa_page_table, token_to_kv_pool, page_size)
        call.op.length_cap = min(pages * int(page_size), _INT32_MAX)
    call.run()


def normal_decode_set_metadata_strided(
    cache_seqlens_int32: Buffer,
    cu_seqlens_k: Buffer,
    page_table: Buffer,
    req_to_token: Buffer,
    req_pool_indices: Buffer,
    strided_indices: Buffer,
    max_seq_pages: int,
    seq_lens: Buffer,
    seq_len_delta: int,
    page_size: int,
    swa_page_table: Optional[Buffer] = None,
    token_to_kv_pool: Any = None,
) -> None:
    """SGLang's older ``normal_decode_set_metadata`` (with
    ``strided_indices = arange(0, ., page_size)``): as the newest, but every
    row's first ``max_seq_pages`` pages are written whatever its length
    (``fill_to_width``)."""
    del strided_indices  # SGLang's arange(0, max_context_len, page_size)
    b = _rows_of(cache_seqlens_int32, "cache_seqlens_int32")
    call = _lengths_call(b, req_to_token, req_pool_indices, seq_lens, seq_len_delta)
    call.op.cache_seqlens = call.vector(cache_seqlens_int32, "cache_seqlens_int32", I32, b, out=True)
    call.op.kv_indptr_out = call.vector(cu_seqlens_k, "cu_seqlens_k", I32, b + 1, out=True)
    pages = int(max_seq_pages)
    if pages > 0:
        _decode_tables(call, page_table, swa_page_table, token_to_kv_pool, page_size)
        if pages > call.op.page_table_width:
            raise ValueError("max_seq_pages (%d) is wider than page_table (%d columns)"
                             % (pages, call.op.page_table_width))
        call.op.page_table_width = pages
        call.op.fill_to_width = 1
    call.run()


def _rows_of(x: Buffer, name: str) -> int:
    shape = getattr(x, "shape", None)
    if not shape:
        raise ValueError("%s must be a 1-D tensor or array" % name)
    return int32(shape[0], name + " rows")


def draft_extend_set_metadata(
    cache_seqlens_int32: Buffer,
    cu_seqlens_k: Buffer,
    cu_seqlens_q: Buffer,
    page_table: Buffer,
    req_to_token: Buffer,
    req_pool_indices: Buffer,
    seq_lens: Buffer,
    extend_seq_lens: Buffer,
    page_size: int,
    full_to_swa_index_mapping: Optional[Buffer] = None,
    swa_page_table: Optional[Buffer] = None,
    out_cache_loc: Optional[Buffer] = None,
    swa_out_cache_loc: Optional[Buffer] = None,
) -> None:
    """SGLang's FA3 draft-extend metadata in one launch, for ``B =
    len(cache_seqlens_int32)`` requests: ``cache_seqlens_int32 = seq_lens``,
    ``cu_seqlens_k`` and ``cu_seqlens_q`` the prefix sums of ``seq_lens`` and
    ``extend_seq_lens`` with a leading 0, and one page-table row a request,
    ``page_table[b][p] = req_to_token[rpi[b], p * page_size] // page_size``
    for ``p < min(cdiv(seq_lens[b], page_size), page_table columns)`` (the
    live prefix). ``B == 0`` writes nothing. Refused (NotImplementedError):
    the SWA pools (``full_to_swa_index_mapping``), whose
    ``swa_out_cache_loc`` is no product of the pool operation."""
    del out_cache_loc, swa_out_cache_loc, swa_page_table
    if full_to_swa_index_mapping is not None:
        raise NotImplementedError("draft_extend_set_metadata with an SWA pool (swa_out_cache_loc: "
                                  "out_cache_loc through the SWA map) is not built yet")
    ps = int32(page_size, "page_size")
    if ps < 1 or ps & (ps - 1):
        raise ValueError("page_size must be a power of two, got %d" % ps)
    b = _rows_of(cache_seqlens_int32, "cache_seqlens_int32")
    if b == 0:
        return
    call = _lengths_call(b, req_to_token, req_pool_indices, seq_lens, 0)
    call.op.cache_seqlens = call.vector(cache_seqlens_int32, "cache_seqlens_int32", I32, b,
                                        out=True)
    call.op.kv_indptr_out = call.vector(cu_seqlens_k, "cu_seqlens_k", I32, b + 1, out=True)
    call.op.query_indptr_out = call.vector(cu_seqlens_q, "cu_seqlens_q", I32, b + 1, out=True)
    call.op.query_lens = call.vector(extend_seq_lens, "extend_seq_lens", I64, b)
    call.op.query_rows = 1
    _decode_tables(call, page_table, None, None, ps)
    call.run()


def _dsa(b: int, per_req: int, seq_lens: Buffer, req_pool_indices: Buffer, req_to_token: Buffer,
         cache_seqlens: Buffer, cu_seqlens_k: Buffer, page_table_1: Optional[Buffer],
         dsa_cache_seqlens: Buffer, dsa_cu_seqlens_k: Buffer, real_page_table: Optional[Buffer],
         max_len: int, dsa_index_topk: int, real_page_size: int, index_kpool: int,
         delta: int, rows: Optional[int] = None) -> _Call:
    """A call of `per_req` rows a request, or `rows` rows in all (draft-extend)."""
    call = _lengths_call(b, req_to_token, req_pool_indices, seq_lens, delta)
    if rows is None:
        call.op.rows_per_req = per_req
        rows = b * per_req
    call.op.kv_indptr_out = call.vector(cu_seqlens_k, "cu_seqlens_k", I32, b + 1, out=True)
    call.op.topk_indptr = call.vector(dsa_cu_seqlens_k, "dsa_cu_seqlens_k", I32, rows + 1,
                                      out=True)
    call.op.topk = int32(dsa_index_topk, "dsa_index_topk")
    call.op.topk_pool = int32(index_kpool, "index_kpool")
    if b == 0:
        return call
    call.op.cache_seqlens = call.vector(cache_seqlens, "cache_seqlens", I32, b, out=True)
    call.op.topk_lens = call.vector(dsa_cache_seqlens, "dsa_cache_seqlens", I32, rows, out=True)
    width = int(max_len)
    ps = int32(real_page_size, "real_page_size")
    if width <= 0:
        return call
    call.op.length_cap = min(width, _INT32_MAX)
    if page_table_1 is not None:
        ptr, cols, stride = _page_rows(call, page_table_1, "page_table_1", rows)
        call.op.token_table = ptr or None
        call.op.token_table_width = int32(min(cols, width), "page_table_1 columns")
        call.op.token_table_stride = stride
    if ps > 1:
        if real_page_table is None:
            raise ValueError("real_page_table is None with real_page_size %d" % ps)
        ptr, cols, stride = _page_rows(call, real_page_table, "real_page_table", rows)
        call.op.page_table = ptr or None
        call.op.page_table_width = int32(cols, "real_page_table columns")
        call.op.page_table_stride = stride
        call.op.page_size = ps
    elif page_table_1 is None:
        raise ValueError("page_table_1 is None with real_page_size 1 (it is the real table)")
    return call


def fused_dsa_decode_metadata(
    seq_lens: Buffer,
    req_pool_indices: Buffer,
    req_to_token: Buffer,
    cache_seqlens: Buffer,
    cu_seqlens_k: Buffer,
    page_table_1: Optional[Buffer],
    dsa_cache_seqlens: Buffer,
    dsa_cu_seqlens_k: Buffer,
    real_page_table: Optional[Buffer],
    bs: int,
    max_len: int,
    dsa_index_topk: int,
    real_page_size: int,
    index_kpool: int = 1,
) -> None:
    """SGLang's DSA decode metadata in one launch: ``cache_seqlens =
    int32(seq_lens)`` and ``cu_seqlens_k``, their clip to
    ``dsa_index_topk`` and its prefix sum, ``page_table_1[b][:n]`` and
    ``real_page_table[b][:cdiv(n, real_page_size)]`` with ``n =
    min(cache_seqlens[b], max_len)`` (the live prefix)."""
    b = int32(bs, "bs")
    _dsa(b, 1, seq_lens, req_pool_indices, req_to_token, cache_seqlens, cu_seqlens_k, page_table_1,
         dsa_cache_seqlens, dsa_cu_seqlens_k, real_page_table, max_len, dsa_index_topk,
         real_page_size, index_kpool, 0).run()


def fused_dsa_target_verify_metadata(
    seq_lens: Buffer,
    req_pool_indices: Buffer,
    req_to_token: Buffer,
    cache_seqlens: Buffer,
    cu_seqlens_k: Buffer,
    page_table_1: Optional[Buffer],
    seqlens_expanded: Buffer,
    dsa_cache_seqlens: Buffer,
    dsa_cu_seqlens_k: Buffer,
    real_page_table: Optional[Buffer],
    bs: int,
    max_seqlen_k: int,
    dsa_index_topk: int,
    real_page_size: int,
    next_n: int,
    paged_mqa_ctx_lens_2d: Optional[Buffer] = None,
    index_kpool: int = 1,
) -> None:
    """SGLang's DSA target-verify metadata in one launch: ``cache_seqlens =
    seq_lens + next_n`` and ``cu_seqlens_k``; for the ``bs * next_n`` rows
    ``seqlens_expanded[b * next_n + j] = seq_lens[b] + j + 1``, its clip and
    prefix sum, and each row's copy of its request's tables."""
    if paged_mqa_ctx_lens_2d is not None:
        raise NotImplementedError("paged_mqa_ctx_lens_2d is not built yet")
    b, n = int32(bs, "bs"), int32(next_n, "next_n")
    if n < 1:
        raise ValueError("next_n (%d) must be >= 1" % n)
    call = _dsa(b, n, seq_lens, req_pool_indices, req_to_token, cache_seqlens, cu_seqlens_k,
                page_table_1, dsa_cache_seqlens, dsa_cu_seqlens_k, real_page_table, max_seqlen_k,
                dsa_index_topk, real_page_size, index_kpool, n)
    if b > 0:
        call.op.expanded_lens = call.vector(seqlens_expanded, "seqlens_expanded", I32, b * n,
                                            out=True)
    call.run()


def fused_dsa_draft_extend_metadata(
    seq_lens: Buffer,
    extend_seq_lens: Buffer,
    req_pool_indices: Buffer,
    req_to_token: Buffer,
    cache_seqlens: Buffer,
    cu_seqlens_k: Buffer,
    page_table_1: Optional[Buffer],
    seqlens_expanded: Buffer,
    dsa_cache_seqlens: Buffer,
    dsa_cu_seqlens_k: Buffer,
    real_page_table: Optional[Buffer],
    bs: int,
    total_len: int,
    max_seqlen_k: int,
    dsa_index_topk: int,
    real_page_size: int,
    max_extend_len: int,
    max_total_len: int,
    static_extend_len: bool = False,
    index_kpool: int = 1,
) -> None:
    """SGLang's DSA draft-extend metadata in one launch: request ``b`` owns
    ``extend_seq_lens[b]`` rows after those of the requests before it
    (``total_len`` rows in all); ``seqlens_expanded`` of row ``j`` is
    ``max(seq_lens[b] - extend_seq_lens[b] + j + 1, 0)``, with its clip,
    prefix sum and each row's copy of its request's tables."""
    del max_extend_len, max_total_len  # SGLang's launch bounds
    if static_extend_len:
        raise NotImplementedError("static_extend_len (every request extend_seq_lens[0] rows) "
                                  "is not built yet")
    b, total = int32(bs, "bs"), int32(total_len, "total_len")
    if total < 0:
        raise ValueError("total_len (%d) must be >= 0" % total)
    call = _dsa(b, 1, seq_lens, req_pool_indices, req_to_token, cache_seqlens, cu_seqlens_k,
                page_table_1, dsa_cache_seqlens, dsa_cu_seqlens_k, real_page_table, max_seqlen_k,
                dsa_index_topk, real_page_size, index_kpool, 0, rows=total)
    if b > 0:
        call.op.query_lens = call.vector(extend_seq_lens, "extend_seq_lens", I64, b)
        call.op.num_rows = total
        call.op.expanded_lens = call.vector(seqlens_expanded, "seqlens_expanded", I32, total,
                                            out=True)
    call.run()
