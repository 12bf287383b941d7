// SPDX-License-Identifier: Apache-2.0
/* The text layer of the vector files (vecfile_lexer.h): the lexer that
 * every op's reader uses (vecfile.c, vecfile_pool.c) and the writer of a
 * value list. */
#include "vecfile_lexer.h"

#include "attnmeta/conformance/vecfile_pool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ lexer */

typedef amvl_lexer lexer;

/* The values of one file's buffers together, repeat counts expanded: one
 * buffer's largest size. A buffer's count is charged when it is declared,
 * before any value is read or stored, so a few bytes of repeat counts
 * cannot make the reader (or a runner, which allocates from the counts)
 * take gigabytes. */
#define AMV_MAX_FILE_VALUES AMV_MAX_ELEMS

typedef amvl_tok tok;

int amvl_fail(lexer *lx, const char *fmt, ...) {
  char what[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (lx->err && lx->errsize) snprintf(lx->err, lx->errsize, "%s:%d: %s", lx->label, lx->line, what);
  return -1;
}

/* Bounds of the line starting at p; *next: the line after it. */
static void line_at(const char *p, const char *end, const char **le, const char **next) {
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  *le = nl ? nl : end;
  *next = nl ? nl + 1 : end;
  if (*le > p && (*le)[-1] == '\r') (*le)--;
}

int amvl_next_line(lexer *lx) {
  const char *next;
  if (lx->p >= lx->end) return 0;
  lx->ls = lx->p;
  line_at(lx->p, lx->end, &lx->le, &next);
  lx->p = next;
  lx->line++;
  return 1;
}

int amvl_is_space(char c) { return c == ' ' || c == '\t'; }

int amvl_blank(const char *s, const char *e) {
  for (; s < e; s++)
    if (!amvl_is_space(*s)) return 0;
  return 1;
}

/* Is the line after the current one a continuation line (leading blank, not empty)? */
static int next_is_continuation(const lexer *lx) {
  const char *le, *next;
  if (lx->p >= lx->end) return 0;
  line_at(lx->p, lx->end, &le, &next);
  return le > lx->p && amvl_is_space(*lx->p) && !amvl_blank(lx->p, le);
}

int amvl_get_tok(const char **cur, const char *le, tok *t) {
  const char *s = *cur;
  t->s = s;
  t->n = 0;
  while (s < le && amvl_is_space(*s)) s++;
  if (s == le) {
    *cur = s;
    return 0;
  }
  t->s = s;
  while (s < le && !amvl_is_space(*s)) s++;
  t->n = (size_t)(s - t->s);
  *cur = s;
  return 1;
}

int amvl_tok_is(const tok *t, const char *word) {
  return t->n == strlen(word) && memcmp(t->s, word, t->n) == 0;
}

/* Strict decimal: -?(0|[1-9][0-9]*), "-0" refused, within int64. */
int amvl_parse_int(const char *s, size_t n, int64_t *out) {
  size_t i = 0;
  int neg = 0;
  uint64_t v = 0, limit;
  if (n && s[0] == '-') {
    neg = 1;
    i = 1;
  }
  if (i == n || s[i] < '0' || s[i] > '9') return -1;
  if (s[i] == '0' && (n - i > 1 || neg)) return -1;
  limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
  for (; i < n; i++) {
    const unsigned d = (unsigned)(s[i] - '0');
    if (s[i] < '0' || s[i] > '9') return -1;
    if (v > (limit - d) / 10u) return -1;
    v = v * 10u + d;
  }
  *out = neg ? (v == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)v) : (int64_t)v;
  return 0;
}

/* 0x followed by 1 to 8 hex digits, at most 0x7fffffff. */
int amvl_parse_hex(const tok *t, int32_t *out) {
  uint32_t v = 0;
  size_t i;
  if (t->n < 3 || t->n > 10 || t->s[0] != '0' || t->s[1] != 'x') return -1;
  for (i = 2; i < t->n; i++) {
    const char c = t->s[i];
    unsigned d;
    if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
    else return -1;
    v = v * 16u + d;
  }
  if (v > 0x7FFFFFFFu) return -1;
  *out = (int32_t)v;
  return 0;
}

/* Refuses control characters outside comments (tabs are fine). */
int amvl_check_bytes(lexer *lx) {
  const char *s;
  for (s = lx->ls; s < lx->le; s++) {
    const unsigned char c = (unsigned char)*s;
    if ((c < 0x20 && c != '\t') || c >= 0x7F)
      return amvl_fail(lx, "unexpected byte 0x%02x in column %d", c, (int)(s - lx->ls) + 1);
  }
  return 0;
}

