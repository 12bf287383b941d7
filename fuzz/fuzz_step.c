// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_step: attnmeta_build_step on the CPU backend (the kernel body every
 * backend runs) against the naive reference of conformance/generator/reference.c.
 *
 * The input bytes decide a batch (R requests, T padded tokens, capacity C,
 * a block table of `cols` columns with its own row strides, num_mapped,
 * block size, decode context parallelism W / k / I), which outputs are
 * wanted, two launch configurations of the CPU backend, and the device data:
 *  - valid: query_start_loc built from random query lengths, seq_lens >=
 *    query length, non-negative block ids;
 *  - hostile: raw or perturbed query_start_loc, negative / huge seq_lens,
 *    negative or huge block ids, positions past the block table.
 * Sometimes one host argument is broken on purpose.
 *
 * Checked on every input:
 *  - memory safety: inputs are exact-size allocations (AddressSanitizer sees
 *    any read past them), outputs sit between poisoned guard zones that must
 *    stay intact, the gap columns of block_table_out rows stay poisoned, no
 *    input is modified, and UndefinedBehaviorSanitizer watches arithmetic;
 *  - a broken host argument: a status the rules of fuzz_util.c allow, a
 *    message, and nothing written (every output and the error word intact);
 *  - query_start_loc non-decreasing (req(t) is then defined for every t):
 *    every wanted product and the error word agree exactly with the
 *    reference;
 *  - otherwise: every value the contract defines for any data (padding
 *    tokens, the [T, C) tail, decode_lens, per_req_lens, the token map past
 *    num_mapped, the request flags of the error word) agrees with the
 *    reference, the rest stays in range and consistent;
 *  - both launch configurations give identical bytes, and
 *    attnmeta_token_to_req agrees with the token_to_req product;
 *  - GPU launch shapes: the CPU backend runs one thread per block, so the
 *    harness also runs the kernel body itself (am_step_kernel.h, the code
 *    CUDA and HIP compile) for a decoded GPU shape, lanes x groups threads
 *    per block and several blocks, every thread in turn (a valid schedule:
 *    threads share nothing but the error word and, when staged, the
 *    boundaries, which are pre-filled as the barrier would leave them), and
 *    checks the bytes against the CPU backend's;
 *  - with ATTNMETA_FUZZ_HIP_CPU=1 (fuzz_hip_cpu.c), the same step also runs
 *    on the HIP backend built on HIP-CPU, with real multi-thread blocks,
 *    and must give the CPU backend's bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_step_kernel.h" /* the kernel body, run on emulated GPU shapes */
#include "am_step_plan.h" /* the library's launch planning, for the emulated GPU shapes */
#include "attnmeta/attnmeta.h"
#include "fuzz_hip_cpu.h"
#include "fuzz_ops.h"
#include "fuzz_step_large.h"
#include "fuzz_util.h"
#include "reference.h"

#define MAX_R 300
#define MAX_R_WIDE 4200 /* a rare class past the staging limit (4095 boundaries) */
#define MAX_T 2000
#define MAX_TAIL 300
#define MAX_COLS 300
#define MAX_TABLE 16384 /* elements of a block table (input or output): 64 KiB */

enum {
  O_T2R, O_SEQ, O_GSEQ, O_BT, O_DEC, O_RIDX, O_PRL, O_POS, O_SLOT, O_ERR, O_COUNT
};
static const char *const out_names[O_COUNT] = {
    "token_to_req",    "seq_lens_out",     "global_seq_lens_out", "block_table_out",
    "decode_lens_out", "req_indices_out",  "per_req_lens_out",    "positions",
    "slot_mapping",    "error_word"};

typedef struct scenario {
  int32_t R, T, C, cols;
  int64_t in_stride, out_stride;
  int32_t num_mapped, block_size, W, k, I;
  unsigned want; /* bit per O_* */
  int32_t *qsl;      /* [R + 1] */
  int32_t *seq_lens; /* [max(R, 1)] */
  int32_t *table;    /* [R * in_stride], gap columns hold GAP */
  int64_t table_elems; /* used part: (R - 1) * in_stride + cols, 0 when R or cols is 0 */
  int table_null;    /* cols == 0: pass a NULL block table */
  int table_shift, out_shift; /* int32 elements past a 16-byte boundary */
  attnmeta_launch_config cfg[2];
  int32_t err_init;
  int wrapper;  /* also run attnmeta_token_to_req */
  int exact;    /* outputs in exact-size allocations (no guard zone: ASan sees one byte past) */
  struct {      /* an emulated GPU launch of the kernel body, planned by step.c's planner */
    attnmeta_launch_config cfg; /* the overrides a caller may set (0 / -1: automatic) */
    int processors;             /* multiprocessors of the emulated device */
    int reverse, force_full, force_lean, speculate;
    int guess_random; /* any guess must give the same bytes (monotone boundaries) */
    int scalar_tail;  /* no vector part in the seq_lens_out tail */
    int one_lane_variant; /* with one lane, say so (as the CPU backend does) or not */
    uint32_t guess_mul;
    int32_t guess_shift;
  } gpu;
  int breakage; /* 0, or which host argument to break */
  struct {      /* the shape the HIP-CPU mode widens (fuzz_hip_cpu.h) */
    int lanes, groups, grid;
  } hip;
} scenario;

#define GAP ((int32_t)0x5A5A5A5A)

static attnmeta_context *ctx;

/* The checks and bulk loops give the fuzzer no useful feedback: keep their
 * comparisons out of the coverage instrumentation (they dominate otherwise). */
#if defined(__clang__) && __clang_major__ >= 13
#define NO_COVERAGE __attribute__((no_sanitize("coverage"), noinline))
#else
#define NO_COVERAGE
#endif

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) fz_fail("out of memory");
  return p;
}

/* ---- decoding ---- */

static int32_t pick_positive(fz_reader *rd, const int32_t *common, size_t ncommon, int32_t wide) {
  const uint8_t b = fz_u8(rd);
  if (b < 200) return common[b % ncommon];
  if (b < 240) return (int32_t)fz_range(rd, 1, wide);
  return (int32_t)fz_range(rd, 1, INT32_MAX);
}

static int64_t pick_stride(fz_reader *rd, int32_t cols) {
  switch (fz_u8(rd) % 6) {
    case 0: case 1: return cols;
    case 2: return (cols + 3) / 4 * 4;
    case 3: return cols + fz_range(rd, 1, 7);
    case 4: return (cols + fz_range(rd, 0, 64) + 3) / 4 * 4;
    default: return cols + fz_range(rd, 0, 64);
  }
}

NO_COVERAGE static void fill_table(scenario *sc, fz_reader *rd, int64_t idmax) {
  int64_t r, i;
  for (r = 0; r < sc->R; ++r)
    for (i = 0; i < sc->in_stride; ++i)
      sc->table[r * sc->in_stride + i] = i < sc->cols ? (int32_t)fz_rand_range(rd, 0, idmax) : GAP;
}

