// SPDX-License-Identifier: Apache-2.0
/*
 * The parts of attnmeta bench and the types they share: the case table
 * (cli_bench_cases.c); one case's buffers, enqueued work and checks, picked
 * by the case's kind (cli_bench_kinds.c) from the part-1 step
 * (cli_bench_buffers.c), the DeepSeek-V4 products added to it
 * (cli_bench_dsv4.c) and the top-k conversion (cli_bench_topk.c); the
 * timing (cli_bench_timing.c), the cold figure (cli_bench_cold.c), the JSON
 * report and the tables (cli_bench_report.c); the helpers all of them use
 * (cli_bench_util.c). The entry with its options (cli_bench.c) puts them
 * together. Calls go one way only: no part calls back into one above it.
 */
#ifndef ATTNMETA_TOOLS_CLI_BENCH_PARTS_H
#define ATTNMETA_TOOLS_CLI_BENCH_PARTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attnmeta/attnmeta.h"
#include "attnmeta/attnmeta_measure.h"
#include "cli_options.h"

#define MAX_REQS 1024
#define MAX_VARIANTS 16
#define MAX_CASES 32
#define WARM_SETS 8  /* input sets rotated for the warm figure, when they fit below */
#define MAX_SETS 128 /* most input sets a case holds (the cold figure's rotation) */
#define POISON ((int32_t)0xA5A5A5A5u)
#define BENCH_STEP_OUTPUTS 6 /* token map, seq_lens_out, block_table_out, decode_lens, indices, per_req */
#define SET_BUDGET_BYTES (16u << 20) /* rotate sets while all of them fit here */

#define ANCHOR_SOURCE                                                                          \
  "design notes, performance.md: NVIDIA H200, CUDA 13.0, torch 2.11, Triton 3.6 (bench/compare.py " \
  "measures them live)"
/* Device-to-device copy bandwidth recorded with those anchors. */
#define ANCHOR_COPY_BYTES_PER_S 4.3e12

/* ---- types ---- */

typedef struct bench_case {
  const char *name;  /* short id, used by --case and in the JSON */
  const char *label; /* as in the design notes' table */
  int num_reqs;
  int qlens[MAX_REQS];
  int pad; /* graph padding tokens past the real ones */
  int cols;
  int table_cols; /* > cols: the block table is the column slice [col_offset, col_offset +
                     cols) of a table this wide (an odd stride, rows at every 16-byte offset) */
  int col_offset;
  /* > 0: a case of the top-k conversion (cli_bench_topk.c) with K =
   * topk_count, T = num_reqs decode tokens and `cols` blocks a request */
  int topk_count;
  int topk_counts; /* 1: valid_count is built too */
  int dsv4;        /* 1: a step case with the DeepSeek-V4 products too (cli_bench_dsv4.c);
                      2: with the DeepSeek-V4.1 ones (SWA groups, token slots, replay floor,
                      the indexer's compressed lengths) */
  int dcp_world;   /* > 1: the step is rank DCP_RANK of this many DCP ranks (interleave 1) */
} bench_case;

#define DCP_RANK 1 /* the rank a DCP case builds */
/* Rank DCP_RANK's share of a causal length L over W ranks, interleave 1
 * (contract section 2a); L itself when W <= 1. */
int64_t bench_dcp_local(int64_t L, int W);

/* Anchors measured on an NVIDIA H200 (CUDA 13.0, torch 2.11, Triton 3.6) and
 * recorded in the design notes' performance targets (performance.md, table
 * "Anchors, measured side by side in one run"). GPU µs = device time per
 * step in a replayed graph; host µs = eager wall time per step. bench/
 * compare.py measures the same three implementations live. */
typedef struct anchor {
  const char *name;
  double floor_us, torch_gpu_us, triton_gpu_us, torch_host_us, triton_host_us;
  int torch_launches, triton_launches;
} anchor;

typedef struct variant {
  char label[96];
  attnmeta_launch_config config;
} variant;

typedef struct case_run {
  attnmeta_context *ctx;
  const bench_case *bc;
  int R, actual, T, C, cols, nsets;
  int64_t stride; /* of the input table: bc->table_cols, or cols */
  int32_t *qsl_h, *seq_h[MAX_SETS], *table_h[MAX_SETS]; /* host copies of the inputs */
  int32_t *qsl_d[MAX_SETS], *seq_d[MAX_SETS], *table_d[MAX_SETS];
  int32_t *out_d[BENCH_STEP_OUTPUTS]; /* the part-1 outputs (cli_bench_buffers.c) */
  attnmeta_step steps[MAX_SETS];
  int next;     /* set of the next enqueued step */
  int last_set; /* set of the latest enqueued step */
  struct topk_bench *topk; /* a top-k case's buffers (cli_bench_topk.c), else NULL */
  struct dsv4_bench *dsv4; /* a DSV4 step case's extra outputs (cli_bench_dsv4.c), else NULL */
} case_run;

