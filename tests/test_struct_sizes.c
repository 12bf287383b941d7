// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta_step, attnmeta_topk and attnmeta_pool accept exactly the
 * struct_size values of their releases (0.1.0's step, 0.2.0's step and
 * top-k, 0.3.0's pool and this library's) and nothing
 * between: a size that ends inside compressed_groups[0], or any other
 * multiple of 8 between two releases, is refused with
 * ATTNMETA_ERR_INVALID_ARGUMENT, a message giving the released sizes, and
 * nothing written. Callers' structs sit in exact-size allocations against
 * an inaccessible page.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "guarded.h"
#include "harness.h"
#include "op_inputs.h"

#define STEP_0_1 (offsetof(attnmeta_step, error_word) + sizeof(int32_t *))
/* 0.2.0's step ended with launch_flags, padded to the struct's alignment */
#define STEP_0_2 \
  ((offsetof(attnmeta_step, launch_flags) + sizeof(uint32_t) + _Alignof(attnmeta_step) - 1) / \
   _Alignof(attnmeta_step) * _Alignof(attnmeta_step))

_Static_assert(sizeof(void *) != 8 || STEP_0_2 == 504, "0.2.0's step is 504 bytes on LP64");
/* 0.2.0's (and 0.3.0's) top-k operation ended with error_word */
#define TOPK_0_2 (offsetof(attnmeta_topk, error_word) + sizeof(int32_t *))
_Static_assert(sizeof(void *) != 8 || TOPK_0_2 == 176, "0.2.0's topk is 176 bytes on LP64");
/* 0.3.0's step ended with c128a_num_decode_tokens */
#define STEP_0_3                                                                               \
  ((offsetof(attnmeta_step, c128a_num_decode_tokens) + sizeof(int32_t) + _Alignof(attnmeta_step) - \
    1) / _Alignof(attnmeta_step) * _Alignof(attnmeta_step))
_Static_assert(sizeof(void *) != 8 || STEP_0_3 == 552, "0.3.0's step is 552 bytes on LP64");

_Static_assert(offsetof(attnmeta_step, struct_size) == 0 && offsetof(attnmeta_topk, struct_size) == 0 &&
                   offsetof(attnmeta_pool, struct_size) == 0,
               "struct_size leads every operation");

typedef attnmeta_status (*sized_call)(attnmeta_context *ctx, const void *op);

/* Calls `call` with the first `size` bytes of `full` (its struct_size, the
 * first member of every operation, set to size) in an exact-size allocation. */
static attnmeta_status call_sized(attnmeta_context *ctx, void *full, size_t size, sized_call call) {
  unsigned char *raw = amt_guarded_alloc(size);
  attnmeta_status st;
  cr_assert(raw);
  memcpy(full, &size, sizeof size);
  memcpy(raw, full, size);
  st = call(ctx, raw);
  amt_guarded_free(raw, size);
  return st;
}

/* Every multiple of 8 up to full_size: the `n` released sizes write
 * out = want, every other one is refused with out left as it was. */
static void expect_only_released(attnmeta_context *ctx, void *full, size_t full_size,
                                 sized_call call, const size_t *released, int n, int32_t out[2],
                                 const int32_t want[2]) {
  size_t size;
  for (size = 8; size <= full_size; size += 8) {
    attnmeta_status st;
    int i, is_released = 0;
    for (i = 0; i < n; i++) is_released |= size == released[i];
    out[0] = out[1] = -7;
    st = call_sized(ctx, full, size, call);
    if (is_released) {
      cr_expect_eq(st, ATTNMETA_OK, "size %zu: %s", size, attnmeta_last_error(ctx));
      cr_expect(out[0] == want[0] && out[1] == want[1], "size %zu: out %d %d", size, out[0],
                out[1]);
    } else {
      cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "size %zu: %s", size,
                   attnmeta_status_string(st));
      cr_expect(out[0] == -7 && out[1] == -7, "size %zu: written on error", size);
    }
  }
}

