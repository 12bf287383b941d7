// SPDX-License-Identifier: Apache-2.0
/*
 * Naive reference of the pool operation's draft decode lists
 * (docs/contract.md section 14), written from the contract, not from the
 * kernel: each step, request and branch in turn, a cursor walking the
 * step's slot list, 64-bit arithmetic. Host arrays only.
 */
#ifndef ATTNMETA_TESTS_DRAFT_REFERENCE_H
#define ATTNMETA_TESTS_DRAFT_REFERENCE_H

#include <stdint.h>

typedef struct amr_draft_input {
  const int32_t *req_to_token;     /* [pool_rows][pool_stride] */
  int64_t pool_stride;
  int32_t pool_rows, pool_cols;
  const int64_t *req_pool_indices; /* [B] */
  const int64_t *lengths;          /* [B] */
  const int64_t *positions;        /* [B * topk] */
  int32_t num_reqs;                /* B */
  int32_t length_delta;
  int32_t page_size;
  int32_t steps, topk;             /* S, K */
  int64_t width;                   /* W: entries of a step row that may be written */
  int64_t indices_stride, indptr_stride;
} amr_draft_input;

/* Writes the step rows of `indices` ([steps][indices_stride]) and of
 * `indptr` ([steps][indptr_stride]) that the operation writes, each NULL
 * when not built, and nothing else. *flags: the error flags the data
 * raises. */
void amr_draft_lists(const amr_draft_input *in, int32_t *indices, int32_t *indptr,
                     int32_t *flags);

#endif /* ATTNMETA_TESTS_DRAFT_REFERENCE_H */
