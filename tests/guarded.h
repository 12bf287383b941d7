/*
 * Exact-size host allocations: the buffer ends where a page the process may
 * not touch begins, so a read or write one byte past it faults in any build
 * (with or without AddressSanitizer).
 */
#ifndef ATTNMETA_TESTS_GUARDED_H
#define ATTNMETA_TESTS_GUARDED_H

#include <stddef.h>

/* `bytes` bytes ending at a PROT_NONE page (aligned to 8 when bytes is a
 * multiple of 8); NULL when the mapping fails. */
void *amt_guarded_alloc(size_t bytes);
void amt_guarded_free(void *ptr, size_t bytes);

#endif /* ATTNMETA_TESTS_GUARDED_H */
