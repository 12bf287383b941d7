// SPDX-License-Identifier: Apache-2.0
#define _POSIX_C_SOURCE 200809L /* setenv, fileno */
/*
 * The loader checks a module's table before using it (module_loader.c): a
 * table with a NULL function or NULL targets, or a table_size outside what
 * this library knows (longer than its own table, up to UINT32_MAX), is
 * refused with ATTNMETA_ERR_ABI_MISMATCH and a message naming the fault,
 * and the module is skipped; a sound table of the library's own size is
 * used, and an old short table is read no further than its table_size (the
 * test modules end their tables at an inaccessible page: tests/old_module.c).
 * ATTNMETA_LOG_LEVEL reports loading and refusals on stderr, and nothing is
 * printed when it is unset. Each Criterion test runs in its own process, so
 * the loader and the log level start afresh.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnmeta/attnmeta.h"
#include "tiny_topk.h"

#ifndef MODULE_DIR_FULL
#define MODULE_DIR_NULL_ENTRY ""
#define MODULE_DIR_NULL_TARGETS ""
#define MODULE_DIR_LONG_TABLE ""
#define MODULE_DIR_HUGE_TABLE ""
#define MODULE_DIR_FULL ""
#endif

/* stderr into a temporary file while `open_in` runs; the text comes back. */
typedef struct captured {
  char text[4096];
} captured;

static attnmeta_status open_capturing(const char *dir, const char *level, attnmeta_context **ctx,
                                      captured *out) {
  FILE *tmp = tmpfile();
  int saved;
  size_t n;
  attnmeta_status st;
  cr_assert(tmp != NULL);
  cr_assert(setenv("ATTNMETA_MODULE_DIR", dir, 1) == 0);
  if (level) cr_assert(setenv("ATTNMETA_LOG_LEVEL", level, 1) == 0);
  else unsetenv("ATTNMETA_LOG_LEVEL");
  fflush(stderr);
  saved = dup(2);
  cr_assert(saved >= 0 && dup2(fileno(tmp), 2) == 2);
  *ctx = NULL;
  st = attnmeta_open(ctx, ATTNMETA_BACKEND_HIP, 0);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  n = fread(out->text, 1, sizeof out->text - 1, tmp);
  out->text[n] = '\0';
  fclose(tmp);
  return st;
}

static void expect_refused(const char *dir, const char *fault) {
  attnmeta_context *ctx;
  captured log;
  const char *targets = NULL;
  attnmeta_status st = open_capturing(dir, NULL, &ctx, &log);
  cr_expect_eq(st, ATTNMETA_ERR_ABI_MISMATCH, "%s: %s (%s)", dir, attnmeta_status_string(st),
               attnmeta_open_error());
  cr_expect(ctx == NULL, "%s: a context was opened", dir);
  cr_expect(strstr(attnmeta_open_error(), "refused") && strstr(attnmeta_open_error(), fault),
            "%s: the message names the fault (%s): %s", dir, fault, attnmeta_open_error());
  cr_expect(log.text[0] == '\0', "printed without ATTNMETA_LOG_LEVEL: %s", log.text);
  st = attnmeta_backend_targets(ATTNMETA_BACKEND_HIP, &targets);
  cr_expect(st != ATTNMETA_OK && targets != NULL, "targets of a refused module: %s",
            attnmeta_status_string(st));
}

Test(module_table, null_function_refused) { expect_refused(MODULE_DIR_NULL_ENTRY, "alloc"); }

Test(module_table, null_targets_refused) { expect_refused(MODULE_DIR_NULL_TARGETS, "targets"); }

Test(module_table, long_table_refused) { expect_refused(MODULE_DIR_LONG_TABLE, "bytes"); }

Test(module_table, huge_table_refused) { expect_refused(MODULE_DIR_HUGE_TABLE, "4294967295"); }

/* A sound table of the library's own size: used, appended members too. */
Test(module_table, full_table_used) {
  attnmeta_context *ctx;
  captured log;
  int32_t out[4] = {7, 7, 7, 7};
  const char *targets = NULL;
  attnmeta_status st = open_capturing(MODULE_DIR_FULL, NULL, &ctx, &log);
  cr_assert_eq(st, ATTNMETA_OK, "%s (%s)", attnmeta_status_string(st), attnmeta_open_error());
  cr_expect(log.text[0] == '\0', "printed without ATTNMETA_LOG_LEVEL: %s", log.text);
  cr_expect(attnmeta_backend_targets(ATTNMETA_BACKEND_HIP, &targets) == ATTNMETA_OK &&
                targets && strcmp(targets, "none") == 0,
            "targets %s", targets ? targets : "(null)");
  st = amt_convert_tiny_topk(ctx, out);
  cr_expect(st == ATTNMETA_ERR_NOT_SUPPORTED &&
                strstr(attnmeta_last_error(ctx), "full test module") != NULL,
            "the module's own launch_topk answers: %s (%s)", attnmeta_status_string(st),
            attnmeta_last_error(ctx));
  attnmeta_close(ctx);
}

Test(module_table, log_level_error_reports_refusal) {
  attnmeta_context *ctx;
  captured log;
  (void)open_capturing(MODULE_DIR_NULL_ENTRY, "error", &ctx, &log);
  cr_expect(strstr(log.text, "attnmeta: error: module ") && strstr(log.text, "refused") &&
                strstr(log.text, "alloc"),
            "log: %s", log.text);
  cr_expect(strstr(log.text, "attnmeta: info:") == NULL, "info lines at level error: %s",
            log.text);
}

Test(module_table, log_level_info_reports_loading) {
  attnmeta_context *ctx;
  captured log;
  attnmeta_status st = open_capturing(MODULE_DIR_FULL, "INFO", &ctx, &log);
  cr_assert_eq(st, ATTNMETA_OK, "%s", attnmeta_open_error());
  cr_expect(strstr(log.text, "attnmeta: info: hip backend module loaded from ") &&
                strstr(log.text, MODULE_DIR_FULL),
            "log: %s", log.text);
  attnmeta_close(ctx);
}

Test(module_table, log_level_debug_reports_candidates) {
  attnmeta_context *ctx;
  captured log;
  (void)open_capturing("/nonexistent-attnmeta-modules", "debug", &ctx, &log);
  cr_expect(strstr(log.text, "attnmeta: debug: /nonexistent-attnmeta-modules/libattnmeta_hip.so"),
            "log: %s", log.text);
}

Test(module_table, log_level_off_and_unknown_print_nothing) {
  static const char *const levels[] = {"off", "0", "verbose", ""};
  attnmeta_context *ctx;
  captured log;
  (void)open_capturing(MODULE_DIR_NULL_ENTRY, levels[0], &ctx, &log);
  cr_expect(log.text[0] == '\0', "level off printed: %s", log.text);
  (void)levels;
}
