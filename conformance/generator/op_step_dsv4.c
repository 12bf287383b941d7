// SPDX-License-Identifier: Apache-2.0
/* The generator's DeepSeek-V3.2/V4 step vectors (op_step_dsv4.h). Values the
 * contract leaves unspecified (per-token values under hostile boundaries)
 * are written as "?". */
#include "op_step_dsv4.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "op_step.h"
#include "reference.h"
#include "reference_dsv4.h"
#include "vecschema.h"

/* A table of the batch as an input: every row's used columns (stride = cols). */
static void table_input(amv_values *out, const amd_batch *b, int tab) {
  const int32_t cols = b->cols[tab];
  const int64_t n = cols == 0 ? 0 : b->R > 0 ? (int64_t)b->R * cols : 1;
  amg_values32(out, b->tables[tab], n);
}

/* Section 7's SWA groups: every group's rows, group after group, each the
 * reference's on its table (their flags into *flags); NULL for one group. */
static int32_t *swa_group_rows(const amd_batch *b, const amr_input *in, int32_t *flags) {
  const int64_t G = b->extra.swa_groups, n = (int64_t)b->T * b->d.swa_width;
  int32_t *rows;
  int64_t g;
  if (G < 2) return NULL;
  rows = malloc((size_t)(G * n > 0 ? G * n : 1) * sizeof(int32_t));
  if (!rows) {
    fprintf(stderr, "attnmeta_gen_vectors: out of memory\n");
    exit(1);
  }
  for (g = 0; g < G; g++) {
    amr_dsv4_input di = b->d;
    amr_dsv4_output *o;
    di.swa_table.ids = b->swa_stacked + g * b->extra.swa_block_table_group_stride;
    o = amr_dsv4_alloc(in, &di);
    amr_dsv4_build(in, &di, o);
    if (n > 0) memcpy(rows + g * n, o->swa, (size_t)n * sizeof(int32_t));
    *flags |= o->swa_flags;
    amr_dsv4_free(o);
  }
  return rows;
}

/* Version 5: the settings and inputs declared after 0.3, by name from the
 * case's step (amd_batch.extra), each one it gives. */
static void schema_members(const amd_batch *b, amv_vector *v) {
  int k, i;
  for (k = 0; k < amvs_step.n; k++) {
    const amvs_member *m = &amvs_step.m[k];
    if (!amvs_schema_param(m) || amvs_get(&b->extra, m) == 0) continue;
    amvs_set(&v->step, m, amvs_get(&b->extra, m));
    v->version = AMV_VERSION_SCHEMA;
  }
  for (i = AMV_NUM_INPUTS; i < amv_num_inputs(); i++) {
    const amvs_member *m = amvs_step_input(i);
    const void *p = *(const void *const *)amvs_slot((void *)&b->extra, m);
    int64_t rows, cols, stride, n;
    if (!p) continue;
    amvs_extent(&amvs_step, &v->step, m, &rows, &cols, &stride);
    n = !m->cols ? rows : cols == 0 ? 0 : rows > 0 ? (rows - 1) * stride + cols : 1;
    if (m->size == 8) amg_values64(&v->input[i], p, n);
    else amg_values32(&v->input[i], p, n);
    v->version = AMV_VERSION_SCHEMA;
  }
}

