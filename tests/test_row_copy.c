// SPDX-License-Identifier: Apache-2.0
/*
 * The kernel's row copy (src/common/am_row_copy.h) under emulated launch
 * shapes: every start of the input and output row modulo 16 bytes, row
 * widths around the vector edges, lanes from 1 to past a warp, with and
 * without a speculated first batch, every way to move a row. The GPUs run
 * this code with many lanes; the CPU backend only ever uses one, so these
 * shapes are checked here. The expected row is the input row itself,
 * compared element by element, with guard zones around the output row; the
 * realigned plan is also checked to read only inside the row and to number
 * the lanes' units from the output row's 16-byte grid.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "am_row_copy.h"

#define GUARD 12
#define MAX_COLS 300
#define BUF (MAX_COLS + 2 * GUARD + 8)
#define POISON ((int32_t)0x5A5A5A5A)

static const uint32_t widths[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                                  14, 15, 16, 17, 19, 23, 27, 31, 32, 33, 37, 45, 63, 64,
                                  65, 66, 67, 100, 127, 129, 130, 255, 257, 299};
static const uint32_t lane_counts[] = {1, 2, 3, 4, 5, 7, 8, 16, 32, 33, 64, 96};

/* 16-byte aligned buffers; rows start `off` elements past a boundary. */
typedef struct bufs {
  AM_ALIGNED(16) int32_t in[BUF];
  AM_ALIGNED(16) int32_t out[BUF];
} bufs;

static void fill_input(int32_t *in, uint32_t in_off, uint32_t cols) {
  uint32_t i;
  for (i = 0; i < BUF; ++i) in[i] = -1000000 - (int32_t)i; /* outside the row: never copied */
  for (i = 0; i < cols; ++i) in[GUARD + in_off + i] = 7 * (int32_t)i + 1;
}

/* The row, copied by `lanes` emulated lanes, each storing a speculated
 * first batch before the rest when `speculate`. */
static void copy_row(bufs *b, uint32_t in_off, uint32_t out_off, uint32_t cols, uint32_t lanes,
                     int mode, int speculate, int variant) {
  const int32_t *in_row = b->in + GUARD + in_off;
  int32_t *out_row = b->out + GUARD + out_off;
  const am_row_plan plan = am_plan_row(in_row, out_row, cols, mode);
  uint32_t lane;
  for (lane = 0; lane < lanes; ++lane) {
    uint32_t c = lane;
    if (speculate && plan.n > 0 && mode == AM_ROWS_REALIGNED) {
      /* the realigned kernels' own first batch, then, as they do, the
       * rest only where some is left */
      const am_realigned_batch q = am_load_realigned_first(in_row, &plan, lane, lanes);
      am_store_realigned_first(out_row, &plan, lane, lanes, &q);
      if (am_realigned_rest_left(&plan, lane, lanes))
        am_copy_row(in_row, out_row, &plan, cols, lane, lanes, mode, variant, lane + 4 * lanes);
      continue;
    }
    if (speculate && plan.n > 0) {
      const am_row_batch batch = am_load_batch(in_row, &plan, lane, lanes, mode);
      am_store_batch(out_row, &plan, lane, lanes, mode, &batch);
      c += 4 * lanes;
    }
    am_copy_row(in_row, out_row, &plan, cols, lane, lanes, mode, variant, c);
  }
}

static void check_row(const bufs *b, uint32_t in_off, uint32_t out_off, uint32_t cols,
                      const char *what) {
  uint32_t i;
  for (i = 0; i < BUF; ++i) {
    const int64_t e = (int64_t)i - GUARD - out_off; /* element of the row */
    const int32_t want = e >= 0 && e < (int64_t)cols ? 7 * (int32_t)e + 1 : POISON;
    cr_assert_eq(b->out[i], want, "%s: out[%lld] = %d, expected %d", what, (long long)e,
                 b->out[i], want);
  }
  (void)in_off;
}

/* Every vector the realigned plan loads lies inside the row, every vector
 * it stores inside the output row, 16-byte aligned; units and edges cover
 * the row exactly once. */
static void check_plan(const bufs *b, uint32_t in_off, uint32_t out_off, uint32_t cols) {
  const int32_t *in_row = b->in + GUARD + in_off;
  int32_t *out_row = (int32_t *)b->out + GUARD + out_off;
  const am_row_plan r = am_plan_row(in_row, out_row, cols, AM_ROWS_REALIGNED);
  const int32_t *first = (const int32_t *)(const void *)r.in4;
  const int32_t *last = (const int32_t *)(const void *)(r.in4 + (r.n ? r.n - 1 + (r.shift != 0) : 0));
  cr_assert_eq((uintptr_t)r.in4 % 16, 0, "input vectors not aligned (in %u out %u cols %u)",
               in_off, out_off, cols);
  cr_assert_eq((uintptr_t)r.out4 % 16, 0, "output vectors not aligned");
  cr_assert(r.shift < 4 && r.head <= 7, "shift %u head %u", r.shift, r.head);
  /* the lanes' units, counted from -lead, start on the output row's first
   * 16-byte boundary, so that a warp's stores cover whole lines */
  cr_assert(r.lead <= 1 && r.lead == r.head / 4, "lead %u head %u", r.lead, r.head);
  cr_assert_eq((const int32_t *)(const void *)(r.out4 - r.lead),
               out_row + (4 - (uintptr_t)out_row / 4 % 4) % 4,
               "lane units off the output row's grid (in %u out %u cols %u)", in_off, out_off,
               cols);
  cr_assert(r.head + 4 * r.n <= cols || r.n == 0, "vectors past the row");
  if (r.n > 0) {
    cr_assert(first >= in_row && last + 4 <= in_row + cols,
              "a vector load outside the row (in %u out %u cols %u: [%td, %td) of [0, %u))",
              in_off, out_off, cols, first - in_row, last + 4 - in_row, cols);
    cr_assert_eq(first + r.shift, in_row + r.head, "the first vector's first element");
  }
  if (cols >= AM_REALIGN_MIN_COLS)
    cr_assert(r.n >= 1, "no vector in a row of %u (in %u out %u)", cols, in_off, out_off);
}

