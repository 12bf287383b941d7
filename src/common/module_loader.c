/*
 * Finds a backend's table: the CPU backend is linked in; the CUDA and HIP
 * backends are modules loaded with dlopen on first use, from (in order)
 * $ATTNMETA_MODULE_DIR, the folder of this library, the folder the build
 * recorded (ATTNMETA_MODULE_INSTALL_DIR), then the loader's search path.
 * A module is loaded once per process and never unloaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void *open_in(const char *dir, const char *file, char *why, size_t why_size) {
  char path[4096];
  void *handle;
  if (dir && dir[0]) {
    snprintf(path, sizeof path, "%s/%s", dir, file);
  } else {
    snprintf(path, sizeof path, "%s", file);
  }
  handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *err = dlerror();
    snprintf(why, why_size, "%s", err ? err : path);
  }
  return handle;
}

static void *open_module(const char *file, char *why, size_t why_size) {
  char own_dir[4096] = "";
  Dl_info info;
  void *handle;
  const char *env = getenv("ATTNMETA_MODULE_DIR");
  if (env && env[0]) return open_in(env, file, why, why_size);
  if (dladdr((void *)&attnmeta_version, &info) && info.dli_fname) {
    const char *slash = strrchr(info.dli_fname, '/');
    if (slash) {
      size_t n = (size_t)(slash - info.dli_fname);
      if (n >= sizeof own_dir) n = sizeof own_dir - 1;
      memcpy(own_dir, info.dli_fname, n);
      own_dir[n] = '\0';
      handle = open_in(own_dir, file, why, why_size);
      if (handle) return handle;
    }
  }
  if (ATTNMETA_MODULE_INSTALL_DIR[0]) {
    handle = open_in(ATTNMETA_MODULE_INSTALL_DIR, file, why, why_size);
    if (handle) return handle;
  }
  return open_in(NULL, file, why, why_size);
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
      table->table_size < sizeof(am_backend_table)) {
    slot->status = ATTNMETA_ERR_ABI_MISMATCH;
    snprintf(slot->message, sizeof slot->message,
             "%s has backend ABI %u (table of %u bytes); this library needs ABI %d (%zu bytes)",
             slot->file, table ? table->abi_version : 0u, table ? table->table_size : 0u,
             AM_BACKEND_ABI, sizeof(am_backend_table));
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
