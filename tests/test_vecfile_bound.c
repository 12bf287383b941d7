// SPDX-License-Identifier: Apache-2.0
/*
 * The vector reader bounds a file's values together (every buffer of every
 * vector, repeat counts expanded), not each buffer alone: a file of a few
 * hundred bytes whose repeat counts declare gigabytes is refused at the
 * declaration, quickly, with a message saying so, before anything is
 * allocated from the counts.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "attnmeta/conformance/vecfile.h"

#define HEAD                            \
  "op step\n"                           \
  "param num_reqs 1\n"                  \
  "param num_tokens 2\n"                \
  "param capacity 3\n"                  \
  "param block_table_cols 1\n"          \
  "param block_table_stride 1\n"        \
  "param block_table_out_stride 1\n"    \
  "param num_mapped -1\n"               \
  "param block_size 4\n"                \
  "param dcp_world_size 1\n"            \
  "param dcp_interleave 1\n"            \
  "param misalign 0\n"                  \
  "products token_to_req slot_mapping\n" \
  "input query_start_loc 2 0 1\n"       \
  "input seq_lens 1 4\n"
#define TAIL                        \
  "rank 0\n"                        \
  "expect token_to_req 2 0 0\n"     \
  "expect slot_mapping 3 31 -1 -1\n" \
  "expect_flags 0x0 0x0 0x0 exact\n" \
  "end\n"

static void expect_refused(const char *text, const char *what) {
  char err[512];
  amv_file f;
  cr_expect_neq(amv_parse(text, strlen(text), what, NULL, &f, err, sizeof err), 0,
                "%s: accepted", what);
  cr_expect(strstr(err, "in all") != NULL, "%s: message %s", what, err);
}

/* One buffer of the largest size a buffer may declare, beside the others. */
Test(vecfile_bound, one_buffer_at_the_limit_with_others, .timeout = 30) {
  static const char text[] = "attnmeta-vectors 1\nvector big\n" HEAD
                             "input block_table 67108864 7 0*67108863\n" TAIL;
  expect_refused(text, "one buffer");
}

/* Buffers each within the per-buffer bound, too many together (the file
 * would have taken 8 x 512 MB). */
Test(vecfile_bound, many_vectors, .timeout = 30) {
  char text[8192];
  size_t n = 0;
  int i;
  n += (size_t)snprintf(text + n, sizeof text - n, "attnmeta-vectors 1\n");
  for (i = 0; i < 8; ++i)
    n += (size_t)snprintf(text + n, sizeof text - n,
                          "vector v%d\n" HEAD "input block_table 33554432 7 0*33554431\n" TAIL, i);
  cr_assert_lt(n, sizeof text);
  expect_refused(text, "many vectors");
}

/* Under the bound: read as before. */
Test(vecfile_bound, under_the_bound) {
  static const char text[] = "attnmeta-vectors 1\nvector small\n" HEAD
                             "input block_table 1000 7 0*999\n" TAIL;
  char err[512];
  amv_file f;
  cr_assert_eq(amv_parse(text, sizeof text - 1, "small", NULL, &f, err, sizeof err), 0, "%s", err);
  cr_expect_eq(f.nvectors, 1);
  amv_file_free(&f);
}
