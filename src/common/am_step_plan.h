// SPDX-License-Identifier: Apache-2.0
/*
 * The launch shape of a step's kernel parameters (am_params_of in
 * am_step_translate.h): the host's plan for one attnmeta_build_step
 * launch. Host only, plain C, static inline so the fuzz harness (and any
 * emulation of a GPU launch) calls the very planning the library uses
 * rather than a copy of it.
 */
#ifndef ATTNMETA_AM_STEP_PLAN_H
#define ATTNMETA_AM_STEP_PLAN_H

#include <stdint.h>

#include "am_paths_off.h"
#include "am_step_choices.h"
#include "am_step_translate.h"
#include "attnmeta/attnmeta.h"

#define AM_DEFAULT_GPU_BLOCK 256
#define AM_WIDE_ROW_BLOCK 320
#define AM_WARP_LANES 32
#define AM_MAX_LANES 256
/* The CPU backend's stage lives on the calling thread's stack: it stages
 * only steps whose boundaries (and lengths) fit this many words (1 KiB). */
#define AM_CPU_STAGE_WORDS 256

/* Largest power of two <= v (v >= 1). */
static inline int64_t am_floor_pow2(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

static inline int64_t am_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Smallest power of two >= v (1 <= v <= 2^62). */
static inline int64_t am_ceil_pow2(int64_t v) {
  const int64_t p = am_floor_pow2(v);
  return p == v ? p : 2 * p;
}

/* Whether a wide-row output takes 16-byte stores. */
static inline int am_wide_aligned(const am_wide_rows *w) {
  return w->out && ((uintptr_t)w->out % 16) == 0 && w->out_stride % 4 == 0;
}

/* Picks the schedule: how many threads share a token (lanes) and how many
 * tokens a block takes at once (groups), whether rows move as 16-byte
 * vectors, whether boundaries are staged, and the grid. `is_cpu`: the CPU
 * backend (one thread per block); `processors`: the device's multiprocessor
 * count, which bounds the automatic grid. */
static inline am_launch_shape am_plan_launch_paths(const attnmeta_launch_config *cfg,
                                                   int is_cpu, int processors, unsigned off,
                                                   am_step_params *p) {
  const int aligned = ((uintptr_t)p->block_table % 16) == 0 &&
                      ((uintptr_t)p->block_table_out % 16) == 0 &&
                      p->block_table_stride % 4 == 0 && p->block_table_out_stride % 4 == 0;
  int64_t block = cfg->block > 0 ? cfg->block : (is_cpu ? 1 : AM_DEFAULT_GPU_BLOCK);
  am_launch_shape shape;
  int64_t units, want, work_blocks;

  /* Rows that are not all 16-byte aligned (a column slice of a wider
   * table, an odd stride) are realigned in registers (16-byte stores, each
   * from two aligned 16-byte loads) when the launch configuration asks for
   * vectors (vector = 1), and automatically when a scalar copy would take
   * more than one batch of four loads a lane (cols > 4 x AM_MAX_LANES):
   * narrower rows move in one round of scalar loads either way, with more
   * lanes. Blocks past AM_REALIGNED_MAX_BLOCK threads copy them as
   * scalars (the realigned kernel's launch bound). On the CPU backend one
   * thread copies a row with a plain loop, for which the choice makes no
   * difference. */
  if (cfg->vector == 0 || p->cols == 0)
    p->vector_rows = AM_ROWS_SCALAR;
  else if (aligned)
    p->vector_rows = (off & AM_PATH_ALIGNED_ROWS) ? AM_ROWS_SCALAR : AM_ROWS_ALIGNED;
  else
    p->vector_rows = (cfg->vector > 0 ? p->cols >= AM_REALIGN_MIN_COLS
                                      : p->cols > 4 * AM_MAX_LANES) &&
                             cfg->block <= AM_REALIGNED_MAX_BLOCK && !(off & AM_PATH_REALIGN)
                         ? AM_ROWS_REALIGNED
                         : AM_ROWS_SCALAR;
  /* realigned rows have kernels of their own, lean and indexer only
   * (AM_VARIANT_REALIGNED) */
  if (p->vector_rows == AM_ROWS_REALIGNED) {
    const int32_t variant = am_pick_variant(p);
    if (variant != AM_VARIANT_LEAN && variant != AM_VARIANT_INDEXER)
      p->vector_rows = AM_ROWS_SCALAR;
  }
  /* Enough lanes that each moves its share of a row in one batch of four
   * loads in flight: a power of two up to a warp (so groups pack into
   * warps), whole warps beyond. Wide rows then get about 320 threads a
   * block (measured on the H200: 128 x 2 x 2560 in 2.53 us instead of 2.86
   * with two batches per lane; 65 columns in 2.54 instead of 2.73). */
  units = p->vector_rows != AM_ROWS_SCALAR ? am_ceil_div(p->cols, 4) : p->cols;
  p->swa.vector = am_wide_aligned(&p->swa) && p->ext.swa_indices_group_stride % 4 == 0 &&
                  cfg->vector != 0;
  p->c128a.vector = am_wide_aligned(&p->c128a) && cfg->vector != 0;
  p->c128a.vector2 = p->c128a.out2 && (uintptr_t)p->c128a.out2 % 16 == 0 &&
                     p->c128a.out2_stride % 4 == 0 && cfg->vector != 0;
  /* wide rows take four entries a unit, vectors or not */
  if (p->swa.out) units = am_max64(units, am_ceil_div(p->swa.width, 4));
  if (p->c128a.out || p->c128a.out2) units = am_max64(units, am_ceil_div(p->c128a.width, 4));
  want = am_max64(am_ceil_div(units, 4), 1);
  if (cfg->lanes > 0) {
    shape.lanes = cfg->lanes;
  } else if (want <= AM_WARP_LANES) {
    shape.lanes = am_ceil_pow2(want);
  } else {
    /* capped first: a row wider than 4 x AM_MAX_LANES batches takes more
     * batches a lane, never a block past what a GPU launches */
    shape.lanes = am_min64(am_ceil_div(want, AM_WARP_LANES) * AM_WARP_LANES, AM_MAX_LANES);
    if (cfg->block <= 0 && !is_cpu)
      block = am_max64(AM_WIDE_ROW_BLOCK / shape.lanes, 1) * shape.lanes;
  }
  shape.lanes = am_clamp64(shape.lanes, 1, am_min64(block, AM_MAX_LANES));
  shape.groups = block / shape.lanes;
  /* Staging costs a block-wide load and a barrier before any work; it pays
   * only when forced (kept for measurement). */
  p->stage = cfg->stage > 0 && (int64_t)p->num_reqs + 1 <= AM_STAGE_MAX_REQS;
  if (is_cpu && am_step_stage_words(p) > AM_CPU_STAGE_WORDS) p->stage = 0;
  shape.shared_bytes = am_step_stage_words(p) * (int64_t)sizeof(int32_t);
  am_pick_guess(p->num_reqs, p->num_tokens, &p->guess_mul, &p->guess_shift);
  am_pick_speculation(p);
  if (is_cpu) p->speculate = 0; /* hides GPU memory latency; on a CPU only extra work */
  if (off & AM_PATH_SPECULATE_FIRST) p->speculate &= ~AM_SPECULATE_FIRST;
  p->variant = am_pick_variant(p);
  if ((off & AM_PATH_INDEXER_VARIANT) && p->variant == AM_VARIANT_INDEXER)
    p->variant = AM_VARIANT_LEAN;
  if (p->vector_rows == AM_ROWS_REALIGNED) p->variant |= AM_VARIANT_REALIGNED;
  am_pick_tail(p);
  p->forward_order = (off & AM_PATH_REVERSE_ORDER) != 0;
  if (off & AM_PATH_TAIL_VECTORS) p->tail_vec_begin = p->tail_vec_end = p->capacity;

  work_blocks = am_max64(am_ceil_div(p->num_tokens, shape.groups),
                         am_ceil_div((int64_t)p->capacity - p->num_tokens, block * 4));
  work_blocks = am_max64(work_blocks, am_ceil_div(p->num_reqs, block));
  if (cfg->grid > 0) { /* bounded so the body's 32-bit indices never wrap */
    shape.grid = am_min64(cfg->grid, AM_MAX_GRID_THREADS / block);
    /* the CPU runs blocks one after another: none past the last with work
     * (any grid gives the same bytes; idle blocks only cost time) */
    if (is_cpu) shape.grid = am_min64(shape.grid, am_max64(work_blocks, 1));
  } else if (is_cpu) {
    shape.grid = 1;
  } else {
    shape.grid = am_clamp64(work_blocks, 1, (int64_t)processors * 32);
    /* The realigned kernels' registers leave room for two blocks of 320
     * threads a multiprocessor: past that many blocks, half the grid with
     * each group taking two tokens runs in one wave instead of two (H200,
     * 1024 x 1 tokens with rows of 2560 of 2567 columns: 5.49 -> 5.2 us;
     * other grids were slower: bench/NOTES.md, round seven). */
    if (p->vector_rows == AM_ROWS_REALIGNED && !(off & AM_PATH_ONE_WAVE) &&
        work_blocks > 2 * (int64_t)processors)
      shape.grid = am_ceil_div(shape.grid, 2);
  }
  return shape;
}

/* The plan with every special path on (no ATTNMETA_PATHS_OFF switch). */
static inline am_launch_shape am_plan_launch(const attnmeta_launch_config *cfg, int is_cpu,
                                             int processors, am_step_params *p) {
  return am_plan_launch_paths(cfg, is_cpu, processors, 0u, p);
}

#endif /* ATTNMETA_AM_STEP_PLAN_H */
