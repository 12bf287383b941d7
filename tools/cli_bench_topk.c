// SPDX-License-Identifier: Apache-2.0
/* attnmeta bench: the cases of the sparse top-k conversion
 * (attnmeta_convert_topk, one launch per layer): their device buffers
 * (several input sets), the enqueued conversion, the poisoning of the
 * outputs and their check against a naive host computation. A top-k case
 * is a bench_case with topk_count > 0: T = num_reqs decode tokens, one a
 * request, block size 64, `cols` blocks a request, counts built. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_bench_parts.h"

#define TOPK_BLOCK 64

struct topk_bench {
  int T, K, cols, nsets;
  int32_t *topk_h[MAX_SETS], *table_h, *qsl_h;
  int32_t *topk_d[MAX_SETS], *table_d, *qsl_d, *out_d, *count_d;
  attnmeta_topk ops[MAX_SETS];
};

static double bench_topk_bytes(const bench_case *c) {
  const double T = c->num_reqs, K = c->topk_count;
  /* the indices read, the slots written, the boundaries and the counts */
  return 4.0 * (2.0 * T * K + (T + 1) + T);
}

static void bench_topk_free(case_run *b) {
  struct topk_bench *k = b->topk;
  if (!k) return;
  for (int s = 0; s < MAX_SETS; ++s) {
    attnmeta_device_free(b->ctx, k->topk_d[s]);
    free(k->topk_h[s]);
  }
  attnmeta_device_free(b->ctx, k->table_d);
  attnmeta_device_free(b->ctx, k->qsl_d);
  attnmeta_device_free(b->ctx, k->out_d);
  attnmeta_device_free(b->ctx, k->count_d);
  free(k->table_h);
  free(k->qsl_h);
  free(k);
  b->topk = NULL;
}

static int dalloc(case_run *b, int32_t **p, int64_t count) {
  return bench_report(b->ctx, attnmeta_device_alloc(b->ctx, (size_t)(count > 0 ? count : 1) * 4,
                                                    (void **)p), "allocate");
}

static int upload(case_run *b, int32_t *dst, const int32_t *src, int64_t count) {
  if (count <= 0) return 0;
  return bench_report(b->ctx, attnmeta_copy_to_device(b->ctx, dst, src, (size_t)count * 4), "copy");
}

static int bench_topk_setup(case_run *b, attnmeta_context *ctx, const bench_case *bc, int want_sets) {
  struct topk_bench *k = calloc(1, sizeof *k);
  const int T = bc->num_reqs, K = bc->topk_count, cols = bc->cols;
  uint32_t seed = 11u + (uint32_t)T * 131u + (uint32_t)K;
  memset(b, 0, sizeof *b);
  b->ctx = ctx;
  b->bc = bc;
  b->topk = k;
  b->R = T;
  b->actual = b->T = T;
  b->cols = cols;
  if (!k) return 1;
  k->T = T;
  k->K = K;
  k->cols = cols;
  if (want_sets > 0)
    k->nsets = want_sets > MAX_SETS ? MAX_SETS : want_sets;
  else
    k->nsets = WARM_SETS * 4.0 * T * K <= SET_BUDGET_BYTES ? WARM_SETS : 1;
  b->nsets = k->nsets;
  k->qsl_h = malloc((size_t)(T + 1) * 4);
  k->table_h = malloc((size_t)T * (size_t)cols * 4 + 4);
  if (!k->qsl_h || !k->table_h) return 1;
  for (int t = 0; t <= T; ++t) k->qsl_h[t] = t;
  for (int64_t i = 0; i < (int64_t)T * cols; ++i) k->table_h[i] = (int32_t)(cli_lcg(&seed) % (1u << 20));
  if (dalloc(b, &k->qsl_d, T + 1) || dalloc(b, &k->table_d, (int64_t)T * cols) ||
      dalloc(b, &k->out_d, (int64_t)T * K) || dalloc(b, &k->count_d, T) ||
      upload(b, k->qsl_d, k->qsl_h, T + 1) || upload(b, k->table_d, k->table_h, (int64_t)T * cols))
    return 1;
  for (int s = 0; s < k->nsets; ++s) {
    attnmeta_topk *op = &k->ops[s];
    k->topk_h[s] = malloc((size_t)T * (size_t)K * 4 + 4);
    if (!k->topk_h[s]) return 1;
    /* positions of the request, random; the last K/16 of each row none */
    for (int t = 0; t < T; ++t) {
      const uint32_t len = (uint32_t)cols * TOPK_BLOCK / 2 + cli_lcg(&seed) % ((uint32_t)cols * TOPK_BLOCK / 2);
      for (int j = 0; j < K; ++j)
        k->topk_h[s][(int64_t)t * K + j] = j >= K - K / 16 ? -1 : (int32_t)(cli_lcg(&seed) % len);
    }
    if (dalloc(b, &k->topk_d[s], (int64_t)T * K) ||
        upload(b, k->topk_d[s], k->topk_h[s], (int64_t)T * K))
      return 1;
    attnmeta_topk_init(op);
    op->topk = k->topk_d[s];
    op->topk_stride = K;
    op->num_tokens = T;
    op->topk_count = K;
    op->query_start_loc = k->qsl_d;
    op->num_reqs = T;
    op->block_table = k->table_d;
    op->block_table_cols = cols;
    op->block_table_stride = cols;
    op->block_size = TOPK_BLOCK;
    op->out = k->out_d;
    op->out_stride = K;
    op->valid_count = bc->topk_counts ? k->count_d : NULL;
  }
  return 0;
}

