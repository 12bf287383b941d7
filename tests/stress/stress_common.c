// SPDX-License-Identifier: Apache-2.0
/* Plumbing of the stress and misuse tests. See stress_common.h. */
#include "stress_common.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../op_inputs.h"
#include "cases.h"

static pthread_mutex_t tally_lock = PTHREAD_MUTEX_INITIALIZER;
static long passed, failed;

void st_pass(void) {
  pthread_mutex_lock(&tally_lock);
  passed++;
  pthread_mutex_unlock(&tally_lock);
}

void st_failf(const char *fmt, ...) {
  va_list args;
  pthread_mutex_lock(&tally_lock);
  failed++;
  if (failed <= 20) {
    fprintf(stderr, "FAIL: ");
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, "\n");
  }
  pthread_mutex_unlock(&tally_lock);
}

int st_report(void) {
  pthread_mutex_lock(&tally_lock);
  printf("%ld passed, %ld failed\n", passed, failed);
  pthread_mutex_unlock(&tally_lock);
  return failed ? 1 : 0;
}

int st_iters(int fallback) {
  const char *env = getenv("ATTNMETA_STRESS_ITERS");
  const int v = env ? atoi(env) : 0;
  return v > 0 ? v : fallback;
}

int64_t st_range(uint64_t *state, int64_t lo, int64_t hi) {
  return lo + (int64_t)(amt_rand(state) % (uint64_t)(hi - lo + 1));
}

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    abort();
  }
  return p;
}

void st_batch_make(st_batch *b, uint64_t *rng, int hostile) {
  static const int32_t block_sizes[] = {1, 2, 16, 64, 256};
  const int32_t R = (int32_t)st_range(rng, 0, 48);
  int64_t total = 0, max_seq = 0, need, vb;
  int32_t r;
  int64_t i;
  memset(b, 0, sizeof *b);
  b->qsl = xcalloc((size_t)R + 1, sizeof(int32_t));
  b->seq_lens = xcalloc((size_t)R + 1, sizeof(int32_t));
  for (r = 0; r < R; ++r) {
    total += st_range(rng, 0, 3) == 0 ? 0 : st_range(rng, 1, 8);
    b->qsl[r + 1] = (int32_t)total;
  }
  b->in.qsl = b->qsl;
  b->in.R = R;
  b->in.T = (int32_t)(total + st_range(rng, 0, 12));
  b->in.C = (int32_t)(b->in.T + st_range(rng, 0, 9));
  b->in.num_mapped = st_range(rng, 0, 3) ? -1 : (int32_t)st_range(rng, 0, b->in.T + 2);
  b->in.block_size = block_sizes[st_range(rng, 0, 4)];
  b->in.world = st_range(rng, 0, 2) ? 1 : (int32_t)st_range(rng, 2, 4);
  b->in.rank = (int32_t)st_range(rng, 0, b->in.world - 1);
  b->in.interleave = st_range(rng, 0, 2) ? 1 : (int32_t)st_range(rng, 2, 8);
  for (r = 0; r < R; ++r) {
    const int64_t q = (int64_t)b->qsl[r + 1] - b->qsl[r];
    b->seq_lens[r] = (int32_t)(q + st_range(rng, 0, 700));
    if (hostile && st_range(rng, 0, 5) == 0)
      b->seq_lens[r] = st_range(rng, 0, 1) ? (int32_t)(q - st_range(rng, 1, 3)) : -7;
    if (b->seq_lens[r] > max_seq) max_seq = b->seq_lens[r];
  }
  b->in.seq_lens = b->seq_lens;
  vb = (int64_t)b->in.block_size * b->in.world;
  need = (max_seq + vb - 1) / vb;
  b->in.cols = (int32_t)(hostile ? st_range(rng, 0, need + 1) : need + st_range(rng, 0, 3));
  b->in.in_stride = b->in.cols + st_range(rng, 0, 1) * st_range(rng, 1, 5);
  b->out_stride = b->in.cols + st_range(rng, 0, 1) * st_range(rng, 1, 5);
  b->table = xcalloc((size_t)(R * b->in.in_stride) + 1, sizeof(int32_t));
  for (i = 0; i < R * b->in.in_stride; ++i) {
    b->table[i] = (int32_t)st_range(rng, 0, 1 << 20);
    if (hostile && st_range(rng, 0, 40) == 0) b->table[i] = -(int32_t)st_range(rng, 1, 9);
  }
  b->in.block_table = b->in.cols > 0 ? b->table : NULL;
  b->ref = amr_alloc(&b->in);
  amr_build(&b->in, b->ref);
  b->ref_flags = b->ref->request_flags | b->ref->slot_flags;
}

