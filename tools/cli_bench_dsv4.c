// SPDX-License-Identifier: Apache-2.0
/* attnmeta bench: the DeepSeek-V4 products of a DSV4 step case, added to
 * the part-1 step of every input set (cli_bench_buffers.c builds that):
 * the compressed slot mappings and lengths of the ratio-4 and ratio-128
 * groups, the SWA rows and lengths, and the C128A rows and lengths, all
 * over the step's block table, as bench/triton_dsv4.py sizes them. Their
 * device buffers, poisoning and check against a naive host computation. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_bench_parts.h"

#define C4_RATIO 4
#define C4_BLOCK 64 /* storage block: 256 / ratio */
#define C128_RATIO 128
#define C128_BLOCK 2
#define SWA_WINDOW 128
#define SWA_BLOCK 64
#define C128A_WIDTH 8192 /* a 1M-token context / 128 */

struct dsv4_bench {
  int64_t *c4_slots_d, *c128_slots_d;
  int32_t *c4_lens_d, *c128_lens_d, *swa_d, *swa_lens_d, *c128a_d, *c128a_lens_d;
};

double bench_dsv4_bytes(const bench_case *c) {
  const double T = bench_case_tokens(c) + c->pad, C = bench_case_capacity((int)T);
  const double R = c->num_reqs;
  /* every output written once (the tables' rows read are the step's) */
  return 2 * 8.0 * C + 2 * 4.0 * R + 4.0 * (T * SWA_WINDOW + C) + 4.0 * (T * C128A_WIDTH + C);
}

static int dalloc(case_run *b, void **p, int64_t bytes) {
  return bench_report(b->ctx, attnmeta_device_alloc(b->ctx, (size_t)(bytes > 0 ? bytes : 4), p),
                      "allocate");
}

void bench_dsv4_free(case_run *b) {
  struct dsv4_bench *d = b->dsv4;
  if (!d) return;
  void *dev[] = {d->c4_slots_d, d->c128_slots_d, d->c4_lens_d,   d->c128_lens_d,
                 d->swa_d,      d->swa_lens_d,   d->c128a_d,     d->c128a_lens_d};
  for (size_t i = 0; i < sizeof dev / sizeof dev[0]; ++i) attnmeta_device_free(b->ctx, dev[i]);
  free(d);
  b->dsv4 = NULL;
}

int bench_dsv4_setup(case_run *b) {
  struct dsv4_bench *d = calloc(1, sizeof *d);
  const int64_t T = b->T, C = b->C, R = b->R;
  b->dsv4 = d;
  if (!d) return 1;
  if (dalloc(b, (void **)&d->c4_slots_d, 8 * C) || dalloc(b, (void **)&d->c128_slots_d, 8 * C) ||
      dalloc(b, (void **)&d->c4_lens_d, 4 * R) || dalloc(b, (void **)&d->c128_lens_d, 4 * R) ||
      dalloc(b, (void **)&d->swa_d, 4 * T * SWA_WINDOW) ||
      dalloc(b, (void **)&d->swa_lens_d, 4 * C) ||
      dalloc(b, (void **)&d->c128a_d, 4 * T * C128A_WIDTH) ||
      dalloc(b, (void **)&d->c128a_lens_d, 4 * C))
    return 1;
  for (int s = 0; s < b->nsets; ++s) {
    attnmeta_step *st = &b->steps[s];
    attnmeta_compressed_group *g4 = &st->compressed_groups[0], *g128 = &st->compressed_groups[1];
    g4->block_table = g128->block_table = st->block_table;
    g4->block_table_cols = g128->block_table_cols = st->block_table_cols;
    g4->block_table_stride = g128->block_table_stride = st->block_table_stride;
    g4->ratio = C4_RATIO;
    g4->block_size = C4_BLOCK;
    g4->slot_mapping = d->c4_slots_d;
    g4->seq_lens_out = d->c4_lens_d;
    g128->ratio = C128_RATIO;
    g128->block_size = C128_BLOCK;
    g128->slot_mapping = d->c128_slots_d;
    g128->seq_lens_out = d->c128_lens_d;
    st->swa_block_table = st->block_table;
    st->swa_block_table_cols = st->block_table_cols;
    st->swa_block_table_stride = st->block_table_stride;
    st->swa_block_size = SWA_BLOCK;
    st->swa_window = st->swa_width = SWA_WINDOW;
    st->swa_mode = ATTNMETA_SWA_CAUSAL;
    st->swa_indices = d->swa_d;
    st->swa_indices_stride = SWA_WINDOW;
    st->swa_lens = d->swa_lens_d;
    st->c128a_block_table = st->block_table;
    st->c128a_block_table_cols = st->block_table_cols;
    st->c128a_block_table_stride = st->block_table_stride;
    st->c128a_ratio = C128_RATIO;
    st->c128a_block_size = C128_BLOCK;
    st->c128a_width = C128A_WIDTH;
    st->c128a_mode = ATTNMETA_C128A_GLOBAL;
    st->c128a_rows = d->c128a_d;
    st->c128a_rows_stride = C128A_WIDTH;
    st->c128a_lens = d->c128a_lens_d;
  }
  return 0;
}

