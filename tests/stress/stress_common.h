// SPDX-License-Identifier: Apache-2.0
/*
 * Plumbing of the plain C stress and misuse tests: a tally that prints
 * "N passed, N failed", random batches with monotone
 * query_start_loc (so every product and flag is defined and the naive
 * reference of conformance/generator/reference.c gives the exact expected bytes), and the
 * comparison of one step's outputs against the reference.
 */
#ifndef ATTNMETA_STRESS_COMMON_H
#define ATTNMETA_STRESS_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "attnmeta/attnmeta.h"
#include "reference.h"

/* ---- tally (thread-safe) ---- */
void st_pass(void);
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
void st_failf(const char *fmt, ...);
int st_report(void); /* prints "N passed, N failed"; exit status */

#define ST_EXPECT(cond, ...) \
  do {                       \
    if (cond)                \
      st_pass();             \
    else                     \
      st_failf(__VA_ARGS__); \
  } while (0)

/* Iterations scale: env ATTNMETA_STRESS_ITERS (default `fallback`). */
int st_iters(int fallback);

/* ---- PRNG: the case table's splitmix64 (amt_rand of cases.h) ---- */
int64_t st_range(uint64_t *state, int64_t lo, int64_t hi); /* [lo, hi] */

/* ---- batches ---- */
typedef struct st_batch {
  amr_input in;        /* points at the arrays below */
  int32_t *qsl;        /* [R + 1] */
  int32_t *seq_lens;   /* [max(R, 1)] */
  int32_t *table;      /* [max(R * in_stride, 1)] */
  int64_t out_stride;
  amr_output *ref;     /* the reference outputs */
  int32_t ref_flags;   /* what the error word must receive with every product wanted */
} st_batch;

/* hostile: seq_lens below the query length or negative, negative block ids
 * and positions past the table (query_start_loc stays monotone). */
void st_batch_make(st_batch *b, uint64_t *rng, int hostile);
void st_batch_free(st_batch *b);

/* Every product of a step, allocated for a batch. */
typedef struct st_outputs {
  int32_t *token_to_req, *seq_lens_out, *global_seq_lens, *block_table_out, *decode_lens,
      *req_indices, *per_req_lens;
  int64_t *positions, *slots;
  int32_t error_word;
} st_outputs;

void st_outputs_alloc(st_outputs *o, const st_batch *b);
void st_outputs_free(st_outputs *o);
/* A step wanting every product; error_word = `error_word` (may be shared). */
void st_step_fill(attnmeta_step *s, const st_batch *b, st_outputs *o, int32_t *error_word);
/* 1 when every product equals the reference; else 0 with a reason in why. */
int st_compare(const st_batch *b, const st_outputs *o, char *why, size_t why_size);

#endif /* ATTNMETA_STRESS_COMMON_H */
