// SPDX-License-Identifier: Apache-2.0
/* The pool operation's case table (pool_cases.h). */
#include "pool_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A pool entry past a row's columns: never read. */
#define GAP_ENTRY 0x3EEEEEEE

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void *own(amp_case *c, size_t n, size_t es) {
  void *p = calloc(n ? n : 1, es);
  if (!p || c->nowned == AMP_MAX_OWNED) {
    free(p);
    fprintf(stderr, "pool case %s: out of memory\n", c->name);
    c->failed = 1;
    return NULL;
  }
  c->owned[c->nowned++] = p;
  return p;
}

static int64_t *i64s(amp_case *c, int n, const int64_t *v) {
  int64_t *p = own(c, (size_t)n, 8);
  if (p) memcpy(p, v, (size_t)n * 8);
  return p;
}
#define I64(c, ...) i64s(c, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8), (int64_t[]){__VA_ARGS__})

/* A pool of P rows of `cols` slots, `stride` apart, laid out in pages of
 * ps slots as SGLang's allocator leaves them: each page of a row a page
 * drawn from `seed`, slot = page * ps + offset. */
static int32_t *pool(amp_case *c, int32_t P, int32_t cols, int64_t stride, int32_t ps,
                     uint64_t seed) {
  int32_t *t = own(c, (size_t)(P > 0 ? P : 1) * (size_t)(stride > 0 ? stride : 1), 4);
  int64_t r, k;
  if (!t) return NULL;
  for (r = 0; r < P; r++)
    for (k = 0; k < stride; k++) {
      if (k >= cols) {
        t[r * stride + k] = GAP_ENTRY;
      } else {
        uint64_t s = seed * 1000003u + (uint64_t)r * 7919u + (uint64_t)(k / ps);
        const int64_t page = 1 + (int64_t)(splitmix64(&s) % (uint64_t)(c->span ? c->span : 40000));
        t[r * stride + k] = (int32_t)(page * ps + k % ps);
      }
    }
  c->in.req_to_token = t;
  c->in.pool_rows = P;
  c->in.pool_cols = cols;
  c->in.pool_stride = stride;
  c->in.page_size = ps;
  return t;
}

static void reqs(amp_case *c, int32_t B, const int64_t *rpi, const int64_t *len) {
  c->in.num_reqs = B;
  c->in.req_pool_indices = rpi;
  c->in.lengths = len;
}

/* B requests over the pool, rows and lengths (0 to maxlen) drawn from seed. */
static void random_reqs(amp_case *c, int32_t B, int64_t maxlen, uint64_t seed) {
  int64_t *rpi = own(c, (size_t)B, 8), *len = own(c, (size_t)B, 8);
  int32_t b;
  if (!rpi || !len) return;
  for (b = 0; b < B; b++) {
    rpi[b] = (int64_t)(splitmix64(&seed) % (uint64_t)c->in.pool_rows);
    len[b] = (int64_t)(splitmix64(&seed) % (uint64_t)(maxlen + 1));
  }
  reqs(c, B, rpi, len);
}

/* The tokens of every request, each max(int32(length + delta), 0). */
static int64_t total_tokens(const amp_case *c) {
  int64_t t = 0;
  int32_t b;
  for (b = 0; b < c->in.num_reqs; b++) {
    const int32_t l = (int32_t)(uint32_t)((uint64_t)c->in.lengths[b] + (uint32_t)c->in.length_delta);
    t += l > 0 ? l : 0;
  }
  return t;
}

/* full_to_swa over the pool's slots: slot v maps to (v * 3 + 5) mod n, or
 * to -1 every `holes`-th slot (0: none). */
static void swa_map(amp_case *c, int64_t n, int holes) {
  int64_t *s = own(c, (size_t)n, 8), v;
  if (!s) return;
  for (v = 0; v < n; v++) s[v] = holes && v % holes == holes - 1 ? -1 : (v * 3 + 5) % n;
  c->in.full_to_swa = s;
  c->in.swa_map_len = n;
}

