/* The neutral runtime names the shared GPU glue uses, mapped to HIP. */
#ifndef ATTNMETA_HIP_RUNTIME_MAP_H
#define ATTNMETA_HIP_RUNTIME_MAP_H

#include <hip/hip_runtime.h>
#include <stdio.h>

#define AM_RT_NAME "HIP"
#define AM_RT_BACKEND_NAME "hip"
#define AM_RT_SUCCESS hipSuccess

typedef hipError_t am_rt_error;
typedef hipStream_t am_rt_stream;

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

static inline int am_rt_processor_count(int device) {
  int n = 0;
  if (hipDeviceGetAttribute(&n, hipDeviceAttributeMultiprocessorCount, device) != hipSuccess) n = 1;
  return n > 0 ? n : 1;
}

static inline void am_rt_arch_name(int device, char *buf, size_t size) {
  hipDeviceProp_t prop;
  if (hipGetDeviceProperties(&prop, device) == hipSuccess) {
    snprintf(buf, size, "%s", prop.gcnArchName);
  } else {
    snprintf(buf, size, "unknown");
  }
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

#endif /* ATTNMETA_HIP_RUNTIME_MAP_H */
