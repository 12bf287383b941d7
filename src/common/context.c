// SPDX-License-Identifier: Apache-2.0
/* Contexts, version, backend queries, launch configuration and the memory
 * utilities: the public API that is not an operation. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "am_context.h"
#include "am_environment.h"
#include "am_paths_off.h"

static _Thread_local char open_message[AM_MESSAGE_SIZE];
static _Thread_local char thread_message[AM_MESSAGE_SIZE];
static _Thread_local const attnmeta_context *thread_message_owner;

int attnmeta_version(void) { return ATTNMETA_VERSION; }

const char *attnmeta_version_string(void) {
#define AM_STR2(x) #x
#define AM_STR(x) AM_STR2(x)
  return AM_STR(ATTNMETA_VERSION_MAJOR) "." AM_STR(ATTNMETA_VERSION_MINOR) "." AM_STR(
      ATTNMETA_VERSION_PATCH);
}

char *am_message(const attnmeta_context *ctx) {
  thread_message_owner = ctx;
  return thread_message;
}

void am_forget_message(const attnmeta_context *ctx) {
  if (thread_message_owner == ctx) thread_message_owner = NULL;
}

attnmeta_status am_fail(attnmeta_context *ctx, attnmeta_status status, const char *fmt, ...) {
  char text[AM_MESSAGE_SIZE];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof text, fmt, args); /* fmt's arguments may be the message itself */
  va_end(args);
  memcpy(am_message(ctx), text, sizeof text);
  return status;
}

attnmeta_status am_succeed(attnmeta_context *ctx) {
  if (thread_message_owner == ctx) thread_message[0] = '\0';
  return ATTNMETA_OK;
}

const char *attnmeta_open_error(void) { return open_message; }

/* ATTNMETA_BACKEND=cpu|cuda|hip|auto forces what AUTO picks (not in a
 * privileged process: am_environment). */
static attnmeta_status backend_from_env(attnmeta_backend *kind) {
  const char *env = am_environment("ATTNMETA_BACKEND");
  static const attnmeta_backend kinds[] = {ATTNMETA_BACKEND_AUTO, ATTNMETA_BACKEND_CPU,
                                           ATTNMETA_BACKEND_CUDA, ATTNMETA_BACKEND_HIP};
  size_t i;
  if (!env || !env[0]) return ATTNMETA_OK;
  for (i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
    if (strcasecmp(env, attnmeta_backend_name(kinds[i])) == 0) {
      *kind = kinds[i];
      return ATTNMETA_OK;
    }
  }
  snprintf(open_message, sizeof open_message,
           "ATTNMETA_BACKEND=%s is not one of auto, cpu, cuda, hip", env);
  return ATTNMETA_ERR_UNKNOWN_BACKEND;
}

static attnmeta_status open_on(attnmeta_context *ctx, attnmeta_backend kind, int device) {
  attnmeta_status status;
  const am_backend_table *table =
      am_backend_for(kind, &status, open_message, sizeof open_message);
  if (!table) return status;
  if (device < 0) {
    snprintf(open_message, sizeof open_message, "device ordinal %d is negative", device);
    return ATTNMETA_ERR_INVALID_ARGUMENT;
  }
  status = (attnmeta_status)table->open(device, &ctx->state, ctx->device_name,
                                        sizeof ctx->device_name, open_message,
                                        sizeof open_message);
  if (status != ATTNMETA_OK) return status;
  ctx->kind = kind;
  ctx->device = device;
  ctx->table = table;
  ctx->processors = table->processor_count(ctx->state);
  ctx->config = attnmeta_launch_config_default();
  ctx->paths_off = am_paths_off(getenv("ATTNMETA_PATHS_OFF"));
  return ATTNMETA_OK;
}

/* The open failed on the backend ATTNMETA_BACKEND forced: say so first,
 * since the caller asked for auto. */
static void name_forcing_variable(attnmeta_backend kind) {
  char why[AM_MESSAGE_SIZE];
  const char *env = am_environment("ATTNMETA_BACKEND");
  memcpy(why, open_message, sizeof why);
  snprintf(open_message, sizeof open_message,
           "ATTNMETA_BACKEND=%.16s forces backend %s, which cannot be opened "
           "(unset it to let auto pick): %.*s",
           env ? env : "", attnmeta_backend_name(kind), (int)(sizeof why / 2), why);
}

