// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta_build_pool_indices: SGLang's index buffers from its request
 * pool. Checks every host argument (writing nothing on error), turns the
 * public operation into kernel parameters, picks the launch shape, and
 * makes the one launch.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "am_context.h"
#include "am_op_launch.h"
#include "am_overlap.h"
#include "am_pool_counts.h"
#include "am_pool_translate.h"
#include "am_schema_check.h"
#include "am_sized_struct.h"

/* GPU blocks: AM_POOL_GPU_LANES lanes a work item (a slice of a request
 * row, its entries copied at that stride), AM_POOL_GPU_GROUPS items a
 * block. Rows are cut into slices of about AM_POOL_GPU_SLICE entries;
 * where that leaves fewer items than the processors' blocks hold, into
 * more, down to AM_POOL_GPU_MIN_SLICE entries (one a lane), so that one
 * long row is copied by many processors rather than one. */
#define AM_POOL_GPU_LANES 64
#define AM_POOL_GPU_GROUPS 4
#define AM_POOL_GPU_SLICE 256
#define AM_POOL_GPU_MIN_SLICE 64
/* Long rows of a large batch: no more slices than about this many items a
 * block slot of the device, so that each item's share of the block's scan
 * and request loads is spread over more entries. */
#define AM_POOL_GPU_WAVES 4
/* The kernel cuts slices of whole multiples of this many entries. */
#define AM_POOL_SLICE_GRAIN 32

static const attnmeta_pool pool_defaults = {
    .struct_size = sizeof(attnmeta_pool),
    .page_size = 1,
};

/* First released in 0.3.0 ending at error_word (sized_struct.c lists the sizes accepted). */
static const am_sized_type pool_type =
    AM_SIZED_TYPE(pool, offsetof(attnmeta_pool, error_word) + sizeof(int32_t *), &pool_defaults);

attnmeta_status attnmeta_pool_init_size(attnmeta_pool *op, size_t size) {
  return am_sized_init(&pool_type, op, size);
}

#define POOL_FLOOR_(c, type, member, role, extent, products, rule) AM_CHECK_FLOOR_##role(member, rule)
static attnmeta_status check_sizes(const am_check_scope *sc, const attnmeta_pool *b) {
  attnmeta_status st;
  AM_POOL_FIELDS(POOL_FLOOR_, _)
  return ATTNMETA_OK;
}

/* Every buffer of the schema (am_schema_check.h), then the rules between
 * buffers. An empty array may be NULL: nothing is read from it or written
 * to it. */
#define POOL_CHECK_(c, type, member, role, extent, products, rule) \
  AM_CHECK_##role(member, products, rule, AM_CHECK_##extent)
static attnmeta_status check_buffers(const am_check_scope *sc, const attnmeta_pool *b,
                                     const am_pool_counts *k) {
  attnmeta_status st;
  AM_POOL_FIELDS(POOL_CHECK_, _)
  if (!(sc->wanted & ~AM_P_ALWAYS))
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool: no output given (kv_indices, kv_indptr_out, page_table, cache_seqlens, "
                   "expanded_lens, query_indptr_out, topk_lens, topk_indptr, token_table, "
                   "swa_page_table, draft_kv_indices or draft_kv_indptr)");
  if (b->fill_to_width != 0 && b->fill_to_width != 1)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "pool.fill_to_width (%d) must be 0 or 1",
                   b->fill_to_width);
  if ((b->topk_lens || b->topk_indptr) && b->topk < 1)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool.topk (%d) must be >= 1 with topk_lens or topk_indptr", b->topk);
  if (b->query_lens && b->rows_per_req > 1)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool.query_lens and pool.rows_per_req (%d) are both given: give one",
                   b->rows_per_req);
  if (b->query_rows != 0 && b->query_rows != 1)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool.query_rows (%d) must be 0 (a table row per query row) or 1 (one per "
                   "request)", b->query_rows);
  if (b->query_rows && (b->expanded_lens || b->topk_lens || b->topk_indptr))
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool.query_rows 1 (one table row per request) does not combine with "
                   "expanded_lens, topk_lens or topk_indptr (a row per query row)");
  if ((!b->query_lens || b->query_rows) && b->num_rows != 0)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool.num_rows (%d) is given without pool.query_lens, or with query_rows 1 "
                   "(its tables have num_reqs rows)", b->num_rows);
  if (k->T > INT32_MAX)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool: num_reqs x rows_per_req (%lld) rows exceed INT32_MAX", (long long)k->T);
  if (b->kv_indices && b->kv_indptr && b->kv_indptr_out)
    return am_fail(sc->ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool.kv_indptr and pool.kv_indptr_out are both given: kv_indptr_out places "
                   "the rows of kv_indices, give one");
  if (b->kv_indices && !b->kv_indptr && !b->kv_indptr_out && b->num_reqs > 0)
    return am_fail(sc->ctx, ATTNMETA_ERR_NULL_POINTER,
                   "pool.kv_indices is given but neither pool.kv_indptr nor pool.kv_indptr_out: "
                   "the rows need their places");
  if (b->kv_indices_capacity > 0 && !b->kv_indices)
    return am_fail(sc->ctx, ATTNMETA_ERR_NULL_POINTER,
                   "pool.kv_indices_capacity is %lld but pool.kv_indices is NULL",
                   (long long)b->kv_indices_capacity);
  return ATTNMETA_OK;
}

