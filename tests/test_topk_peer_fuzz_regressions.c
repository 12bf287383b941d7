// SPDX-License-Identifier: Apache-2.0
/*
 * Regressions found by fuzz_args in the DCP peer views' host checks
 * (contract 6d): a rotated table of no pages (peer_table_width 0) reads no
 * gathered table, so the tables may be NULL even when R and M are not 0,
 * their sizes are not checked (nor combined into byte offsets), and
 * nothing is written.
 */
#include <criterion/criterion.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"

#define POISON ((int32_t)0x5A5A5A5A)

Test(topk_peer_fuzz_regressions, width_zero_tables_null) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  attnmeta_topk op;
  int32_t out[16], err = 0;
  int j;
  for (j = 0; j < 16; j++) out[j] = POISON;
  amt_topk_rows(&op, NULL, 0, 1, NULL);
  amt_topk_dcp(&op, 2, 1, 1);
  op.num_reqs = 26;
  op.peer_blocks = 8;
  op.peer_tables = NULL;
  op.peer_tables_cols = 10;
  op.peer_tables_stride = 10;
  op.peer_tables_owner_stride = 260;
  op.peer_table_out = out;
  op.peer_table_width = 0;
  op.peer_table_out_stride = 4;
  op.error_word = &err;
  cr_expect(attnmeta_convert_topk(ctx, &op, NULL) == ATTNMETA_OK, "%s", attnmeta_last_error(ctx));
  for (j = 0; j < 16; j++) cr_expect(out[j] == POISON, "out[%d] written: %d", j, out[j]);
  cr_expect(err == 0, "error word 0x%x", (unsigned)err);
  /* sizes of tables not read are not combined: a stride that would
   * overflow a byte offset (found as signed overflow in the overlap check) */
  op.peer_tables_stride = -4340410370284600381;
  op.num_reqs = 30;
  op.peer_tables_owner_stride = INT64_MAX;
  cr_expect(attnmeta_convert_topk(ctx, &op, NULL) == ATTNMETA_OK, "%s", attnmeta_last_error(ctx));
  for (j = 0; j < 16; j++) cr_expect(out[j] == POISON, "out[%d] written: %d", j, out[j]);
  op.peer_tables_stride = 10;
  op.peer_tables_owner_stride = 260;
  op.num_reqs = 26;
  /* with pages to build, the NULL tables are refused as before */
  op.peer_table_width = 4;
  cr_expect(attnmeta_convert_topk(ctx, &op, NULL) == ATTNMETA_ERR_NULL_POINTER, "%s",
            attnmeta_last_error(ctx));
  for (j = 0; j < 16; j++) cr_expect(out[j] == POISON, "out[%d] written on error", j);
  attnmeta_close(ctx);
}
