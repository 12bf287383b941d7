// SPDX-License-Identifier: Apache-2.0
/*
 * The operations of fuzz_step's table besides the part-1 step (fuzz_step.c
 * holds the table): each decodes its input from the reader, makes its
 * calls on the CPU context and checks them, failing with fz_fail.
 */
#ifndef ATTNMETA_FUZZ_OPS_H
#define ATTNMETA_FUZZ_OPS_H

#include "attnmeta/attnmeta.h"
#include "fuzz_util.h"

/* The DeepSeek-V3.2/V4 products of the step (op_dsv4.c). */
void fz_op_dsv4(fz_reader *rd, attnmeta_context *ctx);
/* attnmeta_convert_topk on device data, valid and hostile (op_topk.c). */
void fz_op_topk(fz_reader *rd, attnmeta_context *ctx);
/* attnmeta_build_pool_indices on device data, valid and hostile (op_pool.c). */
void fz_op_pool(fz_reader *rd, attnmeta_context *ctx);

#endif /* ATTNMETA_FUZZ_OPS_H */
