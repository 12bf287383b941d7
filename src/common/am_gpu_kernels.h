// SPDX-License-Identifier: Apache-2.0
/*
 * The GPU module's compiled kernels, declared once: each row of the tables
 * below is one entry point that runs a shared body (am_step_kernel.h,
 * am_topk_kernel.h) with its facts compiled in. The entry points are made
 * from the rows here; the lookup from a launch's variant to its kernel is
 * made from the same rows in am_gpu_launch.h. am_empty_kernel is the floor
 * of the measurement API. Device code only.
 */
#ifndef ATTNMETA_AM_GPU_KERNELS_H
#define ATTNMETA_AM_GPU_KERNELS_H

#include "am_pool_kernel.h"
#include "am_step_kernel.h"
#include "am_topk_kernel.h"

/* The largest block a kernel of this module is compiled for (and any GPU runs). */
#define AM_GPU_MAX_BLOCK_THREADS 1024

/* The step kernels: X(name, variant, launch bound, staged), where variant
 * is the AM_VARIANT_* facts the body is compiled with (and the
 * am_step_params.variant it serves) and staged says whether it takes the
 * block-shared stage of the boundaries (AM_VARIANT_FULL only).
 *  - dsv4: the DeepSeek-V3.2/V4 products, in kernels of their own so that
 *    the others' machine code is unchanged by them;
 *  - early: launched to start before the kernel ahead of them on the
 *    stream ends (ATTNMETA_LAUNCH_EARLY_START);
 *  - realigned: realigned rows, bounded by AM_REALIGNED_MAX_BLOCK; the
 *    indexer product set has its own (the lean one tests for each product
 *    and does not speculate).
 * A variant without a row runs the lean kernel. */
#define AM_STEP_KERNELS(X)                                                                      \
  X(am_step_kernel, AM_VARIANT_FULL, AM_GPU_MAX_BLOCK_THREADS, 1)                               \
  X(am_step_kernel_lean, AM_VARIANT_LEAN, AM_GPU_MAX_BLOCK_THREADS, 0)                          \
  X(am_step_kernel_indexer, AM_VARIANT_INDEXER, AM_GPU_MAX_BLOCK_THREADS, 0)                    \
  X(am_step_kernel_dsv4, AM_VARIANT_FULL | AM_VARIANT_DSV4, AM_GPU_MAX_BLOCK_THREADS, 1)        \
  X(am_step_kernel_early, AM_VARIANT_FULL | AM_VARIANT_EARLY_START, AM_GPU_MAX_BLOCK_THREADS, 1) \
  X(am_step_kernel_dsv4_early, AM_VARIANT_FULL | AM_VARIANT_DSV4 | AM_VARIANT_EARLY_START,     \
    AM_GPU_MAX_BLOCK_THREADS, 1)                                                                \
  X(am_step_kernel_lean_early, AM_VARIANT_LEAN | AM_VARIANT_EARLY_START,                        \
    AM_GPU_MAX_BLOCK_THREADS, 0)                                                                \
  X(am_step_kernel_realigned, AM_VARIANT_LEAN | AM_VARIANT_REALIGNED, AM_REALIGNED_MAX_BLOCK, 0) \
  X(am_step_kernel_realigned_early,                                                             \
    AM_VARIANT_LEAN | AM_VARIANT_REALIGNED | AM_VARIANT_EARLY_START, AM_REALIGNED_MAX_BLOCK, 0) \
  X(am_step_kernel_indexer_early, AM_VARIANT_INDEXER | AM_VARIANT_EARLY_START,                  \
    AM_GPU_MAX_BLOCK_THREADS, 0)                                                                \
  X(am_step_kernel_indexer_realigned, AM_VARIANT_INDEXER | AM_VARIANT_REALIGNED,                \
    AM_REALIGNED_MAX_BLOCK, 0)                                                                  \
  X(am_step_kernel_indexer_realigned_early,                                                     \
    AM_VARIANT_INDEXER | AM_VARIANT_REALIGNED | AM_VARIANT_EARLY_START, AM_REALIGNED_MAX_BLOCK, \
    0)

