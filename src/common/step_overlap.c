// SPDX-License-Identifier: Apache-2.0
/*
 * The buffers of a step for the overlap check (overlap.c): each with
 * exactly the bytes the step reads or writes there.
 */
#include <stdint.h>

#include "am_overlap.h"
#include "am_step_overlap.h"

static const char *const group_names[][3] = {
    {"compressed_groups[0].block_table", "compressed_groups[0].slot_mapping",
     "compressed_groups[0].seq_lens_out"},
    {"compressed_groups[1].block_table", "compressed_groups[1].slot_mapping",
     "compressed_groups[1].seq_lens_out"},
    {"compressed_groups[2].block_table", "compressed_groups[2].slot_mapping",
     "compressed_groups[2].seq_lens_out"},
    {"compressed_groups[3].block_table", "compressed_groups[3].slot_mapping",
     "compressed_groups[3].seq_lens_out"}};
_Static_assert(sizeof group_names / sizeof group_names[0] == ATTNMETA_MAX_COMPRESSED_GROUPS,
               "a name per compressed group");

/* Whether a DeepSeek-V3.2/V4 product is wanted: each reads seq_lens, as
 * check_step (step.c) counts them. */
static int wants_dsv4(const attnmeta_step *s) {
  int g;
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g)
    if (s->compressed_groups[g].slot_mapping || s->compressed_groups[g].seq_lens_out) return 1;
  return s->swa_indices || s->swa_lens || s->c128a_rows || s->c128a_lens;
}

attnmeta_status am_check_overlaps(attnmeta_context *ctx, const attnmeta_step *s) {
  const int wants_seq = s->seq_lens_out || s->global_seq_lens_out || s->positions ||
                        s->slot_mapping || wants_dsv4(s);
  const int wants_table = s->block_table_out || s->slot_mapping;
  const int64_t R = s->num_reqs, T = s->num_tokens, C = s->capacity;
  const int64_t cols = wants_table ? s->block_table_cols : 0;
  /* the part-1 buffers, then each compressed group's three, SWA's and
   * C128A's three */
  am_extent list[14 + 3 * ATTNMETA_MAX_COMPRESSED_GROUPS + 6];
  int n = 0, g;

  am_extent_add_array(list, &n, "query_start_loc", s->query_start_loc, R + 1, 4, 0);
  if (wants_seq) am_extent_add_array(list, &n, "seq_lens", s->seq_lens, R, 4, 0);
  if (wants_table)
    am_extent_add(list, &n, "block_table", s->block_table, R, cols, s->block_table_stride, 4, 0);
  am_extent_add_array(list, &n, "token_to_req", s->token_to_req, T, 4, 1);
  am_extent_add_array(list, &n, "seq_lens_out", s->seq_lens_out, C, 4, 1);
  am_extent_add_array(list, &n, "global_seq_lens_out", s->global_seq_lens_out, T, 4, 1);
  am_extent_add(list, &n, "block_table_out", s->block_table_out, T, cols, s->block_table_out_stride,
                4, 1);
  am_extent_add_array(list, &n, "decode_lens_out", s->decode_lens_out, T, 4, 1);
  am_extent_add_array(list, &n, "req_indices_out", s->req_indices_out, T, 4, 1);
  am_extent_add_array(list, &n, "per_req_lens_out", s->per_req_lens_out, R, 4, 1);
  am_extent_add_array(list, &n, "positions", s->positions, T, 8, 1);
  am_extent_add_array(list, &n, "slot_mapping", s->slot_mapping, C, 8, 1);
  am_extent_add_array(list, &n, "error_word", s->error_word, 1, 4, 1);

  /* DeepSeek-V3.2/V4 products: a table is read only by its slots or rows */
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g) {
    const attnmeta_compressed_group *grp = &s->compressed_groups[g];
    if (grp->slot_mapping)
      am_extent_add(list, &n, group_names[g][0], grp->block_table, R, grp->block_table_cols,
                    grp->block_table_stride, 4, 0);
    am_extent_add_array(list, &n, group_names[g][1], grp->slot_mapping, C, 8, 1);
    am_extent_add_array(list, &n, group_names[g][2], grp->seq_lens_out, R, 4, 1);
  }
  if (s->swa_indices)
    am_extent_add(list, &n, "swa_block_table", s->swa_block_table, R, s->swa_block_table_cols,
                  s->swa_block_table_stride, 4, 0);
  am_extent_add(list, &n, "swa_indices", s->swa_indices, T, s->swa_width, s->swa_indices_stride, 4,
                1);
  am_extent_add_array(list, &n, "swa_lens", s->swa_lens, C, 4, 1);
  if (s->c128a_rows && s->c128a_mode == ATTNMETA_C128A_GLOBAL)
    am_extent_add(list, &n, "c128a_block_table", s->c128a_block_table, R, s->c128a_block_table_cols,
                  s->c128a_block_table_stride, 4, 0);
  am_extent_add(list, &n, "c128a_rows", s->c128a_rows, T, s->c128a_width, s->c128a_rows_stride, 4,
                1);
  am_extent_add_array(list, &n, "c128a_lens", s->c128a_lens, C, 4, 1);

  return am_check_extents(ctx, list, n);
}
