// SPDX-License-Identifier: Apache-2.0
// bench/pdl_chain.cu: attnmeta inside a modelled serving step, with and
// without early start (ATTNMETA_LAUNCH_EARLY_START, programmatic dependent
// launch).
//
// One step is three kernels on one stream:
//   producer   writes query_start_loc (plain decode, one token a request)
//              and seq_lens (different every step), as an engine's input
//              preparation does;
//   attnmeta   attnmeta_build_step: token map + the sparse indexer's decode
//              metadata (the product set of `attnmeta bench`);
//   consumer   reads attnmeta's outputs (token_to_req, seq_lens_out, one
//              block-table entry per token) and writes a checksum per token.
// 50 steps are captured into one graph and replayed; device µs per step is
// the median of 7 repeats of N replays between events (as `attnmeta bench`).
// Modes:
//   pair       producer + consumer only (no attnmeta): what the chain costs
//              around it
//   plain      all three as ordinary launches
//   early      attnmeta started early (its tails and launch overlap the
//              producer), consumer ordinary
//   early+consumer  attnmeta and the consumer started early (the consumer
//              waits on the device before reading attnmeta's outputs)
// Every mode's outputs are checked after the timing: all outputs poisoned,
// one replay, the last step's checksums compared with the host's.
//
// Build (bench/gpu_bench.sh does it):
//   nvcc -O3 -arch=sm_90 -Iinclude bench/pdl_chain.cu -LBUILD/lib -lattnmeta
//        -Xlinker -rpath=BUILD/lib -o pdl_chain   (one line)
// Run: ./pdl_chain [--quick]. Prints a table, then one summary line; exit
// status 1 when a check failed.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "graph_replay.cuh"

#include "attnmeta/attnmeta.h"

#define STEPS 50

// The device-side wait of an early-started kernel (no-op when not started
// early, and before sm_90).
__device__ __forceinline__ void wait_for_prior_kernels() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__host__ __device__ inline int32_t seq_len_of(int r, int step) {
  return 1000 + (r * 7919 + step * 131) % 7000;
}

__global__ void producer(int32_t *qsl, int32_t *seq_lens, int reqs, int step) {
  for (int r = blockIdx.x * blockDim.x + threadIdx.x; r <= reqs; r += gridDim.x * blockDim.x) {
    qsl[r] = r;
    if (r < reqs) seq_lens[r] = seq_len_of(r, step);
  }
}

__global__ void consumer(const int32_t *token_to_req, const int32_t *seq_lens_out,
                         const int32_t *block_table_out, int cols, int tokens, int32_t *sum) {
  wait_for_prior_kernels();
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < tokens; t += gridDim.x * blockDim.x)
    sum[t] = token_to_req[t] * 3 + seq_lens_out[t] + block_table_out[(int64_t)t * cols + t % cols];
}

struct chain_case {
  const char *name;
  int reqs, cols;
};

// Decode steps: one token a request (T = R), the capacity past the next
// multiple of 512, as in `attnmeta bench`.
static const chain_case cases[] = {
    {"1x1, 64", 1, 64},
    {"16x1, 64", 16, 64},
    {"128x1, 512", 128, 512},
    {"1024x1, 2560", 1024, 2560},
};

enum { MODE_PAIR, MODE_PLAIN, MODE_EARLY, MODE_EARLY_CONSUMER, NMODES };
static const char *mode_names[NMODES] = {"pair", "plain", "early", "early+consumer"};

struct buffers {
  int R, T, C, cols;
  int32_t *qsl, *seq, *table, *t2r, *seq_out, *bt_out, *dec, *ridx, *prl, *sum;
  std::vector<int32_t> h_table;
};

static void launch_consumer(const buffers &b, cudaStream_t s, bool early) {
  const int threads = 128, blocks = std::max(1, std::min((b.T + threads - 1) / threads, 1024));
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.stream = s;
  cfg.attrs = attr;
  cfg.numAttrs = early ? 1 : 0;
  CHECK(cudaLaunchKernelEx(&cfg, consumer, (const int32_t *)b.t2r, (const int32_t *)b.seq_out,
                           (const int32_t *)b.bt_out, b.cols, b.T, b.sum));
}

