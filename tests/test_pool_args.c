// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta_build_pool_indices's host checks: each bad argument gets its
 * status and a message naming it, and nothing is written (the outputs keep
 * their poison); overlapping buffers are refused; struct sizes other than
 * this release's are refused; the defaults of attnmeta_pool_init.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"

#define POISON ((int32_t)0x5A5A5A5A)

AMT_CPU_SUITE(pool_args, (void)0);

/* Host buffers (the CPU backend's device memory is host memory). */
static int32_t pool[4][8];
static int64_t rpi[2], len[2], start[2];
static int32_t ip[3], indices[32], ip_out[3], pages[2][4], err_word;

static void reset(attnmeta_pool *op) {
  int r, c;
  for (r = 0; r < 4; r++)
    for (c = 0; c < 8; c++) pool[r][c] = 10 * r + c;
  rpi[0] = 1;
  rpi[1] = 3;
  len[0] = 3;
  len[1] = 5;
  start[0] = start[1] = 0;
  ip[0] = 0;
  ip[1] = 3;
  ip[2] = 8;
  for (r = 0; r < 32; r++) indices[r] = POISON;
  for (r = 0; r < 3; r++) ip_out[r] = POISON;
  for (r = 0; r < 8; r++) pages[r / 4][r % 4] = POISON;
  err_word = 0;
  amt_pool_table(op, &pool[0][0], 4, 8, 8);
  amt_pool_reqs(op, rpi, len, 2);
  amt_pool_slots(op, ip, indices, 8);
  op->page_table = &pages[0][0];
  op->page_table_stride = 4;
  op->page_table_width = 4;
  op->page_size = 2;
  op->error_word = &err_word;
}

static int untouched(void) {
  int i;
  for (i = 0; i < 32; i++)
    if (indices[i] != POISON) return 0;
  for (i = 0; i < 3; i++)
    if (ip_out[i] != POISON) return 0;
  for (i = 0; i < 8; i++)
    if (pages[i / 4][i % 4] != POISON) return 0;
  return err_word == 0;
}

static void expect_refused(const attnmeta_pool *op, attnmeta_status want, const char *words,
                           const char *what) {
  const attnmeta_status st = attnmeta_build_pool_indices(amt_cpu, op, NULL);
  cr_expect(st == want, "%s: status %s, expected %s (%s)", what, attnmeta_status_string(st),
            attnmeta_status_string(want), attnmeta_last_error(amt_cpu));
  cr_expect(strstr(attnmeta_last_error(amt_cpu), words) != NULL, "%s: message \"%s\" lacks \"%s\"",
            what, attnmeta_last_error(amt_cpu), words);
  cr_expect(untouched(), "%s: an output was written", what);
}

/* One member of attnmeta_pool set to a value: an integer of the member's
 * type, or a pointer. */
typedef struct setting {
  size_t at; /* offsetof(attnmeta_pool, member) */
  char type; /* 'i' int32_t, 'l' int64_t, 'z' size_t, 'p' a pointer; 0: no setting */
  int64_t value;
  const void *ptr;
} setting;

#define I32(member, v) {offsetof(attnmeta_pool, member), 'i', (v), NULL}
#define I64(member, v) {offsetof(attnmeta_pool, member), 'l', (v), NULL}
#define PTR(member, p) {offsetof(attnmeta_pool, member), 'p', 0, (p)}

static void apply(attnmeta_pool *op, const setting *s) {
  char *at = (char *)op + s->at;
  const int32_t i32 = (int32_t)s->value;
  const int64_t i64 = s->value;
  const size_t z = (size_t)s->value;
  switch (s->type) {
  case 'i': memcpy(at, &i32, sizeof i32); break;
  case 'l': memcpy(at, &i64, sizeof i64); break;
  case 'z': memcpy(at, &z, sizeof z); break;
  case 'p': memcpy(at, &s->ptr, sizeof s->ptr); break;
  default: break;
  }
}

