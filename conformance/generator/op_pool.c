// SPDX-License-Identifier: Apache-2.0
/* The generator's "op pool" vectors. See op_pool.h. */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include "op_pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/conformance/vecfile_pool.h"
#include "pool_cases.h"
#include "pool_reference.h"
#include "vecschema.h"

#define POISON ((int32_t)0x5A5A5A5A) /* what the reference leaves where nothing is written */

const amg_vector_file amg_pool_files[] = {
    {"s10_pool_slots.amv",
     {"Contract section 12 (SGLang's sections 10, 11): FlashInfer's slot lists. Rows placed",
      "by the scan (kv_indptr_out) or by a given kv_indptr, capacity exact, short and with a",
      "tail, empty rows, no rows, kv_start_idx, length_delta, strided pools, pages of 16."},
     AMV_VERSION_POOL},
    {"s11_pool_page_table.amv",
     {"Contract section 12: FlashMLA's padded page tables. Pages of 1, 16, 64 with partial",
      "pages, tables too narrow, length_cap, fill_to_width (inside and past the pool), no",
      "rows, empty rows, kv_start_idx, the SWA page table through full_to_swa."},
     AMV_VERSION_POOL},
    {"s12_pool_fa3.amv",
     {"Contract section 12: FA3 and TRT-LLM MHA page tables with cache_seqlens and",
      "cu_seqlens_k (kv_indptr_out): decode, target verify (length_delta), the older",
      "full-width generation, length_cap, the SWA table, 64 and 1024 seeded requests, no rows."},
     AMV_VERSION_POOL},
    {"s13_pool_dsa.amv",
     {"Contract section 13: DSA decode, target-verify and draft-extend metadata. Rows per",
      "request, query_lens with num_rows (rows past it dropped), top-k pools, graph padding",
      "rows, no rows, length_cap, narrow token tables, the SWA table, seeded requests."},
     AMV_VERSION_POOL},
    {"s15_pool_dcp.amv",
     {"Contract section 15: the DCP form. SGLang's Triton DCP slot lists (each rank, start",
      "columns), worlds 2 to 8, a given kv_indptr, the MLA page table of pages of 64, the",
      "interleave of a page (16) and of 3, token tables, hostile entries and rows under DCP."},
     AMV_VERSION_POOL},
    {"errors_pool.amv",
     {"Errors: hostile device data for the pool operation, a flag each. Pool rows outside",
      "the pool, columns outside a row, negative entries and lengths, wrapping lengths and",
      "starts, prefix sums past INT32_MAX, hostile kv_indptr, bad SWA maps, five at once."},
     AMV_VERSION_POOL},
};
const int amg_num_pool_files = (int)(sizeof amg_pool_files / sizeof amg_pool_files[0]);

static int starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

int amg_pool_file_of(const char *name) {
  if (starts(name, "slots_")) return 0;
  if (starts(name, "pages_")) return 1;
  if (starts(name, "fa3_")) return 2;
  if (starts(name, "dsa_")) return 3;
  if (starts(name, "dcp_")) return 4;
  return 5;
}

/* Input `name` given with n values from src32 or src64. */
static int put_input(amv_pool *p, const char *name, const int32_t *src32, const int64_t *src64,
                     int64_t n) {
  const int i = amvs_pool_input_named(name, strlen(name));
  int64_t k;
  if (i < 0) return -1;
  p->inputs |= 1u << i;
  p->input[i].n = n;
  p->input[i].v = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  if (!p->input[i].v) return -1;
  for (k = 0; k < n; k++) p->input[i].v[k] = src32 ? src32[k] : src64[k];
  return 0;
}

/* The reference's buffer of output `name`. */
static int32_t **reference_slot(amr_pool_outputs *o, const char *name) {
  static const char *const names[] = {"kv_indices",    "kv_indptr_out", "page_table",
                                      "cache_seqlens", "expanded_lens", "topk_lens",
                                      "topk_indptr",   "token_table",   "swa_page_table",
                                      "query_indptr_out"};
  int32_t **const at[] = {&o->kv_indices,  &o->indptr_out,  &o->page_table,  &o->cache_seqlens,
                          &o->expanded_lens, &o->topk_lens, &o->topk_indptr, &o->token_table,
                          &o->swa_page_table, &o->query_indptr};
  size_t i;
  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i], name) == 0) return at[i];
  return NULL;
}

static void set_params(attnmeta_pool *op, const amr_pool_input *in) {
  attnmeta_pool_init(op);
  op->req_to_token_stride = in->pool_stride;
  op->pool_rows = in->pool_rows;
  op->pool_cols = in->pool_cols;
  op->num_reqs = in->num_reqs;
  op->page_size = in->page_size;
  op->kv_indices_capacity = in->capacity;
  op->page_table_stride = in->page_stride;
  op->page_table_width = in->page_width;
  op->length_delta = in->length_delta;
  op->rows_per_req = in->rows_per_req;
  op->topk = in->topk;
  op->topk_pool = in->topk_pool;
  op->token_table_stride = in->token_stride;
  op->token_table_width = in->token_width;
  op->length_cap = in->length_cap;
  op->fill_to_width = in->fill_to_width;
  op->swa_map_len = in->swa_map_len;
  op->swa_page_table_stride = in->swa_stride;
  op->num_rows = in->query_lens ? in->num_rows : 0;
  op->dcp_world_size = in->dcp_world;
  op->dcp_rank = in->dcp_rank;
  op->dcp_interleave = in->dcp_interleave;
}

