// SPDX-License-Identifier: Apache-2.0
/*
 * Graph safety of the top-k conversion on the CUDA backend: one
 * attnmeta_convert_topk captured in global capture mode (any synchronising
 * call inside the library breaks the capture) is exactly one kernel node;
 * replays after only device memory changed (new indices and new request
 * boundaries, copied device to device; poisoned outputs) match the naive
 * reference of conformance/generator/topk_reference.c, in place and
 * compacted, at several launch shapes. Nothing past the rows' K columns is
 * written.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../op_inputs.h"
#include "gpu_check.h"
#include "topk_reference.h"

#define NAME "attnmeta_gpu_topk_graph_test"
#define R 5
#define T 24
#define K 300
#define STRIDE 304 /* topk and out rows */
#define COLS 40
#define BS 16
#define NV 3

static const attnmeta_launch_config configs[] = {
    {0, 0, -1, -1, 0}, {96, 3, -1, -1, 32}, {1024, 1, -1, 0, 256}, {64, 0, -1, -1, 5}};

int main(void) {
  static int32_t topk[NV][T * STRIDE], qsl[NV][R + 1], table[R * COLS];
  static int32_t out[T * STRIDE], expect[T * K], counts[T], expect_counts[T];
  uint64_t rng = 18;
  attnmeta_context *ctx;
  cudaStream_t stream;
  int32_t *d_topk, *d_topk_all, *d_qsl, *d_qsl_all, *d_table, *d_out, *d_counts, *d_err;
  int v, t, j, c, compact;
  /* the naive reference's view of the conversion; a replay adds its
   * indices, boundaries and mode */
  const amr_topk_input conversion = {.topk_stride = STRIDE, .num_tokens = T, .topk_count = K,
                                     .num_reqs = R, .table = table, .cols = COLS,
                                     .table_stride = COLS, .block_size = BS, .stride_rows = BS,
                                     .world = 2, .rank = 1, .interleave = 2};

  ctx = amg_open_cuda_with_stream(NAME, &stream);
  if (!ctx) return amg_finish(NAME);
  for (j = 0; j < R * COLS; j++) table[j] = amg_rand_range(&rng, 0, 100000);
  for (v = 0; v < NV; v++) {
    const int32_t total = v == 1 ? T - 7 : T; /* variant 1: padding tokens */
    for (j = 0; j <= R; j++) qsl[v][j] = (int32_t)((int64_t)total * j / R) + (v == 2 && j > 0 && j < R);
    for (t = 0; t < T; t++)
      for (j = 0; j < STRIDE; j++)
        topk[v][t * STRIDE + j] = amg_rand_range(&rng, -40, BS * COLS + 20);
  }
  d_topk = amg_upload(topk[0], sizeof topk[0]);
  d_topk_all = amg_upload(topk, sizeof topk);
  d_qsl = amg_upload(qsl[0], sizeof qsl[0]);
  d_qsl_all = amg_upload(qsl, sizeof qsl);
  d_table = amg_upload(table, sizeof table);
  AMG_CUDA(cudaMalloc((void **)&d_out, sizeof out));
  AMG_CUDA(cudaMalloc((void **)&d_counts, sizeof counts));
  AMG_CUDA(cudaMalloc((void **)&d_err, sizeof(int32_t)));

  for (c = 0; c < (int)(sizeof configs / sizeof configs[0]); c++)
    for (compact = 0; compact < 2; compact++) {
      attnmeta_topk op;
      cudaGraph_t graph = NULL;
      cudaGraphExec_t exec = NULL;
      size_t nodes = 0;
      attnmeta_status st = attnmeta_set_launch_config(ctx, &configs[c]);
      AMG_CHECK(st == ATTNMETA_OK, "config %d: %s", c, attnmeta_last_error(ctx));
      amt_topk_rows(&op, d_topk, T, K, d_out);
      op.topk_stride = op.out_stride = STRIDE;
      amt_topk_table(&op, NULL, R, d_table, COLS, BS);
      op.query_start_loc = d_qsl;
      amt_topk_dcp(&op, 2, 1, 2);
      op.valid_count = d_counts;
      op.compact = compact;
      op.error_word = d_err;
      if (!AMG_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal))) continue;
      st = attnmeta_convert_topk(ctx, &op, stream);
      AMG_CHECK(st == ATTNMETA_OK, "config %d: convert_topk under capture: %s", c,
                attnmeta_last_error(ctx));
      AMG_CUDA(cudaStreamEndCapture(stream, &graph));
      if (!graph) continue;
      AMG_CUDA(cudaGraphGetNodes(graph, NULL, &nodes));
      AMG_CHECK(nodes == 1, "config %d: %zu graph nodes, expected one kernel", c, nodes);
      if (!AMG_CUDA(cudaGraphInstantiate(&exec, graph, 0))) {
        cudaGraphDestroy(graph);
        continue;
      }
      for (v = 0; v < NV; v++) {
        amr_topk_input in = conversion;
        int32_t flags = 0, err = 0;
        int bad = 0;
        AMG_CUDA(cudaMemcpyAsync(d_topk, d_topk_all + (size_t)v * T * STRIDE, sizeof topk[0],
                                 cudaMemcpyDeviceToDevice, stream));
        AMG_CUDA(cudaMemcpyAsync(d_qsl, d_qsl_all + v * (R + 1), sizeof qsl[0],
                                 cudaMemcpyDeviceToDevice, stream));
        AMG_CUDA(cudaMemsetAsync(d_out, AMG_POISON_BYTE, sizeof out, stream));
        AMG_CUDA(cudaMemsetAsync(d_counts, AMG_POISON_BYTE, sizeof counts, stream));
        AMG_CUDA(cudaMemsetAsync(d_err, 0, sizeof(int32_t), stream));
        AMG_CUDA(cudaGraphLaunch(exec, stream));
        if (!AMG_CUDA(cudaStreamSynchronize(stream))) break;
        AMG_CUDA(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost));
        AMG_CUDA(cudaMemcpy(counts, d_counts, sizeof counts, cudaMemcpyDeviceToHost));
        AMG_CUDA(cudaMemcpy(&err, d_err, sizeof err, cudaMemcpyDeviceToHost));
        in.topk = topk[v];
        in.qsl = qsl[v];
        in.compact = compact;
        amr_topk(&in, expect, expect_counts, &flags);
        for (t = 0; t < T && !bad; t++) {
          for (j = 0; j < STRIDE && !bad; j++) {
            const int32_t want = j < K ? expect[t * K + j] : AMG_POISON32;
            bad = !AMG_CHECK(out[t * STRIDE + j] == want,
                             "config %d compact %d replay %d: out[%d][%d] = %d, expected %d", c,
                             compact, v, t, j, out[t * STRIDE + j], want);
          }
          if (!bad)
            bad = !AMG_CHECK(counts[t] == expect_counts[t],
                             "config %d compact %d replay %d: count[%d] = %d, expected %d", c,
                             compact, v, t, counts[t], expect_counts[t]);
        }
        AMG_CHECK(err == flags, "config %d compact %d replay %d: error word 0x%x, expected 0x%x",
                  c, compact, v, (unsigned)err, (unsigned)flags);
      }
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
    }
  attnmeta_set_launch_config(ctx, NULL);
  cudaFree(d_topk);
  cudaFree(d_topk_all);
  cudaFree(d_qsl);
  cudaFree(d_qsl_all);
  cudaFree(d_table);
  cudaFree(d_out);
  cudaFree(d_counts);
  cudaFree(d_err);
  cudaStreamDestroy(stream);
  attnmeta_close(ctx);
  return amg_finish(NAME);
}
