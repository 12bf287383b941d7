// SPDX-License-Identifier: Apache-2.0
/* The generator's "op step" vectors (op_step.h). Where the contract leaves a
 * value unspecified (boundaries that are hostile data) the value is written
 * as "?" (unchecked). */
#include "op_step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "reference.h"

_Static_assert(AMT_P_TOKEN_TO_REQ == 1 << AMV_TOKEN_TO_REQ, "product bits");
_Static_assert(AMT_P_SEQ_LENS == 1 << AMV_SEQ_LENS_OUT, "product bits");
_Static_assert(AMT_P_GLOBAL_SEQ_LENS == 1 << AMV_GLOBAL_SEQ_LENS_OUT, "product bits");
_Static_assert(AMT_P_BLOCK_TABLE == 1 << AMV_BLOCK_TABLE_OUT, "product bits");
_Static_assert(AMT_P_DECODE_LENS == 1 << AMV_DECODE_LENS_OUT, "product bits");
_Static_assert(AMT_P_REQ_INDICES == 1 << AMV_REQ_INDICES_OUT, "product bits");
_Static_assert(AMT_P_PER_REQ_LENS == 1 << AMV_PER_REQ_LENS_OUT, "product bits");
_Static_assert(AMT_P_POSITIONS == 1 << AMV_POSITIONS, "product bits");
_Static_assert(AMT_P_SLOTS == 1 << AMV_SLOT_MAPPING, "product bits");

#define QSL_FLAGS \
  (ATTNMETA_FLAG_QSL_FIRST_NONZERO | ATTNMETA_FLAG_QSL_DECREASING | ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE)
#define SEQ_FLAGS (ATTNMETA_FLAG_SEQ_LEN_NEGATIVE | ATTNMETA_FLAG_SEQ_LEN_LT_QLEN)

static void *xcalloc(int64_t n, size_t size) {
  void *p = calloc(n > 0 ? (size_t)n : 1, size);
  if (!p) {
    fprintf(stderr, "attnmeta_gen_vectors: out of memory\n");
    exit(1);
  }
  return p;
}

void amg_values32(amv_values *out, const int32_t *v, int64_t n) {
  int64_t i;
  out->n = n;
  out->v = xcalloc(n, sizeof(int64_t));
  out->care = NULL;
  for (i = 0; i < n; i++) out->v[i] = v[i];
}

void amg_values64(amv_values *out, const int64_t *v, int64_t n) {
  out->n = n;
  out->v = xcalloc(n, sizeof(int64_t));
  out->care = NULL;
  if (n > 0) memcpy(out->v, v, (size_t)n * sizeof(int64_t));
}

/* Expected values of one output: [0, known) from `ref` (checked when wf),
 * [known, n) the contract's fixed tail value. */
void amg_expect_values(amv_values *out, int64_t n, int64_t known, int wf, const int32_t *ref32,
                       const int64_t *ref64, int64_t tail) {
  int64_t i;
  out->n = n;
  out->v = xcalloc(n, sizeof(int64_t));
  out->care = wf ? NULL : xcalloc(n, 1);
  for (i = 0; i < n; i++) {
    if (i >= known) {
      out->v[i] = tail;
      if (out->care) out->care[i] = 1;
    } else if (wf) {
      out->v[i] = ref32 ? ref32[i] : ref64[i];
    } else {
      out->v[i] = 0; /* unspecified: unchecked */
      out->care[i] = 0;
    }
  }
}

/* A rank's expected part-1 products and flags, from the reference's output
 * `o` for R requests, T tokens, capacity C, `cols` block-table columns. */
