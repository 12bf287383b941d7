// SPDX-License-Identifier: Apache-2.0
/*
 * The block-wide prefix sum of the pool operation's kernels
 * (am_pool_kernel.h, am_pool_draft_kernel.h): a doubling scan of the
 * requests' terms in block-shared memory. Written once in the dialect.
 */
#ifndef ATTNMETA_AM_POOL_SCAN_H
#define ATTNMETA_AM_POOL_SCAN_H

#include "am_dialect.h"

/* Threads of a block that take part in the prefix sums (the block-shared
 * scan holds one entry of each sum a thread). */
#define AM_POOL_SCAN_SLOTS 256

/* What the requests before a request add up to: the sum of their lengths
 * (max(L, 0)), of their rows, of their rows' clipped lengths, and the
 * largest of their kv_indptr entries (INT64_MIN for none). The draft
 * lists keep the sum of their positions in `rows`. */
typedef struct am_pool_prefix {
  int64_t sum, rows, clipped, top;
} am_pool_prefix;

AM_DEVICE am_pool_prefix am_pool_none(void) {
  am_pool_prefix z;
  z.sum = 0;
  z.rows = 0;
  z.clipped = 0;
  z.top = INT64_MIN;
  return z;
}

AM_DEVICE am_pool_prefix am_pool_join(am_pool_prefix a, am_pool_prefix b) {
  a.sum += b.sum;
  a.rows += b.rows;
  a.clipped += b.clipped;
  a.top = am_max64(a.top, b.top);
  return a;
}

AM_DEVICE void am_pool_post(int64_t *scan, uint32_t slot, am_pool_prefix v) {
  scan[slot] = v.sum;
  scan[AM_POOL_SCAN_SLOTS + slot] = v.rows;
  scan[2 * AM_POOL_SCAN_SLOTS + slot] = v.clipped;
  scan[3 * AM_POOL_SCAN_SLOTS + slot] = v.top;
}

AM_DEVICE am_pool_prefix am_pool_read(const int64_t *scan, uint32_t slot) {
  am_pool_prefix v;
  v.sum = scan[slot];
  v.rows = scan[AM_POOL_SCAN_SLOTS + slot];
  v.clipped = scan[2 * AM_POOL_SCAN_SLOTS + slot];
  v.top = scan[3 * AM_POOL_SCAN_SLOTS + slot];
  return v;
}

/* The inclusive scan of the threads' `v` over slots [0, used), in
 * block-shared `scan` (thread k < used posts slot k): afterwards slot k
 * holds the join of slots 0..k. Doubling steps, each a read and a write
 * between barriers; `used` (<= AM_POOL_SCAN_SLOTS) is block-uniform, and
 * every thread of the block must call this. The first barrier lets every
 * read of the previous scan finish before this one writes. */
AM_DEVICE void am_pool_scan(int64_t *scan, am_thread t, uint32_t used, am_pool_prefix v) {
  const int mine = t.thread < used;
  uint32_t d;
  AM_BARRIER();
  if (mine) am_pool_post(scan, t.thread, v);
  for (d = 1; d < used; d <<= 1) {
    const int takes = mine && t.thread >= d;
    am_pool_prefix x = am_pool_none();
    AM_BARRIER();
    if (takes) x = am_pool_read(scan, t.thread - d);
    AM_BARRIER();
    if (takes) {
      v = am_pool_join(x, v);
      am_pool_post(scan, t.thread, v);
    }
  }
  AM_BARRIER();
}

/* The join of slots [0, k) of a finished scan. */
AM_DEVICE am_pool_prefix am_pool_before(const int64_t *scan, uint32_t k) {
  return k == 0 ? am_pool_none() : am_pool_read(scan, k - 1);
}

#endif /* ATTNMETA_AM_POOL_SCAN_H */
