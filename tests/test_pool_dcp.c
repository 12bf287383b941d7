// SPDX-License-Identifier: Apache-2.0
/*
 * The pool operation's DCP form (docs/contract.md section 15) against the
 * naive reference, through pool_run.h (every backend, every launch
 * configuration, poisoned outputs between guard zones): worked examples
 * checked against numbers written here, SGLang's own DCP test cases
 * re-expressed (the Triton kv_indices kernel with start columns, the
 * pool round trip of sparse virtual slots, the MLA page table), the
 * reference against SGLang's interleave-1 rule, random valid and hostile
 * cases over several worlds and interleaves, and the host checks.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "cases.h"
#include "harness.h"
#include "op_inputs.h"
#include "pool_run.h"

#define P_ POOL_POISON

static uint64_t rng_state;
static int64_t rng_in(int64_t lo, int64_t hi) { return amt_rand_range(&rng_state, (int32_t)lo, (int32_t)hi); }

/* Python's x mod m (m >= 1): SGLang's first column is s + ((k - s) mod W). */
static int64_t py_mod(int64_t x, int64_t m) { return ((x % m) + m) % m; }

/* SGLang's get_dcp_lens for one row: the kept positions of [s, s + L). */
static int64_t kept_before(int64_t x, int64_t W, int64_t k, int64_t I) {
  const int64_t cycle = W * I, r = py_mod(x, cycle) - k * I;
  return (x - py_mod(x, cycle)) / cycle * I + (r < 0 ? 0 : r > I ? I : r);
}
static int64_t dcp_len(int64_t L, int64_t s, int64_t W, int64_t k, int64_t I) {
  return kept_before(s + L, W, k, I) - kept_before(s, W, k, I);
}

/* Pool rows of 16 columns holding 16 r + c (SGLang's arange pool). */
static int32_t arange[2 * 16];
static void fill_arange(void) {
  int i;
  for (i = 0; i < 32; i++) arange[i] = i;
}

/* ---- worked, W = 2, I = 1 (SGLang's Triton DCP test): rows {0, 1}, global
 * lengths {7, 6} from columns {1, 2}. Rank 0 keeps columns 2 4 6 | 2 4 6:
 * lengths {3, 3}, slots 2 4 6 | 18 20 22 halved: 1 2 3 | 9 10 11. Rank 1
 * keeps 1 3 5 7 | 3 5 7: lengths {4, 3}, slots 0 1 2 3 | 9 10 11. */
Test(pool_dcp, worked_world2) {
  static const int64_t rpi[2] = {0, 1}, start[2] = {1, 2};
  static const int64_t lens[2][2] = {{3, 3}, {4, 3}};
  static const int32_t ind[2][7] = {{1, 2, 3, 9, 10, 11, P_}, {0, 1, 2, 3, 9, 10, 11}};
  static const int32_t ip[2][3] = {{0, 3, 6}, {0, 4, 7}};
  int k;
  fill_arange();
  for (k = 0; k < 2; k++) {
    pool_case c = pool_case_over(k ? "worked_world2_rank1" : "worked_world2_rank0", arange, 2,
                                 16, 16, rpi, lens[k], 2);
    const pool_want want[POOL_OUTPUTS] = {[OUT_INDICES] = {ind[k], 7}, [OUT_INDPTR] = {ip[k], 3}};
    cr_expect(dcp_len(7, 1, 2, k, 1) == lens[k][0] && dcp_len(6, 2, 2, k, 1) == lens[k][1]);
    c.in.kv_start_idx = start;
    c.in.capacity = 7;
    c.in.dcp_world = 2;
    c.in.dcp_rank = k;
    c.want = WANT_INDICES | WANT_INDPTR;
    pool_expect_reference(&c, want);
    cr_expect(pool_run_everywhere(&c, 0) == 0);
  }
}

/* ---- worked, W = 2, I = 2, rank 1 over slots equal to positions: the rank
 * keeps 2 3 | 6 7 | 10 11 ..., local slots (v / 4) 2 + v % 2 = 0 1 2 3 4 ...
 * From column 0, 5 tokens: kv_indices 0 1 2 3 4; pages of 2 read local
 * positions 0 2 4 = columns 2 6 10: pages 0 1 2. From column 3, 3 tokens:
 * columns 3 6 7, slots 1 2 3; pages at columns 3 7: 1/2 3/2 = 0 1. */