static bool enqueue_step(attnmeta_context *ctx, const buffers &b, cudaStream_t s, int mode,
                         int step) {
  const int pblocks = std::max(1, (b.R + 1 + 255) / 256);
  producer<<<pblocks, 256, 0, s>>>(b.qsl, b.seq, b.R, step);
  CHECK(cudaGetLastError());
  if (mode != MODE_PAIR) {
    attnmeta_step st;
    attnmeta_step_init(&st);
    st.query_start_loc = b.qsl;
    st.num_reqs = b.R;
    st.num_tokens = b.T;
    st.capacity = b.C;
    st.seq_lens = b.seq;
    st.block_table = b.table;
    st.block_table_cols = b.cols;
    st.block_table_stride = b.cols;
    st.token_to_req = b.t2r;
    st.seq_lens_out = b.seq_out;
    st.block_table_out = b.bt_out;
    st.block_table_out_stride = b.cols;
    st.decode_lens_out = b.dec;
    st.req_indices_out = b.ridx;
    st.per_req_lens_out = b.prl;
    st.launch_flags = mode >= MODE_EARLY ? ATTNMETA_LAUNCH_EARLY_START : 0;
    attnmeta_status rc = attnmeta_build_step(ctx, &st, s);
    if (rc != ATTNMETA_OK) {
      std::fprintf(stderr, "attnmeta_build_step: %s: %s\n", attnmeta_status_string(rc),
                   attnmeta_last_error(ctx));
      return false;
    }
  }
  launch_consumer(b, s, mode == MODE_EARLY_CONSUMER);
  return true;
}

// The last step's checksums, on the host.
static bool check_sums(const buffers &b, int mode, const char *name) {
  if (mode == MODE_PAIR) return true; // attnmeta's outputs are only poison there
  std::vector<int32_t> sum(b.T);
  CHECK(cudaMemcpy(sum.data(), b.sum, sizeof(int32_t) * b.T, cudaMemcpyDeviceToHost));
  for (int t = 0; t < b.T; ++t) {
    const int r = t; // plain decode
    const int32_t want = r * 3 + seq_len_of(r, STEPS - 1) + b.h_table[(size_t)r * b.cols + t % b.cols];
    if (sum[t] != want) {
      std::printf("CHECK FAILED: %s, %s: sum[%d] = %d, expected %d\n", name, mode_names[mode], t,
                  sum[t], want);
      return false;
    }
  }
  return true;
}

