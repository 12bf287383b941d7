// SPDX-License-Identifier: Apache-2.0
/* attnmeta step: the shape options, the inputs and the products (cli_step.h). */
#include "cli_step.h"

#include <stddef.h>
#include <string.h>

#include "am_schema.h"

/* ------------------------------------------------------------ shape options */

#define FIELD(f) offsetof(step_shape, f)
#define MAX_TOKENS_PER_REQ (1 << 16)

const step_shape_option step_shape_options[] = {
    {"--reqs", "N", "requests in the step (default 64)", FIELD(reqs), 0, 0, 1 << 20},
    {"--qlen", "A..B", "query tokens of each request, drawn in [A, B]\n"
     "(default 1..4: up to 3 speculative tokens)",
     FIELD(qlen_min), FIELD(qlen_max), 0, MAX_TOKENS_PER_REQ},
    {"--context", "A..B", "KV tokens of each request before the step's, drawn\n"
     "in [A, B] (default 1000..7999)",
     FIELD(context_min), FIELD(context_max), 0, 1 << 30},
    {"--pad", "N", "padding tokens past the real ones (default: up to\n"
     "the next power of two, as a captured graph's size)",
     FIELD(pad), 0, 0, 1 << 24},
    {"--capacity", "C", "length of the capacity-long products, >= the padded\n"
     "tokens (default: past them to the next multiple of 512)",
     FIELD(capacity), 0, 1, 1 << 26},
    {"--cols", "N", "block-table columns (default 512)", FIELD(cols), 0, 0, 1 << 20},
    {"--block-size", "N", "KV-cache block size (default 64)", FIELD(block_size), 0, 1, 1 << 20},
    {"--dcp-world", "W", "decode context parallelism: ranks (default 1)", FIELD(dcp_world), 0, 1,
     1 << 16},
    {"--dcp-rank", "K", "this rank, < W (default 0)", FIELD(dcp_rank), 0, 0, (1 << 16) - 1},
    {"--dcp-interleave", "I", "positions a rank owns in a row (default 1)", FIELD(dcp_interleave),
     0, 1, 1 << 20},
    {"--seed", "N", "seed of the drawn lengths (default 12345)", FIELD(seed), 0, 0, 0x7fffffff},
    {"--swa-window", "N", "DSV4 sliding-window rows: positions a token sees\n"
     "(default 128)", FIELD(swa_window), 0, 1, 1 << 16},
};
const size_t step_shape_option_count = sizeof step_shape_options / sizeof step_shape_options[0];

void step_shape_default(step_shape *s) {
  memset(s, 0, sizeof *s);
  s->reqs = 64;
  s->qlen_min = 1;
  s->qlen_max = 4;
  s->context_min = 1000;
  s->context_max = 7999;
  s->pad = -1;
  s->capacity = 0;
  s->cols = 512;
  s->block_size = 64;
  s->dcp_world = 1;
  s->dcp_rank = 0;
  s->dcp_interleave = 1;
  s->seed = 12345;
  s->swa_window = 128;
}

/* ------------------------------------------------------------------ lengths */

static int64_t len_reqs(const step_plan *p) { return p->shape.reqs; }
static int64_t len_reqs_plus_one(const step_plan *p) { return (int64_t)p->shape.reqs + 1; }
static int64_t len_table(const step_plan *p) { return (int64_t)p->shape.reqs * p->shape.cols; }
static int64_t len_tokens(const step_plan *p) { return p->tokens; }
static int64_t len_capacity(const step_plan *p) { return p->capacity; }
static int64_t len_token_rows(const step_plan *p) { return (int64_t)p->tokens * p->shape.cols; }
static int64_t len_one(const step_plan *p) {
  (void)p;
  return 1;
}
static int64_t row_cols(const step_plan *p) { return p->shape.cols; }
static int64_t len_swa_rows(const step_plan *p) { return (int64_t)p->tokens * p->shape.swa_window; }
static int64_t row_swa(const step_plan *p) { return p->shape.swa_window; }
static int64_t len_c128a_rows(const step_plan *p) { return (int64_t)p->tokens * p->c128a_width; }
static int64_t row_c128a(const step_plan *p) { return p->c128a_width; }

/* Each member's facts from the schema (am_schema.h): step_is_dsv4_<member>
 * (a DeepSeek-V4 product writes or reads it) and step_rows_<member> (its
 * extent's rows); group_* for a compressed group's members. */
