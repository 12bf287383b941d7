// SPDX-License-Identifier: Apache-2.0
/*
 * The pool operation's page tables with cumulative lengths (contract
 * section 12: FA3, TRT-LLM MHA) and DSA metadata (section 13: decode and
 * target verify, draft-extend) against the naive reference, through pool_run.h (every
 * backend, every launch configuration, poisoned outputs between guard
 * zones). The cases: hand-worked examples (checked against numbers
 * written here), SGLang's test of normal_decode_set_metadata re-expressed
 * (older full-width and newest live-prefix forms, page sizes 1 to 128,
 * with and without SWA and a delta), the CUDA-graph padding rows, random
 * cases with hostile data and every product subset, the top-k scan's
 * saturation, and no rows.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "cases.h"
#include "harness.h"
#include "pool_run.h"

#define P_ POOL_POISON

static uint64_t rng_state;
static int64_t rng_in(int64_t lo, int64_t hi) { /* [lo, hi], within int32 */
  return amt_rand_range(&rng_state, (int32_t)lo, (int32_t)hi);
}

static void expect_same(const int32_t *got, const int32_t *want, int64_t n, const char *what) {
  int64_t i;
  for (i = 0; i < n; i++)
    cr_expect(got[i] == want[i], "%s[%lld] = %d, expected %d", what, (long long)i, got[i], want[i]);
}

/* Pool rows r of 8 columns hold 100 r + c. */
static int32_t small_pool[3 * 8];
static void fill_small_pool(void) {
  int r, c;
  for (r = 0; r < 3; r++)
    for (c = 0; c < 8; c++) small_pool[r * 8 + c] = 100 * r + c;
}

static pool_case small_case(const char *name, const int64_t *rpi, const int64_t *len, int32_t B) {
  pool_case c;
  fill_small_pool();
  c = pool_case_over(name, small_pool, 3, 8, 8, rpi, len, B);
  return c;
}

/* ---- section 12, worked: B = 2, pool rows {2, 0}, lengths {3, 5} + delta 1
 * = {4, 6}; cu_seqlens_k {0, 4, 10}. Pages of 2, width 3: row 0 reads
 * columns 0, 2 of pool row 2: 200/2, 202/2 = 100 101; row 1 columns 0, 2, 4
 * of pool row 0: 0 1 2. fill_to_width adds row 0's column 4: 204/2 = 102.
 * SWA through S[v] = v + 1000: 600 601 | 500 501 502. */
static const int64_t w12_rpi[2] = {2, 0}, w12_len[2] = {3, 5};
static int64_t w12_swa[300];

static pool_case w12_case(int fill) {
  pool_case c = small_case(fill ? "worked_12_fill" : "worked_12", w12_rpi, w12_len, 2);
  int i;
  for (i = 0; i < 300; i++) w12_swa[i] = i + 1000;
  c.in.length_delta = 1;
  c.in.page_size = 2;
  c.in.page_width = 3;
  c.in.page_stride = 4;
  c.in.swa_stride = 3;
  c.in.full_to_swa = w12_swa;
  c.in.swa_map_len = 300;
  c.in.fill_to_width = fill;
  c.want = WANT_INDPTR | WANT_LENS | WANT_PAGES | WANT_SWA;
  return c;
}

Test(pool_metadata, worked_section_12) {
  static const int32_t lens[2] = {4, 6}, cu[3] = {0, 4, 10};
  static const int32_t pages[8] = {100, 101, P_, P_, 0, 1, 2, P_};
  static const int32_t pages_fill[8] = {100, 101, 102, P_, 0, 1, 2, P_};
  static const int32_t swa[6] = {600, 601, P_, 500, 501, 502};
  int fill;
  for (fill = 0; fill < 2; fill++) {
    const pool_case c = w12_case(fill);
    const pool_want want[POOL_OUTPUTS] = {[OUT_LENS] = {lens, 2},
                                          [OUT_INDPTR] = {cu, 3},
                                          [OUT_PAGES] = {fill ? pages_fill : pages, 8},
                                          [OUT_SWA] = {fill ? NULL : swa, 6}};
    pool_expect_reference(&c, want);
    cr_expect(pool_run_everywhere(&c, 0) == 0);
  }
}

