// SPDX-License-Identifier: Apache-2.0
/* attnmeta bench: the DeepSeek-V4 products of a DSV4 step case, added to
 * the part-1 step of every input set (cli_bench_buffers.c builds that):
 * the compressed slot mappings and lengths of the ratio-4 and ratio-128
 * groups, the SWA rows and lengths, and the C128A rows and lengths, all
 * over the step's block table, as bench/triton_dsv4.py sizes them. A
 * DSV4.1 case (bench_case.dsv4 == DSV41) adds the indexer's compressed
 * lengths, and builds the SWA rows of SWA_GROUPS groups (stacked tables
 * and rows) with the step's token slots and a per-request replay floor,
 * as a DeepSeek-V4.1 decode step does. Their device buffers, poisoning
 * and check against a naive host computation. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_bench_parts.h"

#define C4_RATIO 4
#define C4_BLOCK 64 /* storage block: 256 / ratio */
#define C128_RATIO 128
#define C128_BLOCK 2
#define SWA_WINDOW 128
#define SWA_BLOCK 64
#define C128A_WIDTH 8192 /* a 1M-token context / 128 */
#define DSV41 2
#define SWA_GROUPS 3        /* DSV4.1's SWA groups of a step */
#define GROUP_IDS (1 << 20) /* group g's block ids: the step table's + g x this */
#define IXL_RATIO 4

/* The outputs, each a device buffer of its element size x rows (T, C or R;
 * 'G': T rows of every SWA group) x width. A DSV4 case has no IXL_LENS. */
enum { C4_SLOTS, C128_SLOTS, C4_LENS, C128_LENS, SWA_ROWS, SWA_LENS, C128A_ROWS, C128A_LENS,
       IXL_LENS, NOUT };
static const struct {
  int elem;
  char rows;
  int width;
} outputs[NOUT] = {{8, 'C', 1}, {8, 'C', 1}, {4, 'R', 1}, {4, 'R', 1},
                   {4, 'G', SWA_WINDOW}, {4, 'C', 1}, {4, 'T', C128A_WIDTH}, {4, 'C', 1},
                   {4, 'C', 1}};

/* A DSV4.1 case's inputs besides the step's: the stacked SWA tables and
 * the replay floors of each set, and the token slots. */
struct dsv4_bench {
  void *dev[NOUT];
  int32_t *swa_tables[MAX_SETS], *floor_h[MAX_SETS], *floor_d[MAX_SETS];
  int64_t *slots_h, *slots_d;
};

static int groups_of(const bench_case *c) { return c->dsv4 == DSV41 ? SWA_GROUPS : 1; }

static int64_t output_bytes(const bench_case *c, double T, double C, double R, int o) {
  const char n = outputs[o].rows;
  const double rows = n == 'G' ? T * groups_of(c) : n == 'T' ? T : n == 'C' ? C : R;
  if (o == IXL_LENS && c->dsv4 != DSV41) return 0;
  return (int64_t)(outputs[o].elem * rows * outputs[o].width);
}

static double bench_dsv4_bytes(const bench_case *c) {
  const double T = bench_case_tokens(c) + c->pad, C = bench_case_capacity((int)T);
  double bytes = 0;
  /* every output written once (the tables' rows read are the step's) */
  for (int o = 0; o < NOUT; ++o) bytes += (double)output_bytes(c, T, C, c->num_reqs, o);
  return bytes;
}

static int64_t bytes_of(const case_run *b, int o) {
  return output_bytes(b->bc, b->T, b->C, b->R, o);
}

static void bench_dsv4_free(case_run *b) {
  struct dsv4_bench *d = b->dsv4;
  if (!d) return;
  for (int o = 0; o < NOUT; ++o) attnmeta_device_free(b->ctx, d->dev[o]);
  for (int s = 0; s < MAX_SETS; ++s) {
    attnmeta_device_free(b->ctx, d->swa_tables[s]);
    attnmeta_device_free(b->ctx, d->floor_d[s]);
    free(d->floor_h[s]);
  }
  attnmeta_device_free(b->ctx, d->slots_d);
  free(d->slots_h);
  free(d);
  b->dsv4 = NULL;
}

