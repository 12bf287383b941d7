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

#define POISON_BYTE 0x5A
#define ARENA_BYTES 8192
#define SLICE 512

/* A valid DSV4 step: R = 3, T = 6, C = 8, two groups, SWA and C128A rows
 * (width 8), every part-1 product too, on device buffers. */
typedef struct fixture {
  attnmeta_context *ctx;
  unsigned char *d_in, *d_arena;
  attnmeta_step step;
} fixture;

static void *slice(fixture *f, int k) { return f->d_arena + k * SLICE; }

static void fixture_open(fixture *f, attnmeta_backend kind) {
  static const int32_t qsl[] = {0, 1, 3, 4};
  static const int32_t seq[] = {5, 2, 9};
  static const int32_t table[] = {1, 2, 3, 4, 11, 12, 13, 14, 21, 22, 23, 24};
  attnmeta_step *s = &f->step;
  unsigned char poison[ARENA_BYTES];
  int g;
  f->ctx = amt_open_or_skip(kind);
  f->d_in = amt_dev_alloc(f->ctx, 256);
  f->d_arena = amt_dev_alloc(f->ctx, ARENA_BYTES);
  amt_to_dev(f->ctx, f->d_in, qsl, sizeof qsl);
  amt_to_dev(f->ctx, f->d_in + 64, seq, sizeof seq);
  amt_to_dev(f->ctx, f->d_in + 128, table, sizeof table);
  memset(poison, POISON_BYTE, sizeof poison);
  amt_to_dev(f->ctx, f->d_arena, poison, sizeof poison);
  attnmeta_step_init(s);
  s->query_start_loc = (const int32_t *)(void *)f->d_in;
  s->num_reqs = 3;
  s->num_tokens = 6;
  s->capacity = 8;
  s->seq_lens = (const int32_t *)(void *)(f->d_in + 64);
  s->block_table = (const int32_t *)(void *)(f->d_in + 128);
  s->block_table_cols = 4;
  s->block_table_stride = 4;
  s->block_size = 4;
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
  s->swa_block_table = s->block_table;
  s->swa_block_table_cols = 4;
  s->swa_block_table_stride = 4;
  s->swa_block_size = 4;
  s->swa_window = 4;
  s->swa_width = 8;
  s->swa_mode = ATTNMETA_SWA_CAUSAL;
  s->swa_indices = slice(f, 7);
  s->swa_indices_stride = 8;
  s->swa_lens = slice(f, 8);
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

static void fixture_close(fixture *f) {
  amt_dev_free(f->ctx, f->d_arena);
  amt_dev_free(f->ctx, f->d_in);
  attnmeta_close(f->ctx);
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

typedef struct bad_param {
  int backend;
  int index;
} bad_param;

static void free_params(struct criterion_test_params *crp) { cr_free(crp->params); }

ParameterizedTestParameters(args_dsv4, rejected) {
  attnmeta_backend be[AMT_MAX_BACKENDS];
  const int nb = amt_test_backends(be);
  bad_param *ps = cr_calloc((size_t)(nb * (NUM_BAD + 1)) + 1, sizeof *ps);
  int i, j, n = 0;
  for (i = 0; i < nb; i++)
    for (j = 0; j <= NUM_BAD; j++) { /* index NUM_BAD: the valid fixture */
      ps[n].backend = (int)be[i];
      ps[n].index = j;
      n++;
    }
  return cr_make_param_array(bad_param, ps, (size_t)n, free_params);
}

ParameterizedTest(bad_param *param, args_dsv4, rejected) {
  const char *be = amt_backend_label((attnmeta_backend)param->backend);
  unsigned char host[ARENA_BYTES];
  fixture f;
  attnmeta_step s;
  attnmeta_status st;
  size_t i;
  fixture_open(&f, (attnmeta_backend)param->backend);
  s = f.step;
  if (param->index == NUM_BAD) { /* the unbroken fixture is accepted and writes */
    st = attnmeta_build_step(f.ctx, &s, NULL);
    cr_expect_eq(st, ATTNMETA_OK, "backend=%s valid DSV4 fixture: %s (%s)", be,
                 attnmeta_status_string(st), attnmeta_last_error(f.ctx));
    amt_to_host(f.ctx, host, f.d_arena, sizeof host);
    for (i = 7 * SLICE; i < 7 * SLICE + 4 && host[i] == POISON_BYTE; i++) {
    }
    cr_expect(i < 7 * SLICE + 4, "backend=%s: the valid fixture wrote no SWA row", be);
    fixture_close(&f);
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
  amt_to_host(f.ctx, host, f.d_arena, sizeof host);
  for (i = 0; i < sizeof host; i++)
    if (host[i] != POISON_BYTE) {
      cr_expect_fail("backend=%s case=%s: output written after an argument error (slice %zu)",
                     be, bad_cases[param->index].name, i / SLICE);
      break;
    }
  fixture_close(&f);
}
