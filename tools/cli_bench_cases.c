// SPDX-License-Identifier: Apache-2.0
/* attnmeta bench: the cases of the performance targets and the anchors
 * they are compared with. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_bench_parts.h"

static const anchor anchors[] = {
    {"1x1", 0.50, 40.7, 2.75, 470, 45, 34, 2},
    {"1x4", 0.69, 42.7, 2.87, 481, 57, 34, 2},
    {"16x6", 0.70, 42.1, 4.23, 496, 42, 34, 2},
    {"16x6+17pad", 0.70, 45.6, 4.38, 487, 42, 37, 2},
    {"128x2", 0.70, 49.4, 6.42, 449, 41, 34, 2},
    {"1024x1", 0.70, 80.6, 10.09, 657, 41, 34, 2},
    {"256xmixed+31pad", 0.69, 67.5, 6.71, 765, 41, 37, 2},
    {"skewed", 0.70, 48.7, 3.48, 464, 70, 34, 2},
};

const anchor *bench_anchor_of(const char *name) {
  for (size_t i = 0; i < sizeof anchors / sizeof anchors[0]; ++i)
    if (strcmp(anchors[i].name, name) == 0) return &anchors[i];
  return NULL;
}

/* A case: R requests of q query tokens each (DRAWN: drawn in [0, 8];
 * `qlens`, when given, lists them), then bench_case's fields past qlens. */
#define DRAWN (-1)
typedef struct case_row {
  const char *name, *label;
  int R, q, pad, cols, table_cols, col_offset, topk_count, topk_counts, dsv4;
  const int *qlens;
} case_row;

/* The cases built on rank DCP_RANK of two DCP ranks (interleave 1). */
static const char *const dcp2_cases[] = {"dsv41_dcp2_32x2"};

static int dcp_world_of(const char *name) {
  for (size_t i = 0; i < sizeof dcp2_cases / sizeof dcp2_cases[0]; ++i)
    if (strcmp(dcp2_cases[i], name) == 0) return 2;
  return 1;
}

static const int skewed_qlens[] = {0, 257, 1, 0, 3};

