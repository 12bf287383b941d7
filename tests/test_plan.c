// SPDX-License-Identifier: Apache-2.0
/*
 * The host's launch plan (src/common/am_step_plan.h) on the CPU backend:
 * what it runs is bounded whatever the caller's launch configuration asks.
 *  - a forced grid is cut to the blocks that have work (a grid of 2 x 10^8
 *    for one token would otherwise run 2 x 10^8 idle blocks, for seconds);
 *  - staging (forced with stage = 1) happens only when the boundaries fit
 *    the CPU backend's small stack buffer: a step of 2000 requests is not
 *    staged, and runs on a thread with a 32 KiB stack (the stage used to be
 *    a 32 KiB array on the stack of every launch).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "am_step_plan.h"
#include "am_step_translate.h"
#include "harness.h"
#include "op_inputs.h"

static am_launch_shape plan_cpu(const attnmeta_launch_config *cfg, am_step_params *p) {
  return am_plan_launch(cfg, 1, 1, p);
}

/* The kernel parameters of a step of n requests and n tokens, with those
 * lengths and outputs. */
static am_step_params params_of(const int32_t *qsl, const int32_t *seq_lens, int32_t n,
                                int32_t *token_to_req, int32_t *seq_lens_out) {
  attnmeta_step s;
  amt_step_tokens(&s, qsl, n, n, n);
  s.seq_lens = seq_lens;
  s.token_to_req = token_to_req;
  s.seq_lens_out = seq_lens_out;
  return am_params_of(&s);
}

Test(plan, cpu_grid_bounded_by_the_work) {
  static const int32_t qsl[2] = {0, 1};
  static int32_t out[1];
  attnmeta_launch_config cfg = attnmeta_launch_config_default();
  am_step_params p = params_of(qsl, NULL, 1, out, NULL);
  am_launch_shape shape;
  cfg.grid = 200000000;
  shape = plan_cpu(&cfg, &p);
  cr_expect_eq(shape.grid, 1, "a CPU grid of %lld blocks for one token", (long long)shape.grid);
  p.num_tokens = p.capacity = 1000;
  shape = plan_cpu(&cfg, &p);
  cr_expect_eq(shape.grid, 1000, "%lld blocks for 1000 tokens", (long long)shape.grid);
  cfg.grid = 7;
  shape = plan_cpu(&cfg, &p);
  cr_expect_eq(shape.grid, 7, "a grid below the work is honoured");
}

Test(plan, cpu_stage_bounded) {
  static int32_t qsl[2001], seq[2000], out[2000];
  attnmeta_launch_config cfg = attnmeta_launch_config_default();
  am_step_params p = params_of(qsl, seq, 2000, NULL, out);
  am_launch_shape shape;
  cfg.stage = 1;
  shape = plan_cpu(&cfg, &p);
  cr_expect(!p.stage && shape.shared_bytes == 0, "staged %lld bytes on the CPU",
            (long long)shape.shared_bytes);
  p.num_reqs = 100; /* 201 words: staged */
  shape = plan_cpu(&cfg, &p);
  cr_expect(p.stage && shape.shared_bytes == 201 * 4, "%lld bytes for 100 requests",
            (long long)shape.shared_bytes);
  /* a GPU stages up to its limit */
  p.num_reqs = 2000;
  shape = am_plan_launch(&cfg, 0, 132, &p);
  cr_expect(p.stage && shape.shared_bytes == 4001 * 4);
}

/* A forced-stage step of 2000 requests on a thread with a 32 KiB stack. */
typedef struct small_stack_job {
  attnmeta_context *ctx;
  attnmeta_step step;
  attnmeta_status status;
} small_stack_job;

static void *run_job(void *arg) {
  small_stack_job *job = (small_stack_job *)arg;
  job->status = attnmeta_build_step(job->ctx, &job->step, NULL);
  return NULL;
}

Test(plan, cpu_launch_on_a_small_stack) {
  static int32_t qsl[2001], seq[2000], out[2000];
  attnmeta_launch_config cfg = attnmeta_launch_config_default();
  small_stack_job job;
  pthread_attr_t attr;
  pthread_t thread;
  int i;
  for (i = 0; i <= 2000; ++i) qsl[i] = i;
  for (i = 0; i < 2000; ++i) seq[i] = 3;
  job.ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  cfg.stage = 1;
  cr_assert_eq(attnmeta_set_launch_config(job.ctx, &cfg), ATTNMETA_OK);
  amt_step_tokens(&job.step, qsl, 2000, 2000, 2000);
  job.step.seq_lens = seq;
  job.step.seq_lens_out = out;
  cr_assert_eq(pthread_attr_init(&attr), 0);
  cr_assert_eq(pthread_attr_setstacksize(&attr, 32 * 1024), 0);
  cr_assert_eq(pthread_create(&thread, &attr, run_job, &job), 0);
  cr_assert_eq(pthread_join(thread, NULL), 0);
  cr_expect_eq(job.status, ATTNMETA_OK, "%s", attnmeta_last_error(job.ctx));
  for (i = 0; i < 2000; ++i) cr_expect_eq(out[i], 3, "seq_lens_out[%d]", i);
  attnmeta_close(job.ctx);
}

