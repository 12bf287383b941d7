// SPDX-License-Identifier: Apache-2.0
/*
 * Finds a backend's table: the CPU backend is linked in; the CUDA and HIP
 * backends are modules loaded with dlopen on first use. Search order:
 *
 *  1. $ATTNMETA_MODULE_DIR, when set and not empty: that folder only (an
 *     explicit choice is never silently replaced by another copy); read
 *     with secure_getenv, so a set-user-ID or set-group-ID program never
 *     loads a module from a folder its caller names;
 *  2. <folder of this library>/attnmeta  (the installed layout:
 *     <libdir>/libattnmeta.so.0 and <libdir>/attnmeta/libattnmeta_cuda.so);
 *  3. <folder of this library>           (the build tree: everything in lib/);
 *  4. the folder the build recorded, ATTNMETA_MODULE_INSTALL_DIR
 *     (<install libdir>/attnmeta, for a static core linked into a program);
 *  5. the dynamic loader's own search path (LD_LIBRARY_PATH, ld.so.cache).
 *
 * An installed library therefore finds the modules installed beside it and
 * never the build tree. A module is loaded once per process and never
 * unloaded. A candidate path that does not fit the loader's buffer is
 * refused, never cut short (a cut path could name another file).
 *
 * A module's table is checked before use, and a module that fails is
 * skipped (closed; the search goes on): it must have this library's ABI, a
 * table_size between the first ABI's table and this library's own table,
 * a name and targets, and every function up to copy_device. The loader
 * copies exactly table_size bytes of it (never reading past the module's
 * table) into a table of this library's size, zeros past them, so the
 * members appended later read as absent (am_backend_has).
 * ATTNMETA_LOG_LEVEL reports each step on stderr (am_log.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "am_context.h"
#include "am_environment.h"
#include "am_log.h"

#ifndef ATTNMETA_MODULE_INSTALL_DIR
#define ATTNMETA_MODULE_INSTALL_DIR ""
#endif

typedef struct module_slot {
  pthread_once_t once;
  const char *file;
  const am_backend_table *table; /* &copy once a module is taken */
  attnmeta_status status;
  char message[AM_MESSAGE_SIZE];
  am_backend_table copy; /* the module's table_size bytes, zeros past them */
} module_slot;

static module_slot cuda_slot = {PTHREAD_ONCE_INIT, "libattnmeta_cuda.so", NULL, ATTNMETA_OK, "", {0}};
static module_slot hip_slot = {PTHREAD_ONCE_INIT, "libattnmeta_hip.so", NULL, ATTNMETA_OK, "", {0}};

/* The functions every table of this ABI has (up to copy_device). */
#define REQUIRED(member) {#member, offsetof(am_backend_table, member)}
static const struct {
  const char *name;
  size_t offset;
} required_functions[] = {
    REQUIRED(device_count),     REQUIRED(open),           REQUIRED(close),
    REQUIRED(launch_step),      REQUIRED(alloc),          REQUIRED(release),
    REQUIRED(copy),             REQUIRED(synchronize),    REQUIRED(processor_count),
    REQUIRED(stream_create),    REQUIRED(stream_destroy), REQUIRED(event_create),
    REQUIRED(event_destroy),    REQUIRED(event_record),   REQUIRED(event_elapsed),
    REQUIRED(capture_begin),    REQUIRED(capture_end),    REQUIRED(graph_node_count),
    REQUIRED(graph_instantiate), REQUIRED(graph_launch),  REQUIRED(graph_destroy),
    REQUIRED(launch_empty),     REQUIRED(copy_device)};
#undef REQUIRED
_Static_assert(offsetof(am_backend_table, copy_device) + sizeof(void (*)(void)) ==
                   AM_BACKEND_TABLE_MIN_SIZE,
               "the required functions end at the smallest table");

