// SPDX-License-Identifier: Apache-2.0
/*
 * Contract section 7: every SWA group of a step in one launch
 * (swa_groups, the tables and rows stacked with group strides), on every
 * backend and launch configuration, against the naive reference run once
 * per group on that group's table; poisoned rows, gaps between groups and
 * a guard zone stay untouched. Then the argument errors, which write
 * nothing.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"
#include "reference_dsv4.h"

#define GUARD 8
#define POISON32 ((int32_t)0x5a5a5a5a)
#define MAX_R 4
#define MAX_G 3

typedef struct group_case {
  const char *name;
  int32_t groups; /* as the step's swa_groups: 0 and 1 are one group */
  int32_t R, T, C;
  int32_t qsl[MAX_R + 1], seq_lens[MAX_R];
  int32_t window, width, row_gap, block_size, cols;
  int32_t table_gap, rows_gap; /* elements between groups past each group's own */
  int floor;                   /* 1: swa_replay_start */
  int hostile;                 /* 1: negative and huge block ids in the last group */
} group_case;

static const group_case cases[] = {
    {"default_one_group", 0, 3, 20, 24, {0, 1, 9, 20}, {40, 12, 30}, 8, 8, 2, 4, 12, 0, 0, 0, 0},
    {"one_group", 1, 3, 20, 24, {0, 1, 9, 20}, {40, 12, 30}, 8, 8, 2, 4, 12, 5, 9, 1, 0},
    {"two_groups_dense", 2, 2, 12, 12, {0, 4, 12}, {20, 9}, 4, 4, 0, 2, 10, 0, 0, 0, 0},
    {"two_groups_gaps", 2, 3, 18, 22, {0, 1, 10, 18}, {70, 20, 8}, 16, 16, 3, 8, 9, 7, 11, 1, 0},
    {"three_groups_floor", 3, 4, 24, 26, {0, 1, 2, 12, 24}, {40, 300, 20, 12}, 16, 20, 1, 4, 24,
     3, 5, 1, 0},
    {"three_groups_hostile", 3, 2, 16, 20, {0, 6, 14}, {30, 1 << 20}, 6, 9, 2, 2, 16, 1, 2, 0, 1},
    {"three_groups_no_tokens", 3, 1, 0, 4, {0, 0}, {5}, 4, 8, 0, 4, 2, 3, 0, 0, 0},
};

static int32_t ngroups(const group_case *k) { return k->groups > 1 ? k->groups : 1; }

typedef struct dev_step {
  attnmeta_step s;
  int64_t stride, table_stride, rows_stride; /* a row's, a group table's, a group of rows' */
  int32_t *h_table;
  int32_t h_replay[MAX_R];
  void *qsl, *seq, *table, *replay, *rows, *lens, *err;
} dev_step;

static size_t table_elems(const group_case *k, const dev_step *d) {
  return (size_t)((ngroups(k) - 1) * d->table_stride + (int64_t)k->R * k->cols);
}
static int64_t rows_elems(const group_case *k, const dev_step *d) {
  return (ngroups(k) - 1) * d->rows_stride + (int64_t)k->T * d->stride + GUARD;
}

static void *upload(attnmeta_context *ctx, const void *src, size_t bytes) {
  void *p = amt_dev_alloc(ctx, bytes ? bytes : 8);
  if (bytes) amt_to_dev(ctx, p, src, bytes);
  return p;
}

static void poison(attnmeta_context *ctx, void *p, size_t bytes) {
  unsigned char *h = malloc(bytes);
  cr_assert(h);
  memset(h, 0x5a, bytes);
  amt_to_dev(ctx, p, h, bytes);
  free(h);
}

/* Group g's block ids differ from every other group's; the hostile case's
 * last group has negative and out-of-range ones. The gaps hold -3. */
static void fill_tables(const group_case *k, dev_step *d) {
  const size_t n = table_elems(k, d);
  int32_t g, r, c;
  size_t i;
  d->h_table = malloc((n ? n : 1) * 4);
  cr_assert(d->h_table);
  for (i = 0; i < n; i++) d->h_table[i] = -3;
  for (g = 0; g < ngroups(k); g++)
    for (r = 0; r < k->R; r++)
      for (c = 0; c < k->cols; c++) {
        int32_t id = 1000 * g + 50 * r + 3 * c + 1;
        if (k->hostile && g == ngroups(k) - 1 && c % 3 == 1) id = -9;
        if (k->hostile && g == ngroups(k) - 1 && c % 3 == 2) id = INT32_MAX - c;
        d->h_table[g * d->table_stride + (int64_t)r * k->cols + c] = id;
      }
  for (r = 0; r < k->R; r++) d->h_replay[r] = (int32_t)(r * 11 % 17);
}

