// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_step's pool operation: attnmeta_build_pool_indices (docs/c_api.md,
 * "SGLang's request pool") on the CPU backend against the naive reference
 * of conformance/generator/pool_reference.c.
 *
 * The input bytes decide B request rows, the pool (P rows of Wr columns,
 * its stride), the page size, which products are wanted (kv_indices placed
 * by kv_indptr or by kv_indptr_out, kv_indptr_out, page_table), kv_start_idx
 * or not, the capacity, the page table's width and stride, the error word
 * (with a prior value), two CPU launch configurations and an emulated GPU
 * launch, and the device data:
 *  - valid: pool rows in [0, P), lengths and start columns inside the row,
 *    kv_indptr the prefix sum, a capacity and a width that hold every row;
 *  - hostile: pool rows outside the pool and at the INT64 limits, negative
 *    lengths, lengths and start columns with high bits (read as int32),
 *    lengths up to INT32_MAX (the prefix sum past INT32_MAX), columns past
 *    the row, negative and edge pool entries, kv_indptr perturbed (edges,
 *    decreasing, rows outgrowing their place), a capacity or a width too
 *    small for the rows.
 *
 * Checked on every input:
 *  - memory: inputs are exact-size allocations (AddressSanitizer sees any
 *    read past them) that must stay unchanged; outputs sit between
 *    poisoned guard zones or in exact-size allocations;
 *  - the call returns OK (the host arguments are valid by construction);
 *  - every byte of kv_indices, kv_indptr_out and page_table (stride gaps
 *    included: what the operation does not write stays poisoned) and the
 *    error word equal the reference's, whatever the data;
 *  - the second launch configuration, the kernel body run for an emulated
 *    launch (several one-thread blocks, each request row cut into a decoded
 *    number of slices) and, in the HIP-CPU mode (fuzz_hip_cpu.h), the HIP
 *    module at the shape the library plans give the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_pool_kernel.h" /* the kernel body, for the emulated GPU launch */
#include "am_pool_translate.h"
#include "attnmeta/attnmeta.h"
#include "fuzz_hip_cpu.h"
#include "fuzz_ops.h"
#include "fuzz_util.h"
#include "pool_reference.h"

#define MAX_ELEMS 32768  /* elements of the pool or the page table */
#define MAX_CAPACITY 65536
#define REF_WORK (1 << 22) /* the reference's loop steps an input may cost */

enum { O_INDICES, O_INDPTR, O_PAGES, O_ERR, NOUT };

typedef struct pool_case {
  int32_t B, P, cols, ps, width;
  int64_t stride, page_stride, capacity;
  int want_indices, want_indptr_out, want_pages, use_indptr, use_start, want_err, exact;
  int32_t err_init;
  int32_t *pool, *indptr; /* [P * stride] (n_pool used), [B + 1] */
  int64_t *rows, *lengths, *starts; /* [B] */
  int64_t n_pool;
  attnmeta_launch_config cfg[2];
  uint32_t lanes, groups, grid; /* the emulated GPU launch */
} pool_case;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int32_t low32(int64_t v) { return (int32_t)(uint32_t)((uint64_t)v & 0xffffffffu); }

static void *xcalloc(int64_t n, size_t size) {
  void *p = calloc((size_t)(n > 0 ? n : 1), size);
  if (!p) fz_fail("out of memory");
  return p;
}

/* An int64 whose low 32 bits are `low`, with high bits now and then. */
static int64_t with_high_bits(fz_reader *rd, int32_t low) {
  const uint64_t high = fz_rand(rd) % 4 == 0 ? (fz_rand(rd) % 2 ? 0xffffffffu : fz_rand(rd) % 7 + 1) : 0;
  return (int64_t)((high << 32) | (uint32_t)low);
}

