// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta pool: one SGLang decode metadata build (attnmeta_build_pool_indices,
 * contract sections 12 and 13) on the default (or given) backend. B requests
 * of ctx/2 to ctx tokens in a request pool whose row 0 is reserved, pool
 * rows a random permutation of 1..B: cache_seqlens, cu_seqlens_k and the
 * page table (FA3), with --topk the DSA lengths clipped to the top-k and
 * their prefix sum, with --token-table page_table_1, with --next-n N > 1
 * target verify's N rows a request. Prints the shape, the first entries of
 * each output, the error word, whether the result matches a naive build on
 * the host, and the timing.
 */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "cli.h"
#include "cli_options.h"

#define CMD "attnmeta pool"
#define MAX_ENTRIES (INT64_C(1) << 28)

typedef struct pool_shape {
  int reqs, ctx, page_size, topk, next_n, token_table, seed;
} pool_shape;

/* The outputs, in this order. */
enum { O_LENS, O_CU, O_PAGES, O_TOPK_LENS, O_TOPK_CU, O_EXPANDED, O_TOKENS, O_COUNT };
static const char *const out_names[O_COUNT] = {"cache_seqlens", "cu_seqlens_k", "page_table",
                                               "topk_lens",     "topk_indptr",  "expanded_lens",
                                               "token_table"};

typedef struct pool_host {
  int64_t rows, pages, n[O_COUNT]; /* T, page-table width, entries of each output */
  int32_t *pool, *out[O_COUNT], *want[O_COUNT];
  int64_t *rpi, *lens;
  void *d_pool, *d_rpi, *d_lens, *d_out[O_COUNT], *d_error;
} pool_host;

/* What the command's hooks share (cli_op's state). */
typedef struct pool_cmd {
  pool_shape s;
  pool_host h;
  attnmeta_pool op;
} pool_cmd;

static void usage(FILE *out) {
  fprintf(out,
          "usage: attnmeta pool [--backend B] [--device N] [--iters N] [--show N] [options]\n"
          "Builds one SGLang decode step's metadata from its request pool in one\n"
          "attnmeta_build_pool_indices call: cache_seqlens, cu_seqlens_k and the page table\n"
          "(FA3), the DSA top-k lengths and their prefix sum, page_table_1, target verify's\n"
          "rows; prints the first entries of each, the error word, the check against a\n"
          "naive build on the host, and the time of the first call and of N more.\n"
          "  --backend B         auto (default; $ATTNMETA_BACKEND overrides), cpu, cuda, hip\n"
          "  --device N          device index (default 0)\n"
          "  --iters N           timed calls after the first, 0 .. %d (default 1000)\n"
          "  --show N            entries shown, 1 .. 64 (default 8)\n"
          "  --reqs B            requests (default 64)\n"
          "  --ctx N             tokens of the longest request (default 4096)\n"
          "  --page-size N       tokens a page of the page table (default 64)\n"
          "  --topk K            DSA: lengths clipped to K and their prefix sum (0: none;\n"
          "                      default 0)\n"
          "  --next-n N          target verify: N rows a request (default 1: decode)\n"
          "  --token-table       DSA's page_table_1 too\n"
          "  --seed N            seed of the drawn pool and lengths (default 7)\n"
          "Exits 1 when the error word is not 0, the result differs from the naive build,\n"
          "or a call fails.\n" CLI_EXIT_STATUS_HELP,
          CLI_MAX_ITERS);
}

static int wanted(const pool_shape *s, int o) {
  if (o == O_TOPK_LENS || o == O_TOPK_CU) return s->topk > 0;
  if (o == O_EXPANDED) return s->next_n > 1;
  if (o == O_TOKENS) return s->token_table;
  return 1;
}

/* The naive build (contract sections 12 and 13), row by row. */
static void naive(const pool_shape *s, pool_host *h) {
  const int N = s->next_n, cols = s->ctx + 1;
  int64_t cu = 0, tcu = 0;
  h->want[O_CU][0] = 0;
  if (h->want[O_TOPK_CU]) h->want[O_TOPK_CU][0] = 0;
  for (int b = 0; b < s->reqs; ++b) {
    const int32_t L = (int32_t)h->lens[b] + (N > 1 ? N : 0); /* verify: the drafts too */
    const int32_t *row = h->pool + h->rpi[b] * cols;
    h->want[O_LENS][b] = L;
    cu += L;
    h->want[O_CU][b + 1] = (int32_t)cu;
    for (int j = 0; j < N; ++j) {
      const int64_t e = (int64_t)b * N + j, seen = L - N + j + 1;
      int64_t p, c;
      if (h->want[O_EXPANDED]) h->want[O_EXPANDED][e] = (int32_t)seen;
      if (h->want[O_TOPK_LENS]) {
        const int64_t k = seen < s->topk ? seen : s->topk;
        h->want[O_TOPK_LENS][e] = (int32_t)k;
        tcu += k;
        h->want[O_TOPK_CU][e + 1] = (int32_t)tcu;
      }
      for (p = 0; p * s->page_size < L; ++p)
        h->want[O_PAGES][e * h->pages + p] = row[p * s->page_size] / s->page_size;
      if (h->want[O_TOKENS])
        for (c = 0; c < L; ++c) h->want[O_TOKENS][e * cols + c] = row[c];
    }
  }
}

