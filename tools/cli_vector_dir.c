/* The installed conformance vectors (cli_vector_dir.h). The path is relative
 * to the executable, so a moved prefix still finds its own vectors. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "cli_vector_dir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef ATTNMETA_BIN_TO_VECTORS
#define ATTNMETA_BIN_TO_VECTORS "../share/attnmeta/vectors"
#endif

int cli_installed_vector_dir(char *buf, size_t size) {
  char exe[PATH_MAX], joined[PATH_MAX + sizeof ATTNMETA_BIN_TO_VECTORS + 1], *slash, *real;
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (size) buf[0] = '\0';
  if (n <= 0) return -1;
  exe[n] = '\0';
  slash = strrchr(exe, '/');
  if (!slash) return -1;
  *slash = '\0';
  snprintf(joined, sizeof joined, "%s/%s", exe, ATTNMETA_BIN_TO_VECTORS);
  real = realpath(joined, NULL);
  if (!real || strlen(real) >= size) {
    if (size) snprintf(buf, size, "%s", joined);
    free(real);
    return -1;
  }
  memcpy(buf, real, strlen(real) + 1);
  free(real);
  return 0;
}
