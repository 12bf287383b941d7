/*
 * attnmeta step: one realistic decode step, built on the default (or given)
 * backend: 64 requests with 1 to 4 speculative tokens each, KV lengths of a
 * few thousand tokens, a 512-column block table (block size 64), padded to a
 * graph size of 256 tokens. Prints what it built and how long it took.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnmeta/attnmeta.h"
#include "cli.h"
#include "cli_options.h"

enum { REQS = 64, COLS = 512, BLOCK = 64, PADDED = 256, CAPACITY = 512 };

typedef struct buffers {
  int32_t *qsl, *seq_lens, *table, *token_to_req, *seq_out, *table_out, *decode_lens, *indices,
      *per_req, *error_word;
  int64_t *positions, *slots;
} buffers;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int check(attnmeta_context *ctx, attnmeta_status st, const char *what) {
  if (st == ATTNMETA_OK) return 0;
  fprintf(stderr, "attnmeta step: %s: %s: %s\n", what, attnmeta_status_string(st),
          ctx ? attnmeta_last_error(ctx) : attnmeta_open_error());
  return 1;
}

static void print_row32(const char *name, const int32_t *v, int n, int shown) {
  printf("  %-16s [", name);
  for (int i = 0; i < n && i < shown; ++i) printf("%s%d", i ? ", " : "", v[i]);
  printf("%s]\n", n > shown ? ", ..." : "");
}

static void print_row64(const char *name, const int64_t *v, int n, int shown) {
  printf("  %-16s [", name);
  for (int i = 0; i < n && i < shown; ++i) printf("%s%lld", i ? ", " : "", (long long)v[i]);
  printf("%s]\n", n > shown ? ", ..." : "");
}

/* Allocates every device buffer; returns non-zero on failure. */
static int alloc_all(attnmeta_context *ctx, buffers *d) {
  struct {
    void **ptr;
    size_t bytes;
  } want[] = {
      {(void **)&d->qsl, (REQS + 1) * 4},           {(void **)&d->seq_lens, REQS * 4},
      {(void **)&d->table, (size_t)REQS * COLS * 4}, {(void **)&d->token_to_req, PADDED * 4},
      {(void **)&d->seq_out, CAPACITY * 4},          {(void **)&d->table_out, (size_t)PADDED * COLS * 4},
      {(void **)&d->decode_lens, PADDED * 4},        {(void **)&d->indices, PADDED * 4},
      {(void **)&d->per_req, REQS * 4},              {(void **)&d->error_word, 4},
      {(void **)&d->positions, PADDED * 8},          {(void **)&d->slots, CAPACITY * 8},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i)
    if (check(ctx, attnmeta_device_alloc(ctx, want[i].bytes, want[i].ptr), "allocate")) return 1;
  return 0;
}

static void free_all(attnmeta_context *ctx, buffers *d) {
  void *all[] = {d->qsl,     d->seq_lens, d->table,   d->token_to_req, d->seq_out, d->table_out,
                 d->decode_lens, d->indices, d->per_req, d->error_word, d->positions, d->slots};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) attnmeta_device_free(ctx, all[i]);
}

