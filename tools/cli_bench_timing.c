/* attnmeta bench: the measurements (graph replay, eager launches, the copy
 * bandwidth) of one case and launch-config variant. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_bench_parts.h"

int bench_clampi(double v, int lo, int hi) {
  if (!(v >= lo)) return lo; /* NaN too */
  if (v > hi) return hi;
  return (int)v;
}

/* Graph timing with the replay count sized so that a repeat lasts about
 * target_ms. */
static attnmeta_status timed_graph(attnmeta_context *ctx, attnmeta_enqueue_fn fn, void *user,
                                   const options *o, attnmeta_graph_timing *g) {
  attnmeta_status st = attnmeta_measure_graph(ctx, fn, user, o->steps, 2, 1, g);
  int steps = o->steps, replays;
  if (st != ATTNMETA_OK) return st;
  double per_step = g->us_per_step.median > 1e-3 ? g->us_per_step.median : 1e-3;
  double calls = o->target_ms * 1e3 / per_step;
  if (!g->graph && calls < steps) steps = bench_clampi(calls, 1, steps); /* slow CPU steps */
  replays = bench_clampi(calls / steps, 2, 100000);
  return attnmeta_measure_graph(ctx, fn, user, steps, replays, o->repeats, g);
}

static attnmeta_status timed_eager(attnmeta_context *ctx, attnmeta_enqueue_fn fn, void *user,
                                   const options *o, attnmeta_eager_timing *e) {
  attnmeta_status st = attnmeta_measure_eager(ctx, fn, user, 20, 1, e);
  if (st != ATTNMETA_OK) return st;
  double per = e->complete_us_per_step.median > 1e-3 ? e->complete_us_per_step.median : 1e-3;
  return attnmeta_measure_eager(ctx, fn, user, bench_clampi(o->target_ms * 1e3 / per, 10, 20000),
                                o->repeats, e);
}

attnmeta_status bench_timed_copy(attnmeta_context *ctx, size_t bytes, const options *o,
                                  attnmeta_copy_timing *c) {
  attnmeta_status st = attnmeta_measure_copy(ctx, bytes, 2, 1, c);
  if (st != ATTNMETA_OK) return st;
  double per = c->us_per_copy.median > 1e-3 ? c->us_per_copy.median : 1e-3;
  return attnmeta_measure_copy(ctx, bytes, bench_clampi(o->target_ms * 1e3 / per, 2, 100000),
                               o->repeats, c);
}

void bench_run_case_variant(case_run *b, const variant *v, const options *o, result *res) {
  char why[200];
  attnmeta_status st;
  memset(res, 0, sizeof *res);
  res->checked = -1;
  res->nsets = b->nsets;
  st = attnmeta_set_launch_config(b->ctx, &v->config);
  if (st != ATTNMETA_OK) {
    res->skipped = st == ATTNMETA_ERR_NOT_SUPPORTED;
    snprintf(res->error, sizeof res->error, "%s: %s", res->skipped ? "skipped" : "failed",
             attnmeta_last_error(b->ctx));
    return;
  }
  /* Check one step on poisoned outputs first. */
  b->next = 0;
  if (bench_poison(b)) {
    snprintf(res->error, sizeof res->error, "poison: %s", attnmeta_last_error(b->ctx));
    return;
  }
  st = bench_enqueue_step(b, NULL);
  if (st == ATTNMETA_OK) st = attnmeta_synchronize(b->ctx, NULL);
  if (st != ATTNMETA_OK) {
    snprintf(res->error, sizeof res->error, "build step: %s: %s", attnmeta_status_string(st),
             attnmeta_last_error(b->ctx));
    return;
  }
  if (bench_check_outputs(b, b->last_set, why, sizeof why)) {
    res->checked = 0;
    snprintf(res->error, sizeof res->error, "check failed: %s", why);
    return;
  }
  st = timed_graph(b->ctx, bench_enqueue_step, b, o, &res->graph);
  if (st == ATTNMETA_OK) st = timed_eager(b->ctx, bench_enqueue_step, b, o, &res->eager);
  if (st != ATTNMETA_OK) {
    snprintf(res->error, sizeof res->error, "measure: %s: %s", attnmeta_status_string(st),
             attnmeta_last_error(b->ctx));
    return;
  }
  /* The outputs of the latest step, after all the timing, still right. */
  st = attnmeta_synchronize(b->ctx, NULL);
  if (st != ATTNMETA_OK || bench_check_outputs(b, b->last_set, why, sizeof why)) {
    res->checked = 0;
    snprintf(res->error, sizeof res->error, "check after timing failed: %s",
             st != ATTNMETA_OK ? attnmeta_last_error(b->ctx) : why);
    return;
  }
  res->checked = 1;
  res->ok = 1;
}
