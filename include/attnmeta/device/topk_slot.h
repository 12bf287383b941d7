// SPDX-License-Identifier: Apache-2.0
/*
 * The per-layer top-k conversion (docs/contract.md, "Top-k indices to
 * global KV slots") as device functions an engine calls from its own
 * kernel: a top-k selection or sparse-attention kernel turns each
 * request-local position into its global cache slot where it produces or
 * reads it, with no launch of attnmeta's own. docs/fused.md describes the
 * use.
 *
 * One source for every target: CUDA (nvcc), HIP (hipcc, clang -x hip),
 * and host C11 / C++ (the CPU backend's way of running, and HIP-CPU). The
 * functions are __host__ __device__ on the GPU compilers, static inline
 * elsewhere. They read the same attnmeta_topk that attnmeta_convert_topk
 * takes (by pointer: pass the struct to the kernel by value) and give the
 * same values and flags, bit for bit. Nothing here allocates, prints or
 * synchronises.
 *
 * Safety: the pointers and the sizes of op are trusted as they would be
 * after attnmeta_convert_topk's host checks (the block table holds R rows
 * of block_table_stride >= cols entries; req_id, prefill_req and
 * token_slot hold T entries; workspace_starts P). The device data is not:
 * any contents of topk values, req_id, query_start_loc, the block table,
 * prefill_req and workspace_starts stay in bounds and free of undefined
 * behaviour. Scalar settings attnmeta_convert_topk refuses (block_size < 1,
 * stride_rows < 0, dcp_world_size < 1, dcp_interleave < 1, dcp_rank
 * outside [0, dcp_world_size), negative sizes, a peer view whose slots pass
 * int32) make every entry -1. The rotated peer table (peer_table_out) is
 * attnmeta_convert_topk's alone.
 */
#ifndef ATTNMETA_DEVICE_TOPK_SLOT_H
#define ATTNMETA_DEVICE_TOPK_SLOT_H

#include <stdint.h>

#include "../attnmeta.h"

/* ---- portability prelude ---- */
#if defined(__CUDACC__) || ((defined(__HIPCC__) || defined(__HIP__)) && !defined(__HIP_CPU_RT__))
#  if defined(__HIP__) && !defined(__CUDACC__)
#    include <hip/hip_runtime.h>
#  endif
#  define ATTNMETA_DEVICE_FN static inline __host__ __device__
#else
/* Host C and C++ (HIP-CPU included: its kernels are host functions). */
#  define ATTNMETA_DEVICE_FN static inline
#endif
/* The library's own choice of atomic: the vendor's atomicOr in device
 * code, a relaxed host atomic elsewhere. */
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#  define ATTNMETA_DEVICE_ATOMIC_OR(ptr, value) ((void)atomicOr((ptr), (value)))
#else
#  define ATTNMETA_DEVICE_ATOMIC_OR(ptr, value) ((void)__atomic_fetch_or((ptr), (value), __ATOMIC_RELAXED))
#endif

