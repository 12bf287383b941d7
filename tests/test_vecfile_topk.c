// SPDX-License-Identifier: Apache-2.0
/*
 * The conformance format's "op topk" vectors (version 3): a small vector
 * parsed field by field, refused when malformed (with the line), written
 * and read back unchanged, and run on the CPU backend.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/conformance/vecfile.h"
#include "attnmeta/conformance/vecfile_topk.h"
#include "attnmeta/conformance/vecrun.h"
#include "vector_text.h"

/* Two tokens of request 0 (blocks 10 and 11 of 4 positions), K 4, counted
 * and compacted; rank 0 of W 1. */
static const char tiny[] =
    "attnmeta-vectors 3\n"                   /* 1 */
    "vector tk\n"                            /* 2 */
    "op topk\n"                              /* 3 */
    "param num_tokens 2\n"                   /* 4 */
    "param topk_count 4\n"                   /* 5 */
    "param topk_stride 5\n"                  /* 6 */
    "param out_stride 4\n"                   /* 7 */
    "param num_reqs 1\n"                     /* 8 */
    "param block_table_cols 2\n"             /* 9 */
    "param block_table_stride 2\n"           /* 10 */
    "param block_size 4\n"                   /* 11 */
    "param stride_rows 0\n"                  /* 12 */
    "param dcp_world_size 1\n"               /* 13 */
    "param dcp_interleave 1\n"               /* 14 */
    "param request 0\n"                      /* 15 */
    "param prefill 0\n"                      /* 16 */
    "param num_prefill 0\n"                  /* 17 */
    "param token_slot 0\n"                   /* 18 */
    "param count 1\n"                        /* 19 */
    "param compact 1\n"                      /* 20 */
    "param misalign 0\n"                     /* 21 */
    "input topk 10 0 -1 5 9 7 3 8 -1 -1 7\n" /* 22 */
    "input query_start_loc 2 0 2\n"          /* 23 */
    "input block_table 2 10 11\n"            /* 24 */
    "rank 0\n"                               /* 25 */
    "expect out 8 40 45 -1 -1 43 -1 -1 -1\n" /* 26 */
    "expect valid_count 2 2 1\n"             /* 27 */
    "expect_flags 0x20 exact\n"              /* 28 */
    "end\n";                                 /* 29 */

Test(vectors_topk, parse_tiny) {
  amv_file f;
  char err[512];
  const amv_topk *k;
  cr_assert_eq(amv_parse(tiny, sizeof tiny - 1, "tk", NULL, &f, err, sizeof err), 0, "%s", err);
  cr_assert_eq(f.nvectors, 1);
  cr_assert_eq(f.vectors[0].op, AMV_OP_TOPK);
  k = f.vectors[0].topk;
  cr_assert(k != NULL);
  cr_expect_eq(k->num_tokens, 2);
  cr_expect_eq(k->topk_count, 4);
  cr_expect_eq(k->topk_stride, 5);
  cr_expect_eq(k->cols, 2);
  cr_expect_eq(k->compact, 1);
  cr_expect_eq(k->input[AMV_TOPK_INDICES].n, 10);
  cr_expect_eq(k->input[AMV_TOPK_INDICES].v[2], 5);
  cr_expect(k->input[AMV_TOPK_REQ_ID].v == NULL);
  cr_assert_eq(k->nranks, 1);
  cr_expect_eq(k->ranks[0].out.v[1], 45);
  cr_expect_eq(k->ranks[0].count.v[1], 1);
  cr_expect_eq(k->ranks[0].flags, 0x20);
  cr_expect_eq(k->ranks[0].flags_exact, 1);
  amv_file_free(&f);
}

