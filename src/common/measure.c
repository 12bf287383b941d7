// SPDX-License-Identifier: Apache-2.0
/*
 * The measurement API (attnmeta_measure.h): graph replay, eager issue,
 * empty-kernel floors and copy bandwidth, written once over the backend
 * table's stream, event and graph members. Tooling, not the hot path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "am_context.h"
#include "attnmeta/attnmeta_measure.h"

/* One measurement's resources, released together. */
typedef struct session {
  attnmeta_context *ctx;
  void *stream;
  void *start;
  void *stop;
  void *graph;
  void *exec;
  int has_stream;
  double *samples; /* [repeats] */
  double *samples2;
  double *samples3;
  char msg[AM_MESSAGE_SIZE];
} session;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts v in place. */
static attnmeta_stat stat_of(double *v, int n) {
  attnmeta_stat s;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  s.min = v[0];
  s.max = v[n - 1];
  s.median = (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return s;
}

/* Status of a backend call; on failure the backend's message goes to ctx
 * with `what` in front. */
static attnmeta_status backend(session *s, int status, const char *what) {
  if (status == ATTNMETA_OK) return ATTNMETA_OK;
  return am_fail(s->ctx, (attnmeta_status)status, "%s: %s", what, s->msg);
}

/* A failed callback: keep what it said on the context. */
static attnmeta_status callback_failed(session *s, attnmeta_status status, const char *phase,
                                       int call) {
  char said[AM_MESSAGE_SIZE];
  snprintf(said, sizeof said, "%s", attnmeta_last_error(s->ctx));
  return am_fail(s->ctx, status, "the enqueue callback returned %s at call %d of the %s%s%s",
                 attnmeta_status_string(status), call, phase, said[0] ? ": " : "", said);
}

static attnmeta_status session_open(session *s, attnmeta_context *ctx, int repeats) {
  const am_backend_table *t = ctx->table;
  memset(s, 0, sizeof *s);
  s->ctx = ctx;
  s->samples = (double *)calloc((size_t)repeats * 3, sizeof(double));
  if (!s->samples)
    return am_fail(ctx, ATTNMETA_ERR_OUT_OF_MEMORY, "cannot allocate %d samples", repeats);
  s->samples2 = s->samples + repeats;
  s->samples3 = s->samples2 + repeats;
  if (backend(s, t->stream_create(ctx->state, &s->stream, s->msg, sizeof s->msg),
              "stream create") != ATTNMETA_OK)
    return ATTNMETA_ERR_LAUNCH;
  s->has_stream = 1;
  if (backend(s, t->event_create(ctx->state, &s->start, s->msg, sizeof s->msg), "event create") !=
          ATTNMETA_OK ||
      backend(s, t->event_create(ctx->state, &s->stop, s->msg, sizeof s->msg), "event create") !=
          ATTNMETA_OK)
    return ATTNMETA_ERR_LAUNCH;
  return ATTNMETA_OK;
}

/* Releases everything; `status` is returned unless it is OK and a release
 * fails. Waits for the stream first, so nothing in flight is torn down. */
static attnmeta_status session_close(session *s, attnmeta_status status) {
  const am_backend_table *t = s->ctx->table;
  void *state = s->ctx->state;
  char msg[AM_MESSAGE_SIZE];
  int st = ATTNMETA_OK;
  if (s->has_stream) (void)t->synchronize(state, s->stream, msg, sizeof msg);
  if (s->graph || s->exec) st = t->graph_destroy(state, s->graph, s->exec, msg, sizeof msg);
  if (s->start) (void)t->event_destroy(state, s->start, msg, sizeof msg);
  if (s->stop) (void)t->event_destroy(state, s->stop, msg, sizeof msg);
  if (s->has_stream) (void)t->stream_destroy(state, s->stream, msg, sizeof msg);
  free(s->samples);
  if (status == ATTNMETA_OK && st != ATTNMETA_OK)
    return am_fail(s->ctx, (attnmeta_status)st, "graph destroy: %s", msg);
  return status == ATTNMETA_OK ? am_succeed(s->ctx) : status;
}

static attnmeta_status sync_stream(session *s) {
  return backend(s, s->ctx->table->synchronize(s->ctx->state, s->stream, s->msg, sizeof s->msg),
                 "synchronize");
}

/* Milliseconds between the session's two events (waits for the second). */
static attnmeta_status elapsed_ms(session *s, double *ms) {
  float f = 0.0f;
  attnmeta_status st = backend(
      s, s->ctx->table->event_elapsed(s->ctx->state, s->start, s->stop, &f, s->msg, sizeof s->msg),
      "event elapsed time");
  *ms = f;
  return st;
}

static attnmeta_status record(session *s, void *event) {
  return backend(s,
                 s->ctx->table->event_record(s->ctx->state, event, s->stream, s->msg,
                                             sizeof s->msg),
                 "event record");
}

static attnmeta_status run_calls(session *s, attnmeta_enqueue_fn enqueue, void *user, int64_t n,
                                 const char *phase) {
  int64_t i;
  for (i = 0; i < n; ++i) {
    attnmeta_status st = enqueue(user, s->stream);
    if (st != ATTNMETA_OK) return callback_failed(s, st, phase, (int)i);
  }
  return ATTNMETA_OK;
}

static attnmeta_status check_counts(attnmeta_context *ctx, const char *a, int va, const char *b,
                                    int vb, const char *c, int vc) {
  if (va < 1 || vb < 1 || vc < 1)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "%s (%d), %s (%d) and %s (%d) must be >= 1",
                   a, va, b, vb, c, vc);
  return ATTNMETA_OK;
}

