/* Where `attnmeta conformance` finds the conformance vectors when it is
 * given no files: the set installed beside the tool. */
#ifndef ATTNMETA_TOOLS_CLI_VECTOR_DIR_H
#define ATTNMETA_TOOLS_CLI_VECTOR_DIR_H

#include <stddef.h>

/* Writes <folder of this executable>/ATTNMETA_BIN_TO_VECTORS (an installed
 * prefix: <prefix>/share/attnmeta/vectors; a build tree: its link to
 * conformance/vectors), resolved, into buf. Returns 0, or -1 when it cannot
 * be found (buf then holds the path tried, or ""). */
int cli_installed_vector_dir(char *buf, size_t size);

#endif