/* No output may share a byte with an input or another output (overlap.c):
 * each buffer of the schema with exactly the bytes the operation reads or
 * writes (am_schema_overlap.h). */
#define POOL_ADD_(c, type, member, role, extent, products, rule) \
  AM_OVERLAP_ADD_##role(#member, member, products, extent)
static attnmeta_status check_overlaps(attnmeta_context *ctx, const attnmeta_pool *b,
                                      const am_pool_counts *k, unsigned wanted) {
  am_extent list[AM_POOL_BUFFERS];
  int count = 0, *n = &count;
  AM_POOL_FIELDS(POOL_ADD_, _)
  return am_check_extents(ctx, list, count);
}

/* The draft lists' settings (docs/contract.md section 14), before their
 * extents are counted: they are built alone, in their own launch shape. */
#define POOL_DRAFT_MAX 1024
#define POOL_DRAFT_MAX_WIDTH ((int64_t)1 << 40)
static attnmeta_status check_draft(attnmeta_context *ctx, const attnmeta_pool *b) {
  const unsigned others = am_pool_products(b) & ~(AM_P(POOL_DRAFT) | AM_P_ALWAYS);
  const int64_t tokens = (int64_t)b->num_reqs * b->draft_topk;
  if (b->draft_steps < 0 || b->draft_steps > POOL_DRAFT_MAX)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "pool.draft_steps (%d) must be in [0, %d]",
                   b->draft_steps, POOL_DRAFT_MAX);
  if (!b->draft_kv_indices && !b->draft_kv_indptr) return ATTNMETA_OK;
  if (b->draft_steps == 0)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool.draft_kv_indices or pool.draft_kv_indptr is given with draft_steps 0: "
                   "give draft_steps >= 1");
  if (others)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool: the draft lists (draft_kv_indices, draft_kv_indptr) are built alone, in "
                   "their own launch; give the other outputs in another call");
  if (b->draft_topk < 1 || b->draft_topk > POOL_DRAFT_MAX)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "pool.draft_topk (%d) must be in [1, %d]",
                   b->draft_topk, POOL_DRAFT_MAX);
  if (b->kv_start_idx)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool.kv_start_idx is not read by the draft lists (they read every row from "
                   "column 0): give NULL");
  if (tokens + 1 > INT32_MAX)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool: num_reqs x draft_topk (%lld) draft tokens exceed INT32_MAX - 1",
                   (long long)tokens);
  if (b->draft_kv_indices && b->draft_kv_indices_width > POOL_DRAFT_MAX_WIDTH)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool.draft_kv_indices_width (%lld) exceeds 2^40 entries",
                   (long long)b->draft_kv_indices_width);
  if (b->draft_kv_indptr) {
    if (b->draft_kv_indptr_stride < tokens + 1)
      return am_fail(ctx, ATTNMETA_ERR_STRIDE,
                     "pool.draft_kv_indptr_stride (%lld) < num_reqs x draft_topk + 1 (%lld)",
                     (long long)b->draft_kv_indptr_stride, (long long)tokens + 1);
    if (b->draft_kv_indptr_stride > (INT64_MAX / 8) / POOL_DRAFT_MAX)
      return am_fail(ctx, ATTNMETA_ERR_OVERFLOW,
                     "pool.draft_kv_indptr_stride (%lld) overflows 64-bit byte offsets",
                     (long long)b->draft_kv_indptr_stride);
    if (!b->draft_positions && tokens > 0)
      return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER,
                     "pool.draft_positions is NULL but pool.draft_kv_indptr reads it");
  }
  return ATTNMETA_OK;
}

