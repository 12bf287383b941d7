// SPDX-License-Identifier: Apache-2.0
/* The table of DeepSeek-V3.2/V4 step cases. See cases_dsv4.h. */
#include "cases_dsv4.h"

#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"

#define COUNT(...) ((int32_t)(sizeof((int32_t[]){__VA_ARGS__}) / sizeof(int32_t)))
#define QL(...) .qlens = {__VA_ARGS__}, .num_reqs = COUNT(__VA_ARGS__)
#define SEQ(...) .seq_lens = {__VA_ARGS__}
#define RAWQ(T_, ...) \
  .raw_qsl = 1, .num_tokens = (T_), .qsl = {__VA_ARGS__}, .num_reqs = COUNT(__VA_ARGS__) - 1
#define ROW(...) .row = {__VA_ARGS__}, .nrow = COUNT(__VA_ARGS__)

/* One compressed group, DSV4's storage block 256 / ratio. */
#define GROUP1(r) .ngroups = 1, .ratio = {r}, .group_bs = {256 / (r)}
/* The groups of a DSV4 step: ratio 4 and 128. */
#define GROUPS_V4 .ngroups = 2, .ratio = {4, 128}, .group_bs = {64, 2}
#define SWA(w, width, mode) .swa_window = (w), .swa_width = (width), .swa_bs = 64, \
    .swa_mode = (mode)
#define C128A(width, mode) .c128a_ratio = 128, .c128a_bs = 2, .c128a_width = (width), \
    .c128a_mode = (mode)

/* The engines' compressed slot-mapping matrix: ratio x context x decode
 * length x batch, storage block 256 / ratio. */
#define CMP(r, ctx, q, b)                                                              \
  {"cmp_r" #r "_ctx" #ctx "_q" #q "_b" #b, .batch = (b), .qlen = (q), .context = (ctx), \
   GROUP1(r), .pad_tokens = 2, .cap_extra = 3}
#define CMP_CTX(r, ctx) CMP(r, ctx, 1, 1), CMP(r, ctx, 1, 4), CMP(r, ctx, 8, 1), CMP(r, ctx, 8, 4)

#define PCP(lbs) .pcp_lbs = (lbs)
#define IMAGES(m) .swa_image_tokens = (m)

#define INDEXER(r, mode) .indexer_ratio = (r), .indexer_mode = (mode)
#define DECODE ATTNMETA_INDEXER_DECODE
#define PREFILL ATTNMETA_INDEXER_PREFILL

/* The indexer's lengths under DCP, every rank, both orders. */
#define IXL_DCP(w, i, mode)                                                                 \
  {"ixl_dcp_w" #w "_i" #i "_" #mode, QL(1, 3, 1, 2, 4), SEQ(700, 129, 90000, 300, 13),     \
   .world = (w), .interleave = (i), INDEXER(4, mode), .pad_tokens = 2, .cap_extra = 3}

#define CAUSAL ATTNMETA_SWA_CAUSAL
#define NONCAUSAL ATTNMETA_SWA_NON_CAUSAL
#define GLOBAL ATTNMETA_C128A_GLOBAL
#define LOCAL ATTNMETA_C128A_LOCAL
#define MIXED ATTNMETA_C128A_MIXED

/* A whole DSV4 step under DCP, every rank. */
#define DCP_STEP(w, i)                                                                    \
  {"dsv4_dcp_w" #w "_i" #i, QL(1, 3, 1, 2), SEQ(700, 129, 90000, 300), .world = (w),      \
   .interleave = (i), GROUPS_V4, SWA(8, 8, CAUSAL), C128A(1024, GLOBAL), .pad_tokens = 2, \
   .cap_extra = 2}

#define F_OOT ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE
#define F_NEGID ATTNMETA_FLAG_BLOCK_ID_NEGATIVE
#define F_POSNEG ATTNMETA_FLAG_POSITION_NEGATIVE
#define F_RANGE ATTNMETA_FLAG_SLOT_OUT_OF_RANGE

