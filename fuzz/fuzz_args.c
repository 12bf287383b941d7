// SPDX-License-Identifier: Apache-2.0
/*
 * fuzz_args: host argument validation of the whole public API.
 * An input whose first byte is 0xF0 to 0xF7 is an attnmeta_convert_topk
 * call, 0xF8 or above an attnmeta_build_pool_indices call; the first byte
 * of the others picks the entry point (modulo 16).
 *
 * The input bytes pick an entry point and arguments drawn towards the edges:
 * negative, zero and INT32-limit sizes, strides near the INT64 limits and
 * at the byte-offset overflow boundaries, NULL, misaligned and wrong-sized
 * pointers, unknown backends and devices, odd launch configurations.
 *
 * The harness never allocates from the sizes it passes: every buffer is a
 * fixed-size guarded buffer (BUF elements). A call that breaks a rule (the
 * independent model fz_step_rules in fuzz_util.c) must return a status the
 * model allows, leave a message, and write nothing; a call that breaks no
 * rule runs only when its sizes fit the fixed buffers (it must then
 * succeed and stay inside them), and is skipped otherwise: it would be a
 * caller passing buffers smaller than it says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "fuzz_util.h"
#include "../tests/null_context.h"
#include "../tests/op_inputs.h"

#define BUF 4096 /* elements of every buffer */

/* Outputs: the part-1 ones (int32 up to B_ERR, then int64), then the DSV4
 * ones: each group's slots (int64) and lengths, SWA's and C128A's rows and
 * lengths. */
enum {
  B_T2R, B_SEQ, B_GSEQ, B_BT, B_DEC, B_RIDX, B_PRL, B_ERR, B_POS, B_SLOT,
  B_GROUP_SLOT, /* + g */
  B_GROUP_LENS = B_GROUP_SLOT + ATTNMETA_MAX_COMPRESSED_GROUPS, /* + g */
  B_SWA_ROWS = B_GROUP_LENS + ATTNMETA_MAX_COMPRESSED_GROUPS,
  B_SWA_LENS, B_C128A_ROWS, B_C128A_LENS, B_INDEXER, B_C128A_PREFILL, B_COUNT
};

static int out_is64(int which) {
  return which == B_POS || which == B_SLOT ||
         (which >= B_GROUP_SLOT && which < B_GROUP_SLOT + ATTNMETA_MAX_COMPRESSED_GROUPS);
}

static attnmeta_context *ctx;
static fz_buf outs[B_COUNT];
static fz_in in_qsl, in_seq, in_table;
static fz_buf text_buf;

#define BIT(s) (1u << (unsigned)(s))

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* What the inputs were, for docs/reliability.md: printed at exit when the
 * environment has ATTNMETA_FUZZ_STATS=1. */
static struct {
  long runs, op[10], refused, accepted_ran, skipped, status[16], aliased, small_struct, dsv4;
} stats;

static void print_stats(void) {
  static const char *const ops[10] = {"build_step", "token_to_req", "launch_config", "describe",
                                      "names",      "open",         "memory",        "null_context",
                                      "convert_topk", "build_pool_indices"};
  int i;
  fprintf(stderr,
          "fuzz_args inputs: %ld runs; step and token-map calls: %ld breaking a rule (all "
          "refused), %ld valid and run, %ld valid but larger than the buffers (skipped)\n  by entry "
          "point:",
          stats.runs, stats.refused, stats.accepted_ran, stats.skipped);
  for (i = 0; i < 10; ++i) fprintf(stderr, " %s:%ld", ops[i], stats.op[i]);
  fprintf(stderr, "\n  steps with an output placed on another buffer: %ld; steps in an exact-size "
          "struct smaller than the header's: %ld; steps with DSV4 fields set: %ld",
          stats.aliased, stats.small_struct, stats.dsv4);
  fprintf(stderr, "\n  statuses returned by refused calls:");
  for (i = 1; i < 16; ++i)
    if (stats.status[i]) fprintf(stderr, " %s:%ld", attnmeta_status_string((attnmeta_status)i), stats.status[i]);
  fprintf(stderr, "\n");
}

static void count_call(uint32_t required, int ran, attnmeta_status st) {
  if (!ran) stats.skipped++;
  else if (required) stats.refused++, stats.status[(unsigned)st & 15]++;
  else stats.accepted_ran++;
}

static void poison_outputs(void) {
  int i;
  for (i = 0; i < B_COUNT; ++i) memset(outs[i].base, FZ_POISON_BYTE, outs[i].total);
}

static void check_outputs_untouched(const char *what, attnmeta_status st) {
  int i;
  for (i = 0; i < B_COUNT; ++i)
    FZ_CHECK(fz_buf_untouched(&outs[i]), "%s: output %d written by a call that returned %d (%s)",
             what, i, (int)st, attnmeta_status_string(st));
}

static void check_guards(const char *what) {
  int i;
  for (i = 0; i < B_COUNT; ++i)
    FZ_CHECK(fz_buf_guards_intact(&outs[i]), "%s: guard zone of output %d written", what, i);
}

/* What call `what` is held to after it returned st: a status the rules
 * allow (one of required | optional when any is required, else OK or an
 * optional one), a terminated message exactly when it failed, no output
 * written when it failed and no guard zone written when it ran. `valid`
 * names a valid argument in the message ("for a valid step"). */
static void check_call(attnmeta_status st, const char *what, const char *valid, uint32_t required,
                       uint32_t optional) {
  FZ_CHECK(fz_message_ok(attnmeta_last_error(ctx), 512), "last error is not terminated");
  if (required)
    FZ_CHECK(st != ATTNMETA_OK && (BIT(st) & (required | optional)),
             "%s returned %d (%s), the rules allow 0x%x (required 0x%x): %s", what, (int)st,
             attnmeta_status_string(st), required | optional, required, attnmeta_last_error(ctx));
  else
    FZ_CHECK(st == ATTNMETA_OK || (BIT(st) & optional), "%s returned %d (%s) for a valid %s: %s",
             what, (int)st, attnmeta_status_string(st), valid, attnmeta_last_error(ctx));
  if (st != ATTNMETA_OK) {
    FZ_CHECK(attnmeta_last_error(ctx)[0] != '\0', "a failed call left no message");
    check_outputs_untouched(what, st);
  } else {
    FZ_CHECK(attnmeta_last_error(ctx)[0] == '\0', "a successful call left a message");
    check_guards(what);
  }
}

/* A pointer into `base` for an argument: NULL, the buffer, or off alignment. */
static void *pick_ptr(fz_reader *rd, void *base, int elem) {
  const uint8_t b = fz_u8(rd);
  if (b < 208) return base;
  if (b < 232) return NULL;
  if (elem == 8 && (b & 1)) return (char *)base + 4;
  return (char *)base + 1 + (b % 3);
}

/* Output pointers are often absent (not wanted) and rarely off alignment. */
static void *pick_out(fz_reader *rd, int which) {
  const uint8_t b = fz_u8(rd);
  const int elem = out_is64(which) ? 8 : 4;
  if (b < 112) return NULL;
  if (b < 244) return outs[which].data;
  if (elem == 8 && (b & 1)) return (char *)outs[which].data + 4;
  return (char *)outs[which].data + 1 + (b % 3);
}

/* A size: small and inside the buffers, or anything at the edges. */
static int32_t pick_size(fz_reader *rd, int32_t small_max) {
  return fz_chance(rd, 1, 2) ? (int32_t)fz_range(rd, 0, small_max) : fz_edge32(rd);
}

