// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta topk: one layer's sparse top-k conversion (attnmeta_convert_topk)
 * on the default (or given) backend. T decode tokens, one a request, each
 * with K request-local positions drawn below its KV length (the last K/16
 * of each row "none"), over a block table of distinct random block ids.
 * Prints the shape, the first entries of the first row and of the counts,
 * the error word, whether the result matches a naive conversion on the
 * host, and the timing.
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

#define CMD "attnmeta topk"
#define MAX_ENTRIES (INT64_C(1) << 28)

typedef struct topk_shape {
  int tokens, k, cols, block_size, dcp_world, dcp_rank, dcp_interleave, compact, seed;
  int peer_blocks; /* 0, or a rank's segment of a DCP peer view (contract 6c) */
} topk_shape;

typedef struct topk_host {
  int32_t *topk, *table, *qsl, *out, *count;
  void *d_topk, *d_table, *d_qsl, *d_out, *d_count, *d_error;
} topk_host;

/* What the command's hooks share (cli_op's state). */
typedef struct topk_cmd {
  topk_shape s;
  topk_host h;
  attnmeta_topk op;
} topk_cmd;

static void usage(FILE *out) {
  fprintf(out,
          "usage: attnmeta topk [--backend B] [--device N] [--iters N] [--show N] [options]\n"
          "Converts one layer's top-k indices to global KV slots in one\n"
          "attnmeta_convert_topk call (T decode tokens, one a request), prints the shape,\n"
          "the first entries of row 0 and of the counts, the error word, the check against\n"
          "a naive conversion on the host, and the time of the first call and of N more.\n"
          "  --backend B         auto (default; $ATTNMETA_BACKEND overrides), cpu, cuda, hip\n"
          "  --device N          device index (default 0)\n"
          "  --iters N           timed calls after the first, 0 .. %d (default 1000)\n"
          "  --show N            entries shown, 1 .. 64 (default 8)\n"
          "  --tokens T          decode tokens, one a request (default 64)\n"
          "  --topk K            indices of each token (default 2048)\n"
          "  --cols N            block-table columns of each request (default 1024)\n"
          "  --block-size N      KV positions per block (default 64)\n"
          "  --dcp-world W       decode context parallelism: ranks (default 1)\n"
          "  --dcp-rank K        this rank, < W (default 0)\n"
          "  --dcp-interleave I  positions a rank owns in a row (default 1)\n"
          "  --compact           each row's valid slots first, then -1\n"
          "  --peer-blocks S     a DCP peer view of S blocks a rank: every rank's entries\n"
          "                      become rank-major peer slots (default 0: none)\n"
          "  --seed N            seed of the drawn indices (default 7)\n"
          "Exits 1 when the error word is not 0, the result differs from the naive\n"
          "conversion, or a call fails.\n" CLI_EXIT_STATUS_HELP,
          CLI_MAX_ITERS);
}

/* The naive conversion of entry x of a decode token of request r (contract
 * section 6, steps 1 and 3 to 6, and 6c with a peer view; no prefill, no
 * token slots). */
static int32_t naive_slot(const topk_shape *s, const int32_t *row, int32_t x) {
  const int64_t W = s->dcp_world, I = s->dcp_interleave, S = s->peer_blocks;
  int64_t l, blk, v;
  if (x < 0) return -1;
  if (S == 0 && (x / I) % W != s->dcp_rank) return -1;
  l = (x / (W * I)) * I + x % I;
  blk = l / s->block_size;
  if (blk >= s->cols || row[blk] < 0 || (S > 0 && row[blk] >= S)) return -1;
  v = ((x / I) % W * S + row[blk]) * s->block_size + l % s->block_size;
  return v > INT32_MAX ? -1 : (int32_t)v;
}

/* Rows that differ from the naive conversion (with counts and compaction). */
static int64_t count_mismatches(const topk_shape *s, const topk_host *h) {
  int64_t bad = 0;
  int32_t *want = malloc((size_t)s->k * sizeof *want);
  if (!want) return -1;
  for (int t = 0; t < s->tokens; ++t) {
    const int32_t *row = h->table + (int64_t)t * s->cols;
    int n = 0;
    for (int j = 0; j < s->k; ++j) want[j] = -1;
    for (int j = 0; j < s->k; ++j) {
      const int32_t v = naive_slot(s, row, h->topk[(int64_t)t * s->k + j]);
      if (s->compact) {
        if (v >= 0) want[n++] = v;
      } else {
        want[j] = v;
        n += v >= 0;
      }
    }
    if (memcmp(want, h->out + (int64_t)t * s->k, (size_t)s->k * sizeof *want) != 0 ||
        h->count[t] != n)
      ++bad;
  }
  free(want);
  return bad;
}

