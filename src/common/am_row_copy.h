// SPDX-License-Identifier: Apache-2.0
/*
 * Copying one block-table row inside the kernel body: the lanes of a
 * token's group split the row, each moving its units in batches of four
 * loads in flight. Used by am_step_kernel.h only.
 *
 * Three ways to move a row (am_step_params.vector_rows, chosen on the host):
 *  - AM_ROWS_SCALAR: one int32 per unit;
 *  - AM_ROWS_ALIGNED: every row of both tables starts on 16 bytes (pointers
 *    and strides allow it): 16-byte units, then a scalar remainder;
 *  - AM_ROWS_REALIGNED: any row starts and strides (a column slice of a
 *    wider table, an odd stride). Each row is planned on its own: a few
 *    scalar elements at each edge, and between them 16-byte stores to
 *    aligned output addresses, each built in registers from the two
 *    aligned input vectors it straddles. Every vector load lies inside
 *    the row's [0, cols) elements, so nothing outside the row is read.
 *    A lane's first two edge elements load with its first batch and its
 *    stores wait for them, so a row costs one round of dependent loads
 *    (the edges after the vectors cost a second round: +1 us on the H200).
 */
#ifndef ATTNMETA_AM_ROW_COPY_H
#define ATTNMETA_AM_ROW_COPY_H

#include "am_dialect.h"
#include "am_step_params.h"

/* How one row moves: `n` units (16-byte output vectors, or int32 elements
 * when scalar); with AM_ROWS_REALIGNED, output vector j holds the row's
 * elements [head + 4j, head + 4j + 4), taken from the aligned input vectors
 * in4[j] and in4[j + 1] (past the first `shift` elements of in4[j]; only
 * in4[j] when shift is 0). Elements outside [head, head + 4n) are the
 * scalar edges. */
typedef struct am_row_plan {
  uint32_t n;
  uint32_t edges; /* scalar elements outside the vectors (realigned rows only) */
  uint32_t head;
  uint32_t shift;
  /* 1 when the first output vector starts a vector past the 16-byte grid
   * of the output row (head >= 4: its first vector of input would start
   * before the row): the lanes then number the units from -1, so that each
   * warp's stores cover whole 128-byte lines where the row's grid does
   * (unit -1 stores unit 0 again). H200, 1024 x 1 tokens, 2560 of 2567
   * columns: 5.26 -> 5.15 us (bench/NOTES.md, round eight). */
  uint32_t lead;
  const am_i32x4 *in4;
  am_i32x4 *out4;
} am_row_plan;

/* Element index of a 16-byte boundary's offset: (address / 4) % 4. */
AM_DEVICE uint32_t am_words_past_16(const void *ptr) {
  return (uint32_t)(((uintptr_t)ptr / 4) % 4);
}

/* The plan of a row of `cols` int32 from in_row to out_row. */
AM_DEVICE am_row_plan am_plan_row(const int32_t *in_row, int32_t *out_row, uint32_t cols,
                                  int vector_rows) {
  am_row_plan r;
  r.head = 0;
  r.shift = 0;
  r.edges = 0;
  r.lead = 0;
  r.in4 = (const am_i32x4 *)(const void *)in_row;
  r.out4 = (am_i32x4 *)(void *)out_row;
  if (vector_rows == AM_ROWS_REALIGNED) {
    const uint32_t in_off = am_words_past_16(in_row);
    uint32_t head = (4 - am_words_past_16(out_row)) % 4, pad;
    r.shift = (in_off + head) % 4;
    /* the first input vector must not start before the row */
    if (head < r.shift) head += 4;
    /* with a shift the last vector also reads the next input vector */
    pad = r.shift ? 4 - r.shift : 0;
    r.head = head;
    r.lead = head / 4;
    r.n = cols >= head + pad ? (cols - head - pad) / 4 : 0;
    r.edges = cols - 4 * r.n;
    r.in4 = (const am_i32x4 *)(const void *)(in_row + head - r.shift);
    r.out4 = (am_i32x4 *)(void *)(out_row + head);
  } else {
    r.n = vector_rows ? cols / 4 : cols;
  }
  return r;
}

/* Element index of edge e (< r->edges) of a realigned row: [0, head), then
 * [head + 4n, cols). */
AM_DEVICE uint32_t am_edge_at(const am_row_plan *r, uint32_t e) {
  return e < r->head ? e : e + 4 * r->n;
}

