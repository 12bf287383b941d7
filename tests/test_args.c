// SPDX-License-Identifier: Apache-2.0
/*
 * Host-visible argument errors: each returns its status and a message and
 * writes nothing (every output stays poisoned). Plus the small API: open,
 * close, status strings, flag descriptions, versions, launch configs.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"
#include "step_fixture.h"

/* The shared fixture (step_fixture.h) with every part-1 product, one
 * output slice each. */
typedef amt_step_fixture fixture;

static void fixture_open(fixture *f, attnmeta_backend kind) {
  attnmeta_step *s = &f->step;
  amt_step_fixture_open(f, kind);
  amt_step_outputs(s, amt_slice(f, 0), amt_slice(f, 1), amt_slice(f, 2), amt_slice(f, 4),
                   amt_slice(f, 5), amt_slice(f, 6), amt_slice(f, 7), amt_slice(f, 8));
  s->block_table_out = amt_slice(f, 3);
  s->block_table_out_stride = 4;
  s->error_word = amt_slice(f, 9);
}

/* Fails unless every byte of the output arena still holds the poison. */
static void expect_untouched(fixture *f, const char *what) {
  const long at = amt_first_written(f);
  if (at >= 0)
    cr_expect_fail("%s: output written after an argument error (output %ld, byte %ld)", what,
                   at / AMT_SLICE, at % AMT_SLICE);
}

/* ---- the table of bad arguments ---- */

enum { API_STEP, API_STEP_NULL, API_STEP_NULL_CTX, API_MAP, API_MAP_NULL_CTX };

typedef struct arg_case {
  const char *name;
  int api;
  attnmeta_status want;
} arg_case;

static const arg_case arg_cases[] = {
    {"step_null", API_STEP_NULL, ATTNMETA_ERR_NULL_POINTER},
    {"ctx_null", API_STEP_NULL_CTX, ATTNMETA_ERR_INVALID_CONTEXT},
    {"null_query_start_loc", API_STEP, ATTNMETA_ERR_NULL_POINTER},
    {"null_seq_lens", API_STEP, ATTNMETA_ERR_NULL_POINTER},
    {"null_seq_lens_positions_only", API_STEP, ATTNMETA_ERR_NULL_POINTER},
    {"null_block_table", API_STEP, ATTNMETA_ERR_NULL_POINTER},
    {"null_block_table_slots_only", API_STEP, ATTNMETA_ERR_NULL_POINTER},
    {"negative_num_reqs", API_STEP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"negative_num_tokens", API_STEP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"negative_capacity", API_STEP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"capacity_lt_tokens", API_STEP, ATTNMETA_ERR_CAPACITY},
    {"capacity_lt_tokens_slots_only", API_STEP, ATTNMETA_ERR_CAPACITY},
    {"negative_cols", API_STEP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"in_stride_lt_cols", API_STEP, ATTNMETA_ERR_STRIDE},
    {"in_stride_lt_cols_slots_only", API_STEP, ATTNMETA_ERR_STRIDE},
    {"out_stride_lt_cols", API_STEP, ATTNMETA_ERR_STRIDE},
    {"block_size_0", API_STEP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"block_size_negative", API_STEP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"dcp_world_0", API_STEP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"dcp_rank_negative", API_STEP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"dcp_rank_eq_world", API_STEP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"dcp_interleave_0", API_STEP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"reqs_plus_tokens_past_int32", API_STEP, ATTNMETA_ERR_OVERFLOW},
    {"in_stride_bytes_overflow", API_STEP, ATTNMETA_ERR_OVERFLOW},
    {"out_stride_bytes_overflow", API_STEP, ATTNMETA_ERR_OVERFLOW},
    {"struct_size_0", API_STEP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"struct_size_header_only", API_STEP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"map_null_out", API_MAP, ATTNMETA_ERR_NULL_POINTER},
    {"map_null_query_start_loc", API_MAP, ATTNMETA_ERR_NULL_POINTER},
    {"map_negative_num_reqs", API_MAP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"map_negative_num_tokens", API_MAP, ATTNMETA_ERR_INVALID_ARGUMENT},
    {"map_ctx_null", API_MAP_NULL_CTX, ATTNMETA_ERR_INVALID_CONTEXT},
};
#define NUM_ARG_CASES ((int)(sizeof arg_cases / sizeof arg_cases[0]))

