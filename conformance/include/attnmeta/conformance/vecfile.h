// SPDX-License-Identifier: Apache-2.0
/*
 * Conformance vector files (format: conformance/spec/, installed in
 * share/attnmeta/spec/; the kit: docs/conformance.md): the data model, a small
 * strict parser that rejects malformed files with a line number, and the
 * writer the generator uses. ISO C11 plus POSIX directory listing; no
 * library beyond libc, so the kit builds on a bare machine.
 *
 * A vector is one attnmeta_build_step operation: its sizes, options and
 * input buffer contents, and for each DCP rank it names the outputs the
 * naive reference expects (values the contract leaves unspecified are
 * "unchecked") and the error-word flags. Version 3 adds top-k vectors
 * (vecfile_topk.h), version 6 pool vectors (vecfile_pool.h).
 */
#ifndef ATTNMETA_CONFORMANCE_VECFILE_H
#define ATTNMETA_CONFORMANCE_VECFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attnmeta/attnmeta.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AMV_MAGIC "attnmeta-vectors"
#define AMV_VERSION 6    /* the newest format version this reader and writer know */
#define AMV_VERSION_MIN 1 /* the oldest one it still reads (and writes) */
#define AMV_VERSION_TOPK 3 /* version 3 adds "op topk" (spec/attnmeta-vectors-v3.md) */
#define AMV_VERSION_INDEXER 4 /* version 4 adds the indexer's lengths (spec/attnmeta-vectors-v4.md) */
/* version 5 adds the step's settings and inputs declared after 0.3, each by
 * its schema name (spec/attnmeta-vectors-v5.md) */
#define AMV_VERSION_SCHEMA 5
#define AMV_VERSION_POOL 6 /* version 6 adds "op pool" (spec/attnmeta-vectors-v6.md) */
#define AMV_NAME_MAX 64                   /* vector names: at most 63 characters */
#define AMV_MAX_ELEMS ((int64_t)1 << 26)  /* largest buffer a vector may declare */
#define AMV_MAX_SWA_GROUPS 64              /* most SWA groups a vector may stack (version 5) */
#define AMV_WRAP 100                      /* the writer's line width */

/* Outputs, in the order of the bits of amv_vector.products: the OUT
 * members of attnmeta_step but the error word, in the struct's order, the
 * compressed groups' member by member (src/common/am_schema.h). The reader
 * knows amv_num_outputs() of them; this header names those of today. */
enum amv_output {
  AMV_TOKEN_TO_REQ,
  AMV_SEQ_LENS_OUT,
  AMV_GLOBAL_SEQ_LENS_OUT,
  AMV_BLOCK_TABLE_OUT,
  AMV_DECODE_LENS_OUT,
  AMV_REQ_INDICES_OUT,
  AMV_PER_REQ_LENS_OUT,
  AMV_POSITIONS,
  AMV_SLOT_MAPPING,
  /* version 2: the DeepSeek-V3.2/V4 products (contract sections 5, 7, 8) */
  AMV_GROUP_SLOT_MAPPING,                         /* group g's: + g, g < AMV_GROUPS */
  AMV_GROUP_SEQ_LENS_OUT = AMV_GROUP_SLOT_MAPPING + 4, /* group g's: + g */
  AMV_SWA_INDICES = AMV_GROUP_SEQ_LENS_OUT + 4,
  AMV_SWA_LENS,
  AMV_C128A_ROWS,
  AMV_C128A_LENS,
  /* version 4: the indexer's compressed lengths (contract section 5a) */
  AMV_INDEXER_LENS_OUT,
  AMV_C128A_PREFILL_ROWS, /* C128A's mixed mode only */
  AMV_NUM_OUTPUTS
};
#define AMV_MAX_OUTPUTS 31 /* room for the outputs of later steps (a bit each) */
#define AMV_GROUPS 4                 /* compressed groups a step carries */
#define AMV_V1_OUTPUTS AMV_GROUP_SLOT_MAPPING
/* The products of version 1 (every vector of the v1 files asks for these). */
#define AMV_ALL_PRODUCTS ((1u << AMV_V1_OUTPUTS) - 1u)

/* Inputs: the IN members of attnmeta_step, in the same order; those from
 * AMV_NUM_INPUTS on (version 5) are optional, by their schema names. */
#define AMV_MAX_INPUTS 16
enum amv_input {
  AMV_QUERY_START_LOC,
  AMV_SEQ_LENS,
  AMV_BLOCK_TABLE,
  /* version 2 */
  AMV_GROUP_BLOCK_TABLE,                        /* group g's: + g */
  AMV_SWA_BLOCK_TABLE = AMV_GROUP_BLOCK_TABLE + 4,
  AMV_C128A_BLOCK_TABLE,
  AMV_SWA_TOKEN_SLOTS, /* optional: a vector may leave it out (NULL) */
  AMV_NUM_INPUTS
};

/* The families of version-2 products: compressed groups 0..3, SWA, C128A
 * (each with its flags in expect_flags_dsv4); then version 4's indexer
 * lengths, which raise no flag. */
enum { AMV_FAMILY_SWA = AMV_GROUPS, AMV_FAMILY_C128A, AMV_NUM_FAMILIES,
       AMV_FAMILY_INDEXER = AMV_NUM_FAMILIES, AMV_NUM_PARAM_FAMILIES };

/* Version 2's DeepSeek-V3.2/V4 settings of a vector (attnmeta_step's
 * compressed_groups[], swa_*, c128a_*), for the families it builds. */
