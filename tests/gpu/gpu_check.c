// SPDX-License-Identifier: Apache-2.0
/* Plumbing of the CUDA test programs. See gpu_check.h. */
#include "gpu_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../op_inputs.h"

int amg_passed, amg_failed;

int amg_check(int ok, const char *file, int line, const char *fmt, ...) {
  if (ok) {
    amg_passed++;
    return 1;
  }
  amg_failed++;
  va_list args;
  va_start(args, fmt);
  printf("FAIL %s:%d: ", file, line);
  vprintf(fmt, args);
  printf("\n");
  va_end(args);
  fflush(stdout);
  return 0;
}

int amg_cuda_ok(cudaError_t err, const char *what, const char *file, int line) {
  return amg_check(err == cudaSuccess, file, line, "%s: %s (%d)", what, cudaGetErrorString(err),
                   (int)err);
}

int amg_finish(const char *name) {
  printf("%s: %d passed, %d failed\n", name, amg_passed, amg_failed);
  fflush(stdout);
  return amg_failed == 0 && amg_passed > 0 ? 0 : 1;
}

void amg_require_device(const char *name) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    printf("SKIP: %s: no CUDA device (%s)\n", name,
           err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    exit(0);
  }
}

attnmeta_context *amg_open_cuda(const char *name) {
  attnmeta_context *ctx = NULL;
  const attnmeta_status st = attnmeta_open(&ctx, ATTNMETA_BACKEND_CUDA, 0);
  if (st == ATTNMETA_ERR_NO_DEVICE) {
    printf("SKIP: %s: the CUDA backend has no device: %s\n", name, attnmeta_open_error());
    exit(0);
  }
  if (st != ATTNMETA_OK) {
    printf("FAIL %s: attnmeta_open(CUDA) returned %s: %s\n", name, attnmeta_status_string(st),
           attnmeta_open_error());
    amg_failed++;
    exit(amg_finish(name));
  }
  return ctx;
}

attnmeta_context *amg_open_cuda_with_stream(const char *name, cudaStream_t *stream) {
  attnmeta_context *ctx;
  amg_require_device(name);
  ctx = amg_open_cuda(name);
  printf("%s: %s\n", name, attnmeta_context_device_name(ctx));
  if (!AMG_CUDA(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking))) {
    attnmeta_close(ctx);
    return NULL;
  }
  return ctx;
}

/* ------------------------------------------------------------ buffers */

amg_sizes amg_sizes_of(const amg_shape *s) {
  amg_sizes z;
  const size_t T = (size_t)s->T, C = (size_t)s->C, R = (size_t)s->R;
  z.n32[AMG_T2R] = T + AMG_SLACK;
  z.n32[AMG_SEQ] = C + AMG_SLACK;
  z.n32[AMG_GLOBAL] = T + AMG_SLACK;
  z.n32[AMG_TABLE] = (T + 2) * (size_t)s->out_stride; /* two rows past T */
  z.n32[AMG_DECODE] = T + AMG_SLACK;
  z.n32[AMG_INDICES] = T + AMG_SLACK;
  z.n32[AMG_PER_REQ] = R + AMG_SLACK;
  z.n32[AMG_ERR] = 1;
  z.n64[AMG_POS] = T + AMG_SLACK;
  z.n64[AMG_SLOT] = C + AMG_SLACK;
  return z;
}

amg_outputs amg_host_outputs(const amg_sizes *z) {
  amg_outputs o;
  int i;
  for (i = 0; i < AMG_N32; i++) {
    o.o32[i] = malloc(z->n32[i] * sizeof(int32_t));
    if (!o.o32[i]) abort();
    memset(o.o32[i], AMG_POISON_BYTE, z->n32[i] * sizeof(int32_t));
  }
  for (i = 0; i < AMG_N64; i++) {
    o.o64[i] = malloc(z->n64[i] * sizeof(int64_t));
    if (!o.o64[i]) abort();
    memset(o.o64[i], AMG_POISON_BYTE, z->n64[i] * sizeof(int64_t));
  }
  return o;
}

void amg_free_host_outputs(amg_outputs *o) {
  int i;
  for (i = 0; i < AMG_N32; i++) free(o->o32[i]);
  for (i = 0; i < AMG_N64; i++) free(o->o64[i]);
}

