// SPDX-License-Identifier: Apache-2.0
/*
 * What the operations that launch one kernel of their own (the top-k
 * conversion, the pool operation) share on the host: the grid of the
 * launch, and the refusal of a module whose table lacks the operation.
 */
#ifndef ATTNMETA_AM_OP_LAUNCH_H
#define ATTNMETA_AM_OP_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "am_context.h"
#include "am_step_params.h"

/* Blocks for `items` rows of work, `groups` rows a block of `threads`
 * threads: a forced grid (> 0) bounded so the body's 32-bit indices never
 * wrap; one block on the CPU; else enough blocks, at most 32 a processor. */
static inline int64_t am_op_grid(const attnmeta_context *ctx, int is_cpu, int64_t forced,
                                 int64_t threads, int64_t groups, int64_t items) {
  int64_t want, most;
  if (forced > 0) {
    most = AM_MAX_GRID_THREADS / threads;
    return forced < most ? forced : most;
  }
  if (is_cpu) return 1;
  want = (items + groups - 1) / groups;
  most = (int64_t)ctx->processors * 32;
  return want < 1 ? 1 : (want > most ? most : want);
}

/* ATTNMETA_ERR_NOT_SUPPORTED for a module built before `what` (its table
 * has fewer than `needed` bytes). */
static inline attnmeta_status am_fail_module_predates(attnmeta_context *ctx, const char *what,
                                                      size_t needed) {
  return am_fail(ctx, ATTNMETA_ERR_NOT_SUPPORTED,
                 "the %s backend module predates the %s operation (backend table of %u bytes, "
                 "%zu needed): rebuild the module with this library",
                 ctx->table->name, what, ctx->table->table_size, needed);
}

#endif /* ATTNMETA_AM_OP_LAUNCH_H */