int amg_step_dsv4_vector(const amd_case *c, amv_vector *v) {
  amd_batch *b = amd_materialize(c);
  attnmeta_step *s = &v->step;
  int32_t seen = 0;
  int k, g, rc;
  memset(v, 0, sizeof *v);
  snprintf(v->name, sizeof v->name, "%s", c->name);
  v->version = 2;
  s->num_reqs = b->R;
  s->num_tokens = b->T;
  s->capacity = b->C;
  s->block_table_cols = b->cols[AMD_TAB_MAIN];
  s->block_table_stride = s->block_table_out_stride = b->cols[AMD_TAB_MAIN];
  s->num_mapped = -1;
  s->block_size = b->main_block_size;
  s->dcp_world_size = b->world;
  s->dcp_interleave = b->interleave;
  v->products = AMV_ALL_PRODUCTS;
  amg_values32(&v->input[AMV_QUERY_START_LOC], b->qsl, (int64_t)b->R + 1);
  amg_values32(&v->input[AMV_SEQ_LENS], b->seq_lens, b->R);
  table_input(&v->input[AMV_BLOCK_TABLE], b, AMD_TAB_MAIN);
  for (g = 0; g < b->d.ngroups; g++) {
    attnmeta_compressed_group *cg = &s->compressed_groups[g];
    v->products |= (1u << (AMV_GROUP_SLOT_MAPPING + g)) | (1u << (AMV_GROUP_SEQ_LENS_OUT + g));
    cg->ratio = b->d.groups[g].ratio;
    cg->block_size = b->d.groups[g].block_size;
    cg->block_table_cols = cg->block_table_stride = b->cols[AMD_TAB_GROUP0 + g];
    table_input(&v->input[AMV_GROUP_BLOCK_TABLE + g], b, AMD_TAB_GROUP0 + g);
  }
  if (b->d.swa_width > 0) {
    v->products |= (1u << AMV_SWA_INDICES) | (1u << AMV_SWA_LENS);
    s->swa_block_size = b->d.swa_block_size;
    s->swa_window = b->d.swa_window;
    s->swa_width = b->d.swa_width;
    s->swa_mode = b->d.swa_mode;
    s->swa_indices_stride = b->swa_stride;
    s->swa_block_table_cols = s->swa_block_table_stride = b->cols[AMD_TAB_SWA];
    if (b->swa_stacked)
      amg_values32(&v->input[AMV_SWA_BLOCK_TABLE], b->swa_stacked, b->swa_stacked_n);
    else
      table_input(&v->input[AMV_SWA_BLOCK_TABLE], b, AMD_TAB_SWA);
    if (b->swa_token_slots)
      amg_values64(&v->input[AMV_SWA_TOKEN_SLOTS], b->swa_token_slots, b->T);
  }
  if (b->d.c128a_width >= 0) {
    v->products |= (1u << AMV_C128A_ROWS) | (1u << AMV_C128A_LENS);
    s->c128a_ratio = b->d.c128a_ratio;
    s->c128a_block_size = b->d.c128a_block_size;
    s->c128a_width = b->d.c128a_width;
    s->c128a_mode = b->d.c128a_mode;
    s->c128a_rows_stride = b->c128a_stride;
    s->c128a_block_table_cols = s->c128a_block_table_stride = b->cols[AMD_TAB_C128A];
    table_input(&v->input[AMV_C128A_BLOCK_TABLE], b, AMD_TAB_C128A);
    if (b->d.c128a_mode == ATTNMETA_C128A_MIXED) {
      v->products |= 1u << AMV_C128A_PREFILL_ROWS;
      s->c128a_prefill_rows_stride = b->c128a_stride;
      s->c128a_num_decode_tokens = b->d.c128a_num_decode;
    }
  }
  if (b->d.indexer_ratio > 0) {
    v->products |= 1u << AMV_INDEXER_LENS_OUT;
    s->indexer_ratio = b->d.indexer_ratio;
    s->indexer_mode = b->d.indexer_mode;
  }
  schema_members(b, v);
  v->nranks = b->world;
  v->ranks = calloc((size_t)b->world, sizeof(amv_rank));
  if (!v->ranks) {
    fprintf(stderr, "attnmeta_gen_vectors: out of memory\n");
    exit(1);
  }

  for (k = 0; k < b->world; k++) {
    amv_rank *rk = &v->ranks[k];
    amr_input in;
    amr_dsv4_input di = b->d;
    amr_output *o;
    amr_dsv4_output *o4;
    int wf;
    amd_reference_input(b, k, &in);
    o = amr_alloc(&in);
    amr_build(&in, o);
    o4 = amr_dsv4_alloc(&in, &di);
    amr_dsv4_build(&in, &di, o4);
    wf = o->well_formed;
    rk->rank = k;
    amg_expect_part1(rk, o, AMV_ALL_PRODUCTS, b->R, b->T, b->C, s->block_table_cols);
    for (g = 0; g < b->d.ngroups; g++) {
      amg_expect_values(&rk->expect[AMV_GROUP_SLOT_MAPPING + g], b->C, b->T, wf, NULL,
                        o4->cslots[g], -1);
      amg_expect_values(&rk->expect[AMV_GROUP_SEQ_LENS_OUT + g], b->R, b->R, 1, o4->clens[g],
                        NULL, 0);
      rk->flags_dsv4[g] = wf ? o4->group_flags[g] : 0;
      seen |= o4->group_flags[g];
    }
    if (b->d.swa_width > 0) {
      int32_t swa_flags = o4->swa_flags;
      int32_t *grouped = swa_group_rows(b, &in, &swa_flags);
      const int64_t groups = grouped ? b->extra.swa_groups : 1;
      const int64_t n = groups * b->T * b->d.swa_width;
      amg_expect_values(&rk->expect[AMV_SWA_INDICES], n, n, wf, grouped ? grouped : o4->swa,
                        NULL, 0);
      amg_expect_values(&rk->expect[AMV_SWA_LENS], b->C, b->T, wf, o4->swa_lens, NULL, 0);
      rk->flags_dsv4[AMV_FAMILY_SWA] = wf ? swa_flags & ATTNMETA_FLAG_POSITION_NEGATIVE : 0;
      rk->flags_dsv4[AMV_FAMILY_SWA + 1] = wf ? swa_flags & ~ATTNMETA_FLAG_POSITION_NEGATIVE : 0;
      seen |= swa_flags;
      free(grouped);
    }
    if (b->d.c128a_width >= 0) {
      const int64_t n = (int64_t)b->T * b->d.c128a_width;
      amg_expect_values(&rk->expect[AMV_C128A_ROWS], n, n, wf, o4->c128a, NULL, 0);
      amg_expect_values(&rk->expect[AMV_C128A_LENS], b->C, b->T, wf, o4->c128a_lens, NULL, 0);
      if (b->d.c128a_mode == ATTNMETA_C128A_MIXED)
        amg_expect_values(&rk->expect[AMV_C128A_PREFILL_ROWS], n, n, wf, o4->c128a_prefill, NULL,
                          0);
      rk->flags_dsv4[AMV_FAMILY_SWA + 2] = wf ? o4->c128a_flags : 0;
      seen |= o4->c128a_flags;
    }
    if (b->d.indexer_ratio > 0)
      amg_expect_values(&rk->expect[AMV_INDEXER_LENS_OUT], b->C, b->T, wf, o4->indexer_lens,
                        NULL, 0);
    amr_dsv4_free(o4);
    amr_free(o);
  }

  rc = amg_check_case_flags(c->name, seen, c->expect_flags);
  amd_batch_free(b);
  return rc;
}