static int64_t pick_stride(fz_reader *rd, int32_t cols, int32_t rows) {
  const uint8_t b = fz_u8(rd);
  const int64_t r = rows > 1 ? rows : 2;
  switch (b % 12) {
    case 0: case 1: case 2: return cols;
    case 3: return (int64_t)cols + fz_range(rd, 1, 8);
    case 4: return (int64_t)cols - fz_range(rd, 1, 2);
    case 5: return INT64_MAX / 8 / r;          /* the library's limit */
    case 6: return INT64_MAX / 8 / r + 1;
    case 7: return INT64_MAX / 4 / (r - 1);    /* the true byte-offset limit */
    case 8: return INT64_MAX / 4 / (r - 1) + 1;
    default: return fz_edge64(rd);
  }
}

/* (rows - 1) * stride + cols elements fit BUF? */
static int table_fits(int64_t rows, int64_t stride, int64_t cols) {
  if (rows <= 0 || cols <= 0) return 1;
  return (__int128)(rows - 1) * stride + cols <= BUF;
}

/* Places one output of the step on another buffer the step names (an input
 * or another output), a few elements off: an overlap the library must
 * refuse, unless the bytes happen not to meet. 1 when done. */
static int alias_one(fz_reader *rd, attnmeta_step *s) {
  attnmeta_compressed_group *grp = s->compressed_groups;
  int32_t **out32[] = {&s->token_to_req, &s->seq_lens_out, &s->global_seq_lens_out,
                       &s->block_table_out, &s->decode_lens_out, &s->req_indices_out,
                       &s->per_req_lens_out, &s->error_word, &grp[0].seq_lens_out,
                       &grp[1].seq_lens_out, &grp[2].seq_lens_out, &grp[3].seq_lens_out,
                       &s->swa_indices, &s->swa_lens, &s->c128a_rows, &s->c128a_lens,
                       &s->indexer_lens_out, &s->c128a_prefill_rows};
  int64_t **out64[] = {&s->positions, &s->slot_mapping, &grp[0].slot_mapping,
                       &grp[1].slot_mapping, &grp[2].slot_mapping, &grp[3].slot_mapping};
  const void *on[] = {s->query_start_loc, s->seq_lens, s->block_table, s->token_to_req,
                      s->seq_lens_out, s->global_seq_lens_out, s->block_table_out,
                      s->decode_lens_out, s->req_indices_out, s->per_req_lens_out,
                      s->error_word, s->positions, s->slot_mapping, grp[0].block_table,
                      grp[0].slot_mapping, grp[0].seq_lens_out, grp[1].seq_lens_out,
                      grp[3].slot_mapping, s->swa_block_table, s->swa_indices, s->swa_lens,
                      s->c128a_block_table, s->c128a_rows, s->c128a_lens, s->swa_token_slots,
                      s->indexer_lens_out, s->c128a_prefill_rows};
  const int n32 = (int)(sizeof out32 / sizeof out32[0]), n64 = (int)(sizeof out64 / sizeof out64[0]);
  const int which = (int)fz_range(rd, 0, n32 + n64 - 1);
  const char *target = (const char *)on[fz_range(rd, 0, (int64_t)(sizeof on / sizeof on[0]) - 1)];
  const char *at;
  if (!target) return 0;
  at = target + 4 * fz_range(rd, -3, 3);
  if (which < n32) {
    if (!*out32[which]) return 0; /* a product not wanted stays so */
    *out32[which] = (int32_t *)(uintptr_t)at;
  } else {
    if (!*out64[which - n32]) return 0;
    *out64[which - n32] = (int64_t *)(uintptr_t)((uintptr_t)at & ~(uintptr_t)7);
  }
  return 1;
}

/* The members 0.3.0 added, drawn after the others (the committed seeds keep
 * their meaning): the indexer's lengths, the SWA rows' token slots, C128A's
 * mixed mode (its decode-token count and second table), each now and then
 * with an edge value or set where its product is not built. */
static void pick_dsv4_0_3(fz_reader *rd, attnmeta_step *s) {
  if (fz_chance(rd, 1, 3)) {
    s->indexer_lens_out = (int32_t *)pick_out(rd, B_INDEXER);
    s->indexer_ratio = fz_chance(rd, 3, 4) ? (int32_t)fz_range(rd, 1, 128) : fz_edge32(rd);
    s->indexer_mode = fz_chance(rd, 7, 8) ? (int32_t)fz_range(rd, 0, 1) : fz_edge32(rd);
  }
  if (fz_chance(rd, 1, 3)) s->swa_token_slots = (const int64_t *)pick_ptr(rd, in_qsl.data, 8);
  if (fz_chance(rd, 1, 3)) {
    if (fz_chance(rd, 3, 4)) s->c128a_mode = ATTNMETA_C128A_MIXED;
    s->c128a_prefill_rows = (int32_t *)pick_out(rd, B_C128A_PREFILL);
    s->c128a_prefill_rows_stride = pick_stride(rd, s->c128a_width, s->num_tokens);
    switch (fz_u8(rd) % 4) {
      case 0: s->c128a_num_decode_tokens = 0; break;
      case 1: s->c128a_num_decode_tokens = s->num_tokens; break;
      case 2: s->c128a_num_decode_tokens = (int32_t)fz_range(rd, 0, s->num_tokens > 0 ? s->num_tokens : 0); break;
      default: s->c128a_num_decode_tokens = fz_edge32(rd); break;
    }
  }
}

/* The DeepSeek-V3.2/V4 fields, every one of them: mostly sound values,
 * sometimes edges; each product present about a third of the time. */
