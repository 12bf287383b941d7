// SPDX-License-Identifier: Apache-2.0
/*
 * The pool kernel's work split (am_pool_kernel.h): request rows cut into
 * slices copied by several groups and blocks, and the prefix sums the
 * threads of a block compute together over many requests, against the
 * naive reference through pool_run.h (every backend, poisoned outputs
 * between guard zones, the error word). The launch shapes are forced to
 * cut rows into many slices (grids of far more blocks than requests), to
 * give one-lane groups of whole blocks (more requests a pass than the
 * block-wide scan holds at once) and odd lane counts; the rows' lengths
 * are no multiple of a slice. Each case is checked with and without
 * hostile entries, so the error word must hold the same flags whatever
 * the split.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "attnmeta/attnmeta.h"
#include "cases.h"
#include "harness.h"
#include "pool_run.h"

/* {block, grid, stage, vector, lanes} */
static const amt_launch split_configs[] = {
    {"auto", {0, 0, -1, -1, 0}},
    {"grid2", {0, 2, -1, -1, 0}},
    {"grid7", {0, 7, -1, -1, 0}},
    {"grid64", {0, 64, -1, -1, 0}},
    {"grid301", {0, 301, -1, -1, 0}},
    {"block1_grid1000", {1, 1000, -1, -1, 0}},
    {"block32_lanes8_grid5", {32, 5, -1, -1, 8}},
    {"block256_lanes3_grid40", {256, 40, -1, -1, 3}},
    {"block1024_lanes1", {1024, 0, -1, -1, 1}},
    {"block1024_lanes1_grid3", {1024, 3, -1, -1, 1}},
    {"block512_lanes2_grid2", {512, 2, -1, -1, 2}},
    {"block96_lanes7_grid9", {96, 9, -1, -1, 7}},
    {"block64_lanes64_grid100", {64, 100, -1, -1, 64}},
};
#define SPLIT_CONFIGS ((int)(sizeof split_configs / sizeof split_configs[0]))

static uint64_t rng_state;
static int64_t rng_in(int64_t lo, int64_t hi) { /* [lo, hi], within int32 */
  return amt_rand_range(&rng_state, (int32_t)lo, (int32_t)hi);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  cr_assert(p, "out of memory");
  return p;
}

/* A pool of P rows of Wr slots (stride Wr + 3), entries in [0, 10^6), some
 * negative when hostile. */
static int32_t *make_pool(int32_t P, int32_t Wr, int hostile) {
  int32_t *pool = xmalloc((size_t)P * (size_t)(Wr + 3) * 4);
  int64_t i;
  for (i = 0; i < (int64_t)P * (Wr + 3); i++)
    pool[i] = hostile && rng_in(0, 499) == 0 ? -(int32_t)rng_in(1, 3) : (int32_t)rng_in(0, 999999);
  return pool;
}

/* kv_indptr as the cumulative sum of max(len, 0), one row shortened when hostile. */
static int32_t *make_indptr(const int64_t *len, int32_t B, int hostile) {
  int32_t *ip = xmalloc(((size_t)B + 1) * 4);
  int64_t i, sum = 0;
  ip[0] = 0;
  for (i = 0; i < B; i++) {
    sum += len[i] > 0 ? len[i] : 0;
    ip[i + 1] = (int32_t)sum;
  }
  if (hostile && B > 1) ip[B / 2] -= 5;
  return ip;
}

/* Three long rows (thousands of slots, none a multiple of 32), two table
 * rows a request: kv_indices placed by the scan or by kv_indptr, the page
 * and token tables, the lengths and the top-k scans. */
