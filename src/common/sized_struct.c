// SPDX-License-Identifier: Apache-2.0
/* Import and initialisation of public structs that grow at their end
 * (am_sized_struct.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "am_sized_struct.h"

#define ROUND_UP(n, align) (((n) + (align)-1) / (align) * (align))
#define END_OF(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* Every size a release of the library gave each struct, oldest first: the
 * only sizes accepted besides the library's own. A release that appends
 * members adds its size here. */
static const struct released {
  const char *name; /* am_sized_type.name */
  int count;
  size_t sizes[4];
  const char *versions[4];
} released[] = {
    {"step",
     3,
     {END_OF(attnmeta_step, error_word),
      ROUND_UP(END_OF(attnmeta_step, launch_flags), _Alignof(attnmeta_step)),
      ROUND_UP(END_OF(attnmeta_step, c128a_num_decode_tokens), _Alignof(attnmeta_step))},
     {"0.1.0", "0.2.0", "0.3.0"}},
    {"topk", 1, {END_OF(attnmeta_topk, error_word)}, {"0.2.0"}},
    {"pool", 1, {END_OF(attnmeta_pool, error_word)}, {"0.3.0"}},
};

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

static const struct released *released_of(const am_sized_type *type) {
  size_t i;
  for (i = 0; i < sizeof released / sizeof released[0]; ++i)
    if (strcmp(released[i].name, type->name) == 0) return &released[i];
  return NULL;
}

/* A type with no row (not released yet) has two sizes: its first and its own. */
static int accepted(const am_sized_type *type, size_t size) {
  const struct released *r = released_of(type);
  int i;
  if (size == type->size) return 1;
  if (!r) return size == type->oldest_size;
  for (i = 0; i < r->count; ++i)
    if (size == r->sizes[i]) return 1;
  return 0;
}

static attnmeta_status size_status(const am_sized_type *type, size_t size) {
  if (size > type->size) return ATTNMETA_ERR_NOT_SUPPORTED;
  return accepted(type, size) ? ATTNMETA_OK : ATTNMETA_ERR_INVALID_ARGUMENT;
}

/* "176 (0.1.0), 504 (0.2.0)": the sizes accepted, for a message. */
static void accepted_text(const am_sized_type *type, char *text, size_t size) {
  const struct released *r = released_of(type);
  size_t n = 0;
  int i, own = 0;
  text[0] = '\0';
  if (!r) {
    snprintf(text, size, "%zu or %zu", type->oldest_size, type->size);
    return;
  }
  for (i = 0; i < r->count && n < size; ++i) {
    n += (size_t)snprintf(text + n, size - n, "%s%zu (%s)", i ? ", " : "", r->sizes[i],
                          r->versions[i]);
    own |= r->sizes[i] == type->size;
  }
  if (!own && n < size) snprintf(text + n, size - n, ", %zu (this library)", type->size);
}

attnmeta_status am_sized_import(attnmeta_context *ctx, const am_sized_type *type,
                                const void *caller, void *full) {
  size_t size;
  attnmeta_status status;
  char sizes[160];
  /* struct_size is the first member of every release: always readable. */
  memcpy(&size, caller, sizeof size);
  status = size_status(type, size);
  if (status == ATTNMETA_ERR_NOT_SUPPORTED)
    return am_fail(ctx, status,
                   "%s.struct_size is %zu, larger than this library's %zu: the caller was built "
                   "against a newer attnmeta",
                   type->name, size, type->size);
  if (status != ATTNMETA_OK) {
    accepted_text(type, sizes, sizeof sizes);
    return am_fail(ctx, status,
                   "%s.struct_size is %zu, not the size of any release (%s): initialise it "
                   "with %s",
                   type->name, size, sizes, type->init_name);
  }
  memcpy(full, type->defaults, type->size);
  memcpy(full, caller, size);
  return ATTNMETA_OK;
}

attnmeta_status am_sized_init(const am_sized_type *type, void *caller, size_t size) {
  if (!caller) return ATTNMETA_ERR_NULL_POINTER;
  if (size < sizeof(size_t)) return ATTNMETA_ERR_INVALID_ARGUMENT;
  memset(caller, 0, size);
  memcpy(caller, type->defaults, min_size(size, type->size));
  memcpy(caller, &size, sizeof size);
  return size_status(type, size);
}
