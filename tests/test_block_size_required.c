// SPDX-License-Identifier: Apache-2.0
/*
 * slot_mapping needs an explicit block_size: a step from attnmeta_step_init
 * that wants slots but leaves block_size alone is refused with
 * ATTNMETA_ERR_INVALID_ARGUMENT and a message naming both, and nothing is
 * written. Once block_size is set, the slots match a naive reference.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "step_fixture.h"

#define POISON_BYTE 0x5A
#define GUARD 16 /* int64 slots either side of the output, poisoned */
#define TOKENS 5
#define REQS 2
#define COLS 3

/* One run a backend. */
ParameterizedTestParameters(block_size_required, slot_mapping) { return amt_case_params(1); }

/* Slot of token position p of a request with table row `row`, block size bs. */
static int64_t naive_slot(const int32_t *row, int64_t p, int32_t bs) {
  return (int64_t)row[p / bs] * bs + p % bs;
}

ParameterizedTest(amt_case_param *param, block_size_required, slot_mapping) {
  static const int32_t qsl[REQS + 1] = {0, 2, 5};
  static const int32_t seq[REQS] = {4, 6};
  static const int32_t table[REQS * COLS] = {7, 8, 9, 3, 4, 5};
  const attnmeta_backend kind = (attnmeta_backend)param->backend;
  const char *be = amt_backend_label(kind);
  attnmeta_context *ctx = amt_open_or_skip(kind);
  const size_t out_bytes = (TOKENS + 2 * GUARD) * sizeof(int64_t);
  unsigned char *d_in = amt_dev_alloc(ctx, 256);
  unsigned char *d_out = amt_dev_alloc(ctx, out_bytes);
  unsigned char poison[(TOKENS + 2 * GUARD) * sizeof(int64_t)], got[sizeof poison];
  int64_t slots[TOKENS + 2 * GUARD];
  attnmeta_step s;
  attnmeta_status st;
  const char *msg;
  int t, r;

  amt_to_dev(ctx, d_in, qsl, sizeof qsl);
  amt_to_dev(ctx, d_in + 64, seq, sizeof seq);
  amt_to_dev(ctx, d_in + 128, table, sizeof table);
  memset(poison, POISON_BYTE, sizeof poison);
  amt_to_dev(ctx, d_out, poison, sizeof poison);

  attnmeta_step_init(&s);
  s.query_start_loc = (const int32_t *)(void *)d_in;
  s.num_reqs = REQS;
  s.num_tokens = TOKENS;
  s.capacity = TOKENS;
  s.seq_lens = (const int32_t *)(void *)(d_in + 64);
  s.block_table = (const int32_t *)(void *)(d_in + 128);
  s.block_table_cols = COLS;
  s.block_table_stride = COLS;
  s.slot_mapping = (int64_t *)(void *)(d_out + GUARD * sizeof(int64_t));

  /* block_size left as attnmeta_step_init set it */
  st = attnmeta_build_step(ctx, &s, NULL);
  msg = attnmeta_last_error(ctx);
  cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "backend=%s: block_size unset gave %s (%s)", be,
               attnmeta_status_string(st), msg);
  cr_expect(strstr(msg, "slot_mapping") && strstr(msg, "block_size"),
            "backend=%s: message names slot_mapping and block_size: %s", be, msg);
  amt_to_host(ctx, got, d_out, sizeof got);
  cr_expect(memcmp(got, poison, sizeof got) == 0, "backend=%s: a refused step wrote slots", be);

  s.block_size = -3;
  st = attnmeta_build_step(ctx, &s, NULL);
  cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "backend=%s: block_size -3 gave %s", be,
               attnmeta_status_string(st));
  amt_to_host(ctx, got, d_out, sizeof got);
  cr_expect(memcmp(got, poison, sizeof got) == 0, "backend=%s: a refused step wrote slots", be);

  /* set explicitly: the slots of the causal positions, guards untouched */
  s.block_size = 2;
  st = attnmeta_build_step(ctx, &s, NULL);
  cr_assert_eq(st, ATTNMETA_OK, "backend=%s: block_size 2 gave %s (%s)", be,
               attnmeta_status_string(st), attnmeta_last_error(ctx));
  amt_to_host(ctx, slots, d_out, sizeof slots);
  for (r = 0; r < REQS; r++) {
    const int32_t q = qsl[r + 1] - qsl[r];
    for (t = qsl[r]; t < qsl[r + 1]; t++) {
      const int64_t p = seq[r] - q + (t - qsl[r]);
      cr_expect_eq(slots[GUARD + t], naive_slot(table + r * COLS, p, 2),
                   "backend=%s token %d: slot %lld, want %lld", be, t,
                   (long long)slots[GUARD + t], (long long)naive_slot(table + r * COLS, p, 2));
    }
  }
  cr_expect(memcmp(slots, poison, GUARD * sizeof(int64_t)) == 0 &&
                memcmp(slots + GUARD + TOKENS, poison, GUARD * sizeof(int64_t)) == 0,
            "backend=%s: a guard zone was written", be);

  amt_dev_free(ctx, d_out);
  amt_dev_free(ctx, d_in);
  attnmeta_close(ctx);
}