static const case_row case_rows[] = {
    {"1x1", "1 x 1, 64", 1, 1, 0, 64, 0, 0, 0, 0, 0, NULL},
    {"1x4", "1 x 4, 64", 1, 4, 0, 64, 0, 0, 0, 0, 0, NULL},
    {"16x6", "16 x 6, 64", 16, 6, 0, 64, 0, 0, 0, 0, 0, NULL},
    {"16x6+17pad", "16 x 6 + 17 pad, 65", 16, 6, 17, 65, 0, 0, 0, 0, 0, NULL},
    {"128x2", "128 x 2, 2560", 128, 2, 0, 2560, 0, 0, 0, 0, 0, NULL},
    {"1024x1", "1024 x 1, 2560", 1024, 1, 0, 2560, 0, 0, 0, 0, 0, NULL},
    {"256xmixed+31pad", "256 x mixed 0..8 + 31 pad, 512", 256, DRAWN, 31, 512, 0, 0, 0, 0, 0, NULL},
    {"skewed", "skewed [0,257,1,0,3], 64", 5, 0, 0, 64, 0, 0, 0, 0, 0, skewed_qlens},
    /* The wide cases with the block table a column slice of a table 7
     * columns wider, from its column 3 (as engines slice their tables): an
     * odd stride, rows starting at every offset modulo 16 bytes. Goal: the
     * aligned case's time within 1.1 x. */
    {"128x2/odd", "128 x 2, 2560 of 2567 from col 3", 128, 2, 0, 2560, 2567, 3, 0, 0, 0, NULL},
    {"1024x1/odd", "1024 x 1, 2560 of 2567 from col 3", 1024, 1, 0, 2560, 2567, 3, 0, 0, 0, NULL},
    /* The sparse top-k conversion (one launch per layer): T tokens x K, with
     * counts; block size 64, 1024 blocks a request. */
    {"topk_t1_k512", "top-k T 1 x K 512, counts", 1, 1, 0, 1024, 0, 0, 512, 1, 0, NULL},
    {"topk_t8_k2048", "top-k T 8 x K 2048, counts", 8, 1, 0, 1024, 0, 0, 2048, 1, 0, NULL},
    {"topk_t64_k2048", "top-k T 64 x K 2048, counts", 64, 1, 0, 1024, 0, 0, 2048, 1, 0, NULL},
    {"topk_t256_k512", "top-k T 256 x K 512, counts", 256, 1, 0, 1024, 0, 0, 512, 1, 0, NULL},
    {"topk_t1024_k2048", "top-k T 1024 x K 2048, counts", 1024, 1, 0, 1024, 0, 0, 2048, 1, 0, NULL},
    {"topk_t1024_k2048_plain", "top-k T 1024 x K 2048", 1024, 1, 0, 1024, 0, 0, 2048, 0, 0, NULL},
    /* A whole DeepSeek-V4 decode step (the cases of bench/triton_dsv4.py):
     * the part-1 products over a 512-column table, the compressed groups of
     * ratio 4 and 128, the SWA rows and the C128A rows, in the one launch. */
    {"dsv4_1x1", "DSV4 step 1 x 1, 512", 1, 1, 0, 512, 0, 0, 0, 0, 1, NULL},
    {"dsv4_32x2", "DSV4 step 32 x 2, 512", 32, 2, 0, 512, 0, 0, 0, 0, 1, NULL},
    {"dsv4_128x1", "DSV4 step 128 x 1, 512", 128, 1, 0, 512, 0, 0, 0, 0, 1, NULL},
    {"dsv4_64x2+31pad", "DSV4 step 64 x 2 + 31 pad, 512", 64, 2, 31, 512, 0, 0, 0, 0, 1, NULL},
    /* A whole DeepSeek-V4.1 decode step, every product of the step: the
     * DSV4 step's, the indexer's compressed lengths, and the SWA rows of
     * three groups with the token slots and a replay floor. */
    {"dsv41_1x1", "DSV4.1 step 1 x 1, 512", 1, 1, 0, 512, 0, 0, 0, 0, 2, NULL},
    {"dsv41_32x2", "DSV4.1 step 32 x 2, 512", 32, 2, 0, 512, 0, 0, 0, 0, 2, NULL},
    {"dsv41_128x1", "DSV4.1 step 128 x 1, 512", 128, 1, 0, 512, 0, 0, 0, 0, 2, NULL},
    /* The same step on rank 1 of two DCP ranks: local lengths, only this
     * rank's compressed slots and C128A rows (the SWA rows are not split). */
    {"dsv41_dcp2_32x2", "DSV4.1 step 32 x 2, 512, DCP 2", 32, 2, 0, 512, 0, 0, 0, 0, 2, NULL},
};

/* The cases of the performance targets (same order as the notes). */
int bench_make_cases(bench_case *c) {
  const int n = (int)(sizeof case_rows / sizeof case_rows[0]);
  uint32_t seed = 2024;
  _Static_assert(sizeof case_rows / sizeof case_rows[0] <= MAX_CASES, "MAX_CASES holds every case");
  memset(c, 0, sizeof(bench_case) * MAX_CASES);
  for (int i = 0; i < n; ++i) {
    const case_row *w = &case_rows[i];
    c[i] = (bench_case){w->name,       w->label,      w->R,           {0},
                        w->pad,        w->cols,       w->table_cols,  w->col_offset,
                        w->topk_count, w->topk_counts, w->dsv4,       dcp_world_of(w->name)};
    for (int r = 0; r < w->R; ++r)
      c[i].qlens[r] = w->qlens ? w->qlens[r] : w->q == DRAWN ? (int)(cli_lcg(&seed) % 9u) : w->q;
  }
  return n;
}

int bench_case_tokens(const bench_case *c) {
  int t = 0;
  for (int r = 0; r < c->num_reqs; ++r) t += c->qlens[r];
  return t;
}

/* Capacity of the capacity-long outputs: past T, to the next multiple of 512
 * (an engine's persistent buffer is larger than the step). */
int bench_case_capacity(int num_tokens) { return (num_tokens / 512 + 1) * 512; }


