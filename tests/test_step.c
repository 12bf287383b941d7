// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta_build_step and attnmeta_token_to_req against the conformance
 * vectors (the .amv files of conformance/vectors/: the case table of cases.c run through the
 * naive reference by gen_vectors.c), one Criterion test per (backend x
 * vector), each under every launch configuration of the backend (or one
 * test per configuration with env ATTNMETA_TEST_PER_CONFIG=1). The vector
 * runner of vecrun.c checks every element of a guarded, poisoned arena
 * (see vecrun.h for the variants run).
 *
 * Env ATTNMETA_TEST_CASES=name,name runs only those vectors (a vector is
 * named after its case); ATTNMETA_TEST_BACKENDS=cpu,cuda only those
 * backends; ATTNMETA_TEST_VECTORS=DIR or FILE,FILE other vector files.
 *
 * Also here: every case of the table has its vector, and every case's data
 * raises the error flags the table says it does.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "cases.h"
#include "cases_dsv4.h"
#include "harness.h"
#include "reference.h"
#include "attnmeta/conformance/vecfile.h"
#include "attnmeta/conformance/vecrun.h"

#ifndef ATTNMETA_VECTOR_DIR
#define ATTNMETA_VECTOR_DIR "conformance/vectors"
#endif
#define MAX_MESSAGES 24

/* The vector files the suite runs. */
static const char *vector_spec(void) {
  const char *env = getenv("ATTNMETA_TEST_VECTORS");
  return env && *env ? env : ATTNMETA_VECTOR_DIR;
}

/* ------------------------------------------------------------ the tests */

typedef struct step_param {
  int backend;  /* attnmeta_backend */
  int config;   /* index in amt_launch_configs, -1 = all of them */
  int file;     /* index in the sorted file list; -1: the files do not load */
  char name[AMV_NAME_MAX];
} step_param;

static void free_params(struct criterion_test_params *crp) { cr_free(crp->params); }

/* Every vector name of every file (NULL on a load error, message in err). */
typedef struct vector_list {
  char **paths;
  int nfiles;
  int n;
  int *file;
  char (*name)[AMV_NAME_MAX];
} vector_list;

static void list_free(vector_list *l) {
  amv_free_list(l->paths, l->nfiles);
  free(l->file);
  free(l->name);
  memset(l, 0, sizeof *l);
}

static int list_vectors(vector_list *l, char *err, size_t errsize) {
  int f;
  memset(l, 0, sizeof *l);
  l->nfiles = amv_list_files(vector_spec(), &l->paths, err, errsize);
  if (l->nfiles < 0) {
    l->nfiles = 0;
    return -1;
  }
  for (f = 0; f < l->nfiles; f++) {
    amv_file af;
    int i;
    void *p1, *p2;
    if (amv_load_headers(l->paths[f], &af, err, errsize)) return -1;
    p1 = realloc(l->file, (size_t)(l->n + af.nvectors + 1) * sizeof *l->file);
    p2 = realloc(l->name, (size_t)(l->n + af.nvectors + 1) * sizeof *l->name);
    if (p1) l->file = p1;
    if (p2) l->name = p2;
    if (!p1 || !p2) {
      snprintf(err, errsize, "out of memory");
      amv_file_free(&af);
      return -1;
    }
    for (i = 0; i < af.nvectors; i++) {
      l->file[l->n] = f;
      memcpy(l->name[l->n], af.vectors[i].name, AMV_NAME_MAX);
      l->n++;
    }
    amv_file_free(&af);
  }
  return 0;
}

ParameterizedTestParameters(step, cases) {
  attnmeta_backend be[AMT_MAX_BACKENDS];
  const int nb = amt_test_backends(be);
  const int split = amt_split_configs();
  const amt_launch *cfg;
  vector_list l;
  char err[512];
  size_t n = 0, cap = 1;
  int i, j, c;
  step_param *ps;
  if (list_vectors(&l, err, sizeof err)) { /* one test that fails and says why */
    list_free(&l);
    ps = cr_calloc(1, sizeof *ps);
    ps->backend = (int)ATTNMETA_BACKEND_CPU;
    ps->config = -1;
    ps->file = -1;
    return cr_make_param_array(step_param, ps, 1, free_params);
  }
  for (i = 0; i < nb; i++)
    cap += (size_t)(split ? amt_launch_configs(be[i], &cfg) : 1) * (size_t)l.n;
  ps = cr_calloc(cap, sizeof *ps);
  for (i = 0; i < nb; i++) {
    const int ncfg = split ? amt_launch_configs(be[i], &cfg) : 1;
    for (j = 0; j < ncfg; j++)
      for (c = 0; c < l.n; c++) {
        if (!amt_case_selected(l.name[c])) continue;
        ps[n].backend = (int)be[i];
        ps[n].config = split ? j : -1;
        ps[n].file = l.file[c];
        memcpy(ps[n].name, l.name[c], AMV_NAME_MAX);
        n++;
      }
  }
  list_free(&l);
  return cr_make_param_array(step_param, ps, n, free_params);
}

