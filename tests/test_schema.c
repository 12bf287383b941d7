// SPDX-License-Identifier: Apache-2.0
/*
 * The schema (src/common/am_schema.h) against the public header: each
 * declared member has the header's type (checked at compile time); the
 * declared members follow one another in the header's order, each at the
 * first offset its alignment allows after the one before, and the last
 * ends where the struct's own alignment ends it: the declared sizes and
 * the padding they imply make up the whole struct, so no member of the
 * header is left undeclared.
 */
#include <criterion/criterion.h>
#include <stddef.h>

#include "am_schema.h"
#include "am_step_params.h"

/* The member has exactly the declared type. */
#define TYPE_OF_(st, type, member)                                                   \
  _Static_assert(_Generic(&((st *)0)->member, type *: 1, default: 0),                \
                 #st "." #member " has the declared type");
#define STEP_TYPE_(c, type, member, role, extent, products, rule) \
  TYPE_OF_(attnmeta_step, type, member)
#define GROUP_TYPE_(c, type, member, role, extent, products, rule) \
  TYPE_OF_(attnmeta_compressed_group, type, member)
#define TOPK_TYPE_(c, type, member, role, extent, products, rule) \
  TYPE_OF_(attnmeta_topk, type, member)
AM_STEP_FIELDS(STEP_TYPE_, _)
AM_GROUP_FIELDS(GROUP_TYPE_, _)
AM_TOPK_FIELDS(TOPK_TYPE_, _)
#define POOL_TYPE_(c, type, member, role, extent, products, rule) \
  TYPE_OF_(attnmeta_pool, type, member)
AM_POOL_FIELDS(POOL_TYPE_, _)

typedef struct member_place {
  const char *name;
  size_t offset, size, align;
} member_place;

#define PLACE_(st, type, member, role, extent, products, rule) \
  {#member, offsetof(st, member), sizeof(type), _Alignof(type)},

static size_t align_up(size_t n, size_t align) { return (n + align - 1) / align * align; }

static void expect_packed(const char *what, const member_place *m, size_t n, size_t struct_size,
                          size_t struct_align) {
  size_t i, end = 0;
  for (i = 0; i < n; ++i) {
    cr_expect_eq(m[i].offset, align_up(end, m[i].align),
                 "%s.%s at offset %zu, declared after a member ending at %zu", what, m[i].name,
                 m[i].offset, end);
    end = m[i].offset + m[i].size;
  }
  cr_expect_eq(align_up(end, struct_align), struct_size,
               "%s: the declared members end at %zu of %zu bytes", what, end, struct_size);
}

Test(schema, step_members_in_header_order) {
  static const member_place m[] = {AM_STEP_FIELDS(PLACE_, attnmeta_step)};
  expect_packed("attnmeta_step", m, sizeof m / sizeof m[0], sizeof(attnmeta_step),
                _Alignof(attnmeta_step));
}

Test(schema, group_members_in_header_order) {
  static const member_place m[] = {AM_GROUP_FIELDS(PLACE_, attnmeta_compressed_group)};
  expect_packed("attnmeta_compressed_group", m, sizeof m / sizeof m[0],
                sizeof(attnmeta_compressed_group), _Alignof(attnmeta_compressed_group));
}

Test(schema, topk_members_in_header_order) {
  static const member_place m[] = {AM_TOPK_FIELDS(PLACE_, attnmeta_topk)};
  expect_packed("attnmeta_topk", m, sizeof m / sizeof m[0], sizeof(attnmeta_topk),
                _Alignof(attnmeta_topk));
}

Test(schema, pool_members_in_header_order) {
  static const member_place m[] = {AM_POOL_FIELDS(PLACE_, attnmeta_pool)};
  expect_packed("attnmeta_pool", m, sizeof m / sizeof m[0], sizeof(attnmeta_pool),
                _Alignof(attnmeta_pool));
}

/* Every buffer names the products that read or write it; a setting names
 * none (one of the hand-laid ones) or the products it serves, never
 * AM_P_ALWAYS. */
#define PRODUCTS_OF_(c, type, member, role, extent, products, rule) \
  {#member, AM_IS_BUFFER_##role, (unsigned)(products)},
typedef struct member_products {
  const char *name;
  int buffer;
  unsigned products;
} member_products;

static void expect_owned(const member_products *m, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) {
    if (!m[i].buffer) {
      cr_expect_eq(m[i].products & AM_P_ALWAYS, 0u, "setting %s names AM_P_ALWAYS", m[i].name);
      continue;
    }
    cr_expect_neq(m[i].products, 0u, "buffer %s names no product", m[i].name);
  }
}

Test(schema, buffers_name_their_products) {
  static const member_products step[] = {AM_STEP_FIELDS(PRODUCTS_OF_, _)};
  static const member_products group[] = {AM_GROUP_FIELDS(PRODUCTS_OF_, _)};
  static const member_products topk[] = {AM_TOPK_FIELDS(PRODUCTS_OF_, _)};
  static const member_products pool[] = {AM_POOL_FIELDS(PRODUCTS_OF_, _)};
  expect_owned(step, sizeof step / sizeof step[0]);
  expect_owned(group, sizeof group / sizeof group[0]);
  expect_owned(topk, sizeof topk / sizeof topk[0]);
  expect_owned(pool, sizeof pool / sizeof pool[0]);
}

/* Each kernel member of the schema has the step member's type and size. */
#define KERNEL_SIZE_(c, type, member, products)                                  \
  cr_expect_eq(sizeof(type), sizeof(((attnmeta_step *)0)->member), #member);     \
  cr_expect_eq(offsetof(am_step_ext, member) % sizeof(type), 0u, #member " aligned");
Test(schema, kernel_members_match_the_step) {
  AM_STEP_KERNEL_FIELDS(KERNEL_SIZE_, _)
  cr_expect_eq(offsetof(am_step_params, ext) + sizeof(am_step_ext), sizeof(am_step_params),
               "am_step_ext ends am_step_params");
}