const amd_case amd_cases[] = {
    /* ---- compressed slot mapping: the engines' matrix and the worked examples ---- */
    CMP_CTX(4, 8192), CMP_CTX(4, 32768), CMP_CTX(4, 131072),
    CMP_CTX(128, 8192), CMP_CTX(128, 32768), CMP_CTX(128, 131072),
    {"cmp_example_seq280_q40", QL(40), SEQ(280), GROUP1(4), ROW(5, 7)},
    {"cmp_example_seq260_q8", QL(8), SEQ(260), GROUP1(4), ROW(5, 7)},
    {"cmp_four_groups", QL(1, 4, 2, 1, 9), SEQ(4000, 4096, 33, 3, 257), .ngroups = 4,
     .ratio = {4, 128, 32, 1}, .group_bs = {64, 2, 8, 16}, .pad_tokens = 3, .cap_extra = 7},

    /* ---- sliding window: window 8 and 128, block 64, causal and draft blocks ---- */
    {"swa_w8_causal", QL(1, 3, 8, 1, 2), SEQ(5, 64, 200, 1, 130), SWA(8, 8, CAUSAL),
     .pad_tokens = 2, .cap_extra = 3},
    {"swa_w8_noncausal", QL(1, 3, 8, 1, 2), SEQ(5, 64, 200, 1, 130), SWA(8, 16, NONCAUSAL),
     .pad_tokens = 2, .cap_extra = 3},
    {"swa_w128_causal", QL(1, 3, 8, 1, 2), SEQ(5, 64, 2000, 127, 130), SWA(128, 128, CAUSAL),
     .pad_tokens = 2, .cap_extra = 3},
    {"swa_w128_noncausal", QL(1, 3, 8, 1, 2), SEQ(5, 64, 2000, 127, 130),
     SWA(128, 136, NONCAUSAL), .pad_tokens = 2, .cap_extra = 3},
    {"swa_w128_scalar_rows", QL(2, 5), SEQ(300, 70), SWA(128, 130, CAUSAL), .stride_extra = 3,
     .pad_tokens = 1, .cap_extra = 1},
    {"swa_w8_misaligned", QL(2, 5), SEQ(300, 70), SWA(8, 8, NONCAUSAL), .misalign = 1,
     .pad_tokens = 1},
    /* tokens with no KV slot of their own (the engine's slot_mapping < 0):
     * length 0, a row of -1, no flag, in either mode, negative positions too */
    {"swa_slotless_causal", QL(1, 3, 8, 1, 2), SEQ(5, 64, 200, 1, 130), SWA(8, 8, CAUSAL),
     .pad_tokens = 2, .cap_extra = 3, .swa_slot_gap = 3},
    {"swa_slotless_noncausal", QL(1, 3, 8, 1, 2), SEQ(5, 64, 200, 1, 130),
     SWA(128, 136, NONCAUSAL), .pad_tokens = 2, .cap_extra = 3, .swa_slot_gap = 2},
    {"swa_slotless_seq_negative", QL(2, 1, 3), SEQ(-3, 0, 2), SWA(8, 8, CAUSAL),
     .pad_tokens = 1, .swa_slot_gap = 2},

    /* ---- heavily compressed rows ---- */
    {"c128a_pos256_299_local", QL(1, 1), SEQ(257, 300), C128A(8192, LOCAL)},
    {"c128a_pos256_299_global", QL(1, 1), SEQ(257, 300), C128A(8192, GLOBAL), ROW(0, 9, 4)},
    {"c128a_w8192_global_long", QL(1, 2, 1), SEQ(1048576 + 300, 500000, 128), C128A(8192, GLOBAL),
     .pad_tokens = 1, .cap_extra = 2},
    {"c128a_w100_odd_stride", QL(3, 1), SEQ(20000, 127), C128A(100, GLOBAL), .stride_extra = 1,
     .pad_tokens = 2},
    {"c128a_misaligned_local", QL(3, 1), SEQ(20000, 127), C128A(64, LOCAL), .misalign = 1},
    /* one launch for a mixed batch: decode tokens [0, D) get global rows,
     * the prefill tokens after them request-local rows in the second table */
    {"c128a_mixed_decode3_prefill", QL(1, 2, 5, 3), SEQ(700, 1300, 900, 260), C128A(16, MIXED),
     .c128a_decode = 3, .pad_tokens = 2, .cap_extra = 2},
    {"c128a_mixed_all_decode", QL(1, 1, 1), SEQ(300, 129, 5000), C128A(64, MIXED),
     .c128a_decode = 3, .stride_extra = 1},
    {"c128a_mixed_all_prefill", QL(4, 2), SEQ(1000, 256), C128A(8, MIXED), .pad_tokens = 1},
    {"c128a_mixed_dcp_misaligned", QL(1, 1, 6), SEQ(2000, 900, 1500), C128A(16, MIXED),
     .c128a_decode = 2, .world = 2, .interleave = 1, .misalign = 1, .pad_tokens = 1},

    /* ---- whole DSV4 steps ---- */
    {"dsv4_step_decode", QL(1, 1, 1, 1), SEQ(8192, 32768, 131072, 1000), GROUPS_V4,
     SWA(128, 128, CAUSAL), C128A(1024, GLOBAL), .pad_tokens = 4, .cap_extra = 4},
    {"dsv4_step_mtp", QL(2, 2, 2), SEQ(511, 512, 513), GROUPS_V4, SWA(128, 130, NONCAUSAL),
     C128A(8, GLOBAL), .pad_tokens = 2, .cap_extra = 2},
    {"dsv4_r0_padding", .num_reqs = 0, GROUPS_V4, SWA(8, 8, CAUSAL), C128A(8, LOCAL),
     .pad_tokens = 5, .cap_extra = 3},
    DCP_STEP(2, 1), DCP_STEP(2, 2), DCP_STEP(4, 1), DCP_STEP(4, 2),

    /* ---- the indexer's compressed lengths ---- */
    {"ixl_r4_decode", QL(1, 3, 1, 2), SEQ(700, 129, 90000, 3), INDEXER(4, DECODE),
     .pad_tokens = 2, .cap_extra = 3},
    {"ixl_r128_mtp", QL(2, 2, 2), SEQ(511, 512, 513), INDEXER(128, DECODE), .pad_tokens = 2},
    {"ixl_r1_prefill_mode", QL(5, 1), SEQ(5, 40), INDEXER(1, PREFILL), .cap_extra = 1},
    {"ixl_example_w2_decode", QL(1), SEQ(12), .world = 2, INDEXER(4, DECODE)},
    {"ixl_example_w2_prefill", QL(1), SEQ(12), .world = 2, INDEXER(4, PREFILL)},
    IXL_DCP(2, 1, DECODE), IXL_DCP(2, 1, PREFILL), IXL_DCP(4, 2, DECODE),
    IXL_DCP(4, 2, PREFILL), IXL_DCP(8, 16, PREFILL),
    {"ixl_dsv4_step", QL(1, 1, 3, 1), SEQ(8192, 32768, 131072, 1000), GROUPS_V4,
     SWA(128, 128, CAUSAL), C128A(1024, GLOBAL), INDEXER(4, DECODE), .world = 2,
     .pad_tokens = 4, .cap_extra = 4},
    {"ixl_r0_padding", .num_reqs = 0, INDEXER(4, DECODE), .pad_tokens = 5, .cap_extra = 3},
    {"ixl_hostile_seq_negative", QL(2, 1, 3), SEQ(-3, 0, 2), INDEXER(4, DECODE),
     .pad_tokens = 1, .cap_extra = 1},
    {"ixl_hostile_qsl_decreasing", RAWQ(8, 0, 5, 2, 6), SEQ(100, 200, 300), INDEXER(4, PREFILL),
     .world = 2, .cap_extra = 2},
    {"ixl_hostile_seq_int32_max", QL(1, 2), SEQ(INT32_MAX, INT32_MAX - 1), INDEXER(3, DECODE),
     .world = 4, .interleave = 2, .table_cols = 3},

    /* ---- section 5b: PCP's logical slots mapped into each group ---- */
    {"pcp_v4_decode", QL(1, 1, 1, 1), SEQ(8192, 300, 17, 4096), GROUPS_V4, PCP(256),
     .pad_tokens = 2, .cap_extra = 3},
    {"pcp_v4_prefill_chunks", QL(40, 8), SEQ(280, 260), GROUPS_V4, PCP(256), .cap_extra = 1},
    {"pcp_three_ratios", QL(3, 5, 1), SEQ(131072, 9, 513), .ngroups = 3, .ratio = {1, 4, 128},
     .group_bs = {512, 128, 4}, PCP(512), .pad_tokens = 1},
    {"pcp_dsv4_step", QL(1, 1, 3, 1), SEQ(8192, 32768, 131072, 1000), GROUPS_V4,
     SWA(128, 128, CAUSAL), C128A(8, GLOBAL), INDEXER(4, DECODE), PCP(256), .pad_tokens = 2,
     .cap_extra = 3},
    {"pcp_r0_padding", .num_reqs = 0, GROUPS_V4, PCP(256), .pad_tokens = 5, .cap_extra = 2},
    {"pcp_hostile_slots_positions", QL(7, 9, 4), SEQ(20, 300, 4), GROUPS_V4, PCP(256),
     .pcp_hostile = 1, .cap_extra = 2},
    {"pcp_hostile_qsl_decreasing", RAWQ(8, 0, 5, 2, 6), SEQ(100, 200, 300), GROUPS_V4, PCP(256),
     .cap_extra = 2},

    /* ---- section 7: in-image visibility and the replay floor ---- */
    {"swa_vis_image_prefill", QL(40), SEQ(50), SWA(8, 40, CAUSAL), IMAGES(32), .cap_extra = 2},
    {"swa_vis_decode_and_images", QL(1, 20, 9), SEQ(70, 40, 9), SWA(6, 22, CAUSAL), IMAGES(16),
     .pad_tokens = 2, .cap_extra = 3, .swa_slot_gap = 5},
    {"swa_vis_w128_image64", QL(1, 90), SEQ(4000, 200), SWA(128, 192, CAUSAL), IMAGES(64),
     .stride_extra = 3, .pad_tokens = 1},
    {"swa_vis_image_wider_than_window", QL(30), SEQ(30), SWA(4, 36, CAUSAL), IMAGES(32),
     .misalign = 1},
    {"swa_vis_hostile_counts", QL(8, 10), SEQ(30, 12), SWA(5, 12, CAUSAL), IMAGES(8),
     .swa_visible_hostile = 1, .table_cols = 3, .pad_tokens = 2},
    {"swa_vis_r0_padding", .num_reqs = 0, SWA(8, 24, CAUSAL), IMAGES(16), .pad_tokens = 5,
     .cap_extra = 2},
    {"swa_vis_dsv4_step", QL(1, 1, 30, 1), SEQ(8192, 300, 1000, 17), GROUPS_V4,
     SWA(128, 192, CAUSAL), IMAGES(64), C128A(8, GLOBAL), INDEXER(4, DECODE), .pad_tokens = 2,
     .cap_extra = 3},
    {"swa_vis_replay_floor", QL(1, 1, 10, 12), SEQ(40, 300, 20, 12), SWA(16, 16, CAUSAL),
     .swa_floor = 1, .pad_tokens = 2, .cap_extra = 1, .swa_slot_gap = 7},
    {"swa_vis_replay_w128", QL(1, 1, 1, 64), SEQ(8192, 130, 5, 700), SWA(128, 128, CAUSAL),
     .swa_floor = 1},
    {"swa_vis_replay_hostile", QL(5, 1, 10), SEQ(9, 1 << 30, 10), SWA(7, 9, CAUSAL),
     .swa_floor = 2, .table_cols = 6, .cap_extra = 2},

    /* ---- section 7: every SWA group of a step in one launch ---- */
    {"swa_grp_g2_decode", QL(1, 1, 1), SEQ(40, 300, 9), SWA(8, 8, CAUSAL), .swa_groups = 2,
     .cap_extra = 2},
    {"swa_grp_g3_token_slots", QL(1, 2, 7), SEQ(130, 20, 7), SWA(16, 16, CAUSAL),
     .swa_groups = 3, .swa_slot_gap = 4, .pad_tokens = 2, .cap_extra = 3},
    {"swa_grp_g2_replay_floor", QL(1, 1, 10, 12), SEQ(40, 300, 20, 12), SWA(16, 16, CAUSAL),
     .swa_groups = 2, .swa_floor = 1, .swa_slot_gap = 7, .pad_tokens = 2, .cap_extra = 1},
    {"swa_grp_g4_noncausal", QL(3, 5, 1), SEQ(300, 9, 70), SWA(8, 24, NONCAUSAL),
     .swa_groups = 4, .stride_extra = 5, .pad_tokens = 1},
    {"swa_grp_g3_dsv41_step", QL(1, 1, 1, 2), SEQ(8192, 300, 1000, 17), GROUPS_V4,
     SWA(128, 128, CAUSAL), C128A(8, GLOBAL), INDEXER(4, DECODE), .swa_groups = 3,
     .swa_floor = 1, .swa_slot_gap = 3, .stride_extra = 3, .pad_tokens = 2, .cap_extra = 3},
    {"swa_grp_g2_past_table", QL(1, 2, 1), SEQ(300, 600, 9000), SWA(128, 128, CAUSAL),
     .swa_groups = 2, .table_cols = 2, .expect_flags = F_OOT},
    {"swa_grp_g2_r0_padding", .num_reqs = 0, SWA(8, 8, CAUSAL), .swa_groups = 2,
     .pad_tokens = 3, .cap_extra = 2},

    /* ---- hostile data ---- */
    {"hostile_dsv4_seq_negative", QL(2, 1, 3), SEQ(-3, 0, 2), GROUPS_V4, SWA(8, 8, CAUSAL),
     C128A(8, GLOBAL), .pad_tokens = 1, .cap_extra = 1, .expect_flags = F_POSNEG},
    {"hostile_dsv4_seq_negative_noncausal", QL(2, 1, 3), SEQ(-3, 0, 2), SWA(8, 16, NONCAUSAL),
     C128A(8, LOCAL)},
    {"hostile_dsv4_neg_ids", QL(1, 2, 1), SEQ(300, 600, 900), GROUPS_V4, SWA(128, 128, CAUSAL),
     C128A(16, GLOBAL), .world = 2, .interleave = 2, .npatch = 4,
     .patch = {{0, 0, 1, -5}, {1, 1, 2, -1}, {4, 2, 13, -7}, {5, 2, 1, INT32_MIN}},
     .expect_flags = F_NEGID},
    {"hostile_dsv4_past_table", QL(1, 2, 1), SEQ(300, 600, 9000), GROUPS_V4,
     SWA(128, 128, CAUSAL), C128A(64, GLOBAL), .table_cols = 2, .expect_flags = F_OOT},
    {"hostile_dsv4_ids_past_int32", QL(2, 1), SEQ(700, 900), GROUPS_V4, SWA(128, 128, CAUSAL),
     C128A(16, GLOBAL), .npatch = 4,
     .patch = {{0, 0, 2, INT32_MAX}, {4, 0, 10, INT32_MAX}, {4, 1, 14, 1 << 26},
               {5, 1, 0, INT32_MAX / 2 + 1}},
     .expect_flags = F_RANGE},
    {"hostile_dsv4_seq_int32_max", QL(1, 2), SEQ(INT32_MAX, INT32_MAX - 1), GROUPS_V4,
     SWA(8, 8, CAUSAL), C128A(8, GLOBAL), .table_cols = 3, .expect_flags = F_OOT},
    {"hostile_dsv4_qsl_decreasing", RAWQ(8, 0, 5, 2, 6), SEQ(100, 200, 300), GROUPS_V4,
     SWA(8, 8, CAUSAL), C128A(8, GLOBAL), .cap_extra = 2},
    {"hostile_dsv4_total_past_T", RAWQ(6, 0, 3, 40), SEQ(100, 400), GROUPS_V4,
     SWA(8, 16, NONCAUSAL), C128A(8, GLOBAL), .cap_extra = 2},
};