#ifdef __cplusplus
extern "C++" {
#endif

/* What one token's entries need, found once per token by
 * attnmeta_topk_token_of. */
typedef struct attnmeta_topk_token {
  int32_t live;      /* a token of [0, T) before the padding, request in [0, R) */
  int32_t counted;   /* live, and token_slot (when given) is >= 0 */
  int32_t workspace; /* 0: decode token; 1: prefill workspace; 2: workspace index >= P */
  int32_t request;   /* the token's request, -1 when not live */
  int64_t table_off; /* request * block_table_stride */
  int64_t ws_start;  /* workspace_starts[p] of a workspace token */
} attnmeta_topk_token;

/* 1 when op's scalar settings are ones attnmeta_convert_topk accepts. */
ATTNMETA_DEVICE_FN int attnmeta_topk_settings_usable(const attnmeta_topk *op) {
  const int64_t stride_rows = op->stride_rows > 0 ? op->stride_rows : op->block_size;
  return op->num_tokens >= 0 && op->num_reqs >= 0 && op->block_table_cols >= 0 &&
         op->num_prefill >= 0 && op->block_size >= 1 && op->stride_rows >= 0 &&
         op->dcp_world_size >= 1 && op->dcp_interleave >= 1 && op->dcp_rank >= 0 &&
         op->dcp_rank < op->dcp_world_size && op->peer_blocks >= 0 &&
         op->peer_blocks <= (int64_t)INT32_MAX / op->dcp_world_size / stride_rows;
}

/* The request of token t, or -1 for a token outside [0, T), a padding
 * token (t >= query_start_loc[R]) or a request outside [0, R). With
 * query_start_loc: the smallest r with query_start_loc[r + 1] > t (a
 * binary search; boundaries that are not well formed give some request in
 * [0, R), never a read out of bounds). */
ATTNMETA_DEVICE_FN int32_t attnmeta_topk_request_of(const attnmeta_topk *op, int32_t t) {
  int32_t lo = 0, hi = op->num_reqs - 1;
  if (t < 0 || t >= op->num_tokens || op->num_reqs <= 0) return -1;
  if (op->req_id) {
    const int32_t r = op->req_id[t];
    return r >= 0 && r < op->num_reqs ? r : -1;
  }
  if (!op->query_start_loc || t >= op->query_start_loc[op->num_reqs]) return -1;
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (op->query_start_loc[mid + 1] > t) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* Everything about token t that its entries share. */
ATTNMETA_DEVICE_FN attnmeta_topk_token attnmeta_topk_token_of(const attnmeta_topk *op, int32_t t) {
  attnmeta_topk_token tok;
  const int32_t r = attnmeta_topk_settings_usable(op) ? attnmeta_topk_request_of(op, t) : -1;
  tok.live = r >= 0;
  tok.request = r;
  tok.counted = tok.live && !(op->token_slot && op->token_slot[t] < 0);
  tok.workspace = 0;
  tok.table_off = tok.live ? (int64_t)r * op->block_table_stride : 0;
  tok.ws_start = 0;
  if (tok.live && op->prefill_req) {
    const int32_t w = op->prefill_req[t];
    if (w >= op->num_prefill) {
      tok.workspace = 2;
    } else if (w >= 0) {
      tok.workspace = 1;
      tok.ws_start = op->workspace_starts[w];
    }
  }
  return tok;
}

/* The global slot of request-local position x of a token (tok from
 * attnmeta_topk_token_of), or -1 when the entry is invalid. The flags the
 * contract names for it (ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE,
 * _BLOCK_ID_NEGATIVE, _WORKSPACE_OUT_OF_RANGE, _SLOT_OUT_OF_RANGE) are
 * OR-ed into *flags, a value the calling thread keeps (no atomic here):
 * hand it to attnmeta_topk_flags_publish once, at the end. */
ATTNMETA_DEVICE_FN int32_t attnmeta_topk_slot(const attnmeta_topk *op, const attnmeta_topk_token *tok,
                                              int32_t x, int32_t *flags) {
  uint32_t local = (uint32_t)x, blk, off, owner = 0;
  const uint32_t block_size = (uint32_t)op->block_size;
  const uint32_t stride_rows = (uint32_t)(op->stride_rows > 0 ? op->stride_rows : op->block_size);
  int32_t id;
  uint64_t slot;
  if (!tok->live || x < 0) return -1;
  if (tok->workspace == 2) {
    *flags |= ATTNMETA_FLAG_WORKSPACE_OUT_OF_RANGE;
    return -1;
  }
  if (tok->workspace == 1) { /* the raw position: no DCP ownership, no table bound */
    const int64_t row = tok->ws_start + x;
    if (row < 0 || row > INT32_MAX) {
      *flags |= ATTNMETA_FLAG_SLOT_OUT_OF_RANGE;
      return -1;
    }
    return (int32_t)row;
  }
  if (op->dcp_world_size > 1) { /* rank (x / I) % W owns x; another rank's entry: no flag */
    const uint32_t interleave = (uint32_t)op->dcp_interleave;
    const uint32_t world = (uint32_t)op->dcp_world_size;
    const uint32_t by_interleave = local / interleave;
    const uint32_t column = by_interleave / world;
    owner = by_interleave - column * world;
    /* a peer view keeps every rank's entries (contract section 6c) */
    if (op->peer_blocks == 0 && owner != (uint32_t)op->dcp_rank) return -1;
    local = column * interleave + (local - by_interleave * interleave);
  }
  blk = local / block_size;
  off = local - blk * block_size;
  if (blk >= (uint32_t)op->block_table_cols) {
    *flags |= ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
    return -1;
  }
  id = op->block_table[tok->table_off + blk];
  if (id < 0 || (op->peer_blocks > 0 && id >= op->peer_blocks)) {
    *flags |= ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
    return -1;
  }
  /* a peer view: the id in its owner's segment of peer_blocks ids */
  slot = ((uint64_t)owner * (uint64_t)op->peer_blocks + (uint32_t)id) * stride_rows + off;
  if (slot > (uint64_t)INT32_MAX) {
    *flags |= ATTNMETA_FLAG_SLOT_OUT_OF_RANGE;
    return -1;
  }
  return (int32_t)slot;
}

/* Part of row t, in place: out[t][j] = the slot of topk[t][j] for
 * j = first, first + step, ... below K (so `lanes` threads sharing a row
 * pass first = lane, step = lanes). Returns how many of those entries are
 * valid when the token is counted, else 0: the row's valid_count is the
 * sum over its threads. Nothing is written for t outside [0, T) or
 * step < 1. */
ATTNMETA_DEVICE_FN int32_t attnmeta_topk_slot_row_part(const attnmeta_topk *op, int32_t t, int32_t first,
                                                       int32_t step, int32_t *flags) {
  const attnmeta_topk_token tok = attnmeta_topk_token_of(op, t);
  int32_t j, n = 0;
  if (t < 0 || t >= op->num_tokens || step < 1 || first < 0) return 0;
  for (j = first; j < op->topk_count; j += step) {
    const int32_t v = attnmeta_topk_slot(op, &tok, op->topk[(int64_t)t * op->topk_stride + j], flags);
    op->out[(int64_t)t * op->out_stride + j] = v;
    n += v >= 0;
  }
  return tok.counted ? n : 0;
}

/* All of row t by one thread, as attnmeta_convert_topk makes it: in place,
 * or compacted (op->compact: the valid slots in column order, then -1),
 * and valid_count[t] when op->valid_count is given. Nothing is written for
 * t outside [0, T). */
ATTNMETA_DEVICE_FN void attnmeta_topk_slot_row(const attnmeta_topk *op, int32_t t, int32_t *flags) {
  const attnmeta_topk_token tok = attnmeta_topk_token_of(op, t);
  const int32_t *in;
  int32_t *out, j, n = 0;
  if (t < 0 || t >= op->num_tokens) return;
  in = op->topk + (int64_t)t * op->topk_stride;
  out = op->out + (int64_t)t * op->out_stride;
  for (j = 0; j < op->topk_count; ++j) {
    const int32_t v = attnmeta_topk_slot(op, &tok, in[j], flags);
    if (!op->compact) out[j] = v;
    else if (v >= 0 && tok.counted) out[n] = v;
    n += v >= 0 && tok.counted;
  }
  for (j = n; op->compact && j < op->topk_count; ++j) out[j] = -1;
  if (op->valid_count) op->valid_count[t] = n;
}

/* ORs a thread's flags into the error word (NULL: none), once per thread. */
ATTNMETA_DEVICE_FN void attnmeta_topk_flags_publish(int32_t *error_word, int32_t flags) {
  if (flags && error_word) ATTNMETA_DEVICE_ATOMIC_OR(error_word, flags);
}

#ifdef __cplusplus
}
#endif

#endif /* ATTNMETA_DEVICE_TOPK_SLOT_H */
