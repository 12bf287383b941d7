// SPDX-License-Identifier: Apache-2.0
/*
 * The "op topk" vectors of the conformance kit (format version 3,
 * conformance/spec/attnmeta-vectors-v3.md): one attnmeta_convert_topk
 * operation, its sizes, options and inputs, and for each DCP rank the
 * slots, counts and error flags the naive reference expects
 * (amv_vector.topk of vecfile.h).
 */
#ifndef ATTNMETA_CONFORMANCE_VECFILE_TOPK_H
#define ATTNMETA_CONFORMANCE_VECFILE_TOPK_H

#include <stdint.h>

#include "vecfile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Inputs of a topk vector: the IN members of attnmeta_topk, in its order. */
enum amv_topk_input {
  AMV_TOPK_INDICES,          /* "topk": T x topk_stride, the stride gaps included */
  AMV_TOPK_QUERY_START_LOC,  /* R + 1 (request qsl) */
  AMV_TOPK_REQ_ID,           /* T (request req_id) */
  AMV_TOPK_BLOCK_TABLE,      /* as the step's block table */
  AMV_TOPK_PREFILL_REQ,      /* T (prefill 1) */
  AMV_TOPK_WORKSPACE_STARTS, /* P (prefill 1) */
  AMV_TOPK_TOKEN_SLOT,       /* T, int64 (token_slot 1) */
  AMV_TOPK_PEER_TABLES,      /* the rotated peer table's input: no format param calls for it */
  AMV_TOPK_NUM_INPUTS
};

const char *amv_topk_input_name(int input);

typedef struct amv_topk_rank {
  int32_t rank;
  int line;
  amv_values out;   /* T x K, dense row by row */
  amv_values count; /* T (count 1), else empty */
  int32_t flags;    /* the error flags the data raises */
  int flags_exact;  /* 1: exactly these; 0: at least these */
} amv_topk_rank;

typedef struct amv_topk {
  /* its params, each in the attnmeta_topk member of its name (buffers
   * NULL); the writer and the runner read these */
  attnmeta_topk op;
  /* the format's own params */
  int by_req_id;  /* request: 1: req_id given, 0: query_start_loc */
  int prefill;    /* 1: prefill_req and workspace_starts given */
  int token_slot; /* 1: token_slot given */
  int count;      /* 1: valid_count asked for */
  int misalign;   /* bit 0: topk, bit 1: out start 4 bytes past a 16-byte boundary */
  /* copies of op's params, filled by the reader (older callers read them) */
  int32_t num_tokens, topk_count, num_reqs, cols, block_size, stride_rows;
  int32_t world, interleave, num_prefill;
  int64_t topk_stride, table_stride, out_stride;
  int compact;
  amv_values input[AMV_TOPK_NUM_INPUTS]; /* n == 0 and v == NULL where not given */
  int nranks;
  amv_topk_rank *ranks;
} amv_topk;

void amv_topk_free(amv_topk *t);

#ifdef __cplusplus
}
#endif

#endif /* ATTNMETA_CONFORMANCE_VECFILE_TOPK_H */
