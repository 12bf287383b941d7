// SPDX-License-Identifier: Apache-2.0
/*
 * The kernel body of the pool operation (attnmeta_build_pool_indices,
 * docs/c_api.md "SGLang's request pool"): SGLang's index buffers from its
 * request pool req_to_token. Written once in the dialect; CUDA, HIP and the
 * CPU backend run this code.
 *
 * Work split: a work item is one column slice of one request row: request
 * b's row is cut into C = row_chunks slices (the planner's choice, the same
 * C for every request), item b * C + c its slice c. A group of `lanes`
 * threads (the block's x dimension) owns an item and copies the slice's
 * slots (kv_indices) and pages or tokens (page_table, swa_page_table,
 * token_table, for every table row of the request) at stride `lanes`; the
 * item of slice 0 also writes the request's scalars (kv_indptr_out,
 * query_indptr_out, cache_seqlens, expanded_lens, topk_lens, topk_indptr)
 * and raises the request's own flags. The groups of a block take
 * consecutive items, blocks take the next ones grid-stride.
 *
 * kv_indptr_out needs every row's start, the sum of max(lengths, 0) of the
 * rows before it, in the same launch without a grid-wide barrier. The
 * threads of a block compute it together: on each pass of the grid-stride
 * loop they sum the requests between the block's last pass and this one
 * (strided over the block), then scan the requests of this pass's items in
 * block-shared memory, so a block reads each length O(1) times in all.
 * The other scans ride along: the rows of the requests before
 * (query_indptr_out, and the first row of a request with query_lens), the
 * clipped lengths of those rows (topk_indptr) and, where kv_indptr places
 * the rows, the largest kv_indptr entry before a row. Sums run in 64 bits.
 * Every thread reaches every barrier: the passes, scans and their steps
 * are block-uniform. The answer depends on neither C nor the launch shape.
 */
#ifndef ATTNMETA_AM_POOL_KERNEL_H
#define ATTNMETA_AM_POOL_KERNEL_H

#include "am_dialect.h"
#include "am_pool_dcp.h"
#include "am_pool_draft_kernel.h"
#include "am_pool_entries.h"
#include "am_pool_params.h"
#include "am_pool_scan.h"

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

/* Sum of x mod Q over x in [0, m), m >= 0. */
AM_DEVICE int64_t am_pool_mod_sum(int64_t m, int64_t Q) {
  const int64_t r = m % Q;
  return m / Q * (Q * (Q - 1) / 2) + r * (r - 1) / 2;
}

/* The clipped lengths of the q rows of a request of n tokens, summed: the
 * rows see x = n - q + 1 .. n tokens (those <= 0 clip to 0). In closed
 * form, since q comes from device data (up to INT32_MAX rows): with Q =
 * max(topk_pool, 1), a row of x < X0 = (K / Q + 1) * Q keeps x, a row of
 * x >= X0 keeps K + x mod Q (am_pool_clip). All terms fit in 64 bits. */
AM_DEVICE int64_t am_pool_clip_sum(const am_pool_params *p, int64_t n, int64_t q) {
  const int64_t Q = p->topk_pool > 1 ? p->topk_pool : 1, K = p->topk;
  const int64_t x0 = (K / Q + 1) * Q, lo = am_max64(n - q + 1, 1);
  const int64_t mid = am_min64(n, x0 - 1), hi_lo = am_max64(lo, x0);
  int64_t sum = 0;
  if (mid >= lo) sum += (lo + mid) * (mid - lo + 1) / 2;
  if (n >= hi_lo)
    sum += K * (n - hi_lo + 1) + am_pool_mod_sum(n + 1, Q) - am_pool_mod_sum(hi_lo, Q);
  return sum;
}


/* Page pg of a row: its first token's slot v, as a page (v / ps) or
 * through the full-to-SWA map (S[v] / ps); -1 with a flag for a bad slot. */
AM_DEVICE int32_t am_pool_page(const am_pool_params *p, int dcp, int in_pool, const int32_t *row,
                               int64_t col, int swa, int32_t *flags) {
  int32_t bad = 0;
  const int32_t v = am_pool_entry(p, in_pool, row, col, &bad);
  int64_t w = v;
  if (!bad && v < 0) bad = AM_POOL_FLAG_ENTRY_NEGATIVE;
  if (!bad && dcp) w = am_pool_dcp_local(p, v); /* never with swa */
  if (!bad && swa) {
    if (v >= p->swa_map_len) bad = AM_POOL_FLAG_COLUMN_OUTSIDE;
    else if ((w = p->full_to_swa[v]) < 0) bad = AM_POOL_FLAG_ENTRY_NEGATIVE;
    else if (w / p->page_size > INT32_MAX) bad = AM_POOL_FLAG_SLOT_OUTSIDE;
  }
  *flags |= bad;
  if (bad) return -1;
  /* a 32-bit division where the slot fits (every pool entry does): a
   * 64-bit one is a long instruction sequence on the GPUs */
  if (w <= INT32_MAX) return (int32_t)((uint32_t)w / (uint32_t)p->page_size);
  return (int32_t)(w / p->page_size);
}

