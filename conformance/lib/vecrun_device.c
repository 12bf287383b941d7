// SPDX-License-Identifier: Apache-2.0
/* The device side of the pool and top-k engines (vecrun_device.h). */
#include "vecrun_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vecschema.h"

void amv_dev_start(amv_devrun *r, const amv_runner *opts, amv_outcome *out,
                   void (*report)(amv_devrun *, const char *, int64_t, int64_t, int64_t,
                                  const char *, va_list),
                   void (*launch)(amv_devrun *, int)) {
  memset(out, 0, sizeof *out);
  out->result = AMV_PASS;
  memset(r, 0, sizeof *r);
  r->opts = opts;
  r->out = out;
  r->config = "-";
  r->variant = "setup";
  r->report = report;
  r->launch = launch;
}

void amv_dev_finish(amv_devrun *r) {
  if (r->opts->nconfigs) attnmeta_set_launch_config(r->opts->ctx, NULL);
  if (r->d_err) attnmeta_device_free(r->opts->ctx, r->d_err);
  r->d_err = NULL;
  if (r->out->result != AMV_SKIP && r->out->failures > 0) r->out->result = AMV_FAIL;
}

void amv_dev_report(amv_devrun *r, const char *product, int64_t index, int64_t expected,
                    int64_t got, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  r->report(r, product, index, expected, got, fmt, ap);
  va_end(ap);
}

void amv_dev_fail(amv_devrun *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  r->report(r, "", -1, 0, 0, fmt, ap);
  va_end(ap);
}

void *amv_dev_alloc(amv_devrun *r, size_t bytes) {
  void *p = NULL;
  const attnmeta_status st = attnmeta_device_alloc(r->opts->ctx, bytes ? bytes : 4, &p);
  if (st != ATTNMETA_OK) {
    amv_dev_fail(r, "attnmeta_device_alloc(%zu) failed: %s (%s)", bytes,
                 attnmeta_status_string(st), attnmeta_last_error(r->opts->ctx));
    r->stop = 1;
    return NULL;
  }
  return p;
}

int amv_dev_copy(amv_devrun *r, void *dst, const void *src, size_t bytes, int to_device) {
  attnmeta_status st;
  if (!bytes) return 0;
  st = to_device ? attnmeta_copy_to_device(r->opts->ctx, dst, src, bytes)
                 : attnmeta_copy_to_host(r->opts->ctx, dst, src, bytes);
  if (st != ATTNMETA_OK) {
    amv_dev_fail(r, "copy of %zu bytes failed: %s (%s)", bytes, attnmeta_status_string(st),
                 attnmeta_last_error(r->opts->ctx));
    r->stop = 1;
    return -1;
  }
  return 0;
}

void *amv_dev_upload(amv_devrun *r, const amv_values *vals, size_t es, int64_t lead) {
  unsigned char *d = amv_dev_alloc(r, (size_t)(vals->n + lead) * es), *host;
  int64_t j;
  if (!d) return NULL;
  host = malloc((size_t)(vals->n > 0 ? vals->n : 1) * es);
  if (!host) {
    amv_dev_fail(r, "out of host memory");
    r->stop = 1;
    return d;
  }
  for (j = 0; j < vals->n; j++) amvs_store(host + j * (int64_t)es, es, vals->v[j]);
  amv_dev_copy(r, d + (size_t)lead * es, host, (size_t)vals->n * es, 1);
  free(host);
  return d;
}

int amv_guarded_alloc(amv_devrun *r, amv_guarded *g, size_t es, int64_t rows, int64_t cols,
                      int64_t stride, int64_t shift) {
  g->es = es;
  g->rows = rows;
  g->cols = cols;
  g->stride = stride;
  g->shift = shift;
  g->elems = AMV_GUARD + shift + rows * stride + AMV_GUARD;
  g->d = amv_dev_alloc(r, (size_t)g->elems * es);
  g->h = malloc((size_t)g->elems * es);
  if (!g->h) {
    amv_dev_fail(r, "out of host memory");
    r->stop = 1;
  }
  return g->d && g->h ? 0 : -1;
}

