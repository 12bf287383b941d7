// SPDX-License-Identifier: Apache-2.0
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

/* A request and its boundaries: tokens [start, end). */
typedef struct am_req_span {
  int32_t req;
  int32_t start;
  int32_t end;
} am_req_span;

AM_DEVICE am_req_span am_make_span(int32_t req, int32_t start, int32_t end) {
  am_req_span s;
  s.req = req;
  s.start = start;
  s.end = end;
  return s;
}

/* t < 2^31 always (the host checks R + T <= INT32_MAX), so it compares as int32. */
AM_DEVICE int am_span_holds(am_req_span s, uint32_t t) {
  return s.start <= (int32_t)t && (int32_t)t < s.end;
}

/* Quotient of non-negative values that fit in 32 bits, without the long
 * software sequence a 64-bit division costs on GPUs. */
AM_DEVICE int64_t am_udiv32(int64_t a, int64_t b) { return (int64_t)((uint32_t)a / (uint32_t)b); }

/* The first guess of req(t): (t * mul) >> shift (64-bit product), clamped
 * to [0, last], for any mul and shift. */
AM_DEVICE uint32_t am_guess_req(uint32_t t, uint32_t mul, int32_t shift, uint32_t last) {
  const uint64_t g = ((uint64_t)t * mul) >> (shift & 63);
  return g < last ? (uint32_t)g : last;
}

/* The second guess of req(t), from the total: t * R / total, for
 * 0 <= t < total (so it lies in [0, R]; the rounding is clamped). Right
 * for equal query lengths followed by padding. */
AM_DEVICE uint32_t am_total_guess(uint32_t t, uint32_t num_reqs, int32_t total) {
  const uint32_t g = (uint32_t)((float)t * (float)num_reqs / (float)total);
  return g < num_reqs - 1 ? g : num_reqs - 1;
}

/* req(t): the smallest r in [0, R) with qsl[r + 1] > t, or R - 1 if none,
 * with its boundaries (left 0 when t >= total = qsl[R]: such a token is
 * padding). Requires R >= 1, t < 2^31, g in [0, R - 1] with gs = qsl[g] and
 * ge = qsl[g + 1] already loaded (the caller guesses, and issues those loads
 * together with anything it speculates on g). The request index is in
 * [0, R - 1] whatever qsl holds; for non-decreasing qsl it is exactly req(t).
 * A wrong guess still halves the range of the binary search that follows. */
AM_DEVICE am_req_span am_find_req(const int32_t *AM_RESTRICT qsl, uint32_t num_reqs, uint32_t t,
                                  int32_t total, uint32_t g, int32_t gs, int32_t ge) {
  const uint32_t last = num_reqs - 1;
  const am_req_span guess = am_make_span((int32_t)g, gs, ge);
  uint32_t lo = 0, hi = last, mid;
  if ((int32_t)t >= total) return am_make_span((int32_t)last, 0, 0);
  if (am_span_holds(guess, t)) return guess;
  if (gs > (int32_t)t) {
    hi = g > 0 ? g - 1 : 0;
  } else {
    lo = g < last ? g + 1 : last;
  }
  while (lo < hi) {
    mid = lo + (hi - lo) / 2;
    if (qsl[mid + 1] > (int32_t)t) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return am_make_span((int32_t)lo, qsl[lo], qsl[lo + 1]);
}

/* Causal KV length seen by a token: seq_len - qlen + off + 1, clamped to
 * [0, INT32_MAX] (consumers read lengths as unsigned). */
AM_DEVICE int64_t am_causal_len(int64_t seq_len, int64_t qlen, int64_t off) {
  return am_clamp64(seq_len - qlen + off + 1, 0, INT32_MAX);
}

/* Rank-local share of a global length `len` in [0, INT32_MAX] when KV token i
 * lives on rank (i / interleave) % world. All operands fit in 32 bits. */
AM_DEVICE int64_t am_dcp_local_len(int64_t len, int64_t world, int64_t rank, int64_t interleave) {
  const int64_t base = am_udiv32(am_udiv32(len, interleave), world) * interleave;
  return base + am_clamp64(len - base * world - rank * interleave, 0, interleave);
}

/* a / b for 0 <= a, 1 <= b: 32-bit when both fit, 64-bit otherwise. */
AM_DEVICE int64_t am_div(int64_t a, int64_t b) {
  return (a <= UINT32_MAX && b <= UINT32_MAX) ? am_udiv32(a, b) : a / b;
}

/* KV-cache slot of `position` for this DCP rank, or -1 (with a flag added to
 * *flags when the data is bad). The request's row of `cols` block ids starts
 * at table[row_offset]; only the entry the position falls in is read.
 * Uses floor(floor(v / I) / W) = floor(v / (W * I)) to share quotients. */
AM_DEVICE int64_t am_slot(int64_t position, const int32_t *AM_RESTRICT table, int64_t row_offset,
                          int64_t cols, int64_t block_size, int64_t world, int64_t rank,
                          int64_t interleave, int32_t *flags) {
  const int64_t virtual_block = block_size * world;
  int64_t blk, in_block, by_interleave, column, id;
  if (position < 0) {
    *flags |= ATTNMETA_FLAG_POSITION_NEGATIVE;
    return -1;
  }
  blk = am_div(position, virtual_block);
  if (blk >= cols) {
    *flags |= ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
    return -1;
  }
  in_block = position - blk * virtual_block;
  by_interleave = am_div(in_block, interleave);
  column = am_div(by_interleave, world);
  if (by_interleave - column * world != rank) return -1;
  id = table[row_offset + blk];
  if (id < 0) {
    *flags |= ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
    return -1;
  }
  return id * block_size + column * interleave + (in_block - by_interleave * interleave);
}

#endif /* ATTNMETA_AM_TOKEN_MATH_H */
