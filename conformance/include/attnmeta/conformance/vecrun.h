// SPDX-License-Identifier: Apache-2.0
/*
 * Runs one conformance vector on a backend and compares every element: the
 * engine shared by the Criterion suite (test_step.c) and the conformance
 * runner (tools/cli_conformance.c). Needs only the public header.
 *
 * Every output lives in one device arena between guard zones; the whole
 * arena is poisoned before each launch and compared after it with an
 * expected image: the vector's values where it gives them, poison wherever
 * nothing may be written (guards, row-stride gaps, rows at or past
 * num_tokens, outputs not asked for), nothing where the vector says
 * "unchecked".
 *
 * Each (launch config, rank) runs these variants:
 *   all                 every product, every input, error word starting at 0
 *   all_no_error_word   the same without an error word
 *   alone_<product>     that product only, only the inputs it needs, error
 *                       word starting with bit 30 set (which must survive)
 *   token_to_req_api    attnmeta_token_to_req (first rank block only)
 */
#ifndef ATTNMETA_CONFORMANCE_VECRUN_H
#define ATTNMETA_CONFORMANCE_VECRUN_H

#include <stdint.h>

#include "attnmeta/attnmeta.h"
#include "vecfile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct amv_launch {
  const char *name;
  attnmeta_launch_config config;
} amv_launch;

/* The launch-config sweep of a backend kind (CPU, or the GPU list). */
int amv_launch_sweep(attnmeta_backend kind, const amv_launch **out);

typedef struct amv_failure {
  const char *vector;
  int32_t rank;
  const char *config, *variant;
  const char *product; /* an output name, "error_word", or "" when a call failed */
  int64_t index;       /* element of the device buffer (negative: the front guard) */
  int64_t expected, got;
  int64_t wrong;       /* wrong elements in this buffer */
  char where[192];     /* "index=E (row R col C)" and such */
  char text[640];      /* the whole failure on one line */
} amv_failure;

/* The failure and the strings it points to are valid only during the call:
 * a callback that keeps one copies what it needs. */
typedef void (*amv_report_fn)(void *user, const amv_failure *failure);

typedef struct amv_runner {
  attnmeta_context *ctx;
  const amv_launch *configs; /* nconfigs == 0: the context's current config */
  int nconfigs;
  int config_only;           /* >= 0: run configs[config_only] alone */
  amv_report_fn report;      /* every failure; may be NULL */
  void *user;
} amv_runner;

enum { AMV_PASS, AMV_FAIL, AMV_SKIP };

typedef struct amv_outcome {
  int result;
  int64_t failures; /* failures reported */
  int64_t launches; /* operations run */
  char reason[384]; /* AMV_SKIP: why */
} amv_outcome;

void amv_run_vector(const amv_runner *runner, const amv_vector *vector, amv_outcome *outcome);
/* The engine of "op topk" vectors (attnmeta_convert_topk), which
 * amv_run_vector calls for them. Each (launch config, rank) runs the
 * vector's mode twice: with an error word starting with bit 30 set (which
 * must survive) and without one; `out` and `valid_count` lie between
 * poisoned guard zones, the row-stride gaps of `out` must stay poisoned. */
void amv_run_topk(const amv_runner *runner, const amv_vector *vector, amv_outcome *outcome);
/* The engine of "op pool" vectors (attnmeta_build_pool_indices), which
 * amv_run_vector calls for them. Each launch config runs every output of
 * the vector in one launch twice: with an error word starting with bit 30
 * set (which must survive) and without one; each output lies between
 * poisoned guard zones, its row-stride gaps and the elements the vector
 * marks untouched must stay poisoned. */
void amv_run_pool(const amv_runner *runner, const amv_vector *vector, amv_outcome *outcome);

#ifdef __cplusplus
}
#endif

#endif /* ATTNMETA_CONFORMANCE_VECRUN_H */
