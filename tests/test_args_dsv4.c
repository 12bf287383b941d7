// SPDX-License-Identifier: Apache-2.0
/*
 * Host-visible argument errors of the DeepSeek-V3.2/V4 products (contract
 * sections 5, 7, 8): each returns its status and a message naming the
 * field, and writes nothing (every output of the arena stays poisoned).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"
#include "step_fixture.h"

/* The shared fixture (step_fixture.h) as a DSV4 step: two groups, SWA and
 * C128A rows (width 8), slots and lengths, DCP rank 1 of 2. */
typedef amt_step_fixture fixture;

static void *slice(fixture *f, int k) { return amt_slice(f, k); }

static void fixture_open(fixture *f, attnmeta_backend kind) {
  attnmeta_step *s = &f->step;
  int g;
  amt_step_fixture_open(f, kind);
  s->dcp_world_size = 2;
  s->dcp_rank = 1;
  s->dcp_interleave = 2;
  s->slot_mapping = slice(f, 0);
  s->seq_lens_out = slice(f, 1);
  s->error_word = slice(f, 2);
  for (g = 0; g < 2; g++) {
    attnmeta_compressed_group *cg = &s->compressed_groups[g];
    cg->block_table = s->block_table;
    cg->block_table_cols = 4;
    cg->block_table_stride = 4;
    cg->ratio = g ? 128 : 4;
    cg->block_size = g ? 2 : 64;
    cg->slot_mapping = slice(f, 3 + 2 * g);
    cg->seq_lens_out = slice(f, 4 + 2 * g);
  }
  amt_step_swa(s, s->block_table, 4, 4, 4, 8, ATTNMETA_SWA_CAUSAL, slice(f, 7), 8, slice(f, 8));
  s->c128a_block_table = s->block_table;
  s->c128a_block_table_cols = 4;
  s->c128a_block_table_stride = 4;
  s->c128a_ratio = 2;
  s->c128a_block_size = 2;
  s->c128a_width = 8;
  s->c128a_mode = ATTNMETA_C128A_GLOBAL;
  s->c128a_rows = slice(f, 9);
  s->c128a_rows_stride = 8;
  s->c128a_lens = slice(f, 10);
}

typedef struct bad_case {
  const char *name;
  attnmeta_status want;
  const char *field; /* the message names it */
} bad_case;

static const bad_case bad_cases[] = {
    {"group_ratio_0", ATTNMETA_ERR_INVALID_ARGUMENT, "compressed_groups[1].ratio"},
    {"group_lens_only_ratio_0", ATTNMETA_ERR_INVALID_ARGUMENT, "compressed_groups[3].ratio"},
    {"group_block_size_0", ATTNMETA_ERR_INVALID_ARGUMENT, "compressed_groups[0].block_size"},
    {"group_block_size_not_multiple_of_interleave", ATTNMETA_ERR_INVALID_ARGUMENT,
     "compressed_groups[1].block_size"},
    {"group_table_null", ATTNMETA_ERR_NULL_POINTER, "compressed_groups[0].block_table"},
    {"group_cols_negative", ATTNMETA_ERR_INVALID_ARGUMENT, "compressed_groups[1].block_table_cols"},
    {"group_stride_lt_cols", ATTNMETA_ERR_STRIDE, "compressed_groups[0].block_table_stride"},
    {"group_stride_overflow", ATTNMETA_ERR_OVERFLOW, "compressed_groups[0].block_table"},
    {"group_slots_misaligned", ATTNMETA_ERR_INVALID_ARGUMENT, "compressed_groups[1].slot_mapping"},
    {"group_seq_lens_null", ATTNMETA_ERR_NULL_POINTER, "seq_lens"},
    {"swa_window_0", ATTNMETA_ERR_INVALID_ARGUMENT, "swa_window"},
    {"swa_width_lt_window", ATTNMETA_ERR_INVALID_ARGUMENT, "swa_width"},
    {"swa_mode_2", ATTNMETA_ERR_INVALID_ARGUMENT, "swa_mode"},
    {"swa_block_size_0", ATTNMETA_ERR_INVALID_ARGUMENT, "swa_block_size"},
    {"swa_table_null", ATTNMETA_ERR_NULL_POINTER, "swa_block_table"},
    {"swa_stride_lt_width", ATTNMETA_ERR_STRIDE, "swa_indices_stride"},
    {"swa_rows_overflow", ATTNMETA_ERR_OVERFLOW, "swa_indices"},
    {"swa_lens_only_width_lt_window", ATTNMETA_ERR_INVALID_ARGUMENT, "swa_width"},
    {"c128a_ratio_0", ATTNMETA_ERR_INVALID_ARGUMENT, "c128a_ratio"},
    {"c128a_width_negative", ATTNMETA_ERR_INVALID_ARGUMENT, "c128a_width"},
    {"c128a_mode_7", ATTNMETA_ERR_INVALID_ARGUMENT, "c128a_mode"},
    {"c128a_stride_lt_width", ATTNMETA_ERR_STRIDE, "c128a_rows_stride"},
    {"c128a_block_size_not_multiple_of_interleave", ATTNMETA_ERR_INVALID_ARGUMENT,
     "c128a_block_size"},
    {"c128a_lens_only_block_size_0", ATTNMETA_ERR_INVALID_ARGUMENT, "c128a_block_size"},
    {"c128a_table_null", ATTNMETA_ERR_NULL_POINTER, "c128a_block_table"},
    {"c128a_table_stride_lt_cols", ATTNMETA_ERR_STRIDE, "c128a_block_table_stride"},
};
#define NUM_BAD ((int)(sizeof bad_cases / sizeof bad_cases[0]))

