// SPDX-License-Identifier: Apache-2.0
/* Option parsing shared by the subcommands (cli_options.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli_options.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---------------------------------------------------------------- cursor */

void cli_args_init(cli_args *a, const char *cmd, int argc, char **argv) {
  memset(a, 0, sizeof *a);
  a->cmd = cmd;
  a->argc = argc;
  a->argv = argv;
  a->i = 0;
}

int cli_next(cli_args *a) {
  const char *eq;
  size_t len;
  if (++a->i >= a->argc) return 0;
  a->arg = a->argv[a->i];
  a->inline_value = NULL;
  a->name[0] = '\0';
  a->positional = a->options_done || a->arg[0] != '-' || a->arg[1] == '\0';
  if (!a->options_done && strcmp(a->arg, "--") == 0) {
    a->options_done = 1;
    return cli_next(a);
  }
  if (a->positional) return 1;
  /* "--name=value": the value travels with the name (long options only) */
  eq = a->arg[1] == '-' ? strchr(a->arg, '=') : NULL;
  len = eq ? (size_t)(eq - a->arg) : strlen(a->arg);
  if (len >= sizeof a->name) len = sizeof a->name - 1;
  memcpy(a->name, a->arg, len);
  a->name[len] = '\0';
  if (eq) a->inline_value = eq + 1;
  return 1;
}

int cli_is(const cli_args *a, const char *name) {
  return !a->positional && strcmp(a->name, name) == 0;
}

int cli_is_help(const cli_args *a) { return cli_is(a, "--help") || cli_is(a, "-h"); }

const char *cli_value(cli_args *a) {
  if (a->inline_value) return a->inline_value;
  if (a->i + 1 >= a->argc) {
    fprintf(stderr, "%s: option %s needs a value\n", a->cmd, a->name);
    return NULL;
  }
  return a->argv[++a->i];
}

int cli_flag(const cli_args *a) {
  if (!a->inline_value) return 0;
  fprintf(stderr, "%s: option %s takes no value (got '%s')\n", a->cmd, a->name, a->inline_value);
  return -1;
}

int cli_help(const cli_args *a, void (*usage)(FILE *out)) {
  if (cli_flag(a)) return CLI_EXIT_USAGE;
  usage(stdout);
  return CLI_EXIT_OK;
}

int cli_next_own(cli_args *a, void (*usage)(FILE *out), attnmeta_backend *kind, int *device,
                 int *exit_code) {
  *exit_code = -1;
  while (cli_next(a)) {
    if (cli_is_help(a)) {
      *exit_code = cli_help(a, usage);
    } else if (cli_is(a, "--backend")) {
      if (cli_take_backend(a, kind)) *exit_code = CLI_EXIT_USAGE;
    } else if (cli_is(a, "--device")) {
      if (cli_take_device(a, device)) *exit_code = CLI_EXIT_USAGE;
    } else {
      return 1;
    }
    if (*exit_code >= 0) return 0;
  }
  return 0;
}

int cli_next_run(cli_args *a, void (*usage)(FILE *out), cli_run_options *r, int *exit_code) {
  while (cli_next_own(a, usage, &r->kind, &r->device, exit_code)) {
    int bad;
    if (cli_is(a, "--iters"))
      bad = cli_take_int(a, 0, CLI_MAX_ITERS, &r->iters);
    else if (cli_is(a, "--show"))
      bad = cli_take_int(a, 1, 64, &r->show);
    else
      return 1;
    if (bad) {
      *exit_code = CLI_EXIT_USAGE;
      return 0;
    }
  }
  return 0;
}