static int call(attnmeta_context *ctx, attnmeta_status st, const char *what) {
  return cli_call(CMD, ctx, st, what);
}

/* Draws the inputs and puts them, and the poisoned outputs, on the device. */
static int setup(attnmeta_context *ctx, void *state) {
  const pool_shape *s = &((pool_cmd *)state)->s;
  pool_host *h = &((pool_cmd *)state)->h;
  attnmeta_pool *op = &((pool_cmd *)state)->op;
  const int64_t P = (int64_t)s->reqs + 1, cols = (int64_t)s->ctx + 1;
  const int32_t zero = 0;
  uint32_t seed = (uint32_t)s->seed;
  h->rows = (int64_t)s->reqs * s->next_n;
  h->pages = (s->ctx + s->next_n + s->page_size - 1) / s->page_size;
  h->n[O_LENS] = s->reqs;
  h->n[O_CU] = s->reqs + 1;
  h->n[O_PAGES] = h->rows * h->pages;
  h->n[O_TOPK_LENS] = h->rows;
  h->n[O_TOPK_CU] = h->rows + 1;
  h->n[O_EXPANDED] = h->rows;
  h->n[O_TOKENS] = h->rows * cols;
  h->pool = malloc((size_t)(P * cols) * 4);
  h->rpi = malloc((size_t)(s->reqs + 1) * 8);
  h->lens = malloc((size_t)(s->reqs + 1) * 8);
  if (!h->pool || !h->rpi || !h->lens) goto no_memory;
  for (int o = 0; o < O_COUNT; ++o) {
    if (!wanted(s, o)) continue;
    h->out[o] = malloc((size_t)(h->n[o] + 1) * 4);
    h->want[o] = malloc((size_t)(h->n[o] + 1) * 4);
    if (!h->out[o] || !h->want[o]) goto no_memory;
    for (int64_t i = 0; i < h->n[o]; ++i) h->want[o][i] = -7;
  }
  for (int64_t i = 0; i < P * cols; ++i) h->pool[i] = i < cols ? 0 : (int32_t)(cli_lcg(&seed) % (1u << 22));
  for (int b = 0; b < s->reqs; ++b) {
    const int j = (int)(cli_lcg(&seed) % (uint32_t)(b + 1)); /* a random permutation of 1..B */
    h->rpi[b] = h->rpi[j];
    h->rpi[j] = b + 1;
    h->lens[b] = s->ctx / 2 + (int64_t)(cli_lcg(&seed) % (uint32_t)(s->ctx - s->ctx / 2 + 1));
  }
  if (s->next_n > 1) /* verify's seq_lens exclude the drafts; they fit the pool row */
    for (int b = 0; b < s->reqs; ++b)
      if (h->lens[b] + s->next_n > cols) h->lens[b] = cols - s->next_n;
  if (cli_upload(CMD, ctx, &h->d_pool, h->pool, (size_t)(P * cols) * 4) ||
      cli_upload(CMD, ctx, &h->d_rpi, h->rpi, (size_t)s->reqs * 8) ||
      cli_upload(CMD, ctx, &h->d_lens, h->lens, (size_t)s->reqs * 8) ||
      cli_upload(CMD, ctx, &h->d_error, &zero, sizeof zero))
    return -1;
  for (int o = 0; o < O_COUNT; ++o)
    if (h->want[o] && cli_upload(CMD, ctx, &h->d_out[o], h->want[o], (size_t)h->n[o] * 4))
      return -1;
  attnmeta_pool_init(op);
  op->req_to_token = h->d_pool;
  op->req_to_token_stride = cols;
  op->pool_rows = (int32_t)P;
  op->pool_cols = (int32_t)cols;
  op->req_pool_indices = h->d_rpi;
  op->lengths = h->d_lens;
  op->num_reqs = s->reqs;
  op->page_size = s->page_size;
  op->length_delta = s->next_n > 1 ? s->next_n : 0;
  op->rows_per_req = s->next_n;
  op->cache_seqlens = h->d_out[O_LENS];
  op->kv_indptr_out = h->d_out[O_CU];
  op->page_table = h->d_out[O_PAGES];
  op->page_table_width = (int32_t)h->pages;
  op->page_table_stride = h->pages;
  op->topk_lens = h->d_out[O_TOPK_LENS];
  op->topk_indptr = h->d_out[O_TOPK_CU];
  op->topk = s->topk;
  op->expanded_lens = h->d_out[O_EXPANDED];
  op->token_table = h->d_out[O_TOKENS];
  op->token_table_width = s->token_table ? (int32_t)cols : 0;
  op->token_table_stride = s->token_table ? cols : 0;
  op->error_word = h->d_error;
  return 0;
no_memory:
  fprintf(stderr, CMD ": out of host memory\n");
  return -1;
}

