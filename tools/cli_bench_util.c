// SPDX-License-Identifier: Apache-2.0
/* attnmeta bench: the helpers every part uses (a failed call's message, the
 * generator of the drawn inputs). They call no other part. */
#include <stdint.h>
#include <stdio.h>

#include "cli_bench_parts.h"

int bench_report(attnmeta_context *ctx, attnmeta_status st, const char *what) {
  if (st == ATTNMETA_OK) return 0;
  fprintf(stderr, "attnmeta bench: %s: %s: %s\n", what, attnmeta_status_string(st),
          ctx ? attnmeta_last_error(ctx) : attnmeta_open_error());
  return 1;
}

int bench_req_of(const int32_t *qsl, int R, int t) {
  for (int q = 0; q < R; ++q)
    if (qsl[q + 1] > t) return q;
  return R - 1;
}

int64_t bench_dcp_local(int64_t L, int W) {
  int64_t base, rest;
  if (W <= 1) return L;
  base = L / W;
  rest = L - base * W - DCP_RANK;
  return base + (rest < 0 ? 0 : rest > 1 ? 1 : rest);
}
