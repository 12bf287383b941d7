// SPDX-License-Identifier: Apache-2.0
/*
 * The schema of the operations, declared once: every member of
 * attnmeta_step, attnmeta_compressed_group, attnmeta_topk and attnmeta_pool, in the
 * public header's order, and every product of the step. The public header
 * stays the ABI; tests/test_schema.c holds this list against it.
 *
 * A member is X(c, type, member, role, extent, products, rule):
 *   c         the caller's context, passed through untouched;
 *   type      its C type, exactly as the header spells it;
 *   role      IN (a device buffer read), OUT (a device buffer written),
 *             PARAM (a scalar setting), GROUPS (the nested groups);
 *   extent    for IN and OUT, the elements covered:
 *             AM_ARRAY(n), n elements, or AM_TABLE(n, cols, stride), n rows
 *             of member `cols` elements, member `stride` elements apart,
 *             or AM_GTABLE(n, cols, stride, groups, gstride), member
 *             `groups` such tables (0 or 1: one), member `gstride` elements
 *             apart;
 *             n is R (num_reqs), R1 (R + 1), T (num_tokens),
 *             C (capacity), P (num_prefill) or ONE; AM_NONE for the rest;
 *   products  for OUT, the product it belongs to; for IN, the products
 *             that read it (AM_P_ALWAYS: read whenever the operation runs);
 *             for PARAM, the products it serves, or 0 for the settings of
 *             0.3 and before (the vector files' own table names those);
 *   rule      its range rule, as the contract states it ("" where none).
 *
 * A product is P(c, name, wanted): it is built when `wanted` holds, an
 * expression over `b`, the struct holding its outputs (the step, one
 * compressed group for the GROUP_ products, or the top-k conversion).
 *
 * A step product of the DSV4 kernel is added by hand in: the members at the
 * end of attnmeta_step (attnmeta.h); here, its members, product, rules and
 * kernel members; its device stage (am_dsv4.h); its reference
 * (reference_dsv4.c); docs/contract.md; CHANGELOG.md. The host checks, the
 * kernel parameters, the backend ABI, the vector format, the Python binding
 * (after schema_gen --write) follow; its tests, cases and vectors are its own.
 */
#ifndef ATTNMETA_AM_SCHEMA_H
#define ATTNMETA_AM_SCHEMA_H

#include "attnmeta/attnmeta.h"

/* ---- the step's products: those every kernel variant builds, then those
 * only the DSV4 kernel builds (AM_VARIANT_DSV4); one bit each, in order ---- */
#define AM_STEP_PRODUCTS(P, c) AM_STEP_BASE_PRODUCTS(P, c) AM_STEP_DSV4_PRODUCTS(P, c)
#define AM_STEP_BASE_PRODUCTS(P, c)                                          \
  P(c, TOKEN_MAP, b->token_to_req)                                           \
  P(c, SEQ_LENS, b->seq_lens_out)                                            \
  P(c, GLOBAL_SEQ_LENS, b->global_seq_lens_out)                              \
  P(c, BLOCK_TABLE, b->block_table_out)                                      \
  P(c, DECODE_LENS, b->decode_lens_out)                                      \
  P(c, REQ_INDICES, b->req_indices_out)                                      \
  P(c, PER_REQ_LENS, b->per_req_lens_out)                                    \
  P(c, POSITIONS, b->positions)                                              \
  P(c, SLOT_MAPPING, b->slot_mapping)
#define AM_STEP_DSV4_PRODUCTS(P, c)                                          \
  P(c, SWA_INDICES, b->swa_indices)                                          \
  P(c, SWA_LENS, b->swa_lens)                                                \
  P(c, C128A_ROWS, b->c128a_rows)                                            \
  P(c, C128A_GLOBAL_ROWS, b->c128a_rows && (b->c128a_mode == ATTNMETA_C128A_GLOBAL ||        \
                                             b->c128a_mode == ATTNMETA_C128A_MIXED))        \
  P(c, C128A_LENS, b->c128a_lens)                                            \
  P(c, INDEXER_LENS, b->indexer_lens_out)                                    \
  P(c, C128A_PREFILL_ROWS, b->c128a_prefill_rows)

/* ---- each compressed group's products ---- */
#define AM_GROUP_PRODUCTS(P, c)                                              \
  P(c, GROUP_SLOTS, b->slot_mapping)                                         \
  P(c, GROUP_LENS, b->seq_lens_out)

/* ---- the top-k conversion's products: its rows, the prefill
 * workspace they may map into, and the rotated DCP peer table built in
 * the same launch (a table of no pages reads no gathered table: 6d lets
 * them be NULL) ---- */
#define AM_TOPK_PRODUCTS(P, c)                                               \
  P(c, TOPK_ROWS, b->out)                                                    \
  P(c, TOPK_PREFILL, b->prefill_req)                                         \
  P(c, TOPK_PEER_TABLE, b->peer_table_out && b->peer_table_width > 0)

