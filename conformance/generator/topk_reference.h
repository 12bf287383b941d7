// SPDX-License-Identifier: Apache-2.0
/*
 * Naive reference of the top-k conversion (docs/contract.md, "Top-k
 * indices to global KV slots"), written from the contract, not from the
 * kernel: plain loops over every entry, 64-bit arithmetic, the steps in the
 * contract's order. Host arrays only.
 */
#ifndef ATTNMETA_TESTS_TOPK_REFERENCE_H
#define ATTNMETA_TESTS_TOPK_REFERENCE_H

#include <stdint.h>

typedef struct amr_topk_input {
  const int32_t *topk;     /* [T][topk_stride] */
  int64_t topk_stride;
  int32_t num_tokens;      /* T */
  int32_t topk_count;      /* K */
  const int32_t *qsl;      /* [R + 1], or NULL: then req_id */
  const int32_t *req_id;   /* [T] */
  int32_t num_reqs;        /* R */
  const int32_t *table;    /* [R][table_stride] */
  int32_t cols;
  int64_t table_stride;
  int32_t block_size;
  int32_t stride_rows;     /* >= 1 (the caller resolves the default) */
  int32_t world, rank, interleave;
  const int32_t *prefill_req; /* [T] or NULL */
  const int32_t *workspace_starts; /* [P] */
  int32_t num_prefill;     /* P */
  const int64_t *token_slot; /* [T] or NULL */
  int compact;
  int64_t peer_blocks;     /* 0, or S: decode entries become rank-major peer slots (6c) */
} amr_topk_input;

/* out: [T][K] dense; count: [T]; *flags: the error flags the data raises. */
void amr_topk(const amr_topk_input *in, int32_t *out, int32_t *count, int32_t *flags);

/* The rotated DCP peer table (contract section 6d). */
typedef struct amr_peer_table_input {
  const int32_t *tables;   /* rank o's row r at o * owner_stride + r * row_stride */
  int64_t row_stride, owner_stride;
  int32_t num_reqs, cols;  /* R, M */
  int32_t world, rank;     /* W, k */
  int64_t segment;         /* S >= 1 */
  int32_t width;           /* pages of each output row */
} amr_peer_table_input;

/* out: [R][width] dense; *flags: the error flags the data raises. */
void amr_peer_table(const amr_peer_table_input *in, int32_t *out, int32_t *flags);

#endif /* ATTNMETA_TESTS_TOPK_REFERENCE_H */
