// SPDX-License-Identifier: Apache-2.0
/* The table of step cases and its materialisation into host arrays. */
#include "cases.h"

#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "reference.h"

#define COUNT(...) ((int32_t)(sizeof((int32_t[]){__VA_ARGS__}) / sizeof(int32_t)))
/* Query lengths of the requests (R = their number). */
#define QL(...) .qlens = {__VA_ARGS__}, .num_reqs = COUNT(__VA_ARGS__)
/* Raw boundaries for hostile data: T, then qsl[0..R]. */
#define RAWQ(T_, ...) \
  .raw_qsl = 1, .num_tokens = (T_), .qsl = {__VA_ARGS__}, .num_reqs = COUNT(__VA_ARGS__) - 1
#define SEQ(...) .explicit_seq = 1, .seq_lens = {__VA_ARGS__}
#define MAPPED(n) .has_mapped = 1, .num_mapped = (n)
#define DCP(w, i) .world = (w), .interleave = (i), .all_ranks = 1
#define SIX16 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6
#define ODD(c, in, out) QL(1, 3, 1, 2, 0, 1), .history_max = 300, .block_size = 64, \
    .cols = (c), .in_stride = (in), .out_stride = (out), .pad_tokens = 3, .cap_extra = 2
/* the same with four requests of two tokens and no padding */
#define EVEN(c, in, out) QL(2, 2, 2, 2), .history_max = 300, .block_size = 64, \
    .cols = (c), .in_stride = (in), .out_stride = (out), .pad_tokens = 0, .cap_extra = 3
/* input and output row strides 44 + i and 48 + o, misalign m, the shape
 * EVEN or ODD */
#define ROWS(i, o, m, SHAPE) {"rows_in" #i "_out" #o "_mis" #m,                    \
    SHAPE(29 + 4 * (i) + (o), 44 + (i), 48 + (o)), .misalign = (m), .seed = 36 + 4 * (i) + (o)}
#define RANDOM(s) {"random_s" #s, .random = 1, .seed = (s)}
#define DCPCASE(w, i, bs) {"dcp_w" #w "_i" #i "_bs" #bs, QL(1, 3, 1, 7, 2, 1, 0, 1),    \
    .history_max = 400, .auto_cols = 1, .block_size = (bs), DCP(w, i), .pad_tokens = 3, \
    .cap_extra = 2, .seed = (w) * 100 + (i) * 10 + (bs)}

#define F_FIRST ATTNMETA_FLAG_QSL_FIRST_NONZERO
#define F_DECR ATTNMETA_FLAG_QSL_DECREASING
#define F_TOTAL ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE
#define F_NEG ATTNMETA_FLAG_SEQ_LEN_NEGATIVE
#define F_LT ATTNMETA_FLAG_SEQ_LEN_LT_QLEN
#define F_OOT ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE
#define F_NEGID ATTNMETA_FLAG_BLOCK_ID_NEGATIVE
#define F_POSNEG ATTNMETA_FLAG_POSITION_NEGATIVE

