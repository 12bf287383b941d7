// SPDX-License-Identifier: Apache-2.0
/* Shared plumbing of the fuzz harnesses. See fuzz_util.h. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, mincore */
#include "fuzz_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- byte reader ---- */

FZ_WRAPS static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

FZ_WRAPS void fz_reader_init(fz_reader *r, const uint8_t *data, size_t size) {
  uint64_t h = 0xCBF29CE484222325ull; /* FNV-1a of the whole input */
  size_t i;
  for (i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001B3ull;
  r->data = data;
  r->size = size;
  r->pos = 0;
  r->rng = h;
}

uint8_t fz_u8(fz_reader *r) {
  if (r->pos < r->size) return r->data[r->pos++];
  return 0; /* past the end: the smallest choice, so short inputs stay cheap */
}

uint64_t fz_rand(fz_reader *r) { return splitmix64(&r->rng); }

FZ_WRAPS int64_t fz_rand_range(fz_reader *r, int64_t lo, int64_t hi) {
  const uint64_t span = (uint64_t)hi - (uint64_t)lo;
  uint64_t v = splitmix64(&r->rng);
  if (span != UINT64_MAX) v %= span + 1;
  return (int64_t)((uint64_t)lo + v);
}

uint32_t fz_u32(fz_reader *r) {
  uint32_t v = 0;
  int i;
  for (i = 0; i < 4; ++i) v = (v << 8) | fz_u8(r);
  return v;
}

uint64_t fz_u64(fz_reader *r) {
  const uint64_t hi = fz_u32(r);
  return (hi << 32) | fz_u32(r);
}

FZ_WRAPS int64_t fz_range(fz_reader *r, int64_t lo, int64_t hi) {
  const uint64_t span = (uint64_t)hi - (uint64_t)lo;
  uint64_t v;
  if (span == 0) return lo;
  if (span < 0xFF) {
    v = fz_u8(r);
  } else if (span < 0xFFFF) {
    v = ((uint64_t)fz_u8(r) << 8) | fz_u8(r);
  } else if (span < 0xFFFFFFFFull) {
    v = fz_u32(r);
  } else {
    v = fz_u64(r);
  }
  if (span != UINT64_MAX) v %= span + 1;
  return (int64_t)((uint64_t)lo + v);
}

int fz_chance(fz_reader *r, unsigned num, unsigned den) {
  return fz_u8(r) % den >= den - num; /* never once the input has run out */
}

int32_t fz_edge32(fz_reader *r) {
  static const int32_t edges[] = {0,         1,          -1,        2,         -2,
                                  3,         4,          7,         8,         15,
                                  16,        17,         63,        64,        255,
                                  256,       4095,       4096,      65535,     65536,
                                  INT32_MAX, INT32_MAX - 1, INT32_MIN, INT32_MIN + 1,
                                  INT32_MAX / 2, INT32_MAX / 4 + 1, -4096,   1 << 30};
  const uint8_t pick = fz_u8(r);
  if (pick < 160) return edges[pick % (sizeof edges / sizeof edges[0])];
  if (pick < 224) return (int32_t)fz_range(r, -300, 3000);
  return (int32_t)fz_u32(r);
}

int64_t fz_edge64(fz_reader *r) {
  static const int64_t edges[] = {INT64_MAX,     INT64_MIN,         INT64_MAX - 1,
                                  INT64_MIN + 1, INT64_MAX / 2,     INT64_MAX / 4,
                                  INT64_MAX / 4 + 1, INT64_MAX / 8, INT64_MAX / 8 + 1,
                                  INT32_MAX,     (int64_t)INT32_MAX + 1, INT32_MIN,
                                  (int64_t)INT32_MIN - 1, (int64_t)1 << 32, (int64_t)1 << 40,
                                  (int64_t)1 << 61, (int64_t)1 << 62, -((int64_t)1 << 62)};
  const uint8_t pick = fz_u8(r);
  if (pick < 96) return edges[pick % (sizeof edges / sizeof edges[0])];
  if (pick < 192) return fz_edge32(r);
  return (int64_t)fz_u64(r);
}

/* ---- failures ---- */

void fz_fail(const char *fmt, ...) {
  va_list args;
  fprintf(stderr, "\nattnmeta fuzz check failed: ");
  va_start(args, fmt);
  vfprintf(stderr, fmt, args);
  va_end(args);
  fprintf(stderr, "\n");
  fflush(stderr);
  abort();
}

/* ---- guarded buffers ---- */

void fz_buf_alloc(fz_buf *b, size_t elem, int64_t n, size_t shift) {
  void *p = NULL;
  b->bytes = (size_t)(n > 0 ? n : 0) * elem;
  b->offset = FZ_GUARD_BYTES + shift;
  b->total = b->offset + b->bytes + FZ_GUARD_BYTES;
  if (posix_memalign(&p, 16, b->total) != 0 || !p) fz_fail("out of memory (%zu bytes)", b->total);
  b->base = (unsigned char *)p;
  memset(b->base, FZ_POISON_BYTE, b->total);
  b->data = b->base + b->offset;
}

void fz_buf_alloc_exact(fz_buf *b, size_t elem, int64_t n, size_t shift) {
  void *p = NULL;
  b->bytes = (size_t)(n > 0 ? n : 0) * elem;
  b->offset = shift;
  b->total = b->offset + b->bytes;
  if (posix_memalign(&p, 16, b->total ? b->total : 1) != 0 || !p)
    fz_fail("out of memory (%zu bytes)", b->total);
  b->base = (unsigned char *)p;
  memset(b->base, FZ_POISON_BYTE, b->total);
  b->data = b->base + b->offset;
}

void fz_buf_free(fz_buf *b) {
  free(b->base);
  b->base = NULL;
  b->data = NULL;
}

static int all_poison(const unsigned char *p, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (p[i] != FZ_POISON_BYTE) return 0;
  return 1;
}

int fz_buf_guards_intact(const fz_buf *b) {
  return all_poison(b->base, b->offset) &&
         all_poison(b->base + b->offset + b->bytes, b->total - b->offset - b->bytes);
}

int fz_buf_untouched(const fz_buf *b) { return all_poison(b->base, b->total); }

void fz_in_alloc(fz_in *in, const int32_t *src, int64_t n, int shift_elems) {
  const size_t bytes = (size_t)(n > 0 ? n : 0) * sizeof(int32_t);
  const size_t shift = (size_t)shift_elems * sizeof(int32_t);
  void *p = NULL;
  if (posix_memalign(&p, 16, shift + bytes + (shift + bytes == 0)) != 0 || !p)
    fz_fail("out of memory (%zu bytes)", bytes);
  in->base = p;
  in->data = (int32_t *)(void *)((unsigned char *)p + shift);
  if (bytes) memcpy(in->data, src, bytes);
}

void fz_in_free(fz_in *in) {
  free(in->base);
  in->base = NULL;
  in->data = NULL;
}

/* ---- sparse buffers ---- */

static size_t page_bytes(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* Raw system calls: AddressSanitizer's mmap/munmap interceptors touch the
 * shadow of the whole range, which for a terabyte of reserve takes seconds. */
static void *raw_mmap(size_t bytes) {
  const long r = syscall(SYS_mmap, NULL, bytes, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return r < 0 && r > -4096 ? MAP_FAILED : (void *)r;
}

static void raw_munmap(void *at, size_t bytes) { syscall(SYS_munmap, at, bytes); }

int fz_sparse_alloc(fz_sparse *s, size_t bytes) {
  const size_t page = page_bytes();
  const size_t body = (bytes + page - 1) / page * page;
  void *map;
  memset(s, 0, sizeof *s);
  if (body > ((size_t)1 << 46)) return 0;
  map = raw_mmap(body + 2 * page);
  if (map == MAP_FAILED) return 0;
  s->map = (unsigned char *)map;
  s->map_bytes = body + 2 * page;
  /* pages of the base size only: a transparent huge page would commit (and
   * show as touched) 2 MiB around every write */
  if (body && (madvise(s->map, s->map_bytes, MADV_NOHUGEPAGE) != 0 ||
               mprotect(s->map + page, body, PROT_READ | PROT_WRITE) != 0)) {
    fz_sparse_free(s);
    return 0;
  }
  s->bytes = bytes;
  s->data = s->map + page + body - bytes;
  return 1;
}

void fz_sparse_free(fz_sparse *s) {
  if (s->map) raw_munmap(s->map, s->map_bytes);
  free(s->pages);
  memset(s, 0, sizeof *s);
}

void fz_sparse_freeze(fz_sparse *s) {
  const size_t page = page_bytes();
  if (s->map && s->map_bytes > 2 * page)
    if (mprotect(s->map + page, s->map_bytes - 2 * page, PROT_READ) != 0)
      fz_fail("mprotect of a sparse input failed");
}

void fz_sparse_touched(const fz_sparse *s, void (*visit)(void *arg, size_t begin, size_t end),
                       void *arg) {
  enum { CHUNK = 1 << 16 }; /* pages per mincore call */
  const size_t page = page_bytes();
  unsigned char vec[CHUNK];
  unsigned char *first, *stop;
  if (!s->bytes) return;
  if (s->tracked) { /* the pages the tracker saw touched: no scan */
    size_t i;
    stop = s->data + s->bytes;
    for (i = 0; i < s->npages; ++i) {
      unsigned char *lo = (unsigned char *)s->pages[i], *hi = lo + page;
      if (lo < s->data) lo = s->data;
      if (hi > stop) hi = stop;
      if (lo < hi) visit(arg, (size_t)(lo - s->data), (size_t)(hi - s->data));
    }
    return;
  }
  first = s->map + page; /* page-aligned start of the data's pages */
  stop = s->data + s->bytes;
  while (first < stop) {
    const size_t pages = ((size_t)(stop - first) + page - 1) / page;
    const size_t n = pages < CHUNK ? pages : CHUNK;
    size_t i;
    if (mincore(first, n * page, vec) != 0) fz_fail("mincore failed");
    for (i = 0; i < n; ++i) {
      unsigned char *lo, *hi;
      uint64_t word;
      if (i % 8 == 0 && i + 8 <= n) { /* mostly untouched: skip 8 pages at a time */
        memcpy(&word, vec + i, sizeof word);
        if (!word) {
          i += 7;
          continue;
        }
      }
      if (!(vec[i] & 1)) continue;
      lo = first + i * page;
      hi = lo + page;
      if (lo < s->data) lo = s->data;
      if (hi > stop) hi = stop;
      if (lo < hi) visit(arg, (size_t)(lo - s->data), (size_t)(hi - s->data));
    }
    first += n * page;
  }
}

/* ---- host-argument rules ---- */

#define FZ_BIT(status) (1u << (unsigned)(status))

static int misaligned(const void *p, uintptr_t align) { return p && ((uintptr_t)p % align) != 0; }

/* rows x stride int32 rows of which `cols` are used: does the byte offset
 * one past the last element used overflow int64? (Rows >= 1.) */
static int truly_overflows(int64_t rows, int64_t stride, int64_t cols) {
  const __int128 last = (__int128)(rows - 1) * stride + cols;
  return last * 4 > (__int128)INT64_MAX;
}

/* The library may refuse earlier, with a margin (rows * stride * 8 bytes). */
static int may_overflow(int64_t rows, int64_t stride) {
  return (__int128)rows * stride * 8 > (__int128)INT64_MAX;
}

/* A strided buffer of `rows` rows: overflow rules (none while stride < cols). */
static void rows_rules(int64_t rows, int64_t stride, int64_t cols, uint32_t *req, uint32_t *opt) {
  if (rows <= 0 || cols < 0 || stride < cols) return;
  if (truly_overflows(rows, stride, cols)) *req |= FZ_BIT(ATTNMETA_ERR_OVERFLOW);
  else if (may_overflow(rows, stride)) *opt |= FZ_BIT(ATTNMETA_ERR_OVERFLOW);
}

/* A buffer as the contract sees it: `rows` runs of `width` bytes, `pitch`
 * bytes apart. */
typedef struct fz_span {
  __int128 base, rows, width, pitch;
  int output;
} fz_span;

/* The rows i of b with [b.base + i * pitch, + width) meeting [lo, hi):
 * from ceil((lo - base - width + 1) / pitch) to floor((hi - 1 - base) /
 * pitch), within [0, rows). */
static int fz_run_meets(__int128 lo, __int128 hi, const fz_span *b) {
  __int128 first, last;
  if (hi <= lo) return 0;
  first = lo - b->base - b->width + 1;
  first = first <= 0 ? 0 : (first + b->pitch - 1) / b->pitch;
  last = hi - 1 - b->base;
  if (last < 0) return 0;
  last = last / b->pitch;
  if (last > b->rows - 1) last = b->rows - 1;
  return first <= last;
}

/* 0: no overlap; 2: an overlap; 1: two strided tables interleaved past
 * 2^16 rows (the library may refuse them without looking row by row). */
static int fz_spans_meet(const fz_span *a, const fz_span *b) {
  const fz_span *few = a->rows <= b->rows ? a : b, *many = few == a ? b : a;
  __int128 i;
  if (a->rows == 1 || a->pitch == a->width)
    return fz_run_meets(a->base, a->base + (a->rows - 1) * a->pitch + a->width, b) ? 2 : 0;
  if (b->rows == 1 || b->pitch == b->width)
    return fz_run_meets(b->base, b->base + (b->rows - 1) * b->pitch + b->width, a) ? 2 : 0;
  if (a->base + (a->rows - 1) * a->pitch + a->width <= b->base ||
      b->base + (b->rows - 1) * b->pitch + b->width <= a->base)
    return 0;
  if (few->rows > (1 << 16)) return 1;
  for (i = 0; i < few->rows; ++i)
    if (fz_run_meets(few->base + i * few->pitch, few->base + i * few->pitch + few->width, many))
      return 2;
  return 0;
}

/* A buffer of an operation as the overlap rule sees it: `rows` runs of
 * `width` bytes, `pitch` apart. */
typedef struct fz_buffer {
  const void *ptr;
  __int128 rows, width, pitch;
  int output;
} fz_buffer;

/* The worst fz_spans_meet over every pair of the present buffers of which
 * at least one is an output. */
#define FZ_MAX_BUFFERS 48
static int fz_buffers_meet(const fz_buffer *b, int count) {
  fz_span sp[FZ_MAX_BUFFERS];
  int n = 0, i, j, worst = 0;
  for (i = 0; i < count && n < FZ_MAX_BUFFERS; ++i) {
    if (!b[i].ptr || b[i].rows <= 0 || b[i].width <= 0) continue;
    sp[n].base = (__int128)(uintptr_t)b[i].ptr;
    sp[n].rows = b[i].rows;
    sp[n].width = b[i].width;
    sp[n].pitch = b[i].pitch;
    sp[n].output = b[i].output;
    ++n;
  }
  for (i = 0; i < n; ++i)
    for (j = i + 1; j < n; ++j)
      if (sp[i].output || sp[j].output) {
        const int m = fz_spans_meet(&sp[i], &sp[j]);
        if (m > worst) worst = m;
      }
  return worst;
}

/* Whether the step wants a DeepSeek-V3.2/V4 product (contract sections 5,
 * 5a, 7, 8): a group with an output, SWA's, C128A's (mixed mode's prefill
 * rows included) or the indexer's outputs. Each reads seq_lens. */
int fz_wants_dsv4(const attnmeta_step *s) {
  int g;
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g)
    if (s->compressed_groups[g].slot_mapping || s->compressed_groups[g].seq_lens_out) return 1;
  return s->swa_indices || s->swa_lens || s->c128a_rows || s->c128a_lens ||
         s->c128a_prefill_rows || s->indexer_lens_out;
}

/* Whether some compressed group's slot_mapping is wanted. */
static int fz_wants_group_slots(const attnmeta_step *s) {
  int g;
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g)
    if (s->compressed_groups[g].slot_mapping) return 1;
  return 0;
}

uint32_t fz_overlap_rule(const attnmeta_step *s) {
  const int wants_seq = s->seq_lens_out || s->global_seq_lens_out || s->positions ||
                        s->slot_mapping || fz_wants_dsv4(s);
  const int wants_table = s->block_table_out || s->slot_mapping;
  const __int128 R = s->num_reqs, T = s->num_tokens, C = s->capacity;
  const __int128 cols = wants_table ? s->block_table_cols : 0;
  fz_buffer b[FZ_MAX_BUFFERS] = {
      {s->query_start_loc, 1, (R + 1) * 4, (R + 1) * 4, 0},
      {wants_seq ? s->seq_lens : NULL, 1, R * 4, R * 4, 0},
      {wants_table ? s->block_table : NULL, R, cols * 4, (__int128)s->block_table_stride * 4, 0},
      {s->token_to_req, 1, T * 4, T * 4, 1},
      {s->seq_lens_out, 1, C * 4, C * 4, 1},
      {s->global_seq_lens_out, 1, T * 4, T * 4, 1},
      {s->block_table_out, T, cols * 4, (__int128)s->block_table_out_stride * 4, 1},
      {s->decode_lens_out, 1, T * 4, T * 4, 1},
      {s->req_indices_out, 1, T * 4, T * 4, 1},
      {s->per_req_lens_out, 1, R * 4, R * 4, 1},
      {s->positions, 1, T * 8, T * 8, 1},
      {s->slot_mapping, 1, C * 8, C * 8, 1},
      {s->error_word, 1, 4, 4, 1}};
  int n = 13, g, strict, loose;
  const int pcp = s->pcp_logical_slots && fz_wants_group_slots(s);
  /* the DSV4 products; a table counts only where its rows are read (not
   * with PCP's logical slots: those buffers are added to the loose set) */
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g) {
    const attnmeta_compressed_group *grp = &s->compressed_groups[g];
    const fz_buffer table = {grp->slot_mapping && !pcp ? grp->block_table : NULL, R,
                             (__int128)grp->block_table_cols * 4,
                             (__int128)grp->block_table_stride * 4, 0};
    const fz_buffer slots = {grp->slot_mapping, 1, C * 8, C * 8, 1};
    const fz_buffer lens = {grp->seq_lens_out, 1, R * 4, R * 4, 1};
    b[n++] = table;
    b[n++] = slots;
    b[n++] = lens;
  }
  {
    const fz_buffer swa_table = {s->swa_indices ? s->swa_block_table : NULL, R,
                                 (__int128)s->swa_block_table_cols * 4,
                                 (__int128)s->swa_block_table_stride * 4, 0};
    const fz_buffer swa_rows = {s->swa_indices, T, (__int128)s->swa_width * 4,
                                (__int128)s->swa_indices_stride * 4, 1};
    const fz_buffer swa_lens = {s->swa_lens, 1, C * 4, C * 4, 1};
    const fz_buffer c_table = {s->c128a_rows && s->c128a_mode != ATTNMETA_C128A_LOCAL
                                   ? s->c128a_block_table
                                   : NULL,
                               R, (__int128)s->c128a_block_table_cols * 4,
                               (__int128)s->c128a_block_table_stride * 4, 0};
    const fz_buffer c_rows = {s->c128a_rows, T, (__int128)s->c128a_width * 4,
                              (__int128)s->c128a_rows_stride * 4, 1};
    const fz_buffer c_lens = {s->c128a_lens, 1, C * 4, C * 4, 1};
    /* 0.3.0's: the SWA rows' token slots (read by either SWA output), mixed
     * mode's prefill rows, the indexer's lengths */
    const fz_buffer swa_slots = {s->swa_indices || s->swa_lens ? s->swa_token_slots : NULL, 1,
                                 T * 8, T * 8, 0};
    const fz_buffer c_prefill = {s->c128a_prefill_rows, T, (__int128)s->c128a_width * 4,
                                 (__int128)s->c128a_prefill_rows_stride * 4, 1};
    const fz_buffer indexer = {s->indexer_lens_out, 1, C * 4, C * 4, 1};
    b[n++] = swa_table;
    b[n++] = swa_rows;
    b[n++] = swa_lens;
    b[n++] = c_table;
    b[n++] = c_rows;
    b[n++] = c_lens;
    b[n++] = swa_slots;
    b[n++] = c_prefill;
    b[n++] = indexer;
  }
  {
    /* section 5b: the logical slots and positions, read with a group's
     * slots */
    const fz_buffer logical = {fz_wants_group_slots(s) ? s->pcp_logical_slots : NULL, 1, T * 8,
                               T * 8, 0};
    const fz_buffer positions = {pcp ? s->pcp_positions : NULL, 1, T * 8, T * 8, 0};
    b[n++] = logical;
    b[n++] = positions;
  }
  strict = fz_buffers_meet(b, n);
  if (strict == 2) return 2;
  /* buffers given but not read (PCP's unread group tables, positions with
   * no logical slots): the library may count them */
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g) {
    const attnmeta_compressed_group *grp = &s->compressed_groups[g];
    const fz_buffer table = {grp->slot_mapping && pcp ? grp->block_table : NULL, R,
                             (__int128)grp->block_table_cols * 4,
                             (__int128)grp->block_table_stride * 4, 0};
    b[n++] = table;
  }
  {
    const fz_buffer positions = {!pcp && fz_wants_group_slots(s) ? s->pcp_positions : NULL, 1,
                                 T * 8, T * 8, 0};
    b[n++] = positions;
  }
  loose = fz_buffers_meet(b, n);
  return (uint32_t)(loose > strict ? 1 : strict);
}

