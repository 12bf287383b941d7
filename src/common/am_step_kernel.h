// SPDX-License-Identifier: Apache-2.0
/*
 * The one kernel body of a decode step: every product of the contract built
 * in a single launch, req(t) found once per token and shared by all of them.
 * Written once in the dialect; CUDA, HIP and the CPU backend run this code.
 *
 * Work split (each loop is grid-stride, so any block/grid size is correct):
 *  1. per token t in [0, T): a group of `lanes` threads (the block's x
 *     dimension) owns the token; all lanes copy its block-table row, lane 0
 *     writes its scalar products;
 *  2. per tail entry t in [T, C): seq_lens_out = 0 (16-byte stores where
 *     aligned), slot_mapping = -1;
 *  3. per request r in [0, R): per_req_lens and the checks of the boundaries.
 * A DSV4 step (AM_VARIANT_DSV4) adds its products to each loop: per token
 * the compressed slots and the wide SWA and C128A rows (am_dsv4.h, all
 * lanes), per tail entry and per request their clears and lengths.
 */
#ifndef ATTNMETA_AM_STEP_KERNEL_H
#define ATTNMETA_AM_STEP_KERNEL_H

#include "am_dialect.h"
#include "am_step_params.h"
#include "am_dsv4.h"
#include "am_row_copy.h"
#include "am_token_math.h"

/* Which products a step wants: presence tests folded to constants where a
 * compiled-in variant guarantees them. */
#define AM_WANTS(variant, ptr) (((variant) & AM_VARIANT_INDEXER) || (ptr) != 0)
#define AM_WANTS_FULL(variant, ptr) (((variant) & AM_VARIANT_FULL) && (ptr) != 0)

/* Scalar products of one token (everything but its block-table row).
 * `seq_len` is seq_lens[span.req], loaded by the caller (0 when not needed).
 * The lengths are computed in 64 bits: hostile boundaries and lengths may
 * be any int32. */
AM_DEVICE void am_token_scalars(const am_step_params *p, int variant, uint32_t t,
                                am_req_span span, int32_t seq_len, int valid, uint32_t actual,
                                uint32_t mapped, int32_t *flags) {
  const int full = variant & AM_VARIANT_FULL;
  const int32_t r = span.req;
  int64_t position = 0;
  int64_t causal = 0;

  if (AM_WANTS(variant, p->token_to_req))
    p->token_to_req[t] = (t < mapped && p->num_reqs > 0) ? r : 0;
  if (AM_WANTS(variant, p->decode_lens_out)) p->decode_lens_out[t] = 1;
  if (AM_WANTS(variant, p->req_indices_out))
    p->req_indices_out[t] = valid ? r : (int32_t)((uint32_t)p->num_reqs + (t - actual));
  if (valid && am_span_holds(span, t)) {
    /* the usual case, in 32 bits: d = qlen - off lies in [1, INT32_MAX] */
    const int32_t d = span.end - (int32_t)t;
    position = (int64_t)seq_len - d;
    causal = seq_len >= d ? seq_len - d + 1 : 0;
  } else if (valid) { /* hostile boundaries: t outside its request's span */
    const int64_t qlen = (int64_t)span.end - span.start;
    const int64_t off = (int64_t)t - span.start;
    position = (int64_t)seq_len - qlen + off;
    causal = am_causal_len(seq_len, qlen, off);
  }
  if (AM_WANTS_FULL(variant, p->global_seq_lens_out)) p->global_seq_lens_out[t] = (int32_t)causal;
  if (AM_WANTS(variant, p->seq_lens_out)) {
    p->seq_lens_out[t] = (int32_t)(full && p->dcp_world_size > 1
                                       ? am_dcp_local_len(causal, p->dcp_world_size, p->dcp_rank,
                                                          p->dcp_interleave)
                                       : causal);
  }
  if (AM_WANTS_FULL(variant, p->positions)) p->positions[t] = position;
  if (AM_WANTS_FULL(variant, p->slot_mapping)) {
    p->slot_mapping[t] =
        valid ? am_slot(position, p->block_table, (int64_t)r * p->block_table_stride, p->cols,
                        p->block_size, p->dcp_world_size, p->dcp_rank, p->dcp_interleave, flags)
              : -1;
  }
}

/* What a token speculates on guessed request g (< R): this lane's first
 * batch of g's block-table row copied to token t's row, returned, and g's
 * length, into *len. */