int cli_parse_shape(cli_args *a, void (*usage)(FILE *out), cli_run_options *r,
                    const cli_int_option *options, size_t count, void *shape) {
  int stop;
  while (cli_next_run(a, usage, r, &stop)) {
    const cli_int_option *o = NULL;
    int *at, bad;
    for (size_t i = 0; i < count && !o; ++i)
      if (cli_is(a, options[i].name)) o = &options[i];
    if (!o) return cli_unknown(a);
    at = (int *)(void *)((char *)shape + o->offset);
    if (o->flag) {
      bad = cli_flag(a);
      *at = 1;
    } else {
      bad = cli_take_int(a, o->lo, o->hi, at);
    }
    if (bad) return CLI_EXIT_USAGE;
  }
  return stop;
}

int cli_unknown(const cli_args *a) {
  if (a->positional)
    fprintf(stderr, "%s: unexpected argument '%s'\n", a->cmd, a->arg);
  else
    fprintf(stderr, "%s: unknown option '%s'\n", a->cmd, a->name);
  fprintf(stderr, "'%s --help' lists the options\n", a->cmd);
  return CLI_EXIT_USAGE;
}

/* ---------------------------------------------------------------- values */

int cli_parse_int64(const char *cmd, const char *opt, const char *text, int64_t lo, int64_t hi,
                    int64_t *out) {
  char *end = NULL;
  long long v;
  if (text[0] == '\0') {
    fprintf(stderr, "%s: %s: empty value, want a whole number in [%lld, %lld]\n", cmd, opt,
            (long long)lo, (long long)hi);
    return -1;
  }
  /* strtoll skips leading blanks and takes "+5"; a value is only digits with an optional '-' */
  if (!(isdigit((unsigned char)text[0]) || (text[0] == '-' && isdigit((unsigned char)text[1])))) {
    fprintf(stderr, "%s: %s: '%s' is not a whole number\n", cmd, opt, text);
    return -1;
  }
  errno = 0;
  v = strtoll(text, &end, 10);
  if (*end != '\0') {
    fprintf(stderr, "%s: %s: '%s' is not a whole number (unexpected '%s')\n", cmd, opt, text, end);
    return -1;
  }
  if (errno == ERANGE || v < lo || v > hi) {
    fprintf(stderr, "%s: %s: %s is out of range, want [%lld, %lld]\n", cmd, opt, text,
            (long long)lo, (long long)hi);
    return -1;
  }
  *out = (int64_t)v;
  return 0;
}

int cli_parse_int(const char *cmd, const char *opt, const char *text, int lo, int hi, int *out) {
  int64_t v;
  if (cli_parse_int64(cmd, opt, text, lo, hi, &v)) return -1;
  *out = (int)v;
  return 0;
}

int cli_parse_int_range(const char *cmd, const char *opt, const char *text, int lo, int hi,
                        int *from, int *to) {
  const char *dots = strstr(text, "..");
  char first[32];
  size_t len;
  if (!dots) {
    if (cli_parse_int(cmd, opt, text, lo, hi, from)) return -1;
    *to = *from;
    return 0;
  }
  len = (size_t)(dots - text);
  if (len >= sizeof first) {
    fprintf(stderr, "%s: %s: '%s' is not N or A..B\n", cmd, opt, text);
    return -1;
  }
  memcpy(first, text, len);
  first[len] = '\0';
  if (cli_parse_int(cmd, opt, first, lo, hi, from) ||
      cli_parse_int(cmd, opt, dots + 2, lo, hi, to))
    return -1;
  if (*from > *to) {
    fprintf(stderr, "%s: %s: '%s': the first bound is above the second\n", cmd, opt, text);
    return -1;
  }
  return 0;
}

int cli_parse_double(const char *cmd, const char *opt, const char *text, double lo, double hi,
                     double *out) {
  char *end = NULL;
  double v;
  if (text[0] == '\0' || isspace((unsigned char)text[0])) {
    fprintf(stderr, "%s: %s: empty value, want a number in [%g, %g]\n", cmd, opt, lo, hi);
    return -1;
  }
  errno = 0;
  v = strtod(text, &end);
  if (end == text || *end != '\0') {
    fprintf(stderr, "%s: %s: '%s' is not a number\n", cmd, opt, text);
    return -1;
  }
  if (!isfinite(v)) {
    fprintf(stderr, "%s: %s: '%s' is not a finite number\n", cmd, opt, text);
    return -1;
  }
  if (errno == ERANGE || v < lo || v > hi) {
    fprintf(stderr, "%s: %s: %s is out of range, want [%g, %g]\n", cmd, opt, text, lo, hi);
    return -1;
  }
  *out = v;
  return 0;
}

