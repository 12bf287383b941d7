/* Subcommands of the attnmeta command-line tool. Each returns an exit code. */
#ifndef ATTNMETA_TOOLS_CLI_H
#define ATTNMETA_TOOLS_CLI_H

#include "attnmeta/attnmeta.h"

int cli_info(int argc, char **argv);
int cli_step(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_conformance(int argc, char **argv);

/* Parses "auto|cpu|cuda|hip"; returns 0 on success. */
int cli_parse_backend(const char *text, attnmeta_backend *kind);

#endif
