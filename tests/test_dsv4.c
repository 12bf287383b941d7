// SPDX-License-Identifier: Apache-2.0
/*
 * The DeepSeek-V3.2/V4 products of a step (contract sections 5, 7, 8)
 * against the naive reference, on every backend present, under every
 * launch configuration of the backend's sweep, for every DCP rank: one
 * Criterion test per (backend x case of cases_dsv4.c).
 *
 * Every output lives in one device arena between guard zones; the arena is
 * poisoned before each launch and compared, byte for byte, with an expected
 * image after it: the reference's values where the contract defines them,
 * poison wherever nothing may be written (guards, row-stride gaps, outputs
 * not asked for). Each (config, rank) runs these variants:
 *   all          the part-1 products and every DSV4 product in one launch
 *   dsv4         the DSV4 products alone
 *   dsv4_quiet   the same without an error word
 *   alone_<out>  each DSV4 output alone (groups wanted out of order)
 *   all_graph    everything, captured into a graph and replayed (GPU
 *                backends: one kernel node per step)
 * On the CPU backend the kernel body also runs for emulated GPU launch
 * shapes (lanes x groups threads a block, every thread in turn, several
 * blocks), so the lanes' split of the wide rows is checked here too, not
 * only on a GPU.
 * For hostile boundaries (values unspecified) only the tails, the
 * per-request lengths, the guards and the flags are checked.
 *
 * Env ATTNMETA_TEST_CASES and ATTNMETA_TEST_BACKENDS select as in test_step.c.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_step_kernel.h"    /* the kernel body, for emulated GPU launch shapes */
#include "am_step_translate.h" /* what step.c passes it */
#include "attnmeta/attnmeta.h"
#include "attnmeta/attnmeta_measure.h"
#include "cases_dsv4.h"
#include "harness.h"
#include "op_inputs.h"
#include "reference.h"
#include "reference_dsv4.h"
#include "step_fixture.h"
#include "vecschema.h" /* the schema's members by name */

#define GUARD_BYTES 64
#define POISON 0x5A
#define MAX_REPORTS 12

/* The outputs a run may ask for. */
enum {
  O_T2R, O_SEQ, O_POS, O_SLOT,          /* part 1 */
  O_CS0, O_CS1, O_CS2, O_CS3,           /* compressed slots of groups 0..3 */
  O_CL0, O_CL1, O_CL2, O_CL3,           /* compressed lengths of groups 0..3 */
  O_SWA, O_SWA_LENS, O_C128A, O_C128A_LENS,
  O_IXL,                                /* the indexer's compressed lengths */
  O_C128A_PRE,                          /* mixed mode's prefill rows */
  O_ERR,
  NOUT
};
#define PART1_OUTS ((1u << O_T2R) | (1u << O_SEQ) | (1u << O_POS) | (1u << O_SLOT))
#define DSV4_OUTS (((1u << O_ERR) - 1) & ~PART1_OUTS)

static const char *const out_names[NOUT] = {
    "token_to_req", "seq_lens_out", "positions", "slot_mapping",
    "group0.slot_mapping", "group1.slot_mapping", "group2.slot_mapping", "group3.slot_mapping",
    "group0.seq_lens_out", "group1.seq_lens_out", "group2.seq_lens_out", "group3.seq_lens_out",
"swa_indices", "swa_lens", "c128a_rows", "c128a_lens", "indexer_lens_out",
    "c128a_prefill_rows", "error_word"};

typedef struct region {
  int es;          /* element size */
  int64_t n;       /* elements */
  int64_t width;   /* rows: entries per row (stride = row_stride) */
  int64_t stride;  /* rows: stride; else 0 */
  size_t off;      /* byte offset of element 0 */
} region;

typedef struct run {
  const amd_case *kase;
  const amd_batch *b;
  attnmeta_context *ctx;
  const char *backend, *config, *variant;
  int32_t rank;
  int32_t *d_qsl, *d_seq, *d_tables[AMD_NUM_TABLES];
  int64_t *d_swa_slots; /* the case's swa_token_slots on the device, or NULL */
  void *d_extra[AMVS_MAX_INPUTS]; /* the inputs of amd_batch.extra on the device, or NULL */
  unsigned char *d_arena, *h_arena, *h_expect, *h_care;
  size_t bytes;
  region reg[NOUT];
  int reports;
  int well; /* the boundaries are well formed */
} run;

/* Lays the outputs out in one arena: each between guard zones, each data
 * part 16-byte aligned (4 bytes off for a misaligned case's rows). */
