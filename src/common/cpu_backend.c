/*
 * The CPU backend: runs the very kernel body the GPUs run, one thread per
 * block, blocks in sequence, barriers as no-ops. Always linked in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_backend.h"
#include "am_step_kernel.h"
#include "attnmeta/attnmeta.h"

static int cpu_device_count(int *count, char *msg, size_t msg_size) {
  (void)msg;
  (void)msg_size;
  *count = 1;
  return ATTNMETA_OK;
}

static int cpu_open(int device, void **state, char *name, size_t name_size, char *msg,
                    size_t msg_size) {
  if (device != 0) {
    snprintf(msg, msg_size, "the CPU backend has one device, 0; got %d", device);
    return ATTNMETA_ERR_NO_DEVICE;
  }
  *state = NULL;
  snprintf(name, name_size, "host CPU");
  return ATTNMETA_OK;
}

static void cpu_close(void *state) { (void)state; }

static int cpu_launch_step(void *state, const am_step_params *params, const am_launch_shape *shape,
                           void *stream, char *msg, size_t msg_size) {
  /* Stage scratch lives on this call's stack, so contexts and threads never
   * share it; its size is bounded by AM_STAGE_MAX_REQS. */
  int32_t stage[2 * (AM_STAGE_MAX_REQS + 1)];
  int64_t block;
  (void)state;
  (void)stream;
  if (shape->block != 1) {
    snprintf(msg, msg_size, "the CPU backend runs one thread per block; got block size %lld",
             (long long)shape->block);
    return ATTNMETA_ERR_NOT_SUPPORTED;
  }
  if (shape->shared_bytes > (int64_t)sizeof stage) {
    snprintf(msg, msg_size, "internal: %lld bytes of block-shared memory asked, %zu available",
             (long long)shape->shared_bytes, sizeof stage);
    return ATTNMETA_ERR_INTERNAL;
  }
  for (block = 0; block < shape->grid; ++block) {
    am_step_body(params, am_make_thread(block, 0, 1, shape->grid), stage);
  }
  return ATTNMETA_OK;
}

static int cpu_alloc(void *state, size_t bytes, void **ptr, char *msg, size_t msg_size) {
  (void)state;
  *ptr = malloc(bytes ? bytes : 1);
  if (!*ptr) {
    snprintf(msg, msg_size, "cannot allocate %zu bytes of host memory", bytes);
    return ATTNMETA_ERR_OUT_OF_MEMORY;
  }
  return ATTNMETA_OK;
}

static int cpu_release(void *state, void *ptr, char *msg, size_t msg_size) {
  (void)state;
  (void)msg;
  (void)msg_size;
  free(ptr);
  return ATTNMETA_OK;
}

static int cpu_copy(void *state, void *dst, const void *src, size_t bytes, int to_device,
                    char *msg, size_t msg_size) {
  (void)state;
  (void)to_device;
  (void)msg;
  (void)msg_size;
  if (bytes) memmove(dst, src, bytes);
  return ATTNMETA_OK;
}

static int cpu_synchronize(void *state, void *stream, char *msg, size_t msg_size) {
  (void)state;
  (void)stream;
  (void)msg;
  (void)msg_size;
  return ATTNMETA_OK;
}

static int cpu_processor_count(void *state) {
  (void)state;
  return 1;
}

static const am_backend_table cpu_table = {
    AM_BACKEND_ABI, sizeof(am_backend_table), "cpu", "host",
    cpu_device_count, cpu_open, cpu_close, cpu_launch_step, cpu_alloc, cpu_release, cpu_copy,
    cpu_synchronize, cpu_processor_count,
};

const am_backend_table *am_cpu_backend(void) { return &cpu_table; }
