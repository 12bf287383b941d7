// SPDX-License-Identifier: Apache-2.0
/*
 * Plumbing of the CUDA-specific test programs (plain C, no test framework):
 * pass/fail counting, skipping cleanly where there is no GPU, an independent
 * naive reference of one step (docs/contract.md, plain loops), and fixed
 * device buffers of one step whose unwritten parts are checked too.
 *
 * Every program prints "<name>: N passed, N failed" last and exits non-zero
 * when a check failed; with no usable CUDA device it prints one line starting
 * with "SKIP:" and exits 0.
 */
#ifndef ATTNMETA_TESTS_GPU_CHECK_H
#define ATTNMETA_TESTS_GPU_CHECK_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "attnmeta/attnmeta.h"

/* ---- counting ---- */
extern int amg_passed, amg_failed;

/* Records one check; prints the message when it failed. Returns `ok`. */
int amg_check(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define AMG_CHECK(cond, ...) amg_check((cond) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)

/* A CUDA runtime call that must succeed; counts as a check. */
#define AMG_CUDA(call) amg_cuda_ok((call), #call, __FILE__, __LINE__)
int amg_cuda_ok(cudaError_t err, const char *what, const char *file, int line);

/* Prints "<name>: N passed, N failed" and returns the exit code. */
int amg_finish(const char *name);

/* Exits 0 with a "SKIP:" line when the CUDA runtime finds no device. */
void amg_require_device(const char *name);

/* Opens device 0 of the CUDA backend; exits 0 with "SKIP:" when the backend
 * reports no device, fails the program on any other error. */
attnmeta_context *amg_open_cuda(const char *name);

/* The start of a program that works on a stream of its own: the two calls
 * above, a line naming the device, and a new non-blocking `*stream`.
 * Returns NULL (the failure counted) when the stream cannot be made. */
attnmeta_context *amg_open_cuda_with_stream(const char *name, cudaStream_t *stream);

/* ---- one step: shape, host inputs, device buffers ---- */
typedef struct amg_shape {
  int32_t R, T, C, cols;
  int64_t in_stride, out_stride;
  int32_t num_mapped, block_size, world, rank, interleave;
} amg_shape;

#define AMG_SLACK 8 /* entries past every written range, checked unwritten */
#define AMG_POISON_BYTE 0xA5
#define AMG_POISON32 ((int32_t)0xA5A5A5A5u)
#define AMG_POISON64 ((int64_t)0xA5A5A5A5A5A5A5A5ull)

/* The outputs, each an array of `n_*` entries (the written range plus
 * AMG_SLACK); the same layout on the host (expected or read back) and on
 * the device. */
enum { AMG_T2R, AMG_SEQ, AMG_GLOBAL, AMG_TABLE, AMG_DECODE, AMG_INDICES, AMG_PER_REQ, AMG_ERR,
       AMG_N32 };
enum { AMG_POS, AMG_SLOT, AMG_N64 };

typedef struct amg_outputs {
  int32_t *o32[AMG_N32];
  int64_t *o64[AMG_N64];
} amg_outputs;

typedef struct amg_sizes {
  size_t n32[AMG_N32];
  size_t n64[AMG_N64];
} amg_sizes;

amg_sizes amg_sizes_of(const amg_shape *s);
/* Host arrays of those sizes (malloc), all poisoned. */
amg_outputs amg_host_outputs(const amg_sizes *z);
void amg_free_host_outputs(amg_outputs *o);
/* Device arrays of those sizes (cudaMalloc). */
amg_outputs amg_device_outputs(const amg_sizes *z);
void amg_free_device_outputs(amg_outputs *o);
/* Poisons every device output (the error word is zeroed) on `stream`. */
void amg_poison_async(const amg_outputs *dev, const amg_sizes *z, cudaStream_t stream);

/* The expected image of every output (arrays of amg_sizes_of(s)), poison
 * where nothing may be written, from the contract by plain loops; the error
 * word is expected 0 (valid data). R >= 1. */
void amg_reference(const amg_shape *s, const int32_t *qsl, const int32_t *seq_lens,
                   const int32_t *table, amg_outputs *expect);

/* Compares every array of `got` with `expect`: one check per array, naming
 * `what` and the first mismatch. */
void amg_compare_host(const char *what, const amg_outputs *got, const amg_outputs *expect,
                      const amg_sizes *z);
/* The same for device outputs, copied back with cudaMemcpy (which does not
 * wait for non-blocking streams). */
void amg_compare(const char *what, const amg_outputs *dev, const amg_outputs *expect,
                 const amg_sizes *z);

/* A step over the fixed device buffers: inputs and every output. */
attnmeta_step amg_step_of(const amg_shape *s, const int32_t *qsl, const int32_t *seq_lens,
                          const int32_t *table, const amg_outputs *dev);

/* Deterministic numbers in [lo, hi] (splitmix64 over *state). */
int32_t amg_rand_range(uint64_t *state, int32_t lo, int32_t hi);

/* Device copies of host arrays (cudaMalloc + cudaMemcpy); NULL for n == 0. */
void *amg_upload(const void *host, size_t bytes);

#endif /* ATTNMETA_TESTS_GPU_CHECK_H */
