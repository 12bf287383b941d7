// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta_step's struct_size (docs/abi.md): a caller's struct is read only
 * as far as its struct_size says, older sizes take the defaults for what
 * they lack, and attnmeta_step_init writes only the caller's size. Every
 * caller struct here sits in an exact-size allocation that ends at an
 * inaccessible page, so a read or write past it crashes the test.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stddef.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "guarded.h"
#include "harness.h"
#include "step_fixture.h"

/* attnmeta_step as 0.1 released it, member for member: what a program
 * built against 0.1 allocates. */
typedef struct step_0_1 {
  size_t struct_size;
  const int32_t *query_start_loc;
  int32_t num_reqs, num_tokens, capacity;
  const int32_t *seq_lens, *block_table;
  int32_t block_table_cols;
  int64_t block_table_stride;
  int32_t num_mapped, block_size, dcp_world_size, dcp_rank, dcp_interleave;
  int32_t *token_to_req, *seq_lens_out, *global_seq_lens_out, *block_table_out;
  int64_t block_table_out_stride;
  int32_t *decode_lens_out, *req_indices_out, *per_req_lens_out;
  int64_t *positions, *slot_mapping;
  int32_t *error_word;
} step_0_1;

/* The members 0.1 had never move. */
_Static_assert(sizeof(step_0_1) <= sizeof(attnmeta_step), "attnmeta_step shrank");
_Static_assert(offsetof(step_0_1, error_word) == offsetof(attnmeta_step, error_word),
               "a 0.1 member moved");
_Static_assert(offsetof(step_0_1, block_table_out_stride) ==
                   offsetof(attnmeta_step, block_table_out_stride),
               "a 0.1 member moved");

/* A struct smaller than any release: the size and the first members. */
typedef struct step_fragment {
  size_t struct_size;
  const int32_t *query_start_loc;
  int32_t num_reqs, num_tokens;
} step_fragment;

Test(abi, smaller_than_any_release_refused_without_reading_past_it) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  static const int32_t qsl[] = {0, 1};
  step_fragment *frag = amt_guarded_alloc(sizeof *frag);
  size_t *bare = amt_guarded_alloc(sizeof(size_t));
  attnmeta_status st;
  cr_assert(frag && bare);
  frag->struct_size = sizeof *frag;
  frag->query_start_loc = qsl;
  frag->num_reqs = 1;
  frag->num_tokens = 1;
  st = attnmeta_build_step(ctx, (const attnmeta_step *)(void *)frag, NULL);
  cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "%s", attnmeta_status_string(st));
  cr_expect(strstr(attnmeta_last_error(ctx), "struct_size") != NULL, "message: %s",
            attnmeta_last_error(ctx));
  /* nothing but the size itself */
  *bare = sizeof(size_t);
  st = attnmeta_build_step(ctx, (const attnmeta_step *)(void *)bare, NULL);
  cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "%s", attnmeta_status_string(st));
  amt_guarded_free(frag, sizeof *frag);
  amt_guarded_free(bare, sizeof(size_t));
  attnmeta_close(ctx);
}

/* The 0.1 symbol (not the macro) on a 0.1-sized struct. */
Test(abi, release_0_1_init_writes_only_its_struct) {
  step_0_1 *s = amt_guarded_alloc(sizeof *s);
  cr_assert(s);
  memset(s, 0x77, sizeof *s);
  (attnmeta_step_init)((attnmeta_step *)(void *)s);
  cr_expect_eq(s->struct_size, sizeof(step_0_1));
  cr_expect_eq(s->num_mapped, -1);
  cr_expect_eq(s->block_size, 0); /* no default: slot_mapping needs it set */
  cr_expect_eq(s->dcp_world_size, 1);
  cr_expect_eq(s->dcp_rank, 0);
  cr_expect_eq(s->dcp_interleave, 1);
  cr_expect_eq(s->num_reqs, 0);
  cr_expect_null(s->query_start_loc);
  cr_expect_null(s->error_word);
  amt_guarded_free(s, sizeof *s);
}

/* A program built against 0.1 builds a step with a 0.1-sized struct:
 * qsl {0, 1, 3}, seq_lens {5, 2}, T = 4, C = 5; on every backend. */
ParameterizedTestParameters(abi, release_0_1_caller_builds) { return amt_case_params(1); }

