// SPDX-License-Identifier: Apache-2.0
/*
 * The smallest valid top-k conversion (one token of one request, four
 * indices, no block table), for the tests that only ask whether a module
 * takes the call at all.
 */
#ifndef ATTNMETA_TESTS_TINY_TOPK_H
#define ATTNMETA_TESTS_TINY_TOPK_H

#include <stdint.h>

#include "attnmeta/attnmeta.h"
#include "op_inputs.h"

/* Converts it on ctx into out (four values, left as they were when the call
 * refuses). */
static inline attnmeta_status amt_convert_tiny_topk(attnmeta_context *ctx, int32_t out[4]) {
  static const int32_t topk[4] = {0, 1, 2, 3}, qsl[2] = {0, 1};
  attnmeta_topk op;
  amt_topk_rows(&op, topk, 1, 4, out);
  op.query_start_loc = qsl;
  op.num_reqs = 1;
  return attnmeta_convert_topk(ctx, &op, NULL);
}

#endif /* ATTNMETA_TESTS_TINY_TOPK_H */