/* Breaks the valid fixture step the way case `name` says. */
static void mutate(const char *name, attnmeta_step *s, int32_t **map_out, const int32_t **map_qsl,
                   int32_t *map_reqs, int32_t *map_tokens) {
#define IS(x) (strcmp(name, x) == 0)
  if (IS("null_query_start_loc")) s->query_start_loc = NULL;
  if (IS("null_seq_lens")) s->seq_lens = NULL;
  if (IS("null_block_table")) s->block_table = NULL;
  if (IS("negative_num_reqs")) s->num_reqs = -1;
  if (IS("negative_num_tokens")) s->num_tokens = -1;
  if (IS("negative_capacity")) s->capacity = -1;
  if (IS("capacity_lt_tokens")) s->capacity = s->num_tokens - 1;
  if (IS("negative_cols")) s->block_table_cols = -1;
  if (IS("in_stride_lt_cols")) s->block_table_stride = 3;
  if (IS("out_stride_lt_cols")) s->block_table_out_stride = 3;
  if (IS("block_size_0")) s->block_size = 0;
  if (IS("block_size_negative")) s->block_size = -16;
  if (IS("dcp_world_0")) s->dcp_world_size = 0;
  if (IS("dcp_rank_negative")) s->dcp_rank = -1;
  if (IS("dcp_rank_eq_world")) s->dcp_world_size = 2, s->dcp_rank = 2;
  if (IS("dcp_interleave_0")) s->dcp_interleave = 0;
  if (IS("reqs_plus_tokens_past_int32")) s->num_reqs = INT32_MAX - 4;
  if (IS("in_stride_bytes_overflow")) s->block_table_stride = INT64_MAX / 2;
  if (IS("out_stride_bytes_overflow")) s->block_table_out_stride = INT64_MAX / 2;
  if (IS("struct_size_0")) s->struct_size = 0;
  if (IS("struct_size_header_only")) s->struct_size = sizeof(size_t);
  if (IS("null_seq_lens_positions_only") || IS("null_block_table_slots_only") ||
      IS("capacity_lt_tokens_slots_only") || IS("in_stride_lt_cols_slots_only")) {
    /* keep only positions and slot_mapping */
    s->token_to_req = s->seq_lens_out = s->global_seq_lens_out = NULL;
    s->block_table_out = s->decode_lens_out = s->req_indices_out = s->per_req_lens_out = NULL;
    if (IS("null_seq_lens_positions_only")) s->slot_mapping = NULL, s->seq_lens = NULL;
    if (IS("null_block_table_slots_only")) s->block_table = NULL;
    if (IS("capacity_lt_tokens_slots_only")) s->capacity = s->num_tokens - 1;
    if (IS("in_stride_lt_cols_slots_only")) s->block_table_stride = 3;
  }
  if (IS("map_null_out")) *map_out = NULL;
  if (IS("map_null_query_start_loc")) *map_qsl = NULL;
  if (IS("map_negative_num_reqs")) *map_reqs = -1;
  if (IS("map_negative_num_tokens")) *map_tokens = -1;
#undef IS
}

typedef amt_case_param arg_param;

ParameterizedTestParameters(args, rejected) { return amt_case_params(NUM_ARG_CASES); }

ParameterizedTest(arg_param *param, args, rejected) {
  const arg_case *ac = &arg_cases[param->index];
  const char *be = amt_backend_label((attnmeta_backend)param->backend);
  fixture f;
  attnmeta_step s;
  attnmeta_status st = ATTNMETA_OK;
  int32_t *map_out;
  const int32_t *map_qsl;
  int32_t map_reqs, map_tokens;
  const char *msg;

  fixture_open(&f, (attnmeta_backend)param->backend);
  s = f.step;
  map_out = s.token_to_req;
  map_qsl = s.query_start_loc;
  map_reqs = s.num_reqs;
  map_tokens = s.num_tokens;
  mutate(ac->name, &s, &map_out, &map_qsl, &map_reqs, &map_tokens);
  switch (ac->api) {
    case API_STEP: st = attnmeta_build_step(f.ctx, &s, NULL); break;
    case API_STEP_NULL: st = attnmeta_build_step(f.ctx, NULL, NULL); break;
    case API_STEP_NULL_CTX: st = attnmeta_build_step(NULL, &s, NULL); break;
    case API_MAP:
      st = attnmeta_token_to_req(f.ctx, map_qsl, map_reqs, -1, map_tokens, map_out, NULL);
      break;
    case API_MAP_NULL_CTX:
      st = attnmeta_token_to_req(NULL, map_qsl, map_reqs, -1, map_tokens, map_out, NULL);
      break;
  }
  cr_expect(st == ac->want,
            "backend=%s case=%s status=%s (%d), expected %s", be, ac->name,
            attnmeta_status_string(st), (int)st, attnmeta_status_string(ac->want));
  if (ac->api != API_STEP_NULL_CTX && ac->api != API_MAP_NULL_CTX) {
    msg = attnmeta_last_error(f.ctx);
    cr_expect(msg && msg[0], "backend=%s case=%s: attnmeta_last_error is empty", be, ac->name);
  }
  {
    char what[160];
    snprintf(what, sizeof what, "backend=%s case=%s", be, ac->name);
    expect_untouched(&f, what);
  }
  amt_step_fixture_close(&f);
}

