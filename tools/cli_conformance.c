// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta conformance: runs conformance vector files (docs/conformance.md)
 * on one backend and device. One line per vector (pass, FAIL with a
 * reproduction, or skip when the backend does not support it), then the
 * summary line "N passed, N failed, N skipped"; optional JSON report.
 * Exit status: 0 when nothing failed, 1 when a vector failed, 2 when the
 * run could not be made (usage, unreadable or malformed file, no backend).
 *
 * The checking engine (guarded, poisoned device arena; every launch config
 * of the sweep; every variant) is the one the Criterion suite uses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnmeta/conformance/vecfile.h"
#include "attnmeta/conformance/vecfile_topk.h"
#include "attnmeta/conformance/vecrun.h"
#include "cli.h"
#include "cli_options.h"
#include "cli_vector_dir.h"

#define CMD "attnmeta conformance"
#define MAX_CONFIGS 64
#define MAX_DETAILS 24 /* failures kept per vector (all counted) */

static void usage(FILE *out) {
  fprintf(out,
          "usage: attnmeta conformance [--backend B] [--device N] [--config SPEC]...\n"
          "                            [--vector NAME]... [--json FILE] [--verbose]\n"
          "                            [FILES...]\n"
          "  FILES          vector files (*.amv) or folders holding them; default: the set\n"
          "                 installed with the tool (<prefix>/share/attnmeta/vectors)\n"
          "  --backend B    auto (default; $ATTNMETA_BACKEND overrides), cpu, cuda, hip\n"
          "  --device N     device index (default 0)\n"
          "  --config SPEC  launch configs, repeatable: 'sweep' (default: the backend's\n"
          "                 whole test sweep), 'auto' (automatic choices only), a sweep name\n"
          "                 such as 'block1_grid1', or \"block=B,grid=G,stage=S,vector=V,lanes=L\"\n"
          "  --vector NAME  only the vectors of this name (repeatable, or a comma list)\n"
          "  --json FILE    also write a JSON report to FILE\n"
          "  --verbose      print every failure (up to %d a vector), not only the first\n"
          "Prints one line per vector, then 'N passed, N failed, N skipped'; exits 1 when\n"
          "a vector failed, 2 when the run could not be made (an unreadable or malformed\n"
          "file, no backend or device). The JSON file is opened before the run.\n" CLI_EXIT_STATUS_HELP,
          MAX_DETAILS);
}

/* ---------------------------------------------------------------- configs */

typedef struct config_set {
  amv_launch list[MAX_CONFIGS];
  char names[MAX_CONFIGS][96];
  int n;
} config_set;

static int add_config(config_set *cs, const char *name, attnmeta_launch_config config) {
  if (cs->n == MAX_CONFIGS) return -1;
  snprintf(cs->names[cs->n], sizeof cs->names[cs->n], "%s", name);
  cs->list[cs->n].name = cs->names[cs->n];
  cs->list[cs->n].config = config;
  cs->n++;
  return 0;
}

/* Resolves the --config arguments against the opened backend's sweep. */
static int resolve_configs(attnmeta_backend kind, char **specs, int nspecs, config_set *cs) {
  const amv_launch *sweep;
  const int nsweep = amv_launch_sweep(kind, &sweep);
  int i, j;
  cs->n = 0;
  if (nspecs == 0) {
    for (j = 0; j < nsweep; j++) add_config(cs, sweep[j].name, sweep[j].config);
    return 0;
  }
  for (i = 0; i < nspecs; i++) {
    attnmeta_launch_config c;
    int found = 0;
    if (strcmp(specs[i], "sweep") == 0) {
      for (j = 0; j < nsweep; j++)
        if (add_config(cs, sweep[j].name, sweep[j].config)) return -1;
      continue;
    }
    for (j = 0; j < nsweep && !found; j++)
      if (strcmp(specs[i], sweep[j].name) == 0) {
        if (add_config(cs, sweep[j].name, sweep[j].config)) return -1;
        found = 1;
      }
    if (found) continue;
    if (strchr(specs[i], '=') == NULL) {
      fprintf(stderr,
              CMD ": --config '%s' is not 'sweep', 'auto', a sweep name of the %s backend or "
              "block=..,grid=..,stage=..,vector=..,lanes=..\n",
              specs[i], attnmeta_backend_name(kind));
      return -1;
    }
    if (cli_parse_launch_config(CMD, "--config", specs[i], &c)) return -1;
    if (add_config(cs, specs[i], c)) return -1;
  }
  return 0;
}

