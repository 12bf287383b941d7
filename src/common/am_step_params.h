// SPDX-License-Identifier: Apache-2.0
/*
 * What one step's kernel launch receives, by value. Built on the host from
 * the public attnmeta_step after every argument has been checked, so the
 * kernel may trust the sizes and strides here (never the device data).
 * Valid C11 and C++.
 */
#ifndef ATTNMETA_AM_STEP_PARAMS_H
#define ATTNMETA_AM_STEP_PARAMS_H

#include <stdint.h>

#include "am_dialect.h"
#include "am_schema_wanted.h"

/* Upper bound on R + 1 for staging the boundaries in block-shared memory. */
#define AM_STAGE_MAX_REQS 4095

/* Upper bound on grid_dim * block_dim: keeps the body's 32-bit indices from
 * wrapping (an index below 2^31 plus a stride of at most 2^31). */
#define AM_MAX_GRID_THREADS ((int64_t)1 << 31)

/* Compressed KV-cache groups a step carries (= ATTNMETA_MAX_COMPRESSED_GROUPS). */
#define AM_MAX_GROUPS 4

/* One compressed group (contract section 5); outputs NULL when not wanted. */
typedef struct am_group_params {
  const int32_t *table;
  int64_t stride;
  int64_t *slots;        /* [C] */
  int32_t *lens;         /* [R] compressed per-request lengths */
  int32_t cols;
  int32_t ratio;
  int32_t block_size;
  int32_t pad;
} am_group_params;

/* A product of one wide row per token (sections 7 and 8): rows of `width`
 * entries (stride `out_stride`) and a length per token ([C]). */
typedef struct am_wide_rows {
  const int32_t *table;
  int64_t stride;
  int32_t *out;
  int64_t out_stride;
  int32_t *lens;
  const int64_t *token_slots; /* SWA: [T] the step's KV slots, or NULL (a token whose
                                 slot is < 0 gets length 0) */
  int32_t cols;
  int32_t block_size;
  int32_t window;        /* SWA: the window */
  int32_t ratio;         /* C128A: positions per compressed row */
  int32_t width;
  int32_t mode;          /* ATTNMETA_SWA_* / ATTNMETA_C128A_* */
  int32_t vector;        /* 1: rows are 16-byte aligned (pointer and stride) */
  int32_t split;         /* C128A mixed mode: the decode tokens, [0, split) */
  int32_t *out2;         /* C128A mixed mode: the prefill tokens' rows, or NULL */
  int64_t out2_stride;
  int32_t vector2;       /* 1: out2's rows are 16-byte aligned */
  int32_t pad2;
} am_wide_rows;

/* The kernel parameters derived from the schema (AM_STEP_KERNEL_FIELDS of
 * am_schema.h), appended to am_step_params: the wanted products' bits, then
 * each declared member under its own name. */
#define AM_STEP_EXT_FIELD_(c, type, member, products) type member;
typedef struct am_step_ext {
  uint32_t products; /* AM_P() bits of the products wanted (and AM_P_ALWAYS) */
  int32_t reserved;
  AM_STEP_KERNEL_FIELDS(AM_STEP_EXT_FIELD_, _)
} am_step_ext;
#undef AM_STEP_EXT_FIELD_

/* Ordered by first use in the kernel: what every token reads before its
 * first loads comes first, so it shares the first constant-cache lines. */
typedef struct am_step_params {
  /* inputs and what the first round of loads needs */
  const int32_t *qsl; /* [R + 1] */
  const int32_t *seq_lens;
  const int32_t *block_table;
  int64_t block_table_stride;
  int32_t num_reqs;
  int32_t num_tokens;
  /* first guess of req(t): (t * guess_mul) >> guess_shift as a 64-bit
   * product, clamped to [0, R - 1]; any value is correct, a good one saves
   * a round of loads */
  uint32_t guess_mul;
  int32_t guess_shift;
  int32_t speculate;       /* AM_SPECULATE_* bits: for which guesses of req(t) a token
                              loads the guessed row's first batch and length together
                              with the boundaries, before knowing the guess holds (needs
                              a row output and a non-empty first batch) */
  int32_t cols;
  int32_t capacity;
  int32_t num_mapped;
  /* the tail [T, C) of seq_lens_out is cleared as 16-byte vectors over
   * [tail_vec_begin, tail_vec_end) (aligned, a multiple of 4 long, inside
   * [T, C)) and element by element around it */
  int32_t tail_vec_begin;
  int32_t tail_vec_end;

  /* outputs, NULL when not wanted */
  int32_t *block_table_out;
  int64_t block_table_out_stride;
  int32_t *token_to_req;
  int32_t *seq_lens_out;
  int32_t *decode_lens_out;
  int32_t *req_indices_out;
  int32_t *per_req_lens_out;
  int32_t *global_seq_lens_out;
  int64_t *positions;
  int64_t *slot_mapping;
  int32_t *error_word;

  /* what only the full kernel reads */
  int32_t block_size;
  int32_t dcp_world_size;
  int32_t dcp_rank;
  int32_t dcp_interleave;

  /* schedule, chosen on the host; the body is correct for any values */
  int32_t vector_rows;     /* AM_ROWS_*: how block-table rows move (am_row_copy.h) */
  int32_t stage;           /* 1: boundaries (and seq_lens) staged in shared memory */
  int32_t variant;         /* AM_VARIANT_*: which compiled kernel runs the step */

  /* DeepSeek-V3.2/V4 products (contract sections 5, 7, 8), read only by the
   * AM_VARIANT_DSV4 kernel; appended so that the members above keep their
   * offsets (and the other kernels their machine code) */
  int32_t num_groups; /* compressed groups in groups[0, num_groups) */
  int32_t dsv4_pad;
  am_group_params groups[AM_MAX_GROUPS];
  am_wide_rows swa;   /* section 7 (ratio unused) */
  am_wide_rows c128a; /* section 8 */

  /* 1: the block-wide work (tails, per-request products) walks the threads
   * in order instead of in reverse (for measurement only: the switch
   * ATTNMETA_PATHS_OFF=reverse_order; results are the same) */
  int32_t forward_order;
  int32_t order_pad;

  /* the indexer's compressed lengths (section 5a; AM_VARIANT_DSV4 only) */
  int32_t *indexer_lens; /* [C] */
  int32_t indexer_ratio;
  int32_t indexer_mode;  /* ATTNMETA_INDEXER_* */

  /* what the schema declares for the kernel (the products after these) */
  am_step_ext ext;
} am_step_params;

