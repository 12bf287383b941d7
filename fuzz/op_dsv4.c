// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_step's DSV4 operation: the DeepSeek-V3.2/V4 products of
 * attnmeta_build_step (contract sections 5, 7, 8) on the CPU backend
 * against the naive reference of conformance/generator/reference_dsv4.c.
 *
 * The input bytes decide a step (R requests, T tokens, capacity C, DCP W / k
 * / I), up to four compressed groups, the SWA rows and the C128A rows (each
 * with its own table, sizes, strides, misalignment and mode, C128A's mixed
 * mode with its decode-token count and second table included), the
 * indexer's compressed lengths (section 5a: ratio, mode), the SWA rows'
 * token slots (negative slots among them), the device data (well formed,
 * or hostile: raw boundaries, negative and huge lengths, negative and huge
 * block ids, slots at the INT64 limits) and an emulated GPU launch shape.
 *
 * Checked on every input:
 *  - memory safety: inputs are exact-size allocations, outputs sit between
 *    poisoned guards that must stay intact, row-stride gaps stay poisoned,
 *    and the sanitizers watch every access and every arithmetic operation;
 *  - well-formed boundaries: every output and the error word equal the
 *    reference; otherwise the tails [T, C) and the compressed lengths (the
 *    values the contract defines for any data) do;
 *  - the kernel body run for the emulated GPU shape (lanes x groups threads
 *    a block, several blocks, every thread in turn) gives the same bytes as
 *    the CPU backend.
 *
 * A quarter of the inputs break one host argument of the DSV4 products
 * instead (a ratio, block size, mode, window, width, stride, table, an
 * alignment, the decode-token count, the prefill rows outside mixed mode,
 * an output placed on an input or another output, seq_lens missing, launch
 * flags): the call must return a status the independent rules model
 * (fz_step_rules) allows, and a refused call writes nothing.
 *
 * Drawn after all of that (decode_pcp, when no argument was broken): PCP's
 * logical slots (section 5b) for the groups' slots, with negative and
 * INT64-extreme slots and positions; the slots are checked for any
 * boundaries (no request is read). A quarter of those steps, and every one
 * with several DCP ranks, break one of 5b's host rules instead (positions
 * missing, a logical block size below 1 or not ratio x block size, DCP, an
 * array misaligned, a group's slots over an array).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_step_kernel.h"    /* the kernel body, for the emulated GPU shape */
#include "am_step_translate.h" /* the host's parameters of a step */
#include "attnmeta/attnmeta.h"
#include "fuzz_ops.h"
#include "fuzz_util.h"
#include "reference.h"
#include "reference_dsv4.h"

#define MAX_R 256 /* requests: up to 12 most of the time, sometimes up to 256 */
#define NFAM 6 /* groups 0..3, SWA, C128A */

typedef struct table {
  int32_t cols;
  int64_t stride;
  int32_t *ids; /* [rows used: (R - 1) * stride + cols] */
  int64_t n;
} table;

typedef struct scenario {
  int32_t R, T, C, W, k, I;
  int32_t qsl[MAX_R + 1], seq[MAX_R];
  int ngroups;
  int32_t ratio[4], gbs[4];
  int want_slots[4], want_lens[4];
  table tab[NFAM];
  int swa, swa_rows, swa_lens;
  int32_t swa_bs, swa_window, swa_width, swa_mode;
  int64_t swa_stride;
  int c128a, c128a_rows, c128a_lens;
  int32_t c_ratio, c_bs, c_width, c_mode;
  int64_t c_stride;
  int c128a_prefill;   /* mixed mode: the prefill tokens' table wanted */
  int32_t c_decode;    /* mixed mode: D, the decode tokens */
  int64_t c_pstride;
  int indexer;         /* section 5a's lengths wanted */
  int32_t ix_ratio, ix_mode;
  int64_t *swa_slots;  /* [T] the SWA rows' token slots, or NULL */
  int shift; /* rows' misalignment, in int32 */
  uint32_t lanes, groups, grid;
  int vector;
  int hostile;
  /* section 5b, drawn after the rest: the groups' slots from PCP's logical
   * slot mapping */
  int pcp;
  int32_t lbs;
  int64_t *pcp_slots, *pcp_pos; /* [T] each */
} scenario;

/* Outputs: group slots and lengths, SWA rows and lengths, C128A rows and
 * lengths, error word, the indexer's lengths, mixed mode's prefill rows. */
enum {
  B_SLOTS, B_LENS = 4, B_SWA = 8, B_SWA_LENS, B_C128A, B_C128A_LENS, B_ERR, B_INDEXER,
  B_C128A_PREFILL, NBUF
};
#define NIN 11 /* qsl, seq_lens, the six tables, the SWA token slots, PCP's two arrays */

static int32_t pick_block(fz_reader *rd, int32_t I, int W) {
  static const int32_t sizes[] = {1, 2, 4, 8, 16, 64};
  int32_t bs = sizes[fz_range(rd, 0, 5)];
  if (W > 1 && bs % I) bs = I * (int32_t)fz_range(rd, 1, 4);
  return bs;
}

