// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta_convert_topk's host-visible argument errors: each returns its
 * status and a message naming the field, and writes nothing (the outputs
 * and the error word stay poisoned). Plus the texts of flags 256 and 512.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"
#include "step_fixture.h"

#define ARENA_BYTES 4096

/* A valid operation: T = 4, K = 8, R = 2, 3 columns, counts and
 * compaction, with a prefill workspace and token slots. */
typedef struct fixture {
  attnmeta_context *ctx;
  unsigned char *d_in, *d_arena;
  attnmeta_topk op;
} fixture;

static void fixture_open(fixture *f, attnmeta_backend kind) {
  static const int32_t topk[32] = {0, 1, 2, 3, -1, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7,
                                   9, 8, 7, 6, 5, 4, 3, 2, 1, 0, -1, -1, -1, -1, -1, 11};
  static const int32_t qsl[3] = {0, 2, 4};
  static const int32_t table[6] = {3, 4, 5, 6, 7, 8};
  static const int32_t prefill[4] = {-1, -1, 0, 0};
  static const int32_t ws[1] = {100};
  static const int64_t slots[4] = {1, 2, 3, 4};
  attnmeta_topk *op = &f->op;
  f->ctx = amt_fixture_device(kind, &f->d_in, 1024, &f->d_arena, ARENA_BYTES);
  amt_to_dev(f->ctx, f->d_in, topk, sizeof topk);
  amt_to_dev(f->ctx, f->d_in + 256, qsl, sizeof qsl);
  amt_to_dev(f->ctx, f->d_in + 320, table, sizeof table);
  amt_to_dev(f->ctx, f->d_in + 384, prefill, sizeof prefill);
  amt_to_dev(f->ctx, f->d_in + 448, ws, sizeof ws);
  amt_to_dev(f->ctx, f->d_in + 512, slots, sizeof slots);
  amt_topk_rows(op, (const int32_t *)(void *)f->d_in, 4, 8, (int32_t *)(void *)f->d_arena);
  amt_topk_table(op, NULL, 2, (const int32_t *)(void *)(f->d_in + 320), 3, 4);
  op->query_start_loc = (const int32_t *)(void *)(f->d_in + 256);
  op->prefill_req = (const int32_t *)(void *)(f->d_in + 384);
  op->workspace_starts = (const int32_t *)(void *)(f->d_in + 448);
  op->num_prefill = 1;
  op->token_slot = (const int64_t *)(void *)(f->d_in + 512);
  op->valid_count = (int32_t *)(void *)(f->d_arena + 1024);
  op->compact = 1;
  op->error_word = (int32_t *)(void *)(f->d_arena + 2048);
}

static void fixture_close(fixture *f) {
  amt_dev_free(f->ctx, f->d_in);
  amt_dev_free(f->ctx, f->d_arena);
  attnmeta_close(f->ctx);
}

/* Nothing in the arena changed. */
static void expect_untouched(fixture *f, const char *what) {
  unsigned char h[ARENA_BYTES];
  size_t i;
  amt_to_host(f->ctx, h, f->d_arena, sizeof h);
  for (i = 0; i < sizeof h; i++)
    if (h[i] != AMT_POISON_BYTE) {
      cr_expect_fail("%s: byte %zu of the outputs was written", what, i);
      return;
    }
}

typedef struct bad_arg {
  const char *name;
  int field;             /* which change, see apply() */
  attnmeta_status status;
  const char *message;   /* a part of the message */
} bad_arg;

