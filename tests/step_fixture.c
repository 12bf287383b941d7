// SPDX-License-Identifier: Apache-2.0
/* See step_fixture.h. */
#include "step_fixture.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "op_inputs.h"

attnmeta_context *amt_fixture_device(attnmeta_backend kind, unsigned char **d_in, size_t in_bytes,
                                     unsigned char **d_arena, size_t arena_bytes) {
  attnmeta_context *ctx = amt_open_or_skip(kind);
  unsigned char *poison = malloc(arena_bytes);
  cr_assert(poison);
  *d_in = amt_dev_alloc(ctx, in_bytes);
  *d_arena = amt_dev_alloc(ctx, arena_bytes);
  memset(poison, AMT_POISON_BYTE, arena_bytes);
  amt_to_dev(ctx, *d_arena, poison, arena_bytes);
  free(poison);
  return ctx;
}

void amt_step_fixture_open(amt_step_fixture *f, attnmeta_backend kind) {
  static const int32_t qsl[] = {0, 1, 3, 4};
  static const int32_t seq[] = {5, 2, 9};
  static const int32_t table[] = {1, 2, 3, 4, 11, 12, 13, 14, 21, 22, 23, 24};
  attnmeta_step *s = &f->step;
  f->ctx = amt_fixture_device(kind, &f->d_in, 256, &f->d_arena, AMT_ARENA_BYTES);
  amt_to_dev(f->ctx, f->d_in, qsl, sizeof qsl);
  amt_to_dev(f->ctx, f->d_in + 64, seq, sizeof seq);
  amt_to_dev(f->ctx, f->d_in + 128, table, sizeof table);
  amt_step_tokens(s, (const int32_t *)(void *)f->d_in, 3, 6, 8);
  amt_step_table(s, (const int32_t *)(void *)(f->d_in + 64),
                 (const int32_t *)(void *)(f->d_in + 128), 4, 4, 4);
}

void amt_step_fixture_close(amt_step_fixture *f) {
  amt_dev_free(f->ctx, f->d_arena);
  amt_dev_free(f->ctx, f->d_in);
  attnmeta_close(f->ctx);
}

void *amt_slice(const amt_step_fixture *f, int k) { return f->d_arena + k * AMT_SLICE; }

long amt_first_written(const amt_step_fixture *f) {
  unsigned char host[AMT_ARENA_BYTES];
  size_t i;
  amt_to_host(f->ctx, host, f->d_arena, sizeof host);
  for (i = 0; i < sizeof host; i++)
    if (host[i] != AMT_POISON_BYTE) return (long)i;
  return -1;
}

static void free_params(struct criterion_test_params *crp) { cr_free(crp->params); }

struct criterion_test_params amt_case_params(int ncases) {
  return amt_case_params_where(ncases, NULL);
}

struct criterion_test_params amt_case_params_where(int ncases, int (*keep)(int index)) {
  attnmeta_backend be[AMT_MAX_BACKENDS];
  const int nb = amt_test_backends(be);
  amt_case_param *ps = cr_calloc((size_t)(nb * ncases) + 1, sizeof *ps);
  int i, j, n = 0;
  for (i = 0; i < nb; i++)
    for (j = 0; j < ncases; j++) {
      if (keep && !keep(j)) continue;
      ps[n].backend = (int)be[i];
      ps[n].index = j;
      n++;
    }
  return cr_make_param_array(amt_case_param, ps, (size_t)n, free_params);
}

struct criterion_test_params amt_index_params(int n) {
  int *ps = cr_calloc((size_t)n + 1, sizeof *ps);
  int i;
  for (i = 0; i < n; i++) ps[i] = i;
  return cr_make_param_array(int, ps, (size_t)n, free_params);
}
