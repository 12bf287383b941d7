// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta bench: the cases of the performance targets, each building the
 * token map AND the indexer decode metadata (seq_lens_out with capacity > T,
 * block_table_out, decode_lens, req_indices, per_req_lens) in ONE
 * attnmeta_build_step, on any backend.
 *
 * Per case: realistic inputs (KV lengths of a few thousand tokens, distinct
 * non-zero block ids), several input sets rotated when they are small (the
 * captured graph cycles through them), outputs poisoned and one step checked
 * against a naive host computation before timing, and the last step checked
 * again after it. On a GPU: device time per step from a replayed graph of 50
 * steps (median of repeats), eager host time per step, launches per step
 * from the graph's kernel nodes, the empty-kernel floors, bandwidth against
 * the measured device copy, and the ratios to the targets and to the Triton
 * anchors of the design notes. On the CPU: time per step, and bandwidth
 * against memcpy of the same bytes.
 *
 * --config "block=B,grid=G,stage=S,vector=V,lanes=L" (repeatable) times
 * several launch-config variants in one run. The table comes last; --json
 * writes everything.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_bench_parts.h"
#include "cli_options.h"

/* ---- options ---- */

#define CMD "attnmeta bench"

/* "default", or a launch config for cli_parse_launch_config. */
static int parse_config(const char *opt, const char *text, variant *v) {
  snprintf(v->label, sizeof v->label, "%s", text);
  if (strcmp(text, "default") == 0) {
    v->config = attnmeta_launch_config_default();
    return 0;
  }
  return cli_parse_launch_config(CMD, opt, text, &v->config);
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: attnmeta bench [--backend B] [--device N] [--config SPEC]...\n"
          "                      [--case NAME]... [--repeats N] [--steps N] [--sets N]\n"
          "                      [--target-ms MS] [--copy-bytes N] [--quick] [--warm-only]\n"
          "                      [--cold-cache-bytes N] [--json FILE] [--list]\n"
          "  --config SPEC  a launch-config variant,\n"
          "                 \"block=B,grid=G,stage=S,vector=V,lanes=L\"\n"
          "                 (any subset; 0 / -1 = automatic) or \"default\"; repeatable.\n"
          "                 Without it: the default configuration only\n"
          "  --case NAME    only this case (repeatable); --list shows the names\n"
          "  --repeats N    repeats per measurement, median reported, 1 .. 1000 (default 7)\n"
          "  --steps N      steps captured per graph, 1 .. 10000 (default 50)\n"
          "  --sets N       input sets rotated (default: 8 when they fit in %u MiB, else 1;\n"
          "                 at most %d)\n"
          "  --target-ms MS wall time one repeat aims at, 0.01 .. 60000 (default 20)\n"
          "  --copy-bytes N size of the copy the bandwidth floor is measured with,\n"
          "                 4 .. 2^36 (default 256 MiB on a GPU, 64 MiB on the CPU)\n"
          "  --quick        3 repeats, 5 ms a repeat\n"
          "  --warm-only    no cold figures (on a GPU each case is also timed, at the first\n"
          "                 variant, with its inputs out of L2: input sets rotated past 2 x\n"
          "                 the L2 size, or an L2 scrub before each step, subtracted)\n"
          "  --cold-cache-bytes N  the cache size the cold figures defeat, instead of the\n"
          "                 device's, 1 .. 2^40; also gives the CPU backend cold figures\n"
          "  --json FILE    write every number, the date, the device and the version\n"
          "                 (opened first: a path that cannot be written fails at once)\n"
          "  --list         the case names, then exit\n"
          "Progress goes to stderr, the table to stdout. Exits 1 when a case fails its\n"
          "check or a measurement fails.\n" CLI_EXIT_STATUS_HELP,
          SET_BUDGET_BYTES >> 20, MAX_SETS);
}