const amt_case amt_cases[] = {
    /* ---- basic shapes, with and without graph padding ---- */
    {"q1_pad0", QL(1), .history_max = 40, .auto_cols = 1, .seed = 1},
    {"q1_pad17", QL(1), .history_max = 40, .auto_cols = 1, .pad_tokens = 17, .seed = 2},
    {"q6x16_pad0", QL(SIX16), .history_max = 200, .auto_cols = 1, .seed = 3},
    {"q6x16_pad17", QL(SIX16), .history_max = 200, .auto_cols = 1, .pad_tokens = 17, .seed = 4},
    {"mixed_pad0", QL(0, 2, 6, 0, 4), .history_max = 100, .auto_cols = 1, .seed = 5},
    {"mixed_pad17", QL(0, 2, 6, 0, 4), .history_max = 100, .auto_cols = 1, .pad_tokens = 17,
     .seed = 6},
    {"empty3_pad0", QL(0, 0, 0), .history_max = 10, .auto_cols = 1, .seed = 7},
    {"empty3_pad17", QL(0, 0, 0), .history_max = 10, .auto_cols = 1, .pad_tokens = 17,
     .cap_extra = 3, .seed = 8},
    {"cols65_in74_out65", QL(3, 1, 4, 1, 5), .history_max = 900, .cols = 65, .in_stride = 74,
     .out_stride = 65, .seed = 9},
    {"cols65_in74_out72", QL(3, 1, 4, 1, 5), .history_max = 900, .cols = 65, .in_stride = 74,
     .out_stride = 72, .pad_tokens = 3, .cap_extra = 5, .seed = 10},
    {"req257_among_empty", QL(0, 257, 1, 0, 3), .history_max = 300, .auto_cols = 1,
     .pad_tokens = 5, .cap_extra = 4, .seed = 11},
    {"reqs64", .num_reqs = 64, .qlen_max = 4, .history_max = 200, .auto_cols = 1,
     .pad_tokens = 7, .cap_extra = 1, .seed = 64},
    {"reqs5000_beyond_stage", .num_reqs = 5000, .qlen_max = 2, .history_max = 20,
     .auto_cols = 1, .pad_tokens = 9, .cap_extra = 2, .seed = 65},
    {"prefill_4096", QL(4096), .history_max = 200, .auto_cols = 1, .block_size = 64,
     .pad_tokens = 3, .seed = 66},
    {"r0_t0", .num_reqs = 0, .cols = 4, .cap_extra = 3},
    {"r0_pad9", .num_reqs = 0, .cols = 4, .pad_tokens = 9, .cap_extra = 4},
    {"r2_t0_cap5", QL(0, 0), .cols = 3, .cap_extra = 5},
    {"mapped_5_of_T", QL(2, 3, 1, 4), .history_max = 30, .auto_cols = 1, .pad_tokens = 6,
     MAPPED(5), .seed = 12},
    {"mapped_0", QL(2, 3, 1, 4), .history_max = 30, .auto_cols = 1, .pad_tokens = 6, MAPPED(0),
     .seed = 13},
    {"mapped_into_padding", QL(2, 3, 1, 4), .history_max = 30, .auto_cols = 1, .pad_tokens = 6,
     MAPPED(13), .seed = 14},
    {"mapped_past_T", QL(2, 3, 1, 4), .history_max = 30, .auto_cols = 1, .pad_tokens = 6,
     MAPPED(1000), .seed = 15},
    {"mapped_neg5", QL(2, 3, 1, 4), .history_max = 30, .auto_cols = 1, .pad_tokens = 6,
     MAPPED(-5), .seed = 16},
    {"cap_gt_T", QL(1, 1, 2), .history_max = 30, .auto_cols = 1, .pad_tokens = 2,
     .cap_extra = 37, .seed = 17},
    {"cap_tail_5000", QL(1, 2), .history_max = 30, .auto_cols = 1, .pad_tokens = 1,
     .cap_extra = 5000, .seed = 67},
    {"cols2560", QL(1, 2, 1), .history_max = 3000, .cols = 2560, .in_stride = 2560,
     .out_stride = 2560, .pad_tokens = 1, .cap_extra = 2, .seed = 18},
    {"cols2560_in2563_out2561", QL(1, 2, 1), .history_max = 3000, .cols = 2560,
     .in_stride = 2563, .out_stride = 2561, .pad_tokens = 1, .misalign = 3, .seed = 19},

    /* ---- odd widths: odd strides (no vector path), strides % 4 == 0 (vector path) ---- */
    {"cols1_odd", ODD(1, 1, 1), .seed = 20},
    {"cols3_odd", ODD(3, 5, 7), .seed = 21},
    {"cols5_odd", ODD(5, 7, 5), .seed = 22},
    {"cols7_odd", ODD(7, 9, 11), .seed = 23},
    {"cols63_odd", ODD(63, 63, 65), .seed = 24},
    {"cols1_vec", ODD(1, 4, 4), .seed = 25},
    {"cols3_vec", ODD(3, 4, 8), .seed = 26},
    {"cols5_vec", ODD(5, 8, 8), .seed = 27},
    {"cols7_vec", ODD(7, 8, 12), .seed = 28},
    {"cols63_vec", ODD(63, 64, 64), .seed = 29},
    {"cols64_vec", ODD(64, 64, 68), .seed = 30},
    {"cols7_vec_misaligned", ODD(7, 8, 8), .misalign = 3, .seed = 31},
    {"cols63_vec_in_misaligned", ODD(63, 64, 64), .misalign = 1, .seed = 32},
    {"cols63_vec_out_misaligned", ODD(63, 64, 64), .misalign = 2, .seed = 33},
    /* equal split (T a multiple of R): rows speculated with the guess; fewer
     * than four vectors and a scalar remainder */
    {"cols10_vec_equal_split", QL(2, 2, 2), .history_max = 300, .block_size = 64, .cols = 10,
     .in_stride = 12, .out_stride = 12, .cap_extra = 2, .seed = 34},
    {"cols6_vec_equal_split", QL(3, 3), .history_max = 300, .block_size = 64, .cols = 6,
     .in_stride = 8, .out_stride = 12, .cap_extra = 2, .seed = 35},

    /* ---- every input and output row-stride residue mod 4, tables off 16-byte
     * alignment by 0 or 4 bytes: rows start at every offset mod 16 bytes (the
     * realigned 16-byte copy, its scalar edges, speculated first batches on
     * the equal splits, zeroed padding rows) ---- */
    ROWS(0, 0, 0, EVEN), ROWS(0, 1, 2, ODD), ROWS(0, 2, 0, EVEN), ROWS(0, 3, 2, ODD),
    ROWS(1, 0, 1, ODD), ROWS(1, 1, 3, EVEN), ROWS(1, 2, 1, ODD), ROWS(1, 3, 3, EVEN),
    ROWS(2, 0, 2, EVEN), ROWS(2, 1, 0, ODD), ROWS(2, 2, 2, EVEN), ROWS(2, 3, 0, ODD),
    ROWS(3, 0, 3, ODD), ROWS(3, 1, 1, EVEN), ROWS(3, 2, 3, ODD), ROWS(3, 3, 1, EVEN),

    /* ---- seeded random batches ---- */
    RANDOM(1), RANDOM(2), RANDOM(3), RANDOM(4), RANDOM(5), RANDOM(6), RANDOM(7),
    RANDOM(8), RANDOM(9), RANDOM(10), RANDOM(11), RANDOM(12), RANDOM(13), RANDOM(14),
    RANDOM(15), RANDOM(16), RANDOM(17), RANDOM(18), RANDOM(19), RANDOM(20),

    /* ---- decode context parallelism, every rank ---- */
    DCPCASE(2, 1, 1), DCPCASE(2, 2, 16), DCPCASE(2, 16, 64),
    DCPCASE(4, 1, 16), DCPCASE(4, 2, 64), DCPCASE(4, 16, 16),
    DCPCASE(8, 1, 64), DCPCASE(8, 2, 16), DCPCASE(8, 16, 64),
    DCPCASE(2, 16, 1), /* interleave larger than the block */
    {"dcp_contract_example", QL(3), SEQ(10), .cols = 2, .world = 2, .rank = 1,
     .interleave = 1},

    /* ---- block sizes, prefill + decode, positions past the table ---- */
    {"bs1", QL(2, 1, 5, 1, 1, 3), .history_max = 150, .auto_cols = 1, .block_size = 1,
     .pad_tokens = 2, .seed = 40},
    {"bs16", QL(2, 1, 5, 1, 1, 3), .history_max = 150, .auto_cols = 1, .block_size = 16,
     .pad_tokens = 2, .seed = 41},
    {"bs64", QL(2, 1, 5, 1, 1, 3), .history_max = 150, .auto_cols = 1, .block_size = 64,
     .pad_tokens = 2, .seed = 42},
    {"prefill_decode_mix", QL(1, 500, 1, 1, 3, 1), .history_max = 100, .auto_cols = 1,
     .pad_tokens = 4, .cap_extra = 3, .seed = 43},
    {"past_table", QL(1, 2, 1, 4), .history_max = 200, .past_table = 1, .cols = 3,
     .pad_tokens = 2, .cap_extra = 1, .expect_flags = F_OOT, .seed = 44},
    {"past_table_dcp", QL(1, 2, 1, 4), .history_max = 200, .past_table = 1, .cols = 3,
     DCP(2, 2), .pad_tokens = 2, .expect_flags = F_OOT, .seed = 45},
    {"cols0", QL(1, 2, 1), .history_max = 20, .cols = 0, .pad_tokens = 2, .cap_extra = 2,
     .expect_flags = F_OOT, .seed = 46},
    {"cols0_all_empty", QL(0, 0), .cols = 0, .pad_tokens = 3, .cap_extra = 1},

    /* ---- hostile boundaries (values unspecified; flags, tails, guards checked) ---- */
    {"hostile_qsl_decreasing", RAWQ(8, 0, 4, 2, 6), .history_max = 20, .auto_cols = 1,
     .expect_flags = F_DECR, .seed = 50},
    {"hostile_qsl_first_nonzero", RAWQ(8, 3, 4, 6), .history_max = 20, .auto_cols = 1,
     .expect_flags = F_FIRST, .seed = 51},
    {"hostile_total_gt_T", RAWQ(8, 0, 3, 12), .history_max = 20, .auto_cols = 1,
     .cap_extra = 2, .expect_flags = F_TOTAL, .seed = 52},
    {"hostile_total_negative", RAWQ(8, 0, 0, -5), .history_max = 20, .cols = 4,
     .expect_flags = F_TOTAL | F_DECR, .seed = 53},
    {"hostile_qsl_int32_max", RAWQ(8, 0, INT32_MAX, INT32_MAX), .cols = 4, .cap_extra = 3,
     .expect_flags = F_TOTAL, .seed = 54},
    {"hostile_qsl_int32_min", RAWQ(8, 0, INT32_MIN, 4), .cols = 4,
     .expect_flags = F_DECR, .seed = 55},
    {"hostile_qsl_first_int32_min", RAWQ(8, INT32_MIN, 2, 4), .cols = 4,
     .expect_flags = F_FIRST, .seed = 56},
    {"hostile_qsl_max_min_max", RAWQ(8, INT32_MAX, INT32_MIN, INT32_MAX), .cols = 4,
     .expect_flags = F_FIRST | F_DECR | F_TOTAL, .seed = 57},
    {"hostile_r0_first_nonzero", RAWQ(3, 5), .cols = 2, .cap_extra = 2,
     .expect_flags = F_FIRST | F_TOTAL},
    {"hostile_qsl_dcp", RAWQ(10, 0, 7, 3, 20), .history_max = 50, .cols = 8, DCP(4, 2),
     .expect_flags = F_DECR | F_TOTAL, .seed = 58},
    {"hostile_qsl_mapped", RAWQ(6, 0, 5, 2, 9), .history_max = 10, .cols = 8, MAPPED(4),
     .expect_flags = F_DECR | F_TOTAL, .seed = 59},

    /* ---- hostile lengths and block ids (values defined by the contract) ---- */
    {"seq_negative", QL(2, 1, 3), SEQ(-3, 5, 10), .cols = 4, .pad_tokens = 2,
     .expect_flags = F_NEG | F_LT | F_POSNEG},
    {"seq_lt_qlen", QL(4, 1, 2), SEQ(2, 1, 2), .cols = 4, .pad_tokens = 1,
     .expect_flags = F_LT | F_POSNEG},
    {"seq_lt_qlen_dcp", QL(4, 1, 2), SEQ(2, 1, 2), .cols = 4, DCP(2, 1),
     .expect_flags = F_LT | F_POSNEG},
    {"seq_int32_max", QL(1, 3, 2), SEQ(INT32_MAX, INT32_MAX, 7), .cols = 4, .pad_tokens = 1,
     .expect_flags = F_OOT},
    {"seq_int32_min", QL(1, 2), SEQ(INT32_MIN, 5), .cols = 4, .cap_extra = 1,
     .expect_flags = F_NEG | F_LT | F_POSNEG},
    {"seq_int32_max_dcp", QL(1, 3), SEQ(INT32_MAX, INT32_MAX - 1), .cols = 4, DCP(4, 16),
     .expect_flags = F_OOT},
    {"neg_block_ids", QL(3, 2, 1), SEQ(20, 17, 40), .cols = 4, .pad_tokens = 2,
     .npatch = 3, .patch = {{0, 1, -5}, {2, 0, -7}, {1, 0, INT32_MIN}},
     .expect_flags = F_NEGID},
    {"neg_block_ids_dcp", QL(3, 2, 1), SEQ(20, 17, 40), .cols = 4, DCP(2, 1),
     .npatch = 2, .patch = {{2, 1, -7}, {0, 2, -3}}, /* only rank 1 uses {2, 1} */
     .expect_flags = F_NEGID},
    {"neg_block_ids_unused", QL(1, 1), SEQ(1, 1), .cols = 3, .pad_tokens = 1,
     .npatch = 3, .patch = {{0, 1, -1}, {0, 2, -9}, {1, 2, -3}}},
};