static void layout(run *ru) {
  const amd_batch *b = ru->b;
  size_t at = 0;
  int o;
  for (o = 0; o < NOUT; o++) {
    region *g = &ru->reg[o];
    memset(g, 0, sizeof *g);
    g->es = (o == O_POS || o == O_SLOT || (o >= O_CS0 && o <= O_CS3)) ? 8 : 4;
    switch (o) {
      case O_T2R: case O_POS: g->n = b->T; break;
      case O_SEQ: case O_SLOT: case O_SWA_LENS: case O_C128A_LENS: case O_IXL: g->n = b->C; break;
      case O_SWA:
        g->width = b->d.swa_width > 0 ? b->d.swa_width : 0;
        g->stride = b->swa_stride;
        g->n = (int64_t)b->T * g->stride;
        break;
      case O_C128A:
      case O_C128A_PRE:
        g->width = b->d.c128a_width > 0 ? b->d.c128a_width : 0;
        g->stride = b->c128a_stride;
        g->n = (int64_t)b->T * g->stride;
        break;
      case O_ERR: g->n = 1; break;
      default: g->n = (o >= O_CL0 && o <= O_CL3) ? b->R : b->C; break;
    }
    at += GUARD_BYTES;
    if ((o == O_SWA || o == O_C128A || o == O_C128A_PRE) && ru->kase->misalign) at += 4;
    g->off = at;
    at += (size_t)g->n * (size_t)g->es;
    at = (at + 15) / 16 * 16;
  }
  ru->bytes = at + GUARD_BYTES;
}

static void *dev(const run *ru, int o) { return ru->d_arena + ru->reg[o].off; }

static void put(run *ru, int o, int64_t i, int64_t v, int care) {
  const region *g = &ru->reg[o];
  unsigned char *e = ru->h_expect + g->off + (size_t)i * (size_t)g->es;
  if (g->es == 8) {
    memcpy(e, &v, 8);
  } else {
    const int32_t v32 = (int32_t)v;
    memcpy(e, &v32, 4);
  }
  memset(ru->h_care + g->off + (size_t)i * (size_t)g->es, care, (size_t)g->es);
}

/* Fills the expected image of the outputs in `want` for rank ru->rank; the
 * flags the error word must hold go to *flags. */
static void expect(run *ru, unsigned want, int32_t *flags) {
  const amd_batch *b = ru->b;
  amr_input in;
  amr_output *p1;
  amr_dsv4_output *d4;
  amr_dsv4_input d = b->d;
  int64_t t, j;
  int g, well;
  amd_reference_input(b, ru->rank, &in);
  p1 = amr_alloc(&in);
  amr_build(&in, p1);
  d4 = amr_dsv4_alloc(&in, &d);
  amr_dsv4_build(&in, &d, d4);
  well = ru->well = p1->well_formed;
  *flags = p1->request_flags;
  memset(ru->h_expect, POISON, ru->bytes);
  memset(ru->h_care, 1, ru->bytes);
  for (t = 0; t < b->C; t++) {
    const int tok = t < b->T, care = !tok || well;
    if (want & (1u << O_T2R) && tok) put(ru, O_T2R, t, p1->token_to_req[t], care);
    if (want & (1u << O_SEQ)) put(ru, O_SEQ, t, p1->seq_lens_out[t], care);
    if (want & (1u << O_POS) && tok) put(ru, O_POS, t, p1->positions[t], care);
    if (want & (1u << O_SLOT)) put(ru, O_SLOT, t, p1->slots[t], care);
    for (g = 0; g < d.ngroups; g++)
      if (want & (1u << (O_CS0 + g))) put(ru, O_CS0 + g, t, d4->cslots[g][t], care);
    if (want & (1u << O_SWA_LENS)) put(ru, O_SWA_LENS, t, d4->swa_lens[t], care);
    if (want & (1u << O_C128A_LENS)) put(ru, O_C128A_LENS, t, d4->c128a_lens[t], care);
    if (want & (1u << O_IXL)) put(ru, O_IXL, t, d4->indexer_lens[t], care);
    if (!tok) continue;
    if (want & (1u << O_SWA))
      for (j = 0; j < d.swa_width; j++)
        put(ru, O_SWA, t * b->swa_stride + j, d4->swa[t * d.swa_width + j], care);
    if (want & (1u << O_C128A))
      for (j = 0; j < d.c128a_width; j++)
        put(ru, O_C128A, t * b->c128a_stride + j, d4->c128a[t * d.c128a_width + j], care);
    if (want & (1u << O_C128A_PRE))
      for (j = 0; j < d.c128a_width; j++)
        put(ru, O_C128A_PRE, t * b->c128a_stride + j, d4->c128a_prefill[t * d.c128a_width + j],
            care);
  }
  for (g = 0; g < d.ngroups; g++)
    if (want & (1u << (O_CL0 + g)))
      for (t = 0; t < b->R; t++) put(ru, O_CL0 + g, t, d4->clens[g][t], 1);
  if (want & (1u << O_SLOT)) *flags |= p1->slot_flags;
  for (g = 0; g < d.ngroups; g++)
    if (want & (1u << (O_CS0 + g))) *flags |= d4->group_flags[g];
  if (want & ((1u << O_SWA) | (1u << O_SWA_LENS)))
    *flags |= d4->swa_flags & ATTNMETA_FLAG_POSITION_NEGATIVE;
  if (want & (1u << O_SWA)) *flags |= d4->swa_flags;
  if (want & (1u << O_C128A)) *flags |= d4->c128a_flags;
  if (!well) { /* which request a token falls in is unspecified: so are these flags */
    *flags &= ~(ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE | ATTNMETA_FLAG_BLOCK_ID_NEGATIVE |
                ATTNMETA_FLAG_POSITION_NEGATIVE | ATTNMETA_FLAG_SLOT_OUT_OF_RANGE);
  }
  if (want & (1u << O_ERR)) put(ru, O_ERR, 0, 0, 0); /* starts at 0; checked below */
  amr_dsv4_free(d4);
  amr_free(p1);
}