Test(pool_dcp, worked_interleave2) {
  static const int64_t rpi[2] = {0, 0}, len[2] = {5, 3}, start[2] = {0, 3};
  static const int32_t ind[8] = {0, 1, 2, 3, 4, 1, 2, 3}, ip[3] = {0, 5, 8};
  static const int32_t pages[8] = {0, 1, 2, P_, 0, 1, P_, P_};
  static const int32_t lens_out[2] = {5, 3};
  pool_case c;
  const pool_want want[POOL_OUTPUTS] = {[OUT_INDICES] = {ind, 8},
                                        [OUT_INDPTR] = {ip, 3},
                                        [OUT_PAGES] = {pages, 8},
                                        [OUT_LENS] = {lens_out, 2}};
  fill_arange();
  c = pool_case_over("worked_interleave2", arange, 2, 16, 16, rpi, len, 2);
  c.in.kv_start_idx = start;
  c.in.capacity = 8;
  c.in.page_size = 2;
  c.in.page_width = 4;
  c.in.page_stride = 4;
  c.in.dcp_world = 2;
  c.in.dcp_rank = 1;
  c.in.dcp_interleave = 2;
  c.want = WANT_INDICES | WANT_INDPTR | WANT_PAGES | WANT_LENS;
  cr_expect(dcp_len(16, 0, 2, 1, 2) == 8 && kept_before(3, 2, 1, 2) == 1);
  pool_expect_reference(&c, want);
  cr_expect(pool_run_everywhere(&c, 0) == 0);
}

/* ---- the reference against SGLang's interleave-1 kernel written out: entry
 * j of a row is row[f + j W] / W, f = s + ((k - s) mod W), for the rank's
 * get_dcp_lens count (random starts, lengths, worlds and ranks). */
Test(pool_dcp, reference_meets_sglang_rule) {
  enum { COLS = 200 };
  static int32_t row[COLS];
  int trial;
  rng_state = 0x9E3779B97F4A7C15ull;
  for (trial = 0; trial < 300; trial++) {
    const int64_t W = rng_in(2, 8), k = rng_in(0, W - 1), s = rng_in(0, 40), L = rng_in(0, 150);
    const int64_t n = dcp_len(L, s, W, k, 1), f = s + py_mod(k - s, W), rpi = 0;
    int32_t got[COLS], flags;
    pool_case c;
    int64_t j;
    for (j = 0; j < COLS; j++) row[j] = (int32_t)rng_in(0, 1 << 20);
    c = pool_case_over("reference_rule", row, 1, COLS, COLS, &rpi, &n, 1);
    c.in.kv_start_idx = &s;
    c.in.capacity = n;
    c.in.dcp_world = (int32_t)W;
    c.in.dcp_rank = (int32_t)k;
    {
      const int32_t ip[2] = {0, (int32_t)n};
      c.in.kv_indptr = ip;
      amr_pool(&c.in, got, NULL, NULL, &flags);
    }
    cr_assert(flags == 0, "W %lld k %lld s %lld L %lld: flags 0x%x", (long long)W, (long long)k,
              (long long)s, (long long)L, (unsigned)flags);
    for (j = 0; j < n; j++)
      cr_assert(got[j] == row[f + j * W] / W, "W %lld k %lld s %lld: entry %lld = %d, SGLang %d",
                (long long)W, (long long)k, (long long)s, (long long)j, got[j],
                row[f + j * W] / (int32_t)W);
  }
}

/* ---- SGLang's MLA DCP page table (create_mla_kv_page_table_for_dcp) test
 * re-expressed: pages p < cdiv(local_len, ps) hold row[k + p ps W] / W / ps;
 * W = 4, ps = 4, every rank, slots equal to positions plus a page-aligned
 * offset of each request. */