static void pick_dsv4(fz_reader *rd, attnmeta_step *s) {
  int g;
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g) {
    attnmeta_compressed_group *grp = &s->compressed_groups[g];
    if (!fz_chance(rd, 1, 3)) continue;
    grp->block_table = (const int32_t *)pick_ptr(rd, in_table.data, 4);
    grp->block_table_cols = pick_size(rd, 16);
    grp->block_table_stride = pick_stride(rd, grp->block_table_cols, s->num_reqs);
    grp->ratio = fz_chance(rd, 3, 4) ? (int32_t)fz_range(rd, 1, 128) : fz_edge32(rd);
    grp->block_size = fz_chance(rd, 3, 4) ? (int32_t)fz_range(rd, 1, 64) : fz_edge32(rd);
    grp->slot_mapping = (int64_t *)pick_out(rd, B_GROUP_SLOT + g);
    grp->seq_lens_out = (int32_t *)pick_out(rd, B_GROUP_LENS + g);
    grp->reserved = fz_chance(rd, 1, 8) ? fz_edge32(rd) : 0;
  }
  if (fz_chance(rd, 1, 3)) {
    s->swa_block_table = (const int32_t *)pick_ptr(rd, in_table.data, 4);
    s->swa_block_table_cols = pick_size(rd, 16);
    s->swa_block_table_stride = pick_stride(rd, s->swa_block_table_cols, s->num_reqs);
    s->swa_block_size = fz_chance(rd, 3, 4) ? (int32_t)fz_range(rd, 1, 64) : fz_edge32(rd);
    s->swa_window = fz_chance(rd, 3, 4) ? (int32_t)fz_range(rd, 1, 16) : fz_edge32(rd);
    s->swa_width = fz_chance(rd, 3, 4)
                       ? (int32_t)clamp64((int64_t)s->swa_window + fz_range(rd, 0, 4), INT32_MIN, INT32_MAX)
                       : fz_edge32(rd);
    s->swa_mode = fz_chance(rd, 7, 8) ? (int32_t)fz_range(rd, 0, 1) : fz_edge32(rd);
    s->swa_reserved = fz_chance(rd, 1, 8) ? fz_edge32(rd) : 0;
    s->swa_indices = (int32_t *)pick_out(rd, B_SWA_ROWS);
    s->swa_indices_stride = pick_stride(rd, s->swa_width, s->num_tokens);
    s->swa_lens = (int32_t *)pick_out(rd, B_SWA_LENS);
  }
  if (fz_chance(rd, 1, 3)) {
    s->c128a_block_table = (const int32_t *)pick_ptr(rd, in_table.data, 4);
    s->c128a_block_table_cols = pick_size(rd, 16);
    s->c128a_block_table_stride = pick_stride(rd, s->c128a_block_table_cols, s->num_reqs);
    s->c128a_ratio = fz_chance(rd, 3, 4) ? (int32_t)fz_range(rd, 1, 128) : fz_edge32(rd);
    s->c128a_block_size = fz_chance(rd, 3, 4) ? (int32_t)fz_range(rd, 1, 8) : fz_edge32(rd);
    s->c128a_width = fz_chance(rd, 3, 4) ? (int32_t)fz_range(rd, 0, 16) : fz_edge32(rd);
    s->c128a_mode = fz_chance(rd, 7, 8) ? (int32_t)fz_range(rd, 0, 1) : fz_edge32(rd);
    s->c128a_reserved = fz_chance(rd, 1, 8) ? fz_edge32(rd) : 0;
    s->c128a_rows = (int32_t *)pick_out(rd, B_C128A_ROWS);
    s->c128a_rows_stride = pick_stride(rd, s->c128a_width, s->num_tokens);
    s->c128a_lens = (int32_t *)pick_out(rd, B_C128A_LENS);
  }
  if (fz_chance(rd, 1, 16)) s->launch_flags = (uint32_t)fz_edge32(rd);
  else if (fz_chance(rd, 1, 4)) s->launch_flags = ATTNMETA_LAUNCH_EARLY_START;
  pick_dsv4_0_3(rd, s);
}

/* Section 5b's members (PCP's logical slots), drawn after every other
 * member of the step (the committed seeds keep their meaning): the two
 * int64 arrays (NULL, misaligned), the logical block size (a whole
 * multiple of a group's ratio with that group's block size made to fit,
 * or anything at the edges), now and then DCP set back to one rank, and
 * sometimes a group's slots placed on one of the arrays. 1 when so
 * placed. */
static int pick_pcp(fz_reader *rd, attnmeta_step *s) {
  attnmeta_compressed_group *grp = &s->compressed_groups[fz_range(rd, 0, 3)];
  s->pcp_logical_slots = (const int64_t *)pick_ptr(rd, in_qsl.data, 8);
  s->pcp_positions = fz_chance(rd, 7, 8) ? (const int64_t *)pick_ptr(rd, in_seq.data, 8) : NULL;
  switch (fz_u8(rd) % 4) {
    case 0: case 1: /* the rule holds for the group drawn, and its block size with it */
      if (grp->ratio >= 1 && grp->ratio <= 128) {
        const int32_t bs = (int32_t)fz_range(rd, 1, 64);
        s->pcp_logical_block_size = grp->ratio * bs;
        if (fz_chance(rd, 3, 4)) grp->block_size = bs;
        break;
      }
      /* fall through */
    case 2: s->pcp_logical_block_size = (int32_t)fz_range(rd, -1, 512); break;
    default: s->pcp_logical_block_size = fz_edge32(rd); break;
  }
  if (fz_chance(rd, 1, 2)) s->dcp_world_size = 1, s->dcp_rank = 0;
  if (grp->slot_mapping && fz_chance(rd, 1, 8)) {
    const char *on = (const char *)(fz_chance(rd, 1, 2) ? s->pcp_logical_slots : s->pcp_positions);
    if (!on) return 0;
    grp->slot_mapping = (int64_t *)(uintptr_t)((uintptr_t)(on + 8 * fz_range(rd, -2, 2)) &
                                               ~(uintptr_t)7);
    return 1;
  }
  return 0;
}

/* Every buffer the DSV4 products would touch fits the fixed buffers. */
static int dsv4_fits(const attnmeta_step *s) {
  int g;
  for (g = 0; g < ATTNMETA_MAX_COMPRESSED_GROUPS; ++g) {
    const attnmeta_compressed_group *grp = &s->compressed_groups[g];
    if (grp->slot_mapping &&
        !table_fits(s->num_reqs, grp->block_table_stride, grp->block_table_cols))
      return 0;
  }
  if (s->swa_indices && (!table_fits(s->num_reqs, s->swa_block_table_stride,
                                     s->swa_block_table_cols) ||
                         !table_fits(s->num_tokens, s->swa_indices_stride, s->swa_width)))
    return 0;
  if (s->c128a_rows &&
      (((s->c128a_mode == ATTNMETA_C128A_GLOBAL || s->c128a_mode == ATTNMETA_C128A_MIXED) &&
        !table_fits(s->num_reqs, s->c128a_block_table_stride, s->c128a_block_table_cols)) ||
       !table_fits(s->num_tokens, s->c128a_rows_stride, s->c128a_width)))
    return 0;
  if (s->c128a_prefill_rows &&
      !table_fits(s->num_tokens, s->c128a_prefill_rows_stride, s->c128a_width))
    return 0;
  /* the token slots are int64 over in_qsl's BUF + 1 int32, PCP's over
   * in_qsl and in_seq */
  if ((s->swa_indices || s->swa_lens) && s->swa_token_slots && 2 * (int64_t)s->num_tokens > BUF)
    return 0;
  if ((s->pcp_logical_slots || s->pcp_positions) && 2 * (int64_t)s->num_tokens > BUF) return 0;
  return 1;
}