static void pick_table(fz_reader *rd, scenario *sc, table *t, int hostile) {
  int64_t i;
  t->cols = (int32_t)fz_range(rd, 0, 40);
  t->stride = t->cols + fz_range(rd, 0, 3);
  t->n = t->cols == 0 ? 0 : sc->R > 0 ? (int64_t)(sc->R - 1) * t->stride + t->cols : 1;
  t->ids = calloc((size_t)(t->n > 0 ? t->n : 1), sizeof(int32_t));
  if (!t->ids) fz_fail("out of memory");
  for (i = 0; i < t->n; i++) {
    t->ids[i] = (int32_t)fz_rand_range(rd, 0, 5000);
    if (hostile && fz_rand_range(rd, 0, 15) == 0) t->ids[i] = fz_edge32(rd);
  }
}

/* The members 0.3.0 added, drawn after the others (the committed seeds
 * keep their meaning up to here): the indexer's lengths, the SWA rows'
 * token slots, C128A's mixed mode. */
static void decode_0_3(fz_reader *rd, scenario *sc, int hostile) {
  static const int32_t ix_ratios[] = {1, 2, 4, 4, 3, 128};
  int64_t t;
  sc->indexer = fz_chance(rd, 1, 2);
  if (sc->indexer) {
    sc->ix_ratio = fz_chance(rd, 7, 8) ? ix_ratios[fz_range(rd, 0, 5)] : (int32_t)fz_range(rd, 1, INT32_MAX);
    sc->ix_mode = (int32_t)fz_range(rd, 0, 1);
  }
  if (sc->swa && fz_chance(rd, 1, 2)) {
    sc->swa_slots = calloc((size_t)(sc->T > 0 ? sc->T : 1), sizeof(int64_t));
    if (!sc->swa_slots) fz_fail("out of memory");
    for (t = 0; t < sc->T; t++) {
      const uint64_t u = fz_rand(rd) % 16;
      sc->swa_slots[t] = u < 4 ? -1 : fz_rand_range(rd, 0, 1 << 20);
      if (hostile && u == 4) sc->swa_slots[t] = fz_rand(rd) % 2 ? INT64_MIN : INT64_MAX;
      if (hostile && u == 5) sc->swa_slots[t] = -(int64_t)fz_rand_range(rd, 2, INT32_MAX);
    }
  }
  if (sc->c128a && fz_chance(rd, 1, 2)) {
    sc->c_mode = ATTNMETA_C128A_MIXED;
    switch (fz_range(rd, 0, 3)) {
      case 0: sc->c_decode = 0; break;
      case 1: sc->c_decode = sc->T; break;
      default: sc->c_decode = (int32_t)fz_range(rd, 0, sc->T); break;
    }
    sc->c128a_prefill = fz_chance(rd, 3, 4);
    sc->c_pstride = sc->c_width + fz_range(rd, 0, 4);
    if (!sc->c128a_rows && !sc->c128a_lens && !sc->c128a_prefill) sc->c128a_prefill = 1;
  }
}

static void decode(fz_reader *rd, scenario *sc) {
  static const int32_t ratios[] = {1, 2, 4, 32, 128, 3};
  const int hostile = fz_chance(rd, 1, 4);
  int32_t r, g;
  memset(sc, 0, sizeof *sc);
  sc->hostile = hostile;
  sc->R = (int32_t)fz_range(rd, 0, fz_chance(rd, 1, 8) ? MAX_R : 12);
  for (r = 0; r < sc->R; r++) {
    const int32_t q = (int32_t)fz_range(rd, 0, 6);
    sc->qsl[r + 1] = sc->qsl[r] + q;
    sc->seq[r] = q + (int32_t)fz_range(rd, 0, 3000);
  }
  sc->T = (sc->R > 0 ? sc->qsl[sc->R] : 0) + (int32_t)fz_range(rd, 0, 5);
  sc->C = sc->T + (int32_t)fz_range(rd, 0, 4);
  if (hostile) { /* raw boundaries and lengths */
    for (r = 0; r <= sc->R; r++)
      if (fz_chance(rd, 1, 3)) sc->qsl[r] = fz_chance(rd, 1, 2) ? fz_edge32(rd) : (int32_t)fz_range(rd, -3, 40);
    for (r = 0; r < sc->R; r++)
      if (fz_chance(rd, 1, 3)) sc->seq[r] = fz_edge32(rd);
  }
  sc->W = fz_chance(rd, 1, 3) ? (int32_t)fz_range(rd, 2, 4) : 1;
  sc->k = (int32_t)fz_range(rd, 0, sc->W - 1);
  sc->I = sc->W > 1 ? (int32_t)fz_range(rd, 1, 3) : 1;
  sc->ngroups = (int)fz_range(rd, 0, 4);
  for (g = 0; g < sc->ngroups; g++) {
    sc->ratio[g] = ratios[fz_range(rd, 0, 5)];
    sc->gbs[g] = pick_block(rd, sc->I, sc->W);
    sc->want_slots[g] = fz_chance(rd, 3, 4);
    sc->want_lens[g] = !sc->want_slots[g] || fz_chance(rd, 1, 2);
    pick_table(rd, sc, &sc->tab[g], hostile);
  }
  sc->swa = fz_chance(rd, 2, 3);
  if (sc->swa) {
    sc->swa_rows = fz_chance(rd, 3, 4);
    sc->swa_lens = !sc->swa_rows || fz_chance(rd, 1, 2);
    sc->swa_bs = pick_block(rd, 1, 1);
    sc->swa_window = (int32_t)fz_range(rd, 1, 24);
    sc->swa_width = sc->swa_window + (int32_t)fz_range(rd, 0, 9);
    sc->swa_mode = (int32_t)fz_range(rd, 0, 1);
    sc->swa_stride = sc->swa_width + fz_range(rd, 0, 4);
    pick_table(rd, sc, &sc->tab[4], hostile);
  }
  sc->c128a = fz_chance(rd, 2, 3);
  if (sc->c128a) {
    sc->c128a_rows = fz_chance(rd, 3, 4);
    sc->c128a_lens = !sc->c128a_rows || fz_chance(rd, 1, 2);
    sc->c_ratio = ratios[fz_range(rd, 0, 5)];
    sc->c_bs = pick_block(rd, sc->I, sc->W);
    sc->c_width = (int32_t)fz_range(rd, 0, 70);
    sc->c_mode = (int32_t)fz_range(rd, 0, 1);
    sc->c_stride = sc->c_width + fz_range(rd, 0, 4);
    pick_table(rd, sc, &sc->tab[5], hostile);
  }
  sc->shift = (int)fz_range(rd, 0, 1);
  sc->lanes = (uint32_t)fz_range(rd, 1, 40);
  sc->groups = (uint32_t)fz_range(rd, 1, 4);
  sc->grid = (uint32_t)fz_range(rd, 1, 3);
  sc->vector = fz_chance(rd, 1, 2);
  decode_0_3(rd, sc, hostile);
}

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    const int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/* Section 5b's inputs, drawn after every other choice (the committed seeds
 * keep their meaning): a logical block size LBS that every group's ratio
 * divides (a multiple of their least common multiple, small or up to
 * INT32_MAX), each group's block size set to LBS / ratio as the host
 * requires of the groups with slots, the logical slots (negative ones, hostile: the INT64
 * extremes) and the positions (mostly p + 1 a multiple of a ratio, any
 * sign; hostile: the INT64 extremes and their neighbours). Only for one
 * DCP rank: with several the host refuses (a broken argument below). */
