// SPDX-License-Identifier: Apache-2.0
// bench/graph_replay.cuh: what the stand-alone CUDA benchmarks share (a
// CUDA call checked, a captured graph timed between events).
#ifndef ATTNMETA_BENCH_GRAPH_REPLAY_CUH
#define ATTNMETA_BENCH_GRAPH_REPLAY_CUH

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

// A CUDA runtime call that must succeed: else its text and the error, exit 2.
#define CHECK(x)                                                                     \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                \
                   cudaGetErrorString(e_));                                          \
      std::exit(2);                                                                  \
    }                                                                                \
  } while (0)

// Milliseconds between events a and e around n launches of graph x on s.
static inline float replay_ms(cudaGraphExec_t x, cudaStream_t s, cudaEvent_t a, cudaEvent_t e,
                              int n) {
  float ms = 0;
  CHECK(cudaEventRecord(a, s));
  for (int i = 0; i < n; ++i) CHECK(cudaGraphLaunch(x, s));
  CHECK(cudaEventRecord(e, s));
  CHECK(cudaEventSynchronize(e));
  CHECK(cudaEventElapsedTime(&ms, a, e));
  return ms;
}

#endif