/* The unbroken fixture is accepted (so every rejection above is the mutation's). */
ParameterizedTestParameters(args, fixture_valid) { return amt_case_params(1); }

ParameterizedTest(arg_param *param, args, fixture_valid) {
  const char *be = amt_backend_label((attnmeta_backend)param->backend);
  fixture f;
  attnmeta_step s;
  attnmeta_status st;
  int32_t word = -1;
  fixture_open(&f, (attnmeta_backend)param->backend);
  st = attnmeta_build_step(f.ctx, &f.step, NULL);
  cr_expect_eq(st, ATTNMETA_OK, "backend=%s valid fixture: %s (%s)", be,
               attnmeta_status_string(st), attnmeta_last_error(f.ctx));
  cr_expect_str_empty(attnmeta_last_error(f.ctx), "backend=%s last_error after success", be);
  amt_to_host(f.ctx, &word, f.step.error_word, sizeof word);
  cr_expect_eq(word, 0x5A5A5A5A, "backend=%s error word changed on valid data: 0x%x", be,
               (unsigned)word);
  st = attnmeta_token_to_req(f.ctx, f.step.query_start_loc, 3, -1, 6, f.step.token_to_req, NULL);
  cr_expect_eq(st, ATTNMETA_OK, "backend=%s token_to_req: %s", be, attnmeta_status_string(st));

  /* a failure, then a success: the message is cleared */
  s = f.step;
  s.num_reqs = -1;
  cr_expect_neq(attnmeta_build_step(f.ctx, &s, NULL), ATTNMETA_OK);
  cr_expect_str_not_empty(attnmeta_last_error(f.ctx));
  st = attnmeta_build_step(f.ctx, &f.step, NULL);
  cr_expect_eq(st, ATTNMETA_OK);
  cr_expect_str_empty(attnmeta_last_error(f.ctx), "backend=%s last_error not cleared", be);

  /* block_size only matters when slots are wanted */
  s = f.step;
  s.slot_mapping = NULL;
  s.block_size = 0;
  st = attnmeta_build_step(f.ctx, &s, NULL);
  cr_expect_eq(st, ATTNMETA_OK, "backend=%s block_size 0 without slots: %s (%s)", be,
               attnmeta_status_string(st), attnmeta_last_error(f.ctx));

  /* no output at all is a valid (empty) step */
  attnmeta_step_init(&s);
  s.query_start_loc = f.step.query_start_loc;
  s.num_reqs = 3;
  s.num_tokens = 6;
  s.capacity = 6;
  st = attnmeta_build_step(f.ctx, &s, NULL);
  cr_expect_eq(st, ATTNMETA_OK, "backend=%s empty step: %s (%s)", be, attnmeta_status_string(st),
               attnmeta_last_error(f.ctx));
  amt_step_fixture_close(&f);
}

/* ---- contexts ---- */

Test(api, open_unknown_backend) {
  attnmeta_context *ctx = (attnmeta_context *)(void *)&ctx;
  const attnmeta_status st = attnmeta_open(&ctx, (attnmeta_backend)42, 0);
  cr_expect_eq(st, ATTNMETA_ERR_UNKNOWN_BACKEND, "status %s", attnmeta_status_string(st));
  cr_expect_null(ctx, "*out must be NULL on failure");
  cr_assert_not_null(attnmeta_open_error());
  cr_expect_str_not_empty(attnmeta_open_error());
}

