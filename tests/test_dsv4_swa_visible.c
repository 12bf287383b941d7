// SPDX-License-Identifier: Apache-2.0
/*
 * Contract section 7, causal mode: the sliding-window rows with in-image
 * bidirectional visibility (swa_left_visible / swa_right_visible) and with
 * each request's replay floor (swa_replay_start), on every backend and
 * launch configuration, against the naive reference (reference_dsv4.c),
 * with poisoned rows, row padding and guard zones; the values vLLM's
 * kernels give, worked by hand; then the argument errors, which write
 * nothing.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "op_inputs.h"
#include "reference_dsv4.h"

#define GUARD 8
#define POISON32 ((int32_t)0x5a5a5a5a)
#define MAX_T 48
#define MAX_R 4
#define MAX_COLS 24

/* What a case gives each token and request. */
enum { VISIBLE_NONE, VISIBLE_IMAGES, VISIBLE_HOSTILE };
enum { FLOOR_NONE, FLOOR_SOME, FLOOR_HOSTILE };

typedef struct swa_case {
  const char *name;
  int32_t R, T, C;
  int32_t qsl[MAX_R + 1], seq_lens[MAX_R];
  int32_t window, width, extra_stride, block_size, cols;
  int visible, floor;
  int32_t spans[4][2]; /* image spans [a, b] (inclusive positions), any request */
  int32_t max_image_tokens;
  int holes;           /* 1: some tokens have no KV slot (swa_token_slots) */
  int hostile_table;   /* 1: some block ids negative or huge */
} swa_case;

static const swa_case cases[] = {
    /* one prefill chunk: text, an image of 25 positions [20, 44], text */
    {"image_prefill", 1, 40, 44, {0, 40}, {50}, 8, 40, 3, 4, 16, VISIBLE_IMAGES, FLOOR_NONE,
     {{20, 44}, {-1, -1}}, 32, 0, 0},
    /* a decode token, two adjacent images in a prefill, a text prefill,
     * graph padding past the real tokens, tokens without a KV slot */
    {"decode_and_two_images", 3, 34, 40, {0, 1, 21, 30}, {70, 40, 9}, 6, 22, 0, 8, 8,
     VISIBLE_IMAGES, FLOOR_NONE, {{22, 31}, {32, 39}}, 16, 1, 0},
    /* an image larger than the window on both sides of the token */
    {"image_wider_than_window", 1, 30, 30, {0, 30}, {30}, 4, 36, 5, 2, 16, VISIBLE_IMAGES,
     FLOOR_NONE, {{2, 28}, {-1, -1}}, 32, 0, 0},
    /* bounded replay: floors below, inside and above each token's window */
    {"replay_floor", 4, 24, 28, {0, 1, 2, 12, 24}, {40, 300, 20, 12}, 16, 16, 4, 4, MAX_COLS,
     VISIBLE_NONE, FLOOR_SOME, {{-1, -1}}, 0, 1, 0},
    /* hostile counts: negative, INT32_MAX, INT32_MIN; rows past the table */
    {"hostile_visibility", 2, 20, 24, {0, 8, 18}, {30, 12}, 5, 12, 1, 4, 3, VISIBLE_HOSTILE,
     FLOOR_NONE, {{-1, -1}}, 0, 1, 1},
    {"hostile_floors", 3, 16, 16, {0, 5, 6, 16}, {9, 1 << 30, 10}, 7, 9, 2, 2, 6, VISIBLE_NONE,
     FLOOR_HOSTILE, {{-1, -1}}, 0, 0, 1},
    {"no_tokens", 1, 0, 4, {0, 0}, {3}, 4, 8, 0, 4, 2, VISIBLE_IMAGES, FLOOR_NONE,
     {{-1, -1}}, 8, 0, 0},
};

typedef struct dev_step {
  attnmeta_step s;
  int64_t stride;
  int32_t h_left[MAX_T], h_right[MAX_T], h_replay[MAX_R], h_table[MAX_R * MAX_COLS];
  int64_t h_slots[MAX_T];
  void *qsl, *seq, *table, *left, *right, *replay, *slots, *rows, *lens, *err;
} dev_step;

/* vLLM's per-token counts for the case's spans (get_image_visible): a token
 * at position p in [a, b] sees min(p - a, M - 1) to its left, min(b - p, M)
 * to its right; others 0. */