/* The inputs declared after 0.3 that the case gives (amd_batch.extra), on
 * the device, exactly sized. */
static void upload_extra(run *ru) {
  int i;
  for (i = 0; i < amvs_step_num_inputs() && i < AMVS_MAX_INPUTS; i++) {
    const amvs_member *m = amvs_step_input(i);
    const void *p = *(const void *const *)amvs_slot((void *)&ru->b->extra, m);
    int64_t rows, cols, stride, n;
    if (!p || !amvs_schema_input(m)) continue;
    amvs_extent(&amvs_step, &ru->b->extra, m, &rows, &cols, &stride);
    n = !m->cols ? rows : cols == 0 ? 0 : rows > 0 ? (rows - 1) * stride + cols : 1;
    ru->d_extra[i] = amt_dev_alloc(ru->ctx, (size_t)(n > 0 ? n : 1) * m->size);
    if (n > 0) amt_to_dev(ru->ctx, ru->d_extra[i], p, (size_t)n * m->size);
  }
}

/* The settings and inputs declared after 0.3, by name. */
static void fill_extra(const run *ru, attnmeta_step *s) {
  int k;
  for (k = 0; k < amvs_step.n; k++)
    if (amvs_schema_param(&amvs_step.m[k]))
      amvs_set(s, &amvs_step.m[k], amvs_get(&ru->b->extra, &amvs_step.m[k]));
  for (k = 0; k < amvs_step_num_inputs() && k < AMVS_MAX_INPUTS; k++)
    if (ru->d_extra[k]) *(const void **)amvs_slot(s, amvs_step_input(k)) = ru->d_extra[k];
}

static void fill_step(const run *ru, unsigned want, attnmeta_step *s) {
  const amd_batch *b = ru->b;
  int g, k = 0;
  amt_step_tokens(s, ru->d_qsl, b->R, b->T, b->C);
  amt_step_table(s, ru->d_seq, ru->d_tables[AMD_TAB_MAIN], b->cols[AMD_TAB_MAIN],
                 b->cols[AMD_TAB_MAIN], b->main_block_size);
  s->dcp_world_size = b->world;
  s->dcp_rank = ru->rank;
  s->dcp_interleave = b->interleave;
  if (want & (1u << O_T2R)) s->token_to_req = dev(ru, O_T2R);
  if (want & (1u << O_SEQ)) s->seq_lens_out = dev(ru, O_SEQ);
  if (want & (1u << O_POS)) s->positions = dev(ru, O_POS);
  if (want & (1u << O_SLOT)) s->slot_mapping = dev(ru, O_SLOT);
  if (want & (1u << O_ERR)) s->error_word = dev(ru, O_ERR);
  for (g = 0; g < b->d.ngroups; g++) {
    /* a group wanted alone goes to the last place: places need not be packed */
    attnmeta_compressed_group *cg =
        &s->compressed_groups[__builtin_popcount(want & DSV4_OUTS) == 1
                                  ? ATTNMETA_MAX_COMPRESSED_GROUPS - 1
                                  : k];
    if (!(want & ((1u << (O_CS0 + g)) | (1u << (O_CL0 + g))))) continue;
    k++;
    cg->block_table = ru->d_tables[AMD_TAB_GROUP0 + g];
    cg->block_table_cols = b->cols[AMD_TAB_GROUP0 + g];
    cg->block_table_stride = b->cols[AMD_TAB_GROUP0 + g];
    cg->ratio = b->d.groups[g].ratio;
    cg->block_size = b->d.groups[g].block_size;
    if (want & (1u << (O_CS0 + g))) cg->slot_mapping = dev(ru, O_CS0 + g);
    if (want & (1u << (O_CL0 + g))) cg->seq_lens_out = dev(ru, O_CL0 + g);
  }
  if (b->d.swa_width > 0) {
    amt_step_swa(s, ru->d_tables[AMD_TAB_SWA], b->cols[AMD_TAB_SWA], b->d.swa_block_size,
                 b->d.swa_window, b->d.swa_width, b->d.swa_mode,
                 want & (1u << O_SWA) ? dev(ru, O_SWA) : NULL, b->swa_stride,
                 want & (1u << O_SWA_LENS) ? dev(ru, O_SWA_LENS) : NULL);
    s->swa_token_slots = ru->d_swa_slots;
  }
  if (b->d.c128a_width >= 0) {
    s->c128a_block_table = ru->d_tables[AMD_TAB_C128A];
    s->c128a_block_table_cols = b->cols[AMD_TAB_C128A];
    s->c128a_block_table_stride = b->cols[AMD_TAB_C128A];
    s->c128a_ratio = b->d.c128a_ratio;
    s->c128a_block_size = b->d.c128a_block_size;
    s->c128a_width = b->d.c128a_width;
    s->c128a_mode = b->d.c128a_mode;
    s->c128a_rows_stride = b->c128a_stride;
    if (want & (1u << O_C128A)) s->c128a_rows = dev(ru, O_C128A);
    if (want & (1u << O_C128A_LENS)) s->c128a_lens = dev(ru, O_C128A_LENS);
    s->c128a_num_decode_tokens = b->d.c128a_num_decode;
    s->c128a_prefill_rows_stride = b->c128a_stride;
    if (want & (1u << O_C128A_PRE)) s->c128a_prefill_rows = dev(ru, O_C128A_PRE);
  }
  if (b->d.indexer_ratio > 0) {
    s->indexer_ratio = b->d.indexer_ratio;
    s->indexer_mode = b->d.indexer_mode;
    if (want & (1u << O_IXL)) s->indexer_lens_out = dev(ru, O_IXL);
  }
  fill_extra(ru, s);
}

