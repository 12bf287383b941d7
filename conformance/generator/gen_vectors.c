/*
 * attnmeta_gen_vectors OUTDIR: writes the conformance vector files
 * (docs/conformance.md) from the case table (cases.c) and the naive
 * reference (reference.c). Deterministic: every case draws its data from its
 * own seed, so the same sources always give the same bytes. ci/vectors.sh
 * regenerates the set and compares it with conformance/vectors/.
 *
 * One vector per case; a case run on every DCP rank gets one "rank" block
 * per rank. Where the contract leaves a value unspecified (boundaries that
 * are hostile data) the value is written as "?" (unchecked).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "cases.h"
#include "reference.h"
#include "attnmeta/conformance/vecfile.h"

_Static_assert(AMT_P_TOKEN_TO_REQ == 1 << AMV_TOKEN_TO_REQ, "product bits");
_Static_assert(AMT_P_SEQ_LENS == 1 << AMV_SEQ_LENS_OUT, "product bits");
_Static_assert(AMT_P_GLOBAL_SEQ_LENS == 1 << AMV_GLOBAL_SEQ_LENS_OUT, "product bits");
_Static_assert(AMT_P_BLOCK_TABLE == 1 << AMV_BLOCK_TABLE_OUT, "product bits");
_Static_assert(AMT_P_DECODE_LENS == 1 << AMV_DECODE_LENS_OUT, "product bits");
_Static_assert(AMT_P_REQ_INDICES == 1 << AMV_REQ_INDICES_OUT, "product bits");
_Static_assert(AMT_P_PER_REQ_LENS == 1 << AMV_PER_REQ_LENS_OUT, "product bits");
_Static_assert(AMT_P_POSITIONS == 1 << AMV_POSITIONS, "product bits");
_Static_assert(AMT_P_SLOTS == 1 << AMV_SLOT_MAPPING, "product bits");

#define FILE_LIMIT (1024 * 1024) /* every file stays under 1 MiB */
#define QSL_FLAGS \
  (ATTNMETA_FLAG_QSL_FIRST_NONZERO | ATTNMETA_FLAG_QSL_DECREASING | ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE)
#define SEQ_FLAGS (ATTNMETA_FLAG_SEQ_LEN_NEGATIVE | ATTNMETA_FLAG_SEQ_LEN_LT_QLEN)

typedef struct vfile {
  const char *name;
  const char *title[3];
} vfile;

static const vfile files[] = {
    {"s1_token_map.amv",
     {"Contract section 1: the token -> request map. num_mapped below, at, inside and",
      "past the padding, negative (= actual); no requests; only empty requests.", NULL}},
    {"s2_indexer.amv",
     {"Contract section 2: sparse-indexer decode metadata. Seed shapes with and without",
      "graph padding, zero-length requests, odd widths and strides (vector and scalar",
      "copies, misaligned tables), skewed and large batches, capacity tails."}},
    {"s2a_dcp.amv",
     {"Contract section 2a: decode context parallelism. World sizes 2, 4, 8, interleaves",
      "1, 2, 16, block sizes 1, 16, 64; one rank block per rank; the contract's example.",
      NULL}},
    {"s3_positions_slots.amv",
     {"Contract section 3: positions and slot mapping. Block sizes 1, 16, 64, prefill",
      "mixed with decode, positions past the block table, tables without columns.", NULL}},
    {"s4_random_steps.amv",
     {"Contract section 4: one step builds every product in one launch. Seeded random",
      "batches (shape, block size, DCP, padding, capacity, strides, alignment).", NULL}},
    {"errors_device_data.amv",
     {"Contract section 'Errors and bad input': hostile device data. Boundaries that are",
      "not well formed (values unspecified: '?'; flags at least), negative and huge",
      "lengths, negative block ids (values and flags defined by the contract)."}},
};
enum { F_S1, F_S2, F_S2A, F_S3, F_S4, F_ERR, NFILES };

static int starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* The file a case belongs in, by its contract section. */
static int file_of(const char *name) {
  if (starts(name, "hostile_") || starts(name, "seq_") || starts(name, "neg_block_ids"))
    return F_ERR;
  if (starts(name, "dcp_")) return F_S2A;
  if (starts(name, "random_")) return F_S4;
  if (starts(name, "mapped_") || starts(name, "r0_") || starts(name, "r2_") ||
      starts(name, "empty3_"))
    return F_S1;
  if (starts(name, "bs") || starts(name, "prefill_decode") || starts(name, "past_table") ||
      starts(name, "cols0"))
    return F_S3;
  return F_S2;
}

static void *xcalloc(int64_t n, size_t size) {
  void *p = calloc(n > 0 ? (size_t)n : 1, size);
  if (!p) {
    fprintf(stderr, "attnmeta_gen_vectors: out of memory\n");
    exit(1);
  }
  return p;
}

static void values32(amv_values *out, const int32_t *v, int64_t n) {
  int64_t i;
  out->n = n;
  out->v = xcalloc(n, sizeof(int64_t));
  out->care = NULL;
  for (i = 0; i < n; i++) out->v[i] = v[i];
}

/* Expected values of one output: [0, known) from `ref` (checked when wf),
 * [known, n) the contract's fixed tail value. */
