// SPDX-License-Identifier: Apache-2.0
/*
 * The public device functions of include/attnmeta/device/topk_slot.h, run
 * from host C as an engine's kernel would run them, against
 * attnmeta_convert_topk on the CPU backend (bit for bit: every output
 * element, guard zones included, and the error word) and against the naive
 * reference (topk_reference.c). Over every top-k case of the conformance
 * kit in four modes, and over seeded random inputs full of hostile data
 * (requests outside [0, R), positions past the table, negative and huge
 * block ids, workspace indices at or past P, DCP ranks, negative
 * token_slot). Three ways of calling: one thread a row
 * (attnmeta_topk_slot_row), several lanes a row (attnmeta_topk_slot_row_part,
 * lanes run in reverse order), and entry by entry (attnmeta_topk_slot).
 * Inputs sit in exact-size guarded allocations: a read past any of them
 * faults.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "attnmeta/device/topk_slot.h"
#include "guarded.h"
#include "op_inputs.h"
#include "topk_cases.h"
#include "topk_reference.h"

#define GUARD 32
#define POISON ((int32_t)0x5A5A5A5A)
#define PRESET_BIT (1 << 30)

enum { MODE_CASE, MODE_PLAIN, MODE_COUNT, MODE_COMPACT, NMODES };
enum { PATH_ROW, PATH_LANES, PATH_ENTRY, NPATHS };
static const char *const path_names[NPATHS] = {"row", "lanes", "entry"};

/* Output buffers with poisoned guard zones on both sides. */
typedef struct outputs {
  int32_t *out, *cnt, err;
  int64_t out_elems, cnt_elems;
} outputs;

static void outputs_make(outputs *o, int64_t T, int64_t S) {
  int64_t i;
  o->out_elems = T * S + 2 * GUARD;
  o->cnt_elems = T + 2 * GUARD;
  o->out = malloc((size_t)o->out_elems * 4);
  o->cnt = malloc((size_t)o->cnt_elems * 4);
  cr_assert(o->out && o->cnt, "out of host memory");
  for (i = 0; i < o->out_elems; i++) o->out[i] = POISON;
  for (i = 0; i < o->cnt_elems; i++) o->cnt[i] = POISON;
  o->err = PRESET_BIT;
}

static void outputs_free(outputs *o) {
  free(o->out);
  free(o->cnt);
}

/* An exact-size guarded copy of n elements of `size` bytes (NULL stays NULL). */
static void *guarded_copy(const void *src, int64_t n, size_t size) {
  void *p;
  if (!src) return NULL;
  p = amt_guarded_alloc((size_t)n * size);
  cr_assert(p || n == 0, "guarded allocation failed");
  if (p && n > 0) memcpy(p, src, (size_t)n * size);
  return p;
}

/* The inputs of a reference input, in guarded memory. */
typedef struct guarded_inputs {
  int32_t *topk, *qsl, *req_id, *table, *prefill_req, *ws;
  int64_t *token_slot;
  int64_t topk_elems, table_elems, T, R, P;
} guarded_inputs;

static void guarded_make(guarded_inputs *g, const amr_topk_input *in, int64_t topk_elems,
                         int64_t table_elems) {
  g->T = in->num_tokens;
  g->R = in->num_reqs;
  g->P = in->num_prefill;
  g->topk_elems = topk_elems;
  g->table_elems = table_elems;
  g->topk = guarded_copy(in->topk, topk_elems, 4);
  g->qsl = guarded_copy(in->qsl, g->R + 1, 4);
  g->req_id = guarded_copy(in->req_id, g->T, 4);
  g->table = guarded_copy(in->table, table_elems, 4);
  g->prefill_req = guarded_copy(in->prefill_req, g->T, 4);
  g->ws = guarded_copy(in->workspace_starts, g->P, 4);
  g->token_slot = guarded_copy(in->token_slot, g->T, 8);
}

