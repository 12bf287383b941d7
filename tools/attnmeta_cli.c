/* attnmeta: command-line front end (info, the example step, the benchmark, conformance). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: attnmeta <command> [options]\n"
          "  info                      library version, backends, devices, module targets\n"
          "  step [--backend B] [--device N] [--iters N]\n"
          "                            build one realistic decode step's metadata on the\n"
          "                            default (or given) backend, print it and its timing\n"
          "  bench [--backend B] [--device N] [--config SPEC]... [--json FILE] [--help]\n"
          "                            time the cases of the performance targets (token map\n"
          "                            and indexer metadata in one step), check them first,\n"
          "                            compare with the floors and anchors; table last\n"
          "  conformance [--backend B] [--device N] [--config SPEC]... [--vector NAME]...\n"
          "              [--json FILE] [--verbose] [FILES...]\n"
          "                            run conformance vector files (default: the installed\n"
          "                            set, share/attnmeta/vectors) on a backend: a line per\n"
          "                            vector, then 'N passed, N failed, N skipped'\n"
          "                            (docs/conformance.md)\n"
          "  help                      this text\n"
          "backends: auto (default; $ATTNMETA_BACKEND overrides), cpu, cuda, hip\n");
}

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "info") == 0) return cli_info(argc - 1, argv + 1);
  if (strcmp(argv[1], "step") == 0) return cli_step(argc - 1, argv + 1);
  if (strcmp(argv[1], "bench") == 0) return cli_bench(argc - 1, argv + 1);
  if (strcmp(argv[1], "conformance") == 0) return cli_conformance(argc - 1, argv + 1);
  fprintf(stderr, "attnmeta: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
