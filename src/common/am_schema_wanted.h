// SPDX-License-Identifier: Apache-2.0
/*
 * Which products of the schema (am_schema.h) an operation wants, from the
 * outputs the caller set, and which products read each input of the step.
 * Shared by the host checks, the overlap check and the step's translation.
 * Valid C11 and C++.
 */
#ifndef ATTNMETA_AM_SCHEMA_WANTED_H
#define ATTNMETA_AM_SCHEMA_WANTED_H

#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert /* am_schema.h's assertions, read as C++ */
#endif
#include "am_schema.h"

/* `| bit` for each product whose condition holds of `b`. */
#define AM_WANTED_(c, name, wanted) | ((wanted) ? AM_P(name) : 0u)

/* The bits of the products wanted (and AM_P_ALWAYS). */
static inline unsigned am_group_products(const attnmeta_compressed_group *b) {
  return AM_P_ALWAYS AM_GROUP_PRODUCTS(AM_WANTED_, _);
}
static inline unsigned am_step_products(const attnmeta_step *b) {
  unsigned p = AM_P_ALWAYS AM_STEP_PRODUCTS(AM_WANTED_, _);
  int g;
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g)
    p |= am_group_products(&b->compressed_groups[g]);
  return p;
}
static inline unsigned am_topk_products(const attnmeta_topk *b) {
  return AM_P_ALWAYS AM_TOPK_PRODUCTS(AM_WANTED_, _);
}
static inline unsigned am_pool_products(const attnmeta_pool *b) {
  return AM_P_ALWAYS AM_POOL_PRODUCTS(AM_WANTED_, _);
}

/* am_step_reads_<input>(): the products that read that input of the step. */
#define AM_STEP_READS_(c, type, member, role, extent, products, rule) AM_STEP_READS_##role(member, products)
#define AM_STEP_READS_IN(member, products) \
  static inline unsigned am_step_reads_##member(void) { return products; }
#define AM_STEP_READS_OUT(member, products)
#define AM_STEP_READS_PARAM(member, products)
#define AM_STEP_READS_GROUPS(member, products)
AM_STEP_FIELDS(AM_STEP_READS_, _)
#undef AM_STEP_READS_IN
#undef AM_STEP_READS_OUT
#undef AM_STEP_READS_PARAM
#undef AM_STEP_READS_GROUPS
#undef AM_STEP_READS_

#endif /* ATTNMETA_AM_SCHEMA_WANTED_H */
