// SPDX-License-Identifier: Apache-2.0
/*
 * The fused top-k example on a CUDA GPU: the selection kernel of
 * select_kernel.cuh writing global slots itself (fused) against the same
 * selection writing positions followed by attnmeta_convert_topk (two
 * launches), and the selection alone. For each shape: the outputs and
 * error words of the two pipelines are compared bit for bit, and with the
 * host reference (sorting, then attnmeta_convert_topk on the CPU
 * backend); then each pipeline is captured 50 times into a CUDA graph and
 * the graph replayed; the median replay / 50 is printed in microseconds.
 * Prints PASS or FAIL at the end; exit status 0 on PASS.
 *
 *   fused_topk_cuda [replays]
 *   fused_topk_cuda check     the comparisons only, on the three smallest
 *                             shapes (for compute-sanitizer)
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <attnmeta/attnmeta.h>

#include "problem.h"
#include "select_kernel.cuh"

namespace {

constexpr int kStepsPerGraph = 50;

#define CHECK_CUDA(call)                                                                       \
  do {                                                                                         \
    const cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                                   \
      std::printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

struct Device {
  float *scores = nullptr;
  int32_t *req_id = nullptr, *seq_lens = nullptr, *table = nullptr;
  int32_t *positions = nullptr, *slots_unfused = nullptr, *slots_fused = nullptr, *err = nullptr;
};

template <typename T>
T *upload(const T *src, size_t n) {
  T *d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, n * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(d, src, n * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

enum Pipeline { kSelectOnly, kUnfused, kFused };

/* One step of a pipeline on `stream`; the error word is the fused or the
 * unfused one (err[0], err[1]). */
bool enqueue(Pipeline which, const ft_problem &p, const Device &d, attnmeta_context *ctx, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(p.T)), block(FT_THREADS);
  if (which == kFused) {
    const attnmeta_topk op = ft_topk_op(&p, nullptr, d.req_id, d.table, d.slots_fused, d.err);
    ft_select_kernel<true><<<grid, block, 0, stream>>>(d.scores, p.L, d.seq_lens, op, d.slots_fused);
    return cudaGetLastError() == cudaSuccess;
  }
  const attnmeta_topk op = ft_topk_op(&p, d.positions, d.req_id, d.table, d.slots_unfused, d.err + 1);
  ft_select_kernel<false><<<grid, block, 0, stream>>>(d.scores, p.L, d.seq_lens, op, d.positions);
  if (cudaGetLastError() != cudaSuccess) return false;
  return which == kSelectOnly || attnmeta_convert_topk(ctx, &op, stream) == ATTNMETA_OK;
}

/* Median microseconds a step, over graphs of kStepsPerGraph steps. */
double time_pipeline(Pipeline which, const ft_problem &p, const Device &d, attnmeta_context *ctx,
                     cudaStream_t stream, int replays) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaEvent_t start, stop;
  std::vector<float> ms;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < kStepsPerGraph; i++)
    if (!enqueue(which, p, d, ctx, stream)) {
      std::printf("FAIL a launch was refused during capture: %s\n", attnmeta_last_error(ctx));
      std::exit(1);
    }
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaGraphLaunch(exec, stream)); /* warm */
  for (int r = 0; r < replays; r++) {
    float t = 0;
    CHECK_CUDA(cudaEventRecord(start, stream));
    CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  return 1000.0 * ms[ms.size() / 2] / kStepsPerGraph;
}

/* The host reference: sorting, then attnmeta_convert_topk on the CPU. */
bool reference(const ft_problem &p, attnmeta_context *cpu, std::vector<int32_t> &slots, int32_t &err) {
  std::vector<int32_t> positions(static_cast<size_t>(p.T) * p.K);
  slots.assign(positions.size(), 0);
  err = 0;
  if (!ft_reference_select(&p, positions.data())) return false;
  const attnmeta_topk op = ft_topk_op(&p, positions.data(), p.req_id, p.table, slots.data(), &err);
  return attnmeta_convert_topk(cpu, &op, nullptr) == ATTNMETA_OK;
}

}  // namespace