int cli_step(int argc, char **argv) {
  attnmeta_backend kind = ATTNMETA_BACKEND_AUTO;
  int device = 0, iters = 1000, rc = 1;
  attnmeta_context *ctx = NULL;
  buffers d;
  attnmeta_step step;
  static int32_t qsl[REQS + 1], seq_lens[REQS], table[REQS * COLS], out[PADDED];
  static int64_t out64[PADDED];
  int32_t zero = 0, error_word = 0;
  uint32_t seed = 12345;

  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
      if (cli_parse_backend(argv[++i], &kind)) {
        fprintf(stderr, "attnmeta step: unknown backend '%s'\n", argv[i]);
        return 2;
      }
    } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
      device = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
      iters = atoi(argv[++i]);
      if (iters < 1) iters = 1;
    } else {
      fprintf(stderr, "attnmeta step: unknown option '%s'\n", argv[i]);
      return 2;
    }
  }

  qsl[0] = 0;
  for (int r = 0; r < REQS; ++r) {
    seed = seed * 1103515245u + 12345u;
    const int qlen = 1 + (int)((seed >> 16) % 4);
    qsl[r + 1] = qsl[r] + qlen;
    seq_lens[r] = 1000 + (int)((seed >> 8) % 7000) + qlen;
    for (int c = 0; c < COLS; ++c) table[r * COLS + c] = r * COLS + c;
  }

  if (check(NULL, attnmeta_open(&ctx, kind, device), "open")) return 1;
  memset(&d, 0, sizeof d);
  if (alloc_all(ctx, &d)) goto done;
  if (check(ctx, attnmeta_copy_to_device(ctx, d.qsl, qsl, sizeof qsl), "copy") ||
      check(ctx, attnmeta_copy_to_device(ctx, d.seq_lens, seq_lens, sizeof seq_lens), "copy") ||
      check(ctx, attnmeta_copy_to_device(ctx, d.table, table, sizeof table), "copy") ||
      check(ctx, attnmeta_copy_to_device(ctx, d.error_word, &zero, 4), "copy"))
    goto done;

  attnmeta_step_init(&step);
  step.query_start_loc = d.qsl;
  step.num_reqs = REQS;
  step.num_tokens = PADDED;
  step.capacity = CAPACITY;
  step.seq_lens = d.seq_lens;
  step.block_table = d.table;
  step.block_table_cols = COLS;
  step.block_table_stride = COLS;
  step.block_size = BLOCK;
  step.token_to_req = d.token_to_req;
  step.seq_lens_out = d.seq_out;
  step.block_table_out = d.table_out;
  step.block_table_out_stride = COLS;
  step.decode_lens_out = d.decode_lens;
  step.req_indices_out = d.indices;
  step.per_req_lens_out = d.per_req;
  step.positions = d.positions;
  step.slot_mapping = d.slots;
  step.error_word = d.error_word;

  double t0 = now_us();
  if (check(ctx, attnmeta_build_step(ctx, &step, NULL), "build step") ||
      check(ctx, attnmeta_synchronize(ctx, NULL), "synchronize"))
    goto done;
  double first = now_us() - t0;
  t0 = now_us();
  for (int i = 0; i < iters; ++i)
    if (check(ctx, attnmeta_build_step(ctx, &step, NULL), "build step")) goto done;
  double issued = now_us() - t0;
  if (check(ctx, attnmeta_synchronize(ctx, NULL), "synchronize")) goto done;
  double total = now_us() - t0;

  printf("attnmeta step on %s (%s)\n", attnmeta_backend_name(attnmeta_context_backend(ctx)),
         attnmeta_context_device_name(ctx));
  printf("  %d requests, %d real tokens padded to %d, capacity %d, %d-column block table, "
         "block size %d\n",
         REQS, qsl[REQS], PADDED, CAPACITY, COLS, BLOCK);
  if (check(ctx, attnmeta_copy_to_host(ctx, out, d.token_to_req, sizeof out), "copy")) goto done;
  print_row32("token_to_req", out, PADDED, 12);
  if (check(ctx, attnmeta_copy_to_host(ctx, out, d.seq_out, sizeof out), "copy")) goto done;
  print_row32("seq_lens_out", out, PADDED, 12);
  if (check(ctx, attnmeta_copy_to_host(ctx, out, d.indices, sizeof out), "copy")) goto done;
  print_row32("req_indices", out + qsl[REQS] - 4, PADDED - qsl[REQS] + 4, 8);
  if (check(ctx, attnmeta_copy_to_host(ctx, out64, d.positions, sizeof out64), "copy")) goto done;
  print_row64("positions", out64, PADDED, 8);
  if (check(ctx, attnmeta_copy_to_host(ctx, out64, d.slots, sizeof out64), "copy")) goto done;
  print_row64("slot_mapping", out64, PADDED, 8);
  if (check(ctx, attnmeta_copy_to_host(ctx, &error_word, d.error_word, 4), "copy")) goto done;
  char flags[256];
  attnmeta_error_flags_describe(error_word, flags, sizeof flags);
  printf("  error word       0x%x (%s)\n", (unsigned)error_word, flags);
  printf("  first call (with synchronize): %.1f us\n", first);
  printf("  %d calls: %.2f us host time per call to issue, %.2f us per step to complete\n", iters,
         issued / iters, total / iters);
  rc = error_word != 0;

done:
  free_all(ctx, &d);
  attnmeta_close(ctx);
  return rc;
}
