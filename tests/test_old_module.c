// SPDX-License-Identifier: Apache-2.0
#define _POSIX_C_SOURCE 200809L /* setenv */
/*
 * A backend module built before the top-k operation (a shorter backend
 * table, tests/old_module.c) still loads, and attnmeta_convert_topk refuses
 * on it with ATTNMETA_ERR_NOT_SUPPORTED instead of calling past its table;
 * a table shorter than the first ABI-2 table is refused at open. The
 * modules stand in for the HIP module through ATTNMETA_MODULE_DIR (each
 * Criterion test runs in its own process, so the loader starts afresh).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "op_inputs.h"
#include "tiny_topk.h"

#ifndef OLD_MODULE_DIR
#define OLD_MODULE_DIR ""
#define SHORT_MODULE_DIR ""
#endif

Test(old_module, topk_refused) {
  attnmeta_context *ctx = NULL;
  int32_t out[4] = {7, 7, 7, 7};
  attnmeta_status st;
  cr_assert(setenv("ATTNMETA_MODULE_DIR", OLD_MODULE_DIR, 1) == 0);
  st = attnmeta_open(&ctx, ATTNMETA_BACKEND_HIP, 0);
  cr_assert(st == ATTNMETA_OK, "the old module does not load: %s (%s)",
            attnmeta_status_string(st), attnmeta_open_error());
  st = amt_convert_tiny_topk(ctx, out);
  cr_expect(st == ATTNMETA_ERR_NOT_SUPPORTED, "status %s (%s)", attnmeta_status_string(st),
            attnmeta_last_error(ctx));
  cr_expect(strstr(attnmeta_last_error(ctx), "predates") != NULL, "message: %s",
            attnmeta_last_error(ctx));
  cr_expect(out[0] == 7 && out[3] == 7, "out was written");
  attnmeta_close(ctx);
}

/* The pool operation came after the top-k one: a module without
 * launch_pool (the old one, and the full table of the library's size whose
 * launch_pool is NULL) gets ATTNMETA_ERR_NOT_SUPPORTED, nothing written. */
static void expect_pool_refused(const char *dir) {
  static const int32_t pool[4] = {1, 2, 3, 4}, ip[2] = {0, 2};
  static const int64_t rpi[1] = {0}, len[1] = {2};
  int32_t out[2] = {7, 7};
  attnmeta_context *ctx = NULL;
  attnmeta_pool op;
  attnmeta_status st;
  cr_assert(setenv("ATTNMETA_MODULE_DIR", dir, 1) == 0);
  st = attnmeta_open(&ctx, ATTNMETA_BACKEND_HIP, 0);
  cr_assert(st == ATTNMETA_OK, "the module does not load: %s (%s)", attnmeta_status_string(st),
            attnmeta_open_error());
  amt_pool_table(&op, pool, 1, 4, 4);
  amt_pool_reqs(&op, rpi, len, 1);
  amt_pool_slots(&op, ip, out, 2);
  st = attnmeta_build_pool_indices(ctx, &op, NULL);
  cr_expect(st == ATTNMETA_ERR_NOT_SUPPORTED, "status %s (%s)", attnmeta_status_string(st),
            attnmeta_last_error(ctx));
  cr_expect(strstr(attnmeta_last_error(ctx), "predates the pool operation") != NULL,
            "message: %s", attnmeta_last_error(ctx));
  cr_expect(out[0] == 7 && out[1] == 7, "out was written");
  attnmeta_close(ctx);
}

Test(old_module, pool_refused) { expect_pool_refused(OLD_MODULE_DIR); }

#ifdef MODULE_DIR_FULL
Test(old_module, pool_refused_without_launch_pool) { expect_pool_refused(MODULE_DIR_FULL); }
#endif

Test(old_module, short_table_refused) {
  attnmeta_context *ctx = NULL;
  attnmeta_status st;
  cr_assert(setenv("ATTNMETA_MODULE_DIR", SHORT_MODULE_DIR, 1) == 0);
  st = attnmeta_open(&ctx, ATTNMETA_BACKEND_HIP, 0);
  cr_expect(st == ATTNMETA_ERR_ABI_MISMATCH, "status %s (%s)", attnmeta_status_string(st),
            attnmeta_open_error());
  cr_expect(ctx == NULL);
}
