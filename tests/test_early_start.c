// SPDX-License-Identifier: Apache-2.0
/*
 * ATTNMETA_LAUNCH_EARLY_START changes how the step's kernel is launched and
 * orders its work (tails before the wait for the kernel ahead), never a
 * byte of its results: every case of tests/cases.c, every product, on
 * every backend present and at each of its launch configurations, built
 * with the flag and without it on poisoned buffers, must agree byte for
 * byte (the run without the flag is checked against the reference by
 * test_step.c). Also: undefined flag bits are refused with nothing written,
 * The special paths switched off by ATTNMETA_PATHS_OFF (for measurement)
 * do not change results either.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "harness.h"
#include "op_inputs.h"

#define POISON 0xA7

enum { B_T2R, B_SEQ, B_GSEQ, B_BT, B_DEC, B_RIDX, B_PRL, B_POS, B_SLOT, B_ERR, NBUF };

typedef struct bufs {
  size_t bytes[NBUF];
  void *dev[NBUF];
} bufs;

static void alloc_bufs(attnmeta_context *ctx, const amt_batch *b, bufs *o) {
  int i;
  const size_t T = (size_t)b->T, C = (size_t)b->C;
  o->bytes[B_T2R] = o->bytes[B_GSEQ] = o->bytes[B_DEC] = o->bytes[B_RIDX] = 4 * (T ? T : 1);
  o->bytes[B_SEQ] = 4 * (C ? C : 1);
  o->bytes[B_BT] = 4 * (T * (size_t)b->out_stride + 1) + 16;
  o->bytes[B_PRL] = 4 * (size_t)(b->R ? b->R : 1);
  o->bytes[B_POS] = 8 * (T ? T : 1);
  o->bytes[B_SLOT] = 8 * (C ? C : 1);
  o->bytes[B_ERR] = 4;
  for (i = 0; i < NBUF; ++i) o->dev[i] = amt_dev_alloc(ctx, o->bytes[i]);
}

static void poison(attnmeta_context *ctx, const bufs *o) {
  int i;
  for (i = 0; i < NBUF; ++i) {
    unsigned char *h = malloc(o->bytes[i]);
    cr_assert(h);
    memset(h, i == B_ERR ? 0 : POISON, o->bytes[i]);
    amt_to_dev(ctx, o->dev[i], h, o->bytes[i]);
    free(h);
  }
}

/* Runs the step into `o` and returns every buffer's bytes, concatenated. */
static unsigned char *run(attnmeta_context *ctx, const amt_batch *b, const void *d_qsl,
                          const void *d_seq, const int32_t *d_table, const bufs *o, size_t total,
                          uint32_t flags, const char *what) {
  attnmeta_step s;
  attnmeta_status st;
  unsigned char *h = malloc(total ? total : 1);
  size_t at = 0;
  int i;
  cr_assert(h);
  poison(ctx, o);
  amt_step_tokens(&s, d_qsl, b->R, b->T, b->C);
  amt_step_table(&s, d_seq, d_table, b->cols, b->in_stride, b->block_size);
  s.num_mapped = b->num_mapped;
  s.dcp_world_size = b->world;
  s.dcp_rank = b->ranks[0];
  s.dcp_interleave = b->interleave;
  amt_step_outputs(&s, o->dev[B_T2R], o->dev[B_SEQ], o->dev[B_GSEQ], o->dev[B_DEC], o->dev[B_RIDX],
                   o->dev[B_PRL], o->dev[B_POS], o->dev[B_SLOT]);
  /* off 16-byte alignment where the case asks for it */
  s.block_table_out = (int32_t *)o->dev[B_BT] + ((b->misalign & 2) ? 1 : 0);
  s.block_table_out_stride = b->out_stride;
  s.error_word = o->dev[B_ERR];
  s.launch_flags = flags;
  st = attnmeta_build_step(ctx, &s, NULL);
  cr_assert_eq(st, ATTNMETA_OK, "%s: %s", what, attnmeta_last_error(ctx));
  cr_assert_eq(attnmeta_synchronize(ctx, NULL), ATTNMETA_OK);
  for (i = 0; i < NBUF; ++i) {
    amt_to_host(ctx, h + at, o->dev[i], o->bytes[i]);
    at += o->bytes[i];
  }
  return h;
}

/* Every case at every launch config on `kind`: a context as opened, with
 * no launch flags, against `flags` on a context opened with
 * ATTNMETA_PATHS_OFF=paths_off (NULL: unset). */
