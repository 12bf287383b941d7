// SPDX-License-Identifier: Apache-2.0
/* The host's check that no output of a step overlaps an input or another
 * output (contract: "Errors and bad input"); the comparison is overlap.c's. */
#ifndef ATTNMETA_AM_STEP_OVERLAP_H
#define ATTNMETA_AM_STEP_OVERLAP_H

#include "am_context.h"

/* ATTNMETA_ERR_INVALID_ARGUMENT, with a message naming both buffers, when
 * the bytes an output is written at meet the bytes another output is
 * written at or an input is read at; ATTNMETA_OK otherwise. Only the
 * buffers the step uses count, each with exactly the bytes it covers: the
 * columns past `cols` of a block-table row are neither read nor written, so
 * another buffer may sit there. The DeepSeek-V3.2/V4 products and their
 * tables count the same way. `s` has passed every other check. */
attnmeta_status am_check_overlaps(attnmeta_context *ctx, const attnmeta_step *s);

#endif /* ATTNMETA_AM_STEP_OVERLAP_H */
