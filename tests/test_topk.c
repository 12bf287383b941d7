// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta_convert_topk against the naive reference (topk_reference.c), on
 * every backend present, every launch configuration of the backend's sweep
 * and a few of the top-k kernel's own, in four modes (the case's own, in
 * place without counts, in place with counts, compacted), with outputs in
 * poisoned buffers between guard zones, stride gaps checked untouched, and
 * once more with rows shifted off 16-byte alignment. Plus the hand-worked
 * DCP example, and the check that the reference itself meets it.
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
#include "topk_cases.h"
#include "topk_reference.h"

#define GUARD 64
#define POISON ((int32_t)0x5A5A5A5A)
#define PRESET_BIT (1 << 30)
#define MAX_REPORTS 8

/* Launch shapes the top-k kernel gets on top of the shared sweep: several
 * rows a block with groups not dividing the tokens, lanes that do not
 * divide a row, one lane a row, a lane per column. */
static const amt_launch topk_gpu_configs[] = {
    {"block32_lanes8_grid1", {32, 1, -1, -1, 8}},
    {"block256_lanes3", {256, 0, -1, -1, 3}},
    {"block1024_lanes256_grid2", {1024, 2, -1, 1, 256}},
    {"block64_lanes1_vector0", {64, 0, -1, 0, 1}},
};

enum { MODE_CASE, MODE_PLAIN, MODE_COUNT, MODE_COMPACT, NMODES };
static const char *const mode_names[NMODES] = {"case", "plain", "count", "compact"};

/* Device copies of a case's inputs. */
typedef struct inputs {
  int32_t *topk, *qsl, *req_id, *table, *prefill_req, *ws;
  int64_t *token_slot;
} inputs;

static void inputs_upload(attnmeta_context *ctx, const amt_topk_batch *b, inputs *d) {
  const amr_topk_input *in = &b->in;
  d->topk = amt_upload(ctx, b->topk, (size_t)b->topk_elems * 4);
  d->qsl = amt_upload(ctx, in->qsl, ((size_t)in->num_reqs + 1) * 4);
  d->req_id = amt_upload(ctx, in->req_id, (size_t)in->num_tokens * 4);
  d->table = amt_upload(ctx, b->table, (size_t)b->table_elems * 4);
  d->prefill_req = amt_upload(ctx, in->prefill_req, (size_t)in->num_tokens * 4);
  d->ws = amt_upload(ctx, in->workspace_starts, (size_t)in->num_prefill * 4);
  d->token_slot = amt_upload(ctx, in->token_slot, (size_t)in->num_tokens * 8);
}

static void inputs_free(attnmeta_context *ctx, inputs *d) {
  void *all[] = {d->topk, d->qsl, d->req_id, d->table, d->prefill_req, d->ws, d->token_slot};
  size_t i;
  for (i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i]) amt_dev_free(ctx, all[i]);
}

/* One run: poisoned outputs, the call, every element checked. `shift`
 * moves the output rows one element off their alignment; `launch_flags`
 * are the call's (early start changes no result). */
