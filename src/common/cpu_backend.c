// SPDX-License-Identifier: Apache-2.0
/*
 * The CPU backend: runs the very kernel body the GPUs run, one thread per
 * block, blocks in sequence, barriers as no-ops. Always linked in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "am_backend.h"
#include "am_pool_kernel.h"
#include "am_step_kernel.h"
#include "am_step_plan.h"
#include "am_topk_kernel.h"
#include "attnmeta/attnmeta.h"

static int cpu_device_count(int *count, char *msg, size_t msg_size) {
  (void)msg;
  (void)msg_size;
  *count = 1;
  return ATTNMETA_OK;
}

static int cpu_open(int device, void **state, char *name, size_t name_size, char *msg,
                    size_t msg_size) {
  if (device != 0) {
    snprintf(msg, msg_size, "the CPU backend has one device, 0; got %d", device);
    return ATTNMETA_ERR_NO_DEVICE;
  }
  *state = NULL;
  snprintf(name, name_size, "host CPU");
  return ATTNMETA_OK;
}

static void cpu_close(void *state) { (void)state; }

/* The CPU backend runs one thread a block: it refuses any other block. */
static int cpu_one_thread(const am_launch_shape *shape, char *msg, size_t msg_size) {
  if (shape->lanes * shape->groups == 1) return ATTNMETA_OK;
  snprintf(msg, msg_size, "the CPU backend runs one thread per block; got %lld x %lld",
           (long long)shape->lanes, (long long)shape->groups);
  return ATTNMETA_ERR_NOT_SUPPORTED;
}

static int cpu_launch_step(void *state, const am_step_params *params, const am_launch_shape *shape,
                           void *stream, char *msg, size_t msg_size) {
  /* Stage scratch lives on this call's stack, so contexts and threads never
   * share it; the planner stages on the CPU only what fits (1 KiB). */
  int32_t stage[AM_CPU_STAGE_WORDS];
  int64_t block;
  const int status = cpu_one_thread(shape, msg, msg_size);
  (void)state;
  (void)stream;
  if (status != ATTNMETA_OK) return status;
  if (shape->shared_bytes > (int64_t)sizeof stage) {
    snprintf(msg, msg_size, "internal: %lld bytes of block-shared memory asked, %zu available",
             (long long)shape->shared_bytes, sizeof stage);
    return ATTNMETA_ERR_INTERNAL;
  }
  /* grid <= 2^31 and no larger than the work (am_plan_launch bounds it), so
   * it fits the body's 32-bit indices */
  for (block = 0; block < shape->grid; ++block) {
    am_step_body(params, am_make_thread((uint32_t)block, (uint32_t)shape->grid, 0, 1, 0, 1),
                 stage, params->variant | AM_VARIANT_ONE_LANE);
  }
  return ATTNMETA_OK;
}

static int cpu_launch_topk(void *state, const am_topk_params *params, const am_launch_shape *shape,
                           void *stream, char *msg, size_t msg_size) {
  int32_t scratch[AM_TOPK_SCRATCH_INTS(1, 1)]; /* the prefix sum's block-shared memory: one thread a block */
  int64_t block, grid;
  const int status = cpu_one_thread(shape, msg, msg_size);
  (void)state;
  (void)stream;
  if (status != ATTNMETA_OK) return status;
  /* A block takes the rows block, block + grid, ...: blocks past the rows
   * have none, so a forced grid runs only the blocks with work (the same
   * bytes; the step's planner bounds its grid the same way). */
  grid = shape->grid < params->num_tokens ? shape->grid : params->num_tokens;
  if (grid < 1) grid = 1;
  for (block = 0; block < grid; ++block)
    am_topk_body(params, am_make_thread((uint32_t)block, (uint32_t)grid, 0, 1, 0, 1), scratch,
                 am_topk_kind_of(params));
  return ATTNMETA_OK;
}