/* Where byte `at` of the arena is, for a failure message. */
static void locate(const run *ru, size_t at, char *buf, size_t size) {
  int o;
  for (o = 0; o < NOUT; o++) {
    const region *g = &ru->reg[o];
    const size_t end = g->off + (size_t)g->n * (size_t)g->es;
    if (at + GUARD_BYTES >= g->off && at < end + 16) {
      const int64_t i = ((int64_t)at - (int64_t)g->off) / g->es;
      if (at < g->off || at >= end)
        snprintf(buf, size, "%s guard (element %lld)", out_names[o], (long long)i);
      else if (g->stride)
        snprintf(buf, size, "%s[%lld][%lld]%s", out_names[o], (long long)(i / g->stride),
                 (long long)(i % g->stride), i % g->stride >= g->width ? " (stride gap)" : "");
      else
        snprintf(buf, size, "%s[%lld]", out_names[o], (long long)i);
      return;
    }
  }
  snprintf(buf, size, "arena byte %zu", at);
}

static void fail(run *ru, const char *fmt, const char *detail) {
  if (ru->reports++ < MAX_REPORTS)
    cr_expect_fail("backend=%s case=%s config=%s rank=%d variant=%s: %s%s", ru->backend,
                   ru->kase->name, ru->config, (int)ru->rank, ru->variant, fmt, detail);
}

/* An emulated GPU launch shape. */
typedef struct gpu_shape {
  const char *name;
  uint32_t lanes, groups, grid;
  int vector, stage;
} gpu_shape;

static const gpu_shape gpu_shapes[] = {
    {"emu_lanes2_groups3_grid2", 2, 3, 2, 1, 0},
    {"emu_lanes7_grid3_scalar", 7, 1, 3, 0, 0},
    {"emu_lanes32_groups2_staged", 32, 2, 1, 1, 1},
    {"emu_lanes256_grid1", 256, 1, 1, 1, 0},
    {"emu_lanes4_groups8_grid5", 4, 8, 5, 1, 0},
};

/* The kernel body for `shape`, every thread in turn, on the step the
 * library would launch (CPU backend: device memory is host memory). */
static void emulate(const attnmeta_step *s, const gpu_shape *shape) {
  am_step_params p = am_params_of(s);
  int32_t *stage;
  int64_t words, i;
  uint32_t block, k;
  p.vector_rows = shape->vector && (uintptr_t)p.block_table % 16 == 0 &&
                  (uintptr_t)p.block_table_out % 16 == 0 && p.block_table_stride % 4 == 0 &&
                  p.block_table_out_stride % 4 == 0;
  p.swa.vector = shape->vector && p.swa.out && (uintptr_t)p.swa.out % 16 == 0 &&
                 p.swa.out_stride % 4 == 0;
  p.c128a.vector = shape->vector && p.c128a.out && (uintptr_t)p.c128a.out % 16 == 0 &&
                   p.c128a.out_stride % 4 == 0;
  p.c128a.vector2 = shape->vector && p.c128a.out2 && (uintptr_t)p.c128a.out2 % 16 == 0 &&
                    p.c128a.out2_stride % 4 == 0;
  p.stage = shape->stage && (int64_t)p.num_reqs + 1 <= AM_STAGE_MAX_REQS;
  am_pick_guess(p.num_reqs, p.num_tokens, &p.guess_mul, &p.guess_shift);
  am_pick_speculation(&p);
  p.variant = am_pick_variant(&p);
  am_pick_tail(&p);
  words = am_step_stage_words(&p);
  stage = calloc((size_t)(words > 0 ? words : 1), sizeof(int32_t));
  cr_assert(stage);
  if (p.stage) { /* what every block holds after its staging loop and barrier */
    for (i = 0; i <= p.num_reqs; ++i) stage[i] = p.qsl[i];
    if (p.seq_lens)
      for (i = 0; i < p.num_reqs; ++i) stage[p.num_reqs + 1 + i] = p.seq_lens[i];
  }
  for (block = 0; block < shape->grid; ++block)
    for (k = 0; k < shape->lanes * shape->groups; ++k)
      am_step_body(&p,
                   am_make_thread(block, shape->grid, k % shape->lanes, shape->lanes,
                                  k / shape->lanes, shape->groups),
                   stage, p.variant);
  free(stage);
}