void amg_expect_part1(amv_rank *rk, const amr_output *o, unsigned products, int32_t R, int32_t T,
                      int32_t C, int32_t cols) {
  const int wf = o->well_formed;
  if (products & AMT_P_TOKEN_TO_REQ)
    amg_expect_values(&rk->expect[AMV_TOKEN_TO_REQ], T, T, wf, o->token_to_req, NULL, 0);
  if (products & AMT_P_SEQ_LENS)
    amg_expect_values(&rk->expect[AMV_SEQ_LENS_OUT], C, T, wf, o->seq_lens_out, NULL, 0);
  if (products & AMT_P_GLOBAL_SEQ_LENS)
    amg_expect_values(&rk->expect[AMV_GLOBAL_SEQ_LENS_OUT], T, T, wf, o->global_seq_lens, NULL,
                      0);
  if (products & AMT_P_BLOCK_TABLE) {
    const int64_t n = (int64_t)T * cols;
    amg_expect_values(&rk->expect[AMV_BLOCK_TABLE_OUT], n, n, wf, o->block_table_out, NULL, 0);
  }
  if (products & AMT_P_DECODE_LENS) /* defined whatever the data: all 1 */
    amg_expect_values(&rk->expect[AMV_DECODE_LENS_OUT], T, 0, 1, NULL, NULL, 1);
  if (products & AMT_P_REQ_INDICES)
    amg_expect_values(&rk->expect[AMV_REQ_INDICES_OUT], T, T, wf, o->req_indices, NULL, 0);
  if (products & AMT_P_PER_REQ_LENS)
    amg_expect_values(&rk->expect[AMV_PER_REQ_LENS_OUT], R, R, wf, o->per_req_lens, NULL, 0);
  if (products & AMT_P_POSITIONS)
    amg_expect_values(&rk->expect[AMV_POSITIONS], T, T, wf, NULL, o->positions, 0);
  if (products & AMT_P_SLOTS)
    amg_expect_values(&rk->expect[AMV_SLOT_MAPPING], C, T, wf, NULL, o->slots, -1);
  rk->flags_requests = o->request_flags & QSL_FLAGS;
  rk->flags_seq_lens = o->request_flags & SEQ_FLAGS;
  rk->flags_slots = wf ? o->slot_flags : 0;
  rk->flags_exact = wf;
}

/* One vector from one case: every rank through the reference. */
int amg_step_vector(const amt_case *c, amv_vector *v) {
  amt_batch *b = amt_materialize(c);
  int32_t seen = 0;
  int k, rc;
  memset(v, 0, sizeof *v);
  snprintf(v->name, sizeof v->name, "%s", c->name);
  v->step.num_reqs = b->R;
  v->step.num_tokens = b->T;
  v->step.capacity = b->C;
  v->step.block_table_cols = b->cols;
  v->step.block_table_stride = b->in_stride;
  v->step.block_table_out_stride = b->out_stride;
  v->step.num_mapped = b->num_mapped;
  v->step.block_size = b->block_size;
  v->step.dcp_world_size = b->world;
  v->step.dcp_interleave = b->interleave;
  v->misalign = b->misalign;
  v->products = b->products;
  amg_values32(&v->input[AMV_QUERY_START_LOC], b->qsl, (int64_t)b->R + 1);
  amg_values32(&v->input[AMV_SEQ_LENS], b->seq_lens, b->R);
  amg_values32(&v->input[AMV_BLOCK_TABLE], b->block_table, b->block_table ? b->table_elems : 0);
  v->nranks = b->nranks;
  v->ranks = xcalloc(b->nranks, sizeof(amv_rank));

  for (k = 0; k < b->nranks; k++) {
    amv_rank *rk = &v->ranks[k];
    amr_output *o = amt_reference_outputs(b, k);
    seen |= o->request_flags | o->slot_flags;

    rk->rank = b->ranks[k];
    amg_expect_part1(rk, o, v->products, b->R, b->T, b->C, b->cols);
    amr_free(o);
  }

  rc = amg_check_case_flags(c->name, seen, b->expect_flags);
  amt_batch_free(b);
  return rc;
}

int amg_check_case_flags(const char *name, int32_t seen, int32_t expected) {
  if ((seen & expected) == expected) return 0;
  fprintf(stderr,
          "attnmeta_gen_vectors: case %s: case table error, the reference raises 0x%x, the case "
          "expects 0x%x\n",
          name, (unsigned)seen, (unsigned)expected);
  return -1;
}