static void image_counts(const swa_case *k, dev_step *d) {
  int32_t r, t, i;
  for (r = 0; r < k->R; r++) {
    const int32_t qlen = k->qsl[r + 1] - k->qsl[r];
    for (t = k->qsl[r]; t < k->qsl[r + 1]; t++) {
      const int64_t pos = (int64_t)k->seq_lens[r] - qlen + (t - k->qsl[r]);
      for (i = 0; i < 4; i++) {
        const int64_t a = k->spans[i][0], b = k->spans[i][1];
        if (a < 0 || pos < a || pos > b) continue;
        d->h_left[t] = (int32_t)(pos - a < k->max_image_tokens - 1 ? pos - a
                                                                   : k->max_image_tokens - 1);
        d->h_right[t] = (int32_t)(b - pos < k->max_image_tokens ? b - pos : k->max_image_tokens);
      }
    }
  }
  for (t = k->qsl[k->R]; t < k->T; t++) { /* padding: whatever the buffer holds */
    d->h_left[t] = 3 * t;
    d->h_right[t] = t;
  }
}

static void fill_inputs(const swa_case *k, dev_step *d) {
  static const int32_t hostile[8] = {-1, INT32_MAX, INT32_MIN, 0, -40, 1000, 7, INT32_MAX - 3};
  int32_t t, r, c;
  for (t = 0; t < k->T; t++) {
    d->h_left[t] = d->h_right[t] = 0;
    d->h_slots[t] = k->holes && t % 5 == 3 ? -1 : (int64_t)t + 100;
  }
  if (k->visible == VISIBLE_IMAGES) image_counts(k, d);
  if (k->visible == VISIBLE_HOSTILE)
    for (t = 0; t < k->T; t++) {
      d->h_left[t] = hostile[t % 8];
      d->h_right[t] = hostile[(t * 3 + 1) % 8];
    }
  for (r = 0; r < k->R; r++) {
    static const int32_t some[4] = {0, 290, 15, 30};
    static const int32_t bad[4] = {INT32_MIN, INT32_MAX, -5, 4};
    d->h_replay[r] = k->floor == FLOOR_HOSTILE ? bad[r % 4] : some[r % 4];
  }
  for (r = 0; r < k->R; r++)
    for (c = 0; c < k->cols; c++) {
      int32_t id = 100 * r + 3 * c + 1;
      if (k->hostile_table && c % 4 == 2) id = -7;
      if (k->hostile_table && c % 4 == 1) id = INT32_MAX - c;
      d->h_table[r * k->cols + c] = id;
    }
}

static void *upload(attnmeta_context *ctx, const void *src, size_t bytes) {
  void *d = amt_dev_alloc(ctx, bytes ? bytes : 8);
  if (bytes) amt_to_dev(ctx, d, src, bytes);
  return d;
}

static void poison(attnmeta_context *ctx, void *d, size_t bytes) {
  unsigned char *h = malloc(bytes);
  cr_assert(h);
  memset(h, 0x5a, bytes);
  amt_to_dev(ctx, d, h, bytes);
  free(h);
}

static size_t rows_bytes(const swa_case *k, const dev_step *d) {
  return (size_t)((int64_t)k->T * d->stride + GUARD) * 4;
}

static void open_step(attnmeta_context *ctx, const swa_case *k, dev_step *d) {
  attnmeta_step *s = &d->s;
  memset(d, 0, sizeof *d);
  fill_inputs(k, d);
  d->stride = (int64_t)k->width + k->extra_stride;
  attnmeta_step_init(s);
  d->qsl = upload(ctx, k->qsl, ((size_t)k->R + 1) * 4);
  d->seq = upload(ctx, k->seq_lens, (size_t)k->R * 4);
  d->table = upload(ctx, d->h_table, (size_t)k->R * (size_t)k->cols * 4);
  d->rows = amt_dev_alloc(ctx, rows_bytes(k, d));
  d->lens = amt_dev_alloc(ctx, (size_t)(k->C + GUARD) * 4);
  d->err = amt_dev_alloc(ctx, 4);
  s->query_start_loc = d->qsl;
  s->seq_lens = d->seq;
  s->num_reqs = k->R;
  s->num_tokens = k->T;
  s->capacity = k->C;
  s->error_word = d->err;
  amt_step_swa(s, d->table, k->cols, k->block_size, k->window, k->width, ATTNMETA_SWA_CAUSAL,
               d->rows, d->stride, d->lens);
  if (k->visible != VISIBLE_NONE) {
    d->left = upload(ctx, d->h_left, (size_t)k->T * 4);
    d->right = upload(ctx, d->h_right, (size_t)k->T * 4);
    s->swa_left_visible = d->left;
    s->swa_right_visible = d->right;
  }
  if (k->floor != FLOOR_NONE) {
    d->replay = upload(ctx, d->h_replay, (size_t)k->R * 4);
    s->swa_replay_start = d->replay;
  }
  if (k->holes) {
    d->slots = upload(ctx, d->h_slots, (size_t)k->T * 8);
    s->swa_token_slots = d->slots;
  }
}