/* ---- the pool operation's products (SGLang's index buffers): the CSR
 * slot list, its prefix sum, the padded page table; the lengths, the
 * top-k lengths and their prefix sum, the token table, the SWA page
 * table; EAGLE's draft decode lists, built alone ---- */
#define AM_POOL_PRODUCTS(P, c)                                               \
  P(c, POOL_INDICES, b->kv_indices)                                          \
  P(c, POOL_INDPTR, b->kv_indptr_out)                                        \
  P(c, POOL_PAGES, b->page_table)                                            \
  P(c, POOL_LENS, b->cache_seqlens || b->expanded_lens || b->query_indptr_out) \
  P(c, POOL_TOPK, b->topk_lens || b->topk_indptr)                            \
  P(c, POOL_TOKENS, b->token_table)                                          \
  P(c, POOL_SWA_PAGES, b->swa_page_table)                                    \
  P(c, POOL_DRAFT, b->draft_kv_indices || b->draft_kv_indptr)

#define AM_PRODUCT_BIT_(c, name, wanted) AM_PBIT_##name,
enum am_product_bit {
  AM_STEP_PRODUCTS(AM_PRODUCT_BIT_, _) AM_GROUP_PRODUCTS(AM_PRODUCT_BIT_, _)
  AM_TOPK_PRODUCTS(AM_PRODUCT_BIT_, _) AM_POOL_PRODUCTS(AM_PRODUCT_BIT_, _) AM_PRODUCT_COUNT
};
#undef AM_PRODUCT_BIT_
#define AM_P(name) (1u << AM_PBIT_##name)
#define AM_P_ALWAYS (1u << 31)
_Static_assert(AM_PRODUCT_COUNT < 31, "a bit per product");

/* Every DeepSeek-V3.2/V4 product (contract sections 5, 5a, 7, 8): the
 * step's DSV4 family and the groups'. */
#define AM_P_OF_(c, name, wanted) | AM_P(name)
#define AM_P_DSV4 (0u AM_STEP_DSV4_PRODUCTS(AM_P_OF_, _) AM_GROUP_PRODUCTS(AM_P_OF_, _))

#define AM_P_SWA_ANY (AM_P(SWA_INDICES) | AM_P(SWA_LENS))

