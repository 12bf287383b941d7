/*
 * attnmeta bench: the cases of the performance targets, each building the
 * token map AND the indexer decode metadata (seq_lens_out with capacity > T,
 * block_table_out, decode_lens, req_indices, per_req_lens) in ONE
 * attnmeta_build_step, on any backend.
 *
 * Per case: realistic inputs (KV lengths of a few thousand tokens, distinct
 * non-zero block ids), several input sets rotated when they are small (the
 * captured graph cycles through them), outputs poisoned and one step checked
 * against a naive host computation before timing, and the last step checked
 * again after it. On a GPU: device time per step from a replayed graph of 50
 * steps (median of repeats), eager host time per step, launches per step
 * from the graph's kernel nodes, the empty-kernel floors, bandwidth against
 * the measured device copy, and the ratios to the targets and to the Triton
 * anchors of the design notes. On the CPU: time per step, and bandwidth
 * against memcpy of the same bytes.
 *
 * --config "block=B,grid=G,stage=S,vector=V,lanes=L" (repeatable) times
 * several launch-config variants in one run. The table comes last; --json
 * writes everything.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnmeta/attnmeta_measure.h"
#include "cli.h"

#define MAX_REQS 1024
#define MAX_VARIANTS 16
#define MAX_CASES 16
#define MAX_SETS 8
#define POISON ((int32_t)0xA5A5A5A5u)
#define SET_BUDGET_BYTES (16u << 20) /* rotate sets while all of them fit here */

/* ---- the cases ---- */

typedef struct bench_case {
  const char *name;  /* short id, used by --case and in the JSON */
  const char *label; /* as in the design notes' table */
  int num_reqs;
  int qlens[MAX_REQS];
  int pad; /* graph padding tokens past the real ones */
  int cols;
} bench_case;

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

static const anchor anchors[] = {
    {"1x1", 0.50, 40.7, 2.75, 470, 45, 34, 2},
    {"1x4", 0.69, 42.7, 2.87, 481, 57, 34, 2},
    {"16x6", 0.70, 42.1, 4.23, 496, 42, 34, 2},
    {"16x6+17pad", 0.70, 45.6, 4.38, 487, 42, 37, 2},
    {"128x2", 0.70, 49.4, 6.42, 449, 41, 34, 2},
    {"1024x1", 0.70, 80.6, 10.09, 657, 41, 34, 2},
    {"256xmixed+31pad", 0.69, 67.5, 6.71, 765, 41, 37, 2},
    {"skewed", 0.70, 48.7, 3.48, 464, 70, 34, 2},
};
#define ANCHOR_SOURCE                                                                          \
  "design notes, performance.md: NVIDIA H200, CUDA 13.0, torch 2.11, Triton 3.6 (bench/compare.py " \
  "measures them live)"
/* Device-to-device copy bandwidth recorded with those anchors. */
#define ANCHOR_COPY_BYTES_PER_S 4.3e12

static const anchor *anchor_of(const char *name) {
  for (size_t i = 0; i < sizeof anchors / sizeof anchors[0]; ++i)
    if (strcmp(anchors[i].name, name) == 0) return &anchors[i];
  return NULL;
}

static uint32_t lcg(uint32_t *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return *seed >> 8;
}

/* The cases of the performance targets (same order as the notes). */
static int make_cases(bench_case *c) {
  int n = 0, r;
  uint32_t seed = 2024;
  memset(c, 0, sizeof(bench_case) * MAX_CASES);
  c[n] = (bench_case){"1x1", "1 x 1, 64", 1, {1}, 0, 64};
  ++n;
  c[n] = (bench_case){"1x4", "1 x 4, 64", 1, {4}, 0, 64};
  ++n;
  c[n] = (bench_case){"16x6", "16 x 6, 64", 16, {0}, 0, 64};
  for (r = 0; r < 16; ++r) c[n].qlens[r] = 6;
  ++n;
  c[n] = (bench_case){"16x6+17pad", "16 x 6 + 17 pad, 65", 16, {0}, 17, 65};
  for (r = 0; r < 16; ++r) c[n].qlens[r] = 6;
  ++n;
  c[n] = (bench_case){"128x2", "128 x 2, 2560", 128, {0}, 0, 2560};
  for (r = 0; r < 128; ++r) c[n].qlens[r] = 2;
  ++n;
  c[n] = (bench_case){"1024x1", "1024 x 1, 2560", 1024, {0}, 0, 2560};
  for (r = 0; r < 1024; ++r) c[n].qlens[r] = 1;
  ++n;
  c[n] = (bench_case){"256xmixed+31pad", "256 x mixed 0..8 + 31 pad, 512", 256, {0}, 31, 512};
  for (r = 0; r < 256; ++r) c[n].qlens[r] = (int)(lcg(&seed) % 9u);
  ++n;
  c[n] = (bench_case){"skewed", "skewed [0,257,1,0,3], 64", 5, {0, 257, 1, 0, 3}, 0, 64};
  ++n;
  return n;
}

static int case_tokens(const bench_case *c) {
  int t = 0;
  for (int r = 0; r < c->num_reqs; ++r) t += c->qlens[r];
  return t;
}

/* Capacity of the capacity-long outputs: past T, to the next multiple of 512
 * (an engine's persistent buffer is larger than the step). */
static int case_capacity(int num_tokens) { return (num_tokens / 512 + 1) * 512; }

/* Bytes one step must move at least: the block-table rows of the non-empty
 * requests read once, every output row written, and the small arrays. */
