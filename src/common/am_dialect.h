// SPDX-License-Identifier: Apache-2.0
/*
 * The device dialect: the project's own neutral names for what a kernel body
 * needs, mapped once from the compiler in use. Kernel bodies use only these
 * names, so one source compiles as CUDA (nvcc), HIP (hipcc / clang -x hip)
 * and plain C for the CPU backend. Valid C11 and C++. A fourth target is
 * test-only: the HIP module's source built by a host C++ compiler against
 * HIP-CPU (third_party/hip-cpu), which defines __HIP_CPU_RT__ besides __HIP__.
 *
 * Execution model every kernel body is written for:
 *  - a grid of blocks, each of `block_dim` threads; bodies receive an
 *    am_thread that says which thread they are;
 *  - bodies are correct for ANY block_dim >= 1 and grid_dim >= 1
 *    (block-stride and grid-stride loops), and never assume a warp width;
 *  - AM_BARRIER() synchronises the threads of one block and must be reached
 *    by all of them (only at block-uniform points);
 *  - the CPU backend runs each block with one thread, in sequence, so
 *    barriers are no-ops there and the same index arithmetic runs.
 */
#ifndef ATTNMETA_AM_DIALECT_H
#define ATTNMETA_AM_DIALECT_H

#include <stdint.h>

#if defined(__CUDACC__)
#  define AM_TARGET_CUDA 1
#elif defined(__HIPCC__) || defined(__HIP__)
#  define AM_TARGET_HIP 1
#  if defined(__HIP_CPU_RT__)
/* HIP on the CPU (tests only): threads of a block are fibers that switch at
 * barriers, blocks run in parallel on host threads. */
#    define AM_TARGET_HIP_CPU 1
#  endif
#else
#  define AM_TARGET_HOST 1
#endif

#if defined(AM_TARGET_HIP)
#  include <hip/hip_runtime.h>
#endif

#if defined(AM_TARGET_CUDA) || defined(AM_TARGET_HIP)
#  define AM_GPU 1
#  if defined(AM_TARGET_HIP_CPU)
/* HIP-CPU spells __device__ and __global__ with g++'s `simd` attribute,
 * which warns on the kernels' struct parameters (builds use -Werror), and
 * its launch calls a kernel as an ordinary function: plain C++ here. */
#    define AM_DEVICE static inline
/* A body a kernel dispatches to, kept out of the kernel's frame: HIP-CPU
 * runs threads on small fiber stacks, and a kernel flattened with every
 * path's locals (larger still under AddressSanitizer) outgrows them. */
#    define AM_DEVICE_OWN_FRAME static __attribute__((noinline))
#    define AM_KERNEL extern "C" __attribute__((flatten))
#  else
/* Inline function callable from kernel bodies. */
#    define AM_DEVICE static __device__ __forceinline__
/* Kernel entry point with C linkage. */
#    define AM_KERNEL extern "C" __global__
#  endif
/* Largest block a kernel is launched with; lets the compiler budget registers. */
#  define AM_MAX_BLOCK_THREADS(n) __launch_bounds__(n)
#  define AM_BARRIER() __syncthreads()
/* A block-shared array of fixed size. */
#  define AM_SHARED_ARRAY(type, name, count) __shared__ type name[count]
#  define AM_RESTRICT __restrict__
#  define AM_ATOMIC_OR(ptr, value) atomicOr((ptr), (value))
#  define AM_LIKELY(x) __builtin_expect(!!(x), 1)
#  define AM_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* The calling thread's place in the launch, from the vendor's built-ins. */
#  define AM_THREAD_HERE() \
    am_make_thread(blockIdx.x, gridDim.x, threadIdx.x, blockDim.x, threadIdx.y, blockDim.y)
#else
#  define AM_DEVICE static inline
#  define AM_KERNEL
#  define AM_BARRIER() ((void)0)
#  define AM_SHARED_ARRAY(type, name, count) type name[count]
#  ifdef __cplusplus
#    define AM_RESTRICT __restrict__
#  else
#    define AM_RESTRICT restrict
#  endif
#  define AM_ATOMIC_OR(ptr, value) ((void)__atomic_fetch_or((ptr), (value), __ATOMIC_RELAXED))
#  define AM_LIKELY(x) __builtin_expect(!!(x), 1)
#  define AM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#endif

