// SPDX-License-Identifier: Apache-2.0
/* Internal to the vector-file reader: the lexer (vecfile_lexer.c) that the
 * readers of every op share (vecfile.c, vecfile_pool.c). */
#ifndef ATTNMETA_CONFORMANCE_VECFILE_LEXER_H
#define ATTNMETA_CONFORMANCE_VECFILE_LEXER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "attnmeta/conformance/vecfile.h"

typedef struct amvl_lexer {
  const char *p, *end; /* the rest of the text */
  const char *ls, *le; /* the current line, without its line end */
  int line;
  const char *label;
  char *err;
  size_t errsize;
  int64_t values; /* declared so far, over every buffer of every vector */
} amvl_lexer;

typedef struct amvl_tok {
  const char *s;
  size_t n;
} amvl_tok;

/* "LABEL:LINE: what" into the lexer's message; returns -1. */
int amvl_fail(amvl_lexer *lx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int amvl_next_line(amvl_lexer *lx);          /* 0 at the end of the text */
int amvl_skip_line(const amvl_lexer *lx);    /* 1 for a blank line or a comment */
int amvl_check_line(amvl_lexer *lx);         /* control bytes, a stray continuation line */
int amvl_get_tok(const char **cur, const char *le, amvl_tok *t);
int amvl_tok_is(const amvl_tok *t, const char *word);
int amvl_parse_int(const char *s, size_t n, int64_t *out);
int amvl_parse_hex(const amvl_tok *t, int32_t *out);
/* NAME and COUNT after an input or expect line's keyword. */
int amvl_name_and_count(amvl_lexer *lx, const char **cur, const char *keyword, amvl_tok *name,
                        amvl_tok *cnt);
/* `count` values in [lo, hi] from *cur on; allow_unchecked: 1 takes "?",
 * 2 also "_" (AMV_UNTOUCHED, op pool). keep == 0: checked, not stored. */
int amvl_parse_values(amvl_lexer *lx, const char **cur, int64_t count, int allow_unchecked,
                      int64_t lo, int64_t hi, const char *what, int keep, amv_values *out);
void amvl_values_free(amv_values *v);
int amvl_check_bytes(amvl_lexer *lx); /* control bytes in the current line */
int amvl_blank(const char *s, const char *e);
int amvl_is_space(char c);

/* vecfile_pool.c: the rest of an "op pool" vector through its "end" line
 * into v (v->pool allocated here); and writing one. */
int amvl_parse_pool(amvl_lexer *lx, amv_vector *v, int keep);
void amvl_write_pool(FILE *f, const amv_vector *v);

#endif