static void fuzz_build_step(fz_reader *rd) {
  static const size_t sizes[] = {0, 1, sizeof(attnmeta_step) - 8, sizeof(attnmeta_step) - 1,
                                 sizeof(attnmeta_step) + 1, sizeof(attnmeta_step) + 8,
                                 (size_t)-1,
                                 FZ_STEP_SIZE_0_1, offsetof(attnmeta_step, compressed_groups) + 8,
                                 FZ_STEP_SIZE_0_2, offsetof(attnmeta_step, swa_token_slots)};
  attnmeta_step s;
  uint32_t required, optional;
  attnmeta_status st;
  int fits, aliased;
  void *caller = &s; /* the struct as passed: a smaller one in an exact-size allocation */
  attnmeta_step_init(&s);
  if (fz_chance(rd, 1, 16)) s.struct_size = sizes[fz_u8(rd) % 11];
  s.query_start_loc = (const int32_t *)pick_ptr(rd, in_qsl.data, 4);
  s.num_reqs = pick_size(rd, 64);
  s.num_tokens = pick_size(rd, 256);
  s.capacity = fz_chance(rd, 1, 2)
                   ? (int32_t)clamp64((int64_t)s.num_tokens + fz_range(rd, -1, 4), INT32_MIN, INT32_MAX)
                   : pick_size(rd, 300);
  s.seq_lens = (const int32_t *)pick_ptr(rd, in_seq.data, 4);
  s.block_table = (const int32_t *)pick_ptr(rd, in_table.data, 4);
  s.block_table_cols = pick_size(rd, 16);
  s.block_table_stride = pick_stride(rd, s.block_table_cols, s.num_reqs);
  s.block_table_out_stride = pick_stride(rd, s.block_table_cols, s.num_tokens);
  s.num_mapped = fz_chance(rd, 1, 2) ? -1 : fz_edge32(rd);
  s.block_size = fz_chance(rd, 1, 2) ? fz_edge32(rd) : (int32_t)fz_range(rd, 1, 64);
  s.dcp_world_size = fz_chance(rd, 1, 4) ? fz_edge32(rd) : (int32_t)fz_range(rd, 1, 4);
  switch (fz_u8(rd) % 4) {
    case 0: s.dcp_rank = 0; break;
    case 1: s.dcp_rank = (int32_t)fz_range(rd, 0, s.dcp_world_size > 0 ? s.dcp_world_size - 1 : 0); break;
    case 2: s.dcp_rank = s.dcp_world_size; break;
    default: s.dcp_rank = fz_edge32(rd); break;
  }
  s.dcp_interleave = fz_chance(rd, 1, 4) ? fz_edge32(rd) : (int32_t)fz_range(rd, 1, 4);
  s.token_to_req = (int32_t *)pick_out(rd, B_T2R);
  s.seq_lens_out = (int32_t *)pick_out(rd, B_SEQ);
  s.global_seq_lens_out = (int32_t *)pick_out(rd, B_GSEQ);
  s.block_table_out = (int32_t *)pick_out(rd, B_BT);
  s.decode_lens_out = (int32_t *)pick_out(rd, B_DEC);
  s.req_indices_out = (int32_t *)pick_out(rd, B_RIDX);
  s.per_req_lens_out = (int32_t *)pick_out(rd, B_PRL);
  s.error_word = (int32_t *)pick_out(rd, B_ERR);
  s.positions = (int64_t *)pick_out(rd, B_POS);
  s.slot_mapping = (int64_t *)pick_out(rd, B_SLOT);
  if (fz_chance(rd, 1, 2)) {
    pick_dsv4(rd, &s);
    stats.dsv4++;
  }

  aliased = fz_chance(rd, 1, 8) && alias_one(rd, &s);
  /* drawn after the others: PCP's members, then 0.3.0's struct size */
  if (fz_chance(rd, 1, 3) && pick_pcp(rd, &s)) aliased = 1;
  if (fz_chance(rd, 1, 16)) s.struct_size = FZ_STEP_SIZE_0_3;

  fz_step_rules(&s, &required, &optional);
  if (aliased) stats.aliased++;
  if (aliased && !required) { /* buffers that share an allocation: not run */
    count_call(0, 0, ATTNMETA_OK);
    return;
  }
  fits = s.num_reqs >= 0 && s.num_reqs < BUF && s.num_tokens >= 0 && s.num_tokens <= BUF &&
         s.capacity >= 0 && s.capacity <= BUF &&
         (!(s.block_table_out || s.slot_mapping) ||
          table_fits(s.num_reqs, s.block_table_stride, s.block_table_cols)) &&
         (!s.block_table_out || table_fits(s.num_tokens, s.block_table_out_stride, s.block_table_cols)) &&
         dsv4_fits(&s);
  if (!required && !fits) { /* a valid call with buffers smaller than it says */
    count_call(0, 0, ATTNMETA_OK);
    return;
  }

  poison_outputs();
  if (s.struct_size < sizeof s) { /* a caller built against a smaller struct: just its bytes */
    const size_t bytes = s.struct_size > sizeof(size_t) ? s.struct_size : sizeof(size_t);
    caller = malloc(bytes);
    if (!caller) fz_fail("out of memory");
    memcpy(caller, &s, bytes);
    stats.small_struct++;
  }
  st = attnmeta_build_step(ctx, (const attnmeta_step *)caller, NULL);
  if (caller != &s) free(caller);
  count_call(required, 1, st);
  check_call(st, "attnmeta_build_step", "step", required, optional);
}

/* The DCP peer views' members (contract 6c, 6d), drawn after the others
 * (the committed seeds keep their meaning): the segment (0, small, at the
 * int32 bound of peer slots, at the edges), the rotated table's output,
 * width and stride, the gathered tables, their stride and owner stride
 * (0, one table's span, near the byte-offset limits), and sometimes the
 * output placed on another buffer. 1 when so placed. */
static int pick_peer(fz_reader *rd, attnmeta_topk *op) {
  const int64_t W = op->dcp_world_size >= 1 ? op->dcp_world_size : 1;
  const int64_t sr = op->stride_rows > 0 ? op->stride_rows : op->block_size >= 1 ? op->block_size : 1;
  switch (fz_u8(rd) % 6) {
    case 0: op->peer_blocks = 0; break;
    case 1: case 2: op->peer_blocks = fz_range(rd, 1, 64); break;
    case 3: op->peer_blocks = (int64_t)INT32_MAX / W / sr + fz_range(rd, 0, 1); break;
    case 4: op->peer_blocks = INT64_MAX / W + (W > 1 ? fz_range(rd, 0, 1) : 0); break;
    default: op->peer_blocks = fz_edge64(rd); break;
  }
  if (fz_chance(rd, 2, 3)) {
    const int64_t R = op->num_reqs > 1 ? op->num_reqs : 2;
    int64_t span;
    op->peer_table_out = (int32_t *)pick_out(rd, B_GSEQ);
    op->peer_table_width = fz_chance(rd, 3, 4) ? (int32_t)fz_range(rd, 0, 32) : fz_edge32(rd);
    op->peer_table_out_stride = pick_stride(rd, op->peer_table_width, op->num_reqs);
    op->peer_tables = fz_chance(rd, 7, 8) ? (const int32_t *)pick_ptr(rd, in_table.data, 4) : NULL;
    op->peer_tables_cols = fz_chance(rd, 3, 4) ? (int32_t)fz_range(rd, 0, 16) : fz_edge32(rd);
    op->peer_tables_stride = pick_stride(rd, op->peer_tables_cols, op->num_reqs);
    span = op->num_reqs > 0 && op->peer_tables_stride >= 0 && op->peer_tables_stride < INT32_MAX
               ? (R - 1) * op->peer_tables_stride + op->peer_tables_cols
               : 0;
    switch (fz_u8(rd) % 6) {
      case 0: case 1: op->peer_tables_owner_stride = 0; break;
      case 2: op->peer_tables_owner_stride = span + fz_range(rd, 0, 3); break;
      case 3: op->peer_tables_owner_stride = fz_range(rd, 1, 8); break; /* ranks interleaved */
      case 4: op->peer_tables_owner_stride = W > 1 ? INT64_MAX / 8 / (W - 1) + fz_range(rd, -1, 1)
                                                   : INT64_MAX / 8 + fz_range(rd, -1, 1);
              break;
      default: op->peer_tables_owner_stride = fz_edge64(rd); break;
    }
  }
  if (op->peer_table_out && fz_chance(rd, 1, 8)) {
    const void *on[] = {op->topk, op->query_start_loc, op->req_id, op->block_table, op->out,
                        op->valid_count, op->error_word, op->peer_tables};
    const char *target = (const char *)on[fz_range(rd, 0, 7)];
    if (!target) return 0;
    op->peer_table_out = (int32_t *)(uintptr_t)(target + 4 * fz_range(rd, -3, 3));
    return 1;
  }
  return 0;
}