/* Token t's slot: none for padding and for every fifth real token (a
 * token without a KV slot), else a distinct one. */
static int64_t token_slot(const case_run *b, int t) {
  return t < b->actual && t % 5 != 3 ? 4096 + t : -1;
}

/* Request r's replay floor in set s: inside the window of its first token
 * (40 positions below it), below every window, or none, in turn. */
static int32_t replay_floor(const case_run *b, int s, int r) {
  const int32_t first = b->seq_h[s][r] - (b->qsl_h[r + 1] - b->qsl_h[r]);
  return r % 3 == 1 ? first - 40 : r % 3 == 2 ? first - 4 * SWA_WINDOW : 0;
}

static int upload_bytes(case_run *b, void *dst, const void *src, size_t bytes) {
  return bench_report(b->ctx, attnmeta_copy_to_device(b->ctx, dst, src, bytes), "copy");
}

/* The DSV4.1 inputs of every set: SWA_GROUPS tables of R x cols stacked
 * (group g's ids the step table's + g x GROUP_IDS), the floors, the slots. */
static int setup_dsv41_inputs(case_run *b, struct dsv4_bench *d) {
  const int64_t R = b->R, cols = b->cols, T = b->T;
  const int64_t per_group = R * cols > 0 ? R * cols : 1;
  int32_t *stacked = malloc((size_t)(per_group * SWA_GROUPS) * 4);
  int rc = 0;
  d->slots_h = malloc((size_t)(T > 0 ? T : 1) * 8);
  if (!stacked || !d->slots_h) {
    free(stacked);
    return 1;
  }
  for (int t = 0; t < T; ++t) d->slots_h[t] = token_slot(b, t);
  rc = bench_report(b->ctx, attnmeta_device_alloc(b->ctx, (size_t)(T > 0 ? T : 1) * 8,
                                                  (void **)&d->slots_d), "allocate") ||
       (T > 0 && upload_bytes(b, d->slots_d, d->slots_h, (size_t)T * 8));
  for (int s = 0; s < b->nsets && !rc; ++s) {
    for (int g = 0; g < SWA_GROUPS; ++g)
      for (int64_t i = 0; i < R * cols; ++i)
        stacked[g * per_group + i] = b->table_h[s][i] + g * GROUP_IDS;
    d->floor_h[s] = malloc((size_t)(R > 0 ? R : 1) * 4);
    if (!d->floor_h[s]) {
      rc = 1;
      break;
    }
    for (int r = 0; r < R; ++r) d->floor_h[s][r] = replay_floor(b, s, r);
    rc = bench_report(b->ctx, attnmeta_device_alloc(b->ctx, (size_t)(per_group * SWA_GROUPS) * 4,
                                                    (void **)&d->swa_tables[s]), "allocate") ||
         bench_report(b->ctx, attnmeta_device_alloc(b->ctx, (size_t)(R > 0 ? R : 1) * 4,
                                                    (void **)&d->floor_d[s]), "allocate") ||
         upload_bytes(b, d->swa_tables[s], stacked, (size_t)(per_group * SWA_GROUPS) * 4) ||
         (R > 0 && upload_bytes(b, d->floor_d[s], d->floor_h[s], (size_t)R * 4));
  }
  free(stacked);
  return rc;
}

/* A DSV4.1 step's settings on top of the DSV4 ones. */
static void set_dsv41(case_run *b, const struct dsv4_bench *d, int s) {
  attnmeta_step *st = &b->steps[s];
  const int64_t per_group = (int64_t)b->R * b->cols;
  st->indexer_lens_out = d->dev[IXL_LENS];
  st->indexer_ratio = IXL_RATIO;
  st->indexer_mode = ATTNMETA_INDEXER_DECODE;
  st->swa_block_table = d->swa_tables[s];
  st->swa_block_table_stride = b->cols;
  st->swa_groups = SWA_GROUPS;
  st->swa_block_table_group_stride = per_group > 0 ? per_group : 1;
  st->swa_indices_group_stride = (int64_t)(b->T > 0 ? b->T : 1) * SWA_WINDOW;
  st->swa_token_slots = d->slots_d;
  st->swa_replay_start = d->floor_d[s];
}

