// SPDX-License-Identifier: Apache-2.0
/* Opt-in diagnostics on stderr: the library prints nothing unless the
 * environment sets ATTNMETA_LOG_LEVEL (docs/reliability.md, "Logging"). */
#ifndef ATTNMETA_AM_LOG_H
#define ATTNMETA_AM_LOG_H

typedef enum am_log_level {
  AM_LOG_OFF = 0,
  AM_LOG_ERROR = 1, /* refusals: a module that cannot be used */
  AM_LOG_INFO = 2,  /* what was loaded, from where */
  AM_LOG_DEBUG = 3  /* every candidate tried, and why it failed */
} am_log_level;

/* The level ATTNMETA_LOG_LEVEL names ("off", "error", "info", "debug", or
 * 0 to 3), read once; off when unset or not understood. */
am_log_level am_log_level_now(void);

/* One line "attnmeta: <level>: <text>" on stderr when `level` is enabled. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void am_log(am_log_level level, const char *fmt, ...);

#endif /* ATTNMETA_AM_LOG_H */
