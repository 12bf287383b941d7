// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta step, in three tables (cli_step_tables.c) and one driver
 * (cli_step.c):
 *
 *  - shape options: each `--name N` (or `--name A..B`) that sets a field of
 *    step_shape, with its range and help line;
 *  - inputs: the host arrays the step reads, how long, how they are filled,
 *    and where they go in attnmeta_step;
 *  - products: the outputs the step builds, how long, where they go in
 *    attnmeta_step, and how they are printed.
 *
 * The driver parses the options from the first table, allocates and fills
 * every input, allocates every product chosen by --products, builds the
 * step, prints a labelled summary and times it. A new product (or a new
 * kind of step) is a new row in these tables plus the step_shape fields its
 * options set.
 */
#ifndef ATTNMETA_TOOLS_CLI_STEP_H
#define ATTNMETA_TOOLS_CLI_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "attnmeta/attnmeta.h"

/* The step's size and settings; every field is set by a shape option. */
typedef struct step_shape {
  int reqs;                    /* R */
  int qlen_min, qlen_max;      /* query tokens of each request, drawn in this range */
  int context_min, context_max; /* KV tokens before the step's, drawn in this range */
  int pad;                     /* padding tokens past the real ones; -1: to a power of two */
  int capacity;                /* C; 0: past T to the next multiple of 512 */
  int cols;                    /* block-table columns */
  int block_size;              /* KV block size */
  int dcp_world, dcp_rank, dcp_interleave;
  int seed;                    /* of the query and context lengths */
  int swa_window;              /* DSV4 sliding-window rows: positions a token sees */
} step_shape;

/* The shape made concrete: the drawn lengths and the derived sizes. */
typedef struct step_plan {
  step_shape shape;
  int32_t *qlens;   /* [R] */
  int32_t *context; /* [R] */
  int actual;       /* real tokens: the sum of qlens */
  int tokens;       /* T = actual + padding */
  int capacity;     /* C */
  int c128a_width;  /* DSV4 C128A rows: the longest compressed length, (max KV) / 128 */
} step_plan;

/* ---- shape options ---- */
typedef struct step_shape_option {
  const char *name;      /* "--reqs" */
  const char *metavar;   /* "N" or "A..B" */
  const char *help;      /* one line */
  size_t offset;         /* of the int field in step_shape (the first of a range) */
  size_t offset_to;      /* of a range's second field; 0 for a single value */
  int lo, hi;            /* accepted values */
} step_shape_option;

extern const step_shape_option step_shape_options[];
extern const size_t step_shape_option_count;
void step_shape_default(step_shape *s);

/* ---- inputs ---- */
typedef struct step_input {
  const char *name;
  size_t offset;     /* of its pointer in attnmeta_step */
  size_t elem_bytes;
  int64_t (*count)(const step_plan *p);
  void (*fill)(const step_plan *p, void *host);
  void (*settings)(attnmeta_step *s, const step_plan *p); /* the sizes it comes with, or NULL */
} step_input;

extern const step_input step_inputs[];
extern const size_t step_input_count;

/* ---- products ---- */
typedef struct step_product {
  const char *name;   /* as --products takes it and the print-out shows it */
  int dsv4;           /* a DeepSeek-V4 product: built when named, or with "dsv4" or "all" */
  size_t offset;      /* of its pointer in attnmeta_step (a member, or a group's) */
  size_t elem_bytes;  /* 4 (int32) or 8 (int64) */
  int64_t (*count)(const step_plan *p);
  int64_t (*row)(const step_plan *p); /* entries per row for a [T][row] product; NULL: flat */
  void (*settings)(attnmeta_step *s, const step_plan *p); /* what it reads besides, or NULL */
} step_product;

extern const step_product step_products[];
extern const size_t step_product_count;

/* Points the buffer at `offset` in `s` to `device`, then applies its
 * settings (when there are any). */
void step_attach(attnmeta_step *s, const step_plan *p, size_t offset,
                 void (*settings)(attnmeta_step *s, const step_plan *p), void *device);

/* Sets the step's scalar fields (sizes, block size, DCP) from the plan. */
void step_configure(attnmeta_step *s, const step_plan *p);

/* The DeepSeek-V4 products read the step's block table (set by the inputs)
 * through these block sizes: compressed rows per block of a group or of the
 * C128A rows of `ratio`, and the SWA group's positions per block. Each is
 * chosen so that no product needs more columns than the step's own rows. */
int step_dsv4_block_size(const step_shape *s, int ratio);
int step_swa_block_size(const step_shape *s);
#define STEP_C4_RATIO 4
#define STEP_C128_RATIO 128

#endif
