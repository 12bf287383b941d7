// SPDX-License-Identifier: Apache-2.0
/*
 * A forced grid on the CPU backend (attnmeta_set_launch_config): the
 * backend runs no more blocks than have work, for the top-k conversion as
 * for the step, so a grid of INT32_MAX costs no more than the work itself
 * and gives the same bytes as the automatic grid. Results are checked
 * against a naive conversion written here; the rows past T stay poisoned.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"

#define POISON ((int32_t)0x5A5A5A5A)
#define T 3
#define K 4
#define BS 4

static const int32_t topk_in[T * K] = {0, 5, -1, 2, 7, 1, 9, -1, 3, 4, 0, 11};
static const int32_t req_of[T] = {0, 1, 1};
static const int32_t table[2 * 3] = {10, 11, 12, 20, 21, 22};

/* slot = table[req][p / BS] * BS + p % BS; -1 for -1; counts of valid ones */
static void naive(int32_t *out, int32_t *counts) {
  int t, k;
  for (t = 0; t < T; ++t) {
    counts[t] = 0;
    for (k = 0; k < K; ++k) {
      const int32_t p = topk_in[t * K + k];
      out[t * K + k] = p < 0 ? -1 : table[req_of[t] * 3 + p / BS] * BS + p % BS;
      counts[t] += p >= 0;
    }
  }
}

static void run_topk(int32_t grid, int compact, int32_t *out, int32_t *counts) {
  attnmeta_context *ctx = amt_cpu_with_grid(grid);
  attnmeta_topk op;
  attnmeta_status st;
  amt_topk_rows(&op, topk_in, T, K, out);
  amt_topk_table(&op, req_of, 2, table, 3, BS);
  op.valid_count = counts;
  op.compact = compact;
  st = attnmeta_convert_topk(ctx, &op, NULL);
  cr_assert_eq(st, ATTNMETA_OK, "grid %d: %s", grid, attnmeta_last_error(ctx));
  attnmeta_close(ctx);
}

/* Without the bound one token took more than a minute; the timeout fails it. */
Test(cpu_grid_bound, topk_forced_grid, .timeout = 20) {
  static const int32_t grids[] = {INT32_MAX, 1 << 30, T + 1, T, 2, 1};
  int32_t want[T * K], want_counts[T];
  size_t g;
  naive(want, want_counts);
  for (g = 0; g < sizeof grids / sizeof grids[0]; ++g) {
    int32_t out[(T + 1) * K], counts[T + 1];
    amt_fill32(out, (T + 1) * K, POISON);
    amt_fill32(counts, T + 1, POISON);
    run_topk(grids[g], 0, out, counts);
    cr_expect(memcmp(out, want, sizeof want) == 0, "grid %d: rows differ from the naive ones",
              grids[g]);
    cr_expect(memcmp(counts, want_counts, sizeof want_counts) == 0, "grid %d: counts", grids[g]);
    cr_expect(out[T * K] == POISON && counts[T] == POISON, "grid %d: written past T", grids[g]);
  }
}

/* Compaction: each row's valid slots first, then -1; same bytes for any grid. */
Test(cpu_grid_bound, topk_forced_grid_compact, .timeout = 20) {
  int32_t want[T * K], want_counts[T], auto_out[T * K], auto_counts[T];
  int32_t out[T * K], counts[T];
  int t, k, n;
  naive(want, want_counts);
  for (t = 0; t < T; ++t) { /* compact the naive rows */
    int32_t row[K];
    for (k = 0, n = 0; k < K; ++k)
      if (want[t * K + k] >= 0) row[n++] = want[t * K + k];
    while (n < K) row[n++] = -1;
    memcpy(want + t * K, row, sizeof row);
  }
  amt_fill32(auto_out, T * K, POISON);
  amt_fill32(auto_counts, T, POISON);
  run_topk(0, 1, auto_out, auto_counts);
  cr_expect(memcmp(auto_out, want, sizeof want) == 0, "automatic grid, compacted");
  cr_expect(memcmp(auto_counts, want_counts, sizeof want_counts) == 0, "automatic grid, counts");
  amt_fill32(out, T * K, POISON);
  amt_fill32(counts, T, POISON);
  run_topk(INT32_MAX, 1, out, counts);
  cr_expect(memcmp(out, want, sizeof want) == 0, "grid INT32_MAX, compacted");
  cr_expect(memcmp(counts, want_counts, sizeof want_counts) == 0, "grid INT32_MAX, counts");
}