static void fz_step_rules_of(const attnmeta_step *s, uint32_t *required, uint32_t *optional);

/* A block table some DSV4 product reads (contract: the same rules as the
 * part-1 table): into *req the statuses it must get, *opt those it may. */
static void fz_table_rules(const int32_t *table, int32_t cols, int64_t stride, int32_t rows,
                           uint32_t *req, uint32_t *opt) {
  if (cols < 0) *req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (stride < cols) *req |= FZ_BIT(ATTNMETA_ERR_STRIDE);
  if (!table && cols > 0) *req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
  rows_rules(rows, stride, cols, req, opt);
  if (misaligned(table, 4)) *req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
}

/* T rows of `width` entries `stride` apart, written by a DSV4 product. */
static void fz_rows_rules(int64_t stride, int32_t width, int32_t rows, uint32_t *req,
                          uint32_t *opt) {
  if (stride < width) {
    *req |= FZ_BIT(ATTNMETA_ERR_STRIDE);
    return;
  }
  rows_rules(rows, stride, width, req, opt);
}

/* A block size of a DCP-placed product: >= 1, a multiple of the interleave
 * when the world has several ranks (contract section 5). */
static int fz_bad_dcp_block(const attnmeta_step *s, int32_t block_size) {
  return block_size < 1 ||
         (s->dcp_world_size > 1 && s->dcp_interleave >= 1 && block_size % s->dcp_interleave != 0);
}