Test(pool_dcp, sglang_mla_page_table) {
  enum { B = 3, COLS = 160, WIDTH = 12, W = 4, PS = 4 };
  static int32_t pool[B * COLS];
  static const int64_t rpi[B] = {2, 0, 1}, seq[B] = {1, 77, 160};
  int k, b, p;
  for (b = 0; b < B; b++)
    for (p = 0; p < COLS; p++) pool[b * COLS + p] = b * 1024 + p;
  for (k = 0; k < W; k++) {
    int64_t local[B];
    int32_t want[B * WIDTH];
    char name[48];
    pool_case c;
    for (b = 0; b < B; b++) local[b] = dcp_len(seq[b], 0, W, k, 1);
    for (b = 0; b < B * WIDTH; b++) want[b] = P_;
    for (b = 0; b < B; b++)
      for (p = 0; p < (local[b] + PS - 1) / PS; p++)
        want[b * WIDTH + p] = pool[rpi[b] * COLS + k + p * PS * W] / W / PS;
    snprintf(name, sizeof name, "sglang_mla_page_table_rank%d", k);
    c = pool_case_over(name, pool, B, COLS, COLS, rpi, local, B);
    c.in.page_size = PS;
    c.in.page_width = WIDTH;
    c.in.page_stride = WIDTH;
    c.in.dcp_world = W;
    c.in.dcp_rank = k;
    c.want = WANT_PAGES | WANT_LENS;
    {
      const pool_want w[POOL_OUTPUTS] = {[OUT_PAGES] = {want, B * WIDTH}};
      pool_expect_reference(&c, w);
    }
    cr_expect(pool_run_everywhere(&c, 0) == 0);
  }
}

/* ---- SGLang's pool round trip: sparse, pair-aligned virtual slots of one
 * request; rank r's kv_indices are the slots it owns, in position order,
 * divided by W = 2 (they fit a physical buffer of 127 rows). */
Test(pool_dcp, sglang_virtual_slots_round_trip) {
  static int32_t locs[12] = {4, 5, 10, 11, 200, 201, 250, 251, 126, 127, 60, 61};
  static const int32_t owned[2][6] = {{2, 5, 100, 125, 63, 30}, {2, 5, 100, 125, 63, 30}};
  const int64_t rpi = 0;
  int k;
  for (k = 0; k < 2; k++) {
    const int64_t n = dcp_len(12, 0, 2, k, 1);
    const int32_t ip[2] = {0, (int32_t)n};
    pool_case c = pool_case_over(k ? "round_trip_rank1" : "round_trip_rank0", locs, 1, 12, 12,
                                 &rpi, &n, 1);
    const pool_want want[POOL_OUTPUTS] = {[OUT_INDICES] = {owned[k], 6}};
    c.in.kv_indptr = ip;
    c.in.capacity = n;
    c.in.dcp_world = 2;
    c.in.dcp_rank = k;
    c.want = WANT_INDICES;
    pool_expect_reference(&c, want);
    cr_expect(pool_run_everywhere(&c, 0) == 0);
  }
}

/* ---- random cases: worlds 2 to 8, interleaves 1 to 4 (and 0, read as 1),
 * every rank, every product DCP combines with; hostile pool entries,
 * request rows, lengths, start columns and places on some seeds. */
