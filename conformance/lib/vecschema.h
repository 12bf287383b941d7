// SPDX-License-Identifier: Apache-2.0
/*
 * The members of attnmeta_step, attnmeta_topk and attnmeta_pool as the vector kit sees
 * them, walked from the schema (src/common/am_schema.h): one flat table per
 * operation, the step's compressed groups expanded member by member and
 * group by group ("group0.slot_mapping" ... "group3.slot_mapping"), which
 * is the vector format's order. A member's name in the table is its key in
 * the format (param, input and expect lines).
 *
 * The step's outputs are its OUT members except the error word, in table
 * order: output o is bit o of amv_vector.products. Its inputs are its IN
 * members. The vector keeps its scalar params in the operation's own
 * struct (amv_vector.step, amv_topk.op), where amvs_get and amvs_set reach
 * them by member.
 */
#ifndef ATTNMETA_CONFORMANCE_VECSCHEMA_H
#define ATTNMETA_CONFORMANCE_VECSCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "attnmeta/attnmeta.h"

enum amvs_role { AMVS_PARAM, AMVS_IN, AMVS_OUT, AMVS_GROUPS };
/* An extent's rows (am_schema.h's n). */
enum amvs_rows { AMVS_ROWS_NONE, AMVS_ROWS_R, AMVS_ROWS_R1, AMVS_ROWS_T, AMVS_ROWS_C, AMVS_ROWS_P,
                 AMVS_ROWS_ONE, AMVS_ROWS_T1, AMVS_ROWS_S, AMVS_ROWS_DK, AMVS_ROWS_DP };

typedef struct amvs_member {
  const char *name;   /* the format's key: the member's, "group<g>." first for a group's */
  const char *member; /* the member's own name */
  int group;          /* its compressed group, -1 for the operation's own members */
  int role;           /* amvs_role */
  size_t offset;      /* in the operation's struct */
  size_t size;        /* a PARAM's size; one element's for IN and OUT */
  int rows;           /* amvs_rows */
  const char *cols, *stride; /* a table's members (beside it); NULL for an array */
  const char *groups, *gstride; /* a grouped table's group count and stride; else NULL */
  unsigned products;
  const char *rule; /* the schema's range rule ("" where none) */
} amvs_member;

typedef struct amvs_table {
  const amvs_member *m;
  int n;
} amvs_table;

extern const amvs_table amvs_step; /* attnmeta_step */
extern const amvs_table amvs_topk; /* attnmeta_topk */
extern const amvs_table amvs_pool; /* attnmeta_pool */
#define AMVS_MAX_MEMBERS 256 /* members of one table, at most */

/* The member of that name, NULL when there is none. */
const amvs_member *amvs_find(const amvs_table *t, const char *name);
/* The PARAM member of that name, NULL when there is none. */
const amvs_member *amvs_find_param(const amvs_table *t, const char *name);
/* An int32 (size 4) or int64 (size 8) at p, and storing one there. */
int64_t amvs_load(const void *p, size_t size);
void amvs_store(void *p, size_t size, int64_t value);
/* A PARAM's value in the struct at base, and storing one there. */
int64_t amvs_get(const void *base, const amvs_member *m);
void amvs_set(void *base, const amvs_member *m, int64_t value);
/* Copies every PARAM but struct_size (the destination's own, from its
 * init) from src to dst, those of a version-2 family only when its bit is
 * in `families`. */
void amvs_copy_params(const amvs_table *t, void *dst, const void *src, unsigned families);
/* The address of a buffer member (IN, OUT) in the struct at base. */
void *amvs_slot(void *base, const amvs_member *m);
/* A buffer's rows, columns and stride in the struct at base (an array: 1
 * column, stride 1). */
void amvs_extent(const amvs_table *t, const void *base, const amvs_member *m, int64_t *rows,
                 int64_t *cols, int64_t *stride);

/* A grouped table's group count (>= 1: a count below 2 is one group) and
 * group stride in elements (0 for one group); 1 and 0 for other members. */
void amvs_groups(const amvs_table *t, const void *base, const amvs_member *m, int64_t *groups,
                 int64_t *gstride);

/* 1 for a setting of the step declared after 0.3: one that names the
 * products it serves (version 5 of the format reads and writes it by
 * name, 0 when absent). */
int amvs_schema_param(const amvs_member *m);
/* 1 for an input of the step declared after 0.3 (from AMV_NUM_INPUTS on:
 * optional in the format, by name). */
int amvs_schema_input(const amvs_member *m);
#define AMVS_MAX_INPUTS 16 /* = AMV_MAX_INPUTS */
/* 1 for an input the schema calls optional: a vector may leave it out
 * (the step then passes NULL). */
int amvs_optional(const amvs_member *m);
/* The step's o-th output / i-th input in the format's order, NULL past
 * the last; and how many there are. */
const amvs_member *amvs_step_output(int o);
const amvs_member *amvs_step_input(int i);
int amvs_step_num_outputs(void);
int amvs_step_num_inputs(void);
/* The index of the output / input named name[0, len), -1 for none. */
int amvs_step_output_named(const char *name, size_t len);
int amvs_step_input_named(const char *name, size_t len);
/* The top-k conversion's i-th input (AMV_TOPK_NUM_INPUTS of them). */
const amvs_member *amvs_topk_input(int i);
/* The version-2 family of a step member (amv_vector's AMV_FAMILY_*: its
 * group, SWA or C128A by the name's prefix), -1 for those of version 1. */
int amvs_family(const amvs_member *m);
/* The schema's products (am_schema.h's bits) of the outputs in `outputs`
 * (bits of amv_vector.products). */
unsigned amvs_step_products(unsigned outputs);

/* The pool operation's (format version 6, by name): its i-th input (IN
 * member) and o-th output (OUT member but the error word), NULL past the
 * last, and how many there are. */
const amvs_member *amvs_pool_input(int i);
const amvs_member *amvs_pool_output(int o);
int amvs_pool_num_inputs(void);
int amvs_pool_num_outputs(void);
/* The index of the pool input / output named name[0, len), -1 for none. */
int amvs_pool_input_named(const char *name, size_t len);
int amvs_pool_output_named(const char *name, size_t len);
/* 1 for a pool param of the format: a PARAM but struct_size and padding. */
int amvs_pool_format_param(const amvs_member *m);
/* A pool buffer's rows, columns and stride for the params in *op (its
 * pointers unused); `query_lens`: whether that input is given, which makes
 * T num_rows (else num_reqs * max(rows_per_req, 1)). */
void amvs_pool_extent(const attnmeta_pool *op, int query_lens, const amvs_member *m, int64_t *rows,
                      int64_t *cols, int64_t *stride);

#endif /* ATTNMETA_CONFORMANCE_VECSCHEMA_H */