static int call(attnmeta_context *ctx, attnmeta_status st, const char *what) {
  return cli_call(CMD, ctx, st, what);
}

/* Draws the inputs and puts them, and room for the outputs, on the device. */
static int setup(attnmeta_context *ctx, void *state) {
  const topk_shape *s = &((topk_cmd *)state)->s;
  topk_host *h = &((topk_cmd *)state)->h;
  attnmeta_topk *op = &((topk_cmd *)state)->op;
  const int64_t entries = (int64_t)s->tokens * s->k, cells = (int64_t)s->tokens * s->cols;
  const int32_t zero = 0;
  uint32_t seed = (uint32_t)s->seed;
  h->topk = malloc((size_t)(entries ? entries : 1) * 4);
  h->out = malloc((size_t)(entries ? entries : 1) * 4);
  h->table = malloc((size_t)(cells ? cells : 1) * 4);
  h->qsl = malloc((size_t)(s->tokens + 1) * 4);
  h->count = malloc((size_t)(s->tokens ? s->tokens : 1) * 4);
  if (!h->topk || !h->out || !h->table || !h->qsl || !h->count) {
    fprintf(stderr, CMD ": out of host memory\n");
    return -1;
  }
  for (int t = 0; t <= s->tokens; ++t) h->qsl[t] = t;
  for (int64_t i = 0; i < cells; ++i) /* ids within a peer view's segment */
    h->table[i] = (int32_t)(cli_lcg(&seed) % (s->peer_blocks ? (uint32_t)s->peer_blocks : 1u << 20));
  {
    /* a request's KV length: within what its table holds on every rank */
    const int64_t room = (int64_t)s->cols * s->block_size * s->dcp_world;
    const int64_t most = room < INT32_MAX ? room : INT32_MAX;
    for (int t = 0; t < s->tokens; ++t) {
      const uint32_t len = (uint32_t)(most / 2 + cli_lcg(&seed) % (uint32_t)(most - most / 2));
      for (int j = 0; j < s->k; ++j)
        h->topk[(int64_t)t * s->k + j] =
            j >= s->k - s->k / 16 ? -1 : (int32_t)(len ? cli_lcg(&seed) % len : 0);
    }
  }
  if (cli_upload(CMD, ctx, &h->d_topk, h->topk, (size_t)entries * 4) ||
      cli_upload(CMD, ctx, &h->d_table, h->table, (size_t)cells * 4) ||
      cli_upload(CMD, ctx, &h->d_qsl, h->qsl, (size_t)(s->tokens + 1) * 4) ||
      cli_upload(CMD, ctx, &h->d_out, NULL, (size_t)entries * 4) ||
      cli_upload(CMD, ctx, &h->d_count, NULL, (size_t)s->tokens * 4) ||
      cli_upload(CMD, ctx, &h->d_error, &zero, sizeof zero))
    return -1;
  attnmeta_topk_init(op);
  op->topk = h->d_topk;
  op->topk_stride = s->k;
  op->num_tokens = s->tokens;
  op->topk_count = s->k;
  op->query_start_loc = h->d_qsl;
  op->num_reqs = s->tokens;
  op->block_table = h->d_table;
  op->block_table_cols = s->cols;
  op->block_table_stride = s->cols;
  op->block_size = s->block_size;
  op->dcp_world_size = s->dcp_world;
  op->dcp_rank = s->dcp_rank;
  op->dcp_interleave = s->dcp_interleave;
  op->peer_blocks = s->peer_blocks;
  op->out = h->d_out;
  op->out_stride = s->k;
  op->valid_count = h->d_count;
  op->compact = s->compact;
  op->error_word = h->d_error;
  return 0;
}

static void teardown(attnmeta_context *ctx, void *state) {
  topk_host *h = &((topk_cmd *)state)->h;
  if (ctx) {
    attnmeta_device_free(ctx, h->d_topk);
    attnmeta_device_free(ctx, h->d_table);
    attnmeta_device_free(ctx, h->d_qsl);
    attnmeta_device_free(ctx, h->d_out);
    attnmeta_device_free(ctx, h->d_count);
    attnmeta_device_free(ctx, h->d_error);
  }
  free(h->topk);
  free(h->table);
  free(h->qsl);
  free(h->out);
  free(h->count);
}

