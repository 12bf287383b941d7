// SPDX-License-Identifier: Apache-2.0
/*
 * The rotated DCP peer table of the top-k launch (docs/contract.md 6d)
 * against the naive reference (topk_reference.c), on every backend present
 * and every launch configuration: the ranks' tables stacked, one table for
 * every rank (stride 0), interleaved and padded; every local rank; output
 * rows wider and narrower than W x M; hostile entries (padding, ids at and
 * past the segment, INT32_MAX, block ids past INT32_MAX). Outputs live in
 * poisoned buffers between guard zones, their stride gaps checked
 * untouched. Then the table and a peer-slot conversion in one launch, the
 * worked example, and the host's refusals (nothing written).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "cases.h"
#include "harness.h"
#include "op_inputs.h"
#include "topk_reference.h"

#define GUARD 64
#define POISON ((int32_t)0x5A5A5A5A)
#define PRESET_BIT (1 << 30)

enum { STACKED, SHARED, INTERLEAVED }; /* how the ranks' tables lie */

typedef struct table_case {
  const char *name;
  int32_t W, R, M, width_extra; /* width = W * M + width_extra (may be negative) */
  int64_t S;
  int layout, row_pad, out_pad, hostile;
} table_case;

static const table_case table_cases[] = {
    {"w4_stacked", 4, 2, 3, 0, 16, STACKED, 0, 0, 0},
    {"w2_shared", 2, 5, 7, 0, 50, SHARED, 2, 3, 0},
    {"w3_interleaved", 3, 4, 5, 0, 40, INTERLEAVED, 0, 1, 0},
    {"w1", 1, 3, 9, 0, 30, STACKED, 1, 0, 0},
    {"w4_wider_rows", 4, 3, 2, 5, 20, STACKED, 0, 2, 0},
    {"w4_narrower_rows", 4, 3, 4, -6, 20, STACKED, 0, 0, 0},
    {"w8_many_requests", 8, 70, 33, 0, 300, STACKED, 3, 0, 0},
    {"w4_hostile", 4, 3, 6, 0, 25, STACKED, 1, 1, 1},
    {"w3_past_int32", 3, 2, 4, 0, (int64_t)1 << 30, INTERLEAVED, 0, 0, 2},
};

typedef struct built {
  amr_peer_table_input in;
  int32_t *storage; /* the tables' bytes, gaps included */
  int64_t elems, out_stride;
} built;

/* The tables of case c: ids mostly in [0, S), some padding, gaps AMT_GAP. */
static built build(const table_case *c, uint64_t seed) {
  built b;
  int64_t o, r, p, span;
  memset(&b, 0, sizeof b);
  b.in.world = c->W;
  b.in.num_reqs = c->R;
  b.in.cols = c->M;
  b.in.segment = c->S;
  b.in.width = c->W * c->M + c->width_extra;
  if (c->layout == INTERLEAVED) { /* [R][W][M]: a rank's rows W * M apart */
    b.in.owner_stride = c->M + c->row_pad;
    b.in.row_stride = c->W * b.in.owner_stride;
  } else {
    b.in.row_stride = c->M + c->row_pad;
    b.in.owner_stride = c->layout == SHARED ? 0 : c->R * b.in.row_stride + 3;
  }
  span = (c->R - 1) * b.in.row_stride + c->M;
  b.elems = (c->W - 1) * b.in.owner_stride + span;
  b.out_stride = b.in.width + c->out_pad;
  b.storage = malloc((size_t)b.elems * 4);
  cr_assert(b.storage);
  for (p = 0; p < b.elems; p++) b.storage[p] = AMT_GAP;
  for (o = 0; o < c->W; o++)
    for (r = 0; r < c->R; r++)
      for (p = 0; p < c->M; p++) {
        const int32_t u = amt_rand_range(&seed, 0, 99);
        const int32_t top = c->S < 100000 ? (int32_t)c->S - 1 : 100000;
        int32_t v = u < 8 ? -1 : amt_rand_range(&seed, 0, top);
        if (c->hostile == 1 && (o * c->R + r) * c->M + p < 8) { /* S = 25 */
          static const int32_t bad[8] = {INT32_MAX, INT32_MIN, -7, 25, 26, 24, 1000, 0};
          v = bad[(o * c->R + r) * c->M + p];
        }
        if (c->hostile == 2) v = p == 0 ? INT32_MAX : (int32_t)(c->S - 1 - p);
        b.storage[o * b.in.owner_stride + r * b.in.row_stride + p] = v;
      }
  b.in.tables = b.storage;
  return b;
}