/* Unaligned rows on a GPU plan: the indexer product set gets the indexer
 * kernel for realigned rows, any other lean set the lean one, a full set
 * scalar rows; rows of an equal split are speculated, realigned or not. */
Test(plan, gpu_realigned_rows_variants) {
  static int32_t qsl[3] = {0, 1, 2}, seq[2] = {5, 9};
  static int32_t t2r[2], slo[4], dec[2], ridx[2], prl[2];
  static int64_t pos[2];
  static AM_ALIGNED(16) int32_t table[2 * 2567 + 3];
  static AM_ALIGNED(16) int32_t out[2 * 2560];
  attnmeta_launch_config cfg = attnmeta_launch_config_default();
  attnmeta_step s;
  am_step_params p;
  amt_step_tokens(&s, qsl, 2, 2, 4);
  /* a column slice of the table: odd start, odd stride */
  amt_step_table(&s, seq, table + 3, 2560, 2567, 16);
  amt_step_outputs(&s, t2r, slo, NULL, dec, ridx, prl, NULL, NULL);
  s.block_table_out = out;
  s.block_table_out_stride = 2560;
  p = am_params_of(&s);
  (void)am_plan_launch(&cfg, 0, 132, &p);
  cr_expect_eq(p.vector_rows, AM_ROWS_REALIGNED);
  cr_expect_eq(p.variant, AM_VARIANT_INDEXER | AM_VARIANT_REALIGNED, "variant %d", p.variant);
  cr_expect_eq(p.speculate, AM_SPECULATE_FIRST);

  p.decode_lens_out = NULL; /* not the indexer set: the lean kernel for them */
  (void)am_plan_launch(&cfg, 0, 132, &p);
  cr_expect_eq(p.variant, AM_VARIANT_LEAN | AM_VARIANT_REALIGNED, "variant %d", p.variant);

  p.positions = pos; /* full: rows move as scalars */
  (void)am_plan_launch(&cfg, 0, 132, &p);
  cr_expect_eq(p.vector_rows, AM_ROWS_SCALAR);
  cr_expect_eq(p.variant, AM_VARIANT_FULL, "variant %d", p.variant);

  p.positions = NULL; /* aligned rows of an equal split: the indexer kernel, speculated */
  p.decode_lens_out = dec;
  p.block_table = table;
  p.block_table_stride = 2560;
  (void)am_plan_launch(&cfg, 0, 132, &p);
  cr_expect_eq(p.vector_rows, AM_ROWS_ALIGNED);
  cr_expect_eq(p.variant, AM_VARIANT_INDEXER, "variant %d", p.variant);
  cr_expect_eq(p.speculate, AM_SPECULATE_FIRST);
}

/* Realigned rows that fill the GPU more than twice over (two blocks a
 * multiprocessor fit the realigned kernels): half the grid, each group
 * taking two tokens; not with the path switched off, not for aligned rows,
 * not for steps within that bound, never against a forced grid. */
Test(plan, gpu_realigned_rows_one_wave) {
  static AM_ALIGNED(16) int32_t table[4], out[4];
  static int32_t t2r[1];
  attnmeta_launch_config cfg = attnmeta_launch_config_default();
  am_step_params p;
  am_launch_shape shape;
  memset(&p, 0, sizeof p);
  p.num_reqs = 1024;
  p.num_tokens = p.capacity = 1024;
  p.num_mapped = -1;
  p.cols = 2560;
  /* the plan reads the pointers' alignment only */
  p.block_table = table + 3;
  p.block_table_stride = 2567;
  p.block_table_out = out;
  p.block_table_out_stride = 2560;
  p.token_to_req = t2r;
  shape = am_plan_launch(&cfg, 0, 132, &p);
  cr_assert_eq(p.vector_rows, AM_ROWS_REALIGNED);
  cr_expect_eq(shape.groups, 2, "groups %lld", (long long)shape.groups);
  cr_expect_eq(shape.grid, 256, "1024 tokens in blocks of two: grid %lld", (long long)shape.grid);
  shape = am_plan_launch_paths(&cfg, 0, 132, AM_PATH_ONE_WAVE, &p);
  cr_expect_eq(shape.grid, 512, "with one_wave off: grid %lld", (long long)shape.grid);
  p.num_tokens = p.capacity = 528; /* 264 blocks: two a multiprocessor, one wave already */
  shape = am_plan_launch(&cfg, 0, 132, &p);
  cr_expect_eq(shape.grid, 264, "528 tokens: grid %lld", (long long)shape.grid);
  p.num_tokens = p.capacity = 530;
  shape = am_plan_launch(&cfg, 0, 132, &p);
  cr_expect_eq(shape.grid, 133, "530 tokens: grid %lld", (long long)shape.grid);
  cfg.grid = 600;
  shape = am_plan_launch(&cfg, 0, 132, &p);
  cr_expect_eq(shape.grid, 600, "a forced grid: %lld", (long long)shape.grid);
  cfg.grid = -1;
  p.num_tokens = p.capacity = 1024; /* aligned rows keep a block a pair of tokens */
  p.block_table = table;
  p.block_table_stride = 2560;
  shape = am_plan_launch(&cfg, 0, 132, &p);
  cr_assert_eq(p.vector_rows, AM_ROWS_ALIGNED);
  cr_expect_eq(shape.grid, 512, "aligned rows: grid %lld", (long long)shape.grid);
}
