// SPDX-License-Identifier: Apache-2.0
/*
 * The kernel body of the top-k conversion (docs/contract.md, "Top-k
 * indices to global KV slots"): every token's K request-local positions
 * become global cache slots. Written once in the dialect; CUDA, HIP and the
 * CPU backend run this code.
 *
 * Work split: a group of `lanes` threads (the block's x dimension) owns one
 * token's row; the row is walked in chunks of lanes x 4 columns, each lane
 * taking four consecutive columns (one 16-byte load where aligned). The
 * schedule keeps a row's dependent loads few and overlapped: the first
 * chunk's positions load together with the request lookup, the next
 * chunk's while this one converts, and a lane's four block-table loads
 * together. For compaction the group's lanes add up their valid entries
 * with a two-level prefix sum in block-shared memory (two barriers a
 * chunk), so a row's valid slots go in increasing column order on every
 * backend and launch shape; counts alone need one sum per row (its total
 * only), and a plain conversion needs no barrier. Rows are taken in
 * block-uniform rounds (every thread of a block runs the same number of
 * rounds and chunks), so the barriers are reached by all threads. Correct
 * for any block and grid.
 */
#ifndef ATTNMETA_AM_TOPK_KERNEL_H
#define ATTNMETA_AM_TOPK_KERNEL_H

#include "am_dialect.h"
#include "am_token_math.h"
#include "am_topk_columns.h"
#include "am_topk_params.h"
#include "am_topk_request.h"
#include "am_topk_rows_kernel.h"

/* What a token's row needs, found once per row. */
typedef struct am_topk_row {
  int live;          /* a real token whose request is in [0, R) */
  int counted;       /* live, and its slot (when given) is >= 0 */
  int prefill;       /* 0: decode token; 1: workspace; 2: workspace index >= P */
  int64_t table_off; /* r * block_table_stride (decode tokens) */
  int64_t ws_start;  /* workspace_starts[p] (workspace tokens) */
} am_topk_row;

/* `lean`: AM_TOPK_PLAIN's launch (decode rows: no workspace); `counts`:
 * rows are counted. */
