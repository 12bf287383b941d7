// SPDX-License-Identifier: Apache-2.0
/*
 * The DeepSeek-V3.2/V4 products of a step (contract sections 5, 5a, 5b, 7, 8),
 * per token, for the step kernel body (am_step_kernel.h), which calls them
 * with the token's request and length already found: the compressed slot
 * of every compressed group, the sliding-window row and the heavily
 * compressed (C128A) row. Wide rows are written by every lane of the
 * token's group, as 16-byte stores where the host allows.
 *
 * Every function is total: any int32 data gives in-bounds reads and writes
 * and no signed overflow (positions are 64-bit).
 */
#ifndef ATTNMETA_AM_DSV4_H
#define ATTNMETA_AM_DSV4_H

#include "am_dialect.h"
#include "am_step_params.h"
#include "am_token_math.h"

/* pos(t) of a valid token of request span `s`: seq_len - qlen + off, in 64
 * bits for any boundaries. */
AM_DEVICE int64_t am_token_position(am_req_span s, uint32_t t, int32_t seq_len) {
  return (int64_t)seq_len - ((int64_t)s.end - s.start) + ((int64_t)t - s.start);
}

/* Section 5: the compressed slot a valid token of request r at `pos`
 * writes in group g, or -1 (the token completes no compressed row, another
 * DCP rank owns the row, or bad data, flagged). */
AM_DEVICE int64_t am_compressed_slot(const am_step_params *p, const am_group_params *g,
                                     int32_t r, int64_t pos, int32_t *flags) {
  int64_t c;
  if (pos < 0) {
    *flags |= ATTNMETA_FLAG_POSITION_NEGATIVE;
    return -1;
  }
  c = am_div(pos, g->ratio);
  if (pos - c * g->ratio != (int64_t)g->ratio - 1) return -1; /* (pos + 1) % ratio != 0 */
  return am_slot(c, g->table, (int64_t)r * g->stride, g->cols, g->block_size,
                 p->dcp_world_size, p->dcp_rank, p->dcp_interleave, flags);
}

/* Section 5b: token t's compressed slot in group g from the PCP logical
 * slot mapping (vLLM's get_pcp_compressed_slot_mapping): -1 unless the
 * logical slot is >= 0 and pos + 1 is a multiple of the ratio (tested as
 * pos % ratio in {ratio - 1, -1}, so no pos overflows). The host checked
 * block_size == logical_block_size / ratio exactly, so the slot is at most
 * logical / ratio: no overflow either. */
AM_DEVICE int64_t am_pcp_compressed_slot(const am_step_ext *e, const am_group_params *g,
                                         uint32_t t) {
  const int64_t logical = e->pcp_logical_slots[t], lbs = e->pcp_logical_block_size;
  const int64_t m = e->pcp_positions[t] % g->ratio;
  if (logical < 0 || (m != (int64_t)g->ratio - 1 && m != -1)) return -1;
  return logical / lbs * g->block_size + logical % lbs / g->ratio;
}

/* Four consecutive entries j0 .. j0 + 3 of a wide row: entry j < lens holds
 * j itself when `identity`, else the slot of position base + j through
 * table_row (cols block ids of size bs; NULL only when cols is 0); entries
 * from lens on are -1. A
 * position past the table, a negative block id or a slot above INT32_MAX
 * gives -1 and its flag. The four block ids are loaded before any is used
 * (clamped into the row, so each load is in bounds and unconditional). */
AM_DEVICE am_i32x4 am_wide_unit(uint32_t j0, int64_t lens, int identity, int64_t base,
                                const int32_t *AM_RESTRICT table_row, int64_t cols, int64_t bs,
                                int32_t *flags) {
  int32_t v[4];
  int k;
  am_i32x4 out;
  if (identity) {
    for (k = 0; k < 4; ++k) v[k] = (int64_t)j0 + k < lens ? (int32_t)(j0 + k) : -1;
  } else {
    const int64_t q = base + j0;
    int64_t blk = am_div(q, bs), in_block = q - blk * bs;
    int64_t b[4], o[4];
    int32_t id[4];
    for (k = 0; k < 4; ++k) {
      b[k] = blk;
      o[k] = in_block;
      if (++in_block == bs) {
        in_block = 0;
        ++blk;
      }
    }
    for (k = 0; k < 4; ++k) id[k] = cols > 0 ? table_row[b[k] < cols ? b[k] : cols - 1] : 0;
    for (k = 0; k < 4; ++k) {
      int64_t slot;
      v[k] = -1;
      if ((int64_t)j0 + k >= lens) continue;
      if (b[k] >= cols) {
        *flags |= ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
        continue;
      }
      if (id[k] < 0) {
        *flags |= ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
        continue;
      }
      slot = (int64_t)id[k] * bs + o[k];
      if (slot > INT32_MAX) {
        *flags |= ATTNMETA_FLAG_SLOT_OUT_OF_RANGE;
        continue;
      }
      v[k] = (int32_t)slot;
    }
  }
  out.x = v[0];
  out.y = v[1];
  out.z = v[2];
  out.w = v[3];
  return out;
}