typedef struct reporter {
  const char *backend, *file;
  int messages;
} reporter;

static void report_failure(void *user, const amv_failure *f) {
  reporter *r = user;
  if (r->messages++ >= MAX_MESSAGES) {
    if (r->messages == MAX_MESSAGES + 1)
      cr_expect_fail("backend=%s vector=%s: further failures suppressed", r->backend, f->vector);
    return;
  }
  cr_expect_fail("backend=%s file=%s %s", r->backend, r->file, f->text);
}

ParameterizedTest(step_param *param, step, cases) {
  const attnmeta_backend kind = (attnmeta_backend)param->backend;
  char err[512];
  vector_list l;
  amv_file af;
  amv_runner runner;
  amv_outcome outcome;
  reporter rep;
  attnmeta_context *ctx;

  if (param->file < 0) {
    if (list_vectors(&l, err, sizeof err) == 0) snprintf(err, sizeof err, "(loads now)");
    list_free(&l);
    cr_assert_fail("the conformance vectors (%s) do not load: %s", vector_spec(), err);
  }
  ctx = amt_open_or_skip(kind); /* first: a backend that is not there costs no parsing */
  memset(&l, 0, sizeof l);
  l.nfiles = amv_list_files(vector_spec(), &l.paths, err, sizeof err);
  cr_assert(l.nfiles > param->file, "vector files changed under the test: %s", err);
  if (amv_load(l.paths[param->file], param->name, &af, err, sizeof err) || af.nvectors != 1) {
    list_free(&l);
    cr_assert_fail("vector %s: %s", param->name, err);
  }

  memset(&rep, 0, sizeof rep);
  rep.backend = amt_backend_label(kind);
  rep.file = l.paths[param->file];
  memset(&runner, 0, sizeof runner);
  runner.ctx = ctx;
  runner.nconfigs = amt_launch_configs(kind, &runner.configs);
  runner.config_only = param->config;
  runner.report = report_failure;
  runner.user = &rep;
  amv_run_vector(&runner, &af.vectors[0], &outcome);
  if (outcome.result == AMV_SKIP) /* every backend of this library does every vector */
    cr_expect_fail("backend=%s file=%s vector=%s: not supported: %s", rep.backend, rep.file,
                   param->name, outcome.reason);
  cr_expect(outcome.launches > 0, "vector=%s: nothing was run", param->name);

  amv_file_free(&af);
  list_free(&l);
  attnmeta_close(ctx);
}

/* Every case of the table has its vector, and vector names are unique. */
Test(vectors, cover_case_table) {
  vector_list l;
  char err[512];
  int c, i, j;
  if (list_vectors(&l, err, sizeof err)) {
    list_free(&l);
    cr_assert_fail("the conformance vectors (%s) do not load: %s", vector_spec(), err);
  }
  for (c = 0; c < amt_num_cases; c++) {
    int found = 0;
    for (i = 0; i < l.n && !found; i++) found = strcmp(l.name[i], amt_cases[c].name) == 0;
    cr_expect(found, "case %s has no vector in %s (run ci/vectors.sh)", amt_cases[c].name,
              vector_spec());
  }
  for (c = 0; c < amd_num_cases; c++) {
    int found = 0;
    for (i = 0; i < l.n && !found; i++) found = strcmp(l.name[i], amd_cases[c].name) == 0;
    cr_expect(found, "DSV4 case %s has no vector in %s (run ci/vectors.sh)", amd_cases[c].name,
              vector_spec());
  }
  for (i = 0; i < l.n; i++)
    for (j = i + 1; j < l.n; j++)
      cr_expect(strcmp(l.name[i], l.name[j]) != 0, "vector %s in both %s and %s", l.name[i],
                l.paths[l.file[i]], l.paths[l.file[j]]);
  list_free(&l);
}

/* The case table itself: the data must raise what each case says it does. */
Test(cases, declared_flags) {
  int c, k;
  for (c = 0; c < amt_num_cases; c++) {
    amt_batch *b = amt_materialize(&amt_cases[c]);
    int32_t seen = 0;
    for (k = 0; k < b->nranks; k++) {
      amr_output *o = amt_reference_outputs(b, k);
      seen |= o->request_flags | o->slot_flags;
      amr_free(o);
    }
    cr_expect((seen & b->expect_flags) == b->expect_flags,
              "case=%s: case table error, reference raises 0x%x, case expects 0x%x",
              amt_cases[c].name, (unsigned)seen, (unsigned)b->expect_flags);
    amt_batch_free(b);
  }
}
