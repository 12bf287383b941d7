// SPDX-License-Identifier: Apache-2.0
/*
 * What `attnmeta info` reports: the file each backend was loaded from, and
 * the open error when ATTNMETA_BACKEND forces a backend that cannot open.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnmeta/attnmeta.h"

Test(diagnostics, cpu_backend_is_the_library_file) {
  const char *path = NULL;
  cr_assert_eq(attnmeta_backend_module_path(ATTNMETA_BACKEND_CPU, &path), ATTNMETA_OK);
  cr_assert(path && path[0], "no path for the CPU backend");
  cr_expect(strstr(path, "libattnmeta") != NULL, "CPU backend path %s is not the library", path);
  cr_expect_eq(access(path, R_OK), 0, "CPU backend path %s is not a readable file", path);
}

Test(diagnostics, module_path_of_gpu_backends) {
  static const attnmeta_backend kinds[] = {ATTNMETA_BACKEND_CUDA, ATTNMETA_BACKEND_HIP};
  size_t i;
  for (i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    const char *path = "poison";
    const char *targets = "";
    const attnmeta_status st = attnmeta_backend_module_path(kinds[i], &path);
    /* the same answer as the targets query: both load the module */
    cr_expect_eq(st, attnmeta_backend_targets(kinds[i], &targets), "backend %s",
                 attnmeta_backend_name(kinds[i]));
    if (st == ATTNMETA_OK) {
      cr_expect_eq(access(path, R_OK), 0, "module %s is not a readable file", path);
      cr_expect(strstr(path, attnmeta_backend_name(kinds[i])) != NULL, "module path %s", path);
    } else {
      cr_expect_str_empty(path, "a failed query leaves \"\", got %s", path);
    }
  }
}

Test(diagnostics, module_path_misuse) {
  const char *path = "poison";
  cr_expect_eq(attnmeta_backend_module_path(ATTNMETA_BACKEND_CPU, NULL), ATTNMETA_ERR_NULL_POINTER);
  cr_expect_eq(attnmeta_backend_module_path((attnmeta_backend)77, &path),
               ATTNMETA_ERR_UNKNOWN_BACKEND);
  cr_expect_str_empty(path);
  cr_expect_eq(attnmeta_backend_module_path(ATTNMETA_BACKEND_AUTO, &path),
               ATTNMETA_ERR_UNKNOWN_BACKEND);
}

/* Criterion runs each test in its own process: the variable stays there. */
Test(diagnostics, forced_backend_error_names_the_variable) {
  attnmeta_context *ctx = NULL;
  attnmeta_status st;
  int count = 0;
  attnmeta_backend_device_count(ATTNMETA_BACKEND_HIP, &count);
  if (count > 0) cr_skip_test("this machine has a HIP device");
  cr_assert_eq(setenv("ATTNMETA_BACKEND", "hip", 1), 0);
  st = attnmeta_open(&ctx, ATTNMETA_BACKEND_AUTO, 0);
  cr_assert_neq(st, ATTNMETA_OK);
  cr_expect_null(ctx);
  cr_expect(strstr(attnmeta_open_error(), "ATTNMETA_BACKEND=hip forces backend hip") != NULL,
            "open error does not name the variable: %s", attnmeta_open_error());
  /* an explicit backend is not forced by the variable: no such prefix */
  st = attnmeta_open(&ctx, ATTNMETA_BACKEND_HIP, 0);
  cr_assert_neq(st, ATTNMETA_OK);
  cr_expect(strstr(attnmeta_open_error(), "ATTNMETA_BACKEND") == NULL, "%s",
            attnmeta_open_error());
  /* the variable naming a backend that opens: no error */
  cr_assert_eq(setenv("ATTNMETA_BACKEND", "cpu", 1), 0);
  cr_expect_eq(attnmeta_open(&ctx, ATTNMETA_BACKEND_AUTO, 0), ATTNMETA_OK, "%s",
               attnmeta_open_error());
  cr_expect_eq(attnmeta_context_backend(ctx), ATTNMETA_BACKEND_CPU);
  attnmeta_close(ctx);
}
