// SPDX-License-Identifier: Apache-2.0
/* The operations' members walked from the schema. See vecschema.h. */
#include "vecschema.h"

#include <string.h>

#include "am_pool_counts.h"
#include "am_schema.h"
#include "attnmeta/conformance/vecfile.h"
#include "attnmeta/conformance/vecfile_pool.h"
#include "attnmeta/conformance/vecfile_topk.h"

/* A member's size by its role: a buffer's is one element's. */
#define AMVS_SIZE_PARAM(type) sizeof(type)
#define AMVS_SIZE_IN(type) sizeof(*(type)0)
#define AMVS_SIZE_OUT(type) sizeof(*(type)0)
/* rows, cols, stride of an extent */
#define AMVS_EXT_AM_NONE AMVS_ROWS_NONE, NULL, NULL, NULL, NULL
#define AMVS_EXT_AM_ARRAY(n) AMVS_ROWS_##n, NULL, NULL, NULL, NULL
#define AMVS_EXT_AM_TABLE(n, cols, stride) AMVS_ROWS_##n, #cols, #stride, NULL, NULL
/* a grouped table: one group's rows, and the group count and stride */
#define AMVS_EXT_AM_GTABLE(n, cols, stride, groups, gstride) \
  AMVS_ROWS_##n, #cols, #stride, #groups, #gstride

#define AMVS_ENTRY_(name, member, group, role, offset, type, extent, products, rule)               \
  {name, #member, group, AMVS_##role, offset, AMVS_SIZE_##role(type), AMVS_EXT_##extent, products, \
   rule},

/* A member of the operation's struct S; the compressed groups, member by
 * member, each in every group. */
#define AMVS_ROW_(S, type, member, role, extent, products, rule)                                   \
  AMVS_ROW_##role(S, type, member, role, extent, products, rule)
