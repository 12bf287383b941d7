// SPDX-License-Identifier: Apache-2.0
/* Internal to the conformance runner: one failure, filled and delivered the
 * same way by the step, top-k and pool engines (vecrun.c, vecrun_topk.c,
 * vecrun_pool.c). */
#ifndef ATTNMETA_CONFORMANCE_VECRUN_FAILURE_H
#define ATTNMETA_CONFORMANCE_VECRUN_FAILURE_H

#include <stdarg.h>

#include "attnmeta/conformance/vecrun.h"

/* A failure of the run (vector, rank, config, variant) at element `index`
 * of `product`: `wrong` elements of it, the first `got` where `expected`. */
amv_failure amv_failure_at(const char *vector, int32_t rank, const char *config,
                           const char *variant, const char *product, int64_t index,
                           int64_t expected, int64_t got, int64_t wrong);
/* Fills *f (the identity of the run and the mismatch), formats its text from
 * fmt/ap, counts it in *out and hands it to opts->report. */
void amv_deliver_failure(const amv_runner *opts, amv_outcome *out, amv_failure *f,
                         const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

#endif