/* Section 5b's rules (PCP's logical slots), which count only while a
 * group's slot_mapping is wanted; the per-group block-size rule is with the
 * groups'. */
static void fz_pcp_rules(const attnmeta_step *s, uint32_t *req, uint32_t *opt) {
  const int used = fz_wants_group_slots(s);
  const uint32_t bad = FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (misaligned(s->pcp_logical_slots, 8)) *(used ? req : opt) |= bad;
  if (misaligned(s->pcp_positions, 8)) *(used && s->pcp_logical_slots ? req : opt) |= bad;
  if (!used || !s->pcp_logical_slots) return;
  if (!s->pcp_positions) *req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
  if (s->pcp_logical_block_size < 1 || s->dcp_world_size != 1) *req |= bad;
}

/* The DeepSeek-V3.2/V4 products' host rules (header and contract sections
 * 5, 5b, 7, 8); only the products wanted count. */
static void fz_dsv4_rules(const attnmeta_step *s, uint32_t *required, uint32_t *optional) {
  uint32_t req = 0, opt = 0;
  int g;
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g) {
    const attnmeta_compressed_group *grp = &s->compressed_groups[g];
    if (!grp->slot_mapping && !grp->seq_lens_out) continue;
    if (grp->ratio < 1) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (misaligned(grp->slot_mapping, 8) || misaligned(grp->seq_lens_out, 4))
      req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (!grp->slot_mapping) continue;
    if (fz_bad_dcp_block(s, grp->block_size)) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (s->pcp_logical_slots) { /* section 5b: the table is not read, the block size fixed */
      uint32_t unread = 0;
      fz_table_rules(grp->block_table, grp->block_table_cols, grp->block_table_stride,
                     s->num_reqs, &unread, &unread);
      opt |= unread;
      if (s->pcp_logical_block_size >= 1 && grp->ratio >= 1 &&
          (s->pcp_logical_block_size % grp->ratio != 0 ||
           grp->block_size != s->pcp_logical_block_size / grp->ratio))
        req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    } else {
      fz_table_rules(grp->block_table, grp->block_table_cols, grp->block_table_stride,
                     s->num_reqs, &req, &opt);
    }
  }
  fz_pcp_rules(s, &req, &opt);
  if (s->swa_indices || s->swa_lens) {
    if (s->swa_mode != ATTNMETA_SWA_CAUSAL && s->swa_mode != ATTNMETA_SWA_NON_CAUSAL)
      req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (s->swa_window < 1 || s->swa_width < s->swa_window)
      req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (misaligned(s->swa_indices, 4) || misaligned(s->swa_lens, 4) ||
        misaligned(s->swa_token_slots, 8))
      req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (s->swa_indices) {
      fz_rows_rules(s->swa_indices_stride, s->swa_width, s->num_tokens, &req, &opt);
      if (s->swa_block_size < 1) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
      fz_table_rules(s->swa_block_table, s->swa_block_table_cols, s->swa_block_table_stride,
                     s->num_reqs, &req, &opt);
    }
  }
  /* mixed mode's second table is written in that mode only */
  if (s->c128a_prefill_rows && s->c128a_mode != ATTNMETA_C128A_MIXED)
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (s->c128a_rows || s->c128a_lens || s->c128a_prefill_rows) {
    const int global = s->c128a_mode == ATTNMETA_C128A_GLOBAL ||
                       s->c128a_mode == ATTNMETA_C128A_MIXED;
    if (!global && s->c128a_mode != ATTNMETA_C128A_LOCAL)
      req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (s->c128a_mode == ATTNMETA_C128A_MIXED &&
        (s->c128a_num_decode_tokens < 0 || s->c128a_num_decode_tokens > s->num_tokens))
      req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (s->c128a_ratio < 1 || s->c128a_width < 0) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (misaligned(s->c128a_rows, 4) || misaligned(s->c128a_lens, 4) ||
        misaligned(s->c128a_prefill_rows, 4))
      req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (s->c128a_rows && s->c128a_width >= 0)
      fz_rows_rules(s->c128a_rows_stride, s->c128a_width, s->num_tokens, &req, &opt);
    if (s->c128a_prefill_rows && s->c128a_width >= 0)
      fz_rows_rules(s->c128a_prefill_rows_stride, s->c128a_width, s->num_tokens, &req, &opt);
    if (global) {
      if (fz_bad_dcp_block(s, s->c128a_block_size)) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
      if (s->c128a_rows)
        fz_table_rules(s->c128a_block_table, s->c128a_block_table_cols,
                       s->c128a_block_table_stride, s->num_reqs, &req, &opt);
    }
  }
  if (s->indexer_lens_out) { /* section 5a */
    if (s->indexer_mode != ATTNMETA_INDEXER_DECODE && s->indexer_mode != ATTNMETA_INDEXER_PREFILL)
      req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (s->indexer_ratio < 1 || misaligned(s->indexer_lens_out, 4))
      req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  }
  *required |= req;
  *optional |= opt;
}