static void decode_pcp(fz_reader *rd, scenario *sc) {
  int64_t lcm = 1, t;
  int g;
  if (!fz_chance(rd, 1, 2)) return;
  /* every group, slots wanted or not: the reference computes every
   * group's slots, which fit int64 only under the host's rule */
  for (g = 0; g < sc->ngroups; g++) lcm = lcm / gcd64(lcm, sc->ratio[g]) * sc->ratio[g];
  sc->pcp = 1;
  sc->lbs = (int32_t)(lcm * (fz_chance(rd, 3, 4) ? fz_range(rd, 1, 64) : fz_range(rd, 1, INT32_MAX / lcm)));
  for (g = 0; g < sc->ngroups; g++) sc->gbs[g] = sc->lbs / sc->ratio[g];
  sc->pcp_slots = calloc((size_t)(sc->T > 0 ? sc->T : 1), sizeof(int64_t));
  sc->pcp_pos = calloc((size_t)(sc->T > 0 ? sc->T : 1), sizeof(int64_t));
  if (!sc->pcp_slots || !sc->pcp_pos) fz_fail("out of memory");
  for (t = 0; t < sc->T; t++) {
    const uint64_t u = fz_rand(rd) % 16, v = fz_rand(rd) % 16;
    const int64_t ratio = sc->ngroups ? sc->ratio[fz_rand(rd) % (uint64_t)sc->ngroups] : 4;
    sc->pcp_slots[t] = u < 3 ? -fz_rand_range(rd, 1, 3) : fz_rand_range(rd, 0, (int64_t)1 << 40);
    if (sc->hostile && u == 3) sc->pcp_slots[t] = fz_rand(rd) % 2 ? INT64_MIN : INT64_MAX;
    sc->pcp_pos[t] = v < 10 ? ratio * fz_rand_range(rd, -4, 1 << 20) - 1 : fz_rand_range(rd, -8, 1 << 20);
    if (sc->hostile && v >= 14) {
      static const int64_t edges[] = {INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1, -1};
      sc->pcp_pos[t] = edges[fz_rand(rd) % 5];
    }
  }
}

typedef struct outputs {
  fz_buf b[NBUF];
} outputs;

static void outputs_alloc(outputs *o, const scenario *sc) {
  int g;
  memset(o, 0, sizeof *o);
  for (g = 0; g < 4; g++) { /* groups past ngroups: empty buffers, never passed */
    fz_buf_alloc(&o->b[B_SLOTS + g], 8, g < sc->ngroups && sc->want_slots[g] ? sc->C : 0, 0);
    fz_buf_alloc(&o->b[B_LENS + g], 4, g < sc->ngroups && sc->want_lens[g] ? sc->R : 0, 0);
  }
  fz_buf_alloc(&o->b[B_SWA], 4, sc->swa_rows ? sc->T * sc->swa_stride : 0, 4 * (size_t)sc->shift);
  fz_buf_alloc(&o->b[B_SWA_LENS], 4, sc->swa_lens ? sc->C : 0, 0);
  fz_buf_alloc(&o->b[B_C128A], 4, sc->c128a_rows ? sc->T * sc->c_stride : 0, 4 * (size_t)sc->shift);
  fz_buf_alloc(&o->b[B_C128A_LENS], 4, sc->c128a_lens ? sc->C : 0, 0);
  fz_buf_alloc(&o->b[B_ERR], 4, 1, 0);
  fz_buf_alloc(&o->b[B_INDEXER], 4, sc->indexer ? sc->C : 0, 0);
  fz_buf_alloc(&o->b[B_C128A_PREFILL], 4, sc->c128a_prefill ? sc->T * sc->c_pstride : 0,
               4 * (size_t)sc->shift);
  *(int32_t *)o->b[B_ERR].data = 0;
}

