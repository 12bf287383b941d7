// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta from C: open a backend, build one small decode step with the
 * token map, causal lengths, positions and slot mapping, read the results
 * back, print them and check them. Exits 0 when every value is right.
 *
 *   step_example_c [auto|cpu|cuda|hip]      (default auto; ATTNMETA_BACKEND
 *                                             overrides auto)
 *
 * The step: 3 requests with 2, 1 and 3 new tokens (6 real tokens), padded to
 * 8 tokens as a CUDA graph would be, KV block size 2, 3 block-table columns.
 */
#include <stdio.h>
#include <string.h>

#include <attnmeta/attnmeta.h>

#define NUM_REQS 3
#define NUM_TOKENS 8
#define CAPACITY 8
#define COLS 3

/* Stops on the first failed call, printing the library's message. */
#define CHECK(call)                                                                 \
  do {                                                                              \
    attnmeta_status st_ = (call);                                                   \
    if (st_ != ATTNMETA_OK) {                                                       \
      fprintf(stderr, "%s failed: %s: %s\n", #call, attnmeta_status_string(st_),    \
              ctx ? attnmeta_last_error(ctx) : attnmeta_open_error());              \
      goto done;                                                                    \
    }                                                                               \
  } while (0)

static int parse_backend(const char *text, attnmeta_backend *kind) {
  if (!strcmp(text, "auto")) *kind = ATTNMETA_BACKEND_AUTO;
  else if (!strcmp(text, "cpu")) *kind = ATTNMETA_BACKEND_CPU;
  else if (!strcmp(text, "cuda")) *kind = ATTNMETA_BACKEND_CUDA;
  else if (!strcmp(text, "hip")) *kind = ATTNMETA_BACKEND_HIP;
  else return -1;
  return 0;
}

static int compare32(const char *name, const int32_t *got, const int32_t *want, int n) {
  int bad = 0;
  printf("%-14s", name);
  for (int i = 0; i < n; ++i) printf(" %3d", (int)got[i]);
  printf("\n");
  for (int i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      fprintf(stderr, "mismatch: %s[%d] = %d, expected %d\n", name, i, (int)got[i], (int)want[i]);
      bad = 1;
    }
  }
  return bad;
}

static int compare64(const char *name, const int64_t *got, const int64_t *want, int n) {
  int bad = 0;
  printf("%-14s", name);
  for (int i = 0; i < n; ++i) printf(" %3lld", (long long)got[i]);
  printf("\n");
  for (int i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      fprintf(stderr, "mismatch: %s[%d] = %lld, expected %lld\n", name, i, (long long)got[i],
              (long long)want[i]);
      bad = 1;
    }
  }
  return bad;
}