Test(api, open_null_out) {
  cr_expect_eq(attnmeta_open(NULL, ATTNMETA_BACKEND_CPU, 0), ATTNMETA_ERR_NULL_POINTER);
  cr_expect_str_not_empty(attnmeta_open_error());
}

Test(api, open_cpu_device_1) {
  attnmeta_context *ctx = (attnmeta_context *)(void *)&ctx;
  const attnmeta_status st = attnmeta_open(&ctx, ATTNMETA_BACKEND_CPU, 1);
  cr_expect_neq(st, ATTNMETA_OK, "the CPU backend has only device 0");
  cr_expect_null(ctx, "*out must be NULL on failure");
  cr_expect_str_not_empty(attnmeta_open_error());
}

Test(api, close_null) { cr_expect_eq(attnmeta_close(NULL), ATTNMETA_OK); }

Test(api, cpu_context) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  int count = -1;
  const char *targets = NULL;
  cr_expect_eq(attnmeta_context_backend(ctx), ATTNMETA_BACKEND_CPU);
  cr_expect_eq(attnmeta_context_device(ctx), 0);
  cr_assert_not_null(attnmeta_context_device_name(ctx));
  cr_expect_str_not_empty(attnmeta_context_device_name(ctx));
  cr_assert_not_null(attnmeta_last_error(ctx));
  cr_expect_str_empty(attnmeta_last_error(ctx));
  cr_expect_eq(attnmeta_backend_device_count(ATTNMETA_BACKEND_CPU, &count), ATTNMETA_OK);
  cr_expect_geq(count, 1);
  cr_expect_eq(attnmeta_backend_device_count(ATTNMETA_BACKEND_CPU, NULL),
               ATTNMETA_ERR_NULL_POINTER);
  cr_expect_eq(attnmeta_backend_targets(ATTNMETA_BACKEND_CPU, &targets), ATTNMETA_OK);
  cr_expect_not_null(targets);
  attnmeta_close(ctx);
}

Test(api, null_context_everywhere) {
  void *p = NULL;
  int x = 0;
  cr_expect_eq(attnmeta_device_alloc(NULL, 16, &p), ATTNMETA_ERR_INVALID_CONTEXT);
  cr_expect_eq(attnmeta_device_free(NULL, &x), ATTNMETA_ERR_INVALID_CONTEXT);
  cr_expect_eq(attnmeta_copy_to_device(NULL, &x, &x, sizeof x), ATTNMETA_ERR_INVALID_CONTEXT);
  cr_expect_eq(attnmeta_copy_to_host(NULL, &x, &x, sizeof x), ATTNMETA_ERR_INVALID_CONTEXT);
  cr_expect_eq(attnmeta_synchronize(NULL, NULL), ATTNMETA_ERR_INVALID_CONTEXT);
  cr_expect_eq(attnmeta_set_launch_config(NULL, NULL), ATTNMETA_ERR_INVALID_CONTEXT);
}

Test(api, device_alloc_null_out) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  cr_expect_eq(attnmeta_device_alloc(ctx, 16, NULL), ATTNMETA_ERR_NULL_POINTER);
  cr_expect_str_not_empty(attnmeta_last_error(ctx));
  attnmeta_close(ctx);
}

Test(api, step_init_defaults) {
  attnmeta_step s;
  memset(&s, 0x77, sizeof s);
  attnmeta_step_init(&s);
  cr_expect_eq(s.struct_size, sizeof(attnmeta_step));
  cr_expect_eq(s.num_mapped, -1);
  cr_expect_eq(s.block_size, 0); /* no default: slot_mapping needs it set */
  cr_expect_eq(s.dcp_world_size, 1);
  cr_expect_eq(s.dcp_rank, 0);
  cr_expect_eq(s.dcp_interleave, 1);
  cr_expect_eq(s.num_reqs, 0);
  cr_expect_eq(s.num_tokens, 0);
  cr_expect_eq(s.capacity, 0);
  cr_expect_eq(s.block_table_cols, 0);
  cr_expect_eq(s.block_table_stride, 0);
  cr_expect_eq(s.block_table_out_stride, 0);
  cr_expect_null(s.query_start_loc);
  cr_expect_null(s.seq_lens);
  cr_expect_null(s.block_table);
  cr_expect_null(s.token_to_req);
  cr_expect_null(s.seq_lens_out);
  cr_expect_null(s.global_seq_lens_out);
  cr_expect_null(s.block_table_out);
  cr_expect_null(s.decode_lens_out);
  cr_expect_null(s.req_indices_out);
  cr_expect_null(s.per_req_lens_out);
  cr_expect_null(s.positions);
  cr_expect_null(s.slot_mapping);
  cr_expect_null(s.error_word);
}