int main(int argc, char **argv) {
  const bool check_only = argc > 1 && std::string(argv[1]) == "check";
  const int replays = argc > 1 && !check_only ? std::max(1, std::atoi(argv[1])) : 21;
  struct Shape { int32_t T, R, L, K; };
  const Shape shapes[] = {{1, 1, 8192, 512},   {8, 8, 8192, 512},    {64, 16, 8192, 2048},
                          {256, 64, 4096, 512}, {1024, 128, 4096, 2048}, {512, 32, 8192, 2048}};
  attnmeta_context *gpu = nullptr, *cpu = nullptr;
  cudaStream_t stream;
  int failures = 0;
  if (attnmeta_open(&gpu, ATTNMETA_BACKEND_CUDA, 0) != ATTNMETA_OK ||
      attnmeta_open(&cpu, ATTNMETA_BACKEND_CPU, 0) != ATTNMETA_OK) {
    std::printf("FAIL attnmeta_open: %s\n", attnmeta_open_error());
    return 1;
  }
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("fused top-k on %s: median of %d graph replays, %d steps a graph, us a step\n",
              attnmeta_context_device_name(gpu), replays, kStepsPerGraph);
  std::printf("%6s %5s %5s %5s  %9s %14s %9s %8s  %s\n", "T", "R", "L", "K", "select", "select+convert",
              "fused", "saved", "check");
  const size_t num_shapes = check_only ? 3 : sizeof shapes / sizeof shapes[0];
  for (size_t shape = 0; shape < num_shapes; shape++) {
    const Shape &s = shapes[shape];
    ft_problem p;
    if (!ft_problem_make(&p, s.T, s.R, s.L, s.K, 7u + static_cast<uint32_t>(s.T))) {
      std::printf("FAIL out of host memory\n");
      return 1;
    }
    const size_t out_elems = static_cast<size_t>(p.T) * p.K;
    Device d;
    d.scores = upload(p.scores, static_cast<size_t>(p.T) * p.L);
    d.req_id = upload(p.req_id, p.T);
    d.seq_lens = upload(p.seq_lens, p.R);
    d.table = upload(p.table, static_cast<size_t>(p.R) * p.cols);
    CHECK_CUDA(cudaMalloc(&d.positions, out_elems * 4));
    CHECK_CUDA(cudaMalloc(&d.slots_unfused, out_elems * 4));
    CHECK_CUDA(cudaMalloc(&d.slots_fused, out_elems * 4));
    CHECK_CUDA(cudaMalloc(&d.err, 2 * 4));
    CHECK_CUDA(cudaMemset(d.slots_unfused, 0x5A, out_elems * 4));
    CHECK_CUDA(cudaMemset(d.slots_fused, 0x5A, out_elems * 4));
    CHECK_CUDA(cudaMemset(d.err, 0, 2 * 4));

    /* correctness first, on one plain run of each pipeline */
    std::vector<int32_t> want, fused(out_elems), unfused(out_elems);
    int32_t want_err = 0, errs[2] = {0, 0};
    const bool ok_launch = enqueue(kUnfused, p, d, gpu, stream) && enqueue(kFused, p, d, gpu, stream);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaMemcpy(fused.data(), d.slots_fused, out_elems * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(unfused.data(), d.slots_unfused, out_elems * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(errs, d.err, 2 * 4, cudaMemcpyDeviceToHost));
    const bool ok_ref = reference(p, cpu, want, want_err);
    size_t bad = 0;
    for (size_t i = 0; i < out_elems; i++) bad += fused[i] != unfused[i] || fused[i] != want[i];
    const bool ok = ok_launch && ok_ref && bad == 0 && errs[0] == want_err && errs[1] == want_err;
    if (!ok) {
      failures++;
      std::printf("FAIL T=%d L=%d K=%d: launches %s, reference %s, %zu slots differ, error words 0x%x 0x%x (reference 0x%x)\n",
                  p.T, p.L, p.K, ok_launch ? "ok" : "refused", ok_ref ? "ok" : "failed", bad,
                  static_cast<unsigned>(errs[0]), static_cast<unsigned>(errs[1]), static_cast<unsigned>(want_err));
    }

    const double t_select = check_only ? 0 : time_pipeline(kSelectOnly, p, d, gpu, stream, replays);
    const double t_unfused = check_only ? 0 : time_pipeline(kUnfused, p, d, gpu, stream, replays);
    const double t_fused = check_only ? 0 : time_pipeline(kFused, p, d, gpu, stream, replays);
    std::printf("%6d %5d %5d %5d  %9.2f %14.2f %9.2f %8.2f  %s\n", p.T, p.R, p.L, p.K, t_select, t_unfused,
                t_fused, t_unfused - t_fused, ok ? "equal" : "DIFFERENT");
    CHECK_CUDA(cudaFree(d.scores));
    CHECK_CUDA(cudaFree(d.req_id));
    CHECK_CUDA(cudaFree(d.seq_lens));
    CHECK_CUDA(cudaFree(d.table));
    CHECK_CUDA(cudaFree(d.positions));
    CHECK_CUDA(cudaFree(d.slots_unfused));
    CHECK_CUDA(cudaFree(d.slots_fused));
    CHECK_CUDA(cudaFree(d.err));
    ft_problem_free(&p);
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
  attnmeta_close(cpu);
  attnmeta_close(gpu);
  std::printf("%s fused top-k: %d of %zu shapes equal to the unfused pipeline and the reference\n",
              failures ? "FAIL" : "PASS", static_cast<int>(num_shapes) - failures, num_shapes);
  return failures ? 1 : 0;
}