static int bench_dsv4_setup(case_run *b, attnmeta_context *ctx, const bench_case *bc,
                            int want_sets) {
  struct dsv4_bench *d = calloc(1, sizeof *d);
  (void)ctx; /* the step's, set up before */
  (void)want_sets;
  b->dsv4 = d;
  if (!d) return 1;
  for (int o = 0; o < NOUT; ++o) {
    const size_t bytes = (size_t)(bytes_of(b, o) > 0 ? bytes_of(b, o) : 4);
    if (bench_report(b->ctx, attnmeta_device_alloc(b->ctx, bytes, &d->dev[o]), "allocate")) return 1;
  }
  if (bc->dsv4 == DSV41 && setup_dsv41_inputs(b, d)) return 1;
  for (int s = 0; s < b->nsets; ++s) {
    attnmeta_step *st = &b->steps[s];
    attnmeta_compressed_group *g4 = &st->compressed_groups[0], *g128 = &st->compressed_groups[1];
    g4->block_table = g128->block_table = st->block_table;
    g4->block_table_cols = g128->block_table_cols = st->block_table_cols;
    g4->block_table_stride = g128->block_table_stride = st->block_table_stride;
    g4->ratio = C4_RATIO;
    g4->block_size = C4_BLOCK;
    g4->slot_mapping = d->dev[C4_SLOTS];
    g4->seq_lens_out = d->dev[C4_LENS];
    g128->ratio = C128_RATIO;
    g128->block_size = C128_BLOCK;
    g128->slot_mapping = d->dev[C128_SLOTS];
    g128->seq_lens_out = d->dev[C128_LENS];
    st->swa_block_table = st->block_table;
    st->swa_block_table_cols = st->block_table_cols;
    st->swa_block_table_stride = st->block_table_stride;
    st->swa_block_size = SWA_BLOCK;
    st->swa_window = st->swa_width = SWA_WINDOW;
    st->swa_mode = ATTNMETA_SWA_CAUSAL;
    st->swa_indices = d->dev[SWA_ROWS];
    st->swa_indices_stride = SWA_WINDOW;
    st->swa_lens = d->dev[SWA_LENS];
    st->c128a_block_table = st->block_table;
    st->c128a_block_table_cols = st->block_table_cols;
    st->c128a_block_table_stride = st->block_table_stride;
    st->c128a_ratio = C128_RATIO;
    st->c128a_block_size = C128_BLOCK;
    st->c128a_width = C128A_WIDTH;
    st->c128a_mode = ATTNMETA_C128A_GLOBAL;
    st->c128a_rows = d->dev[C128A_ROWS];
    st->c128a_rows_stride = C128A_WIDTH;
    st->c128a_lens = d->dev[C128A_LENS];
    if (bc->dsv4 == DSV41) set_dsv41(b, d, s);
  }
  return 0;
}

static int poison_buffer(case_run *b, void *dev, int64_t bytes) {
  unsigned char *p;
  int rc;
  if (bytes <= 0) return 0;
  p = malloc((size_t)bytes);
  if (!p) return 1;
  memset(p, 0xA5, (size_t)bytes); /* POISON in every int32 */
  rc = bench_report(b->ctx, attnmeta_copy_to_device(b->ctx, dev, p, (size_t)bytes), "copy");
  free(p);
  return rc;
}

static int bench_dsv4_poison(case_run *b) {
  for (int o = 0; o < NOUT; ++o)
    if (poison_buffer(b, b->dsv4->dev[o], bytes_of(b, o))) return 1;
  return 0;
}

/* The naive values, from the host copies of set s's inputs. */
typedef struct dsv4_host {
  void *out[NOUT];
} dsv4_host;
#define SLOTS(h, o) ((const int64_t *)(h)->out[o])
#define INTS(h, o) ((const int32_t *)(h)->out[o])

