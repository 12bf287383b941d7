// SPDX-License-Identifier: Apache-2.0
/*
 * API misuse: every case is a documented status, a message, and nothing
 * written; never a crash. NULL context, NULL step and pointers, zero sizes,
 * negative sizes, sizes at the INT32 limits, strides at the INT64 limits and
 * at the byte-offset overflow boundary, capacity below the token count,
 * decode context parallelism out of range, misaligned pointers, a step
 * struct of another size, invalid launch configurations; and the argument
 * checks of the measurement API (attnmeta_measure.h).
 *
 * (A closed context is a dangling pointer, as any freed pointer in C: using
 * it is undefined behaviour and is not tested.)
 *
 * Every output is a small poisoned buffer with poisoned guards; no buffer is
 * sized from the arguments under test. Prints "N passed, N failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "attnmeta/attnmeta_measure.h"
#include "../null_context.h"
#include "stress_common.h"

#define N 64      /* elements of every buffer */
#define GUARD 16  /* poisoned elements either side */
#define POISON32 ((int32_t)0x7E7E7E7E)
#define POISON64 ((int64_t)0x7E7E7E7E7E7E7E7ELL)

static attnmeta_context *ctx;

typedef struct bufs {
  int32_t qsl[N + 1], seq_lens[N], table[N * 4];
  int32_t t2r[N + 2 * GUARD], seq[N + 2 * GUARD], gseq[N + 2 * GUARD], bt[N * 4 + 2 * GUARD],
      dec[N + 2 * GUARD], ridx[N + 2 * GUARD], prl[N + 2 * GUARD], err[1 + 2 * GUARD];
  int64_t pos[N + 2 * GUARD], slot[N + 2 * GUARD];
} bufs;

static bufs B;

static void poison(void) {
  size_t i;
  int32_t *p32[] = {B.t2r, B.seq, B.gseq, B.dec, B.ridx, B.prl};
  for (i = 0; i < sizeof p32 / sizeof p32[0]; ++i) {
    size_t j;
    for (j = 0; j < N + 2 * GUARD; ++j) p32[i][j] = POISON32;
  }
  for (i = 0; i < N * 4 + 2 * GUARD; ++i) B.bt[i] = POISON32;
  for (i = 0; i < 1 + 2 * GUARD; ++i) B.err[i] = POISON32;
  for (i = 0; i < N + 2 * GUARD; ++i) B.pos[i] = B.slot[i] = POISON64;
}

static int untouched(void) {
  size_t i;
  const int32_t *p32[] = {B.t2r, B.seq, B.gseq, B.dec, B.ridx, B.prl};
  for (i = 0; i < sizeof p32 / sizeof p32[0]; ++i) {
    size_t j;
    for (j = 0; j < N + 2 * GUARD; ++j)
      if (p32[i][j] != POISON32) return 0;
  }
  for (i = 0; i < N * 4 + 2 * GUARD; ++i)
    if (B.bt[i] != POISON32) return 0;
  for (i = 0; i < 1 + 2 * GUARD; ++i)
    if (B.err[i] != POISON32) return 0;
  for (i = 0; i < N + 2 * GUARD; ++i)
    if (B.pos[i] != POISON64 || B.slot[i] != POISON64) return 0;
  return 1;
}

static int guards_intact(void) {
  int i;
  for (i = 0; i < GUARD; ++i) {
    if (B.t2r[i] != POISON32 || B.t2r[N + GUARD + i] != POISON32) return 0;
    if (B.seq[i] != POISON32 || B.seq[N + GUARD + i] != POISON32) return 0;
    if (B.bt[i] != POISON32 || B.bt[N * 4 + GUARD + i] != POISON32) return 0;
    if (B.slot[i] != POISON64 || B.slot[N + GUARD + i] != POISON64) return 0;
    if (B.pos[i] != POISON64 || B.pos[N + GUARD + i] != POISON64) return 0;
    if (B.err[i] != POISON32 || B.err[1 + GUARD + i] != POISON32) return 0;
  }
  return 1;
}