static void guarded_free(guarded_inputs *g) {
  if (g->topk) amt_guarded_free(g->topk, (size_t)g->topk_elems * 4);
  if (g->qsl) amt_guarded_free(g->qsl, (size_t)(g->R + 1) * 4);
  if (g->req_id) amt_guarded_free(g->req_id, (size_t)g->T * 4);
  if (g->table) amt_guarded_free(g->table, (size_t)g->table_elems * 4);
  if (g->prefill_req) amt_guarded_free(g->prefill_req, (size_t)g->T * 4);
  if (g->ws) amt_guarded_free(g->ws, (size_t)g->P * 4);
  if (g->token_slot) amt_guarded_free(g->token_slot, (size_t)g->T * 8);
}

static attnmeta_topk op_of(const amr_topk_input *in, const guarded_inputs *g, int32_t stride_rows_arg,
                           int64_t out_stride, outputs *o, int count, int compact) {
  attnmeta_topk op;
  amt_topk_rows(&op, g->topk, in->num_tokens, in->topk_count, o->out + GUARD);
  op.topk_stride = in->topk_stride;
  op.out_stride = out_stride;
  amt_topk_table(&op, g->req_id, in->num_reqs, g->table, in->cols, in->block_size);
  op.block_table_stride = in->table_stride;
  op.query_start_loc = g->qsl;
  op.stride_rows = stride_rows_arg;
  amt_topk_dcp(&op, in->world, in->rank, in->interleave);
  amt_topk_prefill(&op, g->prefill_req, g->ws, in->num_prefill);
  op.token_slot = g->token_slot;
  op.valid_count = count ? o->cnt + GUARD : NULL;
  op.compact = compact;
  op.peer_blocks = in->peer_blocks;
  op.error_word = &o->err;
  return op;
}

/* The device functions, called as an engine's kernel would call them. */
static void run_fused(const attnmeta_topk *op, int path, int lanes) {
  int32_t t, j, lane;
  for (t = 0; t < op->num_tokens; t++) {
    if (path == PATH_ROW) {
      int32_t flags = 0;
      attnmeta_topk_slot_row(op, t, &flags);
      attnmeta_topk_flags_publish(op->error_word, flags);
    } else if (path == PATH_LANES) { /* in place only; each lane keeps its own flags */
      int32_t n = 0;
      for (lane = lanes - 1; lane >= 0; lane--) {
        int32_t flags = 0;
        n += attnmeta_topk_slot_row_part(op, t, lane, lanes, &flags);
        attnmeta_topk_flags_publish(op->error_word, flags);
      }
      if (op->valid_count) op->valid_count[t] = n;
    } else {
      const attnmeta_topk_token tok = attnmeta_topk_token_of(op, t);
      int32_t *out = op->out + (int64_t)t * op->out_stride, flags = 0, n = 0;
      for (j = 0; j < op->topk_count; j++) {
        const int32_t v = attnmeta_topk_slot(op, &tok, op->topk[(int64_t)t * op->topk_stride + j], &flags);
        if (!op->compact) out[j] = v;
        else if (v >= 0 && tok.counted) out[n] = v;
        n += v >= 0 && tok.counted;
      }
      for (j = n; op->compact && j < op->topk_count; j++) out[j] = -1;
      if (op->valid_count) op->valid_count[t] = n;
      attnmeta_topk_flags_publish(op->error_word, flags);
    }
  }
}

static attnmeta_context *cpu_ctx;
static attnmeta_context *cpu(void) { return cpu_ctx; }
static void open_cpu(void) {
  cr_assert(attnmeta_open(&cpu_ctx, ATTNMETA_BACKEND_CPU, 0) == ATTNMETA_OK, "%s", attnmeta_open_error());
}
static void close_cpu(void) { attnmeta_close(cpu_ctx); }
TestSuite(fused_topk, .init = open_cpu, .fini = close_cpu);

