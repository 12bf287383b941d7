// SPDX-License-Identifier: Apache-2.0
/*
 * The top-k conversion started early (attnmeta_topk.launch_flags =
 * ATTNMETA_LAUNCH_EARLY_START) in the chain it is meant for: a producer
 * kernel writes the indices, the conversion reads them, a consumer kernel
 * started early too (waiting on the device) copies the slots out. The
 * producer lets the next kernel start at once and then stalls before its
 * writes, so a conversion that read before waiting would convert the
 * poison left in the indices, and a consumer would copy poisoned slots.
 * Every run, on a stream and replayed from a captured graph, matches the
 * naive reference of conformance/generator/topk_reference.c: the short
 * body (decode rows), the counted short body and the general body (DCP,
 * compaction). Where the GPU cannot start kernels early the chain runs in
 * order and must give the same.
 */
#include <cstdio>
#include <cstring>
#include <vector>

extern "C" {
#include "gpu_check.h"
#include "topk_reference.h"
#include "../op_inputs.h"
}

#define NAME "attnmeta_gpu_topk_early_chain_test"
#define STALL_CYCLES 400000LL /* a few hundred microseconds */

// Lets the next kernel start, stalls, then copies src into dst.
__global__ void produce(const int32_t *src, int32_t *dst, int n) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  const long long t0 = clock64();
  while (clock64() - t0 < STALL_CYCLES) {
  }
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    dst[i] = src[i];
}

// Waits for the kernel ahead (the conversion), then copies its slots.
__global__ void consume(const int32_t *src, int32_t *dst, int n) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    dst[i] = src[i];
}

static cudaError_t launch_early(void (*kernel)(const int32_t *, int32_t *, int), cudaStream_t s,
                                const int32_t *src, int32_t *dst, int n) {
  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  config.gridDim = dim3(8);
  config.blockDim = dim3(256);
  config.stream = s;
  config.attrs = attr;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, src, dst, n);
}

struct chain_case {
  const char *name;
  int T, K, R, cols, bs;
  bool qsl, counts, dcp, compact;
};

static const chain_case cases[] = {
    {"rows_plain_8x512", 8, 512, 8, 600, 64, false, false, false, false},
    {"rows_counted_64x2048", 64, 2048, 16, 1100, 64, true, true, false, false},
    {"general_dcp_compact_24x300", 24, 300, 5, 40, 16, true, true, true, true},
};

struct device_bufs {
  int32_t *src, *topk, *qsl, *req, *table, *out, *counts, *copy, *err;
};

