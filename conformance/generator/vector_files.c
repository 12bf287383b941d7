// SPDX-License-Identifier: Apache-2.0
/* The generator's table of vector files (vector_files.h). */
#include "vector_files.h"

#include <stddef.h>
#include <string.h>

const amg_vector_file amg_files[] = {
    {"s1_token_map.amv",
     {"Contract section 1: the token -> request map. num_mapped below, at, inside and",
      "past the padding, negative (= actual); no requests; only empty requests.", NULL}, 1},
    {"s2_indexer.amv",
     {"Contract section 2: sparse-indexer decode metadata. Seed shapes with and without",
      "graph padding, zero-length requests, odd widths and strides (vector and scalar",
      "copies, misaligned tables), skewed and large batches, capacity tails."}, 1},
    {"s2a_dcp.amv",
     {"Contract section 2a: decode context parallelism. World sizes 2, 4, 8, interleaves",
      "1, 2, 16, block sizes 1, 16, 64; one rank block per rank; the contract's example.",
      NULL}, 1},
    {"s3_positions_slots.amv",
     {"Contract section 3: positions and slot mapping. Block sizes 1, 16, 64, prefill",
      "mixed with decode, positions past the block table, tables without columns.", NULL}, 1},
    {"s4_random_steps.amv",
     {"Contract section 4: one step builds every product in one launch. Seeded random",
      "batches (shape, block size, DCP, padding, capacity, strides, alignment).", NULL}, 1},
    {"errors_device_data.amv",
     {"Contract section 'Errors and bad input': hostile device data. Boundaries that are",
      "not well formed (values unspecified: '?'; flags at least), negative and huge",
      "lengths, negative block ids (values and flags defined by the contract)."}, 1},
    /* format version 2: the DeepSeek-V3.2/V4 products, with every part-1 product */
    {"s5_compressed.amv",
     {"Contract section 5: compressed slot mapping. The engines' matrix (ratio 4, 128 x",
      "context 8192, 32768, 131072 x decode length 1, 8 x batch 1, 4, storage block",
      "256 / ratio), the contract's two examples, four groups in one step."}, 2},
    {"s7_swa.amv",
     {"Contract section 7: sliding-window rows. Windows 8 and 128, block 64, causal and",
      "non-causal (draft blocks), row strides past the width.", NULL}, 2},
    {"s8_c128a.amv",
     {"Contract section 8: heavily compressed (C128A) rows. Positions 256 and 299 with",
      "width 8192 (local and global), long contexts, odd strides.", NULL}, 2},
    {"s9_dsv4_steps.amv",
     {"Contract sections 4 and 9: whole DSV4 steps, every product in one launch; DCP",
      "world sizes 2, 4 with interleaves 1, 2, every rank; no requests.", NULL}, 2},
    /* format version 4: the indexer's compressed lengths */
    {"s5a_indexer_lens.amv",
     {"Contract section 5a: the indexer's compressed lengths. Ratios 1, 4, 128, both DCP",
      "orders (decode, prefill) over world sizes 2, 4, 8, the contract's example, a whole",
      "DSV4 step with them, no requests, hostile boundaries and lengths."}, 4},
    /* format version 5: the settings and inputs declared after 0.3 by name */
    {"s5b_pcp_slots.amv",
     {"Contract section 5b: PCP's logical slots mapped into each compressed group. Ratios",
      "1, 4, 128 over logical blocks 256 and 512, decode and prefill chunks, a whole DSV4",
      "step, no requests, hostile slots, positions and boundaries."}, 5},
    {"s7_swa_visible.amv",
     {"Contract section 7: sliding-window rows with in-image visibility and the replay",
      "floor. Images in prefill chunks, beside decode tokens, wider than the window, a",
      "whole DSV4 step; floors below, inside and above the windows; hostile counts."}, 5},
    {"errors_dsv4.amv",
     {"Errors: hostile device data for the DSV4 products. Negative positions, negative",
      "and huge block ids (slots past INT32_MAX in int32 rows), positions past the",
      "tables, boundaries that are not well formed."}, 2},
    {"s7_swa_groups.amv",
     {"Contract section 7: every SWA group of a step in one launch. Two to four groups",
      "(stacked tables and rows with group strides), token slots, the replay floor,",
      "non-causal rows, a whole DSV4.1 step, positions past the tables, no requests."}, 5},
};
/* Indices into amg_files, in its order. */
enum { F_S1, F_S2, F_S2A, F_S3, F_S4, F_ERR, F_S5, F_S7, F_S8, F_S9, F_S5A, F_S5B, F_S7V,
       F_ERR_DSV4, F_S7G, NFILES };
const int amg_num_files = NFILES;

static int starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* The file a case belongs in, by its contract section. */
int amg_file_of(const char *name) {
  if (starts(name, "hostile_") || starts(name, "seq_") || starts(name, "neg_block_ids"))
    return F_ERR;
  if (starts(name, "dcp_")) return F_S2A;
  if (starts(name, "random_")) return F_S4;
  if (starts(name, "mapped_") || starts(name, "r0_") || starts(name, "r2_") ||
      starts(name, "empty3_"))
    return F_S1;
  if (starts(name, "bs") || starts(name, "prefill_decode") || starts(name, "past_table") ||
      starts(name, "cols0"))
    return F_S3;
  return F_S2;
}

int amg_dsv4_file_of(const char *name) {
  if (starts(name, "ixl_")) return F_S5A;
  if (starts(name, "pcp_")) return F_S5B;
  if (starts(name, "swa_vis_")) return F_S7V;
  if (starts(name, "swa_grp_")) return F_S7G;
  if (starts(name, "hostile_")) return F_ERR_DSV4;
  if (starts(name, "cmp_")) return F_S5;
  if (starts(name, "swa_")) return F_S7;
  if (starts(name, "c128a_")) return F_S8;
  return F_S9;
}
