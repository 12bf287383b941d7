// SPDX-License-Identifier: Apache-2.0
/* Naive reference of contract sections 5, 5a, 5b, 7 and 8. See reference_dsv4.h. */
#include "reference_dsv4.h"

#include <stdlib.h>

#include "attnmeta/attnmeta.h"

static void *xcalloc(int64_t n, size_t size) {
  void *p = calloc(n > 0 ? (size_t)n : 1, size);
  if (!p) abort();
  return p;
}

amr_dsv4_output *amr_dsv4_alloc(const amr_input *in, const amr_dsv4_input *d) {
  amr_dsv4_output *o = xcalloc(1, sizeof *o);
  int g;
  for (g = 0; g < d->ngroups; g++) {
    o->cslots[g] = xcalloc(in->C, sizeof(int64_t));
    o->clens[g] = xcalloc(in->R, sizeof(int32_t));
  }
  o->swa = xcalloc((int64_t)in->T * (d->swa_width > 0 ? d->swa_width : 0), sizeof(int32_t));
  o->swa_lens = xcalloc(in->C, sizeof(int32_t));
  o->c128a = xcalloc((int64_t)in->T * (d->c128a_width > 0 ? d->c128a_width : 0), sizeof(int32_t));
  o->c128a_lens = xcalloc(in->C, sizeof(int32_t));
  o->indexer_lens = xcalloc(in->C, sizeof(int32_t));
  o->c128a_prefill =
      xcalloc((int64_t)in->T * (d->c128a_width > 0 ? d->c128a_width : 0), sizeof(int32_t));
  return o;
}

void amr_dsv4_free(amr_dsv4_output *o) {
  int g;
  if (!o) return;
  for (g = 0; g < AMR_MAX_GROUPS; g++) {
    free(o->cslots[g]);
    free(o->clens[g]);
  }
  free(o->swa);
  free(o->swa_lens);
  free(o->c128a);
  free(o->c128a_lens);
  free(o->indexer_lens);
  free(o->c128a_prefill);
  free(o);
}

/* Section 5b: the compressed slot of token t in a group of ratio n and
 * storage block size bs from PCP's logical slot mapping, or -1: the token
 * has a logical slot and position + 1 is a multiple of n (as a floored
 * remainder, with no position overflowing). */
static int64_t pcp_slot(const attnmeta_step *s, int64_t t, int64_t n, int64_t bs) {
  const int64_t logical = s->pcp_logical_slots[t], lbs = s->pcp_logical_block_size;
  const int64_t rem = ((s->pcp_positions[t] % n) + n) % n;
  int64_t base;
  if (logical < 0 || rem != n - 1) return -1;
  /* a group whose slots are not wanted may have any block size: its value
   * is never compared, but must not overflow */
  if (__builtin_mul_overflow(logical / lbs, bs, &base)) return -1;
  return base + (logical % lbs) / n;
}

/* Is compressed (or KV) row c this rank's? (Contract: ((c % (bs W)) / I) % W == k.) */
static int mine(const amr_input *in, int64_t bs, int64_t c) {
  const int64_t vo = c % (bs * in->world);
  return (vo / in->interleave) % in->world == in->rank;
}

/* Part 1 section 3's placement of row c (>= 0) of request r's table with
 * block size bs, DCP of `in`: -1 for another rank's row; -1 and a flag for
 * a row past the table or a negative block id. The table check comes first,
 * as in section 3. */
static int64_t place(const amr_input *in, const amr_table *tb, int32_t r, int64_t bs, int64_t c,
                     int32_t *flags) {
  const int64_t W = in->world, I = in->interleave;
  const int64_t vb = bs * W;
  const int64_t blk = c / vb, vo = c % vb;
  int64_t id;
  if (blk >= tb->cols) {
    *flags |= ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
    return -1;
  }
  if (!mine(in, bs, c)) return -1;
  id = tb->ids[(int64_t)r * tb->stride + blk];
  if (id < 0) {
    *flags |= ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
    return -1;
  }
  return id * bs + (vo / (W * I)) * I + vo % I;
}

