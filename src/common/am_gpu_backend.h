// SPDX-License-Identifier: Apache-2.0
/*
 * The GPU backend's launch glue, written once for CUDA and HIP. It uses the
 * neutral runtime names of am_gpu_runtime (src/cuda/cuda_runtime_map.h or
 * src/hip/hip_runtime_map.h, included first by the module's one source
 * file), never a vendor's names nor launch syntax (AM_RT_LAUNCH,
 * AM_RT_DYNAMIC_SHARED). C++ (compiled by nvcc, hipcc, or for tests a host
 * C++ compiler against HIP-CPU).
 */
#ifndef ATTNMETA_AM_GPU_BACKEND_H
#define ATTNMETA_AM_GPU_BACKEND_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_backend.h"
#include "am_step_kernel.h"
#include "am_topk_kernel.h"
#include "attnmeta/attnmeta.h"

/* The largest block a kernel of this file is compiled for (and any GPU runs). */
#define AM_GPU_MAX_BLOCK_THREADS 1024

#ifndef AM_BUILD_TARGETS
#define AM_BUILD_TARGETS "unknown"
#endif

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel(am_step_params params) {
  AM_RT_DYNAMIC_SHARED(int32_t, am_stage);
  am_step_body(&params, AM_THREAD_HERE(), am_stage, AM_VARIANT_FULL);
}

/* The same body without the products AM_VARIANT_FULL gates. */
AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_lean(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_VARIANT_LEAN);
}

/* The lean body for the token map + indexer product set. */
AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_indexer(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_VARIANT_INDEXER);
}

/* The full body with the DeepSeek-V3.2/V4 products: a kernel of its own, so
 * that the others' machine code is unchanged by them. */
AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_dsv4(am_step_params params) {
  AM_RT_DYNAMIC_SHARED(int32_t, am_stage);
  am_step_body(&params, AM_THREAD_HERE(), am_stage, AM_VARIANT_FULL | AM_VARIANT_DSV4);
}

/* The same four, launched to start before the kernel ahead of them on the
 * stream ends (ATTNMETA_LAUNCH_EARLY_START). */
AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_early(am_step_params params) {
  AM_RT_DYNAMIC_SHARED(int32_t, am_stage);
  am_step_body(&params, AM_THREAD_HERE(), am_stage, AM_VARIANT_FULL | AM_VARIANT_EARLY_START);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_dsv4_early(am_step_params params) {
  AM_RT_DYNAMIC_SHARED(int32_t, am_stage);
  am_step_body(&params, AM_THREAD_HERE(), am_stage,
               AM_VARIANT_FULL | AM_VARIANT_DSV4 | AM_VARIANT_EARLY_START);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_lean_early(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_VARIANT_LEAN | AM_VARIANT_EARLY_START);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_REALIGNED_MAX_BLOCK) am_step_kernel_realigned(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_VARIANT_LEAN | AM_VARIANT_REALIGNED);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_REALIGNED_MAX_BLOCK) am_step_kernel_realigned_early(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0,
               AM_VARIANT_LEAN | AM_VARIANT_REALIGNED | AM_VARIANT_EARLY_START);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_indexer_early(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0,
               AM_VARIANT_INDEXER | AM_VARIANT_EARLY_START);
}

/* The indexer product set with realigned rows: without a kernel of its
 * own such a step ran the lean one, which tests for each product and
 * does not speculate. */
AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_REALIGNED_MAX_BLOCK) am_step_kernel_indexer_realigned(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_VARIANT_INDEXER | AM_VARIANT_REALIGNED);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_REALIGNED_MAX_BLOCK) am_step_kernel_indexer_realigned_early(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0,
               AM_VARIANT_INDEXER | AM_VARIANT_REALIGNED | AM_VARIANT_EARLY_START);
}

/* The top-k conversion; dynamic shared memory holds the prefix sum. A
 * kernel for each kind of body (AM_TOPK_TWO_GROUPS, AM_TOPK_PLAIN). */
AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_topk_kernel(am_topk_params params) {
  AM_RT_DYNAMIC_SHARED(int32_t, am_topk_scratch);
  am_topk_body(&params, AM_THREAD_HERE(), am_topk_scratch, 0);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_topk_kernel_two(am_topk_params params) {
  AM_RT_DYNAMIC_SHARED(int32_t, am_topk_scratch);
  am_topk_body(&params, AM_THREAD_HERE(), am_topk_scratch, AM_TOPK_TWO_GROUPS);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_topk_kernel_plain(am_topk_params params) {
  am_topk_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_TOPK_PLAIN);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_topk_kernel_two_plain(am_topk_params params) {
  am_topk_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_TOPK_TWO_GROUPS | AM_TOPK_PLAIN);
}

/* The floor of the measurement API: a launch that does no work. */
AM_KERNEL void am_empty_kernel(void) {}

namespace {

struct gpu_state {
  int device;
  int processors;
  int early_start; /* the device can start a kernel before the one ahead ends */
};

int fail(char *msg, size_t msg_size, int status, const char *what, am_rt_error err) {
  snprintf(msg, msg_size, "%s: %s (%s %d)", what, am_rt_error_string(err), AM_RT_NAME, (int)err);
  return status;
}

/* Makes `device` current for one call and gives the caller's current device
 * back when the call ends, so using a context never changes the device the
 * calling thread (or a framework on it) works with. */
struct device_guard {
  int previous;
  am_rt_error err;
  explicit device_guard(int device) : previous(-1) {
    int current = -1;
    err = am_rt_get_device(&current);
    if (err == AM_RT_SUCCESS && current == device) return;
    err = am_rt_set_device(device);
    if (err == AM_RT_SUCCESS) previous = current;
  }
  ~device_guard() {
    if (previous >= 0) (void)am_rt_set_device(previous);
  }
  device_guard(const device_guard &) = delete;
  device_guard &operator=(const device_guard &) = delete;
};

/* Makes `device` current for this thread, only when it is not already. */
am_rt_error use_device(int device) {
  int current = -1;
  am_rt_error err = am_rt_get_device(&current);
  if (err == AM_RT_SUCCESS && current == device) return err;
  return am_rt_set_device(device);
}

int gpu_device_count(int *count, char *msg, size_t msg_size) {
  int n = 0;
  (void)msg;
  (void)msg_size;
  /* With no driver the runtime returns an error and leaves n untouched:
   * that is "no device", not a failure. */
  if (am_rt_get_device_count(&n) != AM_RT_SUCCESS) n = 0;
  am_rt_clear_error();
  *count = n;
  return ATTNMETA_OK;
}

int gpu_open(int device, void **state, char *name, size_t name_size, char *msg,
             size_t msg_size) {
  int count = 0;
  char arch[64];
  am_rt_error err;
  gpu_device_count(&count, msg, msg_size);
  if (count == 0) {
    snprintf(msg, msg_size, "%s backend: no device (no driver or no GPU visible)", AM_RT_NAME);
    return ATTNMETA_ERR_NO_DEVICE;
  }
  if (device >= count) {
    snprintf(msg, msg_size, "%s backend: device %d asked, %d present", AM_RT_NAME, device, count);
    return ATTNMETA_ERR_NO_DEVICE;
  }
  err = am_rt_set_device(device);
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_NO_DEVICE, "set device", err);
  am_rt_arch_name(device, arch, sizeof arch);
  if (!am_rt_kernel_loadable((const void *)am_step_kernel)) {
    am_rt_clear_error();
    snprintf(msg, msg_size,
             "%s backend: device %d is %s, but this module was built for %s (neither machine "
             "code nor PTX it can run); rebuild with that architecture in the target list",
             AM_RT_NAME, device, arch, AM_BUILD_TARGETS);
    return ATTNMETA_ERR_UNSUPPORTED_ARCH;
  }
  gpu_state *s = (gpu_state *)calloc(1, sizeof(gpu_state));
  if (!s) {
    snprintf(msg, msg_size, "cannot allocate backend state");
    return ATTNMETA_ERR_OUT_OF_MEMORY;
  }
  s->device = device;
  s->processors = am_rt_processor_count(device);
  s->early_start = am_rt_supports_early_start(device);
  am_rt_device_name(device, name, name_size);
  /* "NVIDIA H200 (sm_90, SASS sm_90)": which code the driver runs (CUDA). */
  char code[64];
  am_rt_code_kind(device, code, sizeof code);
  size_t used = strlen(name);
  snprintf(name + used, name_size - used, code[0] ? " (%s, %s)" : " (%s)", arch, code);
  *state = s;
  return ATTNMETA_OK;
}

void gpu_close(void *state) { free(state); }

int gpu_launch_step(void *state, const am_step_params *params, const am_launch_shape *shape,
                    void *stream, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  device_guard guard(s->device);
  am_rt_error err = guard.err;
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "set device", err);
  /* Every GPU refuses larger blocks; saying so here makes the emulated HIP
   * run (which would accept them) catch a planner that asks for one. */
  if ((int64_t)shape->lanes * shape->groups > AM_GPU_MAX_BLOCK_THREADS) {
    snprintf(msg, msg_size, "step kernel: a block of %lld x %lld threads exceeds %d",
             (long long)shape->lanes, (long long)shape->groups, AM_GPU_MAX_BLOCK_THREADS);
    return ATTNMETA_ERR_LAUNCH;
  }
  const dim3 grid((unsigned)shape->grid);
  const dim3 block((unsigned)shape->lanes, (unsigned)shape->groups);
  const int early = (params->variant & AM_VARIANT_EARLY_START) != 0;
  void (*kernel)(am_step_params);
  size_t shared = 0;
  switch (params->variant & ~AM_VARIANT_EARLY_START) {
    case AM_VARIANT_FULL:
      kernel = early ? am_step_kernel_early : am_step_kernel;
      shared = (size_t)shape->shared_bytes;
      break;
    case AM_VARIANT_FULL | AM_VARIANT_DSV4:
      kernel = early ? am_step_kernel_dsv4_early : am_step_kernel_dsv4;
      shared = (size_t)shape->shared_bytes;
      break;
    case AM_VARIANT_INDEXER:
      kernel = early ? am_step_kernel_indexer_early : am_step_kernel_indexer;
      break;
    case AM_VARIANT_LEAN | AM_VARIANT_REALIGNED:
    case AM_VARIANT_INDEXER | AM_VARIANT_REALIGNED:
      if ((int64_t)shape->lanes * shape->groups > AM_REALIGNED_MAX_BLOCK) {
        snprintf(msg, msg_size, "step kernel for realigned rows: a block of %lld x %lld threads exceeds %d",
                 (long long)shape->lanes, (long long)shape->groups, AM_REALIGNED_MAX_BLOCK);
        return ATTNMETA_ERR_LAUNCH;
      }
      if (params->variant & AM_VARIANT_INDEXER)
        kernel = early ? am_step_kernel_indexer_realigned_early : am_step_kernel_indexer_realigned;
      else
        kernel = early ? am_step_kernel_realigned_early : am_step_kernel_realigned;
      break;
    default:
      kernel = early ? am_step_kernel_lean_early : am_step_kernel_lean;
      break;
  }
  if (early && s->early_start) {
    err = am_rt_launch_early(kernel, grid, block, shared, (am_rt_stream)stream, *params);
    if (err != AM_RT_SUCCESS) {
      am_rt_clear_error();
      return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "step kernel (early start)", err);
    }
    return ATTNMETA_OK;
  }
  AM_RT_LAUNCH(kernel, grid, block, shared, (am_rt_stream)stream, *params);
  err = am_rt_get_last_error();
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "step kernel", err);
  return ATTNMETA_OK;
}