static void decode(fz_reader *rd, scenario *sc) {
  static const int32_t qmax_of[4] = {4, 8, 32, 300};
  static const int32_t rmax_of[4] = {4, 16, 64, MAX_R};
  static const int32_t pad_of[4] = {0, 4, 64, MAX_T};
  static const int32_t tail_of[4] = {0, 3, 32, MAX_TAIL};
  static const int32_t colmax_of[4] = {4, 16, 64, MAX_COLS};
  static const int32_t sizes_bs[] = {1, 1, 2, 3, 4, 8, 16, 16, 64, 256, 1000};
  static const int32_t sizes_w[] = {2, 2, 3, 4, 8, 16};
  static const int32_t sizes_i[] = {2, 3, 4, 8, 16, 64};
  static const int64_t hist_of[5] = {0, 16, 1000, 100000, INT32_MAX};
  const uint8_t shape = fz_u8(rd);
  const int rclass = shape & 3, qclass = (shape >> 2) & 3, pclass = (shape >> 4) & 3,
            cclass = (shape >> 6) & 3;
  const uint8_t mode = fz_u8(rd);
  const int qsl_mode = mode & 7;          /* 0-4 valid, 5 raw, 6-7 perturbed */
  const int seq_hostile = ((mode >> 3) & 3) == 3;
  const int ids_hostile = ((mode >> 5) & 3) == 3;
  const int fit_table = (mode >> 7) & 1;
  int64_t total = 0, max_seq = 0;
  int32_t r, R;
  int64_t i;

  memset(sc, 0, sizeof *sc);

  /* ---- requests and tokens ---- */
  R = (int32_t)fz_range(rd, 0, rmax_of[rclass]);
  if (rclass == 3 && fz_chance(rd, 1, 16)) R = (int32_t)fz_range(rd, 4090, MAX_R_WIDE);
  sc->R = R;
  sc->qsl = xcalloc((size_t)R + 1, sizeof(int32_t));
  sc->seq_lens = xcalloc((size_t)R + 1, sizeof(int32_t));
  {
  const uint8_t qmode = fz_u8(rd) % 3; /* 0: lengths from the input, 1: uniform, 2: random */
  const int64_t uniform = fz_range(rd, 0, qmax_of[qclass]);
  for (r = 0; r < R; ++r) {
    int64_t q = qmode == 1   ? uniform
                : qmode == 2 ? (fz_rand(rd) % 4 == 0 ? 0 : fz_rand_range(rd, 0, qmax_of[qclass]))
                             : fz_range(rd, 0, qmax_of[qclass]);
    if (R > MAX_R) q = fz_rand(rd) % 8 == 0; /* the wide class: mostly empty requests */
    q = min64(q, MAX_T - total);
    total += q;
    sc->qsl[r + 1] = (int32_t)total;
  }
  }
  sc->T = (int32_t)(total + fz_range(rd, 0, min64(pad_of[pclass], MAX_T - total)));
  sc->C = (int32_t)(sc->T + fz_range(rd, 0, tail_of[cclass]));

  if (qsl_mode == 5) { /* raw: any values, mostly near the interesting range */
    for (i = 0; i <= R; ++i)
      sc->qsl[i] = fz_chance(rd, 1, 4) ? fz_edge32(rd)
                                        : (int32_t)fz_range(rd, -3, (int64_t)sc->T + 3);
  } else if (qsl_mode >= 6) { /* a few perturbations of a valid array */
    const int n = (int)fz_range(rd, 1, 3);
    int j;
    for (j = 0; j < n; ++j) {
      const int64_t at = fz_range(rd, 0, R);
      switch (fz_u8(rd) % 4) {
        case 0: sc->qsl[at] = fz_edge32(rd); break;
        case 1: sc->qsl[at] = (int32_t)clamp64(sc->qsl[at] + fz_range(rd, -5, 5), INT32_MIN, INT32_MAX); break;
        case 2: /* shift everything: monotone, qsl[0] != 0 */
          {
            const int64_t d = fz_range(rd, -5, 5);
            for (i = 0; i <= R; ++i) sc->qsl[i] = (int32_t)clamp64(sc->qsl[i] + d, INT32_MIN, INT32_MAX);
          }
          break;
        default: /* total out of range */
          sc->qsl[R] = fz_chance(rd, 1, 2) ? (int32_t)fz_range(rd, (int64_t)sc->T + 1, (int64_t)sc->T + 4)
                                           : fz_edge32(rd);
          break;
      }
    }
  }

  /* ---- decode context parallelism, block size ---- */
  sc->W = fz_u8(rd) < 176 ? 1 : pick_positive(rd, sizes_w, 6, 64);
  sc->k = (int32_t)fz_range(rd, 0, (int64_t)sc->W - 1);
  sc->I = fz_u8(rd) < 176 ? 1 : pick_positive(rd, sizes_i, 6, 100);
  sc->block_size = pick_positive(rd, sizes_bs, sizeof sizes_bs / sizeof sizes_bs[0], 4096);

  /* ---- seq_lens ---- */
  {
    const int64_t hmax = hist_of[fz_u8(rd) % 5];
    for (r = 0; r < R; ++r) {
      const int64_t q = max64((int64_t)sc->qsl[r + 1] - sc->qsl[r], 0);
      const int64_t hist = hmax > 0 && fz_rand(rd) % 4 ? fz_rand_range(rd, 0, hmax) : 0;
      sc->seq_lens[r] = (int32_t)min64(q + hist, INT32_MAX);
    }
    if (seq_hostile && R > 0) {
      const int n = (int)fz_range(rd, 1, 4);
      int j;
      for (j = 0; j < n; ++j) {
        const int64_t at = fz_range(rd, 0, (int64_t)R - 1);
        const int64_t q = (int64_t)sc->qsl[at + 1] - sc->qsl[at];
        sc->seq_lens[at] = fz_chance(rd, 1, 2) ? fz_edge32(rd)
                                               : (int32_t)clamp64(q - fz_range(rd, 1, 3), INT32_MIN, INT32_MAX);
      }
    }
    for (r = 0; r < R; ++r) max_seq = max64(max_seq, sc->seq_lens[r]);
  }

  /* ---- block table ---- */
  if (fit_table) {
    const int64_t vb = (int64_t)sc->block_size * sc->W;
    const int64_t need = (max_seq + vb - 1) / vb + fz_range(rd, 0, 2);
    sc->cols = (int32_t)(need <= MAX_COLS ? need : fz_range(rd, 0, MAX_COLS));
  } else {
    sc->cols = (int32_t)fz_range(rd, 0, colmax_of[fz_u8(rd) % 4]);
  }
  if (R > MAX_R) sc->cols = (int32_t)min64(sc->cols, 8); /* the wide class stays cheap */
  sc->in_stride = pick_stride(rd, sc->cols);
  sc->out_stride = pick_stride(rd, sc->cols);
  /* keep the tables small enough for fast executions: at most MAX_TABLE
   * elements in the input table and in block_table_out */
  while (sc->cols > 0 && (R * sc->in_stride > MAX_TABLE || sc->T * sc->out_stride > MAX_TABLE)) {
    const int64_t shrink = sc->cols / 2;
    sc->in_stride -= sc->cols - shrink;
    sc->out_stride -= sc->cols - shrink;
    sc->cols = (int32_t)shrink;
  }
  while (R * sc->in_stride > MAX_TABLE) sc->in_stride /= 2, sc->cols = (int32_t)min64(sc->cols, sc->in_stride);
  while (sc->T * sc->out_stride > MAX_TABLE) sc->out_stride /= 2, sc->cols = (int32_t)min64(sc->cols, sc->out_stride);
  sc->table_shift = fz_chance(rd, 1, 4) ? (int)fz_range(rd, 1, 3) : 0;
  sc->out_shift = fz_chance(rd, 1, 4) ? (int)fz_range(rd, 1, 3) : 0;
  sc->table_null = sc->cols == 0 && fz_chance(rd, 1, 2);
  sc->table = xcalloc((size_t)(R * sc->in_stride), sizeof(int32_t));
  sc->table_elems = (R > 0 && sc->cols > 0) ? (R - 1) * sc->in_stride + sc->cols : 0;
  {
    const int64_t idmax = fz_chance(rd, 1, 8) ? INT32_MAX : (1 << 20);
    fill_table(sc, rd, idmax);
    if (ids_hostile && sc->table_elems > 0) {
      const int n = (int)fz_range(rd, 1, 6);
      int j;
      for (j = 0; j < n; ++j) {
        r = (int32_t)fz_range(rd, 0, (int64_t)R - 1);
        sc->table[r * sc->in_stride + fz_range(rd, 0, (int64_t)sc->cols - 1)] = fz_edge32(rd);
      }
    }
  }

  /* ---- the rest of the step ---- */
  {
    const uint8_t b = fz_u8(rd);
    if (b < 128) sc->num_mapped = -1;
    else if (b < 160) sc->num_mapped = fz_edge32(rd);
    else if (b < 176) sc->num_mapped = sc->qsl[R];
    else sc->num_mapped = (int32_t)fz_range(rd, 0, (int64_t)sc->T + 3);
  }
  /* every output, or a subset */
  sc->want = fz_chance(rd, 3, 4) ? (unsigned)fz_range(rd, 0, (1 << O_COUNT) - 1) : (1u << O_COUNT) - 1;
  sc->wrapper = fz_chance(rd, 1, 8);
  sc->err_init = fz_chance(rd, 1, 4) ? fz_edge32(rd) : 0;
  for (i = 0; i < 2; ++i) {
    attnmeta_launch_config *c = &sc->cfg[i];
    const uint8_t g = fz_u8(rd);
    c->block = (int)fz_range(rd, 0, 1);
    c->grid = g < 128 ? 0 : g < 224 ? (int)fz_range(rd, 1, 8) : (int)fz_range(rd, 9, 64);
    c->stage = (int)fz_range(rd, -1, 1);
    c->vector = (int)fz_range(rd, -1, 1);
    c->lanes = !fz_chance(rd, 1, 4) ? 0 : fz_chance(rd, 1, 8) ? 4096 : (int)fz_range(rd, 1, 8);
  }
  {
    /* what a caller may ask of the GPU planner: automatic (the shapes the
     * H200 and MI300 get: 64-256 lanes for wide rows, 320-thread blocks),
     * or forced lanes, block and grid sizes, including non-powers of two */
    static const int blocks[16] = {0, 0, 0, 0, 0, 0, 0, 0, 32, 64, 96, 160, 320, 512, 1024, 3};
    static const int lanes[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 16, 64, 96, 128, 160, 256};
    static const int processors[4] = {1, 4, 16, 132};
    attnmeta_launch_config *c = &sc->gpu.cfg;
    const uint8_t g = fz_u8(rd);
    c->block = blocks[fz_u8(rd) % 16];
    c->lanes = lanes[fz_u8(rd) % 16];
    c->grid = g < 160 ? 0 : g < 240 ? (int)fz_range(rd, 1, 8) : (int)fz_range(rd, 9, 600);
    c->stage = fz_chance(rd, 1, 2);
    c->vector = fz_chance(rd, 1, 2);
    sc->gpu.processors = processors[fz_u8(rd) % 4];
    sc->gpu.reverse = fz_chance(rd, 1, 2);
    sc->gpu.force_full = fz_chance(rd, 1, 4);
    sc->gpu.speculate = (int)fz_range(rd, 0, 3);
    sc->gpu.force_lean = fz_chance(rd, 1, 4);
    sc->gpu.guess_random = fz_chance(rd, 1, 2);
    sc->gpu.scalar_tail = fz_chance(rd, 1, 4);
    sc->gpu.one_lane_variant = fz_chance(rd, 1, 2);
    sc->gpu.guess_mul = (uint32_t)fz_u8(rd) << (fz_u8(rd) % 25);
    sc->gpu.guess_shift = (int32_t)fz_u8(rd) - 64;
  }
  sc->breakage = fz_chance(rd, 1, 16) ? (int)fz_range(rd, 1, 17) : 0;
  sc->exact = fz_chance(rd, 1, 4);
  {
    static const int lanes[] = {1, 1, 2, 3, 4, 8, 16, 32};
    static const int groups[] = {1, 2, 3, 4, 5, 8, 1, 2};
    sc->hip.lanes = lanes[fz_u8(rd) % 8];
    sc->hip.groups = groups[fz_u8(rd) % 8];
    sc->hip.grid = (int)fz_range(rd, 1, 6);
  }
}

