// SPDX-License-Identifier: Apache-2.0
/*
 * Streams and contexts of the CUDA backend.
 *
 * 1. Two contexts on the same device, each with its own non-blocking stream,
 *    run different steps (different shapes, one with decode context
 *    parallelism) with their launches interleaved, many iterations over
 *    several input sets; every output of both is then checked.
 * 2. A step runs on the stream it is given, and only there: a stream is held
 *    behind a host function that waits for a flag; a step enqueued behind it
 *    must not have written anything (and the stream must report not ready)
 *    while a step on the other stream completes; once the flag is set, the
 *    held step completes correctly. A step that synchronised the device or
 *    ran on another stream fails this (the host function gives up after 10 s,
 *    so a wrong library cannot hang the test).
 * 3. The same as 1 from two host threads, each opening its own context.
 * 1 and 2 run again with every step started early
 * (ATTNMETA_LAUNCH_EARLY_START), on poisoned outputs.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_check.h"

#define NAME "attnmeta_gpu_stream_test"
#define SETS 4
#define ITERS 300

typedef struct lane {
  const char *name;
  attnmeta_context *ctx;
  cudaStream_t stream;
  amg_shape shape;
  amg_sizes z;
  int32_t max_qlen, max_seq;
  int32_t *h_qsl[SETS], *h_seq[SETS], *h_table;
  int32_t *d_qsl[SETS], *d_seq[SETS], *d_table;
  amg_outputs dev[SETS];
  uint32_t launch_flags; /* attnmeta_step.launch_flags of every step */
} lane;

/* Inputs of every set (totals <= T, every position inside the table),
 * poisoned device outputs. */
static void lane_init(lane *l, attnmeta_context *ctx, uint64_t seed) {
  const amg_shape *s = &l->shape;
  int i, r, c;
  l->ctx = ctx;
  l->z = amg_sizes_of(s);
  AMG_CUDA(cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking));
  l->h_table = malloc(sizeof(int32_t) * (size_t)(s->R * s->in_stride));
  if (!l->h_table) abort();
  for (r = 0; r < s->R; r++)
    for (c = 0; c < s->in_stride; c++)
      l->h_table[r * s->in_stride + c] = c < s->cols ? amg_rand_range(&seed, 0, 1 << 20) : -7;
  l->d_table = amg_upload(l->h_table, sizeof(int32_t) * (size_t)(s->R * s->in_stride));
  for (i = 0; i < SETS; i++) {
    l->h_qsl[i] = malloc(sizeof(int32_t) * (size_t)(s->R + 1));
    l->h_seq[i] = malloc(sizeof(int32_t) * (size_t)s->R);
    if (!l->h_qsl[i] || !l->h_seq[i]) abort();
    l->h_qsl[i][0] = 0;
    for (r = 0; r < s->R; r++) {
      const int32_t q = amg_rand_range(&seed, 0, l->max_qlen);
      l->h_qsl[i][r + 1] = l->h_qsl[i][r] + q;
      l->h_seq[i][r] = amg_rand_range(&seed, q, l->max_seq);
    }
    l->d_qsl[i] = amg_upload(l->h_qsl[i], sizeof(int32_t) * (size_t)(s->R + 1));
    l->d_seq[i] = amg_upload(l->h_seq[i], sizeof(int32_t) * (size_t)s->R);
    l->dev[i] = amg_device_outputs(&l->z);
    amg_poison_async(&l->dev[i], &l->z, l->stream);
  }
  AMG_CUDA(cudaStreamSynchronize(l->stream));
}

static void lane_free(lane *l) {
  int i;
  for (i = 0; i < SETS; i++) {
    free(l->h_qsl[i]);
    free(l->h_seq[i]);
    cudaFree(l->d_qsl[i]);
    cudaFree(l->d_seq[i]);
    amg_free_device_outputs(&l->dev[i]);
  }
  free(l->h_table);
  cudaFree(l->d_table);
  cudaStreamDestroy(l->stream);
}

static attnmeta_status lane_enqueue(lane *l, int set) {
  attnmeta_step step =
      amg_step_of(&l->shape, l->d_qsl[set], l->d_seq[set], l->d_table, &l->dev[set]);
  step.launch_flags = l->launch_flags;
  return attnmeta_build_step(l->ctx, &step, l->stream);
}