/* Row c's slot in blocks of bs rows over W DCP ranks (interleave 1): -1
 * when another rank owns it (contract, "Placement"). */
static int64_t placed(const int32_t *row, int64_t c, int bs, int W) {
  const int64_t vb = (int64_t)bs * (W > 1 ? W : 1), vo = c % vb;
  if (W > 1 && vo % W != DCP_RANK) return -1;
  return (int64_t)row[c / vb] * bs + (W > 1 ? vo / W : vo);
}

static int64_t compressed_slot(const int32_t *row, int64_t pos, int ratio, int bs, int W) {
  if ((pos + 1) % ratio != 0) return -1;
  return placed(row, pos / ratio, bs, W);
}

static int fetch(case_run *b, dsv4_host *h, char *why, size_t why_size) {
  for (int o = 0; o < NOUT; ++o) {
    const int64_t bytes = bytes_of(b, o);
    h->out[o] = malloc((size_t)bytes + 8);
    if (!h->out[o]) {
      snprintf(why, why_size, "out of host memory");
      return 1;
    }
    if (bytes > 0 && attnmeta_copy_to_host(b->ctx, h->out[o], b->dsv4->dev[o], (size_t)bytes)) {
      snprintf(why, why_size, "copy back: %s", attnmeta_last_error(b->ctx));
      return 1;
    }
  }
  return 0;
}

static void release(dsv4_host *h) {
  for (int o = 0; o < NOUT; ++o) free(h->out[o]);
}

/* One token's entries against the naive ones; 1 with a message when one differs. */
static int check_token(case_run *b, const dsv4_host *h, int s, int t, char *why, size_t why_size) {
  const int R = b->R, cols = b->cols, actual = b->actual;
  const int32_t *qsl = b->qsl_h;
  const int r = bench_req_of(qsl, R, t);
  const int valid = t < actual;
  const int32_t *row = b->table_h[s] + (int64_t)r * cols;
  const int64_t pos = valid ? (int64_t)b->seq_h[s][r] - (qsl[r + 1] - qsl[r]) + (t - qsl[r]) : 0;
  const int W = b->bc->dcp_world;
  const int64_t want4 = valid ? compressed_slot(row, pos, C4_RATIO, C4_BLOCK, W) : -1;
  const int64_t want128 = valid ? compressed_slot(row, pos, C128_RATIO, C128_BLOCK, W) : -1;
  const int v41 = b->bc->dsv4 == DSV41;
  const int64_t floor_r = v41 ? b->dsv4->floor_h[s][r] : 0;
  const int64_t window_start = pos - SWA_WINDOW + 1 > 0 ? pos - SWA_WINDOW + 1 : 0;
  const int64_t start = window_start > floor_r ? window_start : floor_r;
  const int slotless = v41 && b->dsv4->slots_h[t] < 0;
  const int32_t swa_len = valid && !slotless && pos + 1 > start ? (int32_t)(pos + 1 - start) : 0;
  const int32_t ixl_len = valid ? (int32_t)(bench_dcp_local(pos + 1, W) / IXL_RATIO) : 0;
  const int64_t n128 = (pos + 1) / C128_RATIO, n = n128 < C128A_WIDTH ? n128 : C128A_WIDTH;
  int32_t c128a_len = 0;
  int32_t c128a_want[C128A_WIDTH];
  for (int64_t c = 0; valid && c < n; ++c) /* this rank's rows, packed to the front */
    if (W <= 1 || (c % ((int64_t)C128_BLOCK * W)) % W == DCP_RANK)
      c128a_want[c128a_len++] = (int32_t)placed(row, c, C128_BLOCK, W);
  if (SLOTS(h, C4_SLOTS)[t] != want4 || SLOTS(h, C128_SLOTS)[t] != want128) {
    snprintf(why, why_size, "compressed slot of token %d: ratio 4 %lld (want %lld), ratio 128 "
             "%lld (want %lld)", t, (long long)SLOTS(h, C4_SLOTS)[t], (long long)want4,
             (long long)SLOTS(h, C128_SLOTS)[t], (long long)want128);
    return 1;
  }
  if (INTS(h, SWA_LENS)[t] != swa_len || INTS(h, C128A_LENS)[t] != c128a_len) {
    snprintf(why, why_size, "token %d: swa_lens %d (want %d), c128a_lens %d (want %d)", t,
             INTS(h, SWA_LENS)[t], swa_len, INTS(h, C128A_LENS)[t], c128a_len);
    return 1;
  }
  if (v41 && INTS(h, IXL_LENS)[t] != ixl_len) {
    snprintf(why, why_size, "indexer_lens[%d] = %d, want %d", t, INTS(h, IXL_LENS)[t], ixl_len);
    return 1;
  }
  for (int g = 0; g < groups_of(b->bc); ++g) {
    const int32_t *swa = INTS(h, SWA_ROWS) + ((int64_t)g * b->T + t) * SWA_WINDOW;
    for (int j = 0; j < SWA_WINDOW; ++j) {
      const int64_t q = start + j;
      const int32_t id = j < swa_len ? row[q / SWA_BLOCK] + g * GROUP_IDS : 0;
      const int32_t want = j < swa_len ? (int32_t)(id * SWA_BLOCK + q % SWA_BLOCK) : -1;
      if (swa[j] != want) {
        snprintf(why, why_size, "swa_indices[group %d][%d][%d] = %d, want %d", g, t, j, swa[j],
                 want);
        return 1;
      }
    }
  }
  for (int j = 0; j < C128A_WIDTH; ++j) {
    const int32_t want = j < c128a_len ? c128a_want[j] : -1;
    if (INTS(h, C128A_ROWS)[(int64_t)t * C128A_WIDTH + j] != want) {
      snprintf(why, why_size, "c128a_rows[%d][%d] = %d, want %d", t, j,
               INTS(h, C128A_ROWS)[(int64_t)t * C128A_WIDTH + j], want);
      return 1;
    }
  }
  return 0;
}

