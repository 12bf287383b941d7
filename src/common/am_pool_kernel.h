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
 * depend on the shape. Sums run in 64 bits. The other scans are kept the
 * same way: the rows of the requests before (query_indptr_out, and the
 * first row of a request with query_lens) and the clipped lengths of those
 * rows (topk_indptr, O(rows) arithmetic a thread).
 *
 * Per-row outputs (expanded_lens, topk_lens) and the tables (page_table,
 * swa_page_table, token_table) have rows_per_req or query_lens[b] rows a
 * request, each table row a copy of the request's entries; the request's
 * group writes them all, rows at or past num_rows dropped.
 */
#ifndef ATTNMETA_AM_POOL_KERNEL_H
#define ATTNMETA_AM_POOL_KERNEL_H

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

/* Row j of a request of n >= 0 tokens and q rows: the tokens its query
 * sees (target verify and draft-extend: the rows before it and itself). */
AM_DEVICE int64_t am_pool_expanded(int64_t n, int64_t q, int64_t j) {
  const int64_t x = n - q + j + 1;
  return x > 0 ? x : 0;
}

/* A length clipped to the top-k: min(x, K), or with pools of Q > 1 tokens
 * the whole pools clipped and the partial pool kept. */
AM_DEVICE int64_t am_pool_clip(const am_pool_params *p, int64_t x) {
  const int64_t k = p->topk;
  if (p->topk_pool > 1) {
    const int64_t whole = x / p->topk_pool * p->topk_pool;
    return (whole < k ? whole : k) + (x - whole);
  }
  return x < k ? x : k;
}

