// SPDX-License-Identifier: Apache-2.0
#define _POSIX_C_SOURCE 200809L
#include "draft_run.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_dialect.h"

/* The emulated block's barrier and block-shared memory: defined before the
 * kernel body is included, so its AM_BARRIER() and AM_SHARED_ARRAY expand
 * to them. */
static _Thread_local pthread_barrier_t *block_barrier;
static _Thread_local int64_t *block_shared;
static void emulated_barrier(void) { pthread_barrier_wait(block_barrier); }
#undef AM_BARRIER
#define AM_BARRIER() emulated_barrier()
#undef AM_SHARED_ARRAY
#define AM_SHARED_ARRAY(type, name, count) type *const name = (type *)block_shared

#include "am_pool_kernel.h" /* the kernel body, for the emulated GPU launches */
#include "am_pool_translate.h"
#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"
#include "pool_run.h"

#define GUARD 40
#define PRESET_BIT (1 << 30)
#define MAX_REPORTS 8

static int64_t indices_elems(const amr_draft_input *in) {
  return (int64_t)in->steps * in->indices_stride;
}
static int64_t indptr_elems(const amr_draft_input *in) {
  return (int64_t)in->steps * in->indptr_stride;
}

static int32_t *poisoned(int64_t n) {
  int32_t *a = malloc((size_t)(n + 2 * GUARD) * 4);
  cr_assert(a, "out of host memory");
  amt_fill32(a, n + 2 * GUARD, DRAFT_POISON);
  return a;
}

int32_t draft_reference(const draft_case *c, int32_t **indices, int32_t **indptr) {
  int32_t flags;
  *indices = poisoned(indices_elems(&c->in));
  *indptr = poisoned(indptr_elems(&c->in));
  amr_draft_lists(&c->in, c->want & DRAFT_WANT_INDICES ? *indices + GUARD : NULL,
                  c->want & DRAFT_WANT_INDPTR ? *indptr + GUARD : NULL, &flags);
  return flags;
}

static int compare(const int32_t *got, const int32_t *ref, int64_t n, const char *label,
                   const char *what, int reports) {
  int64_t i;
  for (i = 0; i < n + 2 * GUARD; i++) {
    if (got[i] == ref[i]) continue;
    if (reports++ < MAX_REPORTS)
      cr_expect_fail("%s: %s[%lld]%s = %d, reference %d", label, what, (long long)(i - GUARD),
                     i < GUARD || i >= GUARD + n ? " (guard)" : "", got[i], ref[i]);
  }
  return reports;
}

/* The draft operation on these pool, request and position arrays (host or
 * device), writing the outputs c wants at indices and indptr. */
static void draft_op(attnmeta_pool *op, const draft_case *c, const void *pool, const void *rpi,
                     const void *lens, const void *pos, int32_t *indices, int32_t *indptr) {
  const amr_draft_input *in = &c->in;
  amt_pool_table(op, pool, in->pool_rows, in->pool_cols, in->pool_stride);
  amt_pool_reqs(op, rpi, lens, in->num_reqs);
  op->page_size = in->page_size;
  op->length_delta = in->length_delta;
  op->draft_steps = in->steps;
  op->draft_topk = in->topk;
  op->draft_positions = pos;
  if (c->want & DRAFT_WANT_INDICES) {
    op->draft_kv_indices = indices;
    op->draft_kv_indices_width = in->width;
    op->draft_kv_indices_stride = in->indices_stride;
  }
  if (c->want & DRAFT_WANT_INDPTR) {
    op->draft_kv_indptr = indptr;
    op->draft_kv_indptr_stride = in->indptr_stride;
  }
}

/* A case's inputs on the device. */
typedef struct device_inputs {
  const draft_case *c;
  void *pool, *rpi, *lens, *pos;
} device_inputs;

