// SPDX-License-Identifier: Apache-2.0
/*
 * The host's choices for a step's kernel parameters that the kernel body
 * trusts: the guess of each token's request, speculation, the vector span
 * of the tail, the kernel variant. Shared by step.c and the fuzz harness,
 * so an emulated launch gets exactly what attnmeta_build_step would pass.
 * Plain C, host only.
 */
#ifndef ATTNMETA_AM_STEP_CHOICES_H
#define ATTNMETA_AM_STEP_CHOICES_H

#include <stdint.h>

#include "am_dialect.h"
#include "am_step_params.h"

/* Whether a step likely splits its tokens equally: T a multiple of R (plain
 * decode when T == R, or one request). */
static inline int am_equal_split_likely(int32_t num_reqs, int32_t num_tokens) {
  return num_reqs > 0 && num_tokens > 0 && num_tokens % num_reqs == 0;
}

/* The host's choice of the guess: t / d with d = T / R tokens per request
 * when the split is likely equal, else d = 1 (one token per request, which
 * padding after plain decode keeps right). The multiply-shift is exact for
 * every t < 2^31: with l = ceil(log2 d), mul = ceil(2^(31 + l) / d) < 2^32
 * and shift = 31 + l (the round-up method of Granlund and Montgomery). Only
 * the speed depends on the guess for non-decreasing boundaries; for hostile
 * ones it is part of which request a token gets, so every launch shape of a
 * step uses this one. */
static inline void am_pick_guess(int32_t num_reqs, int32_t num_tokens, uint32_t *mul,
                                 int32_t *shift) {
  const uint64_t d =
      am_equal_split_likely(num_reqs, num_tokens) ? (uint64_t)(num_tokens / num_reqs) : 1;
  int l = 0;
  while (((uint64_t)1 << l) < d) ++l;
  *mul = (uint32_t)((((uint64_t)1 << (31 + l)) + d - 1) / d);
  *shift = 31 + l;
}

/* The host's choice of speculation (after vector_rows is set): on the
 * first guess where an equal split is likely (it is then exact), on rows
 * with a first batch. */
static inline void am_pick_speculation(am_step_params *p) {
  static const int32_t first_batch_cols[] = {1, 4, AM_REALIGN_MIN_COLS}; /* by AM_ROWS_* */
  p->speculate = 0;
  if (!p->block_table_out || p->vector_rows < 0 || p->vector_rows > AM_ROWS_REALIGNED ||
      p->cols < first_batch_cols[p->vector_rows])
    return;
  if (am_equal_split_likely(p->num_reqs, p->num_tokens)) p->speculate = AM_SPECULATE_FIRST;
}

/* The host's choice of the vector part of the seq_lens_out tail. */
static inline void am_pick_tail(am_step_params *p) {
  int64_t begin = p->capacity, end = p->capacity;
  if (p->seq_lens_out) {
    const uintptr_t at = (uintptr_t)(p->seq_lens_out + p->num_tokens);
    begin = am_min64((int64_t)p->num_tokens + (int64_t)((16 - at % 16) % 16) / 4, p->capacity);
    end = begin + (p->capacity - begin) / 4 * 4;
  }
  p->tail_vec_begin = (int32_t)begin;
  p->tail_vec_end = (int32_t)end;
}

/* Whether a step wants any DeepSeek-V3.2/V4 product: one of the schema's
 * DSV4 family (AM_P_DSV4, am_schema.h). */
static inline int am_wants_dsv4(const am_step_params *p) {
  return (p->ext.products & AM_P_DSV4) != 0;
}

/* The host's choice of variant for a step (params otherwise complete). */
static inline int32_t am_pick_variant(const am_step_params *p) {
  if (am_wants_dsv4(p)) return AM_VARIANT_FULL | AM_VARIANT_DSV4;
  if (p->stage || p->positions || p->slot_mapping || p->global_seq_lens_out ||
      p->dcp_world_size > 1)
    return AM_VARIANT_FULL;
  if (p->token_to_req && p->seq_lens_out && p->block_table_out &&
      ((p->vector_rows == AM_ROWS_ALIGNED && p->cols % 4 == 0) ||
       p->vector_rows == AM_ROWS_REALIGNED) &&
      p->decode_lens_out && p->req_indices_out && p->per_req_lens_out && !p->error_word)
    return AM_VARIANT_INDEXER;
  return AM_VARIANT_LEAN;
}

#endif /* ATTNMETA_AM_STEP_CHOICES_H */
