// SPDX-License-Identifier: Apache-2.0
/* Conformance vector files: parser and writer. See vecfile.h and docs/conformance.md. */
#define _POSIX_C_SOURCE 200809L
#include "attnmeta/conformance/vecfile.h"
#include "attnmeta/conformance/vecfile_topk.h"
#include "attnmeta/conformance/vecfile_pool.h"
#include "vecfile_lexer.h"
#include "vecschema.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int amv_num_outputs(void) { return amvs_step_num_outputs(); }
int amv_num_inputs(void) { return amvs_step_num_inputs(); }

const char *amv_output_name(int output) {
  const amvs_member *m = amvs_step_output(output);
  return m ? m->name : "?";
}
const char *amv_input_name(int input) {
  const amvs_member *m = amvs_step_input(input);
  return m ? m->name : "?";
}
int amv_output_is64(int output) {
  const amvs_member *m = amvs_step_output(output);
  return m && m->size == 8;
}

static int amv_input_is64(int input) {
  const amvs_member *m = amvs_step_input(input);
  return m && m->size == 8;
}

int amv_output_family(int output) {
  const amvs_member *m = amvs_step_output(output);
  return m ? amvs_family(m) : -1;
}

int amv_input_family(int input) {
  const amvs_member *m = amvs_step_input(input);
  return m ? amvs_family(m) : -1;
}

unsigned amv_families(unsigned products) {
  unsigned f = 0;
  int o;
  for (o = 0; o < amv_num_outputs(); o++)
    if ((products & (1u << o)) && amv_output_family(o) >= 0) f |= 1u << amv_output_family(o);
  return f;
}