/* Output vector j of a realigned row, from its two input vectors. */
AM_DEVICE am_i32x4 am_realign(am_i32x4 a, am_i32x4 b, uint32_t shift) {
  am_i32x4 v;
  v.x = shift == 0 ? a.x : shift == 1 ? a.y : shift == 2 ? a.z : a.w;
  v.y = shift == 0 ? a.y : shift == 1 ? a.z : shift == 2 ? a.w : b.x;
  v.z = shift == 0 ? a.z : shift == 1 ? a.w : shift == 2 ? b.x : b.y;
  v.w = shift == 0 ? a.w : shift == 1 ? b.x : shift == 2 ? b.y : b.z;
  return v;
}

/* Unit j (< plan->n) of an aligned or scalar row, loaded. */
AM_DEVICE am_i32x4 am_load_unit(const int32_t *AM_RESTRICT row, const am_row_plan *r, uint32_t j,
                                int vector_rows) {
  am_i32x4 v;
  if (vector_rows) {
    v = r->in4[j];
  } else {
    v.x = row[j];
    v.y = v.z = v.w = 0;
  }
  return v;
}

AM_DEVICE void am_store_unit(int32_t *AM_RESTRICT row, const am_row_plan *r, uint32_t j,
                             int vector_rows, am_i32x4 v) {
  if (vector_rows) {
    r->out4[j] = v;
  } else {
    row[j] = v.x;
  }
}

/* A lane's share of one aligned or scalar row, moved four units at a
 * time: all four loads are issued before any store, so each thread keeps
 * several loads in flight. Lane `lane` of `lanes` takes units c, c +
 * lanes, c + 2 lanes and c + 3 lanes (those below n) of the batch starting
 * at unit c. Loads past the end read the last unit again instead of
 * branching: unconditional loads are what lets the compiler issue all four
 * before the first store. A realigned row's batches are built in
 * am_copy_row's loop, its speculated first batch by the functions after
 * these (am_load_realigned_first). */
typedef struct am_row_batch {
  am_i32x4 v[4];
} am_row_batch;

/* Edges lane and lane + lanes of a realigned row (those that exist). */
AM_DEVICE void am_load_edges(const int32_t *AM_RESTRICT row, const am_row_plan *r,
                             uint32_t lane, uint32_t lanes, int32_t edge[2]) {
  edge[0] = lane < r->edges ? row[am_edge_at(r, lane)] : 0;
  edge[1] = lane + lanes < r->edges ? row[am_edge_at(r, lane + lanes)] : 0;
}

AM_DEVICE void am_store_edges(int32_t *AM_RESTRICT row, const am_row_plan *r, uint32_t lane,
                              uint32_t lanes, const int32_t edge[2]) {
  if (lane < r->edges) row[am_edge_at(r, lane)] = edge[0];
  if (lane + lanes < r->edges) row[am_edge_at(r, lane + lanes)] = edge[1];
}

/* Unit k (< 4) of the batch from lane unit c (units counted from -lead);
 * before the first unit, the first; past the last unit (n >= 1), the last
 * unit again. */
AM_DEVICE uint32_t am_batch_unit(const am_row_plan *r, uint32_t c, uint32_t lanes, int k) {
  const uint32_t v = c + (uint32_t)k * lanes;
  const uint32_t j = v >= r->lead ? v - r->lead : 0;
  return j < r->n ? j : r->n - 1;
}

/* c < r->n (so n >= 1). */
AM_DEVICE am_row_batch am_load_batch(const int32_t *AM_RESTRICT row, const am_row_plan *r,
                                     uint32_t c, uint32_t lanes, int vector_rows) {
  am_row_batch b;
  int k;
  for (k = 0; k < 4; ++k) b.v[k] = am_load_unit(row, r, am_batch_unit(r, c, lanes, k), vector_rows);
  return b;
}

AM_DEVICE void am_store_batch(int32_t *AM_RESTRICT row, const am_row_plan *r, uint32_t c,
                              uint32_t lanes, int vector_rows, const am_row_batch *b) {
  int k;
  for (k = 0; k < 4; ++k) {
    if (c + k * lanes >= r->n) continue;
    am_store_unit(row, r, c + k * lanes, vector_rows, b->v[k]);
  }
}

/* A realigned row's first batch for lane `lane` of `lanes`: the two input
 * vectors of units lane + k lanes (k < 4; past the last unit, the last
 * unit again) and the lane's first two edges. What the realigned kernels
 * speculate: loaded with the guessed request's boundaries, stored only in
 * the branch where the guess holds, so that nothing of it is live in the
 * search for a request (a batch held across it cost them more registers
 * than it saved). n >= 1. */