/* A small valid step wanting every product: R = 4, T = 10, C = 12, cols = 3. */
static void valid_step(attnmeta_step *s) {
  static const int32_t qsl[5] = {0, 3, 3, 5, 8};
  int i;
  memcpy(B.qsl, qsl, sizeof qsl);
  for (i = 0; i < 4; ++i) B.seq_lens[i] = 20 + i;
  for (i = 0; i < N * 4; ++i) B.table[i] = i;
  attnmeta_step_init(s);
  s->query_start_loc = B.qsl;
  s->num_reqs = 4;
  s->num_tokens = 10;
  s->capacity = 12;
  s->seq_lens = B.seq_lens;
  s->block_table = B.table;
  s->block_table_cols = 3;
  s->block_table_stride = 4;
  s->block_size = 8;
  s->token_to_req = B.t2r + GUARD;
  s->seq_lens_out = B.seq + GUARD;
  s->global_seq_lens_out = B.gseq + GUARD;
  s->block_table_out = B.bt + GUARD;
  s->block_table_out_stride = 3;
  s->decode_lens_out = B.dec + GUARD;
  s->req_indices_out = B.ridx + GUARD;
  s->per_req_lens_out = B.prl + GUARD;
  s->positions = B.pos + GUARD;
  s->slot_mapping = B.slot + GUARD;
  s->error_word = B.err + GUARD;
}

/* Runs `s` and expects `want`; on failure nothing may be written. */
static void expect_step(const char *name, const attnmeta_step *s, attnmeta_status want) {
  attnmeta_status st;
  poison();
  st = attnmeta_build_step(ctx, s, NULL);
  if (want == ATTNMETA_OK) {
    ST_EXPECT(st == ATTNMETA_OK, "%s: status %d (%s), expected success: %s", name, (int)st,
              attnmeta_status_string(st), attnmeta_last_error(ctx));
    ST_EXPECT(guards_intact(), "%s: a guard zone was written", name);
    ST_EXPECT(attnmeta_last_error(ctx)[0] == '\0', "%s: message after success", name);
    return;
  }
  ST_EXPECT(st == want, "%s: status %d (%s), expected %d (%s)", name, (int)st,
            attnmeta_status_string(st), (int)want, attnmeta_status_string(want));
  ST_EXPECT(untouched(), "%s: a refused call wrote", name);
  ST_EXPECT(attnmeta_last_error(ctx)[0] != '\0', "%s: no message", name);
}

#define CASE(name, want, ...)  \
  do {                         \
    attnmeta_step s;           \
    valid_step(&s);            \
    __VA_ARGS__;               \
    expect_step(name, &s, want); \
  } while (0)