/* ---- attnmeta_step ---- */
#define AM_STEP_FIELDS(X, c)                                                 \
  X(c, size_t, struct_size, PARAM, AM_NONE, 0, "the caller's sizeof")        \
  X(c, const int32_t *, query_start_loc, IN, AM_ARRAY(R1), AM_P_ALWAYS, "required") \
  X(c, int32_t, num_reqs, PARAM, AM_NONE, 0, ">= 0")                         \
  X(c, int32_t, num_tokens, PARAM, AM_NONE, 0, ">= 0")                       \
  X(c, int32_t, capacity, PARAM, AM_NONE, 0, ">= num_tokens")                \
  X(c, const int32_t *, seq_lens, IN, AM_ARRAY(R),                           \
    AM_P(SEQ_LENS) | AM_P(GLOBAL_SEQ_LENS) | AM_P(POSITIONS) | AM_P(SLOT_MAPPING) | AM_P_DSV4, "") \
  X(c, const int32_t *, block_table, IN, AM_TABLE(R, block_table_cols, block_table_stride), \
    AM_P(BLOCK_TABLE) | AM_P(SLOT_MAPPING), "NULL allowed when cols == 0")   \
  X(c, int32_t, block_table_cols, PARAM, AM_NONE, 0, ">= 0")                 \
  X(c, int64_t, block_table_stride, PARAM, AM_NONE, 0, ">= block_table_cols") \
  X(c, int32_t, num_mapped, PARAM, AM_NONE, 0, "< 0 means actual")           \
  X(c, int32_t, block_size, PARAM, AM_NONE, 0, ">= 1, no default")           \
  X(c, int32_t, dcp_world_size, PARAM, AM_NONE, 0, ">= 1")                   \
  X(c, int32_t, dcp_rank, PARAM, AM_NONE, 0, "0 <= dcp_rank < dcp_world_size") \
  X(c, int32_t, dcp_interleave, PARAM, AM_NONE, 0, ">= 1")                   \
  X(c, int32_t *, token_to_req, OUT, AM_ARRAY(T), AM_P(TOKEN_MAP), "")       \
  X(c, int32_t *, seq_lens_out, OUT, AM_ARRAY(C), AM_P(SEQ_LENS), "")        \
  X(c, int32_t *, global_seq_lens_out, OUT, AM_ARRAY(T), AM_P(GLOBAL_SEQ_LENS), "") \
  X(c, int32_t *, block_table_out, OUT, AM_TABLE(T, block_table_cols, block_table_out_stride), \
    AM_P(BLOCK_TABLE), "")                                                   \
  X(c, int64_t, block_table_out_stride, PARAM, AM_NONE, 0, ">= block_table_cols") \
  X(c, int32_t *, decode_lens_out, OUT, AM_ARRAY(T), AM_P(DECODE_LENS), "")  \
  X(c, int32_t *, req_indices_out, OUT, AM_ARRAY(T), AM_P(REQ_INDICES), "")  \
  X(c, int32_t *, per_req_lens_out, OUT, AM_ARRAY(R), AM_P(PER_REQ_LENS), "") \
  X(c, int64_t *, positions, OUT, AM_ARRAY(T), AM_P(POSITIONS), "")          \
  X(c, int64_t *, slot_mapping, OUT, AM_ARRAY(C), AM_P(SLOT_MAPPING), "")    \
  X(c, int32_t *, error_word, OUT, AM_ARRAY(ONE), AM_P_ALWAYS, "optional")   \
  X(c, am_group_array, compressed_groups, GROUPS, AM_NONE, 0, "")            \
  X(c, const int32_t *, swa_block_table, IN,                                 \
    AM_GTABLE(R, swa_block_table_cols, swa_block_table_stride, swa_groups,    \
              swa_block_table_group_stride), AM_P(SWA_INDICES),              \
    "NULL allowed when cols == 0")                                           \
  X(c, int64_t, swa_block_table_stride, PARAM, AM_NONE, 0, ">= swa_block_table_cols") \
  X(c, int32_t, swa_block_table_cols, PARAM, AM_NONE, 0, ">= 0")             \
  X(c, int32_t, swa_block_size, PARAM, AM_NONE, 0, ">= 1")                   \
  X(c, int32_t, swa_window, PARAM, AM_NONE, 0, ">= 1")                       \
  X(c, int32_t, swa_width, PARAM, AM_NONE, 0, ">= swa_window")               \
  X(c, int32_t, swa_mode, PARAM, AM_NONE, 0, "an attnmeta_swa_mode")         \
  X(c, int32_t, swa_reserved, PARAM, AM_NONE, 0, "padding, ignored")         \
  X(c, int32_t *, swa_indices, OUT,                                          \
    AM_GTABLE(T, swa_width, swa_indices_stride, swa_groups, swa_indices_group_stride), \
    AM_P(SWA_INDICES), "")                                                   \
  X(c, int64_t, swa_indices_stride, PARAM, AM_NONE, 0, ">= swa_width")       \
  X(c, int32_t *, swa_lens, OUT, AM_ARRAY(C), AM_P(SWA_LENS), "")            \
  X(c, const int32_t *, c128a_block_table, IN,                               \
    AM_TABLE(R, c128a_block_table_cols, c128a_block_table_stride), AM_P(C128A_GLOBAL_ROWS), \
    "NULL allowed when cols == 0")                                           \
  X(c, int64_t, c128a_block_table_stride, PARAM, AM_NONE, 0, ">= c128a_block_table_cols") \
  X(c, int32_t, c128a_block_table_cols, PARAM, AM_NONE, 0, ">= 0")           \
  X(c, int32_t, c128a_ratio, PARAM, AM_NONE, 0, ">= 1")                      \
  X(c, int32_t, c128a_block_size, PARAM, AM_NONE, 0,                         \
    ">= 1, a multiple of dcp_interleave when dcp_world_size > 1")            \
  X(c, int32_t, c128a_width, PARAM, AM_NONE, 0, ">= 0")                      \
  X(c, int32_t, c128a_mode, PARAM, AM_NONE, 0, "an attnmeta_c128a_mode")     \
  X(c, int32_t, c128a_reserved, PARAM, AM_NONE, 0, "padding, ignored")       \
  X(c, int32_t *, c128a_rows, OUT, AM_TABLE(T, c128a_width, c128a_rows_stride), \
    AM_P(C128A_ROWS), "")                                                    \
  X(c, int64_t, c128a_rows_stride, PARAM, AM_NONE, 0, ">= c128a_width")      \
  X(c, int32_t *, c128a_lens, OUT, AM_ARRAY(C), AM_P(C128A_LENS), "")        \
  X(c, uint32_t, launch_flags, PARAM, AM_NONE, 0, "ATTNMETA_LAUNCH_* bits")  \
  X(c, int32_t *, indexer_lens_out, OUT, AM_ARRAY(C), AM_P(INDEXER_LENS), "") \
  X(c, int32_t, indexer_ratio, PARAM, AM_NONE, 0, ">= 1")                    \
  X(c, int32_t, indexer_mode, PARAM, AM_NONE, 0, "an attnmeta_indexer_mode") \
  X(c, const int64_t *, swa_token_slots, IN, AM_ARRAY(T), AM_P(SWA_INDICES) | AM_P(SWA_LENS), \
    "optional")                                                              \
  X(c, int32_t *, c128a_prefill_rows, OUT, AM_TABLE(T, c128a_width, c128a_prefill_rows_stride), \
    AM_P(C128A_PREFILL_ROWS), "mixed mode only")                             \
  X(c, int64_t, c128a_prefill_rows_stride, PARAM, AM_NONE, 0, ">= c128a_width") \
  X(c, int32_t, c128a_num_decode_tokens, PARAM, AM_NONE, 0,                  \
    "0 <= c128a_num_decode_tokens <= num_tokens, mixed mode")                \
  X(c, const int64_t *, pcp_logical_slots, IN, AM_ARRAY(T), AM_P(GROUP_SLOTS),  \
    "optional: the groups' slots from it (section 5b)")                      \
  X(c, const int64_t *, pcp_positions, IN, AM_ARRAY(T), AM_P(GROUP_SLOTS),      \
    "optional; needed with pcp_logical_slots")                               \
  X(c, int32_t, pcp_logical_block_size, PARAM, AM_NONE, AM_P(GROUP_SLOTS),      \
    ">= 1 with pcp_logical_slots")                                           \
  X(c, const int32_t *, swa_left_visible, IN, AM_ARRAY(T), AM_P_SWA_ANY,      \
    "optional: in-image visibility, causal mode (section 7)")                \
  X(c, const int32_t *, swa_right_visible, IN, AM_ARRAY(T), AM_P_SWA_ANY,     \
    "optional; needed with swa_left_visible")                                \
  X(c, const int32_t *, swa_replay_start, IN, AM_ARRAY(R), AM_P_SWA_ANY,      \
    "optional: each request's lowest window position, causal mode")          \
  X(c, int64_t, swa_block_table_group_stride, PARAM, AM_NONE, AM_P(SWA_INDICES), \
    "with swa_groups >= 2: covers a group's table")                          \
  X(c, int64_t, swa_indices_group_stride, PARAM, AM_NONE, AM_P(SWA_INDICES),  \
    "with swa_groups >= 2: covers a group's rows")                           \
  X(c, int32_t, swa_groups, PARAM, AM_NONE, AM_P(SWA_INDICES), ">= 0")