AM_DEVICE am_row_batch am_load_guessed_row(const am_step_params *p,
                                           const int32_t *AM_RESTRICT seq_lens, uint32_t g,
                                           uint32_t t, uint32_t lane, uint32_t lanes,
                                           int vector_rows, int32_t *len) {
  const int32_t *in_row = p->block_table + (int64_t)g * p->block_table_stride;
  const am_row_plan r = am_plan_row(
      in_row, p->block_table_out + (int64_t)t * p->block_table_out_stride, (uint32_t)p->cols,
      vector_rows);
  const am_row_batch b = am_load_batch(in_row, &r, lane, lanes, vector_rows);
  if (seq_lens) *len = seq_lens[g];
  return b;
}

/* The realigned kernels' speculation on guessed request g (< R, with
 * boundaries gs and ge as loaded): this lane's first batch of g's row
 * loaded together with those boundaries, and where the guess holds for
 * token t, stored with the rest of the row at once (returns 1). Nothing
 * speculated outlives the test of the guess: held across the search for
 * the request, a batch of realigned vectors cost the kernel more registers
 * than it saved (bench/NOTES.md, rounds four and six). */
AM_DEVICE int am_copy_guessed_realigned_row(const am_step_params *p, uint32_t g, int32_t gs,
                                            int32_t ge, int32_t total, uint32_t t,
                                            uint32_t lane, uint32_t lanes, int variant) {
  const int32_t *in_row = p->block_table + (int64_t)g * p->block_table_stride;
  int32_t *out_row = p->block_table_out + (int64_t)t * p->block_table_out_stride;
  const am_row_plan r = am_plan_row(in_row, out_row, (uint32_t)p->cols, AM_ROWS_REALIGNED);
  am_realigned_batch q;
  if (r.n == 0) return 0; /* the host speculates only on rows with a vector */
  q = am_load_realigned_first(in_row, &r, lane, lanes);
  if (!((int32_t)t < total && gs <= (int32_t)t && (int32_t)t < ge)) return 0;
  am_store_realigned_first(out_row, &r, lane, lanes, &q);
  /* the rest, if the first batch did not cover the lane's share (tested
   * here, not left to the copy: H200, 1024 x 1 odd 5.90 -> 5.50 us) */
  if (am_realigned_rest_left(&r, lane, lanes))
    am_copy_row(in_row, out_row, &r, (uint32_t)p->cols, lane, lanes, AM_ROWS_REALIGNED, variant,
                lane + 4 * lanes);
  return 1;
}

/* Checks of request r's boundaries and lengths, flags into *flags. */
AM_DEVICE void am_check_request(const int32_t *AM_RESTRICT qsl,
                                const int32_t *AM_RESTRICT seq_lens, uint32_t r, int32_t *flags) {
  const int64_t start = qsl[r];
  const int64_t qlen = (int64_t)qsl[r + 1] - start;
  if (r == 0 && start != 0) *flags |= ATTNMETA_FLAG_QSL_FIRST_NONZERO;
  if (qlen < 0) *flags |= ATTNMETA_FLAG_QSL_DECREASING;
  if (seq_lens) {
    if (seq_lens[r] < 0) *flags |= ATTNMETA_FLAG_SEQ_LEN_NEGATIVE;
    if (seq_lens[r] < qlen) *flags |= ATTNMETA_FLAG_SEQ_LEN_LT_QLEN;
  }
}

/* The tails [T, C) of the capacity-long outputs: seq_lens_out = 0 (16-byte
 * stores where aligned), slot_mapping = -1. They depend on no input, so an
 * early-started kernel clears them before it waits for the kernel ahead. */
AM_DEVICE void am_clear_tails(const am_step_params *p, int variant, uint32_t rgid,
                              uint32_t gstride) {
  const uint32_t num_tokens = (uint32_t)p->num_tokens;
  uint32_t i;
  if (AM_WANTS(variant, p->seq_lens_out)) {
    const uint32_t vb = (uint32_t)p->tail_vec_begin, ve = (uint32_t)p->tail_vec_end;
    const uint32_t nvec = (ve - vb) / 4, head = vb - num_tokens;
    const uint32_t items = nvec + head + ((uint32_t)p->capacity - ve);
    am_i32x4 *AM_RESTRICT tail4 = (am_i32x4 *)(void *)(p->seq_lens_out + vb);
    am_i32x4 zero;
    zero.x = zero.y = zero.z = zero.w = 0;
    for (i = rgid; i < items; i += gstride) {
      if (i < nvec) {
        tail4[i] = zero;
      } else {
        const uint32_t j = i - nvec; /* the few elements before and after the vectors */
        p->seq_lens_out[j < head ? num_tokens + j : ve + (j - head)] = 0;
      }
    }
  }
  if (AM_WANTS_FULL(variant, p->slot_mapping))
    for (i = num_tokens + rgid; i < (uint32_t)p->capacity; i += gstride) p->slot_mapping[i] = -1;
}

