// SPDX-License-Identifier: Apache-2.0
/*
 * Contract section 5b: the compressed groups' slot mappings from PCP's
 * logical slot mapping (vLLM's get_pcp_compressed_slot_mapping), on every
 * backend and launch configuration, against the naive reference
 * (reference_dsv4.c), with poisoned outputs and guard zones past them;
 * then its argument errors, which write nothing.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "harness.h"
#include "reference_dsv4.h"

#define GUARD 8
#define POISON INT64_C(0x5a5a5a5a5a5a5a5a)
#define MAX_T 40
#define MAX_GROUPS 3

typedef struct pcp_case {
  const char *name;
  int32_t R, T, C;
  int32_t qsl[5], seq_lens[4];
  int32_t lbs, ngroups, ratio[MAX_GROUPS];
  int with_lens; /* also each group's seq_lens_out */
} pcp_case;

static const pcp_case cases[] = {
    /* vLLM's DeepSeek-V4 layers: ratios 4 and 128 over one logical view */
    {"decode_and_prefill", 3, 12, 16, {0, 1, 2, 12}, {9, 130, 200}, 256, 3, {4, 128, 1}, 1},
    /* graph padding: tokens past qsl[R] still map their logical slots */
    {"padded", 2, 20, 24, {0, 5, 9}, {40, 9}, 512, 2, {4, 2}, 0},
    /* hostile boundaries: the slots read no request */
    {"hostile_boundaries", 3, 16, 16, {7, -3, 100, 2}, {5, -9, 1 << 30}, 128, 2, {128, 8}, 1},
    {"no_requests", 0, 9, 12, {0}, {0}, 64, 1, {4}, 1},
    {"no_tokens", 1, 0, 4, {0, 0}, {3}, 16, 1, {4}, 0},
};

/* Token t's logical slot and position: ordinary values, -1 and other
 * negative slots, positions of both signs and the int64 extremes. */
static int64_t logical_of(int32_t t) {
  switch (t % 9) {
    case 3: return -1;
    case 5: return t % 2 ? INT64_MAX : INT64_MAX - 77;
    case 7: return t % 2 ? INT64_MIN : -1000;
    default: return (int64_t)t * 997 + 13;
  }
}
static int64_t position_of(int32_t t) {
  switch (t % 11) {
    case 2: return -1;
    case 4: return INT64_MAX;
    case 6: return INT64_MIN;
    case 8: return -(int64_t)t * 4 - 1;
    default: return (int64_t)t * 3 + 3;
  }
}

typedef struct dev_step {
  attnmeta_step s;
  int64_t h_logical[MAX_T], h_pos[MAX_T];
  void *qsl, *seq, *logical, *pos, *slots[MAX_GROUPS], *lens[MAX_GROUPS];
} dev_step;

static void *upload(attnmeta_context *ctx, const void *src, size_t bytes) {
  void *d = amt_dev_alloc(ctx, bytes ? bytes : 8);
  if (bytes) amt_to_dev(ctx, d, src, bytes);
  return d;
}

/* Every output [0, n + GUARD) poisoned. */
static void poison(attnmeta_context *ctx, void *d, int64_t n, size_t es) {
  const size_t bytes = (size_t)(n + GUARD) * es;
  unsigned char *h = malloc(bytes);
  cr_assert(h);
  memset(h, 0x5a, bytes);
  amt_to_dev(ctx, d, h, bytes);
  free(h);
}