static void expect_values(amv_values *out, int64_t n, int64_t known, int wf, const int32_t *ref32,
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

/* One vector from one case: every rank through the reference. */
static int build_vector(const amt_case *c, amv_vector *v) {
  amt_batch *b = amt_materialize(c);
  int32_t seen = 0;
  int k;
  memset(v, 0, sizeof *v);
  snprintf(v->name, sizeof v->name, "%s", c->name);
  v->num_reqs = b->R;
  v->num_tokens = b->T;
  v->capacity = b->C;
  v->cols = b->cols;
  v->in_stride = b->in_stride;
  v->out_stride = b->out_stride;
  v->num_mapped = b->num_mapped;
  v->block_size = b->block_size;
  v->world = b->world;
  v->interleave = b->interleave;
  v->misalign = b->misalign;
  v->products = b->products;
  values32(&v->input[AMV_QUERY_START_LOC], b->qsl, (int64_t)b->R + 1);
  values32(&v->input[AMV_SEQ_LENS], b->seq_lens, b->R);
  values32(&v->input[AMV_BLOCK_TABLE], b->block_table, b->block_table ? b->table_elems : 0);
  v->nranks = b->nranks;
  v->ranks = xcalloc(b->nranks, sizeof(amv_rank));

  for (k = 0; k < b->nranks; k++) {
    amv_rank *rk = &v->ranks[k];
    amr_input in;
    amr_output *o;
    int wf;
    amt_reference_input(b, k, &in);
    o = amr_alloc(&in);
    amr_build(&in, o);
    wf = o->well_formed;
    seen |= o->request_flags | o->slot_flags;

    rk->rank = b->ranks[k];
    if (v->products & AMT_P_TOKEN_TO_REQ)
      expect_values(&rk->expect[AMV_TOKEN_TO_REQ], b->T, b->T, wf, o->token_to_req, NULL, 0);
    if (v->products & AMT_P_SEQ_LENS)
      expect_values(&rk->expect[AMV_SEQ_LENS_OUT], b->C, b->T, wf, o->seq_lens_out, NULL, 0);
    if (v->products & AMT_P_GLOBAL_SEQ_LENS)
      expect_values(&rk->expect[AMV_GLOBAL_SEQ_LENS_OUT], b->T, b->T, wf, o->global_seq_lens,
                    NULL, 0);
    if (v->products & AMT_P_BLOCK_TABLE) {
      const int64_t n = (int64_t)b->T * b->cols;
      expect_values(&rk->expect[AMV_BLOCK_TABLE_OUT], n, n, wf, o->block_table_out, NULL, 0);
    }
    if (v->products & AMT_P_DECODE_LENS) /* defined whatever the data: all 1 */
      expect_values(&rk->expect[AMV_DECODE_LENS_OUT], b->T, 0, 1, NULL, NULL, 1);
    if (v->products & AMT_P_REQ_INDICES)
      expect_values(&rk->expect[AMV_REQ_INDICES_OUT], b->T, b->T, wf, o->req_indices, NULL, 0);
    if (v->products & AMT_P_PER_REQ_LENS)
      expect_values(&rk->expect[AMV_PER_REQ_LENS_OUT], b->R, b->R, wf, o->per_req_lens, NULL, 0);
    if (v->products & AMT_P_POSITIONS)
      expect_values(&rk->expect[AMV_POSITIONS], b->T, b->T, wf, NULL, o->positions, 0);
    if (v->products & AMT_P_SLOTS)
      expect_values(&rk->expect[AMV_SLOT_MAPPING], b->C, b->T, wf, NULL, o->slots, -1);
    rk->flags_requests = o->request_flags & QSL_FLAGS;
    rk->flags_seq_lens = o->request_flags & SEQ_FLAGS;
    rk->flags_slots = wf ? o->slot_flags : 0;
    rk->flags_exact = wf;
    amr_free(o);
  }

  if ((seen & b->expect_flags) != b->expect_flags) {
    fprintf(stderr,
            "attnmeta_gen_vectors: case %s: case table error, the reference raises 0x%x, the case "
            "expects 0x%x\n",
            c->name, (unsigned)seen, (unsigned)b->expect_flags);
    amt_batch_free(b);
    return -1;
  }
  amt_batch_free(b);
  return 0;
}

int main(int argc, char **argv) {
  int fi, ci, rc = 0;
  if (argc != 2 || argv[1][0] == '-') {
    fprintf(stderr, "usage: attnmeta_gen_vectors OUTDIR\n"
                    "  writes the conformance vector files (docs/conformance.md) into OUTDIR\n");
    return 2;
  }
  for (fi = 0; fi < NFILES; fi++) {
    char path[4096];
    FILE *f;
    int count = 0, t;
    long bytes;
    snprintf(path, sizeof path, "%s/%s", argv[1], files[fi].name);
    f = fopen(path, "wb");
    if (!f) {
      perror(path);
      return 1;
    }
    amv_write_header(f);
    for (t = 0; t < 3 && files[fi].title[t]; t++) fprintf(f, "# %s\n", files[fi].title[t]);
    fprintf(f,
            "# Generated by conformance/generator/gen_vectors.c from the case table (cases.c)\n"
            "# and the naive reference (reference.c); do not edit: ci/vectors.sh checks it.\n"
            "# Format: conformance/spec/attnmeta-vectors-v1.md.\n");
    for (ci = 0; ci < amt_num_cases; ci++) {
      amv_vector v;
      if (file_of(amt_cases[ci].name) != fi) continue;
      if (build_vector(&amt_cases[ci], &v)) {
        rc = 1;
        continue;
      }
      fputc('\n', f);
      amv_write_vector(f, &v);
      amv_vector_free(&v);
      count++;
    }
    bytes = ftell(f);
    if (fclose(f) != 0) {
      perror(path);
      return 1;
    }
    printf("%-24s %3d vectors %8ld bytes\n", files[fi].name, count, bytes);
    if (bytes >= FILE_LIMIT) {
      fprintf(stderr, "attnmeta_gen_vectors: %s is %ld bytes, over the 1 MiB limit\n", path,
              bytes);
      rc = 1;
    }
  }
  return rc;
}
