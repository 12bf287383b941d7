// SPDX-License-Identifier: Apache-2.0
/*
 * The kernel's special paths, each switched off by its name in the
 * environment variable ATTNMETA_PATHS_OFF (comma-separated, read when a
 * context opens), so that `bench/paths_ab.sh` can show what each one wins
 * on a GPU against the same build without it. Results never change: each
 * path only replaces work by equivalent work. Not for production use.
 */
#ifndef ATTNMETA_AM_PATHS_OFF_H
#define ATTNMETA_AM_PATHS_OFF_H

enum {
  AM_PATH_SPECULATE_FIRST = 1 << 0,  /* "speculate_first": row + length on the first guess */
  /* 1 << 1 was "speculate_second": the path is gone (no win measured) */
  AM_PATH_INDEXER_VARIANT = 1 << 2,  /* "indexer_variant": the compiled-in indexer product set */
  AM_PATH_REALIGN = 1 << 3,          /* "realign": 16-byte copies of unaligned rows */
  AM_PATH_TAIL_VECTORS = 1 << 4,     /* "tail_vectors": 16-byte stores of the seq_lens tail */
  AM_PATH_ALIGNED_ROWS = 1 << 5,     /* "aligned_rows": 16-byte copies of aligned rows */
  AM_PATH_REVERSE_ORDER = 1 << 6,    /* "reverse_order": block-wide work on the threads in reverse */
  AM_PATH_ONE_WAVE = 1 << 7          /* "one_wave": realigned rows, two tokens a group on full GPUs */
};

/* Reads ATTNMETA_PATHS_OFF's names (NULL: none) into AM_PATH_* bits. */
unsigned am_paths_off(const char *names);

#endif /* ATTNMETA_AM_PATHS_OFF_H */