static int cpu_launch_pool(void *state, const am_pool_params *params, const am_launch_shape *shape,
                           void *stream, char *msg, size_t msg_size) {
  int64_t block, grid, items;
  const int status = cpu_one_thread(shape, msg, msg_size);
  (void)state;
  (void)stream;
  if (status != ATTNMETA_OK) return status;
  /* As for top-k: a block takes the work items (a slice of a request row
   * each) block, block + grid, ..., so a forced grid runs only the blocks
   * with an item (block 0 at least, for kv_indptr_out[0]); the answer does
   * not depend on the grid. */
  items = (int64_t)params->num_reqs * (params->row_chunks > 1 ? params->row_chunks : 1);
  grid = shape->grid < items ? shape->grid : items;
  if (grid < 1) grid = 1;
  for (block = 0; block < grid; ++block)
    am_pool_body(params, am_make_thread((uint32_t)block, (uint32_t)grid, 0, 1, 0, 1));
  return ATTNMETA_OK;
}

static int cpu_alloc(void *state, size_t bytes, void **ptr, char *msg, size_t msg_size) {
  (void)state;
  *ptr = malloc(bytes ? bytes : 1);
  if (!*ptr) {
    snprintf(msg, msg_size, "cannot allocate %zu bytes of host memory", bytes);
    return ATTNMETA_ERR_OUT_OF_MEMORY;
  }
  return ATTNMETA_OK;
}

static int cpu_release(void *state, void *ptr, char *msg, size_t msg_size) {
  (void)state;
  (void)msg;
  (void)msg_size;
  free(ptr);
  return ATTNMETA_OK;
}

static int cpu_copy(void *state, void *dst, const void *src, size_t bytes, int to_device,
                    char *msg, size_t msg_size) {
  (void)state;
  (void)to_device;
  (void)msg;
  (void)msg_size;
  if (bytes) memmove(dst, src, bytes);
  return ATTNMETA_OK;
}

/* Synchronizing or destroying a stream: nothing (the work is done when its
 * call returns, and the CPU backend's streams are NULL). */
static int cpu_stream_nothing(void *state, void *stream, char *msg, size_t msg_size) {
  (void)state;
  (void)stream;
  (void)msg;
  (void)msg_size;
  return ATTNMETA_OK;
}

static int cpu_processor_count(void *state) {
  (void)state;
  return 1;
}

/* ---- measurement (attnmeta_measure.h): wall clock, no graphs ----
 * The CPU backend's work is done when its call returns, so an event is the
 * wall-clock time at which it was recorded, and streams are NULL. */

typedef struct cpu_event {
  double us;
} cpu_event;

static double cpu_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cpu_stream_create(void *state, void **stream, char *msg, size_t msg_size) {
  (void)state;
  (void)msg;
  (void)msg_size;
  *stream = NULL;
  return ATTNMETA_OK;
}

static int cpu_event_create(void *state, void **event, char *msg, size_t msg_size) {
  cpu_event *e = (cpu_event *)calloc(1, sizeof *e);
  (void)state;
  *event = e;
  if (!e) {
    snprintf(msg, msg_size, "cannot allocate an event");
    return ATTNMETA_ERR_OUT_OF_MEMORY;
  }
  return ATTNMETA_OK;
}

static int cpu_event_record(void *state, void *event, void *stream, char *msg, size_t msg_size) {
  (void)state;
  (void)stream;
  (void)msg;
  (void)msg_size;
  ((cpu_event *)event)->us = cpu_now_us();
  return ATTNMETA_OK;
}

static int cpu_event_elapsed(void *state, void *start, void *stop, float *ms, char *msg,
                             size_t msg_size) {
  (void)state;
  (void)msg;
  (void)msg_size;
  *ms = (float)((((const cpu_event *)stop)->us - ((const cpu_event *)start)->us) / 1e3);
  return ATTNMETA_OK;
}

static int cpu_no_graphs(char *msg, size_t msg_size) {
  snprintf(msg, msg_size, "the CPU backend has no graphs");
  return ATTNMETA_ERR_NOT_SUPPORTED;
}

