// SPDX-License-Identifier: Apache-2.0
/*
 * The conformance vector format (docs/conformance.md): the parser accepts
 * every documented form, refuses malformed files with the right line, the
 * writer's output reads back to the same values, and the vector runner
 * catches a wrong result (and ignores an unchecked one).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "vector_text.h"
#include "attnmeta/conformance/vecfile.h"
#include "attnmeta/conformance/vecrun.h"

/* R = 1 (qlen 1, seq_len 4), T = 2, C = 3, one column, block size 4:
 * token 0 is at position 3 of block 7 (slot 31); token 1 is padding. */
static const char tiny[] =
    "attnmeta-vectors 1\n"                 /* 1 */
    "# a comment\n"                        /* 2 */
    "\n"                                   /* 3 */
    "vector tiny\n"                        /* 4 */
    "op step\n"                            /* 5 */
    "param num_reqs 1\n"                   /* 6 */
    "param num_tokens 2\n"                 /* 7 */
    "param capacity 3\n"                   /* 8 */
    "param block_table_cols 1\n"           /* 9 */
    "param block_table_stride 1\n"         /* 10 */
    "param block_table_out_stride 1\n"     /* 11 */
    "param num_mapped -1\n"                /* 12 */
    "param block_size 4\n"                 /* 13 */
    "param dcp_world_size 1\n"             /* 14 */
    "param dcp_interleave 1\n"             /* 15 */
    "param misalign 0\n"                   /* 16 */
    "products token_to_req slot_mapping\n" /* 17 */
    "input query_start_loc 2 0 1\n"        /* 18 */
    "input seq_lens 1 4\n"                 /* 19 */
    "input block_table 1 7\n"              /* 20 */
    "rank 0\n"                             /* 21 */
    "expect token_to_req 2 0 0\n"          /* 22 */
    "expect slot_mapping 3 31 -1 -1\n"     /* 23 */
    "expect_flags 0x0 0x0 0x0 exact\n"     /* 24 */
    "end\n";                               /* 25 */

Test(vectors, parser_accepts_every_form) {
  static const char text[] =
      "attnmeta-vectors 1\r\n"
      "vector forms.1-x\n"
      "op step\n"
      "param misalign 3\n"
      "param num_tokens 15\n"
      "param num_reqs 2\n"
      "param capacity 15\n"
      "param block_table_cols 2\n"
      "param block_table_stride 3\n"
      "param block_table_out_stride 2\n"
      "param num_mapped 5\n"
      "param block_size 16\n"
      "param dcp_world_size 2\n"
      "param dcp_interleave 1\n"
      "products positions token_to_req\n"
      "input seq_lens 2 2147483647 -2147483648\n"
      "input query_start_loc 3 0*2\n"
      "\t 9\n"
      "input block_table 9 1..3 3..1 -1*3\n"
      "rank 1\n"
      "expect token_to_req 15 1..4 7*4 ?*2 5\n"
      "  3..0\n"
      "expect_flags 0x1f 0x0 0x7fffffff at_least\n"
      "expect positions 15 9223372036854775807 -9223372036854775808 ? 0*12\n"
      "# comments and blank lines between vectors\n"
      "\n"
      "rank 0\n"
      "expect positions 15 0*15\n"
      "expect token_to_req 15 0*15\n"
      "expect_flags 0x0 0x0 0x0 exact\n"
      "end\n";
  static const int64_t want_t2r[15] = {1, 2, 3, 4, 7, 7, 7, 7, 0, 0, 5, 3, 2, 1, 0};
  static const int64_t want_table[9] = {1, 2, 3, 3, 2, 1, -1, -1, -1};
  amv_file f;
  char err[512];
  const amv_vector *v;
  const amv_rank *rk;
  int i;
  cr_assert_eq(amv_parse(text, sizeof text - 1, "forms", NULL, &f, err, sizeof err), 0, "%s", err);
  cr_assert_eq(f.nvectors, 1);
  v = &f.vectors[0];
  cr_expect_str_eq(v->name, "forms.1-x");
  cr_expect_eq(v->misalign, 3);
  cr_expect_eq(v->in_stride, 3);
  cr_expect_eq(v->products, (1u << AMV_POSITIONS) | (1u << AMV_TOKEN_TO_REQ));
  cr_expect_eq(v->input[AMV_QUERY_START_LOC].v[2], 9);
  cr_expect_eq(v->input[AMV_SEQ_LENS].v[1], INT32_MIN);
  for (i = 0; i < 9; i++) cr_expect_eq(v->input[AMV_BLOCK_TABLE].v[i], want_table[i], "table[%d]", i);
  cr_assert_eq(v->nranks, 2);
  rk = &v->ranks[0];
  cr_expect_eq(rk->rank, 1);
  for (i = 0; i < 15; i++) {
    const int unchecked = i == 8 || i == 9;
    cr_expect_eq(rk->expect[AMV_TOKEN_TO_REQ].care[i], unchecked ? 0 : 1, "care[%d]", i);
    if (!unchecked) cr_expect_eq(rk->expect[AMV_TOKEN_TO_REQ].v[i], want_t2r[i], "t2r[%d]", i);
  }
  cr_expect_eq(rk->expect[AMV_POSITIONS].v[0], INT64_MAX);
  cr_expect_eq(rk->expect[AMV_POSITIONS].v[1], INT64_MIN);
  cr_expect_eq(rk->expect[AMV_POSITIONS].care[2], 0);
  cr_expect_eq(rk->flags_requests, 0x1f);
  cr_expect_eq(rk->flags_slots, 0x7fffffff);
  cr_expect_eq(rk->flags_exact, 0);
  cr_expect(v->ranks[1].expect[AMV_POSITIONS].care == NULL);
  cr_expect_eq(v->ranks[1].flags_exact, 1);
  amv_file_free(&f);

  /* `only` keeps the one vector of that name (here: none) */
  cr_assert_eq(amv_parse(tiny, sizeof tiny - 1, "tiny", "other", &f, err, sizeof err), 0, "%s", err);
  cr_expect_eq(f.nvectors, 0);
  amv_file_free(&f);
}

