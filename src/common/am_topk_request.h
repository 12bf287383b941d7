// SPDX-License-Identifier: Apache-2.0
/*
 * How the top-k conversion finds a token's request (docs/contract.md, "Top-k
 * indices to global KV slots"), for both of its bodies.
 */
#ifndef ATTNMETA_AM_TOPK_REQUEST_H
#define ATTNMETA_AM_TOPK_REQUEST_H

#include "am_dialect.h"
#include "am_token_math.h"
#include "am_topk_params.h"

/* req_id[t] where it is a request in [0, R), else -1. */
AM_DEVICE int32_t am_topk_request_id(const am_topk_params *p, uint32_t t) {
  const int32_t r = p->req_id[t];
  return r >= 0 && r < p->num_reqs ? r : -1;
}

/* The request of token t, or -1 when t is padding or its request is not in
 * [0, R). With qsl: req(t) for t < clamp(qsl[R], 0, T), as the step finds it. */
AM_DEVICE int32_t am_topk_request(const am_topk_params *p, uint32_t t) {
  if (p->num_reqs <= 0) return -1;
  if (p->req_id) {
    return am_topk_request_id(p, t);
  } else {
    /* Guess t * R / T (exact for one token a request, and for equal
     * query lengths), so its boundaries load together with the total and
     * a right guess needs no second round of loads. The guess depends on
     * t, R and T only: every launch shape finds the same request. */
    const uint32_t num_reqs = (uint32_t)p->num_reqs;
    const uint64_t guess = (uint64_t)t * num_reqs / (uint32_t)p->num_tokens;
    const uint32_t g = guess < num_reqs - 1 ? (uint32_t)guess : num_reqs - 1;
    const int32_t total = p->qsl[num_reqs], gs = p->qsl[g], ge = p->qsl[g + 1];
    if ((int32_t)t >= total) return -1; /* padding (total <= t, or total < 0) */
    return am_find_req(p->qsl, num_reqs, t, total, g, gs, ge).req;
  }
}

#endif /* ATTNMETA_AM_TOPK_REQUEST_H */