int gpu_launch_topk(void *state, const am_topk_params *params, const am_launch_shape *shape,
                    void *stream, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  device_guard guard(s->device);
  am_rt_error err = guard.err;
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "set device", err);
  if ((int64_t)shape->lanes * shape->groups > AM_GPU_MAX_BLOCK_THREADS) {
    snprintf(msg, msg_size, "top-k kernel: a block of %lld x %lld threads exceeds %d",
             (long long)shape->lanes, (long long)shape->groups, AM_GPU_MAX_BLOCK_THREADS);
    return ATTNMETA_ERR_LAUNCH;
  }
  const dim3 block((unsigned)shape->lanes, (unsigned)shape->groups);
  const dim3 grid((unsigned)shape->grid);
  const size_t shared = (size_t)shape->shared_bytes;
  switch (am_topk_kind_of(params)) {
    case AM_TOPK_TWO_GROUPS | AM_TOPK_PLAIN:
      AM_RT_LAUNCH(am_topk_kernel_two_plain, grid, block, shared, (am_rt_stream)stream, *params);
      break;
    case AM_TOPK_TWO_GROUPS:
      AM_RT_LAUNCH(am_topk_kernel_two, grid, block, shared, (am_rt_stream)stream, *params);
      break;
    case AM_TOPK_PLAIN:
      AM_RT_LAUNCH(am_topk_kernel_plain, grid, block, shared, (am_rt_stream)stream, *params);
      break;
    default:
      AM_RT_LAUNCH(am_topk_kernel, grid, block, shared, (am_rt_stream)stream, *params);
      break;
  }
  err = am_rt_get_last_error();
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "top-k kernel", err);
  return ATTNMETA_OK;
}

