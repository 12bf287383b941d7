// SPDX-License-Identifier: Apache-2.0
/* The host's check that no output overlaps an input or another output
 * (contract: "Errors and bad input"), shared by every operation. */
#ifndef ATTNMETA_AM_OVERLAP_H
#define ATTNMETA_AM_OVERLAP_H

#include <stdint.h>

#include "am_context.h"

/* A buffer: `rows` runs of `width` bytes, `pitch` bytes apart. */
typedef struct am_extent {
  const char *name;
  uint64_t base;  /* address of the first byte */
  int64_t rows;   /* runs, >= 1 */
  int64_t width;  /* bytes of each run, >= 1 */
  int64_t pitch;  /* bytes from one run to the next, >= width */
  int output;
} am_extent;

/* Appends `rows` runs of `cols` elements of `elem` bytes, `stride`
 * elements apart, unless ptr is NULL or no byte is covered. The caller's
 * other checks bound rows x stride x 8 bytes. */
void am_extent_add(am_extent *list, int *n, const char *name, const void *ptr, int64_t rows,
                   int64_t cols, int64_t stride, int64_t elem, int output);
/* A plain array of `count` elements. */
void am_extent_add_array(am_extent *list, int *n, const char *name, const void *ptr,
                         int64_t count, int64_t elem, int output);

/* ATTNMETA_ERR_INVALID_ARGUMENT, with a message naming both buffers, when
 * an output meets an input or another output; ATTNMETA_OK otherwise
 * (inputs may share bytes). */
attnmeta_status am_check_extents(attnmeta_context *ctx, const am_extent *list, int n);

#endif /* ATTNMETA_AM_OVERLAP_H */
