/*
 * No output may overlap an input or another output (the kernel's pointers
 * are restrict, and an overlap would make results depend on the order of
 * the stores). The host sees every pointer and size, so it checks: each
 * buffer is `rows` runs of `width` bytes, `pitch` bytes apart (one run for
 * a plain array; a block table is strided, and the bytes between its rows'
 * used columns belong to nobody).
 */
#include <stdint.h>

#include "am_step_overlap.h"

typedef struct extent {
  const char *name;
  uint64_t base;  /* address of the first byte */
  int64_t rows;   /* runs, >= 1 */
  int64_t width;  /* bytes of each run, >= 1 */
  int64_t pitch;  /* bytes from one run to the next, >= width */
  int output;
} extent;

static const char *const group_names[][3] = {
    {"compressed_groups[0].block_table", "compressed_groups[0].slot_mapping",
     "compressed_groups[0].seq_lens_out"},
    {"compressed_groups[1].block_table", "compressed_groups[1].slot_mapping",
     "compressed_groups[1].seq_lens_out"},
    {"compressed_groups[2].block_table", "compressed_groups[2].slot_mapping",
     "compressed_groups[2].seq_lens_out"},
    {"compressed_groups[3].block_table", "compressed_groups[3].slot_mapping",
     "compressed_groups[3].seq_lens_out"}};
_Static_assert(sizeof group_names / sizeof group_names[0] == ATTNMETA_MAX_COMPRESSED_GROUPS,
               "a name per compressed group");

/* Rows of two strided buffers compared one by one at most: beyond, two
 * interleaved tables are refused without proof (no engine lays out its
 * block tables so). */
#define MAX_ROW_PAIRS ((int64_t)1 << 16)

static uint64_t end_of(const extent *e) {
  return e->base + (uint64_t)((e->rows - 1) * e->pitch + e->width);
}

/* Does [lo, hi) meet a row of e? */
static int run_meets(uint64_t lo, uint64_t hi, const extent *e) {
  uint64_t first;
  if (hi <= e->base || lo >= end_of(e)) return 0;
  if (e->rows == 1 || e->pitch == e->width) return 1; /* contiguous */
  /* the first row that ends after lo */
  first = lo < e->base + (uint64_t)e->width
              ? 0
              : (lo - e->base - (uint64_t)e->width) / (uint64_t)e->pitch + 1;
  return first < (uint64_t)e->rows && e->base + first * (uint64_t)e->pitch < hi;
}

static int extents_meet(const extent *a, const extent *b) {
  const extent *few, *many;
  int64_t i;
  if (end_of(a) <= b->base || end_of(b) <= a->base) return 0;
  if (a->rows == 1 || a->pitch == a->width) return run_meets(a->base, end_of(a), b);
  if (b->rows == 1 || b->pitch == b->width) return run_meets(b->base, end_of(b), a);
  few = a->rows <= b->rows ? a : b;
  many = few == a ? b : a;
  if (few->rows > MAX_ROW_PAIRS) return 1;
  for (i = 0; i < few->rows; ++i) {
    const uint64_t lo = few->base + (uint64_t)(i * few->pitch);
    if (run_meets(lo, lo + (uint64_t)few->width, many)) return 1;
  }
  return 0;
}

/* `rows` runs of `cols` elements of `elem` bytes, `stride` elements apart.
 * The step's other checks bound rows x stride x 8 bytes when rows > 0. */
static void add(extent *list, int *n, const char *name, const void *ptr, int64_t rows,
                int64_t cols, int64_t stride, int64_t elem, int output) {
  extent *e;
  if (!ptr || rows <= 0 || cols <= 0) return; /* not used, or no byte */
  e = &list[(*n)++];
  e->name = name;
  e->base = (uint64_t)(uintptr_t)ptr;
  e->rows = rows;
  e->width = cols * elem;
  e->pitch = stride * elem;
  e->output = output;
}

