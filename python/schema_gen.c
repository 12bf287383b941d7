// SPDX-License-Identifier: Apache-2.0
/*
 * Writes python/attnmeta/_schema.py, the Python binding's view of the
 * schema (src/common/am_schema.h): each struct's members in order with
 * their C type and role. `schema_gen FILE` exits 1 when FILE differs from
 * what it would write (the staleness test); `schema_gen --write FILE`
 * writes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_schema.h"

#define ROW_(c, type, member, role, extent, products, rule) \
  "    (\"" #member "\", \"" #type "\", \"" #role "\"),\n"

static const char text[] =
    "# SPDX-License-Identifier: Apache-2.0\n"
    "# Generated from src/common/am_schema.h by python/schema_gen.c: do not edit.\n"
    "# Rebuild and run `schema_gen --write python/attnmeta/_schema.py` after a\n"
    "# change to the schema; ctest's python_schema_fresh fails while it is stale.\n"
    "\"\"\"Each struct's members in order: (name, C type, role).\"\"\"\n"
    "\n"
    "STEP_FIELDS = [\n" AM_STEP_FIELDS(ROW_, _) "]\n"
    "\n"
    "COMPRESSED_GROUP_FIELDS = [\n" AM_GROUP_FIELDS(ROW_, _) "]\n"
    "\n"
    "TOPK_FIELDS = [\n" AM_TOPK_FIELDS(ROW_, _) "]\n";

int main(int argc, char **argv) {
  const int write = argc == 3 && strcmp(argv[1], "--write") == 0;
  const char *path = argv[argc - 1];
  static char old[sizeof text + 1];
  size_t n;
  FILE *f;
  if (argc != 2 && !write) {
    fprintf(stderr, "usage: schema_gen [--write] FILE\n");
    return 2;
  }
  if (write) {
    f = fopen(path, "wb");
    if (!f || fwrite(text, 1, sizeof text - 1, f) != sizeof text - 1 || fclose(f) != 0) {
      fprintf(stderr, "schema_gen: cannot write %s\n", path);
      return 1;
    }
    return 0;
  }
  f = fopen(path, "rb");
  n = f ? fread(old, 1, sizeof old, f) : 0;
  if (f) fclose(f);
  if (n != sizeof text - 1 || memcmp(old, text, n) != 0) {
    fprintf(stderr, "%s is stale: rebuild and run schema_gen --write %s\n", path, path);
    return 1;
  }
  return 0;
}