static void open_step(attnmeta_context *ctx, const group_case *k, dev_step *d) {
  attnmeta_step *s = &d->s;
  memset(d, 0, sizeof *d);
  d->stride = (int64_t)k->width + k->row_gap;
  d->table_stride = (int64_t)k->R * k->cols + k->table_gap;
  d->rows_stride = (int64_t)k->T * d->stride + k->rows_gap;
  fill_tables(k, d);
  attnmeta_step_init(s);
  d->qsl = upload(ctx, k->qsl, ((size_t)k->R + 1) * 4);
  d->seq = upload(ctx, k->seq_lens, (size_t)k->R * 4);
  d->table = upload(ctx, d->h_table, table_elems(k, d) * 4);
  d->rows = amt_dev_alloc(ctx, (size_t)rows_elems(k, d) * 4);
  d->lens = amt_dev_alloc(ctx, (size_t)(k->C + GUARD) * 4);
  d->err = amt_dev_alloc(ctx, 4);
  s->query_start_loc = d->qsl;
  s->seq_lens = d->seq;
  s->num_reqs = k->R;
  s->num_tokens = k->T;
  s->capacity = k->C;
  s->error_word = d->err;
  amt_step_swa(s, d->table, k->cols, k->block_size, k->window, k->width, ATTNMETA_SWA_CAUSAL,
               d->rows, d->stride, d->lens);
  s->swa_groups = k->groups;
  s->swa_block_table_group_stride = d->table_stride;
  s->swa_indices_group_stride = d->rows_stride;
  if (k->floor) {
    d->replay = upload(ctx, d->h_replay, (size_t)k->R * 4);
    s->swa_replay_start = d->replay;
  }
}

static void close_step(attnmeta_context *ctx, dev_step *d) {
  void *all[] = {d->qsl, d->seq, d->table, d->replay, d->rows, d->lens, d->err};
  size_t i;
  for (i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i]) amt_dev_free(ctx, all[i]);
  free(d->h_table);
}

static void poison_outputs(attnmeta_context *ctx, const group_case *k, dev_step *d) {
  const int32_t zero = 0;
  poison(ctx, d->rows, (size_t)rows_elems(k, d) * 4);
  poison(ctx, d->lens, (size_t)(k->C + GUARD) * 4);
  amt_to_dev(ctx, d->err, &zero, 4);
}

/* The reference's one-group rows on group g's table. */
static amr_dsv4_output *reference(const group_case *k, const dev_step *d, int32_t g,
                                  attnmeta_step *host) {
  amr_input in;
  amr_dsv4_input di;
  amr_dsv4_output *o;
  memset(&in, 0, sizeof in);
  memset(&di, 0, sizeof di);
  in.qsl = k->qsl;
  in.R = k->R;
  in.T = k->T;
  in.C = k->C;
  in.seq_lens = k->seq_lens;
  in.num_mapped = -1;
  in.block_size = in.world = in.interleave = 1;
  attnmeta_step_init(host);
  host->swa_replay_start = k->floor ? d->h_replay : NULL;
  di.swa_table.ids = d->h_table + g * d->table_stride;
  di.swa_table.cols = k->cols;
  di.swa_table.stride = k->cols;
  di.swa_block_size = k->block_size;
  di.swa_window = k->window;
  di.swa_width = k->width;
  di.swa_mode = ATTNMETA_SWA_CAUSAL;
  di.c128a_width = -1;
  di.step = host;
  o = amr_dsv4_alloc(&in, &di);
  amr_dsv4_build(&in, &di, o);
  return o;
}

/* Each group's rows where the group strides put them, poison everywhere
 * else (row padding, the gaps, the guard); the lengths once (the same for
 * every group: checked), 0 in [T, C); the flags of all groups. 1 on a
 * mismatch. */