typedef struct options {
  attnmeta_backend kind;
  int device;
  int repeats;
  int steps;
  int sets;
  double target_ms; /* wall time one repeat aims at */
  size_t copy_bytes;
  const char *json;
  const char *only[MAX_CASES];
  int n_only;
  int warm_only; /* no cold figures */
  int64_t cold_cache_bytes; /* > 0: the cache size the cold figures defeat, instead of the
                               device's (and cold figures on the CPU backend too) */
} options;

/* The cold figure of a case: device time per step with its inputs out of
 * L2 (cli_bench_cold.c). */
typedef struct cold_result {
  int ok;
  char error[256];  /* why there is none */
  char method[128]; /* how the inputs were kept out of L2 */
  int input_sets;
  int64_t cache_bytes;
  attnmeta_stat us_per_step;
  double scrub_us; /* the subtracted scrub's own time per step, 0 with rotation */
} cold_result;

typedef struct result {
  int ok;          /* measured */
  int skipped;     /* the backend refused the launch config: not a failure */
  int checked;     /* 1 passed, 0 failed, -1 not run */
  char error[256]; /* why not measured, or the failed check */
  int nsets;
  attnmeta_graph_timing graph;
  attnmeta_eager_timing eager;
  attnmeta_copy_timing copy; /* memcpy / device copy of the same bytes (read + written) */
  cold_result cold; /* the first variant only, on a GPU */
} result;

typedef struct run_info {
  char date[32];
  const char *backend;
  const char *device_name;
  const char *targets;
  int is_gpu;
  attnmeta_empty_timing empty;
  attnmeta_copy_timing peak_copy;
  int64_t cache_bytes; /* the device's last-level cache, for the cold figures */
} run_info;

/* ---- helpers of every part (cli_bench_util.c) ---- */

/* The naive req(t): the first of the R requests whose end qsl[r + 1] is past
 * token t (a linear scan); R - 1 when none is. */
int bench_req_of(const int32_t *qsl, int R, int t);
/* 0 for ATTNMETA_OK; else prints the failed call and returns 1. */
int bench_report(attnmeta_context *ctx, attnmeta_status st, const char *what);

/* ---- the case table and the anchors (cli_bench_cases.c) ---- */

const anchor *bench_anchor_of(const char *name);
int bench_make_cases(bench_case *c);
int bench_case_tokens(const bench_case *c);
int bench_case_capacity(int num_tokens);

/* ---- one case of any kind (cli_bench_kinds.c): what the timing and the
 * report call ---- */

double bench_case_bytes(const bench_case *c);
int bench_case_setup(case_run *b, attnmeta_context *ctx, const bench_case *bc, int want_sets);
attnmeta_status bench_enqueue_step(void *user, void *stream);
int bench_poison(case_run *b);
int bench_check_outputs(case_run *b, int s, char *why, size_t why_size);
void bench_case_free(case_run *b);

/* ---- the kinds, called by cli_bench_kinds.c only ---- */

/* One kind of work a case does: its bytes, its buffers and step structs,
 * its enqueued work, the poisoning of its outputs, their check and the
 * frees. */
typedef struct bench_kind {
  double (*bytes)(const bench_case *c);
  int (*setup)(case_run *b, attnmeta_context *ctx, const bench_case *bc, int want_sets);
  attnmeta_status (*enqueue)(case_run *b, void *stream); /* NULL: the step it adds to runs it */
  int (*poison)(case_run *b);
  int (*check)(case_run *b, int s, char *why, size_t why_size);
  void (*free)(case_run *b);
} bench_kind;

extern const bench_kind bench_step_kind;  /* the part-1 step (cli_bench_buffers.c) */
extern const bench_kind bench_dsv4_kind;  /* the DeepSeek-V4 products added to it (cli_bench_dsv4.c) */
extern const bench_kind bench_topk_kind;  /* the top-k conversion (cli_bench_topk.c) */

/* ---- measurements (cli_bench_timing.c) ---- */

int bench_clampi(double v, int lo, int hi);
attnmeta_status bench_timed_copy(attnmeta_context *ctx, size_t bytes, const options *o,
    attnmeta_copy_timing *c);
void bench_run_case_variant(case_run *b, const variant *v, const options *o, result *res);

/* ---- the cold figure (cli_bench_cold.c) ---- */

/* Times the step of `bc` with its inputs out of the device's last-level
 * cache of `cache_bytes`, at the context's current launch config. */
void bench_run_cold(attnmeta_context *ctx, const bench_case *bc, const options *o,
    int64_t cache_bytes, cold_result *out);

/* ---- the JSON report and the tables (cli_bench_report.c) ---- */

int bench_write_json(FILE *f, const run_info *ri, const options *o,
    const bench_case *cases, const int *case_ids, int ncases,
    const variant *variants, int nvariants, result (*res)[MAX_CASES]);
void bench_print_gpu_table(const run_info *ri, const bench_case *cases, const int *case_ids,
    int ncases, const variant *variants, int nvariants,
    result (*res)[MAX_CASES]);
void bench_print_cpu_table(const run_info *ri, const bench_case *cases, const int *case_ids,
    int ncases, const variant *variants, int nvariants,
    result (*res)[MAX_CASES]);

#endif
