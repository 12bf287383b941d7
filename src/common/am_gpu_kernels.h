// SPDX-License-Identifier: Apache-2.0
/*
 * The GPU module's compiled kernels: each entry point runs one variant of a
 * shared body (am_step_kernel.h, am_topk_kernel.h) with its facts compiled
 * in, and am_empty_kernel is the floor of the measurement API. Device code
 * only: the host glue that picks among them is am_gpu_launch.h.
 */
#ifndef ATTNMETA_AM_GPU_KERNELS_H
#define ATTNMETA_AM_GPU_KERNELS_H

#include "am_step_kernel.h"
#include "am_topk_kernel.h"

/* The largest block a kernel of this module is compiled for (and any GPU runs). */
#define AM_GPU_MAX_BLOCK_THREADS 1024

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel(am_step_params params) {
  AM_RT_DYNAMIC_SHARED(int32_t, am_stage);
  am_step_body(&params, AM_THREAD_HERE(), am_stage, AM_VARIANT_FULL);
}

/* The same body without the products AM_VARIANT_FULL gates. */
AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_lean(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_VARIANT_LEAN);
}

/* The lean body for the token map + indexer product set. */
AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_indexer(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_VARIANT_INDEXER);
}

/* The full body with the DeepSeek-V3.2/V4 products: a kernel of its own, so
 * that the others' machine code is unchanged by them. */
AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_dsv4(am_step_params params) {
  AM_RT_DYNAMIC_SHARED(int32_t, am_stage);
  am_step_body(&params, AM_THREAD_HERE(), am_stage, AM_VARIANT_FULL | AM_VARIANT_DSV4);
}

/* The same four, launched to start before the kernel ahead of them on the
 * stream ends (ATTNMETA_LAUNCH_EARLY_START). */
AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_early(am_step_params params) {
  AM_RT_DYNAMIC_SHARED(int32_t, am_stage);
  am_step_body(&params, AM_THREAD_HERE(), am_stage, AM_VARIANT_FULL | AM_VARIANT_EARLY_START);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_dsv4_early(am_step_params params) {
  AM_RT_DYNAMIC_SHARED(int32_t, am_stage);
  am_step_body(&params, AM_THREAD_HERE(), am_stage,
               AM_VARIANT_FULL | AM_VARIANT_DSV4 | AM_VARIANT_EARLY_START);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_lean_early(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_VARIANT_LEAN | AM_VARIANT_EARLY_START);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_REALIGNED_MAX_BLOCK) am_step_kernel_realigned(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_VARIANT_LEAN | AM_VARIANT_REALIGNED);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_REALIGNED_MAX_BLOCK) am_step_kernel_realigned_early(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0,
               AM_VARIANT_LEAN | AM_VARIANT_REALIGNED | AM_VARIANT_EARLY_START);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_step_kernel_indexer_early(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0,
               AM_VARIANT_INDEXER | AM_VARIANT_EARLY_START);
}

/* The indexer product set with realigned rows: without a kernel of its
 * own such a step ran the lean one, which tests for each product and
 * does not speculate. */
AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_REALIGNED_MAX_BLOCK) am_step_kernel_indexer_realigned(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_VARIANT_INDEXER | AM_VARIANT_REALIGNED);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_REALIGNED_MAX_BLOCK) am_step_kernel_indexer_realigned_early(am_step_params params) {
  am_step_body(&params, AM_THREAD_HERE(), (int32_t *)0,
               AM_VARIANT_INDEXER | AM_VARIANT_REALIGNED | AM_VARIANT_EARLY_START);
}

/* The top-k conversion; dynamic shared memory holds the prefix sum. A
 * kernel for each kind of body (AM_TOPK_TWO_GROUPS, AM_TOPK_PLAIN). */
AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_topk_kernel(am_topk_params params) {
  AM_RT_DYNAMIC_SHARED(int32_t, am_topk_scratch);
  am_topk_body(&params, AM_THREAD_HERE(), am_topk_scratch, 0);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_topk_kernel_two(am_topk_params params) {
  AM_RT_DYNAMIC_SHARED(int32_t, am_topk_scratch);
  am_topk_body(&params, AM_THREAD_HERE(), am_topk_scratch, AM_TOPK_TWO_GROUPS);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_topk_kernel_plain(am_topk_params params) {
  am_topk_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_TOPK_PLAIN);
}

AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_topk_kernel_two_plain(am_topk_params params) {
  am_topk_body(&params, AM_THREAD_HERE(), (int32_t *)0, AM_TOPK_TWO_GROUPS | AM_TOPK_PLAIN);
}

/* The floor of the measurement API: a launch that does no work. */
AM_KERNEL void am_empty_kernel(void) {}

#endif /* ATTNMETA_AM_GPU_KERNELS_H */
