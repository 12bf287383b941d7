// SPDX-License-Identifier: Apache-2.0
/*
 * Naive reference of the pool operation (docs/c_api.md, "SGLang's request
 * pool"; the SGLang contract's sections 10 and 11), written from the
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
} amr_pool_input;

/* Writes what the operation writes, and nothing else, into the buffers
 * given (NULL: the product is not built): kv_indices [capacity],
 * indptr_out [B + 1], page_table [B][page_stride]. *flags: the error flags
 * the data raises. */
void amr_pool(const amr_pool_input *in, int32_t *kv_indices, int32_t *indptr_out,
              int32_t *page_table, int32_t *flags);

#endif /* ATTNMETA_TESTS_POOL_REFERENCE_H */
