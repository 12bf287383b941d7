// SPDX-License-Identifier: Apache-2.0
/* attnmeta bench: a step case's device buffers for the part-1 products
 * (several input sets), the enqueued step, the poisoning of the outputs and
 * their check against a naive host computation. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_bench_parts.h"

/* The part-1 outputs (case_run.out_d), in the order the step names them. */
enum { OUT_MAP, OUT_SEQ, OUT_TABLE, OUT_DECODE, OUT_INDICES, OUT_PER_REQ };
_Static_assert(OUT_PER_REQ + 1 == BENCH_STEP_OUTPUTS, "an out_d slot an output");

/* The int32 entries of output o: T, C, T rows of cols, or R. */
static int64_t out_count(const case_run *b, int o) {
  switch (o) {
    case OUT_SEQ: return b->C;
    case OUT_TABLE: return (int64_t)b->T * b->cols;
    case OUT_PER_REQ: return b->R;
    default: return b->T;
  }
}

static attnmeta_status bench_step_enqueue(case_run *b, void *stream) {
  const int s = b->next;
  b->next = (b->next + 1) % b->nsets;
  b->last_set = s;
  return attnmeta_build_step(b->ctx, &b->steps[s], stream);
}

/* Bytes one step must move at least: the block-table rows of the non-empty
 * requests read once, every output row written, and the small arrays. */
static double bench_step_bytes(const bench_case *c) {
  const int actual = bench_case_tokens(c), T = actual + c->pad, C = bench_case_capacity(T);
  const int R = c->num_reqs;
  int nonempty = 0;
  for (int r = 0; r < R; ++r) nonempty += c->qlens[r] > 0;
  return 4.0 * ((double)nonempty * c->cols + (double)T * c->cols + (R + 1) + R /* inputs */
                + T + C + T + T + R /* token map, seq_out, decode_lens, indices, per_req */);
}

static void bench_step_free(case_run *b) {
  for (int o = 0; o < BENCH_STEP_OUTPUTS; ++o) attnmeta_device_free(b->ctx, b->out_d[o]);
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
  return bench_report(b->ctx, attnmeta_device_alloc(b->ctx, (size_t)(count > 0 ? count : 1) * 4, (void **)p),
                "allocate");
}

static int upload(case_run *b, int32_t *dst, const int32_t *src, int64_t count) {
  if (count <= 0) return 0;
  return bench_report(b->ctx, attnmeta_copy_to_device(b->ctx, dst, src, (size_t)count * 4), "copy");
}

/* The R x cols table of a set on the device: as it is, or as the column
 * slice [col_offset, col_offset + cols) of a table `stride` wide whose
 * other columns hold -1 (never read). */
static int upload_table(case_run *b, int32_t *dst, const int32_t *rows) {
  const int64_t R = b->R, cols = b->cols, stride = b->stride;
  int32_t *wide;
  int rc;
  if (stride == cols) return upload(b, dst, rows, R * cols);
  wide = (int32_t *)malloc((size_t)(R > 0 ? R : 1) * (size_t)stride * 4);
  if (!wide) return 1;
  for (int64_t i = 0; i < R * stride; ++i) wide[i] = -1;
  for (int64_t r = 0; r < R; ++r)
    memcpy(wide + r * stride + b->bc->col_offset, rows + r * cols, (size_t)cols * 4);
  rc = upload(b, dst, wide, R * stride);
  free(wide);
  return rc;
}

