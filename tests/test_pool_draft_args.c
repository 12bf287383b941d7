// SPDX-License-Identifier: Apache-2.0
/*
 * The host checks of the pool operation's draft decode lists (docs/
 * contract.md section 14): each bad setting gets its status and a message
 * naming it, and nothing is written (the outputs keep their poison).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"

#define POISON ((int32_t)0x5A5A5A5A)

AMT_CPU_SUITE(pool_draft_args, (void)0);

/* Host buffers (the CPU backend's device memory is host memory). */
static int32_t pool[2][16];
static int64_t rpi[2], len[2], pos[4], start[2];
static int32_t indices[3][40], indptr[3][8], seqlens[2];

static void reset(attnmeta_pool *op) {
  int r, c;
  for (r = 0; r < 2; r++)
    for (c = 0; c < 16; c++) pool[r][c] = 10 * r + c;
  rpi[0] = 1;
  rpi[1] = 0;
  len[0] = 3;
  len[1] = 2;
  for (r = 0; r < 4; r++) pos[r] = len[r / 2];
  for (r = 0; r < 3; r++) {
    for (c = 0; c < 40; c++) indices[r][c] = POISON;
    for (c = 0; c < 8; c++) indptr[r][c] = POISON;
  }
  seqlens[0] = seqlens[1] = POISON;
  amt_pool_table(op, &pool[0][0], 2, 16, 16);
  amt_pool_reqs(op, rpi, len, 2);
  op->draft_steps = 3;
  op->draft_topk = 2;
  op->draft_positions = pos;
  op->draft_kv_indices = &indices[0][0];
  op->draft_kv_indices_width = 40;
  op->draft_kv_indices_stride = 40;
  op->draft_kv_indptr = &indptr[0][0];
  op->draft_kv_indptr_stride = 8;
}

static int untouched(void) {
  int r, c;
  for (r = 0; r < 3; r++) {
    for (c = 0; c < 40; c++)
      if (indices[r][c] != POISON) return 0;
    for (c = 0; c < 8; c++)
      if (indptr[r][c] != POISON) return 0;
  }
  return seqlens[0] == POISON && seqlens[1] == POISON;
}

static void expect_refused(const attnmeta_pool *op, attnmeta_status want, const char *names) {
  const attnmeta_status st = attnmeta_build_pool_indices(amt_cpu, op, NULL);
  cr_expect_eq(st, want, "status %s, expected %s (%s)", attnmeta_status_string(st),
               attnmeta_status_string(want), attnmeta_last_error(amt_cpu));
  cr_expect(strstr(attnmeta_last_error(amt_cpu), names), "message \"%s\" does not name %s",
            attnmeta_last_error(amt_cpu), names);
  cr_expect(untouched(), "written on error");
}

/* The valid call with one member changed is refused with `status`,
 * naming `what`. */
#define expect_one_refused(member, value, status, what) \
  do {                                                  \
    attnmeta_pool op_;                                  \
    reset(&op_);                                        \
    op_.member = (value);                               \
    expect_refused(&op_, status, what);                 \
  } while (0)

Test(pool_draft_args, the_valid_call_writes) {
  attnmeta_pool op;
  reset(&op);
  cr_assert_eq(attnmeta_build_pool_indices(amt_cpu, &op, NULL), ATTNMETA_OK, "%s",
               attnmeta_last_error(amt_cpu));
  cr_expect_eq(indptr[2][4], 3 + 3 + 2 + 2 + 4 * 3);
  cr_expect_eq(indices[0][0], 10);
}

Test(pool_draft_args, built_alone) {
  expect_one_refused(cache_seqlens, seqlens, ATTNMETA_ERR_INVALID_ARGUMENT, "built alone");
}

Test(pool_draft_args, no_start_columns) {
  expect_one_refused(kv_start_idx, start, ATTNMETA_ERR_INVALID_ARGUMENT, "kv_start_idx");
}

Test(pool_draft_args, steps_in_range) {
  attnmeta_pool op;
  expect_one_refused(draft_steps, 0, ATTNMETA_ERR_INVALID_ARGUMENT, "draft_steps");
  expect_one_refused(draft_steps, 1025, ATTNMETA_ERR_INVALID_ARGUMENT, "draft_steps");
  reset(&op);
  op.draft_steps = -1;
  op.draft_kv_indices = NULL;
  op.draft_kv_indptr = NULL;
  op.cache_seqlens = seqlens;
  expect_refused(&op, ATTNMETA_ERR_INVALID_ARGUMENT, "draft_steps");
}

Test(pool_draft_args, topk_in_range) {
  expect_one_refused(draft_topk, 0, ATTNMETA_ERR_INVALID_ARGUMENT, "draft_topk");
  expect_one_refused(draft_topk, 1025, ATTNMETA_ERR_INVALID_ARGUMENT, "draft_topk");
}

Test(pool_draft_args, indptr_stride_holds_a_step) {
  /* B * K + 1 = 5 */
  expect_one_refused(draft_kv_indptr_stride, 4, ATTNMETA_ERR_STRIDE, "draft_kv_indptr_stride");
}

Test(pool_draft_args, indices_stride_holds_the_width) {
  attnmeta_pool op;
  expect_one_refused(draft_kv_indices_stride, 39, ATTNMETA_ERR_STRIDE, "draft_kv_indices_stride");
  expect_one_refused(draft_kv_indices_width, -1, ATTNMETA_ERR_INVALID_ARGUMENT,
                     "draft_kv_indices_width");
  reset(&op);
  op.draft_kv_indices_width = op.draft_kv_indices_stride = ((int64_t)1 << 40) + 1;
  expect_refused(&op, ATTNMETA_ERR_INVALID_ARGUMENT, "draft_kv_indices_width");
}

Test(pool_draft_args, positions_needed_by_indptr) {
  attnmeta_pool op;
  expect_one_refused(draft_positions, NULL, ATTNMETA_ERR_NULL_POINTER, "draft_positions");
  reset(&op);
  op.draft_positions = NULL; /* the slot lists alone do not read them */
  op.draft_kv_indptr = NULL;
  cr_expect_eq(attnmeta_build_pool_indices(amt_cpu, &op, NULL), ATTNMETA_OK, "%s",
               attnmeta_last_error(amt_cpu));
}

Test(pool_draft_args, outputs_do_not_overlap) {
  expect_one_refused(draft_kv_indptr, &indices[2][0], ATTNMETA_ERR_INVALID_ARGUMENT,
                     "draft_kv_indptr");
}
