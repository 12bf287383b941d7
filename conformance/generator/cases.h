// SPDX-License-Identifier: Apache-2.0
/*
 * The one table of step cases. Every entry is plain fixed-size data (no heap
 * pointers): Criterion runs each test in its own worker process and the
 * parameters only carry an index into this table.
 *
 * amt_materialize() turns a case into host arrays (qsl, seq_lens, block
 * table) deterministically from the case's seed.
 */
#ifndef ATTNMETA_CONFORMANCE_CASES_H
#define ATTNMETA_CONFORMANCE_CASES_H

#include <stdint.h>

#define AMT_MAX_REQS 72
#define AMT_MAX_PATCH 4
#define AMT_MAX_RANKS 8

/* Products of a step (contract sections 1-3). */
enum amt_product {
  AMT_P_TOKEN_TO_REQ = 1 << 0,
  AMT_P_SEQ_LENS = 1 << 1,
  AMT_P_GLOBAL_SEQ_LENS = 1 << 2,
  AMT_P_BLOCK_TABLE = 1 << 3,
  AMT_P_DECODE_LENS = 1 << 4,
  AMT_P_REQ_INDICES = 1 << 5,
  AMT_P_PER_REQ_LENS = 1 << 6,
  AMT_P_POSITIONS = 1 << 7,
  AMT_P_SLOTS = 1 << 8,
  AMT_P_ALL = (1 << 9) - 1
};
#define AMT_NUM_PRODUCTS 9
const char *amt_product_name(unsigned product);

typedef struct amt_patch {
  int32_t row, col, value;
} amt_patch;

typedef struct amt_case {
  char name[40];
  int random;              /* 1: the whole shape is drawn from `seed` */
  int32_t num_reqs;        /* R (<= AMT_MAX_REQS unless qlen_max > 0 or random) */
  int32_t qlens[AMT_MAX_REQS];
  int32_t qlen_max;        /* > 0: qlens drawn in [0, qlen_max] from seed */
  int raw_qsl;             /* 1: qsl[] and num_tokens used as they are */
  int32_t qsl[AMT_MAX_REQS + 1];
  int32_t num_tokens;      /* T when raw_qsl */
  int explicit_seq;        /* 1: seq_lens[] used as they are */
  int32_t seq_lens[AMT_MAX_REQS];
  int32_t history_max;     /* seq_len = qlen + history in [0, history_max] */
  int past_table;          /* 0: seq_lens clamped so every position fits the table */
  int32_t cols;            /* block-table columns (ignored when auto_cols) */
  int auto_cols;           /* 1: cols = what the longest sequence needs + 2 */
  int32_t in_stride;       /* 0: = cols */
  int32_t out_stride;      /* 0: = cols */
  int32_t pad_tokens;      /* T - actual (ignored when raw_qsl) */
  int32_t cap_extra;       /* C - T */
  int has_mapped;          /* 0: num_mapped = -1 (`actual`) */
  int32_t num_mapped;
  int32_t block_size;      /* 0: 16 */
  int32_t world;           /* 0: 1 */
  int32_t rank;            /* dcp_rank when !all_ranks */
  int all_ranks;           /* 1: run every rank in [0, W) */
  int32_t interleave;      /* 0: 1 */
  unsigned products;       /* 0: all */
  int misalign;            /* block table off 16-byte alignment: 1 input, 2 output, 3 both */
  int32_t expect_flags;    /* flags the data must raise (subset check) */
  uint32_t seed;
  int npatch;              /* block-table entries overwritten */
  amt_patch patch[AMT_MAX_PATCH];
} amt_case;

extern const amt_case amt_cases[];
extern const int amt_num_cases;

/* A materialized case: everything a step needs, on the host. */
typedef struct amt_batch {
  int32_t R, T, C, cols;
  int64_t in_stride, out_stride;
  int32_t num_mapped, block_size, world, interleave;
  int32_t ranks[AMT_MAX_RANKS];
  int nranks;
  unsigned products;
  int misalign; /* 1: input table, 2: block_table_out, 3: both off 16-byte alignment */
  int32_t expect_flags;
  int32_t *qsl;         /* [R + 1] */
  int32_t *seq_lens;    /* [max(R, 1)] */
  int32_t *block_table; /* [R * in_stride] (gap columns hold AMT_GAP), NULL when cols == 0 */
  int64_t table_elems;  /* elements the device copy of the table needs (>= 1) */
} amt_batch;

#define AMT_GAP ((int32_t)0x6B6B6B6B) /* block-table gap columns: never read */

amt_batch *amt_materialize(const amt_case *c);
void amt_batch_free(amt_batch *b);

struct amr_input;
/* The naive reference's input for rank number k (index into b->ranks) of b. */
void amt_reference_input(const amt_batch *b, int k, struct amr_input *in);
struct amr_output;
/* The naive reference's outputs for rank number k of b (free with amr_free). */
struct amr_output *amt_reference_outputs(const amt_batch *b, int k);

/* Deterministic PRNG (splitmix64). */
uint64_t amt_rand(uint64_t *state);
int32_t amt_rand_range(uint64_t *state, int32_t lo, int32_t hi); /* [lo, hi] */

#endif /* ATTNMETA_CONFORMANCE_CASES_H */
