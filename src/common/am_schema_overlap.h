// SPDX-License-Identifier: Apache-2.0
/*
 * The overlap check's buffer list (am_overlap.h) walked from the schema
 * (am_schema.h). A walker expands a struct's field list with its own X
 * that calls AM_OVERLAP_ADD_##role(name, member, products, extent), with
 * in scope: `list` and `n` (am_extent_add's), `b` (the struct holding the
 * member), `k` (an am_counts of its counts) and `wanted` (the bits of the
 * products wanted). Each output the caller set is added, and each input a
 * wanted product reads, with exactly the bytes its extent covers.
 */
#ifndef ATTNMETA_AM_SCHEMA_OVERLAP_H
#define ATTNMETA_AM_SCHEMA_OVERLAP_H

#include <stdint.h>

#include "am_overlap.h"
#include "am_schema_wanted.h"

/* The counts that extents are made of. */
typedef struct am_counts {
  int64_t R, R1, T, C, P, ONE;
} am_counts;

/* The elements one table of `rows` rows covers (saturated at INT64_MAX;
 * 0 for no rows). */
static inline int64_t am_group_span(int64_t rows, int64_t cols, int64_t stride) {
  if (rows <= 0 || cols <= 0) return 0;
  if (stride > 0 && rows - 1 > (INT64_MAX - cols) / stride) return INT64_MAX;
  return (rows - 1) * stride + cols;
}

/* A buffer's rows, columns and stride from its declared extent: a grouped
 * table of G >= 2 is G rows of one group's span, the group stride apart. */
#define AM_ARRAY(n) 1, k->n, k->n
#define AM_TABLE(n, cols, stride) k->n, b->cols, b->stride
#define AM_GTABLE(n, cols, stride, groups, gstride)                     \
  b->groups > 1 ? (int64_t)b->groups : k->n,                            \
      b->groups > 1 ? am_group_span(k->n, b->cols, b->stride) : b->cols, \
      b->groups > 1 ? b->gstride : b->stride

/* The extent comes last, as it expands to three arguments. */
#define AM_OVERLAP_ADD_IN(name, member, products, ...) \
  if ((products) & wanted)                              \
    am_extent_add(list, n, name, b->member, __VA_ARGS__, (int64_t)sizeof *b->member, 0);
#define AM_OVERLAP_ADD_OUT(name, member, products, ...) \
  am_extent_add(list, n, name, b->member, __VA_ARGS__, (int64_t)sizeof *b->member, 1);
#define AM_OVERLAP_ADD_PARAM(name, member, products, ...)

#endif /* ATTNMETA_AM_SCHEMA_OVERLAP_H */