/* A call the checks refuse: the good call of reset (or reset_metadata) with
 * up to three members set; its status and a word of its message. */
typedef struct refusal {
  const char *what;
  setting set[3];
  attnmeta_status want;
  const char *words;
} refusal;

static void expect_each_refused(const refusal *r, size_t n, void (*prepare)(attnmeta_pool *),
                                void (*expect)(const attnmeta_pool *, attnmeta_status,
                                               const char *, const char *)) {
  size_t i, k;
  for (i = 0; i < n; i++) {
    attnmeta_pool op;
    prepare(&op);
    for (k = 0; k < 3; k++) apply(&op, &r[i].set[k]);
    expect(&op, r[i].want, r[i].words, r[i].what);
  }
}

#define EXPECT_EACH_REFUSED(table, prepare, expect) \
  expect_each_refused(table, sizeof table / sizeof table[0], prepare, expect)

Test(pool_args, defaults) {
  attnmeta_pool op;
  memset(&op, 0x7f, sizeof op);
  attnmeta_pool_init(&op);
  cr_expect(op.struct_size == sizeof op);
  cr_expect(op.page_size == 1);
  cr_expect(op.req_to_token == NULL && op.kv_indices == NULL && op.kv_indptr_out == NULL &&
            op.page_table == NULL && op.error_word == NULL && op.kv_start_idx == NULL);
  cr_expect(op.num_reqs == 0 && op.kv_indices_capacity == 0 && op.page_table_width == 0);
  cr_expect(attnmeta_pool_init_size(&op, sizeof op - 8) == ATTNMETA_ERR_INVALID_ARGUMENT);
}

Test(pool_args, good_call_writes) {
  attnmeta_pool op;
  static const int32_t want[8] = {10, 11, 12, 30, 31, 32, 33, 34};
  int i;
  reset(&op);
  cr_assert(attnmeta_build_pool_indices(amt_cpu, &op, NULL) == ATTNMETA_OK, "%s",
            attnmeta_last_error(amt_cpu));
  for (i = 0; i < 8; i++) cr_expect(indices[i] == want[i], "kv_indices[%d] = %d", i, indices[i]);
  cr_expect(indices[8] == POISON);
  cr_expect(pages[0][0] == 5 && pages[0][1] == 6 && pages[0][2] == POISON);
  cr_expect(pages[1][0] == 15 && pages[1][1] == 16 && pages[1][2] == 17 && pages[1][3] == POISON);
  cr_expect(err_word == 0);
}

Test(pool_args, null_and_context) {
  attnmeta_pool op;
  reset(&op);
  cr_expect(attnmeta_build_pool_indices(NULL, &op, NULL) == ATTNMETA_ERR_INVALID_CONTEXT);
  cr_expect(attnmeta_build_pool_indices(amt_cpu, NULL, NULL) == ATTNMETA_ERR_NULL_POINTER);
  cr_expect(untouched());
}

static const refusal bad_values[] = {
    {"struct_size too large",
     {{offsetof(attnmeta_pool, struct_size), 'z', sizeof(attnmeta_pool) + 8, NULL}},
     ATTNMETA_ERR_NOT_SUPPORTED, "newer"},
    {"num_reqs < 0", {I32(num_reqs, -1)}, ATTNMETA_ERR_INVALID_ARGUMENT, "num_reqs"},
    {"page_size 0", {I32(page_size, 0)}, ATTNMETA_ERR_INVALID_ARGUMENT, "page_size"},
    {"pool_rows < 0", {I32(pool_rows, -2)}, ATTNMETA_ERR_INVALID_ARGUMENT, "pool_rows"},
    {"pool_cols < 0", {I32(pool_cols, -2)}, ATTNMETA_ERR_INVALID_ARGUMENT, "pool_cols"},
    {"capacity < 0", {I64(kv_indices_capacity, -1)}, ATTNMETA_ERR_INVALID_ARGUMENT,
     "kv_indices_capacity"},
    {"width < 0", {I32(page_table_width, -1)}, ATTNMETA_ERR_INVALID_ARGUMENT, "page_table_width"},
    {"pool stride < cols", {I64(req_to_token_stride, 7)}, ATTNMETA_ERR_STRIDE,
     "req_to_token_stride"},
    {"page stride < width", {I64(page_table_stride, 3)}, ATTNMETA_ERR_STRIDE, "page_table_stride"},
    {"pool past 64-bit offsets", {I64(req_to_token_stride, (int64_t)1 << 61)},
     ATTNMETA_ERR_OVERFLOW, "req_to_token"},
};