static void mutate(const char *name, attnmeta_step *s) {
#define IS(x) (strcmp(name, x) == 0)
  attnmeta_compressed_group *g0 = &s->compressed_groups[0], *g1 = &s->compressed_groups[1];
  if (IS("group_ratio_0")) g1->ratio = 0;
  if (IS("group_lens_only_ratio_0")) s->compressed_groups[3].seq_lens_out = g1->seq_lens_out;
  if (IS("group_block_size_0")) g0->block_size = 0;
  if (IS("group_block_size_not_multiple_of_interleave")) g1->block_size = 3;
  if (IS("group_table_null")) g0->block_table = NULL;
  if (IS("group_cols_negative")) g1->block_table_cols = -1;
  if (IS("group_stride_lt_cols")) g0->block_table_stride = 3;
  if (IS("group_stride_overflow")) g0->block_table_stride = INT64_MAX / 4;
  if (IS("group_slots_misaligned"))
    g1->slot_mapping = (int64_t *)(void *)((unsigned char *)g1->slot_mapping + 4);
  if (IS("group_seq_lens_null")) { /* only a group's output reads seq_lens */
    s->seq_lens = NULL;
    s->slot_mapping = NULL;
    s->seq_lens_out = NULL;
    s->swa_indices = s->swa_lens = s->c128a_rows = s->c128a_lens = NULL;
  }
  if (IS("swa_window_0")) s->swa_window = 0;
  if (IS("swa_width_lt_window")) s->swa_width = 3;
  if (IS("swa_mode_2")) s->swa_mode = 2;
  if (IS("swa_block_size_0")) s->swa_block_size = 0;
  if (IS("swa_table_null")) s->swa_block_table = NULL;
  if (IS("swa_stride_lt_width")) s->swa_indices_stride = 7;
  if (IS("swa_rows_overflow")) s->swa_indices_stride = INT64_MAX / 4;
  if (IS("swa_lens_only_width_lt_window")) s->swa_indices = NULL, s->swa_width = 2;
  if (IS("c128a_ratio_0")) s->c128a_ratio = 0;
  if (IS("c128a_width_negative")) s->c128a_width = -1;
  if (IS("c128a_mode_7")) s->c128a_mode = 7;
  if (IS("c128a_stride_lt_width")) s->c128a_rows_stride = 4;
  if (IS("c128a_block_size_not_multiple_of_interleave")) s->c128a_block_size = 1;
  if (IS("c128a_lens_only_block_size_0")) s->c128a_rows = NULL, s->c128a_block_size = 0;
  if (IS("c128a_table_null")) s->c128a_block_table = NULL;
  if (IS("c128a_table_stride_lt_cols")) s->c128a_block_table_stride = 2;
#undef IS
}

typedef amt_case_param bad_param;

/* index NUM_BAD: the valid fixture */
ParameterizedTestParameters(args_dsv4, rejected) { return amt_case_params(NUM_BAD + 1); }

ParameterizedTest(bad_param *param, args_dsv4, rejected) {
  const char *be = amt_backend_label((attnmeta_backend)param->backend);
  unsigned char host[AMT_ARENA_BYTES];
  fixture f;
  attnmeta_step s;
  attnmeta_status st;
  long written;
  size_t i;
  fixture_open(&f, (attnmeta_backend)param->backend);
  s = f.step;
  if (param->index == NUM_BAD) { /* the unbroken fixture is accepted and writes */
    st = attnmeta_build_step(f.ctx, &s, NULL);
    cr_expect_eq(st, ATTNMETA_OK, "backend=%s valid DSV4 fixture: %s (%s)", be,
                 attnmeta_status_string(st), attnmeta_last_error(f.ctx));
    amt_to_host(f.ctx, host, f.d_arena, sizeof host);
    for (i = 7 * AMT_SLICE; i < 7 * AMT_SLICE + 4 && host[i] == AMT_POISON_BYTE; i++) {
    }
    cr_expect(i < 7 * AMT_SLICE + 4, "backend=%s: the valid fixture wrote no SWA row", be);
    amt_step_fixture_close(&f);
    return;
  }
  mutate(bad_cases[param->index].name, &s);
  st = attnmeta_build_step(f.ctx, &s, NULL);
  cr_expect_eq(st, bad_cases[param->index].want, "backend=%s case=%s status=%s (%s)", be,
               bad_cases[param->index].name, attnmeta_status_string(st),
               attnmeta_last_error(f.ctx));
  cr_expect(strstr(attnmeta_last_error(f.ctx), bad_cases[param->index].field) != NULL,
            "backend=%s case=%s: message \"%s\" does not name %s", be,
            bad_cases[param->index].name, attnmeta_last_error(f.ctx),
            bad_cases[param->index].field);
  written = amt_first_written(&f);
  if (written >= 0)
    cr_expect_fail("backend=%s case=%s: output written after an argument error (slice %ld)", be,
                   bad_cases[param->index].name, written / AMT_SLICE);
  amt_step_fixture_close(&f);
}
