/*
 * The top-k conversion's test cases: the engines' own matrices, the prefill
 * workspace, the DCP examples, strides, padding and hostile data, built
 * into host arrays. Shared by the Criterion tests (tests/test_topk.c,
 * tests/test_topk_shapes.c) and the conformance generator (op_topk.c).
 */
#ifndef ATTNMETA_TESTS_TOPK_CASES_H
#define ATTNMETA_TESTS_TOPK_CASES_H

#include <stdint.h>

#include "topk_reference.h"

typedef struct amt_topk_batch {
  char name[64];
  amr_topk_input in;   /* points into the arrays below; in.compact is the case's mode */
  int count;           /* the case's mode: valid_count wanted */
  int64_t out_stride;  /* >= K */
  int32_t stride_rows_arg; /* what the caller passes (0 = block_size) */
  int values_unspecified; /* hostile boundaries: only bounds, guards and strides are checked */
  int misalign;        /* conformance vectors: bit 0 topk, bit 1 out start 4 bytes off 16 */
  /* owned arrays (NULL when absent); lengths for uploads */
  int32_t *topk, *qsl, *req_id, *table, *prefill_req, *workspace_starts;
  int64_t *token_slot;
  int64_t topk_elems, table_elems;
  /* hand-checked expectations (independent of the reference), or -1 */
  int32_t expect_count0;        /* valid_count[0] */
  int32_t expect_row0[8];       /* out row 0, first 8 columns */
} amt_topk_batch;

int amt_topk_num_cases(void);
const char *amt_topk_case_name(int i);
/* Case i built (NULL on allocation failure). */
amt_topk_batch *amt_topk_materialize(int i);
void amt_topk_batch_free(amt_topk_batch *b);

#endif /* ATTNMETA_TESTS_TOPK_CASES_H */
