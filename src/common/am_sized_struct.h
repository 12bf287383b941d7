// SPDX-License-Identifier: Apache-2.0
/*
 * Public structs that grow at their end (attnmeta_step, and every later
 * struct passed by pointer with a leading `size_t struct_size`).
 *
 * A caller compiled against an older header has a smaller struct: the
 * library may read only the bytes its struct_size covers. Every entry point
 * first imports the caller's struct into a full-size copy of the library's
 * own, with the members past the caller's size at their defaults, and reads
 * only that copy. docs/abi.md states the rules.
 */
#ifndef ATTNMETA_AM_SIZED_STRUCT_H
#define ATTNMETA_AM_SIZED_STRUCT_H

#include <stddef.h>

#include "am_context.h"

typedef struct am_sized_type {
  const char *name;      /* e.g. "step", for messages */
  const char *init_name; /* the public function that initialises one */
  size_t size;           /* sizeof in this library */
  size_t align;          /* _Alignof in this library */
  size_t oldest_size;    /* the size of its first release (sized_struct.c's table of
                            released sizes, by name, decides what is accepted) */
  const void *defaults;  /* `size` bytes: what init writes, struct_size included */
} am_sized_type;

/* The sized type of the public attnmeta_<name> (initialised by
 * attnmeta_<name>_init), first released `oldest` bytes long. */
#define AM_SIZED_TYPE(name, oldest, defaults)                                           \
  {#name, "attnmeta_" #name "_init", sizeof(attnmeta_##name), _Alignof(attnmeta_##name), \
   (oldest), (defaults)}

/* Copies the caller's struct into `full` (type->size bytes): the bytes its
 * struct_size covers from the caller, the rest from the defaults. Reads the
 * caller's struct_size first and nothing past it. Accepted: exactly the
 * sizes a release gave the struct (sized_struct.c's table; a type with no
 * row there: oldest_size) and this library's own. Any other size is
 * refused with ATTNMETA_ERR_INVALID_ARGUMENT, one above this library's with
 * ATTNMETA_ERR_NOT_SUPPORTED (the caller was built against a newer header).
 * `full` is untouched on failure. */
attnmeta_status am_sized_import(attnmeta_context *ctx, const am_sized_type *type,
                                const void *caller, void *full);

/* Initialises a caller's struct of `size` bytes: zero, then the defaults of
 * the bytes both sizes cover, then struct_size = size. Writes nothing past
 * `size`, and nothing at all when `caller` is NULL or `size` cannot hold
 * struct_size. Returns the status am_sized_import will give that size. */
attnmeta_status am_sized_init(const am_sized_type *type, void *caller, size_t size);

#endif /* ATTNMETA_AM_SIZED_STRUCT_H */
