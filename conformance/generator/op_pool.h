// SPDX-License-Identifier: Apache-2.0
/*
 * The generator's "op pool" vectors (attnmeta_build_pool_indices, format
 * version 6): each case of the pool case table (pool_cases.c) through the
 * naive reference (pool_reference.c) into a vector; and the files they go
 * into.
 */
#ifndef ATTNMETA_CONFORMANCE_OP_POOL_H
#define ATTNMETA_CONFORMANCE_OP_POOL_H

#include "attnmeta/conformance/vecfile.h"
#include "vector_files.h"

/* The files of op pool vectors (written as format version 6). */
extern const amg_vector_file amg_pool_files[];
extern const int amg_num_pool_files;
/* The index into amg_pool_files of the file pool case `name` belongs in. */
int amg_pool_file_of(const char *name);

/* Fills *v from pool case i (free with amv_vector_free); 0, or -1 with a
 * message on stderr. */
int amg_pool_vector(int i, amv_vector *v);

#endif /* ATTNMETA_CONFORMANCE_OP_POOL_H */
