// SPDX-License-Identifier: Apache-2.0
/* attnmeta bench: one case, whatever its kind: the part-1 step, the step
 * with the DeepSeek-V4 products, or the top-k conversion. The timing and
 * the report call these; each kind's file knows only its own work. */
#include "cli_bench_parts.h"

double bench_case_bytes(const bench_case *c) {
  if (c->topk_count > 0) return bench_topk_bytes(c);
  return bench_step_bytes(c) + (c->dsv4 ? bench_dsv4_bytes(c) : 0.0);
}

int bench_case_setup(case_run *b, attnmeta_context *ctx, const bench_case *bc, int want_sets) {
  if (bc->topk_count > 0) return bench_topk_setup(b, ctx, bc, want_sets);
  if (bench_step_setup(b, ctx, bc, want_sets)) return 1;
  return bc->dsv4 ? bench_dsv4_setup(b) : 0;
}

attnmeta_status bench_enqueue_step(void *user, void *stream) {
  case_run *b = (case_run *)user;
  return b->topk ? bench_topk_enqueue(b, stream) : bench_step_enqueue(b, stream);
}

int bench_poison(case_run *b) {
  if (b->topk) return bench_topk_poison(b);
  return bench_step_poison(b) || (b->dsv4 && bench_dsv4_poison(b));
}

int bench_check_outputs(case_run *b, int s, char *why, size_t why_size) {
  if (b->topk) return bench_topk_check(b, s, why, why_size);
  return bench_step_check(b, s, why, why_size) ||
         (b->dsv4 && bench_dsv4_check(b, s, why, why_size));
}

void bench_case_free(case_run *b) {
  if (b->topk) {
    bench_topk_free(b);
    return;
  }
  bench_dsv4_free(b);
  bench_step_free(b);
}
