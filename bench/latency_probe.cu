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
//   topk          the top-k conversion's dependent loads and nothing else,
//                 as one block of 128 threads taking 4 columns each (T 1 x
//                 K 512): the request id and the positions, then the table,
//                 then the store
//   topk_p224     the same work with its arguments spread over a 224-byte
//                 parameter struct, as attnmeta's top-k kernel receives them
//                 (does where the kernel's arguments sit cost a round trip?)
//   chain2_p224   chain2 likewise
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

// The conversion's loads on `in`: request ids at 0, a table row at 64,
// positions at 1024 (in[] is zero but for the positions: every id is 0).
__device__ __forceinline__ void topk_work(const int *req, const int *topk, const int *table,
                                          int *out) {
  int x[4];
  for (int u = 0; u < 4; ++u) x[u] = topk[u * 128 + threadIdx.x];
  const int r = req[0];
  for (int u = 0; u < 4; ++u) {
    const int id = x[u] >= 0 ? table[r * 512 + (x[u] >> 6)] : 0;
    out[u * 128 + threadIdx.x] = x[u] >= 0 ? id * 64 + (x[u] & 63) : -1;
  }
}
__global__ void k_topk(const int *in, int *out) { topk_work(in, in + 1024, in + 64, out); }

// 224 bytes of arguments, the used ones where attnmeta's am_topk_params
// keeps its topk, req_id, block_table, sizes and out.
struct p224 {
  const int *topk;     // 0
  long long pad0[2];
  const int *req;      // 24
  const int *table;    // 32
  long long pad1[5];
  int *out;            // 80
  long long pad2[9];
  int n;               // 160
  int pad3[15];
};
static_assert(sizeof(p224) == 224, "p224 is 224 bytes");
__global__ void k_topk_p224(p224 p) {
  if (threadIdx.x < (unsigned)p.n) topk_work(p.req, p.topk, p.table, p.out);
}
__global__ void k_chain2_p224(p224 p) {
  if (threadIdx.x < (unsigned)p.n) {
    const int j = p.req[0];
    p.out[threadIdx.x] = p.topk[j + threadIdx.x];
  }
}

typedef void (*kernel_fn)(const int *, int *);

// One node's launch: a kernel of the (in, out) kind, or one of the p224 kind.
struct probe {
  const char *name;
  kernel_fn k;
  void (*k224)(p224);
  int threads;
};

static float graph_us_per_node(const probe &pr, const int *in, int *out) {
  const int nodes = 50, repeats = 7;
  cudaStream_t s;
  cudaGraph_t g;
  cudaGraphExec_t x;
  cudaEvent_t a, b;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  p224 p = {};
  p.topk = in + 1024;
  p.req = in;
  p.table = in + 64;
  p.out = out;
  p.n = pr.threads;
  for (int i = 0; i < nodes; ++i) {
    if (pr.k) pr.k<<<1, pr.threads, 0, s>>>(in, out);
    else pr.k224<<<1, pr.threads, 0, s>>>(p);
  }
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
  for (int i = 0; i < 512; ++i) host[1024 + i] = (i * 37) % 4096;  // topk's positions
  CHECK(cudaMalloc(&in, host.size() * sizeof(int)));
  CHECK(cudaMalloc(&out, host.size() * sizeof(int)));
  CHECK(cudaMemcpy(in, host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice));
  const probe kernels[] = {{"empty", k_empty, nullptr, 256},
                           {"store", k_store, nullptr, 256},
                           {"load_store", k_load_store, nullptr, 256},
                           {"chain2", k_chain2, nullptr, 256},
                           {"chain3", k_chain3, nullptr, 256},
                           {"load_store_512", k_load_store_512, nullptr, 256},
                           {"chain2_p224", nullptr, k_chain2_p224, 256},
                           {"topk", k_topk, nullptr, 128},
                           {"topk_p224", nullptr, k_topk_p224, 128}};
  std::printf("latency probe: device us per graph node (50 nodes per graph, median of 7)\n");
  for (const auto &k : kernels)
    std::printf("  %-16s %6.3f\n", k.name, graph_us_per_node(k, in, out));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  return 0;
}