static void close_step(attnmeta_context *ctx, dev_step *d) {
  void *all[] = {d->qsl, d->seq, d->table, d->left, d->right, d->replay, d->slots, d->rows,
                 d->lens, d->err};
  size_t i;
  for (i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i]) amt_dev_free(ctx, all[i]);
}

static void poison_outputs(attnmeta_context *ctx, const swa_case *k, dev_step *d) {
  const int32_t zero = 0;
  poison(ctx, d->rows, rows_bytes(k, d));
  poison(ctx, d->lens, (size_t)(k->C + GUARD) * 4);
  amt_to_dev(ctx, d->err, &zero, 4);
}

/* The reference's rows for the step of `d`, from host copies of its inputs. */
static amr_dsv4_output *reference(const swa_case *k, const dev_step *d, amr_input *in,
                                  amr_dsv4_input *di, attnmeta_step *host) {
  amr_dsv4_output *o;
  memset(in, 0, sizeof *in);
  memset(di, 0, sizeof *di);
  in->qsl = k->qsl;
  in->R = k->R;
  in->T = k->T;
  in->C = k->C;
  in->seq_lens = k->seq_lens;
  in->num_mapped = -1;
  in->block_size = 1;
  in->world = 1;
  in->interleave = 1;
  *host = d->s;
  host->swa_left_visible = d->s.swa_left_visible ? d->h_left : NULL;
  host->swa_right_visible = d->s.swa_right_visible ? d->h_right : NULL;
  host->swa_replay_start = d->s.swa_replay_start ? d->h_replay : NULL;
  di->swa_table.ids = d->h_table;
  di->swa_table.cols = k->cols;
  di->swa_table.stride = k->cols;
  di->swa_block_size = k->block_size;
  di->swa_window = k->window;
  di->swa_width = k->width;
  di->swa_mode = ATTNMETA_SWA_CAUSAL;
  di->swa_token_slots = k->holes ? d->h_slots : NULL;
  di->c128a_width = -1;
  di->step = host;
  o = amr_dsv4_alloc(in, di);
  amr_dsv4_build(in, di, o);
  return o;
}

/* Rows (their padding columns and the guard untouched), lengths (0 in
 * [T, C), the guard untouched) and the error word; 1 on a mismatch. */
static int expect_outputs(attnmeta_context *ctx, const swa_case *k, const dev_step *d,
                          const amr_dsv4_output *o, const char *where) {
  const int64_t n = (int64_t)k->T * d->stride + GUARD;
  int32_t *rows = malloc((size_t)n * 4);
  int32_t lens[MAX_T + GUARD], err;
  int64_t i;
  int bad = 0;
  cr_assert(rows);
  amt_to_host(ctx, rows, d->rows, (size_t)n * 4);
  for (i = 0; i < n && !bad; i++) {
    const int64_t t = i / d->stride, j = i % d->stride;
    const int32_t want = t < k->T && j < k->width ? o->swa[t * k->width + j] : POISON32;
    if (rows[i] != want) {
      cr_expect_eq(rows[i], want, "%s row %lld entry %lld: %d, want %d", where, (long long)t,
                   (long long)j, rows[i], want);
      bad = 1;
    }
  }
  free(rows);
  amt_to_host(ctx, lens, d->lens, (size_t)(k->C + GUARD) * 4);
  for (i = 0; i < k->C + GUARD && !bad; i++) {
    const int32_t want = i < k->C ? o->swa_lens[i] : POISON32;
    if (lens[i] != want) {
      cr_expect_eq(lens[i], want, "%s swa_lens[%lld]: %d, want %d", where, (long long)i,
                   lens[i], want);
      bad = 1;
    }
  }
  amt_to_host(ctx, &err, d->err, 4);
  if (!bad && err != o->swa_flags) {
    cr_expect_eq(err, o->swa_flags, "%s error word %#x, want %#x", where, err, o->swa_flags);
    bad = 1;
  }
  return bad;
}

