// SPDX-License-Identifier: Apache-2.0
#include "pool_reference.h"

#include <stddef.h>

#include "attnmeta/attnmeta.h"

/* The low 32 bits of a + b: the sum wraps modulo 2^32 on purpose (clang's
 * unsigned-overflow check) */
#if defined(__clang__)
__attribute__((no_sanitize("unsigned-integer-overflow")))
#endif
static int32_t low32_sum(int64_t a, int32_t b) {
  return (int32_t)((uint32_t)(uint64_t)a + (uint32_t)b);
}

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

/* ---- section 15, DCP ---- */
static int dcp_on(const amr_pool_input *in) { return in->dcp_world > 1; }
static int64_t dcp_run(const amr_pool_input *in) {
  return in->dcp_interleave > 1 ? in->dcp_interleave : 1;
}

/* Whether the rank keeps position x: x's run floor(x / I), mod W, is k. */
static int dcp_keeps(const amr_pool_input *in, int64_t x) {
  const int64_t run = dcp_run(in);
  int64_t q = x / run, owner;
  if (x % run != 0 && x < 0) --q; /* floor */
  owner = q % in->dcp_world;
  if (owner < 0) owner += in->dcp_world;
  return owner == in->dcp_rank;
}

/* A row's columns, walked one position at a time from its start column:
 * `kept` of the positions in [start, at) are the rank's. */
typedef struct dcp_walk {
  int64_t at, kept;
} dcp_walk;

/* The column of the row's entry j (j never decreasing along a walk): the
 * j-th position the rank keeps from the start on. Without DCP, start + j.
 * Once the walk is past the pool's columns the answer is outside too, so
 * it stops there. */
static int64_t walk_column(const amr_pool_input *in, dcp_walk *w, int64_t start, int64_t j) {
  if (!dcp_on(in)) return start + j;
  for (;;) {
    if (w->at >= in->pool_cols) return w->at;
    if (dcp_keeps(in, w->at)) {
      if (w->kept == j) return w->at;
      ++w->kept;
    }
    ++w->at;
  }
}

/* The slot the outputs hold for pool entry v: v, or under DCP the
 * rank-local slot (v div (W I)) I + v mod I, -1 with flag 64 for v < 0.
 * `f` holds the entry's own flag (then v is -1 already). */
static int32_t slot_of(const amr_pool_input *in, int32_t v, int32_t *f) {
  const int64_t run = dcp_run(in);
  if (!dcp_on(in) || *f) return v;
  if (v < 0) {
    *f |= ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
    return -1;
  }
  return (int32_t)(v / (in->dcp_world * run) * run + v % run);
}

/* Entry j of the row at a walk, as kv_indices and token_table hold it. */
static int32_t walked_slot(const amr_pool_input *in, dcp_walk *w, int64_t rp, int64_t start,
                           int64_t j, int32_t *flags) {
  int32_t f = 0;
  const int32_t v = slot_of(in, entry_at(in, rp, walk_column(in, w, start, j), &f), &f);
  *flags |= f;
  return v;
}

/* A page of the SWA page table from its first token's slot v (a valid
 * slot, or -1 with its flag already raised). */
static int32_t swa_page(const amr_pool_input *in, int32_t v, int32_t *f) {
  int64_t w;
  if (*f) return -1;
  if (v < 0) {
    *f = ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
    return -1;
  }
  if (v >= in->swa_map_len) {
    *f = ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
    return -1;
  }
  w = in->full_to_swa[v];
  if (w < 0) {
    *f = ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
    return -1;
  }
  if (w / in->page_size > INT32_MAX) {
    *f = ATTNMETA_FLAG_SLOT_OUT_OF_RANGE;
    return -1;
  }
  return (int32_t)(w / in->page_size);
}

/* x clipped to the top-k (contract section 13). */
static int64_t clip_topk(const amr_pool_input *in, int64_t x) {
  int64_t whole, kept;
  if (in->topk_pool <= 1) return x < in->topk ? x : in->topk;
  whole = x - x % in->topk_pool;
  kept = whole < in->topk ? whole : in->topk;
  return kept + (x - whole);
}

/* Sections 12 and 13 for request b of n tokens and `rows` rows from row
 * `first`: its rows' lengths, the clipped lengths' running sum *clipped,
 * and its rows of every table. */