/* A placement stored as int32: outside [0, INT32_MAX] it is -1 and flagged. */
static int32_t as_int32(int64_t v, int32_t *flags) {
  if (v > INT32_MAX) {
    *flags |= ATTNMETA_FLAG_SLOT_OUT_OF_RANGE;
    return -1;
  }
  return (int32_t)v;
}

/* The slot of KV position q (>= 0) in the SWA group: no DCP. */
static int32_t swa_slot(const amr_dsv4_input *d, int32_t r, int64_t q, int32_t *flags) {
  const int64_t bs = d->swa_block_size;
  const int64_t blk = q / bs;
  int64_t id;
  if (blk >= d->swa_table.cols) {
    *flags |= ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
    return -1;
  }
  id = d->swa_table.ids[(int64_t)r * d->swa_table.stride + blk];
  if (id < 0) {
    *flags |= ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
    return -1;
  }
  return as_int32(id * bs + q % bs, flags);
}

/* Section 2a's rank-local share of a length: counted one by one when short. */
static int64_t local_share(const amr_input *in, int64_t len) {
  if (len <= 4096) return amr_dcp_local_count(len, in->world, in->rank, in->interleave);
  return amr_dcp_local_formula(len, in->world, in->rank, in->interleave);
}

/* Section 5a: the indexer's compressed length of a valid token at `pos`. */
static int32_t indexer_len(const amr_input *in, const amr_dsv4_input *d, int64_t pos) {
  const int64_t len = pos + 1 > 0 ? pos + 1 : 0;
  if (in->world == 1) return (int32_t)(len / d->indexer_ratio);
  if (d->indexer_mode == ATTNMETA_INDEXER_PREFILL)
    return (int32_t)local_share(in, len / d->indexer_ratio);
  return (int32_t)(local_share(in, len) / d->indexer_ratio);
}