static void add_array(extent *list, int *n, const char *name, const void *ptr, int64_t count,
                      int64_t elem, int output) {
  add(list, n, name, ptr, 1, count, count, elem, output);
}

attnmeta_status am_check_overlaps(attnmeta_context *ctx, const attnmeta_step *s) {
  const int wants_seq = s->seq_lens_out || s->global_seq_lens_out || s->positions || s->slot_mapping;
  const int wants_table = s->block_table_out || s->slot_mapping;
  const int64_t R = s->num_reqs, T = s->num_tokens, C = s->capacity;
  const int64_t cols = wants_table ? s->block_table_cols : 0;
  /* the part-1 buffers, then each compressed group's three, SWA's and
   * C128A's three */
  extent list[14 + 3 * ATTNMETA_MAX_COMPRESSED_GROUPS + 6];
  int n = 0, i, j, g;

  add_array(list, &n, "query_start_loc", s->query_start_loc, R + 1, 4, 0);
  if (wants_seq) add_array(list, &n, "seq_lens", s->seq_lens, R, 4, 0);
  if (wants_table)
    add(list, &n, "block_table", s->block_table, R, cols, s->block_table_stride, 4, 0);
  add_array(list, &n, "token_to_req", s->token_to_req, T, 4, 1);
  add_array(list, &n, "seq_lens_out", s->seq_lens_out, C, 4, 1);
  add_array(list, &n, "global_seq_lens_out", s->global_seq_lens_out, T, 4, 1);
  add(list, &n, "block_table_out", s->block_table_out, T, cols, s->block_table_out_stride, 4, 1);
  add_array(list, &n, "decode_lens_out", s->decode_lens_out, T, 4, 1);
  add_array(list, &n, "req_indices_out", s->req_indices_out, T, 4, 1);
  add_array(list, &n, "per_req_lens_out", s->per_req_lens_out, R, 4, 1);
  add_array(list, &n, "positions", s->positions, T, 8, 1);
  add_array(list, &n, "slot_mapping", s->slot_mapping, C, 8, 1);
  add_array(list, &n, "error_word", s->error_word, 1, 4, 1);

  /* DeepSeek-V3.2/V4 products: a table is read only by its slots or rows */
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g) {
    const attnmeta_compressed_group *grp = &s->compressed_groups[g];
    if (grp->slot_mapping)
      add(list, &n, group_names[g][0], grp->block_table, R, grp->block_table_cols,
          grp->block_table_stride, 4, 0);
    add_array(list, &n, group_names[g][1], grp->slot_mapping, C, 8, 1);
    add_array(list, &n, group_names[g][2], grp->seq_lens_out, R, 4, 1);
  }
  if (s->swa_indices)
    add(list, &n, "swa_block_table", s->swa_block_table, R, s->swa_block_table_cols,
        s->swa_block_table_stride, 4, 0);
  add(list, &n, "swa_indices", s->swa_indices, T, s->swa_width, s->swa_indices_stride, 4, 1);
  add_array(list, &n, "swa_lens", s->swa_lens, C, 4, 1);
  if (s->c128a_rows && s->c128a_mode == ATTNMETA_C128A_GLOBAL)
    add(list, &n, "c128a_block_table", s->c128a_block_table, R, s->c128a_block_table_cols,
        s->c128a_block_table_stride, 4, 0);
  add(list, &n, "c128a_rows", s->c128a_rows, T, s->c128a_width, s->c128a_rows_stride, 4, 1);
  add_array(list, &n, "c128a_lens", s->c128a_lens, C, 4, 1);

  for (i = 0; i < n; ++i) {
    for (j = i + 1; j < n; ++j) {
      if (!list[i].output && !list[j].output) continue; /* inputs may share bytes */
      if (extents_meet(&list[i], &list[j]))
        return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                       "%s %s overlaps %s %s: no output may share bytes with an input or "
                       "another output",
                       list[j].output ? "output" : "input", list[j].name,
                       list[i].output ? "output" : "input", list[i].name);
    }
  }
  return ATTNMETA_OK;
}