/* Library, device functions and reference on one input; `specified`: the
 * values are defined (well-formed boundaries), so all three agree. */
static void compare(const char *label, const amr_topk_input *in, int64_t topk_elems, int64_t table_elems,
                    int32_t stride_rows_arg, int64_t out_stride, int count, int compact, int specified) {
  const int64_t T = in->num_tokens, K = in->topk_count;
  int32_t *ref = malloc((size_t)(T * K + 1) * 4), *ref_cnt = malloc((size_t)(T + 1) * 4), ref_flags = 0;
  amr_topk_input rin = *in;
  guarded_inputs g;
  outputs lib;
  attnmeta_topk op;
  attnmeta_status st;
  int path, lanes, bad = 0;
  int64_t i;
  cr_assert(ref && ref_cnt, "out of host memory");
  rin.compact = compact;
  amr_topk(&rin, ref, ref_cnt, &ref_flags);
  guarded_make(&g, in, topk_elems, table_elems);
  outputs_make(&lib, T, out_stride);
  op = op_of(in, &g, stride_rows_arg, out_stride, &lib, count, compact);
  st = attnmeta_convert_topk(cpu(), &op, NULL);
  cr_assert(st == ATTNMETA_OK, "%s: attnmeta_convert_topk: %s (%s)", label, attnmeta_status_string(st),
            attnmeta_last_error(cpu()));
  /* the library against the reference, so the comparison below means something */
  for (i = 0; specified && i < T * K && bad < 4; i++) {
    const int32_t got = lib.out[GUARD + (i / K) * out_stride + i % K];
    if (got != ref[i]) {
      cr_expect_fail("%s: library out[%lld][%lld] = %d, reference %d", label, (long long)(i / K),
                     (long long)(i % K), got, ref[i]);
      bad++;
    }
  }
  for (i = 0; specified && count && i < T; i++)
    cr_expect(lib.cnt[GUARD + i] == ref_cnt[i], "%s: library valid_count[%lld] = %d, reference %d", label,
              (long long)i, lib.cnt[GUARD + i], ref_cnt[i]);
  if (specified)
    cr_expect(lib.err == (PRESET_BIT | ref_flags), "%s: library flags 0x%x, reference 0x%x", label,
              (unsigned)lib.err, (unsigned)ref_flags);

  for (path = 0; path < NPATHS; path++) {
    for (lanes = 1; lanes <= (path == PATH_LANES ? 5 : 1); lanes += 2) {
      outputs o;
      if (path == PATH_LANES && compact) continue; /* a compacting row needs one order: one thread */
      outputs_make(&o, T, out_stride);
      op = op_of(in, &g, stride_rows_arg, out_stride, &o, count, compact);
      run_fused(&op, path, lanes);
      bad = 0;
      for (i = 0; i < o.out_elems && bad < 4; i++)
        if (o.out[i] != lib.out[i] && (specified || o.out[i] == POISON || lib.out[i] == POISON)) {
          cr_expect_fail("%s, %s x%d: out element %lld = %d, library %d", label, path_names[path], lanes,
                         (long long)(i - GUARD), o.out[i], lib.out[i]);
          bad++;
        }
      for (i = 0; i < o.cnt_elems && bad < 4; i++)
        if (o.cnt[i] != lib.cnt[i] && (specified || o.cnt[i] == POISON || lib.cnt[i] == POISON)) {
          cr_expect_fail("%s, %s x%d: valid_count element %lld = %d, library %d", label, path_names[path],
                         lanes, (long long)(i - GUARD), o.cnt[i], lib.cnt[i]);
          bad++;
        }
      if (specified)
        cr_expect(o.err == lib.err, "%s, %s x%d: flags 0x%x, library 0x%x", label, path_names[path], lanes,
                  (unsigned)o.err, (unsigned)lib.err);
      else
        cr_expect(o.err & PRESET_BIT, "%s: the error word's preset bit was cleared", label);
      outputs_free(&o);
    }
  }
  outputs_free(&lib);
  guarded_free(&g);
  free(ref);
  free(ref_cnt);
}

