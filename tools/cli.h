// SPDX-License-Identifier: Apache-2.0
/* Subcommands of the attnmeta command-line tool, called by its entry
 * (attnmeta_cli.c). Each returns an exit code. */
#ifndef ATTNMETA_TOOLS_CLI_H
#define ATTNMETA_TOOLS_CLI_H

int cli_info(int argc, char **argv);
int cli_step(int argc, char **argv);
int cli_topk(int argc, char **argv);
int cli_pool(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_conformance(int argc, char **argv);

#endif
