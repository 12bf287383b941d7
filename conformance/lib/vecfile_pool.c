// SPDX-License-Identifier: Apache-2.0
/*
 * Version 6's "op pool" vectors (spec/attnmeta-vectors-v6.md): reading the
 * records after the "op pool" line through "end", and writing them. Every
 * param, input and output is an attnmeta_pool member found by name in the
 * schema (vecschema.c), so members appended to the struct are read and
 * written without a change here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/conformance/vecfile_pool.h"
#include "vecfile_lexer.h"
#include "vecschema.h"

const char *amv_pool_input_name(int input) {
  const amvs_member *m = amvs_pool_input(input);
  return m ? m->name : "?";
}
const char *amv_pool_output_name(int output) {
  const amvs_member *m = amvs_pool_output(output);
  return m ? m->name : "?";
}
int amv_pool_num_inputs(void) { return amvs_pool_num_inputs(); }
int amv_pool_num_outputs(void) { return amvs_pool_num_outputs(); }
int amv_pool_output_is64(int output) {
  const amvs_member *m = amvs_pool_output(output);
  return m && m->size == 8;
}
int amv_pool_input_is64(int input) {
  const amvs_member *m = amvs_pool_input(input);
  return m && m->size == 8;
}

/* The T of the extents: num_rows once query_lens is given. */
static int has_query_lens(const amv_pool *p) {
  const int q = amvs_pool_input_named("query_lens", strlen("query_lens"));
  return q >= 0 && ((p->inputs >> q) & 1u);
}

static void shape_of(const amv_pool *p, const amvs_member *m, int64_t *rows, int64_t *cols,
                     int64_t *stride) {
  amvs_pool_extent(&p->op, has_query_lens(p), m, rows, cols, stride);
}

void amv_pool_output_shape(const amv_pool *p, int output, int64_t *rows, int64_t *cols,
                           int64_t *stride) {
  shape_of(p, amvs_pool_output(output), rows, cols, stride);
}

/* Negative, or more elements than a buffer of the format may hold. */
static int too_big(int64_t rows, int64_t cols, int64_t stride) {
  if (rows < 0 || cols < 0 || stride < 0) return 1;
  if (rows > AMV_MAX_ELEMS || cols > AMV_MAX_ELEMS || stride > AMV_MAX_ELEMS) return 1;
  return rows * (stride > cols ? stride : cols) > AMV_MAX_ELEMS;
}

int64_t amv_pool_input_count(const amv_pool *p, int input) {
  const amvs_member *m = amvs_pool_input(input);
  int64_t rows, cols, stride;
  if (!m) return -1;
  shape_of(p, m, &rows, &cols, &stride);
  if (too_big(rows, cols, stride)) return -1;
  if (!m->cols) return rows;
  return rows == 0 || cols == 0 ? 0 : (rows - 1) * stride + cols;
}

int64_t amv_pool_output_count(const amv_pool *p, int output) {
  const amvs_member *m = amvs_pool_output(output);
  int64_t rows, cols, stride;
  if (!m) return -1;
  shape_of(p, m, &rows, &cols, &stride);
  if (too_big(rows, cols, stride) || (m->cols && stride < cols)) return -1;
  return rows * cols;
}

void amv_pool_free(amv_pool *p) {
  int i;
  if (!p) return;
  for (i = 0; i < AMV_POOL_MAX_INPUTS; i++) amvl_values_free(&p->input[i]);
  for (i = 0; i < AMV_POOL_MAX_OUTPUTS; i++) amvl_values_free(&p->expect[i]);
  p->inputs = p->outputs = 0;
}

/* The format param of that name, NULL for none. */
static const amvs_member *pool_param(const amvl_tok *t) {
  int k;
  for (k = 0; k < amvs_pool.n; k++) {
    const amvs_member *m = &amvs_pool.m[k];
    if (amvs_pool_format_param(m) && amvl_tok_is(t, m->name)) return m;
  }
  return NULL;
}