/* How many entries a table row gets: all `width` of them (fill_to_width),
 * or the live `n` kept inside the width (a flag from the request's lead
 * thread when it is not). */
AM_DEVICE int64_t am_pool_row_entries(const am_pool_params *p, int64_t n, int64_t width,
                                      int lead, int32_t *flags) {
  if (p->fill_to_width) return width;
  if (n > width) {
    if (lead) *flags |= AM_POOL_FLAG_COLUMN_OUTSIDE;
    return width;
  }
  return n;
}

/* Slice c of `chunks` of the entries [lo, hi): [*from, *to), slices of a
 * multiple of 32 entries (whole 128-byte lines), the last ones empty when
 * there are few entries. */
AM_DEVICE void am_pool_slice(int64_t lo, int64_t hi, uint32_t c, uint32_t chunks, int64_t *from,
                             int64_t *to) {
  const int64_t n = hi > lo ? hi - lo : 0;
  /* 32-bit division where the sum fits (always, for the rows the host
   * checks): a 64-bit one is a long instruction sequence on the GPUs */
  const int64_t up = n + chunks - 1;
  const int64_t share = up <= UINT32_MAX ? (int64_t)((uint32_t)up / chunks) : up / chunks;
  const int64_t span = (share + 31) / 32 * 32;
  *from = lo + am_min64(n, (int64_t)c * span);
  *to = lo + am_min64(n, (int64_t)(c + 1) * span);
}

/* Request r's own terms; `top` only where kv_indptr places the rows. */
AM_DEVICE am_pool_prefix am_pool_term(const am_pool_params *p, uint32_t r, int tops) {
  const int32_t l = am_pool_length(p, r);
  am_pool_prefix v;
  v.sum = l > 0 ? l : 0;
  v.rows = am_pool_rows(p, r);
  v.clipped = p->topk_indptr ? am_pool_clip_sum(p, v.sum, v.rows) : 0;
  v.top = tops ? p->kv_indptr[r] : INT64_MIN;
  return v;
}

/* Item `item` (request b, slice c): its scalars (slice 0), its slice of
 * kv_indices and of every table row. `pre` joins the requests before b;
 * `dcp` (dcp_world > 1) is a constant at each call. */
AM_DEVICE void am_pool_item(const am_pool_params *p, int dcp, am_thread t, uint32_t b,
                            uint32_t c, uint32_t chunks, am_pool_prefix pre, int32_t *flags_out) {
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
  /* the request's own flags and scalars: one thread of slice 0 */
  const int lead = c == 0 && t.lane == 0;
  const int64_t sum = pre.sum;
  int32_t flags = 0;
  int64_t e0, live, j, from, to; /* the request's first row; its rows inside [0, T) */
  if (len < 0 && lead) flags |= AM_POOL_FLAG_LENGTH_NEGATIVE;
  if (p->query_lens && am_pool_low32(p->query_lens[b]) < 0 && lead)
    flags |= AM_POOL_FLAG_LENGTH_NEGATIVE;
  /* query_rows: one table row per request, q still counted by query_indptr_out */
  e0 = p->query_rows ? (int64_t)b : p->query_lens ? pre.rows : (int64_t)b * q;
  live = p->query_rows ? 1 : am_max64(am_min64(q, (int64_t)p->num_rows - e0), 0);
  if (live < q && !p->query_rows && lead) flags |= AM_POOL_FLAG_OUTSIDE_CAPACITY;
  if (lead) {
    int64_t run = pre.clipped; /* the clipped lengths of the rows before e0 + j */
    if (p->kv_indptr_out) p->kv_indptr_out[b + 1] = am_pool_sum32(sum + n, &flags);
    if (p->query_indptr_out) p->query_indptr_out[b + 1] = am_pool_sum32(pre.rows + q, &flags);
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
      start = p->kv_indptr[b];
      lo = am_max64(pre.top, start);
      lim = am_min64(start + n, next);
      if (n > 0 && (lo > start || lim < start + n) && lead) flags |= AM_POOL_FLAG_INDPTR_SHORT;
    }
    if (lo < lim && (lo < 0 || lim > p->capacity) && lead) flags |= AM_POOL_FLAG_OUTSIDE_CAPACITY;
    hi = am_min64(lim, p->capacity);
    lo = am_max64(lo, 0);
    am_pool_slice(lo, hi, c, chunks, &from, &to);
    for (at = from + t.lane; at < to; at += t.lanes)
      p->kv_indices[at] = am_pool_dcp_slot(p, dcp, in_pool, row, s, at - start, &flags);
  }
  /* the tables: every row of the request gets the request's entries */
  if (p->page_table || p->swa_page_table) {
    const int64_t ps = p->page_size;
    /* tokens <= INT32_MAX and ps <= INT32_MAX: the sum fits 32 bits unsigned */
    const int64_t pages = am_pool_row_entries(p, (uint32_t)(tokens + ps - 1) / (uint32_t)ps,
                                              p->page_width, lead, &flags);
    am_pool_slice(0, pages, c, chunks, &from, &to);
    for (j = 0; j < live; ++j) {
      int32_t *out = p->page_table ? p->page_table + (e0 + j) * p->page_stride : 0;
      int32_t *swa = p->swa_page_table ? p->swa_page_table + (e0 + j) * p->swa_stride : 0;
      int64_t pg;
      for (pg = from + t.lane; pg < to; pg += t.lanes) {
        const int64_t col = am_pool_dcp_column(p, dcp, s, pg * ps);
        if (out) out[pg] = am_pool_page(p, dcp, in_pool, row, col, 0, &flags);
        if (swa) swa[pg] = am_pool_page(p, dcp, in_pool, row, col, 1, &flags);
      }
    }
  }
  if (p->token_table) {
    const int64_t cols = am_pool_row_entries(p, tokens, p->token_width, lead, &flags);
    am_pool_slice(0, cols, c, chunks, &from, &to);
    for (j = 0; j < live; ++j) {
      int32_t *out = p->token_table + (e0 + j) * p->token_stride;
      int64_t k;
      for (k = from + t.lane; k < to; k += t.lanes)
        out[k] = am_pool_dcp_slot(p, dcp, in_pool, row, s, k, &flags);
    }
  }
  *flags_out |= flags;
}