/* ---- section 15: the DCP form (rank k of W keeps (x / I) % W == k) ---- */

/* Rank k's count of the positions of [s, s + L) (SGLang's get_dcp_lens). */
static int64_t dcp_kept_before(int64_t x, int64_t W, int64_t k, int64_t I) {
  const int64_t cycle = W * I, m = ((x % cycle) + cycle) % cycle, r = m - k * I;
  return (x - m) / cycle * I + (r < 0 ? 0 : r > I ? I : r);
}
/* The lengths, given as global ones, become rank dcp_rank's. */
static void dcp_lengths(amp_case *c) {
  int64_t *len = (int64_t *)c->in.lengths;
  const int64_t W = c->in.dcp_world, k = c->in.dcp_rank;
  const int64_t I = c->in.dcp_interleave > 1 ? c->in.dcp_interleave : 1;
  int32_t b;
  for (b = 0; b < c->in.num_reqs; b++) {
    const int64_t s = c->in.kv_start_idx ? c->in.kv_start_idx[b] : 0;
    len[b] = dcp_kept_before(s + len[b], W, k, I) - dcp_kept_before(s, W, k, I);
  }
}

/* SGLang's Triton DCP test: an arange pool of 2 x 16, global lengths 7 and
 * 6 from columns 1 and 2, W = 2 (each rank a case). */
static void dcp_triton_slots(amp_case *c, int32_t k) {
  int32_t *t = own(c, 32, 4), i;
  if (!t) return;
  for (i = 0; i < 32; i++) t[i] = i;
  c->in.req_to_token = t;
  c->in.pool_stride = 16;
  c->in.pool_rows = 2;
  c->in.pool_cols = 16;
  reqs(c, 2, I64(c, 0, 1), I64(c, 7, 6));
  c->in.kv_start_idx = I64(c, 1, 2);
  if (c->failed) return;
  c->in.dcp_world = 2;
  c->in.dcp_rank = k;
  c->in.dcp_interleave = 1;
  dcp_lengths(c);
  c->in.capacity = total_tokens(c);
  c->want = "kv_indices kv_indptr_out cache_seqlens";
}
static void dcp_triton_slots_rank0(amp_case *c) { dcp_triton_slots(c, 0); }
static void dcp_triton_slots_rank1(amp_case *c) { dcp_triton_slots(c, 1); }

/* ---- the entries the pool's data needs past what a spec gives ---- */

static int32_t *pool_of(amp_case *c) { return (int32_t *)c->in.req_to_token; }

static void reserved_row0(amp_case *c) { /* SGLang's graph padding reads row 0 */
  memset(pool_of(c), 0, (size_t)c->in.pool_cols * 4);
}
static void negative_entries(amp_case *c) {
  int32_t *t = pool_of(c);
  t[1 * 48 + 0] = -16;
  t[1 * 48 + 17] = -1;
  t[2 * 48 + 32] = INT32_MIN;
}
static void arange_row1(amp_case *c) {
  int k;
  for (k = 0; k < 8; k++) pool_of(c)[8 + k] = k;
}
static void one_negative_entry(amp_case *c) { pool_of(c)[1 * 32 + 8] = -9; }
/* pages of 4 over a pool laid out in 16s */
static void dcp_hostile_entries(amp_case *c) {
  int32_t *t = pool_of(c);
  t[1 * 48 + 3] = -16;
  t[2 * 48 + 2] = -1;
  c->in.page_size = 4;
}

/* ---- the cases ---- */

/* A case as data: `in` its scalar inputs and the arrays it only reads;
 * a pool (pool()) of P rows, `cols` slots in rows `stride` apart, pages of
 * ps drawn from `seed` (from [1, span]); B requests of the rows and lengths
 * given or, with maxlen, drawn from rseed (random_reqs()); full_to_swa of
 * swa_n slots when swa_n (swa_map()); with `global`, the lengths given are
 * global ones and become in.dcp_rank's; `more` changes the data after;
 * last, with `total`, the tokens' total is added to in.capacity. P 0: the
 * case is `more` alone. */