Test(fused_topk, conformance_cases) {
  const int n = amt_topk_num_cases();
  int c, mode;
  cr_assert(n > 0);
  for (c = 0; c < n; c++) {
    amt_topk_batch *b = amt_topk_materialize(c);
    cr_assert(b, "case %d not built", c);
    for (mode = 0; mode < NMODES; mode++) {
      char label[128];
      const int compact = mode == MODE_CASE ? b->in.compact : mode == MODE_COMPACT;
      const int count = mode == MODE_CASE ? b->count : mode != MODE_PLAIN;
      snprintf(label, sizeof label, "%s mode %d", b->name, mode);
      compare(label, &b->in, b->topk_elems, b->table_elems, b->stride_rows_arg, b->out_stride, count,
              compact, !b->values_unspecified);
    }
    amt_topk_batch_free(b);
  }
}

/* ---- random inputs, hostile data throughout ---- */
static uint64_t rng_state;
static uint32_t rnd(uint32_t n) { /* in [0, n); xorshift: no wrapping arithmetic */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return n ? (uint32_t)(rng_state >> 32) % n : 0;
}
static int32_t pick(const int32_t *v, uint32_t n) { return v[rnd(n)]; }

Test(fused_topk, random_hostile) {
  int round;
  rng_state = 0x5eed;
  for (round = 0; round < 400; round++) {
    static const int32_t sizes[] = {1, 2, 3, 7, 16, 64, 127};
    static const int32_t block_sizes[] = {1, 3, 16, 64, 256};
    const int32_t T = pick(sizes, 7), K = pick(sizes, 6), R = (int32_t)rnd(5), cols = (int32_t)rnd(9);
    const int64_t topk_stride = K + rnd(3), table_stride = cols + rnd(2), out_stride = K + rnd(3);
    const int32_t bs = pick(block_sizes, 5), P = (int32_t)rnd(3);
    const int world = rnd(3) ? 1 : 2 + (int)rnd(3), use_qsl = rnd(3) == 0;
    const int32_t stride_rows_arg = rnd(3) ? 0 : bs + (int32_t)rnd(1000);
    int32_t *topk = calloc((size_t)(T * topk_stride), 4), *req = malloc((size_t)T * 4);
    int32_t *qsl = malloc((size_t)(R + 1) * 4), *table = malloc((size_t)(R * table_stride + 1) * 4);
    int32_t *pre = malloc((size_t)T * 4), *ws = malloc((size_t)(P + 1) * 4);
    int64_t *slot = malloc((size_t)T * 8);
    int64_t i;
    amr_topk_input in;
    char label[96];
    int mode;
    cr_assert(topk && req && qsl && table && pre && ws && slot, "out of host memory");
    for (i = 0; i < T * topk_stride; i++) {
      const uint32_t kind = rnd(10);
      topk[i] = kind == 0 ? -1 - (int32_t)rnd(5) : kind == 1 ? INT32_MAX - (int32_t)rnd(3)
              : kind == 2 ? (int32_t)rnd((uint32_t)(cols + 3) * (uint32_t)bs * (uint32_t)world)
                          : (int32_t)rnd((uint32_t)(cols ? cols : 1) * (uint32_t)bs * (uint32_t)world);
    }
    for (i = 0; i < T; i++) {
      const uint32_t kind = rnd(8);
      req[i] = kind == 0 ? -1 - (int32_t)rnd(3) : kind == 1 ? R + (int32_t)rnd(3) : (int32_t)rnd((uint32_t)(R ? R : 1));
      pre[i] = rnd(3) ? -1 - (int32_t)rnd(2) : (int32_t)rnd((uint32_t)P + 2);
      slot[i] = rnd(6) ? (int64_t)rnd(1u << 20) : -1 - (int64_t)rnd(4);
    }
    qsl[0] = 0; /* well-formed boundaries, some empty requests, some padding */
    for (i = 1; i <= R; i++) qsl[i] = qsl[i - 1] + (int32_t)rnd((uint32_t)(T / (R ? R : 1)) + 2);
    if (qsl[R] > T) qsl[R] = T;
    for (i = 1; i < R; i++) if (qsl[i] > qsl[R]) qsl[i] = qsl[R];
    for (i = 0; i < R * table_stride; i++) {
      const uint32_t kind = rnd(10);
      table[i] = kind == 0 ? -1 - (int32_t)rnd(1000) : kind == 1 ? INT32_MAX / (int32_t)(1 + rnd(4))
                                                   : (int32_t)rnd(100000);
    }
    for (i = 0; i < P; i++) ws[i] = rnd(5) ? (int32_t)rnd(1u << 24) : INT32_MAX - (int32_t)rnd(100);
    memset(&in, 0, sizeof in);
    in.topk = topk;
    in.topk_stride = topk_stride;
    in.num_tokens = T;
    in.topk_count = K;
    in.qsl = use_qsl ? qsl : NULL;
    in.req_id = use_qsl ? NULL : req;
    in.num_reqs = R;
    in.table = R * table_stride > 0 ? table : NULL;
    in.cols = cols;
    in.table_stride = table_stride;
    in.block_size = bs;
    in.stride_rows = stride_rows_arg ? stride_rows_arg : bs;
    in.world = world;
    in.rank = (int32_t)rnd((uint32_t)world);
    in.interleave = 1 + (int32_t)rnd(4);
    in.prefill_req = rnd(2) ? pre : NULL;
    in.workspace_starts = in.prefill_req && P ? ws : NULL;
    in.num_prefill = in.prefill_req ? P : 0;
    in.token_slot = rnd(2) ? slot : NULL;
    for (mode = MODE_PLAIN; mode < NMODES; mode++) {
      snprintf(label, sizeof label, "random round %d mode %d", round, mode);
      compare(label, &in, T * topk_stride, R * table_stride, stride_rows_arg, out_stride, mode != MODE_PLAIN,
              mode == MODE_COMPACT, 1);
    }
    free(topk);
    free(req);
    free(qsl);
    free(table);
    free(pre);
    free(ws);
    free(slot);
  }
}

