// SPDX-License-Identifier: Apache-2.0
/* Shared test plumbing. See harness.h. */
#include "harness.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *amt_backend_label(attnmeta_backend kind) {
  switch (kind) {
    case ATTNMETA_BACKEND_CPU: return "cpu";
    case ATTNMETA_BACKEND_CUDA: return "cuda";
    case ATTNMETA_BACKEND_HIP: return "hip";
    default: return "auto";
  }
}

/* Is `name` in the comma list `list` (case-insensitive, spaces ignored)? */
int amt_listed(const char *list, const char *name) {
  const size_t n = strlen(name);
  const char *p = list;
  while (*p) {
    size_t i = 0;
    while (*p == ' ' || *p == ',') p++;
    while (p[i] && p[i] != ',' && p[i] != ' ') i++;
    if (i == n) {
      size_t j = 0;
      while (j < n && tolower((unsigned char)p[j]) == tolower((unsigned char)name[j])) j++;
      if (j == n) return 1;
    }
    p += i;
  }
  return 0;
}

int amt_test_backends(attnmeta_backend out[AMT_MAX_BACKENDS]) {
  static const attnmeta_backend all[AMT_MAX_BACKENDS] = {
      ATTNMETA_BACKEND_CPU, ATTNMETA_BACKEND_CUDA, ATTNMETA_BACKEND_HIP};
  const char *env = getenv("ATTNMETA_TEST_BACKENDS");
  int i, n = 0;
  for (i = 0; i < AMT_MAX_BACKENDS; i++)
    if (!env || !*env || amt_listed(env, "all") || amt_listed(env, amt_backend_label(all[i])))
      out[n++] = all[i];
  return n;
}

int amt_case_selected(const char *name) {
  const char *env = getenv("ATTNMETA_TEST_CASES");
  return !env || !*env || amt_listed(env, name);
}

int amt_split_configs(void) {
  const char *env = getenv("ATTNMETA_TEST_PER_CONFIG");
  return env && *env && strcmp(env, "0") != 0;
}

attnmeta_context *amt_open_or_null(attnmeta_backend kind) {
  attnmeta_context *ctx = NULL;
  const attnmeta_status st = attnmeta_open(&ctx, kind, 0);
  const char *required = getenv("ATTNMETA_TEST_REQUIRE_BACKENDS");
  if ((st == ATTNMETA_ERR_NO_DEVICE || st == ATTNMETA_ERR_BACKEND_UNAVAILABLE) &&
      !(required && amt_listed(required, amt_backend_label(kind))))
    return NULL;
  cr_assert(st == ATTNMETA_OK && ctx, "backend=%s attnmeta_open: %s (%s)",
            amt_backend_label(kind), attnmeta_status_string(st), attnmeta_open_error());
  return ctx;
}

attnmeta_context *amt_open_or_skip(attnmeta_backend kind) {
  attnmeta_context *ctx = amt_open_or_null(kind);
  if (!ctx)
    cr_skip_test("backend %s not available (%s)", amt_backend_label(kind), attnmeta_open_error());
  return ctx;
}

attnmeta_context *amt_cpu_with_grid(int32_t grid) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  attnmeta_launch_config cfg = attnmeta_launch_config_default();
  cfg.grid = grid;
  cr_assert_eq(attnmeta_set_launch_config(ctx, &cfg), ATTNMETA_OK, "grid %d: %s", grid,
               attnmeta_last_error(ctx));
  return ctx;
}

void amt_fill32(int32_t *a, int64_t n, int32_t value) {
  int64_t i;
  for (i = 0; i < n; ++i) a[i] = value;
}

attnmeta_context *amt_cpu;

void amt_cpu_open(void) { amt_cpu = amt_open_or_skip(ATTNMETA_BACKEND_CPU); }

void amt_cpu_close(void) {
  attnmeta_close(amt_cpu);
  amt_cpu = NULL;
}

int amt_launch_configs(attnmeta_backend kind, const amt_launch **out) {
  return amv_launch_sweep(kind, out);
}

void amt_step_each_config(attnmeta_context *ctx, attnmeta_backend kind, const char *name,
                          const attnmeta_step *step, const amt_step_hooks *hooks) {
  const amt_launch *configs;
  const int ncfg = amt_launch_configs(kind, &configs);
  int c;
  for (c = 0; c < ncfg; c++) {
    char where[160];
    attnmeta_status st;
    snprintf(where, sizeof where, "%s %s %s", amt_backend_label(kind), configs[c].name, name);
    cr_assert_eq(attnmeta_set_launch_config(ctx, &configs[c].config), ATTNMETA_OK);
    hooks->poison(hooks->arg);
    st = attnmeta_build_step(ctx, step, NULL);
    cr_assert_eq(st, ATTNMETA_OK, "%s: %s", where, attnmeta_last_error(ctx));
    cr_assert_eq(attnmeta_synchronize(ctx, NULL), ATTNMETA_OK);
    if (hooks->check(hooks->arg, where)) break;
  }
}

