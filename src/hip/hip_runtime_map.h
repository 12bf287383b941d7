// SPDX-License-Identifier: Apache-2.0
/*
 * The neutral runtime names the shared GPU glue uses, mapped to HIP.
 *
 * Two runtimes provide HIP: ROCm's (the module's real build, hipcc or clang
 * -x hip, for AMD GPUs) and, for tests only, HIP-CPU (third_party/hip-cpu),
 * which runs the same source built by a host C++ compiler on the CPU. What
 * HIP-CPU lacks is in one marked branch below; everything else is shared.
 */
#ifndef ATTNMETA_HIP_RUNTIME_MAP_H
#define ATTNMETA_HIP_RUNTIME_MAP_H

#include <hip/hip_runtime.h>
#include <stdio.h>

#define AM_RT(name) hip##name
#define AM_RT_NAME "HIP"
#define AM_RT_BACKEND_NAME "hip"
#if defined(__HIP_CPU_RT__)
#  define AM_RT_HAS_GRAPHS 0
#else
#  define AM_RT_HAS_GRAPHS 1
#endif

typedef hipDeviceProp_t am_rt_device_prop;

#include "am_runtime_prefixed.h"

#if defined(__HIP_CPU_RT__)
/* ======== HIP-CPU (tests only): what it lacks or spells differently ======== */
/* No <<<>>> syntax (its launch takes the shared bytes as 32 bits) and no
 * `extern __shared__`. */
#  define AM_RT_LAUNCH(kernel, grid, block, shared_bytes, stream, ...) \
    hipLaunchKernelGGL(kernel, (grid), (block), static_cast<uint32_t>(shared_bytes), (stream), \
                       __VA_ARGS__)
#  define AM_RT_DYNAMIC_SHARED(type, name) HIP_DYNAMIC_SHARED(type, name)
/* No stream capture and no graphs: the measurement API times a plain loop
 * (am_rt_capture_begin is never reached; the rest answer "not supported"). */
typedef void *am_rt_graph;
typedef void *am_rt_graph_exec;
typedef void *am_rt_graph_node;

/* No hipDeviceGetAttribute: the property structure has the count (the
 * host's hardware threads). */
static inline int am_rt_processor_count(int device) {
  hipDeviceProp_t prop;
  if (hipGetDeviceProperties(&prop, device) != hipSuccess) return 1;
  return prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
}
/* No cache size to read. */
static inline int64_t am_rt_cache_bytes(int device) {
  (void)device;
  return 0;
}
/* No gcnArchName: the "architecture" is the emulation itself. */
static inline void am_rt_arch_name(int device, char *buf, size_t size) {
  (void)device;
  snprintf(buf, size, "hip-cpu");
}
static inline am_rt_error am_rt_capture_begin(am_rt_stream s) {
  (void)s;
  return hipErrorNotSupported;
}
static inline am_rt_error am_rt_capture_end(am_rt_stream s, am_rt_graph *g) {
  (void)s;
  *g = NULL;
  return hipErrorNotSupported;
}
static inline am_rt_error am_rt_graph_get_nodes(am_rt_graph g, am_rt_graph_node *nodes,
                                                size_t *count) {
  (void)g;
  (void)nodes;
  *count = 0;
  return hipErrorNotSupported;
}
static inline int am_rt_graph_node_is_kernel(am_rt_graph_node n) {
  (void)n;
  return 0;
}
static inline am_rt_error am_rt_graph_instantiate(am_rt_graph_exec *e, am_rt_graph g) {
  (void)g;
  *e = NULL;
  return hipErrorNotSupported;
}
static inline am_rt_error am_rt_graph_launch(am_rt_graph_exec e, am_rt_stream s) {
  (void)e;
  (void)s;
  return hipErrorNotSupported;
}
static inline am_rt_error am_rt_graph_exec_destroy(am_rt_graph_exec e) {
  (void)e;
  return hipErrorNotSupported;
}
static inline am_rt_error am_rt_graph_destroy(am_rt_graph g) {
  (void)g;
  return hipErrorNotSupported;
}
/* ======== end of the HIP-CPU branch ======== */
#else
/* ======== ROCm ======== */
#  define AM_RT_LAUNCH(kernel, grid, block, shared_bytes, stream, ...) \
    kernel<<<(grid), (block), (shared_bytes), (stream)>>>(__VA_ARGS__)
#  define AM_RT_DYNAMIC_SHARED(type, name) extern __shared__ type name[]

static inline int am_rt_processor_count(int device) {
  int n = 0;
  if (hipDeviceGetAttribute(&n, hipDeviceAttributeMultiprocessorCount, device) != hipSuccess) n = 1;
  return n > 0 ? n : 1;
}

static inline int64_t am_rt_cache_bytes(int device) {
  int n = 0;
  if (hipDeviceGetAttribute(&n, hipDeviceAttributeL2CacheSize, device) != hipSuccess) n = 0;
  return n > 0 ? (int64_t)n : 0;
}

static inline void am_rt_arch_name(int device, char *buf, size_t size) {
  hipDeviceProp_t prop;
  if (hipGetDeviceProperties(&prop, device) == hipSuccess) {
    snprintf(buf, size, "%s", prop.gcnArchName);
  } else {
    snprintf(buf, size, "unknown");
  }
}

/* The one graph call whose arguments differ between the runtimes. */
static inline am_rt_error am_rt_graph_instantiate(am_rt_graph_exec *e, am_rt_graph g) {
  return hipGraphInstantiate(e, g, NULL, NULL, 0);
}
/* ======== end of ROCm ======== */
#endif

/* No early start here: ATTNMETA_LAUNCH_EARLY_START launches as usual. */
static inline int am_rt_supports_early_start(int device) {
  (void)device;
  return 0;
}

template <typename Arg>
static inline am_rt_error am_rt_launch_early(void (*kernel)(Arg), dim3 grid, dim3 block,
                                             size_t shared, am_rt_stream s, Arg arg) {
  AM_RT_LAUNCH(kernel, grid, block, shared, s, arg);
  return hipGetLastError();
}

/* The module holds code objects for its targets only: nothing to add. */
static inline void am_rt_code_kind(int device, char *buf, size_t size) {
  (void)device;
  if (size) buf[0] = '\0';
}

#endif /* ATTNMETA_HIP_RUNTIME_MAP_H */