static int bench_dsv4_check(case_run *b, int s, char *why, size_t why_size) {
  dsv4_host h;
  int bad = 1;
  memset(&h, 0, sizeof h);
  why[0] = '\0';
  if (fetch(b, &h, why, why_size)) goto out;
  for (int t = 0; t < b->T; ++t)
    if (check_token(b, &h, s, t, why, why_size)) goto out;
  for (int t = b->T; t < b->C; ++t) {
    const int ixl = b->bc->dsv4 == DSV41 ? INTS(&h, IXL_LENS)[t] : 0;
    if (SLOTS(&h, C4_SLOTS)[t] != -1 || SLOTS(&h, C128_SLOTS)[t] != -1 ||
        INTS(&h, SWA_LENS)[t] != 0 || INTS(&h, C128A_LENS)[t] != 0 || ixl != 0) {
      snprintf(why, why_size, "entry %d past T = %d of a capacity-long DSV4 output was not "
               "cleared", t, b->T);
      goto out;
    }
  }
  for (int r = 0; r < b->R; ++r) {
    const int32_t seq = b->seq_h[s][r] > 0 ? b->seq_h[s][r] : 0;
    if (INTS(&h, C4_LENS)[r] != seq / C4_RATIO || INTS(&h, C128_LENS)[r] != seq / C128_RATIO) {
      snprintf(why, why_size, "compressed seq_lens of request %d: %d and %d, want %d and %d", r,
               INTS(&h, C4_LENS)[r], INTS(&h, C128_LENS)[r], seq / C4_RATIO, seq / C128_RATIO);
      goto out;
    }
  }
  bad = 0;
out:
  release(&h);
  return bad;
}

const bench_kind bench_dsv4_kind = {
    bench_dsv4_bytes, bench_dsv4_setup, NULL,
    bench_dsv4_poison, bench_dsv4_check, bench_dsv4_free};
