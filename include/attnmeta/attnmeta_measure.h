// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta — measurement API: timing of work on a context's backend, the
 * way `attnmeta bench` measures it (bench/NOTES.md).
 *
 * TOOLING, NOT FOR THE HOT PATH. These calls create streams, events and
 * graphs, allocate, and synchronise the host. They are for benchmarks,
 * tuning runs and bindings that want the library's own timings; a serving
 * engine never needs them. They may grow between minor versions (new
 * fields at the end of the result structs).
 *
 * What is measured, and how:
 *  - Device time per step: `steps_per_graph` calls of a callback captured
 *    into ONE graph on a fresh stream, the graph replayed `replays` times
 *    between two events, per repeat; median, min and max over `repeats`.
 *    A loop of single launches would measure the host instead.
 *  - Host time per call: the callback issued eagerly in a loop on a fresh
 *    stream; the host synchronises only outside the timed loop.
 *  - Floors: the same two measurements of a kernel that does nothing.
 *  - Copy bandwidth: device-to-device copies, bytes read + written.
 *
 * The CPU backend has no graphs and no asynchronous work: "device" time
 * there is wall time of the callback run in a loop (the graph fields say
 * so), its events are wall-clock timestamps, its empty kernel is a call of
 * an empty function and its copy is memcpy.
 *
 * Every call returns an attnmeta_status; on failure attnmeta_last_error(ctx)
 * says what went wrong and *result is unspecified.
 */
#ifndef ATTNMETA_ATTNMETA_MEASURE_H
#define ATTNMETA_ATTNMETA_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "attnmeta/attnmeta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Issues one step of work on `stream` (a cudaStream_t or hipStream_t; NULL
 * on the CPU backend), e.g. one attnmeta_build_step(ctx, &step, stream).
 * It must not synchronise, allocate or read device memory back: it is
 * called while the stream is being captured into a graph. A non-OK status
 * aborts the measurement; the message the callback left on the context (if
 * any) is kept in the measurement's message. A callback may change what it
 * issues from call to call (e.g. cycle through several input sets): each
 * captured call becomes its own graph node(s). */
typedef attnmeta_status (*attnmeta_enqueue_fn)(void *user, void *stream);

/* Statistics over repeats. */
typedef struct attnmeta_stat {
  double median;
  double min;
  double max;
} attnmeta_stat;

typedef struct attnmeta_graph_timing {
  attnmeta_stat us_per_step;    /* device µs per step (CPU: wall µs per call) */
  int64_t graph_nodes;          /* nodes of the captured graph (0 on CPU) */
  int64_t kernel_nodes;         /* kernel nodes among them (0 on CPU) */
  double kernel_nodes_per_step; /* kernel_nodes / steps_per_graph: launches per
                                   step; -1 where not known (CPU) */
  int steps_per_graph;
  int replays;
  int repeats;
  int graph; /* 1: timed as a captured graph; 0: the backend has no graphs and
                the callback ran in a loop of steps_per_graph * replays calls */
} attnmeta_graph_timing;

typedef struct attnmeta_eager_timing {
  attnmeta_stat host_us_per_call;     /* wall time to issue one call */
  attnmeta_stat complete_us_per_step; /* wall time from the first issue to the
                                         completion of the last, per call */
  attnmeta_stat device_us_per_step;   /* events around the eager loop, per call */
  int iterations;
  int repeats;
} attnmeta_eager_timing;

typedef struct attnmeta_empty_timing {
  attnmeta_stat graph_us_per_node;    /* device µs per empty-kernel node of a
                                         replayed graph (CPU: per empty call) */
  attnmeta_stat launch_host_us;       /* host µs to issue one eager launch */
  attnmeta_stat launch_complete_us;   /* µs per eager launch, issue to completion */
  int nodes_per_graph;
  int replays;
  int iterations;
  int repeats;
  int graph; /* as in attnmeta_graph_timing */
} attnmeta_empty_timing;

typedef struct attnmeta_copy_timing {
  attnmeta_stat bytes_per_second; /* (bytes read + bytes written) per second,
                                     i.e. 2 * bytes per copy */
  attnmeta_stat us_per_copy;
  size_t bytes; /* bytes of one copy */
  int iterations;
  int repeats;
} attnmeta_copy_timing;

/* Captures `steps_per_graph` calls of `enqueue` into one graph on a fresh
 * stream (after one eager warm-up round of as many calls), replays it once
 * to warm up, then, per repeat, `replays` replays between events.
 * CPU backend: `steps_per_graph * replays` calls in a loop, wall time. */
ATTNMETA_API attnmeta_status attnmeta_measure_graph(attnmeta_context *ctx,
                                                    attnmeta_enqueue_fn enqueue, void *user,
                                                    int steps_per_graph, int replays, int repeats,
                                                    attnmeta_graph_timing *result);

/* Issues `iterations` calls of `enqueue` eagerly on a fresh stream, per
 * repeat, after a warm-up of up to `iterations` calls; no synchronisation
 * inside the timed loop. */
ATTNMETA_API attnmeta_status attnmeta_measure_eager(attnmeta_context *ctx,
                                                    attnmeta_enqueue_fn enqueue, void *user,
                                                    int iterations, int repeats,
                                                    attnmeta_eager_timing *result);

/* The floors, in the same run: a graph of `nodes_per_graph` empty-kernel
 * nodes replayed `replays` times (device µs per node), and `iterations`
 * eager launches of the empty kernel (host µs per launch), per repeat. */
ATTNMETA_API attnmeta_status attnmeta_measure_empty_kernel(attnmeta_context *ctx,
                                                           int nodes_per_graph, int replays,
                                                           int iterations, int repeats,
                                                           attnmeta_empty_timing *result);

/* Device-to-device copy of `bytes` (>= 1) between two buffers it allocates:
 * `iterations` back-to-back copies between events, per repeat. CPU: memcpy
 * of the same bytes. */
ATTNMETA_API attnmeta_status attnmeta_measure_copy(attnmeta_context *ctx, size_t bytes,
                                                   int iterations, int repeats,
                                                   attnmeta_copy_timing *result);

/* Bytes of the device's last-level cache (the L2 of a GPU, the largest
 * data cache the C library reports on the CPU backend), for sizing input
 * rotations that defeat it; *bytes = 0 when the backend cannot tell. */
ATTNMETA_API attnmeta_status attnmeta_measure_cache_bytes(attnmeta_context *ctx, int64_t *bytes);

#ifdef __cplusplus
}
#endif

#endif /* ATTNMETA_ATTNMETA_MEASURE_H */
