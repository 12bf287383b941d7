// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_vecfile: the conformance kit's vector reader (amv_parse,
 * conformance/lib/vecfile.c) on arbitrary text.
 *
 * Checked on every input:
 *  - it returns 0 or -1, and on -1 leaves a NUL-terminated message that
 *    names the label;
 *  - on 0 every value it stored can be read (the sanitizers watch the
 *    reads), each buffer holds the count it declared, and all of a file's
 *    buffers together hold no more than one buffer's largest size (the
 *    bound that keeps a few bytes of repeat counts from taking gigabytes);
 *  - reading only the first vector (`only`) succeeds whenever the whole
 *    file does, and gives that vector the same values;
 *  - memory is freed (LeakSanitizer).
 * The committed corpus (fuzz/corpus/fuzz_vecfile/) starts from small
 * vectors of the committed files' forms.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "attnmeta/conformance/vecfile.h"
#include "attnmeta/conformance/vecfile_pool.h"
#include "attnmeta/conformance/vecfile_topk.h"
#include "fuzz_util.h"

#define LABEL "fuzz-input"

static volatile uint64_t sink;

/* Reads every value (and care byte) of v; the count of values. */
static int64_t touch(const amv_values *v, uint64_t *sum) {
  int64_t i;
  FZ_CHECK(v->n >= 0 && v->n <= AMV_MAX_ELEMS, "a buffer of %lld values", (long long)v->n);
  FZ_CHECK(v->n == 0 || v->v != NULL, "a buffer of %lld values has no storage", (long long)v->n);
  for (i = 0; i < v->n; ++i) {
    *sum ^= (uint64_t)v->v[i];
    if (v->care) *sum ^= v->care[i];
  }
  return v->n;
}

static int64_t touch_vector(const amv_vector *vec, uint64_t *sum) {
  int64_t n = 0;
  int i, r;
  FZ_CHECK(memchr(vec->name, '\0', sizeof vec->name) != NULL, "vector name not terminated");
  for (i = 0; i < amv_num_inputs(); ++i) n += touch(&vec->input[i], sum);
  for (r = 0; r < vec->nranks; ++r)
    for (i = 0; i < amv_num_outputs(); ++i) n += touch(&vec->ranks[r].expect[i], sum);
  if (vec->op == AMV_OP_TOPK) {
    FZ_CHECK(vec->topk != NULL, "a top-k vector without its record");
    for (i = 0; i < AMV_TOPK_NUM_INPUTS; ++i) n += touch(&vec->topk->input[i], sum);
    for (r = 0; r < vec->topk->nranks; ++r) {
      n += touch(&vec->topk->ranks[r].out, sum);
      n += touch(&vec->topk->ranks[r].count, sum);
    }
  }
  if (vec->op == AMV_OP_POOL) {
    FZ_CHECK(vec->pool != NULL, "a pool vector without its record");
    for (i = 0; i < AMV_POOL_MAX_INPUTS; ++i) n += touch(&vec->pool->input[i], sum);
    for (i = 0; i < AMV_POOL_MAX_OUTPUTS; ++i) n += touch(&vec->pool->expect[i], sum);
  }
  return n;
}

static int same_values(const amv_values *a, const amv_values *b) {
  return a->n == b->n && (a->n == 0 || memcmp(a->v, b->v, (size_t)a->n * sizeof *a->v) == 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[512];
  amv_file f, one;
  uint64_t sum = 0;
  int64_t total = 0;
  int rc, i;
  memset(err, 'x', sizeof err);
  rc = amv_parse((const char *)data, size, LABEL, NULL, &f, err, sizeof err);
  FZ_CHECK(rc == 0 || rc == -1, "amv_parse returned %d", rc);
  if (rc != 0) {
    FZ_CHECK(memchr(err, '\0', sizeof err) != NULL, "the message is not terminated");
    FZ_CHECK(strncmp(err, LABEL, strlen(LABEL)) == 0, "the message does not name the input: %s",
             err);
    return 0;
  }
  FZ_CHECK(f.nvectors >= 0 && (f.nvectors == 0 || f.vectors != NULL), "%d vectors", f.nvectors);
  for (i = 0; i < f.nvectors; ++i) total += touch_vector(&f.vectors[i], &sum);
  FZ_CHECK(total <= AMV_MAX_ELEMS, "the file's buffers hold %lld values in all",
           (long long)total);
  if (f.nvectors > 0) {
    char name[AMV_NAME_MAX];
    memcpy(name, f.vectors[0].name, sizeof name);
    rc = amv_parse((const char *)data, size, LABEL, name, &one, err, sizeof err);
    FZ_CHECK(rc == 0, "the whole file reads but its first vector alone does not: %s", err);
    FZ_CHECK(one.nvectors == 1, "reading vector %s alone gave %d vectors", name, one.nvectors);
    if (one.nvectors == 1) {
      for (i = 0; i < amv_num_inputs(); ++i)
        FZ_CHECK(same_values(&one.vectors[0].input[i], &f.vectors[0].input[i]),
                 "vector %s alone: input %d differs", name, i);
    }
    amv_file_free(&one);
  }
  amv_file_free(&f);
  sink ^= sum; /* keeps the reads */
  return 0;
}