const int amd_num_cases = (int)(sizeof(amd_cases) / sizeof(amd_cases[0]));

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) abort();
  return p;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Block-table columns enough for `rows` rows (positions or compressed rows)
 * in blocks of bs rows spread over W ranks, plus one. */
static int32_t cols_for(int64_t rows, int64_t bs, int64_t world) {
  return (int32_t)(ceil_div(rows > 0 ? rows : 0, bs * world) + 1);
}

/* Table `tab` as the reference reads it (rows packed: stride = cols). */
static amr_table table_view(const amd_batch *b, int tab) {
  amr_table t;
  t.ids = b->tables[tab];
  t.cols = b->cols[tab];
  t.stride = b->cols[tab];
  return t;
}

/* Section 5b's inputs: each real token's logical slot in blocks of the
 * logical block size (block 1000 + 7 r + pos / lbs) and its position; a
 * padding token (or any token of hostile boundaries) slot -1, position 0.
 * pcp_hostile: negative, huge and extreme values instead. */
static void fill_pcp(amd_batch *b, const amd_case *c) {
  int64_t *slots = xcalloc((size_t)b->T, sizeof(int64_t));
  int64_t *pos = xcalloc((size_t)b->T, sizeof(int64_t));
  int32_t t, r = 0;
  for (t = 0; t < b->T; t++) {
    while (!c->raw_qsl && r < b->R && t >= b->qsl[r + 1]) r++;
    if (c->pcp_hostile) {
      static const int64_t hs[6] = {-1, INT64_MAX, INT64_MIN, 0, INT64_MAX - 255, -256};
      static const int64_t hp[5] = {-1, INT64_MAX, INT64_MIN, 3, -4};
      slots[t] = t % 3 ? hs[t % 6] : 997 * (int64_t)t;
      pos[t] = t % 2 ? hp[t % 5] : t;
    } else if (!c->raw_qsl && r < b->R) {
      const int64_t p = (int64_t)b->seq_lens[r] - (b->qsl[r + 1] - b->qsl[r]) + (t - b->qsl[r]);
      slots[t] = (1000 + 7 * (int64_t)r + p / c->pcp_lbs) * c->pcp_lbs + p % c->pcp_lbs;
      pos[t] = p;
    } else {
      slots[t] = -1;
    }
  }
  b->extra.pcp_logical_slots = b->extra_buffers[0] = slots;
  b->extra.pcp_positions = b->extra_buffers[1] = pos;
  b->extra.pcp_logical_block_size = c->pcp_lbs;
}

