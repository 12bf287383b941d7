// SPDX-License-Identifier: Apache-2.0
/* One failure's text and delivery, shared by the step and top-k engines
 * (vecrun_failure.h). */
#include "vecrun_failure.h"

#include <stdio.h>

void amv_deliver_failure(const amv_runner *opts, amv_outcome *out, amv_failure *f,
                         const char *fmt, va_list ap) {
  char what[512];
  vsnprintf(what, sizeof what, fmt, ap);
  snprintf(f->text, sizeof f->text, "vector=%s rank=%d config=%s variant=%s %s", f->vector,
           (int)f->rank, f->config, f->variant, what);
  out->failures++;
  if (opts->report) opts->report(opts->user, f);
}
