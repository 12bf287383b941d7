/*
 * The generator's DeepSeek-V3.2/V4 step vectors (format version 2): one case
 * of the DSV4 case table (cases_dsv4.c) through both naive references
 * (reference.c for the part-1 products, reference_dsv4.c for contract
 * sections 5, 7, 8), every DCP rank, into a vector that asks for every
 * part-1 product and every DSV4 product of the case in one step.
 */
#ifndef ATTNMETA_CONFORMANCE_OP_STEP_DSV4_H
#define ATTNMETA_CONFORMANCE_OP_STEP_DSV4_H

#include "attnmeta/conformance/vecfile.h"
#include "cases_dsv4.h"

/* Fills *v (free with amv_vector_free); returns 0, or -1 with a message on
 * stderr when the reference disagrees with the case. */
int amg_step_dsv4_vector(const amd_case *c, amv_vector *v);

#endif /* ATTNMETA_CONFORMANCE_OP_STEP_DSV4_H */