/* Builds the inputs of every set and the step structs; 0 on success. */
static int bench_step_setup(case_run *b, attnmeta_context *ctx, const bench_case *bc, int want_sets) {
  const int R = bc->num_reqs;
  double set_bytes;
  uint32_t seed = 7u + (uint32_t)R * 31u + (uint32_t)bc->cols;
  memset(b, 0, sizeof *b);
  b->ctx = ctx;
  b->bc = bc;
  b->R = R;
  b->actual = bench_case_tokens(bc);
  b->T = b->actual + bc->pad;
  b->C = bench_case_capacity(b->T);
  b->cols = bc->cols;
  b->stride = bc->table_cols > bc->cols ? bc->table_cols : bc->cols;
  set_bytes = 4.0 * ((double)R * bc->cols + 2.0 * R + 1);
  if (want_sets > 0) {
    b->nsets = want_sets > MAX_SETS ? MAX_SETS : want_sets;
  } else {
    b->nsets = WARM_SETS * set_bytes <= SET_BUDGET_BYTES ? WARM_SETS : 1;
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
      b->seq_h[s][r] = bc->qlens[r] + 1000 + (int32_t)(cli_lcg(&seed) % 7000u);
      /* Distinct, non-zero block ids, different in every set. */
      for (int c = 0; c < bc->cols; ++c)
        b->table_h[s][(int64_t)r * bc->cols + c] =
            1 + (int32_t)(((int64_t)s * R + r) * bc->cols + c);
    }
    if (dalloc(b, &b->qsl_d[s], R + 1) || dalloc(b, &b->seq_d[s], R) ||
        dalloc(b, &b->table_d[s], (int64_t)R * b->stride) ||
        upload(b, b->qsl_d[s], b->qsl_h, R + 1) || upload(b, b->seq_d[s], b->seq_h[s], R) ||
        upload_table(b, b->table_d[s], b->table_h[s]))
      return 1;
  }
  for (int o = 0; o < BENCH_STEP_OUTPUTS; ++o)
    if (dalloc(b, &b->out_d[o], out_count(b, o))) return 1;

  for (int s = 0; s < b->nsets; ++s) {
    attnmeta_step *st = &b->steps[s];
    attnmeta_step_init(st);
    st->query_start_loc = b->qsl_d[s];
    st->num_reqs = R;
    st->num_tokens = b->T;
    st->capacity = b->C;
    st->seq_lens = b->seq_d[s];
    st->block_table = b->table_d[s] + (b->stride > b->cols ? b->bc->col_offset : 0);
    st->block_table_cols = b->cols;
    st->block_table_stride = b->stride;
    st->token_to_req = b->out_d[OUT_MAP];
    st->seq_lens_out = b->out_d[OUT_SEQ];
    st->block_table_out = b->out_d[OUT_TABLE];
    st->block_table_out_stride = b->cols;
    st->decode_lens_out = b->out_d[OUT_DECODE];
    st->req_indices_out = b->out_d[OUT_INDICES];
    st->per_req_lens_out = b->out_d[OUT_PER_REQ];
    if (bc->dcp_world > 1) {
      st->dcp_world_size = bc->dcp_world;
      st->dcp_rank = DCP_RANK;
      st->dcp_interleave = 1;
    }
  }
  return 0;
}

static int bench_step_poison(case_run *b) {
  int64_t n = 1;
  int32_t *p;
  int rc = 0;
  for (int o = 0; o < BENCH_STEP_OUTPUTS; ++o) n = out_count(b, o) > n ? out_count(b, o) : n;
  p = (int32_t *)malloc((size_t)n * 4);
  if (!p) return 1;
  for (int64_t i = 0; i < n; ++i) p[i] = POISON;
  for (int o = 0; o < BENCH_STEP_OUTPUTS && !rc; ++o) rc = upload(b, b->out_d[o], p, out_count(b, o));
  free(p);
  return rc;
}

/* Compares the outputs with a naive computation for input set `s`. Returns
 * 0 when they agree; otherwise prints the first difference into why. */
static int bench_step_check(case_run *b, int s, char *why, size_t why_size) {
  const int R = b->R, T = b->T, C = b->C, cols = b->cols, actual = b->actual;
  const int32_t *qsl = b->qsl_h;
  int32_t *host[BENCH_STEP_OUTPUTS] = {NULL};
  int bad = 1;
  why[0] = '\0';
  for (int o = 0; o < BENCH_STEP_OUTPUTS; ++o) {
    const int64_t n = out_count(b, o);
    host[o] = (int32_t *)malloc((size_t)n * 4 + 4);
    if (!host[o]) {
      snprintf(why, why_size, "out of host memory");
      goto out;
    }
    if (n > 0 && attnmeta_copy_to_host(b->ctx, host[o], b->out_d[o], (size_t)n * 4)) {
      snprintf(why, why_size, "copy back: %s", attnmeta_last_error(b->ctx));
      goto out;
    }
  }
  const int32_t *map = host[OUT_MAP], *seq = host[OUT_SEQ], *table = host[OUT_TABLE],
                *dec = host[OUT_DECODE], *idx = host[OUT_INDICES], *per = host[OUT_PER_REQ];
  for (int t = 0; t < T; ++t) {
    const int r = bench_req_of(qsl, R, t);
    const int valid = t < actual;
    const int64_t qlen = (int64_t)qsl[r + 1] - qsl[r];
    int64_t want_seq = valid ? (int64_t)b->seq_h[s][r] - qlen + (t - qsl[r]) + 1 : 0;
    if (want_seq < 0) want_seq = 0;
    want_seq = bench_dcp_local(want_seq, b->bc->dcp_world);
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
  for (int o = 0; o < BENCH_STEP_OUTPUTS; ++o) free(host[o]);
  return bad;
}

const bench_kind bench_step_kind = {
    bench_step_bytes, bench_step_setup, bench_step_enqueue,
    bench_step_poison, bench_step_check, bench_step_free};
