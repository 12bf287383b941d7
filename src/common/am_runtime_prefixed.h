// SPDX-License-Identifier: Apache-2.0
/*
 * The neutral runtime names whose CUDA and HIP calls differ only in their
 * prefix (cudaMalloc, hipMalloc). Included by a runtime map
 * (src/cuda/cuda_runtime_map.h, src/hip/hip_runtime_map.h) after it has
 * included its runtime and defined:
 *   AM_RT(name)        the runtime's spelling of `name` (cuda##name, hip##name);
 *   AM_RT_NAME         the runtime's name for messages;
 *   AM_RT_HAS_GRAPHS   1 where stream capture and graphs exist;
 *   am_rt_device_prop  the runtime's device property structure.
 * Where a runtime spells a call differently, its map defines it itself.
 */
#ifndef ATTNMETA_AM_RUNTIME_PREFIXED_H
#define ATTNMETA_AM_RUNTIME_PREFIXED_H

#include <stdio.h>

#define AM_RT_SUCCESS AM_RT(Success)

typedef AM_RT(Error_t) am_rt_error;
typedef AM_RT(Stream_t) am_rt_stream;

static inline const char *am_rt_error_string(am_rt_error e) { return AM_RT(GetErrorString)(e); }
static inline am_rt_error am_rt_get_device_count(int *n) { return AM_RT(GetDeviceCount)(n); }
static inline am_rt_error am_rt_get_device(int *d) { return AM_RT(GetDevice)(d); }
static inline am_rt_error am_rt_set_device(int d) { return AM_RT(SetDevice)(d); }
static inline am_rt_error am_rt_get_last_error(void) { return AM_RT(GetLastError)(); }
static inline void am_rt_clear_error(void) { (void)AM_RT(GetLastError)(); }
static inline am_rt_error am_rt_malloc(void **p, size_t n) { return AM_RT(Malloc)(p, n); }
static inline am_rt_error am_rt_free(void *p) { return AM_RT(Free)(p); }
static inline am_rt_error am_rt_copy(void *dst, const void *src, size_t n, int to_device) {
  return AM_RT(Memcpy)(dst, src, n,
                       to_device ? AM_RT(MemcpyHostToDevice) : AM_RT(MemcpyDeviceToHost));
}
static inline am_rt_error am_rt_stream_synchronize(am_rt_stream s) {
  return AM_RT(StreamSynchronize)(s);
}
/* The driver's and the runtime's version numbers (they need no device). */
static inline am_rt_error am_rt_driver_version(int *v) { return AM_RT(DriverGetVersion)(v); }
static inline am_rt_error am_rt_runtime_version(int *v) { return AM_RT(RuntimeGetVersion)(v); }

static inline void am_rt_device_name(int device, char *buf, size_t size) {
  am_rt_device_prop prop;
  if (AM_RT(GetDeviceProperties)(&prop, device) == AM_RT_SUCCESS) {
    snprintf(buf, size, "%s", prop.name);
  } else {
    snprintf(buf, size, AM_RT_NAME " device %d", device);
  }
}

/* True when the current device can run `kernel` (an image for its
 * architecture is in the module). */
static inline int am_rt_kernel_loadable(const void *kernel) {
  AM_RT(FuncAttributes) attr;
  return AM_RT(FuncGetAttributes)(&attr, kernel) == AM_RT_SUCCESS;
}

/* ---- measurement (attnmeta_measure.h): streams, events, graphs ---- */
typedef AM_RT(Event_t) am_rt_event;

static inline am_rt_error am_rt_stream_create(am_rt_stream *s) {
  return AM_RT(StreamCreateWithFlags)(s, AM_RT(StreamNonBlocking));
}
static inline am_rt_error am_rt_stream_destroy(am_rt_stream s) { return AM_RT(StreamDestroy)(s); }
static inline am_rt_error am_rt_event_create(am_rt_event *e) { return AM_RT(EventCreate)(e); }
static inline am_rt_error am_rt_event_destroy(am_rt_event e) { return AM_RT(EventDestroy)(e); }
static inline am_rt_error am_rt_event_record(am_rt_event e, am_rt_stream s) {
  return AM_RT(EventRecord)(e, s);
}
static inline am_rt_error am_rt_event_synchronize(am_rt_event e) {
  return AM_RT(EventSynchronize)(e);
}
static inline am_rt_error am_rt_event_elapsed_ms(float *ms, am_rt_event start, am_rt_event stop) {
  return AM_RT(EventElapsedTime)(ms, start, stop);
}
static inline am_rt_error am_rt_copy_device_async(void *dst, const void *src, size_t n,
                                                  am_rt_stream s) {
  return AM_RT(MemcpyAsync)(dst, src, n, AM_RT(MemcpyDeviceToDevice), s);
}

#if AM_RT_HAS_GRAPHS
typedef AM_RT(Graph_t) am_rt_graph;
typedef AM_RT(GraphExec_t) am_rt_graph_exec;
typedef AM_RT(GraphNode_t) am_rt_graph_node;

/* Capture of the calling thread's work on `s` (other threads unaffected). */
static inline am_rt_error am_rt_capture_begin(am_rt_stream s) {
  return AM_RT(StreamBeginCapture)(s, AM_RT(StreamCaptureModeThreadLocal));
}
static inline am_rt_error am_rt_capture_end(am_rt_stream s, am_rt_graph *g) {
  return AM_RT(StreamEndCapture)(s, g);
}
/* nodes NULL: *count receives the number of nodes. */
static inline am_rt_error am_rt_graph_get_nodes(am_rt_graph g, am_rt_graph_node *nodes,
                                                size_t *count) {
  return AM_RT(GraphGetNodes)(g, nodes, count);
}
static inline int am_rt_graph_node_is_kernel(am_rt_graph_node n) {
  AM_RT(GraphNodeType) type;
  return AM_RT(GraphNodeGetType)(n, &type) == AM_RT_SUCCESS && type == AM_RT(GraphNodeTypeKernel);
}
static inline am_rt_error am_rt_graph_launch(am_rt_graph_exec e, am_rt_stream s) {
  return AM_RT(GraphLaunch)(e, s);
}
static inline am_rt_error am_rt_graph_exec_destroy(am_rt_graph_exec e) {
  return AM_RT(GraphExecDestroy)(e);
}
static inline am_rt_error am_rt_graph_destroy(am_rt_graph g) { return AM_RT(GraphDestroy)(g); }
#endif

#endif /* ATTNMETA_AM_RUNTIME_PREFIXED_H */