/* ---- section 13, worked target verify: next_n = 2 rows a request, topk 3,
 * pool rows {1, 2}, seq_lens {2, 4} + next_n = {4, 6}. Rows see
 * {3, 4 | 5, 6} tokens, clipped {3, 3 | 3, 3}, their sum {0, 3, 6, 9, 12}.
 * The tables read min(L, 5) tokens (max_len 5): token rows 100..103 (twice)
 * and 200..204 (twice); pages of 2: 50 51 (twice), 100 101 102 (twice).
 * With pools of 2 tokens the clipped lengths are {3, 3 | 4, 3}. */
static const int64_t w13_rpi[2] = {1, 2}, w13_len[2] = {2, 4};

static pool_case w13_case(int32_t kpool) {
  pool_case c = small_case(kpool > 1 ? "worked_13_kpool" : "worked_13", w13_rpi, w13_len, 2);
  c.in.length_delta = 2;
  c.in.rows_per_req = 2;
  c.in.topk = 3;
  c.in.topk_pool = kpool;
  c.in.length_cap = 5;
  c.in.token_width = 5;
  c.in.token_stride = 6;
  c.in.page_size = 2;
  c.in.page_width = 3;
  c.in.page_stride = 3;
  c.want = WANT_INDPTR | WANT_LENS | WANT_EXPANDED | WANT_TOPK_LENS | WANT_TOPK_INDPTR |
           WANT_TOKENS | WANT_PAGES;
  return c;
}

Test(pool_metadata, worked_section_13) {
  static const int32_t lens[2] = {4, 6}, cu[3] = {0, 4, 10}, seen[4] = {3, 4, 5, 6};
  static const int32_t clipped[2][4] = {{3, 3, 3, 3}, {3, 3, 4, 3}};
  static const int32_t sums[2][5] = {{0, 3, 6, 9, 12}, {0, 3, 6, 10, 13}};
  static const int32_t tokens[24] = {100, 101, 102, 103, P_, P_, 100, 101, 102, 103, P_, P_,
                                     200, 201, 202, 203, 204, P_, 200, 201, 202, 203, 204, P_};
  static const int32_t pages[12] = {50, 51, P_, 50, 51, P_, 100, 101, 102, 100, 101, 102};
  int k;
  for (k = 0; k < 2; k++) {
    const pool_case c = w13_case(k ? 2 : 0);
    const pool_want want[POOL_OUTPUTS] = {
        [OUT_LENS] = {lens, 2},          [OUT_INDPTR] = {cu, 3},
        [OUT_EXPANDED] = {seen, 4},      [OUT_TOPK_LENS] = {clipped[k], 4},
        [OUT_TOPK_INDPTR] = {sums[k], 5}, [OUT_TOKENS] = {tokens, 24},
        [OUT_PAGES] = {pages, 12}};
    pool_expect_reference(&c, want);
    cr_expect(pool_run_everywhere(&c, 0) == 0);
  }
}

/* ---- section 13, worked draft-extend: pool rows {1, 0, 2}, seq_lens
 * {5, 1, 7} (row 1 a graph padding row, fill 1), extend_seq_lens {2, 3, 1},
 * total_len 6. Rows see max(seq - q + j + 1, 0) tokens: {4, 5 | 0, 0, 1 | 7},
 * clipped to 4: {4, 4 | 0, 0, 1 | 4}, summed {0, 4, 8, 8, 8, 9, 13};
 * cu_seqlens_q {0, 2, 5, 6}. Token rows: 100..104 (twice), 0 (three times),
 * 200..206. */
static const int64_t wde_rpi[3] = {1, 0, 2}, wde_len[3] = {5, 1, 7}, wde_q[3] = {2, 3, 1};