static void open_step(attnmeta_context *ctx, const pcp_case *k, dev_step *d) {
  attnmeta_step *s = &d->s;
  int32_t t, g;
  memset(d, 0, sizeof *d);
  for (t = 0; t < k->T; t++) {
    d->h_logical[t] = logical_of(t);
    d->h_pos[t] = position_of(t);
  }
  attnmeta_step_init(s);
  d->qsl = upload(ctx, k->qsl, ((size_t)k->R + 1) * 4);
  d->seq = upload(ctx, k->seq_lens, (size_t)k->R * 4);
  d->logical = upload(ctx, d->h_logical, (size_t)k->T * 8);
  d->pos = upload(ctx, d->h_pos, (size_t)k->T * 8);
  s->query_start_loc = d->qsl;
  s->seq_lens = d->seq;
  s->num_reqs = k->R;
  s->num_tokens = k->T;
  s->capacity = k->C;
  s->pcp_logical_slots = d->logical;
  s->pcp_positions = d->pos;
  s->pcp_logical_block_size = k->lbs;
  for (g = 0; g < k->ngroups; g++) {
    attnmeta_compressed_group *cg = &s->compressed_groups[g];
    d->slots[g] = amt_dev_alloc(ctx, (size_t)(k->C + GUARD) * 8);
    cg->slot_mapping = d->slots[g];
    cg->ratio = k->ratio[g];
    cg->block_size = k->lbs / k->ratio[g];
    if (k->with_lens) {
      d->lens[g] = amt_dev_alloc(ctx, (size_t)(k->R + GUARD) * 4);
      cg->seq_lens_out = d->lens[g];
    }
  }
}

static void close_step(attnmeta_context *ctx, dev_step *d) {
  int g;
  amt_dev_free(ctx, d->qsl);
  amt_dev_free(ctx, d->seq);
  amt_dev_free(ctx, d->logical);
  amt_dev_free(ctx, d->pos);
  for (g = 0; g < MAX_GROUPS; g++) {
    if (d->slots[g]) amt_dev_free(ctx, d->slots[g]);
    if (d->lens[g]) amt_dev_free(ctx, d->lens[g]);
  }
}

static void poison_outputs(attnmeta_context *ctx, const pcp_case *k, dev_step *d) {
  int g;
  for (g = 0; g < k->ngroups; g++) {
    poison(ctx, d->slots[g], k->C, 8);
    if (d->lens[g]) poison(ctx, d->lens[g], k->R, 4);
  }
}

/* The reference's outputs for the step of `d` (host copies of its inputs). */
static amr_dsv4_output *reference(const pcp_case *k, const dev_step *d, amr_input *in,
                                  amr_dsv4_input *di, attnmeta_step *host) {
  amr_dsv4_output *o;
  int g;
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
  host->pcp_logical_slots = d->h_logical;
  host->pcp_positions = d->h_pos;
  di->ngroups = k->ngroups;
  for (g = 0; g < k->ngroups; g++) {
    di->groups[g].ratio = k->ratio[g];
    di->groups[g].block_size = k->lbs / k->ratio[g];
  }
  di->swa_width = -1;
  di->c128a_width = -1;
  di->step = host;
  o = amr_dsv4_alloc(in, di);
  amr_dsv4_build(in, di, o);
  return o;
}

static int expect_group(attnmeta_context *ctx, const pcp_case *k, const dev_step *d,
                        const amr_dsv4_output *o, int g, const char *where) {
  int64_t slots[64 + GUARD];
  int32_t lens[8 + GUARD];
  int64_t i;
  int bad = 0;
  amt_to_host(ctx, slots, d->slots[g], (size_t)(k->C + GUARD) * 8);
  for (i = 0; i < k->C + GUARD && !bad; i++) {
    const int64_t want = i < k->C ? o->cslots[g][i] : POISON;
    if (slots[i] != want) {
      cr_expect_eq(slots[i], want, "%s group %d slot_mapping[%lld]: %lld, want %lld", where, g,
                   (long long)i, (long long)slots[i], (long long)want);
      bad = 1;
    }
  }
  if (!d->lens[g]) return bad;
  amt_to_host(ctx, lens, d->lens[g], (size_t)(k->R + GUARD) * 4);
  for (i = 0; i < k->R + GUARD && !bad; i++) {
    const int32_t want = i < k->R ? o->clens[g][i] : (int32_t)0x5a5a5a5a;
    if (lens[i] != want) {
      cr_expect_eq(lens[i], want, "%s group %d seq_lens_out[%lld]", where, g, (long long)i);
      bad = 1;
    }
  }
  return bad;
}