/* Version 2: tiny plus a compressed group (ratio 4, block 2, table [5, 7]) and
 * the C128A rows in local mode (width 2, no table). One request of one token
 * at position 3: it completes compressed row 0 (slot 5 * 2 + 0 = 10) and
 * sees (3 + 1) / 4 = 1 row of ratio 4. */
static const char tiny2[] =
    "attnmeta-vectors 2\n"
    "vector tiny2\n"
    "op step\n"
    "param num_reqs 1\n"
    "param num_tokens 2\n"
    "param capacity 3\n"
    "param block_table_cols 1\n"
    "param block_table_stride 1\n"
    "param block_table_out_stride 1\n"
    "param num_mapped -1\n"
    "param block_size 4\n"
    "param dcp_world_size 1\n"
    "param dcp_interleave 1\n"
    "param misalign 0\n"
    "param group0.ratio 4\n"
    "param group0.block_size 2\n"
    "param group0.block_table_cols 2\n"
    "param group0.block_table_stride 2\n"
    "param c128a_ratio 4\n"
    "param c128a_block_size 1\n"
    "param c128a_width 2\n"
    "param c128a_mode 1\n"
    "param c128a_rows_stride 3\n"
    "param c128a_block_table_cols 0\n"
    "param c128a_block_table_stride 0\n"
    "products slot_mapping group0.slot_mapping group0.seq_lens_out c128a_rows c128a_lens\n"
    "input query_start_loc 2 0 1\n"
    "input seq_lens 1 4\n"
    "input block_table 1 7\n"
    "input group0.block_table 2 5 7\n"
    "input c128a_block_table 0\n"
    "rank 0\n"
    "expect slot_mapping 3 31 -1 -1\n"
    "expect group0.slot_mapping 3 10 -1 -1\n"
    "expect group0.seq_lens_out 1 1\n"
    "expect c128a_rows 4 0 -1 -1 -1\n"
    "expect c128a_lens 3 1 0 0\n"
    "expect_flags 0x0 0x0 0x0 exact\n"
    "expect_flags_dsv4 0x0 0x0 0x0 0x0 0x0 0x0 0x0\n"
    "end\n";

