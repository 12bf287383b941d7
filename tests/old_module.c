// SPDX-License-Identifier: Apache-2.0
/*
 * A backend module as built before the top-k operation was appended to the
 * backend table: ABI 2, a table of AM_BACKEND_TABLE_MIN_SIZE bytes (or, with
 * OLD_MODULE_TOO_SHORT, shorter still). Its launch_topk would be a function
 * that aborts, and the table's last byte is the last of a page whose next
 * page is inaccessible, so a loader or dispatcher that reads past
 * table_size fails the test loudly. It claims one device and launches
 * nothing.
 *
 * Broken tables for test_module_table.c, one per define: MODULE_NULL_ENTRY
 * (no alloc function), MODULE_NULL_TARGETS, MODULE_LONG_TABLE (64 bytes
 * more than the library's table, really there), MODULE_HUGE_TABLE
 * (table_size UINT32_MAX, only the library's table there); MODULE_FULL is
 * a sound table of the library's own size, whose runtime_versions (absent
 * from the others) answers 12090 and 12040.
 */
#define _GNU_SOURCE /* MAP_ANONYMOUS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "am_backend.h"
#include "attnmeta/attnmeta.h"

/* The table's entries leave most of their arguments unread. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

static int old_device_count(int *count, char *msg, size_t msg_size) {
  *count = 1;
  return ATTNMETA_OK;
}

static int old_open(int device, void **state, char *name, size_t name_size, char *msg,
                    size_t msg_size) {
  *state = NULL;
  snprintf(name, name_size, "an old module's device");
  return ATTNMETA_OK;
}

static void old_close(void *state) {}

static int old_processor_count(void *state) { return 1; }

static int old_unsupported(char *msg, size_t msg_size) {
  snprintf(msg, msg_size, "the old test module does nothing");
  return ATTNMETA_ERR_NOT_SUPPORTED;
}

static int old_launch_topk(void *state, const am_topk_params *params, const am_launch_shape *shape,
                           void *stream, char *msg, size_t msg_size) {
  abort(); /* past the table this module declares: never to be called */
}

/* Each refuses (the tests call none but launch_step). */
#define OLD_REFUSES(name, ...) \
  static int name(__VA_ARGS__, char *m, size_t n) { return old_unsupported(m, n); }
OLD_REFUSES(old_launch_step, void *state, const am_step_params *params, const am_launch_shape *shape,
            void *stream)
OLD_REFUSES(old_alloc, void *s, size_t b, void **p)
OLD_REFUSES(old_release, void *s, void *p)
OLD_REFUSES(old_copy, void *s, void *d, const void *src, size_t b, int to)
OLD_REFUSES(old_on_stream, void *s, void *x)
OLD_REFUSES(old_make, void *s, void **x)
OLD_REFUSES(old_event_record, void *s, void *e, void *st)
OLD_REFUSES(old_event_elapsed, void *s, void *a, void *b, float *ms)
OLD_REFUSES(old_capture_end, void *s, void *st, void **g)
OLD_REFUSES(old_graph_node_count, void *s, void *g, int64_t *a, int64_t *b)
OLD_REFUSES(old_graph_instantiate, void *s, void *g, void **e)
OLD_REFUSES(old_graph_launch, void *s, void *e, void *st)
OLD_REFUSES(old_graph_destroy, void *s, void *g, void *e)
OLD_REFUSES(old_copy_device, void *s, void *d, const void *src, size_t b, void *st)
#undef OLD_REFUSES

#if defined(MODULE_FULL)
/* Its own words, which a test finds passed through. */
static int full_launch_topk(void *state, const am_topk_params *params, const am_launch_shape *shape,
                            void *stream, char *msg, size_t msg_size) {
  snprintf(msg, msg_size, "the full test module launches nothing");
  return ATTNMETA_ERR_NOT_SUPPORTED;
}

/* Fixed numbers (12.9 and 12.4), which a test finds passed through. */
static int full_runtime_versions(int *driver, int *runtime, char *msg, size_t msg_size) {
  *driver = 12090;
  *runtime = 12040;
  return ATTNMETA_OK;
}
#endif
#pragma GCC diagnostic pop

/* `bytes` at the end of a page followed by an inaccessible one. */
static void *at_page_end(size_t bytes) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const size_t pages = (bytes + page - 1) / page + 1;
  char *p = (char *)mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                         -1, 0);
  if (p == MAP_FAILED) abort();
  if (mprotect(p + (pages - 1) * page, page, PROT_NONE) != 0) abort();
  return p + (pages - 1) * page - bytes;
}

static const am_backend_table *placed;

__attribute__((visibility("default"))) const am_backend_table *attnmeta_backend_entry(void) {
  am_backend_table t;
  size_t bytes = AM_BACKEND_TABLE_MIN_SIZE; /* the bytes really there */
  void *at;
  if (placed) return placed;
  memset(&t, 0, sizeof t);
  t.abi_version = AM_BACKEND_ABI;
  t.table_size = (uint32_t)AM_BACKEND_TABLE_MIN_SIZE;
  t.name = "hip";
  t.targets = "none";
  t.device_count = old_device_count;
  t.open = old_open;
  t.close = old_close;
  t.launch_step = old_launch_step;
  t.processor_count = old_processor_count;
  t.alloc = old_alloc;
  t.release = old_release;
  t.copy = old_copy;
  t.synchronize = old_on_stream;
  t.stream_create = old_make;
  t.stream_destroy = old_on_stream;
  t.event_create = old_make;
  t.event_destroy = old_on_stream;
  t.event_record = old_event_record;
  t.event_elapsed = old_event_elapsed;
  t.capture_begin = old_on_stream;
  t.capture_end = old_capture_end;
  t.graph_node_count = old_graph_node_count;
  t.graph_instantiate = old_graph_instantiate;
  t.graph_launch = old_graph_launch;
  t.graph_destroy = old_graph_destroy;
  t.launch_empty = old_on_stream;
  t.copy_device = old_copy_device;
  t.launch_topk = old_launch_topk;
#ifdef OLD_MODULE_TOO_SHORT
  t.table_size = (uint32_t)AM_BACKEND_TABLE_MIN_SIZE - (uint32_t)sizeof(void *);
  bytes = t.table_size;
#elif defined(MODULE_NULL_ENTRY)
  t.alloc = NULL;
#elif defined(MODULE_NULL_TARGETS)
  t.targets = NULL;
#elif defined(MODULE_LONG_TABLE)
  t.table_size = (uint32_t)(sizeof t + 64);
  bytes = sizeof t + 64;
#elif defined(MODULE_HUGE_TABLE)
  t.table_size = UINT32_MAX;
  bytes = sizeof t;
#elif defined(MODULE_FULL)
  t.table_size = (uint32_t)sizeof t;
  t.launch_topk = full_launch_topk;
  t.runtime_versions = full_runtime_versions;
  bytes = sizeof t;
#endif
  at = at_page_end(bytes);
  memset(at, 0, bytes);
  memcpy(at, &t, bytes < sizeof t ? bytes : sizeof t);
  placed = (const am_backend_table *)at;
  return placed;
}
