// SPDX-License-Identifier: Apache-2.0
/*
 * The top-k conversion's short body (AM_TOPK_ROWS): the launch most engines
 * make, decode rows (their request from req_id or query_start_loc) of a
 * power-of-two block size, no DCP, workspace or compaction. Same values, counts and flags as
 * am_topk_body (docs/contract.md, "Top-k indices to global KV slots").
 *
 * A block takes a token's row (grid-stride over the rows); a thread takes
 * AM_TOPK_ROW_COLS consecutive columns a pass, the block's threads side by
 * side, moved as one 16-byte load and store where the host found the rows
 * aligned (vector_in, vector_out). For a few rows the time is the length
 * of the dependent path (positions and request, then the table, then the
 * store) and of the instructions between its loads, so nothing on it
 * branches: the table is read at column 0 of a valid row where a position
 * is not converted (am_topk_rows_apply: the row has a column), and the
 * checks are selects. Counts are block-wide barrier counts, one a column
 * of a thread. Correct for any block and grid.
 */
#ifndef ATTNMETA_AM_TOPK_ROWS_KERNEL_H
#define ATTNMETA_AM_TOPK_ROWS_KERNEL_H

#include "am_dialect.h"
#include "am_topk_params.h"
#include "am_topk_request.h"
#include "attnmeta/attnmeta.h"

/* Columns [j, j + AM_TOPK_ROW_COLS) of a row, -1 at and past K: as one
 * 16-byte load where `vector` allows; with `lean` (K a multiple of
 * AM_TOPK_ROW_COLS, rows aligned) always. */
AM_DEVICE void am_topk_rows_load(const int32_t *AM_RESTRICT in, uint32_t k, uint32_t j, int vector,
                                 int lean, int32_t x[AM_TOPK_ROW_COLS]) {
  int u;
  if (lean ? j < k : vector && j + AM_TOPK_ROW_COLS <= k) {
    const am_i32x4 v = *(const am_i32x4 *)(const void *)(in + j);
    x[0] = v.x;
    x[1] = v.y;
    x[2] = v.z;
    x[3] = v.w;
    return;
  }
  for (u = 0; u < AM_TOPK_ROW_COLS; ++u)
    x[u] = !lean && j + (uint32_t)u < k ? in[j + (uint32_t)u] : -1;
}

/* Columns [j, j + AM_TOPK_ROW_COLS) of a row, none at or past K; vectors as
 * am_topk_rows_load. */
AM_DEVICE void am_topk_rows_store(int32_t *AM_RESTRICT out, uint32_t k, uint32_t j, int vector,
                                  int lean, const int32_t v[AM_TOPK_ROW_COLS]) {
  int u;
  if (lean ? j < k : vector && j + AM_TOPK_ROW_COLS <= k) {
    am_i32x4 w;
    w.x = v[0];
    w.y = v[1];
    w.z = v[2];
    w.w = v[3];
    *(am_i32x4 *)(void *)(out + j) = w;
    return;
  }
  for (u = 0; u < AM_TOPK_ROW_COLS; ++u)
    if (!lean && j + (uint32_t)u < k) out[j + (uint32_t)u] = v[u];
}

/* `counts`: rows are counted into valid_count; `lean`: the lean form,
 * where am_topk_rows_lean holds (both compile-time constants on the GPUs).
 * The lean form loads a pass's positions and its request together at the
 * top of the pass, and moves every column in vectors. Every thread of a
 * block runs the same passes, so the barrier counts line up. */
AM_DEVICE void am_topk_rows_body(const am_topk_params *p, am_thread th, int counts, int lean) {
  const uint32_t num_tokens = (uint32_t)p->num_tokens, k = (uint32_t)p->topk_count;
  const uint32_t first = AM_TOPK_ROW_COLS * th.thread, pass = AM_TOPK_ROW_COLS * th.block_dim;
  const uint32_t shift = am_ctz32((uint32_t)p->block_size);
  const uint32_t in_block = (uint32_t)p->block_size - 1u;
  const uint32_t cols = (uint32_t)p->cols, rows = (uint32_t)p->stride_rows;
  const int vector_in = p->vector_in, vector_out = p->vector_out;
  int32_t flags = 0;
  uint32_t t;
  for (t = th.block; t < num_tokens; t += th.grid_dim) {
    const int32_t *AM_RESTRICT in = p->topk + (int64_t)t * p->topk_stride;
    int32_t *AM_RESTRICT out = p->out + (int64_t)t * p->out_stride;
    int32_t x[AM_TOPK_ROW_COLS];
    int32_t r = -1;
    uint32_t c0, total = 0;
    /* the first pass's positions load before the request is looked up:
     * both rounds of loads are in flight together */
    if (!lean) {
      am_topk_rows_load(in, k, first, vector_in, 0, x);
      r = am_topk_request(p, t);
    }
    for (c0 = 0; c0 < k; c0 += pass) {
      const uint32_t j = c0 + first;
      int32_t v[AM_TOPK_ROW_COLS];
      int live, counted, u;
      const int32_t *AM_RESTRICT table;
      if (lean) {
        am_topk_rows_load(in, k, j, 1, 1, x);
        r = am_topk_request_id(p, t);
      } else if (c0 > 0) {
        am_topk_rows_load(in, k, j, vector_in, 0, x);
      }
      live = r >= 0;
      table = p->block_table + (int64_t)(live ? r : 0) * p->block_table_stride;
      counted = counts && live && !(p->token_slot && p->token_slot[t] < 0);
      for (u = 0; u < AM_TOPK_ROW_COLS; ++u) {
        const uint32_t local = (uint32_t)x[u], blk = local >> shift;
        const int wanted = live && x[u] >= 0;
        const int past = wanted && blk >= cols;
        const int ok = wanted && !past;
        const int32_t id = table[ok ? blk : 0u];
        const uint64_t slot = (uint64_t)(uint32_t)id * rows + (local & in_block);
        /* a negative id is 2^31 or more as unsigned: its slot fails the
         * same test as an overflowing one; the flag tells them apart */
        const int bad = ok && slot > INT32_MAX;
        flags |= (past ? ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE : 0) |
                 (bad ? (id < 0 ? ATTNMETA_FLAG_BLOCK_ID_NEGATIVE : ATTNMETA_FLAG_SLOT_OUT_OF_RANGE)
                      : 0);
        v[u] = ok && !bad ? (int32_t)slot : -1;
      }
      am_topk_rows_store(out, k, j, vector_out, lean, v);
      if (counts)
        for (u = 0; u < AM_TOPK_ROW_COLS; ++u)
          total += (uint32_t)AM_BARRIER_COUNT(counted && v[u] >= 0);
    }
    if (counts && th.thread == 0) p->valid_count[t] = (int32_t)total;
  }
  if (flags && p->error_word) AM_ATOMIC_OR(p->error_word, flags);
}

#endif /* ATTNMETA_AM_TOPK_ROWS_KERNEL_H */