enum { ROWS_NONE, ROWS_R, ROWS_R1, ROWS_T, ROWS_C, ROWS_P, ROWS_ONE };
#define ROWS_OF_AM_NONE ROWS_NONE
#define ROWS_OF_AM_ARRAY(n) ROWS_##n
#define ROWS_OF_AM_TABLE(n, cols, stride) ROWS_##n
#define ROWS_OF_AM_GTABLE(n, cols, stride, groups, gstride) ROWS_##n
#define FACTS_(c, type, member, role, extent, products, rule) \
  c##_is_dsv4_##member = ((products) & AM_P_DSV4) != 0, c##_rows_##member = (int)ROWS_OF_##extent,
enum { AM_STEP_FIELDS(FACTS_, step) AM_GROUP_FIELDS(FACTS_, group) };
#undef FACTS_

/* The length of an array of those rows. */
#define LEN_OF(rows)                                                                        \
  ((int)(rows) == (int)ROWS_T    ? len_tokens                                               \
   : (int)(rows) == (int)ROWS_C  ? len_capacity                                             \
   : (int)(rows) == (int)ROWS_R1 ? len_reqs_plus_one                                        \
   : (int)(rows) == (int)ROWS_ONE ? len_one                                                 \
                                  : len_reqs)

/* ------------------------------------------------------------------- inputs */

static void fill_qsl(const step_plan *p, void *host) {
  int32_t *qsl = host;
  qsl[0] = 0;
  for (int r = 0; r < p->shape.reqs; ++r) qsl[r + 1] = qsl[r] + p->qlens[r];
}

/* KV length = the context before the step plus the step's own tokens. */
static void fill_seq_lens(const step_plan *p, void *host) {
  int32_t *seq = host;
  for (int r = 0; r < p->shape.reqs; ++r) seq[r] = p->context[r] + p->qlens[r];
}

/* Distinct block ids, row after row. */
static void fill_table(const step_plan *p, void *host) {
  int32_t *table = host;
  const int64_t n = len_table(p);
  for (int64_t i = 0; i < n; ++i) table[i] = (int32_t)i;
}

static void fill_zero(const step_plan *p, void *host) {
  (void)p;
  *(int32_t *)host = 0;
}

/* A buffer's place in attnmeta_step (a member, or a group's) and the size
 * of one of its elements. */
#define STEP_BUFFER(member) offsetof(attnmeta_step, member), sizeof *((attnmeta_step *)0)->member

void step_attach(attnmeta_step *s, const step_plan *p, size_t offset,
                 void (*settings)(attnmeta_step *s, const step_plan *p), void *device) {
  memcpy((char *)s + offset, &device, sizeof device);
  if (settings) settings(s, p);
}

static void table_settings(attnmeta_step *s, const step_plan *p) {
  s->block_table_cols = p->shape.cols;
  s->block_table_stride = p->shape.cols;
}

