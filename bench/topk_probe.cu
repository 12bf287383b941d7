// SPDX-License-Identifier: Apache-2.0
// bench/topk_probe.cu: kernels that isolate where the top-k conversion's
// time goes, launched from Python (bench/topk_probe.py) on the same torch
// buffers, stream and CUDA graph as the Triton kernels and attnmeta:
//   vec_loads     Triton's single-tile layout (128 threads, each 16-byte
//                 groups of 4 consecutive columns, 512 columns apart), the
//                 engines' checks only (x >= 0, block inside the table)
//   strided_loads the short body's layout (K / 4 threads, 4 columns a
//                 block width apart), the engines' checks only
//   rows          attnmeta's short body itself (am_topk_rows_body), plain,
//                 K / 4 threads a block (at most 1024) as the library
//                 launches it; rows128 with 128 threads a block
//   rows_counted, rows128_counted  the same with counts
//   rows_lean     the short body's lean form (rows_lean128: 128 threads)
//   part_IVO      the short body with parts left out to price them (see
//                 k_rows_part: I request ids only, V vectors only, O one pass)
//   clean         Triton's single tile in plain CUDA (block size 64 compiled
//                 in, no branch: the table load always made); clean_fillN
//                 the same with N independent multiply-adds a pass (more
//                 instructions, no more latency); clean_checked the
//                 contract's checks and flags in the same shape;
//                 clean_wide: clean with K / 4 threads a block
// Every kernel takes a row a block. Build (bench/topk_probe.py does):
//   nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC -Iinclude -Isrc/common \
//        bench/topk_probe.cu -o topk_probe.so
#include <cuda_runtime.h>
#include <stdint.h>

#include "am_topk_rows_kernel.h"

struct probe_args {
  const int32_t *req, *table, *idx;
  int32_t *out, *count;
  int64_t table_stride, idx_stride, out_stride;
  int32_t T, K, cols, block_size;
};

__device__ __forceinline__ int32_t engine_slot(const probe_args &a, const int32_t *row, int32_t x) {
  const int32_t blk = x / a.block_size;
  const bool ok = x >= 0 && blk < a.cols;
  const int32_t id = ok ? row[blk] : 0;
  return ok ? id * a.block_size + x % a.block_size : -1;
}

__global__ void k_vec_loads(probe_args a) {
  const int t = blockIdx.x;
  const int32_t *in = a.idx + t * a.idx_stride;
  int32_t *out = a.out + t * a.out_stride;
  const int r = a.req[t];
  const int32_t *row = a.table + r * a.table_stride;
  for (int c = threadIdx.x * 4; c < a.K; c += blockDim.x * 4) {
    const int4 x = *reinterpret_cast<const int4 *>(in + c);
    int4 y;
    y.x = engine_slot(a, row, x.x);
    y.y = engine_slot(a, row, x.y);
    y.z = engine_slot(a, row, x.z);
    y.w = engine_slot(a, row, x.w);
    *reinterpret_cast<int4 *>(out + c) = y;
  }
}

__global__ void k_strided_loads(probe_args a) {
  const int t = blockIdx.x;
  const int32_t *in = a.idx + t * a.idx_stride;
  int32_t *out = a.out + t * a.out_stride;
  int32_t x[4];
  for (int u = 0; u < 4; ++u) {
    const int j = threadIdx.x + u * blockDim.x;
    x[u] = j < a.K ? in[j] : -1;
  }
  const int r = a.req[t];
  const int32_t *row = a.table + r * a.table_stride;
  for (int u = 0; u < 4; ++u) {
    const int j = threadIdx.x + u * blockDim.x;
    if (j < a.K) out[j] = engine_slot(a, row, x[u]);
  }
}

// Triton's single tile as plain CUDA: block size 64 compiled in, no branch
// (the table load always made, at column 0 where the position is not
// wanted), K a multiple of 4 x blockDim.
template <int FILL>
__global__ void k_clean(probe_args a) {
  const int t = blockIdx.x;
  const int32_t *in = a.idx + t * a.idx_stride;
  int32_t *out = a.out + t * a.out_stride;
  const int r = a.req[t];
  const int32_t *row = a.table + r * a.table_stride;
  int fill = threadIdx.x;
#pragma unroll 1
  for (int c = threadIdx.x * 4; c < a.K; c += blockDim.x * 4) {
    const int4 x = *reinterpret_cast<const int4 *>(in + c);
    const int xs[4] = {x.x, x.y, x.z, x.w};
    int ys[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int blk = xs[u] >> 6;
      const bool ok = xs[u] >= 0 && blk < a.cols;
      const int id = row[ok ? blk : 0];
      ys[u] = ok ? id * 64 + (xs[u] & 63) : -1;
    }
    // FILL independent multiply-adds off the loads' path (instruction
    // count without latency); never stored unless impossible
#pragma unroll
    for (int f = 0; f < FILL; ++f) fill = fill * 1664525 + 1013904223 + c;
    *reinterpret_cast<int4 *>(out + c) = make_int4(ys[0], ys[1], ys[2], ys[3]);
  }
  if (FILL && fill == 0x7fffffff && a.K < 0) out[0] = fill;
}