static int poison_buffer(case_run *b, void *dev, int64_t bytes) {
  unsigned char *p;
  int rc;
  if (bytes <= 0) return 0;
  p = malloc((size_t)bytes);
  if (!p) return 1;
  memset(p, 0xA5, (size_t)bytes); /* POISON in every int32 */
  rc = bench_report(b->ctx, attnmeta_copy_to_device(b->ctx, dev, p, (size_t)bytes), "copy");
  free(p);
  return rc;
}

int bench_dsv4_poison(case_run *b) {
  struct dsv4_bench *d = b->dsv4;
  const int64_t T = b->T, C = b->C, R = b->R;
  return poison_buffer(b, d->c4_slots_d, 8 * C) || poison_buffer(b, d->c128_slots_d, 8 * C) ||
         poison_buffer(b, d->c4_lens_d, 4 * R) || poison_buffer(b, d->c128_lens_d, 4 * R) ||
         poison_buffer(b, d->swa_d, 4 * T * SWA_WINDOW) || poison_buffer(b, d->swa_lens_d, 4 * C) ||
         poison_buffer(b, d->c128a_d, 4 * T * C128A_WIDTH) ||
         poison_buffer(b, d->c128a_lens_d, 4 * C);
}

/* The naive values, from the host copies of set s's inputs. */
typedef struct dsv4_host {
  int64_t *c4, *c128;
  int32_t *c4_lens, *c128_lens, *swa, *swa_lens, *c128a, *c128a_lens;
} dsv4_host;

static int64_t compressed_slot(const int32_t *row, int64_t pos, int ratio, int bs) {
  if ((pos + 1) % ratio != 0) return -1;
  return (int64_t)row[(pos / ratio) / bs] * bs + (pos / ratio) % bs;
}

static int fetch(case_run *b, dsv4_host *h, char *why, size_t why_size) {
  struct dsv4_bench *d = b->dsv4;
  const size_t T = (size_t)b->T, C = (size_t)b->C, R = (size_t)b->R;
  h->c4 = malloc(8 * C + 8);
  h->c128 = malloc(8 * C + 8);
  h->c4_lens = malloc(4 * R + 4);
  h->c128_lens = malloc(4 * R + 4);
  h->swa = malloc(4 * T * SWA_WINDOW + 4);
  h->swa_lens = malloc(4 * C + 4);
  h->c128a = malloc(4 * T * C128A_WIDTH + 4);
  h->c128a_lens = malloc(4 * C + 4);
  if (!h->c4 || !h->c128 || !h->c4_lens || !h->c128_lens || !h->swa || !h->swa_lens ||
      !h->c128a || !h->c128a_lens) {
    snprintf(why, why_size, "out of host memory");
    return 1;
  }
  if ((C && (attnmeta_copy_to_host(b->ctx, h->c4, d->c4_slots_d, 8 * C) ||
             attnmeta_copy_to_host(b->ctx, h->c128, d->c128_slots_d, 8 * C) ||
             attnmeta_copy_to_host(b->ctx, h->swa_lens, d->swa_lens_d, 4 * C) ||
             attnmeta_copy_to_host(b->ctx, h->c128a_lens, d->c128a_lens_d, 4 * C))) ||
      (R && (attnmeta_copy_to_host(b->ctx, h->c4_lens, d->c4_lens_d, 4 * R) ||
             attnmeta_copy_to_host(b->ctx, h->c128_lens, d->c128_lens_d, 4 * R))) ||
      (T && (attnmeta_copy_to_host(b->ctx, h->swa, d->swa_d, 4 * T * SWA_WINDOW) ||
             attnmeta_copy_to_host(b->ctx, h->c128a, d->c128a_d, 4 * T * C128A_WIDTH)))) {
    snprintf(why, why_size, "copy back: %s", attnmeta_last_error(b->ctx));
    return 1;
  }
  return 0;
}