/* The options of this command (cli_parse_shape). */
static const cli_int_option shape_options[] = {
    {"--tokens", offsetof(topk_shape, tokens), 0, 1 << 20, 0},
    {"--topk", offsetof(topk_shape, k), 1, 1 << 16, 0},
    {"--cols", offsetof(topk_shape, cols), 0, 1 << 20, 0},
    {"--block-size", offsetof(topk_shape, block_size), 1, 1 << 20, 0},
    {"--dcp-world", offsetof(topk_shape, dcp_world), 1, 1 << 16, 0},
    {"--dcp-rank", offsetof(topk_shape, dcp_rank), 0, (1 << 16) - 1, 0},
    {"--dcp-interleave", offsetof(topk_shape, dcp_interleave), 1, 1 << 20, 0},
    {"--seed", offsetof(topk_shape, seed), 0, 0x7fffffff, 0},
    {"--peer-blocks", offsetof(topk_shape, peer_blocks), 0, 1 << 30, 0},
    {"--compact", offsetof(topk_shape, compact), 0, 1, 1},
};

/* One timed call of the conversion. */
static int issue_topk(attnmeta_context *ctx, void *op) {
  return call(ctx, attnmeta_convert_topk(ctx, (const attnmeta_topk *)op, NULL), "convert");
}

/* The outputs and the error word back, the report, the naive check. */
static int report(attnmeta_context *ctx, void *state, int show) {
  const topk_shape *s = &((topk_cmd *)state)->s;
  topk_host *h = &((topk_cmd *)state)->h;
  int32_t error_word = 0;
  int64_t bad_rows;
  if (call(ctx, attnmeta_copy_to_host(ctx, h->out, h->d_out, (size_t)s->tokens * s->k * 4), "copy back") ||
      call(ctx, attnmeta_copy_to_host(ctx, h->count, h->d_count, (size_t)s->tokens * 4), "copy back") ||
      call(ctx, attnmeta_copy_to_host(ctx, &error_word, h->d_error, sizeof error_word), "copy back"))
    return -1;

  cli_print_banner(CMD, ctx);
  printf("shape:\n");
  printf("  %-18s %d (one a request)\n", "tokens", s->tokens);
  printf("  %-18s %d a token, the last %d none\n", "indices", s->k, s->k / 16);
  printf("  %-18s %d %s, block size %d\n", "block table", s->cols, s->cols == 1 ? "column" : "columns",
         s->block_size);
  printf("  %-18s world %d, rank %d, interleave %d\n", "DCP", s->dcp_world, s->dcp_rank,
         s->dcp_interleave);
  if (s->peer_blocks)
    printf("  %-18s %d blocks a rank (rank-major peer slots)\n", "peer view", s->peer_blocks);
  printf("  %-18s %s\n", "rows", s->compact ? "compacted (valid slots first)" : "in place");
  printf("outputs (first call):\n");
  printf("  %-16s int32[%d][%d]  row 0: ", "out", s->tokens, s->k);
  cli_print_int32s(h->out, s->tokens ? s->k : 0, show);
  printf("  %-16s int32[%d]       ", "valid_count", s->tokens);
  cli_print_int32s(h->count, s->tokens, show);
  cli_print_error_word(error_word);
  bad_rows = count_mismatches(s, h);
  if (bad_rows < 0) {
    fprintf(stderr, CMD ": out of host memory for the check\n");
    return CLI_EXIT_USAGE;
  }
  if (bad_rows)
    printf("check:\n  %lld of %d %s differ from the naive conversion\n", (long long)bad_rows,
           s->tokens, s->tokens == 1 ? "row" : "rows");
  else
    printf("check:\n  every row matches the naive conversion\n");
  return error_word != 0 || bad_rows ? CLI_EXIT_FAILED : CLI_EXIT_OK;
}

int cli_topk(int argc, char **argv) {
  topk_cmd c;
  const cli_op op = {CMD, "call", &c, &c.op, setup, issue_topk, report, teardown};
  cli_run_options ro = {ATTNMETA_BACKEND_AUTO, 0, 1000, 8};
  cli_args a;
  int stop;
  memset(&c, 0, sizeof c);
  c.s = (topk_shape){64, 2048, 1024, 64, 1, 0, 1, 0, 7, 0};
  cli_args_init(&a, CMD, argc, argv);
  stop = cli_parse_shape(&a, usage, &ro, shape_options,
                         sizeof shape_options / sizeof shape_options[0], &c.s);
  if (stop >= 0) return stop;
  if (c.s.dcp_rank >= c.s.dcp_world) {
    fprintf(stderr, CMD ": --dcp-rank %d must be below --dcp-world %d\n", c.s.dcp_rank,
            c.s.dcp_world);
    return CLI_EXIT_USAGE;
  }
  if ((int64_t)c.s.tokens * c.s.k > MAX_ENTRIES || (int64_t)c.s.tokens * c.s.cols > MAX_ENTRIES) {
    fprintf(stderr, CMD ": %d tokens x %d indices (or x %d columns) is more than 2^28 entries\n",
            c.s.tokens, c.s.k, c.s.cols);
    return CLI_EXIT_USAGE;
  }
  return cli_run_op(&op, &ro);
}
