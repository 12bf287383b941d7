// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta_build_pool_indices's slot list, its prefix sum and the padded
 * page table (SGLang contract sections 10 and 11) against the naive
 * reference, through pool_run.h (every backend, every launch
 * configuration, poisoned outputs between guard zones). The cases: a
 * hand-worked example (checked against numbers written here, the
 * reference on its own too), SGLang's own test of
 * create_flashinfer_kv_indices_triton re-expressed (an arange pool, distinct
 * random pool rows and lengths, B in {1, 37, 1786}, kv_indptr = cumsum),
 * random cases with hostile data (pool rows outside the pool, negative
 * lengths and entries, lengths with high bits, columns past the row, rows
 * outgrowing kv_indptr or the capacity, page rows past the width), the
 * scan's saturation, and every product subset.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "cases.h"
#include "harness.h"
#include "pool_run.h"

#define POISON POOL_POISON

/* ---- the hand-worked example ----
 * Pool rows r of 8 columns hold 100 r + c (row stride 10). B = 3: row 0
 * reads pool row 2 from column 0 for 3 tokens, row 1 pool row 1 from
 * column 1 for 5, row 2 pool row 0 for 0. kv_indptr = {0, 3, 8, 8}:
 *   kv_indices = 200 201 202 | 101 102 103 104 105
 * Pages of 2 (width 4): row 0, 3 tokens = 2 pages at columns 0, 2:
 * 200/2, 202/2 = 100 101; row 1, 5 tokens = 3 pages at columns 1, 3, 5:
 * 101/2, 103/2, 105/2 = 50 51 52; row 2 none. */
static int32_t worked_pool[30];
static const int64_t worked_rpi[3] = {2, 1, 0}, worked_len[3] = {3, 5, 0}, worked_st[3] = {0, 1, 0};
static const int32_t worked_ip[4] = {0, 3, 8, 8};
static const int32_t worked_indices[8] = {200, 201, 202, 101, 102, 103, 104, 105};
static const int32_t worked_pages[3][4] = {{100, 101, POISON, POISON}, {50, 51, 52, POISON},
                                           {POISON, POISON, POISON, POISON}};

static pool_case worked_case(int want, int scan) {
  pool_case c;
  int r, col;
  for (r = 0; r < 3; r++)
    for (col = 0; col < 10; col++) worked_pool[r * 10 + col] = col < 8 ? 100 * r + col : -7;
  c = pool_case_over("worked", worked_pool, 3, 8, 10, worked_rpi, worked_len, 3);
  c.in.kv_start_idx = worked_st;
  c.in.page_size = 2;
  c.in.kv_indptr = scan || ((want & WANT_INDICES) && (want & WANT_INDPTR)) ? NULL : worked_ip;
  c.in.capacity = 8;
  c.in.page_width = 4;
  c.in.page_stride = 4;
  c.want = want;
  return c;
}

Test(pool, reference_worked_example) {
  pool_case c = worked_case(WANT_INDICES | WANT_INDPTR | WANT_PAGES, 1);
  int32_t idx[8], ptr[4], pages[12], flags;
  int i;
  for (i = 0; i < 12; i++) pages[i] = POISON;
  amr_pool(&c.in, idx, ptr, pages, &flags);
  cr_expect(flags == 0, "flags 0x%x", (unsigned)flags);
  for (i = 0; i < 8; i++) cr_expect(idx[i] == worked_indices[i], "kv_indices[%d] = %d", i, idx[i]);
  for (i = 0; i < 4; i++) cr_expect(ptr[i] == worked_ip[i], "kv_indptr_out[%d] = %d", i, ptr[i]);
  for (i = 0; i < 12; i++)
    cr_expect(pages[i] == worked_pages[i / 4][i % 4], "page_table[%d][%d] = %d", i / 4, i % 4,
              pages[i]);
}

Test(pool, worked_example_every_subset) {
  int want;
  for (want = 1; want < 8; want++) {
    pool_case c = worked_case(want, 0);
    pool_run_everywhere(&c, 0);
    if (want & WANT_INDICES) {
      pool_case s = worked_case(want | WANT_INDPTR, 1); /* placed by the scan */
      pool_run_everywhere(&s, 0);
    }
  }
}

/* ---- random data (the case tables' generator, cases.h) ---- */
static uint64_t rng_state;
static int64_t rng_in(int64_t lo, int64_t hi) { /* [lo, hi], within int32 */
  return amt_rand_range(&rng_state, (int32_t)lo, (int32_t)hi);
}