typedef attnmeta_compressed_group am_group_array[ATTNMETA_MAX_COMPRESSED_GROUPS];

/* ---- attnmeta_compressed_group (compressed_groups[] of the step) ---- */
#define AM_GROUP_FIELDS(X, c)                                                \
  X(c, const int32_t *, block_table, IN, AM_TABLE(R, block_table_cols, block_table_stride), \
    AM_P(GROUP_SLOTS), "NULL allowed when cols == 0")                        \
  X(c, int32_t, block_table_cols, PARAM, AM_NONE, 0, ">= 0")                 \
  X(c, int32_t, ratio, PARAM, AM_NONE, 0, ">= 1")                            \
  X(c, int64_t, block_table_stride, PARAM, AM_NONE, 0, ">= block_table_cols") \
  X(c, int32_t, block_size, PARAM, AM_NONE, 0,                               \
    ">= 1, a multiple of dcp_interleave when dcp_world_size > 1")            \
  X(c, int32_t, reserved, PARAM, AM_NONE, 0, "padding, ignored")             \
  X(c, int64_t *, slot_mapping, OUT, AM_ARRAY(C), AM_P(GROUP_SLOTS), "")     \
  X(c, int32_t *, seq_lens_out, OUT, AM_ARRAY(R), AM_P(GROUP_LENS), "")

/* ---- the settings' rules (contract sections 5, 5a, 7, 8) ----
 * R(c, products, when, kind, ...): checked, in this order, when one of
 * `products` is wanted and `when` holds (an expression over `b`, the
 * struct, and `s`, the step), after every buffer's check. The kinds
 * (am_schema_check.h), each ATTNMETA_ERR_INVALID_ARGUMENT when broken:
 *   MIN(m, n)             m >= n;
 *   NOT_NEGATIVE(m)       m >= 0;
 *   AT_LEAST(m, o)        m >= member o;
 *   IN_RANGE(m, lo, hi)   lo <= m <= member hi;
 *   ONE_OF2(m, x, y), ONE_OF3(m, x, y, z)  m is one of the values;
 *   DCP_BLOCK(m)          m >= 1, a multiple of the step's dcp_interleave
 *                         when its dcp_world_size > 1;
 *   PRESENT(m, o)         the buffer m is not NULL, as o needs it
 *                         (ATTNMETA_ERR_NULL_POINTER);
 *   HOLDS(ok, fmt, ...)   the expression ok (a rule across structs). */
