// SPDX-License-Identifier: Apache-2.0
/*
 * Shared plumbing of the attnmeta fuzz harnesses: a byte reader that turns
 * the fuzzer's input into choices (0 once the bytes run out, so short inputs
 * describe small, fast batches) and bulk content (a PRNG seeded from a hash
 * of the input), guarded buffers, and an independent model of the
 * host-argument rules of attnmeta_build_step.
 *
 * A harness reports a failure with fz_fail(), which prints what was wrong
 * and aborts: libFuzzer records the input as a crash, the replay driver
 * exits non-zero.
 */
#ifndef ATTNMETA_FUZZ_UTIL_H
#define ATTNMETA_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "attnmeta/attnmeta.h"

/* ---- byte reader ---- */

typedef struct fz_reader {
  const uint8_t *data;
  size_t size;
  size_t pos;
  uint64_t rng;
} fz_reader;

void fz_reader_init(fz_reader *r, const uint8_t *data, size_t size);
/* Choices come from the input bytes, 0 once they run out. */
uint64_t fz_u64(fz_reader *r);
uint32_t fz_u32(fz_reader *r);
uint8_t fz_u8(fz_reader *r);
/* Uniform-ish integer in [lo, hi] (lo <= hi). */
int64_t fz_range(fz_reader *r, int64_t lo, int64_t hi);
/* 1 with probability about num / den; 0 once the input has run out, so
 * rare choices need bytes of their own. */
int fz_chance(fz_reader *r, unsigned num, unsigned den);
/* Bulk content (block ids, ...) from a PRNG seeded with a hash of the whole
 * input: deterministic, and it does not use up the input bytes. */
uint64_t fz_rand(fz_reader *r);
int64_t fz_rand_range(fz_reader *r, int64_t lo, int64_t hi);
/* An int32 that is often an edge value (0, +-1, INT32 limits, ...). */
int32_t fz_edge32(fz_reader *r);
/* An int64 that is often an edge value (INT64 limits, INT32 limits, ...). */
int64_t fz_edge64(fz_reader *r);

/* The checks and bulk loops give the fuzzer no useful feedback: keep their
 * comparisons out of the coverage instrumentation (they dominate otherwise). */
#if defined(__clang__) && __clang_major__ >= 13
#define FZ_NO_COVERAGE __attribute__((no_sanitize("coverage"), noinline))
#else
#define FZ_NO_COVERAGE
#endif

/* Functions whose unsigned arithmetic wraps on purpose (hashes, the PRNG,
 * ranges taken modulo 2^64): exempt from clang's unsigned-integer-overflow
 * check, which the fuzz and sanitizer builds enable everywhere else. */
#if defined(__clang__)
#define FZ_WRAPS __attribute__((no_sanitize("unsigned-integer-overflow")))
#else
#define FZ_WRAPS
#endif

/* ---- failures ---- */

#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 1, 2)))
#endif
void fz_fail(const char *fmt, ...);

#define FZ_CHECK(cond, ...)      \
  do {                           \
    if (!(cond)) fz_fail(__VA_ARGS__); \
  } while (0)

/* FZ_CHECK that first prints the case that failed: `describe` is a
 * statement run only then. */
#define FZ_CHECK_DESCRIBED(describe, cond, ...) \
  do {                                          \
    if (!(cond)) {                              \
      describe;                                 \
      fz_fail(__VA_ARGS__);                     \
    }                                           \
  } while (0)

/* ---- guarded buffers ----
 * [guard][shift bytes][n elements of `elem` bytes][guard], every byte of it
 * filled with a poison pattern. `data` points at the first element. The
 * allocation is exact, so AddressSanitizer's redzones sit right past the
 * trailing guard. */

#define FZ_GUARD_BYTES 64
#define FZ_POISON_BYTE 0xA5
#define FZ_POISON32 ((int32_t)0xA5A5A5A5)
#define FZ_POISON64 ((int64_t)0xA5A5A5A5A5A5A5A5LL)

typedef struct fz_buf {
  unsigned char *base;
  size_t total;   /* bytes allocated */
  size_t offset;  /* bytes before data */
  size_t bytes;   /* n * elem */
  void *data;
} fz_buf;

/* shift: extra bytes between the leading guard and the data (for
 * misalignment); base is 16-byte aligned. n may be 0. */
void fz_buf_alloc(fz_buf *b, size_t elem, int64_t n, size_t shift);
/* The same with no trailing guard: the allocation ends where the data
 * ends, so AddressSanitizer reports the first byte written past it. */
void fz_buf_alloc_exact(fz_buf *b, size_t elem, int64_t n, size_t shift);
void fz_buf_free(fz_buf *b);
/* 1 when every byte outside [data, data + bytes) still holds the poison. */
int fz_buf_guards_intact(const fz_buf *b);
/* 1 when every byte of the buffer still holds the poison. */
int fz_buf_untouched(const fz_buf *b);

/* An input array with no guard: exactly n int32 elements (at least one byte
 * is allocated), `shift_elems` int32 past a 16-byte boundary, so that any
 * read past the end is an AddressSanitizer error. */
typedef struct fz_in {
  void *base;
  int32_t *data;
} fz_in;
void fz_in_alloc(fz_in *in, const int32_t *src, int64_t n, int shift_elems);
void fz_in_free(fz_in *in);