static void scenario_free(scenario *sc) {
  free(sc->qsl);
  free(sc->seq_lens);
  free(sc->table);
}

static void describe(const scenario *sc) {
  int32_t r;
  fprintf(stderr,
          "scenario: R=%d T=%d C=%d cols=%d in_stride=%lld out_stride=%lld num_mapped=%d "
          "block_size=%d W=%d k=%d I=%d want=0x%x table_shift=%d out_shift=%d err_init=0x%x "
          "breakage=%d\n",
          sc->R, sc->T, sc->C, sc->cols, (long long)sc->in_stride, (long long)sc->out_stride,
          sc->num_mapped, sc->block_size, sc->W, sc->k, sc->I, sc->want, sc->table_shift,
          sc->out_shift, (unsigned)sc->err_init, sc->breakage);
  fprintf(stderr, "  configs: {%d,%d,%d,%d,%d} {%d,%d,%d,%d,%d}\n  qsl:", sc->cfg[0].block,
          sc->cfg[0].grid, sc->cfg[0].stage, sc->cfg[0].vector, sc->cfg[0].lanes, sc->cfg[1].block,
          sc->cfg[1].grid, sc->cfg[1].stage, sc->cfg[1].vector, sc->cfg[1].lanes);
  for (r = 0; r <= sc->R && r < 40; ++r) fprintf(stderr, " %d", sc->qsl[r]);
  fprintf(stderr, "%s\n  seq_lens:", sc->R >= 40 ? " ..." : "");
  for (r = 0; r < sc->R && r < 40; ++r) fprintf(stderr, " %d", sc->seq_lens[r]);
  fprintf(stderr, "%s\n", sc->R >= 40 ? " ..." : "");
}

