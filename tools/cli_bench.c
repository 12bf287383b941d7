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

/* Parses "block=B,grid=G,stage=S,vector=V,lanes=L" (any subset) or "default". */
static int parse_config(const char *text, variant *v) {
  char buf[256];
  char *save = NULL, *item;
  v->config = attnmeta_launch_config_default();
  snprintf(v->label, sizeof v->label, "%s", text);
  if (strcmp(text, "default") == 0 || text[0] == '\0') return 0;
  snprintf(buf, sizeof buf, "%s", text);
  for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    char *end = NULL;
    long value;
    if (!eq) return -1;
    *eq = '\0';
    value = strtol(eq + 1, &end, 10);
    if (end == eq + 1 || *end != '\0' || value < -1 || value > 1 << 20) return -1;
    if (strcmp(item, "block") == 0) v->config.block = (int)value;
    else if (strcmp(item, "grid") == 0) v->config.grid = (int)value;
    else if (strcmp(item, "stage") == 0) v->config.stage = (int)value;
    else if (strcmp(item, "vector") == 0) v->config.vector = (int)value;
    else if (strcmp(item, "lanes") == 0) v->config.lanes = (int)value;
    else return -1;
  }
  return 0;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: attnmeta bench [--backend B] [--device N] [--config SPEC]... [--case NAME]...\n"
          "                      [--repeats N] [--steps N] [--sets N] [--target-ms MS]\n"
          "                      [--copy-bytes N] [--quick] [--warm-only] [--json FILE] [--list]\n"
          "  --config SPEC  a launch-config variant, \"block=B,grid=G,stage=S,vector=V,lanes=L\"\n"
          "                 (any subset; 0 / -1 = automatic) or \"default\"; repeatable.\n"
          "                 Without it: the default configuration only\n"
          "  --case NAME    only this case (repeatable); --list shows the names\n"
          "  --repeats N    repeats per measurement, median reported (default 7)\n"
          "  --steps N      steps captured per graph (default 50)\n"
          "  --sets N       input sets rotated (default: 8 when they fit in %u MiB, else 1)\n"
          "  --target-ms MS wall time one repeat aims at (default 20)\n"
          "  --copy-bytes N size of the copy the bandwidth floor is measured with\n"
          "                 (default 256 MiB on a GPU, 64 MiB on the CPU)\n"
          "  --quick        3 repeats, 5 ms a repeat\n"
          "  --warm-only    no cold figures (on a GPU each case is also timed, at the first\n"
          "                 variant, with its inputs out of L2: input sets rotated past 2 x\n"
          "                 the L2 size, or an L2 scrub before each step, subtracted)\n"
          "  --cold-cache-bytes N  the cache size the cold figures defeat, instead of the\n"
          "                 device's; also gives the CPU backend cold figures\n"
          "  --json FILE    write every number, the date, the device and the version\n",
          SET_BUDGET_BYTES >> 20);
}

int cli_bench(int argc, char **argv) {
  options o;
  variant variants[MAX_VARIANTS];
  bench_case cases[MAX_CASES];
  int case_ids[MAX_CASES];
  static result res[MAX_VARIANTS][MAX_CASES];
  int nvariants = 0, ncases_all, ncases = 0, rc = 1, failures = 0;
  attnmeta_context *ctx = NULL;
  run_info ri;

  memset(&o, 0, sizeof o);
  o.kind = ATTNMETA_BACKEND_AUTO;
  o.repeats = 7;
  o.steps = 50;
  o.target_ms = 20.0;
  ncases_all = bench_make_cases(cases);
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const int has = i + 1 < argc;
    if (strcmp(a, "--backend") == 0 && has) {
      if (cli_parse_backend(argv[++i], &o.kind)) {
        fprintf(stderr, "attnmeta bench: unknown backend '%s'\n", argv[i]);
        return 2;
      }
    } else if (strcmp(a, "--device") == 0 && has) {
      o.device = atoi(argv[++i]);
    } else if (strcmp(a, "--config") == 0 && has) {
      if (nvariants == MAX_VARIANTS || parse_config(argv[++i], &variants[nvariants])) {
        fprintf(stderr, "attnmeta bench: bad or too many --config '%s'\n", argv[i]);
        return 2;
      }
      ++nvariants;
    } else if (strcmp(a, "--case") == 0 && has) {
      if (o.n_only < MAX_CASES) o.only[o.n_only++] = argv[++i];
    } else if (strcmp(a, "--repeats") == 0 && has) {
      o.repeats = atoi(argv[++i]);
    } else if (strcmp(a, "--steps") == 0 && has) {
      o.steps = atoi(argv[++i]);
    } else if (strcmp(a, "--sets") == 0 && has) {
      o.sets = atoi(argv[++i]);
    } else if (strcmp(a, "--target-ms") == 0 && has) {
      o.target_ms = atof(argv[++i]);
    } else if (strcmp(a, "--copy-bytes") == 0 && has) {
      o.copy_bytes = (size_t)strtoull(argv[++i], NULL, 10);
    } else if (strcmp(a, "--warm-only") == 0) {
      o.warm_only = 1;
    } else if (strcmp(a, "--cold-cache-bytes") == 0 && has) {
      o.cold_cache_bytes = strtoll(argv[++i], NULL, 10);
    } else if (strcmp(a, "--quick") == 0) {
      o.repeats = 3;
      o.target_ms = 5.0;
    } else if (strcmp(a, "--json") == 0 && has) {
      o.json = argv[++i];
    } else if (strcmp(a, "--list") == 0) {
      for (int k = 0; k < ncases_all; ++k) printf("%-18s %s\n", cases[k].name, cases[k].label);
      return 0;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "attnmeta bench: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (o.repeats < 1 || o.steps < 1 || o.sets < 0 || o.sets > MAX_SETS || !(o.target_ms > 0)) {
    fprintf(stderr, "attnmeta bench: --repeats and --steps must be >= 1, --sets in [0, %d], "
                    "--target-ms > 0\n", MAX_SETS);
    return 2;
  }
  if (nvariants == 0) parse_config("default", &variants[nvariants++]);
  for (int k = 0; k < ncases_all; ++k) {
    int wanted = o.n_only == 0;
    for (int j = 0; j < o.n_only; ++j) wanted |= strcmp(o.only[j], cases[k].name) == 0;
    if (wanted) case_ids[ncases++] = k;
  }
  if (ncases == 0) {
    fprintf(stderr, "attnmeta bench: no case matches; --list shows the names\n");
    return 2;
  }

  if (bench_report(NULL, attnmeta_open(&ctx, o.kind, o.device), "open")) return 1;
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
    if ((ri.is_gpu || o.cold_cache_bytes > 0) && !o.warm_only && res[0][k].ok) {
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

  if (o.json && bench_write_json(o.json, &ri, &o, cases, case_ids, ncases, variants, nvariants, res)) {
    fprintf(stderr, "attnmeta bench: cannot write %s\n", o.json);
    failures++;
  }
  if (ri.is_gpu) {
    bench_print_gpu_table(&ri, cases, case_ids, ncases, variants, nvariants, res);
  } else {
    bench_print_cpu_table(&ri, cases, case_ids, ncases, variants, nvariants, res);
  }
  rc = failures ? 1 : 0;

done:
  attnmeta_close(ctx);
  return rc;
}