/* k distinct values of [0, n), in random order (a partial Fisher-Yates). */
static void distinct(int64_t *out, int64_t k, int64_t n) {
  int64_t *all = malloc((size_t)n * 8), i;
  cr_assert(all);
  for (i = 0; i < n; i++) all[i] = i;
  for (i = 0; i < k; i++) {
    const int64_t j = rng_in(i, n - 1), t = all[i];
    all[i] = all[j];
    all[j] = t;
    out[i] = all[i];
  }
  free(all);
}

/* SGLang's test_create_kvindices: a MAX_BATCH x MAX_CONTEXT arange pool,
 * B distinct pool rows, B distinct lengths in [0, MAX_CONTEXT), kv_indptr
 * the cumulative sum; the slot list is the rows' prefixes one after
 * another. Checked here against that concatenation, and by run_everywhere
 * against the reference (given kv_indptr, and placed by the scan). */
static void sglang_case(int32_t batch) {
  enum { MAX_BATCH = 4096, MAX_CONTEXT = 4096 };
  int32_t *pool = malloc((size_t)MAX_BATCH * MAX_CONTEXT * 4), *ip = malloc(((size_t)batch + 1) * 4);
  int64_t *rpi = malloc((size_t)batch * 8), *len = malloc((size_t)batch * 8), i, j, at = 0;
  int32_t *concat, *got, flags;
  pool_case c;
  char name[64];
  cr_assert(pool && ip && rpi && len);
  for (i = 0; i < (int64_t)MAX_BATCH * MAX_CONTEXT; i++) pool[i] = (int32_t)i;
  rng_state = 0x9E3779B97F4A7C15ull ^ (uint64_t)batch;
  distinct(rpi, batch, MAX_BATCH);
  distinct(len, batch, MAX_CONTEXT);
  ip[0] = 0;
  for (i = 0; i < batch; i++) ip[i + 1] = ip[i] + (int32_t)len[i];
  concat = malloc((size_t)ip[batch] * 4 + 4);
  got = malloc((size_t)ip[batch] * 4 + 4);
  cr_assert(concat && got);
  for (i = 0; i < batch; i++)
    for (j = 0; j < len[i]; j++) concat[at++] = pool[rpi[i] * MAX_CONTEXT + j];
  snprintf(name, sizeof name, "sglang_create_kvindices_B%d", batch);
  c = pool_case_over(name, pool, MAX_BATCH, MAX_CONTEXT, MAX_CONTEXT, rpi, len, batch);
  c.in.kv_indptr = ip;
  c.in.capacity = ip[batch];
  c.want = WANT_INDICES;
  /* the reference meets the concatenation */
  amr_pool(&c.in, got, NULL, NULL, &flags);
  cr_assert(flags == 0 && memcmp(got, concat, (size_t)ip[batch] * 4) == 0,
            "%s: the reference is not the concatenation", name);
  cr_expect(pool_run_everywhere(&c, 1) == 0);
  c.in.kv_indptr = NULL;
  c.want = WANT_INDICES | WANT_INDPTR;
  cr_expect(pool_run_everywhere(&c, 1) == 0);
  free(pool);
  free(ip);
  free(rpi);
  free(len);
  free(concat);
  free(got);
}

Test(pool, sglang_create_kvindices, .timeout = 600) {
  sglang_case(1);
  sglang_case(37);
  sglang_case(1786);
}