static int32_t random_case(int seed) {
  const int32_t P = (int32_t)rng_in(1, 5), Wr = (int32_t)rng_in(0, 60);
  const int64_t stride = Wr + rng_in(0, 3);
  const int32_t B = (int32_t)rng_in(0, 24);
  const int32_t W = (int32_t)rng_in(2, 8), I = (int32_t)rng_in(0, 4), k = (int32_t)rng_in(0, W - 1);
  const int hostile = seed % 3 != 0, with_start = seed % 2 == 1;
  int32_t *pool = malloc((size_t)(P * stride + 1) * 4), *ip = malloc(((size_t)B + 1) * 4);
  int64_t *rpi = malloc((size_t)B * 8 + 8), *len = malloc((size_t)B * 8 + 8),
          *st = malloc((size_t)B * 8 + 8), i, sum = 0;
  pool_case c;
  char name[64];
  int32_t flags;
  cr_assert(pool && ip && rpi && len && st);
  for (i = 0; i < P * stride; i++)
    pool[i] = hostile && rng_in(0, 15) == 0 ? -(int32_t)rng_in(1, 3) : (int32_t)rng_in(0, 100000);
  for (i = 0; i < B; i++) {
    rpi[i] = rng_in(0, P - 1);
    st[i] = with_start ? rng_in(0, 6) : 0;
    len[i] = dcp_len(rng_in(0, Wr + 2), st[i], W, k, I > 1 ? I : 1);
    if (hostile) {
      switch (rng_in(0, 11)) {
      case 0: rpi[i] = -1; break;
      case 1: rpi[i] = P; break;
      case 2: len[i] = -(int64_t)rng_in(1, 5); break;
      case 3: len[i] = Wr + rng_in(0, 5); break; /* more than the row holds */
      case 4: st[i] = -(int64_t)rng_in(1, 9); break;
      case 5: st[i] = Wr + rng_in(-2, 3); break;
      case 6: st[i] = ((int64_t)1 << 33) + 3; break; /* read as 3 */
      default: break;
      }
    }
  }
  ip[0] = (int32_t)(hostile && seed % 5 == 1 ? rng_in(-3, 3) : 0);
  for (i = 0; i < B; i++) {
    const int32_t l = (int32_t)(uint32_t)(uint64_t)len[i];
    int32_t gap = l > 0 ? l : 0;
    if (hostile && rng_in(0, 9) == 0) gap += (int32_t)rng_in(-3, 2);
    ip[i + 1] = ip[i] + gap;
    sum += l > 0 ? l : 0;
  }
  snprintf(name, sizeof name, "dcp_random_%d_W%d_k%d_I%d", seed, W, k, I);
  c = pool_case_over(name, pool, P, Wr, stride, rpi, len, B);
  c.in.kv_start_idx = with_start ? st : NULL;
  c.in.page_size = (int32_t)(1 << rng_in(0, 2)) + (seed % 7 == 3);
  c.in.kv_indptr = ip;
  c.in.capacity = sum + (hostile ? rng_in(-6, 4) : 0);
  if (c.in.capacity < 0) c.in.capacity = 0;
  c.in.page_width = (int32_t)rng_in(0, 8);
  c.in.page_stride = c.in.page_width + rng_in(0, 2);
  c.in.token_width = (int32_t)rng_in(0, 12);
  c.in.token_stride = c.in.token_width + rng_in(0, 2);
  c.in.fill_to_width = seed % 11 == 5;
  c.in.dcp_world = W;
  c.in.dcp_rank = k;
  c.in.dcp_interleave = I;
  c.want = (int)rng_in(1, 15) | (seed % 4 == 0 ? WANT_TOKENS : 0);
  if ((c.want & WANT_INDPTR) && (c.want & WANT_INDICES)) c.in.kv_indptr = NULL;
  flags = pool_run_everywhere(&c, seed % 4 != 1);
  free(pool);
  free(ip);
  free(rpi);
  free(len);
  free(st);
  return flags;
}

Test(pool_dcp, random_valid_and_hostile, .timeout = 600) {
  const int32_t every = ATTNMETA_FLAG_QSL_DECREASING | ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE |
                        ATTNMETA_FLAG_SEQ_LEN_NEGATIVE | ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE |
                        ATTNMETA_FLAG_BLOCK_ID_NEGATIVE | ATTNMETA_FLAG_POOL_INDEX_OUT_OF_RANGE;
  int32_t met = 0, valid = 0;
  int seed;
  for (seed = 1; seed <= 60; seed++) {
    int32_t f;
    rng_state = 0xA0761D6478BD642Full ^ (uint64_t)seed;
    f = random_case(seed);
    met |= f;
    if (seed % 3 == 0) valid |= f & ~ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
  }
  cr_expect(met == every, "flags met 0x%x of 0x%x", (unsigned)met, (unsigned)every);
  /* valid seeds raise at most flag 32 (a page past a short pool row) */
  cr_expect(valid == 0, "valid cases raised 0x%x", (unsigned)valid);
}

/* ---- the host checks: each bad setting refused with a message naming it,
 * nothing written. */