/* ---- launch configuration ---- */

Test(api, launch_config_default) {
  const attnmeta_launch_config d = attnmeta_launch_config_default();
  cr_expect(d.block == 0 && d.grid == 0 && d.stage == -1 && d.vector == -1 && d.lanes == 0,
            "default config {%d, %d, %d, %d, %d}, want {0, 0, -1, -1, 0}", d.block, d.grid,
            d.stage, d.vector, d.lanes);
}

/* Launch configurations: ranges on every backend, block 0/1 only on the CPU. */
ParameterizedTestParameters(api, launch_config) { return amt_case_params(1); }

ParameterizedTest(arg_param *param, api, launch_config) {
  const attnmeta_backend kind = (attnmeta_backend)param->backend;
  const char *be = amt_backend_label(kind);
  attnmeta_context *ctx = amt_open_or_skip(kind);
  const attnmeta_launch_config d = attnmeta_launch_config_default();
  const amt_launch *cfgs;
  const int ncfg = amt_launch_configs(kind, &cfgs);
  attnmeta_launch_config c;
  attnmeta_status st;
  int v;
#define TRY(field, value, want)                                                           \
  do {                                                                                    \
    c = d;                                                                                \
    c.field = (value);                                                                    \
    st = attnmeta_set_launch_config(ctx, &c);                                             \
    cr_expect(st == (want), "backend=%s config " #field "=%d: status %s, want %s", be,    \
              (int)(value), attnmeta_status_string(st), attnmeta_status_string(want));    \
    if ((want) != ATTNMETA_OK)                                                            \
      cr_expect_str_not_empty(attnmeta_last_error(ctx), "backend=%s " #field "=%d: no message", \
                              be, (int)(value));                                          \
  } while (0)
  cr_expect_eq(attnmeta_set_launch_config(ctx, NULL), ATTNMETA_OK);
  cr_expect_eq(attnmeta_set_launch_config(ctx, &d), ATTNMETA_OK);
  for (v = 0; v < ncfg; v++) {
    st = attnmeta_set_launch_config(ctx, &cfgs[v].config);
    cr_expect_eq(st, ATTNMETA_OK, "backend=%s config %s refused: %s (%s)", be, cfgs[v].name,
                 attnmeta_status_string(st), attnmeta_last_error(ctx));
  }
  TRY(block, 0, ATTNMETA_OK);
  TRY(block, 1, ATTNMETA_OK);
  TRY(block, -1, ATTNMETA_ERR_INVALID_ARGUMENT);
  if (kind == ATTNMETA_BACKEND_CPU) {
    TRY(block, 2, ATTNMETA_ERR_NOT_SUPPORTED);
    TRY(block, 256, ATTNMETA_ERR_NOT_SUPPORTED);
  } else {
    TRY(block, 1024, ATTNMETA_OK);
  }
  TRY(grid, 0, ATTNMETA_OK);
  TRY(grid, 1000, ATTNMETA_OK);
  TRY(grid, -1, ATTNMETA_ERR_INVALID_ARGUMENT);
  for (v = -1; v <= 1; v++) {
    TRY(stage, v, ATTNMETA_OK);
    TRY(vector, v, ATTNMETA_OK);
  }
  TRY(stage, 2, ATTNMETA_ERR_INVALID_ARGUMENT);
  TRY(stage, -2, ATTNMETA_ERR_INVALID_ARGUMENT);
  TRY(vector, 2, ATTNMETA_ERR_INVALID_ARGUMENT);
  TRY(vector, -2, ATTNMETA_ERR_INVALID_ARGUMENT);
  TRY(lanes, 0, ATTNMETA_OK);
  TRY(lanes, 7, ATTNMETA_OK);
  TRY(lanes, -1, ATTNMETA_ERR_INVALID_ARGUMENT);
#undef TRY
  attnmeta_close(ctx);
}

/* ---- text ---- */

