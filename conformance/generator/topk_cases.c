// SPDX-License-Identifier: Apache-2.0
/* The top-k conversion's test cases. See topk_cases.h. */
#include "topk_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"

/* How a row's indices are drawn. */
enum {
  FILL_ENGINE, /* random in-range positions with runs of -1 and runs past the table */
  FILL_DENSE,  /* random in-range positions, few -1 (hundreds valid per row) */
  FILL_SEQ     /* 0, 1, ..., seq_len - 1, then -1 */
};

/* Hostile data. */
enum {
  BAD_REQ_ID = 1,     /* req_id entries outside [0, R) */
  BAD_WORKSPACE = 2,  /* prefill_req entries >= P */
  NEG_BLOCKS = 4,     /* negative block ids */
  OVERFLOW = 8,       /* block id x stride_rows past INT32_MAX, workspace sums past it */
  NEG_SLOTS = 16,     /* token_slot < 0 for some tokens */
  PADDING = 32,       /* qsl[R] < T: padding tokens */
  BAD_QSL = 64,       /* decreasing boundaries, qsl[R] > T */
  TOTAL_BIG = 128     /* qsl[R] > T */
};

/* The layout of topk_prefill_past_table: token 0 a prefill into the
 * workspace at 100, token 1 one at 0, token 2 a decode token, each row's
 * positions reaching past the table of 2 x 16 positions. */
#define PREFILL_HAND 2

typedef struct spec {
  const char *name;
  int32_t T, K, R, cols, bs, stride_rows, W, k, I;
  int by_req_id;       /* the request from req_id[T], not qsl */
  int fill, seq_len;
  int topk_pad, out_pad, table_pad;
  int prefill;         /* 1: the engines' prefill-workspace layout; PREFILL_HAND: worked by hand */
  int hostile;
  int compact, count;
  int64_t peer;        /* 0, or the peer view's segment in blocks (section 6c) */
} spec;