static int64_t type_min(size_t size) { return size == 8 ? INT64_MIN : INT32_MIN; }
static int64_t type_max(size_t size) { return size == 8 ? INT64_MAX : INT32_MAX; }

enum { S_PARAMS, S_INPUTS, S_EXPECTS, S_FLAGS };

int amvl_parse_pool(amvl_lexer *lx, amv_vector *v, int keep) {
  int state = S_PARAMS, flags_seen = 0, k;
  unsigned char params_seen[AMVS_MAX_MEMBERS] = {0};
  amv_pool *p = calloc(1, sizeof *p);
  amvl_tok t;
  const char *c;
  if (!p) return amvl_fail(lx, "out of memory");
  v->op = AMV_OP_POOL;
  v->pool = p;
  v->nranks = 0;
  attnmeta_pool_init(&p->op);
  while (amvl_next_line(lx)) {
    if (amvl_skip_line(lx)) continue;
    if (amvl_check_line(lx)) return -1;
    c = lx->ls;
    amvl_get_tok(&c, lx->le, &t);
    if (amvl_tok_is(&t, "param")) {
      amvl_tok key, val;
      const amvs_member *m;
      int64_t x;
      if (state != S_PARAMS) return amvl_fail(lx, "'param' lines come before the inputs");
      if (!amvl_get_tok(&c, lx->le, &key) || !amvl_get_tok(&c, lx->le, &val) ||
          amvl_get_tok(&c, lx->le, &t))
        return amvl_fail(lx, "bad param line (expected 'param KEY VALUE')");
      m = pool_param(&key);
      if (!m) return amvl_fail(lx, "unknown param '%.*s' of op pool", (int)key.n, key.s);
      k = (int)(m - amvs_pool.m);
      if (params_seen[k]) return amvl_fail(lx, "param %s given twice", m->name);
      if (amvl_parse_int(val.s, val.n, &x) || x < type_min(m->size) || x > type_max(m->size))
        return amvl_fail(lx, "param %s: bad value '%.*s' (an int%d)", m->name, (int)val.n, val.s,
                         (int)m->size * 8);
      params_seen[k] = 1;
      amvs_set(&p->op, m, x);
    } else if (amvl_tok_is(&t, "input")) {
      amvl_tok name, cnt;
      int64_t count, want;
      int in;
      if (state == S_PARAMS) state = S_INPUTS;
      if (state != S_INPUTS) return amvl_fail(lx, "'input' lines come before the 'expect' lines");
      if (amvl_name_and_count(lx, &c, "input", &name, &cnt)) return -1;
      in = amvs_pool_input_named(name.s, name.n);
      if (in < 0) return amvl_fail(lx, "unknown input '%.*s' of op pool", (int)name.n, name.s);
      if ((p->inputs >> in) & 1u) return amvl_fail(lx, "input %s given twice", amv_pool_input_name(in));
      want = amv_pool_input_count(p, in);
      if (want < 0)
        return amvl_fail(lx, "input %s: the params make its extent negative or larger than %lld",
                         amv_pool_input_name(in), (long long)AMV_MAX_ELEMS);
      if (amvl_parse_int(cnt.s, cnt.n, &count) || count != want)
        return amvl_fail(lx, "input %s: count '%.*s', the params make it %lld",
                         amv_pool_input_name(in), (int)cnt.n, cnt.s, (long long)want);
      p->inputs |= 1u << in;
      if (amvl_parse_values(lx, &c, count, 0, type_min(amvs_pool_input(in)->size),
                            type_max(amvs_pool_input(in)->size), amv_pool_input_name(in), keep,
                            &p->input[in]))
        return -1;
    } else if (amvl_tok_is(&t, "expect")) {
      amvl_tok name, cnt;
      int64_t count, want;
      int o;
      if (state == S_PARAMS || state == S_INPUTS) state = S_EXPECTS;
      if (state != S_EXPECTS) return amvl_fail(lx, "'expect' lines come before 'expect_flags'");
      if (amvl_name_and_count(lx, &c, "expect", &name, &cnt)) return -1;
      o = amvs_pool_output_named(name.s, name.n);
      if (o < 0) return amvl_fail(lx, "unknown output '%.*s' of op pool", (int)name.n, name.s);
      if ((p->outputs >> o) & 1u)
        return amvl_fail(lx, "expect %s given twice", amv_pool_output_name(o));
      want = amv_pool_output_count(p, o);
      if (want < 0)
        return amvl_fail(lx, "expect %s: the params make its extent negative, its stride below "
                             "its width, or larger than %lld", amv_pool_output_name(o),
                         (long long)AMV_MAX_ELEMS);
      if (amvl_parse_int(cnt.s, cnt.n, &count) || count != want)
        return amvl_fail(lx, "expect %s: count '%.*s', the params make it %lld",
                         amv_pool_output_name(o), (int)cnt.n, cnt.s, (long long)want);
      p->outputs |= 1u << o;
      if (amvl_parse_values(lx, &c, count, 2, type_min(amvs_pool_output(o)->size),
                            type_max(amvs_pool_output(o)->size), amv_pool_output_name(o), keep,
                            &p->expect[o]))
        return -1;
    } else if (amvl_tok_is(&t, "expect_flags")) {
      amvl_tok f, mode;
      if (state != S_EXPECTS || flags_seen)
        return amvl_fail(lx, "'expect_flags' follows the 'expect' lines (at least one), once");
      if (!amvl_get_tok(&c, lx->le, &f) || amvl_parse_hex(&f, &p->flags) ||
          !amvl_get_tok(&c, lx->le, &mode) || amvl_get_tok(&c, lx->le, &t) ||
          !(amvl_tok_is(&mode, "exact") || amvl_tok_is(&mode, "at_least")))
        return amvl_fail(lx, "bad expect_flags line (expected 'expect_flags 0xFLAGS "
                             "exact|at_least', lower-case hex)");
      p->flags_exact = amvl_tok_is(&mode, "exact");
      flags_seen = 1;
      state = S_FLAGS;
    } else if (amvl_tok_is(&t, "end")) {
      if (amvl_get_tok(&c, lx->le, &t)) return amvl_fail(lx, "'end' takes nothing after it");
      if (!p->outputs) return amvl_fail(lx, "vector %s: no 'expect' line", v->name);
      if (!flags_seen) return amvl_fail(lx, "vector %s: expect_flags missing", v->name);
      return 0;
    } else {
      return amvl_fail(lx, "unknown keyword '%.*s' in an op pool vector", (int)t.n, t.s);
    }
  }
  return amvl_fail(lx, "the file ends inside vector %s (no 'end' line)", v->name);
}

void amvl_write_pool(FILE *f, const amv_vector *v) {
  const amv_pool *p = v->pool;
  attnmeta_pool init;
  int k;
  attnmeta_pool_init(&init);
  fprintf(f, "vector %s\nop pool\n", v->name);
  for (k = 0; k < amvs_pool.n; k++) {
    const amvs_member *m = &amvs_pool.m[k];
    if (amvs_pool_format_param(m) && amvs_get(&p->op, m) != amvs_get(&init, m))
      fprintf(f, "param %s %lld\n", m->name, (long long)amvs_get(&p->op, m));
  }
  for (k = 0; k < amv_pool_num_inputs(); k++)
    if ((p->inputs >> k) & 1u) amv_write_values(f, "input", amv_pool_input_name(k), &p->input[k]);
  for (k = 0; k < amv_pool_num_outputs(); k++)
    if ((p->outputs >> k) & 1u) amv_write_values(f, "expect", amv_pool_output_name(k), &p->expect[k]);
  fprintf(f, "expect_flags 0x%x %s\nend\n", (unsigned)p->flags, p->flags_exact ? "exact" : "at_least");
}
