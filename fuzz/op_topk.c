// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_step's top-k operation: attnmeta_convert_topk (contract section 6)
 * on the CPU backend against the naive reference of
 * conformance/generator/topk_reference.c, through the public API only.
 *
 * The input bytes decide T, K, the strides, the request source (query
 * boundaries or req_id), the block table, block size and stride_rows, DCP
 * (W, k, I), an optional prefill workspace and token_slot, which outputs
 * are wanted (valid_count, compaction, the error word) and two launch
 * configurations, and the device data:
 *  - valid: monotone boundaries, req_id in [0, R), block ids >= 0, indices
 *    mostly inside the table;
 *  - hostile: req_id out of range, non-monotone or edge boundaries,
 *    negative and huge block ids (block x stride_rows past INT32_MAX),
 *    indices past the table (valid in prefill-workspace rows, which no
 *    table bounds), workspace indices at or past P, workspace starts that
 *    overflow, negative token slots.
 *
 * Checked on every input:
 *  - memory: every input and output is an exact-size mapping whose last
 *    byte lies flush against an inaccessible page (fz_sparse), inputs are
 *    read-only, so a read or write past an end or a write to an input
 *    faults in any build; the outputs' leading bytes in their first page
 *    and the gap columns of `out` rows are poisoned and must stay so;
 *  - the call returns OK (the host arguments are valid by construction);
 *  - the request of each token well defined (req_id, or non-decreasing
 *    boundaries): every byte of out and valid_count and the error word
 *    equal the reference's;
 *  - otherwise (non-monotone boundaries): the padding rows (t at or past
 *    the clamped qsl[R]) are all -1 with count 0, every other row is the
 *    reference's row for some request r in [0, R) or all -1 (the device
 *    search picks some request), and the error word holds only the flags
 *    top-k raises, on top of its initial value;
 *  - T = 0 writes nothing;
 *  - both launch configurations give identical bytes. The CPU backend runs
 *    one thread a block (lanes above 1 are planned only for GPUs; a config
 *    asking for more lanes is accepted and planned down to one), so the
 *    configurations vary the grid, the vector paths and the lanes asked;
 *  - in the HIP-CPU mode (fuzz_hip_cpu.h) the HIP module's kernels, at the
 *    launch shape the library plans for a GPU, give the same bytes too.
 *
 * Drawn after all of that (decode_peer): the DCP peer views. With a
 * segment S = peer_blocks >= 1 decode entries of every rank become
 * rank-major peer slots (contract 6c), checked by the same reference; the
 * rotated peer table (6d) from W gathered tables (ids inside and past S,
 * padding, INT32 extremes; owner strides of 0, interleaved, apart and far
 * apart in a sparse mapping, NULL tables where nothing is read) is checked
 * entry by entry against amr_peer_table, its gap columns poisoned, its
 * flags in the error word, also with T = 0 (the table alone).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnmeta/attnmeta.h"
#include "fuzz_hip_cpu.h"
#include "fuzz_ops.h"
#include "fuzz_util.h"
#include "topk_reference.h"

#define MAX_ELEMS 16384 /* elements of topk or out: larger rows cost time, not coverage */
#define SEARCH_LIMIT 4096 /* R x K up to which a non-monotone row's request is searched for */
#define TOPK_FLAGS                                                                         \
  (ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE | ATTNMETA_FLAG_BLOCK_ID_NEGATIVE |                    \
   ATTNMETA_FLAG_WORKSPACE_OUT_OF_RANGE | ATTNMETA_FLAG_SLOT_OUT_OF_RANGE)

typedef struct topk_case {
  int32_t T, K, R, cols, bs, stride_rows, W, k, I, P;
  int64_t topk_stride, out_stride, table_stride;
  int use_qsl, want_count, compact, want_err, use_prefill, use_slots;
  int32_t err_init;
  /* host copies of the device inputs */
  int32_t *topk, *qsl, *req_id, *table, *prefill_req, *ws;
  int64_t *token_slot;
  int64_t n_topk, n_table, n_out;
  attnmeta_launch_config cfg[2];
  /* DCP peer views (contract 6c, 6d), drawn after everything above */
  int64_t S;                      /* peer_blocks: 0 = no peer view */
  int want_peer_table, peer_tables_null, hostile_peer;
  int32_t M, w;                   /* pages of each rank's table, of each output row */
  int64_t pt_stride, pt_owner, pto_stride;
  int64_t n_peer, n_pto;          /* elements of the gathered tables' span, of the output */
} topk_case;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static void *xcalloc(int64_t n, size_t size) {
  void *p = calloc((size_t)(n > 0 ? n : 1), size);
  if (!p) fz_fail("out of memory");
  return p;
}

static int64_t pick_stride(fz_reader *rd, int64_t width) {
  switch (fz_u8(rd) % 5) {
    case 0: case 1: return width;
    case 2: return (width + 3) / 4 * 4;
    case 3: return width + fz_range(rd, 1, 7);
    default: return width + fz_range(rd, 0, 64);
  }
}

