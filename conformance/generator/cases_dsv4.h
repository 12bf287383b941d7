// SPDX-License-Identifier: Apache-2.0
/*
 * The table of DeepSeek-V3.2/V4 step cases (contract sections 5, 5a, 7, 8):
 * the upstream engines' own test matrices, the contract's worked examples,
 * DCP and hostile data. Plain fixed-size data, like cases.h.
 *
 * amt_dsv4_materialize() turns a case into host arrays: the step's
 * boundaries and lengths, and one block table per product (the compressed
 * groups', the SWA group's, the C128A group's and the main one of the
 * part-1 slot mapping), deterministically.
 */
#ifndef ATTNMETA_TESTS_CASES_DSV4_H
#define ATTNMETA_TESTS_CASES_DSV4_H

#include <stdint.h>

#include "reference.h"
#include "reference_dsv4.h"

#define AMD_MAX_REQS 8
#define AMD_MAX_PATCH 4
#define AMD_MAX_GROUPS 4

/* The tables of a case, by index. */
enum { AMD_TAB_GROUP0 = 0, AMD_TAB_SWA = 4, AMD_TAB_C128A = 5, AMD_TAB_MAIN = 6, AMD_NUM_TABLES };

typedef struct amd_patch {
  int32_t table, row, col, value;
} amd_patch;

typedef struct amd_case {
  char name[48];
  /* the shape: explicit, or `batch` requests of `qlen` tokens each */
  int32_t num_reqs;
  int32_t qlens[AMD_MAX_REQS];
  int32_t seq_lens[AMD_MAX_REQS];
  int32_t batch, qlen, context; /* batch > 0: seq_lens[r] = context - 37 r */
  int raw_qsl;                  /* 1: qsl[] and num_tokens as they are (hostile) */
  int32_t qsl[AMD_MAX_REQS + 1];
  int32_t num_tokens;
  int32_t pad_tokens, cap_extra;
  int32_t world, interleave; /* DCP, every rank run; 0: 1 */
  /* products (absent when 0) */
  int ngroups;
  int32_t ratio[AMD_MAX_GROUPS], group_bs[AMD_MAX_GROUPS];
  int32_t swa_window, swa_width, swa_bs, swa_mode;
  int32_t c128a_ratio, c128a_bs, c128a_width, c128a_mode;
  int32_t indexer_ratio, indexer_mode;
  int32_t c128a_decode; /* mixed mode: tokens [0, this) are decode tokens */
  /* tables: ids (t + 1) * 1000000 + r * 1000 + c, or `row` repeated for every request */
  int32_t row[4];
  int nrow;
  int32_t table_cols;   /* > 0: every table has this many columns (else what fits + 1) */
  int32_t stride_extra; /* row outputs' stride = width + this */
  int misalign;         /* row outputs start 4 bytes off 16-byte alignment */
  int32_t expect_flags; /* flags the data must raise (subset check) */
  int npatch;
  amd_patch patch[AMD_MAX_PATCH];
  /* > 0: the SWA rows get the step's KV slots (swa_token_slots), token t's
   * slot -1 when t % swa_slot_gap == swa_slot_gap - 1, else 64 t + 1 */
  int32_t swa_slot_gap;
  /* > 0: the groups' slot mappings from PCP logical slots (section 5b) of
   * this logical block size; pcp_hostile: extreme slots and positions */
  int32_t pcp_lbs, pcp_hostile;
  /* > 0: SWA in-image visibility (section 7) with images of at most this
   * many tokens, one a request of 3 or more real tokens (from its second
   * real token's position on); swa_visible_hostile: extreme counts instead */
  int32_t swa_image_tokens, swa_visible_hostile;
  /* 1: SWA replay floors (section 7) below, inside and above the windows;
   * 2: extreme floors */
  int32_t swa_floor;
  /* >= 2: that many SWA groups in one step (section 7): group 0's table is
   * the SWA table, group g's its ids + g x 250000, stacked 3 elements
   * apart; the rows' groups one row apart */
  int32_t swa_groups;
} amd_case;

extern const amd_case amd_cases[];
extern const int amd_num_cases;

/* A materialized case: everything a step needs, on the host. */
typedef struct amd_batch {
  int32_t R, T, C, world, interleave;
  int32_t *qsl, *seq_lens;
  int32_t *tables[AMD_NUM_TABLES]; /* [R][cols] (NULL when the product is absent) */
  int32_t cols[AMD_NUM_TABLES];
  int32_t main_block_size;
  amr_dsv4_input d;    /* tables pointing into `tables` */
  int32_t swa_stride, c128a_stride;
  int64_t *swa_token_slots; /* [T] (NULL: not given); d.swa_token_slots points here */
  /* the settings and host inputs of the products declared after 0.3, by
   * their attnmeta_step names (num_reqs, num_tokens and capacity set, for
   * their extents; the rest 0 and NULL unless the case gives them);
   * d.step points here, and the generator and the tests pass them on by
   * walking the schema */
  attnmeta_step extra;
  void *extra_buffers[6]; /* what extra's inputs point at, freed with the batch */
  /* swa_groups >= 2: the groups' stacked tables (extra's group strides apart) */
  int32_t *swa_stacked;
  int64_t swa_stacked_n;
} amd_batch;

amd_batch *amd_materialize(const amd_case *c);
void amd_batch_free(amd_batch *b);
/* The part-1 reference input of rank k. */
void amd_reference_input(const amd_batch *b, int32_t rank, amr_input *in);

#endif /* ATTNMETA_TESTS_CASES_DSV4_H */
