// SPDX-License-Identifier: Apache-2.0
/* Naive reference of the contract. See reference.h. */
#include "reference.h"

#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"

static void *xcalloc(int64_t n, size_t size) {
  void *p = calloc(n > 0 ? (size_t)n : 1, size);
  if (!p) abort();
  return p;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  if (v < lo) return lo;
  if (v > hi) return hi;
  return v;
}

/* Every buffer of amr_output with its element count. */
#define AMR_OUTPUT_BUFFERS(X)                       \
  X(token_to_req, in->T)                            \
  X(seq_lens_out, in->C)                            \
  X(global_seq_lens, in->T)                         \
  X(block_table_out, (int64_t)in->T * in->cols)     \
  X(decode_lens, in->T)                             \
  X(req_indices, in->T)                             \
  X(per_req_lens, in->R)                            \
  X(positions, in->T)                               \
  X(slots, in->C)

amr_output *amr_alloc(const amr_input *in) {
  amr_output *o = xcalloc(1, sizeof *o);
#define AMR_ALLOC_(member, count) o->member = xcalloc(count, sizeof *o->member);
  AMR_OUTPUT_BUFFERS(AMR_ALLOC_)
#undef AMR_ALLOC_
  return o;
}

void amr_free(amr_output *o) {
  if (!o) return;
#define AMR_FREE_(member, count) free(o->member);
  AMR_OUTPUT_BUFFERS(AMR_FREE_)
#undef AMR_FREE_
  free(o);
}

void amr_input_requests(amr_input *in, const int32_t *qsl, int32_t R, int32_t T, int32_t C,
                        const int32_t *seq_lens) {
  memset(in, 0, sizeof *in);
  in->qsl = qsl;
  in->R = R;
  in->T = T;
  in->C = C;
  in->seq_lens = seq_lens;
  in->num_mapped = -1;
}

void amr_input_table(amr_input *in, const int32_t *table, int32_t cols, int64_t stride,
                     int32_t block_size) {
  in->block_table = table;
  in->cols = cols;
  in->in_stride = stride;
  in->block_size = block_size;
}

void amr_input_dcp(amr_input *in, int32_t world, int32_t rank, int32_t interleave) {
  in->world = world;
  in->rank = rank;
  in->interleave = interleave;
}

int32_t amr_req(const int32_t *qsl, int32_t R, int64_t t) {
  int32_t r;
  for (r = 0; r < R; r++)
    if ((int64_t)qsl[r + 1] > t) return r;
  return R - 1;
}

int64_t amr_dcp_local_formula(int64_t len, int64_t world, int64_t rank, int64_t interleave) {
  const int64_t base = ((len / interleave) / world) * interleave;
  return base + clamp64(len - base * world - rank * interleave, 0, interleave);
}

int64_t amr_dcp_local_count(int64_t len, int64_t world, int64_t rank, int64_t interleave) {
  int64_t i, n = 0;
  for (i = 0; i < len; i++)
    if ((i / interleave) % world == rank) n++;
  return n;
}

/* Local length: count when short (obviously right), the formula otherwise. */
static int64_t dcp_local(int64_t len, const amr_input *in) {
  if (len <= 4096) return amr_dcp_local_count(len, in->world, in->rank, in->interleave);
  return amr_dcp_local_formula(len, in->world, in->rank, in->interleave);
}

/* Contract section 3, for a valid token of request r at `position`. */
static int64_t slot_of(const amr_input *in, int32_t r, int64_t position, int32_t *flags) {
  const int64_t bs = in->block_size, W = in->world, k = in->rank, I = in->interleave;
  const int64_t vb = bs * W;
  int64_t blk, vo, id;
  if (position < 0) {
    *flags |= ATTNMETA_FLAG_POSITION_NEGATIVE;
    return -1;
  }
  blk = position / vb;
  vo = position % vb;
  if (blk >= in->cols) {
    *flags |= ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
    return -1;
  }
  if ((vo / I) % W != k) return -1; /* another rank's token */
  id = in->block_table[(int64_t)r * in->in_stride + blk];
  if (id < 0) {
    *flags |= ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
    return -1;
  }
  return id * bs + (vo / (W * I)) * I + vo % I;
}