/* The NAME and COUNT after an input or expect line's keyword. */
int amvl_name_and_count(lexer *lx, const char **cur, const char *keyword, tok *name, tok *cnt) {
  cnt->s = NULL;
  cnt->n = 0;
  if (amvl_get_tok(cur, lx->le, name) && amvl_get_tok(cur, lx->le, cnt)) return 0;
  return amvl_fail(lx, "bad %s line (expected '%s NAME COUNT VALUES...')", keyword, keyword);
}

/* ---------------------------------------------------------------- values */

void amvl_values_free(amv_values *v) {
  free(v->v);
  free(v->care);
  v->v = NULL;
  v->care = NULL;
  v->n = 0;
}

/* hi - lo for lo <= hi, exact for any int64 pair, without wrapping. */
static uint64_t distance(int64_t lo, int64_t hi) {
  if (lo < 0 && hi >= 0) return (uint64_t)hi + (uint64_t)(-(lo + 1)) + 1;
  return (uint64_t)(hi - lo);
}

/* Reads `count` values of [lo, hi] starting at *cur on the current line,
 * continuing on continuation lines. keep == 0: checks them, stores nothing. */
int amvl_parse_values(lexer *lx, const char **cur, int64_t count, int allow_unchecked, int64_t lo,
                      int64_t hi, const char *what, int keep, amv_values *out) {
  int64_t filled = 0;
  tok t;
  out->n = 0;
  out->v = NULL;
  out->care = NULL;
  if (count < 0 || count > AMV_MAX_FILE_VALUES - lx->values)
    return amvl_fail(
        lx,
        "%s: %lld values would bring the file's buffers to more than %lld values in all "
        "(every buffer of every vector, repeat counts expanded)",
        what, (long long)count, (long long)AMV_MAX_FILE_VALUES);
  lx->values += count;
  out->n = count;
  out->v = keep ? malloc((size_t)(count > 0 ? count : 1) * sizeof(int64_t)) : NULL;
  if (keep && !out->v)
    return amvl_fail(lx, "%s: out of memory for %lld values", what, (long long)count);
  for (;;) {
    const char *star, *dots;
    int64_t a, b, reps = 1, i;
    int unchecked = 0;
    uint64_t span;
    if (!amvl_get_tok(cur, lx->le, &t)) {
      if (filled == count) return 0;
      if (!next_is_continuation(lx))
        return amvl_fail(lx, "%s: %lld values declared, %lld given", what, (long long)count,
                         (long long)filled);
      amvl_next_line(lx);
      if (amvl_check_bytes(lx)) return -1;
      *cur = lx->ls;
      continue;
    }
    if (filled == count)
      return amvl_fail(lx, "%s: more values than the %lld declared", what, (long long)count);
    star = memchr(t.s, '*', t.n);
    dots = NULL;
    if (!star) {
      size_t k;
      for (k = 1; k + 2 < t.n && !dots; k++)
        if (t.s[k] == '.' && t.s[k + 1] == '.') dots = t.s + k;
    }
    if (star) {
      const size_t left = (size_t)(star - t.s), right = t.n - left - 1;
      if (left == 1 && t.s[0] == '?') {
        unchecked = 1;
        a = 0;
      } else if (left == 1 && t.s[0] == '_' && allow_unchecked == 2) {
        unchecked = AMV_UNTOUCHED;
        a = 0;
      } else if (amvl_parse_int(t.s, left, &a)) {
        return amvl_fail(lx, "%s: bad value '%.*s'", what, (int)t.n, t.s);
      }
      if (amvl_parse_int(star + 1, right, &reps) || reps < 1)
        return amvl_fail(lx, "%s: bad repeat count in '%.*s'", what, (int)t.n, t.s);
      if (reps > count - filled)
        return amvl_fail(lx, "%s: more values than the %lld declared", what, (long long)count);
      b = a;
    } else if (dots) {
      const size_t left = (size_t)(dots - t.s);
      if (amvl_parse_int(t.s, left, &a) || amvl_parse_int(dots + 2, t.n - left - 2, &b))
        return amvl_fail(lx, "%s: bad range '%.*s'", what, (int)t.n, t.s);
      span = b >= a ? distance(a, b) : distance(b, a);
      if (span >= (uint64_t)(count - filled))
        return amvl_fail(lx, "%s: more values than the %lld declared", what, (long long)count);
      reps = (int64_t)span + 1;
    } else if (amvl_tok_is(&t, "?")) {
      unchecked = 1;
      a = b = 0;
    } else if (amvl_tok_is(&t, "_") && allow_unchecked == 2) {
      unchecked = AMV_UNTOUCHED;
      a = b = 0;
    } else {
      if (amvl_parse_int(t.s, t.n, &a))
        return amvl_fail(lx, "%s: bad value '%.*s'", what, (int)t.n, t.s);
      b = a;
    }
    if (unchecked) {
      if (!allow_unchecked)
        return amvl_fail(lx, "%s: '?' (unchecked) is only allowed in expect", what);
      if (keep && !out->care) {
        out->care = malloc((size_t)count);
        if (!out->care) return amvl_fail(lx, "%s: out of memory", what);
        memset(out->care, 1, (size_t)count);
      }
    } else if (a < lo || a > hi || b < lo || b > hi) {
      return amvl_fail(lx, "%s: value '%.*s' outside [%lld, %lld]", what, (int)t.n, t.s,
                       (long long)lo, (long long)hi);
    }
    if (keep) {
      int64_t *dst = out->v + filled;
      if (unchecked) {
        memset(out->care + filled, unchecked == AMV_UNTOUCHED ? AMV_UNTOUCHED : 0, (size_t)reps);
        memset(dst, 0, (size_t)reps * sizeof *dst);
      } else if (a == b) {
        for (i = 0; i < reps; i++) dst[i] = a;
      } else if (b > a) {
        for (i = 0; i < reps; i++) dst[i] = a + i;
      } else {
        for (i = 0; i < reps; i++) dst[i] = a - i;
      }
    }
    filled += reps;
  }
}

