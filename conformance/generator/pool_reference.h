// SPDX-License-Identifier: Apache-2.0
/*
 * Naive reference of the pool operation (docs/c_api.md, "SGLang's request
 * pool"; docs/contract.md sections 12 and 13; the SGLang contract's
 * sections 10 to 13), written from the
 * contract, not from the kernel: one request row after another, one entry
 * after another, 64-bit arithmetic. Host arrays only.
 */
#ifndef ATTNMETA_TESTS_POOL_REFERENCE_H
#define ATTNMETA_TESTS_POOL_REFERENCE_H

#include <stdint.h>

typedef struct amr_pool_input {
  const int32_t *req_to_token;     /* [pool_rows][pool_stride] */
  int64_t pool_stride;
  int32_t pool_rows, pool_cols;
  const int64_t *req_pool_indices; /* [B] */
  const int64_t *lengths;          /* [B] */
  const int64_t *kv_start_idx;     /* [B] or NULL */
  int32_t num_reqs;                /* B */
  int32_t page_size;
  const int32_t *kv_indptr;        /* [B + 1] or NULL: then the rows are placed by the scan */
  int64_t capacity;                /* entries of kv_indices */
  int32_t page_width;
  int64_t page_stride;
  /* sections 12 and 13 (zero: not used) */
  int32_t length_delta;            /* added to each length */
  int32_t rows_per_req;            /* 0 or 1: a row a request */
  int32_t topk, topk_pool;
  int32_t token_width;
  int64_t token_stride;
  int32_t length_cap;              /* 0: none */
  int32_t fill_to_width;
  const int64_t *full_to_swa;      /* [swa_map_len] */
  int64_t swa_map_len;
  int64_t swa_stride;              /* rows of page_width pages */
  const int64_t *query_lens;       /* [B] or NULL: rows_per_req rows a request */
  int32_t num_rows;                /* T with query_lens */
  /* section 15, DCP: rank dcp_rank of dcp_world keeps the positions x with
   * floor(x / I) mod W = k (I = dcp_interleave); world 0 or 1: off */
  int32_t dcp_world, dcp_rank, dcp_interleave;
  /* 1: one table row per request (T = B), the query rows only counted in
   * query_indptr; 0: a table row per query row */
  int32_t query_rows;
} amr_pool_input;

/* The outputs, each NULL when not built. */
typedef struct amr_pool_outputs {
  int32_t *kv_indices;     /* [capacity] */
  int32_t *indptr_out;     /* [B + 1] */
  int32_t *page_table;     /* [T][page_stride], T = num_rows with query_lens,
                              else B * max(rows_per_req, 1) */
  int32_t *cache_seqlens;  /* [B] */
  int32_t *expanded_lens;  /* [T] */
  int32_t *topk_lens;      /* [T] */
  int32_t *topk_indptr;    /* [T + 1] */
  int32_t *token_table;    /* [T][token_stride] */
  int32_t *swa_page_table; /* [T][swa_stride] */
  int32_t *query_indptr;   /* [B + 1] */
} amr_pool_outputs;

/* Every product: writes what the operation writes, and nothing else.
 * *flags: the error flags the data raises. */
void amr_pool_all(const amr_pool_input *in, const amr_pool_outputs *out, int32_t *flags);

/* Writes what the operation writes, and nothing else, into the buffers
 * given (NULL: the product is not built): kv_indices [capacity],
 * indptr_out [B + 1], page_table [B][page_stride]. *flags: the error flags
 * the data raises. */
void amr_pool(const amr_pool_input *in, int32_t *kv_indices, int32_t *indptr_out,
              int32_t *page_table, int32_t *flags);

#endif /* ATTNMETA_TESTS_POOL_REFERENCE_H */