/* One case's run, for amt_step_every_case. */
typedef struct run {
  attnmeta_context *ctx;
  const swa_case *k;
  dev_step d;
  amr_input in;
  amr_dsv4_input di;
  attnmeta_step host;
  amr_dsv4_output *o;
} run;
static void poison_run(void *arg) {
  run *r = arg;
  poison_outputs(r->ctx, r->k, &r->d);
}
static int check_run(void *arg, const char *where) {
  const run *r = arg;
  return expect_outputs(r->ctx, r->k, &r->d, r->o, where);
}
static void open_run(attnmeta_context *ctx, int n, void *arg, amt_step_case *c) {
  run *r = arg;
  r->ctx = ctx;
  r->k = &cases[n];
  open_step(ctx, r->k, &r->d);
  r->o = reference(r->k, &r->d, &r->in, &r->di, &r->host);
  *c = (amt_step_case){r->k->name, &r->d.s, {poison_run, check_run, r}};
}
static void close_run(attnmeta_context *ctx, void *arg) {
  run *r = arg;
  amr_dsv4_free(r->o);
  close_step(ctx, &r->d);
}

Test(dsv4_swa_visible, every_backend_matches_the_reference) {
  run r;
  amt_step_every_case((int)(sizeof cases / sizeof cases[0]), open_run, close_run, &r);
}

/* One request, table row [0, 1, 2, ...] with block size 4 (slot = position),
 * window 4: the reference's row and length of each token, checked against
 * values worked out from vLLM's kernels. */
