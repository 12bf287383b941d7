// SPDX-License-Identifier: Apache-2.0
/*
 * The conformance format's "op pool" vectors (version 6): a small
 * hand-worked vector parsed field by field, run on the CPU backend (a
 * wrong value, a write where nothing may be written and a wrong flag each
 * fail it), written and read back unchanged, refused when malformed (with
 * the line); every attnmeta_pool member of the schema is a param, input or
 * output of the format by its name; every pool case has a vector.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_schema.h"
#include "attnmeta/conformance/vecfile.h"
#include "attnmeta/conformance/vecfile_pool.h"
#include "attnmeta/conformance/vecrun.h"
#include "pool_cases.h"
#include "vector_text.h"

/* Two requests over a pool of 2 rows of 4 slots, 5 apart (slot 99 in the
 * gap), pages of 2: request 0 reads row 1 for 3 tokens (20 21 22: pages
 * 10, 11), request 1 row 0 for 2 (10 11: page 5). kv_indices has room for
 * 6, the last untouched; page row 1 has one page, its second column
 * untouched. */
static const char tiny[] =
    "attnmeta-vectors 6\n"                           /* 1 */
    "vector pl\n"                                    /* 2 */
    "op pool\n"                                      /* 3 */
    "param req_to_token_stride 5\n"                  /* 4 */
    "param pool_rows 2\n"                            /* 5 */
    "param pool_cols 4\n"                            /* 6 */
    "param num_reqs 2\n"                             /* 7 */
    "param page_size 2\n"                            /* 8 */
    "param kv_indices_capacity 6\n"                  /* 9 */
    "param page_table_stride 3\n"                    /* 10 */
    "param page_table_width 2\n"                     /* 11 */
    "input req_to_token 9 10 11 12 13 99 20 21 22 23\n" /* 12 */
    "input req_pool_indices 2 1 0\n"                 /* 13 */
    "input lengths 2 3 2\n"                          /* 14 */
    "expect kv_indices 6 20 21 22 10 11 _\n"         /* 15 */
    "expect kv_indptr_out 3 0 3 5\n"                 /* 16 */
    "expect page_table 4 10 11 5 _\n"                /* 17 */
    "expect cache_seqlens 2 3 2\n"                   /* 18 */
    "expect_flags 0x0 exact\n"                       /* 19 */
    "end\n";                                         /* 20 */

static int output_named(const char *name) {
  int o;
  for (o = 0; o < amv_pool_num_outputs(); o++)
    if (strcmp(amv_pool_output_name(o), name) == 0) return o;
  return -1;
}
static int input_named(const char *name) {
  int i;
  for (i = 0; i < amv_pool_num_inputs(); i++)
    if (strcmp(amv_pool_input_name(i), name) == 0) return i;
  return -1;
}

Test(vectors_pool, parse_tiny) {
  amv_file f;
  char err[512];
  const amv_pool *p;
  int o;
  cr_assert_eq(amv_parse(tiny, sizeof tiny - 1, "pl", NULL, &f, err, sizeof err), 0, "%s", err);
  cr_assert_eq(f.nvectors, 1);
  cr_assert_eq(f.vectors[0].op, AMV_OP_POOL);
  p = f.vectors[0].pool;
  cr_assert(p != NULL);
  cr_expect_eq(p->op.req_to_token_stride, 5);
  cr_expect_eq(p->op.page_size, 2);
  cr_expect_eq(p->op.kv_indices_capacity, 6);
  cr_expect_eq(p->op.fill_to_width, 0, "a param left out keeps attnmeta_pool_init's value");
  cr_expect(p->op.req_to_token == NULL && p->op.kv_indices == NULL);
  cr_expect_eq(p->inputs, (1u << input_named("req_to_token")) |
                              (1u << input_named("req_pool_indices")) | (1u << input_named("lengths")));
  cr_expect_eq(p->input[input_named("req_to_token")].n, 9);
  cr_expect_eq(p->input[input_named("req_to_token")].v[4], 99);
  o = output_named("kv_indices");
  cr_assert(o >= 0 && ((p->outputs >> o) & 1u));
  cr_expect_eq(p->expect[o].n, 6);
  cr_expect_eq(p->expect[o].v[3], 10);
  cr_assert(p->expect[o].care != NULL);
  cr_expect_eq(p->expect[o].care[4], 1);
  cr_expect_eq(p->expect[o].care[5], AMV_UNTOUCHED);
  o = output_named("page_table");
  cr_expect_eq(p->expect[o].n, 4);
  cr_expect_eq(p->expect[o].care[3], AMV_UNTOUCHED);
  cr_expect(!((p->outputs >> output_named("token_table")) & 1u));
  cr_expect_eq(p->flags, 0);
  cr_expect_eq(p->flags_exact, 1);
  amv_file_free(&f);
}