int gpu_alloc(void *state, size_t bytes, void **ptr, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  device_guard guard(s->device);
  am_rt_error err = guard.err;
  if (err == AM_RT_SUCCESS) err = am_rt_malloc(ptr, bytes ? bytes : 1);
  if (err != AM_RT_SUCCESS) {
    am_rt_clear_error();
    return fail(msg, msg_size, ATTNMETA_ERR_OUT_OF_MEMORY, "device allocation", err);
  }
  return ATTNMETA_OK;
}

int gpu_release(void *state, void *ptr, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  device_guard guard(s->device);
  am_rt_error err = guard.err;
  if (err == AM_RT_SUCCESS) err = am_rt_free(ptr);
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_INVALID_ARGUMENT, "free", err);
  return ATTNMETA_OK;
}

int gpu_copy(void *state, void *dst, const void *src, size_t bytes, int to_device, char *msg,
             size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  device_guard guard(s->device);
  am_rt_error err = guard.err;
  if (err == AM_RT_SUCCESS) err = am_rt_copy(dst, src, bytes, to_device);
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_INVALID_ARGUMENT, "copy", err);
  return ATTNMETA_OK;
}

int gpu_synchronize(void *state, void *stream, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  device_guard guard(s->device);
  am_rt_error err = guard.err;
  if (err == AM_RT_SUCCESS) err = am_rt_stream_synchronize((am_rt_stream)stream);
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "synchronize", err);
  return ATTNMETA_OK;
}

int gpu_processor_count(void *state) { return ((const gpu_state *)state)->processors; }

int64_t gpu_cache_bytes(void *state) { return am_rt_cache_bytes(((const gpu_state *)state)->device); }

/* ---- measurement (attnmeta_measure.h) ---- */

/* Makes the bound device current; on failure the status, with a message. */
int gpu_enter(void *state, const char *what, char *msg, size_t msg_size) {
  am_rt_error err = use_device(((const gpu_state *)state)->device);
  return err == AM_RT_SUCCESS ? (int)ATTNMETA_OK
                              : fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, what, err);
}

int gpu_checked(am_rt_error err, const char *what, char *msg, size_t msg_size) {
  if (err == AM_RT_SUCCESS) return ATTNMETA_OK;
  am_rt_clear_error();
  return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, what, err);
}

int gpu_stream_create(void *state, void **stream, char *msg, size_t msg_size) {
  am_rt_stream s = NULL;
  int status = gpu_enter(state, "stream create", msg, msg_size);
  *stream = NULL;
  if (status != ATTNMETA_OK) return status;
  status = gpu_checked(am_rt_stream_create(&s), "stream create", msg, msg_size);
  if (status == ATTNMETA_OK) *stream = (void *)s;
  return status;
}

