// SPDX-License-Identifier: Apache-2.0
/*
 * EAGLE's multi-step draft decode lists (docs/contract.md section 14;
 * SGLang's generate_draft_decode_kv_indices), the pool operation's launch
 * when draft_steps >= 1. Written once in the dialect.
 *
 * Work split: as the pool's, a group of lanes owns request rows b = g,
 * g + G, ...; for each step i and branch k it copies the row's L tokens
 * and i + 1 draft slots at stride `lanes`. A row's places need the sums of
 * the lengths and of the positions of the rows before it: the threads of a
 * block compute them with the pool's block-wide scan (am_pool_scan.h), on
 * each pass of the grid-stride loop summing the rows since the block's
 * last pass (strided over the block), then scanning this pass's rows, so
 * a block reads each length and position O(1) times. Every thread reaches
 * every barrier (the passes and scans are block-uniform), and the places
 * of a row do not depend on the launch shape. The places of the rows
 * never meet, so no entry depends on the order they are written in.
 */
#ifndef ATTNMETA_AM_POOL_DRAFT_KERNEL_H
#define ATTNMETA_AM_POOL_DRAFT_KERNEL_H

#include "am_dialect.h"
#include "am_pool_entries.h"
#include "am_pool_params.h"
#include "am_pool_scan.h"

/* The sum of the lengths before a row is kept at most this: a row placed
 * past it lies past any accepted width (draft_kv_indices_width <= 2^40),
 * and no offset below overflows 64 bits. */
#define AM_POOL_DRAFT_SUM_CAP ((int64_t)1 << 40)

/* positions[z] read as int32; < 0 counts as 0 (flag 8). */
AM_DEVICE int64_t am_pool_draft_position(const am_pool_params *p, int64_t z, int32_t *flags) {
  const int32_t v = am_pool_low32(p->draft_positions[z]);
  if (v < 0) *flags |= AM_POOL_FLAG_LENGTH_NEGATIVE;
  return v > 0 ? v : 0;
}

/* The pool column of branch k's first draft slot, for a row of n tokens:
 * the branches' slots follow the row back to back with pages of 1 or one
 * branch; with pages, each branch owns whole pages after the row's last
 * full page, its slots starting at the same offset in its first page as
 * the row's partial page. */
AM_DEVICE int64_t am_pool_draft_first(const am_pool_params *p, int64_t n, int64_t k) {
  const int64_t ps = p->page_size, steps = p->draft_steps;
  int64_t last, pages;
  if (ps == 1 || p->draft_topk == 1) return n + k * steps;
  last = n % ps;
  pages = (last + steps + ps - 1) / ps;
  return n - last + k * pages * ps + last;
}

/* Every step's lists of request row b of n tokens, whose rows before it
 * hold `before` tokens (capped). */
AM_DEVICE void am_pool_draft_slots(const am_pool_params *p, am_thread t, uint32_t b, int64_t n,
                                   int64_t before, int32_t *flags) {
  const int64_t rp = p->req_pool_indices[b], K = p->draft_topk;
  const int in_pool = rp >= 0 && rp < p->pool_rows;
  const int32_t *row = in_pool && p->req_to_token ? p->req_to_token + rp * p->pool_stride : 0;
  int64_t i, k;
  for (i = 0; i < p->draft_steps; ++i) {
    int32_t *out = p->draft_indices + i * p->draft_indices_stride;
    const int64_t iters = i + 1;
    for (k = 0; k < K; ++k) {
      const int64_t off = before * K + (int64_t)b * iters * K + k * (n + iters);
      const int64_t first = am_pool_draft_first(p, n, k);
      const int64_t end = am_min64(off + n + iters, p->draft_width);
      int64_t at;
      if (off + n + iters > p->draft_width && t.lane == 0)
        *flags |= AM_POOL_FLAG_OUTSIDE_CAPACITY;
      for (at = off + t.lane; at < end; at += t.lanes) {
        const int64_t j = at - off;
        out[at] = am_pool_entry(p, in_pool, row, j < n ? j : first + (j - n), flags);
      }
    }
  }
}

/* Row r's terms for the rows after it: its length (max(L, 0)) in `sum`
 * and, with offsets, the sum of its K positions in `rows`. */
