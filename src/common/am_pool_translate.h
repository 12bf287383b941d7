// SPDX-License-Identifier: Apache-2.0
/*
 * The host's translation of a checked attnmeta_pool into the pool
 * kernel's parameters (what no product reads left zero, the counts'
 * defaults filled in). Shared by pool.c and the harnesses that run the
 * kernel body for emulated GPU launch shapes, so both launch the same
 * parameters. Plain C, host only.
 */
#ifndef ATTNMETA_AM_POOL_TRANSLATE_H
#define ATTNMETA_AM_POOL_TRANSLATE_H

#include <string.h>

#include "am_pool_params.h"
#include "attnmeta/attnmeta.h"

static inline am_pool_params am_pool_params_of(const attnmeta_pool *op) {
  am_pool_params p;
  memset(&p, 0, sizeof p);
  p.req_to_token = op->pool_rows > 0 && op->pool_cols > 0 ? op->req_to_token : NULL;
  p.pool_stride = op->req_to_token_stride;
  p.req_pool_indices = op->req_pool_indices;
  p.lengths = op->lengths;
  p.kv_start_idx = op->kv_start_idx;
  p.kv_indptr = op->kv_indptr;
  p.kv_indices = op->kv_indices;
  p.capacity = op->kv_indices ? op->kv_indices_capacity : 0;
  p.kv_indptr_out = op->kv_indptr_out;
  p.page_table = op->page_table;
  p.page_stride = op->page_table_stride;
  p.error_word = op->error_word;
  p.num_reqs = op->num_reqs;
  p.pool_rows = op->pool_rows;
  p.pool_cols = op->pool_cols;
  p.page_size = op->page_size;
  p.page_width = op->page_table_width;
  p.cache_seqlens = op->cache_seqlens;
  p.expanded_lens = op->expanded_lens;
  p.topk_lens = op->topk_lens;
  p.topk_indptr = op->topk_indptr;
  p.topk = op->topk;
  p.topk_pool = op->topk_pool > 1 ? op->topk_pool : 1;
  p.token_table = op->token_table;
  p.token_stride = op->token_table_stride;
  p.token_width = op->token_table_width;
  p.full_to_swa = op->swa_map_len > 0 ? op->full_to_swa : NULL;
  p.swa_map_len = op->swa_map_len;
  p.swa_page_table = op->swa_page_table;
  p.swa_stride = op->swa_page_table_stride;
  p.length_delta = op->length_delta;
  p.rows_per_req = op->rows_per_req > 1 ? op->rows_per_req : 1;
  p.length_cap = op->length_cap;
  p.fill_to_width = op->fill_to_width;
  p.query_lens = op->query_lens;
  p.query_indptr_out = op->query_indptr_out;
  p.query_rows = op->query_rows;
  p.num_rows = op->query_rows ? op->num_reqs
               : op->query_lens ? op->num_rows : (int32_t)((int64_t)op->num_reqs * p.rows_per_req);
  p.dcp_world = op->dcp_world_size > 1 ? op->dcp_world_size : 1;
  p.dcp_rank = p.dcp_world > 1 ? op->dcp_rank : 0;
  p.dcp_interleave = p.dcp_world > 1 && op->dcp_interleave > 1 ? op->dcp_interleave : 1;
  if (op->draft_steps > 0 && (op->draft_kv_indices || op->draft_kv_indptr)) {
    p.draft_positions = op->draft_kv_indptr ? op->draft_positions : NULL;
    p.draft_indices = op->draft_kv_indices;
    p.draft_width = op->draft_kv_indices ? op->draft_kv_indices_width : 0;
    p.draft_indices_stride = op->draft_kv_indices_stride;
    p.draft_indptr = op->draft_kv_indptr;
    p.draft_indptr_stride = op->draft_kv_indptr_stride;
    p.draft_steps = op->draft_steps;
    p.draft_topk = op->draft_topk;
  }
  return p;
}

#endif /* ATTNMETA_AM_POOL_TRANSLATE_H */