AM_DEVICE am_topk_row am_topk_row_of(const am_topk_params *p, uint32_t t, int lean, int counts) {
  am_topk_row row;
  const int32_t r = am_topk_request(p, t);
  row.live = r >= 0;
  row.counted = counts && row.live && !(p->token_slot && p->token_slot[t] < 0);
  row.table_off = row.live ? (int64_t)r * p->block_table_stride : 0;
  row.prefill = 0;
  row.ws_start = 0;
  if (!lean && row.live && p->prefill_req) {
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

/* How a request-local position splits into its table block and the
 * offset in it: a shift and a mask when the block size is a power of two
 * (the usual case), a division otherwise. Found once per thread. */
typedef struct am_topk_split {
  uint32_t block_size;
  uint32_t shift; /* log2(block_size) when pow2 */
  int pow2;
} am_topk_split;

AM_DEVICE am_topk_split am_topk_split_of(const am_topk_params *p) {
  am_topk_split d;
  d.block_size = (uint32_t)p->block_size;
  d.pow2 = (d.block_size & (d.block_size - 1)) == 0;
  d.shift = am_ctz32(d.block_size);
  return d;
}

/* Slots of a lane's four request-local positions x[0..3] of a row, -1
 * where there is none (with a flag into *flags where the contract names
 * one). Branch-free over the four columns (selects and predicated loads;
 * the branches left are uniform over a row), so the four columns'
 * instructions interleave: a row of few tokens is a chain of dependent
 * instructions, not of memory. The four block-table loads depend on the
 * positions alone, never on each other; a column in the same table block
 * as the column before it takes that column's id. 32-bit arithmetic where
 * the values allow it (positions, blocks and offsets are below 2^31), one
 * 32 x 32 -> 64-bit product for the slot: no product or sum overflows.
 * A workspace row is addressed by the raw position: neither DCP ownership
 * nor the table's bound applies to it. */
AM_DEVICE void am_topk_convert4(const am_topk_params *p, const am_topk_row *row,
                                am_topk_split d, int lean, const int32_t x[AM_TOPK_LANE_COLS],
                                int32_t v[AM_TOPK_LANE_COLS], int32_t *flags) {
  uint32_t local[AM_TOPK_LANE_COLS], blk[AM_TOPK_LANE_COLS], off[AM_TOPK_LANE_COLS];
  uint32_t owner[AM_TOPK_LANE_COLS]; /* the rank of x (a peer view's segment) */
  int ok[AM_TOPK_LANE_COLS]; /* a position this rank looks up in the row's table */
  /* a peer view keeps every rank's entries, each in its rank's segment (6c) */
  const int64_t peer = lean ? 0 : p->peer_blocks;
  int32_t f = 0;
  int i;
  for (i = 0; i < AM_TOPK_LANE_COLS; ++i) {
    local[i] = (uint32_t)x[i];
    owner[i] = 0;
    ok[i] = row->live && x[i] >= 0;
    v[i] = -1;
  }
  if (!lean && row->prefill == 1) { /* uniform over the row, as the two cases below */
    for (i = 0; i < AM_TOPK_LANE_COLS; ++i) {
      const int64_t slot = row->ws_start + x[i];
      const int over = ok[i] && (slot < 0 || slot > INT32_MAX);
      f |= over ? ATTNMETA_FLAG_SLOT_OUT_OF_RANGE : 0;
      v[i] = ok[i] && !over ? (int32_t)slot : -1;
    }
    *flags |= f;
    return;
  }
  if (!lean && row->prefill == 2) {
    for (i = 0; i < AM_TOPK_LANE_COLS; ++i) f |= ok[i] ? ATTNMETA_FLAG_WORKSPACE_OUT_OF_RANGE : 0;
    *flags |= f;
    return;
  }
  if (!lean && p->dcp_world_size > 1) { /* rank (x / I) % W owns x; floor(floor(x / I) / W) = x / (W I) */
    const uint32_t interleave = (uint32_t)p->dcp_interleave;
    const uint32_t world = (uint32_t)p->dcp_world_size;
    for (i = 0; i < AM_TOPK_LANE_COLS; ++i) {
      const uint32_t by_interleave = local[i] / interleave;
      const uint32_t column = by_interleave / world;
      owner[i] = by_interleave - column * world;
      ok[i] = ok[i] && (peer > 0 || owner[i] == (uint32_t)p->dcp_rank);
      local[i] = column * interleave + (local[i] - by_interleave * interleave);
    }
  }
  if (d.pow2) {
    for (i = 0; i < AM_TOPK_LANE_COLS; ++i) {
      blk[i] = local[i] >> d.shift;
      off[i] = local[i] & (d.block_size - 1);
    }
  } else {
    for (i = 0; i < AM_TOPK_LANE_COLS; ++i) {
      blk[i] = local[i] / d.block_size;
      off[i] = local[i] - blk[i] * d.block_size;
    }
  }
  for (i = 0; i < AM_TOPK_LANE_COLS; ++i) {
    const int past = ok[i] && blk[i] >= (uint32_t)p->cols;
    f |= past ? ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE : 0;
    ok[i] = ok[i] && !past;
  }
  {
    int32_t id[AM_TOPK_LANE_COLS];
    int load[AM_TOPK_LANE_COLS];
    for (i = 0; i < AM_TOPK_LANE_COLS; ++i)
      load[i] = ok[i] && !(i > 0 && ok[i - 1] && blk[i] == blk[i - 1]);
    for (i = 0; i < AM_TOPK_LANE_COLS; ++i)
      id[i] = load[i] ? p->block_table[row->table_off + blk[i]] : 0;
    for (i = 1; i < AM_TOPK_LANE_COLS; ++i) id[i] = load[i] ? id[i] : id[i - 1];
    for (i = 0; i < AM_TOPK_LANE_COLS; ++i) {
      /* a peer view's id is past its segment at >= S; its rank's segment
       * is S ids on (the host bounds W * S * stride_rows by INT32_MAX) */
      const int past_segment = peer > 0 && (int64_t)id[i] >= peer;
      const uint64_t block = (uint64_t)(uint32_t)id[i] +
                             (peer > 0 ? (uint64_t)owner[i] * (uint64_t)peer : 0);
      const uint64_t slot = block * (uint32_t)p->stride_rows + off[i];
      const int negative = ok[i] && (id[i] < 0 || past_segment);
      const int over = ok[i] && !negative && slot > INT32_MAX;
      f |= (negative ? ATTNMETA_FLAG_BLOCK_ID_NEGATIVE : 0) |
           (over ? ATTNMETA_FLAG_SLOT_OUT_OF_RANGE : 0);
      v[i] = ok[i] && !negative && !over ? (int32_t)slot : -1;
    }
  }
  *flags |= f;
}

/* The rotated DCP peer table (contract 6d), no barrier: a block a row r
 * (grid-stride), its threads over the row's logical pages L. Page L of row
 * r is rank o = L % W's page L / W, in the segment of o's distance past
 * this rank, (o - k) mod W. -1 for a page past the tables, padding (< 0),
 * an id at or past S (flag 64) and a block past INT32_MAX (flag 512). */
AM_DEVICE void am_topk_peer_table(const am_topk_params *p, am_thread th, int32_t *flags) {
  const uint32_t world = (uint32_t)p->dcp_world_size, rank = (uint32_t)p->dcp_rank;
  const uint32_t width = (uint32_t)p->peer_table_width, pages = (uint32_t)p->peer_tables_cols;
  const int64_t segment = p->peer_blocks;
  uint32_t r, page;
  int32_t f = 0;
  for (r = th.block; r < (uint32_t)p->num_reqs; r += th.grid_dim) {
    int32_t *AM_RESTRICT out = p->peer_table_out + (int64_t)r * p->peer_table_out_stride;
    for (page = th.thread; page < width; page += th.block_dim) {
      const uint32_t o = page % world, owner_page = page / world;
      const int64_t id =
          owner_page < pages ? p->peer_tables[(int64_t)o * p->peer_tables_owner_stride +
                                              (int64_t)r * p->peer_tables_stride + owner_page]
                             : -1;
      const int64_t rotated = o >= rank ? o - rank : o + world - rank;
      const int past = id >= segment;
      const int64_t block = past ? -1 : rotated * segment + id; /* W * S fits int64 (host) */
      const int over = id >= 0 && block > INT32_MAX;
      f |= (past ? ATTNMETA_FLAG_BLOCK_ID_NEGATIVE : 0) | (over ? ATTNMETA_FLAG_SLOT_OUT_OF_RANGE : 0);
      out[page] = id >= 0 && !past && !over ? (int32_t)block : -1;
    }
  }
  *flags |= f;
}

/* Exclusive prefix sum of `n` over the lanes of the calling thread's group,
 * in lane order; *total receives the group's sum. Two levels in
 * block-shared `scratch` (AM_TOPK_SCRATCH_INTS ints): every lane posts n,
 * the first lane of each segment of AM_TOPK_SCAN_SEGMENT lanes adds its
 * segment, and every lane adds the segments before its own and its
 * segment's lanes before it. Two barriers a call, where a lane-by-lane
 * scan would need two per doubling step; the loops have fixed lengths (or
 * take four segments a step), so their reads are in flight together
 * rather than one after another. Calls alternate between two halves of
 * scratch (`phase` counts them): the next call writes the other half, and
 * the one after it comes after the next call's first barrier, by which
 * every lane has read this one. Every thread of the block must call it (it
 * holds barriers). */
AM_DEVICE uint32_t am_topk_group_scan(int32_t *scratch, am_thread th, uint32_t *phase, uint32_t n,
                                      uint32_t *total) {
  const uint32_t segs = (th.lanes + AM_TOPK_SCAN_SEGMENT - 1) / AM_TOPK_SCAN_SEGMENT;
  int32_t *half = scratch + (*phase & 1) * (th.block_dim + th.groups * segs);
  int32_t *posted = half + th.group * th.lanes;
  int32_t *seg_sum = half + th.block_dim + th.group * segs;
  const uint32_t mine = th.lane / AM_TOPK_SCAN_SEGMENT, own = mine * AM_TOPK_SCAN_SEGMENT;
  uint32_t i, u, excl = 0, sum = 0;
  *phase += 1;
  posted[th.lane] = (int32_t)n;
  AM_BARRIER();
  if (th.lane == own) {
    uint32_t s = 0;
    for (i = 0; i < AM_TOPK_SCAN_SEGMENT; ++i)
      s += th.lane + i < th.lanes ? (uint32_t)posted[th.lane + i] : 0;
    seg_sum[mine] = (int32_t)s;
  }
  AM_BARRIER();
  for (i = 0; i < segs; i += 4)
    for (u = 0; u < 4; ++u) {
      const uint32_t s = i + u < segs ? (uint32_t)seg_sum[i + u] : 0;
      sum += s;
      excl += i + u < mine ? s : 0;
    }
  for (i = 0; i < AM_TOPK_SCAN_SEGMENT; ++i)
    excl += own + i < th.lane ? (uint32_t)posted[own + i] : 0;
  *total = sum;
  return excl;
}

/* The sum of `n` over the lanes of the calling thread's group, on the
 * group's first lane (0 on the others): am_topk_group_scan's two levels
 * without the prefix. Shares its halves and `phase`, so calls of both may
 * follow one another; every thread of the block must call it. */
AM_DEVICE uint32_t am_topk_group_total(int32_t *scratch, am_thread th, uint32_t *phase, uint32_t n) {
  const uint32_t segs = (th.lanes + AM_TOPK_SCAN_SEGMENT - 1) / AM_TOPK_SCAN_SEGMENT;
  int32_t *half = scratch + (*phase & 1) * (th.block_dim + th.groups * segs);
  int32_t *posted = half + th.group * th.lanes;
  int32_t *seg_sum = half + th.block_dim + th.group * segs;
  uint32_t i, u, sum = 0;
  *phase += 1;
  posted[th.lane] = (int32_t)n;
  AM_BARRIER();
  if (th.lane % AM_TOPK_SCAN_SEGMENT == 0) {
    uint32_t s = 0;
    for (i = 0; i < AM_TOPK_SCAN_SEGMENT; ++i)
      s += th.lane + i < th.lanes ? (uint32_t)posted[th.lane + i] : 0;
    seg_sum[th.lane / AM_TOPK_SCAN_SEGMENT] = (int32_t)s;
  }
  AM_BARRIER();
  if (th.lane != 0) return 0;
  for (i = 0; i < segs; i += 4)
    for (u = 0; u < 4; ++u) sum += i + u < segs ? (uint32_t)seg_sum[i + u] : 0;
  return sum;
}

/* scratch: block-shared, AM_TOPK_SCRATCH_INTS(lanes, groups) int32 (used
 * only when rows are counted). `kind`: AM_TOPK_TWO_GROUPS, AM_TOPK_PLAIN,
 * AM_TOPK_COUNTS, AM_TOPK_ROWS and AM_TOPK_EARLY bits (am_topk_params.h),
 * a compile-time constant on the GPUs (a kernel each, so each keeps only
 * the registers and instructions it needs), am_topk_kind_of(p) or a
 * general kind where it is not. */
AM_DEVICE void am_topk_body(const am_topk_params *p, am_thread th, int32_t *scratch, int kind) {
  const uint32_t num_tokens = (uint32_t)p->num_tokens;
  const uint32_t k = (uint32_t)p->topk_count;
  /* two: each lane takes a second group of four columns, half a chunk on
   * (rows of many tokens: half the threads, twice the loads in flight per
   * thread); never with compaction, whose prefix sum wants a lane's
   * columns consecutive */
  const int lean = kind & AM_TOPK_PLAIN;
  const int compact = !lean && p->compact;
  const int two = (kind & AM_TOPK_TWO_GROUPS) && !compact;
  const uint32_t half = th.lanes * AM_TOPK_LANE_COLS;
  const uint32_t chunk = two ? 2 * half : half;
  /* compact implies counts (host check) */
  const int counting = (!lean || (kind & AM_TOPK_COUNTS)) && p->valid_count != 0;
  const am_topk_split split = am_topk_split_of(p);
  int32_t flags = 0;
  uint32_t first, phase = 0;
  if (kind & AM_TOPK_EARLY) { /* every read and write comes after the wait */
    AM_WAIT_FOR_PRIOR_KERNELS();
    AM_LET_NEXT_KERNEL_START();
  }
  if (kind & AM_TOPK_ROWS) {
    am_topk_rows_body(p, th, kind & AM_TOPK_COUNTS, kind & AM_TOPK_LEAN);
    return;
  }

  /* Rounds are block-uniform: the whole block runs every round and every
   * chunk, threads without a row included, so the barriers line up. */
  for (first = th.block * th.groups; first < num_tokens; first += th.grid_dim * th.groups) {
    const uint32_t t = first + th.group;
    const int active = t < num_tokens;
    const int32_t *AM_RESTRICT in = p->topk + (active ? (int64_t)t * p->topk_stride : 0);
    int32_t *AM_RESTRICT out = p->out + (active ? (int64_t)t * p->out_stride : 0);
    int32_t x[AM_TOPK_LANE_COLS], y[AM_TOPK_LANE_COLS];
    am_topk_row row;
    uint32_t c0, total = 0, lane_count = 0;
    /* the first chunk's positions load before the row's request is known:
     * the two sets of loads are in flight together */
    am_topk_load_columns(in, active ? k : 0, th.lane * AM_TOPK_LANE_COLS, p->vector_in, 0, x);
    am_topk_load_columns(in, active && two ? k : 0, half + th.lane * AM_TOPK_LANE_COLS,
                         p->vector_in, 0, y);
    row.live = row.counted = row.prefill = 0;
    row.table_off = row.ws_start = 0;
    if (active) row = am_topk_row_of(p, t, lean, counting);
    for (c0 = 0; c0 < k; c0 += chunk) {
      const uint32_t j0 = c0 + th.lane * AM_TOPK_LANE_COLS, j1 = j0 + half;
      int32_t next[AM_TOPK_LANE_COLS], next_y[AM_TOPK_LANE_COLS];
      int32_t v[AM_TOPK_LANE_COLS], w[AM_TOPK_LANE_COLS];
      uint32_t n = 0, excl, sum;
      int i;
      /* the next chunk's positions are in flight while this one converts */
      am_topk_load_columns(in, active && c0 + chunk < k ? k : 0, j0 + chunk, p->vector_in, 0, next);
      am_topk_load_columns(in, active && two && c0 + chunk < k ? k : 0, j1 + chunk, p->vector_in, 0,
                           next_y);
      am_topk_convert4(p, &row, split, lean, x, v, &flags);
      for (i = 0; i < AM_TOPK_LANE_COLS; ++i) w[i] = -1;
      if (two) am_topk_convert4(p, &row, split, lean, y, w, &flags);
      if (active && j0 < k && !compact) am_topk_store_columns(out, k, j0, p->vector_out, 0, v);
      if (two && active && j1 < k) am_topk_store_columns(out, k, j1, p->vector_out, 0, w);
      if (row.counted)
        for (i = 0; i < AM_TOPK_LANE_COLS; ++i) n += (v[i] >= 0) + (w[i] >= 0);
      for (i = 0; i < AM_TOPK_LANE_COLS; ++i) {
        x[i] = next[i];
        y[i] = next_y[i];
      }
      lane_count += n;
      if (!compact) continue; /* uniform: a launch parameter */
      /* compaction: where this lane's slots go needs the lanes before it */
      excl = am_topk_group_scan(scratch, th, &phase, n, &sum);
      if (n > 0) {
        uint32_t at = total + excl; /* < K by construction; checked all the same */
        for (i = 0; i < AM_TOPK_LANE_COLS; ++i)
          if (v[i] >= 0 && at < k) out[at++] = v[i];
      }
      total += sum;
    }
    /* counts without compaction: one sum over the lanes for the whole row */
    if (counting && !compact) total = am_topk_group_total(scratch, th, &phase, lane_count);
    if (active && compact)
      for (c0 = total + th.lane; c0 < k; c0 += th.lanes) out[c0] = -1;
    if (active && counting && th.lane == 0) p->valid_count[t] = (int32_t)total;
  }
  if (!lean && p->peer_table_out) am_topk_peer_table(p, th, &flags);
  if (flags && p->error_word) AM_ATOMIC_OR(p->error_word, flags);
}

#endif /* ATTNMETA_AM_TOPK_KERNEL_H */