static void outputs_free(outputs *o) {
  int i;
  for (i = 0; i < NBUF; i++) fz_buf_free(&o->b[i]);
}

static void fill_step(attnmeta_step *s, const scenario *sc, fz_in *in, outputs *o) {
  int g;
  attnmeta_step_init(s);
  s->query_start_loc = in[0].data;
  s->num_reqs = sc->R;
  s->num_tokens = sc->T;
  s->capacity = sc->C;
  s->seq_lens = in[1].data;
  s->dcp_world_size = sc->W;
  s->dcp_rank = sc->k;
  s->dcp_interleave = sc->I;
  s->error_word = o->b[B_ERR].data;
  for (g = 0; g < sc->ngroups; g++) {
    attnmeta_compressed_group *cg = &s->compressed_groups[g];
    cg->block_table = sc->tab[g].n ? in[2 + g].data : NULL;
    cg->block_table_cols = sc->tab[g].cols;
    cg->block_table_stride = sc->tab[g].stride;
    cg->ratio = sc->ratio[g];
    cg->block_size = sc->gbs[g];
    if (sc->want_slots[g]) cg->slot_mapping = o->b[B_SLOTS + g].data;
    if (sc->want_lens[g]) cg->seq_lens_out = o->b[B_LENS + g].data;
  }
  if (sc->swa) {
    s->swa_block_table = sc->tab[4].n ? in[6].data : NULL;
    s->swa_block_table_cols = sc->tab[4].cols;
    s->swa_block_table_stride = sc->tab[4].stride;
    s->swa_block_size = sc->swa_bs;
    s->swa_window = sc->swa_window;
    s->swa_width = sc->swa_width;
    s->swa_mode = sc->swa_mode;
    s->swa_indices_stride = sc->swa_stride;
    if (sc->swa_rows) s->swa_indices = o->b[B_SWA].data;
    if (sc->swa_lens) s->swa_lens = o->b[B_SWA_LENS].data;
    if (sc->swa_slots) s->swa_token_slots = (const int64_t *)(const void *)in[8].data;
  }
  if (sc->c128a) {
    s->c128a_block_table = sc->tab[5].n ? in[7].data : NULL;
    s->c128a_block_table_cols = sc->tab[5].cols;
    s->c128a_block_table_stride = sc->tab[5].stride;
    s->c128a_ratio = sc->c_ratio;
    s->c128a_block_size = sc->c_bs;
    s->c128a_width = sc->c_width;
    s->c128a_mode = sc->c_mode;
    s->c128a_rows_stride = sc->c_stride;
    if (sc->c128a_rows) s->c128a_rows = o->b[B_C128A].data;
    if (sc->c128a_lens) s->c128a_lens = o->b[B_C128A_LENS].data;
    s->c128a_num_decode_tokens = sc->c_decode;
    s->c128a_prefill_rows_stride = sc->c_pstride;
    if (sc->c128a_prefill) s->c128a_prefill_rows = o->b[B_C128A_PREFILL].data;
  }
  if (sc->indexer) {
    s->indexer_lens_out = o->b[B_INDEXER].data;
    s->indexer_ratio = sc->ix_ratio;
    s->indexer_mode = sc->ix_mode;
  }
  if (sc->pcp) {
    s->pcp_logical_slots = (const int64_t *)(const void *)in[9].data;
    s->pcp_positions = (const int64_t *)(const void *)in[10].data;
    s->pcp_logical_block_size = sc->lbs;
  }
}

/* Breaks one of section 5b's host rules: 2 when a group's slots were moved
 * onto a PCP array, 1 for another rule, 0 when there is no group with
 * slots (the rules then do not apply). */
static int break_pcp(fz_reader *rd, attnmeta_step *s) {
  attnmeta_compressed_group *grp = NULL;
  int g;
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS && !grp; g++)
    if (s->compressed_groups[g].slot_mapping) grp = &s->compressed_groups[g];
  if (!grp) return 0;
  switch (fz_range(rd, 0, 7)) {
    case 0: s->pcp_positions = NULL; return 1;
    case 1: s->pcp_logical_block_size = fz_chance(rd, 1, 2) ? (int32_t)fz_range(rd, -1, 0) : INT32_MIN; return 1;
    case 2: /* LBS no longer a multiple of the ratio, or not LBS / ratio */
      if (grp->ratio > 1 && fz_chance(rd, 1, 2)) s->pcp_logical_block_size += 1;
      else grp->block_size += grp->block_size < INT32_MAX ? 1 : -1;
      return 1;
    case 3: s->dcp_world_size = (int32_t)fz_range(rd, 2, 4); s->dcp_interleave = 1; return 1;
    case 4: s->pcp_logical_slots = (const int64_t *)(const void *)((const char *)s->pcp_logical_slots + 4); return 1;
    case 5: s->pcp_positions = (const int64_t *)(const void *)((const char *)s->pcp_positions + 4); return 1;
    default: /* the group's slots over one of the arrays */
      grp->slot_mapping = (int64_t *)(uintptr_t)((uintptr_t)(fz_chance(rd, 1, 2) ? s->pcp_logical_slots
                                                                                 : s->pcp_positions) +
                                                 8 * (uintptr_t)fz_range(rd, 0, 2));
      return 2;
  }
}