static const scenario *current; /* for failure messages */
static am_launch_shape last_shape; /* the emulated GPU launch, for failure messages */

/* What the inputs were, for docs/reliability.md: printed at exit when the
 * environment has ATTNMETA_FUZZ_STATS=1. */
static struct {
  long runs, broken[18], well_formed, monotone_bad, non_monotone, clean, gpu_shapes, flag[8];
  long gpu_wide, gpu_large_grid, gpu_too_large, exact, op[8];
} stats;

static void print_operation_counts(void);

static void print_stats(void) {
  int i;
  long broken = 0;
  for (i = 1; i < 18; ++i) broken += stats.broken[i];
  fprintf(stderr,
          "fuzz_step inputs: %ld runs; %ld with a broken host argument; of the rest: %ld with "
          "well-formed query_start_loc, %ld monotone but qsl[0] != 0 or total out of [0, T], "
          "%ld non-monotone; %ld with no bad device data at all; %ld emulated GPU launches\n",
          stats.runs, broken, stats.well_formed, stats.monotone_bad, stats.non_monotone,
          stats.clean, stats.gpu_shapes);
  fprintf(stderr, "  broken host argument by kind:");
  for (i = 1; i < 18; ++i) fprintf(stderr, " %d:%ld", i, stats.broken[i]);
  fprintf(stderr, "\n  runs whose data raise each flag (bit: count):");
  for (i = 0; i < 8; ++i) fprintf(stderr, " %d:%ld", 1 << i, stats.flag[i]);
  fprintf(stderr, "\n  emulated GPU launches with more than 32 lanes: %ld, more than 64 blocks: %ld; "
          "too large to emulate (skipped): %ld; well-formed steps with exact-size outputs: %ld\n",
          stats.gpu_wide, stats.gpu_large_grid, stats.gpu_too_large, stats.exact);
  print_operation_counts();
  fz_large_print_stats();
}

static int applied_breakage;

#define CHECK(cond, ...) FZ_CHECK_DESCRIBED(describe(current), cond, __VA_ARGS__)

/* ---- one call ---- */

typedef struct outputs {
  fz_buf b[O_COUNT];
} outputs;

static void outputs_alloc(outputs *o, const scenario *sc) {
  static const size_t elem[O_COUNT] = {4, 4, 4, 4, 4, 4, 4, 8, 8, 4};
  int64_t n[O_COUNT];
  int i;
  n[O_T2R] = sc->T;
  n[O_SEQ] = sc->C;
  n[O_GSEQ] = sc->T;
  n[O_BT] = sc->T * sc->out_stride;
  n[O_DEC] = sc->T;
  n[O_RIDX] = sc->T;
  n[O_PRL] = sc->R;
  n[O_POS] = sc->T;
  n[O_SLOT] = sc->C;
  n[O_ERR] = 1;
  /* an output not wanted is passed as NULL: nothing to allocate */
  for (i = 0; i < O_COUNT; ++i)
    (sc->exact ? fz_buf_alloc_exact : fz_buf_alloc)(&o->b[i], elem[i],
                                                     (sc->want >> i) & 1 ? n[i] : 0,
                                                     i == O_BT ? (size_t)sc->out_shift * 4 : 0);
  if ((sc->want >> O_ERR) & 1) *(int32_t *)o->b[O_ERR].data = sc->err_init;
}

static void outputs_free(outputs *o) {
  int i;
  for (i = 0; i < O_COUNT; ++i) fz_buf_free(&o->b[i]);
}

typedef struct inputs {
  fz_in qsl, seq_lens, table;
} inputs;

static void inputs_alloc(inputs *in, const scenario *sc) {
  fz_in_alloc(&in->qsl, sc->qsl, (int64_t)sc->R + 1, 0);
  fz_in_alloc(&in->seq_lens, sc->seq_lens, sc->R, 0);
  fz_in_alloc(&in->table, sc->table, sc->table_elems, sc->table_shift);
}

static void inputs_free(inputs *in) {
  fz_in_free(&in->qsl);
  fz_in_free(&in->seq_lens);
  fz_in_free(&in->table);
}

NO_COVERAGE static void inputs_check(const inputs *in, const scenario *sc) {
  CHECK(memcmp(in->qsl.data, sc->qsl, ((size_t)sc->R + 1) * 4) == 0, "query_start_loc was modified");
  CHECK(sc->R == 0 || memcmp(in->seq_lens.data, sc->seq_lens, (size_t)sc->R * 4) == 0,
        "seq_lens was modified");
  CHECK(sc->table_elems == 0 || memcmp(in->table.data, sc->table, (size_t)sc->table_elems * 4) == 0,
        "block_table was modified");
}

static void *want_ptr(const scenario *sc, outputs *o, int which) {
  return (sc->want >> which) & 1 ? o->b[which].data : NULL;
}

static void fill_step(attnmeta_step *s, const scenario *sc, const inputs *in, outputs *o) {
  attnmeta_step_init(s);
  s->query_start_loc = in->qsl.data;
  s->num_reqs = sc->R;
  s->num_tokens = sc->T;
  s->capacity = sc->C;
  s->seq_lens = in->seq_lens.data;
  s->block_table = sc->table_null ? NULL : in->table.data;
  s->block_table_cols = sc->cols;
  s->block_table_stride = sc->in_stride;
  s->num_mapped = sc->num_mapped;
  s->block_size = sc->block_size;
  s->dcp_world_size = sc->W;
  s->dcp_rank = sc->k;
  s->dcp_interleave = sc->I;
  s->token_to_req = want_ptr(sc, o, O_T2R);
  s->seq_lens_out = want_ptr(sc, o, O_SEQ);
  s->global_seq_lens_out = want_ptr(sc, o, O_GSEQ);
  s->block_table_out = want_ptr(sc, o, O_BT);
  s->block_table_out_stride = sc->out_stride;
  s->decode_lens_out = want_ptr(sc, o, O_DEC);
  s->req_indices_out = want_ptr(sc, o, O_RIDX);
  s->per_req_lens_out = want_ptr(sc, o, O_PRL);
  s->positions = want_ptr(sc, o, O_POS);
  s->slot_mapping = want_ptr(sc, o, O_SLOT);
  s->error_word = want_ptr(sc, o, O_ERR);
}