typedef struct am_realigned_batch {
  am_i32x4 a[4], b[4];
  int32_t edge[2];
} am_realigned_batch;

AM_DEVICE am_realigned_batch am_load_realigned_first(const int32_t *AM_RESTRICT row,
                                                     const am_row_plan *r, uint32_t lane,
                                                     uint32_t lanes) {
  am_realigned_batch q;
  const uint32_t next = r->shift != 0;
  int k;
  for (k = 0; k < 4; ++k) {
    const uint32_t j = am_batch_unit(r, lane, lanes, k);
    q.a[k] = r->in4[j];
    q.b[k] = r->in4[j + next];
  }
  am_load_edges(row, r, lane, lanes, q.edge);
  return q;
}

/* Clamped units store the last vector again: the same value, unconditionally. */
AM_DEVICE void am_store_realigned_first(int32_t *AM_RESTRICT row, const am_row_plan *r,
                                        uint32_t lane, uint32_t lanes,
                                        const am_realigned_batch *q) {
  int k;
  for (k = 0; k < 4; ++k)
    r->out4[am_batch_unit(r, lane, lanes, k)] = am_realign(q->a[k], q->b[k], r->shift);
  am_store_edges(row, r, lane, lanes, q->edge);
}

/* Whether lane `lane` has any of a realigned row left after its first
 * batch: lane units from lane + 4 lanes on, or edges from lane + 2 lanes
 * on. */
AM_DEVICE int am_realigned_rest_left(const am_row_plan *r, uint32_t lane, uint32_t lanes) {
  return lane + 4 * lanes < r->n + r->lead || lane + 2 * lanes < r->edges;
}

/* The ways to copy a lane's share of a row planned as `r` from batch
 * start `c` on (am_copy_row says what `c` is). */

/* AM_ROWS_REALIGNED: whole batches of vectors realigned in registers (the
 * last, partial batch too: a lane whose share ends inside a batch copies
 * its last vector again, the same value to the same place, instead of
 * branching; as a batch of its own it made the last warp of each row wait
 * for a second round of loads, n being rarely a multiple of 4 x lanes
 * here), then the scalar edges [0, head) and [head + 4n, cols). A lane's
 * first two edges load with its first batch when nothing of its share is
 * stored yet. */
AM_DEVICE void am_copy_realigned(const int32_t *AM_RESTRICT in_row, int32_t *AM_RESTRICT out_row,
                                 const am_row_plan *r, uint32_t lane, uint32_t lanes,
                                 uint32_t c) {
  const uint32_t n = r->n;
  const int first = c == lane; /* nothing of this lane's share stored yet */
  int32_t edge[2] = {0, 0};
  const am_i32x4 *AM_RESTRICT in4 = r->in4;
  if (first) am_load_edges(in_row, r, lane, lanes, edge); /* in flight with the vectors */
  am_i32x4 *AM_RESTRICT out4 = r->out4;
  const uint32_t s = r->shift, next = s != 0;
  const uint32_t last = am_wrapping_sub(n, 1); /* used only when n > 0 */
  const uint32_t lead = r->lead, lane_units = n ? n + lead : 0; /* c counts from -lead */
  for (; c < lane_units; c += 4 * lanes) {
    const uint32_t j0 = c >= lead ? c - lead : 0;
    const uint32_t j1 = c + lanes < lane_units ? c + lanes - lead : last;
    const uint32_t j2 = c + 2 * lanes < lane_units ? c + 2 * lanes - lead : last;
    const uint32_t j3 = c + 3 * lanes < lane_units ? c + 3 * lanes - lead : last;
    const am_i32x4 a0 = in4[j0], b0 = in4[j0 + next], a1 = in4[j1], b1 = in4[j1 + next],
                   a2 = in4[j2], b2 = in4[j2 + next], a3 = in4[j3], b3 = in4[j3 + next];
    out4[j0] = am_realign(a0, b0, s);
    out4[j1] = am_realign(a1, b1, s);
    out4[j2] = am_realign(a2, b2, s);
    out4[j3] = am_realign(a3, b3, s);
  }
  if (first) am_store_edges(out_row, r, lane, lanes, edge);
  for (uint32_t k = lane + 2 * lanes; k < r->edges; k += lanes) {
    const uint32_t e = am_edge_at(r, k);
    out_row[e] = in_row[e];
  }
}

/* Whole batches of four units of `type` a lane from `in` to `out`, all four
 * loaded before any is stored (the loads in flight together), from unit
 * `c` on, while a whole batch is left below `n`. */
