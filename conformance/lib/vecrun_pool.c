// SPDX-License-Identifier: Apache-2.0
/*
 * Runs an "op pool" conformance vector (attnmeta_build_pool_indices) on a
 * backend and compares every element (vecrun.h). For each launch config:
 *   error_word     every output of the vector, error word starting with
 *                  bit 30 set (which must survive), flags checked
 *   no_error_word  the same without an error word
 * Inputs are copied into buffers of exactly their elements (none for an
 * input the vector leaves out: NULL). Each output the vector expects lies
 * between guard zones in a poisoned buffer of rows x stride elements; the
 * guards, the row-stride gaps and the elements marked untouched must stay
 * poisoned. Inputs and outputs are the schema's attnmeta_pool members
 * (vecschema.c), in the struct by offset.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/conformance/vecfile_pool.h"
#include "attnmeta/conformance/vecrun.h"
#include "vecrun_device.h"
#include "vecrun_failure.h"
#include "vecschema.h"

#define KNOWN_FLAGS 0xFFF

typedef struct prun {
  amv_devrun dev; /* first: the engine's callbacks get it */
  const amv_vector *v;
  const amv_pool *p;
  void *d_in[AMV_POOL_MAX_INPUTS];
  amv_guarded outs[AMV_POOL_MAX_OUTPUTS]; /* d NULL: not built */
  int64_t wrong;   /* the failure's wrong elements (1 unless set) */
  char where[128]; /* and where it is, after its index */
} prun;

static void preport(amv_devrun *d, const char *product, int64_t index, int64_t expected,
                    int64_t got, const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));
static void preport(amv_devrun *d, const char *product, int64_t index, int64_t expected,
                    int64_t got, const char *fmt, va_list ap) {
  prun *r = (prun *)d;
  amv_failure f = amv_failure_at(r->v->name, 0, d->config, d->variant, product, index, expected,
                                 got, r->wrong > 0 ? r->wrong : 1);
  snprintf(f.where, sizeof f.where, "index=%lld%s", (long long)index, r->where);
  amv_deliver_failure(d->opts, d->out, &f, fmt, ap);
  r->wrong = 0;
  r->where[0] = 0;
}

/* Output o's elements against the vector, in its buffer read back. */
static void compare_output(prun *r, int o) {
  const amvs_member *m = amvs_pool_output(o);
  const amv_guarded *g = &r->outs[o];
  int64_t i, wrong = 0;
  amv_elem x, first = {0};
  char where[128] = "";
  for (i = 0; i < g->elems; i++) {
    if (!amv_guarded_elem(g, i, &r->p->expect[o], &x) || x.got == x.want) continue;
    if (wrong++ == 0) {
      first = x;
      if (x.at < 0) snprintf(where, sizeof where, " (front guard)");
      else if (x.row >= g->rows) snprintf(where, sizeof where, " (back guard)");
      else if (m->cols)
        snprintf(where, sizeof where, " (row %lld col %lld%s)", (long long)x.row,
                 (long long)x.col, x.col >= g->cols ? ", the row-stride gap" : "");
    }
  }
  r->wrong = wrong;
  snprintf(r->where, sizeof r->where, "%s", where);
  if (wrong)
    amv_dev_report(&r->dev, m->name, first.at, first.want, first.got,
                   "product=%s index=%lld%s expected=%lld%s got=%lld"
                   " (%lld wrong elements in this buffer)",
                   m->name, (long long)first.at, where, (long long)first.want,
                   first.want == amv_poison(m->size) ? " (untouched)" : "",
                   (long long)first.got, (long long)wrong);
}

static void run_variant(amv_devrun *d, int with_error_word) {
  prun *r = (prun *)d;
  const amv_pool *p = r->p;
  attnmeta_pool op;
  int32_t err = AMV_PRESET_BIT;
  int i;
  for (i = 0; i < amv_pool_num_outputs(); i++)
    if (r->outs[i].d && amv_guarded_poison(d, &r->outs[i])) return;
  if (amv_dev_copy(d, d->d_err, &err, 4, 1)) return;
  attnmeta_pool_init(&op);
  for (i = 0; i < amvs_pool.n; i++)
    if (amvs_pool_format_param(&amvs_pool.m[i]))
      amvs_set(&op, &amvs_pool.m[i], amvs_get(&p->op, &amvs_pool.m[i]));
  for (i = 0; i < amv_pool_num_inputs(); i++)
    *(const void **)amvs_slot(&op, amvs_pool_input(i)) = r->d_in[i];
  for (i = 0; i < amv_pool_num_outputs(); i++)
    *(void **)amvs_slot(&op, amvs_pool_output(i)) =
        r->outs[i].d ? amv_guarded_out(&r->outs[i]) : NULL;
  op.error_word = with_error_word ? d->d_err : NULL;
  if (!amv_dev_launched(d, attnmeta_build_pool_indices(d->opts->ctx, &op, NULL),
                        "attnmeta_build_pool_indices"))
    return;
  for (i = 0; i < amv_pool_num_outputs(); i++) {
    if (!r->outs[i].d) continue;
    if (amv_guarded_read(d, &r->outs[i])) return;
    compare_output(r, i);
  }
  if (with_error_word) {
    const int32_t want = AMV_PRESET_BIT | p->flags;
    if (amv_dev_copy(d, &err, d->d_err, 4, 0)) return;
    if (!amv_flags_ok(err, p->flags, p->flags_exact, KNOWN_FLAGS))
      amv_dev_report(d, "error_word", 0, want, err,
                     "product=error_word expected %s0x%x got=0x%x",
                     p->flags_exact ? "" : "bits ", (unsigned)want, (unsigned)err);
  }
}

void amv_run_pool(const amv_runner *opts, const amv_vector *v, amv_outcome *out) {
  const amv_pool *p = v->pool;
  prun r;
  int i;
  memset(&r, 0, sizeof r);
  amv_dev_start(&r.dev, opts, out, preport, run_variant);
  r.v = v;
  r.p = p;
  for (i = 0; i < amv_pool_num_inputs() && !r.dev.stop; i++)
    if ((p->inputs >> i) & 1u)
      r.d_in[i] = amv_dev_upload(&r.dev, &p->input[i], amvs_pool_input(i)->size, 0);
  for (i = 0; i < amv_pool_num_outputs() && !r.dev.stop; i++) {
    const amvs_member *m = amvs_pool_output(i);
    int64_t rows, cols, stride;
    if (!((p->outputs >> i) & 1u)) continue;
    amv_pool_output_shape(p, i, &rows, &cols, &stride);
    amv_guarded_alloc(&r.dev, &r.outs[i], m->size, rows, cols, m->cols ? stride : 1, 0);
  }
  if (!r.dev.stop) r.dev.d_err = amv_dev_alloc(&r.dev, 4);
  amv_dev_each_config(&r.dev);
  for (i = 0; i < AMV_POOL_MAX_INPUTS; i++)
    if (r.d_in[i]) attnmeta_device_free(opts->ctx, r.d_in[i]);
  for (i = 0; i < AMV_POOL_MAX_OUTPUTS; i++) amv_guarded_free(&r.dev, &r.outs[i]);
  amv_dev_finish(&r.dev);
}