static int expect_outputs(attnmeta_context *ctx, const group_case *k, const dev_step *d,
                          amr_dsv4_output *const *o, const char *where) {
  const int64_t n = rows_elems(k, d);
  int32_t *want = malloc((size_t)n * 4), *rows = malloc((size_t)n * 4);
  int32_t lens[64 + GUARD], err, flags = 0, g, t, j;
  int64_t i;
  int bad = 0;
  cr_assert(want && rows);
  for (i = 0; i < n; i++) want[i] = POISON32;
  for (g = 0; g < ngroups(k); g++) {
    flags |= o[g]->swa_flags;
    for (t = 0; t < k->C; t++) cr_assert_eq(o[g]->swa_lens[t], o[0]->swa_lens[t]);
    for (t = 0; t < k->T; t++)
      for (j = 0; j < k->width; j++)
        want[g * d->rows_stride + t * d->stride + j] = o[g]->swa[t * k->width + j];
  }
  amt_to_host(ctx, rows, d->rows, (size_t)n * 4);
  for (i = 0; i < n && !bad; i++)
    if (rows[i] != want[i]) {
      cr_expect_eq(rows[i], want[i], "%s element %lld of the rows: %d, want %d", where,
                   (long long)i, rows[i], want[i]);
      bad = 1;
    }
  free(rows);
  free(want);
  amt_to_host(ctx, lens, d->lens, (size_t)(k->C + GUARD) * 4);
  for (i = 0; i < k->C + GUARD && !bad; i++) {
    const int32_t w = i < k->C ? o[0]->swa_lens[i] : POISON32;
    if (lens[i] != w) {
      cr_expect_eq(lens[i], w, "%s swa_lens[%lld]: %d, want %d", where, (long long)i, lens[i], w);
      bad = 1;
    }
  }
  amt_to_host(ctx, &err, d->err, 4);
  if (!bad && err != flags) {
    cr_expect_eq(err, flags, "%s error word %#x, want %#x", where, err, flags);
    bad = 1;
  }
  return bad;
}

/* One case's run, for amt_step_every_case. */
typedef struct run {
  attnmeta_context *ctx;
  const group_case *k;
  dev_step d;
  attnmeta_step host[MAX_G];
  amr_dsv4_output *o[MAX_G];
  int hostile_flags; /* what the hostile groups flag past the first group */
} run;
static void poison_run(void *arg) {
  run *r = arg;
  poison_outputs(r->ctx, r->k, &r->d);
}
static int check_run(void *arg, const char *where) {
  const run *r = arg;
  return expect_outputs(r->ctx, r->k, &r->d, r->o, where);
}
static void open_run(attnmeta_context *ctx, int n, void *arg, amt_step_case *c) {
  run *r = arg;
  const group_case *k = &cases[n];
  int32_t g;
  r->ctx = ctx;
  r->k = k;
  open_step(ctx, k, &r->d);
  for (g = 0; g < ngroups(k); g++) r->o[g] = reference(k, &r->d, g, &r->host[g]);
  if (k->hostile) r->hostile_flags |= r->o[ngroups(k) - 1]->swa_flags & ~r->o[0]->swa_flags;
  *c = (amt_step_case){k->name, &r->d.s, {poison_run, check_run, r}};
}
static void close_run(attnmeta_context *ctx, void *arg) {
  run *r = arg;
  int32_t g;
  for (g = 0; g < ngroups(r->k); g++) amr_dsv4_free(r->o[g]);
  close_step(ctx, &r->d);
}

Test(dsv4_swa_groups, every_backend_matches_the_reference) {
  run r = {0};
  amt_step_every_case((int)(sizeof cases / sizeof cases[0]), open_run, close_run, &r);
  /* the hostile group flags what the others do not: each group reads its own table */
  cr_expect(r.hostile_flags & ATTNMETA_FLAG_BLOCK_ID_NEGATIVE, "flags %#x", r.hostile_flags);
}

typedef struct bad_arg {
  const char *name;
  attnmeta_status status;
  const char *message;
} bad_arg;

static void spoil(attnmeta_step *s, const char *name, const dev_step *d) {
  /* the lengths in the second group's rows: only the grouped extent sees it */
  if (!strcmp(name, "lens_in_second_group"))
    s->swa_lens = (int32_t *)d->rows + d->rows_stride + 1;
  if (!strcmp(name, "negative_groups")) s->swa_groups = -1;
  /* one short of a group's 2 x 9 + 9 elements */
  if (!strcmp(name, "table_groups_overlap")) s->swa_block_table_group_stride = 26;
  if (!strcmp(name, "rows_groups_overlap")) s->swa_indices_group_stride = 0;
  if (!strcmp(name, "groups_overflow")) {
    s->swa_groups = 3;
    s->swa_indices_group_stride = INT64_MAX / 4;
  }
}

