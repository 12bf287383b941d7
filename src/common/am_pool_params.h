// SPDX-License-Identifier: Apache-2.0
/*
 * What one launch of the pool operation (attnmeta_build_pool_indices)
 * receives, by value. Built on the host from the public attnmeta_pool
 * after every argument has been checked, so the kernel may trust the
 * sizes, strides and alignments here (never the device data). Valid C11
 * and C++.
 */
#ifndef ATTNMETA_AM_POOL_PARAMS_H
#define ATTNMETA_AM_POOL_PARAMS_H

#include <stdint.h>

typedef struct am_pool_params {
  /* inputs */
  const int32_t *req_to_token;     /* [P][pool_stride]; NULL when P or Wr is 0 */
  int64_t pool_stride;
  const int64_t *req_pool_indices; /* [B] */
  const int64_t *lengths;          /* [B], read as int32 */
  const int64_t *kv_start_idx;     /* [B] or NULL (0) */
  const int32_t *kv_indptr;        /* [B + 1] or NULL (kv_indptr_out places the rows) */
  /* outputs, each NULL when not wanted */
  int32_t *kv_indices;             /* [capacity] */
  int64_t capacity;
  int32_t *kv_indptr_out;          /* [B + 1] */
  int32_t *page_table;             /* [T][page_stride] */
  int64_t page_stride;
  int32_t *cache_seqlens;          /* [B] */
  int32_t *expanded_lens;          /* [T] */
  int32_t *topk_lens;              /* [T] */
  int32_t *topk_indptr;            /* [T + 1] */
  int32_t *token_table;            /* [T][token_stride] */
  int64_t token_stride;
  const int64_t *full_to_swa;      /* [swa_map_len]; NULL when swa_map_len is 0 */
  int64_t swa_map_len;
  int32_t *swa_page_table;         /* [T][swa_stride], page_width pages */
  int64_t swa_stride;
  const int64_t *query_lens;       /* [B] or NULL: rows_per_req rows a request */
  int32_t *query_indptr_out;       /* [B + 1] */
  int32_t *error_word;             /* [1] or NULL */
  /* sizes */
  int32_t num_reqs;                /* B >= 0 */
  int32_t pool_rows;               /* P >= 0 */
  int32_t pool_cols;               /* Wr >= 0 */
  int32_t page_size;               /* >= 1 */
  int32_t page_width;              /* >= 0 */
  int32_t length_delta;            /* added to every length */
  int32_t rows_per_req;            /* N >= 1: T = B * N */
  int32_t topk;                    /* >= 1 when topk_lens or topk_indptr */
  int32_t topk_pool;               /* Q >= 1 */
  int32_t token_width;             /* >= 0 */
  int32_t length_cap;              /* > 0, or 0 for none */
  int32_t fill_to_width;           /* 0 or 1 */
  int32_t num_rows;                /* T */
  int32_t row_chunks;              /* C >= 1 work items a request, each a slice of its row
                                      (0 reads as 1); B x C <= 2^31 */
  /* EAGLE's draft decode lists (am_pool_draft_kernel.h), built alone */
  const int64_t *draft_positions;  /* [B * K], read as int32; NULL without draft_indptr */
  int32_t *draft_indices;          /* [S][draft_indices_stride] or NULL */
  int64_t draft_width;             /* W: entries of a step row that may be written */
  int64_t draft_indices_stride;
  int32_t *draft_indptr;           /* [S][draft_indptr_stride], B * K + 1 a step, or NULL */
  int64_t draft_indptr_stride;
  int32_t draft_steps;             /* S in [0, 1024]; 0: not built */
  int32_t draft_topk;              /* K in [1, 1024] */
  /* decode context parallel (am_pool_dcp.h): off where dcp_world is 1 */
  int32_t dcp_world;               /* W in [1, 65536] */
  int32_t dcp_rank;                /* k in [0, W) */
  int32_t dcp_interleave;          /* I in [1, 65536] */
  int32_t query_rows;              /* 1: one table row a request (T = B), 0: one a query row */
} am_pool_params;

#endif /* ATTNMETA_AM_POOL_PARAMS_H */
