// SPDX-License-Identifier: Apache-2.0
/*
 * The per-member host checks walked from the schema (am_schema.h). A walker
 * expands a struct's field list with its own X that calls
 * AM_CHECK_##role(member, products, rule, AM_CHECK_##extent), with in scope:
 * `sc` (an am_check_scope), `b` (the struct holding the member), `k` (an
 * am_counts of its counts) and `st` (an attnmeta_status); a failed check
 * returns its status from the walker.
 *
 * A buffer is in use when the caller set it (an output), when a wanted
 * product reads it (an input) or when its rule is "required". One in use
 * is checked for its extent (columns >= 0, stride >= columns, rows x stride
 * addressable with 64-bit byte offsets), for being there (unless its rule
 * makes it optional, or it covers nothing: the scope says what counts) and
 * for the alignment of its type. AM_CHECK_FLOOR_PARAM checks the settings
 * whose rule is a plain floor (">= 0", ">= 1").
 */
#ifndef ATTNMETA_AM_SCHEMA_CHECK_H
#define ATTNMETA_AM_SCHEMA_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "am_context.h"
#include "am_schema_overlap.h"

typedef struct am_check_scope {
  attnmeta_context *ctx;
  const char *prefix; /* before each member's name in messages ("topk.") */
  unsigned wanted;    /* the bits of the products wanted */
  /* 1: any buffer of no elements may be NULL, and every non-NULL pointer
   * is checked for alignment, in use or not; 0: only a table of no columns
   * may be NULL, and only the buffers in use are checked */
  int lenient_empty;
} am_check_scope;

/* A buffer's rows, columns and stride from its declared extent, then the
 * names of its columns' and stride's members (NULL for an array). */
#define AM_CHECK_AM_ARRAY(n) 1, k->n, k->n, NULL, NULL, 1, 0, NULL
#define AM_CHECK_AM_TABLE(n, cols, stride) k->n, b->cols, b->stride, #cols, #stride, 1, 0, NULL
/* ... then the groups, their stride and its member's name */
#define AM_CHECK_AM_GTABLE(n, cols, stride, groups, gstride) \
  k->n, b->cols, b->stride, #cols, #stride, (int64_t)b->groups, b->gstride, #gstride
#define AM_CHECK_AM_NONE

static inline int am_misaligned(const void *ptr, size_t align) {
  return ptr && ((uintptr_t)ptr % align) != 0;
}

/* rows x stride int32 elements addressable with 64-bit byte offsets? */
static inline int am_rows_overflow(int64_t rows, int64_t stride) {
  return rows > 0 && stride > (INT64_MAX / 8) / rows;
}

/* Rules that let a buffer be NULL however it is used (the operation's own
 * rules say what its absence means). */
#define AM_RULE_STARTS_(rule, lit) (__builtin_strncmp((rule), (lit), sizeof(lit) - 1) == 0)
#define AM_RULE_OPTIONAL(rule) (AM_RULE_STARTS_(rule, "optional") || AM_RULE_STARTS_(rule, "exactly one"))
#define AM_RULE_REQUIRED(rule) (__builtin_strcmp((rule), "required") == 0)

/* With groups >= 2 (of a grouped table whose rows were checked): the
 * group stride covers one group's elements, and all groups are addressable
 * with 64-bit byte offsets. */
static inline attnmeta_status am_check_groups(const am_check_scope *sc, const char *name,
                                              int64_t rows, int64_t cols, int64_t stride,
                                              int64_t groups, int64_t gstride,
                                              const char *gstride_name) {
  const int64_t span = am_group_span(rows, cols, stride);
  if (gstride < span)
    return am_fail(sc->ctx, ATTNMETA_ERR_STRIDE,
                   "%s%s (%lld) < the %lld elements of one group of %s%s (%lld rows)", sc->prefix,
                   gstride_name, (long long)gstride, (long long)span, sc->prefix, name,
                   (long long)rows);
  if (am_rows_overflow(groups, gstride))
    return am_fail(sc->ctx, ATTNMETA_ERR_OVERFLOW,
                   "%s%s of %lld groups x %s %lld overflows 64-bit byte offsets", sc->prefix, name,
                   (long long)groups, gstride_name, (long long)gstride);
  return ATTNMETA_OK;
}