static void copy_text(char *dst, size_t size, const char *src) {
  size_t n = strlen(src);
  if (size == 0) return;
  if (n >= size) n = size - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* Why `table` (from `path`) cannot be used, into why; NULL when it can. */
static const char *table_fault(const am_backend_table *table, char *why, size_t why_size) {
  size_t i;
  if (!table) return "its entry point returned no table";
  if (table->abi_version != AM_BACKEND_ABI) {
    snprintf(why, why_size, "it has backend ABI %u; this library needs ABI %d",
             table->abi_version, AM_BACKEND_ABI);
    return why;
  }
  if (table->table_size < AM_BACKEND_TABLE_MIN_SIZE || table->table_size > sizeof *table) {
    snprintf(why, why_size,
             "its table of %u bytes is outside the %zu to %zu bytes this library knows for ABI %d",
             table->table_size, (size_t)AM_BACKEND_TABLE_MIN_SIZE, sizeof *table, AM_BACKEND_ABI);
    return why;
  }
  if (!table->name || !table->targets) {
    snprintf(why, why_size, "its table has no %s", table->name ? "targets" : "name");
    return why;
  }
  for (i = 0; i < sizeof required_functions / sizeof required_functions[0]; ++i) {
    void (*fn)(void);
    memcpy(&fn, (const char *)table + required_functions[i].offset, sizeof fn);
    if (!fn) {
      snprintf(why, why_size, "its table has no %s function", required_functions[i].name);
      return why;
    }
  }
  return NULL;
}

/* Takes the module's table into slot->copy: exactly table_size bytes. */
static void take_table(module_slot *slot, const am_backend_table *table) {
  memset(&slot->copy, 0, sizeof slot->copy);
  memcpy(&slot->copy, table, table->table_size);
  slot->table = &slot->copy;
}

/* Tries dir/file (or file alone through the loader's path when dir is NULL):
 * 1 when its table was taken. On failure, keeps in `why` the reason of the
 * first candidate whose file exists (a module that is there but cannot load
 * or is refused says more than the ones that are absent), else of the
 * latest one; *refused is set when a module loaded but its table failed. */
static int try_in(module_slot *slot, const char *dir, char *why, size_t why_size, int *why_kept,
                  int *refused) {
  char path[AM_MODULE_PATH_MAX];
  char fault[AM_MESSAGE_SIZE / 4];
  const char *bad;
  void *handle;
  am_backend_entry_fn entry;
  const am_backend_table *table;
  const char *file = slot->file;
  const int n = dir && dir[0] ? snprintf(path, sizeof path, "%s/%s", dir, file)
                              : snprintf(path, sizeof path, "%s", file);
  if (n < 0 || (size_t)n >= sizeof path) {
    if (!*why_kept) {
      snprintf(why, why_size, "the module path %.64s.../%s is longer than %zu bytes: refused",
               dir ? dir : "", file, sizeof path - 1);
      *why_kept = 1;
    }
    am_log(AM_LOG_DEBUG, "a path to %s in %.64s... is too long: skipped", file, dir ? dir : "");
    return 0;
  }
  handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *err = dlerror();
    am_log(AM_LOG_DEBUG, "%s: %s", path, err ? err : "cannot be loaded");
    if (!*why_kept) {
      copy_text(why, why_size, err ? err : path);
      if (dir && dir[0] && access(path, F_OK) == 0) *why_kept = 1;
    }
    return 0;
  }
  *(void **)(&entry) = dlsym(handle, AM_BACKEND_ENTRY_SYMBOL);
  table = entry ? entry() : NULL;
  bad = entry ? table_fault(table, fault, sizeof fault) : "it exports no " AM_BACKEND_ENTRY_SYMBOL;
  if (bad) {
    am_log(AM_LOG_ERROR, "module %s refused: %s", path, bad);
    if (!*refused && snprintf(why, why_size, "%s refused: %s", path, bad) >= (int)why_size)
      am_log(AM_LOG_DEBUG, "the reason for %s was cut short", path);
    *why_kept = 1;
    *refused = 1;
    dlclose(handle);
    return 0;
  }
  take_table(slot, table);
  am_log(AM_LOG_INFO, "%s backend module loaded from %s (table of %u bytes, targets %s)",
         slot->copy.name, path, slot->copy.table_size, slot->copy.targets);
  return 1;
}

/* The search of the file comment; 1 when a module's table was taken. */
static int find_module(module_slot *slot, char *why, size_t why_size, int *refused) {
  char own_dir[AM_MODULE_PATH_MAX] = "";
  char sub_dir[AM_MODULE_PATH_MAX + 16];
  Dl_info info;
  int why_kept = 0;
  const char *env = am_environment("ATTNMETA_MODULE_DIR");
  if (env && env[0]) return try_in(slot, env, why, why_size, &why_kept, refused);
  if (dladdr((void *)&attnmeta_version, &info) && info.dli_fname) {
    const char *slash = strrchr(info.dli_fname, '/');
    /* a folder too long for the buffer is skipped, never cut */
    if (slash && (size_t)(slash - info.dli_fname) < sizeof own_dir) {
      const size_t n = (size_t)(slash - info.dli_fname);
      memcpy(own_dir, info.dli_fname, n);
      own_dir[n] = '\0';
      snprintf(sub_dir, sizeof sub_dir, "%s/attnmeta", own_dir);
      if (try_in(slot, sub_dir, why, why_size, &why_kept, refused)) return 1;
      if (own_dir[0] && try_in(slot, own_dir, why, why_size, &why_kept, refused)) return 1;
    }
  }
  if (ATTNMETA_MODULE_INSTALL_DIR[0] &&
      try_in(slot, ATTNMETA_MODULE_INSTALL_DIR, why, why_size, &why_kept, refused))
    return 1;
  return try_in(slot, NULL, why, why_size, &why_kept, refused);
}

static void load_slot(module_slot *slot) {
  char why[AM_MESSAGE_SIZE / 2] = "";
  int refused = 0;
  if (find_module(slot, why, sizeof why, &refused)) return;
  slot->status = refused ? ATTNMETA_ERR_ABI_MISMATCH : ATTNMETA_ERR_BACKEND_UNAVAILABLE;
  snprintf(slot->message, sizeof slot->message, "cannot load %s: %s", slot->file, why);
  am_log(refused ? AM_LOG_ERROR : AM_LOG_INFO, "%s", slot->message);
}

static void load_cuda(void) { load_slot(&cuda_slot); }
static void load_hip(void) { load_slot(&hip_slot); }

const am_backend_table *am_backend_for(attnmeta_backend kind, attnmeta_status *status, char *msg,
                                       size_t msg_size) {
  module_slot *slot;
  switch (kind) {
    case ATTNMETA_BACKEND_CPU:
      *status = ATTNMETA_OK;
      return am_cpu_backend();
    case ATTNMETA_BACKEND_CUDA:
      slot = &cuda_slot;
      pthread_once(&slot->once, load_cuda);
      break;
    case ATTNMETA_BACKEND_HIP:
      slot = &hip_slot;
      pthread_once(&slot->once, load_hip);
      break;
    default:
      *status = ATTNMETA_ERR_UNKNOWN_BACKEND;
      snprintf(msg, msg_size, "unknown backend kind %d", (int)kind);
      return NULL;
  }
  *status = slot->table ? ATTNMETA_OK : slot->status;
  if (!slot->table) snprintf(msg, msg_size, "%s", slot->message);
  return slot->table;
}
