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

Not yet: ``ENTRY_PAGE_SIZE > 1``, ``token_mapping`` and int64
``kv_indices`` (refused with NotImplementedError)."""

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
        if not (op.kv_indices or op.kv_indptr_out or op.page_table):
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
    ps = int32(PAGED_SIZE, "PAGED_SIZE")
    if ps < 1:
        raise ValueError("PAGED_SIZE (%d) must be >= 1" % ps)
    ptr, d, rows, cols, row_stride = table(kv_indices, "kv_indices", out=True)
    call._check_dev(d, "kv_indices")
    if rows > 1 and int(kv_indices_ptr_stride) != row_stride:
        raise ValueError("kv_indices_ptr_stride (%d) is not kv_indices' row stride (%d)"
                         % (int(kv_indices_ptr_stride), row_stride))
    if rows < b:
        raise ValueError("kv_indices has %d rows, fewer than grid[0] = %d" % (rows, b))
    call.keep.append(kv_indices)
    call.op.page_table = ptr or None
    call.op.page_table_stride = row_stride
    call.op.page_table_width = int32(cols, "kv_indices columns")
    call.op.page_size = ps
    call.run()


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


create_flashinfer_kv_indices_triton = _Subscripted(_create_flashinfer_kv_indices_triton)
create_flashmla_kv_indices_triton = _Subscripted(_create_flashmla_kv_indices_triton)
create_kv_indptr_and_indices = _Subscripted(_create_kv_indptr_and_indices)