static void teardown(attnmeta_context *ctx, void *state) {
  pool_host *h = &((pool_cmd *)state)->h;
  if (ctx) {
    attnmeta_device_free(ctx, h->d_pool);
    attnmeta_device_free(ctx, h->d_rpi);
    attnmeta_device_free(ctx, h->d_lens);
    attnmeta_device_free(ctx, h->d_error);
    for (int o = 0; o < O_COUNT; ++o) attnmeta_device_free(ctx, h->d_out[o]);
  }
  free(h->pool);
  free(h->rpi);
  free(h->lens);
  for (int o = 0; o < O_COUNT; ++o) {
    free(h->out[o]);
    free(h->want[o]);
  }
}

/* The options of this command (cli_parse_shape). */
static const cli_int_option shape_options[] = {
    {"--reqs", offsetof(pool_shape, reqs), 0, 1 << 20, 0},
    {"--ctx", offsetof(pool_shape, ctx), 1, 1 << 24, 0},
    {"--page-size", offsetof(pool_shape, page_size), 1, 1 << 16, 0},
    {"--topk", offsetof(pool_shape, topk), 0, 1 << 20, 0},
    {"--next-n", offsetof(pool_shape, next_n), 1, 64, 0},
    {"--seed", offsetof(pool_shape, seed), 0, 0x7fffffff, 0},
    {"--token-table", offsetof(pool_shape, token_table), 0, 1, 1},
};

static int issue_pool(attnmeta_context *ctx, void *op) {
  return call(ctx, attnmeta_build_pool_indices(ctx, (const attnmeta_pool *)op, NULL), "build");
}

/* The outputs and the error word back, the naive build, the report. */
static int report(attnmeta_context *ctx, void *state, int show) {
  const pool_shape *s = &((pool_cmd *)state)->s;
  pool_host *h = &((pool_cmd *)state)->h;
  int32_t error_word = 0;
  int bad = 0;
  for (int o = 0; o < O_COUNT; ++o)
    if (h->out[o] &&
        call(ctx, attnmeta_copy_to_host(ctx, h->out[o], h->d_out[o], (size_t)h->n[o] * 4),
             "copy back"))
      return -1;
  if (call(ctx, attnmeta_copy_to_host(ctx, &error_word, h->d_error, sizeof error_word), "copy back"))
    return -1;
  naive(s, h);

  cli_print_banner(CMD, ctx);
  printf("shape:\n");
  printf("  %-18s %d of %d to %d tokens, pool rows 1..%d (row 0 reserved)\n", "requests", s->reqs,
         s->ctx / 2, s->ctx, s->reqs);
  printf("  %-18s %d a request%s\n", "rows", s->next_n, s->next_n > 1 ? " (target verify)" : "");
  printf("  %-18s %lld pages of %d tokens\n", "page table", (long long)h->pages, s->page_size);
  if (s->topk) printf("  %-18s %d\n", "top-k", s->topk);
  printf("outputs (first call):\n");
  for (int o = 0; o < O_COUNT; ++o) {
    if (!h->out[o]) continue;
    printf("  %-16s int32[%lld]  ", out_names[o], (long long)h->n[o]);
    cli_print_int32s(h->out[o], h->n[o], show);
  }
  cli_print_error_word(error_word);
  printf("check:\n");
  for (int o = 0; o < O_COUNT; ++o)
    if (h->out[o] && memcmp(h->out[o], h->want[o], (size_t)h->n[o] * 4) != 0) {
      printf("  %s differs from the naive build\n", out_names[o]);
      bad = 1;
    }
  if (!bad) printf("  every output matches the naive build\n");
  return error_word != 0 || bad ? CLI_EXIT_FAILED : CLI_EXIT_OK;
}

int cli_pool(int argc, char **argv) {
  pool_cmd c;
  const cli_op op = {CMD, "call", &c, &c.op, setup, issue_pool, report, teardown};
  cli_run_options ro = {ATTNMETA_BACKEND_AUTO, 0, 1000, 8};
  cli_args a;
  int stop;
  memset(&c, 0, sizeof c);
  c.s = (pool_shape){64, 4096, 64, 0, 1, 0, 7};
  cli_args_init(&a, CMD, argc, argv);
  stop = cli_parse_shape(&a, usage, &ro, shape_options,
                         sizeof shape_options / sizeof shape_options[0], &c.s);
  if (stop >= 0) return stop;
  if ((int64_t)c.s.reqs * c.s.next_n * (c.s.token_table ? (int64_t)c.s.ctx + 1 : 1) > MAX_ENTRIES ||
      ((int64_t)c.s.reqs + 1) * ((int64_t)c.s.ctx + 1) > MAX_ENTRIES) {
    fprintf(stderr, CMD ": %d requests of %d tokens is more than 2^28 entries\n", c.s.reqs,
            c.s.ctx);
    return CLI_EXIT_USAGE;
  }
  return cli_run_op(&op, &ro);
}