static int32_t pick_from(fz_reader *rd, const int32_t *v, size_t n) { return v[fz_u8(rd) % n]; }

FZ_NO_COVERAGE static void fill_topk(topk_case *c, fz_reader *rd, int hostile) {
  /* positions a rank-local block table of `cols` blocks covers, over W ranks */
  const int64_t span = max64((int64_t)c->cols * c->bs * c->W, 1);
  const int64_t limit = min64(span + span / 8 + 2, INT32_MAX);
  /* far past the table: only a prefill-workspace row converts such a position */
  const int64_t far = max64(limit - 1, (int64_t)1 << 24);
  int64_t t, j;
  for (t = 0; t < c->T; ++t)
    for (j = 0; j < c->topk_stride; ++j) {
      const int64_t at = t * c->topk_stride + j;
      int32_t x;
      if (at >= c->n_topk) break;
      x = j >= c->K ? -7 /* never read */
          : fz_rand(rd) % 8 == 0 ? -1
          : fz_rand(rd) % 16 == 0 ? (int32_t)fz_rand_range(rd, limit - 1, far)
                                  : (int32_t)fz_rand_range(rd, 0, limit - 1);
      if (hostile && j < c->K && fz_rand(rd) % 16 == 0)
        x = (int32_t)(fz_rand(rd) % 2 ? INT32_MAX - (int64_t)(fz_rand(rd) % 8)
                                      : INT32_MIN + (int64_t)(fz_rand(rd) % 8));
      c->topk[at] = x;
    }
}

/* The DCP peer views, drawn after every other choice (the committed seeds
 * keep their meaning): a segment S (small, at the int32 bound of peer
 * slots W x S x stride_rows, or, for a table alone, up to INT64_MAX / W so
 * that rotated ids pass INT32_MAX), the owner-local table's ids brought
 * near [0, S) (some at or past S, some negative), and the rotated table:
 * M pages a rank, a width of W x M or not, strides with gaps, the ranks'
 * tables apart, one table for all (owner stride 0), interleaved (an owner
 * stride below a table's span) or far apart (sparse, up to 2^26 entries),
 * NULL when nothing is read. */
static void decode_peer(fz_reader *rd, topk_case *c) {
  const int64_t W = c->W, sr = c->stride_rows > 0 ? c->stride_rows : c->bs;
  const int64_t slot_bound = (int64_t)INT32_MAX / W / sr; /* largest S with rows */
  int64_t i;
  if (!fz_chance(rd, 1, 2)) return;
  c->hostile_peer = fz_chance(rd, 1, 4);
  c->want_peer_table = fz_chance(rd, 1, 2);
  if (c->T > 0 && slot_bound < 1) { /* no segment fits int32 peer slots */
    c->want_peer_table = 0;
    return;
  }
  switch (fz_u8(rd) % 4) {
    case 0: case 1: c->S = fz_range(rd, 1, 64); break;
    case 2: c->S = c->T > 0 ? fz_range(rd, max64(slot_bound - 2, 1), slot_bound)
                            : fz_range(rd, 1, INT32_MAX);
            break;
    default: c->S = c->T > 0 ? fz_range(rd, 1, slot_bound) : fz_range(rd, 1, INT64_MAX / W); break;
  }
  if (c->T > 0 && c->S > slot_bound) c->S = slot_bound;
  /* ids near the segment: most inside, some at or past it, some negative */
  if (fz_chance(rd, 3, 4))
    for (i = 0; i < c->n_table; ++i) {
      const uint64_t u = fz_rand(rd) % 16;
      c->table[i] = (int32_t)(u == 0   ? -(int64_t)fz_rand_range(rd, 1, 3)
                              : u == 1 ? min64(c->S + fz_rand_range(rd, 0, 3), INT32_MAX)
                                       : fz_rand_range(rd, 0, min64(c->S - 1, INT32_MAX)));
    }
  if (!c->want_peer_table) return;
  c->M = (int32_t)fz_range(rd, 0, fz_chance(rd, 3, 4) ? 8 : 16);
  c->w = fz_chance(rd, 3, 4) ? (int32_t)(W * c->M) : (int32_t)fz_range(rd, 0, W * c->M + 3);
  c->pt_stride = pick_stride(rd, c->M);
  c->pto_stride = pick_stride(rd, c->w);
  while (c->R > 0 && c->w > 0 && ((int64_t)c->R - 1) * c->pto_stride + c->w > MAX_ELEMS)
    c->R /= 2; /* fewer requests: their request source stays in bounds */
  c->n_table = c->R > 0 && c->cols > 0 ? ((int64_t)c->R - 1) * c->table_stride + c->cols : 0;
  {
    const int64_t span = c->R > 0 && c->M > 0 ? ((int64_t)c->R - 1) * c->pt_stride + c->M : 0;
    switch (fz_u8(rd) % 6) {
      case 0: c->pt_owner = 0; break;
      case 1: case 2: c->pt_owner = span; break;
      case 3: c->pt_owner = span + fz_range(rd, 1, 64); break;
      case 4: c->pt_owner = fz_range(rd, 1, max64(span, 1)); break; /* interleaved */
      default: c->pt_owner = fz_range(rd, (int64_t)1 << 20, (int64_t)1 << 26); break;
    }
    c->n_peer = span > 0 ? (W - 1) * c->pt_owner + span : 0;
  }
  c->n_pto = c->R > 0 && c->w > 0 ? ((int64_t)c->R - 1) * c->pto_stride + c->w : 0;
  c->peer_tables_null = (c->n_peer == 0 || c->w == 0) && fz_chance(rd, 1, 2);
}

