// SPDX-License-Identifier: Apache-2.0
/*
 * The buffers of a step for the overlap check (overlap.c), walked from the
 * schema (am_schema.h) in its order: each output the caller set, and each
 * input that a wanted product reads, with exactly the bytes it covers.
 */
#include <stdint.h>

#include "am_schema_overlap.h"
#include "am_step_overlap.h"

/* The groups, each with its own buffers. */
#define AM_OVERLAP_ADD_GROUPS(name, member, products, ...) \
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g)   \
    add_group(list, n, &b->member[g], k, group_names[g]);

/* Each group's buffer names, "compressed_groups[g].member". */
#define GROUP_INDEX_(c, type, member, role, extent, products, rule) GROUP_##member,
enum { AM_GROUP_FIELDS(GROUP_INDEX_, _) GROUP_MEMBERS };
#define GROUP_NAME_(g, type, member, role, extent, products, rule) \
  "compressed_groups[" #g "]." #member,
#define GROUP_NAMES_(c, g) {AM_GROUP_FIELDS(GROUP_NAME_, g)},
static const char *const group_names[][GROUP_MEMBERS] = {AM_EACH_GROUP(GROUP_NAMES_, _)};

#define GROUP_ADD_(c, type, member, role, extent, products, rule) \
  AM_OVERLAP_ADD_##role(names[GROUP_##member], member, products, extent)
static void add_group(am_extent *list, int *n, const attnmeta_compressed_group *b,
                      const am_counts *k, const char *const names[]) {
  const unsigned wanted = am_group_products(b);
  AM_GROUP_FIELDS(GROUP_ADD_, _)
}

#define STEP_ADD_(c, type, member, role, extent, products, rule) \
  AM_OVERLAP_ADD_##role(#member, member, products, extent)
static void add_step(am_extent *list, int *n, const attnmeta_step *b, const am_counts *k) {
  const unsigned wanted = am_step_products(b);
  int g;
  AM_STEP_FIELDS(STEP_ADD_, _)
}

attnmeta_status am_check_overlaps(attnmeta_context *ctx, const attnmeta_step *s) {
  const am_counts k = {s->num_reqs, (int64_t)s->num_reqs + 1, s->num_tokens, s->capacity, 0, 1};
  am_extent list[AM_STEP_BUFFERS + ATTNMETA_MAX_COMPRESSED_GROUPS * AM_GROUP_BUFFERS];
  int n = 0;
  add_step(list, &n, s, &k);
  return am_check_extents(ctx, list, n);
}