/* The kernel body for the emulated GPU shape, every thread in turn. */
static void emulate(const attnmeta_step *s, const scenario *sc) {
  am_step_params p = am_params_of(s);
  int32_t stage[1];
  uint32_t block, t;
  p.swa.vector = sc->vector && p.swa.out && (uintptr_t)p.swa.out % 16 == 0 && p.swa.out_stride % 4 == 0;
  p.c128a.vector = sc->vector && p.c128a.out && (uintptr_t)p.c128a.out % 16 == 0 &&
                   p.c128a.out_stride % 4 == 0;
  p.c128a.vector2 = sc->vector && p.c128a.out2 && (uintptr_t)p.c128a.out2 % 16 == 0 &&
                    p.c128a.out2_stride % 4 == 0;
  am_pick_guess(p.num_reqs, p.num_tokens, &p.guess_mul, &p.guess_shift);
  am_pick_speculation(&p);
  p.variant = am_pick_variant(&p);
  am_pick_tail(&p);
  for (block = 0; block < sc->grid; ++block)
    for (t = 0; t < sc->lanes * sc->groups; ++t)
      am_step_body(&p, am_make_thread(block, sc->grid, t % sc->lanes, sc->lanes, t / sc->lanes, sc->groups),
                   stage, p.variant);
}

static void expect_eq(const char *what, int64_t i, int64_t want, int64_t got) {
  FZ_CHECK(want == got, "%s[%lld]: expected %lld, got %lld", what, (long long)i, (long long)want,
           (long long)got);
}

/* The row buffer's rows against the reference's dense rows, gaps poisoned. */
static void check_rows(const char *what, const fz_buf *b, const int32_t *ref, int32_t T,
                       int32_t width, int64_t stride, int exact) {
  const int32_t *row = b->data;
  int64_t t, j;
  for (t = 0; t < T; t++)
    for (j = 0; j < stride; j++) {
      if (j >= width) expect_eq(what, t * stride + j, FZ_POISON32, row[t * stride + j]);
      else if (exact) expect_eq(what, t * stride + j, ref[t * width + j], row[t * stride + j]);
    }
}

/* Breaks one host argument of the step (see the file comment): 2 when an
 * output was moved onto another buffer, 1 for another argument, 0 when the
 * scenario has nothing of that kind to break. */
