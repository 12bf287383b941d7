// SPDX-License-Identifier: Apache-2.0
/*
 * Graph safety of the CUDA backend (contract: "every operation is safe to
 * record into a CUDA/HIP graph and replay later with different contents of
 * its input buffers").
 *
 * Over fixed device buffers, one CUDA graph is captured (global capture mode,
 * so any synchronising call inside the library breaks the capture) holding
 * the token map (attnmeta_token_to_req) and one attnmeta_build_step that
 * builds every other product: the indexer decode metadata, positions and the
 * slot mapping. Between replays only device memory changes: query_start_loc
 * is rewritten in place by a device-to-device copy (the host never passes a
 * total to the library), and every output is poisoned. After each replay all
 * outputs, and the entries that must stay unwritten, are compared with a
 * naive reference. The captured graphs are also counted: one kernel node for
 * each library call. Everything runs twice: as ordinary launches, then
 * with the step started early (ATTNMETA_LAUNCH_EARLY_START: in the graph,
 * a programmatic edge from the token map's kernel to the step's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_check.h"

#define NAME "attnmeta_gpu_graph_test"
#define R 8
#define T 64
#define C 80
#define COLS 13
#define IN_STRIDE 16
#define OUT_STRIDE 15

typedef struct variant {
  const char *name;
  int32_t qlens[R];
} variant;

/* The first is what the graph is captured with; every later one is only a
 * new content of the query_start_loc buffer. Totals stay <= T. */
static const variant variants[] = {
    {"captured_split", {1, 2, 3, 4, 5, 6, 7, 8}},
    {"same_total_reversed", {8, 7, 6, 5, 4, 3, 2, 1}},
    {"smaller_total_padding", {1, 1, 1, 1, 1, 1, 1, 1}},
    {"zero_length_inserted", {0, 5, 0, 0, 9, 1, 0, 3}},
    {"zero_length_tail", {10, 20, 0, 0, 0, 0, 0, 0}},
    {"all_padding", {0, 0, 0, 0, 0, 0, 0, 0}},
    {"total_equals_T", {8, 8, 8, 8, 8, 8, 8, 8}},
    {"captured_split_again", {1, 2, 3, 4, 5, 6, 7, 8}},
};
#define NV ((int)(sizeof variants / sizeof variants[0]))

typedef struct dcp {
  const char *name;
  int32_t world, rank, interleave;
} dcp;

static const dcp dcps[] = {{"no_dcp", 1, 0, 1}, {"dcp_w2_k1_i2", 2, 1, 2}};

/* {block, grid, stage, vector, lanes} */
typedef struct config {
  const char *name;
  attnmeta_launch_config config;
} config;

static const config configs[] = {
    {"auto", {0, 0, -1, -1, 0}},
    {"block32_grid1_stage0_vector0", {32, 1, 0, 0, 0}},
    {"block1024_grid3_stage1_vector1_lanes4", {1024, 3, 1, 1, 4}},
    {"block64_lanes1", {64, 0, -1, -1, 1}},
};

#define NCONFIGS ((int)(sizeof configs / sizeof configs[0]))

static void qsl_of(const variant *v, int32_t *qsl) {
  int r;
  qsl[0] = 0;
  for (r = 0; r < R; r++) qsl[r + 1] = qsl[r] + v->qlens[r];
}

enum { CALL_MAP = 1, CALL_STEP = 2 };

/* Captures the token map and/or the rest of the step into a new graph. */
static cudaGraph_t capture(attnmeta_context *ctx, cudaStream_t stream, const attnmeta_step *step,
                           int calls, const char *what) {
  cudaGraph_t graph = NULL;
  attnmeta_status st;
  if (!AMG_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal))) return NULL;
  if (calls & CALL_MAP) {
    st = attnmeta_token_to_req(ctx, step->query_start_loc, step->num_reqs, step->num_mapped,
                               step->num_tokens, step->token_to_req, stream);
    AMG_CHECK(st == ATTNMETA_OK, "%s: attnmeta_token_to_req under capture: %s: %s", what,
              attnmeta_status_string(st), attnmeta_last_error(ctx));
  }
  if (calls & CALL_STEP) {
    attnmeta_step rest = *step;
    rest.token_to_req = NULL;
    st = attnmeta_build_step(ctx, &rest, stream);
    AMG_CHECK(st == ATTNMETA_OK, "%s: attnmeta_build_step under capture: %s: %s", what,
              attnmeta_status_string(st), attnmeta_last_error(ctx));
  }
  AMG_CUDA(cudaStreamEndCapture(stream, &graph));
  return graph;
}

/* The graph holds exactly `want` nodes, every one a kernel node. */
static void check_kernel_nodes(cudaGraph_t graph, size_t want, const char *what) {
  size_t n = 0, i, kernels = 0;
  cudaGraphNode_t *nodes;
  if (!graph || !AMG_CUDA(cudaGraphGetNodes(graph, NULL, &n))) return;
  nodes = calloc(n ? n : 1, sizeof *nodes);
  if (!nodes) abort();
  if (AMG_CUDA(cudaGraphGetNodes(graph, nodes, &n))) {
    for (i = 0; i < n; i++) {
      enum cudaGraphNodeType type;
      if (cudaGraphNodeGetType(nodes[i], &type) == cudaSuccess && type == cudaGraphNodeTypeKernel)
        kernels++;
    }
  }
  AMG_CHECK(n == want && kernels == want,
            "%s: graph has %zu nodes, %zu of them kernels; expected %zu kernel nodes", what, n,
            kernels, want);
  free(nodes);
}