void amt_step_every_case(int ncases,
                         void (*open)(attnmeta_context *ctx, int n, void *arg, amt_step_case *c),
                         void (*close)(attnmeta_context *ctx, void *arg), void *arg) {
  attnmeta_backend be[AMT_MAX_BACKENDS];
  const int nb = amt_test_backends(be);
  int b, n;
  for (b = 0; b < nb; b++) {
    attnmeta_context *ctx = amt_open_or_null(be[b]);
    if (!ctx) continue;
    for (n = 0; n < ncases; n++) {
      amt_step_case c;
      open(ctx, n, arg, &c);
      amt_step_each_config(ctx, be[b], c.name, c.step, &c.hooks);
      close(ctx, arg);
    }
    attnmeta_close(ctx);
  }
}

void amt_each_backend_config(const char *name, const amt_launch *configs, int n,
                             const amt_backend_run *r) {
  attnmeta_backend kinds[AMT_MAX_BACKENDS];
  const int nk = amt_test_backends(kinds);
  int k, i, ran = 0;
  for (k = 0; k < nk; k++) {
    attnmeta_context *ctx = amt_open_or_null(kinds[k]);
    if (!ctx) continue;
    r->upload(ctx, r->arg);
    for (i = 0; i < n; i++) {
      const amt_launch *l = &configs[i];
      char label[256];
      if (kinds[k] == ATTNMETA_BACKEND_CPU && l->config.block > 1) continue;
      cr_assert(attnmeta_set_launch_config(ctx, &l->config) == ATTNMETA_OK,
                "set_launch_config %s: %s", l->name, attnmeta_last_error(ctx));
      snprintf(label, sizeof label, "%s backend=%s config=%s", name, amt_backend_label(kinds[k]),
               l->name);
      r->run(ctx, label, r->arg);
      ran++;
    }
    r->release(ctx, r->arg);
    attnmeta_close(ctx);
  }
  cr_assert(ran > 0, "%s: no backend ran", name);
}

void *amt_dev_alloc(attnmeta_context *ctx, size_t bytes) {
  void *p = NULL;
  const attnmeta_status st = attnmeta_device_alloc(ctx, bytes, &p);
  if (st != ATTNMETA_OK || !p)
    cr_assert_fail("attnmeta_device_alloc(%zu) failed: %s (%s)", bytes,
                   attnmeta_status_string(st), attnmeta_last_error(ctx));
  return p;
}

void amt_dev_free(attnmeta_context *ctx, void *ptr) {
  const attnmeta_status st = attnmeta_device_free(ctx, ptr);
  if (st != ATTNMETA_OK)
    cr_expect_fail("attnmeta_device_free failed: %s (%s)", attnmeta_status_string(st),
                   attnmeta_last_error(ctx));
}

void amt_to_dev(attnmeta_context *ctx, void *dst, const void *src, size_t bytes) {
  const attnmeta_status st = attnmeta_copy_to_device(ctx, dst, src, bytes);
  if (st != ATTNMETA_OK)
    cr_assert_fail("attnmeta_copy_to_device(%zu) failed: %s (%s)", bytes,
                   attnmeta_status_string(st), attnmeta_last_error(ctx));
}

void amt_to_host(attnmeta_context *ctx, void *dst, const void *src, size_t bytes) {
  attnmeta_status st = attnmeta_synchronize(ctx, NULL);
  if (st != ATTNMETA_OK)
    cr_assert_fail("attnmeta_synchronize failed: %s (%s)", attnmeta_status_string(st),
                   attnmeta_last_error(ctx));
  st = attnmeta_copy_to_host(ctx, dst, src, bytes);
  if (st != ATTNMETA_OK)
    cr_assert_fail("attnmeta_copy_to_host(%zu) failed: %s (%s)", bytes,
                   attnmeta_status_string(st), attnmeta_last_error(ctx));
}

void *amt_upload(attnmeta_context *ctx, const void *src, size_t bytes) {
  void *d;
  if (!src) return NULL;
  d = amt_dev_alloc(ctx, bytes ? bytes : 8);
  if (bytes) amt_to_dev(ctx, d, src, bytes);
  return d;
}