static int break_host_argument(fz_reader *rd, attnmeta_step *s, fz_in *in) {
  attnmeta_compressed_group *grp = &s->compressed_groups[fz_range(rd, 0, 3)];
  const int64_t R = s->num_reqs > 1 ? s->num_reqs : 2;
  int32_t *out32[] = {grp->seq_lens_out, s->swa_indices, s->swa_lens, s->c128a_rows,
                      s->c128a_lens, s->indexer_lens_out, s->c128a_prefill_rows};
  char *on[] = {(char *)in[0].data, (char *)in[1].data, (char *)in[2].data,
                (char *)s->swa_indices, (char *)s->c128a_lens, (char *)grp->slot_mapping,
                (char *)s->error_word, (char *)s->swa_token_slots, (char *)s->indexer_lens_out,
                (char *)s->c128a_prefill_rows};
  char *target;
  int32_t *out;
  const int group_on = grp->slot_mapping || grp->seq_lens_out, slots_on = grp->slot_mapping != NULL;
  const int swa_on = s->swa_indices || s->swa_lens, c_on = s->c128a_rows || s->c128a_lens;
  const int c_global = c_on && s->c128a_mode == ATTNMETA_C128A_GLOBAL;
  const int mixed = s->c128a_mode == ATTNMETA_C128A_MIXED && (c_on || s->c128a_prefill_rows);
  switch (fz_range(rd, 0, 31)) {
#define ONLY_IF(cond) \
  if (!(cond)) return 0
    case 0: ONLY_IF(group_on); grp->ratio = fz_chance(rd, 1, 2) ? 0 : fz_edge32(rd); return 1;
    case 1: ONLY_IF(slots_on);
            grp->block_size = fz_chance(rd, 1, 2) ? (int32_t)fz_range(rd, -2, 0) : s->dcp_interleave + 1;
            return 1;
    case 2: ONLY_IF(slots_on); grp->block_table_cols = fz_chance(rd, 1, 2) ? -1 : fz_edge32(rd); return 1;
    case 3: ONLY_IF(slots_on); grp->block_table_stride = grp->block_table_cols - fz_range(rd, 1, 3); return 1;
    case 4: ONLY_IF(slots_on && s->num_reqs > 0);
            grp->block_table_stride = fz_chance(rd, 1, 2) ? INT64_MAX / 8 / R + 1 : INT64_MAX / 4 / (R - 1) + 1;
            return 1;
    case 5: ONLY_IF(slots_on);
            if (grp->block_table_cols < 1) grp->block_table_cols = 1;
            grp->block_table = fz_chance(rd, 1, 2) ? NULL
                                                   : (const int32_t *)(const void *)((const char *)in[2].data + 2);
            return 1;
    case 6: ONLY_IF(slots_on); grp->slot_mapping = (int64_t *)(void *)((char *)grp->slot_mapping + 4); return 1;
    case 7: ONLY_IF(grp->seq_lens_out);
            grp->seq_lens_out = (int32_t *)(void *)((char *)grp->seq_lens_out + 1 + fz_range(rd, 0, 2));
            return 1;
    case 8: ONLY_IF(swa_on); s->swa_mode = fz_chance(rd, 1, 2) ? 2 : fz_edge32(rd); return 1;
    case 9: ONLY_IF(swa_on); s->swa_window = (int32_t)fz_range(rd, -1, 0); return 1;
    case 10: ONLY_IF(swa_on); s->swa_width = s->swa_window - (int32_t)fz_range(rd, 1, 3); return 1;
    case 11: ONLY_IF(s->swa_indices);
             s->swa_indices_stride = fz_chance(rd, 1, 2) ? s->swa_width - fz_range(rd, 1, 2) : INT64_MAX / 4;
             return 1;
    case 12: ONLY_IF(s->swa_indices); s->swa_block_size = (int32_t)fz_range(rd, -1, 0); return 1;
    case 13: ONLY_IF(s->swa_indices); s->swa_block_table_cols = -1; return 1;
    case 14: ONLY_IF(c_on); s->c128a_mode = fz_chance(rd, 1, 2) ? 3 : fz_edge32(rd); return 1;
    case 15: ONLY_IF(c_on); s->c128a_ratio = (int32_t)fz_range(rd, -1, 0); return 1;
    case 16: ONLY_IF(c_on); s->c128a_width = (int32_t)fz_range(rd, -3, -1); return 1;
    case 17: ONLY_IF(s->c128a_rows && s->c128a_width > 0);
             s->c128a_rows_stride = fz_chance(rd, 1, 2) ? s->c128a_width - 1 : INT64_MAX / 4;
             return 1;
    case 18: ONLY_IF(c_global);
             s->c128a_block_size = s->dcp_world_size > 1 && s->dcp_interleave > 1 ? s->dcp_interleave + 1 : 0;
             return 1;
    case 19: ONLY_IF(s->c128a_rows); s->c128a_rows = (int32_t *)(void *)((char *)s->c128a_rows + 2); return 1;
    case 20: s->seq_lens = NULL; return 1;
    case 21: s->launch_flags = fz_chance(rd, 1, 2) ? 2u : (uint32_t)fz_edge32(rd) | 2u; return 1;
    /* the members 0.3.0 added */
    case 22: ONLY_IF(s->indexer_lens_out);
             s->indexer_ratio = fz_chance(rd, 1, 2) ? (int32_t)fz_range(rd, -1, 0) : INT32_MIN;
             return 1;
    case 23: ONLY_IF(s->indexer_lens_out);
             s->indexer_mode = fz_chance(rd, 1, 2) ? 2 : fz_edge32(rd) | 2;
             return 1;
    case 24: ONLY_IF(s->indexer_lens_out);
             s->indexer_lens_out = (int32_t *)(void *)((char *)s->indexer_lens_out + 1 + fz_range(rd, 0, 2));
             return 1;
    case 25: ONLY_IF(swa_on && s->swa_token_slots);
             s->swa_token_slots = (const int64_t *)(const void *)((const char *)s->swa_token_slots + 4);
             return 1;
    case 26: ONLY_IF(mixed);
             s->c128a_num_decode_tokens = fz_chance(rd, 1, 2) ? s->num_tokens + 1 : -1 - (int32_t)fz_range(rd, 0, 2);
             return 1;
    case 27: ONLY_IF(mixed);
             s->c128a_num_decode_tokens = fz_chance(rd, 1, 2) ? INT32_MAX : INT32_MIN;
             return 1;
    case 28: ONLY_IF(s->c128a_prefill_rows && s->c128a_width > 0);
             s->c128a_prefill_rows_stride = fz_chance(rd, 1, 2) ? s->c128a_width - 1 : INT64_MAX / 4;
             return 1;
    case 29: ONLY_IF(s->c128a_prefill_rows);
             s->c128a_prefill_rows = (int32_t *)(void *)((char *)s->c128a_prefill_rows + 2);
             return 1;
    case 30: ONLY_IF(s->c128a_prefill_rows); /* another mode than mixed */
             s->c128a_mode = (int32_t)fz_range(rd, 0, 1);
             return 1;
#undef ONLY_IF
    default: /* an output on an input or another output, a few elements off */
      out = out32[fz_range(rd, 0, 6)];
      target = on[fz_range(rd, 0, 9)];
      if (!out || !target || target == (char *)out) return 0; /* not onto itself */
      target += 4 * fz_range(rd, -2, 2);
      if (out == grp->seq_lens_out) grp->seq_lens_out = (int32_t *)(void *)target;
      else if (out == s->swa_indices) s->swa_indices = (int32_t *)(void *)target;
      else if (out == s->swa_lens) s->swa_lens = (int32_t *)(void *)target;
      else if (out == s->c128a_rows) s->c128a_rows = (int32_t *)(void *)target;
      else if (out == s->c128a_lens) s->c128a_lens = (int32_t *)(void *)target;
      else if (out == s->indexer_lens_out) s->indexer_lens_out = (int32_t *)(void *)target;
      else s->c128a_prefill_rows = (int32_t *)(void *)target;
      return 2;
  }
}