/* Breaks one host argument; 0 when this kind does not apply. */
static int break_step(attnmeta_step *s, int kind, const scenario *sc) {
  switch (kind) {
    case 1: if (sc->T < 1) return 0; s->capacity = sc->T - 1; return 1;
    case 2: s->num_reqs = -1 - (sc->T & 7); return 1;
    case 3: s->num_tokens = INT32_MIN + sc->R; return 1;
    case 4: s->capacity = -1; return 1;
    case 5: if (sc->cols < 1) return 0; s->block_table_stride = sc->cols - 1; return 1;
    case 6:
      if (sc->cols < 1) return 0;
      s->block_table_out_stride = sc->T & 1 ? sc->cols - 1 : -(int64_t)sc->cols;
      return 1;
    case 7: s->dcp_world_size = sc->T & 1 ? 0 : INT32_MIN; return 1;
    case 8: s->dcp_interleave = 0; return 1;
    case 9: s->dcp_rank = sc->T & 1 ? sc->W : -1; return 1;
    case 10: s->block_size = sc->T & 1 ? 0 : -7; return 1;
    case 11: s->query_start_loc = NULL; return 1;
    case 12: s->seq_lens = NULL; return 1;
    case 13: if (sc->cols < 1) return 0; s->block_table = NULL; return 1;
    case 14: { /* an output one to four bytes off its alignment */
      int32_t **p32[] = {&s->token_to_req, &s->seq_lens_out, &s->global_seq_lens_out,
                         &s->block_table_out, &s->decode_lens_out, &s->req_indices_out,
                         &s->per_req_lens_out, &s->error_word};
      int64_t **p64[] = {&s->positions, &s->slot_mapping};
      const int pick = sc->T % 10;
      if (pick < 8) {
        if (!*p32[pick]) return 0;
        *p32[pick] = (int32_t *)(void *)((char *)*p32[pick] + 1 + (sc->R & 1));
      } else {
        if (!*p64[pick - 8]) return 0;
        *p64[pick - 8] = (int64_t *)(void *)((char *)*p64[pick - 8] + 4);
      }
      return 1;
    }
    case 15: s->struct_size = sc->T & 1 ? sizeof *s - 8 : sizeof *s + 8; return 1;
    case 16: /* padding ids past INT32_MAX: R + T > INT32_MAX (T >= 1) */
      if (sc->T < 1) return 0;
      s->num_reqs = (int32_t)((int64_t)INT32_MAX - sc->T + 1 + (sc->C & 3) % sc->T);
      return 1;
    case 17: /* byte offsets of the block tables overflow */
      if (sc->R >= 2 && sc->cols > 0) {
        s->block_table_stride = INT64_MAX / 4 / (sc->R - 1) + 1;
      } else if (sc->T >= 2) {
        s->block_table_out_stride = INT64_MAX / 4 / (sc->T - 1) + 1;
      } else {
        return 0;
      }
      return 1;
    default: return 0;
  }
}

static attnmeta_status run(const scenario *sc, int which_cfg, const inputs *in, outputs *o,
                           int breakage) {
  attnmeta_step step;
  attnmeta_status st;
  uint32_t required = 0, optional = 0;
  int i;

  st = attnmeta_set_launch_config(ctx, &sc->cfg[which_cfg]);
  CHECK(st == ATTNMETA_OK, "attnmeta_set_launch_config refused a valid CPU config: %s",
        attnmeta_last_error(ctx));
  fill_step(&step, sc, in, o);
  fz_step_rules(&step, &required, &optional);
  CHECK(required == 0 && optional == 0, "harness: the unbroken step breaks a rule (0x%x 0x%x)",
        required, optional);
  if (breakage && break_step(&step, breakage, sc)) {
    fz_step_rules(&step, &required, &optional);
    if (!required) breakage = 0, fill_step(&step, sc, in, o); /* not an error for this step */
  } else {
    breakage = 0;
  }
  applied_breakage = breakage;
  st = attnmeta_build_step(ctx, &step, NULL);
  inputs_check(in, sc);
  for (i = 0; i < O_COUNT; ++i)
    CHECK(fz_buf_guards_intact(&o->b[i]), "%s: a guard zone was written (status %d)",
          out_names[i], (int)st);
  CHECK(fz_message_ok(attnmeta_last_error(ctx), 512), "last error is not a terminated string");
  if (breakage) {
    CHECK(st != ATTNMETA_OK && ((1u << st) & (required | optional)),
          "broken host argument (kind %d): status %d (%s), allowed 0x%x", breakage, (int)st,
          attnmeta_status_string(st), required | optional);
    CHECK(attnmeta_last_error(ctx)[0] != '\0', "a failed call left no message");
    for (i = 0; i < O_COUNT; ++i) {
      if (i == O_ERR && (sc->want >> O_ERR) & 1) {
        CHECK(*(int32_t *)o->b[i].data == sc->err_init && fz_buf_guards_intact(&o->b[i]),
              "error_word written by a call that failed (status %d)", (int)st);
      } else {
        CHECK(fz_buf_untouched(&o->b[i]), "%s written by a call that failed (status %d)",
              out_names[i], (int)st);
      }
    }
    return st;
  }
  CHECK(st == ATTNMETA_OK, "valid step refused: %s (%s)", attnmeta_status_string(st),
        attnmeta_last_error(ctx));
  CHECK(attnmeta_last_error(ctx)[0] == '\0', "a successful call left a message: %s",
        attnmeta_last_error(ctx));
  return st;
}

/* ---- checks ---- */

NO_COVERAGE static int monotone(const scenario *sc) {
  int32_t r;
  for (r = 0; r < sc->R; ++r)
    if (sc->qsl[r + 1] < sc->qsl[r]) return 0;
  return 1;
}

#define W32(o, i) ((const int32_t *)(o)->b[i].data)
#define W64(o, i) ((const int64_t *)(o)->b[i].data)
#define WANTS(i) ((sc->want >> (i)) & 1)
#define WANTS_OF(sc, i) (((sc)->want >> (i)) & 1)

/* block_table_out: gap columns (and every entry when cols == 0) untouched. */
NO_COVERAGE static void check_table_gaps(const scenario *sc, const outputs *o) {
  const int32_t *bt = W32(o, O_BT);
  int64_t t, c;
  if (!WANTS(O_BT)) return;
  for (t = 0; t < sc->T; ++t)
    for (c = sc->cols; c < sc->out_stride; ++c)
      CHECK(bt[t * sc->out_stride + c] == FZ_POISON32,
            "block_table_out[%lld][%lld] (past cols = %d) was written", (long long)t,
            (long long)c, sc->cols);
}

