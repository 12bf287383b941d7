// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta_convert_topk: checks every host argument (writing nothing on
 * error), turns the public operation into kernel parameters, picks the
 * launch shape, and makes the one launch.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "am_context.h"
#include "am_op_launch.h"
#include "am_overlap.h"
#include "am_schema_check.h"
#include "am_sized_struct.h"
#include "am_topk_params.h"

#define AM_TOPK_GPU_BLOCK 256
#define AM_TOPK_MANY_ROWS_BLOCK 512
#define AM_TOPK_MAX_LANES 512
#define AM_TOPK_TWO_VECTORS_FROM ((int64_t)1 << 19) /* rows x K */
#define AM_TOPK_ROWS_MAX_BLOCK 1024
#define AM_TOPK_ROWS_WAVE_BLOCK 128
#define AM_TOPK_SM_THREADS 2048 /* resident threads a multiprocessor (sm_90, CDNA3) */

static const attnmeta_topk topk_defaults = {
    .struct_size = sizeof(attnmeta_topk),
    .block_size = 1,
    .stride_rows = 0,
    .dcp_world_size = 1,
    .dcp_rank = 0,
    .dcp_interleave = 1,
};

/* New in this release: its present size is the only one accepted so far. */
static const am_sized_type topk_type = AM_SIZED_TYPE(topk, sizeof(attnmeta_topk), &topk_defaults);

attnmeta_status attnmeta_topk_init_size(attnmeta_topk *op, size_t size) {
  return am_sized_init(&topk_type, op, size);
}

/* The DCP peer views' settings (contract 6c, 6d): a segment for the
 * table, peer slots that fit int32 when rows are converted, and a rotated
 * block id that fits int64. */
static attnmeta_status check_peer_sizes(const am_check_scope *sc, const attnmeta_topk *b) {
  const int64_t world = b->dcp_world_size, segment = b->peer_blocks;
  const int64_t stride_rows = b->stride_rows > 0 ? b->stride_rows : b->block_size;
  if (b->peer_table_out && segment < 1)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "topk.peer_table_out needs topk.peer_blocks >= 1 (a rank's segment), got %lld",
                   (long long)segment);
  if (segment > 0 && b->num_tokens > 0 && segment > (int64_t)INT32_MAX / world / stride_rows)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "rank-major peer slots do not fit in int32: dcp_world_size (%lld) x "
                   "peer_blocks (%lld) x stride_rows (%lld) > %d",
                   (long long)world, (long long)segment, (long long)stride_rows, INT32_MAX);
  if (b->peer_table_out && segment > INT64_MAX / world)
    return am_fail(sc->ctx, ATTNMETA_ERR_OVERFLOW,
                   "the rotated peer table's block ids overflow int64: dcp_world_size (%lld) x "
                   "peer_blocks (%lld)",
                   (long long)world, (long long)segment);
  return ATTNMETA_OK;
}

/* The settings' floors, then the rules of their own. */
#define TOPK_FLOOR_(c, type, member, role, extent, products, rule) AM_CHECK_FLOOR_##role(member, rule)
static attnmeta_status check_sizes(const am_check_scope *sc, const attnmeta_topk *b) {
  attnmeta_status st;
  AM_TOPK_FIELDS(TOPK_FLOOR_, _)
  if (b->stride_rows < 0)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "topk.stride_rows (%d) must be >= 1, or 0 for block_size", b->stride_rows);
  if (b->dcp_rank < 0 || b->dcp_rank >= b->dcp_world_size)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "topk.dcp_rank (%d) must be in [0, dcp_world_size = %d)", b->dcp_rank,
                   b->dcp_world_size);
  if (b->compact != 0 && b->compact != 1)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "topk.compact (%d) must be 0 or 1",
                   b->compact);
  st = am_check_launch_flags(sc, b->launch_flags);
  if (st != ATTNMETA_OK) return st;
  return check_peer_sizes(sc, b);
}

/* Every buffer of the schema (am_schema_check.h), then the rules between
 * buffers. An empty array may be NULL (torch's empty CUDA tensors have data
 * pointer 0): nothing is read from it or written to it. */
#define TOPK_CHECK_(c, type, member, role, extent, products, rule) \
  AM_CHECK_##role(member, products, rule, AM_CHECK_##extent)
