// SPDX-License-Identifier: Apache-2.0
/*
 * The pool operation's draft decode lists (docs/contract.md section 14,
 * SGLang's generate_draft_decode_kv_indices) against the naive reference,
 * through draft_run.h (every backend, every launch configuration, poisoned
 * outputs between guard zones): two hand-worked examples (pages of 1 and
 * of 4, checked against numbers written here), SGLang's CUDA-graph
 * padding rows, random cases over steps, branches and page sizes, many
 * rows over forced launch shapes (the block-wide scan's passes), and
 * hostile data (pool rows outside the pool, negative lengths and
 * positions, lengths with high bits, columns past the row, lists past the
 * width, an indptr past INT32_MAX).
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "attnmeta/attnmeta.h"
#include "cases.h"
#include "draft_run.h"
#include "harness.h"

#define POISON DRAFT_POISON

static draft_case case_over(const char *name, const int32_t *pool, int32_t rows, int32_t cols,
                            const int64_t *rpi, const int64_t *len, const int64_t *pos, int32_t B,
                            int32_t steps, int32_t topk, int64_t width) {
  const draft_case c = {.name = name,
                        .in = {.req_to_token = pool, .pool_stride = cols, .pool_rows = rows,
                               .pool_cols = cols, .req_pool_indices = rpi, .lengths = len,
                               .positions = pos, .num_reqs = B, .page_size = 1, .steps = steps,
                               .topk = topk, .width = width, .indices_stride = width + 3,
                               .indptr_stride = (int64_t)B * topk + 2},
                        .want = DRAFT_WANT_BOTH};
  return c;
}

static void expect_values(const int32_t *got, const int32_t *want, int64_t n, const char *what) {
  int64_t i;
  for (i = 0; i < n; i++)
    cr_expect(got[i] == want[i], "%s[%lld] = %d, expected %d", what, (long long)i, got[i], want[i]);
}

/* ---- pages of 1: pool row r holds 100 r + c (12 columns); request 0
 * reads row 1 for 2 tokens, request 1 row 0 for 1; K = 2 branches, S = 2
 * steps; branch k's slots start at column L + k * S.
 *   step 0: 100 101 102 | 100 101 104 | 0 1 | 0 3        indptr 0 3 6 8 10
 *   step 1: 100 101 102 103 | 100 101 104 105 | 0 1 2 | 0 3 4
 *                                                        indptr 0 4 8 11 14
 * (indptr from positions 2 2 1 1: their sum before entry e, plus e (i + 1)) */
static int32_t worked_pool[24];
static const int64_t worked_rpi[2] = {1, 0}, worked_len[2] = {2, 1}, worked_pos[4] = {2, 2, 1, 1};
static const int32_t worked_indices[2][14] = {
    {100, 101, 102, 100, 101, 104, 0, 1, 0, 3, POISON, POISON, POISON, POISON},
    {100, 101, 102, 103, 100, 101, 104, 105, 0, 1, 2, 0, 3, 4}};
static const int32_t worked_indptr[2][5] = {{0, 3, 6, 8, 10}, {0, 4, 8, 11, 14}};

static draft_case worked_case(void) {
  int r, c;
  for (r = 0; r < 2; r++)
    for (c = 0; c < 12; c++) worked_pool[r * 12 + c] = 100 * r + c;
  return case_over("worked_pages_of_1", worked_pool, 2, 12, worked_rpi, worked_len, worked_pos, 2,
                   2, 2, 14);
}

Test(pool_draft, reference_worked_pages_of_1) {
  const draft_case c = worked_case();
  int32_t *indices, *indptr, i;
  cr_expect_eq(draft_reference(&c, &indices, &indptr), 0);
  for (i = 0; i < 2; i++) {
    expect_values(indices + 40 + i * c.in.indices_stride, worked_indices[i], 14, "indices");
    expect_values(indptr + 40 + i * c.in.indptr_stride, worked_indptr[i], 5, "indptr");
  }
  free(indices);
  free(indptr);
}