/* Writes one wide row of `width` entries (see am_wide_unit), lanes
 * [0, lanes) of the token's group taking units of four entries in turn:
 * 16-byte stores when `vector` (row 16-byte aligned), else four scalar
 * stores; a last partial unit is stored entry by entry. */
AM_DEVICE void am_wide_row(int32_t *AM_RESTRICT row, uint32_t width, int vector, int64_t lens,
                           int identity, int64_t base, const int32_t *AM_RESTRICT table_row,
                           int64_t cols, int64_t bs, uint32_t lane, uint32_t lanes,
                           int32_t *flags) {
  const uint32_t units = width / 4 + (width % 4 != 0);
  am_i32x4 *AM_RESTRICT row4 = (am_i32x4 *)(void *)row;
  am_i32x4 none;
  uint32_t u;
  none.x = none.y = none.z = none.w = -1;
  for (u = lane; u < units; u += lanes) {
    const uint32_t j0 = 4 * u;
    const am_i32x4 v =
        (int64_t)j0 < lens ? am_wide_unit(j0, lens, identity, base, table_row, cols, bs, flags)
                           : none;
    if (vector && j0 + 4 <= width) {
      row4[u] = v;
    } else {
      row[j0] = v.x;
      if (j0 + 1 < width) row[j0 + 1] = v.y;
      if (j0 + 2 < width) row[j0 + 2] = v.z;
      if (j0 + 3 < width) row[j0 + 3] = v.w;
    }
  }
}

/* Row r of a block table, or NULL for a table of no columns (NULL itself). */
AM_DEVICE const int32_t *am_table_row(const int32_t *table, int64_t stride, int32_t r) {
  return table ? table + (int64_t)r * stride : table;
}

/* Section 7, causal mode: the first position of a valid token's row at
 * pos >= 0 and its length. The window ends at pos; in-image visibility
 * (left/right given) starts it up to left - (window - 1) positions earlier
 * and ends it right positions later; the replay floor raises its start.
 * 64-bit: no int32 data overflows. The length is clamped into [0, width]. */
AM_DEVICE int64_t am_swa_causal(const am_wide_rows *w, const am_step_ext *e, int32_t r,
                                uint32_t t, int64_t pos, int64_t *lens) {
  const int64_t reach = (int64_t)w->window - 1;
  int64_t start, end = pos + 1;
  if (e->swa_left_visible) {
    start = am_max64(pos - reach - am_max64((int64_t)e->swa_left_visible[t] - reach, 0), 0);
    end += e->swa_right_visible[t];
  } else {
    start = am_max64(pos - reach, 0);
  }
  if (e->swa_replay_start) start = am_max64(start, e->swa_replay_start[r]);
  *lens = am_clamp64(end - start, 0, w->width);
  return start;
}

/* Section 7: the sliding-window row and length of token t (request span s,
 * length seq_len of its request, position pos; valid: t < actual). A
 * token whose KV slot is negative (token_slots given) gets what a padding
 * token gets, before its position is looked at: no flag. */
AM_DEVICE void am_swa_token(const am_step_params *p, uint32_t t, int valid, am_req_span s,
                            int32_t seq_len, int64_t pos, uint32_t lane, uint32_t lanes,
                            int32_t *flags) {
  const am_wide_rows *w = &p->swa;
  int64_t start = 0, lens = 0;
  if (valid && w->token_slots && w->token_slots[t] < 0) valid = 0;
  if (valid) {
    if (w->mode == ATTNMETA_SWA_NON_CAUSAL) {
      const int64_t prefix = (int64_t)seq_len - ((int64_t)s.end - s.start);
      start = am_max64(prefix - w->window, 0);
      lens = am_clamp64((int64_t)seq_len - start, 0, w->width);
    } else if (pos < 0) {
      *flags |= ATTNMETA_FLAG_POSITION_NEGATIVE;
    } else {
      start = am_swa_causal(w, &p->ext, s.req, t, pos, &lens);
    }
  }
  if (w->lens && lane == 0) w->lens[t] = (int32_t)lens;
  if (w->out) {
    /* every group's row from its own table; the length is the same for all */
    const int32_t groups = p->ext.swa_groups > 1 ? p->ext.swa_groups : 1;
    int32_t g;
    for (g = 0; g < groups; ++g) {
      const int32_t *table = w->table ? w->table + g * p->ext.swa_block_table_group_stride
                                      : w->table;
      am_wide_row(w->out + g * p->ext.swa_indices_group_stride + (int64_t)t * w->out_stride,
                  (uint32_t)w->width, w->vector, lens, 0, start,
                  am_table_row(table, w->stride, s.req), w->cols, w->block_size, lane, lanes,
                  flags);
    }
  }
}

/* Section 8: the C128A row and length of token t. In mixed mode a decode
 * token (t < split) is a global one and writes, besides its row, the
 * prefill table's row T - split + t as -1; a prefill token writes its
 * local row at t - split of the prefill table and a row of -1 at t. */
