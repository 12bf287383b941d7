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

typedef amvl_lexer lexer;
typedef amvl_tok tok;

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
  if (key->n >= sizeof name) return amvl_fail(lx, "unknown param '%.*s'", (int)key->n, key->s);
  memcpy(name, key->s, key->n);
  name[key->n] = '\0';
  m = amvs_find_param(&amvs_step, name);
  if (!m || !amvs_schema_param(m)) return amvl_fail(lx, "unknown param '%s'", name);
  if (version < AMV_VERSION_SCHEMA)
    return amvl_fail(lx, "param %s is a version-%d param (this file is version %d)", name,
                     AMV_VERSION_SCHEMA, version);
  k = (int)(m - amvs_step.m);
  if (k >= AMVS_SEEN_MAX) return amvl_fail(lx, "param %s: the reader's table is too small", name);
  if (seen[k]) return amvl_fail(lx, "param %s given twice", name);
  if (amvl_parse_int(val->s, val->n, &value) ||
      (m->size == 4 && (value < INT32_MIN || value > INT32_MAX)))
    return amvl_fail(lx, "param %s: bad value '%.*s'", name, (int)val->n, val->s);
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
      return amvl_fail(lx, "vector %s: param %s missing (its products are built)", v->name,
                       param_names[k]);
    if (!want && have)
      return amvl_fail(lx, "vector %s: param %s given, but none of its products is", v->name,
                       param_names[k]);
  }
  for (f = 0; f < AMV_NUM_PARAM_FAMILIES; f++) {
    if (!((fam >> f) & 1)) continue;
    family_params(f, &first, &count);
    for (k = first; k < first + count; k++)
      if (p[k] < 0 || p[k] > AMV_MAX_ELEMS)
        return amvl_fail(lx, "vector %s: param %s must be in [0, %lld]", v->name, param_names[k],
                         (long long)AMV_MAX_ELEMS);
    store_params(v, p, first, count);
    if (f < AMV_GROUPS) {
      const attnmeta_compressed_group *cg = &s->compressed_groups[f];
      if (cg->ratio < 1 || cg->block_size < 1 || cg->block_table_stride < cg->block_table_cols)
        return amvl_fail(lx, "vector %s: group%d needs ratio >= 1, block_size >= 1, stride >= cols",
                         v->name, f);
    } else if (f == AMV_FAMILY_SWA) {
      if (s->swa_block_size < 1 || s->swa_window < 1 || s->swa_width < s->swa_window ||
          s->swa_mode > 1 || s->swa_indices_stride < s->swa_width ||
          s->swa_block_table_stride < s->swa_block_table_cols ||
          (s->num_tokens + 2) * s->swa_indices_stride > AMV_MAX_ELEMS)
        return amvl_fail(lx,
                         "vector %s: swa params out of range (block_size >= 1, 1 <= window <= "
                         "width <= indices_stride, mode 0 or 1, stride >= cols)",
                         v->name);
      if (s->swa_groups < 0 || s->swa_groups > AMV_MAX_SWA_GROUPS ||
          (s->swa_groups > 1 &&
           (s->swa_block_table_group_stride < 0 || s->swa_indices_group_stride < 0 ||
            s->swa_block_table_group_stride > AMV_MAX_ELEMS ||
            s->swa_indices_group_stride > AMV_MAX_ELEMS ||
            (s->swa_groups - 1) * s->swa_indices_group_stride +
                    (s->num_tokens + 2) * s->swa_indices_stride > AMV_MAX_ELEMS)))
        return amvl_fail(lx,
                         "vector %s: swa_groups in [0, %d] and, with 2 or more, group strides in "
                         "[0, %lld] whose groups' rows fit in it",
                         v->name, AMV_MAX_SWA_GROUPS, (long long)AMV_MAX_ELEMS);
    } else if (f == AMV_FAMILY_INDEXER) {
      if (s->indexer_ratio < 1 || s->indexer_mode > 1)
        return amvl_fail(lx, "vector %s: indexer params out of range (ratio >= 1, mode 0 or 1)",
                         v->name);
    } else {
      if (s->c128a_mode == ATTNMETA_C128A_MIXED) {
        for (k = P_C128A_MIXED; k < P_INDEXER; k++)
          if (p[k] < 0 || p[k] > AMV_MAX_ELEMS)
            return amvl_fail(lx, "vector %s: param %s must be in [0, %lld]", v->name,
                             param_names[k], (long long)AMV_MAX_ELEMS);
        store_params(v, p, P_C128A_MIXED, P_INDEXER - P_C128A_MIXED);
        if (s->c128a_prefill_rows_stride < s->c128a_width ||
            s->c128a_num_decode_tokens > s->num_tokens ||
            (s->num_tokens + 2) * s->c128a_prefill_rows_stride > AMV_MAX_ELEMS)
          return amvl_fail(lx,
                           "vector %s: c128a mixed-mode params out of range (prefill_rows_stride "
                           ">= width, num_decode_tokens <= num_tokens)",
                           v->name);
      }
      if (s->c128a_ratio < 1 || s->c128a_block_size < 1 || s->c128a_mode > 2 ||
          s->c128a_rows_stride < s->c128a_width ||
          s->c128a_block_table_stride < s->c128a_block_table_cols ||
          (s->num_tokens + 2) * s->c128a_rows_stride > AMV_MAX_ELEMS)
        return amvl_fail(lx,
                         "vector %s: c128a params out of range (ratio, block_size >= 1, width <= "
                         "rows_stride, mode 0, 1 or 2, stride >= cols)",
                         v->name);
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
      return amvl_fail(lx, "vector %s: param %s missing", v->name, param_names[i]);
  for (i = 0; i < NPARAMS_V1; i++)
    if ((!param_member(i) || param_member(i)->size == 4) && (p[i] < INT32_MIN || p[i] > INT32_MAX))
      return amvl_fail(lx, "vector %s: param %s outside int32", v->name, param_names[i]);
  if (p[P_NUM_REQS] < 0) return amvl_fail(lx, "num_reqs must be >= 0");
  if (p[P_NUM_TOKENS] < 0) return amvl_fail(lx, "num_tokens must be >= 0");
  if (p[P_CAPACITY] < p[P_NUM_TOKENS]) return amvl_fail(lx, "capacity must be >= num_tokens");
  if (p[P_COLS] < 0) return amvl_fail(lx, "block_table_cols must be >= 0");
  if (p[P_STRIDE] < p[P_COLS])
    return amvl_fail(lx, "block_table_stride must be >= block_table_cols");
  if (p[P_OUT_STRIDE] < p[P_COLS])
    return amvl_fail(lx, "block_table_out_stride must be >= block_table_cols");
  if (p[P_BLOCK_SIZE] < 1) return amvl_fail(lx, "block_size must be >= 1");
  if (p[P_WORLD] < 1) return amvl_fail(lx, "dcp_world_size must be >= 1");
  if (p[P_INTERLEAVE] < 1) return amvl_fail(lx, "dcp_interleave must be >= 1");
  if (p[P_MISALIGN] < 0 || p[P_MISALIGN] > 3) return amvl_fail(lx, "misalign must be 0, 1, 2 or 3");
  if (p[P_CAPACITY] > AMV_MAX_ELEMS || p[P_NUM_REQS] >= AMV_MAX_ELEMS ||
      p[P_STRIDE] > AMV_MAX_ELEMS || p[P_OUT_STRIDE] > AMV_MAX_ELEMS ||
      (p[P_NUM_TOKENS] + 2) * p[P_OUT_STRIDE] > AMV_MAX_ELEMS ||
      (p[P_NUM_REQS] > 0 && (p[P_NUM_REQS] - 1) * p[P_STRIDE] > AMV_MAX_ELEMS))
    return amvl_fail(lx,
                     "vector %s: sizes larger than this reader's limit of %lld elements per buffer",
                     v->name, (long long)AMV_MAX_ELEMS);
  store_params(v, p, 0, NPARAMS_V1);
  return 0;
}

static int close_rank(lexer *lx, vstate *vs, const amv_vector *v) {
  const amv_rank *rk = &v->ranks[v->nranks - 1];
  int o;
  for (o = 0; o < amv_num_outputs(); o++)
    if ((v->products & (1u << o)) && !(vs->expects_seen & (1u << o)))
      return amvl_fail(lx, "vector %s rank %d: expect %s missing", v->name, (int)rk->rank,
                       amv_output_name(o));
  if (!vs->flags_seen)
    return amvl_fail(lx, "vector %s rank %d: expect_flags missing", v->name, (int)rk->rank);
  if (amv_families(v->products) && !vs->dsv4_flags_seen)
    return amvl_fail(lx, "vector %s rank %d: expect_flags_dsv4 missing", v->name, (int)rk->rank);
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
  for (i = 0; i < amv_num_inputs(); i++) amvl_values_free(&v->input[i]);
  for (i = 0; i < v->nranks; i++)
    for (o = 0; o < amv_num_outputs(); o++) amvl_values_free(&v->ranks[i].expect[o]);
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
    if (amvl_tok_is(t, names[i])) return i;
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
    if (amvl_tok_is(t, amv_topk_input_name(i))) return i;
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
  for (i = 0; i < AMV_TOPK_NUM_INPUTS; i++) amvl_values_free(&k->input[i]);
  for (i = 0; i < k->nranks; i++) {
    amvl_values_free(&k->ranks[i].out);
    amvl_values_free(&k->ranks[i].count);
  }
  free(k->ranks);
  k->ranks = NULL;
  k->nranks = 0;
}

static int topk_check_params(lexer *lx, const int64_t *p, unsigned seen, const char *name,
                             amv_topk *k) {
  int i;
  for (i = 0; i < NTOPK_PARAMS; i++)
    if (!(seen & (1u << i)))
      return amvl_fail(lx, "vector %s: param %s missing", name, topk_param_names[i]);
  for (i = 0; i < NTOPK_PARAMS; i++)
    if ((!topk_param_member(i) || topk_param_member(i)->size == 4) &&
        (p[i] < INT32_MIN || p[i] > INT32_MAX))
      return amvl_fail(lx, "vector %s: param %s outside int32", name, topk_param_names[i]);
  if (p[TP_T] < 0) return amvl_fail(lx, "num_tokens must be >= 0");
  if (p[TP_K] < 1) return amvl_fail(lx, "topk_count must be >= 1");
  if (p[TP_TOPK_STRIDE] < p[TP_K]) return amvl_fail(lx, "topk_stride must be >= topk_count");
  if (p[TP_OUT_STRIDE] < p[TP_K]) return amvl_fail(lx, "out_stride must be >= topk_count");
  if (p[TP_R] < 0) return amvl_fail(lx, "num_reqs must be >= 0");
  if (p[TP_COLS] < 0) return amvl_fail(lx, "block_table_cols must be >= 0");
  if (p[TP_TABLE_STRIDE] < p[TP_COLS])
    return amvl_fail(lx, "block_table_stride must be >= block_table_cols");
  if (p[TP_BLOCK_SIZE] < 1) return amvl_fail(lx, "block_size must be >= 1");
  if (p[TP_STRIDE_ROWS] < 0) return amvl_fail(lx, "stride_rows must be >= 0");
  if (p[TP_WORLD] < 1) return amvl_fail(lx, "dcp_world_size must be >= 1");
  if (p[TP_INTERLEAVE] < 1) return amvl_fail(lx, "dcp_interleave must be >= 1");
  for (i = TP_REQUEST; i <= TP_COMPACT; i++)
    if (i != TP_P && p[i] != 0 && p[i] != 1)
      return amvl_fail(lx, "%s must be 0 or 1", topk_param_names[i]);
  if (p[TP_P] < 0 || (!p[TP_PREFILL] && p[TP_P] != 0))
    return amvl_fail(lx, "num_prefill must be >= 0, and 0 without prefill");
  if (p[TP_COMPACT] && !p[TP_COUNT]) return amvl_fail(lx, "compact needs count 1");
  if (p[TP_MISALIGN] < 0 || p[TP_MISALIGN] > 3)
    return amvl_fail(lx, "misalign must be 0, 1, 2 or 3");
  if (p[TP_TOPK_STRIDE] > AMV_MAX_ELEMS || p[TP_OUT_STRIDE] > AMV_MAX_ELEMS ||
      p[TP_TABLE_STRIDE] > AMV_MAX_ELEMS || p[TP_R] >= AMV_MAX_ELEMS || p[TP_P] > AMV_MAX_ELEMS ||
      p[TP_T] * p[TP_TOPK_STRIDE] > AMV_MAX_ELEMS || p[TP_T] * p[TP_OUT_STRIDE] > AMV_MAX_ELEMS ||
      (p[TP_R] > 0 && (p[TP_R] - 1) * p[TP_TABLE_STRIDE] > AMV_MAX_ELEMS))
    return amvl_fail(lx,
                     "vector %s: sizes larger than this reader's limit of %lld elements per buffer",
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
  if (!(expects & 1u))
    return amvl_fail(lx, "vector %s rank %d: expect out missing", v->name, (int)rank);
  if (k->count && !(expects & 2u))
    return amvl_fail(lx, "vector %s rank %d: expect valid_count missing", v->name, (int)rank);
  if (!flags_seen)
    return amvl_fail(lx, "vector %s rank %d: expect_flags missing", v->name, (int)rank);
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
  if (!k) return amvl_fail(lx, "out of memory");
  v->op = AMV_OP_TOPK;
  v->topk = k;
  memset(param, 0, sizeof param);
  while (amvl_next_line(lx)) {
    if (lx->le == lx->ls || amvl_blank(lx->ls, lx->le) || lx->ls[0] == '#') continue;
    if (amvl_check_bytes(lx)) return -1;
    if (amvl_is_space(lx->ls[0])) return amvl_fail(lx, "continuation line outside a value list");
    c = lx->ls;
    amvl_get_tok(&c, lx->le, &t);
    if (amvl_tok_is(&t, "param")) {
      tok key, val;
      int p;
      if (state != T_PARAMS) return amvl_fail(lx, "'param' lines come before the inputs");
      if (!amvl_get_tok(&c, lx->le, &key) || !amvl_get_tok(&c, lx->le, &val) ||
          amvl_get_tok(&c, lx->le, &t))
        return amvl_fail(lx, "bad param line (expected 'param KEY VALUE')");
      p = find_name(topk_param_names, NTOPK_PARAMS, &key);
      if (p < 0) return amvl_fail(lx, "unknown param '%.*s' of op topk", (int)key.n, key.s);
      if (params_seen & (1u << p))
        return amvl_fail(lx, "param %s given twice", topk_param_names[p]);
      if (amvl_parse_int(val.s, val.n, &param[p]))
        return amvl_fail(lx, "param %s: bad value '%.*s'", topk_param_names[p], (int)val.n, val.s);
      params_seen |= 1u << p;
    } else if (amvl_tok_is(&t, "input")) {
      tok name, cnt;
      int in;
      int64_t count, want;
      if (state == T_PARAMS) {
        if (topk_check_params(lx, param, params_seen, v->name, k)) return -1;
        state = T_INPUTS;
      }
      if (state != T_INPUTS) return amvl_fail(lx, "'input' lines come before the first 'rank'");
      if (amvl_name_and_count(lx, &c, "input", &name, &cnt)) return -1;
      in = topk_find_input(&name);
      if (in < 0) return amvl_fail(lx, "unknown input '%.*s' of op topk", (int)name.n, name.s);
      if (inputs_seen & (1u << in))
        return amvl_fail(lx, "input %s given twice", amv_topk_input_name(in));
      if (!topk_input_wanted(k, in, &want))
        return amvl_fail(lx, "input %s: the params do not call for it", amv_topk_input_name(in));
      if (amvl_parse_int(cnt.s, cnt.n, &count) ||
          (in == AMV_TOPK_BLOCK_TABLE ? (count < want || count > AMV_MAX_ELEMS || (want == 0 && count != 0))
                                      : count != want))
        return amvl_fail(lx, "input %s: count '%.*s', the params make it %s%lld",
                         amv_topk_input_name(in), (int)cnt.n, cnt.s,
                         in == AMV_TOPK_BLOCK_TABLE && want > 0 ? "at least " : "",
                         (long long)want);
      inputs_seen |= 1u << in;
      if (amvl_parse_values(lx, &c, count, 0,
                            amvs_topk_input(in)->size == 8 ? INT64_MIN : INT32_MIN,
                            amvs_topk_input(in)->size == 8 ? INT64_MAX : INT32_MAX,
                            amv_topk_input_name(in), keep, &k->input[in]))
        return -1;
    } else if (amvl_tok_is(&t, "rank")) {
      tok kt;
      int64_t r;
      amv_topk_rank *rk;
      if (state == T_INPUTS || state == T_PARAMS) {
        int64_t want;
        if (state == T_PARAMS && topk_check_params(lx, param, params_seen, v->name, k)) return -1;
        for (i = 0; i < AMV_TOPK_NUM_INPUTS; i++)
          if (topk_input_wanted(k, i, &want) && !(inputs_seen & (1u << i)))
            return amvl_fail(lx, "vector %s: input %s missing", v->name, amv_topk_input_name(i));
      } else if (topk_close_rank(lx, v, expects, flags_seen)) {
        return -1;
      }
      if (!amvl_get_tok(&c, lx->le, &kt) || amvl_parse_int(kt.s, kt.n, &r) ||
          amvl_get_tok(&c, lx->le, &t))
        return amvl_fail(lx, "bad rank line (expected 'rank K')");
      if (r < 0 || r >= k->world)
        return amvl_fail(lx, "rank %lld outside [0, dcp_world_size = %d)", (long long)r,
                         (int)k->world);
      for (i = 0; i < k->nranks; i++)
        if (k->ranks[i].rank == r) return amvl_fail(lx, "rank %lld given twice", (long long)r);
      rk = realloc(k->ranks, (size_t)(k->nranks + 1) * sizeof *rk);
      if (!rk) return amvl_fail(lx, "out of memory");
      k->ranks = rk;
      rk = &k->ranks[k->nranks++];
      memset(rk, 0, sizeof *rk);
      rk->rank = (int32_t)r;
      rk->line = lx->line;
      expects = 0;
      flags_seen = 0;
      state = T_RANK;
    } else if (amvl_tok_is(&t, "expect")) {
      tok name, cnt;
      int which;
      int64_t count, want;
      amv_topk_rank *rk = k->nranks > 0 ? &k->ranks[k->nranks - 1] : NULL;
      if (state != T_RANK) return amvl_fail(lx, "'expect' lines belong to a 'rank' block");
      if (amvl_name_and_count(lx, &c, "expect", &name, &cnt)) return -1;
      which = amvl_tok_is(&name, "out") ? 1 : (amvl_tok_is(&name, "valid_count") ? 2 : 0);
      if (!which || (which == 2 && !k->count))
        return amvl_fail(lx, "expect '%.*s': op topk expects 'out'%s", (int)name.n, name.s,
                         k->count ? " and 'valid_count'" : " (and 'valid_count' with count 1)");
      if (expects & (unsigned)which)
        return amvl_fail(lx, "expect %.*s given twice in rank %d", (int)name.n, name.s,
                         (int)rk->rank);
      want = which == 1 ? (int64_t)k->num_tokens * k->topk_count : k->num_tokens;
      if (amvl_parse_int(cnt.s, cnt.n, &count) || count != want)
        return amvl_fail(lx, "expect %.*s: count '%.*s', the sizes make it %lld", (int)name.n,
                         name.s, (int)cnt.n, cnt.s, (long long)want);
      expects |= (unsigned)which;
      if (amvl_parse_values(lx, &c, count, 1, INT32_MIN, INT32_MAX,
                            which == 1 ? "expect out" : "expect valid_count", keep,
                            which == 1 ? &rk->out : &rk->count))
        return -1;
    } else if (amvl_tok_is(&t, "expect_flags")) {
      tok f, mode;
      amv_topk_rank *rk = k->nranks > 0 ? &k->ranks[k->nranks - 1] : NULL;
      if (state != T_RANK || flags_seen)
        return amvl_fail(lx, "'expect_flags' belongs to a 'rank' block, once");
      if (!amvl_get_tok(&c, lx->le, &f) || amvl_parse_hex(&f, &rk->flags) ||
          !amvl_get_tok(&c, lx->le, &mode) || amvl_get_tok(&c, lx->le, &t) ||
          !(amvl_tok_is(&mode, "exact") || amvl_tok_is(&mode, "at_least")))
        return amvl_fail(lx,
                         "bad expect_flags line (expected 'expect_flags 0xFLAGS exact|at_least', "
                         "lower-case hex)");
      rk->flags_exact = amvl_tok_is(&mode, "exact");
      flags_seen = 1;
    } else if (amvl_tok_is(&t, "end")) {
      if (amvl_get_tok(&c, lx->le, &t)) return amvl_fail(lx, "'end' takes nothing after it");
      if (state != T_RANK)
        return amvl_fail(lx, "vector %s ends before its first 'rank' block", v->name);
      return topk_close_rank(lx, v, expects, flags_seen);
    } else {
      return amvl_fail(lx, "unknown keyword '%.*s' in an op topk vector", (int)t.n, t.s);
    }
  }
  return amvl_fail(lx, "the file ends inside vector %s (no 'end' line)", v->name);
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
    if (!p) return amvl_fail(lx, "out of memory");
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
  if (!amvl_next_line(lx)) {
    amvl_fail(lx, "empty file (expected '%s %d')", AMV_MAGIC, AMV_VERSION);
    goto out;
  }
  c = lx->ls;
  {
    tok magic, ver;
    int64_t file_version;
    if (amvl_check_bytes(lx) || !amvl_get_tok(&c, lx->le, &magic) ||
        !amvl_tok_is(&magic, AMV_MAGIC)) {
      amvl_fail(lx, "not a vector file: the first line must be '%s %d'", AMV_MAGIC, AMV_VERSION);
      goto out;
    }
    if (!amvl_get_tok(&c, lx->le, &ver) || amvl_parse_int(ver.s, ver.n, &file_version) ||
        amvl_get_tok(&c, lx->le, &t)) {
      amvl_fail(lx, "bad header: expected '%s %d'", AMV_MAGIC, AMV_VERSION);
      goto out;
    }
    if (file_version < AMV_VERSION_MIN || file_version > AMV_VERSION) {
      amvl_fail(lx, "format version %lld not supported (this reader knows versions %d to %d)",
                (long long)file_version, AMV_VERSION_MIN, AMV_VERSION);
      goto out;
    }
    version = (int)file_version;
  }

  while (amvl_next_line(lx)) {
    if (lx->le == lx->ls || amvl_blank(lx->ls, lx->le) || lx->ls[0] == '#') continue;
    if (amvl_check_bytes(lx)) goto out;
    if (amvl_is_space(lx->ls[0])) {
      amvl_fail(lx, "continuation line outside a value list");
      goto out;
    }
    c = lx->ls;
    amvl_get_tok(&c, lx->le, &t);

    if (amvl_tok_is(&t, "vector")) {
      tok name;
      int dup;
      if (vs.state != S_OUTSIDE) {
        amvl_fail(lx, "vector %s has no 'end' line", cur.name);
        goto out;
      }
      if (!amvl_get_tok(&c, lx->le, &name) || !valid_name(&name) || amvl_get_tok(&c, lx->le, &t)) {
        amvl_fail(lx, "bad vector name (1 to %d characters of A-Z a-z 0-9 _ - .)",
                  AMV_NAME_MAX - 1);
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
        amvl_fail(lx,
                  dup > 0 ? "vector %s: name used twice in this file" : "vector %s: out of memory",
                  cur.name);
        goto out;
      }
      vs.state = S_OP;
      continue;
    }
    if (vs.state == S_OUTSIDE) {
      amvl_fail(lx, "'%.*s' outside a vector (expected 'vector NAME')", (int)t.n, t.s);
      goto out;
    }

    if (amvl_tok_is(&t, "op")) {
      tok op;
      if (vs.state != S_OP) {
        amvl_fail(lx, "'op' must follow the 'vector' line, once");
        goto out;
      }
      if (!amvl_get_tok(&c, lx->le, &op) || amvl_get_tok(&c, lx->le, &t)) {
        amvl_fail(lx, "bad op line (expected 'op step')");
        goto out;
      }
      if (amvl_tok_is(&op, "topk") && version >= AMV_VERSION_TOPK) {
        /* the whole vector, through its 'end' line */
        if (parse_topk(lx, &cur, keep)) goto out;
        vs.state = S_OUTSIDE;
        if (store_vector(lx, only, keep, out, &cur, &have, &cap)) goto out;
        if (keep && only && only != HEADERS) break;
        continue;
      }
      if (amvl_tok_is(&op, "pool") && version >= AMV_VERSION_POOL) {
        /* the whole vector, through its 'end' line (vecfile_pool.c) */
        if (amvl_parse_pool(lx, &cur, keep)) goto out;
        vs.state = S_OUTSIDE;
        if (store_vector(lx, only, keep, out, &cur, &have, &cap)) goto out;
        if (keep && only && only != HEADERS) break;
        continue;
      }
      if (!amvl_tok_is(&op, "step")) {
        amvl_fail(lx, "unknown op '%.*s' (format version %d knows 'step'%s)", (int)op.n, op.s,
                  version,
                  version >= AMV_VERSION_POOL   ? ", 'topk' and 'pool'"
                  : version >= AMV_VERSION_TOPK ? " and 'topk'"
                                                : "");
        goto out;
      }
      vs.state = S_PARAMS;
    } else if (vs.state == S_OP) {
      amvl_fail(lx, "expected 'op step' after 'vector %s'", cur.name);
      goto out;
    } else if (amvl_tok_is(&t, "param")) {
      tok key, val;
      int k;
      if (vs.state != S_PARAMS) {
        amvl_fail(lx, "'param' lines come before 'products'");
        goto out;
      }
      if (!amvl_get_tok(&c, lx->le, &key) || !amvl_get_tok(&c, lx->le, &val) ||
          amvl_get_tok(&c, lx->le, &t)) {
        amvl_fail(lx, "bad param line (expected 'param KEY VALUE')");
        goto out;
      }
      k = find_name(param_names, NPARAMS, &key);
      if (k < 0) {
        if (parse_schema_param(lx, version, &key, &val, vs.schema_seen, &cur)) goto out;
        continue;
      }
      if (k >= NPARAMS_V1 && version < 2) {
        amvl_fail(lx, "param %s is a version-2 param (this file is version %d)", param_names[k],
                  version);
        goto out;
      }
      if (k >= P_INDEXER && version < AMV_VERSION_INDEXER) {
        amvl_fail(lx, "param %s is a version-%d param (this file is version %d)", param_names[k],
                  AMV_VERSION_INDEXER, version);
        goto out;
      }
      if (vs.params_seen & ((uint64_t)1 << k)) {
        amvl_fail(lx, "param %s given twice", param_names[k]);
        goto out;
      }
      if (amvl_parse_int(val.s, val.n, &vs.param[k])) {
        amvl_fail(lx, "param %s: bad value '%.*s'", param_names[k], (int)val.n, val.s);
        goto out;
      }
      vs.params_seen |= (uint64_t)1 << k;
    } else if (amvl_tok_is(&t, "products")) {
      if (vs.state != S_PARAMS) {
        amvl_fail(lx, "'products' must follow the params, once");
        goto out;
      }
      if (check_params(lx, &vs, &cur)) goto out;
      while (amvl_get_tok(&c, lx->le, &t)) {
        const int o = find_output(version < 2 ? AMV_V1_OUTPUTS : amv_num_outputs(), &t);
        if (o == AMV_INDEXER_LENS_OUT && version < AMV_VERSION_INDEXER) {
          amvl_fail(lx,
                    "product indexer_lens_out is a version-%d product (this file is version %d)",
                    AMV_VERSION_INDEXER, version);
          goto out;
        }
        if (o < 0) {
          amvl_fail(lx, "unknown product '%.*s' (format version %d)", (int)t.n, t.s, version);
          goto out;
        }
        if (cur.products & (1u << o)) {
          amvl_fail(lx, "product %s listed twice", amv_output_name(o));
          goto out;
        }
        cur.products |= 1u << o;
      }
      if (!cur.products) {
        amvl_fail(lx, "'products' names no product");
        goto out;
      }
      if (check_dsv4_params(lx, &vs, &cur)) goto out;
      vs.state = S_INPUTS;
    } else if (amvl_tok_is(&t, "input")) {
      tok name, cnt;
      int in, is_table;
      int64_t count, want;
      if (vs.state != S_INPUTS) {
        amvl_fail(lx, "'input' lines come after 'products' and before the first 'rank'");
        goto out;
      }
      if (amvl_name_and_count(lx, &c, "input", &name, &cnt)) goto out;
      in = find_input(&name);
      if (in < 0 || (amv_input_family(in) >= 0 &&
                     !((amv_families(cur.products) >> amv_input_family(in)) & 1))) {
        amvl_fail(lx, in < 0 ? "unknown input '%.*s'" : "input %.*s: none of its products is built",
                  (int)name.n, name.s);
        goto out;
      }
      if (in >= AMV_NUM_INPUTS && version < AMV_VERSION_SCHEMA) {
        amvl_fail(lx, "input %s is a version-%d input (this file is version %d)",
                  amv_input_name(in), AMV_VERSION_SCHEMA, version);
        goto out;
      }
      if (vs.inputs_seen & (1u << in)) {
        amvl_fail(lx, "input %s given twice", amv_input_name(in));
        goto out;
      }
      if (amvl_parse_int(cnt.s, cnt.n, &count) || count < 0) {
        amvl_fail(lx, "input %s: bad count '%.*s'", amv_input_name(in), (int)cnt.n, cnt.s);
        goto out;
      }
      want = input_need(&cur, in, &is_table);
      if (is_table ? count < want || count > AMV_MAX_ELEMS || (want == 0 && count > 0)
                   : count != want) {
        if (is_table)
          amvl_fail(lx, "input %s: %lld elements, the table needs %lld (and at most %lld)",
                    amv_input_name(in), (long long)count, (long long)want,
                    (long long)AMV_MAX_ELEMS);
        else
          amvl_fail(lx, "input %s: count %lld, the sizes make it %lld", amv_input_name(in),
                    (long long)count, (long long)want);
        goto out;
      }
      vs.inputs_seen |= 1u << in;
      if (amvl_parse_values(lx, &c, count, 0, amv_input_is64(in) ? INT64_MIN : INT32_MIN,
                            amv_input_is64(in) ? INT64_MAX : INT32_MAX, amv_input_name(in), keep,
                            &cur.input[in]))
        goto out;
    } else if (amvl_tok_is(&t, "rank")) {
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
            amvl_fail(lx, "vector %s: input %s missing", cur.name, amv_input_name(i));
            goto out;
          }
      } else if (vs.state == S_RANK) {
        if (close_rank(lx, &vs, &cur)) goto out;
      } else {
        amvl_fail(lx, "'rank' comes after the inputs");
        goto out;
      }
      if (!amvl_get_tok(&c, lx->le, &kt) || amvl_parse_int(kt.s, kt.n, &k) ||
          amvl_get_tok(&c, lx->le, &t)) {
        amvl_fail(lx, "bad rank line (expected 'rank K')");
        goto out;
      }
      if (k < 0 || k >= cur.world) {
        amvl_fail(lx, "rank %lld outside [0, dcp_world_size = %d)", (long long)k, (int)cur.world);
        goto out;
      }
      for (i = 0; i < cur.nranks; i++)
        if (cur.ranks[i].rank == k) {
          amvl_fail(lx, "rank %lld given twice", (long long)k);
          goto out;
        }
      rk = realloc(cur.ranks, (size_t)(cur.nranks + 1) * sizeof *rk);
      if (!rk) {
        amvl_fail(lx, "out of memory");
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
    } else if (amvl_tok_is(&t, "expect")) {
      tok name, cnt;
      int o;
      int64_t count;
      char what[96];
      amv_rank *rk = cur.nranks > 0 ? &cur.ranks[cur.nranks - 1] : NULL;
      if (vs.state != S_RANK) {
        amvl_fail(lx, "'expect' lines belong to a 'rank' block");
        goto out;
      }
      if (amvl_name_and_count(lx, &c, "expect", &name, &cnt)) goto out;
      o = find_output(amv_num_outputs(), &name);
      if (o < 0) {
        amvl_fail(lx, "unknown output '%.*s'", (int)name.n, name.s);
        goto out;
      }
      if (!(cur.products & (1u << o))) {
        amvl_fail(lx, "expect %s: not one of the vector's products", amv_output_name(o));
        goto out;
      }
      if (vs.expects_seen & (1u << o)) {
        amvl_fail(lx, "expect %s given twice in rank %d", amv_output_name(o), (int)rk->rank);
        goto out;
      }
      if (amvl_parse_int(cnt.s, cnt.n, &count) || count != expect_count(&cur, o)) {
        amvl_fail(lx, "expect %s: count '%.*s', the sizes make it %lld", amv_output_name(o),
                  (int)cnt.n, cnt.s, (long long)expect_count(&cur, o));
        goto out;
      }
      vs.expects_seen |= 1u << o;
      snprintf(what, sizeof what, "expect %s", amv_output_name(o));
      if (amvl_parse_values(lx, &c, count, 1, amv_output_is64(o) ? INT64_MIN : INT32_MIN,
                            amv_output_is64(o) ? INT64_MAX : INT32_MAX, what, keep, &rk->expect[o]))
        goto out;
    } else if (amvl_tok_is(&t, "expect_flags")) {
      tok f[3], mode;
      int32_t v[3];
      int i;
      amv_rank *rk = cur.nranks > 0 ? &cur.ranks[cur.nranks - 1] : NULL;
      if (vs.state != S_RANK || vs.flags_seen) {
        amvl_fail(lx, "'expect_flags' belongs to a 'rank' block, once");
        goto out;
      }
      for (i = 0; i < 3; i++)
        if (!amvl_get_tok(&c, lx->le, &f[i]) || amvl_parse_hex(&f[i], &v[i])) {
          amvl_fail(lx,
                    "bad expect_flags line (expected 'expect_flags 0xREQUESTS 0xSEQ_LENS 0xSLOTS "
                    "exact|at_least', lower-case hex)");
          goto out;
        }
      if (!amvl_get_tok(&c, lx->le, &mode) || amvl_get_tok(&c, lx->le, &t) ||
          !(amvl_tok_is(&mode, "exact") || amvl_tok_is(&mode, "at_least"))) {
        amvl_fail(lx, "expect_flags: the mode is 'exact' or 'at_least'");
        goto out;
      }
      rk->flags_requests = v[0];
      rk->flags_seq_lens = v[1];
      rk->flags_slots = v[2];
      rk->flags_exact = amvl_tok_is(&mode, "exact");
      vs.flags_seen = 1;
    } else if (amvl_tok_is(&t, "expect_flags_dsv4")) {
      tok f;
      int i;
      amv_rank *rk = cur.nranks > 0 ? &cur.ranks[cur.nranks - 1] : NULL;
      if (vs.state != S_RANK || vs.dsv4_flags_seen || !amv_families(cur.products)) {
        amvl_fail(lx,
                  "'expect_flags_dsv4' belongs to a 'rank' block of a vector with version-2 "
                  "products, once");
        goto out;
      }
      for (i = 0; i < AMV_NUM_FAMILIES + 1; i++)
        if (!amvl_get_tok(&c, lx->le, &f) || amvl_parse_hex(&f, &rk->flags_dsv4[i])) {
          amvl_fail(lx,
                    "bad expect_flags_dsv4 line (expected 7 lower-case hex masks: groups 0 to 3, "
                    "SWA lengths, SWA rows, C128A rows)");
          goto out;
        }
      if (amvl_get_tok(&c, lx->le, &t)) {
        amvl_fail(lx, "expect_flags_dsv4 takes 7 masks");
        goto out;
      }
      vs.dsv4_flags_seen = 1;
    } else if (amvl_tok_is(&t, "end")) {
      if (amvl_get_tok(&c, lx->le, &t)) {
        amvl_fail(lx, "'end' takes nothing after it");
        goto out;
      }
      if (vs.state != S_RANK) {
        amvl_fail(lx, "vector %s ends before its first 'rank' block", cur.name);
        goto out;
      }
      if (close_rank(lx, &vs, &cur)) goto out;
      vs.state = S_OUTSIDE;
      if (store_vector(lx, only, keep, out, &cur, &have, &cap)) goto out;
      if (keep && only && only != HEADERS) break; /* names are unique: the rest is not needed */
    } else {
      amvl_fail(lx, "unknown keyword '%.*s'", (int)t.n, t.s);
      goto out;
    }
  }
  if (vs.state != S_OUTSIDE) {
    amvl_fail(lx, "the file ends inside vector %s (no 'end' line)", cur.name);
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