static int32_t check_requests(const amr_input *in, int *well_formed) {
  int32_t flags = 0, r;
  const int64_t total = in->qsl[in->R];
  if (in->qsl[0] != 0) flags |= ATTNMETA_FLAG_QSL_FIRST_NONZERO;
  for (r = 0; r < in->R; r++)
    if (in->qsl[r + 1] < in->qsl[r]) flags |= ATTNMETA_FLAG_QSL_DECREASING;
  if (total < 0 || total > in->T) flags |= ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE;
  *well_formed = flags == 0;
  if (in->seq_lens) {
    for (r = 0; r < in->R; r++) {
      const int64_t qlen = (int64_t)in->qsl[r + 1] - in->qsl[r];
      if (in->seq_lens[r] < 0) flags |= ATTNMETA_FLAG_SEQ_LEN_NEGATIVE;
      if (in->seq_lens[r] < qlen) flags |= ATTNMETA_FLAG_SEQ_LEN_LT_QLEN;
    }
  }
  return flags;
}

void amr_token(const amr_input *in, int64_t t, int32_t r, amr_token_out *o, int32_t *slot_flags) {
  const int32_t R = in->R;
  const int64_t actual = R > 0 ? clamp64(in->qsl[R], 0, in->T) : 0;
  const int64_t mapped = in->num_mapped < 0 ? (int64_t)in->qsl[R] : (int64_t)in->num_mapped;
  int64_t len = 0, position = 0;
  o->valid = t < actual;
  o->req = r;

  /* section 1 */
  o->token_to_req = (R > 0 && t < mapped) ? r : 0;

  /* sections 2 and 3 */
  if (o->valid && in->seq_lens) {
    const int64_t qlen = (int64_t)in->qsl[r + 1] - in->qsl[r];
    const int64_t off = t - in->qsl[r];
    position = (int64_t)in->seq_lens[r] - qlen + off;
    len = clamp64(position + 1, 0, INT32_MAX);
  }
  o->global_seq_len = (int32_t)len;
  o->seq_len = (int32_t)(in->world > 1 ? dcp_local(len, in) : len);
  o->decode_len = 1;
  o->req_index = (int32_t)(o->valid ? r : R + (t - actual));
  o->position = position;
  o->slot = o->valid ? slot_of(in, r, position, slot_flags) : -1;
}

void amr_build(const amr_input *in, amr_output *o) {
  const int32_t R = in->R, T = in->T;
  int64_t t;
  int32_t r, c;

  o->request_flags = check_requests(in, &o->well_formed);
  o->slot_flags = 0;

  for (r = 0; r < R; r++) o->per_req_lens[r] = (int32_t)((int64_t)in->qsl[r + 1] - in->qsl[r]);

  for (t = 0; t < T; t++) {
    amr_token_out k;
    amr_token(in, t, R > 0 ? amr_req(in->qsl, R, t) : 0, &k, &o->slot_flags);
    o->token_to_req[t] = k.token_to_req;
    o->global_seq_lens[t] = k.global_seq_len;
    o->seq_lens_out[t] = k.seq_len;
    for (c = 0; c < in->cols; c++)
      o->block_table_out[t * in->cols + c] =
          k.valid ? in->block_table[(int64_t)k.req * in->in_stride + c] : 0;
    o->decode_lens[t] = k.decode_len;
    o->req_indices[t] = k.req_index;
    o->positions[t] = k.position;
    o->slots[t] = k.slot;
  }
  for (t = T; t < in->C; t++) {
    o->seq_lens_out[t] = 0;
    o->slots[t] = -1;
  }
}