#define AMVS_ROW_PARAM(S, type, member, role, extent, products, rule)                              \
  AMVS_ENTRY_(#member, member, -1, role, offsetof(S, member), type, extent, products, rule)
#define AMVS_ROW_IN AMVS_ROW_PARAM
#define AMVS_ROW_OUT AMVS_ROW_PARAM
#define AMVS_ROW_GROUPS(S, type, member, role, extent, products, rule)                             \
  AM_GROUP_FIELDS(AMVS_GROUP_FIELD_, _)

#define AMVS_UNPACK(...) __VA_ARGS__
#define AMVS_APPLY(m, ...) m(__VA_ARGS__)
#define AMVS_GROUP_FIELD_(c, type, member, role, extent, products, rule)                           \
  AM_EACH_GROUP(AMVS_GROUP_ROW_, (type, member, role, extent, products, rule))
#define AMVS_GROUP_ROW_(field, g) AMVS_APPLY(AMVS_GROUP_ENTRY_, g, AMVS_UNPACK field)
#define AMVS_GROUP_ENTRY_(g, type, member, role, extent, products, rule)                           \
  AMVS_ENTRY_("group" #g "." #member, member, g, role,                                             \
              offsetof(attnmeta_step, compressed_groups) +                                         \
                  (size_t)(g) * sizeof(attnmeta_compressed_group) +                                \
                  offsetof(attnmeta_compressed_group, member),                                     \
              type, extent, products, rule)

static const amvs_member step_members[] = {AM_STEP_FIELDS(AMVS_ROW_, attnmeta_step)};
static const amvs_member topk_members[] = {AM_TOPK_FIELDS(AMVS_ROW_, attnmeta_topk)};
static const amvs_member pool_members[] = {AM_POOL_FIELDS(AMVS_ROW_, attnmeta_pool)};
const amvs_table amvs_step = {step_members, (int)(sizeof step_members / sizeof step_members[0])};
const amvs_table amvs_topk = {topk_members, (int)(sizeof topk_members / sizeof topk_members[0])};
const amvs_table amvs_pool = {pool_members, (int)(sizeof pool_members / sizeof pool_members[0])};

/* The outputs: OUT members but the error word (read whenever the step runs). */
#define AMVS_IS_OUT_PARAM 0
#define AMVS_IS_OUT_IN 0
#define AMVS_IS_OUT_OUT 1
#define AMVS_IS_OUT_GROUPS 0
#define AMVS_IS_IN_PARAM 0
#define AMVS_IS_IN_IN 1
#define AMVS_IS_IN_OUT 0
#define AMVS_IS_IN_GROUPS 0
#define AMVS_COUNT_OUT_(c, type, member, role, extent, products, rule)                             \
  +(c) * (AMVS_IS_OUT_##role && (products) != AM_P_ALWAYS)
#define AMVS_COUNT_IN_(c, type, member, role, extent, products, rule) +(c) * AMVS_IS_IN_##role
enum {
  STEP_OUTPUTS = 0 AM_STEP_FIELDS(AMVS_COUNT_OUT_, 1) AM_GROUP_FIELDS(AMVS_COUNT_OUT_, AMV_GROUPS),
  STEP_INPUTS = 0 AM_STEP_FIELDS(AMVS_COUNT_IN_, 1) AM_GROUP_FIELDS(AMVS_COUNT_IN_, AMV_GROUPS)
};
enum { TOPK_INPUTS = 0 AM_TOPK_FIELDS(AMVS_COUNT_IN_, 1) };
enum { POOL_INPUTS = 0 AM_POOL_FIELDS(AMVS_COUNT_IN_, 1),
       POOL_OUTPUTS = 0 AM_POOL_FIELDS(AMVS_COUNT_OUT_, 1) };
_Static_assert((int)POOL_INPUTS <= AMV_POOL_MAX_INPUTS && (int)POOL_OUTPUTS <= AMV_POOL_MAX_OUTPUTS,
               "amv_pool holds every input and output");
_Static_assert(sizeof pool_members / sizeof pool_members[0] <= AMVS_MAX_MEMBERS,
               "a table of at most AMVS_MAX_MEMBERS members");
_Static_assert((int)TOPK_INPUTS == (int)AMV_TOPK_NUM_INPUTS, "amv_topk.input holds every input");
_Static_assert((int)STEP_OUTPUTS <= AMV_MAX_OUTPUTS, "amv_rank.expect holds every output");
_Static_assert((int)AMV_NUM_OUTPUTS <= (int)STEP_OUTPUTS &&
                   (int)AMV_NUM_INPUTS <= (int)STEP_INPUTS,
               "vecfile.h names no output or input the schema lacks");
_Static_assert((int)STEP_INPUTS <= AMV_MAX_INPUTS, "amv_vector.input holds every input");
_Static_assert(AMV_GROUPS == ATTNMETA_MAX_COMPRESSED_GROUPS, "a family per compressed group");

static int is_output(const amvs_member *m) {
  return m->role == AMVS_OUT && m->products != AM_P_ALWAYS;
}
static int is_input(const amvs_member *m) { return m->role == AMVS_IN; }

static const amvs_member *nth(const amvs_table *t, int (*pick)(const amvs_member *), int i) {
  int k;
  if (i < 0) return NULL;
  for (k = 0; k < t->n; k++)
    if (pick(&t->m[k]) && i-- == 0) return &t->m[k];
  return NULL;
}

const amvs_member *amvs_step_output(int o) { return nth(&amvs_step, is_output, o); }
const amvs_member *amvs_step_input(int i) { return nth(&amvs_step, is_input, i); }
const amvs_member *amvs_topk_input(int i) { return nth(&amvs_topk, is_input, i); }
int amvs_step_num_outputs(void) { return STEP_OUTPUTS; }
int amvs_step_num_inputs(void) { return STEP_INPUTS; }

const amvs_member *amvs_find(const amvs_table *t, const char *name) {
  int k;
  for (k = 0; k < t->n; k++)
    if (strcmp(t->m[k].name, name) == 0) return &t->m[k];
  return NULL;
}

const amvs_member *amvs_find_param(const amvs_table *t, const char *name) {
  const amvs_member *m = amvs_find(t, name);
  return m && m->role == AMVS_PARAM ? m : NULL;
}

/* The index among those `pick` takes of the one named name[0, len), -1. */
static int index_of(int (*pick)(const amvs_member *), const char *name, size_t len) {
  int k, i = 0;
  for (k = 0; k < amvs_step.n; k++) {
    const amvs_member *m = &step_members[k];
    if (!pick(m)) continue;
    if (strlen(m->name) == len && memcmp(m->name, name, len) == 0) return i;
    i++;
  }
  return -1;
}

int amvs_step_output_named(const char *name, size_t len) { return index_of(is_output, name, len); }
int amvs_step_input_named(const char *name, size_t len) { return index_of(is_input, name, len); }

int64_t amvs_load(const void *p, size_t size) {
  if (size == 8) {
    int64_t v;
    memcpy(&v, p, 8);
    return v;
  } else {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
  }
}

void amvs_store(void *p, size_t size, int64_t value) {
  if (size == 8) {
    memcpy(p, &value, 8);
  } else {
    const int32_t v = (int32_t)value;
    memcpy(p, &v, 4);
  }
}

int64_t amvs_get(const void *base, const amvs_member *m) {
  return amvs_load((const unsigned char *)base + m->offset, m->size);
}

void amvs_set(void *base, const amvs_member *m, int64_t value) {
  amvs_store((unsigned char *)base + m->offset, m->size, value);
}

void *amvs_slot(void *base, const amvs_member *m) { return (unsigned char *)base + m->offset; }

/* The value of the PARAM `member` of m's struct (its group's for a group's). */
static int64_t sibling(const amvs_table *t, const void *base, const amvs_member *m,
                       const char *member) {
  int k;
  for (k = 0; k < t->n; k++)
    if (t->m[k].group == m->group && strcmp(t->m[k].member, member) == 0)
      return amvs_get(base, &t->m[k]);
  return 0;
}

void amvs_extent(const amvs_table *t, const void *base, const amvs_member *m, int64_t *rows,
                 int64_t *cols, int64_t *stride) {
  const amvs_member top = {NULL, NULL, -1, AMVS_PARAM, 0, 0, AMVS_ROWS_NONE,
                           NULL, NULL, NULL, NULL, 0, ""};
  switch (m->rows) {
    case AMVS_ROWS_R: *rows = sibling(t, base, &top, "num_reqs"); break;
    case AMVS_ROWS_R1: *rows = sibling(t, base, &top, "num_reqs") + 1; break;
    case AMVS_ROWS_T: *rows = sibling(t, base, &top, "num_tokens"); break;
    case AMVS_ROWS_C: *rows = sibling(t, base, &top, "capacity"); break;
    case AMVS_ROWS_P: *rows = sibling(t, base, &top, "num_prefill"); break;
    case AMVS_ROWS_ONE: *rows = 1; break;
    default: *rows = 0;
  }
  *cols = m->cols ? sibling(t, base, m, m->cols) : 1;
  *stride = m->stride ? sibling(t, base, m, m->stride) : 1;
}

void amvs_groups(const amvs_table *t, const void *base, const amvs_member *m, int64_t *groups,
                 int64_t *gstride) {
  const int64_t g = m->groups ? sibling(t, base, m, m->groups) : 1;
  *groups = g > 1 ? g : 1;
  *gstride = *groups > 1 ? sibling(t, base, m, m->gstride) : 0;
}

int amvs_schema_param(const amvs_member *m) {
  return m->role == AMVS_PARAM && m->products != 0;
}

int amvs_schema_input(const amvs_member *m) {
  int i;
  for (i = AMV_NUM_INPUTS; i < STEP_INPUTS; i++)
    if (amvs_step_input(i) == m) return 1;
  return 0;
}
_Static_assert(AMVS_MAX_INPUTS == AMV_MAX_INPUTS, "one bound on the inputs");

int amvs_optional(const amvs_member *m) {
  return m->role == AMVS_IN && strncmp(m->rule, "optional", 8) == 0;
}

int amvs_family(const amvs_member *m) {
  if (m->group >= 0) return m->group;
  if (strncmp(m->name, "swa_", 4) == 0) return AMV_FAMILY_SWA;
  if (strncmp(m->name, "c128a_", 6) == 0) return AMV_FAMILY_C128A;
  if (strncmp(m->name, "indexer_", 8) == 0) return AMV_FAMILY_INDEXER;
  return -1;
}

unsigned amvs_step_products(unsigned outputs) {
  unsigned p = 0;
  int o;
  for (o = 0; o < STEP_OUTPUTS; o++)
    if (outputs & (1u << o)) p |= amvs_step_output(o)->products;
  return p;
}

void amvs_copy_params(const amvs_table *t, void *dst, const void *src, unsigned families) {
  int k;
  for (k = 0; k < t->n; k++) {
    const amvs_member *m = &t->m[k];
    const int f = amvs_family(m);
    if (m->role != AMVS_PARAM || strcmp(m->member, "struct_size") == 0) continue;
    if (f < 0 || ((families >> f) & 1)) amvs_set(dst, m, amvs_get(src, m));
  }
}

/* ---- the pool operation ---- */

const amvs_member *amvs_pool_input(int i) { return nth(&amvs_pool, is_input, i); }
const amvs_member *amvs_pool_output(int o) { return nth(&amvs_pool, is_output, o); }
int amvs_pool_num_inputs(void) { return POOL_INPUTS; }
int amvs_pool_num_outputs(void) { return POOL_OUTPUTS; }

static int pool_index_of(int (*pick)(const amvs_member *), const char *name, size_t len) {
  int k, i = 0;
  for (k = 0; k < amvs_pool.n; k++) {
    const amvs_member *m = &pool_members[k];
    if (!pick(m)) continue;
    if (strlen(m->name) == len && memcmp(m->name, name, len) == 0) return i;
    i++;
  }
  return -1;
}

int amvs_pool_input_named(const char *name, size_t len) { return pool_index_of(is_input, name, len); }
int amvs_pool_output_named(const char *name, size_t len) {
  return pool_index_of(is_output, name, len);
}

int amvs_pool_format_param(const amvs_member *m) {
  return m->role == AMVS_PARAM && strcmp(m->member, "struct_size") != 0 &&
         strncmp(m->rule, "padding", 7) != 0;
}

void amvs_pool_extent(const attnmeta_pool *op, int query_lens, const amvs_member *m, int64_t *rows,
                      int64_t *cols, int64_t *stride) {
  const am_pool_counts k = am_pool_counts_of(op, query_lens);
  switch (m->rows) {
    case AMVS_ROWS_R: *rows = k.R; break;
    case AMVS_ROWS_R1: *rows = k.R1; break;
    case AMVS_ROWS_T: *rows = k.T; break;
    case AMVS_ROWS_T1: *rows = k.T1; break;
    case AMVS_ROWS_C: *rows = k.C; break;
    case AMVS_ROWS_P: *rows = k.P; break;
    case AMVS_ROWS_ONE: *rows = k.ONE; break;
    case AMVS_ROWS_S: *rows = k.S; break;
    case AMVS_ROWS_DK: *rows = k.DK; break;
    case AMVS_ROWS_DP: *rows = k.DP; break;
    default: *rows = 0;
  }
  *cols = m->cols ? sibling(&amvs_pool, op, m, m->cols) : 1;
  *stride = m->stride ? sibling(&amvs_pool, op, m, m->stride) : 1;
}