static void run_case(attnmeta_context *ctx, cudaStream_t stream, const chain_case &c,
                     uint64_t *rng) {
  const int T = c.T, K = c.K, R = c.R;
  const size_t n = (size_t)T * K;
  std::vector<int32_t> topk(n), qsl(R + 1), req(T), table((size_t)R * c.cols);
  std::vector<int32_t> expect(n), expect_counts(T), out(n), counts(T), copy(n);
  for (auto &v : table) v = amg_rand_range(rng, 0, 1 << 20);
  for (int j = 0; j <= R; j++) qsl[j] = (int32_t)((int64_t)(T - 1) * j / R); /* one pad token */
  for (int t = 0; t < T; t++) req[t] = t % R;
  for (auto &v : topk) v = amg_rand_range(rng, -20, c.bs * c.cols + 10);

  device_bufs d;
  d.src = (int32_t *)amg_upload(topk.data(), n * 4);
  d.topk = (int32_t *)amg_upload(topk.data(), n * 4);
  d.qsl = (int32_t *)amg_upload(qsl.data(), qsl.size() * 4);
  d.req = (int32_t *)amg_upload(req.data(), req.size() * 4);
  d.table = (int32_t *)amg_upload(table.data(), table.size() * 4);
  AMG_CUDA(cudaMalloc((void **)&d.out, n * 4));
  AMG_CUDA(cudaMalloc((void **)&d.counts, (size_t)T * 4));
  AMG_CUDA(cudaMalloc((void **)&d.copy, n * 4));
  AMG_CUDA(cudaMalloc((void **)&d.err, 4));

  attnmeta_topk op;
  amt_topk_rows(&op, d.topk, T, K, d.out);
  amt_topk_table(&op, c.qsl ? NULL : d.req, R, d.table, c.cols, c.bs);
  op.query_start_loc = c.qsl ? d.qsl : NULL;
  if (c.dcp) amt_topk_dcp(&op, 2, 1, 2);
  op.valid_count = c.counts ? d.counts : NULL;
  op.compact = c.compact;
  op.error_word = d.err;
  op.launch_flags = ATTNMETA_LAUNCH_EARLY_START;

  amr_topk_input in;
  memset(&in, 0, sizeof in);
  in.topk = topk.data();
  in.topk_stride = K;
  in.num_tokens = T;
  in.topk_count = K;
  in.qsl = c.qsl ? qsl.data() : NULL;
  in.req_id = c.qsl ? NULL : req.data();
  in.num_reqs = R;
  in.table = table.data();
  in.cols = c.cols;
  in.table_stride = c.cols;
  in.block_size = c.bs;
  in.stride_rows = c.bs;
  in.world = c.dcp ? 2 : 1;
  in.rank = c.dcp ? 1 : 0;
  in.interleave = c.dcp ? 2 : 1;
  in.compact = c.compact;
  int32_t flags = 0;
  amr_topk(&in, expect.data(), expect_counts.data(), &flags);

  /* the chain, on the stream (pass 0) and captured into a graph (1, 2) */
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  for (int pass = 0; pass < 3; pass++) {
    char what[160];
    snprintf(what, sizeof what, "%s %s", c.name, pass == 0 ? "stream" : "graph replay");
    /* the indices the conversion must not see, and poisoned outputs */
    AMG_CUDA(cudaMemsetAsync(d.topk, AMG_POISON_BYTE, n * 4, stream));
    AMG_CUDA(cudaMemsetAsync(d.out, AMG_POISON_BYTE, n * 4, stream));
    AMG_CUDA(cudaMemsetAsync(d.copy, AMG_POISON_BYTE, n * 4, stream));
    AMG_CUDA(cudaMemsetAsync(d.counts, AMG_POISON_BYTE, (size_t)T * 4, stream));
    AMG_CUDA(cudaMemsetAsync(d.err, 0, 4, stream));
    if (pass == 0 || pass == 1) {
      if (pass == 1 && !AMG_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal)))
        break;
      produce<<<8, 256, 0, stream>>>(d.src, d.topk, (int)n);
      AMG_CUDA(cudaGetLastError());
      attnmeta_status st = attnmeta_convert_topk(ctx, &op, stream);
      AMG_CHECK(st == ATTNMETA_OK, "%s: convert_topk: %s", what, attnmeta_last_error(ctx));
      AMG_CUDA(launch_early(consume, stream, d.out, d.copy, (int)n));
      if (pass == 1) {
        if (!AMG_CUDA(cudaStreamEndCapture(stream, &graph)) || !graph) break;
        size_t nodes = 0;
        AMG_CUDA(cudaGraphGetNodes(graph, NULL, &nodes));
        AMG_CHECK(nodes == 3, "%s: %zu graph nodes, expected 3 kernels", what, nodes);
        if (!AMG_CUDA(cudaGraphInstantiate(&exec, graph, 0))) break;
      }
    }
    if (pass >= 1) AMG_CUDA(cudaGraphLaunch(exec, stream));
    if (!AMG_CUDA(cudaStreamSynchronize(stream))) break;
    int32_t err = 0;
    AMG_CUDA(cudaMemcpy(out.data(), d.out, n * 4, cudaMemcpyDeviceToHost));
    AMG_CUDA(cudaMemcpy(copy.data(), d.copy, n * 4, cudaMemcpyDeviceToHost));
    AMG_CUDA(cudaMemcpy(counts.data(), d.counts, (size_t)T * 4, cudaMemcpyDeviceToHost));
    AMG_CUDA(cudaMemcpy(&err, d.err, 4, cudaMemcpyDeviceToHost));
    size_t bad_out = 0, bad_copy = 0, bad_counts = 0;
    for (size_t i = 0; i < n; i++) {
      bad_out += out[i] != expect[i];
      bad_copy += copy[i] != expect[i];
    }
    for (int t = 0; t < T; t++)
      bad_counts += c.counts ? counts[t] != expect_counts[t] : counts[t] != AMG_POISON32;
    AMG_CHECK(bad_out == 0, "%s: %zu of %zu slots differ from the reference", what, bad_out, n);
    AMG_CHECK(bad_copy == 0, "%s: the consumer copied %zu slots that differ", what, bad_copy);
    AMG_CHECK(bad_counts == 0, "%s: %zu counts wrong", what, bad_counts);
    AMG_CHECK(err == flags, "%s: error word 0x%x, reference 0x%x", what, (unsigned)err,
              (unsigned)flags);
  }
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  cudaFree(d.src);
  cudaFree(d.topk);
  cudaFree(d.qsl);
  cudaFree(d.req);
  cudaFree(d.table);
  cudaFree(d.out);
  cudaFree(d.counts);
  cudaFree(d.copy);
  cudaFree(d.err);
}

int main() {
  cudaStream_t stream;
  uint64_t rng = 31;
  attnmeta_context *ctx = amg_open_cuda_with_stream(NAME, &stream);
  if (!ctx) return amg_finish(NAME);
  for (const chain_case &c : cases) run_case(ctx, stream, c, &rng);
  cudaStreamDestroy(stream);
  attnmeta_close(ctx);
  return amg_finish(NAME);
}
