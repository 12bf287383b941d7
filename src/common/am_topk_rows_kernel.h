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
#include "am_topk_columns.h"
#include "am_topk_params.h"
#include "am_topk_request.h"
#include "attnmeta/attnmeta.h"

/* What every pass of the short body reads: the launch's sizes, made once. */
typedef struct am_topk_rows_ctx {
  const am_topk_params *p;
  uint32_t k, first, pass, shift, in_block, cols, rows;
  int counts, lean;
} am_topk_rows_ctx;

/* One pass of a thread over row t, columns [j, j + AM_TOPK_ROW_COLS), the
 * positions in x (the lean form loads them here, with the request);
 * returns the block's count of valid slots in the pass when counting (a
 * barrier count every thread reaches). */
AM_DEVICE uint32_t am_topk_rows_pass(const am_topk_rows_ctx *c, uint32_t t, uint32_t j, int32_t r,
                                     int32_t x[AM_TOPK_ROW_COLS], int32_t *flags) {
  const am_topk_params *p = c->p;
  int32_t v[AM_TOPK_ROW_COLS];
  int live, counted, u;
  uint32_t total = 0;
  const int32_t *AM_RESTRICT table;
  if (c->lean) {
    am_topk_load_columns(p->topk + (int64_t)t * p->topk_stride, c->k, j, 1, 1, x);
    r = am_topk_request_id(p, t);
  }
  live = r >= 0;
  table = p->block_table + (int64_t)(live ? r : 0) * p->block_table_stride;
  counted = c->counts && live && !(p->token_slot && p->token_slot[t] < 0);
  for (u = 0; u < AM_TOPK_ROW_COLS; ++u) {
    const uint32_t local = (uint32_t)x[u], blk = local >> c->shift;
    const int wanted = live && x[u] >= 0;
    const int past = wanted && blk >= c->cols;
    const int ok = wanted && !past;
    const int32_t id = table[ok ? blk : 0u];
    const uint64_t slot = (uint64_t)(uint32_t)id * c->rows + (local & c->in_block);
    /* a negative id is 2^31 or more as unsigned: its slot fails the same
     * test as an overflowing one; the flag tells them apart */
    const int bad = ok && slot > INT32_MAX;
    *flags |= (past ? ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE : 0) |
              (bad ? (id < 0 ? ATTNMETA_FLAG_BLOCK_ID_NEGATIVE : ATTNMETA_FLAG_SLOT_OUT_OF_RANGE)
                   : 0);
    v[u] = ok && !bad ? (int32_t)slot : -1;
  }
  am_topk_store_columns(p->out + (int64_t)t * p->out_stride, c->k, j, p->vector_out, c->lean, v);
  if (c->counts)
    for (u = 0; u < AM_TOPK_ROW_COLS; ++u)
      total += (uint32_t)AM_BARRIER_COUNT(counted && v[u] >= 0);
  return total;
}

/* Row t from pass `from` on (the passes before it made, their count in
 * total), and its count. */
AM_DEVICE void am_topk_rows_rest(const am_topk_rows_ctx *c, uint32_t t, uint32_t from, int32_t r,
                                 int32_t x[AM_TOPK_ROW_COLS], uint32_t total, int32_t *flags,
                                 am_thread th) {
  const am_topk_params *p = c->p;
  uint32_t c0;
  for (c0 = from; c0 < c->k; c0 += c->pass) {
    if (!c->lean) am_topk_load_columns(p->topk + (int64_t)t * p->topk_stride, c->k, c0 + c->first,
                                    p->vector_in, 0, x);
    total += am_topk_rows_pass(c, t, c0 + c->first, r, x, flags);
  }
  if (c->counts && th.thread == 0) p->valid_count[t] = (int32_t)total;
}

/* Row t: its first pass, then the rest. The general form loads the first
 * positions before it looks up the request, so both rounds of loads are in
 * flight together; the lean form loads each pass's positions and request
 * together. */
AM_DEVICE void am_topk_rows_row(const am_topk_rows_ctx *c, uint32_t t, int32_t *flags,
                                am_thread th) {
  const am_topk_params *p = c->p;
  int32_t x[AM_TOPK_ROW_COLS];
  int32_t r = -1;
  uint32_t total;
  if (!c->lean) {
    am_topk_load_columns(p->topk + (int64_t)t * p->topk_stride, c->k, c->first, p->vector_in, 0, x);
    r = am_topk_request(p, t);
  }
  total = am_topk_rows_pass(c, t, c->first, r, x, flags);
  am_topk_rows_rest(c, t, c->pass, r, x, total, flags, th);
}

/* `counts`: rows are counted into valid_count; `lean`: the lean form,
 * where am_topk_rows_lean holds (both compile-time constants on the GPUs).
 * A block's first row, and a row's first pass, are made ahead of the
 * loops over the others: in the launches the host plans (a block a row,
 * one pass) their path has no loop in it. Every thread of a block runs
 * the same passes, so the barrier counts line up. Its own frame on
 * HIP-CPU (AM_DEVICE_OWN_FRAME): inlined beside the general body, the
 * kernel outgrows the emulated fiber stacks. */
AM_DEVICE_OWN_FRAME void am_topk_rows_body(const am_topk_params *p, am_thread th, int counts,
                                           int lean) {
  am_topk_rows_ctx c;
  const uint32_t num_tokens = (uint32_t)p->num_tokens;
  int32_t flags = 0;
  uint32_t t;
  c.p = p;
  c.k = (uint32_t)p->topk_count;
  c.first = AM_TOPK_ROW_COLS * th.thread;
  c.pass = AM_TOPK_ROW_COLS * th.block_dim;
  c.shift = am_ctz32((uint32_t)p->block_size);
  c.in_block = (uint32_t)p->block_size - 1u;
  c.cols = (uint32_t)p->cols;
  c.rows = (uint32_t)p->stride_rows;
  c.counts = counts;
  c.lean = lean;
  if (th.block < num_tokens) {
    am_topk_rows_row(&c, th.block, &flags, th);
    for (t = th.block + th.grid_dim; t < num_tokens; t += th.grid_dim)
      am_topk_rows_row(&c, t, &flags, th);
  }
  if (flags && p->error_word) AM_ATOMIC_OR(p->error_word, flags);
}

#endif /* ATTNMETA_AM_TOPK_ROWS_KERNEL_H */
