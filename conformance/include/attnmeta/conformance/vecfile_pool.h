// SPDX-License-Identifier: Apache-2.0
/*
 * The "op pool" vectors of the conformance kit (format version 6,
 * conformance/spec/attnmeta-vectors-v6.md): one attnmeta_build_pool_indices
 * operation, its params, inputs and expected outputs, each under its
 * attnmeta_pool member name (amv_vector.pool of vecfile.h). Inputs and
 * outputs are numbered in the schema's order (src/common/am_schema.h,
 * AM_POOL_FIELDS): the IN members, and the OUT members but the error word;
 * a member appended to attnmeta_pool is one more of either.
 */
#ifndef ATTNMETA_CONFORMANCE_VECFILE_POOL_H
#define ATTNMETA_CONFORMANCE_VECFILE_POOL_H

#include <stdint.h>

#include "vecfile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AMV_POOL_MAX_INPUTS 32  /* room for inputs appended later (a bit each) */
#define AMV_POOL_MAX_OUTPUTS 32 /* and for outputs */
/* amv_values.care of an "op pool" expectation: 1 checked, 0 unchecked ("?"),
 * AMV_UNTOUCHED ("_"): the operation writes nothing there, the runner's
 * poison must survive. */
#define AMV_UNTOUCHED 2

typedef struct amv_pool {
  /* its params, each in the attnmeta_pool member of its name (those left
   * out as attnmeta_pool_init leaves them; buffers NULL) */
  attnmeta_pool op;
  uint32_t inputs;  /* bit i: input i given (the operation gets a buffer), else NULL */
  uint32_t outputs; /* bit o: output o built and expected, else NULL */
  amv_values input[AMV_POOL_MAX_INPUTS];   /* exactly its extent's elements */
  amv_values expect[AMV_POOL_MAX_OUTPUTS]; /* rows x cols, dense row by row */
  int32_t flags;    /* the error flags the data raises */
  int flags_exact;  /* 1: exactly these; 0: at least these */
} amv_pool;

/* The names of input i and output o ("?" past the last), and how many
 * there are. */
const char *amv_pool_input_name(int input);
const char *amv_pool_output_name(int output);
int amv_pool_num_inputs(void);
int amv_pool_num_outputs(void);
/* The elements input i / output o covers with the params of p (rows x
 * cols for an output; an input table from its first element to its last,
 * 0 when it has no rows or columns); -1 when they are negative or more
 * than AMV_MAX_ELEMS. */
int64_t amv_pool_input_count(const amv_pool *p, int input);
int64_t amv_pool_output_count(const amv_pool *p, int output);
/* An output's rows, columns and row stride with the params of p. */
void amv_pool_output_shape(const amv_pool *p, int output, int64_t *rows, int64_t *cols,
                           int64_t *stride);
int amv_pool_output_is64(int output);
int amv_pool_input_is64(int input);

void amv_pool_free(amv_pool *p);

#ifdef __cplusplus
}
#endif

#endif /* ATTNMETA_CONFORMANCE_VECFILE_POOL_H */