Test(vectors, parser_version2) {
  static const amt_malformed bad[] = { /* line 0: the messages' lines are not checked */
      {"param group0.ratio 4\n", "", 0, "param group0.ratio missing"},
      {"param c128a_mode 1\n", "param c128a_mode 1\nparam swa_window 8\n", 0,
       "swa_window given, but none of its products"},
      {"param c128a_rows_stride 3\n", "param c128a_rows_stride 1\n", 0, "c128a params"},
      {"input group0.block_table 2 5 7\n", "", 0, "input group0.block_table missing"},
      {"input group0.block_table 2 5 7\n", "input group0.block_table 1 5\n", 0, "the table needs 2"},
      {"input c128a_block_table 0\n", "input c128a_block_table 0\ninput swa_block_table 0\n", 0,
       "none of its products"},
      {"expect c128a_rows 4 0 -1 -1 -1\n", "expect c128a_rows 3 0 -1 -1\n", 0, "the sizes make it 4"},
      {"expect_flags_dsv4 0x0 0x0 0x0 0x0 0x0 0x0 0x0\n", "", 0, "expect_flags_dsv4 missing"},
      {"expect_flags_dsv4 0x0 0x0 0x0 0x0 0x0 0x0 0x0\n", "expect_flags_dsv4 0x0 0x0\n", 0,
       "7 lower-case hex masks"},
  };
  char err[512], *text;
  amv_file f, g;
  size_t len;
  int o;
  cr_assert_eq(amv_parse(tiny2, sizeof tiny2 - 1, "tiny2", NULL, &f, err, sizeof err), 0, "%s",
               err);
  cr_expect_eq(f.vectors[0].version, 2);
  cr_expect_eq(f.vectors[0].dsv4.group[0].ratio, 4);
  cr_expect_eq(f.vectors[0].dsv4.c128a_out_stride, 3);
  cr_expect_eq(f.vectors[0].ranks[0].expect[AMV_GROUP_SLOT_MAPPING].v[0], 10);
  /* written and read back: the same vector */
  text = amt_written(&f.vectors[0], 2, &len);
  cr_assert_eq(amv_parse(text, len, "written", NULL, &g, err, sizeof err), 0, "%s", err);
  cr_expect_eq(g.vectors[0].products, f.vectors[0].products);
  for (o = 0; o < AMV_NUM_OUTPUTS; o++)
    cr_expect_eq(g.vectors[0].ranks[0].expect[o].n, f.vectors[0].ranks[0].expect[o].n, "%s",
                 amv_output_name(o));
  free(text);
  amv_file_free(&f);
  amv_file_free(&g);
  amt_expect_malformed(tiny2, bad, sizeof bad / sizeof bad[0]);
}