static const bad_arg bad_args[] = {
    {"struct_size_small", 0, ATTNMETA_ERR_INVALID_ARGUMENT, "struct_size"},
    {"struct_size_large", 1, ATTNMETA_ERR_NOT_SUPPORTED, "struct_size"},
    {"topk_null", 2, ATTNMETA_ERR_NULL_POINTER, "topk.topk"},
    {"out_null", 3, ATTNMETA_ERR_NULL_POINTER, "topk.out"},
    {"num_tokens_negative", 4, ATTNMETA_ERR_INVALID_ARGUMENT, "num_tokens"},
    {"topk_count_zero", 5, ATTNMETA_ERR_INVALID_ARGUMENT, "topk_count"},
    {"num_reqs_negative", 6, ATTNMETA_ERR_INVALID_ARGUMENT, "num_reqs"},
    {"block_size_zero", 7, ATTNMETA_ERR_INVALID_ARGUMENT, "block_size"},
    {"stride_rows_negative", 8, ATTNMETA_ERR_INVALID_ARGUMENT, "stride_rows"},
    {"dcp_world_zero", 9, ATTNMETA_ERR_INVALID_ARGUMENT, "dcp_world_size"},
    {"dcp_rank_past_world", 10, ATTNMETA_ERR_INVALID_ARGUMENT, "dcp_rank"},
    {"dcp_interleave_zero", 11, ATTNMETA_ERR_INVALID_ARGUMENT, "dcp_interleave"},
    {"topk_stride_small", 12, ATTNMETA_ERR_STRIDE, "topk_stride"},
    {"out_stride_small", 13, ATTNMETA_ERR_STRIDE, "out_stride"},
    {"no_request_source", 14, ATTNMETA_ERR_NULL_POINTER, "req_id"},
    {"both_request_sources", 15, ATTNMETA_ERR_INVALID_ARGUMENT, "req_id"},
    {"cols_negative", 16, ATTNMETA_ERR_INVALID_ARGUMENT, "block_table_cols"},
    {"table_stride_small", 17, ATTNMETA_ERR_STRIDE, "block_table_stride"},
    {"table_null", 18, ATTNMETA_ERR_NULL_POINTER, "block_table"},
    {"workspace_null", 19, ATTNMETA_ERR_NULL_POINTER, "workspace_starts"},
    {"compact_without_counts", 20, ATTNMETA_ERR_NULL_POINTER, "valid_count"},
    {"compact_two", 21, ATTNMETA_ERR_INVALID_ARGUMENT, "compact"},
    {"out_misaligned", 22, ATTNMETA_ERR_INVALID_ARGUMENT, "topk.out"},
    {"token_slot_misaligned", 23, ATTNMETA_ERR_INVALID_ARGUMENT, "token_slot"},
    {"topk_overflow", 24, ATTNMETA_ERR_OVERFLOW, "topk.topk"},
    {"table_overflow", 25, ATTNMETA_ERR_OVERFLOW, "block_table"},
    {"num_prefill_negative", 26, ATTNMETA_ERR_INVALID_ARGUMENT, "num_prefill"},
    {"out_overflow", 27, ATTNMETA_ERR_OVERFLOW, "topk.out"},
    /* no output may share a byte with an input or another output */
    {"out_on_topk", 28, ATTNMETA_ERR_INVALID_ARGUMENT, "overlaps"},
    {"counts_in_out", 29, ATTNMETA_ERR_INVALID_ARGUMENT, "overlaps"},
    {"error_word_on_qsl", 30, ATTNMETA_ERR_INVALID_ARGUMENT, "overlaps"},
    {"error_word_in_counts", 31, ATTNMETA_ERR_INVALID_ARGUMENT, "overlaps"},
    {"out_on_table_row", 32, ATTNMETA_ERR_INVALID_ARGUMENT, "overlaps"},
    {"launch_flags_undefined", 33, ATTNMETA_ERR_INVALID_ARGUMENT, "launch_flags"},
};

static void apply(attnmeta_topk *op, int field) {
  switch (field) {
    case 0: op->struct_size = sizeof *op - 8; break;
    case 1: op->struct_size = sizeof *op + 8; break;
    case 2: op->topk = NULL; break;
    case 3: op->out = NULL; break;
    case 4: op->num_tokens = -1; break;
    case 5: op->topk_count = 0; break;
    case 6: op->num_reqs = -2; break;
    case 7: op->block_size = 0; break;
    case 8: op->stride_rows = -4; break;
    case 9: op->dcp_world_size = 0; break;
    case 10: op->dcp_world_size = 2; op->dcp_rank = 2; break;
    case 11: op->dcp_interleave = 0; break;
    case 12: op->topk_stride = 7; break;
    case 13: op->out_stride = 7; break;
    case 14: op->query_start_loc = NULL; break;
    case 15: op->req_id = op->query_start_loc; break;
    case 16: op->block_table_cols = -1; break;
    case 17: op->block_table_stride = 2; break;
    case 18: op->block_table = NULL; break;
    case 19: op->workspace_starts = NULL; break;
    case 20: op->valid_count = NULL; break;
    case 21: op->compact = 2; break;
    case 22: op->out = (int32_t *)(void *)((char *)op->out + 2); break;
    case 23: op->token_slot = (const int64_t *)(const void *)((const char *)op->token_slot + 4); break;
    case 24: op->topk_stride = INT64_MAX / 4; break;
    case 25: op->block_table_stride = INT64_MAX / 4; break;
    case 26: op->num_prefill = -1; break;
    case 27: op->out_stride = INT64_MAX / 2; break;
    case 28: op->out = (int32_t *)(void *)(uintptr_t)op->topk; break;
    case 29: op->valid_count = op->out + 28; break; /* row 3 of out */
    case 30: op->error_word = (int32_t *)(void *)(uintptr_t)(op->query_start_loc + 2); break;
    case 31: op->error_word = op->valid_count + 3; break;
    case 32: op->out = (int32_t *)(void *)(uintptr_t)(op->block_table + 2); break;
    case 33: op->launch_flags = ATTNMETA_LAUNCH_EARLY_START | 2u; break;
  }
}

