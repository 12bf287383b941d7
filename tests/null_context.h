// SPDX-License-Identifier: Apache-2.0
/*
 * Every entry point that takes a context, given NULL: the status or value
 * the API documents, and nothing written. The checks of the misuse test
 * (tests/stress/api_misuse.c) and of fuzz_args; each reports through
 * `check` (a true `ok` passes). Header-only.
 */
#ifndef ATTNMETA_TESTS_NULL_CONTEXT_H
#define ATTNMETA_TESTS_NULL_CONTEXT_H

#include <stdint.h>

#include "attnmeta/attnmeta.h"

typedef void (*amt_check_fn)(int ok, const char *what);

/* ctx: an open context, for the one call whose NULL is the step. */
static inline void amt_null_context_calls(attnmeta_context *ctx, amt_check_fn check) {
  static const int32_t qsl[2] = {0, 1};
  int32_t out[4] = {5, 5, 5, 5};
  attnmeta_launch_config c = attnmeta_launch_config_default();
  attnmeta_step s;
  void *p = NULL, *not_ours = (void *)(uintptr_t)1;
  attnmeta_step_init(&s);
  s.query_start_loc = qsl;
  s.token_to_req = out;
  check(attnmeta_build_step(NULL, NULL, NULL) == ATTNMETA_ERR_INVALID_CONTEXT, "build_step(NULL, NULL)");
  check(attnmeta_build_step(NULL, &s, NULL) == ATTNMETA_ERR_INVALID_CONTEXT, "build_step(NULL, step)");
  check(attnmeta_build_step(ctx, NULL, NULL) == ATTNMETA_ERR_NULL_POINTER, "build_step(ctx, NULL)");
  check(attnmeta_token_to_req(NULL, qsl, 1, -1, 1, out, NULL) == ATTNMETA_ERR_INVALID_CONTEXT,
        "token_to_req(NULL)");
  check(out[0] == 5, "a NULL-context call wrote");
  check(attnmeta_set_launch_config(NULL, &c) == ATTNMETA_ERR_INVALID_CONTEXT, "set_launch_config(NULL)");
  check(attnmeta_device_alloc(NULL, 16, &p) == ATTNMETA_ERR_INVALID_CONTEXT, "device_alloc(NULL)");
  check(attnmeta_device_free(NULL, NULL) == ATTNMETA_ERR_INVALID_CONTEXT, "device_free(NULL, NULL)");
  check(attnmeta_device_free(NULL, not_ours) == ATTNMETA_ERR_INVALID_CONTEXT, "device_free(NULL, ptr)");
  check(attnmeta_copy_to_device(NULL, out, qsl, 4) == ATTNMETA_ERR_INVALID_CONTEXT, "copy_to_device(NULL)");
  check(attnmeta_copy_to_host(NULL, out, qsl, 4) == ATTNMETA_ERR_INVALID_CONTEXT, "copy_to_host(NULL)");
  check(attnmeta_synchronize(NULL, NULL) == ATTNMETA_ERR_INVALID_CONTEXT, "synchronize(NULL)");
  check(attnmeta_close(NULL) == ATTNMETA_OK, "close(NULL)");
  check(attnmeta_last_error(NULL) != NULL, "last_error(NULL)");
  check(attnmeta_context_device_name(NULL) != NULL, "context_device_name(NULL)");
  check(attnmeta_context_device(NULL) == -1, "context_device(NULL)");
  check(attnmeta_context_backend(NULL) == ATTNMETA_BACKEND_AUTO, "context_backend(NULL)");
  attnmeta_step_init(NULL); /* no crash */
}

#endif /* ATTNMETA_TESTS_NULL_CONTEXT_H */
