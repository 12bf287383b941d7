// SPDX-License-Identifier: Apache-2.0
/*
 * The GPU module's device: its state, the runtime's errors as a status and
 * a message, the guard that makes the bound device current for one call,
 * and opening, closing and querying a device. Written once for CUDA and HIP
 * in the neutral runtime names (am_gpu_backend.h).
 */
#ifndef ATTNMETA_AM_GPU_DEVICE_H
#define ATTNMETA_AM_GPU_DEVICE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_gpu_kernels.h"
#include "attnmeta/attnmeta.h"

/* The targets the module is built for, named when a device needs another. */
#ifndef AM_BUILD_TARGETS
#define AM_BUILD_TARGETS "unknown"
#endif

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

int gpu_processor_count(void *state) { return ((const gpu_state *)state)->processors; }

int64_t gpu_cache_bytes(void *state) { return am_rt_cache_bytes(((const gpu_state *)state)->device); }

/* Each 0 when it cannot be read (with no driver installed, CUDA answers a
 * driver version of 0; a runtime may also answer an error). */
int gpu_runtime_versions(int *driver, int *runtime, char *msg, size_t msg_size) {
  (void)msg;
  (void)msg_size;
  if (am_rt_driver_version(driver) != AM_RT_SUCCESS) *driver = 0;
  if (am_rt_runtime_version(runtime) != AM_RT_SUCCESS) *runtime = 0;
  am_rt_clear_error();
  return ATTNMETA_OK;
}

}  // namespace

#endif /* ATTNMETA_AM_GPU_DEVICE_H */