void st_batch_free(st_batch *b) {
  amr_free(b->ref);
  free(b->qsl);
  free(b->seq_lens);
  free(b->table);
  memset(b, 0, sizeof *b);
}

void st_outputs_alloc(st_outputs *o, const st_batch *b) {
  const size_t T = (size_t)b->in.T, C = (size_t)b->in.C;
  o->token_to_req = xcalloc(T, sizeof(int32_t));
  o->seq_lens_out = xcalloc(C, sizeof(int32_t));
  o->global_seq_lens = xcalloc(T, sizeof(int32_t));
  o->block_table_out = xcalloc(T * (size_t)b->out_stride, sizeof(int32_t));
  o->decode_lens = xcalloc(T, sizeof(int32_t));
  o->req_indices = xcalloc(T, sizeof(int32_t));
  o->per_req_lens = xcalloc((size_t)b->in.R, sizeof(int32_t));
  o->positions = xcalloc(T, sizeof(int64_t));
  o->slots = xcalloc(C, sizeof(int64_t));
  o->error_word = 0;
}

void st_outputs_free(st_outputs *o) {
  free(o->token_to_req);
  free(o->seq_lens_out);
  free(o->global_seq_lens);
  free(o->block_table_out);
  free(o->decode_lens);
  free(o->req_indices);
  free(o->per_req_lens);
  free(o->positions);
  free(o->slots);
}

void st_step_fill(attnmeta_step *s, const st_batch *b, st_outputs *o, int32_t *error_word) {
  amt_step_tokens(s, b->qsl, b->in.R, b->in.T, b->in.C);
  amt_step_table(s, b->seq_lens, b->in.block_table, b->in.cols, b->in.in_stride, b->in.block_size);
  s->num_mapped = b->in.num_mapped;
  s->dcp_world_size = b->in.world;
  s->dcp_rank = b->in.rank;
  s->dcp_interleave = b->in.interleave;
  amt_step_outputs(s, o->token_to_req, o->seq_lens_out, o->global_seq_lens, o->decode_lens,
                   o->req_indices, o->per_req_lens, o->positions, o->slots);
  s->block_table_out = o->block_table_out;
  s->block_table_out_stride = b->out_stride;
  s->error_word = error_word;
}

#define ST_CMP(what, got, want, i)                                                    \
  do {                                                                                \
    if ((int64_t)(got) != (int64_t)(want)) {                                          \
      snprintf(why, why_size, "%s[%lld] = %lld, reference %lld", what, (long long)(i), \
               (long long)(got), (long long)(want));                                  \
      return 0;                                                                       \
    }                                                                                 \
  } while (0)

int st_compare(const st_batch *b, const st_outputs *o, char *why, size_t why_size) {
  const amr_output *ref = b->ref;
  int64_t t, c;
  for (t = 0; t < b->in.T; ++t) {
    ST_CMP("token_to_req", o->token_to_req[t], ref->token_to_req[t], t);
    ST_CMP("global_seq_lens_out", o->global_seq_lens[t], ref->global_seq_lens[t], t);
    ST_CMP("decode_lens_out", o->decode_lens[t], ref->decode_lens[t], t);
    ST_CMP("req_indices_out", o->req_indices[t], ref->req_indices[t], t);
    ST_CMP("positions", o->positions[t], ref->positions[t], t);
    for (c = 0; c < b->in.cols; ++c)
      ST_CMP("block_table_out", o->block_table_out[t * b->out_stride + c],
             ref->block_table_out[t * b->in.cols + c], t * b->out_stride + c);
  }
  for (t = 0; t < b->in.C; ++t) {
    ST_CMP("seq_lens_out", o->seq_lens_out[t], ref->seq_lens_out[t], t);
    ST_CMP("slot_mapping", o->slots[t], ref->slots[t], t);
  }
  for (t = 0; t < b->in.R; ++t) ST_CMP("per_req_lens_out", o->per_req_lens[t], ref->per_req_lens[t], t);
  return 1;
}