static double case_bytes(const bench_case *c) {
  const int actual = case_tokens(c), T = actual + c->pad, C = case_capacity(T);
  const int R = c->num_reqs;
  int nonempty = 0;
  for (int r = 0; r < R; ++r) nonempty += c->qlens[r] > 0;
  return 4.0 * ((double)nonempty * c->cols + (double)T * c->cols + (R + 1) + R /* inputs */
                + T + C + T + T + R /* token map, seq_out, decode_lens, indices, per_req */);
}

/* ---- variants ---- */

typedef struct variant {
  char label[96];
  attnmeta_launch_config config;
} variant;

/* Parses "block=B,grid=G,stage=S,vector=V,lanes=L" (any subset) or "default". */
static int parse_config(const char *text, variant *v) {
  char buf[256];
  char *save = NULL, *item;
  v->config = attnmeta_launch_config_default();
  snprintf(v->label, sizeof v->label, "%s", text);
  if (strcmp(text, "default") == 0 || text[0] == '\0') return 0;
  snprintf(buf, sizeof buf, "%s", text);
  for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    char *end = NULL;
    long value;
    if (!eq) return -1;
    *eq = '\0';
    value = strtol(eq + 1, &end, 10);
    if (end == eq + 1 || *end != '\0' || value < -1 || value > 1 << 20) return -1;
    if (strcmp(item, "block") == 0) v->config.block = (int)value;
    else if (strcmp(item, "grid") == 0) v->config.grid = (int)value;
    else if (strcmp(item, "stage") == 0) v->config.stage = (int)value;
    else if (strcmp(item, "vector") == 0) v->config.vector = (int)value;
    else if (strcmp(item, "lanes") == 0) v->config.lanes = (int)value;
    else return -1;
  }
  return 0;
}

/* ---- one case's buffers ---- */

typedef struct case_run {
  attnmeta_context *ctx;
  const bench_case *bc;
  int R, actual, T, C, cols, nsets;
  int32_t *qsl_h, *seq_h[MAX_SETS], *table_h[MAX_SETS]; /* host copies of the inputs */
  int32_t *qsl_d[MAX_SETS], *seq_d[MAX_SETS], *table_d[MAX_SETS];
  int32_t *map_d, *seq_out_d, *table_out_d, *decode_d, *indices_d, *per_req_d;
  attnmeta_step steps[MAX_SETS];
  int next;     /* set of the next enqueued step */
  int last_set; /* set of the latest enqueued step */
} case_run;

static attnmeta_status enqueue_step(void *user, void *stream) {
  case_run *b = (case_run *)user;
  const int s = b->next;
  b->next = (b->next + 1) % b->nsets;
  b->last_set = s;
  return attnmeta_build_step(b->ctx, &b->steps[s], stream);
}

static int report(attnmeta_context *ctx, attnmeta_status st, const char *what) {
  if (st == ATTNMETA_OK) return 0;
  fprintf(stderr, "attnmeta bench: %s: %s: %s\n", what, attnmeta_status_string(st),
          ctx ? attnmeta_last_error(ctx) : attnmeta_open_error());
  return 1;
}

static void case_free(case_run *b) {
  void *dev[] = {b->map_d, b->seq_out_d, b->table_out_d, b->decode_d, b->indices_d, b->per_req_d};
  for (size_t i = 0; i < sizeof dev / sizeof dev[0]; ++i) attnmeta_device_free(b->ctx, dev[i]);
  for (int s = 0; s < MAX_SETS; ++s) {
    attnmeta_device_free(b->ctx, b->qsl_d[s]);
    attnmeta_device_free(b->ctx, b->seq_d[s]);
    attnmeta_device_free(b->ctx, b->table_d[s]);
    free(b->seq_h[s]);
    free(b->table_h[s]);
  }
  free(b->qsl_h);
}

static int dalloc(case_run *b, int32_t **p, int64_t count) {
  return report(b->ctx, attnmeta_device_alloc(b->ctx, (size_t)(count > 0 ? count : 1) * 4, (void **)p),
                "allocate");
}

static int upload(case_run *b, int32_t *dst, const int32_t *src, int64_t count) {
  if (count <= 0) return 0;
  return report(b->ctx, attnmeta_copy_to_device(b->ctx, dst, src, (size_t)count * 4), "copy");
}