#define AM_COPY_BATCHES(type, in, out)                                          \
  for (; c + 3 * lanes < n; c += 4 * lanes) {                                   \
    const type a = (in)[c], b = (in)[c + lanes], d = (in)[c + 2 * lanes],       \
               e = (in)[c + 3 * lanes];                                         \
    (out)[c] = a;                                                               \
    (out)[c + lanes] = b;                                                       \
    (out)[c + 2 * lanes] = d;                                                   \
    (out)[c + 3 * lanes] = e;                                                   \
  }

/* AM_ROWS_ALIGNED and AM_ROWS_SCALAR: whole batches of four units a lane
 * (16-byte vectors, or int32), the last, partial batch, and for aligned
 * rows the scalar elements past the vectors (none when the indexer variant
 * says cols is a multiple of 4). */
AM_DEVICE void am_copy_units(const int32_t *AM_RESTRICT in_row, int32_t *AM_RESTRICT out_row,
                             const am_row_plan *r, uint32_t cols, uint32_t lane, uint32_t lanes,
                             int vector_rows, int indexer, uint32_t c) {
  const uint32_t n = r->n;
  if (vector_rows) {
    const am_i32x4 *AM_RESTRICT in4 = r->in4;
    am_i32x4 *AM_RESTRICT out4 = r->out4;
    AM_COPY_BATCHES(am_i32x4, in4, out4)
  } else {
    AM_COPY_BATCHES(int32_t, in_row, out_row)
  }
  if (c < n) {
    const am_row_batch b = am_load_batch(in_row, r, c, lanes, vector_rows);
    am_store_batch(out_row, r, c, lanes, vector_rows, &b);
  }
  if (vector_rows && !indexer)
    for (c = n * 4 + lane; c < cols; c += lanes) out_row[c] = in_row[c];
}
#undef AM_COPY_BATCHES

/* Copies one block-table row of `cols` int32 planned as `r`, lanes [0,
 * lanes) of the token's group splitting it, this lane's units from batch
 * start `c` on (for realigned rows a lane unit, counted from -lead; its
 * earlier ones, and with them a realigned row's first edges, were stored
 * by the caller when c > lane), by the way `vector_rows` names: the one
 * call of the kernel body, compile-time constant where the variant fixes
 * it, so a kernel compiles only the ways it can take. One thread a block
 * (AM_VARIANT_ONE_LANE, the CPU backend) copies with a plain loop. */
AM_DEVICE void am_copy_row(const int32_t *AM_RESTRICT in_row, int32_t *AM_RESTRICT out_row,
                           const am_row_plan *r, uint32_t cols, uint32_t lane, uint32_t lanes,
                           int vector_rows, int variant, uint32_t c) {
  if (variant & AM_VARIANT_ONE_LANE) { /* a plain loop compilers vectorise */
    const uint32_t n = r->n;
    if (vector_rows == AM_ROWS_REALIGNED) c = 0; /* rewriting stored values is harmless */
    for (c = vector_rows == AM_ROWS_ALIGNED ? (c < n ? c : n) * 4 : c; c < cols; ++c)
      out_row[c] = in_row[c];
    return;
  }
  if (vector_rows == AM_ROWS_REALIGNED)
    am_copy_realigned(in_row, out_row, r, lane, lanes, c);
  else
    am_copy_units(in_row, out_row, r, cols, lane, lanes, vector_rows,
                  variant & AM_VARIANT_INDEXER, c);
}

/* Clears one row of the block-table output (a padding token's). */
AM_DEVICE void am_zero_row(int32_t *AM_RESTRICT out_row, uint32_t cols, uint32_t lane,
                           uint32_t lanes, int vector_rows) {
  uint32_t c = lane;
  if (vector_rows) { /* 16-byte stores from the first aligned element on */
    const uint32_t head = vector_rows == AM_ROWS_REALIGNED
                              ? (4 - am_words_past_16(out_row)) % 4
                              : 0;
    const uint32_t nvec = cols >= head ? (cols - head) / 4 : 0;
    am_i32x4 *AM_RESTRICT out4 = (am_i32x4 *)(void *)(out_row + head);
    am_i32x4 zero;
    zero.x = zero.y = zero.z = zero.w = 0;
    for (; c < nvec; c += lanes) out4[c] = zero;
    for (c = lane; c < cols - 4 * nvec; c += lanes) out_row[c < head ? c : c + 4 * nvec] = 0;
    return;
  }
  for (; c < cols; c += lanes) out_row[c] = 0;
}

#endif /* ATTNMETA_AM_ROW_COPY_H */
