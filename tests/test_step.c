/*
 * attnmeta_build_step and attnmeta_token_to_req against the naive reference,
 * for every (backend x case), under every launch configuration of the
 * backend (or one Criterion test per configuration with env
 * ATTNMETA_TEST_PER_CONFIG=1). Env ATTNMETA_TEST_CASES=name,name runs only
 * those cases; ATTNMETA_TEST_BACKENDS=cpu,cuda only those backends.
 *
 * Every output lives in one device "arena" between guard zones, the whole
 * arena poisoned before each run; after the run every element is compared
 * with an expected image: reference values where the contract defines them,
 * poison where nothing may be written (guards, stride gaps, rows >= T,
 * outputs not asked for), "don't care" only where values are unspecified
 * (hostile boundaries).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "cases.h"
#include "harness.h"
#include "reference.h"

#define GUARD 64          /* guard elements before and after every output */
#define POISON_BYTE 0x5A  /* 0x5A5A5A5A / 0x5A5A5A5A5A5A5A5A */
#define PRESET_BIT (1 << 30) /* an error-word bit no kernel sets: must survive */
#define MAX_MESSAGES 24
#define SEQ_FLAGS (ATTNMETA_FLAG_SEQ_LEN_NEGATIVE | ATTNMETA_FLAG_SEQ_LEN_LT_QLEN)
#define ALL_FLAGS 0xFF

enum { REG_T2R, REG_SEQ, REG_GLOBAL, REG_BT, REG_DECODE, REG_REQIDX, REG_PERREQ, REG_POS,
       REG_SLOTS, REG_ERR, NREG };

typedef struct region {
  const char *name;
  int es;      /* element size in bytes */
  int64_t n;   /* elements between the guards */
  size_t off;  /* byte offset of element 0 in the arena */
} region;

typedef struct runner {
  attnmeta_context *ctx;
  const char *backend, *config, *case_name, *variant;
  const amt_batch *b;
  int32_t rank;
  const amr_output *ref;
  int32_t *d_qsl, *d_seq, *d_table;
  void *d_table_base;
  unsigned char *d_arena, *h_arena, *h_expect, *h_care;
  size_t arena_bytes;
  region reg[NREG];
  int messages;
} runner;

/* ---------------------------------------------------------------- reporting */

static void report(runner *ru, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(runner *ru, const char *fmt, ...) {
  char line[768], what[512];
  va_list ap;
  if (ru->messages++ >= MAX_MESSAGES) {
    if (ru->messages == MAX_MESSAGES + 1)
      cr_expect_fail("backend=%s case=%s: further failures suppressed", ru->backend,
                     ru->case_name);
    return;
  }
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(line, sizeof line, "backend=%s config=%s case=%s rank=%d variant=%s %s", ru->backend,
           ru->config, ru->case_name, (int)ru->rank, ru->variant, what);
  cr_expect_fail("%s", line);
}

/* ------------------------------------------------------------------- arena */

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static void layout(runner *ru) {
  const amt_batch *b = ru->b;
  static const char *names[NREG] = {"token_to_req", "seq_lens_out", "global_seq_lens_out",
                                    "block_table_out", "decode_lens_out", "req_indices_out",
                                    "per_req_lens_out", "positions", "slot_mapping",
                                    "error_word"};
  const int64_t n[NREG] = {b->T, b->C, b->T, ((int64_t)b->T + 2) * b->out_stride, b->T, b->T,
                           b->R, b->T, b->C, 1};
  size_t off = 0;
  int i;
  for (i = 0; i < NREG; i++) {
    region *g = &ru->reg[i];
    g->name = names[i];
    g->es = (i == REG_POS || i == REG_SLOTS) ? 8 : 4;
    g->n = n[i];
    off = align_up(off, 64);
    if (i == REG_BT && (b->misalign & 2)) off += 4; /* block_table_out off 16-byte alignment */
    g->off = off + (size_t)GUARD * (size_t)g->es;
    off = g->off + (size_t)(g->n + GUARD) * (size_t)g->es;
  }
  ru->arena_bytes = align_up(off, 64);
}

static void *reg_dev(const runner *ru, int i) { return ru->d_arena + ru->reg[i].off; }

static int64_t load(const unsigned char *p, int es) {
  if (es == 4) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
  } else {
    int64_t v;
    memcpy(&v, p, 8);
    return v;
  }
}

