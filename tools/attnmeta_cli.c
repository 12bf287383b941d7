// SPDX-License-Identifier: Apache-2.0
/* attnmeta: command-line front end (info, the example step, the top-k
 * conversion, the benchmark, conformance). */
#include <stdio.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "cli.h"
#include "cli_options.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
} command;

static const command commands[] = {
    {"info", cli_info},
    {"step", cli_step},
    {"topk", cli_topk},
    {"pool", cli_pool},
    {"bench", cli_bench},
    {"conformance", cli_conformance},
};

static void usage(FILE *out) {
  fprintf(out,
          "usage: attnmeta <command> [options]   ('attnmeta <command> --help': its options)\n"
          "  info          library version, backends, devices, module targets\n"
          "  step          build one decode step's metadata (its size set by options) on\n"
          "                the default or given backend (--products dsv4: the DeepSeek-V4\n"
          "                products too); print what it built, its timing\n"
          "  topk          convert one layer's top-k indices to global KV slots; print\n"
          "                them, the check against a naive conversion, the timing\n"
          "  pool          build one SGLang decode step's metadata from its request pool\n"
          "                (FA3 page table, DSA top-k lengths, target verify); print it,\n"
          "                the check against a naive build, the timing\n"
          "  bench         time the cases of the performance targets, checked first,\n"
          "                against the floors and anchors; table last, --json FILE too\n"
          "  conformance   run conformance vector files (default: the installed set) on a\n"
          "                backend: a line per vector, then 'N passed, N failed, N skipped'\n"
          "  help [CMD]    this text, or CMD's\n"
          "  --version     the tool's and the library's version\n"
          "backends: auto (default; $ATTNMETA_BACKEND overrides), cpu, cuda, hip\n" CLI_EXIT_STATUS_HELP);
}

static const command *find(const char *name) {
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

static int is_help(const char *a) {
  return strcmp(a, "help") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

int main(int argc, char **argv) {
  const command *c;
  if (argc < 2) {
    usage(stderr);
    return CLI_EXIT_USAGE;
  }
  if (is_help(argv[1])) {
    if (argc == 2) {
      usage(stdout);
      return CLI_EXIT_OK;
    }
    c = find(argv[2]);
    if (!c || argc > 3) {
      fprintf(stderr, "attnmeta help: %s '%s'\n", c ? "unexpected argument" : "unknown command",
              argv[c ? 3 : 2]);
      return CLI_EXIT_USAGE;
    }
    {
      char help[] = "--help";
      char *sub[] = {argv[2], help, NULL};
      return c->run(2, sub);
    }
  }
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
    if (argc > 2) {
      fprintf(stderr, "attnmeta %s: unexpected argument '%s'\n", argv[1], argv[2]);
      return CLI_EXIT_USAGE;
    }
    printf("attnmeta %d.%d.%d (library %s, commit %s)\n", ATTNMETA_VERSION_MAJOR,
           ATTNMETA_VERSION_MINOR, ATTNMETA_VERSION_PATCH, attnmeta_version_string(),
           attnmeta_build_commit());
    return CLI_EXIT_OK;
  }
  c = find(argv[1]);
  if (c) return c->run(argc - 1, argv + 1);
  fprintf(stderr, "attnmeta: unknown %s '%s'\n", argv[1][0] == '-' ? "option" : "command",
          argv[1]);
  usage(stderr);
  return CLI_EXIT_USAGE;
}