// k_clean with the contract's checks: runtime power-of-two block size,
// 64-bit slots checked against INT32_MAX, negative ids, the three flags.
__global__ void k_clean_checked(probe_args a, int32_t *error_word) {
  const int t = blockIdx.x;
  const int32_t *in = a.idx + t * a.idx_stride;
  int32_t *out = a.out + t * a.out_stride;
  const int r = a.req[t];
  const bool live = r >= 0 && r < a.T;
  const int32_t *row = a.table + (live ? r : 0) * a.table_stride;
  const unsigned shift = __ffs(a.block_size) - 1, mask = a.block_size - 1;
  int flags = 0;
  for (int c = threadIdx.x * 4; c < a.K; c += blockDim.x * 4) {
    const int4 x = *reinterpret_cast<const int4 *>(in + c);
    const int xs[4] = {x.x, x.y, x.z, x.w};
    int ys[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const unsigned local = (unsigned)xs[u], blk = local >> shift;
      const bool wanted = live && xs[u] >= 0;
      const bool past = wanted && blk >= (unsigned)a.cols;
      const bool ok = wanted && !past;
      const int id = row[ok ? blk : 0];
      const unsigned long long slot =
          (unsigned long long)(unsigned)id * (unsigned)a.block_size + (local & mask);
      const bool bad = ok && slot > 0x7fffffffull;
      flags |= (past ? 1 : 0) | (bad ? (id < 0 ? 2 : 4) : 0);
      ys[u] = ok && !bad ? (int)slot : -1;
    }
    *reinterpret_cast<int4 *>(out + c) = make_int4(ys[0], ys[1], ys[2], ys[3]);
  }
  if (flags && error_word) atomicOr(error_word, flags);
}

// The short body with parts left out, to price them (wrong in general):
// IDS the request from req_id only (no query_start_loc path), VEC every
// row 16-byte aligned with K a multiple of 4 (no scalar path), ONE the
// row of blockIdx.x only, in one pass (no loops).
template <int IDS, int VEC, int ONE>
__global__ void k_rows_part(am_topk_params prm) {
  const am_topk_params *p = &prm;
  const am_thread th = AM_THREAD_HERE();
  const uint32_t num_tokens = (uint32_t)p->num_tokens, k = (uint32_t)p->topk_count;
  const uint32_t first = 4 * th.thread, pass = 4 * th.block_dim;
  const uint32_t shift = am_ctz32((uint32_t)p->block_size);
  const uint32_t in_block = (uint32_t)p->block_size - 1u;
  const uint32_t cols = (uint32_t)p->cols, rows = (uint32_t)p->stride_rows;
  int32_t flags = 0;
  for (uint32_t t = th.block; t < num_tokens; t += th.grid_dim) {
    const int32_t *in = p->topk + (int64_t)t * p->topk_stride;
    int32_t *out = p->out + (int64_t)t * p->out_stride;
    int32_t x[4];
    if (VEC) {
      const am_i32x4 v = *(const am_i32x4 *)(in + first);
      x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
    } else {
      am_topk_load_columns(in, k, first, p->vector_in, 0, x);
    }
    int32_t r;
    if (IDS) {
      r = p->req_id[t];
      r = r >= 0 && r < p->num_reqs ? r : -1;
    } else {
      r = am_topk_request(p, t);
    }
    const int live = r >= 0;
    const int32_t *table = p->block_table + (int64_t)(live ? r : 0) * p->block_table_stride;
    for (uint32_t c0 = 0; c0 < k; c0 += pass) {
      int32_t v[4];
      if (!ONE && c0 > 0) am_topk_load_columns(in, k, c0 + first, p->vector_in, 0, x);
      for (int u = 0; u < 4; ++u) {
        const uint32_t local = (uint32_t)x[u], blk = local >> shift;
        const int wanted = live && x[u] >= 0;
        const int past = wanted && blk >= cols;
        const int ok = wanted && !past;
        const int32_t id = table[ok ? blk : 0u];
        const uint64_t slot = (uint64_t)(uint32_t)id * rows + (local & in_block);
        const int bad = ok && slot > INT32_MAX;
        flags |= (past ? 1 : 0) | (bad ? (id < 0 ? 2 : 4) : 0);
        v[u] = ok && !bad ? (int32_t)slot : -1;
      }
      if (VEC) {
        am_i32x4 w;
        w.x = v[0], w.y = v[1], w.z = v[2], w.w = v[3];
        *(am_i32x4 *)(out + c0 + first) = w;
      } else {
        am_topk_store_columns(out, k, c0 + first, p->vector_out, 0, v);
      }
      if (ONE) break;
    }
    if (ONE) break;
  }
  if (flags && p->error_word) AM_ATOMIC_OR(p->error_word, flags);
}

