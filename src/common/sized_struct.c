/* Import and initialisation of public structs that grow at their end
 * (am_sized_struct.h). */
#include <string.h>

#include "am_sized_struct.h"

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

static attnmeta_status size_status(const am_sized_type *type, size_t size) {
  if (size > type->size) return ATTNMETA_ERR_NOT_SUPPORTED;
  if (size < type->oldest_size || size % type->align != 0) return ATTNMETA_ERR_INVALID_ARGUMENT;
  return ATTNMETA_OK;
}

attnmeta_status am_sized_import(attnmeta_context *ctx, const am_sized_type *type,
                                const void *caller, void *full) {
  size_t size;
  attnmeta_status status;
  /* struct_size is the first member of every release: always readable. */
  memcpy(&size, caller, sizeof size);
  status = size_status(type, size);
  if (status == ATTNMETA_ERR_NOT_SUPPORTED)
    return am_fail(ctx, status,
                   "%s.struct_size is %zu, larger than this library's %zu: the caller was built "
                   "against a newer attnmeta",
                   type->name, size, type->size);
  if (status != ATTNMETA_OK)
    return am_fail(ctx, status,
                   "%s.struct_size is %zu, not a size this library accepts (%zu to %zu, a "
                   "multiple of %zu): initialise it with %s",
                   type->name, size, type->oldest_size, type->size, type->align, type->init_name);
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