/* The pool operation's products but the draft lists. */
AM_DEVICE_OWN_FRAME void am_pool_rows_body(const am_pool_params *p, am_thread t, int64_t *scan) {
  const uint32_t num_reqs = (uint32_t)p->num_reqs;
  const uint32_t chunks = p->row_chunks > 1 ? (uint32_t)p->row_chunks : 1;
  /* the host keeps num_reqs x row_chunks <= 2^31 and grid x block <= 2^31:
   * an item below 2^31 plus the stride stays below 2^32 */
  const uint32_t items = num_reqs * chunks;
  const uint32_t stride = t.groups * t.grid_dim;
  const uint32_t slots = t.block_dim < AM_POOL_SCAN_SLOTS ? t.block_dim : AM_POOL_SCAN_SLOTS;
  const int tops = p->kv_indices && !p->kv_indptr_out; /* kv_indptr places the rows */
  const int scan_needed =
      p->kv_indptr_out || p->topk_indptr || p->query_lens || p->query_indptr_out || tops;
  uint32_t first = t.block * t.groups; /* the block's first item of this pass */
  /* the requests [0, summed) joined in `base` (block-uniform) */
  uint32_t summed = 0;
  am_pool_prefix base = am_pool_none();
  int32_t flags = 0;
  if (t.block == 0 && t.thread == 0) {
    if (p->kv_indptr_out) p->kv_indptr_out[0] = 0;
    if (p->topk_indptr) p->topk_indptr[0] = 0;
    if (p->query_indptr_out) p->query_indptr_out[0] = 0;
  }
  for (; first < items; first += stride) {
    const uint32_t item = first + t.group;
    const uint32_t last = (first + t.groups < items ? first + t.groups : items) - 1;
    /* the requests of this pass's items: [w0, w1), w0 >= summed */
    const uint32_t w0 = first / chunks, w1 = last / chunks + 1;
    const uint32_t b = item / chunks;
    am_pool_prefix pre = am_pool_none();
    if (scan_needed) {
      uint32_t r0;
      if (summed < w0) { /* the requests since the last pass, strided over the block */
        am_pool_prefix part = am_pool_none();
        uint32_t r;
        if (t.thread < slots)
          for (r = summed + t.thread; r < w0; r += slots) part = am_pool_join(part, am_pool_term(p, r, tops));
        am_pool_scan(scan, t, w0 - summed < slots ? w0 - summed : slots, part);
        base = am_pool_join(base, am_pool_read(scan, (w0 - summed < slots ? w0 - summed : slots) - 1));
        summed = w0;
      }
      /* this pass's requests, `slots` at a time; the last one may go on in
       * the next pass, so `base` stops before it */
      for (r0 = w0; r0 < w1; r0 += slots) {
        const uint32_t used = w1 - r0 < slots ? w1 - r0 : slots;
        const uint32_t r = r0 + t.thread;
        am_pool_scan(scan, t, used, t.thread < used ? am_pool_term(p, r, tops) : am_pool_none());
        if (item < items && b >= r0 && b - r0 < used)
          pre = am_pool_join(base, am_pool_before(scan, b - r0));
        base = am_pool_join(base, am_pool_before(scan, used == w1 - r0 ? used - 1 : used));
      }
      summed = w1 - 1;
    }
    if (item < items) {
      if (p->dcp_world > 1) am_pool_item(p, 1, t, b, item % chunks, chunks, pre, &flags);
      else am_pool_item(p, 0, t, b, item % chunks, chunks, pre, &flags);
    }
  }
  if (flags && p->error_word) AM_ATOMIC_OR(p->error_word, flags);
}

AM_DEVICE void am_pool_body(const am_pool_params *p, am_thread t) {
  AM_SHARED_ARRAY(int64_t, scan, 4 * AM_POOL_SCAN_SLOTS);
  if (p->draft_steps > 0) am_pool_draft_body(p, t, scan); /* built alone */
  else am_pool_rows_body(p, t, scan);
}

#endif /* ATTNMETA_AM_POOL_KERNEL_H */