/* Section 7's in-image counts: request r's real tokens from the second on
 * hold one image of at most swa_image_tokens positions (a request of 3 or
 * more real tokens), each token of it vLLM's min(p - a, M - 1) and
 * min(b - p, M); other tokens 0 and 0, padding tokens anything (5 t, t).
 * swa_visible_hostile: negative, huge and extreme counts instead. */
static void fill_swa_visible(amd_batch *b, const amd_case *c) {
  static const int32_t hostile[8] = {-1, INT32_MAX, INT32_MIN, 0, -40, 1000, 7, INT32_MAX - 3};
  const int32_t m = c->swa_image_tokens;
  int32_t *left = xcalloc((size_t)(b->T > 0 ? b->T : 1), sizeof(int32_t));
  int32_t *right = xcalloc((size_t)(b->T > 0 ? b->T : 1), sizeof(int32_t));
  int32_t t, r;
  for (t = 0; t < b->T; t++) {
    left[t] = c->swa_visible_hostile ? hostile[t % 8] : 5 * t;
    right[t] = c->swa_visible_hostile ? hostile[(3 * t + 1) % 8] : t;
  }
  for (r = 0; r < b->R && !c->swa_visible_hostile; r++) {
    const int32_t qlen = b->qsl[r + 1] - b->qsl[r];
    const int64_t first = (int64_t)b->seq_lens[r] - qlen;
    const int64_t a = first + 1, end = a + (qlen - 2 < m ? qlen - 2 : m) - 1;
    for (t = b->qsl[r]; t < b->qsl[r + 1]; t++) {
      const int64_t p = first + (t - b->qsl[r]);
      const int inside = qlen >= 3 && p >= a && p <= end;
      left[t] = inside ? (int32_t)(p - a < m - 1 ? p - a : m - 1) : 0;
      right[t] = inside ? (int32_t)(end - p < m ? end - p : m) : 0;
    }
  }
  b->extra.swa_left_visible = b->extra_buffers[2] = left;
  b->extra.swa_right_visible = b->extra_buffers[3] = right;
}

