// SPDX-License-Identifier: Apache-2.0
/*
 * The example's top-k selection kernel (the rule of problem.h): one block
 * a token. The block loads the row's keys into shared memory, finds the
 * K-th highest key by a radix select (four passes of 8 bits, a 256-bin
 * histogram each), then places the kept positions in increasing order:
 * each thread takes FT_ITEMS consecutive positions, and one prefix sum
 * over the threads of (count above the threshold, count equal to it) says
 * where each kept position goes. They go to shared memory (the keys[]
 * buffer, no longer needed), and after a barrier the block writes the row
 * [0, K) coalesced, thread tid taking entries tid, tid + FT_THREADS, ...:
 * the kept positions, then -1.
 *
 * kFused = false writes the positions (for attnmeta_convert_topk to
 * convert afterwards); kFused = true writes global slots through
 * attnmeta_topk_slot, so no conversion launch follows. The conversion is
 * done in that last loop, not while placing (where a thread walked its
 * FT_ITEMS positions one after another, each table load behind the
 * previous item's store to dst, which might alias it): a thread converts
 * at most FT_BATCH entries a round, all before it stores any, and the
 * block's table loads for a row are spread over all its threads. Both
 * forms do the same work but the conversion.
 *
 * C++ for CUDA (nvcc), HIP, and HIP-CPU (the tests run it on the CPU).
 * Launch with FT_THREADS threads a block and one block a token.
 */
#ifndef FUSED_TOPK_SELECT_KERNEL_CUH
#define FUSED_TOPK_SELECT_KERNEL_CUH

#include <stdint.h>
#include <string.h>

#include <attnmeta/device/topk_slot.h>

#if defined(__HIP_CPU_RT__)
/* HIP-CPU calls a kernel as an ordinary function; its __global__ spelling
 * warns on struct parameters. */
#  define FT_KERNEL __attribute__((flatten))
#  define FT_DEVICE static inline
#else
#  define FT_KERNEL __global__
#  define FT_DEVICE static __device__ inline
#endif

#define FT_THREADS 512
#define FT_ITEMS 16
#define FT_MAX_L (FT_THREADS * FT_ITEMS)
#define FT_BATCH 4 /* entries a thread converts before it stores them */

FT_DEVICE uint32_t ft_device_key(float score) {
  uint32_t u;
  memcpy(&u, &score, 4);
  return (u & 0x80000000U) ? ~u : u | 0x80000000U;
}

/* Inclusive prefix sum of v over the block's FT_THREADS threads; *total
 * gets the block's sum. Every thread must call it. */
FT_DEVICE uint32_t ft_block_scan(uint32_t *scan, uint32_t tid, uint32_t v, uint32_t *total) {
  uint32_t d, incl;
  scan[tid] = v;
  __syncthreads();
  for (d = 1; d < FT_THREADS; d <<= 1) {
    const uint32_t add = tid >= d ? scan[tid - d] : 0;
    __syncthreads();
    scan[tid] += add;
    __syncthreads();
  }
  incl = scan[tid];
  *total = scan[FT_THREADS - 1];
  __syncthreads();
  return incl;
}

/* scores: [T][L], L <= FT_MAX_L. dst: [T][K], positions or slots. op: the
 * layer's conversion (req_id, table, sizes; op.error_word for flags). */
template <bool kFused>
FT_KERNEL void ft_select_kernel(const float *scores, int32_t L, const int32_t *seq_lens,
                                attnmeta_topk op, int32_t *dst) {
  __shared__ uint32_t keys[FT_MAX_L]; /* the row's keys, then its kept positions */
  __shared__ uint32_t hist[256];
  __shared__ uint32_t scan[FT_THREADS];
  __shared__ uint32_t chosen[2];
  const int32_t t = static_cast<int32_t>(blockIdx.x);
  const uint32_t tid = threadIdx.x, first = tid * FT_ITEMS;
  const uint32_t K = static_cast<uint32_t>(op.topk_count);
  const attnmeta_topk_token tok = attnmeta_topk_token_of(&op, t);
  int32_t *const row = dst + static_cast<int64_t>(t) * K;
  int32_t flags = 0;
  uint32_t n = 0, i, j, prefix = 0, mask = 0, remaining = K, kept;
  uint32_t above = 0, equal = 0, gt = 0, eq = 0, total, packed;
  int shift, take_all;
  if (t >= op.num_tokens) return; /* uniform over the block */
  {
    const int32_t r = op.req_id[t];
    const int32_t len = r >= 0 && r < op.num_reqs ? seq_lens[r] : 0;
    n = len <= 0 ? 0u : len < L ? static_cast<uint32_t>(len) : static_cast<uint32_t>(L);
  }
  for (i = tid; i < n; i += FT_THREADS)
    keys[i] = ft_device_key(scores[static_cast<int64_t>(t) * L + i]);
  __syncthreads(); /* each thread reads other threads' keys below */
  take_all = n <= K;
  for (shift = 24; !take_all && shift >= 0; shift -= 8) {
    for (i = tid; i < 256; i += FT_THREADS) hist[i] = 0;
    __syncthreads();
    for (i = tid; i < n; i += FT_THREADS)
      if ((keys[i] & mask) == prefix) atomicAdd(&hist[(keys[i] >> shift) & 255U], 1U);
    __syncthreads();
    if (tid == 0) {
      uint32_t rem = remaining, b = 256;
      while (b-- > 0) {
        if (hist[b] >= rem) break;
        rem -= hist[b];
      }
      chosen[0] = prefix | b << shift;
      chosen[1] = rem;
    }
    __syncthreads();
    prefix = chosen[0];
    remaining = chosen[1]; /* keys equal to the threshold still to keep */
    mask |= 255U << shift;
  }
  /* prefix is now the K-th highest key (when not taking all). n <= FT_MAX_L:
   * one pass covers the row. The thread's items as bits, read before the
   * scan's barriers, so keys[] can take the positions after it. */
  for (j = 0; j < FT_ITEMS && first + j < n; j++) {
    const uint32_t a = take_all || keys[first + j] > prefix;
    const uint32_t e = !take_all && keys[first + j] == prefix;
    above |= a << j;
    equal |= e << j;
    gt += a;
    eq += e;
  }
  packed = gt << 16 | eq;
  packed = ft_block_scan(scan, tid, packed, &total) - packed; /* exclusive */
  gt = packed >> 16;
  eq = packed & 0xffffU;
  for (j = 0; j < FT_ITEMS; j++) {
    const uint32_t a = above >> j & 1U, e = equal >> j & 1U;
    if (a || (e && eq < remaining)) keys[gt + (eq < remaining ? eq : remaining)] = first + j;
    gt += a;
    eq += e;
  }
  kept = take_all ? n : K;
  __syncthreads(); /* the row's kept positions are in keys[0, kept) */
  for (i = tid; i < K; i += FT_THREADS * FT_BATCH) {
    int32_t v[FT_BATCH];
    uint32_t u;
    for (u = 0; u < FT_BATCH; u++) { /* loads only: the stores follow */
      const uint32_t at = i + u * FT_THREADS;
      const int32_t x = at < kept ? static_cast<int32_t>(keys[at]) : -1;
      v[u] = kFused && x >= 0 ? attnmeta_topk_slot(&op, &tok, x, &flags) : x;
    }
    for (u = 0; u < FT_BATCH && i + u * FT_THREADS < K; u++) row[i + u * FT_THREADS] = v[u];
  }
  attnmeta_topk_flags_publish(op.error_word, flags);
}

#endif /* FUSED_TOPK_SELECT_KERNEL_CUH */