static int32_t expected_flags(const scenario *sc, const amr_output *ref, int with_slots) {
  const int reads_seq = WANTS(O_SEQ) || WANTS(O_GSEQ) || WANTS(O_POS) || WANTS(O_SLOT);
  int32_t f = ref->request_flags;
  if (!reads_seq) f &= ~FZ_SEQ_FLAGS;
  if (with_slots && WANTS(O_SLOT)) f |= ref->slot_flags;
  return f;
}

/* A product of one value per token, request or slot, and its reference
 * (int32 or int64 values). */
typedef struct flat_ref {
  int out;
  const int32_t *r32;
  const int64_t *r64;
  int64_t n;
} flat_ref;

/* Exact agreement of every wanted product (query_start_loc non-decreasing). */
NO_COVERAGE static void check_exact(const scenario *sc, const outputs *o, const amr_output *ref) {
  const flat_ref flat[] = {
      {O_T2R, ref->token_to_req, NULL, sc->T},     {O_SEQ, ref->seq_lens_out, NULL, sc->C},
      {O_GSEQ, ref->global_seq_lens, NULL, sc->T}, {O_DEC, ref->decode_lens, NULL, sc->T},
      {O_RIDX, ref->req_indices, NULL, sc->T},     {O_PRL, ref->per_req_lens, NULL, sc->R},
      {O_POS, NULL, ref->positions, sc->T},        {O_SLOT, NULL, ref->slots, sc->C}};
  size_t k;
  int64_t t, c;
  for (k = 0; k < sizeof flat / sizeof flat[0]; ++k) {
    const flat_ref *f = &flat[k];
    if (!WANTS(f->out)) continue;
    for (t = 0; t < f->n; ++t) {
      const int64_t got = f->r64 ? W64(o, f->out)[t] : W32(o, f->out)[t];
      const int64_t want = f->r64 ? f->r64[t] : f->r32[t];
      CHECK(got == want, "%s[%lld] = %lld, reference %lld", out_names[f->out], (long long)t,
            (long long)got, (long long)want);
    }
  }
  if (WANTS(O_BT))
    for (t = 0; t < sc->T; ++t)
      for (c = 0; c < sc->cols; ++c)
        CHECK(W32(o, O_BT)[t * sc->out_stride + c] == ref->block_table_out[t * sc->cols + c],
              "block_table_out[%lld][%lld] = %d, reference %d", (long long)t, (long long)c,
              W32(o, O_BT)[t * sc->out_stride + c], ref->block_table_out[t * sc->cols + c]);
  if (WANTS(O_ERR)) {
    const int32_t want = sc->err_init | expected_flags(sc, ref, 1);
    CHECK(*W32(o, O_ERR) == want, "error_word = 0x%x, reference 0x%x", (unsigned)*W32(o, O_ERR),
          (unsigned)want);
  }
}

/* Hostile query_start_loc: what the contract defines whatever the data, and
 * ranges and consistency for the rest. */
NO_COVERAGE static void check_defined(const scenario *sc, const outputs *o, const amr_output *ref) {
  const int64_t total = sc->qsl[sc->R];
  const int64_t actual = sc->R > 0 ? clamp64(total, 0, sc->T) : 0;
  const int64_t mapped = min64(sc->num_mapped < 0 ? total : sc->num_mapped, sc->T);
  int64_t t, c;
  for (t = 0; t < sc->T; ++t) {
    const int valid = t < actual;
    if (WANTS(O_T2R)) {
      const int32_t v = W32(o, O_T2R)[t];
      if (t >= mapped || sc->R == 0)
        CHECK(v == 0, "token_to_req[%lld] = %d past num_mapped", (long long)t, v);
      else
        CHECK(v >= 0 && v < sc->R, "token_to_req[%lld] = %d outside [0, R)", (long long)t, v);
    }
    if (WANTS(O_GSEQ))
      CHECK(valid ? W32(o, O_GSEQ)[t] >= 0 : W32(o, O_GSEQ)[t] == 0,
            "global_seq_lens_out[%lld] = %d", (long long)t, W32(o, O_GSEQ)[t]);
    if (WANTS(O_SEQ))
      CHECK(valid ? W32(o, O_SEQ)[t] >= 0 : W32(o, O_SEQ)[t] == 0, "seq_lens_out[%lld] = %d",
            (long long)t, W32(o, O_SEQ)[t]);
    if (WANTS(O_DEC)) CHECK(W32(o, O_DEC)[t] == 1, "decode_lens_out[%lld] != 1", (long long)t);
    if (WANTS(O_RIDX)) {
      const int32_t v = W32(o, O_RIDX)[t];
      if (valid)
        CHECK(v >= 0 && v < sc->R, "req_indices_out[%lld] = %d outside [0, R)", (long long)t, v);
      else
        CHECK(v == ref->req_indices[t], "req_indices_out[%lld] = %d, reference %d", (long long)t,
              v, ref->req_indices[t]);
    }
    if (WANTS(O_BT)) {
      const int32_t *row = W32(o, O_BT) + t * sc->out_stride;
      if (!valid) {
        for (c = 0; c < sc->cols; ++c)
          CHECK(row[c] == 0, "block_table_out[%lld][%lld] = %d for a padding token", (long long)t,
                (long long)c, row[c]);
      } else if (WANTS(O_RIDX) && sc->cols > 0) { /* the row of the request it names */
        const int32_t *src = sc->table + (int64_t)W32(o, O_RIDX)[t] * sc->in_stride;
        CHECK(memcmp(row, src, (size_t)sc->cols * 4) == 0,
              "block_table_out row %lld is not the row of request %d", (long long)t,
              W32(o, O_RIDX)[t]);
      }
    }
    if (WANTS(O_POS))
      CHECK(valid || W64(o, O_POS)[t] == 0, "positions[%lld] = %lld for a padding token",
            (long long)t, (long long)W64(o, O_POS)[t]);
    if (WANTS(O_POS) && WANTS(O_GSEQ) && valid)
      CHECK(W32(o, O_GSEQ)[t] == clamp64(W64(o, O_POS)[t] + 1, 0, INT32_MAX),
            "global_seq_lens_out[%lld] = %d but positions = %lld", (long long)t,
            W32(o, O_GSEQ)[t], (long long)W64(o, O_POS)[t]);
    if (WANTS(O_SLOT))
      CHECK(valid ? W64(o, O_SLOT)[t] >= -1 : W64(o, O_SLOT)[t] == -1,
            "slot_mapping[%lld] = %lld", (long long)t, (long long)W64(o, O_SLOT)[t]);
  }
  for (t = sc->T; t < sc->C; ++t) {
    if (WANTS(O_SEQ)) CHECK(W32(o, O_SEQ)[t] == 0, "seq_lens_out[%lld] (tail) != 0", (long long)t);
    if (WANTS(O_SLOT))
      CHECK(W64(o, O_SLOT)[t] == -1, "slot_mapping[%lld] (tail) != -1", (long long)t);
  }
  if (WANTS(O_PRL))
    for (t = 0; t < sc->R; ++t)
      CHECK(W32(o, O_PRL)[t] == ref->per_req_lens[t], "per_req_lens_out[%lld] = %d, reference %d",
            (long long)t, W32(o, O_PRL)[t], ref->per_req_lens[t]);
  if (WANTS(O_ERR)) {
    const int32_t got = *W32(o, O_ERR);
    const int32_t want = sc->err_init | expected_flags(sc, ref, 0);
    const int32_t loose = WANTS(O_SLOT) ? FZ_SLOT_FLAGS : 0; /* slot flags follow req(t) */
    CHECK((got & ~loose) == (want & ~loose) && (got & sc->err_init) == sc->err_init,
          "error_word = 0x%x, reference 0x%x (slot flags free: 0x%x)", (unsigned)got,
          (unsigned)want, (unsigned)loose);
  }
}

