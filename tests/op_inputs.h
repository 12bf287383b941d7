// SPDX-License-Identifier: Apache-2.0
/*
 * What most tests give attnmeta_step, attnmeta_topk and attnmeta_pool, one call a group
 * of fields; the settings a test needs besides stay its own lines.
 * Header-only, for C and C++ (the suite, tests/gpu, tests/stress, the fuzz
 * harnesses).
 */
#ifndef ATTNMETA_TESTS_OP_INPUTS_H
#define ATTNMETA_TESTS_OP_INPUTS_H

#include <stdint.h>

#include "attnmeta/attnmeta.h"

/* attnmeta_step_init, then R requests (qsl: R + 1 entries) of T tokens
 * into outputs of C rows. */
static inline void amt_step_tokens(attnmeta_step *s, const int32_t *qsl, int32_t R, int32_t T,
                                   int32_t C) {
  attnmeta_step_init(s);
  s->query_start_loc = qsl;
  s->num_reqs = R;
  s->num_tokens = T;
  s->capacity = C;
}

/* The requests' lengths and their block table: cols columns a request,
 * rows `stride` apart, blocks of block_size tokens. */
static inline void amt_step_table(attnmeta_step *s, const int32_t *seq_lens, const int32_t *table,
                                  int32_t cols, int64_t stride, int32_t block_size) {
  s->seq_lens = seq_lens;
  s->block_table = table;
  s->block_table_cols = cols;
  s->block_table_stride = stride;
  s->block_size = block_size;
}

/* The SWA rows (contract section 7): a table of cols columns a request
 * (stride cols), rows of `width` entries rows_stride apart, their lengths. */
static inline void amt_step_swa(attnmeta_step *s, const int32_t *table, int32_t cols,
                                int32_t block_size, int32_t window, int32_t width, int32_t mode,
                                int32_t *rows, int64_t rows_stride, int32_t *lens) {
  s->swa_block_table = table;
  s->swa_block_table_cols = cols;
  s->swa_block_table_stride = cols;
  s->swa_block_size = block_size;
  s->swa_window = window;
  s->swa_width = width;
  s->swa_mode = mode;
  s->swa_indices = rows;
  s->swa_indices_stride = rows_stride;
  s->swa_lens = lens;
}

/* The step's outputs but the block table's copy and the error word, in
 * the order of attnmeta_step (NULL: not wanted). */
static inline void amt_step_outputs(attnmeta_step *s, int32_t *token_to_req, int32_t *seq_lens_out,
                                    int32_t *global_seq_lens_out, int32_t *decode_lens_out,
                                    int32_t *req_indices_out, int32_t *per_req_lens_out,
                                    int64_t *positions, int64_t *slot_mapping) {
  s->token_to_req = token_to_req;
  s->seq_lens_out = seq_lens_out;
  s->global_seq_lens_out = global_seq_lens_out;
  s->decode_lens_out = decode_lens_out;
  s->req_indices_out = req_indices_out;
  s->per_req_lens_out = per_req_lens_out;
  s->positions = positions;
  s->slot_mapping = slot_mapping;
}

/* attnmeta_topk_init, then T rows of K indices converted into out (rows K
 * apart in both). */
static inline void amt_topk_rows(attnmeta_topk *op, const int32_t *topk, int32_t T, int32_t K,
                                 int32_t *out) {
  attnmeta_topk_init(op);
  op->topk = topk;
  op->topk_stride = op->out_stride = K;
  op->num_tokens = T;
  op->topk_count = K;
  op->out = out;
}

/* Token t's request is req_id[t] (NULL: the caller gives query_start_loc
 * instead), of R; their block table has cols columns a request, rows cols
 * apart, blocks of block_size positions. */
static inline void amt_topk_table(attnmeta_topk *op, const int32_t *req_id, int32_t R,
                                  const int32_t *table, int32_t cols, int32_t block_size) {
  op->req_id = req_id;
  op->num_reqs = R;
  op->block_table = table;
  op->block_table_stride = op->block_table_cols = cols;
  op->block_size = block_size;
}

/* Decode context parallelism: rank `rank` of `world`, runs of
 * `interleave` positions. */
static inline void amt_topk_dcp(attnmeta_topk *op, int32_t world, int32_t rank, int32_t interleave) {
  op->dcp_world_size = world;
  op->dcp_rank = rank;
  op->dcp_interleave = interleave;
}

/* Prefill tokens read the workspace: prefill_req[t] (or -1) indexes the
 * workspace_starts of num_prefill requests. */
static inline void amt_topk_prefill(attnmeta_topk *op, const int32_t *prefill_req,
                                    const int32_t *workspace_starts, int32_t num_prefill) {
  op->prefill_req = prefill_req;
  op->workspace_starts = workspace_starts;
  op->num_prefill = num_prefill;
}

/* attnmeta_pool_init, then SGLang's req_to_token pool: `rows` rows of
 * `cols` token slots, `stride` apart. */
static inline void amt_pool_table(attnmeta_pool *op, const int32_t *pool, int32_t rows,
                                  int32_t cols, int64_t stride) {
  attnmeta_pool_init(op);
  op->req_to_token = pool;
  op->req_to_token_stride = stride;
  op->pool_rows = rows;
  op->pool_cols = cols;
}

/* B request rows: row i reads pool row rpi[i] for len[i] tokens. */
static inline void amt_pool_reqs(attnmeta_pool *op, const int64_t *rpi, const int64_t *len,
                                 int32_t B) {
  op->req_pool_indices = rpi;
  op->lengths = len;
  op->num_reqs = B;
}

/* The slot list: row i's slots at kv_indices[kv_indptr[i]...], at most
 * `capacity` entries written. */
static inline void amt_pool_slots(attnmeta_pool *op, const int32_t *kv_indptr, int32_t *kv_indices,
                                  int64_t capacity) {
  op->kv_indptr = kv_indptr;
  op->kv_indices = kv_indices;
  op->kv_indices_capacity = capacity;
}

#endif /* ATTNMETA_TESTS_OP_INPUTS_H */