static amv_outcome run_text(const amv_runner *r, const char *text) {
  amv_file f;
  amv_outcome o;
  char err[512];
  cr_assert_eq(amv_parse(text, strlen(text), "t", NULL, &f, err, sizeof err), 0, "%s", err);
  amv_run_vector(r, &f.vectors[0], &o);
  amv_file_free(&f);
  return o;
}

/* tiny passes on the CPU backend at every launch config; each broken
 * expectation fails it. */
Test(vectors_pool, run_tiny) {
  static const char *const edits[][2] = {
      {"expect kv_indices 6 20 21 22 10 11 _", "expect kv_indices 6 20 21 22 10 12 _"},
      {"expect kv_indices 6 20 21 22 10 11 _", "expect kv_indices 6 20 21 22 10 11 0"},
      {"expect page_table 4 10 11 5 _", "expect page_table 4 10 11 5 6"},
      {"expect page_table 4 10 11 5 _", "expect page_table 4 10 11 _ _"},
      {"expect cache_seqlens 2 3 2", "expect cache_seqlens 2 3 3"},
      {"expect_flags 0x0 exact", "expect_flags 0x20 at_least"},
  };
  attnmeta_context *ctx = NULL;
  amv_runner r;
  amv_outcome o;
  size_t i;
  cr_assert_eq(attnmeta_open(&ctx, ATTNMETA_BACKEND_CPU, 0), ATTNMETA_OK);
  memset(&r, 0, sizeof r);
  r.ctx = ctx;
  r.nconfigs = amv_launch_sweep(ATTNMETA_BACKEND_CPU, &r.configs);
  r.config_only = -1;
  o = run_text(&r, tiny);
  cr_expect_eq(o.result, AMV_PASS, "%lld failures", (long long)o.failures);
  cr_expect_eq(o.launches, 2 * r.nconfigs);
  for (i = 0; i < sizeof edits / sizeof edits[0]; i++) {
    char *bad = amt_edit(tiny, edits[i][0], edits[i][1]);
    o = run_text(&r, bad);
    cr_expect_eq(o.result, AMV_FAIL, "'%s' passed", edits[i][1]);
    free(bad);
  }
  attnmeta_close(ctx);
}

Test(vectors_pool, round_trip) {
  amv_file f, g;
  char err[512], *buf;
  size_t len;
  int i;
  cr_assert_eq(amv_parse(tiny, sizeof tiny - 1, "pl", NULL, &f, err, sizeof err), 0, "%s", err);
  buf = amt_written(&f.vectors[0], AMV_VERSION_POOL, &len);
  cr_assert_eq(amv_parse(buf, len, "written", NULL, &g, err, sizeof err), 0, "%s\n%s", err, buf);
  cr_expect_eq(g.vectors[0].pool->inputs, f.vectors[0].pool->inputs);
  cr_expect_eq(g.vectors[0].pool->outputs, f.vectors[0].pool->outputs);
  cr_expect(memcmp(&g.vectors[0].pool->op, &f.vectors[0].pool->op, sizeof(attnmeta_pool)) == 0);
  for (i = 0; i < amv_pool_num_outputs(); i++) {
    const amv_values *a = &f.vectors[0].pool->expect[i], *b = &g.vectors[0].pool->expect[i];
    int64_t k;
    cr_assert_eq(a->n, b->n);
    for (k = 0; k < a->n; k++) {
      cr_expect_eq(a->v[k], b->v[k], "%s[%lld]", amv_pool_output_name(i), (long long)k);
      cr_expect_eq(a->care ? a->care[k] : 1, b->care ? b->care[k] : 1);
    }
  }
  cr_expect(strstr(buf, "expect page_table 4 10 11 5 _\n") != NULL, "%s", buf);
  cr_expect(strstr(buf, "param fill_to_width") == NULL, "only params not at their init value");
  amv_file_free(&f);
  amv_file_free(&g);
  free(buf);
}