/* The peer views' buffers fit the fixed buffers. */
static int peer_fits(const attnmeta_topk *op) {
  if (!op->peer_table_out) return 1;
  if (!table_fits(op->num_reqs, op->peer_table_out_stride, op->peer_table_width)) return 0;
  if (op->num_reqs <= 0 || op->peer_tables_cols <= 0 || op->peer_table_width <= 0) return 1;
  return ((__int128)op->dcp_world_size - 1) * op->peer_tables_owner_stride +
             (__int128)(op->num_reqs - 1) * op->peer_tables_stride + op->peer_tables_cols <=
         BUF;
}

/* attnmeta_convert_topk: sizes, strides, request sources, pointers and
 * struct sizes drawn towards the edges, sometimes an output placed on
 * another buffer; the rules are fz_topk_rules. */
static void fuzz_convert_topk(fz_reader *rd) {
  static const size_t sizes[] = {0, 1, sizeof(attnmeta_topk) - 8, sizeof(attnmeta_topk) - 1,
                                 sizeof(attnmeta_topk) + 1, sizeof(attnmeta_topk) + 8, (size_t)-1};
  attnmeta_topk op;
  uint32_t required, optional;
  attnmeta_status st;
  int fits, aliased = 0;
  attnmeta_topk_init(&op);
  if (fz_chance(rd, 1, 16)) op.struct_size = sizes[fz_u8(rd) % 7];
  op.num_tokens = pick_size(rd, 64);
  op.topk_count = fz_chance(rd, 3, 4) ? (int32_t)fz_range(rd, 1, 16) : fz_edge32(rd);
  op.topk = (const int32_t *)pick_ptr(rd, in_table.data, 4);
  op.topk_stride = pick_stride(rd, op.topk_count, op.num_tokens);
  switch (fz_u8(rd) % 8) { /* the request source: one of the two, or neither, or both */
    case 0: break;
    case 1: op.query_start_loc = (const int32_t *)pick_ptr(rd, in_qsl.data, 4);
            op.req_id = (const int32_t *)pick_ptr(rd, in_seq.data, 4); break;
    case 2: case 3: case 4: op.req_id = (const int32_t *)pick_ptr(rd, in_seq.data, 4); break;
    default: op.query_start_loc = (const int32_t *)pick_ptr(rd, in_qsl.data, 4); break;
  }
  op.num_reqs = pick_size(rd, 32);
  op.block_table = (const int32_t *)pick_ptr(rd, in_table.data, 4);
  op.block_table_cols = pick_size(rd, 16);
  op.block_table_stride = pick_stride(rd, op.block_table_cols, op.num_reqs);
  op.block_size = fz_chance(rd, 1, 2) ? fz_edge32(rd) : (int32_t)fz_range(rd, 1, 64);
  op.stride_rows = fz_chance(rd, 1, 2) ? 0 : fz_edge32(rd);
  op.dcp_world_size = fz_chance(rd, 1, 4) ? fz_edge32(rd) : (int32_t)fz_range(rd, 1, 4);
  op.dcp_rank = fz_chance(rd, 1, 4) ? fz_edge32(rd) : (int32_t)fz_range(rd, 0, 3);
  op.dcp_interleave = fz_chance(rd, 1, 4) ? fz_edge32(rd) : (int32_t)fz_range(rd, 1, 4);
  if (fz_chance(rd, 1, 3)) {
    op.prefill_req = (const int32_t *)pick_ptr(rd, in_seq.data, 4);
    op.workspace_starts = (const int32_t *)pick_ptr(rd, in_seq.data, 4);
    op.num_prefill = fz_chance(rd, 1, 2) ? (int32_t)fz_range(rd, 0, 4) : fz_edge32(rd);
  }
  if (fz_chance(rd, 1, 3)) op.token_slot = (const int64_t *)pick_ptr(rd, in_qsl.data, 8);
  op.out = fz_u8(rd) < 232 ? (int32_t *)outs[B_BT].data : (int32_t *)pick_out(rd, B_BT);
  op.out_stride = pick_stride(rd, op.topk_count, op.num_tokens);
  op.valid_count = (int32_t *)pick_out(rd, B_DEC);
  op.compact = fz_chance(rd, 3, 4) ? (int32_t)fz_range(rd, 0, 1) : fz_edge32(rd);
  op.error_word = (int32_t *)pick_out(rd, B_ERR);
  if (fz_chance(rd, 1, 8)) { /* an output on another buffer, a few elements off */
    int32_t **outs_of[] = {&op.out, &op.valid_count, &op.error_word};
    const void *on[] = {op.topk, op.query_start_loc, op.req_id, op.block_table, op.prefill_req,
                        op.workspace_starts, op.token_slot, op.out, op.valid_count, op.error_word};
    const char *target = (const char *)on[fz_range(rd, 0, 9)];
    if (target) {
      *outs_of[fz_range(rd, 0, 2)] = (int32_t *)(uintptr_t)(target + 4 * fz_range(rd, -3, 3));
      aliased = 1;
      stats.aliased++;
    }
  }

  /* drawn after the others: the DCP peer views, then 0.2.0's struct size */
  if (fz_chance(rd, 1, 3) && pick_peer(rd, &op)) {
    aliased = 1;
    stats.aliased++;
  }
  if (fz_chance(rd, 1, 16)) op.struct_size = FZ_TOPK_SIZE_0_2;

  fz_topk_rules(&op, &required, &optional);
  if (aliased && !required) { /* buffers that share an allocation: not run */
    count_call(0, 0, ATTNMETA_OK);
    return;
  }
  fits = op.num_tokens >= 0 && op.num_tokens <= BUF / 2 && op.num_reqs >= 0 &&
         op.num_reqs < BUF && op.num_prefill >= 0 && op.num_prefill <= BUF &&
         table_fits(op.num_tokens, op.topk_stride, op.topk_count) &&
         table_fits(op.num_tokens, op.out_stride, op.topk_count) &&
         table_fits(op.num_reqs, op.block_table_stride, op.block_table_cols) &&
         (op.struct_size == FZ_TOPK_SIZE_0_2 || peer_fits(&op));
  if (!required && !fits) { /* a valid call with buffers smaller than it says */
    count_call(0, 0, ATTNMETA_OK);
    return;
  }
  poison_outputs();
  if (op.struct_size == FZ_TOPK_SIZE_0_2) { /* 0.2.0's struct: just its bytes */
    void *caller = malloc(FZ_TOPK_SIZE_0_2);
    if (!caller) fz_fail("out of memory");
    memcpy(caller, &op, FZ_TOPK_SIZE_0_2);
    st = attnmeta_convert_topk(ctx, (const attnmeta_topk *)caller, NULL);
    free(caller);
  } else {
    st = attnmeta_convert_topk(ctx, &op, NULL);
  }
  count_call(required, 1, st);
  check_call(st, "attnmeta_convert_topk", "call", required, optional);
}

/* attnmeta_build_pool_indices: sizes, strides, capacities, page sizes,
 * pointers (NULL, misaligned, int64 inputs over int32 buffers) and struct
 * sizes drawn towards the edges, sometimes an output placed on another
 * buffer; the rules are fz_pool_rules. The device data is whatever the
 * fixed buffers hold (pool rows far outside the pool, lengths and start
 * columns of any sign): the call must stay inside its outputs. */
