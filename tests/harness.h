// SPDX-License-Identifier: Apache-2.0
/*
 * Shared test plumbing: which backends to run (env ATTNMETA_TEST_BACKENDS),
 * opening a context (skipping a backend that is not there, unless env
 * ATTNMETA_TEST_REQUIRE_BACKENDS names it), the launch
 * configurations, and device memory helpers that abort the test on failure.
 */
#ifndef ATTNMETA_TESTS_HARNESS_H
#define ATTNMETA_TESTS_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "attnmeta/attnmeta.h"
#include "attnmeta/conformance/vecrun.h"

#define AMT_MAX_BACKENDS 3

/* Backends to test, in order CPU, CUDA, HIP, filtered by the env var.
 * Never touches a device. Returns how many were written to out. */
int amt_test_backends(attnmeta_backend out[AMT_MAX_BACKENDS]);
const char *amt_backend_label(attnmeta_backend kind);

/* Opens device 0 of `kind`; skips the test when the backend has no module
 * or no device (fails it instead when env ATTNMETA_TEST_REQUIRE_BACKENDS,
 * a comma list, names the backend), fails it on any other error. */
attnmeta_context *amt_open_or_skip(attnmeta_backend kind);
/* The same, but NULL instead of a skip (the test goes on with the other
 * backends). */
attnmeta_context *amt_open_or_null(attnmeta_backend kind);

/* The CPU backend with every launch on a forced grid of `grid` blocks
 * (skipped as amt_open_or_skip skips). */
attnmeta_context *amt_cpu_with_grid(int32_t grid);

/* A suite's CPU context, open during each test: amt_cpu_open and
 * amt_cpu_close are the suite's .init and .fini (or called by them). */
extern attnmeta_context *amt_cpu;
void amt_cpu_open(void);
void amt_cpu_close(void);

/* Criterion's TestSuite(suite) whose tests start from amt_cpu and the
 * statement `prepare`. */
#define AMT_CPU_SUITE(suite, prepare)    \
  static void suite##_setup(void) {      \
    amt_cpu_open();                      \
    prepare;                             \
  }                                      \
  TestSuite(suite, .init = suite##_setup, .fini = amt_cpu_close)

typedef amv_launch amt_launch;

/* Launch configurations to test on `kind` (the sweep of vecrun.c). */
int amt_launch_configs(attnmeta_backend kind, const amt_launch **out);

/* A step's run under each launch configuration of `kind`: `poison(arg)`
 * its outputs, build `step` (which must succeed), synchronize, then
 * `check(arg, where)` (where names the backend, configuration and `name`);
 * stops at the first configuration whose check returns non-zero (it has
 * failed the test). */
typedef struct amt_step_hooks {
  void (*poison)(void *arg);
  int (*check)(void *arg, const char *where);
  void *arg;
} amt_step_hooks;
void amt_step_each_config(attnmeta_context *ctx, attnmeta_backend kind, const char *name,
                          const attnmeta_step *step, const amt_step_hooks *hooks);

/* One case's inputs on one backend and a run of it (another operation
 * than the step): upload puts them on ctx's device, run launches and
 * checks under the current launch config, release frees them. */
typedef struct amt_backend_run {
  void (*upload)(attnmeta_context *ctx, void *arg);
  void (*run)(attnmeta_context *ctx, const char *label, void *arg);
  void (*release)(attnmeta_context *ctx, void *arg);
  void *arg;
} amt_backend_run;
/* On every test backend: upload, run under each of the n configs (on the
 * CPU backend those of one-thread blocks only: it runs one thread a
 * block), release. Fails the test when nothing ran. */
void amt_each_backend_config(const char *name, const amt_launch *configs, int n,
                             const amt_backend_run *r);

/* What one case of a table gives amt_step_every_case: its name, its step
 * on the device and the hooks that poison and check its outputs. */
typedef struct amt_step_case {
  const char *name;
  const attnmeta_step *step;
  amt_step_hooks hooks;
} amt_step_case;
/* Every case n < ncases on every test backend: open(ctx, n, arg, &c) makes
 * the case's data (device buffers, the reference) and fills c, the step
 * runs under each launch config (amt_step_each_config), then close(ctx,
 * arg) frees what open made. */
void amt_step_every_case(int ncases,
                         void (*open)(attnmeta_context *ctx, int n, void *arg, amt_step_case *c),
                         void (*close)(attnmeta_context *ctx, void *arg), void *arg);

/* Device memory; every failure fails the test with the library's message. */
void *amt_dev_alloc(attnmeta_context *ctx, size_t bytes);
void amt_dev_free(attnmeta_context *ctx, void *ptr);
void amt_to_dev(attnmeta_context *ctx, void *dst, const void *src, size_t bytes);
void amt_to_host(attnmeta_context *ctx, void *dst, const void *src, size_t bytes);
/* A device copy of `bytes` bytes at src (8 bytes allocated for none), NULL
 * for a NULL src. */
void *amt_upload(attnmeta_context *ctx, const void *src, size_t bytes);

/* Sets the n entries of a to `value` (an output's poison before a call). */
void amt_fill32(int32_t *a, int64_t n, int32_t value);

/* Is `name` in the comma list `list` (case-insensitive)? */
int amt_listed(const char *list, const char *name);
/* 1 unless env ATTNMETA_TEST_CASES (comma list of case names, which are
 * also the names of the conformance vectors) leaves it out. */
int amt_case_selected(const char *name);

/* 1 when env ATTNMETA_TEST_PER_CONFIG is set: one Criterion test per launch config. */
int amt_split_configs(void);

#endif /* ATTNMETA_TESTS_HARNESS_H */
