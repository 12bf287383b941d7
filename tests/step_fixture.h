// SPDX-License-Identifier: Apache-2.0
/*
 * The valid step the argument tests break one field at a time: R = 3,
 * T = 6, C = 8, a block table of 4 columns (block size 4), its inputs on
 * the device and an arena of poisoned output slices. Also the parameter
 * list of such a table of cases (every backend x every case).
 */
#ifndef ATTNMETA_TESTS_STEP_FIXTURE_H
#define ATTNMETA_TESTS_STEP_FIXTURE_H

#include <criterion/parameterized.h>
#include <stddef.h>
#include <stdint.h>

#include "attnmeta/attnmeta.h"

#define AMT_POISON_BYTE 0x5A
#define AMT_ARENA_BYTES 8192
#define AMT_SLICE 512 /* bytes per output in the arena */

typedef struct amt_step_fixture {
  attnmeta_context *ctx;
  unsigned char *d_in, *d_arena;
  attnmeta_step step; /* the inputs and sizes; the caller adds the outputs */
} amt_step_fixture;

/* Opens device 0 of `kind` (skipping the test when it is not there) with
 * a fixture's device memory: in_bytes for its inputs, arena_bytes of
 * outputs holding AMT_POISON_BYTE. */
attnmeta_context *amt_fixture_device(attnmeta_backend kind, unsigned char **d_in, size_t in_bytes,
                                     unsigned char **d_arena, size_t arena_bytes);

/* Opens device 0 of `kind` (skipping the test when it is not there),
 * uploads the inputs and poisons the arena. */
void amt_step_fixture_open(amt_step_fixture *f, attnmeta_backend kind);
void amt_step_fixture_close(amt_step_fixture *f);

/* Output slice k of the arena. */
void *amt_slice(const amt_step_fixture *f, int k);

/* The offset of the first arena byte that no longer holds the poison, or
 * -1 when none was written. */
long amt_first_written(const amt_step_fixture *f);

/* One parameterized run: a backend and a case index. */
typedef struct amt_case_param {
  int backend;
  int index;
} amt_case_param;

/* Every test backend x case index 0 .. ncases - 1. */
struct criterion_test_params amt_case_params(int ncases);
/* The same, only the indices `keep` says 1 for. */
struct criterion_test_params amt_case_params_where(int ncases, int (*keep)(int index));

/* One int parameter a case index 0 .. n - 1. */
struct criterion_test_params amt_index_params(int n);

#endif /* ATTNMETA_TESTS_STEP_FIXTURE_H */