__global__ void k_rows(am_topk_params p) { am_topk_rows_body(&p, AM_THREAD_HERE(), 0, 0); }
__global__ void k_rows_counted(am_topk_params p) { am_topk_rows_body(&p, AM_THREAD_HERE(), 1, 0); }
__global__ void k_rows_lean(am_topk_params p) { am_topk_rows_body(&p, AM_THREAD_HERE(), 0, 1); }

static am_topk_params params_of(const probe_args &a) {
  am_topk_params p = {};
  p.topk = a.idx;
  p.topk_stride = a.idx_stride;
  p.req_id = a.req;
  p.block_table = a.table;
  p.block_table_stride = a.table_stride;
  p.out = a.out;
  p.out_stride = a.out_stride;
  p.valid_count = a.count;
  p.num_tokens = a.T;
  p.topk_count = a.K;
  p.num_reqs = a.T;
  p.cols = a.cols;
  p.block_size = a.block_size;
  p.stride_rows = a.block_size;
  p.dcp_world_size = 1;
  p.rows_body = 1;
  p.vector_in = ((uintptr_t)a.idx % 16) == 0 && a.idx_stride % 4 == 0;
  p.vector_out = ((uintptr_t)a.out % 16) == 0 && a.out_stride % 4 == 0;
  return p;
}

// which: 0 vec_loads, 1 strided_loads, 2 rows, 3 rows_counted. Returns a
// cudaError_t.
extern "C" int topk_probe_launch(int which, void *stream, const int32_t *req,
                                 const int32_t *table, int64_t table_stride, const int32_t *idx,
                                 int64_t idx_stride, int32_t *out, int64_t out_stride,
                                 int32_t *count, int32_t T, int32_t K, int32_t cols,
                                 int32_t block_size) {
  const probe_args a = {req, table, idx, out, count, table_stride, idx_stride, out_stride,
                        T, K, cols, block_size};
  cudaStream_t s = (cudaStream_t)stream;
  const int quarter = (K / 4 + 31) / 32 * 32;
  const int rows_block = quarter < 1024 ? quarter : 1024;
  switch (which) {
    case 0: k_vec_loads<<<T, 128, 0, s>>>(a); break;
    case 1: k_strided_loads<<<T, rows_block, 0, s>>>(a); break;
    case 2: k_rows<<<T, rows_block, 0, s>>>(params_of(a)); break;
    case 3: k_rows_counted<<<T, rows_block, 0, s>>>(params_of(a)); break;
    case 4: k_clean<0><<<T, 128, 0, s>>>(a); break;
    case 5: k_clean<64><<<T, 128, 0, s>>>(a); break;
    case 6: k_clean<192><<<T, 128, 0, s>>>(a); break;
    case 7: k_clean_checked<<<T, 128, 0, s>>>(a, nullptr); break;
    case 8: k_clean<0><<<T, rows_block, 0, s>>>(a); break;
    case 9: k_rows<<<T, 128, 0, s>>>(params_of(a)); break;
    case 10: k_rows_counted<<<T, 128, 0, s>>>(params_of(a)); break;
    case 11: k_rows_part<0, 0, 0><<<T, rows_block, 0, s>>>(params_of(a)); break;
    case 12: k_rows_part<1, 0, 0><<<T, rows_block, 0, s>>>(params_of(a)); break;
    case 13: k_rows_part<0, 1, 0><<<T, rows_block, 0, s>>>(params_of(a)); break;
    case 14: k_rows_part<1, 1, 0><<<T, rows_block, 0, s>>>(params_of(a)); break;
    case 15: k_rows_part<1, 1, 1><<<T, rows_block, 0, s>>>(params_of(a)); break;
    case 16: k_rows_lean<<<T, rows_block, 0, s>>>(params_of(a)); break;
    case 17: k_rows_lean<<<T, 128, 0, s>>>(params_of(a)); break;
    default: return (int)cudaErrorInvalidValue;
  }
  return (int)cudaGetLastError();
}
