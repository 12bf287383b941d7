// SPDX-License-Identifier: Apache-2.0
/*
 * A forced grid on the CPU backend for the pool operation
 * (attnmeta_build_pool_indices): the backend runs only the blocks that have
 * a request row, as it does for the step and the top-k conversion, so a
 * grid of INT32_MAX costs no more than the rows themselves (it ran 2^31
 * empty blocks, over five seconds a call, before) and gives the bytes of
 * the automatic grid. Results are checked against numbers worked out here;
 * the entries past each product stay poisoned.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"

#define POISON ((int32_t)0x5A5A5A5A)
#define B 3
#define COLS 5

/* Pool rows 0 and 1; request rows read pool rows 1, 0, 1 from columns 1, 0, 3. */
static const int32_t pool[2 * COLS] = {10, 11, 12, 13, 14, 20, 21, 22, 23, 24};
static const int64_t rows_of[B] = {1, 0, 1}, lengths[B] = {3, 2, 2}, starts[B] = {1, 0, 3};

static void run_pool(int32_t grid, int32_t *indices, int32_t *indptr, int32_t *pages) {
  attnmeta_context *ctx = amt_cpu_with_grid(grid);
  attnmeta_pool op;
  attnmeta_status st;
  amt_pool_table(&op, pool, 2, COLS, COLS);
  amt_pool_reqs(&op, rows_of, lengths, B);
  amt_pool_slots(&op, NULL, indices, 8);
  op.kv_start_idx = starts;
  op.page_size = 2;
  op.kv_indptr_out = indptr;
  op.page_table = pages;
  op.page_table_width = 2;
  op.page_table_stride = 2;
  st = attnmeta_build_pool_indices(ctx, &op, NULL);
  cr_assert_eq(st, ATTNMETA_OK, "grid %d: %s", grid, attnmeta_last_error(ctx));
  attnmeta_close(ctx);
}

/* Without the bound these grids took 8 to 13 s together; the timeout fails them. */
Test(pool_cpu_grid, forced_grid, .timeout = 5) {
  static const int32_t grids[] = {INT32_MAX, INT32_MAX - 1, 1 << 30, B + 1, B, 2, 1, 0};
  /* rows 21 22 23 | 10 11 | 23 24; sums 0 3 5 7; pages (s + 2p) / 2 */
  static const int32_t want_indices[9] = {21, 22, 23, 10, 11, 23, 24, POISON, POISON};
  static const int32_t want_indptr[B + 2] = {0, 3, 5, 7, POISON};
  static const int32_t want_pages[2 * B + 1] = {10, 11, 5, POISON, 11, POISON, POISON};
  size_t g;
  for (g = 0; g < sizeof grids / sizeof grids[0]; ++g) {
    int32_t indices[9], indptr[B + 2], pages[2 * B + 1];
    amt_fill32(indices, 9, POISON);
    amt_fill32(indptr, B + 2, POISON);
    amt_fill32(pages, 2 * B + 1, POISON);
    run_pool(grids[g], indices, indptr, pages);
    cr_expect(memcmp(indices, want_indices, sizeof indices) == 0, "grid %d: kv_indices",
              grids[g]);
    cr_expect(memcmp(indptr, want_indptr, sizeof indptr) == 0, "grid %d: kv_indptr_out",
              grids[g]);
    cr_expect(memcmp(pages, want_pages, sizeof pages) == 0, "grid %d: page_table", grids[g]);
  }
}