static void decode(fz_reader *rd, topk_case *c) {
  static const int32_t Ks[] = {1, 1, 2, 3, 4, 5, 7, 8, 16, 31, 64, 128, 512, 2048};
  static const int32_t tmax_of[4] = {4, 32, 256, 1024};
  static const int32_t rmax_of[4] = {1, 4, 16, 300};
  static const int32_t bss[] = {1, 1, 2, 4, 16, 64, 256, 65536};
  static const int32_t idmax_of[4] = {1000, 1 << 20, INT32_MAX / 64, INT32_MAX};
  const uint8_t mode = fz_u8(rd);
  const int hostile_req = (mode & 3) == 3;
  const int hostile_ids = ((mode >> 2) & 3) == 3;
  const int hostile_topk = ((mode >> 4) & 3) == 3;
  const int hostile_prefill = ((mode >> 6) & 3) == 3;
  int64_t i, r;

  memset(c, 0, sizeof *c);
  c->K = fz_chance(rd, 3, 4) ? pick_from(rd, Ks, sizeof Ks / sizeof Ks[0])
                             : (int32_t)fz_range(rd, 1, 300);
  c->topk_stride = pick_stride(rd, c->K);
  c->out_stride = pick_stride(rd, c->K);
  c->T = (int32_t)fz_range(rd, 0, tmax_of[fz_u8(rd) % 4]);
  while (c->T > 0 && ((int64_t)c->T - 1) * max64(c->topk_stride, c->out_stride) + c->K > MAX_ELEMS)
    c->T /= 2;
  c->n_topk = c->T > 0 ? ((int64_t)c->T - 1) * c->topk_stride + c->K : 0;
  c->n_out = c->T > 0 ? ((int64_t)c->T - 1) * c->out_stride + c->K : 0;
  c->R = (int32_t)fz_range(rd, 0, rmax_of[fz_u8(rd) % 4]);

  /* the token's request */
  c->use_qsl = fz_chance(rd, 1, 2);
  if (c->use_qsl) {
    int64_t total = 0;
    c->qsl = xcalloc((int64_t)c->R + 1, sizeof(int32_t));
    for (r = 0; r < c->R; ++r) {
      total = min64(total + fz_range(rd, 0, max64(2 * (int64_t)c->T / max64(c->R, 1), 1)), c->T);
      c->qsl[r + 1] = (int32_t)total;
    }
    if (hostile_req) {
      const int n = (int)fz_range(rd, 1, 3);
      int j;
      for (j = 0; j < n; ++j) {
        const int64_t at = fz_range(rd, 0, c->R);
        c->qsl[at] = fz_chance(rd, 1, 2) ? fz_edge32(rd) : (int32_t)fz_range(rd, -3, (int64_t)c->T + 3);
      }
    }
  } else {
    c->req_id = xcalloc(c->T, sizeof(int32_t));
    for (i = 0; i < c->T; ++i) {
      c->req_id[i] = c->R > 0 ? (int32_t)fz_rand_range(rd, 0, (int64_t)c->R - 1) : 0;
      if (hostile_req && fz_rand(rd) % 8 == 0)
        c->req_id[i] = fz_rand(rd) % 2 ? (int32_t)fz_rand_range(rd, -2, (int64_t)c->R + 1)
                                       : (fz_rand(rd) % 2 ? INT32_MIN : INT32_MAX);
    }
  }

  /* the cache geometry */
  c->bs = fz_chance(rd, 7, 8) ? pick_from(rd, bss, sizeof bss / sizeof bss[0])
                              : (int32_t)fz_range(rd, 1, INT32_MAX);
  switch (fz_u8(rd) % 6) {
    case 0: case 1: case 2: c->stride_rows = 0; break; /* block_size */
    case 3: c->stride_rows = c->bs; break;
    case 4: c->stride_rows = (int32_t)min64((int64_t)c->bs + fz_range(rd, 1, 64), INT32_MAX); break;
    default: c->stride_rows = (int32_t)fz_range(rd, 1, INT32_MAX); break;
  }
  c->W = fz_u8(rd) < 192 ? 1 : (int32_t)fz_range(rd, 2, 8);
  c->k = (int32_t)fz_range(rd, 0, (int64_t)c->W - 1);
  c->I = fz_u8(rd) < 192 ? 1 : (int32_t)fz_range(rd, 1, 64);
  c->cols = (int32_t)fz_range(rd, 0, fz_chance(rd, 3, 4) ? 16 : 512);
  c->table_stride = pick_stride(rd, c->cols);
  while (c->R > 0 && c->cols > 0 && ((int64_t)c->R - 1) * c->table_stride + c->cols > MAX_ELEMS)
    c->table_stride = c->cols = c->cols / 2;
  c->n_table = c->R > 0 && c->cols > 0 ? ((int64_t)c->R - 1) * c->table_stride + c->cols : 0;
  c->table = xcalloc(c->n_table, sizeof(int32_t));
  {
    const int64_t idmax = idmax_of[fz_u8(rd) % 4];
    for (i = 0; i < c->n_table; ++i) {
      c->table[i] = (int32_t)fz_rand_range(rd, 0, idmax);
      if (hostile_ids && fz_rand(rd) % 8 == 0)
        c->table[i] = fz_rand(rd) % 2 ? -(int32_t)fz_rand_range(rd, 1, 3) : INT32_MAX;
    }
  }
  c->topk = xcalloc(c->n_topk, sizeof(int32_t));
  fill_topk(c, rd, hostile_topk);

  /* the prefill workspace and token slots */
  c->use_prefill = fz_chance(rd, 1, 4);
  if (c->use_prefill) {
    c->P = (int32_t)fz_range(rd, 0, 4);
    c->prefill_req = xcalloc(c->T, sizeof(int32_t));
    c->ws = xcalloc(c->P, sizeof(int32_t));
    for (i = 0; i < c->T; ++i) {
      c->prefill_req[i] = fz_rand(rd) % 2 || c->P == 0 ? -1 : (int32_t)fz_rand_range(rd, 0, (int64_t)c->P - 1);
      if (hostile_prefill && fz_rand(rd) % 4 == 0)
        c->prefill_req[i] = fz_rand(rd) % 2 ? c->P + (int32_t)fz_rand_range(rd, 0, 2) : INT32_MAX;
    }
    for (i = 0; i < c->P; ++i) {
      c->ws[i] = (int32_t)fz_rand_range(rd, 0, 1 << 24);
      if (hostile_prefill && fz_rand(rd) % 2) c->ws[i] = fz_rand(rd) % 2 ? INT32_MAX - 3 : INT32_MIN;
    }
  }
  c->use_slots = fz_chance(rd, 1, 4);
  if (c->use_slots) {
    c->token_slot = xcalloc(c->T, sizeof(int64_t));
    for (i = 0; i < c->T; ++i)
      c->token_slot[i] = fz_rand(rd) % 4 == 0 ? -(int64_t)fz_rand_range(rd, 1, 2)
                         : fz_rand(rd) % 16 == 0 ? INT64_MIN
                                                 : fz_rand_range(rd, 0, INT32_MAX);
  }

  /* outputs and launches */
  c->want_count = fz_chance(rd, 1, 2);
  c->compact = c->want_count && fz_chance(rd, 1, 2);
  c->want_err = fz_chance(rd, 3, 4);
  c->err_init = fz_chance(rd, 1, 4) ? fz_edge32(rd) : 0;
  for (i = 0; i < 2; ++i) {
    attnmeta_launch_config *g = &c->cfg[i];
    const uint8_t b = fz_u8(rd);
    *g = attnmeta_launch_config_default();
    g->block = (int)fz_range(rd, 0, 1);
    /* forced grids up to INT32_MAX: the CPU backend runs only the blocks with rows */
    g->grid = b < 128   ? 0
              : b < 224 ? (int)fz_range(rd, 1, 8)
              : b < 248 ? (int)fz_range(rd, 9, 4096)
                        : (fz_chance(rd, 1, 2) ? INT32_MAX : (int)fz_range(rd, 4097, INT32_MAX));
    g->vector = (int)fz_range(rd, -1, 1);
    g->lanes = fz_chance(rd, 1, 2) ? 0 : (int)fz_range(rd, 1, 256);
  }
  decode_peer(rd, c);
}