attnmeta_status attnmeta_open(attnmeta_context **out, attnmeta_backend kind, int device) {
  attnmeta_context *ctx;
  attnmeta_status status;
  int forced = 0;
  open_message[0] = '\0';
  if (!out) {
    snprintf(open_message, sizeof open_message, "out (the context pointer) is NULL");
    return ATTNMETA_ERR_NULL_POINTER;
  }
  *out = NULL;
  if (kind == ATTNMETA_BACKEND_AUTO) {
    status = backend_from_env(&kind);
    if (status != ATTNMETA_OK) return status;
    forced = kind != ATTNMETA_BACKEND_AUTO;
  }
  if (kind != ATTNMETA_BACKEND_AUTO && kind != ATTNMETA_BACKEND_CPU &&
      kind != ATTNMETA_BACKEND_CUDA && kind != ATTNMETA_BACKEND_HIP) {
    snprintf(open_message, sizeof open_message, "unknown backend kind %d", (int)kind);
    return ATTNMETA_ERR_UNKNOWN_BACKEND;
  }
  ctx = (attnmeta_context *)calloc(1, sizeof *ctx);
  if (!ctx) {
    snprintf(open_message, sizeof open_message, "cannot allocate a context");
    return ATTNMETA_ERR_OUT_OF_MEMORY;
  }
  if (kind == ATTNMETA_BACKEND_AUTO) {
    static const attnmeta_backend order[] = {ATTNMETA_BACKEND_CUDA, ATTNMETA_BACKEND_HIP,
                                             ATTNMETA_BACKEND_CPU};
    size_t i;
    status = ATTNMETA_ERR_NO_DEVICE;
    for (i = 0; i < sizeof order / sizeof order[0] && status != ATTNMETA_OK; ++i) {
      int count = 0;
      if (attnmeta_backend_device_count(order[i], &count) == ATTNMETA_OK && count > device)
        status = open_on(ctx, order[i], device);
    }
    if (status != ATTNMETA_OK && !open_message[0])
      snprintf(open_message, sizeof open_message, "no backend has a device %d", device);
  } else {
    status = open_on(ctx, kind, device);
  }
  if (status != ATTNMETA_OK) {
    if (forced) name_forcing_variable(kind);
    free(ctx);
    return status;
  }
  *out = ctx;
  return ATTNMETA_OK;
}

attnmeta_status attnmeta_close(attnmeta_context *ctx) {
  if (!ctx) return ATTNMETA_OK;
  am_forget_message(ctx);
  ctx->table->close(ctx->state);
  free(ctx);
  return ATTNMETA_OK;
}

attnmeta_backend attnmeta_context_backend(const attnmeta_context *ctx) {
  return ctx ? ctx->kind : ATTNMETA_BACKEND_AUTO;
}

int attnmeta_context_device(const attnmeta_context *ctx) { return ctx ? ctx->device : -1; }

const char *attnmeta_context_device_name(const attnmeta_context *ctx) {
  return ctx ? ctx->device_name : "";
}

const char *attnmeta_last_error(const attnmeta_context *ctx) {
  if (!ctx) return "context is NULL";
  return thread_message_owner == ctx ? thread_message : "";
}

attnmeta_status attnmeta_backend_device_count(attnmeta_backend kind, int *count) {
  char msg[AM_MESSAGE_SIZE];
  attnmeta_status status;
  const am_backend_table *table;
  if (!count) return ATTNMETA_ERR_NULL_POINTER;
  *count = 0;
  table = am_backend_for(kind, &status, msg, sizeof msg);
  if (!table) return status == ATTNMETA_ERR_UNKNOWN_BACKEND ? status : ATTNMETA_OK;
  return (attnmeta_status)table->device_count(count, msg, sizeof msg);
}

attnmeta_status attnmeta_backend_targets(attnmeta_backend kind, const char **targets) {
  char msg[AM_MESSAGE_SIZE];
  attnmeta_status status;
  const am_backend_table *table;
  if (!targets) return ATTNMETA_ERR_NULL_POINTER;
  *targets = "";
  table = am_backend_for(kind, &status, msg, sizeof msg);
  if (!table) return status;
  *targets = table->targets;
  return ATTNMETA_OK;
}