static void release(dsv4_host *h) {
  free(h->c4);
  free(h->c128);
  free(h->c4_lens);
  free(h->c128_lens);
  free(h->swa);
  free(h->swa_lens);
  free(h->c128a);
  free(h->c128a_lens);
}

/* One token's entries against the naive ones; 1 with a message when one differs. */
static int check_token(case_run *b, const dsv4_host *h, int s, int t, char *why, size_t why_size) {
  const int R = b->R, cols = b->cols, actual = b->actual;
  const int32_t *qsl = b->qsl_h;
  const int r = bench_req_of(qsl, R, t);
  const int valid = t < actual;
  const int32_t *row = b->table_h[s] + (int64_t)r * cols;
  const int64_t pos = valid ? (int64_t)b->seq_h[s][r] - (qsl[r + 1] - qsl[r]) + (t - qsl[r]) : 0;
  const int64_t want4 = valid ? compressed_slot(row, pos, C4_RATIO, C4_BLOCK) : -1;
  const int64_t want128 = valid ? compressed_slot(row, pos, C128_RATIO, C128_BLOCK) : -1;
  const int64_t start = pos - SWA_WINDOW + 1 > 0 ? pos - SWA_WINDOW + 1 : 0;
  const int32_t swa_len = valid ? (int32_t)(pos + 1 - start) : 0;
  const int64_t n128 = (pos + 1) / C128_RATIO;
  const int32_t c128a_len = valid ? (int32_t)(n128 < C128A_WIDTH ? n128 : C128A_WIDTH) : 0;
  if (h->c4[t] != want4 || h->c128[t] != want128) {
    snprintf(why, why_size, "compressed slot of token %d: ratio 4 %lld (want %lld), ratio 128 "
             "%lld (want %lld)", t, (long long)h->c4[t], (long long)want4,
             (long long)h->c128[t], (long long)want128);
    return 1;
  }
  if (h->swa_lens[t] != swa_len || h->c128a_lens[t] != c128a_len) {
    snprintf(why, why_size, "token %d: swa_lens %d (want %d), c128a_lens %d (want %d)", t,
             h->swa_lens[t], swa_len, h->c128a_lens[t], c128a_len);
    return 1;
  }
  for (int j = 0; j < SWA_WINDOW; ++j) {
    const int64_t q = start + j;
    const int32_t want = j < swa_len ? (int32_t)(row[q / SWA_BLOCK] * SWA_BLOCK + q % SWA_BLOCK) : -1;
    if (h->swa[(int64_t)t * SWA_WINDOW + j] != want) {
      snprintf(why, why_size, "swa_indices[%d][%d] = %d, want %d", t, j,
               h->swa[(int64_t)t * SWA_WINDOW + j], want);
      return 1;
    }
  }
  for (int j = 0; j < C128A_WIDTH; ++j) {
    const int32_t want = j < c128a_len ? row[j / C128_BLOCK] * C128_BLOCK + j % C128_BLOCK : -1;
    if (h->c128a[(int64_t)t * C128A_WIDTH + j] != want) {
      snprintf(why, why_size, "c128a_rows[%d][%d] = %d, want %d", t, j,
               h->c128a[(int64_t)t * C128A_WIDTH + j], want);
      return 1;
    }
  }
  return 0;
}

int bench_dsv4_check(case_run *b, int s, char *why, size_t why_size) {
  dsv4_host h;
  int bad = 1;
  memset(&h, 0, sizeof h);
  why[0] = '\0';
  if (fetch(b, &h, why, why_size)) goto out;
  for (int t = 0; t < b->T; ++t)
    if (check_token(b, &h, s, t, why, why_size)) goto out;
  for (int t = b->T; t < b->C; ++t) {
    if (h.c4[t] != -1 || h.c128[t] != -1 || h.swa_lens[t] != 0 || h.c128a_lens[t] != 0) {
      snprintf(why, why_size, "entry %d past T = %d of a capacity-long DSV4 output was not "
               "cleared", t, b->T);
      goto out;
    }
  }
  for (int r = 0; r < b->R; ++r) {
    const int32_t seq = b->seq_h[s][r] > 0 ? b->seq_h[s][r] : 0;
    if (h.c4_lens[r] != seq / C4_RATIO || h.c128_lens[r] != seq / C128_RATIO) {
      snprintf(why, why_size, "compressed seq_lens of request %d: %d and %d, want %d and %d", r,
               h.c4_lens[r], h.c128_lens[r], seq / C4_RATIO, seq / C128_RATIO);
      goto out;
    }
  }
  bad = 0;
out:
  release(&h);
  return bad;
}
