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
#include "am_step_params.h"
#include "attnmeta/attnmeta.h"

/* A wide-row product's table, or none (NULL, 0 columns, stride 0) when
 * the product does not read one. */
static inline void am_wide_table(am_wide_rows *w, const int32_t *table, int32_t cols,
                                 int64_t stride, int32_t block_size) {
  w->table = cols > 0 ? table : NULL;
  w->cols = w->table ? cols : 0;
  w->stride = w->table ? stride : 0;
  w->block_size = block_size;
}

/* The DeepSeek-V3.2/V4 part of the kernel parameters: the wanted groups
 * packed to the front, what no product reads left zero. */
static inline void am_dsv4_params_of(const attnmeta_step *s, am_step_params *p) {
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
  if (s->swa_indices || s->swa_lens) {
    am_wide_rows *w = &p->swa;
    w->out = s->swa_indices;
    w->out_stride = s->swa_indices ? s->swa_indices_stride : 0;
    w->lens = s->swa_lens;
    w->window = s->swa_window;
    w->width = s->swa_width;
    w->mode = s->swa_mode;
    w->ratio = 1;
    if (s->swa_indices)
      am_wide_table(w, s->swa_block_table, s->swa_block_table_cols, s->swa_block_table_stride,
                 s->swa_block_size);
    else
      am_wide_table(w, NULL, 0, 0, 1);
  }
  if (s->c128a_rows || s->c128a_lens) {
    am_wide_rows *w = &p->c128a;
    w->out = s->c128a_rows;
    w->out_stride = s->c128a_rows ? s->c128a_rows_stride : 0;
    w->lens = s->c128a_lens;
    w->ratio = s->c128a_ratio;
    w->width = s->c128a_width;
    w->mode = s->c128a_mode;
    w->window = 0;
    if (s->c128a_rows && s->c128a_mode == ATTNMETA_C128A_GLOBAL)
      am_wide_table(w, s->c128a_block_table, s->c128a_block_table_cols,
                 s->c128a_block_table_stride, s->c128a_block_size);
    else
      am_wide_table(w, NULL, 0, 0, s->c128a_mode == ATTNMETA_C128A_GLOBAL ? s->c128a_block_size : 1);
  }
}

static inline am_step_params am_params_of(const attnmeta_step *s) {
  am_step_params p;
  memset(&p, 0, sizeof p);
  p.qsl = s->query_start_loc;
  p.seq_lens = s->seq_lens;
  p.block_table = s->block_table;
  p.block_table_stride = s->block_table ? s->block_table_stride : 0;
  p.num_reqs = s->num_reqs;
  p.num_tokens = s->num_tokens;
  p.capacity = s->capacity;
  p.cols = (s->block_table_out || s->slot_mapping) ? s->block_table_cols : 0;
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
  am_dsv4_params_of(s, &p);
  if (!p.seq_lens_out && !p.global_seq_lens_out && !p.positions && !p.slot_mapping &&
      !am_wants_dsv4(&p))
    p.seq_lens = NULL; /* not read: keep it out of the staged data */
  return p;
}

#endif /* ATTNMETA_AM_STEP_TRANSLATE_H */
