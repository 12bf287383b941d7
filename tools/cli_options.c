/* Option parsing shared by the subcommands (cli_options.h). */
#include "cli_options.h"

#include <stddef.h>
#include <strings.h>

int cli_parse_backend(const char *text, attnmeta_backend *kind) {
  static const attnmeta_backend kinds[] = {ATTNMETA_BACKEND_AUTO, ATTNMETA_BACKEND_CPU,
                                           ATTNMETA_BACKEND_CUDA, ATTNMETA_BACKEND_HIP};
  size_t i;
  for (i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    if (strcasecmp(text, attnmeta_backend_name(kinds[i])) == 0) {
      *kind = kinds[i];
      return 0;
    }
  }
  return -1;
}
