/* Option parsing shared by the subcommands of the attnmeta command-line tool. */
#ifndef ATTNMETA_TOOLS_CLI_OPTIONS_H
#define ATTNMETA_TOOLS_CLI_OPTIONS_H

#include "attnmeta/attnmeta.h"

/* Parses "auto|cpu|cuda|hip" (any case); returns 0 on success. */
int cli_parse_backend(const char *text, attnmeta_backend *kind);

#endif