static void same_bytes(attnmeta_backend kind, uint32_t flags, const char *paths_off) {
  attnmeta_context *ctx = amt_open_or_skip(kind), *ctx_b;
  if (paths_off) setenv("ATTNMETA_PATHS_OFF", paths_off, 1);
  ctx_b = amt_open_or_skip(kind);
  unsetenv("ATTNMETA_PATHS_OFF");
  const amt_launch *cfgs;
  const int ncfg = amt_launch_configs(kind, &cfgs);
  int k, c, compared = 0;
  for (k = 0; k < amt_num_cases; ++k) {
    amt_batch *b;
    bufs o;
    void *d_qsl, *d_seq, *d_table_base;
    int32_t *d_table = NULL;
    size_t total = 0;
    int i;
    if (!amt_case_selected(amt_cases[k].name)) continue;
    b = amt_materialize(&amt_cases[k]);
    d_qsl = amt_dev_alloc(ctx, 4 * (size_t)(b->R + 1));
    amt_to_dev(ctx, d_qsl, b->qsl, 4 * (size_t)(b->R + 1));
    d_seq = amt_dev_alloc(ctx, 4 * (size_t)(b->R ? b->R : 1));
    amt_to_dev(ctx, d_seq, b->seq_lens, 4 * (size_t)(b->R ? b->R : 1));
    d_table_base = amt_dev_alloc(ctx, 4 * (size_t)b->table_elems + 16);
    if (b->block_table) {
      d_table = (int32_t *)d_table_base + ((b->misalign & 1) ? 1 : 0);
      amt_to_dev(ctx, d_table, b->block_table, 4 * (size_t)b->table_elems);
    }
    alloc_bufs(ctx, b, &o);
    for (i = 0; i < NBUF; ++i) total += o.bytes[i];
    for (c = 0; c < ncfg; ++c) {
      unsigned char *plain, *early;
      char what[160];
      cr_assert_eq(attnmeta_set_launch_config(ctx, &cfgs[c].config), ATTNMETA_OK);
      cr_assert_eq(attnmeta_set_launch_config(ctx_b, &cfgs[c].config), ATTNMETA_OK);
      snprintf(what, sizeof what, "%s, case %s, config %s, flags 0x%x, paths off %s",
               amt_backend_label(kind), amt_cases[k].name, cfgs[c].name, (unsigned)flags,
               paths_off ? paths_off : "none");
      plain = run(ctx, b, d_qsl, d_seq, d_table, &o, total, 0, what);
      early = run(ctx_b, b, d_qsl, d_seq, d_table, &o, total, flags, what);
      cr_assert(memcmp(plain, early, total) == 0, "%s: results differ", what);
      free(plain);
      free(early);
      ++compared;
    }
    attnmeta_set_launch_config(ctx, NULL);
    attnmeta_set_launch_config(ctx_b, NULL);
    for (i = 0; i < NBUF; ++i) amt_dev_free(ctx, o.dev[i]);
    amt_dev_free(ctx, d_qsl);
    amt_dev_free(ctx, d_seq);
    amt_dev_free(ctx, d_table_base);
    amt_batch_free(b);
  }
  cr_expect(compared > 0, "no case was compared");
  attnmeta_close(ctx);
  attnmeta_close(ctx_b);
}

/* Each backend present (a GPU backend without a device is left out here:
 * test_step.c reports it). */
static void on_every_backend(uint32_t flags, const char *paths_off) {
  attnmeta_backend be[AMT_MAX_BACKENDS];
  const int n = amt_test_backends(be);
  int i, ran = 0;
  for (i = 0; i < n; ++i) {
    int devices = 0;
    if (be[i] != ATTNMETA_BACKEND_CPU &&
        (attnmeta_backend_device_count(be[i], &devices) != ATTNMETA_OK || devices == 0))
      continue;
    same_bytes(be[i], flags, paths_off);
    ++ran;
  }
  cr_expect(ran > 0, "no backend to test");
}

Test(early_start, same_bytes_on_every_backend) { on_every_backend(ATTNMETA_LAUNCH_EARLY_START, NULL); }

/* The measurement switches of bench/paths_ab.sh (ATTNMETA_PATHS_OFF) change
 * no result either. */
Test(early_start, same_bytes_with_every_special_path_off) {
  on_every_backend(0, "speculate_first,indexer_variant,realign,tail_vectors,reverse_order,one_wave");
  on_every_backend(ATTNMETA_LAUNCH_EARLY_START, "aligned_rows");
}

Test(early_start, undefined_bits_refused_nothing_written) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  int32_t qsl[2] = {0, 1}, out[1] = {-5};
  attnmeta_step s;
  attnmeta_status st;
  amt_step_tokens(&s, qsl, 1, 1, 1);
  s.token_to_req = out;
  s.launch_flags = 2;
  st = attnmeta_build_step(ctx, &s, NULL);
  cr_expect_eq(st, ATTNMETA_ERR_INVALID_ARGUMENT, "undefined launch flag: %s",
               attnmeta_status_string(st));
  cr_expect_eq(out[0], -5, "written although refused");
  s.launch_flags = ATTNMETA_LAUNCH_EARLY_START;
  cr_expect_eq(attnmeta_build_step(ctx, &s, NULL), ATTNMETA_OK, "%s", attnmeta_last_error(ctx));
  cr_expect_eq(out[0], 0);
  attnmeta_close(ctx);
}