AM_DEVICE void am_c128a_token(const am_step_params *p, uint32_t t, int valid, int32_t r,
                              int64_t pos, uint32_t lane, uint32_t lanes, int32_t *flags) {
  const am_wide_rows *w = &p->c128a;
  const int mixed = w->mode == ATTNMETA_C128A_MIXED;
  const int decode = mixed && (int64_t)t < w->split;
  const int global = w->mode == ATTNMETA_C128A_GLOBAL || decode;
  int64_t n = 0, lens;
  if (valid && pos >= 0) n = am_min64(am_div(pos + 1, w->ratio), w->width);
  /* with DCP the owned entries are packed to the front: the j-th owned
   * compressed row of a rank sits at block j / bs, offset j % bs, since
   * every virtual block of bs * W rows holds bs of each rank's rows
   * (bs % I == 0, checked on the host) */
  lens = global && p->dcp_world_size > 1
             ? am_dcp_local_len(n, p->dcp_world_size, p->dcp_rank, p->dcp_interleave)
             : n;
  if (w->lens && lane == 0) w->lens[t] = (int32_t)lens;
  if (w->out)
    am_wide_row(w->out + (int64_t)t * w->out_stride, (uint32_t)w->width, w->vector,
                mixed && !decode ? 0 : lens, !global, 0,
                global ? am_table_row(w->table, w->stride, r) : (const int32_t *)0, w->cols,
                w->block_size, lane, lanes, flags);
  if (w->out2) {
    const int64_t row = decode ? (int64_t)p->num_tokens - w->split + t : (int64_t)t - w->split;
    am_wide_row(w->out2 + row * w->out2_stride, (uint32_t)w->width, w->vector2,
                decode ? 0 : lens, 1, 0, (const int32_t *)0, 0, 1, lane, lanes, flags);
  }
}

/* Section 5a: the indexer's compressed length of a valid token at `pos`. */
AM_DEVICE int32_t am_indexer_len(const am_step_params *p, int64_t pos) {
  const int64_t len = am_clamp64(pos + 1, 0, INT32_MAX);
  const int64_t w = p->dcp_world_size, k = p->dcp_rank, i = p->dcp_interleave;
  if (w <= 1) return (int32_t)am_div(len, p->indexer_ratio);
  if (p->indexer_mode == ATTNMETA_INDEXER_PREFILL)
    return (int32_t)am_dcp_local_len(am_div(len, p->indexer_ratio), w, k, i);
  return (int32_t)am_div(am_dcp_local_len(len, w, k, i), p->indexer_ratio);
}

/* Every DSV4 product of token t: compressed slots (lanes take the groups
 * in turn), the indexer's compressed length, then the two wide rows (all
 * lanes). */
AM_DEVICE void am_dsv4_token(const am_step_params *p, uint32_t t, int valid, am_req_span s,
                             int32_t seq_len, uint32_t lane, uint32_t lanes, int32_t *flags) {
  const int64_t pos = valid ? am_token_position(s, t, seq_len) : 0;
  uint32_t g;
  for (g = lane; g < (uint32_t)p->num_groups; g += lanes) {
    const am_group_params *grp = &p->groups[g];
    if (!grp->slots) continue;
    if (p->ext.pcp_logical_slots)
      grp->slots[t] = am_pcp_compressed_slot(&p->ext, grp, t);
    else
      grp->slots[t] = valid ? am_compressed_slot(p, grp, s.req, pos, flags) : -1;
  }
  if (p->indexer_lens && lane == 0) p->indexer_lens[t] = valid ? am_indexer_len(p, pos) : 0;
  if (p->swa.out || p->swa.lens) am_swa_token(p, t, valid, s, seq_len, pos, lane, lanes, flags);
  if (p->c128a.out || p->c128a.lens || p->c128a.out2)
    am_c128a_token(p, t, valid, s.req, pos, lane, lanes, flags);
}

/* Entry i in [T, C) of the capacity-long DSV4 outputs. */
AM_DEVICE void am_dsv4_tail(const am_step_params *p, uint32_t i) {
  int g;
  for (g = 0; g < p->num_groups; ++g)
    if (p->groups[g].slots) p->groups[g].slots[i] = -1;
  if (p->swa.lens) p->swa.lens[i] = 0;
  if (p->c128a.lens) p->c128a.lens[i] = 0;
  if (p->indexer_lens) p->indexer_lens[i] = 0;
}

/* Request r's compressed lengths: max(seq_lens[r], 0) / ratio per group. */
AM_DEVICE void am_dsv4_request(const am_step_params *p, const int32_t *AM_RESTRICT seq_lens,
                               uint32_t r) {
  int g;
  for (g = 0; g < p->num_groups; ++g) {
    const am_group_params *grp = &p->groups[g];
    if (grp->lens) grp->lens[r] = (int32_t)am_div(am_max64(seq_lens[r], 0), grp->ratio);
  }
}

#endif /* ATTNMETA_AM_DSV4_H */