AM_DEVICE am_pool_prefix am_pool_draft_term(const am_pool_params *p, uint32_t r, int32_t *flags) {
  const int32_t l = am_pool_length(p, r);
  am_pool_prefix v = am_pool_none();
  int64_t k;
  v.sum = l > 0 ? l : 0;
  if (p->draft_indptr)
    for (k = 0; k < p->draft_topk; ++k)
      v.rows += am_pool_draft_position(p, (int64_t)r * p->draft_topk + k, flags);
  return v;
}

/* Row b's lists and offsets; `pre` joins the rows before it. */
AM_DEVICE void am_pool_draft_row(const am_pool_params *p, am_thread t, uint32_t b,
                                 am_pool_prefix pre, int32_t *flags) {
  const int32_t len = am_pool_length(p, b);
  const int64_t K = p->draft_topk;
  int64_t i, k;
  if (len < 0 && t.lane == 0) *flags |= AM_POOL_FLAG_LENGTH_NEGATIVE;
  if (p->draft_indices)
    am_pool_draft_slots(p, t, b, len > 0 ? len : 0, am_min64(pre.sum, AM_POOL_DRAFT_SUM_CAP),
                        flags);
  if (p->draft_indptr) {
    /* entry e = b * K + k + 1 of step i: the positions of the tokens
     * before e, and i + 1 slots for each of them */
    int64_t run = pre.rows;
    for (k = 0; k < K; ++k) {
      const int64_t e = (int64_t)b * K + k + 1;
      run += am_pool_draft_position(p, e - 1, flags);
      for (i = t.lane; i < p->draft_steps; i += t.lanes)
        p->draft_indptr[i * p->draft_indptr_stride + e] = am_pool_sum32(run + e * (i + 1), flags);
    }
  }
}

/* `scan`: the block-shared array of am_pool_scan. */
AM_DEVICE_OWN_FRAME void am_pool_draft_body(const am_pool_params *p, am_thread t,
                                         int64_t *scan) {
  const uint32_t stride = t.groups * t.grid_dim;
  const uint32_t num_reqs = (uint32_t)p->num_reqs;
  const uint32_t slots = t.block_dim < AM_POOL_SCAN_SLOTS ? t.block_dim : AM_POOL_SCAN_SLOTS;
  uint32_t first = t.block * t.groups; /* the block's first row of this pass */
  uint32_t summed = 0; /* the rows [0, summed) joined in `base` (block-uniform) */
  am_pool_prefix base = am_pool_none();
  int32_t flags = 0;
  int64_t i;
  if (p->draft_indptr && t.block == 0 && t.thread == 0)
    for (i = 0; i < p->draft_steps; ++i) p->draft_indptr[i * p->draft_indptr_stride] = 0;
  for (; first < num_reqs; first += stride) {
    const uint32_t b = first + t.group;
    const uint32_t w1 = num_reqs - first < t.groups ? num_reqs : first + t.groups;
    am_pool_prefix pre = am_pool_none();
    uint32_t r0;
    if (summed < first) { /* the rows since the last pass, strided over the block */
      const uint32_t used = first - summed < slots ? first - summed : slots;
      am_pool_prefix part = am_pool_none();
      uint32_t r;
      if (t.thread < slots)
        for (r = summed + t.thread; r < first; r += slots)
          part = am_pool_join(part, am_pool_draft_term(p, r, &flags));
      am_pool_scan(scan, t, used, part);
      base = am_pool_join(base, am_pool_read(scan, used - 1));
    }
    /* this pass's rows [first, w1), `slots` at a time */
    for (r0 = first; r0 < w1; r0 += slots) {
      const uint32_t used = w1 - r0 < slots ? w1 - r0 : slots;
      const uint32_t r = r0 + t.thread;
      am_pool_scan(scan, t, used,
                   t.thread < used ? am_pool_draft_term(p, r, &flags) : am_pool_none());
      if (b < w1 && b >= r0 && b - r0 < used)
        pre = am_pool_join(base, am_pool_before(scan, b - r0));
      base = am_pool_join(base, am_pool_read(scan, used - 1));
    }
    summed = w1;
    if (b < w1) am_pool_draft_row(p, t, b, pre, &flags);
  }
  if (flags && p->error_word) AM_ATOMIC_OR(p->error_word, flags);
}

#endif /* ATTNMETA_AM_POOL_DRAFT_KERNEL_H */