Test(pool_args, bad_values) { EXPECT_EACH_REFUSED(bad_values, reset, expect_refused); }

static const refusal missing_buffers[] = {
    {"no req_pool_indices", {PTR(req_pool_indices, NULL)}, ATTNMETA_ERR_NULL_POINTER,
     "req_pool_indices"},
    {"no lengths", {PTR(lengths, NULL)}, ATTNMETA_ERR_NULL_POINTER, "lengths"},
    {"no pool", {PTR(req_to_token, NULL)}, ATTNMETA_ERR_NULL_POINTER, "req_to_token"},
    {"kv_indices without places", {PTR(kv_indptr, NULL)}, ATTNMETA_ERR_NULL_POINTER, "kv_indptr"},
    {"kv_indptr and kv_indptr_out", {PTR(kv_indptr_out, ip_out)}, ATTNMETA_ERR_INVALID_ARGUMENT,
     "both"},
    {"no output", {PTR(kv_indices, NULL), PTR(page_table, NULL)}, ATTNMETA_ERR_INVALID_ARGUMENT,
     "no output"},
    {"capacity, no kv_indices", {PTR(kv_indices, NULL)}, ATTNMETA_ERR_NULL_POINTER,
     "kv_indices_capacity"},
    {"misaligned lengths", {PTR(lengths, (const char *)len + 4)}, ATTNMETA_ERR_INVALID_ARGUMENT,
     "aligned"},
    {"misaligned page_table",
     {PTR(kv_indices, indices + 1), PTR(page_table, (char *)&pages[0][0] + 2)},
     ATTNMETA_ERR_INVALID_ARGUMENT, "aligned"},
};

Test(pool_args, missing_buffers) { EXPECT_EACH_REFUSED(missing_buffers, reset, expect_refused); }

Test(pool_args, empty_buffers_may_be_null) {
  attnmeta_pool op;
  reset(&op);
  op.pool_cols = 0;
  op.req_to_token_stride = 0;
  op.req_to_token = NULL; /* no column to read: every entry -1, flag 32 */
  cr_expect(attnmeta_build_pool_indices(amt_cpu, &op, NULL) == ATTNMETA_OK, "%s",
            attnmeta_last_error(amt_cpu));
  cr_expect(indices[0] == -1 && indices[7] == -1 && indices[8] == POISON);
  cr_expect(err_word == ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE, "flags 0x%x", (unsigned)err_word);
  reset(&op);
  op.num_reqs = 0;
  op.req_pool_indices = NULL;
  op.lengths = NULL;
  op.kv_indptr = NULL;
  op.kv_indptr_out = ip_out;
  cr_expect(attnmeta_build_pool_indices(amt_cpu, &op, NULL) == ATTNMETA_OK, "%s",
            attnmeta_last_error(amt_cpu));
  cr_expect(ip_out[0] == 0 && ip_out[1] == POISON);
}

static const refusal overlaps[] = {
    /* the slot list over the pool's last row */
    {"kv_indices over req_to_token", {PTR(kv_indices, &pool[3][0])},
     ATTNMETA_ERR_INVALID_ARGUMENT, "kv_indices"},
    /* its first entry is the table's last */
    {"kv_indptr_out over page_table", {PTR(kv_indptr, NULL), PTR(kv_indptr_out, &pages[1][3])},
     ATTNMETA_ERR_INVALID_ARGUMENT, "page_table"},
    {"error_word over kv_indptr", {PTR(error_word, &ip[1])}, ATTNMETA_ERR_INVALID_ARGUMENT,
     "error_word"},
    /* 2 rows x 4 over kv_indices[4, 12) */
    {"page_table over kv_indices", {PTR(page_table, indices + 4)}, ATTNMETA_ERR_INVALID_ARGUMENT,
     "kv_indices"},
};