typedef struct spec {
  amr_pool_input in;
  int32_t span, P, cols, ps;
  int64_t stride;
  uint64_t seed;
  int32_t B;
  int64_t rpi[8], len[8];
  int64_t maxlen;
  uint64_t rseed;
  int64_t swa_n;
  int holes, global, total;
  void (*more)(amp_case *c);
  const char *want; /* the outputs built, attnmeta_pool member names, space separated */
} spec;

typedef struct entry {
  const char *name;
  spec s;
} entry;

#define POOL(P_, cols_, stride_, ps_, seed_) \
  .P = P_, .cols = cols_, .stride = stride_, .ps = ps_, .seed = seed_
#define RANDOM(B_, maxlen_, rseed_) .B = B_, .maxlen = maxlen_, .rseed = rseed_
#define PAGES(w, s) .in.page_width = w, .in.page_stride = s
#define TOKENS(w, s) .in.token_width = w, .in.token_stride = s
#define SWA(n, holes_, stride_) .swa_n = n, .holes = holes_, .in.swa_stride = stride_
#define DCP(W, k, I) .in.dcp_world = W, .in.dcp_rank = k, .in.dcp_interleave = I, .global = 1
#define I64S(...) ((const int64_t[]){__VA_ARGS__})
#define I32S(...) ((const int32_t[]){__VA_ARGS__})

/* section 12 (contract), SGLang's sections 10 and 11: FlashInfer's slot lists */
#define SLOT_OUTS "kv_indices kv_indptr_out"
#define SLOTS_BASE POOL(8, 64, 64, 1, 1), .B = 4, .rpi = {3, 0, 7, 5}, .len = {5, 17, 1, 33}
/* section 12: FlashMLA's padded page tables (page_table, cache_seqlens) */
#define PAGE_OUTS "page_table cache_seqlens"
/* section 12: FA3 and TRT-LLM MHA (page table, cache_seqlens, cu_seqlens_k) */
#define FA3_OUTS "page_table cache_seqlens kv_indptr_out"
/* section 13: DSA decode, target verify, draft extend */
#define DSA_OUTS                                                                          \
  "cache_seqlens kv_indptr_out expanded_lens topk_lens topk_indptr token_table page_table " \
  "query_indptr_out"
#define DSA_POOL(seed) POOL(6, 160, 160, 64, seed)
#define DSA_REQS .B = 3, .rpi = {5, 1, 2}, .len = {3, 70, 160}
#define DSA_TABLES TOKENS(160, 168), PAGES(3, 3)
/* hostile device data, a flag each */
#define ERR_OUTS "kv_indices kv_indptr_out"

