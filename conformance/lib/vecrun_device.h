// SPDX-License-Identifier: Apache-2.0
/* Internal to the conformance runner: what the pool and top-k engines
 * (vecrun_pool.c, vecrun_topk.c) do alike on the device: buffers and
 * copies, an output between guard zones in a poisoned buffer and the sweep
 * that checks it element by element, the launch's status, the error word,
 * and the loop over the launch configs. */
#ifndef ATTNMETA_CONFORMANCE_VECRUN_DEVICE_H
#define ATTNMETA_CONFORMANCE_VECRUN_DEVICE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "attnmeta/conformance/vecfile.h"
#include "attnmeta/conformance/vecrun.h"

#define AMV_GUARD 64 /* poisoned elements before and after an output */
#define AMV_POISON_BYTE 0x5A
#define AMV_PRESET_BIT (1 << 30) /* the error word's start, which must survive */

/* One vector's run, the first member of the engine's own. */
typedef struct amv_devrun amv_devrun;
struct amv_devrun {
  const amv_runner *opts;
  amv_outcome *out;
  const char *config, *variant;
  int stop; /* set on a failure that ends the vector's run */
  int32_t *d_err; /* the error word on the device */
  /* the engine's report of a failure (product "", index -1: at no element) */
  void (*report)(amv_devrun *r, const char *product, int64_t index, int64_t expected,
                 int64_t got, const char *fmt, va_list ap);
  /* one launch under the current config, with an error word or without
   * (variant "error_word", "no_error_word") */
  void (*launch)(amv_devrun *r, int with_error_word);
};

/* r zeroed, then set up for the run of a vector into out (cleared, a pass
 * until a failure). */
void amv_dev_start(amv_devrun *r, const amv_runner *opts, amv_outcome *out,
                   void (*report)(amv_devrun *, const char *, int64_t, int64_t, int64_t,
                                  const char *, va_list),
                   void (*launch)(amv_devrun *, int));
/* After the run: the launch config reset, the error word freed, out a
 * failure when it counts any. */
void amv_dev_finish(amv_devrun *r);
/* A failure, through r->report. */
void amv_dev_report(amv_devrun *r, const char *product, int64_t index, int64_t expected,
                    int64_t got, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* A failure at no element. */
void amv_dev_fail(amv_devrun *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A device buffer (at least 4 bytes); NULL, reported, stop set on failure. */
void *amv_dev_alloc(amv_devrun *r, size_t bytes);
/* 0, or -1 (reported, stop set); nothing to copy: 0. */
int amv_dev_copy(amv_devrun *r, void *dst, const void *src, size_t bytes, int to_device);
/* vals, elements of es bytes, in a device buffer of exactly lead + n of
 * them from element lead on; the buffer (to free), NULL on failure. */
void *amv_dev_upload(amv_devrun *r, const amv_values *vals, size_t es, int64_t lead);

/* An output of rows of cols elements (es bytes), stride apart, `shift`
 * elements past a front guard, a back guard after it: d on the device, h
 * on the host, elems in all. */
typedef struct amv_guarded {
  unsigned char *d, *h;
  size_t es;
  int64_t rows, cols, stride, shift, elems;
} amv_guarded;

/* 0, or -1 (reported, stop set); free with amv_guarded_free. */
int amv_guarded_alloc(amv_devrun *r, amv_guarded *g, size_t es, int64_t rows, int64_t cols,
                      int64_t stride, int64_t shift);
void amv_guarded_free(amv_devrun *r, amv_guarded *g);
/* Where the operation writes the output. */
void *amv_guarded_out(const amv_guarded *g);
/* The buffer poisoned on the device; 0, or -1 (reported, stop set). */
int amv_guarded_poison(amv_devrun *r, amv_guarded *g);
/* The buffer read back into h; 0, or -1 (reported, stop set). */
int amv_guarded_read(amv_devrun *r, amv_guarded *g);
/* The poison as an element of es bytes. */
int64_t amv_poison(size_t es);

/* Element i of a buffer read back: at, its index from the output's start
 * (negative in the front guard); row and col (row -1 in the front guard,
 * rows in the back one; col -1 in the guards); want, what it must hold:
 * e's value, or the poison outside the rows' columns, where e is NULL or
 * marks it untouched (AMV_UNTOUCHED); got, what it holds. */
typedef struct amv_elem {
  int64_t at, row, col, want, got;
} amv_elem;
/* 0 where e does not check element i, else 1 and *x filled. */
int amv_guarded_elem(const amv_guarded *g, int64_t i, const amv_values *e, amv_elem *x);

/* After the launch (counted): its status and attnmeta_last_error checked,
 * reported as `what`'s; ATTNMETA_ERR_NOT_SUPPORTED makes the vector a skip.
 * 1 when the outputs are to be read back. */
int amv_dev_launched(amv_devrun *r, attnmeta_status st, const char *what);
/* The error word err, which started as AMV_PRESET_BIT, against flags:
 * exactly those, or at least those and none past `known`. */
int amv_flags_ok(int32_t err, int32_t flags, int exact, int32_t known);
/* r->launch, with an error word and without, under each launch config the
 * runner names (or the current one). */
void amv_dev_each_config(amv_devrun *r);

#endif