int main(int argc, char **argv) {
  /* Inputs, as a serving engine holds them on the host before copying. */
  static const int32_t query_start_loc[NUM_REQS + 1] = {0, 2, 3, 6};
  static const int32_t seq_lens[NUM_REQS] = {5, 1, 4};
  static const int32_t block_table[NUM_REQS * COLS] = {10, 11, 12, 20, 21, 22, 30, 31, 32};
  /* What the contract (docs/contract.md) says they give. */
  static const int32_t want_req[NUM_TOKENS] = {0, 0, 1, 2, 2, 2, 0, 0};
  static const int32_t want_lens[CAPACITY] = {4, 5, 1, 2, 3, 4, 0, 0};
  static const int64_t want_pos[NUM_TOKENS] = {3, 4, 0, 1, 2, 3, 0, 0};
  static const int64_t want_slot[CAPACITY] = {23, 24, 40, 61, 62, 63, -1, -1};

  attnmeta_backend kind = ATTNMETA_BACKEND_AUTO;
  attnmeta_context *ctx = NULL;
  int32_t *d_qsl = NULL, *d_seq = NULL, *d_bt = NULL, *d_req = NULL, *d_lens = NULL, *d_err = NULL;
  int64_t *d_pos = NULL, *d_slot = NULL;
  int32_t req[NUM_TOKENS], lens[CAPACITY], err = 0;
  int64_t pos[NUM_TOKENS], slot[CAPACITY];
  attnmeta_step step;
  int bad = 0, ran = 0;

  if (argc > 1 && parse_backend(argv[1], &kind) != 0) {
    fprintf(stderr, "usage: %s [auto|cpu|cuda|hip]\n", argv[0]);
    return 2;
  }
  printf("attnmeta %s (built against header %d.%d.%d)\n", attnmeta_version_string(),
         ATTNMETA_VERSION_MAJOR, ATTNMETA_VERSION_MINOR, ATTNMETA_VERSION_PATCH);
  if (attnmeta_version() / 10000 != ATTNMETA_VERSION_MAJOR) {
    fprintf(stderr, "library major version differs from the header's\n");
    return 1;
  }

  CHECK(attnmeta_open(&ctx, kind, 0));
  printf("backend %s, device %s\n", attnmeta_backend_name(attnmeta_context_backend(ctx)),
         attnmeta_context_device_name(ctx));

  /* Device buffers: device memory on CUDA/HIP, host memory on the CPU. */
  CHECK(attnmeta_device_alloc(ctx, sizeof query_start_loc, (void **)&d_qsl));
  CHECK(attnmeta_device_alloc(ctx, sizeof seq_lens, (void **)&d_seq));
  CHECK(attnmeta_device_alloc(ctx, sizeof block_table, (void **)&d_bt));
  CHECK(attnmeta_device_alloc(ctx, sizeof req, (void **)&d_req));
  CHECK(attnmeta_device_alloc(ctx, sizeof lens, (void **)&d_lens));
  CHECK(attnmeta_device_alloc(ctx, sizeof pos, (void **)&d_pos));
  CHECK(attnmeta_device_alloc(ctx, sizeof slot, (void **)&d_slot));
  CHECK(attnmeta_device_alloc(ctx, sizeof err, (void **)&d_err));
  CHECK(attnmeta_copy_to_device(ctx, d_qsl, query_start_loc, sizeof query_start_loc));
  CHECK(attnmeta_copy_to_device(ctx, d_seq, seq_lens, sizeof seq_lens));
  CHECK(attnmeta_copy_to_device(ctx, d_bt, block_table, sizeof block_table));
  CHECK(attnmeta_copy_to_device(ctx, d_err, &err, sizeof err));

  attnmeta_step_init(&step);
  step.query_start_loc = d_qsl;
  step.num_reqs = NUM_REQS;
  step.num_tokens = NUM_TOKENS;
  step.capacity = CAPACITY;
  step.seq_lens = d_seq;
  step.block_table = d_bt;
  step.block_table_cols = COLS;
  step.block_table_stride = COLS;
  step.block_size = 2;
  step.token_to_req = d_req;
  step.seq_lens_out = d_lens;
  step.positions = d_pos;
  step.slot_mapping = d_slot;
  step.error_word = d_err;
  CHECK(attnmeta_build_step(ctx, &step, NULL)); /* one launch on the default stream */
  CHECK(attnmeta_synchronize(ctx, NULL));

  CHECK(attnmeta_copy_to_host(ctx, req, d_req, sizeof req));
  CHECK(attnmeta_copy_to_host(ctx, lens, d_lens, sizeof lens));
  CHECK(attnmeta_copy_to_host(ctx, pos, d_pos, sizeof pos));
  CHECK(attnmeta_copy_to_host(ctx, slot, d_slot, sizeof slot));
  CHECK(attnmeta_copy_to_host(ctx, &err, d_err, sizeof err));
  ran = 1;

  bad |= compare32("token_to_req", req, want_req, NUM_TOKENS);
  bad |= compare32("seq_lens_out", lens, want_lens, CAPACITY);
  bad |= compare64("positions", pos, want_pos, NUM_TOKENS);
  bad |= compare64("slot_mapping", slot, want_slot, CAPACITY);
  if (err != 0) {
    char text[256];
    attnmeta_error_flags_describe(err, text, sizeof text);
    fprintf(stderr, "error word %d: %s\n", (int)err, text);
    bad = 1;
  }

done:
  if (ctx) {
    attnmeta_device_free(ctx, d_qsl);
    attnmeta_device_free(ctx, d_seq);
    attnmeta_device_free(ctx, d_bt);
    attnmeta_device_free(ctx, d_req);
    attnmeta_device_free(ctx, d_lens);
    attnmeta_device_free(ctx, d_pos);
    attnmeta_device_free(ctx, d_slot);
    attnmeta_device_free(ctx, d_err);
    attnmeta_close(ctx);
  }
  if (!ran || bad) {
    fprintf(stderr, "step_example_c: FAILED\n");
    return 1;
  }
  printf("step_example_c: all values as expected\n");
  return 0;
}