void fz_step_rules(const attnmeta_step *caller, uint32_t *required, uint32_t *optional) {
  attnmeta_step effective; /* what the library reads: defaults past struct_size */
  const attnmeta_step *s = caller;
  if (caller->struct_size >= sizeof(size_t) && caller->struct_size < sizeof *caller) {
    attnmeta_step_init(&effective);
    memcpy(&effective, caller, caller->struct_size);
    s = &effective;
  }
  fz_step_rules_of(s, required, optional);
}

static void fz_step_rules_of(const attnmeta_step *s, uint32_t *required, uint32_t *optional) {
  const int wants_seq = s->seq_lens_out || s->global_seq_lens_out || s->positions ||
                        s->slot_mapping || fz_wants_dsv4(s);
  const int wants_table = s->block_table_out || s->slot_mapping;
  uint32_t req = 0, opt = 0;

  /* the sizes of the releases only: 0.1 (ending at error_word), 0.2 (ending
   * at launch_flags, padded to the struct's alignment), 0.3 (ending at
   * c128a_num_decode_tokens, padded) and this header's */
  if (s->struct_size > sizeof *s)
    req |= FZ_BIT(ATTNMETA_ERR_NOT_SUPPORTED);
  else if (s->struct_size != FZ_STEP_SIZE_0_1 && s->struct_size != FZ_STEP_SIZE_0_2 &&
           s->struct_size != FZ_STEP_SIZE_0_3 && s->struct_size != sizeof *s)
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (!s->query_start_loc) req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
  if (s->num_reqs < 0 || s->num_tokens < 0 || s->capacity < 0)
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (s->capacity < s->num_tokens) req |= FZ_BIT(ATTNMETA_ERR_CAPACITY);
  /* padding ids R + (t - actual) must fit int32 */
  if ((int64_t)s->num_reqs + s->num_tokens > INT32_MAX) req |= FZ_BIT(ATTNMETA_ERR_OVERFLOW);
  if (wants_seq && !s->seq_lens) req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
  if (s->dcp_world_size < 1 || s->dcp_interleave < 1) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (s->dcp_rank < 0 || s->dcp_rank >= s->dcp_world_size)
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);

  {
    uint32_t table = 0, table_opt = 0;
    if (s->block_table_cols < 0) table |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (s->block_table_stride < s->block_table_cols) table |= FZ_BIT(ATTNMETA_ERR_STRIDE);
    if (!s->block_table && s->block_table_cols > 0) table |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
    rows_rules(s->num_reqs, s->block_table_stride, s->block_table_cols, &table, &table_opt);
    if (wants_table) { /* a table no product reads is not checked */
      req |= table;
      opt |= table_opt;
    }
  }
  if (s->block_table_out) {
    if (s->block_table_out_stride < s->block_table_cols) req |= FZ_BIT(ATTNMETA_ERR_STRIDE);
    rows_rules(s->num_tokens, s->block_table_out_stride, s->block_table_cols, &req, &opt);
  }
  if (s->block_size < 1 && s->slot_mapping) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);

  /* alignment: outputs and qsl always used; seq_lens and the table when needed */
  if (misaligned(s->query_start_loc, 4) || misaligned(s->token_to_req, 4) ||
      misaligned(s->seq_lens_out, 4) || misaligned(s->global_seq_lens_out, 4) ||
      misaligned(s->block_table_out, 4) || misaligned(s->decode_lens_out, 4) ||
      misaligned(s->req_indices_out, 4) || misaligned(s->per_req_lens_out, 4) ||
      misaligned(s->error_word, 4) || misaligned(s->positions, 8) ||
      misaligned(s->slot_mapping, 8))
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  /* unused inputs are not checked at all */
  if (wants_seq && misaligned(s->seq_lens, 4)) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (wants_table && misaligned(s->block_table, 4)) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);

  if (s->launch_flags & ~(uint32_t)ATTNMETA_LAUNCH_EARLY_START)
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  fz_dsv4_rules(s, &req, &opt);

  /* overlaps, once the sizes themselves are sound */
  if (!req) {
    uint32_t overlap = fz_overlap_rule(s);
    if (overlap == 2) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (overlap == 1) opt |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  }

  *required = req;
  *optional = opt;
}