/* ---- graph replay ---- */

static attnmeta_status graph_impl(attnmeta_context *ctx, attnmeta_enqueue_fn enqueue, void *user,
                                  int steps, int replays, int repeats,
                                  attnmeta_graph_timing *out) {
  const am_backend_table *t = ctx->table;
  session s;
  attnmeta_status st;
  int rep, i, captured;
  memset(out, 0, sizeof *out);
  out->steps_per_graph = steps;
  out->replays = replays;
  out->repeats = repeats;
  out->kernel_nodes_per_step = -1.0;
  st = session_open(&s, ctx, repeats);
  if (st != ATTNMETA_OK) return session_close(&s, st);

  /* Warm-up: one round of eager calls (first-launch costs, caches). */
  st = run_calls(&s, enqueue, user, steps, "warm-up");
  if (st == ATTNMETA_OK) st = sync_stream(&s);
  if (st != ATTNMETA_OK) return session_close(&s, st);

  captured = t->capture_begin(ctx->state, s.stream, s.msg, sizeof s.msg);
  if (captured == ATTNMETA_ERR_NOT_SUPPORTED) {
    /* No graphs (CPU): the callback in a loop, wall time. */
    for (rep = 0; rep < repeats && st == ATTNMETA_OK; ++rep) {
      double ms = 0.0;
      st = record(&s, s.start);
      if (st == ATTNMETA_OK) st = run_calls(&s, enqueue, user, (int64_t)steps * replays, "loop");
      if (st == ATTNMETA_OK) st = record(&s, s.stop);
      if (st == ATTNMETA_OK) st = sync_stream(&s);
      if (st == ATTNMETA_OK) st = elapsed_ms(&s, &ms);
      s.samples[rep] = ms * 1e3 / ((double)steps * replays);
    }
    if (st == ATTNMETA_OK) out->us_per_step = stat_of(s.samples, repeats);
    return session_close(&s, st);
  }
  st = backend(&s, captured, "begin stream capture");
  if (st != ATTNMETA_OK) return session_close(&s, st);
  out->graph = 1;
  st = run_calls(&s, enqueue, user, steps, "capture");
  {
    /* The capture always ends, whatever the callback did. */
    attnmeta_status end =
        backend(&s, t->capture_end(ctx->state, s.stream, &s.graph, s.msg, sizeof s.msg),
                "end stream capture");
    if (st == ATTNMETA_OK) st = end;
  }
  if (st == ATTNMETA_OK)
    st = backend(&s,
                 t->graph_node_count(ctx->state, s.graph, &out->graph_nodes, &out->kernel_nodes,
                                     s.msg, sizeof s.msg),
                 "graph node count");
  if (st == ATTNMETA_OK)
    st = backend(&s, t->graph_instantiate(ctx->state, s.graph, &s.exec, s.msg, sizeof s.msg),
                 "graph instantiate");
  if (st != ATTNMETA_OK) return session_close(&s, st);
  out->kernel_nodes_per_step = (double)out->kernel_nodes / steps;

  /* One replay to upload and warm the graph. */
  st = backend(&s, t->graph_launch(ctx->state, s.exec, s.stream, s.msg, sizeof s.msg),
               "graph launch");
  if (st == ATTNMETA_OK) st = sync_stream(&s);
  for (rep = 0; rep < repeats && st == ATTNMETA_OK; ++rep) {
    double ms = 0.0;
    st = record(&s, s.start);
    for (i = 0; i < replays && st == ATTNMETA_OK; ++i)
      st = backend(&s, t->graph_launch(ctx->state, s.exec, s.stream, s.msg, sizeof s.msg),
                   "graph launch");
    if (st == ATTNMETA_OK) st = record(&s, s.stop);
    if (st == ATTNMETA_OK) st = elapsed_ms(&s, &ms);
    s.samples[rep] = ms * 1e3 / ((double)steps * replays);
  }
  if (st == ATTNMETA_OK) out->us_per_step = stat_of(s.samples, repeats);
  return session_close(&s, st);
}

