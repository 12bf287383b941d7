// SPDX-License-Identifier: Apache-2.0
/*
 * The top-k conversion's short body (AM_TOPK_ROWS): the launch most engines
 * make, decode rows (their request from req_id or query_start_loc) of a
 * power-of-two block size, no DCP, workspace or compaction. Same values, counts and flags as
 * am_topk_body (docs/contract.md, "Top-k indices to global KV slots").
 *
 * A block takes a token's row (grid-stride over the rows); each thread
 * takes AM_TOPK_ROW_COLS columns a block width apart. A warp's loads are
 * coalesced whatever the row's alignment or stride, a thread's loads are
 * independent of each other, and the path has no branch but the loops':
 * for a few rows the time is the length of that path (its instructions
 * and their fetches), which is why this body exists beside the general
 * one. Counts are block-wide barrier counts, one a column of a thread.
 * Correct for any block and grid.
 */
#ifndef ATTNMETA_AM_TOPK_ROWS_KERNEL_H
#define ATTNMETA_AM_TOPK_ROWS_KERNEL_H

#include "am_dialect.h"
#include "am_topk_params.h"
#include "am_topk_request.h"
#include "attnmeta/attnmeta.h"

/* A thread's columns j0, j0 + width, ... of a row (-1 at and past K). */
AM_DEVICE void am_topk_rows_load(const int32_t *AM_RESTRICT in, uint32_t k, uint32_t j0,
                                 uint32_t width, int32_t x[AM_TOPK_ROW_COLS]) {
  int u;
  for (u = 0; u < AM_TOPK_ROW_COLS; ++u) {
    const uint32_t j = j0 + (uint32_t)u * width;
    x[u] = j < k ? in[j] : -1;
  }
}

/* `counts`: rows are counted into valid_count (a compile-time constant on
 * the GPUs). Every thread of a block runs the same passes, so the barrier
 * counts line up. */
AM_DEVICE void am_topk_rows_body(const am_topk_params *p, am_thread th, int counts) {
  const uint32_t num_tokens = (uint32_t)p->num_tokens, k = (uint32_t)p->topk_count;
  const uint32_t width = th.block_dim, pass = AM_TOPK_ROW_COLS * th.block_dim;
  const uint32_t shift = am_ctz32((uint32_t)p->block_size);
  const uint32_t in_block = (uint32_t)p->block_size - 1u;
  const uint32_t cols = (uint32_t)p->cols, rows = (uint32_t)p->stride_rows;
  int32_t flags = 0;
  uint32_t t;
  for (t = th.block; t < num_tokens; t += th.grid_dim) {
    const int32_t *AM_RESTRICT in = p->topk + (int64_t)t * p->topk_stride;
    int32_t *AM_RESTRICT out = p->out + (int64_t)t * p->out_stride;
    int32_t x[AM_TOPK_ROW_COLS];
    int32_t r;
    int live, counted, u;
    const int32_t *AM_RESTRICT table;
    uint32_t c0, total = 0;
    /* the first pass's positions load before the request is looked up:
     * both rounds of loads are in flight together */
    am_topk_rows_load(in, k, th.thread, width, x);
    r = am_topk_request(p, t);
    live = r >= 0;
    table = p->block_table + (live ? (int64_t)r * p->block_table_stride : 0);
    counted = counts && live && !(p->token_slot && p->token_slot[t] < 0);
    for (c0 = 0; c0 < k; c0 += pass) {
      int32_t v[AM_TOPK_ROW_COLS];
      if (c0 > 0) am_topk_rows_load(in, k, c0 + th.thread, width, x);
      for (u = 0; u < AM_TOPK_ROW_COLS; ++u) {
        const uint32_t local = (uint32_t)x[u], blk = local >> shift;
        const int wanted = live && x[u] >= 0;
        const int past = wanted && blk >= cols;
        const int ok = wanted && !past;
        const int32_t id = ok ? table[blk] : 0;
        const uint64_t slot = (uint64_t)(uint32_t)id * rows + (local & in_block);
        /* a negative id is 2^31 or more as unsigned: its slot fails the
         * same test as an overflowing one; the flag tells them apart */
        const int bad = ok && slot > INT32_MAX;
        flags |= (past ? ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE : 0) |
                 (bad ? (id < 0 ? ATTNMETA_FLAG_BLOCK_ID_NEGATIVE : ATTNMETA_FLAG_SLOT_OUT_OF_RANGE)
                      : 0);
        v[u] = ok && !bad ? (int32_t)slot : -1;
      }
      for (u = 0; u < AM_TOPK_ROW_COLS; ++u) {
        const uint32_t j = c0 + (uint32_t)u * width + th.thread;
        if (j < k) out[j] = v[u];
      }
      if (counts)
        for (u = 0; u < AM_TOPK_ROW_COLS; ++u)
          total += (uint32_t)AM_BARRIER_COUNT(counted && v[u] >= 0);
    }
    if (counts && th.thread == 0) p->valid_count[t] = (int32_t)total;
  }
  if (flags && p->error_word) AM_ATOMIC_OR(p->error_word, flags);
}

#endif /* ATTNMETA_AM_TOPK_ROWS_KERNEL_H */