static void store(unsigned char *p, int es, int64_t v) {
  if (es == 4) {
    const int32_t w = (int32_t)v;
    memcpy(p, &w, 4);
  } else {
    memcpy(p, &v, 8);
  }
}

/* Expected element i of region g: a value, or "unspecified" when !known. */
static void put(runner *ru, int g, int64_t i, int64_t value, int known) {
  const size_t off = ru->reg[g].off + (size_t)i * (size_t)ru->reg[g].es;
  if (known)
    store(ru->h_expect + off, ru->reg[g].es, value);
  else
    ru->h_care[off] = 0;
}

/* The expected arena after a run that builds `products`. */
static void expect_image(runner *ru, unsigned products) {
  const amt_batch *b = ru->b;
  const amr_output *o = ru->ref;
  const int wf = o->well_formed;
  int64_t t, c;
  memset(ru->h_expect, POISON_BYTE, ru->arena_bytes);
  memset(ru->h_care, 1, ru->arena_bytes);
  for (t = 0; t < b->T; t++) {
    if (products & AMT_P_TOKEN_TO_REQ) put(ru, REG_T2R, t, o->token_to_req[t], wf);
    if (products & AMT_P_SEQ_LENS) put(ru, REG_SEQ, t, o->seq_lens_out[t], wf);
    if (products & AMT_P_GLOBAL_SEQ_LENS) put(ru, REG_GLOBAL, t, o->global_seq_lens[t], wf);
    if (products & AMT_P_BLOCK_TABLE)
      for (c = 0; c < b->cols; c++)
        put(ru, REG_BT, t * b->out_stride + c, o->block_table_out[t * b->cols + c], wf);
    if (products & AMT_P_DECODE_LENS) put(ru, REG_DECODE, t, 1, 1);
    if (products & AMT_P_REQ_INDICES) put(ru, REG_REQIDX, t, o->req_indices[t], wf);
    if (products & AMT_P_POSITIONS) put(ru, REG_POS, t, o->positions[t], wf);
    if (products & AMT_P_SLOTS) put(ru, REG_SLOTS, t, o->slots[t], wf);
  }
  for (t = b->T; t < b->C; t++) {
    if (products & AMT_P_SEQ_LENS) put(ru, REG_SEQ, t, 0, 1);
    if (products & AMT_P_SLOTS) put(ru, REG_SLOTS, t, -1, 1);
  }
  if (products & AMT_P_PER_REQ_LENS)
    for (t = 0; t < b->R; t++) put(ru, REG_PERREQ, t, o->per_req_lens[t], wf);
}

static void where(const runner *ru, int g, int64_t e, char *buf, size_t size) {
  const region *r = &ru->reg[g];
  if (e < 0) {
    snprintf(buf, size, "index=%lld (front guard)", (long long)e);
  } else if (e >= r->n) {
    snprintf(buf, size, "index=%lld (back guard)", (long long)e);
  } else if (g == REG_BT) {
    snprintf(buf, size, "index=%lld (row %lld col %lld)", (long long)e,
             (long long)(e / ru->b->out_stride), (long long)(e % ru->b->out_stride));
  } else {
    snprintf(buf, size, "index=%lld", (long long)e);
  }
}

static void compare(runner *ru) {
  int g;
  for (g = 0; g < NREG; g++) {
    const region *r = &ru->reg[g];
    int64_t e, first = 0, bad = 0;
    for (e = -GUARD; e < r->n + GUARD; e++) {
      const size_t off = r->off + (size_t)(e * r->es);
      if (!ru->h_care[off]) continue;
      if (load(ru->h_arena + off, r->es) != load(ru->h_expect + off, r->es)) {
        if (!bad++) first = e;
      }
    }
    if (bad) {
      const size_t off = r->off + (size_t)(first * r->es);
      char at[96];
      where(ru, g, first, at, sizeof at);
      report(ru, "product=%s %s expected=%lld got=%lld (%lld wrong elements in this buffer)",
             r->name, at, (long long)load(ru->h_expect + off, r->es),
             (long long)load(ru->h_arena + off, r->es), (long long)bad);
    }
  }
}

