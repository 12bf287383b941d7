// SPDX-License-Identifier: Apache-2.0
/*
 * What every part of the pool operation's kernel reads the same way
 * (am_pool_kernel.h, am_pool_dcp.h, am_pool_draft_kernel.h): its flags, a
 * request's length and rows, a prefix sum's int32 store and a pool entry.
 * Written once in the dialect.
 */
#ifndef ATTNMETA_AM_POOL_ENTRIES_H
#define ATTNMETA_AM_POOL_ENTRIES_H

#include "am_dialect.h"
#include "am_pool_params.h"

/* Flags, as attnmeta.h numbers them (the header is not device code). */
#define AM_POOL_FLAG_INDPTR_SHORT 2       /* a row longer than kv_indptr[b+1] - kv_indptr[b] */
#define AM_POOL_FLAG_OUTSIDE_CAPACITY 4   /* a row's slots reach outside [0, capacity), or a
                                             request's rows past num_rows */
#define AM_POOL_FLAG_LENGTH_NEGATIVE 8    /* lengths[b] + length_delta < 0, or query_lens[b] < 0 */
#define AM_POOL_FLAG_COLUMN_OUTSIDE 32    /* a column outside [0, Wr), entries past a table's
                                             width, or a slot outside the full-to-SWA map */
#define AM_POOL_FLAG_ENTRY_NEGATIVE 64    /* a negative pool entry read for a page */
#define AM_POOL_FLAG_SLOT_OUTSIDE 512     /* an SWA page above INT32_MAX */
#define AM_POOL_FLAG_ROW_OUTSIDE 1024     /* req_pool_indices[b] outside [0, P) */
#define AM_POOL_FLAG_SCAN_OVERFLOW 2048   /* a prefix sum above INT32_MAX */

/* An int64 entry read as int32 (its low 32 bits), as SGLang's kernels
 * read lengths and start columns. */
AM_DEVICE int32_t am_pool_low32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }

/* L = int32(lengths[b] + length_delta), the sum wrapping as SGLang's
 * int64 addition and int32 cast do. */
AM_DEVICE int32_t am_pool_length(const am_pool_params *p, uint32_t b) {
  return (int32_t)am_wrapping_add((uint32_t)am_pool_low32(p->lengths[b]), (uint32_t)p->length_delta);
}

/* The rows of request b: query_lens[b] (read as int32; < 0 counts as 0),
 * or rows_per_req. */
AM_DEVICE int64_t am_pool_rows(const am_pool_params *p, uint32_t b) {
  int32_t q;
  if (!p->query_lens) return p->rows_per_req;
  q = am_pool_low32(p->query_lens[b]);
  return q > 0 ? q : 0;
}

/* A prefix sum stored as int32: one above INT32_MAX saturates, with a flag. */
AM_DEVICE int32_t am_pool_sum32(int64_t sum, int32_t *flags) {
  if (sum > INT32_MAX) {
    *flags |= AM_POOL_FLAG_SCAN_OVERFLOW;
    return INT32_MAX;
  }
  return (int32_t)sum;
}

/* The pool entry at column `col` of a row (in_pool 0: its pool row is
 * outside [0, P)), or -1 with a flag. `row` is NULL only where no column
 * is inside [0, Wr). */
AM_DEVICE int32_t am_pool_entry(const am_pool_params *p, int in_pool, const int32_t *row,
                                int64_t col, int32_t *flags) {
  if (!in_pool) {
    *flags |= AM_POOL_FLAG_ROW_OUTSIDE;
    return -1;
  }
  if (col < 0 || col >= p->pool_cols) {
    *flags |= AM_POOL_FLAG_COLUMN_OUTSIDE;
    return -1;
  }
  return row[col];
}

#endif /* ATTNMETA_AM_POOL_ENTRIES_H */