/* Builds the inputs of every set and the step structs; 0 on success. */
static int case_setup(case_run *b, attnmeta_context *ctx, const bench_case *bc, int want_sets) {
  const int R = bc->num_reqs;
  double set_bytes;
  uint32_t seed = 7u + (uint32_t)R * 31u + (uint32_t)bc->cols;
  memset(b, 0, sizeof *b);
  b->ctx = ctx;
  b->bc = bc;
  b->R = R;
  b->actual = case_tokens(bc);
  b->T = b->actual + bc->pad;
  b->C = case_capacity(b->T);
  b->cols = bc->cols;
  set_bytes = 4.0 * ((double)R * bc->cols + 2.0 * R + 1);
  if (want_sets > 0) {
    b->nsets = want_sets > MAX_SETS ? MAX_SETS : want_sets;
  } else {
    b->nsets = MAX_SETS * set_bytes <= SET_BUDGET_BYTES ? MAX_SETS : 1;
  }
  b->qsl_h = (int32_t *)malloc((size_t)(R + 1) * 4);
  if (!b->qsl_h) return 1;
  b->qsl_h[0] = 0;
  for (int r = 0; r < R; ++r) b->qsl_h[r + 1] = b->qsl_h[r] + bc->qlens[r];

  for (int s = 0; s < b->nsets; ++s) {
    b->seq_h[s] = (int32_t *)malloc((size_t)(R > 0 ? R : 1) * 4);
    b->table_h[s] = (int32_t *)malloc((size_t)(R > 0 ? R : 1) * (size_t)bc->cols * 4);
    if (!b->seq_h[s] || !b->table_h[s]) return 1;
    for (int r = 0; r < R; ++r) {
      /* KV length of a few thousand tokens, new tokens included. */
      b->seq_h[s][r] = bc->qlens[r] + 1000 + (int32_t)(lcg(&seed) % 7000u);
      /* Distinct, non-zero block ids, different in every set. */
      for (int c = 0; c < bc->cols; ++c)
        b->table_h[s][(int64_t)r * bc->cols + c] =
            1 + (int32_t)(((int64_t)s * R + r) * bc->cols + c);
    }
    if (dalloc(b, &b->qsl_d[s], R + 1) || dalloc(b, &b->seq_d[s], R) ||
        dalloc(b, &b->table_d[s], (int64_t)R * bc->cols) ||
        upload(b, b->qsl_d[s], b->qsl_h, R + 1) || upload(b, b->seq_d[s], b->seq_h[s], R) ||
        upload(b, b->table_d[s], b->table_h[s], (int64_t)R * bc->cols))
      return 1;
  }
  if (dalloc(b, &b->map_d, b->T) || dalloc(b, &b->seq_out_d, b->C) ||
      dalloc(b, &b->table_out_d, (int64_t)b->T * b->cols) || dalloc(b, &b->decode_d, b->T) ||
      dalloc(b, &b->indices_d, b->T) || dalloc(b, &b->per_req_d, R))
    return 1;

  for (int s = 0; s < b->nsets; ++s) {
    attnmeta_step *st = &b->steps[s];
    attnmeta_step_init(st);
    st->query_start_loc = b->qsl_d[s];
    st->num_reqs = R;
    st->num_tokens = b->T;
    st->capacity = b->C;
    st->seq_lens = b->seq_d[s];
    st->block_table = b->table_d[s];
    st->block_table_cols = b->cols;
    st->block_table_stride = b->cols;
    st->token_to_req = b->map_d;
    st->seq_lens_out = b->seq_out_d;
    st->block_table_out = b->table_out_d;
    st->block_table_out_stride = b->cols;
    st->decode_lens_out = b->decode_d;
    st->req_indices_out = b->indices_d;
    st->per_req_lens_out = b->per_req_d;
  }
  return 0;
}

static int poison(case_run *b) {
  const int64_t n = (int64_t)b->T * b->cols > b->C ? (int64_t)b->T * b->cols : b->C;
  int32_t *p = (int32_t *)malloc((size_t)(n > 0 ? n : 1) * 4);
  int rc;
  if (!p) return 1;
  for (int64_t i = 0; i < n; ++i) p[i] = POISON;
  rc = upload(b, b->map_d, p, b->T) || upload(b, b->seq_out_d, p, b->C) ||
       upload(b, b->table_out_d, p, (int64_t)b->T * b->cols) || upload(b, b->decode_d, p, b->T) ||
       upload(b, b->indices_d, p, b->T) || upload(b, b->per_req_d, p, b->R);
  free(p);
  return rc;
}

/* Compares the outputs with a naive computation for input set `s`. Returns
 * 0 when they agree; otherwise prints the first difference into why. */
static int check_outputs(case_run *b, int s, char *why, size_t why_size) {
  const int R = b->R, T = b->T, C = b->C, cols = b->cols, actual = b->actual;
  const int32_t *qsl = b->qsl_h;
  int32_t *map = (int32_t *)malloc((size_t)T * 4 + 4), *seq = (int32_t *)malloc((size_t)C * 4 + 4);
  int32_t *table = (int32_t *)malloc((size_t)T * (size_t)cols * 4 + 4);
  int32_t *dec = (int32_t *)malloc((size_t)T * 4 + 4), *idx = (int32_t *)malloc((size_t)T * 4 + 4);
  int32_t *per = (int32_t *)malloc((size_t)R * 4 + 4);
  int bad = 1;
  why[0] = '\0';
  if (!map || !seq || !table || !dec || !idx || !per) {
    snprintf(why, why_size, "out of host memory");
    goto out;
  }
  if ((T && attnmeta_copy_to_host(b->ctx, map, b->map_d, (size_t)T * 4)) ||
      (C && attnmeta_copy_to_host(b->ctx, seq, b->seq_out_d, (size_t)C * 4)) ||
      (T && cols && attnmeta_copy_to_host(b->ctx, table, b->table_out_d, (size_t)T * cols * 4)) ||
      (T && attnmeta_copy_to_host(b->ctx, dec, b->decode_d, (size_t)T * 4)) ||
      (T && attnmeta_copy_to_host(b->ctx, idx, b->indices_d, (size_t)T * 4)) ||
      (R && attnmeta_copy_to_host(b->ctx, per, b->per_req_d, (size_t)R * 4))) {
    snprintf(why, why_size, "copy back: %s", attnmeta_last_error(b->ctx));
    goto out;
  }
  for (int t = 0; t < T; ++t) {
    /* req(t): the first request whose end is past t (linear scan). */
    int r = R - 1;
    for (int q = 0; q < R; ++q)
      if (qsl[q + 1] > t) {
        r = q;
        break;
      }
    const int valid = t < actual;
    const int64_t qlen = (int64_t)qsl[r + 1] - qsl[r];
    int64_t want_seq = valid ? (int64_t)b->seq_h[s][r] - qlen + (t - qsl[r]) + 1 : 0;
    if (want_seq < 0) want_seq = 0;
    const int32_t want_map = valid ? r : 0;
    const int32_t want_idx = valid ? r : R + (t - actual);
    if (map[t] != want_map) {
      snprintf(why, why_size, "token_to_req[%d] = %d, want %d", t, map[t], want_map);
      goto out;
    }
    if (seq[t] != (int32_t)want_seq) {
      snprintf(why, why_size, "seq_lens_out[%d] = %d, want %lld", t, seq[t], (long long)want_seq);
      goto out;
    }
    if (dec[t] != 1) {
      snprintf(why, why_size, "decode_lens[%d] = %d, want 1", t, dec[t]);
      goto out;
    }
    if (idx[t] != want_idx) {
      snprintf(why, why_size, "req_indices[%d] = %d, want %d", t, idx[t], want_idx);
      goto out;
    }
    for (int c = 0; c < cols; ++c) {
      const int32_t want = valid ? b->table_h[s][(int64_t)r * cols + c] : 0;
      if (table[(int64_t)t * cols + c] != want) {
        snprintf(why, why_size, "block_table_out[%d][%d] = %d, want %d", t, c,
                 table[(int64_t)t * cols + c], want);
        goto out;
      }
    }
  }
  for (int t = T; t < C; ++t) {
    if (seq[t] != 0) {
      snprintf(why, why_size, "seq_lens_out[%d] (past T = %d) = %d, want 0", t, T, seq[t]);
      goto out;
    }
  }
  for (int r = 0; r < R; ++r) {
    if (per[r] != qsl[r + 1] - qsl[r]) {
      snprintf(why, why_size, "per_req_lens[%d] = %d, want %d", r, per[r], qsl[r + 1] - qsl[r]);
      goto out;
    }
  }
  bad = 0;
out:
  free(map);
  free(seq);
  free(table);
  free(dec);
  free(idx);
  free(per);
  return bad;
}