static void step_cases(void) {
  const attnmeta_status OK = ATTNMETA_OK, INV = ATTNMETA_ERR_INVALID_ARGUMENT,
                        NUL = ATTNMETA_ERR_NULL_POINTER, CAP = ATTNMETA_ERR_CAPACITY,
                        STR = ATTNMETA_ERR_STRIDE, OVF = ATTNMETA_ERR_OVERFLOW;
  CASE("valid", OK, (void)0);

  /* null pointers */
  CASE("query_start_loc NULL", NUL, s.query_start_loc = NULL);
  CASE("seq_lens NULL with lengths wanted", NUL, s.seq_lens = NULL);
  CASE("block_table NULL with cols > 0", NUL, s.block_table = NULL);
  CASE("seq_lens NULL, only the token map wanted", OK, s.seq_lens = NULL; s.seq_lens_out = NULL;
       s.global_seq_lens_out = NULL; s.positions = NULL; s.slot_mapping = NULL);
  CASE("block_table NULL with cols == 0", OK, s.block_table = NULL; s.block_table_cols = 0);

  /* zero sizes */
  CASE("R = 0", OK, s.num_reqs = 0; B.qsl[0] = 0);
  CASE("T = 0, C = 0", OK, s.num_tokens = 0; s.capacity = 0);
  CASE("R = T = C = 0", OK, s.num_reqs = 0; s.num_tokens = 0; s.capacity = 0);
  CASE("cols = 0, strides 0", OK, s.block_table_cols = 0; s.block_table_stride = 0;
       s.block_table_out_stride = 0);
  CASE("nothing wanted", OK, s.token_to_req = NULL; s.seq_lens_out = NULL;
       s.global_seq_lens_out = NULL; s.block_table_out = NULL; s.decode_lens_out = NULL;
       s.req_indices_out = NULL; s.per_req_lens_out = NULL; s.positions = NULL;
       s.slot_mapping = NULL; s.error_word = NULL);

  /* negative sizes */
  CASE("R = -1", INV, s.num_reqs = -1);
  CASE("R = INT32_MIN", INV, s.num_reqs = INT32_MIN);
  CASE("T = -1", INV, s.num_tokens = -1);
  CASE("C = INT32_MIN", INV, s.capacity = INT32_MIN);
  CASE("cols = -1", INV, s.block_table_cols = -1);
  CASE("block_size = 0", INV, s.block_size = 0);
  CASE("block_size = INT32_MIN", INV, s.block_size = INT32_MIN);

  /* capacity */
  CASE("C = T - 1", CAP, s.capacity = s.num_tokens - 1);
  CASE("T = INT32_MAX, C = INT32_MAX - 1", CAP, s.num_reqs = 0; s.num_tokens = INT32_MAX;
       s.capacity = INT32_MAX - 1);

  /* sizes at the INT32 limits: request ids of padding tokens overflow */
  CASE("R = INT32_MAX, T = 1", OVF, s.num_reqs = INT32_MAX; s.num_tokens = 1; s.capacity = 1);
  CASE("R = 1, T = C = INT32_MAX", OVF, s.num_reqs = 1; s.num_tokens = INT32_MAX;
       s.capacity = INT32_MAX);
  CASE("R = T = C = INT32_MAX", OVF, s.num_reqs = INT32_MAX; s.num_tokens = INT32_MAX;
       s.capacity = INT32_MAX);

  /* strides */
  CASE("in stride < cols", STR, s.block_table_stride = 2);
  CASE("out stride < cols", STR, s.block_table_out_stride = 2);
  CASE("in stride = INT64_MIN", STR, s.block_table_stride = INT64_MIN);
  CASE("out stride = -1", STR, s.block_table_out_stride = -1);
  CASE("in stride = INT64_MAX", OVF, s.block_table_stride = INT64_MAX);
  CASE("out stride = INT64_MAX", OVF, s.block_table_out_stride = INT64_MAX);
  /* byte offset of row R - 1 past INT64_MAX: (R - 1) * stride * 4 overflows */
  CASE("in stride at the byte-offset overflow", OVF,
       s.block_table_stride = INT64_MAX / 4 / (s.num_reqs - 1) + 1);
  CASE("out stride at the byte-offset overflow", OVF,
       s.block_table_out_stride = INT64_MAX / 4 / (s.num_tokens - 1) + 1);
  CASE("in stride huge, table not used", OK, s.block_table_stride = INT64_MAX;
       s.block_table_out = NULL; s.slot_mapping = NULL);

  /* decode context parallelism */
  CASE("W = 0", INV, s.dcp_world_size = 0);
  CASE("W = INT32_MIN", INV, s.dcp_world_size = INT32_MIN);
  CASE("k = W", INV, s.dcp_world_size = 2; s.dcp_rank = 2);
  CASE("k = -1", INV, s.dcp_rank = -1);
  CASE("I = 0", INV, s.dcp_interleave = 0);
  CASE("W = I = INT32_MAX, k = INT32_MAX - 1", OK, s.dcp_world_size = INT32_MAX;
       s.dcp_rank = INT32_MAX - 1; s.dcp_interleave = INT32_MAX);
  CASE("block_size = INT32_MAX, num_mapped = INT32_MIN", OK, s.block_size = INT32_MAX;
       s.num_mapped = INT32_MIN);
  CASE("num_mapped = INT32_MAX", OK, s.num_mapped = INT32_MAX);

  /* alignment */
  CASE("token_to_req misaligned", INV, s.token_to_req = (int32_t *)(void *)((char *)s.token_to_req + 1));
  CASE("positions misaligned", INV, s.positions = (int64_t *)(void *)((char *)s.positions + 4));
  CASE("slot_mapping misaligned", INV, s.slot_mapping = (int64_t *)(void *)((char *)s.slot_mapping + 2));
  CASE("query_start_loc misaligned", INV,
       s.query_start_loc = (const int32_t *)(const void *)((const char *)s.query_start_loc + 2));

  /* the struct itself */
  CASE("struct_size 0", INV, s.struct_size = 0);
  CASE("struct_size too small", INV, s.struct_size = sizeof s - 1);
  CASE("struct_size too large", ATTNMETA_ERR_NOT_SUPPORTED, s.struct_size = sizeof s + 8);
}