static void run_variant_on(run *ru, unsigned want, const char *variant, const gpu_shape *shape);

/* Not a shape: the step captured into a graph and replayed (attnmeta_measure_graph). */
static const gpu_shape graph_run = {"graph", 0, 0, 0, 0, 0};

typedef struct enqueue_ctx {
  attnmeta_context *ctx;
  const attnmeta_step *step;
} enqueue_ctx;

static attnmeta_status enqueue_step(void *user, void *stream) {
  const enqueue_ctx *e = user;
  return attnmeta_build_step(e->ctx, e->step, stream);
}

/* Captures the step into a graph (on a GPU backend; the CPU backend runs it
 * in a loop) and replays it: a whole step must be one kernel node. */
static void run_graph(run *ru, const attnmeta_step *s) {
  enqueue_ctx e;
  attnmeta_graph_timing timing;
  attnmeta_status st;
  e.ctx = ru->ctx;
  e.step = s;
  st = attnmeta_measure_graph(ru->ctx, enqueue_step, &e, 4, 2, 1, &timing);
  if (st != ATTNMETA_OK) {
    fail(ru, "attnmeta_measure_graph: ", attnmeta_last_error(ru->ctx));
    return;
  }
  if (timing.graph && timing.kernel_nodes_per_step != 1.0) {
    char detail[128];
    snprintf(detail, sizeof detail, "%.2f kernel nodes per step in the captured graph, not 1",
             timing.kernel_nodes_per_step);
    fail(ru, "", detail);
  }
}

static void run_variant(run *ru, unsigned want, const char *variant) {
  run_variant_on(ru, want, variant, NULL);
}

static void run_variant_on(run *ru, unsigned want, const char *variant, const gpu_shape *shape) {
  attnmeta_step s;
  attnmeta_status st;
  int32_t flags, got_word = 0;
  size_t i;
  int wrong = 0, g;
  unsigned present = PART1_OUTS | (1u << O_ERR);
  for (g = 0; g < ru->b->d.ngroups; g++) present |= (1u << (O_CS0 + g)) | (1u << (O_CL0 + g));
  if (ru->b->d.swa_width > 0) present |= (1u << O_SWA) | (1u << O_SWA_LENS);
  if (ru->b->d.c128a_width >= 0) present |= (1u << O_C128A) | (1u << O_C128A_LENS);
  if (ru->b->d.indexer_ratio > 0) present |= 1u << O_IXL;
  if (ru->b->d.c128a_width >= 0 && ru->b->d.c128a_mode == ATTNMETA_C128A_MIXED)
    present |= 1u << O_C128A_PRE;
  want &= present;
  ru->variant = variant;
  expect(ru, want, &flags);
  memset(ru->h_arena, POISON, ru->bytes);
  if (want & (1u << O_ERR)) memset(ru->h_arena + ru->reg[O_ERR].off, 0, 4);
  amt_to_dev(ru->ctx, ru->d_arena, ru->h_arena, ru->bytes);
  fill_step(ru, want, &s);
  st = attnmeta_build_step(ru->ctx, &s, NULL);
  if (st != ATTNMETA_OK) {
    fail(ru, "attnmeta_build_step: ", attnmeta_last_error(ru->ctx));
    return;
  }
  if (shape) { /* again, poisoned, through the emulated shape (the call above checked the step) */
    amt_to_dev(ru->ctx, ru->d_arena, ru->h_arena, ru->bytes);
    if (shape == &graph_run)
      run_graph(ru, &s);
    else
      emulate(&s, shape);
  }
  amt_to_host(ru->ctx, ru->h_arena, ru->d_arena, ru->bytes);
  for (i = 0; i < ru->bytes; i++) {
    if (ru->h_care[i] && ru->h_arena[i] != ru->h_expect[i]) {
      char where[128], detail[256];
      const region *g;
      int64_t e = 0, v = 0;
      int o;
      locate(ru, i, where, sizeof where);
      for (o = 0; o < NOUT; o++) {
        g = &ru->reg[o];
        if (i >= g->off && i < g->off + (size_t)g->n * (size_t)g->es) {
          const size_t at = g->off + (i - g->off) / (size_t)g->es * (size_t)g->es;
          if (g->es == 8) {
            memcpy(&e, ru->h_expect + at, 8);
            memcpy(&v, ru->h_arena + at, 8);
          } else {
            int32_t e32, v32;
            memcpy(&e32, ru->h_expect + at, 4);
            memcpy(&v32, ru->h_arena + at, 4);
            e = e32;
            v = v32;
          }
          i = at + (size_t)g->es - 1; /* one report per element */
          break;
        }
      }
      snprintf(detail, sizeof detail, "%s: expected %lld, got %lld", where, (long long)e,
               (long long)v);
      fail(ru, "", detail);
      wrong++;
    }
  }
  if (want & (1u << O_ERR)) {
    /* well-formed data: exactly the expected flags; hostile boundaries: at
     * least the request flags, and only flags the contract knows */
    const int32_t known = 0xFF | ATTNMETA_FLAG_SLOT_OUT_OF_RANGE;
    memcpy(&got_word, ru->h_arena + ru->reg[O_ERR].off, 4);
    if (ru->well ? got_word != flags : ((got_word & flags) != flags || (got_word & ~known))) {
      char detail[128];
      snprintf(detail, sizeof detail, "error word 0x%x, expected 0x%x%s", (unsigned)got_word,
               (unsigned)flags, ru->well ? "" : " and known flags");
      fail(ru, "", detail);
    }
  }
  (void)wrong;
}