int cli_bench(int argc, char **argv) {
  options o;
  variant variants[MAX_VARIANTS];
  bench_case cases[MAX_CASES];
  int case_ids[MAX_CASES];
  static result res[MAX_VARIANTS][MAX_CASES];
  int nvariants = 0, ncases_all, ncases = 0, rc = CLI_EXIT_FAILED, stop, failures = 0, list = 0;
  cli_args a;
  cli_output json = {NULL, NULL};
  attnmeta_context *ctx = NULL;
  run_info ri;

  memset(&o, 0, sizeof o);
  o.kind = ATTNMETA_BACKEND_AUTO;
  o.repeats = 7;
  o.steps = 50;
  o.target_ms = 20.0;
  ncases_all = bench_make_cases(cases);
  cli_args_init(&a, CMD, argc, argv);
  while (cli_next_own(&a, usage, &o.kind, &o.device, &stop)) {
    int bad = 0;
    if (cli_is(&a, "--config")) {
      const char *v = cli_value(&a);
      if (v && nvariants == MAX_VARIANTS) {
        fprintf(stderr, CMD ": --config: at most %d variants\n", MAX_VARIANTS);
        return CLI_EXIT_USAGE;
      }
      bad = !v || parse_config(a.name, v, &variants[nvariants++]);
    } else if (cli_is(&a, "--case")) {
      const char *v = cli_value(&a);
      int known = 0;
      for (int k = 0; v && k < ncases_all; ++k) known |= strcmp(v, cases[k].name) == 0;
      if (v && !known) {
        fprintf(stderr, CMD ": --case: no case named '%s'; --list shows the names\n", v);
        return CLI_EXIT_USAGE;
      }
      if (v && o.n_only < MAX_CASES) o.only[o.n_only++] = v;
      bad = !v;
    } else if (cli_is(&a, "--repeats")) {
      bad = cli_take_int(&a, 1, 1000, &o.repeats);
    } else if (cli_is(&a, "--steps")) {
      bad = cli_take_int(&a, 1, 10000, &o.steps);
    } else if (cli_is(&a, "--sets")) {
      bad = cli_take_int(&a, 0, MAX_SETS, &o.sets);
    } else if (cli_is(&a, "--target-ms")) {
      bad = cli_take_double(&a, 0.01, 60000.0, &o.target_ms);
    } else if (cli_is(&a, "--copy-bytes")) {
      int64_t bytes = 0;
      bad = cli_take_int64(&a, 4, INT64_C(1) << 36, &bytes);
      o.copy_bytes = (size_t)bytes;
    } else if (cli_is(&a, "--warm-only")) {
      bad = cli_flag(&a);
      o.warm_only = 1;
    } else if (cli_is(&a, "--cold-cache-bytes")) {
      bad = cli_take_int64(&a, 1, INT64_C(1) << 40, &o.cold_cache_bytes);
    } else if (cli_is(&a, "--quick")) {
      bad = cli_flag(&a);
      o.repeats = 3;
      o.target_ms = 5.0;
    } else if (cli_is(&a, "--json")) {
      o.json = cli_value(&a);
      bad = !o.json;
    } else if (cli_is(&a, "--list")) {
      if (cli_flag(&a)) return CLI_EXIT_USAGE;
      list = 1;
    } else {
      return cli_unknown(&a);
    }
    if (bad) return CLI_EXIT_USAGE;
  }
  if (stop >= 0) return stop;
  if (list) {
    for (int k = 0; k < ncases_all; ++k) printf("%-18s %s\n", cases[k].name, cases[k].label);
    return CLI_EXIT_OK;
  }
  if (nvariants == 0) parse_config("--config", "default", &variants[nvariants++]);
  for (int k = 0; k < ncases_all; ++k) {
    int wanted = o.n_only == 0;
    for (int j = 0; j < o.n_only; ++j) wanted |= strcmp(o.only[j], cases[k].name) == 0;
    if (wanted) case_ids[ncases++] = k;
  }
  if (ncases == 0) {
    fprintf(stderr, CMD ": no case matches; --list shows the names\n");
    return CLI_EXIT_USAGE;
  }

  /* the report file first: a path that cannot be written fails before the run */
  if (cli_output_open(CMD, "--json", &json, o.json)) return CLI_EXIT_USAGE;
  if (cli_open_context(CMD, &ctx, o.kind, o.device)) {
    cli_output_discard(&json);
    return CLI_EXIT_USAGE;
  }
  memset(&ri, 0, sizeof ri);
  {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ri.date, sizeof ri.date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  }
  ri.backend = attnmeta_backend_name(attnmeta_context_backend(ctx));
  ri.device_name = attnmeta_context_device_name(ctx);
  ri.is_gpu = attnmeta_context_backend(ctx) != ATTNMETA_BACKEND_CPU;
  if (attnmeta_backend_targets(attnmeta_context_backend(ctx), &ri.targets) != ATTNMETA_OK)
    ri.targets = "";
  if (!o.copy_bytes) o.copy_bytes = ri.is_gpu ? (size_t)256 << 20 : (size_t)64 << 20;
  if (attnmeta_measure_cache_bytes(ctx, &ri.cache_bytes) != ATTNMETA_OK) ri.cache_bytes = 0;
  if (o.cold_cache_bytes > 0) ri.cache_bytes = o.cold_cache_bytes;
  fprintf(stderr, "attnmeta bench: %s (%s), %d case(s), %d variant(s)\n", ri.backend,
          ri.device_name, ncases, nvariants);

  /* Floors, measured in this run. */
  fprintf(stderr, "  %-32s", "floors (empty kernel, copy)");
  fflush(stderr);
  {
    int replays;
    if (bench_report(ctx, attnmeta_measure_empty_kernel(ctx, 50, 2, 20, 1, &ri.empty), "empty kernel"))
      goto done;
    replays = bench_clampi(o.target_ms * 1e3 / (50.0 * (ri.empty.graph_us_per_node.median > 1e-3
                                                       ? ri.empty.graph_us_per_node.median
                                                       : 1e-3)),
                     2, 100000);
    if (bench_report(ctx,
               attnmeta_measure_empty_kernel(
                   ctx, 50, replays,
                   bench_clampi(o.target_ms * 1e3 / (ri.empty.launch_complete_us.median > 1e-3
                                                   ? ri.empty.launch_complete_us.median
                                                   : 1e-3),
                          10, 20000),
                   o.repeats, &ri.empty),
               "empty kernel") ||
        bench_report(ctx, bench_timed_copy(ctx, o.copy_bytes, &o, &ri.peak_copy), "copy bandwidth"))
      goto done;
  }
  fprintf(stderr, " .\n");

  for (int k = 0; k < ncases; ++k) {
    const bench_case *c = &cases[case_ids[k]];
    case_run b;
    attnmeta_copy_timing same;
    const double bytes = bench_case_bytes(c);
    fprintf(stderr, "  %-32s", c->label);
    fflush(stderr);
    if (bench_case_setup(&b, ctx, c, o.sets)) {
      for (int vi = 0; vi < nvariants; ++vi)
        snprintf(res[vi][k].error, sizeof res[vi][k].error, "setup: %s",
                 attnmeta_last_error(ctx));
      bench_case_free(&b);
      ++failures;
      fprintf(stderr, " setup failed\n");
      continue;
    }
    memset(&same, 0, sizeof same);
    bench_report(ctx, bench_timed_copy(ctx, (size_t)(bytes / 2 > 4 ? bytes / 2 : 4), &o, &same),
           "same-bytes copy");
    for (int vi = 0; vi < nvariants; ++vi) {
      bench_run_case_variant(&b, &variants[vi], &o, &res[vi][k]);
      res[vi][k].copy = same;
      if (!res[vi][k].ok && !res[vi][k].skipped) ++failures;
      fprintf(stderr, " %s", res[vi][k].ok ? "." : res[vi][k].skipped ? "-" : "x");
      fflush(stderr);
    }
    bench_case_free(&b);
    /* the cold figure, at the first variant's launch config */
    if ((ri.is_gpu || o.cold_cache_bytes > 0) && !o.warm_only && res[0][k].ok &&
        c->topk_count == 0) { /* the top-k cases: warm only */
      attnmeta_set_launch_config(ctx, &variants[0].config);
      bench_run_cold(ctx, c, &o, ri.cache_bytes, &res[0][k].cold);
      fprintf(stderr, " cold %s", res[0][k].cold.ok ? "." : "x");
      if (!res[0][k].cold.ok) ++failures;
    }
    fprintf(stderr, "\n");
    attnmeta_set_launch_config(ctx, NULL);
  }
  for (int vi = 0; vi < nvariants; ++vi)
    for (int k = 0; k < ncases; ++k)
      if (!res[vi][k].ok) fprintf(stderr, "attnmeta bench: %s, %s: %s\n", variants[vi].label,
                                  cases[case_ids[k]].label, res[vi][k].error);
  for (int k = 0; k < ncases; ++k)
    if (res[0][k].ok && res[0][k].cold.error[0])
      fprintf(stderr, "attnmeta bench: %s, cold: %s\n", cases[case_ids[k]].label,
              res[0][k].cold.error);

  if (json.file && (bench_write_json(json.file, &ri, &o, cases, case_ids, ncases, variants,
                                     nvariants, res) |
                    cli_output_close(CMD, &json))) {
    fprintf(stderr, CMD ": --json: could not write %s\n", o.json);
    failures++;
  }
  if (ri.is_gpu) {
    bench_print_gpu_table(&ri, cases, case_ids, ncases, variants, nvariants, res);
  } else {
    bench_print_cpu_table(&ri, cases, case_ids, ncases, variants, nvariants, res);
  }
  rc = failures ? CLI_EXIT_FAILED : CLI_EXIT_OK;

done:
  cli_output_discard(&json); /* a run that stopped early leaves no partial report */
  attnmeta_close(ctx);
  return rc;
}