/* Early start (AM_VARIANT_EARLY_START): a kernel launched to start before
 * the kernel ahead of it on the stream has finished calls
 * AM_WAIT_FOR_PRIOR_KERNELS() before its first read of anything that
 * kernel may write: it returns once that kernel has finished and its
 * writes are visible. AM_LET_NEXT_KERNEL_START() lets the kernel after it,
 * when launched the same way, start now (it waits the same way before
 * reading this kernel's outputs). Both are no-ops where the target has no
 * such launch (HIP, the CPU, GPUs before compute capability 9.0), and on
 * any launch that did not ask for it. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#  define AM_WAIT_FOR_PRIOR_KERNELS() asm volatile("griddepcontrol.wait;" ::: "memory")
#  define AM_LET_NEXT_KERNEL_START() asm volatile("griddepcontrol.launch_dependents;" ::: "memory")
#else
#  define AM_WAIT_FOR_PRIOR_KERNELS() ((void)0)
#  define AM_LET_NEXT_KERNEL_START() ((void)0)
#endif

#ifndef AM_DEVICE_OWN_FRAME
#  define AM_DEVICE_OWN_FRAME AM_DEVICE
#endif

/* AM_BARRIER_COUNT(pred): a barrier (as AM_BARRIER, reached by every
 * thread of the block) that returns how many of the block's threads passed
 * a nonzero pred. One instruction on the GPUs; HIP-CPU has none, so there
 * it is a block-shared counter between barriers (its threads switch only
 * at barriers, and its __shared__ is a host thread's, as here); on the
 * host a block is one thread. */
#if defined(AM_TARGET_HIP_CPU)
AM_DEVICE int am_barrier_count(int pred) {
  static thread_local int count;
  int n;
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) count = 0;
  __syncthreads();
  count += pred != 0;
  __syncthreads();
  n = count;
  __syncthreads(); /* every thread has read it before the next call resets it */
  return n;
}
#  define AM_BARRIER_COUNT(pred) am_barrier_count(pred)
#elif defined(AM_GPU)
#  define AM_BARRIER_COUNT(pred) __syncthreads_count(pred)
#else
#  define AM_BARRIER_COUNT(pred) ((pred) != 0)
#endif

#define AM_ALIGNED(n) __attribute__((aligned(n)))

/* Trailing zero bits of v (v != 0). */
#if defined(AM_TARGET_CUDA)
AM_DEVICE uint32_t am_ctz32(uint32_t v) { return (uint32_t)(__ffs((int)v) - 1); }
#else
AM_DEVICE uint32_t am_ctz32(uint32_t v) { return (uint32_t)__builtin_ctz(v); }
#endif

/* Unsigned arithmetic that wraps on purpose (modulo 2^32), through these
 * helpers only, so that clang's unsigned-integer-overflow check (enabled by
 * the host sanitizer and fuzz builds) skips exactly these operations. */
#if defined(AM_TARGET_HOST) && defined(__clang__)
#  define AM_WRAPS __attribute__((no_sanitize("unsigned-integer-overflow")))
#else
#  define AM_WRAPS
#endif
AM_DEVICE AM_WRAPS uint32_t am_wrapping_sub(uint32_t a, uint32_t b) { return a - b; }
AM_DEVICE AM_WRAPS uint32_t am_wrapping_add(uint32_t a, uint32_t b) { return a + b; }

/* Where a thread is. Blocks are two-dimensional: `lanes` threads along x
 * share one work item (a token's row), `groups` along y take different items.
 * The flat thread index and block size serve block-wide loops. 32-bit
 * unsigned, the GPUs' native width: the host keeps grid_dim * block_dim <=
 * 2^31, so an index below 2^31 plus any stride stays below 2^32. */
typedef struct am_thread {
  uint32_t block;     /* block index in the grid */
  uint32_t grid_dim;  /* blocks in the grid */
  uint32_t lane;      /* x index, in [0, lanes) */
  uint32_t lanes;     /* block size along x */
  uint32_t group;     /* y index, in [0, groups) */
  uint32_t groups;    /* block size along y */
  uint32_t thread;    /* flat index in the block: group * lanes + lane */
  uint32_t block_dim; /* lanes * groups */
} am_thread;

AM_DEVICE am_thread am_make_thread(uint32_t block, uint32_t grid_dim, uint32_t lane,
                                   uint32_t lanes, uint32_t group, uint32_t groups) {
  am_thread t;
  t.block = block;
  t.grid_dim = grid_dim;
  t.lane = lane;
  t.lanes = lanes;
  t.group = group;
  t.groups = groups;
  t.thread = group * lanes + lane;
  t.block_dim = lanes * groups;
  return t;
}

/* Four int32 moved as one 16-byte access where the target supports it. */
typedef struct AM_ALIGNED(16) am_i32x4 {
  int32_t x, y, z, w;
} am_i32x4;

AM_DEVICE int64_t am_min64(int64_t a, int64_t b) { return a < b ? a : b; }
AM_DEVICE int64_t am_max64(int64_t a, int64_t b) { return a > b ? a : b; }
AM_DEVICE int64_t am_clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

#endif /* ATTNMETA_AM_DIALECT_H */
