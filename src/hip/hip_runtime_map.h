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

#define AM_RT_NAME "HIP"
#define AM_RT_BACKEND_NAME "hip"
#define AM_RT_SUCCESS hipSuccess

typedef hipError_t am_rt_error;
typedef hipStream_t am_rt_stream;

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
#  define AM_RT_HAS_GRAPHS 0
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
#  define AM_RT_HAS_GRAPHS 1
typedef hipGraph_t am_rt_graph;
typedef hipGraphExec_t am_rt_graph_exec;
typedef hipGraphNode_t am_rt_graph_node;

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

/* Capture of the calling thread's work on `s` (other threads unaffected). */
static inline am_rt_error am_rt_capture_begin(am_rt_stream s) {
  return hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal);
}
static inline am_rt_error am_rt_capture_end(am_rt_stream s, am_rt_graph *g) {
  return hipStreamEndCapture(s, g);
}
/* nodes NULL: *count receives the number of nodes. */
static inline am_rt_error am_rt_graph_get_nodes(am_rt_graph g, am_rt_graph_node *nodes,
                                                size_t *count) {
  return hipGraphGetNodes(g, nodes, count);
}
static inline int am_rt_graph_node_is_kernel(am_rt_graph_node n) {
  hipGraphNodeType type;
  return hipGraphNodeGetType(n, &type) == hipSuccess && type == hipGraphNodeTypeKernel;
}
static inline am_rt_error am_rt_graph_instantiate(am_rt_graph_exec *e, am_rt_graph g) {
  return hipGraphInstantiate(e, g, NULL, NULL, 0);
}
static inline am_rt_error am_rt_graph_launch(am_rt_graph_exec e, am_rt_stream s) {
  return hipGraphLaunch(e, s);
}
static inline am_rt_error am_rt_graph_exec_destroy(am_rt_graph_exec e) {
  return hipGraphExecDestroy(e);
}
static inline am_rt_error am_rt_graph_destroy(am_rt_graph g) { return hipGraphDestroy(g); }
/* ======== end of ROCm ======== */
#endif

static inline const char *am_rt_error_string(am_rt_error e) { return hipGetErrorString(e); }
static inline am_rt_error am_rt_get_device_count(int *n) { return hipGetDeviceCount(n); }
static inline am_rt_error am_rt_get_device(int *d) { return hipGetDevice(d); }
static inline am_rt_error am_rt_set_device(int d) { return hipSetDevice(d); }
static inline am_rt_error am_rt_get_last_error(void) { return hipGetLastError(); }
static inline void am_rt_clear_error(void) { (void)hipGetLastError(); }
static inline am_rt_error am_rt_malloc(void **p, size_t n) { return hipMalloc(p, n); }
static inline am_rt_error am_rt_free(void *p) { return hipFree(p); }
static inline am_rt_error am_rt_copy(void *dst, const void *src, size_t n, int to_device) {
  return hipMemcpy(dst, src, n, to_device ? hipMemcpyHostToDevice : hipMemcpyDeviceToHost);
}
static inline am_rt_error am_rt_stream_synchronize(am_rt_stream s) {
  return hipStreamSynchronize(s);
}

static inline void am_rt_device_name(int device, char *buf, size_t size) {
  hipDeviceProp_t prop;
  if (hipGetDeviceProperties(&prop, device) == hipSuccess) {
    snprintf(buf, size, "%s", prop.name);
  } else {
    snprintf(buf, size, "HIP device %d", device);
  }
}

static inline int am_rt_kernel_loadable(const void *kernel) {
  hipFuncAttributes attr;
  return hipFuncGetAttributes(&attr, kernel) == hipSuccess;
}

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

/* ---- measurement (attnmeta_measure.h): streams, events ---- */
typedef hipEvent_t am_rt_event;

static inline am_rt_error am_rt_stream_create(am_rt_stream *s) {
  return hipStreamCreateWithFlags(s, hipStreamNonBlocking);
}
static inline am_rt_error am_rt_stream_destroy(am_rt_stream s) { return hipStreamDestroy(s); }
static inline am_rt_error am_rt_event_create(am_rt_event *e) { return hipEventCreate(e); }
static inline am_rt_error am_rt_event_destroy(am_rt_event e) { return hipEventDestroy(e); }
static inline am_rt_error am_rt_event_record(am_rt_event e, am_rt_stream s) {
  return hipEventRecord(e, s);
}
static inline am_rt_error am_rt_event_synchronize(am_rt_event e) { return hipEventSynchronize(e); }
static inline am_rt_error am_rt_event_elapsed_ms(float *ms, am_rt_event start, am_rt_event stop) {
  return hipEventElapsedTime(ms, start, stop);
}
static inline am_rt_error am_rt_copy_device_async(void *dst, const void *src, size_t n,
                                                  am_rt_stream s) {
  return hipMemcpyAsync(dst, src, n, hipMemcpyDeviceToDevice, s);
}

#endif /* ATTNMETA_HIP_RUNTIME_MAP_H */