/* Section 7's replay floors: mode 1, request r's floor below its first
 * window (r % 3 == 0), inside it (1) or above its first real token (2);
 * mode 2, extreme values. */
static void fill_swa_floor(amd_batch *b, const amd_case *c) {
  static const int32_t hostile[4] = {INT32_MIN, INT32_MAX, -5, 4};
  int32_t *floor = xcalloc((size_t)(b->R > 0 ? b->R : 1), sizeof(int32_t));
  int32_t r;
  for (r = 0; r < b->R; r++) {
    const int64_t first = (int64_t)b->seq_lens[r] - (b->qsl[r + 1] - b->qsl[r]);
    const int64_t low = first - c->swa_window + 1 > 0 ? first - c->swa_window + 1 : 0;
    const int64_t want = r % 3 == 0 ? low - 3 : r % 3 == 1 ? low + c->swa_window / 2 : first + 2;
    floor[r] = c->swa_floor == 2 ? hostile[r % 4] : (int32_t)(want > 0 ? want : 0);
  }
  b->extra.swa_replay_start = b->extra_buffers[4] = floor;
}

/* Section 7's SWA groups: the SWA table (patches applied) as group 0 and
 * G - 1 more with other ids, stacked a table and 3 elements apart; the
 * rows' groups T + 1 rows apart. */