/* One case's run, for amt_step_every_case. */
typedef struct run {
  attnmeta_context *ctx;
  const pcp_case *k;
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
  int g;
  for (g = 0; g < r->k->ngroups; g++)
    if (expect_group(r->ctx, r->k, &r->d, r->o, g, where)) break;
  return 0; /* every configuration is checked, as before */
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

Test(pcp_slots, every_backend_matches_the_reference) {
  run r;
  amt_step_every_case((int)(sizeof cases / sizeof cases[0]), open_run, close_run, &r);
}

/* The formula's values at hand (vLLM's kernel): LBS 256, ratio 4, storage 64. */
Test(pcp_slots, reference_gives_vllms_values) {
  static const int64_t logical[6] = {1031, 1031, -1, 255, 0, 256};
  static const int64_t pos[6] = {3, 4, 3, -1, 7, INT64_MAX};
  static const int64_t want[6] = {257, -1, -1, 63, 0, 64};
  static const int32_t qsl[2] = {0, 6}, seq[1] = {6};
  attnmeta_step s;
  amr_input in;
  amr_dsv4_input di;
  amr_dsv4_output *o;
  int t;
  attnmeta_step_init(&s);
  s.pcp_logical_slots = logical;
  s.pcp_positions = pos;
  s.pcp_logical_block_size = 256;
  memset(&in, 0, sizeof in);
  memset(&di, 0, sizeof di);
  in.qsl = qsl;
  in.R = 1;
  in.T = in.C = 6;
  in.seq_lens = seq;
  in.world = in.interleave = in.block_size = 1;
  di.ngroups = 1;
  di.groups[0].ratio = 4;
  di.groups[0].block_size = 64;
  di.swa_width = di.c128a_width = -1;
  di.step = &s;
  o = amr_dsv4_alloc(&in, &di);
  amr_dsv4_build(&in, &di, o);
  /* 1031 = block 4, offset 7: 4 * 64 + 7 / 4 = 257; position -1 and
   * INT64_MAX complete a row as in vLLM's (pos + 1) % ratio */
  for (t = 0; t < 6; t++)
    cr_expect_eq(o->cslots[0][t], want[t], "token %d: %lld", t, (long long)o->cslots[0][t]);
  amr_dsv4_free(o);
}

typedef struct bad_arg {
  const char *name;
  attnmeta_status status;
  const char *message;
} bad_arg;

static void spoil(attnmeta_step *s, const char *name) {
  if (!strcmp(name, "positions_null")) s->pcp_positions = NULL;
  if (!strcmp(name, "lbs_0")) s->pcp_logical_block_size = 0;
  if (!strcmp(name, "lbs_not_multiple")) s->pcp_logical_block_size = 258;
  if (!strcmp(name, "storage_mismatch")) s->compressed_groups[1].block_size = 4;
  if (!strcmp(name, "dcp")) {
    s->dcp_world_size = 2;
    s->dcp_rank = 0;
  }
  if (!strcmp(name, "positions_misaligned"))
    s->pcp_positions = (const int64_t *)(const void *)((const char *)s->pcp_positions + 4);
}

Test(pcp_slots, bad_arguments_write_nothing) {
  static const bad_arg bad[] = {
      {"positions_null", ATTNMETA_ERR_NULL_POINTER,
       "pcp_positions is NULL but pcp_logical_slots is set"},
      {"lbs_0", ATTNMETA_ERR_INVALID_ARGUMENT, "pcp_logical_block_size (0) must be >= 1"},
      {"lbs_not_multiple", ATTNMETA_ERR_INVALID_ARGUMENT,
       "compressed_groups[0].block_size (64) must be pcp_logical_block_size (258) / ratio (4)"},
      {"storage_mismatch", ATTNMETA_ERR_INVALID_ARGUMENT,
       "compressed_groups[1].block_size (4) must be pcp_logical_block_size (256) / ratio (128)"},
      {"dcp", ATTNMETA_ERR_INVALID_ARGUMENT, "pcp_logical_slots needs dcp_world_size 1 (got 2)"},
      {"positions_misaligned", ATTNMETA_ERR_INVALID_ARGUMENT, "pcp_positions"},
  };
  attnmeta_backend be[AMT_MAX_BACKENDS];
  const int nb = amt_test_backends(be);
  const pcp_case *k = &cases[0];
  int b, i, g;
  for (b = 0; b < nb; b++) {
    attnmeta_context *ctx = amt_open_or_null(be[b]);
    if (!ctx) continue;
    for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
      dev_step d;
      attnmeta_status st;
      open_step(ctx, k, &d);
      poison_outputs(ctx, k, &d);
      spoil(&d.s, bad[i].name);
      st = attnmeta_build_step(ctx, &d.s, NULL);
      cr_expect_eq(st, bad[i].status, "%s: %s", bad[i].name, attnmeta_status_string(st));
      cr_expect(strstr(attnmeta_last_error(ctx), bad[i].message), "%s: message \"%s\"",
                bad[i].name, attnmeta_last_error(ctx));
      for (g = 0; g < k->ngroups; g++) {
        int64_t slots[16 + GUARD];
        int64_t j;
        amt_to_host(ctx, slots, d.slots[g], (size_t)(k->C + GUARD) * 8);
        for (j = 0; j < k->C + GUARD; j++)
          if (slots[j] != POISON) {
            cr_expect_eq(slots[j], POISON, "%s: group %d slot %lld written", bad[i].name, g,
                         (long long)j);
            break;
          }
      }
      close_step(ctx, &d);
    }
    attnmeta_close(ctx);
  }
}