static void fuzz_build_pool(fz_reader *rd) {
  static const size_t sizes[] = {0, 1, sizeof(attnmeta_pool) - 8, sizeof(attnmeta_pool) - 1,
                                 sizeof(attnmeta_pool) + 1, sizeof(attnmeta_pool) + 8, (size_t)-1,
                                 offsetof(attnmeta_pool, page_table)};
  attnmeta_pool op;
  uint32_t required, optional;
  attnmeta_status st;
  int fits, aliased = 0;
  void *caller = &op;
  attnmeta_pool_init(&op);
  if (fz_chance(rd, 1, 16)) op.struct_size = sizes[fz_u8(rd) % 8];
  op.pool_rows = pick_size(rd, 16);
  op.pool_cols = pick_size(rd, 64);
  op.req_to_token = (const int32_t *)pick_ptr(rd, in_table.data, 4);
  op.req_to_token_stride = pick_stride(rd, op.pool_cols, op.pool_rows);
  op.num_reqs = pick_size(rd, 64);
  op.req_pool_indices = (const int64_t *)pick_ptr(rd, in_seq.data, 8);
  op.lengths = (const int64_t *)pick_ptr(rd, in_qsl.data, 8);
  if (fz_chance(rd, 1, 2)) op.kv_start_idx = (const int64_t *)pick_ptr(rd, in_table.data, 8);
  op.page_size = fz_chance(rd, 3, 4) ? (int32_t)fz_range(rd, 1, 64) : fz_edge32(rd);
  if (fz_chance(rd, 1, 2)) op.kv_indptr = (const int32_t *)pick_ptr(rd, in_qsl.data, 4);
  op.kv_indices = (int32_t *)pick_out(rd, B_T2R);
  op.kv_indices_capacity = fz_chance(rd, 1, 2) ? fz_range(rd, 0, 600) : fz_edge64(rd);
  op.kv_indptr_out = (int32_t *)pick_out(rd, B_SEQ);
  op.page_table = (int32_t *)pick_out(rd, B_BT);
  op.page_table_width = pick_size(rd, 16);
  op.page_table_stride = pick_stride(rd, op.page_table_width, op.num_reqs);
  op.reserved = fz_chance(rd, 1, 8) ? fz_edge32(rd) : 0;
  op.error_word = (int32_t *)pick_out(rd, B_ERR);
  if (fz_chance(rd, 1, 8)) { /* an output on another buffer, a few elements off */
    int32_t **outs_of[] = {&op.kv_indices, &op.kv_indptr_out, &op.page_table, &op.error_word};
    const void *on[] = {op.req_to_token, op.req_pool_indices, op.lengths, op.kv_start_idx,
                        op.kv_indptr, op.kv_indices, op.kv_indptr_out, op.page_table,
                        op.error_word};
    const char *target = (const char *)on[fz_range(rd, 0, 8)];
    int32_t **out = outs_of[fz_range(rd, 0, 3)];
    if (target && *out) {
      *out = (int32_t *)(uintptr_t)(target + 4 * fz_range(rd, -3, 3));
      aliased = 1;
      stats.aliased++;
    }
  }

  fz_pool_rules(&op, &required, &optional);
  if (aliased && !required) { /* buffers that share an allocation: not run */
    count_call(0, 0, ATTNMETA_OK);
    return;
  }
  /* int64 inputs over int32 buffers: B <= BUF / 2 of them */
  fits = op.num_reqs >= 0 && op.num_reqs < BUF / 2 && op.kv_indices_capacity >= 0 &&
         op.kv_indices_capacity <= BUF && table_fits(op.pool_rows, op.req_to_token_stride, op.pool_cols) &&
         (!op.page_table || table_fits(op.num_reqs, op.page_table_stride, op.page_table_width));
  if (!required && !fits) { /* a valid call with buffers smaller than it says */
    count_call(0, 0, ATTNMETA_OK);
    return;
  }
  poison_outputs();
  if (op.struct_size < sizeof op) { /* a caller built against a smaller struct: just its bytes */
    const size_t bytes = op.struct_size > sizeof(size_t) ? op.struct_size : sizeof(size_t);
    caller = malloc(bytes);
    if (!caller) fz_fail("out of memory");
    memcpy(caller, &op, bytes);
    stats.small_struct++;
  }
  st = attnmeta_build_pool_indices(ctx, (const attnmeta_pool *)caller, NULL);
  if (caller != &op) free(caller);
  count_call(required, 1, st);
  check_call(st, "attnmeta_build_pool_indices", "call", required, optional);
}

static void fuzz_token_to_req(fz_reader *rd) {
  const int32_t *qsl = (const int32_t *)pick_ptr(rd, in_qsl.data, 4);
  const int32_t R = pick_size(rd, 64), T = pick_size(rd, 256);
  const int32_t mapped = fz_chance(rd, 1, 2) ? -1 : fz_edge32(rd);
  int32_t *out = (int32_t *)pick_ptr(rd, outs[B_T2R].data, 4);
  uint32_t required = 0;
  attnmeta_status st;
  if (!qsl || !out) required |= BIT(ATTNMETA_ERR_NULL_POINTER);
  if (R < 0 || T < 0) required |= BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if ((int64_t)R + T > INT32_MAX) required |= BIT(ATTNMETA_ERR_OVERFLOW);
  if (((uintptr_t)qsl | (uintptr_t)out) % 4) required |= BIT(ATTNMETA_ERR_INVALID_ARGUMENT);
  if (!required && (R >= BUF || T > BUF)) {
    count_call(0, 0, ATTNMETA_OK);
    return;
  }
  poison_outputs();
  st = attnmeta_token_to_req(ctx, qsl, R, mapped, T, out, NULL);
  count_call(required, 1, st);
  if (required) {
    FZ_CHECK(st != ATTNMETA_OK && (BIT(st) & required),
             "attnmeta_token_to_req returned %d, the rules want 0x%x", (int)st, required);
    FZ_CHECK(attnmeta_last_error(ctx)[0] != '\0', "a failed call left no message");
    check_outputs_untouched("attnmeta_token_to_req", st);
  } else {
    FZ_CHECK(st == ATTNMETA_OK, "attnmeta_token_to_req refused a valid call: %s",
             attnmeta_last_error(ctx));
    check_guards("attnmeta_token_to_req");
  }
}

