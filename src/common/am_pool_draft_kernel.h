// SPDX-License-Identifier: Apache-2.0
/*
 * EAGLE's multi-step draft decode lists (docs/contract.md section 14;
 * SGLang's generate_draft_decode_kv_indices), the pool operation's launch
 * when draft_steps >= 1. Written once in the dialect.
 *
 * Work split: as the pool's, a group of lanes owns request rows b = g,
 * g + G, ...; for each step i and branch k it copies the row's L tokens
 * and i + 1 draft slots at stride `lanes`. Each thread keeps the sums of
 * the lengths and of the positions of the rows before its own (each read
 * at most once a thread), so the places of a row do not depend on the
 * launch shape. The places of the rows never meet, so no entry depends on
 * the order they are written in.
 */
#ifndef ATTNMETA_AM_POOL_DRAFT_KERNEL_H
#define ATTNMETA_AM_POOL_DRAFT_KERNEL_H

#include "am_dialect.h"
#include "am_pool_entries.h"
#include "am_pool_params.h"

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

AM_DEVICE void am_pool_draft_body(const am_pool_params *p, am_thread t) {
  const uint32_t groups = t.groups * t.grid_dim;
  const uint32_t num_reqs = (uint32_t)p->num_reqs;
  const int64_t K = p->draft_topk;
  uint32_t b = t.block * t.groups + t.group;
  uint32_t summed = 0; /* rows whose lengths are in `before`: [0, summed) */
  int64_t before = 0, placed = 0, positions = 0; /* positions: the sum of [0, placed) */
  int32_t flags = 0;
  int64_t i, k;
  if (p->draft_indptr && t.block == 0 && t.thread == 0)
    for (i = 0; i < p->draft_steps; ++i) p->draft_indptr[i * p->draft_indptr_stride] = 0;
  for (; b < num_reqs; b += groups) {
    const int32_t len = am_pool_length(p, b);
    if (len < 0 && t.lane == 0) flags |= AM_POOL_FLAG_LENGTH_NEGATIVE;
    if (p->draft_indices) {
      for (; summed < b; ++summed) {
        const int32_t l = am_pool_length(p, summed);
        before = am_min64(before + (l > 0 ? l : 0), AM_POOL_DRAFT_SUM_CAP);
      }
      am_pool_draft_slots(p, t, b, len > 0 ? len : 0, before, &flags);
    }
    if (p->draft_indptr) {
      /* entry e = b * K + k + 1 of step i: the positions of the tokens
       * before e, and i + 1 slots for each of them */
      int64_t run;
      for (; placed < (int64_t)b * K; ++placed) positions += am_pool_draft_position(p, placed, &flags);
      run = positions;
      for (k = 0; k < K; ++k) {
        const int64_t e = (int64_t)b * K + k + 1;
        run += am_pool_draft_position(p, e - 1, &flags);
        for (i = t.lane; i < p->draft_steps; i += t.lanes)
          p->draft_indptr[i * p->draft_indptr_stride + e] = am_pool_sum32(run + e * (i + 1), &flags);
      }
    }
  }
  if (flags && p->error_word) AM_ATOMIC_OR(p->error_word, flags);
}

#endif /* ATTNMETA_AM_POOL_DRAFT_KERNEL_H */
