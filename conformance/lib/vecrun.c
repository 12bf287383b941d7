// SPDX-License-Identifier: Apache-2.0
/* Runs conformance vectors on a backend. See vecrun.h. */
#include "attnmeta/conformance/vecrun.h"
#include "vecrun_failure.h"
#include "am_schema.h"
#include "vecschema.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64             /* guard elements before and after every output */
#define POISON_BYTE 0x5A     /* 0x5A5A5A5A / 0x5A5A5A5A5A5A5A5A */
#define PRESET_BIT (1 << 30) /* an error-word bit no kernel sets: must survive */
#define ALL_FLAGS (0xFF | ATTNMETA_FLAG_SLOT_OUT_OF_RANGE) /* every flag a step may raise */

/* The arena's regions: the outputs, then the error word. */
#define NREG_MAX (AMV_MAX_OUTPUTS + 1)

/* {block, grid, stage, vector, lanes} */
static const amv_launch cpu_configs[] = {
    {"auto", {0, 0, -1, -1, 0}},
    {"block1_grid1", {1, 1, -1, -1, 0}},
    {"grid3", {0, 3, -1, -1, 0}},
    {"grid7_stage1", {0, 7, 1, -1, 0}},
    {"stage0_vector0", {0, 0, 0, 0, 0}},
    {"grid2_vector1", {1, 2, -1, 1, 0}},
    {"lanes2", {0, 0, -1, -1, 2}},
};

static const amv_launch gpu_configs[] = {
    {"auto", {0, 0, -1, -1, 0}},
    {"block1_grid1", {1, 1, -1, -1, 0}},
    {"block32_grid2_stage1", {32, 2, 1, -1, 0}},
    {"block64_grid5_stage0_vector0", {64, 5, 0, 0, 0}},
    {"block256_lanes1", {256, 0, -1, -1, 1}},
    {"block96_lanes7", {96, 0, -1, -1, 7}},
    {"block1024_grid1", {1024, 1, -1, -1, 0}},
    {"block128_stage1_vector1_lanes4", {128, 0, 1, 1, 4}},
    /* 16-byte rows asked for without staging: unaligned rows go through
     * the realigned-rows kernels, lean and indexer */
    {"block320_stage0_vector1", {320, 0, 0, 1, 0}},
};

int amv_launch_sweep(attnmeta_backend kind, const amv_launch **out) {
  if (kind == ATTNMETA_BACKEND_CPU) {
    *out = cpu_configs;
    return (int)(sizeof cpu_configs / sizeof cpu_configs[0]);
  }
  *out = gpu_configs;
  return (int)(sizeof gpu_configs / sizeof gpu_configs[0]);
}

typedef struct region {
  size_t es;  /* element size in bytes */
  int64_t n;  /* elements between the guards */
  size_t off; /* byte offset of element 0 in the arena */
} region;

typedef struct run {
  const amv_runner *opts;
  const amv_vector *v;
  const amv_rank *rk;
  const char *config, *variant;
  attnmeta_context *ctx;
  void *d_input[AMV_MAX_INPUTS];      /* each input, exactly sized (NULL: no elements) */
  void *d_input_base[AMV_MAX_INPUTS]; /* what was allocated (the input may start past it) */
  unsigned char *d_arena, *h_arena, *h_expect, *h_care;
  size_t arena_bytes;
  int nout, err;     /* the outputs' regions [0, nout), the error word's (nout) */
  region reg[NREG_MAX];
  amv_outcome *out;
  int stop; /* a device call failed or the backend does not support the vector */
} run;

/* ---------------------------------------------------------------- reporting */