#define F(f) {#f, {.more = f}}
static const entry table[] = {
    {"slots_decode_b4", {SLOTS_BASE, .total = 1, .want = SLOT_OUTS}},
    {"slots_capacity_tail", {SLOTS_BASE, .in.capacity = 24, .total = 1, .want = SLOT_OUTS}},
    {"slots_capacity_short", {SLOTS_BASE, .in.capacity = 40, .want = SLOT_OUTS}},
    {"slots_kv_indptr_given",
     {SLOTS_BASE, .in.kv_indptr = I32S(0, 8, 30, 31, 70), .in.capacity = 80,
      .want = "kv_indices"}},
    {"slots_kv_indptr_given_lens",
     {SLOTS_BASE, .in.kv_indptr = I32S(2, 7, 24, 26, 59), .in.capacity = 64,
      .want = "kv_indices cache_seqlens"}},
    {"slots_indptr_only", {SLOTS_BASE, .want = "kv_indptr_out"}},
    {"slots_empty_rows",
     {POOL(6, 32, 32, 1, 2), .B = 5, .rpi = {1, 2, 3, 4, 5}, .len = {0, 3, 0, 0, 4},
      .in.capacity = 3, .total = 1, .want = SLOT_OUTS}},
    {"slots_b0", {POOL(4, 16, 16, 1, 3), .B = 0, .in.capacity = 4, .want = SLOT_OUTS}},
    {"slots_kv_start_idx",
     {SLOTS_BASE, .in.kv_start_idx = I64S(2, 0, 60, 31), .total = 1,
      .want = SLOT_OUTS " cache_seqlens"}},
    {"slots_length_delta", {SLOTS_BASE, .in.length_delta = 3, .total = 1, .want = SLOT_OUTS}},
    {"slots_strided_pool",
     {POOL(5, 40, 53, 1, 4), .B = 3, .rpi = {4, 1, 4}, .len = {40, 0, 39}, .total = 1,
      .want = SLOT_OUTS}},
    {"slots_random_b32",
     {POOL(40, 200, 208, 1, 5), RANDOM(32, 200, 55), .total = 1,
      .want = SLOT_OUTS " cache_seqlens"}},
    {"slots_pages16",
     {POOL(6, 96, 96, 16, 6), .B = 3, .rpi = {5, 2, 0}, .len = {17, 96, 1}, .total = 1,
      .want = SLOT_OUTS}},

    {"pages_ps1",
     {POOL(6, 40, 40, 1, 11), .B = 3, .rpi = {5, 0, 2}, .len = {7, 40, 1}, PAGES(40, 40),
      .want = PAGE_OUTS}},
    {"pages_ps16_partial",
     {POOL(6, 64, 64, 16, 12), .B = 4, .rpi = {1, 2, 3, 4}, .len = {1, 16, 17, 40},
      PAGES(4, 6), .want = PAGE_OUTS}},
    {"pages_ps64_flashmla",
     {POOL(5, 512, 512, 64, 13), .B = 4, .rpi = {4, 0, 3, 1}, .len = {64, 65, 300, 1},
      PAGES(8, 8), .want = PAGE_OUTS}},
    {"pages_width_short",
     {POOL(4, 128, 128, 16, 14), .B = 3, .rpi = {1, 2, 3}, .len = {20, 33, 128}, PAGES(2, 3),
      .want = PAGE_OUTS}},
    {"pages_length_cap", /* max_seq_pages 2 */
     {POOL(4, 128, 128, 16, 15), .B = 3, .rpi = {1, 2, 3}, .len = {20, 33, 128},
      .in.length_cap = 2 * 16, PAGES(8, 8), .want = PAGE_OUTS}},
    {"pages_fill_to_width",
     {POOL(4, 96, 96, 16, 16), .B = 3, .rpi = {3, 1, 2}, .len = {0, 17, 96}, PAGES(6, 7),
      .in.fill_to_width = 1, .want = PAGE_OUTS}},
    {"pages_fill_past_pool",
     {POOL(4, 40, 40, 16, 17), .B = 2, .rpi = {3, 1}, .len = {5, 40}, PAGES(4, 4),
      .in.fill_to_width = 1, .want = PAGE_OUTS}},
    {"pages_b0",
     {POOL(2, 16, 16, 16, 18), .B = 0, PAGES(4, 4), .want = PAGE_OUTS " kv_indptr_out"}},
    {"pages_empty_rows",
     {POOL(5, 64, 64, 16, 19), .B = 4, .rpi = {1, 2, 3, 4}, .len = {0, 16, 0, 1}, PAGES(4, 4),
      .want = PAGE_OUTS}},
    {"pages_kv_start_idx",
     {POOL(4, 128, 128, 16, 20), .B = 3, .rpi = {1, 2, 3}, .len = {40, 16, 64},
      .in.kv_start_idx = I64S(16, 32, 64), PAGES(5, 5), .want = PAGE_OUTS}},
    {"pages_swa",
     {.span = 40, POOL(4, 64, 64, 16, 21), .B = 3, .rpi = {1, 2, 3}, .len = {20, 64, 1},
      PAGES(4, 4), SWA(41 * 16, 0, 5), .want = PAGE_OUTS " swa_page_table"}},
    {"pages_swa_ps1",
     {.span = 1000, POOL(4, 24, 24, 1, 22), .B = 3, .rpi = {0, 2, 3}, .len = {3, 24, 10},
      PAGES(24, 24), SWA(1001, 0, 24), .want = "swa_page_table"}},
    {"pages_random",
     {POOL(30, 512, 512, 32, 23), RANDOM(24, 512, 230), PAGES(16, 16), .want = PAGE_OUTS}},

    {"fa3_decode_ps1",
     {POOL(6, 48, 48, 1, 31), .B = 4, .rpi = {5, 1, 2, 0}, .len = {9, 48, 1, 30},
      PAGES(48, 50), .want = FA3_OUTS}},
    {"fa3_decode_ps16",
     {POOL(6, 256, 256, 16, 32), .B = 4, .rpi = {5, 1, 2, 0}, .len = {9, 256, 17, 100},
      PAGES(16, 16), .want = FA3_OUTS}},
    {"fa3_verify_delta3", /* seq_lens exclude the drafts */
     {POOL(6, 128, 128, 16, 33), .B = 3, .rpi = {5, 1, 2}, .len = {13, 29, 100},
      .in.length_delta = 3, PAGES(8, 8), .want = FA3_OUTS}},
    {"fa3_fill_to_width",
     {POOL(5, 128, 128, 16, 34), .B = 3, .rpi = {4, 1, 2}, .len = {1, 50, 128}, PAGES(8, 8),
      .in.fill_to_width = 1, .want = FA3_OUTS}},
    {"fa3_trtllm_ps32_cap",
     {POOL(5, 256, 256, 32, 35), .B = 4, .rpi = {4, 1, 2, 3}, .len = {31, 64, 200, 256},
      .in.length_cap = 4 * 32, PAGES(6, 6), .want = FA3_OUTS}},
    {"fa3_swa",
     {.span = 40, POOL(5, 128, 128, 16, 36), .B = 3, .rpi = {4, 1, 2}, .len = {5, 70, 128},
      PAGES(8, 8), SWA(41 * 16, 0, 8), .want = FA3_OUTS " swa_page_table"}},
    {"fa3_random_b64",
     {POOL(80, 300, 304, 1, 37), RANDOM(64, 300, 370), PAGES(300, 300), .want = FA3_OUTS}},
    /* more requests than any launch has groups: each group takes many, and
     * the scan before a request sums hundreds of rows */
    {"fa3_large_b1024",
     {.span = 4000, POOL(1024, 16, 16, 4, 39), RANDOM(1024, 16, 390), PAGES(4, 4),
      .want = FA3_OUTS}},
    {"fa3_b0", {POOL(2, 16, 16, 1, 38), .B = 0, PAGES(16, 16), .want = FA3_OUTS}},

    {"dsa_decode", {DSA_POOL(41), DSA_REQS, .in.topk = 64, DSA_TABLES, .want = DSA_OUTS}},
    {"dsa_verify_n3",
     {DSA_POOL(42), .B = 3, .rpi = {5, 1, 2}, .len = {1, 67, 157}, .in.topk = 64, DSA_TABLES,
      .in.rows_per_req = 3, .in.length_delta = 3, .want = DSA_OUTS}},
    {"dsa_draft_extend",
     {DSA_POOL(43), DSA_REQS, .in.topk = 64, DSA_TABLES, .in.query_lens = I64S(2, 1, 3),
      .in.num_rows = 6, .want = DSA_OUTS}},
    {"dsa_draft_extend_rows_past",
     {DSA_POOL(43), DSA_REQS, .in.topk = 64, DSA_TABLES, .in.query_lens = I64S(2, 1, 3),
      .in.num_rows = 4, .want = DSA_OUTS}},
    {"dsa_draft_extend_empty",
     {DSA_POOL(44), DSA_REQS, .in.topk = 64, DSA_TABLES, .in.query_lens = I64S(0, 4, 0),
      .in.num_rows = 5, .want = DSA_OUTS}},
    {"dsa_topk_pool",
     {DSA_POOL(45), DSA_REQS, .in.topk = 10, .in.topk_pool = 4, DSA_TABLES,
      .in.rows_per_req = 2, .in.length_delta = 2, .want = DSA_OUTS}},
    {"dsa_graph_padding",
     {DSA_POOL(46), .more = reserved_row0, .B = 5, .rpi = {5, 1, 2, 0, 0},
      .len = {3, 70, 160, 1, 1}, .in.topk = 64, DSA_TABLES, .want = DSA_OUTS}},
    {"dsa_b0", {DSA_POOL(47), .B = 0, .in.topk = 64, DSA_TABLES, .want = DSA_OUTS}},
    {"dsa_length_cap",
     {DSA_POOL(48), DSA_REQS, .in.topk = 64, .in.length_cap = 96, TOKENS(96, 96), PAGES(2, 2),
      .want = DSA_OUTS}},
    {"dsa_token_width_short",
     {DSA_POOL(49), DSA_REQS, .in.topk = 64, TOKENS(64, 65), PAGES(2, 4), .want = DSA_OUTS}},
    {"dsa_zero_widths", /* tables of no columns: every entry past the width */
     {DSA_POOL(52), DSA_REQS, .in.topk = 64, TOKENS(0, 0), PAGES(0, 0), .want = DSA_OUTS}},
    {"dsa_swa",
     {.span = 20, DSA_POOL(50), DSA_REQS, .in.topk = 64, DSA_TABLES, SWA(21 * 64, 0, 3),
      .want = DSA_OUTS " swa_page_table"}},
    {"dsa_random",
     {POOL(20, 256, 256, 64, 51), RANDOM(12, 256, 510), .in.topk = 128, .in.rows_per_req = 2,
      .in.length_delta = 2, TOKENS(256, 256), PAGES(4, 4), .want = DSA_OUTS}},

    {"err_pool_row_negative",
     {POOL(4, 32, 32, 16, 61), .B = 3, .rpi = {1, -1, 2}, .len = {5, 20, 3}, .total = 1,
      PAGES(2, 2), TOKENS(32, 32), .want = ERR_OUTS " page_table token_table"}},
    {"err_pool_row_past",
     {POOL(4, 32, 32, 16, 62), .B = 3, .rpi = {4, 0, INT64_MAX}, .len = {5, 20, 3},
      .total = 1, PAGES(2, 2), .want = ERR_OUTS " page_table"}},
    {"err_column_past",
     {POOL(4, 32, 32, 8, 63), .B = 2, .rpi = {1, 2}, .len = {20, 8},
      .in.kv_start_idx = I64S(20, 30), .total = 1, PAGES(3, 3), TOKENS(20, 20),
      .want = ERR_OUTS " page_table token_table"}},
    {"err_column_negative",
     {POOL(4, 32, 32, 1, 64), .B = 2, .rpi = {1, 2}, .len = {6, 4},
      .in.kv_start_idx = I64S(-3, INT64_MIN), .total = 1, PAGES(6, 6),
      .want = ERR_OUTS " page_table"}},
    {"err_kv_start_idx_wraps",
     {POOL(4, 32, 32, 1, 65), .B = 2, .rpi = {1, 2}, .len = {6, 4},
      .in.kv_start_idx = I64S(((int64_t)1 << 32) + 2, -((int64_t)1 << 32) + 5), .total = 1,
      .want = ERR_OUTS}},
    {"err_negative_entry",
     {POOL(3, 48, 48, 16, 66), .more = negative_entries, .B = 2, .rpi = {1, 2},
      .len = {40, 48}, .total = 1, PAGES(3, 3), TOKENS(48, 48),
      .want = ERR_OUTS " page_table token_table"}},
    {"err_length_negative",
     {POOL(4, 32, 32, 1, 67), .B = 3, .rpi = {1, 2, 3}, .len = {-5, 7, INT64_MIN}, .total = 1,
      PAGES(8, 8), .want = ERR_OUTS " page_table cache_seqlens"}},
    {"err_length_delta_negative",
     {POOL(4, 32, 32, 1, 68), .B = 3, .rpi = {1, 2, 3}, .len = {1, 7, 2},
      .in.length_delta = -2, .total = 1, .want = ERR_OUTS " cache_seqlens"}},
    {"err_length_wraps", /* INT32_MAX + 1 wraps negative */
     {POOL(4, 32, 32, 1, 69), .B = 3, .rpi = {1, 2, 3},
      .len = {((int64_t)1 << 32) + 3, INT32_MAX, ((int64_t)1 << 31) + 1}, .in.length_delta = 1,
      .total = 1, .want = ERR_OUTS " cache_seqlens"}},
    {"err_scan_overflow",
     {POOL(4, 32, 32, 1, 70), .B = 3, .rpi = {1, 2, 3}, .len = {INT32_MAX - 2, 5, 7},
      .want = "kv_indptr_out cache_seqlens"}},
    /* no topk_indptr: its scan would sum the clipped lengths of 2^31 rows */
    {"err_query_indptr_overflow",
     {POOL(4, 32, 32, 1, 71), .B = 3, .rpi = {1, 2, 3}, .len = {4, 5, 6},
      .in.query_lens = I64S(INT32_MAX, 5, 2), .in.num_rows = 4, .in.topk = 8,
      .want = "query_indptr_out expanded_lens topk_lens cache_seqlens"}},
    {"err_kv_indptr_decreasing",
     {SLOTS_BASE, .in.kv_indptr = I32S(0, 10, 5, 40, 80), .in.capacity = 80,
      .want = "kv_indices"}},
    {"err_kv_indptr_short_place",
     {SLOTS_BASE, .in.kv_indptr = I32S(0, 3, 20, 21, 40), .in.capacity = 60,
      .want = "kv_indices"}},
    {"err_kv_indptr_negative",
     {SLOTS_BASE, .in.kv_indptr = I32S(-4, 1, 18, 19, 52), .in.capacity = 60,
      .want = "kv_indices"}},
    {"err_kv_indptr_past_capacity",
     {SLOTS_BASE, .in.kv_indptr = I32S(0, 5, 22, 23, 56), .in.capacity = 30,
      .want = "kv_indices"}},
    {"err_swa_slot_past_map", /* pages drawn up to 40: about half past the map */
     {.span = 40, POOL(4, 64, 64, 16, 72), .B = 2, .rpi = {1, 2}, .len = {64, 40},
      PAGES(4, 4), SWA(20 * 16, 0, 4), .want = "page_table swa_page_table"}},
    {"err_swa_negative_map",
     {.span = 40, POOL(4, 64, 64, 16, 73), .B = 2, .rpi = {1, 2}, .len = {64, 40},
      PAGES(4, 4), SWA(41 * 16, 3, 4), .want = "swa_page_table"}},
    {"err_swa_page_huge",
     {POOL(2, 8, 8, 1, 74), .more = arange_row1, .B = 1, .rpi = {1}, .len = {8}, PAGES(8, 8),
      .in.full_to_swa =
          I64S(0, 1, INT32_MAX, (int64_t)INT32_MAX + 1, INT64_MAX, -1, INT64_MIN, 7),
      .in.swa_map_len = 8, .in.swa_stride = 8, .want = "swa_page_table"}},
    {"err_query_lens_negative",
     {DSA_POOL(75), DSA_REQS, .in.topk = 64, DSA_TABLES, .in.query_lens = I64S(2, -3, 1),
      .in.num_rows = 3, .want = DSA_OUTS}},
    {"err_every_flag",
     {.span = 40, POOL(4, 32, 32, 8, 76), .more = one_negative_entry, .B = 4,
      .rpi = {1, 9, 2, 3}, .len = {20, 4, -1, 40}, .in.capacity = 30, PAGES(3, 3),
      SWA(41 * 8, 5, 3), .in.topk = 16, TOKENS(24, 24),
      .want = ERR_OUTS " page_table cache_seqlens expanded_lens topk_lens topk_indptr "
                       "token_table swa_page_table query_indptr_out"}},

    F(dcp_triton_slots_rank0),
    F(dcp_triton_slots_rank1),
    {"dcp_slots_w4_rank3",
     {POOL(12, 300, 304, 1, 81), RANDOM(16, 300, 810), DCP(4, 3, 1), .total = 1,
      .want = "kv_indices kv_indptr_out"}},
    {"dcp_slots_kv_indptr_given",
     {POOL(6, 64, 64, 1, 82), .B = 3, .rpi = {5, 0, 2}, .len = {64, 9, 30},
      .in.kv_start_idx = I64S(0, 5, 33), DCP(3, 2, 1), .in.kv_indptr = I32S(0, 21, 24, 34),
      .in.capacity = 34, .want = "kv_indices"}},
    /* create_mla_kv_page_table_for_dcp: FlashMLA's pages of 64, W = 4 */
    {"dcp_mla_pages_ps64",
     {POOL(5, 2048, 2048, 64, 83), .B = 4, .rpi = {4, 0, 3, 1}, .len = {1, 257, 2048, 1000},
      DCP(4, 2, 1), PAGES(8, 8), .want = "page_table cache_seqlens kv_indptr_out"}},
    /* the interleave of a page (NPU DSA: interleave_size = page size 16) */
    {"dcp_interleave_ps16",
     {POOL(4, 256, 256, 16, 84), .B = 3, .rpi = {1, 2, 3}, .len = {17, 100, 256},
      DCP(2, 1, 16), .total = 1, PAGES(8, 8), TOKENS(128, 130),
      .want = "kv_indices kv_indptr_out page_table token_table cache_seqlens"}},
    {"dcp_interleave3_w8",
     {POOL(6, 200, 200, 1, 85), RANDOM(9, 190, 850),
      .in.kv_start_idx = I64S(0, 1, 2, 3, 4, 5, 6, 7, 8), DCP(8, 5, 3), .total = 1,
      TOKENS(40, 40), .want = "kv_indices kv_indptr_out token_table"}},
    /* hostile data under DCP: negative entries (-1, flag 64), a row outside
     * the pool (1024), a count past the row (32) */
    {"dcp_err_hostile",
     {POOL(3, 48, 48, 16, 86), .more = dcp_hostile_entries, .B = 3, .rpi = {1, 2, 7},
      .len = {12, 30, 4}, .in.dcp_world = 4, .in.dcp_rank = 3, .total = 1, PAGES(4, 4),
      .want = "kv_indices kv_indptr_out page_table"}},
};
#undef F