static char *xstrdup(const char *s) {
  const size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

/* ------------------------------------------------------------------ lexer */

typedef amvl_lexer lexer;

/* The values of one file's buffers together, repeat counts expanded: one
 * buffer's largest size. A buffer's count is charged when it is declared,
 * before any value is read or stored, so a few bytes of repeat counts
 * cannot make the reader (or a runner, which allocates from the counts)
 * take gigabytes. */
#define AMV_MAX_FILE_VALUES AMV_MAX_ELEMS

typedef amvl_tok tok;

static int fail(lexer *lx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(lexer *lx, const char *fmt, ...) {
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

static int next_line(lexer *lx) {
  const char *next;
  if (lx->p >= lx->end) return 0;
  lx->ls = lx->p;
  line_at(lx->p, lx->end, &lx->le, &next);
  lx->p = next;
  lx->line++;
  return 1;
}

static int is_space(char c) { return c == ' ' || c == '\t'; }

static int blank(const char *s, const char *e) {
  for (; s < e; s++)
    if (!is_space(*s)) return 0;
  return 1;
}

/* Is the line after the current one a continuation line (leading blank, not empty)? */
static int next_is_continuation(const lexer *lx) {
  const char *le, *next;
  if (lx->p >= lx->end) return 0;
  line_at(lx->p, lx->end, &le, &next);
  return le > lx->p && is_space(*lx->p) && !blank(lx->p, le);
}

static int get_tok(const char **cur, const char *le, tok *t) {
  const char *s = *cur;
  t->s = s;
  t->n = 0;
  while (s < le && is_space(*s)) s++;
  if (s == le) {
    *cur = s;
    return 0;
  }
  t->s = s;
  while (s < le && !is_space(*s)) s++;
  t->n = (size_t)(s - t->s);
  *cur = s;
  return 1;
}

static int tok_is(const tok *t, const char *word) {
  return t->n == strlen(word) && memcmp(t->s, word, t->n) == 0;
}

/* Strict decimal: -?(0|[1-9][0-9]*), "-0" refused, within int64. */
static int parse_int(const char *s, size_t n, int64_t *out) {
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
static int parse_hex(const tok *t, int32_t *out) {
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
static int check_bytes(lexer *lx) {
  const char *s;
  for (s = lx->ls; s < lx->le; s++) {
    const unsigned char c = (unsigned char)*s;
    if ((c < 0x20 && c != '\t') || c >= 0x7F)
      return fail(lx, "unexpected byte 0x%02x in column %d", c, (int)(s - lx->ls) + 1);
  }
  return 0;
}

/* The NAME and COUNT after an input or expect line's keyword. */
static int name_and_count(lexer *lx, const char **cur, const char *keyword, tok *name, tok *cnt) {
  cnt->s = NULL;
  cnt->n = 0;
  if (get_tok(cur, lx->le, name) && get_tok(cur, lx->le, cnt)) return 0;
  return fail(lx, "bad %s line (expected '%s NAME COUNT VALUES...')", keyword, keyword);
}

/* ---------------------------------------------------------------- values */

static void values_free(amv_values *v) {
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
static int parse_values(lexer *lx, const char **cur, int64_t count, int allow_unchecked, int64_t lo,
                        int64_t hi, const char *what, int keep, amv_values *out) {
  int64_t filled = 0;
  tok t;
  out->n = 0;
  out->v = NULL;
  out->care = NULL;
  if (count < 0 || count > AMV_MAX_FILE_VALUES - lx->values)
    return fail(lx,
                "%s: %lld values would bring the file's buffers to more than %lld values in all "
                "(every buffer of every vector, repeat counts expanded)",
                what, (long long)count, (long long)AMV_MAX_FILE_VALUES);
  lx->values += count;
  out->n = count;
  out->v = keep ? malloc((size_t)(count > 0 ? count : 1) * sizeof(int64_t)) : NULL;
  if (keep && !out->v) return fail(lx, "%s: out of memory for %lld values", what, (long long)count);
  for (;;) {
    const char *star, *dots;
    int64_t a, b, reps = 1, i;
    int unchecked = 0;
    uint64_t span;
    if (!get_tok(cur, lx->le, &t)) {
      if (filled == count) return 0;
      if (!next_is_continuation(lx))
        return fail(lx, "%s: %lld values declared, %lld given", what, (long long)count,
                    (long long)filled);
      next_line(lx);
      if (check_bytes(lx)) return -1;
      *cur = lx->ls;
      continue;
    }
    if (filled == count)
      return fail(lx, "%s: more values than the %lld declared", what, (long long)count);
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
      } else if (parse_int(t.s, left, &a)) {
        return fail(lx, "%s: bad value '%.*s'", what, (int)t.n, t.s);
      }
      if (parse_int(star + 1, right, &reps) || reps < 1)
        return fail(lx, "%s: bad repeat count in '%.*s'", what, (int)t.n, t.s);
      if (reps > count - filled)
        return fail(lx, "%s: more values than the %lld declared", what, (long long)count);
      b = a;
    } else if (dots) {
      const size_t left = (size_t)(dots - t.s);
      if (parse_int(t.s, left, &a) || parse_int(dots + 2, t.n - left - 2, &b))
        return fail(lx, "%s: bad range '%.*s'", what, (int)t.n, t.s);
      span = b >= a ? distance(a, b) : distance(b, a);
      if (span >= (uint64_t)(count - filled))
        return fail(lx, "%s: more values than the %lld declared", what, (long long)count);
      reps = (int64_t)span + 1;
    } else if (tok_is(&t, "?")) {
      unchecked = 1;
      a = b = 0;
    } else if (tok_is(&t, "_") && allow_unchecked == 2) {
      unchecked = AMV_UNTOUCHED;
      a = b = 0;
    } else {
      if (parse_int(t.s, t.n, &a)) return fail(lx, "%s: bad value '%.*s'", what, (int)t.n, t.s);
      b = a;
    }
    if (unchecked) {
      if (!allow_unchecked) return fail(lx, "%s: '?' (unchecked) is only allowed in expect", what);
      if (keep && !out->care) {
        out->care = malloc((size_t)count);
        if (!out->care) return fail(lx, "%s: out of memory", what);
        memset(out->care, 1, (size_t)count);
      }
    } else if (a < lo || a > hi || b < lo || b > hi) {
      return fail(lx, "%s: value '%.*s' outside [%lld, %lld]", what, (int)t.n, t.s, (long long)lo,
                  (long long)hi);
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

/* The lexer for the readers of other ops (vecfile_lexer.h). */
int amvl_fail(lexer *lx, const char *fmt, ...) {
  char what[384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return fail(lx, "%s", what);
}
int amvl_next_line(lexer *lx) { return next_line(lx); }
int amvl_skip_line(const lexer *lx) {
  return lx->le == lx->ls || blank(lx->ls, lx->le) || lx->ls[0] == '#';
}
int amvl_check_line(lexer *lx) {
  if (check_bytes(lx)) return -1;
  if (is_space(lx->ls[0])) return fail(lx, "continuation line outside a value list");
  return 0;
}
int amvl_get_tok(const char **cur, const char *le, tok *t) { return get_tok(cur, le, t); }
int amvl_tok_is(const tok *t, const char *word) { return tok_is(t, word); }
int amvl_parse_int(const char *s, size_t n, int64_t *out) { return parse_int(s, n, out); }
int amvl_parse_hex(const tok *t, int32_t *out) { return parse_hex(t, out); }
int amvl_name_and_count(lexer *lx, const char **cur, const char *keyword, tok *name, tok *cnt) {
  return name_and_count(lx, cur, keyword, name, cnt);
}
int amvl_parse_values(lexer *lx, const char **cur, int64_t count, int allow_unchecked, int64_t lo,
                      int64_t hi, const char *what, int keep, amv_values *out) {
  return parse_values(lx, cur, count, allow_unchecked, lo, hi, what, keep, out);
}
void amvl_values_free(amv_values *v) { values_free(v); }

/* ---------------------------------------------------------------- parser */

enum { P_NUM_REQS, P_NUM_TOKENS, P_CAPACITY, P_COLS, P_STRIDE, P_OUT_STRIDE, P_NUM_MAPPED,
       P_BLOCK_SIZE, P_WORLD, P_INTERLEAVE, P_MISALIGN, NPARAMS_V1,
       /* version 2: four per compressed group, then SWA's and C128A's seven */
       P_GROUP = NPARAMS_V1, /* + 4 g + {ratio, block_size, cols, stride} */
       P_SWA = P_GROUP + 4 * AMV_GROUPS,
       P_C128A = P_SWA + 7,
       /* C128A's mixed mode (c128a_mode 2) only: given exactly then */
       P_C128A_MIXED = P_C128A + 7,
       /* version 4: the indexer's ratio and mode */
       P_INDEXER = P_C128A_MIXED + 2,
       NPARAMS = P_INDEXER + 2 };
static const char *const param_names[NPARAMS] = {
    "num_reqs",       "num_tokens",       "capacity",   "block_table_cols",
    "block_table_stride", "block_table_out_stride", "num_mapped", "block_size",
    "dcp_world_size", "dcp_interleave",   "misalign",
    "group0.ratio", "group0.block_size", "group0.block_table_cols", "group0.block_table_stride",
    "group1.ratio", "group1.block_size", "group1.block_table_cols", "group1.block_table_stride",
    "group2.ratio", "group2.block_size", "group2.block_table_cols", "group2.block_table_stride",
    "group3.ratio", "group3.block_size", "group3.block_table_cols", "group3.block_table_stride",
    "swa_block_size", "swa_window", "swa_width", "swa_mode", "swa_indices_stride",
    "swa_block_table_cols", "swa_block_table_stride",
    "c128a_ratio", "c128a_block_size", "c128a_width", "c128a_mode", "c128a_rows_stride",
    "c128a_block_table_cols", "c128a_block_table_stride",
    "c128a_prefill_rows_stride", "c128a_num_decode_tokens",
    "indexer_ratio", "indexer_mode"};

/* The params of a version-2 family: [first, first + count). */
static void family_params(int family, int *first, int *count) {
  if (family == AMV_FAMILY_INDEXER) {
    *first = P_INDEXER;
    *count = 2;
    return;
  }
  *first = family < AMV_GROUPS ? P_GROUP + 4 * family : family == AMV_FAMILY_SWA ? P_SWA : P_C128A;
  *count = family < AMV_GROUPS ? 4 : 7;
}

static int param_family(int k) {
  if (k < NPARAMS_V1) return -1;
  if (k < P_SWA) return (k - P_GROUP) / 4;
  if (k >= P_INDEXER) return AMV_FAMILY_INDEXER;
  return k < P_C128A ? AMV_FAMILY_SWA : AMV_FAMILY_C128A;
}

enum { S_OUTSIDE, S_OP, S_PARAMS, S_INPUTS, S_RANK };
#define AMVS_SEEN_MAX 256

/* Version 5: a setting of the schema declared after 0.3 (amvs_schema_param),
 * by its name: at most once, within its type; 0 when absent. */
static int parse_schema_param(lexer *lx, int version, const tok *key, const tok *val,
                              unsigned char *seen, amv_vector *v) {
  char name[AMV_NAME_MAX];
  const amvs_member *m;
  int64_t value;
  int k;
  if (key->n >= sizeof name) return fail(lx, "unknown param '%.*s'", (int)key->n, key->s);
  memcpy(name, key->s, key->n);
  name[key->n] = '\0';
  m = amvs_find_param(&amvs_step, name);
  if (!m || !amvs_schema_param(m)) return fail(lx, "unknown param '%s'", name);
  if (version < AMV_VERSION_SCHEMA)
    return fail(lx, "param %s is a version-%d param (this file is version %d)", name,
                AMV_VERSION_SCHEMA, version);
  k = (int)(m - amvs_step.m);
  if (k >= AMVS_SEEN_MAX) return fail(lx, "param %s: the reader's table is too small", name);
  if (seen[k]) return fail(lx, "param %s given twice", name);
  if (parse_int(val->s, val->n, &value) ||
      (m->size == 4 && (value < INT32_MIN || value > INT32_MAX)))
    return fail(lx, "param %s: bad value '%.*s'", name, (int)val->n, val->s);
  seen[k] = 1;
  amvs_set(&v->step, m, value);
  return 0;
}

/* Version 5's settings that are not 0, as "param" lines. */
static void write_schema_params(FILE *f, const amv_vector *v) {
  int k;
  for (k = 0; k < amvs_step.n; k++) {
    const amvs_member *m = &amvs_step.m[k];
    if (amvs_schema_param(m) && amvs_get(&v->step, m) != 0)
      fprintf(f, "param %s %lld\n", m->name, (long long)amvs_get(&v->step, m));
  }
}

typedef struct vstate {
  int state;
  int64_t param[NPARAMS];
  uint64_t params_seen;
  unsigned char schema_seen[AMVS_SEEN_MAX]; /* version 5's, by index into amvs_step */
  unsigned inputs_seen, expects_seen;
  int flags_seen, dsv4_flags_seen;
} vstate;

/* The elements an expect line of output o holds: its rows of `cols`
 * values, dense (a grouped table's: every group's, group after group). */
static int64_t expect_count(const amv_vector *v, int o) {
  int64_t rows, cols, stride, groups, gstride;
  amvs_extent(&amvs_step, &v->step, amvs_step_output(o), &rows, &cols, &stride);
  amvs_groups(&amvs_step, &v->step, amvs_step_output(o), &groups, &gstride);
  return groups * rows * cols;
}

/* The elements input i must hold: an array's, exactly; a table's, at least
 * every row's used columns (*is_table set). */
static int64_t input_need(const amv_vector *v, int i, int *is_table) {
  const amvs_member *m = amvs_step_input(i);
  int64_t rows, cols, stride, groups, gstride;
  amvs_extent(&amvs_step, &v->step, m, &rows, &cols, &stride);
  amvs_groups(&amvs_step, &v->step, m, &groups, &gstride);
  *is_table = m->cols != NULL;
  if (!*is_table) return rows;
  if (cols == 0) return 0;
  if (rows == 0) return 1;
  return (groups - 1) * gstride + (rows - 1) * stride + cols; /* the last group's end */
}

/* The attnmeta_step member param k goes in (NULL: misalign, the format's own). */
static const amvs_member *param_member(int k) {
  return amvs_find_param(&amvs_step, param_names[k]);
}

static void store_params(amv_vector *v, const int64_t *p, int first, int count) {
  int k;
  for (k = first; k < first + count; k++) {
    const amvs_member *m = param_member(k);
    if (m) amvs_set(&v->step, m, p[k]);
    else v->misalign = (int)p[k];
  }
}

/* The copies of step's params in the fields older callers read. */
static void copy_legacy_fields(amv_vector *v) {
  const attnmeta_step *s = &v->step;
  amv_dsv4 *d = &v->dsv4;
  int g;
  v->num_reqs = s->num_reqs;
  v->num_tokens = s->num_tokens;
  v->capacity = s->capacity;
  v->cols = s->block_table_cols;
  v->in_stride = s->block_table_stride;
  v->out_stride = s->block_table_out_stride;
  v->num_mapped = s->num_mapped;
  v->block_size = s->block_size;
  v->world = s->dcp_world_size;
  v->interleave = s->dcp_interleave;
  for (g = 0; g < AMV_GROUPS; g++) {
    const attnmeta_compressed_group *cg = &s->compressed_groups[g];
    d->group[g].ratio = cg->ratio;
    d->group[g].block_size = cg->block_size;
    d->group[g].cols = cg->block_table_cols;
    d->group[g].stride = cg->block_table_stride;
  }
  d->swa_block_size = s->swa_block_size;
  d->swa_window = s->swa_window;
  d->swa_width = s->swa_width;
  d->swa_mode = s->swa_mode;
  d->swa_cols = s->swa_block_table_cols;
  d->swa_stride = s->swa_block_table_stride;
  d->swa_out_stride = s->swa_indices_stride;
  d->c128a_ratio = s->c128a_ratio;
  d->c128a_block_size = s->c128a_block_size;
  d->c128a_width = s->c128a_width;
  d->c128a_mode = s->c128a_mode;
  d->c128a_cols = s->c128a_block_table_cols;
  d->c128a_stride = s->c128a_block_table_stride;
  d->c128a_out_stride = s->c128a_rows_stride;
}

/* Version 2: the params of the families the products build are all given,
 * the others none; their values are in range. */
static int check_dsv4_params(lexer *lx, vstate *vs, amv_vector *v) {
  const unsigned fam = amv_families(v->products);
  const int64_t *p = vs->param;
  const attnmeta_step *s = &v->step;
  int f, k, first, count;
  for (k = NPARAMS_V1; k < NPARAMS; k++) {
    const int want = ((fam >> param_family(k)) & 1) &&
                     (k < P_C128A_MIXED || k >= P_INDEXER ||
                      p[P_C128A + 3] == ATTNMETA_C128A_MIXED);
    const int have = (int)((vs->params_seen >> k) & 1);
    if (want && !have)
      return fail(lx, "vector %s: param %s missing (its products are built)", v->name,
                  param_names[k]);
    if (!want && have)
      return fail(lx, "vector %s: param %s given, but none of its products is", v->name,
                  param_names[k]);
  }
  for (f = 0; f < AMV_NUM_PARAM_FAMILIES; f++) {
    if (!((fam >> f) & 1)) continue;
    family_params(f, &first, &count);
    for (k = first; k < first + count; k++)
      if (p[k] < 0 || p[k] > AMV_MAX_ELEMS)
        return fail(lx, "vector %s: param %s must be in [0, %lld]", v->name, param_names[k],
                    (long long)AMV_MAX_ELEMS);
    store_params(v, p, first, count);
    if (f < AMV_GROUPS) {
      const attnmeta_compressed_group *cg = &s->compressed_groups[f];
      if (cg->ratio < 1 || cg->block_size < 1 || cg->block_table_stride < cg->block_table_cols)
        return fail(lx, "vector %s: group%d needs ratio >= 1, block_size >= 1, stride >= cols",
                    v->name, f);
    } else if (f == AMV_FAMILY_SWA) {
      if (s->swa_block_size < 1 || s->swa_window < 1 || s->swa_width < s->swa_window ||
          s->swa_mode > 1 || s->swa_indices_stride < s->swa_width ||
          s->swa_block_table_stride < s->swa_block_table_cols ||
          (s->num_tokens + 2) * s->swa_indices_stride > AMV_MAX_ELEMS)
        return fail(lx, "vector %s: swa params out of range (block_size >= 1, 1 <= window <= "
                        "width <= indices_stride, mode 0 or 1, stride >= cols)", v->name);
      if (s->swa_groups < 0 || s->swa_groups > AMV_MAX_SWA_GROUPS ||
          (s->swa_groups > 1 &&
           (s->swa_block_table_group_stride < 0 || s->swa_indices_group_stride < 0 ||
            s->swa_block_table_group_stride > AMV_MAX_ELEMS ||
            s->swa_indices_group_stride > AMV_MAX_ELEMS ||
            (s->swa_groups - 1) * s->swa_indices_group_stride +
                    (s->num_tokens + 2) * s->swa_indices_stride > AMV_MAX_ELEMS)))
        return fail(lx, "vector %s: swa_groups in [0, %d] and, with 2 or more, group strides in "
                        "[0, %lld] whose groups' rows fit in it", v->name, AMV_MAX_SWA_GROUPS,
                    (long long)AMV_MAX_ELEMS);
    } else if (f == AMV_FAMILY_INDEXER) {
      if (s->indexer_ratio < 1 || s->indexer_mode > 1)
        return fail(lx, "vector %s: indexer params out of range (ratio >= 1, mode 0 or 1)",
                    v->name);
    } else {
      if (s->c128a_mode == ATTNMETA_C128A_MIXED) {
        for (k = P_C128A_MIXED; k < P_INDEXER; k++)
          if (p[k] < 0 || p[k] > AMV_MAX_ELEMS)
            return fail(lx, "vector %s: param %s must be in [0, %lld]", v->name, param_names[k],
                        (long long)AMV_MAX_ELEMS);
        store_params(v, p, P_C128A_MIXED, P_INDEXER - P_C128A_MIXED);
        if (s->c128a_prefill_rows_stride < s->c128a_width ||
            s->c128a_num_decode_tokens > s->num_tokens ||
            (s->num_tokens + 2) * s->c128a_prefill_rows_stride > AMV_MAX_ELEMS)
          return fail(lx, "vector %s: c128a mixed-mode params out of range (prefill_rows_stride "
                          ">= width, num_decode_tokens <= num_tokens)", v->name);
      }
      if (s->c128a_ratio < 1 || s->c128a_block_size < 1 || s->c128a_mode > 2 ||
          s->c128a_rows_stride < s->c128a_width ||
          s->c128a_block_table_stride < s->c128a_block_table_cols ||
          (s->num_tokens + 2) * s->c128a_rows_stride > AMV_MAX_ELEMS)
        return fail(lx, "vector %s: c128a params out of range (ratio, block_size >= 1, width <= "
                        "rows_stride, mode 0, 1 or 2, stride >= cols)", v->name);
    }
  }
  copy_legacy_fields(v);
  return 0;
}

static int check_params(lexer *lx, vstate *vs, amv_vector *v) {
  int i;
  const int64_t *p = vs->param;
  for (i = 0; i < NPARAMS_V1; i++)
    if (!(vs->params_seen & ((uint64_t)1 << i)))
      return fail(lx, "vector %s: param %s missing", v->name, param_names[i]);
  for (i = 0; i < NPARAMS_V1; i++)
    if ((!param_member(i) || param_member(i)->size == 4) && (p[i] < INT32_MIN || p[i] > INT32_MAX))
      return fail(lx, "vector %s: param %s outside int32", v->name, param_names[i]);
  if (p[P_NUM_REQS] < 0) return fail(lx, "num_reqs must be >= 0");
  if (p[P_NUM_TOKENS] < 0) return fail(lx, "num_tokens must be >= 0");
  if (p[P_CAPACITY] < p[P_NUM_TOKENS]) return fail(lx, "capacity must be >= num_tokens");
  if (p[P_COLS] < 0) return fail(lx, "block_table_cols must be >= 0");
  if (p[P_STRIDE] < p[P_COLS]) return fail(lx, "block_table_stride must be >= block_table_cols");
  if (p[P_OUT_STRIDE] < p[P_COLS])
    return fail(lx, "block_table_out_stride must be >= block_table_cols");
  if (p[P_BLOCK_SIZE] < 1) return fail(lx, "block_size must be >= 1");
  if (p[P_WORLD] < 1) return fail(lx, "dcp_world_size must be >= 1");
  if (p[P_INTERLEAVE] < 1) return fail(lx, "dcp_interleave must be >= 1");
  if (p[P_MISALIGN] < 0 || p[P_MISALIGN] > 3) return fail(lx, "misalign must be 0, 1, 2 or 3");
  if (p[P_CAPACITY] > AMV_MAX_ELEMS || p[P_NUM_REQS] >= AMV_MAX_ELEMS ||
      p[P_STRIDE] > AMV_MAX_ELEMS || p[P_OUT_STRIDE] > AMV_MAX_ELEMS ||
      (p[P_NUM_TOKENS] + 2) * p[P_OUT_STRIDE] > AMV_MAX_ELEMS ||
      (p[P_NUM_REQS] > 0 && (p[P_NUM_REQS] - 1) * p[P_STRIDE] > AMV_MAX_ELEMS))
    return fail(lx, "vector %s: sizes larger than this reader's limit of %lld elements per buffer",
                v->name, (long long)AMV_MAX_ELEMS);
  store_params(v, p, 0, NPARAMS_V1);
  return 0;
}

static int close_rank(lexer *lx, vstate *vs, const amv_vector *v) {
  const amv_rank *rk = &v->ranks[v->nranks - 1];
  int o;
  for (o = 0; o < amv_num_outputs(); o++)
    if ((v->products & (1u << o)) && !(vs->expects_seen & (1u << o)))
      return fail(lx, "vector %s rank %d: expect %s missing", v->name, (int)rk->rank,
                  amv_output_name(o));
  if (!vs->flags_seen)
    return fail(lx, "vector %s rank %d: expect_flags missing", v->name, (int)rk->rank);
  if (amv_families(v->products) && !vs->dsv4_flags_seen)
    return fail(lx, "vector %s rank %d: expect_flags_dsv4 missing", v->name, (int)rk->rank);
  return 0;
}

void amv_vector_free(amv_vector *v) {
  int i, o;
  amv_topk_free(v->topk);
  free(v->topk);
  v->topk = NULL;
  amv_pool_free(v->pool);
  free(v->pool);
  v->pool = NULL;
  for (i = 0; i < amv_num_inputs(); i++) values_free(&v->input[i]);
  for (i = 0; i < v->nranks; i++)
    for (o = 0; o < amv_num_outputs(); o++) values_free(&v->ranks[i].expect[o]);
  free(v->ranks);
  v->ranks = NULL;
  v->nranks = 0;
}

void amv_file_free(amv_file *f) {
  int i;
  if (!f) return;
  for (i = 0; i < f->nvectors; i++) amv_vector_free(&f->vectors[i]);
  free(f->vectors);
  free(f->path);
  memset(f, 0, sizeof *f);
}

static int valid_name(const tok *t) {
  size_t i;
  if (t->n == 0 || t->n >= AMV_NAME_MAX) return 0;
  for (i = 0; i < t->n; i++) {
    const char c = t->s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '-' || c == '.'))
      return 0;
  }
  return 1;
}

static int find_name(const char *const *names, int n, const tok *t) {
  int i;
  for (i = 0; i < n; i++)
    if (tok_is(t, names[i])) return i;
  return -1;
}

/* The output (of the first n) / input of that name, -1 for none. */
static int find_output(int n, const tok *t) {
  const int o = amvs_step_output_named(t->s, t->n);
  return o < n ? o : -1;
}

static int find_input(const tok *t) { return amvs_step_input_named(t->s, t->n); }

/* Names seen so far in the file (duplicates are refused). */
typedef struct nameset {
  char (*names)[AMV_NAME_MAX];
  int n, cap;
} nameset;

static int nameset_add(nameset *s, const char *name) {
  int i;
  for (i = 0; i < s->n; i++)
    if (strcmp(s->names[i], name) == 0) return 1;
  if (s->n == s->cap) {
    const int cap = s->cap ? s->cap * 2 : 64;
    void *p = realloc(s->names, (size_t)cap * AMV_NAME_MAX);
    if (!p) return -1;
    s->names = p;
    s->cap = cap;
  }
  memcpy(s->names[s->n++], name, AMV_NAME_MAX);
  return 0;
}

/* ------------------------------------------------------------- op topk
 * Version 3's "op topk" vectors (spec/attnmeta-vectors-v3.md): the records
 * after the "op topk" line, up to and including "end". */

enum { TP_T, TP_K, TP_TOPK_STRIDE, TP_OUT_STRIDE, TP_R, TP_COLS, TP_TABLE_STRIDE, TP_BLOCK_SIZE,
       TP_STRIDE_ROWS, TP_WORLD, TP_INTERLEAVE, TP_REQUEST, TP_PREFILL, TP_P, TP_TOKEN_SLOT,
       TP_COUNT, TP_COMPACT, TP_MISALIGN, NTOPK_PARAMS };
static const char *const topk_param_names[NTOPK_PARAMS] = {
    "num_tokens",     "topk_count",      "topk_stride", "out_stride",  "num_reqs",
    "block_table_cols", "block_table_stride", "block_size", "stride_rows", "dcp_world_size",
    "dcp_interleave", "request",         "prefill",     "num_prefill", "token_slot",
    "count",          "compact",         "misalign"};

const char *amv_topk_input_name(int input) {
  const amvs_member *m = amvs_topk_input(input);
  return m ? m->name : "?";
}

static int topk_find_input(const tok *t) {
  int i;
  for (i = 0; i < AMV_TOPK_NUM_INPUTS; i++)
    if (tok_is(t, amv_topk_input_name(i))) return i;
  return -1;
}

/* The attnmeta_topk member param i goes in, NULL for the format's own. */
static const amvs_member *topk_param_member(int i) {
  return amvs_find_param(&amvs_topk, topk_param_names[i]);
}

/* The format's own params (no member of attnmeta_topk). */
static int *topk_flag(amv_topk *k, int i) {
  switch (i) {
    case TP_REQUEST: return &k->by_req_id;
    case TP_PREFILL: return &k->prefill;
    case TP_TOKEN_SLOT: return &k->token_slot;
    case TP_COUNT: return &k->count;
    default: return &k->misalign;
  }
}

/* The copies of op's params in the fields older callers read. */
static void topk_copy_legacy_fields(amv_topk *k) {
  const attnmeta_topk *op = &k->op;
  k->num_tokens = op->num_tokens;
  k->topk_count = op->topk_count;
  k->num_reqs = op->num_reqs;
  k->cols = op->block_table_cols;
  k->block_size = op->block_size;
  k->stride_rows = op->stride_rows;
  k->world = op->dcp_world_size;
  k->interleave = op->dcp_interleave;
  k->num_prefill = op->num_prefill;
  k->topk_stride = op->topk_stride;
  k->table_stride = op->block_table_stride;
  k->out_stride = op->out_stride;
  k->compact = op->compact;
}

void amv_topk_free(amv_topk *k) {
  int i;
  if (!k) return;
  for (i = 0; i < AMV_TOPK_NUM_INPUTS; i++) values_free(&k->input[i]);
  for (i = 0; i < k->nranks; i++) {
    values_free(&k->ranks[i].out);
    values_free(&k->ranks[i].count);
  }
  free(k->ranks);
  k->ranks = NULL;
  k->nranks = 0;
}

static int topk_check_params(lexer *lx, const int64_t *p, unsigned seen, const char *name,
                             amv_topk *k) {
  int i;
  for (i = 0; i < NTOPK_PARAMS; i++)
    if (!(seen & (1u << i))) return fail(lx, "vector %s: param %s missing", name, topk_param_names[i]);
  for (i = 0; i < NTOPK_PARAMS; i++)
    if ((!topk_param_member(i) || topk_param_member(i)->size == 4) &&
        (p[i] < INT32_MIN || p[i] > INT32_MAX))
      return fail(lx, "vector %s: param %s outside int32", name, topk_param_names[i]);
  if (p[TP_T] < 0) return fail(lx, "num_tokens must be >= 0");
  if (p[TP_K] < 1) return fail(lx, "topk_count must be >= 1");
  if (p[TP_TOPK_STRIDE] < p[TP_K]) return fail(lx, "topk_stride must be >= topk_count");
  if (p[TP_OUT_STRIDE] < p[TP_K]) return fail(lx, "out_stride must be >= topk_count");
  if (p[TP_R] < 0) return fail(lx, "num_reqs must be >= 0");
  if (p[TP_COLS] < 0) return fail(lx, "block_table_cols must be >= 0");
  if (p[TP_TABLE_STRIDE] < p[TP_COLS])
    return fail(lx, "block_table_stride must be >= block_table_cols");
  if (p[TP_BLOCK_SIZE] < 1) return fail(lx, "block_size must be >= 1");
  if (p[TP_STRIDE_ROWS] < 0) return fail(lx, "stride_rows must be >= 0");
  if (p[TP_WORLD] < 1) return fail(lx, "dcp_world_size must be >= 1");
  if (p[TP_INTERLEAVE] < 1) return fail(lx, "dcp_interleave must be >= 1");
  for (i = TP_REQUEST; i <= TP_COMPACT; i++)
    if (i != TP_P && p[i] != 0 && p[i] != 1)
      return fail(lx, "%s must be 0 or 1", topk_param_names[i]);
  if (p[TP_P] < 0 || (!p[TP_PREFILL] && p[TP_P] != 0))
    return fail(lx, "num_prefill must be >= 0, and 0 without prefill");
  if (p[TP_COMPACT] && !p[TP_COUNT]) return fail(lx, "compact needs count 1");
  if (p[TP_MISALIGN] < 0 || p[TP_MISALIGN] > 3) return fail(lx, "misalign must be 0, 1, 2 or 3");
  if (p[TP_TOPK_STRIDE] > AMV_MAX_ELEMS || p[TP_OUT_STRIDE] > AMV_MAX_ELEMS ||
      p[TP_TABLE_STRIDE] > AMV_MAX_ELEMS || p[TP_R] >= AMV_MAX_ELEMS || p[TP_P] > AMV_MAX_ELEMS ||
      p[TP_T] * p[TP_TOPK_STRIDE] > AMV_MAX_ELEMS || p[TP_T] * p[TP_OUT_STRIDE] > AMV_MAX_ELEMS ||
      (p[TP_R] > 0 && (p[TP_R] - 1) * p[TP_TABLE_STRIDE] > AMV_MAX_ELEMS))
    return fail(lx, "vector %s: sizes larger than this reader's limit of %lld elements per buffer",
                name, (long long)AMV_MAX_ELEMS);
  for (i = 0; i < NTOPK_PARAMS; i++) {
    const amvs_member *m = topk_param_member(i);
    if (m) amvs_set(&k->op, m, p[i]);
    else *topk_flag(k, i) = (int)p[i];
  }
  topk_copy_legacy_fields(k);
  return 0;
}

/* Whether the params call for input i, and its count: its extent's
 * elements, the stride gaps included for "topk"; the block table's: the
 * least it may hold. */
static int topk_input_wanted(const amv_topk *k, int i, int64_t *count) {
  const amvs_member *m = amvs_topk_input(i);
  int64_t rows, cols, stride;
  amvs_extent(&amvs_topk, &k->op, m, &rows, &cols, &stride);
  *count = rows * stride;
  switch (i) {
    case AMV_TOPK_QUERY_START_LOC: return !k->by_req_id;
    case AMV_TOPK_REQ_ID: return k->by_req_id;
    case AMV_TOPK_BLOCK_TABLE:
      *count = cols == 0 ? 0 : (rows == 0 ? 1 : (rows - 1) * stride + cols);
      return 1;
    case AMV_TOPK_PREFILL_REQ:
    case AMV_TOPK_WORKSPACE_STARTS: return k->prefill;
    case AMV_TOPK_TOKEN_SLOT: return k->token_slot;
    case AMV_TOPK_PEER_TABLES: return 0; /* no format param sizes it */
    default: return 1;
  }
}

static int topk_close_rank(lexer *lx, const amv_vector *v, unsigned expects, int flags_seen) {
  const amv_topk *k = v->topk;
  const int32_t rank = k->ranks[k->nranks - 1].rank;
  if (!(expects & 1u)) return fail(lx, "vector %s rank %d: expect out missing", v->name, (int)rank);
  if (k->count && !(expects & 2u))
    return fail(lx, "vector %s rank %d: expect valid_count missing", v->name, (int)rank);
  if (!flags_seen) return fail(lx, "vector %s rank %d: expect_flags missing", v->name, (int)rank);
  return 0;
}

/* Parses the rest of an "op topk" vector into v (v->topk allocated here),
 * through its "end" line. keep == 0: values are checked, not stored. */
static int parse_topk(lexer *lx, amv_vector *v, int keep) {
  enum { T_PARAMS, T_INPUTS, T_RANK } state = T_PARAMS;
  int64_t param[NTOPK_PARAMS];
  unsigned params_seen = 0, inputs_seen = 0, expects = 0;
  int flags_seen = 0, i;
  amv_topk *k = calloc(1, sizeof *k);
  tok t;
  const char *c;
  if (!k) return fail(lx, "out of memory");
  v->op = AMV_OP_TOPK;
  v->topk = k;
  memset(param, 0, sizeof param);
  while (next_line(lx)) {
    if (lx->le == lx->ls || blank(lx->ls, lx->le) || lx->ls[0] == '#') continue;
    if (check_bytes(lx)) return -1;
    if (is_space(lx->ls[0])) return fail(lx, "continuation line outside a value list");
    c = lx->ls;
    get_tok(&c, lx->le, &t);
    if (tok_is(&t, "param")) {
      tok key, val;
      int p;
      if (state != T_PARAMS) return fail(lx, "'param' lines come before the inputs");
      if (!get_tok(&c, lx->le, &key) || !get_tok(&c, lx->le, &val) || get_tok(&c, lx->le, &t))
        return fail(lx, "bad param line (expected 'param KEY VALUE')");
      p = find_name(topk_param_names, NTOPK_PARAMS, &key);
      if (p < 0) return fail(lx, "unknown param '%.*s' of op topk", (int)key.n, key.s);
      if (params_seen & (1u << p)) return fail(lx, "param %s given twice", topk_param_names[p]);
      if (parse_int(val.s, val.n, &param[p]))
        return fail(lx, "param %s: bad value '%.*s'", topk_param_names[p], (int)val.n, val.s);
      params_seen |= 1u << p;
    } else if (tok_is(&t, "input")) {
      tok name, cnt;
      int in;
      int64_t count, want;
      if (state == T_PARAMS) {
        if (topk_check_params(lx, param, params_seen, v->name, k)) return -1;
        state = T_INPUTS;
      }
      if (state != T_INPUTS) return fail(lx, "'input' lines come before the first 'rank'");
      if (name_and_count(lx, &c, "input", &name, &cnt)) return -1;
      in = topk_find_input(&name);
      if (in < 0) return fail(lx, "unknown input '%.*s' of op topk", (int)name.n, name.s);
      if (inputs_seen & (1u << in))
        return fail(lx, "input %s given twice", amv_topk_input_name(in));
      if (!topk_input_wanted(k, in, &want))
        return fail(lx, "input %s: the params do not call for it", amv_topk_input_name(in));
      if (parse_int(cnt.s, cnt.n, &count) ||
          (in == AMV_TOPK_BLOCK_TABLE ? (count < want || count > AMV_MAX_ELEMS || (want == 0 && count != 0))
                                      : count != want))
        return fail(lx, "input %s: count '%.*s', the params make it %s%lld",
                    amv_topk_input_name(in), (int)cnt.n, cnt.s,
                    in == AMV_TOPK_BLOCK_TABLE && want > 0 ? "at least " : "", (long long)want);
      inputs_seen |= 1u << in;
      if (parse_values(lx, &c, count, 0, amvs_topk_input(in)->size == 8 ? INT64_MIN : INT32_MIN,
                       amvs_topk_input(in)->size == 8 ? INT64_MAX : INT32_MAX,
                       amv_topk_input_name(in), keep, &k->input[in]))
        return -1;
    } else if (tok_is(&t, "rank")) {
      tok kt;
      int64_t r;
      amv_topk_rank *rk;
      if (state == T_INPUTS || state == T_PARAMS) {
        int64_t want;
        if (state == T_PARAMS && topk_check_params(lx, param, params_seen, v->name, k)) return -1;
        for (i = 0; i < AMV_TOPK_NUM_INPUTS; i++)
          if (topk_input_wanted(k, i, &want) && !(inputs_seen & (1u << i)))
            return fail(lx, "vector %s: input %s missing", v->name, amv_topk_input_name(i));
      } else if (topk_close_rank(lx, v, expects, flags_seen)) {
        return -1;
      }
      if (!get_tok(&c, lx->le, &kt) || parse_int(kt.s, kt.n, &r) || get_tok(&c, lx->le, &t))
        return fail(lx, "bad rank line (expected 'rank K')");
      if (r < 0 || r >= k->world)
        return fail(lx, "rank %lld outside [0, dcp_world_size = %d)", (long long)r, (int)k->world);
      for (i = 0; i < k->nranks; i++)
        if (k->ranks[i].rank == r) return fail(lx, "rank %lld given twice", (long long)r);
      rk = realloc(k->ranks, (size_t)(k->nranks + 1) * sizeof *rk);
      if (!rk) return fail(lx, "out of memory");
      k->ranks = rk;
      rk = &k->ranks[k->nranks++];
      memset(rk, 0, sizeof *rk);
      rk->rank = (int32_t)r;
      rk->line = lx->line;
      expects = 0;
      flags_seen = 0;
      state = T_RANK;
    } else if (tok_is(&t, "expect")) {
      tok name, cnt;
      int which;
      int64_t count, want;
      amv_topk_rank *rk = k->nranks > 0 ? &k->ranks[k->nranks - 1] : NULL;
      if (state != T_RANK) return fail(lx, "'expect' lines belong to a 'rank' block");
      if (name_and_count(lx, &c, "expect", &name, &cnt)) return -1;
      which = tok_is(&name, "out") ? 1 : (tok_is(&name, "valid_count") ? 2 : 0);
      if (!which || (which == 2 && !k->count))
        return fail(lx, "expect '%.*s': op topk expects 'out'%s", (int)name.n, name.s,
                    k->count ? " and 'valid_count'" : " (and 'valid_count' with count 1)");
      if (expects & (unsigned)which)
        return fail(lx, "expect %.*s given twice in rank %d", (int)name.n, name.s, (int)rk->rank);
      want = which == 1 ? (int64_t)k->num_tokens * k->topk_count : k->num_tokens;
      if (parse_int(cnt.s, cnt.n, &count) || count != want)
        return fail(lx, "expect %.*s: count '%.*s', the sizes make it %lld", (int)name.n, name.s,
                    (int)cnt.n, cnt.s, (long long)want);
      expects |= (unsigned)which;
      if (parse_values(lx, &c, count, 1, INT32_MIN, INT32_MAX, which == 1 ? "expect out" :
                       "expect valid_count", keep, which == 1 ? &rk->out : &rk->count))
        return -1;
    } else if (tok_is(&t, "expect_flags")) {
      tok f, mode;
      amv_topk_rank *rk = k->nranks > 0 ? &k->ranks[k->nranks - 1] : NULL;
      if (state != T_RANK || flags_seen)
        return fail(lx, "'expect_flags' belongs to a 'rank' block, once");
      if (!get_tok(&c, lx->le, &f) || parse_hex(&f, &rk->flags) || !get_tok(&c, lx->le, &mode) ||
          get_tok(&c, lx->le, &t) || !(tok_is(&mode, "exact") || tok_is(&mode, "at_least")))
        return fail(lx, "bad expect_flags line (expected 'expect_flags 0xFLAGS exact|at_least', "
                        "lower-case hex)");
      rk->flags_exact = tok_is(&mode, "exact");
      flags_seen = 1;
    } else if (tok_is(&t, "end")) {
      if (get_tok(&c, lx->le, &t)) return fail(lx, "'end' takes nothing after it");
      if (state != T_RANK) return fail(lx, "vector %s ends before its first 'rank' block", v->name);
      return topk_close_rank(lx, v, expects, flags_seen);
    } else {
      return fail(lx, "unknown keyword '%.*s' in an op topk vector", (int)t.n, t.s);
    }
  }
  return fail(lx, "the file ends inside vector %s (no 'end' line)", v->name);
}

/* only == NULL: keep everything; only == HEADERS: every vector without its
 * values; else the vector of that name alone. */
static const char HEADERS[] = "";

/* A finished vector: appended to out (cur is then cleared), or freed when
 * it is not one to keep. */
static int store_vector(lexer *lx, const char *only, int keep, amv_file *out, amv_vector *cur,
                        int *have, int *cap) {
  if (!keep && only != HEADERS) {
    amv_vector_free(cur);
    return 0;
  }
  if (*have == *cap) {
    const int ncap = *cap ? *cap * 2 : 16;
    void *p = realloc(out->vectors, (size_t)ncap * sizeof(amv_vector));
    if (!p) return fail(lx, "out of memory");
    out->vectors = p;
    *cap = ncap;
  }
  out->vectors[(*have)++] = *cur;
  out->nvectors = *have;
  memset(cur, 0, sizeof *cur);
  return 0;
}

static int parse_body(lexer *lx, const char *only, amv_file *out) {
  amv_vector cur;
  vstate vs;
  nameset seen = {NULL, 0, 0};
  int rc = -1, have = 0, cap = 0, keep = 1, version = AMV_VERSION;
  tok t;
  const char *c;

  memset(&cur, 0, sizeof cur);
  memset(&vs, 0, sizeof vs);
  /* header */
  if (!next_line(lx)) {
    fail(lx, "empty file (expected '%s %d')", AMV_MAGIC, AMV_VERSION);
    goto out;
  }
  c = lx->ls;
  {
    tok magic, ver;
    int64_t file_version;
    if (check_bytes(lx) || !get_tok(&c, lx->le, &magic) || !tok_is(&magic, AMV_MAGIC)) {
      fail(lx, "not a vector file: the first line must be '%s %d'", AMV_MAGIC, AMV_VERSION);
      goto out;
    }
    if (!get_tok(&c, lx->le, &ver) || parse_int(ver.s, ver.n, &file_version) ||
        get_tok(&c, lx->le, &t)) {
      fail(lx, "bad header: expected '%s %d'", AMV_MAGIC, AMV_VERSION);
      goto out;
    }
    if (file_version < AMV_VERSION_MIN || file_version > AMV_VERSION) {
      fail(lx, "format version %lld not supported (this reader knows versions %d to %d)",
           (long long)file_version, AMV_VERSION_MIN, AMV_VERSION);
      goto out;
    }
    version = (int)file_version;
  }

  while (next_line(lx)) {
    if (lx->le == lx->ls || blank(lx->ls, lx->le) || lx->ls[0] == '#') continue;
    if (check_bytes(lx)) goto out;
    if (is_space(lx->ls[0])) {
      fail(lx, "continuation line outside a value list");
      goto out;
    }
    c = lx->ls;
    get_tok(&c, lx->le, &t);

    if (tok_is(&t, "vector")) {
      tok name;
      int dup;
      if (vs.state != S_OUTSIDE) {
        fail(lx, "vector %s has no 'end' line", cur.name);
        goto out;
      }
      if (!get_tok(&c, lx->le, &name) || !valid_name(&name) || get_tok(&c, lx->le, &t)) {
        fail(lx, "bad vector name (1 to %d characters of A-Z a-z 0-9 _ - .)", AMV_NAME_MAX - 1);
        goto out;
      }
      memset(&cur, 0, sizeof cur);
      memset(&vs, 0, sizeof vs);
      memcpy(cur.name, name.s, name.n);
      cur.line = lx->line;
      cur.version = version;
      keep = !only || (only != HEADERS && strcmp(only, cur.name) == 0);
      dup = nameset_add(&seen, cur.name);
      if (dup) {
        fail(lx, dup > 0 ? "vector %s: name used twice in this file" : "vector %s: out of memory",
             cur.name);
        goto out;
      }
      vs.state = S_OP;
      continue;
    }
    if (vs.state == S_OUTSIDE) {
      fail(lx, "'%.*s' outside a vector (expected 'vector NAME')", (int)t.n, t.s);
      goto out;
    }

    if (tok_is(&t, "op")) {
      tok op;
      if (vs.state != S_OP) {
        fail(lx, "'op' must follow the 'vector' line, once");
        goto out;
      }
      if (!get_tok(&c, lx->le, &op) || get_tok(&c, lx->le, &t)) {
        fail(lx, "bad op line (expected 'op step')");
        goto out;
      }
      if (tok_is(&op, "topk") && version >= AMV_VERSION_TOPK) {
        /* the whole vector, through its 'end' line */
        if (parse_topk(lx, &cur, keep)) goto out;
        vs.state = S_OUTSIDE;
        if (store_vector(lx, only, keep, out, &cur, &have, &cap)) goto out;
        if (keep && only && only != HEADERS) break;
        continue;
      }
      if (tok_is(&op, "pool") && version >= AMV_VERSION_POOL) {
        /* the whole vector, through its 'end' line (vecfile_pool.c) */
        if (amvl_parse_pool(lx, &cur, keep)) goto out;
        vs.state = S_OUTSIDE;
        if (store_vector(lx, only, keep, out, &cur, &have, &cap)) goto out;
        if (keep && only && only != HEADERS) break;
        continue;
      }
      if (!tok_is(&op, "step")) {
        fail(lx, "unknown op '%.*s' (format version %d knows 'step'%s)", (int)op.n, op.s,
             version, version >= AMV_VERSION_POOL ? ", 'topk' and 'pool'"
                      : version >= AMV_VERSION_TOPK ? " and 'topk'" : "");
        goto out;
      }
      vs.state = S_PARAMS;
    } else if (vs.state == S_OP) {
      fail(lx, "expected 'op step' after 'vector %s'", cur.name);
      goto out;
    } else if (tok_is(&t, "param")) {
      tok key, val;
      int k;
      if (vs.state != S_PARAMS) {
        fail(lx, "'param' lines come before 'products'");
        goto out;
      }
      if (!get_tok(&c, lx->le, &key) || !get_tok(&c, lx->le, &val) || get_tok(&c, lx->le, &t)) {
        fail(lx, "bad param line (expected 'param KEY VALUE')");
        goto out;
      }
      k = find_name(param_names, NPARAMS, &key);
      if (k < 0) {
        if (parse_schema_param(lx, version, &key, &val, vs.schema_seen, &cur)) goto out;
        continue;
      }
      if (k >= NPARAMS_V1 && version < 2) {
        fail(lx, "param %s is a version-2 param (this file is version %d)", param_names[k],
             version);
        goto out;
      }
      if (k >= P_INDEXER && version < AMV_VERSION_INDEXER) {
        fail(lx, "param %s is a version-%d param (this file is version %d)", param_names[k],
             AMV_VERSION_INDEXER, version);
        goto out;
      }
      if (vs.params_seen & ((uint64_t)1 << k)) {
        fail(lx, "param %s given twice", param_names[k]);
        goto out;
      }
      if (parse_int(val.s, val.n, &vs.param[k])) {
        fail(lx, "param %s: bad value '%.*s'", param_names[k], (int)val.n, val.s);
        goto out;
      }
      vs.params_seen |= (uint64_t)1 << k;
    } else if (tok_is(&t, "products")) {
      if (vs.state != S_PARAMS) {
        fail(lx, "'products' must follow the params, once");
        goto out;
      }
      if (check_params(lx, &vs, &cur)) goto out;
      while (get_tok(&c, lx->le, &t)) {
        const int o = find_output(version < 2 ? AMV_V1_OUTPUTS : amv_num_outputs(), &t);
        if (o == AMV_INDEXER_LENS_OUT && version < AMV_VERSION_INDEXER) {
          fail(lx, "product indexer_lens_out is a version-%d product (this file is version %d)",
               AMV_VERSION_INDEXER, version);
          goto out;
        }
        if (o < 0) {
          fail(lx, "unknown product '%.*s' (format version %d)", (int)t.n, t.s, version);
          goto out;
        }
        if (cur.products & (1u << o)) {
          fail(lx, "product %s listed twice", amv_output_name(o));
          goto out;
        }
        cur.products |= 1u << o;
      }
      if (!cur.products) {
        fail(lx, "'products' names no product");
        goto out;
      }
      if (check_dsv4_params(lx, &vs, &cur)) goto out;
      vs.state = S_INPUTS;
    } else if (tok_is(&t, "input")) {
      tok name, cnt;
      int in, is_table;
      int64_t count, want;
      if (vs.state != S_INPUTS) {
        fail(lx, "'input' lines come after 'products' and before the first 'rank'");
        goto out;
      }
      if (name_and_count(lx, &c, "input", &name, &cnt)) goto out;
      in = find_input(&name);
      if (in < 0 || (amv_input_family(in) >= 0 &&
                     !((amv_families(cur.products) >> amv_input_family(in)) & 1))) {
        fail(lx, in < 0 ? "unknown input '%.*s'" : "input %.*s: none of its products is built",
             (int)name.n, name.s);
        goto out;
      }
      if (in >= AMV_NUM_INPUTS && version < AMV_VERSION_SCHEMA) {
        fail(lx, "input %s is a version-%d input (this file is version %d)", amv_input_name(in),
             AMV_VERSION_SCHEMA, version);
        goto out;
      }
      if (vs.inputs_seen & (1u << in)) {
        fail(lx, "input %s given twice", amv_input_name(in));
        goto out;
      }
      if (parse_int(cnt.s, cnt.n, &count) || count < 0) {
        fail(lx, "input %s: bad count '%.*s'", amv_input_name(in), (int)cnt.n, cnt.s);
        goto out;
      }
      want = input_need(&cur, in, &is_table);
      if (is_table ? count < want || count > AMV_MAX_ELEMS || (want == 0 && count > 0)
                   : count != want) {
        if (is_table)
          fail(lx, "input %s: %lld elements, the table needs %lld (and at most %lld)",
               amv_input_name(in), (long long)count, (long long)want, (long long)AMV_MAX_ELEMS);
        else
          fail(lx, "input %s: count %lld, the sizes make it %lld", amv_input_name(in),
               (long long)count, (long long)want);
        goto out;
      }
      vs.inputs_seen |= 1u << in;
      if (parse_values(lx, &c, count, 0, amv_input_is64(in) ? INT64_MIN : INT32_MIN,
                       amv_input_is64(in) ? INT64_MAX : INT32_MAX, amv_input_name(in), keep,
                       &cur.input[in]))
        goto out;
    } else if (tok_is(&t, "rank")) {
      tok kt;
      int64_t k;
      int i;
      amv_rank *rk;
      if (vs.state == S_INPUTS) {
        for (i = 0; i < amv_num_inputs(); i++)
          if (!(vs.inputs_seen & (1u << i)) && i < AMV_NUM_INPUTS &&
              !amvs_optional(amvs_step_input(i)) &&
              (amv_input_family(i) < 0 ||
               ((amv_families(cur.products) >> amv_input_family(i)) & 1))) {
            fail(lx, "vector %s: input %s missing", cur.name, amv_input_name(i));
            goto out;
          }
      } else if (vs.state == S_RANK) {
        if (close_rank(lx, &vs, &cur)) goto out;
      } else {
        fail(lx, "'rank' comes after the inputs");
        goto out;
      }
      if (!get_tok(&c, lx->le, &kt) || parse_int(kt.s, kt.n, &k) || get_tok(&c, lx->le, &t)) {
        fail(lx, "bad rank line (expected 'rank K')");
        goto out;
      }
      if (k < 0 || k >= cur.world) {
        fail(lx, "rank %lld outside [0, dcp_world_size = %d)", (long long)k, (int)cur.world);
        goto out;
      }
      for (i = 0; i < cur.nranks; i++)
        if (cur.ranks[i].rank == k) {
          fail(lx, "rank %lld given twice", (long long)k);
          goto out;
        }
      rk = realloc(cur.ranks, (size_t)(cur.nranks + 1) * sizeof *rk);
      if (!rk) {
        fail(lx, "out of memory");
        goto out;
      }
      cur.ranks = rk;
      rk = &cur.ranks[cur.nranks++];
      memset(rk, 0, sizeof *rk);
      rk->rank = (int32_t)k;
      rk->line = lx->line;
      vs.expects_seen = 0;
      vs.flags_seen = 0;
      vs.dsv4_flags_seen = 0;
      vs.state = S_RANK;
    } else if (tok_is(&t, "expect")) {
      tok name, cnt;
      int o;
      int64_t count;
      char what[96];
      amv_rank *rk = cur.nranks > 0 ? &cur.ranks[cur.nranks - 1] : NULL;
      if (vs.state != S_RANK) {
        fail(lx, "'expect' lines belong to a 'rank' block");
        goto out;
      }
      if (name_and_count(lx, &c, "expect", &name, &cnt)) goto out;
      o = find_output(amv_num_outputs(), &name);
      if (o < 0) {
        fail(lx, "unknown output '%.*s'", (int)name.n, name.s);
        goto out;
      }
      if (!(cur.products & (1u << o))) {
        fail(lx, "expect %s: not one of the vector's products", amv_output_name(o));
        goto out;
      }
      if (vs.expects_seen & (1u << o)) {
        fail(lx, "expect %s given twice in rank %d", amv_output_name(o), (int)rk->rank);
        goto out;
      }
      if (parse_int(cnt.s, cnt.n, &count) || count != expect_count(&cur, o)) {
        fail(lx, "expect %s: count '%.*s', the sizes make it %lld", amv_output_name(o), (int)cnt.n,
             cnt.s, (long long)expect_count(&cur, o));
        goto out;
      }
      vs.expects_seen |= 1u << o;
      snprintf(what, sizeof what, "expect %s", amv_output_name(o));
      if (parse_values(lx, &c, count, 1, amv_output_is64(o) ? INT64_MIN : INT32_MIN,
                       amv_output_is64(o) ? INT64_MAX : INT32_MAX, what, keep, &rk->expect[o]))
        goto out;
    } else if (tok_is(&t, "expect_flags")) {
      tok f[3], mode;
      int32_t v[3];
      int i;
      amv_rank *rk = cur.nranks > 0 ? &cur.ranks[cur.nranks - 1] : NULL;
      if (vs.state != S_RANK || vs.flags_seen) {
        fail(lx, "'expect_flags' belongs to a 'rank' block, once");
        goto out;
      }
      for (i = 0; i < 3; i++)
        if (!get_tok(&c, lx->le, &f[i]) || parse_hex(&f[i], &v[i])) {
          fail(lx, "bad expect_flags line (expected 'expect_flags 0xREQUESTS 0xSEQ_LENS 0xSLOTS "
                   "exact|at_least', lower-case hex)");
          goto out;
        }
      if (!get_tok(&c, lx->le, &mode) || get_tok(&c, lx->le, &t) ||
          !(tok_is(&mode, "exact") || tok_is(&mode, "at_least"))) {
        fail(lx, "expect_flags: the mode is 'exact' or 'at_least'");
        goto out;
      }
      rk->flags_requests = v[0];
      rk->flags_seq_lens = v[1];
      rk->flags_slots = v[2];
      rk->flags_exact = tok_is(&mode, "exact");
      vs.flags_seen = 1;
    } else if (tok_is(&t, "expect_flags_dsv4")) {
      tok f;
      int i;
      amv_rank *rk = cur.nranks > 0 ? &cur.ranks[cur.nranks - 1] : NULL;
      if (vs.state != S_RANK || vs.dsv4_flags_seen || !amv_families(cur.products)) {
        fail(lx, "'expect_flags_dsv4' belongs to a 'rank' block of a vector with version-2 "
                 "products, once");
        goto out;
      }
      for (i = 0; i < AMV_NUM_FAMILIES + 1; i++)
        if (!get_tok(&c, lx->le, &f) || parse_hex(&f, &rk->flags_dsv4[i])) {
          fail(lx, "bad expect_flags_dsv4 line (expected 7 lower-case hex masks: groups 0 to 3, "
                   "SWA lengths, SWA rows, C128A rows)");
          goto out;
        }
      if (get_tok(&c, lx->le, &t)) {
        fail(lx, "expect_flags_dsv4 takes 7 masks");
        goto out;
      }
      vs.dsv4_flags_seen = 1;
    } else if (tok_is(&t, "end")) {
      if (get_tok(&c, lx->le, &t)) {
        fail(lx, "'end' takes nothing after it");
        goto out;
      }
      if (vs.state != S_RANK) {
        fail(lx, "vector %s ends before its first 'rank' block", cur.name);
        goto out;
      }
      if (close_rank(lx, &vs, &cur)) goto out;
      vs.state = S_OUTSIDE;
      if (store_vector(lx, only, keep, out, &cur, &have, &cap)) goto out;
      if (keep && only && only != HEADERS) break; /* names are unique: the rest is not needed */
    } else {
      fail(lx, "unknown keyword '%.*s'", (int)t.n, t.s);
      goto out;
    }
  }
  if (vs.state != S_OUTSIDE) {
    fail(lx, "the file ends inside vector %s (no 'end' line)", cur.name);
    goto out;
  }
  rc = 0;
out:
  if (rc) amv_vector_free(&cur);
  free(seen.names);
  return rc;
}

int amv_parse(const char *text, size_t len, const char *label, const char *only, amv_file *out,
              char *err, size_t errsize) {
  lexer lx;
  memset(out, 0, sizeof *out);
  memset(&lx, 0, sizeof lx);
  lx.p = text;
  lx.end = text + len;
  lx.label = label ? label : "<memory>";
  lx.err = err;
  lx.errsize = errsize;
  if (err && errsize) err[0] = 0;
  out->path = xstrdup(lx.label);
  if (!out->path || parse_body(&lx, only, out)) {
    amv_file_free(out);
    return -1;
  }
  return 0;
}

int amv_load_headers(const char *path, amv_file *out, char *err, size_t errsize) {
  return amv_load(path, HEADERS, out, err, errsize);
}

int amv_load(const char *path, const char *only, amv_file *out, char *err, size_t errsize) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t len = 0, cap = 0;
  int rc;
  memset(out, 0, sizeof *out);
  if (!f) {
    snprintf(err, errsize, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  for (;;) {
    size_t got;
    if (len == cap) {
      char *p;
      cap = cap ? cap * 2 : (size_t)1 << 20;
      if (cap > ((size_t)256 << 20)) {
        snprintf(err, errsize, "%s: larger than 256 MiB", path);
        free(buf);
        fclose(f);
        return -1;
      }
      p = realloc(buf, cap);
      if (!p) {
        snprintf(err, errsize, "%s: out of memory", path);
        free(buf);
        fclose(f);
        return -1;
      }
      buf = p;
    }
    got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    snprintf(err, errsize, "%s: read error", path);
    free(buf);
    fclose(f);
    return -1;
  }
  fclose(f);
  rc = amv_parse(buf, len, path, only, out, err, errsize);
  free(buf);
  return rc;
}

/* ------------------------------------------------------------ file lists */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int push(char ***paths, int *n, int *cap, char *s) {
  if (!s) return -1;
  if (*n == *cap) {
    const int ncap = *cap ? *cap * 2 : 16;
    void *p = realloc(*paths, (size_t)ncap * sizeof(char *));
    if (!p) {
      free(s);
      return -1;
    }
    *paths = p;
    *cap = ncap;
  }
  (*paths)[(*n)++] = s;
  return 0;
}

int amv_list_files(const char *spec, char ***paths, char *err, size_t errsize) {
  int n = 0, cap = 0;
  const char *p = spec;
  *paths = NULL;
  while (*p) {
    const char *comma = strchr(p, ',');
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char *item = malloc(len + 1);
    DIR *d;
    if (!item) goto oom;
    memcpy(item, p, len);
    item[len] = 0;
    p += len + (comma ? 1 : 0);
    if (!len) {
      free(item);
      continue;
    }
    d = opendir(item);
    if (d) {
      struct dirent *e;
      const int first = n;
      while ((e = readdir(d)) != NULL) {
        const size_t nl = strlen(e->d_name);
        char *full;
        if (nl < 5 || strcmp(e->d_name + nl - 4, ".amv") != 0 || e->d_name[0] == '.') continue;
        full = malloc(len + nl + 2);
        if (!full) {
          closedir(d);
          free(item);
          goto oom;
        }
        snprintf(full, len + nl + 2, "%s%s%s", item, item[len - 1] == '/' ? "" : "/", e->d_name);
        if (push(paths, &n, &cap, full)) {
          closedir(d);
          free(item);
          goto oom;
        }
      }
      closedir(d);
      if (n == first) {
        snprintf(err, errsize, "%s: no *.amv files in this folder", item);
        free(item);
        amv_free_list(*paths, n);
        *paths = NULL;
        return -1;
      }
      qsort(*paths + first, (size_t)(n - first), sizeof(char *), cmp_str);
      free(item);
    } else if (errno == ENOTDIR) {
      if (push(paths, &n, &cap, item)) goto oom;
    } else {
      snprintf(err, errsize, "%s: %s", item, strerror(errno));
      free(item);
      amv_free_list(*paths, n);
      *paths = NULL;
      return -1;
    }
  }
  return n;
oom:
  snprintf(err, errsize, "out of memory listing %s", spec);
  amv_free_list(*paths, n);
  *paths = NULL;
  return -1;
}

void amv_free_list(char **paths, int n) {
  int i;
  if (!paths) return;
  for (i = 0; i < n; i++) free(paths[i]);
  free(paths);
}

/* ---------------------------------------------------------------- writer */

void amv_write_header(FILE *f) { amv_write_header_version(f, 1); }

void amv_write_header_version(FILE *f, int version) { fprintf(f, "%s %d\n", AMV_MAGIC, version); }

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

static void write_topk(FILE *f, const amv_vector *v) {
  const amv_topk *k = v->topk;
  int i;
  fprintf(f, "vector %s\nop topk\n", v->name);
  for (i = 0; i < NTOPK_PARAMS; i++) {
    const amvs_member *m = topk_param_member(i);
    fprintf(f, "param %s %lld\n", topk_param_names[i],
            (long long)(m ? amvs_get(&k->op, m) : *topk_flag((amv_topk *)k, i)));
  }
  for (i = 0; i < AMV_TOPK_NUM_INPUTS; i++) {
    int64_t count;
    if (topk_input_wanted(k, i, &count))
      amv_write_values(f, "input", amv_topk_input_name(i), &k->input[i]);
  }
  for (i = 0; i < k->nranks; i++) {
    const amv_topk_rank *rk = &k->ranks[i];
    fprintf(f, "rank %d\n", (int)rk->rank);
    amv_write_values(f, "expect", "out", &rk->out);
    if (k->count) amv_write_values(f, "expect", "valid_count", &rk->count);
    fprintf(f, "expect_flags 0x%x %s\n", (unsigned)rk->flags, rk->flags_exact ? "exact" : "at_least");
  }
  fprintf(f, "end\n");
}

/* Params [first, first + count) as "param" lines. */
static void write_params(FILE *f, const amv_vector *v, int first, int count) {
  int k;
  for (k = first; k < first + count; k++) {
    const amvs_member *m = param_member(k);
    fprintf(f, "param %s %lld\n", param_names[k],
            (long long)(m ? amvs_get(&v->step, m) : v->misalign));
  }
}

/* Version 2's params of the families the vector builds. */
static void write_dsv4_params(FILE *f, const amv_vector *v) {
  const unsigned fam = amv_families(v->products);
  int g, first, count;
  for (g = 0; g < AMV_NUM_PARAM_FAMILIES; g++) {
    if (!((fam >> g) & 1)) continue;
    family_params(g, &first, &count);
    write_params(f, v, first, count);
    if (g == AMV_FAMILY_C128A && v->step.c128a_mode == ATTNMETA_C128A_MIXED)
      write_params(f, v, P_C128A_MIXED, P_INDEXER - P_C128A_MIXED);
  }
}

void amv_write_vector(FILE *f, const amv_vector *v) {
  const unsigned fam = amv_families(v->products);
  int i, o;
  if (v->op == AMV_OP_TOPK) {
    write_topk(f, v);
    return;
  }
  if (v->op == AMV_OP_POOL) {
    amvl_write_pool(f, v);
    return;
  }
  fprintf(f, "vector %s\nop step\n", v->name);
  write_params(f, v, 0, NPARAMS_V1);
  write_dsv4_params(f, v);
  write_schema_params(f, v);
  fprintf(f, "products");
  for (o = 0; o < amv_num_outputs(); o++)
    if (v->products & (1u << o)) fprintf(f, " %s", amv_output_name(o));
  fputc('\n', f);
  for (i = 0; i < amv_num_inputs(); i++)
    if ((amv_input_family(i) < 0 || ((fam >> amv_input_family(i)) & 1)) &&
        (v->input[i].v || (i < AMV_NUM_INPUTS && !amvs_optional(amvs_step_input(i)))))
      amv_write_values(f, "input", amv_input_name(i), &v->input[i]);
  for (i = 0; i < v->nranks; i++) {
    const amv_rank *rk = &v->ranks[i];
    fprintf(f, "rank %d\n", (int)rk->rank);
    for (o = 0; o < amv_num_outputs(); o++)
      if (v->products & (1u << o))
        amv_write_values(f, "expect", amv_output_name(o), &rk->expect[o]);
    fprintf(f, "expect_flags 0x%x 0x%x 0x%x %s\n", (unsigned)rk->flags_requests,
            (unsigned)rk->flags_seq_lens, (unsigned)rk->flags_slots,
            rk->flags_exact ? "exact" : "at_least");
    if (fam) {
      fprintf(f, "expect_flags_dsv4");
      for (o = 0; o < AMV_NUM_FAMILIES + 1; o++) fprintf(f, " 0x%x", (unsigned)rk->flags_dsv4[o]);
      fputc('\n', f);
    }
  }
  fprintf(f, "end\n");
}