Test(vectors_pool, rejects_malformed) {
  static const amt_malformed bad[] = {
      {"attnmeta-vectors 6\n", "attnmeta-vectors 5\n", 3, "unknown op 'pool'"},
      {"param num_reqs 2\n", "param num_tokens 2\n", 7, "unknown param 'num_tokens' of op pool"},
      {"param num_reqs 2\n", "param reserved 0\n", 7, "unknown param 'reserved'"},
      {"param num_reqs 2\n", "param struct_size 8\n", 7, "unknown param 'struct_size'"},
      {"param page_size 2\n", "param pool_rows 2\n", 8, "param pool_rows given twice"},
      {"param page_size 2\n", "param page_size 2147483648\n", 8, "bad value"},
      {"param page_size 2\n", "param page_size 0x2\n", 8, "bad value"},
      {"input req_to_token 9 ", "input req_to_token 10 ", 12, "the params make it 9"},
      {"input lengths 2 3 2\n", "input lengths 3 3 2 1\n", 14, "the params make it 2"},
      {"input lengths 2 3 2\n", "input lengths 2 3 _\n", 14, "bad value '_'"},
      {"input lengths 2 3 2\n", "input lengths 2 3 ?\n", 14, "only allowed in expect"},
      {"input lengths 2 3 2\n", "input seq_lens 2 3 2\n", 14, "unknown input 'seq_lens'"},
      {"input lengths 2 3 2\n", "input req_pool_indices 2 1 0\n", 14, "given twice"},
      {"input lengths 2 3 2\n", "input lengths 2 3 9223372036854775808\n", 14, "bad value"},
      {"expect kv_indices 6 ", "expect kv_indices 5 ", 15, "the params make it 6"},
      {"expect page_table 4 ", "expect page_table 6 ", 17, "the params make it 4"},
      {"expect cache_seqlens 2 3 2\n", "expect error_word 1 0\n", 18, "unknown output 'error_word'"},
      {"expect cache_seqlens 2 3 2\n", "expect kv_indptr_out 3 0 3 5\n", 18, "given twice"},
      {"expect cache_seqlens 2 3 2\n", "expect cache_seqlens 2 3 2147483648\n", 18, "outside"},
      {"expect cache_seqlens 2 3 2\n", "expect cache_seqlens 2 3 2\nparam topk 1\n", 19,
       "'param' lines come before the inputs"},
      {"expect cache_seqlens 2 3 2\n", "expect cache_seqlens 2 3 2\ninput kv_start_idx 2 0 0\n", 19,
       "'input' lines come before the 'expect' lines"},
      {"expect_flags 0x0 exact\n", "expect_flags 0x0 exact\nexpect_flags 0x0 exact\n", 20, "once"},
      {"expect_flags 0x0 exact\n", "expect_flags 0X0 exact\n", 19, "bad expect_flags"},
      {"expect_flags 0x0 exact\n", "expect_flags 0x0 0x0 0x0 exact\n", 19, "bad expect_flags"},
      {"expect_flags 0x0 exact\n", "", 19, "expect_flags missing"},
      {"expect_flags 0x0 exact\n", "rank 0\n", 19, "unknown keyword 'rank'"},
      {"param page_table_stride 3\n", "param page_table_stride 1\n", 17, "stride below its width"},
      {"param num_reqs 2\n", "param num_reqs -1\n", 13, "extent negative"},
      {"end\n", "", 19, "ends inside vector pl"},
  };
  amt_expect_malformed(tiny, bad, sizeof bad / sizeof bad[0]);
}

/* A vector of no outputs is refused: there is nothing to check. */
Test(vectors_pool, needs_an_output) {
  static const char none[] = "attnmeta-vectors 6\nvector n\nop pool\ninput lengths 0\n"
                             "input req_pool_indices 0\nend\n";
  amv_file f;
  char err[512];
  cr_expect_eq(amv_parse(none, sizeof none - 1, "t", NULL, &f, err, sizeof err), -1);
  cr_expect(strstr(err, "no 'expect' line") != NULL, "%s", err);
}

/* Every member of attnmeta_pool in the schema is the format's under its
 * own name: an IN member an input, an OUT member but the error word an
 * output, a PARAM but struct_size and padding a param line. */
