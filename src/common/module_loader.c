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
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "am_context.h"

#ifndef ATTNMETA_MODULE_INSTALL_DIR
#define ATTNMETA_MODULE_INSTALL_DIR ""
#endif

typedef struct module_slot {
  pthread_once_t once;
  const char *file;
  const am_backend_table *table;
  attnmeta_status status;
  char message[AM_MESSAGE_SIZE];
} module_slot;

static module_slot cuda_slot = {PTHREAD_ONCE_INIT, "libattnmeta_cuda.so", NULL, ATTNMETA_OK, ""};
static module_slot hip_slot = {PTHREAD_ONCE_INIT, "libattnmeta_hip.so", NULL, ATTNMETA_OK, ""};

static void copy_text(char *dst, size_t size, const char *src) {
  size_t n = strlen(src);
  if (size == 0) return;
  if (n >= size) n = size - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* Tries dir/file (or file alone through the loader's path when dir is NULL).
 * On failure, keeps in `why` the reason of the first candidate whose file
 * exists (a module that is there but cannot load says more than the ones
 * that are absent), else of the latest one. */
static void *open_in(const char *dir, const char *file, char *why, size_t why_size, int *why_kept) {
  char path[AM_MODULE_PATH_MAX];
  void *handle;
  const int n = dir && dir[0] ? snprintf(path, sizeof path, "%s/%s", dir, file)
                              : snprintf(path, sizeof path, "%s", file);
  if (n < 0 || (size_t)n >= sizeof path) {
    if (!*why_kept) {
      snprintf(why, why_size, "the module path %.64s.../%s is longer than %zu bytes: refused",
               dir ? dir : "", file, sizeof path - 1);
      *why_kept = 1;
    }
    return NULL;
  }
  handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *err = dlerror();
    if (!*why_kept) {
      copy_text(why, why_size, err ? err : path);
      if (dir && dir[0] && access(path, F_OK) == 0) *why_kept = 1;
    }
  }
  return handle;
}

const char *am_environment(const char *name) { return secure_getenv(name); }

static void *open_module(const char *file, char *why, size_t why_size) {
  char own_dir[AM_MODULE_PATH_MAX] = "";
  char sub_dir[AM_MODULE_PATH_MAX + 16];
  Dl_info info;
  void *handle;
  int why_kept = 0;
  const char *env = am_environment("ATTNMETA_MODULE_DIR");
  if (env && env[0]) return open_in(env, file, why, why_size, &why_kept);
  if (dladdr((void *)&attnmeta_version, &info) && info.dli_fname) {
    const char *slash = strrchr(info.dli_fname, '/');
    /* a folder too long for the buffer is skipped, never cut */
    if (slash && (size_t)(slash - info.dli_fname) < sizeof own_dir) {
      const size_t n = (size_t)(slash - info.dli_fname);
      memcpy(own_dir, info.dli_fname, n);
      own_dir[n] = '\0';
      snprintf(sub_dir, sizeof sub_dir, "%s/attnmeta", own_dir);
      handle = open_in(sub_dir, file, why, why_size, &why_kept);
      if (handle) return handle;
      if (own_dir[0]) {
        handle = open_in(own_dir, file, why, why_size, &why_kept);
        if (handle) return handle;
      }
    }
  }
  if (ATTNMETA_MODULE_INSTALL_DIR[0]) {
    handle = open_in(ATTNMETA_MODULE_INSTALL_DIR, file, why, why_size, &why_kept);
    if (handle) return handle;
  }
  return open_in(NULL, file, why, why_size, &why_kept);
}

static void load_slot(module_slot *slot) {
  char why[AM_MESSAGE_SIZE / 2] = "";
  void *handle = open_module(slot->file, why, sizeof why);
  am_backend_entry_fn entry;
  const am_backend_table *table;
  if (!handle) {
    slot->status = ATTNMETA_ERR_BACKEND_UNAVAILABLE;
    snprintf(slot->message, sizeof slot->message, "cannot load %s: %s", slot->file, why);
    return;
  }
  *(void **)(&entry) = dlsym(handle, AM_BACKEND_ENTRY_SYMBOL);
  if (!entry) {
    slot->status = ATTNMETA_ERR_BACKEND_UNAVAILABLE;
    snprintf(slot->message, sizeof slot->message, "%s exports no %s", slot->file,
             AM_BACKEND_ENTRY_SYMBOL);
    return;
  }
  table = entry();
  if (!table || table->abi_version != AM_BACKEND_ABI ||
      table->table_size < AM_BACKEND_TABLE_MIN_SIZE) {
    slot->status = ATTNMETA_ERR_ABI_MISMATCH;
    snprintf(slot->message, sizeof slot->message,
             "%s has backend ABI %u (table of %u bytes); this library needs ABI %d (at least "
             "%zu bytes)",
             slot->file, table ? table->abi_version : 0u, table ? table->table_size : 0u,
             AM_BACKEND_ABI, (size_t)AM_BACKEND_TABLE_MIN_SIZE);
    return;
  }
  slot->table = table;
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