static inline attnmeta_status am_check_buffer(const am_check_scope *sc, const char *name,
                                              const void *ptr, size_t elem_size, int is_out,
                                              unsigned products, int required, int optional,
                                              int64_t rows, int64_t cols, int64_t stride,
                                              const char *cols_name, const char *stride_name,
                                              int64_t groups, int64_t gstride,
                                              const char *gstride_name) {
  const char *pre = sc->prefix;
  const int in_use = required || (is_out ? ptr != NULL : (products & sc->wanted) != 0);
  const int empty = (cols_name && cols == 0) || (sc->lenient_empty && (rows == 0 || cols == 0));
  if (!in_use && !sc->lenient_empty) return ATTNMETA_OK;
  if (in_use && cols_name) {
    if (cols < 0)
      return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "%s%s (%lld) is negative", pre,
                     cols_name, (long long)cols);
    if (stride < cols)
      return am_fail(sc->ctx, ATTNMETA_ERR_STRIDE, "%s%s (%lld) < %s (%lld)", pre, stride_name,
                     (long long)stride, cols_name, (long long)cols);
  }
  if (in_use && !ptr && !empty && (required || (!is_out && !optional))) {
    if (required) return am_fail(sc->ctx, ATTNMETA_ERR_NULL_POINTER, "%s%s is NULL", pre, name);
    if (cols_name)
      return am_fail(sc->ctx, ATTNMETA_ERR_NULL_POINTER, "%s%s is NULL but has %lld rows of %lld columns",
                     pre, name, (long long)rows, (long long)cols);
    return am_fail(sc->ctx, ATTNMETA_ERR_NULL_POINTER, "%s%s is NULL but a wanted product reads it",
                   pre, name);
  }
  if (in_use && am_rows_overflow(rows, stride))
    return am_fail(sc->ctx, ATTNMETA_ERR_OVERFLOW,
                   "%s%s of %lld rows x stride %lld overflows 64-bit byte offsets", pre, name,
                   (long long)rows, (long long)stride);
  if (in_use && groups > 1) {
    const attnmeta_status st = am_check_groups(sc, name, rows, cols, stride, groups, gstride,
                                               gstride_name);
    if (st != ATTNMETA_OK) return st;
  }
  if (am_misaligned(ptr, elem_size))
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "%s%s (%p) is not %d-byte aligned", pre,
                   name, ptr, (int)elem_size);
  return ATTNMETA_OK;
}

/* The rule is a literal here, so its two tests fold to constants at each
 * member (the compilers fold the builtins on literals): no string compare
 * at run time. */
#define AM_CHECK_BUFFER_(member, is_out, products, rule, ...)                                  \
  st = am_check_buffer(sc, #member, b->member, sizeof *b->member, is_out, products,           \
                       AM_RULE_REQUIRED(rule), AM_RULE_OPTIONAL(rule), __VA_ARGS__);          \
  if (st != ATTNMETA_OK) return st;
#define AM_CHECK_IN(member, products, rule, ...) AM_CHECK_BUFFER_(member, 0, products, rule, __VA_ARGS__)
#define AM_CHECK_OUT(member, products, rule, ...) AM_CHECK_BUFFER_(member, 1, products, rule, __VA_ARGS__)
#define AM_CHECK_PARAM(member, products, rule, ...)

/* A setting whose rule is exactly ">= n" (n one digit) is at least n. */
static inline attnmeta_status am_check_floor(const am_check_scope *sc, const char *name,
                                             int64_t value, const char *rule) {
  const int floor_rule = rule[0] == '>' && rule[1] == '=' && rule[2] == ' ' && rule[3] >= '0' &&
                         rule[3] <= '9' && rule[4] == '\0';
  if (floor_rule && value < rule[3] - '0')
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "%s%s (%lld) must be %s", sc->prefix,
                   name, (long long)value, rule);
  return ATTNMETA_OK;
}

#define AM_CHECK_FLOOR_IN(member, rule)
#define AM_CHECK_FLOOR_OUT(member, rule)
#define AM_CHECK_FLOOR_PARAM(member, rule)                                  \
  st = am_check_floor(sc, #member, (int64_t)b->member, rule);               \
  if (st != ATTNMETA_OK) return st;

/* launch_flags (attnmeta_step, attnmeta_topk): only ATTNMETA_LAUNCH_* bits. */
static inline attnmeta_status am_check_launch_flags(const am_check_scope *sc, uint32_t flags) {
  if (flags & ~(uint32_t)ATTNMETA_LAUNCH_EARLY_START)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "%slaunch_flags (0x%x) has bits no ATTNMETA_LAUNCH_* flag defines", sc->prefix,
                   (unsigned)flags);
  return ATTNMETA_OK;
}