static void run_one(attnmeta_context *ctx, const char *label, const amt_topk_batch *b,
                    const inputs *d, int mode, int shift, uint32_t launch_flags) {
  const amr_topk_input *in = &b->in;
  const int64_t T = in->num_tokens, K = in->topk_count, S = b->out_stride;
  const int64_t out_elems = T * S + 2 * GUARD + shift, cnt_elems = T + 2 * GUARD;
  int32_t *h_out = malloc((size_t)out_elems * 4), *h_cnt = malloc((size_t)cnt_elems * 4);
  int32_t *ref = malloc((size_t)(T * K + 1) * 4), *ref_cnt = malloc((size_t)(T + 1) * 4);
  int32_t *d_out, *d_cnt, *d_err, err = PRESET_BIT, ref_flags = 0;
  amr_topk_input rin = *in;
  attnmeta_topk op;
  attnmeta_status st;
  int64_t i, t, j;
  int reports = 0, want_count, compact;
  cr_assert(h_out && h_cnt && ref && ref_cnt, "out of host memory");

  compact = mode == MODE_CASE ? in->compact : mode == MODE_COMPACT;
  want_count = mode == MODE_CASE ? b->count : mode != MODE_PLAIN;
  rin.compact = compact;
  amr_topk(&rin, ref, ref_cnt, &ref_flags);

  for (i = 0; i < out_elems; i++) h_out[i] = POISON;
  for (i = 0; i < cnt_elems; i++) h_cnt[i] = POISON;
  d_out = amt_dev_alloc(ctx, (size_t)out_elems * 4);
  d_cnt = amt_dev_alloc(ctx, (size_t)cnt_elems * 4);
  d_err = amt_dev_alloc(ctx, 4);
  amt_to_dev(ctx, d_out, h_out, (size_t)out_elems * 4);
  amt_to_dev(ctx, d_cnt, h_cnt, (size_t)cnt_elems * 4);
  amt_to_dev(ctx, d_err, &err, 4);

  amt_topk_rows(&op, d->topk, in->num_tokens, in->topk_count, d_out + GUARD + shift);
  op.topk_stride = in->topk_stride;
  op.out_stride = S;
  amt_topk_table(&op, in->req_id ? d->req_id : NULL, in->num_reqs, d->table, in->cols,
                 in->block_size);
  op.block_table_stride = in->table_stride;
  op.query_start_loc = in->qsl ? d->qsl : NULL;
  op.stride_rows = b->stride_rows_arg;
  amt_topk_dcp(&op, in->world, in->rank, in->interleave);
  amt_topk_prefill(&op, d->prefill_req, d->ws, in->num_prefill);
  op.token_slot = d->token_slot;
  op.valid_count = want_count ? d_cnt + GUARD : NULL;
  op.compact = compact;
  op.peer_blocks = in->peer_blocks;
  op.error_word = d_err;
  op.launch_flags = launch_flags;
  st = attnmeta_convert_topk(ctx, &op, NULL);
  cr_assert(st == ATTNMETA_OK, "%s: attnmeta_convert_topk: %s (%s)", label,
            attnmeta_status_string(st), attnmeta_last_error(ctx));
  amt_to_host(ctx, h_out, d_out, (size_t)out_elems * 4);
  amt_to_host(ctx, h_cnt, d_cnt, (size_t)cnt_elems * 4);
  amt_to_host(ctx, &err, d_err, 4);

#define REPORT(...)                                       \
  do {                                                    \
    if (reports++ < MAX_REPORTS) cr_expect_fail(__VA_ARGS__); \
  } while (0)
  for (i = 0; i < out_elems; i++) {
    const int64_t at = i - GUARD - shift;
    t = at >= 0 ? at / S : -1;
    j = at >= 0 ? at % S : -1;
    if (at < 0 || t >= T || j >= K) {
      if (h_out[i] != POISON) REPORT("%s: out element %lld (row %lld col %lld) outside the rows' K columns was written: 0x%x", label, (long long)at, (long long)t, (long long)j, (unsigned)h_out[i]);
    } else if (!b->values_unspecified && h_out[i] != ref[t * K + j]) {
      REPORT("%s: out[%lld][%lld] = %d, reference %d", label, (long long)t, (long long)j,
             h_out[i], ref[t * K + j]);
    } else if (b->values_unspecified && h_out[i] == POISON) {
      REPORT("%s: out[%lld][%lld] not written", label, (long long)t, (long long)j);
    }
  }
  for (i = 0; i < cnt_elems; i++) {
    const int64_t at = i - GUARD;
    if (!want_count || at < 0 || at >= T) {
      if (h_cnt[i] != POISON) REPORT("%s: valid_count element %lld written", label, (long long)at);
    } else if (!b->values_unspecified && h_cnt[i] != ref_cnt[at]) {
      REPORT("%s: valid_count[%lld] = %d, reference %d", label, (long long)at, h_cnt[i],
             ref_cnt[at]);
    }
  }
  if (!b->values_unspecified && err != (PRESET_BIT | ref_flags))
    REPORT("%s: error word 0x%x, reference 0x%x (and the preset bit 0x%x)", label,
           (unsigned)err, (unsigned)ref_flags, (unsigned)PRESET_BIT);
  if (b->values_unspecified && !(err & PRESET_BIT))
    REPORT("%s: the error word's preset bit was cleared", label);
  /* the hand-worked expectations hold for the reference's output too */
  if (mode == MODE_COMPACT && b->expect_count0 >= 0) {
    cr_expect(h_cnt[GUARD] == b->expect_count0, "%s: valid_count[0] = %d, worked by hand %d",
              label, h_cnt[GUARD], b->expect_count0);
    for (j = 0; j < 8 && j < K; j++)
      cr_expect(h_out[GUARD + shift + j] == b->expect_row0[j], "%s: out[0][%lld] = %d, by hand %d",
                label, (long long)j, h_out[GUARD + shift + j], b->expect_row0[j]);
  }
#undef REPORT
  amt_dev_free(ctx, d_out);
  amt_dev_free(ctx, d_cnt);
  amt_dev_free(ctx, d_err);
  free(h_out);
  free(h_cnt);
  free(ref);
  free(ref_cnt);
}