int gpu_stream_destroy(void *state, void *stream, char *msg, size_t msg_size) {
  int status = gpu_enter(state, "stream destroy", msg, msg_size);
  if (status != ATTNMETA_OK || !stream) return status;
  return gpu_checked(am_rt_stream_destroy((am_rt_stream)stream), "stream destroy", msg, msg_size);
}

int gpu_event_create(void *state, void **event, char *msg, size_t msg_size) {
  am_rt_event e = NULL;
  int status = gpu_enter(state, "event create", msg, msg_size);
  *event = NULL;
  if (status != ATTNMETA_OK) return status;
  status = gpu_checked(am_rt_event_create(&e), "event create", msg, msg_size);
  if (status == ATTNMETA_OK) *event = (void *)e;
  return status;
}

int gpu_event_destroy(void *state, void *event, char *msg, size_t msg_size) {
  int status = gpu_enter(state, "event destroy", msg, msg_size);
  if (status != ATTNMETA_OK || !event) return status;
  return gpu_checked(am_rt_event_destroy((am_rt_event)event), "event destroy", msg, msg_size);
}

int gpu_event_record(void *state, void *event, void *stream, char *msg, size_t msg_size) {
  int status = gpu_enter(state, "event record", msg, msg_size);
  if (status != ATTNMETA_OK) return status;
  return gpu_checked(am_rt_event_record((am_rt_event)event, (am_rt_stream)stream), "event record",
                     msg, msg_size);
}

int gpu_event_elapsed(void *state, void *start, void *stop, float *ms, char *msg,
                      size_t msg_size) {
  int status = gpu_enter(state, "event elapsed time", msg, msg_size);
  if (status != ATTNMETA_OK) return status;
  status = gpu_checked(am_rt_event_synchronize((am_rt_event)stop), "event synchronize", msg,
                       msg_size);
  if (status != ATTNMETA_OK) return status;
  return gpu_checked(am_rt_event_elapsed_ms(ms, (am_rt_event)start, (am_rt_event)stop),
                     "event elapsed time", msg, msg_size);
}

int gpu_capture_begin(void *state, void *stream, char *msg, size_t msg_size) {
  int status = gpu_enter(state, "begin stream capture", msg, msg_size);
  if (status != ATTNMETA_OK) return status;
  if (!AM_RT_HAS_GRAPHS) { /* the measurement API then times a plain loop */
    snprintf(msg, msg_size, "%s backend: no stream capture in this runtime", AM_RT_NAME);
    return ATTNMETA_ERR_NOT_SUPPORTED;
  }
  return gpu_checked(am_rt_capture_begin((am_rt_stream)stream), "begin stream capture", msg,
                     msg_size);
}

int gpu_capture_end(void *state, void *stream, void **graph, char *msg, size_t msg_size) {
  am_rt_graph g = NULL;
  int status = gpu_enter(state, "end stream capture", msg, msg_size);
  *graph = NULL;
  if (status != ATTNMETA_OK) return status;
  status = gpu_checked(am_rt_capture_end((am_rt_stream)stream, &g), "end stream capture", msg,
                       msg_size);
  if (status != ATTNMETA_OK) {
    if (g) (void)am_rt_graph_destroy(g);
    return status;
  }
  *graph = (void *)g;
  return ATTNMETA_OK;
}

int gpu_graph_node_count(void *state, void *graph, int64_t *nodes, int64_t *kernel_nodes,
                         char *msg, size_t msg_size) {
  size_t count = 0, i;
  int64_t kernels = 0;
  am_rt_graph_node *list;
  int status = gpu_enter(state, "graph nodes", msg, msg_size);
  if (status != ATTNMETA_OK) return status;
  status = gpu_checked(am_rt_graph_get_nodes((am_rt_graph)graph, NULL, &count), "graph nodes",
                       msg, msg_size);
  if (status != ATTNMETA_OK) return status;
  list = (am_rt_graph_node *)calloc(count ? count : 1, sizeof *list);
  if (!list) {
    snprintf(msg, msg_size, "cannot allocate a list of %zu graph nodes", count);
    return ATTNMETA_ERR_OUT_OF_MEMORY;
  }
  status = gpu_checked(am_rt_graph_get_nodes((am_rt_graph)graph, list, &count), "graph nodes",
                       msg, msg_size);
  for (i = 0; status == ATTNMETA_OK && i < count; ++i)
    kernels += am_rt_graph_node_is_kernel(list[i]);
  free(list);
  if (status != ATTNMETA_OK) return status;
  *nodes = (int64_t)count;
  *kernel_nodes = kernels;
  return ATTNMETA_OK;
}