/* One launch with the table only (no rows) and every check. */
static void run_one(attnmeta_context *ctx, const char *label, const built *b, int32_t rank,
                    const int32_t *d_tables) {
  const amr_peer_table_input *in = &b->in;
  const int64_t R = in->num_reqs, Wd = in->width, S = b->out_stride;
  const int64_t elems = R * S + 2 * GUARD;
  int32_t *h = malloc((size_t)elems * 4), *ref = malloc((size_t)(R * Wd + 1) * 4);
  int32_t *d_out, *d_err, err = PRESET_BIT, ref_flags = 0;
  amr_peer_table_input rin = *in;
  attnmeta_topk op;
  attnmeta_status st;
  int64_t i, bad = 0;
  cr_assert(h && ref);
  rin.rank = rank;
  amr_peer_table(&rin, ref, &ref_flags);
  for (i = 0; i < elems; i++) h[i] = POISON;
  d_out = amt_dev_alloc(ctx, (size_t)elems * 4);
  d_err = amt_upload(ctx, &err, 4);
  amt_to_dev(ctx, d_out, h, (size_t)elems * 4);
  amt_topk_rows(&op, NULL, 0, 1, NULL);
  op.num_reqs = in->num_reqs;
  amt_topk_dcp(&op, in->world, rank, 1);
  op.peer_blocks = in->segment;
  op.peer_tables = d_tables;
  op.peer_tables_cols = in->cols;
  op.peer_tables_stride = in->row_stride;
  op.peer_tables_owner_stride = in->owner_stride;
  op.peer_table_out = d_out + GUARD;
  op.peer_table_width = in->width;
  op.peer_table_out_stride = S;
  op.error_word = d_err;
  st = attnmeta_convert_topk(ctx, &op, NULL);
  cr_assert(st == ATTNMETA_OK, "%s: %s (%s)", label, attnmeta_status_string(st),
            attnmeta_last_error(ctx));
  amt_to_host(ctx, h, d_out, (size_t)elems * 4);
  amt_to_host(ctx, &err, d_err, 4);
  for (i = 0; i < elems && bad < 8; i++) {
    const int64_t at = i - GUARD, r = at >= 0 ? at / S : -1, p = at >= 0 ? at % S : -1;
    const int32_t want = at < 0 || r >= R || p >= Wd ? POISON : ref[r * Wd + p];
    if (h[i] != want) {
      cr_expect_fail("%s: element %lld (row %lld page %lld) = %d, expected %d", label,
                     (long long)at, (long long)r, (long long)p, h[i], want);
      bad++;
    }
  }
  cr_expect(err == (PRESET_BIT | ref_flags), "%s: error word 0x%x, reference 0x%x", label,
            (unsigned)err, (unsigned)ref_flags);
  amt_dev_free(ctx, d_out);
  amt_dev_free(ctx, d_err);
  free(h);
  free(ref);
}

Test(topk_peer_table, cases) {
  attnmeta_backend be[AMT_MAX_BACKENDS];
  const int nb = amt_test_backends(be);
  int i, ran = 0;
  size_t c;
  for (i = 0; i < nb; i++) {
    attnmeta_context *ctx = amt_open_or_null(be[i]);
    const amt_launch *cfgs;
    int n, k;
    if (!ctx) continue;
    n = amt_launch_configs(be[i], &cfgs);
    for (c = 0; c < sizeof table_cases / sizeof table_cases[0]; c++) {
      built b = build(&table_cases[c], 0x9e3779b97f4a7c15ull + c);
      int32_t *d_tables = amt_upload(ctx, b.storage, (size_t)b.elems * 4);
      int32_t rank;
      for (k = 0; k < n; k++) {
        cr_assert(attnmeta_set_launch_config(ctx, &cfgs[k].config) == ATTNMETA_OK);
        for (rank = 0; rank < b.in.world; rank++) {
          char label[160];
          snprintf(label, sizeof label, "backend=%s case=%s config=%s local_rank=%d",
                   amt_backend_label(be[i]), table_cases[c].name, cfgs[k].name, (int)rank);
          run_one(ctx, label, &b, rank, d_tables);
        }
      }
      amt_dev_free(ctx, d_tables);
      free(b.storage);
    }
    attnmeta_close(ctx);
    ran++;
  }
  cr_expect(ran > 0, "no backend ran");
}