Test(pool_metadata, worked_draft_extend) {
  static const int32_t seen[6] = {4, 5, 0, 0, 1, 7}, clipped[6] = {4, 4, 0, 0, 1, 4};
  static const int32_t sums[7] = {0, 4, 8, 8, 8, 9, 13}, cu_q[4] = {0, 2, 5, 6};
  static const int32_t cu_k[4] = {0, 5, 6, 13};
  pool_case c = small_case("worked_draft_extend", wde_rpi, wde_len, 3);
  int32_t tokens[48];
  int i, e;
  for (e = 0; e < 6; e++) { /* rows of request 1 (pool row 1), 0 (row 0), 2 (row 2) */
    const int32_t base = e < 2 ? 100 : e < 5 ? 0 : 200, n = e < 2 ? 5 : e < 5 ? 1 : 7;
    for (i = 0; i < 8; i++) tokens[e * 8 + i] = i < n ? base + i : P_;
  }
  c.in.query_lens = wde_q;
  c.in.num_rows = 6;
  c.in.topk = 4;
  c.in.token_width = 8;
  c.in.token_stride = 8;
  c.want = WANT_INDPTR | WANT_LENS | WANT_EXPANDED | WANT_TOPK_LENS | WANT_TOPK_INDPTR |
           WANT_TOKENS | WANT_QUERY_INDPTR;
  {
    const pool_want want[POOL_OUTPUTS] = {
        [OUT_EXPANDED] = {seen, 6},   [OUT_TOPK_LENS] = {clipped, 6},
        [OUT_TOPK_INDPTR] = {sums, 7}, [OUT_QUERY_INDPTR] = {cu_q, 4},
        [OUT_INDPTR] = {cu_k, 4},     [OUT_TOKENS] = {tokens, 48}};
    pool_expect_reference(&c, want);
  }
  cr_expect(pool_run_everywhere(&c, 0) == 0);
  c.in.num_rows = 4; /* total_len short of the rows: rows 4 and 5 dropped, flag 4 */
  c.name = "draft_extend_rows_past_total";
  cr_expect(pool_run_everywhere(&c, 0) == ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE);
}

/* ---- FA3's draft_extend_set_metadata (query_rows 1): the requests above,
 * one page-table row each, pages of 2 in a table 4 wide: request 0 (pool
 * row 1, 5 tokens) columns 0, 2, 4: 50 51 52; request 1 (pool row 0, 1
 * token): 0; request 2 (pool row 2, 7 tokens): 100 101 102 103. SWA through
 * S[v] = v + 1000: 550 551 552 | 500 | 600 601 602 603. cu_seqlens_q sums
 * query_lens {0, 2, 5, 6}; with rows_per_req 4 instead (TRT-LLM MHA's
 * q_mode 2, q_stride 4) {0, 4, 8, 12}. */
Test(pool_metadata, worked_draft_extend_one_row_per_request) {
  static const int32_t pages[12] = {50, 51, 52, P_, 0, P_, P_, P_, 100, 101, 102, 103};
  static const int32_t swa[12] = {550, 551, 552, P_, 500, P_, P_, P_, 600, 601, 602, 603};
  static const int32_t cu_q[4] = {0, 2, 5, 6}, cu_k[4] = {0, 5, 6, 13}, lens[3] = {5, 1, 7};
  static const int32_t strided_q[4] = {0, 4, 8, 12};
  pool_case c = small_case("worked_draft_extend_one_row", wde_rpi, wde_len, 3);
  int i;
  for (i = 0; i < 300; i++) w12_swa[i] = i + 1000;
  c.in.query_lens = wde_q;
  c.in.query_rows = 1;
  c.in.page_size = 2;
  c.in.page_width = 4;
  c.in.page_stride = 4;
  c.in.swa_stride = 4;
  c.in.full_to_swa = w12_swa;
  c.in.swa_map_len = 300;
  c.want = WANT_INDPTR | WANT_LENS | WANT_PAGES | WANT_SWA | WANT_QUERY_INDPTR;
  {
    const pool_want want[POOL_OUTPUTS] = {
        [OUT_PAGES] = {pages, 12}, [OUT_SWA] = {swa, 12}, [OUT_QUERY_INDPTR] = {cu_q, 4},
        [OUT_INDPTR] = {cu_k, 4},  [OUT_LENS] = {lens, 3}};
    pool_expect_reference(&c, want);
  }
  cr_expect(pool_run_everywhere(&c, 0) == 0);
  c.name = "q_mode_2_one_row";
  c.in.query_lens = NULL;
  c.in.rows_per_req = 4;
  {
    const pool_want want[POOL_OUTPUTS] = {
        [OUT_PAGES] = {pages, 12}, [OUT_SWA] = {swa, 12}, [OUT_QUERY_INDPTR] = {strided_q, 4},
        [OUT_INDPTR] = {cu_k, 4},  [OUT_LENS] = {lens, 3}};
    pool_expect_reference(&c, want);
  }
  cr_expect(pool_run_everywhere(&c, 0) == 0);
}

