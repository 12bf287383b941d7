/*
 * The one kernel body of a decode step: every product of the contract built
 * in a single launch, req(t) found once per token and shared by all of them.
 * Written once in the dialect; CUDA, HIP and the CPU backend run this code.
 *
 * Work split (each loop is grid-stride, so any block/grid size is correct):
 *  1. per token t in [0, T): a group of `lanes` threads (the block's x
 *     dimension) owns the token; all lanes copy its block-table row, lane 0
 *     writes its scalar products;
 *  2. per tail entry t in [T, C): seq_lens_out = 0, slot_mapping = -1;
 *  3. per request r in [0, R): per_req_lens and the checks of the boundaries.
 */
#ifndef ATTNMETA_AM_STEP_KERNEL_H
#define ATTNMETA_AM_STEP_KERNEL_H

#include "am_dialect.h"
#include "am_step_params.h"
#include "am_token_math.h"

/* Block-shared memory the body needs for `p` (in int32 units). */
AM_DEVICE int64_t am_step_stage_words(const am_step_params *p) {
  if (!p->stage) return 0;
  return (int64_t)p->num_reqs + 1 + (p->seq_lens ? (int64_t)p->num_reqs : 0);
}

/* Copies one block-table row (or zeroes it when `in_row` is NULL), lanes
 * [0, lanes) of the token's group splitting the columns. Four vectors are
 * loaded before any is stored, so each thread keeps several loads in flight. */
AM_DEVICE void am_copy_row(const int32_t *AM_RESTRICT in_row, int32_t *AM_RESTRICT out_row,
                           int64_t cols, int64_t lane, int64_t lanes, int vector_rows) {
  int64_t c = lane;
  if (vector_rows) {
    const int64_t nvec = cols / 4;
    const am_i32x4 *AM_RESTRICT in4 = (const am_i32x4 *)(const void *)in_row;
    am_i32x4 *AM_RESTRICT out4 = (am_i32x4 *)(void *)out_row;
    if (in_row) {
      for (; c + 3 * lanes < nvec; c += 4 * lanes) {
        const am_i32x4 a = in4[c], b = in4[c + lanes], d = in4[c + 2 * lanes],
                       e = in4[c + 3 * lanes];
        out4[c] = a;
        out4[c + lanes] = b;
        out4[c + 2 * lanes] = d;
        out4[c + 3 * lanes] = e;
      }
      for (; c < nvec; c += lanes) out4[c] = in4[c];
    } else {
      am_i32x4 zero;
      zero.x = zero.y = zero.z = zero.w = 0;
      for (; c < nvec; c += lanes) out4[c] = zero;
    }
    c = nvec * 4 + lane;
  }
  if (in_row) {
    for (; c < cols; c += lanes) out_row[c] = in_row[c];
  } else {
    for (; c < cols; c += lanes) out_row[c] = 0;
  }
}

/* Scalar products of one token (everything but its block-table row).
 * `seq_len` is seq_lens[span.req], loaded by the caller (0 when not needed). */
AM_DEVICE void am_token_scalars(const am_step_params *p, int full, int64_t t, am_req_span span,
                                int64_t seq_len, int valid, int64_t actual, int64_t mapped,
                                int32_t *flags) {
  const int64_t num_reqs = p->num_reqs;
  const int64_t r = span.req;
  int64_t position = 0;
  int64_t causal = 0;

  if (p->token_to_req) p->token_to_req[t] = (t < mapped && num_reqs > 0) ? (int32_t)r : 0;
  if (p->decode_lens_out) p->decode_lens_out[t] = 1;
  if (p->req_indices_out)
    p->req_indices_out[t] = (int32_t)(valid ? r : num_reqs + (t - actual));
  if (valid) {
    const int64_t qlen = span.end - span.start;
    const int64_t off = t - span.start;
    position = seq_len - qlen + off;
    causal = am_causal_len(seq_len, qlen, off);
  }
  if (full && p->global_seq_lens_out) p->global_seq_lens_out[t] = (int32_t)causal;
  if (p->seq_lens_out) {
    p->seq_lens_out[t] =
        (int32_t)(full && p->dcp_world_size > 1 ? am_dcp_local_len(causal, p->dcp_world_size, p->dcp_rank,
                                                            p->dcp_interleave)
                                        : causal);
  }
  if (full && p->positions) p->positions[t] = position;
  if (full && p->slot_mapping) {
    p->slot_mapping[t] =
        valid ? am_slot(position, p->block_table, r * p->block_table_stride, p->cols,
                        p->block_size, p->dcp_world_size, p->dcp_rank, p->dcp_interleave, flags)
              : -1;
  }
}