/* The SWA-group cases run as conformance vectors (s7_swa_groups.amv), whose
 * runner stacks the groups' tables and rows; this suite uploads one table
 * a product. */
static int case_selected(int index) {
  return amd_cases[index].swa_groups < 2 && amt_case_selected(amd_cases[index].name);
}

ParameterizedTestParameters(dsv4, cases) {
  return amt_case_params_where(amd_num_cases, case_selected);
}

ParameterizedTest(amt_case_param *param, dsv4, cases) {
  const attnmeta_backend kind = (attnmeta_backend)param->backend;
  const amd_case *kase = &amd_cases[param->index];
  const amt_launch *configs;
  run ru;
  int ncfg, c, k, o;

  memset(&ru, 0, sizeof ru);
  ru.ctx = amt_open_or_skip(kind);
  ru.kase = kase;
  ru.b = amd_materialize(kase);
  ru.backend = amt_backend_label(kind);
  layout(&ru);
  ru.d_qsl = amt_dev_alloc(ru.ctx, ((size_t)ru.b->R + 1) * 4);
  ru.d_seq = amt_dev_alloc(ru.ctx, ((size_t)ru.b->R + 1) * 4);
  amt_to_dev(ru.ctx, ru.d_qsl, ru.b->qsl, ((size_t)ru.b->R + 1) * 4);
  if (ru.b->R > 0) amt_to_dev(ru.ctx, ru.d_seq, ru.b->seq_lens, (size_t)ru.b->R * 4);
  if (ru.b->swa_token_slots) {
    ru.d_swa_slots = amt_dev_alloc(ru.ctx, (size_t)(ru.b->T > 0 ? ru.b->T : 1) * 8);
    amt_to_dev(ru.ctx, ru.d_swa_slots, ru.b->swa_token_slots, (size_t)ru.b->T * 8);
  }
  upload_extra(&ru);
  for (k = 0; k < AMD_NUM_TABLES; k++) {
    const size_t bytes = (size_t)(ru.b->R > 0 ? ru.b->R : 1) * (size_t)(ru.b->cols[k] > 0 ? ru.b->cols[k] : 1) * 4;
    if (!ru.b->tables[k]) continue;
    ru.d_tables[k] = amt_dev_alloc(ru.ctx, bytes);
    amt_to_dev(ru.ctx, ru.d_tables[k], ru.b->tables[k], bytes);
  }
  ru.d_arena = amt_dev_alloc(ru.ctx, ru.bytes);
  ru.h_arena = malloc(ru.bytes);
  ru.h_expect = malloc(ru.bytes);
  ru.h_care = malloc(ru.bytes);
  cr_assert(ru.h_arena && ru.h_expect && ru.h_care);

  ncfg = amt_launch_configs(kind, &configs);
  for (c = 0; c < ncfg; c++) {
    cr_assert_eq(attnmeta_set_launch_config(ru.ctx, &configs[c].config), ATTNMETA_OK);
    ru.config = configs[c].name;
    for (ru.rank = 0; ru.rank < ru.b->world; ru.rank++) {
      run_variant(&ru, (1u << NOUT) - 1, "all");
      run_variant(&ru, DSV4_OUTS | (1u << O_ERR), "dsv4");
      run_variant(&ru, DSV4_OUTS, "dsv4_quiet");
      for (o = O_CS0; o < O_ERR; o++) {
        const int used = o >= O_CS0 && o <= O_CS3   ? o - O_CS0 < ru.b->d.ngroups
                         : o >= O_CL0 && o <= O_CL3 ? o - O_CL0 < ru.b->d.ngroups
                         : o == O_SWA || o == O_SWA_LENS ? ru.b->d.swa_width > 0
                         : o == O_IXL                    ? ru.b->d.indexer_ratio > 0
                         : o == O_C128A_PRE ? ru.b->d.c128a_width >= 0 &&
                                                  ru.b->d.c128a_mode == ATTNMETA_C128A_MIXED
                                            : ru.b->d.c128a_width >= 0;
        char name[64];
        if (!used) continue;
        snprintf(name, sizeof name, "alone_%s", out_names[o]);
        run_variant(&ru, (1u << o) | (1u << O_ERR), name);
      }
    }
  }
  /* a whole step, every product, in one graph: one kernel node */
  cr_assert_eq(attnmeta_set_launch_config(ru.ctx, NULL), ATTNMETA_OK);
  ru.config = "auto";
  for (ru.rank = 0; ru.rank < ru.b->world; ru.rank++)
    run_variant_on(&ru, (1u << NOUT) - 1, "all_graph", &graph_run);
  if (kind == ATTNMETA_BACKEND_CPU) {
    ru.rank = 0;
    for (c = 0; c < (int)(sizeof gpu_shapes / sizeof gpu_shapes[0]); c++) {
      ru.config = gpu_shapes[c].name;
      for (ru.rank = 0; ru.rank < ru.b->world; ru.rank++) {
        run_variant_on(&ru, (1u << NOUT) - 1, "all", &gpu_shapes[c]);
        run_variant_on(&ru, DSV4_OUTS | (1u << O_ERR), "dsv4", &gpu_shapes[c]);
      }
    }
  }
  cr_expect_eq(ru.reports, 0, "case=%s: %d failures (first %d shown)", kase->name, ru.reports,
               MAX_REPORTS);

  free(ru.h_arena);
  free(ru.h_expect);
  free(ru.h_care);
  amt_dev_free(ru.ctx, ru.d_arena);
  for (k = 0; k < AMD_NUM_TABLES; k++)
    if (ru.d_tables[k]) amt_dev_free(ru.ctx, ru.d_tables[k]);
  if (ru.d_swa_slots) amt_dev_free(ru.ctx, ru.d_swa_slots);
  for (k = 0; k < AMVS_MAX_INPUTS; k++)
    if (ru.d_extra[k]) amt_dev_free(ru.ctx, ru.d_extra[k]);
  amt_dev_free(ru.ctx, ru.d_seq);
  amt_dev_free(ru.ctx, ru.d_qsl);
  amd_batch_free((amd_batch *)ru.b);
  attnmeta_close(ru.ctx);
}

