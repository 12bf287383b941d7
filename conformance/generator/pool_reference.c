// SPDX-License-Identifier: Apache-2.0
#include "pool_reference.h"

#include <stddef.h>

#include "attnmeta/attnmeta.h"

/* The row's entry at column `col`, or -1 with its flag. */
static int32_t entry_at(const amr_pool_input *in, int64_t rp, int64_t col, int32_t *flags) {
  if (rp < 0 || rp >= in->pool_rows) {
    *flags |= ATTNMETA_FLAG_POOL_INDEX_OUT_OF_RANGE;
    return -1;
  }
  if (col < 0 || col >= in->pool_cols) {
    *flags |= ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
    return -1;
  }
  return in->req_to_token[rp * in->pool_stride + col];
}

void amr_pool(const amr_pool_input *in, int32_t *kv_indices, int32_t *indptr_out,
              int32_t *page_table, int32_t *flags) {
  int64_t total = 0; /* tokens of the rows before b, each max(length, 0) */
  int32_t b;
  *flags = 0;
  if (indptr_out) indptr_out[0] = 0;
  for (b = 0; b < in->num_reqs; ++b) {
    /* the low 32 bits, as SGLang's kernels load them */
    const int32_t length = (int32_t)(uint32_t)((uint64_t)in->lengths[b] & 0xffffffffu);
    const int64_t tokens = length < 0 ? 0 : length;
    const int64_t rp = in->req_pool_indices[b];
    const int64_t start_col =
        in->kv_start_idx ? (int32_t)(uint32_t)((uint64_t)in->kv_start_idx[b] & 0xffffffffu) : 0;
    int64_t j;
    if (length < 0) *flags |= ATTNMETA_FLAG_SEQ_LEN_NEGATIVE;
    if (indptr_out) {
      if (total + tokens > INT32_MAX) {
        *flags |= ATTNMETA_FLAG_SCAN_OVERFLOW;
        indptr_out[b + 1] = INT32_MAX;
      } else {
        indptr_out[b + 1] = (int32_t)(total + tokens);
      }
    }
    if (kv_indices) {
      int64_t floor = INT64_MIN; /* the largest of kv_indptr[0..b] */
      int32_t k;
      if (in->kv_indptr)
        for (k = 0; k <= b; ++k)
          if (in->kv_indptr[k] > floor) floor = in->kv_indptr[k];
      for (j = 0; j < tokens; ++j) {
        int64_t at;
        if (in->kv_indptr) {
          at = (int64_t)in->kv_indptr[b] + j;
          if (at < floor) { /* inside an earlier row's place */
            *flags |= ATTNMETA_FLAG_QSL_DECREASING;
            continue;
          }
          if (at >= in->kv_indptr[b + 1]) { /* the row outgrows its place */
            *flags |= ATTNMETA_FLAG_QSL_DECREASING;
            break;
          }
        } else {
          at = total + j;
          if (at >= INT32_MAX) break; /* the stored offsets cannot say it */
        }
        if (at >= in->capacity) { /* and so is every later one (up to its place's end) */
          *flags |= ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE;
          if (in->kv_indptr && (int64_t)in->kv_indptr[b] + tokens > in->kv_indptr[b + 1])
            *flags |= ATTNMETA_FLAG_QSL_DECREASING;
          break;
        }
        if (at < 0) {
          *flags |= ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE;
          continue;
        }
        kv_indices[at] = entry_at(in, rp, start_col + j, flags);
      }
    }
    if (page_table) {
      int64_t pages = 0, p;
      while (pages * in->page_size < tokens) ++pages;
      if (pages > in->page_width) {
        *flags |= ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
        pages = in->page_width;
      }
      for (p = 0; p < pages; ++p) {
        int32_t f = 0, v = entry_at(in, rp, start_col + p * in->page_size, &f);
        if (f == 0 && v < 0) {
          f = ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
          v = -1;
        } else if (f == 0) {
          v = v / in->page_size;
        }
        *flags |= f;
        page_table[(int64_t)b * in->page_stride + p] = v;
      }
    }
    total += tokens;
  }
}
