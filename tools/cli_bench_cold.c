// SPDX-License-Identifier: Apache-2.0
/* attnmeta bench: the cold figure of a case, its step timed with the inputs
 * out of the device's last-level cache (a serving step reads a block table
 * the host or another kernel wrote in between, not one left in L2 by the
 * step before).
 *
 * Where at most MAX_SETS input sets make more than 2 x the cache (the wide
 * cases), the graph cycles through that many sets, one step each, so every
 * step's inputs were evicted since their last use. Otherwise (sets of a few
 * kB would need hundreds of thousands), each step follows a scrub: an
 * attnmeta step whose only product is a seq_lens_out of 2 x the cache,
 * cleared (C - T elements written, nothing read); the graph of scrubs alone
 * is timed the same way and subtracted. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_bench_parts.h"

typedef struct scrubbed {
  attnmeta_context *ctx;
  case_run *b;          /* NULL: the scrub alone */
  attnmeta_step scrub;  /* writes 2 x the cache */
} scrubbed;

static attnmeta_status enqueue_scrubbed(void *user, void *stream) {
  scrubbed *s = (scrubbed *)user;
  attnmeta_status st = attnmeta_build_step(s->ctx, &s->scrub, stream);
  if (st == ATTNMETA_OK && s->b) st = bench_enqueue_step(s->b, stream);
  return st;
}

/* Graph timing as the warm figure's, `steps` calls a graph. */
static attnmeta_status timed(attnmeta_context *ctx, attnmeta_enqueue_fn fn, void *user, int steps,
                             const options *o, attnmeta_graph_timing *g) {
  attnmeta_status st = attnmeta_measure_graph(ctx, fn, user, steps, 2, 1, g);
  double per;
  if (st != ATTNMETA_OK) return st;
  per = g->us_per_step.median > 1e-3 ? g->us_per_step.median : 1e-3;
  return attnmeta_measure_graph(ctx, fn, user, steps,
                                bench_clampi(o->target_ms * 1e3 / per / steps, 2, 100000),
                                o->repeats, g);
}

static void fail(cold_result *out, attnmeta_context *ctx, const char *what) {
  snprintf(out->error, sizeof out->error, "%s: %s", what, attnmeta_last_error(ctx));
}

/* The outputs the last set got in the timing, against the naive ones: 0 with
 * out->error when they are wrong or the wait for them failed. */
static int checked_after_timing(attnmeta_context *ctx, case_run *b, cold_result *out) {
  char why[200];
  if (attnmeta_synchronize(ctx, NULL) != ATTNMETA_OK)
    snprintf(why, sizeof why, "synchronize: %s", attnmeta_last_error(ctx));
  else if (!bench_check_outputs(b, b->last_set, why, sizeof why))
    return 1;
  snprintf(out->error, sizeof out->error, "check after the cold timing failed: %s", why);
  return 0;
}

void bench_run_cold(attnmeta_context *ctx, const bench_case *bc, const options *o,
                    int64_t cache_bytes, cold_result *out) {
  const double set_bytes = 4.0 * ((double)bc->num_reqs * bc->cols + 2.0 * bc->num_reqs + 1);
  const int64_t need = (int64_t)(2.0 * (double)cache_bytes / set_bytes) + 1;
  const int steps = o->steps;
  case_run b;
  attnmeta_graph_timing g;
  memset(out, 0, sizeof *out);
  out->cache_bytes = cache_bytes;
  if (cache_bytes <= 0) {
    snprintf(out->error, sizeof out->error, "the backend does not report its cache size");
    return;
  }
  if (need <= MAX_SETS) { /* rotation */
    const int sets = (int)need;
    if (bench_case_setup(&b, ctx, bc, sets)) {
      fail(out, ctx, "set-up of the cold sets");
      bench_case_free(&b);
      return;
    }
    b.next = 0;
    if (bench_poison(&b) || timed(ctx, bench_enqueue_step, &b, sets > steps ? sets : steps, o, &g)) {
      fail(out, ctx, "cold timing");
    } else if (checked_after_timing(ctx, &b, out)) {
      out->ok = 1;
      out->us_per_step = g.us_per_step;
      out->input_sets = sets;
      snprintf(out->method, sizeof out->method,
               "%d input sets rotated (%.0f MB, %.1f x the %.0f MB cache)", sets,
               sets * set_bytes / 1e6, sets * set_bytes / (double)cache_bytes,
               (double)cache_bytes / 1e6);
    }
    bench_case_free(&b);
    return;
  }
  { /* scrub, subtracted */
    const int64_t words = 2 * cache_bytes / 4 + 1;
    int32_t *scrub_buf = NULL, *zero = NULL;
    scrubbed with, alone;
    attnmeta_graph_timing ga;
    if (words > INT32_MAX) {
      snprintf(out->error, sizeof out->error, "a %lld-byte cache is too large to scrub",
               (long long)cache_bytes);
      return;
    }
    if (bench_case_setup(&b, ctx, bc, 0)) {
      fail(out, ctx, "set-up");
      bench_case_free(&b);
      return;
    }
    if (attnmeta_device_alloc(ctx, (size_t)words * 4, (void **)&scrub_buf) ||
        attnmeta_device_alloc(ctx, 8, (void **)&zero) ||
        attnmeta_copy_to_device(ctx, zero, (const int32_t[2]){0, 0}, 8)) {
      fail(out, ctx, "scrub buffer");
      goto scrub_done;
    }
    memset(&with, 0, sizeof with);
    attnmeta_step_init(&with.scrub);
    with.scrub.query_start_loc = zero; /* R = 0, T = 0: the whole buffer is the tail */
    with.scrub.seq_lens = zero;
    with.scrub.capacity = (int32_t)words;
    with.scrub.seq_lens_out = scrub_buf;
    with.ctx = ctx;
    with.b = &b;
    alone = with;
    alone.b = NULL;
    b.next = 0;
    if (bench_poison(&b) || timed(ctx, enqueue_scrubbed, &with, steps, o, &g) ||
        timed(ctx, enqueue_scrubbed, &alone, steps, o, &ga)) {
      fail(out, ctx, "cold timing");
    } else if (checked_after_timing(ctx, &b, out)) {
      /* a graph of steps with scrubs minus one of scrubs alone; the spread
       * is the widest the two spreads allow */
      out->ok = 1;
      out->us_per_step.median = g.us_per_step.median - ga.us_per_step.median;
      out->us_per_step.min = g.us_per_step.min - ga.us_per_step.max;
      out->us_per_step.max = g.us_per_step.max - ga.us_per_step.min;
      out->scrub_us = ga.us_per_step.median;
      out->input_sets = b.nsets;
      snprintf(out->method, sizeof out->method,
               "%.0f MB written before each step (2 x the cache), its %.2f us subtracted",
               (double)words * 4 / 1e6, ga.us_per_step.median);
    }
  scrub_done:
    attnmeta_device_free(ctx, scrub_buf);
    attnmeta_device_free(ctx, zero);
    bench_case_free(&b);
  }
}