Test(pool_draft, worked_pages_of_1) {
  const draft_case c = worked_case();
  cr_expect_eq(draft_run_everywhere(&c), 0);
}

/* ---- pages of 4: one request of 5 tokens over a row of 10 + c (16
 * columns), K = 2, S = 3. Its partial page (columns 4..7) holds 1 token;
 * each branch owns cdiv(1 + 3, 4) = 1 page after column 4, its slots at
 * the partial page's offset: branch 0 columns 5 6 7, branch 1 9 10 11.
 *   step 2: 10 11 12 13 14 15 16 17 | 10 11 12 13 14 19 20 21 */
static int32_t paged_pool[16];
static const int64_t paged_rpi[1] = {0}, paged_len[1] = {5}, paged_pos[2] = {5, 5};
static const int32_t paged_step2[16] = {10, 11, 12, 13, 14, 15, 16, 17,
                                        10, 11, 12, 13, 14, 19, 20, 21};
static const int32_t paged_indptr2[3] = {0, 8, 16};

static draft_case paged_case(void) {
  draft_case c;
  int i;
  for (i = 0; i < 16; i++) paged_pool[i] = 10 + i;
  c = case_over("worked_pages_of_4", paged_pool, 1, 16, paged_rpi, paged_len, paged_pos, 1, 3, 2,
                16);
  c.in.page_size = 4;
  return c;
}

Test(pool_draft, reference_worked_pages_of_4) {
  const draft_case c = paged_case();
  int32_t *indices, *indptr;
  cr_expect_eq(draft_reference(&c, &indices, &indptr), 0);
  expect_values(indices + 40 + 2 * c.in.indices_stride, paged_step2, 16, "indices");
  expect_values(indptr + 40 + 2 * c.in.indptr_stride, paged_indptr2, 3, "indptr");
  free(indices);
  free(indptr);
}

Test(pool_draft, worked_pages_of_4) {
  draft_case c = paged_case();
  cr_expect_eq(draft_run_everywhere(&c), 0);
  c.in.topk = 1; /* one branch: its slots follow the row, pages or not */
  c.name = "pages_of_4_one_branch";
  cr_expect_eq(draft_run_everywhere(&c), 0);
  c.want = DRAFT_WANT_INDICES;
  c.name = "pages_of_4_indices_only";
  cr_expect_eq(draft_run_everywhere(&c), 0);
  c.want = DRAFT_WANT_INDPTR;
  c.name = "pages_of_4_indptr_only";
  cr_expect_eq(draft_run_everywhere(&c), 0);
}

/* ---- random cases ---- */
static uint64_t rng_state;
static int64_t rng_in(int64_t lo, int64_t hi) {
  return amt_rand_range(&rng_state, (int32_t)lo, (int32_t)hi);
}

#define MAX_B 40
#define MAX_K 4
static int32_t r_pool[8 * 256];
static int64_t r_rpi[MAX_B], r_len[MAX_B], r_pos[MAX_B * MAX_K];

/* A request batch as SGLang's draft decode makes it (positions = the
 * lengths, each repeated K times; pool rows wide enough), or with hostile
 * data. Returns the reference's flags from the run. */