#define POOL_MEMBER_(c, type, member, role, extent, products, rule) \
  {#member, AM_IS_BUFFER_##role, (products) == AM_P_ALWAYS, rule},
Test(vectors_pool, every_schema_member) {
  static const struct {
    const char *name;
    int buffer, always;
    const char *rule;
  } members[] = {AM_POOL_FIELDS(POOL_MEMBER_, _)};
  size_t i;
  int inputs = 0, outputs = 0;
  for (i = 0; i < sizeof members / sizeof members[0]; i++) {
    const char *n = members[i].name;
    if (members[i].buffer) {
      const int in = input_named(n) >= 0, out = output_named(n) >= 0;
      cr_expect(in + out == (strcmp(n, "error_word") == 0 ? 0 : 1), "%s", n);
      inputs += in;
      outputs += out;
    } else if (strcmp(n, "struct_size") != 0 && strncmp(members[i].rule, "padding", 7) != 0) {
      char text[512], err[512];
      amv_file f;
      snprintf(text, sizeof text,
               "attnmeta-vectors 6\nvector m\nop pool\nparam %s 0\ninput req_pool_indices 0\n"
               "input lengths 0\nexpect kv_indptr_out 1 0\nexpect_flags 0x0 exact\nend\n", n);
      cr_expect_eq(amv_parse(text, strlen(text), "m", NULL, &f, err, sizeof err), 0, "%s: %s", n, err);
      amv_file_free(&f);
    }
  }
  cr_expect_eq(inputs, amv_pool_num_inputs());
  cr_expect_eq(outputs, amv_pool_num_outputs());
}

/* Every case of the pool case table has its vector among the committed files. */
Test(vectors_pool, cover_pool_cases) {
  char **paths, err[512];
  const int nf = amv_list_files(ATTNMETA_VECTOR_DIR, &paths, err, sizeof err);
  int c, f, i, *found = calloc((size_t)amp_num_cases(), sizeof *found);
  cr_assert(nf > 0 && found, "%s", err);
  for (f = 0; f < nf; f++) {
    amv_file af;
    cr_assert_eq(amv_load_headers(paths[f], &af, err, sizeof err), 0, "%s", err);
    for (i = 0; i < af.nvectors; i++)
      for (c = 0; c < amp_num_cases(); c++)
        if (af.vectors[i].op == AMV_OP_POOL && strcmp(af.vectors[i].name, amp_case_name(c)) == 0)
          found[c]++;
    amv_file_free(&af);
  }
  for (c = 0; c < amp_num_cases(); c++)
    cr_expect_eq(found[c], 1, "pool case %s has %d vectors (run ci/vectors.sh)", amp_case_name(c),
                 found[c]);
  amv_free_list(paths, nf);
  free(found);
}

/* The text of the file at path (malloc-ed, its length in *len). */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *text;
  long size;
  cr_assert(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  rewind(f);
  text = malloc((size_t)size + 1);
  cr_assert(text && fread(text, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
  text[size] = '\0';
  *len = (size_t)size;
  return text;
}

/* Every committed pool vector read and written back gives its own bytes. */
Test(vectors_pool, committed_files_round_trip) {
  char **paths, err[512];
  const int nf = amv_list_files(ATTNMETA_VECTOR_DIR, &paths, err, sizeof err);
  int f, checked = 0;
  cr_assert(nf > 0, "%s", err);
  for (f = 0; f < nf; f++) {
    amv_file af;
    size_t len;
    char *text = slurp(paths[f], &len), *at;
    int i;
    cr_assert_eq(amv_load(paths[f], NULL, &af, err, sizeof err), 0, "%s", err);
    at = strstr(text, "\nvector ");
    for (i = 0; i < af.nvectors; i++) {
      size_t wlen, hlen;
      char *w;
      if (af.vectors[i].op != AMV_OP_POOL) continue;
      w = amt_written(&af.vectors[i], AMV_VERSION_POOL, &wlen);
      hlen = strlen("attnmeta-vectors 6\n");
      cr_assert(at != NULL, "%s: vector %s not found", paths[f], af.vectors[i].name);
      cr_expect(strncmp(at + 1, w + hlen, wlen - hlen) == 0, "%s: vector %s is not written back as read",
                paths[f], af.vectors[i].name);
      at = strstr(at + 1 + (wlen - hlen) - 1, "\nvector ");
      checked++;
      free(w);
    }
    amv_file_free(&af);
    free(text);
  }
  cr_expect(checked == amp_num_cases(), "%d pool vectors checked, %d cases", checked, amp_num_cases());
  amv_free_list(paths, nf);
}