/* The case table itself: the data raise what each case says they do. */
Test(dsv4_cases, declared_flags) {
  int c;
  for (c = 0; c < amd_num_cases; c++) {
    amd_batch *b = amd_materialize(&amd_cases[c]);
    int32_t seen = 0, k;
    for (k = 0; k < b->world; k++) {
      amr_input in;
      amr_dsv4_input d = b->d;
      amr_dsv4_output *o;
      amd_reference_input(b, k, &in);
      o = amr_dsv4_alloc(&in, &d);
      amr_dsv4_build(&in, &d, o);
      seen |= o->group_flags[0] | o->group_flags[1] | o->group_flags[2] | o->group_flags[3] |
              o->swa_flags | o->c128a_flags;
      amr_dsv4_free(o);
    }
    cr_expect((seen & amd_cases[c].expect_flags) == amd_cases[c].expect_flags,
              "case=%s: case table error, reference raises 0x%x, case expects 0x%x",
              amd_cases[c].name, (unsigned)seen, (unsigned)amd_cases[c].expect_flags);
    amd_batch_free(b);
  }
}

/* ---- the contract's worked examples, through the reference alone ---- */

/* The reference of one request (qlen tokens, seq_len) with one group of
 * ratio 4, block 64, table [5, 7]: the compressed slots of its tokens. */
static void compressed_example(int32_t qlen, int32_t seq_len, int64_t *out) {
  static const int32_t table[] = {5, 7};
  const int32_t qsl[] = {0, qlen};
  amr_input in;
  amr_dsv4_input d;
  amr_dsv4_output *o;
  memset(&in, 0, sizeof in);
  memset(&d, 0, sizeof d);
  in.qsl = qsl;
  in.R = 1;
  in.T = in.C = qlen;
  in.seq_lens = &seq_len;
  in.world = in.interleave = 1;
  d.ngroups = 1;
  d.groups[0].table.ids = table;
  d.groups[0].table.cols = d.groups[0].table.stride = 2;
  d.groups[0].ratio = 4;
  d.groups[0].block_size = 64;
  d.swa_width = d.c128a_width = -1;
  o = amr_dsv4_alloc(&in, &d);
  amr_dsv4_build(&in, &d, o);
  memcpy(out, o->cslots[0], (size_t)qlen * sizeof *out);
  cr_expect_eq(o->group_flags[0], 0);
  amr_dsv4_free(o);
}

Test(dsv4_reference, compressed_examples) {
  static const int64_t want8[] = {-1, -1, -1, 383, -1, -1, -1, 448};
  int64_t got[40];
  int i, n = 0;
  compressed_example(8, 260, got);
  for (i = 0; i < 8; i++) cr_expect_eq(got[i], want8[i], "qlen 8 seq 260: token %d", i);
  /* seq 280, qlen 40: exactly 5 * 64 + 60..63 and 7 * 64 + 0..5, in order */
  compressed_example(40, 280, got);
  for (i = 0; i < 40; i++) {
    if (got[i] < 0) continue;
    cr_expect_eq(got[i], n < 4 ? 5 * 64 + 60 + n : 7 * 64 + (n - 4), "token %d", i);
    n++;
  }
  cr_expect_eq(n, 10);
}

