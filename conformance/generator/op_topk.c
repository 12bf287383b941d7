// SPDX-License-Identifier: Apache-2.0
/* The generator's "op topk" vectors. See op_topk.h. */
#include "op_topk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/conformance/vecfile_topk.h"
#include "topk_cases.h"
#include "topk_reference.h"

const amg_vector_file amg_topk_files[] = {
    {"s6_topk.amv",
     {"Contract section 6: top-k indices to global KV slots. The engines' matrices (block size",
      "16, 64, 128 x K 128, 256, 512), the request given or found, the prefill workspace (past",
      "the table too), strides, misaligned rows, stride_rows, padding, token slots; section 6b."},
     AMV_VERSION_TOPK},
    {"s6_topk_dcp_errors.amv",
     {"Contract section 6 with DCP (the contract's example; W 2, I 1 and 2, both ranks,",
      "K 1024, compacted), and hostile device data: request ids, workspace indices,",
      "negative block ids, slots past INT32_MAX, boundaries not well formed ('?')."},
     AMV_VERSION_TOPK},
};
const int amg_num_topk_files = 2;

int amg_topk_file_of(const char *name) {
  if (strstr(name, "_peer_")) return -1; /* the format has no peer view params */
  return (strstr(name, "_dcp_") || strstr(name, "_hostile_")) ? 1 : 0;
}

static int values_of(amv_values *out, const int32_t *src32, const int64_t *src64, int64_t n) {
  int64_t i;
  out->n = n;
  out->care = NULL;
  out->v = malloc((size_t)(n > 0 ? n : 1) * sizeof *out->v);
  if (!out->v) return -1;
  for (i = 0; i < n; i++) out->v[i] = src32 ? src32[i] : src64[i];
  return 0;
}

/* Every value unchecked (the contract leaves them unspecified). */
static int unchecked(amv_values *vals) {
  vals->care = calloc((size_t)(vals->n > 0 ? vals->n : 1), 1);
  return vals->care ? 0 : -1;
}

static int fill(amv_vector *v, const amt_topk_batch *b) {
  const amr_topk_input *in = &b->in;
  amv_topk *k = v->topk;
  int32_t *out, *count;
  int r, rc = 0;
  k->op.num_tokens = in->num_tokens;
  k->op.topk_count = in->topk_count;
  k->op.num_reqs = in->num_reqs;
  k->op.block_table_cols = in->cols;
  k->op.block_size = in->block_size;
  k->op.stride_rows = b->stride_rows_arg;
  k->op.dcp_world_size = in->world;
  k->op.dcp_interleave = in->interleave;
  k->op.num_prefill = in->num_prefill;
  k->op.topk_stride = in->topk_stride;
  k->op.block_table_stride = in->table_stride;
  k->op.out_stride = b->out_stride;
  k->op.compact = in->compact;
  k->by_req_id = in->req_id != NULL;
  k->prefill = in->prefill_req != NULL;
  k->token_slot = in->token_slot != NULL;
  k->count = b->count;
  k->misalign = b->misalign;
  if (values_of(&k->input[AMV_TOPK_INDICES], b->topk, NULL, b->topk_elems) ||
      values_of(&k->input[AMV_TOPK_BLOCK_TABLE], b->table, NULL, in->cols > 0 ? b->table_elems : 0) ||
      (in->qsl && values_of(&k->input[AMV_TOPK_QUERY_START_LOC], in->qsl, NULL, in->num_reqs + 1)) ||
      (in->req_id && values_of(&k->input[AMV_TOPK_REQ_ID], in->req_id, NULL, in->num_tokens)) ||
      (in->prefill_req &&
       (values_of(&k->input[AMV_TOPK_PREFILL_REQ], in->prefill_req, NULL, in->num_tokens) ||
        values_of(&k->input[AMV_TOPK_WORKSPACE_STARTS], in->workspace_starts, NULL,
                  in->num_prefill))) ||
      (in->token_slot && values_of(&k->input[AMV_TOPK_TOKEN_SLOT], NULL, in->token_slot, in->num_tokens)))
    return -1;
  k->ranks = calloc((size_t)in->world, sizeof *k->ranks);
  out = malloc(((size_t)in->num_tokens * (size_t)in->topk_count + 1) * 4);
  count = malloc(((size_t)in->num_tokens + 1) * 4);
  if (!k->ranks || !out || !count) rc = -1;
  for (r = 0; r < in->world && rc == 0; r++) {
    amr_topk_input rin = *in;
    amv_topk_rank *rk = &k->ranks[k->nranks++];
    rin.rank = r;
    amr_topk(&rin, out, count, &rk->flags);
    rk->rank = r;
    rk->flags_exact = !b->values_unspecified;
    if (values_of(&rk->out, out, NULL, (int64_t)in->num_tokens * in->topk_count) ||
        (k->count && values_of(&rk->count, count, NULL, in->num_tokens)))
      rc = -1;
    else if (b->values_unspecified) /* hostile boundaries: values and flags unspecified */
      rc = unchecked(&rk->out) || (k->count && unchecked(&rk->count)) ? -1 : 0;
    if (b->values_unspecified) rk->flags = 0;
  }
  free(out);
  free(count);
  return rc;
}

int amg_topk_vector(int i, amv_vector *v) {
  amt_topk_batch *b = amt_topk_materialize(i);
  int rc = -1;
  memset(v, 0, sizeof *v);
  v->op = AMV_OP_TOPK;
  v->topk = calloc(1, sizeof *v->topk);
  if (b && v->topk) {
    snprintf(v->name, sizeof v->name, "%s", b->name);
    rc = fill(v, b);
  }
  if (rc) {
    fprintf(stderr, "attnmeta_gen_vectors: top-k case %d: out of memory\n", i);
    amv_vector_free(v);
  }
  amt_topk_batch_free(b);
  return rc;
}