/* ------------------------------------------------------------ collection */

typedef struct vector_report {
  int64_t failures;
  int kept;
  amv_failure details[MAX_DETAILS];
  char variants[MAX_DETAILS][64]; /* a failure's variant name lives only during the callback */
} vector_report;

static void collect(void *user, const amv_failure *f) {
  vector_report *r = user;
  if (r->kept < MAX_DETAILS) {
    snprintf(r->variants[r->kept], sizeof r->variants[r->kept], "%s", f->variant);
    r->details[r->kept] = *f;
    r->details[r->kept].variant = r->variants[r->kept];
    r->kept++;
  }
  r->failures++;
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    const unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static int listed(const char *list, const char *name) {
  const size_t n = strlen(name);
  const char *p = list;
  while (*p) {
    const char *comma = strchr(p, ',');
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0) return 1;
    p += len + (comma ? 1 : 0);
  }
  return 0;
}

static double now_s(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A failure's text without its leading "vector=NAME " (the line names it). */
static const char *without_vector(const char *text) {
  const char *space = strchr(text, ' ');
  return strncmp(text, "vector=", 7) == 0 && space ? space + 1 : text;
}

/* A command line that runs this vector again on this config. */
static void repro(char *buf, size_t size, const char *backend, int device, const char *config,
                  const char *vector, const char *path) {
  const int quote = strchr(config, ',') || strchr(config, '=');
  const int named = strcmp(config, "-") != 0 && strcmp(config, "current") != 0;
  snprintf(buf, size, "attnmeta conformance --backend %s --device %d%s%s%s%s --vector %s %s",
           backend, device, named ? " --config " : "", quote ? "'" : "", named ? config : "",
           quote ? "'" : "", vector, path);
}

int cli_conformance(int argc, char **argv) {
  attnmeta_backend kind = ATTNMETA_BACKEND_AUTO;
  int device = 0, verbose = 0, i, nfiles = 0, nspecs = 0, rc = 2, f;
  const char *json_path = NULL;
  char **specs = calloc((size_t)argc, sizeof(char *));
  char **args = calloc((size_t)argc, sizeof(char *));
  char *only = NULL;
  size_t only_len = 0;
  char **paths = NULL;
  int npaths = 0;
  attnmeta_context *ctx = NULL;
  config_set *cs = calloc(1, sizeof *cs);
  vector_report *rep = calloc(1, sizeof *rep);
  FILE *json = NULL;
  cli_output report = {NULL, NULL};
  cli_args a;
  int wrote = 0;
  int64_t passed = 0, failed = 0, skipped = 0, matched = 0;
  const char *backend;
  double t_start;
  char err[1024];
  char default_dir[4096];

  if (!specs || !args || !cs || !rep) {
    fprintf(stderr, CMD ": out of memory\n");
    goto done;
  }
  cli_args_init(&a, CMD, argc, argv);
  while (cli_next(&a)) {
    const char *v;
    if (a.positional) {
      args[nfiles++] = argv[a.i];
    } else if (cli_is_help(&a)) {
      if (cli_flag(&a)) goto done;
      usage(stdout);
      rc = 0;
      goto done;
    } else if (cli_is(&a, "--backend")) {
      if (cli_take_backend(&a, &kind)) goto done;
    } else if (cli_is(&a, "--device")) {
      if (cli_take_device(&a, &device)) goto done;
    } else if (cli_is(&a, "--config")) {
      attnmeta_launch_config c;
      if (!(v = cli_value(&a))) goto done;
      /* a spec is checked now; sweep names once the backend is open */
      if (strchr(v, '=') && cli_parse_launch_config(CMD, a.name, v, &c)) goto done;
      specs[nspecs++] = (char *)v;
    } else if (cli_is(&a, "--vector")) {
      size_t add;
      char *p;
      if (!(v = cli_value(&a))) goto done;
      add = strlen(v);
      p = realloc(only, only_len + add + 2);
      if (!p) goto done;
      only = p;
      if (only_len) only[only_len++] = ',';
      memcpy(only + only_len, v, add + 1);
      only_len += add;
    } else if (cli_is(&a, "--json")) {
      if (!(json_path = cli_value(&a))) goto done;
    } else if (cli_is(&a, "--verbose")) {
      if (cli_flag(&a)) goto done;
      verbose = 1;
    } else {
      rc = cli_unknown(&a);
      goto done;
    }
  }
  if (nfiles == 0) { /* no files given: the set installed with the tool */
    if (cli_installed_vector_dir(default_dir, sizeof default_dir)) {
      fprintf(stderr, CMD ": no vector files given and no installed set at '%s'\n",
              default_dir);
      usage(stderr);
      goto done;
    }
    args[nfiles++] = default_dir;
  }
  for (i = 0; i < nfiles; i++) {
    char **more;
    const int n = amv_list_files(args[i], &more, err, sizeof err);
    char **all;
    if (n < 0) {
      fprintf(stderr, CMD ": %s\n", err);
      goto done;
    }
    all = realloc(paths, (size_t)(npaths + n + 1) * sizeof(char *));
    if (!all) {
      amv_free_list(more, n);
      goto done;
    }
    paths = all;
    memcpy(paths + npaths, more, (size_t)n * sizeof(char *));
    npaths += n;
    free(more);
  }

  /* every file is checked before anything runs */
  for (f = 0; f < npaths; f++) {
    amv_file af;
    int v;
    if (amv_load_headers(paths[f], &af, err, sizeof err)) {
      fprintf(stderr, CMD ": %s\n", err);
      goto done;
    }
    for (v = 0; v < af.nvectors; v++) matched += !only || listed(only, af.vectors[v].name);
    amv_file_free(&af);
  }
  if (matched == 0) {
    fprintf(stderr, CMD ": no vector%s%s in the files given\n",
            only ? " named " : "", only ? only : "");
    goto done;
  }
  matched = 0;

  /* the report file before the run: a path that cannot be written fails at once */
  if (cli_output_open(CMD, "--json", &report, json_path)) goto done;
  json = report.file;
  if (cli_open_context(CMD, &ctx, kind, device)) goto done;
  kind = attnmeta_context_backend(ctx);
  backend = attnmeta_backend_name(kind);
  if (resolve_configs(kind, specs, nspecs, cs)) goto done;

  printf(CMD ": library %s, backend %s (%s), device %d\n",
         attnmeta_version_string(), backend, attnmeta_context_device_name(ctx), device);
  printf("launch configs:");
  for (i = 0; i < cs->n; i++) printf(" %s", cs->list[i].name);
  printf("\n");
  fflush(stdout);
  if (json) {
    wrote = 1;
    fprintf(json, "{\n  \"format\": \"attnmeta-conformance-report\",\n  \"version\": 1,\n");
    fprintf(json, "  \"library\": \"%s\",\n  \"backend\": \"%s\",\n  \"device\": %d,\n",
            attnmeta_version_string(), backend, device);
    fprintf(json, "  \"device_name\": ");
    json_string(json, attnmeta_context_device_name(ctx));
    fprintf(json, ",\n  \"configs\": [");
    for (i = 0; i < cs->n; i++) {
      const attnmeta_launch_config *c = &cs->list[i].config;
      fprintf(json, "%s\n    {\"name\": ", i ? "," : "");
      json_string(json, cs->list[i].name);
      fprintf(json, ", \"block\": %d, \"grid\": %d, \"stage\": %d, \"vector\": %d, \"lanes\": %d}",
              c->block, c->grid, c->stage, c->vector, c->lanes);
    }
    fprintf(json, "\n  ],\n  \"files\": [");
    for (f = 0; f < npaths; f++) {
      fprintf(json, "%s\n    ", f ? "," : "");
      json_string(json, paths[f]);
    }
    fprintf(json, "\n  ],\n  \"vectors\": [");
  }

  t_start = now_s();
  for (f = 0; f < npaths; f++) {
    amv_file af;
    int v;
    if (amv_load(paths[f], NULL, &af, err, sizeof err)) {
      fprintf(stderr, CMD ": %s\n", err);
      if (json) fprintf(json, "\n  ]\n}\n");
      goto done;
    }
    for (v = 0; v < af.nvectors; v++) {
      const amv_vector *vec = &af.vectors[v];
      amv_runner runner;
      amv_outcome out;
      const char *word;
      char line[1536], again[1024];
      double t0;
      int d;
      if (only && !listed(only, vec->name)) continue;
      matched++;
      memset(rep, 0, sizeof *rep);
      memset(&runner, 0, sizeof runner);
      runner.ctx = ctx;
      runner.configs = cs->list;
      runner.nconfigs = cs->n;
      runner.config_only = -1;
      runner.report = collect;
      runner.user = rep;
      t0 = now_s();
      amv_run_vector(&runner, vec, &out);
      again[0] = 0;
      if (out.result == AMV_PASS) {
        passed++;
        word = "pass";
        printf("pass  %s  %s\n", paths[f], vec->name);
      } else if (out.result == AMV_SKIP) {
        skipped++;
        word = "skip";
        printf("skip  %s  %s  not supported: %s\n", paths[f], vec->name, out.reason);
      } else {
        const amv_failure *first = &rep->details[0];
        failed++;
        word = "fail";
        repro(again, sizeof again, backend, device, first->config, vec->name, paths[f]);
        snprintf(line, sizeof line, "FAIL  %s  %s  line=%d %s; %lld failures in this vector",
                 paths[f], vec->name, vec->line, without_vector(first->text),
                 (long long)rep->failures);
        printf("%s | repro: %s\n", line, again);
        if (verbose)
          for (d = 1; d < rep->kept; d++)
            printf("      %s\n", without_vector(rep->details[d].text));
      }
      fflush(stdout);
      if (json) {
        fprintf(json, "%s\n    {\"file\": ", matched > 1 ? "," : "");
        json_string(json, paths[f]);
        fprintf(json, ", \"line\": %d, \"name\": ", vec->line);
        json_string(json, vec->name);
        fprintf(json,
                ", \"result\": \"%s\", \"ranks\": %d, \"launches\": %lld, \"failures\": %lld, "
                "\"seconds\": %.3f",
                word, vec->op == AMV_OP_TOPK ? vec->topk->nranks : vec->op == AMV_OP_POOL ? 1 : vec->nranks, (long long)out.launches, (long long)rep->failures,
                now_s() - t0);
        if (out.result == AMV_SKIP) {
          fprintf(json, ", \"reason\": ");
          json_string(json, out.reason);
        }
        if (out.result == AMV_FAIL) {
          fprintf(json, ", \"repro\": ");
          json_string(json, again);
          fprintf(json, ", \"details\": [");
          for (d = 0; d < rep->kept; d++) {
            const amv_failure *x = &rep->details[d];
            fprintf(json, "%s\n      {\"rank\": %d, \"config\": ", d ? "," : "", (int)x->rank);
            json_string(json, x->config);
            fprintf(json, ", \"variant\": ");
            json_string(json, x->variant);
            fprintf(json, ", \"product\": ");
            json_string(json, x->product);
            fprintf(json, ", \"index\": %lld, \"expected\": %lld, \"got\": %lld, \"wrong\": %lld",
                    (long long)x->index, (long long)x->expected, (long long)x->got,
                    (long long)x->wrong);
            fprintf(json, ", \"where\": ");
            json_string(json, x->where);
            fprintf(json, ", \"text\": ");
            json_string(json, x->text);
            fprintf(json, "}");
          }
          fprintf(json, "\n    ]");
        }
        fprintf(json, "}");
      }
    }
    amv_file_free(&af);
  }
  printf("%lld vectors, %d launch configs, %.1f s\n", (long long)matched, cs->n, now_s() - t_start);
  printf("%lld passed, %lld failed, %lld skipped\n", (long long)passed, (long long)failed,
         (long long)skipped);
  if (json)
    fprintf(json, "\n  ],\n  \"summary\": {\"passed\": %lld, \"failed\": %lld, \"skipped\": %lld}\n}\n",
            (long long)passed, (long long)failed, (long long)skipped);
  rc = failed ? 1 : 0;

done:
  if (rc == 2 && !wrote) {
    cli_output_discard(&report); /* nothing ran: no empty report left behind */
  } else if (cli_output_close(CMD, &report)) {
    rc = 2;
  }
  attnmeta_close(ctx);
  amv_free_list(paths, npaths);
  free(specs);
  free(args);
  free(only);
  free(cs);
  free(rep);
  return rc;
}