static void fuzz_launch_config(fz_reader *rd) {
  attnmeta_launch_config c;
  uint32_t required;
  attnmeta_status st;
  c.block = fz_chance(rd, 1, 2) ? (int)fz_range(rd, -1, 2) : fz_edge32(rd);
  c.grid = fz_chance(rd, 1, 2) ? (int)fz_range(rd, -1, 64) : fz_edge32(rd);
  c.stage = fz_chance(rd, 3, 4) ? (int)fz_range(rd, -2, 2) : fz_edge32(rd);
  c.vector = fz_chance(rd, 3, 4) ? (int)fz_range(rd, -2, 2) : fz_edge32(rd);
  c.lanes = fz_chance(rd, 1, 2) ? (int)fz_range(rd, -1, 8) : fz_edge32(rd);
  required = fz_config_rules(&c);
  st = attnmeta_set_launch_config(ctx, &c);
  if (required) {
    FZ_CHECK(st != ATTNMETA_OK && (BIT(st) & required),
             "attnmeta_set_launch_config({%d,%d,%d,%d,%d}) returned %d, the rules want 0x%x",
             c.block, c.grid, c.stage, c.vector, c.lanes, (int)st, required);
    FZ_CHECK(attnmeta_last_error(ctx)[0] != '\0', "a failed call left no message");
  } else {
    FZ_CHECK(st == ATTNMETA_OK, "attnmeta_set_launch_config({%d,%d,%d,%d,%d}) refused: %s",
             c.block, c.grid, c.stage, c.vector, c.lanes, attnmeta_last_error(ctx));
    /* a small step and a small top-k conversion run under it, whatever the
     * grid: the CPU backend runs only the blocks that have work (a grid of
     * INT32_MAX once took more than a minute a token; -timeout catches it) */
    {
      static const int32_t topk[4] = {0, 5, -1, 2}, req[2] = {0, 1}, table[2] = {3, 9};
      int32_t converted[4] = {7, 7, 7, 7};
      attnmeta_topk op;
      amt_topk_rows(&op, topk, 2, 2, converted);
      amt_topk_table(&op, req, 2, table, 1, 8);
      st = attnmeta_convert_topk(ctx, &op, NULL);
      FZ_CHECK(st == ATTNMETA_OK || (c.lanes > 1 && st == ATTNMETA_ERR_NOT_SUPPORTED),
               "top-k under config {%d,%d,%d,%d,%d}: status %d (%s)", c.block, c.grid, c.stage,
               c.vector, c.lanes, (int)st, attnmeta_last_error(ctx));
      if (st == ATTNMETA_OK)
        FZ_CHECK(converted[0] == 24 && converted[1] == 29 && converted[2] == -1 &&
                     converted[3] == 74,
                 "top-k under config {%d,%d,%d,%d,%d}: %d %d %d %d", c.block, c.grid, c.stage,
                 c.vector, c.lanes, converted[0], converted[1], converted[2], converted[3]);
    }
    {
      int32_t qsl[3] = {0, 2, 3}, seq[2] = {5, 1}, out[4];
      attnmeta_step s;
      amt_step_tokens(&s, qsl, 2, 4, 4);
      s.seq_lens = seq;
      s.positions = NULL;
      s.global_seq_lens_out = out;
      st = attnmeta_build_step(ctx, &s, NULL);
      FZ_CHECK(st == ATTNMETA_OK && out[0] == 4 && out[1] == 5 && out[2] == 1 && out[3] == 0,
               "a step under config {%d,%d,%d,%d,%d}: status %d, lengths %d %d %d %d", c.block,
               c.grid, c.stage, c.vector, c.lanes, (int)st, out[0], out[1], out[2], out[3]);
    }
    { /* and a small pool call: the CPU backend runs only the blocks with a row */
      static const int32_t pool[4] = {7, 8, 9, 10};
      static const int64_t row[2] = {0, 0}, len[2] = {3, 1};
      int32_t indptr[3] = {-9, -9, -9}, slots[4] = {-9, -9, -9, -9};
      attnmeta_pool op;
      attnmeta_pool_init(&op);
      op.req_to_token = pool;
      op.req_to_token_stride = 4;
      op.pool_rows = 1;
      op.pool_cols = 4;
      op.req_pool_indices = row;
      op.lengths = len;
      op.num_reqs = 2;
      op.kv_indices = slots;
      op.kv_indices_capacity = 4;
      op.kv_indptr_out = indptr;
      st = attnmeta_build_pool_indices(ctx, &op, NULL);
      FZ_CHECK(st == ATTNMETA_OK && indptr[0] == 0 && indptr[1] == 3 && indptr[2] == 4 &&
                   slots[0] == 7 && slots[1] == 8 && slots[2] == 9 && slots[3] == 7,
               "a pool call under config {%d,%d,%d,%d,%d}: status %d (%s)", c.block, c.grid,
               c.stage, c.vector, c.lanes, (int)st, attnmeta_last_error(ctx));
    }
  }
  st = attnmeta_set_launch_config(ctx, NULL);
  FZ_CHECK(st == ATTNMETA_OK, "attnmeta_set_launch_config(NULL) refused");
}

static void fuzz_describe(fz_reader *rd) {
  char full[1024];
  const int32_t flags = fz_chance(rd, 1, 2) ? (int32_t)fz_range(rd, 0, 255) : (int32_t)fz_u32(rd);
  const size_t size = (size_t)fz_range(rd, 0, 300);
  const int null_buf = fz_chance(rd, 1, 8);
  char *buf;
  size_t need, full_len, n;
  memset(full, 0x7F, sizeof full);
  full_len = attnmeta_error_flags_describe(flags, full, sizeof full);
  FZ_CHECK(full_len < sizeof full && strlen(full) == full_len,
           "describe(0x%x): returned %zu, text of %zu", (unsigned)flags, full_len, strlen(full));
  fz_buf_alloc(&text_buf, 1, (int64_t)size, 0);
  buf = null_buf ? NULL : (char *)text_buf.data;
  need = attnmeta_error_flags_describe(flags, buf, size);
  FZ_CHECK(need == full_len, "describe(0x%x, size %zu) returned %zu, full text needs %zu",
           (unsigned)flags, size, need, full_len);
  FZ_CHECK(fz_buf_guards_intact(&text_buf), "describe(0x%x) wrote past a buffer of %zu bytes",
           (unsigned)flags, size);
  if (buf && size > 0) {
    n = need < size - 1 ? need : size - 1;
    FZ_CHECK(buf[n] == '\0' && memcmp(buf, full, n) == 0,
             "describe(0x%x, size %zu) is not the truncated text", (unsigned)flags, size);
  } else {
    FZ_CHECK(fz_buf_untouched(&text_buf), "describe with no room wrote");
  }
  fz_buf_free(&text_buf);
}

static void fuzz_names(fz_reader *rd) {
  const int v = fz_chance(rd, 1, 2) ? (int)fz_range(rd, -2, 20) : fz_edge32(rd);
  const char *s = attnmeta_status_string((attnmeta_status)v);
  const char *b = attnmeta_backend_name((attnmeta_backend)v);
  FZ_CHECK(s && s[0] && strlen(s) < 256, "attnmeta_status_string(%d)", v);
  FZ_CHECK(b && b[0] && strlen(b) < 256, "attnmeta_backend_name(%d)", v);
  FZ_CHECK(attnmeta_version() == ATTNMETA_VERSION, "attnmeta_version");
  FZ_CHECK(strcmp(attnmeta_version_string(), "0.1.0") == 0 || attnmeta_version() != 100,
           "attnmeta_version_string");
}

