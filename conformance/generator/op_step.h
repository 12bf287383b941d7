// SPDX-License-Identifier: Apache-2.0
/*
 * The generator's "op step" vectors (attnmeta_build_step): one case of the
 * case table through the naive reference, every DCP rank, into a vector.
 * Another op gets a file of its own beside this one.
 */
#ifndef ATTNMETA_CONFORMANCE_OP_STEP_H
#define ATTNMETA_CONFORMANCE_OP_STEP_H

#include "attnmeta/conformance/vecfile.h"
#include "cases.h"

/* Fills *v (free with amv_vector_free); returns 0, or -1 with a message on
 * stderr when the reference disagrees with the case. */
int amg_step_vector(const amt_case *c, amv_vector *v);

/* Shared with the other step generators. */
struct amr_output;
/* 0 when the reference raised every flag the case expects (seen covers
 * expected), else -1 with a message on stderr naming the case. */
int amg_check_case_flags(const char *name, int32_t seen, int32_t expected);
/* int32 values as a vector's values. */
void amg_values32(amv_values *out, const int32_t *v, int64_t n);
void amg_values64(amv_values *out, const int64_t *v, int64_t n);
/* Expected values of one output: [0, known) from ref32 or ref64 (checked
 * when wf, else unchecked), [known, n) the contract's fixed tail value. */
void amg_expect_values(amv_values *out, int64_t n, int64_t known, int wf, const int32_t *ref32,
                       const int64_t *ref64, int64_t tail);
/* A rank's expected part-1 products (those of `products`) and its flags. */
void amg_expect_part1(amv_rank *rk, const struct amr_output *o, unsigned products, int32_t R,
                      int32_t T, int32_t C, int32_t cols);

#endif /* ATTNMETA_CONFORMANCE_OP_STEP_H */