/* Settings the library refuses make every entry -1 and raise nothing,
 * rather than dividing by zero or reading anywhere. */
Test(fused_topk, refused_settings_convert_nothing) {
  const int32_t topk[4] = {0, 1, 5, 9}, req[1] = {0}, table[2] = {3, 4};
  int32_t out[4], cnt = POISON, flags = 0, which, j;
  for (which = 0; which < 6; which++) {
    attnmeta_topk op;
    amt_topk_rows(&op, topk, 1, 4, out);
    amt_topk_table(&op, req, 1, table, 2, 4);
    op.valid_count = &cnt;
    if (which == 0) op.block_size = 0;
    if (which == 1) op.stride_rows = -1;
    if (which == 2) op.dcp_world_size = 0;
    if (which == 3) op.dcp_interleave = 0;
    if (which == 4) op.dcp_rank = 1;
    if (which == 5) op.dcp_rank = -1;
    for (j = 0; j < 4; j++) out[j] = POISON;
    attnmeta_topk_slot_row(&op, 0, &flags);
    for (j = 0; j < 4; j++) cr_expect(out[j] == -1, "setting %d: out[%d] = %d", which, j, out[j]);
    cr_expect(cnt == 0, "setting %d: count %d", which, cnt);
    cr_expect(flags == 0, "setting %d: flags 0x%x", which, (unsigned)flags);
    cr_expect(attnmeta_convert_topk(cpu(), &op, NULL) != ATTNMETA_OK, "setting %d accepted by the library", which);
  }
}