static void draw_rows(fz_reader *rd, pool_case *c, int hostile) {
  int32_t b;
  for (b = 0; b < c->B; ++b) {
    const uint64_t u = fz_rand(rd) % 16;
    int32_t start = 0, len;
    c->rows[b] = c->P > 0 ? fz_rand_range(rd, 0, (int64_t)c->P - 1) : 0;
    if (hostile && u == 0)
      c->rows[b] = fz_rand(rd) % 2 ? (int64_t)c->P + (int64_t)(fz_rand(rd) % 3) - (c->P > 0)
                                   : -(int64_t)fz_rand_range(rd, 1, 3);
    if (hostile && u == 1) c->rows[b] = fz_rand(rd) % 2 ? INT64_MIN : INT64_MAX;
    if (hostile && u == 2) c->rows[b] = (int64_t)(((uint64_t)(fz_rand(rd) % 3 + 1) << 32) | (uint32_t)c->rows[b]);
    if (c->use_start) {
      start = c->cols > 0 ? (int32_t)fz_rand_range(rd, 0, c->cols / 2) : 0;
      if (hostile && u == 3) start = fz_rand(rd) % 2 ? -(int32_t)fz_rand_range(rd, 1, 4) : c->cols;
      if (hostile && u == 4) start = fz_rand(rd) % 2 ? INT32_MAX : INT32_MIN;
      c->starts[b] = hostile ? with_high_bits(rd, start) : start;
    }
    len = (int32_t)fz_rand_range(rd, 0, max64((int64_t)c->cols - start, 0));
    if (hostile && u == 5) len = -(int32_t)fz_rand_range(rd, 1, 3);
    if (hostile && u == 6) len = fz_rand(rd) % 2 ? INT32_MIN : INT32_MAX - (int32_t)(fz_rand(rd) % 4);
    if (hostile && u == 7) len = (int32_t)fz_rand_range(rd, 1, 1 << 30);
    if (hostile && u == 8) len += (int32_t)fz_rand_range(rd, 1, 8); /* past the row */
    c->lengths[b] = hostile ? with_high_bits(rd, len) : len;
  }
}

/* The reference walks every token of a row it places by kv_indptr and
 * every page of a page row: huge lengths there are cut down (their high
 * bits kept) so that an input stays cheap. The scan's rows stop at the
 * capacity, so huge lengths stay wherever no table or kv_indptr row is
 * built from them. */
static void bound_reference_work(pool_case *c) {
  int64_t work = 0;
  int32_t b;
  for (b = 0; b < c->B; ++b) {
    const int64_t n = max64(low32(c->lengths[b]), 0);
    work += (c->want_pages ? n / c->ps : 0) + (c->want_indices && c->use_indptr ? n : 0);
  }
  if (work <= REF_WORK) return;
  for (b = 0; b < c->B; ++b)
    if (low32(c->lengths[b]) > (1 << 12))
      c->lengths[b] = (int64_t)(((uint64_t)c->lengths[b] & ~(uint64_t)0xffffffffu) |
                                ((uint32_t)low32(c->lengths[b]) & 0xfffu));
}