/* The worked example of contract 6d: W 4, one request, M 3, S 16. */
Test(topk_peer_table, worked_example) {
  static const int32_t tables[4][3] = {{4, 8, -1}, {1, 5, -1}, {3, 6, -1}, {9, 0, -1}};
  static const int32_t want0[12] = {4, 17, 35, 57, 8, 21, 38, 48, -1, -1, -1, -1};
  static const int32_t want1[12] = {52, 1, 19, 41, 56, 5, 22, 32, -1, -1, -1, -1};
  amr_peer_table_input in = {&tables[0][0], 3, 3, 1, 3, 4, 0, 16, 12};
  int32_t out[12], flags, j;
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  attnmeta_topk op;
  amr_peer_table(&in, out, &flags);
  for (j = 0; j < 12; j++) cr_expect(out[j] == want0[j], "reference page %d: %d", j, out[j]);
  amt_topk_rows(&op, NULL, 0, 1, NULL);
  op.num_reqs = 1;
  amt_topk_dcp(&op, 4, 1, 1);
  op.peer_blocks = 16;
  op.peer_tables = &tables[0][0];
  op.peer_tables_cols = op.peer_tables_stride = op.peer_tables_owner_stride = 3;
  op.peer_table_out = out;
  op.peer_table_width = op.peer_table_out_stride = 12;
  cr_assert(attnmeta_convert_topk(ctx, &op, NULL) == ATTNMETA_OK, "%s", attnmeta_last_error(ctx));
  for (j = 0; j < 12; j++) cr_expect(out[j] == want1[j], "local rank 1, page %d: %d", j, out[j]);
  attnmeta_close(ctx);
}

/* The table and a peer-slot conversion in one launch: both as their
 * references say. */
Test(topk_peer_table, with_rows_in_one_launch) {
  static const int32_t topk[2][5] = {{0, 1, 2, 3, 9}, {4, -1, 6, 7, 100}};
  static const int32_t req[2] = {0, 1}, table[2][3] = {{3, 7, 9}, {5, 1, 6}};
  const amr_topk_input rin = {&topk[0][0], 5, 2, 5, NULL, req, 2, &table[0][0], 3, 3, 4, 4,
                              2, 0, 1, NULL, NULL, 0, NULL, 0, 16};
  const amr_peer_table_input tin = {&table[0][0], 3, 0, 2, 3, 2, 1, 16, 6};
  int32_t out[10], cnt[2], pages[12], ref[10], ref_cnt[2], ref_pages[12], f1, f2, err = 0, j;
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  attnmeta_topk op;
  amr_topk(&rin, ref, ref_cnt, &f1);
  amr_peer_table(&tin, ref_pages, &f2);
  amt_topk_rows(&op, &topk[0][0], 2, 5, out);
  amt_topk_table(&op, req, 2, &table[0][0], 3, 4);
  amt_topk_dcp(&op, 2, 1, 1);
  op.valid_count = cnt;
  op.peer_blocks = 16;
  op.peer_tables = &table[0][0];
  op.peer_tables_cols = op.peer_tables_stride = 3;
  op.peer_table_out = pages;
  op.peer_table_width = op.peer_table_out_stride = 6;
  op.error_word = &err;
  cr_assert(attnmeta_convert_topk(ctx, &op, NULL) == ATTNMETA_OK, "%s", attnmeta_last_error(ctx));
  for (j = 0; j < 10; j++) cr_expect(out[j] == ref[j], "out %d: %d, reference %d", j, out[j], ref[j]);
  for (j = 0; j < 2; j++) cr_expect(cnt[j] == ref_cnt[j], "count %d: %d", j, cnt[j]);
  for (j = 0; j < 12; j++)
    cr_expect(pages[j] == ref_pages[j], "page %d: %d, reference %d", j, pages[j], ref_pages[j]);
  cr_expect(err == (f1 | f2), "flags 0x%x, reference 0x%x", (unsigned)err, (unsigned)(f1 | f2));
  /* by hand: x = 0 of rank 0 at block 3, x = 1 of rank 1 there, x = 2 of rank 0 at offset 1 */
  cr_expect(out[0] == 12 && out[1] == 76 && out[2] == 13 && cnt[0] == 5,
            "worked by hand: %d %d %d, count %d", out[0], out[1], out[2], cnt[0]);
  attnmeta_close(ctx);
}

/* ---- refusals: a status, a message, nothing written ---- */
static int32_t g_tables[2][2][4], g_out[64];

static void table_op(attnmeta_topk *op) {
  amt_topk_rows(op, NULL, 0, 1, NULL);
  op->num_reqs = 2;
  amt_topk_dcp(op, 2, 0, 1);
  op->peer_blocks = 8;
  op->peer_tables = &g_tables[0][0][0];
  op->peer_tables_cols = op->peer_tables_stride = 4;
  op->peer_tables_owner_stride = 8;
  op->peer_table_out = g_out;
  op->peer_table_width = op->peer_table_out_stride = 8;
}

