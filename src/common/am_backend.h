/*
 * The table every backend exports. GPU backends are shared-library modules
 * loaded with dlopen; each exports one C function, attnmeta_backend_entry,
 * returning a pointer to a constant table. The table is append-only: new
 * members go at the end, and AM_BACKEND_ABI changes only when an existing
 * member changes meaning. The CPU backend uses the same table, linked in.
 */
#ifndef ATTNMETA_AM_BACKEND_H
#define ATTNMETA_AM_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "am_step_params.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AM_BACKEND_ABI 1
#define AM_BACKEND_ENTRY_SYMBOL "attnmeta_backend_entry"

/* Backend functions return an attnmeta_status value and, on failure, put a
 * message into msg[0, msg_size). */
typedef struct am_backend_table {
  uint32_t abi_version; /* AM_BACKEND_ABI of the module */
  uint32_t table_size;  /* sizeof(am_backend_table) of the module */
  const char *name;     /* "cpu", "cuda", "hip" */
  const char *targets;  /* architectures built in, e.g. "sm_90 sm_100" */

  /* Number of usable devices; 0 (and OK) when there is no device or driver. */
  int (*device_count)(int *count, char *msg, size_t msg_size);
  /* Binds `device`: checks the architecture is built in, and fills a
   * description and the launch limits. *state is backend-owned. */
  int (*open)(int device, void **state, char *name, size_t name_size, char *msg, size_t msg_size);
  void (*close)(void *state);
  /* One launch of the step kernel on `stream`. */
  int (*launch_step)(void *state, const am_step_params *params, const am_launch_shape *shape,
                     void *stream, char *msg, size_t msg_size);
  /* Memory utilities (not for the hot path). kind: 0 alloc, see below. */
  int (*alloc)(void *state, size_t bytes, void **ptr, char *msg, size_t msg_size);
  int (*release)(void *state, void *ptr, char *msg, size_t msg_size);
  /* to_device != 0: host -> device, else device -> host; synchronous. */
  int (*copy)(void *state, void *dst, const void *src, size_t bytes, int to_device, char *msg,
              size_t msg_size);
  int (*synchronize)(void *state, void *stream, char *msg, size_t msg_size);
  /* Multiprocessor (compute unit) count of the bound device, for sizing grids. */
  int (*processor_count)(void *state);
} am_backend_table;

typedef const am_backend_table *(*am_backend_entry_fn)(void);

const am_backend_table *am_cpu_backend(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTNMETA_AM_BACKEND_H */