static void run_config(attnmeta_context *ctx, const char *be, const amt_launch *cfg,
                       const amt_topk_batch *b, const inputs *d) {
  char label[256];
  int mode, shift;
  const attnmeta_status st = attnmeta_set_launch_config(ctx, &cfg->config);
  cr_assert(st == ATTNMETA_OK, "set_launch_config %s: %s", cfg->name, attnmeta_last_error(ctx));
  /* the shifted run also starts early: both change how, not what */
  for (mode = 0; mode < NMODES; mode++)
    for (shift = 0; shift < 2; shift++) {
      snprintf(label, sizeof label, "backend=%s case=%s config=%s mode=%s%s", be, b->name,
               cfg->name, mode_names[mode], shift ? " shifted early-start" : "");
      run_one(ctx, label, b, d, mode, shift, shift ? ATTNMETA_LAUNCH_EARLY_START : 0);
    }
}

/* Every case, every backend present, every configuration. */
static void run_case(int c) {
  attnmeta_backend be[AMT_MAX_BACKENDS];
  const int nb = amt_test_backends(be);
  int i, k, ran = 0;
  amt_topk_batch *b = amt_topk_materialize(c);
  cr_assert(b, "case %d: out of memory", c);
  for (i = 0; i < nb; i++) {
    attnmeta_context *ctx = amt_open_or_null(be[i]);
    const amt_launch *cfgs;
    int n;
    inputs d;
    if (!ctx) continue;
    inputs_upload(ctx, b, &d);
    n = amt_launch_configs(be[i], &cfgs);
    for (k = 0; k < n; k++) run_config(ctx, amt_backend_label(be[i]), &cfgs[k], b, &d);
    if (be[i] != ATTNMETA_BACKEND_CPU)
      for (k = 0; k < (int)(sizeof topk_gpu_configs / sizeof topk_gpu_configs[0]); k++)
        run_config(ctx, amt_backend_label(be[i]), &topk_gpu_configs[k], b, &d);
    inputs_free(ctx, &d);
    attnmeta_close(ctx);
    ran++;
  }
  cr_expect(ran > 0, "no backend ran case %s", b->name);
  amt_topk_batch_free(b);
}

ParameterizedTestParameters(topk, cases) {
  return amt_index_params(amt_topk_num_cases() < 128 ? amt_topk_num_cases() : 128);
}

ParameterizedTest(int *c, topk, cases) {
  cr_assert(amt_topk_num_cases() <= 128, "more than 128 top-k cases");
  if (amt_case_selected(amt_topk_case_name(*c))) run_case(*c);
}

/* The reference meets the examples worked by hand, on its own. */
Test(topk, reference_worked_examples) {
  int c, found = 0;
  for (c = 0; c < amt_topk_num_cases(); c++) {
    amt_topk_batch *b = amt_topk_materialize(c);
    int32_t *out, cnt[64], flags;
    int j;
    cr_assert(b);
    if (b->expect_count0 < 0) {
      amt_topk_batch_free(b);
      continue;
    }
    found++;
    out = malloc((size_t)b->in.num_tokens * (size_t)b->in.topk_count * 4);
    b->in.compact = 1;
    amr_topk(&b->in, out, cnt, &flags);
    cr_expect(cnt[0] == b->expect_count0, "%s: reference count %d", b->name, cnt[0]);
    for (j = 0; j < 8; j++)
      cr_expect(out[j] == b->expect_row0[j], "%s: reference out[0][%d] = %d, by hand %d",
                b->name, j, out[j], b->expect_row0[j]);
    for (j = 8; j < b->in.topk_count; j++)
      cr_expect(out[j] == -1, "%s: reference out[0][%d] = %d after the valid prefix", b->name, j,
                out[j]);
    free(out);
    amt_topk_batch_free(b);
  }
  cr_expect(found > 0, "no hand-worked case");
}
