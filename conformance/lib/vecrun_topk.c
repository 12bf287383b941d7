// SPDX-License-Identifier: Apache-2.0
/*
 * Runs an "op topk" conformance vector (attnmeta_convert_topk) on a backend
 * and compares every element (vecrun.h). For each (launch config, rank):
 *   error_word     the vector's mode, error word starting with bit 30 set
 *                  (which must survive), flags checked
 *   no_error_word  the same without an error word
 * The slots and the counts live between guard zones in poisoned buffers;
 * the row-stride gaps of `out`, its guards and the counts' guards (and the
 * counts altogether when the vector does not ask for them) must stay
 * poisoned.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/conformance/vecfile_topk.h"
#include "attnmeta/conformance/vecrun.h"
#include "vecrun_device.h"
#include "vecrun_failure.h"
#include "vecschema.h"

#define KNOWN_FLAGS 0x3FF

typedef struct trun {
  amv_devrun dev; /* first: the engine's callbacks get it */
  const amv_vector *v;
  const amv_topk *k;
  const amv_topk_rank *rk;
  void *d_in[AMV_TOPK_NUM_INPUTS];
  void *d_base[AMV_TOPK_NUM_INPUTS];
  amv_guarded slots, count;
} trun;

static void treport(amv_devrun *d, const char *product, int64_t index, int64_t expected,
                    int64_t got, const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));
static void treport(amv_devrun *d, const char *product, int64_t index, int64_t expected,
                    int64_t got, const char *fmt, va_list ap) {
  const trun *r = (const trun *)d;
  amv_failure f = amv_failure_at(r->v->name, r->rk ? r->rk->rank : 0, d->config, d->variant,
                                 product, index, expected, got, 1);
  amv_deliver_failure(d->opts, d->out, &f, fmt, ap);
}

/* Uploads input i exactly sized (one element more, the data one element in,
 * when `misalign`), of its member's element type. */
static void upload(trun *r, int i, int misalign) {
  const amv_values *vals = &r->k->input[i];
  const size_t es = amvs_topk_input(i)->size;
  if (!vals->v || r->dev.stop) return;
  r->d_base[i] = amv_dev_upload(&r->dev, vals, es, misalign);
  if (r->d_base[i]) r->d_in[i] = (unsigned char *)r->d_base[i] + (size_t)misalign * es;
}

static void compare(trun *r, int with_error_word, int32_t err) {
  const amv_topk *k = r->k;
  const int64_t S = k->op.out_stride;
  int64_t i, bad = 0;
  amv_elem x;
  for (i = 0; i < r->slots.elems && bad < 8; i++) {
    if (!amv_guarded_elem(&r->slots, i, &r->rk->out, &x) || x.got == x.want) continue;
    amv_dev_report(&r->dev, "out", x.at, x.want, x.got,
                   "out: element %lld (row %lld col %lld) is %d, expected %lld%s",
                   (long long)x.at, (long long)(x.at >= 0 ? x.at / S : -1),
                   (long long)(x.at >= 0 ? x.at % S : -1), (int)x.got, (long long)x.want,
                   x.want == amv_poison(4) ? " (untouched)" : "");
    bad++;
  }
  for (i = 0; i < r->count.elems && bad < 16; i++) {
    if (!amv_guarded_elem(&r->count, i, k->count ? &r->rk->count : NULL, &x) || x.got == x.want)
      continue;
    amv_dev_report(&r->dev, "valid_count", x.at, x.want, x.got,
                   "valid_count[%lld] is %d, expected %lld", (long long)x.at, (int)x.got,
                   (long long)x.want);
    bad++;
  }
  if (with_error_word && !amv_flags_ok(err, r->rk->flags, r->rk->flags_exact, KNOWN_FLAGS))
    amv_dev_report(&r->dev, "error_word", 0, AMV_PRESET_BIT | r->rk->flags, err,
                   "error word 0x%x, expected %s0x%x", (unsigned)err,
                   r->rk->flags_exact ? "" : "at least ",
                   (unsigned)(AMV_PRESET_BIT | r->rk->flags));
}

static void run_variant(amv_devrun *d, int with_error_word) {
  trun *r = (trun *)d;
  const amv_topk *k = r->k;
  attnmeta_topk op;
  int32_t err = AMV_PRESET_BIT;
  int in;
  if (amv_guarded_poison(d, &r->slots) || amv_guarded_poison(d, &r->count) ||
      amv_dev_copy(d, d->d_err, &err, 4, 1))
    return;
  attnmeta_topk_init(&op);
  amvs_copy_params(&amvs_topk, &op, &k->op, 0);
  op.dcp_rank = r->rk->rank;
  for (in = 0; in < AMV_TOPK_NUM_INPUTS; in++)
    *(const void **)amvs_slot(&op, amvs_topk_input(in)) = r->d_in[in];
  op.out = amv_guarded_out(&r->slots);
  op.valid_count = k->count ? amv_guarded_out(&r->count) : NULL;
  op.error_word = with_error_word ? d->d_err : NULL;
  if (!amv_dev_launched(d, attnmeta_convert_topk(d->opts->ctx, &op, NULL),
                        "attnmeta_convert_topk"))
    return;
  if (amv_guarded_read(d, &r->slots) || amv_guarded_read(d, &r->count) ||
      amv_dev_copy(d, &err, d->d_err, 4, 0))
    return;
  compare(r, with_error_word, err);
}

void amv_run_topk(const amv_runner *opts, const amv_vector *v, amv_outcome *out) {
  const amv_topk *k = v->topk;
  const int64_t T = k->op.num_tokens;
  trun r;
  int i, rk;
  memset(&r, 0, sizeof r);
  amv_dev_start(&r.dev, opts, out, treport, run_variant);
  r.v = v;
  r.k = k;
  for (i = 0; i < AMV_TOPK_NUM_INPUTS; i++)
    upload(&r, i, (i == AMV_TOPK_INDICES && (k->misalign & 1)) ? 1 : 0);
  if (!r.dev.stop)
    amv_guarded_alloc(&r.dev, &r.slots, 4, T, k->op.topk_count, k->op.out_stride,
                      (k->misalign & 2) ? 1 : 0);
  if (!r.dev.stop) amv_guarded_alloc(&r.dev, &r.count, 4, T, 1, 1, 0);
  if (!r.dev.stop) r.dev.d_err = amv_dev_alloc(&r.dev, 4);
  for (rk = 0; rk < k->nranks && !r.dev.stop; rk++) {
    r.rk = &k->ranks[rk];
    amv_dev_each_config(&r.dev);
  }
  for (i = 0; i < AMV_TOPK_NUM_INPUTS; i++)
    if (r.d_base[i]) attnmeta_device_free(opts->ctx, r.d_base[i]);
  amv_guarded_free(&r.dev, &r.slots);
  amv_guarded_free(&r.dev, &r.count);
  amv_dev_finish(&r.dev);
}