Test(row_copy, realigned_plan_reads_only_inside_the_row) {
  bufs b;
  uint32_t in_off, out_off, cols;
  memset(&b, 0, sizeof b);
  for (in_off = 0; in_off < 4; ++in_off)
    for (out_off = 0; out_off < 4; ++out_off)
      for (cols = 0; cols <= 64; ++cols) check_plan(&b, in_off, out_off, cols);
}

/* Every mode that applies to the offsets: realigned always; aligned only
 * when both rows start on 16 bytes; scalar always. */
Test(row_copy, every_offset_width_and_lane_count) {
  static bufs b;
  uint32_t in_off, out_off;
  size_t w, l;
  int mode, spec;
  char what[160];
  for (in_off = 0; in_off < 4; ++in_off)
    for (out_off = 0; out_off < 4; ++out_off)
      for (mode = AM_ROWS_SCALAR; mode <= AM_ROWS_REALIGNED; ++mode) {
        if (mode == AM_ROWS_ALIGNED && (in_off || out_off)) continue;
        for (w = 0; w < sizeof widths / sizeof widths[0]; ++w)
          for (l = 0; l < sizeof lane_counts / sizeof lane_counts[0]; ++l)
            for (spec = 0; spec <= 1; ++spec) {
              const uint32_t cols = widths[w], lanes = lane_counts[l];
              fill_input(b.in, in_off, cols);
              memset(b.out, 0x5A, sizeof b.out);
              copy_row(&b, in_off, out_off, cols, lanes, mode, spec, AM_VARIANT_LEAN);
              snprintf(what, sizeof what, "mode %d in+%u out+%u cols %u lanes %u speculated %d",
                       mode, in_off, out_off, cols, lanes, spec);
              check_row(&b, in_off, out_off, cols, what);
            }
      }
}

/* One lane with the CPU backend's plain loop, after a speculated batch. */
Test(row_copy, one_lane_loop_after_a_speculated_batch) {
  static bufs b;
  uint32_t in_off, out_off;
  size_t w;
  int mode;
  char what[160];
  for (in_off = 0; in_off < 4; ++in_off)
    for (out_off = 0; out_off < 4; ++out_off)
      for (mode = AM_ROWS_SCALAR; mode <= AM_ROWS_REALIGNED; ++mode) {
        if (mode == AM_ROWS_ALIGNED && (in_off || out_off)) continue;
        for (w = 0; w < sizeof widths / sizeof widths[0]; ++w) {
          const uint32_t cols = widths[w];
          fill_input(b.in, in_off, cols);
          memset(b.out, 0x5A, sizeof b.out);
          copy_row(&b, in_off, out_off, cols, 1, mode, 1, AM_VARIANT_LEAN | AM_VARIANT_ONE_LANE);
          snprintf(what, sizeof what, "one lane, mode %d in+%u out+%u cols %u", mode, in_off,
                   out_off, cols);
          check_row(&b, in_off, out_off, cols, what);
        }
      }
}

/* A padding token's row: zeros exactly over the row. */
Test(row_copy, zero_row_every_offset) {
  static bufs b;
  uint32_t out_off;
  size_t w, l;
  int mode;
  for (out_off = 0; out_off < 4; ++out_off)
    for (mode = AM_ROWS_SCALAR; mode <= AM_ROWS_REALIGNED; ++mode) {
      if (mode == AM_ROWS_ALIGNED && out_off) continue;
      for (w = 0; w < sizeof widths / sizeof widths[0]; ++w)
        for (l = 0; l < sizeof lane_counts / sizeof lane_counts[0]; ++l) {
          const uint32_t cols = widths[w], lanes = lane_counts[l];
          uint32_t lane, i;
          memset(b.out, 0x5A, sizeof b.out);
          for (lane = 0; lane < lanes; ++lane)
            am_zero_row(b.out + GUARD + out_off, cols, lane, lanes, mode);
          for (i = 0; i < BUF; ++i) {
            const int64_t e = (int64_t)i - GUARD - out_off;
            const int32_t want = e >= 0 && e < (int64_t)cols ? 0 : POISON;
            cr_assert_eq(b.out[i], want, "zero row, mode %d out+%u cols %u lanes %u: [%lld] = %d",
                         mode, out_off, cols, lanes, (long long)e, b.out[i]);
          }
        }
    }
}
