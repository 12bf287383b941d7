// SPDX-License-Identifier: Apache-2.0
/*
 * A thread's four consecutive columns of a top-k row, loaded and stored
 * by both bodies of the conversion (am_topk_kernel.h, am_topk_rows_kernel.h).
 */
#ifndef ATTNMETA_AM_TOPK_COLUMNS_H
#define ATTNMETA_AM_TOPK_COLUMNS_H

#include "am_dialect.h"
#include "am_topk_params.h"

#if AM_TOPK_ROW_COLS != 4 || AM_TOPK_LANE_COLS != 4
#  error "the columns move as one am_i32x4"
#endif

/* Columns [j, j + AM_TOPK_ROW_COLS) of a row, -1 at and past K (k = 0:
 * none read): as one 16-byte load where `vector` allows; with `lean` (K a
 * multiple of AM_TOPK_ROW_COLS, rows aligned) always. */
AM_DEVICE void am_topk_load_columns(const int32_t *AM_RESTRICT in, uint32_t k, uint32_t j,
                                    int vector, int lean, int32_t x[AM_TOPK_ROW_COLS]) {
  int u;
  if (lean ? j < k : vector && j + AM_TOPK_ROW_COLS <= k) {
    const am_i32x4 v = *(const am_i32x4 *)(const void *)(in + j);
    x[0] = v.x;
    x[1] = v.y;
    x[2] = v.z;
    x[3] = v.w;
    return;
  }
  for (u = 0; u < AM_TOPK_ROW_COLS; ++u)
    x[u] = !lean && j + (uint32_t)u < k ? in[j + (uint32_t)u] : -1;
}

/* Columns [j, j + AM_TOPK_ROW_COLS) of a row, none at or past K; vectors as
 * am_topk_rows_load. */
AM_DEVICE void am_topk_store_columns(int32_t *AM_RESTRICT out, uint32_t k, uint32_t j,
                                     int vector, int lean, const int32_t v[AM_TOPK_ROW_COLS]) {
  int u;
  if (lean ? j < k : vector && j + AM_TOPK_ROW_COLS <= k) {
    am_i32x4 w;
    w.x = v[0];
    w.y = v[1];
    w.z = v[2];
    w.w = v[3];
    *(am_i32x4 *)(void *)(out + j) = w;
    return;
  }
  for (u = 0; u < AM_TOPK_ROW_COLS; ++u)
    if (!lean && j + (uint32_t)u < k) out[j + (uint32_t)u] = v[u];
}

#endif /* ATTNMETA_AM_TOPK_COLUMNS_H */