static attnmeta_status bench_topk_enqueue(case_run *b, void *stream) {
  const int s = b->next;
  b->next = (b->next + 1) % b->nsets;
  b->last_set = s;
  return attnmeta_convert_topk(b->ctx, &b->topk->ops[s], stream);
}

static int bench_topk_poison(case_run *b) {
  struct topk_bench *k = b->topk;
  const int64_t n = (int64_t)k->T * k->K;
  int32_t *p = malloc((size_t)n * 4 + 4);
  int rc;
  if (!p) return 1;
  for (int64_t i = 0; i < n; ++i) p[i] = POISON;
  rc = upload(b, k->out_d, p, n) || upload(b, k->count_d, p, k->T);
  free(p);
  return rc;
}

static int bench_topk_check(case_run *b, int s, char *why, size_t why_size) {
  struct topk_bench *k = b->topk;
  const int64_t n = (int64_t)k->T * k->K;
  int32_t *out = malloc((size_t)n * 4 + 4), *count = malloc((size_t)k->T * 4 + 4);
  int bad = 1;
  why[0] = '\0';
  if (!out || !count) {
    snprintf(why, why_size, "out of host memory");
    goto done;
  }
  if (attnmeta_copy_to_host(b->ctx, out, k->out_d, (size_t)n * 4) ||
      attnmeta_copy_to_host(b->ctx, count, k->count_d, (size_t)k->T * 4)) {
    snprintf(why, why_size, "copy back: %s", attnmeta_last_error(b->ctx));
    goto done;
  }
  for (int t = 0; t < k->T; ++t) {
    int valid = 0;
    for (int j = 0; j < k->K; ++j) {
      const int32_t x = k->topk_h[s][(int64_t)t * k->K + j];
      const int64_t blk = x / TOPK_BLOCK;
      /* token t is request t; the case's positions are all inside the table */
      const int32_t want = x < 0 ? -1 : (int32_t)((int64_t)k->table_h[(int64_t)t * k->cols + blk] *
                                                   TOPK_BLOCK + x % TOPK_BLOCK);
      valid += want >= 0;
      if (out[(int64_t)t * k->K + j] != want) {
        snprintf(why, why_size, "out[%d][%d] = %d, want %d", t, j, out[(int64_t)t * k->K + j], want);
        goto done;
      }
    }
    if (b->bc->topk_counts ? count[t] != valid : count[t] != POISON) {
      snprintf(why, why_size, "valid_count[%d] = %d, want %d", t, count[t],
               b->bc->topk_counts ? valid : POISON);
      goto done;
    }
  }
  bad = 0;
done:
  free(out);
  free(count);
  return bad;
}

const bench_kind bench_topk_kind = {
    bench_topk_bytes, bench_topk_setup, bench_topk_enqueue,
    bench_topk_poison, bench_topk_check, bench_topk_free};
