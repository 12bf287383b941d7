// SPDX-License-Identifier: Apache-2.0
/*
 * The example's data and its naive reference, shared by the CPU program
 * (C) and the CUDA program (C++): a layer's indexer scores for T tokens of
 * R requests, the requests' context lengths and block tables, and the
 * selection rule both programs implement.
 *
 * Selection rule: token t of request r = req_id[t] looks at the positions
 * [0, n) with n = min(seq_lens[r], L) of its score row; it keeps the K
 * highest scores (equal scores: the lower position first), writes the kept
 * positions in increasing order, then -1 up to K.
 */
#ifndef FUSED_TOPK_PROBLEM_H
#define FUSED_TOPK_PROBLEM_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <attnmeta/attnmeta.h>

typedef struct ft_problem {
  int32_t T, R, L, K; /* tokens, requests, score columns, kept per token */
  int32_t block_size, cols;
  float *scores;      /* [T][L] */
  int32_t *req_id;    /* [T] */
  int32_t *seq_lens;  /* [R] */
  int32_t *table;     /* [R][cols] */
} ft_problem;

static inline uint32_t ft_hash(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

/* Scores as an order-preserving unsigned key: a higher score, a higher key. */
static inline uint32_t ft_key(float score) {
  uint32_t u;
  memcpy(&u, &score, 4);
  return (u & 0x80000000U) ? ~u : u | 0x80000000U;
}

/* A problem with ties (scores in few distinct values in some rows), short
 * contexts (fewer than K positions), and shuffled block ids. Returns 0 on
 * allocation failure. */
static inline int ft_problem_make(ft_problem *p, int32_t T, int32_t R, int32_t L, int32_t K, uint32_t seed) {
  int64_t i;
  int32_t t, r, c;
  p->T = T;
  p->R = R;
  p->L = L;
  p->K = K;
  p->block_size = 64;
  p->cols = (L + p->block_size - 1) / p->block_size;
  p->scores = (float *)malloc((size_t)T * (size_t)L * sizeof(float));
  p->req_id = (int32_t *)malloc((size_t)T * 4);
  p->seq_lens = (int32_t *)malloc((size_t)R * 4);
  p->table = (int32_t *)malloc((size_t)R * (size_t)p->cols * 4);
  if (!p->scores || !p->req_id || !p->seq_lens || !p->table) return 0;
  for (r = 0; r < R; r++) {
    const uint32_t h = ft_hash(seed ^ (uint32_t)r * 977U);
    p->seq_lens[r] = r % 5 == 1 ? 1 + (int32_t)(h % (uint32_t)K) : L / 2 + (int32_t)(h % (uint32_t)(L / 2 + 1));
    for (c = 0; c < p->cols; c++)
      p->table[(int64_t)r * p->cols + c] = (int32_t)(ft_hash(seed + (uint32_t)(r * p->cols + c)) % 400000U);
  }
  for (t = 0; t < T; t++) {
    const int coarse = t % 3 == 2; /* few distinct values: many ties */
    p->req_id[t] = (int32_t)((int64_t)t * R / T);
    for (c = 0; c < L; c++) {
      const uint32_t h = ft_hash(seed * 31U + (uint32_t)t * 65537U + (uint32_t)c);
      i = (int64_t)t * L + c;
      p->scores[i] = coarse ? (float)(h % 7U) : (float)((int32_t)(h % 2000001U) - 1000000) / 1000.0f;
    }
  }
  return 1;
}

static inline void ft_problem_free(ft_problem *p) {
  free(p->scores);
  free(p->req_id);
  free(p->seq_lens);
  free(p->table);
}

static inline int32_t ft_candidates(const ft_problem *p, int32_t t) {
  const int32_t n = p->seq_lens[p->req_id[t]];
  return n < p->L ? (n > 0 ? n : 0) : p->L;
}

static inline int ft_cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}
static inline int ft_cmp_i32(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return x < y ? -1 : x > y;
}

/* The reference of the selection, by sorting: each row's (score, position)
 * pairs in rank order, the first K kept, sorted back into position order.
 * positions: [T][K]. Returns 0 on allocation failure. */
static inline int ft_reference_select(const ft_problem *p, int32_t *positions) {
  uint64_t *rank = (uint64_t *)malloc((size_t)p->L * sizeof(uint64_t));
  int32_t t, i;
  if (!rank) return 0;
  for (t = 0; t < p->T; t++) {
    const float *s = p->scores + (int64_t)t * p->L;
    int32_t *row = positions + (int64_t)t * p->K;
    const int32_t n = ft_candidates(p, t), kept = n < p->K ? n : p->K;
    for (i = 0; i < n; i++) rank[i] = (uint64_t)(~ft_key(s[i])) << 32 | (uint32_t)i;
    qsort(rank, (size_t)n, sizeof(uint64_t), ft_cmp_u64);
    for (i = 0; i < kept; i++) row[i] = (int32_t)(rank[i] & 0xffffffffU);
    qsort(row, (size_t)kept, sizeof(int32_t), ft_cmp_i32);
    for (i = kept; i < p->K; i++) row[i] = -1;
  }
  free(rank);
  return 1;
}

/* The conversion of positions [T][K] to slots, as the unfused engine does
 * it: an attnmeta_topk over the problem's table. */
static inline attnmeta_topk ft_topk_op(const ft_problem *p, const int32_t *positions, const int32_t *req_id,
                                const int32_t *table, int32_t *out, int32_t *error_word) {
  attnmeta_topk op;
  attnmeta_topk_init(&op);
  op.topk = positions;
  op.topk_stride = p->K;
  op.num_tokens = p->T;
  op.topk_count = p->K;
  op.req_id = req_id;
  op.num_reqs = p->R;
  op.block_table = table;
  op.block_table_cols = p->cols;
  op.block_table_stride = p->cols;
  op.block_size = p->block_size;
  op.out = out;
  op.out_stride = p->K;
  op.error_word = error_word;
  return op;
}

#endif /* FUSED_TOPK_PROBLEM_H */
