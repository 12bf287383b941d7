// SPDX-License-Identifier: Apache-2.0
/* One failure's text and delivery, shared by the step and top-k engines
 * (vecrun_failure.h). */
#include "vecrun_failure.h"

#include <stdio.h>
#include <string.h>

amv_failure amv_failure_at(const char *vector, int32_t rank, const char *config,
                           const char *variant, const char *product, int64_t index,
                           int64_t expected, int64_t got, int64_t wrong) {
  amv_failure f;
  memset(&f, 0, sizeof f);
  f.vector = vector;
  f.rank = rank;
  f.config = config;
  f.variant = variant;
  f.product = product;
  f.index = index;
  f.expected = expected;
  f.got = got;
  f.wrong = wrong;
  return f;
}

void amv_deliver_failure(const amv_runner *opts, amv_outcome *out, amv_failure *f,
                         const char *fmt, va_list ap) {
  char what[512];
  vsnprintf(what, sizeof what, fmt, ap);
  snprintf(f->text, sizeof f->text, "vector=%s rank=%d config=%s variant=%s %s", f->vector,
           (int)f->rank, f->config, f->variant, what);
  out->failures++;
  if (opts->report) opts->report(opts->user, f);
}
