// SPDX-License-Identifier: Apache-2.0
/*
 * Naive host reference of one attnmeta step (docs/contract.md), written
 * from the contract alone: linear scans, 64-bit arithmetic, no cleverness.
 */
#ifndef ATTNMETA_CONFORMANCE_REFERENCE_H
#define ATTNMETA_CONFORMANCE_REFERENCE_H

#include <stdint.h>

typedef struct amr_input {
  const int32_t *qsl;         /* [R + 1] */
  int32_t R, T, C;
  const int32_t *seq_lens;    /* [R] or NULL */
  const int32_t *block_table; /* [R][in_stride] or NULL when cols == 0 */
  int32_t cols;
  int64_t in_stride;
  int32_t num_mapped, block_size, world, rank, interleave;
} amr_input;

/* Every product, densely: block_table_out is [T][cols]. */
typedef struct amr_output {
  int32_t *token_to_req;    /* [T] */
  int32_t *seq_lens_out;    /* [C] */
  int32_t *global_seq_lens; /* [T] */
  int32_t *block_table_out; /* [T * cols] */
  int32_t *decode_lens;     /* [T] */
  int32_t *req_indices;     /* [T] */
  int32_t *per_req_lens;    /* [R] */
  int64_t *positions;       /* [T] */
  int64_t *slots;           /* [C] */
  int32_t request_flags;    /* boundary and seq_lens checks (any product) */
  int32_t slot_flags;       /* raised while computing slot_mapping */
  int well_formed;          /* qsl[0] == 0, non-decreasing, qsl[R] in [0, T] */
} amr_output;

/* The products of one token t in [0, T). */
typedef struct amr_token_out {
  int valid;        /* t < actual */
  int32_t req;      /* the request given (its block-table row when valid) */
  int32_t token_to_req, seq_len, global_seq_len, decode_len, req_index;
  int64_t position, slot;
} amr_token_out;

amr_output *amr_alloc(const amr_input *in);
void amr_free(amr_output *out);
void amr_build(const amr_input *in, amr_output *out);

/* Filling an amr_input: the requests (in zeroed first; num_mapped -1, the
 * actual count), the block table [R][stride] with its block size, the DCP
 * split. */
void amr_input_requests(amr_input *in, const int32_t *qsl, int32_t R, int32_t T, int32_t C,
                        const int32_t *seq_lens);
void amr_input_table(amr_input *in, const int32_t *table, int32_t cols, int64_t stride,
                     int32_t block_size);
void amr_input_dcp(amr_input *in, int32_t world, int32_t rank, int32_t interleave);
/* Token t's products given r = req(t) (any value when R == 0), for callers
 * that know req(t) without a scan (huge sparse batches); slot flags are
 * OR-ed into *slot_flags. amr_build is this for every t. */
void amr_token(const amr_input *in, int64_t t, int32_t r, amr_token_out *o, int32_t *slot_flags);

/* req(t): smallest r in [0, R) with qsl[r + 1] > t, or R - 1. R >= 1. */
int32_t amr_req(const int32_t *qsl, int32_t R, int64_t t);
/* Rank-local share of `len` KV tokens: contract formula. */
int64_t amr_dcp_local_formula(int64_t len, int64_t world, int64_t rank, int64_t interleave);
/* The same by counting tokens i in [0, len) with (i / I) % W == k. */
int64_t amr_dcp_local_count(int64_t len, int64_t world, int64_t rank, int64_t interleave);

#endif /* ATTNMETA_CONFORMANCE_REFERENCE_H */
