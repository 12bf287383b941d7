// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta_build_step: checks every host argument (writing nothing on
 * error), turns the public step into kernel parameters and a launch shape
 * (am_step_translate.h, am_step_plan.h), and makes the one launch.
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
    /* block_size has no default: slot_mapping needs it set (>= 1) */
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

/* A block table of `rows` rows some product reads: cols, stride, pointer
 * and size checks, messages naming the step's fields `what`_cols etc. */
static attnmeta_status check_table(attnmeta_context *ctx, const char *what, const int32_t *table,
                                   int32_t cols, int64_t stride, int32_t rows) {
  if (cols < 0)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "%s_cols (%d) is negative", what, cols);
  if (stride < cols)
    return am_fail(ctx, ATTNMETA_ERR_STRIDE, "%s_stride (%lld) < %s_cols (%d)", what,
                   (long long)stride, what, cols);
  if (!table && cols > 0)
    return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER, "%s is NULL but has %d columns", what, cols);
  if (table_overflows(rows, stride))
    return am_fail(ctx, ATTNMETA_ERR_OVERFLOW,
                   "%s of %d rows x stride %lld overflows 64-bit byte offsets", what, rows,
                   (long long)stride);
  if (misaligned(table, 4))
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "%s (%p) is not 4-byte aligned", what,
                   (const void *)table);
  return ATTNMETA_OK;
}

/* A block size of a DCP-placed product: >= 1, and a multiple of the
 * interleave when W > 1 (so each rank owns whole runs of a block). */
static attnmeta_status check_dcp_block(attnmeta_context *ctx, const attnmeta_step *s,
                                       const char *what, int32_t block_size) {
  if (block_size < 1)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "%s (%d) must be >= 1", what, block_size);
  if (s->dcp_world_size > 1 && block_size % s->dcp_interleave != 0)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "%s (%d) must be a multiple of dcp_interleave (%d) when dcp_world_size > 1",
                   what, block_size, s->dcp_interleave);
  return ATTNMETA_OK;
}

/* An output of T rows of `width` entries with row stride `stride`. */
static attnmeta_status check_rows(attnmeta_context *ctx, const char *what, const int32_t *rows,
                                  const char *width_name, int32_t width, int64_t stride,
                                  int32_t num_tokens) {
  if (!rows) return ATTNMETA_OK;
  if (stride < width)
    return am_fail(ctx, ATTNMETA_ERR_STRIDE, "%s_stride (%lld) < %s (%d)", what,
                   (long long)stride, width_name, width);
  if (table_overflows(num_tokens, stride))
    return am_fail(ctx, ATTNMETA_ERR_OVERFLOW,
                   "%s of %d rows x stride %lld overflows 64-bit byte offsets", what, num_tokens,
                   (long long)stride);
  return ATTNMETA_OK;
}

