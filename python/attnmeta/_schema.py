# SPDX-License-Identifier: Apache-2.0
# Generated from src/common/am_schema.h by python/schema_gen.c: do not edit.
# Rebuild and run `schema_gen --write python/attnmeta/_schema.py` after a
# change to the schema; ctest's python_schema_fresh fails while it is stale.
"""Each struct's members in order: (name, C type, role, extent, products).

extent: None, (rows,) or (rows, cols member, stride member), rows one of
R, R1, T, C, P, ONE; products: for OUT the product it belongs to, for IN
the products that read it (ALWAYS: read whenever the operation runs)."""

STEP_FIELDS = [
    ("struct_size", "size_t", "PARAM", None, ()),
    ("query_start_loc", "const int32_t *", "IN", ("R1",), ("ALWAYS",)),
    ("num_reqs", "int32_t", "PARAM", None, ()),
    ("num_tokens", "int32_t", "PARAM", None, ()),
    ("capacity", "int32_t", "PARAM", None, ()),
    ("seq_lens", "const int32_t *", "IN", ("R",), ("SEQ_LENS", "GLOBAL_SEQ_LENS", "POSITIONS", "SLOT_MAPPING", "SWA_INDICES", "SWA_LENS", "C128A_ROWS", "C128A_LENS", "C128A_PREFILL_ROWS", "GROUP_SLOTS", "GROUP_LENS")),
    ("block_table", "const int32_t *", "IN", ("R", "block_table_cols", "block_table_stride"), ("BLOCK_TABLE", "SLOT_MAPPING")),
    ("block_table_cols", "int32_t", "PARAM", None, ()),
    ("block_table_stride", "int64_t", "PARAM", None, ()),
    ("num_mapped", "int32_t", "PARAM", None, ()),
    ("block_size", "int32_t", "PARAM", None, ()),
    ("dcp_world_size", "int32_t", "PARAM", None, ()),
    ("dcp_rank", "int32_t", "PARAM", None, ()),
    ("dcp_interleave", "int32_t", "PARAM", None, ()),
    ("token_to_req", "int32_t *", "OUT", ("T",), ("TOKEN_MAP",)),
    ("seq_lens_out", "int32_t *", "OUT", ("C",), ("SEQ_LENS",)),
    ("global_seq_lens_out", "int32_t *", "OUT", ("T",), ("GLOBAL_SEQ_LENS",)),
    ("block_table_out", "int32_t *", "OUT", ("T", "block_table_cols", "block_table_out_stride"), ("BLOCK_TABLE",)),
    ("block_table_out_stride", "int64_t", "PARAM", None, ()),
    ("decode_lens_out", "int32_t *", "OUT", ("T",), ("DECODE_LENS",)),
    ("req_indices_out", "int32_t *", "OUT", ("T",), ("REQ_INDICES",)),
    ("per_req_lens_out", "int32_t *", "OUT", ("R",), ("PER_REQ_LENS",)),
    ("positions", "int64_t *", "OUT", ("T",), ("POSITIONS",)),
    ("slot_mapping", "int64_t *", "OUT", ("C",), ("SLOT_MAPPING",)),
    ("error_word", "int32_t *", "OUT", ("ONE",), ("ALWAYS",)),
    ("compressed_groups", "am_group_array", "GROUPS", None, ()),
    ("swa_block_table", "const int32_t *", "IN", ("R", "swa_block_table_cols", "swa_block_table_stride"), ("SWA_INDICES",)),
    ("swa_block_table_stride", "int64_t", "PARAM", None, ()),
    ("swa_block_table_cols", "int32_t", "PARAM", None, ()),
    ("swa_block_size", "int32_t", "PARAM", None, ()),
    ("swa_window", "int32_t", "PARAM", None, ()),
    ("swa_width", "int32_t", "PARAM", None, ()),
    ("swa_mode", "int32_t", "PARAM", None, ()),
    ("swa_reserved", "int32_t", "PARAM", None, ()),
    ("swa_indices", "int32_t *", "OUT", ("T", "swa_width", "swa_indices_stride"), ("SWA_INDICES",)),
    ("swa_indices_stride", "int64_t", "PARAM", None, ()),
    ("swa_lens", "int32_t *", "OUT", ("C",), ("SWA_LENS",)),
    ("c128a_block_table", "const int32_t *", "IN", ("R", "c128a_block_table_cols", "c128a_block_table_stride"), ("C128A_GLOBAL_ROWS",)),
    ("c128a_block_table_stride", "int64_t", "PARAM", None, ()),
    ("c128a_block_table_cols", "int32_t", "PARAM", None, ()),
    ("c128a_ratio", "int32_t", "PARAM", None, ()),
    ("c128a_block_size", "int32_t", "PARAM", None, ()),
    ("c128a_width", "int32_t", "PARAM", None, ()),
    ("c128a_mode", "int32_t", "PARAM", None, ()),
    ("c128a_reserved", "int32_t", "PARAM", None, ()),
    ("c128a_rows", "int32_t *", "OUT", ("T", "c128a_width", "c128a_rows_stride"), ("C128A_ROWS",)),
    ("c128a_rows_stride", "int64_t", "PARAM", None, ()),
    ("c128a_lens", "int32_t *", "OUT", ("C",), ("C128A_LENS",)),
    ("launch_flags", "uint32_t", "PARAM", None, ()),
    ("swa_token_slots", "const int64_t *", "IN", ("T",), ("SWA_INDICES", "SWA_LENS")),
    ("c128a_prefill_rows", "int32_t *", "OUT", ("T", "c128a_width", "c128a_prefill_rows_stride"), ("C128A_PREFILL_ROWS",)),
    ("c128a_prefill_rows_stride", "int64_t", "PARAM", None, ()),
    ("c128a_num_decode_tokens", "int32_t", "PARAM", None, ()),
]