static int32_t random_case(int seed, int hostile) {
  static const int32_t page_sizes[4] = {1, 2, 4, 16};
  const int32_t B = (int32_t)rng_in(1, MAX_B), K = (int32_t)rng_in(1, MAX_K),
                S = (int32_t)rng_in(1, 5), ps = page_sizes[rng_in(0, 3)];
  const int32_t rows = 8, max_len = 60;
  const int32_t cols = hostile ? (int32_t)rng_in(20, 120) : max_len + K * (S + 2 * ps) + 1;
  int64_t total = 0, width;
  char name[96];
  draft_case c;
  int32_t b, k, i;
  for (i = 0; i < rows * cols; i++) r_pool[i] = hostile && rng_in(0, 9) == 0 ? -1 : (int32_t)rng_in(0, 1 << 20);
  for (b = 0; b < B; b++) {
    r_rpi[b] = hostile && rng_in(0, 7) == 0 ? rng_in(-2, rows + 2) : rng_in(0, rows - 1);
    r_len[b] = rng_in(0, max_len);
    if (hostile && rng_in(0, 7) == 0) r_len[b] = -rng_in(1, 5);
    if (hostile && rng_in(0, 9) == 0) r_len[b] += (int64_t)rng_in(1, 3) << 32; /* high bits */
    for (k = 0; k < K; k++)
      r_pos[b * K + k] = hostile && rng_in(0, 9) == 0 ? rng_in(-4, 4) : r_len[b];
    total += r_len[b] > 0 ? (int32_t)r_len[b] : 0;
  }
  width = total * K + (int64_t)B * S * K;
  if (hostile) width = rng_in(width / 2, width + 4);
  snprintf(name, sizeof name, "random seed=%d%s B=%d K=%d S=%d ps=%d", seed,
           hostile ? " hostile" : "", B, K, S, ps);
  c = case_over(name, r_pool, rows, cols, r_rpi, r_len, r_pos, B, S, K, width);
  c.in.page_size = ps;
  c.in.indices_stride = width + rng_in(0, 5);
  c.in.indptr_stride = (int64_t)B * K + 1 + rng_in(0, 3);
  if (hostile && seed % 4 == 1) c.in.length_delta = (int32_t)rng_in(-3, 3);
  return draft_run_everywhere(&c);
}

Test(pool_draft, random_engine_batches) {
  int seed;
  rng_state = 0xD4AF7;
  for (seed = 0; seed < 24; seed++)
    cr_expect_eq(random_case(seed, 0), 0, "seed %d raised flags", seed);
}

Test(pool_draft, random_hostile_batches) {
  int seed;
  int32_t seen = 0;
  rng_state = 0xBAD5EED;
  for (seed = 0; seed < 40; seed++) seen |= random_case(seed, 1);
  /* the hostile data reaches each of its answers */
  cr_expect(seen & ATTNMETA_FLAG_POOL_INDEX_OUT_OF_RANGE, "no pool row outside the pool (0x%x)", (unsigned)seen);
  cr_expect(seen & ATTNMETA_FLAG_SEQ_LEN_NEGATIVE, "no negative length or position (0x%x)", (unsigned)seen);
  cr_expect(seen & ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE, "no column outside the row (0x%x)", (unsigned)seen);
  cr_expect(seen & ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE, "no list past the width (0x%x)", (unsigned)seen);
}

/* SGLang's CUDA-graph replay: the padded rows read pool row 0 for the
 * fill length 1 with positions 0. */
Test(pool_draft, graph_padding_rows) {
  static int32_t pool[3 * 32];
  static const int64_t rpi[4] = {2, 1, 0, 0}, len[4] = {7, 3, 1, 1};
  static const int64_t pos[8] = {7, 7, 3, 3, 0, 0, 0, 0};
  draft_case c;
  int i;
  for (i = 0; i < 3 * 32; i++) pool[i] = i < 32 ? 0 : 1000 + i;
  c = case_over("graph_padding", pool, 3, 32, rpi, len, pos, 4, 3, 2, 64);
  c.in.page_size = 2;
  cr_expect_eq(draft_run_everywhere(&c), 0);
}

/* Positions whose sum passes INT32_MAX: saturated entries, flag 2048. */
Test(pool_draft, indptr_saturates) {
  static int32_t pool[16];
  static const int64_t rpi[2] = {0, 0}, len[2] = {2, 3};
  static const int64_t pos[4] = {1 << 30, 1 << 30, 1 << 30, 5};
  const draft_case c = case_over("saturated", pool, 1, 16, rpi, len, pos, 2, 2, 2, 32);
  cr_expect_eq(draft_run_everywhere(&c), ATTNMETA_FLAG_SCAN_OVERFLOW);
}