/* ---- sparse buffers, for sizes up to the host's limits ----
 * Zeroed memory reserved but not committed (MAP_NORESERVE): pages cost
 * memory only once written. The data ends exactly where an inaccessible
 * page begins and starts right after one (bytes a multiple of the page
 * size) or a few bytes into the first page: an access past either end
 * faults in any build. */
typedef struct fz_sparse {
  unsigned char *map;
  size_t map_bytes;
  unsigned char *data;
  size_t bytes;
  /* tracked = 1: the pages touched during the last tracked launch
   * (fz_track.h) are exactly pages[0, npages), sorted page starts;
   * 0: they must be found by scanning the mapping */
  uintptr_t *pages;
  size_t npages;
  int tracked;
} fz_sparse;

/* 0 when the address space cannot be had (the caller skips the input). */
int fz_sparse_alloc(fz_sparse *s, size_t bytes);
void fz_sparse_free(fz_sparse *s);
/* Makes the buffer read-only (an input: any write faults). */
void fz_sparse_freeze(fz_sparse *s);
/* Calls visit(arg, begin, end) for every byte range [begin, end) of the data
 * that lies on a page the process has touched, in order: the pages written
 * during the last tracked launch (fz_track.h) when the buffer was tracked,
 * else every resident page of the mapping (mincore over all of it: slow
 * for a large reservation). */
void fz_sparse_touched(const fz_sparse *s, void (*visit)(void *arg, size_t begin, size_t end),
                       void *arg);

/* ---- the host-argument rules, written from the header and the contract ----
 * For a step, `required` gets one bit (1 << status) per rule the step breaks
 * that must make the call fail; `optional` one bit per rule it breaks on a
 * field the call does not use (the library may, but need not, refuse).
 * The call must return OK when both are 0, a status in `required | optional`
 * when `required` is not 0, and OK or a status in `optional` otherwise. */
void fz_step_rules(const attnmeta_step *s, uint32_t *required, uint32_t *optional);

/* Whether an output of the step shares bytes with an input or another
 * output (only buffers the step uses, only the bytes each covers): 0 no,
 * 2 yes, 1 cannot say cheaply (the library may refuse). Part of
 * fz_step_rules, for steps whose sizes are otherwise sound. */
uint32_t fz_overlap_rule(const attnmeta_step *s);

/* The sizes released versions gave attnmeta_step (docs/abi.md): 0.1's
 * ended with error_word, 0.2's with launch_flags (padded to the struct's
 * alignment); 0.3's is this header's. */
#define FZ_STEP_SIZE_0_1 (offsetof(attnmeta_step, error_word) + sizeof(int32_t *))
#define FZ_STEP_SIZE_0_2                                                              \
  ((offsetof(attnmeta_step, launch_flags) + sizeof(uint32_t) + _Alignof(attnmeta_step) - 1) / \
   _Alignof(attnmeta_step) * _Alignof(attnmeta_step))

/* 0.3.0's ended with c128a_num_decode_tokens (padded likewise); the PCP
 * members came after it. */
#define FZ_STEP_SIZE_0_3                                                                  \
  ((offsetof(attnmeta_step, c128a_num_decode_tokens) + sizeof(int32_t) +                    \
    _Alignof(attnmeta_step) - 1) / _Alignof(attnmeta_step) * _Alignof(attnmeta_step))

/* The size 0.2.0 and 0.3.0 gave attnmeta_topk: ending with error_word (the
 * DCP peer views came after it). */
#define FZ_TOPK_SIZE_0_2 (offsetof(attnmeta_topk, error_word) + sizeof(int32_t *))

/* Whether the step wants a DeepSeek-V3.2/V4 product (each reads seq_lens). */
int fz_wants_dsv4(const attnmeta_step *s);

/* The same for attnmeta_convert_topk (its header comment and the
 * contract's sections 6, 6c and 6d), overlaps included; a struct of
 * 0.2.0's size is read with the later members at their defaults. */
void fz_topk_rules(const attnmeta_topk *op, uint32_t *required, uint32_t *optional);

/* The same for attnmeta_build_pool_indices (its header comment and
 * docs/c_api.md's "SGLang's request pool"), overlaps included. */
void fz_pool_rules(const attnmeta_pool *op, uint32_t *required, uint32_t *optional);

/* Launch config rules of attnmeta_set_launch_config on a CPU context. */
uint32_t fz_config_rules(const attnmeta_launch_config *c);

/* 1 when `msg` is a NUL-terminated string shorter than `limit` bytes. */
int fz_message_ok(const char *msg, size_t limit);

/* All flags the library defines. */
#define FZ_ALL_FLAGS                                                                         \
  (ATTNMETA_FLAG_QSL_FIRST_NONZERO | ATTNMETA_FLAG_QSL_DECREASING |                          \
   ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE | ATTNMETA_FLAG_SEQ_LEN_NEGATIVE |                       \
   ATTNMETA_FLAG_SEQ_LEN_LT_QLEN | ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE |                        \
   ATTNMETA_FLAG_BLOCK_ID_NEGATIVE | ATTNMETA_FLAG_POSITION_NEGATIVE)
#define FZ_SLOT_FLAGS                                                                        \
  (ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE | ATTNMETA_FLAG_BLOCK_ID_NEGATIVE |                      \
   ATTNMETA_FLAG_POSITION_NEGATIVE)
#define FZ_SEQ_FLAGS (ATTNMETA_FLAG_SEQ_LEN_NEGATIVE | ATTNMETA_FLAG_SEQ_LEN_LT_QLEN)

#endif /* ATTNMETA_FUZZ_UTIL_H */