int main(void) {
  attnmeta_context *ctx;
  cudaStream_t stream;
  int d, k, v, r, col;
  ctx = amg_open_cuda_with_stream(NAME, &stream);
  if (!ctx) return amg_finish(NAME);

  for (d = 0; d < (int)(sizeof dcps / sizeof dcps[0]); d++) {
    const amg_shape shape = {R, T, C, COLS, IN_STRIDE, OUT_STRIDE, -1, 4,
                             dcps[d].world, dcps[d].rank, dcps[d].interleave};
    const amg_sizes z = amg_sizes_of(&shape);
    int32_t seq_lens[R], table[R * IN_STRIDE], all_qsl[NV * (R + 1)];
    int32_t *d_qsl, *d_variants, *d_seq, *d_table;
    amg_outputs dev = amg_device_outputs(&z), expect = amg_host_outputs(&z);

    /* Every position fits the table: seq_lens <= 44 < COLS * block_size. */
    for (r = 0; r < R; r++) {
      seq_lens[r] = 30 + 2 * r;
      for (col = 0; col < IN_STRIDE; col++)
        table[r * IN_STRIDE + col] = col < COLS ? 1000 * (r + 1) + col : -7 /* never read */;
    }
    for (v = 0; v < NV; v++) qsl_of(&variants[v], &all_qsl[v * (R + 1)]);
    d_qsl = amg_upload(all_qsl, sizeof(int32_t) * (R + 1));
    d_variants = amg_upload(all_qsl, sizeof all_qsl);
    d_seq = amg_upload(seq_lens, sizeof seq_lens);
    d_table = amg_upload(table, sizeof table);

    /* every launch config, then each again with the step started early */
    for (k = 0; k < 2 * NCONFIGS; k++) {
      const int c = k % NCONFIGS, early = k / NCONFIGS;
      attnmeta_step step = amg_step_of(&shape, d_qsl, d_seq, d_table, &dev);
      char what[160], name[80];
      cudaGraph_t graph;
      cudaGraphExec_t exec = NULL;
      attnmeta_status st = attnmeta_set_launch_config(ctx, &configs[c].config);
      if (!AMG_CHECK(st == ATTNMETA_OK, "set_launch_config %s: %s", configs[c].name,
                     attnmeta_last_error(ctx)))
        continue;
      step.launch_flags = early ? ATTNMETA_LAUNCH_EARLY_START : 0;
      snprintf(name, sizeof name, "%s%s", configs[c].name, early ? "+early_start" : "");

      snprintf(what, sizeof what, "%s/%s/token_map_only", dcps[d].name, name);
      graph = capture(ctx, stream, &step, CALL_MAP, what);
      check_kernel_nodes(graph, 1, what);
      if (graph) cudaGraphDestroy(graph);
      snprintf(what, sizeof what, "%s/%s/step_only", dcps[d].name, name);
      graph = capture(ctx, stream, &step, CALL_STEP, what);
      check_kernel_nodes(graph, 1, what);
      if (graph) cudaGraphDestroy(graph);

      snprintf(what, sizeof what, "%s/%s/token_map+step", dcps[d].name, name);
      graph = capture(ctx, stream, &step, CALL_MAP | CALL_STEP, what);
      check_kernel_nodes(graph, 2, what);
      if (!graph || !AMG_CUDA(cudaGraphInstantiate(&exec, graph, 0))) {
        if (graph) cudaGraphDestroy(graph);
        continue;
      }
      for (v = 0; v < NV; v++) {
        snprintf(what, sizeof what, "%s/%s/replay %d %s", dcps[d].name, name, v,
                 variants[v].name);
        /* The new split reaches the graph through device memory alone. */
        AMG_CUDA(cudaMemcpyAsync(d_qsl, d_variants + v * (R + 1), sizeof(int32_t) * (R + 1),
                                 cudaMemcpyDeviceToDevice, stream));
        amg_poison_async(&dev, &z, stream);
        AMG_CUDA(cudaGraphLaunch(exec, stream));
        if (!AMG_CUDA(cudaStreamSynchronize(stream))) break;
        amg_reference(&shape, &all_qsl[v * (R + 1)], seq_lens, table, &expect);
        amg_compare(what, &dev, &expect, &z);
      }
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(graph);
    }
    attnmeta_set_launch_config(ctx, NULL);
    amg_free_device_outputs(&dev);
    amg_free_host_outputs(&expect);
    cudaFree(d_qsl);
    cudaFree(d_variants);
    cudaFree(d_seq);
    cudaFree(d_table);
  }
  cudaStreamDestroy(stream);
  attnmeta_close(ctx);
  return amg_finish(NAME);
}