/* stage: block-shared scratch of am_step_stage_words(p) int32 (may be NULL
 * when p->stage is 0). `variant` (AM_VARIANT_*) is a compile-time constant
 * in each GPU kernel, so the tests it settles vanish from the machine code;
 * any variant whose facts hold for the step gives the same bytes.
 *
 * Indices are 32-bit (T, R, C and cols are int32; the host bounds the grid);
 * only byte offsets into the tables are 64-bit. A token's first round of
 * loads is the total, its guessed request's boundaries and, when the host
 * asks to speculate, that request's length and first row batch: when the
 * guess holds (plain decode, equal query lengths) nothing waits for a
 * second round before the stores. Block-wide work (the tail, the requests)
 * runs on the threads in reverse, so the first warps, which own the first
 * tokens, finish sooner on small steps. */
AM_DEVICE void am_step_body(const am_step_params *p, am_thread th, int32_t *stage, int variant) {
  const int full = variant & AM_VARIANT_FULL;
  const int early = variant & AM_VARIANT_EARLY_START;
  const uint32_t num_reqs = (uint32_t)p->num_reqs;
  const uint32_t num_tokens = (uint32_t)p->num_tokens;
  const uint32_t last = am_wrapping_sub(num_reqs, 1); /* used only when num_reqs > 0 */
  const uint32_t gstride = th.grid_dim * th.block_dim;
  const uint32_t gid = th.block * th.block_dim + th.thread;
  const uint32_t rgid = p->forward_order ? gid : gstride - 1 - gid;
  const uint32_t token_stride = th.grid_dim * th.groups;
  const uint32_t cols = (uint32_t)p->cols;
  /* a compile-time constant but in the lean and full kernels, whose rows
   * are aligned or scalar (realigned only in the kernels for them) */
  const int vector_rows = (variant & AM_VARIANT_REALIGNED)    ? AM_ROWS_REALIGNED
                          : (variant & AM_VARIANT_INDEXER)    ? AM_ROWS_ALIGNED
                          : p->vector_rows == AM_ROWS_ALIGNED ? AM_ROWS_ALIGNED
                                                              : AM_ROWS_SCALAR;
  int32_t *const error_word = (variant & AM_VARIANT_INDEXER) ? (int32_t *)0 : p->error_word;
  const int32_t *AM_RESTRICT qsl = p->qsl;
  const int32_t *AM_RESTRICT seq_lens = p->seq_lens;
  int32_t flags = 0;
  int32_t total;
  uint32_t actual, mapped, i, t;

  if (early) { /* nothing before the wait reads an input */
    am_clear_tails(p, variant, rgid, gstride);
    AM_WAIT_FOR_PRIOR_KERNELS();
    /* only now: a next kernel started early clears its tails while this
     * one runs, never while the kernel ahead of this one still does */
    AM_LET_NEXT_KERNEL_START();
  }

  if (full && p->stage) { /* block-uniform: every thread reaches the barrier */
    for (i = th.thread; i <= num_reqs; i += th.block_dim) stage[i] = qsl[i];
    if (seq_lens)
      for (i = th.thread; i < num_reqs; i += th.block_dim) stage[num_reqs + 1 + i] = seq_lens[i];
    AM_BARRIER();
    qsl = stage;
    if (seq_lens) seq_lens = stage + num_reqs + 1;
  }

  total = qsl[num_reqs];
  actual = num_reqs > 0 ? (uint32_t)am_clamp64(total, 0, num_tokens) : 0;
  mapped = (uint32_t)am_clamp64(p->num_mapped < 0 ? total : p->num_mapped, 0, num_tokens);

  /* 1. per token: the `lanes` threads of a group share one token */
  for (t = th.block * th.groups + th.group; t < num_tokens; t += token_stride) {
    am_req_span span = am_make_span(0, 0, 0);
    am_row_batch pre;
    int32_t pre_len = 0;
    int pre_hit = 0;
    int row_done = 0; /* a realigned row copied on the guess */
    const int valid = t < actual;
    int32_t seq_len = 0;
    if (num_reqs > 0) {
      /* Each guess loads its boundaries and, when the host allows it for
       * that guess, its length and this lane's first row batch, all in one
       * round; the speculated data is used only if the guess holds. All in
       * bounds whatever the data: g < R, and a first batch exists. */
      uint32_t g = am_guess_req(t, p->guess_mul, p->guess_shift, last);
      int32_t gs = qsl[g], ge = qsl[g + 1];
      /* the realigned-rows kernels speculate their own way (below) */
      const int may_speculate = !(variant & AM_VARIANT_REALIGNED);
      int spec = may_speculate && (p->speculate & AM_SPECULATE_FIRST);
      if (spec) pre = am_load_guessed_row(p, seq_lens, g, t, th.lane, th.lanes, vector_rows, &pre_len);
      if ((variant & AM_VARIANT_REALIGNED) && (p->speculate & AM_SPECULATE_FIRST))
        row_done = am_copy_guessed_realigned_row(p, g, gs, ge, total, t, th.lane, th.lanes, variant);
      if ((int32_t)t < total && !(gs <= (int32_t)t && (int32_t)t < ge)) {
        /* the first guess missed: what it speculated is not this token's
         * (speculating on the second guess too showed no win on the H200:
         * bench/NOTES.md, round three) */
        spec = 0;
        g = am_total_guess(t, num_reqs, total);
        gs = qsl[g];
        ge = qsl[g + 1];
      }
      span = am_find_req(qsl, num_reqs, t, total, g, gs, ge);
      pre_hit = spec && (uint32_t)span.req == g;
    }
    if (valid && seq_lens) seq_len = pre_hit ? pre_len : seq_lens[span.req];
    /* Lane 0's scalar products before the row, so that nothing they need
     * stays live across the copy (H200: 16 x 6 2.10 -> 1.90 us, the
     * indexer kernel 64 -> 56 registers); after it in the realigned-rows
     * kernel, which spills the other way round (bench/NOTES.md, round five),
     * and there on the group's last lane, whose warp has no edges to move
     * (H200, 1024 x 1 tokens, 2560 of 2567 columns: 5.13 -> 5.08 us, round
     * eight). */
    if (!(variant & AM_VARIANT_REALIGNED) && th.lane == 0)
      am_token_scalars(p, variant, t, span, seq_len, valid, actual, mapped, &flags);
    if (AM_WANTS(variant, p->block_table_out)) {
      int32_t *out_row = p->block_table_out + (int64_t)t * p->block_table_out_stride;
      if (valid) {
        const int32_t *in_row = p->block_table + (int64_t)span.req * p->block_table_stride;
        const am_row_plan plan = am_plan_row(in_row, out_row, cols, vector_rows);
        uint32_t c = th.lane;
        if (pre_hit) { /* the speculated batch is this row's: store it */
          am_store_batch(out_row, &plan, c, th.lanes, vector_rows, &pre);
          c += 4 * th.lanes;
        }
        if (!row_done)
          am_copy_row(in_row, out_row, &plan, cols, th.lane, th.lanes, vector_rows, variant, c);
      } else {
        am_zero_row(out_row, cols, th.lane, th.lanes, vector_rows);
      }
    }
    if ((variant & AM_VARIANT_REALIGNED) && th.lane == th.lanes - 1)
      am_token_scalars(p, variant, t, span, seq_len, valid, actual, mapped, &flags);
    if (variant & AM_VARIANT_DSV4)
      am_dsv4_token(p, t, valid, span, seq_len, th.lane, th.lanes, &flags);
  }

  /* 2. tail [T, C) of the capacity-long outputs (seq_lens_out and
   * slot_mapping already cleared, when early) */
  if (!early) am_clear_tails(p, variant, rgid, gstride);
  if (variant & AM_VARIANT_DSV4)
    for (i = num_tokens + rgid; i < (uint32_t)p->capacity; i += gstride) am_dsv4_tail(p, i);

  /* 3. per request, last: its loads hit lines the token loop brought in,
   * while a store before the token loop would have ordered every load of
   * that loop behind it (outputs may alias inputs as far as the compiler
   * knows) */
  if (AM_WANTS(variant, p->per_req_lens_out) || error_word) {
    for (i = rgid; i < num_reqs; i += gstride) {
      if (AM_WANTS(variant, p->per_req_lens_out))
        p->per_req_lens_out[i] = (int32_t)((int64_t)qsl[i + 1] - qsl[i]);
      if (error_word) am_check_request(qsl, seq_lens, i, &flags);
    }
    if (rgid == 0 && error_word) {
      if (total < 0 || total > (int64_t)num_tokens) flags |= ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE;
      if (num_reqs == 0 && total != 0) flags |= ATTNMETA_FLAG_QSL_FIRST_NONZERO;
    }
  }

  if (variant & AM_VARIANT_DSV4)
    for (i = rgid; i < num_reqs; i += gstride) am_dsv4_request(p, seq_lens, i);

  if (flags && error_word) AM_ATOMIC_OR(error_word, flags);
}

#endif /* ATTNMETA_AM_STEP_KERNEL_H */