/* ---- SGLang's test_normal_decode_set_metadata: seq_lens in [max/2, max],
 * max_seq_pages = cdiv(max(seq_lens) + delta, ps), pool rows arange(B) of
 * 2 max random slots, a table max_seq_pages + 10 wide; its reference
 * writes page_table[:, :max_seq_pages] = req_to_token[rpi, ::ps][:, :M] // ps
 * for every row (the older generation: fill_to_width), the newest code
 * the live prefix of each row. Checked here against that formula, and on
 * every backend against the reference. */
static void normal_decode_case(int32_t B, int32_t max_len, int32_t ps, int swa, int32_t delta,
                               int fill) {
  const int64_t cols = 2 * (int64_t)max_len, map = 10000;
  const size_t table = (size_t)B * (size_t)(max_len + delta + 10) * 4;
  int32_t *pool = malloc((size_t)(B * cols) * 4), *want = malloc(table), *want_swa = malloc(table);
  int32_t *got = malloc(table), *got_swa = malloc(table), flags;
  int64_t *rpi = malloc((size_t)B * 8), *len = malloc((size_t)B * 8), *S = malloc((size_t)map * 8);
  int64_t i, p, top = 0, M, width;
  amr_pool_outputs out = {0};
  pool_case c;
  char name[96];
  cr_assert(pool && want && want_swa && got && got_swa && rpi && len && S);
  rng_state = 0xA0761D6478BD642Full ^ (uint64_t)(B * 131 + ps * 7 + swa * 3 + delta + fill * 17);
  for (i = 0; i < B * cols; i++) pool[i] = (int32_t)rng_in(0, 9999);
  for (i = 0; i < map; i++) S[i] = (i + rng_in(0, 99)) % map;
  for (i = 0; i < B; i++) {
    rpi[i] = i;
    len[i] = rng_in(max_len / 2, max_len);
    if (len[i] > top) top = len[i];
  }
  M = (top + delta + ps - 1) / ps;
  width = M + 10;
  for (i = 0; i < B * width; i++) want[i] = want_swa[i] = got[i] = got_swa[i] = P_;
  for (i = 0; i < B; i++) {
    const int64_t live = (len[i] + delta + ps - 1) / ps, n = fill ? M : (live < M ? live : M);
    for (p = 0; p < n; p++) {
      const int32_t v = pool[rpi[i] * cols + p * ps];
      want[i * width + p] = v / ps;
      want_swa[i * width + p] = (int32_t)(S[v] / ps);
    }
  }
  snprintf(name, sizeof name, "normal_decode_B%d_max%d_ps%d_swa%d_delta%d%s", B, max_len, ps, swa,
           delta, fill ? "_full_width" : "");
  c = pool_case_over(name, pool, B, (int32_t)cols, cols, rpi, len, B);
  c.in.page_size = ps;
  c.in.length_delta = delta;
  c.in.length_cap = (int32_t)(M * ps); /* max_seq_pages pages */
  c.in.page_width = (int32_t)(fill ? M : width);
  c.in.page_stride = width;
  c.in.fill_to_width = fill;
  c.in.full_to_swa = swa ? S : NULL;
  c.in.swa_map_len = swa ? map : 0;
  c.in.swa_stride = width;
  c.want = WANT_LENS | WANT_INDPTR | WANT_PAGES | (swa ? WANT_SWA : 0);
  out.page_table = got;
  out.swa_page_table = swa ? got_swa : NULL;
  amr_pool_all(&c.in, &out, &flags);
  cr_expect(flags == 0, "%s: flags 0x%x", name, (unsigned)flags);
  expect_same(got, want, B * width, "page_table");
  if (swa) expect_same(got_swa, want_swa, B * width, "swa_page_table");
  cr_expect(pool_run_everywhere(&c, 1) == 0);
  free(pool);
  free(want);
  free(want_swa);
  free(got);
  free(got_swa);
  free(rpi);
  free(len);
  free(S);
}