static void case_free(topk_case *c) {
  void *const owned[] = {c->topk, c->qsl, c->req_id, c->table, c->prefill_req, c->ws,
                         c->token_slot};
  size_t i;
  for (i = 0; i < sizeof owned / sizeof owned[0]; ++i) free(owned[i]);
}

/* ---- device buffers: exact size, flush against an inaccessible page ---- */

static void in_map(fz_sparse *s, const void *src, int64_t bytes) {
  if (!fz_sparse_alloc(s, (size_t)bytes)) fz_fail("cannot map %lld bytes", (long long)bytes);
  if (bytes > 0) memcpy(s->data, src, (size_t)bytes);
  fz_sparse_freeze(s);
}

/* The accessible part of the mapping, every byte poisoned. */
static unsigned char *body_begin(const fz_sparse *s) {
  return s->map + (size_t)sysconf(_SC_PAGESIZE);
}

static void out_map(fz_sparse *s, int64_t bytes) {
  if (!fz_sparse_alloc(s, (size_t)bytes)) fz_fail("cannot map %lld bytes", (long long)bytes);
  if (bytes > 0) memset(body_begin(s), FZ_POISON_BYTE, (size_t)(s->data + s->bytes - body_begin(s)));
}

FZ_NO_COVERAGE static int lead_poisoned(const fz_sparse *s) {
  const unsigned char *p;
  if (!s->bytes) return 1;
  for (p = body_begin(s); p < s->data; ++p)
    if (*p != FZ_POISON_BYTE) return 0;
  return 1;
}