#define AM_P_C128A_ANY (AM_P(C128A_ROWS) | AM_P(C128A_LENS) | AM_P(C128A_PREFILL_ROWS))
#define AM_STEP_RULES(R, c)                                                  \
  R(c, AM_P_SWA_ANY, 1, ONE_OF2, swa_mode, ATTNMETA_SWA_CAUSAL, ATTNMETA_SWA_NON_CAUSAL) \
  R(c, AM_P_SWA_ANY, 1, MIN, swa_window, 1)                                  \
  R(c, AM_P_SWA_ANY, 1, AT_LEAST, swa_width, swa_window)                     \
  R(c, AM_P(SWA_INDICES), 1, MIN, swa_block_size, 1)                         \
  R(c, AM_P(C128A_PREFILL_ROWS), 1, HOLDS, b->c128a_mode == ATTNMETA_C128A_MIXED, \
    "c128a_prefill_rows is written in mixed mode only (c128a_mode %d)", b->c128a_mode) \
  R(c, AM_P_C128A_ANY, 1, ONE_OF3, c128a_mode, ATTNMETA_C128A_GLOBAL, ATTNMETA_C128A_LOCAL, \
    ATTNMETA_C128A_MIXED)                                                    \
  R(c, AM_P_C128A_ANY, b->c128a_mode == ATTNMETA_C128A_MIXED, IN_RANGE,      \
    c128a_num_decode_tokens, 0, num_tokens)                                  \
  R(c, AM_P_C128A_ANY, 1, MIN, c128a_ratio, 1)                               \
  R(c, AM_P_C128A_ANY, 1, NOT_NEGATIVE, c128a_width)                         \
  R(c, AM_P_C128A_ANY, b->c128a_mode != ATTNMETA_C128A_LOCAL, DCP_BLOCK, c128a_block_size) \
  R(c, AM_P(INDEXER_LENS), 1, ONE_OF2, indexer_mode, ATTNMETA_INDEXER_DECODE, \
    ATTNMETA_INDEXER_PREFILL)                                                \
  R(c, AM_P(INDEXER_LENS), 1, MIN, indexer_ratio, 1)                         \
  R(c, AM_P(GROUP_SLOTS), b->pcp_logical_slots != NULL, PRESENT, pcp_positions, pcp_logical_slots) \
  R(c, AM_P(GROUP_SLOTS), b->pcp_logical_slots != NULL, MIN, pcp_logical_block_size, 1) \
  R(c, AM_P(GROUP_SLOTS), b->pcp_logical_slots != NULL, HOLDS, b->dcp_world_size == 1,     \
    "pcp_logical_slots needs dcp_world_size 1 (got %d): PCP's logical slots are not placed " \
    "across DCP ranks", b->dcp_world_size)                                   \
  R(c, AM_P_SWA_ANY, b->swa_left_visible != NULL, PRESENT, swa_right_visible, swa_left_visible) \
  R(c, AM_P_SWA_ANY, b->swa_right_visible != NULL, PRESENT, swa_left_visible, swa_right_visible) \
  R(c, AM_P_SWA_ANY, b->swa_left_visible || b->swa_replay_start, HOLDS,        \
    b->swa_mode == ATTNMETA_SWA_CAUSAL,                                      \
    "swa_left_visible/swa_right_visible and swa_replay_start are for causal mode only "   \
    "(swa_mode %d)", b->swa_mode)                                            \
  R(c, AM_P(SWA_INDICES), 1, NOT_NEGATIVE, swa_groups)                        \
  R(c, AM_P_SWA_ANY, b->swa_left_visible != NULL, HOLDS, b->swa_replay_start == NULL, \
    "swa_replay_start and swa_left_visible exclude each other: the engines build "        \
    "bounded-replay rows and in-image rows in different kernels")

/* Each compressed group's, checked group by group before the step's. */
#define AM_GROUP_RULES(R, c)                                                 \
  R(c, AM_P(GROUP_SLOTS) | AM_P(GROUP_LENS), 1, MIN, ratio, 1)               \
  R(c, AM_P(GROUP_SLOTS), 1, DCP_BLOCK, block_size)                          \
  R(c, AM_P(GROUP_SLOTS), s->pcp_logical_slots && s->pcp_logical_block_size >= 1, HOLDS, \
    s->pcp_logical_block_size % b->ratio == 0 &&                             \
        b->block_size == s->pcp_logical_block_size / b->ratio,               \
    "%sblock_size (%d) must be pcp_logical_block_size (%d) / ratio (%d), a whole number", \
    sc->prefix, b->block_size, s->pcp_logical_block_size, b->ratio)

/* ---- the step's members the DSV4 kernel receives by name ----
 * K(c, type, member, products): am_step_params.ext.member is the step's
 * member when one of `products` is wanted, else 0 (am_step_translate.h).
 * The hand-laid members of am_step_params before `ext` serve the products
 * declared before these. */