Test(pool_metadata, sglang_normal_decode_set_metadata, .timeout = 600) {
  static const int32_t sizes[8] = {1, 2, 4, 8, 16, 32, 64, 128};
  int fill, i;
  for (fill = 0; fill < 2; fill++) {
    normal_decode_case(2, 128, 1, 0, 0, fill);
    normal_decode_case(64, 512, 1, 0, 0, fill);
    normal_decode_case(8, 200, 1, 0, 5, fill);
    normal_decode_case(16, 512, 16, 0, 0, fill);
    normal_decode_case(32, 1024, 64, 0, 0, fill);
    normal_decode_case(8, 512, 64, 0, 3, fill);
    normal_decode_case(8, 256, 16, 1, 0, fill);
    normal_decode_case(16, 512, 64, 1, 0, fill);
    normal_decode_case(8, 400, 64, 1, 2, fill);
    normal_decode_case(1, 256, 64, 0, 0, fill);
    normal_decode_case(2, 10, 64, 0, 0, fill);
    for (i = 0; i < 8; i++) normal_decode_case(4, 256, sizes[i], 0, 0, fill);
  }
}

/* ---- CUDA-graph padding: rows [raw_bs, bs) have pool row 0 (SGLang's
 * reserved row of zeros) and length 1: their entries are 0, their
 * lengths 1, and they raise no flag. */
Test(pool_metadata, graph_padding_rows) {
  static int32_t pool[4 * 8];
  static const int64_t rpi[5] = {2, 3, 1, 0, 0}, len[5] = {5, 7, 2, 1, 1};
  pool_case c;
  int i;
  for (i = 0; i < 32; i++) pool[i] = i < 8 ? 0 : 40 + i;
  c = pool_case_over("graph_padding_rows", pool, 4, 8, 8, rpi, len, 5);
  c.in.page_size = 2;
  c.in.page_width = 4;
  c.in.page_stride = 4;
  c.in.topk = 4;
  c.in.token_width = 8;
  c.in.token_stride = 8;
  c.want = WANT_EVERY & ~(WANT_INDICES | WANT_SWA);
  cr_expect(pool_run_everywhere(&c, 0) == 0);
  c.in.rows_per_req = 3;
  c.in.length_delta = 1; /* lengths {6, 8, 3, 2, 2} */
  cr_expect(pool_run_everywhere(&c, 0) == 0);
}

/* Random requests over a small pool with every kind of hostile entry and
 * every product subset. */