/* ---- the settings' rules (AM_STEP_RULES, AM_GROUP_RULES of am_schema.h) ----
 * A walker expands a rule list with AM_CHECK_RULE, with in scope `sc`, `b`
 * (the struct), `s` (the step) and `st`; the first broken rule returns. */
static inline attnmeta_status am_rule_fail(const am_check_scope *sc, const char *name,
                                           int64_t value, const char *what) {
  return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "%s%s (%lld) %s", sc->prefix, name,
                 (long long)value, what);
}
static inline attnmeta_status am_rule_min(const am_check_scope *sc, const char *name,
                                          int64_t value, int64_t floor, const char *what) {
  return value >= floor ? ATTNMETA_OK : am_rule_fail(sc, name, value, what);
}
static inline attnmeta_status am_rule_at_least(const am_check_scope *sc, const char *name,
                                               int64_t value, const char *other_name,
                                               int64_t other) {
  if (value >= other) return ATTNMETA_OK;
  return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "%s%s (%lld) < %s%s (%lld)", sc->prefix,
                 name, (long long)value, sc->prefix, other_name, (long long)other);
}
static inline attnmeta_status am_rule_in_range(const am_check_scope *sc, const char *name,
                                               int64_t value, int64_t lo, const char *hi_name,
                                               int64_t hi) {
  if (value >= lo && value <= hi) return ATTNMETA_OK;
  return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "%s%s (%lld) must be in [%lld, %s = %lld]",
                 sc->prefix, name, (long long)value, (long long)lo, hi_name, (long long)hi);
}
/* A block size of a DCP-placed product: >= 1, and a multiple of the
 * interleave when W > 1 (so each rank owns whole runs of a block). */
static inline attnmeta_status am_rule_dcp_block(const am_check_scope *sc, const char *name,
                                                int64_t value, const attnmeta_step *s) {
  if (value < 1) return am_rule_fail(sc, name, value, "must be >= 1");
  if (s->dcp_world_size > 1 && value % s->dcp_interleave != 0)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "%s%s (%lld) must be a multiple of dcp_interleave (%d) when dcp_world_size > 1",
                   sc->prefix, name, (long long)value, s->dcp_interleave);
  return ATTNMETA_OK;
}

#define AM_RULE_MIN(m, n) am_rule_min(sc, #m, (int64_t)b->m, n, "must be >= " #n)
#define AM_RULE_NOT_NEGATIVE(m) am_rule_min(sc, #m, (int64_t)b->m, 0, "is negative")
#define AM_RULE_AT_LEAST(m, o) am_rule_at_least(sc, #m, (int64_t)b->m, #o, (int64_t)b->o)
#define AM_RULE_IN_RANGE(m, lo, hi) am_rule_in_range(sc, #m, (int64_t)b->m, lo, #hi, (int64_t)b->hi)
#define AM_RULE_ONE_OF2(m, x, y) \
  (b->m == (x) || b->m == (y) ? ATTNMETA_OK                                     \
                              : am_rule_fail(sc, #m, b->m, "is neither " #x " nor " #y))
#define AM_RULE_ONE_OF3(m, x, y, z)                        \
  (b->m == (x) || b->m == (y) || b->m == (z)               \
       ? ATTNMETA_OK                                       \
       : am_rule_fail(sc, #m, b->m, "is none of " #x ", " #y " and " #z))
#define AM_RULE_DCP_BLOCK(m) am_rule_dcp_block(sc, #m, (int64_t)b->m, s)
#define AM_RULE_PRESENT(m, o)                                                         \
  (b->m ? ATTNMETA_OK                                                                 \
        : am_fail(sc->ctx, ATTNMETA_ERR_NULL_POINTER, "%s" #m " is NULL but " #o " is set", \
                  sc->prefix))
#define AM_RULE_HOLDS(ok, ...) \
  ((ok) ? ATTNMETA_OK : am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT, __VA_ARGS__))

#define AM_CHECK_RULE(c, products, when, kind, ...) \
  if (((products) & sc->wanted) && (when)) {         \
    st = AM_RULE_##kind(__VA_ARGS__);                \
    if (st != ATTNMETA_OK) return st;                \
  }

#endif /* ATTNMETA_AM_SCHEMA_CHECK_H */