void amv_guarded_free(amv_devrun *r, amv_guarded *g) {
  if (g->d) attnmeta_device_free(r->opts->ctx, g->d);
  free(g->h);
  g->d = g->h = NULL;
}

void *amv_guarded_out(const amv_guarded *g) {
  return g->d + (size_t)(AMV_GUARD + g->shift) * g->es;
}

int amv_guarded_poison(amv_devrun *r, amv_guarded *g) {
  memset(g->h, AMV_POISON_BYTE, (size_t)g->elems * g->es);
  return amv_dev_copy(r, g->d, g->h, (size_t)g->elems * g->es, 1);
}

int amv_guarded_read(amv_devrun *r, amv_guarded *g) {
  return amv_dev_copy(r, g->h, g->d, (size_t)g->elems * g->es, 0);
}

int64_t amv_poison(size_t es) {
  unsigned char p[8];
  memset(p, AMV_POISON_BYTE, sizeof p);
  return amvs_load(p, es);
}

int amv_guarded_elem(const amv_guarded *g, int64_t i, const amv_values *e, amv_elem *x) {
  const int64_t at = i - AMV_GUARD - g->shift;
  const int inside = at >= 0 && at < g->rows * g->stride;
  x->at = at;
  x->row = inside ? at / g->stride : (at < 0 ? -1 : g->rows);
  x->col = inside ? at % g->stride : -1;
  x->want = amv_poison(g->es);
  x->got = amvs_load(g->h + i * (int64_t)g->es, g->es);
  if (e && inside && x->col < g->cols) {
    const int64_t k = x->row * g->cols + x->col;
    const int care = e->care ? e->care[k] : 1;
    if (care == 0) return 0;
    if (care == 1) x->want = e->v[k];
  }
  return 1;
}

int amv_dev_launched(amv_devrun *r, attnmeta_status st, const char *what) {
  const amv_runner *o = r->opts;
  r->out->launches++;
  if (st == ATTNMETA_ERR_NOT_SUPPORTED) {
    r->out->result = AMV_SKIP;
    snprintf(r->out->reason, sizeof r->out->reason, "%s", attnmeta_last_error(o->ctx));
    r->stop = 1;
    return 0;
  }
  if (st != ATTNMETA_OK) {
    amv_dev_fail(r, "%s failed: %s (%s)", what, attnmeta_status_string(st),
                 attnmeta_last_error(o->ctx));
    return 0;
  }
  if (attnmeta_last_error(o->ctx)[0])
    amv_dev_fail(r, "attnmeta_last_error is \"%s\" after a success", attnmeta_last_error(o->ctx));
  st = attnmeta_synchronize(o->ctx, NULL);
  if (st != ATTNMETA_OK) {
    amv_dev_fail(r, "attnmeta_synchronize failed: %s", attnmeta_last_error(o->ctx));
    r->stop = 1;
    return 0;
  }
  return 1;
}

int amv_flags_ok(int32_t err, int32_t flags, int exact, int32_t known) {
  const int32_t want = AMV_PRESET_BIT | flags;
  return exact ? err == want : (err & want) == want && (err & ~(AMV_PRESET_BIT | known)) == 0;
}

void amv_dev_each_config(amv_devrun *r) {
  const amv_runner *o = r->opts;
  int c;
  for (c = 0; c < (o->nconfigs ? o->nconfigs : 1) && !r->stop; c++) {
    if (o->nconfigs) {
      attnmeta_status st;
      if (o->config_only >= 0 && c != o->config_only) continue;
      r->config = o->configs[c].name;
      st = attnmeta_set_launch_config(o->ctx, &o->configs[c].config);
      if (st != ATTNMETA_OK) {
        amv_dev_fail(r, "attnmeta_set_launch_config: %s", attnmeta_last_error(o->ctx));
        continue;
      }
    } else {
      r->config = "current";
    }
    r->variant = "error_word";
    r->launch(r, 1);
    if (r->stop) break;
    r->variant = "no_error_word";
    r->launch(r, 0);
  }
}