/* The call on a step with a broken argument: a status the rules allow; a
 * refusal leaves every output as it was (poisoned; the error word 0). An
 * output moved next to another buffer (`moved`) whose bytes happen not to
 * meet it is not run: it would write outside every allocation. */
static void run_broken(attnmeta_context *ctx, const attnmeta_step *s, const outputs *o,
                       int moved) {
  uint32_t required, optional;
  attnmeta_status st;
  int i;
  fz_step_rules(s, &required, &optional);
  if (moved && !required) return;
  st = attnmeta_build_step(ctx, s, NULL);
  FZ_CHECK(fz_message_ok(attnmeta_last_error(ctx), 512), "last error is not terminated");
  if (required)
    FZ_CHECK(st != ATTNMETA_OK && ((1u << (unsigned)st) & (required | optional)),
             "a broken DSV4 argument: status %d (%s), the rules allow 0x%x: %s", (int)st,
             attnmeta_status_string(st), required | optional, attnmeta_last_error(ctx));
  else
    FZ_CHECK(st == ATTNMETA_OK || ((1u << (unsigned)st) & optional),
             "a DSV4 step the rules allow: status %d (%s): %s", (int)st,
             attnmeta_status_string(st), attnmeta_last_error(ctx));
  if (st == ATTNMETA_OK) return; /* the outputs of a changed step: guards only */
  FZ_CHECK(attnmeta_last_error(ctx)[0] != '\0', "a refused call left no message");
  for (i = 0; i < NBUF; i++)
    if (i != B_ERR)
      FZ_CHECK(fz_buf_untouched(&o->b[i]), "buffer %d written by a refused call (%s)", i,
               attnmeta_status_string(st));
  FZ_CHECK(*(const int32_t *)o->b[B_ERR].data == 0, "error word written by a refused call");
}