/* A signature of am_step_params' layout, for the backend ABI
 * (am_backend.h): a module built with other kernel members is refused. */
#define AM_STEP_EXT_COUNT_(c, type, member, products) +1
#define AM_STEP_PARAMS_LAYOUT \
  ((int)sizeof(am_step_params) * 16 + (0 AM_STEP_KERNEL_FIELDS(AM_STEP_EXT_COUNT_, _)) % 16)

/* How block-table rows move (am_step_params.vector_rows). */
enum {
  AM_ROWS_SCALAR = 0,   /* one int32 at a time */
  AM_ROWS_ALIGNED = 1,  /* 16-byte vectors: both tables' pointers and strides allow them */
  AM_ROWS_REALIGNED = 2 /* 16-byte vectors over each row's aligned middle, any start and
                           stride (rows of at least AM_REALIGN_MIN_COLS columns) */
};

/* The shortest row that holds a realigned vector whatever its start and
 * its output's start (at most 7 edge elements before and after the
 * vectors, am_plan_row), so a speculated first batch always exists;
 * shorter rows are copied as scalars. */
#define AM_REALIGN_MIN_COLS 11

/* The largest block of the realigned-rows kernel: its launch bound, so it
 * may use 128 registers a thread (the 8 vectors of a batch in flight, the
 * speculated batch) instead of spilling under the 64 of 1024-thread
 * blocks. The host picks realigned rows only for blocks this size or less. */
#define AM_REALIGNED_MAX_BLOCK 512

/* Speculation bits (am_step_params.speculate). */
enum {
  AM_SPECULATE_FIRST = 1 /* on the first guess (t / (T / R)) */
};

/* Kernel variants: facts the host guarantees about a step, compiled in so
 * the kernel tests nothing it need not. */
enum {
  /* no fact: positions, slots, global lengths, DCP and staging absent */
  AM_VARIANT_LEAN = 0,
  /* positions, slots, global lengths, DCP or staging may be wanted */
  AM_VARIANT_FULL = 1,
  /* lean, and the products are exactly token_to_req, seq_lens_out,
   * block_table_out (16-byte rows with cols a multiple of 4, or realigned
   * rows with AM_VARIANT_REALIGNED), decode_lens_out, req_indices_out and
   * per_req_lens_out, with no error word: a token map and the sparse
   * indexer's decode metadata, the most common step */
  AM_VARIANT_INDEXER = 2,
  /* one thread a block (the CPU backend): rows are copied by a plain loop;
   * combines with the others */
  AM_VARIANT_ONE_LANE = 4,
  /* full, and the DeepSeek-V3.2/V4 products (compressed slots, SWA and
   * C128A rows, the indexer's compressed lengths) may be wanted */
  AM_VARIANT_DSV4 = 8,
  /* launched to start before the kernel ahead of it on the stream ends
   * (ATTNMETA_LAUNCH_EARLY_START): the tails are cleared first, then the
   * body waits for that kernel before reading any input; combines with
   * the others */
  AM_VARIANT_EARLY_START = 16,
  /* lean or indexer, with realigned rows (AM_ROWS_REALIGNED): kernels of
   * their own, so the others compile none of that copy. Compiled into
   * every kernel, it made the lean, full and DSV4 kernels spill registers
   * under the 64 a thread of a 1024-thread block may have (620 bytes of
   * spill stores in the lean one, sm_90): +0.66 us on 16 x 6 + 17 pad, 65
   * columns, on the H200. Kernels without it copy rows the host marked
   * realigned as scalar ones. Combines with AM_VARIANT_EARLY_START and
   * AM_VARIANT_ONE_LANE. */
  AM_VARIANT_REALIGNED = 32
};

/* The launch shape the host picked for one step: blocks of lanes x groups
 * threads (lanes share a token, groups take different tokens). */
typedef struct am_launch_shape {
  int64_t lanes;
  int64_t groups;
  int64_t grid;
  int64_t shared_bytes; /* dynamic block-shared memory */
} am_launch_shape;

/* Block-shared memory the body needs for `p` (in int32 units). */
AM_DEVICE int64_t am_step_stage_words(const am_step_params *p) {
  if (!p->stage) return 0;
  return (int64_t)p->num_reqs + 1 + (p->seq_lens ? (int64_t)p->num_reqs : 0);
}

#endif /* ATTNMETA_AM_STEP_PARAMS_H */
