/*
 * The kernel body of the top-k conversion (docs/contract.md, "Top-k
 * indices to global KV slots"): every token's K request-local positions
 * become global cache slots. Written once in the dialect; CUDA, HIP and the
 * CPU backend run this code.
 *
 * Work split: a group of `lanes` threads (the block's x dimension) owns one
 * token's row; the row is walked in chunks of lanes x 4 columns, each lane
 * taking four consecutive columns (one 16-byte load where aligned). For
 * compaction the group's lanes add up their valid entries with a prefix
 * sum in block-shared memory, chunk after chunk, so a row's valid slots go
 * in increasing column order on every backend and launch shape; counts
 * alone need one sum over the lanes per row. Rows are taken in block-uniform rounds (every thread of a
 * block runs the same number of rounds and chunks), so the barriers of the
 * prefix sum are reached by all threads. Correct for any block and grid.
 */
#ifndef ATTNMETA_AM_TOPK_KERNEL_H
#define ATTNMETA_AM_TOPK_KERNEL_H

#include "am_dialect.h"
#include "am_token_math.h"
#include "am_topk_params.h"

/* Columns a lane takes per chunk. */
#define AM_TOPK_LANE_COLS 4

/* What a token's row needs, found once per row. */
typedef struct am_topk_row {
  int live;          /* a real token whose request is in [0, R) */
  int counted;       /* live, and its slot (when given) is >= 0 */
  int prefill;       /* 0: decode token; 1: workspace; 2: workspace index >= P */
  int64_t table_off; /* r * block_table_stride (decode tokens) */
  int64_t ws_start;  /* workspace_starts[p] (workspace tokens) */
} am_topk_row;

/* The block-table entry a lane read last: consecutive positions of one
 * block read the table once. */
typedef struct am_topk_cache {
  int64_t blk;
  int64_t id;
} am_topk_cache;

/* The request of token t, or -1 when t is padding or its request is not in
 * [0, R). With qsl: req(t) for t < clamp(qsl[R], 0, T), as the step finds it. */
AM_DEVICE int32_t am_topk_request(const am_topk_params *p, uint32_t t) {
  if (p->num_reqs <= 0) return -1;
  if (p->req_id) {
    const int32_t r = p->req_id[t];
    return r >= 0 && r < p->num_reqs ? r : -1;
  } else {
    /* Guess t * R / T (exact for one token a request, and for equal
     * query lengths), so its boundaries load together with the total and
     * a right guess needs no second round of loads. The guess depends on
     * t, R and T only: every launch shape finds the same request. */
    const uint32_t num_reqs = (uint32_t)p->num_reqs;
    const uint64_t guess = (uint64_t)t * num_reqs / (uint32_t)p->num_tokens;
    const uint32_t g = guess < num_reqs - 1 ? (uint32_t)guess : num_reqs - 1;
    const int32_t total = p->qsl[num_reqs], gs = p->qsl[g], ge = p->qsl[g + 1];
    if ((int32_t)t >= total) return -1; /* padding (total <= t, or total < 0) */
    return am_find_req(p->qsl, num_reqs, t, total, g, gs, ge).req;
  }
}

AM_DEVICE am_topk_row am_topk_row_of(const am_topk_params *p, uint32_t t) {
  am_topk_row row;
  const int32_t r = am_topk_request(p, t);
  row.live = r >= 0;
  row.counted = row.live && !(p->token_slot && p->token_slot[t] < 0);
  row.table_off = row.live ? (int64_t)r * p->block_table_stride : 0;
  row.prefill = 0;
  row.ws_start = 0;
  if (row.live && p->prefill_req) {
    const int32_t w = p->prefill_req[t];
    if (w >= p->num_prefill) {
      row.prefill = 2;
    } else if (w >= 0) {
      row.prefill = 1;
      row.ws_start = p->workspace_starts[w];
    }
  }
  return row;
}

/* The slot of request-local position x of a live row, or -1 (with a flag
 * into *flags where the contract names one). 64-bit arithmetic throughout:
 * no product or sum can overflow. */
AM_DEVICE int32_t am_topk_convert(const am_topk_params *p, const am_topk_row *row, int32_t x,
                                  am_topk_cache *cache, int32_t *flags) {
  int64_t local = x, blk, v;
  if (x < 0) return -1;
  if (p->dcp_world_size > 1) { /* rank (x / I) % W owns x; floor(floor(x / I) / W) = x / (W I) */
    const int64_t by_interleave = am_udiv32(x, p->dcp_interleave);
    const int64_t column = am_udiv32(by_interleave, p->dcp_world_size);
    if (by_interleave - column * p->dcp_world_size != p->dcp_rank) return -1;
    local = column * p->dcp_interleave + (x - by_interleave * p->dcp_interleave);
  }
  blk = am_udiv32(local, p->block_size);
  if (blk >= p->cols) {
    *flags |= ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
    return -1;
  }
  if (row->prefill == 0) {
    if (blk != cache->blk) {
      cache->blk = blk;
      cache->id = p->block_table[row->table_off + blk];
    }
    if (cache->id < 0) {
      *flags |= ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
      return -1;
    }
    v = cache->id * p->stride_rows + (local - blk * p->block_size);
  } else if (row->prefill == 1) {
    v = row->ws_start + x;
  } else {
    *flags |= ATTNMETA_FLAG_WORKSPACE_OUT_OF_RANGE;
    return -1;
  }
  if (v < 0 || v > INT32_MAX) {
    *flags |= ATTNMETA_FLAG_SLOT_OUT_OF_RANGE;
    return -1;
  }
  return (int32_t)v;
}

/* Exclusive prefix sum of `n` over the lanes of the calling thread's group,
 * in lane order; *total receives the group's sum. Hillis-Steele in
 * block-shared `scratch` (block_dim int32): every thread of the block must
 * call it (it holds barriers). */