typedef struct devices {
  fz_sparse topk, req, table, prefill, ws, slots, peer;
  fz_sparse out, count, err, pto;
} devices;

/* The gathered tables: rank o's row r at o * owner stride + r * stride,
 * written entry by entry into a sparse mapping (ranks far apart cost only
 * the pages they touch), then read-only. Interleaved ranks overwrite each
 * other's entries: the reference reads the same bytes. */
FZ_NO_COVERAGE static void peer_map(fz_sparse *m, topk_case *c, fz_reader *rd) {
  int64_t o, r, p;
  if (!fz_sparse_alloc(m, (size_t)c->n_peer * 4)) fz_fail("cannot map %lld peer entries",
                                                          (long long)c->n_peer);
  for (o = 0; o < c->W && c->n_peer > 0; ++o)
    for (r = 0; r < c->R; ++r)
      for (p = 0; p < c->M; ++p) {
        const uint64_t u = fz_rand(rd) % 16;
        int64_t id = u < 2 ? -(int64_t)fz_rand_range(rd, 1, 2)       /* padding */
                     : u == 2 ? min64(c->S + fz_rand_range(rd, 0, 2), INT32_MAX) /* past S */
                              : fz_rand_range(rd, 0, min64(c->S - 1, INT32_MAX));
        if (c->hostile_peer && u == 3) id = fz_rand(rd) % 2 ? INT32_MAX : INT32_MIN;
        ((int32_t *)(void *)m->data)[o * c->pt_owner + r * c->pt_stride + p] = (int32_t)id;
      }
  fz_sparse_freeze(m);
}

static void inputs_map(devices *d, topk_case *c, fz_reader *rd) {
  if (c->want_peer_table) peer_map(&d->peer, c, rd);
  in_map(&d->topk, c->topk, c->n_topk * 4);
  if (c->use_qsl) in_map(&d->req, c->qsl, ((int64_t)c->R + 1) * 4);
  else in_map(&d->req, c->req_id, (int64_t)c->T * 4);
  in_map(&d->table, c->table, c->n_table * 4);
  if (c->use_prefill) {
    in_map(&d->prefill, c->prefill_req, (int64_t)c->T * 4);
    in_map(&d->ws, c->ws, (int64_t)c->P * 4);
  }
  if (c->use_slots) in_map(&d->slots, c->token_slot, (int64_t)c->T * 8);
}

static void outputs_map(devices *d, const topk_case *c) {
  out_map(&d->out, c->n_out * 4);
  out_map(&d->count, c->want_count ? (int64_t)c->T * 4 : 0);
  out_map(&d->err, 4);
  *(int32_t *)(void *)d->err.data = c->err_init;
  out_map(&d->pto, c->want_peer_table ? c->n_pto * 4 : 0);
}

static void outputs_unmap(devices *d) {
  fz_sparse_free(&d->out);
  fz_sparse_free(&d->count);
  fz_sparse_free(&d->err);
  fz_sparse_free(&d->pto);
}

static void inputs_unmap(devices *d) {
  fz_sparse_free(&d->topk);
  fz_sparse_free(&d->req);
  fz_sparse_free(&d->table);
  fz_sparse_free(&d->prefill);
  fz_sparse_free(&d->ws);
  fz_sparse_free(&d->slots);
  fz_sparse_free(&d->peer);
}

/* d's inputs with fresh outputs, mapped into `outs` (unmapped first). */
static devices fresh_outputs(const devices *d, devices *outs, const topk_case *c) {
  devices r = *d;
  outputs_unmap(outs);
  outputs_map(outs, c);
  r.out = outs->out;
  r.count = outs->count;
  r.err = outs->err;
  r.pto = outs->pto;
  return r;
}

static int same_outputs(const devices *x, const devices *y) {
  return memcmp(x->out.data, y->out.data, x->out.bytes) == 0 &&
         memcmp(x->count.data, y->count.data, x->count.bytes) == 0 &&
         memcmp(x->err.data, y->err.data, 4) == 0 &&
         memcmp(x->pto.data, y->pto.data, x->pto.bytes) == 0;
}

