// SPDX-License-Identifier: Apache-2.0
/* The GPU driver and runtime versions a backend runs on (attnmeta info). */
#include "am_context.h"

attnmeta_status attnmeta_backend_runtime_versions(attnmeta_backend kind, int *driver,
                                                  int *runtime) {
  char msg[AM_MESSAGE_SIZE];
  attnmeta_status status;
  const am_backend_table *table;
  if (driver) *driver = 0;
  if (runtime) *runtime = 0;
  if (!driver || !runtime) return ATTNMETA_ERR_NULL_POINTER;
  table = am_backend_for(kind, &status, msg, sizeof msg);
  if (!table) return status;
  /* a module built before the query: loaded, but it cannot say */
  if (!am_backend_has(table, runtime_versions)) return ATTNMETA_ERR_NOT_SUPPORTED;
  status = (attnmeta_status)table->runtime_versions(driver, runtime, msg, sizeof msg);
  if (status != ATTNMETA_OK) *driver = *runtime = 0;
  return status;
}