COMPRESSED_GROUP_FIELDS = [
    ("block_table", "const int32_t *", "IN", ("R", "block_table_cols", "block_table_stride"), ("GROUP_SLOTS",)),
    ("block_table_cols", "int32_t", "PARAM", None, ()),
    ("ratio", "int32_t", "PARAM", None, ()),
    ("block_table_stride", "int64_t", "PARAM", None, ()),
    ("block_size", "int32_t", "PARAM", None, ()),
    ("reserved", "int32_t", "PARAM", None, ()),
    ("slot_mapping", "int64_t *", "OUT", ("C",), ("GROUP_SLOTS",)),
    ("seq_lens_out", "int32_t *", "OUT", ("R",), ("GROUP_LENS",)),
]

TOPK_FIELDS = [
    ("struct_size", "size_t", "PARAM", None, ()),
    ("topk", "const int32_t *", "IN", ("T", "topk_count", "topk_stride"), ("ALWAYS",)),
    ("topk_stride", "int64_t", "PARAM", None, ()),
    ("num_tokens", "int32_t", "PARAM", None, ()),
    ("topk_count", "int32_t", "PARAM", None, ()),
    ("query_start_loc", "const int32_t *", "IN", ("R1",), ("ALWAYS",)),
    ("req_id", "const int32_t *", "IN", ("T",), ("ALWAYS",)),
    ("num_reqs", "int32_t", "PARAM", None, ()),
    ("block_table", "const int32_t *", "IN", ("R", "block_table_cols", "block_table_stride"), ("ALWAYS",)),
    ("block_table_cols", "int32_t", "PARAM", None, ()),
    ("block_table_stride", "int64_t", "PARAM", None, ()),
    ("block_size", "int32_t", "PARAM", None, ()),
    ("stride_rows", "int32_t", "PARAM", None, ()),
    ("dcp_world_size", "int32_t", "PARAM", None, ()),
    ("dcp_rank", "int32_t", "PARAM", None, ()),
    ("dcp_interleave", "int32_t", "PARAM", None, ()),
    ("prefill_req", "const int32_t *", "IN", ("T",), ("ALWAYS",)),
    ("workspace_starts", "const int32_t *", "IN", ("P",), ("TOPK_PREFILL",)),
    ("num_prefill", "int32_t", "PARAM", None, ()),
    ("token_slot", "const int64_t *", "IN", ("T",), ("ALWAYS",)),
    ("out", "int32_t *", "OUT", ("T", "topk_count", "out_stride"), ("TOPK_ROWS",)),
    ("out_stride", "int64_t", "PARAM", None, ()),
    ("valid_count", "int32_t *", "OUT", ("T",), ("TOPK_ROWS",)),
    ("compact", "int32_t", "PARAM", None, ()),
    ("error_word", "int32_t *", "OUT", ("ONE",), ("ALWAYS",)),
]

# The DeepSeek-V3.2/V4 products (contract sections 5, 7, 8).
DSV4_PRODUCTS = ("SWA_INDICES", "SWA_LENS", "C128A_ROWS", "C128A_LENS", "C128A_PREFILL_ROWS", "GROUP_SLOTS", "GROUP_LENS")