#define AM_STEP_KERNEL_FIELDS(K, c)                                          \
  K(c, const int64_t *, pcp_logical_slots, AM_P(GROUP_SLOTS))                \
  K(c, const int64_t *, pcp_positions, AM_P(GROUP_SLOTS))                    \
  K(c, int32_t, pcp_logical_block_size, AM_P(GROUP_SLOTS))                   \
  K(c, const int32_t *, swa_left_visible, AM_P_SWA_ANY)                      \
  K(c, const int32_t *, swa_right_visible, AM_P_SWA_ANY)                     \
  K(c, const int32_t *, swa_replay_start, AM_P_SWA_ANY)                      \
  K(c, int64_t, swa_block_table_group_stride, AM_P(SWA_INDICES))             \
  K(c, int64_t, swa_indices_group_stride, AM_P(SWA_INDICES))                 \
  K(c, int32_t, swa_groups, AM_P(SWA_INDICES))

/* The groups' indices, for walkers that name each group's buffers. */
#define AM_EACH_GROUP(G, c) G(c, 0) G(c, 1) G(c, 2) G(c, 3)
_Static_assert(ATTNMETA_MAX_COMPRESSED_GROUPS == 4, "AM_EACH_GROUP names every group");

/* ---- attnmeta_topk ---- */
#define AM_TOPK_FIELDS(X, c)                                                 \
  X(c, size_t, struct_size, PARAM, AM_NONE, 0, "the caller's sizeof")        \
  X(c, const int32_t *, topk, IN, AM_TABLE(T, topk_count, topk_stride), AM_P_ALWAYS, "required") \
  X(c, int64_t, topk_stride, PARAM, AM_NONE, 0, ">= topk_count")             \
  X(c, int32_t, num_tokens, PARAM, AM_NONE, 0, ">= 0")                       \
  X(c, int32_t, topk_count, PARAM, AM_NONE, 0, ">= 1")                       \
  X(c, const int32_t *, query_start_loc, IN, AM_ARRAY(R1), AM_P_ALWAYS,      \
    "exactly one of query_start_loc and req_id")                             \
  X(c, const int32_t *, req_id, IN, AM_ARRAY(T), AM_P_ALWAYS,                \
    "exactly one of query_start_loc and req_id")                             \
  X(c, int32_t, num_reqs, PARAM, AM_NONE, 0, ">= 0")                         \
  X(c, const int32_t *, block_table, IN, AM_TABLE(R, block_table_cols, block_table_stride), \
    AM_P_ALWAYS, "NULL allowed when cols == 0")                              \
  X(c, int32_t, block_table_cols, PARAM, AM_NONE, 0, ">= 0")                 \
  X(c, int64_t, block_table_stride, PARAM, AM_NONE, 0, ">= block_table_cols") \
  X(c, int32_t, block_size, PARAM, AM_NONE, 0, ">= 1")                       \
  X(c, int32_t, stride_rows, PARAM, AM_NONE, 0, "0 means block_size")        \
  X(c, int32_t, dcp_world_size, PARAM, AM_NONE, 0, ">= 1")                   \
  X(c, int32_t, dcp_rank, PARAM, AM_NONE, 0, "0 <= dcp_rank < dcp_world_size") \
  X(c, int32_t, dcp_interleave, PARAM, AM_NONE, 0, ">= 1")                   \
  X(c, const int32_t *, prefill_req, IN, AM_ARRAY(T), AM_P_ALWAYS, "optional, < num_prefill") \
  X(c, const int32_t *, workspace_starts, IN, AM_ARRAY(P), AM_P(TOPK_PREFILL), \
    "needed with prefill_req when num_prefill > 0")                          \
  X(c, int32_t, num_prefill, PARAM, AM_NONE, 0, ">= 0")                      \
  X(c, const int64_t *, token_slot, IN, AM_ARRAY(T), AM_P_ALWAYS, "optional") \
  X(c, int32_t *, out, OUT, AM_TABLE(T, topk_count, out_stride), AM_P(TOPK_ROWS), "required") \
  X(c, int64_t, out_stride, PARAM, AM_NONE, 0, ">= topk_count")              \
  X(c, int32_t *, valid_count, OUT, AM_ARRAY(T), AM_P(TOPK_ROWS), "optional; needed by compact") \
  X(c, int32_t, compact, PARAM, AM_NONE, 0, "0 or 1")                        \
  X(c, int32_t *, error_word, OUT, AM_ARRAY(ONE), AM_P_ALWAYS, "optional")  \
  X(c, int64_t, peer_blocks, PARAM, AM_NONE, 0, ">= 0")                      \
  X(c, const int32_t *, peer_tables, IN, AM_TABLE(R, peer_tables_cols, peer_tables_stride), \
    AM_P(TOPK_PEER_TABLE), "dcp_world_size tables, peer_tables_owner_stride apart") \
  X(c, int64_t, peer_tables_stride, PARAM, AM_NONE, 0, ">= peer_tables_cols") \
  X(c, int64_t, peer_tables_owner_stride, PARAM, AM_NONE, 0, ">= 0")         \
  X(c, int32_t, peer_tables_cols, PARAM, AM_NONE, 0, ">= 0")                 \
  X(c, int32_t, peer_table_width, PARAM, AM_NONE, 0, ">= 0")                 \
  X(c, int32_t *, peer_table_out, OUT, AM_TABLE(R, peer_table_width, peer_table_out_stride), \
    AM_P(TOPK_PEER_TABLE), "needs peer_blocks >= 1")                        \
  X(c, int64_t, peer_table_out_stride, PARAM, AM_NONE, 0, ">= peer_table_width") \
  X(c, uint32_t, launch_flags, PARAM, AM_NONE, 0, "ATTNMETA_LAUNCH_* bits")

