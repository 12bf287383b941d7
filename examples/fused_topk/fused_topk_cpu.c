// SPDX-License-Identifier: Apache-2.0
/*
 * The fused top-k example on the CPU: an engine's selection "kernel"
 * (indexer scores -> the K best positions of each token, the rule of
 * problem.h) that writes global KV slots itself, through
 * attnmeta_topk_slot from <attnmeta/device/topk_slot.h>, one token at a
 * time, as select_kernel.cuh does one block a token on a GPU. Checked
 * against the unfused pipeline: the reference selection (by sorting),
 * then attnmeta_convert_topk on the CPU backend. Prints PASS or FAIL.
 *
 *   fused_topk_cpu [T R L K]
 */
#include <stdio.h>
#include <stdlib.h>

#include <attnmeta/attnmeta.h>
#include <attnmeta/device/topk_slot.h>

#include "problem.h"

/* Token t's selection, written as slots: a radix select of the K-th
 * highest key (four passes of 8 bits), then the kept positions in
 * increasing order, each converted where it is written. */
static void select_row_fused(const ft_problem *p, const attnmeta_topk *op, int32_t t, uint32_t *keys,
                             int32_t *flags) {
  const attnmeta_topk_token tok = attnmeta_topk_token_of(op, t);
  const int32_t n = ft_candidates(p, t), K = p->K;
  int32_t *out = op->out + (int64_t)t * op->out_stride;
  uint32_t prefix = 0, mask = 0, remaining = (uint32_t)K, gt = 0, eq = 0;
  int32_t i, shift;
  const int take_all = n <= K;
  for (i = 0; i < n; i++) keys[i] = ft_key(p->scores[(int64_t)t * p->L + i]);
  for (shift = 24; !take_all && shift >= 0; shift -= 8) {
    uint32_t hist[256] = {0}, b = 256;
    for (i = 0; i < n; i++)
      if ((keys[i] & mask) == prefix) hist[(keys[i] >> shift) & 255U]++;
    while (b-- > 0) {
      if (hist[b] >= remaining) break;
      remaining -= hist[b];
    }
    prefix |= b << shift;
    mask |= 255U << shift;
  }
  for (i = 0; i < n; i++) {
    const int above = take_all || keys[i] > prefix, equal = !take_all && keys[i] == prefix;
    if (above || (equal && eq < remaining)) out[gt + (eq < remaining ? eq : remaining)] = attnmeta_topk_slot(op, &tok, i, flags);
    gt += (uint32_t)above;
    eq += (uint32_t)equal;
  }
  for (i = take_all ? n : K; i < K; i++) out[i] = -1;
}

int main(int argc, char **argv) {
  const int32_t T = argc > 4 ? atoi(argv[1]) : 48, R = argc > 4 ? atoi(argv[2]) : 7;
  const int32_t L = argc > 4 ? atoi(argv[3]) : 3000, K = argc > 4 ? atoi(argv[4]) : 256;
  ft_problem p;
  attnmeta_context *ctx = NULL;
  attnmeta_topk op;
  uint32_t *keys;
  int32_t *positions, *want, *got, want_err = 0, got_err = 0, flags = 0, t;
  int64_t i, bad = 0;
  if (T < 1 || R < 1 || L < 2 || K < 1 || R > T) {
    fprintf(stderr, "usage: %s [T R L K] with 1 <= R <= T, L >= 2, K >= 1\n", argv[0]);
    return 2;
  }
  positions = malloc((size_t)T * (size_t)K * 4);
  want = malloc((size_t)T * (size_t)K * 4);
  got = malloc(((size_t)T * (size_t)K + 1) * 4); /* one poisoned element past the end */
  keys = malloc((size_t)L * 4);
  if (!positions || !want || !got || !keys || !ft_problem_make(&p, T, R, L, K, 2026)) {
    printf("FAIL out of memory\n");
    return 1;
  }
  if (attnmeta_open(&ctx, ATTNMETA_BACKEND_CPU, 0) != ATTNMETA_OK) {
    printf("FAIL attnmeta_open: %s\n", attnmeta_open_error());
    return 1;
  }
  /* unfused: select positions, then one conversion call for the layer */
  if (!ft_reference_select(&p, positions)) {
    printf("FAIL out of memory\n");
    return 1;
  }
  op = ft_topk_op(&p, positions, p.req_id, p.table, want, &want_err);
  if (attnmeta_convert_topk(ctx, &op, NULL) != ATTNMETA_OK) {
    printf("FAIL attnmeta_convert_topk: %s\n", attnmeta_last_error(ctx));
    return 1;
  }
  /* fused: the selection writes slots */
  for (i = 0; i <= (int64_t)T * K; i++) got[i] = 0x5A5A5A5A;
  op = ft_topk_op(&p, NULL, p.req_id, p.table, got, &got_err);
  for (t = T - 1; t >= 0; t--) select_row_fused(&p, &op, t, keys, &flags); /* a row's stray write lands on a finished row */
  attnmeta_topk_flags_publish(op.error_word, flags);
  for (i = 0; i < (int64_t)T * K; i++)
    if (got[i] != want[i] && bad++ < 5)
      printf("  token %lld column %lld: fused %d, unfused %d\n", (long long)(i / K), (long long)(i % K), got[i],
             want[i]);
  if (got[(int64_t)T * K] != 0x5A5A5A5A && bad++ < 5) printf("  written past the last row\n");
  if (got_err != want_err) printf("  error word: fused 0x%x, unfused 0x%x\n", (unsigned)got_err, (unsigned)want_err);
  printf("%s fused top-k on the CPU: T=%d R=%d L=%d K=%d, %lld of %lld slots differ\n",
         bad || got_err != want_err ? "FAIL" : "PASS", T, R, L, K, (long long)bad, (long long)T * K);
  attnmeta_close(ctx);
  ft_problem_free(&p);
  free(positions);
  free(want);
  free(got);
  free(keys);
  return bad || got_err != want_err;
}