static void refused(attnmeta_topk *op, attnmeta_status want, const char *needle) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  attnmeta_status st;
  int j;
  for (j = 0; j < 64; j++) g_out[j] = POISON;
  st = attnmeta_convert_topk(ctx, op, NULL);
  cr_expect_eq(st, want, "status %s, wanted %s (%s)", attnmeta_status_string(st),
               attnmeta_status_string(want), attnmeta_last_error(ctx));
  cr_expect(strstr(attnmeta_last_error(ctx), needle), "message '%s' lacks '%s'",
            attnmeta_last_error(ctx), needle);
  for (j = 0; j < 64; j++) cr_expect(g_out[j] == POISON, "out[%d] written on error", j);
  attnmeta_close(ctx);
}

Test(topk_peer_table, refusals) {
  attnmeta_topk op;
  int32_t rows[1][1] = {{0}}, req[1] = {0}, out1[1] = {POISON};
  table_op(&op);
  op.peer_blocks = 0;
  refused(&op, ATTNMETA_ERR_INVALID_ARGUMENT, "peer_blocks >= 1");
  table_op(&op);
  op.peer_blocks = INT64_MAX / 2 + 1;
  refused(&op, ATTNMETA_ERR_OVERFLOW, "overflow int64");
  table_op(&op);
  op.peer_tables = NULL;
  refused(&op, ATTNMETA_ERR_NULL_POINTER, "peer_tables");
  table_op(&op);
  op.peer_table_out_stride = 7;
  refused(&op, ATTNMETA_ERR_STRIDE, "peer_table_out_stride");
  table_op(&op);
  op.peer_tables_stride = 3;
  refused(&op, ATTNMETA_ERR_STRIDE, "peer_tables_stride");
  table_op(&op);
  op.peer_tables_owner_stride = -1;
  refused(&op, ATTNMETA_ERR_INVALID_ARGUMENT, "peer_tables_owner_stride");
  table_op(&op);
  op.peer_tables_owner_stride = INT64_MAX / 4;
  refused(&op, ATTNMETA_ERR_OVERFLOW, "peer_tables_owner_stride");
  table_op(&op);
  op.peer_tables_stride = INT64_MAX / 4;
  refused(&op, ATTNMETA_ERR_OVERFLOW, "64-bit byte offsets");
  table_op(&op);
  op.peer_table_out_stride = INT64_MAX / 4;
  refused(&op, ATTNMETA_ERR_OVERFLOW, "64-bit byte offsets");
  table_op(&op);
  op.peer_table_width = -1;
  refused(&op, ATTNMETA_ERR_INVALID_ARGUMENT, "peer_table_width");
  table_op(&op); /* the output over rank 1's table */
  op.peer_table_out = &g_tables[1][0][0];
  op.peer_table_width = op.peer_table_out_stride = 2;
  refused(&op, ATTNMETA_ERR_INVALID_ARGUMENT, "overlaps");
  /* peer slots past int32 once rows are converted */
  amt_topk_rows(&op, &rows[0][0], 1, 1, out1);
  amt_topk_table(&op, req, 1, &rows[0][0], 1, 64);
  amt_topk_dcp(&op, 4, 0, 1);
  op.peer_blocks = (int64_t)INT32_MAX / 4 / 64 + 1;
  refused(&op, ATTNMETA_ERR_INVALID_ARGUMENT, "do not fit in int32");
  cr_expect(out1[0] == POISON, "a row written on error");
}

/* No rows and a table of no entries: nothing to do, NULL buffers allowed;
 * the segment bound of the rows does not apply to a table alone. */
Test(topk_peer_table, empty_and_table_alone) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  attnmeta_topk op;
  int j;
  table_op(&op);
  op.peer_tables = NULL;
  op.peer_tables_cols = 0;
  op.peer_table_width = 0;
  cr_expect(attnmeta_convert_topk(ctx, &op, NULL) == ATTNMETA_OK, "%s", attnmeta_last_error(ctx));
  table_op(&op);
  op.num_reqs = 0;
  op.peer_tables = NULL;
  cr_expect(attnmeta_convert_topk(ctx, &op, NULL) == ATTNMETA_OK, "%s", attnmeta_last_error(ctx));
  for (j = 0; j < 64; j++) g_out[j] = POISON;
  memset(g_tables, 0, sizeof g_tables);
  table_op(&op);
  op.peer_blocks = (int64_t)1 << 40; /* past int32 for rows, fine for block ids */
  cr_expect(attnmeta_convert_topk(ctx, &op, NULL) == ATTNMETA_OK, "%s", attnmeta_last_error(ctx));
  cr_expect(g_out[0] == 0 && g_out[1] == -1, "rank 0's id 0, rank 1's past INT32_MAX: %d %d",
            g_out[0], g_out[1]);
  attnmeta_close(ctx);
}