static void rows_of(const amr_pool_input *in, const amr_pool_outputs *out, int32_t b, int64_t n,
                    int64_t rows, int64_t first, int64_t rp, int64_t start_col, int64_t *clipped,
                    int32_t *flags) {
  const int64_t tokens = in->length_cap > 0 && n > in->length_cap ? in->length_cap : n;
  int64_t pages = 0, cols = tokens, p, c;
  int64_t j;
  (void)b;
  if (out->page_table || out->swa_page_table)
    while (pages * in->page_size < tokens) ++pages;
  if (in->fill_to_width) {
    pages = in->page_width;
    cols = in->token_width;
  }
  if ((out->page_table || out->swa_page_table) && pages > in->page_width) {
    *flags |= ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
    pages = in->page_width;
  }
  if (out->token_table && cols > in->token_width) {
    *flags |= ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE;
    cols = in->token_width;
  }
  for (j = 0; j < rows; ++j) {
    const int64_t e = first + j;
    const int64_t seen = n - rows + j + 1 > 0 ? n - rows + j + 1 : 0;
    if (e >= in->num_rows) { /* rows past T are dropped */
      *flags |= ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE;
      break;
    }
    if (out->expanded_lens) out->expanded_lens[e] = (int32_t)seen;
    if (out->topk_lens) out->topk_lens[e] = (int32_t)clip_topk(in, seen);
    *clipped += clip_topk(in, seen);
    if (out->topk_indptr) {
      if (*clipped > INT32_MAX) *flags |= ATTNMETA_FLAG_SCAN_OVERFLOW;
      out->topk_indptr[e + 1] = *clipped > INT32_MAX ? INT32_MAX : (int32_t)*clipped;
    }
    dcp_walk pw = {start_col, 0}, tw = {start_col, 0};
    for (p = 0; p < pages; ++p) {
      int32_t f = 0, v = entry_at(in, rp, walk_column(in, &pw, start_col, p * in->page_size), &f);
      if (out->swa_page_table) {
        int32_t g = f;
        out->swa_page_table[e * in->swa_stride + p] = swa_page(in, v, &g);
        *flags |= g;
      }
      if (out->page_table) {
        if (f == 0 && v < 0) f = ATTNMETA_FLAG_BLOCK_ID_NEGATIVE;
        v = slot_of(in, v, &f);
        out->page_table[e * in->page_stride + p] = f ? -1 : v / in->page_size;
        *flags |= f;
      }
    }
    if (out->token_table)
      for (c = 0; c < cols; ++c)
        out->token_table[e * in->token_stride + c] = walked_slot(in, &tw, rp, start_col, c, flags);
  }
}

void amr_pool(const amr_pool_input *in, int32_t *kv_indices, int32_t *indptr_out,
              int32_t *page_table, int32_t *flags) {
  amr_pool_outputs out = {0};
  out.kv_indices = kv_indices;
  out.indptr_out = indptr_out;
  out.page_table = page_table;
  amr_pool_all(in, &out, flags);
}

void amr_pool_all(const amr_pool_input *in, const amr_pool_outputs *out, int32_t *flags) {
  int32_t *kv_indices = out->kv_indices, *indptr_out = out->indptr_out;
  int64_t total = 0;   /* tokens of the rows before b, each max(length, 0) */
  int64_t clipped = 0; /* the clipped lengths of the rows before */
  int64_t rows_before = 0;
  int32_t b;
  amr_pool_input fixed = *in; /* num_rows: T */
  const int32_t per_req = in->rows_per_req > 1 ? in->rows_per_req : 1;
  if (!in->query_lens) fixed.num_rows = in->num_reqs * per_req;
  if (in->query_rows) fixed.num_rows = in->num_reqs;
  in = &fixed;
  *flags = 0;
  if (out->query_indptr) out->query_indptr[0] = 0;
  if (indptr_out) indptr_out[0] = 0;
  if (out->topk_indptr) out->topk_indptr[0] = 0;
  for (b = 0; b < in->num_reqs; ++b) {
    /* the low 32 bits of length + delta, as SGLang's kernels compute them */
    const int32_t length = low32_sum(in->lengths[b], in->length_delta);
    const int64_t tokens = length < 0 ? 0 : length;
    const int64_t rp = in->req_pool_indices[b];
    const int64_t start_col =
        in->kv_start_idx ? (int32_t)(uint32_t)((uint64_t)in->kv_start_idx[b] & 0xffffffffu) : 0;
    int64_t j;
    if (length < 0) *flags |= ATTNMETA_FLAG_SEQ_LEN_NEGATIVE;
    int64_t rows = per_req;
    if (in->query_lens) {
      const int32_t q = (int32_t)(uint32_t)((uint64_t)in->query_lens[b] & 0xffffffffu);
      if (q < 0) *flags |= ATTNMETA_FLAG_SEQ_LEN_NEGATIVE;
      rows = q < 0 ? 0 : q;
    }
    if (out->cache_seqlens) out->cache_seqlens[b] = (int32_t)tokens;
    if (in->query_rows) /* the request's one table row, seeing all its tokens */
      rows_of(in, out, b, tokens, 1, b, rp, start_col, &clipped, flags);
    else
      rows_of(in, out, b, tokens, rows, rows_before, rp, start_col, &clipped, flags);
    rows_before += rows;
    if (out->query_indptr) {
      if (rows_before > INT32_MAX) *flags |= ATTNMETA_FLAG_SCAN_OVERFLOW;
      out->query_indptr[b + 1] = rows_before > INT32_MAX ? INT32_MAX : (int32_t)rows_before;
    }
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
      dcp_walk w = {start_col, 0};
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
        kv_indices[at] = walked_slot(in, &w, rp, start_col, j, flags);
      }
    }
    total += tokens;
  }
}
