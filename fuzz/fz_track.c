// SPDX-License-Identifier: Apache-2.0
/* Page-fault tracking of sparse output buffers. See fz_track.h. */
#define _DEFAULT_SOURCE /* syscall */
#include "fz_track.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_PAGES (1 << 16) /* windows recorded per launch, all buffers together */
#define WINDOW_PAGES 16     /* pages opened by one fault (a power of two) */

static struct {
  fz_sparse *bufs[FZ_TRACK_MAX_BUFFERS];
  int n;
  uintptr_t page;
  uintptr_t pages[MAX_PAGES];
  unsigned char owner[MAX_PAGES];
  size_t npages;
  int open_whole[FZ_TRACK_MAX_BUFFERS];
  struct sigaction previous;
  volatile sig_atomic_t active;
} track;

/* The data's pages: [map + page, map + map_bytes - page). */
static uintptr_t body_lo(const fz_sparse *s) { return (uintptr_t)s->map + track.page; }
static uintptr_t body_hi(const fz_sparse *s) { return (uintptr_t)s->map + s->map_bytes - track.page; }

/* Raw system calls only: the handler runs inside an instrumented access. */
static int protect(uintptr_t at, size_t bytes, int prot) {
  return syscall(SYS_mprotect, (void *)at, bytes, prot) == 0 ? 0 : -1;
}

static void on_fault(int sig, siginfo_t *info, void *uc) {
  const uintptr_t at = (uintptr_t)info->si_addr;
  int i;
  (void)sig;
  (void)uc;
  for (i = 0; track.active && i < track.n; ++i) {
    fz_sparse *s = track.bufs[i];
    if (at < body_lo(s) || at >= body_hi(s)) continue;
    if (!track.open_whole[i]) {
      /* open the window around the page: one fault for up to WINDOW_PAGES
       * pages written in a row; which of them were touched, mincore says */
      const uintptr_t span = WINDOW_PAGES * track.page;
      uintptr_t lo = at & ~(span - 1), hi = lo + span;
      if (lo < body_lo(s)) lo = body_lo(s);
      if (hi > body_hi(s)) hi = body_hi(s);
      if (track.npages < MAX_PAGES && protect(lo, hi - lo, PROT_READ | PROT_WRITE) == 0) {
        track.pages[track.npages] = lo;
        track.owner[track.npages++] = (unsigned char)i;
        return;
      }
      /* no room: this buffer is scanned instead */
      track.open_whole[i] = 1;
      if (protect(body_lo(s), body_hi(s) - body_lo(s), PROT_READ | PROT_WRITE) == 0) return;
    }
    break; /* an open page faulted: not ours to explain */
  }
  /* not a tracked page: the previous handler sees the access fault again */
  sigaction(SIGSEGV, &track.previous, NULL);
}

void fz_track_begin(fz_sparse *const *bufs, int n) {
  struct sigaction sa;
  int i;
  FZ_CHECK(!track.active && n <= FZ_TRACK_MAX_BUFFERS, "fz_track_begin: nested or too many buffers");
  track.page = (uintptr_t)sysconf(_SC_PAGESIZE);
  track.n = 0;
  track.npages = 0;
  for (i = 0; i < n; ++i) {
    fz_sparse *s = bufs[i];
    if (!s->bytes) continue;
    free(s->pages);
    s->pages = NULL;
    s->npages = 0;
    s->tracked = 0;
    track.open_whole[track.n] = 0;
    if (protect(body_lo(s), body_hi(s) - body_lo(s), PROT_NONE) != 0)
      fz_fail("fz_track_begin: mprotect failed");
    track.bufs[track.n++] = s;
  }
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, &track.previous) != 0) fz_fail("fz_track_begin: sigaction failed");
  track.active = 1;
}

static int by_address(const void *a, const void *b) {
  const uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
  return x < y ? -1 : x > y;
}

/* The opened windows (sorted starts, in place) become the resident pages
 * in them, in order; returns their number. */
static size_t resident_pages(const fz_sparse *s, uintptr_t *list, size_t nwindows) {
  const uintptr_t span = WINDOW_PAGES * track.page;
  static uintptr_t windows[MAX_PAGES];
  unsigned char vec[WINDOW_PAGES];
  size_t j, k, n = 0;
  memcpy(windows, list, nwindows * sizeof *list);
  for (j = 0; j < nwindows; ++j) {
    const uintptr_t lo = windows[j];
    uintptr_t hi = (lo & ~(span - 1)) + span;
    if (hi > body_hi(s)) hi = body_hi(s);
    if (mincore((void *)lo, hi - lo, vec) != 0) fz_fail("fz_track: mincore failed");
    for (k = 0; k < (hi - lo) / track.page; ++k)
      if (vec[k] & 1) list[n++] = lo + k * track.page;
  }
  return n;
}

/* ATTNMETA_FUZZ_TRACK_CHECK=1: the recorded pages against a mincore scan. */
typedef struct scan_arg {
  const fz_sparse *s;
  size_t next;
} scan_arg;

static void expect_recorded(void *arg, size_t begin, size_t end) {
  scan_arg *a = (scan_arg *)arg;
  const uintptr_t page = ((uintptr_t)a->s->data + begin) & ~(track.page - 1);
  (void)end;
  FZ_CHECK(a->next < a->s->npages && a->s->pages[a->next] == page,
           "fz_track: page %p is resident but was not recorded", (void *)page);
  a->next++;
}

static void check_against_scan(fz_sparse *s) {
  scan_arg a;
  a.s = s;
  a.next = 0;
  fz_sparse_touched(s, expect_recorded, &a); /* s->tracked is still 0: a scan */
  FZ_CHECK(a.next == s->npages, "fz_track: %zu pages recorded, %zu resident", s->npages, a.next);
}

void fz_track_end(void) {
  const char *env = getenv("ATTNMETA_FUZZ_TRACK_CHECK");
  const int cross_check = env && env[0] == '1';
  int i;
  size_t j;
  track.active = 0;
  sigaction(SIGSEGV, &track.previous, NULL);
  for (i = 0; i < track.n; ++i) {
    fz_sparse *s = track.bufs[i];
    size_t count = 0;
    if (protect(body_lo(s), body_hi(s) - body_lo(s), PROT_READ | PROT_WRITE) != 0)
      fz_fail("fz_track_end: mprotect failed");
    if (track.open_whole[i]) continue; /* untracked: scanned */
    for (j = 0; j < track.npages; ++j) count += track.owner[j] == i;
    s->pages = (uintptr_t *)malloc((count ? count : 1) * WINDOW_PAGES * sizeof *s->pages);
    if (!s->pages) fz_fail("out of memory");
    for (j = 0; j < track.npages; ++j)
      if (track.owner[j] == i) s->pages[s->npages++] = track.pages[j];
    qsort(s->pages, s->npages, sizeof *s->pages, by_address);
    s->npages = resident_pages(s, s->pages, s->npages);
    if (cross_check) check_against_scan(s);
    s->tracked = 1;
  }
  track.n = 0;
}
