// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta step: one decode step, built on the default (or given) backend.
 * By default 64 requests with 1 to 4 query tokens each (speculative
 * decoding), KV lengths of a few thousand tokens, a 512-column block table
 * (block size 64), padded to a power of two as a captured graph would be;
 * every size is an option (cli_step_tables.c). The DeepSeek-V4 products
 * (compressed groups of ratio 4 and 128, SWA and C128A rows) are built when
 * --products names them. Prints the shape it built, a labelled view of
 * every product, the error word and the timing.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "cli.h"
#include "cli_options.h"
#include "cli_step.h"

#define CMD "attnmeta step"
#define MAX_ENTRIES (INT64_C(1) << 28) /* of any one array: 1 GiB of int32 */

typedef struct step_run {
  step_plan plan;
  int want[64]; /* step_products[i] is built */
  int show;
  void *host_in[16], *dev_in[16];
  void *dev_out[64];
} step_run;

static void usage(FILE *out) {
  fprintf(out,
          "usage: attnmeta step [--backend B] [--device N] [--iters N] [--products LIST]\n"
          "                     [--show N] [shape options]\n"
          "Builds one decode step's metadata in one attnmeta_build_step call, prints the\n"
          "shape it built, the first entries of every product, the error word, and the time\n"
          "of the first call and of N more calls.\n"
          "  --backend B        auto (default; $ATTNMETA_BACKEND overrides), cpu, cuda, hip\n"
          "  --device N         device index (default 0)\n"
          "  --iters N          timed calls after the first, 0 .. %d (default 1000)\n"
          "  --products LIST    comma list of the products to build; 'dsv4' names the\n"
          "                     DeepSeek-V4 ones, 'all' every one (default: all but those):",
          CLI_MAX_ITERS);
  {
    int column = 80;
    for (size_t i = 0; i < step_product_count; ++i) {
      const int len = (int)strlen(step_products[i].name) + 2; /* " name," */
      if (i) column += fprintf(out, ",");
      if (column + len > 80) column = fprintf(out, "\n                     ") - 1;
      else column += fprintf(out, " ");
      column += fprintf(out, "%s", step_products[i].name);
    }
  }
  fprintf(out,
          "\n"
          "  --show N           entries shown of each product, 1 .. 64 (default 8)\n"
          "shape options:\n");
  for (size_t i = 0; i < step_shape_option_count; ++i) {
    const step_shape_option *o = &step_shape_options[i];
    const char *line = o->help;
    char left[40];
    snprintf(left, sizeof left, "%s %s", o->name, o->metavar);
    fprintf(out, "  %-18s ", left);
    /* a help text's later lines are indented to its first */
    for (const char *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1)
      fprintf(out, "%.*s\n  %-18s ", (int)(nl - line), line, "");
    fprintf(out, "%s\n", line);
  }
  fprintf(out, "Exits 1 when the error word is not 0 or a call fails.\n" CLI_EXIT_STATUS_HELP);
}

/* --products: 0, or -1 after a message. */
static int parse_products(const char *text, int *want) {
  const char *p = text;
  memset(want, 0, sizeof(int) * step_product_count);
  while (*p) {
    const char *comma = strchr(p, ',');
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    size_t i;
    if ((len == 3 && strncmp(p, "all", 3) == 0) || (len == 4 && strncmp(p, "dsv4", 4) == 0)) {
      for (i = 0; i < step_product_count; ++i) want[i] |= len == 3 || step_products[i].dsv4;
      p += len + (comma ? 1 : 0);
      continue;
    }
    for (i = 0; i < step_product_count; ++i)
      if (strlen(step_products[i].name) == len && strncmp(step_products[i].name, p, len) == 0)
        break;
    if (i == step_product_count) {
      fprintf(stderr, CMD ": --products: unknown product '%.*s'; 'attnmeta step --help' lists them\n",
              (int)len, p);
      return -1;
    }
    want[i] = 1;
    p += len + (comma ? 1 : 0);
  }
  return 0;
}

/* One shape option; 1 if the argument was one (0 ok / -1 bad in *bad). */
static int take_shape_option(cli_args *a, step_shape *s, int *bad) {
  for (size_t i = 0; i < step_shape_option_count; ++i) {
    const step_shape_option *o = &step_shape_options[i];
    int *field = (int *)((char *)s + o->offset);
    if (!cli_is(a, o->name)) continue;
    if (o->offset_to)
      *bad = cli_take_int_range(a, o->lo, o->hi, field, (int *)((char *)s + o->offset_to));
    else
      *bad = cli_take_int(a, o->lo, o->hi, field);
    return 1;
  }
  return 0;
}