static void run(attnmeta_context *ctx, const topk_case *c, const devices *d,
                const attnmeta_launch_config *config) {
  attnmeta_topk op;
  attnmeta_status st;
  attnmeta_topk_init(&op);
  op.topk = (const int32_t *)(const void *)d->topk.data;
  op.topk_stride = c->topk_stride;
  op.num_tokens = c->T;
  op.topk_count = c->K;
  if (c->use_qsl) op.query_start_loc = (const int32_t *)(const void *)d->req.data;
  else op.req_id = (const int32_t *)(const void *)d->req.data;
  op.num_reqs = c->R;
  op.block_table = c->cols > 0 ? (const int32_t *)(const void *)d->table.data : NULL;
  op.block_table_cols = c->cols;
  op.block_table_stride = c->table_stride;
  op.block_size = c->bs;
  op.stride_rows = c->stride_rows;
  op.dcp_world_size = c->W;
  op.dcp_rank = c->k;
  op.dcp_interleave = c->I;
  if (c->use_prefill) {
    op.prefill_req = (const int32_t *)(const void *)d->prefill.data;
    op.workspace_starts = (const int32_t *)(const void *)d->ws.data;
    op.num_prefill = c->P;
  }
  if (c->use_slots) op.token_slot = (const int64_t *)(const void *)d->slots.data;
  op.out = (int32_t *)(void *)d->out.data;
  op.out_stride = c->out_stride;
  op.valid_count = c->want_count ? (int32_t *)(void *)d->count.data : NULL;
  op.compact = c->compact;
  op.error_word = c->want_err ? (int32_t *)(void *)d->err.data : NULL;
  op.peer_blocks = c->S;
  if (c->want_peer_table) {
    op.peer_tables = c->peer_tables_null ? NULL : (const int32_t *)(const void *)d->peer.data;
    op.peer_tables_stride = c->pt_stride;
    op.peer_tables_owner_stride = c->pt_owner;
    op.peer_tables_cols = c->M;
    op.peer_table_width = c->w;
    op.peer_table_out = (int32_t *)(void *)d->pto.data;
    op.peer_table_out_stride = c->pto_stride;
  }
  st = attnmeta_set_launch_config(ctx, config);
  FZ_CHECK(st == ATTNMETA_OK, "attnmeta_set_launch_config: %s", attnmeta_last_error(ctx));
  st = attnmeta_convert_topk(ctx, &op, NULL);
  FZ_CHECK(st == ATTNMETA_OK, "attnmeta_convert_topk refused a valid call: %s (%s)",
           attnmeta_status_string(st), attnmeta_last_error(ctx));
  st = attnmeta_synchronize(ctx, NULL);
  FZ_CHECK(st == ATTNMETA_OK, "attnmeta_synchronize: %s", attnmeta_last_error(ctx));
  attnmeta_set_launch_config(ctx, NULL);
  FZ_CHECK(lead_poisoned(&d->out) && lead_poisoned(&d->count) && lead_poisoned(&d->err) &&
               lead_poisoned(&d->pto),
           "attnmeta_convert_topk wrote before an output");
}

static void describe(const topk_case *c) {
  fprintf(stderr,
          "topk: T=%d K=%d R=%d (%s) cols=%d strides topk %lld out %lld table %lld bs=%d "
          "stride_rows=%d W=%d k=%d I=%d prefill %d (P=%d) slots %d count %d compact %d err %d "
          "(init 0x%x) configs {%d,%d,%d,%d} {%d,%d,%d,%d} peer_blocks %lld peer table %d "
          "(M=%d w=%d strides %lld owner %lld out %lld, NULL %d, hostile %d)\n",
          c->T, c->K, c->R, c->use_qsl ? "qsl" : "req_id", c->cols, (long long)c->topk_stride,
          (long long)c->out_stride, (long long)c->table_stride, c->bs, c->stride_rows, c->W, c->k,
          c->I, c->use_prefill, c->P, c->use_slots, c->want_count, c->compact, c->want_err,
          (unsigned)c->err_init, c->cfg[0].block, c->cfg[0].grid, c->cfg[0].vector, c->cfg[0].lanes,
          c->cfg[1].block, c->cfg[1].grid, c->cfg[1].vector, c->cfg[1].lanes, (long long)c->S,
          c->want_peer_table, c->M, c->w, (long long)c->pt_stride, (long long)c->pt_owner,
          (long long)c->pto_stride, c->peer_tables_null, c->hostile_peer);
}

#define TCHECK(c, cond, ...) FZ_CHECK_DESCRIBED(describe(c), cond, __VA_ARGS__)