/* No request: each step's indptr is its leading 0. */
Test(pool_draft, no_request) {
  static int32_t pool[4];
  draft_case c = case_over("no_request", pool, 1, 4, NULL, NULL, NULL, 0, 3, 2, 0);
  c.want = DRAFT_WANT_INDPTR;
  cr_expect_eq(draft_run_everywhere(&c), 0);
}

/* {block, grid, stage, vector, lanes}: one-lane groups of whole blocks
 * (more rows a pass than the block-wide scan holds at once), several
 * blocks (the rows since a block's last pass summed strided over it), a
 * block of one thread, odd lane counts. */
static const amt_launch many_configs[] = {
    {"auto", {0, 0, -1, -1, 0}},
    {"grid7", {0, 7, -1, -1, 0}},
    {"block1_grid1000", {1, 1000, -1, -1, 0}},
    {"block32_lanes8_grid5", {32, 5, -1, -1, 8}},
    {"block256_lanes3_grid40", {256, 40, -1, -1, 3}},
    {"block1024_lanes1", {1024, 0, -1, -1, 1}},
    {"block1024_lanes1_grid3", {1024, 3, -1, -1, 1}},
    {"block512_lanes2_grid2", {512, 2, -1, -1, 2}},
    {"block96_lanes7_grid9", {96, 9, -1, -1, 7}},
};

#define MANY_B 1500
#define MANY_K 3
static int32_t m_pool[8 * 400];
static int64_t m_rpi[MANY_B], m_len[MANY_B], m_pos[MANY_B * MANY_K];

/* More rows than a block has threads, over several blocks: the places of
 * each row come from the scan's passes, checked against the reference. */
static int32_t many_rows(int hostile, int32_t ps) {
  const int32_t rows = 8, cols = 400, S = 4, K = MANY_K;
  int64_t total = 0, width;
  char name[96];
  draft_case c;
  int32_t b, k, i;
  for (i = 0; i < rows * cols; i++)
    m_pool[i] = hostile && rng_in(0, 99) == 0 ? -1 : (int32_t)rng_in(0, 1 << 20);
  for (b = 0; b < MANY_B; b++) {
    m_rpi[b] = hostile && rng_in(0, 99) == 0 ? rng_in(-2, rows + 2) : rng_in(0, rows - 1);
    m_len[b] = rng_in(0, 40);
    if (hostile && rng_in(0, 99) == 0) m_len[b] = -rng_in(1, 1 << 20);
    if (hostile && rng_in(0, 99) == 0) m_len[b] += (int64_t)rng_in(1, 3) << 32; /* high bits */
    if (hostile && b == MANY_B / 2) m_len[b] = 20000; /* columns past the row */
    for (k = 0; k < K; k++)
      m_pos[b * K + k] = hostile && rng_in(0, 99) == 0 ? rng_in(-9, 9) : m_len[b];
    total += (int32_t)m_len[b] > 0 ? (int32_t)m_len[b] : 0;
  }
  width = total * K + (int64_t)MANY_B * S * K;
  if (hostile) width -= width / 3;
  snprintf(name, sizeof name, "many_rows B=%d ps=%d%s", MANY_B, ps, hostile ? " hostile" : "");
  c = case_over(name, m_pool, rows, cols, m_rpi, m_len, m_pos, MANY_B, S, K, width);
  c.in.page_size = ps;
  return draft_run_configs(&c, many_configs, (int)(sizeof many_configs / sizeof many_configs[0]));
}

Test(pool_draft, many_rows) {
  rng_state = 0x5CA4;
  cr_expect_eq(many_rows(0, 1), 0);
  cr_expect_eq(many_rows(0, 4), 0);
}

Test(pool_draft, many_rows_hostile) {
  const int32_t want = ATTNMETA_FLAG_POOL_INDEX_OUT_OF_RANGE | ATTNMETA_FLAG_SEQ_LEN_NEGATIVE |
                       ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE | ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE;
  int32_t seen;
  rng_state = 0xB16BA7C4;
  seen = many_rows(1, 1) | many_rows(1, 16);
  cr_expect((seen & want) == want, "flags 0x%x, expected all of 0x%x", (unsigned)seen,
            (unsigned)want);
}
