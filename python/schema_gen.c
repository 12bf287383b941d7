// SPDX-License-Identifier: Apache-2.0
/*
 * Writes python/attnmeta/_schema.py, the Python binding's view of the
 * schema (src/common/am_schema.h): each struct's members in order with
 * their C type, role, extent and products, and the products that are
 * DeepSeek-V3.2/V4's. `schema_gen FILE` exits 1 when FILE differs from
 * what it would write (the staleness test); `schema_gen --write FILE`
 * writes it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_schema.h"

/* A member's extent as Python: None, (rows,) or (rows, cols, stride). */
#define AM_NONE "None"
#define AM_ARRAY(n) "(\"" #n "\",)"
#define AM_TABLE(n, cols, stride) "(\"" #n "\", \"" #cols "\", \"" #stride "\")"
#define AM_GTABLE(n, cols, stride, groups, gstride) \
  "(\"" #n "\", \"" #cols "\", \"" #stride "\", \"" #groups "\", \"" #gstride "\")"

struct member {
  const char *name, *type, *role, *extent;
  unsigned products;
};

#define MEMBER_(c, type, member, role, extent, products, rule) \
  {#member, #type, #role, extent, (unsigned)(products)},
static const struct member step_members[] = {AM_STEP_FIELDS(MEMBER_, _)};
static const struct member group_members[] = {AM_GROUP_FIELDS(MEMBER_, _)};
static const struct member topk_members[] = {AM_TOPK_FIELDS(MEMBER_, _)};
static const struct member pool_members[] = {AM_POOL_FIELDS(MEMBER_, _)};
#undef MEMBER_

#define PRODUCT_NAME_(c, name, wanted) #name,
static const char *const product_names[AM_PRODUCT_COUNT] = {
    AM_STEP_PRODUCTS(PRODUCT_NAME_, _) AM_GROUP_PRODUCTS(PRODUCT_NAME_, _)
        AM_TOPK_PRODUCTS(PRODUCT_NAME_, _) AM_POOL_PRODUCTS(PRODUCT_NAME_, _)};
#undef PRODUCT_NAME_

static char text[1 << 16];
static size_t text_len;

static void put(const char *format, ...) {
  va_list ap;
  int n;
  va_start(ap, format);
  n = vsnprintf(text + text_len, sizeof text - text_len, format, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof text - text_len) {
    fprintf(stderr, "schema_gen: the text outgrows its %zu bytes\n", sizeof text);
    exit(1);
  }
  text_len += (size_t)n;
}

/* A product mask as a Python tuple of names ("ALWAYS" for AM_P_ALWAYS). */
static void put_products(unsigned mask) {
  int bit;
  put("(");
  for (bit = 0; bit < AM_PRODUCT_COUNT; bit++)
    if (mask & (1u << bit)) put("\"%s\", ", product_names[bit]);
  if (mask & AM_P_ALWAYS) put("\"ALWAYS\", ");
  if (text[text_len - 1] == ' ') text_len -= 2; /* the last ", " */
  if (mask && !(mask & (mask - 1))) put(",");   /* a tuple of one */
  put(")");
}

static void put_members(const char *list, const struct member *m, size_t count) {
  size_t i;
  put("\n%s = [\n", list);
  for (i = 0; i < count; i++) {
    put("    (\"%s\", \"%s\", \"%s\", %s, ", m[i].name, m[i].type, m[i].role, m[i].extent);
    put_products(m[i].products);
    put("),\n");
  }
  put("]\n");
}

static void make_text(void) {
  put("# SPDX-License-Identifier: Apache-2.0\n"
      "# Generated from src/common/am_schema.h by python/schema_gen.c: do not edit.\n"
      "# Rebuild and run `schema_gen --write python/attnmeta/_schema.py` after a\n"
      "# change to the schema; ctest's python_schema_fresh fails while it is stale.\n"
      "\"\"\"Each struct's members in order: (name, C type, role, extent, products).\n"
      "\n"
      "extent: None, (rows,) or (rows, cols member, stride member), rows one of\n"
      "R, R1, T, C, P, ONE; products: for OUT the product it belongs to, for IN\n"
      "the products that read it (ALWAYS: read whenever the operation runs).\"\"\"\n");
  put_members("STEP_FIELDS", step_members, sizeof step_members / sizeof *step_members);
  put_members("COMPRESSED_GROUP_FIELDS", group_members, sizeof group_members / sizeof *group_members);
  put_members("TOPK_FIELDS", topk_members, sizeof topk_members / sizeof *topk_members);
  put_members("POOL_FIELDS", pool_members, sizeof pool_members / sizeof *pool_members);
  put("\n# The DeepSeek-V3.2/V4 products (contract sections 5, 7, 8).\nDSV4_PRODUCTS = ");
  put_products(AM_P_DSV4);
  put("\n");
}

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
  make_text();
  if (write) {
    f = fopen(path, "wb");
    if (!f || fwrite(text, 1, text_len, f) != text_len || fclose(f) != 0) {
      fprintf(stderr, "schema_gen: cannot write %s\n", path);
      return 1;
    }
    return 0;
  }
  f = fopen(path, "rb");
  n = f ? fread(old, 1, sizeof old, f) : 0;
  if (f) fclose(f);
  if (n != text_len || memcmp(old, text, n) != 0) {
    fprintf(stderr, "%s is stale: rebuild and run schema_gen --write %s\n", path, path);
    return 1;
  }
  return 0;
}