static attnmeta_status check_buffers(const am_check_scope *sc, const attnmeta_topk *b,
                                     const am_counts *k) {
  attnmeta_status st;
  AM_TOPK_FIELDS(TOPK_CHECK_, _)
  if (!b->query_start_loc && !b->req_id && b->num_tokens > 0)
    return am_fail(sc->ctx, ATTNMETA_ERR_NULL_POINTER,
                   "topk.query_start_loc and topk.req_id are both NULL: give one");
  if (b->query_start_loc && b->req_id)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "topk.query_start_loc and topk.req_id are both given: give one");
  if (b->compact && !b->valid_count && b->num_tokens > 0)
    return am_fail(sc->ctx, ATTNMETA_ERR_NULL_POINTER,
                   "topk.compact is 1 but topk.valid_count is NULL: compaction needs the counts");
  /* the schema checked rank 0's table; the ranks past it lie owner_stride on */
  if ((sc->wanted & AM_P(TOPK_PEER_TABLE)) && b->dcp_world_size > 1 &&
      b->peer_tables_owner_stride >
          (INT64_MAX / 8 - k->R * b->peer_tables_stride) / (b->dcp_world_size - 1))
    return am_fail(sc->ctx, ATTNMETA_ERR_OVERFLOW,
                   "topk.peer_tables of %d ranks x peer_tables_owner_stride %lld overflows 64-bit "
                   "byte offsets",
                   b->dcp_world_size, (long long)b->peer_tables_owner_stride);
  return ATTNMETA_OK;
}

/* The bytes of the gathered tables' ranks past rank 0 (the schema adds
 * rank 0's): one run a rank when the ranks do not interleave, else from
 * rank 1's first entry to the last rank's last. None when the rotated
 * table has no page (its tables are not read, their sizes not checked). */
static void add_peer_tables(am_extent *list, int *n, const attnmeta_topk *b) {
  const int64_t rows = b->num_reqs, cols = b->peer_tables_cols, os = b->peer_tables_owner_stride;
  const int64_t ranks = b->dcp_world_size - 1;
  int64_t span;
  if (!(am_topk_products(b) & AM_P(TOPK_PEER_TABLE))) return;
  span = rows > 0 && cols > 0 ? (rows - 1) * b->peer_tables_stride + cols : 0;
  if (!b->peer_tables || ranks < 1 || span == 0 || os == 0) return;
  if (os >= span)
    am_extent_add(list, n, "peer_tables", b->peer_tables + os, ranks, span, os, 4, 0);
  else
    am_extent_add(list, n, "peer_tables", b->peer_tables + os, 1, (ranks - 1) * os + span,
                  (ranks - 1) * os + span, 4, 0);
}

/* No output may share a byte with an input or another output (overlap.c):
 * each buffer of the schema with exactly the bytes the conversion reads or
 * writes (am_schema_overlap.h). */
#define TOPK_ADD_(c, type, member, role, extent, products, rule) \
  AM_OVERLAP_ADD_##role(#member, member, products, extent)
static attnmeta_status check_overlaps(attnmeta_context *ctx, const attnmeta_topk *b,
                                      const am_counts *k, unsigned wanted) {
  am_extent list[AM_TOPK_BUFFERS + 1];
  int count = 0, *n = &count;
  AM_TOPK_FIELDS(TOPK_ADD_, _)
  add_peer_tables(list, n, b);
  return am_check_extents(ctx, list, count);
}

static attnmeta_status check_topk(attnmeta_context *ctx, const attnmeta_topk *op) {
  const am_counts counts = {op->num_reqs, (int64_t)op->num_reqs + 1, op->num_tokens, 0,
                            op->num_prefill, 1};
  const am_check_scope scope = {ctx, "topk.", am_topk_products(op), 1};
  attnmeta_status st = check_sizes(&scope, op);
  if (st != ATTNMETA_OK) return st;
  st = check_buffers(&scope, op, &counts);
  if (st != ATTNMETA_OK) return st;
  return check_overlaps(ctx, op, &counts, scope.wanted);
}

