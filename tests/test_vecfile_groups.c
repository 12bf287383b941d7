// SPDX-License-Identifier: Apache-2.0
/*
 * Version 5 vectors of SWA groups (contract section 7): the group count and
 * strides by name, the stacked table's and rows' counts checked against
 * them, and the runner laying out and comparing every group at its group
 * stride (the gaps between groups must stay untouched). The vector is the
 * contract's example: G = 2, window 4, one request at position 9, block
 * size 4, tables [0, 1, 2] and [5, 6, 7]: rows 6..9 and 26..29.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/conformance/vecfile.h"
#include "attnmeta/conformance/vecrun.h"
#include "harness.h"
#include "vector_text.h"

static const char grouped[] =
    "attnmeta-vectors 5\n"
    "vector grouped\n"
    "op step\n"
    "param num_reqs 1\n"
    "param num_tokens 1\n"
    "param capacity 2\n"
    "param block_table_cols 0\n"
    "param block_table_stride 0\n"
    "param block_table_out_stride 0\n"
    "param num_mapped -1\n"
    "param block_size 64\n"
    "param dcp_world_size 1\n"
    "param dcp_interleave 1\n"
    "param misalign 0\n"
    "param swa_block_size 4\n"
    "param swa_window 4\n"
    "param swa_width 4\n"
    "param swa_mode 0\n"
    "param swa_indices_stride 5\n"
    "param swa_block_table_cols 3\n"
    "param swa_block_table_stride 3\n"
    "param swa_block_table_group_stride 4\n"
    "param swa_indices_group_stride 12\n"
    "param swa_groups 2\n"
    "products swa_indices swa_lens\n"
    "input query_start_loc 2 0 1\n"
    "input seq_lens 1 10\n"
    "input block_table 0\n"
    "input swa_block_table 7 0 1 2 -9 5 6 7\n"
    "rank 0\n"
    "expect swa_indices 8 6 7 8 9 26 27 28 29\n"
    "expect swa_lens 2 4 0\n"
    "expect_flags 0x0 0x0 0x0 exact\n"
    "expect_flags_dsv4 0x0 0x0 0x0 0x0 0x0 0x0 0x0\n"
    "end\n";

Test(vectors_groups, parser_reads_the_groups) {
  char err[512];
  amv_file f;
  cr_assert_eq(amv_parse(grouped, sizeof grouped - 1, "g", NULL, &f, err, sizeof err), 0, "%s",
               err);
  cr_expect_eq(f.vectors[0].step.swa_groups, 2);
  cr_expect_eq(f.vectors[0].step.swa_block_table_group_stride, 4);
  cr_expect_eq(f.vectors[0].step.swa_indices_group_stride, 12);
  amv_file_free(&f);
}

Test(vectors_groups, parser_checks_the_counts) {
  static const amt_malformed bad[] = {
      {"input swa_block_table 7 0 1 2 -9 5 6 7\n", "input swa_block_table 6 0 1 2 -9 5 6\n", 29,
       "the table needs 7"},
      {"expect swa_indices 8 6 7 8 9 26 27 28 29\n", "expect swa_indices 4 6 7 8 9\n", 31,
       "the sizes make it 8"},
      {"param swa_groups 2\n", "param swa_groups -1\n", 0, "swa_groups in [0, 64]"},
      {"param swa_indices_group_stride 12\n", "param swa_indices_group_stride -5\n", 0,
       "group strides"},
  };
  amt_expect_malformed(grouped, bad, sizeof bad / sizeof bad[0]);
}

Test(vectors_groups, runner_checks_every_group) {
  amt_collected got;
  char *wrong;
  cr_expect_eq(amt_run_text(grouped, &got), AMV_PASS, "the correct vector fails: %s",
               got.first.text);
  /* group 1's third entry: at group stride 12, row 0, column 2 */
  wrong = amt_edit(grouped, "26 27 28 29", "26 27 38 29");
  cr_expect_eq(amt_run_text(wrong, &got), AMV_FAIL);
  cr_expect_str_eq(got.first.product, "swa_indices");
  cr_expect_eq(got.first.index, 14);
  cr_expect_eq(got.first.expected, 38);
  cr_expect_eq(got.first.got, 28);
  free(wrong);
}
