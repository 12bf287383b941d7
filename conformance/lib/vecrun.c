// SPDX-License-Identifier: Apache-2.0
/* Runs conformance vectors on a backend. See vecrun.h. */
#include "attnmeta/conformance/vecrun.h"
#include "vecrun_failure.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64             /* guard elements before and after every output */
#define POISON_BYTE 0x5A     /* 0x5A5A5A5A / 0x5A5A5A5A5A5A5A5A */
#define PRESET_BIT (1 << 30) /* an error-word bit no kernel sets: must survive */
#define ALL_FLAGS (0xFF | ATTNMETA_FLAG_SLOT_OUT_OF_RANGE) /* every flag a step may raise */

enum { REG_ERR = AMV_NUM_OUTPUTS, NREG };

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
  int es;     /* element size in bytes */
  int64_t n;  /* elements between the guards */
  size_t off; /* byte offset of element 0 in the arena */
} region;

typedef struct run {
  const amv_runner *opts;
  const amv_vector *v;
  const amv_rank *rk;
  const char *config, *variant;
  attnmeta_context *ctx;
  int32_t *d_qsl, *d_seq, *d_table;
  void *d_table_base;
  int32_t *d_dsv4_table[AMV_NUM_FAMILIES]; /* version 2: each family's block table */
  unsigned char *d_arena, *h_arena, *h_expect, *h_care;
  size_t arena_bytes;
  region reg[NREG];
  amv_outcome *out;
  int stop; /* a device call failed or the backend does not support the vector */
} run;

/* ---------------------------------------------------------------- reporting */