Test(vectors, parser_rejects_malformed) {
  static const amt_malformed bad[] = {
      {"attnmeta-vectors 1\n", "", 1, "first line"},
      {"attnmeta-vectors 1\n", "attnmeta-vectors 7\n", 1, "version 7 not supported"},
      {"op step\n", "op topk\n", 5, "unknown op 'topk' (format version 1 knows 'step')"},
      {"attnmeta-vectors 1\n", "attnmeta-vectors 0\n", 1, "version 0 not supported"},
      {"param misalign 0\n", "param misalign 0\nparam swa_window 8\n", 17, "version-2 param"},
      {"param misalign 0\n", "param misalign 0\nparam pcp_logical_block_size 8\n", 17,
       "param pcp_logical_block_size is a version-5 param (this file is version 1)"},
      {"param misalign 0\n", "param misalign 0\nparam swa_reserved 8\n", 17,
       "unknown param 'swa_reserved'"},
      {"products token_to_req slot_mapping\n", "products token_to_req swa_lens\n", 17,
       "unknown product 'swa_lens' (format version 1)"},
      {"attnmeta-vectors 1\n", "attnmeta-vectors 1 x\n", 1, "bad header"},
      {"op step\n", "", 5, "expected 'op step'"},
      {"op step\n", "op graph\n", 5, "unknown op"},
      {"param misalign 0\n", "param misalign 0\nparam misalign 1\n", 17, "given twice"},
      {"param misalign 0\n", "", 16, "param misalign missing"},
      {"param misalign 0\n", "param misaligned 0\n", 16, "unknown param"},
      {"param capacity 3\n", "param capacity 1\n", 17, "capacity must be >= num_tokens"},
      {"param num_tokens 2\n", "param num_tokens 2x\n", 7, "bad value"},
      {"param block_table_stride 1\n", "param block_table_stride 0\n", 17, "block_table_stride"},
      {"param dcp_world_size 1\n", "param dcp_world_size 0\n", 17, "dcp_world_size"},
      {"products token_to_req slot_mapping\n", "products token_to_req token_to_req\n", 17, "twice"},
      {"products token_to_req slot_mapping\n", "products\n", 17, "names no product"},
      {"input query_start_loc 2 0 1\n", "input query_start_loc 3 0 1 1\n", 18, "count 3"},
      {"input query_start_loc 2 0 1\n", "input query_start_loc 2 0\n", 18, "2 values declared, 1 given"},
      {"input query_start_loc 2 0 1\n", "input query_start_loc 2 0 1 1\n", 18, "more values"},
      {"input query_start_loc 2 0 1\n", "input query_start_loc 2 0\n\n  1\n", 18, "1 given"},
      {"input query_start_loc 2 0 1\n", "input query_start_loc 2 0 01\n", 18, "bad value '01'"},
      {"input query_start_loc 2 0 1\n", "input query_start_loc 2 -0 1\n", 18, "bad value '-0'"},
      {"input query_start_loc 2 0 1\n", "input query_start_loc 2 0 +1\n", 18, "bad value '+1'"},
      {"input query_start_loc 2 0 1\n", "input query_start_loc 2 0 ?\n", 18, "only allowed in expect"},
      {"input query_start_loc 2 0 1\n", "input query_start_loc 2 0 2147483648\n", 18, "outside"},
      {"input query_start_loc 2 0 1\n", "input query_start_loc 2 0*0 1\n", 18, "repeat count"},
      {"input query_start_loc 2 0 1\n", "input query_start_loc 2 0..2\n", 18, "more values"},
      {"input query_start_loc 2 0 1\n", "input query_start_loc 2 0 1..\n", 18, "bad value"},
      {"input seq_lens 1 4\n", "", 20, "input seq_lens missing"},
      {"input block_table 1 7\n", "input block_table 0\n", 20, "the table needs 1"},
      {"rank 0\n", "rank 1\n", 21, "outside [0, dcp_world_size"},
      {"rank 0\n", "rank\n", 21, "bad rank line"},
      {"expect token_to_req 2 0 0\n", "", 24, "expect token_to_req missing"},
      {"expect token_to_req 2 0 0\n", "expect positions 2 0 0\n", 22, "not one of the vector's products"},
      {"expect token_to_req 2 0 0\n", "expect token_to_req 3 0 0 0\n", 22, "the sizes make it 2"},
      {"expect_flags 0x0 0x0 0x0 exact\n", "", 24, "expect_flags missing"},
      {"expect_flags 0x0 0x0 0x0 exact\n", "expect_flags 0X0 0x0 0x0 exact\n", 24, "lower-case hex"},
      {"expect_flags 0x0 0x0 0x0 exact\n", "expect_flags 0x0 0x0 0x0\n", 24, "mode"},
      {"expect_flags 0x0 0x0 0x0 exact\n", "expect_flags 0x0 0x0 0x80000000 exact\n", 24, "hex"},
      {"end\n", "", 24, "ends inside vector tiny"},
      {"end\n", "end now\n", 25, "nothing after"},
      {"end\n", "end\n  1\n", 26, "continuation line outside"},
      {"end\n", "end\nvector tiny\n", 26, "used twice"},
      {"end\n", "end\nvector bad/name\n", 26, "bad vector name"},
      {"end\n", "end\nparam num_reqs 1\n", 26, "outside a vector"},
      {"rank 0\n", "rank 0\nfoo 1\n", 22, "unknown keyword"},
      {"# a comment\n", "# a comment\n\x01\n", 3, "unexpected byte 0x01"},
  };
  amt_expect_malformed(tiny, bad, sizeof bad / sizeof bad[0]);
}

/* Version 5: tiny2 with PCP's logical slots (contract section 5b) by the
 * members' names: logical slot 9 of blocks of 8 at position 3 maps to
 * compressed slot 1 * 2 + 1 / 4 = 2 (block 8 = 4 x 2). */
Test(vectors, parser_version5_by_name) {
  char *v5 = amt_edit(tiny2, "attnmeta-vectors 2\n", "attnmeta-vectors 5\n"), *text, *pcp;
  char err[512];
  amv_file f, g;
  size_t len;
  int in;
  pcp = amt_edit(v5, "param misalign 0\n", "param misalign 0\nparam pcp_logical_block_size 8\n");
  free(v5);
  v5 = amt_edit(pcp, "input c128a_block_table 0\n",
                "input c128a_block_table 0\ninput pcp_logical_slots 2 9 -1\n"
                "input pcp_positions 2 3 0\n");
  free(pcp);
  cr_assert_eq(amv_parse(v5, strlen(v5), "v5", NULL, &f, err, sizeof err), 0, "%s", err);
  cr_expect_eq(f.vectors[0].step.pcp_logical_block_size, 8);
  for (in = 0; in < amv_num_inputs() && strcmp(amv_input_name(in), "pcp_positions"); in++) continue;
  cr_assert(in >= AMV_NUM_INPUTS && in < amv_num_inputs(), "pcp_positions is input %d", in);
  cr_assert_eq(f.vectors[0].input[in].n, 2);
  cr_expect_eq(f.vectors[0].input[in].v[0], 3);
  /* written and read back: the same settings and inputs, by name */
  text = amt_written(&f.vectors[0], 5, &len);
  cr_expect(strstr(text, "param pcp_logical_block_size 8\n") &&
                strstr(text, "input pcp_logical_slots 2 9 -1\n"),
            "written:\n%s", text);
  cr_assert_eq(amv_parse(text, len, "written", NULL, &g, err, sizeof err), 0, "%s", err);
  cr_expect_eq(g.vectors[0].step.pcp_logical_block_size, 8);
  cr_expect_eq(g.vectors[0].input[in].v[0], 3);
  amv_file_free(&g);
  /* a file of version 4 knows neither */
  free(text);
  text = amt_edit(v5, "attnmeta-vectors 5\n", "attnmeta-vectors 4\n");
  cr_expect_neq(amv_parse(text, strlen(text), "v4", NULL, &g, err, sizeof err), 0);
  cr_expect(strstr(err, "param pcp_logical_block_size is a version-5 param"), "%s", err);
  free(text);
  text = amt_edit(v5, "param pcp_logical_block_size 8\n", "");
  free(v5);
  v5 = amt_edit(text, "attnmeta-vectors 5\n", "attnmeta-vectors 4\n");
  cr_expect_neq(amv_parse(v5, strlen(v5), "v4", NULL, &g, err, sizeof err), 0);
  cr_expect(strstr(err, "input pcp_logical_slots is a version-5 input"), "%s", err);
  free(text);
  free(v5);
  amv_file_free(&f);
}

