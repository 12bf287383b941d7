/*
 * The generator's "op step" vectors (attnmeta_build_step): one case of the
 * case table through the naive reference, every DCP rank, into a vector.
 * Another op gets a file of its own beside this one.
 */
#ifndef ATTNMETA_CONFORMANCE_OP_STEP_H
#define ATTNMETA_CONFORMANCE_OP_STEP_H

#include "attnmeta/conformance/vecfile.h"
#include "cases.h"

/* Fills *v (free with amv_vector_free); returns 0, or -1 with a message on
 * stderr when the reference disagrees with the case. */
int amg_step_vector(const amt_case *c, amv_vector *v);

#endif /* ATTNMETA_CONFORMANCE_OP_STEP_H */