/* ------------------------------------------------------------------- runs */

static void poison_and_upload(runner *ru, int use_err, int32_t err_init) {
  memset(ru->h_arena, POISON_BYTE, ru->arena_bytes);
  if (use_err) store(ru->h_arena + ru->reg[REG_ERR].off, 4, err_init);
  amt_to_dev(ru->ctx, ru->d_arena, ru->h_arena, ru->arena_bytes);
}

/* One attnmeta_build_step building `products`; `minimal`: pass only the
 * inputs those products need. */
static void run_step(runner *ru, const char *variant, unsigned products, int use_err,
                     int32_t err_init, int minimal) {
  const amt_batch *b = ru->b;
  const unsigned need_seq =
      AMT_P_SEQ_LENS | AMT_P_GLOBAL_SEQ_LENS | AMT_P_POSITIONS | AMT_P_SLOTS;
  const unsigned need_table = AMT_P_BLOCK_TABLE | AMT_P_SLOTS;
  const int give_seq = !minimal || (products & need_seq);
  attnmeta_step s;
  attnmeta_status st;

  ru->variant = variant;
  poison_and_upload(ru, use_err, err_init);
  attnmeta_step_init(&s);
  s.query_start_loc = ru->d_qsl;
  s.num_reqs = b->R;
  s.num_tokens = b->T;
  s.capacity = b->C;
  s.seq_lens = give_seq ? ru->d_seq : NULL;
  s.block_table = (!minimal || (products & need_table)) ? ru->d_table : NULL;
  s.block_table_cols = b->cols;
  s.block_table_stride = b->in_stride;
  s.num_mapped = b->num_mapped;
  s.block_size = b->block_size;
  s.dcp_world_size = b->world;
  s.dcp_rank = ru->rank;
  s.dcp_interleave = b->interleave;
  if (products & AMT_P_TOKEN_TO_REQ) s.token_to_req = reg_dev(ru, REG_T2R);
  if (products & AMT_P_SEQ_LENS) s.seq_lens_out = reg_dev(ru, REG_SEQ);
  if (products & AMT_P_GLOBAL_SEQ_LENS) s.global_seq_lens_out = reg_dev(ru, REG_GLOBAL);
  if (products & AMT_P_BLOCK_TABLE) s.block_table_out = reg_dev(ru, REG_BT);
  s.block_table_out_stride = b->out_stride;
  if (products & AMT_P_DECODE_LENS) s.decode_lens_out = reg_dev(ru, REG_DECODE);
  if (products & AMT_P_REQ_INDICES) s.req_indices_out = reg_dev(ru, REG_REQIDX);
  if (products & AMT_P_PER_REQ_LENS) s.per_req_lens_out = reg_dev(ru, REG_PERREQ);
  if (products & AMT_P_POSITIONS) s.positions = reg_dev(ru, REG_POS);
  if (products & AMT_P_SLOTS) s.slot_mapping = reg_dev(ru, REG_SLOTS);
  if (use_err) s.error_word = reg_dev(ru, REG_ERR);

  st = attnmeta_build_step(ru->ctx, &s, NULL);
  if (st != ATTNMETA_OK) {
    report(ru, "attnmeta_build_step returned %s: %s", attnmeta_status_string(st),
           attnmeta_last_error(ru->ctx));
    return;
  }
  if (attnmeta_last_error(ru->ctx)[0])
    report(ru, "attnmeta_last_error not empty after success: \"%s\"",
           attnmeta_last_error(ru->ctx));
  amt_to_host(ru->ctx, ru->h_arena, ru->d_arena, ru->arena_bytes);

  expect_image(ru, products);
  if (use_err) { /* the error word is checked below, not as an image */
    const size_t off = ru->reg[REG_ERR].off;
    const int32_t got = (int32_t)load(ru->h_arena + off, 4);
    int32_t flags = ru->ref->request_flags & (give_seq ? ALL_FLAGS : ~SEQ_FLAGS);
    ru->h_care[off] = 0;
    if (ru->ref->well_formed) {
      if (products & AMT_P_SLOTS) flags |= ru->ref->slot_flags;
      if (got != (err_init | flags))
        report(ru, "product=error_word index=0 expected=0x%x got=0x%x", (unsigned)(err_init | flags),
               (unsigned)got);
    } else if ((got & (err_init | flags)) != (err_init | flags) ||
               (got & ~(err_init | ALL_FLAGS)) != 0) {
      report(ru, "product=error_word index=0 expected bits 0x%x set (and none outside 0x%x) got=0x%x",
             (unsigned)(err_init | flags), (unsigned)(err_init | ALL_FLAGS), (unsigned)got);
    }
  }
  compare(ru);
}