Test(vectors, writer_round_trip) {
  static const int64_t vals[15] = {1, 2, 3, 4, 7, 7, 7, 7, 0, 0, 5, 3, 2, 1, 0};
  static const unsigned char care[15] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1};
  amv_values v;
  amv_file f, g;
  char err[512], line[256], *text;
  size_t len;
  FILE *tmp = tmpfile();
  int i, o;
  cr_assert(tmp != NULL);
  v.n = 15;
  v.v = (int64_t *)vals;
  v.care = (unsigned char *)care;
  amv_write_values(tmp, "expect", "token_to_req", &v);
  rewind(tmp);
  cr_assert(fgets(line, sizeof line, tmp) != NULL);
  cr_expect_str_eq(line, "expect token_to_req 15 1..4 7*4 ?*2 5 3..0\n");
  fclose(tmp);

  /* a parsed vector, written and read back, gives the same vector */
  cr_assert_eq(amv_parse(tiny, sizeof tiny - 1, "tiny", NULL, &f, err, sizeof err), 0, "%s", err);
  text = amt_written(&f.vectors[0], 1, &len);
  cr_assert_eq(amv_parse(text, len, "written", NULL, &g, err, sizeof err), 0, "%s", err);
  cr_assert_eq(g.nvectors, 1);
  cr_expect_eq(g.vectors[0].nranks, 1);
  cr_expect_eq(g.vectors[0].capacity, 3);
  for (o = 0; o < AMV_NUM_OUTPUTS; o++) {
    const amv_values *a = &f.vectors[0].ranks[0].expect[o], *b = &g.vectors[0].ranks[0].expect[o];
    cr_expect_eq(a->n, b->n, "%s", amv_output_name(o));
    for (i = 0; i < a->n && i < b->n; i++) cr_expect_eq(a->v[i], b->v[i]);
  }
  free(text);
  amv_file_free(&f);
  amv_file_free(&g);
}

/* The runner fails a wrong value, and passes it once it is marked unchecked. */
Test(vectors, runner_catches_a_wrong_value) {
  amt_collected got;
  char *text;
  cr_expect_eq(amt_run_text(tiny, &got), AMV_PASS, "the correct vector fails: %s", got.first.text);

  text = amt_edit(tiny, "expect slot_mapping 3 31 -1 -1", "expect slot_mapping 3 30 -1 -1");
  cr_expect_eq(amt_run_text(text, &got), AMV_FAIL);
  cr_expect(got.n > 0);
  cr_expect_str_eq(got.first.product, "slot_mapping");
  cr_expect_eq(got.first.index, 0);
  cr_expect_eq(got.first.expected, 30);
  cr_expect_eq(got.first.got, 31);
  free(text);

  text = amt_edit(tiny, "expect slot_mapping 3 31 -1 -1", "expect slot_mapping 3 ? -1 -1");
  cr_expect_eq(amt_run_text(text, &got), AMV_PASS, "an unchecked value is compared: %s",
               got.first.text);
  free(text);

  /* the error word is compared too */
  text = amt_edit(tiny, "expect_flags 0x0 0x0 0x0 exact", "expect_flags 0x0 0x0 0x20 exact");
  cr_expect_eq(amt_run_text(text, &got), AMV_FAIL);
  cr_expect_str_eq(got.first.product, "error_word");
  free(text);
}