/* Checks of request r's boundaries and lengths, flags into *flags. */
AM_DEVICE void am_check_request(const int32_t *AM_RESTRICT qsl,
                                const int32_t *AM_RESTRICT seq_lens, int64_t r, int32_t *flags) {
  const int64_t start = qsl[r];
  const int64_t qlen = (int64_t)qsl[r + 1] - start;
  if (r == 0 && start != 0) *flags |= ATTNMETA_FLAG_QSL_FIRST_NONZERO;
  if (qlen < 0) *flags |= ATTNMETA_FLAG_QSL_DECREASING;
  if (seq_lens) {
    if (seq_lens[r] < 0) *flags |= ATTNMETA_FLAG_SEQ_LEN_NEGATIVE;
    if (seq_lens[r] < qlen) *flags |= ATTNMETA_FLAG_SEQ_LEN_LT_QLEN;
  }
}

/* stage: block-shared scratch of am_step_stage_words(p) int32 (may be NULL
 * when p->stage is 0). `full` is a compile-time constant at each call: 0
 * builds the lean kernel for steps without positions, slots, global lengths,
 * DCP or staging (p->full says which one a step needs), whose smaller code
 * starts faster on a cold multiprocessor. */
AM_DEVICE void am_step_body(const am_step_params *p, am_thread th, int32_t *stage, int full) {
  const int64_t num_reqs = p->num_reqs;
  const int64_t num_tokens = p->num_tokens;
  const int64_t gid = th.block * th.block_dim + th.thread;
  const int64_t gstride = th.grid_dim * th.block_dim;
  const int32_t *qsl = p->qsl;
  const int32_t *seq_lens = p->seq_lens;
  int32_t flags = 0;
  int64_t total, actual, mapped, i, t;

  if (full && p->stage) { /* block-uniform: every thread reaches the barrier */
    for (i = th.thread; i <= num_reqs; i += th.block_dim) stage[i] = qsl[i];
    if (seq_lens)
      for (i = th.thread; i < num_reqs; i += th.block_dim) stage[num_reqs + 1 + i] = seq_lens[i];
    AM_BARRIER();
    qsl = stage;
    if (seq_lens) seq_lens = stage + num_reqs + 1;
  }

  total = qsl[num_reqs];
  actual = num_reqs > 0 ? am_clamp64(total, 0, num_tokens) : 0;
  mapped = am_min64(p->num_mapped < 0 ? total : (int64_t)p->num_mapped, num_tokens);

  /* 1. per token: the `lanes` threads of a group share one token */
  for (t = th.block * th.groups + th.group; t < num_tokens; t += th.grid_dim * th.groups) {
    const am_req_span span =
        num_reqs > 0 ? am_find_req(qsl, num_reqs, t) : am_make_span(0, 0, 0);
    const int valid = t < actual;
    /* Loaded by every lane (one broadcast) before the row copy, so the two
     * loads overlap instead of following each other. */
    const int64_t seq_len = (valid && seq_lens) ? seq_lens[span.req] : 0;
    if (p->block_table_out) {
      am_copy_row(valid ? p->block_table + span.req * p->block_table_stride : (const int32_t *)0,
                  p->block_table_out + t * p->block_table_out_stride, p->cols, th.lane, th.lanes,
                  p->vector_rows);
    }
    if (th.lane == 0) am_token_scalars(p, full, t, span, seq_len, valid, actual, mapped, &flags);
  }

  /* 2. tail [T, C) of the capacity-long outputs */
  if (p->seq_lens_out || (full && p->slot_mapping)) {
    for (i = num_tokens + gid; i < p->capacity; i += gstride) {
      if (p->seq_lens_out) p->seq_lens_out[i] = 0;
      if (full && p->slot_mapping) p->slot_mapping[i] = -1;
    }
  }

  /* 3. per request, last: its loads hit lines the token loop brought in,
   * while a store before the token loop would have ordered every load of
   * that loop behind it (outputs may alias inputs as far as the compiler
   * knows) */
  if (p->per_req_lens_out || p->error_word) {
    for (i = gid; i < num_reqs; i += gstride) {
      if (p->per_req_lens_out) p->per_req_lens_out[i] = (int32_t)((int64_t)qsl[i + 1] - qsl[i]);
      if (p->error_word) am_check_request(qsl, seq_lens, i, &flags);
    }
    if (gid == 0 && p->error_word) {
      if (total < 0 || total > num_tokens) flags |= ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE;
      if (num_reqs == 0 && total != 0) flags |= ATTNMETA_FLAG_QSL_FIRST_NONZERO;
    }
  }

  if (flags && p->error_word) AM_ATOMIC_OR(p->error_word, flags);
}

#endif /* ATTNMETA_AM_STEP_KERNEL_H */