Test(api, status_strings) {
  const char *s[ATTNMETA_ERR_INTERNAL + 1];
  int i, j;
  for (i = 0; i <= ATTNMETA_ERR_INTERNAL; i++) {
    s[i] = attnmeta_status_string((attnmeta_status)i);
    cr_assert_not_null(s[i], "status %d", i);
    cr_expect_str_not_empty(s[i], "status %d", i);
    for (j = 0; j < i; j++)
      cr_expect_str_neq(s[i], s[j], "status %d and %d share the text \"%s\"", i, j, s[i]);
  }
  cr_expect_not_null(attnmeta_status_string((attnmeta_status)999));
  cr_expect_not_null(attnmeta_status_string((attnmeta_status)-1));
}

Test(api, backend_names) {
  int i;
  for (i = ATTNMETA_BACKEND_AUTO; i <= ATTNMETA_BACKEND_HIP; i++) {
    const char *n = attnmeta_backend_name((attnmeta_backend)i);
    cr_assert_not_null(n, "backend %d", i);
    cr_expect_str_not_empty(n, "backend %d", i);
  }
  cr_expect_not_null(attnmeta_backend_name((attnmeta_backend)42));
}

Test(api, error_flags_describe) {
  const int32_t all = 0xFF;
  char full[512], one[8][128], buf[600];
  size_t len, n, i;
  int b, c;
  for (b = 0; b < 8; b++) {
    n = attnmeta_error_flags_describe(1 << b, one[b], sizeof one[b]);
    cr_expect_gt(n, 0, "flag bit %d has no description", b);
    cr_expect_eq(strlen(one[b]), n, "flag bit %d: returned %zu, wrote %zu", b, n,
                 strlen(one[b]));
    for (c = 0; c < b; c++)
      cr_expect_str_neq(one[b], one[c], "flag bits %d and %d both read \"%s\"", b, c, one[b]);
  }
  len = attnmeta_error_flags_describe(all, full, sizeof full);
  cr_expect_eq(strlen(full), len);
  for (b = 0; b < 8; b++)
    cr_expect_not_null(strstr(full, one[b]), "\"%s\" lacks \"%s\"", full, one[b]);
  cr_expect_not_null(strstr(full, ", "), "\"%s\" is not \", \"-separated", full);
  n = attnmeta_error_flags_describe(ATTNMETA_FLAG_SLOT_OUT_OF_RANGE, buf, sizeof buf);
  cr_expect(n > 0 && !strstr(buf, "unknown"), "flag 512 reads \"%s\"", buf);

  /* size 0: nothing written, full length returned */
  memset(buf, 'Z', sizeof buf);
  cr_expect_eq(attnmeta_error_flags_describe(all, buf, 0), len);
  cr_expect_eq(buf[0], 'Z', "size 0 wrote into the buffer");
  cr_expect_eq(attnmeta_error_flags_describe(all, NULL, 0), len);
  /* every short size: a NUL-terminated prefix, nothing past `size` touched */
  for (n = 1; n <= len + 1; n++) {
    memset(buf, 'Z', sizeof buf);
    cr_expect_eq(attnmeta_error_flags_describe(all, buf, n), len, "size %zu", n);
    cr_expect_eq(buf[n - 1], '\0', "size %zu: not NUL-terminated", n);
    cr_expect_eq(memcmp(buf, full, n - 1), 0, "size %zu: not a prefix", n);
    for (i = n; i < n + 8 && i < sizeof buf; i++)
      if (buf[i] != 'Z') {
        cr_expect_fail("size %zu: byte %zu written", n, i);
        break;
      }
  }
  /* no flags: some (possibly empty) text, and a NUL */
  memset(buf, 'Z', sizeof buf);
  n = attnmeta_error_flags_describe(0, buf, sizeof buf);
  cr_expect_eq(strlen(buf), n);
}

Test(api, version) {
  char want[32];
  cr_expect_eq(attnmeta_version(), ATTNMETA_VERSION);
  cr_expect_eq(ATTNMETA_VERSION, ATTNMETA_VERSION_MAJOR * 10000 + ATTNMETA_VERSION_MINOR * 100 +
                                     ATTNMETA_VERSION_PATCH);
  snprintf(want, sizeof want, "%d.%d.%d", ATTNMETA_VERSION_MAJOR, ATTNMETA_VERSION_MINOR,
           ATTNMETA_VERSION_PATCH);
  cr_assert_not_null(attnmeta_version_string());
  cr_expect_str_eq(attnmeta_version_string(), want);
}
