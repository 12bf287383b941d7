// SPDX-License-Identifier: Apache-2.0
/*
 * The body of the kernel that gives a token's row to a block, its threads
 * sharing the row through attnmeta_topk_slot_row_part, counts and flags
 * joined with atomics: one source for the CUDA and HIP kernels
 * (test_fused_topk_device.cu) and the HIP-CPU one
 * (test_fused_topk_hip_cpu.cpp). Include after the runtime's header.
 */
#ifndef ATTNMETA_TESTS_FUSED_TOPK_ROWS_H
#define ATTNMETA_TESTS_FUSED_TOPK_ROWS_H

#include "attnmeta/device/topk_slot.h"

/* HIP-CPU runs kernels as ordinary functions; its __device__ (g++'s simd
 * attribute) is left out. */
#if defined(__HIP_CPU_RT__)
#  define AMT_FUSED_ROWS_FN static inline
#else
#  define AMT_FUSED_ROWS_FN static __device__ inline
#endif

AMT_FUSED_ROWS_FN void amt_fused_rows(const attnmeta_topk *op) {
  const int32_t t = static_cast<int32_t>(blockIdx.x);
  int32_t flags = 0;
  const int32_t n = attnmeta_topk_slot_row_part(op, t, static_cast<int32_t>(threadIdx.x),
                                                static_cast<int32_t>(blockDim.x), &flags);
  if (op->valid_count && n) atomicAdd(&op->valid_count[t], n);
  attnmeta_topk_flags_publish(op->error_word, flags);
}

#endif /* ATTNMETA_TESTS_FUSED_TOPK_ROWS_H */