/* ---- attnmeta_pool (counts: R = num_reqs, R1 = R + 1, P = pool_rows,
 * C = kv_indices_capacity, T = R with query_rows, num_rows with query_lens, else
 * R * max(rows_per_req, 1), T1 = T + 1; the draft lists: S = draft_steps,
 * DK = R * draft_topk, DP = (S - 1) * draft_kv_indptr_stride + DK + 1 for
 * S >= 1, else 0: the span of the step rows of draft_kv_indptr) ---- */
#define AM_POOL_FIELDS(X, c)                                                 \
  X(c, size_t, struct_size, PARAM, AM_NONE, 0, "the caller's sizeof")        \
  X(c, const int32_t *, req_to_token, IN, AM_TABLE(P, pool_cols, req_to_token_stride), \
    AM_P_ALWAYS, "NULL allowed when cols == 0")                              \
  X(c, int64_t, req_to_token_stride, PARAM, AM_NONE, 0, ">= pool_cols")      \
  X(c, int32_t, pool_rows, PARAM, AM_NONE, 0, ">= 0")                        \
  X(c, int32_t, pool_cols, PARAM, AM_NONE, 0, ">= 0")                        \
  X(c, const int64_t *, req_pool_indices, IN, AM_ARRAY(R), AM_P_ALWAYS, "required") \
  X(c, const int64_t *, lengths, IN, AM_ARRAY(R), AM_P_ALWAYS, "required")   \
  X(c, const int64_t *, kv_start_idx, IN, AM_ARRAY(R), AM_P_ALWAYS, "optional") \
  X(c, int32_t, num_reqs, PARAM, AM_NONE, 0, ">= 0")                         \
  X(c, int32_t, page_size, PARAM, AM_NONE, 0, ">= 1")                        \
  X(c, const int32_t *, kv_indptr, IN, AM_ARRAY(R1), AM_P(POOL_INDICES),     \
    "optional; needed by kv_indices without kv_indptr_out")                  \
  X(c, int32_t *, kv_indices, OUT, AM_ARRAY(C), AM_P(POOL_INDICES), "")      \
  X(c, int64_t, kv_indices_capacity, PARAM, AM_NONE, 0, ">= 0")              \
  X(c, int32_t *, kv_indptr_out, OUT, AM_ARRAY(R1), AM_P(POOL_INDPTR), "")   \
  X(c, int32_t *, page_table, OUT, AM_TABLE(T, page_table_width, page_table_stride), \
    AM_P(POOL_PAGES), "")                                                    \
  X(c, int64_t, page_table_stride, PARAM, AM_NONE, 0, ">= page_table_width") \
  X(c, int32_t, page_table_width, PARAM, AM_NONE, 0, ">= 0")                 \
  X(c, int32_t, reserved, PARAM, AM_NONE, 0, "padding, ignored")             \
  X(c, int32_t *, error_word, OUT, AM_ARRAY(ONE), AM_P_ALWAYS, "optional")   \
  X(c, int32_t, length_delta, PARAM, AM_NONE, 0, "")                         \
  X(c, int32_t, rows_per_req, PARAM, AM_NONE, 0, ">= 0")                     \
  X(c, int32_t *, cache_seqlens, OUT, AM_ARRAY(R), AM_P(POOL_LENS), "")      \
  X(c, int32_t *, expanded_lens, OUT, AM_ARRAY(T), AM_P(POOL_LENS), "")      \
  X(c, int32_t *, topk_lens, OUT, AM_ARRAY(T), AM_P(POOL_TOPK), "")          \
  X(c, int32_t *, topk_indptr, OUT, AM_ARRAY(T1), AM_P(POOL_TOPK), "")       \
  X(c, int32_t, topk, PARAM, AM_NONE, 0, ">= 1 with topk_lens or topk_indptr") \
  X(c, int32_t, topk_pool, PARAM, AM_NONE, 0, ">= 0")                        \
  X(c, int32_t *, token_table, OUT, AM_TABLE(T, token_table_width, token_table_stride), \
    AM_P(POOL_TOKENS), "")                                                   \
  X(c, int64_t, token_table_stride, PARAM, AM_NONE, 0, ">= token_table_width") \
  X(c, int32_t, token_table_width, PARAM, AM_NONE, 0, ">= 0")                \
  X(c, int32_t, length_cap, PARAM, AM_NONE, 0, ">= 0")                       \
  X(c, int32_t, fill_to_width, PARAM, AM_NONE, 0, "0 or 1")                  \
  X(c, int32_t, reserved2, PARAM, AM_NONE, 0, "padding, ignored")            \
  X(c, const int64_t *, full_to_swa, IN, AM_TABLE(ONE, swa_map_len, swa_map_len), \
    AM_P(POOL_SWA_PAGES), "NULL allowed when swa_map_len == 0")              \
  X(c, int64_t, swa_map_len, PARAM, AM_NONE, 0, ">= 0")                      \
  X(c, int32_t *, swa_page_table, OUT, AM_TABLE(T, page_table_width, swa_page_table_stride), \
    AM_P(POOL_SWA_PAGES), "")                                                \
  X(c, int64_t, swa_page_table_stride, PARAM, AM_NONE, 0, ">= page_table_width") \
  X(c, const int64_t *, query_lens, IN, AM_ARRAY(R),                         \
    AM_P(POOL_PAGES) | AM_P(POOL_LENS) | AM_P(POOL_TOPK) | AM_P(POOL_TOKENS) | \
    AM_P(POOL_SWA_PAGES), "optional; rows_per_req <= 1 with it")              \
  X(c, int32_t *, query_indptr_out, OUT, AM_ARRAY(R1), AM_P(POOL_LENS), "")  \
  X(c, int32_t, num_rows, PARAM, AM_NONE, 0, ">= 0")                         \
  X(c, int32_t, reserved3, PARAM, AM_NONE, 0, "padding, ignored")             \
  X(c, int32_t, draft_steps, PARAM, AM_NONE, AM_P(POOL_DRAFT), "0 to 1024")    \
  X(c, int32_t, draft_topk, PARAM, AM_NONE, AM_P(POOL_DRAFT), "1 to 1024 with draft_steps") \
  X(c, const int64_t *, draft_positions, IN, AM_ARRAY(DK), AM_P(POOL_DRAFT),   \
    "optional; needed by draft_kv_indptr")                                    \
  X(c, int32_t *, draft_kv_indices, OUT,                                       \
    AM_TABLE(S, draft_kv_indices_width, draft_kv_indices_stride), AM_P(POOL_DRAFT), "") \
  X(c, int64_t, draft_kv_indices_width, PARAM, AM_NONE, AM_P(POOL_DRAFT), ">= 0") \
  X(c, int64_t, draft_kv_indices_stride, PARAM, AM_NONE, AM_P(POOL_DRAFT),     \
    ">= draft_kv_indices_width")                                              \
  X(c, int32_t *, draft_kv_indptr, OUT, AM_ARRAY(DP), AM_P(POOL_DRAFT),        \
    "draft_steps rows of B * K + 1, draft_kv_indptr_stride apart")            \
  X(c, int64_t, draft_kv_indptr_stride, PARAM, AM_NONE, AM_P(POOL_DRAFT), ">= B * K + 1") \
  X(c, int32_t, dcp_world_size, PARAM, AM_NONE, 0, ">= 0")                   \
  X(c, int32_t, dcp_rank, PARAM, AM_NONE, 0, ">= 0")                         \
  X(c, int32_t, dcp_interleave, PARAM, AM_NONE, 0, ">= 0")                   \
  X(c, int32_t, reserved4, PARAM, AM_NONE, 0, "padding, ignored")         \
  X(c, int32_t, query_rows, PARAM, AM_NONE, 0, "0 or 1")                     \
  X(c, int32_t, reserved5, PARAM, AM_NONE, 0, "padding, ignored")

/* 1 for the roles that are device buffers. */
#define AM_IS_BUFFER_IN 1
#define AM_IS_BUFFER_OUT 1
#define AM_IS_BUFFER_PARAM 0
#define AM_IS_BUFFER_GROUPS 0
#define AM_COUNT_BUFFER_(c, type, member, role, extent, products, rule) +AM_IS_BUFFER_##role
enum {
  AM_STEP_BUFFERS = 0 AM_STEP_FIELDS(AM_COUNT_BUFFER_, _),
  AM_GROUP_BUFFERS = 0 AM_GROUP_FIELDS(AM_COUNT_BUFFER_, _),
  AM_TOPK_BUFFERS = 0 AM_TOPK_FIELDS(AM_COUNT_BUFFER_, _),
  AM_POOL_BUFFERS = 0 AM_POOL_FIELDS(AM_COUNT_BUFFER_, _)
};
#undef AM_COUNT_BUFFER_

#endif /* ATTNMETA_AM_SCHEMA_H */