static int cpu_capture_begin(void *state, void *stream, char *msg, size_t msg_size) {
  (void)state;
  (void)stream;
  return cpu_no_graphs(msg, msg_size);
}

static int cpu_capture_end(void *state, void *stream, void **graph, char *msg, size_t msg_size) {
  (void)state;
  (void)stream;
  *graph = NULL;
  return cpu_no_graphs(msg, msg_size);
}

static int cpu_graph_node_count(void *state, void *graph, int64_t *nodes, int64_t *kernel_nodes,
                                char *msg, size_t msg_size) {
  (void)state;
  (void)graph;
  *nodes = *kernel_nodes = 0;
  return cpu_no_graphs(msg, msg_size);
}

static int cpu_graph_instantiate(void *state, void *graph, void **exec, char *msg,
                                 size_t msg_size) {
  (void)state;
  (void)graph;
  *exec = NULL;
  return cpu_no_graphs(msg, msg_size);
}

static int cpu_graph_launch(void *state, void *exec, void *stream, char *msg, size_t msg_size) {
  (void)state;
  (void)exec;
  (void)stream;
  return cpu_no_graphs(msg, msg_size);
}

static int cpu_graph_destroy(void *state, void *graph, void *exec, char *msg, size_t msg_size) {
  (void)state;
  (void)msg;
  (void)msg_size;
  (void)graph;
  (void)exec;
  return ATTNMETA_OK;
}

/* The CPU's empty "kernel": a call through a volatile pointer, which the
 * compiler can neither inline nor remove. */
static void cpu_empty_body(void *unused) { (void)unused; }
static void (*volatile cpu_empty_kernel)(void *) = cpu_empty_body;

/* Runs the empty kernel now; the rest is what any stream operation of the
 * CPU backend does: nothing. */
static int cpu_launch_empty(void *state, void *stream, char *msg, size_t msg_size) {
  cpu_empty_kernel(stream);
  return cpu_stream_nothing(state, stream, msg, msg_size);
}

/* A copy on the device is a host copy too (the stream is NULL). */
static int cpu_copy_device(void *state, void *dst, const void *src, size_t bytes, void *stream,
                           char *msg, size_t msg_size) {
  (void)stream;
  return cpu_copy(state, dst, src, bytes, 1, msg, msg_size);
}

/* The largest data cache the C library reports (glibc's sysconf names);
 * 0 when it reports none. */
static int64_t cpu_cache_bytes(void *state) {
  long n = 0;
  (void)state;
#if defined(_SC_LEVEL3_CACHE_SIZE)
  n = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
#if defined(_SC_LEVEL2_CACHE_SIZE)
  if (n <= 0) n = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  return n > 0 ? (int64_t)n : 0;
}

static int cpu_runtime_versions(int *driver, int *runtime, char *msg, size_t msg_size) {
  *driver = 0;
  *runtime = 0;
  snprintf(msg, msg_size, "the CPU backend uses no GPU driver or runtime");
  return ATTNMETA_ERR_NOT_SUPPORTED;
}

static const am_backend_table cpu_table = {
    AM_BACKEND_ABI, sizeof(am_backend_table), "cpu", "host",
    cpu_device_count, cpu_open, cpu_close, cpu_launch_step, cpu_alloc, cpu_release, cpu_copy,
    cpu_stream_nothing, cpu_processor_count,
    /* measurement */
    cpu_stream_create, cpu_stream_nothing, cpu_event_create, cpu_release, cpu_event_record,
    cpu_event_elapsed, cpu_capture_begin, cpu_capture_end, cpu_graph_node_count,
    cpu_graph_instantiate, cpu_graph_launch, cpu_graph_destroy, cpu_launch_empty, cpu_copy_device,
    /* appended */
    cpu_launch_topk, cpu_cache_bytes, cpu_runtime_versions, cpu_launch_pool,
};

const am_backend_table *am_cpu_backend(void) { return &cpu_table; }
