// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta_backend_runtime_versions: the CPU backend has no GPU runtime; a
 * module built before the query (tests/old_module.c, a table that ends at
 * copy_device) still loads and answers not supported; a module whose table
 * has the member gives its numbers; misuse is refused. Each Criterion test
 * runs in its own process, so ATTNMETA_MODULE_DIR is read afresh.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "attnmeta/attnmeta.h"

#ifndef OLD_MODULE_DIR
#define OLD_MODULE_DIR ""
#endif
#ifndef MODULE_DIR_FULL
#define MODULE_DIR_FULL ""
#endif

/* The status of the query on `kind`; *driver and *runtime start as -1. */
static attnmeta_status versions_of(attnmeta_backend kind, int *driver, int *runtime) {
  *driver = -1;
  *runtime = -1;
  return attnmeta_backend_runtime_versions(kind, driver, runtime);
}

Test(backend_versions, cpu_has_no_gpu_runtime) {
  int driver, runtime;
  cr_expect_eq(versions_of(ATTNMETA_BACKEND_CPU, &driver, &runtime), ATTNMETA_ERR_NOT_SUPPORTED);
  cr_expect(driver == 0 && runtime == 0, "driver %d, runtime %d", driver, runtime);
}

Test(backend_versions, null_pointers) {
  int driver = -1, runtime = -1;
  cr_expect_eq(attnmeta_backend_runtime_versions(ATTNMETA_BACKEND_CPU, NULL, &runtime),
               ATTNMETA_ERR_NULL_POINTER);
  cr_expect_eq(runtime, 0, "the pointer given is cleared");
  cr_expect_eq(attnmeta_backend_runtime_versions(ATTNMETA_BACKEND_CPU, &driver, NULL),
               ATTNMETA_ERR_NULL_POINTER);
  cr_expect_eq(driver, 0, "the pointer given is cleared");
  cr_expect_eq(attnmeta_backend_runtime_versions(ATTNMETA_BACKEND_CPU, NULL, NULL),
               ATTNMETA_ERR_NULL_POINTER);
}

Test(backend_versions, unknown_backend) {
  int driver, runtime;
  cr_expect_eq(versions_of((attnmeta_backend)77, &driver, &runtime), ATTNMETA_ERR_UNKNOWN_BACKEND);
  cr_expect(driver == 0 && runtime == 0);
  cr_expect_eq(versions_of(ATTNMETA_BACKEND_AUTO, &driver, &runtime),
               ATTNMETA_ERR_UNKNOWN_BACKEND);
  cr_expect(driver == 0 && runtime == 0);
}

/* The modules this build made: loaded, the runtime knows its own version;
 * not loaded, the same failure as the targets query. */
Test(backend_versions, gpu_backends_of_this_build) {
  static const attnmeta_backend kinds[] = {ATTNMETA_BACKEND_CUDA, ATTNMETA_BACKEND_HIP};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    const char *targets = "";
    int driver, runtime;
    const attnmeta_status st = versions_of(kinds[i], &driver, &runtime);
    cr_expect_eq(st, attnmeta_backend_targets(kinds[i], &targets), "backend %s",
                 attnmeta_backend_name(kinds[i]));
    if (st == ATTNMETA_OK)
      cr_expect(runtime > 0 && driver >= 0, "backend %s: driver %d, runtime %d",
                attnmeta_backend_name(kinds[i]), driver, runtime);
    else
      cr_expect(driver == 0 && runtime == 0);
  }
}

Test(backend_versions, module_without_the_query) {
  const char *targets = "";
  int driver, runtime;
  cr_assert_eq(setenv("ATTNMETA_MODULE_DIR", OLD_MODULE_DIR, 1), 0);
  cr_assert_eq(attnmeta_backend_targets(ATTNMETA_BACKEND_HIP, &targets), ATTNMETA_OK,
               "the old module does not load");
  cr_expect_eq(versions_of(ATTNMETA_BACKEND_HIP, &driver, &runtime), ATTNMETA_ERR_NOT_SUPPORTED);
  cr_expect(driver == 0 && runtime == 0, "driver %d, runtime %d", driver, runtime);
}

Test(backend_versions, module_with_the_query) {
  int driver, runtime;
  cr_assert_eq(setenv("ATTNMETA_MODULE_DIR", MODULE_DIR_FULL, 1), 0);
  cr_expect_eq(versions_of(ATTNMETA_BACKEND_HIP, &driver, &runtime), ATTNMETA_OK);
  cr_expect(driver == 12090 && runtime == 12040, "driver %d, runtime %d", driver, runtime);
}

Test(backend_versions, no_module) {
  int driver, runtime;
  cr_assert_eq(setenv("ATTNMETA_MODULE_DIR", "/nonexistent-attnmeta-modules", 1), 0);
  cr_expect_eq(versions_of(ATTNMETA_BACKEND_HIP, &driver, &runtime),
               ATTNMETA_ERR_BACKEND_UNAVAILABLE);
  cr_expect(driver == 0 && runtime == 0);
}