Test(pool_args, overlaps_refused) {
  attnmeta_pool op;
  EXPECT_EACH_REFUSED(overlaps, reset, expect_refused);
  /* the bytes that count: the table's stride gap after its width is not used */
  reset(&op);
  op.page_table_stride = 8;
  op.page_table_width = 2;
  op.page_table = indices + 8; /* rows at [8, 10) and [16, 18) */
  op.kv_indices_capacity = 8;
  cr_expect(attnmeta_build_pool_indices(amt_cpu, &op, NULL) == ATTNMETA_OK, "%s",
            attnmeta_last_error(amt_cpu));
}

Test(pool_args, flag_texts) {
  char buf[256];
  cr_expect(ATTNMETA_FLAG_POOL_INDEX_OUT_OF_RANGE == 1024 && ATTNMETA_FLAG_SCAN_OVERFLOW == 2048);
  attnmeta_error_flags_describe(ATTNMETA_FLAG_POOL_INDEX_OUT_OF_RANGE, buf, sizeof buf);
  cr_expect(strstr(buf, "req_pool_indices") != NULL, "flag 1024: \"%s\"", buf);
  attnmeta_error_flags_describe(ATTNMETA_FLAG_SCAN_OVERFLOW, buf, sizeof buf);
  cr_expect(strstr(buf, "prefix sum") != NULL, "flag 2048: \"%s\"", buf);
}

/* ---- the members appended after 0.3.0 (contract sections 12 and 13) ---- */
static int32_t lens_out[2], topk_out[2], topk_ip[3], tokens[2][8], swa_pages[2][4];
static int64_t swa_map[64];

static void reset_metadata(attnmeta_pool *op) {
  int i;
  reset(op);
  for (i = 0; i < 2; i++) lens_out[i] = topk_out[i] = POISON;
  for (i = 0; i < 3; i++) topk_ip[i] = POISON;
  for (i = 0; i < 16; i++) tokens[i / 8][i % 8] = POISON;
  for (i = 0; i < 8; i++) swa_pages[i / 4][i % 4] = POISON;
  for (i = 0; i < 64; i++) swa_map[i] = 2 * i;
  op->kv_indices = NULL;
  op->kv_indices_capacity = 0;
  op->kv_indptr = NULL;
  op->page_table = NULL;
  op->cache_seqlens = lens_out;
  op->topk_lens = topk_out;
  op->topk_indptr = topk_ip;
  op->topk = 4;
  op->token_table = &tokens[0][0];
  op->token_table_width = 8;
  op->token_table_stride = 8;
  op->swa_page_table = &swa_pages[0][0];
  op->page_table_width = 4;
  op->swa_page_table_stride = 4;
  op->full_to_swa = swa_map;
  op->swa_map_len = 64;
}

static int metadata_untouched(void) {
  int i;
  for (i = 0; i < 2; i++)
    if (lens_out[i] != POISON || topk_out[i] != POISON) return 0;
  for (i = 0; i < 3; i++)
    if (topk_ip[i] != POISON) return 0;
  for (i = 0; i < 16; i++)
    if (tokens[i / 8][i % 8] != POISON) return 0;
  for (i = 0; i < 8; i++)
    if (swa_pages[i / 4][i % 4] != POISON) return 0;
  return 1;
}

static void expect_metadata_refused(const attnmeta_pool *op, attnmeta_status want,
                                    const char *words, const char *what) {
  expect_refused(op, want, words, what);
  cr_expect(metadata_untouched(), "%s: a section 12/13 output was written", what);
}

