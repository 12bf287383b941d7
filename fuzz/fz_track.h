// SPDX-License-Identifier: Apache-2.0
/*
 * Which pages of sparse output buffers (fz_sparse) a launch touches, found
 * without scanning their reservations.
 *
 * fz_track_begin makes the buffers' data pages inaccessible and installs a
 * SIGSEGV handler; the launch's first access to a window of 16 pages
 * faults, the handler records the window and opens it (read-write), and the
 * access is retried. fz_track_end opens every page again, restores the
 * previous handler, asks mincore which pages of the recorded windows are
 * resident, and leaves each buffer's sorted page list for
 * fz_sparse_touched. The cost is one fault per window touched and 16
 * mincore bytes per window instead of one mincore byte per reserved page
 * (a terabyte of reserve is 2^28 of them). Pages outside the windows were
 * never accessible, so the list is exactly the pages touched.
 *
 * A fault outside the tracked buffers (a real out-of-bounds access, e.g. on
 * a guard page) is handed back: the previous handler (the sanitizer's, or
 * the default) is restored and the access faults again under it. When the
 * page list is full, or the kernel refuses to split the mapping further,
 * the buffer is opened whole and marked untracked: fz_sparse_touched then
 * scans it with mincore as before (slow, still exact). With
 * ATTNMETA_FUZZ_TRACK_CHECK=1 every recorded list is checked against such a
 * scan.
 */
#ifndef ATTNMETA_FUZZ_FZ_TRACK_H
#define ATTNMETA_FUZZ_FZ_TRACK_H

#include "fuzz_util.h"

#define FZ_TRACK_MAX_BUFFERS 16

/* bufs[i] may have no data (bytes 0): skipped. */
void fz_track_begin(fz_sparse *const *bufs, int n);
void fz_track_end(void);

#endif /* ATTNMETA_FUZZ_FZ_TRACK_H */