/* Makes the case that s describes (see spec). */
static void build(amp_case *c, const spec *s) {
  if (!s->P) {
    s->more(c);
    return;
  }
  c->span = s->span;
  c->in = s->in;
  pool(c, s->P, s->cols, s->stride, s->ps, s->seed);
  if (s->maxlen)
    random_reqs(c, s->B, s->maxlen, s->rseed);
  else
    reqs(c, s->B, i64s(c, s->B, s->rpi), i64s(c, s->B, s->len));
  if (s->swa_n) swa_map(c, s->swa_n, s->holes);
  if (c->failed) return;
  if (s->global) dcp_lengths(c);
  if (s->more) s->more(c);
  if (s->total) c->in.capacity += total_tokens(c);
  c->want = s->want;
}

int amp_num_cases(void) { return (int)(sizeof table / sizeof table[0]); }
const char *amp_case_name(int i) { return i >= 0 && i < amp_num_cases() ? table[i].name : NULL; }

amp_case *amp_case_make(int i) {
  amp_case *c;
  if (i < 0 || i >= amp_num_cases()) return NULL;
  c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->name = table[i].name;
  c->in.page_size = 1;
  build(c, &table[i].s);
  if (c->failed) {
    amp_case_free(c);
    return NULL;
  }
  return c;
}

void amp_case_free(amp_case *c) {
  int i;
  if (!c) return;
  for (i = 0; i < c->nowned; i++) free(c->owned[i]);
  free(c);
}