void fz_op_dsv4(fz_reader *rd, attnmeta_context *ctx) {
  scenario sc;
  fz_in in[NIN];
  outputs o, e;
  attnmeta_step s;
  attnmeta_status st;
  amr_input ri;
  amr_output *p1;
  amr_dsv4_input di;
  amr_dsv4_output *ref;
  int32_t flags, req_flags, got;
  int i, g, wf, broken;
  int64_t t;

  decode(rd, &sc);
  memset(in, 0, sizeof in);
  fz_in_alloc(&in[0], sc.qsl, sc.R + 1, 0);
  fz_in_alloc(&in[1], sc.seq, sc.R, 0);
  for (i = 0; i < NFAM; i++) fz_in_alloc(&in[2 + i], sc.tab[i].ids, sc.tab[i].n, 0);
  /* int64 slots as int32 pairs: the allocation is exact and 16-byte aligned */
  fz_in_alloc(&in[8], (const int32_t *)(const void *)sc.swa_slots, sc.swa_slots ? 2 * (int64_t)sc.T : 0, 0);
  outputs_alloc(&o, &sc);
  fill_step(&s, &sc, in, &o);
  broken = fz_chance(rd, 1, 4) ? break_host_argument(rd, &s, in) : 0;
  if (!broken) { /* section 5b, drawn after the rest */
    decode_pcp(rd, &sc);
    fz_in_alloc(&in[9], (const int32_t *)(const void *)sc.pcp_slots, sc.pcp ? 2 * (int64_t)sc.T : 0, 0);
    fz_in_alloc(&in[10], (const int32_t *)(const void *)sc.pcp_pos, sc.pcp ? 2 * (int64_t)sc.T : 0, 0);
    fill_step(&s, &sc, in, &o);
    if (sc.pcp && sc.W > 1) { /* several ranks: refused once a group's slots are wanted */
      for (g = 0; g < sc.ngroups; g++) broken |= sc.want_slots[g];
    } else if (sc.pcp && fz_chance(rd, 1, 4)) {
      broken = break_pcp(rd, &s);
    }
  }
  if (broken) {
    run_broken(ctx, &s, &o, broken == 2);
    for (i = 0; i < NBUF; i++)
      FZ_CHECK(fz_buf_guards_intact(&o.b[i]), "buffer %d: guard written", i);
    outputs_free(&o);
    for (i = 0; i < NIN; i++) fz_in_free(&in[i]);
    for (i = 0; i < NFAM; i++) free(sc.tab[i].ids);
    free(sc.swa_slots);
    free(sc.pcp_slots);
    free(sc.pcp_pos);
    return;
  }
  st = attnmeta_build_step(ctx, &s, NULL);
  FZ_CHECK(st == ATTNMETA_OK, "attnmeta_build_step: %s (%s)", attnmeta_status_string(st),
           attnmeta_last_error(ctx));

  /* the reference */
  amr_input_requests(&ri, sc.qsl, sc.R, sc.T, sc.C, sc.seq);
  amr_input_table(&ri, NULL, 0, 0, 1);
  amr_input_dcp(&ri, sc.W, sc.k, sc.I);
  p1 = amr_alloc(&ri);
  amr_build(&ri, p1);
  wf = p1->well_formed;
  memset(&di, 0, sizeof di);
  di.ngroups = sc.ngroups;
  for (g = 0; g < sc.ngroups; g++) {
    di.groups[g].table.ids = sc.tab[g].ids;
    di.groups[g].table.cols = sc.tab[g].cols;
    di.groups[g].table.stride = sc.tab[g].stride;
    di.groups[g].ratio = sc.ratio[g];
    di.groups[g].block_size = sc.gbs[g];
  }
  di.swa_width = sc.swa ? sc.swa_width : -1;
  di.swa_table.ids = sc.tab[4].ids;
  di.swa_table.cols = sc.tab[4].cols;
  di.swa_table.stride = sc.tab[4].stride;
  di.swa_block_size = sc.swa_bs;
  di.swa_window = sc.swa_window;
  di.swa_mode = sc.swa_mode;
  di.c128a_width = sc.c128a ? sc.c_width : -1;
  di.c128a_table.ids = sc.tab[5].ids;
  di.c128a_table.cols = sc.tab[5].cols;
  di.c128a_table.stride = sc.tab[5].stride;
  di.c128a_ratio = sc.c_ratio;
  di.c128a_block_size = sc.c_bs;
  di.c128a_mode = sc.c_mode;
  di.c128a_num_decode = sc.c_decode;
  di.indexer_ratio = sc.indexer ? sc.ix_ratio : 0;
  di.indexer_mode = sc.ix_mode;
  di.swa_token_slots = sc.swa_slots;
  if (sc.pcp) di.step = &s; /* section 5b's members by their names */
  ref = amr_dsv4_alloc(&ri, &di);
  amr_dsv4_build(&ri, &di, ref);

  /* guards everywhere; values where the contract defines them */
  for (i = 0; i < NBUF; i++) FZ_CHECK(fz_buf_guards_intact(&o.b[i]), "buffer %d: guard written", i);
  for (g = 0; g < sc.ngroups; g++) {
    const int64_t *slots = o.b[B_SLOTS + g].data;
    const int32_t *lens = o.b[B_LENS + g].data;
    for (t = 0; sc.want_slots[g] && t < sc.C; t++)
      if (wf || t >= sc.T || sc.pcp) /* 5b's slots: defined for any boundaries */
        expect_eq("group slot", t, ref->cslots[g][t], slots[t]);
    for (t = 0; sc.want_lens[g] && t < sc.R; t++) expect_eq("group lens", t, ref->clens[g][t], lens[t]);
  }
  for (t = 0; sc.swa_lens && t < sc.C; t++)
    if (wf || t >= sc.T) expect_eq("swa_lens", t, ref->swa_lens[t], ((int32_t *)o.b[B_SWA_LENS].data)[t]);
  for (t = 0; sc.c128a_lens && t < sc.C; t++)
    if (wf || t >= sc.T)
      expect_eq("c128a_lens", t, ref->c128a_lens[t], ((int32_t *)o.b[B_C128A_LENS].data)[t]);
  if (sc.swa_rows) check_rows("swa_indices", &o.b[B_SWA], ref->swa, sc.T, sc.swa_width, sc.swa_stride, wf);
  if (sc.c128a_rows)
    check_rows("c128a_rows", &o.b[B_C128A], ref->c128a, sc.T, sc.c_width, sc.c_stride, wf);
  if (sc.c128a_prefill)
    check_rows("c128a_prefill_rows", &o.b[B_C128A_PREFILL], ref->c128a_prefill, sc.T, sc.c_width,
               sc.c_pstride, wf);
  for (t = 0; sc.indexer && t < sc.C; t++)
    if (wf || t >= sc.T)
      expect_eq("indexer_lens_out", t, ref->indexer_lens[t], ((int32_t *)o.b[B_INDEXER].data)[t]);
  got = *(int32_t *)o.b[B_ERR].data;
  /* the seq_lens checks run when a wanted product reads seq_lens */
  req_flags = p1->request_flags;
  if (!sc.ngroups && !sc.swa && !sc.c128a && !sc.indexer) req_flags &= ~FZ_SEQ_FLAGS;
  flags = req_flags;
  for (g = 0; g < sc.ngroups; g++)
    if (sc.want_slots[g]) flags |= ref->group_flags[g];
  if (sc.swa) flags |= ref->swa_flags & (sc.swa_rows ? ~0 : ATTNMETA_FLAG_POSITION_NEGATIVE);
  if (sc.c128a_rows) flags |= ref->c128a_flags;
  if (wf)
    FZ_CHECK(got == flags, "error word 0x%x, expected 0x%x", (unsigned)got, (unsigned)flags);
  else
    FZ_CHECK((got & req_flags) == req_flags &&
                 !(got & ~(FZ_ALL_FLAGS | ATTNMETA_FLAG_SLOT_OUT_OF_RANGE)),
             "error word 0x%x, expected at least 0x%x", (unsigned)got, (unsigned)req_flags);

  /* the emulated GPU shape gives the same bytes */
  outputs_alloc(&e, &sc);
  fill_step(&s, &sc, in, &e);
  emulate(&s, &sc);
  for (i = 0; i < NBUF; i++)
    FZ_CHECK(o.b[i].total == e.b[i].total &&
                 memcmp(o.b[i].base, e.b[i].base, o.b[i].total) == 0,
             "buffer %d: the emulated %u x %u x %u launch differs from the CPU backend", i,
             sc.lanes, sc.groups, sc.grid);

  outputs_free(&e);
  amr_dsv4_free(ref);
  amr_free(p1);
  outputs_free(&o);
  for (i = 0; i < NIN; i++) fz_in_free(&in[i]);
  for (i = 0; i < NFAM; i++) free(sc.tab[i].ids);
  free(sc.swa_slots);
  free(sc.pcp_slots);
  free(sc.pcp_pos);
}
