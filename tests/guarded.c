/* Exact-size host allocations flush against an inaccessible page (guarded.h). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "guarded.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static size_t mapped_pages(size_t bytes) { return (bytes + page_size() - 1) / page_size() + 1; }

void *amt_guarded_alloc(size_t bytes) {
  const size_t page = page_size(), pages = mapped_pages(bytes);
  unsigned char *base =
      mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return NULL;
  if (mprotect(base + (pages - 1) * page, page, PROT_NONE) != 0) {
    munmap(base, pages * page);
    return NULL;
  }
  return base + (pages - 1) * page - bytes;
}

void amt_guarded_free(void *ptr, size_t bytes) {
  const size_t page = page_size(), pages = mapped_pages(bytes);
  unsigned char *end;
  if (!ptr) return;
  end = (unsigned char *)ptr + bytes; /* the guard page */
  munmap(end - (pages - 1) * page, pages * page);
}