const int amt_num_cases = (int)(sizeof(amt_cases) / sizeof(amt_cases[0]));

const char *amt_product_name(unsigned product) {
  switch (product) {
    case AMT_P_TOKEN_TO_REQ: return "token_to_req";
    case AMT_P_SEQ_LENS: return "seq_lens_out";
    case AMT_P_GLOBAL_SEQ_LENS: return "global_seq_lens_out";
    case AMT_P_BLOCK_TABLE: return "block_table_out";
    case AMT_P_DECODE_LENS: return "decode_lens_out";
    case AMT_P_REQ_INDICES: return "req_indices_out";
    case AMT_P_PER_REQ_LENS: return "per_req_lens_out";
    case AMT_P_POSITIONS: return "positions";
    case AMT_P_SLOTS: return "slot_mapping";
    default: return "?";
  }
}

/* splitmix64: wraps modulo 2^64 on purpose, so clang's unsigned-integer-
 * overflow check (ci/sanitize.sh's clang stage) leaves this one function out */
#if defined(__clang__)
__attribute__((no_sanitize("unsigned-integer-overflow")))
#endif
uint64_t amt_rand(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int32_t amt_rand_range(uint64_t *state, int32_t lo, int32_t hi) {
  return lo + (int32_t)(amt_rand(state) % (uint64_t)((int64_t)hi - lo + 1));
}

/* Draws the whole shape of a random case. */
static void draw_random(amt_case *k, uint64_t *st) {
  static const int32_t sizes[] = {1, 16, 64};
  static const int32_t worlds[] = {1, 1, 1, 2, 4, 8};
  static const int32_t interleaves[] = {1, 2, 16};
  int32_t r;
  k->num_reqs = amt_rand_range(st, 0, 48);
  for (r = 0; r < k->num_reqs; r++) {
    const int32_t kind = amt_rand_range(st, 0, 99);
    k->qlens[r] = kind < 40   ? 1
                  : kind < 60 ? 0
                  : kind < 85 ? amt_rand_range(st, 2, 8)
                  : kind < 95 ? amt_rand_range(st, 9, 64)
                              : amt_rand_range(st, 65, 300);
  }
  k->history_max = amt_rand_range(st, 0, 600);
  k->auto_cols = 1;
  k->block_size = sizes[amt_rand_range(st, 0, 2)];
  k->world = worlds[amt_rand_range(st, 0, 5)];
  k->interleave = k->world > 1 ? interleaves[amt_rand_range(st, 0, 2)] : 1;
  k->all_ranks = k->world > 1;
  k->pad_tokens = amt_rand_range(st, 0, 1) ? amt_rand_range(st, 0, 20) : 0;
  k->cap_extra = amt_rand_range(st, 0, 12);
  k->in_stride = -amt_rand_range(st, 0, 9); /* negative: cols + this many (below) */
  k->out_stride = -amt_rand_range(st, 0, 9);
  k->misalign = amt_rand_range(st, 0, 1) ? 0 : amt_rand_range(st, 1, 3);
  if (amt_rand_range(st, 0, 3) == 0) {
    k->has_mapped = 1;
    k->num_mapped = -1; /* resolved once T is known */
  }
}

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) abort();
  return p;
}

