// SPDX-License-Identifier: Apache-2.0
/*
 * Naive host reference of the DeepSeek-V3.2/V4 products of a step
 * (docs/contract.md sections 5, 5a, 7, 8), written from the contract alone:
 * one token at a time, a linear search for its request, every compressed
 * row of a C128A row visited and tested for its owner, 64-bit arithmetic.
 */
#ifndef ATTNMETA_TESTS_REFERENCE_DSV4_H
#define ATTNMETA_TESTS_REFERENCE_DSV4_H

#include <stdint.h>

#include "attnmeta/attnmeta.h"
#include "reference.h"

#define AMR_MAX_GROUPS 4

/* A block table: `rows` rows of `cols` ids, row stride `stride`. */
typedef struct amr_table {
  const int32_t *ids;
  int32_t cols;
  int64_t stride;
} amr_table;

typedef struct amr_group {
  amr_table table;
  int32_t ratio, block_size;
} amr_group;

/* The step's part-1 input (qsl, R, T, C, seq_lens, DCP) is an amr_input;
 * this adds what the DSV4 products read. Absent products: ngroups 0,
 * swa_width / c128a_width < 0, indexer_ratio < 1. */
typedef struct amr_dsv4_input {
  int ngroups;
  amr_group groups[AMR_MAX_GROUPS];
  amr_table swa_table;
  int32_t swa_block_size, swa_window, swa_width, swa_mode;
  amr_table c128a_table;
  int32_t c128a_ratio, c128a_block_size, c128a_width, c128a_mode;
  int32_t indexer_ratio, indexer_mode; /* section 5a; absent when indexer_ratio < 1 */
  const int64_t *swa_token_slots; /* [T] or NULL: the step's KV slot of each token */
  int32_t c128a_num_decode;        /* mixed mode: tokens [0, this) are decode tokens */
  /* the settings and host inputs of the products declared after 0.3, by
   * their attnmeta_step names (the schema's); NULL: none of them */
  const attnmeta_step *step;
} amr_dsv4_input;

/* Dense outputs: rows are [T][width]. */
typedef struct amr_dsv4_output {
  int64_t *cslots[AMR_MAX_GROUPS]; /* [C] */
  int32_t *clens[AMR_MAX_GROUPS];  /* [R] */
  int32_t *swa;                    /* [T * swa_width] */
  int32_t *swa_lens;               /* [C] */
  int32_t *c128a;                  /* [T * c128a_width] */
  int32_t *c128a_lens;             /* [C] */
  int32_t *indexer_lens;           /* [C] */
  int32_t *c128a_prefill;          /* [T * c128a_width]: mixed mode's prefill rows */
  int32_t group_flags[AMR_MAX_GROUPS];          /* raised by each product */
  int32_t swa_flags, c128a_flags;
} amr_dsv4_output;

amr_dsv4_output *amr_dsv4_alloc(const amr_input *in, const amr_dsv4_input *d);
void amr_dsv4_free(amr_dsv4_output *o);
void amr_dsv4_build(const amr_input *in, const amr_dsv4_input *d, amr_dsv4_output *o);

#endif /* ATTNMETA_TESTS_REFERENCE_DSV4_H */