/* The top-k kernels: X(name, kind, staged), one for each kind of body
 * (AM_TOPK_TWO_GROUPS, AM_TOPK_PLAIN, AM_TOPK_COUNTS, AM_TOPK_ROWS), each
 * also early (AM_TOPK_EARLY); staged ones keep the row sums in dynamic
 * shared memory. A kind without a row runs the general body of the same
 * early start. */
#define AM_TOPK_KINDS(X, suffix, early)                                                   \
  X(am_topk_kernel##suffix, 0 | (early), 1)                                              \
  X(am_topk_kernel_two##suffix, AM_TOPK_TWO_GROUPS | (early), 1)                         \
  X(am_topk_kernel_plain##suffix, AM_TOPK_PLAIN | (early), 0)                            \
  X(am_topk_kernel_two_plain##suffix, AM_TOPK_TWO_GROUPS | AM_TOPK_PLAIN | (early), 0)   \
  X(am_topk_kernel_counted##suffix, AM_TOPK_PLAIN | AM_TOPK_COUNTS | (early), 1)         \
  X(am_topk_kernel_two_counted##suffix,                                                   \
    AM_TOPK_TWO_GROUPS | AM_TOPK_PLAIN | AM_TOPK_COUNTS | (early), 1)                    \
  X(am_topk_kernel_rows##suffix, AM_TOPK_ROWS | (early), 0)                              \
  X(am_topk_kernel_rows_counted##suffix, AM_TOPK_ROWS | AM_TOPK_COUNTS | (early), 0)      \
  X(am_topk_kernel_rows_lean##suffix, AM_TOPK_ROWS | AM_TOPK_LEAN | (early), 0)            \
  X(am_topk_kernel_rows_lean_counted##suffix,                                              \
    AM_TOPK_ROWS | AM_TOPK_LEAN | AM_TOPK_COUNTS | (early), 0)
#define AM_TOPK_KERNELS(X) AM_TOPK_KINDS(X, , 0) AM_TOPK_KINDS(X, _early, AM_TOPK_EARLY)

/* The block-shared scratch of a staged kernel, or none. */
#define AM_GPU_SCRATCH_1(name) AM_RT_DYNAMIC_SHARED(int32_t, name)
#define AM_GPU_SCRATCH_0(name) int32_t *const name = (int32_t *)0
#define AM_GPU_SCRATCH(staged, name) AM_GPU_SCRATCH_##staged(name)

#define AM_GPU_STEP_ENTRY(name, variant, bound, staged)                      \
  AM_KERNEL void AM_MAX_BLOCK_THREADS(bound) name(am_step_params params) {  \
    AM_GPU_SCRATCH(staged, am_stage);                                        \
    am_step_body(&params, AM_THREAD_HERE(), am_stage, (variant));            \
  }
AM_STEP_KERNELS(AM_GPU_STEP_ENTRY)
#undef AM_GPU_STEP_ENTRY

#define AM_GPU_TOPK_ENTRY(name, kind, staged)                                                  \
  AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) name(am_topk_params params) { \
    AM_GPU_SCRATCH(staged, am_topk_scratch);                                                   \
    am_topk_body(&params, AM_THREAD_HERE(), am_topk_scratch, (kind));                          \
  }
AM_TOPK_KERNELS(AM_GPU_TOPK_ENTRY)
#undef AM_GPU_TOPK_ENTRY

/* The pool operation's one kernel (its block-shared scan is a static array: no dynamic shared memory). */
AM_KERNEL void AM_MAX_BLOCK_THREADS(AM_GPU_MAX_BLOCK_THREADS) am_pool_kernel(am_pool_params params) {
  am_pool_body(&params, AM_THREAD_HERE());
}

/* The floor of the measurement API: a launch that does no work. */
AM_KERNEL void am_empty_kernel(void) {}

#endif /* ATTNMETA_AM_GPU_KERNELS_H */
