// SPDX-License-Identifier: Apache-2.0
/* Status codes, backend names and error-flag text. */
#include <stdio.h>
#include <string.h>

#include "attnmeta/attnmeta.h"

const char *attnmeta_status_string(attnmeta_status status) {
  switch (status) {
    case ATTNMETA_OK: return "success";
    case ATTNMETA_ERR_INVALID_ARGUMENT: return "invalid argument";
    case ATTNMETA_ERR_NULL_POINTER: return "required pointer is NULL";
    case ATTNMETA_ERR_CAPACITY: return "capacity smaller than the token count";
    case ATTNMETA_ERR_STRIDE: return "row stride smaller than the row";
    case ATTNMETA_ERR_OVERFLOW: return "sizes overflow the addressable range";
    case ATTNMETA_ERR_UNKNOWN_BACKEND: return "unknown backend";
    case ATTNMETA_ERR_BACKEND_UNAVAILABLE: return "backend module not available";
    case ATTNMETA_ERR_NO_DEVICE: return "no device for this backend";
    case ATTNMETA_ERR_UNSUPPORTED_ARCH: return "device architecture not built into the backend";
    case ATTNMETA_ERR_ABI_MISMATCH: return "backend module built for another ABI";
    case ATTNMETA_ERR_LAUNCH: return "kernel launch failed";
    case ATTNMETA_ERR_NOT_SUPPORTED: return "not supported by this backend";
    case ATTNMETA_ERR_OUT_OF_MEMORY: return "out of memory";
    case ATTNMETA_ERR_INVALID_CONTEXT: return "invalid context";
    case ATTNMETA_ERR_INTERNAL: return "internal error";
  }
  return "unknown status code";
}

const char *attnmeta_backend_name(attnmeta_backend kind) {
  switch (kind) {
    case ATTNMETA_BACKEND_AUTO: return "auto";
    case ATTNMETA_BACKEND_CPU: return "cpu";
    case ATTNMETA_BACKEND_CUDA: return "cuda";
    case ATTNMETA_BACKEND_HIP: return "hip";
  }
  return "unknown";
}

static const struct {
  int32_t flag;
  const char *text;
} flag_texts[] = {
    {ATTNMETA_FLAG_QSL_FIRST_NONZERO, "query_start_loc[0] is not 0"},
    {ATTNMETA_FLAG_QSL_DECREASING, "query_start_loc decreases"},
    {ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE, "query_start_loc[R] below 0 or above num_tokens"},
    {ATTNMETA_FLAG_SEQ_LEN_NEGATIVE, "negative seq_lens entry"},
    {ATTNMETA_FLAG_SEQ_LEN_LT_QLEN, "seq_lens entry smaller than its query length"},
    {ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE, "position past the block table"},
    {ATTNMETA_FLAG_BLOCK_ID_NEGATIVE, "negative block id in the block table"},
    {ATTNMETA_FLAG_POSITION_NEGATIVE, "negative position"},
    {ATTNMETA_FLAG_WORKSPACE_OUT_OF_RANGE, "prefill workspace index past workspace_starts"},
    {ATTNMETA_FLAG_SLOT_OUT_OF_RANGE, "slot outside [0, INT32_MAX] in an int32 output"},
    {ATTNMETA_FLAG_POOL_INDEX_OUT_OF_RANGE, "req_pool_indices entry outside the pool"},
    {ATTNMETA_FLAG_SCAN_OVERFLOW, "prefix sum above INT32_MAX"},
};

size_t attnmeta_error_flags_describe(int32_t flags, char *buf, size_t size) {
  size_t need = 0;
  size_t i;
  uint32_t known = 0;
  char text[1024];
  text[0] = '\0';
  for (i = 0; i < sizeof flag_texts / sizeof flag_texts[0]; ++i) {
    known |= (uint32_t)flag_texts[i].flag;
    if (flags & flag_texts[i].flag) {
      if (text[0]) strcat(text, ", ");
      strcat(text, flag_texts[i].text);
    }
  }
  if ((uint32_t)flags & ~known) {
    char unknown[64];
    snprintf(unknown, sizeof unknown, "%sunknown flags 0x%x", text[0] ? ", " : "",
             (unsigned)((uint32_t)flags & ~known));
    strcat(text, unknown);
  }
  if (!text[0]) strcpy(text, "no error");
  need = strlen(text);
  if (buf && size > 0) {
    size_t n = need < size - 1 ? need : size - 1;
    memcpy(buf, text, n);
    buf[n] = '\0';
  }
  return need;
}
