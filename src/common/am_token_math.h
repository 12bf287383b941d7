/*
 * Per-item math of the contract, used by the kernel bodies only. Every
 * function is total: for any int32 inputs it returns a value without signed
 * overflow, and every index it returns lies inside the range it documents.
 * The test reference is written separately and naively on purpose.
 */
#ifndef ATTNMETA_AM_TOKEN_MATH_H
#define ATTNMETA_AM_TOKEN_MATH_H

#include "am_dialect.h"
#include "attnmeta/attnmeta.h"

/* req(t): the smallest r in [0, R) with qsl[r + 1] > t, or R - 1 if none.
 * Requires R >= 1, t >= 0. Always returns a value in [0, R - 1], whatever
 * qsl holds; for non-decreasing qsl it is exactly req(t). `total` is qsl[R].
 * A first guess assumes equal query lengths (the common decode batch), so a
 * uniform batch costs one pair of loads instead of a full search. */
AM_DEVICE int64_t am_find_req(const int32_t *AM_RESTRICT qsl, int64_t num_reqs, int64_t t,
                              int64_t total) {
  int64_t lo = 0;
  int64_t hi = num_reqs - 1;
  if (t >= total) return hi;
  {
    const int64_t guess = (t * num_reqs) / total; /* in [0, R) since 0 <= t < total */
    const int64_t start = qsl[guess];
    const int64_t end = qsl[guess + 1];
    if (start <= t && t < end) return guess;
    if (start > t) {
      hi = guess > 0 ? guess - 1 : 0;
    } else {
      lo = guess + 1 < num_reqs ? guess + 1 : num_reqs - 1;
    }
  }
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if ((int64_t)qsl[mid + 1] > t) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

/* Causal KV length seen by a token: seq_len - qlen + off + 1, clamped to
 * [0, INT32_MAX] (consumers read lengths as unsigned). */
AM_DEVICE int64_t am_causal_len(int64_t seq_len, int64_t qlen, int64_t off) {
  return am_clamp64(seq_len - qlen + off + 1, 0, INT32_MAX);
}

/* Rank-local share of a global length `len` >= 0 when KV token i lives on
 * rank (i / interleave) % world. */
AM_DEVICE int64_t am_dcp_local_len(int64_t len, int64_t world, int64_t rank, int64_t interleave) {
  const int64_t base = ((len / interleave) / world) * interleave;
  return base + am_clamp64(len - base * world - rank * interleave, 0, interleave);
}

/* KV-cache slot of `position` for this DCP rank, or -1 (with a flag added to
 * *flags when the data is bad). The request's row of `cols` block ids starts
 * at table[row_offset]; only the entry the position falls in is read. */
AM_DEVICE int64_t am_slot(int64_t position, const int32_t *AM_RESTRICT table, int64_t row_offset,
                          int64_t cols,
                          int64_t block_size, int64_t world, int64_t rank, int64_t interleave,
                          int32_t *flags) {
  const int64_t virtual_block = block_size * world;
  int64_t blk, in_block, id;
  if (position < 0) {
    *flags |= ATTNMETA_FLAG_POSITION_NEGATIVE;
    return -1;
  }
  blk = position / virtual_block;
  in_block = position % virtual_block;
  if (blk >= cols) {
    *flags |= ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
    return -1;
  }
  if ((in_block / interleave) % world != rank) return -1;
  id = table[row_offset + blk];
  if (id < 0) {
    *flags |= ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
    return -1;
  }
  return id * block_size + (in_block / (world * interleave)) * interleave + in_block % interleave;
}

#endif /* ATTNMETA_AM_TOKEN_MATH_H */
