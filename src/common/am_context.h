// SPDX-License-Identifier: Apache-2.0
/* The context behind the opaque handle, shared by the dispatcher's files. */
#ifndef ATTNMETA_AM_CONTEXT_H
#define ATTNMETA_AM_CONTEXT_H

#include <stdarg.h>

#include "am_backend.h"
#include "attnmeta/attnmeta.h"

#define AM_MESSAGE_SIZE 512

struct attnmeta_context {
  attnmeta_backend kind;
  int device;
  const am_backend_table *table;
  void *state;
  int processors;
  attnmeta_launch_config config;
  unsigned paths_off; /* AM_PATH_* bits (am_paths_off.h): special paths switched off */
  char device_name[128];
};

/* Records a formatted message on ctx and returns `status`. */
attnmeta_status am_fail(attnmeta_context *ctx, attnmeta_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Clears the message and returns ATTNMETA_OK. */
attnmeta_status am_succeed(attnmeta_context *ctx);

/* The calling thread's message buffer (AM_MESSAGE_SIZE bytes), from now on
 * the message of ctx for this thread. Messages are per thread and context,
 * so threads sharing a context never write the same buffer. */
char *am_message(const attnmeta_context *ctx);
/* Forgets ctx as the owner of this thread's message (when it is closed). */
void am_forget_message(const attnmeta_context *ctx);

/* Longest path of a module file the loader tries (bytes, with the NUL). */
#define AM_MODULE_PATH_MAX 4096

/* The backend table for `kind`, loading its module on first use. NULL with
 * a message in msg when it cannot be had. Thread-safe. */
const am_backend_table *am_backend_for(attnmeta_backend kind, attnmeta_status *status, char *msg,
                                       size_t msg_size);

#endif /* ATTNMETA_AM_CONTEXT_H */