static void hand_case(const int32_t *left, const int32_t *right, const int32_t *replay,
                      int32_t seq, int32_t T, int32_t width, int32_t *rows, int32_t *lens) {
  static const int32_t table[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const int32_t qsl[2] = {0, T};
  attnmeta_step s;
  amr_input in;
  amr_dsv4_input di;
  amr_dsv4_output *o;
  attnmeta_step_init(&s);
  s.swa_left_visible = left;
  s.swa_right_visible = right;
  s.swa_replay_start = replay;
  memset(&in, 0, sizeof in);
  memset(&di, 0, sizeof di);
  in.qsl = qsl;
  in.R = 1;
  in.T = in.C = T;
  in.seq_lens = &seq;
  in.world = in.interleave = in.block_size = 1;
  di.swa_table.ids = table;
  di.swa_table.cols = 16;
  di.swa_table.stride = 16;
  di.swa_block_size = 4;
  di.swa_window = 4;
  di.swa_width = width;
  di.swa_mode = ATTNMETA_SWA_CAUSAL;
  di.c128a_width = -1;
  di.step = &s;
  o = amr_dsv4_alloc(&in, &di);
  amr_dsv4_build(&in, &di, o);
  memcpy(rows, o->swa, (size_t)T * (size_t)width * 4);
  memcpy(lens, o->swa_lens, (size_t)T * 4);
  amr_dsv4_free(o);
}

Test(dsv4_swa_visible, reference_gives_vllms_values) {
  /* positions 10..17 (seq 18), one image [11, 16], max image tokens 8,
   * width window + 8 = 12: get_image_visible's counts */
  static const int32_t left[8] = {0, 0, 1, 2, 3, 4, 5, 0};
  static const int32_t right[8] = {0, 5, 4, 3, 2, 1, 0, 0};
  /* outside the image the window's 4; inside, from the window's start (or
   * the image's, once left passes window - 1) to the image's end, 16 */
  static const int32_t want_lens[8] = {4, 9, 8, 7, 6, 6, 6, 4};
  static const int32_t want_start[8] = {7, 8, 9, 10, 11, 11, 11, 14};
  static const int32_t floor[1] = {12};
  int32_t rows[8 * 12], lens[8], t, j;
  hand_case(left, right, NULL, 18, 8, 12, rows, lens);
  for (t = 0; t < 8; t++) {
    cr_expect_eq(lens[t], want_lens[t], "token %d: length %d", t, lens[t]);
    for (j = 0; j < 12; j++) {
      const int32_t want = j < want_lens[t] ? want_start[t] + j : -1;
      cr_expect_eq(rows[t * 12 + j], want, "token %d entry %d: %d, want %d", t, j,
                   rows[t * 12 + j], want);
    }
  }
  /* the floor 12 (swa_metadata.py's replay_start): positions 10..17 with
   * window 4 start at max(pos - 3, 0, 12): lengths 1 1 1 2 3 4 4 4 from
   * position 10 on; a floor above the token (10, 11) gives length 0 */
  {
    static const int32_t want_floor[8] = {0, 0, 1, 2, 3, 4, 4, 4};
    hand_case(NULL, NULL, floor, 18, 8, 4, rows, lens);
    for (t = 0; t < 8; t++) {
      const int32_t start = 10 + t - 3 > 12 ? 10 + t - 3 : 12;
      cr_expect_eq(lens[t], want_floor[t], "floor: token %d: length %d", t, lens[t]);
      for (j = 0; j < 4; j++)
        cr_expect_eq(rows[t * 4 + j], j < want_floor[t] ? start + j : -1,
                     "floor: token %d entry %d: %d", t, j, rows[t * 4 + j]);
    }
  }
}

typedef struct bad_arg {
  const char *name;
  attnmeta_status status;
  const char *message;
} bad_arg;

static void spoil(attnmeta_step *s, const char *name, void *buffer) {
  if (!strcmp(name, "right_null")) s->swa_right_visible = NULL;
  if (!strcmp(name, "left_null")) s->swa_left_visible = NULL;
  if (!strcmp(name, "non_causal")) s->swa_mode = ATTNMETA_SWA_NON_CAUSAL;
  if (!strcmp(name, "floor_non_causal")) {
    s->swa_left_visible = s->swa_right_visible = NULL;
    s->swa_replay_start = buffer;
    s->swa_mode = ATTNMETA_SWA_NON_CAUSAL;
  }
  if (!strcmp(name, "both")) s->swa_replay_start = buffer;
  if (!strcmp(name, "left_misaligned"))
    s->swa_left_visible = (const int32_t *)(const void *)((const char *)s->swa_left_visible + 2);
}

Test(dsv4_swa_visible, bad_arguments_write_nothing) {
  static const bad_arg bad[] = {
      {"right_null", ATTNMETA_ERR_NULL_POINTER,
       "swa_right_visible is NULL but swa_left_visible is set"},
      {"left_null", ATTNMETA_ERR_NULL_POINTER,
       "swa_left_visible is NULL but swa_right_visible is set"},
      {"non_causal", ATTNMETA_ERR_INVALID_ARGUMENT, "for causal mode only (swa_mode 1)"},
      {"floor_non_causal", ATTNMETA_ERR_INVALID_ARGUMENT, "for causal mode only (swa_mode 1)"},
      {"both", ATTNMETA_ERR_INVALID_ARGUMENT,
       "swa_replay_start and swa_left_visible exclude each other"},
      {"left_misaligned", ATTNMETA_ERR_INVALID_ARGUMENT, "swa_left_visible"},
  };
  attnmeta_backend be[AMT_MAX_BACKENDS];
  const int nb = amt_test_backends(be);
  const swa_case *k = &cases[0];
  int b, i;
  for (b = 0; b < nb; b++) {
    attnmeta_context *ctx = amt_open_or_null(be[b]);
    if (!ctx) continue;
    for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
      dev_step d;
      attnmeta_status st;
      int32_t lens[64 + GUARD];
      int64_t j;
      void *floor;
      open_step(ctx, k, &d);
      floor = upload(ctx, k->seq_lens, (size_t)k->R * 4);
      poison_outputs(ctx, k, &d);
      spoil(&d.s, bad[i].name, floor);
      st = attnmeta_build_step(ctx, &d.s, NULL);
      cr_expect_eq(st, bad[i].status, "%s: %s", bad[i].name, attnmeta_status_string(st));
      cr_expect(strstr(attnmeta_last_error(ctx), bad[i].message), "%s: message \"%s\"",
                bad[i].name, attnmeta_last_error(ctx));
      amt_to_host(ctx, lens, d.lens, (size_t)(k->C + GUARD) * 4);
      for (j = 0; j < k->C + GUARD; j++)
        if (lens[j] != POISON32) {
          cr_expect_eq(lens[j], POISON32, "%s: swa_lens[%lld] written", bad[i].name,
                       (long long)j);
          break;
        }
      amt_dev_free(ctx, floor);
      close_step(ctx, &d);
    }
    attnmeta_close(ctx);
  }
}