ParameterizedTestParameters(topk_args, refused) {
  return amt_case_params((int)(sizeof bad_args / sizeof bad_args[0]));
}

ParameterizedTest(amt_case_param *p, topk_args, refused) {
  const bad_arg *a = &bad_args[p->index];
  fixture f;
  attnmeta_status st;
  fixture_open(&f, (attnmeta_backend)p->backend);
  apply(&f.op, a->field);
  st = attnmeta_convert_topk(f.ctx, &f.op, NULL);
  cr_expect(st == a->status, "backend=%s %s: status %d (%s), expected %d (%s); message: %s",
            amt_backend_label((attnmeta_backend)p->backend), a->name, (int)st,
            attnmeta_status_string(st), (int)a->status, attnmeta_status_string(a->status),
            attnmeta_last_error(f.ctx));
  cr_expect(strstr(attnmeta_last_error(f.ctx), a->message) != NULL,
            "%s: message \"%s\" does not name %s", a->name, attnmeta_last_error(f.ctx),
            a->message);
  expect_untouched(&f, a->name);
  fixture_close(&f);
}

/* The valid fixture runs, and its result is right (worked by hand):
 * tokens 0, 1 decode (request 0: blocks 3 4 5), tokens 2, 3 prefill into
 * the workspace at 100, compacted. */
Test(topk_args, fixture_runs) {
  static const int32_t expect[32] = {
      12, 13, 14, 15, 17, 18, 19, -1,         /* 0 1 2 3 -1 5 6 7 */
      12, 13, 14, 15, 16, 17, 18, 19,          /* 0..7 */
      109, 108, 107, 106, 105, 104, 103, 102,  /* workspace: 100 + x */
      101, 100, 111, -1, -1, -1, -1, -1};      /* 1 0 -1 -1 -1 -1 -1 11 */
  static const int32_t counts[4] = {7, 8, 8, 3};
  fixture f;
  int32_t out[32], cnt[4], err;
  int i;
  fixture_open(&f, ATTNMETA_BACKEND_CPU);
  cr_assert(attnmeta_convert_topk(f.ctx, &f.op, NULL) == ATTNMETA_OK, "%s",
            attnmeta_last_error(f.ctx));
  amt_to_host(f.ctx, out, f.op.out, sizeof out);
  amt_to_host(f.ctx, cnt, f.op.valid_count, sizeof cnt);
  amt_to_host(f.ctx, &err, f.op.error_word, sizeof err);
  for (i = 0; i < 32; i++) cr_expect(out[i] == expect[i], "out[%d] = %d, expected %d", i, out[i], expect[i]);
  for (i = 0; i < 4; i++) cr_expect(cnt[i] == counts[i], "count[%d] = %d, expected %d", i, cnt[i], counts[i]);
  cr_expect(err == 0x5A5A5A5A, "error word 0x%x: no flag expected", (unsigned)err);
  fixture_close(&f);
}

/* Only the bytes a buffer covers count: counts in the gap columns of the
 * rows of `out` (stride 16, K = 8) are accepted, and right. */