amg_outputs amg_device_outputs(const amg_sizes *z) {
  amg_outputs o;
  int i;
  memset(&o, 0, sizeof o);
  for (i = 0; i < AMG_N32; i++)
    AMG_CUDA(cudaMalloc((void **)&o.o32[i], z->n32[i] * sizeof(int32_t)));
  for (i = 0; i < AMG_N64; i++)
    AMG_CUDA(cudaMalloc((void **)&o.o64[i], z->n64[i] * sizeof(int64_t)));
  return o;
}

void amg_free_device_outputs(amg_outputs *o) {
  int i;
  for (i = 0; i < AMG_N32; i++) cudaFree(o->o32[i]);
  for (i = 0; i < AMG_N64; i++) cudaFree(o->o64[i]);
}

void amg_poison_async(const amg_outputs *dev, const amg_sizes *z, cudaStream_t stream) {
  int i;
  for (i = 0; i < AMG_N32; i++)
    AMG_CUDA(cudaMemsetAsync(dev->o32[i], i == AMG_ERR ? 0 : AMG_POISON_BYTE,
                             z->n32[i] * sizeof(int32_t), stream));
  for (i = 0; i < AMG_N64; i++)
    AMG_CUDA(cudaMemsetAsync(dev->o64[i], AMG_POISON_BYTE, z->n64[i] * sizeof(int64_t), stream));
}

int32_t amg_rand_range(uint64_t *state, int32_t lo, int32_t hi) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (int32_t)((int64_t)lo + (int64_t)(z % (uint64_t)((int64_t)hi - lo + 1)));
}