Test(dsv4_reference, c128a_example) {
  /* positions 256 and 299, ratio 128, width 8192: rows [0, 1, -1, ...], lens 2 */
  static const int32_t qsl[] = {0, 1, 2}, seq[] = {257, 300};
  amr_input in;
  amr_dsv4_input d;
  amr_dsv4_output *o;
  int t, j;
  memset(&in, 0, sizeof in);
  memset(&d, 0, sizeof d);
  in.qsl = qsl;
  in.R = in.T = in.C = 2;
  in.seq_lens = seq;
  in.world = in.interleave = 1;
  d.swa_width = -1;
  d.c128a_ratio = 128;
  d.c128a_width = 8192;
  d.c128a_mode = ATTNMETA_C128A_LOCAL;
  o = amr_dsv4_alloc(&in, &d);
  amr_dsv4_build(&in, &d, o);
  for (t = 0; t < 2; t++) {
    cr_expect_eq(o->c128a_lens[t], 2);
    for (j = 0; j < 8192; j++)
      if (o->c128a[t * 8192 + j] != (j < 2 ? j : -1))
        cr_assert_fail("row %d entry %d: %d", t, j, o->c128a[t * 8192 + j]);
  }
  amr_dsv4_free(o);
}

Test(dsv4_reference, c128a_dcp_packing) {
  /* W = 2, I = 1, bs 2, table [10, 20, 30]: compressed rows 0..5 live on
   * ranks 0 1 | 0 1 | 0 1 (in blocks of bs * W = 4: 0 1 0 1 | 0 1); rank 1
   * owns 1, 3, 5 at 10*2+0, 10*2+1, 20*2+0 */
  static const int32_t qsl[] = {0, 1}, seq[] = {6 * 128}, table[] = {10, 20, 30};
  amr_input in;
  amr_dsv4_input d;
  amr_dsv4_output *o;
  amr_input_requests(&in, qsl, 1, 1, 1, seq);
  amr_input_dcp(&in, 2, 1, 1);
  memset(&d, 0, sizeof d);
  d.swa_width = -1;
  d.c128a_ratio = 128;
  d.c128a_block_size = 2;
  d.c128a_width = 8;
  d.c128a_table.ids = table;
  d.c128a_table.cols = d.c128a_table.stride = 3;
  o = amr_dsv4_alloc(&in, &d);
  amr_dsv4_build(&in, &d, o);
  cr_expect_eq(o->c128a_lens[0], 3);
  cr_expect_eq(o->c128a[0], 20);
  cr_expect_eq(o->c128a[1], 21);
  cr_expect_eq(o->c128a[2], 40);
  cr_expect_eq(o->c128a[3], -1);
  amr_dsv4_free(o);
}

Test(dsv4_reference, c128a_mixed_example) {
  /* ratio 128, bs 2, width 8, D = 1: a decode token at position 299 (table
   * row [4, 9, 13]) gets [8, 9, -1, ...] and length 2; a prefill token at
   * position 400 gets prefill row 0 = [0, 1, 2, -1, ...] and length 3; row 1
   * of c128a_rows and prefill row 1 are all -1 */
  static const int32_t qsl[] = {0, 1, 2}, seq[] = {300, 401}, table[] = {4, 9, 13, 20, 21, 22};
  static const int32_t want_rows[] = {8, 9, -1, -1, -1, -1, -1, -1,
                                      -1, -1, -1, -1, -1, -1, -1, -1};
  static const int32_t want_pre[] = {0, 1, 2, -1, -1, -1, -1, -1,
                                     -1, -1, -1, -1, -1, -1, -1, -1};
  amr_input in;
  amr_dsv4_input d;
  amr_dsv4_output *o;
  int j;
  amr_input_requests(&in, qsl, 2, 2, 2, seq);
  amr_input_dcp(&in, 1, 0, 1);
  memset(&d, 0, sizeof d);
  d.swa_width = -1;
  d.c128a_ratio = 128;
  d.c128a_block_size = 2;
  d.c128a_width = 8;
  d.c128a_mode = ATTNMETA_C128A_MIXED;
  d.c128a_num_decode = 1;
  d.c128a_table.ids = table;
  d.c128a_table.cols = d.c128a_table.stride = 3;
  o = amr_dsv4_alloc(&in, &d);
  amr_dsv4_build(&in, &d, o);
  cr_expect_eq(o->c128a_lens[0], 2);
  cr_expect_eq(o->c128a_lens[1], 3);
  for (j = 0; j < 16; j++) {
    cr_expect_eq(o->c128a[j], want_rows[j], "rows entry %d", j);
    cr_expect_eq(o->c128a_prefill[j], want_pre[j], "prefill entry %d", j);
  }
  amr_dsv4_free(o);
}
