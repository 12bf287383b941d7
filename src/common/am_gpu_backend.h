/*
 * The GPU backend's launch glue, written once for CUDA and HIP. It uses the
 * neutral runtime names of am_gpu_runtime (src/cuda/cuda_runtime_map.h or
 * src/hip/hip_runtime_map.h, included first by the module's one source
 * file), never a vendor's names. C++ (compiled by nvcc or hipcc).
 */
#ifndef ATTNMETA_AM_GPU_BACKEND_H
#define ATTNMETA_AM_GPU_BACKEND_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_backend.h"
#include "am_step_kernel.h"
#include "attnmeta/attnmeta.h"

#ifndef AM_BUILD_TARGETS
#define AM_BUILD_TARGETS "unknown"
#endif

AM_KERNEL void AM_MAX_BLOCK_THREADS(1024) am_step_kernel(am_step_params params) {
  extern __shared__ int32_t am_stage[];
  am_step_body(&params, AM_THREAD_HERE(), am_stage);
}

namespace {

struct gpu_state {
  int device;
  int processors;
};

int fail(char *msg, size_t msg_size, int status, const char *what, am_rt_error err) {
  snprintf(msg, msg_size, "%s: %s (%s %d)", what, am_rt_error_string(err), AM_RT_NAME, (int)err);
  return status;
}

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
             "%s backend: device %d is %s, but this module was built for %s; rebuild with that "
             "architecture in the target list",
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
  am_rt_device_name(device, name, name_size);
  size_t used = strlen(name);
  snprintf(name + used, name_size - used, " (%s)", arch);
  *state = s;
  return ATTNMETA_OK;
}

void gpu_close(void *state) { free(state); }

int gpu_launch_step(void *state, const am_step_params *params, const am_launch_shape *shape,
                    void *stream, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  am_rt_error err = use_device(s->device);
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "set device", err);
  am_step_kernel<<<(unsigned)shape->grid, (unsigned)shape->block, (size_t)shape->shared_bytes,
                   (am_rt_stream)stream>>>(*params);
  err = am_rt_get_last_error();
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "step kernel", err);
  return ATTNMETA_OK;
}

int gpu_alloc(void *state, size_t bytes, void **ptr, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  am_rt_error err = use_device(s->device);
  if (err == AM_RT_SUCCESS) err = am_rt_malloc(ptr, bytes ? bytes : 1);
  if (err != AM_RT_SUCCESS) {
    am_rt_clear_error();
    return fail(msg, msg_size, ATTNMETA_ERR_OUT_OF_MEMORY, "device allocation", err);
  }
  return ATTNMETA_OK;
}

int gpu_release(void *state, void *ptr, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  am_rt_error err = use_device(s->device);
  if (err == AM_RT_SUCCESS) err = am_rt_free(ptr);
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_INVALID_ARGUMENT, "free", err);
  return ATTNMETA_OK;
}

int gpu_copy(void *state, void *dst, const void *src, size_t bytes, int to_device, char *msg,
             size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  am_rt_error err = use_device(s->device);
  if (err == AM_RT_SUCCESS) err = am_rt_copy(dst, src, bytes, to_device);
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_INVALID_ARGUMENT, "copy", err);
  return ATTNMETA_OK;
}

int gpu_synchronize(void *state, void *stream, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  am_rt_error err = use_device(s->device);
  if (err == AM_RT_SUCCESS) err = am_rt_stream_synchronize((am_rt_stream)stream);
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "synchronize", err);
  return ATTNMETA_OK;
}

int gpu_processor_count(void *state) { return ((const gpu_state *)state)->processors; }

const am_backend_table gpu_table = {
    AM_BACKEND_ABI,  sizeof(am_backend_table), AM_RT_BACKEND_NAME, AM_BUILD_TARGETS,
    gpu_device_count, gpu_open, gpu_close, gpu_launch_step, gpu_alloc, gpu_release, gpu_copy,
    gpu_synchronize, gpu_processor_count,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const am_backend_table *
attnmeta_backend_entry(void) {
  return &gpu_table;
}

#endif /* ATTNMETA_AM_GPU_BACKEND_H */
