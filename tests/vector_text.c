// SPDX-License-Identifier: Apache-2.0
/* See vector_text.h. */
#include "vector_text.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

char *amt_edit(const char *base, const char *from, const char *to) {
  const char *at = strstr(base, from);
  char *out;
  size_t head;
  cr_assert(at != NULL, "test bug: '%s' not in the base text", from);
  head = (size_t)(at - base);
  out = malloc(strlen(base) + strlen(to) + 1);
  cr_assert(out != NULL);
  memcpy(out, base, head);
  strcpy(out + head, to);
  strcat(out, at + strlen(from));
  return out;
}

void amt_expect_malformed(const char *base, const amt_malformed *cases, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    char *text = amt_edit(base, cases[i].from, cases[i].to);
    char err[512], where[32];
    amv_file f;
    const int rc = amv_parse(text, strlen(text), "t", NULL, &f, err, sizeof err);
    snprintf(where, sizeof where, "t:%d: ", cases[i].line);
    cr_expect_eq(rc, -1, "case %zu (%s) was accepted", i, cases[i].to);
    if (rc == -1) {
      cr_expect(cases[i].line == 0 || strncmp(err, where, strlen(where)) == 0,
                "case %zu: message '%s', wanted line %d", i, err, cases[i].line);
      cr_expect(strstr(err, cases[i].says) != NULL, "case %zu: message '%s' lacks '%s'", i, err,
                cases[i].says);
    } else {
      amv_file_free(&f);
    }
    free(text);
  }
}

char *amt_written(const amv_vector *v, int version, size_t *len) {
  FILE *tmp = tmpfile();
  char *text;
  long size;
  cr_assert(tmp != NULL);
  amv_write_header_version(tmp, version);
  amv_write_vector(tmp, v);
  size = ftell(tmp);
  cr_assert(size >= 0);
  rewind(tmp);
  text = malloc((size_t)size + 1);
  cr_assert(text && fread(text, 1, (size_t)size, tmp) == (size_t)size);
  fclose(tmp);
  text[size] = '\0';
  *len = (size_t)size;
  return text;
}

static void collect(void *user, const amv_failure *failure) {
  amt_collected *c = user;
  if (c->n++ == 0) c->first = *failure;
}

int amt_run_text(const char *text, amt_collected *got) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  amv_runner runner;
  amv_outcome out;
  amv_file f;
  char err[512];
  memset(&runner, 0, sizeof runner);
  memset(got, 0, sizeof *got);
  runner.ctx = ctx;
  runner.config_only = -1;
  runner.report = collect;
  runner.user = got;
  cr_assert_eq(amv_parse(text, strlen(text), "t", NULL, &f, err, sizeof err), 0, "%s", err);
  amv_run_vector(&runner, &f.vectors[0], &out);
  amv_file_free(&f);
  attnmeta_close(ctx);
  return out.result;
}