static void report(run *ru, const char *product, int64_t index, int64_t expected, int64_t got,
                   int64_t wrong, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
static void report(run *ru, const char *product, int64_t index, int64_t expected, int64_t got,
                   int64_t wrong, const char *where, const char *fmt, ...) {
  amv_failure f = amv_failure_at(ru->v->name, ru->rk ? ru->rk->rank : 0, ru->config, ru->variant,
                                 product, index, expected, got, wrong);
  va_list ap;
  snprintf(f.where, sizeof f.where, "%s", where ? where : "");
  va_start(ap, fmt);
  amv_deliver_failure(ru->opts, ru->out, &f, fmt, ap);
  va_end(ap);
}

static void call_failed(run *ru, const char *call, attnmeta_status st) {
  report(ru, "", -1, 0, 0, 0, NULL, "%s failed: %s (%s)", call, attnmeta_status_string(st),
         attnmeta_last_error(ru->ctx));
  ru->stop = 1;
}

/* ------------------------------------------------------------------- arena */

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* A row output's width and stride (a table of the schema), 0 for the others. */
static int64_t row_width(const amv_vector *v, int o, int64_t *stride) {
  const amvs_member *m = amvs_step_output(o);
  int64_t rows, cols;
  amvs_extent(&amvs_step, &v->step, m, &rows, &cols, stride);
  if (m->cols) return cols;
  *stride = 0;
  return 0;
}

/* A row output's groups and group stride (1 and 0 unless grouped). */
static int64_t row_groups(const amv_vector *v, int o, int64_t *gstride) {
  int64_t groups;
  amvs_groups(&amvs_step, &v->step, amvs_step_output(o), &groups, gstride);
  return groups;
}

static void layout(run *ru) {
  const amv_vector *v = ru->v;
  const unsigned fam = amv_families(v->products);
  size_t off = 0;
  int i;
  ru->nout = amv_num_outputs();
  ru->err = ru->nout;
  for (i = 0; i <= ru->nout; i++) {
    region *g = &ru->reg[i];
    const amvs_member *m = i < ru->nout ? amvs_step_output(i) : NULL;
    const int f = m ? amvs_family(m) : -1;
    int64_t rows, cols, stride;
    g->es = m ? m->size : 4;
    if (!m) {
      g->n = 1;
    } else {
      int64_t groups, gstride;
      amvs_extent(&amvs_step, &v->step, m, &rows, &cols, &stride);
      groups = row_groups(v, i, &gstride);
      /* a table: two rows past T, which must stay untouched (after the
       * last group's; the gaps between groups too) */
      g->n = m->cols ? (groups - 1) * gstride + (v->step.num_tokens + 2) * stride : rows;
    }
    if (f >= 0 && !((fam >> f) & 1)) g->n = 0; /* not this vector's */
    off = align_up(off, 64);
    if (i == AMV_BLOCK_TABLE_OUT && (v->misalign & 2)) off += 4; /* off 16-byte alignment */
    g->off = off + (size_t)GUARD * g->es;
    off = g->off + (size_t)(g->n + GUARD) * g->es;
  }
  ru->arena_bytes = align_up(off, 64);
}

static void *reg_dev(const run *ru, int i) { return ru->d_arena + ru->reg[i].off; }

/* The expected arena after a run that builds `products`. */
static void expect_image(run *ru, unsigned products) {
  const amv_vector *v = ru->v;
  int o;
  memset(ru->h_expect, POISON_BYTE, ru->arena_bytes);
  memset(ru->h_care, 1, ru->arena_bytes);
  for (o = 0; o < ru->nout; o++) {
    const amv_values *e = &ru->rk->expect[o];
    const region *g = &ru->reg[o];
    int64_t i;
    if (!(products & (1u << o))) continue;
    int64_t stride, gstride;
    const int64_t width = row_width(v, o, &stride);
    const int64_t group_values = width * v->step.num_tokens; /* a group's dense values */
    const int64_t groups = row_groups(v, o, &gstride);
    for (i = 0; i < e->n; i++) {
      const int64_t g_at = groups > 1 && group_values ? i / group_values : 0;
      const int64_t j = i - g_at * group_values;
      const int64_t at = width ? g_at * gstride + (j / width) * stride + j % width : i;
      const size_t off = g->off + (size_t)at * g->es;
      if (e->care && !e->care[i])
        ru->h_care[off] = 0;
      else
        amvs_store(ru->h_expect + off, g->es, e->v[i]);
    }
  }
}

static void where(const run *ru, int g, int64_t e, char *buf, size_t size) {
  const region *r = &ru->reg[g];
  const amv_vector *v = ru->v;
  if (e < 0) {
    snprintf(buf, size, "index=%lld (front guard)", (long long)e);
  } else if (e >= r->n) {
    snprintf(buf, size, "index=%lld (back guard)", (long long)e);
  } else if (g < ru->nout && amvs_step_output(g)->cols) {
    int64_t stride, gstride;
    const int64_t width = row_width(v, g, &stride);
    const int64_t groups = row_groups(v, g, &gstride);
    const int64_t grp = groups > 1 && gstride > 0 ? (e / gstride < groups ? e / gstride
                                                                          : groups - 1) : 0;
    const int64_t row = (e - grp * gstride) / stride, col = (e - grp * gstride) % stride;
    char in_group[32] = "";
    if (groups > 1) snprintf(in_group, sizeof in_group, "group %lld ", (long long)grp);
    snprintf(buf, size, "index=%lld (%srow %lld col %lld%s)", (long long)e, in_group,
             (long long)row, (long long)col,
             row >= v->step.num_tokens ? ", a row at or past num_tokens"
             : col >= width            ? ", the row-stride gap"
                                       : "");
  } else if (g < ru->nout && amvs_step_output(g)->rows == AMVS_ROWS_C &&
             e >= v->step.num_tokens) {
    snprintf(buf, size, "index=%lld (tail [num_tokens, capacity))", (long long)e);
  } else {
    snprintf(buf, size, "index=%lld", (long long)e);
  }
}

static void compare(run *ru) {
  int g;
  for (g = 0; g <= ru->nout; g++) {
    const region *r = &ru->reg[g];
    int64_t e, first = 0, bad = 0;
    for (e = -GUARD; e < r->n + GUARD; e++) {
      const size_t off = (size_t)((int64_t)r->off + e * (int64_t)r->es); /* e < 0: the guard */
      if (!ru->h_care[off]) continue;
      if (amvs_load(ru->h_arena + off, r->es) != amvs_load(ru->h_expect + off, r->es)) {
        if (!bad++) first = e;
      }
    }
    if (bad) {
      const size_t off = (size_t)((int64_t)r->off + first * (int64_t)r->es);
      const int64_t want = amvs_load(ru->h_expect + off, r->es);
      const int64_t got = amvs_load(ru->h_arena + off, r->es);
      const char *name = g == ru->err ? "error_word" : amv_output_name(g);
      char at[192];
      where(ru, g, first, at, sizeof at);
      report(ru, name, first, want, got, bad, at,
             "product=%s %s expected=%lld got=%lld (%lld wrong elements in this buffer)", name, at,
             (long long)want, (long long)got, (long long)bad);
    }
  }
}

/* ------------------------------------------------------------------- runs */

static int upload(run *ru, void *dst, const void *src, size_t bytes) {
  const attnmeta_status st = attnmeta_copy_to_device(ru->ctx, dst, src, bytes);
  if (st != ATTNMETA_OK) call_failed(ru, "attnmeta_copy_to_device", st);
  return st != ATTNMETA_OK;
}

static int download(run *ru) {
  attnmeta_status st = attnmeta_synchronize(ru->ctx, NULL);
  if (st != ATTNMETA_OK) {
    call_failed(ru, "attnmeta_synchronize", st);
    return 1;
  }
  st = attnmeta_copy_to_host(ru->ctx, ru->h_arena, ru->d_arena, ru->arena_bytes);
  if (st != ATTNMETA_OK) call_failed(ru, "attnmeta_copy_to_host", st);
  return st != ATTNMETA_OK;
}

static int poison_and_upload(run *ru, int use_err, int32_t err_init) {
  memset(ru->h_arena, POISON_BYTE, ru->arena_bytes);
  if (use_err) amvs_store(ru->h_arena + ru->reg[ru->err].off, 4, err_init);
  return upload(ru, ru->d_arena, ru->h_arena, ru->arena_bytes);
}

/* Did the call work? NOT_SUPPORTED marks the vector skipped. */
static int launched(run *ru, const char *call, attnmeta_status st) {
  ru->out->launches++;
  if (st == ATTNMETA_ERR_NOT_SUPPORTED) {
    if (ru->out->result != AMV_SKIP)
      snprintf(ru->out->reason, sizeof ru->out->reason, "%s: %s (%s)", call,
               attnmeta_status_string(st), attnmeta_last_error(ru->ctx));
    ru->out->result = AMV_SKIP;
    ru->stop = 1;
    return 0;
  }
  if (st != ATTNMETA_OK) {
    report(ru, "", -1, 0, 0, 0, NULL, "%s returned %s: %s", call, attnmeta_status_string(st),
           attnmeta_last_error(ru->ctx));
    return 0;
  }
  if (attnmeta_last_error(ru->ctx)[0])
    report(ru, "", -1, 0, 0, 0, NULL, "attnmeta_last_error not empty after success: \"%s\"",
           attnmeta_last_error(ru->ctx));
  return 1;
}

/* The step of a run: the vector's params, for the version-2 families in
 * `fam` only, and its inputs where in use (a family's with its params, the
 * others when the schema says a wanted product reads them, every one
 * unless minimal). */
static void step_of(const run *ru, unsigned wanted, unsigned fam, int minimal, attnmeta_step *s) {
  const amv_vector *v = ru->v;
  int k;
  attnmeta_step_init(s);
  amvs_copy_params(&amvs_step, s, &v->step, fam);
  s->dcp_rank = ru->rk->rank;
  for (k = 0; k < amv_num_inputs(); k++) {
    const amvs_member *m = amvs_step_input(k);
    const int f = amvs_family(m);
    const int in_use = f >= 0 ? (int)((fam >> f) & 1)
                              : !minimal || (m->products & (wanted | AM_P_ALWAYS)) != 0;
    if (in_use) *(const void **)amvs_slot(s, m) = ru->d_input[k];
  }
}

/* One attnmeta_build_step building `products`; `minimal`: pass only the
 * inputs those products need. */
static void run_step(run *ru, const char *variant, unsigned products, int use_err,
                     int32_t err_init, int minimal) {
  const amv_vector *v = ru->v;
  const amv_rank *rk = ru->rk;
  const unsigned wanted = amvs_step_products(products);
  const unsigned fam = amv_families(products);
  /* the schema's products that read seq_lens: its flags count only for them */
  const unsigned reads_seq = amvs_find(&amvs_step, "seq_lens")->products;
  attnmeta_step s;
  int g, o;

  if (ru->stop) return;
  ru->variant = variant;
  if (poison_and_upload(ru, use_err, err_init)) return;
  /* version 2: the families of the products (all of the vector's, unless minimal) */
  step_of(ru, wanted, minimal ? fam : amv_families(v->products), minimal, &s);
  for (o = 0; o < ru->nout; o++)
    if (products & (1u << o)) *(void **)amvs_slot(&s, amvs_step_output(o)) = reg_dev(ru, o);
  if (use_err) s.error_word = reg_dev(ru, ru->err);

  if (!launched(ru, "attnmeta_build_step", attnmeta_build_step(ru->ctx, &s, NULL))) return;
  if (download(ru)) return;

  expect_image(ru, products);
  if (use_err) { /* the error word is checked here, not as an image */
    const size_t off = ru->reg[ru->err].off;
    const int32_t got = (int32_t)amvs_load(ru->h_arena + off, 4);
    /* the lengths' flags only when a wanted product reads seq_lens */
    int32_t flags = rk->flags_requests | (wanted & reads_seq ? rk->flags_seq_lens : 0);
    ru->h_care[off] = 0;
    if (products & (1u << AMV_SLOT_MAPPING)) flags |= rk->flags_slots;
    for (g = 0; g < AMV_GROUPS; g++)
      if (products & (1u << (AMV_GROUP_SLOT_MAPPING + g))) flags |= rk->flags_dsv4[g];
    if (products & ((1u << AMV_SWA_INDICES) | (1u << AMV_SWA_LENS)))
      flags |= rk->flags_dsv4[AMV_FAMILY_SWA];
    if (products & (1u << AMV_SWA_INDICES)) flags |= rk->flags_dsv4[AMV_FAMILY_SWA + 1];
    if (products & (1u << AMV_C128A_ROWS)) flags |= rk->flags_dsv4[AMV_FAMILY_SWA + 2];
    if (rk->flags_exact) {
      if (got != (err_init | flags))
        report(ru, "error_word", 0, err_init | flags, got, 1, "index=0",
               "product=error_word index=0 expected=0x%x got=0x%x", (unsigned)(err_init | flags),
               (unsigned)got);
    } else if ((got & (err_init | flags)) != (err_init | flags) ||
               (got & ~(err_init | ALL_FLAGS)) != 0) {
      report(ru, "error_word", 0, err_init | flags, got, 1, "index=0",
             "product=error_word index=0 expected bits 0x%x set (and none outside 0x%x) got=0x%x",
             (unsigned)(err_init | flags), (unsigned)(err_init | ALL_FLAGS), (unsigned)got);
    }
  }
  compare(ru);
}

/* attnmeta_token_to_req, contract section 1. */
static void run_token_map(run *ru) {
  const amv_vector *v = ru->v;
  if (ru->stop) return;
  ru->variant = "token_to_req_api";
  if (poison_and_upload(ru, 0, 0)) return;
  if (!launched(ru, "attnmeta_token_to_req",
                attnmeta_token_to_req(ru->ctx, ru->d_input[AMV_QUERY_START_LOC],
                                      v->step.num_reqs, v->step.num_mapped, v->step.num_tokens,
                                      reg_dev(ru, AMV_TOKEN_TO_REQ), NULL)))
    return;
  if (download(ru)) return;
  expect_image(ru, 1u << AMV_TOKEN_TO_REQ);
  compare(ru);
}

/* Every variant of one (launch config, rank). */
static void run_variants(run *ru, int first_rank) {
  const unsigned products = ru->v->products;
  const unsigned indexer_set = (1u << AMV_TOKEN_TO_REQ) | (1u << AMV_SEQ_LENS_OUT) |
                               (1u << AMV_BLOCK_TABLE_OUT) | (1u << AMV_DECODE_LENS_OUT) |
                               (1u << AMV_REQ_INDICES_OUT) | (1u << AMV_PER_REQ_LENS_OUT);
  char alone[AMV_NAME_MAX + 8];
  int p;
  run_step(ru, "all", products, 1, 0, 0);
  run_step(ru, "all_no_error_word", products, 0, 0, 0);
  /* exactly the indexer's product set, no error word: the kernels
   * compiled for it (AM_VARIANT_INDEXER) */
  if ((products & indexer_set) == indexer_set && products != indexer_set)
    run_step(ru, "indexer_set", indexer_set, 0, 0, 0);
  for (p = 0; p < ru->nout; p++) {
    const unsigned one = 1u << p;
    snprintf(alone, sizeof alone, "alone_%s", amv_output_name(p));
    if (products & one) run_step(ru, alone, one, 1, PRESET_BIT, 1);
  }
  if ((products & (1u << AMV_TOKEN_TO_REQ)) && first_rank) run_token_map(ru);
}

static void *dev_alloc(run *ru, size_t bytes) {
  void *p = NULL;
  const attnmeta_status st = attnmeta_device_alloc(ru->ctx, bytes, &p);
  if (st != ATTNMETA_OK || !p) {
    report(ru, "", -1, 0, 0, 0, NULL, "attnmeta_device_alloc(%zu) failed: %s (%s)", bytes,
           attnmeta_status_string(st), attnmeta_last_error(ru->ctx));
    ru->stop = 1;
    return NULL;
  }
  return p;
}

static void dev_free(run *ru, void *p) {
  attnmeta_status st;
  if (!p) return;
  st = attnmeta_device_free(ru->ctx, p);
  if (st != ATTNMETA_OK) call_failed(ru, "attnmeta_device_free", st);
}

/* Copies an input's values (of its type's range, by the parser's checks) to the device. */
static int upload_input(run *ru, void *dst, const amv_values *in, size_t es) {
  unsigned char *host;
  int64_t i;
  int rc;
  if (in->n == 0) return 0;
  host = malloc((size_t)in->n * es);
  if (!host) {
    report(ru, "", -1, 0, 0, 0, NULL, "out of host memory");
    ru->stop = 1;
    return 1;
  }
  for (i = 0; i < in->n; i++) amvs_store(host + (size_t)i * es, es, in->v[i]);
  rc = upload(ru, dst, host, (size_t)in->n * es);
  free(host);
  return rc;
}

/* Each input on the device, exactly sized (so a sanitizer sees any read past
 * it): an array of at least one element, a table only when it has elements;
 * the block table 4 bytes past its allocation with misalign bit 0. */
static void upload_inputs(run *ru) {
  const amv_vector *v = ru->v;
  int i;
  for (i = 0; i < amv_num_inputs() && !ru->stop; i++) {
    const amvs_member *m = amvs_step_input(i);
    const amv_values *in = &v->input[i];
    const size_t es = m->size, lead = i == AMV_BLOCK_TABLE && (v->misalign & 1) ? es : 0;
    if (m->cols && in->n == 0) continue;
    if (amvs_optional(m) && !in->v) continue; /* left out: the step passes NULL */
    ru->d_input_base[i] = dev_alloc(ru, (size_t)(in->n > 0 ? in->n : 1) * es + lead);
    if (!ru->d_input_base[i]) return;
    ru->d_input[i] = (unsigned char *)ru->d_input_base[i] + lead;
    if (upload_input(ru, ru->d_input[i], in, es)) ru->stop = 1;
  }
}

void amv_run_vector(const amv_runner *opts, const amv_vector *v, amv_outcome *out) {
  run ru;
  int k, c;
  if (v->op == AMV_OP_TOPK) { /* vecrun_topk.c */
    amv_run_topk(opts, v, out);
    return;
  }
  if (v->op == AMV_OP_POOL) { /* vecrun_pool.c */
    amv_run_pool(opts, v, out);
    return;
  }

  memset(out, 0, sizeof *out);
  out->result = AMV_PASS;
  memset(&ru, 0, sizeof ru);
  ru.opts = opts;
  ru.v = v;
  ru.ctx = opts->ctx;
  ru.out = out;
  ru.config = "-";
  ru.variant = "setup";
  upload_inputs(&ru);

  layout(&ru);
  if (!ru.stop) ru.d_arena = dev_alloc(&ru, ru.arena_bytes);
  ru.h_arena = malloc(ru.arena_bytes);
  ru.h_expect = malloc(ru.arena_bytes);
  ru.h_care = malloc(ru.arena_bytes);
  if (!ru.h_arena || !ru.h_expect || !ru.h_care) {
    report(&ru, "", -1, 0, 0, 0, NULL, "out of host memory (%zu bytes)", ru.arena_bytes);
    ru.stop = 1;
  }

  for (k = 0; k < v->nranks && !ru.stop; k++) {
    ru.rk = &v->ranks[k];
    if (opts->nconfigs == 0) {
      ru.config = "current";
      run_variants(&ru, k == 0);
      continue;
    }
    for (c = 0; c < opts->nconfigs && !ru.stop; c++) {
      attnmeta_status st;
      if (opts->config_only >= 0 && c != opts->config_only) continue;
      ru.config = opts->configs[c].name;
      st = attnmeta_set_launch_config(ru.ctx, &opts->configs[c].config);
      if (st != ATTNMETA_OK) {
        report(&ru, "", -1, 0, 0, 0, NULL, "attnmeta_set_launch_config returned %s: %s",
               attnmeta_status_string(st), attnmeta_last_error(ru.ctx));
        continue;
      }
      run_variants(&ru, k == 0);
    }
  }

  ru.rk = NULL;
  ru.config = "-";
  ru.variant = "teardown";
  free(ru.h_arena);
  free(ru.h_expect);
  free(ru.h_care);
  dev_free(&ru, ru.d_arena);
  for (k = 0; k < AMV_MAX_INPUTS; k++) dev_free(&ru, ru.d_input_base[k]);
  if (out->failures > 0) out->result = AMV_FAIL;
}