/* The DCP form's settings (docs/contract.md section 15): a world of W
 * ranks, this one k, runs of I positions; W of 0 or 1 is off. */
#define POOL_DCP_MAX 65536
static attnmeta_status check_dcp(attnmeta_context *ctx, const attnmeta_pool *b) {
  const int32_t world = b->dcp_world_size;
  if (world < 0 || world > POOL_DCP_MAX)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool.dcp_world_size (%d) must be in [0, %d] (0 or 1: no DCP)", world,
                   POOL_DCP_MAX);
  if (b->dcp_interleave < 0 || b->dcp_interleave > POOL_DCP_MAX)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool.dcp_interleave (%d) must be in [0, %d] (0: 1)", b->dcp_interleave,
                   POOL_DCP_MAX);
  if (world <= 1) {
    if (b->dcp_rank != 0)
      return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                     "pool.dcp_rank (%d) is given without dcp_world_size > 1", b->dcp_rank);
    return ATTNMETA_OK;
  }
  if (b->dcp_rank < 0 || b->dcp_rank >= world)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool.dcp_rank (%d) must be in [0, dcp_world_size = %d)", b->dcp_rank, world);
  if (b->swa_page_table || b->swa_map_len > 0)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool: swa_page_table (full_to_swa) does not combine with DCP "
                   "(dcp_world_size %d): its map is of global slots",
                   world);
  if (b->draft_kv_indices || b->draft_kv_indptr)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "pool: the draft lists do not combine with DCP (dcp_world_size %d)", world);
  return ATTNMETA_OK;
}