static amr_topk_input reference_input(const topk_case *c) {
  amr_topk_input in;
  memset(&in, 0, sizeof in);
  in.topk = c->topk;
  in.topk_stride = c->topk_stride;
  in.num_tokens = c->T;
  in.topk_count = c->K;
  in.qsl = c->use_qsl ? c->qsl : NULL;
  in.req_id = c->req_id;
  in.num_reqs = c->R;
  in.table = c->table;
  in.cols = c->cols;
  in.table_stride = c->table_stride;
  in.block_size = c->bs;
  in.stride_rows = c->stride_rows > 0 ? c->stride_rows : c->bs;
  in.world = c->W;
  in.rank = c->k;
  in.interleave = c->I;
  in.prefill_req = c->prefill_req;
  in.workspace_starts = c->ws;
  in.num_prefill = c->P;
  in.token_slot = c->token_slot;
  in.compact = c->compact;
  in.peer_blocks = c->S;
  return in;
}

/* The rotated peer table against the reference (6d): every entry of the
 * R x w rows, the gap columns poisoned; its flags into *flags. */
FZ_NO_COVERAGE static void check_peer_table(const topk_case *c, const devices *d, int32_t *flags) {
  amr_peer_table_input in;
  const int32_t *got = (const int32_t *)(const void *)d->pto.data;
  int32_t *ref;
  int64_t r, j;
  *flags = 0;
  if (!c->want_peer_table || c->n_pto == 0) return;
  memset(&in, 0, sizeof in);
  in.tables = (const int32_t *)(const void *)d->peer.data;
  in.row_stride = c->pt_stride;
  in.owner_stride = c->pt_owner;
  in.num_reqs = c->R;
  in.cols = c->M;
  in.world = c->W;
  in.rank = c->k;
  in.segment = c->S;
  in.width = c->w;
  ref = xcalloc((int64_t)c->R * c->w, sizeof(int32_t));
  amr_peer_table(&in, ref, flags);
  for (r = 0; r < c->R; ++r)
    for (j = 0; j < c->pto_stride && r * c->pto_stride + j < c->n_pto; ++j) {
      const int32_t v = got[r * c->pto_stride + j];
      if (j >= c->w)
        TCHECK(c, v == FZ_POISON32, "peer_table_out[%lld][%lld] (a gap column) written: %d",
               (long long)r, (long long)j, v);
      else
        TCHECK(c, v == ref[r * c->w + j], "peer_table_out[%lld][%lld] = %d, reference %d",
               (long long)r, (long long)j, v, ref[r * c->w + j]);
    }
  free(ref);
}

static int monotone(const topk_case *c) {
  int32_t r;
  if (!c->use_qsl) return 1;
  for (r = 0; r < c->R; ++r)
    if (c->qsl[r + 1] < c->qsl[r]) return 0;
  return 1;
}

/* Row t of the output against a dense reference row; gap columns poisoned. */
FZ_NO_COVERAGE static void check_row(const topk_case *c, const devices *d, int64_t t,
                                     const int32_t *ref_row, int32_t ref_count) {
  const int32_t *out = (const int32_t *)(const void *)d->out.data;
  int64_t j;
  for (j = 0; j < c->out_stride && t * c->out_stride + j < c->n_out; ++j) {
    const int32_t v = out[t * c->out_stride + j];
    if (j >= c->K)
      TCHECK(c, v == FZ_POISON32, "out[%lld][%lld] (a gap column) written: %d", (long long)t,
             (long long)j, v);
    else
      TCHECK(c, v == ref_row[j], "out[%lld][%lld] = %d, reference %d", (long long)t, (long long)j,
             v, ref_row[j]);
  }
  if (c->want_count) {
    const int32_t got = ((const int32_t *)(const void *)d->count.data)[t];
    TCHECK(c, got == ref_count, "valid_count[%lld] = %d, reference %d", (long long)t, got,
           ref_count);
  }
}

FZ_NO_COVERAGE static int row_is(const topk_case *c, const devices *d, int64_t t,
                                 const int32_t *ref_row, int32_t ref_count) {
  const int32_t *out = (const int32_t *)(const void *)d->out.data;
  int64_t j;
  for (j = 0; j < c->K; ++j)
    if (out[t * c->out_stride + j] != ref_row[j]) return 0;
  return !c->want_count || ((const int32_t *)(const void *)d->count.data)[t] == ref_count;
}

/* Non-monotone boundaries: row t is some request's row, or all invalid. */
FZ_NO_COVERAGE static void check_row_some_request(const topk_case *c, const devices *d, int64_t t,
                                                  int32_t *row, int32_t *none) {
  amr_topk_input in = reference_input(c);
  int32_t r, count, flags;
  int64_t j;
  for (j = 0; j < c->K; ++j) none[j] = -1;
  if (row_is(c, d, t, none, 0)) {
    check_row(c, d, t, none, 0); /* and the gap columns */
    return;
  }
  in.qsl = NULL;
  in.req_id = &r;
  in.num_tokens = 1;
  in.topk = c->topk + t * c->topk_stride;
  in.prefill_req = c->prefill_req ? c->prefill_req + t : NULL;
  in.token_slot = c->token_slot ? c->token_slot + t : NULL;
  for (r = 0; r < c->R; ++r) {
    amr_topk(&in, row, &count, &flags);
    if (row_is(c, d, t, row, count)) {
      check_row(c, d, t, row, count);
      return;
    }
  }
  TCHECK(c, 0, "out row %lld is no request's row (non-monotone boundaries)", (long long)t);
}

