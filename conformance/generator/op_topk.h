// SPDX-License-Identifier: Apache-2.0
/*
 * The generator's "op topk" vectors (attnmeta_convert_topk, format version
 * 3): each case of the top-k case table (topk_cases.c) through the naive
 * reference (topk_reference.c), every DCP rank, into a vector; and the
 * files they go into.
 */
#ifndef ATTNMETA_CONFORMANCE_OP_TOPK_H
#define ATTNMETA_CONFORMANCE_OP_TOPK_H

#include "attnmeta/conformance/vecfile.h"
#include "vector_files.h"

/* The files of op topk vectors (written as format version 3). */
extern const amg_vector_file amg_topk_files[];
extern const int amg_num_topk_files;
/* The index into amg_topk_files of the file top-k case `name` belongs in;
 * -1 for a case the format cannot state (a DCP peer view). */
int amg_topk_file_of(const char *name);

/* Fills *v from top-k case i (free with amv_vector_free); 0, or -1 with a
 * message on stderr. */
int amg_topk_vector(int i, amv_vector *v);

#endif /* ATTNMETA_CONFORMANCE_OP_TOPK_H */
