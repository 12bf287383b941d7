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
      b->seq_h[s][r] = bc->qlens[r] + 1000 + (int32_t)(bench_lcg(&seed) % 7000u);
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
    st->block_table = b->table_d[s] + (b->stride > b->cols ? b->bc->col_offset : 0);
    st->block_table_cols = b->cols;
    st->block_table_stride = b->stride;
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

static int bench_step_poison(case_run *b) {
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
static int bench_step_check(case_run *b, int s, char *why, size_t why_size) {
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
    const int r = bench_req_of(qsl, R, t);
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

const bench_kind bench_step_kind = {
    bench_step_bytes, bench_step_setup, bench_step_enqueue,
    bench_step_poison, bench_step_check, bench_step_free};