/* The two line tests every reader makes (vecfile_lexer.h). */
int amvl_skip_line(const lexer *lx) {
  return lx->le == lx->ls || amvl_blank(lx->ls, lx->le) || lx->ls[0] == '#';
}
int amvl_check_line(lexer *lx) {
  if (amvl_check_bytes(lx)) return -1;
  if (amvl_is_space(lx->ls[0])) return amvl_fail(lx, "continuation line outside a value list");
  return 0;
}

/* ---------------------------------------------------------------- writer */

/* The token for values[i..]; returns how many values it covers. */
static int64_t token_at(const amv_values *vals, int64_t i, char *buf, size_t size) {
  const int64_t *v = vals->v;
  const unsigned char *care = vals->care;
  int64_t e = 1, a = 1, d = 1;
  if (care && care[i] != 1) {
    const char *mark = care[i] == AMV_UNTOUCHED ? "_" : "?";
    while (i + e < vals->n && care[i + e] == care[i]) e++;
    if (e == 1) snprintf(buf, size, "%s", mark);
    else snprintf(buf, size, "%s*%lld", mark, (long long)e);
    return e;
  }
#define CHECKED(j) (!care || care[j] == 1)
  while (i + e < vals->n && CHECKED(i + e) && v[i + e] == v[i]) e++;
  while (i + a < vals->n && CHECKED(i + a) && v[i + a - 1] < INT64_MAX && v[i + a] == v[i + a - 1] + 1)
    a++;
  while (i + d < vals->n && CHECKED(i + d) && v[i + d - 1] > INT64_MIN && v[i + d] == v[i + d - 1] - 1)
    d++;
#undef CHECKED
  if (e >= 3 && e >= a && e >= d) {
    snprintf(buf, size, "%lld*%lld", (long long)v[i], (long long)e);
    return e;
  }
  if (a >= 3 && a >= d) {
    snprintf(buf, size, "%lld..%lld", (long long)v[i], (long long)v[i + a - 1]);
    return a;
  }
  if (d >= 3) {
    snprintf(buf, size, "%lld..%lld", (long long)v[i], (long long)v[i + d - 1]);
    return d;
  }
  snprintf(buf, size, "%lld", (long long)v[i]);
  return 1;
}

void amv_write_values(FILE *f, const char *keyword, const char *name, const amv_values *vals) {
  char buf[64];
  int64_t i = 0;
  int col = fprintf(f, "%s %s %lld", keyword, name, (long long)vals->n);
  while (i < vals->n) {
    int len;
    i += token_at(vals, i, buf, sizeof buf);
    len = (int)strlen(buf);
    if (col + 1 + len > AMV_WRAP) {
      fprintf(f, "\n  %s", buf);
      col = 2 + len;
    } else {
      fprintf(f, " %s", buf);
      col += 1 + len;
    }
  }
  fputc('\n', f);
}
