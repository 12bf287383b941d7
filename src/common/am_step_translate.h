// SPDX-License-Identifier: Apache-2.0
/*
 * The host's translation of a checked attnmeta_step into the kernel
 * parameters (the part that does not depend on the launch shape). Shared by
 * step.c and the tests that run the kernel body for emulated GPU launch
 * shapes. Plain C, host only.
 */
#ifndef ATTNMETA_AM_STEP_TRANSLATE_H
#define ATTNMETA_AM_STEP_TRANSLATE_H

#include <stddef.h>
#include <string.h>

#include "am_step_choices.h"
#include "am_schema_wanted.h"
#include "am_step_params.h"
#include "attnmeta/attnmeta.h"

/* A wide-row product (sections 7 and 8): its outputs and settings, and its
 * table, or none (NULL, 0 columns, stride 0) when the product does not read
 * one. */
static inline void am_wide_rows_of(am_wide_rows *w, int32_t *out, int64_t out_stride,
                                   int32_t *lens, int32_t window, int32_t ratio, int32_t width,
                                   int32_t mode, const int32_t *table, int32_t cols,
                                   int64_t stride, int32_t block_size) {
  w->out = out;
  w->out_stride = out ? out_stride : 0;
  w->lens = lens;
  w->window = window;
  w->ratio = ratio;
  w->width = width;
  w->mode = mode;
  w->table = table && cols > 0 ? table : NULL;
  w->cols = w->table ? cols : 0;
  w->stride = w->table ? stride : 0;
  w->block_size = block_size;
}

/* The DeepSeek-V3.2/V4 part of the kernel parameters: the wanted groups
 * packed to the front, what no product reads left zero. */
static inline void am_dsv4_params_of(const attnmeta_step *s, unsigned wanted, am_step_params *p) {
  int g;
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g) {
    const attnmeta_compressed_group *grp = &s->compressed_groups[g];
    am_group_params *q = &p->groups[p->num_groups];
    if (!grp->slot_mapping && !grp->seq_lens_out) continue;
    q->slots = grp->slot_mapping;
    q->lens = grp->seq_lens_out;
    q->ratio = grp->ratio;
    q->block_size = grp->slot_mapping ? grp->block_size : 1;
    q->table = grp->slot_mapping && grp->block_table_cols > 0 ? grp->block_table : NULL;
    q->cols = q->table ? grp->block_table_cols : 0;
    q->stride = q->table ? grp->block_table_stride : 0;
    p->num_groups++;
  }
  if (wanted & (AM_P(SWA_INDICES) | AM_P(SWA_LENS))) {
    const int rows = (wanted & am_step_reads_swa_block_table()) != 0;
    am_wide_rows_of(&p->swa, s->swa_indices, s->swa_indices_stride, s->swa_lens, s->swa_window, 1,
                    s->swa_width, s->swa_mode, rows ? s->swa_block_table : NULL,
                    s->swa_block_table_cols, s->swa_block_table_stride,
                    rows ? s->swa_block_size : 1);
    p->swa.token_slots = s->swa_token_slots;
  }
  if (wanted & (AM_P(C128A_ROWS) | AM_P(C128A_LENS) | AM_P(C128A_PREFILL_ROWS))) {
    const int global = s->c128a_mode != ATTNMETA_C128A_LOCAL;
    am_wide_rows_of(&p->c128a, s->c128a_rows, s->c128a_rows_stride, s->c128a_lens, 0,
                    s->c128a_ratio, s->c128a_width, s->c128a_mode,
                    (wanted & am_step_reads_c128a_block_table()) ? s->c128a_block_table : NULL,
                    s->c128a_block_table_cols, s->c128a_block_table_stride,
                    global ? s->c128a_block_size : 1);
    if (s->c128a_mode == ATTNMETA_C128A_MIXED) {
      p->c128a.split = s->c128a_num_decode_tokens;
      p->c128a.out2 = s->c128a_prefill_rows;
      p->c128a.out2_stride = s->c128a_prefill_rows ? s->c128a_prefill_rows_stride : 0;
    }
  }
  if (wanted & AM_P(INDEXER_LENS)) {
    p->indexer_lens = s->indexer_lens_out;
    p->indexer_ratio = s->indexer_ratio;
    p->indexer_mode = s->indexer_mode;
  }
}

/* The schema's kernel members (AM_STEP_KERNEL_FIELDS), by name: the step's
 * when a product that reads them is wanted, else zero (memset). */
#define AM_STEP_EXT_FILL_(c, type, member, products) \
  if (wanted & (products)) p->ext.member = s->member;
static inline void am_ext_params_of(const attnmeta_step *s, unsigned wanted, am_step_params *p) {
  (void)s; /* read only by the declared members */
  p->ext.products = wanted;
  AM_STEP_KERNEL_FIELDS(AM_STEP_EXT_FILL_, _)
}
#undef AM_STEP_EXT_FILL_

static inline am_step_params am_params_of(const attnmeta_step *s) {
  const unsigned wanted = am_step_products(s);
  am_step_params p;
  memset(&p, 0, sizeof p);
  p.qsl = s->query_start_loc;
  p.seq_lens = s->seq_lens;
  p.block_table = s->block_table;
  p.block_table_stride = s->block_table ? s->block_table_stride : 0;
  p.num_reqs = s->num_reqs;
  p.num_tokens = s->num_tokens;
  p.capacity = s->capacity;
  p.cols = (wanted & am_step_reads_block_table()) ? s->block_table_cols : 0;
  p.num_mapped = s->num_mapped;
  p.block_size = s->block_size;
  p.dcp_world_size = s->dcp_world_size;
  p.dcp_rank = s->dcp_rank;
  p.dcp_interleave = s->dcp_interleave;
  p.token_to_req = s->token_to_req;
  p.seq_lens_out = s->seq_lens_out;
  p.global_seq_lens_out = s->global_seq_lens_out;
  /* A table of no columns has nothing to copy. */
  p.block_table_out = p.cols > 0 ? s->block_table_out : NULL;
  p.block_table_out_stride = s->block_table_out_stride;
  p.decode_lens_out = s->decode_lens_out;
  p.req_indices_out = s->req_indices_out;
  p.per_req_lens_out = s->per_req_lens_out;
  p.positions = s->positions;
  p.slot_mapping = s->slot_mapping;
  p.error_word = s->error_word;
  am_dsv4_params_of(s, wanted, &p);
  am_ext_params_of(s, wanted, &p);
  if (!(wanted & am_step_reads_seq_lens()))
    p.seq_lens = NULL; /* not read: keep it out of the staged data */
  return p;
}

#endif /* ATTNMETA_AM_STEP_TRANSLATE_H */
