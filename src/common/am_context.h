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
  unsigned paths_off; /* AM_PATH_* bits: special paths switched off for measurement */
  char device_name[128];
};

/* The kernel's special paths, each switched off by its name in the
 * environment variable ATTNMETA_PATHS_OFF (comma-separated, read when a
 * context opens), so that `bench/paths_ab.sh` can show what each one wins
 * on a GPU against the same build without it. Results never change: each
 * path only replaces work by equivalent work. Not for production use. */
enum {
  AM_PATH_SPECULATE_FIRST = 1 << 0,  /* "speculate_first": row + length on the first guess */
  AM_PATH_SPECULATE_SECOND = 1 << 1, /* "speculate_second": the same on the second guess */
  AM_PATH_INDEXER_VARIANT = 1 << 2,  /* "indexer_variant": the compiled-in indexer product set */
  AM_PATH_REALIGN = 1 << 3,          /* "realign": 16-byte copies of unaligned rows */
  AM_PATH_TAIL_VECTORS = 1 << 4,     /* "tail_vectors": 16-byte stores of the seq_lens tail */
  AM_PATH_ALIGNED_ROWS = 1 << 5      /* "aligned_rows": 16-byte copies of aligned rows */
};
unsigned am_paths_off(const char *names);

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

/* The backend table for `kind`, loading its module on first use. NULL with
 * a message in msg when it cannot be had. Thread-safe. */
const am_backend_table *am_backend_for(attnmeta_backend kind, attnmeta_status *status, char *msg,
                                       size_t msg_size);

#endif /* ATTNMETA_AM_CONTEXT_H */
