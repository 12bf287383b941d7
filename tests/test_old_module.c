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

Test(old_module, short_table_refused) {
  attnmeta_context *ctx = NULL;
  attnmeta_status st;
  cr_assert(setenv("ATTNMETA_MODULE_DIR", SHORT_MODULE_DIR, 1) == 0);
  st = attnmeta_open(&ctx, ATTNMETA_BACKEND_HIP, 0);
  cr_expect(st == ATTNMETA_ERR_ABI_MISMATCH, "status %s (%s)", attnmeta_status_string(st),
            attnmeta_open_error());
  cr_expect(ctx == NULL);
}