void amr_dsv4_build(const amr_input *in, const amr_dsv4_input *d, amr_dsv4_output *o) {
  const int32_t R = in->R, T = in->T;
  int64_t actual = R > 0 ? in->qsl[R] : 0;
  int64_t t, j;
  int32_t r;
  int g;

  if (actual < 0) actual = 0;
  if (actual > T) actual = T;
  for (g = 0; g < AMR_MAX_GROUPS; g++) o->group_flags[g] = 0;
  o->swa_flags = o->c128a_flags = 0;

  /* per request: compressed lengths */
  for (g = 0; g < d->ngroups; g++)
    for (r = 0; r < R; r++)
      o->clens[g][r] = (in->seq_lens[r] > 0 ? in->seq_lens[r] : 0) / d->groups[g].ratio;

  for (t = 0; t < T; t++) {
    const int valid = t < actual;
    int64_t qlen = 0, pos = 0, seq = 0;
    r = 0;
    if (valid) {
      r = amr_req(in->qsl, R, t);
      qlen = (int64_t)in->qsl[r + 1] - in->qsl[r];
      seq = in->seq_lens[r];
      pos = seq - qlen + (t - in->qsl[r]);
    }

    /* section 5 */
    for (g = 0; g < d->ngroups; g++) {
      const amr_group *gr = &d->groups[g];
      int64_t v = -1;
      if (d->step && d->step->pcp_logical_slots) {
        v = pcp_slot(d->step, t, gr->ratio, gr->block_size); /* no table, nothing flagged */
      } else if (valid && pos < 0) {
        o->group_flags[g] |= ATTNMETA_FLAG_POSITION_NEGATIVE;
      } else if (valid && (pos + 1) % gr->ratio == 0) {
        v = place(in, &gr->table, r, gr->block_size, pos / gr->ratio, &o->group_flags[g]);
      }
      o->cslots[g][t] = v;
    }

    /* section 5a */
    if (d->indexer_ratio >= 1) o->indexer_lens[t] = valid ? indexer_len(in, d, pos) : 0;

    /* section 7 */
    if (d->swa_width >= 0) {
      /* a token with no KV slot of its own sees nothing, and nothing is flagged */
      const int seen = valid && !(d->swa_token_slots && d->swa_token_slots[t] < 0);
      int64_t start = 0, lens = 0;
      if (seen && d->swa_mode == ATTNMETA_SWA_NON_CAUSAL) {
        const int64_t prefix = seq - qlen;
        start = prefix - d->swa_window > 0 ? prefix - d->swa_window : 0;
        lens = seq - start;
        if (lens < 0) lens = 0;
        if (lens > d->swa_width) lens = d->swa_width;
      } else if (seen && pos < 0) {
        o->swa_flags |= ATTNMETA_FLAG_POSITION_NEGATIVE;
      } else if (seen) {
        /* in-image visibility (left, right) and the replay floor: by the
         * contract's formula, in 64 bits */
        const attnmeta_step *st = d->step;
        const int64_t left = st && st->swa_left_visible ? st->swa_left_visible[t] : 0;
        const int64_t right = st && st->swa_right_visible ? st->swa_right_visible[t] : 0;
        const int64_t extra = left - (d->swa_window - 1) > 0 ? left - (d->swa_window - 1) : 0;
        const int64_t end = pos + right + 1;
        start = pos - (d->swa_window - 1) - extra;
        if (start < 0) start = 0;
        if (st && st->swa_replay_start && st->swa_replay_start[r] > start)
          start = st->swa_replay_start[r];
        lens = end - start;
        if (lens < 0) lens = 0;
        if (lens > d->swa_width) lens = d->swa_width;
      }
      o->swa_lens[t] = (int32_t)lens;
      for (j = 0; j < d->swa_width; j++)
        o->swa[t * d->swa_width + j] = j < lens ? swa_slot(d, r, start + j, &o->swa_flags) : -1;
    }

    /* section 8 */
    if (d->c128a_width >= 0) {
      /* mixed mode: a decode token is a global one, a prefill token a local
       * one whose row goes to the prefill table (row t - D); each token's
       * row of the other table (prefill row T - D + t of a decode token,
       * row t of a prefill token) is -1 */
      const int mixed = d->c128a_mode == ATTNMETA_C128A_MIXED;
      const int local = d->c128a_mode == ATTNMETA_C128A_LOCAL ||
                        (mixed && t >= d->c128a_num_decode);
      int64_t n = 0, c, filled = 0;
      int32_t *row = mixed && local ? o->c128a_prefill + (t - d->c128a_num_decode) * d->c128a_width
                                    : o->c128a + t * d->c128a_width;
      if (mixed) {
        int32_t *none = local ? o->c128a + t * d->c128a_width
                              : o->c128a_prefill +
                                    ((int64_t)T - d->c128a_num_decode + t) * d->c128a_width;
        for (j = 0; j < d->c128a_width; j++) none[j] = -1;
      }
      if (valid && pos >= 0) {
        n = (pos + 1) / d->c128a_ratio;
        if (n > d->c128a_width) n = d->c128a_width;
      }
      for (c = 0; c < n; c++) {
        if (local) {
          row[filled++] = (int32_t)c;
        } else if (in->world == 1 || mine(in, d->c128a_block_size, c)) {
          /* another rank's rows are left out: the owned ones pack to the front */
          const int64_t v =
              place(in, &d->c128a_table, r, d->c128a_block_size, c, &o->c128a_flags);
          row[filled++] = v < 0 ? -1 : as_int32(v, &o->c128a_flags);
        }
      }
      o->c128a_lens[t] = (int32_t)filled;
      for (j = filled; j < d->c128a_width; j++) row[j] = -1;
    }
  }
  for (t = T; t < in->C; t++) {
    for (g = 0; g < d->ngroups; g++) o->cslots[g][t] = -1;
    o->swa_lens[t] = 0;
    o->c128a_lens[t] = 0;
    o->indexer_lens[t] = 0;
  }
}