/* Whether the rotated peer table (contract 6d) reads its gathered tables:
 * rows to build (R >= 1, w >= 1) and pages in them (M >= 1). */
static int topk_reads_peer_tables(const attnmeta_topk *op) {
  return op->peer_table_out && op->num_reqs > 0 && op->peer_table_width > 0 &&
         op->peer_tables_cols > 0;
}

/* The overlap part of fz_topk_rules: 0 none, 2 an overlap, 1 cannot say. */
static int topk_overlap(const attnmeta_topk *op) {
  const __int128 T = op->num_tokens, R = op->num_reqs, K = op->topk_count;
  const __int128 W = op->dcp_world_size, M = op->peer_tables_cols, w = op->peer_table_width;
  const __int128 os = op->peer_tables_owner_stride, ps = op->peer_tables_stride;
  const __int128 span = R > 0 && M > 0 ? (R - 1) * ps + M : 0;
  /* rank 0's table is read from its first page on (page 0 is rank 0's);
   * the other ranks' as a whole may be counted */
  const __int128 rank0_cols = M < (w + W - 1) / W ? M : (w + W - 1) / W;
  const int reads = topk_reads_peer_tables(op);
  int strict, loose;
  fz_buffer b[13] = {
      {op->topk, T, K * 4, (__int128)op->topk_stride * 4, 0},
      {op->query_start_loc, 1, (R + 1) * 4, (R + 1) * 4, 0},
      {op->req_id, 1, T * 4, T * 4, 0},
      {op->block_table, R, (__int128)op->block_table_cols * 4, (__int128)op->block_table_stride * 4, 0},
      {op->prefill_req, 1, T * 4, T * 4, 0},
      {op->prefill_req ? op->workspace_starts : NULL, 1, (__int128)op->num_prefill * 4,
       (__int128)op->num_prefill * 4, 0},
      {op->token_slot, 1, T * 8, T * 8, 0},
      {op->out, T, K * 4, (__int128)op->out_stride * 4, 1},
      {op->valid_count, 1, T * 4, T * 4, 1},
      {op->error_word, 1, 4, 4, 1},
      {op->peer_table_out, R, w * 4, (__int128)op->peer_table_out_stride * 4, 1},
      {reads ? op->peer_tables : NULL, R, rank0_cols * 4, ps * 4, 0},
      {NULL, 0, 0, 0, 0}};
  strict = fz_buffers_meet(b, 12);
  if (strict == 2 || !op->peer_table_out || !op->peer_tables || span == 0) return strict;
  /* every rank's whole table, rank o at o * owner_stride */
  b[11].rows = R;
  b[11].width = M * 4;
  b[12].ptr = W > 1 ? (const char *)op->peer_tables + os * 4 : NULL;
  if (os >= span) {
    b[12].rows = W - 1;
    b[12].width = span * 4;
    b[12].pitch = os * 4;
  } else {
    b[12].rows = 1;
    b[12].width = b[12].pitch = ((W - 2) * os + span) * 4;
  }
  loose = fz_buffers_meet(b, 13);
  return loose > strict ? 1 : strict;
}

