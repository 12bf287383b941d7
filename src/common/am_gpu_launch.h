// SPDX-License-Identifier: Apache-2.0
/*
 * The GPU module's launches: the step and top-k kernels looked up for the
 * host's plan (variant or kind, shape) in tables made from their one
 * declaration (am_gpu_kernels.h) and launched on a stream, and waiting for
 * a stream.
 */
#ifndef ATTNMETA_AM_GPU_LAUNCH_H
#define ATTNMETA_AM_GPU_LAUNCH_H

#include <stdio.h>

#include "am_backend.h"
#include "am_gpu_device.h"
#include "am_gpu_kernels.h"

namespace {

/* The kernels of am_gpu_kernels.h with what a launch needs to know of
 * them, one row each, made from the same declaration. */
struct step_kernel {
  int32_t variant;
  void (*entry)(am_step_params);
  int64_t max_block;
  int staged;
  const char *name;
};

const step_kernel step_kernels[] = {
#define AM_GPU_STEP_ROW(name, variant, bound, staged) {(variant), name, (bound), (staged), #name},
    AM_STEP_KERNELS(AM_GPU_STEP_ROW)
#undef AM_GPU_STEP_ROW
};

struct topk_kernel {
  int kind;
  void (*entry)(am_topk_params);
};

const topk_kernel topk_kernels[] = {
#define AM_GPU_TOPK_ROW(name, kind, staged) {(kind), name},
    AM_TOPK_KERNELS(AM_GPU_TOPK_ROW)
#undef AM_GPU_TOPK_ROW
};

/* The kernel compiled for `variant`, else the lean one (with the same
 * early start). */
const step_kernel *step_kernel_for(int32_t variant) {
  const int32_t lean = AM_VARIANT_LEAN | (variant & AM_VARIANT_EARLY_START);
  const step_kernel *fallback = &step_kernels[0];
  for (const step_kernel &k : step_kernels) {
    if (k.variant == variant) return &k;
    if (k.variant == lean) fallback = &k;
  }
  return fallback;
}

/* The kernel for `kind`, else the general body of the same early start. */
const topk_kernel *topk_kernel_for(int kind) {
  const topk_kernel *fallback = &topk_kernels[0];
  for (const topk_kernel &k : topk_kernels) {
    if (k.kind == kind) return &k;
    if (k.kind == (kind & AM_TOPK_EARLY)) fallback = &k;
  }
  return fallback;
}

/* Makes the bound device current and checks the block against every GPU's
 * limit; on failure the status, with a message about `what`. */
int launch_prologue(const device_guard &guard, const am_launch_shape *shape, const char *what,
                    char *msg, size_t msg_size) {
  if (guard.err != AM_RT_SUCCESS)
    return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "set device", guard.err);
  /* Every GPU refuses larger blocks; saying so here makes the emulated HIP
   * run (which would accept them) catch a planner that asks for one. */
  if ((int64_t)shape->lanes * shape->groups > AM_GPU_MAX_BLOCK_THREADS) {
    snprintf(msg, msg_size, "%s: a block of %lld x %lld threads exceeds %d", what,
             (long long)shape->lanes, (long long)shape->groups, AM_GPU_MAX_BLOCK_THREADS);
    return ATTNMETA_ERR_LAUNCH;
  }
  return ATTNMETA_OK;
}

/* Launches `kernel` on `params`, to start early where `early` asks and the
 * device can; on failure the status, with a message about `what`. */
template <typename Params>
int launch_checked(void (*kernel)(Params), const dim3 &grid, const dim3 &block, size_t shared,
                   void *stream, const Params &params, int early, const char *what, char *msg,
                   size_t msg_size) {
  if (early) {
    const am_rt_error err =
        am_rt_launch_early(kernel, grid, block, shared, (am_rt_stream)stream, params);
    if (err == AM_RT_SUCCESS) return ATTNMETA_OK;
    am_rt_clear_error();
    char what_early[64];
    snprintf(what_early, sizeof what_early, "%s (early start)", what);
    return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, what_early, err);
  }
  AM_RT_LAUNCH(kernel, grid, block, shared, (am_rt_stream)stream, params);
  const am_rt_error err = am_rt_get_last_error();
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, what, err);
  return ATTNMETA_OK;
}

int gpu_launch_step(void *state, const am_step_params *params, const am_launch_shape *shape,
                    void *stream, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  device_guard guard(s->device);
  const int status = launch_prologue(guard, shape, "step kernel", msg, msg_size);
  if (status != ATTNMETA_OK) return status;
  const step_kernel *k = step_kernel_for(params->variant);
  if ((int64_t)shape->lanes * shape->groups > k->max_block) {
    snprintf(msg, msg_size, "step kernel %s: a block of %lld x %lld threads exceeds %lld",
             k->name, (long long)shape->lanes, (long long)shape->groups,
             (long long)k->max_block);
    return ATTNMETA_ERR_LAUNCH;
  }
  const dim3 grid((unsigned)shape->grid);
  const dim3 block((unsigned)shape->lanes, (unsigned)shape->groups);
  const size_t shared = k->staged ? (size_t)shape->shared_bytes : 0;
  const int early = (k->variant & AM_VARIANT_EARLY_START) && s->early_start;
  return launch_checked(k->entry, grid, block, shared, stream, *params, early, "step kernel", msg,
                        msg_size);
}

int gpu_launch_topk(void *state, const am_topk_params *params, const am_launch_shape *shape,
                    void *stream, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  device_guard guard(s->device);
  const int status = launch_prologue(guard, shape, "top-k kernel", msg, msg_size);
  if (status != ATTNMETA_OK) return status;
  const dim3 block((unsigned)shape->lanes, (unsigned)shape->groups);
  const dim3 grid((unsigned)shape->grid);
  const size_t shared = (size_t)shape->shared_bytes;
  const topk_kernel *k = topk_kernel_for(am_topk_kind_of(params));
  const int early = (k->kind & AM_TOPK_EARLY) && s->early_start;
  return launch_checked(k->entry, grid, block, shared, stream, *params, early, "top-k kernel",
                        msg, msg_size);
}

int gpu_launch_pool(void *state, const am_pool_params *params, const am_launch_shape *shape,
                    void *stream, char *msg, size_t msg_size) {
  const gpu_state *s = (const gpu_state *)state;
  device_guard guard(s->device);
  const int status = launch_prologue(guard, shape, "pool kernel", msg, msg_size);
  if (status != ATTNMETA_OK) return status;
  const dim3 block((unsigned)shape->lanes, (unsigned)shape->groups);
  const dim3 grid((unsigned)shape->grid);
  void (*kernel)(am_pool_params) = am_pool_kernel;
  AM_RT_LAUNCH(kernel, grid, block, 0, (am_rt_stream)stream, *params);
  const am_rt_error err = am_rt_get_last_error();
  if (err != AM_RT_SUCCESS) return fail(msg, msg_size, ATTNMETA_ERR_LAUNCH, "pool kernel", err);
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
