/* The generator's table of vector files (vector_files.h). */
#include "vector_files.h"

#include <stddef.h>
#include <string.h>

const amg_vector_file amg_files[] = {
    {"s1_token_map.amv",
     {"Contract section 1: the token -> request map. num_mapped below, at, inside and",
      "past the padding, negative (= actual); no requests; only empty requests.", NULL}},
    {"s2_indexer.amv",
     {"Contract section 2: sparse-indexer decode metadata. Seed shapes with and without",
      "graph padding, zero-length requests, odd widths and strides (vector and scalar",
      "copies, misaligned tables), skewed and large batches, capacity tails."}},
    {"s2a_dcp.amv",
     {"Contract section 2a: decode context parallelism. World sizes 2, 4, 8, interleaves",
      "1, 2, 16, block sizes 1, 16, 64; one rank block per rank; the contract's example.",
      NULL}},
    {"s3_positions_slots.amv",
     {"Contract section 3: positions and slot mapping. Block sizes 1, 16, 64, prefill",
      "mixed with decode, positions past the block table, tables without columns.", NULL}},
    {"s4_random_steps.amv",
     {"Contract section 4: one step builds every product in one launch. Seeded random",
      "batches (shape, block size, DCP, padding, capacity, strides, alignment).", NULL}},
    {"errors_device_data.amv",
     {"Contract section 'Errors and bad input': hostile device data. Boundaries that are",
      "not well formed (values unspecified: '?'; flags at least), negative and huge",
      "lengths, negative block ids (values and flags defined by the contract)."}},
};
/* Indices into amg_files, in its order. */
enum { F_S1, F_S2, F_S2A, F_S3, F_S4, F_ERR, NFILES };
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
