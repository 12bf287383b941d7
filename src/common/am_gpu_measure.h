// SPDX-License-Identifier: Apache-2.0
/*
 * The GPU module's measurement (attnmeta_measure.h): streams, events,
 * stream capture and graphs, and the empty launch.
 */
#ifndef ATTNMETA_AM_GPU_MEASURE_H
#define ATTNMETA_AM_GPU_MEASURE_H

#include <stdio.h>
#include <stdlib.h>

#include "am_gpu_device.h"
#include "am_gpu_kernels.h"

namespace {

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

/* A stream or an event: made by `create` on the bound device, `*handle`
 * NULL unless it was. */
template <typename Handle>
int gpu_create(void *state, void **handle, am_rt_error (*create)(Handle *), const char *what,
               char *msg, size_t msg_size) {
  Handle h = NULL;
  int status = gpu_enter(state, what, msg, msg_size);
  *handle = NULL;
  if (status != ATTNMETA_OK) return status;
  status = gpu_checked(create(&h), what, msg, msg_size);
  if (status == ATTNMETA_OK) *handle = (void *)h;
  return status;
}

/* A stream or an event destroyed by `destroy` on the bound device (NULL:
 * nothing to do). */
template <typename Handle>
int gpu_destroy(void *state, void *handle, am_rt_error (*destroy)(Handle), const char *what,
                char *msg, size_t msg_size) {
  int status = gpu_enter(state, what, msg, msg_size);
  if (status != ATTNMETA_OK || !handle) return status;
  return gpu_checked(destroy((Handle)handle), what, msg, msg_size);
}

int gpu_stream_create(void *state, void **stream, char *msg, size_t msg_size) {
  return gpu_create(state, stream, am_rt_stream_create, "stream create", msg, msg_size);
}

int gpu_stream_destroy(void *state, void *stream, char *msg, size_t msg_size) {
  return gpu_destroy(state, stream, am_rt_stream_destroy, "stream destroy", msg, msg_size);
}

int gpu_event_create(void *state, void **event, char *msg, size_t msg_size) {
  return gpu_create(state, event, am_rt_event_create, "event create", msg, msg_size);
}

int gpu_event_destroy(void *state, void *event, char *msg, size_t msg_size) {
  return gpu_destroy(state, event, am_rt_event_destroy, "event destroy", msg, msg_size);
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

}  // namespace

#endif /* ATTNMETA_AM_GPU_MEASURE_H */
