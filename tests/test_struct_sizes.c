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

/* Builds a token map with a step of `size` bytes; the status. */
static attnmeta_status step_of_size(attnmeta_context *ctx, size_t size, int32_t *out) {
  static const int32_t qsl[] = {0, 1};
  attnmeta_step full;
  unsigned char *raw = amt_guarded_alloc(size);
  attnmeta_status st;
  cr_assert(raw);
  amt_step_tokens(&full, qsl, 1, 2, 2);
  full.token_to_req = out;
  full.struct_size = size;
  memcpy(raw, &full, size);
  st = attnmeta_build_step(ctx, (const attnmeta_step *)(void *)raw, NULL);
  amt_guarded_free(raw, size);
  return st;
}

Test(struct_sizes, step_inside_compressed_groups_refused) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  const size_t inside = offsetof(attnmeta_step, compressed_groups) + 8;
  int32_t out[2] = {-7, -7};
  attnmeta_status st = step_of_size(ctx, inside, out);
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
  size_t size;
  for (size = 8; size <= sizeof(attnmeta_step); size += 8) {
    int32_t out[2] = {-7, -7};
    const int released = size == STEP_0_1 || size == STEP_0_2 || size == STEP_0_3 ||
                         size == sizeof(attnmeta_step);
    const attnmeta_status st = step_of_size(ctx, size, out);
    if (released) {
      cr_expect_eq(st, ATTNMETA_OK, "size %zu: %s", size, attnmeta_last_error(ctx));
      cr_expect(out[0] == 0 && out[1] == 0, "size %zu: token map %d %d", size, out[0], out[1]);
    } else {
      cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "size %zu: %s", size,
                   attnmeta_status_string(st));
      cr_expect(out[0] == -7 && out[1] == -7, "size %zu: written on error", size);
    }
  }
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
  static const int32_t topk[2] = {0, 1}, req[1] = {0}, table[1] = {5};
  size_t size;
  for (size = 8; size <= sizeof(attnmeta_topk); size += 8) {
    int32_t out[2] = {-7, -7};
    attnmeta_topk full;
    unsigned char *raw = amt_guarded_alloc(size);
    attnmeta_status st;
    cr_assert(raw);
    amt_topk_rows(&full, topk, 1, 2, out);
    amt_topk_table(&full, req, 1, table, 1, 4);
    full.struct_size = size;
    memcpy(raw, &full, size);
    st = attnmeta_convert_topk(ctx, (const attnmeta_topk *)(void *)raw, NULL);
    amt_guarded_free(raw, size);
    if (size == TOPK_0_2 || size == sizeof(attnmeta_topk)) {
      cr_expect_eq(st, ATTNMETA_OK, "size %zu: %s", size, attnmeta_last_error(ctx));
      cr_expect(out[0] == 20 && out[1] == 21, "out %d %d", out[0], out[1]);
    } else {
      cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "size %zu: %s", size,
                   attnmeta_status_string(st));
      cr_expect(out[0] == -7 && out[1] == -7, "size %zu: written on error", size);
    }
  }
  attnmeta_close(ctx);
}

Test(struct_sizes, pool_only_its_releases) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  static const int32_t pool[4] = {30, 31, 32, 33}, ip[2] = {0, 2};
  static const int64_t rpi[1] = {0}, len[1] = {2};
  size_t size;
  for (size = 8; size <= sizeof(attnmeta_pool); size += 8) {
    int32_t out[2] = {-7, -7};
    attnmeta_pool full;
    unsigned char *raw = amt_guarded_alloc(size);
    attnmeta_status st;
    cr_assert(raw);
    attnmeta_pool_init(&full);
    full.req_to_token = pool;
    full.req_to_token_stride = 4;
    full.pool_rows = 1;
    full.pool_cols = 4;
    full.req_pool_indices = rpi;
    full.lengths = len;
    full.num_reqs = 1;
    full.kv_indptr = ip;
    full.kv_indices = out;
    full.kv_indices_capacity = 2;
    full.struct_size = size;
    memcpy(raw, &full, size);
    st = attnmeta_build_pool_indices(ctx, (const attnmeta_pool *)(void *)raw, NULL);
    amt_guarded_free(raw, size);
    /* 0.3.0's 128 bytes (up to error_word) and this library's */
    if (size == sizeof(attnmeta_pool) || size == 128) {
      cr_expect_eq(st, ATTNMETA_OK, "%s", attnmeta_last_error(ctx));
      cr_expect(out[0] == 30 && out[1] == 31, "out %d %d", out[0], out[1]);
    } else {
      cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "size %zu: %s", size,
                   attnmeta_status_string(st));
      cr_expect(out[0] == -7 && out[1] == -7, "size %zu: written on error", size);
    }
  }
  if (sizeof(void *) == 8)
    cr_expect_eq(sizeof(attnmeta_pool), (size_t)264,
                 "attnmeta_pool is 264 bytes (128 in 0.3.0, then the appended members)");
  attnmeta_close(ctx);
}