/* tiny runs on the CPU backend and passes; one wrong value fails it. */
Test(vectors_topk, run_tiny) {
  attnmeta_context *ctx = NULL;
  amv_file f;
  amv_runner r;
  amv_outcome o;
  char err[512];
  char *bad;
  cr_assert_eq(attnmeta_open(&ctx, ATTNMETA_BACKEND_CPU, 0), ATTNMETA_OK);
  cr_assert_eq(amv_parse(tiny, sizeof tiny - 1, "tk", NULL, &f, err, sizeof err), 0, "%s", err);
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.nconfigs = amv_launch_sweep(ATTNMETA_BACKEND_CPU, &r.configs);
  r.config_only = -1;
  amv_run_vector(&r, &f.vectors[0], &o);
  cr_expect_eq(o.result, AMV_PASS, "%lld failures", (long long)o.failures);
  cr_expect(o.launches >= 2 * r.nconfigs);
  amv_file_free(&f);
  bad = amt_edit(tiny, "expect out 8 40 45", "expect out 8 40 44");
  cr_assert_eq(amv_parse(bad, strlen(bad), "bad", NULL, &f, err, sizeof err), 0, "%s", err);
  amv_run_vector(&r, &f.vectors[0], &o);
  cr_expect_eq(o.result, AMV_FAIL, "a wrong expected slot passed");
  amv_file_free(&f);
  free(bad);
  attnmeta_close(ctx);
}

Test(vectors_topk, round_trip) {
  amv_file f, g;
  char err[512], *buf;
  size_t len;
  cr_assert_eq(amv_parse(tiny, sizeof tiny - 1, "tk", NULL, &f, err, sizeof err), 0, "%s", err);
  buf = amt_written(&f.vectors[0], AMV_VERSION_TOPK, &len);
  cr_assert_eq(amv_parse(buf, len, "written", NULL, &g, err, sizeof err), 0, "%s\n%s", err, buf);
  cr_expect_eq(g.vectors[0].topk->ranks[0].out.v[4], 43);
  cr_expect_eq(g.vectors[0].topk->input[AMV_TOPK_BLOCK_TABLE].v[1], 11);
  amv_file_free(&f);
  amv_file_free(&g);
  free(buf);
}

Test(vectors_topk, rejects_malformed) {
  static const amt_malformed bad[] = {
      {"attnmeta-vectors 3\n", "attnmeta-vectors 1\n", 3, "unknown op 'topk'"},
      {"attnmeta-vectors 3\n", "attnmeta-vectors 2\n", 3, "unknown op 'topk'"},
      {"param count 1\n", "", 21, "param count missing"},
      {"param count 1\n", "param count 2\n", 22, "count must be 0 or 1"},
      {"param count 1\n", "param count 0\n", 22, "compact needs count 1"},
      {"param topk_stride 5\n", "param topk_stride 3\n", 22, "topk_stride must be >= topk_count"},
      {"param misalign 0\n", "param products 0\n", 21, "unknown param 'products'"},
      {"input topk 10 0 -1 5 9 7 3 8 -1 -1 7\n", "input topk 8 0 -1 5 9 7 3 8 -1\n", 22, "count '8'"},
      {"input query_start_loc 2 0 2\n", "input req_id 2 0 0\n", 23, "do not call for it"},
      {"input query_start_loc 2 0 2\n", "", 24, "input query_start_loc missing"},
      {"input block_table 2 10 11\n", "input block_table 1 10\n", 24, "at least 2"},
      {"expect out 8 40 45 -1 -1 43 -1 -1 -1\n", "expect out 7 40 45 -1 -1 43 -1 -1\n", 26, "make it 8"},
      {"expect valid_count 2 2 1\n", "", 28, "expect valid_count missing"},
      {"expect valid_count 2 2 1\n", "expect positions 2 2 1\n", 27, "op topk expects"},
      {"expect_flags 0x20 exact\n", "expect_flags 0x0 0x20 0x0 exact\n", 28, "bad expect_flags"},
      {"expect_flags 0x20 exact\n", "", 28, "expect_flags missing"},
      {"rank 0\n", "rank 1\n", 25, "outside [0, dcp_world_size"},
      {"end\n", "", 28, "ends inside vector tk"},
      {"rank 0\n", "products out\nrank 0\n", 25, "unknown keyword 'products'"},
  };
  amt_expect_malformed(tiny, bad, sizeof bad / sizeof bad[0]);
}