NO_COVERAGE static void check_same(const scenario *sc, const outputs *a, const outputs *b,
                                   const char *what) {
  int i;
  for (i = 0; i < O_COUNT; ++i)
    CHECK(memcmp(a->b[i].base, b->b[i].base, a->b[i].total) == 0,
          "%s differs between the CPU backend (config {%d,%d,%d,%d,%d}) and %s (config "
          "{%d,%d,%d,%d,%d}; GPU config {%d,%d,%d,%d,%d} on %d processors: %lld lanes x %lld "
          "groups x %lld blocks; reverse %d, forced full kernel %d, forced lean kernel %d, "
          "speculation %d, guess %s)",
          out_names[i], sc->cfg[0].block, sc->cfg[0].grid, sc->cfg[0].stage, sc->cfg[0].vector,
          sc->cfg[0].lanes, what, sc->cfg[1].block, sc->cfg[1].grid, sc->cfg[1].stage,
          sc->cfg[1].vector, sc->cfg[1].lanes, sc->gpu.cfg.block, sc->gpu.cfg.grid,
          sc->gpu.cfg.stage, sc->gpu.cfg.vector, sc->gpu.cfg.lanes, sc->gpu.processors,
          (long long)last_shape.lanes, (long long)last_shape.groups, (long long)last_shape.grid,
          sc->gpu.reverse, sc->gpu.force_full,
          sc->gpu.force_lean, sc->gpu.speculate, sc->gpu.guess_random ? "random" : "step.c's");
}

/* Thread runs an emulated launch may take (grid x block): a larger launch
 * would make the execution slow; it is counted and not emulated. */
#define MAX_EMULATED_THREADS (1 << 15)

/* The kernel body under an emulated GPU launch planned by the library's own
 * planner (am_step_plan.h, with a GPU's block size and multiprocessors):
 * grid x (groups x lanes) threads, each run to completion in turn (in
 * reverse order when asked). 0 when the launch is too large to emulate. */
NO_COVERAGE static int run_gpu_shape(const scenario *sc, const inputs *in, outputs *o) {
  attnmeta_step s;
  am_step_params p;
  am_launch_shape shape;
  int32_t *stage;
  int64_t words, i, block, k, threads;
  fill_step(&s, sc, in, o);
  p = am_params_of(&s);
  shape = am_plan_launch(&sc->gpu.cfg, 0, sc->gpu.processors, &p);
  threads = shape.lanes * shape.groups;
  /* a GPU launches at most 1024 threads a block (unless forced larger) */
  CHECK(shape.lanes >= 1 && shape.groups >= 1 && shape.grid >= 1 &&
            (threads <= 1024 || sc->gpu.cfg.block > 1024) &&
            shape.grid * threads <= ((int64_t)1 << 31),
        "planner: %lld lanes x %lld groups x %lld blocks", (long long)shape.lanes,
        (long long)shape.groups, (long long)shape.grid);
  last_shape = shape;
  if (shape.grid * threads > MAX_EMULATED_THREADS) return 0;
  /* the planner's speculation, on either guess or none: any bits where a
   * first batch exists give the same bytes */
  if (p.speculate) p.speculate = sc->gpu.speculate;
  /* for hostile boundaries the guess is part of which request a token gets:
   * only monotone ones may take any */
  if (monotone(sc) && sc->gpu.guess_random) {
    p.guess_mul = sc->gpu.guess_mul;
    p.guess_shift = sc->gpu.guess_shift;
  }
  /* the planner's variant, or one with fewer facts: every variant whose
   * facts hold must give the same bytes */
  if (sc->gpu.scalar_tail) p.tail_vec_begin = p.tail_vec_end = p.capacity;
  if (sc->gpu.force_full) p.variant = AM_VARIANT_FULL;
  else if (sc->gpu.force_lean) p.variant &= ~AM_VARIANT_INDEXER; /* the lean body, same rows */
  if (shape.lanes == 1 && sc->gpu.one_lane_variant) p.variant |= AM_VARIANT_ONE_LANE;
  words = am_step_stage_words(&p);
  CHECK(shape.shared_bytes == words * 4, "planner: %lld shared bytes for %lld words",
        (long long)shape.shared_bytes, (long long)words);
  stage = (int32_t *)xcalloc((size_t)words, sizeof(int32_t));
  if (p.stage) { /* what every block holds after its staging loop and barrier */
    for (i = 0; i <= sc->R; ++i) stage[i] = sc->qsl[i];
    if (p.seq_lens)
      for (i = 0; i < sc->R; ++i) stage[sc->R + 1 + i] = sc->seq_lens[i];
  }
  for (block = 0; block < shape.grid; ++block) {
    for (k = 0; k < threads; ++k) {
      const int64_t thread = sc->gpu.reverse ? threads - 1 - k : k;
      am_step_body(&p,
                   am_make_thread((uint32_t)block, (uint32_t)shape.grid,
                                  (uint32_t)(thread % shape.lanes), (uint32_t)shape.lanes,
                                  (uint32_t)(thread / shape.lanes), (uint32_t)shape.groups),
                   stage, p.variant);
    }
  }
  free(stage);
  return 1;
}

/* The HIP backend on HIP-CPU (fuzz_hip_cpu.c): the decoded GPU shape made
 * wider, launched by the library itself. */
static void run_hip_cpu(const scenario *sc, const inputs *in, outputs *o, char *what,
                        size_t what_size) {
  attnmeta_step step;
  const attnmeta_launch_config c = fz_hip_cpu_config(sc->hip.lanes, sc->hip.groups, sc->hip.grid,
                                                     sc->gpu.cfg.stage > 0, sc->gpu.cfg.vector != 0);
  fill_step(&step, sc, in, o);
  fz_hip_cpu_build_step(&step, &c, what, what_size);
}