/* attnmeta_token_to_req, contract section 1. */
static void run_token_map(runner *ru) {
  const amt_batch *b = ru->b;
  attnmeta_status st;
  ru->variant = "token_to_req_api";
  poison_and_upload(ru, 0, 0);
  st = attnmeta_token_to_req(ru->ctx, ru->d_qsl, b->R, b->num_mapped, b->T,
                             reg_dev(ru, REG_T2R), NULL);
  if (st != ATTNMETA_OK) {
    report(ru, "attnmeta_token_to_req returned %s: %s", attnmeta_status_string(st),
           attnmeta_last_error(ru->ctx));
    return;
  }
  amt_to_host(ru->ctx, ru->h_arena, ru->d_arena, ru->arena_bytes);
  expect_image(ru, AMT_P_TOKEN_TO_REQ);
  compare(ru);
}

/* Every variant of one (launch config, rank). */
static void run_variants(runner *ru, int first_rank) {
  const unsigned products = ru->b->products;
  static char names[AMT_NUM_PRODUCTS][48];
  int p;
  run_step(ru, "all", products, 1, 0, 0);
  run_step(ru, "all_no_error_word", products, 0, 0, 0);
  for (p = 0; p < AMT_NUM_PRODUCTS; p++) {
    const unsigned one = 1u << p;
    if (!(products & one)) continue;
    snprintf(names[p], sizeof names[p], "alone_%s", amt_product_name(one));
    run_step(ru, names[p], one, 1, PRESET_BIT, 1);
  }
  if ((products & AMT_P_TOKEN_TO_REQ) && first_rank) run_token_map(ru);
}

/* -------------------------------------------------------------- the tests */

typedef struct step_param {
  int backend;    /* attnmeta_backend */
  int config;     /* index in amt_launch_configs, -1 = all of them */
  int case_index; /* index in amt_cases */
} step_param;

static void free_params(struct criterion_test_params *crp) { cr_free(crp->params); }

ParameterizedTestParameters(step, cases) {
  attnmeta_backend be[AMT_MAX_BACKENDS];
  const int nb = amt_test_backends(be);
  const int split = amt_split_configs();
  const amt_launch *cfg;
  size_t n = 0, cap = 1;
  int i, j, c;
  step_param *ps;
  for (i = 0; i < nb; i++) cap += (size_t)(split ? amt_launch_configs(be[i], &cfg) : 1) *
                                  (size_t)amt_num_cases;
  ps = cr_calloc(cap, sizeof *ps);
  for (i = 0; i < nb; i++) {
    const int ncfg = split ? amt_launch_configs(be[i], &cfg) : 1;
    for (j = 0; j < ncfg; j++)
      for (c = 0; c < amt_num_cases; c++) {
        if (!amt_case_selected(amt_cases[c].name)) continue;
        ps[n].backend = (int)be[i];
        ps[n].config = split ? j : -1;
        ps[n].case_index = c;
        n++;
      }
  }
  return cr_make_param_array(step_param, ps, n, free_params);
}

