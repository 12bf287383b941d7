// SPDX-License-Identifier: Apache-2.0
/*
 * Copying one block-table row inside the kernel body: the lanes of a
 * token's group split the row, each moving its units in batches of four
 * loads in flight. Used by am_step_kernel.h only.
 */
#ifndef ATTNMETA_AM_ROW_COPY_H
#define ATTNMETA_AM_ROW_COPY_H

#include "am_dialect.h"
#include "am_step_params.h"

/* A lane's share of one row, moved four units at a time (a unit is a
 * 16-byte vector with vector_rows, else one int32 in .x): all four loads
 * are issued before any store, so each thread keeps several loads in
 * flight. Lane `lane` of `lanes` takes units c, c + lanes, c + 2 lanes and
 * c + 3 lanes (those below n) of the batch starting at unit c. Loads past
 * the end read the last unit again instead of branching: unconditional
 * loads are what lets the compiler issue all four before the first store. */
typedef struct am_row_batch {
  am_i32x4 v[4];
} am_row_batch;

/* c < n (so n >= 1). */
AM_DEVICE am_row_batch am_load_batch(const int32_t *AM_RESTRICT row, uint32_t c, uint32_t lanes,
                                     uint32_t n, int vector_rows) {
  const am_i32x4 *AM_RESTRICT row4 = (const am_i32x4 *)(const void *)row;
  am_row_batch b;
  int k;
  for (k = 0; k < 4; ++k) {
    const uint32_t j = c + k * lanes < n ? c + k * lanes : n - 1;
    if (vector_rows) {
      b.v[k] = row4[j];
    } else {
      b.v[k].x = row[j];
      b.v[k].y = b.v[k].z = b.v[k].w = 0;
    }
  }
  return b;
}

AM_DEVICE void am_store_batch(int32_t *AM_RESTRICT row, uint32_t c, uint32_t lanes, uint32_t n,
                              int vector_rows, const am_row_batch *b) {
  am_i32x4 *AM_RESTRICT row4 = (am_i32x4 *)(void *)row;
  int k;
  for (k = 0; k < 4; ++k) {
    if (c + k * lanes >= n) continue;
    if (vector_rows) {
      row4[c + k * lanes] = b->v[k];
    } else {
      row[c + k * lanes] = b->v[k].x;
    }
  }
}

/* Units of a row of `cols` int32. */
AM_DEVICE uint32_t am_row_units(uint32_t cols, int vector_rows) {
  return vector_rows ? cols / 4 : cols;
}

/* Copies one block-table row of `cols` int32, lanes [0, lanes) of the
 * token's group splitting it, this lane's units from batch start `c` on
 * (its earlier ones were stored by the caller); with vector_rows a scalar
 * remainder follows the vectors (none when the indexer variant says cols is
 * a multiple of 4). */
AM_DEVICE void am_copy_row(const int32_t *AM_RESTRICT in_row, int32_t *AM_RESTRICT out_row,
                           uint32_t cols, uint32_t lane, uint32_t lanes, int vector_rows,
                           int variant, uint32_t c) {
  const int indexer = variant & AM_VARIANT_INDEXER;
  const uint32_t n = am_row_units(cols, vector_rows);
  if (variant & AM_VARIANT_ONE_LANE) { /* a plain loop compilers vectorise */
    for (c = vector_rows ? (c < n ? c : n) * 4 : c; c < cols; ++c) out_row[c] = in_row[c];
    return;
  }
  /* whole batches without index tests */
  if (vector_rows) {
    const am_i32x4 *AM_RESTRICT in4 = (const am_i32x4 *)(const void *)in_row;
    am_i32x4 *AM_RESTRICT out4 = (am_i32x4 *)(void *)out_row;
    for (; c + 3 * lanes < n; c += 4 * lanes) {
      const am_i32x4 a = in4[c], b = in4[c + lanes], d = in4[c + 2 * lanes],
                     e = in4[c + 3 * lanes];
      out4[c] = a;
      out4[c + lanes] = b;
      out4[c + 2 * lanes] = d;
      out4[c + 3 * lanes] = e;
    }
  } else {
    for (; c + 3 * lanes < n; c += 4 * lanes) {
      const int32_t a = in_row[c], b = in_row[c + lanes], d = in_row[c + 2 * lanes],
                    e = in_row[c + 3 * lanes];
      out_row[c] = a;
      out_row[c + lanes] = b;
      out_row[c + 2 * lanes] = d;
      out_row[c + 3 * lanes] = e;
    }
  }
  if (c < n) { /* the last, partial batch */
    const am_row_batch b = am_load_batch(in_row, c, lanes, n, vector_rows);
    am_store_batch(out_row, c, lanes, n, vector_rows, &b);
  }
  if (vector_rows && !indexer)
    for (c = n * 4 + lane; c < cols; c += lanes) out_row[c] = in_row[c];
}

/* Clears one row of the block-table output (a padding token's). */
AM_DEVICE void am_zero_row(int32_t *AM_RESTRICT out_row, uint32_t cols, uint32_t lane,
                           uint32_t lanes, int vector_rows) {
  uint32_t c = lane;
  if (vector_rows) {
    const uint32_t nvec = cols / 4;
    am_i32x4 *AM_RESTRICT out4 = (am_i32x4 *)(void *)out_row;
    am_i32x4 zero;
    zero.x = zero.y = zero.z = zero.w = 0;
    for (; c < nvec; c += lanes) out4[c] = zero;
    c = nvec * 4 + lane;
  }
  for (; c < cols; c += lanes) out_row[c] = 0;
}

#endif /* ATTNMETA_AM_ROW_COPY_H */
