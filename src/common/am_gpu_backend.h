// SPDX-License-Identifier: Apache-2.0
/*
 * The GPU backend module, written once for CUDA and HIP. It uses the
 * neutral runtime names of am_gpu_runtime (src/cuda/cuda_runtime_map.h or
 * src/hip/hip_runtime_map.h, included first by the module's one source
 * file), never a vendor's names nor launch syntax (AM_RT_LAUNCH,
 * AM_RT_DYNAMIC_SHARED). C++ (compiled by nvcc, hipcc, or for tests a host
 * C++ compiler against HIP-CPU). One header a job: the kernels
 * (am_gpu_kernels.h), the device (am_gpu_device.h), memory
 * (am_gpu_memory.h), launches (am_gpu_launch.h) and measurement
 * (am_gpu_measure.h); this one exports their table.
 */
#ifndef ATTNMETA_AM_GPU_BACKEND_H
#define ATTNMETA_AM_GPU_BACKEND_H

#include "am_backend.h"
#include "am_gpu_device.h"
#include "am_gpu_launch.h"
#include "am_gpu_measure.h"
#include "am_gpu_memory.h"

namespace {

const am_backend_table gpu_table = {
    AM_BACKEND_ABI,  sizeof(am_backend_table), AM_RT_BACKEND_NAME, AM_BUILD_TARGETS,
    gpu_device_count, gpu_open, gpu_close, gpu_launch_step, gpu_alloc, gpu_release, gpu_copy,
    gpu_synchronize, gpu_processor_count,
    /* measurement */
    gpu_stream_create, gpu_stream_destroy, gpu_event_create, gpu_event_destroy, gpu_event_record,
    gpu_event_elapsed, gpu_capture_begin, gpu_capture_end, gpu_graph_node_count,
    gpu_graph_instantiate, gpu_graph_launch, gpu_graph_destroy, gpu_launch_empty, gpu_copy_device,
    /* appended */
    gpu_launch_topk, gpu_cache_bytes, gpu_runtime_versions, gpu_launch_pool,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const am_backend_table *
attnmeta_backend_entry(void) {
  return &gpu_table;
}

#endif /* ATTNMETA_AM_GPU_BACKEND_H */