static void decode(fz_reader *rd, pool_case *c) {
  static const int32_t sizes[] = {1, 1, 2, 4, 16, 64, 3, 7};
  const uint8_t mode = fz_u8(rd);
  const int hostile = (mode & 3) == 3, hostile_pool = ((mode >> 2) & 3) == 3;
  const int hostile_places = ((mode >> 4) & 3) == 3, short_outputs = ((mode >> 6) & 3) == 3;
  int64_t i, sum = 0, most_pages = 0;
  int32_t b;
  int products;

  memset(c, 0, sizeof *c);
  c->B = (int32_t)fz_range(rd, 0, fz_chance(rd, 1, 8) ? 300 : 12);
  c->P = (int32_t)fz_range(rd, 0, fz_chance(rd, 1, 8) ? 64 : 8);
  c->cols = (int32_t)fz_range(rd, 0, fz_chance(rd, 1, 8) ? 600 : 40);
  c->stride = c->cols + fz_range(rd, 0, 3);
  while (c->P > 0 && ((int64_t)c->P - 1) * c->stride + c->cols > MAX_ELEMS) c->P /= 2;
  c->n_pool = c->P > 0 && c->cols > 0 ? ((int64_t)c->P - 1) * c->stride + c->cols : 0;
  c->ps = fz_chance(rd, 7, 8) ? sizes[fz_range(rd, 0, 7)] : (int32_t)fz_range(rd, 1, INT32_MAX);
  products = (int)fz_range(rd, 1, 7);
  c->want_indices = products & 1;
  c->want_indptr_out = (products >> 1) & 1;
  c->want_pages = (products >> 2) & 1;
  c->use_indptr = c->want_indices && !c->want_indptr_out;
  c->use_start = fz_chance(rd, 1, 2);
  c->want_err = fz_chance(rd, 3, 4);
  c->err_init = fz_chance(rd, 1, 4) ? fz_edge32(rd) : 0;
  c->exact = fz_chance(rd, 1, 4);

  c->pool = xcalloc(c->n_pool, sizeof(int32_t));
  for (i = 0; i < c->n_pool; ++i) {
    const uint64_t u = fz_rand(rd) % 16;
    c->pool[i] = (int32_t)fz_rand_range(rd, 0, 1 << 20);
    if (hostile_pool && u == 0) c->pool[i] = -1; /* SGLang's sentinel */
    if (hostile_pool && u == 1) c->pool[i] = fz_rand(rd) % 2 ? INT32_MIN : INT32_MAX;
    if (hostile_pool && u == 2) c->pool[i] = -(int32_t)fz_rand_range(rd, 2, INT32_MAX);
  }
  c->rows = xcalloc(c->B, sizeof(int64_t));
  c->lengths = xcalloc(c->B, sizeof(int64_t));
  c->starts = xcalloc(c->B, sizeof(int64_t));
  draw_rows(rd, c, hostile);
  bound_reference_work(c);

  /* kv_indptr: the prefix sum, perturbed when hostile */
  c->indptr = xcalloc((int64_t)c->B + 1, sizeof(int32_t));
  for (b = 0; b < c->B; ++b) {
    const int64_t n = max64(low32(c->lengths[b]), 0);
    sum += n;
    c->indptr[b + 1] = (int32_t)min64(sum, INT32_MAX);
    most_pages = max64(most_pages, (n + c->ps - 1) / c->ps);
  }
  if (hostile_places) {
    const int n = (int)fz_range(rd, 1, 4);
    int j;
    for (j = 0; j < n; ++j) {
      const int64_t at = fz_range(rd, 0, c->B);
      switch (fz_range(rd, 0, 3)) {
        case 0: c->indptr[at] = fz_edge32(rd); break;
        case 1: c->indptr[at] = (int32_t)max64(min64((int64_t)c->indptr[at] + fz_range(rd, -5, 5), INT32_MAX), INT32_MIN); break;
        case 2: c->indptr[at] = (int32_t)fz_range(rd, -3, min64(sum, MAX_CAPACITY) + 3); break;
        default: c->indptr[at] = 0; break;
      }
    }
  }

  /* outputs: room for every row, or less */
  c->capacity = min64(sum + fz_range(rd, 0, 8), MAX_CAPACITY);
  if (short_outputs && fz_chance(rd, 1, 2)) c->capacity = fz_range(rd, 0, c->capacity);
  c->width = (int32_t)min64(most_pages + fz_range(rd, 0, 2), 512);
  if (short_outputs && fz_chance(rd, 1, 2)) c->width = (int32_t)fz_range(rd, 0, c->width);
  c->page_stride = c->width + fz_range(rd, 0, 3);
  while (c->B > 0 && ((int64_t)c->B - 1) * c->page_stride + c->width > MAX_ELEMS)
    c->page_stride = c->width = c->width / 2;

  for (i = 0; i < 2; ++i) {
    attnmeta_launch_config *g = &c->cfg[i];
    const uint8_t u = fz_u8(rd);
    *g = attnmeta_launch_config_default();
    g->block = (int)fz_range(rd, 0, 1);
    g->grid = u < 128   ? 0
              : u < 224 ? (int)fz_range(rd, 1, 8)
              : u < 248 ? (int)fz_range(rd, 9, 4096)
                        : (fz_chance(rd, 1, 2) ? INT32_MAX : (int)fz_range(rd, 4097, INT32_MAX));
    g->lanes = fz_chance(rd, 1, 2) ? 0 : (int)fz_range(rd, 1, 256);
  }
  c->lanes = (uint32_t)fz_range(rd, 1, 70);
  c->groups = (uint32_t)fz_range(rd, 1, 5);
  c->grid = (uint32_t)fz_range(rd, 1, 4);
}

