// SPDX-License-Identifier: Apache-2.0
/* ATTNMETA_PATHS_OFF's names to AM_PATH_* bits (am_paths_off.h). */
#include <stddef.h>
#include <string.h>

#include "am_paths_off.h"

unsigned am_paths_off(const char *names) {
  static const struct {
    const char *name;
    unsigned bit;
  } paths[] = {{"speculate_first", AM_PATH_SPECULATE_FIRST},
               {"indexer_variant", AM_PATH_INDEXER_VARIANT},
               {"realign", AM_PATH_REALIGN},
               {"tail_vectors", AM_PATH_TAIL_VECTORS},
               {"aligned_rows", AM_PATH_ALIGNED_ROWS},
               {"reverse_order", AM_PATH_REVERSE_ORDER},
               {"one_wave", AM_PATH_ONE_WAVE}};
  unsigned off = 0;
  size_t i;
  if (!names) return 0;
  for (i = 0; i < sizeof paths / sizeof paths[0]; ++i) {
    const size_t n = strlen(paths[i].name);
    const char *at = names;
    while ((at = strstr(at, paths[i].name)) != NULL) {
      if ((at == names || at[-1] == ',') && (at[n] == '\0' || at[n] == ',')) off |= paths[i].bit;
      at += n;
    }
  }
  return off;
}