int main(int argc, char **argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int repeats = quick ? 3 : 7;
  const float target_ms = quick ? 5.f : 20.f;
  attnmeta_context *ctx = nullptr;
  if (attnmeta_open(&ctx, ATTNMETA_BACKEND_CUDA, 0) != ATTNMETA_OK) {
    std::printf("pdl_chain: cannot open the CUDA backend: %s\n", attnmeta_open_error());
    return 2;
  }
  cudaStream_t s;
  cudaEvent_t ea, eb;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaEventCreate(&ea));
  CHECK(cudaEventCreate(&eb));
  std::printf("pdl_chain: %s; %d steps a graph, median of %d repeats, device us per step\n",
              attnmeta_context_device_name(ctx), STEPS, repeats);
  std::printf("%-14s %8s %8s %8s %15s %9s %9s\n", "case", "pair", "plain", "early",
              "early+consumer", "saved", "saved+c");
  bool ok = true;
  double best_saved = -1e9, worst_saved = 1e9;
  for (const chain_case &cc : cases) {
    buffers b;
    b.R = cc.reqs;
    b.T = cc.reqs;
    b.C = (b.T / 512 + 1) * 512;
    b.cols = cc.cols;
    const size_t rows = (size_t)b.R * b.cols;
    b.h_table.resize(rows);
    for (size_t i = 0; i < rows; ++i) b.h_table[i] = (int32_t)(1 + (i * 2654435761u) % 1000003u);
    CHECK(cudaMalloc(&b.qsl, sizeof(int32_t) * (b.R + 1)));
    CHECK(cudaMalloc(&b.seq, sizeof(int32_t) * b.R));
    CHECK(cudaMalloc(&b.table, sizeof(int32_t) * rows));
    CHECK(cudaMalloc(&b.t2r, sizeof(int32_t) * b.T));
    CHECK(cudaMalloc(&b.seq_out, sizeof(int32_t) * b.C));
    CHECK(cudaMalloc(&b.bt_out, sizeof(int32_t) * (size_t)b.T * b.cols));
    CHECK(cudaMalloc(&b.dec, sizeof(int32_t) * b.T));
    CHECK(cudaMalloc(&b.ridx, sizeof(int32_t) * b.T));
    CHECK(cudaMalloc(&b.prl, sizeof(int32_t) * b.R));
    CHECK(cudaMalloc(&b.sum, sizeof(int32_t) * b.T));
    CHECK(cudaMemcpy(b.table, b.h_table.data(), sizeof(int32_t) * rows, cudaMemcpyHostToDevice));
    double us[NMODES];
    for (int mode = 0; mode < NMODES; ++mode) {
      cudaGraph_t g;
      cudaGraphExec_t x;
      CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      bool enq = true;
      for (int i = 0; i < STEPS && enq; ++i) enq = enqueue_step(ctx, b, s, mode, i);
      CHECK(cudaStreamEndCapture(s, &g));
      if (!enq) return 2;
      CHECK(cudaGraphInstantiate(&x, g, 0));
      CHECK(cudaGraphLaunch(x, s));
      CHECK(cudaStreamSynchronize(s));
      float one = replay_ms(x, s, ea, eb, 1);
      int n = std::max(1, std::min(2000, (int)(target_ms / std::max(one, 1e-3f))));
      std::vector<double> per_step;
      for (int k = 0; k < repeats; ++k)
        per_step.push_back(1000.0 * replay_ms(x, s, ea, eb, n) / ((double)n * STEPS));
      std::sort(per_step.begin(), per_step.end());
      us[mode] = per_step[per_step.size() / 2];
      // the check: every output poisoned, one replay, the last step's sums
      CHECK(cudaMemsetAsync(b.t2r, 0xA5, sizeof(int32_t) * b.T, s));
      CHECK(cudaMemsetAsync(b.seq_out, 0xA5, sizeof(int32_t) * b.C, s));
      CHECK(cudaMemsetAsync(b.bt_out, 0xA5, sizeof(int32_t) * (size_t)b.T * b.cols, s));
      CHECK(cudaMemsetAsync(b.sum, 0xA5, sizeof(int32_t) * b.T, s));
      CHECK(cudaGraphLaunch(x, s));
      CHECK(cudaStreamSynchronize(s));
      if (!check_sums(b, mode, cc.name)) ok = false;
      CHECK(cudaGraphExecDestroy(x));
      CHECK(cudaGraphDestroy(g));
    }
    const double saved = us[MODE_PLAIN] - us[MODE_EARLY];
    const double saved_c = us[MODE_PLAIN] - us[MODE_EARLY_CONSUMER];
    best_saved = std::max(best_saved, std::max(saved, saved_c));
    worst_saved = std::min(worst_saved, std::max(saved, saved_c));
    std::printf("%-14s %8.2f %8.2f %8.2f %15.2f %9.2f %9.2f\n", cc.name, us[MODE_PAIR],
                us[MODE_PLAIN], us[MODE_EARLY], us[MODE_EARLY_CONSUMER], saved, saved_c);
    for (void *p : {(void *)b.qsl, (void *)b.seq, (void *)b.table, (void *)b.t2r,
                    (void *)b.seq_out, (void *)b.bt_out, (void *)b.dec, (void *)b.ridx,
                    (void *)b.prl, (void *)b.sum})
      CHECK(cudaFree(p));
  }
  std::printf("pair = producer + consumer alone; saved = plain - early, saved+c = plain - "
              "early+consumer (us per step)\n");
  std::printf("pdl_chain: checks %s; early start saves %.2f to %.2f us per step (best mode per "
              "case)\n",
              ok ? "PASS" : "FAIL", worst_saved, best_saved);
  attnmeta_close(ctx);
  return ok ? 0 : 1;
}