static void report(run *ru, const char *product, int64_t index, int64_t expected, int64_t got,
                   int64_t wrong, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
static void report(run *ru, const char *product, int64_t index, int64_t expected, int64_t got,
                   int64_t wrong, const char *where, const char *fmt, ...) {
  amv_failure f;
  va_list ap;
  memset(&f, 0, sizeof f);
  f.vector = ru->v->name;
  f.rank = ru->rk ? ru->rk->rank : 0;
  f.config = ru->config;
  f.variant = ru->variant;
  f.product = product;
  f.index = index;
  f.expected = expected;
  f.got = got;
  f.wrong = wrong;
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

/* A row output's width and stride (block_table_out, SWA and C128A rows), 0 for others. */
static int64_t row_width(const amv_vector *v, int o, int64_t *stride) {
  *stride = 0;
  if (o == AMV_BLOCK_TABLE_OUT) return *stride = v->out_stride, v->cols;
  if (o == AMV_SWA_INDICES) return *stride = v->dsv4.swa_out_stride, v->dsv4.swa_width;
  if (o == AMV_C128A_ROWS) return *stride = v->dsv4.c128a_out_stride, v->dsv4.c128a_width;
  return 0;
}

static void layout(run *ru) {
  const amv_vector *v = ru->v;
  const int64_t T = v->num_tokens;
  size_t off = 0;
  int i;
  for (i = 0; i < NREG; i++) {
    region *g = &ru->reg[i];
    const int f = i < AMV_NUM_OUTPUTS ? amv_output_family(i) : -1;
    int64_t stride;
    g->es = i < AMV_NUM_OUTPUTS && amv_output_is64(i) ? 8 : 4;
    if (i == REG_ERR) {
      g->n = 1;
    } else if (row_width(v, i, &stride) || stride) {
      g->n = (T + 2) * stride; /* two rows past T: must stay untouched */
    } else if (f >= 0 && f < AMV_GROUPS) {
      g->n = i == AMV_GROUP_SLOT_MAPPING + f ? v->capacity : v->num_reqs;
    } else {
      switch (i) {
        case AMV_SEQ_LENS_OUT: case AMV_SLOT_MAPPING: case AMV_SWA_LENS: case AMV_C128A_LENS:
          g->n = v->capacity;
          break;
        case AMV_PER_REQ_LENS_OUT: g->n = v->num_reqs; break;
        default: g->n = T;
      }
    }
    if (f >= 0 && !((amv_families(v->products) >> f) & 1)) g->n = 0; /* not this vector's */
    off = align_up(off, 64);
    if (i == AMV_BLOCK_TABLE_OUT && (v->misalign & 2)) off += 4; /* off 16-byte alignment */
    g->off = off + (size_t)GUARD * (size_t)g->es;
    off = g->off + (size_t)(g->n + GUARD) * (size_t)g->es;
  }
  ru->arena_bytes = align_up(off, 64);
}

static void *reg_dev(const run *ru, int i) { return ru->d_arena + ru->reg[i].off; }

static int64_t load(const unsigned char *p, int es) {
  if (es == 4) {
    int32_t w;
    memcpy(&w, p, 4);
    return w;
  } else {
    int64_t w;
    memcpy(&w, p, 8);
    return w;
  }
}

static void store(unsigned char *p, int es, int64_t value) {
  if (es == 4) {
    const int32_t w = (int32_t)value;
    memcpy(p, &w, 4);
  } else {
    memcpy(p, &value, 8);
  }
}

/* The expected arena after a run that builds `products`. */
static void expect_image(run *ru, unsigned products) {
  const amv_vector *v = ru->v;
  int o;
  memset(ru->h_expect, POISON_BYTE, ru->arena_bytes);
  memset(ru->h_care, 1, ru->arena_bytes);
  for (o = 0; o < AMV_NUM_OUTPUTS; o++) {
    const amv_values *e = &ru->rk->expect[o];
    const region *g = &ru->reg[o];
    int64_t i;
    if (!(products & (1u << o))) continue;
    int64_t stride;
    const int64_t width = row_width(v, o, &stride);
    for (i = 0; i < e->n; i++) {
      const int64_t at = width ? (i / width) * stride + i % width : i;
      const size_t off = g->off + (size_t)at * (size_t)g->es;
      if (e->care && !e->care[i])
        ru->h_care[off] = 0;
      else
        store(ru->h_expect + off, g->es, e->v[i]);
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
  } else if (g == AMV_BLOCK_TABLE_OUT || g == AMV_SWA_INDICES || g == AMV_C128A_ROWS) {
    int64_t stride;
    const int64_t width = row_width(v, g, &stride);
    const int64_t row = e / stride, col = e % stride;
    snprintf(buf, size, "index=%lld (row %lld col %lld%s)", (long long)e, (long long)row,
             (long long)col,
             row >= v->num_tokens ? ", a row at or past num_tokens"
             : col >= width       ? ", the row-stride gap"
                                  : "");
  } else if ((g == AMV_SEQ_LENS_OUT || g == AMV_SLOT_MAPPING || g == AMV_SWA_LENS ||
              g == AMV_C128A_LENS ||
              (g >= AMV_GROUP_SLOT_MAPPING && g < AMV_GROUP_SLOT_MAPPING + AMV_GROUPS)) &&
             e >= v->num_tokens) {
    snprintf(buf, size, "index=%lld (tail [num_tokens, capacity))", (long long)e);
  } else {
    snprintf(buf, size, "index=%lld", (long long)e);
  }
}

static void compare(run *ru) {
  int g;
  for (g = 0; g < NREG; g++) {
    const region *r = &ru->reg[g];
    int64_t e, first = 0, bad = 0;
    for (e = -GUARD; e < r->n + GUARD; e++) {
      const size_t off = (size_t)((int64_t)r->off + e * (int64_t)r->es); /* e < 0: the guard */
      if (!ru->h_care[off]) continue;
      if (load(ru->h_arena + off, r->es) != load(ru->h_expect + off, r->es)) {
        if (!bad++) first = e;
      }
    }
    if (bad) {
      const size_t off = (size_t)((int64_t)r->off + first * (int64_t)r->es);
      const int64_t want = load(ru->h_expect + off, r->es), got = load(ru->h_arena + off, r->es);
      const char *name = g == REG_ERR ? "error_word" : amv_output_name(g);
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
  if (use_err) store(ru->h_arena + ru->reg[REG_ERR].off, 4, err_init);
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

/* One attnmeta_build_step building `products`; `minimal`: pass only the
 * inputs those products need. */
static void run_step(run *ru, const char *variant, unsigned products, int use_err,
                     int32_t err_init, int minimal) {
  const amv_vector *v = ru->v;
  const amv_rank *rk = ru->rk;
  const unsigned need_seq = (1u << AMV_SEQ_LENS_OUT) | (1u << AMV_GLOBAL_SEQ_LENS_OUT) |
                            (1u << AMV_POSITIONS) | (1u << AMV_SLOT_MAPPING);
  const unsigned need_table = (1u << AMV_BLOCK_TABLE_OUT) | (1u << AMV_SLOT_MAPPING);
  const unsigned fam = amv_families(products);
  const int give_seq = !minimal || (products & need_seq) || fam;
  const amv_dsv4 *d = &v->dsv4;
  attnmeta_step s;
  int g;

  if (ru->stop) return;
  ru->variant = variant;
  if (poison_and_upload(ru, use_err, err_init)) return;
  attnmeta_step_init(&s);
  s.query_start_loc = ru->d_qsl;
  s.num_reqs = v->num_reqs;
  s.num_tokens = v->num_tokens;
  s.capacity = v->capacity;
  s.seq_lens = give_seq ? ru->d_seq : NULL;
  s.block_table = (!minimal || (products & need_table)) ? ru->d_table : NULL;
  s.block_table_cols = v->cols;
  s.block_table_stride = v->in_stride;
  s.num_mapped = v->num_mapped;
  s.block_size = v->block_size;
  s.dcp_world_size = v->world;
  s.dcp_rank = rk->rank;
  s.dcp_interleave = v->interleave;
  if (products & (1u << AMV_TOKEN_TO_REQ)) s.token_to_req = reg_dev(ru, AMV_TOKEN_TO_REQ);
  if (products & (1u << AMV_SEQ_LENS_OUT)) s.seq_lens_out = reg_dev(ru, AMV_SEQ_LENS_OUT);
  if (products & (1u << AMV_GLOBAL_SEQ_LENS_OUT))
    s.global_seq_lens_out = reg_dev(ru, AMV_GLOBAL_SEQ_LENS_OUT);
  if (products & (1u << AMV_BLOCK_TABLE_OUT)) s.block_table_out = reg_dev(ru, AMV_BLOCK_TABLE_OUT);
  s.block_table_out_stride = v->out_stride;
  if (products & (1u << AMV_DECODE_LENS_OUT)) s.decode_lens_out = reg_dev(ru, AMV_DECODE_LENS_OUT);
  if (products & (1u << AMV_REQ_INDICES_OUT)) s.req_indices_out = reg_dev(ru, AMV_REQ_INDICES_OUT);
  if (products & (1u << AMV_PER_REQ_LENS_OUT))
    s.per_req_lens_out = reg_dev(ru, AMV_PER_REQ_LENS_OUT);
  if (products & (1u << AMV_POSITIONS)) s.positions = reg_dev(ru, AMV_POSITIONS);
  if (products & (1u << AMV_SLOT_MAPPING)) s.slot_mapping = reg_dev(ru, AMV_SLOT_MAPPING);
  if (use_err) s.error_word = reg_dev(ru, REG_ERR);
  /* version 2: the families of the products (all of the vector's, unless minimal) */
  for (g = 0; g < AMV_GROUPS; g++) {
    attnmeta_compressed_group *cg = &s.compressed_groups[g];
    if (!(((minimal ? fam : amv_families(v->products)) >> g) & 1)) continue;
    cg->block_table = ru->d_dsv4_table[g];
    cg->block_table_cols = d->group[g].cols;
    cg->block_table_stride = d->group[g].stride;
    cg->ratio = d->group[g].ratio;
    cg->block_size = d->group[g].block_size;
    if (products & (1u << (AMV_GROUP_SLOT_MAPPING + g)))
      cg->slot_mapping = reg_dev(ru, AMV_GROUP_SLOT_MAPPING + g);
    if (products & (1u << (AMV_GROUP_SEQ_LENS_OUT + g)))
      cg->seq_lens_out = reg_dev(ru, AMV_GROUP_SEQ_LENS_OUT + g);
  }
  if ((fam >> AMV_FAMILY_SWA) & 1) {
    s.swa_block_table = ru->d_dsv4_table[AMV_FAMILY_SWA];
    s.swa_block_table_cols = d->swa_cols;
    s.swa_block_table_stride = d->swa_stride;
    s.swa_block_size = d->swa_block_size;
    s.swa_window = d->swa_window;
    s.swa_width = d->swa_width;
    s.swa_mode = d->swa_mode;
    s.swa_indices_stride = d->swa_out_stride;
    if (products & (1u << AMV_SWA_INDICES)) s.swa_indices = reg_dev(ru, AMV_SWA_INDICES);
    if (products & (1u << AMV_SWA_LENS)) s.swa_lens = reg_dev(ru, AMV_SWA_LENS);
  }
  if ((fam >> AMV_FAMILY_C128A) & 1) {
    s.c128a_block_table = ru->d_dsv4_table[AMV_FAMILY_C128A];
    s.c128a_block_table_cols = d->c128a_cols;
    s.c128a_block_table_stride = d->c128a_stride;
    s.c128a_ratio = d->c128a_ratio;
    s.c128a_block_size = d->c128a_block_size;
    s.c128a_width = d->c128a_width;
    s.c128a_mode = d->c128a_mode;
    s.c128a_rows_stride = d->c128a_out_stride;
    if (products & (1u << AMV_C128A_ROWS)) s.c128a_rows = reg_dev(ru, AMV_C128A_ROWS);
    if (products & (1u << AMV_C128A_LENS)) s.c128a_lens = reg_dev(ru, AMV_C128A_LENS);
  }

  if (!launched(ru, "attnmeta_build_step", attnmeta_build_step(ru->ctx, &s, NULL))) return;
  if (download(ru)) return;

  expect_image(ru, products);
  if (use_err) { /* the error word is checked here, not as an image */
    const size_t off = ru->reg[REG_ERR].off;
    const int32_t got = (int32_t)load(ru->h_arena + off, 4);
    /* the lengths' flags only when a wanted product reads seq_lens */
    int32_t flags =
        rk->flags_requests | ((products & need_seq) || fam ? rk->flags_seq_lens : 0);
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
                attnmeta_token_to_req(ru->ctx, ru->d_qsl, v->num_reqs, v->num_mapped,
                                      v->num_tokens, reg_dev(ru, AMV_TOKEN_TO_REQ), NULL)))
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
  for (p = 0; p < AMV_NUM_OUTPUTS; p++) {
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

/* Copies an input's values (int32 by the parser's checks) to the device. */
static int upload_input(run *ru, int32_t *dst, const amv_values *in) {
  int32_t *host;
  int64_t i;
  int rc;
  if (in->n == 0) return 0;
  host = malloc((size_t)in->n * 4);
  if (!host) {
    report(ru, "", -1, 0, 0, 0, NULL, "out of host memory");
    ru->stop = 1;
    return 1;
  }
  for (i = 0; i < in->n; i++) host[i] = (int32_t)in->v[i];
  rc = upload(ru, dst, host, (size_t)in->n * 4);
  free(host);
  return rc;
}

void amv_run_vector(const amv_runner *opts, const amv_vector *v, amv_outcome *out) {
  const amv_values *table = &v->input[AMV_BLOCK_TABLE];
  run ru;
  int k, c;
  if (v->op == AMV_OP_TOPK) { /* vecrun_topk.c */
    amv_run_topk(opts, v, out);
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

  /* inputs, exactly sized (so a sanitizer sees any read past them) */
  ru.d_qsl = dev_alloc(&ru, ((size_t)v->num_reqs + 1) * 4);
  if (ru.d_qsl) ru.d_seq = dev_alloc(&ru, (size_t)(v->num_reqs > 0 ? v->num_reqs : 1) * 4);
  if (ru.d_seq && table->n > 0) {
    ru.d_table_base = dev_alloc(&ru, (size_t)table->n * 4 + ((v->misalign & 1) ? 4 : 0));
    ru.d_table = ru.d_table_base ? (int32_t *)ru.d_table_base + ((v->misalign & 1) ? 1 : 0) : NULL;
  }
  if (!ru.stop && (upload_input(&ru, ru.d_qsl, &v->input[AMV_QUERY_START_LOC]) ||
                   upload_input(&ru, ru.d_seq, &v->input[AMV_SEQ_LENS]) ||
                   upload_input(&ru, ru.d_table, table)))
    ru.stop = 1;
  /* version 2: each family's table, exactly sized (NULL when it has no elements) */
  for (k = 0; k < AMV_NUM_FAMILIES && !ru.stop; k++) {
    const amv_values *in = &v->input[k < AMV_GROUPS ? AMV_GROUP_BLOCK_TABLE + k
                                     : k == AMV_FAMILY_SWA ? AMV_SWA_BLOCK_TABLE
                                                           : AMV_C128A_BLOCK_TABLE];
    if (in->n == 0) continue;
    ru.d_dsv4_table[k] = dev_alloc(&ru, (size_t)in->n * 4);
    if (ru.d_dsv4_table[k] && upload_input(&ru, ru.d_dsv4_table[k], in)) ru.stop = 1;
  }

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
  dev_free(&ru, ru.d_qsl);
  dev_free(&ru, ru.d_seq);
  dev_free(&ru, ru.d_table_base);
  for (k = 0; k < AMV_NUM_FAMILIES; k++) dev_free(&ru, ru.d_dsv4_table[k]);
  if (out->failures > 0) out->result = AMV_FAIL;
}
