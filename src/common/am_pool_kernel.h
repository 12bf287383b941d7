// SPDX-License-Identifier: Apache-2.0
/*
 * The kernel body of the pool operation (attnmeta_build_pool_indices,
 * docs/c_api.md "SGLang's request pool"): SGLang's index buffers from its
 * request pool req_to_token. Written once in the dialect; CUDA, HIP and the
 * CPU backend run this code.
 *
 * Work split: a group of `lanes` threads (the block's x dimension) owns one
 * request row b; its lanes copy the row's slots (kv_indices) and pages
 * (page_table) at stride `lanes`. Groups take rows b = g, g + G, ... with G
 * the groups of the grid, in increasing order.
 *
 * kv_indptr_out needs every row's start, the sum of max(lengths, 0) of the
 * rows before it, in the same launch without a grid-wide barrier. Each
 * thread keeps that sum itself: it adds the lengths between one of its rows
 * and the next, so a thread reads each of the B lengths at most once (B
 * loads a thread, the lanes of a group reading the same addresses), with
 * no barrier and no block-shared memory, for any B and any launch shape. A
 * block-wide scan would read fewer lengths a thread for large B; this form
 * is the one whose cost per thread is bounded by B and whose answer cannot
 * depend on the shape. Sums run in 64 bits.
 */
#ifndef ATTNMETA_AM_POOL_KERNEL_H
#define ATTNMETA_AM_POOL_KERNEL_H

#include "am_dialect.h"
#include "am_pool_params.h"

/* Flags, as attnmeta.h numbers them (the header is not device code). */
#define AM_POOL_FLAG_INDPTR_SHORT 2       /* a row longer than kv_indptr[b+1] - kv_indptr[b] */
#define AM_POOL_FLAG_OUTSIDE_CAPACITY 4   /* a row's slots reach outside [0, capacity) */
#define AM_POOL_FLAG_LENGTH_NEGATIVE 8    /* lengths[b] < 0 */
#define AM_POOL_FLAG_COLUMN_OUTSIDE 32    /* a column outside [0, Wr), or pages past the width */
#define AM_POOL_FLAG_ENTRY_NEGATIVE 64    /* a negative pool entry read for a page */
#define AM_POOL_FLAG_ROW_OUTSIDE 1024     /* req_pool_indices[b] outside [0, P) */
#define AM_POOL_FLAG_SCAN_OVERFLOW 2048   /* a prefix sum above INT32_MAX */

/* An int64 entry read as int32 (its low 32 bits), as SGLang's kernels
 * read lengths and start columns. */
AM_DEVICE int32_t am_pool_low32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }

AM_DEVICE int32_t am_pool_length(const am_pool_params *p, uint32_t b) {
  return am_pool_low32(p->lengths[b]);
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

AM_DEVICE void am_pool_body(const am_pool_params *p, am_thread t) {
  const uint32_t groups = t.groups * t.grid_dim;
  const uint32_t num_reqs = (uint32_t)p->num_reqs;
  uint32_t b = t.block * t.groups + t.group;
  uint32_t summed = 0; /* rows whose lengths `sum` holds: [0, summed) */
  int64_t sum = 0;
  uint32_t maxed = 0; /* entries of kv_indptr that `top` is the largest of: [0, maxed) */
  int64_t top = INT64_MIN;
  int32_t flags = 0;
  if (p->kv_indptr_out && t.block == 0 && t.thread == 0) p->kv_indptr_out[0] = 0;
  for (; b < num_reqs; b += groups) {
    const int64_t rp = p->req_pool_indices[b];
    const int32_t len = am_pool_length(p, b);
    const int64_t n = len > 0 ? len : 0;
    const int in_pool = rp >= 0 && rp < p->pool_rows;
    const int32_t *row = in_pool && p->req_to_token ? p->req_to_token + rp * p->pool_stride : 0;
    /* columns s + j, j < 2^31 + page_size: no 64-bit sum overflows */
    const int64_t s = p->kv_start_idx ? am_pool_low32(p->kv_start_idx[b]) : 0;
    if (len < 0 && t.lane == 0) flags |= AM_POOL_FLAG_LENGTH_NEGATIVE;
    if (p->kv_indptr_out) {
      for (; summed < b; ++summed) {
        const int32_t l = am_pool_length(p, summed);
        sum += l > 0 ? l : 0;
      }
      if (t.lane == 0) {
        const int64_t end = sum + n;
        if (end > INT32_MAX) flags |= AM_POOL_FLAG_SCAN_OVERFLOW;
        p->kv_indptr_out[b + 1] = end > INT32_MAX ? INT32_MAX : (int32_t)end;
      }
    }
    if (p->kv_indices) {
      int64_t start, lim, lo, hi, q;
      if (p->kv_indptr_out) {
        start = sum;
        lim = am_min64(sum + n, INT32_MAX); /* past it the stored kv_indptr_out cannot say */
        lo = sum;
      } else {
        /* A row writes inside [max(kv_indptr[0..b]), kv_indptr[b + 1]):
         * the rows' places never meet, whatever kv_indptr holds, so no
         * entry depends on the order the rows are written in. */
        const int64_t next = p->kv_indptr[b + 1];
        for (; maxed <= b; ++maxed) top = am_max64(top, p->kv_indptr[maxed]);
        start = p->kv_indptr[b];
        lo = top;
        lim = am_min64(start + n, next);
        if (n > 0 && (lo > start || lim < start + n) && t.lane == 0)
          flags |= AM_POOL_FLAG_INDPTR_SHORT;
      }
      if (lo < lim && (lo < 0 || lim > p->capacity) && t.lane == 0)
        flags |= AM_POOL_FLAG_OUTSIDE_CAPACITY;
      hi = am_min64(lim, p->capacity);
      lo = am_max64(lo, 0);
      for (q = lo + t.lane; q < hi; q += t.lanes)
        p->kv_indices[q] = am_pool_entry(p, in_pool, row, s + (q - start), &flags);
    }
    if (p->page_table) {
      const int64_t ps = p->page_size;
      int64_t pages = (n + ps - 1) / ps, pg;
      int32_t *out = p->page_table + (int64_t)b * p->page_stride;
      if (pages > p->page_width) {
        if (t.lane == 0) flags |= AM_POOL_FLAG_COLUMN_OUTSIDE;
        pages = p->page_width;
      }
      for (pg = t.lane; pg < pages; pg += t.lanes) {
        int32_t bad = 0;
        const int32_t v = am_pool_entry(p, in_pool, row, s + pg * ps, &bad);
        if (!bad && v < 0) bad = AM_POOL_FLAG_ENTRY_NEGATIVE;
        flags |= bad;
        out[pg] = bad ? -1 : (int32_t)(v / ps);
      }
    }
  }
  if (flags && p->error_word) AM_ATOMIC_OR(p->error_word, flags);
}

#endif /* ATTNMETA_AM_POOL_KERNEL_H */