/* Too many requests to try each: every entry -1 or a slot, counts in range. */
FZ_NO_COVERAGE static void check_row_in_range(const topk_case *c, const devices *d, int64_t t) {
  const int32_t *out = (const int32_t *)(const void *)d->out.data;
  int64_t j, n = 0;
  for (j = 0; j < c->K; ++j) {
    const int32_t v = out[t * c->out_stride + j];
    TCHECK(c, v >= -1, "out[%lld][%lld] = %d", (long long)t, (long long)j, v);
    n += v != -1;
  }
  for (; j < c->out_stride && t * c->out_stride + j < c->n_out; ++j)
    TCHECK(c, out[t * c->out_stride + j] == FZ_POISON32, "out[%lld][%lld] (a gap column) written",
           (long long)t, (long long)j);
  if (c->want_count) {
    const int32_t got = ((const int32_t *)(const void *)d->count.data)[t];
    TCHECK(c, got >= 0 && got <= n, "valid_count[%lld] = %d with %lld valid entries", (long long)t,
           got, (long long)n);
  }
}

void fz_op_topk(fz_reader *rd, attnmeta_context *ctx) {
  topk_case c;
  devices a, b;
  int32_t *ref, *count, flags = 0, got, peer_flags = 0;
  int64_t t;

  decode(rd, &c);
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  inputs_map(&a, &c, rd);
  outputs_map(&a, &c);
  run(ctx, &c, &a, &c.cfg[0]);

  ref = xcalloc((int64_t)c.T * c.K, sizeof(int32_t));
  count = xcalloc(c.T, sizeof(int32_t));
  {
    const amr_topk_input in = reference_input(&c);
    if (c.T > 0) amr_topk(&in, ref, count, &flags);
  }
  got = *(const int32_t *)(const void *)a.err.data;
  check_peer_table(&c, &a, &peer_flags);
  if (c.T == 0) {
    const int32_t want = c.want_err ? c.err_init | peer_flags : c.err_init;
    TCHECK(&c, got == want, "T = 0: error word 0x%x, reference 0x%x (the rotated table's)",
           (unsigned)got, (unsigned)want);
  } else if (monotone(&c)) {
    for (t = 0; t < c.T; ++t) check_row(&c, &a, t, ref + t * c.K, count[t]);
    if (c.want_err)
      TCHECK(&c, got == (c.err_init | flags | peer_flags), "error word 0x%x, reference 0x%x",
             (unsigned)got, (unsigned)(c.err_init | flags | peer_flags));
  } else {
    const int64_t actual = c.R > 0 ? max64(min64(c.qsl[c.R], c.T), 0) : 0;
    int32_t *row = xcalloc(c.K, sizeof(int32_t)), *none = xcalloc(c.K, sizeof(int32_t));
    int64_t j;
    for (j = 0; j < c.K; ++j) none[j] = -1;
    for (t = 0; t < c.T; ++t) {
      if (t >= actual) check_row(&c, &a, t, none, 0); /* padding: defined for any data */
      else if ((int64_t)c.R * c.K <= SEARCH_LIMIT) check_row_some_request(&c, &a, t, row, none);
      else check_row_in_range(&c, &a, t);
    }
    free(row);
    free(none);
    if (c.want_err)
      TCHECK(&c, (got & (c.err_init | peer_flags)) == (c.err_init | peer_flags) &&
                     !((got & ~c.err_init) & ~TOPK_FLAGS),
             "error word 0x%x from 0x%x: a flag top-k never raises", (unsigned)got,
             (unsigned)c.err_init);
  }
  if (!c.want_err) TCHECK(&c, got == c.err_init, "the error word was written though not passed");

  /* the second launch configuration: the same bytes */
  {
    const devices second = fresh_outputs(&a, &b, &c);
    run(ctx, &c, &second, &c.cfg[1]);
  }
  TCHECK(&c, same_outputs(&a, &b), "the second launch configuration gives other bytes");

  /* HIP-CPU mode: the HIP module's kernels at the shapes the library plans
   * for a GPU (many lanes, several rows a block, the prefix sum's barriers
   * on real threads): the same bytes again */
  if (fz_hip_cpu_context()) {
    const attnmeta_launch_config planned = attnmeta_launch_config_default();
    const devices third = fresh_outputs(&a, &b, &c);
    run(fz_hip_cpu_context(), &c, &third, &planned);
    TCHECK(&c, same_outputs(&a, &b),
           "the HIP backend on HIP-CPU gives other bytes than the CPU backend");
  }

  free(ref);
  free(count);
  outputs_unmap(&b);
  outputs_unmap(&a);
  inputs_unmap(&a);
  case_free(&c);
}