static int set_inputs(amv_pool *p, const amr_pool_input *in) {
  const int64_t B = in->num_reqs;
  const int64_t table = in->pool_rows > 0 && in->pool_cols > 0
                            ? (int64_t)(in->pool_rows - 1) * in->pool_stride + in->pool_cols
                            : 0;
  return put_input(p, "req_to_token", in->req_to_token, NULL, table) ||
         put_input(p, "req_pool_indices", NULL, in->req_pool_indices, B) ||
         put_input(p, "lengths", NULL, in->lengths, B) ||
         (in->kv_start_idx && put_input(p, "kv_start_idx", NULL, in->kv_start_idx, B)) ||
         (in->kv_indptr && put_input(p, "kv_indptr", in->kv_indptr, NULL, B + 1)) ||
         (in->full_to_swa && put_input(p, "full_to_swa", NULL, in->full_to_swa, in->swa_map_len)) ||
         (in->query_lens && put_input(p, "query_lens", NULL, in->query_lens, B));
}

/* The reference's buffer of output o (rows x stride) as its expectation:
 * rows x cols, poison left untouched; -1 when it wrote into a stride gap. */
static int expectation(amv_pool *p, int o, const int32_t *buf, const char *vector) {
  int64_t rows, cols, stride, r, k;
  amv_values *e = &p->expect[o];
  amv_pool_output_shape(p, o, &rows, &cols, &stride);
  if (!amvs_pool_output(o)->cols) stride = 1;
  e->n = rows * cols;
  e->v = malloc((size_t)(e->n > 0 ? e->n : 1) * sizeof *e->v);
  e->care = malloc((size_t)(e->n > 0 ? e->n : 1));
  if (!e->v || !e->care) return -1;
  for (r = 0; r < rows; r++)
    for (k = 0; k < stride; k++) {
      const int32_t x = buf[r * stride + k];
      if (k >= cols) {
        if (x != POISON) {
          fprintf(stderr, "attnmeta_gen_vectors: %s: the reference wrote %s's row %lld gap\n",
                  vector, amv_pool_output_name(o), (long long)r);
          return -1;
        }
        continue;
      }
      e->v[r * cols + k] = x == POISON ? 0 : x;
      e->care[r * cols + k] = x == POISON ? AMV_UNTOUCHED : 1;
    }
  return 0;
}

static int fill(amv_vector *v, const amp_case *c) {
  amv_pool *p = v->pool;
  amr_pool_outputs out;
  amr_pool_input in = c->in;
  int32_t *bufs[AMV_POOL_MAX_OUTPUTS] = {0};
  int o, rc = 0;
  char want[512], *tok, *save = NULL;
  memset(&out, 0, sizeof out);
  set_params(&p->op, &in);
  if (set_inputs(p, &in)) return -1;
  snprintf(want, sizeof want, "%s", c->want);
  for (tok = strtok_r(want, " ", &save); tok && rc == 0; tok = strtok_r(NULL, " ", &save)) {
    int64_t rows, cols, stride, n, k;
    int32_t **slot = reference_slot(&out, tok);
    o = amvs_pool_output_named(tok, strlen(tok));
    if (o < 0 || !slot) {
      fprintf(stderr, "attnmeta_gen_vectors: pool case %s: unknown output %s\n", c->name, tok);
      rc = -1;
      break;
    }
    amv_pool_output_shape(p, o, &rows, &cols, &stride);
    n = rows * (amvs_pool_output(o)->cols ? stride : 1);
    bufs[o] = malloc((size_t)(n > 0 ? n : 1) * 4);
    if (!bufs[o]) rc = -1;
    for (k = 0; k < n && bufs[o]; k++) bufs[o][k] = POISON;
    *slot = bufs[o];
    p->outputs |= 1u << o;
  }
  if (rc == 0) {
    amr_pool_all(&in, &out, &p->flags);
    p->flags_exact = 1;
    for (o = 0; o < amv_pool_num_outputs() && rc == 0; o++)
      if ((p->outputs >> o) & 1u) rc = expectation(p, o, bufs[o], c->name);
  }
  for (o = 0; o < AMV_POOL_MAX_OUTPUTS; o++) free(bufs[o]);
  return rc;
}

int amg_pool_vector(int i, amv_vector *v) {
  amp_case *c = amp_case_make(i);
  int rc = -1;
  memset(v, 0, sizeof *v);
  v->op = AMV_OP_POOL;
  v->pool = calloc(1, sizeof *v->pool);
  if (c && v->pool) {
    snprintf(v->name, sizeof v->name, "%s", c->name);
    rc = fill(v, c);
  }
  if (rc) {
    fprintf(stderr, "attnmeta_gen_vectors: pool case %d could not be made\n", i);
    amv_vector_free(v);
  }
  amp_case_free(c);
  return rc;
}
