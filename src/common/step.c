/*
 * attnmeta_build_step: checks every host argument (writing nothing on
 * error), turns the public step into kernel parameters and a launch shape
 * (am_step_plan.h), and makes the one launch.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "am_context.h"
#include "am_sized_struct.h"
#include "am_step_overlap.h"
#include "am_step_plan.h"

/* attnmeta_step as 0.1 released it: it ended with error_word. Members
 * appended later start at or past this offset (docs/abi.md). */
#define AM_STEP_SIZE_0_1 (offsetof(attnmeta_step, error_word) + sizeof(int32_t *))

static const attnmeta_step step_defaults = {
    .struct_size = sizeof(attnmeta_step),
    .num_mapped = -1,
    .block_size = 1,
    .dcp_world_size = 1,
    .dcp_rank = 0,
    .dcp_interleave = 1,
};

static const am_sized_type step_type = {
    .name = "step",
    .init_name = "attnmeta_step_init",
    .size = sizeof(attnmeta_step),
    .align = _Alignof(attnmeta_step),
    .oldest_size = AM_STEP_SIZE_0_1,
    .defaults = &step_defaults,
};

attnmeta_status attnmeta_step_init_size(attnmeta_step *step, size_t size) {
  return am_sized_init(&step_type, step, size);
}

/* Programs built against 0.1 call this symbol with a 0.1-sized step. */
void(attnmeta_step_init)(attnmeta_step *step) { (void)am_sized_init(&step_type, step, AM_STEP_SIZE_0_1); }

static int misaligned(const void *ptr, uintptr_t align) {
  return ptr && ((uintptr_t)ptr % align) != 0;
}

/* rows * stride int32 elements addressable with 64-bit byte offsets? */
static int table_overflows(int64_t rows, int64_t stride) {
  return rows > 0 && stride > (INT64_MAX / 8) / rows;
}

static attnmeta_status check_step(attnmeta_context *ctx, const attnmeta_step *s) {
  const int wants_len = s->seq_lens_out || s->global_seq_lens_out;
  const int wants_seq = wants_len || s->positions || s->slot_mapping;
  const int wants_table = s->block_table_out || s->slot_mapping;
  /* int32 buffers the step uses (an input no wanted product reads is not
   * checked: docs/reliability.md) */
  const void *int32_buffers[] = {s->token_to_req, s->seq_lens_out, s->global_seq_lens_out,
                                 s->block_table_out, s->decode_lens_out, s->req_indices_out,
                                 s->per_req_lens_out, s->error_word, s->query_start_loc,
                                 wants_seq ? s->seq_lens : NULL,
                                 wants_table ? s->block_table : NULL};
  size_t i;

  if (!s->query_start_loc)
    return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER, "query_start_loc is NULL");
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
  if (wants_seq && !s->seq_lens)
    return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER,
                   "seq_lens is NULL but lengths, positions or slots are wanted");
  if (s->dcp_world_size < 1 || s->dcp_interleave < 1)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "dcp_world_size (%d) and dcp_interleave (%d) must be >= 1", s->dcp_world_size,
                   s->dcp_interleave);
  if (s->dcp_rank < 0 || s->dcp_rank >= s->dcp_world_size)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "dcp_rank (%d) must be in [0, dcp_world_size = %d)", s->dcp_rank,
                   s->dcp_world_size);
  if (wants_table) {
    if (s->block_table_cols < 0)
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "block_table_cols (%d) is negative",
                     s->block_table_cols);
    if (s->block_table_stride < s->block_table_cols)
      return am_fail(ctx, ATTNMETA_ERR_STRIDE, "block_table_stride (%lld) < block_table_cols (%d)",
                     (long long)s->block_table_stride, s->block_table_cols);
    if (!s->block_table && s->block_table_cols > 0)
      return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER,
                     "block_table is NULL but a block table output or slots are wanted");
    if (table_overflows(s->num_reqs, s->block_table_stride))
      return am_fail(ctx, ATTNMETA_ERR_OVERFLOW,
                     "block table of %d rows x stride %lld overflows 64-bit byte offsets",
                     s->num_reqs, (long long)s->block_table_stride);
  }
  if (s->block_table_out) {
    if (s->block_table_out_stride < s->block_table_cols)
      return am_fail(ctx, ATTNMETA_ERR_STRIDE,
                     "block_table_out_stride (%lld) < block_table_cols (%d)",
                     (long long)s->block_table_out_stride, s->block_table_cols);
    if (table_overflows(s->num_tokens, s->block_table_out_stride))
      return am_fail(ctx, ATTNMETA_ERR_OVERFLOW,
                     "block_table_out of %d rows x stride %lld overflows 64-bit byte offsets",
                     s->num_tokens, (long long)s->block_table_out_stride);
  }
  if (s->slot_mapping && s->block_size < 1)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "block_size (%d) must be >= 1",
                   s->block_size);
  for (i = 0; i < sizeof int32_buffers / sizeof int32_buffers[0]; ++i) {
    if (misaligned(int32_buffers[i], 4))
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                     "an int32 buffer (%p) is not 4-byte aligned", int32_buffers[i]);
  }
  if (misaligned(s->positions, 8) || misaligned(s->slot_mapping, 8))
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "positions or slot_mapping is not 8-byte aligned");
  return am_check_overlaps(ctx, s);
}

static int has_work(const am_step_params *p) {
  return p->token_to_req || p->seq_lens_out || p->global_seq_lens_out || p->block_table_out ||
         p->decode_lens_out || p->req_indices_out || p->per_req_lens_out || p->positions ||
         p->slot_mapping || p->error_word;
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
  params = am_params_of(&full);
  if (!has_work(&params)) return am_succeed(ctx);
  shape = am_plan_launch(&ctx->config, ctx->kind == ATTNMETA_BACKEND_CPU, ctx->processors,
                         &params);
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
