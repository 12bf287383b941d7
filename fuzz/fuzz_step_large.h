/*
 * The large-size operation of fuzz_step: steps with R, T, C and columns up
 * to the limits the host accepts (R + T up to INT32_MAX, byte offsets near
 * 2^40), kept fast by sparse buffers and by running only a sample of the
 * blocks of an emulated GPU launch (fuzz_step_large.c says what is checked).
 */
#ifndef ATTNMETA_FUZZ_STEP_LARGE_H
#define ATTNMETA_FUZZ_STEP_LARGE_H

#include "attnmeta/attnmeta.h"
#include "fuzz_util.h"

void fz_op_step_large(fz_reader *rd, attnmeta_context *ctx);
/* What the large inputs were (ATTNMETA_FUZZ_STATS=1). */
void fz_large_print_stats(void);

#endif /* ATTNMETA_FUZZ_STEP_LARGE_H */