/* Random requests over a small pool with every kind of hostile entry. */
static int32_t random_case(int seed) {
  const int32_t P = (int32_t)rng_in(1, 6), Wr = (int32_t)rng_in(0, 40);
  const int64_t stride = Wr + rng_in(0, 3);
  const int32_t B = (int32_t)rng_in(0, 40);
  int32_t *pool = malloc((size_t)(P * stride + 1) * 4), *ip = malloc(((size_t)B + 1) * 4);
  int64_t *rpi = malloc((size_t)B * 8 + 8), *len = malloc((size_t)B * 8 + 8),
          *st = malloc((size_t)B * 8 + 8), i, sum = 0;
  const int hostile = seed % 3 != 0, with_start = seed % 2 == 1;
  pool_case c;
  char name[64];
  int32_t flags;
  cr_assert(pool && ip && rpi && len && st);
  for (i = 0; i < P * stride; i++)
    pool[i] = hostile && rng_in(0, 15) == 0 ? -(int32_t)rng_in(1, 3) : (int32_t)rng_in(0, 100000);
  for (i = 0; i < B; i++) {
    rpi[i] = rng_in(0, P - 1);
    len[i] = rng_in(0, Wr + 2);
    st[i] = with_start ? rng_in(0, 4) : 0;
    if (hostile) {
      switch (rng_in(0, 11)) {
      case 0: rpi[i] = -1; break;
      case 1: rpi[i] = P; break;
      case 2: rpi[i] = (int64_t)1 << 40; break;
      case 3: len[i] = -(int64_t)rng_in(1, 5); break;
      case 4: len[i] = ((int64_t)1 << 32) + rng_in(0, 5); break; /* read as its low 32 bits */
      case 5: st[i] = -(int64_t)rng_in(1, 5); break;
      case 6: st[i] = Wr + rng_in(-2, 3); break;
      case 7: st[i] = ((int64_t)1 << 33) + 1; break; /* read as 1 */
      default: break;
      }
    }
  }
  ip[0] = (int32_t)(hostile && seed % 5 == 1 ? rng_in(-3, 3) : 0);
  for (i = 0; i < B; i++) {
    const int32_t l = (int32_t)(uint32_t)(uint64_t)len[i];
    int32_t gap = l > 0 ? l : 0;
    if (hostile && rng_in(0, 9) == 0) gap += (int32_t)rng_in(-3, 2); /* rows outgrowing their place */
    ip[i + 1] = ip[i] + gap;
    sum += l > 0 ? l : 0;
  }
  snprintf(name, sizeof name, "random_%d", seed);
  c = pool_case_over(name, pool, P, Wr, stride, rpi, len, B);
  c.in.kv_start_idx = with_start ? st : NULL;
  c.in.page_size = (int32_t)(1 << rng_in(0, 3)) + (seed % 7 == 3); /* 3, 5 and 9 too */
  c.in.kv_indptr = ip;
  c.in.capacity = sum + (hostile ? rng_in(-6, 4) : 0);
  if (c.in.capacity < 0) c.in.capacity = 0;
  c.in.page_width = (int32_t)rng_in(0, 6);
  c.in.page_stride = c.in.page_width + rng_in(0, 2);
  c.want = (int)rng_in(1, 7);
  if ((c.want & WANT_INDPTR) && (c.want & WANT_INDICES)) c.in.kv_indptr = NULL;
  flags = pool_run_everywhere(&c, 0);
  free(pool);
  free(ip);
  free(rpi);
  free(len);
  free(st);
  return flags;
}

/* Every flag the operation raises is met by some case (else a case that
 * should meet it does not). */
Test(pool, random_hostile) {
  const int32_t every = ATTNMETA_FLAG_QSL_DECREASING | ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE |
                        ATTNMETA_FLAG_SEQ_LEN_NEGATIVE | ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE |
                        ATTNMETA_FLAG_BLOCK_ID_NEGATIVE | ATTNMETA_FLAG_POOL_INDEX_OUT_OF_RANGE;
  int32_t met = 0;
  int seed;
  for (seed = 1; seed <= 60; seed++) {
    rng_state = 0xD1B54A32D192ED03ull ^ (uint64_t)seed;
    met |= random_case(seed);
  }
  cr_expect(met == every, "flags met 0x%x of 0x%x", (unsigned)met, (unsigned)every);
}

/* Lengths summing past INT32_MAX: kv_indptr_out saturates with flag 2048;
 * the slots placed past the capacity are dropped with flag 4. */
Test(pool, scan_saturates) {
  static int32_t pool[4] = {1, 2, 3, 4};
  static const int64_t rpi[4] = {0, 0, 0, 0};
  static const int64_t len[4] = {INT32_MAX - 5, 4, 3, 2};
  pool_case c;
  int32_t flags;
  c = pool_case_over("scan_saturates", pool, 1, 4, 4, rpi, len, 4);
  c.in.capacity = 0;
  c.in.page_width = 0;
  c.in.page_stride = 0;
  c.want = WANT_INDPTR;
  flags = pool_run_everywhere(&c, 0);
  cr_expect(flags == ATTNMETA_FLAG_SCAN_OVERFLOW, "flags 0x%x", (unsigned)flags);
  c.want = WANT_INDPTR | WANT_INDICES;
  c.in.capacity = 16; /* row 0 has columns past the pool row; rows 1.. start past C */
  flags = pool_run_everywhere(&c, 1);
  cr_expect(flags == (ATTNMETA_FLAG_SCAN_OVERFLOW | ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE |
                      ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE),
            "flags 0x%x", (unsigned)flags);
}

/* No request rows: kv_indptr_out[0] = 0 and nothing else. */
Test(pool, no_rows) {
  pool_case c = pool_case_over("no_rows", NULL, 0, 0, 0, NULL, NULL, 0);
  c.want = WANT_INDPTR | WANT_INDICES | WANT_PAGES;
  pool_run_everywhere(&c, 0);
  c.want = WANT_PAGES;
  pool_run_everywhere(&c, 0);
}
