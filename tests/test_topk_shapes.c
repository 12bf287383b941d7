// SPDX-License-Identifier: Apache-2.0
/*
 * The top-k kernel body (src/common/am_topk_kernel.h, the code CUDA and HIP
 * compile) at GPU launch shapes, on the host: every thread of a block is a
 * POSIX thread and the dialect's barrier waits for all threads of the block,
 * so the prefix sum and the compaction run with real concurrency between
 * lanes and groups, as on a GPU. Blocks run one after another (they share
 * nothing but the outputs' disjoint rows and the error word). The cases of
 * the top-k case table that test_topk.c's CPU runs cannot reach this way
 * (a barrier is slow here: the larger cases are left to the GPU runs), in
 * place, counted and compacted, with 16-byte vectors on and off, one and
 * two groups of four columns a lane, and the short body (a block a row,
 * am_topk_rows_kernel.h) where it applies, against the naive reference.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "am_dialect.h"

/* The barrier of the emulated block: defined before the kernel body is
 * included, so its AM_BARRIER() calls expand to it. */
static _Thread_local pthread_barrier_t *block_barrier;
static void emulated_barrier(void) { pthread_barrier_wait(block_barrier); }
#undef AM_BARRIER
#define AM_BARRIER() emulated_barrier()

/* The barrier count of the emulated block (the short body's counts): the
 * block's threads add to one counter, wait, read it, wait, and its first
 * thread clears it for the next call before the last wait. */
static _Thread_local int *block_counter;
static _Thread_local int first_thread;
static int emulated_barrier_count(int pred) {
  int n;
  if (pred) __atomic_fetch_add(block_counter, 1, __ATOMIC_RELAXED);
  pthread_barrier_wait(block_barrier);
  n = __atomic_load_n(block_counter, __ATOMIC_RELAXED);
  pthread_barrier_wait(block_barrier);
  if (first_thread) __atomic_store_n(block_counter, 0, __ATOMIC_RELAXED);
  pthread_barrier_wait(block_barrier);
  return n;
}
#undef AM_BARRIER_COUNT
#define AM_BARRIER_COUNT(pred) emulated_barrier_count(pred)

#include "am_topk_kernel.h"
#include "harness.h"
#include "step_fixture.h"
#include "topk_cases.h"
#include "topk_reference.h"

typedef struct shape {
  uint32_t lanes, groups, grid;
} shape;

static const shape shapes[] = {{4, 3, 2}, {32, 1, 3}, {7, 5, 1}, {1, 8, 2}, {16, 2, 2}};

typedef struct worker {
  const am_topk_params *p;
  am_thread th;
  int32_t *scratch;
  pthread_barrier_t *barrier;
  int *counter;
} worker;


/* The threads of one block, stepping through the grid's blocks together. */
static void *run_thread(void *arg) {
  worker *w = arg;
  uint32_t b;
  block_barrier = w->barrier;
  block_counter = w->counter;
  first_thread = w->th.thread == 0;
  for (b = 0; b < w->th.grid_dim; b++) {
    w->th.block = b;
    am_topk_body(w->p, w->th, w->scratch, am_topk_kind_of(w->p));
    pthread_barrier_wait(w->barrier); /* the next block reuses the scratch */
  }
  return NULL;
}

/* One launch of the body at shape s: a block's threads run concurrently,
 * the blocks one after another. */
static void launch(const am_topk_params *p, const shape *s) {
  const uint32_t n = s->lanes * s->groups;
  pthread_t *tid = malloc(n * sizeof *tid);
  worker *w = malloc(n * sizeof *w);
  int32_t *scratch = malloc(AM_TOPK_SCRATCH_INTS(s->lanes, s->groups) * sizeof *scratch);
  pthread_barrier_t barrier;
  int counter = 0;
  uint32_t i;
  cr_assert(tid && w && scratch);
  cr_assert(pthread_barrier_init(&barrier, NULL, n) == 0);
  for (i = 0; i < n; i++) {
    w[i].p = p;
    w[i].th = am_make_thread(0, s->grid, i % s->lanes, s->lanes, i / s->lanes, s->groups);
    w[i].scratch = scratch;
    w[i].barrier = &barrier;
    w[i].counter = &counter;
    cr_assert(pthread_create(&tid[i], NULL, run_thread, &w[i]) == 0);
  }
  for (i = 0; i < n; i++) pthread_join(tid[i], NULL);
  pthread_barrier_destroy(&barrier);
  free(tid);
  free(w);
  free(scratch);
}

ParameterizedTestParameters(topk_shapes, cases) {
  return amt_index_params(amt_topk_num_cases() < 128 ? amt_topk_num_cases() : 128);
}