/* The DCP peer views' rules (contract 6c, 6d; the header's members). */
static void topk_peer_rules(const attnmeta_topk *op, uint32_t *required, uint32_t *optional) {
  uint32_t req = 0, opt = 0;
  const __int128 W = op->dcp_world_size, S = op->peer_blocks;
  const __int128 sr = op->stride_rows > 0 ? op->stride_rows : op->block_size;
  const int reads = topk_reads_peer_tables(op);
  if (op->peer_blocks < 0 || op->peer_tables_owner_stride < 0 || op->peer_tables_cols < 0 ||
      op->peer_table_width < 0)
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  /* peer slots are int32 when rows are converted (W and sr sound: else
   * another rule fails already) */
  if (S >= 1 && op->num_tokens > 0 && W >= 1 && sr >= 1 && W * S * sr > INT32_MAX)
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (misaligned(op->peer_table_out, 4)) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (misaligned(op->peer_tables, 4))
    *(reads ? &req : &opt) |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (op->peer_table_out) {
    if (S < 1) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    if (W >= 1 && W * S > INT64_MAX) {
      req |= FZ_BIT(ATTNMETA_ERR_OVERFLOW);
      opt |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    }
    if (op->peer_table_out_stride < op->peer_table_width) req |= FZ_BIT(ATTNMETA_ERR_STRIDE);
    rows_rules(op->num_reqs, op->peer_table_out_stride, op->peer_table_width, &req, &opt);
    /* the gathered tables: their own rules; NULL only when nothing is read */
    if (op->peer_tables_stride < op->peer_tables_cols)
      *(op->peer_table_width > 0 ? &req : &opt) |= FZ_BIT(ATTNMETA_ERR_STRIDE);
    if (!op->peer_tables && reads) req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
    if (op->peer_tables_stride >= op->peer_tables_cols && op->peer_tables_cols >= 0 &&
        op->peer_tables_owner_stride >= 0 && W >= 1) {
      /* the last byte of the last rank's table, and the library's margin */
      const __int128 R = op->num_reqs, ps = op->peer_tables_stride;
      const __int128 last = (W - 1) * op->peer_tables_owner_stride +
                            (R > 0 ? (R - 1) * ps + op->peer_tables_cols : 0);
      const __int128 margin = (W - 1) * op->peer_tables_owner_stride + R * ps;
      if (reads && last * 4 > (__int128)INT64_MAX) req |= FZ_BIT(ATTNMETA_ERR_OVERFLOW);
      else if (margin * 8 > (__int128)INT64_MAX) opt |= FZ_BIT(ATTNMETA_ERR_OVERFLOW);
    }
  } else if (op->peer_tables_stride < op->peer_tables_cols) {
    opt |= FZ_BIT(ATTNMETA_ERR_STRIDE); /* tables no product reads */
  }
  *required |= req;
  *optional |= opt;
}