Test(pool_args, released_size_and_new_defaults) {
  attnmeta_pool op;
  const size_t released = offsetof(attnmeta_pool, error_word) + sizeof(int32_t *);
  cr_expect(released == 128, "0.3.0's attnmeta_pool is 128 bytes, not %zu", released);
  cr_expect(attnmeta_pool_init_size(&op, released) == ATTNMETA_OK);
  attnmeta_pool_init(&op);
  cr_expect(op.length_delta == 0 && op.rows_per_req == 0 && op.cache_seqlens == NULL &&
            op.topk_indptr == NULL && op.token_table == NULL && op.swa_page_table == NULL &&
            op.length_cap == 0 && op.fill_to_width == 0 && op.full_to_swa == NULL);
  /* a 0.3.0 caller's struct: the appended members are at their defaults */
  reset(&op);
  op.struct_size = released;
  op.kv_indices = NULL;
  op.kv_indices_capacity = 0;
  op.kv_indptr = NULL;
  cr_expect(attnmeta_build_pool_indices(amt_cpu, &op, NULL) == ATTNMETA_OK, "%s",
            attnmeta_last_error(amt_cpu));
  cr_expect(pages[1][2] == 17 && pages[1][3] == POISON);
}

Test(pool_args, metadata_good_call_writes) {
  attnmeta_pool op;
  reset_metadata(&op);
  op.length_delta = 1; /* lengths {4, 6} */
  cr_assert(attnmeta_build_pool_indices(amt_cpu, &op, NULL) == ATTNMETA_OK, "%s",
            attnmeta_last_error(amt_cpu));
  cr_expect(lens_out[0] == 4 && lens_out[1] == 6);
  cr_expect(topk_out[0] == 4 && topk_out[1] == 4);
  cr_expect(topk_ip[0] == 0 && topk_ip[1] == 4 && topk_ip[2] == 8);
  cr_expect(tokens[0][3] == 13 && tokens[0][4] == POISON && tokens[1][5] == 35);
  /* pages of 2: S[v] / 2 = v */
  cr_expect(swa_pages[0][1] == 12 && swa_pages[0][2] == POISON && swa_pages[1][2] == 34);
  cr_expect(err_word == 0);
}

static const refusal metadata_bad_values[] = {
    {"topk 0 with topk_lens", {I32(topk, 0)}, ATTNMETA_ERR_INVALID_ARGUMENT, "topk"},
    {"fill_to_width 2", {I32(fill_to_width, 2)}, ATTNMETA_ERR_INVALID_ARGUMENT, "fill_to_width"},
    {"rows_per_req < 0", {I32(rows_per_req, -1)}, ATTNMETA_ERR_INVALID_ARGUMENT, "rows_per_req"},
    {"length_cap < 0", {I32(length_cap, -1)}, ATTNMETA_ERR_INVALID_ARGUMENT, "length_cap"},
    {"topk_pool < 0", {I32(topk_pool, -1)}, ATTNMETA_ERR_INVALID_ARGUMENT, "topk_pool"},
    {"swa_map_len < 0", {I64(swa_map_len, -1)}, ATTNMETA_ERR_INVALID_ARGUMENT, "swa_map_len"},
    {"token stride < width", {I64(token_table_stride, 7)}, ATTNMETA_ERR_STRIDE,
     "token_table_stride"},
    {"swa stride < width", {I64(swa_page_table_stride, 3)}, ATTNMETA_ERR_STRIDE,
     "swa_page_table_stride"},
    {"B x N past int32", {I32(rows_per_req, INT32_MAX)}, ATTNMETA_ERR_INVALID_ARGUMENT,
     "INT32_MAX"},
    {"no full_to_swa", {PTR(full_to_swa, NULL)}, ATTNMETA_ERR_NULL_POINTER, "full_to_swa"},
    {"misaligned cache_seqlens", {PTR(cache_seqlens, (char *)lens_out + 2)},
     ATTNMETA_ERR_INVALID_ARGUMENT, "aligned"},
    /* [1, 3) inside topk_indptr's [0, 3) */
    {"topk_lens over topk_indptr", {PTR(topk_lens, topk_ip + 1)}, ATTNMETA_ERR_INVALID_ARGUMENT,
     "topk"},
    /* 2 rows of 4: token_table's second row */
    {"swa_page_table over token_table", {PTR(swa_page_table, &tokens[1][0])},
     ATTNMETA_ERR_INVALID_ARGUMENT, "token_table"},
};

