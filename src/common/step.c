// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta_build_step: checks every host argument (writing nothing on
 * error), turns the public step into kernel parameters and a launch shape
 * (am_step_translate.h, am_step_plan.h), and makes the one launch.
 */
#include <stddef.h>
#include <string.h>

#include "am_context.h"
#include "am_schema_check.h"
#include "am_sized_struct.h"
#include "am_step_overlap.h"
#include "am_step_plan.h"

/* attnmeta_step as 0.1 released it: it ended with error_word. Members
 * appended later start at or past this offset (docs/abi.md). */
#define AM_STEP_SIZE_0_1 (offsetof(attnmeta_step, error_word) + sizeof(int32_t *))

static const attnmeta_step step_defaults = {
    .struct_size = sizeof(attnmeta_step),
    .num_mapped = -1,
    /* block_size has no default: slot_mapping needs it set (>= 1) */
    .dcp_world_size = 1,
    .dcp_rank = 0,
    .dcp_interleave = 1,
};

static const am_sized_type step_type = AM_SIZED_TYPE(step, AM_STEP_SIZE_0_1, &step_defaults);

attnmeta_status attnmeta_step_init_size(attnmeta_step *step, size_t size) {
  return am_sized_init(&step_type, step, size);
}

/* Programs built against 0.1 call this symbol with a 0.1-sized step. */
void(attnmeta_step_init)(attnmeta_step *step) { (void)am_sized_init(&step_type, step, AM_STEP_SIZE_0_1); }

/* Every buffer of the step and of its groups (am_schema_check.h): each one
 * in use, and only those (an input no wanted product reads is not checked:
 * docs/reliability.md). */
#define STEP_CHECK_(c, type, member, role, extent, products, rule) \
  AM_CHECK_##role(member, products, rule, AM_CHECK_##extent)
/* Each group's prefix in messages, as literals: formatting one a call would
 * cost more than the checks themselves. */
#define AM_GROUP_PREFIX_(c, g) "compressed_groups[" #g "].",
static const char *const group_prefix[ATTNMETA_MAX_COMPRESSED_GROUPS] = {
    AM_EACH_GROUP(AM_GROUP_PREFIX_, _)};
#undef AM_GROUP_PREFIX_

static attnmeta_status check_group_buffers(attnmeta_context *ctx, int g,
                                           const attnmeta_compressed_group *b, const am_counts *k) {
  const am_check_scope group_scope = {ctx, group_prefix[g], am_group_products(b), 0},
                       *sc = &group_scope;
  attnmeta_status st;
  AM_GROUP_FIELDS(STEP_CHECK_, _)
  return ATTNMETA_OK;
}
#define AM_CHECK_GROUPS(member, products, rule, ...)                  \
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g) {              \
    st = check_group_buffers(sc->ctx, g, &b->member[g], k);           \
    if (st != ATTNMETA_OK) return st;                                 \
  }
static attnmeta_status check_buffers(const am_check_scope *sc, const attnmeta_step *b) {
  const am_counts counts = {b->num_reqs, (int64_t)b->num_reqs + 1, b->num_tokens, b->capacity, 0,
                            1}, *k = &counts;
  attnmeta_status st;
  int g;
  AM_STEP_FIELDS(STEP_CHECK_, _)
  return ATTNMETA_OK;
}

/* The settings' rules of the schema (AM_GROUP_RULES, AM_STEP_RULES):
 * each wanted group's, then the step's. */
static attnmeta_status check_group_rules(attnmeta_context *ctx, const attnmeta_step *s, int g) {
  const attnmeta_compressed_group *b = &s->compressed_groups[g];
  const am_check_scope group_scope = {ctx, group_prefix[g], am_group_products(b), 0},
                       *sc = &group_scope;
  attnmeta_status st;
  AM_GROUP_RULES(AM_CHECK_RULE, _)
  return ATTNMETA_OK;
}
static attnmeta_status check_rules(const am_check_scope *sc, const attnmeta_step *s) {
  const attnmeta_step *b = s;
  attnmeta_status st;
  int g;
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g) {
    st = check_group_rules(sc->ctx, s, g);
    if (st != ATTNMETA_OK) return st;
  }
  AM_STEP_RULES(AM_CHECK_RULE, _)
  return ATTNMETA_OK;
}

