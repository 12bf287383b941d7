// SPDX-License-Identifier: Apache-2.0
/*
 * The table every backend exports. GPU backends are shared-library modules
 * loaded with dlopen; each exports one C function, attnmeta_backend_entry,
 * returning a pointer to a constant table. The table is append-only: new
 * members go at the end, and AM_BACKEND_ABI changes only when an existing
 * member changes meaning, which includes the layout of the structures the
 * members receive (am_step_params, am_topk_params, am_pool_params,
 * am_launch_shape): by hand (its base) for a change of meaning, by itself
 * for a change of the parameters' sizes or of the step's schema-derived
 * members. The CPU backend uses
 * the same table, linked in.
 */
#ifndef ATTNMETA_AM_BACKEND_H
#define ATTNMETA_AM_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "am_pool_params.h"
#include "am_step_params.h"
#include "am_topk_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2: am_step_params reordered, with kernel variants, guesses and
 * speculation (what launch_step receives changed meaning) */
/* 3: am_step_params grew the DeepSeek-V3.2/V4 products and AM_VARIANT_DSV4 */
/* 4: vector_rows may be AM_ROWS_REALIGNED, variant may carry
 * AM_VARIANT_EARLY_START; cache_bytes appended (right after copy_device) */
/* 5: launch_topk appended after copy_device, cache_bytes after it (a
 * module of ABI 4 has cache_bytes where launch_topk now is) */
/* 6: am_topk_params grew lane_vectors; variant may carry AM_VARIANT_REALIGNED */
/* 7: variant may carry AM_VARIANT_INDEXER | AM_VARIANT_REALIGNED */
/* 8: am_step_params grew the indexer's compressed lengths, the SWA rows' token
 * slots and the C128A rows' mixed mode (a second table of rows); the table
 * appends runtime_versions, then launch_pool */
/* 9: am_topk_params grew the DCP peer views (peer slots, the rotated peer
 * table); am_pool_params grew the lengths, top-k scans, token and SWA
 * tables and draft-extend rows; am_step_params ends with the schema's kernel members
 * (am_step_ext); from here on the ABI also carries a signature of the
 * launch parameters' layouts, so a product whose kernel members come from
 * the schema, or a grown am_topk_params or am_pool_params, changes it
 * without an edit */
#define AM_BACKEND_ABI_BASE 9
#define AM_BACKEND_LAYOUT                                                         \
  (((AM_STEP_PARAMS_LAYOUT * 31 + (int)sizeof(am_topk_params)) * 31 +            \
    (int)sizeof(am_pool_params)) % 1000000)
#define AM_BACKEND_ABI (AM_BACKEND_ABI_BASE * 1000000 + AM_BACKEND_LAYOUT)
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

  /* ---- measurement (attnmeta_measure.h; tooling, not for the hot path) ----
   * Streams, events and graphs are opaque handles of the backend. The CPU
   * backend's streams are NULL, its events are wall-clock timestamps taken
   * when recorded (its work is synchronous), and it has no graphs: the
   * capture functions answer ATTNMETA_ERR_NOT_SUPPORTED. */
  /* A new stream that does not synchronise with the default stream. */
  int (*stream_create)(void *state, void **stream, char *msg, size_t msg_size);
  int (*stream_destroy)(void *state, void *stream, char *msg, size_t msg_size);
  int (*event_create)(void *state, void **event, char *msg, size_t msg_size);
  int (*event_destroy)(void *state, void *event, char *msg, size_t msg_size);
  int (*event_record)(void *state, void *event, void *stream, char *msg, size_t msg_size);
  /* Waits for `stop`; *ms = milliseconds between the two recorded events. */
  int (*event_elapsed)(void *state, void *start, void *stop, float *ms, char *msg,
                       size_t msg_size);
  /* Starts capturing the calling thread's work on `stream` into a graph. */
  int (*capture_begin)(void *state, void *stream, char *msg, size_t msg_size);
  /* Ends the capture; *graph is the captured graph (NULL when the capture
   * failed, with a message and an error status). Always call it after a
   * successful capture_begin, whatever happened in between. */
  int (*capture_end)(void *state, void *stream, void **graph, char *msg, size_t msg_size);
  /* Number of nodes of `graph`, and how many of them are kernel nodes. */
  int (*graph_node_count)(void *state, void *graph, int64_t *nodes, int64_t *kernel_nodes,
                          char *msg, size_t msg_size);
  int (*graph_instantiate)(void *state, void *graph, void **exec, char *msg, size_t msg_size);
  int (*graph_launch)(void *state, void *exec, void *stream, char *msg, size_t msg_size);
  /* Destroys either or both (NULL is skipped). */
  int (*graph_destroy)(void *state, void *graph, void *exec, char *msg, size_t msg_size);
  /* One launch of a kernel that does nothing (one block of one thread). */
  int (*launch_empty)(void *state, void *stream, char *msg, size_t msg_size);
  /* Device-to-device copy queued on `stream` (synchronous on the CPU). */
  int (*copy_device)(void *state, void *dst, const void *src, size_t bytes, void *stream,
                     char *msg, size_t msg_size);

  /* ---- appended later: a module of this ABI built before has a shorter
   * table. Read through am_backend_has(), never directly. ---- */
  /* One launch of the top-k conversion kernel on `stream` (blocks of
   * shape->lanes x shape->groups threads, shape->shared_bytes of scratch). */
  int (*launch_topk)(void *state, const am_topk_params *params, const am_launch_shape *shape,
                     void *stream, char *msg, size_t msg_size);
  /* Bytes of the device's last-level cache (the L2 of a GPU); 0 when unknown. */
  int64_t (*cache_bytes)(void *state);
  /* The GPU driver's and runtime's version numbers in the runtime's own
   * encoding (CUDA: 1000 * major + 10 * minor; HIP: 10000000 * major +
   * 100000 * minor + patch), each 0 when the runtime cannot tell (no driver
   * installed). Needs no device nor state: `attnmeta info` asks it on a
   * machine without a GPU. ATTNMETA_ERR_NOT_SUPPORTED where there is no
   * GPU runtime (the CPU backend). */
  int (*runtime_versions)(int *driver, int *runtime, char *msg, size_t msg_size);
  /* One launch of the pool operation's kernel on `stream` (blocks of
   * shape->lanes x shape->groups threads, no block-shared memory). */
  int (*launch_pool)(void *state, const am_pool_params *params, const am_launch_shape *shape,
                     void *stream, char *msg, size_t msg_size);
} am_backend_table;

/* The size of the table up to copy_device: the smallest table the loader
 * accepts. Later members are optional. */
#define AM_BACKEND_TABLE_MIN_SIZE \
  (offsetof(am_backend_table, copy_device) + sizeof(((am_backend_table *)0)->copy_device))

/* Does `table` (of table->table_size bytes) hold a non-NULL `member`? */
#define am_backend_has(table, member)                                                   \
  ((table)->table_size >= offsetof(am_backend_table, member) + sizeof((table)->member) && \
   (table)->member != NULL)

typedef const am_backend_table *(*am_backend_entry_fn)(void);

const am_backend_table *am_cpu_backend(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTNMETA_AM_BACKEND_H */
