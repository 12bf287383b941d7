// SPDX-License-Identifier: Apache-2.0
/*
 * Overlapping buffers (contract, "Errors and bad input"): an output may not
 * share a byte with an input or another output. The host refuses what it
 * sees with ATTNMETA_ERR_INVALID_ARGUMENT, a message naming both buffers,
 * and nothing written; buffers the step does not use, inputs shared by
 * inputs, and buffers in the unused columns of a strided block table are
 * not overlaps. On the CPU backend, where "device" memory is host memory
 * the test can lay out freely.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"

#define POISON ((int32_t)0x5A5A5A5A)

/* R = 2, T = 3, C = 4: qsl {0, 1, 3}, seq_lens {4, 2}, a 2 x 4 table. */
typedef struct layout {
  int32_t qsl[3], seq[2], table[8];
  _Alignas(16) int32_t arena[256]; /* outputs, poisoned */
  attnmeta_step s;
} layout;

static void layout_init(layout *L) {
  static const int32_t qsl[3] = {0, 1, 3}, seq[2] = {4, 2};
  static const int32_t table[8] = {10, 11, 12, 13, 20, 21, 22, 23};
  int i;
  memcpy(L->qsl, qsl, sizeof qsl);
  memcpy(L->seq, seq, sizeof seq);
  memcpy(L->table, table, sizeof table);
  for (i = 0; i < 256; ++i) L->arena[i] = POISON;
  amt_step_tokens(&L->s, L->qsl, 2, 3, 4);
  amt_step_table(&L->s, L->seq, L->table, 4, 4, 2);
  L->s.block_table_out_stride = 4;
}

static layout L; /* laid out before every test */
AMT_CPU_SUITE(overlap, layout_init(&L));

static int arena_untouched(const layout *L) {
  int i;
  for (i = 0; i < 256; ++i)
    if (L->arena[i] != POISON) return 0;
  return 1;
}

static void expect_refused(attnmeta_context *ctx, layout *L, const char *a, const char *b) {
  int32_t qsl[3], seq[2], table[8];
  attnmeta_status st;
  memcpy(qsl, L->qsl, sizeof qsl);
  memcpy(seq, L->seq, sizeof seq);
  memcpy(table, L->table, sizeof table);
  st = attnmeta_build_step(ctx, &L->s, NULL);
  cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "%s / %s: %s (%s)", a, b,
               attnmeta_status_string(st), attnmeta_last_error(ctx));
  cr_expect(strstr(attnmeta_last_error(ctx), a) && strstr(attnmeta_last_error(ctx), b),
            "message names %s and %s: %s", a, b, attnmeta_last_error(ctx));
  cr_expect(arena_untouched(L), "%s / %s: an output was written", a, b);
  cr_expect(memcmp(qsl, L->qsl, sizeof qsl) == 0 && memcmp(seq, L->seq, sizeof seq) == 0 &&
                memcmp(table, L->table, sizeof table) == 0,
            "%s / %s: an input was written", a, b);
}

static void expect_ok(attnmeta_context *ctx, layout *L, const char *what) {
  const attnmeta_status st = attnmeta_build_step(ctx, &L->s, NULL);
  cr_expect_eq(st, ATTNMETA_OK, "%s: %s (%s)", what, attnmeta_status_string(st),
               attnmeta_last_error(ctx));
}

Test(overlap, output_on_its_own_input) {
  L.s.seq_lens = L.arena; /* seq_lens_out written over the lengths it reads */
  L.arena[0] = 4, L.arena[1] = 2;
  L.s.seq_lens_out = L.arena;
  L.s.num_tokens = 3;
  {
    int32_t keep[2] = {4, 2};
    attnmeta_status st = attnmeta_build_step(amt_cpu, &L.s, NULL);
    cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "%s", attnmeta_last_error(amt_cpu));
    cr_expect(strstr(attnmeta_last_error(amt_cpu), "seq_lens_out") &&
                  strstr(attnmeta_last_error(amt_cpu), "input seq_lens"),
              "%s", attnmeta_last_error(amt_cpu));
    cr_expect(memcmp(L.arena, keep, sizeof keep) == 0 && L.arena[2] == POISON, "written");
  }
}

Test(overlap, outputs_sharing_bytes) {
  L.s.token_to_req = L.arena;          /* [0, 12) bytes */
  L.s.req_indices_out = L.arena + 2;   /* [8, 20): shares token 2 */
  expect_refused(amt_cpu, &L, "req_indices_out", "token_to_req");
  layout_init(&L);
  L.s.positions = (int64_t *)(void *)(L.arena + 16); /* [64, 88) */
  L.s.slot_mapping = (int64_t *)(void *)(L.arena + 8); /* [32, 64): C = 4 slots */
  L.s.error_word = L.arena + 21;                     /* inside positions */
  expect_refused(amt_cpu, &L, "error_word", "positions");
  layout_init(&L);
  L.s.per_req_lens_out = L.arena + 6;
  L.s.block_table_out = L.arena; /* 3 rows of 4: [0, 48) */
  expect_refused(amt_cpu, &L, "per_req_lens_out", "block_table_out");
}