attnmeta_status attnmeta_measure_graph(attnmeta_context *ctx, attnmeta_enqueue_fn enqueue,
                                       void *user, int steps_per_graph, int replays, int repeats,
                                       attnmeta_graph_timing *result) {
  attnmeta_status st;
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  if (!enqueue || !result)
    return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER, "%s is NULL", enqueue ? "result" : "enqueue");
  st = check_counts(ctx, "steps_per_graph", steps_per_graph, "replays", replays, "repeats",
                    repeats);
  if (st != ATTNMETA_OK) return st;
  return graph_impl(ctx, enqueue, user, steps_per_graph, replays, repeats, result);
}

/* ---- eager issue ---- */

static attnmeta_status eager_impl(attnmeta_context *ctx, attnmeta_enqueue_fn enqueue, void *user,
                                  int iterations, int repeats, attnmeta_eager_timing *out) {
  session s;
  attnmeta_status st;
  int rep;
  memset(out, 0, sizeof *out);
  out->iterations = iterations;
  out->repeats = repeats;
  st = session_open(&s, ctx, repeats);
  if (st == ATTNMETA_OK) st = run_calls(&s, enqueue, user, iterations < 100 ? iterations : 100,
                                        "warm-up");
  if (st == ATTNMETA_OK) st = sync_stream(&s);
  for (rep = 0; rep < repeats && st == ATTNMETA_OK; ++rep) {
    double t0, t1, t2, ms = 0.0;
    st = record(&s, s.start);
    t0 = now_us();
    if (st == ATTNMETA_OK) st = run_calls(&s, enqueue, user, iterations, "eager loop");
    t1 = now_us();
    if (st == ATTNMETA_OK) st = record(&s, s.stop);
    if (st == ATTNMETA_OK) st = sync_stream(&s);
    t2 = now_us();
    if (st == ATTNMETA_OK) st = elapsed_ms(&s, &ms);
    s.samples[rep] = (t1 - t0) / iterations;
    s.samples2[rep] = (t2 - t0) / iterations;
    s.samples3[rep] = ms * 1e3 / iterations;
  }
  if (st == ATTNMETA_OK) {
    out->host_us_per_call = stat_of(s.samples, repeats);
    out->complete_us_per_step = stat_of(s.samples2, repeats);
    out->device_us_per_step = stat_of(s.samples3, repeats);
  }
  return session_close(&s, st);
}

attnmeta_status attnmeta_measure_eager(attnmeta_context *ctx, attnmeta_enqueue_fn enqueue,
                                       void *user, int iterations, int repeats,
                                       attnmeta_eager_timing *result) {
  attnmeta_status st;
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  if (!enqueue || !result)
    return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER, "%s is NULL", enqueue ? "result" : "enqueue");
  st = check_counts(ctx, "iterations", iterations, "repeats", repeats, "iterations", iterations);
  if (st != ATTNMETA_OK) return st;
  return eager_impl(ctx, enqueue, user, iterations, repeats, result);
}

/* ---- floors ---- */

static attnmeta_status empty_enqueue(void *user, void *stream) {
  attnmeta_context *ctx = (attnmeta_context *)user;
  int st = ctx->table->launch_empty(ctx->state, stream, am_message(ctx), AM_MESSAGE_SIZE);
  return (attnmeta_status)st;
}