amt_batch *amt_materialize(const amt_case *c) {
  amt_case k = *c;
  uint64_t st = 0x5EEDull * (c->seed + 1);
  amt_batch *b = xcalloc(1, sizeof *b);
  int32_t r, col;
  int64_t need = 0;

  if (k.random) draw_random(&k, &st);
  b->R = k.num_reqs;
  b->qsl = xcalloc((size_t)b->R + 1, sizeof(int32_t));
  if (k.raw_qsl) {
    memcpy(b->qsl, k.qsl, ((size_t)b->R + 1) * sizeof(int32_t));
    b->T = k.num_tokens;
  } else {
    for (r = 0; r < b->R; r++) {
      const int32_t q = k.qlen_max > 0 ? amt_rand_range(&st, 0, k.qlen_max) : k.qlens[r];
      b->qsl[r + 1] = b->qsl[r] + q;
    }
    b->T = b->qsl[b->R] + k.pad_tokens;
  }
  b->C = b->T + k.cap_extra;
  b->block_size = k.block_size ? k.block_size : 16;
  b->world = k.world ? k.world : 1;
  b->interleave = k.interleave ? k.interleave : 1;
  if (k.all_ranks) {
    for (r = 0; r < b->world; r++) b->ranks[r] = r;
    b->nranks = b->world;
  } else {
    b->ranks[0] = k.rank;
    b->nranks = 1;
  }
  b->num_mapped = k.has_mapped ? k.num_mapped : -1;
  if (k.random && k.has_mapped) b->num_mapped = amt_rand_range(&st, 0, b->T + 4);
  b->products = k.products ? k.products : AMT_P_ALL;
  b->misalign = k.misalign;
  b->expect_flags = k.expect_flags;

  /* lengths: query length plus some history */
  b->seq_lens = xcalloc((size_t)b->R, sizeof(int32_t));
  for (r = 0; r < b->R; r++) {
    const int64_t qlen = (int64_t)b->qsl[r + 1] - b->qsl[r];
    int64_t s = (qlen > 0 ? qlen : 0) + amt_rand_range(&st, 0, k.history_max);
    if (k.explicit_seq) s = k.seq_lens[r];
    if (s > INT32_MAX) s = INT32_MAX;
    b->seq_lens[r] = (int32_t)s;
    if (s > need) need = s;
  }
  {
    const int64_t per_block = (int64_t)b->block_size * b->world;
    b->cols = k.auto_cols ? (int32_t)((need + per_block - 1) / per_block + 2) : k.cols;
    if (!k.past_table && !k.explicit_seq && !k.raw_qsl) {
      const int64_t fit = (int64_t)b->cols * per_block;
      for (r = 0; r < b->R; r++) {
        const int64_t qlen = (int64_t)b->qsl[r + 1] - b->qsl[r];
        if (b->seq_lens[r] > fit) b->seq_lens[r] = (int32_t)(fit > qlen ? fit : qlen);
      }
    }
  }
  b->in_stride = k.in_stride > 0 ? k.in_stride : b->cols - k.in_stride;
  b->out_stride = k.out_stride > 0 ? k.out_stride : b->cols - k.out_stride;

  /* block table: recognisable ids r * 100000 + c + 1, gap columns AMT_GAP */
  if (b->cols > 0) {
    b->block_table = xcalloc((size_t)(b->R > 0 ? b->R : 1) * (size_t)b->in_stride,
                             sizeof(int32_t));
    for (r = 0; r < b->R; r++)
      for (col = 0; col < b->in_stride; col++)
        b->block_table[(int64_t)r * b->in_stride + col] =
            col < b->cols ? r * 100000 + col + 1 : AMT_GAP;
    for (r = 0; r < k.npatch; r++)
      b->block_table[(int64_t)k.patch[r].row * b->in_stride + k.patch[r].col] = k.patch[r].value;
    b->table_elems = b->R > 0 ? (int64_t)(b->R - 1) * b->in_stride + b->cols : 1;
  }
  return b;
}

void amt_batch_free(amt_batch *b) {
  if (!b) return;
  free(b->qsl);
  free(b->seq_lens);
  free(b->block_table);
  free(b);
}

void amt_reference_input(const amt_batch *b, int k, amr_input *in) {
  amr_input_requests(in, b->qsl, b->R, b->T, b->C, b->seq_lens);
  amr_input_table(in, b->block_table, b->cols, b->in_stride, b->block_size);
  amr_input_dcp(in, b->world, b->ranks[k], b->interleave);
  in->num_mapped = b->num_mapped;
}

amr_output *amt_reference_outputs(const amt_batch *b, int k) {
  amr_input in;
  amr_output *o;
  amt_reference_input(b, k, &in);
  o = amr_alloc(&in);
  amr_build(&in, o);
  return o;
}
