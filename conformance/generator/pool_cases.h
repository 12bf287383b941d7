// SPDX-License-Identifier: Apache-2.0
/*
 * The pool operation's case table (attnmeta_build_pool_indices; contract
 * sections 12 and 13, docs/c_api.md "SGLang's request pool"): SGLang's
 * FlashInfer slot lists, FlashMLA page tables, FA3/TRT-LLM page tables with
 * cumulative lengths, DSA decode/verify/draft-extend metadata and hostile
 * device data, each a named case with its host inputs (seeded, so the same
 * sources give the same data) and the outputs it builds. The vector files
 * get one vector a case (op_pool.c); the file is chosen by the name's
 * prefix: slots_, pages_, fa3_, dsa_, err_.
 */
#ifndef ATTNMETA_CONFORMANCE_POOL_CASES_H
#define ATTNMETA_CONFORMANCE_POOL_CASES_H

#include "pool_reference.h"

#define AMP_MAX_OWNED 16

typedef struct amp_case {
  const char *name;
  amr_pool_input in;
  const char *want; /* the outputs built, attnmeta_pool member names, space separated */
  void *owned[AMP_MAX_OWNED]; /* the arrays `in` points into */
  int nowned;
  int32_t span; /* pool(): pages drawn from [1, span]; 0: 40000 */
  int failed; /* out of memory while making it */
} amp_case;

int amp_num_cases(void);
const char *amp_case_name(int i);
/* Case i made (free with amp_case_free); NULL when out of memory. */
amp_case *amp_case_make(int i);
void amp_case_free(amp_case *c);

#endif /* ATTNMETA_CONFORMANCE_POOL_CASES_H */