static void fz_topk_rules_of(const attnmeta_topk *op, size_t caller_size, uint32_t *required,
                             uint32_t *optional);

void fz_topk_rules(const attnmeta_topk *caller, uint32_t *required, uint32_t *optional) {
  attnmeta_topk effective; /* what the library reads: defaults past 0.2.0's size */
  const attnmeta_topk *op = caller;
  if (caller->struct_size == FZ_TOPK_SIZE_0_2) {
    attnmeta_topk_init(&effective);
    memcpy(&effective, caller, FZ_TOPK_SIZE_0_2);
    op = &effective;
  }
  fz_topk_rules_of(op, caller->struct_size, required, optional);
}

static void fz_topk_rules_of(const attnmeta_topk *op, size_t caller_size, uint32_t *required,
                             uint32_t *optional) {
  uint32_t req = 0, opt = 0;
  const int uses_ws = op->prefill_req && op->num_prefill > 0;
  /* an empty array may be NULL: with T = 0 the [T] and [T][K] arrays and
   * the request source, with R = 0 or cols = 0 the block table (contract
   * section 6) */
  const int no_tokens = op->num_tokens == 0;
  const int no_table = op->num_reqs == 0 || op->block_table_cols == 0;
  /* 0.2.0's size (kept by 0.3.0) and this header's */
  if (caller_size > sizeof *op) req |= FZ_BIT(ATTNMETA_ERR_NOT_SUPPORTED);
  else if (caller_size != sizeof *op && caller_size != FZ_TOPK_SIZE_0_2)
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (op->num_tokens < 0 || op->topk_count < 1 || op->num_reqs < 0 || op->num_prefill < 0 ||
      op->block_size < 1 || op->stride_rows < 0 || op->dcp_world_size < 1 ||
      op->dcp_interleave < 1 || op->dcp_rank < 0 || op->dcp_rank >= op->dcp_world_size ||
      (op->compact != 0 && op->compact != 1))
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if ((!op->topk || !op->out) && !no_tokens) req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
  if (op->topk_stride < op->topk_count || op->out_stride < op->topk_count)
    req |= FZ_BIT(ATTNMETA_ERR_STRIDE);
  rows_rules(op->num_tokens, op->topk_stride, op->topk_count, &req, &opt);
  rows_rules(op->num_tokens, op->out_stride, op->topk_count, &req, &opt);
  if (!op->query_start_loc && !op->req_id && !no_tokens) req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
  if (op->query_start_loc && op->req_id) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (op->block_table_cols < 0) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (op->block_table_stride < op->block_table_cols) req |= FZ_BIT(ATTNMETA_ERR_STRIDE);
  if (!op->block_table && !no_table && op->block_table_cols > 0)
    req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
  /* the table's rows even with no column: the library bounds rows x stride */
  rows_rules(op->num_reqs, op->block_table_stride, op->block_table_cols, &req, &opt);
  if (uses_ws && !op->workspace_starts) req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
  if (op->compact == 1 && !op->valid_count && !no_tokens) req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
  if (misaligned(op->topk, 4) || misaligned(op->query_start_loc, 4) || misaligned(op->req_id, 4) ||
      misaligned(op->prefill_req, 4) || misaligned(op->out, 4) ||
      misaligned(op->valid_count, 4) || misaligned(op->error_word, 4) ||
      misaligned(op->token_slot, 8))
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  /* buffers the call does not read: the library may check them anyway */
  if (misaligned(op->block_table, 4))
    *(op->block_table_cols > 0 ? &req : &opt) |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (misaligned(op->workspace_starts, 4))
    *(uses_ws ? &req : &opt) |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  topk_peer_rules(op, &req, &opt);
  if (!req) { /* sizes sound: which bytes meet */
    const int m = topk_overlap(op);
    if (m == 2) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    else if (m == 1) opt |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  }
  *required = req;
  *optional = opt;
}