/* The clipped lengths of the q rows of a request of n tokens, summed. */
AM_DEVICE int64_t am_pool_clip_sum(const am_pool_params *p, int64_t n, int64_t q) {
  int64_t sum = 0, j;
  for (j = 0; j < q; ++j) sum += am_pool_clip(p, am_pool_expanded(n, q, j));
  return sum;
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

/* Page pg of a row: its first token's slot v, as a page (v / ps) or
 * through the full-to-SWA map (S[v] / ps); -1 with a flag for a bad slot. */
AM_DEVICE int32_t am_pool_page(const am_pool_params *p, int in_pool, const int32_t *row,
                               int64_t col, int swa, int32_t *flags) {
  int32_t bad = 0;
  const int32_t v = am_pool_entry(p, in_pool, row, col, &bad);
  int64_t w = v;
  if (!bad && v < 0) bad = AM_POOL_FLAG_ENTRY_NEGATIVE;
  if (!bad && swa) {
    if (v >= p->swa_map_len) bad = AM_POOL_FLAG_COLUMN_OUTSIDE;
    else if ((w = p->full_to_swa[v]) < 0) bad = AM_POOL_FLAG_ENTRY_NEGATIVE;
    else if (w / p->page_size > INT32_MAX) bad = AM_POOL_FLAG_SLOT_OUTSIDE;
  }
  *flags |= bad;
  return bad ? -1 : (int32_t)(w / p->page_size);
}

/* How many entries a table row gets: all `width` of them (fill_to_width),
 * or the live `n` kept inside the width (a flag when it is not). */
AM_DEVICE int64_t am_pool_row_entries(const am_pool_params *p, int64_t n, int64_t width,
                                      int lane, int32_t *flags) {
  if (p->fill_to_width) return width;
  if (n > width) {
    if (lane == 0) *flags |= AM_POOL_FLAG_COLUMN_OUTSIDE;
    return width;
  }
  return n;
}

#include "am_pool_draft_kernel.h"

AM_DEVICE void am_pool_body(const am_pool_params *p, am_thread t) {
  if (p->draft_steps > 0) { am_pool_draft_body(p, t); return; } /* built alone */
  const uint32_t groups = t.groups * t.grid_dim;
  const uint32_t num_reqs = (uint32_t)p->num_reqs;
  const int scan = p->kv_indptr_out || p->topk_indptr || p->query_lens || p->query_indptr_out;
  uint32_t b = t.block * t.groups + t.group;
  /* requests whose lengths `sum`, clipped lengths `clipped` and rows
   * `rows` are summed: [0, summed) */
  uint32_t summed = 0;
  int64_t sum = 0, clipped = 0, rows = 0;
  uint32_t maxed = 0; /* entries of kv_indptr that `top` is the largest of: [0, maxed) */
  int64_t top = INT64_MIN;
  int32_t flags = 0;
  if (t.block == 0 && t.thread == 0) {
    if (p->kv_indptr_out) p->kv_indptr_out[0] = 0;
    if (p->topk_indptr) p->topk_indptr[0] = 0;
    if (p->query_indptr_out) p->query_indptr_out[0] = 0;
  }
  for (; b < num_reqs; b += groups) {
    const int64_t rp = p->req_pool_indices[b];
    const int32_t len = am_pool_length(p, b);
    const int64_t n = len > 0 ? len : 0;
    /* the tokens the tables read */
    const int64_t tokens = p->length_cap > 0 && n > p->length_cap ? p->length_cap : n;
    const int in_pool = rp >= 0 && rp < p->pool_rows;
    const int32_t *row = in_pool && p->req_to_token ? p->req_to_token + rp * p->pool_stride : 0;
    /* columns s + j, j < 2^31 + page_size: no 64-bit sum overflows */
    const int64_t s = p->kv_start_idx ? am_pool_low32(p->kv_start_idx[b]) : 0;
    const int64_t q = am_pool_rows(p, b);
    int64_t e0, live, j; /* the request's first row; its rows inside [0, T) */
    if (len < 0 && t.lane == 0) flags |= AM_POOL_FLAG_LENGTH_NEGATIVE;
    if (p->query_lens && am_pool_low32(p->query_lens[b]) < 0 && t.lane == 0)
      flags |= AM_POOL_FLAG_LENGTH_NEGATIVE;
    if (scan) {
      for (; summed < b; ++summed) {
        const int32_t l = am_pool_length(p, summed);
        const int64_t m = l > 0 ? l : 0, r = am_pool_rows(p, summed);
        sum += m;
        rows += r;
        if (p->topk_indptr) clipped += am_pool_clip_sum(p, m, r);
      }
    }
    e0 = p->query_lens ? rows : (int64_t)b * q;
    live = am_max64(am_min64(q, (int64_t)p->num_rows - e0), 0);
    if (live < q && t.lane == 0) flags |= AM_POOL_FLAG_OUTSIDE_CAPACITY;
    if (t.lane == 0) {
      int64_t run = clipped; /* the clipped lengths of the rows before e0 + j */
      if (p->kv_indptr_out) p->kv_indptr_out[b + 1] = am_pool_sum32(sum + n, &flags);
      if (p->query_indptr_out) p->query_indptr_out[b + 1] = am_pool_sum32(rows + q, &flags);
      if (p->cache_seqlens) p->cache_seqlens[b] = (int32_t)n;
      for (j = 0; j < live; ++j) {
        const int64_t x = am_pool_expanded(n, q, j), k = am_pool_clip(p, x);
        if (p->expanded_lens) p->expanded_lens[e0 + j] = (int32_t)x;
        if (p->topk_lens) p->topk_lens[e0 + j] = (int32_t)k;
        run += k;
        if (p->topk_indptr) p->topk_indptr[e0 + j + 1] = am_pool_sum32(run, &flags);
      }
    }
    if (p->kv_indices) {
      int64_t start, lim, lo, hi, at;
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
      for (at = lo + t.lane; at < hi; at += t.lanes)
        p->kv_indices[at] = am_pool_entry(p, in_pool, row, s + (at - start), &flags);
    }
    /* the tables: every row of the request gets the request's entries */
    if (p->page_table || p->swa_page_table) {
      const int64_t ps = p->page_size;
      const int64_t pages = am_pool_row_entries(p, (tokens + ps - 1) / ps, p->page_width,
                                                t.lane, &flags);
      for (j = 0; j < live; ++j) {
        int32_t *out = p->page_table ? p->page_table + (e0 + j) * p->page_stride : 0;
        int32_t *swa = p->swa_page_table ? p->swa_page_table + (e0 + j) * p->swa_stride : 0;
        int64_t pg;
        for (pg = t.lane; pg < pages; pg += t.lanes) {
          if (out) out[pg] = am_pool_page(p, in_pool, row, s + pg * ps, 0, &flags);
          if (swa) swa[pg] = am_pool_page(p, in_pool, row, s + pg * ps, 1, &flags);
        }
      }
    }
    if (p->token_table) {
      const int64_t cols = am_pool_row_entries(p, tokens, p->token_width, t.lane, &flags);
      for (j = 0; j < live; ++j) {
        int32_t *out = p->token_table + (e0 + j) * p->token_stride;
        int64_t c;
        for (c = t.lane; c < cols; c += t.lanes) out[c] = am_pool_entry(p, in_pool, row, s + c, &flags);
      }
    }
  }
  if (flags && p->error_word) AM_ATOMIC_OR(p->error_word, flags);
}

#endif /* ATTNMETA_AM_POOL_KERNEL_H */
