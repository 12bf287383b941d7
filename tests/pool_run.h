// SPDX-License-Identifier: Apache-2.0
/*
 * Runs a pool-operation case (attnmeta_build_pool_indices) against the
 * naive reference (conformance/generator/pool_reference.c) on every
 * backend present and every launch configuration of the backend's sweep
 * plus a few of the pool kernel's own: each wanted output in a poisoned
 * buffer between guard zones, checked element by element (guards and
 * stride gaps included), and the error word.
 */
#ifndef ATTNMETA_TESTS_POOL_RUN_H
#define ATTNMETA_TESTS_POOL_RUN_H

#include <stdint.h>

#include "harness.h"
#include "pool_reference.h"

#define POOL_POISON ((int32_t)0x5A5A5A5A)

/* What to build: a bit an output. */
enum {
  WANT_INDICES = 1,
  WANT_INDPTR = 2,
  WANT_PAGES = 4,
  WANT_LENS = 8,       /* cache_seqlens */
  WANT_EXPANDED = 16,  /* expanded_lens */
  WANT_TOPK_LENS = 32,
  WANT_TOPK_INDPTR = 64,
  WANT_TOKENS = 128,   /* token_table */
  WANT_SWA = 256,      /* swa_page_table */
  WANT_QUERY_INDPTR = 512,
  WANT_EVERY = 1023
};

/* The outputs by index, in the order of the WANT_* bits (WANT_x = 1 << OUT_x). */
enum {
  OUT_INDICES,
  OUT_INDPTR,
  OUT_PAGES,
  OUT_LENS,
  OUT_EXPANDED,
  OUT_TOPK_LENS,
  OUT_TOPK_INDPTR,
  OUT_TOKENS,
  OUT_SWA,
  OUT_QUERY_INDPTR,
  POOL_OUTPUTS
};

/* A case: host inputs and what is built. */
typedef struct pool_case {
  const char *name;
  amr_pool_input in; /* kv_indptr NULL with WANT_INDPTR | WANT_INDICES: placed by the scan */
  int want;
  int64_t req_to_token_elems; /* elements of req_to_token allocated */
} pool_case;

/* A case named `name` (kept, not copied) of B request rows over a pool of
 * `rows` rows of `cols` slots, `stride` apart (rows x stride elements
 * allocated): request row i reads pool row rpi[i] for len[i] tokens, pages
 * of 1; nothing wanted yet, every other input 0 or NULL. */
pool_case pool_case_over(const char *name, const int32_t *pool, int32_t rows, int32_t cols,
                         int64_t stride, const int64_t *rpi, const int64_t *len, int32_t B);

/* What a hand-worked case wants of one output: its first n values (values
 * NULL: not checked). */
typedef struct pool_want {
  const int32_t *values;
  int64_t n;
} pool_want;

/* The naive reference alone on c's inputs, each output c->want names in a
 * poisoned buffer: it raises no flag and writes want[i]'s values for every
 * output i checked. */
void pool_expect_reference(const pool_case *c, const pool_want want[POOL_OUTPUTS]);

/* The case everywhere (all launch configurations unless `few`: then the
 * automatic one and one forced grid); returns the reference's flags. */
int32_t pool_run_everywhere(const pool_case *c, int few);

/* The case on every backend at each of the n launch configurations (the
 * CPU backend: those of blocks of 0 or 1 threads), the error word checked. */
void pool_run_configs(const pool_case *c, const amt_launch *configs, int n);

/* One run at the launch configuration just set on ctx, its failures
 * labelled `label`; the error word passed and checked when error_word. */
typedef void (*pool_sweep_one)(attnmeta_context *ctx, const char *label, const void *arg,
                               int error_word);

/* Sets on ctx each launch configuration of kind's shared sweep, then (GPU
 * backends) the pool kernel's own GPU shapes, and calls one(arg) at each,
 * also without the error word at the first (`few`: the first and third
 * configurations only). Returns how many configurations ran. */
int pool_sweep(attnmeta_context *ctx, attnmeta_backend kind, const char *name, int few,
               pool_sweep_one one, const void *arg);

#endif /* ATTNMETA_TESTS_POOL_RUN_H */
