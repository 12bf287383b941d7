// SPDX-License-Identifier: Apache-2.0
/*
 * The pool operation's decode-context-parallel form (docs/contract.md
 * section 15; SGLang's create_triton_kv_indices_for_dcp_triton and
 * create_mla_kv_page_table_for_dcp): rank k of W keeps the positions x of
 * a request row with (x / I) % W == k (runs of I positions dealt out in
 * turn, floor division). The lengths are the rank's own counts, so entry j
 * of a row reads the j-th kept position at or after the row's start
 * column, and its slot v is written as the rank-local slot
 * (v / (W I)) I + v % I. With W = 1 every function is the identity of the
 * plain pool operation.
 */
#ifndef ATTNMETA_AM_POOL_DCP_H
#define ATTNMETA_AM_POOL_DCP_H

#include "am_dialect.h"
#include "am_pool_entries.h"
#include "am_pool_params.h"

/* Floor division and its remainder by d >= 1 (start columns may be
 * negative on hostile data). */
AM_DEVICE int64_t am_pool_floor_div(int64_t a, int64_t d) { return a / d - (a % d < 0); }
AM_DEVICE int64_t am_pool_floor_mod(int64_t a, int64_t d) {
  const int64_t r = a % d;
  return r < 0 ? r + d : r;
}

/* How many of the positions below x the rank keeps (SGLang's get_dcp_lens
 * counts the ones of [s, s + L) as this at s + L minus this at s). */
AM_DEVICE int64_t am_pool_dcp_kept_before(const am_pool_params *p, int64_t x) {
  const int64_t run = p->dcp_interleave, cycle = (int64_t)p->dcp_world * run;
  const int64_t into = am_pool_floor_mod(x, cycle) - (int64_t)p->dcp_rank * run;
  return am_pool_floor_div(x, cycle) * run + (into < 0 ? 0 : into > run ? run : into);
}

/* The position of the rank's m-th kept position (m < 0: before position 0). */
AM_DEVICE int64_t am_pool_dcp_kept_at(const am_pool_params *p, int64_t m) {
  const int64_t run = p->dcp_interleave, cycle = (int64_t)p->dcp_world * run;
  return am_pool_floor_div(m, run) * cycle + (int64_t)p->dcp_rank * run + am_pool_floor_mod(m, run);
}

/* Past this many entries a column is outside every pool row (Wr < 2^31),
 * so it is not computed: the products of 64-bit terms stay far from
 * overflow (a full-width page row may ask for 2^62 entries). */
#define AM_POOL_DCP_FAR ((int64_t)1 << 33)

/* The column entry j >= 0 of a row read from column s reads. `dcp`:
 * dcp_world > 1, passed as a constant by the kernel's two forms of an
 * item (am_pool_item), so the plain form has no DCP test an entry. */
AM_DEVICE int64_t am_pool_dcp_column(const am_pool_params *p, int dcp, int64_t s, int64_t j) {
  if (!dcp) return s + j;
  if (j > AM_POOL_DCP_FAR) return INT64_MAX;
  return am_pool_dcp_kept_at(p, am_pool_dcp_kept_before(p, s) + j);
}

/* The rank-local slot of a slot v >= 0 (below v, so int32). */
AM_DEVICE int32_t am_pool_dcp_local(const am_pool_params *p, int32_t v) {
  const int64_t run = p->dcp_interleave, cycle = (int64_t)p->dcp_world * run;
  return (int32_t)(v / cycle * run + v % run);
}

/* Entry j of a row read from column s, as kv_indices and token_table hold
 * it: the pool entry (am_pool_entry), under DCP the rank-local slot, a
 * negative entry -1 with a flag. */
AM_DEVICE int32_t am_pool_dcp_slot(const am_pool_params *p, int dcp, int in_pool,
                                   const int32_t *row, int64_t s, int64_t j, int32_t *flags) {
  int32_t bad = 0;
  const int32_t v = am_pool_entry(p, in_pool, row, am_pool_dcp_column(p, dcp, s, j), &bad);
  *flags |= bad;
  if (!dcp || bad) return v;
  if (v < 0) {
    *flags |= AM_POOL_FLAG_ENTRY_NEGATIVE;
    return -1;
  }
  return am_pool_dcp_local(p, v);
}

#endif /* ATTNMETA_AM_POOL_DCP_H */
