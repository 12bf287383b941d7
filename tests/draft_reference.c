// SPDX-License-Identifier: Apache-2.0
#include "draft_reference.h"

#define F_OUTSIDE_CAPACITY 4
#define F_NEGATIVE 8
#define F_COLUMN 32
#define F_ROW 1024
#define F_SCAN 2048

/* The low 32 bits of a + b: the sum wraps modulo 2^32 on purpose (clang's
 * unsigned-overflow check) */
#if defined(__clang__)
__attribute__((no_sanitize("unsigned-integer-overflow")))
#endif
static int32_t low32_sum(int64_t a, int32_t b) {
  return (int32_t)((uint32_t)(uint64_t)a + (uint32_t)b);
}

/* int32(lengths[b] + delta) on the low 32 bits, wrapping. */
static int64_t length_of(const amr_draft_input *in, int32_t b, int32_t *flags) {
  const int32_t len = low32_sum(in->lengths[b], in->length_delta);
  if (len < 0) {
    *flags |= F_NEGATIVE;
    return 0;
  }
  return len;
}

/* The pool entry at column col of request b's row, or -1 with a flag. */
static int32_t entry(const amr_draft_input *in, int32_t b, int64_t col, int32_t *flags) {
  const int64_t r = in->req_pool_indices[b];
  if (r < 0 || r >= in->pool_rows) {
    *flags |= F_ROW;
    return -1;
  }
  if (col < 0 || col >= in->pool_cols) {
    *flags |= F_COLUMN;
    return -1;
  }
  return in->req_to_token[r * in->pool_stride + col];
}

/* The column of draft slot j of branch k, for a row of n tokens. */
static int64_t draft_column(const amr_draft_input *in, int64_t n, int64_t k, int64_t j) {
  int64_t partial, pages_per_branch, page_start;
  if (in->page_size == 1 || in->topk == 1) return n + k * in->steps + j;
  partial = n % in->page_size;                     /* tokens of the row's last page */
  page_start = n - partial;                        /* where that page starts */
  pages_per_branch = (partial + in->steps + in->page_size - 1) / in->page_size;
  return page_start + k * pages_per_branch * in->page_size + partial + j;
}

static void slot_lists(const amr_draft_input *in, int32_t *indices, int32_t *flags) {
  int32_t i, b, k;
  for (i = 0; i < in->steps; i++) {
    int32_t *row = indices + (int64_t)i * in->indices_stride;
    int64_t cursor = 0;
    for (b = 0; b < in->num_reqs; b++) {
      const int64_t n = length_of(in, b, flags);
      for (k = 0; k < in->topk; k++) {
        int64_t j;
        for (j = 0; j < n + i + 1; j++, cursor++) {
          if (cursor >= in->width) {
            *flags |= F_OUTSIDE_CAPACITY;
            continue;
          }
          row[cursor] = entry(in, b, j < n ? j : draft_column(in, n, k, j - n), flags);
        }
      }
    }
  }
}

static void indptr_rows(const amr_draft_input *in, int32_t *indptr, int32_t *flags) {
  const int64_t tokens = (int64_t)in->num_reqs * in->topk;
  int32_t i;
  for (i = 0; i < in->steps; i++) {
    int32_t *row = indptr + (int64_t)i * in->indptr_stride;
    int64_t e, sum = 0;
    row[0] = 0;
    for (e = 1; e <= tokens; e++) {
      const int32_t pos = (int32_t)(uint32_t)(uint64_t)in->positions[e - 1];
      int64_t v;
      if (pos < 0) *flags |= F_NEGATIVE;
      sum += pos > 0 ? pos : 0;
      v = sum + e * (i + 1);
      if (v > INT32_MAX) {
        *flags |= F_SCAN;
        v = INT32_MAX;
      }
      row[e] = (int32_t)v;
    }
  }
}

void amr_draft_lists(const amr_draft_input *in, int32_t *indices, int32_t *indptr,
                     int32_t *flags) {
  int32_t b;
  *flags = 0;
  for (b = 0; b < in->num_reqs; b++) (void)length_of(in, b, flags);
  if (indices) slot_lists(in, indices, flags);
  if (indptr) indptr_rows(in, indptr, flags);
}
