/*
 * A stand-in for a backend module, for module_env.c: loading it creates the
 * file named by ATTNMETA_TEST_MARKER, so a test sees whether the library
 * loaded it. It exports no backend table (the library refuses it after
 * loading, which is too late: its constructor has run).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void mark_loaded(void) {
  const char *marker = getenv("ATTNMETA_TEST_MARKER");
  if (marker && marker[0]) {
    const int fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) close(fd);
  }
}