/* error_word must stay the last input: the driver reads it back. */
#define INPUT(member, fill, settings) \
  {#member, STEP_BUFFER(member), LEN_OF(step_rows_##member), fill, settings}
const step_input step_inputs[] = {
    INPUT(query_start_loc, fill_qsl, NULL),
    INPUT(seq_lens, fill_seq_lens, NULL),
    {"block_table", STEP_BUFFER(block_table), len_table, fill_table, table_settings},
    INPUT(error_word, fill_zero, NULL),
};
const size_t step_input_count = sizeof step_inputs / sizeof step_inputs[0];

/* ----------------------------------------------------------------- products */

static void block_table_out_settings(attnmeta_step *s, const step_plan *p) {
  s->block_table_out_stride = p->shape.cols;
}

/* ---- DeepSeek-V4 products, over the step's block table ---- */

/* Rows per block >= DSV4's 256 / ratio, enough that a row's block is never
 * past the step's columns, and a multiple of the DCP interleave. */
int step_dsv4_block_size(const step_shape *s, int ratio) {
  int bs = 256 / ratio > 0 ? 256 / ratio : 1;
  const int least = (s->block_size + ratio - 1) / ratio;
  if (bs < least) bs = least;
  if (s->dcp_world > 1 && bs % s->dcp_interleave) bs += s->dcp_interleave - bs % s->dcp_interleave;
  return bs;
}

/* The SWA rows place positions without DCP: a block of the step's table
 * then covers block_size * dcp_world positions. */
int step_swa_block_size(const step_shape *s) { return s->block_size * s->dcp_world; }

static void attach_group(attnmeta_step *s, const step_plan *p, int g, int ratio) {
  attnmeta_compressed_group *grp = &s->compressed_groups[g];
  grp->block_table = s->block_table;
  grp->block_table_cols = s->block_table_cols;
  grp->block_table_stride = s->block_table_stride;
  grp->ratio = ratio;
  grp->block_size = step_dsv4_block_size(&p->shape, ratio);
}
static void c4_settings(attnmeta_step *s, const step_plan *p) { attach_group(s, p, 0, STEP_C4_RATIO); }
static void c128_settings(attnmeta_step *s, const step_plan *p) {
  attach_group(s, p, 1, STEP_C128_RATIO);
}
static void swa_settings(attnmeta_step *s, const step_plan *p) {
  s->swa_block_table = s->block_table;
  s->swa_block_table_cols = s->block_table_cols;
  s->swa_block_table_stride = s->block_table_stride;
  s->swa_block_size = step_swa_block_size(&p->shape);
  s->swa_window = p->shape.swa_window;
  s->swa_width = p->shape.swa_window;
  s->swa_indices_stride = p->shape.swa_window;
  s->swa_mode = ATTNMETA_SWA_CAUSAL;
}
static void c128a_settings(attnmeta_step *s, const step_plan *p) {
  s->c128a_block_table = s->block_table;
  s->c128a_block_table_cols = s->block_table_cols;
  s->c128a_block_table_stride = s->block_table_stride;
  s->c128a_ratio = STEP_C128_RATIO;
  s->c128a_block_size = step_dsv4_block_size(&p->shape, STEP_C128_RATIO);
  s->c128a_width = p->c128a_width;
  s->c128a_rows_stride = p->c128a_width;
  s->c128a_mode = ATTNMETA_C128A_GLOBAL;
}
static void indexer_settings(attnmeta_step *s, const step_plan *p) {
  (void)p;
  s->indexer_ratio = STEP_C4_RATIO;
  s->indexer_mode = ATTNMETA_INDEXER_DECODE;
}

/* A product by its name here and its member: the rest from the schema (an
 * array's length from its extent; a table's from its CLI row width). */
#define PRODUCT(name, member, settings) \
  {name, step_is_dsv4_##member, STEP_BUFFER(member), LEN_OF(step_rows_##member), NULL, settings}
#define ROWS_PRODUCT(member, count, row, settings) \
  {#member, step_is_dsv4_##member, STEP_BUFFER(member), count, row, settings}
#define GROUP_PRODUCT(name, g, member, settings)                                              \
  {name, group_is_dsv4_##member, STEP_BUFFER(compressed_groups[g].member),                      \
   LEN_OF(group_rows_##member), NULL, settings}
const step_product step_products[] = {
    PRODUCT("token_to_req", token_to_req, NULL),
    PRODUCT("seq_lens_out", seq_lens_out, NULL),
    PRODUCT("global_seq_lens", global_seq_lens_out, NULL),
    ROWS_PRODUCT(block_table_out, len_token_rows, row_cols, block_table_out_settings),
    PRODUCT("decode_lens", decode_lens_out, NULL),
    PRODUCT("req_indices", req_indices_out, NULL),
    PRODUCT("per_req_lens", per_req_lens_out, NULL),
    PRODUCT("positions", positions, NULL),
    PRODUCT("slot_mapping", slot_mapping, NULL),
    GROUP_PRODUCT("c4_slot_mapping", 0, slot_mapping, c4_settings),
    GROUP_PRODUCT("c4_seq_lens", 0, seq_lens_out, c4_settings),
    GROUP_PRODUCT("c128_slot_mapping", 1, slot_mapping, c128_settings),
    GROUP_PRODUCT("c128_seq_lens", 1, seq_lens_out, c128_settings),
    ROWS_PRODUCT(swa_indices, len_swa_rows, row_swa, swa_settings),
    PRODUCT("swa_lens", swa_lens, swa_settings),
    ROWS_PRODUCT(c128a_rows, len_c128a_rows, row_c128a, c128a_settings),
    PRODUCT("c128a_lens", c128a_lens, c128a_settings),
    PRODUCT("indexer_lens", indexer_lens_out, indexer_settings),
};
const size_t step_product_count = sizeof step_products / sizeof step_products[0];

void step_configure(attnmeta_step *s, const step_plan *p) {
  s->num_reqs = p->shape.reqs;
  s->num_tokens = p->tokens;
  s->capacity = p->capacity;
  s->block_size = p->shape.block_size;
  s->dcp_world_size = p->shape.dcp_world;
  s->dcp_rank = p->shape.dcp_rank;
  s->dcp_interleave = p->shape.dcp_interleave;
}
