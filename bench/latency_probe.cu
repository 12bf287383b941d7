// SPDX-License-Identifier: Apache-2.0
// bench/latency_probe.cu: what the smallest kernels cost as graph nodes.
//
// The device time per node of kernels that do next to nothing, measured the
// way `attnmeta bench` measures a step (50 nodes captured into one graph,
// replayed, events around the replays, median of 7 repeats), so the cost of
// one attnmeta step can be set against the cost of the memory round trips it
// cannot avoid. Each kernel runs as one block of 256 threads:
//   empty         no work
//   store         every thread stores one int (kernel parameters + stores)
//   load_store    out[i] = in[i]: one round trip to memory
//   chain2        j = in[0]; out[i] = in[j + i]: two dependent round trips
//   chain3        three dependent round trips
//   load_store_512  load_store plus 512 ints stored (a step's seq_lens tail)
// Inputs stay the same across replays (they live in L2, as a step's do).
// Build: nvcc -O3 -arch=sm_90 bench/latency_probe.cu -o latency_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "graph_replay.cuh"

__global__ void k_empty(const int *, int *) {}
__global__ void k_store(const int *, int *out) { out[threadIdx.x] = 1; }
__global__ void k_load_store(const int *in, int *out) { out[threadIdx.x] = in[threadIdx.x]; }
__global__ void k_chain2(const int *in, int *out) {
  const int j = in[0];
  out[threadIdx.x] = in[j + threadIdx.x];
}
__global__ void k_chain3(const int *in, int *out) {
  const int j = in[0];
  const int k = in[j + 1];
  out[threadIdx.x] = in[k + threadIdx.x];
}
__global__ void k_load_store_512(const int *in, int *out) {
  out[threadIdx.x] = in[threadIdx.x];
  out[256 + threadIdx.x] = 0;
  out[512 + threadIdx.x] = 0;
}

typedef void (*kernel_fn)(const int *, int *);

static float graph_us_per_node(kernel_fn k, const int *in, int *out) {
  const int nodes = 50, repeats = 7;
  cudaStream_t s;
  cudaGraph_t g;
  cudaGraphExec_t x;
  cudaEvent_t a, b;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < nodes; ++i) k<<<1, 256, 0, s>>>(in, out);
  CHECK(cudaStreamEndCapture(s, &g));
  CHECK(cudaGraphInstantiate(&x, g, 0));
  CHECK(cudaGraphLaunch(x, s));
  CHECK(cudaStreamSynchronize(s));
  // replays per repeat: about 10 ms of work
  int replays = 1;
  while (replay_ms(x, s, a, b, replays) <= 10.0f && replays <= (1 << 20)) replays *= 2;
  std::vector<float> us;
  for (int r = 0; r < repeats; ++r)
    us.push_back(replay_ms(x, s, a, b, replays) * 1000.0f / (float)(replays * nodes));
  std::sort(us.begin(), us.end());
  CHECK(cudaGraphExecDestroy(x));
  CHECK(cudaGraphDestroy(g));
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  CHECK(cudaStreamDestroy(s));
  return us[repeats / 2];
}

int main() {
  int *in, *out;
  std::vector<int> host(4096, 0);  // in[0] = 0 and in[1] = 0: the chains stay at the start
  CHECK(cudaMalloc(&in, host.size() * sizeof(int)));
  CHECK(cudaMalloc(&out, host.size() * sizeof(int)));
  CHECK(cudaMemcpy(in, host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice));
  const struct {
    const char *name;
    kernel_fn k;
  } kernels[] = {{"empty", k_empty},   {"store", k_store},   {"load_store", k_load_store},
                 {"chain2", k_chain2}, {"chain3", k_chain3}, {"load_store_512", k_load_store_512}};
  std::printf("latency probe: device us per graph node (50 nodes per graph, median of 7)\n");
  for (const auto &k : kernels)
    std::printf("  %-16s %6.3f\n", k.name, graph_us_per_node(k.k, in, out));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return 0;
}