#define ENGINE(bs_, k_) \
  {"topk_engine_bs" #bs_ "_k" #k_, 8, k_, 4, 10, bs_, 0, 1, 0, 1, 0, FILL_ENGINE, 0, 0, 0, 0, 0, 0, 0, 1, 0}
#define DCP(i_, k_) \
  {"topk_dcp_w2_i" #i_ "_k" #k_, 8, 1024, 4, 64, 16, 0, 2, k_, i_, 0, FILL_DENSE, 0, 0, 0, 0, 0, 0, 1, 1, 0}

static const spec specs[] = {
    ENGINE(16, 128), ENGINE(16, 256), ENGINE(16, 512),
    ENGINE(64, 128), ENGINE(64, 256), ENGINE(64, 512),
    ENGINE(128, 128), ENGINE(128, 256), ENGINE(128, 512),
    {"topk_engine_req_id", 8, 256, 4, 10, 64, 0, 1, 0, 1, 1, FILL_ENGINE, 0, 0, 0, 0, 0, 0, 1, 1, 0},
    {"topk_prefill_workspace", 12, 128, 4, 10, 16, 0, 1, 0, 1, 1, FILL_ENGINE, 0, 0, 0, 0, 1, 0, 0, 1, 0},
    {"topk_prefill_past_table", 3, 16, 2, 2, 16, 0, 1, 0, 1, 1, FILL_SEQ, 0, 0, 0, 0, PREFILL_HAND, 0, 1, 1, 0},
    {"topk_prefill_dcp_w2", 12, 128, 4, 10, 16, 0, 2, 1, 1, 1, FILL_ENGINE, 0, 0, 0, 0, 1, 0, 1, 1, 0},
    {"topk_prefill_dcp_w2_i2", 12, 64, 4, 3, 16, 0, 2, 0, 2, 1, FILL_ENGINE, 0, 0, 0, 0, 1, 0, 0, 1, 0},
    {"topk_dcp_example", 1, 128, 1, 1, 4, 0, 2, 0, 1, 0, FILL_SEQ, 8, 0, 0, 0, 0, 0, 1, 1, 0},
    {"topk_owner_filter", 6, 13, 1, 3, 8, 0, 1, 0, 1, 1, FILL_ENGINE, 0, 0, 0, 0, 0, 0, 1, 1, 0},
    DCP(1, 0), DCP(1, 1), DCP(2, 0), DCP(2, 1),
    {"topk_strides_odd_k", 7, 13, 3, 5, 4, 0, 1, 0, 1, 0, FILL_ENGINE, 0, 3, 5, 2, 0, 0, 1, 1, 0},
    {"topk_stride_rows", 8, 64, 4, 10, 16, 48, 1, 0, 1, 0, FILL_ENGINE, 0, 0, 0, 0, 0, 0, 0, 1, 0},
    {"topk_padding", 10, 64, 3, 10, 16, 0, 1, 0, 1, 0, FILL_ENGINE, 0, 0, 0, 0, 0, PADDING, 1, 1, 0},
    {"topk_total_past_t", 6, 64, 3, 10, 16, 0, 1, 0, 1, 0, FILL_ENGINE, 0, 0, 0, 0, 0, TOTAL_BIG, 0, 1, 0},
    {"topk_no_requests", 4, 32, 0, 0, 16, 0, 1, 0, 1, 1, FILL_ENGINE, 0, 0, 0, 0, 0, 0, 1, 1, 0},
    {"topk_token_slot", 8, 128, 4, 10, 16, 0, 1, 0, 1, 0, FILL_ENGINE, 0, 0, 0, 0, 0, NEG_SLOTS, 1, 1, 0},
    {"topk_hostile_req_id", 8, 64, 4, 10, 16, 0, 1, 0, 1, 1, FILL_ENGINE, 0, 0, 0, 0, 0, BAD_REQ_ID, 1, 1, 0},
    {"topk_hostile_workspace", 12, 64, 4, 10, 16, 0, 1, 0, 1, 1, FILL_ENGINE, 0, 0, 0, 0, 1, BAD_WORKSPACE, 1, 1, 0},
    {"topk_hostile_block_ids", 8, 128, 4, 10, 16, 0, 1, 0, 1, 0, FILL_ENGINE, 0, 0, 0, 0, 0, NEG_BLOCKS, 0, 1, 0},
    {"topk_hostile_overflow", 12, 64, 4, 10, 16, 4, 1, 0, 1, 1, FILL_ENGINE, 0, 0, 0, 0, 1, OVERFLOW, 1, 1, 0},
    {"topk_hostile_qsl", 8, 64, 4, 10, 16, 0, 1, 0, 1, 0, FILL_ENGINE, 0, 0, 0, 0, 0, BAD_QSL, 1, 1, 0},
    /* DCP peer views (section 6c): table ids in [0, 1000), segments shorter
     * so that some ids lie past theirs */
    {"topk_peer_hand", 2, 257, 2, 3, 4, 0, 2, 0, 2, 1, FILL_SEQ, 0, 0, 0, 0, 0, 0, 0, 1, 16},
    {"topk_peer_w2_i2", 8, 257, 4, 10, 16, 0, 2, 1, 2, 1, FILL_ENGINE, 0, 3, 5, 2, 0, 0, 0, 1, 800},
    {"topk_peer_w4_qsl", 9, 130, 3, 6, 64, 0, 4, 0, 64, 0, FILL_DENSE, 0, 0, 0, 0, 0, 0, 1, 1, 900},
    {"topk_peer_w1", 8, 128, 4, 10, 64, 0, 1, 0, 1, 1, FILL_ENGINE, 0, 0, 0, 0, 0, 0, 0, 0, 600},
    {"topk_peer_stride_rows", 8, 64, 4, 10, 16, 40, 2, 1, 1, 1, FILL_ENGINE, 0, 0, 0, 0, 0, 0, 1, 1, 950},
    {"topk_peer_prefill", 12, 64, 4, 3, 16, 0, 2, 0, 2, 1, FILL_ENGINE, 0, 0, 0, 0, 1, 0, 0, 1, 500},
    {"topk_peer_hostile", 8, 64, 4, 10, 16, 0, 2, 1, 1, 1, FILL_ENGINE, 0, 0, 0, 0, 0,
     BAD_REQ_ID | NEG_BLOCKS | NEG_SLOTS, 1, 1, 700},
};

int amt_topk_num_cases(void) { return (int)(sizeof specs / sizeof specs[0]); }
const char *amt_topk_case_name(int i) { return specs[i].name; }

/* FNV-1a wraps modulo 2^64 on purpose (clang's unsigned-overflow check) */
#if defined(__clang__)
__attribute__((no_sanitize("unsigned-integer-overflow")))
#endif
static uint64_t seed_of(const char *name) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  while (*name) h = (h ^ (unsigned char)*name++) * 1099511628211ull;
  return h;
}

/* Row t of `topk`: positions of the request, local to it. */
static void fill_row(const spec *s, uint64_t *rng, int32_t *row) {
  const int32_t span = s->bs * s->cols * (s->W > 1 ? s->W : 1); /* positions the table covers */
  int32_t j;
  if (s->fill == FILL_SEQ) {
    for (j = 0; j < s->K; j++) row[j] = j < s->seq_len ? j : -1;
    return;
  }
  for (j = 0; j < s->K; j++) {
    const int32_t u = amt_rand_range(rng, 0, 99);
    if (s->fill == FILL_DENSE) {
      row[j] = u < 3 ? -1 : amt_rand_range(rng, 0, span > 0 ? span - 1 : 0);
    } else {
      row[j] = amt_rand_range(rng, 0, span > 0 ? span - 1 : 0);
      (void)u;
    }
  }
  if (s->fill == FILL_ENGINE && s->K >= 8) {
    /* a run of -1 and a run past the table, at random places */
    const int32_t len = s->K / 8;
    const int32_t a = amt_rand_range(rng, 0, s->K - len);
    const int32_t b = amt_rand_range(rng, 0, s->K - len);
    for (j = 0; j < len; j++) row[a + j] = -1;
    for (j = 0; j < len; j++) row[b + j] = span + amt_rand_range(rng, 0, 3 * s->bs);
    if (s->hostile & OVERFLOW) row[0] = INT32_MAX - 5; /* past the table */
  }
}

amt_topk_batch *amt_topk_materialize(int i) {
  const spec *s = &specs[i];
  amt_topk_batch *b = calloc(1, sizeof *b);
  uint64_t rng = seed_of(s->name);
  const int64_t topk_stride = (int64_t)s->K + s->topk_pad;
  const int64_t table_stride = (int64_t)s->cols + s->table_pad;
  int32_t t, r, c;
  if (!b) return NULL;
  snprintf(b->name, sizeof b->name, "%s", s->name);
  b->topk_elems = s->T * topk_stride;
  b->table_elems = s->R * table_stride > 0 ? s->R * table_stride : 1;
  b->topk = calloc((size_t)(b->topk_elems > 0 ? b->topk_elems : 1), sizeof(int32_t));
  b->table = calloc((size_t)b->table_elems, sizeof(int32_t));
  b->qsl = calloc((size_t)s->R + 1, sizeof(int32_t));
  b->req_id = calloc((size_t)s->T + 1, sizeof(int32_t));
  if (!b->topk || !b->table || !b->qsl || !b->req_id) {
    amt_topk_batch_free(b);
    return NULL;
  }
  b->expect_count0 = -1;
  for (c = 0; c < 8; c++) b->expect_row0[c] = -1;

  /* requests: tokens split as evenly as the count allows */
  for (r = 0; r <= s->R; r++) b->qsl[r] = s->R ? (int32_t)((int64_t)s->T * r / s->R) : 0;
  for (t = 0; t < s->T; t++) {
    b->req_id[t] = 0;
    for (r = 0; r < s->R; r++)
      if (b->qsl[r + 1] > t) {
        b->req_id[t] = r;
        break;
      }
  }
  if (s->hostile & PADDING) { /* the last 3 tokens are padding, the last request empty */
    b->qsl[s->R] = s->T - 3;
    b->qsl[s->R - 1] = s->T - 3;
  }
  if (s->hostile & TOTAL_BIG) b->qsl[s->R] = s->T + 5;
  if (s->hostile & BAD_QSL) {
    b->qsl[1] = 7;
    b->qsl[2] = 1;
    b->qsl[s->R] = s->T + 100;
    b->values_unspecified = 1;
  }
  if (s->hostile & BAD_REQ_ID) {
    b->req_id[1] = -1;
    b->req_id[3] = s->R;
    b->req_id[5] = INT32_MIN;
    b->req_id[6] = INT32_MAX;
  }

  /* block table: distinct-ish ids in [0, 1000), gap columns poisoned */
  for (r = 0; r < s->R; r++)
    for (c = 0; c < (int32_t)table_stride; c++)
      b->table[r * table_stride + c] = c < s->cols ? amt_rand_range(&rng, 0, 999) : AMT_GAP;
  if (s->hostile & NEG_BLOCKS)
    for (r = 0; r < s->R; r++) b->table[r * table_stride + (r * 3) % s->cols] = -1 - r;
  if (s->hostile & OVERFLOW) {
    b->table[0 * table_stride + 1] = 1 << 29;    /* x 4 = 2^31: one past INT32_MAX */
    b->table[1 * table_stride + 2] = INT32_MAX;  /* x 4 overflows int32 */
    b->table[2 * table_stride + 0] = (1 << 29) - 1; /* x 4 + 15 fits */
  }
  if (!strcmp(s->name, "topk_dcp_example")) b->table[0] = 10;

  for (t = 0; t < s->T; t++) fill_row(s, &rng, b->topk + t * topk_stride);
  for (t = 0; t < s->T; t++) /* stride gaps of topk hold values the kernel must not read */
    for (c = s->K; c < (int32_t)topk_stride; c++) b->topk[t * topk_stride + c] = AMT_GAP;

  if (s->prefill) { /* the engines' case: requests 2 and 3 are prefills into a workspace */
    static const int32_t req12[12] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3};
    b->prefill_req = calloc((size_t)s->T, sizeof(int32_t));
    b->workspace_starts = calloc(2, sizeof(int32_t));
    if (!b->prefill_req || !b->workspace_starts) {
      amt_topk_batch_free(b);
      return NULL;
    }
    for (t = 0; t < s->T; t++) {
      b->req_id[t] = req12[t];
      b->prefill_req[t] = t < 6 ? -1 : (t < 9 ? 0 : 1);
    }
    b->workspace_starts[0] = 0;
    b->workspace_starts[1] = 100;
    if (s->hostile & BAD_WORKSPACE) {
      b->prefill_req[6] = 2;          /* == P */
      b->prefill_req[9] = INT32_MAX;
      b->prefill_req[1] = -7;         /* any negative is a decode token */
    }
    if (s->hostile & OVERFLOW) {
      b->workspace_starts[0] = INT32_MAX - 40; /* + x passes INT32_MAX for x > 40 */
      b->workspace_starts[1] = -1000;          /* + x below 0 for x < 1000 */
    }
    if (s->prefill == PREFILL_HAND) { /* the contract's examples, on a table of 32 positions */
      static const int32_t row0[16] = {200, -1, 7, 31, 32, 128, -5, 2000};
      static const int32_t row1[16] = {128, 0, 31, 32, -1, 100};
      static const int32_t row2[16] = {128, 0, 31, 32, -1, 100};
      const int32_t *rows[3] = {row0, row1, row2};
      for (t = 0; t < s->T; t++) {
        b->req_id[t] = t == 2 ? 1 : 0;
        b->prefill_req[t] = t == 0 ? 0 : t == 1 ? 1 : -1;
        for (c = 0; c < s->K; c++) b->topk[t * topk_stride + c] = c < 8 ? rows[t][c] : -1;
      }
      b->workspace_starts[0] = 100;
      b->workspace_starts[1] = 0;
      /* row 0: 200 + 100, 7 + 100, ..., past the table and still valid */
      b->expect_count0 = 6;
      b->expect_row0[0] = 300;
      b->expect_row0[1] = 107;
      b->expect_row0[2] = 131;
      b->expect_row0[3] = 132;
      b->expect_row0[4] = 228;
      b->expect_row0[5] = 2100;
    }
  }
  if (s->hostile & NEG_SLOTS) {
    b->token_slot = calloc((size_t)s->T, sizeof(int64_t));
    if (!b->token_slot) {
      amt_topk_batch_free(b);
      return NULL;
    }
    for (t = 0; t < s->T; t++) b->token_slot[t] = (t % 3 == 1) ? -1 : (int64_t)t * 1000;
    b->token_slot[s->T - 1] = INT64_MIN;
  }
  if (!strcmp(s->name, "topk_owner_filter")) {
    /* DCP peer slots to owner 2's local slots (contract section 6b): 3 ranks,
     * segments of 8 slots, the table [-1, -1, 0] keeps [16, 24) */
    static const int32_t row0[13] = {16, 3, 23, -1, 17, 8, 24, 20, 15, -1, 30, 0, 19};
    static const int32_t want0[6] = {0, 7, 1, 4, 3, -1};
    b->table[0] = -1;
    b->table[1] = -1;
    b->table[2] = 0;
    memcpy(b->topk, row0, sizeof row0);
    b->expect_count0 = 5;
    for (c = 0; c < 6; c++) b->expect_row0[c] = want0[c];
  }
  if (!strcmp(s->name, "topk_peer_hand")) {
    /* worked by hand (W 2, I 2, bs 4, S 16): position x of rank o = (x / 2) % 2
     * at local (x / 4) * 2 + x % 2, slot (o * 16 + table[blk]) * 4 + local % 4 */
    static const int32_t table[6] = {3, 7, 9, 5, 1, 6};
    static const int32_t row0[8] = {0, 1, 2, 3, 8, 9, 10, 11};
    static const int32_t row1[8] = {4, 5, 6, 7, 12, 13, 14, 15};
    static const int32_t want0[8] = {12, 13, 76, 77, 28, 29, 92, 93};
    for (t = 0; t < 2; t++) {
      for (c = 0; c < s->K; c++) b->topk[t * topk_stride + c] = c < 8 ? (t ? row1 : row0)[c] : -1;
      b->req_id[t] = t;
    }
    memcpy(b->table, table, sizeof table);
    b->expect_count0 = 8;
    for (c = 0; c < 8; c++) b->expect_row0[c] = want0[c];
  }
  if (!strcmp(s->name, "topk_dcp_example")) { /* worked by hand: positions 0, 2, 4, 6 */
    b->expect_count0 = 4;
    b->expect_row0[0] = 40;
    b->expect_row0[1] = 41;
    b->expect_row0[2] = 42;
    b->expect_row0[3] = 43;
  }

  b->in.topk = b->topk;
  b->in.topk_stride = topk_stride;
  b->in.num_tokens = s->T;
  b->in.topk_count = s->K;
  b->in.qsl = s->by_req_id ? NULL : b->qsl;
  b->in.req_id = s->by_req_id ? b->req_id : NULL;
  b->in.num_reqs = s->R;
  b->in.table = b->table;
  b->in.cols = s->cols;
  b->in.table_stride = table_stride;
  b->in.block_size = s->bs;
  b->in.stride_rows = s->stride_rows > 0 ? s->stride_rows : s->bs;
  b->in.world = s->W;
  b->in.rank = s->k;
  b->in.interleave = s->I;
  b->in.prefill_req = b->prefill_req;
  b->in.workspace_starts = b->workspace_starts;
  b->in.num_prefill = b->workspace_starts ? 2 : 0;
  b->in.token_slot = b->token_slot;
  b->in.compact = s->compact;
  b->in.peer_blocks = s->peer;
  b->count = s->count || s->compact;
  b->out_stride = (int64_t)s->K + s->out_pad;
  b->stride_rows_arg = s->stride_rows;
  if (!strcmp(s->name, "topk_strides_odd_k")) b->misalign = 3;
  if (!strcmp(s->name, "topk_engine_req_id")) b->misalign = 2;
  return b;
}

void amt_topk_batch_free(amt_topk_batch *b) {
  size_t i;
  if (!b) return;
  {
    void *const owned[] = {b->topk, b->qsl, b->req_id, b->table, b->prefill_req,
                           b->workspace_starts, b->token_slot, b};
    for (i = 0; i < sizeof owned / sizeof owned[0]; i++) free(owned[i]);
  }
}
