// SPDX-License-Identifier: Apache-2.0
/*
 * Checks of the reference itself (so a library/reference mismatch points at
 * the library), and the contract's DCP example run through every backend.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"
#include "step_fixture.h"
#include "reference.h"

Test(reference, dcp_formula_equals_counting) {
  static const int64_t interleaves[] = {1, 2, 3, 16};
  int64_t w, k, i, len;
  for (w = 1; w <= 8; w++)
    for (k = 0; k < w; k++)
      for (i = 0; i < 4; i++)
        for (len = 0; len <= 700; len++) {
          const int64_t a = amr_dcp_local_formula(len, w, k, interleaves[i]);
          const int64_t b = amr_dcp_local_count(len, w, k, interleaves[i]);
          if (a != b)
            cr_assert_fail("W=%lld k=%lld I=%lld len=%lld formula=%lld count=%lld",
                           (long long)w, (long long)k, (long long)interleaves[i],
                           (long long)len, (long long)a, (long long)b);
        }
}

Test(reference, dcp_contract_example) {
  /* W = 2, k = 1, I = 1: global [8, 9, 10] -> local [4, 4, 5] */
  cr_expect_eq(amr_dcp_local_count(8, 2, 1, 1), 4);
  cr_expect_eq(amr_dcp_local_count(9, 2, 1, 1), 4);
  cr_expect_eq(amr_dcp_local_count(10, 2, 1, 1), 5);
  cr_expect_eq(amr_dcp_local_formula(10, 2, 1, 1), 5);
}

Test(reference, req_of_token) {
  /* requests of length 0, 2, 0, 3 */
  static const int32_t qsl[] = {0, 0, 2, 2, 5};
  static const int32_t want[] = {1, 1, 3, 3, 3, 3, 3};
  int32_t t;
  for (t = 0; t < 7; t++) cr_expect_eq(amr_req(qsl, 4, t), want[t], "t=%d", (int)t);
}

Test(reference, step_small) {
  /* two requests: qlen 2 (seq 5) and qlen 1 (seq 3); 2 padding tokens; C = 6 */
  static const int32_t qsl[] = {0, 2, 3};
  static const int32_t seq[] = {5, 3};
  static const int32_t table[] = {7, 8, 9, 17, 18, 19}; /* 2 rows, stride 3 */
  static const int32_t want_len[] = {4, 5, 3, 0, 0, 0};
  static const int64_t want_pos[] = {3, 4, 2, 0, 0};
  static const int64_t want_slot[] = {7 * 4 + 3, 8 * 4 + 0, 17 * 4 + 2, -1, -1, -1};
  static const int32_t want_idx[] = {0, 0, 1, 2, 3};
  amr_input in;
  amr_output *o;
  int t;
  amr_input_requests(&in, qsl, 2, 5, 6, seq);
  amr_input_table(&in, table, 2, 3, 4);
  amr_input_dcp(&in, 1, 0, 1);
  o = amr_alloc(&in);
  amr_build(&in, o);
  for (t = 0; t < 6; t++) {
    cr_expect_eq(o->seq_lens_out[t], want_len[t], "seq_lens_out[%d]", t);
    cr_expect_eq(o->slots[t], want_slot[t], "slot[%d]", t);
  }
  for (t = 0; t < 5; t++) {
    cr_expect_eq(o->positions[t], want_pos[t], "positions[%d]", t);
    cr_expect_eq(o->req_indices[t], want_idx[t], "req_indices[%d]", t);
  }
  cr_expect_eq(o->token_to_req[4], 0, "token_to_req past actual");
  cr_expect_eq(o->block_table_out[2 * 2 + 1], 18);
  cr_expect_eq(o->block_table_out[3 * 2 + 0], 0);
  cr_expect_eq(o->request_flags | o->slot_flags, 0);
  amr_free(o);
}

/* ---- the contract's DCP example through the library, on every backend ---- */

ParameterizedTestParameters(contract, dcp_example) { return amt_case_params(1); }

ParameterizedTest(amt_case_param *param, contract, dcp_example) {
  static const int32_t qsl[] = {0, 3};
  static const int32_t seq[] = {10};
  static const int32_t table[] = {5};
  attnmeta_context *ctx = amt_open_or_skip((attnmeta_backend)param->backend);
  int32_t *d_in = amt_dev_alloc(ctx, 4 * sizeof(int32_t));
  int32_t *d_out = amt_dev_alloc(ctx, 8 * sizeof(int32_t));
  int32_t host[8] = {0};
  attnmeta_step s;
  attnmeta_status st;
  amt_to_dev(ctx, d_in, qsl, sizeof qsl);
  amt_to_dev(ctx, d_in + 2, seq, sizeof seq);
  amt_to_dev(ctx, d_in + 3, table, sizeof table);
  amt_step_tokens(&s, d_in, 1, 3, 3);
  amt_step_table(&s, d_in + 2, d_in + 3, 1, 1, 0); /* no slot mapping: no block size */
  s.dcp_world_size = 2;
  s.dcp_rank = 1;
  s.dcp_interleave = 1;
  s.seq_lens_out = d_out;
  s.global_seq_lens_out = d_out + 4;
  st = attnmeta_build_step(ctx, &s, NULL);
  cr_assert_eq(st, ATTNMETA_OK, "backend=%s build_step: %s (%s)",
               amt_backend_label((attnmeta_backend)param->backend),
               attnmeta_status_string(st), attnmeta_last_error(ctx));
  amt_to_host(ctx, host, d_out, sizeof host);
  cr_expect(host[0] == 4 && host[1] == 4 && host[2] == 5,
            "backend=%s local lengths [%d, %d, %d], contract says [4, 4, 5]",
            amt_backend_label((attnmeta_backend)param->backend), host[0], host[1], host[2]);
  cr_expect(host[4] == 8 && host[5] == 9 && host[6] == 10,
            "backend=%s global lengths [%d, %d, %d], contract says [8, 9, 10]",
            amt_backend_label((attnmeta_backend)param->backend), host[4], host[5], host[6]);
  amt_dev_free(ctx, d_out);
  amt_dev_free(ctx, d_in);
  attnmeta_close(ctx);
}