/* Without pcp_logical_slots the positions are ignored: the table's slots. */
Test(pcp_slots, positions_alone_change_nothing) {
  attnmeta_context *ctx = amt_open_or_skip(ATTNMETA_BACKEND_CPU);
  static const int32_t qsl[2] = {0, 4}, seq[1] = {8}, table[2] = {3, 5};
  static const int64_t pos[4] = {-5, -5, -5, -5};
  int64_t slots[4];
  attnmeta_step s;
  void *d_qsl = upload(ctx, qsl, 8), *d_seq = upload(ctx, seq, 4), *d_tab = upload(ctx, table, 8);
  void *d_pos = upload(ctx, pos, 32), *d_out = amt_dev_alloc(ctx, 32);
  attnmeta_step_init(&s);
  s.query_start_loc = d_qsl;
  s.seq_lens = d_seq;
  s.num_reqs = 1;
  s.num_tokens = s.capacity = 4;
  s.pcp_positions = d_pos;
  s.pcp_logical_block_size = 0;
  s.compressed_groups[0].slot_mapping = d_out;
  s.compressed_groups[0].ratio = 2;
  s.compressed_groups[0].block_size = 2;
  s.compressed_groups[0].block_table = d_tab;
  s.compressed_groups[0].block_table_cols = 2;
  s.compressed_groups[0].block_table_stride = 2;
  cr_assert_eq(attnmeta_build_step(ctx, &s, NULL), ATTNMETA_OK, "%s", attnmeta_last_error(ctx));
  amt_to_host(ctx, slots, d_out, 32);
  /* positions 4..7: rows 2 (pos 5) and 3 (pos 7): block 5, offsets 0 and 1 */
  cr_expect(slots[0] == -1 && slots[1] == 10 && slots[2] == -1 && slots[3] == 11,
            "%lld %lld %lld %lld", (long long)slots[0], (long long)slots[1], (long long)slots[2],
            (long long)slots[3]);
  amt_dev_free(ctx, d_qsl);
  amt_dev_free(ctx, d_seq);
  amt_dev_free(ctx, d_tab);
  amt_dev_free(ctx, d_pos);
  amt_dev_free(ctx, d_out);
  attnmeta_close(ctx);
}
