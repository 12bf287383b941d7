// SPDX-License-Identifier: Apache-2.0
/*
 * Option parsing shared by the subcommands of the attnmeta command-line tool:
 * one cursor over argv that every subcommand walks the same way, strict
 * number parsing with ranges, the backend and launch-config parsers, output
 * files opened before any work, and the exit-code convention.
 *
 * Every message names the command and the option ("attnmeta step: --iters:
 * 'abc' is not a whole number") and goes to stderr; a parser that fails has
 * already printed it, and the caller returns CLI_EXIT_USAGE.
 */
#ifndef ATTNMETA_TOOLS_CLI_OPTIONS_H
#define ATTNMETA_TOOLS_CLI_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "attnmeta/attnmeta.h"

/* ---- exit codes: one convention for every subcommand ---- */
enum {
  CLI_EXIT_OK = 0,     /* it ran and everything checked passed */
  CLI_EXIT_FAILED = 1, /* it ran and a check failed (wrong result, error flags, a failed call) */
  CLI_EXIT_USAGE = 2   /* it could not run: usage, or the environment (no device, a file) */
};

/* The paragraph every --help ends with. */
#define CLI_EXIT_STATUS_HELP                                                                 \
  "Exit status: 0 ok; 1 a check failed (wrong result, error flags, a failed call);\n" \
  "2 usage or environment (bad option or value, no such backend or device, a file\n"  \
  "that cannot be read or written).\n"

/* ---- the cursor over argv ---- */
typedef struct cli_args {
  const char *cmd; /* "attnmeta step", the prefix of every message */
  int argc;
  char **argv;
  int i;              /* index of the current argument */
  const char *arg;    /* the current argument as given */
  char name[64];      /* the option's name: "--iters" (of "--iters=5" too) */
  const char *inline_value; /* "5" of "--iters=5", else NULL */
  int positional;     /* the current argument is not an option */
  int options_done;   /* "--" was seen: the rest are positional */
} cli_args;

void cli_args_init(cli_args *a, const char *cmd, int argc, char **argv);
/* Moves to the next argument (argv[0] is skipped); returns 0 past the end. */
int cli_next(cli_args *a);
/* The current argument is the option `name`. */
int cli_is(const cli_args *a, const char *name);
/* -h or --help. */
int cli_is_help(const cli_args *a);
/* The option's value ("--x V" or "--x=V"); NULL with a message when missing. */
const char *cli_value(cli_args *a);
/* A flag given a value ("--quick=1"): message, returns -1; else 0. */
int cli_flag(const cli_args *a);
/* The "unknown option" message with a pointer to --help; returns CLI_EXIT_USAGE. */
int cli_unknown(const cli_args *a);
/* Answers -h/--help: prints `usage` to stdout and returns CLI_EXIT_OK, or
 * CLI_EXIT_USAGE (with the message) when the flag was given a value. */
int cli_help(const cli_args *a, void (*usage)(FILE *out));
/* Moves to the next argument that is not one of the options every device
 * subcommand shares, reading those on the way: -h/--help (prints `usage`),
 * --backend and --device. Returns 0 past the end (*exit_code stays -1), or
 * when the command is to stop with *exit_code: CLI_EXIT_OK after the help,
 * CLI_EXIT_USAGE after the message of a bad value. */
int cli_next_own(cli_args *a, void (*usage)(FILE *out), attnmeta_backend *kind, int *device,
                 int *exit_code);
/* The options of the subcommands that run one operation: cli_next_own's,
 * then --iters N (0 .. CLI_MAX_ITERS) and --show N (1 .. 64). */
#define CLI_MAX_ITERS 10000000
typedef struct cli_run_options {
  attnmeta_backend kind;
  int device, iters, show;
} cli_run_options;
int cli_next_run(cli_args *a, void (*usage)(FILE *out), cli_run_options *r, int *exit_code);

/* A subcommand's own options, a table: "--name N" reads an int in
 * [lo, hi] into the shape struct at `offset`; with `flag`, "--name" (no
 * value) sets that int to 1. */
typedef struct cli_int_option {
  const char *name;
  size_t offset;
  int lo, hi, flag;
} cli_int_option;
/* Walks every argument with cli_next_run and the table; returns -1 when the
 * command is to run, else the exit code to return (after the help, or the
 * message of a bad or unknown option). */
int cli_parse_shape(cli_args *a, void (*usage)(FILE *out), cli_run_options *r,
                    const cli_int_option *options, size_t count, void *shape);

/* ---- values (each prints a message naming `opt` and returns -1 when bad) ---- */

/* A whole number in [lo, hi]: no sign games, no trailing text, no overflow. */
int cli_parse_int64(const char *cmd, const char *opt, const char *text, int64_t lo, int64_t hi,
                    int64_t *out);
int cli_parse_int(const char *cmd, const char *opt, const char *text, int lo, int hi, int *out);
/* "A" or "A..B" with lo <= A <= B <= hi ("A" gives A..A). */
int cli_parse_int_range(const char *cmd, const char *opt, const char *text, int lo, int hi,
                        int *from, int *to);
/* A finite number in [lo, hi]. */
int cli_parse_double(const char *cmd, const char *opt, const char *text, double lo, double hi,
                     double *out);
/* "auto|cpu|cuda|hip" (any case). */
int cli_parse_backend_option(const char *cmd, const char *opt, const char *text,
                             attnmeta_backend *kind);
/* "block=B,grid=G,stage=S,vector=V,lanes=L" (any subset, any order; -1 or 0
 * = automatic, as attnmeta_launch_config documents). */
