# SPDX-License-Identifier: Apache-2.0
"""Triton re-implementations of the serving engines' sparse top-k
conversion (request-local top-k indices to global KV slots), the kernels
attnmeta_convert_topk is measured against in bench/topk_compare.py.

It follows the engines' design: a 2-D grid of (token, column tile), each
program loading its token's request id and a tile of BLOCK_N indices,
gathering the block ids from the block table and storing the slots in
place; the "with counts" mode adds each tile's number of valid entries to
the row's counter with an atomic add, so the counters must be zeroed
before the launch (the engines allocate them with torch.zeros: one more
launch). No prefill workspace and no DCP: the decode path the benchmark
times. Validity as the engines define it: x < 0 or a block past the table
gives -1 (they do not check the request id, negative block ids or int32
overflow; the benchmark's inputs have none of those).

TritonTopkRow is the strongest Triton form with counts: one program per
token over its whole row of K columns, the count a reduction in registers
(tl.sum), stored once: no atomics and no zeroing launch. Same slots and
counts as TritonTopk.

Imported only where Triton is installed; nothing else in the project needs it.
"""

import triton
import triton.language as tl


@triton.jit
def _topk_to_slots(req_ptr, table_ptr, table_stride, idx_ptr, idx_stride, out_ptr, out_stride,
                   count_ptr, cols, BLOCK_SIZE: tl.constexpr, BLOCK_N: tl.constexpr,
                   COUNT: tl.constexpr, WHOLE_ROW: tl.constexpr):
    """Tile program_id(1) of BLOCK_N columns of row program_id(0); with
    WHOLE_ROW (one tile of all K columns) the count is stored, not added."""
    row = tl.program_id(0)
    tile = tl.program_id(1)
    col = tile * BLOCK_N + tl.arange(0, BLOCK_N)
    req = tl.load(req_ptr + row)
    x = tl.load(idx_ptr + row * idx_stride + col)
    blk = x // BLOCK_SIZE
    ok = (x >= 0) & (blk < cols)
    block_id = tl.load(table_ptr + req * table_stride + blk, mask=ok, other=0)
    slot = tl.where(ok, block_id * BLOCK_SIZE + x % BLOCK_SIZE, -1)
    tl.store(out_ptr + row * out_stride + col, slot)
    if COUNT:
        if WHOLE_ROW:
            tl.store(count_ptr + row, tl.sum(ok.to(tl.int32), axis=0))
        else:
            tl.atomic_add(count_ptr + row, tl.sum(ok.to(tl.int32), axis=0))


def _kernel_args(req_id, block_table, token_indices, out, counts):
    """The kernel's pointer and stride arguments (out stands in for absent counts)."""
    return (req_id, block_table, block_table.stride(0), token_indices, token_indices.stride(0),
            out, out.stride(0), counts if counts is not None else out, block_table.shape[1])


class TritonTopk:
    """One conversion over fixed buffers: ``launch()`` issues it (and, with
    counts, the zeroing of the counters first), like the engines' call."""

    def __init__(self, req_id, block_table, token_indices, out, counts=None, block_size=64,
                 block_n=128):
        T, K = token_indices.shape
        if K % block_n:
            raise ValueError("K (%d) must be a multiple of BLOCK_N (%d)" % (K, block_n))
        self.args = _kernel_args(req_id, block_table, token_indices, out, counts)
        self.grid = (T, K // block_n)
        self.counts = counts
        self.block_size = block_size
        self.block_n = block_n

    def launch(self):
        if self.counts is not None:
            self.counts.zero_()
        _topk_to_slots[self.grid](*self.args, BLOCK_SIZE=self.block_size, BLOCK_N=self.block_n,
                                  COUNT=self.counts is not None, WHOLE_ROW=False)


class TritonTopkRow:
    """The single-tile form: ``launch()`` is one launch of one program per
    token (K a power of two), counts written directly when asked for."""

    def __init__(self, req_id, block_table, token_indices, out, counts=None, block_size=64,
                 num_warps=4):
        T, K = token_indices.shape
        if K & (K - 1):
            raise ValueError("K (%d) must be a power of two" % K)
        self.args = _kernel_args(req_id, block_table, token_indices, out, counts)
        self.grid = (T, 1)
        self.K = K
        self.counts = counts
        self.block_size = block_size
        self.num_warps = num_warps

    def launch(self):
        _topk_to_slots[self.grid](*self.args, BLOCK_SIZE=self.block_size, BLOCK_N=self.K,
                                  COUNT=self.counts is not None, WHOLE_ROW=True,
                                  num_warps=self.num_warps)
