// SPDX-License-Identifier: Apache-2.0
/*
 * Runs a case of the pool operation's draft decode lists against the
 * naive reference (draft_reference.c) on every backend present and every
 * launch configuration of the backend's sweep plus a few of the pool
 * kernel's own: the wanted outputs in poisoned buffers between guard
 * zones, checked element by element (guards and stride gaps included),
 * and the error word.
 */
#ifndef ATTNMETA_TESTS_DRAFT_RUN_H
#define ATTNMETA_TESTS_DRAFT_RUN_H

#include <stdint.h>

#include "draft_reference.h"
#include "harness.h"

#define DRAFT_POISON ((int32_t)0x5A5A5A5A)

enum { DRAFT_WANT_INDICES = 1, DRAFT_WANT_INDPTR = 2, DRAFT_WANT_BOTH = 3 };

typedef struct draft_case {
  const char *name;
  amr_draft_input in;
  int want;
} draft_case;

/* The reference's outputs for c, each [steps][stride] of poison first
 * (the caller frees them); returns its flags. */
int32_t draft_reference(const draft_case *c, int32_t **indices, int32_t **indptr);

/* The case everywhere; returns the reference's flags. */
int32_t draft_run_everywhere(const draft_case *c);

/* The case on every backend present at each of the n launch
 * configurations (those of more than one thread a block skipped on the
 * CPU backend), with the error word; returns the reference's flags. */
int32_t draft_run_configs(const draft_case *c, const amt_launch *configs, int n);

#endif /* ATTNMETA_TESTS_DRAFT_RUN_H */
