// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_step's large-size operation: steps with R, T, C and columns up to
 * the limits the host accepts (R + T up to INT32_MAX, C up to INT32_MAX,
 * block tables up to 2^40 bytes), run as an emulated GPU launch planned by
 * the library's own planner (am_step_plan.h) with a grid of up to 2^31
 * threads: the shape where 32-bit index arithmetic would wrap.
 *
 * Kept fast three ways: every buffer is sparse (fz_sparse: reserved, pages
 * committed only when written; the requests are R - A empty ones followed
 * by A <= 4 active ones, so query_start_loc and seq_lens are zero pages but
 * for their end); only a sample of the launch's blocks runs (the first
 * and last, those owning the first, last and boundary tokens, a few
 * others), every thread of each; and the pages the launch touched are
 * recorded as it touches them (fz_track.h: the outputs' pages start
 * inaccessible, the first access to each faults once and is recorded)
 * rather than found by scanning each output's reservation with mincore
 * afterwards. The scan cost one mincore byte per reserved page, up to
 * 2^29 of them for a block_table_out of 2^41 bytes, whatever the launch
 * wrote: 72% of fuzz_step's time went to this operation, most of it in the
 * kernel's mincore. The pages recorded are exactly the pages touched, so
 * the checks below see the same elements as before.
 *
 * Checked:
 *  - memory: each buffer lies exactly between inaccessible pages and the
 *    inputs are read-only, so any access out of bounds and any write to an
 *    input faults, with or without sanitizers;
 *  - the plan: grid x block <= 2^31, lanes x groups = block;
 *  - every element on a page the launch wrote: for a token a sampled block
 *    owns (token t belongs to block (t mod grid*groups) / groups, the
 *    kernel's grid-stride split), the reference's value (tests/reference.c,
 *    amr_token, given req(t) from how the batch was made); for any other
 *    token, still 0 (nobody else ran); in the [T, C) tail 0 (seq_lens_out)
 *    or 0 / -1 (slot_mapping); per-request lengths the reference's or 0;
 *    block-table columns past `cols` never written;
 *  - every token a sampled block owns was written (read back against the
 *    reference), and the error word holds exactly the slot flags of those
 *    tokens (the data is otherwise valid).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_step_kernel.h"
#include "am_step_plan.h"
#include "fuzz_step_large.h"
#include "fz_track.h"
#include "reference.h"

#define MAX_ACTIVE 4
#define MAX_SAMPLED 8
#define MAX_WORK ((int64_t)1 << 19)  /* cost of the sampled blocks, in element writes */
#define TOKEN_COST 64                  /* a token's cost besides its row, in element writes */
#define MAX_TABLE_BYTES ((int64_t)1 << 40)
#define MAX_OUT_TABLE_BYTES ((int64_t)1 << 41)

enum { L_T2R, L_SEQ, L_GSEQ, L_BT, L_DEC, L_RIDX, L_PRL, L_POS, L_SLOT, L_COUNT };
static const char *const names[L_COUNT] = {
    "token_to_req",    "seq_lens_out",    "global_seq_lens_out", "block_table_out", "decode_lens_out",
    "req_indices_out", "per_req_lens_out", "positions",          "slot_mapping"};
static const size_t elem_bytes[L_COUNT] = {4, 4, 4, 4, 4, 4, 4, 8, 8};

typedef struct large {
  int32_t R, T, C, cols, num_mapped, block_size, W, k, I;
  int64_t in_stride, out_stride, total;
  int A;                          /* active requests: the last A */
  int64_t cut[MAX_ACTIVE + 1];    /* their boundaries: qsl[R - A + j] = cut[j] */
  int32_t seq[MAX_ACTIVE];
  unsigned want;                  /* bit per L_*, and bit L_COUNT for the error word */
  int32_t error_word;
  fz_sparse qsl, seq_lens, table, out[L_COUNT];
  attnmeta_launch_config cfg;
  int reverse;
  am_launch_shape shape;
  int64_t token_stride;
  int64_t sampled[MAX_SAMPLED];
  int nsampled;
  amr_input ri;
} large;

static struct {
  long runs, unmappable, too_much_work, ran, t_past_2_30, r_past_2_20, grid_past_2_20, wide_lanes,
      owned_tokens, bt_rows;
} lstats;

void fz_large_print_stats(void) {
  fprintf(stderr,
          "  build_step_large: %ld runs: %ld ran (%ld with T > 2^30, %ld with R > 2^20, %ld with "
          "more than 2^20 blocks, %ld with more than 32 lanes, %ld with block-table rows); "
          "%ld tokens checked; %ld not mappable, %ld with too much work for the sampled blocks\n",
          lstats.runs, lstats.ran, lstats.t_past_2_30, lstats.r_past_2_20, lstats.grid_past_2_20,
          lstats.wide_lanes, lstats.bt_rows, lstats.owned_tokens, lstats.unmappable,
          lstats.too_much_work);
}

static const large *current;

static void describe(const large *L) {
  fprintf(stderr,
          "large step: R=%d T=%d C=%d total=%lld A=%d cols=%d in_stride=%lld out_stride=%lld "
          "num_mapped=%d block_size=%d W=%d k=%d I=%d want=0x%x config {%d,%d,%d,%d,%d}: %lld "
          "lanes x %lld groups x %lld blocks, reverse %d\n  cuts:",
          L->R, L->T, L->C, (long long)L->total, L->A, L->cols, (long long)L->in_stride,
          (long long)L->out_stride, L->num_mapped, L->block_size, L->W, L->k, L->I, L->want,
          L->cfg.block, L->cfg.grid, L->cfg.stage, L->cfg.vector, L->cfg.lanes,
          (long long)L->shape.lanes, (long long)L->shape.groups, (long long)L->shape.grid,
          L->reverse);
  for (int j = 0; j <= L->A; ++j) fprintf(stderr, " %lld", (long long)L->cut[j]);
  fprintf(stderr, "\n  sampled blocks:");
  for (int j = 0; j < L->nsampled; ++j) fprintf(stderr, " %lld", (long long)L->sampled[j]);
  fprintf(stderr, "\n");
}

#define LCHECK(cond, ...) FZ_CHECK_DESCRIBED(describe(current), cond, __VA_ARGS__)

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

#define WANTS(L, i) (((L)->want >> (i)) & 1)

/* ---- decoding ---- */

static void decode(fz_reader *rd, large *L) {
  static const int64_t reqs[14] = {1, 2, 3, 5, 64, 4095, 4096, 65536, 1 << 20, 1 << 24, 1 << 28,
                                   1 << 30, INT32_MAX / 2, INT32_MAX - 8};
  static const int32_t cols_of[8] = {0, 1, 3, 4, 64, 1000, 4096, 65536};
  static const int32_t block_sizes[5] = {1, 16, 256, 65536, INT32_MAX};
  static const int blocks[8] = {0, 0, 64, 96, 160, 256, 320, 1024};
  static const int lanes[8] = {0, 0, 0, 1, 64, 96, 160, 256};
  int64_t max_t, j;
  const uint8_t rsel = fz_u8(rd);

  memset(L, 0, sizeof *L);
  L->R = (int32_t)(rsel % 16 < 14 ? reqs[rsel % 16] : fz_range(rd, 1, 1 << 30));
  max_t = (int64_t)INT32_MAX - L->R;
  switch (fz_u8(rd) % 6) {
    case 0: L->T = (int32_t)max_t; break;
    case 1: L->T = (int32_t)max64(max_t - fz_range(rd, 0, 7), 0); break;
    case 2: L->T = (int32_t)min64(max_t, (1 << 24) + fz_range(rd, -3, 3)); break;
    case 3: L->T = (int32_t)fz_range(rd, 0, min64(max_t, 64)); break;
    default: L->T = (int32_t)fz_range(rd, 0, max_t); break;
  }
  switch (fz_u8(rd) % 4) {
    case 0: L->C = L->T; break;
    case 1: L->C = (int32_t)min64((int64_t)L->T + fz_range(rd, 1, 17), INT32_MAX); break;
    case 2: L->C = (int32_t)fz_range(rd, L->T, INT32_MAX); break;
    default: L->C = INT32_MAX; break;
  }
  L->A = (int)min64(L->R, fz_range(rd, 1, MAX_ACTIVE));
  switch (fz_u8(rd) % 3) {
    case 0: L->total = L->T; break;
    case 1: L->total = max64((int64_t)L->T - fz_range(rd, 0, 3), 0); break;
    default: L->total = fz_range(rd, 0, L->T); break;
  }
  L->cut[0] = 0;
  L->cut[L->A] = L->total;
  for (j = 1; j < L->A; ++j) L->cut[j] = fz_range(rd, L->cut[j - 1], L->total);
  for (j = 0; j < L->A; ++j) {
    const int64_t qlen = L->cut[j + 1] - L->cut[j];
    const uint8_t h = fz_u8(rd) % 3;
    const int64_t hist = h == 0 ? 0 : h == 1 ? fz_range(rd, 0, 1000) : fz_range(rd, 0, INT32_MAX - qlen);
    L->seq[j] = (int32_t)min64(qlen + hist, INT32_MAX);
  }
  L->W = fz_u8(rd) < 192 ? 1 : (int32_t)fz_range(rd, 2, 8);
  L->k = (int32_t)fz_range(rd, 0, L->W - 1);
  L->I = fz_u8(rd) < 192 ? 1 : (int32_t)fz_range(rd, 2, 64);
  L->block_size = block_sizes[fz_u8(rd) % 5];
  L->cols = cols_of[fz_u8(rd) % 8];
  L->in_stride = L->cols + (fz_chance(rd, 1, 2) ? 0 : fz_range(rd, 0, 64));
  if ((int64_t)L->R * L->in_stride * 4 > MAX_TABLE_BYTES) { /* the address space we take */
    L->in_stride = MAX_TABLE_BYTES / 4 / L->R;
    L->cols = (int32_t)min64(L->cols, L->in_stride);
  }
  L->out_stride = L->cols + (fz_chance(rd, 1, 2) ? 0 : fz_range(rd, 0, 8));
  L->want = (unsigned)fz_range(rd, 1, (1 << (L_COUNT + 1)) - 1);
  if (WANTS(L, L_BT) && (int64_t)L->T * L->out_stride * 4 > MAX_OUT_TABLE_BYTES)
    L->want &= ~(1u << L_BT);
  switch (fz_u8(rd) % 5) {
    case 0: L->num_mapped = -1; break;
    case 1: L->num_mapped = (int32_t)L->total; break;
    case 2: L->num_mapped = L->T; break;
    case 3: L->num_mapped = INT32_MAX; break;
    default: L->num_mapped = (int32_t)fz_range(rd, 0, L->T); break;
  }
  L->cfg = attnmeta_launch_config_default();
  L->cfg.block = blocks[fz_u8(rd) % 8];
  L->cfg.lanes = lanes[fz_u8(rd) % 8];
  switch (fz_u8(rd) % 3) { /* large grids: the planner bounds them to 2^31 threads */
    case 0: L->cfg.grid = INT32_MAX; break;
    case 1: L->cfg.grid = (int)fz_range(rd, 1 << 20, INT32_MAX); break;
    default: L->cfg.grid = 0; break; /* the planner's own (a few per multiprocessor) */
  }
  L->cfg.stage = (int)fz_range(rd, -1, 1);
  L->cfg.vector = (int)fz_range(rd, -1, 1);
  L->reverse = fz_chance(rd, 1, 2);
}

/* ---- buffers ---- */

static int map_buffers(fz_reader *rd, large *L) {
  int32_t *qsl, *seq, *table;
  int64_t j, c;
  int i;
  if (!fz_sparse_alloc(&L->qsl, ((size_t)L->R + 1) * 4) ||
      !fz_sparse_alloc(&L->seq_lens, (size_t)L->R * 4) ||
      !fz_sparse_alloc(&L->table, L->cols > 0 ? (size_t)((L->R - 1) * L->in_stride + L->cols) * 4 : 0))
    return 0;
  for (i = 0; i < L_COUNT; ++i) {
    const int64_t n = i == L_SEQ || i == L_SLOT ? L->C
                      : i == L_PRL             ? L->R
                      : i == L_BT              ? (L->T > 0 ? (L->T - 1) * L->out_stride + L->cols : 0)
                                               : L->T;
    if (WANTS(L, i) && !fz_sparse_alloc(&L->out[i], (size_t)n * elem_bytes[i])) return 0;
  }
  qsl = (int32_t *)(void *)L->qsl.data;
  seq = (int32_t *)(void *)L->seq_lens.data;
  table = (int32_t *)(void *)L->table.data;
  for (j = 0; j <= L->A; ++j) qsl[L->R - L->A + j] = (int32_t)L->cut[j];
  for (j = 0; j < L->A; ++j) {
    const int64_t r = L->R - L->A + j;
    seq[r] = L->seq[j];
    if (L->cols > 0) /* active rows only: the others stay zero pages */
      for (c = 0; c < min64(L->cols, 4096); ++c)
        table[r * L->in_stride + c] =
            fz_chance(rd, 1, 64) ? fz_edge32(rd) : (int32_t)fz_rand_range(rd, 0, INT32_MAX);
  }
  fz_sparse_freeze(&L->qsl);
  fz_sparse_freeze(&L->seq_lens);
  fz_sparse_freeze(&L->table);
  return 1;
}

static void unmap_buffers(large *L) {
  int i;
  fz_sparse_free(&L->qsl);
  fz_sparse_free(&L->seq_lens);
  fz_sparse_free(&L->table);
  for (i = 0; i < L_COUNT; ++i) fz_sparse_free(&L->out[i]);
}

static void fill_step(attnmeta_step *s, large *L) {
  void *o[L_COUNT];
  int i;
  for (i = 0; i < L_COUNT; ++i) o[i] = WANTS(L, i) ? (void *)L->out[i].data : NULL;
  attnmeta_step_init(s);
  s->query_start_loc = (const int32_t *)(void *)L->qsl.data;
  s->num_reqs = L->R;
  s->num_tokens = L->T;
  s->capacity = L->C;
  s->seq_lens = (const int32_t *)(void *)L->seq_lens.data;
  s->block_table = L->cols > 0 ? (const int32_t *)(void *)L->table.data : NULL;
  s->block_table_cols = L->cols;
  s->block_table_stride = L->in_stride;
  s->num_mapped = L->num_mapped;
  s->block_size = L->block_size;
  s->dcp_world_size = L->W;
  s->dcp_rank = L->k;
  s->dcp_interleave = L->I;
  s->token_to_req = o[L_T2R];
  s->seq_lens_out = o[L_SEQ];
  s->global_seq_lens_out = o[L_GSEQ];
  s->block_table_out = o[L_BT];
  s->block_table_out_stride = L->out_stride;
  s->decode_lens_out = o[L_DEC];
  s->req_indices_out = o[L_RIDX];
  s->per_req_lens_out = o[L_PRL];
  s->positions = o[L_POS];
  s->slot_mapping = o[L_SLOT];
  s->error_word = WANTS(L, L_COUNT) ? &L->error_word : NULL;
}

/* ---- the reference's view ---- */

/* req(t) from how the batch was made: the first active request whose end
 * is past t, else the last request. */
FZ_NO_COVERAGE static int32_t req_of(const large *L, int64_t t) {
  int j;
  for (j = 0; j < L->A; ++j)
    if (L->cut[j + 1] > t) return L->R - L->A + j;
  return L->R - 1;
}

static inline int owned(const large *L, int64_t t) {
  const int64_t block = (t % L->token_stride) / L->shape.groups;
  int j;
  for (j = 0; j < L->nsampled; ++j)
    if (L->sampled[j] == block) return 1;
  return 0;
}

/* owned() for the elements of a page in turn: the answer changes only
 * every `groups` tokens. */
typedef struct owner_cache {
  int64_t first, last; /* tokens [first, last] share the answer */
  int owned;
} owner_cache;

static inline int owned_cached(const large *L, owner_cache *c, int64_t t) {
  if (t < c->first || t > c->last) {
    const int64_t in_stride = t % L->token_stride;
    c->first = t - in_stride % L->shape.groups;
    c->last = c->first + L->shape.groups - 1;
    c->owned = owned(L, t);
  }
  return c->owned;
}

static int64_t token_value(const large *L, int which, const amr_token_out *k) {
  switch (which) {
    case L_T2R: return k->token_to_req;
    case L_SEQ: return k->seq_len;
    case L_GSEQ: return k->global_seq_len;
    case L_DEC: return k->decode_len;
    case L_RIDX: return k->req_index;
    case L_POS: return k->position;
    case L_SLOT: return k->slot;
    default: (void)L; return 0;
  }
}

static inline int64_t load(const large *L, int which, int64_t i) {
  return elem_bytes[which] == 8 ? ((const int64_t *)(const void *)L->out[which].data)[i]
                                : ((const int32_t *)(const void *)L->out[which].data)[i];
}

typedef struct visit_arg {
  const large *L;
  int which;
} visit_arg;

/* Every element of a written page: the reference where a sampled block owns
 * it, untouched (0) where none does. Elements holding 0 are skipped: 0 is
 * both the untouched value and allowed for the tail and per-request
 * lengths, and verify compares every owned element with the reference. */
FZ_NO_COVERAGE static void check_page(void *arg, size_t begin, size_t end) {
  const visit_arg *va = (const visit_arg *)arg;
  const large *L = va->L;
  const int which = va->which;
  const size_t eb = elem_bytes[which];
  int64_t i, last_t = -1;
  amr_token_out k;
  int32_t flags = 0;
  owner_cache oc = {1, 0, 0}; /* empty */
  memset(&k, 0, sizeof k);
  for (i = (int64_t)(begin / eb); i < (int64_t)(end / eb); ++i) {
    const int64_t v = load(L, which, i);
    /* 0 is what an element nobody wrote holds: nothing to check here (an
     * owned element's value, 0 or not, is checked by verify's owned loop) */
    if (v == 0) continue;
    if (which == L_PRL) {
      const int32_t *q = (const int32_t *)(const void *)L->qsl.data;
      LCHECK(v == 0 || v == (int64_t)q[i + 1] - q[i], "per_req_lens_out[%lld] = %lld", (long long)i,
             (long long)v);
    } else if (which == L_BT) {
      const int64_t t = i / L->out_stride, c = i % L->out_stride;
      if (c >= L->cols || !owned_cached(L, &oc, t)) {
        LCHECK(v == 0, "block_table_out[%lld][%lld] = %lld written (not a sampled block's)",
               (long long)t, (long long)c, (long long)v);
      } else {
        if (t != last_t) amr_token(&L->ri, t, req_of(L, t), &k, &flags), last_t = t;
        LCHECK(v == (k.valid ? L->ri.block_table[(int64_t)k.req * L->in_stride + c] : 0),
               "block_table_out[%lld][%lld] = %lld, reference %d (req %d, valid %d)", (long long)t,
               (long long)c, (long long)v,
               k.valid ? L->ri.block_table[(int64_t)k.req * L->in_stride + c] : 0, k.req, k.valid);
      }
    } else if (i >= L->T) { /* the [T, C) tail */
      LCHECK(v == 0 || (which == L_SLOT && v == -1), "%s[%lld] = %lld in the tail", names[which],
             (long long)i, (long long)v);
    } else if (!owned_cached(L, &oc, i)) {
      LCHECK(v == 0, "%s[%lld] = %lld written (not a sampled block's token)", names[which],
             (long long)i, (long long)v);
    } else {
      amr_token(&L->ri, i, req_of(L, i), &k, &flags);
      LCHECK(v == token_value(L, which, &k), "%s[%lld] = %lld, reference %lld", names[which],
             (long long)i, (long long)v, (long long)token_value(L, which, &k));
    }
  }
}

/* ---- the launch ---- */

static void add_sample(large *L, int64_t block) {
  int j;
  if (block < 0 || block >= L->shape.grid || L->nsampled == MAX_SAMPLED) return;
  for (j = 0; j < L->nsampled; ++j)
    if (L->sampled[j] == block) return;
  L->sampled[L->nsampled++] = block;
}

static void add_token_sample(large *L, int64_t t) {
  if (t >= 0 && t < L->T) add_sample(L, (t % L->token_stride) / L->shape.groups);
}

/* Element writes of the sampled blocks, roughly. */
static int64_t work_of(const large *L) {
  const int64_t block = L->shape.lanes * L->shape.groups;
  const int64_t gstride = L->shape.grid * block;
  const int64_t passes = (L->T + L->token_stride - 1) / L->token_stride;
  const int64_t per_thread = ((int64_t)L->C - L->T + gstride - 1) / gstride +
                             ((int64_t)L->R + gstride - 1) / gstride;
  return (int64_t)L->nsampled *
         (passes * L->shape.groups * (L->cols + L->shape.lanes + TOKEN_COST) + block * per_thread);
}

/* The checks after the launch (see the top of this file). */
FZ_NO_COVERAGE static void verify(large *Lp) {
  large L = *Lp;
  int32_t want_flags = 0;
  int64_t j, g, t;
  int w;

  /* every written page: owned elements right, the rest untouched */
  for (w = 0; w < L_COUNT; ++w) {
    visit_arg va;
    if (!WANTS(&L, w)) continue;
    va.L = &L;
    va.which = w;
    fz_sparse_touched(&L.out[w], check_page, &va);
  }
  /* every owned token written */
  for (j = 0; j < L.nsampled; ++j) {
    for (g = 0; g < L.shape.groups; ++g) {
      for (t = L.sampled[j] * L.shape.groups + g; t < L.T; t += L.token_stride) {
        amr_token_out k;
        int32_t flags = 0;
        amr_token(&L.ri, t, req_of(&L, t), &k, &flags);
        if (WANTS(&L, L_SLOT)) want_flags |= flags;
        for (w = 0; w < L_COUNT; ++w) {
          if (!WANTS(&L, w) || w == L_PRL) continue;
          if (w == L_BT) {
            int64_t c;
            for (c = 0; c < L.cols; ++c) {
              const int32_t ref = k.valid ? L.ri.block_table[(int64_t)k.req * L.in_stride + c] : 0;
              LCHECK(load(&L, w, t * L.out_stride + c) == ref,
                     "block_table_out[%lld][%lld] = %lld, reference %d", (long long)t,
                     (long long)c, (long long)load(&L, w, t * L.out_stride + c), ref);
            }
            continue;
          }
          LCHECK(load(&L, w, t) == token_value(&L, w, &k), "%s[%lld] = %lld, reference %lld",
                 names[w], (long long)t, (long long)load(&L, w, t),
                 (long long)token_value(&L, w, &k));
        }
        lstats.owned_tokens++;
      }
    }
  }
  if (WANTS(&L, L_COUNT))
    LCHECK(L.error_word == want_flags, "error_word = 0x%x, reference 0x%x", (unsigned)L.error_word,
           (unsigned)want_flags);

}

void fz_op_step_large(fz_reader *rd, attnmeta_context *ctx) {
  large L;
  attnmeta_step s;
  am_step_params p;
  uint32_t required = 0, optional = 0;
  int32_t *stage = NULL;
  int64_t threads, j, i;
  (void)ctx; /* the CPU backend would run every one of up to 2^31 tokens */

  lstats.runs++;
  decode(rd, &L);
  current = &L;
  if (!map_buffers(rd, &L)) {
    lstats.unmappable++;
    unmap_buffers(&L);
    return;
  }
  fill_step(&s, &L);
  fz_step_rules(&s, &required, &optional);
  LCHECK(required == 0 && optional == 0, "harness: a large step breaks a rule (0x%x 0x%x)",
         required, optional);
  p = am_params_of(&s);
  L.shape = am_plan_launch(&L.cfg, 0, 132, &p);
  threads = L.shape.lanes * L.shape.groups;
  LCHECK(L.shape.lanes >= 1 && L.shape.groups >= 1 && L.shape.grid >= 1 && threads <= 1024 &&
             L.shape.grid * threads <= ((int64_t)1 << 31),
         "planner: %lld lanes x %lld groups x %lld blocks", (long long)L.shape.lanes,
         (long long)L.shape.groups, (long long)L.shape.grid);
  L.token_stride = L.shape.grid * L.shape.groups;

  /* the blocks that run: the first and last, the owners of the boundary
   * tokens, a few more */
  add_sample(&L, 0);
  add_sample(&L, L.shape.grid - 1);
  add_token_sample(&L, L.total - 1);
  add_token_sample(&L, L.total);
  add_token_sample(&L, L.T - 1);
  add_token_sample(&L, L.num_mapped);
  for (j = 1; j < L.A; ++j) add_token_sample(&L, L.cut[j]);
  for (j = 0; j < 2; ++j) add_sample(&L, fz_rand_range(rd, 0, L.shape.grid - 1));
  if (getenv("ATTNMETA_FUZZ_DESCRIBE")) describe(&L);
  if (work_of(&L) > MAX_WORK) {
    lstats.too_much_work++;
    unmap_buffers(&L);
    return;
  }

  amr_input_requests(&L.ri, s.query_start_loc, L.R, L.T, L.C, s.seq_lens);
  amr_input_table(&L.ri, s.block_table, L.cols, L.in_stride, L.block_size);
  amr_input_dcp(&L.ri, L.W, L.k, L.I);
  L.ri.num_mapped = L.num_mapped;

  if (p.stage) { /* what every block holds after its staging loop and barrier */
    const int64_t words = am_step_stage_words(&p);
    stage = (int32_t *)calloc((size_t)words, sizeof(int32_t));
    if (!stage) fz_fail("out of memory");
    for (i = 0; i <= L.R; ++i) stage[i] = s.query_start_loc[i];
    if (p.seq_lens)
      for (i = 0; i < L.R; ++i) stage[L.R + 1 + i] = s.seq_lens[i];
  }
  {
    fz_sparse *outs[L_COUNT];
    int n = 0, w;
    for (w = 0; w < L_COUNT; ++w)
      if (WANTS(&L, w)) outs[n++] = &L.out[w];
    fz_track_begin(outs, n); /* the pages the launch touches, without a scan */
  }
  for (j = 0; j < L.nsampled; ++j) {
    for (i = 0; i < threads; ++i) {
      const int64_t thread = L.reverse ? threads - 1 - i : i;
      am_step_body(&p,
                   am_make_thread((uint32_t)L.sampled[j], (uint32_t)L.shape.grid,
                                  (uint32_t)(thread % L.shape.lanes), (uint32_t)L.shape.lanes,
                                  (uint32_t)(thread / L.shape.lanes), (uint32_t)L.shape.groups),
                   stage, p.variant);
    }
  }
  fz_track_end();
  free(stage);

  verify(&L);

  lstats.ran++;
  if (L.T > (1 << 30)) lstats.t_past_2_30++;
  if (L.R > (1 << 20)) lstats.r_past_2_20++;
  if (L.shape.grid > (1 << 20)) lstats.grid_past_2_20++;
  if (L.shape.lanes > 32) lstats.wide_lanes++;
  if (WANTS(&L, L_BT) && L.cols > 0) lstats.bt_rows++;
  unmap_buffers(&L);
}