static void long_rows(int hostile, int by_indptr, int32_t page_size) {
  enum { B = 3, P = 4, WR = 9000 };
  static const int64_t lengths[B] = {8191, 37, 5003};
  int64_t rpi[B], st[B], sum = 0;
  int32_t *pool = make_pool(P, WR, hostile), *ip = make_indptr(lengths, B, hostile);
  pool_case c = pool_case_over(hostile ? "long_rows_hostile" : "long_rows", pool, P, WR, WR + 3,
                               rpi, lengths, B);
  int i;
  for (i = 0; i < B; i++) {
    rpi[i] = rng_in(0, P - 1);
    st[i] = rng_in(0, 7);
    sum += lengths[i];
  }
  if (hostile) rpi[1] = P; /* a pool row outside the pool */
  c.in.kv_start_idx = st;
  c.in.page_size = page_size;
  c.in.kv_indptr = by_indptr ? ip : NULL;
  c.in.capacity = sum - (hostile ? 100 : 0);
  c.in.page_width = (WR + page_size - 1) / page_size - (hostile ? 3 : 0);
  c.in.page_stride = c.in.page_width + 1;
  c.in.rows_per_req = 2;
  c.in.topk = 2048;
  c.in.token_width = WR - (hostile ? 2000 : 0);
  c.in.token_stride = c.in.token_width + 2;
  c.want = WANT_EVERY & ~(WANT_SWA | (by_indptr ? WANT_INDPTR : 0));
  pool_run_configs(&c, split_configs, SPLIT_CONFIGS);
  free(pool);
  free(ip);
}

Test(pool_split, long_rows, .timeout = 600) {
  rng_state = 0x9E3779B97F4A7C15ull;
  long_rows(0, 0, 1);
  long_rows(0, 1, 1);
  long_rows(0, 0, 3);
  long_rows(1, 0, 1);
  long_rows(1, 1, 5);
}

/* B requests of short rows (0 to 20 slots) over a small pool: the prefix
 * sums cross many passes of the grid-stride loop and, with one-lane
 * groups, more requests a pass than the scan holds. Query rows by
 * query_lens (some rows dropped past num_rows) or rows_per_req; kv_indices
 * placed by the scan or by kv_indptr. */
static void many_requests(int32_t B, int hostile, int with_query, int by_indptr) {
  enum { P = 50, WR = 24 };
  int64_t *rpi = xmalloc((size_t)B * 8), *len = xmalloc((size_t)B * 8),
          *st = xmalloc((size_t)B * 8), *q = xmalloc((size_t)B * 8), i, sum = 0, rows = 0;
  int32_t *pool = make_pool(P, WR, hostile), *ip;
  char name[64];
  pool_case c;
  for (i = 0; i < B; i++) {
    rpi[i] = rng_in(0, P - 1);
    len[i] = rng_in(0, 20);
    st[i] = rng_in(0, 3);
    q[i] = rng_in(0, 3);
    if (hostile && rng_in(0, 40) == 0) len[i] = -rng_in(1, 4);
    if (hostile && rng_in(0, 40) == 0) rpi[i] = -1;
    if (hostile && rng_in(0, 60) == 0) q[i] = -1;
    sum += len[i] > 0 ? len[i] : 0;
    rows += q[i] > 0 ? q[i] : 0;
  }
  ip = make_indptr(len, B, hostile);
  snprintf(name, sizeof name, "many_requests B=%d%s%s%s", B, hostile ? " hostile" : "",
           with_query ? " query_lens" : "", by_indptr ? " kv_indptr" : "");
  c = pool_case_over(name, pool, P, WR, WR + 3, rpi, len, B);
  c.in.kv_start_idx = st;
  c.in.page_size = 2;
  c.in.kv_indptr = by_indptr ? ip : NULL;
  c.in.capacity = sum;
  c.in.page_width = 12;
  c.in.page_stride = 13;
  c.in.topk = 7;
  c.in.token_width = 22;
  c.in.token_stride = 23;
  if (with_query) {
    c.in.query_lens = q;
    c.in.num_rows = (int32_t)(rows - (hostile ? 4 : 0));
  } else {
    c.in.rows_per_req = 1;
  }
  c.want = WANT_EVERY & ~(WANT_SWA | (by_indptr ? WANT_INDPTR : 0));
  pool_run_configs(&c, split_configs, SPLIT_CONFIGS);
  free(rpi);
  free(len);
  free(st);
  free(q);
  free(pool);
  free(ip);
}

Test(pool_split, many_requests, .timeout = 600) {
  rng_state = 0xC2B2AE3D27D4EB4Full;
  many_requests(300, 0, 0, 0);
  many_requests(1001, 1, 1, 0);
  many_requests(2000, 0, 1, 0);
  many_requests(777, 1, 0, 1);
  many_requests(2000, 1, 1, 1);
}