static void case_free(pool_case *c) {
  free(c->pool);
  free(c->indptr);
  free(c->rows);
  free(c->lengths);
  free(c->starts);
}

typedef struct inputs {
  fz_in pool, rows, lengths, starts, indptr;
} inputs;

/* int64 arrays as int32 pairs: exact size, 16-byte aligned */
static void inputs_alloc(inputs *in, const pool_case *c) {
  fz_in_alloc(&in->pool, c->pool, c->n_pool, 0);
  fz_in_alloc(&in->rows, (const int32_t *)(const void *)c->rows, 2 * (int64_t)c->B, 0);
  fz_in_alloc(&in->lengths, (const int32_t *)(const void *)c->lengths, 2 * (int64_t)c->B, 0);
  fz_in_alloc(&in->starts, (const int32_t *)(const void *)c->starts, 2 * (int64_t)c->B, 0);
  fz_in_alloc(&in->indptr, c->indptr, (int64_t)c->B + 1, 0);
}

static void inputs_free(inputs *in) {
  fz_in_free(&in->pool);
  fz_in_free(&in->rows);
  fz_in_free(&in->lengths);
  fz_in_free(&in->starts);
  fz_in_free(&in->indptr);
}

static void inputs_check(const inputs *in, const pool_case *c) {
  FZ_CHECK(memcmp(in->pool.data, c->pool, (size_t)c->n_pool * 4) == 0 &&
               memcmp(in->rows.data, c->rows, (size_t)c->B * 8) == 0 &&
               memcmp(in->lengths.data, c->lengths, (size_t)c->B * 8) == 0 &&
               memcmp(in->starts.data, c->starts, (size_t)c->B * 8) == 0 &&
               memcmp(in->indptr.data, c->indptr, ((size_t)c->B + 1) * 4) == 0,
           "pool: an input was modified");
}

static int64_t out_elems(const pool_case *c, int which) {
  switch (which) {
    case O_INDICES: return c->want_indices ? c->capacity : 0;
    case O_INDPTR: return c->want_indptr_out ? (int64_t)c->B + 1 : 0;
    case O_PAGES: return c->want_pages && c->B > 0 ? ((int64_t)c->B - 1) * c->page_stride + c->width : 0;
    default: return 1;
  }
}

static void outputs_alloc(fz_buf *o, const pool_case *c) {
  int i;
  for (i = 0; i < NOUT; ++i) {
    if (c->exact && i != O_ERR) fz_buf_alloc_exact(&o[i], 4, out_elems(c, i), 0);
    else fz_buf_alloc(&o[i], 4, out_elems(c, i), 0);
  }
  *(int32_t *)o[O_ERR].data = c->err_init;
}

static void outputs_free(fz_buf *o) {
  int i;
  for (i = 0; i < NOUT; ++i) fz_buf_free(&o[i]);
}