static am_topk_params params_of(const attnmeta_topk *op) {
  am_topk_params p;
  memset(&p, 0, sizeof p);
  p.topk = op->topk;
  p.topk_stride = op->topk_stride;
  p.qsl = op->query_start_loc;
  p.req_id = op->req_id;
  p.block_table = op->num_reqs > 0 && op->block_table_cols > 0 ? op->block_table : NULL;
  p.block_table_stride = op->block_table_stride;
  p.prefill_req = op->prefill_req;
  p.workspace_starts = op->num_prefill > 0 ? op->workspace_starts : NULL;
  p.token_slot = op->token_slot;
  p.out = op->out;
  p.out_stride = op->out_stride;
  p.valid_count = op->valid_count;
  p.error_word = op->error_word;
  p.num_tokens = op->num_tokens;
  p.topk_count = op->topk_count;
  p.num_reqs = op->num_reqs;
  p.cols = op->block_table_cols;
  p.block_size = op->block_size;
  p.stride_rows = op->stride_rows > 0 ? op->stride_rows : op->block_size;
  p.dcp_world_size = op->dcp_world_size;
  p.dcp_rank = op->dcp_rank;
  p.dcp_interleave = op->dcp_interleave;
  p.num_prefill = op->num_prefill;
  p.compact = op->compact;
  p.peer_blocks = op->peer_blocks;
  p.early = (op->launch_flags & ATTNMETA_LAUNCH_EARLY_START) != 0;
  if (op->peer_table_out && op->num_reqs > 0 && op->peer_table_width > 0) {
    p.peer_table_out = op->peer_table_out;
    p.peer_table_out_stride = op->peer_table_out_stride;
    p.peer_table_width = op->peer_table_width;
    p.peer_tables_cols = op->peer_tables_cols;
    p.peer_tables = op->peer_tables_cols > 0 ? op->peer_tables : NULL;
    p.peer_tables_stride = op->peer_tables_stride;
    p.peer_tables_owner_stride = op->peer_tables_owner_stride;
  }
  return p;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t ceil_pow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

/* Lanes enough that a row takes one chunk of four columns a lane (a power
 * of two up to AM_TOPK_MAX_LANES), groups filling the block, a grid
 * covering the rows (bounded on the GPUs, one block on the CPU). */
static am_launch_shape plan_launch(const attnmeta_context *ctx, am_topk_params *p) {
  const attnmeta_launch_config *cfg = &ctx->config;
  const int is_cpu = ctx->kind == ATTNMETA_BACKEND_CPU;
  am_launch_shape shape;
  int64_t lanes, block;
  int64_t chunks, rows;
  int many_rows;
  /* The short body wherever it applies, unless a launch shape is forced
   * in lanes (a shape of the general body's kind): a block a row, threads
   * enough for one pass of AM_TOPK_ROW_COLS columns each, in whole warps;
   * where those blocks would take more than one wave of a full GPU,
   * blocks of AM_TOPK_ROWS_WAVE_BLOCK threads taking passes (H200,
   * 1024 x 2048: bench/NOTES.md, round fourteen). */
  p->rows_body = cfg->lanes <= 0 && am_topk_rows_apply(p);
  p->vector_in = cfg->vector != 0 && ((uintptr_t)p->topk % 16) == 0 && p->topk_stride % 4 == 0;
  p->vector_out = cfg->vector != 0 && !p->compact && ((uintptr_t)p->out % 16) == 0 &&
                  p->out_stride % 4 == 0;
  if (p->rows_body) {
    block = cfg->block > 0 ? cfg->block
            : is_cpu       ? 1
                           : ceil_div(ceil_div(p->topk_count, AM_TOPK_ROW_COLS), 32) * 32;
    block = block < AM_TOPK_ROWS_MAX_BLOCK ? block : AM_TOPK_ROWS_MAX_BLOCK;
    if (cfg->block <= 0 && !is_cpu && block > AM_TOPK_ROWS_WAVE_BLOCK &&
        (int64_t)p->num_tokens * block > (int64_t)ctx->processors * AM_TOPK_SM_THREADS)
      block = AM_TOPK_ROWS_WAVE_BLOCK;
    shape.lanes = block;
    shape.groups = 1;
    shape.shared_bytes = 0;
    shape.grid = am_op_grid(ctx, is_cpu, cfg->grid, block, 1, p->num_tokens);
    return shape;
  }
  /* Two groups of four columns a lane for many rows without compaction:
   * half the threads, twice the loads in flight per thread (H200: 1024 x
   * 2048 in fewer waves). Few rows keep one group: the shorter chain a
   * thread runs is what their time is. */
  p->lane_vectors = !is_cpu && !p->compact && p->topk_count >= 2 * AM_TOPK_LANE_COLS &&
                            (int64_t)p->num_tokens * p->topk_count >= AM_TOPK_TWO_VECTORS_FROM
                        ? 2
                        : 1;
  /* Lanes for one chunk a row (a row's loads in one round), unless the
   * rows are enough to fill every multiprocessor with blocks of
   * AM_TOPK_MANY_ROWS_BLOCK with fewer lanes a row: then two chunks a row
   * with two groups a lane (a lane's second chunk loads while its first
   * converts), four with compaction (a prefix sum over a quarter of the
   * lanes). H200, 1024 x 2048: 8.9 -> 7.7 us plain, 21.5 -> 17.2 us
   * compacted; with fewer rows (256 x 2048, 1024 x 512) the smaller grid
   * left multiprocessors idle: 3.7 -> 5.1 us and 4.1 -> 5.9. */
  lanes = ceil_pow2(ceil_div(p->topk_count, AM_TOPK_LANE_COLS * p->lane_vectors));
  chunks = p->compact ? 4 : p->lane_vectors;
  many_rows = cfg->lanes <= 0 && !is_cpu && chunks > 1 && lanes >= chunks &&
              (int64_t)p->num_tokens * (lanes / chunks) >=
                  (int64_t)ctx->processors * AM_TOPK_MANY_ROWS_BLOCK;
  if (cfg->lanes > 0) lanes = cfg->lanes;
  else if (many_rows) lanes /= chunks;
  lanes = lanes < AM_TOPK_MAX_LANES ? lanes : AM_TOPK_MAX_LANES;
  /* automatic GPU blocks hold at least a row's lanes */
  if (cfg->block > 0) {
    block = cfg->block;
  } else if (is_cpu) {
    block = 1;
  } else {
    block = many_rows ? AM_TOPK_MANY_ROWS_BLOCK : AM_TOPK_GPU_BLOCK;
    block = block > lanes ? block : lanes;
  }
  lanes = lanes < block ? lanes : block;
  shape.lanes = lanes;
  shape.groups = block / lanes;
  shape.shared_bytes =
      p->valid_count ? (int64_t)sizeof(int32_t) * AM_TOPK_SCRATCH_INTS(shape.lanes, shape.groups) : 0;
  /* the rotated peer table takes a block a request row */
  rows = p->peer_table_out && (int64_t)p->num_reqs * shape.groups > p->num_tokens
             ? (int64_t)p->num_reqs * shape.groups
             : p->num_tokens;
  shape.grid = am_op_grid(ctx, is_cpu, cfg->grid, shape.lanes * shape.groups, shape.groups, rows);
  return shape;
}

attnmeta_status attnmeta_convert_topk(attnmeta_context *ctx, const attnmeta_topk *op,
                                      void *stream) {
  attnmeta_status status;
  attnmeta_topk full; /* the caller's operation, defaults past its struct_size */
  am_topk_params params;
  am_launch_shape shape;
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  if (!op) return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER, "topk operation is NULL");
  status = am_sized_import(ctx, &topk_type, op, &full);
  if (status != ATTNMETA_OK) return status;
  op = &full;
  status = check_topk(ctx, op);
  if (status != ATTNMETA_OK) return status;
  if (!am_backend_has(ctx->table, launch_topk))
    return am_fail_module_predates(
        ctx, "top-k", offsetof(am_backend_table, launch_topk) + sizeof ctx->table->launch_topk);
  params = params_of(op);
  if (op->num_tokens == 0 && !params.peer_table_out) return am_succeed(ctx);
  shape = plan_launch(ctx, &params);
  status = (attnmeta_status)ctx->table->launch_topk(ctx->state, &params, &shape, stream,
                                                    am_message(ctx), AM_MESSAGE_SIZE);
  return status == ATTNMETA_OK ? am_succeed(ctx) : status;
}