/* ---- measurements ---- */

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
} options;

typedef struct result {
  int ok;          /* measured */
  int skipped;     /* the backend refused the launch config: not a failure */
  int checked;     /* 1 passed, 0 failed, -1 not run */
  char error[256]; /* why not measured, or the failed check */
  int nsets;
  attnmeta_graph_timing graph;
  attnmeta_eager_timing eager;
  attnmeta_copy_timing copy; /* memcpy / device copy of the same bytes (read + written) */
} result;

static int clampi(double v, int lo, int hi) {
  if (!(v >= lo)) return lo; /* NaN too */
  if (v > hi) return hi;
  return (int)v;
}

/* Graph timing with the replay count sized so that a repeat lasts about
 * target_ms. */
static attnmeta_status timed_graph(attnmeta_context *ctx, attnmeta_enqueue_fn fn, void *user,
                                   const options *o, attnmeta_graph_timing *g) {
  attnmeta_status st = attnmeta_measure_graph(ctx, fn, user, o->steps, 2, 1, g);
  int steps = o->steps, replays;
  if (st != ATTNMETA_OK) return st;
  double per_step = g->us_per_step.median > 1e-3 ? g->us_per_step.median : 1e-3;
  double calls = o->target_ms * 1e3 / per_step;
  if (!g->graph && calls < steps) steps = clampi(calls, 1, steps); /* slow CPU steps */
  replays = clampi(calls / steps, 2, 100000);
  return attnmeta_measure_graph(ctx, fn, user, steps, replays, o->repeats, g);
}

static attnmeta_status timed_eager(attnmeta_context *ctx, attnmeta_enqueue_fn fn, void *user,
                                   const options *o, attnmeta_eager_timing *e) {
  attnmeta_status st = attnmeta_measure_eager(ctx, fn, user, 20, 1, e);
  if (st != ATTNMETA_OK) return st;
  double per = e->complete_us_per_step.median > 1e-3 ? e->complete_us_per_step.median : 1e-3;
  return attnmeta_measure_eager(ctx, fn, user, clampi(o->target_ms * 1e3 / per, 10, 20000),
                                o->repeats, e);
}

static attnmeta_status timed_copy(attnmeta_context *ctx, size_t bytes, const options *o,
                                  attnmeta_copy_timing *c) {
  attnmeta_status st = attnmeta_measure_copy(ctx, bytes, 2, 1, c);
  if (st != ATTNMETA_OK) return st;
  double per = c->us_per_copy.median > 1e-3 ? c->us_per_copy.median : 1e-3;
  return attnmeta_measure_copy(ctx, bytes, clampi(o->target_ms * 1e3 / per, 2, 100000),
                               o->repeats, c);
}

static void run_case_variant(case_run *b, const variant *v, const options *o, result *res) {
  char why[200];
  attnmeta_status st;
  memset(res, 0, sizeof *res);
  res->checked = -1;
  res->nsets = b->nsets;
  st = attnmeta_set_launch_config(b->ctx, &v->config);
  if (st != ATTNMETA_OK) {
    res->skipped = st == ATTNMETA_ERR_NOT_SUPPORTED;
    snprintf(res->error, sizeof res->error, "%s: %s", res->skipped ? "skipped" : "failed",
             attnmeta_last_error(b->ctx));
    return;
  }
  /* Check one step on poisoned outputs first. */
  b->next = 0;
  if (poison(b)) {
    snprintf(res->error, sizeof res->error, "poison: %s", attnmeta_last_error(b->ctx));
    return;
  }
  st = enqueue_step(b, NULL);
  if (st == ATTNMETA_OK) st = attnmeta_synchronize(b->ctx, NULL);
  if (st != ATTNMETA_OK) {
    snprintf(res->error, sizeof res->error, "build step: %s: %s", attnmeta_status_string(st),
             attnmeta_last_error(b->ctx));
    return;
  }
  if (check_outputs(b, b->last_set, why, sizeof why)) {
    res->checked = 0;
    snprintf(res->error, sizeof res->error, "check failed: %s", why);
    return;
  }
  st = timed_graph(b->ctx, enqueue_step, b, o, &res->graph);
  if (st == ATTNMETA_OK) st = timed_eager(b->ctx, enqueue_step, b, o, &res->eager);
  if (st != ATTNMETA_OK) {
    snprintf(res->error, sizeof res->error, "measure: %s: %s", attnmeta_status_string(st),
             attnmeta_last_error(b->ctx));
    return;
  }
  /* The outputs of the latest step, after all the timing, still right. */
  st = attnmeta_synchronize(b->ctx, NULL);
  if (st != ATTNMETA_OK || check_outputs(b, b->last_set, why, sizeof why)) {
    res->checked = 0;
    snprintf(res->error, sizeof res->error, "check after timing failed: %s",
             st != ATTNMETA_OK ? attnmeta_last_error(b->ctx) : why);
    return;
  }
  res->checked = 1;
  res->ok = 1;
}