static void fuzz_open(fz_reader *rd) {
  const int kind = fz_chance(rd, 3, 4) ? (int)fz_range(rd, -1, 5) : fz_edge32(rd);
  const int device = fz_chance(rd, 1, 2) ? (int)fz_range(rd, -1, 2) : fz_edge32(rd);
  const int null_out = fz_chance(rd, 1, 16);
  attnmeta_context *c = (attnmeta_context *)(uintptr_t)1;
  attnmeta_status st = attnmeta_open(null_out ? NULL : &c, (attnmeta_backend)kind, device);
  FZ_CHECK(fz_message_ok(attnmeta_open_error(), 512), "open error not terminated");
  if (null_out) {
    FZ_CHECK(st == ATTNMETA_ERR_NULL_POINTER, "attnmeta_open(NULL, ...) returned %d", (int)st);
    return;
  }
  if (st == ATTNMETA_OK) {
    FZ_CHECK(c != NULL && c != (attnmeta_context *)(uintptr_t)1, "attnmeta_open: OK, no context");
    FZ_CHECK(attnmeta_last_error(c)[0] == '\0', "a new context has a message");
    attnmeta_close(c);
  } else {
    FZ_CHECK(c == NULL, "attnmeta_open failed (%d) but left *out set", (int)st);
    FZ_CHECK(attnmeta_open_error()[0] != '\0', "attnmeta_open failed (%d) with no message", (int)st);
  }
  switch (kind) {
    case ATTNMETA_BACKEND_CPU:
      if (device == 0)
        FZ_CHECK(st == ATTNMETA_OK, "CPU device 0: %d", (int)st);
      else if (device < 0)
        FZ_CHECK(st == ATTNMETA_ERR_INVALID_ARGUMENT, "CPU device %d: %d", device, (int)st);
      else
        FZ_CHECK(st == ATTNMETA_ERR_NO_DEVICE, "CPU device %d: %d", device, (int)st);
      break;
    case ATTNMETA_BACKEND_AUTO:
    case ATTNMETA_BACKEND_CUDA:
    case ATTNMETA_BACKEND_HIP:
      FZ_CHECK((int)st >= 0 && (int)st <= ATTNMETA_ERR_INTERNAL && st != ATTNMETA_ERR_INTERNAL,
               "attnmeta_open(%d, %d): status %d", kind, device, (int)st);
      FZ_CHECK(device >= 0 || st != ATTNMETA_OK, "attnmeta_open: negative device %d opened", device);
      break;
    default:
      FZ_CHECK(st == ATTNMETA_ERR_UNKNOWN_BACKEND, "attnmeta_open(kind %d): %d", kind, (int)st);
  }
}

static void fuzz_memory(fz_reader *rd) {
  const size_t bytes = (size_t)fz_range(rd, 0, 64);
  char host[64];
  void *p = NULL;
  attnmeta_status st;
  int count = -1;
  const char *targets = NULL;
  memset(host, 1, sizeof host);
  st = attnmeta_device_alloc(ctx, bytes, fz_chance(rd, 1, 8) ? NULL : &p);
  if (st != ATTNMETA_OK) {
    FZ_CHECK(st == ATTNMETA_ERR_NULL_POINTER, "attnmeta_device_alloc(ptr NULL): %d", (int)st);
    return;
  }
  FZ_CHECK(p != NULL, "attnmeta_device_alloc(%zu) gave NULL", bytes);
  switch (fz_u8(rd) % 4) {
    case 0:
      FZ_CHECK(attnmeta_copy_to_device(ctx, p, host, bytes) == ATTNMETA_OK, "copy_to_device");
      FZ_CHECK(attnmeta_copy_to_host(ctx, host, p, bytes) == ATTNMETA_OK, "copy_to_host");
      break;
    case 1:
      st = attnmeta_copy_to_device(ctx, NULL, host, bytes);
      FZ_CHECK(bytes ? st == ATTNMETA_ERR_NULL_POINTER : st == ATTNMETA_OK,
               "copy_to_device(NULL, %zu): %d", bytes, (int)st);
      st = attnmeta_copy_to_host(ctx, host, NULL, bytes);
      FZ_CHECK(bytes ? st == ATTNMETA_ERR_NULL_POINTER : st == ATTNMETA_OK,
               "copy_to_host(src NULL, %zu): %d", bytes, (int)st);
      break;
    case 2:
      FZ_CHECK(attnmeta_synchronize(ctx, NULL) == ATTNMETA_OK, "synchronize");
      FZ_CHECK(attnmeta_device_free(ctx, NULL) == ATTNMETA_OK, "device_free(NULL)");
      break;
    default:
      FZ_CHECK(attnmeta_backend_device_count(ATTNMETA_BACKEND_CPU, &count) == ATTNMETA_OK &&
                   count == 1, "CPU device count");
      FZ_CHECK(attnmeta_backend_device_count(ATTNMETA_BACKEND_CPU, NULL) ==
                   ATTNMETA_ERR_NULL_POINTER, "device_count(NULL)");
      FZ_CHECK(attnmeta_backend_device_count((attnmeta_backend)fz_edge32(rd), &count) !=
                   ATTNMETA_ERR_INTERNAL, "device_count(any kind)");
      FZ_CHECK(attnmeta_backend_targets(ATTNMETA_BACKEND_CPU, NULL) == ATTNMETA_ERR_NULL_POINTER,
               "targets(NULL)");
      st = attnmeta_backend_targets((attnmeta_backend)fz_edge32(rd), &targets);
      FZ_CHECK(targets != NULL, "targets left NULL (status %d)", (int)st);
      break;
  }
  FZ_CHECK(attnmeta_device_free(ctx, p) == ATTNMETA_OK, "device_free");
}

static void fz_expect(int ok, const char *what) { FZ_CHECK(ok, "%s", what); }

static void fuzz_null_context(fz_reader *rd) {
  (void)rd;
  amt_null_context_calls(ctx, fz_expect);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
/* A linear congruential step: wraps modulo 2^64 on purpose. */
FZ_WRAPS static uint64_t lcg_next(uint64_t x) {
  return x * 6364136223846793005ull + 1442695040888963407ull;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  static int32_t src[BUF + 1];
  uint64_t x = 0x1234567;
  int i;
  (void)argc;
  (void)argv;
  if (attnmeta_open(&ctx, ATTNMETA_BACKEND_CPU, 0) != ATTNMETA_OK)
    fz_fail("cannot open the CPU backend: %s", attnmeta_open_error());
  /* hostile device data: the values do not matter to argument checks, only
   * that nothing reads or writes outside the buffers */
  for (i = 0; i <= BUF; ++i) {
    x = lcg_next(x);
    src[i] = (int32_t)(x >> 33) % 600 - 100;
  }
  fz_in_alloc(&in_qsl, src, BUF + 1, 0);
  fz_in_alloc(&in_seq, src, BUF, 0);
  fz_in_alloc(&in_table, src, BUF, 0);
  for (i = 0; i < B_COUNT; ++i) fz_buf_alloc(&outs[i], out_is64(i) ? 8 : 4, BUF, 0);
  if (getenv("ATTNMETA_FUZZ_STATS") && getenv("ATTNMETA_FUZZ_STATS")[0] == '1') atexit(print_stats);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fz_reader rd;
  if (!ctx) LLVMFuzzerInitialize(NULL, NULL);
  fz_reader_init(&rd, data, size);
  stats.runs++;
  if (size > 0 && data[0] >= 0xF8) {
    fz_u8(&rd);
    stats.op[9]++;
    fuzz_build_pool(&rd);
    return 0;
  }
  if (size > 0 && data[0] >= 0xF0) { /* the committed seeds of the others start below */
    fz_u8(&rd);
    stats.op[8]++;
    fuzz_convert_topk(&rd);
    return 0;
  }
  switch (fz_u8(&rd) % 16) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
      stats.op[0]++;
      fuzz_build_step(&rd);
      break;
    case 8: case 9: stats.op[1]++; fuzz_token_to_req(&rd); break;
    case 10: case 11: stats.op[2]++; fuzz_launch_config(&rd); break;
    case 12: stats.op[3]++; fuzz_describe(&rd); break;
    case 13: stats.op[4]++; fuzz_names(&rd); break;
    case 14: stats.op[5]++; fuzz_open(&rd); break;
    default:
      if (fz_chance(&rd, 1, 2)) {
        stats.op[6]++;
        fuzz_memory(&rd);
      } else {
        stats.op[7]++;
        fuzz_null_context(&rd);
      }
      break;
  }
  return 0;
}