AMT_CPU_SUITE(pool_dcp_args, (void)0);

static int32_t a_pool[2][8], a_out[8], a_ip[2], a_swa_out[4];
static int64_t a_rpi[1], a_len[1], a_map[8];

static void a_reset(attnmeta_pool *op) {
  int i;
  for (i = 0; i < 16; i++) a_pool[i / 8][i % 8] = i;
  for (i = 0; i < 8; i++) a_out[i] = P_;
  a_rpi[0] = 0;
  a_len[0] = 2;
  amt_pool_table(op, &a_pool[0][0], 2, 8, 8);
  amt_pool_reqs(op, a_rpi, a_len, 1);
  amt_pool_slots(op, NULL, a_out, 8);
  op->kv_indptr_out = a_ip;
  a_ip[0] = a_ip[1] = P_;
  op->dcp_world_size = 4;
  op->dcp_rank = 1;
}

static void a_refused(const attnmeta_pool *op, const char *words) {
  const attnmeta_status st = attnmeta_build_pool_indices(amt_cpu, op, NULL);
  int i;
  cr_expect(st == ATTNMETA_ERR_INVALID_ARGUMENT, "%s: status %s (%s)", words,
            attnmeta_status_string(st), attnmeta_last_error(amt_cpu));
  cr_expect(strstr(attnmeta_last_error(amt_cpu), words) != NULL, "message \"%s\" lacks \"%s\"",
            attnmeta_last_error(amt_cpu), words);
  for (i = 0; i < 8; i++) cr_expect(a_out[i] == P_, "%s: kv_indices[%d] written", words, i);
  cr_expect(a_ip[0] == P_ && a_ip[1] == P_, "%s: kv_indptr_out written", words);
}

Test(pool_dcp_args, bad_settings_refused) {
  attnmeta_pool op;
  a_reset(&op);
  op.dcp_world_size = -1;
  a_refused(&op, "dcp_world_size (-1)");
  a_reset(&op);
  op.dcp_world_size = 65537;
  a_refused(&op, "dcp_world_size (65537)");
  a_reset(&op);
  op.dcp_rank = 4;
  a_refused(&op, "dcp_rank (4)");
  a_reset(&op);
  op.dcp_rank = -1;
  a_refused(&op, "dcp_rank (-1)");
  a_reset(&op);
  op.dcp_world_size = 1;
  a_refused(&op, "dcp_rank (1) is given without");
  a_reset(&op);
  op.dcp_interleave = -2;
  a_refused(&op, "dcp_interleave (-2)");
  a_reset(&op);
  op.dcp_interleave = 65537;
  a_refused(&op, "dcp_interleave (65537)");
  a_reset(&op);
  op.full_to_swa = a_map;
  op.swa_map_len = 8;
  op.swa_page_table = a_swa_out;
  op.swa_page_table_stride = 4;
  op.page_table_width = 1;
  a_refused(&op, "swa_page_table (full_to_swa) does not combine with DCP");
}

/* World 0 or 1 is the plain operation; the rank's slots otherwise. */
Test(pool_dcp_args, world_one_is_plain) {
  attnmeta_pool op;
  int w;
  for (w = 0; w < 2; w++) {
    a_reset(&op);
    op.dcp_world_size = w;
    op.dcp_rank = 0;
    op.dcp_interleave = 3; /* unread without DCP */
    cr_assert(attnmeta_build_pool_indices(amt_cpu, &op, NULL) == ATTNMETA_OK, "%s",
              attnmeta_last_error(amt_cpu));
    cr_expect(a_out[0] == 0 && a_out[1] == 1 && a_out[2] == P_ && a_ip[1] == 2);
  }
  a_reset(&op); /* rank 1 of 4 keeps columns 1 5: slots 1 5 are local 0 1 */
  cr_assert(attnmeta_build_pool_indices(amt_cpu, &op, NULL) == ATTNMETA_OK, "%s",
            attnmeta_last_error(amt_cpu));
  cr_expect(a_out[0] == 0 && a_out[1] == 1 && a_out[2] == P_ && a_ip[1] == 2, "%d %d %d", a_out[0],
            a_out[1], a_out[2]);
}