static void expect(int ok, const char *what) { ST_EXPECT(ok, "%s", what); }

static void other_cases(void) {
  int32_t qsl[2] = {0, 1}, out[4] = {5, 5, 5, 5};
  attnmeta_launch_config c = attnmeta_launch_config_default();
  attnmeta_context *none = NULL;
  char text[8];
  size_t need;

  amt_null_context_calls(ctx, expect); /* NULL context everywhere */
  st_pass();

  /* token_to_req */
  ST_EXPECT(attnmeta_token_to_req(ctx, NULL, 1, -1, 1, out, NULL) == ATTNMETA_ERR_NULL_POINTER, "token_to_req qsl NULL");
  ST_EXPECT(attnmeta_token_to_req(ctx, qsl, 1, -1, 1, NULL, NULL) == ATTNMETA_ERR_NULL_POINTER, "token_to_req out NULL");
  ST_EXPECT(attnmeta_token_to_req(ctx, qsl, -1, -1, 1, out, NULL) == ATTNMETA_ERR_INVALID_ARGUMENT, "token_to_req R < 0");
  ST_EXPECT(attnmeta_token_to_req(ctx, qsl, 1, -1, INT32_MAX, out, NULL) == ATTNMETA_ERR_OVERFLOW, "token_to_req R + T overflow");
  ST_EXPECT(out[0] == 5 && out[1] == 5, "a refused token_to_req wrote");
  ST_EXPECT(attnmeta_token_to_req(ctx, qsl, 1, -1, 0, out, NULL) == ATTNMETA_OK && out[0] == 5, "token_to_req T = 0");

  /* open */
  ST_EXPECT(attnmeta_open(NULL, ATTNMETA_BACKEND_CPU, 0) == ATTNMETA_ERR_NULL_POINTER, "open(NULL)");
  ST_EXPECT(attnmeta_open(&none, (attnmeta_backend)99, 0) == ATTNMETA_ERR_UNKNOWN_BACKEND && !none, "open(kind 99)");
  ST_EXPECT(attnmeta_open(&none, (attnmeta_backend)-1, 0) == ATTNMETA_ERR_UNKNOWN_BACKEND && !none, "open(kind -1)");
  ST_EXPECT(attnmeta_open(&none, ATTNMETA_BACKEND_CPU, -1) == ATTNMETA_ERR_INVALID_ARGUMENT && !none, "open(CPU, -1)");
  ST_EXPECT(attnmeta_open(&none, ATTNMETA_BACKEND_CPU, INT32_MAX) == ATTNMETA_ERR_NO_DEVICE && !none, "open(CPU, INT32_MAX)");
  ST_EXPECT(attnmeta_open_error()[0] != '\0', "open error message");

  /* launch configuration */
  c.block = -1;
  ST_EXPECT(attnmeta_set_launch_config(ctx, &c) == ATTNMETA_ERR_INVALID_ARGUMENT, "config block -1");
  c = attnmeta_launch_config_default();
  c.block = 2;
  ST_EXPECT(attnmeta_set_launch_config(ctx, &c) == ATTNMETA_ERR_NOT_SUPPORTED, "config block 2 on the CPU");
  c = attnmeta_launch_config_default();
  c.stage = 2;
  ST_EXPECT(attnmeta_set_launch_config(ctx, &c) == ATTNMETA_ERR_INVALID_ARGUMENT, "config stage 2");
  c = attnmeta_launch_config_default();
  c.vector = INT32_MIN;
  ST_EXPECT(attnmeta_set_launch_config(ctx, &c) == ATTNMETA_ERR_INVALID_ARGUMENT, "config vector INT32_MIN");
  c = attnmeta_launch_config_default();
  c.grid = INT32_MIN;
  ST_EXPECT(attnmeta_set_launch_config(ctx, &c) == ATTNMETA_ERR_INVALID_ARGUMENT, "config grid INT32_MIN");
  c = attnmeta_launch_config_default();
  c.lanes = INT32_MAX; /* accepted: clamped to the block on use */
  ST_EXPECT(attnmeta_set_launch_config(ctx, &c) == ATTNMETA_OK, "config lanes INT32_MAX");
  CASE("valid step under lanes = INT32_MAX", ATTNMETA_OK, (void)0);
  ST_EXPECT(attnmeta_set_launch_config(ctx, NULL) == ATTNMETA_OK, "config reset");

  /* memory utilities */
  ST_EXPECT(attnmeta_device_alloc(ctx, 16, NULL) == ATTNMETA_ERR_NULL_POINTER, "device_alloc(ptr NULL)");
  ST_EXPECT(attnmeta_copy_to_device(ctx, NULL, qsl, 4) == ATTNMETA_ERR_NULL_POINTER, "copy_to_device(dst NULL)");
  ST_EXPECT(attnmeta_copy_to_host(ctx, out, NULL, 4) == ATTNMETA_ERR_NULL_POINTER, "copy_to_host(src NULL)");
  ST_EXPECT(attnmeta_copy_to_device(ctx, NULL, NULL, 0) == ATTNMETA_OK, "copy of 0 bytes");
  ST_EXPECT(attnmeta_device_free(ctx, NULL) == ATTNMETA_OK, "device_free(ctx, NULL)");
  ST_EXPECT(attnmeta_backend_device_count(ATTNMETA_BACKEND_CPU, NULL) == ATTNMETA_ERR_NULL_POINTER, "device_count(NULL)");
  ST_EXPECT(attnmeta_backend_targets(ATTNMETA_BACKEND_CPU, NULL) == ATTNMETA_ERR_NULL_POINTER, "targets(NULL)");

  /* flag text into small and absent buffers */
  memset(text, 'x', sizeof text);
  need = attnmeta_error_flags_describe(-1, text, 1);
  ST_EXPECT(need > 0 && text[0] == '\0' && text[1] == 'x', "describe into 1 byte");
  ST_EXPECT(attnmeta_error_flags_describe(-1, NULL, 0) == need, "describe into NULL");
  ST_EXPECT(attnmeta_error_flags_describe(INT32_MIN, text, sizeof text) > 0 &&
                text[sizeof text - 1] == '\0', "describe INT32_MIN, truncated");
  ST_EXPECT(attnmeta_status_string((attnmeta_status)12345) != NULL, "status_string(12345)");
  ST_EXPECT(attnmeta_backend_name((attnmeta_backend)-7) != NULL, "backend_name(-7)");
}