static void check_wrapper(const scenario *sc, const inputs *in, const amr_output *ref, int exact) {
  fz_buf out;
  attnmeta_status st;
  int64_t t;
  fz_buf_alloc(&out, 4, sc->T, 0);
  st = attnmeta_token_to_req(ctx, in->qsl.data, sc->R, sc->num_mapped, sc->T, (int32_t *)out.data,
                             NULL);
  CHECK(st == ATTNMETA_OK, "attnmeta_token_to_req refused: %s", attnmeta_last_error(ctx));
  CHECK(fz_buf_guards_intact(&out), "attnmeta_token_to_req wrote past its output");
  for (t = 0; t < sc->T; ++t) {
    const int32_t v = ((const int32_t *)out.data)[t];
    if (exact)
      CHECK(v == ref->token_to_req[t], "attnmeta_token_to_req[%lld] = %d, reference %d",
            (long long)t, v, ref->token_to_req[t]);
    else
      CHECK(v >= 0 && (v < sc->R || v == 0), "attnmeta_token_to_req[%lld] = %d", (long long)t, v);
  }
  fz_buf_free(&out);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  const char *env = getenv("ATTNMETA_FUZZ_STATS");
  (void)argc;
  (void)argv;
  if (attnmeta_open(&ctx, ATTNMETA_BACKEND_CPU, 0) != ATTNMETA_OK)
    fz_fail("cannot open the CPU backend: %s", attnmeta_open_error());
  if (env && env[0] == '1') atexit(print_stats);
  return 0;
}

/* attnmeta_build_step against the reference, under two CPU launch
 * configurations and an emulated GPU launch. */
static void op_build_step(fz_reader *rd) {
  scenario sc;
  inputs in;
  outputs oa, ob;
  amr_input ri;
  amr_output *ref;

  decode(rd, &sc);
  current = &sc;
  inputs_alloc(&in, &sc);
  outputs_alloc(&oa, &sc);

  stats.runs++;
  if (run(&sc, 0, &in, &oa, sc.breakage) != ATTNMETA_OK) { /* a broken host argument */
    stats.broken[applied_breakage]++;
    outputs_free(&oa);
    inputs_free(&in);
    scenario_free(&sc);
    return;
  }

  amr_input_requests(&ri, sc.qsl, sc.R, sc.T, sc.C, sc.seq_lens);
  amr_input_table(&ri, sc.cols > 0 ? sc.table : NULL, sc.cols, sc.in_stride, sc.block_size);
  amr_input_dcp(&ri, sc.W, sc.k, sc.I);
  ri.num_mapped = sc.num_mapped;
  ref = amr_alloc(&ri);
  amr_build(&ri, ref);
  {
    const int32_t f = ref->request_flags | ref->slot_flags;
    int b;
    if (ref->well_formed) stats.well_formed++;
    else if (monotone(&sc)) stats.monotone_bad++;
    else stats.non_monotone++;
    if (!f) stats.clean++;
    for (b = 0; b < 8; ++b) stats.flag[b] += (f >> b) & 1;
    if (ref->well_formed && sc.exact) stats.exact++;
  }

  check_table_gaps(&sc, &oa);
  if (monotone(&sc))
    check_exact(&sc, &oa, ref);
  else
    check_defined(&sc, &oa, ref);

  outputs_alloc(&ob, &sc);
  run(&sc, 1, &in, &ob, 0);
  check_same(&sc, &oa, &ob, "the second launch config");
  outputs_free(&ob);

  outputs_alloc(&ob, &sc);
  if (run_gpu_shape(&sc, &in, &ob)) {
    inputs_check(&in, &sc);
    check_same(&sc, &oa, &ob, "the emulated GPU shape");
    stats.gpu_shapes++;
    if (last_shape.lanes > 32) stats.gpu_wide++;
    if (last_shape.grid > 64) stats.gpu_large_grid++;
  } else {
    stats.gpu_too_large++;
  }
  outputs_free(&ob);

  if (fz_hip_cpu_enabled()) {
    char what[256];
    outputs_alloc(&ob, &sc);
    run_hip_cpu(&sc, &in, &ob, what, sizeof what);
    inputs_check(&in, &sc);
    check_same(&sc, &oa, &ob, what);
    outputs_free(&ob);
  }

  if (sc.wrapper) check_wrapper(&sc, &in, ref, monotone(&sc));

  amr_free(ref);
  outputs_free(&oa);
  inputs_free(&in);
  scenario_free(&sc);
}

/* ---- the operations ----
 * One row per operation the harness fuzzes: its decoding, its calls and
 * its checks behind one function of the input. An input whose first byte
 * is below 0xF0 is the first operation (the committed corpus was written
 * for it); a first byte b >= 0xF0 is consumed and picks row
 * 1 + (b - 0xF0) mod (rows - 1): 0xF0 the second row, 0xF1 the third, ...
 * The committed seeds of the other rows start with the byte of their row
 * (0xF0 + row - 1); a new row goes at the end, and the seeds whose first
 * byte then picks another row are given their row's byte. The rest of the
 * input is the operation's own: its reader hashes only those bytes. */
typedef struct fz_operation {
  const char *name;
  void (*run)(fz_reader *rd);
} fz_operation;

static void op_build_step_large(fz_reader *rd) { fz_op_step_large(rd, ctx); }
static void op_dsv4(fz_reader *rd) { fz_op_dsv4(rd, ctx); }
static void op_topk(fz_reader *rd) { fz_op_topk(rd, ctx); }
static void op_pool(fz_reader *rd) { fz_op_pool(rd, ctx); }

static const fz_operation operations[] = {
    {"build_step", op_build_step},            /* first byte < 0xF0 */
    {"build_step_large", op_build_step_large}, /* 0xF0 */
    {"build_step_dsv4", op_dsv4},              /* 0xF1 */
    {"convert_topk", op_topk},                 /* 0xF2 */
    {"build_pool_indices", op_pool},           /* 0xF3 */
};
#define NUM_OPERATIONS (sizeof operations / sizeof operations[0])

_Static_assert(NUM_OPERATIONS <= sizeof stats.op / sizeof stats.op[0], "a counter per operation");

static void print_operation_counts(void) {
  size_t i;
  fprintf(stderr, "  by operation:");
  for (i = 0; i < NUM_OPERATIONS; ++i)
    fprintf(stderr, "%s %s %ld", i ? "," : "", operations[i].name, stats.op[i]);
  fprintf(stderr, "\n");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_reader rd;
  size_t op = 0;
  if (!ctx) LLVMFuzzerInitialize(NULL, NULL);
  if (size > 0 && data[0] >= 0xF0 && NUM_OPERATIONS > 1) {
    op = 1 + (size_t)(data[0] - 0xF0) % (NUM_OPERATIONS - 1);
    ++data;
    --size;
  }
  fz_reader_init(&rd, data, size);
  stats.op[op]++;
  operations[op].run(&rd);
  return 0;
}
