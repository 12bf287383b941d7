// SPDX-License-Identifier: Apache-2.0
/* Naive reference of the top-k conversion. See topk_reference.h. */
#include "topk_reference.h"

#include <stdlib.h>

#include "attnmeta/attnmeta.h"

/* The token's request, or -1 when the token is padding or its request is
 * not in [0, R). req(t): the smallest r with qsl[r + 1] > t, else R - 1. */
static int64_t request_of(const amr_topk_input *in, int64_t t) {
  int64_t r, actual;
  if (in->num_reqs == 0) return -1;
  if (!in->qsl) {
    r = in->req_id[t];
    return (r >= 0 && r < in->num_reqs) ? r : -1;
  }
  actual = in->qsl[in->num_reqs];
  if (actual < 0) actual = 0;
  if (actual > in->num_tokens) actual = in->num_tokens;
  if (t >= actual) return -1;
  for (r = 0; r < in->num_reqs; r++)
    if (in->qsl[r + 1] > t) return r;
  return in->num_reqs - 1;
}

/* Entry x of token t (request r >= 0): the slot or -1, flags raised. */
static int64_t convert(const amr_topk_input *in, int64_t t, int64_t r, int64_t x, int32_t *flags) {
  int64_t local, blk, off, value;
  const int64_t W = in->world, I = in->interleave;
  /* 1. */
  if (x < 0) return -1;
  if (in->prefill_req && in->prefill_req[t] >= 0) {
    /* 2. a prefill token: the raw x, no DCP, no table bound */
    const int64_t p = in->prefill_req[t];
    if (p >= in->num_prefill) {
      *flags |= ATTNMETA_FLAG_WORKSPACE_OUT_OF_RANGE;
      return -1;
    }
    value = (int64_t)in->workspace_starts[p] + x;
  } else {
    /* 3. DCP: the owner of x; a peer view keeps every owner's entries */
    const int64_t owner = (x / I) % W;
    if (in->peer_blocks == 0 && owner != in->rank) return -1;
    local = (x / (W * I)) * I + x % I;
    /* 4. */
    blk = local / in->block_size;
    off = local % in->block_size;
    if (blk < 0 || blk >= in->cols) {
      *flags |= ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
      return -1;
    }
    /* 5. */
    {
      const int64_t id = in->table[r * in->table_stride + blk];
      if (id < 0 || (in->peer_blocks > 0 && id >= in->peer_blocks)) {
        *flags |= ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
        return -1;
      }
      /* a peer view: block id of the owner's segment, peer_blocks a segment */
      value = (owner * in->peer_blocks + id) * in->stride_rows + off;
    }
  }
  /* 6. */
  if (value < 0 || value > INT32_MAX) {
    *flags |= ATTNMETA_FLAG_SLOT_OUT_OF_RANGE;
    return -1;
  }
  return value;
}

void amr_topk(const amr_topk_input *in, int32_t *out, int32_t *count, int32_t *flags) {
  int64_t t, j;
  const int64_t K = in->topk_count;
  int64_t *row = malloc((size_t)K * sizeof *row);
  *flags = 0;
  for (t = 0; t < in->num_tokens; t++) {
    const int64_t r = request_of(in, t);
    int64_t n = 0;
    for (j = 0; j < K; j++) {
      row[j] = r < 0 ? -1 : convert(in, t, r, in->topk[t * in->topk_stride + j], flags);
      if (row[j] != -1) n++;
    }
    if (in->token_slot && in->token_slot[t] < 0) n = 0;
    count[t] = (int32_t)n;
    if (in->compact) {
      int64_t at = 0;
      if (n > 0)
        for (j = 0; j < K; j++)
          if (row[j] != -1) out[t * K + at++] = (int32_t)row[j];
      for (; at < K; at++) out[t * K + at] = -1;
    } else {
      for (j = 0; j < K; j++) out[t * K + j] = (int32_t)row[j];
    }
  }
  free(row);
}

void amr_peer_table(const amr_peer_table_input *in, int32_t *out, int32_t *flags) {
  int64_t r, page;
  *flags = 0;
  for (r = 0; r < in->num_reqs; r++)
    for (page = 0; page < in->width; page++) {
      const int64_t owner = page % in->world, owner_page = page / in->world;
      const int64_t rotated = ((owner - in->rank) % in->world + in->world) % in->world;
      int64_t id = -1, block = -1;
      if (owner_page < in->cols)
        id = in->tables[owner * in->owner_stride + r * in->row_stride + owner_page];
      if (id >= in->segment) {
        *flags |= ATTNMETA_FLAG_BLOCK_ID_NEGATIVE; /* past the owner's segment */
      } else if (id >= 0) {
        block = rotated * in->segment + id;
        if (block > INT32_MAX) {
          *flags |= ATTNMETA_FLAG_SLOT_OUT_OF_RANGE;
          block = -1;
        }
      }
      out[r * in->width + page] = (int32_t)block;
    }
}