ParameterizedTest(step_param *param, step, cases) {
  const attnmeta_backend kind = (attnmeta_backend)param->backend;
  const amt_case *cs = &amt_cases[param->case_index];
  attnmeta_context *ctx = amt_open_or_skip(kind);
  amt_batch *b = amt_materialize(cs);
  const amt_launch *cfgs;
  const int ncfg = amt_launch_configs(kind, &cfgs);
  int32_t seen_flags = 0;
  runner ru;
  int k, c;

  memset(&ru, 0, sizeof ru);
  ru.ctx = ctx;
  ru.backend = amt_backend_label(kind);
  ru.case_name = cs->name;
  ru.config = "-";
  ru.variant = "-";
  ru.b = b;

  /* inputs, exactly sized (so a sanitizer sees any read past them) */
  ru.d_qsl = amt_dev_alloc(ctx, ((size_t)b->R + 1) * 4);
  amt_to_dev(ctx, ru.d_qsl, b->qsl, ((size_t)b->R + 1) * 4);
  ru.d_seq = amt_dev_alloc(ctx, (size_t)(b->R > 0 ? b->R : 1) * 4);
  if (b->R > 0) amt_to_dev(ctx, ru.d_seq, b->seq_lens, (size_t)b->R * 4);
  if (b->block_table) {
    const size_t bytes = (size_t)b->table_elems * 4;
    ru.d_table_base = amt_dev_alloc(ctx, bytes + ((b->misalign & 1) ? 4 : 0));
    ru.d_table = (int32_t *)ru.d_table_base + ((b->misalign & 1) ? 1 : 0);
    amt_to_dev(ctx, ru.d_table, b->block_table, bytes);
  }

  layout(&ru);
  ru.d_arena = amt_dev_alloc(ctx, ru.arena_bytes);
  ru.h_arena = malloc(ru.arena_bytes);
  ru.h_expect = malloc(ru.arena_bytes);
  ru.h_care = malloc(ru.arena_bytes);
  cr_assert(ru.h_arena && ru.h_expect && ru.h_care, "out of host memory");

  for (k = 0; k < b->nranks; k++) {
    amr_input in;
    amr_output *ref;
    in.qsl = b->qsl;
    in.R = b->R;
    in.T = b->T;
    in.C = b->C;
    in.seq_lens = b->seq_lens;
    in.block_table = b->block_table;
    in.cols = b->cols;
    in.in_stride = b->in_stride;
    in.num_mapped = b->num_mapped;
    in.block_size = b->block_size;
    in.world = b->world;
    in.rank = b->ranks[k];
    in.interleave = b->interleave;
    ref = amr_alloc(&in);
    amr_build(&in, ref);
    seen_flags |= ref->request_flags | ref->slot_flags;
    ru.ref = ref;
    ru.rank = b->ranks[k];
    for (c = 0; c < ncfg; c++) {
      attnmeta_status st;
      if (param->config >= 0 && c != param->config) continue;
      ru.config = cfgs[c].name;
      st = attnmeta_set_launch_config(ctx, &cfgs[c].config);
      if (st != ATTNMETA_OK) {
        report(&ru, "attnmeta_set_launch_config returned %s: %s", attnmeta_status_string(st),
               attnmeta_last_error(ctx));
        continue;
      }
      run_variants(&ru, k == 0);
    }
    amr_free(ref);
  }

  /* the case table itself: the data must raise what the case says it does */
  if ((seen_flags & b->expect_flags) != b->expect_flags)
    cr_expect_fail("case=%s: case table error, reference raises 0x%x, case expects 0x%x",
                   cs->name, (unsigned)seen_flags, (unsigned)b->expect_flags);

  free(ru.h_arena);
  free(ru.h_expect);
  free(ru.h_care);
  amt_dev_free(ctx, ru.d_arena);
  amt_dev_free(ctx, ru.d_qsl);
  amt_dev_free(ctx, ru.d_seq);
  if (ru.d_table_base) amt_dev_free(ctx, ru.d_table_base);
  amt_batch_free(b);
  attnmeta_close(ctx);
}