static void run_one(attnmeta_context *ctx, const char *label, const void *arg, int error_word) {
  const device_inputs *d = arg;
  const draft_case *c = d->c;
  const amr_draft_input *in = &c->in;
  const int64_t ni = indices_elems(in), np = indptr_elems(in);
  int32_t *ref_i, *ref_p, *got_i = poisoned(ni), *got_p = poisoned(np);
  const int32_t ref_flags = draft_reference(c, &ref_i, &ref_p);
  int32_t *dev_i = amt_dev_alloc(ctx, (size_t)(ni + 2 * GUARD) * 4);
  int32_t *dev_p = amt_dev_alloc(ctx, (size_t)(np + 2 * GUARD) * 4);
  int32_t *d_err = NULL, err = PRESET_BIT;
  attnmeta_pool op;
  attnmeta_status st;
  int reports;
  amt_to_dev(ctx, dev_i, got_i, (size_t)(ni + 2 * GUARD) * 4);
  amt_to_dev(ctx, dev_p, got_p, (size_t)(np + 2 * GUARD) * 4);
  if (error_word) {
    d_err = amt_dev_alloc(ctx, 4);
    amt_to_dev(ctx, d_err, &err, 4);
  }
  draft_op(&op, c, d->pool, d->rpi, d->lens, d->pos, dev_i + GUARD, dev_p + GUARD);
  op.error_word = d_err;
  st = attnmeta_build_pool_indices(ctx, &op, NULL);
  cr_assert(st == ATTNMETA_OK, "%s: attnmeta_build_pool_indices: %s (%s)", label,
            attnmeta_status_string(st), attnmeta_last_error(ctx));
  amt_to_host(ctx, got_i, dev_i, (size_t)(ni + 2 * GUARD) * 4);
  amt_to_host(ctx, got_p, dev_p, (size_t)(np + 2 * GUARD) * 4);
  reports = compare(got_i, ref_i, ni, label, "draft_kv_indices", 0);
  compare(got_p, ref_p, np, label, "draft_kv_indptr", reports);
  if (d_err) {
    amt_to_host(ctx, &err, d_err, 4);
    cr_expect(err == (ref_flags | PRESET_BIT), "%s: error word 0x%x, reference 0x%x", label,
              (unsigned)err, (unsigned)(ref_flags | PRESET_BIT));
    amt_dev_free(ctx, d_err);
  }
  amt_dev_free(ctx, dev_i);
  amt_dev_free(ctx, dev_p);
  free(ref_i);
  free(ref_p);
  free(got_i);
  free(got_p);
}

/* GPU launches emulated on the host: lanes x groups threads a block, each
 * a POSIX thread, so the block-wide scan runs with real concurrency
 * between its threads; the blocks one after another. */
static const struct {
  uint32_t lanes, groups, grid;
} emulated[] = {{8, 4, 3}, {3, 5, 2}, {32, 1, 1}, {1, 7, 4}, {64, 2, 5}};

typedef struct worker {
  const am_pool_params *p;
  am_thread th;
  pthread_barrier_t *barrier;
  int64_t *shared;
} worker;

/* The threads of one block, stepping through the grid's blocks together. */
static void *run_thread(void *arg) {
  worker *w = arg;
  uint32_t b;
  block_barrier = w->barrier;
  block_shared = w->shared;
  for (b = 0; b < w->th.grid_dim; b++) {
    w->th.block = b;
    am_pool_body(w->p, w->th);
    pthread_barrier_wait(w->barrier); /* the next block reuses the shared memory */
  }
  return NULL;
}

static void launch(const am_pool_params *p, uint32_t lanes, uint32_t groups, uint32_t grid) {
  const uint32_t n = lanes * groups;
  pthread_t *tid = malloc(n * sizeof *tid);
  worker *w = malloc(n * sizeof *w);
  int64_t *shared = malloc(4 * AM_POOL_SCAN_SLOTS * sizeof *shared);
  pthread_barrier_t barrier;
  uint32_t i;
  cr_assert(tid && w && shared, "out of host memory");
  cr_assert(pthread_barrier_init(&barrier, NULL, n) == 0);
  for (i = 0; i < n; i++) {
    w[i].p = p;
    w[i].th = am_make_thread(0, grid, i % lanes, lanes, i / lanes, groups);
    w[i].barrier = &barrier;
    w[i].shared = shared;
    cr_assert(pthread_create(&tid[i], NULL, run_thread, &w[i]) == 0);
  }
  for (i = 0; i < n; i++) pthread_join(tid[i], NULL);
  pthread_barrier_destroy(&barrier);
  free(tid);
  free(w);
  free(shared);
}

