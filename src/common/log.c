// SPDX-License-Identifier: Apache-2.0
/*
 * ATTNMETA_LOG_LEVEL: the only way the library writes to stderr. The level
 * is read once per process (secure_getenv, through am_environment); each
 * message is formatted first and written with one fputs, so lines of
 * several threads do not interleave within a line.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "am_environment.h"
#include "am_log.h"

static pthread_once_t level_once = PTHREAD_ONCE_INIT;
static am_log_level level_read = AM_LOG_OFF;

static void read_level(void) {
  static const char *const names[] = {"off", "error", "info", "debug"};
  const char *v = am_environment("ATTNMETA_LOG_LEVEL");
  int i;
  if (!v) return;
  for (i = 0; i < 4; ++i)
    if (strcasecmp(v, names[i]) == 0 || (v[0] == (char)('0' + i) && v[1] == '\0'))
      level_read = (am_log_level)i;
}

am_log_level am_log_level_now(void) {
  pthread_once(&level_once, read_level);
  return level_read;
}

void am_log(am_log_level level, const char *fmt, ...) {
  static const char *const names[] = {"off", "error", "info", "debug"};
  char line[1024];
  va_list ap;
  int n;
  if (level == AM_LOG_OFF || level > am_log_level_now()) return;
  n = snprintf(line, sizeof line, "attnmeta: %s: ", names[level]);
  if (n < 0 || (size_t)n >= sizeof line) return;
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
  va_end(ap);
  n = (int)strlen(line);
  line[n] = '\n';
  line[n + 1] = '\0';
  fputs(line, stderr);
}