int gpu_graph_instantiate(void *state, void *graph, void **exec, char *msg, size_t msg_size) {
  am_rt_graph_exec e = NULL;
  int status = gpu_enter(state, "graph instantiate", msg, msg_size);
  *exec = NULL;
  if (status != ATTNMETA_OK) return status;
  status = gpu_checked(am_rt_graph_instantiate(&e, (am_rt_graph)graph), "graph instantiate", msg,
                       msg_size);
  if (status == ATTNMETA_OK) *exec = (void *)e;
  return status;
}

int gpu_graph_launch(void *state, void *exec, void *stream, char *msg, size_t msg_size) {
  int status = gpu_enter(state, "graph launch", msg, msg_size);
  if (status != ATTNMETA_OK) return status;
  return gpu_checked(am_rt_graph_launch((am_rt_graph_exec)exec, (am_rt_stream)stream),
                     "graph launch", msg, msg_size);
}

int gpu_graph_destroy(void *state, void *graph, void *exec, char *msg, size_t msg_size) {
  int status = gpu_enter(state, "graph destroy", msg, msg_size);
  if (status != ATTNMETA_OK) return status;
  if (exec)
    status = gpu_checked(am_rt_graph_exec_destroy((am_rt_graph_exec)exec), "graph exec destroy",
                         msg, msg_size);
  if (graph) {
    int st = gpu_checked(am_rt_graph_destroy((am_rt_graph)graph), "graph destroy", msg, msg_size);
    if (status == ATTNMETA_OK) status = st;
  }
  return status;
}

int gpu_launch_empty(void *state, void *stream, char *msg, size_t msg_size) {
  int status = gpu_enter(state, "empty kernel", msg, msg_size);
  if (status != ATTNMETA_OK) return status;
  AM_RT_LAUNCH(am_empty_kernel, dim3(1), dim3(1), 0, (am_rt_stream)stream);
  return gpu_checked(am_rt_get_last_error(), "empty kernel", msg, msg_size);
}

int gpu_copy_device(void *state, void *dst, const void *src, size_t bytes, void *stream,
                    char *msg, size_t msg_size) {
  int status = gpu_enter(state, "device-to-device copy", msg, msg_size);
  if (status != ATTNMETA_OK) return status;
  return gpu_checked(am_rt_copy_device_async(dst, src, bytes, (am_rt_stream)stream),
                     "device-to-device copy", msg, msg_size);
}

const am_backend_table gpu_table = {
    AM_BACKEND_ABI,  sizeof(am_backend_table), AM_RT_BACKEND_NAME, AM_BUILD_TARGETS,
    gpu_device_count, gpu_open, gpu_close, gpu_launch_step, gpu_alloc, gpu_release, gpu_copy,
    gpu_synchronize, gpu_processor_count,
    /* measurement */
    gpu_stream_create, gpu_stream_destroy, gpu_event_create, gpu_event_destroy, gpu_event_record,
    gpu_event_elapsed, gpu_capture_begin, gpu_capture_end, gpu_graph_node_count,
    gpu_graph_instantiate, gpu_graph_launch, gpu_graph_destroy, gpu_launch_empty, gpu_copy_device,
    /* appended */
    gpu_launch_topk, gpu_cache_bytes,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const am_backend_table *
attnmeta_backend_entry(void) {
  return &gpu_table;
}

#endif /* ATTNMETA_AM_GPU_BACKEND_H */
