// SPDX-License-Identifier: Apache-2.0
/*
 * The GPU module's memory: device allocations, their release and copies
 * between host and device, each on the bound device.
 */
#ifndef ATTNMETA_AM_GPU_MEMORY_H
#define ATTNMETA_AM_GPU_MEMORY_H

#include <stddef.h>

#include "am_gpu_device.h"

namespace {

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

int gpu_copy_device(void *state, void *dst, const void *src, size_t bytes, void *stream,
                    char *msg, size_t msg_size) {
  int status = gpu_enter(state, "device-to-device copy", msg, msg_size);
  if (status != ATTNMETA_OK) return status;
  return gpu_checked(am_rt_copy_device_async(dst, src, bytes, (am_rt_stream)stream),
                     "device-to-device copy", msg, msg_size);
}

}  // namespace

#endif /* ATTNMETA_AM_GPU_MEMORY_H */