int cli_parse_backend(const char *text, attnmeta_backend *kind) {
  static const attnmeta_backend kinds[] = {ATTNMETA_BACKEND_AUTO, ATTNMETA_BACKEND_CPU,
                                           ATTNMETA_BACKEND_CUDA, ATTNMETA_BACKEND_HIP};
  size_t i;
  for (i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    if (strcasecmp(text, attnmeta_backend_name(kinds[i])) == 0) {
      *kind = kinds[i];
      return 0;
    }
  }
  return -1;
}

int cli_parse_backend_option(const char *cmd, const char *opt, const char *text,
                             attnmeta_backend *kind) {
  if (cli_parse_backend(text, kind) == 0) return 0;
  fprintf(stderr, "%s: %s: unknown backend '%s', want auto, cpu, cuda or hip\n", cmd, opt, text);
  return -1;
}

int cli_parse_launch_config(const char *cmd, const char *opt, const char *text,
                            attnmeta_launch_config *config) {
  static const char *const keys[] = {"block", "grid", "stage", "vector", "lanes"};
  const char *p = text;
  attnmeta_launch_config c = attnmeta_launch_config_default();
  if (*p == '\0') {
    fprintf(stderr, "%s: %s: empty value, want block=B,grid=G,stage=S,vector=V,lanes=L\n", cmd,
            opt);
    return -1;
  }
  while (*p) {
    const char *comma = strchr(p, ','), *eq;
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char item[64], name[80];
    size_t k;
    int value;
    if (len == 0 || len >= sizeof item) {
      fprintf(stderr, "%s: %s: '%s': want block=B,grid=G,stage=S,vector=V,lanes=L\n", cmd, opt,
              text);
      return -1;
    }
    memcpy(item, p, len);
    item[len] = '\0';
    eq = strchr(item, '=');
    for (k = 0; eq && k < sizeof keys / sizeof keys[0]; ++k)
      if (strlen(keys[k]) == (size_t)(eq - item) && strncmp(item, keys[k], (size_t)(eq - item)) == 0)
        break;
    if (!eq || k == sizeof keys / sizeof keys[0]) {
      fprintf(stderr, "%s: %s: '%s' is not one of block=, grid=, stage=, vector=, lanes=\n", cmd,
              opt, item);
      return -1;
    }
    snprintf(name, sizeof name, "%s %s=", opt, keys[k]);
    if (cli_parse_int(cmd, name, eq + 1, -1, 1 << 20, &value)) return -1;
    switch (k) {
      case 0: c.block = value; break;
      case 1: c.grid = value; break;
      case 2: c.stage = value; break;
      case 3: c.vector = value; break;
      default: c.lanes = value; break;
    }
    p += len + (comma ? 1 : 0);
    if (comma && *p == '\0') {
      fprintf(stderr, "%s: %s: '%s' ends with a comma\n", cmd, opt, text);
      return -1;
    }
  }
  *config = c;
  return 0;
}

int cli_take_int(cli_args *a, int lo, int hi, int *out) {
  const char *v = cli_value(a);
  return v ? cli_parse_int(a->cmd, a->name, v, lo, hi, out) : -1;
}

int cli_take_int64(cli_args *a, int64_t lo, int64_t hi, int64_t *out) {
  const char *v = cli_value(a);
  return v ? cli_parse_int64(a->cmd, a->name, v, lo, hi, out) : -1;
}

int cli_take_int_range(cli_args *a, int lo, int hi, int *from, int *to) {
  const char *v = cli_value(a);
  return v ? cli_parse_int_range(a->cmd, a->name, v, lo, hi, from, to) : -1;
}