static attnmeta_status check_step(attnmeta_context *ctx, const attnmeta_step *s) {
  const am_check_scope scope = {ctx, "", am_step_products(s), 0};
  attnmeta_status st;

  st = am_check_launch_flags(&scope, s->launch_flags);
  if (st != ATTNMETA_OK) return st;
  if (s->num_reqs < 0 || s->num_tokens < 0 || s->capacity < 0)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "num_reqs (%d), num_tokens (%d) and capacity (%d) must be >= 0", s->num_reqs,
                   s->num_tokens, s->capacity);
  if (s->capacity < s->num_tokens)
    return am_fail(ctx, ATTNMETA_ERR_CAPACITY, "capacity (%d) is smaller than num_tokens (%d)",
                   s->capacity, s->num_tokens);
  if ((int64_t)s->num_reqs + s->num_tokens > INT32_MAX)
    return am_fail(ctx, ATTNMETA_ERR_OVERFLOW,
                   "num_reqs + num_tokens (%lld) exceeds INT32_MAX: padding request ids overflow",
                   (long long)s->num_reqs + s->num_tokens);
  if (s->dcp_world_size < 1 || s->dcp_interleave < 1)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "dcp_world_size (%d) and dcp_interleave (%d) must be >= 1", s->dcp_world_size,
                   s->dcp_interleave);
  if (s->dcp_rank < 0 || s->dcp_rank >= s->dcp_world_size)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "dcp_rank (%d) must be in [0, dcp_world_size = %d)", s->dcp_rank,
                   s->dcp_world_size);
  st = check_buffers(&scope, s);
  if (st != ATTNMETA_OK) return st;
  if ((scope.wanted & AM_P(SLOT_MAPPING)) && s->block_size < 1)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "slot_mapping needs block_size >= 1, the KV cache's block size (got %d; "
                   "it has no default)",
                   s->block_size);
  st = check_rules(&scope, s);
  if (st != ATTNMETA_OK) return st;
  return am_check_overlaps(ctx, s);
}

/* Whether the launch writes anything: a wanted product (a block table of
 * no columns has nothing to copy), or the error word alone. */
static int has_work(const attnmeta_step *s) {
  unsigned wanted = am_step_products(s) & ~AM_P_ALWAYS;
  if (s->block_table_cols <= 0) wanted &= ~AM_P(BLOCK_TABLE);
  return wanted != 0 || s->error_word;
}

attnmeta_status attnmeta_build_step(attnmeta_context *ctx, const attnmeta_step *step,
                                    void *stream) {
  attnmeta_status status;
  attnmeta_step full; /* the caller's step, defaults past its struct_size */
  am_step_params params;
  am_launch_shape shape;
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  if (!step) return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER, "step is NULL");
  status = am_sized_import(ctx, &step_type, step, &full);
  if (status != ATTNMETA_OK) return status;
  status = check_step(ctx, &full);
  if (status != ATTNMETA_OK) return status;
  if (!has_work(&full)) return am_succeed(ctx);
  params = am_params_of(&full);
  shape = am_plan_launch_paths(&ctx->config, ctx->kind == ATTNMETA_BACKEND_CPU,
                               ctx->processors, ctx->paths_off, &params);
  /* every backend runs the early-start body (tails first; the wait is a
   * no-op where the launch cannot start early): the same bytes */
  if (full.launch_flags & ATTNMETA_LAUNCH_EARLY_START) params.variant |= AM_VARIANT_EARLY_START;
  status = (attnmeta_status)ctx->table->launch_step(ctx->state, &params, &shape, stream,
                                                    am_message(ctx), AM_MESSAGE_SIZE);
  return status == ATTNMETA_OK ? am_succeed(ctx) : status;
}

attnmeta_status attnmeta_token_to_req(attnmeta_context *ctx, const int32_t *query_start_loc,
                                      int32_t num_reqs, int32_t num_mapped, int32_t num_tokens,
                                      int32_t *out, void *stream) {
  attnmeta_step step;
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  if (!out) return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER, "out is NULL");
  attnmeta_step_init(&step);
  step.query_start_loc = query_start_loc;
  step.num_reqs = num_reqs;
  step.num_tokens = num_tokens;
  step.capacity = num_tokens;
  step.num_mapped = num_mapped;
  step.token_to_req = out;
  return attnmeta_build_step(ctx, &step, stream);
}