static int64_t next_power_of_two(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

static int draw(uint32_t *seed, int lo, int hi) {
  return lo + (int)(cli_lcg(seed) % ((uint32_t)(hi - lo) + 1u));
}

/* Draws the lengths and derives T and C; -1 after a message when the shape
 * cannot be built. */
static int make_plan(step_plan *p) {
  const step_shape *s = &p->shape;
  uint32_t seed = (uint32_t)s->seed;
  int64_t actual = 0, tokens, capacity, max_pos = 0;
  if (s->dcp_rank >= s->dcp_world) {
    fprintf(stderr, CMD ": --dcp-rank %d must be below --dcp-world %d\n", s->dcp_rank,
            s->dcp_world);
    return -1;
  }
  p->qlens = calloc((size_t)s->reqs + 1, sizeof(int32_t));
  p->context = calloc((size_t)s->reqs + 1, sizeof(int32_t));
  if (!p->qlens || !p->context) {
    fprintf(stderr, CMD ": out of host memory for %d requests\n", s->reqs);
    return -1;
  }
  for (int r = 0; r < s->reqs; ++r) {
    p->qlens[r] = draw(&seed, s->qlen_min, s->qlen_max);
    p->context[r] = draw(&seed, s->context_min, s->context_max);
    actual += p->qlens[r];
    if (p->qlens[r] > 0 && (int64_t)p->context[r] + p->qlens[r] - 1 > max_pos)
      max_pos = (int64_t)p->context[r] + p->qlens[r] - 1;
  }
  tokens = s->pad >= 0 ? actual + s->pad : next_power_of_two(actual);
  capacity = s->capacity ? s->capacity : (tokens / 512 + 1) * 512;
  if (tokens > INT32_MAX / 2 || tokens * (s->cols ? s->cols : 1) > MAX_ENTRIES ||
      (int64_t)s->reqs * s->cols > MAX_ENTRIES) {
    fprintf(stderr,
            CMD ": the step is too large (%lld tokens, %d requests, %d columns): an array would "
                "hold more than 2^28 entries; lower --reqs, --qlen, --pad or --cols\n",
            (long long)tokens, s->reqs, s->cols);
    return -1;
  }
  if (capacity < tokens) {
    fprintf(stderr, CMD ": --capacity %lld is below the %lld padded tokens\n", (long long)capacity,
            (long long)tokens);
    return -1;
  }
  if ((int64_t)max_pos + 1 > INT32_MAX - s->qlen_max) {
    fprintf(stderr, CMD ": KV lengths past 2^31; lower --context\n");
    return -1;
  }
  {
    /* every real token's block must be inside the table: the rows a request
     * needs, counted in virtual blocks of block_size * dcp_world positions */
    const int64_t per_block = (int64_t)s->block_size * s->dcp_world;
    const int64_t needed = actual > 0 ? max_pos / per_block + 1 : 0;
    if (needed > s->cols) {
      fprintf(stderr,
              CMD ": KV lengths up to %lld with block size %d (DCP world %d) need at least %lld "
                  "block-table columns; --cols is %d\n",
              (long long)max_pos + 1, s->block_size, s->dcp_world, (long long)needed, s->cols);
      return -1;
    }
  }
  p->actual = (int)actual;
  p->tokens = (int)tokens;
  p->capacity = (int)capacity;
  p->c128a_width = (int)((max_pos + 1) / STEP_C128_RATIO);
  return 0;
}

/* Every wanted product fits the tool's limit; -1 after a message. */
static int products_fit(const step_run *run) {
  for (size_t i = 0; i < step_product_count; ++i) {
    const int64_t n = step_products[i].count(&run->plan);
    if (run->want[i] && n > MAX_ENTRIES) {
      fprintf(stderr,
              CMD ": %s would hold %lld entries, more than 2^28; lower --qlen, --pad or "
                  "--swa-window\n",
              step_products[i].name, (long long)n);
      return -1;
    }
  }
  return 0;
}

static const char *plural(int64_t n, const char *one, const char *many) {
  return n == 1 ? one : many;
}

static int any_dsv4(const step_run *run) {
  for (size_t i = 0; i < step_product_count; ++i)
    if (run->want[i] && step_products[i].dsv4) return 1;
  return 0;
}

static int call(attnmeta_context *ctx, attnmeta_status st, const char *what) {
  return cli_call(CMD, ctx, st, what);
}

static size_t bytes_of(int64_t count, size_t elem) { return (size_t)(count > 0 ? count : 1) * elem; }

/* Allocates and fills the inputs, allocates the wanted products. */
static int setup(attnmeta_context *ctx, step_run *run, attnmeta_step *step) {
  const step_plan *p = &run->plan;
  const int64_t parts = (int64_t)(step_input_count + step_product_count);
  cli_progress progress;
  cli_progress_start(&progress, CMD);
  attnmeta_step_init(step);
  step_configure(step, p);
  for (size_t i = 0; i < step_input_count; ++i) {
    const step_input *in = &step_inputs[i];
    const size_t bytes = bytes_of(in->count(p), in->elem_bytes);
    run->host_in[i] = calloc(1, bytes);
    if (!run->host_in[i]) {
      fprintf(stderr, CMD ": out of host memory for %s\n", in->name);
      return -1;
    }
    in->fill(p, run->host_in[i]);
    if (call(ctx, attnmeta_device_alloc(ctx, bytes, &run->dev_in[i]), "allocate") ||
        call(ctx, attnmeta_copy_to_device(ctx, run->dev_in[i], run->host_in[i], bytes), "copy"))
      return -1;
    step_attach(step, p, in->offset, in->settings, run->dev_in[i]);
    cli_progress_tick(&progress, "inputs and outputs set up", (int64_t)i + 1, parts);
  }
  for (size_t i = 0; i < step_product_count; ++i) {
    const step_product *out = &step_products[i];
    if (!run->want[i]) continue;
    if (call(ctx,
             attnmeta_device_alloc(ctx, bytes_of(out->count(p), out->elem_bytes), &run->dev_out[i]),
             "allocate"))
      return -1;
    step_attach(step, p, out->offset, out->settings, run->dev_out[i]);
    cli_progress_tick(&progress, "inputs and outputs set up",
                      (int64_t)(step_input_count + i + 1), parts);
  }
  cli_progress_end(&progress, "inputs and outputs set up", parts);
  return 0;
}

static void teardown(attnmeta_context *ctx, step_run *run) {
  for (size_t i = 0; i < step_input_count; ++i) {
    if (ctx) attnmeta_device_free(ctx, run->dev_in[i]);
    free(run->host_in[i]);
  }
  for (size_t i = 0; i < step_product_count; ++i)
    if (ctx) attnmeta_device_free(ctx, run->dev_out[i]);
  free(run->plan.qlens);
  free(run->plan.context);
}

static void print_shape(const step_run *run) {
  const step_plan *p = &run->plan;
  const step_shape *s = &p->shape;
  printf("shape:\n");
  printf("  %-18s %d\n", "requests", s->reqs);
  printf("  %-18s %d..%d per request (seed %d): %d real %s\n", "query lengths", s->qlen_min,
         s->qlen_max, s->seed, p->actual, plural(p->actual, "token", "tokens"));
  printf("  %-18s %d %s, to %d%s\n", "padding", p->tokens - p->actual,
         plural(p->tokens - p->actual, "token", "tokens"), p->tokens,
         s->pad < 0 ? " (the next power of two)" : "");
  printf("  %-18s %d\n", "capacity", p->capacity);
  printf("  %-18s %d..%d tokens before the step's\n", "KV context", s->context_min,
         s->context_max);
  printf("  %-18s %d columns, block size %d\n", "block table", s->cols, s->block_size);
  printf("  %-18s world %d, rank %d, interleave %d\n", "DCP", s->dcp_world, s->dcp_rank,
         s->dcp_interleave);
  if (any_dsv4(run)) {
    printf("  %-18s ratio %d (%d rows a block) and %d (%d rows a block), the step's table\n",
           "compressed groups", STEP_C4_RATIO, step_dsv4_block_size(s, STEP_C4_RATIO),
           STEP_C128_RATIO, step_dsv4_block_size(s, STEP_C128_RATIO));
    printf("  %-18s window %d, causal, %d positions a block\n", "SWA rows", s->swa_window,
           step_swa_block_size(s));
    printf("  %-18s ratio %d, width %d, global slots, %d rows a block\n", "C128A rows",
           STEP_C128_RATIO, p->c128a_width, step_dsv4_block_size(s, STEP_C128_RATIO));
  }
}

static void print_values(const void *host, size_t elem, int64_t from, int64_t to) {
  for (int64_t i = from; i < to; ++i) {
    const long long v = elem == 8 ? (long long)((const int64_t *)host)[i]
                                  : (long long)((const int32_t *)host)[i];
    printf("%s%lld", i > from ? ", " : "", v);
  }
}

/* A product's first entries (its first row for a [T][cols] one), and for a
 * token-long product the entries around the last real token. */
static int print_product(attnmeta_context *ctx, const step_run *run, size_t i) {
  const step_product *out = &step_products[i];
  const step_plan *p = &run->plan;
  const int64_t n = out->count(p);
  const int64_t row = out->row ? out->row(p) : 0;
  const size_t bytes = bytes_of(n, out->elem_bytes);
  void *host = malloc(bytes);
  char type[48];
  if (!host) {
    fprintf(stderr, CMD ": out of host memory to read %s back\n", out->name);
    return -1;
  }
  if (call(ctx, attnmeta_copy_to_host(ctx, host, run->dev_out[i], bytes), "copy back")) {
    free(host);
    return -1;
  }
  if (row)
    snprintf(type, sizeof type, "int%d[%lld][%lld]", (int)out->elem_bytes * 8,
             (long long)(n / row), (long long)row);
  else
    snprintf(type, sizeof type, "int%d[%lld]", (int)out->elem_bytes * 8, (long long)n);
  printf("  %-16s %-16s %s", out->name, type, row ? "row 0: " : "");
  {
    const int64_t head = row ? (row < run->show ? row : run->show) : (n < run->show ? n : run->show);
    print_values(host, out->elem_bytes, 0, head);
    if (head < (row ? row : n)) printf(", ...");
  }
  /* the padding boundary of a token-long product: the last two real tokens, the first padding ones */
  if (!row && n == p->tokens && p->tokens > p->actual && p->actual > run->show) {
    const int64_t from = p->actual - 2, to = p->actual + 2 < n ? p->actual + 2 : n;
    printf("  | t=%lld..%lld: ", (long long)from, (long long)to - 1);
    print_values(host, out->elem_bytes, from, to);
  }
  printf("\n");
  free(host);
  return 0;
}

/* One timed call of the step. */
static int issue_step(attnmeta_context *ctx, void *step) {
  return call(ctx, attnmeta_build_step(ctx, (const attnmeta_step *)step, NULL), "build step");
}

int cli_step(int argc, char **argv) {
  cli_run_options ro = {ATTNMETA_BACKEND_AUTO, 0, 1000, 8};
  int rc = CLI_EXIT_FAILED, stop, any = 0;
  int32_t error_word = 0;
  attnmeta_context *ctx = NULL;
  attnmeta_step step;
  step_run run;
  cli_args a;
  double first;

  if (step_product_count > sizeof run.want / sizeof run.want[0] ||
      step_input_count > sizeof run.dev_in / sizeof run.dev_in[0]) {
    fprintf(stderr, CMD ": more products or inputs than step_run holds\n");
    return CLI_EXIT_FAILED;
  }
  memset(&run, 0, sizeof run);
  step_shape_default(&run.plan.shape);
  for (size_t i = 0; i < step_product_count; ++i) run.want[i] = !step_products[i].dsv4;

  cli_args_init(&a, CMD, argc, argv);
  while (cli_next_run(&a, usage, &ro, &stop)) {
    int bad = 0;
    if (cli_is(&a, "--products")) {
      const char *v = cli_value(&a);
      bad = !v || parse_products(v, run.want);
    } else if (!take_shape_option(&a, &run.plan.shape, &bad)) {
      return cli_unknown(&a);
    }
    if (bad) return CLI_EXIT_USAGE;
  }
  if (stop >= 0) return stop;
  run.show = ro.show;
  for (size_t i = 0; i < step_product_count; ++i) any |= run.want[i];
  if (!any) {
    fprintf(stderr, CMD ": --products: no product named\n");
    return CLI_EXIT_USAGE;
  }
  if (make_plan(&run.plan) || products_fit(&run)) {
    teardown(NULL, &run);
    return CLI_EXIT_USAGE;
  }

  if (cli_open_context(CMD, &ctx, ro.kind, ro.device)) {
    teardown(NULL, &run);
    return CLI_EXIT_USAGE;
  }
  if (setup(ctx, &run, &step)) {
    rc = CLI_EXIT_USAGE; /* no memory for the step: the environment */
    goto done;
  }

  if ((first = cli_time_one(CMD, ctx, issue_step, &step)) < 0) goto done;

  cli_print_banner(CMD, ctx);
  print_shape(&run);
  printf("products (first call):\n");
  for (size_t i = 0; i < step_product_count; ++i)
    if (run.want[i] && print_product(ctx, &run, i)) goto done;
  if (call(ctx,
           attnmeta_copy_to_host(ctx, &error_word, run.dev_in[step_input_count - 1],
                                 sizeof error_word),
           "copy back"))
    goto done;
  cli_print_error_word(error_word);
  if (cli_print_timing(CMD, ctx, first, ro.iters, "step", issue_step, &step)) goto done;
  rc = error_word != 0 ? CLI_EXIT_FAILED : CLI_EXIT_OK;

done:
  teardown(ctx, &run);
  attnmeta_close(ctx);
  return rc;
}