int cli_take_double(cli_args *a, double lo, double hi, double *out) {
  const char *v = cli_value(a);
  return v ? cli_parse_double(a->cmd, a->name, v, lo, hi, out) : -1;
}

int cli_take_backend(cli_args *a, attnmeta_backend *kind) {
  const char *v = cli_value(a);
  return v ? cli_parse_backend_option(a->cmd, a->name, v, kind) : -1;
}

int cli_take_device(cli_args *a, int *device) { return cli_take_int(a, 0, 65535, device); }

/* ----------------------------------------------------------- environment */

int cli_open_context(const char *cmd, attnmeta_context **ctx, attnmeta_backend kind, int device) {
  const attnmeta_status st = attnmeta_open(ctx, kind, device);
  if (st == ATTNMETA_OK) return 0;
  fprintf(stderr, "%s: cannot open backend %s device %d: %s: %s\n", cmd,
          attnmeta_backend_name(kind), device, attnmeta_status_string(st), attnmeta_open_error());
  *ctx = NULL;
  return CLI_EXIT_USAGE;
}

/* ---------------------------------------------------------------- outputs */

int cli_output_open(const char *cmd, const char *opt, cli_output *out, const char *path) {
  out->path = path;
  out->file = NULL;
  if (!path) return 0;
  out->file = fopen(path, "w");
  if (!out->file) {
    fprintf(stderr, "%s: %s: cannot write '%s': %s\n", cmd, opt, path, strerror(errno));
    return -1;
  }
  return 0;
}

int cli_output_close(const char *cmd, cli_output *out) {
  int bad;
  if (!out->file) return 0;
  bad = ferror(out->file);
  bad |= fclose(out->file) != 0;
  out->file = NULL;
  if (bad) {
    fprintf(stderr, "%s: could not write '%s' completely\n", cmd, out->path);
    return -1;
  }
  return 0;
}

void cli_output_discard(cli_output *out) {
  if (!out->file) return;
  fclose(out->file);
  out->file = NULL;
  remove(out->path);
}

int cli_call(const char *cmd, attnmeta_context *ctx, attnmeta_status st, const char *what) {
  if (st == ATTNMETA_OK) return 0;
  fprintf(stderr, "%s: %s: %s: %s\n", cmd, what, attnmeta_status_string(st),
          attnmeta_last_error(ctx));
  return -1;
}

/* --------------------------------------------------------------- progress */

double cli_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_start(cli_progress *p, const char *cmd) {
  p->cmd = cmd;
  p->start_s = p->last_s = cli_now_s();
  p->printed = 0;
}

void cli_progress_tick(cli_progress *p, const char *what, int64_t done, int64_t total) {
  const double now = cli_now_s();
  if (now - p->last_s < 1.0) return;
  p->last_s = now;
  p->printed = 1;
  fprintf(stderr, "%s: %s %lld/%lld (%.0f s)\n", p->cmd, what, (long long)done, (long long)total,
          now - p->start_s);
  fflush(stderr);
}

void cli_progress_end(cli_progress *p, const char *what, int64_t total) {
  if (!p->printed) return;
  fprintf(stderr, "%s: %s %lld/%lld done (%.1f s)\n", p->cmd, what, (long long)total,
          (long long)total, cli_now_s() - p->start_s);
}

