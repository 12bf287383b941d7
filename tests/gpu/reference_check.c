// SPDX-License-Identifier: Apache-2.0
/*
 * Checks the CUDA tests' own reference (gpu_check.c) against the CPU
 * backend on random well-formed steps of the kinds those tests use (padding,
 * zero-length requests, odd strides, decode context parallelism, a fixed
 * num_mapped), with the same poisoned, slack-checked output layout. Needs no
 * GPU: a wrong reference is found here, before a GPU run is spent on it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gpu_check.h"

#define NAME "attnmeta_gpu_reference_check"
#define TRIALS 400

static uint64_t rng_state = 0x5EEDull;

static int32_t pick(int32_t lo, int32_t hi) { return amg_rand_range(&rng_state, lo, hi); }

int main(void) {
  static const int32_t block_sizes[] = {1, 4, 8, 16};
  static const int32_t worlds[] = {1, 1, 2, 4};
  attnmeta_context *ctx = NULL;
  attnmeta_status st = attnmeta_open(&ctx, ATTNMETA_BACKEND_CPU, 0);
  int trial;
  if (!AMG_CHECK(st == ATTNMETA_OK, "attnmeta_open(CPU): %s", attnmeta_open_error()))
    return amg_finish(NAME);
  for (trial = 0; trial < TRIALS; trial++) {
    amg_shape s;
    amg_sizes z;
    amg_outputs got, expect;
    attnmeta_step step;
    int32_t *qsl, *seq, *table;
    int32_t r, c, total;
    char what[64];
    s.R = pick(1, 12);
    s.cols = pick(1, 70);
    s.in_stride = s.cols + pick(0, 3);
    s.out_stride = s.cols + pick(0, 3);
    s.block_size = block_sizes[pick(0, 3)];
    s.world = worlds[pick(0, 3)];
    s.rank = pick(0, s.world - 1);
    s.interleave = pick(1, 3);
    qsl = malloc(sizeof(int32_t) * (size_t)(s.R + 1));
    seq = malloc(sizeof(int32_t) * (size_t)s.R);
    table = malloc(sizeof(int32_t) * (size_t)s.R * (size_t)s.in_stride);
    if (!qsl || !seq || !table) abort();
    qsl[0] = 0;
    for (r = 0; r < s.R; r++) {
      /* every position inside the table: q <= seq_len <= what it holds */
      const int32_t room = s.cols * s.block_size * s.world;
      const int32_t q = pick(0, 3) == 0 ? 0 : pick(1, room < 9 ? room : 9);
      qsl[r + 1] = qsl[r] + q;
      seq[r] = pick(q, room);
      for (c = 0; c < s.in_stride; c++)
        table[r * s.in_stride + c] = c < s.cols ? pick(0, 1 << 20) : -7;
    }
    total = qsl[s.R];
    s.T = total + pick(0, 20);
    s.C = s.T + pick(0, 10);
    s.num_mapped = pick(0, 3) == 0 ? pick(0, s.T + 3) : -1;

    z = amg_sizes_of(&s);
    got = amg_host_outputs(&z);
    expect = amg_host_outputs(&z);
    got.o32[AMG_ERR][0] = 0;
    step = amg_step_of(&s, qsl, seq, table, &got);
    st = attnmeta_build_step(ctx, &step, NULL);
    snprintf(what, sizeof what, "trial %d (R %d, T %d, W %d)", trial, s.R, s.T, s.world);
    if (AMG_CHECK(st == ATTNMETA_OK, "%s: attnmeta_build_step: %s", what,
                  attnmeta_last_error(ctx))) {
      amg_reference(&s, qsl, seq, table, &expect);
      amg_compare_host(what, &got, &expect, &z);
    }
    amg_free_host_outputs(&got);
    amg_free_host_outputs(&expect);
    free(qsl);
    free(seq);
    free(table);
    if (amg_failed > 20) break;
  }
  attnmeta_close(ctx);
  return amg_finish(NAME);
}