ParameterizedTest(amt_case_param *param, abi, release_0_1_caller_builds) {
  static const int32_t qsl[] = {0, 1, 3}, seq[] = {5, 2};
  static const int32_t want_map[4] = {0, 1, 1, 0};
  static const int64_t want_pos[4] = {4, 0, 1, 0};
  const attnmeta_backend kind = (attnmeta_backend)param->backend;
  attnmeta_context *ctx = amt_open_or_skip(kind);
  unsigned char *d = amt_dev_alloc(ctx, 256);
  step_0_1 *s = amt_guarded_alloc(sizeof *s);
  int32_t map[4], poison32[64];
  int64_t pos[4];
  attnmeta_status st;
  cr_assert(s);
  memset(poison32, 0x5A, sizeof poison32);
  amt_to_dev(ctx, d, poison32, sizeof poison32);
  amt_to_dev(ctx, d, qsl, sizeof qsl);
  amt_to_dev(ctx, d + 16, seq, sizeof seq);
  (attnmeta_step_init)((attnmeta_step *)(void *)s);
  s->query_start_loc = (const int32_t *)(void *)d;
  s->seq_lens = (const int32_t *)(void *)(d + 16);
  s->num_reqs = 2;
  s->num_tokens = 4;
  s->capacity = 5;
  s->token_to_req = (int32_t *)(void *)(d + 64);
  s->positions = (int64_t *)(void *)(d + 128);
  st = attnmeta_build_step(ctx, (const attnmeta_step *)(void *)s, NULL);
  cr_expect_eq(st, ATTNMETA_OK, "backend=%s: %s (%s)", amt_backend_label(kind),
               attnmeta_status_string(st), attnmeta_last_error(ctx));
  cr_assert_eq(attnmeta_synchronize(ctx, NULL), ATTNMETA_OK);
  amt_to_host(ctx, map, d + 64, sizeof map);
  amt_to_host(ctx, pos, d + 128, sizeof pos);
  cr_expect_arr_eq(map, want_map, sizeof map, "backend=%s", amt_backend_label(kind));
  cr_expect_arr_eq(pos, want_pos, sizeof pos, "backend=%s", amt_backend_label(kind));
  amt_guarded_free(s, sizeof *s);
  amt_dev_free(ctx, d);
  attnmeta_close(ctx);
}

/* In an exact-size allocation: a byte written past the caller's struct
 * faults. */
Test(abi, macro_passes_callers_size) {
  attnmeta_step *s = amt_guarded_alloc(sizeof *s);
  cr_assert(s);
  memset(s, 0x77, sizeof *s);
  attnmeta_step_init(s);
  cr_expect_eq(s->struct_size, sizeof(attnmeta_step));
  cr_expect_eq(attnmeta_step_init_size(s, sizeof *s), ATTNMETA_OK);
  amt_guarded_free(s, sizeof *s);
}

/* A caller built against a newer header: its extra bytes are zeroed, the
 * build refuses it and writes nothing. */
Test(abi, init_size_larger_than_library) {
  const size_t size = sizeof(attnmeta_step) + 16;
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  static const int32_t qsl[] = {0, 1};
  int32_t out[2] = {-7, -7};
  unsigned char *raw = amt_guarded_alloc(size);
  attnmeta_step *s = (attnmeta_step *)(void *)raw;
  size_t i;
  attnmeta_status st;
  cr_assert(raw);
  memset(raw, 0x77, size);
  cr_expect_eq(attnmeta_step_init_size(s, size), ATTNMETA_ERR_NOT_SUPPORTED);
  cr_expect_eq(s->struct_size, size);
  cr_expect_eq(s->num_mapped, -1);
  for (i = sizeof(attnmeta_step); i < size; ++i) cr_expect_eq(raw[i], 0, "byte %zu", i);
  s->query_start_loc = qsl;
  s->num_reqs = 1;
  s->num_tokens = 2;
  s->capacity = 2;
  s->token_to_req = out;
  st = attnmeta_build_step(ctx, s, NULL);
  cr_expect_eq(st, ATTNMETA_ERR_NOT_SUPPORTED, "%s", attnmeta_status_string(st));
  cr_expect(out[0] == -7 && out[1] == -7, "written on error");
  amt_guarded_free(raw, size);
  attnmeta_close(ctx);
}

Test(abi, init_size_refuses_what_no_release_had) {
  unsigned char *raw = amt_guarded_alloc(24);
  size_t i;
  cr_assert(raw);
  cr_expect_eq(attnmeta_step_init_size(NULL, sizeof(attnmeta_step)), ATTNMETA_ERR_NULL_POINTER);
  /* too small to hold struct_size: nothing written */
  memset(raw, 0x77, 24);
  cr_expect_eq(attnmeta_step_init_size((attnmeta_step *)(void *)(raw + 20), 4),
               ATTNMETA_ERR_INVALID_ARGUMENT);
  for (i = 0; i < 24; ++i) cr_expect_eq(raw[i], 0x77, "byte %zu written", i);
  /* a fragment: its own bytes only */
  cr_expect_eq(attnmeta_step_init_size((attnmeta_step *)(void *)raw, 24),
               ATTNMETA_ERR_INVALID_ARGUMENT);
  cr_expect_eq(((attnmeta_step *)(void *)raw)->struct_size, 24);
  amt_guarded_free(raw, 24);
  /* not a multiple of the struct's alignment */
  {
    attnmeta_step s;
    cr_expect_eq(attnmeta_step_init_size(&s, sizeof s - 4), ATTNMETA_ERR_INVALID_ARGUMENT);
  }
}
