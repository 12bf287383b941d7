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

/* Converts it on ctx into out (four values, left as they were when the call
 * refuses). */
static inline attnmeta_status amt_convert_tiny_topk(attnmeta_context *ctx, int32_t out[4]) {
  static const int32_t topk[4] = {0, 1, 2, 3}, qsl[2] = {0, 1};
  attnmeta_topk op;
  attnmeta_topk_init(&op);
  op.topk = topk;
  op.topk_stride = 4;
  op.topk_count = 4;
  op.num_tokens = 1;
  op.query_start_loc = qsl;
  op.num_reqs = 1;
  op.out = out;
  op.out_stride = 4;
  return attnmeta_convert_topk(ctx, &op, NULL);
}

#endif /* ATTNMETA_TESTS_TINY_TOPK_H */