Test(overlap, output_on_a_strided_table) {
  /* block_table_out over the block table it copies */
  L.s.block_table = L.arena;
  memcpy(L.arena, L.table, sizeof L.table);
  L.s.block_table_out = L.arena + 4;
  {
    attnmeta_status st = attnmeta_build_step(amt_cpu, &L.s, NULL);
    cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "%s", attnmeta_last_error(amt_cpu));
    cr_expect(strstr(attnmeta_last_error(amt_cpu), "block_table_out") &&
                  strstr(attnmeta_last_error(amt_cpu), "input block_table"),
              "%s", attnmeta_last_error(amt_cpu));
  }
  /* an output in a used column of a strided output row */
  layout_init(&L);
  L.s.block_table_out = L.arena;
  L.s.block_table_out_stride = 8; /* rows at 0, 32, 64 bytes; columns [0, 16) used */
  L.s.error_word = L.arena + 9;   /* byte 36: row 1, column 1 */
  expect_refused(amt_cpu, &L, "error_word", "block_table_out");
}

/* What is not an overlap: unused buffers, inputs shared by inputs, and
 * buffers in the unused columns of strided rows. */
Test(overlap, not_overlaps) {
  static const int32_t want_rows[3][4] = {{10, 11, 12, 13}, {20, 21, 22, 23}, {20, 21, 22, 23}};
  int t, c;
  /* seq_lens is read by no wanted product: token_to_req may sit on it */
  L.s.seq_lens = L.arena;
  L.s.token_to_req = L.arena;
  expect_ok(amt_cpu, &L, "token_to_req on an unread seq_lens");
  cr_expect(L.arena[0] == 0 && L.arena[1] == 1 && L.arena[2] == 1);
  /* inputs may share bytes with inputs */
  layout_init(&L);
  L.s.seq_lens = L.qsl + 1; /* {1, 3}: lengths >= the query lengths {1, 2} */
  L.s.positions = (int64_t *)(void *)(L.arena + 64);
  expect_ok(amt_cpu, &L, "seq_lens inside query_start_loc");
  cr_expect(((int64_t *)(void *)(L.arena + 64))[0] == 0 &&
            ((int64_t *)(void *)(L.arena + 64))[2] == 2);
  /* the input table's rows in columns 0-3 of a pitch-8 buffer, the output
   * table's in columns 4-7, the error word and the token map in the gaps */
  layout_init(&L);
  for (t = 0; t < 2; ++t)
    for (c = 0; c < 4; ++c) L.arena[t * 8 + c] = L.table[t * 4 + c];
  L.s.block_table = L.arena;
  L.s.block_table_stride = 8;
  L.s.block_table_out = L.arena + 4;
  L.s.block_table_out_stride = 8;
  L.s.num_tokens = 3;
  L.s.error_word = L.arena + 19;     /* beyond input rows, before output row 2 at 20 */
  L.arena[19] = 0;
  expect_ok(amt_cpu, &L, "interleaved input and output tables, the error word in a gap");
  for (t = 0; t < 3; ++t)
    for (c = 0; c < 4; ++c)
      cr_expect_eq(L.arena[t * 8 + 4 + c], want_rows[t][c], "row %d column %d", t, c);
  cr_expect_eq(L.arena[19], 0, "error word");
  cr_expect_eq(L.arena[0], 10, "input row 0 changed");
  cr_expect_eq(L.arena[8], 20, "input row 1 changed");
}

/* docs/reliability.md: fields a step does not use are not checked, its
 * pointers' alignment included. */
Test(overlap, unused_pointers_not_checked) {
  L.s.token_to_req = L.arena;
  L.s.seq_lens = (const int32_t *)(const void *)((const char *)L.seq + 1);
  L.s.block_table = (const int32_t *)(const void *)((const char *)L.table + 2);
  expect_ok(amt_cpu, &L, "misaligned seq_lens and block table, neither read");
}

/* The DeepSeek-V3.2/V4 products count the same way. */
Test(overlap, dsv4_products) {
  L.s.per_req_lens_out = L.arena;                  /* [0, 8) bytes */
  L.s.compressed_groups[0].ratio = 4;
  L.s.compressed_groups[0].seq_lens_out = L.arena + 1; /* [4, 12) */
  expect_refused(amt_cpu, &L, "compressed_groups[0].seq_lens_out", "per_req_lens_out");
  layout_init(&L);
  L.s.compressed_groups[1].ratio = 4;
  L.s.compressed_groups[1].seq_lens_out = L.arena; /* R = 2 entries: [0, 8) */
  L.s.token_to_req = L.arena + 2;                  /* right after: no overlap */
  expect_ok(amt_cpu, &L, "a group's lengths next to the token map");
  cr_expect(L.arena[0] == 1 && L.arena[1] == 0, "group lengths %d %d", L.arena[0], L.arena[1]);
}
