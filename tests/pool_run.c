// SPDX-License-Identifier: Apache-2.0
#include "pool_run.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"

#define GUARD 48
#define PRESET_BIT (1 << 30)
#define MAX_REPORTS 8

/* Shapes the pool kernel gets on the GPUs on top of the shared sweep:
 * groups not dividing the rows, lanes not dividing a row, a lane a row,
 * few large blocks. */
static const amt_launch pool_gpu_configs[] = {
    {"block32_lanes8_grid1", {32, 1, -1, -1, 8}},
    {"block256_lanes3", {256, 0, -1, -1, 3}},
    {"block1024_lanes256_grid2", {1024, 2, -1, -1, 256}},
    {"block64_lanes1", {64, 0, -1, -1, 1}},
};

int pool_sweep(attnmeta_context *ctx, attnmeta_backend kind, const char *name, int few,
               pool_sweep_one one, const void *arg) {
  const int extra = (int)(sizeof pool_gpu_configs / sizeof pool_gpu_configs[0]);
  const amt_launch *sweep;
  const int ns = amt_launch_configs(kind, &sweep);
  int i, ran = 0;
  for (i = 0; i < ns + extra; i++) {
    const amt_launch *l = i < ns ? &sweep[i] : &pool_gpu_configs[i - ns];
    char label[256];
    attnmeta_status st;
    if (i >= ns && kind == ATTNMETA_BACKEND_CPU) break;
    if (few && i != 0 && i != 2) continue;
    st = attnmeta_set_launch_config(ctx, &l->config);
    cr_assert(st == ATTNMETA_OK, "set_launch_config %s: %s", l->name, attnmeta_last_error(ctx));
    snprintf(label, sizeof label, "%s backend=%s config=%s", name, amt_backend_label(kind),
             l->name);
    one(ctx, label, arg, 1);
    if (i == 0) one(ctx, label, arg, 0); /* no error word */
    ran++;
  }
  return ran;
}

/* A poisoned output region of n elements between two guards. */
typedef struct region {
  int32_t *host, *ref, *dev;
  int64_t n;
} region;

static void region_make(attnmeta_context *ctx, region *r, int64_t n) {
  const int64_t all = n + 2 * GUARD;
  int64_t i;
  r->n = n;
  r->host = malloc((size_t)all * 4);
  r->ref = malloc((size_t)all * 4);
  cr_assert(r->host && r->ref, "out of host memory");
  for (i = 0; i < all; i++) r->host[i] = r->ref[i] = POOL_POISON;
  r->dev = amt_dev_alloc(ctx, (size_t)all * 4);
  amt_to_dev(ctx, r->dev, r->host, (size_t)all * 4);
}

static int region_check(attnmeta_context *ctx, const region *r, const char *label,
                        const char *what, int reports) {
  const int64_t all = r->n + 2 * GUARD;
  int64_t i;
  amt_to_host(ctx, r->host, r->dev, (size_t)all * 4);
  for (i = 0; i < all; i++) {
    if (r->host[i] == r->ref[i]) continue;
    if (reports++ < MAX_REPORTS)
      cr_expect_fail("%s: %s[%lld]%s = %d, reference %d", label, what, (long long)(i - GUARD),
                     i < GUARD || i >= GUARD + r->n ? " (guard)" : "", r->host[i], r->ref[i]);
  }
  return reports;
}

static void region_free(attnmeta_context *ctx, region *r) {
  amt_dev_free(ctx, r->dev);
  free(r->host);
  free(r->ref);
}

/* Device copies of a case's inputs. */
typedef struct inputs {
  const pool_case *c;
  int32_t *req_to_token, *kv_indptr;
  int64_t *rpi, *lengths, *start, *full_to_swa, *query_lens;
} inputs;

static void inputs_upload(attnmeta_context *ctx, const pool_case *c, inputs *d) {
  const amr_pool_input *in = &c->in;
  d->c = c;
  d->req_to_token = amt_upload(ctx, in->req_to_token, (size_t)c->req_to_token_elems * 4);
  d->rpi = amt_upload(ctx, in->req_pool_indices, (size_t)in->num_reqs * 8);
  d->lengths = amt_upload(ctx, in->lengths, (size_t)in->num_reqs * 8);
  d->start = amt_upload(ctx, in->kv_start_idx, (size_t)in->num_reqs * 8);
  d->kv_indptr = amt_upload(ctx, in->kv_indptr, ((size_t)in->num_reqs + 1) * 4);
  d->full_to_swa = amt_upload(ctx, in->full_to_swa, (size_t)in->swa_map_len * 8);
  d->query_lens = amt_upload(ctx, in->query_lens, (size_t)in->num_reqs * 8);
}

static void inputs_free(attnmeta_context *ctx, inputs *d) {
  void *all[] = {d->req_to_token, d->kv_indptr, d->rpi,        d->lengths,
                 d->start,        d->full_to_swa, d->query_lens};
  size_t i;
  for (i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i]) amt_dev_free(ctx, all[i]);
}