attnmeta_status attnmeta_backend_module_path(attnmeta_backend kind, const char **path) {
  char msg[AM_MESSAGE_SIZE];
  attnmeta_status status;
  const am_backend_table *table;
  Dl_info info;
  union {
    int (*fn)(int *, char *, size_t);
    void *address;
  } code;
  if (!path) return ATTNMETA_ERR_NULL_POINTER;
  *path = "";
  table = am_backend_for(kind, &status, msg, sizeof msg);
  if (!table) return status;
  /* The loader keeps its own copy of a module's table, but the functions
   * it points to are the module's code; modules are never unloaded, so the
   * loader's name for the file stays valid. */
  code.fn = table->device_count;
  if (dladdr(code.address, &info) && info.dli_fname) *path = info.dli_fname;
  return ATTNMETA_OK;
}

attnmeta_launch_config attnmeta_launch_config_default(void) {
  attnmeta_launch_config config;
  config.block = 0;
  config.grid = 0;
  config.stage = -1;
  config.vector = -1;
  config.lanes = 0;
  return config;
}

attnmeta_status attnmeta_set_launch_config(attnmeta_context *ctx,
                                           const attnmeta_launch_config *config) {
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  if (!config) {
    ctx->config = attnmeta_launch_config_default();
    return am_succeed(ctx);
  }
  if (config->block < 0 || config->grid < 0 || config->lanes < 0)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "launch config: block (%d), grid (%d) and lanes (%d) must be >= 0",
                   config->block, config->grid, config->lanes);
  if (config->stage < -1 || config->stage > 1 || config->vector < -1 || config->vector > 1)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "launch config: stage (%d) and vector (%d) must be -1, 0 or 1", config->stage,
                   config->vector);
  if (ctx->kind == ATTNMETA_BACKEND_CPU && config->block > 1)
    return am_fail(ctx, ATTNMETA_ERR_NOT_SUPPORTED,
                   "launch config: the CPU backend runs one thread per block; block %d asked",
                   config->block);
  if (config->block > 1024)
    return am_fail(ctx, ATTNMETA_ERR_INVALID_ARGUMENT,
                   "launch config: block %d is over 1024 threads", config->block);
  ctx->config = *config;
  return am_succeed(ctx);
}

/* ---- memory utilities ---- */

attnmeta_status attnmeta_device_alloc(attnmeta_context *ctx, size_t bytes, void **ptr) {
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  if (!ptr) return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER, "ptr is NULL");
  attnmeta_status status;
  *ptr = NULL;
  status = (attnmeta_status)ctx->table->alloc(ctx->state, bytes, ptr, am_message(ctx),
                                              AM_MESSAGE_SIZE);
  return status == ATTNMETA_OK ? am_succeed(ctx) : status;
}

attnmeta_status attnmeta_device_free(attnmeta_context *ctx, void *ptr) {
  attnmeta_status status;
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  if (!ptr) return am_succeed(ctx);
  status = (attnmeta_status)ctx->table->release(ctx->state, ptr, am_message(ctx), AM_MESSAGE_SIZE);
  return status == ATTNMETA_OK ? am_succeed(ctx) : status;
}

static attnmeta_status copy(attnmeta_context *ctx, void *dst, const void *src, size_t bytes,
                            int to_device) {
  attnmeta_status status;
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  if (bytes && (!dst || !src))
    return am_fail(ctx, ATTNMETA_ERR_NULL_POINTER, "copy of %zu bytes with a NULL %s", bytes,
                   dst ? "source" : "destination");
  if (!bytes) return am_succeed(ctx);
  status = (attnmeta_status)ctx->table->copy(ctx->state, dst, src, bytes, to_device, am_message(ctx),
                                             AM_MESSAGE_SIZE);
  return status == ATTNMETA_OK ? am_succeed(ctx) : status;
}

attnmeta_status attnmeta_copy_to_device(attnmeta_context *ctx, void *dst, const void *src,
                                        size_t bytes) {
  return copy(ctx, dst, src, bytes, 1);
}

attnmeta_status attnmeta_copy_to_host(attnmeta_context *ctx, void *dst, const void *src,
                                      size_t bytes) {
  return copy(ctx, dst, src, bytes, 0);
}

attnmeta_status attnmeta_synchronize(attnmeta_context *ctx, void *stream) {
  attnmeta_status status;
  if (!ctx) return ATTNMETA_ERR_INVALID_CONTEXT;
  status = (attnmeta_status)ctx->table->synchronize(ctx->state, stream, am_message(ctx),
                                                    AM_MESSAGE_SIZE);
  return status == ATTNMETA_OK ? am_succeed(ctx) : status;
}