static void fill_op(attnmeta_pool *op, const pool_case *c, const inputs *in, fz_buf *o) {
  attnmeta_pool_init(op);
  op->req_to_token = c->n_pool > 0 ? in->pool.data : NULL;
  op->req_to_token_stride = c->stride;
  op->pool_rows = c->P;
  op->pool_cols = c->cols;
  op->req_pool_indices = c->B > 0 ? (const int64_t *)(const void *)in->rows.data : NULL;
  op->lengths = c->B > 0 ? (const int64_t *)(const void *)in->lengths.data : NULL;
  op->kv_start_idx = c->use_start && c->B > 0 ? (const int64_t *)(const void *)in->starts.data : NULL;
  op->num_reqs = c->B;
  op->page_size = c->ps;
  if (c->use_indptr) op->kv_indptr = in->indptr.data;
  if (c->want_indices) {
    op->kv_indices = o[O_INDICES].data;
    op->kv_indices_capacity = c->capacity;
  }
  if (c->want_indptr_out) op->kv_indptr_out = o[O_INDPTR].data;
  if (c->want_pages) {
    op->page_table = o[O_PAGES].data;
    op->page_table_width = c->width;
    op->page_table_stride = c->page_stride;
  }
  if (c->want_err) op->error_word = o[O_ERR].data;
}

static void describe(const pool_case *c) {
  fprintf(stderr,
          "pool: B=%d P=%d cols=%d stride=%lld page_size=%d products indices %d (kv_indptr %d) "
          "indptr_out %d pages %d (width %d stride %lld) capacity %lld starts %d err %d (init 0x%x) "
          "exact %d configs {%d,%d,%d} {%d,%d,%d} gpu %u x %u x %u\n",
          c->B, c->P, c->cols, (long long)c->stride, c->ps, c->want_indices, c->use_indptr,
          c->want_indptr_out, c->want_pages, c->width, (long long)c->page_stride,
          (long long)c->capacity, c->use_start, c->want_err, (unsigned)c->err_init, c->exact,
          c->cfg[0].block, c->cfg[0].grid, c->cfg[0].lanes, c->cfg[1].block, c->cfg[1].grid,
          c->cfg[1].lanes, c->lanes, c->groups, c->grid);
}

#define PCHECK(c, cond, ...) FZ_CHECK_DESCRIBED(describe(c), cond, __VA_ARGS__)

static void run(attnmeta_context *ctx, const pool_case *c, const inputs *in, fz_buf *o,
                const attnmeta_launch_config *config) {
  attnmeta_pool op;
  attnmeta_status st;
  fill_op(&op, c, in, o);
  st = attnmeta_set_launch_config(ctx, config);
  PCHECK(c, st == ATTNMETA_OK, "attnmeta_set_launch_config: %s", attnmeta_last_error(ctx));
  st = attnmeta_build_pool_indices(ctx, &op, NULL);
  PCHECK(c, st == ATTNMETA_OK, "attnmeta_build_pool_indices refused a valid call: %s (%s)",
         attnmeta_status_string(st), attnmeta_last_error(ctx));
  st = attnmeta_synchronize(ctx, NULL);
  PCHECK(c, st == ATTNMETA_OK, "attnmeta_synchronize: %s", attnmeta_last_error(ctx));
  attnmeta_set_launch_config(ctx, NULL);
}

/* The kernel body at an emulated launch, with the parameters pool.c
 * launches (am_pool_translate.h) but a decoded split of the rows
 * (row_chunks, 1 to 70 slices a row) and grid. One thread a block: the
 * threads of a block sum the lengths together through block-shared memory
 * and barriers, which the host build of the body cannot run in turn; the
 * HIP-CPU mode runs multi-thread blocks. */
static void emulate(const pool_case *c, const inputs *in, fz_buf *o) {
  attnmeta_pool op;
  am_pool_params p;
  uint32_t block, grid = c->grid * c->groups;
  fill_op(&op, c, in, o);
  p = am_pool_params_of(&op);
  if (op.num_reqs == 0 && !op.kv_indptr_out) return; /* the library launches nothing */
  p.row_chunks = (int32_t)c->lanes;
  for (block = 0; block < grid; ++block) am_pool_body(&p, am_make_thread(block, grid, 0, 1, 0, 1));
}