void *amg_upload(const void *host, size_t bytes) {
  void *dev = NULL;
  if (bytes == 0) return NULL;
  AMG_CUDA(cudaMalloc(&dev, bytes));
  AMG_CUDA(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
  return dev;
}

attnmeta_step amg_step_of(const amg_shape *s, const int32_t *qsl, const int32_t *seq_lens,
                          const int32_t *table, const amg_outputs *dev) {
  attnmeta_step st;
  amt_step_tokens(&st, qsl, s->R, s->T, s->C);
  amt_step_table(&st, seq_lens, table, s->cols, s->in_stride, s->block_size);
  st.num_mapped = s->num_mapped;
  st.dcp_world_size = s->world;
  st.dcp_rank = s->rank;
  st.dcp_interleave = s->interleave;
  amt_step_outputs(&st, dev->o32[AMG_T2R], dev->o32[AMG_SEQ], dev->o32[AMG_GLOBAL],
                   dev->o32[AMG_DECODE], dev->o32[AMG_INDICES], dev->o32[AMG_PER_REQ],
                   dev->o64[AMG_POS], dev->o64[AMG_SLOT]);
  st.block_table_out = dev->o32[AMG_TABLE];
  st.block_table_out_stride = s->out_stride;
  st.error_word = dev->o32[AMG_ERR];
  return st;
}

/* ---------------------------------------------------------- reference */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* req(t): the smallest r in [0, R) with qsl[r + 1] > t, or R - 1. */
static int32_t ref_req(const int32_t *qsl, int32_t R, int64_t t) {
  int32_t r;
  for (r = 0; r < R; r++)
    if ((int64_t)qsl[r + 1] > t) return r;
  return R - 1;
}

/* Rank `k`'s share of `len` KV tokens, by counting them one by one. */
static int64_t ref_local_len(int64_t len, int64_t W, int64_t k, int64_t I) {
  int64_t i, n = 0;
  for (i = 0; i < len; i++)
    if ((i / I) % W == k) n++;
  return n;
}

void amg_reference(const amg_shape *s, const int32_t *qsl, const int32_t *seq_lens,
                   const int32_t *table, amg_outputs *e) {
  const int32_t R = s->R, T = s->T, C = s->C;
  const int64_t W = s->world, k = s->rank, I = s->interleave, bs = s->block_size;
  const int64_t actual = clamp64(qsl[R], 0, T);
  const int64_t mapped = s->num_mapped < 0 ? actual : s->num_mapped;
  const amg_sizes z = amg_sizes_of(s);
  int64_t t;
  int32_t r, c;
  int i;
  for (i = 0; i < AMG_N32; i++) memset(e->o32[i], AMG_POISON_BYTE, z.n32[i] * sizeof(int32_t));
  for (i = 0; i < AMG_N64; i++) memset(e->o64[i], AMG_POISON_BYTE, z.n64[i] * sizeof(int64_t));
  e->o32[AMG_ERR][0] = 0;
  for (t = 0; t < T; t++) {
    const int32_t rq = ref_req(qsl, R, t);
    const int valid = t < actual;
    const int64_t qlen = (int64_t)qsl[rq + 1] - qsl[rq];
    const int64_t off = t - qsl[rq];
    const int64_t len = valid ? clamp64(seq_lens[rq] - qlen + off + 1, 0, INT32_MAX) : 0;
    const int64_t pos = valid ? seq_lens[rq] - qlen + off : 0;
    int64_t slot = -1;
    e->o32[AMG_T2R][t] = t < mapped ? rq : 0;
    e->o32[AMG_SEQ][t] = (int32_t)(W > 1 ? ref_local_len(len, W, k, I) : len);
    e->o32[AMG_GLOBAL][t] = (int32_t)len;
    for (c = 0; c < s->cols; c++)
      e->o32[AMG_TABLE][t * s->out_stride + c] = valid ? table[rq * s->in_stride + c] : 0;
    e->o32[AMG_DECODE][t] = 1;
    e->o32[AMG_INDICES][t] = (int32_t)(valid ? rq : R + (t - actual));
    e->o64[AMG_POS][t] = pos;
    if (valid) {
      const int64_t vb = bs * W, blk = pos / vb, vo = pos % vb;
      if (blk >= 0 && blk < s->cols && (vo / I) % W == k)
        slot = (int64_t)table[rq * s->in_stride + blk] * bs + (vo / (W * I)) * I + vo % I;
    }
    e->o64[AMG_SLOT][t] = slot;
  }
  for (t = T; t < C; t++) {
    e->o32[AMG_SEQ][t] = 0;
    e->o64[AMG_SLOT][t] = -1;
  }
  for (r = 0; r < R; r++) e->o32[AMG_PER_REQ][r] = qsl[r + 1] - qsl[r];
}

static const char *const names32[AMG_N32] = {"token_to_req", "seq_lens_out",    "global_seq_lens",
                                             "block_table_out", "decode_lens", "req_indices",
                                             "per_req_lens", "error_word"};
static const char *const names64[AMG_N64] = {"positions", "slot_mapping"};

void amg_compare_host(const char *what, const amg_outputs *got, const amg_outputs *expect,
                      const amg_sizes *z) {
  size_t i, j, bad, first;
  for (i = 0; i < AMG_N32; i++) {
    for (j = 0, bad = 0, first = 0; j < z->n32[i]; j++)
      if (got->o32[i][j] != expect->o32[i][j] && bad++ == 0) first = j;
    AMG_CHECK(bad == 0, "%s: %s: %zu of %zu entries differ, first [%zu] = %d, expected %d", what,
              names32[i], bad, z->n32[i], first, got->o32[i][first], expect->o32[i][first]);
  }
  for (i = 0; i < AMG_N64; i++) {
    for (j = 0, bad = 0, first = 0; j < z->n64[i]; j++)
      if (got->o64[i][j] != expect->o64[i][j] && bad++ == 0) first = j;
    AMG_CHECK(bad == 0, "%s: %s: %zu of %zu entries differ, first [%zu] = %lld, expected %lld",
              what, names64[i], bad, z->n64[i], first, (long long)got->o64[i][first],
              (long long)expect->o64[i][first]);
  }
}

void amg_compare(const char *what, const amg_outputs *dev, const amg_outputs *expect,
                 const amg_sizes *z) {
  amg_outputs got = amg_host_outputs(z);
  int i, copied = 1;
  for (i = 0; i < AMG_N32; i++)
    copied &= AMG_CUDA(cudaMemcpy(got.o32[i], dev->o32[i], z->n32[i] * sizeof(int32_t),
                                  cudaMemcpyDeviceToHost));
  for (i = 0; i < AMG_N64; i++)
    copied &= AMG_CUDA(cudaMemcpy(got.o64[i], dev->o64[i], z->n64[i] * sizeof(int64_t),
                                  cudaMemcpyDeviceToHost));
  if (copied) amg_compare_host(what, &got, expect, z);
  amg_free_host_outputs(&got);
}
