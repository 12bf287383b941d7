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
#include "vecrun_failure.h"
#include "vecschema.h"

#define GUARD 64
#define POISON_BYTE 0x5A
#define PRESET_BIT (1 << 30)
#define KNOWN_FLAGS 0xFFF

typedef struct prun {
  const amv_runner *opts;
  const amv_vector *v;
  const amv_pool *p;
  const char *config, *variant;
  amv_outcome *out;
  void *d_in[AMV_POOL_MAX_INPUTS];
  unsigned char *d_out[AMV_POOL_MAX_OUTPUTS]; /* the buffer, guards included */
  unsigned char *h_out[AMV_POOL_MAX_OUTPUTS];
  int64_t elems[AMV_POOL_MAX_OUTPUTS];        /* rows x stride + 2 GUARD */
  int32_t *d_err;
  int64_t wrong;   /* the failure's wrong elements (1 unless set) */
  char where[128]; /* and where it is, after its index */
  int stop;
} prun;

static void preport(prun *r, const char *product, int64_t index, int64_t expected, int64_t got,
                    const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void preport(prun *r, const char *product, int64_t index, int64_t expected, int64_t got,
                    const char *fmt, ...) {
  amv_failure f = amv_failure_at(r->v->name, 0, r->config, r->variant, product, index, expected,
                                 got, r->wrong > 0 ? r->wrong : 1);
  va_list ap;
  snprintf(f.where, sizeof f.where, "index=%lld%s", (long long)index, r->where);
  va_start(ap, fmt);
  amv_deliver_failure(r->opts, r->out, &f, fmt, ap);
  va_end(ap);
  r->wrong = 0;
  r->where[0] = 0;
}

static void *palloc(prun *r, size_t bytes) {
  void *q = NULL;
  const attnmeta_status st = attnmeta_device_alloc(r->opts->ctx, bytes ? bytes : 4, &q);
  if (st != ATTNMETA_OK) {
    preport(r, "", -1, 0, 0, "attnmeta_device_alloc(%zu) failed: %s (%s)", bytes,
            attnmeta_status_string(st), attnmeta_last_error(r->opts->ctx));
    r->stop = 1;
    return NULL;
  }
  return q;
}

static int pcopy(prun *r, void *dst, const void *src, size_t bytes, int to_device) {
  attnmeta_status st;
  if (!bytes) return 0;
  st = to_device ? attnmeta_copy_to_device(r->opts->ctx, dst, src, bytes)
                 : attnmeta_copy_to_host(r->opts->ctx, dst, src, bytes);
  if (st != ATTNMETA_OK) {
    preport(r, "", -1, 0, 0, "copy of %zu bytes failed: %s (%s)", bytes,
            attnmeta_status_string(st), attnmeta_last_error(r->opts->ctx));
    r->stop = 1;
    return -1;
  }
  return 0;
}

/* Input i into a device buffer of exactly its elements, of its member's type. */
static void upload(prun *r, int i) {
  const amv_values *vals = &r->p->input[i];
  const size_t es = amvs_pool_input(i)->size;
  unsigned char *host;
  int64_t j;
  r->d_in[i] = palloc(r, (size_t)vals->n * es);
  if (!r->d_in[i]) return;
  host = malloc((size_t)(vals->n > 0 ? vals->n : 1) * es);
  if (!host) {
    preport(r, "", -1, 0, 0, "out of host memory");
    r->stop = 1;
    return;
  }
  for (j = 0; j < vals->n; j++) amvs_store(host + j * (int64_t)es, es, vals->v[j]);
  pcopy(r, r->d_in[i], host, (size_t)vals->n * es, 1);
  free(host);
}

/* Output o's elements against the vector, in its buffer read back. */
static void compare_output(prun *r, int o) {
  const amvs_member *m = amvs_pool_output(o);
  const amv_values *e = &r->p->expect[o];
  const size_t es = m->size;
  const int64_t poison = amvs_load((const unsigned char[8]){POISON_BYTE, POISON_BYTE, POISON_BYTE,
                                                             POISON_BYTE, POISON_BYTE, POISON_BYTE,
                                                             POISON_BYTE, POISON_BYTE},
                                   es);
  int64_t rows, cols, stride, i, wrong = 0, first = -1, first_want = 0, first_got = 0;
  char where[128] = "";
  amv_pool_output_shape(r->p, o, &rows, &cols, &stride);
  if (!m->cols) stride = 1;
  for (i = 0; i < r->elems[o]; i++) {
    const int64_t at = i - GUARD;
    const int inside = at >= 0 && at < rows * stride;
    const int64_t row = inside ? at / stride : (at < 0 ? -1 : rows), col = inside ? at % stride : -1;
    const int64_t got = amvs_load(r->h_out[o] + i * (int64_t)es, es);
    int64_t want = poison;
    if (inside && col < cols) {
      const int64_t k = row * cols + col;
      const int care = e->care ? e->care[k] : 1;
      if (care == 0) continue;
      if (care == 1) want = e->v[k];
    }
    if (got == want) continue;
    if (wrong++ == 0) {
      first = at;
      first_want = want;
      first_got = got;
      if (at < 0) snprintf(where, sizeof where, " (front guard)");
      else if (row >= rows) snprintf(where, sizeof where, " (back guard)");
      else if (m->cols)
        snprintf(where, sizeof where, " (row %lld col %lld%s)", (long long)row, (long long)col,
                 col >= cols ? ", the row-stride gap" : "");
    }
  }
  r->wrong = wrong;
  snprintf(r->where, sizeof r->where, "%s", where);
  if (wrong)
    preport(r, m->name, first, first_want, first_got,
            "product=%s index=%lld%s expected=%lld%s got=%lld (%lld wrong elements in this buffer)",
            m->name, (long long)first, where, (long long)first_want,
            first_want == poison ? " (untouched)" : "", (long long)first_got, (long long)wrong);
}

static void run_variant(prun *r, int with_error_word) {
  const amv_pool *p = r->p;
  attnmeta_pool op;
  attnmeta_status st;
  int32_t err = PRESET_BIT;
  int i;
  r->variant = with_error_word ? "error_word" : "no_error_word";
  for (i = 0; i < amv_pool_num_outputs(); i++) {
    if (!r->d_out[i]) continue;
    memset(r->h_out[i], POISON_BYTE, (size_t)r->elems[i] * amvs_pool_output(i)->size);
    if (pcopy(r, r->d_out[i], r->h_out[i], (size_t)r->elems[i] * amvs_pool_output(i)->size, 1))
      return;
  }
  if (pcopy(r, r->d_err, &err, 4, 1)) return;
  attnmeta_pool_init(&op);
  for (i = 0; i < amvs_pool.n; i++)
    if (amvs_pool_format_param(&amvs_pool.m[i]))
      amvs_set(&op, &amvs_pool.m[i], amvs_get(&p->op, &amvs_pool.m[i]));
  for (i = 0; i < amv_pool_num_inputs(); i++)
    *(const void **)amvs_slot(&op, amvs_pool_input(i)) = r->d_in[i];
  for (i = 0; i < amv_pool_num_outputs(); i++)
    *(void **)amvs_slot(&op, amvs_pool_output(i)) =
        r->d_out[i] ? r->d_out[i] + (size_t)GUARD * amvs_pool_output(i)->size : NULL;
  op.error_word = with_error_word ? r->d_err : NULL;
  st = attnmeta_build_pool_indices(r->opts->ctx, &op, NULL);
  r->out->launches++;
  if (st == ATTNMETA_ERR_NOT_SUPPORTED) {
    r->out->result = AMV_SKIP;
    snprintf(r->out->reason, sizeof r->out->reason, "%s", attnmeta_last_error(r->opts->ctx));
    r->stop = 1;
    return;
  }
  if (st != ATTNMETA_OK) {
    preport(r, "", -1, 0, 0, "attnmeta_build_pool_indices failed: %s (%s)",
            attnmeta_status_string(st), attnmeta_last_error(r->opts->ctx));
    return;
  }
  if (attnmeta_last_error(r->opts->ctx)[0])
    preport(r, "", -1, 0, 0, "attnmeta_last_error is \"%s\" after a success",
            attnmeta_last_error(r->opts->ctx));
  st = attnmeta_synchronize(r->opts->ctx, NULL);
  if (st != ATTNMETA_OK) {
    preport(r, "", -1, 0, 0, "attnmeta_synchronize failed: %s", attnmeta_last_error(r->opts->ctx));
    r->stop = 1;
    return;
  }
  for (i = 0; i < amv_pool_num_outputs(); i++) {
    if (!r->d_out[i]) continue;
    if (pcopy(r, r->h_out[i], r->d_out[i], (size_t)r->elems[i] * amvs_pool_output(i)->size, 0))
      return;
    compare_output(r, i);
  }
  if (with_error_word) {
    const int32_t want = PRESET_BIT | p->flags;
    int ok;
    if (pcopy(r, &err, r->d_err, 4, 0)) return;
    ok = p->flags_exact ? err == want
                        : (err & want) == want && (err & ~(PRESET_BIT | KNOWN_FLAGS)) == 0;
    if (!ok)
      preport(r, "error_word", 0, want, err, "product=error_word expected %s0x%x got=0x%x",
              p->flags_exact ? "" : "bits ", (unsigned)want, (unsigned)err);
  }
}

void amv_run_pool(const amv_runner *opts, const amv_vector *v, amv_outcome *out) {
  const amv_pool *p = v->pool;
  prun r;
  int i, c;
  memset(out, 0, sizeof *out);
  out->result = AMV_PASS;
  memset(&r, 0, sizeof r);
  r.opts = opts;
  r.v = v;
  r.p = p;
  r.out = out;
  r.config = "-";
  r.variant = "setup";
  for (i = 0; i < amv_pool_num_inputs() && !r.stop; i++)
    if ((p->inputs >> i) & 1u) upload(&r, i);
  for (i = 0; i < amv_pool_num_outputs() && !r.stop; i++) {
    int64_t rows, cols, stride;
    size_t bytes;
    if (!((p->outputs >> i) & 1u)) continue;
    amv_pool_output_shape(p, i, &rows, &cols, &stride);
    r.elems[i] = rows * (amvs_pool_output(i)->cols ? stride : 1) + 2 * GUARD;
    bytes = (size_t)r.elems[i] * amvs_pool_output(i)->size;
    r.d_out[i] = palloc(&r, bytes);
    r.h_out[i] = malloc(bytes);
    if (!r.h_out[i]) {
      preport(&r, "", -1, 0, 0, "out of host memory");
      r.stop = 1;
    }
  }
  if (!r.stop) r.d_err = palloc(&r, 4);
  for (c = 0; c < (opts->nconfigs ? opts->nconfigs : 1) && !r.stop; c++) {
    if (opts->nconfigs) {
      attnmeta_status st;
      if (opts->config_only >= 0 && c != opts->config_only) continue;
      r.config = opts->configs[c].name;
      st = attnmeta_set_launch_config(opts->ctx, &opts->configs[c].config);
      if (st != ATTNMETA_OK) {
        preport(&r, "", -1, 0, 0, "attnmeta_set_launch_config: %s", attnmeta_last_error(opts->ctx));
        continue;
      }
    } else {
      r.config = "current";
    }
    run_variant(&r, 1);
    if (!r.stop) run_variant(&r, 0);
  }
  if (opts->nconfigs) attnmeta_set_launch_config(opts->ctx, NULL);
  for (i = 0; i < AMV_POOL_MAX_INPUTS; i++)
    if (r.d_in[i]) attnmeta_device_free(opts->ctx, r.d_in[i]);
  for (i = 0; i < AMV_POOL_MAX_OUTPUTS; i++) {
    if (r.d_out[i]) attnmeta_device_free(opts->ctx, r.d_out[i]);
    free(r.h_out[i]);
  }
  if (r.d_err) attnmeta_device_free(opts->ctx, r.d_err);
  if (out->result != AMV_SKIP && out->failures > 0) out->result = AMV_FAIL;
}
