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

/* Start columns are clamped to this magnitude: a row's columns are start +
 * j with 0 <= j < 2^32, so the clamp changes no column's place inside or
 * outside [0, Wr) and no sum can overflow. */
#define AM_POOL_START_BOUND ((int64_t)1 << 40)

/* A row's tokens, read as int32 as SGLang's kernels read them. */
AM_DEVICE int32_t am_pool_length(const am_pool_params *p, uint32_t b) {
  return (int32_t)(uint32_t)(uint64_t)p->lengths[b];
}

/* The pool entry at column `col` of a row (NULL: the row is not in the
 * pool), or -1 with a flag. */
AM_DEVICE int32_t am_pool_entry(const am_pool_params *p, const int32_t *row, int64_t col,
                                int32_t *flags) {
  if (!row) {
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
  int32_t flags = 0;
  if (p->kv_indptr_out && t.block == 0 && t.thread == 0) p->kv_indptr_out[0] = 0;
  for (; b < num_reqs; b += groups) {
    const int64_t rp = p->req_pool_indices[b];
    const int32_t len = am_pool_length(p, b);
    const int64_t n = len > 0 ? len : 0;
    const int32_t *row =
        rp >= 0 && rp < p->pool_rows && p->req_to_token ? p->req_to_token + rp * p->pool_stride : 0;
    const int64_t s =
        p->kv_start_idx ? am_clamp64(p->kv_start_idx[b], -AM_POOL_START_BOUND, AM_POOL_START_BOUND)
                        : 0;
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
      } else {
        const int64_t next = p->kv_indptr[b + 1];
        start = p->kv_indptr[b];
        lim = start + n;
        if (lim > next) {
          if (t.lane == 0) flags |= AM_POOL_FLAG_INDPTR_SHORT;
          lim = next;
        }
      }
      lo = am_max64(start, 0);
      hi = am_min64(lim, p->capacity);
      if ((lo > start || hi < lim) && start < lim && t.lane == 0)
        flags |= AM_POOL_FLAG_OUTSIDE_CAPACITY;
      for (q = lo + t.lane; q < hi; q += t.lanes)
        p->kv_indices[q] = am_pool_entry(p, row, s + (q - start), &flags);
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
        const int32_t v = am_pool_entry(p, row, s + pg * ps, &bad);
        if (!bad && v < 0) bad = AM_POOL_FLAG_ENTRY_NEGATIVE;
        flags |= bad;
        out[pg] = bad ? -1 : (int32_t)(v / ps);
      }
    }
  }
  if (flags && p->error_word) AM_ATOMIC_OR(p->error_word, flags);
}

#endif /* ATTNMETA_AM_POOL_KERNEL_H */