/* The DeepSeek-V3.2/V4 products (contract sections 5, 7, 8). */
static attnmeta_status check_dsv4(attnmeta_context *ctx, const attnmeta_step *s) {
  char what[64];
  attnmeta_status st;
  int g;
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g) {
    const attnmeta_compressed_group *grp = &s->compressed_groups[g];
    if (!grp->slot_mapping && !grp->seq_lens_out) continue;
    if (grp->ratio < 1)
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                     "compressed_groups[%d].ratio (%d) must be >= 1", g, grp->ratio);
    if (misaligned(grp->slot_mapping, 8) || misaligned(grp->seq_lens_out, 4))
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                     "compressed_groups[%d].slot_mapping or .seq_lens_out is misaligned", g);
    if (!grp->slot_mapping) continue;
    snprintf(what, sizeof what, "compressed_groups[%d].block_size", g);
    st = check_dcp_block(ctx, s, what, grp->block_size);
    if (st != ATTNMETA_OK) return st;
    snprintf(what, sizeof what, "compressed_groups[%d].block_table", g);
    st = check_table(ctx, what, grp->block_table, grp->block_table_cols,
                     grp->block_table_stride, s->num_reqs);
    if (st != ATTNMETA_OK) return st;
  }
  if (s->swa_indices || s->swa_lens) {
    if (s->swa_mode != ATTNMETA_SWA_CAUSAL && s->swa_mode != ATTNMETA_SWA_NON_CAUSAL)
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                     "swa_mode (%d) is neither ATTNMETA_SWA_CAUSAL nor ATTNMETA_SWA_NON_CAUSAL",
                     s->swa_mode);
    if (s->swa_window < 1)
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "swa_window (%d) must be >= 1",
                     s->swa_window);
    if (s->swa_width < s->swa_window)
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "swa_width (%d) < swa_window (%d)",
                     s->swa_width, s->swa_window);
    if (misaligned(s->swa_indices, 4) || misaligned(s->swa_lens, 4))
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                     "swa_indices or swa_lens is not 4-byte aligned");
    st = check_rows(ctx, "swa_indices", s->swa_indices, "swa_width", s->swa_width,
                    s->swa_indices_stride, s->num_tokens);
    if (st != ATTNMETA_OK) return st;
    if (s->swa_indices) {
      if (s->swa_block_size < 1)
        return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "swa_block_size (%d) must be >= 1",
                       s->swa_block_size);
      st = check_table(ctx, "swa_block_table", s->swa_block_table, s->swa_block_table_cols,
                       s->swa_block_table_stride, s->num_reqs);
      if (st != ATTNMETA_OK) return st;
    }
  }
  if (s->c128a_rows || s->c128a_lens) {
    const int global = s->c128a_mode == ATTNMETA_C128A_GLOBAL;
    if (!global && s->c128a_mode != ATTNMETA_C128A_LOCAL)
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                     "c128a_mode (%d) is neither ATTNMETA_C128A_GLOBAL nor ATTNMETA_C128A_LOCAL",
                     s->c128a_mode);
    if (s->c128a_ratio < 1)
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "c128a_ratio (%d) must be >= 1",
                     s->c128a_ratio);
    if (s->c128a_width < 0)
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "c128a_width (%d) is negative",
                     s->c128a_width);
    if (misaligned(s->c128a_rows, 4) || misaligned(s->c128a_lens, 4))
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                     "c128a_rows or c128a_lens is not 4-byte aligned");
    st = check_rows(ctx, "c128a_rows", s->c128a_rows, "c128a_width", s->c128a_width,
                    s->c128a_rows_stride, s->num_tokens);
    if (st != ATTNMETA_OK) return st;
    if (global) { /* the block size decides the DCP-local lengths too */
      st = check_dcp_block(ctx, s, "c128a_block_size", s->c128a_block_size);
      if (st != ATTNMETA_OK) return st;
      if (s->c128a_rows) {
        st = check_table(ctx, "c128a_block_table", s->c128a_block_table,
                         s->c128a_block_table_cols, s->c128a_block_table_stride, s->num_reqs);
        if (st != ATTNMETA_OK) return st;
      }
    }
  }
  return ATTNMETA_OK;
}

/* Whether the step wants a DeepSeek-V3.2/V4 product (all read seq_lens). */
static int wants_dsv4(const attnmeta_step *s) {
  int g;
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g)
    if (s->compressed_groups[g].slot_mapping || s->compressed_groups[g].seq_lens_out) return 1;
  return s->swa_indices || s->swa_lens || s->c128a_rows || s->c128a_lens;
}

static attnmeta_status check_step(attnmeta_context *ctx, const attnmeta_step *s) {
  const int wants_len = s->seq_lens_out || s->global_seq_lens_out;
  const int wants_seq = wants_len || s->positions || s->slot_mapping || wants_dsv4(s);
  const int wants_table = s->block_table_out || s->slot_mapping;
  /* int32 buffers the step uses (an input no wanted product reads is not
   * checked: docs/reliability.md) */
  const void *int32_buffers[] = {s->token_to_req, s->seq_lens_out, s->global_seq_lens_out,
                                 s->block_table_out, s->decode_lens_out, s->req_indices_out,
                                 s->per_req_lens_out, s->error_word, s->query_start_loc,
                                 wants_seq ? s->seq_lens : NULL,
                                 wants_table ? s->block_table : NULL};
  attnmeta_status st;
  size_t i;

  if (s->launch_flags & ~(uint32_t)ATTNMETA_LAUNCH_EARLY_START)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "launch_flags (0x%x) has bits no ATTNMETA_LAUNCH_* flag defines",
                   (unsigned)s->launch_flags);
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
                   "seq_lens is NULL but lengths, positions, slots or rows are wanted");
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
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "slot_mapping needs block_size >= 1, the KV cache's block size (got %d; "
                   "it has no default)",
                   s->block_size);
  for (i = 0; i < sizeof int32_buffers / sizeof int32_buffers[0]; ++i) {
    if (misaligned(int32_buffers[i], 4))
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                     "an int32 buffer (%p) is not 4-byte aligned", int32_buffers[i]);
  }
  if (misaligned(s->positions, 8) || misaligned(s->slot_mapping, 8))
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "positions or slot_mapping is not 8-byte aligned");
  st = check_dsv4(ctx, s);
  if (st != ATTNMETA_OK) return st;
  return am_check_overlaps(ctx, s);
}

static int has_work(const am_step_params *p) {
  return p->token_to_req || p->seq_lens_out || p->global_seq_lens_out || p->block_table_out ||
         p->decode_lens_out || p->req_indices_out || p->per_req_lens_out || p->positions ||
         p->slot_mapping || p->error_word || am_wants_dsv4(p);
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