static attnmeta_status check_pool(attnmeta_context *ctx, const attnmeta_pool *op) {
  attnmeta_status st = check_draft(ctx, op);
  const am_pool_counts counts = am_pool_counts_of(op, op->query_lens != NULL);
  const am_check_scope scope = {ctx, "pool.", am_pool_products(op), 1};
  if (st != ATTNMETA_OK) return st;
  st = check_dcp(ctx, op);
  if (st != ATTNMETA_OK) return st;
  st = check_sizes(&scope, op);
  if (st != ATTNMETA_OK) return st;
  st = check_buffers(&scope, op, &counts);
  if (st != ATTNMETA_OK) return st;
  return check_overlaps(ctx, op, &counts, scope.wanted);
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The most entries a request's row may give one table row or kv_indices
 * (the lengths are device data: kv_indices' rows are taken at their mean,
 * the capacity over the requests). */
static int64_t widest_row(const am_pool_params *p) {
  int64_t w = 0;
  if ((p->page_table || p->swa_page_table) && p->page_width > w) w = p->page_width;
  if (p->token_table && p->token_width > w) w = p->token_width;
  if (p->kv_indices && p->num_reqs > 0 && ceil_div(p->capacity, p->num_reqs) > w)
    w = ceil_div(p->capacity, p->num_reqs);
  return w;
}

/* Slices a request row (row_chunks): a forced grid of more blocks than the
 * requests fill gives the spare blocks slices; else one on the CPU, and on
 * the GPUs slices of AM_POOL_GPU_SLICE entries or more (no more items than
 * AM_POOL_GPU_WAVES a block slot), more where the items would leave
 * processors idle. At most one a AM_POOL_SLICE_GRAIN entries of the
 * widest row, and B x C <= 2^31. */
static int64_t plan_chunks(const attnmeta_context *ctx, int is_cpu, int64_t forced_grid,
                           int64_t groups, const am_pool_params *p) {
  const int64_t reqs = p->num_reqs, widest = widest_row(p);
  int64_t c;
  if (reqs < 1) return 1;
  if (forced_grid > 0) {
    c = ceil_div(forced_grid * groups, reqs);
  } else if (is_cpu) {
    c = 1;
  } else {
    const int64_t fill = (int64_t)ctx->processors * groups;
    c = min64(ceil_div(widest, AM_POOL_GPU_SLICE), ceil_div(fill * AM_POOL_GPU_WAVES, reqs));
    if (reqs * c < fill)
      c = min64(ceil_div(widest, AM_POOL_GPU_MIN_SLICE), ceil_div(fill, reqs));
  }
  c = min64(c, max64(ceil_div(widest, AM_POOL_SLICE_GRAIN), 1));
  c = min64(c, AM_MAX_GRID_THREADS / reqs);
  return c > 1 ? c : 1;
}

/* A group of lanes a work item, groups filling the block, a grid covering
 * the items (bounded on the GPUs, one block on the CPU). The kernel is
 * correct for any shape and any row_chunks; the launch configuration's
 * block, grid and lanes are honoured. */
static am_launch_shape plan_launch(const attnmeta_context *ctx, am_pool_params *p) {
  const attnmeta_launch_config *cfg = &ctx->config;
  const int is_cpu = ctx->kind == ATTNMETA_BACKEND_CPU;
  am_launch_shape shape;
  int64_t lanes, block, chunks, grid;
  memset(&shape, 0, sizeof shape);
  if (cfg->block > 0) block = cfg->block;
  else block = is_cpu ? 1 : AM_POOL_GPU_LANES * AM_POOL_GPU_GROUPS;
  lanes = cfg->lanes > 0 ? cfg->lanes : (is_cpu ? 1 : AM_POOL_GPU_LANES);
  lanes = lanes < block ? lanes : block;
  shape.lanes = lanes;
  shape.groups = block / lanes;
  shape.shared_bytes = 0;
  /* a forced grid, as bounded, decides the slices */
  grid = am_op_grid(ctx, is_cpu, cfg->grid, shape.lanes * shape.groups, shape.groups,
                    p->num_reqs);
  chunks = plan_chunks(ctx, is_cpu, cfg->grid > 0 ? grid : 0, shape.groups, p);
  p->row_chunks = (int32_t)chunks;
  shape.grid = am_op_grid(ctx, is_cpu, cfg->grid, shape.lanes * shape.groups, shape.groups,
                          p->num_reqs * chunks);
  return shape;
}

attnmeta_status attnmeta_build_pool_indices(attnmeta_context *ctx, const attnmeta_pool *op,
                                            void *stream) {
  attnmeta_status status;
  attnmeta_pool full; /* the caller's operation, defaults past its struct_size */
  am_pool_params params;
  am_launch_shape shape;
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  if (!op) return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER, "pool operation is NULL");
  status = am_sized_import(ctx, &pool_type, op, &full);
  if (status != ATTNMETA_OK) return status;
  op = &full;
  status = check_pool(ctx, op);
  if (status != ATTNMETA_OK) return status;
  if (!am_backend_has(ctx->table, launch_pool))
    return am_fail_module_predates(
        ctx, "pool", offsetof(am_backend_table, launch_pool) + sizeof ctx->table->launch_pool);
  /* nothing to write: no row, and no leading 0 of a prefix sum */
  if (op->num_reqs == 0 && !op->kv_indptr_out && !op->topk_indptr && !op->query_indptr_out &&
      !op->draft_kv_indptr)
    return am_succeed(ctx);
  params = am_pool_params_of(op);
  shape = plan_launch(ctx, &params);
  status = (attnmeta_status)ctx->table->launch_pool(ctx->state, &params, &shape, stream,
                                                    am_message(ctx), AM_MESSAGE_SIZE);
  return status == ATTNMETA_OK ? am_succeed(ctx) : status;
}