/* The outputs, in the order of `names`. */
static const char *const names[POOL_OUTPUTS] = {
    "kv_indices", "kv_indptr_out", "page_table",  "cache_seqlens",  "expanded_lens",
    "topk_lens",  "topk_indptr",   "token_table", "swa_page_table", "query_indptr_out"};

/* The reference's output members, in the order of `names`. */
static void reference_members(amr_pool_outputs *o, int32_t **at[POOL_OUTPUTS]) {
  int32_t **const all[POOL_OUTPUTS] = {
      &o->kv_indices,  &o->indptr_out,  &o->page_table,  &o->cache_seqlens,  &o->expanded_lens,
      &o->topk_lens,   &o->topk_indptr, &o->token_table, &o->swa_page_table, &o->query_indptr};
  int i;
  for (i = 0; i < POOL_OUTPUTS; i++) at[i] = all[i];
}

static void sizes_of(const amr_pool_input *in, int64_t n[POOL_OUTPUTS]) {
  const int64_t B = in->num_reqs,
                T = in->query_rows   ? B
                    : in->query_lens ? in->num_rows
                                     : B * (in->rows_per_req > 1 ? in->rows_per_req : 1);
  n[0] = in->capacity;
  n[1] = B + 1;
  n[2] = T * in->page_stride;
  n[3] = B;
  n[4] = T;
  n[5] = T;
  n[6] = T + 1;
  n[7] = T * in->token_stride;
  n[8] = T * in->swa_stride;
  n[9] = B + 1;
}

/* One run of d's case: poisoned outputs, the call, every element checked. */
static void run_one(attnmeta_context *ctx, const char *label, const void *arg, int error_word) {
  const inputs *d = arg;
  const pool_case *c = d->c;
  const amr_pool_input *in = &c->in;
  region r[POOL_OUTPUTS];
  int64_t n[POOL_OUTPUTS];
  int32_t *d_err = NULL, err = PRESET_BIT, ref_flags = 0;
  amr_pool_outputs ref = {0};
  attnmeta_pool op;
  int32_t **ref_at[POOL_OUTPUTS];
  int32_t **const op_at[POOL_OUTPUTS] = {
      &op.kv_indices,  &op.kv_indptr_out, &op.page_table,  &op.cache_seqlens,
      &op.expanded_lens, &op.topk_lens,   &op.topk_indptr, &op.token_table,
      &op.swa_page_table, &op.query_indptr_out};
  attnmeta_status st;
  int reports = 0, i;
  sizes_of(in, n);
  reference_members(&ref, ref_at);
  for (i = 0; i < POOL_OUTPUTS; i++) {
    region_make(ctx, &r[i], c->want & (1 << i) ? n[i] : 0);
    *ref_at[i] = c->want & (1 << i) ? r[i].ref + GUARD : NULL;
  }
  amr_pool_all(in, &ref, &ref_flags);
  if (error_word) {
    d_err = amt_dev_alloc(ctx, 4);
    amt_to_dev(ctx, d_err, &err, 4);
  }
  amt_pool_table(&op, d->req_to_token, in->pool_rows, in->pool_cols, in->pool_stride);
  amt_pool_reqs(&op, d->rpi, d->lengths, in->num_reqs);
  for (i = 0; i < POOL_OUTPUTS; i++) *op_at[i] = c->want & (1 << i) ? r[i].dev + GUARD : NULL;
  amt_pool_slots(&op, d->kv_indptr, op.kv_indices, op.kv_indices ? in->capacity : 0);
  op.kv_start_idx = d->start;
  op.page_size = in->page_size;
  op.page_table_stride = in->page_stride;
  op.page_table_width = in->page_width;
  op.length_delta = in->length_delta;
  op.rows_per_req = in->rows_per_req;
  op.topk = in->topk;
  op.topk_pool = in->topk_pool;
  op.token_table_stride = in->token_stride;
  op.token_table_width = in->token_width;
  op.length_cap = in->length_cap;
  op.fill_to_width = in->fill_to_width;
  op.full_to_swa = d->full_to_swa;
  op.swa_map_len = in->swa_map_len;
  op.swa_page_table_stride = in->swa_stride;
  op.query_lens = d->query_lens;
  op.num_rows = in->query_lens && !in->query_rows ? in->num_rows : 0;
  op.query_rows = in->query_rows;
  op.dcp_world_size = in->dcp_world;
  op.dcp_rank = in->dcp_rank;
  op.dcp_interleave = in->dcp_interleave;
  op.error_word = d_err;
  st = attnmeta_build_pool_indices(ctx, &op, NULL);
  cr_assert(st == ATTNMETA_OK, "%s: attnmeta_build_pool_indices: %s (%s)", label,
            attnmeta_status_string(st), attnmeta_last_error(ctx));
  for (i = 0; i < POOL_OUTPUTS; i++) reports = region_check(ctx, &r[i], label, names[i], reports);
  if (d_err) {
    amt_to_host(ctx, &err, d_err, 4);
    cr_expect(err == (ref_flags | PRESET_BIT), "%s: error word 0x%x, reference 0x%x", label,
              (unsigned)err, (unsigned)(ref_flags | PRESET_BIT));
    amt_dev_free(ctx, d_err);
  }
  for (i = 0; i < POOL_OUTPUTS; i++) region_free(ctx, &r[i]);
}