/* lane_enqueue as a check (main thread only: the counters are not shared). */
static int lane_launch(lane *l, int set) {
  const attnmeta_status st = lane_enqueue(l, set);
  return AMG_CHECK(st == ATTNMETA_OK, "%s: attnmeta_build_step: %s: %s", l->name,
                   attnmeta_status_string(st), attnmeta_last_error(l->ctx));
}

/* Compares set `set` with the reference (or with pure poison). */
static void lane_check(const lane *l, int set, int expect_untouched, const char *phase) {
  amg_outputs expect = amg_host_outputs(&l->z);
  char what[160];
  if (expect_untouched) {
    expect.o32[AMG_ERR][0] = 0;
  } else {
    amg_reference(&l->shape, l->h_qsl[set], l->h_seq[set], l->h_table, &expect);
  }
  snprintf(what, sizeof what, "%s: %s set %d%s", phase, l->name, set,
           expect_untouched ? " (must be unwritten)" : "");
  amg_compare(what, &l->dev[set], &expect, &l->z);
  amg_free_host_outputs(&expect);
}

/* Shape A: small table, no DCP. Shape B: wide table, decode context parallelism. */
static void shapes(lane *a, lane *b) {
  const amg_shape sa = {6, 40, 48, 9, 12, 9, -1, 16, 1, 0, 1};
  const amg_shape sb = {11, 100, 128, 70, 72, 72, -1, 8, 2, 1, 2};
  memset(a, 0, sizeof *a);
  memset(b, 0, sizeof *b);
  a->name = "A(R6,T40,cols9)";
  a->shape = sa;
  a->max_qlen = 6;   /* 6 * 6 <= 40 */
  a->max_seq = 140;  /* positions < 9 * 16 */
  b->name = "B(R11,T100,cols70,dcp2)";
  b->shape = sb;
  b->max_qlen = 8;   /* 11 * 8 <= 100 */
  b->max_seq = 1100; /* positions < 70 * 8 * 2 */
}

/* ---- 1. interleaved launches of two contexts on two streams ---- */
static void interleaved(lane *a, lane *b) {
  int it, i;
  for (it = 0; it < ITERS; it++) {
    if (!lane_launch(a, it % SETS)) break;
    if (!lane_launch(b, (it * 3 + 1) % SETS)) break;
  }
  AMG_CUDA(cudaStreamSynchronize(a->stream));
  AMG_CUDA(cudaStreamSynchronize(b->stream));
  for (i = 0; i < SETS; i++) {
    lane_check(a, i, 0, "interleaved");
    lane_check(b, i, 0, "interleaved");
  }
}

/* ---- 2. a held stream holds the step ---- */
typedef struct gate {
  atomic_int open;
  atomic_int timed_out;
} gate;

static void sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs on the runtime's host-callback thread: holds the stream until the
 * flag is set, for 10 s at most. Makes no CUDA call. */
static void hold_stream(void *arg) {
  gate *g = (gate *)arg;
  const double until = now_s() + 10.0;
  while (!atomic_load(&g->open)) {
    if (now_s() > until) {
      atomic_store(&g->timed_out, 1);
      return;
    }
    sleep_ms(1);
  }
}

static void held_stream(lane *held, lane *free_lane) {
  gate g;
  cudaError_t q;
  const int set = 1;
  char phase[96];
  snprintf(phase, sizeof phase, "held stream %s", held->name);
  atomic_init(&g.open, 0);
  atomic_init(&g.timed_out, 0);
  amg_poison_async(&held->dev[set], &held->z, held->stream);
  amg_poison_async(&free_lane->dev[set], &free_lane->z, free_lane->stream);
  AMG_CUDA(cudaStreamSynchronize(held->stream));
  AMG_CUDA(cudaStreamSynchronize(free_lane->stream));

  if (!AMG_CUDA(cudaLaunchHostFunc(held->stream, hold_stream, &g))) return;
  lane_launch(held, set);
  lane_launch(free_lane, set);
  /* The other stream is not held: its step completes now. */
  AMG_CUDA(cudaStreamSynchronize(free_lane->stream));
  lane_check(free_lane, set, 0, phase);
  sleep_ms(50);
  q = cudaStreamQuery(held->stream);
  AMG_CHECK(q == cudaErrorNotReady, "%s: cudaStreamQuery of the held stream gave %s, expected "
            "not ready", phase, cudaGetErrorString(q));
  lane_check(held, set, 1, phase);
  atomic_store(&g.open, 1);
  AMG_CUDA(cudaStreamSynchronize(held->stream));
  AMG_CHECK(!atomic_load(&g.timed_out),
            "%s: the stream stayed held 10 s: a call waited for the held stream", phase);
  lane_check(held, set, 0, phase);
}

