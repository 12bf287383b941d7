// SPDX-License-Identifier: Apache-2.0
/* attnmeta bench: one case, whatever its kind: the part-1 step, the step
 * with the DeepSeek-V4 products, or the top-k conversion. The timing and
 * the report call these; each kind's file knows only its own work. */
#include "cli_bench_parts.h"

#define MAX_KINDS 2

/* The kinds a case is made of, in the order they are set up. */
static int kinds_of(const bench_case *c, const bench_kind *kinds[MAX_KINDS]) {
  if (c->topk_count > 0) {
    kinds[0] = &bench_topk_kind;
    return 1;
  }
  kinds[0] = &bench_step_kind;
  kinds[1] = &bench_dsv4_kind;
  return c->dsv4 ? 2 : 1;
}

double bench_case_bytes(const bench_case *c) {
  const bench_kind *kinds[MAX_KINDS];
  const int n = kinds_of(c, kinds);
  double bytes = 0.0;
  for (int i = 0; i < n; ++i) bytes += kinds[i]->bytes(c);
  return bytes;
}

int bench_case_setup(case_run *b, attnmeta_context *ctx, const bench_case *bc, int want_sets) {
  const bench_kind *kinds[MAX_KINDS];
  const int n = kinds_of(bc, kinds);
  for (int i = 0; i < n; ++i)
    if (kinds[i]->setup(b, ctx, bc, want_sets)) return 1;
  return 0;
}

attnmeta_status bench_enqueue_step(void *user, void *stream) {
  case_run *b = (case_run *)user;
  const bench_kind *kinds[MAX_KINDS];
  kinds_of(b->bc, kinds);
  return kinds[0]->enqueue(b, stream);
}

int bench_poison(case_run *b) {
  const bench_kind *kinds[MAX_KINDS];
  const int n = kinds_of(b->bc, kinds);
  for (int i = 0; i < n; ++i)
    if (kinds[i]->poison(b)) return 1;
  return 0;
}

int bench_check_outputs(case_run *b, int s, char *why, size_t why_size) {
  const bench_kind *kinds[MAX_KINDS];
  const int n = kinds_of(b->bc, kinds);
  for (int i = 0; i < n; ++i)
    if (kinds[i]->check(b, s, why, why_size)) return 1;
  return 0;
}

/* In the reverse order of the setup: what a kind adds goes first. */
void bench_case_free(case_run *b) {
  const bench_kind *kinds[MAX_KINDS];
  for (int i = kinds_of(b->bc, kinds) - 1; i >= 0; --i) kinds[i]->free(b);
}