Test(dsv4_swa_groups, bad_arguments_write_nothing) {
  static const bad_arg bad[] = {
      {"negative_groups", ATTNMETA_ERR_INVALID_ARGUMENT, "swa_groups (-1) is negative"},
      {"table_groups_overlap", ATTNMETA_ERR_STRIDE,
       "swa_block_table_group_stride (26) < the 27 elements of one group of swa_block_table"},
      {"rows_groups_overlap", ATTNMETA_ERR_STRIDE,
       "swa_indices_group_stride (0) < the 339 elements of one group of swa_indices"},
      {"groups_overflow", ATTNMETA_ERR_OVERFLOW,
       "swa_indices of 3 groups x swa_indices_group_stride"},
      {"lens_in_second_group", ATTNMETA_ERR_INVALID_ARGUMENT, "overlaps output swa_indices"},
  };
  attnmeta_backend be[AMT_MAX_BACKENDS];
  const int nb = amt_test_backends(be);
  const group_case *k = &cases[3]; /* two groups with gaps */
  int b, i;
  for (b = 0; b < nb; b++) {
    attnmeta_context *ctx = amt_open_or_null(be[b]);
    if (!ctx) continue;
    for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
      dev_step d;
      attnmeta_status st;
      int32_t *rows, lens[64 + GUARD];
      int64_t j, n;
      open_step(ctx, k, &d);
      n = rows_elems(k, &d);
      poison_outputs(ctx, k, &d);
      spoil(&d.s, bad[i].name, &d);
      st = attnmeta_build_step(ctx, &d.s, NULL);
      cr_expect_eq(st, bad[i].status, "%s: %s", bad[i].name, attnmeta_status_string(st));
      cr_expect(strstr(attnmeta_last_error(ctx), bad[i].message), "%s: message \"%s\"",
                bad[i].name, attnmeta_last_error(ctx));
      rows = malloc((size_t)n * 4);
      cr_assert(rows);
      amt_to_host(ctx, rows, d.rows, (size_t)n * 4);
      amt_to_host(ctx, lens, d.lens, (size_t)(k->C + GUARD) * 4);
      for (j = 0; j < n; j++)
        if (rows[j] != POISON32) {
          cr_expect_eq(rows[j], POISON32, "%s: row element %lld written", bad[i].name,
                       (long long)j);
          break;
        }
      for (j = 0; j < k->C + GUARD; j++)
        if (lens[j] != POISON32) {
          cr_expect_eq(lens[j], POISON32, "%s: swa_lens[%lld] written", bad[i].name,
                       (long long)j);
          break;
        }
      free(rows);
      close_step(ctx, &d);
    }
    attnmeta_close(ctx);
  }
}

/* The contract's example: two groups, window 4, one request at position 9,
 * block size 4, tables [0, 1, 2] and [5, 6, 7]: length 4, rows 6 7 8 9
 * and 26 27 28 29. */
Test(dsv4_swa_groups, the_contracts_example) {
  static const int32_t qsl[2] = {0, 1}, seq[1] = {10}, tables[6] = {0, 1, 2, 5, 6, 7};
  static const int32_t want[8] = {6, 7, 8, 9, 26, 27, 28, 29};
  attnmeta_backend be[AMT_MAX_BACKENDS];
  const int nb = amt_test_backends(be);
  int b, j;
  for (b = 0; b < nb; b++) {
    attnmeta_context *ctx = amt_open_or_null(be[b]);
    attnmeta_step s;
    void *dq, *ds, *dt, *dr, *dl;
    int32_t rows[8], lens;
    if (!ctx) continue;
    dq = upload(ctx, qsl, sizeof qsl);
    ds = upload(ctx, seq, sizeof seq);
    dt = upload(ctx, tables, sizeof tables);
    dr = amt_dev_alloc(ctx, sizeof rows);
    dl = amt_dev_alloc(ctx, 4);
    attnmeta_step_init(&s);
    s.query_start_loc = dq;
    s.seq_lens = ds;
    s.num_reqs = s.num_tokens = s.capacity = 1;
    amt_step_swa(&s, dt, 3, 4, 4, 4, ATTNMETA_SWA_CAUSAL, dr, 4, dl);
    s.swa_groups = 2;
    s.swa_block_table_group_stride = 3;
    s.swa_indices_group_stride = 4;
    cr_assert_eq(attnmeta_build_step(ctx, &s, NULL), ATTNMETA_OK, "%s", attnmeta_last_error(ctx));
    cr_assert_eq(attnmeta_synchronize(ctx, NULL), ATTNMETA_OK);
    amt_to_host(ctx, rows, dr, sizeof rows);
    amt_to_host(ctx, &lens, dl, 4);
    cr_expect_eq(lens, 4, "%s: length %d", amt_backend_label(be[b]), lens);
    for (j = 0; j < 8; j++)
      cr_expect_eq(rows[j], want[j], "%s: entry %d: %d, want %d", amt_backend_label(be[b]), j,
                   rows[j], want[j]);
    amt_dev_free(ctx, dq);
    amt_dev_free(ctx, ds);
    amt_dev_free(ctx, dt);
    amt_dev_free(ctx, dr);
    amt_dev_free(ctx, dl);
    attnmeta_close(ctx);
  }
}
