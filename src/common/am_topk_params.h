// SPDX-License-Identifier: Apache-2.0
/*
 * What one launch of the top-k conversion receives, by value. Built on the
 * host from the public attnmeta_topk after every argument has been checked,
 * so the kernel may trust the sizes, strides and alignments here (never the
 * device data). Valid C11 and C++.
 */
#ifndef ATTNMETA_AM_TOPK_PARAMS_H
#define ATTNMETA_AM_TOPK_PARAMS_H

#include <stdint.h>

/* Columns a lane takes per chunk (the plan's lane count and the kernel's
 * loads and stores). */
#define AM_TOPK_LANE_COLS 4
/* Columns a thread of the short body takes a pass over its row, side by
 * side (one 16-byte access where the row is aligned; am_topk_rows_kernel.h
 * moves them as an am_i32x4, so four). */
#define AM_TOPK_ROW_COLS 4

typedef struct am_topk_params {
  /* inputs */
  const int32_t *topk;         /* [T][topk_stride] */
  int64_t topk_stride;
  const int32_t *qsl;          /* [R + 1], or NULL when req_id is given */
  const int32_t *req_id;       /* [T], or NULL when qsl is given */
  const int32_t *block_table;  /* [R][block_table_stride]; NULL when R or cols is 0 */
  int64_t block_table_stride;
  const int32_t *prefill_req;  /* [T] or NULL */
  const int32_t *workspace_starts; /* [P] (NULL when P == 0) */
  const int64_t *token_slot;   /* [T] or NULL */
  /* outputs */
  int32_t *out;                /* [T][out_stride] */
  int64_t out_stride;
  int32_t *valid_count;        /* [T] or NULL */
  int32_t *error_word;         /* [1] or NULL */
  /* DCP peer views (contract 6c, 6d) */
  const int32_t *peer_tables;  /* [W][R][peer_tables_stride], owner_stride apart; NULL when
                                  no entry is read */
  int64_t peer_tables_stride;
  int64_t peer_tables_owner_stride;
  int32_t *peer_table_out;     /* [R][peer_table_out_stride] or NULL: not built */
  int64_t peer_table_out_stride;
  int64_t peer_blocks;         /* S: 0 = no peer view; else W * S fits int64 (and, with rows
                                  to convert, W * S * stride_rows fits int32) */
  int32_t peer_tables_cols;    /* M */
  int32_t peer_table_width;
  /* sizes */
  int32_t num_tokens;
  int32_t topk_count;          /* K >= 1 */
  int32_t num_reqs;
  int32_t cols;
  int32_t block_size;          /* >= 1 */
  int32_t stride_rows;         /* >= 1 */
  int32_t dcp_world_size;
  int32_t dcp_rank;
  int32_t dcp_interleave;
  int32_t num_prefill;
  int32_t compact;             /* 1: valid slots first, in column order (needs valid_count) */
  /* schedule, chosen on the host; the body is correct for any values */
  int32_t vector_in;           /* 1: topk rows load as 16-byte vectors (pointer, stride allow) */
  int32_t vector_out;          /* 1: in-place rows store as 16-byte vectors */
  int32_t lane_vectors;        /* 1 or 2: groups of four columns a lane takes a chunk */
  int32_t rows_body;           /* 1: the short body (am_topk_rows_kernel.h); the host sets it
                                  only where that body applies (am_topk_rows_apply) */
  int32_t early;               /* 1: launched to start before the kernel ahead ends
                                  (ATTNMETA_LAUNCH_EARLY_START) */
} am_topk_params;

/* The kernel's block-shared prefix sum (am_topk_kernel.h): lanes posted
 * per segment, and the int32 it needs for a block of lanes x groups (two
 * halves, each a value per thread and a sum per segment). */
#define AM_TOPK_SCAN_SEGMENT 16
#define AM_TOPK_SCRATCH_INTS(lanes, groups) \
  (2 * ((lanes) * (groups) + (groups) * (((lanes) + AM_TOPK_SCAN_SEGMENT - 1) / AM_TOPK_SCAN_SEGMENT)))

/* Which body a launch runs (am_topk_body's `kind`, a compile-time
 * constant in each GPU kernel): AM_TOPK_TWO_GROUPS when a lane takes two
 * groups of four columns (lane_vectors == 2); AM_TOPK_PLAIN when the
 * launch converts decode rows only, without DCP, counts or compaction, so
 * what those need compiles out (a shorter chain for rows of few tokens);
 * AM_TOPK_PLAIN | AM_TOPK_COUNTS, the same with counts (and token_slot):
 * the plain body and one sum over a row's lanes. A barrier compiled into
 * the plain body itself slows plain rows even when no count is asked for,
 * so counts have kernels of their own.
 * The general body (kind 0 or AM_TOPK_TWO_GROUPS) is right for every
 * launch. */
#define AM_TOPK_TWO_GROUPS 1
#define AM_TOPK_PLAIN 2
#define AM_TOPK_COUNTS 4
/* AM_TOPK_ROWS (with AM_TOPK_COUNTS where rows are counted): the short body
 * of am_topk_rows_kernel.h, a block a row, where am_topk_rows_apply holds. */
#define AM_TOPK_ROWS 8
/* AM_TOPK_EARLY, with any of the above: the launch may start before the
 * kernel ahead of it ends, and the body waits for that kernel first. */
#define AM_TOPK_EARLY 16
/* AM_TOPK_LEAN, with AM_TOPK_ROWS: the short body's lean form, where
 * am_topk_rows_lean holds (requests from req_id, rows moved as 16-byte
 * vectors only): what the general rows take compiles out. */
#define AM_TOPK_LEAN 32

static inline int am_topk_decode(const am_topk_params *p) {
  return p->dcp_world_size <= 1 && !p->prefill_req && !p->compact && p->peer_blocks == 0 &&
         !p->peer_table_out;
}

/* Where the short body gives what the general one does: decode rows, a
 * table with a column to read (the body reads column 0 of a valid row
 * where it converts nothing), a power-of-two block size. */
static inline int am_topk_rows_apply(const am_topk_params *p) {
  const uint32_t b = (uint32_t)p->block_size;
  return am_topk_decode(p) && p->num_reqs > 0 && p->block_table && p->cols > 0 && b > 0 &&
         (b & (b - 1)) == 0;
}

/* Where the short body's lean form gives what it does: requests from
 * req_id, and every row's K columns in 16-byte vectors in and out. */
static inline int am_topk_rows_lean(const am_topk_params *p) {
  return am_topk_rows_apply(p) && p->req_id && p->vector_in && p->vector_out &&
         p->topk_count % AM_TOPK_ROW_COLS == 0;
}

static inline int am_topk_kind_of(const am_topk_params *p) {
  const int decode = am_topk_decode(p);
  const int early = p->early ? AM_TOPK_EARLY : 0;
  if (p->rows_body && am_topk_rows_apply(p))
    return AM_TOPK_ROWS | (am_topk_rows_lean(p) ? AM_TOPK_LEAN : 0) |
           (p->valid_count ? AM_TOPK_COUNTS : 0) | early;
  return (p->lane_vectors == 2 ? AM_TOPK_TWO_GROUPS : 0) | (decode ? AM_TOPK_PLAIN : 0) |
         (decode && p->valid_count ? AM_TOPK_COUNTS : 0) | early;
}

#endif /* ATTNMETA_AM_TOPK_PARAMS_H */