/* ---- the measurement API ---- */

static int enqueue_calls;

static attnmeta_status enqueue_ok(void *user, void *stream) {
  int32_t qsl[3] = {0, 1, 2}, out[2];
  (void)user;
  enqueue_calls++;
  return attnmeta_token_to_req(ctx, qsl, 2, -1, 2, out, stream);
}

static attnmeta_status enqueue_fails(void *user, void *stream) {
  (void)user;
  (void)stream;
  return ATTNMETA_ERR_LAUNCH;
}

static void measure_cases(void) {
  attnmeta_graph_timing g;
  attnmeta_eager_timing e;
  attnmeta_empty_timing z;
  attnmeta_copy_timing c;
  int64_t cache = -1;
  const attnmeta_status NUL = ATTNMETA_ERR_NULL_POINTER, INV = ATTNMETA_ERR_INVALID_ARGUMENT,
                        CTX = ATTNMETA_ERR_INVALID_CONTEXT;
  ST_EXPECT(attnmeta_measure_graph(NULL, enqueue_ok, NULL, 1, 1, 1, &g) == CTX, "measure_graph(NULL)");
  ST_EXPECT(attnmeta_measure_graph(ctx, NULL, NULL, 1, 1, 1, &g) == NUL, "measure_graph(enqueue NULL)");
  ST_EXPECT(attnmeta_measure_graph(ctx, enqueue_ok, NULL, 1, 1, 1, NULL) == NUL, "measure_graph(result NULL)");
  ST_EXPECT(attnmeta_measure_graph(ctx, enqueue_ok, NULL, 0, 1, 1, &g) == INV, "measure_graph(steps 0)");
  ST_EXPECT(attnmeta_measure_graph(ctx, enqueue_ok, NULL, 1, INT32_MIN, 1, &g) == INV, "measure_graph(replays INT32_MIN)");
  ST_EXPECT(attnmeta_measure_graph(ctx, enqueue_ok, NULL, 1, 1, -1, &g) == INV, "measure_graph(repeats -1)");
  ST_EXPECT(attnmeta_measure_eager(NULL, enqueue_ok, NULL, 1, 1, &e) == CTX, "measure_eager(NULL)");
  ST_EXPECT(attnmeta_measure_eager(ctx, NULL, NULL, 1, 1, &e) == NUL, "measure_eager(enqueue NULL)");
  ST_EXPECT(attnmeta_measure_eager(ctx, enqueue_ok, NULL, -5, 1, &e) == INV, "measure_eager(iterations -5)");
  ST_EXPECT(attnmeta_measure_empty_kernel(NULL, 1, 1, 1, 1, &z) == CTX, "measure_empty_kernel(NULL)");
  ST_EXPECT(attnmeta_measure_empty_kernel(ctx, 1, 1, 1, 1, NULL) == NUL, "measure_empty_kernel(result NULL)");
  ST_EXPECT(attnmeta_measure_empty_kernel(ctx, 1, 1, 0, 1, &z) == INV, "measure_empty_kernel(iterations 0)");
  ST_EXPECT(attnmeta_measure_copy(NULL, 64, 1, 1, &c) == CTX, "measure_copy(NULL)");
  ST_EXPECT(attnmeta_measure_copy(ctx, 64, 1, 1, NULL) == NUL, "measure_copy(result NULL)");
  ST_EXPECT(attnmeta_measure_copy(ctx, 0, 1, 1, &c) == INV, "measure_copy(0 bytes)");
  ST_EXPECT(attnmeta_measure_copy(ctx, 64, 1, 0, &c) == INV, "measure_copy(repeats 0)");
  ST_EXPECT(attnmeta_last_error(ctx)[0] != '\0', "measure: no message after a refusal");
  ST_EXPECT(attnmeta_measure_cache_bytes(NULL, &cache) == CTX, "measure_cache_bytes(NULL)");
  ST_EXPECT(attnmeta_measure_cache_bytes(ctx, NULL) == NUL, "measure_cache_bytes(bytes NULL)");
  ST_EXPECT(attnmeta_measure_cache_bytes(ctx, &cache) == ATTNMETA_OK && cache >= 0,
            "measure_cache_bytes: %s, %lld bytes", attnmeta_last_error(ctx), (long long)cache);
  /* small valid runs on the CPU backend, and a callback that fails */
  enqueue_calls = 0;
  ST_EXPECT(attnmeta_measure_graph(ctx, enqueue_ok, NULL, 2, 3, 2, &g) == ATTNMETA_OK && enqueue_calls > 0,
            "measure_graph: %s", attnmeta_last_error(ctx));
  ST_EXPECT(attnmeta_measure_eager(ctx, enqueue_ok, NULL, 3, 2, &e) == ATTNMETA_OK, "measure_eager: %s",
            attnmeta_last_error(ctx));
  ST_EXPECT(attnmeta_measure_empty_kernel(ctx, 2, 2, 2, 2, &z) == ATTNMETA_OK,
            "measure_empty_kernel: %s", attnmeta_last_error(ctx));
  ST_EXPECT(attnmeta_measure_copy(ctx, 4096, 2, 2, &c) == ATTNMETA_OK, "measure_copy: %s",
            attnmeta_last_error(ctx));
  ST_EXPECT(attnmeta_measure_graph(ctx, enqueue_fails, NULL, 1, 1, 1, &g) != ATTNMETA_OK &&
                attnmeta_last_error(ctx)[0] != '\0',
            "measure_graph with a failing callback");
  ST_EXPECT(attnmeta_measure_eager(ctx, enqueue_fails, NULL, 1, 1, &e) != ATTNMETA_OK,
            "measure_eager with a failing callback");
}

int main(void) {
  if (attnmeta_open(&ctx, ATTNMETA_BACKEND_CPU, 0) != ATTNMETA_OK) {
    fprintf(stderr, "cannot open the CPU backend: %s\n", attnmeta_open_error());
    return 1;
  }
  step_cases();
  other_cases();
  measure_cases();
  attnmeta_close(ctx);
  return st_report();
}