ParameterizedTest(int *c, topk_shapes, cases) {
  amt_topk_batch *b;
  int64_t T, K, i;
  int combo;
  size_t si;
  static const char *const emulated =
      "topk_engine_bs16_k128,topk_engine_req_id,topk_prefill_workspace,topk_dcp_example,"
      "topk_dcp_w2_i2_k1,topk_strides_odd_k,topk_stride_rows,topk_padding,topk_no_requests,"
      "topk_token_slot,topk_hostile_req_id,topk_hostile_workspace,topk_hostile_block_ids,"
      "topk_hostile_overflow,topk_hostile_qsl,topk_peer_hand,topk_peer_w2_i2,topk_peer_w4_qsl,"
      "topk_peer_prefill,topk_peer_hostile";
  if (!amt_case_selected(amt_topk_case_name(*c)) || !amt_listed(emulated, amt_topk_case_name(*c)))
    return;
  b = amt_topk_materialize(*c);
  cr_assert(b);
  T = b->in.num_tokens;
  K = b->in.topk_count;
  /* (mode, vector): in place with vectors, counted without and with,
   * compacted; then plain and counted with the short body on rows 16 bytes
   * apart (its lean form where the case has req_id and K % 4 == 0) */
  for (combo = 0; combo < 6; combo++)
      for (si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int mode = combo == 0 || combo == 4 ? 0 : (combo == 3 ? 2 : 1), vec = combo != 1;
        const shape *s = &shapes[si];
        /* a gap past K, rows off 16-byte alignment when S % 4 != 0 (before
         * combo 4: mostly) */
        const int64_t S = combo >= 4 ? (b->out_stride + 3) / 4 * 4 + 4 : b->out_stride + 3;
        /* out: 16-byte aligned, so vec and S % 4 == 0 make 16-byte stores */
        int32_t *out = aligned_alloc(16, (size_t)((T * S + 4) * 4 + 15) / 16 * 16);
        int32_t *count = malloc((size_t)(T + 1) * 4);
        int32_t *ref = malloc((size_t)(T * K + 1) * 4), *ref_count = malloc((size_t)(T + 1) * 4);
        int32_t err = 0, flags = 0;
        amr_topk_input rin = b->in;
        am_topk_params p;
        int64_t t, j, bad = 0;
        cr_assert(out && count && ref && ref_count);
        for (i = 0; i < T * S + 4; i++) out[i] = 0x5A5A5A5A;
        for (i = 0; i < T + 1; i++) count[i] = 0x5A5A5A5A;
        memset(&p, 0, sizeof p);
        p.topk = b->topk;
        p.topk_stride = b->in.topk_stride;
        p.qsl = b->in.qsl;
        p.req_id = b->in.req_id;
        p.block_table = b->in.cols > 0 ? b->table : NULL;
        p.block_table_stride = b->in.table_stride;
        p.prefill_req = b->in.prefill_req;
        p.workspace_starts = b->in.num_prefill > 0 ? b->in.workspace_starts : NULL;
        p.token_slot = b->in.token_slot;
        p.out = out;
        p.out_stride = S;
        p.valid_count = mode > 0 ? count : NULL;
        p.error_word = &err;
        p.num_tokens = b->in.num_tokens;
        p.topk_count = b->in.topk_count;
        p.num_reqs = b->in.num_reqs;
        p.cols = b->in.cols;
        p.block_size = b->in.block_size;
        p.stride_rows = b->in.stride_rows;
        p.dcp_world_size = b->in.world;
        p.dcp_rank = b->in.rank;
        p.dcp_interleave = b->in.interleave;
        p.num_prefill = b->in.num_prefill;
        p.compact = mode == 2;
        p.peer_blocks = b->in.peer_blocks;
        p.vector_in = vec && ((uintptr_t)b->topk % 16) == 0 && b->in.topk_stride % 4 == 0;
        p.vector_out = vec && !p.compact && S % 4 == 0;
        p.lane_vectors = (combo + (int)si) % 2 ? 2 : 1; /* both ways across the shapes */
        /* the short body where it applies, on every other pair of shapes */
        p.rows_body = combo >= 4 || (combo + (int)si / 2) % 2;
        /* the cases that reach the short body's lean form here keep reaching it */
        if (combo >= 4 && amt_listed("topk_engine_req_id,topk_hostile_req_id", b->name))
          cr_expect(am_topk_kind_of(&p) & AM_TOPK_LEAN, "case=%s: kind %d is not the lean short body",
                    b->name, am_topk_kind_of(&p));
        launch(&p, s);
        rin.compact = mode == 2;
        amr_topk(&rin, ref, ref_count, &flags);
        for (t = 0; t < T && bad < 4; t++) {
          for (j = 0; j < S && bad < 4; j++) {
            const int32_t want = j < K ? ref[t * K + j] : 0x5A5A5A5A;
            if (b->values_unspecified && j < K) continue;
            if (out[t * S + j] != want) {
              cr_expect_fail("case=%s shape=%ux%ux%u kind=%d mode=%d vector=%d: out[%lld][%lld] = %d, "
                             "expected %d",
                             b->name, s->lanes, s->groups, s->grid, am_topk_kind_of(&p), mode, vec,
                             (long long)t,
                             (long long)j, out[t * S + j], want);
              bad++;
            }
          }
          if (mode > 0 && !b->values_unspecified && count[t] != ref_count[t]) {
            cr_expect_fail("case=%s shape=%ux%ux%u kind=%d mode=%d: count[%lld] = %d, expected %d",
                           b->name, s->lanes, s->groups, s->grid, am_topk_kind_of(&p), mode,
                           (long long)t, count[t], ref_count[t]);
            bad++;
          }
        }
        for (i = T * S; i < T * S + 4; i++)
          cr_expect(out[i] == 0x5A5A5A5A, "case=%s: out written past its last row", b->name);
        cr_expect(count[T] == 0x5A5A5A5A && (mode > 0 || count[0] == 0x5A5A5A5A),
                  "case=%s: valid_count written where it must not be", b->name);
        if (!b->values_unspecified)
          cr_expect(err == flags, "case=%s shape=%ux%ux%u kind=%d: error word 0x%x, expected 0x%x",
                    b->name, s->lanes, s->groups, s->grid, am_topk_kind_of(&p), (unsigned)err,
                    (unsigned)flags);
        free(out);
        free(count);
        free(ref);
        free(ref_count);
      }
  amt_topk_batch_free(b);
}