static void check_same(const pool_case *c, const fz_buf *a, const fz_buf *b, const char *what) {
  int i;
  for (i = 0; i < NOUT; ++i)
    PCHECK(c, a[i].total == b[i].total && memcmp(a[i].base, b[i].base, a[i].total) == 0,
           "pool output %d: %s gives other bytes than the CPU backend", i, what);
}

void fz_op_pool(fz_reader *rd, attnmeta_context *ctx) {
  static const char *const names[NOUT] = {"kv_indices", "kv_indptr_out", "page_table",
                                          "error_word"};
  pool_case c;
  inputs in;
  fz_buf o[NOUT], e[NOUT];
  int32_t *ref[NOUT], flags = 0;
  amr_pool_input ri;
  int i;
  int64_t j;

  decode(rd, &c);
  inputs_alloc(&in, &c);
  outputs_alloc(o, &c);
  run(ctx, &c, &in, o, &c.cfg[0]);
  inputs_check(&in, &c);

  /* the reference, into poisoned copies of the outputs */
  for (i = 0; i < NOUT; ++i) {
    const int64_t n = out_elems(&c, i);
    ref[i] = xcalloc(n, sizeof(int32_t));
    for (j = 0; j < n; ++j) ref[i][j] = FZ_POISON32;
  }
  memset(&ri, 0, sizeof ri);
  ri.req_to_token = c.pool;
  ri.pool_stride = c.stride;
  ri.pool_rows = c.P;
  ri.pool_cols = c.cols;
  ri.req_pool_indices = c.rows;
  ri.lengths = c.lengths;
  ri.kv_start_idx = c.use_start ? c.starts : NULL;
  ri.num_reqs = c.B;
  ri.page_size = c.ps;
  ri.kv_indptr = c.use_indptr ? c.indptr : NULL;
  ri.capacity = c.want_indices ? c.capacity : 0;
  ri.page_width = c.width;
  ri.page_stride = c.page_stride;
  amr_pool(&ri, c.want_indices ? ref[O_INDICES] : NULL, c.want_indptr_out ? ref[O_INDPTR] : NULL,
           c.want_pages ? ref[O_PAGES] : NULL, &flags);
  ref[O_ERR][0] = c.want_err ? c.err_init | flags : c.err_init;

  for (i = 0; i < NOUT; ++i) {
    const int32_t *got = o[i].data;
    PCHECK(&c, fz_buf_guards_intact(&o[i]), "pool: a guard of %s written", names[i]);
    for (j = 0; j < out_elems(&c, i); ++j)
      PCHECK(&c, got[j] == ref[i][j], "pool: %s[%lld] = %d, reference %d%s", names[i],
             (long long)j, got[j], ref[i][j], i == O_ERR ? " (flags)" : "");
  }

  outputs_alloc(e, &c);
  run(ctx, &c, &in, e, &c.cfg[1]);
  check_same(&c, o, e, "the second launch configuration");
  outputs_free(e);

  outputs_alloc(e, &c);
  emulate(&c, &in, e);
  inputs_check(&in, &c);
  check_same(&c, o, e, "the emulated GPU launch");
  outputs_free(e);

  if (fz_hip_cpu_context()) {
    const attnmeta_launch_config planned = attnmeta_launch_config_default();
    outputs_alloc(e, &c);
    run(fz_hip_cpu_context(), &c, &in, e, &planned);
    check_same(&c, o, e, "the HIP backend on HIP-CPU");
    outputs_free(e);
  }

  for (i = 0; i < NOUT; ++i) free(ref[i]);
  outputs_free(o);
  inputs_free(&in);
  case_free(&c);
}