/* The overlap part of fz_pool_rules: 0 none, 2 an overlap, 1 cannot say.
 * kv_indptr counts only where kv_indices reads it. */
static int pool_overlap(const attnmeta_pool *op) {
  const __int128 B = op->num_reqs, P = op->pool_rows, C = op->kv_indices_capacity;
  const fz_buffer b[9] = {
      {op->req_to_token, P, (__int128)op->pool_cols * 4, (__int128)op->req_to_token_stride * 4, 0},
      {op->req_pool_indices, 1, B * 8, B * 8, 0},
      {op->lengths, 1, B * 8, B * 8, 0},
      {op->kv_start_idx, 1, B * 8, B * 8, 0},
      {op->kv_indices ? op->kv_indptr : NULL, 1, (B + 1) * 4, (B + 1) * 4, 0},
      {op->kv_indices, 1, C * 4, C * 4, 1},
      {op->kv_indptr_out, 1, (B + 1) * 4, (B + 1) * 4, 1},
      {op->page_table, B, (__int128)op->page_table_width * 4, (__int128)op->page_table_stride * 4, 1},
      {op->error_word, 1, 4, 4, 1}};
  return fz_buffers_meet(b, 9);
}

void fz_pool_rules(const attnmeta_pool *op, uint32_t *required, uint32_t *optional) {
  uint32_t req = 0, opt = 0;
  const int64_t B = op->num_reqs;
  /* new in 0.3.0: its present size only */
  if (op->struct_size > sizeof *op) req |= FZ_BIT(ATTNMETA_ERR_NOT_SUPPORTED);
  else if (op->struct_size < sizeof *op) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (op->num_reqs < 0 || op->pool_rows < 0 || op->pool_cols < 0 || op->page_size < 1 ||
      op->kv_indices_capacity < 0 || op->page_table_width < 0)
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  /* the pool: its stride whatever its rows, NULL only when it holds nothing */
  if (op->req_to_token_stride < op->pool_cols) req |= FZ_BIT(ATTNMETA_ERR_STRIDE);
  if (!op->req_to_token && op->pool_rows > 0 && op->pool_cols > 0)
    req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
  rows_rules(op->pool_rows, op->req_to_token_stride, op->pool_cols, &req, &opt);
  if ((!op->req_pool_indices || !op->lengths) && B > 0) req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
  if (op->kv_indices) rows_rules(1, op->kv_indices_capacity, op->kv_indices_capacity, &req, &opt);
  if (op->page_table) {
    if (op->page_table_stride < op->page_table_width) req |= FZ_BIT(ATTNMETA_ERR_STRIDE);
    rows_rules(B, op->page_table_stride, op->page_table_width, &req, &opt);
  }
  if (!op->kv_indices && !op->kv_indptr_out && !op->page_table)
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  /* the rows' places: kv_indptr or kv_indptr_out, not both */
  if (op->kv_indices && op->kv_indptr && op->kv_indptr_out)
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (op->kv_indices && !op->kv_indptr && !op->kv_indptr_out && B > 0)
    req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
  if (op->kv_indices_capacity > 0 && !op->kv_indices) req |= FZ_BIT(ATTNMETA_ERR_NULL_POINTER);
  /* every pointer given, used or not */
  if (misaligned(op->req_to_token, 4) || misaligned(op->req_pool_indices, 8) ||
      misaligned(op->lengths, 8) || misaligned(op->kv_start_idx, 8) ||
      misaligned(op->kv_indptr, 4) || misaligned(op->kv_indices, 4) ||
      misaligned(op->kv_indptr_out, 4) || misaligned(op->page_table, 4) ||
      misaligned(op->error_word, 4))
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (!req) {
    const int m = pool_overlap(op);
    if (m == 2) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
    else if (m == 1) opt |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  }
  *required = req;
  *optional = opt;
}

uint32_t fz_config_rules(const attnmeta_launch_config *c) {
  uint32_t req = 0;
  if (c->block < 0 || c->grid < 0 || c->lanes < 0) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (c->stage < -1 || c->stage > 1 || c->vector < -1 || c->vector > 1)
    req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (c->block > 1) req |= FZ_BIT(ATTNMETA_ERR_NOT_SUPPORTED); /* CPU: one thread per block */
  if (c->block > 1024) req |= FZ_BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  return req;
}

int fz_message_ok(const char *msg, size_t limit) {
  size_t i;
  if (!msg) return 0;
  for (i = 0; i < limit; ++i)
    if (msg[i] == '\0') return 1;
  return 0;
}
