// SPDX-License-Identifier: Apache-2.0
/* The neutral runtime names the shared GPU glue uses, mapped to CUDA. */
#ifndef ATTNMETA_CUDA_RUNTIME_MAP_H
#define ATTNMETA_CUDA_RUNTIME_MAP_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define AM_RT(name) cuda##name
#define AM_RT_NAME "CUDA"
#define AM_RT_BACKEND_NAME "cuda"

/* A kernel launch and a kernel's block-shared array sized at launch. */
#define AM_RT_LAUNCH(kernel, grid, block, shared_bytes, stream, ...) \
  kernel<<<(grid), (block), (shared_bytes), (stream)>>>(__VA_ARGS__)
#define AM_RT_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
/* Stream capture and graphs exist. */
#define AM_RT_HAS_GRAPHS 1

typedef cudaDeviceProp am_rt_device_prop;

#include "am_runtime_prefixed.h"

static inline int am_rt_processor_count(int device) {
  int n = 0;
  if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) n = 1;
  return n > 0 ? n : 1;
}

static inline void am_rt_arch_name(int device, char *buf, size_t size) {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  snprintf(buf, size, "sm_%d%d", major, minor);
}

static inline int64_t am_rt_cache_bytes(int device) {
  int n = 0;
  if (cudaDeviceGetAttribute(&n, cudaDevAttrL2CacheSize, device) != cudaSuccess) n = 0;
  return n > 0 ? (int64_t)n : 0;
}

/* Whether `device` can start a kernel before the kernel ahead of it on the
 * stream has finished (programmatic dependent launch: compute capability
 * 9.0 and later). */
static inline int am_rt_supports_early_start(int device) {
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess)
    return 0;
  return major >= 9;
}

/* Launches kernel(arg) allowed to start before the kernel ahead of it on
 * `s` ends (programmatic stream serialisation); the kernel waits on the
 * device (AM_WAIT_FOR_PRIOR_KERNELS) before reading what that kernel
 * writes. Captured into a graph, the edge becomes a programmatic one. */
template <typename Arg>
static inline am_rt_error am_rt_launch_early(void (*kernel)(Arg), dim3 grid, dim3 block,
                                             size_t shared, am_rt_stream s, Arg arg) {
  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared;
  config.stream = s;
  config.attrs = attr;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, arg);
}

/* Which of the module's code the driver runs on `device`, written after
 * the architecture in the device name: machine code (SASS) of the same
 * major version and the highest minor not above the device's, else the
 * newest PTX not above it, compiled by the driver at first load ("PTX JIT").
 * The lists are the module's build targets (cmake/cuda_module.cmake);
 * exact-device machine code ("90a") is given as a negative number. */
#ifndef AM_CUDA_SASS_ARCHS
#define AM_CUDA_SASS_ARCHS ""
#endif
#ifndef AM_CUDA_PTX_ARCHS
#define AM_CUDA_PTX_ARCHS ""
#endif
/* The largest number of the space-separated `list` that `fits` cc. */
static inline int am_rt_best_arch(const char *list, int cc, int sass) {
  int best = 0;
  for (const char *p = list; *p;) {
    char *end = NULL;
    const long v = strtol(p, &end, 10);
    if (end == p) break;
    p = end;
    const int a = (int)(v < 0 ? -v : v);
    const int fits = sass ? (v < 0 ? a == cc : (a / 10 == cc / 10 && a % 10 <= cc % 10)) : a <= cc;
    if (a > 0 && fits && a > best) best = a;
  }
  return best;
}
static inline void am_rt_code_kind(int device, char *buf, size_t size) {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  const int cc = major * 10 + minor;
  const int sass = am_rt_best_arch(AM_CUDA_SASS_ARCHS, cc, 1);
  const int ptx = am_rt_best_arch(AM_CUDA_PTX_ARCHS, cc, 0);
  if (sass)
    snprintf(buf, size, "SASS sm_%d", sass);
  else if (ptx)
    snprintf(buf, size, "PTX JIT from compute_%d", ptx);
  else
    snprintf(buf, size, "%s", "");
}

/* The one graph call whose arguments differ between the runtimes. */
static inline am_rt_error am_rt_graph_instantiate(am_rt_graph_exec *e, am_rt_graph g) {
  return cudaGraphInstantiate(e, g, 0);
}

#endif /* ATTNMETA_CUDA_RUNTIME_MAP_H */
