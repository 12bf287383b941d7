// SPDX-License-Identifier: Apache-2.0
/*
 * The GPU module's launches: the step and top-k kernels picked for the
 * host's plan (variant, shape) and launched on a stream, and waiting for a
 * stream.
 */
#ifndef ATTNMETA_AM_GPU_LAUNCH_H
#define ATTNMETA_AM_GPU_LAUNCH_H

#include <stdio.h>

#include "am_backend.h"
#include "am_gpu_device.h"
#include "am_gpu_kernels.h"

namespace {

int gpu_launch_step(void *state, const am_step_params *params, const am_launch_shape *shape,
                    void *stream, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  device_guard guard(s->device);
  am_rt_error err = guard.err;
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "set device", err);
  /* Every GPU refuses larger blocks; saying so here makes the emulated HIP
   * run (which would accept them) catch a planner that asks for one. */
  if ((int64_t)shape->lanes * shape->groups > AM_GPU_MAX_BLOCK_THREADS) {
    snprintf(msg, msg_size, "step kernel: a block of %lld x %lld threads exceeds %d",
             (long long)shape->lanes, (long long)shape->groups, AM_GPU_MAX_BLOCK_THREADS);
    return ATTNMETA_ERR_LAUNCH;
  }
  const dim3 grid((unsigned)shape->grid);
  const dim3 block((unsigned)shape->lanes, (unsigned)shape->groups);
  const int early = (params->variant & AM_VARIANT_EARLY_START) != 0;
  void (*kernel)(am_step_params);
  size_t shared = 0;
  switch (params->variant & ~AM_VARIANT_EARLY_START) {
    case AM_VARIANT_FULL:
      kernel = early ? am_step_kernel_early : am_step_kernel;
      shared = (size_t)shape->shared_bytes;
      break;
    case AM_VARIANT_FULL | AM_VARIANT_DSV4:
      kernel = early ? am_step_kernel_dsv4_early : am_step_kernel_dsv4;
      shared = (size_t)shape->shared_bytes;
      break;
    case AM_VARIANT_INDEXER:
      kernel = early ? am_step_kernel_indexer_early : am_step_kernel_indexer;
      break;
    case AM_VARIANT_LEAN | AM_VARIANT_REALIGNED:
    case AM_VARIANT_INDEXER | AM_VARIANT_REALIGNED:
      if ((int64_t)shape->lanes * shape->groups > AM_REALIGNED_MAX_BLOCK) {
        snprintf(msg, msg_size, "step kernel for realigned rows: a block of %lld x %lld threads exceeds %d",
                 (long long)shape->lanes, (long long)shape->groups, AM_REALIGNED_MAX_BLOCK);
        return ATTNMETA_ERR_LAUNCH;
      }
      if (params->variant & AM_VARIANT_INDEXER)
        kernel = early ? am_step_kernel_indexer_realigned_early : am_step_kernel_indexer_realigned;
      else
        kernel = early ? am_step_kernel_realigned_early : am_step_kernel_realigned;
      break;
    default:
      kernel = early ? am_step_kernel_lean_early : am_step_kernel_lean;
      break;
  }
  if (early && s->early_start) {
    err = am_rt_launch_early(kernel, grid, block, shared, (am_rt_stream)stream, *params);
    if (err != AM_RT_SUCCESS) {
      am_rt_clear_error();
      return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "step kernel (early start)", err);
    }
    return ATTNMETA_OK;
  }
  AM_RT_LAUNCH(kernel, grid, block, shared, (am_rt_stream)stream, *params);
  err = am_rt_get_last_error();
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "step kernel", err);
  return ATTNMETA_OK;
}

int gpu_launch_topk(void *state, const am_topk_params *params, const am_launch_shape *shape,
                    void *stream, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  device_guard guard(s->device);
  am_rt_error err = guard.err;
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "set device", err);
  if ((int64_t)shape->lanes * shape->groups > AM_GPU_MAX_BLOCK_THREADS) {
    snprintf(msg, msg_size, "top-k kernel: a block of %lld x %lld threads exceeds %d",
             (long long)shape->lanes, (long long)shape->groups, AM_GPU_MAX_BLOCK_THREADS);
    return ATTNMETA_ERR_LAUNCH;
  }
  const dim3 block((unsigned)shape->lanes, (unsigned)shape->groups);
  const dim3 grid((unsigned)shape->grid);
  const size_t shared = (size_t)shape->shared_bytes;
  switch (am_topk_kind_of(params)) {
    case AM_TOPK_TWO_GROUPS | AM_TOPK_PLAIN:
      AM_RT_LAUNCH(am_topk_kernel_two_plain, grid, block, shared, (am_rt_stream)stream, *params);
      break;
    case AM_TOPK_TWO_GROUPS:
      AM_RT_LAUNCH(am_topk_kernel_two, grid, block, shared, (am_rt_stream)stream, *params);
      break;
    case AM_TOPK_PLAIN:
      AM_RT_LAUNCH(am_topk_kernel_plain, grid, block, shared, (am_rt_stream)stream, *params);
      break;
    default:
      AM_RT_LAUNCH(am_topk_kernel, grid, block, shared, (am_rt_stream)stream, *params);
      break;
  }
  err = am_rt_get_last_error();
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "top-k kernel", err);
  return ATTNMETA_OK;
}

int gpu_synchronize(void *state, void *stream, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  device_guard guard(s->device);
  am_rt_error err = guard.err;
  if (err == AM_RT_SUCCESS) err = am_rt_stream_synchronize((am_rt_stream)stream);
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "synchronize", err);
  return ATTNMETA_OK;
}

}  // namespace

#endif /* ATTNMETA_AM_GPU_LAUNCH_H */