static int32_t random_case(int seed, int query_rows) {
  const int32_t P = (int32_t)rng_in(1, 5), Wr = (int32_t)rng_in(0, 30);
  const int64_t stride = Wr + rng_in(0, 3), map = rng_in(0, 60);
  const int32_t B = (int32_t)rng_in(0, 24);
  const int hostile = seed % 3 != 0;
  int32_t *pool = malloc((size_t)(P * stride + 1) * 4);
  int64_t *rpi = malloc((size_t)B * 8 + 8), *len = malloc((size_t)B * 8 + 8),
          *st = malloc((size_t)B * 8 + 8), *S = malloc((size_t)map * 8 + 8),
          *q = malloc((size_t)B * 8 + 8), i;
  pool_case c;
  char name[64];
  int32_t flags;
  cr_assert(pool && rpi && len && st && S && q);
  for (i = 0; i < P * stride; i++)
    pool[i] = hostile && rng_in(0, 15) == 0 ? -(int32_t)rng_in(1, 3) : (int32_t)rng_in(0, 70);
  for (i = 0; i < map; i++) {
    S[i] = rng_in(0, 100000);
    if (hostile && rng_in(0, 12) == 0) S[i] = -rng_in(1, 4);
    if (hostile && rng_in(0, 12) == 0) S[i] = (int64_t)1 << 45;
  }
  for (i = 0; i < B; i++) {
    rpi[i] = rng_in(0, P - 1);
    len[i] = rng_in(0, Wr + 2);
    st[i] = seed % 4 == 1 ? rng_in(0, 3) : 0;
    if (hostile) {
      switch (rng_in(0, 9)) {
      case 0: rpi[i] = -1; break;
      case 1: rpi[i] = (int64_t)1 << 40; break;
      case 2: len[i] = -(int64_t)rng_in(1, 5); break;
      case 3: len[i] = ((int64_t)1 << 32) + rng_in(0, 5); break;
      case 4: st[i] = Wr + rng_in(-1, 2); break;
      default: break;
      }
    }
  }
  snprintf(name, sizeof name, "metadata_random_%d", seed);
  c = pool_case_over(name, pool, P, Wr, stride, rpi, len, B);
  c.in.kv_start_idx = seed % 4 == 1 ? st : NULL;
  c.in.page_size = (int32_t)(1 << rng_in(0, 3)) + (seed % 7 == 3);
  c.in.length_delta = (int32_t)rng_in(-3, 3);
  c.in.rows_per_req = (int32_t)rng_in(0, 3);
  c.in.topk = (int32_t)rng_in(1, 12);
  c.in.topk_pool = (int32_t)rng_in(0, 3);
  c.in.token_width = (int32_t)rng_in(0, 12);
  c.in.token_stride = c.in.token_width + rng_in(0, 2);
  c.in.length_cap = seed % 5 == 2 ? (int32_t)rng_in(1, 10) : 0;
  c.in.fill_to_width = seed % 6 == 5;
  c.in.full_to_swa = S;
  c.in.swa_map_len = map;
  c.in.page_width = (int32_t)rng_in(0, 6);
  c.in.page_stride = c.in.page_width + rng_in(0, 2);
  c.in.swa_stride = c.in.page_width + rng_in(0, 2);
  c.in.capacity = 0;
  if (seed % 3 == 1) { /* draft-extend rows */
    int64_t total = 0;
    for (i = 0; i < B; i++) {
      q[i] = hostile && rng_in(0, 9) == 0 ? -rng_in(1, 3) : rng_in(0, 4);
      total += q[i] > 0 ? q[i] : 0;
    }
    c.in.query_lens = q;
    c.in.rows_per_req = 0;
    c.in.num_rows = (int32_t)(total + (hostile ? rng_in(-2, 0) : 0));
    if (c.in.num_rows < 0) c.in.num_rows = 0;
  }
  c.want = (int)rng_in(1, WANT_EVERY) & ~WANT_INDICES;
  if (query_rows) { /* one table row a request: no per-query-row output */
    c.in.query_rows = 1;
    c.want &= ~(WANT_EXPANDED | WANT_TOPK_LENS | WANT_TOPK_INDPTR);
  }
  if (!c.want) c.want = WANT_LENS;
  if (c.want & WANT_INDPTR && seed % 2) { /* the slot list, placed by the scan */
    c.want |= WANT_INDICES;
    c.in.capacity = rng_in(0, 80);
  }
  flags = pool_run_everywhere(&c, 0);
  free(pool);
  free(rpi);
  free(len);
  free(st);
  free(S);
  free(q);
  return flags;
}