attnmeta_status attnmeta_measure_empty_kernel(attnmeta_context *ctx, int nodes_per_graph,
                                              int replays, int iterations, int repeats,
                                              attnmeta_empty_timing *result) {
  attnmeta_graph_timing graph;
  attnmeta_eager_timing eager;
  attnmeta_status st;
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  if (!result) return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER, "result is NULL");
  st = check_counts(ctx, "nodes_per_graph", nodes_per_graph, "replays", replays, "repeats",
                    repeats);
  if (st == ATTNMETA_OK)
    st = check_counts(ctx, "iterations", iterations, "repeats", repeats, "replays", replays);
  if (st != ATTNMETA_OK) return st;
  memset(result, 0, sizeof *result);
  st = graph_impl(ctx, empty_enqueue, ctx, nodes_per_graph, replays, repeats, &graph);
  if (st != ATTNMETA_OK) return st;
  st = eager_impl(ctx, empty_enqueue, ctx, iterations, repeats, &eager);
  if (st != ATTNMETA_OK) return st;
  result->graph_us_per_node = graph.us_per_step;
  result->launch_host_us = eager.host_us_per_call;
  result->launch_complete_us = eager.complete_us_per_step;
  result->nodes_per_graph = nodes_per_graph;
  result->replays = replays;
  result->iterations = iterations;
  result->repeats = repeats;
  result->graph = graph.graph;
  return am_succeed(ctx);
}

/* ---- copy bandwidth ---- */

attnmeta_status attnmeta_measure_copy(attnmeta_context *ctx, size_t bytes, int iterations,
                                      int repeats, attnmeta_copy_timing *result) {
  const am_backend_table *t;
  void *src = NULL, *dst = NULL;
  session s;
  attnmeta_status st;
  int rep, i;
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  if (!result) return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER, "result is NULL");
  if (bytes == 0) return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT, "bytes must be >= 1");
  st = check_counts(ctx, "iterations", iterations, "repeats", repeats, "iterations", iterations);
  if (st != ATTNMETA_OK) return st;
  t = ctx->table;
  memset(result, 0, sizeof *result);
  result->bytes = bytes;
  result->iterations = iterations;
  result->repeats = repeats;
  st = session_open(&s, ctx, repeats);
  if (st == ATTNMETA_OK)
    st = backend(&s, t->alloc(ctx->state, bytes, &src, s.msg, sizeof s.msg), "allocate");
  if (st == ATTNMETA_OK)
    st = backend(&s, t->alloc(ctx->state, bytes, &dst, s.msg, sizeof s.msg), "allocate");
  /* Warm-up both ways: every page of both buffers is written once. */
  if (st == ATTNMETA_OK)
    st = backend(&s, t->copy_device(ctx->state, src, dst, bytes, s.stream, s.msg, sizeof s.msg),
                 "device-to-device copy");
  if (st == ATTNMETA_OK)
    st = backend(&s, t->copy_device(ctx->state, dst, src, bytes, s.stream, s.msg, sizeof s.msg),
                 "device-to-device copy");
  if (st == ATTNMETA_OK) st = sync_stream(&s);
  for (rep = 0; rep < repeats && st == ATTNMETA_OK; ++rep) {
    double ms = 0.0, us;
    st = record(&s, s.start);
    for (i = 0; i < iterations && st == ATTNMETA_OK; ++i)
      st = backend(&s,
                   t->copy_device(ctx->state, dst, src, bytes, s.stream, s.msg, sizeof s.msg),
                   "device-to-device copy");
    if (st == ATTNMETA_OK) st = record(&s, s.stop);
    if (st == ATTNMETA_OK) st = elapsed_ms(&s, &ms);
    us = ms * 1e3 / iterations;
    s.samples[rep] = us;
    s.samples2[rep] = us > 0.0 ? 2.0 * (double)bytes / (us * 1e-6) : 0.0;
  }
  if (st == ATTNMETA_OK) {
    result->us_per_copy = stat_of(s.samples, repeats);
    result->bytes_per_second = stat_of(s.samples2, repeats);
  }
  if (s.has_stream) (void)sync_stream(&s);
  if (src) (void)t->release(ctx->state, src, s.msg, sizeof s.msg);
  if (dst) (void)t->release(ctx->state, dst, s.msg, sizeof s.msg);
  return session_close(&s, st);
}

attnmeta_status attnmeta_measure_cache_bytes(attnmeta_context *ctx, int64_t *bytes) {
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  if (!bytes) return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER, "bytes is NULL");
  /* an appended member: 0 (unknown) for a module without it */
  *bytes = am_backend_has(ctx->table, cache_bytes) ? ctx->table->cache_bytes(ctx->state) : 0;
  return am_succeed(ctx);
}
