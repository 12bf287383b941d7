// SPDX-License-Identifier: Apache-2.0
/*
 * No output may overlap an input or another output (the kernels' pointers
 * are restrict, and an overlap would make results depend on the order of
 * the stores). The host sees every pointer and size, so it checks: each
 * buffer is `rows` runs of `width` bytes, `pitch` bytes apart (one run for
 * a plain array; a strided table's bytes between its rows' used columns
 * belong to nobody). Each operation lists its buffers (step_overlap.c,
 * topk.c); this file decides whether two of them meet.
 */
#include <stdint.h>

#include "am_overlap.h"

/* Rows of two strided buffers compared one by one at most: beyond, two
 * interleaved tables are refused without proof (no engine lays out its
 * block tables so). */
#define MAX_ROW_PAIRS ((int64_t)1 << 16)

static uint64_t end_of(const am_extent *e) {
  return e->base + (uint64_t)((e->rows - 1) * e->pitch + e->width);
}

/* Does [lo, hi) meet a row of e? */
static int run_meets(uint64_t lo, uint64_t hi, const am_extent *e) {
  uint64_t first;
  if (hi <= e->base || lo >= end_of(e)) return 0;
  if (e->rows == 1 || e->pitch == e->width) return 1; /* contiguous */
  /* the first row that ends after lo */
  first = lo < e->base + (uint64_t)e->width
              ? 0
              : (lo - e->base - (uint64_t)e->width) / (uint64_t)e->pitch + 1;
  return first < (uint64_t)e->rows && e->base + first * (uint64_t)e->pitch < hi;
}

static int extents_meet(const am_extent *a, const am_extent *b) {
  const am_extent *few, *many;
  int64_t i;
  if (end_of(a) <= b->base || end_of(b) <= a->base) return 0;
  if (a->rows == 1 || a->pitch == a->width) return run_meets(a->base, end_of(a), b);
  if (b->rows == 1 || b->pitch == b->width) return run_meets(b->base, end_of(b), a);
  few = a->rows <= b->rows ? a : b;
  many = few == a ? b : a;
  if (few->rows > MAX_ROW_PAIRS) return 1;
  for (i = 0; i < few->rows; ++i) {
    const uint64_t lo = few->base + (uint64_t)(i * few->pitch);
    if (run_meets(lo, lo + (uint64_t)few->width, many)) return 1;
  }
  return 0;
}

void am_extent_add(am_extent *list, int *n, const char *name, const void *ptr, int64_t rows,
                   int64_t cols, int64_t stride, int64_t elem, int output) {
  am_extent *e;
  if (!ptr || rows <= 0 || cols <= 0) return; /* not used, or no byte */
  e = &list[(*n)++];
  e->name = name;
  e->base = (uint64_t)(uintptr_t)ptr;
  e->rows = rows;
  e->width = cols * elem;
  e->pitch = stride * elem;
  e->output = output;
}

void am_extent_add_array(am_extent *list, int *n, const char *name, const void *ptr, int64_t count,
                         int64_t elem, int output) {
  am_extent_add(list, n, name, ptr, 1, count, count, elem, output);
}

attnmeta_status am_check_extents(attnmeta_context *ctx, const am_extent *list, int n) {
  int i, j;
  for (i = 0; i < n; ++i) {
    for (j = i + 1; j < n; ++j) {
      if (!list[i].output && !list[j].output) continue; /* inputs may share bytes */
      if (extents_meet(&list[i], &list[j]))
        return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                       "%s %s overlaps %s %s: no output may share bytes with an input or "
                       "another output",
                       list[j].output ? "output" : "input", list[j].name,
                       list[i].output ? "output" : "input", list[i].name);
    }
  }
  return ATTNMETA_OK;
}