static void run_emulated(const draft_case *c) {
  const amr_draft_input *in = &c->in;
  const int64_t ni = indices_elems(in), np = indptr_elems(in);
  size_t e;
  for (e = 0; e < sizeof emulated / sizeof emulated[0]; e++) {
    int32_t *ref_i, *ref_p, *got_i = poisoned(ni), *got_p = poisoned(np), err = 0;
    const int32_t ref_flags = draft_reference(c, &ref_i, &ref_p);
    char label[160];
    attnmeta_pool op;
    am_pool_params p;
    int reports;
    draft_op(&op, c, in->req_to_token, in->req_pool_indices, in->lengths, in->positions,
             got_i + GUARD, got_p + GUARD);
    op.error_word = &err;
    p = am_pool_params_of(&op);
    launch(&p, emulated[e].lanes, emulated[e].groups, emulated[e].grid);
    snprintf(label, sizeof label, "%s emulated lanes=%u groups=%u grid=%u", c->name,
             emulated[e].lanes, emulated[e].groups, emulated[e].grid);
    reports = compare(got_i, ref_i, ni, label, "draft_kv_indices", 0);
    compare(got_p, ref_p, np, label, "draft_kv_indptr", reports);
    cr_expect(err == ref_flags, "%s: error word 0x%x, reference 0x%x", label, (unsigned)err,
              (unsigned)ref_flags);
    free(ref_i);
    free(ref_p);
    free(got_i);
    free(got_p);
  }
}

static void inputs_upload(attnmeta_context *ctx, const draft_case *c, device_inputs *d) {
  const amr_draft_input *in = &c->in;
  d->c = c;
  d->pool = amt_upload(ctx, in->req_to_token, (size_t)in->pool_rows * (size_t)in->pool_stride * 4);
  d->rpi = amt_upload(ctx, in->req_pool_indices, (size_t)in->num_reqs * 8);
  d->lens = amt_upload(ctx, in->lengths, (size_t)in->num_reqs * 8);
  d->pos = amt_upload(ctx, in->positions, (size_t)in->num_reqs * (size_t)in->topk * 8);
}

static void inputs_free(attnmeta_context *ctx, device_inputs *d) {
  if (d->pool) amt_dev_free(ctx, d->pool);
  if (d->rpi) amt_dev_free(ctx, d->rpi);
  if (d->lens) amt_dev_free(ctx, d->lens);
  if (d->pos) amt_dev_free(ctx, d->pos);
}

int32_t draft_run_everywhere(const draft_case *c) {
  attnmeta_backend kinds[AMT_MAX_BACKENDS];
  const int nk = amt_test_backends(kinds);
  int32_t *ref_i, *ref_p;
  const int32_t flags = draft_reference(c, &ref_i, &ref_p);
  int k, ran = 0;
  free(ref_i);
  free(ref_p);
  run_emulated(c);
  for (k = 0; k < nk; k++) {
    attnmeta_context *ctx = amt_open_or_null(kinds[k]);
    device_inputs d;
    if (!ctx) continue;
    inputs_upload(ctx, c, &d);
    ran += pool_sweep(ctx, kinds[k], c->name, 0, run_one, &d);
    inputs_free(ctx, &d);
    attnmeta_close(ctx);
  }
  cr_assert(ran > 0, "%s: no backend ran", c->name);
  return flags;
}

/* The case's inputs on one backend, for amt_each_backend_config. */
typedef struct draft_binding {
  const draft_case *c;
  device_inputs d;
} draft_binding;

static void binding_upload(attnmeta_context *ctx, void *arg) {
  draft_binding *b = arg;
  inputs_upload(ctx, b->c, &b->d);
}

static void binding_run(attnmeta_context *ctx, const char *label, void *arg) {
  run_one(ctx, label, &((draft_binding *)arg)->d, 1);
}

static void binding_release(attnmeta_context *ctx, void *arg) {
  inputs_free(ctx, &((draft_binding *)arg)->d);
}

int32_t draft_run_configs(const draft_case *c, const amt_launch *configs, int n) {
  int32_t *ref_i, *ref_p;
  const int32_t flags = draft_reference(c, &ref_i, &ref_p);
  draft_binding b;
  const amt_backend_run r = {binding_upload, binding_run, binding_release, &b};
  free(ref_i);
  free(ref_p);
  memset(&b, 0, sizeof b);
  b.c = c;
  amt_each_backend_config(c->name, configs, n, &r);
  return flags;
}