Test(pool_metadata, random_hostile, .timeout = 600) {
  const int32_t every = ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE | ATTNMETA_FLAG_SEQ_LEN_NEGATIVE |
                        ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE |
                        ATTNMETA_FLAG_BLOCK_ID_NEGATIVE | ATTNMETA_FLAG_SLOT_OUT_OF_RANGE |
                        ATTNMETA_FLAG_POOL_INDEX_OUT_OF_RANGE;
  int32_t met = 0;
  int seed;
  for (seed = 1; seed <= 80; seed++) {
    rng_state = 0x8BB84B93962EACC9ull ^ (uint64_t)seed;
    met |= random_case(seed, 0) & every;
  }
  cr_expect(met == every, "flags met 0x%x of 0x%x", (unsigned)met, (unsigned)every);
}

/* The same random requests with one table row per request (query_rows). */
Test(pool_metadata, random_hostile_query_rows, .timeout = 600) {
  const int32_t every = ATTNMETA_FLAG_SEQ_LEN_NEGATIVE | ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE |
                        ATTNMETA_FLAG_BLOCK_ID_NEGATIVE | ATTNMETA_FLAG_SLOT_OUT_OF_RANGE |
                        ATTNMETA_FLAG_POOL_INDEX_OUT_OF_RANGE;
  int32_t met = 0;
  int seed;
  for (seed = 1; seed <= 80; seed++) {
    rng_state = 0x5DEECE66DB1A2C3Full ^ (uint64_t)seed;
    met |= random_case(seed, 1) & every;
  }
  cr_expect(met == every, "flags met 0x%x of 0x%x", (unsigned)met, (unsigned)every);
}

/* Clipped lengths summing past INT32_MAX: topk_indptr saturates, flag 2048. */
Test(pool_metadata, topk_scan_saturates) {
  static int32_t pool[4] = {1, 2, 3, 4};
  static const int64_t rpi[3] = {0, 0, 0}, len[3] = {INT32_MAX - 5, INT32_MAX - 5, 4};
  pool_case c;
  c = pool_case_over("topk_scan_saturates", pool, 1, 4, 4, rpi, len, 3);
  c.in.topk = INT32_MAX;
  c.want = WANT_TOPK_INDPTR | WANT_TOPK_LENS | WANT_LENS;
  cr_expect(pool_run_everywhere(&c, 0) == ATTNMETA_FLAG_SCAN_OVERFLOW);
}

/* No rows: the leading 0 of each prefix sum and nothing else (SGLang's
 * bs == 0 path). */
Test(pool_metadata, no_rows) {
  pool_case c = pool_case_over("metadata_no_rows", NULL, 0, 0, 0, NULL, NULL, 0);
  c.in.topk = 2048;
  c.in.rows_per_req = 2;
  c.want = WANT_EVERY & ~WANT_INDICES;
  cr_expect(pool_run_everywhere(&c, 0) == 0);
}

/* A request of INT32_MAX query rows (hostile query_lens) with the clipped
 * lengths' prefix sum wanted: the rows before the next request are summed
 * in closed form, not row by row (2^31 steps a thread), and the answer is
 * the reference's: rows past num_rows dropped, the sums saturated. */
static const int64_t huge_rpi[3] = {1, 2, 0}, huge_len[3] = {5, 1000, 7};
static const int64_t huge_q[3] = {1, INT32_MAX, 2};

Test(pool_metadata, huge_query_lens_summed_in_closed_form, .timeout = 60) {
  pool_case c = small_case("huge_query_lens", huge_rpi, huge_len, 3);
  int topk_pool;
  c.in.query_lens = huge_q;
  c.in.num_rows = 4;
  c.in.topk = 4;
  c.want = WANT_INDPTR | WANT_LENS | WANT_EXPANDED | WANT_TOPK_LENS | WANT_TOPK_INDPTR |
           WANT_QUERY_INDPTR;
  for (topk_pool = 0; topk_pool <= 3; topk_pool += 3) {
    c.in.topk_pool = topk_pool;
    cr_expect(pool_run_everywhere(&c, 0) ==
                  (ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE | ATTNMETA_FLAG_SCAN_OVERFLOW),
              "topk_pool %d", topk_pool);
  }
}