AM_DEVICE uint32_t am_topk_group_scan(int32_t *scratch, am_thread th, uint32_t n,
                                      uint32_t *total) {
  int32_t *seg = scratch + th.group * th.lanes;
  uint32_t off, incl;
  seg[th.lane] = (int32_t)n;
  for (off = 1; off < th.lanes; off <<= 1) {
    int32_t add;
    AM_BARRIER();
    add = th.lane >= off ? seg[th.lane - off] : 0;
    AM_BARRIER();
    seg[th.lane] += add;
  }
  AM_BARRIER();
  incl = (uint32_t)seg[th.lane];
  *total = (uint32_t)seg[th.lanes - 1];
  AM_BARRIER(); /* the next chunk overwrites scratch */
  return incl - n;
}

/* Loads this lane's (up to) four columns [j0, j0 + 4) of a row; columns at
 * or past K read as -1. */
AM_DEVICE void am_topk_load(const am_topk_params *p, const int32_t *AM_RESTRICT in, uint32_t j0,
                            int32_t x[AM_TOPK_LANE_COLS]) {
  const uint32_t k = (uint32_t)p->topk_count;
  int i;
  if (p->vector_in && j0 + AM_TOPK_LANE_COLS <= k) {
    const am_i32x4 q = *(const am_i32x4 *)(const void *)(in + j0);
    x[0] = q.x;
    x[1] = q.y;
    x[2] = q.z;
    x[3] = q.w;
    return;
  }
  for (i = 0; i < AM_TOPK_LANE_COLS; ++i) x[i] = j0 + i < k ? in[j0 + i] : -1;
}

/* Stores this lane's columns [j0, j0 + 4) of a row in place (those < K). */
AM_DEVICE void am_topk_store(const am_topk_params *p, int32_t *AM_RESTRICT out, uint32_t j0,
                             const int32_t v[AM_TOPK_LANE_COLS]) {
  const uint32_t k = (uint32_t)p->topk_count;
  int i;
  if (p->vector_out && j0 + AM_TOPK_LANE_COLS <= k) {
    am_i32x4 q;
    q.x = v[0];
    q.y = v[1];
    q.z = v[2];
    q.w = v[3];
    *(am_i32x4 *)(void *)(out + j0) = q;
    return;
  }
  for (i = 0; i < AM_TOPK_LANE_COLS; ++i)
    if (j0 + i < k) out[j0 + i] = v[i];
}

/* scratch: block-shared, block_dim int32 (used only when rows are counted). */
AM_DEVICE void am_topk_body(const am_topk_params *p, am_thread th, int32_t *scratch) {
  const uint32_t num_tokens = (uint32_t)p->num_tokens;
  const uint32_t k = (uint32_t)p->topk_count;
  const uint32_t chunk = th.lanes * AM_TOPK_LANE_COLS;
  const int counting = p->valid_count != 0; /* compact implies it (host check) */
  int32_t flags = 0;
  uint32_t first;

  /* Rounds are block-uniform: the whole block runs every round and every
   * chunk, threads without a row included, so the barriers line up. */
  for (first = th.block * th.groups; first < num_tokens; first += th.grid_dim * th.groups) {
    const uint32_t t = first + th.group;
    const int active = t < num_tokens;
    const int32_t *AM_RESTRICT in = p->topk + (active ? (int64_t)t * p->topk_stride : 0);
    int32_t *AM_RESTRICT out = p->out + (active ? (int64_t)t * p->out_stride : 0);
    am_topk_row row;
    am_topk_cache cache;
    uint32_t c0, total = 0, lane_count = 0;
    row.live = row.counted = 0;
    if (active) row = am_topk_row_of(p, t);
    cache.blk = -1;
    cache.id = 0;
    for (c0 = 0; c0 < k; c0 += chunk) {
      const uint32_t j0 = c0 + th.lane * AM_TOPK_LANE_COLS;
      int32_t x[AM_TOPK_LANE_COLS], v[AM_TOPK_LANE_COLS];
      uint32_t n = 0, excl, sum;
      int i;
      for (i = 0; i < AM_TOPK_LANE_COLS; ++i) v[i] = -1;
      if (active && j0 < k) {
        am_topk_load(p, in, j0, x);
        if (row.live)
          for (i = 0; i < AM_TOPK_LANE_COLS; ++i) v[i] = am_topk_convert(p, &row, x[i], &cache, &flags);
        if (!p->compact) am_topk_store(p, out, j0, v);
        if (row.counted)
          for (i = 0; i < AM_TOPK_LANE_COLS; ++i) n += v[i] >= 0;
      }
      lane_count += n;
      if (!p->compact) continue; /* uniform: a launch parameter */
      /* compaction: where this lane's slots go needs the lanes before it */
      excl = am_topk_group_scan(scratch, th, n, &sum);
      if (n > 0) {
        uint32_t at = total + excl; /* < K by construction; checked all the same */
        for (i = 0; i < AM_TOPK_LANE_COLS; ++i)
          if (v[i] >= 0 && at < k) out[at++] = v[i];
      }
      total += sum;
    }
    /* counts without compaction: one sum over the lanes for the whole row */
    if (counting && !p->compact) (void)am_topk_group_scan(scratch, th, lane_count, &total);
    if (active && p->compact)
      for (c0 = total + th.lane; c0 < k; c0 += th.lanes) out[c0] = -1;
    if (active && counting && th.lane == 0) p->valid_count[t] = (int32_t)total;
  }
  if (flags && p->error_word) AM_ATOMIC_OR(p->error_word, flags);
}

#endif /* ATTNMETA_AM_TOPK_KERNEL_H */