/* ---- output ---- */

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    const unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

static void json_stat(FILE *f, const char *name, attnmeta_stat s, double scale) {
  fprintf(f, "\"%s\": {\"median\": %.6g, \"min\": %.6g, \"max\": %.6g}", name, s.median * scale,
          s.min * scale, s.max * scale);
}

static void json_config(FILE *f, const attnmeta_launch_config *c) {
  fprintf(f, "{\"block\": %d, \"grid\": %d, \"stage\": %d, \"vector\": %d, \"lanes\": %d}",
          c->block, c->grid, c->stage, c->vector, c->lanes);
}

typedef struct run_info {
  char date[32];
  const char *backend;
  const char *device_name;
  const char *targets;
  int is_gpu;
  attnmeta_empty_timing empty;
  attnmeta_copy_timing peak_copy;
} run_info;

static double bound_us(const run_info *ri, double bytes) {
  const double floor = ri->empty.graph_us_per_node.median;
  const double bw = ri->peak_copy.bytes_per_second.median;
  const double copy = bw > 0 ? bytes / bw * 1e6 : 0.0;
  return floor > copy ? floor : copy;
}

static int write_json(const char *path, const run_info *ri, const options *o,
                      const bench_case *cases, const int *case_ids, int ncases,
                      const variant *variants, int nvariants, result (*res)[MAX_CASES]) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 1;
  }
  fprintf(f, "{\n  \"tool\": \"attnmeta bench\",\n  \"date\": ");
  json_string(f, ri->date);
  fprintf(f, ",\n  \"library_version\": ");
  json_string(f, attnmeta_version_string());
  fprintf(f, ",\n  \"backend\": ");
  json_string(f, ri->backend);
  fprintf(f, ",\n  \"device\": %d,\n  \"device_name\": ", o->device);
  json_string(f, ri->device_name);
  fprintf(f, ",\n  \"module_targets\": ");
  json_string(f, ri->targets);
  fprintf(f, ",\n  \"repeats\": %d,\n  \"steps_per_graph\": %d,\n  \"target_ms_per_repeat\": %g,\n",
          o->repeats, o->steps, o->target_ms);
  fprintf(f, "  \"floors\": {\n    ");
  json_stat(f, "empty_graph_node_us", ri->empty.graph_us_per_node, 1.0);
  fprintf(f, ",\n    ");
  json_stat(f, "empty_launch_host_us", ri->empty.launch_host_us, 1.0);
  fprintf(f, ",\n    ");
  json_stat(f, "empty_launch_complete_us", ri->empty.launch_complete_us, 1.0);
  fprintf(f, ",\n    \"empty_timed_as_graph\": %d,\n    \"copy_bytes\": %zu,\n    ", ri->empty.graph,
          ri->peak_copy.bytes);
  json_stat(f, "copy_bytes_per_s", ri->peak_copy.bytes_per_second, 1.0);
  fprintf(f, ",\n    ");
  json_stat(f, "copy_us", ri->peak_copy.us_per_copy, 1.0);
  fprintf(f, "\n  },\n  \"anchor_source\": ");
  json_string(f, ANCHOR_SOURCE);
  fprintf(f, ",\n  \"anchor_copy_bytes_per_s\": %.6g,\n  \"variants\": [\n", ANCHOR_COPY_BYTES_PER_S);
  for (int vi = 0; vi < nvariants; ++vi) {
    fprintf(f, "    {\"label\": ");
    json_string(f, variants[vi].label);
    fprintf(f, ", \"config\": ");
    json_config(f, &variants[vi].config);
    fprintf(f, ",\n     \"cases\": [\n");
    for (int k = 0; k < ncases; ++k) {
      const bench_case *c = &cases[case_ids[k]];
      const result *r = &res[vi][k];
      const anchor *a = anchor_of(c->name);
      const int actual = case_tokens(c);
      const double bytes = case_bytes(c);
      fprintf(f, "      {\"case\": ");
      json_string(f, c->name);
      fprintf(f, ", \"label\": ");
      json_string(f, c->label);
      fprintf(f,
              ", \"num_reqs\": %d, \"actual_tokens\": %d, \"num_tokens\": %d, \"capacity\": %d, "
              "\"cols\": %d, \"bytes\": %.0f, \"input_sets\": %d, \"checked\": %d, \"ok\": %d, "
              "\"skipped\": %d",
              c->num_reqs, actual, actual + c->pad, case_capacity(actual + c->pad), c->cols, bytes,
              r->nsets, r->checked, r->ok, r->skipped);
      if (r->error[0]) {
        fprintf(f, ", \"error\": ");
        json_string(f, r->error);
      }
      if (r->ok) {
        const double gpu = r->graph.us_per_step.median;
        fprintf(f, ",\n       \"graph\": {");
        json_stat(f, "us_per_step", r->graph.us_per_step, 1.0);
        fprintf(f,
                ", \"graph_nodes\": %lld, \"kernel_nodes\": %lld, \"launches_per_step\": %.6g, "
                "\"steps_per_graph\": %d, \"replays\": %d, \"repeats\": %d, \"timed_as_graph\": %d}",
                (long long)r->graph.graph_nodes, (long long)r->graph.kernel_nodes,
                r->graph.kernel_nodes_per_step, r->graph.steps_per_graph, r->graph.replays,
                r->graph.repeats, r->graph.graph);
        fprintf(f, ",\n       \"eager\": {");
        json_stat(f, "host_us_per_step", r->eager.host_us_per_call, 1.0);
        fprintf(f, ", ");
        json_stat(f, "complete_us_per_step", r->eager.complete_us_per_step, 1.0);
        fprintf(f, ", ");
        json_stat(f, "device_us_per_step", r->eager.device_us_per_step, 1.0);
        fprintf(f, ", \"iterations\": %d}", r->eager.iterations);
        fprintf(f, ",\n       \"same_bytes_copy\": {\"bytes\": %zu, ", r->copy.bytes);
        json_stat(f, "bytes_per_s", r->copy.bytes_per_second, 1.0);
        fprintf(f, "}");
        fprintf(f, ",\n       \"achieved_bytes_per_s\": %.6g, \"ratio_to_same_bytes_copy\": %.6g",
                gpu > 0 ? bytes / (gpu * 1e-6) : 0.0,
                gpu > 0 && r->copy.bytes_per_second.median > 0
                    ? bytes / (gpu * 1e-6) / r->copy.bytes_per_second.median
                    : 0.0);
        if (ri->is_gpu) {
          fprintf(f,
                  ",\n       \"bound_us\": %.6g, "
                  "\"target_us\": %.6g, \"ratio_to_target\": %.6g, "
                  "\"ratio_host_to_empty_launch\": %.6g",
                  bound_us(ri, bytes), 1.3 * bound_us(ri, bytes),
                  gpu / (1.3 * bound_us(ri, bytes)),
                  ri->empty.launch_host_us.median > 0
                      ? r->eager.host_us_per_call.median / ri->empty.launch_host_us.median
                      : 0.0);
        }
        if (a && ri->is_gpu) {
          fprintf(f,
                  ",\n       \"anchor\": {\"floor_us\": %g, \"torch_gpu_us\": %g, "
                  "\"triton_gpu_us\": %g, \"torch_host_us\": %g, \"triton_host_us\": %g, "
                  "\"torch_launches\": %d, \"triton_launches\": %d}, \"ratio_to_triton_gpu\": "
                  "%.6g, \"ratio_to_triton_host\": %.6g",
                  a->floor_us, a->torch_gpu_us, a->triton_gpu_us, a->torch_host_us,
                  a->triton_host_us, a->torch_launches, a->triton_launches, gpu / a->triton_gpu_us,
                  r->eager.host_us_per_call.median / a->triton_host_us);
        }
      }
      fprintf(f, "}%s\n", k + 1 < ncases ? "," : "");
    }
    fprintf(f, "     ]}%s\n", vi + 1 < nvariants ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  return fclose(f) != 0;
}

static void print_gpu_table(const run_info *ri, const bench_case *cases, const int *case_ids,
                            int ncases, const variant *variants, int nvariants,
                            result (*res)[MAX_CASES]) {
  printf("\nattnmeta bench on %s (%s), library %s, %s\n", ri->backend, ri->device_name,
         attnmeta_version_string(), ri->date);
  printf("floors: empty kernel %.2f us/node in a graph, %.2f us host per eager launch; "
         "device copy %.0f GB/s (read + write, %zu-byte copies)\n",
         ri->empty.graph_us_per_node.median, ri->empty.launch_host_us.median,
         ri->peak_copy.bytes_per_second.median / 1e9, ri->peak_copy.bytes);
  printf("GPU us = device time per step, graph of 50 steps replayed (median); host us = eager "
         "issue per step;\nbound = max(empty node, bytes / copy bandwidth); /target = GPU / "
         "(1.3 x bound) (goal <= 1);\n/triton = GPU / Triton-pair anchor (goal <= 0.5); "
         "/launch = host / empty launch (goal <= 1.5)\n");
  for (int vi = 0; vi < nvariants; ++vi) {
    printf("\nvariant %s\n", variants[vi].label);
    printf("%-32s %6s %10s %8s %6s %8s %7s %8s %7s %7s %8s %7s %s\n", "case", "T", "bytes",
           "GPU us", "launch", "bound us", "/target", "triton", "/triton", "host us", "/launch",
           "GB/s", "check");
    for (int k = 0; k < ncases; ++k) {
      const bench_case *c = &cases[case_ids[k]];
      const result *r = &res[vi][k];
      const anchor *a = anchor_of(c->name);
      const double bytes = case_bytes(c);
      if (!r->ok) {
        printf("%-32s %6d %10.0f  %s\n", c->label, case_tokens(c) + c->pad, bytes, r->error);
        continue;
      }
      const double gpu = r->graph.us_per_step.median, bound = bound_us(ri, bytes);
      char tri[16] = "-", trir[16] = "-";
      if (a) {
        snprintf(tri, sizeof tri, "%.2f", a->triton_gpu_us);
        snprintf(trir, sizeof trir, "%.2f", gpu / a->triton_gpu_us);
      }
      printf("%-32s %6d %10.0f %8.2f %6.2f %8.2f %7.2f %8s %7s %7.2f %8.2f %7.0f %s\n", c->label,
             case_tokens(c) + c->pad, bytes, gpu, r->graph.kernel_nodes_per_step, bound,
             gpu / (1.3 * bound), tri, trir, r->eager.host_us_per_call.median,
             ri->empty.launch_host_us.median > 0
                 ? r->eager.host_us_per_call.median / ri->empty.launch_host_us.median
                 : 0.0,
             gpu > 0 ? bytes / (gpu * 1e-6) / 1e9 : 0.0, r->checked == 1 ? "ok" : "FAIL");
    }
  }
}

static void print_cpu_table(const run_info *ri, const bench_case *cases, const int *case_ids,
                            int ncases, const variant *variants, int nvariants,
                            result (*res)[MAX_CASES]) {
  printf("\nattnmeta bench on %s (%s), library %s, %s\n", ri->backend, ri->device_name,
         attnmeta_version_string(), ri->date);
  printf("floors: empty call %.3f us; memcpy %.1f GB/s (read + write, %zu-byte copies)\n",
         ri->empty.graph_us_per_node.median, ri->peak_copy.bytes_per_second.median / 1e9,
         ri->peak_copy.bytes);
  printf("us/step = wall time per step in a loop (median); GB/s = bytes moved per second;\n"
         "memcpy = memcpy of the same bytes (read + write); %% = step / memcpy (goal >= 50 %%)\n");
  for (int vi = 0; vi < nvariants; ++vi) {
    printf("\nvariant %s\n", variants[vi].label);
    printf("%-32s %6s %10s %9s %9s %8s %9s %6s %s\n", "case", "T", "bytes", "us/step", "min",
           "GB/s", "memcpy", "%", "check");
    for (int k = 0; k < ncases; ++k) {
      const bench_case *c = &cases[case_ids[k]];
      const result *r = &res[vi][k];
      const double bytes = case_bytes(c);
      if (!r->ok) {
        printf("%-32s %6d %10.0f  %s\n", c->label, case_tokens(c) + c->pad, bytes, r->error);
        continue;
      }
      const double us = r->graph.us_per_step.median;
      const double bw = us > 0 ? bytes / (us * 1e-6) : 0.0;
      const double mem = r->copy.bytes_per_second.median;
      printf("%-32s %6d %10.0f %9.2f %9.2f %8.2f %9.2f %5.0f%% %s\n", c->label,
             case_tokens(c) + c->pad, bytes, us, r->graph.us_per_step.min, bw / 1e9, mem / 1e9,
             mem > 0 ? 100.0 * bw / mem : 0.0, r->checked == 1 ? "ok" : "FAIL");
    }
  }
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: attnmeta bench [--backend B] [--device N] [--config SPEC]... [--case NAME]...\n"
          "                      [--repeats N] [--steps N] [--sets N] [--target-ms MS]\n"
          "                      [--copy-bytes N] [--quick] [--json FILE] [--list]\n"
          "  --config SPEC  a launch-config variant, \"block=B,grid=G,stage=S,vector=V,lanes=L\"\n"
          "                 (any subset; 0 / -1 = automatic) or \"default\"; repeatable.\n"
          "                 Without it: the default configuration only\n"
          "  --case NAME    only this case (repeatable); --list shows the names\n"
          "  --repeats N    repeats per measurement, median reported (default 7)\n"
          "  --steps N      steps captured per graph (default 50)\n"
          "  --sets N       input sets rotated (default: 8 when they fit in %u MiB, else 1)\n"
          "  --target-ms MS wall time one repeat aims at (default 20)\n"
          "  --copy-bytes N size of the copy the bandwidth floor is measured with\n"
          "                 (default 256 MiB on a GPU, 64 MiB on the CPU)\n"
          "  --quick        3 repeats, 5 ms a repeat\n"
          "  --json FILE    write every number, the date, the device and the version\n",
          SET_BUDGET_BYTES >> 20);
}