typedef struct amv_dsv4 {
  struct {
    int32_t ratio, block_size, cols;
    int64_t stride;
  } group[AMV_GROUPS];
  int32_t swa_block_size, swa_window, swa_width, swa_mode, swa_cols;
  int64_t swa_stride, swa_out_stride;
  int32_t c128a_ratio, c128a_block_size, c128a_width, c128a_mode, c128a_cols;
  int64_t c128a_stride, c128a_out_stride;
} amv_dsv4;

/* How many outputs and inputs the reader knows (>= AMV_NUM_OUTPUTS and
 * AMV_NUM_INPUTS). */
int amv_num_outputs(void);
int amv_num_inputs(void);
/* Names as in attnmeta_step ("token_to_req", ..., "slot_mapping"). */
const char *amv_output_name(int output);
const char *amv_input_name(int input);
int amv_output_is64(int output); /* positions and the slot mappings are int64 */
/* The family (group g, AMV_FAMILY_SWA, AMV_FAMILY_C128A) of a version-2
 * product or input, -1 for those of version 1. */
int amv_output_family(int output);
int amv_input_family(int input);

/* A list of values; care == NULL: every value is checked, else care[i] == 0
 * marks value i "unchecked" (the contract leaves it unspecified). */
typedef struct amv_values {
  int64_t n;
  int64_t *v;
  unsigned char *care;
} amv_values;

/* What one DCP rank must produce. */
typedef struct amv_rank {
  int32_t rank;
  int line;
  amv_values expect[AMV_MAX_OUTPUTS]; /* only the vector's products */
  int32_t flags_requests;             /* raised by query_start_loc */
  int32_t flags_seq_lens;             /* raised by seq_lens when it is passed */
  int32_t flags_slots;                /* raised while building slot_mapping */
  /* version 2: raised while building group g's slot_mapping (g < 4), the SWA
   * lengths (index 4: by either SWA output), the SWA rows (5), the C128A rows (6) */
  int32_t flags_dsv4[AMV_NUM_FAMILIES + 1];
  int flags_exact;                    /* 1: exactly these; 0: at least these */
} amv_rank;

/* The operation of a vector. */
enum amv_op { AMV_OP_STEP, AMV_OP_TOPK, AMV_OP_POOL };

struct amv_topk; /* vecfile_topk.h */
struct amv_pool; /* vecfile_pool.h */

typedef struct amv_vector {
  char name[AMV_NAME_MAX];
  int line; /* of its "vector" line */
  /* op step: its params, each in the attnmeta_step member of its name
   * (the version-2 ones for the families of its products, the rest 0;
   * buffers NULL). The writer and the runner read these. */
  attnmeta_step step;
  int misalign; /* bit 0: input block table, bit 1: block_table_out off 16-byte alignment */
  /* copies of step's params, filled by the reader (older callers read them) */
  int32_t num_reqs, num_tokens, capacity, cols;
  int64_t in_stride, out_stride;
  int32_t num_mapped, block_size, world, interleave;
  unsigned products;
  int version;    /* of the file it came from; the writer writes version-2 records only in 2 */
  amv_dsv4 dsv4;  /* copies of step's version-2 params, filled by the reader */
  amv_values input[AMV_MAX_INPUTS]; /* those of its families (n = 0 for the others) */
  int nranks;     /* op step */
  amv_rank *ranks;
  int op;                 /* amv_op; the fields above are those of op step */
  struct amv_topk *topk;  /* op topk: its sizes, inputs and ranks (vecfile_topk.h) */
  struct amv_pool *pool;  /* op pool: its params, inputs and outputs (vecfile_pool.h) */
} amv_vector;

typedef struct amv_file {
  char *path;
  int nvectors;
  amv_vector *vectors;
} amv_file;

/* Parses a whole file from memory (label names it in messages). With
 * `only` != NULL only the vector of that name is kept, and reading stops
 * after it (what follows it is not checked). Returns 0, or -1 with
 * "LABEL:LINE: what is wrong" in err. */
int amv_parse(const char *text, size_t len, const char *label, const char *only, amv_file *out,
              char *err, size_t errsize);
/* The same, reading the file at `path`. */
int amv_load(const char *path, const char *only, amv_file *out, char *err, size_t errsize);
/* Checks the whole file but keeps only each vector's name, sizes, options
 * and rank numbers (no values). */
int amv_load_headers(const char *path, amv_file *out, char *err, size_t errsize);
void amv_file_free(amv_file *f);
void amv_vector_free(amv_vector *v);

/* The files of `spec`: a directory (its *.amv files, sorted by name) or a
 * comma-separated list of files and directories. Returns the number of
 * paths (a malloc-ed array of malloc-ed strings in *paths), -1 on error. */
int amv_list_files(const char *spec, char ***paths, char *err, size_t errsize);
void amv_free_list(char **paths, int n);

/* ---- writing (the generator) ---- */
void amv_write_header(FILE *f); /* version 1 */
/* The first line for a file of format `version` (AMV_VERSION_TOPK when it
 * holds "op topk" vectors). */
void amv_write_header_version(FILE *f, int version);
/* Which families (bit per family) a product set builds. */
unsigned amv_families(unsigned products);
/* One "input"/"expect" record, compressed (runs "V*N", ranges "A..B",
 * unchecked "?") and wrapped at AMV_WRAP columns. */
void amv_write_values(FILE *f, const char *keyword, const char *name, const amv_values *values);
void amv_write_vector(FILE *f, const amv_vector *v);

#ifdef __cplusplus
}
#endif

#endif /* ATTNMETA_CONFORMANCE_VECFILE_H */
