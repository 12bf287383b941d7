// SPDX-License-Identifier: Apache-2.0
/*
 * The counts the pool operation's extents are made of (am_schema.h's
 * AM_POOL_FIELDS: R, R1, T, C, P, ONE, T1, S, DK, DP), from the public
 * operation: the host checks (pool.c) and the vector files' reader and
 * runner (conformance/lib/vecschema.c) size the same buffers from them.
 * Host only, plain C.
 */
#ifndef ATTNMETA_AM_POOL_COUNTS_H
#define ATTNMETA_AM_POOL_COUNTS_H

#include <stdint.h>

#include "attnmeta/attnmeta.h"

typedef struct am_pool_counts {
  int64_t R, R1, T, C, P, ONE, T1, S, DK, DP;
} am_pool_counts;

/* `query_lens`: whether the operation has query_lens (the vector reader
 * knows it before the pointer is set). DP, the span of draft_kv_indptr's
 * step rows, saturates at INT64_MAX for settings the host refuses, so no
 * count overflows whatever the operation holds. */
static inline am_pool_counts am_pool_counts_of(const attnmeta_pool *op, int query_lens) {
  am_pool_counts k;
  int64_t span;
  k.R = op->num_reqs;
  k.R1 = k.R + 1;
  k.T = op->query_rows == 1 ? k.R
        : query_lens        ? op->num_rows
                            : k.R * (op->rows_per_req > 1 ? op->rows_per_req : 1);
  k.T1 = k.T + 1;
  k.C = op->kv_indices_capacity;
  k.P = op->pool_rows;
  k.ONE = 1;
  k.S = op->draft_steps;
  k.DK = k.R * op->draft_topk;
  if (k.S < 1)
    k.DP = 0;
  else if (__builtin_mul_overflow(k.S - 1, op->draft_kv_indptr_stride, &span) ||
           __builtin_add_overflow(span, k.DK + 1, &k.DP))
    k.DP = INT64_MAX;
  return k;
}

#endif /* ATTNMETA_AM_POOL_COUNTS_H */