Test(pool_args, metadata_bad_values) {
  EXPECT_EACH_REFUSED(metadata_bad_values, reset_metadata, expect_metadata_refused);
}

Test(pool_args, metadata_no_rows_writes_leading_zeros) {
  attnmeta_pool op;
  reset_metadata(&op);
  op.num_reqs = 0;
  op.req_pool_indices = NULL;
  op.lengths = NULL;
  cr_expect(attnmeta_build_pool_indices(amt_cpu, &op, NULL) == ATTNMETA_OK, "%s",
            attnmeta_last_error(amt_cpu));
  cr_expect(topk_ip[0] == 0 && topk_ip[1] == POISON && lens_out[0] == POISON);
}

static const int64_t draft_q[2] = {1, 1};
static const refusal draft_extend_rows[] = {
    {"query_lens and rows_per_req",
     {PTR(query_lens, draft_q), I32(num_rows, 2), I32(rows_per_req, 2)},
     ATTNMETA_ERR_INVALID_ARGUMENT, "both"},
    {"num_rows alone", {I32(num_rows, 2)}, ATTNMETA_ERR_INVALID_ARGUMENT, "query_lens"},
    {"num_rows < 0", {PTR(query_lens, draft_q), I32(num_rows, -1)}, ATTNMETA_ERR_INVALID_ARGUMENT,
     "num_rows"},
    {"query_rows 2", {I32(query_rows, 2)}, ATTNMETA_ERR_INVALID_ARGUMENT, "query_rows"},
    {"query_rows with topk_lens", {PTR(query_lens, draft_q), I32(query_rows, 1)},
     ATTNMETA_ERR_INVALID_ARGUMENT, "topk_lens"},
};

/* query_rows 1 sizes the tables by num_reqs: num_rows is refused, and
 * nothing is written. */
Test(pool_args, query_rows_refuses_num_rows) {
  attnmeta_pool op;
  reset_metadata(&op);
  op.topk_lens = NULL;
  op.topk_indptr = NULL;
  op.query_lens = draft_q;
  op.query_rows = 1;
  op.length_delta = 1; /* lengths {4, 6} */
  op.num_rows = 2;
  cr_expect(attnmeta_build_pool_indices(amt_cpu, &op, NULL) == ATTNMETA_ERR_INVALID_ARGUMENT);
  cr_expect(strstr(attnmeta_last_error(amt_cpu), "num_rows") != NULL, "%s",
            attnmeta_last_error(amt_cpu));
  cr_expect(lens_out[0] == POISON && tokens[0][0] == POISON);
  op.num_rows = 0;
  cr_expect(attnmeta_build_pool_indices(amt_cpu, &op, NULL) == ATTNMETA_OK, "%s",
            attnmeta_last_error(amt_cpu));
  cr_expect(lens_out[0] == 4 && lens_out[1] == 6 && tokens[1][5] == 35);
}

Test(pool_args, draft_extend_rows_checked) {
  attnmeta_pool op;
  EXPECT_EACH_REFUSED(draft_extend_rows, reset_metadata, expect_metadata_refused);
  reset_metadata(&op);
  op.query_lens = draft_q;
  op.num_rows = 2;
  cr_expect(attnmeta_build_pool_indices(amt_cpu, &op, NULL) == ATTNMETA_OK, "%s",
            attnmeta_last_error(amt_cpu));
  cr_expect(topk_ip[0] == 0 && topk_ip[1] == 3 && topk_ip[2] == 7, "topk_indptr %d %d %d",
            topk_ip[0], topk_ip[1], topk_ip[2]);
}
