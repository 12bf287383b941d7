// SPDX-License-Identifier: Apache-2.0
/*
 * A step that wants only DeepSeek-V3.2/V4 products still reads seq_lens
 * (check_step counts them as its readers), so no DSV4 output may sit on
 * seq_lens: each is refused with ATTNMETA_ERR_INVALID_ARGUMENT, a message
 * naming both, and nothing written, the lengths included. On the CPU
 * backend, where the test lays out "device" memory itself.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"

#define POISON ((int32_t)0x5A5A5A5A)
#define ARENA 64

/* R = 2, T = 3, C = 4; seq_lens {100, 7} live at the start of the arena,
 * the rest of which is poisoned. */
typedef struct seq_layout {
  int32_t qsl[3];
  _Alignas(16) int32_t arena[ARENA];
  attnmeta_step s;
} seq_layout;

static void seq_layout_init(seq_layout *L) {
  int i;
  L->qsl[0] = 0, L->qsl[1] = 1, L->qsl[2] = 3;
  for (i = 0; i < ARENA; ++i) L->arena[i] = POISON;
  L->arena[0] = 100, L->arena[1] = 7;
  amt_step_tokens(&L->s, L->qsl, 2, 3, 4);
  L->s.seq_lens = L->arena;
}

/* The layout with a local C128A product of ratio 4 wanted (its outputs to be set). */
static void seq_layout_c128a_init(seq_layout *L) {
  seq_layout_init(L);
  L->s.c128a_mode = ATTNMETA_C128A_LOCAL;
  L->s.c128a_ratio = 4;
}

static seq_layout L; /* laid out before every test */
AMT_CPU_SUITE(overlap_seq_lens, seq_layout_init(&L));

static void expect_refused(attnmeta_context *ctx, seq_layout *L, const char *out) {
  const attnmeta_status st = attnmeta_build_step(ctx, &L->s, NULL);
  int i, written = 0;
  cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "%s on seq_lens: %s (%s)", out,
               attnmeta_status_string(st), attnmeta_last_error(ctx));
  cr_expect(strstr(attnmeta_last_error(ctx), out) &&
                strstr(attnmeta_last_error(ctx), "input seq_lens"),
            "message names %s and seq_lens: %s", out, attnmeta_last_error(ctx));
  for (i = 2; i < ARENA; ++i) written |= L->arena[i] != POISON;
  cr_expect(L->arena[0] == 100 && L->arena[1] == 7 && !written,
            "%s on seq_lens: written (seq_lens %d %d)", out, L->arena[0], L->arena[1]);
}

Test(overlap_seq_lens, swa_lens) {
  for (int at = 0; at < 2; ++at) { /* on all of seq_lens, then on seq_lens[1] only */
    seq_layout_init(&L);
    L.s.swa_mode = ATTNMETA_SWA_CAUSAL;
    L.s.swa_window = 4;
    L.s.swa_width = 4;
    L.s.swa_lens = L.arena + at;
    expect_refused(amt_cpu, &L, "swa_lens");
  }
}

Test(overlap_seq_lens, swa_indices) {
  seq_layout_init(&L);
  L.s.swa_mode = ATTNMETA_SWA_NON_CAUSAL;
  L.s.swa_window = 2;
  L.s.swa_width = 2;
  L.s.swa_block_size = 16;
  L.s.swa_indices = L.arena;
  L.s.swa_indices_stride = 2;
  expect_refused(amt_cpu, &L, "swa_indices");
}

Test(overlap_seq_lens, compressed_groups) {
  int g;
  char name[64];
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g) {
    seq_layout_init(&L);
    L.s.compressed_groups[g].ratio = 4;
    L.s.compressed_groups[g].seq_lens_out = L.arena;
    snprintf(name, sizeof name, "compressed_groups[%d].seq_lens_out", g);
    expect_refused(amt_cpu, &L, name);
    seq_layout_init(&L);
    L.s.compressed_groups[g].ratio = 4;
    L.s.compressed_groups[g].block_size = 16;
    L.s.compressed_groups[g].slot_mapping = (int64_t *)(void *)L.arena;
    snprintf(name, sizeof name, "compressed_groups[%d].slot_mapping", g);
    expect_refused(amt_cpu, &L, name);
  }
}

Test(overlap_seq_lens, c128a) {
  seq_layout_c128a_init(&L);
  L.s.c128a_lens = L.arena;
  expect_refused(amt_cpu, &L, "c128a_lens");
  seq_layout_c128a_init(&L);
  L.s.c128a_width = 2;
  L.s.c128a_rows = L.arena + 1;
  L.s.c128a_rows_stride = 2;
  expect_refused(amt_cpu, &L, "c128a_rows");
}

/* Right next to seq_lens is no overlap, and the products come out right. */
Test(overlap_seq_lens, next_to_seq_lens) {
  attnmeta_status st;
  seq_layout_init(&L);
  L.s.compressed_groups[0].ratio = 4;
  L.s.compressed_groups[0].seq_lens_out = L.arena + 2;
  st = attnmeta_build_step(amt_cpu, &L.s, NULL);
  cr_assert_eq(st, ATTNMETA_OK, "%s", attnmeta_last_error(amt_cpu));
  cr_expect(L.arena[0] == 100 && L.arena[1] == 7, "seq_lens kept");
  cr_expect(L.arena[2] == 25 && L.arena[3] == 1, "compressed lengths %d %d", L.arena[2],
            L.arena[3]);
  cr_expect(L.arena[4] == POISON, "past the lengths");
}
