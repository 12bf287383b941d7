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
static int32_t *i32s(amp_case *c, int n, const int32_t *v) {
  int32_t *p = own(c, (size_t)n, 4);
  if (p) memcpy(p, v, (size_t)n * 4);
  return p;
}
#define I64(c, ...) i64s(c, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8), (int64_t[]){__VA_ARGS__})
#define I32(c, ...) i32s(c, (int)(sizeof((int32_t[]){__VA_ARGS__}) / 4), (int32_t[]){__VA_ARGS__})

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

static void pages(amp_case *c, int32_t width, int64_t stride) {
  c->in.page_width = width;
  c->in.page_stride = stride;
}

static void tokens(amp_case *c, int32_t width, int64_t stride) {
  c->in.token_width = width;
  c->in.token_stride = stride;
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

/* ---- section 12 (contract), SGLang's sections 10 and 11: FlashInfer's slot lists ---- */

#define SLOT_OUTS "kv_indices kv_indptr_out"

static void slots_base(amp_case *c) {
  pool(c, 8, 64, 64, 1, 1);
  reqs(c, 4, I64(c, 3, 0, 7, 5), I64(c, 5, 17, 1, 33));
  c->want = SLOT_OUTS;
}
static void slots_decode_b4(amp_case *c) {
  slots_base(c);
  c->in.capacity = total_tokens(c);
}
static void slots_capacity_tail(amp_case *c) {
  slots_base(c);
  c->in.capacity = total_tokens(c) + 24;
}
static void slots_capacity_short(amp_case *c) {
  slots_base(c);
  c->in.capacity = 40;
}
static void slots_kv_indptr_given(amp_case *c) {
  slots_base(c);
  c->in.kv_indptr = I32(c, 0, 8, 30, 31, 70);
  c->in.capacity = 80;
  c->want = "kv_indices";
}
static void slots_kv_indptr_given_lens(amp_case *c) {
  slots_base(c);
  c->in.kv_indptr = I32(c, 2, 7, 24, 26, 59);
  c->in.capacity = 64;
  c->want = "kv_indices cache_seqlens";
}
static void slots_indptr_only(amp_case *c) {
  slots_base(c);
  c->want = "kv_indptr_out";
}
static void slots_empty_rows(amp_case *c) {
  pool(c, 6, 32, 32, 1, 2);
  reqs(c, 5, I64(c, 1, 2, 3, 4, 5), I64(c, 0, 3, 0, 0, 4));
  c->in.capacity = total_tokens(c) + 3;
  c->want = SLOT_OUTS;
}
static void slots_b0(amp_case *c) {
  pool(c, 4, 16, 16, 1, 3);
  reqs(c, 0, I64(c, 0), I64(c, 0));
  c->in.capacity = 4;
  c->want = SLOT_OUTS;
}
static void slots_kv_start_idx(amp_case *c) {
  slots_base(c);
  c->in.kv_start_idx = I64(c, 2, 0, 60, 31);
  c->in.capacity = total_tokens(c);
  c->want = SLOT_OUTS " cache_seqlens";
}
static void slots_length_delta(amp_case *c) {
  slots_base(c);
  c->in.length_delta = 3;
  c->in.capacity = total_tokens(c);
}
static void slots_strided_pool(amp_case *c) {
  pool(c, 5, 40, 53, 1, 4);
  reqs(c, 3, I64(c, 4, 1, 4), I64(c, 40, 0, 39));
  c->in.capacity = total_tokens(c);
  c->want = SLOT_OUTS;
}
static void slots_random_b32(amp_case *c) {
  pool(c, 40, 200, 208, 1, 5);
  random_reqs(c, 32, 200, 55);
  c->in.capacity = total_tokens(c);
  c->want = SLOT_OUTS " cache_seqlens";
}
static void slots_pages16(amp_case *c) {
  pool(c, 6, 96, 96, 16, 6);
  reqs(c, 3, I64(c, 5, 2, 0), I64(c, 17, 96, 1));
  c->in.capacity = total_tokens(c);
  c->want = SLOT_OUTS;
}

/* ---- section 12: FlashMLA's padded page tables (page_table, cache_seqlens) ---- */

#define PAGE_OUTS "page_table cache_seqlens"

static void pages_ps1(amp_case *c) {
  pool(c, 6, 40, 40, 1, 11);
  reqs(c, 3, I64(c, 5, 0, 2), I64(c, 7, 40, 1));
  pages(c, 40, 40);
  c->want = PAGE_OUTS;
}
static void pages_ps16_partial(amp_case *c) {
  pool(c, 6, 64, 64, 16, 12);
  reqs(c, 4, I64(c, 1, 2, 3, 4), I64(c, 1, 16, 17, 40));
  pages(c, 4, 6);
  c->want = PAGE_OUTS;
}
static void pages_ps64_flashmla(amp_case *c) {
  pool(c, 5, 512, 512, 64, 13);
  reqs(c, 4, I64(c, 4, 0, 3, 1), I64(c, 64, 65, 300, 1));
  pages(c, 8, 8);
  c->want = PAGE_OUTS;
}
static void pages_width_short(amp_case *c) {
  pool(c, 4, 128, 128, 16, 14);
  reqs(c, 3, I64(c, 1, 2, 3), I64(c, 20, 33, 128));
  pages(c, 2, 3);
  c->want = PAGE_OUTS;
}
static void pages_length_cap(amp_case *c) {
  pool(c, 4, 128, 128, 16, 15);
  reqs(c, 3, I64(c, 1, 2, 3), I64(c, 20, 33, 128));
  c->in.length_cap = 2 * 16; /* max_seq_pages 2 */
  pages(c, 8, 8);
  c->want = PAGE_OUTS;
}
static void pages_fill_to_width(amp_case *c) {
  pool(c, 4, 96, 96, 16, 16);
  reqs(c, 3, I64(c, 3, 1, 2), I64(c, 0, 17, 96));
  pages(c, 6, 7);
  c->in.fill_to_width = 1;
  c->want = PAGE_OUTS;
}
static void pages_fill_past_pool(amp_case *c) {
  pool(c, 4, 40, 40, 16, 17);
  reqs(c, 2, I64(c, 3, 1), I64(c, 5, 40));
  pages(c, 4, 4);
  c->in.fill_to_width = 1;
  c->want = PAGE_OUTS;
}
static void pages_b0(amp_case *c) {
  pool(c, 2, 16, 16, 16, 18);
  reqs(c, 0, I64(c, 0), I64(c, 0));
  pages(c, 4, 4);
  c->want = PAGE_OUTS " kv_indptr_out";
}
static void pages_empty_rows(amp_case *c) {
  pool(c, 5, 64, 64, 16, 19);
  reqs(c, 4, I64(c, 1, 2, 3, 4), I64(c, 0, 16, 0, 1));
  pages(c, 4, 4);
  c->want = PAGE_OUTS;
}
static void pages_kv_start_idx(amp_case *c) {
  pool(c, 4, 128, 128, 16, 20);
  reqs(c, 3, I64(c, 1, 2, 3), I64(c, 40, 16, 64));
  c->in.kv_start_idx = I64(c, 16, 32, 64);
  pages(c, 5, 5);
  c->want = PAGE_OUTS;
}
static void pages_swa(amp_case *c) {
  c->span = 40;
  pool(c, 4, 64, 64, 16, 21);
  reqs(c, 3, I64(c, 1, 2, 3), I64(c, 20, 64, 1));
  pages(c, 4, 4);
  swa_map(c, 41 * 16, 0);
  c->in.swa_stride = 5;
  c->want = PAGE_OUTS " swa_page_table";
}
static void pages_swa_ps1(amp_case *c) {
  c->span = 1000;
  pool(c, 4, 24, 24, 1, 22);
  reqs(c, 3, I64(c, 0, 2, 3), I64(c, 3, 24, 10));
  pages(c, 24, 24);
  swa_map(c, 1001, 0);
  c->in.swa_stride = 24;
  c->want = "swa_page_table";
}
static void pages_random(amp_case *c) {
  pool(c, 30, 512, 512, 32, 23);
  random_reqs(c, 24, 512, 230);
  pages(c, 16, 16);
  c->want = PAGE_OUTS;
}

/* ---- section 12: FA3 and TRT-LLM MHA (page table, cache_seqlens, cu_seqlens_k) ---- */

#define FA3_OUTS "page_table cache_seqlens kv_indptr_out"

static void fa3_decode_ps1(amp_case *c) {
  pool(c, 6, 48, 48, 1, 31);
  reqs(c, 4, I64(c, 5, 1, 2, 0), I64(c, 9, 48, 1, 30));
  pages(c, 48, 50);
  c->want = FA3_OUTS;
}
static void fa3_decode_ps16(amp_case *c) {
  pool(c, 6, 256, 256, 16, 32);
  reqs(c, 4, I64(c, 5, 1, 2, 0), I64(c, 9, 256, 17, 100));
  pages(c, 16, 16);
  c->want = FA3_OUTS;
}
static void fa3_verify_delta3(amp_case *c) {
  pool(c, 6, 128, 128, 16, 33);
  reqs(c, 3, I64(c, 5, 1, 2), I64(c, 13, 29, 100));
  c->in.length_delta = 3; /* seq_lens exclude the drafts */
  pages(c, 8, 8);
  c->want = FA3_OUTS;
}
static void fa3_fill_to_width(amp_case *c) {
  pool(c, 5, 128, 128, 16, 34);
  reqs(c, 3, I64(c, 4, 1, 2), I64(c, 1, 50, 128));
  pages(c, 8, 8);
  c->in.fill_to_width = 1;
  c->want = FA3_OUTS;
}
static void fa3_trtllm_ps32_cap(amp_case *c) {
  pool(c, 5, 256, 256, 32, 35);
  reqs(c, 4, I64(c, 4, 1, 2, 3), I64(c, 31, 64, 200, 256));
  c->in.length_cap = 4 * 32;
  pages(c, 6, 6);
  c->want = FA3_OUTS;
}
static void fa3_swa(amp_case *c) {
  c->span = 40;
  pool(c, 5, 128, 128, 16, 36);
  reqs(c, 3, I64(c, 4, 1, 2), I64(c, 5, 70, 128));
  pages(c, 8, 8);
  swa_map(c, 41 * 16, 0);
  c->in.swa_stride = 8;
  c->want = FA3_OUTS " swa_page_table";
}
static void fa3_random_b64(amp_case *c) {
  pool(c, 80, 300, 304, 1, 37);
  random_reqs(c, 64, 300, 370);
  pages(c, 300, 300);
  c->want = FA3_OUTS;
}
/* more requests than any launch has groups: each group takes many, and
 * the scan before a request sums hundreds of rows */
static void fa3_large_b1024(amp_case *c) {
  c->span = 4000;
  pool(c, 1024, 16, 16, 4, 39);
  random_reqs(c, 1024, 16, 390);
  pages(c, 4, 4);
  c->want = FA3_OUTS;
}
static void fa3_b0(amp_case *c) {
  pool(c, 2, 16, 16, 1, 38);
  reqs(c, 0, I64(c, 0), I64(c, 0));
  pages(c, 16, 16);
  c->want = FA3_OUTS;
}

/* ---- section 13: DSA decode, target verify, draft extend ---- */

#define DSA_OUTS                                                                          \
  "cache_seqlens kv_indptr_out expanded_lens topk_lens topk_indptr token_table page_table " \
  "query_indptr_out"

static void dsa_base(amp_case *c, uint64_t seed) {
  pool(c, 6, 160, 160, 64, seed);
  reqs(c, 3, I64(c, 5, 1, 2), I64(c, 3, 70, 160));
  c->in.topk = 64;
  tokens(c, 160, 168);
  pages(c, 3, 3);
  c->want = DSA_OUTS;
}
static void dsa_decode(amp_case *c) { dsa_base(c, 41); }
static void dsa_verify_n3(amp_case *c) {
  dsa_base(c, 42);
  c->in.lengths = I64(c, 1, 67, 157);
  c->in.rows_per_req = 3;
  c->in.length_delta = 3;
}
static void dsa_draft_extend(amp_case *c) {
  dsa_base(c, 43);
  c->in.query_lens = I64(c, 2, 1, 3);
  c->in.num_rows = 6;
}
static void dsa_draft_extend_rows_past(amp_case *c) {
  dsa_draft_extend(c);
  c->in.num_rows = 4;
}
static void dsa_draft_extend_empty(amp_case *c) {
  dsa_base(c, 44);
  c->in.query_lens = I64(c, 0, 4, 0);
  c->in.num_rows = 5;
}
static void dsa_topk_pool(amp_case *c) {
  dsa_base(c, 45);
  c->in.topk = 10;
  c->in.topk_pool = 4;
  c->in.rows_per_req = 2;
  c->in.length_delta = 2;
}
static void dsa_graph_padding(amp_case *c) {
  int32_t *t;
  dsa_base(c, 46);
  t = (int32_t *)c->in.req_to_token;
  if (t) memset(t, 0, (size_t)c->in.pool_cols * 4); /* the reserved row 0 */
  reqs(c, 5, I64(c, 5, 1, 2, 0, 0), I64(c, 3, 70, 160, 1, 1));
}
static void dsa_b0(amp_case *c) {
  dsa_base(c, 47);
  reqs(c, 0, I64(c, 0), I64(c, 0));
}
static void dsa_length_cap(amp_case *c) {
  dsa_base(c, 48);
  c->in.length_cap = 96;
  tokens(c, 96, 96);
  pages(c, 2, 2);
}
static void dsa_token_width_short(amp_case *c) {
  dsa_base(c, 49);
  tokens(c, 64, 65);
  pages(c, 2, 4);
}
static void dsa_zero_widths(amp_case *c) {
  dsa_base(c, 52);
  tokens(c, 0, 0); /* tables of no columns: every entry past the width */
  pages(c, 0, 0);
}
static void dsa_swa(amp_case *c) {
  c->span = 20;
  dsa_base(c, 50);
  swa_map(c, 21 * 64, 0);
  c->in.swa_stride = 3;
  c->want = DSA_OUTS " swa_page_table";
}
static void dsa_random(amp_case *c) {
  pool(c, 20, 256, 256, 64, 51);
  random_reqs(c, 12, 256, 510);
  c->in.topk = 128;
  c->in.rows_per_req = 2;
  c->in.length_delta = 2;
  tokens(c, 256, 256);
  pages(c, 4, 4);
  c->want = DSA_OUTS;
}

/* ---- hostile device data, a flag each ---- */

static void err_pool_row_negative(amp_case *c) {
  pool(c, 4, 32, 32, 16, 61);
  reqs(c, 3, I64(c, 1, -1, 2), I64(c, 5, 20, 3));
  c->in.capacity = total_tokens(c);
  pages(c, 2, 2);
  tokens(c, 32, 32);
  c->want = "kv_indices kv_indptr_out page_table token_table";
}
static void err_pool_row_past(amp_case *c) {
  pool(c, 4, 32, 32, 16, 62);
  reqs(c, 3, I64(c, 4, 0, INT64_MAX), I64(c, 5, 20, 3));
  c->in.capacity = total_tokens(c);
  pages(c, 2, 2);
  c->want = "kv_indices kv_indptr_out page_table";
}
static void err_column_past(amp_case *c) {
  pool(c, 4, 32, 32, 8, 63);
  reqs(c, 2, I64(c, 1, 2), I64(c, 20, 8));
  c->in.kv_start_idx = I64(c, 20, 30);
  c->in.capacity = total_tokens(c);
  pages(c, 3, 3);
  tokens(c, 20, 20);
  c->want = "kv_indices kv_indptr_out page_table token_table";
}
static void err_column_negative(amp_case *c) {
  pool(c, 4, 32, 32, 1, 64);
  reqs(c, 2, I64(c, 1, 2), I64(c, 6, 4));
  c->in.kv_start_idx = I64(c, -3, INT64_MIN);
  c->in.capacity = total_tokens(c);
  pages(c, 6, 6);
  c->want = "kv_indices kv_indptr_out page_table";
}
static void err_kv_start_idx_wraps(amp_case *c) {
  pool(c, 4, 32, 32, 1, 65);
  reqs(c, 2, I64(c, 1, 2), I64(c, 6, 4));
  c->in.kv_start_idx = I64(c, ((int64_t)1 << 32) + 2, -((int64_t)1 << 32) + 5);
  c->in.capacity = total_tokens(c);
  c->want = "kv_indices kv_indptr_out";
}
static void err_negative_entry(amp_case *c) {
  int32_t *t = pool(c, 3, 48, 48, 16, 66);
  if (t) {
    t[1 * 48 + 0] = -16;
    t[1 * 48 + 17] = -1;
    t[2 * 48 + 32] = INT32_MIN;
  }
  reqs(c, 2, I64(c, 1, 2), I64(c, 40, 48));
  c->in.capacity = total_tokens(c);
  pages(c, 3, 3);
  tokens(c, 48, 48);
  c->want = "kv_indices kv_indptr_out page_table token_table";
}
static void err_length_negative(amp_case *c) {
  pool(c, 4, 32, 32, 1, 67);
  reqs(c, 3, I64(c, 1, 2, 3), I64(c, -5, 7, INT64_MIN));
  c->in.capacity = total_tokens(c);
  pages(c, 8, 8);
  c->want = "kv_indices kv_indptr_out page_table cache_seqlens";
}
static void err_length_delta_negative(amp_case *c) {
  pool(c, 4, 32, 32, 1, 68);
  reqs(c, 3, I64(c, 1, 2, 3), I64(c, 1, 7, 2));
  c->in.length_delta = -2;
  c->in.capacity = total_tokens(c);
  c->want = "kv_indices kv_indptr_out cache_seqlens";
}
static void err_length_wraps(amp_case *c) {
  pool(c, 4, 32, 32, 1, 69);
  reqs(c, 3, I64(c, 1, 2, 3), I64(c, ((int64_t)1 << 32) + 3, INT32_MAX, ((int64_t)1 << 31) + 1));
  c->in.length_delta = 1; /* INT32_MAX + 1 wraps negative */
  c->in.capacity = total_tokens(c);
  c->want = "kv_indices kv_indptr_out cache_seqlens";
}
static void err_scan_overflow(amp_case *c) {
  pool(c, 4, 32, 32, 1, 70);
  reqs(c, 3, I64(c, 1, 2, 3), I64(c, INT32_MAX - 2, 5, 7));
  c->want = "kv_indptr_out cache_seqlens";
}
static void err_query_indptr_overflow(amp_case *c) {
  pool(c, 4, 32, 32, 1, 71);
  reqs(c, 3, I64(c, 1, 2, 3), I64(c, 4, 5, 6));
  c->in.query_lens = I64(c, INT32_MAX, 5, 2);
  c->in.num_rows = 4;
  c->in.topk = 8; /* no topk_indptr: its scan would sum the clipped lengths of 2^31 rows */
  c->want = "query_indptr_out expanded_lens topk_lens cache_seqlens";
}
static void err_kv_indptr_decreasing(amp_case *c) {
  slots_base(c);
  c->in.kv_indptr = I32(c, 0, 10, 5, 40, 80);
  c->in.capacity = 80;
  c->want = "kv_indices";
}
static void err_kv_indptr_short_place(amp_case *c) {
  slots_base(c);
  c->in.kv_indptr = I32(c, 0, 3, 20, 21, 40);
  c->in.capacity = 60;
  c->want = "kv_indices";
}
static void err_kv_indptr_negative(amp_case *c) {
  slots_base(c);
  c->in.kv_indptr = I32(c, -4, 1, 18, 19, 52);
  c->in.capacity = 60;
  c->want = "kv_indices";
}
static void err_kv_indptr_past_capacity(amp_case *c) {
  slots_base(c);
  c->in.kv_indptr = I32(c, 0, 5, 22, 23, 56);
  c->in.capacity = 30;
  c->want = "kv_indices";
}
static void err_swa_slot_past_map(amp_case *c) {
  c->span = 40;
  pool(c, 4, 64, 64, 16, 72);
  reqs(c, 2, I64(c, 1, 2), I64(c, 64, 40));
  pages(c, 4, 4);
  swa_map(c, 20 * 16, 0); /* pages drawn up to 40: about half past the map */
  c->in.swa_stride = 4;
  c->want = "page_table swa_page_table";
}
static void err_swa_negative_map(amp_case *c) {
  c->span = 40;
  pool(c, 4, 64, 64, 16, 73);
  reqs(c, 2, I64(c, 1, 2), I64(c, 64, 40));
  pages(c, 4, 4);
  swa_map(c, 41 * 16, 3);
  c->in.swa_stride = 4;
  c->want = "swa_page_table";
}
static void err_swa_page_huge(amp_case *c) {
  int64_t *s;
  int32_t *t = pool(c, 2, 8, 8, 1, 74);
  if (t) {
    int k;
    for (k = 0; k < 8; k++) t[8 + k] = k;
  }
  reqs(c, 1, I64(c, 1), I64(c, 8));
  pages(c, 8, 8);
  s = I64(c, 0, 1, INT32_MAX, (int64_t)INT32_MAX + 1, INT64_MAX, -1, INT64_MIN, 7);
  c->in.full_to_swa = s;
  c->in.swa_map_len = 8;
  c->in.swa_stride = 8;
  c->want = "swa_page_table";
}
static void err_query_lens_negative(amp_case *c) {
  dsa_base(c, 75);
  c->in.query_lens = I64(c, 2, -3, 1);
  c->in.num_rows = 3;
}
static void err_every_flag(amp_case *c) {
  int32_t *t;
  c->span = 40;
  t = pool(c, 4, 32, 32, 8, 76);
  if (t) t[1 * 32 + 8] = -9;
  reqs(c, 4, I64(c, 1, 9, 2, 3), I64(c, 20, 4, -1, 40));
  c->in.capacity = 30;
  pages(c, 3, 3);
  swa_map(c, 41 * 8, 5);
  c->in.swa_stride = 3;
  c->in.topk = 16;
  tokens(c, 24, 24);
  c->want = "kv_indices kv_indptr_out page_table cache_seqlens expanded_lens topk_lens "
            "topk_indptr token_table swa_page_table query_indptr_out";
}

/* ---- section 15: the DCP form (rank k of W keeps (x / I) % W == k) ---- */

/* Rank k's count of the positions of [s, s + L) (SGLang's get_dcp_lens),
 * for the lengths given as global ones: they become the rank's. */
static int64_t dcp_kept_before(int64_t x, int64_t W, int64_t k, int64_t I) {
  const int64_t cycle = W * I, m = ((x % cycle) + cycle) % cycle, r = m - k * I;
  return (x - m) / cycle * I + (r < 0 ? 0 : r > I ? I : r);
}
static void dcp(amp_case *c, int32_t W, int32_t k, int32_t I) {
  int64_t *len = (int64_t *)c->in.lengths;
  int32_t b;
  c->in.dcp_world = W;
  c->in.dcp_rank = k;
  c->in.dcp_interleave = I;
  for (b = 0; b < c->in.num_reqs; b++) {
    const int64_t s = c->in.kv_start_idx ? c->in.kv_start_idx[b] : 0;
    len[b] = dcp_kept_before(s + len[b], W, k, I > 1 ? I : 1) - dcp_kept_before(s, W, k, I > 1 ? I : 1);
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
  dcp(c, 2, k, 1);
  c->in.capacity = total_tokens(c);
  c->want = "kv_indices kv_indptr_out cache_seqlens";
}
static void dcp_triton_slots_rank0(amp_case *c) { dcp_triton_slots(c, 0); }
static void dcp_triton_slots_rank1(amp_case *c) { dcp_triton_slots(c, 1); }
static void dcp_slots_w4_rank3(amp_case *c) {
  pool(c, 12, 300, 304, 1, 81);
  random_reqs(c, 16, 300, 810);
  dcp(c, 4, 3, 1);
  c->in.capacity = total_tokens(c);
  c->want = "kv_indices kv_indptr_out";
}
static void dcp_slots_kv_indptr_given(amp_case *c) {
  pool(c, 6, 64, 64, 1, 82);
  reqs(c, 3, I64(c, 5, 0, 2), I64(c, 64, 9, 30));
  c->in.kv_start_idx = I64(c, 0, 5, 33);
  dcp(c, 3, 2, 1);
  c->in.kv_indptr = I32(c, 0, 21, 24, 34);
  c->in.capacity = 34;
  c->want = "kv_indices";
}
/* create_mla_kv_page_table_for_dcp: FlashMLA's pages of 64, W = 4. */
static void dcp_mla_pages_ps64(amp_case *c) {
  pool(c, 5, 2048, 2048, 64, 83);
  reqs(c, 4, I64(c, 4, 0, 3, 1), I64(c, 1, 257, 2048, 1000));
  dcp(c, 4, 2, 1);
  pages(c, 8, 8);
  c->want = "page_table cache_seqlens kv_indptr_out";
}
/* The interleave of a page (NPU DSA: interleave_size = page size 16). */
static void dcp_interleave_ps16(amp_case *c) {
  pool(c, 4, 256, 256, 16, 84);
  reqs(c, 3, I64(c, 1, 2, 3), I64(c, 17, 100, 256));
  dcp(c, 2, 1, 16);
  c->in.capacity = total_tokens(c);
  pages(c, 8, 8);
  tokens(c, 128, 130);
  c->want = "kv_indices kv_indptr_out page_table token_table cache_seqlens";
}
static void dcp_interleave3_w8(amp_case *c) {
  pool(c, 6, 200, 200, 1, 85);
  random_reqs(c, 9, 190, 850);
  c->in.kv_start_idx = I64(c, 0, 1, 2, 3, 4, 5, 6, 7, 8);
  dcp(c, 8, 5, 3);
  c->in.capacity = total_tokens(c);
  tokens(c, 40, 40);
  c->want = "kv_indices kv_indptr_out token_table";
}
/* Hostile data under DCP: negative entries (-1, flag 64), a row outside
 * the pool (1024), a count past the row (32). */
static void dcp_err_hostile(amp_case *c) {
  int32_t *t = pool(c, 3, 48, 48, 16, 86);
  if (t) {
    t[1 * 48 + 3] = -16;
    t[2 * 48 + 2] = -1;
  }
  reqs(c, 3, I64(c, 1, 2, 7), I64(c, 12, 30, 4));
  c->in.dcp_world = 4;
  c->in.dcp_rank = 3;
  c->in.capacity = total_tokens(c);
  pages(c, 4, 4);
  c->in.page_size = 4;
  c->want = "kv_indices kv_indptr_out page_table";
}

typedef struct entry {
  const char *name;
  void (*make)(amp_case *c);
} entry;

#define E(f) {#f, f}
static const entry table[] = {
    E(slots_decode_b4),        E(slots_capacity_tail),      E(slots_capacity_short),
    E(slots_kv_indptr_given),  E(slots_kv_indptr_given_lens), E(slots_indptr_only),
    E(slots_empty_rows),       E(slots_b0),                 E(slots_kv_start_idx),
    E(slots_length_delta),     E(slots_strided_pool),       E(slots_random_b32),
    E(slots_pages16),
    E(pages_ps1),              E(pages_ps16_partial),       E(pages_ps64_flashmla),
    E(pages_width_short),      E(pages_length_cap),         E(pages_fill_to_width),
    E(pages_fill_past_pool),   E(pages_b0),                 E(pages_empty_rows),
    E(pages_kv_start_idx),     E(pages_swa),                E(pages_swa_ps1),
    E(pages_random),
    E(fa3_decode_ps1),         E(fa3_decode_ps16),          E(fa3_verify_delta3),
    E(fa3_fill_to_width),      E(fa3_trtllm_ps32_cap),      E(fa3_swa),
    E(fa3_random_b64),         E(fa3_large_b1024),          E(fa3_b0),
    E(dsa_decode),             E(dsa_verify_n3),            E(dsa_draft_extend),
    E(dsa_draft_extend_rows_past), E(dsa_draft_extend_empty), E(dsa_topk_pool),
    E(dsa_graph_padding),      E(dsa_b0),                   E(dsa_length_cap),
    E(dsa_token_width_short),  E(dsa_zero_widths),          E(dsa_swa),
    E(dsa_random),
    E(err_pool_row_negative),  E(err_pool_row_past),        E(err_column_past),
    E(err_column_negative),    E(err_kv_start_idx_wraps),   E(err_negative_entry),
    E(err_length_negative),    E(err_length_delta_negative), E(err_length_wraps),
    E(err_scan_overflow),      E(err_query_indptr_overflow), E(err_kv_indptr_decreasing),
    E(err_kv_indptr_short_place), E(err_kv_indptr_negative), E(err_kv_indptr_past_capacity),
    E(err_swa_slot_past_map),  E(err_swa_negative_map),     E(err_swa_page_huge),
    E(err_query_lens_negative), E(err_every_flag),
    E(dcp_triton_slots_rank0), E(dcp_triton_slots_rank1),   E(dcp_slots_w4_rank3),
    E(dcp_slots_kv_indptr_given), E(dcp_mla_pages_ps64),    E(dcp_interleave_ps16),
    E(dcp_interleave3_w8),     E(dcp_err_hostile),
};
#undef E

int amp_num_cases(void) { return (int)(sizeof table / sizeof table[0]); }
const char *amp_case_name(int i) { return i >= 0 && i < amp_num_cases() ? table[i].name : NULL; }

amp_case *amp_case_make(int i) {
  amp_case *c;
  if (i < 0 || i >= amp_num_cases()) return NULL;
  c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->name = table[i].name;
  c->in.page_size = 1;
  table[i].make(c);
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