int cli_bench(int argc, char **argv) {
  options o;
  variant variants[MAX_VARIANTS];
  bench_case cases[MAX_CASES];
  int case_ids[MAX_CASES];
  static result res[MAX_VARIANTS][MAX_CASES];
  int nvariants = 0, ncases_all, ncases = 0, rc = 1, failures = 0;
  attnmeta_context *ctx = NULL;
  run_info ri;

  memset(&o, 0, sizeof o);
  o.kind = ATTNMETA_BACKEND_AUTO;
  o.repeats = 7;
  o.steps = 50;
  o.target_ms = 20.0;
  ncases_all = make_cases(cases);
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const int has = i + 1 < argc;
    if (strcmp(a, "--backend") == 0 && has) {
      if (cli_parse_backend(argv[++i], &o.kind)) {
        fprintf(stderr, "attnmeta bench: unknown backend '%s'\n", argv[i]);
        return 2;
      }
    } else if (strcmp(a, "--device") == 0 && has) {
      o.device = atoi(argv[++i]);
    } else if (strcmp(a, "--config") == 0 && has) {
      if (nvariants == MAX_VARIANTS || parse_config(argv[++i], &variants[nvariants])) {
        fprintf(stderr, "attnmeta bench: bad or too many --config '%s'\n", argv[i]);
        return 2;
      }
      ++nvariants;
    } else if (strcmp(a, "--case") == 0 && has) {
      if (o.n_only < MAX_CASES) o.only[o.n_only++] = argv[++i];
    } else if (strcmp(a, "--repeats") == 0 && has) {
      o.repeats = atoi(argv[++i]);
    } else if (strcmp(a, "--steps") == 0 && has) {
      o.steps = atoi(argv[++i]);
    } else if (strcmp(a, "--sets") == 0 && has) {
      o.sets = atoi(argv[++i]);
    } else if (strcmp(a, "--target-ms") == 0 && has) {
      o.target_ms = atof(argv[++i]);
    } else if (strcmp(a, "--copy-bytes") == 0 && has) {
      o.copy_bytes = (size_t)strtoull(argv[++i], NULL, 10);
    } else if (strcmp(a, "--quick") == 0) {
      o.repeats = 3;
      o.target_ms = 5.0;
    } else if (strcmp(a, "--json") == 0 && has) {
      o.json = argv[++i];
    } else if (strcmp(a, "--list") == 0) {
      for (int k = 0; k < ncases_all; ++k) printf("%-18s %s\n", cases[k].name, cases[k].label);
      return 0;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "attnmeta bench: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (o.repeats < 1 || o.steps < 1 || o.sets < 0 || o.sets > MAX_SETS || !(o.target_ms > 0)) {
    fprintf(stderr, "attnmeta bench: --repeats and --steps must be >= 1, --sets in [0, %d], "
                    "--target-ms > 0\n", MAX_SETS);
    return 2;
  }
  if (nvariants == 0) parse_config("default", &variants[nvariants++]);
  for (int k = 0; k < ncases_all; ++k) {
    int wanted = o.n_only == 0;
    for (int j = 0; j < o.n_only; ++j) wanted |= strcmp(o.only[j], cases[k].name) == 0;
    if (wanted) case_ids[ncases++] = k;
  }
  if (ncases == 0) {
    fprintf(stderr, "attnmeta bench: no case matches; --list shows the names\n");
    return 2;
  }

  if (report(NULL, attnmeta_open(&ctx, o.kind, o.device), "open")) return 1;
  memset(&ri, 0, sizeof ri);
  {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ri.date, sizeof ri.date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  }
  ri.backend = attnmeta_backend_name(attnmeta_context_backend(ctx));
  ri.device_name = attnmeta_context_device_name(ctx);
  ri.is_gpu = attnmeta_context_backend(ctx) != ATTNMETA_BACKEND_CPU;
  if (attnmeta_backend_targets(attnmeta_context_backend(ctx), &ri.targets) != ATTNMETA_OK)
    ri.targets = "";
  if (!o.copy_bytes) o.copy_bytes = ri.is_gpu ? (size_t)256 << 20 : (size_t)64 << 20;
  fprintf(stderr, "attnmeta bench: %s (%s), %d case(s), %d variant(s)\n", ri.backend,
          ri.device_name, ncases, nvariants);

  /* Floors, measured in this run. */
  {
    int replays;
    if (report(ctx, attnmeta_measure_empty_kernel(ctx, 50, 2, 20, 1, &ri.empty), "empty kernel"))
      goto done;
    replays = clampi(o.target_ms * 1e3 / (50.0 * (ri.empty.graph_us_per_node.median > 1e-3
                                                       ? ri.empty.graph_us_per_node.median
                                                       : 1e-3)),
                     2, 100000);
    if (report(ctx,
               attnmeta_measure_empty_kernel(
                   ctx, 50, replays,
                   clampi(o.target_ms * 1e3 / (ri.empty.launch_complete_us.median > 1e-3
                                                   ? ri.empty.launch_complete_us.median
                                                   : 1e-3),
                          10, 20000),
                   o.repeats, &ri.empty),
               "empty kernel") ||
        report(ctx, timed_copy(ctx, o.copy_bytes, &o, &ri.peak_copy), "copy bandwidth"))
      goto done;
  }

  for (int k = 0; k < ncases; ++k) {
    const bench_case *c = &cases[case_ids[k]];
    case_run b;
    attnmeta_copy_timing same;
    const double bytes = case_bytes(c);
    fprintf(stderr, "  %-32s", c->label);
    fflush(stderr);
    if (case_setup(&b, ctx, c, o.sets)) {
      for (int vi = 0; vi < nvariants; ++vi)
        snprintf(res[vi][k].error, sizeof res[vi][k].error, "setup: %s",
                 attnmeta_last_error(ctx));
      case_free(&b);
      ++failures;
      fprintf(stderr, " setup failed\n");
      continue;
    }
    memset(&same, 0, sizeof same);
    report(ctx, timed_copy(ctx, (size_t)(bytes / 2 > 4 ? bytes / 2 : 4), &o, &same),
           "same-bytes copy");
    for (int vi = 0; vi < nvariants; ++vi) {
      run_case_variant(&b, &variants[vi], &o, &res[vi][k]);
      res[vi][k].copy = same;
      if (!res[vi][k].ok && !res[vi][k].skipped) ++failures;
      fprintf(stderr, " %s", res[vi][k].ok ? "." : res[vi][k].skipped ? "-" : "x");
      fflush(stderr);
    }
    fprintf(stderr, "\n");
    attnmeta_set_launch_config(ctx, NULL);
    case_free(&b);
  }
  for (int vi = 0; vi < nvariants; ++vi)
    for (int k = 0; k < ncases; ++k)
      if (!res[vi][k].ok) fprintf(stderr, "attnmeta bench: %s, %s: %s\n", variants[vi].label,
                                  cases[case_ids[k]].label, res[vi][k].error);

  if (o.json && write_json(o.json, &ri, &o, cases, case_ids, ncases, variants, nvariants, res)) {
    fprintf(stderr, "attnmeta bench: cannot write %s\n", o.json);
    failures++;
  }
  if (ri.is_gpu) {
    print_gpu_table(&ri, cases, case_ids, ncases, variants, nvariants, res);
  } else {
    print_cpu_table(&ri, cases, case_ids, ncases, variants, nvariants, res);
  }
  rc = failures ? 1 : 0;

done:
  attnmeta_close(ctx);
  return rc;
}