int cli_time_calls(const char *cmd, attnmeta_context *ctx, int iters, const char *unit,
                   int (*issue)(attnmeta_context *ctx, void *arg), void *arg) {
  cli_progress progress;
  double t0, since, now, issued = 0, total;
  char label[32];
  cli_progress_start(&progress, cmd);
  t0 = since = cli_now_s();
  for (int i = 0; i < iters; ++i) {
    if (issue(ctx, arg)) return -1;
    now = cli_now_s();
    if (now - since >= 1.0 && i + 1 < iters) {
      issued += now - since;
      if (cli_call(cmd, ctx, attnmeta_synchronize(ctx, NULL), "synchronize")) return -1;
      cli_progress_tick(&progress, "calls", i + 1, iters);
      since = cli_now_s();
    }
  }
  issued += cli_now_s() - since;
  if (cli_call(cmd, ctx, attnmeta_synchronize(ctx, NULL), "synchronize")) return -1;
  total = cli_now_s() - t0;
  cli_progress_end(&progress, "calls", iters);
  snprintf(label, sizeof label, "%d call%s", iters, iters == 1 ? "" : "s");
  printf("  %-18s %.2f us host time per call to issue, %.2f us per %s to complete\n", label,
         issued * 1e6 / iters, total * 1e6 / iters, unit);
  return 0;
}

double cli_time_one(const char *cmd, attnmeta_context *ctx,
                    int (*issue)(attnmeta_context *ctx, void *arg), void *arg) {
  const double t0 = cli_now_s();
  if (issue(ctx, arg) || cli_call(cmd, ctx, attnmeta_synchronize(ctx, NULL), "synchronize"))
    return -1;
  return cli_now_s() - t0;
}

/* wraps modulo 2^32 on purpose */
#if defined(__clang__)
__attribute__((no_sanitize("unsigned-integer-overflow")))
#endif
uint32_t cli_lcg(uint32_t *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return *seed >> 8;
}

int cli_upload(const char *cmd, attnmeta_context *ctx, void **dev, const void *host, size_t bytes) {
  return cli_call(cmd, ctx, attnmeta_device_alloc(ctx, bytes ? bytes : 4, dev), "allocate") ||
         (host && bytes &&
          cli_call(cmd, ctx, attnmeta_copy_to_device(ctx, *dev, host, bytes), "copy"));
}

void cli_print_banner(const char *cmd, attnmeta_context *ctx) {
  printf("%s on %s (%s)\n", cmd, attnmeta_backend_name(attnmeta_context_backend(ctx)),
         attnmeta_context_device_name(ctx));
}

void cli_print_int32s(const int32_t *v, int64_t n, int show) {
  for (int64_t i = 0; i < n && i < show; ++i) printf("%s%d", i ? ", " : "", v[i]);
  if (n > show) printf(", ...");
  printf("\n");
}

void cli_print_error_word(int32_t error_word) {
  char flags[256];
  attnmeta_error_flags_describe(error_word, flags, sizeof flags);
  printf("  %-16s 0x%x (%s)\n", "error word", (unsigned)error_word, flags);
}

int cli_print_timing(const char *cmd, attnmeta_context *ctx, double first_s, int iters,
                     const char *unit, int (*issue)(attnmeta_context *ctx, void *arg), void *arg) {
  printf("timing:\n  %-18s %.1f us (with synchronize)\n", "first call", first_s * 1e6);
  fflush(stdout);
  return iters > 0 ? cli_time_calls(cmd, ctx, iters, unit, issue, arg) : 0;
}

int cli_run_op(const cli_op *op, const cli_run_options *ro) {
  attnmeta_context *ctx = NULL;
  int rc = CLI_EXIT_USAGE;
  double first;
  if (cli_open_context(op->cmd, &ctx, ro->kind, ro->device)) {
    op->teardown(NULL, op->state);
    return CLI_EXIT_USAGE;
  }
  if (!op->setup(ctx, op->state)) {
    rc = CLI_EXIT_FAILED;
    if ((first = cli_time_one(op->cmd, ctx, op->issue, op->call)) >= 0) {
      const int reported = op->report(ctx, op->state, ro->show);
      if (reported == CLI_EXIT_USAGE)
        rc = CLI_EXIT_USAGE;
      else if (reported >= 0 &&
               !cli_print_timing(op->cmd, ctx, first, ro->iters, op->unit, op->issue, op->call))
        rc = reported;
    }
  }
  op->teardown(ctx, op->state);
  attnmeta_close(ctx);
  return rc;
}
