// SPDX-License-Identifier: Apache-2.0
/*
 * Compile check: attnmeta/device/topk_slot.h in an engine's own GPU
 * kernels, under nvcc (this file) and the HIP compiler
 * (test_fused_topk_device.hip includes it), warnings as errors. The build
 * is the test; the functions run in test_fused_topk.c (host),
 * test_fused_topk_hip_cpu.cpp (HIP-CPU) and examples/fused_topk (CUDA).
 */
#include "attnmeta/device/topk_slot.h"
#include "fused_topk_rows.h"

/* A row a block, its threads sharing it; counts and flags by atomics. */
extern "C" __global__ void attnmeta_check_fused_rows(attnmeta_topk op) { amt_fused_rows(&op); }

/* Entry by entry, as a selection kernel that holds positions in registers. */
extern "C" __global__ void attnmeta_check_fused_entries(attnmeta_topk op, const int32_t *positions) {
  const int32_t t = static_cast<int32_t>(blockIdx.x);
  const attnmeta_topk_token tok = attnmeta_topk_token_of(&op, t);
  int32_t flags = 0, j;
  if (t >= op.num_tokens) return;
  for (j = static_cast<int32_t>(threadIdx.x); j < op.topk_count; j += static_cast<int32_t>(blockDim.x))
    op.out[t * op.out_stride + j] = attnmeta_topk_slot(&op, &tok, positions[t * op.topk_stride + j], &flags);
  attnmeta_topk_flags_publish(op.error_word, flags);
}

/* One thread a row, compaction and counts included. */
extern "C" __global__ void attnmeta_check_fused_whole_rows(attnmeta_topk op) {
  int32_t flags = 0;
  attnmeta_topk_slot_row(&op, static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x), &flags);
  attnmeta_topk_flags_publish(op.error_word, flags);
}