static void fill_swa_groups(amd_batch *b, const amd_case *c) {
  const int64_t one = (int64_t)b->R * b->cols[AMD_TAB_SWA], gs = one + 3;
  int64_t g, i;
  b->swa_stacked_n = (c->swa_groups - 1) * gs + one > 0 ? (c->swa_groups - 1) * gs + one : 1;
  b->swa_stacked = xcalloc((size_t)b->swa_stacked_n, sizeof(int32_t));
  for (i = 0; i < b->swa_stacked_n; i++) b->swa_stacked[i] = -7; /* the gaps: never read */
  for (g = 0; g < c->swa_groups; g++)
    for (i = 0; i < one; i++) {
      const int32_t id = b->tables[AMD_TAB_SWA][i];
      b->swa_stacked[g * gs + i] = id >= 0 && id < 100000000 ? id + (int32_t)g * 250000 : id;
    }
  b->extra.swa_groups = c->swa_groups;
  b->extra.swa_block_table_group_stride = gs;
  b->extra.swa_indices_group_stride = (int64_t)(b->T + 1) * b->swa_stride;
}

static void fill_table(amd_batch *b, const amd_case *c, int tab, int32_t cols) {
  int32_t r, k;
  if (c->table_cols > 0) cols = c->table_cols;
  b->cols[tab] = cols;
  b->tables[tab] = xcalloc((size_t)(b->R > 0 ? b->R : 1) * (size_t)(cols > 0 ? cols : 1),
                           sizeof(int32_t));
  for (r = 0; r < b->R; r++)
    for (k = 0; k < cols; k++)
      b->tables[tab][(int64_t)r * cols + k] =
          c->nrow > 0 ? (k < c->nrow ? c->row[k] : c->row[c->nrow - 1] + 2 * (k - c->nrow + 1))
                      : (tab + 1) * 1000000 + r * 1000 + k;
}