/* ---- 3. two host threads, a context each ---- */
typedef struct worker {
  lane *l;
  attnmeta_status status;
  cudaError_t sync;
  char message[256];
} worker;

static void *run_worker(void *arg) {
  worker *w = (worker *)arg;
  int it;
  w->status = ATTNMETA_OK;
  w->message[0] = '\0';
  for (it = 0; it < ITERS && w->status == ATTNMETA_OK; it++) {
    w->status = lane_enqueue(w->l, (it * 5 + 2) % SETS);
    if (w->status != ATTNMETA_OK)
      snprintf(w->message, sizeof w->message, "%s", attnmeta_last_error(w->l->ctx));
  }
  w->sync = cudaStreamSynchronize(w->l->stream);
  return NULL;
}

static void threaded(void) {
  lane a, b;
  attnmeta_context *ca = NULL, *cb = NULL;
  worker wa, wb;
  pthread_t ta, tb;
  int i, started_a, started_b;
  shapes(&a, &b);
  AMG_CHECK(attnmeta_open(&ca, ATTNMETA_BACKEND_CUDA, 0) == ATTNMETA_OK &&
                attnmeta_open(&cb, ATTNMETA_BACKEND_CUDA, 0) == ATTNMETA_OK,
            "threads: attnmeta_open: %s", attnmeta_open_error());
  if (!ca || !cb) return;
  lane_init(&a, ca, 11);
  lane_init(&b, cb, 12);
  wa.l = &a;
  wb.l = &b;
  started_a = AMG_CHECK(pthread_create(&ta, NULL, run_worker, &wa) == 0, "pthread_create failed");
  started_b = AMG_CHECK(pthread_create(&tb, NULL, run_worker, &wb) == 0, "pthread_create failed");
  if (started_a) pthread_join(ta, NULL);
  if (started_b) pthread_join(tb, NULL);
  if (!started_a || !started_b) return;
  AMG_CHECK(wa.status == ATTNMETA_OK && wb.status == ATTNMETA_OK,
            "threads: attnmeta_build_step: A %s (%s), B %s (%s)", attnmeta_status_string(wa.status),
            wa.message, attnmeta_status_string(wb.status), wb.message);
  AMG_CHECK(wa.sync == cudaSuccess && wb.sync == cudaSuccess,
            "threads: cudaStreamSynchronize: A %s, B %s", cudaGetErrorString(wa.sync),
            cudaGetErrorString(wb.sync));
  for (i = 0; i < SETS; i++) {
    lane_check(&a, i, 0, "threads");
    lane_check(&b, i, 0, "threads");
  }
  lane_free(&a);
  lane_free(&b);
  attnmeta_close(ca);
  attnmeta_close(cb);
}

int main(void) {
  attnmeta_context *ca, *cb;
  lane a, b;
  int i;
  amg_require_device(NAME);
  ca = amg_open_cuda(NAME);
  cb = amg_open_cuda(NAME);
  printf("%s: %s, two contexts\n", NAME, attnmeta_context_device_name(ca));
  shapes(&a, &b);
  lane_init(&a, ca, 1);
  lane_init(&b, cb, 2);

  interleaved(&a, &b);
  held_stream(&a, &b);
  held_stream(&b, &a);
  /* again with every step started early (ATTNMETA_LAUNCH_EARLY_START): each
   * step may start while the one ahead of it on its stream still runs */
  a.name = "A(R6,T40,cols9)+early_start";
  b.name = "B(R11,T100,cols70,dcp2)+early_start";
  a.launch_flags = b.launch_flags = ATTNMETA_LAUNCH_EARLY_START;
  for (i = 0; i < SETS; i++) {
    amg_poison_async(&a.dev[i], &a.z, a.stream);
    amg_poison_async(&b.dev[i], &b.z, b.stream);
  }
  interleaved(&a, &b);
  held_stream(&a, &b);

  lane_free(&a);
  lane_free(&b);
  attnmeta_close(ca);
  attnmeta_close(cb);

  threaded();
  return amg_finish(NAME);
}
