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
#include "vecrun_failure.h"
#include "vecschema.h"

#define GUARD 64
#define POISON ((int32_t)0x5A5A5A5A)
#define PRESET_BIT (1 << 30)
#define KNOWN_FLAGS 0x3FF

typedef struct trun {
  const amv_runner *opts;
  const amv_vector *v;
  const amv_topk *k;
  const amv_topk_rank *rk;
  const char *config, *variant;
  amv_outcome *out;
  void *d_in[AMV_TOPK_NUM_INPUTS];
  void *d_base[AMV_TOPK_NUM_INPUTS];
  int32_t *d_out, *d_count, *d_err;
  int32_t *h_out, *h_count;
  int64_t out_elems, count_elems, shift;
  int stop;
} trun;

static void treport(trun *r, const char *product, int64_t index, int64_t expected, int64_t got,
                    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void treport(trun *r, const char *product, int64_t index, int64_t expected, int64_t got,
                    const char *fmt, ...) {
  amv_failure f = amv_failure_at(r->v->name, r->rk ? r->rk->rank : 0, r->config, r->variant,
                                 product, index, expected, got, 1);
  va_list ap;
  va_start(ap, fmt);
  amv_deliver_failure(r->opts, r->out, &f, fmt, ap);
  va_end(ap);
}

static void *talloc(trun *r, size_t bytes) {
  void *p = NULL;
  const attnmeta_status st = attnmeta_device_alloc(r->opts->ctx, bytes ? bytes : 4, &p);
  if (st != ATTNMETA_OK) {
    treport(r, "", -1, 0, 0, "attnmeta_device_alloc(%zu) failed: %s (%s)", bytes,
            attnmeta_status_string(st), attnmeta_last_error(r->opts->ctx));
    r->stop = 1;
    return NULL;
  }
  return p;
}

static int tcopy(trun *r, void *dst, const void *src, size_t bytes, int to_device) {
  const attnmeta_status st = to_device ? attnmeta_copy_to_device(r->opts->ctx, dst, src, bytes)
                                       : attnmeta_copy_to_host(r->opts->ctx, dst, src, bytes);
  if (st != ATTNMETA_OK) {
    treport(r, "", -1, 0, 0, "copy of %zu bytes failed: %s (%s)", bytes,
            attnmeta_status_string(st), attnmeta_last_error(r->opts->ctx));
    r->stop = 1;
    return -1;
  }
  return 0;
}

/* Uploads input i exactly sized (one element more, the data one element in,
 * when `misalign`), of its member's element type. */
static void upload(trun *r, int i, int misalign) {
  const amv_values *vals = &r->k->input[i];
  const size_t es = amvs_topk_input(i)->size;
  unsigned char *host;
  int64_t j;
  if (!vals->v || r->stop) return;
  r->d_base[i] = talloc(r, (size_t)(vals->n + misalign) * es);
  if (!r->d_base[i]) return;
  r->d_in[i] = (unsigned char *)r->d_base[i] + (size_t)misalign * es;
  host = malloc((size_t)(vals->n > 0 ? vals->n : 1) * es);
  if (!host) {
    treport(r, "", -1, 0, 0, "out of host memory");
    r->stop = 1;
    return;
  }
  for (j = 0; j < vals->n; j++) {
    if (es == 8) {
      const int64_t x = vals->v[j];
      memcpy(host + j * 8, &x, 8);
    } else {
      const int32_t x = (int32_t)vals->v[j];
      memcpy(host + j * 4, &x, 4);
    }
  }
  if (vals->n) tcopy(r, r->d_in[i], host, (size_t)vals->n * es, 1);
  free(host);
}

static void compare(trun *r, int with_error_word, int32_t err) {
  const amv_topk *k = r->k;
  const int64_t K = k->op.topk_count, S = k->op.out_stride, T = k->op.num_tokens;
  int64_t i, bad = 0;
  for (i = 0; i < r->out_elems && bad < 8; i++) {
    const int64_t at = i - GUARD - r->shift;
    const int64_t t = at >= 0 ? at / S : -1, j = at >= 0 ? at % S : -1;
    int64_t want = POISON;
    int care = 1;
    if (at >= 0 && t < T && j < K) {
      want = r->rk->out.v[t * K + j];
      care = !r->rk->out.care || r->rk->out.care[t * K + j];
    }
    if (care && r->h_out[i] != want) {
      treport(r, "out", at, want, r->h_out[i], "out: element %lld (row %lld col %lld) is %d, expected %lld%s",
              (long long)at, (long long)t, (long long)j, r->h_out[i], (long long)want,
              want == POISON ? " (untouched)" : "");
      bad++;
    }
  }
  for (i = 0; i < r->count_elems && bad < 16; i++) {
    const int64_t at = i - GUARD;
    int64_t want = POISON;
    int care = 1;
    if (k->count && at >= 0 && at < T) {
      want = r->rk->count.v[at];
      care = !r->rk->count.care || r->rk->count.care[at];
    }
    if (care && r->h_count[i] != want) {
      treport(r, "valid_count", at, want, r->h_count[i], "valid_count[%lld] is %d, expected %lld",
              (long long)at, r->h_count[i], (long long)want);
      bad++;
    }
  }
  if (with_error_word) {
    const int32_t want = PRESET_BIT | r->rk->flags;
    const int ok = r->rk->flags_exact ? err == want
                                      : (err & want) == want && (err & ~(PRESET_BIT | KNOWN_FLAGS)) == 0;
    if (!ok)
      treport(r, "error_word", 0, want, err, "error word 0x%x, expected %s0x%x", (unsigned)err,
              r->rk->flags_exact ? "" : "at least ", (unsigned)want);
  }
}

static void run_variant(trun *r, int with_error_word) {
  const amv_topk *k = r->k;
  attnmeta_topk op;
  attnmeta_status st;
  int32_t err = PRESET_BIT;
  int64_t i;
  int in;
  r->variant = with_error_word ? "error_word" : "no_error_word";
  for (i = 0; i < r->out_elems; i++) r->h_out[i] = POISON;
  for (i = 0; i < r->count_elems; i++) r->h_count[i] = POISON;
  if (tcopy(r, r->d_out, r->h_out, (size_t)r->out_elems * 4, 1) ||
      tcopy(r, r->d_count, r->h_count, (size_t)r->count_elems * 4, 1) ||
      tcopy(r, r->d_err, &err, 4, 1))
    return;
  attnmeta_topk_init(&op);
  amvs_copy_params(&amvs_topk, &op, &k->op, 0);
  op.dcp_rank = r->rk->rank;
  for (in = 0; in < AMV_TOPK_NUM_INPUTS; in++)
    *(const void **)amvs_slot(&op, amvs_topk_input(in)) = r->d_in[in];
  op.out = r->d_out + GUARD + r->shift;
  op.valid_count = k->count ? r->d_count + GUARD : NULL;
  op.error_word = with_error_word ? r->d_err : NULL;
  st = attnmeta_convert_topk(r->opts->ctx, &op, NULL);
  r->out->launches++;
  if (st == ATTNMETA_ERR_NOT_SUPPORTED) {
    r->out->result = AMV_SKIP;
    snprintf(r->out->reason, sizeof r->out->reason, "%s", attnmeta_last_error(r->opts->ctx));
    r->stop = 1;
    return;
  }
  if (st != ATTNMETA_OK) {
    treport(r, "", -1, 0, 0, "attnmeta_convert_topk failed: %s (%s)", attnmeta_status_string(st),
            attnmeta_last_error(r->opts->ctx));
    return;
  }
  if (attnmeta_last_error(r->opts->ctx)[0])
    treport(r, "", -1, 0, 0, "attnmeta_last_error is \"%s\" after a success",
            attnmeta_last_error(r->opts->ctx));
  st = attnmeta_synchronize(r->opts->ctx, NULL);
  if (st != ATTNMETA_OK) {
    treport(r, "", -1, 0, 0, "attnmeta_synchronize failed: %s", attnmeta_last_error(r->opts->ctx));
    r->stop = 1;
    return;
  }
  if (tcopy(r, r->h_out, r->d_out, (size_t)r->out_elems * 4, 0) ||
      tcopy(r, r->h_count, r->d_count, (size_t)r->count_elems * 4, 0) ||
      tcopy(r, &err, r->d_err, 4, 0))
    return;
  compare(r, with_error_word, err);
}

void amv_run_topk(const amv_runner *opts, const amv_vector *v, amv_outcome *out) {
  const amv_topk *k = v->topk;
  trun r;
  int i, rk, c;
  memset(out, 0, sizeof *out);
  out->result = AMV_PASS;
  memset(&r, 0, sizeof r);
  r.opts = opts;
  r.v = v;
  r.k = k;
  r.out = out;
  r.config = "-";
  r.variant = "setup";
  for (i = 0; i < AMV_TOPK_NUM_INPUTS; i++)
    upload(&r, i, (i == AMV_TOPK_INDICES && (k->misalign & 1)) ? 1 : 0);
  r.shift = (k->misalign & 2) ? 1 : 0;
  r.out_elems = (int64_t)k->op.num_tokens * k->op.out_stride + 2 * GUARD + r.shift;
  r.count_elems = (int64_t)k->op.num_tokens + 2 * GUARD;
  if (!r.stop) r.d_out = talloc(&r, (size_t)r.out_elems * 4);
  if (!r.stop) r.d_count = talloc(&r, (size_t)r.count_elems * 4);
  if (!r.stop) r.d_err = talloc(&r, 4);
  r.h_out = malloc((size_t)r.out_elems * 4);
  r.h_count = malloc((size_t)r.count_elems * 4);
  if (!r.h_out || !r.h_count) {
    treport(&r, "", -1, 0, 0, "out of host memory");
    r.stop = 1;
  }
  for (rk = 0; rk < k->nranks && !r.stop; rk++) {
    r.rk = &k->ranks[rk];
    for (c = 0; c < (opts->nconfigs ? opts->nconfigs : 1) && !r.stop; c++) {
      if (opts->nconfigs) {
        attnmeta_status st;
        if (opts->config_only >= 0 && c != opts->config_only) continue;
        r.config = opts->configs[c].name;
        st = attnmeta_set_launch_config(opts->ctx, &opts->configs[c].config);
        if (st != ATTNMETA_OK) {
          treport(&r, "", -1, 0, 0, "attnmeta_set_launch_config: %s", attnmeta_last_error(opts->ctx));
          continue;
        }
      } else {
        r.config = "current";
      }
      run_variant(&r, 1);
      if (!r.stop) run_variant(&r, 0);
    }
  }
  if (opts->nconfigs) attnmeta_set_launch_config(opts->ctx, NULL);
  for (i = 0; i < AMV_TOPK_NUM_INPUTS; i++)
    if (r.d_base[i]) attnmeta_device_free(opts->ctx, r.d_base[i]);
  if (r.d_out) attnmeta_device_free(opts->ctx, r.d_out);
  if (r.d_count) attnmeta_device_free(opts->ctx, r.d_count);
  if (r.d_err) attnmeta_device_free(opts->ctx, r.d_err);
  free(r.h_out);
  free(r.h_count);
  if (out->result != AMV_SKIP && out->failures > 0) out->result = AMV_FAIL;
}