amd_batch *amd_materialize(const amd_case *c) {
  amd_batch *b = xcalloc(1, sizeof *b);
  int64_t longest = 0;
  int32_t r;
  int g;

  b->R = c->num_reqs > 0 ? c->num_reqs : c->batch;
  b->world = c->world > 0 ? c->world : 1;
  b->interleave = c->interleave > 0 ? c->interleave : 1;
  b->qsl = xcalloc((size_t)b->R + 1, sizeof(int32_t));
  b->seq_lens = xcalloc((size_t)b->R, sizeof(int32_t));
  if (c->raw_qsl) {
    memcpy(b->qsl, c->qsl, ((size_t)b->R + 1) * sizeof(int32_t));
    b->T = c->num_tokens;
  } else {
    for (r = 0; r < b->R; r++) b->qsl[r + 1] = b->qsl[r] + (c->batch > 0 ? c->qlen : c->qlens[r]);
    b->T = b->qsl[b->R] + c->pad_tokens;
  }
  b->C = b->T + c->cap_extra;
  for (r = 0; r < b->R; r++) {
    b->seq_lens[r] = c->batch > 0 ? c->context - 37 * r : c->seq_lens[r];
    if (b->seq_lens[r] > longest) longest = b->seq_lens[r];
  }

  memset(&b->d, 0, sizeof b->d);
  b->d.ngroups = c->ngroups;
  for (g = 0; g < c->ngroups; g++) {
    amr_group *gr = &b->d.groups[g];
    gr->ratio = c->ratio[g];
    gr->block_size = c->group_bs[g];
    fill_table(b, c, AMD_TAB_GROUP0 + g, cols_for(longest / gr->ratio, gr->block_size, b->world));
  }
  b->d.swa_width = -1;
  if (c->swa_width > 0) {
    b->d.swa_block_size = c->swa_bs;
    b->d.swa_window = c->swa_window;
    b->d.swa_width = c->swa_width;
    b->d.swa_mode = c->swa_mode;
    b->swa_stride = c->swa_width + c->stride_extra;
    fill_table(b, c, AMD_TAB_SWA, cols_for(longest, c->swa_bs, 1));
  }
  b->d.c128a_width = -1;
  if (c->c128a_ratio > 0) {
    b->d.c128a_ratio = c->c128a_ratio;
    b->d.c128a_block_size = c->c128a_bs;
    b->d.c128a_width = c->c128a_width;
    b->d.c128a_mode = c->c128a_mode;
    b->d.c128a_num_decode = c->c128a_decode;
    b->c128a_stride = c->c128a_width + c->stride_extra;
    fill_table(b, c, AMD_TAB_C128A, cols_for(c->c128a_width, c->c128a_bs, b->world));
  }
  b->d.indexer_ratio = c->indexer_ratio;
  b->d.indexer_mode = c->indexer_mode;
  b->main_block_size = 64;
  fill_table(b, c, AMD_TAB_MAIN, cols_for(longest, 64, b->world));
  for (r = 0; r < c->npatch; r++) {
    const amd_patch *pt = &c->patch[r];
    b->tables[pt->table][(int64_t)pt->row * b->cols[pt->table] + pt->col] = pt->value;
  }
  for (g = 0; g < c->ngroups; g++) b->d.groups[g].table = table_view(b, AMD_TAB_GROUP0 + g);
  b->d.swa_table = table_view(b, AMD_TAB_SWA);
  if (c->swa_width > 0 && c->swa_slot_gap > 0) {
    b->swa_token_slots = xcalloc((size_t)b->T, sizeof(int64_t));
    for (r = 0; r < b->T; r++)
      b->swa_token_slots[r] = r % c->swa_slot_gap == c->swa_slot_gap - 1 ? -1 : 64 * r + 1;
    b->d.swa_token_slots = b->swa_token_slots;
  }
  b->d.c128a_table = table_view(b, AMD_TAB_C128A);
  b->extra.num_reqs = b->R;
  b->extra.num_tokens = b->T;
  b->extra.capacity = b->C;
  b->d.step = &b->extra;
  if (c->pcp_lbs > 0) fill_pcp(b, c);
  if (c->swa_image_tokens > 0) fill_swa_visible(b, c);
  if (c->swa_floor > 0) fill_swa_floor(b, c);
  if (c->swa_width > 0 && c->swa_groups > 1) fill_swa_groups(b, c);
  return b;
}

void amd_batch_free(amd_batch *b) {
  int k;
  if (!b) return;
  free(b->qsl);
  free(b->seq_lens);
  free(b->swa_token_slots);
  free(b->swa_stacked);
  for (k = 0; k < AMD_NUM_TABLES; k++) free(b->tables[k]);
  for (k = 0; k < 6; k++) free(b->extra_buffers[k]);
  free(b);
}

void amd_reference_input(const amd_batch *b, int32_t rank, amr_input *in) {
  amr_input_requests(in, b->qsl, b->R, b->T, b->C, b->seq_lens);
  amr_input_table(in, b->tables[AMD_TAB_MAIN], b->cols[AMD_TAB_MAIN], b->cols[AMD_TAB_MAIN],
                  b->main_block_size);
  amr_input_dcp(in, b->world, rank, b->interleave);
}
