// SPDX-License-Identifier: Apache-2.0
/*
 * Shared plumbing of the vector-file tests: a base text with one edit, a
 * table of malformed edits each refused with its line and message, and a
 * vector written back to text.
 */
#ifndef ATTNMETA_TESTS_VECTOR_TEXT_H
#define ATTNMETA_TESTS_VECTOR_TEXT_H

#include <stddef.h>

#include "attnmeta/conformance/vecfile.h"
#include "attnmeta/conformance/vecrun.h"

/* `base` with the first occurrence of `from` replaced by `to` (malloc-ed;
 * fails the test when `from` is not there). */
char *amt_edit(const char *base, const char *from, const char *to);

/* One malformed edit of a base text: the parser must refuse it with a
 * message that starts "t:LINE: " (line 0: any line) and contains `says`. */
typedef struct amt_malformed {
  const char *from, *to;
  int line;
  const char *says;
} amt_malformed;

/* Parses every edit of `base` in `cases` and checks each is refused so. */
void amt_expect_malformed(const char *base, const amt_malformed *cases, size_t n);

/* The header of format `version` and vector v, as text (malloc-ed, its
 * length in *len). */
char *amt_written(const amv_vector *v, int version, size_t *len);

/* What a runner reported: how many failures, and the first. */
typedef struct amt_collected {
  int n;
  amv_failure first;
} amt_collected;

/* Runs the first vector of `text` on the CPU backend (skips the test without
 * it), its failures collected in *got; returns the outcome's result. */
int amt_run_text(const char *text, amt_collected *got);

#endif /* ATTNMETA_TESTS_VECTOR_TEXT_H */