void pool_expect_reference(const pool_case *c, const pool_want want[POOL_OUTPUTS]) {
  int64_t n[POOL_OUTPUTS];
  int32_t **at[POOL_OUTPUTS], flags;
  amr_pool_outputs out = {0};
  int i;
  sizes_of(&c->in, n);
  reference_members(&out, at);
  for (i = 0; i < POOL_OUTPUTS; i++) {
    if (!(c->want & (1 << i))) continue;
    cr_assert(want[i].n <= n[i], "%s: %s wants %lld values of %lld", c->name, names[i],
              (long long)want[i].n, (long long)n[i]);
    *at[i] = malloc((size_t)n[i] * 4 + 4);
    cr_assert(*at[i], "out of host memory");
    amt_fill32(*at[i], n[i], POOL_POISON);
  }
  amr_pool_all(&c->in, &out, &flags);
  cr_expect(flags == 0, "%s: flags 0x%x", c->name, (unsigned)flags);
  for (i = 0; i < POOL_OUTPUTS; i++) {
    int64_t e;
    cr_assert(!want[i].values || *at[i], "%s: %s checked but not built", c->name, names[i]);
    if (want[i].values)
      for (e = 0; e < want[i].n; e++)
        cr_expect((*at[i])[e] == want[i].values[e], "%s: %s[%lld] = %d, expected %d", c->name,
                  names[i], (long long)e, (*at[i])[e], want[i].values[e]);
    free(*at[i]);
  }
}

pool_case pool_case_over(const char *name, const int32_t *pool, int32_t rows, int32_t cols,
                         int64_t stride, const int64_t *rpi, const int64_t *len, int32_t B) {
  const pool_case c = {.name = name,
                       .in = {.req_to_token = pool, .pool_stride = stride, .pool_rows = rows,
                              .pool_cols = cols, .req_pool_indices = rpi, .lengths = len,
                              .num_reqs = B, .page_size = 1},
                       .req_to_token_elems = (int64_t)rows * stride};
  return c;
}

int32_t pool_run_everywhere(const pool_case *c, int few) {
  attnmeta_backend kinds[AMT_MAX_BACKENDS];
  const int nk = amt_test_backends(kinds);
  int32_t flags = 0;
  int k, ran = 0;
  {
    /* the reference's flags with the wanted outputs */
    int64_t n[POOL_OUTPUTS];
    int32_t **at[POOL_OUTPUTS];
    amr_pool_outputs out = {0};
    int i;
    sizes_of(&c->in, n);
    reference_members(&out, at);
    for (i = 0; i < POOL_OUTPUTS; i++)
      if (c->want & (1 << i)) *at[i] = malloc((size_t)n[i] * 4 + 4);
    amr_pool_all(&c->in, &out, &flags);
    for (i = 0; i < POOL_OUTPUTS; i++) free(*at[i]);
  }
  for (k = 0; k < nk; k++) {
    attnmeta_context *ctx = amt_open_or_null(kinds[k]);
    inputs d;
    if (!ctx) continue;
    inputs_upload(ctx, c, &d);
    ran += pool_sweep(ctx, kinds[k], c->name, few, run_one, &d);
    inputs_free(ctx, &d);
    attnmeta_close(ctx);
  }
  cr_assert(ran > 0, "%s: no backend ran", c->name);
  return flags;
}

/* The case's inputs on one backend, for amt_each_backend_config. */
typedef struct pool_binding {
  const pool_case *c;
  inputs d;
} pool_binding;

static void binding_upload(attnmeta_context *ctx, void *arg) {
  pool_binding *b = arg;
  inputs_upload(ctx, b->c, &b->d);
}

static void binding_run(attnmeta_context *ctx, const char *label, void *arg) {
  run_one(ctx, label, &((pool_binding *)arg)->d, 1);
}

static void binding_release(attnmeta_context *ctx, void *arg) {
  inputs_free(ctx, &((pool_binding *)arg)->d);
}

void pool_run_configs(const pool_case *c, const amt_launch *configs, int n) {
  pool_binding b;
  const amt_backend_run r = {binding_upload, binding_run, binding_release, &b};
  memset(&b, 0, sizeof b);
  b.c = c;
  amt_each_backend_config(c->name, configs, n, &r);
}