Test(topk_args, counts_in_out_gap) {
  static const int32_t counts[4] = {7, 8, 8, 3};
  fixture f;
  int32_t cnt[4];
  int i;
  fixture_open(&f, ATTNMETA_BACKEND_CPU);
  f.op.out_stride = 16;
  f.op.valid_count = f.op.out + 8; /* row 0, columns 8..11: nobody's bytes */
  cr_assert(attnmeta_convert_topk(f.ctx, &f.op, NULL) == ATTNMETA_OK, "%s",
            attnmeta_last_error(f.ctx));
  amt_to_host(f.ctx, cnt, f.op.valid_count, sizeof cnt);
  for (i = 0; i < 4; i++) cr_expect(cnt[i] == counts[i], "count[%d] = %d, expected %d", i, cnt[i], counts[i]);
  fixture_close(&f);
}

/* Nothing at all to do still checks the arguments, and writes nothing. */
Test(topk_args, zero_tokens) {
  fixture f;
  fixture_open(&f, ATTNMETA_BACKEND_CPU);
  f.op.num_tokens = 0;
  cr_expect(attnmeta_convert_topk(f.ctx, &f.op, NULL) == ATTNMETA_OK);
  expect_untouched(&f, "zero tokens");
  f.op.topk_count = 0;
  cr_expect(attnmeta_convert_topk(f.ctx, &f.op, NULL) == ATTNMETA_ERR_INVALID_ARGUMENT);
  cr_expect(attnmeta_convert_topk(NULL, &f.op, NULL) == ATTNMETA_ERR_INVALID_CONTEXT);
  cr_expect(attnmeta_convert_topk(f.ctx, NULL, NULL) == ATTNMETA_ERR_NULL_POINTER);
  fixture_close(&f);
}

/* An empty array may be NULL, as torch's empty CUDA tensors are: a table
 * of no rows with T > 0 (every token's request is out of range), and every
 * [T] and [T][K] array when T = 0. */
Test(topk_args, empty_arrays_may_be_null) {
  fixture f;
  int32_t out[32], cnt[4];
  int i;
  fixture_open(&f, ATTNMETA_BACKEND_CPU);
  f.op.num_reqs = 0;
  f.op.block_table = NULL;
  cr_expect(attnmeta_convert_topk(f.ctx, &f.op, NULL) == ATTNMETA_OK, "R = 0, table NULL: %s",
            attnmeta_last_error(f.ctx));
  amt_to_host(f.ctx, out, f.op.out, sizeof out);
  amt_to_host(f.ctx, cnt, f.op.valid_count, sizeof cnt);
  for (i = 0; i < 32; i++) cr_expect(out[i] == -1, "R = 0: out[%d] = %d", i, out[i]);
  for (i = 0; i < 4; i++) cr_expect(cnt[i] == 0, "R = 0: count[%d] = %d", i, cnt[i]);
  fixture_close(&f);

  fixture_open(&f, ATTNMETA_BACKEND_CPU);
  f.op.num_tokens = 0;
  f.op.topk = NULL;
  f.op.out = NULL;
  f.op.valid_count = NULL;
  f.op.query_start_loc = NULL;
  f.op.prefill_req = NULL;
  f.op.token_slot = NULL;
  cr_expect(attnmeta_convert_topk(f.ctx, &f.op, NULL) == ATTNMETA_OK, "T = 0, arrays NULL: %s",
            attnmeta_last_error(f.ctx));
  expect_untouched(&f, "T = 0 with NULL arrays");
  f.op.num_tokens = 1; /* not empty any more: refused */
  cr_expect(attnmeta_convert_topk(f.ctx, &f.op, NULL) == ATTNMETA_ERR_NULL_POINTER);
  expect_untouched(&f, "T = 1 with NULL arrays");
  fixture_close(&f);
}

Test(topk_args, flag_texts) {
  char buf[256];
  attnmeta_error_flags_describe(ATTNMETA_FLAG_WORKSPACE_OUT_OF_RANGE, buf, sizeof buf);
  cr_expect(strstr(buf, "workspace") != NULL, "flag 256: \"%s\"", buf);
  attnmeta_error_flags_describe(ATTNMETA_FLAG_SLOT_OUT_OF_RANGE, buf, sizeof buf);
  cr_expect(strstr(buf, "INT32_MAX") != NULL, "flag 512: \"%s\"", buf);
  cr_expect(ATTNMETA_FLAG_WORKSPACE_OUT_OF_RANGE == 256 && ATTNMETA_FLAG_SLOT_OUT_OF_RANGE == 512);
  attnmeta_error_flags_describe(1 << 12, buf, sizeof buf);
  cr_expect(strstr(buf, "unknown flags 0x1000") != NULL, "flag 4096 is not known yet: \"%s\"", buf);
}