static attnmeta_status step_call(attnmeta_context *ctx, const void *op) {
  return attnmeta_build_step(ctx, op, NULL);
}
static attnmeta_status topk_call(attnmeta_context *ctx, const void *op) {
  return attnmeta_convert_topk(ctx, op, NULL);
}
static attnmeta_status pool_call(attnmeta_context *ctx, const void *op) {
  return attnmeta_build_pool_indices(ctx, op, NULL);
}

/* A one-request step writing its token map into out. */
static void step_into(attnmeta_step *full, int32_t *out) {
  static const int32_t qsl[] = {0, 1};
  amt_step_tokens(full, qsl, 1, 2, 2);
  full->token_to_req = out;
}

Test(struct_sizes, step_inside_compressed_groups_refused) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  const size_t inside = offsetof(attnmeta_step, compressed_groups) + 8;
  int32_t out[2] = {-7, -7};
  attnmeta_step full;
  attnmeta_status st;
  step_into(&full, out);
  st = call_sized(ctx, &full, inside, step_call);
  cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "%zu: %s", inside, attnmeta_status_string(st));
  cr_expect(strstr(attnmeta_last_error(ctx), "struct_size") &&
                strstr(attnmeta_last_error(ctx), "0.1.0") &&
                strstr(attnmeta_last_error(ctx), "0.2.0"),
            "message: %s", attnmeta_last_error(ctx));
  cr_expect(out[0] == -7 && out[1] == -7, "written on error");
  attnmeta_close(ctx);
}

Test(struct_sizes, step_only_released_sizes) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  const size_t released[4] = {STEP_0_1, STEP_0_2, STEP_0_3, sizeof(attnmeta_step)};
  static const int32_t want[2] = {0, 0};
  int32_t out[2];
  attnmeta_step full;
  step_into(&full, out);
  expect_only_released(ctx, &full, sizeof full, step_call, released, 4, out, want);
  attnmeta_close(ctx);
}

Test(struct_sizes, step_init_size_says_the_same) {
  attnmeta_step s;
  cr_expect_eq(attnmeta_step_init_size(&s, STEP_0_1), ATTNMETA_OK);
  cr_expect_eq(attnmeta_step_init_size(&s, sizeof s), ATTNMETA_OK);
  cr_expect_eq(attnmeta_step_init_size(&s, STEP_0_1 + 8), ATTNMETA_ERR_INVALID_ARGUMENT);
  cr_expect_eq(attnmeta_step_init_size(&s, STEP_0_2), ATTNMETA_OK);
  if (sizeof s - 8 != STEP_0_2) /* a size between 0.2.0's and this library's */
    cr_expect_eq(attnmeta_step_init_size(&s, sizeof s - 8), ATTNMETA_ERR_INVALID_ARGUMENT);
}

Test(struct_sizes, topk_only_its_releases) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  static const int32_t topk[2] = {0, 1}, req[1] = {0}, table[1] = {5}, want[2] = {20, 21};
  const size_t released[2] = {TOPK_0_2, sizeof(attnmeta_topk)};
  int32_t out[2];
  attnmeta_topk full;
  amt_topk_rows(&full, topk, 1, 2, out);
  amt_topk_table(&full, req, 1, table, 1, 4);
  expect_only_released(ctx, &full, sizeof full, topk_call, released, 2, out, want);
  attnmeta_close(ctx);
}

Test(struct_sizes, pool_only_its_releases) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  static const int32_t pool[4] = {30, 31, 32, 33}, ip[2] = {0, 2}, want[2] = {30, 31};
  static const int64_t rpi[1] = {0}, len[1] = {2};
  /* 0.3.0's 128 bytes (up to error_word) and this library's */
  const size_t released[2] = {128, sizeof(attnmeta_pool)};
  int32_t out[2];
  attnmeta_pool full;
  amt_pool_table(&full, pool, 1, 4, 4);
  amt_pool_reqs(&full, rpi, len, 1);
  amt_pool_slots(&full, ip, out, 2);
  expect_only_released(ctx, &full, sizeof full, pool_call, released, 2, out, want);
  if (sizeof(void *) == 8)
    cr_expect_eq(sizeof(attnmeta_pool), (size_t)344,
                 "attnmeta_pool is 344 bytes (128 in 0.3.0, then the appended members)");
  attnmeta_close(ctx);
}