int cli_parse_launch_config(const char *cmd, const char *opt, const char *text,
                            attnmeta_launch_config *config);

/* The cursor forms of the above: read the option's value and parse it. */
int cli_take_int(cli_args *a, int lo, int hi, int *out);
int cli_take_int64(cli_args *a, int64_t lo, int64_t hi, int64_t *out);
int cli_take_int_range(cli_args *a, int lo, int hi, int *from, int *to);
int cli_take_double(cli_args *a, double lo, double hi, double *out);
int cli_take_backend(cli_args *a, attnmeta_backend *kind);
int cli_take_device(cli_args *a, int *device); /* a device index, 0 .. 65535 */

/* Parses "auto|cpu|cuda|hip" (any case) without a message; returns 0 on success. */
int cli_parse_backend(const char *text, attnmeta_backend *kind);

/* A linear congruential generator for drawn inputs (wraps modulo 2^32). */
uint32_t cli_lcg(uint32_t *seed);

/* ---- environment failures ---- */

/* attnmeta_open with the command's message on failure ("no device" and the
 * like): returns 0, or CLI_EXIT_USAGE after the message. */
int cli_open_context(const char *cmd, attnmeta_context **ctx, attnmeta_backend kind, int device);
/* A library call's status: 0 when ATTNMETA_OK, else -1 after the message
 * "<cmd>: <what>: <status>: <last error>". */
int cli_call(const char *cmd, attnmeta_context *ctx, attnmeta_status st, const char *what);
/* Device memory of `bytes` bytes (4 for none) at *dev, holding a copy of
 * host's when host is given; 0, or -1 after cli_call's message. */
int cli_upload(const char *cmd, attnmeta_context *ctx, void **dev, const void *host, size_t bytes);

/* ---- output files, opened before the work so that a bad path fails at once ---- */
typedef struct cli_output {
  const char *path; /* NULL: no output wanted */
  FILE *file;
} cli_output;

/* Opens `path` for writing (NULL path: nothing to do); message naming `opt`
 * and -1 when it cannot. */
int cli_output_open(const char *cmd, const char *opt, cli_output *out, const char *path);
/* Closes it; -1 with a message when the data did not reach the file. */
int cli_output_close(const char *cmd, cli_output *out);
/* Closes and removes it: the run stopped before anything was written. */
void cli_output_discard(cli_output *out);

/* ---- progress on stderr for work longer than a second ---- */
typedef struct cli_progress {
  const char *cmd;
  double start_s, last_s;
  int printed;
} cli_progress;

void cli_progress_start(cli_progress *p, const char *cmd);
/* Prints "<cmd>: <what> done/total" at most once a second, from the first
 * second on. */
void cli_progress_tick(cli_progress *p, const char *what, int64_t done, int64_t total);
/* Ends the progress lines (when any was printed). */
void cli_progress_end(cli_progress *p, const char *what, int64_t total);
double cli_now_s(void);

/* Times `iters` calls of `issue` (which returns nonzero after its own
 * message when the call failed) and prints the host time per call to issue
 * and the time per `unit` to complete. Past a second of issuing, the queued
 * calls are waited for every second, so that the progress lines come while a
 * long run runs (a GPU queue can hold many seconds of work); the waits are
 * not host time. Returns 0, or -1 when a call failed. */
int cli_time_calls(const char *cmd, attnmeta_context *ctx, int iters, const char *unit,
                   int (*issue)(attnmeta_context *ctx, void *arg), void *arg);
/* The seconds one call of `issue` takes to complete (issued, then waited
 * for); -1 when it or the wait failed (after the message). */
double cli_time_one(const char *cmd, attnmeta_context *ctx,
                    int (*issue)(attnmeta_context *ctx, void *arg), void *arg);

/* ---- the report of a subcommand that runs one operation ---- */

/* "<cmd> on <backend> (<device>)" */
void cli_print_banner(const char *cmd, attnmeta_context *ctx);
/* The first `show` of the n values, ", ..." when there are more, a newline. */
void cli_print_int32s(const int32_t *v, int64_t n, int show);
/* The error word's line: its value and its flags in words. */
void cli_print_error_word(int32_t error_word);
/* The first call's time, then (iters > 0) cli_time_calls's lines; 0, or -1
 * when a call failed. */
int cli_print_timing(const char *cmd, attnmeta_context *ctx, double first_s, int iters,
                     const char *unit, int (*issue)(attnmeta_context *ctx, void *arg), void *arg);

/* A subcommand that runs one operation, as cli_run_op drives it. */
typedef struct cli_op {
  const char *cmd, *unit; /* "attnmeta pool"; what a timed call completes ("call") */
  void *state;            /* the subcommand's own, given to setup, report and teardown */
  void *call;             /* what issue is given */
  /* Inputs and outputs on the device; nonzero (after a message) when it cannot. */
  int (*setup)(attnmeta_context *ctx, void *state);
  /* One call of the operation; nonzero after the message when it failed. */
  int (*issue)(attnmeta_context *ctx, void *call);
  /* After the first call: prints everything but the timing; returns
   * CLI_EXIT_OK, CLI_EXIT_FAILED (a check failed), CLI_EXIT_USAGE (the
   * environment, no timing then), or -1 when a call failed (no timing). */
  int (*report)(attnmeta_context *ctx, void *state, int show);
  /* Frees what setup made (ctx NULL: the host side only). */
  void (*teardown)(attnmeta_context *ctx, void *state);
} cli_op;
/* Opens ro's context, sets up, times the first call, reports, times
 * ro->iters more calls and tears down; the exit code. */
int cli_run_op(const cli_op *op, const cli_run_options *ro);

#endif
